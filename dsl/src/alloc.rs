//! Register allocation with spilling: virtual registers to physical ones (vector groups
//! aligned to their size, parts of a group allocated with it), and, where more values are
//! live than the ABI leaves registers, values moved to frame slots the allocator chooses.
//!
//! Colouring is greedy over the interference graph: arguments first (pinned to a0..a7),
//! then vector groups by size, then by degree. When a value finds no register, the
//! allocator spills the value, among it and the values it interferes with, whose spill
//! costs least per interference: a store after each definition (1 issue slot on the C906)
//! and a load before each use (1 slot, and the 2-cycle load-to-use latency), each weighted
//! by 8 per enclosing loop. Every definition and use of a spilled value gets its own
//! short-lived temporary (never spilled again), and colouring starts over. A spilled
//! secret's slot is a secret slot: the checks track it and the lowering wipes it. Vector
//! groups are spilled whole: by whole-register stores and loads in RVV 1.0, and in
//! XTheadVector, which has none, by an e8 store or load of the group at VLMAX between a
//! save and a restore of vl under the vtype known there (a vector value is not spilled where
//! the vtype is not known).
//!
//! A victim that is a constant, or a shift of a value that lives throughout (see
//! `Remake`), is remade before each read instead of stored and reloaded: no slot, no
//! load latency. The list scheduler does not count such values against a block's register
//! cap (`lower.rs`, `sched::Units::free`): they take a register only where they are read,
//! and the allocator remakes them where registers run out. So a kernel writes its
//! constants once at the top whatever the ABI leaves.
//!
//! A value that cannot be placed even then (an instruction needs more registers at once
//! than exist, an argument's register is taken) is an error listing what is live.

use crate::ir::{BuildError, Func, InstItem, Item, Opnd, Reg, Spills};
use crate::isa::{table, Control, Role, VDialect, VType};
use crate::analysis::{label_positions, loop_depth, BitRows, Bits, Nodes, NPHYS, NX};


/// How a value that found no register can be remade where it is read rather than stored
/// and reloaded: its only definition is a run of adjacent ALU instructions that read
/// nothing but immediates, `zero`, the value itself, and values that never change (one
/// definition, or an argument never written) and are live wherever the value is read.
/// (`li` of a constant, or `slli m3, m0, 3` while m0 lives.) Remaking costs the run's
/// instructions at each read and needs no slot. The victim is chosen by its store and reload
/// cost as any other; a victim that can be remade is remade when that costs no more.
#[derive(Clone, Debug)]
pub(crate) struct Remake {
    /// Item indices of the defining run.
    at: Vec<usize>,
    /// The values the run reads (each live wherever the value is read).
    srcs: Vec<usize>,
}

/// For each virtual register, how it can be remade, if it can (see [`Remake`]).
pub(crate) fn remakes(f: &Func) -> Vec<Option<Remake>> {
    remakes_of(f, &vec![true; f.vregs.len()])
}

