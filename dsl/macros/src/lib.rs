//! `kasm!`: assembly-like lines with Rust interpolation, turned into kgen builder calls.
//!
//! ```text
//! kasm!(f,
//!     th.extu {t}, {s}, 15, 8;        // instruction; `{expr}` interpolates a Rust value
//!     th.lrwu {t}, {te0}, {t}, 2;
//!     lw {x}, 16({key});              // offset(base); `{off}({base})` also works
//! loop_top:                           // a label (function-local name)
//!     addi {n}, {n}, -1;
//!     bnez {n}, loop_top;             // pseudo-instructions map to builder methods
//! );
//! ```
//!
//! The mnemonic, the operand count, literal registers (class) and literal immediates
//! (range) are checked here against kgen's ISA table, with errors at the offending token.
//! Interpolated values are checked when the builder runs.

use kgen_dsl::isa::{table, Kind, Row};
use kgen_dsl::text::{parse_vreg, parse_xreg};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{braced, parenthesized, Expr, Ident, LitInt, Token};

/// One operand as written.
enum Operand {
    /// `{expr}`
    Interp(Expr, Span),
    /// integer literal, possibly negated
    Int(i64, Span),
    /// identifier path: `a0`, `v0.t`, `e32`, `loop_top`
    Name(String, Span),
    /// `off(base)`, `{off}({base})`, `(base)`
    Mem(Option<Box<Operand>>, Box<Operand>, Span),
}

impl Operand {
    fn span(&self) -> Span {
        match self {
            Operand::Interp(_, s) | Operand::Int(_, s) | Operand::Name(_, s) | Operand::Mem(_, _, s) => *s,
        }
    }
}

enum Stmt {
    Label(Ident),
    Inst { mnemonic: String, span: Span, ops: Vec<Operand>, end: Span },
}

struct Input {
    builder: Expr,
    stmts: Vec<Stmt>,
}

fn parse_simple(input: ParseStream) -> syn::Result<Operand> {
    if input.peek(syn::token::Brace) {
        let content;
        let b = braced!(content in input);
        let e: Expr = content.parse()?;
        return Ok(Operand::Interp(e, b.span.join()));
    }
    if input.peek(Token![-]) || input.peek(LitInt) {
        let neg = input.parse::<Option<Token![-]>>()?.is_some();
        let lit: LitInt = input.parse()?;
        let v: i128 = lit.base10_parse()?;
        let v = if neg { -v } else { v };
        if v < i64::MIN as i128 || v > u64::MAX as i128 {
            return Err(syn::Error::new(lit.span(), "integer does not fit 64 bits"));
        }
        return Ok(Operand::Int(v as i64, lit.span()));
    }
    if input.peek(Ident) {
        let id: Ident = input.parse()?;
        let mut name = id.to_string();
        let span = id.span();
        while input.peek(Token![.]) && input.peek2(Ident) {
            input.parse::<Token![.]>()?;
            let more: Ident = input.parse()?;
            name.push('.');
            name.push_str(&more.to_string());
        }
        return Ok(Operand::Name(name, span));
    }
    Err(input.error("expected an operand: a register, an integer, a label, `{expr}` or `off(base)`"))
}

