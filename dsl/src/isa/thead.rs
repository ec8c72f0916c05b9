//! T-Head scalar extensions (custom-0 opcode): XTheadBa, Bb, Bs, CondMov, Mac, MemIdx,
//! MemPair, Sync.

use super::build::*;
use super::hart::sext;
use super::*;
use crate::ext::Ext::*;

const F5_27: u32 = 27;
const TH_IMM5: Field = &[Seg { at: 20, len: 5, from: 0 }];
const TH_RD2: Field = RS2;

pub(super) fn rows(t: &mut Vec<RowDef>) {
    let c0 = OPC_CUSTOM0;
    let ba = ExtSet::one(XTheadBa);
    t.push(
        RowDef::new("th.addsl", (1 << 12) | c0, 0xf800_707f, ba)
            .ops(&[xd("rd", RD), xs("rs1", RS1), xs("rs2", RS2), immop("imm2", uimm(2), IMM2_25)])
            .arith(Arith::Add { a: 1, b: 2, shift: Shift::Imm(3) })
            .sem(|h, _, o| {
                h.set_x(o[0], h.x(o[1]).wrapping_add(h.x(o[2]) << o[3]));
                Ok(())
            }),
    );

    let bb = ExtSet::one(XTheadBb);
    t.push(sh6("th.srri", 0x04, 1, c0, bb).immop(|a, s| a.rotate_right(s as u32)));
    t.push(sh5("th.srriw", 0x0a, 1, c0, bb).result(Extend::Sign(32)).immop(|a, s| (a as u32).rotate_right(s as u32) as i32 as i64 as u64));
    for (mn, f3, signed) in [("th.ext", 2, true), ("th.extu", 3, false)] {
        t.push(
            RowDef::new(mn, (f3 << 12) | c0, 0x707f, bb)
                .ops(&[xd("rd", RD), xs("rs1", RS1), immop("msb", uimm(6), MSB6_26), immop("lsb", uimm(6), SH6)])
                .rule(Rule::Ge(2, 3))
                .result(if signed { Extend::SignFromImm(2) } else { Extend::ZeroAboveImm(2) })
                .sem(move |h, _, o| {
                    let (msb, lsb) = (o[2] as u32, o[3] as u32);
                    let width = msb - lsb + 1;
                    let v = h.x(o[1]) >> lsb;
                    let v = if signed { sext(v, width) as u64 } else { hart::trunc(v, width) };
                    h.set_x(o[0], v);
                    Ok(())
                }),
        );
    }
    t.push(r_unary("th.ff0", 0x42, 0, 1, c0, bb).result(Extend::Zero(7)).unop(|a| (!a).leading_zeros() as u64));
    t.push(r_unary("th.ff1", 0x43, 0, 1, c0, bb).result(Extend::Zero(7)).unop(|a| a.leading_zeros() as u64));
    t.push(r_unary("th.rev", 0x41, 0, 1, c0, bb).unop(|a| a.swap_bytes()));
    t.push(r_unary("th.revw", 0x48, 0, 1, c0, bb).result(Extend::Sign(32)).unop(|a| (a as u32).swap_bytes() as i32 as i64 as u64));
    t.push(r_unary("th.tstnbz", 0x40, 0, 1, c0, bb).unop(|a| {
        (0..8).fold(0, |acc, k| if (a >> (8 * k)) & 0xff == 0 { acc | (0xff << (8 * k)) } else { acc })
    }));

    t.push(sh6("th.tst", 0x22, 1, c0, ExtSet::one(XTheadBs)).result(Extend::Zero(1)).immop(|a, s| (a >> s) & 1));

    let cm = ExtSet::one(XTheadCondMov);
    for (mn, f7, on_zero) in [("th.mveqz", 0x20, true), ("th.mvnez", 0x21, false)] {
        t.push(
            RowDef::new(mn, (f7 << 25) | (1 << 12) | c0, 0xfe00_707f, cm)
                .ops(&[xud("rd", RD), xs("rs1", RS1), xs("rs2", RS2)])
                .sem(move |h, _, o| {
                    if (h.x(o[2]) == 0) == on_zero {
                        h.set_x(o[0], h.x(o[1]));
                    }
                    Ok(())
                }),
        );
    }

    let mac = ExtSet::one(XTheadMac);
    // (mnemonic, funct7, class, only the factors' low bits matter, semantics)
    let macs: [(&str, u32, Class, bool, fn(u64, u64, u64) -> u64); 6] = [
        ("th.mula", 0x10, Class::MulAcc, false, |d, a, b| d.wrapping_add(a.wrapping_mul(b))),
        ("th.muls", 0x11, Class::MulAcc, false, |d, a, b| d.wrapping_sub(a.wrapping_mul(b))),
        ("th.mulaw", 0x12, Class::MulAccW, true, |d, a, b| (d.wrapping_add(a.wrapping_mul(b)) as i32) as i64 as u64),
        ("th.mulsw", 0x13, Class::MulAccW, true, |d, a, b| (d.wrapping_sub(a.wrapping_mul(b)) as i32) as i64 as u64),
        ("th.mulah", 0x14, Class::MulAccW, true, |d, a, b| {
            (d as i32).wrapping_add((a as i16 as i32).wrapping_mul(b as i16 as i32)) as i64 as u64
        }),
        ("th.mulsh", 0x15, Class::MulAccW, true, |d, a, b| {
            (d as i32).wrapping_sub((a as i16 as i32).wrapping_mul(b as i16 as i32)) as i64 as u64
        }),
    ];
    for (mn, f7, class, narrow, f) in macs {
        t.push(
            RowDef::new(mn, (f7 << 25) | (1 << 12) | c0, 0xfe00_707f, mac)
                .ops(&[xud("rd", RD), xs("rs1", RS1), xs("rs2", RS2)])
                .class(class)
                .mul_acc(0, 1, 2, [true, true], narrow)
                .result(if narrow { Extend::Sign(32) } else { Extend::Unknown })
                .sem(move |h, _, o| {
                    let v = f(h.x(o[0]), h.x(o[1]), h.x(o[2]));
                    h.set_x(o[0], v);
                    Ok(())
                }),
        );
    }

    memidx(t);
    mempair(t);

    let sync = ExtSet::one(XTheadSync);
    t.push(
        RowDef::new("th.sfence.vmas", 0x0400_000b, 0xfe00_7fff, sync)
            .ops(&[xs("rs1", RS1), xs("rs2", RS2)])
            .class(Class::Fence)
            .sem(|_, _, _| Err(Trap::Illegal("th.sfence.vmas is privileged".into()))),
    );
    for (mn, bits) in [("th.sync", 0x0180_000b), ("th.sync.i", 0x01a0_000b), ("th.sync.is", 0x01b0_000b), ("th.sync.s", 0x0190_000b)] {
        t.push(RowDef::new(mn, bits, 0xffff_ffff, sync).class(Class::Fence).sem(|_, _, _| Ok(())));
    }
}

