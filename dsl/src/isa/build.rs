//! Row construction: encoding families, operand fields and the builder the row files use.

use super::*;

/// Which vector specification a vector row follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VDialect {
    /// XTheadVector (RVV 0.7.1 as on the C906).
    Thead,
    /// RVV 1.0.
    V1,
}

impl VDialect {
    /// The vtype immediate for elements of `sew` bits in groups of `lmul` registers (1, 2,
    /// 4, 8); RVV 1.0's is tail and mask agnostic.
    pub fn vtype(self, sew: u32, lmul: u32) -> Option<i64> {
        let vsew = match sew {
            8 => 0,
            16 => 1,
            32 => 2,
            64 => 3,
            _ => return None,
        };
        let vlmul = match lmul {
            1 => 0,
            2 => 1,
            4 => 2,
            8 => 3,
            _ => return None,
        };
        Some(match self {
            VDialect::Thead => (vsew << 2) | vlmul,
            VDialect::V1 => 0xc0 | (vsew << 3) | vlmul,
        })
    }

    /// The XTheadVector vtype that gives an RVV 1.0 vtype's meaning: the same SEW and LMUL
    /// (XTheadVector zeroes the tail, which tail-agnostic allows, and keeps masked-off
    /// elements, which both mask policies allow). Fractional LMUL and tail-undisturbed have
    /// no equivalent.
    pub fn thead_vtype_of(v1: i64) -> Result<i64, String> {
        let vlmul = v1 & 7;
        if vlmul >= 4 {
            return Err("fractional LMUL has no XTheadVector equivalent".into());
        }
        if v1 & 0x40 == 0 {
            return Err("tail-undisturbed (tu): XTheadVector zeroes the tail".into());
        }
        let vsew = (v1 >> 3) & 7;
        if vsew > 3 || v1 >> 8 != 0 {
            return Err(format!("vtype {v1:#x} is not valid"));
        }
        Ok((vsew << 2) | vlmul)
    }
}

const fn seg(at: u8, len: u8, from: u8) -> Seg {
    Seg { at, len, from }
}

// ---- fields --------------------------------------------------------------------------
pub(super) const RD: Field = &[seg(7, 5, 0)];
pub(super) const RS1: Field = &[seg(15, 5, 0)];
pub(super) const RS2: Field = &[seg(20, 5, 0)];
pub(super) const I12: Field = &[seg(20, 12, 0)];
pub(super) const S12: Field = &[seg(7, 5, 0), seg(25, 7, 5)];
pub(super) const B13: Field = &[seg(8, 4, 1), seg(25, 6, 5), seg(7, 1, 11), seg(31, 1, 12)];
pub(super) const U20: Field = &[seg(12, 20, 0)];
pub(super) const J21: Field = &[seg(21, 10, 1), seg(20, 1, 11), seg(12, 8, 12), seg(31, 1, 20)];
pub(super) const SH6: Field = &[seg(20, 6, 0)];
pub(super) const SH5: Field = &[seg(20, 5, 0)];
pub(super) const PRED: Field = &[seg(24, 4, 0)];
pub(super) const SUCC: Field = &[seg(20, 4, 0)];
pub(super) const IMM2_25: Field = &[seg(25, 2, 0)];
pub(super) const MSB6_26: Field = &[seg(26, 6, 0)];
pub(super) const VM: Field = &[seg(25, 1, 0)];
pub(super) const ZIMM11: Field = &[seg(20, 11, 0)];
pub(super) const ZIMM10: Field = &[seg(20, 10, 0)];
pub(super) const NONE: Field = &[];

pub(super) const fn imm(min: i64, max: i64, align: u8) -> ImmSpec {
    ImmSpec { min, max, align }
}
/// Signed `bits`-bit immediate.
pub(super) const fn simm(bits: u32) -> ImmSpec {
    imm(-(1 << (bits - 1)), (1 << (bits - 1)) - 1, 1)
}
/// Unsigned `bits`-bit immediate.
pub(super) const fn uimm(bits: u32) -> ImmSpec {
    imm(0, (1 << bits) - 1, 1)
}

