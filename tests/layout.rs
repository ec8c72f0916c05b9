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

/// A crate's modules (by file: `isa/vector/mod.rs` is `isa::vector`) and the modules each
/// one uses (`crate::a::b` paths, and `super::` paths in submodules), resolved to the
/// longest module prefix. A module's use of its own submodules (the parent assembling its
/// parts) is containment, not an edge.
fn module_graph(src: &Path) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for f in rust_files(src) {
        let rel = f.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|p| p == "mod" || p == "lib" || p == "main") {
            parts.pop();
        }
        files.insert(parts.join("::"), std::fs::read_to_string(&f).unwrap());
    }
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let resolve = |segs: &[&str]| -> Option<String> {
        (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| names.contains(m))
    };
    let mut g = BTreeMap::new();
    for (m, text) in &files {
        let mut uses = BTreeSet::new();
        let own: Vec<&str> = if m.is_empty() { vec![] } else { m.split("::").collect() };
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            // crate::a::b... and use crate::{a, b::c}
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + 7..];
                let paths: Vec<String> = if let Some(inner) = rest.strip_prefix('{') {
                    inner.split('}').next().unwrap_or("").split(',').map(|p| p.trim().to_string()).collect()
                } else {
                    vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).next().unwrap_or("").to_string()]
                };
                for p in paths {
                    let segs: Vec<&str> = p.split("::").filter(|s| !s.is_empty() && *s != "*").collect();
                    if let Some(t) = resolve(&segs) {
                        uses.insert(t);
                    }
                }
            }
            for (i, _) in code.match_indices("super::") {
                if i >= 2 && &code[i - 2..i] == "::" {
                    continue; // counted with the first `super::`
                }
                let mut base = own.clone();
                let mut rest = &code[i..];
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
                let tail: Vec<&str> = rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).next().unwrap_or("").split("::").filter(|s| !s.is_empty()).collect();
                let mut segs = base.clone();
                segs.extend(tail);
                let t = resolve(&segs).unwrap_or_else(|| base.join("::"));
                uses.insert(t);
            }
        }
        // Not an edge: the module itself, and its own submodules.
        uses.retain(|t| t != m && !(m.is_empty() || t.starts_with(&format!("{m}::"))) || (m.is_empty() && t.is_empty()));
        uses.remove(m);
        if m.is_empty() {
            uses.clear(); // the crate root assembles the crate
        }
        g.insert(m.clone(), uses);
    }
    g
}

/// The cycles of a graph (each as its modules in order), one per strongly connected set.
fn cycles(g: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's strongly connected components.
    struct T<'a> {
        g: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        index: std::collections::HashMap<&'a str, usize>,
        low: std::collections::HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: std::collections::HashSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.g.contains_key(w) {
                continue;
            }
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T { g, index: Default::default(), low: Default::default(), stack: Vec::new(), on: Default::default(), out: Vec::new() };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Every crate's modules import each other without a cycle.
#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    let mut modules = 0;
    for dir in outside_kernels().into_iter().chain([root().join("kernels/src")]) {
        let g = module_graph(&dir);
        modules += g.len();
        for c in cycles(&g) {
            found.push(format!("{}: {}", dir.strip_prefix(root()).unwrap().display(), c.join(" <-> ")));
        }
    }
    assert!(modules > 50, "{modules} modules");
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The control: a graph with a cycle is found, one without is not, and a parent's use of
/// its own submodule is not an edge.
#[test]
fn the_cycle_finder_finds_cycles() {
    let dir = kgen_harness::oracle::scratch("layout-cycles");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("p")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a; mod b; mod c; mod p;").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::X;").unwrap();
    std::fs::write(dir.join("b.rs"), "use crate::{c::Y, p};").unwrap();
    std::fs::write(dir.join("c.rs"), "fn f() { crate::a::g(); }").unwrap();
    std::fs::write(dir.join("p/mod.rs"), "mod q; use q::Z; pub fn h() { self::q::z() }").unwrap();
    std::fs::write(dir.join("p/q.rs"), "use super::*;").unwrap();
    let g = module_graph(&dir);
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".into(), "c".into()]], "{g:#?}");
    std::fs::write(dir.join("c.rs"), "fn f() {}").unwrap();
    assert!(cycles(&module_graph(&dir)).is_empty());
}

/// The builder's API: what a kernel may take from kgen-dsl (the declarations and the
/// builder, not the lowering, the schedulers, the allocator or the checks, which run on
/// what the kernel declares).
const BUILDER_API: &[&str] = &["entry", "func", "kernel", "target", "isa::VDialect", "object::DataObj", "Abi", "BuildError", "Ext", "Func", "Label", "Module", "Opnd", "Reg", "Slot"];

/// The `kgen_dsl::` paths of `text` outside the builder's API.
fn beyond_the_builder(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("kgen_dsl::") {
            let rest = &code[i + 10..];
            let paths: Vec<String> = if let Some(inner) = rest.strip_prefix('{') {
                inner.split('}').next().unwrap_or("").split(',').map(|p| p.trim().to_string()).collect()
            } else {
                vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).next().unwrap_or("").to_string()]
            };
            for p in paths.into_iter().filter(|p| !p.is_empty()) {
                if !BUILDER_API.iter().any(|a| p == *a || p.starts_with(&format!("{a}::"))) {
                    out.push(p);
                }
            }
        }
    }
    out
}

#[test]
fn kernels_use_only_the_builders_api() {
    let mut bad = Vec::new();
    for dir in [root().join("kernels/src"), root().join("examples/siphash/src")] {
        for f in rust_files(&dir) {
            for p in beyond_the_builder(&std::fs::read_to_string(&f).unwrap()) {
                bad.push(format!("{}: kgen_dsl::{p}", f.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(bad.is_empty(), "kernels reach past the builder's API:\n{}", bad.join("\n"));
    // The control.
    assert_eq!(beyond_the_builder("use kgen_dsl::sched::MemOrder;\nuse kgen_dsl::{func::Func, lower::lower};\nuse kgen_dsl::func::MemOrder;"), vec!["sched::MemOrder", "lower::lower"]);
}
