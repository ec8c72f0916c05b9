//! The spilling allocator under pressure. Random functions keep more values live than
//! there are registers (integer and vector, across a loop with an early exit and a normal
//! one); each is a small program that a reference interpreter here runs too. After
//! lowering (allocation with spills, frame, wipes) the function passes every check, and in
//! kgen-sim it stores the same values and returns the same exit as the interpreter, with
//! no secret left in the registers or the stack. Constants among the values (`li`s and
//! shifts of one) may be remade where read instead; nothing else may. Negative controls: the checker rejects a
//! reload from a slot no path wrote, and a spilled secret whose wipe was removed.

use kgen_dsl::check::{check_func, Check};
use kgen_dsl::entry::{Access, Elem, Ret, Ty};
use kgen_dsl::func::{Func, Item, LeakKind};
use kgen_dsl::isa::VDialect;
use kgen_dsl::lower::lower;
use kgen_dsl::object::{assemble, build_object};
use kgen_dsl::target::target;
use kgen_dsl::{Abi, Opnd, Reg};
use kgen_macros::kasm;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

/// Integer values (more than any ABI's 27 allocatable registers) and vector values (more
/// than 31) of one program.
const XS: usize = 36;
const VS: usize = 36;
/// Elements per vector value: e32, vl = 4.
const LANES: usize = 4;
/// Constants `consts[0] << (k + 1)` made after the `li`s.
const CSHIFTS: usize = 3;
/// Constants made by `li`.
const NC: usize = 6;

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Xor,
    Or,
    And,
    Sll(u8),
    Srl(u8),
}

impl Op {
    fn random(rng: &mut impl Rng) -> Op {
        match rng.random_range(0..7) {
            0 => Op::Add,
            1 => Op::Sub,
            2 => Op::Xor,
            3 => Op::Or,
            4 => Op::And,
            5 => Op::Sll(rng.random_range(1..31)),
            _ => Op::Srl(rng.random_range(1..31)),
        }
    }
    /// The op with a register operand in place of a shift by an immediate (`and`).
    fn no_shift(self) -> Op {
        match self {
            Op::Sll(_) | Op::Srl(_) => Op::And,
            o => o,
        }
    }
    fn x(self, a: u64, b: u64) -> u64 {
        match self {
            Op::Add => a.wrapping_add(b),
            Op::Sub => a.wrapping_sub(b),
            Op::Xor => a ^ b,
            Op::Or => a | b,
            Op::And => a & b,
            Op::Sll(k) => a << k,
            Op::Srl(k) => a >> k,
        }
    }
    fn w(self, a: u32, b: u32) -> u32 {
        match self {
            Op::Add => a.wrapping_add(b),
            Op::Sub => a.wrapping_sub(b),
            Op::Xor => a ^ b,
            Op::Or => a | b,
            Op::And => a & b,
            Op::Sll(k) => a << k,
            Op::Srl(k) => a >> k,
        }
    }
}

/// One step of the loop body: `d = a op b` over integer values, over vector values, or a
/// vector value plus an integer one (`vadd.vx`).
#[derive(Clone, Copy, Debug)]
enum Step {
    X(Op, usize, usize, usize),
    /// `d = a op c` with c one of the constants.
    Xc(Op, usize, usize, usize),
    V(Op, usize, usize, usize),
    Vx(usize, usize, usize),
}

#[derive(Clone, Debug)]
struct Prog {
    vector: bool,
    /// Constants made before the loop: `li` of each of these, then CSHIFTS shifts of the
    /// first (the allocator may remake them where read instead of spilling them).
    consts: Vec<u64>,
    body: Vec<Step>,
    /// Exit early when integer value `exit` has its low 3 bits clear (tested each round).
    exit: usize,
}

