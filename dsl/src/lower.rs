//! Lowering a described function to physical code: register allocation (virtual registers
//! to physical ones, vector groups aligned to their size) and the frame (prologue, epilogue,
//! wipes), both from what the function actually uses.

use crate::abi::Abi;
use crate::func::{BuildError, Func, InstItem, Item, Label, Opnd, Reg};
use crate::isa::{table, Control, Kind, Role, VDialect};

const NX: usize = 32;
const NPHYS: usize = 64;

/// A small growable bit set.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Bits(Vec<u64>);

impl Bits {
    pub fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    pub fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    pub fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 != 0
    }
    /// self |= o; returns whether anything changed.
    pub fn union_with(&mut self, o: &Bits) -> bool {
        let mut ch = false;
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            let n = *a | *b;
            ch |= n != *a;
            *a = n;
        }
        ch
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &b)| (0..64).filter(move |k| b >> k & 1 != 0).map(move |k| w * 64 + k))
    }
    pub fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Node index of a register: physical X 0..32, physical V 32..64, virtual 64+.
pub fn node(r: Reg) -> usize {
    match r {
        Reg::X(n) => n as usize,
        Reg::V(n) => NX + n as usize,
        Reg::VirtX(i) | Reg::VirtV(i) => NPHYS + i as usize,
    }
}

/// Uses and defs (node indices) of one item.
pub fn uses_defs(f: &Func, it: &Item) -> (Vec<usize>, Vec<usize>) {
    let mut u = Vec::new();
    let mut d = Vec::new();
    match it {
        Item::Inst(i) => {
            let row = i.row();
            let masked = row.vm_operand().is_some_and(|k| i.ops[k] == Opnd::Imm(0));
            for (spec, o) in row.ops.iter().zip(&i.ops) {
                if spec.kind == Kind::V0 || (spec.kind == Kind::Vm && masked) {
                    u.push(NX);
                }
                let Opnd::Reg(r) = o else { continue };
                if *r == Reg::X(0) {
                    continue;
                }
                let n = node(*r);
                let role = if masked && spec.role == Role::Def && r.is_vector() { Role::UseDef } else { spec.role };
                match role {
                    Role::Use => u.push(n),
                    Role::Def => d.push(n),
                    Role::UseDef => {
                        u.push(n);
                        d.push(n);
                    }
                }
            }
        }
        Item::Exit if f.result.is_value() => u.push(10),
        _ => {}
    }
    (u, d)
}

/// Successor item indices of item `i` (control flow, from the rows' [`Control`]). A return
/// and an indirect jump have none.
pub fn successors(f: &Func, label_at: &[usize], i: usize) -> Vec<usize> {
    let next = if i + 1 < f.items.len() { vec![i + 1] } else { vec![] };
    match &f.items[i] {
        Item::Exit => vec![],
        Item::Inst(it) => {
            let target = it.target().map(|l| label_at[l.0 as usize]).filter(|&t| t != usize::MAX);
            match it.control() {
                Control::Next | Control::Call => next,
                Control::Jump => target.into_iter().collect(),
                Control::Branch => {
                    let mut s = next;
                    s.extend(target);
                    s
                }
                Control::Return | Control::IndirectJump => vec![],
            }
        }
        _ => next,
    }
}

/// Item index where each label is bound.
pub fn label_positions(f: &Func) -> Vec<usize> {
    let mut at = vec![usize::MAX; f.labels.len()];
    for (i, it) in f.items.iter().enumerate() {
        if let Item::Label(l) = it {
            at[l.0 as usize] = i;
        }
    }
    at
}

/// Live-in and live-out sets per item.
pub fn liveness(f: &Func) -> (Vec<Bits>, Vec<Bits>) {
    let n = NPHYS + f.vregs.len();
    let m = f.items.len();
    let label_at = label_positions(f);
    let ud: Vec<_> = f.items.iter().map(|it| uses_defs(f, it)).collect();
    let succ: Vec<_> = (0..m).map(|i| successors(f, &label_at, i)).collect();
    let mut live_in = vec![Bits::new(n); m];
    let mut live_out = vec![Bits::new(n); m];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..m).rev() {
            let mut out = Bits::new(n);
            for &s in &succ[i] {
                out.union_with(&live_in[s]);
            }
            let mut inn = out.clone();
            for &d in &ud[i].1 {
                inn.clear(d);
            }
            for &u in &ud[i].0 {
                inn.set(u);
            }
            if inn != live_in[i] {
                live_in[i] = inn;
                changed = true;
            }
            live_out[i] = out;
        }
    }
    (live_in, live_out)
}

fn err(f: &Func, reason: String) -> BuildError {
    BuildError { func: f.name.clone(), inst: String::new(), index: None, loc: None, reason }
}

