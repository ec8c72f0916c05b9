//! Pseudo-instructions: each expands to real rows of the table.

use crate::ext::Ext;
use crate::ir::{x, Func, Label, Opnd, Reg};

/// The instruction sequence `li` uses for a 64-bit constant: (mnemonic, immediate) steps,
/// the first of which reads x0 (or nothing, for `lui`) and the rest the destination.
pub fn li_steps(v: i64) -> Vec<(&'static str, i64)> {
    if v == v as i32 as i64 {
        let lo = ((v << 52) >> 52) as i32 as i64;
        let hi = ((v - lo) >> 12) & 0xfffff;
        let mut s = Vec::new();
        if hi != 0 {
            s.push(("lui", hi));
            if lo != 0 {
                s.push(("addiw", lo));
            }
        } else {
            s.push(("addi", lo));
        }
        return s;
    }
    let lo = (v << 52) >> 52;
    let hi = (v as u64).wrapping_add(0x800) >> 12;
    let tz = hi.trailing_zeros();
    let shift = 12 + tz;
    // hi >> tz, sign-extended from its 64 - shift significant bits.
    let rest = (((hi >> tz) << shift) as i64) >> shift;
    let mut s = li_steps(rest);
    s.push(("slli", shift as i64));
    if lo != 0 {
        s.push(("addi", lo));
    }
    s
}

impl Func {
    /// `li rd, v` for any 64-bit constant.
    pub fn li(&mut self, rd: Reg, v: i64) {
        let steps = li_steps(v);
        for (k, (mn, imm)) in steps.into_iter().enumerate() {
            let src = if k == 0 { x::ZERO } else { rd };
            match mn {
                "lui" => self.inst("lui", &[rd.into(), imm.into()]),
                _ => self.inst(mn, &[rd.into(), src.into(), imm.into()]),
            };
        }
    }
    /// `la rd, sym`: auipc/addi pair with pc-relative relocations.
    pub fn la(&mut self, rd: Reg, sym: &str) {
        self.la_off(rd, sym, 0)
    }
    pub fn la_off(&mut self, rd: Reg, sym: &str, addend: i64) {
        let anchor = self.label();
        self.bind(anchor);
        self.inst("auipc", &[rd.into(), Opnd::PcrelHi { sym: sym.to_string(), addend }]);
        self.inst("addi", &[rd.into(), rd.into(), Opnd::PcrelLo { anchor }]);
    }
    pub fn mv(&mut self, rd: Reg, rs: Reg) {
        self.inst("addi", &[rd.into(), rs.into(), 0.into()]);
    }
    pub fn not(&mut self, rd: Reg, rs: Reg) {
        self.inst("xori", &[rd.into(), rs.into(), (-1).into()]);
    }
    pub fn neg(&mut self, rd: Reg, rs: Reg) {
        self.inst("sub", &[rd.into(), x::ZERO.into(), rs.into()]);
    }
    pub fn negw(&mut self, rd: Reg, rs: Reg) {
        self.inst("subw", &[rd.into(), x::ZERO.into(), rs.into()]);
    }
    pub fn sext_w(&mut self, rd: Reg, rs: Reg) {
        self.inst("addiw", &[rd.into(), rs.into(), 0.into()]);
    }
    /// `zext.w`: `add.uw` with Zba, else a shift pair.
    pub fn zext_w(&mut self, rd: Reg, rs: Reg) {
        if self.target.has(Ext::Zba) {
            self.inst("add.uw", &[rd.into(), rs.into(), x::ZERO.into()]);
        } else if self.target.has(Ext::XTheadBb) {
            self.inst("th.extu", &[rd.into(), rs.into(), 31.into(), 0.into()]);
        } else {
            self.inst("slli", &[rd.into(), rs.into(), 32.into()]);
            self.inst("srli", &[rd.into(), rd.into(), 32.into()]);
        }
    }
    pub fn seqz(&mut self, rd: Reg, rs: Reg) {
        self.inst("sltiu", &[rd.into(), rs.into(), 1.into()]);
    }
    pub fn snez(&mut self, rd: Reg, rs: Reg) {
        self.inst("sltu", &[rd.into(), x::ZERO.into(), rs.into()]);
    }
    pub fn nop(&mut self) {
        self.inst("addi", &[x::ZERO.into(), x::ZERO.into(), 0.into()]);
    }
    pub fn j(&mut self, l: Label) {
        self.inst("jal", &[x::ZERO.into(), l.into()]);
    }
    pub fn jr(&mut self, rs: Reg) {
        self.inst("jalr", &[x::ZERO.into(), 0.into(), rs.into()]);
    }
    pub fn beqz(&mut self, rs: Reg, l: Label) {
        self.inst("beq", &[rs.into(), x::ZERO.into(), l.into()]);
    }
    pub fn bnez(&mut self, rs: Reg, l: Label) {
        self.inst("bne", &[rs.into(), x::ZERO.into(), l.into()]);
    }
    pub fn blez(&mut self, rs: Reg, l: Label) {
        self.inst("bge", &[x::ZERO.into(), rs.into(), l.into()]);
    }
    pub fn bgez(&mut self, rs: Reg, l: Label) {
        self.inst("bge", &[rs.into(), x::ZERO.into(), l.into()]);
    }
    pub fn bltz(&mut self, rs: Reg, l: Label) {
        self.inst("blt", &[rs.into(), x::ZERO.into(), l.into()]);
    }
    pub fn bgtz(&mut self, rs: Reg, l: Label) {
        self.inst("blt", &[x::ZERO.into(), rs.into(), l.into()]);
    }
    pub fn bgt(&mut self, a: Reg, b: Reg, l: Label) {
        self.inst("blt", &[b.into(), a.into(), l.into()]);
    }
    pub fn ble(&mut self, a: Reg, b: Reg, l: Label) {
        self.inst("bge", &[b.into(), a.into(), l.into()]);
    }
    pub fn bgtu(&mut self, a: Reg, b: Reg, l: Label) {
        self.inst("bltu", &[b.into(), a.into(), l.into()]);
    }
    pub fn bleu(&mut self, a: Reg, b: Reg, l: Label) {
        self.inst("bgeu", &[b.into(), a.into(), l.into()]);
    }
    /// Sets the return value (a0) from `rs`.
    pub fn ret_value(&mut self, rs: Reg) {
        self.mv(x::A0, rs);
    }
    /// Makes `mask` the mask of the masked instructions that follow: copies it to v0, the
    /// one register RVV and XTheadVector read masks from (the allocator then keeps other
    /// values out of v0 while it is live).
    pub fn set_mask(&mut self, mask: Reg) {
        self.inst("vmv.v.v", &[Reg::V(0).into(), mask.into()]);
    }
    /// Returns the constant `v` (a0 = v, then the epilogue and `ret`).
    pub fn ret_imm(&mut self, v: i64) {
        self.li(x::A0, v);
        self.ret();
    }
}

