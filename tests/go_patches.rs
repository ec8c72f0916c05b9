//! `kgen go-patches`: for each base, the series applies to a copy of Debian's golang.org/x/crypto
//! (v0.25.0 with Go 1.23; v0.58.0, which has riscv64 Poly1305 assembly of its own that the
//! series replaces, with Go 1.27),
//! the patched packages are gofmt-clean and `go vet` clean (asmdecl; riscv64 with and
//! without the `kgen_trace` tag, and amd64, whose build the series must not change), and
//! x/crypto's own tests pass for GOARCH=riscv64 under three CPUs, each on the path expected
//! for it, as the `kgen_trace` counters printed by the tests' TestMain prove:
//!
//! | QEMU | CPU | chacha20 | poly1305 | chacha20poly1305 |
//! |---|---|---|---|---|
//! | upstream 10 | `thead-c906` (hwprobe: T-Head, no XTheadVector) | c906-novector | 32-c906 | composed (sealGeneric/openGeneric) |
//! | T-Head 6.0 | `c906fdv` (no hwprobe; AT_HWCAP V) | c906 (vector lanes) | 32-c906 | stitched chacha20-poly1305 c906 (never composed) |
//! | upstream 10 | `rv64` | generic Go | 32-rv64gc | composed |
//!
//! Each prefix of the series builds. Negative controls (on each base): with one instruction of the
//! c906-novector kernel changed, x/crypto's chacha20 tests fail under `thead-c906`; with one
//! instruction of the stitched kernel's seal changed, x/crypto's chacha20poly1305 tests fail
//! under `c906fdv`. The series is the same bytes when generated twice. Go 1.27 builds run
//! under `c906fdv` with the collector off (`run_under` says why).

use kgen_harness::oracle::{self, Tool};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn kgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kgen")).args(args).output().unwrap()
}

fn ok(what: &str, o: Output) -> Output {
    assert!(o.status.success(), "{what} failed ({}):\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    o
}

fn go_cmd(go: &Tool, dir: &Path, arch: &str) -> Command {
    let mut c = go.command();
    // The build cache is shared with the other Go tests (std for riscv64 is built once).
    let cache = oracle::repo_root().join("target").join("kgen-scratch").join("go-cache");
    c.current_dir(dir)
        .env("GOARCH", arch)
        .env("GOOS", "linux")
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GOCACHE", &cache)
        .env("GOPATH", dir.join("gopath"));
    c
}

const PKGS: [&str; 4] = ["chacha20", "internal/poly1305", "poly1305", "chacha20poly1305"];

/// A copy of the packaged x/crypto with the series applied, and a driver module that takes
/// x/crypto (and x/sys) from there (as README.md's `replace` does).
fn patched_for(gover: &str, name: &str, crypto: &Path, sys: &Path, patches: &[PathBuf]) -> (PathBuf, PathBuf) {
    let root = oracle::scratch(name);
    let tree = root.join("x-crypto");
    let _ = std::fs::remove_dir_all(&tree);
    ok("cp", Command::new("cp").arg("-r").arg(crypto).arg(&tree).output().unwrap());
    for p in patches {
        // Outside any repository (the scratch directory is inside kgen's), as on a user's tree.
        let o = Command::new("git").current_dir(&tree).env("GIT_CEILING_DIRECTORIES", &root).args(["apply", "-v"]).arg(p).output().unwrap();
        ok(&format!("git apply {}", p.display()), o);
    }
    let driver = root.join("driver");
    std::fs::create_dir_all(&driver).unwrap();
    std::fs::write(
        driver.join("go.mod"),
        format!("module kgen.test/xcdriver\n\ngo {gover}\n\nrequire golang.org/x/crypto v0.0.0\n\nreplace golang.org/x/crypto => {}\n\nreplace golang.org/x/sys => {}\n", tree.display(), sys.display()),
    )
    .unwrap();
    std::fs::write(driver.join("driver.go"), "package xcdriver\n\nimport _ \"golang.org/x/crypto/chacha20poly1305\"\n").unwrap();
    (tree, driver)
}

/// Builds the tests of x/crypto package `pkg` (with `kgen_trace`); the test binary.
fn test_binary(go: &Tool, driver: &Path, pkg: &str) -> PathBuf {
    let exe = driver.join(format!("{}.test", pkg.replace('/', "_")));
    ok(&format!("go test -c {pkg}"), go_cmd(go, driver, "riscv64").args(["test", "-c", "-tags", "kgen_trace", "-o"]).arg(&exe).arg(format!("golang.org/x/crypto/{pkg}")).output().unwrap());
    exe
}

/// The `kgen-trace:` line's counters: name → calls.
fn trace(out: &str) -> Vec<(String, String)> {
    let l = out.lines().find(|l| l.starts_with("kgen-trace: ")).unwrap_or_else(|| panic!("no kgen-trace line:\n{out}"));
    l["kgen-trace: ".len()..].split(' ').map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).unwrap()).collect()
}

