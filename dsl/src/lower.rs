//! Lowering a described function to physical code: register allocation (virtual registers
//! to physical ones, vector groups aligned to their size) and the frame (prologue, epilogue,
//! wipes), both from what the function actually uses.

use crate::abi::Abi;
use crate::analysis::{item_liveness, label_positions, liveness_with, node, successor_pair, Bits, Nodes, UseDefs, NPHYS};
use crate::ir::{BuildError, Frame, Func, InstItem, Item, Opnd, Reg, Region};
use crate::isa::{table, Control, Role, VDialect};

/// Where a Go frame's locals start: after the saved ra at 0(sp).
pub const GO_LOCALS_AT: u32 = 8;
/// The largest Go frame a NOSPLIT function may have (the linker's nosplit limit is 800
/// bytes, including the 8 of the saved ra; checked with Go 1.23: 792 links, 800 does not).
/// A larger frame makes the Go output leave out NOSPLIT.
pub const GO_NOSPLIT_LOCALS: u32 = 792;


fn err(f: &Func, reason: String) -> BuildError {
    BuildError { func: f.name.clone(), inst: String::new(), index: None, loc: None, reason }
}

/// Assigns physical registers to every virtual register, spilling where it must (see
/// [`crate::alloc`]).
pub fn allocate(f: &mut Func) -> Result<crate::ir::Spills, BuildError> {
    crate::alloc::allocate(f)
}


fn mk(mn: &str, ops: Vec<Opnd>) -> Item {
    Item::Inst(InstItem::new(table().form(mn), ops, true))
}

/// What may hold secrets on entry to an item, on some path to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Held {
    /// Integer registers written with a non-public value.
    x: u32,
    /// The LMUL-8 blocks of vector registers (bit b: v8b..v8b+7) some register of which
    /// was written with a non-public value.
    vector: u8,
    /// Stack slots an instruction has addressed (bit k: slot k).
    slots: u64,
}

impl Held {
    fn union(self, o: Held) -> Held {
        Held { x: self.x | o.x, vector: self.vector | o.vector, slots: self.slots | o.slots }
    }
}

/// For each item, what may hold a non-public value on entry to it (forward dataflow over
/// the written registers' `public_def` marks and the slots addressed), so that each exit
/// wipes only what a path to it can have left.
fn possibly_secret(f: &Func) -> Vec<Held> {
    let label_at = label_positions(f);
    let m = f.items.len();
    let mut inn = vec![Held::default(); m];
    let mut reached = vec![false; m];
    if m > 0 {
        reached[0] = true;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..m {
            if !reached[i] {
                continue;
            }
            let mut out = inn[i];
            if let Item::Inst(it) = &f.items[i] {
                let row = it.row();
                for (spec, o) in row.ops.iter().zip(&it.ops) {
                    match (spec.role, o) {
                        (Role::Def | Role::UseDef, Opnd::Reg(Reg::X(n))) => {
                            if it.public_def {
                                out.x &= !(1 << n);
                            } else {
                                out.x |= 1 << n;
                            }
                        }
                        (Role::Def | Role::UseDef, Opnd::Reg(Reg::V(n))) if !it.public_def => {
                            // A group lies in one aligned block; a segment's fields (at most
                            // eight registers) may reach into the next.
                            let n = *n as usize;
                            let last = match spec.kind {
                                crate::isa::Kind::V(crate::isa::VGroup::Seg(_) | crate::isa::VGroup::Eew { .. }) => (n + 7).min(31),
                                _ => n,
                            };
                            out.vector |= (1 << (n / 8)) | (1 << (last / 8));
                        }
                        (_, Opnd::Stack { slot, .. }) => out.slots |= 1 << slot.0.min(63),
                        _ => {}
                    }
                }
            }
            for s in successor_pair(f, &label_at, i).into_iter().filter(|&s| s != usize::MAX) {
                let new = inn[s].union(out);
                if !reached[s] || new != inn[s] {
                    inn[s] = new;
                    reached[s] = true;
                    changed = true;
                }
            }
        }
    }
    inn
}

