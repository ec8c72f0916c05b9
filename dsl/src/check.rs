//! The checks that replace review by eye. They run on final physical code — a lowered
//! function or a hand-written one — independently of the allocator and the frame builder:
//!
//! - ABI: every callee-saved register (and `ra`) written is restored on every path to every
//!   return; `sp` is back at its entry value and 16-byte aligned at calls and returns;
//!   registers the ABI reserves are never written; no register is read before it is written
//!   (arguments and the caller's registers excepted); stack accesses stay inside the frame.
//! - Control flow: every path ends in a return (or a tail call to a symbol); an indirect
//!   jump to a computed address is rejected, since nothing here can follow it; every
//!   instruction is reached by some path.
//! - Alignment: on a target without fast misaligned access, every scalar access is aligned
//!   to its size, as far as the declared alignment of the pointer arguments, the
//!   arithmetic on them and the alignment tests the code branches on prove; vector element
//!   accesses are aligned to the element on every target.
//! - Vector: vtype/vl is set on every path before each vector instruction; register groups
//!   are aligned to their size; no illegal overlap of destination and sources.
//! - Secrets: data reached through arguments declared secret (and everything computed from
//!   it) is not left in registers or in any byte of the stack frame at return, unless it
//!   was published (stored to a non-secret output buffer).
//! - Constant time: no branch and no memory address depends on secret data, where the
//!   target's multiplier is data-dependent (the C906) no 64-bit multiply has a secret
//!   factor that is not known to fit 32 bits as the instruction reads it, and no division
//!   or remainder has a secret operand (no target kgen knows has a divider of constant
//!   time). A leak is excused only on the instructions of the region that declares it
//!   ([`Func::leaking`]); a declaration no finding needs is an error.
//! - Interface: no store goes through a pointer the entry point declares read-only.
//!
//! One forward dataflow over the control-flow graph computes an abstract value per
//! register (defined? secret? how many upper bits are zero or copies of the sign? how many
//! low bits are zero? constant? pointer provenance? original value of which callee-saved
//! register?) plus the stack frame's contents (which bytes may be secret; which 8-byte
//! slots hold a saved register) and the vector type. Branches on an alignment test refine
//! the state on the edge where the test passed. Every instruction fact comes from the ISA
//! table's rows ([`crate::isa::Row`]: control flow, result extension, arithmetic, memory
//! access, multiplier operands, vtype).

use crate::abi::Abi;
use crate::ir::{Func, InstItem, Item, LeakKind, Opnd, Reg};
use crate::isa::{Addr, Arith, Cond, Control, Dir, Extend, Flow, Kind, Role, Shift, VType};
use crate::analysis::{label_positions, successors};
use crate::target::{Divider, Misaligned, Multiplier};
use std::collections::HashMap;
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
    /// A division or remainder with a secret operand, on a divider whose time depends on it.
    SecretDivTiming,
    /// A store through a pointer the entry point declares read-only (`In`).
    StoreToInput,
    /// An access that may be misaligned on a target that traps on it.
    Misaligned,
    /// Control flow the checks cannot follow (an indirect jump), or code no path reaches.
    ControlFlow,
    /// The dataflow did not reach a fixpoint.
    Dataflow,
    /// A declared leak that no instruction needs.
    UnusedLeak,
}

impl Check {
    /// The declared-leak kind that excuses this check, if any.
    pub fn leak(self) -> Option<LeakKind> {
        match self {
            Check::SecretBranch => Some(LeakKind::SecretBranch),
            Check::SecretAddress => Some(LeakKind::SecretAddress),
            Check::SecretMulTiming => Some(LeakKind::SecretMulTiming),
            Check::SecretDivTiming => Some(LeakKind::SecretDivTiming),
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
    /// A leak the function declared for this instruction (reported, not an error).
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
    /// The stack pointer plus an offset known to lie in `.0..=.1` (a known offset plus a
    /// value of a known number of bits: `sp + slot + (i & mask)`).
    SpRange(i64, i64),
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
    fn on_stack(self) -> bool {
        matches!(self, Ptr::Sp(_) | Ptr::SpRange(..) | Ptr::SpAny)
    }
    /// The offsets from the entry sp a stack pointer may hold.
    fn stack_range(self) -> Option<(i64, i64)> {
        match self {
            Ptr::Sp(k) => Some((k, k)),
            Ptr::SpRange(lo, hi) => Some((lo, hi)),
            _ => None,
        }
    }
    /// The pointer moved by `d` bytes (None: by an unknown amount).
    fn moved(self, d: Option<i64>) -> Ptr {
        match (self, d) {
            (Ptr::Sp(k), Some(d)) => Ptr::Sp(k + d),
            (Ptr::SpRange(lo, hi), Some(d)) => Ptr::SpRange(lo + d, hi + d),
            (Ptr::Sp(_) | Ptr::SpRange(..), None) | (Ptr::SpAny, _) => Ptr::SpAny,
            (Ptr::Arg(a, k), Some(d)) => Ptr::Arg(a, k + d),
            (Ptr::Arg(a, _), None) | (Ptr::ArgAny(a), _) => Ptr::ArgAny(a),
            (p, _) => p,
        }
    }
    fn join(a: Ptr, b: Ptr) -> Ptr {
        if a == b {
            a
        } else if let (Some((p, q)), Some((r, t))) = (a.stack_range(), b.stack_range()) {
            // The offsets of both, while they could still lie in one frame (so a pointer
            // moved on each pass of a loop widens to SpAny and the analysis ends).
            let (lo, hi) = (p.min(r), q.max(t));
            if hi - lo <= 4096 { Ptr::SpRange(lo, hi) } else { Ptr::SpAny }
        } else if a.on_stack() && b.on_stack() {
            Ptr::SpAny
        } else if let (Some(x), Some(y)) = (a.arg(), b.arg()) {
            if x == y { Ptr::ArgAny(x) } else { Ptr::None }
        } else {
            Ptr::None
        }
    }
}

/// Abstract value of one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    defined: bool,
    secret: bool,
    /// The value is zero-extended from this many bits (64: nothing known).
    zext: u8,
    /// The value is sign-extended from this many bits (64: nothing known).
    sext: u8,
    /// Low bits known to be zero.
    tz: u8,
    konst: Option<i64>,
    ptr: Ptr,
    /// Holds the caller's value of this register (callee-saved bookkeeping).
    orig: Option<u8>,
    /// The value is the low `.1` bits of the OR of the registers in the bit set `.0` (as
    /// they are now): a branch on it being zero proves their alignment.
    low: Option<(u32, u8)>,
    /// An upper bound of the value as an unsigned number, tighter than `zext` says (`x & m`
    /// is at most `m`).
    max: Option<u64>,
}

impl Val {
    const UNDEF: Val = Val { defined: false, secret: false, zext: 64, sext: 64, tz: 0, konst: None, ptr: Ptr::None, orig: None, low: None, max: None };
    const PUBLIC: Val = Val { defined: true, ..Val::UNDEF };

