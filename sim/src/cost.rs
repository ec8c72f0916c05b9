//! C906 cost model: an in-order, single-issue pipeline with a scoreboard, a decoupled
//! vector unit and a branch predictor. The per-class numbers live in
//! `kgen_dsl::timing` (shared with the schedulers); this file adds what depends on run-time
//! values (the multiplier's long path, division, branch prediction). Every number below
//! carries its source:
//! **\[M\]** measured on the open C906 RTL or a D1 board (../shared/FACTS.md, "C906 timing
//! facts"), **\[D\]** the openc906 user manual tables 4.1–4.11, **\[V\]** camel-cdr's rvv-bench
//! results for the D1 ("mangopi_mq_pro"), **\[A\]** an assumption of kgen's, to be replaced
//! when a measurement exists.
//!
//! The table, with every row's source, is docs/cost-model.md's (the numbers themselves
//! live in `kgen_dsl::timing` and below).
//!
//! Scalar instructions keep issuing while the vector unit works (it is decoupled, in order
//! with itself): that is what the interleaved ChaCha20 kernel exploits.

use kgen_dsl::isa::{table, Class, Control, Hart, Inst, Kind, Role, VDialect};
use kgen_dsl::timing::{self, Timing, VShape};
use std::collections::{BTreeSet, HashMap, VecDeque};

/// Mispredicted branch penalty [A: fitted to the RTL kernel rows].
pub const MISPREDICT: u64 = 4;
/// Taken branch whose target is not in the BTB \[M\].
pub const BTB_MISS: u64 = 2;
/// BTB entries \[M\].
pub const BTB_ENTRIES: usize = 16;
/// Return-stack entries \[D\].
pub const RAS_ENTRIES: usize = 4;

/// Where the cycles went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    pub dependency_stalls: u64,
    pub multiplier_long_path: u64,
    pub branch_penalties: u64,
    pub vector_unit_waits: u64,
    /// Cycles the vector unit's arithmetic pipe was busy (the sum of its instructions'
    /// times), and its load/store pipe's: not cycles of the call's time, a bound on it.
    pub vector_alu_busy: u64,
    pub vector_memory_busy: u64,
}

/// The model's state.
#[derive(Clone, Debug, Default)]
pub struct C906 {
    /// Cycle at which the next instruction can issue.
    pub cycle: u64,
    xready: [u64; 32],
    vready: [u64; 32],
    /// Earliest start of the next write of each vector register.
    vrewrite: [u64; 32],
    /// When a store may start reading each vector register (an ALU result is chained:
    /// its first elements are ready before the whole group is).
    vchain: [u64; 32],
    /// When the vector ALU pipe and the load/store pipe are free, the last vector
    /// instruction's start (they start in order), and when all vector work is done.
    valu_free: u64,
    vlsu_free: u64,
    vlast_start: u64,
    vpu_free: u64,
    /// When the last vsetvl's vl and vtype are there for a vector instruction.
    vconf_ready: u64,
    /// When the divider is free, and the operands of its last division (dividend, divisor,
    /// signed, word).
    divider_free: u64,
    last_division: Option<(u64, u64, bool, bool)>,
    /// Whether a new measurement keeps the branch predictor's counters and BTB (a function
    /// called again and again, as rvv-bench calls it on the D1); the divider's last
    /// operands are not kept (docs/cost-model.md, "Other rvv-bench loops").
    pub keep_predictor: bool,
    /// The timing-table row made twice as slow (sensitivity studies), if any.
    pub slow: Option<timing::Source>,
    bht: HashMap<u64, u8>,
    btb: VecDeque<u64>,
    ras: Vec<u64>,
    pub breakdown: Breakdown,
    /// Count of 64-bit multiplies that took the long (data-dependent) path.
    pub long_muls: u64,
    pub muls: u64,
    pending_branch: bool,
    /// The multiplier's pipeline (see [`MulOp`]): multiplies not yet written back, in
    /// order; the last write-back's cycle; the cycles the result bus carries an EX1 result.
    mulq: VecDeque<MulOp>,
    mul_seq: u64,
    last_grant: u64,
    bus: BTreeSet<u64>,
    /// For each register: the multiply (sequence number + 1) whose result it waits for.
    xmul: [u64; 32],
    /// The destination of the last multiply issued, while it still holds its result.
    last_mul_dest: Option<usize>,
    /// The last two loads: destination and issue cycle.
    last_loads: [(usize, u64); 2],
    /// For each register last written by a load: that load's issue cycle.
    xload: [Option<u64>; 32],
    /// The L1 data cache, when modelled ([`C906::with_l1`]); it keeps its contents across
    /// [`C906::reset`], as the predictor does.
    pub l1: Option<L1>,
    /// Lines missed in the L1 (since the last reset).
    pub l1_misses: u64,
    /// The last scalar stores: issue cycle, address, bytes.
    recent_stores: VecDeque<(u64, u64, u64)>,
}

