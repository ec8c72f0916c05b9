//! A list scheduler for straight-line code: what a perlasm author does by hand when they
//! interleave independent computations so that loads and multiplies are not waited for.
//!
//! [`schedule`] reorders a captured block (instructions and comments, no labels or control
//! flow) respecting every register dependency (read after write with the producer's
//! latency, write after read, write after write) and keeping memory accesses in order
//! around stores. Each cycle it issues the ready instruction with the longest
//! latency-weighted path to the end of the block; when the number of values live at once
//! reaches `cap`, it only issues instructions that do not add a live value (or else the
//! first in source order), and it never looks more than a window ahead of the source
//! order, so the allocator can still colour the result. Comments stay in front of the instruction they preceded.
//! For a loop's body ([`schedule_block`] with `carried`, `Func::schedule_loop`) the paths
//! run on through a second copy of the block standing for the next iteration, so what the
//! next iteration reads first is produced first.

use crate::analysis::Units;
use crate::ir::{InstItem, Item, MemOrder, Reg};
use crate::isa::{Class, Dir, Role};
use std::collections::BTreeSet;


/// A map from register units to values, dense.
struct RegMap<T: Copy> {
    v: Vec<T>,
    zero: T,
}

impl<T: Copy> RegMap<T> {
    fn new(zero: T) -> Self {
        RegMap { v: Vec::new(), zero }
    }
    fn get(&self, k: usize) -> T {
        self.v.get(k).copied().unwrap_or(self.zero)
    }
    fn slot(&mut self, k: usize) -> &mut T {
        if k >= self.v.len() {
            self.v.resize(k + 1, self.zero);
        }
        &mut self.v[k]
    }
}

/// Result latency of an instruction on the C906 (the shared table in [`crate::timing`],
/// at LMUL 1, e32 for vector instructions).
pub fn c906_latency(i: &InstItem) -> u32 {
    crate::timing::c906(i.row(), crate::timing::VShape::DEFAULT).latency as u32
}

struct Node {
    item: InstItem,
    comments: Vec<String>,
    /// (successor, latency)
    succ: Vec<(usize, u32)>,
    npred: usize,
    height: u32,
    defs: Vec<usize>,
    uses: Vec<usize>,
    /// Units read as an accumulating multiply's accumulator.
    acc: Vec<usize>,
    /// Units a load writes with its data (not the base an update form writes back).
    loaded: Vec<usize>,
}

/// Reorders `items` (see the module documentation). `cap` bounds the integer values defined
/// or read in the block that are live at once (values defined before the block count from
/// the start, values not read again inside count until the end); an instruction moves up
/// by at most `window` places, so pressure stays close to the source order's.
pub fn schedule(items: Vec<Item>, cap: usize, window: usize, latency: impl Fn(&InstItem) -> u32) -> Result<Vec<Item>, String> {
    schedule_in(items, cap, window, latency, &Units::plain())
}

/// [`schedule`] with the register units of the function the block is from.
pub fn schedule_in(items: Vec<Item>, cap: usize, window: usize, latency: impl Fn(&InstItem) -> u32, units: &Units) -> Result<Vec<Item>, String> {
    schedule_block(items, cap, window, false, latency, units)
}

