//! Golden files: every output of every kernel, compared byte for byte; a difference is
//! shown as a unified diff. `kgen goldens --bless` rewrites them.

use crate::outputs;
use kgen_emit::Compat;
use similar::TextDiff;
use std::path::Path;

/// Compares (or rewrites) the goldens under `dir`. Returns an error listing every file
/// that differs, with its diff.
pub fn run(dir: &Path, bless: bool) -> Result<(), String> {
    let mut report = String::new();
    let mut expected = std::collections::BTreeSet::new();
    for o in outputs::all() {
        for c in [Compat::Binutils244, Compat::Binutils240] {
            let rel = if c == Compat::Binutils240 { format!("binutils-2.40/{}", o.path()) } else { o.path() };
            let path = dir.join(&rel);
            expected.insert(path.clone());
            let new = o.render(c)?;
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
                report.push_str(&format!("{}", diff.unified_diff().context_radius(3).header(&format!("goldens/{rel}"), &format!("generated {rel}"))));
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
