//! The ISA table: the one place where an instruction form is defined.
//!
//! A [`Row`] gives a form's mnemonic, fixed bits, operands (assembly order, role, kind and
//! the bit-permutation list that places each in the word), required extensions, cost/check
//! class, memory access and simulator semantics. Encoding ([`Row::encode`]), decoding
//! ([`Table::decode`]), printing (`crate::text`), parsing, relocation patching and the
//! simulator all read the same rows; nothing else in kgen knows an encoding.
//!
//! Rows are built by the functions in `scalar`, `thead` and `vector`; families of rows
//! (widths, segment counts, `.vv/.vx/.vi` variants) come from loops there.

mod build;
pub mod gen;
pub mod groups;
pub mod go;
pub mod hart;
mod scalar;
mod thead;
pub mod vector;

use crate::ext::{Ext, ExtSet};
use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

pub use build::VDialect;
pub use hart::{Bus, Hart, Trap};

/// Inst bits `[at, at+len)` hold value bits `[from, from+len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub at: u8,
    pub len: u8,
    pub from: u8,
}

/// A field: where an operand's value bits go in the instruction word. Encoding scatters,
/// decoding gathers, both from this one list.
pub type Field = &'static [Seg];

/// Inserts `value`'s bits into `word` as `field` says (value bits outside the field ignored).
pub fn scatter(field: Field, value: u64, mut word: u32) -> u32 {
    for s in field {
        let m = ((1u64 << s.len) - 1) as u32;
        let v = ((value >> s.from) as u32) & m;
        word = (word & !(m << s.at)) | (v << s.at);
    }
    word
}

/// Collects `field`'s bits from `word` into an unsigned value.
pub fn gather(field: Field, word: u32) -> u64 {
    let mut v = 0u64;
    for s in field {
        let m = (1u64 << s.len) - 1;
        v |= (((word >> s.at) as u64) & m) << s.from;
    }
    v
}

/// The instruction-word bits a field occupies.
pub fn field_mask(field: Field) -> u32 {
    field.iter().fold(0, |m, s| m | ((((1u64 << s.len) - 1) as u32) << s.at))
}

/// Number of value bits a field carries, counting from bit 0 of the value.
pub fn field_width(field: Field) -> u32 {
    field.iter().map(|s| (s.from + s.len) as u32).max().unwrap_or(0)
}

/// How an operand is used by the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Def,
    Use,
    UseDef,
}

/// Which vector registers an operand names, relative to the current LMUL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VGroup {
    /// A group of LMUL registers (element width SEW).
    Lmul,
    /// A group of 2·LMUL registers (element width 2·SEW: widening destinations, `.w` sources).
    Wide,
    /// A single register holding a mask.
    Mask,
    /// A single register of which only element 0 matters (reduction scalars, `vmv.s.x`).
    Scalar,
    /// `nf` consecutive groups (segment loads/stores) of SEW-wide elements.
    Seg(u8),
    /// `nf` consecutive groups of `eew`-bit elements: EMUL = EEW/SEW·LMUL (RVV 1.0 loads
    /// and stores, and index operands).
    Eew { nf: u8, eew: u8 },
    /// Exactly `n` registers whatever LMUL is (whole-register moves, loads and stores).
    Whole(u8),
    /// A group of registers for an element group (vector crypto: EGW = 128 bits).
    EltGroup,
}

/// An immediate's range (inclusive) and the alignment its value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImmSpec {
    pub min: i64,
    pub max: i64,
    pub align: u8,
}