/// Cycles a load waits for each store that issued at most [`STORE_OVERLAP_WINDOW`] cycles
/// before it and wrote some of its bytes without being exactly the same access (a store
/// of the same address and width forwards) [M: openc906 RTL: `sb; lw` of that word 4.0
/// cycles, `sw; lbu` 4.0, `sb; add; lw` 5.0, `sb; add; add; lw` 4.0, two to four `sb`
/// then `lw` +4, `4 sb; add; lw` +2, `sb` x2 to another word in between: no wait].
pub const STORE_OVERLAP_WAIT: u64 = 2;
/// See [`STORE_OVERLAP_WAIT`].
pub const STORE_OVERLAP_WINDOW: u64 = 2;

/// Bytes per L1 data-cache line [RTL: openc906 `aq_lsu_*`, 64-byte refills].
pub const L1_LINE: u64 = 64;
/// L1 data-cache ways [RTL: `aq_dcache_top.v`, `dcache_tag_way[3:0]`].
pub const L1_WAYS: usize = 4;
/// L1 data-cache sets: 32 KiB (the D1's, `DCACHE_32K` in openc906's `cpu_cfig.h`) over
/// four ways of 64-byte lines, 8 KiB a way.
pub const L1_SETS: u64 = 128;
/// Cycles an L1 miss adds [M: D1 memcpy, fitted: the 8347-byte aligned rows (rvv m1-m8)
/// take 600-800 cycles more than the L1 plateau predicts, for the 12 lines of the three
/// sets holding four lines of the copy; see docs/cost-model.md, "L1 data cache"].
pub const L1_MISS: u64 = 100;

/// Cycles a line a store writes without allocating it (the store-stream detector is on:
/// [`Amr`]) adds to the store [M: D1 memcpy/memset, fitted: with the detector on, the
/// 17-32 KiB rows (rvv m1-m8, scalar, both series) come closest at 16 cycles, 148 of 180
/// within 10% (24: 127, 32: 110; a trial edit of this constant); the D1's aligned memset of
/// 65705783 bytes runs at 2.6 B/cycle at m4/m8, 16.5 cycles a line above the L1 plateau].
pub const L1_STREAMED: u64 = 16;

/// The C906's L1 data cache as far as timing goes: 4 ways, 128 sets of 64-byte lines,
/// indexed by the (virtual) address, **FIFO replacement** [RTL: the refill takes the way a
/// one-hot pointer kept per set names (`aq_lsu_rdl.v`, `rdl_replace_fifo`), and the refill
/// rotates it (`aq_lsu_lfb.v`, `lfb_arb_dirty_din[7:4]`); hits do not move it]. With FIFO
/// a set whose four ways all hold lines a loop uses cycles through misses as soon as one
/// other line enters it: each refill evicts the next line the loop needs.
#[derive(Clone, Debug)]
pub struct L1 {
    tags: Vec<[Option<u64>; L1_WAYS]>,
    fifo: Vec<u8>,
    /// The store-stream detector, when on ([`L1::with_amr`]).
    pub amr: Option<Amr>,
    /// The line a streamed (not allocated) store last wrote.
    streamed_line: Option<u64>,
}

impl Default for L1 {
    fn default() -> L1 {
        L1 { tags: vec![[None; L1_WAYS]; L1_SETS as usize], fifo: vec![0; L1_SETS as usize], amr: None, streamed_line: None }
    }
}

/// The store-stream detector's state [RTL: `aq_lsu_amr.v`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum AmrState {
    #[default]
    Idle,
    Cals,
    Chck,
    Func,
}

/// The C906's store-stream detector [RTL: openc906 `aq_lsu_amr.v`, `mhint` bits 3:2]:
/// a store that misses arms it; the next store at `previous + size` sets the stride; once
/// `lines` lines' worth of stores have followed at that stride, stores that miss stop
/// allocating lines (`amr_dc_wa_dis`), until the fourth store off the stride.
#[derive(Clone, Debug, Default)]
pub struct Amr {
    /// Lines of stores at the stride before write-allocate stops: 3, 15 or 63 (`mhint`
    /// AMR 1, 2, 3).
    pub lines: u64,
    state: AmrState,
    last: u64,
    size: u64,
    stride: i64,
    stores: u64,
    line_count: u64,
    confidence: u8,
}

impl Amr {
    /// A detector for `mhint` AMR field `amr` (1-3).
    pub fn new(amr: u8) -> Amr {
        Amr { lines: [3, 15, 63][(amr.clamp(1, 3) - 1) as usize], ..Amr::default() }
    }

