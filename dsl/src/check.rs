//! The checks that replace review by eye. They run on final physical code — a lowered
//! function or a hand-written one — independently of the allocator and the frame builder:
//!
//! - ABI: every callee-saved register (and `ra`) written is restored on every path to every
//!   return; `sp` is back at its entry value and 16-byte aligned at calls and returns;
//!   registers the ABI reserves are never written; no register is read before it is written
//!   (arguments and the caller's registers excepted); stack accesses stay inside the frame.
//! - Vector: vtype/vl is set on every path before each vector instruction; register groups
//!   are aligned to their size; no illegal overlap of destination and sources.
//! - Secrets: data reached through arguments declared secret (and everything computed from
//!   it) is not left in registers or in the stack frame at return, unless it was published
//!   (stored to a non-secret output buffer).
//! - Constant time: no branch and no memory address depends on secret data, and on the C906
//!   no 64-bit multiply has an operand whose upper 32 bits may be secret-dependent (the
//!   multiplier takes 3 or 6 cycles depending on them). Leaks a function declares are
//!   reported as declared, not as errors.
//!
//! One forward dataflow over the control-flow graph computes an abstract value per
//! register (defined? secret? upper 32 bits zero? pointer provenance? original value of
//! which callee-saved register?) plus the stack frame's contents and the vector type.

use crate::abi::Abi;
use crate::ext::Ext;
use crate::func::{Func, InstItem, Item, LeakKind, Opnd, Reg};
use crate::isa::{Addr, Class, Dir, Kind, Role, VDialect};
use crate::lower::{label_positions, successors};
use std::collections::BTreeMap;
use std::fmt;

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    CalleeSaved,
    StackPointer,
    Reserved,
    ReadBeforeWrite,
    StackBounds,
    VectorType,
    VectorGroups,
    SecretLeft,
    SecretBranch,
    SecretAddress,
    SecretMulTiming,
}

impl Check {
    /// The declared-leak kind that excuses this check, if any.
    pub fn leak(self) -> Option<LeakKind> {
        match self {
            Check::SecretBranch => Some(LeakKind::SecretBranch),
            Check::SecretAddress => Some(LeakKind::SecretAddress),
            Check::SecretMulTiming => Some(LeakKind::SecretMulTiming),
            _ => None,
        }
    }
}

/// One problem found, naming the function, the instruction and the register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub func: String,
    pub check: Check,
    /// Instruction number (0-based, counting instructions only) and its text.
    pub index: usize,
    pub inst: String,
    pub msg: String,
    /// A leak the function declared (reported, not an error).
    pub declared: bool,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: instruction {} `{}`: {:?}: {}", self.func, self.index, self.inst, self.check, self.msg)?;
        if self.declared {
            f.write_str(" (declared)")?;
        }
        Ok(())
    }
}

/// Where a pointer value points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ptr {
    None,
    /// Argument `i` plus a known byte offset.
    Arg(u8, i64),
    /// Derived from argument `i`, offset unknown.
    ArgAny(u8),
    /// The stack pointer plus a known offset from its value at entry.
    Sp(i64),
    /// The stack, offset unknown.
    SpAny,
    /// A read-only data address (from `auipc`).
    Data,
}

impl Ptr {
    fn arg(self) -> Option<u8> {
        match self {
            Ptr::Arg(k, _) | Ptr::ArgAny(k) => Some(k),
            _ => None,
        }
    }
    /// The pointer moved by `d` bytes (None: by an unknown amount).
    fn moved(self, d: Option<i64>) -> Ptr {
        match (self, d) {
            (Ptr::Sp(k), Some(d)) => Ptr::Sp(k + d),
            (Ptr::Sp(_), None) | (Ptr::SpAny, _) => Ptr::SpAny,
            (Ptr::Arg(a, k), Some(d)) => Ptr::Arg(a, k + d),
            (Ptr::Arg(a, _), None) | (Ptr::ArgAny(a), _) => Ptr::ArgAny(a),
            (p, _) => p,
        }
    }
}

/// Abstract value of one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    defined: bool,
    secret: bool,
    /// Upper 32 bits known zero.
    hi_zero: bool,
    ptr: Ptr,
    /// Holds the caller's value of this register (callee-saved bookkeeping).
    orig: Option<u8>,
}

