//! GNU-syntax text for instructions: the printer and the single-instruction parser, both
//! driven by the operand kinds of the ISA table.

use crate::isa::hart::csr;
use crate::isa::{table, Form, Inst, Kind, Row, MAX_OPS};
use std::fmt::Write;

/// ABI names of the integer registers.
pub const XNAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4",
    "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
];

/// Parses an integer register name (`a0`, `x10`, `fp`).
pub fn parse_xreg(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(n) = s.strip_prefix('x') {
        if let Ok(n) = n.parse::<i64>() {
            return (0..32).contains(&n).then_some(n);
        }
    }
    if s == "fp" {
        return Some(8);
    }
    XNAMES.iter().position(|&n| n == s).map(|p| p as i64)
}

/// Parses a vector register name (`v0`..`v31`).
pub fn parse_vreg(s: &str) -> Option<i64> {
    let n: i64 = s.trim().strip_prefix('v')?.parse().ok()?;
    (0..32).contains(&n).then_some(n)
}

/// An operand as the printer receives it: a value, or text standing for it (a label, a
/// relocation expression) that the caller supplies.
#[derive(Clone, Debug)]
pub enum Arg {
    Val(i64),
    Text(String),
}

/// `e32, m1, d1` for an XTheadVector vtype immediate.
pub fn vtype_th_text(v: i64) -> String {
    format!("e{}, m{}, d{}", 8 << ((v >> 2) & 7), 1 << (v & 3), 1 << ((v >> 5) & 3))
}

/// `e32, m1, ta, ma` for an RVV 1.0 vtype immediate.
pub fn vtype_text(v: i64) -> String {
    let lmul = v & 7;
    let m = if lmul < 4 { format!("m{}", 1 << lmul) } else { format!("mf{}", 1 << (8 - lmul)) };
    format!(
        "e{}, {m}, {}, {}",
        8 << ((v >> 3) & 7),
        if v & 0x40 != 0 { "ta" } else { "tu" },
        if v & 0x80 != 0 { "ma" } else { "mu" }
    )
}

fn fence_text(v: i64) -> String {
    let mut s = String::new();
    for (bit, c) in [(8, 'i'), (4, 'o'), (2, 'r'), (1, 'w')] {
        if v & bit != 0 {
            s.push(c);
        }
    }
    if s.is_empty() {
        s.push('0');
    }
    s
}

fn csr_text(v: i64) -> String {
    csr::NAMES.iter().find(|(n, _)| *n as i64 == v).map(|(_, s)| s.to_string()).unwrap_or_else(|| format!("{v:#x}"))
}

/// Text of one operand value of kind `k` (without separators).
pub fn operand_text(k: Kind, v: i64) -> String {
    match k {
        Kind::X => XNAMES[v as usize].to_string(),
        Kind::XMem => format!("({})", XNAMES[v as usize]),
        Kind::V(_) => format!("v{v}"),
        Kind::Imm(_) | Kind::MemOff(_) | Kind::Lit(_) => v.to_string(),
        Kind::Rel(_) => {
            if v >= 0 {
                format!(".+{v}")
            } else {
                format!(".{v}")
            }
        }
        Kind::Vm => if v == 0 { "v0.t".into() } else { String::new() },
        Kind::V0 => "v0".into(),
        Kind::VtypeTh => vtype_th_text(v),
        Kind::Vtype => vtype_text(v),
        Kind::Csr => csr_text(v),
        Kind::FenceSet => fence_text(v),
    }
}

/// The operand list of `row` with `args` (GNU syntax).
pub fn operands(row: &Row, args: &[Arg]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < row.ops.len() {
        let k = row.ops[i].kind;
        let text = |a: &Arg, k: Kind| match a {
            Arg::Val(v) => operand_text(k, *v),
            Arg::Text(t) => t.clone(),
        };
        match k {
            Kind::Vm => {
                if let Arg::Val(0) = args[i] {
                    out.push_str(", v0.t");
                }
            }
            Kind::MemOff(_) if i + 1 < row.ops.len() && row.ops[i + 1].kind == Kind::XMem => {
                if !out.is_empty() {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}{}", text(&args[i], k), text(&args[i + 1], Kind::XMem));
                i += 1;
            }
            _ => {
                if !out.is_empty() {
                    out.push_str(", ");
                }
                out.push_str(&text(&args[i], k));
            }
        }
        i += 1;
    }
    out
}

/// `mnemonic operands` for a concrete instruction (branch targets as `.+N`).
/// An instruction shows as its assembly text.
impl std::fmt::Debug for Inst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_inst(self))
    }
}

pub fn print_inst(i: &Inst) -> String {
    let row = i.row();
    let args: Vec<Arg> = i.args().iter().map(|&v| Arg::Val(v)).collect();
    let ops = operands(row, &args);
    if ops.is_empty() {
        row.mnemonic.to_string()
    } else {
        format!("{} {}", row.mnemonic, ops)
    }
}