/// [`remakes`] for the virtual registers `which` selects (the others: None); the liveness
/// a source's check needs is computed only if a selected value has a source.
fn remakes_of(f: &Func, which: &[bool]) -> Vec<Option<Remake>> {
    let nv = f.vregs.len();
    let vc = vector_class(f);
    // Writes and reads of each virtual register, by item.
    let mut writes: Vec<Vec<usize>> = vec![Vec::new(); nv];
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); nv];
    for (i, it) in f.items.iter().enumerate() {
        let Item::Inst(ii) = it else { continue };
        for (role, r) in ii.regs() {
            let (Reg::VirtX(v) | Reg::VirtV(v)) = r else { continue };
            let list = if role == Role::Use { &mut reads[v as usize] } else { &mut writes[v as usize] };
            if list.last() != Some(&i) {
                list.push(i);
            }
            if role == Role::UseDef && reads[v as usize].last() != Some(&i) {
                reads[v as usize].push(i);
            }
        }
    }
    let stable = |u: usize| {
        let info = &f.vregs[u];
        !vc[u] && info.part_of.is_none() && if info.pinned.is_some() { writes[u].is_empty() } else { writes[u].len() == 1 }
    };
    let mut out: Vec<Option<Remake>> = vec![None; nv];
    let mut needs_live: Vec<(usize, Vec<usize>)> = Vec::new();
    'v: for v in 0..nv {
        let info = &f.vregs[v];
        if !which[v] || vc[v] || info.pinned.is_some() || info.spill_temp || info.part_of.is_some() || writes[v].is_empty() {
            continue;
        }
        let w = &writes[v];
        // Adjacent (comments aside), straight-line ALU instructions.
        for pair in w.windows(2) {
            if f.items[pair[0] + 1..pair[1]].iter().any(|it| !matches!(it, Item::Comment(_))) {
                continue 'v;
            }
        }
        let me = Reg::VirtX(v as u32);
        let mut srcs = Vec::new();
        for (k, &i) in w.iter().enumerate() {
            let Item::Inst(ii) = &f.items[i] else { continue 'v };
            let row = ii.row();
            if row.class != crate::isa::Class::Alu || row.mem.is_some() || row.is_control() {
                continue 'v;
            }
            for (role, r) in ii.regs() {
                match r {
                    Reg::X(0) => {}
                    r if r == me => {
                        if k == 0 && role != Role::Def {
                            continue 'v;
                        }
                    }
                    Reg::VirtX(u) if role == Role::Use && stable(u as usize) => srcs.push(u as usize),
                    _ => continue 'v,
                }
            }
            // Nothing but registers and plain immediates (no relocations, no labels).
            if ii.ops.iter().any(|o| !matches!(o, Opnd::Reg(_) | Opnd::Imm(_))) {
                continue 'v;
            }
        }
        srcs.sort_unstable();
        srcs.dedup();
        if !srcs.is_empty() {
            needs_live.push((v, srcs.clone()));
        }
        out[v] = Some(Remake { at: w.clone(), srcs });
    }
    if !needs_live.is_empty() {
        // A source must hold its value wherever the value is read: each block walked
        // backwards from what is live at its end, the reads checked against what is live
        // before them.
        let nodes = Nodes::of(f);
        let ud = crate::analysis::UseDefs::of(f, &nodes);
        let blocks = crate::analysis::Blocks::of(f);
        let (_, bout) = crate::analysis::block_liveness(&blocks, nodes.n, &ud);
        let mut at: Vec<Vec<usize>> = vec![Vec::new(); f.items.len()];
        for (k, (v, _)) in needs_live.iter().enumerate() {
            for &i in reads[*v].iter().filter(|i| !writes[*v].contains(i)) {
                at[i].push(k);
            }
        }
        let mut bad = vec![false; needs_live.len()];
        let mut live = vec![0u64; bout.words];
        for b in 0..blocks.len() {
            live.copy_from_slice(bout.row(b));
            for i in (blocks.start[b]..blocks.end(b)).rev() {
                crate::analysis::step_back(&mut live, &ud, i);
                for &k in &at[i] {
                    let held = |u: usize| live[(NPHYS + u) / 64] >> ((NPHYS + u) % 64) & 1 != 0;
                    if !needs_live[k].1.iter().all(|&u| held(u)) {
                        bad[k] = true;
                    }
                }
            }
        }
        for (k, (v, _)) in needs_live.iter().enumerate() {
            if bad[k] {
                out[*v] = None;
            }
        }
    }
    out
}

/// `r` with its defining run found again after other values were spilled or remade: the
/// value's writes in order, still adjacent (comments aside), as many as before.
fn relocated(f: &Func, v: usize, r: Remake) -> Option<Remake> {
    let me = Reg::VirtX(v as u32);
    let at: Vec<usize> = f
        .items
        .iter()
        .enumerate()
        .filter(|(_, it)| matches!(it, Item::Inst(ii) if ii.regs().any(|(role, x)| x == me && role != Role::Use)))
        .map(|(i, _)| i)
        .collect();
    let adjacent = at.windows(2).all(|p| f.items[p[0] + 1..p[1]].iter().all(|it| matches!(it, Item::Comment(_))));
    (at.len() == r.at.len() && adjacent).then_some(Remake { at, srcs: r.srcs })
}

fn err(f: &Func, reason: String) -> BuildError {
    BuildError { func: f.name.clone(), inst: String::new(), index: None, loc: None, reason }
}

/// Which virtual registers are vector registers (as the code uses them; parts are).
pub(crate) fn vector_class(f: &Func) -> Vec<bool> {
    let mut v: Vec<bool> = f.vregs.iter().map(|r| r.part_of.is_some()).collect();
    for it in &f.items {
        if let Item::Inst(i) = it {
            for o in &i.ops {
                if let Opnd::Reg(Reg::VirtV(k)) = o {
                    v[*k as usize] = true;
                }
            }
        }
    }
    v
}

/// The root of a part (itself if not a part).
fn root(f: &Func, v: usize) -> usize {
    f.vregs[v].part_of.map(|(r, _)| r as usize).unwrap_or(v)
}


