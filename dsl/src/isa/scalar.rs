//! RV64I, M, Zicsr, Zifencei, Zba, Zbb, Zbc, Zbkb, Zbkc, Zbs, Zicond.

use super::build::*;
use super::go;
use super::hart::{csr, sext};
use super::*;
use crate::ext::Ext::*;

const fn one(e: Ext) -> ExtSet {
    ExtSet::one(e)
}

fn sx32(v: u64) -> u64 {
    v as u32 as i32 as i64 as u64
}

/// Carry-less multiply: (low, high) halves of the 128-bit product.
pub(crate) fn clmul128(a: u64, b: u64) -> (u64, u64) {
    let (mut lo, mut hi) = (0u64, 0u64);
    for k in 0..64 {
        if (b >> k) & 1 != 0 {
            lo ^= a << k;
            if k != 0 {
                hi ^= a >> (64 - k);
            }
        }
    }
    (lo, hi)
}

pub(super) fn rows(t: &mut Vec<RowDef>) {
    rv64i(t);
    m(t);
    zicsr(t);
    bitmanip(t);
}

fn rv64i(t: &mut Vec<RowDef>) {
    let i_ = one(I);
    let u = |mn, opc| RowDef::new(mn, opc, 0x7f, i_).ops(&[xd("rd", RD), immop("imm", uimm(20), U20)]);
    t.push(u("lui", OPC_LUI).go(go::upper("LUI")).result(Extend::Upper(1)).sem(|h, _, o| {
        h.set_x(o[0], sx32((o[1] as u64) << 12));
        Ok(())
    }));
    t.push(u("auipc", OPC_AUIPC).go(go::upper("AUIPC")).arith(Arith::PcRel { imm: 1 }).sem(|h, _, o| {
        h.set_x(o[0], h.pc.wrapping_add(sx32((o[1] as u64) << 12)));
        Ok(())
    }));
    t.push(
        RowDef::new("jal", OPC_JAL, 0x7f, i_)
            .ops(&[xd("rd", RD), op("target", Role::Use, Kind::Rel(imm(-(1 << 20), (1 << 20) - 2, 2)), J21)])
            .class(Class::Jal)
            .flow(Flow::Jal { link: 0, target: 1 })
            .go(go::with(go::JAL, const { &[(0, 0, go::JMP)] }))
            .sem(|h, _, o| {
                h.set_x(o[0], h.pc.wrapping_add(4));
                h.jump_rel(o[1]);
                Ok(())
            }),
    );
    t.push(
        RowDef::new("jalr", OPC_JALR, 0x707f, i_)
            .ops(&[xd("rd", RD), op("imm", Role::Use, Kind::MemOff(simm(12)), I12), base(RS1)])
            .class(Class::Jalr)
            .flow(Flow::Jalr { link: 0, base: 2, off: 1 })
            .go(go::JALR)
            .sem(|h, _, o| {
                let target = h.x(o[2]).wrapping_add(o[1] as u64) & !1;
                h.set_x(o[0], h.pc.wrapping_add(4));
                h.next_pc = target;
                Ok(())
            }),
    );
    // Go: `beq rs, zero` is BEQZ rs, `blt zero, rs` is BGTZ rs, and so on.
    const BEQZ: &[(u8, i64, go::GoForm)] = &[(1, 0, go::vs_zero("BEQZ"))];
    const BNEZ: &[(u8, i64, go::GoForm)] = &[(1, 0, go::vs_zero("BNEZ"))];
    const BLTZ: &[(u8, i64, go::GoForm)] = &[(1, 0, go::vs_zero("BLTZ")), (0, 0, go::zero_vs("BGTZ"))];
    const BGEZ: &[(u8, i64, go::GoForm)] = &[(1, 0, go::vs_zero("BGEZ")), (0, 0, go::zero_vs("BLEZ"))];
    let branches: [(&str, u32, Cond, &str, fn(u64, u64) -> bool, go::GoAsm); 6] = [
        ("beq", 0, Cond::Eq, "bne", |a, b| a == b, go::branch("BEQ", BEQZ)),
        ("bne", 1, Cond::Ne, "beq", |a, b| a != b, go::branch("BNE", BNEZ)),
        ("blt", 4, Cond::Lt, "bge", |a, b| (a as i64) < (b as i64), go::branch("BLT", BLTZ)),
        ("bge", 5, Cond::Ge, "blt", |a, b| (a as i64) >= (b as i64), go::branch("BGE", BGEZ)),
        ("bltu", 6, Cond::Ltu, "bgeu", |a, b| a < b, go::branch("BLTU", &[])),
        ("bgeu", 7, Cond::Geu, "bltu", |a, b| a >= b, go::branch("BGEU", &[])),
    ];
    for (mn, f3, c, inverse, cond, g) in branches {
        t.push(
            RowDef::new(mn, (f3 << 12) | OPC_BRANCH, 0x707f, i_)
                .ops(&[xs("rs1", RS1), xs("rs2", RS2), op("target", Role::Use, Kind::Rel(imm(-4096, 4094, 2)), B13)])
                .class(Class::Branch)
                .flow(Flow::Branch { target: 2, cond: c, inverse })
                .go(g)
                .sem(move |h, _, o| {
                    if cond(h.x(o[0]), h.x(o[1])) {
                        h.jump_rel(o[2]);
                    }
                    Ok(())
                }),
        );
    }
    for (mn, f3, bytes, signed, g) in [
        ("lb", 0, 1, true, "MOVB"),
        ("lh", 1, 2, true, "MOVH"),
        ("lw", 2, 4, true, "MOVW"),
        ("ld", 3, 8, true, "MOV"),
        ("lbu", 4, 1, false, "MOVBU"),
        ("lhu", 5, 2, false, "MOVHU"),
        ("lwu", 6, 4, false, "MOVWU"),
    ] {
        t.push(
            RowDef::new(mn, (f3 << 12) | OPC_LOAD, 0x707f, i_)
                .ops(&[xd("rd", RD), op("imm", Role::Use, Kind::MemOff(simm(12)), I12), base(RS1)])
                .class(Class::Load)
                .mem(Dir::Load, bytes, Addr::BaseOff { base: 2, off: 1 })
                .go(go::load(g))
                .result(match (bytes, signed) {
                    (8, _) => Extend::Unknown,
                    (n, true) => Extend::Sign(8 * n),
                    (n, false) => Extend::Zero(8 * n),
                })
                .sem(move |h, b, o| {
                    let v = b.load(h.x(o[2]).wrapping_add(o[1] as u64), bytes)?;
                    h.set_x(o[0], if signed { sext(v, 8 * bytes as u32) as u64 } else { v });
                    Ok(())
                }),
        );
    }
    for (mn, f3, bytes, g) in [("sb", 0, 1, "MOVB"), ("sh", 1, 2, "MOVH"), ("sw", 2, 4, "MOVW"), ("sd", 3, 8, "MOV")] {
        t.push(
            RowDef::new(mn, (f3 << 12) | OPC_STORE, 0x707f, i_)
                .ops(&[xs("rs2", RS2), op("imm", Role::Use, Kind::MemOff(simm(12)), S12), base(RS1)])
                .class(Class::Store)
                .mem(Dir::Store, bytes, Addr::BaseOff { base: 2, off: 1 })
                .go(go::store(g))
                .sem(move |h, b, o| b.store(h.x(o[2]).wrapping_add(o[1] as u64), bytes, h.x(o[0]))),
        );
    }
    t.push(i("addi", 0, OPC_OP_IMM, i_).go(go::with(go::i("ADD"), const { &[(1, 0, go::MOV_IMM), (2, 0, go::unary_form("MOV"))] })).arith(Arith::AddImm { src: 1, imm: 2 }).immop(|a, b| a.wrapping_add(b as u64)));
    t.push(i("slti", 2, OPC_OP_IMM, i_).go(go::i3("SLT")).result(Extend::Zero(1)).immop(|a, b| ((a as i64) < b) as u64));
    t.push(i("sltiu", 3, OPC_OP_IMM, i_).go(go::with(go::i3("SLTU"), const { &[(2, 1, go::unary_form("SEQZ"))] })).result(Extend::Zero(1)).immop(|a, b| (a < b as u64) as u64));
    t.push(i("xori", 4, OPC_OP_IMM, i_).go(go::with(go::i("XOR"), const { &[(2, -1, go::unary_form("NOT"))] })).result(Extend::Or(1, 2)).immop(|a, b| a ^ b as u64));
    t.push(i("ori", 6, OPC_OP_IMM, i_).go(go::i("OR")).result(Extend::Or(1, 2)).immop(|a, b| a | b as u64));
    t.push(i("andi", 7, OPC_OP_IMM, i_).go(go::i("AND")).result(Extend::And(1, 2)).immop(|a, b| a & b as u64));
    t.push(sh6("slli", 0, 1, OPC_OP_IMM, i_).go(go::i("SLL")).arith(Arith::ShlImm { src: 1, sh: 2 }).immop(|a, s| a << s));
    t.push(sh6("srli", 0, 5, OPC_OP_IMM, i_).go(go::i("SRL")).result(Extend::ShiftRightImm { src: 1, sh: 2 }).immop(|a, s| a >> s));
    t.push(sh6("srai", 0x10, 5, OPC_OP_IMM, i_).go(go::i("SRA")).immop(|a, s| ((a as i64) >> s) as u64));
    t.push(r("add", 0, 0, OPC_OP, i_).go(go::r("ADD")).arith(Arith::Add { a: 1, b: 2, shift: Shift::By(0) }).binop(|a, b| a.wrapping_add(b)));
    t.push(r("sub", 0x20, 0, OPC_OP, i_).go(go::with(go::r("SUB"), const { &[(1, 0, go::of_rs2("NEG"))] })).arith(Arith::Sub { a: 1, b: 2 }).binop(|a, b| a.wrapping_sub(b)));
    t.push(r("sll", 0, 1, OPC_OP, i_).go(go::r("SLL")).binop(|a, b| a << (b & 63)));
    t.push(r("slt", 0, 2, OPC_OP, i_).go(go::r3("SLT")).result(Extend::Zero(1)).binop(|a, b| ((a as i64) < (b as i64)) as u64));
    t.push(r("sltu", 0, 3, OPC_OP, i_).go(go::with(go::r3("SLTU"), const { &[(1, 0, go::of_rs2("SNEZ"))] })).result(Extend::Zero(1)).binop(|a, b| (a < b) as u64));
    t.push(r("xor", 0, 4, OPC_OP, i_).go(go::r("XOR")).result(Extend::Or(1, 2)).binop(|a, b| a ^ b));
    t.push(r("srl", 0, 5, OPC_OP, i_).go(go::r("SRL")).result(Extend::ShiftRight { src: 1 }).binop(|a, b| a >> (b & 63)));
    t.push(r("sra", 0x20, 5, OPC_OP, i_).go(go::r("SRA")).binop(|a, b| ((a as i64) >> (b & 63)) as u64));
    t.push(r("or", 0, 6, OPC_OP, i_).go(go::r("OR")).result(Extend::Or(1, 2)).binop(|a, b| a | b));
    t.push(r("and", 0, 7, OPC_OP, i_).go(go::r("AND")).result(Extend::And(1, 2)).binop(|a, b| a & b));
    t.push(i("addiw", 0, OPC_OP_IMM_32, i_).go(go::with(go::i("ADDW"), const { &[(2, 0, go::unary_form("MOVW"))] })).immop(|a, b| sx32(a.wrapping_add(b as u64))));
    t.push(sh5("slliw", 0, 1, OPC_OP_IMM_32, i_).go(go::i("SLLW")).immop(|a, s| sx32(a << s)));
    t.push(sh5("srliw", 0, 5, OPC_OP_IMM_32, i_).go(go::i("SRLW")).immop(|a, s| sx32((a as u32 >> s) as u64)));
    t.push(sh5("sraiw", 0x20, 5, OPC_OP_IMM_32, i_).go(go::i("SRAW")).immop(|a, s| ((a as i32) >> s) as i64 as u64));
    t.push(r("addw", 0, 0, OPC_OP_32, i_).go(go::r("ADDW")).binop(|a, b| sx32(a.wrapping_add(b))));
    t.push(r("subw", 0x20, 0, OPC_OP_32, i_).go(go::with(go::r("SUBW"), const { &[(1, 0, go::of_rs2("NEGW"))] })).binop(|a, b| sx32(a.wrapping_sub(b))));
    t.push(r("sllw", 0, 1, OPC_OP_32, i_).go(go::r("SLLW")).binop(|a, b| sx32(a << (b & 31))));
    t.push(r("srlw", 0, 5, OPC_OP_32, i_).go(go::r("SRLW")).binop(|a, b| sx32((a as u32 >> (b & 31)) as u64)));
    t.push(r("sraw", 0x20, 5, OPC_OP_32, i_).go(go::r("SRAW")).binop(|a, b| ((a as i32) >> (b & 31)) as i64 as u64));
    t.push(
        RowDef::new("fence", OPC_MISC_MEM, 0xf00f_ffff, i_)
            .ops(&[op("pred", Role::Use, Kind::FenceSet, PRED), op("succ", Role::Use, Kind::FenceSet, SUCC)])
            .class(Class::Fence)
            .sem(|_, _, _| Ok(())),
    );
    t.push(RowDef::new("fence.tso", 0x8330_000f, 0xffff_ffff, i_).class(Class::Fence).sem(|_, _, _| Ok(())));
    t.push(RowDef::new("ecall", 0x0000_0073, 0xffff_ffff, i_).class(Class::System).go(go::bare("ECALL")).sem(|_, _, _| Err(Trap::Ecall)));
    t.push(RowDef::new("ebreak", 0x0010_0073, 0xffff_ffff, i_).class(Class::System).go(go::bare("EBREAK")).sem(|_, _, _| Err(Trap::Ebreak)));
    t.push(RowDef::new("fence.i", 0x0000_100f, 0xffff_ffff, one(Zifencei)).class(Class::Fence).sem(|_, _, _| Ok(())));
}

