//! The text assembler front end: GNU-syntax assembly files (what kgen prints, the common
//! directives, and the riscv64 perlasm outputs of OpenSSL) into an [`Object`] — so an
//! existing `.S` can run in the simulator and the cost model beside kgen's own code.
//!
//! All `.text` code becomes one function whose labels give the symbols; data directives in
//! other sections become `.rodata`. Unknown syntax is an error with the line number.

use crate::abi::Abi;
use crate::ir::{Func, Item, Label, Opnd, Reg};
use crate::isa::vector::rollback::RollbackOps;
use crate::isa::{table, Class, Inst, Kind, VDialect};
use crate::{Ext, ExtSet};
use crate::object::{assemble, build_object, DataObj, Object, Section, Symbol};
use crate::target::Target;
use crate::text::{parse_int, parse_operands_sym, parse_xreg, split_operands, POp};
use std::collections::HashMap;

/// An error with the line it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub msg: String,
    /// The file the line is in, when several files are assembled together (empty
    /// otherwise: the caller names the file).
    pub file: String,
}

impl std::fmt::Display for AsmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}: ", self.file)?;
        }
        if self.line == 0 {
            return f.write_str(&self.msg);
        }
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl AsmError {
    fn at(line: usize, msg: impl Into<String>) -> AsmError {
        AsmError { line, msg: msg.into(), file: String::new() }
    }
}

/// Limits that keep arbitrary input from exhausting memory: bytes of code and data, lines
/// produced by macro, `.rept` and `.irp` expansion, their nesting, and expression length.
pub const MAX_SECTION_BYTES: usize = 64 << 20;
pub const MAX_EXPANDED_LINES: usize = 1 << 20;
pub const MAX_EXPANSION_DEPTH: usize = 64;
const MAX_EXPR_LEN: usize = 4096;
const MAX_ALIGN: i64 = 1 << 16;

