#!/usr/bin/env bash
# Builds Linux with kgen's series and boots it under qemu-system-riscv64, where the kernel's
# own crypto self-tests judge kgen's code. Prints one line per CPU and ends with
# `linux-check: passed` or a non-zero exit naming what failed.
#
#   scripts/linux-check.sh --base 6.12.118|7.3.4 [--series DIR] [--cpus "thead-c906 rv64 ..."]
#                          [--logs DIR] [--expect-failure]
#
#   --series DIR      a series to test (default: `kgen linux-patches --base B` now)
#   --cpus LIST       QEMU CPUs (default: rv64 with RVV 1.0 at VLEN 256 and 128, thead-c906,
#                     rv64, rv64 without Zba/Zbb/Zbc/Zbs)
#   --logs DIR        keep each boot's serial log there (default: a temporary directory)
#   --expect-failure  exit 0 only if some boot shows a failure (for planted faults)
#
# 6.12 is judged by testmgr (with its extra tests) and the library's self-tests; 7.3 also by
# the lib/crypto KUnit suites. 7.3 is built with binutils 2.44 (Debian 13's), which its
# Zvk* code needs; 6.12 with the system's 2.40.
#
# Sources: .toolchain/linux-<base>/ (scripts/setup-toolchain.sh). Builds are cached in
# $KGEN_LINUX_CACHE (default ~/.cache/kgen-linux), keyed by the series, the config
# fragments, this script's build steps and the compiler; a hit skips straight to the boots.
# The boots run $KGEN_LINUX_JOBS at a time (default: the number of cores; QEMU emulates one
# CPU on one host thread).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
tc=${KGEN_TOOLCHAIN:-$repo/.toolchain}
kgen=${KGEN:-$repo/target/release/kgen}
cache=${KGEN_LINUX_CACHE:-$HOME/.cache/kgen-linux}
base= series= logs= expect_failure=0
# The slowest boots (the vector unit's, emulated) first, so that the parallel boots end together.
cpus="rv64,v=true,vlen=256 rv64,v=true,vlen=128 thead-c906 rv64 rv64,zba=false,zbb=false,zbc=false,zbs=false"
while [ $# -gt 0 ]; do
  case $1 in
    --base) base=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --expect-failure) expect_failure=1; shift ;;
    *) echo "linux-check: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $base in
  6.12.118) src=$tc/linux-6.12.118/linux-source-6.12; kgen_dir=arch/riscv/crypto/kgen; suites= ;;
  7.3.4) src=$tc/linux-7.3.4/linux-source-7.3; kgen_dir=lib/crypto/riscv/kgen
         # The KUnit suites of each algorithm (lib/crypto/tests).
         suites="chacha20:chacha20poly1305 poly1305:poly1305 ghash:ghash ghash:aes_gcm aes:aes_gcm aes:aes_cbc_macs aes:aes_ccm sha256:sha224 sha256:sha256 sha512:sha384 sha512:sha512" ;;
  *) echo "linux-check: unknown --base '$base' (known: 6.12.118, 7.3.4)" >&2; exit 2 ;;
esac
[ -f "$src/Makefile" ] || { echo "linux-check: no Linux $base sources at $src (run scripts/setup-toolchain.sh)" >&2; exit 2; }
command -v qemu-system-riscv64 >/dev/null || { echo "linux-check: no qemu-system-riscv64 (run scripts/setup-toolchain.sh)" >&2; exit 2; }

work=$(mktemp -d /tmp/kgen-linux-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -z "$series" ]; then
  series=$work/series
  "$kgen" linux-patches --base "$base" --out "$series" >/dev/null
fi
logs=${logs:-$work/logs}
mkdir -p "$logs"

# The machine: QEMU's virt board with its serial console, T-Head's errata (thead-c906),
# the vector unit, and an initramfs whose /init powers the machine off.
machine_config() {
  cat <<EOF
CONFIG_64BIT=y
CONFIG_MMU=y
CONFIG_NONPORTABLE=y
CONFIG_ARCH_VIRT=y
CONFIG_ARCH_THEAD=y
CONFIG_ERRATA_THEAD=y
CONFIG_ERRATA_THEAD_MAE=y
CONFIG_ERRATA_THEAD_CMO=y
CONFIG_FPU=y
CONFIG_RISCV_ISA_V=y
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_SERIAL_OF_PLATFORM=y
CONFIG_BINFMT_ELF=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_INITRAMFS_SOURCE="$1"
CONFIG_CRYPTO=y
CONFIG_MODULES=n
EOF
  if [ "$base" != 6.12.118 ]; then
    printf 'CONFIG_RISCV_ISA_VENDOR_EXT_THEAD=y\nCONFIG_RISCV_ISA_XTHEADVECTOR=y\n'
  fi
}

