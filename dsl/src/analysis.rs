//! The analyses every stage shares, on a function's items: register nodes and bit sets,
//! uses and definitions, the control-flow graph (label positions, successors, basic
//! blocks), liveness, loop depth, register units (a vector group and its parts), the labels
//! instructions reference, and whether two streams are independent. The schedulers, the
//! allocator, the lowering, the checks and the report depend on them, and on nothing of
//! each other.

use crate::ir::{Func, Item, Label, Opnd, Reg};
use crate::isa::{Control, Kind, Role};

pub(crate) const NX: usize = 32;

pub(crate) const NPHYS: usize = 64;

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
        SetBits::new(&self.0, 0)
    }
    pub fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// The indices of the set bits of `words` from `lo` on, in order (a plain loop over the
/// words: the iterator the allocator's colouring spends its time in).
struct SetBits<'a> {
    words: &'a [u64],
    /// The word being read, its bits not yet returned.
    w: usize,
    bits: u64,
}

impl<'a> SetBits<'a> {
    fn new(words: &'a [u64], lo: usize) -> SetBits<'a> {
        let w = lo / 64;
        let bits = words.get(w).map_or(0, |&b| b & (!0u64 << (lo % 64)));
        SetBits { words, w, bits }
    }
}

impl Iterator for SetBits<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.w += 1;
            self.bits = *self.words.get(self.w)?;
        }
        let j = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.w * 64 + j)
    }
}

/// Rows of bits in one allocation (a set per item, or an adjacency matrix).
#[derive(Clone, Debug)]
pub struct BitRows {
    pub words: usize,
    data: Vec<u64>,
}