/// The vtype (dialect, immediate) known on entry to each item: set by a `vsetvl` with an
/// immediate vtype on every path there.
pub(crate) fn known_vtypes(f: &Func) -> Vec<Option<(VDialect, i64)>> {
    #[derive(Clone, Copy, PartialEq)]
    enum K {
        Unreached,
        Known(Option<(VDialect, i64)>),
    }
    let at = label_positions(f);
    let m = f.items.len();
    let mut inn = vec![K::Unreached; m];
    if m == 0 {
        return Vec::new();
    }
    inn[0] = K::Known(None);
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..m {
            let K::Known(k) = inn[i] else { continue };
            let out = match &f.items[i] {
                Item::Inst(it) => match (it.row().vset, it.row().vdialect) {
                    (Some(VType::Imm(x)), Some(d)) => match it.ops.get(x as usize) {
                        Some(Opnd::Imm(v)) => Some((d, *v)),
                        _ => None,
                    },
                    (Some(VType::Reg(_)), _) => None,
                    _ => k,
                },
                _ => k,
            };
            for s in crate::analysis::successor_pair(f, &at, i).into_iter().filter(|&s| s != usize::MAX) {
                let new = match inn[s] {
                    K::Unreached => K::Known(out),
                    K::Known(o) if o == out => K::Known(o),
                    K::Known(_) => K::Known(None),
                };
                if new != inn[s] {
                    inn[s] = new;
                    changed = true;
                }
            }
        }
    }
    inn.into_iter().map(|k| if let K::Known(v) = k { v } else { None }).collect()
}

/// The outcome of one colouring attempt.
enum Coloured {
    Done(Vec<Option<(u8, u8)>>),
    /// The virtual registers in `vs` found no register; `adj` is the interference graph.
    Failed { vs: Vec<usize>, adj: BitRows },
}

fn colour(f: &Func) -> Result<Coloured, BuildError> {
    let nv = f.vregs.len();
    let n = NPHYS + nv;
    let nodes = Nodes::of(f);
    let ud = crate::analysis::UseDefs::of(f, &nodes);
    let blocks = crate::analysis::Blocks::of(f);
    let (bin, bout) = crate::analysis::block_liveness(&blocks, nodes.n, &ud);
    // Liveness is per register of a group with parts; interference per virtual register.
    let own = |k: usize| nodes.owner(k);
    let bits = |row: &[u64]| -> Vec<usize> { row.iter().enumerate().flat_map(|(w, &x)| (0..64).filter(move |b| x >> b & 1 != 0).map(move |b| 64 * w + b)).collect() };
    // What is live at entry (the first block starts at item 0).
    let entry: Vec<usize> = if f.items.is_empty() { Vec::new() } else { bits(bin.row(0)).into_iter().map(own).collect() };
    // Virtual registers live at entry must be arguments.
    for &k in entry.iter().filter(|&&k| k >= NPHYS) {
        let info = &f.vregs[k - NPHYS];
        if info.pinned.is_none() {
            return Err(err(f, format!("`{}` is read before it is written", info.name)));
        }
    }
    // Interference: each definition with what is live after it, and the definitions of one
    // item with each other. Gathered one way (a definition's row takes the live-out row a
    // word at a time, walking each block backwards from its end) and made symmetric at the
    // end.
    let mut adj = BitRows::new(n, n);
    let words = n.div_ceil(64);
    // Bits of a live-out row below n are their own owners; above are parts of groups.
    let last_mask = if n.is_multiple_of(64) { !0u64 } else { (1u64 << (n % 64)) - 1 };
    let mut defs: Vec<usize> = Vec::new();
    let mut parts: Vec<usize> = Vec::new();
    let mut lo = vec![0u64; bout.words];
    for b in 0..blocks.len() {
        lo.copy_from_slice(bout.row(b));
        for i in (blocks.start[b]..blocks.end(b)).rev() {
            defs.clear();
            defs.extend(ud.defs(i).iter().map(|&d| nodes.owner(d)));
            defs.dedup();
            if !defs.is_empty() {
                parts.clear();
                for (w, &x) in lo.iter().enumerate().skip(n / 64) {
                    let mut x = if w == n / 64 && !n.is_multiple_of(64) { x & !last_mask } else { x };
                    while x != 0 {
                        parts.push(own(64 * w + x.trailing_zeros() as usize));
                        x &= x - 1;
                    }
                }
                for &d in &defs {
                    let row = adj.row_mut(d);
                    for (k, (r, &x)) in row.iter_mut().zip(&lo).enumerate() {
                        *r |= if k + 1 == words { x & last_mask } else { x };
                    }
                    for &p in &parts {
                        adj.set(d, p);
                    }
                    for &d2 in &defs {
                        adj.set(d, d2);
                    }
                }
                // A gather's or slide-up's destination stays apart from its sources, even
                // where they die.
                if let Item::Inst(ins) = &f.items[i] {
                    if crate::isa::groups::destination_apart(ins.row()) {
                        for &u in ud.uses(i) {
                            let u = own(u);
                            for &d in &defs {
                                adj.set(d, u);
                            }
                        }
                    }
                }
            }
            crate::analysis::step_back(&mut lo, &ud, i);
        }
    }
    // Arguments are all defined at entry.
    let pinned: Vec<usize> = (0..nv).filter(|&v| f.vregs[v].pinned.is_some()).map(|v| v + NPHYS).collect();
    for &a in &pinned {
        for &l in &entry {
            adj.set(a, l);
        }
    }
    let mut members: Vec<usize> = Vec::new();
    for a in 0..n {
        members.clear();
        members.extend(adj.iter(a));
        for &b in &members {
            adj.set(b, a);
        }
    }
    for a in 0..n {
        adj.clear(a, a);
    }
    let uses_mask = f.items.iter().any(|it| {
        let Item::Inst(i) = it else { return false };
        let row = i.row();
        row.ops.iter().zip(&i.ops).any(|(s, o)| s.kind == crate::isa::Kind::V0 || (s.kind == crate::isa::Kind::Vm && *o == Opnd::Imm(0)))
    });
    let mut is_vec = vector_class(f);
    for v in 0..nv {
        is_vec[v] |= is_vec[root(f, v)];
    }
    let mut order: Vec<usize> = (0..nv).filter(|&v| f.vregs[v].part_of.is_none()).collect();
    order.sort_by_cached_key(|&v| {
        let g = if is_vec[v] { f.vregs[v].group } else { 1 };
        (f.vregs[v].pinned.is_none(), std::cmp::Reverse(g), std::cmp::Reverse(adj.count(v + NPHYS)))
    });
    let mut colour: Vec<Option<(u8, u8)>> = vec![None; nv]; // (first register, count)
    let xpool = f.abi.allocatable_x();
    let mut failed = Vec::new();
    for &v in &order {
        let nodev = v + NPHYS;
        // Physical registers v may not take: its physical neighbours and its coloured
        // virtual neighbours' registers (x 0..32, v 32..64).
        let mut busy = adj.row(nodev)[0];
        for nb in adj.iter(nodev).filter(|&k| k >= NPHYS) {
            if let Some((b, c)) = colour[nb - NPHYS] {
                let off = if is_vec[nb - NPHYS] { NX } else { 0 };
                busy |= ((1u64 << c) - 1) << (b as usize + off);
            }
        }
        let taken = |r: usize, cnt: usize| busy >> r & ((1u64 << cnt) - 1) != 0;
        let chosen = if let Some(p) = f.vregs[v].pinned {
            if taken(p as usize, 1) {
                return Err(err(f, format!("argument `{}` cannot stay in {}: it is overwritten while still needed", f.vregs[v].name, crate::text::XNAMES[p as usize])));
            }
            Some((p, 1))
        } else if is_vec[v] {
            let g = f.vregs[v].group.max(1) as usize;
            (0..32usize).step_by(g).filter(|&b| !(uses_mask && b == 0)).find(|&b| !taken(NX + b, g)).map(|b| (b as u8, g as u8))
        } else {
            xpool.iter().copied().find(|&r| !taken(r as usize, 1)).map(|r| (r, 1))
        };
        match chosen {
            Some(c) => colour[v] = Some(c),
            None => failed.push(v),
        }
    }
    if !failed.is_empty() {
        return Ok(Coloured::Failed { vs: failed, adj });
    }
    // Parts take their place in their root.
    for v in 0..nv {
        if let Some((r, off)) = f.vregs[v].part_of {
            colour[v] = colour[r as usize].map(|(b, _)| (b + off, f.vregs[v].group));
        }
    }
    Ok(Coloured::Done(colour))
}