/// Spill slots whose values are never live at the same point share their frame bytes: the
/// allocator gives every spilled value a slot of its own, and a kernel that spills many
/// short-lived values would otherwise have a frame of their sum. A slot shares only if every
/// access to it is a doubleword `ld` or `sd` of the whole slot (a scalar spill's); a slot is
/// live from a store to the loads that store reaches. Two slots interfere when one is
/// stored while the other is live. Merged slots keep the first one's place (secret if either
/// was) and the others take no bytes.
fn share_spill_slots(f: &mut Func) {
    let ns = f.slots.len();
    let mut ok: Vec<bool> = f.slots.iter().map(|s| s.spill && s.size == 8).collect();
    let m = f.items.len();
    let mut access: Vec<Option<(usize, bool)>> = vec![None; m];
    for (i, it) in f.items.iter().enumerate() {
        let Item::Inst(ii) = it else { continue };
        let row = ii.row();
        for o in &ii.ops {
            if let Opnd::Stack { slot, off } = o {
                let s = slot.0 as usize;
                match (row.class, row.mem, off) {
                    (crate::isa::Class::Load | crate::isa::Class::Store, Some(mem), 0) if mem.bytes == 8 && matches!(mem.addr, crate::isa::Addr::BaseOff { .. }) => {
                        access[i] = Some((s, mem.dir == crate::isa::Dir::Store))
                    }
                    _ => ok[s] = false,
                }
            }
        }
    }
    let cands: Vec<usize> = (0..ns).filter(|&s| ok[s]).collect();
    if cands.len() < 2 {
        return;
    }
    let mut idx = vec![usize::MAX; ns];
    for (k, &s) in cands.iter().enumerate() {
        idx[s] = k;
    }
    // A load uses its slot, a store defines it: the registers' liveness, over the slots.
    let nc = cands.len();
    let ud = UseDefs::from_fn(m, |i, uses, defs| {
        if let Some((s, store)) = access[i] {
            if idx[s] != usize::MAX {
                if store { defs } else { uses }.push(idx[s]);
            }
        }
    });
    let (_, live_out) = item_liveness(f, nc, &ud);
    // Interference: a store to one slot where another is live after it.
    let mut adj = vec![Bits::new(nc); nc];
    for i in 0..m {
        let Some((s, true)) = access[i] else { continue };
        let k = idx[s];
        if k == usize::MAX {
            continue;
        }
        for o in live_out.iter(i) {
            if o != k {
                adj[k].set(o);
                adj[o].set(k);
            }
        }
    }
    // Greedy: each slot joins the first group none of whose members it interferes with.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut rep = (0..ns).collect::<Vec<usize>>();
    for k in 0..nc {
        match groups.iter_mut().find(|g| g.iter().all(|&o| !adj[k].get(o))) {
            Some(g) => {
                rep[cands[k]] = cands[g[0]];
                g.push(k);
            }
            None => groups.push(vec![k]),
        }
    }
    for s in 0..ns {
        let r = rep[s];
        if r != s {
            f.slots[r].secret |= f.slots[s].secret;
            f.slots[s].size = 0;
            f.slots[s].align = 1;
        }
    }
    for it in &mut f.items {
        if let Item::Inst(ii) = it {
            for o in &mut ii.ops {
                if let Opnd::Stack { slot, .. } = o {
                    slot.0 = rep[slot.0 as usize] as u32;
                }
            }
        }
    }
}

