//! How the code is laid out, checked: nothing outside kernels/ (and the tests) chooses code
//! by a kernel's or a variant's name; what the commands know of a kernel comes from its
//! `Kernel` description.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    kgen_harness::oracle::repo_root()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The source directories of every crate but the kernels' (and the tests, which may name
/// what they test).
fn outside_kernels() -> Vec<PathBuf> {
    ["src", "dsl/src", "dsl/macros/src", "emit/src", "sim/src", "harness/src", "integrations/src", "calibration/src"].iter().map(|d| root().join(d)).collect()
}

/// The ways code selects by a name: a match arm, a comparison, a look-up by name.
fn selections(name: &str) -> Vec<String> {
    let q = format!("\"{name}\"");
    vec![format!("{q} =>"), format!("{q} |"), format!("| {q}"), format!("== {q}"), format!("!= {q}"), format!("{q} =="), format!("kernel({q})"), format!("variant({q})"), format!("starts_with({q})")]
}

/// Lines of `text` (outside comments) that select by one of `names`.
fn selecting_lines(text: &str, names: &[String]) -> Vec<String> {
    let mut hits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for name in names {
            if selections(name).iter().any(|p| code.contains(p.as_str())) {
                hits.push(format!("{}: {}", n + 1, line.trim()));
            }
        }
    }
    hits
}

#[test]
fn no_code_outside_kernels_is_chosen_by_a_kernel_name() {
    let mut names: Vec<String> = Vec::new();
    for k in kgen_kernels::kernels() {
        names.push(k.name.to_string());
        for v in k.variants {
            // Variant names that are also target names are fine where targets are meant
            // (dsl/src/target.rs); a variant's own name ("32-c906") is not.
            if kgen_dsl::target::target(v.name).is_none() {
                names.push(v.name.to_string());
            }
        }
        // Prefixes of variant names, used to pick a family of variants ("32-").
        for v in k.variants {
            if let Some((first, _)) = v.name.split_once('-') {
                names.push(format!("{first}-"));
            }
        }
    }
    names.sort();
    names.dedup();
    let mut bad = Vec::new();
    let mut files = 0;
    for dir in outside_kernels() {
        for f in rust_files(&dir) {
            files += 1;
            let text = std::fs::read_to_string(&f).unwrap();
            for h in selecting_lines(&text, &names) {
                bad.push(format!("{}:{h}", f.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(files > 40, "only {files} files scanned");
    assert!(bad.is_empty(), "code chosen by a kernel's or variant's name outside kernels/:\n{}", bad.join("\n"));
}

/// The control: the scan finds such a selection where there is one.
#[test]
fn the_kernel_name_scan_finds_a_selection() {
    let names = vec!["aes".to_string(), "32-c906".to_string(), "32-".to_string()];
    let code = "match kernel {\n    \"aes\" => drive_aes(),\n    _ => {}\n}\nif v.name == \"32-c906\" {}\nlet x = kgen_kernels::kernel(\"aes\");\n// \"aes\" => in a comment\nlet label = \"aes\";\nif v.name.starts_with(\"32-\") {}\n";
    let hits = selecting_lines(code, &names);
    assert_eq!(hits.len(), 4, "{hits:#?}");
    assert!(hits[0].starts_with("2:") && hits[1].starts_with("5:") && hits[2].starts_with("6:") && hits[3].starts_with("9:"), "{hits:#?}");
}
