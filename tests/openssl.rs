//! OpenSSL 3.5.7, 3.6.3 and 4.0.2 with kgen's patch series (`kgen openssl-patches --base`),
//! judged by OpenSSL's own tests. Every check below runs for each release.
//!
//! The series is written from `.toolchain/openssl-<base>`, applied with `git apply` to a
//! fresh copy of Debian's `openssl_<base>.orig.tar.gz` (every hunk must also apply with
//! `patch -F0` at its exact line: no fuzz, no offset), and built for riscv64 (static
//! libraries, cross gcc) with the counters of `-DOPENSSL_KGEN_COUNTERS`. The build is cached
//! in `~/.cache/kgen-openssl/<base>-<hash>` (or `$KGEN_OPENSSL_CACHE`), the hash of the files the
//! series writes and of every build input, so a repeated run only runs the tests. OpenSSL's
//! tests of what kgen replaces then run under QEMU three ways: the recipes of AES-GCM, the
//! modes, Poly1305, ChaCha20 and SHA-2 ([`TESTS`], through EXE_SHELL) and evp_test on the
//! data files of those ciphers, MACs and digests ([`EVP_FILES`]); with
//! `KGEN_OPENSSL_FULL=1` the whole test_evp and test_evp_extra recipes instead (every data
//! file, the post-quantum signatures among them: about an hour more). The counters must
//! show the paths each CPU should take:
//! - upstream QEMU `-cpu thead-c906`, no override: riscv_hwprobe reports the T-Head core,
//!   so the scalar T-Head variants run and no vector code does;
//! - T-Head's QEMU `-cpu c906fdv`, OPENSSL_riscvcap naming the T-Head extensions with
//!   xtheadvector (that QEMU has no riscv_hwprobe): the XTheadVector variants run;
//! - upstream QEMU `-cpu rv64`: upstream's code runs but for the constant-time AES and
//!   Poly1305 (kgen's RV64GC paths; Poly1305's is the only code there is under
//!   POLY1305_ASM), and every recipe passes; with OPENSSL_riscvcap=rv64gc_zbb, the AES's
//!   Zbb variant.
//!
//! The patched libcrypto.a keeps every global symbol of the unpatched one (`nm`, the
//! unpatched library built once from the same tarball and cached too), and every C file the
//! series touches compiles with `-Wall -Wextra -Werror`, with and without the counters.
//! OPENSSL_riscvcap=rv64gc turns kgen's code off on the T-Head core. Negative controls: a
//! changed anchor line stops both kgen and `git apply`, the path and symbol checkers reject
//! wrong counts and a lost symbol, the compiler flags reject a warning, and naming the
//! T-Head extensions on `-cpu rv64` makes evp_test fail (the counted code is T-Head code).
//! Build and test times are printed, not asserted.

use kgen_integrations::openssl::{self, tree::blob_id, Counter, Series};
use kgen_harness::oracle::{self, Binutils, Tool};
use kgen_dsl::Ext;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// The releases, oldest first.
const BASES: &[&str] = openssl::BASES;
/// Part of the cache key: change it when the build steps below change.
const RECIPE: &str = "kgen-openssl build steps 1";
const CONFIGURE: &[&str] = &["linux64-riscv64", "--cross-compile-prefix=riscv64-linux-gnu-", "no-shared", "no-module", "no-docs"];
/// The test programs the recipes of [`recipes`] and [`EVP_FILES`] run, with the full set's
/// (no more: `make build_sw` builds ~300).
const PROGRAMS: &[&str] = &[
    "test/evp_test",
    "test/evp_extra_test",
    "test/evp_extra_test2",
    "test/aesgcmtest",
    "test/modes_internal_test",
    "test/poly1305_internal_test",
    "test/chacha_internal_test",
    "test/sha_test",
    "util/wrap.pl",
];
/// OpenSSL's recipes for what kgen's code replaces: AES-GCM, the modes (GCM128 and its
/// GHASH), Poly1305, ChaCha20 and SHA-2.
const TESTS: &[&str] = &["test_aesgcm", "test_internal_modes", "test_internal_poly1305", "test_internal_chacha", "test_sha"];
/// The recipes of the full set (`KGEN_OPENSSL_FULL=1`): every file of 30-test_evp_data
/// (post-quantum signatures and all) and the other EVP tests, besides [`TESTS`].
const FULL_TESTS: &[&str] = &["test_evp", "test_evp_extra"];
/// The files of 30-test_evp_data for the ciphers, MACs and digests kgen's code replaces,
/// run with evp_test (as 30-test_evp.t runs them, with the default and legacy providers):
/// every AES mode (AES_encrypt/decrypt, AES_ctr32_encrypt, the stitched AES-GCM), ChaCha20
/// and ChaCha20-Poly1305, GMAC/CMAC/HMAC and Poly1305, SHA-2, and HKDF and the TLS 1.3 KDF
/// (HMAC-SHA-256/384). In the full set the test_evp recipe runs them with all the others.
const EVP_FILES: &[&str] = &[
    "evpciph_aes_common.txt",
    "evpciph_aes_ccm_cavs.txt",
    "evpciph_aes_cts.txt",
    "evpciph_aes_gcm_siv.txt",
    "evpciph_aes_ocb.txt",
    "evpciph_aes_siv.txt",
    "evpciph_aes_stitched.txt",
    "evpciph_aes_wrap.txt",
    "evpciph_chacha.txt",
    "evpmac_common.txt",
    "evpmac_poly1305.txt",
    "evpmd_sha.txt",
    "evpkdf_hkdf.txt",
    "evpkdf_tls13_kdf.txt",
];

/// Whether the full set runs (`KGEN_OPENSSL_FULL=1 cargo test --release --test openssl`).
fn full() -> bool {
    std::env::var("KGEN_OPENSSL_FULL").is_ok_and(|v| v == "1")
}

/// The recipes this run makes.
fn recipes() -> Vec<&'static str> {
    let mut r = TESTS.to_vec();
    if full() {
        r.extend(FULL_TESTS);
    }
    r
}
const SYSROOT: &str = "/usr/riscv64-linux-gnu";

