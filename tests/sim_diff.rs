//! Differential test of kgen-sim against the real emulators: random straight-line and
//! looped sequences (24 instructions each, random registers, vector state and memory) run
//! in kgen-sim and, as the same bytes, in a static riscv64 harness under QEMU: upstream
//! QEMU 10 for the scalar families and RVV 1.0, T-Head's QEMU for XTheadVector. All
//! registers, vl/vtype/vxsat and every changed word of memory must agree.
//!
//! `KGEN_DIFF_SEQS` sets sequences per family (default 2500, i.e. 10,000 in all).
//! The negative control replaces th.extu's semantics with an off-by-one version and
//! requires the comparison to notice.

use kgen_harness::oracle::{self, Tool};
use kgen_dsl::isa::{table, Form};
use kgen_sim::diff::{differences, family_rows, forms_of, generate_runnable, harness_asm, parse_output, run_sim, Family, Seq, State, HARNESS_C};
use rand::SeedableRng;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const LEN: usize = 24;
const BATCH: usize = 250;

fn per_family() -> usize {
    std::env::var("KGEN_DIFF_SEQS").ok().and_then(|s| s.parse().ok()).unwrap_or(2500)
}

fn emulator(f: Family) -> Option<Tool> {
    match f.qemu().0 {
        "xuantie" => oracle::xuantie_qemu(),
        _ => oracle::qemu(),
    }
}

/// Builds and runs one batch under QEMU; returns the final states.
fn run_qemu(f: Family, seqs: &[Seq], dir: &Path, tag: &str) -> Option<Vec<State>> {
    let gcc = oracle::gcc()?;
    let qemu = emulator(f)?;
    let asm = dir.join(format!("{tag}.S"));
    let c = dir.join("harness.c");
    let bin = dir.join(tag);
    std::fs::write(&asm, harness_asm(seqs)).unwrap();
    std::fs::write(&c, HARNESS_C).unwrap();
    let out = gcc
        .command()
        .args(["-static", "-O1", "-march=rv64gc", "-o"])
        .arg(&bin)
        .arg(&c)
        .arg(&asm)
        .output()
        .unwrap();
    assert!(out.status.success(), "building the harness: {}", String::from_utf8_lossy(&out.stderr));
    let run = qemu.command().args(["-cpu", f.qemu().1]).arg(&bin).output().unwrap();
    if !run.status.success() && seqs.len() > 1 {
        // Find the sequence and the instruction the emulator refused.
        for (n, s) in seqs.iter().enumerate() {
            if run_qemu_checked(f, std::slice::from_ref(s), dir, "single").is_none() {
                let _ = s.prefix(0);
                let detail = refused_instruction(f, dir).unwrap_or_default();
                panic!("{} -cpu {} refused sequence {n} ({}) which kgen-sim runs:\n{}\n{detail}", f.qemu().0, f.qemu().1, run.status, listing(s));
            }
        }
    }
    assert!(run.status.success(), "{} {} failed: {}\n{}", f.qemu().0, f.qemu().1, run.status, String::from_utf8_lossy(&run.stderr));
    let states = parse_output(&String::from_utf8_lossy(&run.stdout), f.dialect().is_some());
    assert_eq!(states.len(), seqs.len(), "harness printed {} states for {} sequences", states.len(), seqs.len());
    Some(states)
}

/// Reruns the last single-sequence harness with instruction logging and names the
/// instruction the emulator refused.
fn refused_instruction(f: Family, dir: &Path) -> Option<String> {
    let qemu = emulator(f)?;
    let log = dir.join("refused.log");
    let one = if f.qemu().0 == "xuantie" { "-singlestep" } else { "-one-insn-per-tb" };
    qemu.command().args([one, "-d", "in_asm", "-D"]).arg(&log).args(["-cpu", f.qemu().1]).arg(dir.join("single")).output().ok()?;
    let text = std::fs::read_to_string(&log).ok()?;
    let last = text.lines().rev().find(|l| l.starts_with("0x"))?;
    let word = u32::from_str_radix(last.split_whitespace().nth(1)?, 16).ok()?;
    let inst = table().decode(word, f.exts())?;
    Some(format!("QEMU refused `{}` ({word:#010x})", kgen_dsl::text::print_inst(&inst)))
}

/// Runs one small batch; None if the emulator fails.
fn run_qemu_checked(f: Family, seqs: &[Seq], dir: &Path, tag: &str) -> Option<()> {
    let gcc = oracle::gcc()?;
    let qemu = emulator(f)?;
    let asm = dir.join(format!("{tag}.S"));
    let bin = dir.join(tag);
    std::fs::write(&asm, harness_asm(seqs)).unwrap();
    std::fs::write(dir.join("harness.c"), HARNESS_C).unwrap();
    let out = gcc.command().args(["-static", "-O1", "-march=rv64gc", "-o"]).arg(&bin).arg(dir.join("harness.c")).arg(&asm).output().unwrap();
    assert!(out.status.success());
    qemu.command().args(["-cpu", f.qemu().1]).arg(&bin).output().unwrap().status.success().then_some(())
}

fn listing(s: &Seq) -> String {
    s.insts.iter().map(|i| format!("    {}", kgen_dsl::text::print_inst(i))).collect::<Vec<_>>().join("\n")
}

