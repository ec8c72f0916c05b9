//! Vector integer arithmetic: OPIVV/OPIVX/OPIVI and OPMVV/OPMVX element-wise rows.

use super::*;

/// Operand layout of an element-wise row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lay {
    /// `vd, vs2, vs1|rs1|imm[, v0.t]`
    Std,
    /// `vd, vs1|rs1, vs2[, v0.t]`, vd read and written (multiply-add).
    MulAdd,
    /// `vd, vs2, vs1|rs1|imm, v0`: carry-in / merge from v0, vm bit 0.
    Carry,
    /// `vd, vs2, vs1|rs1|imm`: no mask, vm bit 1 (RVV 1.0 vmadc/vmsbc without carry-in).
    NoMask,
    /// `vd, vs1|rs1|imm`: vs2 = 0, vm bit 1 (vmv.v.*).
    Move,
}

struct AOp {
    base: &'static str,
    f6: u32,
    /// OPMVV/OPMVX (funct3 2/6) rather than OPIVV/OPIVX/OPIVI (0/4/3).
    opm: bool,
    vars: &'static [(&'static str, Src)],
    /// The `.vi` immediate is signed (else unsigned 0..31).
    simm: bool,
    lay: Lay,
    dst: W,
    a: W,
    class: Class,
    f: EFn,
}

const VVXI: &[(&str, Src)] = &[("vv", Src::V), ("vx", Src::X), ("vi", Src::I)];
const VVX: &[(&str, Src)] = &[("vv", Src::V), ("vx", Src::X)];
const VXI: &[(&str, Src)] = &[("vx", Src::X), ("vi", Src::I)];
const VX: &[(&str, Src)] = &[("vx", Src::X)];
const WVXI: &[(&str, Src)] = &[("wv", Src::V), ("wx", Src::X), ("wi", Src::I)];
const WVX: &[(&str, Src)] = &[("wv", Src::V), ("wx", Src::X)];
const VVXIM: &[(&str, Src)] = &[("vvm", Src::V), ("vxm", Src::X), ("vim", Src::I)];
const VVXM: &[(&str, Src)] = &[("vvm", Src::V), ("vxm", Src::X)];
const MV: &[(&str, Src)] = &[("v.v", Src::V), ("v.x", Src::X), ("v.i", Src::I)];

