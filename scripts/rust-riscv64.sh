#!/usr/bin/env bash
# A private Rust cross toolchain for riscv64gc-unknown-linux-gnu on Debian 12 (bookworm), x86-64.
#
#   usage: rust-riscv64.sh FOLDER        (idempotent: a complete install is left alone)
#
# Debian trixie's rustc/cargo (amd64) and trixie's riscv64 std (libstd-rust*-dev:riscv64) of
# the same rustc release, unpacked with dpkg -x under FOLDER and run through trixie's own
# ld.so (they need glibc 2.39; bookworm has 2.36). The system's libc is not touched.
# Linking uses bookworm's riscv64-linux-gnu-gcc and riscv64 glibc 2.36 (libc6-dev-riscv64-cross);
# host artefacts (build scripts, proc-macros) link with bookworm's gcc against the system glibc.
#
#   RUST_RISCV64_FLAVOR=web    (default) rustc-web / cargo-web / libstd-rust-web-dev: 1.96 today.
#                              Trixie's "web" Rust, kept current for Firefox/Chromium.
#   RUST_RISCV64_FLAVOR=plain  rustc / cargo / libstd-rust-dev: 1.85.1. Too old for kgen as
#                              locked (askama 0.16 needs 1.88, kgen uses u32::is_multiple_of, 1.87).
#
# Layout of FOLDER:
#   apt-trixie-rust/   private apt state (lists for trixie amd64+riscv64, downloaded .debs)
#   rust-FLAVOR/       the unpacked packages (usr/bin/rustc, usr/lib/rustlib/{x86_64,riscv64gc}-*)
#   bin/rustc bin/rustdoc bin/cargo   wrappers to call; bin/cargo sets RUSTC, RUSTDOC, CARGO and,
#                      unless already set, the riscv64 linker and a qemu runner
#   env.sh             the same variables, to source (e.g. to use another cargo with this rustc)
#   selftest/          hello world + a local proc-macro/build-script crate, built for riscv64
#
# Prints one line per step and ends with `rust-riscv64 ready` or a non-zero exit.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 FOLDER" >&2; exit 2; }
mkdir -p "$1"
dest=$(cd "$1" && pwd)
flavor=${RUST_RISCV64_FLAVOR:-web}
case $flavor in
  web)   rustc_pkg=rustc-web cargo_pkg=cargo-web std_dev=libstd-rust-web-dev ;;
  plain) rustc_pkg=rustc     cargo_pkg=cargo     std_dev=libstd-rust-dev ;;
  *) echo "RUST_RISCV64_FLAVOR must be web or plain, not $flavor" >&2; exit 2 ;;
esac
target=riscv64gc-unknown-linux-gnu
root=$dest/rust-$flavor
bin=$dest/bin
stamp=$root/.installed
say() { echo "rust-riscv64: $*"; }

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# --- bookworm packages: host cc (build scripts), riscv64 cross gcc + glibc (linker) ----------
need=()
for p in gcc libc6-dev gcc-riscv64-linux-gnu libc6-dev-riscv64-cross; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing bookworm packages: ${need[*]}"
  sudo_ apt-get update -qq
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
say "linker: $(riscv64-linux-gnu-gcc --version | head -1)"

# --- trixie packages, private -------------------------------------------------------------
installed_ok() {
  [ -f "$stamp" ] && [ -d "$root/usr/lib/rustlib/$target/lib" ] &&
    "$root/usr/lib64/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" \
      "$root/usr/bin/rustc" -vV >/dev/null 2>&1
}

if installed_ok; then
  say "already installed in $root ($(tr '\n' ' ' < "$stamp"))"
