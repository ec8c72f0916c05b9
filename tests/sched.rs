//! The list scheduler (`kgen_dsl::sched`) keeps the meaning of straight-line code: random
//! blocks full of register reuse (read/write hazards of every kind), loads and stores to
//! overlapping addresses, and multiply-accumulates run to the same registers and memory in
//! kgen-sim before and after scheduling. Scheduling must also pay off on the cost model,
//! and the comparison must notice a reordering that breaks a dependency (negative control).

use kgen_dsl::func::{Func, Item, Opnd};
use kgen_dsl::object::assemble;
use kgen_dsl::sched::{c906_latency, schedule};
use kgen_dsl::target::target;
use kgen_dsl::{Abi, Reg};
use kgen_sim::cost::C906;
use kgen_sim::mem::Perm;
use kgen_sim::Machine;
use rand::{Rng, SeedableRng};

const CODE: u64 = 0x10000;
const BUF: u64 = 0x40000;

/// t0-t6, a1-a5: a small pool so that hazards are frequent; a0 is the buffer base.
const POOL: [u8; 12] = [5, 6, 7, 28, 29, 30, 31, 11, 12, 13, 14, 15];

fn random_block(rng: &mut impl Rng, n: usize) -> Vec<Item> {
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    let r = |rng: &mut dyn rand::RngCore| Opnd::Reg(Reg::X(POOL[rng.random_range(0..POOL.len())]));
    for _ in 0..n {
        match rng.random_range(0..10) {
            0..=2 => {
                let m = ["add", "sub", "xor", "and", "or"][rng.random_range(0..5)];
                let ops = [r(rng), r(rng), r(rng)];
                f.inst(m, &ops);
            }
            3 => {
                let m = ["slli", "srli", "srai"][rng.random_range(0..3)];
                let ops = [r(rng), r(rng), Opnd::Imm(rng.random_range(0..64))];
                f.inst(m, &ops);
            }
            4 | 5 => {
                let m = ["mul", "mulhu", "th.mula", "th.muls"][rng.random_range(0..4)];
                let ops = [r(rng), r(rng), r(rng)];
                f.inst(m, &ops);
            }
            6 | 7 => {
                let m = ["ld", "lw", "lbu"][rng.random_range(0..3)];
                let off = 8 * rng.random_range(0..8);
                let ops = [r(rng), Opnd::Imm(off), Opnd::Reg(Reg::X(10))];
                f.inst(m, &ops);
            }
            _ => {
                let m = ["sd", "sw", "sb"][rng.random_range(0..3)];
                let off = 8 * rng.random_range(0..8);
                let ops = [r(rng), Opnd::Imm(off), Opnd::Reg(Reg::X(10))];
                f.inst(m, &ops);
            }
        }
    }
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    f.items
}

/// Runs the block from a fixed state; returns the registers, the buffer and the modeled cycles.
fn run(items: &[Item], seed: u64) -> ([u64; 32], Vec<u8>, u64) {
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    f.items = items.to_vec();
    let code = assemble(&f).unwrap();
    let mut m = Machine::new(&t);
    m.cost = Some(C906::new());
    m.mem.map("code", CODE, 65536, Perm::RX);
    m.mem.write_bytes(CODE, &code.bytes);
    m.mem.map("buf", BUF, 4096, Perm::RW);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let init: Vec<u8> = (0..4096).map(|_| rng.random()).collect();
    m.mem.write_bytes(BUF, &init);
    for r in 1..32 {
        m.hart.x[r] = rng.random();
    }
    m.hart.x[10] = BUF;
    m.hart.pc = CODE;
    m.run_until(CODE + code.bytes.len() as u64).unwrap();
    (m.hart.x, m.mem.read_bytes(BUF, 4096), m.cost.as_ref().unwrap().cycles())
}

fn insts(items: &[Item]) -> Vec<String> {
    items.iter().filter_map(|i| if let Item::Inst(x) = i { Some(format!("{:?}{:?}", x.form, x.ops)) } else { None }).collect()
}

