//! The text assembler front end: GNU-syntax assembly files (what kgen prints, the common
//! directives, and the riscv64 perlasm outputs of OpenSSL) into an [`Object`] — so an
//! existing `.S` can run in the simulator and the cost model beside kgen's own code.
//!
//! All `.text` code becomes one function whose labels give the symbols; data directives in
//! other sections become `.rodata`. Unknown syntax is an error with the line number.

use crate::abi::Abi;
use crate::func::{Func, Item, Label, Opnd, Reg};
use crate::isa::{table, Kind, VDialect};
use crate::object::{assemble, build_object, DataObj, Object, Section, Symbol};
use crate::target::Target;
use crate::text::{parse_int, parse_operands_sym, parse_xreg, split_operands, POp};
use std::collections::HashMap;

/// An error with the line it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub msg: String,
}

impl std::fmt::Display for AsmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

/// Evaluates a constant expression: integers, `.equ` names, `+ - * / % << >> & | ^ ~`,
/// parentheses.
pub fn eval_expr(s: &str, names: &HashMap<String, i64>) -> Option<i64> {
    let toks = lex(s)?;
    let mut p = 0;
    let v = expr(&toks, &mut p, names, 0)?;
    (p == toks.len()).then_some(v)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

fn lex(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && (b[i] as char).is_ascii_alphanumeric() {
                i += 1;
            }
            // C-style suffixes (`0xa56363c6U`) as GNU as accepts them.
            let lit = s[st..i].trim_end_matches(['U', 'u', 'L', 'l']);
            out.push(Tok::Num(parse_int(lit)?));
        } else if c.is_ascii_alphabetic() || c == '_' || c == '.' {
            let st = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Name(s[st..i].to_string()));
        } else {
            let two = if i + 1 < b.len() { &s[i..i + 2] } else { "" };
            let op = match two {
                "<<" => "<<",
                ">>" => ">>",
                _ => match c {
                    '+' => "+",
                    '-' => "-",
                    '*' => "*",
                    '/' => "/",
                    '%' => "%",
                    '&' => "&",
                    '|' => "|",
                    '^' => "^",
                    '~' => "~",
                    '(' => "(",
                    ')' => ")",
                    _ => return None,
                },
            };
            i += op.len();
            out.push(Tok::Op(op));
        }
    }
    Some(out)
}

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "|" => 1,
        "^" => 2,
        "&" => 3,
        "<<" | ">>" => 4,
        "+" | "-" => 5,
        "*" | "/" | "%" => 6,
        _ => return None,
    })
}

fn unary(t: &[Tok], p: &mut usize, names: &HashMap<String, i64>) -> Option<i64> {
    match t.get(*p)? {
        Tok::Num(v) => {
            *p += 1;
            Some(*v)
        }
        Tok::Name(n) => {
            *p += 1;
            names.get(n).copied()
        }
        Tok::Op("-") => {
            *p += 1;
            Some(unary(t, p, names)?.wrapping_neg())
        }
        Tok::Op("+") => {
            *p += 1;
            unary(t, p, names)
        }
        Tok::Op("~") => {
            *p += 1;
            Some(!unary(t, p, names)?)
        }
        Tok::Op("(") => {
            *p += 1;
            let v = expr(t, p, names, 0)?;
            (t.get(*p)? == &Tok::Op(")")).then(|| *p += 1)?;
            Some(v)
        }
        _ => None,
    }
}

fn expr(t: &[Tok], p: &mut usize, names: &HashMap<String, i64>, min: u8) -> Option<i64> {
    let mut lhs = unary(t, p, names)?;
    while let Some(Tok::Op(op)) = t.get(*p) {
        let Some(pr) = prec(op) else { break };
        if pr < min.max(1) {
            break;
        }
        *p += 1;
        let rhs = expr(t, p, names, pr + 1)?;
        lhs = match *op {
            "|" => lhs | rhs,
            "^" => lhs ^ rhs,
            "&" => lhs & rhs,
            "<<" => lhs.wrapping_shl(rhs as u32),
            ">>" => lhs.wrapping_shr(rhs as u32),
            "+" => lhs.wrapping_add(rhs),
            "-" => lhs.wrapping_sub(rhs),
            "*" => lhs.wrapping_mul(rhs),
            "/" => lhs.checked_div(rhs)?,
            "%" => lhs.checked_rem(rhs)?,
            _ => return None,
        };
    }
    Some(lhs)
}