struct Tools {
    make: Tool,
    perl: Tool,
    patch: Tool,
    git: Tool,
    tar: Tool,
    nm: Tool,
}

fn tools() -> Option<Tools> {
    oracle::gcc()?;
    Some(Tools {
        make: oracle::host_tool("make")?,
        perl: oracle::host_tool("perl")?,
        patch: oracle::host_tool("patch")?,
        git: oracle::host_tool("git")?,
        tar: oracle::host_tool("tar")?,
        nm: oracle::binutils(Binutils::V2_40, "nm")?,
    })
}

/// The default series for `base`, written once.
fn series(base: &str) -> &'static Series {
    static S: PerRelease<Series> = Mutex::new(BTreeMap::new());
    once_per_release(&S, base, || {
        openssl::series(&openssl::default_src(base), base, kgen_kernels::kernels(), openssl::Leaks::Refuse).unwrap_or_else(|e| panic!("kgen openssl-patches --base {base}: {e}"))
    })
}

/// Values made once per release and kept for the whole test run.
type PerRelease<T> = Mutex<BTreeMap<String, &'static T>>;

/// `cell`'s value for `base`, made by `make` the first time (under the lock: a build of one
/// release at a time).
fn once_per_release<T>(cell: &PerRelease<T>, base: &str, make: impl FnOnce() -> T) -> &'static T {
    let mut m = cell.lock().unwrap_or_else(|e| e.into_inner());
    m.entry(base.to_string()).or_insert_with(|| Box::leak(Box::new(make())))
}

/// Whether `base`'s source tree is in .toolchain (else the oracle is missing).
fn have_tree(base: &str) -> bool {
    openssl::default_src(base).join("VERSION.dat").exists() || oracle::missing::<()>(&format!("OpenSSL {base} source tree in .toolchain (scripts/setup-toolchain.sh)")).is_some()
}

fn cache_root() -> PathBuf {
    match std::env::var_os("KGEN_OPENSSL_CACHE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache/kgen-openssl"),
    }
}

/// The last lines of a log, for an error message.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Runs `cmd` in `dir` (at nice 10: the machine is shared), output appended to `log`.
fn logged(cmd: Command, dir: &Path, log: &Path, what: &str) -> Result<(), String> {
    let f = File::options().create(true).append(true).open(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    let mut nice = Command::new("nice");
    nice.args(["-n", "10"]).arg(cmd.get_program()).args(cmd.get_args()).current_dir(dir).stdout(f).stderr(f2);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => nice.env(k, v),
            None => nice.env_remove(k),
        };
    }
    let st = nice.status().map_err(|e| format!("{what}: {e}"))?;
    if !st.success() {
        return Err(format!("{what}: {st} (log {}):\n{}", log.display(), tail(log)));
    }
    Ok(())
}

/// Unpacks `base`'s tarball into `dir`; returns the tree (`dir/openssl-<base>`).
fn unpack(t: &Tools, base: &str, dir: &Path) -> Result<PathBuf, String> {
    let tarball = oracle::openssl_tarball(base).ok_or_else(|| format!("no openssl_{base}.orig.tar.gz"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let o = t.tar.command().arg("xzf").arg(&tarball).arg("-C").arg(dir).output().map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!("tar xzf {}: {}", tarball.display(), String::from_utf8_lossy(&o.stderr)));
    }
    Ok(dir.join(format!("openssl-{base}")))
}

/// Writes the series into `dir`; returns the patch files in order.
fn write_series(s: &Series, dir: &Path) -> Vec<PathBuf> {
    s.write(dir).expect("write the series")
}

/// Applies the patches to `tree` in order: each must apply with `patch -F0` at its exact
/// lines (dry run: no fuzz, no offset), then is applied with `git apply` (outside any git
/// repository, so git applies it as a plain patch).
fn apply(t: &Tools, tree: &Path, patches: &[PathBuf]) -> Result<(), String> {
    let ceiling = tree.parent().unwrap_or(tree);
    for p in patches {
        let o = t.patch.command().args(["-p1", "-F0", "--dry-run", "-i"]).arg(p).current_dir(tree).output().map_err(|e| e.to_string())?;
        let out = String::from_utf8_lossy(&o.stdout);
        if !o.status.success() {
            return Err(format!("patch -F0 --dry-run {}: {out}", p.display()));
        }
        if let Some(l) = out.lines().find(|l| l.contains("offset") || l.contains("fuzz")) {
            return Err(format!("{}: not at its exact lines: {l}", p.display()));
        }
        for check in [true, false] {
            let mut c = t.git.command();
            c.arg("apply");
            if check {
                c.arg("--check");
            }
            let o = c.arg(p).current_dir(tree).env("GIT_CEILING_DIRECTORIES", ceiling).output().map_err(|e| e.to_string())?;
            if !o.status.success() {
                return Err(format!("git apply{} {}: {}", if check { " --check" } else { "" }, p.display(), String::from_utf8_lossy(&o.stderr).trim()));
            }
        }
    }
    Ok(())
}

/// After the whole series every file it touches holds what kgen wrote (so nothing was
/// skipped, as `git apply` inside another repository would).
fn check_result(s: &Series, tree: &Path) -> Result<usize, String> {
    let mut last: BTreeMap<&str, &str> = BTreeMap::new();
    for p in &s.patches {
        for d in &p.diffs {
            last.insert(&d.path, &d.new);
        }
    }
    for (path, want) in &last {
        let got = std::fs::read_to_string(tree.join(path)).map_err(|e| format!("{path}: {e}"))?;
        if got != *want {
            return Err(format!("{path}: after the series the file is not what kgen wrote"));
        }
    }
    Ok(last.len())
}