#[test]
fn scheduled_blocks_compute_the_same() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(40);
    let (mut before, mut after, mut reordered) = (0u64, 0u64, 0);
    for k in 0..400 {
        let block = random_block(&mut rng, 60);
        let window = [4usize, 16, 1000][k % 3];
        let cap = [6usize, 12, usize::MAX][k % 3];
        let s = schedule(block.clone(), cap, window, c906_latency).unwrap();
        assert_eq!(insts(&s).len(), insts(&block).len());
        let mut a = insts(&s);
        let mut b = insts(&block);
        if a != b {
            reordered += 1;
        }
        a.sort();
        b.sort();
        assert_eq!(a, b, "the same instructions");
        let (x0, m0, c0) = run(&block, k as u64);
        let (x1, m1, c1) = run(&s, k as u64);
        assert_eq!(x0, x1, "block {k}: registers differ after scheduling");
        assert!(m0 == m1, "block {k}: memory differs after scheduling");
        before += c0;
        after += c1;
    }
    assert!(reordered > 350, "only {reordered} of 400 blocks reordered");
    println!("modeled cycles: {before} in source order, {after} scheduled");
    assert!(after < before, "scheduling should not cost cycles overall: {before} -> {after}");
}

#[test]
fn independent_chains_are_interleaved() {
    // Four dependent multiply chains written one after the other: in source order every
    // multiply waits for the previous one; scheduled, the chains overlap.
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    for c in 0..4u8 {
        let (x, y) = (POOL[2 * c as usize], POOL[2 * c as usize + 1]);
        f.inst("lwu", &[Reg::X(x).into(), Opnd::Imm(8 * c as i64), Reg::X(10).into()]);
        for _ in 0..6 {
            f.inst("mul", &[Reg::X(y).into(), Reg::X(x).into(), Reg::X(x).into()]);
            f.inst("srli", &[Reg::X(x).into(), Reg::X(y).into(), Opnd::Imm(40)]);
        }
    }
    let block = f.items.clone();
    let s = schedule(block.clone(), usize::MAX, 1000, c906_latency).unwrap();
    let (x0, m0, c0) = run(&block, 3);
    let (x1, m1, c1) = run(&s, 3);
    assert_eq!((x0, m0), (x1, m1));
    println!("four chains: {c0} cycles in source order, {c1} scheduled");
    // 52 instructions: scheduled, the chains overlap. Not one per cycle: four multiplies
    // then their four dependent shifts take 10 cycles, not 8, because the multiplier's
    // results wait for the result bus (openc906 RTL, docs/cost-model.md).
    assert!(c1 * 3 <= c0 * 2 && c1 <= 68, "{c0} -> {c1}");
}

#[test]
fn comparison_catches_a_broken_order() {
    // Negative control: swapping a producer with its consumer changes the result, and the
    // comparison above sees it.
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    f.inst("addi", &[Reg::X(5).into(), Reg::X(5).into(), Opnd::Imm(1)]);
    f.inst("mul", &[Reg::X(6).into(), Reg::X(5).into(), Reg::X(5).into()]);
    let good = f.items.clone();
    let bad = vec![good[1].clone(), good[0].clone()];
    assert_ne!(run(&good, 1).0, run(&bad, 1).0);
    // And the scheduler keeps that pair in order however it is asked.
    for window in [1, 2, 100] {
        let s = schedule(good.clone(), 1, window, c906_latency).unwrap();
        assert_eq!(insts(&s), insts(&good));
    }
}

#[test]
fn refuses_control_flow() {
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    let l = f.label();
    f.inst("beq", &[Reg::X(5).into(), Reg::X(6).into(), l.into()]);
    f.bind(l);
    let e = schedule(f.items.clone(), 8, 8, c906_latency).unwrap_err();
    assert!(e.contains("control flow"), "{e}");
}

#[test]
fn timed_merge_overlaps_vector_and_scalar_work() {
    use kgen_dsl::sched::merge_timed;
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    kgen_macros::kasm!(f, th.vsetvli zero, zero, e32, m2, d1;);
    let setup = f.items.clone();
    // A chain of vector adds at LMUL 2 (each keeps the vector unit busy for 4 cycles) ...
    let mut g = Func::new("blk", &t, Abi::Psabi);
    for _ in 0..12 {
        g.inst("th.vadd.vv", &[Reg::V(2).into(), Reg::V(2).into(), Reg::V(4).into()]);
    }
    let vec_items = g.items.clone();
    // ... and independent scalar work.
    let blk = random_block(&mut rand_chacha::ChaCha8Rng::seed_from_u64(7), 40);
    let scalar: Vec<Item> = blk.into_iter().filter(|i| matches!(i, Item::Inst(x) if x.row().mem.is_none())).collect();
    let merged = merge_timed(vec_items.clone(), scalar.clone(), [4, 4], 128).unwrap();
    let serial: Vec<Item> = setup.iter().cloned().chain(vec_items.clone()).chain(scalar.clone()).collect();
    let timed: Vec<Item> = setup.iter().cloned().chain(merged).collect();
    let (x0, m0, c0) = run(&serial, 5);
    let (x1, m1, c1) = run(&timed, 5);
    assert_eq!((x0, m0), (x1, m1), "the merge keeps each stream's order of dependent instructions");
    println!("vector chain then scalar work: {c0} cycles; merged by issue time: {c1}");
    assert!(c1 + 20 < c0, "{c0} -> {c1}");
    // Streams that share a written register cannot be merged.
    let clash = vec![vec_items[0].clone()];
    let mut h = Func::new("blk", &t, Abi::Psabi);
    h.inst("th.vadd.vv", &[Reg::V(2).into(), Reg::V(6).into(), Reg::V(6).into()]);
    assert!(merge_timed(clash, h.items.clone(), [4, 4], 128).is_err());
}

