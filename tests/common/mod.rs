//! Helpers shared by the kernel tests: building a static C harness around emitted assembly
//! and running it under an emulator.
#![allow(dead_code)]

use kgen_harness::oracle::{self, Tool};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// `<linux/linkage.h>` as far as kgen's Linux files need it.
pub const LINKAGE_STUB: &str = "#ifndef STUB_LINKAGE_H
#define STUB_LINKAGE_H
#define SYM_FUNC_START(name) .globl name; .type name, @function; .p2align 2; name:
#define SYM_FUNC_START_LOCAL(name) .type name, @function; .p2align 2; name:
#define SYM_FUNC_END(name) .size name, .-name
#endif
";

/// A kernel variant's module for `abi` (a build failure panics with its message).
pub fn module(kernel: &str, variant: &str, abi: kgen_dsl::Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel(kernel).unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{e}"))
}

/// kgen-sim with `m` loaded.
pub fn sim(m: &kgen_dsl::Module) -> kgen_sim::Env {
    kgen_sim::Env::new(&m.object().unwrap(), &m.target).unwrap()
}

/// Compiles `c_src` with the assembly files into a static riscv64 binary.
pub fn build(dir: &Path, name: &str, c_src: &str, asm: &[(&str, String)]) -> Option<PathBuf> {
    let gcc = oracle::gcc()?;
    std::fs::create_dir_all(dir.join("linux")).unwrap();
    std::fs::write(dir.join("linux/linkage.h"), LINKAGE_STUB).unwrap();
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, c_src).unwrap();
    let mut cmd = gcc.command();
    let bin = dir.join(name);
    cmd.args(["-static", "-O1", "-march=rv64gc", "-I"]).arg(dir).arg("-o").arg(&bin).arg(&c);
    for (file, text) in asm {
        let p = dir.join(file);
        std::fs::write(&p, text).unwrap();
        cmd.arg(&p);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "building {name}: {}", String::from_utf8_lossy(&out.stderr));
    Some(bin)
}

