//! The kernel builder: functions made of instructions over physical and virtual registers,
//! labels, comments, pseudo-instructions and references to read-only data.
//!
//! Builder calls never panic on bad input: the first error is kept with the function name,
//! the instruction and the reason, and [`Func::finish`] returns it.

use crate::abi::Abi;
use crate::entry::{Entry, Param, Ret, Ty};
use crate::isa::{table, Form, Kind, Row};
use crate::target::Target;
use crate::text::{operand_text, XNAMES};
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
    Merge { a: Vec<Item>, b: Vec<Item>, lookahead: [usize; 2], order: crate::sched::MemOrder },
    /// Two independent streams, `b` spread evenly between the instructions of `a`
    /// ([`interleave`]).
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
    loc: Option<Loc>,
    /// The leak region instructions are appended in (see [`Func::leaking`]).
    leak_region: Option<u16>,
    /// Label names by scope, innermost last (see [`Func::scope`]).
    scopes: Vec<Vec<(String, Label)>>,
    /// Code placed after the rest of the function (see [`Func::cold`]).
    cold: Vec<Item>,
}

fn render_opnd(f: &Func, k: Option<Kind>, o: &Opnd) -> String {
    if k == Some(Kind::XMem) {
        return format!("({})", render_opnd(f, None, o));
    }
    match o {
        Opnd::Reg(Reg::X(n)) => XNAMES[*n as usize].to_string(),
        Opnd::Reg(Reg::V(n)) => format!("v{n}"),
        Opnd::Reg(Reg::VirtX(n)) | Opnd::Reg(Reg::VirtV(n)) => format!("%{}", f.vregs[*n as usize].name),
        Opnd::Imm(v) => match k {
            Some(k) if !matches!(k, Kind::X | Kind::XMem | Kind::V(_) | Kind::Rel(_)) => operand_text(k, *v),
            _ => v.to_string(),
        },
        Opnd::Label(l) => f.label_name(*l),
        Opnd::PcrelHi { sym, addend } => {
            if *addend == 0 {
                format!("%pcrel_hi({sym})")
            } else {
                format!("%pcrel_hi({sym}+{addend})")
            }
        }
        Opnd::PcrelLo { anchor } => format!("%pcrel_lo({})", f.label_name(*anchor)),
        Opnd::Stack { slot, off } => format!("{}+{off}", f.slots[slot.0 as usize].name),
    }
}

impl Func {
    pub fn new(name: &str, target: &Target, abi: Abi) -> Func {
        Func {
            name: name.to_string(),
            target: target.clone(),
            abi,
            items: Vec::new(),
            labels: Vec::new(),
            vregs: Vec::new(),
            args: Vec::new(),
            slots: Vec::new(),
            leaks: Vec::new(),
            result: Ret::Void,
            entry: None,
            summary: String::new(),
            wipe: true,
            host_frame: 0,
            errors: Vec::new(),
            loc: None,
            leak_region: None,
            scopes: vec![Vec::new()],
            cold: Vec::new(),
        }
    }

    /// Sets the source location recorded with the following instructions (the macro calls it).
    pub fn at(&mut self, file: &'static str, line: u32) -> &mut Self {
        self.loc = Some(Loc { file, line });
        self
    }

    fn error(&mut self, inst: String, reason: String) {
        let mut index = 0;
        for_each_inst(&self.items, &mut |_| index += 1);
        let index = Some(index);
        self.errors.push(BuildError { func: self.name.clone(), inst, index, loc: self.loc, reason });
    }

    /// Records an error not tied to one instruction.
    pub fn fail(&mut self, reason: impl Into<String>) {
        self.errors.push(BuildError { func: self.name.clone(), inst: String::new(), index: None, loc: self.loc, reason: reason.into() });
    }

    // ---- registers, labels, slots ---------------------------------------------------------