pub(super) const fn op(name: &'static str, role: Role, kind: Kind, field: Field) -> OpSpec {
    OpSpec { name, role, kind, field }
}
pub(super) const fn xd(name: &'static str, field: Field) -> OpSpec {
    op(name, Role::Def, Kind::X, field)
}
pub(super) const fn xs(name: &'static str, field: Field) -> OpSpec {
    op(name, Role::Use, Kind::X, field)
}
pub(super) const fn xud(name: &'static str, field: Field) -> OpSpec {
    op(name, Role::UseDef, Kind::X, field)
}
pub(super) const fn base(field: Field) -> OpSpec {
    op("rs1", Role::Use, Kind::XMem, field)
}
pub(super) const fn immop(name: &'static str, s: ImmSpec, field: Field) -> OpSpec {
    op(name, Role::Use, Kind::Imm(s), field)
}

/// A row under construction.
pub(crate) struct RowDef {
    pub mnemonic: &'static str,
    pub mask: u32,
    pub bits: u32,
    pub ops: Vec<OpSpec>,
    pub ext: ExtSet,
    pub class: Class,
    pub mem: Option<Mem>,
    pub rules: Vec<Rule>,
    pub vdialect: Option<VDialect>,
    pub specializes: Option<&'static str>,
    pub flow: Flow,
    /// None: the default for the family (the 32-bit "W" operations sign-extend).
    pub result: Option<Extend>,
    pub arith: Option<Arith>,
    pub mul: Option<MulOps>,
    pub div: Option<DivOps>,
    pub vset: Option<VType>,
    pub same_in_both_dialects: bool,
    pub go: Option<super::go::GoAsm>,
    pub sem: Option<Sem>,
}

/// Makes a generated mnemonic `'static` (the table lives for the whole program).
pub(super) fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