/// Builds prologue and epilogues; resolves stack-slot operands. Requires physical registers.
pub fn frame(f: &mut Func) -> Result<Frame, BuildError> {
    share_spill_slots(f);
    let mut written = [false; 32];
    let mut uses_vector = false;
    for it in &f.items {
        if let Item::Inst(i) = it {
            let row = i.row();
            uses_vector |= row.vdialect.is_some();
            for (spec, o) in row.ops.iter().zip(&i.ops) {
                if let (Role::Def | Role::UseDef, Opnd::Reg(Reg::X(n))) = (spec.role, o) {
                    written[*n as usize] = true;
                }
            }
        }
    }
    // Under Go the assembler builds the frame (`TEXT $N`: it saves ra at 0(sp) and the N
    // bytes of locals sit at 8(sp)..): the slots go there and the code adjusts nothing.
    let hosted = f.abi == Abi::Go;
    let mut saves: Vec<u8> = f.abi.callee_saved().iter().copied().filter(|&r| written[r as usize]).collect();
    if written[1] && !hosted {
        saves.push(1);
    }
    let base = if hosted { GO_LOCALS_AT } else { 0 };
    // Slots of a frame-sharing group: each member's laid out from the group's start; the
    // group as big as its largest member and aligned as its most aligned slot.
    let mut within = vec![0u32; f.slots.len()];
    let mut members: std::collections::BTreeMap<(u32, u32), u32> = Default::default();
    let mut groups: std::collections::BTreeMap<u32, (u32, u32)> = Default::default();
    for (k, s) in f.slots.iter().enumerate() {
        if let Some((g, m)) = s.share {
            let end = members.entry((g, m)).or_insert(0);
            let at = end.next_multiple_of(s.align.max(1));
            within[k] = at;
            *end = at + s.size;
            let e = groups.entry(g).or_insert((0, 1));
            *e = (e.0.max(*end), e.1.max(s.align.max(1)));
        }
    }
    let mut placed: std::collections::BTreeMap<u32, u32> = Default::default();
    let mut off = base;
    let mut slot_offs = Vec::new();
    for (k, s) in f.slots.iter().enumerate() {
        if let Some((g, _)) = s.share {
            let start = *placed.entry(g).or_insert_with(|| {
                let (size, align) = groups[&g];
                let start = off.next_multiple_of(align);
                off = start + size;
                start
            });
            slot_offs.push(start + within[k]);
            continue;
        }
        off = off.next_multiple_of(s.align.max(1));
        slot_offs.push(off);
        off += s.size;
    }
    off = off.next_multiple_of(8);
    let mut saved = Vec::new();
    for &r in &saves {
        saved.push((r, off));
        off += 8;
    }
    let (size, host) = if hosted {
        // A frame also makes Go save and restore ra, should the code write it.
        let locals = (off - base).max(if written[1] { 8 } else { 0 });
        (0, locals)
    } else {
        (off.next_multiple_of(16), 0)
    };
    if size > 2032 {
        return Err(err(f, format!("frame of {size} bytes is larger than one addi can allocate")));
    }
    f.host_frame = host;
    let sp = Reg::X(2);
    let zero = Reg::X(0);
    let held = possibly_secret(f);
    // Resolve slot operands.
    for it in &mut f.items {
        if let Item::Inst(i) = it {
            for o in &mut i.ops {
                if let Opnd::Stack { slot, off } = o {
                    *o = Opnd::Imm(slot_offs[slot.0 as usize] as i64 + *off);
                }
            }
        }
    }
    let mut prologue = Vec::new();
    if size > 0 {
        prologue.push(mk("addi", vec![sp.into(), sp.into(), Opnd::Imm(-(size as i64))]));
    }
    for &(r, o) in &saved {
        prologue.push(mk("sd", vec![Reg::X(r).into(), Opnd::Imm(o as i64), sp.into()]));
    }
    // The epilogue of an exit: wipes of what a path to it may have left, restores, return.
    let vdialect = f.target.vdialect();
    // Integer registers: every exit wipes what any exit may have left (as before); vector
    // registers and stack slots only where a path to the exit wrote them.
    let x_mask = f.items.iter().zip(&held).filter(|(it, _)| **it == Item::Exit).fold(0u32, |m, (_, h)| m | h.x);
    let epilogue = |h: Held, written: &mut [bool; 32]| -> Vec<Item> {
        let mut epilogue = Vec::new();
        if f.wipe {
            // The vector registers a path may have left something in: e8 (any SEW works),
            // LMUL 8, vl = VLMAX, each such block of eight registers.
            if let (true, true, Some(d)) = (uses_vector, h.vector != 0, vdialect) {
                let vt = Opnd::Imm(d.vtype(8, 8).expect("e8, m8 is a vtype"));
                let (set, zero_group) = match d {
                    VDialect::Thead => ("th.vsetvli", "th.vmv.v.i"),
                    VDialect::V1 => ("vsetvli", "vmv.v.i"),
                };
                // RVV 1.0's vsetvli with rd = rs1 = x0 keeps vl: VLMAX needs rd != x0.
                let rd = if d == VDialect::V1 { Reg::X(5) } else { zero };
                epilogue.push(mk(set, vec![rd.into(), zero.into(), vt]));
                for b in 0..4u8 {
                    if h.vector >> b & 1 != 0 {
                        epilogue.push(mk(zero_group, vec![Reg::V(8 * b).into(), Opnd::Imm(0)]));
                    }
                }
                if rd == Reg::X(5) {
                    written[5] = true;
                }
            }
            for (k, s) in f.slots.iter().enumerate() {
                if s.secret && (h.slots >> k.min(63)) & 1 != 0 {
                    let mut o = 0;
                    while o + 8 <= s.size {
                        epilogue.push(mk("sd", vec![zero.into(), Opnd::Imm((slot_offs[k] + o) as i64), sp.into()]));
                        o += 8;
                    }
                    while o < s.size {
                        epilogue.push(mk("sb", vec![zero.into(), Opnd::Imm((slot_offs[k] + o) as i64), sp.into()]));
                        o += 1;
                    }
                }
            }
            for r in 1..32u8 {
                let keep = r == 2 || r == 1 || (r == 10 && f.result.is_value()) || f.abi.callee_saved().contains(&r) || f.abi.reserved().contains(&r);
                if written[r as usize] && !keep && (x_mask >> r) & 1 != 0 {
                    epilogue.push(mk("addi", vec![Reg::X(r).into(), zero.into(), Opnd::Imm(0)]));
                }
            }
        }
        for &(r, o) in &saved {
            epilogue.push(mk("ld", vec![Reg::X(r).into(), Opnd::Imm(o as i64), sp.into()]));
        }
        if hosted && written[1] {
            // Go's prologue saved ra at 0(sp); the code used ra, so it reloads it.
            epilogue.push(mk("ld", vec![Reg::X(1).into(), Opnd::Imm(0), sp.into()]));
        }
        if size > 0 {
            epilogue.push(mk("addi", vec![sp.into(), sp.into(), Opnd::Imm(size as i64)]));
        }
        epilogue.push(mk("jalr", vec![zero.into(), Opnd::Imm(0), Reg::X(1).into()]));
        epilogue
    };
    let mut items = prologue;
    for (it, h) in f.items.drain(..).zip(held) {
        if it == Item::Exit {
            items.push(Item::Comment("return".into()));
            items.extend(epilogue(h, &mut written));
        } else {
            items.push(it);
        }
    }
    f.items = items;
    Ok(Frame {
        size,
        host,
        saved,
        slots: slot_offs,
        written: (0..32u8).filter(|&r| written[r as usize]).collect(),
        uses_vector,
        spills: Default::default(),
    })
}

