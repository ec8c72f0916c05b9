//! The C906's timing per instruction class: the one table the cost model (kgen-sim's
//! `cost.rs`, which adds what depends on run-time values: the multiplier's long path,
//! division, branch prediction) and the schedulers (`sched.rs`) read. Sources as in
//! docs/cost-model.md: **[M]** measured on the RTL or a D1, **[D]** the openc906 manual,
//! **[V]** camel-cdr's rvv-bench D1 results, **[A]** an assumption.

use crate::isa::{Addr, Class, Kind, Row, VGroup};

/// Issue slots of the scalar pipeline, cycles the vector unit is busy, and cycles until
/// the result can be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub slots: u64,
    pub vpu_busy: u64,
    pub latency: u64,
}

/// The vector configuration an instruction runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VShape {
    /// Registers per group (1, 2, 4, 8).
    pub lmul: u64,
    /// Element width in bits.
    pub sew: u64,
    /// Elements processed.
    pub vl: u64,
    /// VLEN in bits.
    pub vlen: u64,
}

impl VShape {
    /// LMUL 1, e32, VLMAX on a VLEN-128 core (the C906).
    pub const DEFAULT: VShape = VShape { lmul: 1, sew: 32, vl: 4, vlen: 128 };
}

/// Static timing of `row` on the C906. Multiplies are given their short path (both
/// operands' upper halves clear: 1 slot, 3 cycles [M]); division its typical 20 cycles.
pub fn c906(row: &Row, v: VShape) -> Timing {
    let t = |slots, vpu_busy, latency| Timing { slots, vpu_busy, latency };
    let pair = matches!(row.mem, Some(m) if matches!(m.addr, Addr::Pair { .. }));
    match row.class {
        // [M] load-to-use 2; [D] pairs split into two accesses.
        Class::Load if pair => t(2, 0, 3),
        Class::Load => t(1, 0, 2),
        Class::Store if pair => t(2, 0, 1),
        Class::Store | Class::Fence | Class::System | Class::Csr => t(1, 0, 1),
        // [M] 3 cycles with both operands < 2^32 (the long path is the cost model's).
        Class::Mul | Class::MulAcc | Class::MulW | Class::MulAccW => t(1, 0, 3),
        // [D] 5-36 cycles; [A] typical.
        Class::Div | Class::DivW => t(1, 0, 20),
        // [A]
        Class::VSet => t(1, 0, 1),
        c if c.is_vector() => {
            let m = v.lmul.max(1);
            let (busy, lat) = match c {
                // [V] e32 vmul/vmulhu 5/5/8/16
                Class::VMul => (2 * m, [5, 5, 8, 16][(m.trailing_zeros() as usize).min(3)]),
                // [A] an ALU op on the 2·SEW destination
                Class::VWiden => (4 * m, (4 * m).max(4)),
                // [V] 4/5/9/17
                Class::VSlide => (2 * m, [4, 5, 9, 17][(m.trailing_zeros() as usize).min(3)]),
                // [V] 4/16/64/256
                Class::VGather => (4 * m * m, 4 * m * m),
                // [A]
                Class::VReduce => {
                    let b = 2 * m + (v.vlen / v.sew).trailing_zeros() as u64;
                    (b, b + 2)
                }
                // [V] 5
                Class::VToScalar => (2, 5),
                // [A] 64 bits per cycle unit-stride, one element per cycle otherwise
                Class::VLoad | Class::VStore => {
                    let mem = row.mem.expect("vector memory rows have an access");
                    let bytes_per = if mem.bytes == 0 { v.sew / 8 } else { mem.bytes as u64 };
                    let unit = matches!(mem.addr, Addr::VUnit { .. });
                    let nf = match row.ops[0].kind {
                        Kind::V(VGroup::Seg(n)) | Kind::V(VGroup::Eew { nf: n, .. }) => n as u64,
                        _ => 1,
                    };
                    let busy = if unit && nf == 1 { (v.vl * bytes_per).div_ceil(8).max(2) } else { (v.vl * nf).max(2) };
                    (busy, busy + 2)
                }
                // [V] simple ops 4/4/8/16 dependent, ~2/4/8/16 independent
                _ => (2 * m, (2 * m).max(4)),
            };
            t(1, busy, lat)
        }
        // [M] ALU, shifts, XThead bit operations: 1 cycle.
        _ => t(1, 0, 1),
    }
}
