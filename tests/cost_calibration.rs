//! The C906 cost model against the measured figures of ../shared/FACTS.md ("C906 timing
//! facts": RTL micro-benchmarks, cycles per instruction or per pair) and against the D1's
//! per-instruction table (`d1-instructions.tsv` of ../shared/calibration: a stream of one
//! vector instruction writing one register, at every SEW and LMUL it has). Each case runs
//! its body unrolled 32 and 64 times in a counted loop; the difference removes the loop's
//! own cost. The model must land within 5% of each figure. The same micro-benchmarks run
//! on the RTL itself in tests/rtl_calibration.rs; the whole-kernel figure (OpenSSL's AES,
//! 970 cycles/block) is in tests/sim_upstream.rs.

use kgen_dsl::func::Func;
use kgen_dsl::object::assemble;
use kgen_dsl::target::target;
use kgen_dsl::Abi;
use kgen_macros::kasm;
use kgen_sim::cost::C906;
use kgen_sim::mem::Perm;
use kgen_sim::Machine;

const CODE: u64 = 0x10000;
const BUF: u64 = 0x20_0000;
const ITERS: i64 = 50;

/// Registers before the loop (a0 = a buffer whose first doubleword points to itself) and
/// the `th.vsetvli` the vector cases run under.
struct Setup {
    x: Vec<(u8, u64)>,
    vtype: Option<fn(&mut Func)>,
}

fn cycles(unroll: usize, s: &Setup, body: &dyn Fn(&mut Func)) -> u64 {
    let t = target("c906").unwrap();
    let mut f = Func::new("cal", &t, Abi::Psabi);
    if let Some(vset) = s.vtype {
        vset(&mut f);
    }
    kasm!(f, addi s11, zero, {ITERS}; top:);
    for _ in 0..unroll {
        body(&mut f);
    }
    kasm!(f, addi s11, s11, -1; bnez s11, top;);
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    let code = assemble(&f).unwrap();
    let mut m = Machine::new(&t);
    m.mem.map("code", CODE, 1 << 20, Perm::RX);
    m.mem.write_bytes(CODE, &code.bytes);
    m.mem.map("buf", BUF, 4096, Perm::RW);
    m.mem.write_bytes(BUF, &BUF.to_le_bytes());
    m.hart.x[10] = BUF;
    for &(r, v) in &s.x {
        m.hart.x[r as usize] = v;
    }
    m.cost = Some(C906::new());
    m.hart.pc = CODE;
    m.max_steps = 1 << 26;
    m.run_until(CODE + code.bytes.len() as u64).unwrap();
    m.cost.as_ref().unwrap().cycles()
}

/// Cycles per body in the steady state.
fn per_body(s: &Setup, body: &dyn Fn(&mut Func)) -> f64 {
    let (a, b) = (cycles(32, s, body), cycles(64, s, body));
    (b - a) as f64 / (32 * ITERS) as f64
}