impl BitRows {
    pub fn new(rows: usize, bits: usize) -> BitRows {
        let words = bits.div_ceil(64).max(1);
        BitRows { words, data: vec![0; rows * words] }
    }
    pub fn row(&self, i: usize) -> &[u64] {
        &self.data[i * self.words..(i + 1) * self.words]
    }
    pub fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.data[i * self.words..(i + 1) * self.words]
    }
    pub fn get(&self, i: usize, k: usize) -> bool {
        self.data[i * self.words + k / 64] >> (k % 64) & 1 != 0
    }
    pub fn set(&mut self, i: usize, k: usize) {
        self.data[i * self.words + k / 64] |= 1 << (k % 64);
    }
    pub fn clear(&mut self, i: usize, k: usize) {
        self.data[i * self.words + k / 64] &= !(1 << (k % 64));
    }
    /// The members of row `i` from `lo` on.
    pub fn iter_from(&self, i: usize, lo: usize) -> impl Iterator<Item = usize> + '_ {
        SetBits::new(self.row(i), lo)
    }
    /// The members of row `i`.
    pub fn iter(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.iter_from(i, 0)
    }
    pub fn count(&self, i: usize) -> usize {
        self.row(i).iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Row `i` as a set.
    pub fn bits(&self, i: usize) -> Bits {
        Bits(self.row(i).to_vec())
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

/// The nodes of one function's liveness: physical x 0..32, physical v 32..64, virtual
/// registers from 64, then one node per register of each vector group that has parts (so
/// that writing one part does not keep the others live, and a group written part by part
/// is not live before).
#[derive(Clone, Debug)]
pub struct Nodes {
    pub n: usize,
    /// For a group with parts, its first register node.
    sub: Vec<Option<usize>>,
    /// The virtual register node each register node belongs to.
    owner: Vec<usize>,
}

impl Nodes {
    pub fn of(f: &Func) -> Nodes {
        let nv = f.vregs.len();
        let mut sub = vec![None; nv];
        for v in &f.vregs {
            if let Some((root, _)) = v.part_of {
                sub[root as usize] = Some(0);
            }
        }
        let mut n = NPHYS + nv;
        let mut owner = Vec::new();
        for (r, s) in sub.iter_mut().enumerate() {
            if s.is_some() {
                *s = Some(n);
                for _ in 0..f.vregs[r].group.max(1) {
                    owner.push(NPHYS + r);
                }
                n += f.vregs[r].group.max(1) as usize;
            }
        }
        Nodes { n, sub, owner }
    }

    /// The virtual register (or physical register) node node `k` stands for.
    pub fn owner(&self, k: usize) -> usize {
        if k < NPHYS + self.sub.len() { k } else { self.owner[k - NPHYS - self.sub.len()] }
    }

    /// The nodes register `r` covers.
    pub fn of_reg(&self, f: &Func, r: Reg, out: &mut Vec<usize>) {
        match r {
            Reg::VirtV(i) => {
                let v = &f.vregs[i as usize];
                let (root, off, g) = match v.part_of {
                    Some((root, off)) => (root as usize, off as usize, v.group.max(1) as usize),
                    None => (i as usize, 0, v.group.max(1) as usize),
                };
                match self.sub[root] {
                    Some(b) => out.extend(b + off..b + off + g),
                    None => out.push(node(r)),
                }
            }
            _ => out.push(node(r)),
        }
    }
}

/// Uses and defs (node indices) of one item.
pub fn uses_defs(f: &Func, it: &Item) -> (Vec<usize>, Vec<usize>) {
    uses_defs_in(f, &Nodes::of(f), it)
}

/// [`uses_defs`] with the function's nodes computed once.
pub fn uses_defs_in(f: &Func, nodes: &Nodes, it: &Item) -> (Vec<usize>, Vec<usize>) {
    let mut u = Vec::new();
    let mut d = Vec::new();
    uses_defs_into(f, nodes, it, &mut u, &mut d);
    (u, d)
}

/// [`uses_defs_in`] appending to `u` and `d`.
pub fn uses_defs_into(f: &Func, nodes: &Nodes, it: &Item, u: &mut Vec<usize>, d: &mut Vec<usize>) {
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
                // A masked vector write keeps the masked-off elements: it reads what it writes.
                let role = if masked && spec.role == Role::Def && r.is_vector() { Role::UseDef } else { spec.role };
                match role {
                    Role::Use => nodes.of_reg(f, *r, u),
                    Role::Def => nodes.of_reg(f, *r, d),
                    Role::UseDef => {
                        let k = d.len();
                        nodes.of_reg(f, *r, d);
                        u.extend_from_slice(&d[k..]);
                    }
                }
            }
        }
        Item::Exit if f.result.is_value() => u.push(10),
        _ => {}
    }
}

/// Successor item indices of item `i` (control flow, from the rows' [`Control`]). A return
/// and an indirect jump have none.
pub fn successors(f: &Func, label_at: &[usize], i: usize) -> Vec<usize> {
    successor_pair(f, label_at, i).into_iter().filter(|&s| s != usize::MAX).collect()
}

/// [`successors`] without allocating, in the same order: the successors there are first,
/// then `usize::MAX` (only ever in the second slot, or in both).
pub fn successor_pair(f: &Func, label_at: &[usize], i: usize) -> [usize; 2] {
    const NONE: usize = usize::MAX;
    let next = if i + 1 < f.items.len() { i + 1 } else { NONE };
    match &f.items[i] {
        Item::Exit => [NONE, NONE],
        Item::Inst(it) => {
            let target = || it.target().map(|l| label_at[l.0 as usize]).unwrap_or(NONE);
            match it.control() {
                Control::Next | Control::Call => [next, NONE],
                Control::Jump => [target(), NONE],
                Control::Branch if next == NONE => [target(), NONE],
                Control::Branch => [next, target()],
                Control::Return | Control::IndirectJump => [NONE, NONE],
            }
        }
        _ => [next, NONE],
    }
}

/// A function's basic blocks: a block starts at the entry, at a label and after an item that
/// does not simply fall through, so every successor of a block's last item starts a block
/// (branch targets are labels: [`label_positions`]).
pub struct Blocks {
    /// Each item's successors ([`successor_pair`]).
    pub succ: Vec<[usize; 2]>,
    /// Each block's first item.
    pub start: Vec<usize>,
    /// Each item's block.
    pub block_of: Vec<usize>,
}

