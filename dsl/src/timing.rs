//! The C906's timing per instruction class: the one table the cost model (kgen-sim's
//! `cost.rs`, which adds what depends on run-time values: the multiplier's long path,
//! division, branch prediction) and the schedulers (`sched.rs`) read. Sources as in
//! docs/cost-model.md: **\[M\]** measured on the RTL or a D1, **\[D\]** the openc906 manual,
//! **\[V\]** camel-cdr's rvv-bench D1 results, **\[A\]** an assumption.

use crate::isa::{Addr, Class, Kind, Row, VGroup};

/// Issue slots of the scalar pipeline, cycles the vector unit is busy, cycles until the
/// result can be used, and cycles before another instruction may write the same vector
/// register (the C906's vector unit does not overlap two writes of one register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub slots: u64,
    pub vpu_busy: u64,
    pub latency: u64,
    pub rewrite: u64,
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

/// Scalar issue slots a vector load or store takes [M: D1 memcpy/memset loops, where every
/// loop period is 2 per such instruction plus 1 per scalar one until the vector unit's own
/// time dominates].
pub const VECTOR_SLOTS: u64 = 2;
/// Scalar issue slots a vsetvl(i) takes [M: D1 memcpy/memset loops: rvv-bench's
/// `rvv_align_dest`/`rvv_align_src`/`memset_rvv_align` loops, whose vsetvli is followed by
/// the branch, run one cycle an iteration faster than its `rvv` loops of the same
/// instructions, whose vsetvli is followed by the load or store].
pub const VSET_SLOTS: u64 = 1;
/// Cycles from a vsetvl(i)'s issue to the first vector instruction under its configuration
/// (and to a read of its vl) [M: the same loops; the `rvv` loops' period counts the
/// vsetvli as two cycles].
pub const VSET_TO_VECTOR: u64 = 2;
/// Scalar issue slots of any other vector instruction [A: no D1 figure separates it; the
/// D1 vector ChaCha20 is bound by its dependent chain either way].
pub const VECTOR_ALU_SLOTS: u64 = 1;
/// The minimum distance between two writes of one vector register [V: the D1 table's
/// figures are for a stream writing one register; 4 at LMUL 1 where a dependent chain of
/// the same operations runs at 3 (the D1 vector ChaCha20)].
pub const VECTOR_REWRITE: u64 = 4;
/// Cycles after a vector ALU instruction starts at which a store may start reading its
/// result [A: the ALU latency at LMUL 1; the D1's LMUL 8 `vmv.v.x` + `vse8.v` takes the
/// store's time].
pub const VECTOR_CHAIN: u64 = 3;
/// Cycles from a load's issue to an accumulating multiply (th.mula/th.muls) that reads its
/// result as the accumulator [M: openc906 RTL, "load, th.mula onto it at distance d" in
/// tests/rtl_calibration.rs: d = 1, 2, 3 stall 2, 1, 0 cycles; th.mulaw/th.mulah taken to
/// be the same, A]; an ALU use needs 2.
pub const LOAD_TO_ACCUMULATOR: u64 = 3;
/// The divider's cycles for a division (or remainder) whose dividend and divisor have
/// `dividend_bits` and `divisor_bits` significant bits (of their magnitudes) [M: openc906
/// RTL, "2 remu, n-bit dividends, m-bit divisor" in tests/rtl_calibration.rs: 6 + one per
/// two bits the dividend is longer, for every size from 2 to 64 bits and divisors of 2,
/// 5 and 16 bits; `div`, `divw` the same]. The divider takes one division at a time; the
/// pipeline goes on issuing other instructions meanwhile.
pub fn division_cycles(dividend_bits: u32, divisor_bits: u32) -> u64 {
    DIVISION_BASE + dividend_bits.saturating_sub(divisor_bits) as u64 / 2
}
/// See [`division_cycles`].
pub const DIVISION_BASE: u64 = 6;
/// A division whose operands (and signedness and width) are those of the division before
/// it, such as the `remu` after a `divu` of the same operands, takes this long: the
/// divider keeps its last operands and results [M: RTL, `div_hit_buffer` in aq_iu_div.v;
/// "remu, the same operands again"]; so does a division by 0 or of 0 [M: RTL, the abnormal
/// results of aq_iu_div.v]. Behind a division still in the divider, its result comes the
/// cycle after that one's [M: "divu then remu of the same operands"].
pub const DIVISION_SHORT: u64 = 3;
/// Extra vector-unit cycles of a unit-stride access whose address is not a multiple of 16
/// [M: D1 memcpy/memset with random offsets: +1 per access at LMUL 2-8].
pub const MISALIGNED_VECTOR_ACCESS: u64 = 1;

/// Which row of the table an instruction's timing comes from (for the sensitivity study:
/// [`c906_scaled`] doubles one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    VSet,
    VAlu,
    VMul,
    VWiden,
    VSlide,
    VGather,
    VReduce,
    VToScalar,
    VUnitMem,
    VSegMem,
    VOther,
    Scalar,
}

