#!/usr/bin/env bash
# Installs the oracles kgen's tests compare against, on Debian 12 (bookworm), x86-64.
# Idempotent: what is already present is left alone.
#
#   system packages  binutils-riscv64-linux-gnu 2.40, gcc-riscv64-linux-gnu,
#                    libc6-dev-riscv64-cross (bookworm);
#                    flex, bison (kernel builds);
#                    qemu-user 10, qemu-system-misc 10 with OpenSBI and golang-1.23-go
#                    (bookworm-backports);
#                    golang-golang-x-crypto-dev, golang-golang-x-sys-dev (Go reference code)
#   private folder   $KGEN_TOOLCHAIN (default: <repo>/.toolchain)
#                    binutils-2.44/   trixie's riscv64 binutils (knows XTheadVector), run
#                                     through its own ld.so; never installed system-wide
#                    xuantie/         T-Head's qemu-riscv64 (PyPI xuantie-qemu==20230825)
#                    linux-6.12.118/  Debian's linux-source-6.12 (bookworm-security) and
#                    linux-7.3.4/     linux-source-7.3 (trixie-backports): the tarballs and
#                                     the unpacked trees, the kernel series' bases
#                    rust-riscv64/    trixie's rustc + cargo and the riscv64 std, for
#                                     scripts/build-riscv64.sh (kgen for the board)
#                    c906rtl          link to the cycle-accurate C906 RTL model, built from
#                                     $KGEN_C906_RTL_KIT (default <repo>/../shared/c906-rtl) into
#                                     ~/.cache/c906rtl/kgen-<hash of the tarball and build files>
#                                     (about 80 s once; verilator from apt)
#
# Prints one line per component and ends with `toolchain ready` or a non-zero exit.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
tc=${KGEN_TOOLCHAIN:-$repo/.toolchain}
mkdir -p "$tc"

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# --- bookworm packages -------------------------------------------------------
need=()
for p in binutils-riscv64-linux-gnu gcc-riscv64-linux-gnu libc6-dev-riscv64-cross curl openssl flex bison; do
  have_pkg "$p" || need+=("$p")
done

# --- bookworm-backports ------------------------------------------------------
bp=/etc/apt/sources.list.d/kgen-bookworm-backports.list
bp_need=()
qemu_ok=0
if command -v qemu-riscv64 >/dev/null && qemu-riscv64 -cpu help 2>/dev/null | grep -q thead-c906; then qemu_ok=1; fi
[ $qemu_ok = 1 ] || bp_need+=(qemu-user)
if ! command -v qemu-system-riscv64 >/dev/null || ! qemu-system-riscv64 -cpu help 2>/dev/null | grep -q thead-c906; then
  bp_need+=(qemu-system-misc opensbi)
fi
[ -x /usr/lib/go-1.23/bin/go ] || bp_need+=(golang-1.23-go)
for p in golang-golang-x-crypto-dev golang-golang-x-sys-dev; do
  have_pkg "$p" || bp_need+=("$p")
done

