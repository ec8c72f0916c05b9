//! Cross-check of the ISA table against GNU as and objdump.
//!
//! For every form in the table, 50 operand sets (edge values and random ones): the printer's
//! text is assembled by GNU as (2.40 and 2.44 for scalar forms 2.40 knows, 2.44 for the rest)
//! and the bytes must equal the encoder's; the decoder must return the operands; and the
//! text objdump prints for those bytes must parse back to the same instruction.
//! A deliberately corrupted encoding must be caught (negative control).
//!
//! Also keeps `dsl/tests/data/encodings.txt` (8 cases per form, read by kgen-dsl's unit
//! tests with no toolchain) in step: `KGEN_BLESS=1 cargo test --test gnu_as` rewrites it.

use kgen_harness::oracle::{self, Binutils, Tool};
use kgen_dsl::isa::gen::{random_operands, Limits};
use kgen_dsl::isa::{table, Inst, Kind, Row, VDialect};
use kgen_dsl::target::march_of;
use kgen_dsl::text::{parse_operands, print_inst};
use kgen_dsl::{Ext, ExtSet};
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const PER_FORM: usize = 50;
const COMMITTED_PER_FORM: usize = 8;

#[derive(Clone)]
struct Case {
    inst: Inst,
    text: String,
    word: u32,
}

/// The group a row is assembled in: (binutils, -march, label).
fn groups_for(row: &Row) -> Vec<(Binutils, &'static str)> {
    match row.vdialect {
        Some(VDialect::Thead) => vec![(Binutils::V2_44, "xtheadvector")],
        Some(VDialect::V1) => vec![(Binutils::V2_44, "rvv")],
        None if row.ext.iter().all(Ext::known_to_binutils_2_40) => {
            vec![(Binutils::V2_40, "scalar"), (Binutils::V2_44, "scalar")]
        }
        None => vec![(Binutils::V2_44, "scalar")],
    }
}

fn march(v: Binutils, group: &str) -> String {
    let scalar: Vec<Ext> = Ext::ALL
        .iter()
        .copied()
        .filter(|e| {
            !matches!(e, Ext::V | Ext::XTheadVector | Ext::Zvkb | Ext::Zvbb | Ext::Zvbc | Ext::Zvkg)
                && (v == Binutils::V2_44 || e.known_to_binutils_2_40())
        })
        .collect();
    let mut set = ExtSet::of(&scalar);
    match group {
        "xtheadvector" => set = set.union(ExtSet::one(Ext::XTheadVector)),
        "rvv" => set = set.union(ExtSet::of(&[Ext::V, Ext::Zvkb, Ext::Zvbb, Ext::Zvbc, Ext::Zvkg])),
        _ => {}
    }
    // The C extension is left out: kgen never emits compressed instructions.
    march_of(set.without(Ext::C))
}

fn make_cases() -> Vec<Case> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x6b67_656e);
    let mut out = Vec::new();
    for row in table().rows() {
        let mut n = 0;
        while n < PER_FORM {
            let ops = random_operands(row, &mut rng, Limits { max_rel: 1 << 10 });
            let inst = Inst::new(row.form, &ops);
            // Operands that make a more specific row (packw rd, rs, zero = zext.h) are that
            // row's cases, not this one's.
            let exts = kgen_dsl::isa::all_exts_with(row.vdialect.unwrap_or(VDialect::Thead));
            if let Some(d) = table().decode(inst.encode().unwrap(), exts) {
                if d.form != inst.form && table().row(d.form).specializes == Some(row.mnemonic) {
                    continue;
                }
            }
            n += 1;
            let word = inst.encode().expect("generated operands encode");
            out.push(Case { inst, text: print_inst(&inst), word });
        }
    }
    out
}

struct Assembled {
    words: Vec<u32>,
    /// objdump's (mnemonic, operands) per instruction.
    dis: Vec<(String, String)>,
}

