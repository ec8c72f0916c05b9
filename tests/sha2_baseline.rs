//! SHA-256 and SHA-512 cost side by side with the code a C906 runs today: OpenSSL 3.5.7's C
//! `sha256_block_data_order_c` / `sha512_block_data_order_c` (its riscv64 SHA-2 assembly
//! needs the vector crypto extensions), compiled from OpenSSL's own sha256.c/sha512.c with
//! the cross gcc at -O3 for rv64gc. The files are test input: they are compiled from
//! `.toolchain/openssl-3.5.7` as they are, in a freestanding wrapper (the block function
//! under its `_c` name, and the three helpers the rest of the file calls) with stub
//! headers for what OpenSSL's build generates; nothing of them is copied into kgen.
//!
//! - On kgen's C906 model (`model_against_openssl_c`): the C code's `.s` goes through kgen's
//!   text assembler and the same benchmark driver as the kernels (`kgen bench`); the c906
//!   variants must take at most 0.6 of the C code's cycles per byte.
//! - On the C906 RTL (`rtl_against_openssl_c`): the same C object and kgen's `.S` through
//!   ../shared/c906-rtl/harness/run.sh, one and four blocks, the same target.
//!   `cargo test --release --test sha2_baseline -- --nocapture` prints docs/performance.md's
//!   figures.
//! - From OpenSSL 3.6 upstream has scalar SHA-2 assembly of its own (`sha256-riscv64-zbb.pl`
//!   writes a plain rv64 and a Zbb SHA-256, `sha512-riscv64-zbb.pl` a Zbb SHA-512), which its
//!   `sha_riscv.c` runs where the vector crypto extensions are missing. kgen's series puts
//!   the c906 variant before that code, so it must be faster than each of them: on the model
//!   (every one; a core with XTheadBb and Zbb would choose between them) and on the RTL (the
//!   plain rv64 one, which a C906 runs without kgen). The files are generated from
//!   `.toolchain/openssl-3.6.3` with its perlasm scripts, as OpenSSL's build does.
//! - Go 1.27 has riscv64 SHA-256 and SHA-512 assembly of its own (plain rv64); the Go
//!   series runs kgen's c906 variant before it on T-Head cores, so on the model kgen's must
//!   be faster (`model_against_go_1_27_assembly`, which also checks that Go's code, as
//!   measured, computes what kgen's does).

mod common;

use kgen_harness::oracle;
use kgen_dsl::Abi;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// (kernel, block bytes, SHA-n of OpenSSL's names).
const ALGS: [(&str, usize, u32); 2] = [("sha256", 64, 256), ("sha512", 128, 512)];

/// The wrapper: OpenSSL's file with its block function named `..._c` (as OpenSSL's riscv64
/// build names it), and the helpers its other functions call (weak: the SHA-256 and SHA-512
/// objects link together).
fn wrapper(bits: u32) -> String {
    format!(
        "#define sha{bits}_block_data_order sha{bits}_block_data_order_c\n#include \"crypto/sha/sha{bits}.c\"\n\
         __attribute__((weak)) void OPENSSL_cleanse(void *p, size_t n) {{ volatile unsigned char *a = p; while (n--) *a++ = 0; }}\n\
         __attribute__((weak)) void *memcpy(void *d, const void *s, size_t n) {{ unsigned char *a = d; const unsigned char *b = s; while (n--) *a++ = *b++; return d; }}\n\
         __attribute__((weak)) void *memset(void *d, int c, size_t n) {{ unsigned char *a = d; while (n--) *a++ = (unsigned char)c; return d; }}\n"
    )
}

/// The gcc flags of the baseline (besides -S or -c).
fn cflags(bits: u32) -> Vec<String> {
    ["-O3", "-march=rv64gc", "-mabi=lp64d", "-ffreestanding", "-fno-section-anchors"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("-DSHA{bits}_ASM"), format!("-DINCLUDE_C_SHA{bits}")])
        .collect()
}

/// Compiles OpenSSL's SHA-`bits` C code with `mode` (`-S` or `-c`) into `dir`.
fn compile_baseline(dir: &Path, bits: u32, mode: &str) -> Option<PathBuf> {
    common::compile_openssl_c(dir, &format!("openssl-sha{bits}"), &wrapper(bits), &cflags(bits), mode)
}