impl Prog {
    fn random(rng: &mut impl Rng, vector: bool) -> Prog {
        let mut body = Vec::new();
        for _ in 0..rng.random_range(40..80) {
            let k = if vector { rng.random_range(0..4) } else { rng.random_range(0..2) * 3 };
            let s = match k {
                3 => Step::Xc(Op::random(rng).no_shift(), rng.random_range(0..XS), rng.random_range(0..XS), rng.random_range(0..NC + CSHIFTS)),
                0 => Step::X(Op::random(rng), rng.random_range(0..XS), rng.random_range(0..XS), rng.random_range(0..XS)),
                1 => Step::V(Op::random(rng), rng.random_range(0..VS), rng.random_range(0..VS), rng.random_range(0..VS)),
                _ => Step::Vx(rng.random_range(0..VS), rng.random_range(0..VS), rng.random_range(0..XS)),
            };
            body.push(s);
        }
        // Every value is read somewhere after the loop (they are all stored), so every one
        // stays live through the whole loop: more than the registers hold.
        let consts = (0..NC).map(|_| rng.random()).collect();
        Prog { vector, consts, body, exit: rng.random_range(0..XS) }
    }

    /// Every constant: the `li`s, then the shifts of the first.
    fn constants(&self) -> Vec<u64> {
        let mut c = self.consts.clone();
        c.extend((0..CSHIFTS).map(|k| self.consts[0] << (k + 1)));
        c
    }

    /// The reference: (values stored, return value).
    fn run(&self, x0: &[u64], v0: &[[u32; LANES]], rounds: u64) -> (Vec<u64>, Vec<[u32; LANES]>, u64) {
        let (mut x, mut v) = (x0.to_vec(), v0.to_vec());
        let c = self.constants();
        for _ in 0..rounds {
            for s in &self.body {
                match *s {
                    Step::X(op, d, a, b) => x[d] = op.x(x[a], x[b]),
                    Step::Xc(op, d, a, k) => x[d] = op.x(x[a], c[k]),
                    Step::V(op, d, a, b) => {
                        let (va, vb) = (v[a], v[b]);
                        v[d] = std::array::from_fn(|l| op.w(va[l], vb[l]));
                    }
                    Step::Vx(d, a, b) => {
                        let (va, s) = (v[a], x[b] as u32);
                        v[d] = std::array::from_fn(|l| va[l].wrapping_add(s));
                    }
                }
            }
            if x[self.exit] & 7 == 0 {
                return (x, v, 1);
            }
        }
        (x, v, 0)
    }

