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
//! choice stands only if 32-rv64gc is the faster at 1 KiB and 16 KiB. The same for
//! golang.org/x/crypto v0.58.0's own riscv64 assembly, run from the machine code Go's
//! assembler makes of it.

mod common;

use kgen_harness::oracle;
use kgen_dsl::Abi;
use rand::{Rng, SeedableRng};
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

/// kgen's `poly1305_blocks` of each of `variants` at [`SIZES`] on the model, a table row
/// each; the first variant's cycles per byte.
fn kgen_rows(table: &mut String, variants: [&str; 2]) -> Vec<f64> {
    let kernel = kgen_kernels::kernel("poly1305").unwrap();
    let mut first = Vec::new();
    for v in variants {
        let m = kernel.variant(v).unwrap().build(Abi::Psabi).unwrap();
        let rows = kgen_harness::bench::bench_object(kernel, v, &m.object().unwrap(), &m.target, &SIZES).unwrap();
        let k: Vec<f64> = rows.iter().map(|r| r.cpb()).collect();
        let _ = writeln!(table, "| kgen {v}, poly1305_blocks | {:.2} | {:.2} |", k[0], k[1]);
        if first.is_empty() {
            first = k;
        }
    }
    first
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
    let kgen32 = kgen_rows(&mut table, ["32-rv64gc", "64-rv64gc"]);
    println!("C906 model, cycles per byte:\n{table}");
    for (i, n) in SIZES.iter().enumerate() {
        assert!(kgen32[i] < c[i], "at {n} B kgen's 32-rv64gc ({:.2} c/B) is not faster than OpenSSL's C ({:.2}): the series should keep upstream's C there", kgen32[i], c[i]);
    }
}

/// x/crypto v0.58.0's own riscv64 Poly1305 (`internal/poly1305/sum_riscv64.s`: base 2^64,
/// 64-bit `MUL`/`MULHU`), the code a series for that release weighs kgen's against. Go's
/// assembler (`go tool asm -S`, the oracle) gives the function's machine code, which runs
/// on the model as `.word`s behind a trampoline that lays the arguments out as Go's ABI0
/// does (from 8(SP); `update` is a leaf without a frame). The state is x/crypto's
/// `macState` with h2 small and r clamped, as in use. Printed beside kgen's 32-c906 and
/// 32-rv64gc `poly1305_blocks`. Asserted: the update hashed the message (at least one
/// instruction a byte); it takes the C906's long multiplies, so its time there depends on
/// the data; and kgen's 32-c906 is faster on the C906 model.
#[test]
fn x_crypto_0_58_riscv64_assembly_on_the_model() {
    let Some(go) = oracle::go() else { return };
    let Some(xc) = common::x_crypto_0_58() else { return };
    let src = std::fs::read_to_string(xc.join("internal/poly1305/sum_riscv64.s")).unwrap();
    let dir = oracle::scratch("poly1305_baseline_xcrypto");
    let syms = common::parse_go_listing(&common::go_tool_asm(&go, &dir, &src, "poly1305"), "poly1305");
    let (code, rel) = syms.get("update").expect("update in Go's listing");
    assert!(rel.is_empty(), "update has relocations: {rel:?}");
    // The trampoline: (state, msg, len) as update's (state, msg's base, length, capacity).
    let mut s = common::abi0_trampoline("xc_update", "update", "", ["a0", "a1", "a2", "a2"]);
    s.push_str(&common::go_code_as_text(code, rel, ""));
    let t = kgen_dsl::target::target("rv64gc").unwrap();
    let asm = kgen_dsl::asmfile::assemble_file(&s, &t).unwrap_or_else(|e| panic!("x/crypto's update as words: {e}"));
    let mut e = kgen_sim::Env::new(&asm.object, &t).unwrap().with_cost_model();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(58);
    let mut up = Vec::new();
    let mut long = 0;
    for n in SIZES {
        let mut st = [0u64; 7];
        st[0] = rng.random();
        st[1] = rng.random();
        st[2] = 1;
        st[3] = rng.random::<u64>() & 0x0fff_fffc_0fff_ffff;
        st[4] = rng.random::<u64>() & 0x0fff_fffc_0fff_fffc;
        let bytes: Vec<u8> = st.iter().flat_map(|w| w.to_le_bytes()).collect();
        let state = e.buffer(&bytes, 0, true);
        let msg: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        let m = e.buffer(&msg, 0, false);
        let o = e.call(e.sym("xc_update"), &[state, m, n as u64]).unwrap();
        assert!(o.instructions as usize >= n, "x/crypto's update of {n} bytes ran only {} instructions", o.instructions);
        long += o.long_muls;
        up.push(o.cycles as f64 / n as f64);
    }
    let mut table = String::from("| code | 1024 B | 16384 B |\n|---|---:|---:|\n");
    let _ = writeln!(table, "| x/crypto v0.58.0 `update` (sum_riscv64.s) | {:.2} | {:.2} |", up[0], up[1]);
    let c906 = kgen_rows(&mut table, ["32-c906", "32-rv64gc"]);
    println!("C906 model, cycles per byte:\n{table}x/crypto's update took {long} long (6-cycle) multiplies on the C906 model");
    assert!(long > 0, "x/crypto's 64-bit multiplies all took the C906's short path");
    for (i, n) in SIZES.iter().enumerate() {
        assert!(c906[i] < up[i], "at {n} B kgen's 32-c906 ({:.2} c/B) is not faster than x/crypto's riscv64 assembly ({:.2})", c906[i], up[i]);
    }
}