/// Evaluates a constant expression: integers, `.equ` names, `+ - * / % << >> & | ^ ~`,
/// parentheses.
pub fn eval_expr(s: &str, names: &HashMap<String, i64>) -> Option<i64> {
    if s.len() > MAX_EXPR_LEN {
        return None;
    }
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

/// `.set name, target` naming a label.
struct Alias {
    name: String,
    target: String,
    /// Both as the label table knows them (`.L` names are per file).
    scoped: (String, String),
    line: usize,
    file: String,
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
    /// `.set NAME, SYMBOL` where SYMBOL is a label (perhaps defined later): NAME names the
    /// same place.
    aliases: Vec<Alias>,
    /// `.macro` definitions.
    macros: HashMap<String, Macro>,
    /// A `.macro`, `.rept` or `.irp` block being collected.
    pending: Option<Pending>,
    /// Lines produced by expansion so far, and the macro invocations (GNU's `\@`).
    expanded: usize,
    invocations: usize,
    /// The body of the `.rept`/`.irp` block being collected.
    rept_body: Vec<String>,
    /// Which input file (local labels `.L*` and `1:` are the file's own).
    file_idx: usize,
    /// RVV 1.0 mnemonics are translated as rvv-rollback does (the target has XTheadVector).
    rollback: bool,
    opts: AsmOptions,
    data_relocs: Vec<(u32, u8, String, i64)>,
    /// Unknown instructions kept as traps: (item index of the placeholder, description).
    unknown: Vec<(usize, String)>,
    file_name: String,
}

/// A `.macro`: parameter names with their defaults (`vararg` takes the rest), and body.
#[derive(Clone)]
struct Macro {
    params: Vec<(String, Option<String>, bool)>,
    body: Vec<String>,
}

enum Block {
    Macro(String, Macro),
    Rept(i64),
    Irp(String, Vec<String>),
}

struct Pending {
    block: Block,
    depth: usize,
    line: usize,
}

impl State<'_> {
    fn in_text(&self) -> bool {
        // `.text`, `.text.*`, and the Linux kernel's `.init.text` / `.exit.text`.
        self.section == ".text" || self.section.starts_with(".text.") || self.section.ends_with(".text")
    }
    /// A label name as this file sees it: `.L*` names are local to their file.
    fn scoped(&self, name: &str) -> String {
        if name.starts_with(".L") && self.file_idx > 0 {
            format!("{name}@file{}", self.file_idx)
        } else {
            name.to_string()
        }
    }
    fn label_for(&mut self, name: &str) -> Label {
        if let Some((n, back)) = numeric_ref(name) {
            let c = *self.local_count.get(&n).unwrap_or(&0);
            let k = if back { c.saturating_sub(1) } else { c };
            return self.f.named_label(&format!("{n}$local{k}@file{}", self.file_idx));
        }
        let n = self.scoped(name);
        self.f.named_label(&n)
    }
    fn data_mut(&mut self, line: usize) -> Result<&mut DataObj, AsmError> {
        if self.in_text() {
            return Err(AsmError::at(line, "this data directive is not supported in .text"));
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

/// The characters of `l` outside its string literals (whose `\"` does not end them), with
/// their byte offsets; the quotes themselves are left out.
fn outside_strings(l: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let (mut in_str, mut escaped) = (false, false);
    l.char_indices().filter(move |&(_, c)| {
        if std::mem::take(&mut escaped) {
            return false;
        }
        match c {
            '\\' if in_str => {
                escaped = true;
                false
            }
            '"' => {
                in_str = !in_str;
                false
            }
            _ => !in_str,
        }
    })
}

/// `l` without its line comment (`#` or `//` outside a string literal).
fn strip_comment(l: &str) -> &str {
    for (i, c) in outside_strings(l) {
        match c {
            '#' => return &l[..i],
            '/' if l[i..].starts_with("//") => return &l[..i],
            _ => {}
        }
    }
    l
}

/// The statements of a line: split at each `;` outside a string literal.
fn statements(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in outside_strings(code) {
        if c == ';' {
            out.push(&code[start..i]);
            start = i + 1;
        }
    }
    out.push(&code[start..]);
    out
}

/// `src` with its C comments (`/* ... */`, which GNU as reads as comments on every target)
/// blanked out, newlines kept so that line numbers stay; an unclosed one is an error.
fn strip_block_comments(src: &str) -> Result<std::borrow::Cow<'_, str>, AsmError> {
    if !src.contains("/*") {
        return Ok(std::borrow::Cow::Borrowed(src));
    }
    let mut out = String::with_capacity(src.len());
    let (mut in_str, mut line_comment, mut open_at) = (false, false, None::<usize>);
    let mut line = 1;
    let mut it = src.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\n' {
            line += 1;
            line_comment = false;
            in_str = false;
            out.push(c);
            continue;
        }
        if open_at.is_some() {
            if c == '*' && it.peek() == Some(&'/') {
                it.next();
                open_at = None;
                out.push_str("  ");
            } else {
                out.push(' ');
            }
            continue;
        }
        match c {
            '\\' if in_str => {
                // An escaped character (`\"` does not end the string).
                out.push(c);
                if let Some(&n) = it.peek() {
                    if n != '\n' {
                        out.push(n);
                        it.next();
                    }
                }
                continue;
            }
            '"' if !line_comment => in_str = !in_str,
            '#' if !in_str => line_comment = true,
            '/' if !in_str && it.peek() == Some(&'/') => line_comment = true,
            '/' if !in_str && !line_comment && it.peek() == Some(&'*') => {
                it.next();
                open_at = Some(line);
                out.push_str("  ");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    match open_at {
        Some(l) => Err(AsmError::at(l, "`/*` comment is never closed")),
        None => Ok(std::borrow::Cow::Owned(out)),
    }
}

/// Assembles `src` for `target`.
pub fn assemble_file(src: &str, target: &Target) -> Result<Assembled, AsmError> {
    assemble_files(&[("", src)], target)
}

/// How lenient the assembler is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AsmOptions {
    /// An instruction whose mnemonic kgen's ISA table does not have (compiler output's
    /// floating point, say) becomes an illegal word recorded in [`Object::unknown`]
    /// instead of an error: code that never runs it can still be timed, and running it
    /// is reported with the file, line and text.
    pub unknown_as_trap: bool,
    /// Code alignment (`.p2align` in `.text` with linker relaxation on) padded as the
    /// linker leaves it after relaxation, exactly, instead of GNU as's worst case (the
    /// object file's bytes, which the linker then shrinks): for code that runs as linked,
    /// such as data placed in `.text` and loaded at its alignment.
    pub linked_alignment: bool,
}

/// [`assemble_files`] with options.
pub fn assemble_files_with(files: &[(&str, &str)], target: &Target, opts: AsmOptions) -> Result<Assembled, AsmError> {
    assemble_inner(files, target, opts)
}

/// Assembles several files (name, text) into one object, as if linked: global symbols are
/// shared, `.L*` and numeric local labels are each file's own. Errors name the file (when
/// it has a name) and the line. On a target with XTheadVector, RVV 1.0 instructions are
/// translated as rvv-rollback does (see [`crate::isa::vector::rollback`]).
pub fn assemble_files(files: &[(&str, &str)], target: &Target) -> Result<Assembled, AsmError> {
    assemble_inner(files, target, AsmOptions::default())
}

/// A `.word` in `.text` as an instruction of `target` (in its vector dialect), or an error
/// that says what the word is and which extension the target lacks for it.
fn decode_word(w: u32, target: &Target) -> Result<Inst, String> {
    let valid = |i: &Inst| {
        let row = i.row();
        let vals = i.args();
        (0..row.ops.len()).all(|k| row.check_operand(k, vals[k]).is_ok()) && row.check_rules(&vals[..row.ops.len()]).is_ok()
    };
    let mine = table().decode(w, target.exts);
    if let Some(i) = mine.filter(valid) {
        return Ok(i);
    }
    // What the word is elsewhere: under each vector dialect with every other extension.
    let everything = |dialect: Ext| Ext::ALL.iter().filter(|&&x| x != if dialect == Ext::V { Ext::XTheadVector } else { Ext::V }).fold(ExtSet::EMPTY, |s, &x| s.union(ExtSet::one(x)));
    let other = [Ext::V, Ext::XTheadVector].into_iter().filter_map(|d| table().decode(w, everything(d))).find(|i| valid(i));
    let here = match mine {
        Some(i) => format!("; as target {}'s instruction it is `{}`, which is not valid", target.name, crate::text::print_inst(&i)),
        None => String::new(),
    };
    match other {
        Some(i) => {
            let need: Vec<&str> = i.row().ext.iter().map(|x| x.name()).collect();
            let other_dialect = (i.row().vdialect == Some(VDialect::V1) && target.has(Ext::XTheadVector)) || (i.row().vdialect == Some(VDialect::Thead) && target.has(Ext::V));
            let fix = if other_dialect { "it is the other vector dialect: give a target of that dialect".to_string() } else { format!("give a target that has it, or --ext {}", need[0]) };
            Err(format!(".word {w:#010x} is `{}` ({}), which target {} does not have{here} ({fix})", crate::text::print_inst(&i), need.join(" or "), target.name))
        }
        None => Err(format!(".word {w:#010x} is not an instruction kgen knows{here}")),
    }
}

/// A C preprocessor line marker, `# LINE "FILE" [FLAGS]`: the line and the file.
fn line_marker(l: &str) -> Option<(usize, String)> {
    let rest = l.strip_prefix("# ")?;
    let (num, rest) = rest.split_once(' ')?;
    let n: usize = num.parse().ok()?;
    let file = rest.strip_prefix('"')?;
    let end = file.find('"')?;
    rest[end + 2..].split_whitespace().all(|f| f.parse::<u8>().is_ok()).then(|| (n, file[..end].to_string()))
}

fn assemble_inner(files: &[(&str, &str)], target: &Target, opts: AsmOptions) -> Result<Assembled, AsmError> {
    let mut st = State {
        f: Func::new("__text", target, Abi::Psabi),
        section: ".text".into(),
        rodata: DataObj { name: ".rodata".into(), align: 1, bytes: Vec::new(), elem: 1, global: false, comment: String::new() },
        data_labels: Vec::new(),
        aliases: Vec::new(),
        names: HashMap::new(),
        globals: Vec::new(),
        local_count: HashMap::new(),
        text_labels: Vec::new(),
        sizes: HashMap::new(),
        target,
        relax: true,
        text_align: 4,
        macros: HashMap::new(),
        pending: None,
        expanded: 0,
        invocations: 0,
        rept_body: Vec::new(),
        file_idx: 0,
        rollback: target.vdialect() == Some(VDialect::Thead),
        opts,
        data_relocs: Vec::new(),
        unknown: Vec::new(),
        file_name: String::new(),
    };
    st.f.wipe = false;
    let named = |name: &str, mut e: AsmError| {
        e.file = name.to_string();
        e
    };
    for (k, (name, src)) in files.iter().enumerate() {
        st.file_idx = k;
        st.file_name = name.to_string();
        st.local_count.clear();
        st.section = ".text".into();
        let src = strip_block_comments(src).map_err(|e| named(name, e))?;
        // The C preprocessor's line markers (`# 12 "file.S" 2`) give the lines that follow
        // their place in the source, as GNU as reads them.
        let (mut at_file, mut at_line) = (name.to_string(), 0usize);
        for raw in src.lines() {
            if let Some((n, f)) = line_marker(raw) {
                (at_file, at_line) = (f, n.saturating_sub(1));
                continue;
            }
            at_line += 1;
            process_line(&mut st, raw, at_line, 0).map_err(|e| named(&at_file, e))?;
        }
        if let Some(p) = &st.pending {
            let what = match &p.block {
                Block::Macro(n, _) => format!(".macro {n}"),
                Block::Rept(_) => ".rept".into(),
                Block::Irp(..) => ".irp".into(),
            };
            return Err(named(name, AsmError::at(p.line, format!("{what} is never closed (.endm/.endr missing)"))));
        }
    }
    pad_to_insn(&mut st.f);
    while text_offset(&st.f) % st.text_align != 0 {
        st.f.nop();
    }
    // References to an alias of a code label are references to the label.
    for a in &st.aliases {
        let find = |f: &Func, n: &str| f.labels.iter().position(|l| l.name.as_deref() == Some(n)).map(|i| Label(i as u32));
        if let (Some(from), Some(to)) = (find(&st.f, &a.scoped.0), find(&st.f, &a.scoped.1)) {
            if !st.f.labels[from.0 as usize].bound && st.f.labels[to.0 as usize].bound {
                st.f.labels[from.0 as usize].alias = Some(to);
            }
        }
    }
    st.f.resolve_aliases();
    let mut f = st.f;
    // The builder's end-of-function checks; `ret` here is a plain jalr, so add no Exit.
    for (i, l) in f.labels.iter().enumerate() {
        let used = f.items.iter().any(|it| matches!(it, Item::Inst(x) if x.ops.iter().any(|o| matches!(o, Opnd::Label(k) | Opnd::PcrelLo { anchor: k } if k.0 as usize == i))));
        if used && !l.bound {
            // Local labels are `N$localK@fileF` inside: name them as written, in their file.
            let name = l.name.clone().unwrap_or_default();
            let (shown, file) = match name.split_once("$local") {
                Some((n, rest)) => {
                    let f = rest.split_once("@file").and_then(|(_, f)| f.parse::<usize>().ok()).and_then(|k| files.get(k)).map(|x| x.0);
                    (format!("{n}b/{n}f (a local label)"), f)
                }
                None => (name.clone(), None),
            };
            let file = file.map(str::to_string).unwrap_or_else(|| files.iter().map(|x| x.0).collect::<Vec<_>>().join(", "));
            return Err(named(&file, AsmError::at(0, format!("label `{shown}` is used but never defined"))));
        }
    }
    // A conditional branch out of its ±4 KiB reach becomes the inverted branch over a `jal`,
    // as GNU as relaxes it (compiler output relies on that, all the more without RVC).
    crate::lower::relax_branches(&mut f).map_err(|e| AsmError::at(0, e.to_string()))?;
    let code = assemble(&f).map_err(|e| AsmError::at(0, e.to_string()))?;
    let mut obj = build_object(&[], std::slice::from_ref(&st.rodata));
    obj.symbols.clear();
    for (name, off) in &st.data_labels {
        obj.symbols.push(Symbol { name: name.clone(), section: Section::Rodata, offset: *off, size: 0, global: false, func: false });
    }
    obj.text = code.bytes.clone();
    obj.relocs = code.relocs.clone();
    obj.insts = code.insts.iter().map(|(o, i, _)| (*o, *i)).collect();
    // Offsets of the unknown instructions' placeholders.
    let mut off = 0u32;
    let mut item_off = Vec::with_capacity(f.items.len());
    for it in &f.items {
        item_off.push(off);
        off += match it {
            Item::Inst(_) => 4,
            Item::Data(d) => d.len() as u32,
            _ => 0,
        };
    }
    obj.data_relocs = st.data_relocs.clone();
    obj.unknown = st.unknown.iter().map(|(k, m)| (item_off[*k], m.clone())).collect();
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
    // Aliases, in order (one may name another defined before it); a local (`.L`) code
    // label as the target names its offset.
    for a in &st.aliases {
        let (name, target) = (&a.name, &a.target);
        let err = |m: String| AsmError { file: a.file.clone(), ..AsmError::at(a.line, format!(".set {name}, {target}: {m}")) };
        let local = f.labels.iter().position(|l| l.name.as_deref() == Some(a.scoped.1.as_str()) && l.bound).and_then(|i| code.labels.get(&Label(i as u32)).copied());
        let t = match (syms.iter().find(|s| &s.name == target).cloned(), local) {
            (Some(t), _) => t,
            (None, Some(off)) => Symbol { name: String::new(), section: Section::Text, offset: off, size: 0, global: false, func: true },
            (None, None) if st.names.contains_key(target.as_str()) => return Err(err(format!("`{target}` is a constant defined after this line; define it first"))),
            (None, None) => return Err(err(format!("`{target}` is not a label of these files"))),
        };
        if syms.iter().any(|s| &s.name == name) {
            return Err(err(format!("`{name}` is already defined")));
        }
        syms.push(Symbol { name: name.clone(), global: st.globals.contains(name), ..t });
    }
    obj.symbols = syms;
    f.name = "__text".into();
    Ok(Assembled { object: obj, func: f })
}

/// One source line (from a file or an expansion): collects a pending `.macro`/`.rept`/`.irp`
/// block, or runs the line's statements.
fn process_line(st: &mut State, raw: &str, line: usize, depth: usize) -> Result<(), AsmError> {
    if depth > MAX_EXPANSION_DEPTH {
        return Err(AsmError::at(line, format!("macros nested more than {MAX_EXPANSION_DEPTH} deep")));
    }
    let code = strip_comment(raw).trim();
    let first = code.split(|c: char| c.is_whitespace() || c == ',').next().unwrap_or("");
    if let Some(p) = &mut st.pending {
        match first {
            ".macro" | ".rept" | ".irp" | ".irpc" => p.depth += 1,
            ".endm" | ".endr" => p.depth -= 1,
            _ => {}
        }
        if p.depth > 0 {
            let body = raw.to_string();
            match &mut p.block {
                Block::Macro(_, m) => m.body.push(body),
                _ => st.rept_body.push(body),
            }
            return Ok(());
        }
        let done = st.pending.take().expect("pending checked above");
        return finish_block(st, done, line, depth);
    }
    for stmt in statements(code) {
        statement(st, stmt.trim(), line, depth)?;
        if let Some(e) = st.f.errors.first() {
            return Err(AsmError::at(line, e.reason.clone() + &format!(" (`{}`)", e.inst)));
        }
        if st.pending.is_some() {
            // The rest of a line that opens a block is not part of it.
            break;
        }
    }
    Ok(())
}

/// Runs a closed `.rept`/`.irp` block, or stores a `.macro`.
fn finish_block(st: &mut State, p: Pending, line: usize, depth: usize) -> Result<(), AsmError> {
    let body = std::mem::take(&mut st.rept_body);
    match p.block {
        Block::Macro(name, m) => {
            st.macros.insert(name, m);
            Ok(())
        }
        Block::Rept(n) => {
            for _ in 0..n {
                expand(st, &body, &[], p.line.max(line), depth)?;
            }
            Ok(())
        }
        Block::Irp(var, vals) => {
            for v in &vals {
                expand(st, &body, &[(var.clone(), v.clone())], p.line.max(line), depth)?;
            }
            Ok(())
        }
    }
}

/// Substitutes `\name` (parameters), `\()` (nothing) and `\@` (the invocation count) in
/// `body` and runs its lines; errors name `line` (the invocation).
fn expand(st: &mut State, body: &[String], args: &[(String, String)], line: usize, depth: usize) -> Result<(), AsmError> {
    st.invocations += 1;
    let count = st.invocations.to_string();
    for raw in body {
        st.expanded += 1;
        if st.expanded > MAX_EXPANDED_LINES {
            return Err(AsmError::at(line, format!("macro, .rept and .irp expansion produces more than {MAX_EXPANDED_LINES} lines")));
        }
        let mut out = String::with_capacity(raw.len());
        let mut it = raw.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let rest = &raw[i + 1..];
            if rest.starts_with("()") {
                it.next();
                it.next();
                continue;
            }
            if rest.starts_with('@') {
                it.next();
                out.push_str(&count);
                continue;
            }
            let ident: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            match args.iter().find(|(n, _)| *n == ident) {
                Some((_, v)) if !ident.is_empty() => {
                    out.push_str(v);
                    for _ in 0..ident.chars().count() {
                        it.next();
                    }
                }
                _ => out.push(c),
            }
        }
        process_line(st, &out, line, depth + 1)?;
    }
    Ok(())
}

/// A macro invocation's arguments as GNU as separates them: by commas or blanks, outside
/// parentheses and double quotes; a quoted argument is its text without the quotes (so
/// `",v0.t"` passes `,v0.t`); two commas in a row give an empty argument.
fn macro_args(rest: &str) -> Vec<String> {
    let mut args = Vec::new();
    let (mut cur, mut depth, mut quoted, mut started, mut comma) = (String::new(), 0i32, false, false, false);
    for c in rest.trim().chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            _ if quoted => cur.push(c),
            '(' => {
                depth += 1;
                cur.push(c);
                started = true;
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => {
                if started || comma {
                    args.push(std::mem::take(&mut cur));
                }
                (started, comma) = (false, true);
            }
            c if c.is_whitespace() && depth == 0 => {
                if started {
                    args.push(std::mem::take(&mut cur));
                    (started, comma) = (false, false);
                }
            }
            _ => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started || comma {
        args.push(cur);
    }
    args
}

/// Binds the arguments of a macro invocation to its parameters.
fn bind_args(name: &str, m: &Macro, rest: &str, line: usize) -> Result<Vec<(String, String)>, AsmError> {
    let given = macro_args(rest);
    let mut out = Vec::new();
    let mut k = 0;
    for (pname, default, vararg) in &m.params {
        if *vararg {
            out.push((pname.clone(), given.get(k..).map(|g| g.join(", ")).unwrap_or_default()));
            k = given.len();
            continue;
        }
        let v = match given.get(k) {
            Some(g) => {
                // keyword form `name=value`
                match g.split_once('=') {
                    Some((n, v)) if n.trim() == pname => v.trim().to_string(),
                    _ => g.to_string(),
                }
            }
            None => default.clone().ok_or_else(|| AsmError::at(line, format!("macro `{name}`: argument `{pname}` is missing")))?,
        };
        out.push((pname.clone(), v));
        k += 1;
    }
    if k < given.len() {
        return Err(AsmError::at(line, format!("macro `{name}` takes {} arguments, got {}", m.params.len(), given.len())));
    }
    Ok(out)
}

fn statement(st: &mut State, s: &str, line: usize, depth: usize) -> Result<(), AsmError> {
    let e = |msg: String| AsmError::at(line, msg);
    let mut s = s;
    // labels
    while let Some(colon) = s.find(':') {
        let name = s[..colon].trim();
        if !name_chars(name) {
            break;
        }
        if st.in_text() {
            let l = if let Ok(n) = name.parse::<u32>() {
                let c = st.local_count.entry(n).or_insert(0);
                let l = st.f.named_label(&format!("{n}$local{c}@file{}", st.file_idx));
                *c += 1;
                l
            } else {
                let scoped = st.scoped(name);
                let l = st.f.named_label(&scoped);
                if !name.starts_with(".L") {
                    st.text_labels.push((name.to_string(), l));
                }
                l
            };
            st.f.bind(l);
        } else {
            let scoped = st.scoped(name);
            st.data_labels.push((scoped, st.rodata.bytes.len() as u32));
        }
        s = s[colon + 1..].trim();
    }
    if s.is_empty() {
        return Ok(());
    }
    let (head, rest) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
    let rest = rest.trim();
    if let Some(m) = st.macros.get(head).cloned() {
        let args = bind_args(head, &m, rest, line)?;
        return expand(st, &m.body, &args, line, depth);
    }
    match head {
        ".macro" => {
            let words = macro_args(rest);
            let mut parts = words.iter().map(String::as_str).filter(|p| !p.is_empty());
            let name = parts.next().ok_or_else(|| e(".macro needs a name".into()))?.to_string();
            let mut params = Vec::new();
            for p in parts {
                let (p, vararg) = match p.split_once(':') {
                    Some((n, "vararg")) => (n, true),
                    Some((n, _)) => (n, false),
                    None => (p, false),
                };
                let (n, d) = match p.split_once('=') {
                    Some((n, d)) => (n.to_string(), Some(d.to_string())),
                    None => (p.to_string(), None),
                };
                params.push((n, d, vararg));
            }
            st.pending = Some(Pending { block: Block::Macro(name, Macro { params, body: Vec::new() }), depth: 1, line });
            return Ok(());
        }
        ".rept" => {
            let n = eval_expr(rest, &st.names).ok_or_else(|| e(format!("cannot evaluate `{rest}`")))?;
            if !(0..=MAX_EXPANDED_LINES as i64).contains(&n) {
                return Err(e(format!(".rept count {n} is out of range 0..={MAX_EXPANDED_LINES}")));
            }
            st.pending = Some(Pending { block: Block::Rept(n), depth: 1, line });
            return Ok(());
        }
        ".irp" => {
            let args = split_operands(rest);
            let (var, vals) = args.split_first().ok_or_else(|| e(".irp needs a name".into()))?;
            st.pending = Some(Pending { block: Block::Irp(var.to_string(), vals.iter().map(|v| v.to_string()).collect()), depth: 1, line });
            return Ok(());
        }
        ".endm" | ".endr" => return Err(e(format!("`{head}` without an open block"))),
        ".exitm" => return Err(e("`.exitm` is not supported".into())),
        _ => {}
    }
    if head.starts_with('.') {
        return directive(st, head, rest, line);
    }
    if !st.in_text() {
        return Err(e(format!("instruction `{head}` outside .text")));
    }
    instruction(st, head, rest, line)
}

fn directive(st: &mut State, d: &str, rest: &str, line: usize) -> Result<(), AsmError> {
    let e = |msg: String| AsmError::at(line, msg);
    let args = split_operands(rest);
    let ev = |st: &State, a: &str| eval_expr(a, &st.names).ok_or_else(|| AsmError::at(line, format!("cannot evaluate `{a}`")));
    match d {
        ".text" | ".data" | ".rodata" | ".bss" => {
            st.section = d.to_string();
        }
        ".section" => {
            st.section = args.first().copied().unwrap_or("").trim_matches('"').to_string();
        }
        ".globl" | ".global" | ".weak" => st.globals.extend(args.iter().map(|a| a.to_string())),
        ".comm" | ".lcomm" => {
            // name, size[, align]: zero bytes in the data section.
            let (Some(name), Some(size)) = (args.first(), args.get(1)) else { return Err(e(format!("{d} takes a name and a size"))) };
            let size = ev(st, size)?;
            let align = match args.get(2) {
                Some(a) => ev(st, a)?,
                None => 8,
            };
            if !(0..=MAX_ALIGN).contains(&align) || !(0..=MAX_SECTION_BYTES as i64).contains(&size) {
                return Err(e(format!("{d} {name}: size {size} or alignment {align} out of range")));
            }
            let scoped = st.scoped(name);
            let r = &mut st.rodata;
            while r.bytes.len() as i64 % align.max(1) != 0 {
                r.bytes.push(0);
            }
            r.align = r.align.max(align.max(1) as u32);
            st.data_labels.push((scoped, r.bytes.len() as u32));
            r.bytes.extend(std::iter::repeat_n(0u8, size as usize));
            if d == ".comm" {
                st.globals.push(name.to_string());
            }
        }
        ".option" => match args.first().copied() {
            Some("norelax") => st.relax = false,
            Some("relax") => st.relax = true,
            _ => {}
        },
        ".type" | ".attribute" | ".file" | ".ident" | ".local" | ".hidden" | ".protected" | ".loc" | ".addrsig" | ".addrsig_sym" => {}
        _ if d.starts_with(".cfi_") => {}
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
            // `.set name, .` (+/- a constant): a label at the current location.
            let loc = args[1].replace(' ', "");
            if let Some(off) = loc.strip_prefix('.').filter(|r| r.is_empty() || r.starts_with('+') || r.starts_with('-')) {
                let k = if off.is_empty() { 0 } else { ev(st, off)? };
                let name = st.scoped(args[0]);
                if st.in_text() {
                    if k != 0 {
                        return Err(e(format!("{d} {}, {}: only `.` itself in .text", args[0], args[1])));
                    }
                    let l = st.f.named_label(&name);
                    st.f.bind(l);
                    if !args[0].starts_with(".L") {
                        st.text_labels.push((args[0].to_string(), l));
                    }
                } else {
                    let at = st.rodata.bytes.len() as i64 + k;
                    let at = u32::try_from(at).map_err(|_| e(format!("{d} {}: location {at} is outside the section", args[0])))?;
                    st.data_labels.push((name, at));
                }
                return Ok(());
            }
            // `.set name, symbol`: another name of a label (GNU as resolves it at the end).
            if eval_expr(args[1], &st.names).is_none() && is_symbol_name(args[1]) {
                st.aliases.push(Alias { name: args[0].to_string(), target: args[1].to_string(), scoped: (st.scoped(args[0]), st.scoped(args[1])), line, file: st.file_name.clone() });
                return Ok(());
            }
            let v = ev(st, args[1])?;
            st.names.insert(args[0].to_string(), v);
        }
        ".align" | ".p2align" | ".balign" => {
            let v = ev(st, args.first().copied().unwrap_or("0"))?;
            let bytes = if d == ".balign" { v } else if (0..=16).contains(&v) { 1 << v } else { -1 };
            if !(1..=MAX_ALIGN).contains(&bytes) || bytes & (bytes - 1) != 0 {
                return Err(e(format!("{d} {v}: the alignment must be a power of two up to {MAX_ALIGN}")));
            }
            if st.in_text() {
                st.text_align = st.text_align.max(bytes);
                if bytes > 4 {
                    // Code alignment beyond one instruction, padded with nops as GNU as does:
                    // with linker relaxation on it always emits the worst case (bytes - 4)
                    // and leaves the linker to delete what is not needed; without, exactly.
                    pad_to_insn(&mut st.f);
                    let count = text_offset(&st.f);
                    let mut pad = if st.relax && !st.opts.linked_alignment { bytes - 4 } else { (bytes - count % bytes) % bytes };
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
            if text_offset(&st.f) as usize > MAX_SECTION_BYTES {
                return Err(e(format!(".text would exceed {MAX_SECTION_BYTES} bytes")));
            }
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
                    let inst = decode_word(w, st.target).map_err(e)?;
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
                for a in &args {
                    let v = match eval_expr(a, &st.names) {
                        Some(v) => v,
                        // An address (`.dword sym+8`): filled in by the linker.
                        None if size >= 4 => {
                            let (sym, off) = sym_offset(a, &st.names).ok_or_else(|| e(format!("cannot evaluate `{a}`")))?;
                            let sym = st.scoped(sym);
                            let at = st.rodata.bytes.len() as u32;
                            st.data_relocs.push((at, size as u8, sym, off));
                            0
                        }
                        None => return Err(e(format!("cannot evaluate `{a}`"))),
                    };
                    let dobj = st.data_mut(line)?;
                    dobj.elem = size as u8;
                    dobj.bytes.extend_from_slice(&v.to_le_bytes()[..size]);
                }
            }
        }
        ".zero" | ".space" | ".skip" => {
            let n = ev(st, args.first().copied().unwrap_or("0"))?;
            let fill = match args.get(1) {
                Some(f) => ev(st, f)? as u8,
                None => 0,
            };
            let dobj = st.data_mut(line)?;
            if n < 0 || dobj.bytes.len() as i64 + n > MAX_SECTION_BYTES as i64 {
                return Err(e(format!("{d} {n}: the data would exceed {MAX_SECTION_BYTES} bytes (or the count is negative)")));
            }
            dobj.bytes.extend(std::iter::repeat_n(fill, n as usize));
        }
        ".string" | ".asciz" | ".ascii" => {
            let s = unescape(rest.trim()).ok_or_else(|| e(format!("{d}: `{rest}` is not a string literal")))?;
            let dobj = st.data_mut(line)?;
            dobj.bytes.extend_from_slice(&s);
            if d != ".ascii" {
                dobj.bytes.push(0);
            }
        }
        _ => return Err(e(format!("unknown directive `{d}`"))),
    }
    Ok(())
}

/// A GNU string literal (`"..."` with C escapes), as bytes.
fn unescape(lit: &str) -> Option<Vec<u8>> {
    let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
    let b = inner.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = *b.get(i)?;
        i += 1;
        out.push(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 8,
            b'f' => 12,
            b'\\' => b'\\',
            b'"' => b'"',
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                for _ in 0..2 {
                    match b.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + (d - b'0') as u32;
                            i += 1;
                        }
                        _ => break,
                    }
                }
                v as u8
            }
            b'x' => {
                let st = i;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
                u8::from_str_radix(std::str::from_utf8(&b[st..i]).ok()?.get(..2.min(i - st))?, 16).ok()?
            }
            other => other,
        });
    }
    Some(out)
}