/// The kind of an operand: what values it takes and how it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Integer register x0..x31.
    X,
    /// Integer register written in parentheses: the base of a memory access.
    XMem,
    /// Vector register (the first of its group).
    V(VGroup),
    /// Plain immediate.
    Imm(ImmSpec),
    /// Immediate written before the following [`Kind::XMem`] operand: `off(base)`.
    MemOff(ImmSpec),
    /// PC-relative byte offset (branch and jump targets).
    Rel(ImmSpec),
    /// Vector mask flag (the `vm` bit): 1 = unmasked; 0 is written `v0.t`.
    Vm,
    /// The literal register `v0` (carry/merge mask), not encoded.
    V0,
    /// `th.vsetvli` type immediate: `e32, m1, d1`.
    VtypeTh,
    /// RVV 1.0 type immediate: `e32, m1, ta, ma`.
    Vtype,
    /// CSR number.
    Csr,
    /// Fence predecessor/successor set, written with the letters `iorw`.
    FenceSet,
    /// A literal integer that must be written as given and is not encoded.
    Lit(i64),
}

/// One operand of a row.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    pub name: &'static str,
    pub role: Role,
    pub kind: Kind,
    pub field: Field,
}

/// Direction of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Load,
    Store,
}

/// How a memory access forms its address (operand indices into the row's operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addr {
    /// `base + off`.
    BaseOff { base: u8, off: u8 },
    /// `base + (index << shift)` (XTheadMemIdx register-indexed forms; `zext` for the `.u` forms).
    BaseIdx { base: u8, index: u8, shift: u8, zext: bool },
    /// Base register that is also updated by `off << shift` before or after the access.
    Incr { base: u8, off: u8, shift: u8, before: bool },
    /// Two adjacent accesses at `base + (off << shift)` (XTheadMemPair).
    Pair { base: u8, off: u8, shift: u8 },
    /// Vector unit-stride from `base`.
    VUnit { base: u8 },
    /// Vector strided: `base + i*stride`.
    VStrided { base: u8, stride: u8 },
    /// Vector indexed: `base + index[i]`.
    VIndexed { base: u8, index: u8 },
}

/// A memory access a row makes. `bytes` is the width of one access (one element for
/// vectors; 0 = SEW).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    pub dir: Dir,
    pub bytes: u8,
    pub addr: Addr,
}

/// Instruction class: what the cost model and the checks key on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Alu,
    Load,
    Store,
    Branch,
    Jal,
    Jalr,
    /// 64-bit multiply (mul, mulh*): the C906 takes 3 or 6 cycles depending on the operands.
    Mul,
    /// 32-bit multiply (mulw): always the short path.
    MulW,
    /// Multiply-accumulate (th.mula/th.muls): data-dependent like [`Class::Mul`].
    MulAcc,
    /// 32/16-bit multiply-accumulate (th.mulaw/th.mulah/...): always the short path.
    MulAccW,
    Div,
    DivW,
    Csr,
    Fence,
    System,
    VSet,
    VAlu,
    VMul,
    VDiv,
    VWiden,
    VLoad,
    VStore,
    /// vslideup, vslide1up.
    VSlide,
    /// vslidedown, vslide1down (one cycle more on the C906).
    VSlideDown,
    VGather,
    VReduce,
    VMask,
    VMove,
    VToScalar,
    VCrypto,
}

impl Class {
    pub fn is_vector(self) -> bool {
        matches!(
            self,
            Class::VSet
                | Class::VAlu
                | Class::VMul
                | Class::VDiv
                | Class::VWiden
                | Class::VLoad
                | Class::VStore
                | Class::VSlide
                | Class::VSlideDown
                | Class::VGather
                | Class::VReduce
                | Class::VMask
                | Class::VMove
                | Class::VToScalar
                | Class::VCrypto
        )
    }
    /// A 64-bit multiply whose timing on the C906 depends on the operands' upper 32 bits.
    pub fn is_data_dependent_mul(self) -> bool {
        matches!(self, Class::Mul | Class::MulAcc)
    }
}