/// Upstream's scalar SHA-2 assembly of OpenSSL 3.6.3: (kernel, block bytes, function's
/// suffix, target, perlasm script, flavour).
const UPSTREAM_36: [(&str, usize, &str, &str, &str, &str); 3] = [
    ("sha256", 64, "riscv64", "rv64gc", "crypto/sha/asm/sha256-riscv64-zbb.pl", "linux64"),
    ("sha256", 64, "zbb", "rv64gc-zbb", "crypto/sha/asm/sha256-riscv64-zbb.pl", "zbb"),
    ("sha512", 128, "zbb", "rv64gc-zbb", "crypto/sha/asm/sha512-riscv64-zbb.pl", "zbb"),
];

/// One of [`UPSTREAM_36`]'s files, generated into `dir` by its perlasm script.
fn upstream_36(dir: &Path, script: &str, flavour: &str, name: &str) -> Option<PathBuf> {
    let perl = oracle::host_tool("perl")?;
    let tree = oracle::toolchain_dir().join("openssl-3.6.3");
    if !tree.join(script).exists() {
        return oracle::missing("OpenSSL 3.6.3 source (.toolchain/openssl-3.6.3)");
    }
    let out = dir.join(name);
    let o = perl.command().arg(script).arg(flavour).arg(&out).current_dir(&tree).output().unwrap();
    assert!(o.status.success(), "perl {script} {flavour}: {}", String::from_utf8_lossy(&o.stderr));
    Some(out)
}

fn module(kernel: &str, variant: &str) -> kgen_dsl::Module {
    kgen_kernels::kernel(kernel).unwrap().variant(variant).unwrap().build(Abi::Psabi).unwrap()
}

/// Modeled cycles per byte at one and four blocks.
fn model_cpb(rows: &[kgen_harness::bench::Row]) -> (f64, f64) {
    (rows[0].cpb(), rows[1].cpb())
}

#[test]
fn model_against_openssl_c() {
    let dir = oracle::scratch("sha2_baseline_model");
    let mut table = String::from("| kernel | code | 1 block | 4 blocks | vs C (4 blocks) |\n|---|---|---:|---:|---:|\n");
    for (kernel, block, bits) in ALGS {
        let Some(s) = compile_baseline(&dir, bits, "-S") else { return };
        let t = kgen_dsl::target::target("rv64gc").unwrap();
        let asm = kgen_dsl::asmfile::assemble_file(&std::fs::read_to_string(&s).unwrap(), &t).unwrap_or_else(|e| panic!("{}: {e}", s.display()));
        let sizes = [block, 4 * block];
        let c = kgen_harness::bench::bench_object(kgen_kernels::kernel(kernel).unwrap(), "openssl-c", &asm.object, &t, &sizes).unwrap();
        assert_eq!(c[0].what, format!("sha{bits}_block_data_order_c"), "the driver measured OpenSSL's C function");
        let (c1, c4) = model_cpb(&c);
        let _ = writeln!(table, "| {kernel} | OpenSSL 3.5.7 C (gcc -O3, rv64gc) | {c1:.2} | {c4:.2} | 1 |");
        for v in ["c906", "rv64gc", "rv64gc-zbb"] {
            let m = module(kernel, v);
            let rows = kgen_harness::bench::bench_object(kgen_kernels::kernel(kernel).unwrap(), v, &m.object().unwrap(), &m.target, &sizes).unwrap();
            let (k1, k4) = model_cpb(&rows);
            let _ = writeln!(table, "| {kernel} | kgen {v} | {k1:.2} | {k4:.2} | {:.3} |", k4 / c4);
            if v == "c906" {
                assert!(k1 <= 0.6 * c1 && k4 <= 0.6 * c4, "{kernel} c906: {k1:.2}/{k4:.2} c/B against C {c1:.2}/{c4:.2}: above 0.6");
            }
        }
    }
    println!("C906 model, cycles per byte:\n{table}");
}