fn parse_operand(input: ParseStream) -> syn::Result<Operand> {
    if input.peek(syn::token::Paren) {
        let content;
        let p = parenthesized!(content in input);
        let base = parse_simple(&content)?;
        return Ok(Operand::Mem(None, Box::new(base), p.span.join()));
    }
    let first = parse_simple(input)?;
    if input.peek(syn::token::Paren) {
        let content;
        let p = parenthesized!(content in input);
        let base = parse_simple(&content)?;
        let span = first.span();
        return Ok(Operand::Mem(Some(Box::new(first)), Box::new(base), span.join(p.span.join()).unwrap_or(span)));
    }
    Ok(first)
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let builder: Expr = input.parse()?;
        input.parse::<Token![,]>()?;
        let mut stmts = Vec::new();
        while !input.is_empty() {
            // label?
            if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                let id: Ident = input.parse()?;
                input.parse::<Token![:]>()?;
                stmts.push(Stmt::Label(id));
                continue;
            }
            let first: Ident = input.parse().map_err(|e| syn::Error::new(e.span(), "expected a mnemonic or a label"))?;
            let mut mnemonic = first.to_string();
            let mut span = first.span();
            while input.peek(Token![.]) {
                input.parse::<Token![.]>()?;
                let part: TokenTree = input.parse()?;
                mnemonic.push('.');
                mnemonic.push_str(&part.to_string());
                span = span.join(part.span()).unwrap_or(span);
            }
            let mut ops = Vec::new();
            if !input.peek(Token![;]) {
                loop {
                    ops.push(parse_operand(input)?);
                    if input.peek(Token![,]) {
                        input.parse::<Token![,]>()?;
                        continue;
                    }
                    break;
                }
            }
            let semi: Token![;] = input.parse().map_err(|e| syn::Error::new(e.span(), "expected `,` or `;` after an operand"))?;
            stmts.push(Stmt::Inst { mnemonic, span, ops, end: semi.span });
        }
        Ok(Input { builder, stmts })
    }
}

fn err(span: Span, msg: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, msg)
}

