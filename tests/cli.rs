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
