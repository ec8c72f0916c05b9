//! `kgen openssl-patches`: the `git format-patch` series that makes OpenSSL use kgen's
//! kernels on riscv64, with run-time selection.
//!
//! The series is written against an unpacked OpenSSL tree (`--src`, by default the one
//! `scripts/setup-toolchain.sh` puts in `.toolchain/openssl-<base>`): each patch is a list of
//! edits (a few anchor lines of OpenSSL's file and kgen's lines beside them) made to the
//! tree as the earlier patches left it, and the diff context comes from the tree. Patch 1
//! adds the T-Head capability bits and their detection; then one patch per kernel adds the
//! kernel's assembly (perlasm shims under `crypto/*/asm/`, their `build.info` lines) and its
//! dispatcher. Which kernel fills which place is the kernels' own fact (their OpenSSL
//! hooks, [`kgen_dsl::kernel::hooks::Openssl`]), and everything a dispatcher calls is taken
//! from their entry points ([`kgen_dsl::entry::Entry`]): symbols, prototypes, and the
//! extensions each variant's code uses (its run-time condition).

mod c;
mod patches;
pub mod tree;

use kgen_dsl::kernel::Kernel;
use std::path::{Path, PathBuf};
pub use c::Counter;
use tree::{FileDiff, Tree};

/// The OpenSSL releases kgen knows the hook points of.
pub const BASES: &[&str] = &["3.5.7", "3.6.3", "4.0.2"];

/// The command recorded in every file and commit message of the series.
pub fn command(base: &str) -> String {
    format!("kgen openssl-patches --base {base} --out DIR")
}

/// The macro a counting build defines (`./Configure ... -DOPENSSL_KGEN_COUNTERS`).
pub const COUNTING_MACRO: &str = "OPENSSL_KGEN_COUNTERS";
/// The environment variable naming the file a counting build appends its counts to.
pub const COUNTS_ENV: &str = "OPENSSL_KGEN_COUNTERS";

/// One patch of the series.
#[derive(Clone, Debug)]
pub struct Patch {
    /// File-name part (`riscv64-chacha20-from-kgen`).
    pub slug: String,
    pub subject: String,
    /// The commit message's body (wrapped lines).
    pub body: String,
    pub diffs: Vec<FileDiff>,
    /// The counters the patch's dispatcher keeps in a counting build.
    pub counters: Vec<Counter>,
}

/// The whole series.
#[derive(Clone, Debug)]
pub struct Series {
    pub base: String,
    pub patches: Vec<Patch>,
}

/// Where the OpenSSL tree is by default.
pub fn default_src(base: &str) -> PathBuf {
    kgen_harness::oracle::toolchain_dir().join(format!("openssl-{base}"))
}

/// The tree's version from VERSION.dat (`3.5.7`).
fn tree_version(src: &Path) -> Result<String, String> {
    let p = src.join("VERSION.dat");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e} (give --src: an unpacked OpenSSL source tree)", p.display()))?;
    let field = |k: &str| {
        text.lines().find_map(|l| l.strip_prefix(k).and_then(|v| v.strip_prefix('='))).map(str::trim).ok_or_else(|| format!("{}: no {k}", p.display()))
    };
    Ok(format!("{}.{}.{}", field("MAJOR")?, field("MINOR")?, field("PATCH")?))
}

/// Whether a series may use kernels whose code declares a secret-dependent leak (T-table
/// AES and the stitched AES-GCM built on it: their table addresses depend on the key and
/// the data, which a process sharing the core's cache can observe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaks {
    /// Only kernels without a declared leak fill OpenSSL's slots (the default); a slot that
    /// only a leaky kernel fills keeps upstream's code.
    Refuse,
    /// `--with-leaky-kernels`: leaky kernels fill their slots too, and where a leaky and a
    /// constant-time kernel fill the same slot, the leaky one (the faster) does.
    Allow,
}