    /// Whether write-allocate is off for this store; then steps the state machine with it.
    fn store(&mut self, addr: u64, size: u64, miss: bool) -> bool {
        let off = self.state == AmrState::Func;
        let stride = addr.wrapping_sub(self.last) as i64;
        let per_line = (L1_LINE / size.max(1)).max(1);
        self.state = match self.state {
            AmrState::Idle => {
                if miss {
                    AmrState::Cals
                } else {
                    AmrState::Idle
                }
            }
            AmrState::Cals => {
                if stride.unsigned_abs() == self.size {
                    self.stride = stride;
                    self.stores = 0;
                    self.line_count = 0;
                    AmrState::Chck
                } else {
                    AmrState::Idle
                }
            }
            AmrState::Chck => {
                if stride == self.stride {
                    let line_done = self.line_count >= self.lines;
                    if self.stores % per_line == per_line - 1 {
                        self.line_count += 1;
                    }
                    self.stores += 1;
                    if line_done {
                        self.confidence = 3;
                        AmrState::Func
                    } else {
                        AmrState::Chck
                    }
                } else {
                    AmrState::Idle
                }
            }
            AmrState::Func => {
                if self.confidence == 0 {
                    AmrState::Idle
                } else {
                    if stride != self.stride {
                        self.confidence -= 1;
                    }
                    AmrState::Func
                }
            }
        };
        self.last = addr;
        self.size = size;
        off
    }
}

impl L1 {
    /// The cache with the store-stream detector on ([`Amr`]).
    pub fn with_amr(mut self, amr: u8) -> L1 {
        self.amr = Some(Amr::new(amr));
        self
    }

    fn present(&self, addr: u64) -> bool {
        let line = addr / L1_LINE;
        self.tags[(line % L1_SETS) as usize].contains(&Some(line))
    }

    /// Accesses the line holding `addr`; true on a miss (the line is then filled).
    pub fn access(&mut self, addr: u64) -> bool {
        if self.present(addr) {
            return false;
        }
        let line = addr / L1_LINE;
        let set = (line % L1_SETS) as usize;
        let w = self.fifo[set] as usize;
        self.tags[set][w] = Some(line);
        self.fifo[set] = ((w + 1) % L1_WAYS) as u8;
        true
    }

    /// Accesses every line of `[addr, addr + len)`; the number of misses.
    pub fn access_range(&mut self, addr: u64, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let (first, last) = (addr / L1_LINE, (addr + len - 1) / L1_LINE);
        (first..=last.min(first + 4096)).filter(|l| self.access(l * L1_LINE)).count() as u64
    }

    /// Stores `len` bytes at `addr` as stores of `piece` bytes each, in order: (lines
    /// missed and filled, lines written without being allocated).
    pub fn store_range(&mut self, addr: u64, len: u64, piece: u64) -> (u64, u64) {
        if self.amr.is_none() {
            return (self.access_range(addr, len), 0);
        }
        let piece = piece.clamp(1, L1_LINE);
        let (mut filled, mut streamed) = (0, 0);
        let mut a = addr;
        let end = addr.saturating_add(len.min(4096 * L1_LINE));
        while a < end {
            let n = piece.min(end - a);
            let miss = !(self.present(a) && self.present(a + n - 1));
            let off = self.amr.as_mut().map(|m| m.store(a, n, miss)).unwrap_or(false);
            if miss {
                if off {
                    let line = a / L1_LINE;
                    if self.streamed_line != Some(line) {
                        streamed += 1;
                        self.streamed_line = Some(line);
                    }
                } else {
                    filled += self.access_range(a, n);
                }
            }
            a += n;
        }
        (filled, streamed)
    }
}

/// A multiply in the C906's multiplier (EX1, EX2, EX3) [M: openc906 RTL, see
/// docs/cost-model.md]: it reaches EX3 two cycles after issue (and once the multiply ahead
/// has left it), and writes its result back over the one result bus only in a cycle in
/// which no instruction in EX1 writes back (ALU, load, jump results have priority); until
/// then it holds EX3, the multiply behind it holds EX2, and a third one cannot leave EX1,
/// which stalls issue. A dependent instruction takes the result from EX3, the cycle after
/// it arrives there. The long path iterates three more cycles in EX3.
#[derive(Clone, Copy, Debug)]
struct MulOp {
    seq: u64,
    /// Cycle it entered EX2.
    ex2: u64,
    /// Extra EX3 cycles (3 on the long path).
    extra: u64,
    dest: Option<usize>,
}

/// The bytes a scalar load or store accesses: (address, length).
fn scalar_access(h: &Hart, row: &kgen_dsl::Row, ops: &[i64]) -> Option<(u64, u64)> {
    use kgen_dsl::isa::Addr;
    let mem = row.mem?;
    if row.class.is_vector() {
        return None;
    }
    let x = |k: u8| h.x(ops[k as usize]);
    let imm = |k: u8| ops[k as usize] as u64;
    let elem = (mem.bytes as u64).max(1);
    Some(match mem.addr {
        Addr::BaseOff { base, off } => (x(base).wrapping_add(imm(off)), elem),
        Addr::BaseIdx { base, index, shift, .. } => (x(base).wrapping_add(x(index) << (imm(shift) & 63)), elem),
        Addr::Incr { base, off, shift, before } => (if before { x(base).wrapping_add(imm(off) << (imm(shift) & 63)) } else { x(base) }, elem),
        Addr::Pair { base, off, shift } => (x(base).wrapping_add(imm(off) << (imm(shift) & 63)), 2 * elem),
        _ => return None,
    })
}