    /// A new virtual integer register; `name` is its role (`key`, `counter`).
    pub fn xreg(&mut self, name: &str) -> Reg {
        self.vregs.push(VRegInfo { name: name.to_string(), group: 1, pinned: None, public: false, part_of: None, spill_temp: false });
        Reg::VirtX(self.vregs.len() as u32 - 1)
    }

    /// Several virtual integer registers named `name0`, `name1`, ...
    pub fn xregs<const N: usize>(&mut self, name: &str) -> [Reg; N] {
        std::array::from_fn(|i| self.xreg(&format!("{name}{i}")))
    }

    /// A new virtual vector register group of `lmul` registers.
    pub fn vreg(&mut self, name: &str, lmul: u8) -> Reg {
        self.vregs.push(VRegInfo { name: name.to_string(), group: lmul, pinned: None, public: false, part_of: None, spill_temp: false });
        Reg::VirtV(self.vregs.len() as u32 - 1)
    }

    /// Registers `offset..offset + lmul` of the vector group `parent` (a field of a segment
    /// load's destination, one register of an LMUL-8 group), as an operand of its own: it is
    /// allocated with its parent; writing it keeps the parent's other registers live.
    pub fn vpart(&mut self, parent: Reg, offset: u8, lmul: u8) -> Reg {
        let Reg::VirtV(p) = parent else {
            self.fail("vpart: the parent must be a virtual vector register");
            return parent;
        };
        let (root, base) = match self.vregs[p as usize].part_of {
            Some((r, o)) => (r, o + offset),
            None => (p, offset),
        };
        if base + lmul > self.vregs[root as usize].group {
            self.fail(format!("vpart: registers {base}..{} are outside `{}` ({} registers)", base + lmul, self.vregs[root as usize].name, self.vregs[root as usize].group));
        }
        let name = format!("{}[{base}]", self.vregs[root as usize].name);
        let public = self.vregs[root as usize].public;
        self.vregs.push(VRegInfo { name, group: lmul, pinned: None, public, part_of: Some((root, base)), spill_temp: false });
        Reg::VirtV(self.vregs.len() as u32 - 1)
    }

    pub fn vregs<const N: usize>(&mut self, name: &str, lmul: u8) -> [Reg; N] {
        std::array::from_fn(|i| self.vreg(&format!("{name}{i}"), lmul))
    }

    /// A function implementing entry point `e` for `variant`: named by the entry, with its
    /// parameters declared (in order: [`Func::params`] gives their registers) and its result.
    pub fn entry(e: &'static Entry, variant: &str, target: &Target, abi: Abi) -> Func {
        let mut f = Func::new(&e.symbol(variant), target, abi);
        if !e.abis.contains(&abi) {
            f.fail(format!("entry point {} has no {abi} form", e.symbol(variant)));
        }
        f.entry = Some(e);
        f.summary = e.summary.to_string();
        f.result = e.ret;
        for p in e.params {
            f.param(p);
        }
        f
    }

    /// The registers of the parameters, in declaration order.
    pub fn params<const N: usize>(&mut self) -> [Reg; N] {
        if self.args.len() != N {
            let n = self.args.len();
            self.fail(format!("the entry point has {n} parameters; the kernel asked for {N}"));
            return [Reg::X(0); N];
        }
        std::array::from_fn(|k| self.args[k].reg)
    }

    /// The next parameter: a virtual register pinned to a0, a1, ... for the whole function.
    pub fn param(&mut self, p: &Param) -> Reg {
        let r = self.arg(p.name, p.ty, p.secret);
        if let Some(a) = self.args.last_mut() {
            a.public_ranges.extend_from_slice(p.public);
        }
        r
    }