/// What a load of `bytes` leaves in the upper bits of its destination.
fn load_ext(bytes: u8, zext: bool) -> Extend {
    match (bytes, zext) {
        (8, _) => Extend::Unknown,
        (n, true) => Extend::Zero(8 * n),
        (n, false) => Extend::Sign(8 * n),
    }
}

/// Load widths: (letter, bytes, signed, f5 size code bits 31:29 of the load/store group).
const WIDTHS: [(&str, u8, u32); 4] = [("b", 1, 0), ("h", 2, 1), ("w", 4, 2), ("d", 8, 3)];

fn memidx(t: &mut Vec<RowDef>) {
    let mi = ExtSet::one(XTheadMemIdx);
    let c0 = OPC_CUSTOM0;
    // Register-indexed: th.lr<w>[u] / th.lur<w>[u] / th.sr<w> / th.sur<w>: rd, rs1, rs2, imm2.
    // Bits 31:27 = size(2) | unsigned(1)... laid out as: [31] zext-load, [30:29] size, [28] .u index.
    for (w, bytes, size) in WIDTHS {
        for uidx in [false, true] {
            let u = if uidx { "u" } else { "" };
            let variants: Vec<(bool, bool)> = if bytes == 8 { vec![(false, false)] } else { vec![(false, false), (true, false)] };
            for (zext, _) in variants {
                let mn = leak(format!("th.l{u}r{w}{}", if zext { "u" } else { "" }));
                let f5 = ((zext as u32) << 4) | (size << 2) | ((uidx as u32) << 1);
                t.push(
                    RowDef::new(mn, (f5 << F5_27) | (4 << 12) | c0, 0xf800_707f, mi)
                        .ops(&[xd("rd", RD), xs("rs1", RS1), xs("rs2", RS2), immop("imm2", uimm(2), IMM2_25)])
                        .class(Class::Load)
                        .mem(Dir::Load, bytes, Addr::BaseIdx { base: 1, index: 2, shift: 3, zext: uidx })
                        .result(load_ext(bytes, zext))
                        .sem(move |h, b, o| {
                            let idx = if uidx { h.x(o[2]) as u32 as u64 } else { h.x(o[2]) };
                            let v = b.load(h.x(o[1]).wrapping_add(idx << o[3]), bytes)?;
                            h.set_x(o[0], if zext { v } else { sext(v, 8 * bytes as u32) as u64 });
                            Ok(())
                        }),
                );
            }
            let mn = leak(format!("th.s{u}r{w}"));
            let f5 = (size << 2) | ((uidx as u32) << 1);
            t.push(
                RowDef::new(mn, (f5 << F5_27) | (5 << 12) | c0, 0xf800_707f, mi)
                    .ops(&[xs("rd", RD), xs("rs1", RS1), xs("rs2", RS2), immop("imm2", uimm(2), IMM2_25)])
                    .class(Class::Store)
                    .mem(Dir::Store, bytes, Addr::BaseIdx { base: 1, index: 2, shift: 3, zext: uidx })
                    .sem(move |h, b, o| {
                        let idx = if uidx { h.x(o[2]) as u32 as u64 } else { h.x(o[2]) };
                        b.store(h.x(o[1]).wrapping_add(idx << o[3]), bytes, h.x(o[0]))
                    }),
            );
        }
    }
    // Increment-address: th.l<w>[u]i{a,b} rd, (rs1), imm5, imm2 and th.s<w>i{a,b}.
    for (w, bytes, size) in WIDTHS {
        for before in [false, true] {
            let ab = if before { "b" } else { "a" };
            let zexts: &[bool] = if bytes == 8 { &[false] } else { &[false, true] };
            for &zext in zexts {
                let mn = leak(format!("th.l{w}{}i{ab}", if zext { "u" } else { "" }));
                let f5 = ((zext as u32) << 4) | (size << 2) | ((!before as u32) << 1) | 1;
                t.push(
                    RowDef::new(mn, (f5 << F5_27) | (4 << 12) | c0, 0xf800_707f, mi)
                        .ops(&[
                            xd("rd", RD),
                            op("rs1", Role::UseDef, Kind::XMem, RS1),
                            immop("imm5", simm(5), TH_IMM5),
                            immop("imm2", uimm(2), IMM2_25),
                        ])
                        .rule(Rule::Differ(0, 1))
                        .class(Class::Load)
                        .mem(Dir::Load, bytes, Addr::Incr { base: 1, off: 2, shift: 3, before })
                        .result(load_ext(bytes, zext))
                        .sem(move |h, b, o| {
                            let step = (o[2] << o[3]) as u64;
                            let base = h.x(o[1]);
                            let addr = if before { base.wrapping_add(step) } else { base };
                            let v = b.load(addr, bytes)?;
                            h.set_x(o[1], base.wrapping_add(step));
                            h.set_x(o[0], if zext { v } else { sext(v, 8 * bytes as u32) as u64 });
                            Ok(())
                        }),
                );
            }
            let mn = leak(format!("th.s{w}i{ab}"));
            let f5 = (size << 2) | ((!before as u32) << 1) | 1;
            t.push(
                RowDef::new(mn, (f5 << F5_27) | (5 << 12) | c0, 0xf800_707f, mi)
                    .ops(&[
                        xs("rd", RD),
                        op("rs1", Role::UseDef, Kind::XMem, RS1),
                        immop("imm5", simm(5), TH_IMM5),
                        immop("imm2", uimm(2), IMM2_25),
                    ])
                    .class(Class::Store)
                    .mem(Dir::Store, bytes, Addr::Incr { base: 1, off: 2, shift: 3, before })
                    .sem(move |h, b, o| {
                        let step = (o[2] << o[3]) as u64;
                        let base = h.x(o[1]);
                        let addr = if before { base.wrapping_add(step) } else { base };
                        b.store(addr, bytes, h.x(o[0]))?;
                        h.set_x(o[1], base.wrapping_add(step));
                        Ok(())
                    }),
            );
        }
    }
}