fn m(t: &mut Vec<RowDef>) {
    let m_ = one(M);
    t.push(r("mul", 1, 0, OPC_OP, m_).go(go::r("MUL")).class(Class::Mul).mul(1, 2, [true, true], false).binop(|a, b| a.wrapping_mul(b)));
    t.push(r("mulh", 1, 1, OPC_OP, m_).go(go::r("MULH")).class(Class::Mul).mul(1, 2, [true, true], false).binop(|a, b| ((a as i64 as i128 * b as i64 as i128) >> 64) as u64));
    t.push(r("mulhsu", 1, 2, OPC_OP, m_).go(go::r("MULHSU")).class(Class::Mul).mul(1, 2, [true, false], false).binop(|a, b| ((a as i64 as i128 * b as i128) >> 64) as u64));
    t.push(r("mulhu", 1, 3, OPC_OP, m_).go(go::r("MULHU")).class(Class::Mul).mul(1, 2, [false, false], false).binop(|a, b| ((a as u128 * b as u128) >> 64) as u64));
    t.push(r("div", 1, 4, OPC_OP, m_).go(go::r("DIV")).class(Class::Div).div(1, 2, true).binop(|a, b| {
        let (a, b) = (a as i64, b as i64);
        if b == 0 { u64::MAX } else { a.wrapping_div(b) as u64 }
    }));
    t.push(r("divu", 1, 5, OPC_OP, m_).go(go::r("DIVU")).class(Class::Div).div(1, 2, false).binop(|a, b| a.checked_div(b).unwrap_or(u64::MAX)));
    t.push(r("rem", 1, 6, OPC_OP, m_).go(go::r("REM")).class(Class::Div).div(1, 2, true).binop(|a, b| {
        let (a, b) = (a as i64, b as i64);
        if b == 0 { a as u64 } else { a.wrapping_rem(b) as u64 }
    }));
    t.push(r("remu", 1, 7, OPC_OP, m_).go(go::r("REMU")).class(Class::Div).div(1, 2, false).binop(|a, b| if b == 0 { a } else { a % b }));
    t.push(r("mulw", 1, 0, OPC_OP_32, m_).go(go::r("MULW")).class(Class::MulW).mul(1, 2, [true, true], true).binop(|a, b| sx32(a.wrapping_mul(b))));
    t.push(r("divw", 1, 4, OPC_OP_32, m_).go(go::r("DIVW")).class(Class::DivW).div(1, 2, true).binop(|a, b| {
        let (a, b) = (a as i32, b as i32);
        (if b == 0 { -1 } else { a.wrapping_div(b) }) as i64 as u64
    }));
    t.push(r("divuw", 1, 5, OPC_OP_32, m_).go(go::r("DIVUW")).class(Class::DivW).div(1, 2, false).binop(|a, b| {
        let (a, b) = (a as u32, b as u32);
        a.checked_div(b).unwrap_or(u32::MAX) as i32 as i64 as u64
    }));
    t.push(r("remw", 1, 6, OPC_OP_32, m_).go(go::r("REMW")).class(Class::DivW).div(1, 2, true).binop(|a, b| {
        let (a, b) = (a as i32, b as i32);
        (if b == 0 { a } else { a.wrapping_rem(b) }) as i64 as u64
    }));
    t.push(r("remuw", 1, 7, OPC_OP_32, m_).go(go::r("REMUW")).class(Class::DivW).div(1, 2, false).binop(|a, b| {
        let (a, b) = (a as u32, b as u32);
        (if b == 0 { a } else { a % b }) as i32 as i64 as u64
    }));
}

