//! docs/writing-a-kernel.md cannot rot: every Rust block in it is a verbatim extract of a
//! file the test suite compiles (`<!-- include: PATH#ANCHOR -->` before the block names the
//! `// ANCHOR: NAME` ... `// ANCHOR_END: NAME` region), every `text` block the output of
//! code run here (`<!-- output: NAME -->`, made by [`outputs`]), and every `sh` block's
//! `kgen` commands run and succeed (its `cargo` commands name examples and tests that
//! exist). The failures the guide explains are built here, in kernels that break one rule
//! each, and their errors are the ones the guide prints; so is the kernel that spills.

use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::target::target;
use kgen_dsl::{Abi, Func, Module};
use kgen_macros::kasm;
use std::collections::BTreeMap;
use std::path::Path;

#[allow(dead_code)]
#[path = "../examples/xor.rs"]
mod xor_example;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A two-parameter entry point for the failure examples.
const DEMO: Entry = Entry {
    kernel: "demo",
    prefix: "demo_",
    suffix: "",
    alias: None,
    abis: &[Abi::Psabi],
    params: &[Param::ptr("out", Elem::U8, Out, false), Param::ptr("in", Elem::U8, In, true)],
    ret: Ret::Void,
    summary: "a kernel that breaks one rule",
};

/// An entry point whose vector code runs under a vtype the caller passes.
const DEMO_VTYPE: Entry = Entry {
    params: &[Param::ptr("out", Elem::U32, Out, false), Param::val("vtype", Ty::Size, false)],
    summary: "vector code under the caller's vtype",
    ..DEMO
};

/// Builds `body` as the function of `entry` for `demo_<target>`: the module, or its error.
fn build(entry: &'static Entry, target_name: &str, body: impl FnOnce(&mut Func)) -> Result<Module, String> {
    let t = target(target_name).unwrap();
    let mut f = Func::entry(entry, target_name, &t, Abi::Psabi);
    body(&mut f);
    f.ret();
    let mut m = Module::new("demo", target_name, &t, Abi::Psabi);
    m.add(f, true).map_err(|e| e.to_string())?;
    Ok(m)
}

/// Builds `body` as `demo_<target>` and returns the module error.
fn error_of(target_name: &str, body: impl FnOnce(&mut Func)) -> String {
    error_of_entry(&DEMO, target_name, body)
}

fn error_of_entry(entry: &'static Entry, target_name: &str, body: impl FnOnce(&mut Func)) -> String {
    match build(entry, target_name, body) {
        Ok(_) => panic!("the demo kernel for {target_name} passed its checks"),
        Err(e) => e,
    }
}

