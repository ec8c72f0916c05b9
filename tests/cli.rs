//! The CLI's errors: one line naming what was wrong, a non-zero exit, never a panic.

fn kgen(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kgen")).args(args).output().unwrap()
}

/// A scratch directory with a small assembly file (`f(a0)` returns a0 + 1) and a file that
/// is not a directory.
fn scratch() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kgen-cli-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("notgoldens")).unwrap();
    std::fs::write(dir.join("f.s"), ".text\n.globl f\nf:\n\taddi a0, a0, 1\n\tret\n").unwrap();
    std::fs::write(dir.join("file"), "x").unwrap();
    std::fs::write(dir.join("notgoldens/keep.txt"), "a user's file").unwrap();
    dir
}

/// Every contradictory or meaningless combination of arguments: one error line naming the
/// problem, exit status 2, nothing on standard output (no work done), never a panic.
#[test]
fn bad_input_is_one_clear_line() {
    let dir = scratch();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (f, file, notgoldens) = (p("f.s"), p("file"), p("notgoldens"));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["emit", "nosuch", "--variant", "c906"], "unknown kernel `nosuch`"),
        (vec!["emit", "aes", "--variant", "nope"], "kernel `aes` has no variant `nope`"),
        (vec!["emit", "aes", "--target", "rv64gcv"], "no variant for target `rv64gcv`"),
        (vec!["emit", "aes", "--target", "nosuch"], "unknown target `nosuch`"),
        (vec!["emit", "aes", "--variant", "c906", "--target", "rv64gc"], "built for target `c906`, not `rv64gc`"),
        (vec!["emit", "aes"], "give --variant or --target"),
        (vec!["emit", "aes", "--variant", "c906", "--abi", "linux"], "not available for the linux ABI"),
        (vec!["emit", "aes", "--variant", "c906", "--abi", "nosuch"], "unknown ABI `nosuch`"),
        (vec!["emit", "aes", "--variant", "c906", "--format", "xyz"], "unknown format `xyz`"),
        (vec!["emit", "aes", "--variant", "c906", "--abi", "go", "-o", "aes.s"], "-o names a directory"),
        (vec!["emit", "aes", "--variant", "c906", "--abi", "go"], "give -o DIR"),
        (vec!["emit", "aes", "--variant", "c906", "--abi", "go", "-o", &file], "exists and is not a directory"),
        (vec!["emit", "aes", "--variant", "c906", "--format", "o"], "give -o PATH"),
        (vec!["emit", "aes", "--variant", "c906", "--format", "o", "-o", "x.o", "--asm-compat", "binutils-2.40"], "--asm-compat applies"),
        (vec!["emit", "aes", "--variant", "c906", "--asm-compat", "binutils-9"], "unknown --asm-compat"),
        (vec!["emit", "aes", "--variant", "c906", "-o", "/nonexistent/dir/aes.S"], "does not exist"),
        (vec!["all", "--out", &file], "exists and is not a directory"),
        (vec!["check", "nosuch"], "unknown kernel `nosuch`"),
        (vec!["bench", "nosuch"], "unknown kernel `nosuch`"),
        (vec!["bench", "aes", "--sizes", "0"], "at least 1 byte"),
        (vec!["bench", "aes", "--sizes", "16,x"], "`x` is not a byte count"),
        (vec!["bench", "aes", "--sizes", "999999999999"], "at most"),
        (vec!["bench", "aes", "--abi", "nosuch"], "unknown ABI `nosuch`"),
        (vec!["bench", "aes-gcm", "--abi", "go"], "no benchmark driver for the go ABI"),
        (vec!["bench", "aes", "--abi", "linux"], "no benchmark driver for the linux ABI"),
        (vec!["bench", "--rtl", "--abi", "linux"], "not --abi linux"),
        (vec!["bench", "aes", "--csv", "/nonexistent/dir/x.csv"], "does not exist"),
        (vec!["bench", "aes", "--json", &notgoldens], "is a directory"),
        (vec!["bench", "aes", "--plot", "/nonexistent/x.svg"], "does not exist"),
        (vec!["bench", "aes", "--target", "rv64gc"], "--target applies to --asm files"),
        (vec!["bench", "aes", "--max-steps", "10"], "--max-steps applies to --asm files"),
        (vec!["bench", "--call", "f()"], "--call applies to --asm files"),
        (vec!["bench", "aes", "--repeat", "3"], "--repeat applies to --call"),
        (vec!["bench", "aes", "--bytes", "16"], "--bytes applies to --call"),
        (vec!["bench", "aes", "--abi", "go", "--asm", &f], "does not combine with --abi go"),
        (vec!["bench", "--rtl", "--asm", &f, "--call", "f(1)"], "--rtl measures"),
        (vec!["bench", "--rtl", "--abi", "go"], "--rtl measures"),
        (vec!["bench", "aes", "--asm", &f, "--call", "f(1)"], "a kernel name does not combine"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--sizes", "16"], "--sizes is for kernels' benchmarks"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--repeat", "0"], "--repeat is at least 1"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--max-steps", "0"], "--max-steps is at least 1"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--call", "f(2)", "--bytes", "5"], "once per call"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--bytes", "0"], "--bytes is at least 1"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--bytes", "4", "--bytes-from", "a0"], "not both"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--bytes-from", "a3"], "has 1 arguments"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--bytes-from", "x9"], "a0 to a7"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--ext", "nosuch"], "unknown extension `nosuch`"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--ext", "v"], "other vector dialect"),
        (vec!["bench", "--asm", &f, "--call", "f(1)", "--target", "nosuch"], "unknown target `nosuch`"),
        (vec!["bench", "--asm", &f, "--call", "f(1"], "missing `)`"),
        (vec!["bench", "--asm", &f, "--asm", &f], "need --call"),
        (vec!["bench", "--asm", &f], "needs the kernel"),
        (vec!["bench", "aes", "--asm", "/nonexistent.S", "--target", "c906"], "/nonexistent.S"),
        (vec!["jit-run", "nosuch"], "unknown kernel `nosuch`"),
        (vec!["jit-run", "aes", "--variant", "nope"], "kernel `aes` has no variant `nope`"),
        (vec!["jit-bench", "aes", "--runs", "0"], "--runs is at least 1"),
        (vec!["jit-bench", "aes", "--variant", "nope"], "has no variant `nope`"),
        (vec!["go-patches", "--base", "x-crypto-9.9.9", "--out", "/tmp/kgen-cli-never"], "unknown --base `x-crypto-9.9.9`"),
        (vec!["go-patches", "--base", "x-crypto-0.25.0", "--out", &file], "exists and is not a directory"),
        (vec!["isa", "--ext", "nosuch"], "unknown extension `nosuch`"),
        (vec!["openssl-patches", "--base", "3.4.0", "--out", "/nonexistent/out"], "unknown --base `3.4.0`"),
        (vec!["openssl-patches", "--base", "3.5.7", "--src", "/nonexistent", "--out", "/nonexistent/out"], "not an OpenSSL source tree"),
        (vec!["openssl-patches", "--base", "3.5.7", "--out", &file], "exists and is not a directory"),
        (vec!["goldens", "--dir", &notgoldens], "is not a goldens tree"),
        (vec!["goldens", "--dir", &notgoldens, "--bless"], "refusing to bless"),
        (vec!["goldens", "--dir", &file, "--bless"], "refusing to bless"),
    ];
    for (args, want) in &cases {
        let o = kgen(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "kgen {args:?} must exit 2: {err}");
        assert!(o.stdout.is_empty(), "kgen {args:?} did work before the error: {}", String::from_utf8_lossy(&o.stdout));
        assert!(!err.contains("panicked"), "kgen {args:?} panicked: {err}");
        let line = err.lines().find(|l| l.starts_with("kgen: error: ")).unwrap_or_else(|| panic!("kgen {args:?}: no error line in {err:?}"));
        assert!(line.contains(want), "kgen {args:?}: {line:?} should mention {want:?}");
        assert_eq!(err.lines().filter(|l| !l.trim().is_empty()).count(), 1, "kgen {args:?}: one line, got {err:?}");
    }
    // The refused bless left the user's directory as it was.
    assert_eq!(std::fs::read_dir(&notgoldens).unwrap().count(), 1);
    // The controls: the same commands with sound arguments succeed.
    for args in [
        vec!["emit", "aes", "--variant", "c906", "--target", "c906", "--format", "h"],
        vec!["bench", "--asm", &f, "--call", "f(100)", "--bytes-from", "a0"],
        vec!["bench", "aes", "--sizes", "16"],
    ] {
        let o = kgen(&args);
        assert!(o.status.success(), "kgen {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let o = kgen(&["bench", "--asm", &f, "--call", "f(100)", "--bytes-from", "a0"]);
    let row = String::from_utf8_lossy(&o.stdout).lines().nth(1).unwrap().to_string();
    assert_eq!(row.split_whitespace().nth(3), Some("100"), "bytes from a0: {row}");
    // A failed check (not a usage error) exits 1.
    let o = kgen(&["jit-run", "ghash", "--variant", "rv64gc", "--sim", "--flip-byte", "0"]);
    assert_eq!(o.status.code(), Some(1));
    // Go's two files go into a directory -o names (created), and the command says where.
    let out = dir.join("go-out");
    let o = kgen(&["emit", "chacha20", "--variant", "rv64gc", "--abi", "go", "-o", out.to_str().unwrap()]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).matches("wrote ").count() == 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 2);
}