fn reg_of(a: &str, line: usize) -> Result<Reg, AsmError> {
    parse_xreg(a).map(|n| Reg::X(n as u8)).ok_or(AsmError::at(line, format!("`{a}` is not an integer register")))
}

fn instruction(st: &mut State, mn: &str, rest: &str, line: usize) -> Result<(), AsmError> {
    let e = |msg: String| AsmError::at(line, msg);
    let args = split_operands(rest);
    let r = |i: usize| -> Result<Reg, AsmError> { reg_of(args.get(i).copied().unwrap_or(""), line) };
    let names = st.names.clone();
    let ev = |a: &str| eval_expr(a, &names).ok_or_else(|| AsmError::at(line, format!("cannot evaluate `{a}`")));
    let n = args.len();
    // Pseudo-instructions and GNU's short forms.
    match (mn, n) {
        ("li", 2) => {
            st.f.li(r(0)?, ev(args[1])?);
            return Ok(());
        }
        ("la" | "lla", 2) => {
            let (sym, off) = sym_offset(args[1], &names).ok_or_else(|| e(format!("`{}` is not a symbol (+ offset)", args[1])))?;
            let sym = st.scoped(sym);
            st.f.la_off(r(0)?, &sym, off);
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
        ("call" | "tail", 1) => {
            let sym = args[0].strip_suffix("@plt").unwrap_or(args[0]);
            if !name_chars(sym) {
                return Err(e(format!("`{}` is not a symbol", args[0])));
            }
            let sym = st.scoped(sym);
            if mn == "call" {
                st.f.call(&sym);
            } else {
                st.f.tail(&sym);
            }
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
        if st.opts.unknown_as_trap {
            // An all-zero word is illegal in every RISC-V encoding.
            pad_to_insn(&mut st.f);
            let at = if st.file_name.is_empty() { String::new() } else { format!("{}: ", st.file_name) };
            st.unknown.push((st.f.items.len(), format!("{at}line {line}: `{mn} {rest}`, which kgen's ISA table does not have")));
            st.f.items.push(Item::Data(vec![0; 4]));
            return Ok(());
        }
        return Err(e(format!("unknown instruction `{mn}`")));
    };
    // `ld rd, symbol`: a PC-relative load of a symbol's contents (auipc + load).
    let row = table().row(form);
    let load_form = row.class == Class::Load && row.ops.len() == 3 && matches!([row.ops[0].kind, row.ops[1].kind, row.ops[2].kind], [Kind::X, Kind::MemOff(_), Kind::XMem]);
    if load_form && n == 2 && !args[1].ends_with(')') {
        let (sym, off) = sym_offset(args[1], &names).ok_or_else(|| e(format!("`{}` is not a symbol (+ offset) or `offset(reg)`", args[1])))?;
        let sym = st.scoped(sym);
        let rd = r(0)?;
        let anchor = st.f.label();
        st.f.bind(anchor);
        st.f.emit_text("auipc", &[Opnd::Reg(rd), Opnd::PcrelHi { sym, addend: off }]);
        st.f.emit(form, vec![Opnd::Reg(rd), Opnd::PcrelLo { anchor }, Opnd::Reg(rd)], None);
        return Ok(());
    }
    // `sd rs, symbol, rt`: a PC-relative store through the temporary rt.
    let store_form = row.class == Class::Store && row.ops.len() == 3 && matches!([row.ops[0].kind, row.ops[1].kind, row.ops[2].kind], [Kind::X, Kind::MemOff(_), Kind::XMem]);
    if store_form && n == 3 && !args[1].ends_with(')') {
        let (sym, off) = sym_offset(args[1], &names).ok_or_else(|| e(format!("`{}` is not a symbol (+ offset) or `offset(reg)`", args[1])))?;
        let sym = st.scoped(sym);
        let (rs, rt) = (r(0)?, r(2)?);
        let anchor = st.f.label();
        st.f.bind(anchor);
        st.f.emit_text("auipc", &[Opnd::Reg(rt), Opnd::PcrelHi { sym, addend: off }]);
        st.f.emit(form, vec![Opnd::Reg(rs), Opnd::PcrelLo { anchor }, Opnd::Reg(rt)], None);
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

/// `sym`, `sym+4`, `sym-8`: the symbol and the offset.
fn sym_offset<'a>(s: &'a str, names: &HashMap<String, i64>) -> Option<(&'a str, i64)> {
    let s = s.trim();
    let cut = s.char_indices().skip(1).find(|(_, c)| *c == '+' || *c == '-').map(|(i, _)| i);
    let (sym, off) = match cut {
        Some(i) => (s[..i].trim(), eval_expr(&s[i..], names)?),
        None => (s, 0),
    };
    (name_chars(sym) && !sym.starts_with(|c: char| c.is_ascii_digit())).then_some((sym, off))
}

impl State<'_> {
    /// `%pcrel_hi(sym[+off])` (auipc) and `%pcrel_lo(label)` (the addi/load/store after it,
    /// naming the auipc's label), as GNU as reads them; nothing else.
    fn reloc_operand(&mut self, s: &str, mnemonic: &str, line: usize) -> Result<Opnd, AsmError> {
        let inner = |p: &str| s.strip_prefix(p).and_then(|r| r.strip_suffix(')')).map(str::trim);
        if let Some(x) = inner("%pcrel_hi(") {
            if mnemonic != "auipc" {
                return Err(AsmError::at(line, format!("`{s}` belongs in an auipc, not `{mnemonic}`")));
            }
            let (sym, addend) = sym_offset(x, &self.names).ok_or_else(|| AsmError::at(line, format!("`{s}`: `{x}` is not a symbol (+ offset)")))?;
            return Ok(Opnd::PcrelHi { sym: self.scoped(sym), addend });
        }
        if let Some(x) = inner("%pcrel_lo(") {
            if !is_symbol_name(x) && numeric_ref(x).is_none() {
                return Err(AsmError::at(line, format!("`{s}`: `%pcrel_lo` takes the label of its auipc")));
            }
            return Ok(Opnd::PcrelLo { anchor: self.label_for(x) });
        }
        Err(AsmError::at(line, format!("relocation `{s}` is not supported here; use la/lla or %pcrel_hi/%pcrel_lo")))
    }

    fn instr_text(&mut self, mn: &str, rest: &str, line: usize) -> Result<(), AsmError> {
        let form = table().lookup(mn).ok_or(AsmError::at(line, format!("unknown instruction `{mn}`")))?;
        self.instr_form(form, rest, line)
    }

    fn instr_form(&mut self, form: crate::isa::Form, rest: &str, line: usize) -> Result<(), AsmError> {
        let names = self.names.clone();
        let mut eval = |t: &str| eval_expr(t, &names);
        let p = parse_operands_sym(form, rest, &mut eval).map_err(|err| AsmError::at(line, err.0))?;
        let row = table().row(form);
        let mut ops = Vec::with_capacity(p.len());
        for (spec, v) in row.ops.iter().zip(p) {
            ops.push(match (spec.kind, v) {
                (Kind::X | Kind::XMem, POp::Val(n)) => Opnd::Reg(Reg::X(n as u8)),
                (Kind::V(_), POp::Val(n)) => Opnd::Reg(Reg::V(n as u8)),
                (Kind::V0, _) => Opnd::Reg(Reg::V(0)),
                (Kind::Rel(_), POp::Val(off)) => return Err(AsmError::at(line, format!("numeric branch offset {off} is not supported; use a label"))),
                (Kind::Rel(_), POp::Sym(name)) => Opnd::Label(self.label_for(&name)),
                (_, POp::Val(v)) => Opnd::Imm(v),
                (_, POp::Sym(s)) => self.reloc_operand(&s, row.mnemonic, line)?,
            });
        }
        let mut form = form;
        if self.rollback && row.vdialect == Some(VDialect::V1) {
            let (th, how) = table().rollback(form).map_err(|m| AsmError::at(line, format!("{m} (target {} runs RVV 1.0 code as rvv-rollback translates it)", self.target.name)))?;
            match how {
                RollbackOps::Same => {}
                RollbackOps::AppendX0 => ops.push(Opnd::Reg(Reg::X(0))),
                RollbackOps::Vtype(k) => {
                    if let Some(Opnd::Imm(v)) = ops.get_mut(k) {
                        *v = VDialect::rollback_vtype(*v).map_err(|m| AsmError::at(line, format!("`{}`: {m}", row.mnemonic)))?;
                    }
                }
            }
            form = th;
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

/// Made only of the characters of symbol and label names (digits included: `1:`).
fn name_chars(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$')
}

/// A plain symbol name (what `.set NAME, SYMBOL` may alias).
fn is_symbol_name(s: &str) -> bool {
    let s = s.trim();
    name_chars(s) && !s.starts_with(|c: char| c.is_ascii_digit()) && s != "."
}

/// A numeric local label reference, `1b` or `1f`: (number, backward).
fn numeric_ref(name: &str) -> Option<(u32, bool)> {
    let (stem, back) = match name.strip_suffix('b') {
        Some(s) => (s, true),
        None => (name.strip_suffix('f')?, false),
    };
    stem.parse::<u32>().ok().map(|n| (n, back))
}