/// Why a line of assembly could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses an integer literal (decimal, `0x` hex, `0b` binary, optional sign).
pub fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b.trim()),
        None => (false, s.strip_prefix('+').unwrap_or(s).trim()),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if let Some(b) = body.strip_prefix("0b") {
        u64::from_str_radix(b, 2).ok()? as i64
    } else {
        body.parse::<u64>().ok()? as i64
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

fn parse_vtype(toks: &[&str], th: bool) -> Option<i64> {
    let (mut sew, mut lmul, mut ediv, mut ta, mut ma) = (None, 0i64, 0i64, 0i64, 0i64);
    for t in toks {
        let t = t.trim();
        if let Some(e) = t.strip_prefix('e') {
            let e: i64 = e.parse().ok()?;
            sew = Some(match e {
                8 => 0,
                16 => 1,
                32 => 2,
                64 => 3,
                _ => return None,
            });
        } else if let Some(f) = t.strip_prefix("mf") {
            lmul = match f {
                "2" => 7,
                "4" => 6,
                "8" => 5,
                _ => return None,
            };
        } else if let Some(m) = t.strip_prefix('m').filter(|m| m.chars().all(|c| c.is_ascii_digit()) && !m.is_empty()) {
            lmul = match m {
                "1" => 0,
                "2" => 1,
                "4" => 2,
                "8" => 3,
                _ => return None,
            };
        } else if let Some(dv) = t.strip_prefix('d').filter(|_| th) {
            ediv = match dv {
                "1" => 0,
                "2" => 1,
                "4" => 2,
                "8" => 3,
                _ => return None,
            };
        } else {
            match t {
                "ta" => ta = 1,
                "tu" => ta = 0,
                "ma" => ma = 1,
                "mu" => ma = 0,
                _ => return None,
            }
        }
    }
    let sew = sew?;
    Some(if th { lmul | (sew << 2) | (ediv << 5) } else { lmul | (sew << 3) | (ta << 6) | (ma << 7) })
}

/// Splits an operand list at top-level commas.
pub fn split_operands(s: &str) -> Vec<&str> {
    let s = s.trim();
    if s.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// A parsed operand: a value, or a symbolic reference resolved later (a branch target
/// name, or a relocation expression such as `%pcrel_lo(1b)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum POp {
    Val(i64),
    Sym(String),
}

/// Parses the operand text of one instruction of form `form`. `eval` evaluates immediates
/// that are not plain integers (constant expressions); unresolved names become
/// [`POp::Sym`] where the kind allows a symbolic value (branch targets, `%`-relocations).
pub fn parse_operands_sym(form: Form, text: &str, eval: &mut dyn FnMut(&str) -> Option<i64>) -> Result<Vec<POp>, ParseError> {
    let row = table().row(form);
    let toks = split_operands(text);
    let n = row.ops.len();
    let mut vals = vec![POp::Val(0); n];
    let mut t = 0;
    let err = |m: String| ParseError(format!("`{}`: {m}", row.mnemonic));
    let imm = |tok: &str, eval: &mut dyn FnMut(&str) -> Option<i64>, name: &str| -> Result<POp, ParseError> {
        let tok = tok.trim();
        if let Some(v) = parse_int(tok).or_else(|| eval(tok)) {
            Ok(POp::Val(v))
        } else if tok.starts_with('%') {
            Ok(POp::Sym(tok.to_string()))
        } else {
            Err(err(format!("bad immediate `{tok}` for `{name}`")))
        }
    };
    let mut i = 0;
    while i < n {
        let k = row.ops[i].kind;
        let name = row.ops[i].name;
        match k {
            Kind::Vm => {
                if t < toks.len() && toks[t] == "v0.t" {
                    vals[i] = POp::Val(0);
                    t += 1;
                } else {
                    vals[i] = POp::Val(1);
                }
                i += 1;
                continue;
            }
            Kind::Lit(v) if t >= toks.len() => {
                vals[i] = POp::Val(v);
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&tok) = toks.get(t) else {
            return Err(err(format!("missing operand `{name}`")));
        };
        t += 1;
        vals[i] = match k {
            Kind::X => POp::Val(parse_xreg(tok).ok_or_else(|| err(format!("`{tok}` is not an integer register")))?),
            Kind::V(_) => POp::Val(parse_vreg(tok).ok_or_else(|| err(format!("`{tok}` is not a vector register")))?),
            Kind::V0 => {
                if tok != "v0" {
                    return Err(err(format!("expected `v0`, found `{tok}`")));
                }
                POp::Val(0)
            }
            Kind::XMem => {
                let inner = tok
                    .strip_prefix('(')
                    .and_then(|s| s.strip_suffix(')'))
                    .or_else(|| tok.strip_prefix("0(").and_then(|s| s.strip_suffix(')')))
                    .ok_or_else(|| err(format!("expected `(reg)`, found `{tok}`")))?;
                POp::Val(parse_xreg(inner).ok_or_else(|| err(format!("`{inner}` is not an integer register")))?)
            }
            Kind::MemOff(_) => {
                let base_next = i + 1 < n && row.ops[i + 1].kind == Kind::XMem;
                let open = if tok.ends_with(')') && base_next { tok.rfind('(') } else { None };
                match open {
                    Some(p) => {
                        let (off, reg) = (&tok[..p], &tok[p + 1..tok.len() - 1]);
                        vals[i + 1] = POp::Val(parse_xreg(reg).ok_or_else(|| err(format!("`{reg}` is not an integer register")))?);
                        let v = if off.trim().is_empty() { POp::Val(0) } else { imm(off, eval, name)? };
                        vals[i] = v;
                        i += 2;
                        continue;
                    }
                    None if base_next => return Err(err(format!("expected `offset(reg)`, found `{tok}`"))),
                    None => imm(tok, eval, name)?,
                }
            }
            Kind::Imm(_) | Kind::Lit(_) => imm(tok, eval, name)?,
            Kind::Rel(_) => match tok.strip_prefix('.').and_then(parse_int) {
                Some(o) => POp::Val(o),
                None => POp::Sym(tok.to_string()),
            },
            Kind::VtypeTh | Kind::Vtype => {
                let th = k == Kind::VtypeTh;
                let mut parts = vec![tok];
                while t < toks.len() {
                    let p = toks[t];
                    let is_vt = p.starts_with('e') && p.len() > 1 && p[1..].chars().all(|c| c.is_ascii_digit())
                        || p.starts_with('m') && p.len() <= 3
                        || (th && p.starts_with('d') && p.len() == 2)
                        || matches!(p, "ta" | "tu" | "ma" | "mu");
                    if !is_vt {
                        break;
                    }
                    parts.push(p);
                    t += 1;
                }
                POp::Val(if let (true, Some(v)) = (parts.len() == 1, parse_int(tok)) {
                    v
                } else {
                    parse_vtype(&parts, th).ok_or_else(|| err(format!("bad vtype `{}`", parts.join(","))))?
                })
            }
            Kind::Csr => POp::Val(
                csr::NAMES
                    .iter()
                    .find(|(_, s)| *s == tok)
                    .map(|(n, _)| *n as i64)
                    .or_else(|| parse_int(tok))
                    .ok_or_else(|| err(format!("unknown CSR `{tok}`")))?,
            ),
            Kind::FenceSet => {
                let mut v = 0;
                if tok != "0" {
                    for c in tok.chars() {
                        v |= match c {
                            'i' => 8,
                            'o' => 4,
                            'r' => 2,
                            'w' => 1,
                            _ => return Err(err(format!("bad fence set `{tok}`"))),
                        };
                    }
                }
                POp::Val(v)
            }
            Kind::Vm => unreachable!(),
        };
        i += 1;
    }
    if t < toks.len() {
        return Err(err(format!("unexpected operand `{}`", toks[t])));
    }
    for (j, v) in vals.iter().enumerate() {
        if let POp::Val(v) = v {
            row.check_operand(j, *v).map_err(|e| ParseError(e.to_string()))?;
        }
    }
    if vals.iter().all(|v| matches!(v, POp::Val(_))) {
        let concrete: Vec<i64> = vals.iter().map(|v| if let POp::Val(x) = v { *x } else { 0 }).collect();
        row.check_rules(&concrete).map_err(|e| ParseError(e.to_string()))?;
    }
    Ok(vals)
}

/// Parses operands into a concrete instruction; `rel` resolves symbolic branch targets to
/// byte offsets, `imm` evaluates non-literal immediates.
pub fn parse_operands(
    form: Form,
    text: &str,
    rel: &mut dyn FnMut(&str) -> Option<i64>,
    imm: &mut dyn FnMut(&str) -> Option<i64>,
) -> Result<Inst, ParseError> {
    let row = table().row(form);
    let p = parse_operands_sym(form, text, imm)?;
    let mut ops = [0i64; MAX_OPS];
    for (j, v) in p.iter().enumerate() {
        ops[j] = match v {
            POp::Val(x) => *x,
            POp::Sym(s) => rel(s).ok_or_else(|| ParseError(format!("`{}`: unknown target `{s}`", row.mnemonic)))?,
        };
        row.check_operand(j, ops[j]).map_err(|e| ParseError(e.to_string()))?;
    }
    row.check_rules(&ops[..p.len()]).map_err(|e| ParseError(e.to_string()))?;
    Ok(Inst { form, ops })
}

/// Parses `mnemonic operands` with numeric targets only (`.+8`).
pub fn parse_inst(line: &str) -> Result<Inst, ParseError> {
    let line = line.trim();
    let (mn, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let form = table().lookup(mn).ok_or_else(|| ParseError(format!("unknown mnemonic `{mn}`")))?;
    parse_operands(form, rest, &mut |_| None, &mut |_| None)
}
