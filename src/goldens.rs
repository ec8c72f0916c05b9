//! Golden files: every output of every kernel, and the files `kgen go-patches` adds to
//! x/crypto (kgen's own text; the patches themselves carry x/crypto's as context and are
//! not kept), compared byte for byte; a difference is shown as a unified diff. `kgen
//! goldens --bless` rewrites them.

use crate::outputs;
use kgen_emit::Compat;
use similar::TextDiff;
use std::path::Path;

/// Compares (or rewrites) the goldens under `dir`. Returns an error listing every file
/// that differs, with its diff.
pub fn run(dir: &Path, bless: bool) -> Result<(), String> {
    let mut report = String::new();
    let mut expected = std::collections::BTreeSet::new();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for b in crate::gopatches::BASES {
        for (rel, text) in crate::gopatches::added_files(b.name)? {
            files.push((format!("go-patches/{}/{rel}", b.name), text.into_bytes()));
        }
    }
    for o in outputs::all() {
        for c in [Compat::Binutils244, Compat::Binutils240] {
            // Objects and Go files do not depend on the assembler version.
            if c == Compat::Binutils240 && (o.format == crate::outputs::Format::O || o.abi == kgen_dsl::Abi::Go) {
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
        Err(format!("goldens differ (review, then `cargo run -- goldens --bless`):\n{report}"))
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