/// Assigns physical registers to every virtual register.
pub fn allocate(f: &mut Func) -> Result<(), BuildError> {
    let nv = f.vregs.len();
    if nv == 0 {
        return Ok(());
    }
    let n = NPHYS + nv;
    let (live_in, live_out) = liveness(f);
    // Virtual registers live at entry must be arguments.
    for v in live_in.first().map(|b| b.iter().filter(|&k| k >= NPHYS).collect::<Vec<_>>()).unwrap_or_default() {
        let info = &f.vregs[v - NPHYS];
        if info.pinned.is_none() {
            return Err(err(f, format!("`{}` is read before it is written", info.name)));
        }
    }
    // Interference.
    let mut adj = vec![Bits::new(n); n];
    let add = |a: usize, b: usize, adj: &mut Vec<Bits>| {
        if a != b {
            adj[a].set(b);
            adj[b].set(a);
        }
    };
    for (i, it) in f.items.iter().enumerate() {
        let (_, defs) = uses_defs(f, it);
        for &d in &defs {
            for l in live_out[i].iter() {
                add(d, l, &mut adj);
            }
            for &d2 in &defs {
                add(d, d2, &mut adj);
            }
        }
    }
    // Arguments are all defined at entry.
    let pinned: Vec<usize> = (0..nv).filter(|&v| f.vregs[v].pinned.is_some()).map(|v| v + NPHYS).collect();
    for &a in &pinned {
        for l in live_in.first().map(|b| b.iter().collect::<Vec<_>>()).unwrap_or_default() {
            add(a, l, &mut adj);
        }
    }
    let uses_mask = f.items.iter().any(|it| {
        let Item::Inst(i) = it else { return false };
        let row = i.row();
        row.ops.iter().zip(&i.ops).any(|(s, o)| s.kind == Kind::V0 || (s.kind == Kind::Vm && *o == Opnd::Imm(0)))
    });
    let is_vec: Vec<bool> = (0..nv).map(|v| vreg_is_vector(f, v)).collect();
    let mut order: Vec<usize> = (0..nv).collect();
    order.sort_by_key(|&v| (f.vregs[v].pinned.is_none(), std::cmp::Reverse(adj[v + NPHYS].count())));
    let mut color: Vec<Option<(u8, u8)>> = vec![None; nv]; // (first register, count)
    let xpool = f.abi.allocatable_x();
    for &v in &order {
        let nodev = v + NPHYS;
        let taken = |r: usize, cnt: usize, color: &Vec<Option<(u8, u8)>>| -> bool {
            // physical neighbours
            for k in 0..cnt {
                let p = r + k;
                if adj[nodev].get(p) {
                    return true;
                }
            }
            for nb in adj[nodev].iter().filter(|&k| k >= NPHYS) {
                if let Some((b, c)) = color[nb - NPHYS] {
                    if is_vec[nb - NPHYS] == (r >= NX) {
                        let (lo, hi) = (b as usize + if r >= NX { NX } else { 0 }, b as usize + c as usize + if r >= NX { NX } else { 0 });
                        if r < hi && lo < r + cnt {
                            return true;
                        }
                    }
                }
            }
            false
        };
        let chosen = if let Some(p) = f.vregs[v].pinned {
            if taken(p as usize, 1, &color) {
                return Err(err(f, format!("argument `{}` cannot stay in {}: it is overwritten while still needed", f.vregs[v].name, crate::text::XNAMES[p as usize])));
            }
            Some((p, 1))
        } else if is_vec[v] {
            let g = f.vregs[v].group.max(1) as usize;
            (0..32usize)
                .step_by(g)
                .filter(|&b| !(uses_mask && b == 0))
                .find(|&b| !taken(NX + b, g, &color))
                .map(|b| (b as u8, g as u8))
        } else {
            xpool.iter().copied().find(|&r| !taken(r as usize, 1, &color)).map(|r| (r, 1))
        };
        match chosen {
            Some(c) => color[v] = Some(c),
            None => return Err(pressure_error(f, v, &live_out, is_vec[v])),
        }
    }
    // Rewrite.
    let map = |r: Reg| -> Reg {
        match r {
            Reg::VirtX(i) => Reg::X(color[i as usize].unwrap().0),
            Reg::VirtV(i) => Reg::V(color[i as usize].unwrap().0),
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
                            _ => false,
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
    Ok(())
}

fn vreg_is_vector(f: &Func, v: usize) -> bool {
    for it in &f.items {
        if let Item::Inst(i) = it {
            for o in &i.ops {
                match o {
                    Opnd::Reg(Reg::VirtV(k)) if *k as usize == v => return true,
                    Opnd::Reg(Reg::VirtX(k)) if *k as usize == v => return false,
                    _ => {}
                }
            }
        }
    }
    false
}

fn pressure_error(f: &Func, v: usize, live_out: &[Bits], vector: bool) -> BuildError {
    // The point where the most values of v's class are live while v is.
    let node_v = v + NPHYS;
    let mut best = (0, 0usize);
    for (i, l) in live_out.iter().enumerate() {
        if !l.get(node_v) {
            continue;
        }
        let cnt = l.iter().filter(|&k| k >= NPHYS && vreg_is_vector(f, k - NPHYS) == vector).count();
        if cnt > best.0 {
            best = (cnt, i);
        }
    }
    let names: Vec<String> = live_out
        .get(best.1)
        .map(|l| l.iter().filter(|&k| k >= NPHYS && vreg_is_vector(f, k - NPHYS) == vector).map(|k| f.vregs[k - NPHYS].name.clone()).collect())
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
            "out of {class} registers for `{}` ({avail} allocatable under the {} ABI): {} values live {at}: {}",
            f.vregs[v].name,
            f.abi,
            names.len(),
            names.join(", ")
        ),
    }
}

