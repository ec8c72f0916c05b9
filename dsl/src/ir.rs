//! The intermediate representation every stage shares: a function as a list of items
//! (instructions over physical and virtual registers, labels, comments, regions a kernel
//! declares), its registers, labels, stack slots, arguments and declared leaks, and what the
//! lowering leaves (the frame, the spills). The builder ([`crate::func`]) makes it, the
//! analyses ([`crate::analysis`]) read it, the schedulers, the allocator and the lowering
//! transform it, the checks and the emitters read the result.

use crate::abi::Abi;
use crate::entry::{Entry, Ret, Ty};
use crate::isa::{table, Form, Row};
use crate::target::Target;
use std::fmt;

/// A register: physical (`X`, `V`) or virtual (allocated later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reg {
    X(u8),
    V(u8),
    VirtX(u32),
    VirtV(u32),
}

impl Reg {
    pub fn is_vector(self) -> bool {
        matches!(self, Reg::V(_) | Reg::VirtV(_))
    }
    pub fn is_virtual(self) -> bool {
        matches!(self, Reg::VirtX(_) | Reg::VirtV(_))
    }
    /// The physical register number, if physical.
    pub fn phys(self) -> Option<u8> {
        match self {
            Reg::X(n) | Reg::V(n) => Some(n),
            _ => None,
        }
    }
}

/// Physical integer registers by ABI name.
pub mod x {
    use super::Reg;
    pub const ZERO: Reg = Reg::X(0);
    pub const RA: Reg = Reg::X(1);
    pub const SP: Reg = Reg::X(2);
    pub const GP: Reg = Reg::X(3);
    pub const TP: Reg = Reg::X(4);
    pub const T0: Reg = Reg::X(5);
    pub const A0: Reg = Reg::X(10);
}

/// A position in a function's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub u32);

/// A stack slot declared by the kernel (laid out by the frame builder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slot(pub u32);

/// An instruction operand in the builder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opnd {
    Reg(Reg),
    Imm(i64),
    /// Branch/jump target.
    Label(Label),
    /// `%pcrel_hi(sym + addend)` (the `auipc` of an address materialization).
    PcrelHi { sym: String, addend: i64 },
    /// `%pcrel_lo(anchor)`: the low part matching the `auipc` at `anchor`.
    PcrelLo { anchor: Label },
    /// Offset of a byte within a stack slot (resolved when the frame is laid out).
    Stack { slot: Slot, off: i64 },
}

impl From<Reg> for Opnd {
    fn from(r: Reg) -> Self {
        Opnd::Reg(r)
    }
}
impl From<&Reg> for Opnd {
    fn from(r: &Reg) -> Self {
        Opnd::Reg(*r)
    }
}
impl From<Label> for Opnd {
    fn from(l: Label) -> Self {
        Opnd::Label(l)
    }
}
macro_rules! imm_from {
    ($($t:ty),*) => {$(impl From<$t> for Opnd { fn from(v: $t) -> Self { Opnd::Imm(v as i64) } })*};
}
imm_from!(i64, i32, u32, u8, u16, usize, i8, i16);
impl From<u64> for Opnd {
    fn from(v: u64) -> Self {
        Opnd::Imm(v as i64)
    }
}

/// Where in the kernel source an instruction came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: &'static str,
    pub line: u32,
}

/// One instruction in a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstItem {
    pub form: Form,
    pub ops: Vec<Opnd>,
    pub comment: Option<String>,
    pub loc: Option<Loc>,
    /// Every register this instruction writes holds public data (set by allocation from
    /// [`Func::public`] declarations); the epilogue need not wipe it.
    pub public_def: bool,
    /// The declared leak (index into [`Func::leaks`]) whose region this instruction is in.
    pub leak: Option<u16>,
}

impl InstItem {
    pub fn row(&self) -> &'static Row {
        table().row(self.form)
    }
    /// A new instruction (no comment, location or leak region).
    pub fn new(form: Form, ops: Vec<Opnd>, public_def: bool) -> InstItem {
        InstItem { form, ops, comment: None, loc: None, public_def, leak: None }
    }

    /// What the instruction does to control flow (virtual registers count as neither
    /// `zero` nor `ra`).
    pub fn control(&self) -> crate::isa::Control {
        let reg = |k: usize| match self.ops.get(k) {
            Some(Opnd::Reg(r)) => Some(r.phys().unwrap_or(u8::MAX)),
            _ => None,
        };
        let imm = |k: usize| match self.ops.get(k) {
            Some(Opnd::Imm(v)) => Some(*v),
            _ => None,
        };
        self.row().control(reg, imm)
    }

    /// The label a branch or jump goes to.
    pub fn target(&self) -> Option<Label> {
        match self.ops.get(self.row().target_operand()?) {
            Some(Opnd::Label(l)) => Some(*l),
            _ => None,
        }
    }

    /// Registers this instruction reads and writes (per the row's roles).
    pub fn regs(&self) -> impl Iterator<Item = (crate::isa::Role, Reg)> + '_ {
        self.regs_at().map(|(_, rr)| rr)
    }

    /// [`InstItem::regs`] with each register's operand index.
    pub fn regs_at(&self) -> impl Iterator<Item = (usize, (crate::isa::Role, Reg))> + '_ {
        self.row().ops.iter().zip(&self.ops).enumerate().filter_map(|(k, (spec, o))| match o {
            Opnd::Reg(r) => Some((k, (spec.role, *r))),
            _ => None,
        })
    }
}

