//! Poly1305 on a riscv64 core without the T-Head extensions: the OpenSSL series (patch
//! "Poly1305 from kgen") runs kgen's base-2^32 `32-rv64gc` there, because under
//! `POLY1305_ASM` upstream's C is compiled out. This test is the measurement behind that
//! choice: OpenSSL 3.5.7's own crypto/poly1305/poly1305.c (its base-2^64 C, `u128`
//! products), compiled with the cross gcc at -O3 for rv64gc as OpenSSL's riscv64 build
//! compiles it today, timed on kgen's C906 model with the same calls OpenSSL makes
//! (`Poly1305_Init`, then `Poly1305_Update` over whole blocks), beside kgen's 32-rv64gc and
//! 64-rv64gc `poly1305_blocks` (the blocks are all an update of whole blocks does). The
//! file is test input, compiled from `.toolchain/openssl-3.5.7` as it is with stub headers
//! for what OpenSSL's build generates; nothing of it is copied into kgen. The series'
//! choice stands only if 32-rv64gc is the faster at 1 KiB and 16 KiB.

mod common;

use kgen_harness::oracle;
use kgen_dsl::Abi;
use std::fmt::Write as _;

/// OpenSSL's file and the helpers it calls.
const WRAPPER: &str = "#include \"crypto/poly1305/poly1305.c\"\n\
     void OPENSSL_cleanse(void *p, size_t n) { volatile unsigned char *a = p; while (n--) *a++ = 0; }\n\
     void *memcpy(void *d, const void *s, size_t n) { unsigned char *a = d; const unsigned char *b = s; while (n--) *a++ = *b++; return d; }\n\
     void *memset(void *d, int c, size_t n) { unsigned char *a = d; while (n--) *a++ = (unsigned char)c; return d; }\n";

const SIZES: [usize; 2] = [1024, 16384];

fn compile_openssl_c(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let flags: Vec<String> = ["-O3", "-march=rv64gc", "-mabi=lp64d", "-ffreestanding", "-fno-section-anchors", "-fno-tree-loop-distribute-patterns"].iter().map(|s| s.to_string()).collect();
    common::compile_openssl_c(dir, "openssl-poly1305", WRAPPER, &flags, "-S")
}

#[test]
fn kgen_32_rv64gc_is_faster_than_openssl_c_on_the_model() {
    let dir = oracle::scratch("poly1305_baseline");
    let Some(s) = compile_openssl_c(&dir) else { return };
    let t = kgen_dsl::target::target("rv64gc").unwrap();
    let asm = kgen_dsl::asmfile::assemble_file(&std::fs::read_to_string(&s).unwrap(), &t).unwrap_or_else(|e| panic!("{}: {e}", s.display()));
    let mut table = String::from("| code | 1024 B | 16384 B |\n|---|---:|---:|\n");
    // OpenSSL's C: Poly1305_Init, then one Poly1305_Update of the whole message (measured).
    let mut c = Vec::new();
    for n in SIZES {
        let calls = [
            kgen_harness::asmcall::parse_call("Poly1305_Init(buf:256:zero:name=ctx, buf:32)").unwrap(),
            kgen_harness::asmcall::parse_call(&format!("Poly1305_Update(@ctx, buf:{n}, {n})")).unwrap(),
        ];
        let bytes = [kgen_harness::asmcall::BytesFrom::Fixed(n), kgen_harness::asmcall::BytesFrom::Fixed(n)];
        let rows = kgen_harness::asmcall::bench_calls("openssl-c", &asm.object, &t, &calls, &bytes, &Default::default()).unwrap();
        let upd = rows.iter().find(|r| r.what.starts_with("Poly1305_Update")).unwrap_or_else(|| panic!("no Poly1305_Update row: {rows:?}"));
        assert_eq!(upd.bytes, n, "{rows:?}");
        // Control: the update hashed the message (an early return would take a few dozen
        // instructions, not one or more a byte).
        assert!(upd.instructions as usize >= n, "Poly1305_Update of {n} bytes ran only {} instructions", upd.instructions);
        c.push(upd.cpb());
    }
    let _ = writeln!(table, "| OpenSSL 3.5.7 C (gcc -O3, rv64gc), Poly1305_Update | {:.2} | {:.2} |", c[0], c[1]);
    let mut kgen32 = Vec::new();
    for v in ["32-rv64gc", "64-rv64gc"] {
        let m = kgen_kernels::kernel("poly1305").unwrap().variant(v).unwrap().build(Abi::Psabi).unwrap();
        let rows = kgen_harness::bench::bench_object(kgen_kernels::kernel("poly1305").unwrap(), v, &m.object().unwrap(), &m.target, &SIZES).unwrap();
        let k: Vec<f64> = rows.iter().map(|r| r.cpb()).collect();
        let _ = writeln!(table, "| kgen {v}, poly1305_blocks | {:.2} | {:.2} |", k[0], k[1]);
        if v == "32-rv64gc" {
            kgen32 = k;
        }
    }
    println!("C906 model, cycles per byte:\n{table}");
    for (i, n) in SIZES.iter().enumerate() {
        assert!(kgen32[i] < c[i], "at {n} B kgen's 32-rv64gc ({:.2} c/B) is not faster than OpenSSL's C ({:.2}): the series should keep upstream's C there", kgen32[i], c[i]);
    }
}