/// `MemOrder::BReadsFirst`: when stream `b` reads memory that stream `a` rewrites, the
/// merge places `a`'s stores after `b`'s loads, as running `b` then `a` would; with
/// `MemOrder::Free` the same streams are merged by time alone and `a`'s store moves ahead
/// of the load (the negative control: the results differ). `a`'s loads are not held back.
#[test]
fn timed_merge_keeps_the_declared_memory_order() {
    use kgen_dsl::analysis::Units;
    use kgen_dsl::func::MemOrder;
    use kgen_dsl::sched::{merge_timed_cfg, MergeCfg};
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    kgen_macros::kasm!(f, th.vsetvli zero, zero, e32, m1, d1;);
    let setup = f.items.clone();
    // a: a load of other bytes, then a vector store over the bytes b loads.
    let mut a = Func::new("blk", &t, Abi::Psabi);
    kgen_macros::kasm!(a,
        ld t5, 512(a0);
        th.vse.v v2, (a0);
    );
    // b: a chain of adds (longer than the lookahead) before its load, and a store elsewhere.
    let mut b = Func::new("blk", &t, Abi::Psabi);
    for _ in 0..8 {
        kgen_macros::kasm!(b, add t2, t2, t1;);
    }
    kgen_macros::kasm!(b, lw t0, 0(a0); sw t2, 256(a0););
    let serial: Vec<Item> = setup.iter().cloned().chain(b.items.clone()).chain(a.items.clone()).collect();
    let merged = |order| {
        let cfg = MergeCfg { lookahead: [4, 4], vlen: 128, vtype: (1, 32), order };
        merge_timed_cfg(a.items.clone(), b.items.clone(), &cfg, &Units::plain()).unwrap()
    };
    let (ordered, free) = (merged(MemOrder::BReadsFirst), merged(MemOrder::Free));
    let first = |m: &[Item], mn: &str| m.iter().position(|i| matches!(i, Item::Inst(x) if x.row().mnemonic == mn)).unwrap();
    assert_eq!(first(&ordered, "ld"), 0, "a's load is not held back by the order");
    let want = run(&serial, 9);
    let with = |m: Vec<Item>| run(&setup.iter().cloned().chain(m).collect::<Vec<Item>>(), 9);
    let (o, fr) = (with(ordered), with(free));
    assert_eq!((o.0, &o.1), (want.0, &want.1), "BReadsFirst computes what b then a computes");
    assert_ne!(fr.0[5], want.0[5], "Free lets a's store pass b's load (the control)");
    println!("b then a: {} cycles; merged, b's loads first: {}; merged freely: {}", want.2, o.2, fr.2);
}

/// A loop body like Poly1305's: a serial chain reads x, then y1, y2, y3 (the carries),
/// and multiply chains rebuild them, x's the shortest. Scheduled as plain straight-line
/// code the longer chains go first and the next iteration waits for x; scheduled as a loop
/// body (`schedule_block` with `carried`) x's chain comes first and the iterations overlap.
#[test]
fn a_loop_body_schedules_for_the_next_iteration() {
    let t = target("c906").unwrap();
    let mut f = Func::new("blk", &t, Abi::Psabi);
    let r = |k: usize| -> Opnd { Reg::X(POOL[k]).into() };
    let (x, z, acc, y) = (0, 1, 2, [3, 4, 5]);
    // The serial chain: acc = x + z + y1 + y2 + y3.
    f.inst("add", &[r(acc), r(x), r(z)]);
    for &yj in &y {
        f.inst("add", &[r(acc), r(acc), r(yj)]);
    }
    // Multiply chains from acc (mulw: the fast path whatever the values): x's of two,
    // each y's of four.
    for (reg, len) in [(x, 2), (y[0], 4), (y[1], 4), (y[2], 4)] {
        f.inst("mulw", &[r(reg), r(acc), r(z)]);
        for _ in 1..len {
            f.inst("mulw", &[r(reg), r(reg), r(z)]);
        }
    }
    let body = f.items.clone();
    let units = kgen_dsl::analysis::Units::plain();
    let plain = kgen_dsl::sched::schedule_block(body.clone(), usize::MAX, 1000, false, c906_latency, &units).unwrap();
    let carried = kgen_dsl::sched::schedule_block(body.clone(), usize::MAX, 1000, true, c906_latency, &units).unwrap();
    let times = |b: &[Item]| b.iter().cloned().cycle().take(8 * b.len()).collect::<Vec<_>>();
    let (x0, m0, c0) = run(&times(&body), 5);
    let (x1, m1, c1) = run(&times(&plain), 5);
    let (x2, m2, c2) = run(&times(&carried), 5);
    assert_eq!((&x0, &m0), (&x1, &m1), "the plain schedule computes the same");
    assert_eq!((&x0, &m0), (&x2, &m2), "the loop-body schedule computes the same");
    println!("8 iterations: {c0} cycles in source order, {c1} scheduled as straight-line code, {c2} as a loop body");
    assert!(c2 < c1, "scheduled as a loop body ({c2} cycles) should beat straight-line scheduling ({c1})");
}