impl Val {
    const UNDEF: Val = Val { defined: false, secret: false, hi_zero: false, ptr: Ptr::None, orig: None };
    const PUBLIC: Val = Val { defined: true, secret: false, hi_zero: false, ptr: Ptr::None, orig: None };
    fn join(a: Val, b: Val) -> Val {
        Val {
            defined: a.defined && b.defined,
            secret: a.secret || b.secret,
            hi_zero: a.hi_zero && b.hi_zero,
            ptr: if a.ptr == b.ptr {
                a.ptr
            } else if matches!(a.ptr, Ptr::Sp(_) | Ptr::SpAny) && matches!(b.ptr, Ptr::Sp(_) | Ptr::SpAny) {
                Ptr::SpAny
            } else if let (Some(x), Some(y)) = (a.ptr.arg(), b.ptr.arg()) {
                if x == y { Ptr::ArgAny(x) } else { Ptr::None }
            } else {
                Ptr::None
            },
            orig: if a.orig == b.orig { a.orig } else { None },
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
struct State {
    x: [Val; 32],
    /// Vector registers: (written, secret).
    v: [(bool, bool); 32],
    /// Stack contents at known offsets from the entry sp (8-byte granules).
    stack: BTreeMap<i64, Val>,
    /// Known vtype (raw immediate) per dialect, or None = unset, Some(None) = unknown.
    vtype: Option<Option<u64>>,
}

impl State {
    fn join(&self, o: &State) -> State {
        let mut x = self.x;
        for i in 0..32 {
            x[i] = Val::join(self.x[i], o.x[i]);
        }
        let mut v = self.v;
        for i in 0..32 {
            v[i] = (self.v[i].0 && o.v[i].0, self.v[i].1 || o.v[i].1);
        }
        let mut stack = BTreeMap::new();
        for (k, a) in &self.stack {
            let b = o.stack.get(k).copied().unwrap_or(Val::UNDEF);
            stack.insert(*k, Val::join(*a, b));
        }
        for (k, b) in &o.stack {
            stack.entry(*k).or_insert(Val::join(Val::UNDEF, *b));
        }
        let vtype = match (self.vtype, o.vtype) {
            (None, None) => None,
            (Some(a), Some(b)) if a == b => Some(a),
            (None, _) | (_, None) => None,
            _ => Some(None),
        };
        State { x, v, stack, vtype }
    }
}

fn xreg(o: &Opnd) -> Option<usize> {
    match o {
        Opnd::Reg(Reg::X(n)) => Some(*n as usize),
        _ => None,
    }
}

fn vreg_of(o: &Opnd) -> Option<usize> {
    match o {
        Opnd::Reg(Reg::V(n)) => Some(*n as usize),
        _ => None,
    }
}

/// Bytes a unit-stride vector load or store covers at VLMAX under the vtype known here
/// (all fields of a segment access), or None for other accesses.
fn unit_stride_extent(i: &InstItem, s: &State) -> Option<i64> {
    let row = i.row();
    let m = row.mem?;
    let d = row.vdialect?;
    if !matches!(m.addr, Addr::VUnit { .. }) {
        return None;
    }
    let vlenb = 16i64;
    let kind = row.ops[0].kind;
    match kind {
        Kind::V(crate::isa::VGroup::Whole(n)) => return Some(n as i64 * vlenb),
        Kind::V(crate::isa::VGroup::Mask) => return Some(vlenb),
        _ => {}
    }
    let c = crate::isa::Hart::new(128).decode_vtype(d, s.vtype??)?;
    let nf = match kind {
        Kind::V(crate::isa::VGroup::Seg(n)) | Kind::V(crate::isa::VGroup::Eew { nf: n, .. }) => n as i64,
        _ => 1,
    };
    let bytes = if m.bytes == 0 { c.sew as i64 / 8 } else { m.bytes as i64 };
    Some(c.vlmax as i64 * bytes * nf)
}

fn imm(o: &Opnd) -> Option<i64> {
    match o {
        Opnd::Imm(v) => Some(*v),
        _ => None,
    }
}

/// Upper 32 bits of an instruction's result known zero?
fn result_hi_zero(i: &InstItem, s: &State) -> bool {
    let row = i.row();
    let src = |k: usize| xreg(&i.ops[k]).map(|r| r == 0 || s.x[r].hi_zero).unwrap_or(false);
    match row.mnemonic {
        "lbu" | "lhu" | "lwu" | "th.lrbu" | "th.lrhu" | "th.lrwu" | "th.lurbu" | "th.lurhu" | "th.lurwu" | "th.lbuia" | "th.lbuib" | "th.lhuia" | "th.lhuib" | "th.lwuia" | "th.lwuib" => true,
        "sltu" | "slt" | "sltiu" | "slti" | "th.tst" | "clz" | "ctz" | "cpop" | "clzw" | "ctzw" | "cpopw" => true,
        "th.extu" => imm(&i.ops[2]).is_some_and(|msb| msb <= 31),
        "srli" => imm(&i.ops[2]).is_some_and(|sh| sh >= 32) || src(1),
        "andi" => imm(&i.ops[2]).is_some_and(|v| v >= 0) || src(1),
        "and" => src(1) || src(2),
        "or" | "xor" | "add" | "srl" => src(1) && src(2) && row.mnemonic != "add",
        "addi" => imm(&i.ops[2]) == Some(0) && src(1),
        "lui" => imm(&i.ops[1]).is_some_and(|v| v < 0x80000),
        "zext.w" | "add.uw" => true,
        _ => false,
    }
}

struct Ctx<'a> {
    f: &'a Func,
    abi: Abi,
    c906: bool,
    findings: Vec<Finding>,
    /// Instruction number of each item.
    inum: Vec<usize>,
}

impl Ctx<'_> {
    fn report(&mut self, item: usize, check: Check, msg: String) {
        let inst = match &self.f.items[item] {
            Item::Inst(i) => self.f.inst_text(i),
            // A function not lowered yet: its exit becomes the epilogue and `ret`.
            Item::Exit => "ret".to_string(),
            _ => return,
        };
        let declared = check.leak().is_some_and(|k| self.f.leaks.iter().any(|l| l.kind == k));
        let f = Finding { func: self.f.name.clone(), check, index: self.inum[item], inst, msg, declared };
        if !self.findings.contains(&f) {
            self.findings.push(f);
        }
    }
}

fn entry_state(f: &Func, abi: Abi) -> State {
    let mut x = [Val::UNDEF; 32];
    x[0] = Val { hi_zero: true, ..Val::PUBLIC };
    x[2] = Val { ptr: Ptr::Sp(0), ..Val::PUBLIC };
    for r in [1u8, 3, 4] {
        x[r as usize] = Val { orig: Some(r), ..Val::PUBLIC };
    }
    for &r in abi.callee_saved() {
        x[r as usize] = Val { orig: Some(r), ..Val::PUBLIC };
    }
    for (k, a) in f.args.iter().enumerate() {
        let r = 10 + k;
        let is_ptr = a.c_type.contains('*');
        x[r] = Val { defined: true, secret: a.secret && !is_ptr, hi_zero: false, ptr: if is_ptr { Ptr::Arg(k as u8, 0) } else { Ptr::None }, orig: None };
    }
    State { x, v: [(false, false); 32], stack: BTreeMap::new(), vtype: None }
}

/// Transfers the state across one instruction, reporting what it finds.
fn step(cx: &mut Ctx, idx: usize, i: &InstItem, s: &State, report: bool) -> State {
    let row = i.row();
    let mut n = s.clone();
    let f = cx.f;
    let arg_secret = |k: u8| f.args.get(k as usize).is_some_and(|a| a.secret);
    // Secret unless the bytes lie in a range the argument declares public.
    let bytes_secret = |k: u8, at: Option<i64>, n: i64| match f.args.get(k as usize) {
        Some(a) if a.secret => !at.is_some_and(|o| a.public_ranges.iter().any(|&(lo, hi)| lo <= o && o + n <= hi)),
        _ => false,
    };
    // Reads.
    let mut any_secret = false;
    for (spec, o) in row.ops.iter().zip(&i.ops) {
        if matches!(spec.role, Role::Use | Role::UseDef) {
            match o {
                Opnd::Reg(Reg::X(r)) => {
                    let v = s.x[*r as usize];
                    if report && !v.defined {
                        cx.report(idx, Check::ReadBeforeWrite, format!("{} is read before it is written on some path", crate::text::XNAMES[*r as usize]));
                    }
                    any_secret |= v.secret;
                }
                Opnd::Reg(Reg::V(r)) => {
                    if report && !s.v[*r as usize].0 {
                        cx.report(idx, Check::ReadBeforeWrite, format!("v{r} is read before it is written on some path"));
                    }
                    any_secret |= s.v[*r as usize].1;
                }
                _ => {}
            }
        }
        if spec.kind == Kind::V0 || (spec.kind == Kind::Vm && i.ops.iter().zip(&row.ops).any(|(o, sp)| sp.kind == Kind::Vm && *o == Opnd::Imm(0))) {
            any_secret |= s.v[0].1;
        }
    }
    // Control flow on secrets.
    if report && row.class == Class::Branch && any_secret {
        cx.report(idx, Check::SecretBranch, "branch condition depends on secret data".into());
    }
    // C906 multiplier timing.
    if report && cx.c906 && row.class.is_data_dependent_mul() {
        for k in [1usize, 2] {
            if let Some(r) = xreg(&i.ops[k]) {
                let v = s.x[r];
                if v.secret && !v.hi_zero {
                    cx.report(idx, Check::SecretMulTiming, format!("operand {} is secret and its upper 32 bits are not known to be zero: the C906 multiplier's latency depends on them", crate::text::XNAMES[r]));
                }
            }
        }
    }
    // Memory.
    let mut loaded = Val { defined: true, ..Val::PUBLIC };
    if let Some(m) = row.mem {
        let reg_of = |k: u8| xreg(&i.ops[k as usize]);
        let (base, addr_secret) = match m.addr {
            Addr::BaseOff { base, .. } | Addr::Incr { base, .. } | Addr::Pair { base, .. } | Addr::VUnit { base } => (reg_of(base), reg_of(base).is_some_and(|r| s.x[r].secret)),
            Addr::BaseIdx { base, index, .. } => (reg_of(base), reg_of(base).is_some_and(|r| s.x[r].secret) || reg_of(index).is_some_and(|r| s.x[r].secret)),
            Addr::VStrided { base, stride } => (reg_of(base), reg_of(base).is_some_and(|r| s.x[r].secret) || reg_of(stride).is_some_and(|r| s.x[r].secret)),
            Addr::VIndexed { base, index } => {
                let ix = match &i.ops[index as usize] {
                    Opnd::Reg(Reg::V(v)) => s.v[*v as usize].1,
                    _ => false,
                };
                (reg_of(base), reg_of(base).is_some_and(|r| s.x[r].secret) || ix)
            }
        };
        if report && addr_secret {
            cx.report(idx, Check::SecretAddress, format!("{} address depends on secret data", if m.dir == Dir::Load { "load" } else { "store" }));
        }
        let bptr = base.map(|r| s.x[r].ptr).unwrap_or(Ptr::None);
        let off = match m.addr {
            Addr::BaseOff { off, .. } => imm(&i.ops[off as usize]),
            Addr::Pair { off, shift, .. } => imm(&i.ops[off as usize]).zip(imm(&i.ops[shift as usize])).map(|(o, sh)| o << sh),
            Addr::Incr { before: false, .. } => Some(0),
            Addr::VUnit { .. } => Some(0),
            _ => None,
        };
        // Bytes the access covers: one access, or a whole unit-stride vector group at VLMAX.
        let extent = unit_stride_extent(i, s).unwrap_or(m.bytes.max(1) as i64);
        let frame_off = match (bptr, off) {
            (Ptr::Sp(k), Some(o)) => Some(k + o),
            _ => None,
        };
        let arg_off = match (bptr, off) {
            (Ptr::Arg(_, k), Some(o)) => Some(k + o),
            _ => None,
        };
        if report && matches!(bptr, Ptr::Sp(_) | Ptr::SpAny) {
            let sp_now = match s.x[2].ptr {
                Ptr::Sp(k) => Some(k),
                _ => None,
            };
            match (frame_off, sp_now) {
                (Some(a), Some(spk)) if a < spk || a + extent > 0 => {
                    cx.report(idx, Check::StackBounds, format!("stack access at entry sp{a:+} is outside the frame [sp{spk:+}, sp)"));
                }
                (None, _) => cx.report(idx, Check::StackBounds, "stack access at an unknown offset".into()),
                _ => {}
            }
        }
        match m.dir {
            Dir::Load => {
                let from_stack = if row.vdialect.is_some() {
                    // A vector load is secret if any granule it covers is.
                    frame_off.map(|a| Val { secret: s.stack.range((a & !7)..a + extent).any(|(_, v)| v.secret), ..Val::PUBLIC })
                } else {
                    frame_off.and_then(|a| s.stack.get(&(a & !7)).copied())
                };
                loaded = match (bptr, from_stack) {
                    (_, Some(v)) if m.bytes == 8 => v,
                    (_, Some(v)) => Val { orig: None, ptr: Ptr::None, ..v },
                    (Ptr::Arg(k, _) | Ptr::ArgAny(k), _) => Val { secret: bytes_secret(k, arg_off, m.bytes.max(1) as i64) || addr_secret, ..Val::PUBLIC },
                    _ => Val { secret: addr_secret, ..Val::PUBLIC },
                };
            }
            Dir::Store => {
                // The stored register (operand 0 for scalar and vector stores; both for pairs).
                let stored: Vec<Val> = row
                    .ops
                    .iter()
                    .zip(&i.ops)
                    .filter(|(sp, _)| sp.role == Role::Use && matches!(sp.kind, Kind::X | Kind::V(_)))
                    .take(if matches!(m.addr, Addr::Pair { .. }) { 2 } else { 1 })
                    .map(|(_, o)| match o {
                        Opnd::Reg(Reg::X(r)) => s.x[*r as usize],
                        Opnd::Reg(Reg::V(r)) => Val { secret: s.v[*r as usize].1, ..Val::PUBLIC },
                        _ => Val::PUBLIC,
                    })
                    .collect();
                if let (Some(a), Some(vd)) = (frame_off, row.vdialect.and(vreg_of(&i.ops[0]))) {
                    // A vector store fills every granule it covers (secret if any stored register is).
                    let secret = (0..group_count(row, row.ops[0].kind, s)).any(|k| vd + k < 32 && s.v[vd + k].1);
                    for g in ((a & !7)..a + extent).step_by(8) {
                        n.stack.insert(g, Val { secret, ..Val::PUBLIC });
                    }
                } else if let Some(a) = frame_off {
                    for (k, v) in stored.iter().enumerate() {
                        let w = if m.bytes == 8 { *v } else { Val { orig: None, ..*v } };
                        n.stack.insert((a & !7) + 8 * k as i64, w);
                    }
                } else if matches!(bptr, Ptr::Sp(_) | Ptr::SpAny) {
                    // Unknown offset: every slot may now hold it.
                    let sec = stored.iter().any(|v| v.secret);
                    for v in n.stack.values_mut() {
                        v.secret |= sec;
                        v.orig = None;
                    }
                } else if let Some(k) = bptr.arg() {
                    if !arg_secret(k) {
                        // Published: stored to the caller's output, no longer a secret to wipe.
                        for (spec, o) in row.ops.iter().zip(&i.ops) {
                            if spec.role == Role::Use && matches!(spec.kind, Kind::X | Kind::V(_)) {
                                match o {
                                    Opnd::Reg(Reg::X(r)) if *r != 0 && xreg(&i.ops[0]) == Some(*r as usize) => n.x[*r as usize].secret = false,
                                    Opnd::Reg(Reg::V(r)) if matches!(i.ops[0], Opnd::Reg(Reg::V(x)) if x == *r) => {
                                        // The whole stored group (LMUL registers, or all fields).
                                        for k in 0..group_count(row, spec.kind, s) {
                                            if (*r as usize) + k < 32 {
                                                n.v[*r as usize + k].1 = false;
                                            }
                                        }
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Vector type.
    if row.class == Class::VSet {
        n.vtype = Some(match row.ops[2].kind {
            Kind::VtypeTh | Kind::Vtype => imm(&i.ops[2]).map(|v| v as u64),
            _ => None,
        });
    } else if let Some(d) = row.vdialect {
        match s.vtype {
            None => {
                if report {
                    cx.report(idx, Check::VectorType, "vector instruction before any vsetvl on some path".into());
                }
            }
            Some(None) => {
                if report {
                    cx.report(idx, Check::VectorType, "vtype is not known here (different on different paths, or set from a register)".into());
                }
            }
            Some(Some(vt)) => {
                let h = crate::isa::Hart::new(128);
                match h.decode_vtype(d, vt) {
                    Some(c) => {
                        let ops: Vec<i64> = i.ops.iter().map(|o| match o {
                            Opnd::Reg(Reg::X(r)) | Opnd::Reg(Reg::V(r)) => *r as i64,
                            Opnd::Imm(v) => *v,
                            _ => 0,
                        }).collect();
                        if report {
                            if let Some(why) = crate::isa::vector::group_alignment_violation(row, &ops, &c) {
                                cx.report(idx, Check::VectorGroups, why);
                            }
                            if let Some(why) = crate::isa::vector::v1_overlap_violation(row, &ops, &c) {
                                cx.report(idx, Check::VectorGroups, why);
                            }
                        }
                    }
                    None => {
                        if report {
                            cx.report(idx, Check::VectorType, format!("vtype {vt:#x} is not valid"));
                        }
                    }
                }
            }
        }
        let _ = VDialect::Thead;
    }
    // Writes.
    let hi = result_hi_zero(i, s);
    let mut src_ptr = Ptr::None;
    let mut ptr_srcs = 0;
    for (spec, o) in row.ops.iter().zip(&i.ops) {
        if spec.role == Role::Use && matches!(spec.kind, Kind::X | Kind::XMem) {
            if let Some(r) = xreg(o) {
                if s.x[r].ptr != Ptr::None {
                    src_ptr = s.x[r].ptr;
                    ptr_srcs += 1;
                }
            }
        }
    }
    for (spec, o) in row.ops.iter().zip(&i.ops) {
        if !matches!(spec.role, Role::Def | Role::UseDef) {
            continue;
        }
        match o {
            Opnd::Reg(Reg::X(0)) => {}
            Opnd::Reg(Reg::X(r)) => {
                let r = *r as usize;
                let is_base = matches!(spec.kind, Kind::XMem);
                let v = if row.mem.is_some_and(|m| m.dir == Dir::Load) && !is_base {
                    Val { hi_zero: hi || loaded.hi_zero, ..loaded }
                } else if is_base {
                    // Increment-address forms update the base: stays a pointer of the same kind.
                    Val { ptr: s.x[r].ptr.moved(None), orig: None, ..s.x[r] }
                } else {
                    let ptr = match (row.mnemonic, src_ptr) {
                        ("addi", p) => p.moved(imm(&i.ops[2])),
                        ("auipc", _) => Ptr::Data,
                        ("add" | "sub" | "th.addsl" | "sh1add" | "sh2add" | "sh3add", p) if ptr_srcs == 1 => p.moved(None),
                        _ => Ptr::None,
                    };
                    let ptr = if row.mnemonic == "addi" && matches!(i.ops[2], Opnd::PcrelLo { .. }) { Ptr::Data } else { ptr };
                    Val { defined: true, secret: any_secret, hi_zero: hi, ptr, orig: None }
                };
                n.x[r] = v;
            }
            Opnd::Reg(Reg::V(r)) => {
                let secret = if row.mem.is_some_and(|m| m.dir == Dir::Load) { loaded.secret } else { any_secret };
                let count = group_count(row, spec.kind, s);
                for k in 0..count {
                    if (*r as usize) + k < 32 {
                        n.v[*r as usize + k] = (true, secret);
                    }
                }
            }
            _ => {}
        }
    }
    // sp after the instruction must be known; a call requires 16-byte alignment.
    if report && matches!(row.class, Class::Jal | Class::Jalr) && xreg(&i.ops[0]) == Some(1) {
        if let Ptr::Sp(k) = n.x[2].ptr {
            if k % 16 != 0 {
                cx.report(idx, Check::StackPointer, format!("call with sp at entry{k:+}, not 16-byte aligned"));
            }
        }
    }
    n
}

fn group_count(row: &crate::isa::Row, kind: Kind, s: &State) -> usize {
    let Kind::V(g) = kind else { return 1 };
    let Some(Some(vt)) = s.vtype else { return 1 };
    let Some(d) = row.vdialect else { return 1 };
    let h = crate::isa::Hart::new(128);
    let Some(c) = h.decode_vtype(d, vt) else { return 1 };
    let l = c.group_regs();
    match g {
        crate::isa::VGroup::Lmul | crate::isa::VGroup::EltGroup => l,
        crate::isa::VGroup::Wide => 2 * l,
        crate::isa::VGroup::Seg(nf) => nf as usize * l,
        crate::isa::VGroup::Eew { nf, .. } => nf as usize * l,
        crate::isa::VGroup::Whole(n) => n as usize,
        _ => 1,
    }
}

fn is_return(i: &InstItem) -> bool {
    i.row().mnemonic == "jalr" && i.ops[0] == Opnd::Reg(Reg::X(0)) && i.ops[2] == Opnd::Reg(Reg::X(1)) && i.ops[1] == Opnd::Imm(0)
}

/// Runs every check on a function with physical registers. `target_c906` enables the
/// multiplier-timing rule.
pub fn check_func(f: &Func, abi: Abi) -> Vec<Finding> {
    let c906 = f.target.has(Ext::XTheadMac) || f.target.name.starts_with("c906");
    let mut inum = Vec::with_capacity(f.items.len());
    let mut k = 0;
    for it in &f.items {
        inum.push(k);
        if matches!(it, Item::Inst(_)) {
            k += 1;
        }
    }
    let mut cx = Ctx { f, abi, c906, findings: Vec::new(), inum };
    let label_at = label_positions(f);
    let m = f.items.len();
    let mut inn: Vec<Option<State>> = vec![None; m];
    if m == 0 {
        return Vec::new();
    }
    inn[0] = Some(entry_state(f, abi));
    // Fixpoint without reporting, then one reporting pass.
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 64 {
        changed = false;
        rounds += 1;
        for i in 0..m {
            let Some(s) = inn[i].clone() else { continue };
            let out = match &f.items[i] {
                Item::Inst(it) => step(&mut cx, i, it, &s, false),
                _ => s,
            };
            for sidx in successors(f, &label_at, i) {
                let new = match &inn[sidx] {
                    None => out.clone(),
                    Some(old) => old.join(&out),
                };
                if inn[sidx].as_ref() != Some(&new) {
                    inn[sidx] = Some(new);
                    changed = true;
                }
            }
        }
    }
    for i in 0..m {
        let Some(s) = inn[i].clone() else { continue };
        let Item::Inst(it) = &f.items[i] else {
            if f.items[i] == Item::Exit {
                exit_checks(&mut cx, i, &s);
            }
            continue;
        };
        // Reserved registers.
        for (spec, o) in it.row().ops.iter().zip(&it.ops) {
            if let (Role::Def | Role::UseDef, Opnd::Reg(Reg::X(r))) = (spec.role, o) {
                if abi.reserved().contains(r) {
                    cx.report(i, Check::Reserved, format!("writes {}, which the {} ABI reserves", crate::text::XNAMES[*r as usize], abi));
                }
            }
        }
        let out = step(&mut cx, i, it, &s, true);
        if is_return(it) {
            exit_checks(&mut cx, i, &out);
        }
    }
    cx.findings
}

/// At a return: callee-saved restored, sp back, no secret left in registers or the frame.
fn exit_checks(cx: &mut Ctx, i: usize, s: &State) {
    let abi = cx.abi;
    for &r in abi.callee_saved().iter().chain(&[1u8, 3, 4]) {
        if s.x[r as usize].orig != Some(r) {
            let what = if r == 1 { "ra (the return address)" } else { crate::text::XNAMES[r as usize] };
            cx.report(i, Check::CalleeSaved, format!("{what} may not hold the caller's value here: written and not restored on some path"));
        }
    }
    match s.x[2].ptr {
        Ptr::Sp(0) => {}
        Ptr::Sp(k) => cx.report(i, Check::StackPointer, format!("sp is entry{k:+} at return")),
        _ => cx.report(i, Check::StackPointer, "sp is not known to be restored at return".into()),
    }
    let ret_value = cx.f.ret != "void";
    for r in 1..32usize {
        if r == 2 || (r == 10 && ret_value) || abi.callee_saved().contains(&(r as u8)) {
            continue;
        }
        if s.x[r].secret {
            cx.report(i, Check::SecretLeft, format!("{} holds secret data at return", crate::text::XNAMES[r]));
        }
    }
    for v in 0..32 {
        if s.v[v].1 {
            cx.report(i, Check::SecretLeft, format!("v{v} holds secret data at return"));
        }
    }
    for (off, val) in &s.stack {
        if val.secret {
            cx.report(i, Check::SecretLeft, format!("the stack at entry sp{off:+} holds secret data at return"));
        }
    }
}

/// Only the findings that are errors (not declared leaks).
pub fn errors(f: &[Finding]) -> Vec<&Finding> {
    f.iter().filter(|x| !x.declared).collect()
}