    /// The function: `uint64_t f(uint64_t *out, const uint64_t *in, size_t rounds)`, `in`
    /// secret: XS integer values, then VS vectors of LANES words; `out` the same layout.
    fn build(&self, tgt: &str) -> Func {
        let t = target(tgt).unwrap();
        let mut f = Func::new("pressure", &t, Abi::Psabi);
        let out = f.arg("out", Ty::Ptr { elem: Elem::U64, access: Access::Out, align: 8 }, false);
        let inp = f.arg("inp", Ty::Ptr { elem: Elem::U64, access: Access::In, align: 8 }, true);
        let n = f.arg("rounds", Ty::Size, false);
        f.result = Ret::Size;
        let x: Vec<Reg> = (0..XS).map(|k| f.xreg(&format!("x{k}"))).collect();
        let v: Vec<Reg> = if self.vector { (0..VS).map(|k| f.vreg(&format!("v{k}"), 1)).collect() } else { Vec::new() };
        let d = t.vdialect();
        let (p, t0) = (f.xreg("p"), f.xreg("t"));
        f.public(p);
        for (k, &r) in x.iter().enumerate() {
            kasm!(f, ld {r}, {8 * k as i64}({inp}););
        }
        let c: Vec<Reg> = (0..NC + CSHIFTS).map(|k| f.xreg(&format!("c{k}"))).collect();
        for (k, &v) in self.consts.iter().enumerate() {
            f.li(c[k], v as i64);
        }
        for k in 0..CSHIFTS {
            kasm!(f, slli {c[NC + k]}, {c[0]}, {k as i64 + 1};);
        }
        if self.vector {
            let vl = i64::try_from(LANES).unwrap();
            kasm!(f, li {t0}, {vl}; vsetvli zero, {t0}, e32, m1, ta, ma;);
            for (k, &r) in v.iter().enumerate() {
                kasm!(f, addi {p}, {inp}, {(8 * XS + 16 * k) as i64};);
                match d {
                    Some(VDialect::Thead) => kasm!(f, th.vle.v {r}, ({p});),
                    _ => kasm!(f, vle32.v {r}, ({p});),
                }
            }
        }
        kasm!(f, top: beqz {n}, done;);
        for s in &self.body {
            match *s {
                Step::X(op, dd, a, b) => x_op(&mut f, op, x[dd], x[a], x[b]),
                Step::Xc(op, dd, a, k) => x_op(&mut f, op, x[dd], x[a], c[k]),
                Step::V(op, dd, a, b) => {
                    let (rd, ra, rb) = (v[dd], v[a], v[b]);
                    match op {
                        Op::Add => kasm!(f, vadd.vv {rd}, {ra}, {rb};),
                        Op::Sub => kasm!(f, vsub.vv {rd}, {ra}, {rb};),
                        Op::Xor => kasm!(f, vxor.vv {rd}, {ra}, {rb};),
                        Op::Or => kasm!(f, vor.vv {rd}, {ra}, {rb};),
                        Op::And => kasm!(f, vand.vv {rd}, {ra}, {rb};),
                        Op::Sll(k) => kasm!(f, vsll.vi {rd}, {ra}, {k as i64};),
                        Op::Srl(k) => kasm!(f, vsrl.vi {rd}, {ra}, {k as i64};),
                    }
                }
                Step::Vx(dd, a, b) => {
                    let (rd, ra, rb) = (v[dd], v[a], x[b]);
                    kasm!(f, vadd.vx {rd}, {ra}, {rb};);
                }
            }
        }
        let e = x[self.exit];
        kasm!(f, andi {t0}, {e}, 7;);
        f.leaking(LeakKind::SecretBranch, "the test's early exit depends on the data", |f| kasm!(f, beqz {t0}, early;));
        kasm!(f, addi {n}, {n}, -1; j top;);
        for (label_done, ret) in [(true, 0), (false, 1)] {
            if label_done {
                kasm!(f, done:);
            } else {
                kasm!(f, early:);
            }
            for (k, &r) in x.iter().enumerate() {
                kasm!(f, sd {r}, {8 * k as i64}({out}););
            }
            for (k, &r) in v.iter().enumerate() {
                kasm!(f, addi {p}, {out}, {(8 * XS + 16 * k) as i64};);
                match d {
                    Some(VDialect::Thead) => kasm!(f, th.vse.v {r}, ({p});),
                    _ => kasm!(f, vse32.v {r}, ({p});),
                }
            }
            f.ret_imm(ret);
        }
        f.finish().unwrap_or_else(|e| panic!("{tgt}: {e}"))
    }
}

/// rd = ra op rb (a shift by its immediate, rb unused).
fn x_op(f: &mut Func, op: Op, rd: Reg, ra: Reg, rb: Reg) {
    match op {
        Op::Add => kasm!(f, add {rd}, {ra}, {rb};),
        Op::Sub => kasm!(f, sub {rd}, {ra}, {rb};),
        Op::Xor => kasm!(f, xor {rd}, {ra}, {rb};),
        Op::Or => kasm!(f, or {rd}, {ra}, {rb};),
        Op::And => kasm!(f, and {rd}, {ra}, {rb};),
        Op::Sll(k) => kasm!(f, slli {rd}, {ra}, {k as i64};),
        Op::Srl(k) => kasm!(f, srli {rd}, {ra}, {k as i64};),
    }
}

fn bytes_of(x: &[u64], v: &[[u32; LANES]]) -> Vec<u8> {
    let mut b: Vec<u8> = x.iter().flat_map(|w| w.to_le_bytes()).collect();
    for l in v {
        b.extend(l.iter().flat_map(|w| w.to_le_bytes()));
    }
    b
}

