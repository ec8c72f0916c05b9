//! Go output: an ABI0 assembly file (`.s`) and the matching declarations (`.go`) for a
//! module built with [`Abi::Go`].
//!
//! # The assembly
//! Every instruction Go 1.23's assembler knows is written with its Go mnemonic, as the ISA
//! table's row says ([`kgen_dsl::isa::go`]): `ADD $16, X6`, `MOVWU 4(X10), X5`, `BLTU X5,
//! X6, loop`, branches and jumps to labels that Go resolves. Each such line assembles to
//! exactly the instruction kgen encoded (`tests/go_asm.rs` assembles every Go output with
//! `go tool asm` and compares the machine code with [`abi0_object`], instruction for
//! instruction). The rest (the T-Head extensions, vector instructions, rotates, which Go
//! expands to several instructions unless GORISCV64=rva22u64) is written as `WORD $0x........
//! // text`, the word kgen encoded with its GNU text. Three more things are written in Go
//! syntax:
//! - an address materialisation `auipc rd, %pcrel_hi(sym+a); addi rd, rd, %pcrel_lo(..)`
//!   becomes `MOV $·sym+a(SB), Xrd`, which the Go assembler expands to the same
//!   `auipc`+`addi` pair with a PC-relative relocation (the pair must be adjacent and the
//!   `addi` must add to the `auipc`'s register; anything else is refused);
//! - a return (`jalr zero, 0(ra)`) in a frameless function without a result becomes `RET`,
//!   which Go assembles to the same instruction for a frameless leaf function;
//! - any other return becomes `JMP kgen_ret`, a jump to one epilogue after the body that
//!   stores `a0` in the result slot (`MOV X10, ret+N(FP)`) if there is a result, then
//!   `RET`: in a function with a frame Go expands each `RET` to three instructions, and one
//!   epilogue keeps the body the same instructions as kgen's.
//!
//! Before the body, each argument is loaded from the caller's frame into a0, a1, ... (ABI0
//! passes arguments on the stack): `MOV name+off(FP), X10`. Offsets follow Go's layout:
//! each argument aligned to its size, the result at the next 8-byte boundary; the `TEXT`
//! line declares `$N-<args+result size>`.
//!
//! # Frames
//! A function that needs stack (spill slots, stack buffers) gets a Go frame: `TEXT $N`
//! with N the bytes of its slots. Go's assembler then allocates N+8 bytes, saves `ra` at
//! 0(sp) and restores it in `RET`; the lowering ([`kgen_dsl::lower::frame`]) puts the slots
//! at 8(sp).. and emits no sp adjustment or register saves of its own, and the checks allow
//! exactly those bytes ([`kgen_dsl::Func::host_frame`]). A function with at most
//! [`kgen_dsl::lower::GO_NOSPLIT_LOCALS`] bytes of locals (the linker's nosplit limit) is
//! `NOSPLIT`; a larger one is not, so Go's stack check runs first. That check is before the
//! argument loads and the body and may only call `runtime.morestack` (which grows the stack
//! and restarts the function from the top); no value of the body is live yet, and the frame
//! holds no Go pointers (the function is a leaf that never reaches a GC safe point).
//!
//! Functions call nothing and write none of sp, gp, tp, X26 (closure context), X27 (g) and
//! X31 (the assembler's temporary). [`Abi::Go`] makes kgen's allocator avoid these; modules
//! built for another ABI are refused. Functions must be shorter than 1 MiB (so Go keeps
//! every `JMP` a single `jal`; conditional branches are within reach because the lowering
//! relaxed them for the same layout). Only global functions are written (local ones could
//! not be called from Go); module aliases are not (Go has no symbol aliases).
//!
//! # Vector state
//! Vector code is safe in a Go assembly function. Go never preempts a goroutine
//! asynchronously inside assembly: `isAsyncSafePoint` in `runtime/preempt.go` (Go 1.23,
//! lines 407-416) returns false for any function with `FuncFlagAsm`, which the assembler
//! sets on everything it builds (`cmd/internal/obj/plist.go`), so the runtime's
//! `asyncPreempt` (which saves only integer and float registers) never runs in the middle
//! of a vector loop. Signals still arrive, and the handler returns without touching vector
//! registers. Across context switches and signal delivery the kernel saves the vector
//! state: Linux does so for RVV 1.0 (`arch/riscv/kernel/vector.c`,
//! `arch/riscv/include/asm/vector.h`: `__switch_to_vector`, and the signal frame's vector
//! context), and for XTheadVector where the kernel supports it: upstream through the same
//! code (`has_xtheadvector()` and `SR_VS_THEAD` in `asm/vector.h`), or the vendor kernels of
//! the SG2002/D1 boards. A kernel without that support does not expose the vector unit to
//! user space at all (the first vector instruction traps), so the choice is made at run time
//! by the caller's feature detection, never by a silent loss of state. The Go build tests run the
//! vector variants under T-Head's QEMU (`-cpu c906fdv`) and `-cpu rv64,v=true`.
//!
//! Data objects become `DATA`/`GLOBL ·name(SB), RODATA|NOPTR, $size`. Go's assembler has
//! no alignment directive: the linker aligns a symbol to the largest power of two not above
//! its size, at most 32 bytes on riscv64, which covers the element alignment loads need. A
//! larger requested alignment (the AES tables ask for 64 bytes, for cache-line placement;
//! their code indexes them with `add`, so it does not depend on it) is not honoured, and a
//! `Note:` line in the `.s` header says so.
//!
//! # Names
//! [`go_name`]: the C name split at `_`; the first part lowercased if it is all capitals
//! (an acronym) or with its first letter lowercased otherwise, later parts with their first
//! letter uppercased: `AES_encrypt_c906` → `aesEncryptC906`, `chacha20_blocks` →
//! `chacha20Blocks`. Argument names are kept (a Go keyword gets a `_` appended). Labels keep
//! the kernel's names (`loop`, `tail`; numbered where a name recurs, `L7` for an unnamed
//! one).
//!
//! # Types
//! [`go_type`] maps the entry point's parameter types ([`kgen_dsl::entry::Ty`]): pointers
//! to `u32` elements → `*uint32`, to `u64` → `*uint64`, to a Go type of the caller's
//! package ([`kgen_dsl::entry::Elem::Go`], x/crypto's `macState`) → a pointer to it, any
//! other → `*byte`; `size_t` → `uint64`; `unsigned int`/`u32` → `uint32`; `int` → `int32`. A
//! table of function pointers has no Go type (such an entry point has no Go form). 32-bit
//! arguments are loaded with `MOVW` (sign-extending), as the RISC-V psABI keeps 32-bit
//! values in registers.
//!
//! # The machine code Go makes of it
//! [`abi0_object`] builds, from the module, the code Go's assembler produces for each
//! function: its prologue (for a frame: `sd ra` below sp, `addi sp`, `sd ra, 0(sp)`), the
//! argument loads, the body with returns as above, and the epilogue. The benchmarks run it
//! in kgen-sim with the arguments in the caller's frame as ABI0 passes them; the tests check
//! it against `go tool asm`. Go's stack-check prologue of a function over the nosplit limit
//! is not part of it (it reads `g` and may call the runtime).