/// Builder expression for a register operand.
fn reg_tokens(op: &Operand, vector: bool) -> syn::Result<TokenStream> {
    match op {
        Operand::Interp(e, s) => Ok(quote_spanned!(*s=> ::kgen_dsl::Opnd::from(#e))),
        Operand::Name(n, s) => {
            if vector {
                match parse_vreg(n) {
                    Some(v) => {
                        let v = v as u8;
                        Ok(quote!(::kgen_dsl::Opnd::Reg(::kgen_dsl::Reg::V(#v))))
                    }
                    None if parse_xreg(n).is_some() => Err(err(*s, format!("`{n}` is an integer register; this operand needs a vector register"))),
                    None => Err(err(*s, format!("`{n}` is not a vector register"))),
                }
            } else {
                match parse_xreg(n) {
                    Some(v) => {
                        let v = v as u8;
                        Ok(quote!(::kgen_dsl::Opnd::Reg(::kgen_dsl::Reg::X(#v))))
                    }
                    None if parse_vreg(n).is_some() => Err(err(*s, format!("`{n}` is a vector register; this operand needs an integer register"))),
                    None => Err(err(*s, format!("`{n}` is not an integer register"))),
                }
            }
        }
        other => Err(err(other.span(), "expected a register")),
    }
}

/// Builder expression for an immediate operand; literals are range-checked against the row.
fn imm_tokens(op: &Operand, row: &Row, idx: usize) -> syn::Result<TokenStream> {
    match op {
        Operand::Interp(e, s) => Ok(quote_spanned!(*s=> ::kgen_dsl::Opnd::from(#e))),
        Operand::Int(v, s) => {
            row.check_operand(idx, *v).map_err(|e| err(*s, format!("`{}` operand `{}`: {}", e.mnemonic, e.operand, e.reason)))?;
            Ok(quote!(::kgen_dsl::Opnd::Imm(#v)))
        }
        other => Err(err(other.span(), format!("operand `{}` needs an integer or `{{expr}}`", row.ops[idx].name))),
    }
}

fn vtype_value(parts: &[(String, Span)], th: bool, span: Span) -> syn::Result<i64> {
    let text: Vec<&str> = parts.iter().map(|(s, _)| s.as_str()).collect();
    let joined = text.join(", ");
    // Reuse the text parser's vtype reading through a one-operand parse of vsetvli.
    let mn = if th { "th.vsetvli" } else { "vsetvli" };
    let form = table().form(mn);
    let inst = kgen_dsl::text::parse_operands(form, &format!("zero, zero, {joined}"), &mut |_| None, &mut |_| None)
        .map_err(|e| err(span, format!("bad vtype `{joined}`: {e}")))?;
    Ok(inst.ops[2])
}

fn is_vtype_word(s: &str, th: bool) -> bool {
    (s.starts_with('e') && s[1..].chars().all(|c| c.is_ascii_digit()) && s.len() > 1)
        || (s.starts_with('m') && s.len() <= 3 && s.len() > 1)
        || (th && s.starts_with('d') && s.len() == 2)
        || matches!(s, "ta" | "tu" | "ma" | "mu")
}

fn expand_inst(f: &Ident, mnemonic: &str, span: Span, ops: &[Operand], end: Span) -> syn::Result<TokenStream> {
    // Pseudo-instructions.
    if let Some((_, shape)) = kgen_dsl::PSEUDOS.iter().find(|(m, _)| *m == mnemonic) {
        if ops.len() != shape.len() {
            return Err(err(span, format!("`{mnemonic}` takes {} operands, got {}", shape.len(), ops.len())));
        }
        let mut args = Vec::new();
        for (c, op) in shape.chars().zip(ops) {
            args.push(match c {
                'r' => {
                    let t = reg_tokens(op, false)?;
                    quote!(match #t { ::kgen_dsl::Opnd::Reg(r) => r, _ => unreachable!() })
                }
                'i' => match op {
                    // Any integer type (an i64 is cast to itself: allowed).
                    Operand::Interp(e, s) => quote_spanned!(*s=> {
                        #[allow(clippy::unnecessary_cast)]
                        let v = (#e) as i64;
                        v
                    }),
                    Operand::Int(v, _) => quote!(#v),
                    o => return Err(err(o.span(), "expected an integer")),
                },
                'l' => match op {
                    Operand::Interp(e, s) => quote_spanned!(*s=> #e),
                    Operand::Name(n, _) => quote!(#f.named_label(#n)),
                    o => return Err(err(o.span(), "expected a label")),
                },
                's' => match op {
                    Operand::Interp(e, s) => quote_spanned!(*s=> &(#e)),
                    Operand::Name(n, _) => quote!(#n),
                    o => return Err(err(o.span(), "expected a symbol")),
                },
                _ => unreachable!(),
            });
        }
        let method = Ident::new(&mnemonic.replace('.', "_"), span);
        let names: Vec<Ident> = (0..args.len()).map(|k| Ident::new(&format!("__kgen_a{k}"), Span::mixed_site())).collect();
        let call = if mnemonic == "ret" { quote!(#f.ret()) } else { quote!(#f.#method(#(#names),*)) };
        return Ok(quote_spanned!(span=> { #f.at(file!(), line!()); #(let #names = #args;)* #call; }));
    }
    let Some(form) = table().lookup(mnemonic) else {
        return Err(err(span, format!("unknown instruction `{mnemonic}`")));
    };
    let row = table().row(form);
    let mut out = Vec::new();
    let mut k = 0; // written operand cursor
    let mut i = 0;
    while i < row.ops.len() {
        let spec = row.ops[i];
        match spec.kind {
            Kind::Vm => {
                let masked = matches!(ops.get(k), Some(Operand::Name(n, _)) if n == "v0.t");
                if masked {
                    k += 1;
                }
                let v: i64 = if masked { 0 } else { 1 };
                out.push(quote!(::kgen_dsl::Opnd::Imm(#v)));
                i += 1;
                continue;
            }
            Kind::Lit(v) if k >= ops.len() => {
                out.push(quote!(::kgen_dsl::Opnd::Imm(#v)));
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(op) = ops.get(k) else {
            return Err(err(end, format!("`{mnemonic}` is missing operand `{}` ({} operands expected)", spec.name, row.ops.len())));
        };
        k += 1;
        match spec.kind {
            Kind::X | Kind::XMem | Kind::V(_) => {
                let op = match op {
                    Operand::Mem(None, base, _) if spec.kind == Kind::XMem => base.as_ref(),
                    o => o,
                };
                out.push(reg_tokens(op, matches!(spec.kind, Kind::V(_)))?);
            }
            Kind::MemOff(_) => match op {
                Operand::Mem(off, base, _) if i + 1 < row.ops.len() && row.ops[i + 1].kind == Kind::XMem => {
                    let o = match off {
                        Some(o) => imm_tokens(o, row, i)?,
                        None => quote!(::kgen_dsl::Opnd::Imm(0)),
                    };
                    out.push(o);
                    out.push(reg_tokens(base, false)?);
                    i += 1;
                }
                other => return Err(err(other.span(), format!("`{mnemonic}` needs `offset(base)` here"))),
            },
            Kind::Imm(_) | Kind::Lit(_) => out.push(imm_tokens(op, row, i)?),
            Kind::Rel(_) => match op {
                Operand::Name(n, _) => out.push(quote!(::kgen_dsl::Opnd::Label(#f.named_label(#n)))),
                Operand::Interp(e, s) => out.push(quote_spanned!(*s=> ::kgen_dsl::Opnd::from(#e))),
                o => return Err(err(o.span(), "expected a label")),
            },
            Kind::V0 => match op {
                Operand::Name(n, _) if n == "v0" => out.push(quote!(::kgen_dsl::Opnd::Reg(::kgen_dsl::Reg::V(0)))),
                o => return Err(err(o.span(), "this operand must be `v0`")),
            },
            Kind::VtypeTh | Kind::Vtype => {
                let th = spec.kind == Kind::VtypeTh;
                match op {
                    Operand::Interp(e, s) => out.push(quote_spanned!(*s=> ::kgen_dsl::Opnd::from(#e))),
                    Operand::Name(n, s) => {
                        let mut parts = vec![(n.clone(), *s)];
                        while let Some(Operand::Name(n2, s2)) = ops.get(k) {
                            if !is_vtype_word(n2, th) {
                                break;
                            }
                            parts.push((n2.clone(), *s2));
                            k += 1;
                        }
                        let v = vtype_value(&parts, th, *s)?;
                        out.push(quote!(::kgen_dsl::Opnd::Imm(#v)));
                    }
                    o => out.push(imm_tokens(o, row, i)?),
                }
            }
            Kind::Csr => match op {
                Operand::Name(n, s) => {
                    let v = kgen_dsl::isa::hart::csr::NAMES
                        .iter()
                        .find(|(_, name)| name == n)
                        .map(|(v, _)| *v as i64)
                        .ok_or_else(|| err(*s, format!("unknown CSR `{n}`")))?;
                    out.push(quote!(::kgen_dsl::Opnd::Imm(#v)));
                }
                o => out.push(imm_tokens(o, row, i)?),
            },
            Kind::FenceSet => match op {
                Operand::Name(n, s) => {
                    let mut v = 0i64;
                    for c in n.chars() {
                        v |= match c {
                            'i' => 8,
                            'o' => 4,
                            'r' => 2,
                            'w' => 1,
                            _ => return Err(err(*s, format!("bad fence set `{n}`"))),
                        };
                    }
                    out.push(quote!(::kgen_dsl::Opnd::Imm(#v)));
                }
                o => out.push(imm_tokens(o, row, i)?),
            },
            Kind::Vm => unreachable!(),
        }
        i += 1;
    }
    if k < ops.len() {
        return Err(err(ops[k].span(), format!("`{mnemonic}` takes {} operands; this one is extra", row.ops.len())));
    }
    let names: Vec<Ident> = (0..out.len()).map(|k| Ident::new(&format!("__kgen_o{k}"), Span::mixed_site())).collect();
    Ok(quote_spanned!(span=> { #f.at(file!(), line!()); #(let #names = #out;)* #f.inst(#mnemonic, &[#(#names),*]); }))
}

/// Assembly-like lines with `{expr}` interpolation; see the crate documentation.
#[proc_macro]
pub fn kasm(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let Input { builder, stmts } = match syn::parse::<Input>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error().into(),
    };
    let f = Ident::new("__kgen_f", Span::mixed_site());
    let mut body = Vec::new();
    for s in &stmts {
        match s {
            Stmt::Label(id) => {
                let n = id.to_string();
                body.push(quote_spanned!(id.span()=> { let __l = #f.named_label(#n); #f.bind(__l); }));
            }
            Stmt::Inst { mnemonic, span, ops, end } => match expand_inst(&f, mnemonic, *span, ops, *end) {
                Ok(t) => body.push(t),
                Err(e) => return e.to_compile_error().into(),
            },
        }
    }
    let bspan = builder.span();
    quote_spanned!(bspan=> {
        let #f: &mut ::kgen_dsl::Func = (#builder).kasm_func();
        #(#body)*
    })
    .into()
}