/// The frame the lowering built (for reports and checks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub size: u32,
    /// Saved registers and their offsets from the adjusted sp.
    pub saved: Vec<(u8, u32)>,
    /// Slot offsets from the adjusted sp.
    pub slots: Vec<u32>,
    /// Registers written by the body (before the epilogue's wipes).
    pub written: Vec<u8>,
    pub uses_vector: bool,
}

fn mk(mn: &str, ops: Vec<Opnd>) -> Item {
    Item::Inst(InstItem::new(table().form(mn), ops, true))
}

/// What may hold secrets on entry to an item, on some path to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Held {
    /// Integer registers written with a non-public value.
    x: u32,
    /// Some vector register written with a non-public value.
    vector: bool,
    /// Stack slots an instruction has addressed (bit k: slot k).
    slots: u64,
}

impl Held {
    fn union(self, o: Held) -> Held {
        Held { x: self.x | o.x, vector: self.vector || o.vector, slots: self.slots | o.slots }
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
                        (Role::Def | Role::UseDef, Opnd::Reg(Reg::V(_))) => out.vector |= !it.public_def,
                        (_, Opnd::Stack { slot, .. }) => out.slots |= 1 << slot.0.min(63),
                        _ => {}
                    }
                }
            }
            for s in successors(f, &label_at, i) {
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

/// Builds prologue and epilogues; resolves stack-slot operands. Requires physical registers.
pub fn frame(f: &mut Func) -> Result<Frame, BuildError> {
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
    if f.abi == Abi::Go && !f.slots.is_empty() {
        return Err(err(f, "stack slots are not supported under the Go ABI (use a caller-provided buffer)".into()));
    }
    let mut saves: Vec<u8> = f.abi.callee_saved().iter().copied().filter(|&r| written[r as usize]).collect();
    if written[1] {
        saves.push(1);
    }
    let mut off = 0u32;
    let mut slot_offs = Vec::new();
    for s in &f.slots {
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
    let size = off.next_multiple_of(16);
    if size > 2032 {
        return Err(err(f, format!("frame of {size} bytes is larger than one addi can allocate")));
    }
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
            // Every vector register: e8 (any SEW works), LMUL 8, vl = VLMAX, four groups.
            if let (true, true, Some(d)) = (uses_vector, h.vector, vdialect) {
                let vt = Opnd::Imm(d.vtype(8, 8).expect("e8, m8 is a vtype"));
                let (set, zero_group) = match d {
                    VDialect::Thead => ("th.vsetvli", "th.vmv.v.i"),
                    VDialect::V1 => ("vsetvli", "vmv.v.i"),
                };
                // RVV 1.0's vsetvli with rd = rs1 = x0 keeps vl: VLMAX needs rd != x0.
                let rd = if d == VDialect::V1 { Reg::X(5) } else { zero };
                epilogue.push(mk(set, vec![rd.into(), zero.into(), vt]));
                for b in [0, 8, 16, 24] {
                    epilogue.push(mk(zero_group, vec![Reg::V(b).into(), Opnd::Imm(0)]));
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
        saved,
        slots: slot_offs,
        written: (0..32u8).filter(|&r| written[r as usize]).collect(),
        uses_vector,
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

/// Allocation, frame, branch relaxation: the function afterwards has only physical
/// registers and real instructions, and every branch reaches its target.
pub fn lower(f: &mut Func) -> Result<Frame, BuildError> {
    allocate(f)?;
    let fr = frame(f)?;
    relax_branches(f)?;
    Ok(fr)
}

/// Labels referenced by instructions, for printers.
pub fn referenced_labels(f: &Func) -> Vec<bool> {
    let mut used = vec![false; f.labels.len()];
    for it in &f.items {
        if let Item::Inst(i) = it {
            for o in &i.ops {
                if let Opnd::Label(l) | Opnd::PcrelLo { anchor: l } = o {
                    used[l.0 as usize] = true;
                }
            }
        }
    }
    let _ = Label(0);
    used
}