use crate::{header_lines, EmitError, EmitOptions, GENERATOR};
use askama::Template;
use kgen_dsl::entry::{Elem, Ret, Ty};
use kgen_dsl::func::{InstItem, Item};
use kgen_dsl::isa::{table, Arith, Control, Inst, Kind, Role};
use kgen_dsl::module::{Lowered, Module};
use kgen_dsl::object::{Code, DataObj, Object, Reloc, RelocKind};
use kgen_dsl::text::XNAMES;
use kgen_dsl::{Abi, Label, Opnd, Reg};
use std::collections::{HashMap, HashSet};

/// Registers a Go assembly function must not write: sp, gp, tp, X26 (closure context),
/// X27 (g), X31 (assembler temporary).
pub const GO_RESERVED: [u8; 6] = [2, 3, 4, 26, 27, 31];

/// Go assembles `JMP label` as one `jal` only within this many bytes (±1 MiB); functions
/// must be shorter.
pub const MAX_FUNC_BYTES: usize = 1 << 20;

/// Go's riscv64 `FixedFrameSize`: the saved-`ra` slot at 0(sp) of a frame, and the
/// caller's at 0(sp) on entry (arguments start at 8(sp)).
pub const FIXED_FRAME: u32 = 8;

/// Label of the epilogue of a function with a result or a frame.
const RET_LABEL: &str = "kgen_ret";

const GO_KEYWORDS: [&str; 25] = [
    "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go", "goto", "if", "import",
    "interface", "map", "package", "range", "return", "select", "struct", "switch", "type", "var",
];

