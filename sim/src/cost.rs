//! C906 cost model: an in-order, single-issue pipeline with a scoreboard, a decoupled
//! vector unit and a branch predictor. The per-class numbers live in
//! `kgen_dsl::timing` (shared with the schedulers); this file adds what depends on run-time
//! values (the multiplier's long path, division, branch prediction). Every number below
//! carries its source:
//! **[M]** measured on the open C906 RTL or a D1 board (../shared/FACTS.md, "C906 timing
//! facts"), **[D]** the openc906 user manual tables 4.1–4.11, **[V]** camel-cdr's rvv-bench
//! results for the D1 ("mangopi_mq_pro"), **[A]** an assumption of kgen's, to be replaced
//! when a measurement exists. The same table is in docs/cost-model.md.
//!
//! | class | issue slots | result latency | source |
//! |---|---|---|---|
//! | ALU, shifts, XThead bit ops, th.addsl, th.ext(u), th.mveqz | 1 | 1 | [M] add 1.0; th.extu 1.0 |
//! | load (incl. th.lr*, th.l*ia/ib) | 1 | 2 (one bubble if used next) | [M] load+use 3.0/pair, chase 2.0 |
//! | th.ldd/th.lwd (pair) | 2 | 2 after the second | [D] split into two accesses |
//! | store | 1 | – | [D] |
//! | mul/mulh*/th.mula/th.muls, both operands' upper 32 bits clear (or all ones where signed) | 1 | 3 | [M] 3.0 dependent, 1.0 independent |
//! | same, any operand large | 4 | 6 | [M] 6.0 dependent, 4.0 independent |
//! | mulw, th.mulaw, th.mulah | 1 | 3 | [M] mulw 3.0 |
//! | div/rem | 1 | 5 + sig. bits of dividend / 2, ≤ 36 (≤ 20 for *w) | [D] range 5–36 / 5–20; shape [A] |
//! | branch predicted right, target in the 16-entry BTB | 1 | – | [M] taken back-edge free |
//! | taken branch or jal, target not in the BTB | 1 + 2 | – | [M] 2 bubbles |
//! | branch mispredicted (2-bit counters) | 1 + 3 | – | [A] ~3, inferred |
//! | ret through the 4-entry return stack | 1 | – | [D]; miss costs 3 [A] |
//! | vsetvl(i) | 1 | 1 | [A] |
//! | vector ALU, e8–e32, LMUL m (registers) | 1 (vector unit busy 2·m) | max(4, 2·m) | [V] 4/4/8/16 dependent, ~2/4/8/16 independent |
//! | vector e64 ALU | as e32 | as e32 | [A] |
//! | vmul/vmulh* | 1 (busy 2·m) | 5/5/8/16 | [V] |
//! | widening ops | 1 (busy 4·m) | max(4, 4·m) | [A] as ALU on the 2·SEW destination |
//! | vslide* | 1 (busy 2·m) | 4/5/9/17 | [V] |
//! | vrgather | 1 (busy 4·m²) | 4·m² | [V] 4/16/64/256 |
//! | reductions | 1 (busy 2·m + log2(VLEN/SEW)) | busy + 2 | [A] |
//! | vext.x.v / vmv.x.s | 1 | 5 | [V] |
//! | unit-stride vector load/store, B bytes | 1 (busy max(2, B/8)) | busy + 2 | [A] 64 bits per cycle |
//! | strided/indexed/segment vector load/store | 1 (busy max(2, elements)) | busy + 2 | [A] one element per cycle |
//!
//! Scalar instructions keep issuing while the vector unit works (it is decoupled, in order
//! with itself): that is what the interleaved ChaCha20 kernel exploits.

use kgen_dsl::isa::{table, Class, Control, Hart, Inst, Kind, Role, VDialect};
use kgen_dsl::timing::{self, Timing, VShape};
use std::collections::{HashMap, VecDeque};

/// Mispredicted branch penalty [A].
pub const MISPREDICT: u64 = 3;
/// Taken branch whose target is not in the BTB [M].
pub const BTB_MISS: u64 = 2;
/// BTB entries [M].
pub const BTB_ENTRIES: usize = 16;
/// Return-stack entries [D].
pub const RAS_ENTRIES: usize = 4;

/// Where the cycles went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    pub dependency_stalls: u64,
    pub multiplier_long_path: u64,
    pub branch_penalties: u64,
    pub vector_unit_waits: u64,
}

/// The model's state.
#[derive(Clone, Debug, Default)]
pub struct C906 {
    /// Cycle at which the next instruction can issue.
    pub cycle: u64,
    xready: [u64; 32],
    vready: [u64; 32],
    vpu_free: u64,
    bht: HashMap<u64, u8>,
    btb: VecDeque<u64>,
    ras: Vec<u64>,
    pub breakdown: Breakdown,
    /// Count of 64-bit multiplies that took the long (data-dependent) path.
    pub long_muls: u64,
    pub muls: u64,
    pending_branch: bool,
}