fn upper_clear(v: u64, signed: bool) -> bool {
    let hi = v >> 32;
    hi == 0 || (signed && hi == 0xffff_ffff && (v >> 31) & 1 == 1)
}

impl C906 {
    pub fn new() -> C906 {
        C906::default()
    }

    /// The model with an L1 data cache (empty: the first touch of each line misses).
    pub fn with_l1(mut self) -> C906 {
        self.l1 = Some(L1::default());
        self
    }

    /// L1 misses of the access `row` makes with operands `ops` (the hart's registers as
    /// they are before it executes). Indexed accesses are taken as unit-stride from the
    /// base \[A\].
    fn l1_misses_of(&mut self, h: &Hart, row: &kgen_dsl::Row, ops: &[i64]) -> (u64, u64) {
        let Some(mem) = row.mem else { return (0, 0) };
        let store = mem.dir == kgen_dsl::isa::Dir::Store;
        let vlenb = h.vlenb as u64;
        let Some(l1) = self.l1.as_mut() else { return (0, 0) };
        let mut go = |a: u64, len: u64, piece: u64| if store { l1.store_range(a, len, piece) } else { (l1.access_range(a, len), 0) };
        if let Some((a, len)) = scalar_access(h, row, ops) {
            return go(a, len, len);
        }
        use kgen_dsl::isa::Addr;
        let x = |k: u8| h.x(ops[k as usize]);
        let imm = |k: u8| ops[k as usize] as u64;
        let bytes = mem.bytes as u64;
        let vector = row.class.is_vector();
        let (elem, vl, nf) = if vector {
            let d = row.vdialect.unwrap_or(VDialect::Thead);
            let c = h.vconf(d).ok();
            let sew = c.map(|c| c.sew as u64 / 8).unwrap_or(4);
            let nf = match row.ops.first().map(|o| o.kind) {
                Some(Kind::V(kgen_dsl::isa::VGroup::Seg(n))) | Some(Kind::V(kgen_dsl::isa::VGroup::Eew { nf: n, .. })) => n as u64,
                _ => 1,
            };
            (if bytes == 0 { sew } else { bytes }, c.map(|c| c.vl as u64).unwrap_or(0), nf)
        } else {
            (bytes.max(1), 1, 1)
        };
        match mem.addr {
            Addr::BaseOff { base, off } => go(x(base).wrapping_add(imm(off)), elem, elem),
            Addr::BaseIdx { base, index, shift, .. } => go(x(base).wrapping_add(x(index) << (imm(shift) & 63)), elem, elem),
            Addr::Incr { base, off, shift, before } => {
                let a = if before { x(base).wrapping_add(imm(off) << (imm(shift) & 63)) } else { x(base) };
                go(a, elem, elem)
            }
            Addr::Pair { base, off, shift } => go(x(base).wrapping_add(imm(off) << (imm(shift) & 63)), 2 * elem, elem),
            // [A] a unit-stride vector access reaches the cache one register's bytes at a time.
            Addr::VUnit { base } | Addr::VIndexed { base, .. } => go(x(base), elem * vl * nf, vlenb),
            Addr::VStrided { base, stride } => {
                let (b, st) = (x(base), x(stride));
                (0..vl.min(4096)).map(|i| go(b.wrapping_add(i.wrapping_mul(st)), elem * nf, elem * nf)).fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
            }
        }
    }

    /// Total cycles so far: until the scalar pipeline has issued everything and the vector
    /// unit has finished [M: a D1 call of one LMUL-8 vector store takes the store's 16
    /// cycles more than a scalar call].
    pub fn cycles(&self) -> u64 {
        self.cycle.max(self.vpu_free)
    }

    /// Starts a new measurement: the clock, the pipeline and the predictor (unless
    /// `keep_predictor`) restart; the L1 keeps its lines (a warm cache, as rvv-bench's
    /// untimed calls leave it).
    pub fn reset(&mut self) {
        let (slow, l1, keep) = (self.slow, self.l1.take(), self.keep_predictor);
        let kept = keep.then(|| (std::mem::take(&mut self.bht), std::mem::take(&mut self.btb)));
        *self = C906::default();
        (self.slow, self.l1, self.keep_predictor) = (slow, l1, keep);
        if let Some((bht, btb)) = kept {
            (self.bht, self.btb) = (bht, btb);
        }
    }

    /// EX3 arrival and write-back cycles of the queued multiplies, supposing nothing new
    /// uses the result bus from cycle `from` on.
    fn mul_times(&self, from: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(self.mulq.len());
        let mut prev_g = self.last_grant;
        for m in &self.mulq {
            let a = (m.ex2 + 1).max(prev_g + 1);
            let mut g = a + m.extra;
            // Cycles from `from` on are free unless already taken (a load's data).
            let _ = from;
            while self.bus.contains(&g) {
                g += 1;
            }
            out.push((a, g));
            prev_g = g;
        }
        out
    }