/// [`schedule_in`]; with `carried` the block is a loop's whole body (what it leaves in
/// registers the next iteration reads), and the priorities are the paths through this
/// iteration and the next.
pub fn schedule_block(items: Vec<Item>, cap: usize, window: usize, carried: bool, latency: impl Fn(&InstItem) -> u32, units: &Units) -> Result<Vec<Item>, String> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut pending = Vec::new();
    // Units of integer registers (only they count against the cap).
    let mut int_unit: RegMap<bool> = RegMap::new(false);
    for it in items {
        match it {
            Item::Inst(i) => {
                let row = i.row();
                if row.is_control() {
                    return Err(format!("`{}` is control flow", row.mnemonic));
                }
                let mut defs = Vec::new();
                let mut uses = Vec::new();
                let mut acc = Vec::new();
                let mut loaded = Vec::new();
                let acc_op = row.mul.and_then(|m| m.acc).map(usize::from);
                for (k, (role, r)) in i.regs_at() {
                    if r == Reg::X(0) {
                        continue;
                    }
                    let from = uses.len();
                    let dfrom = defs.len();
                    match role {
                        Role::Use => units.units(r, &mut uses),
                        Role::Def => {
                            units.units(r, &mut defs);
                            if row.class == Class::Load {
                                loaded.extend_from_slice(&defs[dfrom..]);
                            }
                        }
                        Role::UseDef => {
                            units.units(r, &mut uses);
                            defs.extend_from_slice(&uses[from..]);
                            if acc_op == Some(k) {
                                acc.extend_from_slice(&uses[from..]);
                            }
                        }
                    }
                    let free = matches!(r, Reg::VirtX(v) if units.free.get(v as usize).copied().unwrap_or(false));
                    if matches!(r, Reg::X(_) | Reg::VirtX(_)) && !free {
                        for &k in uses[from..].iter().chain(&defs[dfrom..]) {
                            *int_unit.slot(k) = true;
                        }
                    }
                }
                nodes.push(Node { item: i, comments: std::mem::take(&mut pending), succ: Vec::new(), npred: 0, height: 0, defs, uses, acc, loaded });
            }
            Item::Comment(c) => pending.push(c),
            _ => return Err("labels, exits and data cannot be scheduled".into()),
        }
    }
    let trailing = pending;
    let n = nodes.len();
    // Dependencies, between positions of the block (a loop body: of two copies of it, the
    // second standing for the next iteration).
    let copies = if carried { 2 } else { 1 };
    let mut last_def: RegMap<usize> = RegMap::new(usize::MAX);
    let mut readers: Vec<Vec<usize>> = Vec::new();
    let mut last_store: Option<usize> = None;
    let mut mem_since_store: Vec<usize> = Vec::new();
    let mut edges: Vec<(usize, usize, u32)> = Vec::new();
    for k in 0..n * copies {
        let nd = &nodes[k % n];
        // Into the next iteration's copy only data flows (registers, and memory from a
        // store): the core runs it after this one whatever the order, so write-after-read
        // and write-after-write edges there would only inflate priorities.
        let ordered = |from: usize| from >= n || k < n;
        for &r in &nd.uses {
            let d = last_def.get(r);
            if d != usize::MAX {
                let p = &nodes[d % n];
                // A load's data reaches a multiply-accumulate's accumulator a cycle late.
                let l = if p.loaded.contains(&r) && nd.acc.contains(&r) { (crate::timing::LOAD_TO_ACCUMULATOR as u32).max(latency(&p.item)) } else { latency(&p.item) };
                edges.push((d, k, l));
            }
        }
        for &r in &nd.defs {
            let d = last_def.get(r);
            if d != usize::MAX && ordered(d) {
                edges.push((d, k, 1));
            }
            for &u in readers.get(r).map(|v| v.as_slice()).unwrap_or(&[]) {
                if u != k && ordered(u) {
                    edges.push((u, k, 0));
                }
            }
        }
        if let Some(m) = nd.item.row().mem {
            // (A store before an access of the next iteration may be what it reads: kept.)
            if let Some(s) = last_store {
                edges.push((s, k, 1));
            }
            if m.dir == Dir::Store {
                for &j in mem_since_store.iter().filter(|&&j| ordered(j)) {
                    edges.push((j, k, 0));
                }
                mem_since_store.clear();
                last_store = Some(k);
            } else {
                mem_since_store.push(k);
            }
        }
        for &r in &nd.uses {
            let x = r;
            if x >= readers.len() {
                readers.resize(x + 1, Vec::new());
            }
            readers[x].push(k);
        }
        for &r in &nd.defs {
            *last_def.slot(r) = k;
            if let Some(v) = readers.get_mut(r) {
                v.clear();
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    // Heights: the longest latency-weighted path to the end (of the next iteration's copy
    // for a loop body, so that what the next iteration waits for first comes first).
    // Every edge goes forward (a < b) and the list is sorted by its source, so walking it
    // backwards finishes each node's height before an edge into it is read.
    debug_assert!(edges.iter().all(|&(a, b, _)| a < b));
    let mut height = vec![1u32; n * copies];
    for &(a, b, l) in edges.iter().rev() {
        height[a] = height[a].max(l + height[b] + 1);
    }
    for &(a, b, l) in &edges {
        if b < n {
            nodes[a].succ.push((b, l));
            nodes[b].npred += 1;
        }
    }
    for (k, nd) in nodes.iter_mut().enumerate() {
        nd.height = height[k];
    }
    // Liveness bookkeeping: remaining reads of each register inside the block.
    let mut reads_left: RegMap<usize> = RegMap::new(0);
    for nd in &nodes {
        for &r in &nd.uses {
            *reads_left.slot(r) += 1;
        }
    }
    // Live now: registers read in the block but defined before it. Only integer registers
    // count against the cap (the vector streams' pressure is their author's layout).
    let counted = |r: &usize| int_unit.get(*r);
    let mut live: RegMap<bool> = RegMap::new(false);
    let mut nlive = 0usize;
    {
        // Live on entry: a register whose first mention is a read.
        let mut seen = RegMap::new(false);
        for nd in &nodes {
            for &r in &nd.uses {
                if counted(&r) && !seen.get(r) {
                    *live.slot(r) = true;
                    nlive += 1;
                }
                *seen.slot(r) = true;
            }
            for &r in &nd.defs {
                *seen.slot(r) = true;
            }
        }
    }
    let mut earliest = vec![0u64; n];
    let mut preds_left: Vec<usize> = nodes.iter().map(|nd| nd.npred).collect();
    let mut ready: BTreeSet<usize> = (0..n).filter(|&k| preds_left[k] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut cycle = 0u64;
    let mut done = vec![false; n];
    let mut first = 0usize;
    while !ready.is_empty() {
        // Net change of live values if k issued now.
        let delta = |k: usize, live: &RegMap<bool>, reads_left: &RegMap<usize>| -> i64 {
            let nd = &nodes[k];
            let mut d = 0i64;
            for (j, &r) in nd.uses.iter().enumerate() {
                if nd.uses[..j].contains(&r) {
                    continue;
                }
                let cnt = nd.uses.iter().filter(|&&x| x == r).count();
                if reads_left.get(r) == cnt && live.get(r) && !nd.defs.contains(&r) {
                    d -= 1;
                }
            }
            for r in nd.defs.iter().filter(|r| counted(r)) {
                if !live.get(*r) {
                    d += 1;
                }
            }
            d
        };
        let pressured = nlive >= cap;
        // Look at most `window` instructions past the first one not yet issued.
        while first < n && done[first] {
            first += 1;
        }
        let in_window = |k: usize| k < first + window;
        let pick = ready
            .iter()
            .copied()
            .filter(|&k| in_window(k) && (!pressured || delta(k, &live, &reads_left) <= 0))
            .max_by_key(|&k| (earliest[k] <= cycle, nodes[k].height, std::cmp::Reverse(k)))
            // Under pressure with nothing that frees a value: source order, which the
            // author wrote to be allocatable.
            .unwrap_or_else(|| *ready.iter().next().expect("ready is not empty"));
        ready.remove(&pick);
        done[pick] = true;
        cycle = cycle.max(earliest[pick]) + 1;
        order.push(pick);
        let nd = &nodes[pick];
        for &r in &nd.uses {
            let c = reads_left.slot(r);
            if *c > 0 {
                *c -= 1;
                if *c == 0 && live.get(r) {
                    *live.slot(r) = false;
                    nlive -= 1;
                }
            }
        }
        // A value not read again in the block is live out (or dead): it stays counted.
        for &r in nd.defs.iter().filter(|r| counted(r)) {
            if !live.get(r) {
                *live.slot(r) = true;
                nlive += 1;
            }
        }
        for &(s, l) in &nodes[pick].succ {
            earliest[s] = earliest[s].max(cycle - 1 + l as u64);
            preds_left[s] -= 1;
            if preds_left[s] == 0 {
                ready.insert(s);
            }
        }
    }
    if order.len() != n {
        return Err("dependency cycle".into());
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(n * 2);
    for k in order {
        let nd = slots[k].take().expect("each node once");
        out.extend(nd.comments.into_iter().map(Item::Comment));
        out.push(Item::Inst(nd.item));
    }
    out.extend(trailing.into_iter().map(Item::Comment));
    Ok(out)
}

/// (LMUL registers, SEW bits) set by a `vsetvli` with an immediate vtype.
fn vtype_of(i: &InstItem) -> Option<(u64, u64)> {
    let row = i.row();
    match (row.vset, row.vdialect) {
        (Some(crate::isa::VType::Imm(k)), Some(d)) => {
            let crate::ir::Opnd::Imm(vt) = i.ops.get(k as usize)? else { return None };
            let c = crate::isa::Hart::new(128).decode_vtype(d, *vt as u64)?;
            Some((c.group_regs() as u64, c.sew as u64))
        }
        _ => None,
    }
}

/// What [`may_pass`] needs of an instruction, computed once.
struct Brief {
    class: Class,
    store: Option<bool>,
    /// Register units read (Use), written (Def) or both.
    regs: Vec<(Role, usize)>,
}

impl Brief {
    fn of(i: &InstItem, units: &Units) -> Brief {
        let row = i.row();
        let mut regs = Vec::new();
        let mut tmp = Vec::new();
        for (role, r) in i.regs().filter(|(_, r)| *r != Reg::X(0)) {
            tmp.clear();
            units.units(r, &mut tmp);
            regs.extend(tmp.iter().map(|&k| (role, k)));
        }
        Brief { class: row.class, store: row.mem.map(|m| m.dir == Dir::Store), regs }
    }
}

/// Whether `later` may be placed before `earlier` of the same stream: no register read or
/// written by one is written by the other, no memory access of the pair is a store, and
/// no vector instruction crosses a `vsetvl`.
fn may_pass(later: &Brief, earlier: &Brief) -> bool {
    if (later.class == Class::VSet && earlier.class.is_vector()) || (earlier.class == Class::VSet && later.class.is_vector()) {
        return false;
    }
    if let (Some(x), Some(y)) = (later.store, earlier.store) {
        if x || y {
            return false;
        }
    }
    later.regs.iter().all(|&(rl, x)| earlier.regs.iter().all(|&(re, y)| x != y || (rl == Role::Use && re == Role::Use)))
}


/// How [`merge_timed_cfg`] merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeCfg {
    /// Instructions of each stream looked at ahead of the first not yet placed.
    pub lookahead: [usize; 2],
    /// VLEN of the core, in bits.
    pub vlen: u64,
    /// (LMUL registers, SEW bits) in force where the streams start, until a `vsetvl` in them
    /// sets another.
    pub vtype: (u64, u64),
    pub order: MemOrder,
}

/// Merges two independent straight-line streams (as [`crate::analysis::interleave`] checks) in
/// order of modeled issue time on the C906 ([`crate::timing`]): at each step, of the next
/// `lookahead[s]` instructions of stream `s` that may move up (no dependency on what they
/// pass), the one that can start first (operands ready, vector unit free), stream `a` on
/// ties. The in-order core stalls behind any instruction that waits, so a vector
/// instruction is placed when its inputs and the vector unit are ready and scalar work
/// fills the time before. Vector instructions are timed at VLMAX of the vtype last set in
/// the streams (LMUL 2, e32 before any) on a core with VLEN `vlen`. The streams' memory
/// accesses may be placed in any order ([`MemOrder::Free`]).
pub fn merge_timed(a: Vec<Item>, b: Vec<Item>, lookahead: [usize; 2], vlen: u64) -> Result<Vec<Item>, String> {
    merge_timed_cfg(a, b, &MergeCfg { lookahead, vlen, vtype: (2, 32), order: MemOrder::Free }, &Units::plain())
}

/// [`merge_timed`] with the vtype in force at the start, the memory order between the
/// streams, and the register units of the function the streams are from.
pub fn merge_timed_cfg(a: Vec<Item>, b: Vec<Item>, cfg: &MergeCfg, units: &Units) -> Result<Vec<Item>, String> {
    let (lookahead, vlen) = (cfg.lookahead, cfg.vlen);
    crate::analysis::independent_in(&a, &b, units)?;
    // Each instruction with the comments before it; comments at the end stay at the end.
    let split = |items: Vec<Item>| -> (Vec<(Vec<Item>, InstItem)>, Vec<Item>) {
        let (mut v, mut pending) = (Vec::new(), Vec::new());
        for it in items {
            match it {
                Item::Inst(i) => v.push((std::mem::take(&mut pending), i)),
                other => pending.push(other),
            }
        }
        (v, pending)
    };
    let (sa, ta) = split(a);
    let (sb, tb) = split(b);
    let mut streams = [sa, sb];
    let briefs: [Vec<Brief>; 2] = [streams[0].iter().map(|(_, i)| Brief::of(i, units)).collect(), streams[1].iter().map(|(_, i)| Brief::of(i, units)).collect()];
    let mut taken = [vec![false; streams[0].len()], vec![false; streams[1].len()]];
    let mut first = [0usize; 2];
    let mut ready: RegMap<u64> = RegMap::new(0);
    let (mut cycle, mut vpu) = (0u64, 0u64);
    let mut vt = cfg.vtype;
    // Loads of stream b not yet placed (for MemOrder::BReadsFirst).
    let mut b_loads = briefs[1].iter().filter(|x| x.store == Some(false)).count();
    let ordered = cfg.order == MemOrder::BReadsFirst;
    // When the last placed vsetvl's configuration reaches a vector instruction.
    let mut vconf = 0u64;
    let start = |b: &Brief, cycle: u64, vpu: u64, vconf: u64, ready: &RegMap<u64>| -> u64 {
        let mut t = cycle;
        for &(role, r) in &b.regs {
            if role != Role::Def {
                t = t.max(ready.get(r));
            }
        }
        if b.class.is_vector() && b.class != Class::VSet {
            t.max(vpu).max(vconf)
        } else {
            t
        }
    };
    let mut out = Vec::new();
    loop {
        let mut best: Option<(u64, usize, usize)> = None;
        for s in 0..2 {
            let st = &briefs[s];
            let mut k = first[s];
            let mut seen = 0;
            while k < st.len() && seen < lookahead[s] {
                if !taken[s][k] {
                    seen += 1;
                    let movable = (first[s]..k).all(|j| taken[s][j] || may_pass(&st[k], &st[j]));
                    // Stream a's stores wait for b's loads.
                    let waits = ordered && s == 0 && st[k].store == Some(true) && b_loads > 0;
                    let movable = movable && !waits;
                    if movable {
                        let t = start(&st[k], cycle, vpu, vconf, &ready);
                        if best.is_none_or(|(bt, _, _)| t < bt) {
                            best = Some((t, s, k));
                        }
                    }
                }
                k += 1;
            }
        }
        let Some((t, s, k)) = best else { break };
        taken[s][k] = true;
        if s == 1 && briefs[1][k].store == Some(false) {
            b_loads -= 1;
        }
        while first[s] < streams[s].len() && taken[s][first[s]] {
            first[s] += 1;
        }
        let (comments, i) = (std::mem::take(&mut streams[s][k].0), &streams[s][k].1);
        let shape = crate::timing::VShape { lmul: vt.0, sew: vt.1, vl: vlen * vt.0 / vt.1, vlen };
        let tm = crate::timing::c906(i.row(), shape);
        vt = vtype_of(i).unwrap_or(vt);
        if tm.vpu_busy > 0 {
            vpu = t + tm.vpu_busy;
        }
        if briefs[s][k].class == Class::VSet {
            vconf = t + tm.latency;
        }
        cycle = t + 1;
        for &(role, r) in &briefs[s][k].regs {
            if role != Role::Use {
                *ready.slot(r) = t + tm.latency;
            }
        }
        out.extend(comments);
        out.push(Item::Inst(i.clone()));
    }
    out.extend(ta);
    out.extend(tb);
    Ok(out)
}