/// The loop-body priorities reorder blocks differently from the straight-line ones; every
/// such order must keep the block's meaning too.
#[test]
fn loop_body_schedules_compute_the_same() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
    let units = kgen_dsl::analysis::Units::plain();
    for k in 0..200 {
        let block = random_block(&mut rng, 60);
        let s = kgen_dsl::sched::schedule_block(block.clone(), [6usize, usize::MAX][k % 2], [16usize, 1000][k % 2], true, c906_latency, &units).unwrap();
        let (x0, m0, _) = run(&block, k as u64);
        let (x1, m1, _) = run(&s, k as u64);
        assert_eq!(x0, x1, "block {k}: registers differ after scheduling as a loop body");
        assert!(m0 == m1, "block {k}: memory differs after scheduling as a loop body");
    }
}

/// A load feeding th.mula's accumulator is three cycles (`timing::LOAD_TO_ACCUMULATOR`),
/// one more than feeding an ALU operation: the scheduler puts two independent instructions
/// between them, and one in front of an `add` reading the same load (the control).
#[test]
fn a_load_feeds_an_accumulator_three_cycles_later() {
    let t = target("c906").unwrap();
    let gap = |consumer: &str| {
        let mut f = Func::new("blk", &t, Abi::Psabi);
        let x = |k: usize| -> Opnd { Reg::X(POOL[k]).into() };
        f.inst("lwu", &[x(0), Opnd::Imm(0), Reg::X(10).into()]);
        // th.mula x0 += x1·x2 reads x0 as its accumulator; add x0 = x0 + x1 reads it too.
        let ops = if consumer == "add" { [x(0), x(0), x(1)] } else { [x(0), x(1), x(2)] };
        f.inst(consumer, &ops);
        for k in 0..4 {
            f.inst("xor", &[x(3 + k), x(1), x(2)]);
        }
        let s = schedule(f.items.clone(), usize::MAX, 1000, c906_latency).unwrap();
        let names: Vec<&str> = s.iter().filter_map(|i| if let Item::Inst(x) = i { Some(x.row().mnemonic) } else { None }).collect();
        let at = |m: &str| names.iter().position(|n| *n == m).unwrap();
        at(consumer) - at("lwu") - 1
    };
    assert_eq!(gap("th.mula"), 2, "two instructions between the load and th.mula");
    assert_eq!(gap("add"), 1, "one between the load and an add");
}

/// The timed merge knows a vsetvl's configuration reaches the next vector instruction two
/// cycles after it (docs/cost-model.md, the vsetvl row): the scalar instruction of the other
/// stream goes into that cycle, between the vsetvl and the vector add, not after the add.
#[test]
fn timed_merge_fills_the_cycle_after_a_vsetvl() {
    use kgen_dsl::sched::merge_timed;
    let t = target("c906").unwrap();
    let mut v = Func::new("blk", &t, Abi::Psabi);
    kgen_macros::kasm!(v, th.vsetvli zero, zero, e32, m1, d1; th.vadd.vv v2, v4, v6;);
    let mut s = Func::new("blk", &t, Abi::Psabi);
    kgen_macros::kasm!(s, add t0, t1, t2;);
    let merged = merge_timed(v.items.clone(), s.items.clone(), [4, 4], 128).unwrap();
    let names: Vec<&str> = merged.iter().filter_map(|i| if let Item::Inst(x) = i { Some(x.row().mnemonic) } else { None }).collect();
    assert_eq!(names, ["th.vsetvli", "add", "th.vadd.vv"]);
}