#[test]
fn random_high_pressure_functions_compute_the_reference() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let mut spilled = (0usize, 0usize, 0usize);
    for (tgt, vector) in [("rv64gc", false), ("c906", false), ("c906", true), ("rv64gcv", true)] {
        for _ in 0..6 {
            let prog = Prog::random(&mut rng, vector);
            let mut f = prog.build(tgt);
            let frame = lower(&mut f).unwrap_or_else(|e| panic!("{tgt}: {e}"));
            assert!(!frame.spills.values.is_empty(), "{tgt}: {XS} integer and {VS} vector values must not fit in registers");
            spilled.0 += frame.spills.stores;
            spilled.1 += frame.spills.reloads;
            // Spill slots whose values are never live together share bytes (the merged ones
            // are left with none); the runs below check the values survive it.
            spilled.2 += f.slots.iter().filter(|s| s.spill && s.size == 0).count();
            assert!(frame.spills.remade.iter().all(|n| n.starts_with('c')), "{tgt}: only constants can be remade: {:?}", frame.spills.remade);
            let vspill = frame.spills.values.iter().any(|n| n.starts_with('v'));
            assert_eq!(vspill, vector, "{tgt}: vector values spilled iff there are vector values: {:?}", frame.spills.values);
            let errors: Vec<_> = check_func(&f, Abi::Psabi).into_iter().filter(|x| !x.declared).collect();
            assert!(errors.is_empty(), "{tgt}: the allocated function fails the checks: {errors:?}");
            let obj = build_object(&[(assemble(&f).unwrap(), true)], &[]);
            let t = target(tgt).unwrap();
            for rounds in [0u64, 1, 3, 17] {
                let x0: Vec<u64> = (0..XS).map(|_| rng.random()).collect();
                let v0: Vec<[u32; LANES]> = (0..if vector { VS } else { 0 }).map(|_| rng.random()).collect();
                let (x1, v1, ret) = prog.run(&x0, &v0, rounds);
                let mut e = Env::new(&obj, &t).unwrap();
                let input = bytes_of(&x0, &v0);
                let inp = e.buffer(&input, 0, false);
                let out = e.buffer(&vec![0u8; input.len()], 0, true);
                let r = e.call(e.sym("pressure"), &[out, inp, rounds]).unwrap_or_else(|err| panic!("{tgt}: {err}"));
                assert_eq!(r.a0, ret, "{tgt}, {rounds} rounds: exit");
                assert_eq!(e.read(out, input.len()), bytes_of(&x1, &v1), "{tgt}, {rounds} rounds: values");
                // The values were secret (computed from `in`): none stays in a register, a
                // vector register or the stack. (Only values with at least 6 non-zero
                // bytes are looked for: small ones could match a counter or the result.)
                let all = bytes_of(&x1, &v1);
                for w in all.chunks(8).filter(|w| w.iter().filter(|&&b| b != 0).count() >= 6) {
                    let left: Vec<String> = e.scan_for_secret(w, 8);
                    assert!(left.is_empty(), "{tgt}, {rounds} rounds: secret value {w:02x?} left in {left:?}");
                }
            }
        }
    }
    assert!(spilled.0 > 0 && spilled.1 > 0 && spilled.2 > 0, "(stores, reloads, shared spill slots): {spilled:?}");
}

/// `uint64_t f(uint64_t *out, const uint64_t *in, size_t rounds)`: 30 small constants and
/// shifts of the first, all read in a loop that folds them into `in[0]` `rounds` times.
/// More constants than registers: the allocator remakes them where read (one `addi` or
/// `slli` each) and stores none.
fn constants_func(tgt: &str, shift_src_changes: bool) -> Func {
    let t = target(tgt).unwrap();
    let mut f = Func::new("consts", &t, Abi::Psabi);
    let out = f.arg("out", Ty::Ptr { elem: Elem::U64, access: Access::Out, align: 8 }, false);
    let inp = f.arg("inp", Ty::Ptr { elem: Elem::U64, access: Access::In, align: 8 }, true);
    let n = f.arg("rounds", Ty::Size, false);
    f.result = Ret::Size;
    let acc = f.xreg("acc");
    kasm!(f, ld {acc}, 0({inp}););
    let c: Vec<Reg> = (0..30).map(|k| f.xreg(&format!("c{k}"))).collect();
    for (k, &r) in c.iter().enumerate().take(27) {
        kasm!(f, addi {r}, zero, {CONST_BASE + 37 * k as i64};);
    }
    for k in 0..3 {
        kasm!(f, slli {c[27 + k]}, {c[0]}, {k as i64 + 1};);
    }
    kasm!(f, top: beqz {n}, done;);
    for (k, &r) in c.iter().enumerate() {
        if k % 2 == 0 {
            kasm!(f, add {acc}, {acc}, {r};);
        } else {
            kasm!(f, xor {acc}, {acc}, {r};);
        }
    }
    if shift_src_changes {
        // c0 changes in the loop: its shifts are not the same value each round any more.
        kasm!(f, addi {c[0]}, {c[0]}, 1;);
    }
    kasm!(f, addi {n}, {n}, -1; j top;);
    kasm!(f, done:);
    kasm!(f, sd {acc}, 0({out}););
    f.ret_imm(0);
    f.finish().unwrap()
}