    /// The next argument: a virtual register pinned to a0, a1, ... for the whole function.
    /// `secret`: the data it points to (or, for a value argument, the value) is secret.
    pub fn arg(&mut self, name: &str, ty: Ty, secret: bool) -> Reg {
        let secret_value = secret && !ty.is_ptr();
        let n = self.args.len();
        if n >= 8 {
            self.fail(format!("argument `{name}`: more than 8 register arguments"));
        }
        self.vregs.push(VRegInfo { name: name.to_string(), group: 1, pinned: Some(10 + n as u8), public: !secret_value, part_of: None, spill_temp: false });
        let reg = Reg::VirtX(self.vregs.len() as u32 - 1);
        self.args.push(ArgInfo { name: name.to_string(), reg, ty, align: ty.align(), secret, public_ranges: Vec::new() });
        reg
    }

    /// Declares bytes [lo, hi) of the secret memory argument `arg` points to as public.
    pub fn public_bytes(&mut self, arg: Reg, lo: i64, hi: i64) {
        if let Some(a) = self.args.iter_mut().find(|a| a.reg == arg) {
            a.public_ranges.push((lo, hi));
        }
    }

    pub fn label(&mut self) -> Label {
        self.labels.push(LabelInfo { name: None, bound: false, alias: None });
        Label(self.labels.len() as u32 - 1)
    }

    /// The label with this name in the current scope, created on first use (the macro's
    /// `name:` and references).
    pub fn named_label(&mut self, name: &str) -> Label {
        let scope = self.scopes.last().expect("the function scope");
        if let Some((_, l)) = scope.iter().find(|(n, _)| n == name) {
            return *l;
        }
        // The printed name is unique: a name already used (in another scope) is numbered.
        let taken = |n: &str, labels: &[LabelInfo]| labels.iter().any(|l| l.name.as_deref() == Some(n));
        let mut printed = name.to_string();
        let mut k = 1;
        while taken(&printed, &self.labels) {
            printed = format!("{name}.{k}");
            k += 1;
        }
        self.labels.push(LabelInfo { name: Some(printed), bound: false, alias: None });
        let l = Label(self.labels.len() as u32 - 1);
        self.scopes.last_mut().expect("the function scope").push((name.to_string(), l));
        l
    }

    /// Runs `body` in a new label scope: the names it binds are its own (a Rust helper that
    /// binds `loop:` can be called twice in one function); a name it uses without binding
    /// refers to the enclosing scope's label of that name.
    pub fn scope<R>(&mut self, body: impl FnOnce(&mut Func) -> R) -> R {
        self.scopes.push(Vec::new());
        let r = body(self);
        let inner = self.scopes.pop().expect("pushed above");
        for (name, l) in inner {
            if self.labels[l.0 as usize].bound {
                continue;
            }
            let outer = self.scopes.last().expect("the function scope").iter().find(|(n, _)| *n == name).map(|(_, o)| *o);
            match outer {
                Some(o) => self.labels[l.0 as usize].alias = Some(o),
                None => self.scopes.last_mut().expect("the function scope").push((name, l)),
            }
        }
        r
    }

    /// Emits `body` out of line, after the rest of the function (rarely taken paths: the
    /// hot path falls through). `body` must end in a jump or a return.
    pub fn cold(&mut self, body: impl FnOnce(&mut Func)) {
        let items = self.capture(body);
        self.cold.extend(items);
    }

    /// Makes every reference to a label with an alias (a label of an enclosing scope, or an
    /// assembler `.set` alias) a reference to the label it stands for.
    pub(crate) fn resolve_aliases(&mut self) {
        let resolved: Vec<Label> = (0..self.labels.len()).map(|i| self.resolve(Label(i as u32))).collect();
        for_each_inst_mut(&mut self.items, &mut |i| {
            for o in &mut i.ops {
                if let Opnd::Label(l) | Opnd::PcrelLo { anchor: l } = o {
                    *l = resolved[l.0 as usize];
                }
            }
        });
    }

    /// The label `l` stands for (following scope aliases).
    pub fn resolve(&self, mut l: Label) -> Label {
        while let Some(a) = self.labels[l.0 as usize].alias {
            l = a;
        }
        l
    }

    pub fn label_name(&self, l: Label) -> String {
        match &self.labels[l.0 as usize].name {
            Some(n) => format!(".L{}_{n}", self.name),
            None => format!(".L{}_{}", self.name, l.0),
        }
    }