/// `Configure`, `make build_libs`, then the test programs (two make runs: mixing the
/// dependency goal and file goals in one `make -j2` corrupts libcrypto.a).
fn build(t: &Tools, src: &Path, b: &Path, defines: &[&str], programs: bool) -> Result<(), String> {
    std::fs::create_dir_all(b).map_err(|e| format!("{}: {e}", b.display()))?;
    let log = b.join("kgen-build.log");
    let mut c = t.perl.command();
    c.arg(src.join("Configure")).args(CONFIGURE).args(defines);
    logged(c, b, &log, "Configure")?;
    let mut c = t.make.command();
    c.args(["-j2", "build_libs"]);
    logged(c, b, &log, "make build_libs")?;
    if programs {
        let mut c = t.make.command();
        c.arg("-j2").args(PROGRAMS);
        logged(c, b, &log, "make (test programs)")?;
    }
    Ok(())
}

fn hash(parts: &[&[u8]]) -> String {
    let mut all = Vec::new();
    for p in parts {
        all.extend_from_slice(&(p.len() as u64).to_le_bytes());
        all.extend_from_slice(p);
    }
    blob_id(&all)[..16].to_string()
}

/// One build or QEMU run at a time: each takes minutes of a shared machine.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

struct Built {
    /// The build directory (Makefile, libcrypto.a, test/).
    b: PathBuf,
    /// The patched source tree.
    src: PathBuf,
}

/// The patched, counting build of `base` (cached by the hash of the series and the build
/// inputs).
fn patched(base: &str) -> Option<&'static Built> {
    static B: PerRelease<Result<Built, String>> = Mutex::new(BTreeMap::new());
    let t = tools()?;
    let tarball = oracle::openssl_tarball(base)?;
    let r = once_per_release(&B, base, || build_patched(&t, base, &tarball));
    Some(r.as_ref().unwrap_or_else(|e| panic!("patched OpenSSL {base} build: {e}")))
}

fn build_patched(t: &Tools, base: &str, tarball: &Path) -> Result<Built, String> {
    let s = series(base);
    let tar_id = blob_id(&std::fs::read(tarball).map_err(|e| e.to_string())?);
    let mut parts: Vec<Vec<u8>> = vec![RECIPE.into(), CONFIGURE.join(" ").into(), openssl::COUNTING_MACRO.into(), PROGRAMS.join(" ").into(), tar_id.into()];
    // What the build sees: the files the series leaves (commit messages do not count).
    for p in &s.patches {
        for d in &p.diffs {
            parts.push(d.path.clone().into());
            parts.push(d.new.clone().into());
        }
    }
    let refs: Vec<&[u8]> = parts.iter().map(|p| p.as_slice()).collect();
    let name = format!("{base}-{}", hash(&refs));
    let root = cache_root();
    let dir = root.join(&name);
    let ok = dir.join("built.ok");
    let (src, b) = (dir.join(format!("openssl-{base}")), dir.join("build"));
    if ok.exists() {
        eprintln!("patched OpenSSL {base}: cached build {}", dir.display());
        return Ok(Built { b, src });
    }
    let _one = heavy();
    let _ = std::fs::remove_dir_all(&dir);
    let start = Instant::now();
    let tree = unpack(t, base, &dir)?;
    let files = write_series(s, &dir.join("series"));
    apply(t, &tree, &files)?;
    check_result(s, &tree)?;
    let define = format!("-D{}", openssl::COUNTING_MACRO);
    build(t, &src, &b, &[&define], true)?;
    let secs = start.elapsed().as_secs_f64();
    std::fs::write(&ok, format!("built in {secs:.0} s\n")).map_err(|e| e.to_string())?;
    eprintln!("| patched OpenSSL {base} build (libs + {} programs) | {secs:.0} s |", PROGRAMS.len());
    // Earlier series' builds of this release are not needed any more (the other releases'
    // and the unpatched ones stay).
    if let Ok(rd) = std::fs::read_dir(&root) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            let other = BASES.iter().any(|b| *b != base && n.starts_with(&format!("{b}-")));
            if n != name && !n.starts_with("unpatched-") && !other {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    Ok(Built { b, src })
}

/// `nm -g --defined-only` of a static library: the defined global symbols.
fn globals(t: &Tools, lib: &Path) -> Result<BTreeSet<String>, String> {
    let o = t.nm.command().args(["-g", "--defined-only"]).arg(lib).output().map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!("nm {}: {}", lib.display(), String::from_utf8_lossy(&o.stderr)));
    }
    Ok(String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() == 3).then(|| f[2].to_string())
    }).collect())
}

/// The unpatched libcrypto.a's global symbols of `base` (built once per tarball and
/// configuration; only the list is kept).
fn unpatched_globals(base: &str) -> Option<&'static BTreeSet<String>> {
    static G: PerRelease<Result<BTreeSet<String>, String>> = Mutex::new(BTreeMap::new());
    let t = tools()?;
    let tarball = oracle::openssl_tarball(base)?;
    let r = once_per_release(&G, base, || build_unpatched(&t, base, &tarball));
    Some(r.as_ref().unwrap_or_else(|e| panic!("unpatched OpenSSL {base} build: {e}")))
}

fn build_unpatched(t: &Tools, base: &str, tarball: &Path) -> Result<BTreeSet<String>, String> {
    let tar = std::fs::read(tarball).map_err(|e| e.to_string())?;
    let key = hash(&[RECIPE.as_bytes(), CONFIGURE.join(" ").as_bytes(), blob_id(&tar).as_bytes()]);
    let dir = cache_root().join(format!("unpatched-{key}"));
    let list = dir.join("libcrypto-globals.txt");
    if let Ok(text) = std::fs::read_to_string(&list) {
        return Ok(text.lines().map(str::to_string).collect());
    }
    let _one = heavy();
    let _ = std::fs::remove_dir_all(&dir);
    let start = Instant::now();
    let tree = unpack(t, base, &dir)?;
    let b = dir.join("build");
    build(t, &tree, &b, &[], false)?;
    let g = globals(t, &b.join("libcrypto.a"))?;
    let _ = std::fs::remove_dir_all(&tree);
    let _ = std::fs::remove_dir_all(&b);
    std::fs::write(&list, g.iter().map(|s| format!("{s}\n")).collect::<String>()).map_err(|e| e.to_string())?;
    eprintln!("| unpatched OpenSSL {base} build (libs) | {:.0} s |", start.elapsed().as_secs_f64());
    Ok(g)
}

