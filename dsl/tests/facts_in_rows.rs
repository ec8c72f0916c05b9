//! Instruction facts live in the ISA table's rows: outside `dsl/src/isa/`, no code asks what
//! an instruction is by comparing its mnemonic (control flow, result extension, multiplier
//! operands, vtype effects are row fields). Lookups by name to *build* an instruction are
//! fine; comparing a row's mnemonic to decide what it does is not.

use std::path::{Path, PathBuf};

/// Lines that decide something from a mnemonic string.
fn offenders(src: &str) -> Vec<(usize, String)> {
    let pats = [".mnemonic ==", ".mnemonic !=", ".mnemonic.starts_with", ".mnemonic.ends_with", ".mnemonic.contains", "== row.mnemonic"];
    src.lines()
        .enumerate()
        .filter(|(_, l)| {
            // The code before any comment.
            let code = l.split("//").next().unwrap_or("");
            pats.iter().any(|p| code.contains(p)) || (code.contains("match ") && code.contains(".mnemonic") && code.trim_end().ends_with('{'))
        })
        .map(|(k, l)| (k + 1, l.trim().to_string()))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_mnemonic_comparisons_outside_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut files = Vec::new();
    for d in ["dsl/src", "dsl/macros/src", "emit/src", "sim/src", "src", "kernels/src"] {
        rust_files(&root.join(d), &mut files);
    }
    let isa = root.join("dsl/src/isa");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&isa)) {
        for (line, text) in offenders(&std::fs::read_to_string(f).unwrap()) {
            found.push(format!("{}:{line}: {text}", f.strip_prefix(&root).unwrap().display()));
        }
    }
    assert!(files.len() > 30, "{} files scanned", files.len());
    assert!(found.is_empty(), "instruction facts decided by mnemonic outside the ISA table:\n{}", found.join("\n"));
}

#[test]
fn the_scan_finds_what_it_looks_for() {
    // Negative controls: each form of the comparisons the scan refuses.
    for bad in [
        "if row.mnemonic == \"jalr\" { return; }",
        "let ret = i.row().mnemonic != \"ret\";",
        "    match row.mnemonic {",
        "if r.mnemonic.starts_with(\"th.v\") {}",
        "x if x == row.mnemonic => 1,",
    ] {
        assert_eq!(offenders(bad).len(), 1, "{bad}");
    }
    assert!(offenders("let form = table().form(\"addi\"); // row.mnemonic == is fine in a comment").is_empty());
    assert!(offenders("format!(\"`{}` is control flow\", row.mnemonic)").is_empty());
}