/// Rewrites conditional branches whose target is out of the ±4 KiB reach as the inverted
/// branch over a `jal` (as GNU as does), until every branch reaches.
pub fn relax_branches(f: &mut Func) -> Result<(), BuildError> {
    loop {
        let mut off = Vec::with_capacity(f.items.len());
        let mut at = std::collections::HashMap::new();
        let mut pc = 0i64;
        for it in &f.items {
            off.push(pc);
            match it {
                Item::Label(l) => {
                    at.insert(*l, pc);
                }
                Item::Inst(_) => pc += 4,
                Item::Data(d) => pc += d.len() as i64,
                _ => {}
            }
        }
        let far = f.items.iter().enumerate().find_map(|(i, it)| {
            let Item::Inst(inst) = it else { return None };
            if inst.control() != Control::Branch {
                return None;
            }
            let d = at.get(&inst.target()?)? - off[i];
            let crate::isa::Kind::Rel(spec) = inst.row().ops[inst.row().target_operand()?].kind else { return None };
            (!(spec.min..=spec.max).contains(&d)).then_some(i)
        });
        let Some(i) = far else { return Ok(()) };
        let Item::Inst(b) = f.items[i].clone() else { unreachable!() };
        let (Some(inverse), Some(t)) = (b.row().inverse, b.row().target_operand()) else {
            return Err(err(f, format!("branch `{}` is out of reach and its row names no inverse", f.inst_text(&b))));
        };
        let skip = f.label();
        f.labels[skip.0 as usize].bound = true;
        let mut inv = b.clone();
        inv.form = inverse;
        inv.ops[t] = Opnd::Label(skip);
        let mut jump = InstItem::new(table().form("jal"), vec![Opnd::Reg(Reg::X(0)), b.ops[t].clone()], true);
        jump.comment = b.comment.clone();
        jump.loc = b.loc;
        f.items.splice(i..=i, [Item::Inst(inv), Item::Inst(jump), Item::Label(skip)]);
    }
}

