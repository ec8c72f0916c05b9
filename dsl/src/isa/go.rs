//! How Go's assembler (cmd/asm, Go 1.23, GOARCH=riscv64) writes a row: the Go mnemonic and
//! operand order under which it assembles to exactly this one instruction, whatever
//! GORISCV64 says. A row without a Go spelling is written as a `WORD` by the Go output.
//!
//! The facts, from `src/cmd/internal/obj/riscv` (Go 1.23) and checked instruction by
//! instruction against `go tool asm` (`tests/go_asm.rs`):
//! - three-operand operations are `OP rs2, rs1, rd` (the destination last, the sources
//!   reversed); the immediate forms are the register mnemonic with `$imm` first (`ADD $1,
//!   X5, X6` is `addi x6, x5, 1`; progedit picks the I-form);
//! - `OP a, b` stands for `OP a, b, b` only for the mnemonics progedit completes that way
//!   (not SLT/SLTU, whose two-operand form would read x0);
//! - loads are `MOV/MOVW/MOVWU/MOVH/MOVHU/MOVB/MOVBU off(Xb), Xd`, stores `MOV.. Xs, off(Xb)`;
//! - branches read naturally (`BLTU X5, X6, L` branches when x5 <u x6), with a label;
//! - LUI/AUIPC take the 20-bit immediate as a signed value;
//! - rotates (ROL/ROR/RORI/...) are left out: without GORISCV64=rva22u64 Go expands them to
//!   3 or 4 instructions through X31. So are the forms Go 1.23 has no encoding for (CSR
//!   access, the vector and T-Head extensions, Zbc, Zbkb's pack, Zicond), and `fence`,
//!   whose Go form takes no predecessor/successor sets;
//! - `jalr` is `JALR rd, off(rs1)` (the Go output writes returns as `RET` and refuses other
//!   indirect jumps; the spelling is for completeness and is checked like the rest).

/// An operand of a Go assembler line, by its index among the row's operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoOp {
    /// An integer register, `Xn`.
    Reg(u8),
    /// An immediate, `$v`.
    Imm(u8),
    /// A 20-bit upper immediate (the row's operand is 0..2^20), written signed.
    Upper(u8),
    /// A memory operand `off(Xbase)`.
    Mem { off: u8, base: u8 },
    /// A branch or jump target: a label the caller names.
    Label(u8),
}

/// One Go spelling of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoForm {
    pub mnemonic: &'static str,
    pub ops: &'static [GoOp],
    /// `OP x, y, y` may be written `OP x, y`: Go's progedit fills the middle register with
    /// the destination for this mnemonic.
    pub two_op: bool,
}

/// A row's Go spelling, with shorter ones for particular operand values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoAsm {
    pub form: GoForm,
    /// `(operand, value, spelling)`: used when operand `operand` is `value` (first match
    /// wins): `addi rd, zero, imm` is `MOV $imm, rd`.
    pub special: &'static [(u8, i64, GoForm)],
}

/// Integer registers Go's assembler has no plain name for: x4 and x27 are refused as `X4`
/// and `X27` (they are TP and g), x3 under `-shared`.
pub const GO_UNNAMED_X: [u8; 3] = [3, 4, 27];

impl GoAsm {
    /// The line for operand values `vals` (assembly order), without the leading tab:
    /// `ADD\t$1, X5, X6`. `label(k)` names the target of operand k. Fails for a register
    /// Go cannot name.
    pub fn text(&self, vals: &[i64], label: &dyn Fn(usize) -> String) -> Result<String, String> {
        let form = self.special.iter().find(|(k, v, _)| vals.get(*k as usize) == Some(v)).map(|(_, _, f)| *f).unwrap_or(self.form);
        let reg = |k: u8| -> Result<String, String> {
            let r = vals[k as usize];
            if GO_UNNAMED_X.contains(&(r as u8)) {
                return Err(format!("Go's assembler has no name for x{r} usable here"));
            }
            Ok(format!("X{r}"))
        };
        let mut ops: Vec<GoOp> = form.ops.to_vec();
        // `OP a, b, b` → `OP a, b`.
        if form.two_op && ops.len() == 3 {
            if let (GoOp::Reg(m), GoOp::Reg(d)) = (ops[1], ops[2]) {
                if vals[m as usize] == vals[d as usize] {
                    ops.remove(1);
                }
            }
        }
        let mut parts = Vec::new();
        for o in ops {
            parts.push(match o {
                GoOp::Reg(k) => reg(k)?,
                GoOp::Imm(k) => format!("${}", vals[k as usize]),
                GoOp::Upper(k) => {
                    let v = vals[k as usize];
                    format!("${}", if v >= 1 << 19 { v - (1 << 20) } else { v })
                }
                GoOp::Mem { off, base } => match vals[off as usize] {
                    0 => format!("({})", reg(base)?),
                    v => format!("{v}({})", reg(base)?),
                },
                GoOp::Label(k) => label(k as usize),
            });
        }
        Ok(if parts.is_empty() { form.mnemonic.to_string() } else { format!("{}\t{}", form.mnemonic, parts.join(", ")) })
    }
}