#[test]
fn an_assembly_file_with_a_bad_line_names_the_line() {
    let dir = scratch();
    for (name, pre) in [("bad.s", ""), ("bad.S", "#include <nothing-needed>\n")] {
        let f = dir.join(name);
        // In a .S file the preprocessor's output starts with line markers: the line is
        // still the source's fourth (after the #include, the fifth).
        let text = format!("{}.text\n.globl AES_encrypt\nAES_encrypt:\n\taddi a0, a0, 5000\n\tret\n", pre.replace("#include <nothing-needed>", "#define FIVE_THOUSAND 5000"));
        std::fs::write(&f, text).unwrap();
        let o = kgen(&["bench", "aes", "--asm", f.to_str().unwrap(), "--target", "c906"]);
        let err = String::from_utf8_lossy(&o.stderr);
        let line = if pre.is_empty() { "line 4" } else { "line 5" };
        assert!(!o.status.success() && err.contains(line) && err.contains(name) && !err.contains("panicked"), "{name}: {err}");
    }
}

/// A call that never returns stops at its step limit with a message that says so; the
/// limit scales with the buffers and `--max-steps` sets it.
#[test]
fn a_call_that_does_not_return_says_so() {
    let dir = scratch();
    let f = dir.join("spin.s");
    std::fs::write(&f, ".text\n.globl spin\nspin:\n\tj spin\n").unwrap();
    let f = f.to_str().unwrap();
    for (extra, limit) in [(vec![], kgen_harness::asmcall::default_steps(64)), (vec!["--max-steps", "5000"], 5000)] {
        let mut args = vec!["bench", "--asm", f, "--call", "spin(buf:64)"];
        args.extend(extra);
        let o = kgen(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("spin") && err.contains(&format!("did not return within {limit} instructions")) && !err.contains("``"), "{err}");
    }
}