impl RowDef {
    pub fn new(mnemonic: &'static str, bits: u32, mask: u32, ext: ExtSet) -> RowDef {
        RowDef {
            mnemonic,
            mask,
            bits,
            ops: Vec::new(),
            ext,
            class: Class::Alu,
            mem: None,
            rules: Vec::new(),
            vdialect: None,
            specializes: None,
            flow: Flow::Seq,
            result: None,
            arith: None,
            mul: None,
            div: None,
            vset: None,
            same_in_both_dialects: false,
            go: None,
            sem: None,
        }
    }
    /// How Go's assembler writes the row (see [`super::go`]).
    pub fn go(mut self, g: super::go::GoAsm) -> Self {
        self.go = Some(g);
        self
    }
    pub fn flow(mut self, f: Flow) -> Self {
        self.flow = f;
        self
    }
    pub fn result(mut self, e: Extend) -> Self {
        self.result = Some(e);
        self
    }
    pub fn arith(mut self, a: Arith) -> Self {
        self.arith = Some(a);
        self
    }
    /// A multiply of operands `a` and `b`, read as signed or not.
    pub fn mul(mut self, a: u8, b: u8, signed: [bool; 2], narrow: bool) -> Self {
        self.mul = Some(MulOps { ops: [a, b], signed, narrow, acc: None });
        self
    }
    /// An accumulating multiply of operands `a` and `b` onto operand `acc` (read and written).
    pub fn mul_acc(mut self, acc: u8, a: u8, b: u8, signed: [bool; 2], narrow: bool) -> Self {
        self.mul = Some(MulOps { ops: [a, b], signed, narrow, acc: Some(acc) });
        self
    }
    /// A division (or remainder) of operand `a` by operand `b`, read as signed or not.
    pub fn div(mut self, a: u8, b: u8, signed: bool) -> Self {
        self.div = Some(DivOps { ops: [a, b], signed });
        self
    }
    pub fn vset(mut self, v: VType) -> Self {
        self.vset = Some(v);
        self
    }
    /// The form means the same in XTheadVector and RVV 1.0 (see [`Row::twin`]).
    pub fn same_in_both_dialects(mut self) -> Self {
        self.same_in_both_dialects = true;
        self
    }
    pub fn ops(mut self, ops: &[OpSpec]) -> Self {
        self.ops = ops.to_vec();
        self
    }
    pub fn class(mut self, c: Class) -> Self {
        self.class = c;
        self
    }
    pub fn mem(mut self, dir: Dir, bytes: u8, addr: Addr) -> Self {
        self.mem = Some(Mem { dir, bytes, addr });
        self
    }
    pub fn rule(mut self, r: Rule) -> Self {
        self.rules.push(r);
        self
    }
    pub fn specializes(mut self, general: &'static str) -> Self {
        self.specializes = Some(general);
        self
    }
    pub fn vector(mut self, d: VDialect) -> Self {
        self.vdialect = Some(d);
        self
    }
    pub fn sem(mut self, f: impl Fn(&mut Hart, &mut dyn Bus, &[i64]) -> Result<(), Trap> + Send + Sync + 'static) -> Self {
        self.sem = Some(Box::new(f));
        self
    }
    /// `rd = f(rs1, rs2)` for rows whose operands are rd, rs1, rs2.
    pub fn binop(self, f: impl Fn(u64, u64) -> u64 + Send + Sync + 'static) -> Self {
        self.sem(move |h, _, o| {
            let v = f(h.x(o[1]), h.x(o[2]));
            h.set_x(o[0], v);
            Ok(())
        })
    }
    /// `rd = f(rs1, imm)` for rows whose operands are rd, rs1, imm.
    pub fn immop(self, f: impl Fn(u64, i64) -> u64 + Send + Sync + 'static) -> Self {
        self.sem(move |h, _, o| {
            let v = f(h.x(o[1]), o[2]);
            h.set_x(o[0], v);
            Ok(())
        })
    }
    /// `rd = f(rs1)` for rows whose operands are rd, rs1.
    pub fn unop(self, f: impl Fn(u64) -> u64 + Send + Sync + 'static) -> Self {
        self.sem(move |h, _, o| {
            let v = f(h.x(o[1]));
            h.set_x(o[0], v);
            Ok(())
        })
    }

