//! `kgen linux-patches --base 6.12.118|7.3.4`: each series applies with zero fuzz to
//! Debian's linux-source of that version, touches only what it says, builds warning-free,
//! and the kernel's own tests judge it booted under qemu-system-riscv64
//! (scripts/linux-check.sh, the command the docs give):
//!
//! - 6.12: testmgr with the extra tests (random comparisons against the generic drivers,
//!   split scatterlists, runs without SIMD), the library's chacha20poly1305 self-test, and
//!   the templates gcm(aes), rfc4106(gcm(aes)), rfc7539(chacha20,poly1305) and
//!   rfc7539esp(...) instantiated at the end of boot;
//! - 7.3: the lib/crypto KUnit suites (chacha20poly1305, poly1305, ghash, aes_gcm,
//!   aes_cbc_macs, aes_ccm, sha224, sha256, sha384, sha512), testmgr's full self-tests, and
//!   the same templates on the library.
//!
//! Each CPU gets the variants of this table, as the boot lines and the call counters show:
//!
//! | CPU | chacha20 | poly1305 | ghash | sha256, sha512 | aes |
//! |---|---|---|---|---|---|
//! | `thead-c906` | c906-novector | 32-c906 | c906-novector | c906 | c906-novector |
//! | `rv64` (Zba/Zbb/Zbc/Zbs) | rv64gc | 32-rv64gc | rv64gc-zbc | rv64gc-zbb | rv64gc-zbb |
//! | `rv64` without Zba/Zbb/Zbc/Zbs | rv64gc | 32-rv64gc | rv64gc | rv64gc | rv64gc |
//! | `rv64,v=true`, VLEN 128 and 256 | rv64gcv | 32-rv64gc | rv64gc-zbc | rv64gc-zbb | rv64gcv |
//!
//! Negative controls: the 6.12 series with one planted fault (ChaCha's last partial block
//! one byte short) fails both testmgr and the library's self-test; the 7.3 series with AES
//! counter mode's counter carried one block short fails the aes_gcm and aes_ccm KUnit
//! suites and testmgr.

use kgen_harness::oracle;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

const BASE: &str = "6.12.118";
const BASES: [&str; 2] = ["6.12.118", "7.3.4"];

/// One kernel build at a time (two cores).
static BUILD: Mutex<()> = Mutex::new(());

const CPUS: [(&str, [&str; 6]); 5] = [
    ("thead-c906", ["c906-novector", "32-c906", "c906-novector", "c906", "c906", "c906-novector"]),
    ("rv64", ["rv64gc", "32-rv64gc", "rv64gc-zbc", "rv64gc-zbb", "rv64gc-zbb", "rv64gc-zbb"]),
    ("rv64,zba=false,zbb=false,zbc=false,zbs=false", ["rv64gc", "32-rv64gc", "rv64gc", "rv64gc", "rv64gc", "rv64gc"]),
    ("rv64,v=true,vlen=128", ["rv64gcv", "32-rv64gc", "rv64gc-zbc", "rv64gc-zbb", "rv64gc-zbb", "rv64gcv"]),
    ("rv64,v=true,vlen=256", ["rv64gcv", "32-rv64gc", "rv64gc-zbc", "rv64gc-zbb", "rv64gc-zbb", "rv64gcv"]),
];
const ALGS: [&str; 6] = ["chacha20", "poly1305", "ghash", "sha256", "sha512", "aes"];

fn kgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kgen")).args(args).output().unwrap()
}

/// The Linux sources of `base`, the cross compiler, flex/bison and qemu-system-riscv64.
fn oracles(base: &str) -> Option<PathBuf> {
    let src = kgen_integrations::linux::base(base).unwrap().path();
    if !src.join("Makefile").is_file() {
        return oracle::missing(&format!("Debian's linux-source for {base} unpacked at {}", src.display()));
    }
    if base != BASE {
        oracle::binutils(oracle::Binutils::V2_44, "as")?;
    }
    oracle::gcc()?;
    oracle::host_tool("flex")?;
    oracle::host_tool("bison")?;
    let q = oracle::host_tool("qemu-system-riscv64")?;
    let cpus = q.command().args(["-cpu", "help"]).output().ok()?;
    if !String::from_utf8_lossy(&cpus.stdout).contains("thead-c906") {
        return oracle::missing("qemu-system-riscv64 10 with -cpu thead-c906 (bookworm-backports qemu-system-misc)");
    }
    Some(src)
}