fn mempair(t: &mut Vec<RowDef>) {
    let mp = ExtSet::one(XTheadMemPair);
    let c0 = OPC_CUSTOM0;
    // (mnemonic, f5, load?, bytes, zext)
    for (mn, f5, load, bytes, zext) in [
        ("th.lwd", 0x1c, true, 4u8, false),
        ("th.lwud", 0x1e, true, 4, true),
        ("th.ldd", 0x1f, true, 8, false),
        ("th.swd", 0x1c, false, 4, false),
        ("th.sdd", 0x1f, false, 8, false),
    ] {
        let shift = if bytes == 8 { 4 } else { 3 };
        let f3 = if load { 4 } else { 5 };
        let role = if load { Role::Def } else { Role::Use };
        let mut d = RowDef::new(mn, (f5 << F5_27) | (f3 << 12) | c0, 0xf800_707f, mp)
            .ops(&[
                op("rd1", role, Kind::X, RD),
                op("rd2", role, Kind::X, TH_RD2),
                base(RS1),
                immop("imm2", uimm(2), IMM2_25),
                op("shift", Role::Use, Kind::Lit(shift), NONE),
            ])
            .class(if load { Class::Load } else { Class::Store })
            .mem(if load { Dir::Load } else { Dir::Store }, bytes, Addr::Pair { base: 2, off: 3, shift: 4 });
        if load {
            d = d.rule(Rule::Differ(0, 1)).rule(Rule::Differ(0, 2)).rule(Rule::Differ(1, 2)).result(load_ext(bytes, zext));
        }
        t.push(d.sem(move |h, b, o| {
            let addr = h.x(o[2]).wrapping_add((o[3] as u64) << shift);
            if load {
                let v1 = b.load(addr, bytes)?;
                let v2 = b.load(addr.wrapping_add(bytes as u64), bytes)?;
                let ext = |v: u64| if zext || bytes == 8 { v } else { sext(v, 32) as u64 };
                h.set_x(o[0], ext(v1));
                h.set_x(o[1], ext(v2));
                Ok(())
            } else {
                b.store(addr, bytes, h.x(o[0]))?;
                b.store(addr.wrapping_add(bytes as u64), bytes, h.x(o[1]))
            }
        }));
    }
}