/// Modeled cost of spilling each virtual register: (cost, spillable).
fn spill_costs(f: &Func, depth: &[u32], vtypes: &[Option<(VDialect, i64)>]) -> Vec<(u64, bool)> {
    let nv = f.vregs.len();
    let mut cost = vec![0u64; nv];
    let mut ok: Vec<bool> = (0..nv).map(|v| !f.vregs[v].spill_temp).collect();
    let has_parts: Vec<bool> = {
        let mut h = vec![false; nv];
        for r in &f.vregs {
            if let Some((p, _)) = r.part_of {
                h[p as usize] = true;
            }
        }
        h
    };
    for (i, it) in f.items.iter().enumerate() {
        let Item::Inst(ii) = it else { continue };
        let w = 8u64.saturating_pow(depth[i]);
        for (spec, o) in ii.row().ops.iter().zip(&ii.ops) {
            let (Opnd::Reg(Reg::VirtX(v)) | Opnd::Reg(Reg::VirtV(v))) = o else { continue };
            let v = *v as usize;
            let c = match spec.role {
                Role::Use => 3,
                Role::Def => 1,
                Role::UseDef => 4,
            };
            cost[v] = cost[v].saturating_add(c * w);
            if matches!(o, Opnd::Reg(Reg::VirtV(_))) && vtypes[i].is_none() {
                ok[v] = false;
            }
        }
    }
    for v in 0..nv {
        if f.vregs[v].part_of.is_some() || has_parts[v] {
            ok[v] = false;
        }
    }
    cost.into_iter().zip(ok).collect()
}