/// Runs `bin` under `qemu` with `-cpu cpu`, feeding `input` on stdin.
pub fn run(qemu: &Tool, cpu: &str, bin: &Path, input: &str) -> Output {
    let mut child = qemu.command().args(["-cpu", cpu]).arg(bin).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// FNV-1a 64 of a byte string (the harnesses print it instead of whole outputs).
pub fn fnv(b: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The harnesses' data generator (xorshift64*), for inputs derived from a seed.
pub fn gen_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed | 1;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        out.extend_from_slice(&s.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// C versions of `fnv` and `gen_bytes`.
pub const C_HELPERS: &str = r#"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static uint64_t fnv(const unsigned char *b, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ULL; }
  return h;
}
static void gen_bytes(uint64_t s, unsigned char *out, size_t n) {
  s |= 1;
  size_t i = 0;
  while (i < n) {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    uint64_t v = s * 0x2545F4914F6CDD1DULL;
    for (int k = 0; k < 8 && i < n; k++, i++) out[i] = (unsigned char)(v >> (8 * k));
  }
}
static void unhex(const char *s, unsigned char *out) {
  unsigned v; int n = 0;
  while (sscanf(s + 2 * n, "%2x", &v) == 1) out[n++] = v;
}
"#;

/// golang.org/x/crypto and golang.org/x/sys from Debian (`golang-golang-x-crypto-dev`,
/// `golang-golang-x-sys-dev`), for Go tests that compare with Go's own code: (crypto, sys).
pub fn go_x_crypto() -> Option<(PathBuf, PathBuf)> {
    let root = Path::new("/usr/share/gocode/src/golang.org/x");
    let (crypto, sys) = (root.join("crypto"), root.join("sys"));
    if crypto.join("poly1305").is_dir() && crypto.join("chacha20").is_dir() && sys.join("cpu").is_dir() {
        Some((crypto, sys))
    } else {
        oracle::missing("golang.org/x/crypto and golang.org/x/sys sources (Debian golang-golang-x-crypto-dev, golang-golang-x-sys-dev)")
    }
}

/// Which QEMU runs a module, the `-cpu` that has its extensions (RVV 1.0 at the target's
/// smallest VLEN), and one that lacks them (the negative control; none for plain RV64GC).
pub fn emulator(m: &kgen_dsl::Module) -> (Option<Tool>, String, Option<String>) {
    emulator_at(m, m.target.vlen)
}

/// [`emulator`] at every VLEN the module is declared correct for (128, 256, 512 for the
/// RVV 1.0 variants; the one fixed VLEN otherwise).
pub fn emulators(m: &kgen_dsl::Module) -> Vec<(Option<Tool>, String, Option<String>)> {
    let mut v = Vec::new();
    let mut vlen = m.target.vlen.max(128);
    loop {
        v.push(emulator_at(m, vlen));
        vlen *= 2;
        if m.target.vdialect() != Some(kgen_dsl::isa::VDialect::V1) || vlen > m.target.vlen_max {
            return v;
        }
    }
}

fn emulator_at(m: &kgen_dsl::Module, vlen: usize) -> (Option<Tool>, String, Option<String>) {
    let vector = m.funcs.iter().any(|l| l.frame.uses_vector);
    let s = |x: &str| x.to_string();
    match (m.target.name, vector) {
        ("c906", true) => (oracle::xuantie_qemu(), s("c906fdv"), Some(s("c906fd"))),
        ("c906" | "c906-novector", _) => (oracle::qemu(), s("thead-c906"), Some(s("rv64"))),
        ("rv64gc", _) => (oracle::qemu(), s("rv64"), None),
        ("rv64gcv", _) => (oracle::qemu(), format!("rv64,v=true,vlen={vlen},zbb=true"), Some(s("rv64,zbb=true"))),
        ("rv64gc-zbb", _) => (oracle::qemu(), s("rv64,zbb=true"), Some(s("rv64,zbb=false"))),
        ("rv64gc-zbc", _) => (oracle::qemu(), s("rv64,zbb=true,zbc=true"), Some(s("rv64,zbc=false"))),
        ("rva23", _) => (oracle::qemu(), format!("rv64,v=true,vlen={vlen},zbb=true,zvkb=true"), Some(format!("rv64,v=true,vlen={vlen},zbb=true"))),
        (t, _) => panic!("no QEMU CPU known for target {t}"),
    }
}

/// Writes the module's generated C header (`kgen emit ... --format h`) into `dir` and returns
/// the lines a harness starts with to use it (outside OpenSSL: `KGEN_STANDALONE`). The
/// harnesses declare nothing themselves: prototypes come from the entry points.
pub fn header(dir: &Path, m: &kgen_dsl::Module) -> String {
    let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils244 };
    let h = kgen_emit::c_header(m, &o).unwrap_or_else(|e| panic!("header of {} {}: {e}", m.kernel, m.variant));
    let name = format!("{}-{}-{}.h", m.kernel, m.variant, m.abi.name());
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(&name), h).unwrap();
    format!("#define KGEN_STANDALONE\n#include \"{name}\"\n")
}

/// The RFC 8439 block function, written out: used where RustCrypto stops (it refuses the
/// block at counter 2^32 - 1, and OpenSSL's 32-bit counter wraps there); checked against
/// RustCrypto everywhere else by tests/chacha.rs's `reference_agrees_with_rustcrypto`.
pub fn rfc_block(key: &[u8; 32], ctr: u32, nonce: &[u8; 12]) -> [u8; 64] {
    rfc_block_rounds(key, ctr, nonce, 20)
}

/// The block function with `rounds` rounds (8, 12 or 20).
pub fn rfc_block_rounds(key: &[u8; 32], ctr: u32, nonce: &[u8; 12], rounds: usize) -> [u8; 64] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&kgen_kernels::chacha::SIGMA);
    for i in 0..8 {
        s[4 + i] = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap());
    }
    s[12] = ctr;
    for i in 0..3 {
        s[13 + i] = u32::from_le_bytes(nonce[4 * i..4 * i + 4].try_into().unwrap());
    }
    let mut x = s;
    let qr = |x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize| {
        x[a] = x[a].wrapping_add(x[b]); x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]); x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]); x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]); x[b] = (x[b] ^ x[c]).rotate_left(7);
    };
    for _ in 0..rounds / 2 {
        qr(&mut x, 0, 4, 8, 12); qr(&mut x, 1, 5, 9, 13); qr(&mut x, 2, 6, 10, 14); qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15); qr(&mut x, 1, 6, 11, 12); qr(&mut x, 2, 7, 8, 13); qr(&mut x, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&x[i].wrapping_add(s[i]).to_le_bytes());
    }
    out
}

