//! Vector rows: XTheadVector (RVV 0.7.1, `th.` prefix) and RVV 1.0 with Zvkb, Zvbb, Zvbc,
//! Zvkg. Where the two dialects share an encoding the row lists are shared and generated
//! once per dialect; where they differ (loads and stores, vtype, some funct6 values, mask
//! layout, tail policy) the difference is stated here.

mod arith;
mod crypto;
mod mem;
mod perm;
pub mod rollback;

use super::build::*;
use super::hart::{sext, trunc, VConf};
pub use super::hart::VConf as Conf;
use super::*;

pub(super) fn rows(t: &mut Vec<RowDef>) {
    for d in [VDialect::Thead, VDialect::V1] {
        config(t, d);
        mem::rows(t, d);
        arith::rows(t, d);
        perm::rows(t, d);
    }
    crypto::rows(t);
}

pub(super) const VD: Field = RD;
pub(super) const VS2: Field = RS2;
pub(super) const VS1: Field = RS1;
pub(super) const SIMM5: Field = &[Seg { at: 15, len: 5, from: 0 }];

/// The extension set and mnemonic prefix of a dialect.
pub(super) fn dialect_ext(d: VDialect) -> ExtSet {
    match d {
        VDialect::Thead => ExtSet::one(Ext::XTheadVector),
        VDialect::V1 => ExtSet::one(Ext::V),
    }
}
pub(super) fn mn(d: VDialect, base: &str) -> &'static str {
    match d {
        VDialect::Thead => leak(format!("th.{base}")),
        VDialect::V1 => leak(base.to_string()),
    }
}

pub(super) const fn vreg(name: &'static str, role: Role, g: VGroup, field: Field) -> OpSpec {
    op(name, role, Kind::V(g), field)
}
pub(super) const VM_OP: OpSpec = op("vm", Role::Use, Kind::Vm, VM);
pub(super) const V0_OP: OpSpec = op("v0", Role::Use, Kind::V0, NONE);

fn config(t: &mut Vec<RowDef>, d: VDialect) {
    let ext = dialect_ext(d);
    let (kind, vt_mask) = match d {
        VDialect::Thead => (Kind::VtypeTh, 0x7ffu64),
        VDialect::V1 => (Kind::Vtype, 0x7ff),
    };
    t.push(
        RowDef::new(mn(d, "vsetvli"), 0x7057, 0x8000_707f, ext)
            .ops(&[xd("rd", RD), xs("rs1", RS1), op("vtype", Role::Use, kind, ZIMM11)])
            .class(Class::VSet)
            .vset(VType::Imm(2))
            .vector(d)
            .sem(move |h, _, o| {
                let avl = (o[1] != 0).then(|| h.x(o[1]));
                h.vsetvl(d, o[0], avl, o[2] as u64 & vt_mask);
                Ok(())
            }),
    );
    t.push(
        RowDef::new(mn(d, "vsetvl"), 0x8000_7057, 0xfe00_707f, ext)
            .ops(&[xd("rd", RD), xs("rs1", RS1), xs("rs2", RS2)])
            .class(Class::VSet)
            .vset(VType::Reg(2))
            .vector(d)
            .sem(move |h, _, o| {
                let avl = (o[1] != 0).then(|| h.x(o[1]));
                let vt = h.x(o[2]);
                h.vsetvl(d, o[0], avl, vt);
                Ok(())
            }),
    );
    if d == VDialect::V1 {
        t.push(
            RowDef::new("vsetivli", 0xc000_7057, 0xc000_707f, ext)
                .ops(&[xd("rd", RD), immop("uimm", uimm(5), RS1), op("vtype", Role::Use, Kind::Vtype, ZIMM10)])
                .class(Class::VSet)
                .vset(VType::Imm(2))
                .vector(d)
                .sem(move |h, _, o| {
                    h.vsetvl(d, o[0], Some(o[1] as u64), o[2] as u64);
                    Ok(())
                }),
        );
    }
}

// ---- element-wise execution ------------------------------------------------------------

/// Fixed-point state an element function may read and set.
pub(super) struct Ectx {
    /// SEW in bits.
    pub sew: u32,
    /// Widths in bits of the `a` (vs2) and `b` (vs1/rs1/imm) operands and of the destination.
    pub wa: u32,
    pub wb: u32,
    pub wd: u32,
    pub vxrm: u8,
    pub vxsat: bool,
}

/// An element operation: `a` = vs2 element, `b` = vs1 element / scalar / immediate,
/// `d` = old destination element (multiply-add) or the v0 mask bit (carry and merge forms).
pub(super) type EFn = fn(a: u64, b: u64, d: u64, cx: &mut Ectx) -> u64;

/// Width of an operand relative to SEW.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum W {
    Sew,
    Wide,
    /// Destination is a mask register.
    Mask,
}

/// Where the `b` operand comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Src {
    V,
    X,
    I,
}

/// What the `d` argument of the element function carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DArg {
    None,
    /// Old destination element (multiply-add family).
    Old,
    /// v0's mask bit; every body element is active (vadc, vmerge...).
    Carry,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub dst: W,
    pub a: W,
    pub src: Src,
    pub darg: DArg,
    /// Operand indices of vd, vs2 and b, and of vm (if any).
    pub vd: usize,
    pub vs2: usize,
    pub b: usize,
    pub vm: Option<usize>,
    /// True for ops without a vs2 operand (vmv.v.*): `a` is 0.
    pub no_a: bool,
    /// The 5-bit immediate is zero-extended rather than sign-extended (XTheadVector's
    /// unsigned compares and vsaddu.vi, as T-Head's QEMU does).
    pub imm_zext: bool,
}