impl Blocks {
    pub fn of(f: &Func) -> Blocks {
        let m = f.items.len();
        let label_at = label_positions(f);
        let succ: Vec<[usize; 2]> = (0..m).map(|i| successor_pair(f, &label_at, i)).collect();
        let mut start: Vec<usize> = Vec::new();
        let mut block_of = vec![0usize; m];
        for i in 0..m {
            if i == 0 || matches!(f.items[i], Item::Label(_)) || succ[i - 1] != [i, usize::MAX] {
                start.push(i);
            }
            block_of[i] = start.len() - 1;
        }
        debug_assert!(succ.iter().all(|s| s[0] != usize::MAX || s[1] == usize::MAX), "successor_pair puts usize::MAX last");
        Blocks { succ, start, block_of }
    }
    pub fn len(&self) -> usize {
        self.start.len()
    }
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }
    /// One past block `b`'s last item.
    pub fn end(&self, b: usize) -> usize {
        self.start.get(b + 1).copied().unwrap_or(self.block_of.len())
    }
    /// Block `b`'s successor blocks (`usize::MAX` where there is none), in its last item's
    /// order.
    pub fn succ_blocks(&self, b: usize) -> [usize; 2] {
        self.succ[self.end(b) - 1].map(|s| if s == usize::MAX { s } else { self.block_of[s] })
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

/// Uses and defs of every item, flat: item `i`'s are `uses[ui[i]..ui[i + 1]]` and
/// `defs[di[i]..di[i + 1]]`.
pub struct UseDefs {
    pub uses: Vec<usize>,
    pub defs: Vec<usize>,
    ui: Vec<usize>,
    di: Vec<usize>,
}

impl UseDefs {
    pub fn of(f: &Func, nodes: &Nodes) -> UseDefs {
        let mut ud = UseDefs { uses: Vec::new(), defs: Vec::new(), ui: vec![0], di: vec![0] };
        for it in &f.items {
            uses_defs_into(f, nodes, it, &mut ud.uses, &mut ud.defs);
            ud.ui.push(ud.uses.len());
            ud.di.push(ud.defs.len());
        }
        ud
    }
    /// Uses and defs of other things than registers (frame slots, say): item `i`'s from
    /// `of(i)`, for the same liveness.
    pub fn from_fn(items: usize, mut of: impl FnMut(usize, &mut Vec<usize>, &mut Vec<usize>)) -> UseDefs {
        let mut ud = UseDefs { uses: Vec::new(), defs: Vec::new(), ui: vec![0], di: vec![0] };
        for i in 0..items {
            of(i, &mut ud.uses, &mut ud.defs);
            ud.ui.push(ud.uses.len());
            ud.di.push(ud.defs.len());
        }
        ud
    }
    pub fn uses(&self, i: usize) -> &[usize] {
        &self.uses[self.ui[i]..self.ui[i + 1]]
    }
    pub fn defs(&self, i: usize) -> &[usize] {
        &self.defs[self.di[i]..self.di[i + 1]]
    }
}

/// Live-in and live-out sets per item.
pub fn liveness(f: &Func) -> (Vec<Bits>, Vec<Bits>) {
    let nodes = Nodes::of(f);
    let ud = UseDefs::of(f, &nodes);
    liveness_with(f, &nodes, &ud)
}

/// [`liveness`] from nodes and uses/defs already computed.
pub fn liveness_with(f: &Func, nodes: &Nodes, ud: &UseDefs) -> (Vec<Bits>, Vec<Bits>) {
    let (li, lo) = liveness_rows(f, nodes, ud);
    ((0..f.items.len()).map(|i| li.bits(i)).collect(), (0..f.items.len()).map(|i| lo.bits(i)).collect())
}

/// [`liveness_with`] as rows: (live-in, live-out), one row per item. Solved on basic blocks
/// (what each block reads before writing it and what it writes), then spread over the items.
pub fn liveness_rows(f: &Func, nodes: &Nodes, ud: &UseDefs) -> (BitRows, BitRows) {
    item_liveness(f, nodes.n, ud)
}

/// Live-in and live-out rows per item of `n` things whose uses and defs `ud` gives.
pub fn item_liveness(f: &Func, n: usize, ud: &UseDefs) -> (BitRows, BitRows) {
    let m = f.items.len();
    let blocks = Blocks::of(f);
    let (_, bout) = block_liveness(&blocks, n, ud);
    let mut live_in = BitRows::new(m, n);
    let mut live_out = BitRows::new(m, n);
    let mut out = vec![0u64; live_in.words];
    for b in 0..blocks.len() {
        out.copy_from_slice(bout.row(b));
        for i in (blocks.start[b]..blocks.end(b)).rev() {
            live_out.row_mut(i).copy_from_slice(&out);
            step_back(&mut out, ud, i);
            live_in.row_mut(i).copy_from_slice(&out);
        }
    }
    (live_in, live_out)
}

/// Liveness across one item, backwards: `out` (live after item `i`) becomes what is live
/// before it.
pub fn step_back(out: &mut [u64], ud: &UseDefs, i: usize) {
    for &d in ud.defs(i) {
        out[d / 64] &= !(1 << (d % 64));
    }
    for &u in ud.uses(i) {
        out[u / 64] |= 1 << (u % 64);
    }
}

/// Liveness per basic block of `n` nodes: (live at each block's start, live at its end).
/// Walking a block backwards from its end with [`step_back`] gives each item's.
pub fn block_liveness(blocks: &Blocks, n: usize, ud: &UseDefs) -> (BitRows, BitRows) {
    let (start, nb) = (&blocks.start, blocks.len());
    let end = |b: usize| blocks.end(b);
    let w = n.div_ceil(64);
    // Per block: the nodes read before any write (upward) and the nodes written (kill).
    let mut upward = BitRows::new(nb, n);
    let mut kill = BitRows::new(nb, n);
    for b in 0..nb {
        for i in (start[b]..end(b)).rev() {
            for &d in ud.defs(i) {
                kill.set(b, d);
                upward.clear(b, d);
            }
            for &u in ud.uses(i) {
                upward.set(b, u);
            }
        }
    }
    let mut bin = BitRows::new(nb, n);
    let mut bout = BitRows::new(nb, n);
    let mut out = vec![0u64; w];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            out.iter_mut().for_each(|x| *x = 0);
            for &s in blocks.succ_blocks(b).iter().filter(|&&s| s != usize::MAX) {
                for (o, x) in out.iter_mut().zip(bin.row(s)) {
                    *o |= x;
                }
            }
            bout.row_mut(b).copy_from_slice(&out);
            for ((o, g), k) in out.iter_mut().zip(upward.row(b)).zip(kill.row(b)) {
                *o = g | (*o & !k);
            }
            if out[..] != *bin.row(b) {
                bin.row_mut(b).copy_from_slice(&out);
                changed = true;
            }
        }
    }
    (bin, bout)
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