/// `kgen bench --abi go`: the Go entry points (Go names) with modeled cycles, including the
/// x/crypto port's poly1305 macState function, which differs from the context form by the
/// s values it computes instead of loading (3 loads become 3·3 instructions: +6 per call),
/// and the stitched chacha20-poly1305's macState forms.
/// (instructions, cycles) of the `kgen bench` row measuring `name`.
fn bench_row(out: &str, name: &str) -> (u64, u64) {
    let l = out.lines().find(|l| l.split_whitespace().nth(2) == Some(name)).unwrap_or_else(|| panic!("no {name} row:\n{out}"));
    let f: Vec<&str> = l.split_whitespace().collect();
    (f[4].parse().unwrap(), f[5].parse().unwrap())
}

#[test]
fn bench_shows_the_go_entry_points() {
    let o = kgen(&["bench", "poly1305", "--abi", "go", "--sizes", "1024"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = |name: &str| bench_row(&out, name);
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
    let row = |name: &str| bench_row(&out, name);
    for (ctx, ms) in [("chacha20Poly1305SealC906", "chacha20Poly1305SealMacstateC906"), ("chacha20Poly1305OpenC906", "chacha20Poly1305OpenMacstateC906")] {
        let ((ctx_i, ctx_c), (ms_i, ms_c)) = (row(ctx), row(ms));
        assert_eq!(ms_i, ctx_i + 7, "{out}");
        assert!(ms_c > ctx_c && ctx_c > 10_000, "{out}");
    }
}

/// `--abi linux` measures the Linux forms: every aes-ct variant's six functions, and the
/// same counter-mode work as the OpenSSL form (the context's round count and the argument
/// order differ: within 1% of its instructions).
#[test]
fn bench_shows_the_linux_entry_points() {
    let o = kgen(&["bench", "aes-ct", "--abi", "linux", "--sizes", "1024"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = |name: &str| bench_row(&out, name);
    for v in ["c906", "c906_novector", "rv64gc", "rv64gc_zbb"] {
        for f in ["encrypt", "decrypt", "ctr32", "ecb_encrypt", "ecb_decrypt"] {
            let (i, c) = row(&format!("aes_ct_{f}_{v}"));
            assert!(i > 1000 && c >= i, "{f} {v}: {out}");
        }
    }
    let o = kgen(&["bench", "aes-ct", "--sizes", "1024"]);
    let ssl = String::from_utf8_lossy(&o.stdout);
    let ssl_ctr = ssl.lines().find(|l| l.split_whitespace().nth(1) == Some("c906") && l.split_whitespace().nth(2) == Some("AES_ctr32_encrypt")).unwrap_or_else(|| panic!("{ssl}"));
    let ssl_i: u64 = ssl_ctr.split_whitespace().nth(4).unwrap().parse().unwrap();
    let (lin_i, _) = row("aes_ct_ctr32_c906");
    assert!(lin_i.abs_diff(ssl_i) * 100 <= ssl_i, "linux {lin_i} against openssl {ssl_i} instructions");
}