impl Source {
    /// The vector rows whose numbers are (partly) assumptions, for the sensitivity table.
    pub const VECTOR: [Source; 10] =
        [Source::VSet, Source::VAlu, Source::VMul, Source::VWiden, Source::VSlide, Source::VGather, Source::VReduce, Source::VToScalar, Source::VUnitMem, Source::VSegMem];
    pub fn name(self) -> &'static str {
        match self {
            Source::VSet => "vsetvl(i)",
            Source::VAlu => "vector ALU (latency)",
            Source::VMul => "vmul/vmulh*/vmacc (latency)",
            Source::VWiden => "widening/narrowing",
            Source::VSlide => "vslide* (latency)",
            Source::VGather => "vrgather (latency)",
            Source::VReduce => "reductions (latency)",
            Source::VToScalar => "vext.x.v / vmv.x.s",
            Source::VUnitMem => "unit-stride load/store",
            Source::VSegMem => "strided/indexed/segment load/store",
            Source::VOther => "other vector",
            Source::Scalar => "scalar",
        }
    }
}

/// The row of the table `row` is timed by.
pub fn source(row: &Row) -> Source {
    match row.class {
        Class::VSet => Source::VSet,
        Class::VMul => Source::VMul,
        Class::VWiden => Source::VWiden,
        Class::VSlide | Class::VSlideDown => Source::VSlide,
        Class::VGather => Source::VGather,
        Class::VReduce => Source::VReduce,
        Class::VToScalar => Source::VToScalar,
        Class::VLoad | Class::VStore => {
            let unit = matches!(row.mem.map(|m| m.addr), Some(Addr::VUnit { .. }));
            if unit && nfields(row) == 1 {
                Source::VUnitMem
            } else {
                Source::VSegMem
            }
        }
        Class::VAlu | Class::VMove | Class::VMask => Source::VAlu,
        c if c.is_vector() => Source::VOther,
        _ => Source::Scalar,
    }
}

fn nfields(row: &Row) -> u64 {
    match row.ops.first().map(|o| o.kind) {
        Some(Kind::V(VGroup::Seg(n))) | Some(Kind::V(VGroup::Eew { nf: n, .. })) => n as u64,
        _ => 1,
    }
}

/// Registers an arithmetic row reads or writes at most, at VLEN 128: a group of LMUL
/// registers, 2·LMUL for a wide (`.w`, widening, narrowing) operand, one for a mask or a
/// scalar element [V: the D1 table: mask-register logic (`vmand.mm`) and `vmsbf.m` take 4
/// cycles at every LMUL, the single-register stream's time; compares (`vmseq`), which read
/// LMUL registers, 4/4/8/16; narrowing shifts (`vnsra`, `vnclip`), which read 2·LMUL, 8 at
/// LMUL 2 and 16 at 4].
fn alu_regs(row: &Row, v: VShape) -> u64 {
    let lmul = v.lmul.max(1);
    row.ops
        .iter()
        .filter_map(|o| match o.kind {
            Kind::V(VGroup::Lmul) => Some(lmul),
            Kind::V(VGroup::Wide) => Some((2 * lmul).min(8)),
            Kind::V(VGroup::Mask | VGroup::Scalar) | Kind::V0 => Some(1),
            Kind::V(VGroup::Whole(n)) => Some(n as u64),
            Kind::V(_) => Some(lmul),
            _ => None,
        })
        .max()
        .unwrap_or(lmul)
}

/// Registers of the data group a vector memory row moves per field.
fn data_regs(row: &Row, v: VShape) -> u64 {
    match row.ops.first().map(|o| o.kind) {
        Some(Kind::V(VGroup::Eew { eew, .. })) => (eew as u64 * v.lmul / v.sew.max(1)).max(1),
        Some(Kind::V(VGroup::Whole(n))) => n as u64,
        Some(Kind::V(VGroup::Mask)) => 1,
        _ => v.lmul.max(1),
    }
}

/// Static timing of `row` on the C906. Multiplies are given their short path (both
/// operands' upper halves clear: 1 slot, 3 cycles \[M\]); division its typical 20 cycles.
pub fn c906(row: &Row, v: VShape) -> Timing {
    c906_scaled(row, v, None)
}

/// [`c906`], with the vector-unit time and latency of the instructions timed by table row
/// `slow` doubled (what the figures would be if that row were twice as slow).
pub fn c906_scaled(row: &Row, v: VShape, slow: Option<Source>) -> Timing {
    let mut tm = base(row, v);
    if slow.is_some_and(|s| s == source(row)) {
        tm.vpu_busy *= 2;
        tm.latency *= 2;
        tm.rewrite *= 2;
        if tm.vpu_busy == 0 {
            tm.slots *= 2;
        }
    }
    tm
}