/// A rule relating several operands of one row (checked by the encoder; the checks and the
/// cross-check's operand generator read them too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// When masked (`vm` operand 0), the destination must not be `v0`.
    VdNotV0WhenMasked,
    /// The destination (operand 0) must differ from the named source operand (GNU as
    /// checks register numbers; group overlap is for the checks, which know LMUL).
    VdNotSrc(u8),
    /// Operand `a` must be greater than or equal to operand `b` (th.ext msb >= lsb).
    Ge(u8, u8),
    /// Two register operands must differ (th.ldd rd1 != rd2, neither equal to the base).
    Differ(u8, u8),
}

/// How a row transfers control (operand indices into the row's operands). What the rest of
/// kgen asks of an instruction's control flow (successors, returns, calls, branch
/// inversion) comes from here; see [`Row::control`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Falls through to the next instruction.
    Seq,
    /// Conditional branch to PC-relative operand `target` when `cond` holds between
    /// operands 0 and 1; `inverse` names the row that branches exactly when this one does
    /// not (same operands).
    Branch { target: u8, cond: Cond, inverse: &'static str },
    /// PC-relative jump to operand `target`, writing the return address to operand `link`.
    Jal { link: u8, target: u8 },
    /// Jump to register operand `base` plus immediate `off`, writing the return address to
    /// operand `link`.
    Jalr { link: u8, base: u8, off: u8 },
}

/// The condition of a conditional branch, between its two register operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    Lt,
    Ge,
    Ltu,
    Geu,
}

/// The value an integer instruction computes, as far as address and alignment analysis
/// needs it (operand indices into the row's operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    /// Operand `src` plus immediate operand `imm`.
    AddImm { src: u8, imm: u8 },
    /// Operand `a` plus operand `b` shifted left by `shift`.
    Add { a: u8, b: u8, shift: Shift },
    /// Operand `a` minus operand `b`.
    Sub { a: u8, b: u8 },
    /// Operand `src` shifted left by immediate operand `sh`.
    ShlImm { src: u8, sh: u8 },
    /// The instruction's own address plus immediate operand `imm` shifted left by 12.
    PcRel { imm: u8 },
}

/// A shift amount: fixed by the row, or an immediate operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    By(u8),
    Imm(u8),
}

/// What one instruction (a row with its operands) does to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Next,
    /// Conditional branch: falls through or goes to the target.
    Branch,
    /// Unconditional jump to a PC-relative target (`j`).
    Jump,
    /// Call through `jal`/`jalr` with a link register (continues after the call).
    Call,
    /// `jalr zero, 0(ra)`: return to the caller.
    Return,
    /// Any other `jalr` without a link: a jump to a computed address.
    IndirectJump,
}

/// What the upper bits of an integer result are known to be, from the row and its
/// operands (read by the checker's width analysis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extend {
    /// Nothing is known beyond what the other variants say.
    Unknown,
    /// Bits `n..64` are zero whatever the operands.
    Zero(u8),
    /// Sign-extended from bit `n-1` whatever the operands.
    Sign(u8),
    /// Zero above bit `imm`, where `imm` is immediate operand `msb` (`th.extu`).
    ZeroAboveImm(u8),
    /// Sign-extended from bit `imm`, immediate operand `msb` (`th.ext`).
    SignFromImm(u8),
    /// Operand `src` shifted right (logically) by immediate operand `sh`.
    ShiftRightImm { src: u8, sh: u8 },
    /// Operand `src` shifted right (logically) by a register amount: no wider than `src`.
    ShiftRight { src: u8 },
    /// Bitwise AND of operands `a` and `b` (a register or an immediate): the narrower.
    And(u8, u8),
    /// Bitwise OR or XOR of operands `a` and `b`: the wider.
    Or(u8, u8),
    /// `lui`: immediate operand `imm` shifted left by 12, sign-extended from bit 31.
    Upper(u8),
}