/// A Go type for a C argument or result, with how ABI0 assembly moves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoType {
    /// The Go spelling (`*byte`, `uint32`).
    pub name: String,
    /// Size in the argument frame (bytes; also its alignment).
    pub size: u32,
    /// Instruction that loads it from the frame into a register.
    pub load: &'static str,
    /// Instruction that stores it from a register into the frame.
    pub store: &'static str,
}

fn ty(name: &str, size: u32, load: &'static str, store: &'static str) -> GoType {
    GoType { name: name.to_string(), size, load, store }
}

fn unsupported(s: String) -> EmitError {
    EmitError::Unsupported(format!("Go output: {s}"))
}

/// The Go type of a parameter type (see the module documentation for the rules).
pub fn go_type(t: Ty) -> Result<GoType, EmitError> {
    Ok(match t {
        Ty::Ptr { elem: Elem::U32, .. } => ty("*uint32", 8, "MOV", "MOV"),
        Ty::Ptr { elem: Elem::U64, .. } => ty("*uint64", 8, "MOV", "MOV"),
        Ty::Ptr { elem: Elem::Go { name, .. }, .. } if is_go_ident(name) => ty(&format!("*{name}"), 8, "MOV", "MOV"),
        Ty::Ptr { elem: Elem::Go { name, .. }, .. } => return Err(unsupported(format!("`{name}` is not a Go type name"))),
        Ty::Ptr { .. } => ty("*byte", 8, "MOV", "MOV"),
        Ty::Size | Ty::U64 => ty("uint64", 8, "MOV", "MOV"),
        Ty::U32 => ty("uint32", 4, "MOVW", "MOVW"),
        Ty::I32 => ty("int32", 4, "MOVW", "MOVW"),
        Ty::FuncTable => return Err(unsupported("a table of function pointers has no Go type".into())),
    })
}

/// The Go type of a result.
fn go_result(r: Ret) -> Option<GoType> {
    match r {
        Ret::Void => None,
        Ret::Int => Some(ty("int32", 4, "MOVW", "MOVW")),
        Ret::Size | Ret::U64 => Some(ty("uint64", 8, "MOV", "MOV")),
    }
}

fn is_go_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && cs.all(|c| c.is_ascii_alphanumeric() || c == '_') && !GO_KEYWORDS.contains(&s)
}

/// The Go name of C function `c` (camelCase, unexported; see [`kgen_dsl::entry::go_name`]).
pub fn go_name(c: &str) -> Result<String, EmitError> {
    match kgen_dsl::entry::go_name(c).filter(|n| is_go_ident(n)) {
        Some(n) => Ok(n),
        None => Err(unsupported(format!("function `{c}` has no Go identifier"))),
    }
}

/// An argument name usable in Go (keywords get a `_` appended).
fn go_param(name: &str) -> Result<String, EmitError> {
    let n = if GO_KEYWORDS.contains(&name) { format!("{name}_") } else { name.to_string() };
    if !is_go_ident(&n) || n == "ret" {
        return Err(unsupported(format!("argument name `{name}` is not usable in Go")));
    }
    Ok(n)
}

/// The ABI0 argument frame of a function: each argument's name, Go type and offset from
/// the frame's start (`name+off(FP)`), the result's type and offset, and the frame's size.
#[derive(Clone, Debug)]
pub struct ArgFrame {
    pub args: Vec<(String, GoType, u32)>,
    pub result: Option<(GoType, u32)>,
    pub size: u32,
}

/// The ABI0 argument frame of a lowered function (see the module documentation).
pub fn arg_frame(l: &Lowered) -> Result<ArgFrame, EmitError> {
    let f = &l.func;
    let mut off = 0u32;
    let mut args = Vec::new();
    for a in &f.args {
        let t = go_type(a.ty).map_err(|e| unsupported(format!("{}: argument `{}`: {e}", f.name, a.name)))?;
        let p = go_param(&a.name).map_err(|e| unsupported(format!("{}: {e}", f.name)))?;
        off = off.next_multiple_of(t.size);
        let size = t.size;
        args.push((p, t, off));
        off += size;
    }
    let (result, size) = match go_result(f.result) {
        Some(t) => {
            let o = off.next_multiple_of(8);
            let s = o + t.size;
            (Some((t, o)), s)
        }
        None => (None, off),
    };
    Ok(ArgFrame { args, result, size })
}

