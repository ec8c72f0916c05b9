//! RVV 1.0 bit-manipulation and vector-crypto rows: Zvkb (⊂ Zvbb), Zvbb, Zvbc, Zvkg.

use super::*;
use crate::isa::scalar::clmul128;

const IMM6_VROR: Field = &[Seg { at: 15, len: 5, from: 0 }, Seg { at: 26, len: 1, from: 5 }];

fn std_shape(src: Src) -> Shape {
    Shape { dst: W::Sew, a: W::Sew, src, darg: DArg::None, vd: 0, vs2: 1, b: 2, vm: Some(3), no_a: false, imm_zext: false }
}

fn rev_bits_in_bytes(v: u64) -> u64 {
    let mut r = 0;
    for k in 0..8 {
        r |= (((v >> (8 * k)) as u8).reverse_bits() as u64) << (8 * k);
    }
    r
}

pub(super) fn rows(t: &mut Vec<RowDef>) {
    let d = VDialect::V1;
    let zvkb = ExtSet::of(&[Ext::Zvkb, Ext::Zvbb]);
    let zvbb = ExtSet::one(Ext::Zvbb);
    let lmul = VGroup::Lmul;
    let bin = |name: &'static str, f6: u32, src: Src, ext: ExtSet, class: Class, f: EFn| {
        let (f3, b) = match src {
            Src::V => (0, vreg("vs1", Role::Use, lmul, VS1)),
            Src::X => (4, xs("rs1", RS1)),
            Src::I => (3, immop("imm", uimm(5), SIMM5)),
        };
        let shape = std_shape(src);
        RowDef::new(name, (f6 << 26) | (f3 << 12) | OPC_OP_V, 0xfc00_707f, ext)
            .ops(&[vreg("vd", Role::Def, lmul, VD), vreg("vs2", Role::Use, lmul, VS2), b, VM_OP])
            .class(class)
            .vector(d)
            .rule(Rule::VdNotV0WhenMasked)
            .sem(move |h, _, o| exec_elementwise(h, d, &shape, f, o))
    };
    t.push(bin("vandn.vv", 0b000001, Src::V, zvkb, Class::VAlu, |a, b, _, _| a & !b));
    t.push(bin("vandn.vx", 0b000001, Src::X, zvkb, Class::VAlu, |a, b, _, _| a & !b));
    let rol: EFn = |a, b, _, c| {
        let s = (b as u32) & (c.sew - 1);
        trunc((a << s) | if s == 0 { 0 } else { a >> (c.sew - s) }, c.sew)
    };
    let ror: EFn = |a, b, _, c| {
        let s = (b as u32) & (c.sew - 1);
        trunc((a >> s) | if s == 0 { 0 } else { a << (c.sew - s) }, c.sew)
    };
    t.push(bin("vrol.vv", 0b010101, Src::V, zvkb, Class::VAlu, rol));
    t.push(bin("vrol.vx", 0b010101, Src::X, zvkb, Class::VAlu, rol));
    t.push(bin("vror.vv", 0b010100, Src::V, zvkb, Class::VAlu, ror));
    t.push(bin("vror.vx", 0b010100, Src::X, zvkb, Class::VAlu, ror));
    let shape_i = std_shape(Src::I);
    t.push(
        RowDef::new("vror.vi", (0b010100 << 26) | (3 << 12) | OPC_OP_V, 0xf800_707f, zvkb)
            .ops(&[
                vreg("vd", Role::Def, lmul, VD),
                vreg("vs2", Role::Use, lmul, VS2),
                immop("imm", uimm(6), IMM6_VROR),
                VM_OP,
            ])
            .class(Class::VAlu)
            .vector(d)
            .rule(Rule::VdNotV0WhenMasked)
            .sem(move |h, _, o| exec_elementwise(h, d, &shape_i, ror, o)),
    );
    let wsll: EFn = |a, b, _, c| a << ((b as u32) & (c.wd - 1));
    for (name, src) in [("vwsll.vv", Src::V), ("vwsll.vx", Src::X), ("vwsll.vi", Src::I)] {
        let mut r = bin(name, 0b110101, src, zvbb, Class::VWiden, wsll).rule(Rule::VdNotSrc(1));
        if src == Src::V {
            r = r.rule(Rule::VdNotSrc(2));
        }
        let shape = Shape { dst: W::Wide, ..std_shape(src) };
        r.ops[0] = vreg("vd", Role::Def, VGroup::Wide, VD);
        t.push(r.sem(move |h, _, o| exec_elementwise(h, d, &shape, wsll, o)));
    }

    // Unary element ops (VXUNARY0 of OPMVV, funct6 010010).
    let unary: [(&str, u32, ExtSet, fn(u64, u32) -> u64); 6] = [
        ("vbrev8.v", 0b01000, zvkb, |a, _| rev_bits_in_bytes(a)),
        ("vrev8.v", 0b01001, zvkb, |a, w| a.swap_bytes() >> (64 - w)),
        ("vbrev.v", 0b01010, zvbb, |a, w| a.reverse_bits() >> (64 - w)),
        ("vclz.v", 0b01100, zvbb, |a, w| (a.leading_zeros() - (64 - w)) as u64),
        ("vctz.v", 0b01101, zvbb, |a, w| a.trailing_zeros().min(w) as u64),
        ("vcpop.v", 0b01110, zvbb, |a, _| a.count_ones() as u64),
    ];
    for (name, vs1, ext, f) in unary {
        t.push(
            RowDef::new(name, (0b010010 << 26) | (vs1 << 15) | (2 << 12) | OPC_OP_V, 0xfc0f_f07f, ext)
                .ops(&[vreg("vd", Role::Def, lmul, VD), vreg("vs2", Role::Use, lmul, VS2), VM_OP])
                .class(Class::VAlu)
                .vector(d)
                .rule(Rule::VdNotV0WhenMasked)
                .sem(move |h, _, o| {
                    let c = h.vconf(d)?;
                    let vals: Vec<Option<u64>> =
                        (0..c.vl).map(|i| h.active(o[2], i, &c).then(|| f(h.velem(o[1], i, c.sew), c.sew))).collect();
                    h.write_group(o[0], c.sew, &c, &vals);
                    Ok(())
                }),
        );
    }

    // Zvbc: carry-less multiply, SEW = 64 only.
    let zvbc = ExtSet::one(Ext::Zvbc);
    let clmul_lo: EFn = |a, b, _, _| clmul128(a, b).0;
    let clmul_hi: EFn = |a, b, _, _| clmul128(a, b).1;
    for (name, f6, src, f) in [
        ("vclmul.vv", 0b001100, Src::V, clmul_lo),
        ("vclmul.vx", 0b001100, Src::X, clmul_lo),
        ("vclmulh.vv", 0b001101, Src::V, clmul_hi),
        ("vclmulh.vx", 0b001101, Src::X, clmul_hi),
    ] {
        let f3 = if src == Src::V { 2 } else { 6 };
        let b = if src == Src::V { vreg("vs1", Role::Use, lmul, VS1) } else { xs("rs1", RS1) };
        let shape = std_shape(src);
        t.push(
            RowDef::new(name, (f6 << 26) | (f3 << 12) | OPC_OP_V, 0xfc00_707f, zvbc)
                .ops(&[vreg("vd", Role::Def, lmul, VD), vreg("vs2", Role::Use, lmul, VS2), b, VM_OP])
                .class(Class::VCrypto)
                .vector(d)
                .rule(Rule::VdNotV0WhenMasked)
                .sem(move |h, _, o| {
                    if h.vconf(d)?.sew != 64 {
                        return Err(Trap::Illegal("Zvbc needs SEW=64".into()));
                    }
                    exec_elementwise(h, d, &shape, f, o)
                }),
        );
    }

    // Zvkg: GHASH, element groups of 4 x e32.
    let zvkg = ExtSet::one(Ext::Zvkg);
    let eg = VGroup::EltGroup;
    t.push(
        RowDef::new("vghsh.vv", 0xb200_2000 | OPC_OP_P, 0xfe00_707f, zvkg)
            .ops(&[vreg("vd", Role::UseDef, eg, VD), vreg("vs2", Role::Use, eg, VS2), vreg("vs1", Role::Use, eg, VS1)])
            .class(Class::VCrypto)
            .vector(d)
            .sem(move |h, _, o| ghash_groups(h, o[0], o[1], Some(o[2]))),
    );
    t.push(
        RowDef::new("vgmul.vv", 0xa208_a000 | OPC_OP_P, 0xfe0f_f07f, zvkg)
            .ops(&[vreg("vd", Role::UseDef, eg, VD), vreg("vs2", Role::Use, eg, VS2)])
            .class(Class::VCrypto)
            .vector(d)
            .sem(move |h, _, o| ghash_groups(h, o[0], o[1], None)),
    );
}

