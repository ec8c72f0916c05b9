//! kgen on the device: the riscv64 build of kgen (`scripts/build-riscv64.sh`) runs under
//! qemu-riscv64 as it would on a board. `kgen jit-run` builds each variant there, maps it
//! into a dynasmrt buffer (written, then made read+execute: never both), calls it natively
//! through the psABI and checks the known answers: upstream QEMU `-cpu thead-c906` for the
//! C906 scalar variants, T-Head's QEMU `-cpu c906fdv` for the XTheadVector ones, `-cpu rv64`
//! (with the extensions each standard variant needs) for the others. Negative controls: a
//! flipped byte in the buffer fails, and a C906 variant on a plain rv64 CPU dies of SIGILL.
//! `kgen jit-bench` prints the model's and the counter's columns (under QEMU the counter's
//! figures mean nothing; only that both are printed is checked).

use kgen_harness::oracle::{self, Tool};
use kgen_dsl::Abi;

mod common;

/// (QEMU, -cpu) for a variant's module, at its smallest VLEN.
fn cpu_for(kernel: &str, variant: &str) -> (Option<Tool>, String) {
    let m = kgen_kernels::kernel(kernel).unwrap().variant(variant).unwrap().build(Abi::Psabi).unwrap();
    let (q, cpu, _) = common::emulators(&m).into_iter().next().unwrap();
    (q, cpu)
}

fn run(q: &Tool, cpu: &str, kgen: &Tool, args: &[&str]) -> std::process::Output {
    q.command().args(["-cpu", cpu]).arg(&kgen.program).args(args).output().unwrap()
}

#[test]
fn jit_run_natively_under_qemu_for_every_variant() {
    let Some(kgen) = oracle::riscv64_kgen() else { return };
    let mut ran = 0;
    for k in kgen_kernels::kernels() {
        if k.kat.is_none() {
            continue; // no known-answer plan for this kernel
        }
        for v in k.variants {
            let (q, cpu) = cpu_for(k.name, v.name);
            let Some(q) = q else { return };
            let o = run(&q, &cpu, &kgen, &["jit-run", k.name, "--variant", v.name]);
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success(), "{} {} under -cpu {cpu}: {}\n{out}{}", k.name, v.name, o.status, String::from_utf8_lossy(&o.stderr));
            assert!(out.contains("path: native (called in this process on the riscv64 host)"), "{} {}: not native:\n{out}", k.name, v.name);
            assert!(out.lines().any(|l| l.trim().ends_with("checks match") && !l.contains("FAIL")), "{out}");
            ran += 1;
        }
    }
    assert!(ran >= 15, "{ran} variants ran natively");
}

#[test]
fn a_flipped_byte_or_a_missing_extension_fails_natively() {
    let Some(kgen) = oracle::riscv64_kgen() else { return };
    let Some(q) = oracle::qemu() else { return };
    // The first instruction of AES_set_encrypt_key's code changed: the known answers
    // (or the process) must fail.
    for flip in ["0x0", "0x40", "0x200"] {
        let o = run(&q, "thead-c906", &kgen, &["jit-run", "aes", "--variant", "c906", "--flip-byte", flip]);
        assert!(!o.status.success(), "aes c906 with byte {flip} flipped passed:\n{}", String::from_utf8_lossy(&o.stdout));
    }
    let o = run(&q, "rv64", &kgen, &["jit-run", "poly1305", "--variant", "32-c906"]);
    assert_eq!(o.status.code(), None, "a T-Head variant on -cpu rv64 must die of a signal, got {}", o.status);
    // The unmodified run passes (the controls are not failing for another reason).
    let o = run(&q, "thead-c906", &kgen, &["jit-run", "aes", "--variant", "c906"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn jit_bench_prints_the_model_and_the_counter() {
    let Some(kgen) = oracle::riscv64_kgen() else { return };
    let Some(q) = oracle::qemu() else { return };
    let o = run(&q, "thead-c906", &kgen, &["jit-bench", "poly1305", "--variant", "32-c906", "--sizes", "64,1024", "--runs", "3"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{out}{}", o.status, String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Vec<&str>> = out.lines().filter(|l| l.starts_with("poly1305_blocks")).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for r in &rows {
        // function, bytes, model c/B, measured c/B, ratio: numbers in every column.
        assert_eq!(r.len(), 5, "{out}");
        for x in &r[2..] {
            assert!(x.parse::<f64>().is_ok(), "`{x}` is not a figure:\n{out}");
        }
    }
    assert!(out.contains("counter: "), "{out}");
    // On this (x86-64) host: the model's column only, and why.
    let h = std::process::Command::new(env!("CARGO_BIN_EXE_kgen")).args(["jit-bench", "poly1305", "--variant", "32-c906", "--sizes", "64"]).output().unwrap();
    let hout = String::from_utf8_lossy(&h.stdout);
    assert!(h.status.success() && hout.contains("no hardware cycle counter available"), "{hout}");
    let row: Vec<&str> = hout.lines().find(|l| l.starts_with("poly1305_blocks")).expect("a row").split_whitespace().collect();
    assert!(row[2].parse::<f64>().is_ok() && row[3] == "–" && row[4] == "–", "{hout}");
}