/// Loop nesting depth of each item: the number of natural loops that contain it. A loop is
/// the set of items that reach a back edge (an edge to an item that dominates its source)
/// without passing its head; the back edges to one head make one loop. A jump back from
/// out-of-line code into the middle of a loop is not a back edge (its target does not
/// dominate it), so it adds no level.
pub fn loop_depth(f: &Func) -> Vec<u32> {
    // Solved on basic blocks: a loop's head starts a block (the entry, or a label: it is
    // entered from outside the loop and by a back edge), and a block's items are all in a
    // loop or all outside it.
    let blocks = crate::analysis::Blocks::of(f);
    let bd = graph_loop_depth(&(0..blocks.len()).map(|b| blocks.succ_blocks(b)).collect::<Vec<_>>());
    blocks.block_of.iter().map(|&b| bd[b]).collect()
}

/// [`loop_depth`] of a graph entered at node 0, given as each node's successors: at most
/// two, padded with `usize::MAX` at the end.
fn graph_loop_depth(succ: &[[usize; 2]]) -> Vec<u32> {
    let n = succ.len();
    let mut d = vec![0u32; n];
    if n == 0 {
        return d;
    }
    // Predecessors, flat: node i's are pred[pi[i]..pi[i + 1]], in increasing order.
    let edges = || succ.iter().enumerate().flat_map(|(i, ss)| ss.iter().filter(|&&s| s != usize::MAX).map(move |&s| (i, s)));
    let mut pi = vec![0usize; n + 1];
    for (_, s) in edges() {
        pi[s + 1] += 1;
    }
    for i in 0..n {
        pi[i + 1] += pi[i];
    }
    let mut pred = vec![0usize; pi[n]];
    let mut fill = pi.clone();
    for (i, s) in edges() {
        pred[fill[s]] = i;
        fill[s] += 1;
    }
    let pred_of = |v: usize| &pred[pi[v]..pi[v + 1]];
    let succ_of = |v: usize| {
        let k = if succ[v][0] == usize::MAX { 0 } else if succ[v][1] == usize::MAX { 1 } else { 2 };
        &succ[v][..k]
    };
    // Reverse postorder from the entry (iterative depth-first search).
    let mut order = vec![usize::MAX; n]; // position in reverse postorder
    let mut post = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some(&mut (v, ref mut k)) = stack.last_mut() {
        if let Some(&s) = succ_of(v).get(*k) {
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(v);
            stack.pop();
        }
    }
    let rpo: Vec<usize> = post.iter().rev().copied().collect();
    for (k, &v) in rpo.iter().enumerate() {
        order[v] = k;
    }
    // Immediate dominators (Cooper, Harvey and Kennedy's iteration).
    let mut idom = vec![usize::MAX; n];
    idom[0] = 0;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while order[a] > order[b] {
                a = idom[a];
            }
            while order[b] > order[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in rpo.iter().skip(1) {
            let mut new = usize::MAX;
            for &p in pred_of(v) {
                if idom[p] != usize::MAX {
                    new = if new == usize::MAX { p } else { intersect(&idom, p, new) };
                }
            }
            if new != idom[v] {
                idom[v] = new;
                changed = true;
            }
        }
    }
    let dominates = |h: usize, mut v: usize| loop {
        if v == h {
            return true;
        }
        if v == 0 || idom[v] == usize::MAX {
            return false;
        }
        v = idom[v];
    };
    // Each head's loop: the nodes reaching one of its back edges' sources without passing it.
    let mut tails: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &v in &rpo {
        // Only a retreating edge (to a node not after it in reverse postorder) can be a
        // back edge; a forward edge's target never dominates its source.
        for &s in succ_of(v).iter().filter(|&&s| order[s] <= order[v]) {
            if dominates(s, v) {
                tails[s].push(v);
            }
        }
    }
    let mut mark = vec![usize::MAX; n];
    for (h, ts) in tails.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
        mark[h] = h;
        d[h] += 1;
        let mut work: Vec<usize> = ts.clone();
        while let Some(v) = work.pop() {
            if mark[v] == h {
                continue;
            }
            mark[v] = h;
            d[v] += 1;
            work.extend(pred_of(v).iter().copied().filter(|&p| seen[p]));
        }
    }
    d
}