else
  apt_dir=$dest/apt-trixie-rust
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
  echo "deb [arch=amd64,riscv64] http://deb.debian.org/debian trixie main" > "$apt_dir/sources.list"
  opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::Archives="$apt_dir/archives"
        -o Dir::State::status=/dev/null
        -o APT::Architectures::=amd64 -o APT::Architectures::=riscv64
        -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root -o Debug::NoLocking=1)
  say "apt-get update (trixie main, amd64 + riscv64, private lists in $apt_dir)"
  apt-get "${opts[@]}" update -qq

  field() {  # field PKG:ARCH FIELD -> the candidate's value
    apt-cache "${opts[@]}" show --no-all-versions "$1" | sed -n "s/^$2: //p" | head -1
  }
  lib_deps() {  # the plain (non-alternative) dependencies of PKG:ARCH, minus the build tools
    field "$1" Depends | tr ',' '\n' | grep -v '|' | sed 's/(.*)//; s/ //g' |
      grep -vxE 'gcc|binutils|libc-dev|rustc|rustc-web|libstd-rust-dev|libstd-rust-web-dev' || true
  }

  v_rustc=$(field "$rustc_pkg:amd64" Version)
  v_cargo=$(field "$cargo_pkg:amd64" Version)
  v_std_host=$(field "$std_dev:amd64" Version)
  v_std_rv=$(field "$std_dev:riscv64" Version)
  [ -n "$v_rustc" ] && [ -n "$v_std_rv" ] || { echo "trixie has no $rustc_pkg:amd64 or $std_dev:riscv64" >&2; exit 1; }
  # The compiler and both std's must be the same rustc release (1.96.0 in 1.96.0+dfsg1-1~deb13u1+b1).
  up() { echo "${1%%+*}" | sed 's/^[0-9]*://; s/-[^-]*$//'; }
  if [ "$(up "$v_rustc")" != "$(up "$v_std_rv")" ] || [ "$(up "$v_rustc")" != "$(up "$v_std_host")" ]; then
    echo "version mismatch: $rustc_pkg $v_rustc, $std_dev:amd64 $v_std_host, $std_dev:riscv64 $v_std_rv" >&2
    exit 1
  fi
  [ "$v_rustc" = "$v_std_rv" ] || say "note: riscv64 std is $v_std_rv, rustc is $v_rustc (same release)"

  # The compiler driver library (libstd-rust[-web]-1.NN) and every shared library that rustc,
  # cargo and the driver need, recursively (libc6, libstdc++6, libllvmNN, libgit2, libcurl...).
  roots=$( { lib_deps "$rustc_pkg:amd64"; lib_deps "$cargo_pkg:amd64"; lib_deps "$std_dev:amd64"; } | sort -u)
  libs=$(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
           --no-breaks --no-replaces --no-enhances $(for p in $roots; do echo "$p:amd64"; done) |
         grep -v '^[ <]' | grep -v ':' | sort -u)
  pkgs=("$rustc_pkg:amd64" "$cargo_pkg:amd64" "$std_dev:amd64" "$std_dev:riscv64")
  for p in $libs; do pkgs+=("$p:amd64"); done
  say "downloading ${#pkgs[@]} trixie packages: $rustc_pkg $v_rustc, $cargo_pkg $v_cargo, $std_dev (amd64, riscv64), $(echo $libs | wc -w) libraries"
  rm -f "$apt_dir"/debs/*.deb
  ( cd "$apt_dir/debs" && apt-get "${opts[@]}" download -qq "${pkgs[@]}" )
  say "downloaded $(du -ch "$apt_dir"/debs/*.deb | tail -1 | cut -f1) in $(ls "$apt_dir"/debs/*.deb | wc -l) files"

  rm -rf "$root.new"
  mkdir -p "$root.new"
  for d in "$apt_dir"/debs/*.deb; do dpkg -x "$d" "$root.new"; done
  rm -rf "$root.new/usr/share/doc" "$root.new/usr/share/man"
  for d in "$apt_dir"/debs/*.deb; do dpkg-deb -W --showformat='${Package}:${Architecture} ${Version}\n' "$d"; done \
    > "$root.new/.packages"

  # Every library the binaries load must come from the private tree, none from the system.
  ldso=$root.new/usr/lib64/ld-linux-x86-64.so.2
  for f in "$root.new"/usr/bin/rustc "$root.new"/usr/bin/cargo "$root.new"/usr/lib/x86_64-linux-gnu/librustc_driver-*.so; do
    bad=$("$ldso" --library-path "$root.new/usr/lib/x86_64-linux-gnu" --list "$f" | grep '=>' | grep -v "$root.new/" || true)
    [ -z "$bad" ] || { echo "$f: libraries resolved outside $root.new:"; echo "$bad"; exit 1; } >&2
  done
  rm -rf "$root"
  mv "$root.new" "$root"
  rm -f "$apt_dir"/debs/*.deb
  printf '%s\n' "$rustc_pkg=$v_rustc" "$cargo_pkg=$v_cargo" "$std_dev:amd64=$v_std_host" "$std_dev:riscv64=$v_std_rv" > "$stamp"
fi

# --- wrappers (rewritten every run: cheap, and they follow a moved FOLDER) -------------------
mkdir -p "$bin"
ldso=$root/usr/lib64/ld-linux-x86-64.so.2
libdir=$root/usr/lib/x86_64-linux-gnu
for b in rustc rustdoc; do
  cat > "$bin/$b" <<EOF
#!/bin/sh
# trixie $b, run through trixie's ld.so (no LD_LIBRARY_PATH: children such as gcc stay on the system glibc)
exec "$ldso" --library-path "$libdir" "$root/usr/bin/$b" "\$@"
EOF
done
cat > "$bin/cargo" <<EOF
#!/bin/sh
# trixie cargo with the trixie rustc beside it. CARGO is set because cargo would otherwise tell
# build scripts its own path is the ld.so (cargo 1.85 does).
export CARGO="$bin/cargo" RUSTC="$bin/rustc" RUSTDOC="$bin/rustdoc"
export CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER="\${CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER:-riscv64-linux-gnu-gcc}"
export CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_RUNNER="\${CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_RUNNER:-qemu-riscv64 -L /usr/riscv64-linux-gnu}"
exec "$ldso" --library-path "$libdir" "$root/usr/bin/cargo" "\$@"
EOF
chmod +x "$bin/rustc" "$bin/rustdoc" "$bin/cargo"
cat > "$dest/env.sh" <<EOF
# source me: the private rustc for any cargo (e.g. rustup's), riscv64 linker and qemu runner
export RUSTC="$bin/rustc" RUSTDOC="$bin/rustdoc"
export CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER=riscv64-linux-gnu-gcc
export CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_RUNNER="qemu-riscv64 -L /usr/riscv64-linux-gnu"
EOF
say "rustc:  $("$bin/rustc" -V)  (sysroot $("$bin/rustc" --print sysroot))"
say "cargo:  $("$bin/cargo" -V)"
say "targets in sysroot: $(ls "$root/usr/lib/rustlib" | grep -- -linux- | tr '\n' ' ')"

# --- self-test: hello world (dynamic, static) and a proc-macro + build-script crate ---------
st=$dest/selftest
mkdir -p "$st/pm/src" "$st/app/src"
cat > "$st/hello.rs" <<'EOF'
fn main() { let s: u64 = (1..=10).sum(); println!("hello from {} (sum {s})", std::env::consts::ARCH); }
EOF
cat > "$st/pm/Cargo.toml" <<'EOF'
[package]
name = "pm"
version = "0.1.0"
edition = "2021"
[lib]
proc-macro = true
EOF
cat > "$st/pm/src/lib.rs" <<'EOF'
use proc_macro::TokenStream;
/// `answer!()` expands to a literal computed in the host compiler.
#[proc_macro]
pub fn answer(_: TokenStream) -> TokenStream { format!("{}u32", 6 * 7).parse().unwrap() }
EOF
cat > "$st/app/Cargo.toml" <<'EOF'
[package]
name = "app"
version = "0.1.0"
edition = "2021"
[dependencies]
pm = { path = "../pm" }
[workspace]
EOF
cat > "$st/app/build.rs" <<'EOF'
fn main() { println!("cargo:rustc-env=BUILT_FOR={}", std::env::var("TARGET").unwrap()); }
EOF
cat > "$st/app/src/main.rs" <<'EOF'
fn main() { println!("app: answer {} built for {} running on {}", pm::answer!(), env!("BUILT_FOR"), std::env::consts::ARCH); }
EOF

run() {  # run BINARY: under qemu-riscv64 when it is there
  if command -v qemu-riscv64 >/dev/null; then qemu-riscv64 -cpu rv64 -L /usr/riscv64-linux-gnu "$1"
  else echo "(qemu-riscv64 missing: built, not run)"; fi
}
"$bin/rustc" -O --target $target -C linker=riscv64-linux-gnu-gcc "$st/hello.rs" -o "$st/hello"
say "hello (dynamic): $(run "$st/hello")"
"$bin/rustc" -O --target $target -C linker=riscv64-linux-gnu-gcc -C target-feature=+crt-static "$st/hello.rs" -o "$st/hello-static"
file "$st/hello-static" | grep -q 'statically linked' || { echo "hello-static is not static" >&2; exit 1; }
say "hello (static):  $(run "$st/hello-static")"
( cd "$st/app" && "$bin/cargo" build -q --offline --release --target $target )
say "proc-macro + build.rs: $(run "$st/app/target/$target/release/app")"
say "usage: $bin/cargo build --release --target $target"
echo "rust-riscv64 ready ($dest)"