fn base(row: &Row, v: VShape) -> Timing {
    let t = |slots, vpu_busy, latency| Timing { slots, vpu_busy, latency, rewrite: 0 };
    let pair = matches!(row.mem, Some(m) if matches!(m.addr, Addr::Pair { .. }));
    match row.class {
        // [M] load-to-use 2; [D] pairs split into two accesses.
        Class::Load if pair => t(2, 0, 3),
        Class::Load => t(1, 0, 2),
        Class::Store if pair => t(2, 0, 1),
        Class::Store | Class::Fence | Class::System | Class::Csr => t(1, 0, 1),
        // [M] 3 cycles with both operands < 2^32 (the long path is the cost model's).
        Class::Mul | Class::MulAcc | Class::MulW | Class::MulAccW => t(1, 0, 3),
        // [M] division_cycles; the operands are not known here: [A] a 64-bit dividend by a
        // 32-bit divisor (the run-time model uses the operands).
        Class::Div | Class::DivW => t(1, 0, division_cycles(64, 32)),
        // [M] one issue slot; the new vl and vtype two cycles after it (D1 loops).
        Class::VSet => t(VSET_SLOTS, 0, VSET_TO_VECTOR),
        c if c.is_vector() => {
            // Registers per group at VLEN 128 units: the datapath moves 64 bits a cycle, two
            // cycles per 128-bit register [V, M].
            let per_reg = (v.vlen / 128).max(1);
            let m = v.lmul.max(1) * per_reg;
            let ix = (v.lmul.max(1).trailing_zeros() as usize).min(3);
            let (busy, lat) = match c {
                // [V] e32 vmul/vmulhu/vmacc 5/5/8/16 (vmacc's is a chain through its
                // accumulator: the latency), e8/e16 4/4/8/16.
                Class::VMul => (2 * m, if v.sew >= 32 { [5, 5, 8, 16][ix] } else { [4, 4, 8, 16][ix] }),
                // [V] e8/e16 vwmulu, vwaddu, vnsrl: 4/8/16 at LMUL 1/2/4 (2·LMUL registers).
                Class::VWiden => (4 * m, (4 * m).max(3)),
                // [V] vslideup 4/4/8/16 as an ALU op; vslidedown 4/5/9/17, one cycle more;
                // latency [A] one more than the time.
                Class::VSlide => (2 * m, 2 * m + 1),
                Class::VSlideDown => (2 * m + 1, 2 * m + 2),
                // [V] vrgather.vv (indices in a vector) 4/16/64/256; vrgather.vx/.vi (one
                // index: a splat) 4/4/8/16, an ALU op's time; vcompress.vm (a mask) 4/10/36/136
                // = 2m² + m (at LMUL 1 the single-register stream's 4); latency [A] the time.
                Class::VGather => {
                    let t = match row.ops.get(2).map(|o| o.kind) {
                        Some(Kind::V(VGroup::Mask)) => 2 * m * m + m,
                        Some(Kind::V(_)) => 4 * m * m,
                        _ => 2 * m,
                    };
                    (t, t.max(3))
                }
                // [V] vdivu/vdiv/vremu/vrem.vv: 12-19/24-33/48-63/97-120 cycles at LMUL 1/2/4/8
                // (e8 to e32; data-dependent), about 13 per register; latency the same. The
                // .vx forms vary more (6 to 112) with the data.
                Class::VDiv => (13 * m, 13 * m),
                // [V] vredxor 4/5/9/17 (vredsum 5 at LMUL 1); latency [A] one more.
                Class::VReduce => (2 * m + 1, 2 * m + 2),
                // [V] vext.x.v 5 at every LMUL (a stream writing one scalar register).
                Class::VToScalar => (5, 5),
                Class::VLoad | Class::VStore => {
                    // [M] D1 memcpy/memset: 8 bytes a cycle, by the register group (LMUL), not
                    // by vl; a load's data is there when it ends (a store that depends on it
                    // starts at once). Segment, strided and indexed accesses [A, fitted to
                    // the D1 vector ChaCha20]: each field as a unit-stride access.
                    let regs = data_regs(row, v) * (v.vlen / 128).max(1);
                    let busy = 2 * regs * nfields(row);
                    (busy, busy)
                }
                // [V] simple ops 4/4/8/16 in a stream writing one register, two cycles per
                // register read or written (alu_regs: a mask-only op one register at every
                // LMUL); [M] a dependent chain at LMUL 1 runs at 3 (D1 vector ChaCha20).
                _ => {
                    let r = alu_regs(row, v) * per_reg;
                    (2 * r, (2 * r).max(3))
                }
            };
            // The D1 table's figure for a stream of one operation writing one register.
            let rewrite = match c {
                Class::VMul | Class::VToScalar => lat.max(busy),
                _ => busy.max(VECTOR_REWRITE),
            };
            let slots = if matches!(c, Class::VLoad | Class::VStore) { VECTOR_SLOTS } else { VECTOR_ALU_SLOTS };
            Timing { slots, vpu_busy: busy, latency: lat, rewrite }
        }
        // [M] ALU, shifts, XThead bit operations: 1 cycle.
        _ => t(1, 0, 1),
    }
}