const CONST_BASE: i64 = -1000;

fn constants_reference(x: u64, rounds: u64, shift_src_changes: bool) -> u64 {
    let mut c: Vec<u64> = (0..27).map(|k| (CONST_BASE + 37 * k) as u64).collect();
    let c0 = c[0];
    c.extend((0..3).map(|k| c0 << (k + 1)));
    let mut acc = x;
    for _ in 0..rounds {
        for (k, &v) in c.iter().enumerate() {
            acc = if k % 2 == 0 { acc.wrapping_add(v) } else { acc ^ v };
        }
        if shift_src_changes {
            c[0] = c[0].wrapping_add(1);
            // (the shifts were made once, before the loop)
        }
    }
    acc
}

#[test]
fn constants_are_remade_where_read_not_spilled() {
    for tgt in ["rv64gc", "c906"] {
        for changes in [false, true] {
            let mut f = constants_func(tgt, changes);
            let frame = lower(&mut f).unwrap_or_else(|e| panic!("{tgt}: {e}"));
            let sp = &frame.spills;
            assert!(!sp.remade.is_empty(), "{tgt}: {sp:?}");
            assert!(sp.remade.iter().all(|n| n.starts_with('c')), "{tgt}: {sp:?}");
            if changes {
                // c0 is written twice: neither it nor its shifts can be remade.
                for k in [0, 27, 28, 29] {
                    assert!(!sp.remade.contains(&format!("c{k}")), "{tgt}: c{k} must not be remade when c0 changes: {sp:?}");
                }
            } else {
                assert!(sp.values.iter().all(|n| !n.starts_with('c')), "{tgt}: constants need no slot: {sp:?}");
            }
            let errors: Vec<_> = check_func(&f, Abi::Psabi).into_iter().filter(|x| !x.declared).collect();
            assert!(errors.is_empty(), "{tgt}: {errors:?}");
            let obj = build_object(&[(assemble(&f).unwrap(), true)], &[]);
            let t = target(tgt).unwrap();
            for rounds in [0u64, 1, 5] {
                let x = 0x0123_4567_89ab_cdefu64;
                let mut e = Env::new(&obj, &t).unwrap();
                let inp = e.buffer(&x.to_le_bytes(), 0, false);
                let out = e.buffer(&[0u8; 8], 0, true);
                e.call(e.sym("consts"), &[out, inp, rounds]).unwrap_or_else(|err| panic!("{tgt}: {err}"));
                let got = u64::from_le_bytes(e.read(out, 8).try_into().unwrap());
                assert_eq!(got, constants_reference(x, rounds, changes), "{tgt}, c0 changes: {changes}, {rounds} rounds");
            }
        }
    }
}

/// The slot the allocator chose for a spilled value, and the position of its first store.
fn first_spill_store(f: &Func) -> Option<(usize, i64)> {
    f.items.iter().enumerate().find_map(|(k, it)| match it {
        Item::Inst(i) if i.row().mnemonic == "sd" && i.ops.get(2) == Some(&Opnd::Reg(Reg::X(2))) => match i.ops[1] {
            Opnd::Imm(o) => Some((k, o)),
            _ => None,
        },
        _ => None,
    })
}