fn width(w: W, sew: u32) -> u32 {
    match w {
        W::Sew | W::Mask => sew,
        W::Wide => 2 * sew,
    }
}

/// Registers a group of `w` elements occupies.
pub(super) fn group_regs(w: W, c: &VConf) -> usize {
    match w {
        W::Mask => 1,
        W::Sew => c.group_regs(),
        W::Wide => 2 * c.group_regs(),
    }
}

pub(super) fn exec_elementwise(h: &mut Hart, d: VDialect, s: &Shape, f: EFn, o: &[i64]) -> Result<(), Trap> {
    let c = h.vconf(d)?;
    let sew = c.sew;
    if (s.dst == W::Wide || s.a == W::Wide) && sew * 2 > 64 {
        return Err(Trap::Illegal(format!("widening/narrowing at SEW={sew}")));
    }
    let (vd, vs2, bi) = (o[s.vd], o[s.vs2], o[s.b]);
    h.vcheck(vd, group_regs(s.dst, &c), "destination")?;
    if !s.no_a {
        h.vcheck(vs2, group_regs(s.a, &c), "source")?;
    }
    if s.src == Src::V {
        h.vcheck(bi, c.group_regs(), "source")?;
    }
    let vm = s.vm.map(|i| o[i]).unwrap_or(1);
    let mut cx = Ectx { sew, wa: width(s.a, sew), wb: sew, wd: width(s.dst, sew), vxrm: h.vxrm, vxsat: h.vxsat };
    let xval = if s.src == Src::X { trunc(h.x(bi), sew) } else { 0 };
    let ival = if s.src != Src::I {
        0
    } else if s.imm_zext {
        (bi as u64) & 31
    } else {
        trunc(bi as u64, sew)
    };
    // A stack buffer for the usual sizes; results are computed before any is written, so
    // sources that overlap the destination read their old values.
    let mut stack = [None; 256];
    let mut heap = Vec::new();
    let vals: &mut [Option<u64>] = if c.vl <= stack.len() {
        &mut stack[..c.vl]
    } else {
        heap.resize(c.vl, None);
        &mut heap
    };
    for (i, slot) in vals.iter_mut().enumerate().skip(h.vstart as usize) {
        let carry = s.darg == DArg::Carry;
        if !carry && !h.active(vm, i, &c) {
            continue;
        }
        let a = if s.no_a { 0 } else { h.velem(vs2, i, cx.wa) };
        let b = match s.src {
            Src::V => h.velem(bi, i, sew),
            Src::X => xval,
            Src::I => ival,
        };
        let dv = match s.darg {
            DArg::None => 0,
            DArg::Old => h.velem(vd, i, cx.wd),
            DArg::Carry => h.mask_bit(0, i, &c) as u64,
        };
        *slot = Some(f(a, b, dv, &mut cx));
    }
    h.vxsat = cx.vxsat;
    if s.dst == W::Mask {
        let m: Vec<Option<bool>> = vals.iter().map(|v| v.map(|v| v & 1 != 0)).collect();
        h.write_mask(vd, &c, &m);
    } else {
        h.write_group(vd, cx.wd, &c, vals);
    }
    Ok(())
}

// ---- fixed-point helpers --------------------------------------------------------------

/// Rounding increment for shifting `v` right by `shift` under rounding mode `vxrm`.
pub(super) fn round_inc(v: u128, shift: u32, vxrm: u8) -> u128 {
    if shift == 0 {
        return 0;
    }
    let bit = |k: u32| (v >> k) & 1;
    let low = |k: u32| if k == 0 { 0 } else { v & ((1u128 << k) - 1) };
    match vxrm & 3 {
        0 => bit(shift - 1),
        1 => bit(shift - 1) & ((low(shift - 1) != 0) as u128 | bit(shift)),
        2 => 0,
        _ => ((bit(shift) == 0) && low(shift) != 0) as u128,
    }
}

/// `v >> shift` rounded per vxrm, for an unsigned value.
pub(super) fn rshift_round_u(v: u128, shift: u32, vxrm: u8) -> u128 {
    (v >> shift) + round_inc(v, shift, vxrm)
}

/// `v >> shift` (arithmetic) rounded per vxrm, for a signed value.
pub(super) fn rshift_round_s(v: i128, shift: u32, vxrm: u8) -> i128 {
    (v >> shift) + round_inc(v as u128, shift, vxrm) as i128
}

pub(super) fn sat_u(v: u128, bits: u32, cx: &mut Ectx) -> u64 {
    let max = if bits == 64 { u64::MAX as u128 } else { (1u128 << bits) - 1 };
    if v > max {
        cx.vxsat = true;
        max as u64
    } else {
        v as u64
    }
}

pub(super) fn sat_s(v: i128, bits: u32, cx: &mut Ectx) -> u64 {
    let max = (1i128 << (bits - 1)) - 1;
    let min = -(1i128 << (bits - 1));
    let r = if v > max {
        cx.vxsat = true;
        max
    } else if v < min {
        cx.vxsat = true;
        min
    } else {
        v
    };
    trunc(r as u64, bits)
}

pub(super) fn s(v: u64, bits: u32) -> i128 {
    sext(v, bits) as i128
}

pub use super::groups::{group_alignment_violation, v1_overlap_violation, vspan, VSpan};