    /// Retires the multiplies written back before cycle `t` (the bus before `t` is known).
    fn settle_muls(&mut self, t: u64) {
        while !self.mulq.is_empty() {
            let (a, g) = self.mul_times(t)[0];
            if g >= t {
                break;
            }
            let m = self.mulq.pop_front().expect("not empty");
            self.last_grant = g;
            if let Some(d) = m.dest {
                if self.xmul[d] == m.seq + 1 {
                    self.xmul[d] = 0;
                    self.xready[d] = self.xready[d].max(a + m.extra + 1);
                }
            }
            let _ = a;
        }
        let keep = self.mul_times(t).first().map(|x| x.0).unwrap_or(t).min(t);
        while self.bus.first().is_some_and(|&c| c + 8 < keep) {
            self.bus.pop_first();
        }
    }

    /// When register `r` can be read by an instruction issuing at `from` or later.
    fn xreg_ready(&self, r: usize, from: u64) -> u64 {
        match self.pending_mul(r, from) {
            Some((a, _, extra)) => a + extra + 1,
            None => self.xready[r],
        }
    }

    /// The queued multiply writing `r`: its EX3 arrival, write-back and extra EX3 cycles.
    fn pending_mul(&self, r: usize, from: u64) -> Option<(u64, u64, u64)> {
        if self.xmul[r] == 0 {
            return None;
        }
        let times = self.mul_times(from);
        self.mulq.iter().zip(times).find(|(m, _)| m.seq + 1 == self.xmul[r]).map(|(m, (a, g))| (a, g, m.extra))
    }