/// scripts/linux-check.sh for `base` with `args`, its serial logs in `logs`.
fn check(base: &str, args: &[&str], logs: &Path) -> Output {
    let o = Command::new(oracle::repo_root().join("scripts/linux-check.sh"))
        .args(["--base", base, "--logs"])
        .arg(logs)
        .args(args)
        .env("KGEN", env!("CARGO_BIN_EXE_kgen"))
        .output()
        .unwrap();
    print!("{}", String::from_utf8_lossy(&o.stdout));
    eprint!("{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// A boot log's lines without the console's carriage returns.
fn log(logs: &Path, base: &str, cpu: &str) -> String {
    let name = format!("{base}-{}.log", cpu.replace(',', "_").replace('=', "-"));
    std::fs::read_to_string(logs.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}")).replace('\r', "")
}

/// Boots `base` on every CPU and checks the table above in the logs.
fn boot_and_check(base: &str) {
    let Some(_) = oracles(base) else { return };
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let logs = oracle::scratch(&format!("linux-logs-{base}"));
    let o = check(base, &[], &logs);
    assert!(o.status.success(), "scripts/linux-check.sh --base {base} failed");
    let out = String::from_utf8_lossy(&o.stdout);
    println!("Linux {base}:\n\n| CPU | {} |\n|---|{}", ALGS.join(" | "), "---|".repeat(ALGS.len()));
    for (cpu, want) in CPUS {
        assert!(out.contains(&format!("linux-check: {base} {cpu}: passed")), "{base} {cpu} did not pass");
        // The table above, read from the log independently of the script.
        let l = log(&logs, base, cpu);
        let mut row = Vec::new();
        for (alg, v) in ALGS.iter().zip(want) {
            let line = l.lines().find(|x| x.starts_with(&format!("kgen: {alg}: "))).unwrap_or_else(|| panic!("{cpu}: no boot line for {alg}"));
            let chosen = line[format!("kgen: {alg}: ").len()..].split(' ').next().unwrap();
            assert_eq!(chosen, v, "{cpu}: {alg} chose {line}");
            let calls: u64 = l
                .lines()
                .find_map(|x| x.strip_prefix(&format!("kgen: calls: {alg} {v} ")))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("{cpu}: no call count for {alg} {v}"));
            assert!(calls > 0, "{cpu}: {alg} {v} never ran");
            row.push(format!("{v} ({calls} calls)"));
        }
        for t in ["gcm(aes)", "rfc4106(gcm(aes))", "rfc7539(chacha20,poly1305)", "rfc7539esp(chacha20,poly1305)"] {
            let line = l.lines().find(|x| x.starts_with(&format!("kgen: test: {t}: "))).unwrap_or_else(|| panic!("{cpu}: {t} was not instantiated"));
            assert!(line.contains(": ok ("), "{cpu}: {line}");
            if base == BASE {
                assert!(line.contains("-kgen-"), "{cpu}: {line} does not use kgen's drivers");
            }
        }
        if base != BASE {
            for suite in ["chacha20poly1305", "poly1305", "ghash", "aes_gcm", "aes_cbc_macs", "aes_ccm", "sha224", "sha256", "sha384", "sha512"] {
                // KTAP: a suite's result is a top-level line `ok N name`.
                let passed = l.lines().any(|x| {
                    let w: Vec<&str> = x.split(' ').collect();
                    w.len() == 3 && w[0] == "ok" && w[1].parse::<u32>().is_ok() && w[2] == suite
                });
                assert!(passed, "{cpu}: KUnit suite {suite} did not pass");
            }
            assert!(!l.lines().any(|x| x.trim_start().starts_with("not ok ")), "{cpu}: a KUnit test failed");
        }
        assert!(!l.contains("alg: self-tests for") && !l.contains(": FAIL") && !l.contains("WARNING:"), "{cpu}: a self-test failed");
        println!("| `{cpu}` | {} |", row.join(" | "));
    }
}

#[test]
fn linux_6_12_self_tests_pass_on_every_cpu() {
    boot_and_check("6.12.118");
}

#[test]
fn linux_7_3_kunit_and_self_tests_pass_on_every_cpu() {
    boot_and_check("7.3.4");
}

/// The series for `base` with `good` (a line of the patch whose file name contains
/// `patch`) replaced by `bad`, booted on `rv64` by scripts/linux-check.sh, which must see a
/// failure: the boot log.
fn planted(base: &str, patch: &str, good: &str, bad: &str) -> String {
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let dir = oracle::scratch(&format!("linux-fault-{base}"));
    let series = dir.join("series");
    let o = kgen(&["linux-patches", "--base", base, "--out", series.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = std::fs::read_dir(&series).unwrap().flatten().map(|e| e.path()).find(|p| p.to_string_lossy().contains(patch)).unwrap_or_else(|| panic!("the {patch} patch"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches(good).count(), 1, "{base}: {good}");
    std::fs::write(&file, text.replace(good, bad)).unwrap();
    let logs = dir.join("logs");
    let o = check(base, &["--series", series.to_str().unwrap(), "--cpus", "rv64", "--expect-failure"], &logs);
    assert!(o.status.success(), "{base}: the planted fault was not caught");
    let l = log(&logs, base, "rv64");
    let _ = std::fs::remove_dir_all(&dir);
    l
}

/// 6.12: ChaCha's last partial block one byte short.
#[test]
fn a_planted_fault_fails_the_self_tests() {
    let Some(_) = oracles(BASE) else { return };
    let l = planted(BASE, "ChaCha20", "+\t\tmemcpy(dst, buf, tail);\n", "+\t\tmemcpy(dst, buf, tail - 1);\n");
    // Both judges catch it: testmgr (the skciphers) and the library's self-test (which
    // calls chacha_crypt_arch() through chacha20poly1305_encrypt()).
    let testmgr: Vec<&str> = l.lines().filter(|x| x.starts_with("alg: ") && x.contains("chacha") && x.contains("failed")).collect();
    let library: Vec<&str> = l.lines().filter(|x| x.starts_with("chacha20poly1305 ") && x.ends_with(": FAIL")).collect();
    assert!(!testmgr.is_empty() && !library.is_empty(), "the failure must show in testmgr and in the library's self-test:\n{l}");
    println!("caught by:\n{}\n{}", testmgr[0], library[0]);
}

/// 7.3: AES counter mode's counter carried one block short between calls (so the block
/// after a call of the library's aes_ctr(), which GCM and CCM take, repeats a keystream
/// block).
#[test]
fn a_planted_fault_fails_the_7_3_kunit_suites() {
    let base = "7.3.4";
    let Some(_) = oracles(base) else { return };
    let l = planted(base, "AES", "+\t\tput_unaligned_be32(ctr + (u32)n, iv + 12);\n", "+\t\tput_unaligned_be32(ctr + (u32)n - 1, iv + 12);\n");
    // The KUnit suites of the modes on aes_ctr() fail (KTAP: `not ok N aes_gcm`), and so
    // does testmgr.
    let kunit: Vec<&str> = l.lines().filter(|x| {
        let w: Vec<&str> = x.split(' ').collect();
        w.len() == 4 && w[0] == "not" && w[1] == "ok" && (w[3] == "aes_gcm" || w[3] == "aes_ccm")
    }).collect();
    let testmgr: Vec<&str> = l.lines().filter(|x| x.starts_with("alg: ") && x.contains("aes") && x.contains("failed")).collect();
    assert!(kunit.len() == 2 && !testmgr.is_empty(), "the failure must show in the aes_gcm and aes_ccm suites and in testmgr:\n{l}");
    println!("caught by:\n{}\n{}\n{}", kunit[0], kunit[1], testmgr[0]);
}

/// Each series adds files only under its kgen directory and arch/riscv/configs/, and edits
/// only the lines its base names (removing none but those it replaces); generated twice,
/// it is the same bytes.
#[test]
fn each_series_touches_only_what_it_says() {
    for base in BASES {
        let Some(_) = oracles(base) else { return };
        let b = kgen_integrations::linux::base(base).unwrap();
        let dir = oracle::scratch(&format!("linux-series-{base}"));
        let mut texts = Vec::new();
        for n in ["a", "b"] {
            let o = kgen(&["linux-patches", "--base", base, "--out", dir.join(n).to_str().unwrap()]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(n)).unwrap().flatten().map(|e| e.path()).collect();
            files.sort();
            texts.push(files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect::<Vec<_>>());
        }
        assert_eq!(texts[0], texts[1], "{base}: the series differs between two runs");
        assert_eq!(texts[0].len(), 7, "{base}: detection, then one patch per algorithm");
        let edited: Vec<&str> = b.edits.iter().map(|(f, _, _)| *f).collect();
        let replaced: Vec<&str> = b.edits.iter().filter(|(_, from, to)| !to.contains(from)).map(|(_, from, _)| *from).collect();
        for p in &texts[0] {
            for hunk in p.split("diff --git a/").skip(1) {
                let path = hunk.split(' ').next().unwrap();
                let ok = path.starts_with(&format!("{}/", b.layout.dir())) || path.starts_with("arch/riscv/configs/kgen-") || edited.contains(&path);
                assert!(ok, "{base}: the series touches {path}");
                for l in hunk.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")) {
                    assert!(replaced.contains(&&l[1..]), "{base}: the series removes a line of {path}: {l}");
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The writer's rules: each broken hook is refused with one error naming the kernel and
/// the variant, before anything is written.
#[test]
fn the_writer_refuses_what_the_kernel_cannot_run() {
    use kgen_dsl::kernel::hooks::{Hook, Linux, LinuxSlot};
    use kgen_dsl::kernel::Kernel;
    let k = |name: &str| kgen_kernels::kernel(name).unwrap();
    // XTheadVector first: left out of 6.12 (no kernel-mode support), kept for 7.3.
    static XTHEAD: Kernel = Kernel {
        hooks: &[Hook::Linux(Linux { slot: LinuxSlot::ChaCha20, variants: &["c906", "rv64gc"], entries: &[&kgen_kernels::chacha::LINUX] })],
        ..kgen_kernels::chacha::KERNEL
    };
    // A variant that declares a leak (Poly1305's 64-bit multiplies on the C906).
    static LEAKY: Kernel = Kernel {
        hooks: &[Hook::Linux(Linux {
            slot: LinuxSlot::Poly1305 { state_bytes: 56 },
            variants: &["64-c906", "32-rv64gc"],
            entries: &[&kgen_kernels::poly1305::LINUX_INIT, &kgen_kernels::poly1305::LINUX_BLOCKS, &kgen_kernels::poly1305::LINUX_EMIT],
        })],
        ..kgen_kernels::poly1305::KERNEL
    };
    // The last variant needs Zbb: no variant for a plain RV64GC core.
    static NO_FALLBACK: Kernel = Kernel {
        hooks: &[Hook::Linux(Linux { slot: LinuxSlot::Sha2 { bits: 256 }, variants: &["c906", "rv64gc-zbb"], entries: &[&kgen_kernels::sha2::SHA256_LINUX] })],
        ..kgen_kernels::sha2::SHA256
    };
    let glue = |base: &str| kgen_integrations::linux::added_files(base, &[&XTHEAD]).unwrap().into_iter().map(|(_, t)| t).collect::<String>();
    assert!(!glue(BASE).contains("chacha_c906(") && glue(BASE).contains("chacha_rv64gc("), "6.12 must leave the XTheadVector variant out");
    assert!(glue("7.3.4").contains("has_xtheadvector()") && glue("7.3.4").contains("chacha_c906("), "7.3 must take it behind has_xtheadvector()");
    for (bad, want) in [
        (&LEAKY, "poly1305 64-c906 declares a leak"),
        (&NO_FALLBACK, "sha256: the last variant (rv64gc-zbb) must run on every RV64GC core"),
    ] {
        let e = kgen_integrations::linux::added_files(BASE, &[bad]).map(|_| ()).expect_err(want);
        assert!(e.starts_with("linux-patches: ") && e.contains(want) && !e.contains('\n'), "{e}");
    }
    // Two kernels for one slot.
    let e = kgen_integrations::linux::added_files(BASE, &[k("chacha20"), &XTHEAD]).map(|_| ()).expect_err("two fillers");
    assert!(e.contains("both fill the chacha20 slot"), "{e}");
    // The real kernels are accepted.
    for base in BASES {
        assert!(kgen_integrations::linux::added_files(base, kgen_kernels::kernels()).is_ok());
    }
}

#[test]
fn bad_command_lines_fail_before_any_work() {
    let dir = oracle::scratch("linux-cli");
    for (args, want) in [
        (vec!["linux-patches", "--base", "6.13", "--out", dir.join("x").to_str().unwrap()], "unknown --base `6.13` (known: 6.12.118, 7.3.4)"),
        (vec!["linux-patches", "--base", BASE, "--src", "/nonexistent", "--out", dir.join("y").to_str().unwrap()], "/nonexistent is not a Linux source tree"),
    ] {
        let o = kgen(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want) && err.trim().lines().count() == 1, "{args:?}: {err}");
        assert!(!dir.join("x").exists() && !dir.join("y").exists(), "{args:?} wrote files");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