    /// Places `l` here.
    pub fn bind(&mut self, l: Label) {
        let info = &mut self.labels[l.0 as usize];
        if info.bound {
            let n = self.label_name(l);
            self.fail(format!("label {n} bound twice"));
            return;
        }
        info.bound = true;
        self.items.push(Item::Label(l));
    }

    /// Declares a stack slot of `size` bytes.
    pub fn slot(&mut self, name: &str, size: u32, align: u32, secret: bool) -> Slot {
        self.slots.push(SlotInfo { name: name.to_string(), size, align, secret });
        Slot(self.slots.len() as u32 - 1)
    }

    /// Declares that `r` only ever holds public values (a pointer, a table address, a
    /// constant, or data the function publishes): the epilogue does not wipe it. The
    /// secrets check verifies the claim independently.
    pub fn public(&mut self, r: Reg) {
        if let Reg::VirtX(i) | Reg::VirtV(i) = r {
            self.vregs[i as usize].public = true;
            if let Some((root, _)) = self.vregs[i as usize].part_of {
                self.vregs[root as usize].public = true;
            }
        }
    }

    pub fn comment(&mut self, s: impl Into<String>) {
        self.items.push(Item::Comment(s.into()));
    }

    /// Runs `body` with the leak `kind` declared for the instructions it appends: the
    /// constant-time lint reports such findings there as declared; elsewhere they are
    /// errors, and a declaration that no finding needs is an error too.
    pub fn leaking<R>(&mut self, kind: LeakKind, reason: &str, body: impl FnOnce(&mut Func) -> R) -> R {
        let idx = match self.leaks.iter().position(|l| l.kind == kind && l.reason == reason) {
            Some(i) => i,
            None => {
                self.leaks.push(DeclaredLeak { kind, reason: reason.to_string() });
                self.leaks.len() - 1
            }
        };
        let outer = self.leak_region.replace(idx as u16);
        let r = body(self);
        self.leak_region = outer;
        r
    }

    /// Text of an instruction as given, for error messages.
    pub fn describe(&self, mnemonic: &str, ops: &[Opnd]) -> String {
        let row = table().lookup(mnemonic).map(|f| table().row(f));
        let parts: Vec<String> =
            ops.iter().enumerate().map(|(i, o)| render_opnd(self, row.and_then(|r| r.ops.get(i)).map(|s| s.kind), o)).collect();
        format!("{mnemonic} {}", parts.join(", ")).trim_end().to_string()
    }

    /// Text of a recorded instruction.
    pub fn inst_text(&self, it: &InstItem) -> String {
        let row = it.row();
        let args: Vec<crate::text::Arg> =
            row.ops.iter().zip(&it.ops).map(|(s, o)| crate::text::Arg::Text(render_opnd(self, Some(s.kind), o))).collect();
        // Vm prints only when masked; operands() handles Val(0) only, so map it here.
        let args: Vec<crate::text::Arg> = args
            .into_iter()
            .zip(&it.ops)
            .zip(&row.ops)
            .map(|((a, o), s)| if s.kind == Kind::Vm { crate::text::Arg::Val(if *o == Opnd::Imm(0) { 0 } else { 1 }) } else { a })
            .collect();
        let ops = crate::text::operands(row, &args);
        if ops.is_empty() {
            row.mnemonic.to_string()
        } else {
            format!("{} {ops}", row.mnemonic)
        }
    }

    // ---- instructions -------------------------------------------------------------------

    /// Appends instruction `mnemonic` with operands in assembly order. Optional trailing
    /// operands (`vm`, literal operands) may be omitted.
    pub fn inst(&mut self, mnemonic: &str, ops: &[Opnd]) -> &mut Self {
        let Some(form) = table().lookup(mnemonic) else {
            let d = self.describe(mnemonic, ops);
            self.error(d, format!("unknown instruction `{mnemonic}`"));
            return self;
        };
        self.emit(form, ops.to_vec(), None);
        self
    }