/// The register units an operand covers. A vector group with parts (`Func::vpart`) counts
/// one unit per register, so that a part and its group depend on each other; every other
/// register is one unit (its [`crate::analysis::node`]).
#[derive(Clone, Debug, Default)]
pub struct Units {
    /// For virtual register i: its units, `flat[at[i].0..at[i].1]` (empty: just its node).
    at: Vec<(u32, u32)>,
    flat: Vec<usize>,
    /// Virtual integer registers the allocator can remake where they are read (constants,
    /// shifts of a value that lives throughout): they do not count against a block's cap.
    pub free: Vec<bool>,
}

impl Units {
    /// Each register its own unit (no groups with parts).
    pub fn plain() -> Units {
        Units::default()
    }
    /// The units of `f`'s virtual registers.
    pub fn of(f: &crate::ir::Func) -> Units {
        let nodes = crate::analysis::Nodes::of(f);
        let mut u = Units::default();
        let mut tmp = Vec::new();
        for (i, info) in f.vregs.iter().enumerate() {
            tmp.clear();
            let r = Reg::VirtV(i as u32);
            if info.part_of.is_some() || nodes.n > crate::analysis::NPHYS + f.vregs.len() {
                nodes.of_reg(f, r, &mut tmp);
            }
            let start = u.flat.len() as u32;
            if tmp.len() > 1 || info.part_of.is_some() {
                u.flat.extend_from_slice(&tmp);
            }
            u.at.push((start, u.flat.len() as u32));
        }
        u
    }
    /// Appends the units of `r` to `out`.
    pub fn units(&self, r: Reg, out: &mut Vec<usize>) {
        match r {
            Reg::VirtV(i) => match self.at.get(i as usize) {
                Some(&(a, b)) if b > a => out.extend_from_slice(&self.flat[a as usize..b as usize]),
                _ => out.push(crate::analysis::node(r)),
            },
            _ => out.push(crate::analysis::node(r)),
        }
    }
}