/// The operands of a multiply and how the multiplier reads them (what the C906's
/// data-dependent multiplier latency depends on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MulOps {
    /// Operand indices of the two factors.
    pub ops: [u8; 2],
    /// Whether each factor is read as a signed number.
    pub signed: [bool; 2],
    /// Only the low 32 bits of the factors matter (`mulw`, `th.mulaw`, `th.mulah`).
    pub narrow: bool,
    /// Operand index of the accumulator an accumulating multiply reads and writes
    /// (`th.mula`'s rd), None for a plain multiply.
    pub acc: Option<u8>,
}

/// The operands of a division or remainder (the divider's time depends on their sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivOps {
    /// Operand indices of the dividend and the divisor.
    pub ops: [u8; 2],
    /// Whether both are read as signed numbers.
    pub signed: bool,
}

/// Where a `vsetvl` row takes its operands (the vtype it sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VType {
    /// Immediate operand `k` is the vtype.
    Imm(u8),
    /// Register operand `k` holds the vtype (unknown statically).
    Reg(u8),
}

/// The function that executes a row in the simulator. Operands arrive in assembly order.
pub type Sem = Box<dyn Fn(&mut Hart, &mut dyn Bus, &[i64]) -> Result<(), Trap> + Send + Sync>;

/// Identifies a row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Form(pub u16);

/// One instruction form.
pub struct Row {
    pub form: Form,
    pub mnemonic: &'static str,
    /// Bits fixed by the form, and their values.
    pub mask: u32,
    pub bits: u32,
    pub ops: Vec<OpSpec>,
    /// Extensions that provide this form (any one suffices).
    pub ext: ExtSet,
    pub class: Class,
    pub mem: Option<Mem>,
    pub rules: Vec<Rule>,
    /// Vector dialect whose vtype this row reads, if any.
    pub vdialect: Option<VDialect>,
    /// Name of a more general row whose encodings include this one's (`zext.h` ⊂ `packw`);
    /// decoding prefers the more specific row.
    pub specializes: Option<&'static str>,
    /// Control flow.
    pub flow: Flow,
    /// For a conditional branch, the row that branches on the opposite condition.
    pub inverse: Option<Form>,
    /// What is known of the integer result's upper bits.
    pub result: Extend,
    /// The result as address arithmetic, where it is that.
    pub arith: Option<Arith>,
    /// For a multiply: its factors and how they are read.
    pub mul: Option<MulOps>,
    /// For a division or remainder: its dividend and divisor and how they are read.
    pub div: Option<DivOps>,
    /// For a `vsetvl` row: where its vtype comes from.
    pub vset: Option<VType>,
    /// The row of the other vector dialect with the same operands and meaning (`vadd.vv`
    /// and `th.vadd.vv`), for dialect-neutral kernels; masked forms differ in their mask
    /// layout and are not mapped (see `Func::emit`).
    pub twin: Option<Form>,
    /// Declared by the row generator: this form means the same in both vector dialects.
    pub same_in_both_dialects: bool,
    /// How Go's assembler writes this form as exactly this one instruction, if it can.
    pub go: Option<go::GoAsm>,
    pub sem: Sem,
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Row({} {:08x}/{:08x})", self.mnemonic, self.bits, self.mask)
    }
}

/// Maximum operands of any row.
pub const MAX_OPS: usize = 6;

/// A concrete instruction: a form and its operand values in assembly order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Inst {
    pub form: Form,
    pub ops: [i64; MAX_OPS],
}

impl Inst {
    pub fn new(form: Form, ops: &[i64]) -> Inst {
        let mut a = [0; MAX_OPS];
        a[..ops.len()].copy_from_slice(ops);
        Inst { form, ops: a }
    }
    pub fn row(&self) -> &'static Row {
        table().row(self.form)
    }
    /// Operand values (as many as the row has).
    pub fn args(&self) -> &[i64] {
        &self.ops[..self.row().ops.len()]
    }
    pub fn encode(&self) -> Result<u32, OperandError> {
        self.row().encode(self.args())
    }
}

/// Why an operand value does not fit its row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandError {
    pub mnemonic: &'static str,
    pub operand: &'static str,
    pub reason: String,
}