/// The symbols of `before` that `after` lacks.
fn lost(before: &BTreeSet<String>, after: &BTreeSet<String>) -> Vec<String> {
    before.difference(after).cloned().collect()
}

// ---- the series ---------------------------------------------------------------------------

#[test]
fn every_patch_says_what_it_adds_how_it_is_selected_and_how_to_regenerate_it() {
    for &base in BASES {
        if have_tree(base) {
            patches_say_what_they_do(base);
        }
    }
}

fn patches_say_what_they_do(base: &str) {
    let s = series(base);
    assert!(s.patches.len() >= 7, "{} patches", s.patches.len());
    let again = openssl::series(&openssl::default_src(base), base, kgen_kernels::kernels(), openssl::Leaks::Refuse).unwrap();
    assert_eq!(s.files(), again.files(), "two runs wrote different series");
    let cmd = openssl::command(base);
    for (i, (name, text)) in s.files().iter().enumerate() {
        assert!(name.starts_with(&format!("{:04}-", i + 1)) && name.ends_with(".patch"), "{name}");
        assert!(text.contains("\nSubject: [PATCH "), "{name}: no subject");
        assert!(text.contains(&format!("\n  {cmd}\n")), "{name}: no regenerating command");
        assert!(text.contains("Run-time selection") || text.contains("Run-time switches"), "{name}: does not say how it is selected");
    }
    // One patch per kernel; each new perlasm shim has its GENERATE line in the same patch.
    for p in &s.patches[1..] {
        let shims: Vec<&str> = p.diffs.iter().filter(|d| d.old.is_none() && d.path.contains("/asm/") && d.path.ends_with(".pl")).map(|d| d.path.as_str()).collect();
        assert!(!shims.is_empty(), "{}: no perlasm shim", p.subject);
        for sh in shims {
            let stem = Path::new(sh).file_stem().unwrap().to_string_lossy().to_string();
            let line = format!("GENERATE[{stem}.s]=asm/{stem}.pl");
            assert!(p.diffs.iter().any(|d| d.path.ends_with("build.info") && d.new.contains(&line)), "{}: no `{line}`", p.subject);
            let text = &p.diffs.iter().find(|d| d.path == sh).unwrap().new;
            assert!(text.contains(&cmd), "{sh}: does not name the regenerating command");
        }
    }
    // Poly1305 gets riscv64 assembly and with it POLY1305_ASM.
    let poly = s.patches.iter().find(|p| p.subject.contains("Poly1305")).expect("a Poly1305 patch");
    assert!(poly.diffs.iter().any(|d| d.path == "crypto/poly1305/build.info" && d.new.contains("$POLY1305ASM_riscv64=")));
    // Detection: a riscv_arch.def line for every T-Head extension the series' code uses.
    let det = &s.patches[0];
    let def = det.diffs.iter().find(|d| d.path == "include/crypto/riscv_arch.def").expect("riscv_arch.def");
    let used: BTreeSet<Ext> = s.counters().iter().flat_map(|c| c.exts.iter().copied()).filter(|e| e.name().starts_with("xthead")).collect();
    assert!(used.contains(&Ext::XTheadBb) && used.contains(&Ext::XTheadVector), "{used:?}");
    for e in used {
        let name = e.name().to_ascii_uppercase();
        assert!(def.new.contains(&format!("RISCV_DEFINE_CAP({name},")), "no {name}");
    }
    let rc = det.diffs.iter().find(|d| d.path == "crypto/riscvcap.c").expect("riscvcap.c");
    assert!(!rc.new.contains("/proc/cpuinfo"));
}

/// The (kernel, variant) pairs a series calls that declare a leak (their checks' findings).
fn leaky_variants(s: &Series) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for c in s.counters() {
        let Some(v) = c.variant else { continue };
        let k = kgen_kernels::kernels().iter().find(|k| k.name == c.kernel).expect("the counter's kernel");
        let m = k.variant(v).expect("the counter's variant").build(kgen_dsl::Abi::Psabi).expect("it builds");
        if m.declares_leaks() {
            out.insert((c.kernel.to_string(), v.to_string()));
        }
    }
    out
}

#[test]
fn the_default_series_calls_no_leaky_kernel_and_the_option_brings_them_back() {
    for &base in BASES {
        if have_tree(base) {
            no_leaky_kernel_by_default(base);
        }
    }
}

fn no_leaky_kernel_by_default(base: &str) {
    let s = series(base);
    assert_eq!(leaky_variants(s), BTreeSet::new(), "the default series calls kernels that declare a leak");
    let aes = s.patches.iter().find(|p| p.subject.contains("AES from kgen")).expect("an AES patch");
    assert!(aes.subject.contains("aes-ct"), "{}", aes.subject);
    let gcm = |s: &Series| s.patches.iter().find(|p| p.subject.contains("AES-GCM from kgen")).map(|p| p.subject.clone()).expect("an AES-GCM patch");
    assert!(gcm(s).contains("aes-gcm-ct c906"), "{}", gcm(s));
    // Negative control: with the option, the T-table AES and the stitched AES-GCM on it, in
    // the same slots.
    let leaky = openssl::series(&openssl::default_src(base), base, kgen_kernels::kernels(), openssl::Leaks::Allow).unwrap();
    let found = leaky_variants(&leaky);
    assert!(found.contains(&("aes".to_string(), "c906".to_string())) && found.contains(&("aes-gcm".to_string(), "c906".to_string())), "{found:?}");
    assert!(gcm(&leaky).contains("aes-gcm c906"), "{}", gcm(&leaky));
    assert_eq!(leaky.patches.len(), s.patches.len(), "the leaky kernels fill the same slots");
}

#[test]
fn series_applies_to_the_orig_tarball_with_git_apply_and_no_fuzz_and_a_changed_anchor_stops_it() {
    let Some(t) = tools() else { return };
    for &base in BASES {
        if oracle::openssl_tarball(base).is_some() && have_tree(base) {
            applies_without_fuzz(&t, base);
        }
    }
}