/// Builds the series for OpenSSL `base` from the tree at `src`, for the OpenSSL hooks of
/// `kernels`.
pub fn series(src: &Path, base: &str, kernels: &[&'static Kernel], leaks: Leaks) -> Result<Series, String> {
    if !BASES.contains(&base) {
        return Err(format!("unknown --base `{base}`: kgen knows the hook points of OpenSSL {}", BASES.join(", ")));
    }
    let v = tree_version(src)?;
    if v != base {
        return Err(format!("{}: the tree is OpenSSL {v}, not {base}", src.display()));
    }
    let mut t = Tree::open(src);
    let patches = patches::all(&mut t, base, kernels, leaks)?;
    Ok(Series { base: base.to_string(), patches })
}

impl Series {
    /// The series as files: (`0001-slug.patch`, mail text).
    pub fn files(&self) -> Vec<(String, String)> {
        let n = self.patches.len();
        self.patches.iter().enumerate().map(|(i, p)| (format!("{:04}-{}.patch", i + 1, p.slug), mail(p, i + 1, n))).collect()
    }

    /// Every counter of a counting build.
    pub fn counters(&self) -> Vec<Counter> {
        self.patches.iter().flat_map(|p| p.counters.iter().cloned()).collect()
    }

    /// Writes the patches into `out` (created if needed); returns their paths.
    pub fn write(&self, out: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut paths = Vec::new();
        for (name, text) in self.files() {
            let p = out.join(name);
            std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
            paths.push(p);
        }
        Ok(paths)
    }
}

/// One patch as `git format-patch --zero-commit` writes it (no date: files kgen writes
/// carry no timestamps).
fn mail(p: &Patch, i: usize, n: usize) -> String {
    let mut s = String::new();
    s.push_str("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n");
    s.push_str(&format!("From: {} <kgen@invalid>\n", kgen_emit::GENERATOR));
    s.push_str(&format!("Subject: [PATCH {i:0w$}/{n}] {}\n\n", p.subject, w = n.to_string().len()));
    s.push_str(&p.body);
    if !p.body.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("---\n");
    let width = p.diffs.iter().map(|d| d.path.len()).max().unwrap_or(0);
    let (mut adds, mut dels) = (0, 0);
    for d in &p.diffs {
        let (a, r) = tree::counts(d);
        adds += a;
        dels += r;
        let bar = format!("{}{}", "+".repeat(a.min(40)), "-".repeat(r.min(40)));
        s.push_str(&format!(" {:<width$} | {:>4} {bar}\n", d.path, a + r));
    }
    s.push_str(&format!(" {} file{} changed, {adds} insertion{}(+), {dels} deletion{}(-)\n", p.diffs.len(), plural(p.diffs.len()), plural(adds), plural(dels)));
    for d in p.diffs.iter().filter(|d| d.old.is_none()) {
        s.push_str(&format!(" create mode 100644 {}\n", d.path));
    }
    s.push('\n');
    for d in &p.diffs {
        s.push_str(&tree::git_diff(d));
    }
    s.push_str(&format!("-- \n{}\n\n", kgen_emit::GENERATOR));
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Wraps `text` at 72 columns: paragraphs are separated by blank lines; a line starting
/// with `- ` starts a bullet (continued with two spaces); lines starting with two spaces or
/// `|` (commands, tables) are kept as they are.
pub(crate) fn wrap(text: &str) -> String {
    fn fill(out: &mut String, words: &str, first: &str, rest: &str) {
        let mut line = first.to_string();
        let mut empty = true;
        for w in words.split_whitespace() {
            if !empty && line.len() + 1 + w.len() > 72 {
                out.push_str(&line);
                out.push('\n');
                line = rest.to_string();
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(w);
            empty = false;
        }
        out.push_str(&line);
        out.push('\n');
    }
    let mut out = String::new();
    for para in text.trim_end().split("\n\n") {
        if !out.is_empty() {
            out.push('\n');
        }
        let mut prose = String::new();
        let mut bullet: Option<String> = None;
        let flush = |out: &mut String, prose: &mut String, bullet: &mut Option<String>| {
            if !prose.trim().is_empty() {
                fill(out, prose, "", "");
            }
            prose.clear();
            if let Some(b) = bullet.take() {
                fill(out, &b, "- ", "  ");
            }
        };
        for l in para.lines() {
            if l.starts_with("  ") || l.starts_with('|') {
                flush(&mut out, &mut prose, &mut bullet);
                out.push_str(l);
                out.push('\n');
            } else if let Some(b) = l.strip_prefix("- ") {
                flush(&mut out, &mut prose, &mut bullet);
                bullet = Some(b.to_string());
            } else if let Some(b) = bullet.as_mut() {
                b.push(' ');
                b.push_str(l);
            } else {
                prose.push(' ');
                prose.push_str(l);
            }
        }
        flush(&mut out, &mut prose, &mut bullet);
    }
    out
}