/// An element of a function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Inst(InstItem),
    Label(Label),
    Comment(String),
    /// A return: the epilogue (restores, wipes) and `ret` are expanded here.
    Exit,
    /// Raw bytes in the code (constant pools read by assembly files; kgen's own kernels
    /// keep data in .rodata).
    Data(Vec<u8>),
    /// Straight-line code the lowering rearranges (see [`Region`]) before allocation.
    Region(Region),
}

/// A block of straight-line code whose order the lowering chooses: the kernel says what
/// may be rearranged, the lowering schedules it for the C906 against the registers the
/// allocator has (values live across the block count against them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Region {
    /// List-scheduled for the C906's latencies (`sched::schedule`): an instruction moves up
    /// by at most `window` places; `carried`: the region is a loop's body, prioritised by
    /// the paths into the next iteration (`sched::schedule_block`).
    Schedule { items: Vec<Item>, window: usize, carried: bool },
    /// Two independent streams merged by modeled issue time (`sched::merge_timed_cfg`),
    /// their memory accesses ordered by `order`.
    Merge { a: Vec<Item>, b: Vec<Item>, lookahead: [usize; 2], order: crate::ir::MemOrder },
    /// Two independent streams, `b` spread evenly between the instructions of `a`
    /// ([`crate::analysis::interleave`]).
    Interleave { a: Vec<Item>, b: Vec<Item> },
}

impl Region {
    /// The items of the region's streams, in source order.
    pub fn parts(&self) -> Vec<&Vec<Item>> {
        match self {
            Region::Schedule { items, .. } => vec![items],
            Region::Merge { a, b, .. } | Region::Interleave { a, b } => vec![a, b],
        }
    }
    pub fn parts_mut(&mut self) -> Vec<&mut Vec<Item>> {
        match self {
            Region::Schedule { items, .. } => vec![items],
            Region::Merge { a, b, .. } | Region::Interleave { a, b } => vec![a, b],
        }
    }
}

/// Calls `g` on every instruction of `items`, inside regions too.
pub fn for_each_inst(items: &[Item], g: &mut dyn FnMut(&InstItem)) {
    for it in items {
        match it {
            Item::Inst(i) => g(i),
            Item::Region(r) => {
                for p in r.parts() {
                    for_each_inst(p, g);
                }
            }
            _ => {}
        }
    }
}

/// As [`for_each_inst`], mutably.
pub fn for_each_inst_mut(items: &mut [Item], g: &mut dyn FnMut(&mut InstItem)) {
    for it in items {
        match it {
            Item::Inst(i) => g(i),
            Item::Region(r) => {
                for p in r.parts_mut() {
                    for_each_inst_mut(p, g);
                }
            }
            _ => {}
        }
    }
}

/// How a virtual register is to be allocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VRegInfo {
    pub name: String,
    /// For vector registers, the group size (LMUL); 1 for integer registers.
    pub group: u8,
    /// Physical register it must live in (arguments).
    pub pinned: Option<u8>,
    /// Holds only public values (pointers, table addresses, constants, published output).
    pub public: bool,
    /// Registers `offset..` of another vector register group (see [`Func::vpart`]).
    pub part_of: Option<(u32, u8)>,
    /// Made by the allocator to carry a spilled value between its slot and one instruction:
    /// never spilled itself.
    pub spill_temp: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelInfo {
    /// Printed name (unique in the function: a name used in several scopes is numbered).
    pub name: Option<String>,
    pub bound: bool,
    /// The label this one turned out to be (a scope's reference to a label outside it).
    pub alias: Option<Label>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotInfo {
    pub name: String,
    pub size: u32,
    pub align: u32,
    /// Holds secret data: wiped by the epilogue, checked by the secrets check.
    pub secret: bool,
    /// Made by the allocator for a spilled value (its frame bytes may be shared).
    pub spill: bool,
    /// `(group, member)`: declared inside [`Func::sharing`]; laid out from the start of the
    /// group's frame bytes with the other slots of its member, over the other members'.
    pub share: Option<(u32, u32)>,
}

/// What a pointer or value argument carries, for the ABI frame, the checks and the docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgInfo {
    pub name: String,
    pub reg: Reg,
    pub ty: Ty,
    /// For a pointer, the alignment in bytes the caller guarantees.
    pub align: u32,
    /// The memory it points to (or the value itself) is secret.
    pub secret: bool,
    /// Byte ranges [lo, hi) of secret memory that are public nonetheless (a structure's
    /// length field, a nonce next to a key).
    pub public_ranges: Vec<(i64, i64)>,
}