/// Keystream XOR starting at block `ctr` with a 32-bit counter that wraps: RustCrypto for
/// counters below 2^32 - 1, the written-out block function for that last block.
pub fn chacha20_xor(key: &[u8; 32], ctr: u32, nonce: &[u8; 12], data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut done = 0usize;
    let mut c = ctr;
    while done < out.len() {
        if c == u32::MAX {
            let ks = rfc_block(key, c, nonce);
            let n = (out.len() - done).min(64);
            for i in 0..n {
                out[done + i] ^= ks[i];
            }
            done += n;
            c = 0;
            continue;
        }
        let blocks_left = (u32::MAX - c) as u64;
        let run = ((blocks_left * 64).min((out.len() - done) as u64)) as usize;
        let mut ch = <chacha20::ChaCha20 as chacha20::cipher::KeyIvInit>::new(key.into(), nonce.into());
        chacha20::cipher::StreamCipherSeek::seek(&mut ch, c as u64 * 64);
        chacha20::cipher::StreamCipher::apply_keystream(&mut ch, &mut out[done..done + run]);
        done += run;
        c = c.wrapping_add(run.div_ceil(64) as u32);
    }
    out
}

/// What OpenSSL's build generates and its C files include (configuration, version,
/// `OPENSSL_cleanse`'s declaration, an empty cryptlib), for a freestanding compile of one of
/// its files as test input.
pub const OPENSSL_STUBS: [(&str, &str); 4] = [
    ("openssl/configuration.h", "#ifndef OPENSSL_CONFIGURATION_H\n#define OPENSSL_CONFIGURATION_H\n#define OPENSSL_CONFIGURED_API 30500\n#endif\n"),
    ("openssl/opensslv.h", "#ifndef OPENSSL_OPENSSLV_H\n#define OPENSSL_OPENSSLV_H\n#define OPENSSL_VERSION_MAJOR 3\n#define OPENSSL_VERSION_MINOR 5\n#define OPENSSL_VERSION_PATCH 7\n#endif\n"),
    ("openssl/crypto.h", "#ifndef OPENSSL_CRYPTO_H\n#define OPENSSL_CRYPTO_H\n#include <stddef.h>\nvoid OPENSSL_cleanse(void *p, size_t n);\n#endif\n"),
    ("internal/cryptlib.h", "#ifndef OSSL_INTERNAL_CRYPTLIB_H\n#define OSSL_INTERNAL_CRYPTLIB_H\n#endif\n"),
];

/// Compiles `wrapper` (C that includes a file of `.toolchain/openssl-3.5.7`) as `name.c` in
/// `dir` with the cross gcc, `flags` and `mode` (`-S` or `-c`), against [`OPENSSL_STUBS`] and
/// the tree's headers. None (and under CI a failure) if gcc or the tree is missing.
pub fn compile_openssl_c(dir: &Path, name: &str, wrapper: &str, flags: &[String], mode: &str) -> Option<PathBuf> {
    let gcc = oracle::gcc()?;
    let tree = oracle::toolchain_dir().join("openssl-3.5.7");
    if !tree.join("include/openssl/evp.h").exists() {
        return oracle::missing("OpenSSL 3.5.7 source (.toolchain/openssl-3.5.7)");
    }
    for (stub, text) in OPENSSL_STUBS {
        let p = dir.join("stub").join(stub);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, wrapper).unwrap();
    let out = dir.join(format!("{name}.{}", if mode == "-S" { "s" } else { "o" }));
    let r = gcc.command().args(flags).arg("-I").arg(dir.join("stub")).arg("-I").arg(tree.join("include")).arg("-I").arg(&tree).arg(mode).arg(&src).arg("-o").arg(&out).output().unwrap();
    assert!(r.status.success(), "compiling {name}.c: {}", String::from_utf8_lossy(&r.stderr));
    Some(out)
}

/// The C declarations of [`canaries_s`]'s trampoline.
pub const CANARIES_H: &str = r#"
typedef void (*canary_fn)(void);
void canary_call6(canary_fn fn, unsigned long a, unsigned long b, unsigned long c, unsigned long d, unsigned long e, unsigned long f);
void clobber_s5(void);
"#;