/// Immediate-operand aliases GNU accepts (`add rd, rs, imm` = `addi`).
const IMM_ALIASES: &[(&str, &str)] = &[
    ("add", "addi"),
    ("and", "andi"),
    ("or", "ori"),
    ("xor", "xori"),
    ("sll", "slli"),
    ("srl", "srli"),
    ("sra", "srai"),
    ("slt", "slti"),
    ("sltu", "sltiu"),
    ("addw", "addiw"),
    ("sllw", "slliw"),
    ("srlw", "srliw"),
    ("sraw", "sraiw"),
    ("ror", "rori"),
    ("rorw", "roriw"),
];

/// What an assembly file defines.
pub struct Assembled {
    pub object: Object,
    /// The `.text` code as one function (physical registers, labels), for printing.
    pub func: Func,
}

struct State<'t> {
    f: Func,
    section: String,
    /// All non-text sections, as one read-only byte stream.
    rodata: DataObj,
    data_labels: Vec<(String, u32)>,
    names: HashMap<String, i64>,
    globals: Vec<String>,
    /// numeric local label -> definitions so far
    local_count: HashMap<u32, u32>,
    text_labels: Vec<(String, Label)>,
    sizes: HashMap<String, (Label, usize)>,
    target: &'t Target,
    /// Linker relaxation enabled (GNU's default; `.option norelax` turns it off).
    relax: bool,
    /// Largest code alignment requested (GNU as pads the end of .text to it).
    text_align: i64,
}

impl State<'_> {
    fn in_text(&self) -> bool {
        self.section == ".text" || self.section.starts_with(".text.")
    }
    fn label_for(&mut self, name: &str) -> Label {
        // numeric local references: 1b / 1f
        if let Some(stem) = name.strip_suffix('b').or_else(|| name.strip_suffix('f')) {
            if let Ok(n) = stem.parse::<u32>() {
                let c = *self.local_count.get(&n).unwrap_or(&0);
                let k = if name.ends_with('b') { c.saturating_sub(1) } else { c };
                return self.f.named_label(&format!("{n}$local{k}"));
            }
        }
        self.f.named_label(name)
    }
    fn data_mut(&mut self, line: usize) -> Result<&mut DataObj, AsmError> {
        if self.in_text() {
            return Err(AsmError { line, msg: "this data directive is not supported in .text".into() });
        }
        Ok(&mut self.rodata)
    }
}

/// Pads code to a 4-byte boundary as GNU as does: a zero byte to even, then a 2-byte
/// `c.nop` (0x0001).
fn pad_to_insn(f: &mut Func) {
    let off = text_offset(f);
    let mut pad = Vec::new();
    if off % 2 != 0 {
        pad.push(0);
    }
    if (off + pad.len() as i64) % 4 == 2 {
        pad.extend_from_slice(&[0x01, 0x00]);
    }
    if !pad.is_empty() {
        f.items.push(Item::Data(pad));
    }
}

fn text_offset(f: &Func) -> i64 {
    f.items
        .iter()
        .map(|i| match i {
            Item::Inst(_) => 4,
            Item::Data(d) => d.len() as i64,
            _ => 0,
        })
        .sum()
}

fn strip_comment(l: &str) -> &str {
    let mut in_str = false;
    for (i, c) in l.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '#' if !in_str => return &l[..i],
            '/' if !in_str && l[i..].starts_with("//") => return &l[..i],
            _ => {}
        }
    }
    l
}