init_c='#include <sys/reboot.h>
#include <unistd.h>
int main(void) { sync(); reboot(RB_POWER_OFF); return 0; }'

# The build steps (between the markers) are part of the key; the boot checks are not.
build_steps=$(sed -n '/^# >>> build/,/^# <<< build/p' "$0")
key=$( { cat "$series"/*.patch; machine_config x; echo "$init_c"; echo "$build_steps"; riscv64-linux-gnu-gcc --version | head -1; echo "$base"; } | sha256sum | cut -c1-16)
bdir=$cache/$base-$key
image=$bdir/out/arch/riscv/boot/Image
# >>> build
# One source tree and build tree per base ($cache/tree-<base>) serves every series: a new
# series rewrites only the files whose content changes, and make rebuilds what depends on
# them (a planted fault costs seconds, not a kernel). The first build, or one after a
# failed incremental build, starts from the pristine sources.
tree=$cache/tree-$base
files_of() { sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$@" | sort -u; }
sync_tree() { # brings $tree/src from its last series to this one; 2 if a patch does not apply
  local new=$bdir.tmp/new f p both
  both=$( { cat "$tree/touched"; files_of "$series"/*.patch; } | sort -u)
  rm -rf "$new"
  mkdir -p "$new"
  for f in $both; do
    if [ -f "$src/$f" ]; then mkdir -p "$new/$(dirname "$f")"; cp -p "$src/$f" "$new/$f"; fi
  done
  # Zero fuzz: git apply takes no hunk whose context differs.
  ( cd "$new" && for p in "$series"/*.patch; do git apply --whitespace=nowarn "$p" || { echo "linux-check: $(basename "$p") does not apply to $base" >&2; exit 1; }; done ) || return 2
  for f in $both; do
    if [ -f "$new/$f" ]; then
      cmp -s "$new/$f" "$tree/src/$f" || { mkdir -p "$tree/src/$(dirname "$f")"; cp "$new/$f" "$tree/src/$f"; }
    else
      rm -f "$tree/src/$f"
    fi
  done
  files_of "$series"/*.patch > "$tree/touched"
}
build_kernel() { # builds $tree/out's Image for this series; 2 if the series does not apply, 1 if the build fails
  if [ ! -f "$tree/touched" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    cp -a "$src" "$tree/src"
    : > "$tree/touched"
  fi
  sync_tree || return $?
  cp "$tree/src/$kgen_dir/Kconfig" "$bdir.tmp/Kconfig"
  echo "$init_c" > "$tree/init.c"
  riscv64-linux-gnu-gcc -static -Os -o "$tree/init" "$tree/init.c"
  printf 'dir /dev 0755 0 0\nnod /dev/console 0600 0 0 c 5 1\nfile /init %s 0755 0 0\n' "$tree/init" > "$tree/initramfs.list"
  k="make -C $tree/src O=$tree/out ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- -s"
  if [ "$base" != 6.12.118 ]; then
    # binutils 2.44 through its own loader: gcc finds `as` by -B, make the rest on PATH.
    b44=$tc/binutils-2.44
    [ -x "$b44/usr/bin/riscv64-linux-gnu-as" ] || { echo "linux-check: no binutils 2.44 at $b44 (run scripts/setup-toolchain.sh)" >&2; exit 2; }
    mkdir -p "$tree/bin"
    for t in as ld ld.bfd objcopy objdump nm ar strip readelf ranlib; do
      printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$b44/usr/lib64/ld-linux-x86-64.so.2" "$b44/usr/lib/x86_64-linux-gnu" "$b44/usr/bin/riscv64-linux-gnu-$t" > "$tree/bin/riscv64-linux-gnu-$t"
      chmod +x "$tree/bin/riscv64-linux-gnu-$t"
    done
    mkdir -p "$tree/gcc-as"
    ln -sf ../bin/riscv64-linux-gnu-as "$tree/gcc-as/as"
    export PATH=$tree/bin:$PATH
    cc="riscv64-linux-gnu-gcc -B$tree/gcc-as/"
  else
    cc=riscv64-linux-gnu-gcc
  fi
  $k CC="$cc" tinyconfig >/dev/null
  machine_config "$tree/initramfs.list" > "$bdir.tmp/machine.config"
  ( cd "$tree/out" && "$tree/src/scripts/kconfig/merge_config.sh" -m -O . .config "$bdir.tmp/machine.config" \
      "$tree/src/arch/riscv/configs/kgen-crypto.config" "$tree/src/arch/riscv/configs/kgen-crypto-selftest.config" >/dev/null )
  $k CC="$cc" olddefconfig >/dev/null
  # Every option the fragments ask for must have taken.
  for f in "$bdir.tmp/machine.config" "$tree/src/arch/riscv/configs/kgen-crypto.config" "$tree/src/arch/riscv/configs/kgen-crypto-selftest.config"; do
    while IFS= read -r l; do
      case $l in
        CONFIG_MODULES=n) grep -qx '# CONFIG_MODULES is not set' "$tree/out/.config" || { echo "linux-check: CONFIG_MODULES stayed on" >&2; exit 1; } ;;
        CONFIG_*) grep -qxF "$l" "$tree/out/.config" || { echo "linux-check: $l did not take (.config: $(grep "^${l%%=*}=\|${l%%=*} is not set" "$tree/out/.config"))" >&2; exit 1; } ;;
      esac
    done < "$f"
  done
  if ! $k CC="$cc" -j"$(nproc)" Image > "$bdir.tmp/build.log" 2>&1; then
    tail -30 "$bdir.tmp/build.log" >&2
    echo "linux-check: the $base build failed (log: $bdir.tmp/build.log)" >&2
    return 1
  fi
}
if [ -f "$image" ]; then
  touch "$bdir"
  echo "linux-check: build $base-$key (cached)"
else
  start=$(date +%s)
  mkdir -p "$cache"
  exec 9> "$tree.lock"
  flock 9
  rm -rf "$bdir.tmp"
  mkdir -p "$bdir.tmp"
  incremental=0
  [ -f "$tree/touched" ] && incremental=1
  rc=0
  build_kernel || rc=$?
  if [ $rc = 1 ] && [ $incremental = 1 ]; then
    # A failed incremental build is retried from the pristine sources (a series that does
    # not apply fails as it is).
    echo "linux-check: the incremental build failed; building $base from the pristine sources" >&2
    rm -rf "$tree"
    rc=0
    build_kernel || rc=$?
  fi
  [ $rc = 0 ] || exit 1
  if grep -n "$kgen_dir.*warning:" "$bdir.tmp/build.log" >&2; then
    echo "linux-check: the series' files build with warnings" >&2
    exit 1
  fi
  # Keep the image, the Kconfig and the log; and the two newest builds per base (a series
  # and its planted-fault control).
  mkdir -p "$bdir.tmp/keep/out/arch/riscv/boot"
  cp "$tree/out/arch/riscv/boot/Image" "$bdir.tmp/keep/out/arch/riscv/boot/"
  mv "$bdir.tmp/Kconfig" "$bdir.tmp/build.log" "$bdir.tmp/keep/"
  rm -rf "$bdir"
  mv "$bdir.tmp/keep" "$bdir"
  rm -rf "$bdir.tmp"
  ls -dt "$cache/$base-"* | grep -v '\.tmp$' | tail -n +3 | xargs -r rm -rf
  flock -u 9
  echo "linux-check: build $base-$key in $(( $(date +%s) - start )) s"
fi
# <<< build

# The variant each algorithm should pick on a CPU, and its fallback where SIMD is not
# usable: from the series' own Kconfig help (the first condition the CPU meets).
expect() { # cpu alg
  local cpu=$1 alg=$2
  local -a vars=() conds=()
  while IFS='|' read -r v c; do vars+=("$v"); conds+=("$c"); done < <(
    awk -v a="kgen-$alg" '
      /^config CRYPTO_/ { sym=$2 }
      /^\t  - / && sym != "" { sub(/^\t  - /, ""); n=index($0, ": "); v=substr($0, 1, n-1); c=substr($0, n+2); sub(/ \(scalar fallback.*$/, "", c); print sym "|" v "|" c }
    ' "$bdir/Kconfig" | awk -F'|' -v s="$(sym_of "$alg")" '$1 == s { print $2 "|" $3 }')
  local i pick= fb=
  for i in "${!vars[@]}"; do
    if meets "$cpu" "${conds[$i]}"; then
      if [ -z "$pick" ]; then pick=${vars[$i]}; fi
      if [ -z "$fb" ] && [[ ${conds[$i]} != *kgen_rvv* ]]; then fb=${vars[$i]}; fi
    fi
  done
  echo "$pick $fb"
}
sym_of() {
  case $1 in
    chacha20) echo CRYPTO_CHACHA20_KGEN ;; poly1305) echo CRYPTO_POLY1305_KGEN ;; ghash) echo CRYPTO_GHASH_KGEN ;;
    sha256) echo CRYPTO_SHA256_KGEN ;; sha512) echo CRYPTO_SHA512_KGEN ;; aes) echo CRYPTO_AES_KGEN ;;
  esac
}
meets() { # cpu condition
  local cpu=$1 c=$2 part
  local IFS='&'
  for part in $c; do
    part=$(echo "$part" | xargs)
    [ -z "$part" ] && continue
    case $part in
      true) ;;
      "kgen_thead_c9xx()") [[ $cpu == thead-c906* ]] || return 1 ;;
      "has_xtheadvector()") return 1 ;; # QEMU's system mode has no XTheadVector
      kgen_rvv*) [[ $cpu == *v=true* ]] || return 1
                 local vlen=${cpu##*vlen=}; vlen=${vlen%%,*}
                 local lo hi; lo=$(echo "$part" | sed 's/.*(\([0-9]*\), *\([0-9]*\)).*/\1/'); hi=$(echo "$part" | sed 's/.*(\([0-9]*\), *\([0-9]*\)).*/\2/')
                 [ "$vlen" -ge "$lo" ] && [ "$vlen" -le "$hi" ] || return 1 ;;
      *"NULL, Z"*) local e; e=$(echo "$part" | sed 's/.*NULL, \(Z[A-Z]*\)).*/\1/' | tr 'A-Z' 'a-z')
                   [[ $cpu == rv64* ]] && [[ $cpu != *"$e=false"* ]] || return 1 ;;
      *) echo "linux-check: unknown condition '$part'" >&2; return 1 ;;
    esac
  done
  return 0
}
algs=$(sed -n 's/^config CRYPTO_\([A-Z0-9]*\)_KGEN$/\1/p' "$bdir/Kconfig" | tr 'A-Z' 'a-z')