fn upper_clear(v: u64, signed: bool) -> bool {
    let hi = v >> 32;
    hi == 0 || (signed && hi == 0xffff_ffff && (v >> 31) & 1 == 1)
}

impl C906 {
    pub fn new() -> C906 {
        C906::default()
    }

    /// Total cycles so far (the cycle the last instruction's results are all done is not
    /// counted separately: throughput is what kernels are measured by).
    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    pub fn reset(&mut self) {
        *self = C906::default();
    }

    /// Accounts for `inst` at `pc` before it executes (operands as they are now).
    pub fn issue(&mut self, h: &Hart, _pc: u64, inst: &Inst) {
        let row = table().row(inst.form);
        let ops = &inst.ops[..row.ops.len()];
        // Sources and destinations.
        let mut src_ready = 0u64;
        let mut xdst: [Option<usize>; 2] = [None, None];
        let mut vdst = None;
        for (spec, &v) in row.ops.iter().zip(ops) {
            let reads = matches!(spec.role, Role::Use | Role::UseDef);
            let writes = matches!(spec.role, Role::Def | Role::UseDef);
            match spec.kind {
                Kind::X | Kind::XMem => {
                    if reads && v != 0 {
                        src_ready = src_ready.max(self.xready[v as usize]);
                    }
                    if writes && v != 0 {
                        if xdst[0].is_none() {
                            xdst[0] = Some(v as usize);
                        } else {
                            xdst[1] = Some(v as usize);
                        }
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
        let start = self.cycle.max(src_ready);
        self.breakdown.dependency_stalls += start - self.cycle;
        let base = timing::c906(row, VShape::DEFAULT);
        let (slots, lat) = match row.class {
            _ if row.mul.is_some_and(|m| !m.narrow) => {
                let m = row.mul.expect("a multiply");
                self.muls += 1;
                let a = h.x(ops[m.ops[0] as usize]);
                let b = h.x(ops[m.ops[1] as usize]);
                if upper_clear(a, m.signed[0]) && upper_clear(b, m.signed[1]) {
                    (base.slots, base.latency)
                } else {
                    // [M] the long path: 6 cycles, blocking further multiplies for 4.
                    self.long_muls += 1;
                    self.breakdown.multiplier_long_path += 3;
                    (4, 6)
                }
            }
            Class::Div | Class::DivW => {
                // [D] 5-36 (5-20 for *w); [A] growing with the dividend's significant bits.
                let a = h.x(ops[1]);
                let bits = 64 - a.leading_zeros() as u64;
                let cap = if row.class == Class::Div { 36 } else { 20 };
                (1, (5 + bits / 2).min(cap))
            }
            _ if row.class.is_vector() => return self.issue_vector(h, row, ops, start, vdst, xdst[0]),
            _ => (base.slots, base.latency),
        };
        self.cycle = start + slots;
        let done = start + lat;
        for d in xdst.into_iter().flatten() {
            self.xready[d] = done;
        }
        self.pending_branch = matches!(row.class, Class::Branch | Class::Jal | Class::Jalr);
    }

    fn issue_vector(&mut self, h: &Hart, row: &kgen_dsl::Row, ops: &[i64], start: u64, vdst: Option<usize>, xdst: Option<usize>) {
        let d = row.vdialect.unwrap_or(VDialect::Thead);
        if row.class == Class::VSet {
            self.cycle = start + 1;
            if let Some(x) = xdst {
                self.xready[x] = start + 1;
            }
            return;
        }
        let conf = h.vconf(d).ok();
        let m = conf.map(|c| c.group_regs() as u64).unwrap_or(1);
        let sew = conf.map(|c| c.sew as u64).unwrap_or(32);
        let vl = conf.map(|c| c.vl as u64).unwrap_or(1);
        let vlen = h.vlenb as u64 * 8;
        let vshape = VShape { lmul: m, sew, vl, vlen };
        let Timing { vpu_busy: busy, latency: lat, .. } = timing::c906(row, vshape);
        let _ = ops;
        let t = start.max(self.vpu_free);
        self.breakdown.vector_unit_waits += t - start;
        self.vpu_free = t + busy;
        self.cycle = t + 1;
        if let Some(v) = vdst {
            let regs = match row.class {
                Class::VWiden => 2 * m,
                _ => m,
            };
            for k in 0..regs.max(1) as usize {
                if v + k < 32 {
                    self.vready[v + k] = t + lat;
                }
            }
        }
        if let Some(x) = xdst {
            self.xready[x] = t + lat;
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
                let ctr = self.bht.entry(pc).or_insert(1);
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