const fn a(base: &'static str, f6: u32, opm: bool, vars: &'static [(&'static str, Src)], simm: bool, f: EFn) -> AOp {
    AOp { base, f6, opm, vars, simm, lay: Lay::Std, dst: W::Sew, a: W::Sew, class: Class::VAlu, f }
}

impl AOp {
    const fn lay(mut self, l: Lay) -> Self {
        self.lay = l;
        self
    }
    const fn dst(mut self, w: W) -> Self {
        self.dst = w;
        self
    }
    const fn wide_a(mut self) -> Self {
        self.a = W::Wide;
        self
    }
    const fn class(mut self, c: Class) -> Self {
        self.class = c;
        self
    }
}

fn cmp(b: bool) -> u64 {
    b as u64
}

fn shamt(b: u64, bits: u32) -> u32 {
    (b & (bits as u64 - 1)) as u32
}

/// Integer ops with the same encoding and meaning in both dialects.
fn common() -> Vec<AOp> {
    use Lay::*;
    vec![
        a("vadd", 0b000000, false, VVXI, true, |a, b, _, _| a.wrapping_add(b)),
        a("vsub", 0b000010, false, VVX, true, |a, b, _, _| a.wrapping_sub(b)),
        a("vrsub", 0b000011, false, VXI, true, |a, b, _, _| b.wrapping_sub(a)),
        a("vminu", 0b000100, false, VVX, true, |a, b, _, _| a.min(b)),
        a("vmin", 0b000101, false, VVX, true, |a, b, _, c| if s(a, c.sew) < s(b, c.sew) { a } else { b }),
        a("vmaxu", 0b000110, false, VVX, true, |a, b, _, _| a.max(b)),
        a("vmax", 0b000111, false, VVX, true, |a, b, _, c| if s(a, c.sew) > s(b, c.sew) { a } else { b }),
        a("vand", 0b001001, false, VVXI, true, |a, b, _, _| a & b),
        a("vor", 0b001010, false, VVXI, true, |a, b, _, _| a | b),
        a("vxor", 0b001011, false, VVXI, true, |a, b, _, _| a ^ b),
        a("vadc", 0b010000, false, VVXIM, true, |a, b, d, _| a.wrapping_add(b).wrapping_add(d)).lay(Carry),
        a("vsbc", 0b010010, false, VVXM, true, |a, b, d, _| a.wrapping_sub(b).wrapping_sub(d)).lay(Carry),
        a("vmadc", 0b010001, false, VVXIM, true, |a, b, d, c| cmp((a as u128 + b as u128 + d as u128) >> c.sew != 0))
            .lay(Carry)
            .dst(W::Mask),
        a("vmsbc", 0b010011, false, VVXM, true, |a, b, d, _| cmp((a as u128) < b as u128 + d as u128)).lay(Carry).dst(W::Mask),
        a("vmerge", 0b010111, false, VVXIM, true, |a, b, d, _| if d != 0 { b } else { a }).lay(Carry),
        a("vmv", 0b010111, false, MV, true, |_, b, _, _| b).lay(Move).class(Class::VMove),
        a("vmseq", 0b011000, false, VVXI, true, |a, b, _, _| cmp(a == b)).dst(W::Mask),
        a("vmsne", 0b011001, false, VVXI, true, |a, b, _, _| cmp(a != b)).dst(W::Mask),
        a("vmsltu", 0b011010, false, VVX, true, |a, b, _, _| cmp(a < b)).dst(W::Mask),
        a("vmslt", 0b011011, false, VVX, true, |a, b, _, c| cmp(s(a, c.sew) < s(b, c.sew))).dst(W::Mask),
        a("vmsleu", 0b011100, false, VVXI, true, |a, b, _, _| cmp(a <= b)).dst(W::Mask),
        a("vmsle", 0b011101, false, VVXI, true, |a, b, _, c| cmp(s(a, c.sew) <= s(b, c.sew))).dst(W::Mask),
        a("vmsgtu", 0b011110, false, VXI, true, |a, b, _, _| cmp(a > b)).dst(W::Mask),
        a("vmsgt", 0b011111, false, VXI, true, |a, b, _, c| cmp(s(a, c.sew) > s(b, c.sew))).dst(W::Mask),
        a("vsaddu", 0b100000, false, VVXI, true, |a, b, _, c| sat_u(a as u128 + b as u128, c.sew, c)),
        a("vsadd", 0b100001, false, VVXI, true, |a, b, _, c| sat_s(s(a, c.sew) + s(b, c.sew), c.sew, c)),
        a("vssubu", 0b100010, false, VVX, true, |a, b, _, c| {
            if a < b {
                c.vxsat = true;
                0
            } else {
                a - b
            }
        }),
        a("vssub", 0b100011, false, VVX, true, |a, b, _, c| sat_s(s(a, c.sew) - s(b, c.sew), c.sew, c)),
        a("vsll", 0b100101, false, VVXI, false, |a, b, _, c| a << shamt(b, c.sew)),
        a("vsmul", 0b100111, false, VVX, true, |a, b, _, c| {
            let p = s(a, c.sew) * s(b, c.sew);
            sat_s(rshift_round_s(p, c.sew - 1, c.vxrm), c.sew, c)
        })
        .class(Class::VMul),
        a("vsrl", 0b101000, false, VVXI, false, |a, b, _, c| a >> shamt(b, c.sew)),
        a("vsra", 0b101001, false, VVXI, false, |a, b, _, c| (s(a, c.sew) >> shamt(b, c.sew)) as u64),
        a("vssrl", 0b101010, false, VVXI, false, |a, b, _, c| rshift_round_u(a as u128, shamt(b, c.sew), c.vxrm) as u64),
        a("vssra", 0b101011, false, VVXI, false, |a, b, _, c| rshift_round_s(s(a, c.sew), shamt(b, c.sew), c.vxrm) as u64),
        // OPM: divide, multiply, multiply-add, widening.
        a("vdivu", 0b100000, true, VVX, true, |a, b, _, c| a.checked_div(b).unwrap_or(trunc(u64::MAX, c.sew))).class(Class::VDiv),
        a("vdiv", 0b100001, true, VVX, true, |a, b, _, c| {
            let (x, y) = (s(a, c.sew), s(b, c.sew));
            if y == 0 { trunc(u64::MAX, c.sew) } else { (x / y) as u64 }
        })
        .class(Class::VDiv),
        a("vremu", 0b100010, true, VVX, true, |a, b, _, _| if b == 0 { a } else { a % b }).class(Class::VDiv),
        a("vrem", 0b100011, true, VVX, true, |a, b, _, c| {
            let (x, y) = (s(a, c.sew), s(b, c.sew));
            if y == 0 { a } else { (x % y) as u64 }
        })
        .class(Class::VDiv),
        a("vmulhu", 0b100100, true, VVX, true, |a, b, _, c| ((a as u128 * b as u128) >> c.sew) as u64).class(Class::VMul),
        a("vmul", 0b100101, true, VVX, true, |a, b, _, _| a.wrapping_mul(b)).class(Class::VMul),
        a("vmulhsu", 0b100110, true, VVX, true, |a, b, _, c| ((s(a, c.sew) * b as i128) >> c.sew) as u64).class(Class::VMul),
        a("vmulh", 0b100111, true, VVX, true, |a, b, _, c| ((s(a, c.sew) * s(b, c.sew)) >> c.sew) as u64).class(Class::VMul),
        a("vmadd", 0b101001, true, VVX, true, |a, b, d, _| b.wrapping_mul(d).wrapping_add(a)).lay(MulAdd).class(Class::VMul),
        a("vnmsub", 0b101011, true, VVX, true, |a, b, d, _| a.wrapping_sub(b.wrapping_mul(d))).lay(MulAdd).class(Class::VMul),
        a("vmacc", 0b101101, true, VVX, true, |a, b, d, _| b.wrapping_mul(a).wrapping_add(d)).lay(MulAdd).class(Class::VMul),
        a("vnmsac", 0b101111, true, VVX, true, |a, b, d, _| d.wrapping_sub(b.wrapping_mul(a))).lay(MulAdd).class(Class::VMul),
        a("vwaddu", 0b110000, true, VVX, true, |a, b, _, _| a.wrapping_add(b)).dst(W::Wide).class(Class::VWiden),
        a("vwadd", 0b110001, true, VVX, true, |a, b, _, c| (s(a, c.wa) + s(b, c.wb)) as u64).dst(W::Wide).class(Class::VWiden),
        a("vwsubu", 0b110010, true, VVX, true, |a, b, _, _| a.wrapping_sub(b)).dst(W::Wide).class(Class::VWiden),
        a("vwsub", 0b110011, true, VVX, true, |a, b, _, c| (s(a, c.wa) - s(b, c.wb)) as u64).dst(W::Wide).class(Class::VWiden),
        a("vwmulu", 0b111000, true, VVX, true, |a, b, _, _| a.wrapping_mul(b)).dst(W::Wide).class(Class::VWiden),
        a("vwmulsu", 0b111010, true, VVX, true, |a, b, _, c| (s(a, c.sew) * b as i128) as u64).dst(W::Wide).class(Class::VWiden),
        a("vwmul", 0b111011, true, VVX, true, |a, b, _, c| (s(a, c.sew) * s(b, c.sew)) as u64).dst(W::Wide).class(Class::VWiden),
        a("vwmaccu", 0b111100, true, VVX, true, |a, b, d, _| d.wrapping_add(a.wrapping_mul(b)))
            .lay(MulAdd)
            .dst(W::Wide)
            .class(Class::VWiden),
        a("vwmacc", 0b111101, true, VVX, true, |a, b, d, c| d.wrapping_add((s(a, c.sew) * s(b, c.sew)) as u64))
            .lay(MulAdd)
            .dst(W::Wide)
            .class(Class::VWiden),
    ]
}

/// `.w` forms of the widening add/subtract (vs2 already 2·SEW); the suffix differs by dialect
/// only in the narrowing shifts, not here.
fn widening_w() -> Vec<AOp> {
    vec![
        a("vwaddu", 0b110100, true, WVX, true, |a, b, _, _| a.wrapping_add(b)).dst(W::Wide).wide_a().class(Class::VWiden),
        a("vwadd", 0b110101, true, WVX, true, |a, b, _, c| (s(a, c.wa) + s(b, c.wb)) as u64).dst(W::Wide).wide_a().class(Class::VWiden),
        a("vwsubu", 0b110110, true, WVX, true, |a, b, _, _| a.wrapping_sub(b)).dst(W::Wide).wide_a().class(Class::VWiden),
        a("vwsub", 0b110111, true, WVX, true, |a, b, _, c| (s(a, c.wa) - s(b, c.wb)) as u64).dst(W::Wide).wide_a().class(Class::VWiden),
    ]
}

/// Narrowing shifts: vs2 is 2·SEW. XTheadVector names them `.vv/.vx/.vi`, RVV 1.0 `.wv/.wx/.wi`.
fn narrowing(vars: &'static [(&'static str, Src)]) -> Vec<AOp> {
    vec![
        a("vnsrl", 0b101100, false, vars, false, |a, b, _, c| a >> shamt(b, c.wa)).wide_a(),
        a("vnsra", 0b101101, false, vars, false, |a, b, _, c| (s(a, c.wa) >> shamt(b, c.wa)) as u64).wide_a(),
        a("vnclipu", 0b101110, false, vars, false, |a, b, _, c| {
            let v = rshift_round_u(a as u128, shamt(b, c.wa), c.vxrm);
            sat_u(v, c.sew, c)
        })
        .wide_a(),
        a("vnclip", 0b101111, false, vars, false, |a, b, _, c| {
            let v = rshift_round_s(s(a, c.wa), shamt(b, c.wa), c.vxrm);
            sat_s(v, c.sew, c)
        })
        .wide_a(),
    ]
}