fn zicsr(t: &mut Vec<RowDef>) {
    let z = one(Zicsr);
    for (mn, f3, with_imm) in
        [("csrrw", 1, false), ("csrrs", 2, false), ("csrrc", 3, false), ("csrrwi", 5, true), ("csrrsi", 6, true), ("csrrci", 7, true)]
    {
        let src = if with_imm { immop("uimm", uimm(5), RS1) } else { xs("rs1", RS1) };
        t.push(
            RowDef::new(mn, (f3 << 12) | OPC_SYSTEM, 0x707f, z)
                .ops(&[xd("rd", RD), op("csr", Role::Use, Kind::Csr, I12), src])
                .class(Class::Csr)
                .sem(move |h, _, o| {
                    let n = o[1] as u16;
                    let s = if with_imm { o[2] as u64 } else { h.x(o[2]) };
                    let kind = f3 & 3;
                    // csrrs/csrrc with x0 (or uimm 0) do not write; csrrw with rd = x0 does not read.
                    let old = if kind == 1 && o[0] == 0 { 0 } else { h.csr_read(n)? };
                    let new = match kind {
                        1 => Some(s),
                        2 => (o[2] != 0).then_some(old | s),
                        _ => (o[2] != 0).then_some(old & !s),
                    };
                    if let Some(v) = new {
                        h.csr_write(n, v)?;
                    }
                    h.set_x(o[0], old);
                    Ok(())
                }),
        );
    }
    let _ = csr::VL;
}

