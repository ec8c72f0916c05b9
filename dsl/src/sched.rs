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

use crate::func::{InstItem, Item, Reg};
use crate::isa::{Class, Dir, Role};
use std::collections::{BTreeMap, BTreeSet};

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
    defs: Vec<Reg>,
    uses: Vec<Reg>,
}

/// Reorders `items` (see the module documentation). `cap` bounds the values defined or
/// read in the block that are live at once (values defined before the block count from
/// the start, values not read again inside count until the end); an instruction moves up
/// by at most `window` places, so pressure stays close to the source order's.
pub fn schedule(items: Vec<Item>, cap: usize, window: usize, latency: impl Fn(&InstItem) -> u32) -> Result<Vec<Item>, String> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut pending = Vec::new();
    for it in items {
        match it {
            Item::Inst(i) => {
                let row = i.row();
                if row.is_control() {
                    return Err(format!("`{}` is control flow", row.mnemonic));
                }
                let mut defs = Vec::new();
                let mut uses = Vec::new();
                for (role, r) in i.regs() {
                    if r == Reg::X(0) {
                        continue;
                    }
                    match role {
                        Role::Use => uses.push(r),
                        Role::Def => defs.push(r),
                        Role::UseDef => {
                            uses.push(r);
                            defs.push(r);
                        }
                    }
                }
                nodes.push(Node { item: i, comments: std::mem::take(&mut pending), succ: Vec::new(), npred: 0, height: 0, defs, uses });
            }
            Item::Comment(c) => pending.push(c),
            _ => return Err("labels, exits and data cannot be scheduled".into()),
        }
    }
    let trailing = pending;
    let n = nodes.len();
    // Dependencies.
    let mut last_def: BTreeMap<Reg, usize> = BTreeMap::new();
    let mut readers: BTreeMap<Reg, Vec<usize>> = BTreeMap::new();
    let mut last_store: Option<usize> = None;
    let mut mem_since_store: Vec<usize> = Vec::new();
    let mut edges: Vec<(usize, usize, u32)> = Vec::new();
    for k in 0..n {
        let lat_of = |j: usize, nodes: &Vec<Node>| latency(&nodes[j].item);
        for r in nodes[k].uses.clone() {
            if let Some(&d) = last_def.get(&r) {
                edges.push((d, k, lat_of(d, &nodes)));
            }
        }
        for r in nodes[k].defs.clone() {
            if let Some(&d) = last_def.get(&r) {
                edges.push((d, k, 1));
            }
            for &u in readers.get(&r).map(|v| v.as_slice()).unwrap_or(&[]) {
                if u != k {
                    edges.push((u, k, 0));
                }
            }
        }
        if let Some(m) = nodes[k].item.row().mem {
            if let Some(s) = last_store {
                edges.push((s, k, 1));
            }
            if m.dir == Dir::Store {
                for &j in &mem_since_store {
                    edges.push((j, k, 0));
                }
                mem_since_store.clear();
                last_store = Some(k);
            } else {
                mem_since_store.push(k);
            }
        }
        for r in nodes[k].uses.clone() {
            readers.entry(r).or_default().push(k);
        }
        for r in nodes[k].defs.clone() {
            last_def.insert(r, k);
            readers.insert(r, Vec::new());
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for &(a, b, l) in &edges {
        nodes[a].succ.push((b, l));
        nodes[b].npred += 1;
    }
    for k in (0..n).rev() {
        let h = nodes[k].succ.iter().map(|&(s, l)| l + nodes[s].height).max().unwrap_or(0);
        nodes[k].height = h + 1;
    }
    // Liveness bookkeeping: remaining reads of each register inside the block.
    let mut reads_left: BTreeMap<Reg, usize> = BTreeMap::new();
    for nd in &nodes {
        for &r in &nd.uses {
            *reads_left.entry(r).or_default() += 1;
        }
    }
    // Live now: registers read in the block but defined before it.
    let mut live: BTreeSet<Reg> = reads_left.keys().copied().filter(|r| !first_is_def(&nodes, *r)).collect();
    let mut earliest = vec![0u64; n];
    let mut preds_left: Vec<usize> = nodes.iter().map(|nd| nd.npred).collect();
    let mut ready: BTreeSet<usize> = (0..n).filter(|&k| preds_left[k] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut cycle = 0u64;
    let mut done = vec![false; n];
    let mut first = 0usize;
    while !ready.is_empty() {
        // Net change of live values if k issued now.
        let delta = |k: usize, live: &BTreeSet<Reg>, reads_left: &BTreeMap<Reg, usize>| -> i64 {
            let nd = &nodes[k];
            let mut d = 0i64;
            let mut seen = BTreeSet::new();
            for &r in &nd.uses {
                if seen.insert(r) {
                    let cnt = nd.uses.iter().filter(|&&x| x == r).count();
                    if reads_left.get(&r).copied().unwrap_or(0) == cnt && live.contains(&r) && !nd.defs.contains(&r) {
                        d -= 1;
                    }
                }
            }
            for r in &nd.defs {
                if !live.contains(r) {
                    d += 1;
                }
            }
            d
        };
        let pressured = live.len() >= cap;
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
            if let Some(c) = reads_left.get_mut(&r) {
                *c -= 1;
                if *c == 0 {
                    live.remove(&r);
                }
            }
        }
        // A value not read again in the block is live out (or dead): it stays counted.
        for &r in &nd.defs {
            live.insert(r);
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

/// Whether the first mention of `r` in the block is a pure definition.
fn first_is_def(nodes: &[Node], r: Reg) -> bool {
    for nd in nodes {
        if nd.uses.contains(&r) {
            return false;
        }
        if nd.defs.contains(&r) {
            return true;
        }
    }
    false
}

/// (LMUL registers, SEW bits) set by a `vsetvli` with an immediate vtype.
fn vtype_of(i: &InstItem) -> Option<(u64, u64)> {
    let row = i.row();
    match (row.vset, row.vdialect) {
        (Some(crate::isa::VType::Imm(k)), Some(d)) => {
            let crate::func::Opnd::Imm(vt) = i.ops.get(k as usize)? else { return None };
            let c = crate::isa::Hart::new(128).decode_vtype(d, *vt as u64)?;
            Some((c.group_regs() as u64, c.sew as u64))
        }
        _ => None,
    }
}

/// Whether `later` may be placed before `earlier` of the same stream: no register read or
/// written by one is written by the other, no memory access of the pair is a store, and
/// no vector instruction crosses a `vsetvl`.
fn may_pass(later: &InstItem, earlier: &InstItem) -> bool {
    let (rl, re) = (later.row(), earlier.row());
    if (rl.class == Class::VSet && re.class.is_vector()) || (re.class == Class::VSet && rl.class.is_vector()) {
        return false;
    }
    if let (Some(x), Some(y)) = (rl.mem, re.mem) {
        if x.dir == Dir::Store || y.dir == Dir::Store {
            return false;
        }
    }
    let regs = |i: &InstItem| i.regs().filter(|(_, r)| *r != Reg::X(0)).collect::<Vec<_>>();
    let (l, e) = (regs(later), regs(earlier));
    l.iter().all(|&(rl, x)| e.iter().all(|&(re, y)| x != y || (rl == Role::Use && re == Role::Use)))
}

/// Merges two independent straight-line streams (as [`crate::func::interleave`] checks) in
/// order of modeled issue time on the C906 ([`crate::timing`]): at each step, of the next
/// `lookahead[s]` instructions of stream `s` that may move up (no dependency on what they
/// pass), the one that can start first (operands ready, vector unit free), stream `a` on
/// ties. The in-order core stalls behind any instruction that waits, so a vector
/// instruction is placed when its inputs and the vector unit are ready and scalar work
/// fills the time before. Vector instructions are timed at VLMAX of the vtype last set in
/// the streams (LMUL 2, e32 before any) on a core with VLEN `vlen`.
pub fn merge_timed(a: Vec<Item>, b: Vec<Item>, lookahead: [usize; 2], vlen: u64) -> Result<Vec<Item>, String> {
    crate::func::interleave(a.clone(), b.clone())?;
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
    let streams = [sa, sb];
    let mut taken = [vec![false; streams[0].len()], vec![false; streams[1].len()]];
    let mut first = [0usize; 2];
    let mut ready: BTreeMap<Reg, u64> = BTreeMap::new();
    let (mut cycle, mut vpu) = (0u64, 0u64);
    let mut vt = (2u64, 32u64);
    let start = |i: &InstItem, cycle: u64, vpu: u64, ready: &BTreeMap<Reg, u64>| -> u64 {
        let mut t = cycle;
        for (role, r) in i.regs() {
            if role != Role::Def {
                t = t.max(ready.get(&r).copied().unwrap_or(0));
            }
        }
        if i.row().class.is_vector() && i.row().class != Class::VSet {
            t.max(vpu)
        } else {
            t
        }
    };
    let mut out = Vec::new();
    loop {
        let mut best: Option<(u64, usize, usize)> = None;
        for s in 0..2 {
            let st = &streams[s];
            let mut k = first[s];
            let mut seen = 0;
            while k < st.len() && seen < lookahead[s] {
                if !taken[s][k] {
                    seen += 1;
                    let movable = (first[s]..k).all(|j| taken[s][j] || may_pass(&st[k].1, &st[j].1));
                    if movable {
                        let t = start(&st[k].1, cycle, vpu, &ready);
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
        while first[s] < streams[s].len() && taken[s][first[s]] {
            first[s] += 1;
        }
        let (comments, i) = &streams[s][k];
        let shape = crate::timing::VShape { lmul: vt.0, sew: vt.1, vl: vlen * vt.0 / vt.1, vlen };
        let tm = crate::timing::c906(i.row(), shape);
        vt = vtype_of(i).unwrap_or(vt);
        if tm.vpu_busy > 0 {
            vpu = t + tm.vpu_busy;
        }
        cycle = t + 1;
        for (role, r) in i.regs() {
            if role != Role::Use {
                ready.insert(r, t + tm.latency);
            }
        }
        out.extend(comments.iter().cloned());
        out.push(Item::Inst(i.clone()));
    }
    out.extend(ta);
    out.extend(tb);
    Ok(out)
}