fn applies_without_fuzz(t: &Tools, base: &str) {
    let s = series(base);
    let dir = oracle::scratch(&format!("openssl-apply-{base}"));
    let tree = unpack(t, base, &dir.join("a")).unwrap();
    let files = write_series(s, &dir.join("series"));
    apply(t, &tree, &files).unwrap();
    let n = check_result(s, &tree).unwrap();
    eprintln!("OpenSSL {base}: {} patches applied, {n} files as kgen wrote them", files.len());

    // Negative controls: a tree whose riscvcap.c lacks an anchor line.
    let tree2 = unpack(t, base, &dir.join("b")).unwrap();
    let rc = tree2.join("crypto/riscvcap.c");
    let text = std::fs::read_to_string(&rc).unwrap();
    let changed = text.replacen("static size_t vlen = 0;", "static size_t vlen;", 1);
    assert_ne!(text, changed);
    std::fs::write(&rc, changed).unwrap();
    let e = apply(t, &tree2, &files[..1]).unwrap_err();
    assert!(e.contains("0001-"), "{e}");
    let e = openssl::series(&tree2, base, kgen_kernels::kernels(), openssl::Leaks::Refuse).unwrap_err();
    assert!(e.contains("crypto/riscvcap.c") && e.contains("static size_t vlen = 0;") && !e.contains('\n'), "{e}");
    // And kgen refuses another release, and a tree of another release than the one named.
    let e = openssl::series(&tree, "3.4.0", kgen_kernels::kernels(), openssl::Leaks::Refuse).unwrap_err();
    assert!(e.contains("3.4.0") && !e.contains('\n'), "{e}");
    let other = BASES.iter().find(|b| **b != base).expect("more than one release");
    let e = openssl::series(&tree, other, kgen_kernels::kernels(), openssl::Leaks::Refuse).unwrap_err();
    assert!(e.contains(base) && e.contains(other) && !e.contains('\n'), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- the build ----------------------------------------------------------------------------

#[test]
fn patched_libcrypto_keeps_every_global_symbol_of_the_unpatched_one() {
    for &base in BASES {
        keeps_every_global_symbol(base);
    }
}

fn keeps_every_global_symbol(base: &str) {
    let Some(b) = patched(base) else { return };
    let Some(before) = unpatched_globals(base) else { return };
    let t = tools().unwrap();
    let after = globals(&t, &b.b.join("libcrypto.a")).unwrap();
    assert!(before.len() > 8000, "{} symbols in the unpatched libcrypto.a", before.len());
    let gone = lost(before, &after);
    assert!(gone.is_empty(), "OpenSSL {base}: the patched libcrypto.a lost {} global symbols: {gone:?}", gone.len());
    let added: Vec<&String> = after.difference(before).collect();
    eprintln!("OpenSSL {base} libcrypto.a: {} global symbols before, {} after; added: {added:?}", before.len(), after.len());
    // Negative control: a lost symbol is reported.
    let mut fewer = after.clone();
    fewer.remove("AES_encrypt");
    assert_eq!(lost(before, &fewer), vec!["AES_encrypt".to_string()]);
}

// ---- OpenSSL's tests under QEMU, and the paths they took -----------------------------------

/// Checks the counts of a run against what a CPU with `exts` must run: per kernel, the first
/// variant (in dispatch order) whose extensions the CPU has runs every one of its entry
/// points; a later usable variant only where the dispatcher also chooses by length; no
/// variant the CPU lacks extensions for; upstream's code only if no variant is usable.
fn check_paths(counters: &[Counter], exts: &BTreeSet<Ext>, counts: &BTreeMap<String, u64>) -> Result<(), String> {
    let mut errs = Vec::new();
    for name in counts.keys() {
        if !counters.iter().any(|c| &c.name == name) {
            errs.push(format!("{name}: not a counter of the series"));
        }
    }
    let kernels: BTreeSet<&str> = counters.iter().map(|c| c.kernel).collect();
    for k in kernels {
        let cs: Vec<&Counter> = counters.iter().filter(|c| c.kernel == k).collect();
        let usable = |c: &Counter| c.exts.is_subset(exts);
        let first = cs.iter().find(|c| c.variant.is_some() && usable(c)).and_then(|c| c.variant);
        for c in cs {
            let n = counts.get(&c.name).copied().unwrap_or(0);
            let want = match (c.variant, first) {
                (None, None) => Some(true),
                (None, Some(_)) => Some(false),
                (Some(v), Some(f)) if v == f => Some(true),
                (Some(_), _) if usable(c) && c.by_length => None,
                (Some(_), _) => Some(false),
            };
            match want {
                Some(true) if n == 0 => errs.push(format!("{} never ran", c.name)),
                Some(false) if n != 0 => errs.push(format!("{} ran {n} times", c.name)),
                _ => {}
            }
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs.join("; ")) }
}

fn thead_scalar() -> BTreeSet<Ext> {
    [Ext::XTheadBa, Ext::XTheadBb, Ext::XTheadMac, Ext::XTheadMemIdx].into_iter().collect()
}

fn thead_all() -> BTreeSet<Ext> {
    let mut s = thead_scalar();
    s.insert(Ext::XTheadVector);
    s
}


/// Runs TESTS under `qemu -cpu cpu` (OPENSSL_riscvcap = `riscvcap` if given, else
/// detection), checks they pass and the counters against `exts`.
/// QEMU runs of the test suite at once: one per core, at most two (each run is one
/// single-threaded emulator at a time; the builds take [`HEAVY`] alone).
static RUNS: (Mutex<usize>, std::sync::Condvar) = (Mutex::new(0), std::sync::Condvar::new());

struct RunSlot;

impl RunSlot {
    fn take() -> RunSlot {
        let cap = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
        let (m, cv) = &RUNS;
        let mut n = m.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= cap {
            n = cv.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        RunSlot
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let (m, cv) = &RUNS;
        *m.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        cv.notify_one();
    }
}

fn suite(q: &Tool, cpu: &str, riscvcap: Option<&str>, exts: &BTreeSet<Ext>) {
    for &base in BASES {
        suite_on(base, q, cpu, riscvcap, exts);
    }
}

fn suite_on(base: &str, q: &Tool, cpu: &str, riscvcap: Option<&str>, exts: &BTreeSet<Ext>) {
    let Some(built) = patched(base) else { return };
    let _slot = RunSlot::take();
    let b = &built.b;
    let run = format!("{cpu}{}", riscvcap.map(|v| format!("-{v}")).unwrap_or_default());
    let counts_file = b.join(format!("kgen-counts-{run}.txt"));
    let log = b.join(format!("kgen-tests-{run}.log"));
    let _ = std::fs::remove_file(&counts_file);
    let _ = std::fs::remove_file(&log);
    let mut exe_shell = format!("{} -cpu {cpu} -L {SYSROOT}", q.program.display());
    for a in &q.pre_args {
        exe_shell = format!("{a} {exe_shell}");
    }
    let tests = recipes();
    let mut c = Command::new("make");
    c.arg("run_tests").arg(format!("TESTS={}", tests.join(" "))).arg("V=0");
    c.env("EXE_SHELL", format!("{} {exe_shell}", b.join("util/wrap.pl").display()));
    c.env(openssl::COUNTS_ENV, &counts_file);
    match riscvcap {
        Some(v) => c.env("OPENSSL_riscvcap", v),
        None => c.env_remove("OPENSSL_riscvcap"),
    };
    // Each run its own results directory (test-runs/ by default): two run at once.
    c.env("RESULT_D", b.join(format!("test-runs-{run}")));
    c.env_remove("HARNESS_JOBS").stdin(Stdio::null());
    let start = Instant::now();
    let r = logged(c, b, &log, &format!("OpenSSL {base}'s tests under -cpu {cpu}"));
    let secs = start.elapsed().as_secs_f64();
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    r.unwrap();
    assert!(out.contains("Result: PASS"), "OpenSSL {base}, -cpu {cpu}: no `Result: PASS`:\n{}", tail(&log));
    // The last summary is the recipes' (the first is the FIPS preparation step's).
    let files = out.lines().rfind(|l| l.starts_with("Files=")).unwrap_or("").to_string();
    let n: usize = files.strip_prefix("Files=").and_then(|r| r.split(',').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert_eq!(n, tests.len(), "OpenSSL {base}, -cpu {cpu}: {n} recipes ran, not {}: `{files}`", tests.len());
    // The data files of the ciphers, MACs and digests kgen replaces (in the full set, the
    // test_evp recipe ran them with every other file).
    if !full() {
        let t0 = Instant::now();
        for f in EVP_FILES {
            let mut cmd = q.command();
            cmd.args(["-cpu", cpu, "-L", SYSROOT])
                .arg(b.join("test/evp_test"))
                .arg("-config")
                .arg(built.src.join("test/default-and-legacy.cnf"))
                .arg(built.src.join("test/recipes/30-test_evp_data").join(f))
                .env(openssl::COUNTS_ENV, &counts_file)
                .stdin(Stdio::null());
            match riscvcap {
                Some(v) => cmd.env("OPENSSL_riscvcap", v),
                None => cmd.env_remove("OPENSSL_riscvcap"),
            };
            let o = cmd.output().unwrap();
            assert!(o.status.success(), "OpenSSL {base}, -cpu {cpu}: evp_test {f} failed:\n{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        }
        eprintln!("OpenSSL {base}, -cpu {cpu}: evp_test on {} data files passed ({:.0} s)", EVP_FILES.len(), t0.elapsed().as_secs_f64());
    }
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for l in std::fs::read_to_string(&counts_file).unwrap_or_default().lines() {
        let (name, n) = l.rsplit_once(' ').unwrap_or_else(|| panic!("{}: bad line `{l}`", counts_file.display()));
        *counts.entry(name.to_string()).or_default() += n.parse::<u64>().unwrap_or_else(|_| panic!("bad count `{l}`"));
    }
    eprintln!("OpenSSL {base}, -cpu {cpu}{}: {} ({secs:.0} s)", riscvcap.map(|v| format!(" OPENSSL_riscvcap={v}")).unwrap_or_default(), files.trim());
    eprintln!("| counter | calls |\n|---|---|");
    for c in series(base).counters() {
        eprintln!("| {} | {} |", c.name, counts.get(&c.name).copied().unwrap_or(0));
    }
    check_paths(&series(base).counters(), exts, &counts).unwrap_or_else(|e| panic!("OpenSSL {base}, -cpu {cpu}: wrong paths: {e}"));
}

#[test]
fn openssl_tests_pass_on_thead_c906_with_kgen_scalar_paths_found_by_hwprobe() {
    let Some(q) = oracle::qemu() else { return };
    suite(&q, "thead-c906", None, &thead_scalar());
}

#[test]
fn openssl_tests_pass_on_c906fdv_with_kgen_xtheadvector_paths() {
    let Some(q) = oracle::xuantie_qemu() else { return };
    let names: Vec<&str> = thead_all().iter().map(|e| e.name()).collect();
    suite(&q, "c906fdv", Some(&format!("rv64gc_{}", names.join("_"))), &thead_all());
}

/// QEMU's `rv64` has Zba, Zbb, Zbc and Zbs, but this build's OpenSSL finds none of them:
/// its own riscv_hwprobe code needs `<asm/hwprobe.h>`, which Debian 12's cross headers lack.
/// kgen's constant-time AES runs its rv64gc variant, every T-Head kernel upstream's code.
#[test]
fn openssl_tests_pass_on_rv64_with_rv64gc_and_upstream_paths() {
    let Some(q) = oracle::qemu() else { return };
    suite(&q, "rv64", None, &BTreeSet::new());
}

/// `OPENSSL_riscvcap=rv64gc_zbb` on `rv64`: the AES's Zbb variant.
#[test]
fn openssl_tests_pass_on_rv64_with_zbb_named_and_the_zbb_paths() {
    let Some(q) = oracle::qemu() else { return };
    suite(&q, "rv64", Some("rv64gc_zbb"), &[Ext::Zbb].into_iter().collect());
}

#[test]
fn the_path_checker_rejects_wrong_counts() {
    for &base in BASES {
        if have_tree(base) {
            path_checker_controls(base);
        }
    }
}

fn path_checker_controls(base: &str) {
    let counters = series(base).counters();
    // The counts a CPU should produce: one call of each counter the checker requires.
    let ideal = |exts: &BTreeSet<Ext>| -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for k in counters.iter().map(|c| c.kernel).collect::<BTreeSet<_>>() {
            let first = counters.iter().find(|c| c.kernel == k && c.variant.is_some() && c.exts.is_subset(exts)).and_then(|c| c.variant);
            for c in counters.iter().filter(|c| c.kernel == k && c.variant == first) {
                m.insert(c.name.clone(), 1);
            }
        }
        m
    };
    let cpus = [BTreeSet::new(), thead_scalar(), thead_all()];
    for exts in &cpus {
        check_paths(&counters, exts, &ideal(exts)).unwrap();
    }
    // Another CPU's counts fail, as do all counters at once, none, and an unknown name.
    for (i, a) in cpus.iter().enumerate() {
        for (j, b) in cpus.iter().enumerate() {
            if i != j {
                assert!(check_paths(&counters, a, &ideal(b)).is_err(), "counts of CPU {j} accepted for CPU {i}");
            }
        }
        let all: BTreeMap<String, u64> = counters.iter().map(|c| (c.name.clone(), 1)).collect();
        assert!(check_paths(&counters, a, &all).is_err());
        assert!(check_paths(&counters, a, &BTreeMap::new()).is_err());
        let mut stray = ideal(a);
        stray.insert("AES_encrypt_elsewhere".into(), 1);
        assert!(check_paths(&counters, a, &stray).unwrap_err().contains("AES_encrypt_elsewhere"));
    }
    // Where the vector unit is usable, the next variant's counter mode may also run (calls
    // below the crossover), but none of its other functions.
    let all = thead_all();
    let mut short = ideal(&all);
    short.insert("AES_ct_ctr32_encrypt_c906_novector".into(), 1);
    check_paths(&counters, &all, &short).unwrap();
    let mut other = ideal(&all);
    other.insert("AES_ct_encrypt_c906_novector".into(), 1);
    assert!(check_paths(&counters, &all, &other).unwrap_err().contains("AES_ct_encrypt_c906_novector"));
}

/// Runs evp_test on some of OpenSSL's data files under `qemu -cpu cpu` with
/// OPENSSL_riscvcap = `riscvcap`; returns whether it passed and the counts.
fn evp_files(base: &str, q: &Tool, cpu: &str, riscvcap: &str, files: &[&str]) -> (bool, BTreeMap<String, u64>) {
    let built = patched(base).expect("checked by the caller");
    let counts_file = built.b.join(format!("kgen-counts-override-{cpu}.txt"));
    let _ = std::fs::remove_file(&counts_file);
    let mut ok = true;
    for f in files {
        let st = q
            .command()
            .args(["-cpu", cpu, "-L", SYSROOT])
            .arg(built.b.join("test/evp_test"))
            .arg("-config")
            .arg(built.src.join("test/default-and-legacy.cnf"))
            .arg(built.src.join("test/recipes/30-test_evp_data").join(f))
            .env(openssl::COUNTS_ENV, &counts_file)
            .env("OPENSSL_riscvcap", riscvcap)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        ok &= st.success();
    }
    let mut counts = BTreeMap::new();
    for l in std::fs::read_to_string(&counts_file).unwrap_or_default().lines() {
        if let Some((name, n)) = l.rsplit_once(' ') {
            *counts.entry(name.to_string()).or_default() += n.parse::<u64>().unwrap_or(0);
        }
    }
    (ok, counts)
}

#[test]
fn openssl_riscvcap_overrides_detection_and_the_counted_code_is_t_head_code() {
    let Some(q) = oracle::qemu() else { return };
    for &base in BASES {
        if patched(base).is_some() {
            riscvcap_overrides(base, &q);
        }
    }
}

fn riscvcap_overrides(base: &str, q: &Tool) {
    let _slot = RunSlot::take();
    let files = ["evpciph_aes_common.txt", "evpciph_chacha.txt", "evpmac_poly1305.txt", "evpmac_common.txt", "evpmd_sha.txt"];
    // On the T-Head core, OPENSSL_riscvcap=rv64gc turns off every kgen variant that needs
    // an extension (the constant-time AES runs its rv64gc variant).
    let (ok, counts) = evp_files(base, q, "thead-c906", "rv64gc", &files);
    assert!(ok, "OpenSSL {base}: evp_test under thead-c906 with OPENSSL_riscvcap=rv64gc failed");
    check_paths(&series(base).counters(), &BTreeSet::new(), &counts).unwrap_or_else(|e| panic!("OpenSSL {base}: OPENSSL_riscvcap=rv64gc on thead-c906: {e}"));
    // Negative control: naming the T-Head extensions on a core without them runs kgen's
    // T-Head code, which the plain rv64 CPU cannot execute.
    let names: Vec<&str> = thead_scalar().iter().map(|e| e.name()).collect();
    let (ok, _) = evp_files(base, q, "rv64", &format!("rv64gc_{}", names.join("_")), &files[1..2]);
    assert!(!ok, "OpenSSL {base}: kgen's T-Head ChaCha20 ran on -cpu rv64");
}

#[test]
fn every_c_file_the_series_touches_compiles_warning_free_with_and_without_counters() {
    for &base in BASES {
        compiles_warning_free(base);
    }
}

fn compiles_warning_free(base: &str) {
    let Some(built) = patched(base) else { return };
    let Some(gcc) = oracle::gcc() else { return };
    let (b, src) = (&built.b, &built.src);
    let touched: BTreeSet<&str> = series(base).patches.iter().flat_map(|p| p.diffs.iter()).map(|d| d.path.as_str()).collect();
    let mut files: BTreeSet<String> = touched.iter().filter(|p| p.ends_with(".c")).map(|p| p.to_string()).collect();
    // A touched .inc is compiled as the .c files beside it that include it.
    for inc in touched.iter().filter(|p| p.ends_with(".inc")) {
        let (dir, name) = inc.rsplit_once('/').unwrap();
        for e in std::fs::read_dir(src.join(dir)).unwrap().flatten() {
            let f = e.file_name().to_string_lossy().to_string();
            if f.ends_with(".c") && std::fs::read_to_string(e.path()).unwrap_or_default().contains(&format!("#include \"{name}\"")) {
                files.insert(format!("{dir}/{f}"));
            }
        }
    }
    assert!(files.len() >= 6, "{files:?}");
    // libcrypto's flags (its DEFINEs from the build.info files, POLY1305_ASM included).
    let defines = ["AES_ASM", "AES_CTR_ASM", "GHASH_ASM", "INCLUDE_C_CHACHA20", "INCLUDE_C_SHA256", "INCLUDE_C_SHA512", "OPENSSL_CPUID_OBJ", "POLY1305_ASM", "SHA256_ASM", "SHA512_ASM", "OPENSSL_PIC", "NDEBUG"];
    let out = oracle::scratch("openssl-cc");
    // Negative control: the same flags reject a file with a warning (an unused function).
    let bad = out.join("bad.c");
    std::fs::write(&bad, "static int kgen_unused(void) { return 0; }\n").unwrap();
    let mut files: Vec<PathBuf> = files.iter().map(|f| src.join(f)).collect();
    files.insert(0, bad.clone());
    for f in &files {
        for counting in [false, true] {
            let mut c = gcc.command();
            c.arg("-I").arg(b).arg("-I").arg(b.join("include")).arg("-I").arg(src).arg("-I").arg(src.join("include"));
            for d in ["providers/common/include", "providers/implementations/include"] {
                c.arg("-I").arg(src.join(d)).arg("-I").arg(b.join(d));
            }
            c.args(defines.iter().map(|d| format!("-D{d}")));
            if counting {
                c.arg(format!("-D{}", openssl::COUNTING_MACRO));
            }
            c.args(["-fPIC", "-O3", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-Werror", "-c", "-o"]).arg(out.join("x.o")).arg(f);
            let o = c.output().unwrap();
            if *f == bad {
                assert!(!o.status.success(), "a file with an unused function compiled without an error");
                continue;
            }
            assert!(o.status.success(), "{} (counters: {counting}):\n{}", f.display(), String::from_utf8_lossy(&o.stderr));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The patched build's `openssl` program (built once per build directory).
fn openssl_app(built: &Built) -> PathBuf {
    let app = built.b.join("apps/openssl");
    if !app.exists() {
        let t = tools().unwrap();
        let _one = heavy();
        let mut c = t.make.command();
        c.args(["-j2", "apps/openssl"]);
        logged(c, &built.b, &built.b.join("kgen-build.log"), "make apps/openssl").unwrap();
    }
    app
}

/// A real client over a real protocol: the patched build's `s_server -WWW` runs under T-Head's
/// QEMU (`c906fdv`, so the XTheadVector paths run) on 127.0.0.1, and the host's curl
/// downloads a 4 MiB body over TLS 1.3 with AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305
/// and over TLS 1.2 with AES-128-GCM; the body's SHA-256 matches, and the counters show
/// kgen's AEAD code carried the records (AES-GCM: `aes-gcm-ct`; ChaCha20-Poly1305: the
/// stitched kernel). Through a proxy that changes one byte of one
/// encrypted record, each download fails with a bad record MAC.
#[test]
fn tls_downloads_from_the_patched_s_server_under_c906fdv() {
    let (Some(q), Some(client)) = (oracle::xuantie_qemu(), tls::client()) else { return };
    let base = "3.5.7";
    let Some(built) = patched(base) else { return };
    let app = openssl_app(built);
    let dir = oracle::scratch("openssl-tls");
    let site = client.site(&dir);
    let names: Vec<&str> = thead_all().iter().map(|e| e.name()).collect();
    let riscvcap = format!("rv64gc_{}", names.join("_"));
    println!("| download | result | kgen's AEAD calls |\n|---|---|---|");
    for case in &tls::CASES {
        for tamper in [false, true] {
            let port = tls::free_port();
            let counts_file = dir.join(format!("counts-{port}.txt"));
            let mut s = q.command();
            s.current_dir(&site.www)
                .args(["-cpu", "c906fdv", "-L", SYSROOT])
                .arg(&app)
                .args(["s_server", "-accept", &format!("127.0.0.1:{port}"), "-naccept", "1", "-WWW", "-cert"])
                .arg(&site.cert)
                .arg("-key")
                .arg(&site.key)
                .env("OPENSSL_riscvcap", &riscvcap)
                .env(openssl::COUNTS_ENV, &counts_file);
            let d = tls::download(&client, &site, s, "ACCEPT", port, case, tamper, &dir);
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            for l in std::fs::read_to_string(&counts_file).unwrap_or_default().lines() {
                let (name, n) = l.rsplit_once(' ').unwrap();
                *counts.entry(name.to_string()).or_default() += n.parse::<u64>().unwrap();
            }
            let aead: Vec<&str> = if case.aes_gcm { vec!["aes_gcm_ct_encrypt_c906"] } else { vec!["chacha20_poly1305_seal_c906"] };
            let shown: Vec<String> = aead.iter().map(|k| format!("{k}={}", counts.get(*k).copied().unwrap_or(0))).collect();
            let what = if tamper { format!("{} (one record byte changed)", case.name) } else { case.name.to_string() };
            println!("| {what} | {} | {} |", if d.ok { "body's SHA-256 matches" } else { &d.curl }, shown.join(" "));
            if tamper {
                assert!(d.failed_on_mac(), "{what}: curl must fail with a bad record MAC: {}\nserver:\n{}", d.curl, d.server);
            } else {
                assert!(d.ok, "{what}: {}\nserver:\n{}", d.curl, d.server);
                for k in &aead {
                    assert!(counts.get(*k).is_some_and(|&n| n > 0), "{what}: {k} did not run: {counts:?}\nserver:\n{}", d.server);
                }
            }
        }
    }
}

#[path = "common/tls.rs"]
mod tls;