#[test]
fn model_reproduces_the_measurements() {
    const SMALL: u64 = 0x1234_5678;
    const LARGE: u64 = 0x1234_5678_9abc_def1;
    let scalar = |x: &[(u8, u64)]| Setup { x: x.to_vec(), vtype: None };
    type Body = Box<dyn Fn(&mut Func)>;
    let cases: Vec<(&str, f64, Setup, Body)> = vec![
        ("dependent add", 1.0, scalar(&[]), Box::new(|f| kasm!(f, add t0, t0, t1;))),
        ("independent add", 1.0, scalar(&[]), Box::new(|f| kasm!(f, add t0, t1, t2;))),
        ("load + dependent use (per pair)", 3.0, scalar(&[]), Box::new(|f| kasm!(f, lw t0, 8(a0); add t1, t1, t0;))),
        ("load, other, use (per three)", 3.0, scalar(&[]), Box::new(|f| kasm!(f, lw t0, 8(a0); add t2, t2, t3; add t1, t1, t0;))),
        ("pointer chase", 2.0, scalar(&[]), Box::new(|f| kasm!(f, ld a0, 0(a0);))),
        ("dependent mul, operands < 2^32", 3.0, scalar(&[(5, SMALL), (6, 1)]), Box::new(|f| kasm!(f, mul t0, t0, t1;))),
        ("dependent mul, an operand >= 2^32", 6.0, scalar(&[(5, LARGE), (6, 1)]), Box::new(|f| kasm!(f, mul t0, t0, t1;))),
        // Independent: each to its own register (a multiply to a register another multiply
        // has yet to write waits for it: 2.0 on the RTL, tests/rtl_calibration.rs).
        ("independent mul, small (per multiply)", 1.0, scalar(&[(5, SMALL), (6, SMALL)]), Box::new(|f| kasm!(f, mul t2, t0, t1; mul t3, t0, t1; mul t4, t0, t1; mul t5, t0, t1;))),
        ("independent mul, large", 4.0, scalar(&[(5, LARGE), (6, SMALL)]), Box::new(|f| kasm!(f, mul t2, t0, t1;))),
        ("dependent mulw", 3.0, scalar(&[(5, LARGE), (6, LARGE)]), Box::new(|f| kasm!(f, mulw t0, t0, t1;))),
        ("dependent mulhu, large", 6.0, scalar(&[(5, LARGE), (6, u64::MAX)]), Box::new(|f| kasm!(f, mulhu t0, t0, t1;))),
        ("dependent mulhu, small", 3.0, scalar(&[(5, SMALL), (6, SMALL)]), Box::new(|f| kasm!(f, mulhu t0, t0, t1;))),
        ("th.extu", 1.0, scalar(&[]), Box::new(|f| kasm!(f, th.extu t0, t1, 15, 8;))),
        // To distinct registers (two loads to one register in flight make a third wait:
        // 1.5 each on the RTL, tests/rtl_calibration.rs).
        ("th.lrwu (per load)", 1.0, scalar(&[(6, 0)]), Box::new(|f| kasm!(f, th.lrwu t0, a0, t1, 2; th.lrwu t2, a0, t1, 2; th.lrwu t3, a0, t1, 2; th.lrwu t4, a0, t1, 2;))),
        ("th.lrwu + dependent use (per pair)", 3.0, scalar(&[(6, 0)]), Box::new(|f| kasm!(f, th.lrwu t0, a0, t1, 2; xor t2, t2, t0;))),
    ];
    let mut worst: f64 = 0.0;
    let mut report = String::from("| measurement | FACTS.md | model |\n|---|---:|---:|\n");
    for (name, want, setup, body) in &cases {
        let mut got = per_body(setup, body.as_ref());
        if name.ends_with("(per multiply)") || name.ends_with("(per load)") {
            got /= 4.0;
        }
        report.push_str(&format!("| {name} | {want:.1} | {got:.2} |\n"));
        worst = worst.max((got - want).abs() / want);
        assert!((got - want).abs() <= 0.05 * want, "{name}: model {got:.2}, measured {want:.1}");
    }
    println!("{report}worst relative error {:.1}%", 100.0 * worst);
}

#[test]
fn branches() {
    // A taken loop back-edge costs nothing: 32 adds + addi + bnez per iteration.
    let s = Setup { x: vec![], vtype: None };
    let total = cycles(32, &s, &|f: &mut Func| kasm!(f, add t0, t1, t2;));
    let per_iter = total as f64 / ITERS as f64;
    println!("loop of 34 instructions: {per_iter:.2} cycles per iteration");
    assert!((per_iter - 34.0).abs() < 0.5, "{per_iter}");
    // A taken jump whose target is not in the 16-entry BTB: 2 bubbles (64 distinct jumps).
    let jump = |f: &mut Func| {
        let l = f.label();
        f.inst("jal", &[kgen_dsl::Reg::X(0).into(), l.into()]);
        f.bind(l);
    };
    let got = per_body(&s, &jump);
    println!("taken jump, BTB miss: {got:.2} cycles");
    assert!((got - 3.0).abs() <= 0.15, "{got}");
}

/// Negative control: the same harness sees a real difference (a dependent chain of large
/// multiplies is not the figure for small ones).
#[test]
fn harness_distinguishes_cases() {
    let s = Setup { x: vec![(5, 0x1234_5678_9abc_def1), (6, 1)], vtype: None };
    let got = per_body(&s, &|f: &mut Func| kasm!(f, mul t0, t0, t1;));
    assert!((got - 3.0).abs() > 0.5, "{got}");
}