/// Assembles `lines`; on rejection returns (index, message) for every rejected line.
fn assemble(v: Binutils, march: &str, lines: &[&str], dir: &Path, tag: &str) -> Result<Assembled, Vec<(usize, String)>> {
    let (Some(asm), Some(objdump)) = (oracle::assembler(v), oracle::objdump(v)) else {
        return Err(vec![]);
    };
    let src = dir.join(format!("{tag}.s"));
    let obj = dir.join(format!("{tag}.o"));
    let mut text = String::from(".option norvc\n.text\n");
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&src, text).unwrap();
    let out = asm.run(&[&format!("-march={march}"), "-o", obj.to_str().unwrap(), src.to_str().unwrap()]).unwrap();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut errs = Vec::new();
        for l in stderr.lines() {
            // "<file>:<line>: Error: ..."
            let mut parts = l.splitn(3, ':');
            let (_, n, msg) = (parts.next(), parts.next(), parts.next());
            if let (Some(n), Some(msg)) = (n.and_then(|n| n.trim().parse::<usize>().ok()), msg) {
                if n >= 3 {
                    errs.push((n - 3, msg.trim().to_string()));
                }
            }
        }
        if errs.is_empty() {
            panic!("{} rejected the file without line numbers: {stderr}", v.label());
        }
        return Err(errs);
    }
    let dump = objdump.run(&["-d", "-M", "no-aliases", obj.to_str().unwrap()]).unwrap();
    assert!(dump.status.success(), "objdump failed: {}", String::from_utf8_lossy(&dump.stderr));
    let mut words = Vec::new();
    let mut dis = Vec::new();
    for l in String::from_utf8_lossy(&dump.stdout).lines() {
        // "   4:\t0205f087          \tth.vle.v\tv1,(a1)"
        let mut f = l.split('\t');
        let (Some(addr), Some(hex)) = (f.next(), f.next()) else { continue };
        if !addr.trim_end().ends_with(':') || addr.trim().is_empty() {
            continue;
        }
        let Ok(w) = u32::from_str_radix(hex.trim(), 16) else { continue };
        let mn = f.next().unwrap_or("").trim().to_string();
        let ops = f.next().unwrap_or("").split('#').next().unwrap_or("").trim().to_string();
        words.push(w);
        dis.push((mn, ops));
    }
    Ok(Assembled { words, dis })
}

/// Compares the encoder, decoder and objdump round trip; returns one message per failure.
fn compare(cases: &[&Case], asm: &Assembled, exts: ExtSet, who: &str) -> Vec<String> {
    let mut bad = Vec::new();
    if asm.words.len() != cases.len() {
        bad.push(format!("{who}: {} instructions from objdump, {} expected", asm.words.len(), cases.len()));
        return bad;
    }
    for (k, c) in cases.iter().enumerate() {
        let gnu = asm.words[k];
        if gnu != c.word {
            bad.push(format!("{who}: `{}`: kgen {:08x}, GNU {gnu:08x} (diff {:08x})", c.text, c.word, gnu ^ c.word));
            continue;
        }
        match table().decode(gnu, exts) {
            Some(d) if d == c.inst => {}
            other => bad.push(format!("{who}: decode({gnu:08x}) = {other:?}, expected `{}`", c.text)),
        }
        let (mn, ops) = &asm.dis[k];
        let pc = 4 * k as i64;
        let parsed = table().lookup(mn).ok_or_else(|| format!("objdump mnemonic `{mn}` unknown")).and_then(|f| {
            // objdump writes targets as an absolute address ("1c <.text+0x1c>").
            let mut rel = |t: &str| t.split_whitespace().next().and_then(|a| u64::from_str_radix(a, 16).ok()).map(|a| (a as i64).wrapping_sub(pc));
            parse_operands(f, ops, &mut rel, &mut |_| None).map_err(|e| e.to_string())
        });
        match parsed {
            Ok(p) if p == c.inst => {}
            Ok(p) => bad.push(format!("{who}: objdump `{mn} {ops}` parses as `{}`, expected `{}`", print_inst(&p), c.text)),
            Err(e) => bad.push(format!("{who}: objdump `{mn} {ops}` does not parse: {e}")),
        }
    }
    bad
}