    /// Accounts for `inst` at `pc` before it executes (operands as they are now).
    pub fn issue(&mut self, h: &Hart, _pc: u64, inst: &Inst) {
        self.settle_muls(self.cycle);
        let row = table().row(inst.form);
        let ops = &inst.ops[..row.ops.len()];
        // Sources and destinations.
        let mut src_ready = 0u64;
        let mut xdst: [Option<usize>; 2] = [None, None];
        // Whether each destination is written with the instruction's result (Def), not
        // read and written back (UseDef: an update form's base).
        let mut xdata = [false; 2];
        let mut vdst = None;
        for (spec, &v) in row.ops.iter().zip(ops) {
            let reads = matches!(spec.role, Role::Use | Role::UseDef);
            let writes = matches!(spec.role, Role::Def | Role::UseDef);
            match spec.kind {
                Kind::X | Kind::XMem => {
                    if reads && v != 0 {
                        src_ready = src_ready.max(self.xreg_ready(v as usize, self.cycle));
                    }
                    if writes && v != 0 {
                        let k = if xdst[0].is_none() { 0 } else { 1 };
                        xdst[k] = Some(v as usize);
                        xdata[k] = spec.role == Role::Def;
                    }
                }
                Kind::V(_) => {
                    if reads {
                        src_ready = src_ready.max(self.vready[v as usize]);
                    }
                    if writes {
                        vdst = Some(v as usize);
                    }
                }
                Kind::V0 => src_ready = src_ready.max(self.vready[0]),
                Kind::Vm if v == 0 => src_ready = src_ready.max(self.vready[0]),
                _ => {}
            }
        }
        // A vector store reads its data as it is produced (chained).
        if row.class == Class::VStore {
            if let Some(k) = row.ops.iter().position(|o| matches!(o.kind, Kind::V(_)) && o.role == Role::Use) {
                let v = ops[k] as usize;
                let others = row.ops.iter().zip(ops).enumerate().filter(|(j, _)| *j != k).map(|(_, (spec, &r))| match spec.kind {
                    Kind::X | Kind::XMem if r != 0 && matches!(spec.role, Role::Use | Role::UseDef) => self.xreg_ready(r as usize, self.cycle),
                    Kind::V(_) => self.vready[r as usize],
                    _ => 0,
                });
                src_ready = others.max().unwrap_or(0).max(self.vchain[v]);
            }
        }
        let mut start = self.cycle.max(src_ready);
        // Writing a register a multiply has yet to write [M: RTL]: a multiply waits for
        // that one to reach EX3, anything else for its write-back and one cycle more.
        if let Some(d) = xdst[0] {
            if let Some((a, g, _)) = self.pending_mul(d, start) {
                start = start.max(if row.mul.is_some() { a } else { g + 2 });
            }
            // [M] a load waits while two loads to the same register are in flight (RTL:
            // a stream of loads to one register runs at 1.5 cycles a load).
            if row.class == Class::Load {
                let inflight: Vec<u64> = self.last_loads.iter().filter(|(r, t)| *r == d && t + 2 >= start).map(|(_, t)| *t).collect();
                if inflight.len() >= 2 {
                    start = start.max(inflight.iter().min().copied().unwrap_or(0) + 3);
                }
            }
        }
        // [M] an accumulating multiply whose factor is the result of the last multiply
        // issued issues two cycles later than it could otherwise (openc906 RTL: at any
        // distance; not when another multiply came in between).
        if let Some(m) = row.mul.filter(|m| m.acc.is_some()) {
            if m.ops.iter().any(|&k| ops[k as usize] != 0 && self.last_mul_dest == Some(ops[k as usize] as usize)) {
                start = start.max(self.cycle + 2);
            }
        }
        // [M] an accumulating multiply reads its accumulator from a load three cycles after
        // the load issues, one later than an ALU operation can (openc906 RTL: `lwu s2;
        // th.mula s2, ..` 2 stalls, with one instruction between them 1, with two none).
        if let Some(acc) = row.mul.and_then(|m| m.acc) {
            if let Some(t) = self.xload[ops[acc as usize] as usize] {
                start = start.max(t + timing::LOAD_TO_ACCUMULATOR);
            }
        }
        // [M] a load waits for recent stores that wrote part of it (no forwarding).
        if matches!(row.class, Class::Load | Class::Store) {
            if let Some((a, len)) = scalar_access(h, row, ops) {
                if row.class == Class::Load {
                    let waits = self
                        .recent_stores
                        .iter()
                        .filter(|&&(t, sa, sl)| t + STORE_OVERLAP_WINDOW >= start && sa < a.wrapping_add(len) && a < sa.wrapping_add(sl) && (sa, sl) != (a, len))
                        .count() as u64;
                    start += waits * STORE_OVERLAP_WAIT;
                } else {
                    self.recent_stores.push_back((start, a, len));
                    if self.recent_stores.len() > 4 {
                        self.recent_stores.pop_front();
                    }
                }
            }
        }
        self.breakdown.dependency_stalls += start - self.cycle;
        let base = timing::c906_scaled(row, VShape::DEFAULT, self.slow);
        if let Some(m) = row.mul {
            self.muls += 1;
            let long = !m.narrow && {
                let a = h.x(ops[m.ops[0] as usize]);
                let b = h.x(ops[m.ops[1] as usize]);
                !(upper_clear(a, m.signed[0]) && upper_clear(b, m.signed[1]))
            };
            let extra = if long {
                // [M] the long path: four 32x32 partial products.
                self.long_muls += 1;
                self.breakdown.multiplier_long_path += 3;
                3
            } else {
                0
            };
            let extra = if self.slow.is_some_and(|s| s == timing::Source::Scalar) { extra + 3 } else { extra };
            // EX1 -> EX2 once the multiply ahead has moved on to EX3.
            let ahead = self.mul_times(start).last().map(|x| x.0).unwrap_or(0);
            let ex2 = (start + 1).max(ahead);
            self.breakdown.dependency_stalls += ex2 - (start + 1);
            let dest = xdst[0];
            self.last_mul_dest = dest;
            self.mulq.push_back(MulOp { seq: self.mul_seq, ex2, extra, dest });
            if let Some(d) = dest {
                self.write_x(d, start + base.latency + extra, None, self.mul_seq + 1);
            }
            self.mul_seq += 1;
            // [M] the long path also holds issue for four cycles (RTL: a large `mul`
            // followed by k ALU operations takes 4 + k cycles).
            self.cycle = if long { ex2.max(start + 4) } else { ex2 };
            self.pending_branch = false;
            return;
        }
        let (slots, lat) = match row.class {
            Class::Div | Class::DivW => {
                let d = row.div.expect("the ISA table names every division's operands");
                let word = row.class == Class::DivW;
                let read = |k: u8| {
                    let v = h.x(ops[d.ops[k as usize] as usize]);
                    match (word, d.signed) {
                        (true, true) => v as i32 as i64 as u64,
                        (true, false) => v as u32 as u64,
                        _ => v,
                    }
                };
                let (a, b) = (read(0), read(1));
                let bits = |v: u64| 64 - if d.signed { (v as i64).unsigned_abs() } else { v }.leading_zeros();
                let again = self.last_division == Some((a, b, d.signed, word));
                self.last_division = Some((a, b, d.signed, word));
                if again || a == 0 || b == 0 {
                    // Issues at once; its result comes the cycle after the divider's last.
                    let ready = (start + timing::DIVISION_SHORT).max(self.divider_free + 1);
                    self.divider_free = ready;
                    (1, ready - start)
                } else {
                    // One division at a time: the next waits for the divider.
                    let wait = self.divider_free.saturating_sub(start);
                    self.breakdown.dependency_stalls += wait;
                    start += wait;
                    let lat = timing::division_cycles(bits(a), bits(b));
                    self.divider_free = start + lat;
                    (1, lat)
                }
            }
            _ if row.class.is_vector() => return self.issue_vector(h, row, ops, start, vdst, xdst[0]),
            _ => (base.slots, base.latency),
        };
        // An L1 miss holds the pipeline until the line is in [M, fitted: see L1_MISS].
        let (missed, streamed) = self.l1_misses_of(h, row, ops);
        self.l1_misses += missed;
        let stall = missed * L1_MISS + streamed * L1_STREAMED;
        let (slots, lat) = (slots + stall, lat + stall);
        self.cycle = start + slots;
        let done = start + lat;
        for (k, d) in xdst.into_iter().enumerate().filter_map(|(k, d)| Some((k, d?))) {
            // A load's data (not the base an update form writes back).
            self.write_x(d, done, (row.class == Class::Load && xdata[k]).then_some(start), 0);
        }
        if let (Class::Load, Some(d)) = (row.class, xdst[0]) {
            self.last_loads = [self.last_loads[1], (d, start)];
        }
        // The result bus: EX1 results (ALU, jumps; a load's when its data returns).
        if xdst[0].is_some() {
            let at = if row.class == Class::Load { start + 1 } else { start };
            self.bus.insert(at);
        }
        self.pending_branch = matches!(row.class, Class::Branch | Class::Jal | Class::Jalr);
    }

