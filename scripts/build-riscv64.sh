#!/usr/bin/env bash
# Builds kgen for the board: a static riscv64gc-unknown-linux-gnu binary, with the private
# Rust cross toolchain the set-up installs (Debian trixie's rustc/cargo and riscv64 std,
# scripts/rust-riscv64.sh). Copy the result to the board and run it there (`kgen jit-run`,
# `kgen jit-bench`).
#
#   scripts/build-riscv64.sh            -> target/riscv64/riscv64gc-unknown-linux-gnu/release/kgen
#
# The build has its own target directory (another rustc than the host's), so it never
# disturbs the host build; a second run only rebuilds what changed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tc=${KGEN_TOOLCHAIN:-$repo/.toolchain}
rr=$tc/rust-riscv64
[ -x "$rr/bin/cargo" ] || "$repo/scripts/rust-riscv64.sh" "$rr" >/dev/null
export CARGO_TARGET_DIR=${KGEN_RISCV64_TARGET_DIR:-$repo/target/riscv64}
export CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static"
cd "$repo"
"$rr/bin/cargo" build --release --locked --target riscv64gc-unknown-linux-gnu --bin kgen "$@"
bin=$CARGO_TARGET_DIR/riscv64gc-unknown-linux-gnu/release/kgen
file "$bin" | grep -q 'statically linked' || { echo "$bin is not statically linked" >&2; exit 1; }
echo "kgen for riscv64: $bin"