fn exts_for(group: &str) -> ExtSet {
    let all = kgen_dsl::isa::all_exts_with(if group == "xtheadvector" { VDialect::Thead } else { VDialect::V1 });
    if group == "scalar" {
        all.without(Ext::XTheadVector).without(Ext::V)
    } else {
        all
    }
}

#[test]
fn table_agrees_with_gnu_as_and_objdump() {
    let cases = make_cases();
    let dir = oracle::scratch("gnu_as");
    // Group cases by (binutils, group).
    let mut groups: BTreeMap<(u8, &str), Vec<&Case>> = BTreeMap::new();
    for c in &cases {
        for (v, g) in groups_for(c.inst.row()) {
            groups.entry((v as u8, g)).or_default().push(c);
        }
    }
    let mut failures = Vec::new();
    let mut checked: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for ((v, g), list) in &groups {
        let v = if *v == Binutils::V2_40 as u8 { Binutils::V2_40 } else { Binutils::V2_44 };
        let m = march(v, g);
        let lines: Vec<&str> = list.iter().map(|c| c.text.as_str()).collect();
        let tag = format!("{}-{g}", if v == Binutils::V2_40 { "240" } else { "244" });
        match assemble(v, &m, &lines, &dir, &tag) {
            Ok(a) => {
                failures.extend(compare(list, &a, exts_for(g), &format!("{} {g}", v.label())));
                let forms: std::collections::BTreeSet<_> = list.iter().map(|c| c.inst.form).collect();
                checked.insert(format!("{} -march={m}", v.label()), (forms.len(), list.len()));
            }
            Err(errs) if errs.is_empty() => return, // oracle missing, reported by oracle::missing
            Err(errs) => {
                for (i, msg) in errs.iter().take(200) {
                    failures.push(format!("{} rejected `{}`: {msg}", v.label(), lines[*i]));
                }
                failures.push(format!("{} rejected {} lines in {g}", v.label(), errs.len()));
            }
        }
    }
    for (who, (forms, n)) in &checked {
        println!("cross-check: {who}: {forms} forms, {n} instructions agree (bytes, decode, objdump text)");
    }
    println!("cross-check: {} forms in the table, {} cases, {PER_FORM} per form", table().rows().len(), cases.len());
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));

    // Negative control: a corrupted encoding for one form must be reported.
    let victim = cases.iter().find(|c| c.inst.row().mnemonic == "th.extu").expect("th.extu in table");
    let mut bad = victim.clone();
    bad.word ^= 1 << 12; // a fixed funct3 bit
    let only = vec![&bad];
    let asm = Assembled { words: vec![victim.word], dis: vec![(String::new(), String::new())] };
    let caught = compare(&only, &asm, exts_for("scalar"), "negative control");
    assert!(caught.iter().any(|m| m.contains("th.extu") && m.contains("kgen")), "corrupted encoding not caught: {caught:?}");

    // The committed encodings file (read by kgen-dsl unit tests without a toolchain).
    let mut data = String::from(
        "# kgen ISA encodings agreed with GNU as; regenerate: KGEN_BLESS=1 cargo test --test gnu_as\n# hex\toracle\textensions\tassembly\n",
    );
    let mut per_form: BTreeMap<u16, usize> = BTreeMap::new();
    for c in &cases {
        let n = per_form.entry(c.inst.form.0).or_default();
        if *n >= COMMITTED_PER_FORM {
            continue;
        }
        *n += 1;
        let row = c.inst.row();
        let who: Vec<&str> = groups_for(row).iter().map(|(v, _)| if *v == Binutils::V2_40 { "as-2.40" } else { "as-2.44" }).collect();
        let _ = writeln!(data, "{:08x}\t{}\t{}\t{}", c.word, who.join("+"), row.ext, c.text);
    }
    let path = oracle::repo_root().join("dsl/tests/data/encodings.txt");
    if std::env::var("KGEN_BLESS").is_ok() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &data).unwrap();
        println!("wrote {}", path.display());
    } else {
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(old == data, "{} is out of date: run KGEN_BLESS=1 cargo test --test gnu_as and review the diff", path.display());
    }
    let _ = Kind::X;
    let _: Option<Tool> = None;
}
