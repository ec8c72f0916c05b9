#!/usr/bin/env bash
# kgen's test command (README.md; .ci/run calls it): installs the oracles if missing, then
# runs every test. Under CI=true a missing oracle is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-toolchain.sh
# kgen for riscv64, which tests/native.rs runs under qemu-riscv64 (incremental after the first build).
./scripts/build-riscv64.sh -q
cargo test --workspace --release "$@"
cargo clippy --workspace --all-targets --release -- -D warnings