/// Every output the guide prints, by name.
fn outputs() -> BTreeMap<&'static str, String> {
    let mut o = BTreeMap::new();
    // The check report of the xor example.
    let t = target("c906").unwrap();
    let mut m = Module::new("xor", "c906", &t, Abi::Psabi);
    m.add(xor_example::xor_bytes("c906", &t), true).unwrap();
    o.insert("xor-report", kgen_dsl::report::Report::of(&m.funcs[0]).lines().join("\n"));

    // ANCHOR: misaligned
    // A 32-bit load from `in`, which may have any alignment, on a core that traps on
    // misaligned loads.
    let e = error_of("rv64gc", |f| {
        let [out, inp] = f.params();
        let x = f.xreg("x");
        kasm!(f, lw {x}, 0({inp}); sw {x}, 0({out}););
    });
    // ANCHOR_END: misaligned
    o.insert("misaligned", e);

    // ANCHOR: secret-branch
    // A branch on a byte of the secret input.
    let e = error_of("c906", |f| {
        let [out, inp] = f.params();
        let x = f.xreg("x");
        kasm!(f, lbu {x}, 0({inp}); beqz {x}, skip; sb {x}, 0({out}); skip:);
    });
    // ANCHOR_END: secret-branch
    o.insert("secret-branch", e);

    // ANCHOR: secret-left
    // A register declared public (`f.public`: the epilogue need not clear it) that holds a
    // byte of the secret input.
    let e = error_of("c906", |f| {
        let [out, inp] = f.params();
        let x = f.xreg("x");
        f.public(x);
        kasm!(f, lbu {x}, 0({inp}); sb zero, 0({out}););
    });
    // ANCHOR_END: secret-left
    o.insert("secret-left", e);

    // ANCHOR: pressure
    // 30 bytes loaded before the first is stored: with `out` and `in`, 32 values live at
    // once, more than the 28 registers the psABI leaves to a kernel.
    let m = build(&DEMO, "c906", |f| {
        let [out, inp] = f.params();
        let v = f.xregs::<30>("v");
        for (k, &r) in v.iter().enumerate() {
            kasm!(f, lbu {r}, {k as i64}({inp}););
        }
        for (k, &r) in v.iter().enumerate() {
            kasm!(f, sb {r}, {k as i64}({out}););
        }
    })
    .unwrap();
    let report = kgen_dsl::report::Report::of(&m.funcs[0]).lines().join("\n");
    // ANCHOR_END: pressure
    assert!(report.contains("spills: ") && !report.contains("spills: none"), "{report}");
    // The spilled bytes come back: out = in, in kgen-sim.
    let mut env = kgen_sim::Env::new(&m.object().unwrap(), &m.target).unwrap();
    let data: Vec<u8> = (0..30u8).map(|k| k.wrapping_mul(37) ^ 0x5a).collect();
    let (pin, pout) = (env.buffer(&data, 3, false), env.buffer(&[0; 30], 5, true));
    env.call(env.lookup(&DEMO.symbol("c906")).unwrap(), &[pout, pin]).unwrap();
    assert_eq!(env.read(pout, 30), data, "the spilling demo kernel copies its input");
    o.insert("pressure", report);

    // ANCHOR: vector-pressure
    // Five 8-register groups live at once (40 of the 32 vector registers), under a vtype
    // known only at run time: a group is spilled only where its vtype is known.
    let e = error_of_entry(&DEMO_VTYPE, "rv64gcv", |f| {
        let [out, vt] = f.params();
        let n = f.xreg("n");
        let g = f.vregs::<5>("g", 8);
        kasm!(f, vsetvl {n}, zero, {vt};);
        for r in g {
            kasm!(f, vid.v {r};);
        }
        for r in &g[1..] {
            kasm!(f, vadd.vv {g[0]}, {g[0]}, {*r};);
        }
        kasm!(f, vse32.v {g[0]}, ({out}););
    });
    // ANCHOR_END: vector-pressure
    o.insert("vector-pressure", e);
    // The same groups under a vtype known at build time: one is spilled, and it builds.
    let m = build(&DEMO_VTYPE, "rv64gcv", |f| {
        let [out, _] = f.params();
        let n = f.xreg("n");
        let g = f.vregs::<5>("g", 8);
        kasm!(f, vsetvli {n}, zero, e32, m8, ta, ma;);
        for r in g {
            kasm!(f, vid.v {r};);
        }
        for r in &g[1..] {
            kasm!(f, vadd.vv {g[0]}, {g[0]}, {*r};);
        }
        kasm!(f, vse32.v {g[0]}, ({out}););
    })
    .unwrap_or_else(|e| panic!("the vector demo under a known vtype: {e}"));
    let spills = &m.funcs[0].frame.spills;
    assert!(!spills.values.is_empty() && spills.stores > 0, "{spills:?}");
    o
}

/// The body of the `// ANCHOR: name` region of `file`, dedented.
fn anchor(file: &str, name: &str) -> String {
    let src = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    // Rust marks its regions with `//` comments, TOML with `#`.
    let c = if file.ends_with(".toml") { "#" } else { "//" };
    let start = format!("{c} ANCHOR: {name}");
    let end = format!("{c} ANCHOR_END: {name}");
    let lines: Vec<&str> = src.lines().collect();
    let a = lines.iter().position(|l| l.trim() == start).unwrap_or_else(|| panic!("{file}: no `{start}`"));
    let b = lines[a..].iter().position(|l| l.trim() == end).unwrap_or_else(|| panic!("{file}: no `{end}`")) + a;
    let body: Vec<&str> = lines[a + 1..b].iter().copied().filter(|l| !l.trim_start().starts_with(&format!("{c} ANCHOR"))).collect();
    let indent = body.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    body.iter().map(|l| if l.len() >= indent { &l[indent..] } else { l.trim() }).collect::<Vec<_>>().join("\n")
}