/// Registers left to the allocator beyond what the scheduler counts, tightest first: the
/// scheduler's count of live values ignores interference the colouring meets, so a tight
/// schedule may need spills that a looser one avoids. The lowering arranges the regions
/// with each margin, allocates (spilling where needed) and keeps the cheapest result by
/// the modeled C906 cycles ([`modeled_cycles`]).
const MARGINS: [usize; 6] = [1, 2, 3, 4, 6, 8];

fn has_regions(items: &[Item]) -> bool {
    items.iter().any(|i| matches!(i, Item::Region(_)))
}

/// A region's place in the flattened code: its item range, and the ranges of the streams it
/// will be merged with (their values are live alongside it once merged).
#[derive(Clone, Debug, Default)]
struct Placed {
    range: (usize, usize),
    beside: Vec<(usize, usize)>,
}

/// `items` with every region replaced by its streams in source order; `placed[k]` is where
/// region k went (regions numbered in preorder). `beside`: the sibling streams enclosing
/// this part.
fn flatten(items: &[Item], out: &mut Vec<Item>, placed: &mut Vec<Placed>, beside: &[(usize, usize)]) {
    for it in items {
        match it {
            Item::Region(r) => {
                let k = placed.len();
                placed.push(Placed { range: (out.len(), out.len()), beside: beside.to_vec() });
                let parts = r.parts();
                // Each stream's extent, to tell the other stream's regions.
                let mut starts = Vec::new();
                let mut trial = Vec::new();
                let mut dummy = Vec::new();
                for p in &parts {
                    starts.push(out.len() + trial.len());
                    flatten(p, &mut trial, &mut dummy, &[]);
                }
                let end = out.len() + trial.len();
                let extents: Vec<(usize, usize)> = (0..parts.len()).map(|j| (starts[j], *starts.get(j + 1).unwrap_or(&end))).collect();
                for (j, p) in parts.iter().enumerate() {
                    let mut b = beside.to_vec();
                    b.extend(extents.iter().enumerate().filter(|(o, _)| *o != j).map(|(_, e)| *e));
                    flatten(p, out, placed, &b);
                }
                placed[k].range.1 = out.len();
            }
            other => out.push(other.clone()),
        }
    }
}

/// How regions are expanded: integer registers each region may keep live, by region.
#[derive(Clone)]
struct Plan {
    /// Per region (preorder): the integer registers left beside what lives through it.
    caps: Vec<usize>,
    margin: usize,
    /// Register units of the function (a vector group and its parts overlap).
    units: crate::analysis::Units,
    vshapes: Vec<crate::timing::VShape>,
    vlen: u64,
    next: usize,
}

/// Cycles the list scheduler adds to a multiply's latency: on the C906 a multiply writes
/// back only in a cycle no ALU or load result takes (the one result bus, EX1 first [M:
/// openc906 RTL, docs/cost-model.md]), which the scheduler's latency table cannot express;
/// placing its readers this much further away is what schedules GHASH c906-novector's
/// multiply blocks best on the cost model (26.82 c/B at 1 KiB against 28.38 with none; 4:
/// 27.27, 6: 27.38, 8: 26.82, 10: 26.88) without moving any other kernel by more than 0.2%.
const MUL_WRITEBACK_SLACK: u32 = 7;