/// Assembles `src` for `target`.
pub fn assemble_file(src: &str, target: &Target) -> Result<Assembled, AsmError> {
    let mut st = State {
        f: Func::new("__text", target, Abi::Psabi),
        section: ".text".into(),
        rodata: DataObj { name: ".rodata".into(), align: 1, bytes: Vec::new(), elem: 1, global: false, comment: String::new() },
        data_labels: Vec::new(),
        names: HashMap::new(),
        globals: Vec::new(),
        local_count: HashMap::new(),
        text_labels: Vec::new(),
        sizes: HashMap::new(),
        target,
        relax: true,
        text_align: 4,
    };
    st.f.wipe = false;
    for (ln0, raw) in src.lines().enumerate() {
        let line = ln0 + 1;
        for stmt in strip_comment(raw).split(';') {
            statement(&mut st, stmt.trim(), line)?;
        }
        if let Some(e) = st.f.errors.first() {
            return Err(AsmError { line, msg: e.reason.clone() + &format!(" (`{}`)", e.inst) });
        }
    }
    pad_to_insn(&mut st.f);
    while text_offset(&st.f) % st.text_align != 0 {
        st.f.nop();
    }
    let mut f = st.f;
    // The builder's end-of-function checks; `ret` here is a plain jalr, so add no Exit.
    for (i, l) in f.labels.iter().enumerate() {
        let used = f.items.iter().any(|it| matches!(it, Item::Inst(x) if x.ops.iter().any(|o| matches!(o, Opnd::Label(k) | Opnd::PcrelLo { anchor: k } if k.0 as usize == i))));
        if used && !l.bound {
            return Err(AsmError { line: 0, msg: format!("label `{}` is used but never defined", l.name.clone().unwrap_or_default()) });
        }
    }
    // A conditional branch out of its ±4 KiB reach becomes the inverted branch over a `jal`,
    // as GNU as relaxes it (compiler output relies on that, all the more without RVC).
    crate::lower::relax_branches(&mut f).map_err(|e| AsmError { line: 0, msg: e.to_string() })?;
    let code = assemble(&f).map_err(|e| AsmError { line: 0, msg: e.to_string() })?;
    let mut obj = build_object(&[], std::slice::from_ref(&st.rodata));
    obj.symbols.clear();
    for (name, off) in &st.data_labels {
        obj.symbols.push(Symbol { name: name.clone(), section: Section::Rodata, offset: *off, size: 0, global: false, func: false });
    }
    obj.text = code.bytes.clone();
    obj.relocs = code.relocs.clone();
    obj.insts = code.insts.iter().map(|(o, i, _)| (*o, *i)).collect();
    let mut syms: Vec<Symbol> = Vec::new();
    for (name, l) in &st.text_labels {
        let off = code.labels[l];
        let size = st.sizes.get(name).map(|(end, _)| code.labels[end] - off).unwrap_or(0);
        syms.push(Symbol { name: name.clone(), section: Section::Text, offset: off, size, global: st.globals.contains(name), func: true });
    }
    for s in &mut obj.symbols {
        s.global = st.globals.contains(&s.name);
    }
    syms.append(&mut obj.symbols);
    obj.symbols = syms;
    f.name = "__text".into();
    Ok(Assembled { object: obj, func: f })
}

fn statement(st: &mut State, s: &str, line: usize) -> Result<(), AsmError> {
    let e = |msg: String| AsmError { line, msg };
    let mut s = s;
    // labels
    while let Some(colon) = s.find(':') {
        let name = s[..colon].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$') {
            break;
        }
        if st.in_text() {
            let l = if let Ok(n) = name.parse::<u32>() {
                let c = st.local_count.entry(n).or_insert(0);
                let l = st.f.named_label(&format!("{n}$local{c}"));
                *c += 1;
                l
            } else {
                let l = st.f.named_label(name);
                if !name.starts_with(".L") {
                    st.text_labels.push((name.to_string(), l));
                }
                l
            };
            st.f.bind(l);
        } else {
            st.data_labels.push((name.to_string(), st.rodata.bytes.len() as u32));
        }
        s = s[colon + 1..].trim();
    }
    if s.is_empty() {
        return Ok(());
    }
    let (head, rest) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
    let rest = rest.trim();
    if head.starts_with('.') {
        return directive(st, head, rest, line);
    }
    if !st.in_text() {
        return Err(e(format!("instruction `{head}` outside .text")));
    }
    instruction(st, head, rest, line)
}