#[test]
fn model_against_openssl_36_scalar_assembly() {
    let dir = oracle::scratch("sha2_baseline_36");
    let mut table = String::from("| kernel | code | 1 block | 4 blocks |\n|---|---|---:|---:|\n");
    for (kernel, block, suffix, target, script, flavour) in UPSTREAM_36 {
        let Some(s) = upstream_36(&dir, script, flavour, &format!("{kernel}-{suffix}.S")) else { return };
        let t = kgen_dsl::target::target(target).unwrap();
        let asm = kgen_dsl::asmfile::assemble_file(&std::fs::read_to_string(&s).unwrap(), &t).unwrap_or_else(|e| panic!("{}: {e}", s.display()));
        let sizes = [block, 4 * block];
        let up = kgen_harness::bench::bench_object(kgen_kernels::kernel(kernel).unwrap(), suffix, &asm.object, &t, &sizes).unwrap();
        assert_eq!(up[0].what, format!("{kernel}_block_data_order_{suffix}"), "the driver measured upstream's function");
        let (u1, u4) = model_cpb(&up);
        let m = module(kernel, "c906");
        let rows = kgen_harness::bench::bench_object(kgen_kernels::kernel(kernel).unwrap(), "c906", &m.object().unwrap(), &m.target, &sizes).unwrap();
        let (k1, k4) = model_cpb(&rows);
        if !table.contains(&format!("| {kernel} | kgen c906 |")) {
            let _ = writeln!(table, "| {kernel} | kgen c906 | {k1:.2} | {k4:.2} |");
        }
        let _ = writeln!(table, "| {kernel} | OpenSSL 3.6.3 `{kernel}_block_data_order_{suffix}` ({target}) | {u1:.2} | {u4:.2} |");
        assert!(k1 < u1 && k4 < u4, "{kernel}: kgen c906 {k1:.2}/{k4:.2} c/B is not faster than OpenSSL 3.6.3's {suffix} code {u1:.2}/{u4:.2}, which the series puts it before");
    }
    println!("C906 model, cycles per byte:\n{table}");
}

/// The RTL kit's `run.sh` and the built model's root (`kgen_harness::rtl` finds both).
fn rtl() -> Option<(PathBuf, PathBuf)> {
    let (model, kit) = kgen_harness::rtl::require()?;
    Some((kit.join("harness/run.sh"), model))
}

/// Runs `files` with a table of one- and four-block calls of the two block functions
/// `fns` (SHA-256's, SHA-512's); returns cycles per call for each (function, blocks).
fn run_rtl((run, model): &(PathBuf, PathBuf), dir: &Path, fns: [&str; 2], files: &[PathBuf]) -> Vec<(String, u64, f64)> {
    let mut bench = String::from("#include \"bench.h\"\nextern uint64_t ctx256[], ctx512[];\nextern unsigned char data[];\n");
    let mut k = 0;
    for (f, ctx) in fns.iter().zip(["ctx256", "ctx512"]) {
        for n in [1, 4] {
            let _ = writeln!(bench, "BENCH(e{k}, {f}, {ctx}, data, {n}, 0, {}, 1)", 8 / n);
            k += 1;
        }
    }
    let b = dir.join("table.c");
    std::fs::write(&b, bench).unwrap();
    let g = dir.join("buffers.c");
    std::fs::write(&g, "#include <stdint.h>\n__attribute__((aligned(64))) uint64_t ctx256[16], ctx512[32];\n__attribute__((aligned(64))) unsigned char data[512];\n").unwrap();
    let out = std::process::Command::new(run).env("C906_RTL", model).arg(dir.join("rtl")).arg(&b).arg(&g).args(files).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success() && !text.contains("TRAP"), "run.sh: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let mut rows = Vec::new();
    for l in text.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() >= 10 && t[0].starts_with('e') && t[0][1..].parse::<u32>().is_ok() {
            rows.push((t[1].to_string(), u64::from_str_radix(t[4].trim_start_matches("0x"), 16).unwrap(), t[7].parse::<f64>().unwrap()));
        }
    }
    assert_eq!(rows.len(), 4, "run.sh printed:\n{text}");
    rows
}

