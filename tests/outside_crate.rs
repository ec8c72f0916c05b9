//! A kernel in a crate of its own (examples/siphash: path dependencies on kgen, kgen-dsl and
//! kgen-macros, not a member of kgen's workspace) gets every command from
//! `kgen::cli::run`: the test builds it and runs its `list`, `emit`, `all`, `check`,
//! `bench` and `jit-run` from its own directory, and checks what they print and write.

use kgen_harness::oracle::{self, Binutils};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn example() -> PathBuf {
    oracle::repo_root().join("examples/siphash")
}

/// Builds the example's binary (its own target directory under kgen's), once.
fn binary() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let target = oracle::repo_root().join("target/example-siphash");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let o = Command::new(cargo)
            .args(["build", "--offline", "--quiet", "--manifest-path"])
            .arg(example().join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .output()
            .expect("cargo runs");
        assert!(o.status.success(), "building examples/siphash failed:\n{}", String::from_utf8_lossy(&o.stderr));
        target.join("debug/kgen-siphash")
    })
}

fn run(args: &[&str]) -> Output {
    Command::new(binary()).args(args).current_dir(example()).output().unwrap()
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "kgen-siphash {args:?}: {}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_outside_crate_gets_every_command() {
    let list = ok(&["list"]);
    assert!(list.contains("siphash") && list.contains("rv64gc-zbb") && !list.contains("chacha20"), "{list}");

    // emit: the .S of one variant, its header with the 64-bit result, the Go pair.
    let s = ok(&["emit", "siphash", "--variant", "c906"]);
    assert!(s.contains(".globl\tsiphash24_c906") && s.contains("th.srri"), "{s}");
    let h = ok(&["emit", "siphash", "--variant", "rv64gc", "--format", "h"]);
    assert!(h.contains("uint64_t siphash24_rv64gc(const unsigned char key[16], const unsigned char *in, size_t len);") && h.contains("#include <stdint.h>"), "{h}");
    let out = oracle::scratch("outside-crate");
    let go = out.join("go");
    ok(&["emit", "siphash", "--variant", "rv64gc", "--abi", "go", "-o", go.to_str().unwrap()]);
    let decl = std::fs::read_to_string(go.join("siphash_rv64gc_riscv64.go")).unwrap();
    assert!(decl.contains("package siphash") && decl.contains("func siphash24Rv64gc(key *byte, in *byte, len uint64) uint64"), "{decl}");

    // all: every output of the crate's kernel, and nothing of kgen's own.
    let all = out.join("all");
    let text = ok(&["all", "--out", all.to_str().unwrap()]);
    assert!(text.contains("outputs,") && !text.contains("aes"), "{text}");
    let s_files: Vec<PathBuf> = walk(&all).into_iter().filter(|p| p.extension().is_some_and(|e| e == "S")).collect();
    assert_eq!(s_files.len(), 3, "{s_files:?}");
    // The files assemble with GNU as.
    if let Some(asm) = oracle::assembler(Binutils::V2_44) {
        for f in &s_files {
            let o = asm.command().args(["-march=rv64gc_zbb_xtheadbb_xtheadba_xtheadmac_xtheadmemidx_xtheadcondmov_xtheadbs_xtheadmempair_xtheadsync", "-o", "/dev/null"]).arg(f).output().unwrap();
            assert!(o.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        }
    }

    // check: every variant and ABI passes, with the report.
    let check = ok(&["check"]);
    assert_eq!(check.matches("== siphash").count(), 6, "{check}");
    assert!(check.contains("constant time (branches, addresses, divisions)"), "{check}");

    // bench: the crate's own driver, rows per variant and size.
    let bench = ok(&["bench", "--sizes", "64,1024"]);
    for v in ["siphash24_c906", "siphash24_rv64gc_zbb", "siphash24_rv64gc"] {
        assert_eq!(bench.lines().filter(|l| l.split_whitespace().nth(2) == Some(v)).count(), 2, "{v}:\n{bench}");
    }

    // jit-run: the known answers (returned in a0) on every variant; a flipped byte fails.
    let jit = ok(&["jit-run", "siphash", "--sim"]);
    assert_eq!(jit.matches("42/42 checks match").count(), 3, "{jit}");
    let o = run(&["jit-run", "siphash", "--variant", "rv64gc", "--sim", "--flip-byte", "8"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));

    // The series need kernels that fill OpenSSL's or x/crypto's slots; siphash fills none:
    // exit 1, one line, nothing written.
    let none = out.join("series");
    for (args, says) in [
        (["openssl-patches", "--base", "3.5.7"], "none of the kernels (siphash) fills an OpenSSL slot"),
        (["go-patches", "--base", "x-crypto-0.25.0"], "no kernel fills x/crypto's ChaCha20 slot"),
        (["go-patches", "--base", "go-1.27.4"], "no kernel fills Go's Aes slot"),
    ] {
        let o = run(&[args[0], args[1], args[2], "--out", none.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says) && err.lines().count() == 1, "{args:?}: {err}");
        assert!(!none.exists(), "{args:?} wrote {}", none.display());
    }

    // A kernel of kgen's is not this tool's: one error line.
    let o = run(&["emit", "aes", "--variant", "c906"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown kernel `aes` (kernels: siphash)"));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