    fn issue_vector(&mut self, h: &Hart, row: &kgen_dsl::Row, ops: &[i64], start: u64, vdst: Option<usize>, xdst: Option<usize>) {
        let d = row.vdialect.unwrap_or(VDialect::Thead);
        let conf = h.vconf(d).ok();
        let m = conf.map(|c| c.group_regs() as u64).unwrap_or(1);
        let sew = conf.map(|c| c.sew as u64).unwrap_or(32);
        let vl = conf.map(|c| c.vl as u64).unwrap_or(1);
        let vlen = h.vlenb as u64 * 8;
        let vshape = VShape { lmul: m, sew, vl, vlen };
        let Timing { slots, vpu_busy: mut busy, latency: mut lat, rewrite } = timing::c906_scaled(row, vshape, self.slow);
        if row.class == Class::VSet {
            self.cycle = start + slots;
            self.vconf_ready = start + lat;
            if let Some(x) = xdst {
                self.write_x(x, start + lat, None, 0);
            }
            return;
        }
        // [M] a vector instruction waits for the configuration of the vsetvl before it.
        let wait = self.vconf_ready.saturating_sub(start);
        self.breakdown.dependency_stalls += wait;
        let start = start + wait;
        // [M] a unit-stride access not aligned to 16 bytes takes one cycle more.
        if let Some(mem) = row.mem {
            if let kgen_dsl::isa::Addr::VUnit { base } = mem.addr {
                if !h.x(ops[base as usize]).is_multiple_of(16) {
                    busy += timing::MISALIGNED_VECTOR_ACCESS;
                    lat += timing::MISALIGNED_VECTOR_ACCESS;
                }
            }
        }
        // An L1 miss keeps the load/store pipe busy until the line is in [M, fitted].
        let (missed, streamed) = self.l1_misses_of(h, row, ops);
        self.l1_misses += missed;
        busy += missed * L1_MISS + streamed * L1_STREAMED;
        lat += missed * L1_MISS;
        // The registers the instruction writes: no earlier than the last write's rewrite
        // distance allows.
        let regs = match (vdst, row.class) {
            (None, _) => 0,
            (_, Class::VWiden) => 2 * m,
            (_, Class::VLoad) => match row.ops.first().map(|o| o.kind) {
                Some(Kind::V(kgen_dsl::isa::VGroup::Seg(n))) => m * n as u64,
                Some(Kind::V(kgen_dsl::isa::VGroup::Eew { nf, .. })) => m * nf as u64,
                _ => m,
            },
            _ => m,
        };
        let first = vdst.unwrap_or(0);
        let dests = first..(first + regs.max(1) as usize).min(32);
        // [M] loads and stores have their own pipe (a D1 call storing a vector LMUL 8
        // `vmv.v.x` writes takes the store's time, not the sum); instructions start in order.
        let mem = matches!(row.class, Class::VLoad | Class::VStore);
        let unit_free = if mem { self.vlsu_free } else { self.valu_free };
        let mut t = start.max(unit_free).max(self.vlast_start);
        if vdst.is_some() {
            for r in dests.clone() {
                t = t.max(self.vrewrite[r]);
            }
        }
        self.breakdown.vector_unit_waits += t - start;
        if mem {
            self.vlsu_free = t + busy;
            self.breakdown.vector_memory_busy += busy;
        } else {
            self.valu_free = t + busy;
            self.breakdown.vector_alu_busy += busy;
        }
        self.vlast_start = t;
        self.vpu_free = self.vpu_free.max(t + busy);
        self.cycle = t + slots;
        if vdst.is_some() {
            for r in dests {
                self.vready[r] = t + lat;
                self.vrewrite[r] = t + rewrite;
                self.vchain[r] = if mem { t + lat } else { t + lat.min(timing::VECTOR_CHAIN) };
            }
        }
        if let Some(x) = xdst {
            self.write_x(x, t + lat, None, 0);
        }
    }