    pub(super) fn finish(self, form: Form) -> Row {
        let mut sem = self.sem.unwrap_or_else(|| panic!("ISA table: {} has no semantics", self.mnemonic));
        // RVV 1.0 register-overlap rules (5.2 and per instruction): reserved encodings trap,
        // as they do in QEMU. Checked here so every V row gets them.
        // Register groups must be aligned to their size in both dialects.
        if let Some(d) = self.vdialect.filter(|_| self.ops.iter().any(|o| matches!(o.kind, Kind::V(_)))) {
            let inner = sem;
            // Rows whose vector operands are all SEW-wide groups, masks or scalars, and that
            // have no special overlap rule, cannot break a rule at LMUL 1 when unmasked.
            let simple = self.ops.iter().all(|o| !matches!(o.kind, Kind::V(g) if !matches!(g, VGroup::Lmul | VGroup::Mask | VGroup::Scalar)))
                && !matches!(self.class, Class::VGather | Class::VSlide | Class::VSlideDown)
                && !self.ops.iter().any(|o| o.kind == Kind::V0);
            let vm = self.ops.iter().position(|o| o.kind == Kind::Vm);
            sem = Box::new(move |h, b, o| {
                let row = table().row(form);
                if let Ok(c) = h.vconf(d) {
                    if simple && c.group_regs() == 1 && vm.is_none_or(|k| o[k] != 0) {
                        return inner(h, b, o);
                    }
                    if let Some(why) = super::groups::group_alignment_violation(row, o, &c) {
                        return Err(Trap::Illegal(format!("reserved register group: {why}")));
                    }
                    if d == VDialect::V1 {
                        if let Some(why) = super::groups::v1_overlap_violation(row, o, &c) {
                            return Err(Trap::Illegal(format!("reserved register overlap: {why}")));
                        }
                    }
                }
                inner(h, b, o)
            });
        }
        // The 32-bit ("W") integer operations sign-extend their result from bit 31.
        let opc = self.bits & 0x7f;
        let w_op = (opc == OPC_OP_32 || opc == OPC_OP_IMM_32) && self.ops.first().is_some_and(|o| o.role == Role::Def && o.kind == Kind::X);
        let result = self.result.unwrap_or(if w_op { Extend::Sign(32) } else { Extend::Unknown });
        assert!(
            (self.flow == Flow::Seq) == !matches!(self.class, Class::Branch | Class::Jal | Class::Jalr),
            "ISA table: {}'s control flow does not match its class",
            self.mnemonic
        );
        assert!(
            self.mul.is_some() == matches!(self.class, Class::Mul | Class::MulAcc | Class::MulW | Class::MulAccW),
            "ISA table: {} is a multiply without its factors (or has factors without being one)",
            self.mnemonic
        );
        assert!(
            self.mul.and_then(|m| m.acc).map(|k| self.ops.get(k as usize).map(|o| (o.role, o.kind)))
                == matches!(self.class, Class::MulAcc | Class::MulAccW).then_some(Some((Role::UseDef, Kind::X))),
            "ISA table: {}: an accumulating multiply, and nothing else, names its accumulator (an integer operand it reads and writes)",
            self.mnemonic
        );
        assert!(self.vset.is_some() == (self.class == Class::VSet), "ISA table: {}: vset operands and class disagree", self.mnemonic);
        assert!(self.div.is_some() == matches!(self.class, Class::Div | Class::DivW), "ISA table: {}: a division without its operands (or operands without being one)", self.mnemonic);
        Row {
            form,
            mnemonic: self.mnemonic,
            mask: self.mask,
            bits: self.bits,
            ops: self.ops,
            ext: self.ext,
            class: self.class,
            mem: self.mem,
            rules: self.rules,
            vdialect: self.vdialect,
            specializes: self.specializes,
            flow: self.flow,
            inverse: None,
            result,
            arith: self.arith,
            mul: self.mul,
            div: self.div,
            vset: self.vset,
            twin: None,
            same_in_both_dialects: self.same_in_both_dialects,
            go: self.go,
            sem,
        }
    }
}

// ---- encoding families ----------------------------------------------------------------

pub(super) const OPC_LOAD: u32 = 0x03;
pub(super) const OPC_CUSTOM0: u32 = 0x0b;
pub(super) const OPC_MISC_MEM: u32 = 0x0f;
pub(super) const OPC_OP_IMM: u32 = 0x13;
pub(super) const OPC_AUIPC: u32 = 0x17;
pub(super) const OPC_OP_IMM_32: u32 = 0x1b;
pub(super) const OPC_STORE: u32 = 0x23;
pub(super) const OPC_OP: u32 = 0x33;
pub(super) const OPC_LUI: u32 = 0x37;
pub(super) const OPC_OP_32: u32 = 0x3b;
pub(super) const OPC_BRANCH: u32 = 0x63;
pub(super) const OPC_JALR: u32 = 0x67;
pub(super) const OPC_JAL: u32 = 0x6f;
pub(super) const OPC_SYSTEM: u32 = 0x73;
pub(super) const OPC_LOAD_FP: u32 = 0x07;
pub(super) const OPC_STORE_FP: u32 = 0x27;
pub(super) const OPC_OP_V: u32 = 0x57;
pub(super) const OPC_OP_P: u32 = 0x77;