    fn constant(v: i64) -> Val {
        let zext = 64 - v.leading_zeros() as u8;
        let sext = if v >= 0 { zext + 1 } else { 65 - (!v).leading_zeros() as u8 }.min(64);
        let tz = if v == 0 { 64 } else { v.trailing_zeros() as u8 };
        Val { konst: Some(v), zext, sext, tz, ..Val::PUBLIC }
    }

    fn join(a: Val, b: Val) -> Val {
        Val {
            defined: a.defined && b.defined,
            secret: a.secret || b.secret,
            zext: a.zext.max(b.zext),
            sext: a.sext.max(b.sext),
            tz: a.tz.min(b.tz),
            konst: if a.konst == b.konst { a.konst } else { None },
            ptr: Ptr::join(a.ptr, b.ptr),
            orig: if a.orig == b.orig { a.orig } else { None },
            low: if a.low == b.low { a.low } else { None },
            max: a.max.zip(b.max).map(|(x, y)| x.max(y)),
        }
    }

    /// The largest unsigned value this can be: `max`, else what `zext` allows.
    fn bound(self) -> Option<u64> {
        self.max.or((self.zext < 64).then(|| (1u64 << self.zext) - 1))
    }

    /// The value fits 32 bits as a multiplier reads it (signed or not).
    fn fits32(&self, signed: bool) -> bool {
        self.zext <= 32 || (signed && self.sext <= 32)
    }
}

/// A set of byte offsets (from the entry sp), as sorted disjoint half-open intervals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Bytes(Vec<(i64, i64)>);

impl Bytes {
    fn insert(&mut self, lo: i64, hi: i64) {
        if lo >= hi {
            return;
        }
        let (mut lo, mut hi) = (lo, hi);
        let mut out = Vec::with_capacity(self.0.len() + 1);
        for &(a, b) in &self.0 {
            if b < lo || a > hi {
                out.push((a, b));
            } else {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        out.push((lo, hi));
        out.sort_unstable();
        self.0 = out;
    }
    fn remove(&mut self, lo: i64, hi: i64) {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        for &(a, b) in &self.0 {
            if b <= lo || a >= hi {
                out.push((a, b));
                continue;
            }
            if a < lo {
                out.push((a, lo));
            }
            if b > hi {
                out.push((hi, b));
            }
        }
        self.0 = out;
    }
    fn any(&self, lo: i64, hi: i64) -> bool {
        self.0.iter().any(|&(a, b)| a < hi && lo < b)
    }
    /// Whether every byte of [lo, hi) is in the set.
    fn covers(&self, lo: i64, hi: i64) -> bool {
        lo >= hi || self.0.iter().any(|&(a, b)| a <= lo && hi <= b)
    }
    fn intersect(&self, o: &Bytes) -> Bytes {
        let mut r = Vec::new();
        for &(a, b) in &self.0 {
            for &(c, d) in &o.0 {
                let (lo, hi) = (a.max(c), b.min(d));
                if lo < hi {
                    r.push((lo, hi));
                }
            }
        }
        r.sort_unstable();
        Bytes(r)
    }
    fn union(&self, o: &Bytes) -> Bytes {
        let mut r = self.clone();
        for &(a, b) in &o.0 {
            r.insert(a, b);
        }
        r
    }
}

/// 8-byte stack words and their values, sorted by offset.
#[derive(Clone, Debug, Default, PartialEq)]
struct WordMap(Vec<(i64, Val)>);

impl WordMap {
    fn get(&self, k: &i64) -> Option<&Val> {
        self.0.binary_search_by_key(k, |e| e.0).ok().map(|i| &self.0[i].1)
    }
    fn get_mut(&mut self, k: &i64) -> Option<&mut Val> {
        self.0.binary_search_by_key(k, |e| e.0).ok().map(|i| &mut self.0[i].1)
    }
    fn insert(&mut self, k: i64, v: Val) {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1 = v,
            Err(i) => self.0.insert(i, (k, v)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
struct State {
    x: [Val; 32],
    /// Vector registers: (written, secret).
    v: [(bool, bool); 32],
    /// Registers saved whole: 8-byte values stored at 8-byte aligned offsets from the entry
    /// sp by an 8-byte store (a narrower store over one removes it).
    slots: WordMap,
    /// Bytes of the stack that may hold secret data.
    secret: Bytes,
    /// Bytes of the stack written on every path here.
    init: Bytes,
    /// 8-byte stack words that hold the same value as the registers of the set (by
    /// offset, sorted): a spilled register and its reloads, so that an alignment test of
    /// one refines the others.
    copies: Vec<(i64, u32)>,
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
        let mut slots = WordMap::default();
        for (k, a) in self.slots.0.iter() {
            if let Some(b) = o.slots.get(k) {
                slots.0.push((*k, Val::join(*a, *b)));
            }
        }
        let vtype = match (self.vtype, o.vtype) {
            (None, None) => None,
            (Some(a), Some(b)) if a == b => Some(a),
            (None, _) | (_, None) => None,
            _ => Some(None),
        };
        let copies = self
            .copies
            .iter()
            .filter_map(|&(k, a)| o.copies.iter().find(|c| c.0 == k).map(|c| (k, a & c.1)).filter(|c| c.1 != 0))
            .collect();
        State { x, v, slots, secret: self.secret.union(&o.secret), init: self.init.intersect(&o.init), copies, vtype }
    }

    /// Register `r` is about to be overwritten: relations that name it no longer hold.
    fn forget(&mut self, r: usize) {
        for c in self.copies.iter_mut() {
            c.1 &= !(1 << r);
        }
        self.copies.retain(|c| c.1 != 0);
        for v in self.x.iter_mut() {
            if v.low.is_some_and(|(set, _)| set >> r & 1 != 0) {
                v.low = None;
            }
        }
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

fn imm(o: &Opnd) -> Option<i64> {
    match o {
        Opnd::Imm(v) => Some(*v),
        _ => None,
    }
}

struct Ctx<'a> {
    f: &'a Func,
    abi: Abi,
    /// 64-bit multiplies have data-dependent latency on this target.
    mul_timing: bool,
    /// Misaligned scalar accesses may trap on this target.
    slow_misaligned: bool,
    /// VLEN for vector extents: the largest the code must work with.
    vlen: usize,
    /// Alignment of the data objects the code may address.
    data_align: HashMap<String, u32>,
    findings: Vec<Finding>,
    /// Instruction number of each item.
    inum: Vec<usize>,
    /// Declared leaks some finding used.
    leak_used: Vec<bool>,
}

impl Ctx<'_> {
    fn report(&mut self, item: usize, check: Check, msg: String) {
        let (inst, leak) = match &self.f.items[item] {
            Item::Inst(i) => (self.f.inst_text(i), i.leak),
            // A function not lowered yet: its exit becomes the epilogue and `ret`.
            Item::Exit => ("ret".to_string(), None),
            _ => (String::new(), None),
        };
        let declared = match (check.leak(), leak) {
            (Some(k), Some(l)) if self.f.leaks.get(l as usize).is_some_and(|d| d.kind == k) => {
                self.leak_used[l as usize] = true;
                true
            }
            _ => false,
        };
        let f = Finding { func: self.f.name.clone(), check, index: self.inum[item], inst, msg, declared };
        if !self.findings.contains(&f) {
            self.findings.push(f);
        }
    }

    /// The vector configuration a vtype gives, at the checker's VLEN.
    fn vconf(&self, d: crate::isa::VDialect, vt: u64) -> Option<crate::isa::hart::VConf> {
        crate::isa::Hart::new(self.vlen).decode_vtype(d, vt)
    }
}

fn entry_state(f: &Func, abi: Abi) -> State {
    let mut x = [Val::UNDEF; 32];
    x[0] = Val::constant(0);
    x[2] = Val { ptr: Ptr::Sp(0), tz: 4, ..Val::PUBLIC };
    for r in [1u8, 3, 4] {
        x[r as usize] = Val { orig: Some(r), ..Val::PUBLIC };
    }
    for &r in abi.callee_saved() {
        x[r as usize] = Val { orig: Some(r), ..Val::PUBLIC };
    }
    for (k, a) in f.args.iter().enumerate() {
        let r = 10 + k;
        let is_ptr = a.ty.is_ptr();
        x[r] = Val {
            secret: a.secret && !is_ptr,
            ptr: if is_ptr { Ptr::Arg(k as u8, 0) } else { Ptr::None },
            tz: if is_ptr { a.align.max(1).trailing_zeros() as u8 } else { 0 },
            ..Val::PUBLIC
        };
    }
    let mut slots = WordMap::default();
    let mut init = Bytes::default();
    if f.host_frame > 0 {
        // Go's frame prologue saved the return address at 0(sp).
        slots.insert(0, Val { orig: Some(1), ..Val::PUBLIC });
        init.insert(0, 8);
    }
    State { x, v: [(false, false); 32], slots, secret: Bytes::default(), init, copies: Vec::new(), vtype: None }
}

/// Bytes a unit-stride vector load or store covers at VLMAX under the vtype known here
/// (all fields of a segment access), or None for other accesses.
fn unit_stride_extent(cx: &Ctx, i: &InstItem, s: &State) -> Option<i64> {
    let row = i.row();
    let m = row.mem?;
    let d = row.vdialect?;
    if !matches!(m.addr, Addr::VUnit { .. }) {
        return None;
    }
    let vlenb = (cx.vlen / 8) as i64;
    let kind = row.ops[0].kind;
    match kind {
        Kind::V(crate::isa::VGroup::Whole(n)) => return Some(n as i64 * vlenb),
        Kind::V(crate::isa::VGroup::Mask) => return Some(vlenb),
        _ => {}
    }
    let c = cx.vconf(d, s.vtype??)?;
    let nf = match kind {
        Kind::V(crate::isa::VGroup::Seg(n)) | Kind::V(crate::isa::VGroup::Eew { nf: n, .. }) => n as i64,
        _ => 1,
    };
    let bytes = if m.bytes == 0 { c.sew as i64 / 8 } else { m.bytes as i64 };
    Some(c.vlmax as i64 * bytes * nf)
}

fn group_count(cx: &Ctx, row: &crate::isa::Row, kind: Kind, s: &State) -> usize {
    let Kind::V(g) = kind else { return 1 };
    let Some(Some(vt)) = s.vtype else { return 1 };
    let Some(d) = row.vdialect else { return 1 };
    let Some(c) = cx.vconf(d, vt) else { return 1 };
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

/// The abstract value of operand `k` (a register or an immediate).
fn operand_val(i: &InstItem, s: &State, k: usize) -> Val {
    match i.ops.get(k) {
        Some(Opnd::Reg(Reg::X(r))) => s.x[*r as usize],
        Some(Opnd::Imm(v)) => Val::constant(*v),
        _ => Val::PUBLIC,
    }
}

/// Registers whose low bits the value of operand `k` is the OR of: the operand's own
/// relation if it is an exact OR, else the register itself.
fn or_set(i: &InstItem, s: &State, k: usize) -> Option<u32> {
    let r = xreg(i.ops.get(k)?)?;
    if r == 0 {
        return Some(0);
    }
    Some(match s.x[r].low {
        Some((set, 64)) => set,
        _ => 1 << r,
    })
}

/// The abstract result of an integer instruction that is not a load (the destination is
/// written with it).
fn result_val(i: &InstItem, s: &State, any_secret: bool, data_align: &HashMap<String, u32>) -> Val {
    let row = i.row();
    let opv = |k: u8| operand_val(i, s, k as usize);
    let immv = |k: u8| imm(&i.ops[k as usize]);
    let mut v = Val { secret: any_secret, ..Val::PUBLIC };
    // Arithmetic: constants, low zero bits, pointer provenance.
    match row.arith {
        Some(Arith::AddImm { src, imm: k }) => {
            let a = opv(src);
            match &i.ops[k as usize] {
                // The low half of an address: as aligned as the auipc said.
                Opnd::PcrelLo { .. } => {
                    v.ptr = Ptr::Data;
                    v.tz = a.tz;
                }
                o => {
                    let d = imm(o);
                    v.konst = a.konst.zip(d).map(|(x, y)| x.wrapping_add(y));
                    v.tz = a.tz.min(d.map(|d| Val::constant(d).tz).unwrap_or(0));
                    v.ptr = a.ptr.moved(d);
                    if d == Some(0) {
                        v = Val { secret: any_secret, orig: None, low: a.low, ..a };
                    }
                }
            }
        }
        Some(Arith::Add { a, b, shift }) => {
            let sh = match shift {
                Shift::By(n) => Some(n as i64),
                Shift::Imm(k) => immv(k),
            };
            let (x, y) = (opv(a), opv(b));
            let y_shifted = |c: i64| sh.map(|sh| c.wrapping_shl(sh as u32));
            v.konst = match (x.konst, y.konst) {
                (Some(p), Some(q)) => y_shifted(q).map(|q| p.wrapping_add(q)),
                _ => None,
            };
            v.tz = x.tz.min(y.tz.saturating_add(sh.unwrap_or(0) as u8).min(64));
            // A stack pointer plus a value of a few known bits: a range of offsets.
            let bounded = |q: Val| q.bound().filter(|&m| q.konst.is_none() && q.ptr == Ptr::None && m < 1 << 16).map(|m| m as i64);
            v.ptr = match (x.ptr, y.ptr, sh) {
                (p, Ptr::None, Some(0)) if p.stack_range().is_some() && y.konst.is_none() && bounded(y).is_some() => {
                    let (lo, hi) = p.stack_range().unwrap_or((0, 0));
                    Ptr::SpRange(lo, hi + bounded(y).unwrap_or(0))
                }
                (Ptr::None, p, Some(0)) if p.stack_range().is_some() && x.konst.is_none() && bounded(x).is_some() => {
                    let (lo, hi) = p.stack_range().unwrap_or((0, 0));
                    Ptr::SpRange(lo, hi + bounded(x).unwrap_or(0))
                }
                (p, Ptr::None, _) if p != Ptr::None => p.moved(y.konst.and_then(y_shifted)),
                (Ptr::None, p, Some(0)) if p != Ptr::None => p.moved(x.konst),
                _ => Ptr::None,
            };
        }
        Some(Arith::Sub { a, b }) => {
            let (x, y) = (opv(a), opv(b));
            v.konst = x.konst.zip(y.konst).map(|(p, q)| p.wrapping_sub(q));
            v.tz = x.tz.min(y.tz);
            // a - (a mod 2^k) is a multiple of 2^k.
            if let (Some(ra), Some((set, k))) = (xreg(&i.ops[a as usize]), y.low) {
                if set == 1 << ra {
                    v.tz = v.tz.max(k);
                }
            }
            v.ptr = if y.ptr == Ptr::None { x.ptr.moved(y.konst.map(|c| c.wrapping_neg())) } else { Ptr::None };
        }
        Some(Arith::ShlImm { src, sh }) => {
            let (a, n) = (opv(src), immv(sh).unwrap_or(0));
            v.konst = a.konst.map(|c| c.wrapping_shl(n as u32));
            v.tz = (a.tz as i64 + n).min(64) as u8;
        }
        Some(Arith::PcRel { imm: k }) => {
            v.ptr = Ptr::Data;
            // The address of a data object: as aligned as the object and the addend.
            if let Opnd::PcrelHi { sym, addend } = &i.ops[k as usize] {
                let obj = data_align.get(sym.as_str()).map(|a| a.max(&1).trailing_zeros() as u8).unwrap_or(0);
                v.tz = obj.min(Val::constant(*addend).tz);
            }
        }
        None => {}
    }
    // Width of the result, from the row.
    let (zext, sext) = match row.result {
        Extend::Unknown => (64, 64),
        Extend::Zero(n) => (n, (n + 1).min(64)),
        Extend::Sign(n) => (64, n),
        Extend::ZeroAboveImm(k) => {
            let n = immv(k).map(|m| (m + 1).clamp(0, 64) as u8).unwrap_or(64);
            (n, (n + 1).min(64))
        }
        Extend::SignFromImm(k) => (64, immv(k).map(|m| (m + 1).clamp(1, 64) as u8).unwrap_or(64)),
        Extend::ShiftRightImm { src, sh } => {
            let n = opv(src).zext.saturating_sub(immv(sh).unwrap_or(0).clamp(0, 64) as u8);
            (n, (n + 1).min(64))
        }
        Extend::ShiftRight { src } => {
            let n = opv(src).zext;
            (n, (n + 1).min(64))
        }
        Extend::And(a, b) => {
            let (x, y) = (opv(a), opv(b));
            v.tz = v.tz.max(x.tz.max(y.tz));
            v.max = [x, y].iter().filter_map(|o| o.konst.filter(|c| *c >= 0).map(|c| c as u64).or(o.max)).min();
            let n = x.zext.min(y.zext);
            (n, (n + 1).min(64).min(x.sext.max(y.sext)))
        }
        Extend::Or(a, b) => {
            let (x, y) = (opv(a), opv(b));
            v.tz = v.tz.max(x.tz.min(y.tz));
            (x.zext.max(y.zext), x.sext.max(y.sext))
        }
        Extend::Upper(k) => {
            let c = immv(k).map(|u| ((u << 12) as i32) as i64);
            v.konst = c;
            (64, 64)
        }
    };
    v.zext = v.zext.min(zext);
    v.sext = v.sext.min(sext);
    if let Some(c) = v.konst {
        let k = Val::constant(c);
        v = Val { secret: any_secret, ptr: v.ptr, ..k };
    }
    // Relations for alignment tests: `or t, a, b` (t = a | b) and `andi t, a, 2^k - 1`.
    match row.result {
        Extend::Or(a, b) if i.ops[b as usize] != Opnd::Imm(0) && matches!(i.ops[b as usize], Opnd::Reg(_)) => {
            v.low = or_set(i, s, a as usize).zip(or_set(i, s, b as usize)).map(|(x, y)| (x | y, 64));
        }
        Extend::And(a, b) => {
            // One operand a mask 2^k - 1, the other the tested value.
            let low_mask = |k: u8| operand_val(i, s, k as usize).konst.filter(|m| *m > 0 && (m + 1) & m == 0);
            let found = match (low_mask(b), low_mask(a)) {
                (Some(m), _) => Some((m, a)),
                (None, Some(m)) => Some((m, b)),
                _ => None,
            };
            if let Some((m, src)) = found {
                let k = (m + 1).trailing_zeros() as u8;
                v.low = or_set(i, s, src as usize).map(|set| (set, k));
            }
        }
        _ => {}
    }
    v
}

/// The memory access an instruction makes, for the bounds, alignment and secret checks:
/// (base register, address offset if known, low zero bits of the address).
fn address(i: &InstItem, s: &State, m: &crate::isa::Mem) -> (Option<usize>, Option<i64>, u8) {
    let reg_of = |k: u8| xreg(&i.ops[k as usize]);
    let tz_of = |k: u8| operand_val(i, s, k as usize).tz;
    match m.addr {
        Addr::BaseOff { base, off } => {
            let o = imm(&i.ops[off as usize]);
            (reg_of(base), o, tz_of(base).min(o.map(|o| Val::constant(o).tz).unwrap_or(0)))
        }
        Addr::BaseIdx { base, index, shift, .. } => {
            let sh = imm(&i.ops[shift as usize]).unwrap_or(0) as u8;
            (reg_of(base), None, tz_of(base).min(tz_of(index).saturating_add(sh).min(64)))
        }
        Addr::Incr { base, off, shift, before } => {
            let step = imm(&i.ops[off as usize]).zip(imm(&i.ops[shift as usize])).map(|(o, sh)| o << sh);
            if before {
                (reg_of(base), step, tz_of(base).min(step.map(|d| Val::constant(d).tz).unwrap_or(0)))
            } else {
                (reg_of(base), Some(0), tz_of(base))
            }
        }
        Addr::Pair { base, off, shift } => {
            let d = imm(&i.ops[off as usize]).zip(imm(&i.ops[shift as usize])).map(|(o, sh)| o << sh);
            (reg_of(base), d, tz_of(base).min(d.map(|d| Val::constant(d).tz).unwrap_or(0)))
        }
        Addr::VUnit { base } => (reg_of(base), Some(0), tz_of(base)),
        Addr::VStrided { base, stride } => (reg_of(base), Some(0), tz_of(base).min(tz_of(stride))),
        Addr::VIndexed { base, .. } => (reg_of(base), None, 0),
    }
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
    let masked = row.vm_operand().is_some_and(|k| i.ops[k] == Opnd::Imm(0));
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
        if spec.kind == Kind::V0 || (spec.kind == Kind::Vm && masked) {
            any_secret |= s.v[0].1;
        }
    }
    // Control flow on secrets.
    if report && i.control() == Control::Branch && any_secret {
        cx.report(idx, Check::SecretBranch, "branch condition depends on secret data".into());
    }
    // Data-dependent multiplier timing.
    if let (true, true, Some(m)) = (report, cx.mul_timing, row.mul) {
        if !m.narrow {
            for (k, signed) in m.ops.iter().zip(m.signed) {
                if let Some(r) = xreg(&i.ops[*k as usize]) {
                    let v = s.x[r];
                    if v.secret && !v.fits32(signed) {
                        cx.report(
                            idx,
                            Check::SecretMulTiming,
                            format!(
                                "factor {} is secret and not known to fit 32 bits ({}): the {} multiplier's latency depends on it",
                                crate::text::XNAMES[r],
                                if signed { "signed" } else { "unsigned" },
                                f.target.name
                            ),
                        );
                    }
                }
            }
        }
    }
    // Data-dependent divider timing.
    if let (true, Some(d)) = (report, row.div) {
        for k in d.ops {
            if let Some(r) = xreg(&i.ops[k as usize]).filter(|&r| s.x[r].secret) {
                let why = match f.target.divider {
                    Divider::C906 => "the C906 divider's time depends on the operands' sizes".to_string(),
                    Divider::DataDependent => format!("division is not of constant time on target {} (Zkt does not cover it)", f.target.name),
                };
                cx.report(idx, Check::SecretDivTiming, format!("{} {} is secret: {why}", if k == d.ops[0] { "dividend" } else { "divisor" }, crate::text::XNAMES[r]));
            }
        }
    }
    // Vector division (`vd, vs2, vs1/rs1`: vs2 / vs1): an iterative divider per element on
    // the C906, and outside Zvkt's data-independent set on every target.
    if report && row.class == crate::isa::Class::VDiv {
        for (k, role) in [(1, "dividend"), (2, "divisor")] {
            let secret = match i.ops.get(k) {
                Some(o) => match (vreg_of(o), xreg(o)) {
                    (Some(v), _) => s.v[v].1.then(|| format!("v{v}")),
                    (_, Some(r)) => s.x[r].secret.then(|| crate::text::XNAMES[r].to_string()),
                    _ => None,
                },
                None => None,
            };
            if let Some(name) = secret {
                cx.report(
                    idx,
                    Check::SecretDivTiming,
                    format!("{role} {name} is secret: vector division is not of constant time on target {} (Zvkt does not cover it)", f.target.name),
                );
            }
        }
    }
    // Memory.
    let mut loaded = Val::PUBLIC;
    // An 8-byte reload of a stack word: the destination joins the word's copies.
    let mut reload: Option<i64> = None;
    if let Some(m) = row.mem {
        let (base, off, tz) = address(i, s, &m);
        let index_secret = match m.addr {
            Addr::VIndexed { index, .. } => vreg_of(&i.ops[index as usize]).is_some_and(|v| s.v[v].1),
            _ => false,
        };
        let addr_secret = index_secret || address_regs(row, &i.ops).into_iter().any(|r| s.x[r].secret);
        if report && addr_secret {
            cx.report(idx, Check::SecretAddress, format!("{} address depends on secret data", if m.dir == Dir::Load { "load" } else { "store" }));
        }
        let bptr = base.map(|r| s.x[r].ptr).unwrap_or(Ptr::None);
        if let (true, Dir::Store, Some(k)) = (report, m.dir, bptr.arg()) {
            if let Some(a) = f.args.get(k as usize).filter(|a| matches!(a.ty, crate::entry::Ty::Ptr { access: crate::entry::Access::In, .. })) {
                cx.report(idx, Check::StoreToInput, format!("store through `{}`, which the entry point declares read-only (In; its prototype says const)", a.name));
            }
        }
        // Bytes the access covers: one access, or a whole unit-stride vector group at VLMAX.
        let extent = unit_stride_extent(cx, i, s).unwrap_or(m.bytes.max(1) as i64 * if matches!(m.addr, Addr::Pair { .. }) { 2 } else { 1 });
        // Alignment: the element for vectors, the access for scalars.
        let elem = if row.vdialect.is_some() {
            if m.bytes == 0 {
                s.vtype.flatten().and_then(|vt| cx.vconf(row.vdialect.unwrap(), vt)).map(|c| c.sew / 8).unwrap_or(1) as u8
            } else {
                m.bytes
            }
        } else {
            m.bytes
        };
        let need = elem.max(1).trailing_zeros() as u8;
        if report && tz < need && (cx.slow_misaligned || row.vdialect.is_some()) {
            let from = match bptr {
                Ptr::Arg(k, _) | Ptr::ArgAny(k) => f.args.get(k as usize).map(|a| format!(" (through `{}`, declared {}-byte aligned)", a.name, a.align)).unwrap_or_default(),
                _ => String::new(),
            };
            let why = if row.vdialect.is_some() { "vector elements must be aligned".to_string() } else { format!("target {} has no fast misaligned access", f.target.name) };
            cx.report(idx, Check::Misaligned, format!("{elem}-byte access at an address known aligned to {} bytes only{from}: {why}", 1u64 << tz.min(63)));
        }
        let frame_off = match (bptr, off) {
            (Ptr::Sp(k), Some(o)) => Some(k + o),
            _ => None,
        };
        // The offsets the access may start at, through a pointer with a range of offsets.
        let frame_range = match (bptr, off) {
            (Ptr::SpRange(lo, hi), Some(o)) => Some((lo + o, hi + o)),
            _ => None,
        };
        let arg_off = match (bptr, off) {
            (Ptr::Arg(_, k), Some(o)) => Some(k + o),
            _ => None,
        };
        let sp_now = match s.x[2].ptr {
            Ptr::Sp(k) => Some(k),
            _ => None,
        };
        if report && matches!(bptr, Ptr::Sp(_) | Ptr::SpAny) {
            match (frame_off, sp_now) {
                (Some(a), Some(spk))
                    if !((a >= spk && a + extent <= 0)
                        || (a >= 8 && a + extent <= 8 + f.host_frame as i64)
                        || (f.host_frame > 0 && m.dir == Dir::Load && a == 0 && extent == 8)) =>
                {
                    let host = if f.host_frame > 0 { format!(" or the host's frame [sp+8, sp+{})", 8 + f.host_frame) } else { String::new() };
                    cx.report(idx, Check::StackBounds, format!("stack access at entry sp{a:+} is outside the frame [sp{spk:+}, sp){host}"));
                }
                (None, _) => cx.report(idx, Check::StackBounds, "stack access at an unknown offset".into()),
                _ => {}
            }
        }
        if let (true, Some((lo, hi))) = (report, frame_range) {
            let inside = |spk: i64| (lo >= spk && hi + extent <= 0) || (lo >= 8 && hi + extent <= 8 + f.host_frame as i64);
            if !sp_now.is_some_and(inside) {
                cx.report(idx, Check::StackBounds, format!("stack access at entry sp{lo:+}..sp{:+} may leave the frame", hi + extent));
            }
        }
        match m.dir {
            Dir::Load => {
                if let Some(a) = frame_off.filter(|a| m.bytes == 8 && a % 8 == 0 && row.vdialect.is_none()) {
                    reload = Some(a);
                }
                if let Some((a, b)) = frame_off.map(|a| (a, a)).or(frame_range) {
                    if report && !s.init.covers(a, b + extent) {
                        cx.report(idx, Check::ReadBeforeWrite, format!("stack bytes at entry sp{a:+}..sp{:+} are read before they are written on some path", b + extent));
                    }
                }
                let from_stack = frame_off.map(|a| {
                    let secret = s.secret.any(a, a + extent);
                    match s.slots.get(&a) {
                        Some(v) if m.bytes == 8 && a % 8 == 0 && row.vdialect.is_none() => Val { secret, ..*v },
                        _ => Val { secret, ..Val::PUBLIC },
                    }
                });
                let from_range = frame_range.map(|(a, b)| Val { secret: s.secret.any(a, b + extent), ..Val::PUBLIC });
                loaded = match (bptr, from_stack.or(from_range)) {
                    (_, Some(v)) => v,
                    (Ptr::Arg(k, _) | Ptr::ArgAny(k), _) => Val { secret: bytes_secret(k, arg_off, extent) || addr_secret, ..Val::PUBLIC },
                    _ => Val { secret: addr_secret, ..Val::PUBLIC },
                };
            }
            Dir::Store => {
                // The stored registers: operand 0 (both data operands for pairs).
                let stored: Vec<Val> = row
                    .ops
                    .iter()
                    .zip(&i.ops)
                    .filter(|(sp, _)| sp.role == Role::Use && matches!(sp.kind, Kind::X | Kind::V(_)))
                    .take(if matches!(m.addr, Addr::Pair { .. }) { 2 } else { 1 })
                    .map(|(_, o)| match o {
                        Opnd::Reg(Reg::X(r)) => s.x[*r as usize],
                        Opnd::Reg(Reg::V(r)) => Val { secret: (0..group_count(cx, row, row.ops[0].kind, s)).any(|k| (*r as usize) + k < 32 && s.v[*r as usize + k].1), ..Val::PUBLIC },
                        _ => Val::PUBLIC,
                    })
                    .collect();
                if let Some(a) = frame_off {
                    // Byte-exact: the bytes written take the stored value's secrecy.
                    let w = m.bytes.max(1) as i64;
                    let parts: Vec<(i64, i64, Val)> = if row.vdialect.is_some() {
                        vec![(a, a + extent, stored.first().copied().unwrap_or(Val::PUBLIC))]
                    } else {
                        stored.iter().enumerate().map(|(k, v)| (a + w * k as i64, a + w * (k as i64 + 1), *v)).collect()
                    };
                    for (lo, hi, v) in parts {
                        n.init.insert(lo, hi);
                        if v.secret {
                            n.secret.insert(lo, hi);
                        } else {
                            n.secret.remove(lo, hi);
                        }
                        n.slots.0.retain(|&(g, _)| g + 8 <= lo || g >= hi);
                        n.copies.retain(|c| c.0 + 8 <= lo || c.0 >= hi);
                        if hi - lo == 8 && lo % 8 == 0 && row.vdialect.is_none() {
                            n.slots.insert(lo, Val { low: None, ..v });
                            if let (1, Some(Opnd::Reg(Reg::X(q)))) = (stored.len(), i.ops.first()) {
                                if *q != 0 {
                                    let at = n.copies.partition_point(|c| c.0 < lo);
                                    n.copies.insert(at, (lo, 1 << q));
                                }
                            }
                        }
                    }
                } else if let Some((a, b)) = frame_range {
                    // One of a range of offsets: those bytes may now hold it (none surely).
                    if stored.iter().any(|v| v.secret) {
                        n.secret.insert(a, b + extent);
                    }
                    n.slots.0.retain(|&(g, _)| g + 8 <= a || g >= b + extent);
                    n.copies.retain(|c| c.0 + 8 <= a || c.0 >= b + extent);
                } else if bptr.on_stack() {
                    // Unknown offset: any byte of the frame may now hold it.
                    if stored.iter().any(|v| v.secret) {
                        n.secret.insert(sp_now.unwrap_or(-(1 << 20)), 0);
                        n.secret.insert(8, 8 + f.host_frame as i64);
                    }
                    n.slots.0.clear();
                    n.copies.clear();
                } else if let Some(k) = bptr.arg() {
                    if !arg_secret(k) {
                        // Published: stored to the caller's output, no longer a secret to wipe.
                        if let Some(Opnd::Reg(Reg::X(r))) = i.ops.first() {
                            if *r != 0 && row.ops[0].role == Role::Use {
                                n.x[*r as usize].secret = false;
                            }
                        }
                        if let Some(Opnd::Reg(Reg::V(r))) = i.ops.first() {
                            // The whole stored group (LMUL registers, or all fields).
                            for k in 0..group_count(cx, row, row.ops[0].kind, s) {
                                if (*r as usize) + k < 32 {
                                    n.v[*r as usize + k].1 = false;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Vector type.
    if let Some(vs) = row.vset {
        n.vtype = Some(match vs {
            VType::Imm(k) => imm(&i.ops[k as usize]).map(|v| v as u64),
            VType::Reg(_) => None,
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
            Some(Some(vt)) => match cx.vconf(d, vt) {
                Some(c) => {
                    let ops: Vec<i64> = i
                        .ops
                        .iter()
                        .map(|o| match o {
                            Opnd::Reg(Reg::X(r)) | Opnd::Reg(Reg::V(r)) => *r as i64,
                            Opnd::Imm(v) => *v,
                            _ => 0,
                        })
                        .collect();
                    if report {
                        if let Some(why) = crate::isa::groups::group_alignment_violation(row, &ops, &c) {
                            cx.report(idx, Check::VectorGroups, why);
                        }
                        if let Some(why) = crate::isa::groups::v1_overlap_violation(row, &ops, &c) {
                            cx.report(idx, Check::VectorGroups, why);
                        }
                    }
                }
                None => {
                    if report {
                        cx.report(idx, Check::VectorType, format!("vtype {vt:#x} is not valid"));
                    }
                }
            },
        }
    }
    // Writes.
    let is_load = row.mem.is_some_and(|m| m.dir == Dir::Load);
    let value = if is_load {
        let (zext, sext) = match row.result {
            Extend::Zero(b) => (b, (b + 1).min(64)),
            Extend::Sign(b) => (64, b),
            _ => (64, 64),
        };
        Val { zext: loaded.zext.min(zext), sext: loaded.sext.min(sext), low: None, ..loaded }
    } else {
        result_val(i, s, any_secret, &cx.data_align)
    };
    for (spec, o) in row.ops.iter().zip(&i.ops) {
        if !matches!(spec.role, Role::Def | Role::UseDef) {
            continue;
        }
        match o {
            Opnd::Reg(Reg::X(0)) => {}
            Opnd::Reg(Reg::X(r)) if reload.is_some_and(|a| s.copies.iter().any(|c| c.0 == a && c.1 >> *r & 1 != 0)) => {
                // A reload into a register that already holds the word changes nothing.
            }
            Opnd::Reg(Reg::X(r)) => {
                let r = *r as usize;
                n.forget(r);
                if let Some(a) = reload {
                    // Right after the load the register equals the word, whatever held it.
                    match n.copies.iter_mut().find(|c| c.0 == a) {
                        Some(c) => c.1 |= 1 << r,
                        None => {
                            let at = n.copies.partition_point(|c| c.0 < a);
                            n.copies.insert(at, (a, 1 << r));
                        }
                    }
                }
                n.x[r] = if spec.kind == Kind::XMem {
                    // Increment-address forms update the base: a pointer of the same kind,
                    // moved by the step.
                    let step = match row.mem.map(|m| m.addr) {
                        Some(Addr::Incr { off, shift, .. }) => imm(&i.ops[off as usize]).zip(imm(&i.ops[shift as usize])).map(|(o, sh)| o << sh),
                        _ => None,
                    };
                    let b = s.x[r];
                    Val { ptr: b.ptr.moved(step), orig: None, konst: None, low: None, max: None, tz: b.tz.min(step.map(|d| Val::constant(d).tz).unwrap_or(0)), ..b }
                } else {
                    value
                };
            }
            Opnd::Reg(Reg::V(r)) => {
                let secret = if is_load { loaded.secret } else { any_secret };
                for k in 0..group_count(cx, row, spec.kind, s) {
                    if (*r as usize) + k < 32 {
                        n.v[*r as usize + k] = (true, secret);
                    }
                }
            }
            _ => {}
        }
    }
    // A call requires 16-byte alignment.
    if report && i.control() == Control::Call {
        if let Ptr::Sp(k) = n.x[2].ptr {
            if k % 16 != 0 {
                cx.report(idx, Check::StackPointer, format!("call with sp at entry{k:+}, not 16-byte aligned"));
            }
        }
    }
    n
}

/// The integer registers an access's address is computed from.
fn address_regs(row: &crate::isa::Row, ops: &[Opnd]) -> Vec<usize> {
    let Some(m) = row.mem else { return Vec::new() };
    let idx: Vec<u8> = match m.addr {
        Addr::BaseOff { base, .. } | Addr::Incr { base, .. } | Addr::Pair { base, .. } | Addr::VUnit { base } | Addr::VIndexed { base, .. } => vec![base],
        Addr::BaseIdx { base, index, .. } => vec![base, index],
        Addr::VStrided { base, stride } => vec![base, stride],
    };
    idx.iter().filter_map(|&k| xreg(&ops[k as usize])).collect()
}

/// The states on the edges out of item `i`: refined, on the side of a branch where an
/// alignment test passed (`t = (p | q) & (2^k - 1)` is zero), with p and q known aligned.
fn edges(f: &Func, label_at: &[usize], i: usize, out: &State) -> Vec<(usize, State)> {
    let succ = successors(f, label_at, i);
    let Item::Inst(it) = &f.items[i] else { return succ.into_iter().map(|s| (s, out.clone())).collect() };
    let Flow::Branch { cond, .. } = it.row().flow else { return succ.into_iter().map(|s| (s, out.clone())).collect() };
    let (a, b) = (xreg(&it.ops[0]), xreg(&it.ops[1]));
    let tested = match (a, b) {
        (Some(r), Some(0)) | (Some(0), Some(r)) if r != 0 => Some(r),
        _ => None,
    };
    let target = it.target().map(|l| label_at[l.0 as usize]);
    let equal_edge = match cond {
        Cond::Eq => target,
        Cond::Ne => Some(i + 1),
        _ => None,
    };
    succ.into_iter()
        .map(|s| {
            let mut st = out.clone();
            if let (Some(r), Some(e)) = (tested, equal_edge) {
                // Only when the two edges differ (a branch to the next item tells nothing).
                if s == e && target != Some(i + 1) {
                    if let Some((set, k)) = out.x[r].low {
                        for q in 0..32 {
                            if set >> q & 1 != 0 {
                                st.x[q].tz = st.x[q].tz.max(k);
                            }
                        }
                        // Stack words holding the same value (a spilled copy).
                        for &(off, regs) in &out.copies {
                            if regs & set != 0 {
                                if let Some(v) = st.slots.get_mut(&off) {
                                    v.tz = v.tz.max(k);
                                }
                            }
                        }
                    }
                }
            }
            (s, st)
        })
        .collect()
}

/// Passes over the function before the dataflow is declared not to converge (the lattice
/// is finite and every join is monotone, so this is never reached by correct code).
const MAX_PASSES: usize = 1000;

/// Runs every check on a function with physical registers.
pub fn check_func(f: &Func, abi: Abi) -> Vec<Finding> {
    check_func_with(f, abi, &HashMap::new())
}

/// [`check_func`], knowing the alignment of the data objects the function addresses.
pub fn check_func_with(f: &Func, abi: Abi, data_align: &HashMap<String, u32>) -> Vec<Finding> {
    run(f, abi, data_align, MAX_PASSES)
}

/// [`check_func`] with at most `passes` passes of the dataflow (a test of the
/// non-convergence error).
pub fn check_func_limited(f: &Func, abi: Abi, passes: usize) -> Vec<Finding> {
    run(f, abi, &HashMap::new(), passes)
}

fn run(f: &Func, abi: Abi, data_align: &HashMap<String, u32>, max_passes: usize) -> Vec<Finding> {
    let mut inum = Vec::with_capacity(f.items.len());
    let mut k = 0;
    for it in &f.items {
        inum.push(k);
        if matches!(it, Item::Inst(_)) {
            k += 1;
        }
    }
    let mut cx = Ctx {
        f,
        abi,
        mul_timing: f.target.multiplier == Multiplier::C906,
        slow_misaligned: f.target.misaligned == Misaligned::Slow,
        vlen: f.target.vlen_max.max(128),
        data_align: data_align.clone(),
        findings: Vec::new(),
        inum,
        leak_used: vec![false; f.leaks.len()],
    };
    let label_at = label_positions(f);
    let m = f.items.len();
    if m == 0 {
        return Vec::new();
    }
    // Basic blocks: a block starts at item 0, at a label and after control flow; states
    // are kept at block starts only, and a block's items are stepped in turn.
    let mut starts_block = vec![false; m];
    starts_block[0] = true;
    for (i, it) in f.items.iter().enumerate() {
        let ends = match it {
            Item::Inst(x) => x.control() != Control::Next,
            Item::Exit => true,
            _ => false,
        };
        if matches!(it, Item::Label(_)) {
            starts_block[i] = true;
        }
        if ends && i + 1 < m {
            starts_block[i + 1] = true;
        }
    }
    let block_end = |s: usize| -> usize {
        let mut e = s;
        while e + 1 < m && !starts_block[e + 1] {
            e += 1;
        }
        e
    };
    let mut inn: Vec<Option<State>> = vec![None; m];
    inn[0] = Some(entry_state(f, abi));
    // Fixpoint without reporting (sweeps in code order over the blocks whose in-state
    // changed), then one reporting pass.
    let mut dirty = vec![false; m];
    dirty[0] = true;
    let mut passes = 0;
    while dirty.iter().any(|&d| d) {
        if passes == max_passes {
            cx.report(0, Check::Dataflow, format!("the dataflow did not reach a fixpoint in {max_passes} passes: nothing is proven"));
            return cx.findings;
        }
        passes += 1;
        let mut b = 0;
        while b < m {
            let e = block_end(b);
            if !std::mem::take(&mut dirty[b]) {
                b = e + 1;
                continue;
            }
            let Some(mut s) = inn[b].clone() else {
                b = e + 1;
                continue;
            };
            for i in b..=e {
                if let Item::Inst(it) = &f.items[i] {
                    s = step(&mut cx, i, it, &s, false);
                }
            }
            for (sidx, st) in edges(f, &label_at, e, &s) {
                let new = match &inn[sidx] {
                    None => st,
                    Some(old) => old.join(&st),
                };
                if inn[sidx].as_ref() != Some(&new) {
                    inn[sidx] = Some(new);
                    dirty[sidx] = true;
                }
            }
            b = e + 1;
        }
    }
    // The reporting pass: each reached block once, from its fixpoint state.
    let mut reached = vec![false; m];
    let mut b = 0;
    while b < m {
        let e = block_end(b);
        let Some(mut s) = inn[b].clone() else {
            b = e + 1;
            continue;
        };
        for i in b..=e {
            reached[i] = true;
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
            s = step(&mut cx, i, it, &s, true);
            match it.control() {
                Control::Return => exit_checks(&mut cx, i, &s),
                // `tail sym` (auipc + jalr zero with %pcrel_lo): leaves the function.
                Control::IndirectJump if matches!(it.ops.get(it.row().ops.iter().position(|o| matches!(o.kind, Kind::MemOff(_))).unwrap_or(1)), Some(Opnd::PcrelLo { .. })) => {
                    exit_checks(&mut cx, i, &s)
                }
                Control::IndirectJump => cx.report(i, Check::ControlFlow, "indirect jump to a computed address: the checks cannot follow it".into()),
                _ => {}
            }
        }
        b = e + 1;
    }
    // A path that runs off the end of the code.
    let falls_off = match &f.items[m - 1] {
        Item::Exit => false,
        Item::Inst(it) => matches!(it.control(), Control::Next | Control::Branch | Control::Call),
        _ => true,
    };
    if reached[m - 1] && falls_off {
        cx.report(m - 1, Check::ControlFlow, "a path runs past the end of the code without a return".into());
    }
    // Code no path reaches (after a return or an unconditional jump, with no label a
    // branch targets): a mistake in the kernel, never what it meant.
    if let Some(i) = (0..m).find(|&i| !reached[i] && matches!(f.items[i], Item::Inst(_))) {
        cx.report(i, Check::ControlFlow, "no path reaches this instruction (code after a return or a jump, with no branch to it)".into());
    }
    for (k, used) in cx.leak_used.clone().into_iter().enumerate() {
        if !used {
            let d = &f.leaks[k];
            let first = f.items.iter().position(|it| matches!(it, Item::Inst(x) if x.leak == Some(k as u16))).unwrap_or(0);
            cx.report(first, Check::UnusedLeak, format!("declared leak {:?} (\"{}\") covers no instruction that needs it", d.kind, d.reason));
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
    let ret_value = cx.f.result.is_value();
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
    for &(lo, hi) in &s.secret.0 {
        cx.report(i, Check::SecretLeft, format!("the stack at entry sp{lo:+}..sp{hi:+} holds secret data at return"));
    }
}

/// Only the findings that are errors (not declared leaks).
pub fn errors(f: &[Finding]) -> Vec<&Finding> {
    f.iter().filter(|x| !x.declared).collect()
}