# One boot and its checks: a line saying passed or FAILED (and why), and its status.
boot() { # cpu
  local cpu=$1 name log start
  name=$(echo "$cpu" | tr ',=' '_-')
  log=$logs/$base-$name.log
  start=$(date +%s)
  timeout 300 qemu-system-riscv64 -M virt -cpu "$cpu" -smp 1 -m 256M -nographic -bios default -no-reboot \
    -kernel "$image" -append "console=ttyS0 panic=-1" 2>&1 | tr -d '\r' > "$log" || true
  local problems=() alg pick fb want a v n sa suite nt
  grep -q 'reboot: Power down' "$log" || problems+=("did not power off")
  if grep -nE 'alg: .*(failed|error)|self-tests for .* failed|self-test [0-9]+: FAIL|WARNING:|Oops|BUG:|Kernel panic|Call Trace|kgen: test: .*FAILED' "$log" > "$work/bad.$name"; then
    problems+=("$(head -3 "$work/bad.$name" | tr '\n' ' ')")
  fi
  for alg in $algs; do
    read -r pick fb < <(expect "$cpu" "$alg")
    if [ "$pick" = "$fb" ]; then want="kgen: $alg: $pick"; else want="kgen: $alg: $pick ($fb where SIMD is not usable)"; fi
    grep -qxF "$want" <(sed 's/^\[[ 0-9.]*\] //' "$log") || problems+=("no line '$want'")
    while read -r _ _ a v n; do
      [ "$a" = "$alg" ] || continue
      if [ "$v" = "$pick" ]; then [ "$n" -gt 0 ] || problems+=("$alg $v ran 0 times"); continue; fi
      [ "$v" = "$fb" ] && continue
      [ "$n" -eq 0 ] || problems+=("$alg $v ran $n times (expected $pick)")
    done < <(sed -n 's/^\[[ 0-9.]*\] \(kgen: calls: .*\)/\1/p' "$log")
  done
  for sa in $suites; do
    a=${sa%%:*} suite=${sa#*:}
    case " $algs " in *" $a "*) ;; *) continue ;; esac
    grep -qE "^ *ok [0-9]+ $suite\$" "$log" || problems+=("KUnit suite $suite did not pass")
  done
  grep -nE '^ *not ok ' "$log" > "$work/bad.$name" && problems+=("KUnit: $(head -3 "$work/bad.$name" | tr '\n' ' ')")
  nt=$(grep -c 'kgen: test: .*: ok' "$log" || true)
  [ "$nt" -gt 0 ] || problems+=("no kgen: test lines")
  if [ ${#problems[@]} -eq 0 ]; then
    echo "linux-check: $base $cpu: passed ($nt look-ups, $(( $(date +%s) - start )) s)"
  else
    echo "linux-check: $base $cpu: FAILED: ${problems[*]} (log: $log)"
    return 1
  fi
}

# The boots, $par at a time, their lines printed in the order of --cpus.
par=${KGEN_LINUX_JOBS:-$(nproc)}
failed=0
i=0
for cpu in $cpus; do
  while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n || true; done
  ( if boot "$cpu" > "$work/result.$i" 2> "$work/errors.$i"; then echo 0; else echo 1; fi > "$work/status.$i" ) &
  i=$((i + 1))
done
wait
for ((k = 0; k < i; k++)); do
  cat "$work/result.$k"
  cat "$work/errors.$k" >&2
  [ "$(cat "$work/status.$k")" = 0 ] || failed=1
done

if [ $expect_failure = 1 ]; then
  if [ $failed = 1 ]; then echo "linux-check: failed as expected"; exit 0; fi
  echo "linux-check: every boot passed, but a failure was expected" >&2; exit 1
fi
[ $failed = 0 ] || exit 1
echo "linux-check: passed"