fn directive(st: &mut State, d: &str, rest: &str, line: usize) -> Result<(), AsmError> {
    let e = |msg: String| AsmError { line, msg };
    let args = split_operands(rest);
    let ev = |st: &State, a: &str| eval_expr(a, &st.names).ok_or_else(|| AsmError { line, msg: format!("cannot evaluate `{a}`") });
    match d {
        ".text" | ".data" | ".rodata" | ".bss" => {
            st.section = d.to_string();
        }
        ".section" => {
            st.section = args.first().copied().unwrap_or("").to_string();
        }
        // A weak definition links like a global one here (one object, no other definition).
        ".globl" | ".global" | ".weak" => st.globals.extend(args.iter().map(|a| a.to_string())),
        ".option" => match args.first().copied() {
            Some("norelax") => st.relax = false,
            Some("relax") => st.relax = true,
            _ => {}
        },
        ".type" | ".attribute" | ".file" | ".ident" | ".local" | ".hidden" | ".cfi_startproc" | ".cfi_endproc" => {}
        ".size" => {
            if st.in_text() && args.len() == 2 && args[1].replace(' ', "") == format!(".-{}", args[0]) {
                let l = st.f.label();
                st.f.bind(l);
                st.sizes.insert(args[0].to_string(), (l, line));
            }
        }
        ".set" | ".equ" => {
            if args.len() != 2 {
                return Err(e(format!("{d} takes a name and a value")));
            }
            let v = ev(st, args[1])?;
            st.names.insert(args[0].to_string(), v);
        }
        ".align" | ".p2align" | ".balign" => {
            let v = ev(st, args.first().copied().unwrap_or("0"))?;
            let bytes = if d == ".balign" { v } else { 1 << v };
            if st.in_text() {
                st.text_align = st.text_align.max(bytes);
                if bytes > 4 {
                    // Code alignment beyond one instruction, padded with nops as GNU as does:
                    // with linker relaxation on it always emits the worst case (bytes - 4)
                    // and leaves the linker to delete what is not needed; without, exactly.
                    pad_to_insn(&mut st.f);
                    let count = text_offset(&st.f);
                    let mut pad = if st.relax { bytes - 4 } else { (bytes - count % bytes) % bytes };
                    while pad > 0 {
                        st.f.nop();
                        pad -= 4;
                    }
                }
            } else {
                let dobj = st.data_mut(line)?;
                dobj.align = dobj.align.max(bytes as u32);
                while dobj.bytes.len() as i64 % bytes != 0 {
                    dobj.bytes.push(0);
                }
            }
        }
        ".word" | ".long" | ".4byte" | ".half" | ".short" | ".2byte" | ".byte" | ".quad" | ".dword" | ".8byte" => {
            let size = match d {
                ".byte" => 1,
                ".half" | ".short" | ".2byte" => 2,
                ".word" | ".long" | ".4byte" => 4,
                _ => 8,
            };
            if st.in_text() && size != 4 {
                let vals: Result<Vec<i64>, _> = args.iter().map(|a| ev(st, a)).collect();
                let mut bytes = Vec::new();
                for v in vals? {
                    bytes.extend_from_slice(&v.to_le_bytes()[..size]);
                }
                st.f.items.push(Item::Data(bytes));
            } else if st.in_text() {
                for a in &args {
                    let w = ev(st, a)? as u32;
                    let exts = st.target.exts;
                    let inst = table().decode(w, exts).ok_or_else(|| e(format!(".word {w:#010x} is not an instruction of target {}", st.target.name)))?;
                    let ops: Vec<Opnd> = inst
                        .args()
                        .iter()
                        .zip(&inst.row().ops)
                        .map(|(v, s)| match s.kind {
                            Kind::X | Kind::XMem => Opnd::Reg(Reg::X(*v as u8)),
                            Kind::V(_) => Opnd::Reg(Reg::V(*v as u8)),
                            Kind::V0 => Opnd::Reg(Reg::V(0)),
                            _ => Opnd::Imm(*v),
                        })
                        .collect();
                    if inst.row().ops.iter().any(|s| matches!(s.kind, Kind::Rel(_))) {
                        return Err(e(format!(".word {w:#010x} is a branch; write it as an instruction")));
                    }
                    st.f.emit(inst.form, ops, Some(format!(".word {w:#010x}")));
                }
            } else {
                let vals: Result<Vec<i64>, _> = args.iter().map(|a| ev(st, a)).collect();
                let vals = vals?;
                let dobj = st.data_mut(line)?;
                dobj.elem = size as u8;
                for v in vals {
                    dobj.bytes.extend_from_slice(&v.to_le_bytes()[..size]);
                }
            }
        }
        ".zero" | ".space" => {
            let n = ev(st, args.first().copied().unwrap_or("0"))?;
            let dobj = st.data_mut(line)?;
            dobj.bytes.extend(std::iter::repeat_n(0u8, n as usize));
        }
        ".string" | ".asciz" | ".ascii" => {
            let s = rest.trim().trim_matches('"');
            let dobj = st.data_mut(line)?;
            dobj.bytes.extend_from_slice(s.as_bytes());
            if d != ".ascii" {
                dobj.bytes.push(0);
            }
        }
        _ => return Err(e(format!("unknown directive `{d}`"))),
    }
    Ok(())
}