    /// Like [`Func::inst`] with a comment printed after the instruction.
    pub fn inst_c(&mut self, mnemonic: &str, ops: &[Opnd], comment: &str) -> &mut Self {
        let Some(form) = table().lookup(mnemonic) else {
            let d = self.describe(mnemonic, ops);
            self.error(d, format!("unknown instruction `{mnemonic}`"));
            return self;
        };
        self.emit(form, ops.to_vec(), Some(comment.to_string()));
        self
    }

    /// Checks operands against the row and the target and appends the instruction.
    pub fn emit(&mut self, form: Form, mut ops: Vec<Opnd>, comment: Option<String>) {
        let mut form = form;
        let mut row = table().row(form);
        // A vector row of the other dialect: its twin (same meaning), or an error.
        if let (Some(d), Some(td)) = (row.vdialect, self.target.vdialect()) {
            if d != td {
                match self.dialect_twin(row, &mut ops, td) {
                    Ok(f) => {
                        form = f;
                        row = table().row(f);
                    }
                    Err(reason) => {
                        let d = self.describe(row.mnemonic, &ops);
                        self.error(d, reason);
                        return;
                    }
                }
            }
        }
        // Fill omitted optional trailing operands: vm (unmasked) and literals.
        while ops.len() < row.ops.len() {
            match row.ops[ops.len()].kind {
                Kind::Vm => ops.push(Opnd::Imm(1)),
                Kind::Lit(v) => ops.push(Opnd::Imm(v)),
                Kind::V0 => ops.push(Opnd::Reg(Reg::V(0))),
                _ => break,
            }
        }
        if let Err(reason) = self.check(row, &ops) {
            let d = self.describe(row.mnemonic, &ops);
            self.error(d, reason);
            return;
        }
        self.items.push(Item::Inst(InstItem { form, ops, comment, loc: self.loc, public_def: false, leak: self.leak_region }));
    }

    /// The row of dialect `to` with the meaning of `row` (a dialect-neutral kernel writes RVV
    /// 1.0 mnemonics): its declared twin, unmasked; `vsetvli` with its vtype converted.
    fn dialect_twin(&self, row: &Row, ops: &mut [Opnd], to: crate::isa::VDialect) -> Result<Form, String> {
        use crate::isa::VDialect;
        let target = self.target.name;
        if row.vset.is_some() {
            let (VDialect::V1, VDialect::Thead, Some(crate::isa::VType::Imm(k))) = (row.vdialect.unwrap_or(to), to, row.vset) else {
                return Err(format!("`{}` has no equivalent on target {target}: write the target's own form", row.mnemonic));
            };
            let th = table().lookup(&format!("th.{}", row.mnemonic)).ok_or_else(|| format!("`{}` has no XTheadVector form", row.mnemonic))?;
            // RVV 1.0's `vsetvli zero, zero` keeps vl; XTheadVector's sets vl = VLMAX.
            if ops.first() == Some(&Opnd::Reg(Reg::X(0))) && ops.get(1) == Some(&Opnd::Reg(Reg::X(0))) {
                return Err(format!("`{}` with rd = rs1 = zero keeps vl in RVV 1.0 but sets VLMAX on target {target}", row.mnemonic));
            }
            if let Some(Opnd::Imm(v)) = ops.get_mut(k as usize) {
                *v = VDialect::thead_vtype_of(*v).map_err(|e| format!("`{}` on target {target}: {e}", row.mnemonic))?;
            }
            return Ok(th);
        }
        let twin = row.twin.ok_or_else(|| {
            format!("`{}` means something else (or nothing) in the vector dialect of target {target}: write the target's own form", row.mnemonic)
        })?;
        let masked = row.vm_operand().is_some_and(|k| ops.get(k) == Some(&Opnd::Imm(0)));
        if masked {
            return Err(format!("masked `{}`: the dialects lay masks out differently; write target {target}'s own form", row.mnemonic));
        }
        Ok(twin)
    }