/// Checks that two straight-line streams are independent: neither writes a register the
/// other reads or writes, and neither has labels or control flow.
pub fn independent(a: &[Item], b: &[Item]) -> Result<(), String> {
    independent_in(a, b, &crate::analysis::Units::plain())
}

/// [`independent`] by register units (a vector group and its parts overlap).
pub fn independent_in(a: &[Item], b: &[Item], units: &crate::analysis::Units) -> Result<(), String> {
    use crate::isa::Role;
    let regs = |s: &[Item]| -> Result<(std::collections::BTreeMap<usize, Reg>, std::collections::BTreeSet<usize>), String> {
        let (mut r, mut w) = (std::collections::BTreeMap::new(), std::collections::BTreeSet::new());
        let mut tmp = Vec::new();
        for it in s {
            match it {
                Item::Inst(i) => {
                    if i.row().is_control() {
                        return Err(format!("`{}` is control flow", i.row().mnemonic));
                    }
                    for (role, reg) in i.regs() {
                        if reg == Reg::X(0) {
                            continue;
                        }
                        tmp.clear();
                        units.units(reg, &mut tmp);
                        for &k in &tmp {
                            r.insert(k, reg);
                            if role != Role::Use {
                                w.insert(k);
                            }
                        }
                    }
                }
                Item::Comment(_) => {}
                _ => return Err("labels and exits cannot be interleaved".into()),
            }
        }
        Ok((r, w))
    };
    let (ra, wa) = regs(a)?;
    let (rb, wb) = regs(b)?;
    if let Some(r) = wa.iter().filter_map(|k| rb.get(k)).chain(wb.iter().filter_map(|k| ra.get(k))).next() {
        return Err(format!("streams share register {r:?}"));
    }
    Ok(())
}

/// Merges two independent straight-line streams, spreading `b` evenly between the
/// elements of `a` (e.g. scalar instructions into the issue slots a vector stream leaves
/// while the vector unit is busy). Fails if the streams share a register that either
/// writes, or contain labels or control flow.
pub fn interleave(a: Vec<Item>, b: Vec<Item>) -> Result<Vec<Item>, String> {
    interleave_in(a, b, &crate::analysis::Units::plain())
}

/// [`interleave`] by register units.
pub fn interleave_in(a: Vec<Item>, b: Vec<Item>, units: &crate::analysis::Units) -> Result<Vec<Item>, String> {
    independent_in(&a, &b, units)?;
    let (na, nb) = (a.len().max(1), b.len());
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut bi = b.into_iter();
    let mut taken = 0usize;
    for (k, it) in a.into_iter().enumerate() {
        out.push(it);
        let due = (k + 1) * nb / na;
        while taken < due {
            if let Some(x) = bi.next() {
                out.push(x);
            }
            taken += 1;
        }
    }
    out.extend(bi);
    Ok(out)
}