/// Modeled cycles of remaking `v` before each instruction that reads it (outside its
/// definition): the run's instructions, weighted by loop depth.
fn remake_cost(f: &Func, v: usize, r: &Remake, depth: &[u32]) -> u64 {
    let me = Reg::VirtX(v as u32);
    let n = r.at.len() as u64;
    let mut c = 0u64;
    for (i, it) in f.items.iter().enumerate() {
        let Item::Inst(ii) = it else { continue };
        if !r.at.contains(&i) && ii.regs().any(|(role, x)| x == me && role != Role::Def) {
            c = c.saturating_add(n * 8u64.saturating_pow(depth[i]));
        }
    }
    c
}

/// Allocates without spilling if every virtual register finds a register (and says so).
pub fn allocate_without_spills(f: &mut Func) -> Result<bool, BuildError> {
    match colour(f)? {
        Coloured::Done(c) => {
            rewrite(f, &c);
            Ok(true)
        }
        Coloured::Failed { .. } => Ok(false),
    }
}

/// Allocates every virtual register, spilling as needed; returns what was spilled.
pub fn allocate(f: &mut Func) -> Result<Spills, BuildError> {
    let mut spills = Spills::default();
    if f.vregs.is_empty() {
        return Ok(spills);
    }
    loop {
        match colour(f)? {
            Coloured::Done(colour) => {
                rewrite(f, &colour);
                return Ok(spills);
            }
            Coloured::Failed { vs, adj } => {
                let depth = loop_depth(f);
                let vtypes = known_vtypes(f);
                let costs = spill_costs(f, &depth, &vtypes);
                let vc = vector_class(f);
                // For each value that found no register: spill the cheapest of it and the
                // values of its class it interferes with, unless a victim chosen for an
                // earlier one is among them already (that may free a register for it).
                let mut victims: Vec<(usize, bool)> = Vec::new();
                for &v in &vs {
                    let class_vec = vc[root(f, v)];
                    let mut cands: Vec<usize> = adj.iter(v + NPHYS).filter(|&k| k >= NPHYS).map(|k| k - NPHYS).collect();
                    cands.push(v);
                    cands.retain(|&c| costs[c].1 && vc[c] == class_vec && f.vregs[c].part_of.is_none());
                    if cands.iter().any(|c| victims.iter().any(|w| w.0 == *c)) {
                        continue;
                    }
                    let score = |c: usize| costs[c].0 as f64 / (adj.count(c + NPHYS) as f64 + 1.0);
                    match cands.into_iter().min_by(|&a, &b| score(a).total_cmp(&score(b))) {
                        Some(victim) => victims.push((victim, class_vec)),
                        None => return Err(pressure_error(f, v, &vc, class_vec)),
                    }
                }
                // Which victims are remade: those that can be, where that costs no more.
                let mut chosen = vec![false; f.vregs.len()];
                for &(v, _) in &victims {
                    chosen[v] = true;
                }
                let remake = remakes_of(f, &chosen);
                let remade: Vec<bool> = victims.iter().map(|&(v, _)| remake[v].as_ref().is_some_and(|r| remake_cost(f, v, r, &depth) <= costs[v].0)).collect();
                // Spilling renumbers the items: each item's loop depth follows it (an inserted
                // load, store or copy is at the depth of the item it serves); the vtypes are
                // redone where a vector value is spilled after another victim.
                let mut depth = depth;
                let mut vtypes = Some(vtypes);
                for (k, (&(victim, class_vec), &remade)) in victims.iter().zip(&remade).enumerate() {
                    if class_vec && vtypes.is_none() {
                        vtypes = Some(known_vtypes(f));
                    }
                    let vt: &[Option<(VDialect, i64)>] = vtypes.as_deref().unwrap_or(&[]);
                    let origin = if remade {
                        // Remaking needs the definition where it is now: found again once an
                        // earlier victim has renumbered the items. Its sources still hold
                        // their values where it is read unless one of them was an earlier
                        // victim (spilling or remaking a value only adds reads of others).
                        let r = if k == 0 {
                            remake[victim].clone()
                        } else {
                            remake[victim].clone().filter(|r| !r.srcs.iter().any(|u| victims[..k].iter().any(|w| w.0 == *u))).and_then(|r| relocated(f, victim, r))
                        };
                        match r {
                            Some(r) => remake_at_reads(f, victim, &r, &depth, &mut spills),
                            None => spill(f, victim, class_vec, &depth, vt, &mut spills)?,
                        }
                    } else {
                        spill(f, victim, class_vec, &depth, vt, &mut spills)?
                    };
                    depth = origin.iter().map(|&o| depth[o]).collect();
                    vtypes = None;
                }
            }
        }
    }
}