/// Rows of the D1 table the model is not held to within 5%, and why: the divisions'
/// time depends on the data (the model takes about 13 cycles per register, the .vv
/// figures' middle), and the sum/min/max reductions take 5 cycles at LMUL 1 where the model
/// times every reduction as `vredxor` (4), the one kgen's kernels use.
const D1_EXCUSED: &[(&str, Option<u32>, &str)] =
    &[("vdiv", None, "data-dependent"), ("vrem", None, "data-dependent"), ("vred", Some(1), "arithmetic reductions at LMUL 1"), ("vwred", Some(1), "arithmetic reductions at LMUL 1")];

/// Rows every kernel of kgen's uses, which must be in the table and assemble.
const D1_KERNEL_ROWS: &[&str] = &[
    "vadd.vv v8,v16,v24",
    "vxor.vv v8,v16,v24",
    "vsll.vi v8,v16,13",
    "vsrl.vi v8,v16,13",
    "vmv.v.x v8,t0",
    "vid.v v8",
    "vslideup.vi v8,v16,3",
    "vmerge.vvm v8,v16,v24,v0",
    "vmseq.vv v8,v16,v24",
    "vmul.vv v8,v16,v24",
    "vmulhu.vv v8,v16,v24",
    "vmacc.vv v8,v16,v24",
    "vslidedown.vi v8,v16,3",
    "vredxor.vs v8,v16,v24",
    "vrgather.vv v8,v16,v24",
    "vwmulu.vv v8,v16,v24",
    "vext.x.v t1,v8,t0",
];

/// Cycles per instruction of a stream of `inst` under `vsetvli eSEW, mLMUL` on the model
/// (None: kgen's assembler does not take the row's text).
fn d1_stream(inst: &str, sew: u32, lmul: u32) -> Option<f64> {
    per_rep_of(&format!("li t0, 0\nth.vsetvli zero, zero, e{sew}, m{lmul}, d1"), &format!("th.{inst}"))
}

/// The D1's per-instruction table (a stream of one instruction writing one register, every
/// SEW and LMUL): every row kgen's assembler takes is held to 5% at every cell but the
/// excused ones, so each LMUL's timing comes from the measurement; the rows kgen's kernels
/// use must be among them.
#[test]
fn model_reproduces_the_d1_instruction_table() {
    let path = kgen_calibration::d1::calibration_dir().join("d1-instructions.tsv");
    let Ok(text) = std::fs::read_to_string(&path) else {
        kgen_harness::oracle::missing::<()>(&format!("the D1 per-instruction table ({})", path.display()));
        return;
    };
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header").split('\t').collect();
    let mut report = String::from("| D1 instruction (stream writing one register) | SEW/LMUL | D1 | model |\n|---|---|---:|---:|\n");
    let (mut checked, mut by_lmul, mut off, mut excused, mut unknown) = (0, [0usize; 4], Vec::new(), 0, Vec::new());
    let mut seen = std::collections::HashSet::new();
    // The file holds the page's vl=VLMAX table, then its vl=1 table: the first of each row.
    for l in lines {
        let row: Vec<&str> = l.split('\t').collect();
        let inst = row[0];
        if !inst.starts_with('v') || inst.starts_with("vsetvl") || !seen.insert(inst) {
            continue;
        }
        let why = |lmul: u32| D1_EXCUSED.iter().find(|(p, m, _)| inst.starts_with(p) && m.is_none_or(|m| m == lmul)).map(|e| e.2);
        for (k, cell) in row.iter().enumerate().skip(1) {
            let Ok(d1) = cell.trim().parse::<f64>() else { continue };
            let col = header[k];
            let (sew, lmul): (u32, u32) = (col[1..col.find('m').unwrap()].parse().unwrap(), col[col.find('m').unwrap() + 1..].parse().unwrap());
            let Some(got) = d1_stream(inst, sew, lmul) else {
                unknown.push(inst);
                break;
            };
            report.push_str(&format!("| {inst} | e{sew}m{lmul} | {d1:.1} | {got:.2} |\n"));
            if (got - d1).abs() <= 0.05 * d1 {
                checked += 1;
                by_lmul[lmul.trailing_zeros() as usize] += 1;
            } else if why(lmul).is_some() {
                excused += 1;
            } else {
                off.push(format!("{inst} e{sew}m{lmul}: model {got:.2}, D1 {d1:.1}"));
            }
        }
    }
    println!("{report}{checked} cells within 5% (LMUL 1/2/4/8: {by_lmul:?}), {excused} excused ({D1_EXCUSED:?}); rows kgen's assembler does not take: {}", unknown.len());
    for r in D1_KERNEL_ROWS {
        assert!(seen.contains(r) && !unknown.contains(r), "{r} must be in the table and assemble");
    }
    assert!(by_lmul[2] > 300 && by_lmul[3] > 300, "LMUL 4 and 8 cells held: {by_lmul:?}");
    assert!(off.is_empty(), "model off the D1 table by more than 5%:\n{}", off.join("\n"));
}