use GoOp::*;

const R_OPS: &[GoOp] = &[Reg(2), Reg(1), Reg(0)];
const I_OPS: &[GoOp] = &[Imm(2), Reg(1), Reg(0)];
const UNARY_OPS: &[GoOp] = &[Reg(1), Reg(0)];
const LOAD_OPS: &[GoOp] = &[Mem { off: 1, base: 2 }, Reg(0)];
const STORE_OPS: &[GoOp] = &[Reg(0), Mem { off: 1, base: 2 }];
const BRANCH_OPS: &[GoOp] = &[Reg(0), Reg(1), Label(2)];
const UPPER_OPS: &[GoOp] = &[Upper(1), Reg(0)];

const fn form(mnemonic: &'static str, ops: &'static [GoOp], two_op: bool) -> GoForm {
    GoForm { mnemonic, ops, two_op }
}
const fn asm(form: GoForm) -> GoAsm {
    GoAsm { form, special: &[] }
}

/// `OP rs2, rs1, rd` (also `OP rs2, rd` when rs1 is rd).
pub(super) const fn r(mn: &'static str) -> GoAsm {
    asm(form(mn, R_OPS, true))
}
/// `OP rs2, rs1, rd`, always with three operands.
pub(super) const fn r3(mn: &'static str) -> GoAsm {
    asm(form(mn, R_OPS, false))
}
/// `OP $imm, rs1, rd` (also `OP $imm, rd` when rs1 is rd).
pub(super) const fn i(mn: &'static str) -> GoAsm {
    asm(form(mn, I_OPS, true))
}
/// `OP $imm, rs1, rd`, always with three operands.
pub(super) const fn i3(mn: &'static str) -> GoAsm {
    asm(form(mn, I_OPS, false))
}
/// `OP rs1, rd`.
pub(super) const fn unary(mn: &'static str) -> GoAsm {
    asm(form(mn, UNARY_OPS, false))
}
/// `OP off(rs1), rd`.
pub(super) const fn load(mn: &'static str) -> GoAsm {
    asm(form(mn, LOAD_OPS, false))
}
/// `OP rs2, off(rs1)`.
pub(super) const fn store(mn: &'static str) -> GoAsm {
    asm(form(mn, STORE_OPS, false))
}
/// `OP $imm20, rd` (LUI, AUIPC).
pub(super) const fn upper(mn: &'static str) -> GoAsm {
    asm(form(mn, UPPER_OPS, false))
}
/// `OP` without operands (ECALL, EBREAK).
pub(super) const fn bare(mn: &'static str) -> GoAsm {
    asm(form(mn, &[], false))
}
/// `JALR rd, off(rs1)`.
pub(super) const JALR: GoAsm = asm(form("JALR", &[Reg(0), Mem { off: 1, base: 2 }], false));
/// `OP rs1, rs2, label`.
pub(super) const fn branch(mn: &'static str, special: &'static [(u8, i64, GoForm)]) -> GoAsm {
    GoAsm { form: form(mn, BRANCH_OPS, false), special }
}
/// A spelling with `special` forms.
pub(super) const fn with(a: GoAsm, special: &'static [(u8, i64, GoForm)]) -> GoAsm {
    GoAsm { form: a.form, special }
}

// Shorter spellings, keyed by an operand's value (used by the row definitions).
/// `beq rs, zero` = `BEQZ rs`, and the like.
pub(super) const fn vs_zero(mn: &'static str) -> GoForm {
    form(mn, &[Reg(0), Label(2)], false)
}
/// `blt zero, rs` = `BGTZ rs`, and the like.
pub(super) const fn zero_vs(mn: &'static str) -> GoForm {
    form(mn, &[Reg(1), Label(2)], false)
}
/// `addi rd, zero, imm` = `MOV $imm, rd`.
pub(super) const MOV_IMM: GoForm = form("MOV", &[Imm(2), Reg(0)], false);
/// `OP rd, rs` (MOV, MOVW, NOT, SEQZ: rd = f(rs1)).
pub(super) const fn unary_form(mn: &'static str) -> GoForm {
    form(mn, UNARY_OPS, false)
}
/// `OP rd, zero, rs2` = `NEG rs2, rd` (NEG, NEGW, SNEZ).
pub(super) const fn of_rs2(mn: &'static str) -> GoForm {
    form(mn, &[Reg(2), Reg(0)], false)
}
/// `jal zero, label` = `JMP label`.
pub(super) const JMP: GoForm = form("JMP", &[Label(1)], false);
/// `jal rd, label`.
pub(super) const JAL: GoAsm = asm(form("JAL", &[Reg(0), Label(1)], false));