/// A C harness's call trampoline: `canary_call6(fn, a1..a6)` calls fn(a1..a6) with a canary
/// in each of s0..s11, then compares every one, sp and tp; a change exits with status 99.
/// `clobber_s5` changes s5: the canaries' negative control.
pub fn canaries_s() -> String {
    let mut t = String::from("\t.text\n\t.globl canary_call6\n\t.type canary_call6, @function\ncanary_call6:\n\taddi sp, sp, -128\n\tsd ra, 0(sp)\n");
    for i in 0..12 {
        t.push_str(&format!("\tsd s{i}, {}(sp)\n", 8 + 8 * i));
    }
    t.push_str("\tsd tp, 104(sp)\n\tsd sp, 112(sp)\n\tmv t0, a0\n");
    for i in 0..6 {
        t.push_str(&format!("\tmv a{i}, a{}\n", i + 1));
    }
    for i in 0..12 {
        t.push_str(&format!("\tli s{i}, 0x5eed0000c0de{i:04x}\n"));
    }
    t.push_str("\tjalr t0\n\tld t1, 112(sp)\n\tbne t1, sp, 1f\n\tld t1, 104(sp)\n\tbne t1, tp, 1f\n");
    for i in 0..12 {
        t.push_str(&format!("\tli t1, 0x5eed0000c0de{i:04x}\n\tbne s{i}, t1, 1f\n"));
    }
    t.push_str("\tld ra, 0(sp)\n");
    for i in 0..12 {
        t.push_str(&format!("\tld s{i}, {}(sp)\n", 8 + 8 * i));
    }
    t.push_str("\taddi sp, sp, 128\n\tret\n1:\tli a0, 99\n\tli a7, 93\n\tecall\n");
    t.push_str("\t.globl clobber_s5\n\t.type clobber_s5, @function\nclobber_s5:\n\tli s5, 1\n\tret\n");
    t
}

/// Each TEXT symbol's bytes and its relocated byte ranges, from `go tool asm -S`.
pub fn parse_go_listing(listing: &str, pkg: &str) -> HashMap<String, (Vec<u8>, Vec<(usize, usize)>)> {
    let mut out: HashMap<String, (Vec<u8>, Vec<(usize, usize)>)> = HashMap::new();
    let mut cur: Option<String> = None;
    for l in listing.lines() {
        if !l.starts_with('\t') {
            cur = l.strip_prefix(&format!("{pkg}.")).and_then(|r| r.split_once(" STEXT")).map(|(n, _)| n.to_string());
            if let Some(c) = &cur {
                out.entry(c.clone()).or_default();
            }
            continue;
        }
        let Some(c) = &cur else { continue };
        let t = l.trim();
        if let Some(r) = t.strip_prefix("rel ") {
            let (range, _) = r.split_once(' ').unwrap();
            let (o, n) = range.split_once('+').unwrap();
            out.get_mut(c).unwrap().1.push((o.parse().unwrap(), n.parse().unwrap()));
            continue;
        }
        // A hex line: `0x0010 37 83 70 61 ...  ascii`; an instruction line has a decimal
        // PC (`0x0010 00016 (file:line)`) after the offset.
        let mut it = t.split(' ');
        if !it.next().is_some_and(|o| o.starts_with("0x")) {
            continue;
        }
        let bytes: Vec<u8> = it.take_while(|b| b.len() == 2).map_while(|b| u8::from_str_radix(b, 16).ok()).collect();
        out.get_mut(c).unwrap().0.extend(bytes);
    }
    out
}

/// A psABI function `name` that calls the ABI0 function at label `callee` (which follows):
/// the C ABI's callee-saved registers saved (ABI0 preserves none of them), `g` (s11) pointed
/// at a zero stack guard (so a prologue's stack check never calls morestack), `setup`'s
/// lines, then `args` written at 8(sp) on, where ABI0 reads its arguments.
pub fn abi0_trampoline(name: &str, callee: &str, setup: &str, args: [&str; 4]) -> String {
    let mut s = format!("\t.text\n\t.globl {name}\n{name}:\n\taddi sp, sp, -160\n\tsd ra, 40(sp)\n");
    for k in 0..12 {
        s += &format!("\tsd s{k}, {}(sp)\n", 48 + 8 * k);
    }
    s += "\tsd zero, 144(sp)\n\taddi s11, sp, 128\n";
    s += setup;
    for (i, a) in args.iter().enumerate() {
        s += &format!("\tsd {a}, {}(sp)\n", 8 + 8 * i);
    }
    s += &format!("\tjal ra, {callee}\n");
    for k in 0..12 {
        s += &format!("\tld s{k}, {}(sp)\n", 48 + 8 * k);
    }
    s += &format!("\tld ra, 40(sp)\n\taddi sp, sp, 160\n\tret\n{callee}:\n");
    s
}