/// A leak the kernel declares on purpose, for the instructions of one region (reported as
/// declared by the constant-time lint; a declaration no finding needs is an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredLeak {
    pub kind: LeakKind,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeakKind {
    SecretAddress,
    SecretBranch,
    SecretMulTiming,
    SecretDivTiming,
}

/// An error in a kernel description, naming the function, the instruction and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    pub func: String,
    /// Instruction text as written (mnemonic and operands), or empty.
    pub inst: String,
    pub index: Option<usize>,
    pub loc: Option<Loc>,
    pub reason: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.func)?;
        if let Some(i) = self.index {
            write!(f, ", instruction {i}")?;
        }
        if !self.inst.is_empty() {
            write!(f, " `{}`", self.inst)?;
        }
        if let Some(l) = self.loc {
            write!(f, " ({}:{})", l.file, l.line)?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for BuildError {}

/// A function under construction (and, after allocation, with physical registers).
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub target: Target,
    pub abi: Abi,
    pub items: Vec<Item>,
    pub labels: Vec<LabelInfo>,
    pub vregs: Vec<VRegInfo>,
    pub args: Vec<ArgInfo>,
    pub slots: Vec<SlotInfo>,
    pub leaks: Vec<DeclaredLeak>,
    /// The result (a0 at return).
    pub result: Ret,
    /// The entry point the function implements, if it was built from one.
    pub entry: Option<&'static Entry>,
    /// One-line summary for headers.
    pub summary: String,
    /// Wipe the caller-saved registers this function writes (and its secret stack slots) at
    /// every exit.
    pub wipe: bool,
    /// Bytes of stack a host allocates for the function before its first instruction, at
    /// sp+8 .. sp+8+host_frame (Go's assembler, for a `TEXT $N` frame; 0 bytes elsewhere).
    /// The lowering sets it; the checks allow accesses there.
    pub host_frame: u32,
    pub errors: Vec<BuildError>,
    pub(crate) loc: Option<Loc>,
    /// The leak region instructions are appended in (see [`Func::leaking`]).
    pub(crate) leak_region: Option<u16>,
    /// Label names by scope, innermost last (see [`Func::scope`]).
    pub(crate) scopes: Vec<Vec<(String, Label)>>,
    /// Code placed after the rest of the function (see [`Func::cold`]).
    pub(crate) cold: Vec<Item>,
    /// Where a return jumps inside [`Func::inline`].
    pub(crate) exit_to: Option<Label>,
    /// The frame-sharing group and member new slots join (see [`Func::sharing`]), and the
    /// groups made so far.
    pub(crate) share: Option<(u32, u32)>,
    pub(crate) share_groups: u32,
}

/// How the memory accesses of two merged streams are ordered against each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemOrder {
    /// The streams touch disjoint memory (or only read the same bytes): their accesses may
    /// be placed in any order.
    #[default]
    Free,
    /// Stream `b` reads memory that stream `a` then overwrites (a buffer `b` consumes while
    /// `a` refills it): every store of `a` is placed after every load of `b`. The streams'
    /// other accesses are unordered (the kernel guarantees they touch different bytes).
    BReadsFirst,
}

/// The frame the lowering built (for reports and checks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Bytes the function allocates itself (`addi sp, sp, -size`).
    pub size: u32,
    /// Bytes of locals the host allocates (Go's `TEXT $N`), at sp+8.. ([`Func::host_frame`]).
    pub host: u32,
    /// Saved registers and their offsets from the adjusted sp.
    pub saved: Vec<(u8, u32)>,
    /// Slot offsets from the adjusted sp.
    pub slots: Vec<u32>,
    /// Registers written by the body (before the epilogue's wipes).
    pub written: Vec<u8>,
    pub uses_vector: bool,
    /// What the allocator spilled.
    pub spills: crate::ir::Spills,
}

/// What allocation spilled (for reports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spills {
    /// The values spilled, by role name.
    pub values: Vec<String>,
    pub stores: usize,
    pub reloads: usize,
    /// The values remade where they are read instead (see the allocator's remaking), by role name.
    pub remade: Vec<String>,
    /// Instructions the remaking added.
    pub remakes: usize,
    /// Modeled C906 cycles the spill and remake code costs, loops counted 8 times per level.
    pub cost: u64,
}