fn thead_only() -> Vec<AOp> {
    use Lay::*;
    vec![
        a("vaadd", 0b100100, false, VVXI, true, |a, b, _, c| rshift_round_s(s(a, c.sew) + s(b, c.sew), 1, c.vxrm) as u64),
        a("vasub", 0b100110, false, VVX, true, |a, b, _, c| rshift_round_s(s(a, c.sew) - s(b, c.sew), 1, c.vxrm) as u64),
        a("vwsmaccu", 0b111100, false, VVX, true, |a, b, d, c| {
            let p = rshift_round_u(a as u128 * b as u128, c.sew / 2, c.vxrm);
            sat_u(p + d as u128, c.wd, c)
        })
        .lay(MulAdd)
        .dst(W::Wide)
        .class(Class::VWiden),
        a("vwsmacc", 0b111101, false, VVX, true, |a, b, d, c| {
            let p = rshift_round_s(s(a, c.sew) * s(b, c.sew), c.sew / 2, c.vxrm);
            sat_s(p + s(d, c.wd), c.wd, c)
        })
        .lay(MulAdd)
        .dst(W::Wide)
        .class(Class::VWiden),
        a("vwsmaccsu", 0b111110, false, VVX, true, |a, b, d, c| {
            let p = rshift_round_s(s(b, c.sew) * a as i128, c.sew / 2, c.vxrm);
            sat_s(s(d, c.wd) - p, c.wd, c)
        })
        .lay(MulAdd)
        .dst(W::Wide)
        .class(Class::VWiden),
        a("vwsmaccus", 0b111111, false, VX, true, |a, b, d, c| {
            let p = rshift_round_s(b as i128 * s(a, c.sew), c.sew / 2, c.vxrm);
            sat_s(s(d, c.wd) - p, c.wd, c)
        })
        .lay(MulAdd)
        .dst(W::Wide)
        .class(Class::VWiden),
        // vwmaccsu/vwmaccus swap funct6 between 0.7.1 and 1.0.
        a("vwmaccsu", 0b111110, true, VVX, true, |a, b, d, c| d.wrapping_add((s(b, c.sew) * a as i128) as u64))
            .lay(MulAdd)
            .dst(W::Wide)
            .class(Class::VWiden),
        a("vwmaccus", 0b111111, true, VX, true, |a, b, d, c| d.wrapping_add((b as i128 * s(a, c.sew)) as u64))
            .lay(MulAdd)
            .dst(W::Wide)
            .class(Class::VWiden),
    ]
}

