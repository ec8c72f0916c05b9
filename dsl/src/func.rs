//! The kernel builder: functions made of instructions over physical and virtual registers,
//! labels, comments, pseudo-instructions and references to read-only data, and the regions
//! a kernel declares (scheduled blocks, merged streams, leaks). Its types are the IR's
//! ([`crate::ir`], re-exported here), the memory order between merged streams among them.
//!
//! Builder calls never panic on bad input: the first error is kept with the function name,
//! the instruction and the reason, and [`Func::finish`] returns it.

pub use crate::ir::*;

use crate::abi::Abi;
use crate::entry::{Entry, Param, Ret, Ty};
use crate::isa::{table, Form, Kind, Row};
use crate::target::Target;
use crate::text::{operand_text, XNAMES};


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
            exit_to: None,
            share: None,
            share_groups: 0,
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

    /// Runs `body` in line as a piece of this function: its returns ([`Func::ret`]) jump to
    /// the code after it, and its labels are its own (as in [`Func::scope`]). A whole entry
    /// point's body can so become one step of another function.
    pub fn inline<R>(&mut self, body: impl FnOnce(&mut Func) -> R) -> R {
        let after = self.label();
        let outer = self.exit_to.replace(after);
        let r = self.scope(body);
        self.exit_to = outer;
        self.bind(after);
        r
    }

    /// A new frame-sharing group for [`Func::sharing`].
    pub fn share_group(&mut self) -> u32 {
        self.share_groups += 1;
        self.share_groups - 1
    }

    /// Runs `body` with the stack slots it declares made member `member` of frame-sharing
    /// group `group`: every member's slots are laid out from the group's first byte, so the
    /// members share frame bytes and the group takes as many as its largest member. The
    /// caller promises that no member's slot is live while another member's code runs
    /// (each member writes its slots before it reads them and leaves nothing in them that
    /// is read later), as for two inlined bodies run one after the other. The epilogue's
    /// wipe of secret slots covers every member.
    pub fn sharing<R>(&mut self, group: u32, member: u32, body: impl FnOnce(&mut Func) -> R) -> R {
        let outer = self.share.replace((group, member));
        let r = body(self);
        self.share = outer;
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
        self.slots.push(SlotInfo { name: name.to_string(), size, align, secret, spill: false, share: self.share });
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
    /// Returns (inside [`Func::inline`]: jumps to the code after the inlined body).
    pub fn ret(&mut self) {
        match self.exit_to {
            Some(l) => self.j(l),
            None => self.items.push(Item::Exit),
        }
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
        let used = crate::analysis::referenced_labels(self);
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
    /// be rearranged (see [`crate::analysis::interleave`]).
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
        self.merge_with([4, 4], crate::ir::MemOrder::Free, a, b)
    }

    /// [`Func::merge`] looking `lookahead[s]` instructions ahead in stream `s`, with the
    /// streams' memory accesses kept in `order` (e.g. [`crate::ir::MemOrder::BReadsFirst`]:
    /// `b` reads a buffer before `a` rewrites it).
    pub fn merge_with(&mut self, lookahead: [usize; 2], order: crate::ir::MemOrder, a: impl FnOnce(&mut Func), b: impl FnOnce(&mut Func)) {
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

    /// Appends what a construct over captured items made ([`crate::analysis::interleave`],
    /// `sched::schedule`, `sched::merge_timed`), or records its error as `what: reason`.
    pub fn append_or_fail(&mut self, made: Result<Vec<Item>, String>, what: &str) {
        match made {
            Ok(items) => self.append(items),
            Err(e) => self.fail(format!("{what}: {e}")),
        }
    }
}