    /// Records a write of integer register `d`: ready at cycle `ready`; the data of a load
    /// issued at `load`, or the result of multiply number `mul` (0: not a multiply's).
    fn write_x(&mut self, d: usize, ready: u64, load: Option<u64>, mul: u64) {
        self.xready[d] = ready;
        self.xload[d] = load;
        self.xmul[d] = mul;
        if mul == 0 && self.last_mul_dest == Some(d) {
            self.last_mul_dest = None;
        }
    }

    /// Accounts for the control-flow outcome of the instruction just executed.
    pub fn resolve(&mut self, pc: u64, next_pc: u64, inst: &Inst) {
        if !self.pending_branch {
            return;
        }
        self.pending_branch = false;
        let row = table().row(inst.form);
        let taken = next_pc != pc.wrapping_add(4);
        let mut penalty = 0;
        match row.class {
            Class::Branch => {
                // [A] a branch seen first is weakly taken.
                let ctr = self.bht.entry(pc).or_insert(2);
                let predicted = *ctr >= 2;
                *ctr = if taken { (*ctr + 1).min(3) } else { ctr.saturating_sub(1) };
                if predicted != taken {
                    penalty = MISPREDICT;
                } else if taken && !self.btb.contains(&pc) {
                    penalty = BTB_MISS;
                }
                if taken {
                    self.btb_insert(pc);
                }
            }
            Class::Jal => {
                if !self.btb.contains(&pc) {
                    penalty = BTB_MISS;
                }
                self.btb_insert(pc);
                if inst.control() == Control::Call {
                    self.ras.push(pc + 4);
                    if self.ras.len() > RAS_ENTRIES {
                        self.ras.remove(0);
                    }
                }
            }
            Class::Jalr => {
                if inst.control() == Control::Return {
                    if self.ras.pop() != Some(next_pc) {
                        penalty = MISPREDICT;
                    }
                } else {
                    penalty = MISPREDICT;
                }
                if inst.control() == Control::Call {
                    self.ras.push(pc + 4);
                }
            }
            _ => {}
        }
        self.cycle += penalty;
        self.breakdown.branch_penalties += penalty;
    }

    /// A call from outside the simulated code (the driver's `jal`): push the return address
    /// so the function's `ret` predicts as it would on hardware.
    pub fn note_call(&mut self, ret: u64) {
        self.ras.push(ret);
    }

    fn btb_insert(&mut self, pc: u64) {
        if let Some(p) = self.btb.iter().position(|&x| x == pc) {
            self.btb.remove(p);
        }
        self.btb.push_back(pc);
        if self.btb.len() > BTB_ENTRIES {
            self.btb.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stores `lines` lines from `base` in `piece`-byte stores; (filled, streamed).
    fn stream(l1: &mut L1, base: u64, lines: u64, piece: u64) -> (u64, u64) {
        (0..lines * L1_LINE / piece).map(|k| l1.store_range(base + k * piece, piece, piece)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }

    #[test]
    fn a_store_stream_stops_allocating_after_three_lines() {
        // Off (the negative control): every missed line is filled.
        assert_eq!(stream(&mut L1::default(), 0x10000, 10, 8), (10, 0));
        // On: the miss arms it, the next store sets the stride, three lines of stores at it
        // turn write-allocate off; the lines after that are written through.
        let (filled, streamed) = stream(&mut L1::default().with_amr(1), 0x10000, 10, 8);
        assert_eq!(filled + streamed, 10);
        assert!((4..=5).contains(&filled), "filled {filled}");
        // The same with 16-byte stores (a vector register's bytes) and AMR 2 (15 lines).
        let (filled, _) = stream(&mut L1::default().with_amr(2), 0x10000, 20, 16);
        assert!((16..=17).contains(&filled), "filled {filled}");
        // Stores that never follow one another at one stride keep allocating.
        let mut l1 = L1::default().with_amr(1);
        let scattered: (u64, u64) = (0..10u64).map(|k| l1.store_range(0x10000 + k * 3 * L1_LINE, 8, 8)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        assert_eq!(scattered, (10, 0));
        // Lines the cache holds take the stores whatever the detector says.
        let mut l1 = L1::default().with_amr(1);
        l1.access_range(0x10000, 10 * L1_LINE);
        assert_eq!(stream(&mut l1, 0x10000, 10, 8), (0, 0));
    }

    #[test]
    fn four_stores_off_the_stride_end_a_stream() {
        let mut l1 = L1::default().with_amr(1);
        stream(&mut l1, 0x10000, 6, 8);
        assert_eq!(l1.amr.as_ref().map(|a| a.state), Some(AmrState::Func));
        for k in 0..3 {
            l1.store_range(0x90000 + k * 4096, 8, 8);
            assert_eq!(l1.amr.as_ref().map(|a| a.state), Some(AmrState::Func), "after {} stores off the stride", k + 1);
        }
        // The fourth leaves it; that store is still written through.
        assert_eq!(l1.store_range(0xa0000, 8, 8), (0, 1));
        assert_eq!(l1.amr.as_ref().map(|a| a.state), Some(AmrState::Idle));
    }
}