fn v1_only() -> Vec<AOp> {
    use Lay::*;
    vec![
        a("vaaddu", 0b001000, true, VVX, true, |a, b, _, c| rshift_round_u(a as u128 + b as u128, 1, c.vxrm) as u64),
        a("vaadd", 0b001001, true, VVX, true, |a, b, _, c| rshift_round_s(s(a, c.sew) + s(b, c.sew), 1, c.vxrm) as u64),
        a("vasubu", 0b001010, true, VVX, true, |a, b, _, c| rshift_round_s(a as i128 - b as i128, 1, c.vxrm) as u64),
        a("vasub", 0b001011, true, VVX, true, |a, b, _, c| rshift_round_s(s(a, c.sew) - s(b, c.sew), 1, c.vxrm) as u64),
        a("vmadc", 0b010001, false, &[("vv", Src::V), ("vx", Src::X), ("vi", Src::I)], true, |a, b, _, c| {
            cmp((a as u128 + b as u128) >> c.sew != 0)
        })
        .lay(NoMask)
        .dst(W::Mask),
        a("vmsbc", 0b010011, false, VVX, true, |a, b, _, _| cmp(a < b)).lay(NoMask).dst(W::Mask),
        a("vwmaccsu", 0b111111, true, VVX, true, |a, b, d, c| d.wrapping_add((s(b, c.sew) * a as i128) as u64))
            .lay(MulAdd)
            .dst(W::Wide)
            .class(Class::VWiden),
        a("vwmaccus", 0b111110, true, VX, true, |a, b, d, c| d.wrapping_add((b as i128 * s(a, c.sew)) as u64))
            .lay(MulAdd)
            .dst(W::Wide)
            .class(Class::VWiden),
    ]
}