    fn check(&self, row: &Row, ops: &[Opnd]) -> Result<(), String> {
        if !row.ext.intersects(self.target.exts) {
            return Err(format!("needs extension {} which target {} does not have", row.ext, self.target.name));
        }
        if ops.len() != row.ops.len() {
            return Err(format!("takes {} operands, got {}", row.ops.len(), ops.len()));
        }
        let mut concrete = Vec::with_capacity(ops.len());
        for (i, (spec, o)) in row.ops.iter().zip(ops).enumerate() {
            let what = spec.name;
            let v = match (spec.kind, o) {
                (Kind::X | Kind::XMem, Opnd::Reg(r @ (Reg::X(_) | Reg::VirtX(_)))) => r.phys().map(|p| p as i64),
                (Kind::X | Kind::XMem, Opnd::Reg(_)) => return Err(format!("operand `{what}` needs an integer register")),
                (Kind::V(_), Opnd::Reg(r @ (Reg::V(_) | Reg::VirtV(_)))) => r.phys().map(|p| p as i64),
                (Kind::V(_), Opnd::Reg(_)) => return Err(format!("operand `{what}` needs a vector register")),
                (Kind::V0, Opnd::Reg(Reg::V(0))) => Some(0),
                (Kind::V0, _) => return Err(format!("operand `{what}` must be v0")),
                (Kind::Rel(_), Opnd::Label(_)) => None,
                (Kind::Rel(_), _) => return Err(format!("operand `{what}` needs a label")),
                (Kind::Imm(_) | Kind::MemOff(_), Opnd::PcrelHi { .. } | Opnd::PcrelLo { .. } | Opnd::Stack { .. }) => None,
                (_, Opnd::Imm(v)) if !spec.kind.is_reg() => Some(*v),
                (_, o) => return Err(format!("operand `{what}` cannot be {o:?}")),
            };
            if let Some(v) = v {
                row.check_operand(i, v).map_err(|e| e.reason)?;
            }
            concrete.push(v);
        }
        if concrete.iter().all(Option::is_some) {
            let vals: Vec<i64> = concrete.into_iter().map(Option::unwrap).collect();
            row.check_rules(&vals).map_err(|e| format!("operand `{}`: {}", e.operand, e.reason))?;
        }
        Ok(())
    }

    /// A return from the function (epilogue and `ret`).
    pub fn ret(&mut self) {
        self.items.push(Item::Exit);
    }

    /// Finishes the description: every referenced label must be bound; the first recorded
    /// error is returned.
    pub fn finish(mut self) -> Result<Func, BuildError> {
        let cold = std::mem::take(&mut self.cold);
        self.items.extend(cold);
        self.resolve_aliases();
        let mut used = vec![false; self.labels.len()];
        for_each_inst(&self.items, &mut |i| {
            for o in &i.ops {
                if let Opnd::Label(l) | Opnd::PcrelLo { anchor: l } = o {
                    used[l.0 as usize] = true;
                }
            }
        });
        for (i, l) in self.labels.iter().enumerate() {
            if used[i] && !l.bound {
                let n = self.label_name(Label(i as u32));
                self.errors.push(BuildError {
                    func: self.name.clone(),
                    inst: String::new(),
                    index: None,
                    loc: None,
                    reason: format!("label {n} is used but never placed"),
                });
            }
        }
        // A function must leave: through a return (`ret` here, or a return or tail call
        // written as instructions); the checks follow every path to one.
        let leaves = |i: &Item| match i {
            Item::Exit => true,
            Item::Inst(x) => matches!(x.control(), crate::isa::Control::Return | crate::isa::Control::IndirectJump),
            _ => false,
        };
        if !self.items.iter().any(leaves) {
            self.fail("function has no return");
        }
        match self.errors.first() {
            Some(e) => Err(e.clone()),
            None => Ok(self),
        }
    }

