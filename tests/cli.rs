//! The CLI's errors: one line naming what was wrong, a non-zero exit, never a panic.

fn kgen(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kgen")).args(args).output().unwrap()
}

#[test]
fn bad_input_is_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["emit", "nosuch", "--variant", "c906"], "unknown kernel `nosuch`"),
        (&["emit", "aes", "--variant", "nope"], "kernel `aes` has no variant `nope`"),
        (&["emit", "aes", "--target", "rv64gcv"], "no variant for target `rv64gcv`"),
        (&["emit", "aes", "--variant", "c906", "--abi", "linux"], "not available for the linux ABI"),
        (&["emit", "aes", "--variant", "c906", "--abi", "nosuch"], "nosuch"),
        (&["emit", "aes", "--variant", "c906", "--format", "xyz"], "xyz"),
        (&["bench", "nosuch"], "unknown kernel `nosuch`"),
        (&["check", "nosuch"], "unknown kernel `nosuch`"),
        (&["jit-run", "nosuch"], "unknown kernel `nosuch`"),
        (&["bench", "aes", "--asm", "/nonexistent.S", "--target", "c906"], "/nonexistent.S"),
        (&["bench", "aes", "--sizes", "16,x"], "bad size `x`"),
        (&["bench", "aes", "--abi", "nosuch"], "unknown ABI `nosuch`"),
        (&["go-patches", "--base", "x-crypto-9.9.9", "--out", "/tmp/kgen-cli-never"], "x-crypto-9.9.9"),
        (&["isa", "--ext", "nosuch"], "unknown extension `nosuch`"),
        (&["openssl-patches", "--base", "3.4.0", "--out", "/nonexistent/out"], "unknown --base `3.4.0`"),
        (&["openssl-patches", "--base", "3.5.7", "--src", "/nonexistent", "--out", "/nonexistent/out"], "/nonexistent/VERSION.dat"),
    ];
    for (args, want) in cases {
        let o = kgen(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "kgen {args:?} must fail");
        assert!(!err.contains("panicked"), "kgen {args:?} panicked: {err}");
        let line = err.lines().find(|l| l.starts_with("kgen: error: ")).unwrap_or_else(|| panic!("kgen {args:?}: no error line in {err:?}"));
        assert!(line.contains(want), "kgen {args:?}: {line:?} should mention {want:?}");
        assert_eq!(err.lines().filter(|l| !l.trim().is_empty()).count(), 1, "kgen {args:?}: one line, got {err:?}");
    }
}

#[test]
fn an_assembly_file_with_a_bad_line_names_the_line() {
    let dir = std::env::temp_dir().join(format!("kgen-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.S");
    std::fs::write(&f, ".text\n.globl AES_encrypt\nAES_encrypt:\n\taddi a0, a0, 5000\n\tret\n").unwrap();
    let o = kgen(&["bench", "aes", "--asm", f.to_str().unwrap(), "--target", "c906"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("line 4") && !err.contains("panicked"), "{err}");
}

/// `kgen bench --abi go`: the Go entry points (Go names) with modeled cycles, including the
/// x/crypto port's poly1305 macState function, which differs from the context form by the
/// s values it computes instead of loading (3 loads become 3·3 instructions: +6 per call),
/// and the stitched chacha20-poly1305's macState forms.
#[test]
fn bench_shows_the_go_entry_points() {
    let o = kgen(&["bench", "poly1305", "--abi", "go", "--sizes", "1024"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = |name: &str| -> (u64, u64) {
        let l = out.lines().find(|l| l.split_whitespace().nth(2) == Some(name)).unwrap_or_else(|| panic!("no {name} row:\n{out}"));
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[4].parse().unwrap(), f[5].parse().unwrap())
    };
    let (ctx_i, ctx_c) = row("poly1305Blocks32C906");
    let (ms_i, ms_c) = row("poly1305BlocksMacstate32C906");
    assert_eq!(ms_i, ctx_i + 6, "{out}");
    assert!(ms_c > ctx_c && ctx_c > 1000, "{out}");
    let o = kgen(&["bench", "chacha20", "--abi", "go", "--sizes", "256"]);
    let out = String::from_utf8_lossy(&o.stdout);
    for n in ["chaCha20Ctr32C906", "chaCha20Ctr32C906Novector"] {
        assert!(out.lines().any(|l| l.split_whitespace().nth(2) == Some(n)), "no {n}:\n{out}");
    }
    // The stitched kernel's macState forms (x/crypto's chacha20poly1305): the same 3 s
    // loads become 3·3 instructions, and the state pointer, now spilled, is loaded once
    // more: +7 per call.
    let o = kgen(&["bench", "chacha20-poly1305", "--abi", "go", "--sizes", "1024"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = |name: &str| -> (u64, u64) {
        let l = out.lines().find(|l| l.split_whitespace().nth(2) == Some(name)).unwrap_or_else(|| panic!("no {name} row:\n{out}"));
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[4].parse().unwrap(), f[5].parse().unwrap())
    };
    for (ctx, ms) in [("chacha20Poly1305SealC906", "chacha20Poly1305SealMacstateC906"), ("chacha20Poly1305OpenC906", "chacha20Poly1305OpenMacstateC906")] {
        let ((ctx_i, ctx_c), (ms_i, ms_c)) = (row(ctx), row(ms));
        assert_eq!(ms_i, ctx_i + 7, "{out}");
        assert!(ms_c > ctx_c && ctx_c > 10_000, "{out}");
    }
}