/// [`per_rep`], or None if the assembler does not take `body`.
fn per_rep_of(setup: &str, body: &str) -> Option<f64> {
    let t = target("c906").unwrap();
    kgen_dsl::asmfile::assemble_file(&format!(".text\n{body}\n"), &t).ok()?;
    Some(per_rep(setup, body))
}

/// Cycles per body of `body` repeated in a loop (the difference of 64 and 32 repeats), on
/// the model, after `setup`.
fn per_rep(setup: &str, body: &str) -> f64 {
    let t = target("c906").unwrap();
    let cycles_of = |n: usize| {
        let src = format!(".text\n.globl f\nf:\n{setup}\nli a4, {ITERS}\n1:\n.rept {n}\n{body}\n.endr\naddi a4, a4, -1\nbnez a4, 1b\nret\n");
        let obj = kgen_dsl::asmfile::assemble_file(&src, &t).unwrap_or_else(|e| panic!("{body}: {e}")).object;
        let mut e = kgen_sim::Env::new(&obj, &t).unwrap().with_cost_model();
        let f = e.sym("f");
        e.call(f, &[]).unwrap().cycles
    };
    (cycles_of(64) - cycles_of(32)) as f64 / (32 * ITERS) as f64
}

/// The divider's rules (docs/cost-model.md, the div/rem row; the RTL figures behind them are
/// in tests/rtl_calibration.rs): time by the operands' sizes, a repeat of the last operands
/// at once, one division at a time.
#[test]
fn the_divider_follows_its_operands() {
    let pair = |a: &str, b: &str, d: &str| per_rep(&format!("li t2, {a}\nli t3, {b}\nli t1, {d}"), "remu a5, t2, t1\nadd a6, a5, t4\nremu a5, t3, t1\nadd a6, a5, t4") / 2.0;
    // 1 for the add, then 6 + (dividend bits - divisor bits) / 2.
    assert_eq!(pair("-1", "-2", "3"), 1.0 + kgen_dsl::timing::division_cycles(64, 2) as f64);
    assert_eq!(pair("0xffff", "0xfffe", "16"), 1.0 + kgen_dsl::timing::division_cycles(16, 5) as f64);
    assert_eq!(pair("5", "6", "0xffff"), 1.0 + kgen_dsl::timing::DIVISION_BASE as f64);
    // The same operands again: short (the negative control of the pair above: same sizes).
    let again = per_rep("li t2, -1\nli t1, 3", "remu a5, t2, t1\nadd a6, a5, t4");
    assert_eq!(again, 1.0 + kgen_dsl::timing::DIVISION_SHORT as f64);
    // Independent work goes on beside a division, the next division waits for it.
    let beside = per_rep("li t2, -1\nli t3, -2\nli t1, 16", "divu a5, t2, t1\nadd a6, t4, t5\nadd a7, t4, t5\ndivu a5, t3, t1\nadd a6, t4, t5\nadd a7, t4, t5") / 2.0;
    assert_eq!(beside, kgen_dsl::timing::division_cycles(64, 5) as f64);
}

/// The vsetvl row (docs/cost-model.md; the D1's `rvv` and `rvv_align_dest` memcpy loops):
/// one issue slot, and the next vector instruction two cycles after it.
#[test]
fn a_vector_instruction_waits_for_the_vsetvl_before_it() {
    let setup = "li t0, 16\naddi a0, sp, -64";
    let next = per_rep(setup, "th.vsetvli t1, t0, e8, m1, d1\nth.vle.v v8, (a0)\naddi t2, t2, 1");
    let apart = per_rep(setup, "th.vsetvli t1, t0, e8, m1, d1\naddi t2, t2, 1\nth.vle.v v8, (a0)");
    assert_eq!(next, apart + 1.0, "a scalar instruction fills the cycle after the vsetvl");
    let alone = per_rep(setup, "th.vsetvli t1, t0, e8, m1, d1\naddi t2, t2, 1");
    assert_eq!(alone, 2.0, "vsetvl takes one issue slot");
}