/// Names of the pseudo-instructions the proc-macro maps to builder methods, with their
/// operand shapes (`r` register, `i` immediate, `l` label, `s` symbol).
pub const PSEUDOS: &[(&str, &str)] = &[
    ("li", "ri"),
    ("la", "rs"),
    ("mv", "rr"),
    ("not", "rr"),
    ("neg", "rr"),
    ("negw", "rr"),
    ("sext.w", "rr"),
    ("zext.w", "rr"),
    ("seqz", "rr"),
    ("snez", "rr"),
    ("nop", ""),
    ("j", "l"),
    ("jr", "r"),
    ("ret", ""),
    ("beqz", "rl"),
    ("bnez", "rl"),
    ("blez", "rl"),
    ("bgez", "rl"),
    ("bltz", "rl"),
    ("bgtz", "rl"),
    ("bgt", "rrl"),
    ("ble", "rrl"),
    ("bgtu", "rrl"),
    ("bleu", "rrl"),
];

impl Func {
    /// `call sym`: auipc/jalr pair through `ra` with pc-relative relocations.
    pub fn call(&mut self, sym: &str) {
        self.far_jump(sym, x::RA);
    }
    /// `tail sym`: auipc/jalr pair through `t1`, no link.
    pub fn tail(&mut self, sym: &str) {
        self.far_jump(sym, Reg::X(6));
    }
    fn far_jump(&mut self, sym: &str, via: Reg) {
        let anchor = self.label();
        self.bind(anchor);
        self.inst("auipc", &[via.into(), Opnd::PcrelHi { sym: sym.to_string(), addend: 0 }]);
        let rd = if via == x::RA { x::RA } else { x::ZERO };
        self.inst("jalr", &[rd.into(), Opnd::PcrelLo { anchor }, via.into()]);
    }
    pub fn zext_b(&mut self, rd: Reg, rs: Reg) {
        self.inst("andi", &[rd.into(), rs.into(), 255.into()]);
    }
    fn ext_by_shifts(&mut self, rd: Reg, rs: Reg, sh: i64, arith: bool) {
        self.inst("slli", &[rd.into(), rs.into(), sh.into()]);
        self.inst(if arith { "srai" } else { "srli" }, &[rd.into(), rd.into(), sh.into()]);
    }
    /// `zext.h`: the Zbb instruction if the target has it, else a shift pair.
    pub fn zext_h(&mut self, rd: Reg, rs: Reg) {
        if self.target.has(Ext::Zbb) {
            self.inst("zext.h", &[rd.into(), rs.into()]);
        } else {
            self.ext_by_shifts(rd, rs, 48, false);
        }
    }
    pub fn sext_b(&mut self, rd: Reg, rs: Reg) {
        if self.target.has(Ext::Zbb) {
            self.inst("sext.b", &[rd.into(), rs.into()]);
        } else {
            self.ext_by_shifts(rd, rs, 56, true);
        }
    }
    pub fn sext_h(&mut self, rd: Reg, rs: Reg) {
        if self.target.has(Ext::Zbb) {
            self.inst("sext.h", &[rd.into(), rs.into()]);
        } else {
            self.ext_by_shifts(rd, rs, 48, true);
        }
    }
}