/// Expands the regions of `items` (inner ones first), numbering them in preorder.
fn expand(items: Vec<Item>, plan: &mut Plan) -> Result<Vec<Item>, String> {
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let Item::Region(r) = it else {
            out.push(it);
            continue;
        };
        let k = plan.next;
        plan.next += 1;
        let items = match r {
            Region::Schedule { items, window, carried } => {
                let inner = expand(items, plan)?;
                let shape = plan.vshapes[k];
                // Latency in issue slots: a vector result is ready ceil(latency / busy) vector
                // instructions later (the vector unit runs them back to back).
                let latency = move |i: &InstItem| {
                    let t = crate::timing::c906(i.row(), shape);
                    let extra = if i.row().mul.is_some() { MUL_WRITEBACK_SLACK } else { 0 };
                    if t.vpu_busy == 0 { t.latency as u32 + extra } else { t.latency.div_ceil(t.vpu_busy) as u32 }
                };
                crate::sched::schedule_block(inner, plan.caps[k].saturating_sub(plan.margin).max(2), window, carried, latency, &plan.units).map_err(|e| format!("scheduling a region: {e}"))?
            }
            Region::Merge { a, b, lookahead, order } => {
                let shape = plan.vshapes[k];
                let (a, b) = (expand(a, plan)?, expand(b, plan)?);
                // Vector instructions are timed under the vtype known where the region starts.
                let cfg = crate::sched::MergeCfg { lookahead, vlen: plan.vlen, vtype: (shape.lmul, shape.sew), order };
                crate::sched::merge_timed_cfg(a, b, &cfg, &plan.units).map_err(|e| format!("merging two streams: {e}"))?
            }
            Region::Interleave { a, b } => {
                let (a, b) = (expand(a, plan)?, expand(b, plan)?);
                crate::analysis::interleave_in(a, b, &plan.units).map_err(|e| format!("interleaving two streams: {e}"))?
            }
        };
        out.extend(items);
    }
    Ok(out)
}

/// Replaces every region by its arranged code: a scheduled block may keep as many integer
/// values live as the ABI leaves registers, less the values live across it untouched, less
/// `margin`.
fn region_plan(f: &Func) -> Plan {
    let mut flat = Vec::new();
    let mut placed = Vec::new();
    flatten(&f.items, &mut flat, &mut placed, &[]);
    let mut g = f.clone();
    g.items = flat;
    let nodes = Nodes::of(&g);
    let ud = UseDefs::of(&g, &nodes);
    let (live_in, live_out) = liveness_with(&g, &nodes, &ud);
    let vtypes = crate::alloc::known_vtypes(&g);
    let pool = f.abi.allocatable_x();
    let vc = crate::alloc::vector_class(&g);
    // Values the allocator can remake where read need no register across a region.
    let free: Vec<bool> = crate::alloc::remakes(&g).iter().map(|r| r.is_some()).collect();
    let is_x = |n: usize| if n >= NPHYS + f.vregs.len() { false } else if n >= NPHYS { !vc[n - NPHYS] && !free[n - NPHYS] } else { pool.contains(&(n as u8)) };
    let mut caps = Vec::new();
    let mut vshapes = Vec::new();
    let touched_in = |s: usize, e: usize| {
        let mut t = Bits::new(nodes.n);
        for i in s..e {
            for &x in ud.uses(i).iter().chain(ud.defs(i)) {
                t.set(x);
            }
        }
        t
    };
    for pl in &placed {
        let (s, e) = pl.range;
        let touched = touched_in(s, e);
        let mut through = if e > s {
            live_in[s].iter().filter(|&n| live_out[e - 1].get(n) && !touched.get(n) && is_x(n)).count()
        } else {
            0
        };
        // The integer values of the streams this one will be merged with are live beside it.
        let mut beside = Bits::new(nodes.n);
        for &(bs, be) in &pl.beside {
            beside.union_with(&touched_in(bs, be));
        }
        through += beside.iter().filter(|&n| !touched.get(n) && is_x(n) && !(e > s && live_in[s].get(n) && live_out[e - 1].get(n))).count();
        caps.push(pool.len().saturating_sub(through));
        let shape = match vtypes.get(s).copied().flatten() {
            Some((d, vt)) => crate::isa::Hart::new(f.target.vlen.max(128))
                .decode_vtype(d, vt as u64)
                .map(|c| crate::timing::VShape { lmul: c.group_regs() as u64, sew: c.sew as u64, vl: c.vlmax as u64, vlen: f.target.vlen.max(128) as u64 })
                .unwrap_or(crate::timing::VShape::DEFAULT),
            None => crate::timing::VShape::DEFAULT,
        };
        vshapes.push(shape);
    }
    let mut units = crate::analysis::Units::of(f);
    units.free = free;
    Plan { caps, vshapes, vlen: f.target.vlen.max(128) as u64, next: 0, margin: 0, units }
}