#[test]
fn rtl_against_openssl_c() {
    let Some(run) = rtl() else { return };
    let dir = oracle::scratch("sha2_baseline_rtl");
    let mut objs = Vec::new();
    for (_, _, bits) in ALGS {
        let Some(o) = compile_baseline(&dir, bits, "-c") else { return };
        objs.push(o);
    }
    let cdir = dir.join("c");
    std::fs::create_dir_all(&cdir).unwrap();
    let c = run_rtl(&run, &cdir, ["sha256_block_data_order_c", "sha512_block_data_order_c"], &objs);
    let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
    let mut table = String::from("| kernel | code | 1 block | 4 blocks | vs C (4 blocks) |\n|---|---|---:|---:|---:|\n");
    let cpb = |rows: &[(String, u64, f64)], k: usize, block: usize| (rows[2 * k].2 / block as f64, rows[2 * k + 1].2 / (4 * block) as f64);
    for (k, (kernel, block, _)) in ALGS.into_iter().enumerate() {
        let (c1, c4) = cpb(&c, k, block);
        let _ = writeln!(table, "| {kernel} | OpenSSL 3.5.7 C (gcc -O3, rv64gc) | {c1:.2} | {c4:.2} | 1 |");
    }
    let mut kgen_c906_256 = (0.0, 0.0);
    // The C906 has no Zbb: rv64gc-zbb cannot run on it.
    for v in ["c906", "rv64gc"] {
        let vdir = dir.join(v);
        std::fs::create_dir_all(&vdir).unwrap();
        let mut files = Vec::new();
        let mut fns = Vec::new();
        for (kernel, _, _) in ALGS {
            let m = module(kernel, v);
            let p = vdir.join(format!("{kernel}-{v}.S"));
            std::fs::write(&p, kgen_emit::openssl_s(&m, &o).unwrap()).unwrap();
            files.push(p);
            fns.push(m.funcs[0].func.name.clone());
        }
        let r = run_rtl(&run, &vdir, [&fns[0], &fns[1]], &files);
        for (k, (kernel, block, _)) in ALGS.into_iter().enumerate() {
            let (k1, k4) = cpb(&r, k, block);
            let (c1, c4) = cpb(&c, k, block);
            let _ = writeln!(table, "| {kernel} | kgen {v} | {k1:.2} | {k4:.2} | {:.3} |", k4 / c4);
            if v == "c906" && k == 0 {
                kgen_c906_256 = (k1, k4);
            }
            if v == "c906" {
                assert!(k1 <= 0.6 * c1 && k4 <= 0.6 * c4, "{kernel} c906 on the RTL: {k1:.2}/{k4:.2} c/B against C {c1:.2}/{c4:.2}: above 0.6");
            }
        }
    }
    // OpenSSL 3.6's plain rv64 SHA-256 (what a C906 runs there without kgen), beside
    // SHA-512's C (3.6 has Zbb assembly only).
    let udir = dir.join("openssl-3.6.3");
    std::fs::create_dir_all(&udir).unwrap();
    let (_, _, suffix, _, script, flavour) = UPSTREAM_36[0];
    let Some(s256) = upstream_36(&udir, script, flavour, "sha256-riscv64.S") else { return };
    let u = run_rtl(&run, &udir, [&format!("sha256_block_data_order_{suffix}"), "sha512_block_data_order_c"], &[s256, objs[1].clone()]);
    let (u1, u4) = cpb(&u, 0, 64);
    let _ = writeln!(table, "| sha256 | OpenSSL 3.6.3 `sha256_block_data_order_riscv64` | {u1:.2} | {u4:.2} | {:.3} |", u4 / cpb(&c, 0, 64).1);
    println!("C906 RTL (openc906, warm), cycles per byte:\n{table}");
    assert!(kgen_c906_256.0 < u1 && kgen_c906_256.1 < u4, "kgen c906 SHA-256 on the RTL ({:.2}/{:.2}) is not faster than OpenSSL 3.6.3's rv64 code ({u1:.2}/{u4:.2})", kgen_c906_256.0, kgen_c906_256.1);
}