fn reg_of(a: &str, line: usize) -> Result<Reg, AsmError> {
    parse_xreg(a).map(|n| Reg::X(n as u8)).ok_or(AsmError { line, msg: format!("`{a}` is not an integer register") })
}

/// `sym`, `sym+expr` or `sym-expr` as (symbol, addend).
fn sym_addend(a: &str, names: &HashMap<String, i64>) -> Option<(String, i64)> {
    let a = a.trim();
    match a.find(['+', '-']).filter(|&k| k > 0) {
        Some(k) => {
            let v = eval_expr(&a[k + 1..], names)?;
            Some((a[..k].trim().to_string(), if a.as_bytes()[k] == b'-' { -v } else { v }))
        }
        None => Some((a.to_string(), 0)),
    }
}

fn instruction(st: &mut State, mn: &str, rest: &str, line: usize) -> Result<(), AsmError> {
    let e = |msg: String| AsmError { line, msg };
    let args = split_operands(rest);
    let r = |i: usize| -> Result<Reg, AsmError> { reg_of(args.get(i).copied().unwrap_or(""), line) };
    let names = st.names.clone();
    let ev = |a: &str| eval_expr(a, &names).ok_or_else(|| AsmError { line, msg: format!("cannot evaluate `{a}`") });
    let n = args.len();
    // Pseudo-instructions and GNU's short forms.
    match (mn, n) {
        ("li", 2) => {
            st.f.li(r(0)?, ev(args[1])?);
            return Ok(());
        }
        ("la" | "lla", 2) => {
            let (sym, addend) = sym_addend(args[1], &names).ok_or_else(|| e(format!("cannot evaluate `{}`", args[1])))?;
            st.f.la_off(r(0)?, &sym, addend);
            return Ok(());
        }
        ("mv", 2) => {
            st.f.mv(r(0)?, r(1)?);
            return Ok(());
        }
        ("not", 2) => {
            st.f.not(r(0)?, r(1)?);
            return Ok(());
        }
        ("neg", 2) => {
            st.f.neg(r(0)?, r(1)?);
            return Ok(());
        }
        ("negw", 2) => {
            st.f.negw(r(0)?, r(1)?);
            return Ok(());
        }
        ("sext.w", 2) => {
            st.f.sext_w(r(0)?, r(1)?);
            return Ok(());
        }
        ("zext.w", 2) if table().lookup("add.uw").is_some() => {
            st.f.zext_w(r(0)?, r(1)?);
            return Ok(());
        }
        ("zext.b", 2) => {
            st.f.zext_b(r(0)?, r(1)?);
            return Ok(());
        }
        ("zext.h", 2) => {
            st.f.zext_h(r(0)?, r(1)?);
            return Ok(());
        }
        ("sext.b", 2) => {
            st.f.sext_b(r(0)?, r(1)?);
            return Ok(());
        }
        ("sext.h", 2) => {
            st.f.sext_h(r(0)?, r(1)?);
            return Ok(());
        }
        ("seqz", 2) => {
            st.f.seqz(r(0)?, r(1)?);
            return Ok(());
        }
        ("snez", 2) => {
            st.f.snez(r(0)?, r(1)?);
            return Ok(());
        }
        ("sltz", 2) => {
            st.f.emit_text("slt", &[Opnd::Reg(r(0)?), Opnd::Reg(r(1)?), Opnd::Reg(Reg::X(0))]);
            return Ok(());
        }
        ("sgtz", 2) => {
            st.f.emit_text("slt", &[Opnd::Reg(r(0)?), Opnd::Reg(Reg::X(0)), Opnd::Reg(r(1)?)]);
            return Ok(());
        }
        ("nop", 0) => {
            st.f.nop();
            return Ok(());
        }
        ("ret", 0) => {
            st.f.jr(Reg::X(1));
            return Ok(());
        }
        ("jr", 1) => {
            st.f.jr(r(0)?);
            return Ok(());
        }
        ("j", 1) => {
            let l = st.label_for(args[0]);
            st.f.j(l);
            return Ok(());
        }
        ("jal", 1) => {
            let l = st.label_for(args[0]);
            st.f.emit_text("jal", &[Opnd::Reg(Reg::X(1)), Opnd::Label(l)]);
            return Ok(());
        }
        ("jalr", 1) => {
            st.f.emit_text("jalr", &[Opnd::Reg(Reg::X(1)), Opnd::Imm(0), Opnd::Reg(r(0)?)]);
            return Ok(());
        }
        ("jalr", 3) if parse_xreg(args[1]).is_some() => {
            st.f.emit_text("jalr", &[Opnd::Reg(r(0)?), Opnd::Imm(ev(args[2])?), Opnd::Reg(r(1)?)]);
            return Ok(());
        }
        ("call", 1) => {
            st.f.call(args[0]);
            return Ok(());
        }
        ("tail", 1) => {
            st.f.tail(args[0]);
            return Ok(());
        }
        ("fence", 0) => {
            st.f.emit_text("fence", &[Opnd::Imm(15), Opnd::Imm(15)]);
            return Ok(());
        }
        ("beqz" | "bnez" | "blez" | "bgez" | "bltz" | "bgtz", 2) => {
            let (a, l) = (r(0)?, st.label_for(args[1]));
            match mn {
                "beqz" => st.f.beqz(a, l),
                "bnez" => st.f.bnez(a, l),
                "blez" => st.f.blez(a, l),
                "bgez" => st.f.bgez(a, l),
                "bltz" => st.f.bltz(a, l),
                _ => st.f.bgtz(a, l),
            }
            return Ok(());
        }
        ("bgt" | "ble" | "bgtu" | "bleu", 3) => {
            let (a, b, l) = (r(0)?, r(1)?, st.label_for(args[2]));
            match mn {
                "bgt" => st.f.bgt(a, b, l),
                "ble" => st.f.ble(a, b, l),
                "bgtu" => st.f.bgtu(a, b, l),
                _ => st.f.bleu(a, b, l),
            }
            return Ok(());
        }
        ("csrr", 2) => return st.instr_text("csrrs", &format!("{}, {}, zero", args[0], args[1]), line),
        ("csrw" | "csrs" | "csrc", 2) => {
            let real = format!("csrr{}", &mn[3..]);
            return st.instr_text(&real, &format!("zero, {}, {}", args[0], args[1]), line);
        }
        ("csrwi" | "csrsi" | "csrci", 2) => {
            let real = format!("csrr{}", &mn[3..]);
            return st.instr_text(&real, &format!("zero, {}, {}", args[0], args[1]), line);
        }
        ("rdcycle" | "rdtime" | "rdinstret", 1) => return st.instr_text("csrrs", &format!("{}, {}, zero", args[0], &mn[2..]), line),
        _ => {}
    }
    let Some(mut form) = table().lookup(mn) else {
        return Err(e(format!("unknown instruction `{mn}`")));
    };
    // GNU's `l{b,h,w,d}[u] rd, symbol` (gcc's constant-pool loads): auipc rd,
    // %pcrel_hi(symbol); then the load from %pcrel_lo of that auipc, off rd.
    let row = table().row(form);
    if n == 2 && row.class == crate::isa::Class::Load && row.ops.len() == 3 && !args[1].contains('(') {
        let rd = r(0)?;
        let (sym, addend) = sym_addend(args[1], &names).ok_or_else(|| e(format!("cannot evaluate `{}`", args[1])))?;
        let anchor = st.f.label();
        st.f.bind(anchor);
        st.f.emit_text("auipc", &[Opnd::Reg(rd), Opnd::PcrelHi { sym, addend }]);
        st.f.emit(form, vec![Opnd::Reg(rd), Opnd::PcrelLo { anchor }, Opnd::Reg(rd)], None);
        return Ok(());
    }
    // GNU's immediate aliases: `add rd, rs, imm`.
    if let Some((_, alias)) = IMM_ALIASES.iter().find(|(m, _)| *m == mn) {
        if n == 3 && parse_xreg(args[2]).is_none() {
            form = table().form(alias);
        }
    }
    let _ = e;
    st.instr_form(form, rest, line)
}

