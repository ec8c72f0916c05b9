//! Golden files: every output of every kernel, and the files `kgen go-patches` and `kgen
//! linux-patches` add to x/crypto, Go and Linux (kgen's own text; the patches themselves carry x/crypto's as context and are
//! not kept), compared byte for byte; a difference is shown as a unified diff. `kgen
//! goldens --bless` rewrites them.

use crate::outputs;
use kgen_dsl::kernel::hooks::Hook;
use kgen_dsl::kernel::Kernel;
use kgen_emit::Compat;
use kgen_integrations::{gostd, xcrypto};
use similar::TextDiff;
use std::path::Path;

/// The first line of the README.md that marks a directory as a goldens tree.
pub const MARK: &str = "# Goldens";

const README: &str = "# Goldens

Every output of every kernel (`kgen all`), plus the `--asm-compat binutils-2.40` assembly under
`binutils-2.40/`, plus under `go-patches/<base>/` the files `kgen go-patches` adds to
golang.org/x/crypto or to Go's own tree (GOROOT), and under `linux-patches/<base>/` the files
`kgen linux-patches` adds to Linux (but its `.S` files, which are the Linux outputs under
`binutils-2.40/`). The patches themselves are not kept: their
context lines are upstream's text. Of the bases after the first, only the files that differ from the first base's in more
than the base name of their regenerating command are kept. `kgen goldens` regenerates them
all and fails with a unified diff when anything changed. After reviewing a change, rewrite
them with:

    kgen goldens --bless

and commit the diff together with the change that caused it.
";

/// Whether `dir` is a goldens tree (its README.md opens with [`MARK`]).
pub fn is_goldens_tree(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("README.md")).is_ok_and(|t| t.lines().next() == Some(MARK))
}

/// Checks that `dir` can be compared (a goldens tree) or blessed (a goldens tree, or a
/// directory that does not exist yet or is empty): the error says why not.
pub fn check_dir(dir: &Path, bless: bool) -> Result<(), String> {
    if is_goldens_tree(dir) {
        return Ok(());
    }
    if dir.exists() && !dir.is_dir() {
        return Err(format!("goldens: {} is a file, not a goldens tree{}", dir.display(), if bless { ": refusing to bless into it" } else { "" }));
    }
    let empty = match std::fs::read_dir(dir) {
        Ok(mut rd) => rd.next().is_none(),
        Err(_) if !dir.exists() => true,
        Err(e) => return Err(format!("goldens: {}: {e}", dir.display())),
    };
    if bless && empty && !dir.is_file() {
        return Ok(());
    }
    if bless {
        Err(format!("goldens: {} is not a goldens tree (no README.md opening with `{MARK}`): refusing to bless into it", dir.display()))
    } else {
        Err(format!("goldens: {} is not a goldens tree (no README.md opening with `{MARK}`); `kgen goldens --bless --dir {}` creates one", dir.display(), dir.display()))
    }
}

/// Compares (or rewrites) the goldens of `kernels` under `dir`. Returns an error listing
/// every file that differs, with its diff.
pub fn run(kernels: &[&'static Kernel], dir: &Path, bless: bool) -> Result<(), String> {
    check_dir(dir, bless)?;
    let mut report = String::new();
    let mut expected = std::collections::BTreeSet::new();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    if !is_goldens_tree(dir) {
        files.push(("README.md".into(), README.as_bytes().to_vec()));
    }
    let go_hooks = kernels.iter().any(|k| k.hooks.iter().any(|h| matches!(h, Hook::XCrypto(_))));
    if go_hooks {
        // The first base's files in full; of a later base, only the files that differ from
        // the first base's in more than the regenerating command's base name.
        let first = xcrypto::BASES[0].name;
        let firsts = xcrypto::added_files(first, kernels)?;
        for b in xcrypto::BASES {
            for (rel, text) in xcrypto::added_files(b.name, kernels)? {
                let same = firsts.iter().any(|(r, t)| *r == rel && *t == text.replace(&format!("--base {} ", b.name), &format!("--base {first} ")));
                if b.name == first || !same {
                    files.push((format!("go-patches/{}/{rel}", b.name), text.into_bytes()));
                }
            }
        }
    }
    if kernels.iter().any(|k| k.hooks.iter().any(|h| matches!(h, Hook::GoStd(_)))) {
        for b in gostd::BASES {
            for (rel, text) in gostd::added_files(b.name, kernels)? {
                files.push((format!("go-patches/{}/{rel}", b.name), text.into_bytes()));
            }
        }
    }
    if kernels.iter().any(|k| k.hooks.iter().any(|h| matches!(h, Hook::Linux(_)))) {
        for b in kgen_integrations::linux::BASES {
            for (rel, text) in kgen_integrations::linux::added_files(b.name, kernels)? {
                files.push((format!("linux-patches/{}/{rel}", b.name), text.into_bytes()));
            }
        }
    }
    for o in outputs::all(kernels) {
        for c in [Compat::Binutils244, Compat::Binutils240] {
            // Objects and Go files do not depend on the assembler version.
            if c == Compat::Binutils240 && (o.format == outputs::Format::O || o.abi == kgen_dsl::Abi::Go) {
                continue;
            }
            for (file, new) in o.render(c)? {
                files.push((if c == Compat::Binutils240 { format!("binutils-2.40/{file}") } else { file }, new));
            }
        }
    }
    for (rel, new) in files {
        let path = dir.join(&rel);
        expected.insert(path.clone());
        if bless {
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
            }
            std::fs::write(&path, &new).map_err(|e| format!("{}: {e}", path.display()))?;
            continue;
        }
        let old = std::fs::read(&path).unwrap_or_default();
        if old != new {
            let (a, b) = (String::from_utf8_lossy(&old), String::from_utf8_lossy(&new));
            let diff = TextDiff::from_lines(a.as_ref(), b.as_ref());
            if old.is_empty() || new.contains(&0) {
                report.push_str(&format!("goldens/{rel}: {} bytes, generated {} bytes\n", old.len(), new.len()));
            } else {
                report.push_str(&format!("{}", diff.unified_diff().context_radius(3).header(&format!("goldens/{rel}"), &format!("generated {rel}"))));
            }
        }
    }
    // Files in the directory that no output produces any more.
    if !bless {
        for f in walk(dir) {
            if !expected.contains(&f) {
                report.push_str(&format!("{}: no longer generated (remove it, or bless)\n", f.display()));
            }
        }
    }
    if bless {
        println!("blessed {} golden files under {}", expected.len(), dir.display());
        return Ok(());
    }
    if report.is_empty() {
        println!("{} golden files match", expected.len());
        Ok(())
    } else {
        Err(format!("goldens differ (review, then `kgen goldens --bless`):\n{report}"))
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else if p.file_name().is_some_and(|n| n != "README.md") {
                out.push(p);
            }
        }
    }
    out
}