/// Go 1.27's own riscv64 block functions (crypto/internal/fips140/sha256 and sha512, plain
/// rv64: rotations by two shifts and an or), which the Go series keeps for cores without
/// the T-Head extensions and runs kgen's c906 variant before on T-Head cores: on the model
/// kgen's must be faster. Go's file is assembled by Go's assembler (Go 1.23's, which does not
/// compress instructions; the sources are Go 1.27's); its machine code runs behind a
/// psABI trampoline that writes ABI0's arguments (dig, p's base, length and capacity) and
/// points `g` at a zero stack guard.
#[test]
fn model_against_go_1_27_assembly() {
    let (Some(go), Some(go127)) = (oracle::go(), oracle::go_1_27()) else { return };
    let fips = go127.program.parent().unwrap().parent().unwrap().join("src/crypto/internal/fips140");
    let dir = oracle::scratch("sha2_baseline_go");
    let mut table = String::from("| kernel | code | 1 block | 4 blocks |\n|---|---|---:|---:|\n");
    for (kernel, block, bits) in ALGS {
        let pkg = format!("crypto/internal/fips140/sha{bits}");
        let src = std::fs::read_to_string(fips.join(format!("sha{bits}/sha{bits}block_riscv64.s"))).unwrap();
        let syms = common::parse_go_listing(&common::go_tool_asm(&go, &dir, &src, &pkg), &pkg);
        let (code, rel) = syms.get("block").expect("block in Go's listing");
        let name = format!("sha{bits}_block_data_order_go");
        // (ctx, in, num) as block's (dig, p's base, length, capacity).
        let mut s = common::abi0_trampoline(&name, "go_block", &format!("\tslli a2, a2, {}\n", block.trailing_zeros()), ["a0", "a1", "a2", "a2"]);
        s.push_str(&common::go_code_as_text(code, rel, "go_K"));
        let kb = if bits == 256 { kgen_kernels::sha2::A256.k_bytes() } else { kgen_kernels::sha2::A512.k_bytes() };
        s.push_str("\t.section .rodata\n\t.p2align 3\ngo_K:\n");
        for b in kb.chunks(8) {
            let _ = writeln!(s, "\t.dword {:#x}", u64::from_le_bytes(b.try_into().unwrap()));
        }
        let t = kgen_dsl::target::target("rv64gc").unwrap();
        let asm = kgen_dsl::asmfile::assemble_file(&s, &t).unwrap_or_else(|e| panic!("Go's sha{bits} block as words: {e}"));
        // What is measured computes SHA-2: three blocks from one state as kgen's c906.
        let m = module(kernel, "c906");
        let state: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37)).collect();
        let msg: Vec<u8> = (0..3 * block).map(|i| (i * 7 + 1) as u8).collect();
        let mut digests = Vec::new();
        for (obj, tg, sym) in [(asm.object.clone(), t.clone(), name.clone()), (m.object().unwrap(), m.target.clone(), format!("sha{bits}_block_data_order_c906"))] {
            let mut e = kgen_sim::Env::new(&obj, &tg).unwrap();
            let (st, p) = (e.buffer(&state, 0, true), e.buffer(&msg, 0, false));
            e.call(e.sym(&sym), &[st, p, 3]).unwrap_or_else(|err| panic!("{sym}: {err}"));
            digests.push(e.read(st, if bits == 256 { 32 } else { 64 }));
        }
        assert_eq!(digests[0], digests[1], "Go's sha{bits} block and kgen's c906 disagree");
        let sizes = [block, 4 * block];
        let up = kgen_harness::bench::bench_object(kgen_kernels::kernel(kernel).unwrap(), "go", &asm.object, &t, &sizes).unwrap();
        assert_eq!(up[0].what, name, "the driver measured Go's function");
        let (u1, u4) = model_cpb(&up);
        let rows = kgen_harness::bench::bench_object(kgen_kernels::kernel(kernel).unwrap(), "c906", &m.object().unwrap(), &m.target, &sizes).unwrap();
        let (k1, k4) = model_cpb(&rows);
        let _ = writeln!(table, "| {kernel} | kgen c906 | {k1:.2} | {k4:.2} |");
        let _ = writeln!(table, "| {kernel} | Go 1.27.4 `block` (sha{bits}block_riscv64.s, rv64gc) | {u1:.2} | {u4:.2} |");
        assert!(k1 < u1 && k4 < u4, "{kernel}: kgen c906 {k1:.2}/{k4:.2} c/B is not faster than Go 1.27's own {u1:.2}/{u4:.2}, which the Go series puts it before");
    }
    println!("C906 model, cycles per byte:\n{table}");
}