fn bitmanip(t: &mut Vec<RowDef>) {
    let zba = one(Zba);
    for (k, mn, g) in [(1, "sh1add", "SH1ADD"), (2, "sh2add", "SH2ADD"), (3, "sh3add", "SH3ADD")] {
        t.push(r(mn, 0x10, 2 * k, OPC_OP, zba).go(go::r(g)).arith(Arith::Add { a: 2, b: 1, shift: Shift::By(k as u8) }).binop(move |a, b| (a << k).wrapping_add(b)));
    }
    for (k, mn, g) in [(1, "sh1add.uw", "SH1ADDUW"), (2, "sh2add.uw", "SH2ADDUW"), (3, "sh3add.uw", "SH3ADDUW")] {
        t.push(r(mn, 0x10, 2 * k, OPC_OP_32, zba).go(go::r(g)).result(Extend::Unknown).binop(move |a, b| ((a as u32 as u64) << k).wrapping_add(b)));
    }
    t.push(r("add.uw", 0x04, 0, OPC_OP_32, zba).go(go::r("ADDUW")).result(Extend::Unknown).binop(|a, b| (a as u32 as u64).wrapping_add(b)));
    t.push(sh6("slli.uw", 0x02, 1, OPC_OP_IMM_32, zba).go(go::i("SLLIUW")).result(Extend::Unknown).immop(|a, s| (a as u32 as u64) << s));

    // Go 1.23 knows these mnemonics whatever GORISCV64 is; the rotates are left to WORD
    // (see `super::go`).
    let zbb = one(Zbb);
    let zbb_k = ExtSet::of(&[Zbb, Zbkb]);
    t.push(r("andn", 0x20, 7, OPC_OP, zbb_k).go(go::r("ANDN")).binop(|a, b| a & !b));
    t.push(r("orn", 0x20, 6, OPC_OP, zbb_k).go(go::r("ORN")).binop(|a, b| a | !b));
    t.push(r("xnor", 0x20, 4, OPC_OP, zbb_k).go(go::r("XNOR")).binop(|a, b| !(a ^ b)));
    t.push(r_unary("clz", 0x30, 0, 1, OPC_OP_IMM, zbb).go(go::unary("CLZ")).result(Extend::Zero(7)).unop(|a| a.leading_zeros() as u64));
    t.push(r_unary("ctz", 0x30, 1, 1, OPC_OP_IMM, zbb).go(go::unary("CTZ")).result(Extend::Zero(7)).unop(|a| a.trailing_zeros() as u64));
    t.push(r_unary("cpop", 0x30, 2, 1, OPC_OP_IMM, zbb).go(go::unary("CPOP")).result(Extend::Zero(7)).unop(|a| a.count_ones() as u64));
    t.push(r_unary("clzw", 0x30, 0, 1, OPC_OP_IMM_32, zbb).go(go::unary("CLZW")).result(Extend::Zero(6)).unop(|a| (a as u32).leading_zeros() as u64));
    t.push(r_unary("ctzw", 0x30, 1, 1, OPC_OP_IMM_32, zbb).go(go::unary("CTZW")).result(Extend::Zero(6)).unop(|a| (a as u32).trailing_zeros() as u64));
    t.push(r_unary("cpopw", 0x30, 2, 1, OPC_OP_IMM_32, zbb).go(go::unary("CPOPW")).result(Extend::Zero(6)).unop(|a| (a as u32).count_ones() as u64));
    t.push(r("max", 0x05, 6, OPC_OP, zbb).go(go::r("MAX")).binop(|a, b| (a as i64).max(b as i64) as u64));
    t.push(r("maxu", 0x05, 7, OPC_OP, zbb).go(go::r("MAXU")).binop(|a, b| a.max(b)));
    t.push(r("min", 0x05, 4, OPC_OP, zbb).go(go::r("MIN")).binop(|a, b| (a as i64).min(b as i64) as u64));
    t.push(r("minu", 0x05, 5, OPC_OP, zbb).go(go::r("MINU")).binop(|a, b| a.min(b)));
    t.push(r_unary("sext.b", 0x30, 4, 1, OPC_OP_IMM, zbb).go(go::unary("SEXTB")).result(Extend::Sign(8)).unop(|a| a as i8 as i64 as u64));
    t.push(r_unary("sext.h", 0x30, 5, 1, OPC_OP_IMM, zbb).go(go::unary("SEXTH")).result(Extend::Sign(16)).unop(|a| a as i16 as i64 as u64));
    t.push(r_unary("zext.h", 0x04, 0, 4, OPC_OP_32, zbb_k).go(go::unary("ZEXTH")).specializes("packw").result(Extend::Zero(16)).unop(|a| a & 0xffff));
    t.push(r("rol", 0x30, 1, OPC_OP, zbb_k).binop(|a, b| a.rotate_left((b & 63) as u32)));
    t.push(r("ror", 0x30, 5, OPC_OP, zbb_k).binop(|a, b| a.rotate_right((b & 63) as u32)));
    t.push(sh6("rori", 0x18, 5, OPC_OP_IMM, zbb_k).immop(|a, s| a.rotate_right(s as u32)));
    t.push(r("rolw", 0x30, 1, OPC_OP_32, zbb_k).binop(|a, b| sx32((a as u32).rotate_left((b & 31) as u32) as u64)));
    t.push(r("rorw", 0x30, 5, OPC_OP_32, zbb_k).binop(|a, b| sx32((a as u32).rotate_right((b & 31) as u32) as u64)));
    t.push(sh5("roriw", 0x30, 5, OPC_OP_IMM_32, zbb_k).immop(|a, s| sx32((a as u32).rotate_right(s as u32) as u64)));
    t.push(r_unary("orc.b", 0x14, 7, 5, OPC_OP_IMM, zbb).go(go::unary("ORCB")).unop(|a| {
        (0..8).fold(0, |acc, k| if (a >> (8 * k)) & 0xff != 0 { acc | (0xff << (8 * k)) } else { acc })
    }));
    t.push(r_unary("rev8", 0x35, 0x18, 5, OPC_OP_IMM, zbb_k).go(go::unary("REV8")).unop(|a| a.swap_bytes()));

    let zbkb = one(Zbkb);
    t.push(r("pack", 0x04, 4, OPC_OP, zbkb).binop(|a, b| (a & 0xffff_ffff) | (b << 32)));
    t.push(r("packh", 0x04, 7, OPC_OP, zbkb).result(Extend::Zero(16)).binop(|a, b| (a & 0xff) | ((b & 0xff) << 8)));
    t.push(r("packw", 0x04, 4, OPC_OP_32, zbkb).binop(|a, b| sx32((a & 0xffff) | ((b & 0xffff) << 16))));
    t.push(r_unary("brev8", 0x34, 7, 5, OPC_OP_IMM, zbkb).unop(|a| {
        let mut r = 0u64;
        for k in 0..8 {
            r |= ((((a >> (8 * k)) as u8).reverse_bits()) as u64) << (8 * k);
        }
        r
    }));

    let zbc_k = ExtSet::of(&[Zbc, Zbkc]);
    t.push(r("clmul", 0x05, 1, OPC_OP, zbc_k).binop(|a, b| clmul128(a, b).0));
    t.push(r("clmulh", 0x05, 3, OPC_OP, zbc_k).binop(|a, b| clmul128(a, b).1));
    t.push(r("clmulr", 0x05, 2, OPC_OP, one(Zbc)).binop(|a, b| {
        let (lo, hi) = clmul128(a, b);
        (hi << 1) | (lo >> 63)
    }));

    let zbs = one(Zbs);
    t.push(r("bclr", 0x24, 1, OPC_OP, zbs).go(go::r("BCLR")).binop(|a, b| a & !(1 << (b & 63))));
    t.push(sh6("bclri", 0x12, 1, OPC_OP_IMM, zbs).go(go::i("BCLR")).immop(|a, s| a & !(1 << s)));
    t.push(r("bext", 0x24, 5, OPC_OP, zbs).go(go::r("BEXT")).result(Extend::Zero(1)).binop(|a, b| (a >> (b & 63)) & 1));
    t.push(sh6("bexti", 0x12, 5, OPC_OP_IMM, zbs).go(go::i("BEXT")).result(Extend::Zero(1)).immop(|a, s| (a >> s) & 1));
    t.push(r("binv", 0x34, 1, OPC_OP, zbs).go(go::r("BINV")).binop(|a, b| a ^ (1 << (b & 63))));
    t.push(sh6("binvi", 0x1a, 1, OPC_OP_IMM, zbs).go(go::i("BINV")).immop(|a, s| a ^ (1 << s)));
    t.push(r("bset", 0x14, 1, OPC_OP, zbs).go(go::r("BSET")).binop(|a, b| a | (1 << (b & 63))));
    t.push(sh6("bseti", 0x0a, 1, OPC_OP_IMM, zbs).go(go::i("BSET")).immop(|a, s| a | (1 << s)));

    let zicond = one(Zicond);
    t.push(r("czero.eqz", 0x07, 5, OPC_OP, zicond).binop(|a, c| if c == 0 { 0 } else { a }));
    t.push(r("czero.nez", 0x07, 7, OPC_OP, zicond).binop(|a, c| if c != 0 { 0 } else { a }));
}