/// The guide's fenced blocks: (language, the `<!-- ... -->` line before it, body, line).
fn blocks(md: &str) -> Vec<(String, Option<String>, String, usize)> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if let Some(lang) = lines[k].strip_prefix("```") {
            let start = k;
            let marker = (k > 0).then(|| lines[k - 1].trim()).filter(|l| l.starts_with("<!--")).map(String::from);
            k += 1;
            let mut body = Vec::new();
            while k < lines.len() && lines[k] != "```" {
                body.push(lines[k]);
                k += 1;
            }
            out.push((lang.to_string(), marker, body.join("\n"), start + 1));
        }
        k += 1;
    }
    out
}

fn marker<'a>(m: &'a Option<String>, kind: &str) -> Option<&'a str> {
    m.as_deref()?.strip_prefix(&format!("<!-- {kind}: "))?.strip_suffix(" -->")
}

#[test]
fn every_block_of_the_guide_is_real() {
    let md = std::fs::read_to_string(root().join("docs/writing-a-kernel.md")).unwrap();
    let outs = outputs();
    let (mut rust, mut text, mut sh) = (0, 0, 0);
    let mut used = std::collections::BTreeSet::new();
    for (lang, m, body, line) in blocks(&md) {
        match lang.as_str() {
            "rust" | "toml" => {
                let inc = marker(&m, "include").unwrap_or_else(|| panic!("guide line {line}: a {lang} block needs `<!-- include: PATH#ANCHOR -->` before it"));
                let (file, name) = inc.split_once('#').unwrap();
                assert_eq!(body, anchor(file, name), "guide line {line}: the block differs from {file}#{name} (copy the region again)");
                rust += 1;
            }
            "text" => {
                let name = marker(&m, "output").unwrap_or_else(|| panic!("guide line {line}: a text block needs `<!-- output: NAME -->` before it"));
                let want = outs.get(name).unwrap_or_else(|| panic!("guide line {line}: no output `{name}` in tests/guide.rs"));
                assert_eq!(body, *want, "guide line {line}: output `{name}` is now different (copy it again)");
                used.insert(name.to_string());
                text += 1;
            }
            "sh" => {
                for cmd in body.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
                    let words: Vec<&str> = cmd.split_whitespace().collect();
                    match words[0] {
                        "kgen" => {
                            let out = std::process::Command::new(env!("CARGO_BIN_EXE_kgen")).args(&words[1..]).current_dir(std::env::temp_dir()).output().unwrap();
                            assert!(out.status.success(), "guide line {line}: `{cmd}` failed: {}", String::from_utf8_lossy(&out.stderr));
                        }
                        "cargo" => {
                            for (flag, dir) in [("--example", "examples"), ("--test", "tests")] {
                                if let Some(p) = words.iter().position(|w| *w == flag) {
                                    let f = root().join(dir).join(format!("{}.rs", words[p + 1]));
                                    assert!(f.exists(), "guide line {line}: `{cmd}` names {}, which does not exist", f.display());
                                }
                            }
                        }
                        other => panic!("guide line {line}: `{other}` in a sh block (only kgen and cargo commands are checked)"),
                    }
                    sh += 1;
                }
            }
            other => panic!("guide line {line}: a `{other}` block (rust, toml, text and sh blocks are checked)"),
        }
    }
    assert!(rust >= 10 && text >= 4 && sh >= 4, "{rust} rust, {text} text blocks, {sh} commands");
    assert_eq!(used.len(), outs.len(), "every output the test makes is shown: {:?} of {:?}", used, outs.keys().collect::<Vec<_>>());
}

/// The extraction itself: a region is found, dedented and stripped of nested markers;
/// a changed block is noticed (negative control).
#[test]
fn anchors_are_extracted_exactly() {
    let a = anchor("examples/xor.rs", "entry");
    assert!(a.starts_with("use kgen_dsl::entry::") && a.ends_with("};"), "{a}");
    let md = "<!-- include: examples/xor.rs#entry -->\n```rust\nfn changed() {}\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 1);
    assert_eq!(marker(&b[0].1, "include"), Some("examples/xor.rs#entry"));
    assert_ne!(b[0].2, a);
}