#[test]
fn the_checker_rejects_a_reload_from_a_slot_never_written() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut f = Prog::random(&mut rng, false).build("rv64gc");
    lower(&mut f).unwrap();
    assert!(check_func(&f, Abi::Psabi).iter().all(|x| x.declared), "the allocated function passes");
    // Negative control: the first store to a spill slot is removed; its reloads now read
    // stack bytes no path wrote.
    let (k, off) = first_spill_store(&f).expect("a spill store");
    f.items.remove(k);
    let found = check_func(&f, Abi::Psabi);
    let rbw: Vec<_> = found.iter().filter(|x| x.check == Check::ReadBeforeWrite).collect();
    assert!(!rbw.is_empty(), "removing the store to sp+{off} must be found: {found:?}");
    assert!(rbw[0].msg.contains("stack bytes") && rbw[0].msg.contains("read before they are written"), "{}", rbw[0].msg);
}

#[test]
fn the_checker_rejects_a_spilled_secret_left_in_its_slot() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    let mut f = Prog::random(&mut rng, false).build("rv64gc");
    let frame = lower(&mut f).unwrap();
    assert!(!frame.spills.values.is_empty());
    assert!(check_func(&f, Abi::Psabi).iter().all(|x| x.declared), "the allocated function passes");
    // Negative control: the epilogues' wipes of the stack (`sd zero, off(sp)`) removed.
    let wipe = |it: &Item| matches!(it, Item::Inst(i) if i.row().mnemonic == "sd" && i.ops[0] == Opnd::Reg(Reg::X(0)) && i.ops[2] == Opnd::Reg(Reg::X(2)));
    let before = f.items.len();
    f.items.retain(|it| !wipe(it));
    assert!(f.items.len() < before, "the lowering wiped the secret slots");
    let found = check_func(&f, Abi::Psabi);
    let left: Vec<_> = found.iter().filter(|x| x.check == Check::SecretLeft).collect();
    assert!(!left.is_empty() && left[0].msg.contains("the stack at entry sp"), "a secret left in a spill slot must be found: {found:?}");
}

/// A gather's destination may overlap none of its sources (RVV 1.0 and XTheadVector): the
/// allocator keeps it apart even where the sources die at the gather, so the lowered
/// function passes the checks. Negative control: the destination renamed to a source is
/// found.
#[test]
fn a_gathers_destination_stays_apart_from_its_sources() {
    let t = target("rv64gcv").unwrap();
    let mut f = Func::new("gather", &t, Abi::Psabi);
    let out = f.arg("out", Ty::Ptr { elem: Elem::U8, access: Access::Out, align: 1 }, false);
    let inp = f.arg("inp", Ty::Ptr { elem: Elem::U8, access: Access::In, align: 1 }, false);
    let idx = f.arg("idx", Ty::Ptr { elem: Elem::U8, access: Access::In, align: 1 }, false);
    let n = f.xreg("n");
    let [a, i, d] = [f.vreg("a", 1), f.vreg("i", 1), f.vreg("d", 1)];
    kasm!(f, addi {n}, zero, 16; vsetvli zero, {n}, e8, m1, ta, ma; vle8.v {a}, ({inp}); vle8.v {i}, ({idx}); vrgather.vv {d}, {a}, {i}; vse8.v {d}, ({out}););
    f.ret();
    let mut f = f.finish().unwrap();
    lower(&mut f).unwrap();
    assert!(check_func(&f, Abi::Psabi).iter().all(|x| x.declared), "the allocated function passes");
    let k = f.items.iter().position(|it| matches!(it, Item::Inst(x) if x.row().mnemonic == "vrgather.vv")).expect("the gather");
    let Item::Inst(g) = &mut f.items[k] else { unreachable!() };
    assert!(g.ops[0] != g.ops[1] && g.ops[0] != g.ops[2], "destination apart: {:?}", g.ops);
    g.ops[0] = g.ops[1].clone();
    let found = check_func(&f, Abi::Psabi);
    assert!(found.iter().any(|x| x.check == Check::VectorGroups && x.msg.contains("destination overlaps")), "{found:?}");
}