    /// Number of instructions (before the frame is added).
    pub fn inst_count(&self) -> usize {
        let mut n = 0;
        for_each_inst(&self.items, &mut |_| n += 1);
        n
    }
}

/// One line of a function's assembly listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    Label(String),
    Inst { text: String, comment: Option<String> },
    Comment(String),
    Data(Vec<u8>),
}

impl Func {
    /// The body as GNU-syntax lines: labels (only those referenced), instructions (with
    /// `%pcrel_hi`/`%pcrel_lo` and label names), comments.
    pub fn listing(&self) -> Vec<Line> {
        let used = crate::lower::referenced_labels(self);
        let mut out = Vec::new();
        for it in &self.items {
            match it {
                Item::Label(l) if used[l.0 as usize] => out.push(Line::Label(self.label_name(*l))),
                Item::Label(_) => {}
                Item::Inst(i) => out.push(Line::Inst { text: self.inst_text(i), comment: i.comment.clone() }),
                Item::Comment(c) => out.push(Line::Comment(c.clone())),
                Item::Data(d) => out.push(Line::Data(d.clone())),
                Item::Exit => out.push(Line::Inst { text: "ret".into(), comment: Some("(not lowered)".into()) }),
                Item::Region(r) => {
                    out.push(Line::Comment("(region, arranged by the lowering)".into()));
                    let mut inner = Vec::new();
                    for p in r.parts() {
                        for_each_inst(p, &mut |i| inner.push(Line::Inst { text: self.inst_text(i), comment: i.comment.clone() }));
                    }
                    out.extend(inner);
                }
            }
        }
        out
    }
}

impl Func {
    /// What `kasm!` calls on its first argument: works for a `Func` and a `&mut Func`.
    #[doc(hidden)]
    pub fn kasm_func(&mut self) -> &mut Func {
        self
    }
}

impl Func {
    /// Runs `body` and returns the items it appended instead of keeping them, so they can
    /// be rearranged (see [`interleave`]).
    pub fn capture(&mut self, body: impl FnOnce(&mut Func)) -> Vec<Item> {
        let start = self.items.len();
        body(self);
        self.items.split_off(start)
    }

    /// Appends captured items.
    pub fn append(&mut self, items: Vec<Item>) {
        self.items.extend(items);
    }

    /// `body` as a region the lowering list-schedules for the C906 (window 24: an
    /// instruction moves up by at most 24 places), against the registers it has.
    pub fn schedule(&mut self, body: impl FnOnce(&mut Func)) {
        self.schedule_window(24, body)
    }

    /// [`Func::schedule`] with another window.
    pub fn schedule_window(&mut self, window: usize, body: impl FnOnce(&mut Func)) {
        let items = self.capture(body);
        self.items.push(Item::Region(Region::Schedule { items, window, carried: false }));
    }

    /// [`Func::schedule`] for the straight-line body of a loop (all of it but the pointer
    /// step and the branch back): what the next iteration needs first is computed first.
    /// Within one iteration, a value the next one reads early (a carry chain's first limb)
    /// outranks a longer path whose end the next iteration reads late.
    pub fn schedule_loop(&mut self, body: impl FnOnce(&mut Func)) {
        let items = self.capture(body);
        self.items.push(Item::Region(Region::Schedule { items, window: 24, carried: true }));
    }

    /// Two independent streams the lowering merges by modeled issue time (each looks 4
    /// instructions ahead): a vector stream and the scalar work that fills its gaps.
    pub fn merge(&mut self, a: impl FnOnce(&mut Func), b: impl FnOnce(&mut Func)) {
        self.merge_with([4, 4], crate::sched::MemOrder::Free, a, b)
    }