/// Replaces every virtual register with its colour.
fn rewrite(f: &mut Func, colour: &[Option<(u8, u8)>]) {
    let map = |r: Reg| -> Reg {
        match r {
            Reg::VirtX(i) => Reg::X(colour[i as usize].expect("coloured").0),
            Reg::VirtV(i) => Reg::V(colour[i as usize].expect("coloured").0),
            p => p,
        }
    };
    let vregs = f.vregs.clone();
    for it in &mut f.items {
        if let Item::Inst(i) = it {
            let row = i.row();
            let mut public = true;
            let mut any_def = false;
            for (spec, o) in row.ops.iter().zip(&i.ops) {
                if matches!(spec.role, Role::Def | Role::UseDef) {
                    if let Opnd::Reg(r) = o {
                        any_def = true;
                        public &= match r {
                            Reg::VirtX(k) | Reg::VirtV(k) => vregs[*k as usize].public,
                            _ => i.public_def,
                        };
                    }
                }
            }
            i.public_def = any_def && public;
            for o in &mut i.ops {
                if let Opnd::Reg(r) = o {
                    *r = map(*r);
                }
            }
        }
    }
    for a in &mut f.args {
        a.reg = map(a.reg);
    }
}

fn inst(mn: &str, ops: Vec<Opnd>, public_def: bool) -> Item {
    Item::Inst(InstItem::new(table().form(mn), ops, public_def))
}

/// A fresh temporary of `v`'s class for one spill or reload.
fn temp(f: &mut Func, v: usize, vector: bool) -> Reg {
    let mut info = f.vregs[v].clone();
    info.name = format!("{}.s", info.name);
    info.pinned = None;
    info.spill_temp = true;
    info.part_of = None;
    f.vregs.push(info);
    let k = f.vregs.len() as u32 - 1;
    if vector { Reg::VirtV(k) } else { Reg::VirtX(k) }
}

/// A scalar temporary holding public data (an address, a saved vl).
fn scalar_temp(f: &mut Func, name: &str) -> Reg {
    let r = f.xreg(name);
    if let Reg::VirtX(k) = r {
        f.vregs[k as usize].spill_temp = true;
        f.vregs[k as usize].public = true;
    }
    r
}

/// The code that moves `t` (a group of `g` vector registers) to (`store`) or from the
/// slot, under the vtype known there.
fn vector_transfer(f: &mut Func, t: Reg, g: u8, slot: crate::ir::Slot, store: bool, vt: (VDialect, i64)) -> Vec<Item> {
    let at = Opnd::Stack { slot, off: 0 };
    let addr = scalar_temp(f, "spill_addr");
    let sp = Reg::X(2);
    let mut out = vec![inst("addi", vec![addr.into(), sp.into(), at], true)];
    match vt.0 {
        VDialect::V1 => {
            let mn = if store { format!("vs{g}r.v") } else { format!("vl{g}re8.v") };
            out.push(inst(&mn, vec![t.into(), addr.into()], !store));
        }
        VDialect::Thead => {
            // Save vl, store or load the group as bytes at VLMAX, restore vl under the vtype
            // known here (vl <= VLMAX of that vtype, so asking for it gives it back).
            let vl = scalar_temp(f, "spill_vl");
            let zero = Reg::X(0);
            let csr_vl = crate::isa::hart::csr::VL as i64;
            out.insert(0, inst("csrrs", vec![vl.into(), Opnd::Imm(csr_vl), zero.into()], true));
            let e8 = VDialect::Thead.vtype(8, g as u32).expect("a group size");
            out.push(inst("th.vsetvli", vec![zero.into(), zero.into(), Opnd::Imm(e8)], true));
            let mn = if store { "th.vse.v" } else { "th.vle.v" };
            out.push(inst(mn, vec![t.into(), addr.into(), Opnd::Imm(1)], !store));
            out.push(inst("th.vsetvli", vec![zero.into(), vl.into(), Opnd::Imm(vt.1)], true));
        }
    }
    out
}