fn group128(h: &Hart, reg: i64, g: usize) -> u128 {
    let off = reg as usize * h.vlenb + g * 16;
    u128::from_le_bytes(h.v[off..off + 16].try_into().unwrap())
}

fn brev8_128(v: u128) -> u128 {
    let mut b = v.to_le_bytes();
    for x in &mut b {
        *x = x.reverse_bits();
    }
    u128::from_le_bytes(b)
}

/// Multiplies in GF(2^128) as Zvkg defines it (bits reflected within bytes).
pub(crate) fn gf128_mul_zvkg(s: u128, h0: u128) -> u128 {
    let s = brev8_128(s);
    let mut h = brev8_128(h0);
    let mut z = 0u128;
    for bit in 0..128 {
        if (s >> bit) & 1 != 0 {
            z ^= h;
        }
        let reduce = h >> 127 != 0;
        h <<= 1;
        if reduce {
            h ^= 0x87;
        }
    }
    brev8_128(z)
}

fn ghash_groups(h: &mut Hart, vd: i64, vs2: i64, vs1: Option<i64>) -> Result<(), Trap> {
    let c = h.vconf(VDialect::V1)?;
    if c.sew != 32 || c.vl % 4 != 0 {
        return Err(Trap::Illegal("Zvkg needs SEW=32 and vl a multiple of 4".into()));
    }
    for g in h.vstart as usize / 4..c.vl / 4 {
        let y = group128(h, vd, g);
        let x = vs1.map(|r| group128(h, r, g)).unwrap_or(0);
        let hh = group128(h, vs2, g);
        let r = gf128_mul_zvkg(y ^ x, hh);
        let off = vd as usize * h.vlenb + g * 16;
        h.v[off..off + 16].copy_from_slice(&r.to_le_bytes());
    }
    h.vstart = 0;
    Ok(())
}