/// Replaces every region by its arranged code under `plan` with `margin`.
fn expand_regions(f: &mut Func, plan: &Plan, margin: usize) -> Result<(), BuildError> {
    let mut plan = Plan { margin, next: 0, ..plan.clone() };
    let items = std::mem::take(&mut f.items);
    f.items = expand(items, &mut plan).map_err(|e| err(f, e))?;
    Ok(())
}

/// Allocation, frame, branch relaxation: the function afterwards has only physical
/// registers and real instructions, and every branch reaches its target. Regions are
/// arranged first; of the register margins (`MARGINS`) the one whose allocated code
/// models cheapest is kept.
pub fn lower(f: &mut Func) -> Result<Frame, BuildError> {
    let spills;
    if has_regions(&f.items) {
        let mut best: Option<(u64, Func, crate::ir::Spills)> = None;
        let mut last_err = None;
        let plan = region_plan(f);
        let mut tried: Vec<Vec<Item>> = Vec::new();
        let mut prev: Option<u64> = None;
        for margin in MARGINS {
            let mut g = f.clone();
            expand_regions(&mut g, &plan, margin)?;
            // Margins whose caps the scheduler never reaches arrange the same code.
            if tried.contains(&g.items) {
                continue;
            }
            tried.push(g.items.clone());
            match allocate(&mut g) {
                Ok(sp) => {
                    let c = modeled_cycles(&g);
                    // Looser margins cost more once they stop helping: stop at the first
                    // that is worse than both the best and the one before it.
                    let stop = best.as_ref().is_some_and(|b| c > b.0) && prev.is_some_and(|p| c > p);
                    prev = Some(c);
                    if best.as_ref().is_none_or(|b| c < b.0) {
                        best = Some((c, g, sp));
                    }
                    if stop {
                        break;
                    }
                }
                Err(e) => last_err = Some(e),
            }
        }
        match best {
            Some((_, g, sp)) => {
                *f = g;
                spills = sp;
            }
            None => return Err(last_err.expect("at least one margin")),
        }
    } else {
        spills = allocate(f)?;
    }
    let mut fr = frame(f)?;
    fr.spills = spills;
    relax_branches(f)?;
    Ok(fr)
}

/// Modeled C906 cycles of allocated code, statically: instructions issue in order in item
/// order, each when its operands are ready and (for vector instructions) the vector unit
/// is free, with the timing table's slots and latencies at the vtype known there; an
/// instruction counts 8 times per loop around it. A comparison of arrangements of one
/// function, not a prediction of its run time.
pub fn modeled_cycles(f: &Func) -> u64 {
    let depth = crate::analysis::loop_depth(f);
    let vtypes = crate::alloc::known_vtypes(f);
    let vlen = f.target.vlen.max(128);
    let hart = crate::isa::Hart::new(vlen);
    let mut ready = [0u64; NPHYS];
    let (mut cycle, mut vpu, mut total) = (0u64, 0u64, 0u64);
    for (i, it) in f.items.iter().enumerate() {
        let Item::Inst(ii) = it else { continue };
        let row = ii.row();
        let shape = vtypes[i]
            .and_then(|(d, vt)| hart.decode_vtype(d, vt as u64))
            .map(|c| crate::timing::VShape { lmul: c.group_regs() as u64, sew: c.sew as u64, vl: c.vlmax as u64, vlen: vlen as u64 })
            .unwrap_or(crate::timing::VShape::DEFAULT);
        let tm = crate::timing::c906(row, shape);
        let mut t = cycle;
        for (role, r) in ii.regs() {
            if role != Role::Def && !matches!(r, Reg::VirtX(_) | Reg::VirtV(_)) {
                t = t.max(ready[node(r)]);
            }
        }
        if row.class.is_vector() && row.class != crate::isa::Class::VSet {
            t = t.max(vpu);
        }
        if tm.vpu_busy > 0 {
            vpu = t + tm.vpu_busy;
        }
        let next = t + tm.slots.max(1);
        for (role, r) in ii.regs() {
            if role != Role::Use && !matches!(r, Reg::VirtX(_) | Reg::VirtV(_)) {
                ready[node(r)] = t + tm.latency;
            }
        }
        total = total.saturating_add((next - cycle).saturating_mul(8u64.saturating_pow(depth[i])));
        cycle = next;
    }
    total
}