pub(super) fn rows(t: &mut Vec<RowDef>, d: VDialect) {
    // Rows from `common` and `widening_w` have the same encoding and meaning in both
    // dialects (unmasked; see `row`).
    let mut ops = common();
    ops.extend(widening_w());
    let shared = ops.len();
    match d {
        VDialect::Thead => {
            ops.extend(narrowing(VVXI));
            ops.extend(thead_only());
        }
        VDialect::V1 => {
            ops.extend(narrowing(WVXI));
            ops.extend(v1_only());
        }
    }
    for (k, aop) in ops.iter().enumerate() {
        for &(suffix, src) in aop.vars {
            t.push(row(d, aop, suffix, src, k < shared));
        }
    }
}

fn group_of(w: W) -> VGroup {
    match w {
        W::Sew => VGroup::Lmul,
        W::Wide => VGroup::Wide,
        W::Mask => VGroup::Mask,
    }
}

/// One row; `shared`: the operation is one of both dialects' common ones.
fn row(d: VDialect, aop: &AOp, suffix: &str, src: Src, shared: bool) -> RowDef {
    let name = mn(d, &format!("{}.{suffix}", aop.base));
    let f3 = match (aop.opm, src) {
        (false, Src::V) => 0,
        (false, Src::X) => 4,
        (false, Src::I) => 3,
        (true, Src::V) => 2,
        (true, Src::X) => 6,
        (true, Src::I) => unreachable!("OPM has no immediate form"),
    };
    let dst_role = if aop.lay == Lay::MulAdd { Role::UseDef } else { Role::Def };
    let vd = vreg("vd", dst_role, group_of(aop.dst), VD);
    let vs2 = vreg("vs2", Role::Use, group_of(aop.a), VS2);
    let b = match src {
        Src::V => vreg("vs1", Role::Use, VGroup::Lmul, VS1),
        Src::X => xs("rs1", RS1),
        Src::I => immop("imm", if aop.simm { simm(5) } else { uimm(5) }, SIMM5),
    };
    let base_bits = (aop.f6 << 26) | (f3 << 12) | OPC_OP_V;
    let (bits, mask, ops, shape) = match aop.lay {
        Lay::Std => (
            base_bits,
            0xfc00_707f,
            vec![vd, vs2, b, VM_OP],
            Shape { dst: aop.dst, a: aop.a, src, darg: DArg::None, vd: 0, vs2: 1, b: 2, vm: Some(3), no_a: false, imm_zext: false },
        ),
        Lay::MulAdd => (
            base_bits,
            0xfc00_707f,
            vec![vd, b, vs2, VM_OP],
            Shape { dst: aop.dst, a: aop.a, src, darg: DArg::Old, vd: 0, vs2: 2, b: 1, vm: Some(3), no_a: false, imm_zext: false },
        ),
        // XTheadVector encodes vadc/vsbc/vmadc/vmsbc with the vm bit set; vmerge and all of
        // RVV 1.0's carry forms have it clear.
        Lay::Carry => (
            if d == VDialect::Thead && aop.base != "vmerge" { base_bits | (1 << 25) } else { base_bits },
            0xfe00_707f,
            vec![vd, vs2, b, V0_OP],
            Shape { dst: aop.dst, a: aop.a, src, darg: DArg::Carry, vd: 0, vs2: 1, b: 2, vm: None, no_a: false, imm_zext: false },
        ),
        Lay::NoMask => (
            base_bits | (1 << 25),
            0xfe00_707f,
            vec![vd, vs2, b],
            Shape { dst: aop.dst, a: aop.a, src, darg: DArg::None, vd: 0, vs2: 1, b: 2, vm: None, no_a: false, imm_zext: false },
        ),
        Lay::Move => (
            base_bits | (1 << 25),
            0xfff0_707f,
            vec![vd, b],
            Shape { dst: aop.dst, a: aop.a, src, darg: DArg::None, vd: 0, vs2: 0, b: 1, vm: None, no_a: true, imm_zext: false },
        ),
    };
    let mut shape = shape;
    shape.imm_zext = d == VDialect::Thead && src == Src::I && matches!(aop.base, "vmsleu" | "vmsgtu" | "vsaddu");
    let mut r = RowDef::new(name, bits, mask, dialect_ext(d)).ops(&ops).class(aop.class).vector(d);
    // Register-overlap rules GNU as enforces (it does not know LMUL, so it compares numbers).
    if (aop.lay == Lay::Std || aop.lay == Lay::MulAdd) && aop.dst != W::Mask {
        r = r.rule(Rule::VdNotV0WhenMasked);
    }
    if aop.lay == Lay::Carry && aop.dst != W::Mask {
        r = r.rule(Rule::Differ(0, 3));
    }
    if aop.dst == W::Wide {
        if aop.a == W::Sew {
            r = r.rule(Rule::VdNotSrc(shape.vs2 as u8));
        }
        if src == Src::V {
            r = r.rule(Rule::VdNotSrc(shape.b as u8));
        }
    }
    // Twins across the dialects: not the mask-producing or carry forms (XTheadVector's mask
    // layout is SEW/LMUL bits per element, RVV 1.0's one bit), nor the immediates that
    // XTheadVector zero-extends.
    if shared && matches!(aop.lay, Lay::Std | Lay::MulAdd | Lay::Move) && aop.dst != W::Mask && !shape.imm_zext {
        r = r.same_in_both_dialects();
    }
    let f = aop.f;
    r.sem(move |h, _, o| exec_elementwise(h, d, &shape, f, o))
}
