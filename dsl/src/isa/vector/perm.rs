//! Permutations, scalar moves, mask operations and reductions.

use super::*;

fn opv(f6: u32, f3: u32) -> u32 {
    (f6 << 26) | (f3 << 12) | OPC_OP_V
}

const OPIVV: u32 = 0;
const OPMVV: u32 = 2;
const OPIVI: u32 = 3;
const OPIVX: u32 = 4;
const OPMVX: u32 = 6;

fn vd_def(g: VGroup) -> OpSpec {
    vreg("vd", Role::Def, g, VD)
}
fn vs2_use(g: VGroup) -> OpSpec {
    vreg("vs2", Role::Use, g, VS2)
}
fn vs1_use(g: VGroup) -> OpSpec {
    vreg("vs1", Role::Use, g, VS1)
}

pub(super) fn rows(t: &mut Vec<RowDef>, d: VDialect) {
    let ext = dialect_ext(d);
    let new = |name: &str, bits: u32, mask: u32, class: Class| RowDef::new(mn(d, name), bits, mask, ext).class(class).vector(d);
    let lmul = VGroup::Lmul;

    // Slides.
    for (name, f6, f3, kind) in [
        ("vslideup.vx", 0b001110, OPIVX, Slide::Up),
        ("vslideup.vi", 0b001110, OPIVI, Slide::Up),
        ("vslidedown.vx", 0b001111, OPIVX, Slide::Down),
        ("vslidedown.vi", 0b001111, OPIVI, Slide::Down),
        ("vslide1up.vx", 0b001110, OPMVX, Slide::Up1),
        ("vslide1down.vx", 0b001111, OPMVX, Slide::Down1),
    ] {
        let b = if f3 == OPIVI { immop("imm", uimm(5), SIMM5) } else { xs("rs1", RS1) };
        let imm = f3 == OPIVI;
        let class = if matches!(kind, Slide::Down | Slide::Down1) { Class::VSlideDown } else { Class::VSlide };
        let mut r = new(name, opv(f6, f3), 0xfc00_707f, class)
            .ops(&[vd_def(lmul), vs2_use(lmul), b, VM_OP])
            .rule(Rule::VdNotV0WhenMasked);
        if matches!(kind, Slide::Up | Slide::Up1) {
            r = r.rule(Rule::VdNotSrc(1));
        }
        t.push(r.same_in_both_dialects().sem(move |h, _, o| slide(h, d, kind, imm, o)));
    }

    // Gathers.
    for (name, f3, src) in [("vrgather.vv", OPIVV, Src::V), ("vrgather.vx", OPIVX, Src::X), ("vrgather.vi", OPIVI, Src::I)] {
        let b = match src {
            Src::V => vs1_use(lmul),
            Src::X => xs("rs1", RS1),
            Src::I => immop("imm", uimm(5), SIMM5),
        };
        let mut r = new(name, opv(0b001100, f3), 0xfc00_707f, Class::VGather)
            .ops(&[vd_def(lmul), vs2_use(lmul), b, VM_OP])
            .rule(Rule::VdNotV0WhenMasked)
            .rule(Rule::VdNotSrc(1));
        if src == Src::V {
            r = r.rule(Rule::VdNotSrc(2));
        }
        t.push(r.same_in_both_dialects().sem(move |h, _, o| gather(h, d, src, 0, o)));
    }
    if d == VDialect::V1 {
        t.push(
            new("vrgatherei16.vv", opv(0b001110, OPIVV), 0xfc00_707f, Class::VGather)
                .ops(&[vd_def(lmul), vs2_use(lmul), vs1_use(VGroup::Eew { nf: 1, eew: 16 }), VM_OP])
                .rule(Rule::VdNotV0WhenMasked)
                .rule(Rule::VdNotSrc(1))
                .rule(Rule::VdNotSrc(2))
                .sem(move |h, _, o| gather(h, d, Src::V, 16, o)),
        );
    }
    t.push(
        new("vcompress.vm", opv(0b010111, OPMVV) | (1 << 25), 0xfe00_707f, Class::VGather)
            .ops(&[vd_def(lmul), vs2_use(lmul), vs1_use(VGroup::Mask)])
            .rule(Rule::VdNotSrc(1))
            .rule(Rule::VdNotSrc(2))
            .sem(move |h, _, o| compress(h, d, o)),
    );

    // Scalar moves.
    match d {
        VDialect::Thead => {
            t.push(
                new("vext.x.v", opv(0b001100, OPMVV) | (1 << 25), 0xfe00_707f, Class::VToScalar)
                    .ops(&[xd("rd", RD), vs2_use(lmul), xs("rs1", RS1)])
                    .sem(move |h, _, o| {
                        let c = h.vconf(d)?;
                        let idx = h.x(o[2]);
                        // Index within one register (VLEN/SEW), not the group (T-Head's QEMU).
                        let v = if idx < (h.vlenb * 8 / c.sew as usize) as u64 {
                            h.velem(o[1], idx as usize, c.sew)
                        } else {
                            0
                        };
                        h.set_x(o[0], v);
                        Ok(())
                    }),
            );
            t.push(
                new("vmv.s.x", opv(0b001101, OPMVX) | (1 << 25), 0xfff0_707f, Class::VMove)
                    .ops(&[vd_def(VGroup::Scalar), xs("rs1", RS1)])
                    .sem(move |h, _, o| {
                        let c = h.vconf(d)?;
                        if c.vl > 0 {
                            let n = h.vlenb * 8 / c.sew as usize;
                            h.set_velem(o[0], 0, c.sew, h.x(o[1]));
                            for i in 1..n {
                                h.set_velem(o[0], i, c.sew, 0);
                            }
                        }
                        Ok(())
                    }),
            );
        }
        VDialect::V1 => {
            t.push(
                new("vmv.x.s", opv(0b010000, OPMVV) | (1 << 25), 0xfe0f_f07f, Class::VToScalar)
                    .ops(&[xd("rd", RD), vs2_use(VGroup::Scalar)])
                    .sem(move |h, _, o| {
                        let c = h.vconf(d)?;
                        let v = sext(h.velem(o[1], 0, c.sew), c.sew) as u64;
                        h.set_x(o[0], v);
                        Ok(())
                    }),
            );
            t.push(
                new("vmv.s.x", opv(0b010000, OPMVX) | (1 << 25), 0xfff0_707f, Class::VMove)
                    .ops(&[vd_def(VGroup::Scalar), xs("rs1", RS1)])
                    .sem(move |h, _, o| {
                        let c = h.vconf(d)?;
                        if c.vl > h.vstart as usize {
                            h.set_velem(o[0], 0, c.sew, h.x(o[1]));
                        }
                        h.vstart = 0;
                        Ok(())
                    }),
            );
            for n in [1u8, 2, 4, 8] {
                t.push(
                    new(&format!("vmv{n}r.v"), opv(0b100111, OPIVI) | (1 << 25) | (((n - 1) as u32) << 15), 0xfe0f_f07f, Class::VMove)
                        .ops(&[vd_def(VGroup::Whole(n)), vs2_use(VGroup::Whole(n))])
                        .sem(move |h, _, o| {
                            h.vcheck(o[0], n as usize, "destination")?;
                            h.vcheck(o[1], n as usize, "source")?;
                            let len = n as usize * h.vlenb;
                            let (src, dst) = (o[1] as usize * h.vlenb, o[0] as usize * h.vlenb);
                            h.v.copy_within(src..src + len, dst);
                            Ok(())
                        }),
                );
            }
            for (name, vs1, f, signed) in [
                ("vzext.vf8", 0b00010, 8u32, false),
                ("vsext.vf8", 0b00011, 8, true),
                ("vzext.vf4", 0b00100, 4, false),
                ("vsext.vf4", 0b00101, 4, true),
                ("vzext.vf2", 0b00110, 2, false),
                ("vsext.vf2", 0b00111, 2, true),
            ] {
                t.push(
                    new(name, opv(0b010010, OPMVV) | (vs1 << 15), 0xfc0f_f07f, Class::VAlu)
                        .ops(&[vd_def(lmul), vs2_use(lmul), VM_OP])
                        .rule(Rule::VdNotV0WhenMasked)
                        .rule(Rule::VdNotSrc(1))
                        .sem(move |h, _, o| {
                            let c = h.vconf(d)?;
                            if c.sew / f < 8 {
                                return Err(Trap::Illegal(format!("{name} at SEW={}", c.sew)));
                            }
                            let sw = c.sew / f;
                            let vals: Vec<Option<u64>> = (0..c.vl)
                                .map(|i| {
                                    h.active(o[2], i, &c).then(|| {
                                        let v = h.velem(o[1], i, sw);
                                        if signed { sext(v, sw) as u64 } else { v }
                                    })
                                })
                                .collect();
                            h.write_group(o[0], c.sew, &c, &vals);
                            Ok(())
                        }),
                );
            }
        }
    }

    // Mask population count and find-first.
    let (popc, first, popc_bits, first_bits) = match d {
        VDialect::Thead => ("vmpopc.m", "vmfirst.m", opv(0b010100, OPMVV), opv(0b010101, OPMVV)),
        VDialect::V1 => ("vcpop.m", "vfirst.m", opv(0b010000, OPMVV) | (0b10000 << 15), opv(0b010000, OPMVV) | (0b10001 << 15)),
    };
    for (name, bits, is_popc) in [(popc, popc_bits, true), (first, first_bits, false)] {
        t.push(
            new(name, bits, 0xfc0f_f07f, Class::VToScalar)
                .ops(&[xd("rd", RD), vs2_use(VGroup::Mask), VM_OP])
                .sem(move |h, _, o| {
                    let c = h.vconf(d)?;
                    let mut count = 0u64;
                    let mut first = u64::MAX;
                    for i in 0..c.vl {
                        if h.active(o[2], i, &c) && h.mask_bit(o[1], i, &c) {
                            count += 1;
                            if first == u64::MAX {
                                first = i as u64;
                            }
                        }
                    }
                    h.set_x(o[0], if is_popc { count } else { first });
                    Ok(())
                }),
        );
    }

    // vmsbf/vmsof/vmsif, viota, vid.
    let munary = match d {
        VDialect::Thead => 0b010110,
        VDialect::V1 => 0b010100,
    };
    for (name, vs1, kind) in [("vmsbf.m", 0b00001, 0u8), ("vmsof.m", 0b00010, 1), ("vmsif.m", 0b00011, 2)] {
        t.push(
            new(name, opv(munary, OPMVV) | (vs1 << 15), 0xfc0f_f07f, Class::VMask)
                .ops(&[vd_def(VGroup::Mask), vs2_use(VGroup::Mask), VM_OP])
                .rule(Rule::VdNotV0WhenMasked)
                .rule(Rule::VdNotSrc(1))
                .sem(move |h, _, o| {
                    let c = h.vconf(d)?;
                    let mut seen = false;
                    let mut vals = vec![None; c.vl];
                    for (i, slot) in vals.iter_mut().enumerate() {
                        if !h.active(o[2], i, &c) {
                            continue;
                        }
                        let bit = h.mask_bit(o[1], i, &c);
                        let v = match kind {
                            0 => !seen && !bit,
                            1 => !seen && bit,
                            _ => !seen,
                        };
                        seen |= bit;
                        *slot = Some(v);
                    }
                    h.write_mask(o[0], &c, &vals);
                    Ok(())
                }),
        );
    }
    t.push(
        new("viota.m", opv(munary, OPMVV) | (0b10000 << 15), 0xfc0f_f07f, Class::VMask)
            .ops(&[vd_def(lmul), vs2_use(VGroup::Mask), VM_OP])
            .rule(Rule::VdNotV0WhenMasked)
            .rule(Rule::VdNotSrc(1))
            .sem(move |h, _, o| {
                let c = h.vconf(d)?;
                let mut count = 0u64;
                let mut vals = vec![None; c.vl];
                for (i, slot) in vals.iter_mut().enumerate() {
                    if !h.active(o[2], i, &c) {
                        continue;
                    }
                    *slot = Some(count);
                    if h.mask_bit(o[1], i, &c) {
                        count += 1;
                    }
                }
                h.write_group(o[0], c.sew, &c, &vals);
                Ok(())
            }),
    );
    t.push(
        new("vid.v", opv(munary, OPMVV) | (0b10001 << 15), 0xfdff_f07f, Class::VAlu)
            .ops(&[vd_def(lmul), VM_OP])
            .rule(Rule::VdNotV0WhenMasked)
            // Unmasked, the same in both dialects (only funct6 differs).
            .same_in_both_dialects()
            .sem(move |h, _, o| {
                let c = h.vconf(d)?;
                let vals: Vec<Option<u64>> = (0..c.vl).map(|i| h.active(o[1], i, &c).then_some(i as u64)).collect();
                h.write_group(o[0], c.sew, &c, &vals);
                Ok(())
            }),
    );

    // Mask-register logical operations.
    let (andn, orn) = match d {
        VDialect::Thead => ("vmandnot.mm", "vmornot.mm"),
        VDialect::V1 => ("vmandn.mm", "vmorn.mm"),
    };
    let mlogic: [(&str, u32, fn(bool, bool) -> bool); 8] = [
        (andn, 0b011000, |a, b| a & !b),
        ("vmand.mm", 0b011001, |a, b| a & b),
        ("vmor.mm", 0b011010, |a, b| a | b),
        ("vmxor.mm", 0b011011, |a, b| a ^ b),
        (orn, 0b011100, |a, b| a | !b),
        ("vmnand.mm", 0b011101, |a, b| !(a & b)),
        ("vmnor.mm", 0b011110, |a, b| !(a | b)),
        ("vmxnor.mm", 0b011111, |a, b| !(a ^ b)),
    ];
    for (name, f6, f) in mlogic {
        t.push(
            new(name, opv(f6, OPMVV) | (1 << 25), 0xfe00_707f, Class::VMask)
                .ops(&[vd_def(VGroup::Mask), vs2_use(VGroup::Mask), vs1_use(VGroup::Mask)])
                .sem(move |h, _, o| {
                    let c = h.vconf(d)?;
                    let vals: Vec<Option<bool>> =
                        (0..c.vl).map(|i| Some(f(h.mask_bit(o[1], i, &c), h.mask_bit(o[2], i, &c)))).collect();
                    h.write_mask(o[0], &c, &vals);
                    Ok(())
                }),
        );
    }

    // Reductions: vd[0] = op(vs1[0], vs2[active...]).
    let reds: [(&str, u32, u32, bool, fn(u64, u64, u32) -> u64); 10] = [
        ("vredsum.vs", 0b000000, OPMVV, false, |a, b, _| a.wrapping_add(b)),
        ("vredand.vs", 0b000001, OPMVV, false, |a, b, _| a & b),
        ("vredor.vs", 0b000010, OPMVV, false, |a, b, _| a | b),
        ("vredxor.vs", 0b000011, OPMVV, false, |a, b, _| a ^ b),
        ("vredminu.vs", 0b000100, OPMVV, false, |a, b, _| a.min(b)),
        ("vredmin.vs", 0b000101, OPMVV, false, |a, b, w| if sext(a, w) < sext(b, w) { a } else { b }),
        ("vredmaxu.vs", 0b000110, OPMVV, false, |a, b, _| a.max(b)),
        ("vredmax.vs", 0b000111, OPMVV, false, |a, b, w| if sext(a, w) > sext(b, w) { a } else { b }),
        ("vwredsumu.vs", 0b110000, OPIVV, true, |a, b, _| a.wrapping_add(b)),
        ("vwredsum.vs", 0b110001, OPIVV, true, |a, b, _| a.wrapping_add(b)),
    ];
    for (name, f6, f3, widen, f) in reds {
        let signed_widen = name == "vwredsum.vs";
        let sg = VGroup::Scalar;
        t.push(
            new(name, opv(f6, f3), 0xfc00_707f, Class::VReduce)
                .ops(&[vd_def(sg), vs2_use(lmul), vs1_use(sg), VM_OP])
                .sem(move |h, _, o| {
                    let c = h.vconf(d)?;
                    if widen && c.sew == 64 {
                        return Err(Trap::Illegal("widening reduction at SEW=64".into()));
                    }
                    if c.vl == 0 {
                        return Ok(());
                    }
                    let wd = if widen { 2 * c.sew } else { c.sew };
                    let mut acc = h.velem(o[2], 0, wd);
                    for i in 0..c.vl {
                        if h.active(o[3], i, &c) {
                            let mut e = h.velem(o[1], i, c.sew);
                            if signed_widen {
                                e = sext(e, c.sew) as u64;
                            }
                            acc = trunc(f(acc, trunc(e, wd), wd), wd);
                        }
                    }
                    h.set_velem(o[0], 0, wd, acc);
                    if d == VDialect::Thead {
                        for i in 1..h.vlenb * 8 / wd as usize {
                            h.set_velem(o[0], i, wd, 0);
                        }
                    }
                    h.vstart = 0;
                    Ok(())
                }),
        );
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slide {
    Up,
    Down,
    Up1,
    Down1,
}

fn slide(h: &mut Hart, d: VDialect, kind: Slide, imm: bool, o: &[i64]) -> Result<(), Trap> {
    let c = h.vconf(d)?;
    h.vcheck(o[0], c.group_regs(), "destination")?;
    h.vcheck(o[1], c.group_regs(), "source")?;
    let (vd, vs2, vm) = (o[0], o[1], o[3]);
    let x = if imm { o[2] as u64 } else { h.x(o[2]) };
    let sew = c.sew;
    let mut vals = vec![None; c.vl];
    for (i, slot) in vals.iter_mut().enumerate() {
        if !h.active(vm, i, &c) {
            continue;
        }
        *slot = match kind {
            Slide::Up => (i as u64 >= x).then(|| h.velem(vs2, i - x as usize, sew)),
            Slide::Down => {
                // RVV 1.0: i + OFFSET without wrapping; XTheadVector (T-Head's QEMU) wraps.
                let j = match d {
                    VDialect::V1 => (i as u64).checked_add(x),
                    VDialect::Thead => Some((i as u64).wrapping_add(x)),
                };
                Some(match j {
                    Some(j) if j < c.vlmax as u64 => h.velem(vs2, j as usize, sew),
                    _ => 0,
                })
            }
            Slide::Up1 => Some(if i == 0 { trunc(x, sew) } else { h.velem(vs2, i - 1, sew) }),
            Slide::Down1 => Some(if i + 1 == c.vl { trunc(x, sew) } else { h.velem(vs2, i + 1, sew) }),
        };
    }
    h.write_group(vd, sew, &c, &vals);
    Ok(())
}

/// `ei` = 0: indices are SEW wide (or the scalar); 16: `vrgatherei16`.
fn gather(h: &mut Hart, d: VDialect, src: Src, ei: u32, o: &[i64]) -> Result<(), Trap> {
    let c = h.vconf(d)?;
    h.vcheck(o[0], c.group_regs(), "destination")?;
    h.vcheck(o[1], c.group_regs(), "source")?;
    let (vd, vs2, vm) = (o[0], o[1], o[3]);
    let sew = c.sew;
    let mut vals = vec![None; c.vl];
    for (i, slot) in vals.iter_mut().enumerate() {
        if !h.active(vm, i, &c) {
            continue;
        }
        let idx = match src {
            Src::V => h.velem(o[2], i, if ei == 0 { sew } else { ei }),
            Src::X => h.x(o[2]),
            Src::I => o[2] as u64,
        };
        *slot = Some(if idx < c.vlmax as u64 { h.velem(vs2, idx as usize, sew) } else { 0 });
    }
    h.write_group(vd, sew, &c, &vals);
    Ok(())
}

fn compress(h: &mut Hart, d: VDialect, o: &[i64]) -> Result<(), Trap> {
    let c = h.vconf(d)?;
    let (vd, vs2, vs1) = (o[0], o[1], o[2]);
    let mut out = Vec::new();
    for i in 0..c.vl {
        if h.mask_bit(vs1, i, &c) {
            out.push(Some(h.velem(vs2, i, c.sew)));
        }
    }
    // XTheadVector zeroes everything past the packed elements (T-Head's QEMU); RVV 1.0
    // leaves them (tail-agnostic, kept).
    if d == VDialect::Thead {
        out.resize(c.vl, Some(0));
    }
    h.write_group(vd, c.sew, &c, &out);
    Ok(())
}