/// One function as the templates print it.
#[derive(Clone, Debug)]
pub struct GoFunc {
    pub c_name: String,
    pub go_name: String,
    pub prototype: String,
    pub summary: String,
    /// `name type, name type`
    pub params: String,
    /// ` int32` or empty.
    pub result: String,
    pub argsize: u32,
    /// Bytes of locals (`TEXT $frame-argsize`).
    pub frame: u32,
    /// `NOSPLIT`, or `0` for a frame over the nosplit limit.
    pub flags: &'static str,
    pub body: Vec<String>,
}

struct GoData {
    name: String,
    comment: String,
    lines: Vec<String>,
    size: usize,
}

#[derive(Template)]
#[template(path = "go.s.txt", escape = "none")]
struct GoAsmFile<'a> {
    preamble: &'a [String],
    build: &'a str,
    generator: &'a str,
    header: &'a [String],
    notes: Vec<String>,
    funcs: &'a [GoFunc],
    data: &'a [GoData],
}

#[derive(Template)]
#[template(path = "go.go.txt", escape = "none")]
struct GoDeclFile<'a> {
    generator: &'a str,
    header: Vec<String>,
    pkg: &'a str,
    decls: &'a str,
}

#[derive(Template)]
#[template(path = "go.decls.txt", escape = "none")]
struct GoDecls<'a> {
    funcs: &'a [GoFunc],
}

/// `DATA` lines for a data object: 8-byte rows, then a 4/2/1-byte tail.
fn data_lines(d: &DataObj) -> Vec<String> {
    let mut out = Vec::new();
    let mut off = 0usize;
    let b = &d.bytes;
    for width in [8usize, 4, 2, 1] {
        while b.len() - off >= width {
            let mut v = 0u64;
            for k in 0..width {
                v |= (b[off + k] as u64) << (8 * k);
            }
            out.push(format!("DATA ·{}+{off}(SB)/{width}, ${v:#0w$x}", d.name, w = 2 + 2 * width));
            off += width;
        }
    }
    out
}

/// Integer registers an instruction writes.
fn written_x(i: &Inst) -> impl Iterator<Item = u8> + '_ {
    let row = i.row();
    row.ops.iter().zip(i.args()).filter(|(s, _)| matches!(s.role, Role::Def | Role::UseDef) && matches!(s.kind, Kind::X | Kind::XMem)).map(|(_, v)| *v as u8)
}

/// The value of the first operand of `kind` with `role`.
fn operand(i: &Inst, pick: impl Fn(Role, Kind) -> bool) -> Option<i64> {
    i.row().ops.iter().zip(i.args()).find(|(s, _)| pick(s.role, s.kind)).map(|(_, v)| *v)
}