#[test]
fn x_crypto_tests_pass_on_the_patched_tree_on_the_expected_paths() {
    let (Some(go), Some(qemu), Some(tqemu), Some((crypto, sys))) = (oracle::go(), oracle::qemu(), oracle::xuantie_qemu(), common::go_x_crypto()) else { return };
    if Command::new("git").arg("--version").output().is_err() {
        oracle::missing::<()>("git");
        return;
    }
    on_base("x-crypto-0.25.0", "1.23", &go, &qemu, &tqemu, &crypto, &sys);
    let (Some(go127), Some(crypto58)) = (oracle::go_1_27(), common::x_crypto_0_58()) else { return };
    on_base("x-crypto-0.58.0", "1.26", &go127, &qemu, &tqemu, &crypto58, &sys);
}

/// Runs a riscv64 test binary under `qemu -cpu cpu`. Programs built by Go 1.26 or later run
/// under T-Head's QEMU (`c906fdv`) with the collector off: there that QEMU corrupts the
/// heap of any such program, kgen's code or not. x/crypto's own chacha20poly1305 tests
/// built with the `purego` tag (no assembly at all) stop with the collector's `found
/// pointer to free object` in about one run of ten, and in most runs with `GOGC=1`; the
/// same binary passes every time under T-Head's `c906fd` (its CPU without the vector unit)
/// and under upstream QEMU, and Go 1.23 builds pass under `c906fdv` with the collector on
/// (the 0.25.0 base runs them so).
fn run_under(q: &Tool, cpu: &str, exe: &Path, gover: &str) -> Output {
    let mut c = q.command();
    c.args(["-cpu", cpu]).arg(exe);
    if cpu == "c906fdv" && gover != "1.23" {
        c.env("GOGC", "off");
    }
    c.output().unwrap()
}