/// R-type: `rd, rs1, rs2` with funct7, funct3.
pub(super) fn r(mn: &'static str, f7: u32, f3: u32, opc: u32, ext: ExtSet) -> RowDef {
    RowDef::new(mn, (f7 << 25) | (f3 << 12) | opc, 0xfe00_707f, ext).ops(&[xd("rd", RD), xs("rs1", RS1), xs("rs2", RS2)])
}
/// R-type with rs2 fixed (`rd, rs1`): unary operations.
pub(super) fn r_unary(mn: &'static str, f7: u32, rs2: u32, f3: u32, opc: u32, ext: ExtSet) -> RowDef {
    RowDef::new(mn, (f7 << 25) | (rs2 << 20) | (f3 << 12) | opc, 0xfff0_707f, ext).ops(&[xd("rd", RD), xs("rs1", RS1)])
}
/// I-type arithmetic: `rd, rs1, imm12`.
pub(super) fn i(mn: &'static str, f3: u32, opc: u32, ext: ExtSet) -> RowDef {
    RowDef::new(mn, (f3 << 12) | opc, 0x0000_707f, ext).ops(&[xd("rd", RD), xs("rs1", RS1), immop("imm", simm(12), I12)])
}
/// Shift by a 6-bit immediate: funct6 at 31:26.
pub(super) fn sh6(mn: &'static str, f6: u32, f3: u32, opc: u32, ext: ExtSet) -> RowDef {
    RowDef::new(mn, (f6 << 26) | (f3 << 12) | opc, 0xfc00_707f, ext).ops(&[xd("rd", RD), xs("rs1", RS1), immop("shamt", uimm(6), SH6)])
}
/// Shift by a 5-bit immediate: funct7 at 31:25.
pub(super) fn sh5(mn: &'static str, f7: u32, f3: u32, opc: u32, ext: ExtSet) -> RowDef {
    RowDef::new(mn, (f7 << 25) | (f3 << 12) | opc, 0xfe00_707f, ext).ops(&[xd("rd", RD), xs("rs1", RS1), immop("shamt", uimm(5), SH5)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac() -> RowDef {
        RowDef::new("t.mac", 0x0000_100b, 0xfe00_707f, ExtSet::one(crate::ext::Ext::XTheadMac)).ops(&[xud("rd", RD), xs("rs1", RS1), xs("rs2", RS2)]).class(Class::MulAcc).sem(|_, _, _| Ok(()))
    }

    #[test]
    fn an_accumulating_multiply_names_its_accumulator() {
        let row = mac().mul_acc(0, 1, 2, [true, true], false).finish(Form(0));
        assert_eq!(row.mul.and_then(|m| m.acc), Some(0));
    }

    /// Negative controls of the table's multiply checks.
    #[test]
    #[should_panic(expected = "names its accumulator")]
    fn an_accumulating_multiply_without_its_accumulator_is_refused() {
        mac().mul(1, 2, [true, true], false).finish(Form(0));
    }

    #[test]
    #[should_panic(expected = "names its accumulator")]
    fn an_accumulator_that_is_only_read_is_refused() {
        mac().mul_acc(1, 1, 2, [true, true], false).finish(Form(0));
    }

    #[test]
    #[should_panic(expected = "names its accumulator")]
    fn a_plain_multiply_with_an_accumulator_is_refused() {
        mac().class(Class::Mul).mul_acc(0, 1, 2, [true, true], false).finish(Form(0));
    }

    /// Negative controls of the table's division check.
    #[test]
    #[should_panic(expected = "a division without its operands")]
    fn a_division_without_its_operands_is_refused() {
        mac().class(Class::Div).finish(Form(0));
    }

    #[test]
    #[should_panic(expected = "a division without its operands")]
    fn division_operands_on_another_row_are_refused() {
        mac().class(Class::Alu).div(1, 2, false).finish(Form(0));
    }

    #[test]
    fn a_division_names_its_operands() {
        let row = mac().class(Class::DivW).div(1, 2, true).finish(Form(0));
        assert_eq!(row.div, Some(DivOps { ops: [1, 2], signed: true }));
    }
}