    /// [`Func::merge`] looking `lookahead[s]` instructions ahead in stream `s`, with the
    /// streams' memory accesses kept in `order` (e.g. [`crate::sched::MemOrder::BReadsFirst`]:
    /// `b` reads a buffer before `a` rewrites it).
    pub fn merge_with(&mut self, lookahead: [usize; 2], order: crate::sched::MemOrder, a: impl FnOnce(&mut Func), b: impl FnOnce(&mut Func)) {
        let a = self.capture(a);
        let b = self.capture(b);
        self.items.push(Item::Region(Region::Merge { a, b, lookahead, order }));
    }

    /// Two independent streams, the second spread evenly between the instructions of the
    /// first.
    pub fn interleave(&mut self, a: impl FnOnce(&mut Func), b: impl FnOnce(&mut Func)) {
        let a = self.capture(a);
        let b = self.capture(b);
        self.items.push(Item::Region(Region::Interleave { a, b }));
    }

    /// Appends what a construct over captured items made ([`interleave`],
    /// `sched::schedule`, `sched::merge_timed`), or records its error as `what: reason`.
    pub fn append_or_fail(&mut self, made: Result<Vec<Item>, String>, what: &str) {
        match made {
            Ok(items) => self.append(items),
            Err(e) => self.fail(format!("{what}: {e}")),
        }
    }
}

/// Checks that two straight-line streams are independent: neither writes a register the
/// other reads or writes, and neither has labels or control flow.
pub fn independent(a: &[Item], b: &[Item]) -> Result<(), String> {
    independent_in(a, b, &crate::sched::Units::plain())
}

/// [`independent`] by register units (a vector group and its parts overlap).
pub fn independent_in(a: &[Item], b: &[Item], units: &crate::sched::Units) -> Result<(), String> {
    use crate::isa::Role;
    let regs = |s: &[Item]| -> Result<(std::collections::BTreeMap<usize, Reg>, std::collections::BTreeSet<usize>), String> {
        let (mut r, mut w) = (std::collections::BTreeMap::new(), std::collections::BTreeSet::new());
        let mut tmp = Vec::new();
        for it in s {
            match it {
                Item::Inst(i) => {
                    if i.row().is_control() {
                        return Err(format!("`{}` is control flow", i.row().mnemonic));
                    }
                    for (role, reg) in i.regs() {
                        if reg == Reg::X(0) {
                            continue;
                        }
                        tmp.clear();
                        units.units(reg, &mut tmp);
                        for &k in &tmp {
                            r.insert(k, reg);
                            if role != Role::Use {
                                w.insert(k);
                            }
                        }
                    }
                }
                Item::Comment(_) => {}
                _ => return Err("labels and exits cannot be interleaved".into()),
            }
        }
        Ok((r, w))
    };
    let (ra, wa) = regs(a)?;
    let (rb, wb) = regs(b)?;
    if let Some(r) = wa.iter().filter_map(|k| rb.get(k)).chain(wb.iter().filter_map(|k| ra.get(k))).next() {
        return Err(format!("streams share register {r:?}"));
    }
    Ok(())
}

/// Merges two independent straight-line streams, spreading `b` evenly between the
/// elements of `a` (e.g. scalar instructions into the issue slots a vector stream leaves
/// while the vector unit is busy). Fails if the streams share a register that either
/// writes, or contain labels or control flow.
pub fn interleave(a: Vec<Item>, b: Vec<Item>) -> Result<Vec<Item>, String> {
    interleave_in(a, b, &crate::sched::Units::plain())
}

/// [`interleave`] by register units.
pub fn interleave_in(a: Vec<Item>, b: Vec<Item>, units: &crate::sched::Units) -> Result<Vec<Item>, String> {
    independent_in(&a, &b, units)?;
    let (na, nb) = (a.len().max(1), b.len());
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut bi = b.into_iter();
    let mut taken = 0usize;
    for (k, it) in a.into_iter().enumerate() {
        out.push(it);
        let due = (k + 1) * nb / na;
        while taken < due {
            if let Some(x) = bi.next() {
                out.push(x);
            }
            taken += 1;
        }
    }
    out.extend(bi);
    Ok(out)
}