/// The whole check for one base, its sources at `crypto`, built by `go` (driver module at
/// Go version `gover`).
fn on_base(base: &str, gover: &str, go: &Tool, qemu: &Tool, tqemu: &Tool, crypto: &Path, sys: &Path) {
    let scratch = oracle::scratch(&format!("go-patches-{base}"));
    let out = scratch.join("series");
    let o = ok("kgen go-patches", kgen(&["go-patches", "--base", base, "--out", out.to_str().unwrap()]));
    let patches: Vec<PathBuf> = String::from_utf8(o.stdout).unwrap().lines().map(PathBuf::from).collect();
    assert_eq!(patches.len(), 4, "{patches:?}");
    let again = scratch.join("series-again");
    let o2 = ok("kgen go-patches (again)", kgen(&["go-patches", "--base", base, "--out", again.to_str().unwrap()]));
    for (a, b) in patches.iter().zip(String::from_utf8(o2.stdout).unwrap().lines()) {
        assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap(), "{} differs between two runs", a.display());
    }
    let text: String = patches.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    assert!(text.contains(&format!("kgen go-patches --base {base} --out DIR")) && !text.contains("/work/"), "regenerating command named, no absolute path");
    assert!(text.contains("put the whole 64-byte blocks\nof each call through kgen's chacha20-poly1305 c906 kernel") && !text.contains("not in kgen's main branch"));

    let (tree, driver) = patched_for(gover, &format!("go-patches-{base}"), crypto, sys, &patches);
    assert!(tree.join("internal/riscv64cpu/cpu_riscv64.go").is_file() && tree.join("chacha20/chacha_riscv64.s").is_file());
    let gofmt = go.program.with_file_name("gofmt");
    let o = ok("gofmt -l", Command::new(&gofmt).arg("-l").args(["chacha20", "internal", "chacha20poly1305"].map(|d| tree.join(d))).output().unwrap());
    assert!(o.stdout.is_empty(), "not gofmt-formatted: {}", String::from_utf8_lossy(&o.stdout));
    let mut vet: Vec<String> = PKGS.iter().map(|p| format!("golang.org/x/crypto/{p}")).collect();
    vet.push("golang.org/x/crypto/internal/riscv64cpu".into());
    for (arch, tags) in [("riscv64", ""), ("riscv64", "kgen_trace"), ("amd64", "")] {
        ok(&format!("go vet ({arch}, tags `{tags}`)"), go_cmd(go, &driver, arch).args(["vet", "-tags", tags]).args(&vet).output().unwrap());
    }
    // poly1305 (the public wrapper) has no tests of its own: it builds.
    ok("go build poly1305", go_cmd(go, &driver, "riscv64").args(["build", "golang.org/x/crypto/poly1305"]).output().unwrap());

    let cpus: [(&str, &Tool, &str, &str, &str, &str); 3] = [
        ("thead-c906", qemu, "chacha20.c906-novector", "poly1305.32-c906", "chacha20poly1305.composed", "thead-scalar=true xtheadvector=false"),
        ("c906fdv", tqemu, "chacha20.c906", "poly1305.32-c906", "chacha20poly1305.c906", "thead-scalar=true xtheadvector=true"),
        ("rv64", qemu, "chacha20.generic", "poly1305.32-rv64gc", "chacha20poly1305.composed", "thead-scalar=false xtheadvector=false"),
    ];
    println!("{base}:\n{:<18} {:<12} kgen-trace", "package", "-cpu");
    for pkg in ["chacha20", "internal/poly1305", "chacha20poly1305"] {
        let exe = test_binary(go, &driver, pkg);
        for (cpu, q, chacha, poly, aead, features) in cpus {
            let o = run_under(q, cpu, &exe, gover);
            let s = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success() && s.lines().any(|l| l == "PASS"), "{pkg} under -cpu {cpu} ({}):\n{s}{}", o.status, String::from_utf8_lossy(&o.stderr));
            let l = s.lines().find(|l| l.starts_with("kgen-trace: ")).unwrap();
            println!("{pkg:<18} {cpu:<12} {}", &l["kgen-trace: ".len()..]);
            assert!(l.contains(features), "{pkg} -cpu {cpu}: {l}");
            // The package's own paths: the expected one ran, the others did not
            // (chacha20poly1305 also runs chacha20 and poly1305: for the Poly1305 key, the
            // AAD and the tails on the stitched path, for everything on the composed one).
            let own = if pkg == "chacha20" { vec![chacha] } else if pkg == "internal/poly1305" { vec![poly] } else { vec![chacha, poly, aead] };
            let prefix: Vec<&str> = own.iter().map(|p| p.split('.').next().unwrap()).collect();
            for (k, v) in trace(&s).into_iter().filter(|(k, _)| prefix.iter().any(|p| k.starts_with(&format!("{p}.")))) {
                let n: u64 = v.parse().unwrap();
                if own.contains(&k.as_str()) {
                    assert!(n > 100, "{pkg} -cpu {cpu}: {k} ran {n} times: {l}");
                } else {
                    assert_eq!(n, 0, "{pkg} -cpu {cpu}: {k} ran: {l}");
                }
            }
        }
    }

    // Each prefix of the series builds on its own (patches 1..k, k < 4).
    for k in 1..patches.len() {
        let (_, d) = patched_for(gover, &format!("go-patches-{base}-first-{k}"), crypto, sys, &patches[..k]);
        ok(&format!("go build with patches 1..{k}"), go_cmd(go, &d, "riscv64").arg("build").args(&vet).output().unwrap());
    }

    // Negative control: one instruction of the c906-novector kernel changed (an `xor` of
    // the quarter round made an `or`) fails x/crypto's chacha20 tests.
    let (bad_tree, bad_driver) = patched_for(gover, &format!("go-patches-{base}-mutated"), crypto, sys, &patches);
    let s_path = bad_tree.join("chacha20/chacha_riscv64.s");
    let s = std::fs::read_to_string(&s_path).unwrap();
    let novector = kgen_emit::go::go_name(&kgen_kernels::chacha::CTR32.symbol("c906-novector")).unwrap();
    let start = s.find(&format!("TEXT ·{novector}(SB)")).expect("the novector function");
    let k = start + s[start..].find("\n\tXOR\tX").expect("an XOR in the novector function");
    std::fs::write(&s_path, format!("{}\n\tOR\t{}", &s[..k], &s[k + "\n\tXOR\t".len()..])).unwrap();
    let exe = test_binary(go, &bad_driver, "chacha20");
    let o = run_under(qemu, "thead-c906", &exe, gover);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stdout).contains("--- FAIL"), "the mutated kernel must fail x/crypto's tests:\n{}", String::from_utf8_lossy(&o.stdout));

    // Negative control: one instruction of the stitched kernel's seal changed (its first
    // `xor`, in the scalar first column round, made an `or`) fails x/crypto's
    // chacha20poly1305 tests under c906fdv, where the stitched path runs.
    let s_path = bad_tree.join("chacha20poly1305/chacha20poly1305_riscv64.s");
    let s = std::fs::read_to_string(&s_path).unwrap();
    let seal = kgen_emit::go::go_name(&kgen_kernels::chacha20_poly1305::MACSTATE_SEAL.symbol("c906")).unwrap();
    let start = s.find(&format!("TEXT ·{seal}(SB)")).expect("the stitched seal function");
    let k = start + s[start..].find("\n\tXOR\tX").expect("an XOR in the stitched seal");
    std::fs::write(&s_path, format!("{}\n\tOR\t{}", &s[..k], &s[k + "\n\tXOR\t".len()..])).unwrap();
    let exe = test_binary(go, &bad_driver, "chacha20poly1305");
    let o = run_under(tqemu, "c906fdv", &exe, gover);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("--- FAIL"), "the mutated stitched kernel must fail x/crypto's chacha20poly1305 tests:\n{out}");
    assert!(trace(&out).iter().any(|(k, v)| k == "chacha20poly1305.c906" && v != "0"), "the mutated kernel ran: {out}");
}