impl fmt::Display for OperandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` operand `{}`: {}", self.mnemonic, self.operand, self.reason)
    }
}

impl std::error::Error for OperandError {}

impl Kind {
    /// The range of values the kind accepts (before alignment), for checks and generators.
    pub fn range(&self) -> (i64, i64) {
        match *self {
            Kind::X | Kind::XMem | Kind::V(_) => (0, 31),
            Kind::Imm(s) | Kind::MemOff(s) | Kind::Rel(s) => (s.min, s.max),
            Kind::Vm => (0, 1),
            Kind::V0 => (0, 0),
            Kind::VtypeTh => (0, 0x7f),
            Kind::Vtype => (0, 0xff),
            Kind::Csr => (0, 0xfff),
            Kind::FenceSet => (0, 15),
            Kind::Lit(v) => (v, v),
        }
    }
    pub fn is_reg(&self) -> bool {
        matches!(self, Kind::X | Kind::XMem | Kind::V(_))
    }
    pub fn is_xreg(&self) -> bool {
        matches!(self, Kind::X | Kind::XMem)
    }
}

impl Row {
    /// Checks one operand value against its spec.
    pub fn check_operand(&self, i: usize, v: i64) -> Result<(), OperandError> {
        let op = &self.ops[i];
        let err = |reason: String| OperandError { mnemonic: self.mnemonic, operand: op.name, reason };
        let (lo, hi) = op.kind.range();
        match op.kind {
            Kind::X | Kind::XMem | Kind::V(_) => {
                if !(lo..=hi).contains(&v) {
                    return Err(err(format!("register number {v} is not 0..31")));
                }
            }
            Kind::Imm(s) | Kind::MemOff(s) | Kind::Rel(s) => {
                if v < s.min || v > s.max {
                    return Err(err(format!("immediate {v} out of range {}..={}", s.min, s.max)));
                }
                if s.align > 1 && v % s.align as i64 != 0 {
                    return Err(err(format!("immediate {v} is not a multiple of {}", s.align)));
                }
            }
            Kind::VtypeTh => {
                if !(lo..=hi).contains(&v) || (v >> 2) & 7 > 3 {
                    return Err(err(format!("vtype {v:#x} is not e8..e64, m1..m8, d1..d8")));
                }
            }
            Kind::Vtype => {
                if !(lo..=hi).contains(&v) || (v >> 3) & 7 > 3 || v & 7 == 4 {
                    return Err(err(format!("vtype {v:#x} is not e8..e64, mf8..m8")));
                }
            }
            Kind::Lit(l) if v != l => return Err(err(format!("must be {l}, not {v}"))),
            Kind::V0 if v != 0 => return Err(err(format!("must be v0, not v{v}"))),
            _ => {
                if !(lo..=hi).contains(&v) {
                    return Err(err(format!("value {v} out of range {lo}..={hi}")));
                }
            }
        }
        Ok(())
    }

    /// Checks the row's cross-operand rules.
    pub fn check_rules(&self, ops: &[i64]) -> Result<(), OperandError> {
        let vm = self.ops.iter().position(|o| o.kind == Kind::Vm);
        for r in &self.rules {
            let fail = |operand: &'static str, reason: String| {
                Err(OperandError { mnemonic: self.mnemonic, operand, reason })
            };
            match *r {
                Rule::VdNotV0WhenMasked => {
                    if let Some(m) = vm {
                        if ops[m] == 0 && ops[0] == 0 {
                            return fail(self.ops[0].name, "a masked instruction cannot write v0".into());
                        }
                    }
                }
                Rule::VdNotSrc(s) => {
                    if ops[0] == ops[s as usize] {
                        return fail(
                            self.ops[0].name,
                            format!("destination must differ from `{}`", self.ops[s as usize].name),
                        );
                    }
                }
                Rule::Ge(a, b) => {
                    if ops[a as usize] < ops[b as usize] {
                        return fail(
                            self.ops[a as usize].name,
                            format!("must be >= `{}`", self.ops[b as usize].name),
                        );
                    }
                }
                Rule::Differ(a, b) => {
                    if ops[a as usize] == ops[b as usize] {
                        return fail(
                            self.ops[a as usize].name,
                            format!("must differ from `{}`", self.ops[b as usize].name),
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Encodes operand values (assembly order) into the instruction word.
    pub fn encode(&self, ops: &[i64]) -> Result<u32, OperandError> {
        if ops.len() != self.ops.len() {
            return Err(OperandError {
                mnemonic: self.mnemonic,
                operand: "",
                reason: format!("takes {} operands, got {}", self.ops.len(), ops.len()),
            });
        }
        let mut w = self.bits;
        for (i, (op, &v)) in self.ops.iter().zip(ops).enumerate() {
            self.check_operand(i, v)?;
            w = scatter(op.field, v as u64, w);
        }
        self.check_rules(ops)?;
        Ok(w)
    }

    /// Extracts operand values from a word that matches this row.
    pub fn decode_operands(&self, w: u32) -> [i64; MAX_OPS] {
        let mut out = [0i64; MAX_OPS];
        for (i, op) in self.ops.iter().enumerate() {
            out[i] = match op.kind {
                Kind::Lit(v) => v,
                Kind::V0 => 0,
                Kind::Imm(s) | Kind::MemOff(s) | Kind::Rel(s) if s.min < 0 => {
                    let width = field_width(op.field);
                    let raw = gather(op.field, w);
                    ((raw << (64 - width)) as i64) >> (64 - width)
                }
                _ => gather(op.field, w) as i64,
            };
        }
        out
    }

    /// Bits not covered by the fixed mask or by any operand field (should be none).
    pub fn unaccounted_bits(&self) -> u32 {
        let covered = self.ops.iter().fold(self.mask, |m, o| m | field_mask(o.field));
        !covered
    }

    /// The systematic Rust name: `th.lrwu` → `ThLrwu`, `vadd.vv` → `VaddVv`.
    pub fn rust_name(&self) -> String {
        rust_name(self.mnemonic)
    }

    /// The snake-case builder method name: `th.lrwu` → `th_lrwu`.
    pub fn method_name(&self) -> String {
        method_name(self.mnemonic)
    }

    /// Index of the `vm` operand, if the row has one.
    pub fn vm_operand(&self) -> Option<usize> {
        self.ops.iter().position(|o| o.kind == Kind::Vm)
    }

    /// What the instruction does to control flow, given its operands: `reg(k)` is operand
    /// k's register number and `imm(k)` its immediate, when known.
    pub fn control(&self, reg: impl Fn(usize) -> Option<u8>, imm: impl Fn(usize) -> Option<i64>) -> Control {
        match self.flow {
            Flow::Seq => Control::Next,
            Flow::Branch { .. } => Control::Branch,
            Flow::Jal { link, .. } => match reg(link as usize) {
                Some(0) => Control::Jump,
                _ => Control::Call,
            },
            Flow::Jalr { link, base, off } => match (reg(link as usize), reg(base as usize), imm(off as usize)) {
                (Some(0), Some(1), Some(0)) => Control::Return,
                (Some(0), _, _) => Control::IndirectJump,
                _ => Control::Call,
            },
        }
    }

    /// The PC-relative target operand of a branch or `jal`.
    pub fn target_operand(&self) -> Option<usize> {
        match self.flow {
            Flow::Branch { target, .. } | Flow::Jal { target, .. } => Some(target as usize),
            _ => None,
        }
    }

    /// Whether the row can transfer control anywhere but the next instruction.
    pub fn is_control(&self) -> bool {
        self.flow != Flow::Seq
    }
}

impl Inst {
    /// [`Row::control`] for a decoded instruction.
    pub fn control(&self) -> Control {
        let row = self.row();
        let ops = self.args();
        let reg = |k: usize| row.ops.get(k).filter(|o| o.kind.is_reg()).map(|_| ops[k] as u8);
        let imm = |k: usize| row.ops.get(k).filter(|o| !o.kind.is_reg()).map(|_| ops[k]);
        row.control(reg, imm)
    }
}

/// `th.lrwu` → `ThLrwu`.
pub fn rust_name(mnemonic: &str) -> String {
    mnemonic
        .split('.')
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// `th.lrwu` → `th_lrwu`.
pub fn method_name(mnemonic: &str) -> String {
    mnemonic.replace('.', "_")
}

/// All rows, with indices by mnemonic and major opcode.
pub struct Table {
    rows: Vec<Row>,
    by_name: HashMap<&'static str, Form>,
    by_opcode: Vec<Vec<Form>>,
}

static TABLE: LazyLock<Table> = LazyLock::new(Table::build);

/// The ISA table.
pub fn table() -> &'static Table {
    &TABLE
}

impl Table {
    fn build() -> Table {
        let mut defs = Vec::new();
        scalar::rows(&mut defs);
        thead::rows(&mut defs);
        vector::rows(&mut defs);
        let mut rows = Vec::with_capacity(defs.len());
        let mut by_name = HashMap::new();
        let mut by_opcode = vec![Vec::new(); 128];
        for (i, d) in defs.into_iter().enumerate() {
            let form = Form(i as u16);
            let row = d.finish(form);
            let prev = by_name.insert(row.mnemonic, form);
            assert!(prev.is_none(), "ISA table: mnemonic {} defined twice", row.mnemonic);
            by_opcode[(row.bits & 0x7f) as usize].push(form);
            rows.push(row);
        }
        // Branch inverses, checked both ways.
        for i in 0..rows.len() {
            if let Flow::Branch { inverse, .. } = rows[i].flow {
                let f = *by_name.get(inverse).unwrap_or_else(|| panic!("ISA table: {} names inverse {inverse}, which is not a row", rows[i].mnemonic));
                let back = match rows[f.0 as usize].flow {
                    Flow::Branch { inverse, .. } => inverse,
                    _ => panic!("ISA table: inverse {inverse} of {} is not a branch", rows[i].mnemonic),
                };
                assert_eq!(back, rows[i].mnemonic, "ISA table: {inverse} is not the inverse of {}", rows[i].mnemonic);
                rows[i].inverse = Some(f);
            }
        }
        // Dialect twins: the XTheadVector row `th.X` and the RVV 1.0 row `X` declared as
        // sharing their meaning, with the same operands (the encodings may differ: vid.v).
        for i in 0..rows.len() {
            if rows[i].vdialect != Some(VDialect::V1) || !rows[i].same_in_both_dialects {
                continue;
            }
            let Some(&f) = by_name.get(format!("th.{}", rows[i].mnemonic).as_str()) else { continue };
            let (a, b) = (&rows[i], &rows[f.0 as usize]);
            if !b.same_in_both_dialects {
                continue;
            }
            let same_ops = a.ops.len() == b.ops.len() && a.ops.iter().zip(&b.ops).all(|(x, y)| x.kind == y.kind && x.role == y.role);
            assert!(same_ops, "ISA table: {} and {} are declared twins but their operands differ", a.mnemonic, b.mnemonic);
            rows[i].twin = Some(f);
            rows[f.0 as usize].twin = Some(Form(i as u16));
        }
        Table { rows, by_name, by_opcode }
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }
    pub fn row(&self, f: Form) -> &Row {
        &self.rows[f.0 as usize]
    }
    pub fn lookup(&self, mnemonic: &str) -> Option<Form> {
        self.by_name.get(mnemonic).copied()
    }
    /// The form for a mnemonic known to exist (kernel code and tests).
    pub fn form(&self, mnemonic: &str) -> Form {
        self.lookup(mnemonic).unwrap_or_else(|| panic!("no ISA row named {mnemonic}"))
    }

    /// Decodes a word among the rows that `exts` allows. When rows overlap (a row that
    /// specializes another) the one with more fixed bits wins.
    pub fn decode(&self, w: u32, exts: ExtSet) -> Option<Inst> {
        let mut best: Option<&Row> = None;
        for &f in &self.by_opcode[(w & 0x7f) as usize] {
            let r = self.row(f);
            if w & r.mask == r.bits && r.ext.intersects(exts) && best.is_none_or(|b| r.mask.count_ones() > b.mask.count_ones()) {
                best = Some(r);
            }
        }
        best.map(|r| Inst { form: r.form, ops: r.decode_operands(w) })
    }
}

/// The extensions every target has, used where no target is given.
pub fn all_exts_with(dialect: VDialect) -> ExtSet {
    let mut s = ExtSet::EMPTY;
    for &e in Ext::ALL {
        let skip = match dialect {
            VDialect::Thead => matches!(e, Ext::V | Ext::Zvkb | Ext::Zvbb | Ext::Zvbc | Ext::Zvkg),
            VDialect::V1 => e == Ext::XTheadVector,
        };
        if !skip {
            s = s.union(ExtSet::one(e));
        }
    }
    s
}

/// Table consistency checks (run by the tests; public so the negative controls can feed
/// them broken rows).
pub mod consistency {
    use super::*;

    /// A row's encoding facts, as the checks need them.
    #[derive(Clone, Copy, Debug)]
    pub struct Shape<'a> {
        pub name: &'a str,
        pub mask: u32,
        pub bits: u32,
        pub fields: u32,
        pub ext: ExtSet,
        pub specializes: Option<&'a str>,
    }

    impl<'a> From<&'a Row> for Shape<'a> {
        fn from(r: &'a Row) -> Self {
            let fields = r.ops.iter().fold(0, |m, o| m | field_mask(o.field));
            Shape { name: r.mnemonic, mask: r.mask, bits: r.bits, fields, ext: r.ext, specializes: r.specializes }
        }
    }

    /// Rows that can both be active in one target and accept a common word, and neither
    /// declares that it specializes the other.
    pub fn overlaps<'a>(rows: &[Shape<'a>], worlds: &[ExtSet]) -> Vec<(&'a str, &'a str)> {
        let mut out = Vec::new();
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i + 1..] {
                if a.bits & 0x7f != b.bits & 0x7f {
                    continue;
                }
                let same_world = worlds.iter().any(|w| a.ext.intersects(*w) && b.ext.intersects(*w));
                let common = a.mask & b.mask;
                if same_world && (a.bits ^ b.bits) & common == 0 && a.specializes != Some(b.name) && b.specializes != Some(a.name) {
                    out.push((a.name, b.name));
                }
            }
        }
        out
    }

    /// Rows with instruction bits that are neither fixed nor an operand's, or with operand
    /// fields that overlap the fixed bits or each other.
    pub fn coverage_errors(rows: &[&Row]) -> Vec<String> {
        let mut out = Vec::new();
        for r in rows {
            if r.unaccounted_bits() != 0 {
                out.push(format!("{}: bits {:08x} unaccounted", r.mnemonic, r.unaccounted_bits()));
            }
            let mut seen = r.mask;
            for o in &r.ops {
                let m = field_mask(o.field);
                if seen & m != 0 {
                    out.push(format!("{}: operand `{}` overlaps fixed bits or another operand ({:08x})", r.mnemonic, o.name, seen & m));
                }
                seen |= m;
            }
            if r.bits & !r.mask != 0 {
                out.push(format!("{}: fixed value has bits outside its mask", r.mnemonic));
            }
        }
        out
    }

    /// Extension worlds: sets of extensions that can be enabled together.
    pub fn worlds() -> Vec<ExtSet> {
        vec![all_exts_with(VDialect::Thead), all_exts_with(VDialect::V1)]
    }
}