if [ ${#need[@]} -gt 0 ] || [ ${#bp_need[@]} -gt 0 ]; then
  if [ ${#bp_need[@]} -gt 0 ] && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" | sudo_ tee "$bp" >/dev/null
  fi
  sudo_ apt-get update -qq
  [ ${#need[@]} -eq 0 ] || sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  [ ${#bp_need[@]} -eq 0 ] || sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports "${bp_need[@]}" >/dev/null
fi
echo "binutils 2.40: $(riscv64-linux-gnu-as --version | head -1)"
echo "riscv64 gcc:   $(riscv64-linux-gnu-gcc --version | head -1)"
echo "qemu:          $(qemu-riscv64 --version | head -1)"
echo "qemu-system:   $(qemu-system-riscv64 --version | head -1)"
echo "tls client:    $(curl --version | head -1 | cut -d" " -f1-2), $(openssl version)"
echo "go:            $(/usr/lib/go-1.23/bin/go version)"

# private_apt DIR SOURCE-LINE...: an apt configuration of its own in DIR (sources, lists,
# caches; the system's stay untouched) with those source lines, its indexes fetched; sets
# the array apt_opts for apt-get, and makes DIR/debs and DIR/dl for downloads.
private_apt() {
  local dir=$1
  shift
  mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/debs" "$dir/dl"
  printf '%s\n' "$@" > "$dir/sources.list"
  apt_opts=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o Dir::State::Lists="$dir/lists" -o Dir::Cache::Archives="$dir/archives"
            -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1)
  apt-get "${apt_opts[@]}" update -qq
}

# --- binutils 2.44 from trixie, private -------------------------------------
b44=$tc/binutils-2.44
if [ ! -x "$b44/usr/bin/riscv64-linux-gnu-as" ]; then
  apt_dir=$tc/apt-trixie
  private_apt "$apt_dir" "deb http://deb.debian.org/debian trixie main"
  ( cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download -qq \
      binutils-riscv64-linux-gnu libbinutils libc6 libzstd1 zlib1g libjansson4 libsframe1 libctf-nobfd0 libctf0 libgprofng0 2>/dev/null || \
    apt-get "${apt_opts[@]}" download -qq binutils-riscv64-linux-gnu libbinutils libc6 libzstd1 zlib1g libjansson4 libsframe1 )
  mkdir -p "$b44"
  for d in "$apt_dir"/debs/*.deb; do dpkg -x "$d" "$b44"; done
fi
"$repo/scripts/as44" --version | head -1 | sed 's/^/binutils 2.44: /'

# --- T-Head qemu from PyPI, private -----------------------------------------
xq=$tc/xuantie
if [ ! -x "$xq/qemu/qemu-riscv64" ]; then
  python3 -m pip install -q --disable-pip-version-check --target "$xq" xuantie-qemu==20230825
fi
echo "xuantie qemu:  $("$xq/qemu/qemu-riscv64" --version | head -1)"
# --- OpenSSL 3.5.7 upstream riscv64 perlasm outputs (baseline for comparisons) -----
# Only generated outputs are used (as test inputs and `kgen bench --asm` baselines); no
# OpenSSL code is copied into kgen.
ossl=$tc/openssl-3.5.7
osa=$tc/openssl-asm
if [ ! -f "$osa/aes-riscv64.s" ]; then
  apt_src=$tc/apt-trixie-src
  mkdir -p "$osa"
  private_apt "$apt_src" "deb-src http://deb.debian.org/debian trixie main"
  ( cd "$apt_src/dl" && apt-get "${apt_opts[@]}" source --download-only -qq openssl=3.5.7-1~deb13u2 2>/dev/null )
  mkdir -p "$ossl"
  tar xzf "$apt_src/dl/openssl_3.5.7.orig.tar.gz" -C "$tc"
  for pl in crypto/aes/asm/aes-riscv64.pl crypto/modes/asm/ghash-riscv64.pl crypto/modes/asm/ghash-riscv64-zvkg.pl \
            crypto/chacha/asm/chacha-riscv64-v-zbb.pl; do
    ( cd "$ossl" && perl "$pl" linux64 "$osa/$(basename "$pl" .pl).s" )
  done
fi
echo "openssl asm:   $(ls "$osa" | tr '\n' ' ')"
# --- OpenSSL 3.6.3 (sid) and 4.0.2 (experimental) sources, the newer series' bases --------
apt_new=$tc/apt-sid-src
for v in 3.6.3 4.0.2; do
  if [ ! -f "$tc/openssl-$v/VERSION.dat" ]; then
    if [ ! -f "$apt_new/dl/openssl_$v.orig.tar.gz" ]; then
      private_apt "$apt_new" "deb-src http://deb.debian.org/debian sid main" "deb-src http://deb.debian.org/debian experimental main"
      ( cd "$apt_new/dl" && apt-get "${apt_opts[@]}" source --download-only -qq "openssl=$v-1" 2>/dev/null )
    fi
    tar xzf "$apt_new/dl/openssl_$v.orig.tar.gz" -C "$tc"
  fi
done
echo "openssl trees: $(cd "$tc" && ls -d openssl-[0-9]* | tr '\n' ' ')"
# --- golang.org/x/crypto v0.58.0 (sid's golang-golang-x-crypto-dev), unpacked privately ----
xc58=$tc/x-crypto-0.58.0
if [ ! -f "$xc58/usr/share/gocode/src/golang.org/x/crypto/go.mod" ]; then
  apt_bin=$tc/apt-sid
  private_apt "$apt_bin" "deb http://deb.debian.org/debian sid main"
  ( cd "$apt_bin/debs" && apt-get "${apt_opts[@]}" download -qq golang-golang-x-crypto-dev=1:0.58.0-1 2>/dev/null )
  mkdir -p "$xc58"
  dpkg -x "$apt_bin"/debs/golang-golang-x-crypto-dev_*0.58.0-1_all.deb "$xc58"
fi
# --- Go 1.27.4 (trixie-backports' golang-1.27-go and -src), unpacked privately -----------
go127=$tc/go-1.27
if [ ! -x "$go127/usr/lib/go-1.27/bin/go" ]; then
  apt_bpo=$tc/apt-trixie-bpo
  private_apt "$apt_bpo" "deb http://deb.debian.org/debian trixie-backports main"
  ( cd "$apt_bpo/debs" && apt-get "${apt_opts[@]}" download -qq golang-1.27-go=1.27.4-1~bpo13+1 golang-1.27-src=1.27.4-1~bpo13+1 2>/dev/null )
  mkdir -p "$go127"
  for d in "$apt_bpo"/debs/golang-1.27-*.deb; do dpkg -x "$d" "$go127"; done
fi
echo "go 1.27:       $("$go127/usr/lib/go-1.27/bin/go" version)"
echo "x/crypto:      $(sed -n 's/^go //p' "$xc58/usr/share/gocode/src/golang.org/x/crypto/go.mod" | sed 's/^/v0.58.0 (go /;s/$/)/')"
# --- Linux 6.12.118 (bookworm-security) and 7.3.4 (trixie-backports) sources --------------
# The binary packages linux-source-N hold usr/src/linux-source-N.tar.xz; the tarball is kept.
for lv in "6.12 6.12.118-1~deb12u1 bookworm-security" "7.3 7.3.4-1~bpo13+1 trixie-backports"; do
  set -- $lv
  full=${2%%-*}
  dir=$tc/linux-$full
  if [ ! -f "$dir/linux-source-$1.tar.xz" ]; then
    apt_l=$tc/apt-$3
    if [ "$3" = bookworm-security ]; then
      private_apt "$apt_l" "deb http://security.debian.org/debian-security bookworm-security main"
    else
      private_apt "$apt_l" "deb http://deb.debian.org/debian $3 main"
    fi
    ( cd "$apt_l/debs" && apt-get "${apt_opts[@]}" download -qq "linux-source-$1=$2" 2>/dev/null )
    mkdir -p "$dir/pkg"
    dpkg -x "$apt_l"/debs/linux-source-"$1"_*.deb "$dir/pkg"
    mv "$dir/pkg/usr/src/linux-source-$1.tar.xz" "$dir/"
    rm -rf "$dir/pkg"
  fi
  [ -f "$dir/linux-source-$1/Makefile" ] || tar xJf "$dir/linux-source-$1.tar.xz" -C "$dir"
done
echo "linux:         $(cd "$tc" && ls -d linux-[0-9]* | tr '\n' ' ')"
# Linux 7.3's CRYPTOGAMS Poly1305 (the kernel's default on riscv), as its Makefile generates
# it, for `kgen bench --asm` (without the banner string at the end of .text, which kgen's
# assembler does not take). Only the generated output is used; nothing is copied into kgen.
la=$tc/linux-asm
if [ ! -f "$la/poly1305-riscv-cryptogams.S" ]; then
  mkdir -p "$la"
  perl "$tc/linux-7.3.4/linux-source-7.3/lib/crypto/riscv/poly1305-riscv.pl" 64 "$la/poly1305-core.S"
  grep -v '^\.string' "$la/poly1305-core.S" > "$la/poly1305-riscv-cryptogams.S"
  rm "$la/poly1305-core.S"
fi
# Linux 6.12's generic C (ChaCha, Poly1305, SHA-256, SHA-512, the AES library and the
# aes-generic driver, GHASH's gf128mul) and its riscv memcpy/memset as the kernel compiles
# them (-O2, rv64imac), for `kgen bench --asm`. Removed: the export-symbol tables (#APP
# blocks) and the memcpy/memset aliases kgen's assembler does not evaluate.
# kernel_asm SRC OUT FILE...: each kernel C FILE (without .c) compiled as a tinyconfig
# kernel of SRC compiles it, into OUT/<name>.s without the #APP blocks; the build directory
# ($la/build) is left for more targets and removed by the caller.
kernel_asm() {
  local lsrc=$1 out=$2 f
  shift 2
  ko=$la/build
  k="make -C $lsrc O=$ko ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- -s"
  rm -rf "$ko"
  $k tinyconfig >/dev/null
  "$lsrc/scripts/config" --file "$ko/.config" -d CC_OPTIMIZE_FOR_SIZE -e CC_OPTIMIZE_FOR_PERFORMANCE
  $k olddefconfig >/dev/null
  $k -j"$(nproc)" prepare >/dev/null 2>&1
  # shellcheck disable=SC2046
  $k $(for f in "$@"; do echo "$f.s"; done)
  mkdir -p "$out"
  for f in "$@"; do
    sed '/^#APP/,/^#NO_APP/d' "$ko/$f.s" > "$out/$(basename "$f").s"
  done
}
lg=$la/generic
if [ ! -f "$lg/gf128mul.s" ]; then
  kernel_asm "$tc/linux-6.12.118/linux-source-6.12" "$lg" lib/crypto/chacha lib/crypto/sha256 lib/crypto/poly1305-donna64 \
    crypto/sha512_generic lib/crypto/aes crypto/aes_generic lib/crypto/gf128mul
  $k arch/riscv/lib/memcpy.s arch/riscv/lib/memset.s
  grep -v "^\.type __memcpy STT_FUNC\|^\.weak memcpy\|^\.globl __pi_" "$ko/arch/riscv/lib/memcpy.s" | sed "s/__memcpy/memcpy/g; s/^\(\s*\)move /\1mv /" > "$lg/memcpy.s"
  # The kernel's memset jumps into an unrolled loop through a computed address, which kgen's
  # assembler does not take; this stand-in stores doublewords as it does for aligned buffers.
  cat > "$lg/memset.s" <<'EOS'
	.text
	.globl	memset
memset:
	mv	t0, a0
	andi	a1, a1, 0xff
	slli	t1, a1, 8
	or	a1, a1, t1
	slli	t1, a1, 16
	or	a1, a1, t1
	slli	t1, a1, 32
	or	a1, a1, t1
	beqz	a2, 3f
	or	t1, a0, a2
	andi	t1, t1, 7
	bnez	t1, 2f
1:	sd	a1, 0(t0)
	addi	t0, t0, 8
	addi	a2, a2, -8
	bnez	a2, 1b
	ret
2:	sb	a1, 0(t0)
	addi	t0, t0, 1
	addi	a2, a2, -1
	bnez	a2, 2b
3:	ret
EOS
  rm -rf "$ko"
fi
# Linux 7.3's generic AES library (one 1 KiB table) and GHASH (POLYVAL's generic multiply),
# the same way.
lg73=$la/generic-7.3
if [ ! -f "$lg73/gf128hash.s" ]; then
  kernel_asm "$tc/linux-7.3.4/linux-source-7.3" "$lg73" lib/crypto/aes lib/crypto/gf128hash
  rm -rf "$ko"
fi
# --- Rust for riscv64 (trixie's rustc/cargo and riscv64 std), private ------------
"$repo/scripts/rust-riscv64.sh" "$tc/rust-riscv64" | grep -E '^rust-riscv64: (rustc|already)|ready'

# --- the C906 RTL (openc906, verilated), cached by what it is built from ----------
kit=${KGEN_C906_RTL_KIT:-$repo/../shared/c906-rtl}
if [ -x "$kit/model/build.sh" ]; then
  key=$(cat "$kit"/openc906-*.tar.xz "$kit/model/build.sh" "$kit/model/tb_vl.v" "$kit/model/tb_vl.cpp" | sha256sum | cut -c1-16)
  rtl=${C906_RTL_CACHE:-$HOME/.cache/c906rtl}/kgen-$key
  if [ ! -x "$rtl/sim/obj_dir/Vc906" ]; then
    "$kit/model/build.sh" "$rtl" > "$tc/c906rtl-build.log" 2>&1 || { echo "C906 RTL build failed: see $tc/c906rtl-build.log" >&2; exit 1; }
  fi
  ln -sfn "$rtl" "$tc/c906rtl"
  echo "c906 rtl:      $rtl/sim/obj_dir/Vc906"
else
  echo "c906 rtl:      no kit at $kit (KGEN_C906_RTL_KIT); RTL tests skip (fail under CI=true)"
fi
echo "toolchain ready ($tc)"