/// One function of Go's machine code (from [`parse_go_listing`]) as instructions for kgen's
/// text assembler: a branch's target (`.+offset` as kgen prints it) made a label `.Lw<k>`;
/// a relocated `auipc`+`addi` (`MOV $sym(SB)`) a `la` of `data`; another relocated
/// instruction (the call of morestack, never taken) a `nop`. Each line keeps its index.
pub fn go_code_as_text(code: &[u8], rel: &[(usize, usize)], data: &str) -> String {
    let exts = kgen_dsl::isa::all_exts_with(kgen_dsl::isa::VDialect::Thead);
    let words: Vec<u32> = code.chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    let mut lines: Vec<String> = Vec::new();
    let mut targets = std::collections::BTreeSet::new();
    let mut k = 0;
    while k < words.len() {
        let i = kgen_dsl::table().decode(words[k], exts).unwrap_or_else(|| panic!("{:#010x}: not an instruction kgen knows", words[k]));
        let text = kgen_dsl::text::print_inst(&i);
        match rel.iter().find(|(o, _)| *o == 4 * k) {
            Some(&(_, 8)) => {
                let rd = text.strip_prefix("auipc ").and_then(|r| r.split(',').next()).unwrap_or_else(|| panic!("relocated `{text}`"));
                // `la` is two instructions: an empty line keeps the indices Go's.
                lines.push(format!("la {rd}, {data}"));
                lines.push(String::new());
                k += 2;
                continue;
            }
            Some(_) => lines.push("nop".into()),
            None => match text.rsplit_once('.') {
                Some((head, off)) if off.starts_with(['+', '-']) => {
                    let to = 4 * k as i64 + off.parse::<i64>().unwrap_or_else(|_| panic!("`{text}`"));
                    targets.insert(to / 4);
                    lines.push(format!("{head}.Lw{}", to / 4));
                }
                _ => lines.push(text),
            },
        }
        k += 1;
    }
    let mut s = String::new();
    for (k, l) in lines.iter().enumerate() {
        if targets.contains(&(k as i64)) {
            s += &format!(".Lw{k}:\n");
        }
        if !l.is_empty() {
            s += &format!("\t{l}\n");
        }
    }
    s
}

/// `go tool asm -S` (GOARCH=riscv64) of the Go assembly `s` as package `pkg`, in `dir`: the
/// listing.
pub fn go_tool_asm(go: &Tool, dir: &Path, s: &str, pkg: &str) -> String {
    std::fs::write(dir.join("k_riscv64.s"), s).unwrap();
    let goroot = String::from_utf8(go.command().args(["env", "GOROOT"]).output().unwrap().stdout).unwrap();
    let o = go
        .command()
        .current_dir(dir)
        .env("GOARCH", "riscv64")
        .env("GOOS", "linux")
        .args(["tool", "asm", "-S", "-p", pkg, "-o", "k.o", "-I"])
        .arg(Path::new(goroot.trim()).join("pkg/include"))
        .arg("k_riscv64.s")
        .output()
        .unwrap();
    assert!(o.status.success(), "go tool asm: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// golang.org/x/crypto v0.58.0 as Debian sid packages it (`golang-golang-x-crypto-dev`),
/// unpacked by `scripts/setup-toolchain.sh`.
pub fn x_crypto_0_58() -> Option<PathBuf> {
    let d = oracle::toolchain_dir().join("x-crypto-0.58.0/usr/share/gocode/src/golang.org/x/crypto");
    if d.join("internal/poly1305/sum_riscv64.s").is_file() {
        Some(d)
    } else {
        oracle::missing("golang.org/x/crypto v0.58.0 (scripts/setup-toolchain.sh)")
    }
}