fn word_at(code: &Code, off: u32) -> Result<u32, EmitError> {
    code.bytes
        .get(off as usize..off as usize + 4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .ok_or_else(|| unsupported(format!("{}: no instruction word at {off:#x}", code.name)))
}

fn sym_ref(sym: &str, addend: i64) -> String {
    match addend {
        0 => format!("·{sym}(SB)"),
        a if a > 0 => format!("·{sym}+{a}(SB)"),
        a => format!("·{sym}{a}(SB)"),
    }
}

/// Go names of the labels instructions refer to: the kernel's names where they are Go
/// identifiers (they are unique in the function), `L<n>` otherwise.
fn go_labels(l: &Lowered) -> HashMap<Label, String> {
    let f = &l.func;
    let used = kgen_dsl::analysis::referenced_labels(f);
    let mut names = HashMap::new();
    let mut taken: HashSet<String> = HashSet::from([RET_LABEL.to_string()]);
    for (k, info) in f.labels.iter().enumerate() {
        if !used[k] {
            continue;
        }
        let mut n = match &info.name {
            Some(n) if is_go_ident(n) => n.clone(),
            _ => format!("L{k}"),
        };
        if taken.contains(&n) {
            n = format!("{n}_{k}");
        }
        taken.insert(n.clone());
        names.insert(Label(k as u32), n);
    }
    names
}

/// The Go text of an instruction the ISA table gives a Go spelling, labels by name.
fn go_text(ii: &InstItem, inst: &Inst, labels: &HashMap<Label, String>) -> Option<Result<String, String>> {
    let g = inst.row().go?;
    // Go resolves targets by label: a PC-relative operand written as a number is refused.
    for (k, o) in inst.row().ops.iter().enumerate() {
        if matches!(o.kind, Kind::Rel(_)) && !matches!(ii.ops.get(k), Some(Opnd::Label(_))) {
            return Some(Err(format!("operand `{}` is an offset, not a label: Go's output needs a label", o.name)));
        }
    }
    let label = |k: usize| match ii.ops.get(k) {
        Some(Opnd::Label(l)) => labels.get(l).cloned().unwrap_or_else(|| format!("L{}", l.0)),
        // Not reached: every target operand was checked to be a label above.
        _ => String::new(),
    };
    Some(g.text(inst.args(), &label))
}

/// Builds the Go view of one function: signature, argument loads, body, epilogue.
fn go_func(l: &Lowered, code: &Code, data_names: &HashSet<&str>) -> Result<GoFunc, EmitError> {
    let f = &l.func;
    let name = &f.name;
    let fail = |s: String| unsupported(format!("{name}: {s}"));
    if l.frame.size != 0 || !l.frame.saved.is_empty() {
        return Err(fail(format!("adjusts sp itself ({} bytes) or saves registers; under Go the assembler builds the frame (build the module for Abi::Go)", l.frame.size)));
    }
    if f.host_frame != l.frame.host {
        return Err(fail(format!("its code uses a {}-byte Go frame but the lowering allocated {}", f.host_frame, l.frame.host)));
    }
    let framed = l.frame.host > 0;
    // The argument loads and the epilogue add at most 11 instructions.
    if code.bytes.len() + 64 > MAX_FUNC_BYTES {
        return Err(fail(format!("is {} bytes long; Go output supports functions under {MAX_FUNC_BYTES} bytes", code.bytes.len())));
    }
    if f.args.len() > 8 {
        return Err(fail(format!("has {} arguments; at most 8 fit in a0..a7", f.args.len())));
    }

    // Signature and frame layout.
    let af = arg_frame(l)?;
    let mut params = Vec::new();
    let mut body = Vec::new();
    for (n, (p, t, off)) in af.args.iter().enumerate() {
        body.push(format!("\t{}\t{p}+{off}(FP), X{}", t.load, 10 + n));
        params.push(format!("{p} {}", t.name));
    }
    let ret = af.result.clone();

    // The body.
    let at: HashMap<usize, (u32, Inst)> = code.insts.iter().map(|(o, i, idx)| (*idx, (*o, *i))).collect();
    let relocs: HashMap<u32, &Reloc> = code.relocs.iter().map(|r| (r.offset, r)).collect();
    let labels = go_labels(l);
    let mut consumed_lo: HashSet<u32> = HashSet::new();
    let mut skip_next: Option<u32> = None;
    for (idx, it) in f.items.iter().enumerate() {
        match it {
            Item::Label(lb) => {
                if let Some(n) = labels.get(lb) {
                    body.push(format!("{n}:"));
                }
            }
            Item::Comment(c) => body.push(format!("\t// {c}")),
            Item::Exit | Item::Region(_) => return Err(fail("function was not lowered".into())),
            Item::Data(d) => {
                if d.len() % 4 != 0 {
                    return Err(fail(format!("{} bytes of data in the code; Go output needs whole 32-bit words", d.len())));
                }
                for w in d.chunks(4) {
                    body.push(format!("\tWORD\t${:#010x}\t// data", u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
                }
            }
            Item::Inst(ii) => {
                let (pc, inst) = *at.get(&idx).ok_or_else(|| fail(format!("instruction {idx} was not encoded")))?;
                if skip_next == Some(pc) {
                    // The addi of a pair already written as MOV (same rd, checked there).
                    skip_next = None;
                    continue;
                }
                let text = f.inst_text(ii);
                if let Some(r) = written_x(&inst).find(|r| GO_RESERVED.contains(r)) {
                    return Err(fail(format!("`{text}` writes {}, which Go reserves", XNAMES[r as usize])));
                }
                if inst.control() == Control::Call {
                    return Err(fail(format!("`{text}` is a call; Go assembly output supports leaf functions only")));
                }
                let trailing = ii.comment.as_ref().map(|c| format!("\t// {c}")).unwrap_or_default();
                match relocs.get(&pc) {
                    Some(r) if r.kind == RelocKind::PcrelHi20 => {
                        let rd = operand(&inst, |ro, k| ro == Role::Def && k == Kind::X);
                        let lo = relocs.get(&(pc + 4)).filter(|lo| lo.kind == RelocKind::PcrelLo12I { hi: pc });
                        let next = code.insts.iter().find(|(o, _, _)| *o == pc + 4).map(|(_, i, _)| *i);
                        let pair_ok = match (lo, next) {
                            (Some(_), Some(n)) => {
                                matches!(n.row().arith, Some(Arith::AddImm { .. }))
                                    && operand(&n, |ro, k| ro == Role::Def && k == Kind::X) == rd
                                    && operand(&n, |ro, k| ro == Role::Use && k == Kind::X) == rd
                            }
                            _ => false,
                        };
                        if !pair_ok {
                            return Err(fail(format!(
                                "`{text}` at {pc:#x} is not directly followed by `addi` of its %pcrel_lo into the same register; Go can only express that pair (MOV $sym(SB), reg)"
                            )));
                        }
                        if !data_names.contains(r.sym.as_str()) {
                            return Err(fail(format!("`{text}` refers to `{}`, which is not a data object of the module", r.sym)));
                        }
                        let rd = rd.unwrap_or(0) as usize;
                        body.push(format!("\tMOV\t${}, X{rd}{trailing}", sym_ref(&r.sym, r.addend)));
                        consumed_lo.insert(pc + 4);
                        skip_next = Some(pc + 4);
                    }
                    Some(r) => {
                        return Err(fail(format!("`{text}` at {pc:#x} carries a {:?} relocation without its %pcrel_hi right before it", r.kind)));
                    }
                    // In a framed function RET is three instructions (restore ra, free
                    // the frame, return): one epilogue after the body keeps the body's
                    // instructions kgen's.
                    None if inst.control() == Control::Return => match (&ret, framed) {
                        (None, false) => body.push(format!("\tRET{trailing}")),
                        _ => body.push(format!("\tJMP\t{RET_LABEL}{trailing}")),
                    },
                    None => {
                        if inst.control() == Control::IndirectJump {
                            return Err(fail(format!("`{text}` is an indirect jump; Go assembly output supports `ret` only")));
                        }
                        match go_text(ii, &inst, &labels) {
                            Some(Ok(t)) => body.push(format!("\t{t}{trailing}")),
                            Some(Err(e)) => return Err(fail(format!("`{text}`: {e}"))),
                            None => body.push(format!("\tWORD\t${:#010x}\t// {text}{}", word_at(code, pc)?, ii.comment.as_ref().map(|c| format!("; {c}")).unwrap_or_default())),
                        }
                    }
                }
            }
        }
    }
    if let Some(r) = code.relocs.iter().find(|r| r.kind != RelocKind::PcrelHi20 && !consumed_lo.contains(&r.offset)) {
        return Err(fail(format!("relocation {:?} at {:#x} is not part of an auipc+addi pair", r.kind, r.offset)));
    }
    if ret.is_some() || framed {
        body.push(format!("{RET_LABEL}:"));
        if let Some((t, o)) = &ret {
            body.push(format!("\t{}\tX10, ret+{o}(FP)", t.store));
        }
        body.push("\tRET".into());
    }
    Ok(GoFunc {
        c_name: name.clone(),
        go_name: go_name(name)?,
        prototype: l.c_prototype(),
        summary: f.summary.clone(),
        params: params.join(", "),
        result: ret.map(|(t, _)| format!(" {}", t.name)).unwrap_or_default(),
        argsize: af.size,
        frame: l.frame.host,
        flags: if l.frame.host <= kgen_dsl::lower::GO_NOSPLIT_LOCALS { "NOSPLIT" } else { "0" },
        body,
    })
}

/// The functions and data of the modules as Go prints them: of each module its global
/// functions (or only those named in its list), in module order, and its data.
fn collect(parts: &[(&Module, Option<&[String]>)]) -> Result<(Vec<GoFunc>, Vec<GoData>, Vec<String>), EmitError> {
    let mut funcs = Vec::new();
    let mut names: HashMap<String, String> = HashMap::new();
    let mut notes = Vec::new();
    let mut data = Vec::new();
    let mut data_seen: HashSet<String> = HashSet::new();
    for (m, only) in parts {
        if m.abi != Abi::Go {
            return Err(unsupported(format!("the module is built for the {} ABI; Go output needs one built for the go ABI (no callee-saved registers, X26/X27/X31 untouched)", m.abi)));
        }
        if let Some(want) = only {
            for w in want.iter() {
                if !m.funcs.iter().any(|l| l.global && &l.func.name == w) {
                    return Err(unsupported(format!("{} {} has no global function `{w}`", m.kernel, m.variant)));
                }
            }
        }
        let codes = m.codes()?;
        let data_names: HashSet<&str> = m.data.iter().map(|d| d.name.as_str()).collect();
        let mut used_data: HashSet<String> = HashSet::new();
        for (l, c) in m.funcs.iter().zip(&codes) {
            if !l.global || only.is_some_and(|w| !w.contains(&l.func.name)) {
                continue;
            }
            let g = go_func(l, c, &data_names)?;
            if let Some(prev) = names.insert(g.go_name.clone(), g.c_name.clone()) {
                return Err(unsupported(format!("`{prev}` and `{}` both become `{}` in Go", g.c_name, g.go_name)));
            }
            used_data.extend(c.relocs.iter().map(|r| r.sym.clone()));
            funcs.push(g);
        }
        for d in &m.data {
            // With a selection, only the data its functions refer to.
            if only.is_some() && !used_data.contains(&d.name) {
                continue;
            }
            if !is_go_ident(&d.name) {
                return Err(unsupported(format!("data object `{}` is not a Go identifier", d.name)));
            }
            if !data_seen.insert(d.name.clone()) {
                return Err(unsupported(format!("data object `{}` is defined by two modules", d.name)));
            }
            if d.bytes.is_empty() {
                return Err(unsupported(format!("data object `{}` is empty", d.name)));
            }
            if d.align > 32 {
                notes.push(format!("{} asks for {}-byte alignment; Go's linker aligns it to 32 bytes.", d.name, d.align));
            }
            data.push(GoData { name: d.name.clone(), comment: d.comment.clone(), lines: data_lines(d), size: d.bytes.len() });
        }
    }
    if funcs.is_empty() {
        return Err(unsupported("the module has no global function".into()));
    }
    if let Some(d) = data.iter().find(|d| names.contains_key(&d.name)) {
        return Err(unsupported(format!("data object `{}` has the Go name of a function", d.name)));
    }
    Ok((funcs, data, notes))
}

fn newline(mut t: String) -> String {
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// The Go assembly (`.s`) and declarations (`.go`) for package `pkg`. The module must be
/// built for [`Abi::Go`]; see the module documentation for what is supported.
pub fn go_files(m: &Module, o: &EmitOptions, pkg: &str) -> Result<(String, String), EmitError> {
    if m.abi != Abi::Go {
        return Err(unsupported(format!("the module is built for the {} ABI; Go output needs one built for the go ABI (no callee-saved registers, X26/X27/X31 untouched)", m.abi)));
    }
    if !is_go_ident(pkg) {
        return Err(unsupported(format!("`{pkg}` is not a Go package name")));
    }
    let (funcs, data, notes) = collect(&[(m, None)])?;
    // The first header line ("Generated by ...; do not edit. Regenerate with:") becomes Go's
    // standard "Code generated ... DO NOT EDIT." line in the templates.
    let header: Vec<String> = std::iter::once("Regenerate with:".to_string()).chain(header_lines(m, o, "Go (ABI0)").into_iter().skip(1)).collect();
    let s = GoAsmFile { preamble: &[], build: "riscv64 && !purego", generator: GENERATOR, header: &header, notes, funcs: &funcs, data: &data }
        .render()
        .map_err(|e| EmitError::Template(e.to_string()))?;
    let decls = go_decls_of(&funcs)?;
    let g = GoDeclFile { generator: GENERATOR, header, pkg, decls: &decls }.render().map_err(|e| EmitError::Template(e.to_string()))?;
    Ok((spdx_line(newline(s)), spdx_line(newline(g))))
}

/// A Go file with its licence line first ([`crate::spdx`]).
fn spdx_line(s: String) -> String {
    format!("// SPDX-License-Identifier: {}\n{s}", crate::spdx(kgen_dsl::Abi::Go))
}

fn go_decls_of(funcs: &[GoFunc]) -> Result<String, EmitError> {
    GoDecls { funcs }.render().map_err(|e| EmitError::Template(e.to_string()))
}

/// A Go assembly file made of several modules' functions (a package's `*_riscv64.s`).
pub struct GoAsmSpec<'a> {
    /// Each module with the symbols of the functions to take from it.
    pub parts: Vec<(&'a Module, Vec<String>)>,
    /// Comment lines before the build constraint (a copyright notice).
    pub preamble: Vec<String>,
    /// The build constraint (`gc && !purego`).
    pub build: String,
    /// Comment lines after the `Code generated` line (the regenerating command).
    pub header: Vec<String>,
}

/// A package's Go assembly and the declarations of its functions.
pub struct GoAsmOut {
    pub s: String,
    /// `//go:noescape` declarations, one block per function, for the package's `.go` file.
    pub decls: String,
    pub funcs: Vec<GoFunc>,
}

/// The `.s` file of `spec` and the declarations its functions need.
pub fn go_asm(spec: &GoAsmSpec) -> Result<GoAsmOut, EmitError> {
    let parts: Vec<(&Module, Option<&[String]>)> = spec.parts.iter().map(|(m, w)| (*m, Some(w.as_slice()))).collect();
    let (funcs, data, notes) = collect(&parts)?;
    let s = GoAsmFile { preamble: &spec.preamble, build: &spec.build, generator: GENERATOR, header: &spec.header, notes, funcs: &funcs, data: &data }
        .render()
        .map_err(|e| EmitError::Template(e.to_string()))?;
    let decls = go_decls_of(&funcs)?;
    Ok(GoAsmOut { s: spdx_line(newline(s)), decls, funcs })
}

// ---- the machine code Go's assembler makes of the output ------------------------------

fn inst(mn: &str, ops: Vec<Opnd>) -> Item {
    Item::Inst(InstItem::new(table().form(mn), ops, true))
}

fn x(n: u8) -> Opnd {
    Opnd::Reg(Reg::X(n))
}

/// The function as Go's assembler builds it from [`go_files`]' text, as a lowered function
/// (physical registers, labels): prologue, argument loads, body, epilogue. `None` for a
/// function with Go's stack check (a frame over the nosplit limit), which is not modeled.
pub fn abi0_func(l: &Lowered) -> Result<Option<kgen_dsl::Func>, EmitError> {
    if l.frame.host > kgen_dsl::lower::GO_NOSPLIT_LOCALS {
        return Ok(None);
    }
    let mut f = l.func.clone();
    let af = arg_frame(l)?;
    let framed = l.frame.host > 0;
    // Bytes Go's prologue moves sp by, and so what 0(FP) is from the new sp.
    let frame = if framed { l.frame.host + FIXED_FRAME } else { 0 };
    let fp = (frame + FIXED_FRAME) as i64;
    let mut items = Vec::new();
    if framed {
        let fr = frame as i64;
        items.push(inst("sd", vec![x(1), Opnd::Imm(-fr), x(2)]));
        items.push(inst("addi", vec![x(2), x(2), Opnd::Imm(-fr)]));
        items.push(inst("sd", vec![x(1), Opnd::Imm(0), x(2)]));
    }
    for (n, (_, t, off)) in af.args.iter().enumerate() {
        let mn = if t.load == "MOVW" { "lw" } else { "ld" };
        items.push(inst(mn, vec![x(10 + n as u8), Opnd::Imm(fp + *off as i64), x(2)]));
    }
    let epilogue = af.result.is_some() || framed;
    let ret_label = f.label();
    for it in std::mem::take(&mut f.items) {
        match it {
            Item::Inst(ii) if epilogue && ii.control() == Control::Return => items.push(inst("jal", vec![x(0), Opnd::Label(ret_label)])),
            other => items.push(other),
        }
    }
    if epilogue {
        f.labels[ret_label.0 as usize].bound = true;
        items.push(Item::Label(ret_label));
        if let Some((t, o)) = &af.result {
            let mn = if t.store == "MOVW" { "sw" } else { "sd" };
            items.push(inst(mn, vec![x(10), Opnd::Imm(fp + *o as i64), x(2)]));
        }
        if framed {
            items.push(inst("ld", vec![x(1), Opnd::Imm(0), x(2)]));
            items.push(inst("addi", vec![x(2), x(2), Opnd::Imm(frame as i64)]));
        }
        items.push(inst("jalr", vec![x(0), Opnd::Imm(0), x(1)]));
    }
    f.items = items;
    Ok(Some(f))
}

/// The module's global functions as Go's assembler builds them ([`abi0_func`]), with the
/// module's data, as an object for kgen-sim (symbols keep their C names). Functions with
/// Go's stack check are left out; their names are returned.
pub fn abi0_object(m: &Module) -> Result<(Object, Vec<String>), EmitError> {
    if m.abi != Abi::Go {
        return Err(unsupported(format!("{} {}: the module is built for the {} ABI", m.kernel, m.variant, m.abi)));
    }
    let mut codes = Vec::new();
    let mut skipped = Vec::new();
    for l in m.funcs.iter().filter(|l| l.global) {
        match abi0_func(l)? {
            Some(f) => codes.push((kgen_dsl::object::assemble(&f)?, true)),
            None => skipped.push(l.func.name.clone()),
        }
    }
    Ok((kgen_dsl::object::build_object(&codes, &m.data), skipped))
}