impl State<'_> {
    fn instr_text(&mut self, mn: &str, rest: &str, line: usize) -> Result<(), AsmError> {
        let form = table().lookup(mn).ok_or(AsmError { line, msg: format!("unknown instruction `{mn}`") })?;
        self.instr_form(form, rest, line)
    }

    fn instr_form(&mut self, form: crate::isa::Form, rest: &str, line: usize) -> Result<(), AsmError> {
        let names = self.names.clone();
        let mut eval = |t: &str| eval_expr(t, &names);
        let p = parse_operands_sym(form, rest, &mut eval).map_err(|err| AsmError { line, msg: err.0 })?;
        let row = table().row(form);
        let mut ops = Vec::with_capacity(p.len());
        for (spec, v) in row.ops.iter().zip(p) {
            ops.push(match (spec.kind, v) {
                (Kind::X | Kind::XMem, POp::Val(n)) => Opnd::Reg(Reg::X(n as u8)),
                (Kind::V(_), POp::Val(n)) => Opnd::Reg(Reg::V(n as u8)),
                (Kind::V0, _) => Opnd::Reg(Reg::V(0)),
                (Kind::Rel(_), POp::Val(off)) => return Err(AsmError { line, msg: format!("numeric branch offset {off} is not supported; use a label") }),
                (Kind::Rel(_), POp::Sym(name)) => Opnd::Label(self.label_for(&name)),
                (_, POp::Val(v)) => Opnd::Imm(v),
                (_, POp::Sym(s)) => return Err(AsmError { line, msg: format!("relocation `{s}` is not supported here; use la/lla") }),
            });
        }
        self.f.emit(form, ops, None);
        Ok(())
    }
}

impl Func {
    /// Emits a row by mnemonic (used by the text assembler's short forms).
    pub fn emit_text(&mut self, mnemonic: &str, ops: &[Opnd]) {
        self.inst(mnemonic, ops);
    }
}

/// The vector dialect a target's `.word`s decode in.
pub fn dialect_of(t: &Target) -> Option<VDialect> {
    t.vdialect()
}
