#!/usr/bin/env bash
# kgen's test command (README.md; .ci/run calls it): installs the oracles if missing, builds
# everything, then runs every test binary and clippy, and prints how long each part took.
# Under CI=true a missing oracle is a failure, never a skip. Arguments are passed to each
# test binary (`./scripts/test.sh --nocapture`).
#
# Slow builds are cached by their inputs outside the checkout: the C906 RTL model
# (~/.cache/c906rtl), OpenSSL (~/.cache/kgen-openssl), RTL results (~/.cache/kgen-rtl),
# Linux kernels (~/.cache/kgen-linux).
# OpenSSL's suites run on the data files and recipes of what kgen replaces; the full set:
#   KGEN_OPENSSL_FULL=1 cargo test --release --test openssl
set -euo pipefail
cd "$(dirname "$0")/.."

times=()
t_all=$(date +%s)
step() { # step NAME COMMAND...: runs it, records its seconds; stops at the first failure
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  echo "==== $name"
  set +e
  "$@"
  rc=$?
  set -e
  times+=("$name|$(( $(date +%s) - t0 ))|$rc")
  if [ "$rc" != 0 ]; then
    report
    echo "FAILED: $name (exit $rc)" >&2
    exit "$rc"
  fi
}
report() {
  echo
  echo "| part | seconds | exit |"
  echo "|---|---:|---:|"
  for t in "${times[@]}"; do
    IFS='|' read -r n s r <<<"$t"
    echo "| $n | $s | $r |"
  done
  echo "| total | $(( $(date +%s) - t_all )) | |"
}

step "set-up (scripts/setup-toolchain.sh)" ./scripts/setup-toolchain.sh
# kgen for riscv64, which tests/native.rs runs under qemu-riscv64 (incremental after the first build).
step "kgen for riscv64 (scripts/build-riscv64.sh)" ./scripts/build-riscv64.sh -q
step "build (cargo test --no-run)" cargo test --workspace --profile ci --no-run
# Each crate's unit tests, then each integration test binary, on its own: its time.
for p in kgen-dsl kgen-macros kgen-kernels kgen-emit kgen-sim kgen-harness kgen-integrations kgen-calibration; do
  step "unit tests: $p" cargo test --profile ci -q -p "$p" -- "$@"
done
step "unit tests: kgen" cargo test --profile ci -q -p kgen --lib --bins -- "$@"
for t in tests/*.rs; do
  name=$(basename "$t" .rs)
  step "tests/$name.rs" cargo test --profile ci -q -p kgen --test "$name" -- "$@"
done
step "clippy" cargo clippy --workspace --all-targets --profile ci -- -D warnings
step "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
report