/// Runs every prefix of a failing sequence in both to name the first instruction whose
/// result differs.
fn first_divergence(f: Family, s: &Seq, dir: &Path) -> String {
    let prefixes: Vec<Seq> = (1..=s.insts.len()).map_while(|k| s.prefix(k)).collect();
    if prefixes.is_empty() {
        return String::new();
    }
    let Some(q) = run_qemu(f, &prefixes, dir, "prefixes") else { return String::new() };
    let mut before = (s.vtype, 0u64, s.x);
    for (p, qs) in prefixes.iter().zip(&q) {
        let Ok(st) = run_sim(p, &BTreeMap::new()) else { continue };
        let d = differences(&st, qs);
        if !d.is_empty() {
            let i = p.insts.last().unwrap();
            let regs: Vec<String> = i
                .row()
                .ops
                .iter()
                .zip(i.args())
                .filter(|(o, _)| matches!(o.kind, kgen_dsl::isa::Kind::X) && o.role != kgen_dsl::isa::Role::Def)
                .map(|(_, r)| format!("{}={:#x}", kgen_dsl::text::XNAMES[*r as usize], before.2[*r as usize]))
                .collect();
            return format!(
                "\n  first differing instruction: `{}` (before it: vtype {:#x}, vl {}; {}):\n    {}",
                kgen_dsl::text::print_inst(i),
                before.0,
                before.1,
                regs.join(" "),
                d.join("\n    ")
            );
        }
        before = (st.vtype, st.vl, st.x);
    }
    "\n  (no prefix differs)".into()
}

fn check_family(f: Family) {
    let n = per_family();
    let dir = oracle::scratch(&format!("sim_diff_{f:?}"));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xd1ff ^ f as u64);
    let mut tested: BTreeMap<Form, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut minimized = 0;
    let mut done = 0;
    let mut looped = 0;
    let mut insts = 0;
    for b in 0..n.div_ceil(BATCH) {
        let count = BATCH.min(n - b * BATCH);
        let seqs: Vec<Seq> = (0..count).map(|_| generate_runnable(f, &mut rng, LEN)).collect();
        let Some(qemu) = run_qemu(f, &seqs, &dir, &format!("batch{b}")) else { return };
        for (s, q) in seqs.iter().zip(&qemu) {
            let sim = run_sim(s, &BTreeMap::new()).expect("generated sequences run in the simulator");
            let d = differences(&sim, q);
            if !d.is_empty() && failures.len() < 15 {
                let first = if minimized < 6 {
                    minimized += 1;
                    first_divergence(f, s, &dir)
                } else {
                    String::new()
                };
                failures.push(format!("{}:\n{}\n  differences:\n    {}{first}", f.name(), listing(s), d.join("\n    ")));
            } else if !d.is_empty() {
                failures.push(String::new());
            }
            for fm in forms_of(s) {
                *tested.entry(fm).or_default() += 1;
            }
            looped += s.looped as usize;
            insts += s.insts.len();
        }
        done += count;
    }
    let rows = family_rows(f);
    let focus: BTreeSet<Form> = rows.iter().copied().filter(|fm| table().row(*fm).ext.iter().any(|e| !matches!(e, kgen_dsl::Ext::I | kgen_dsl::Ext::M | kgen_dsl::Ext::Zicsr | kgen_dsl::Ext::Zifencei))).collect();
    let untested: Vec<&str> = focus.iter().filter(|fm| !tested.contains_key(fm)).map(|fm| table().row(*fm).mnemonic).collect();
    println!(
        "{}: {done} sequences ({looped} looped), {insts} instructions, {} of {} forms exercised, {} disagreements; QEMU {} -cpu {}",
        f.name(),
        tested.len(),
        rows.len(),
        failures.len(),
        f.qemu().0,
        f.qemu().1
    );
    assert!(failures.is_empty(), "{} sequences disagree with QEMU:\n{}", failures.len(), failures.iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join("\n\n"));
    assert!(untested.is_empty() || done < 1000, "forms never exercised: {untested:?}");
}

#[test]
fn scalar_matches_qemu() {
    check_family(Family::Scalar);
}

#[test]
fn xthead_scalar_matches_qemu() {
    check_family(Family::XTheadScalar);
}

#[test]
fn xtheadvector_matches_thead_qemu() {
    check_family(Family::XTheadVector);
}

#[test]
fn rvv_matches_qemu() {
    check_family(Family::Rvv);
}

#[test]
fn a_wrong_semantic_is_caught() {
    let f = Family::XTheadScalar;
    let extu = table().form("th.extu");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let seqs: Vec<Seq> = (0..60).map(|_| generate_runnable(f, &mut rng, LEN)).filter(|s| forms_of(s).contains(&extu)).collect();
    assert!(!seqs.is_empty());
    let dir = oracle::scratch("sim_diff_negative");
    let Some(qemu) = run_qemu(f, &seqs, &dir, "neg") else { return };
    // Correct semantics agree...
    for (s, q) in seqs.iter().zip(&qemu) {
        assert!(differences(&run_sim(s, &BTreeMap::new()).unwrap(), q).is_empty());
    }
    // ...an off-by-one th.extu (one bit too many) does not.
    let mut over: BTreeMap<Form, kgen_dsl::isa::Sem> = BTreeMap::new();
    over.insert(
        extu,
        Box::new(|h, _, o| {
            let (msb, lsb) = ((o[2] as u32 + 1).min(63), o[3] as u32);
            let w = msb - lsb + 1;
            let v = h.x(o[1]) >> lsb;
            h.set_x(o[0], if w >= 64 { v } else { v & ((1 << w) - 1) });
            Ok(())
        }),
    );
    let caught = seqs.iter().zip(&qemu).filter(|(s, q)| run_sim(s, &over).map(|st| !differences(&st, q).is_empty()).unwrap_or(true)).count();
    println!("negative control: wrong th.extu caught in {caught} of {} sequences", seqs.len());
    assert!(caught > 0, "a wrong th.extu went unnoticed");
}