/// Moves `v` to a frame slot: a store after each definition, a load before each use.
/// Returns, for each new item, the index of the item it came from or serves.
fn spill(f: &mut Func, v: usize, vector: bool, depth: &[u32], vtypes: &[Option<(VDialect, i64)>], spills: &mut Spills) -> Result<Vec<usize>, BuildError> {
    let g = f.vregs[v].group.max(1);
    let secret = !f.vregs[v].public;
    let vlenb = (f.target.vlen_max.max(128) / 8) as u32;
    let (size, align) = if vector { (vlenb * g as u32, 16) } else { (8, 8) };
    let name = f.vregs[v].name.clone();
    let slot = f.slot(&format!("spill {name}"), size, align, secret);
    f.slots[slot.0 as usize].spill = true;
    spills.values.push(name.clone());
    let sp = Reg::X(2);
    let mut out: Vec<Item> = Vec::with_capacity(f.items.len() + 16);
    let items = std::mem::take(&mut f.items);
    let me = if vector { Reg::VirtV(v as u32) } else { Reg::VirtX(v as u32) };
    let uses_of = |it: &InstItem| -> (bool, bool) {
        let masked = it.row().vm_operand().is_some_and(|k| it.ops[k] == Opnd::Imm(0));
        let (mut u, mut d) = (false, false);
        for (spec, o) in it.row().ops.iter().zip(&it.ops) {
            if *o == Opnd::Reg(me) {
                match spec.role {
                    Role::Use => u = true,
                    Role::Def => {
                        d = true;
                        // A masked vector write keeps the masked-off elements: it reads too.
                        u |= masked && vector;
                    }
                    Role::UseDef => {
                        u = true;
                        d = true;
                    }
                }
            }
        }
        (u, d)
    };
    // An argument is defined at entry: store it first.
    if let Some(p) = f.vregs[v].pinned {
        let _ = p;
        out.push(inst("sd", vec![me.into(), Opnd::Stack { slot, off: 0 }, sp.into()], true));
        spills.stores += 1;
        spills.cost += 1;
    }
    // Runs of adjacent instructions that all name the value (comments between them aside,
    // no label, no control flow before the last) share one temporary: one reload before
    // the run if it reads the value first, one store after its last write. So an
    // `auipc`/`addi` pair is never split, and `x = f(x); x = g(x)` costs one reload and
    // one store.
    let refs: Vec<(bool, bool)> = items.iter().map(|it| if let Item::Inst(ii) = it { uses_of(ii) } else { (false, false) }).collect();
    let named = |k: usize| refs[k].0 || refs[k].1;
    let mut run_end = vec![usize::MAX; items.len()];
    let mut k = 0;
    while k < items.len() {
        if !named(k) {
            k += 1;
            continue;
        }
        let start = k;
        let mut last = k;
        while let Item::Inst(li) = &items[last] {
            if li.control() != Control::Next {
                break;
            }
            let mut n = last + 1;
            while n < items.len() && matches!(items[n], Item::Comment(_)) {
                n += 1;
            }
            if n < items.len() && named(n) {
                last = n;
            } else {
                break;
            }
        }
        run_end[start] = last;
        k = last + 1;
    }
    let mut current: Option<(Reg, usize, usize)> = None; // (temporary, end of run, last write)
    let n_items = items.len();
    let mut origin: Vec<usize> = vec![0; out.len()];
    for (i, it) in items.into_iter().enumerate() {
        origin.resize(out.len(), i.saturating_sub(1));
        if run_end[i] != usize::MAX {
            let end = run_end[i];
            let t = temp(f, v, vector);
            // Reads before any write in the run need the stored value.
            let first_read = (i..=end).find(|&k| refs[k].0);
            let first_write = (i..=end).find(|&k| refs[k].1);
            let reload = match (first_read, first_write) {
                (Some(r), Some(w)) => r <= w,
                (Some(_), None) => true,
                _ => false,
            };
            if reload {
                let w = 8u64.saturating_pow(depth[i]);
                if vector {
                    let vt = vtypes[first_read.unwrap_or(i)].ok_or_else(|| err(f, format!("cannot spill vector value `{name}`: the vtype is not known where it is used")))?;
                    out.extend(vector_transfer(f, t, g, slot, false, vt));
                } else {
                    out.push(inst("ld", vec![t.into(), Opnd::Stack { slot, off: 0 }, sp.into()], f.vregs[v].public));
                }
                spills.reloads += 1;
                spills.cost += 3 * w;
            }
            let last_write = (i..=end).rev().find(|&k| refs[k].1).unwrap_or(usize::MAX);
            current = Some((t, end, last_write));
        }
        let Item::Inst(mut ii) = it else {
            out.push(it);
            continue;
        };
        let Some((t, end, last_write)) = current else {
            out.push(Item::Inst(ii));
            continue;
        };
        for o in &mut ii.ops {
            if *o == Opnd::Reg(me) {
                *o = Opnd::Reg(t);
            }
        }
        if i == last_write && ii.row().control(|_| Some(0), |_| Some(0)) != Control::Next {
            // A definition by a control-flow instruction cannot be followed by a store.
            return Err(err(f, format!("cannot spill `{name}`: it is written by control-flow instruction `{}`", ii.row().mnemonic)));
        }
        out.push(Item::Inst(ii));
        if i == last_write {
            let w = 8u64.saturating_pow(depth[i]);
            if vector {
                let vt = vtypes.get(i + 1).copied().flatten().or(vtypes[i]).ok_or_else(|| err(f, format!("cannot spill vector value `{name}`: the vtype is not known where it is written")))?;
                out.extend(vector_transfer(f, t, g, slot, true, vt));
            } else {
                out.push(inst("sd", vec![t.into(), Opnd::Stack { slot, off: 0 }, sp.into()], true));
            }
            spills.stores += 1;
            spills.cost += w;
        }
        if i == end {
            current = None;
        }
    }
    origin.resize(out.len(), n_items.saturating_sub(1));
    f.items = out;
    Ok(origin)
}

/// Replaces `v` by a copy of its definition before each run of instructions that reads it
/// (one short-lived temporary per run, as [`spill`] does), and drops the definition.
/// Returns, for each new item, the index of the item it came from or serves.
fn remake_at_reads(f: &mut Func, v: usize, r: &Remake, depth: &[u32], spills: &mut Spills) -> Vec<usize> {
    let me = Reg::VirtX(v as u32);
    let def: Vec<InstItem> = r.at.iter().map(|&i| if let Item::Inst(ii) = &f.items[i] { ii.clone() } else { unreachable!("a definition is an instruction") }).collect();
    spills.remade.push(f.vregs[v].name.clone());
    let items = std::mem::take(&mut f.items);
    let names = |it: &Item| matches!(it, Item::Inst(ii) if ii.ops.contains(&Opnd::Reg(me)));
    let mut out: Vec<Item> = Vec::with_capacity(items.len() + 8);
    let mut origin: Vec<usize> = Vec::with_capacity(items.len() + 8);
    let n_items = items.len();
    let mut current: Option<Reg> = None;
    for (i, it) in items.into_iter().enumerate() {
        origin.resize(out.len(), i.saturating_sub(1));
        if r.at.contains(&i) {
            continue;
        }
        if !names(&it) {
            // A run ends at anything that is not a comment.
            if !matches!(it, Item::Comment(_)) {
                current = None;
            }
            out.push(it);
            continue;
        }
        let Item::Inst(mut ii) = it else { unreachable!("only instructions name registers") };
        let t = match current {
            Some(t) => t,
            None => {
                let t = temp(f, v, false);
                for d in &def {
                    let mut d = d.clone();
                    for o in &mut d.ops {
                        if *o == Opnd::Reg(me) {
                            *o = Opnd::Reg(t);
                        }
                    }
                    d.comment = None;
                    out.push(Item::Inst(d));
                }
                spills.remakes += def.len();
                spills.cost += def.len() as u64 * 8u64.saturating_pow(depth[i]);
                t
            }
        };
        for o in &mut ii.ops {
            if *o == Opnd::Reg(me) {
                *o = Opnd::Reg(t);
            }
        }
        current = if ii.control() == Control::Next { Some(t) } else { None };
        out.push(Item::Inst(ii));
    }
    origin.resize(out.len(), n_items.saturating_sub(1));
    f.items = out;
    origin
}

fn pressure_error(f: &Func, v: usize, vc: &[bool], vector: bool) -> BuildError {
    let nodes = Nodes::of(f);
    let n = NPHYS + f.vregs.len();
    let (_, raw) = crate::analysis::liveness(f);
    let live_out: Vec<Bits> = raw
        .iter()
        .map(|b| {
            let mut o = Bits::new(n);
            for k in b.iter() {
                o.set(nodes.owner(k));
            }
            o
        })
        .collect();
    // The point where the most values of v's class are live while v is.
    let node_v = v + NPHYS;
    let mut best = (0, 0usize);
    for (i, l) in live_out.iter().enumerate() {
        if !l.get(node_v) {
            continue;
        }
        let cnt = l.iter().filter(|&k| k >= NPHYS && vc[k - NPHYS] == vector).count();
        if cnt > best.0 {
            best = (cnt, i);
        }
    }
    let names: Vec<String> = live_out
        .get(best.1)
        .map(|l| l.iter().filter(|&k| k >= NPHYS && vc[k - NPHYS] == vector).map(|k| f.vregs[k - NPHYS].name.clone()).collect())
        .unwrap_or_default();
    let at = match f.items.get(best.1) {
        Some(Item::Inst(i)) => format!("after `{}`", f.inst_text(i)),
        _ => format!("at item {}", best.1),
    };
    let class = if vector { "vector" } else { "integer" };
    let avail = if vector { 32 } else { f.abi.allocatable_x().len() };
    BuildError {
        func: f.name.clone(),
        inst: String::new(),
        index: None,
        loc: None,
        reason: format!(
            "out of {class} registers for `{}` ({avail} allocatable under the {} ABI, and none of the values live there can be spilled): {} values live {at}: {}",
            f.vregs[v].name,
            f.abi,
            names.len(),
            names.join(", ")
        ),
    }
}
