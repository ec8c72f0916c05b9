//! What the patches' C is made of: the kernel variants the series builds in, the C
//! condition under which each may run, their declarations from the entry points, and the
//! counting wrappers of a counting build.

use kgen_dsl::entry::Entry;
use kgen_dsl::{Abi, Ext, Module};
use kgen_emit::{Compat, EmitOptions};
use kgen_dsl::entry::symbol_suffix;
use kgen_dsl::kernel::{Kernel, Variant};
use std::collections::BTreeSet;

/// A kernel variant the series builds into OpenSSL (OpenSSL ABI, without the aliases: the
/// dispatchers own the names OpenSSL calls).
pub struct Use {
    pub kernel: &'static Kernel,
    pub variant: &'static Variant,
    pub module: Module,
    /// The entry points the hook's slot calls, in its order.
    pub entries: &'static [&'static Entry],
}

impl Use {
    pub fn new(k: &'static Kernel, variant: &str, entries: &'static [&'static Entry]) -> Result<Use, String> {
        let v = k.variant(variant).ok_or_else(|| format!("openssl-patches: kernel `{}` has no variant `{variant}`", k.name))?;
        let mut module = v.build(Abi::Psabi).map_err(|e| e.to_string())?;
        module.aliases.clear();
        Ok(Use { kernel: k, variant: v, module, entries })
    }

    /// `chacha20-kgen-c906-novector`: the name of the shim and of the assembly it writes.
    pub fn stem(&self) -> String {
        format!("{}-kgen-{}", self.kernel.name, self.variant.name)
    }

    /// `CHACHA20_C906_NOVECTOR`.
    fn tag(&self) -> String {
        format!("{}_{}", self.kernel.name.replace('-', "_"), symbol_suffix(self.variant.name)).to_ascii_uppercase()
    }

    /// The macro that is true when this variant may run: `KGEN_CHACHA20_C906_USABLE()`.
    pub fn usable(&self) -> String {
        format!("KGEN_{}_USABLE()", self.tag())
    }

    /// The extensions beyond RV64GC the module's instructions use.
    pub fn exts(&self) -> BTreeSet<Ext> {
        self.module.exts_used()
    }

    /// `#define KGEN_X_USABLE() (...)`: every extension the code uses is present
    /// (`RISCV_HAS_*`), and a vector unit's VLEN is one the code is built for.
    pub fn usable_define(&self) -> String {
        let mut terms: Vec<String> = self.exts().iter().map(|e| format!("RISCV_HAS_{}()", cap_name(*e))).collect();
        let t = &self.module.target;
        let exts = self.exts();
        for (ext, f) in [(Ext::XTheadVector, "riscv_xtheadvector_vlen()"), (Ext::V, "riscv_vlen()")] {
            if exts.contains(&ext) {
                if t.vlen == t.vlen_max {
                    terms.push(format!("{f} == {}", t.vlen));
                } else {
                    terms.push(format!("{f} >= {} && {f} <= {}", t.vlen, t.vlen_max));
                }
            }
        }
        let cond = if terms.is_empty() { "1".to_string() } else { terms.join(" \\\n        && ") };
        format!(
            "/* kgen {} {}: {} */\n#define {} \\\n    ({cond})",
            self.kernel.name,
            self.variant.name,
            describe_exts(&self.exts(), t),
            self.usable()
        )
    }

    /// The symbol of the module's function for `e`.
    pub fn sym(&self, e: &Entry) -> Result<String, String> {
        self.module.symbol(e)
    }

    /// Whether the module implements `e`.
    pub fn has(&self, e: &Entry) -> bool {
        self.module.of(e).is_some()
    }

    /// The C declaration of the module's function for `e`.
    pub fn decl(&self, e: &Entry) -> Result<String, String> {
        let l = self.module.of(e).ok_or_else(|| self.module.symbol(e).unwrap_err())?;
        Ok(format!("{};", l.c_prototype()))
    }

    /// The perlasm shim that writes the variant's assembly (binutils 2.40: XTheadVector as
    /// `.word`, so Debian 12's and 13's assemblers both take it).
    pub fn shim(&self, base: &str) -> Result<String, String> {
        let o = EmitOptions { command: super::command(base), compat: Compat::Binutils240 };
        let s = kgen_emit::openssl_s(&self.module, &o).map_err(|e| e.to_string())?;
        Ok(kgen_emit::perlasm_shim(&s, &o))
    }
}

/// The capability name of an extension in riscv_arch.def (`XTHEADBB`).
pub fn cap_name(e: Ext) -> String {
    e.name().to_ascii_uppercase()
}

fn describe_exts(exts: &BTreeSet<Ext>, t: &kgen_dsl::target::Target) -> String {
    let mut s: Vec<String> = exts.iter().map(|e| e.name().to_string()).collect();
    if exts.contains(&Ext::XTheadVector) || exts.contains(&Ext::V) {
        s.push(if t.vlen == t.vlen_max { format!("VLEN {}", t.vlen) } else { format!("VLEN {} to {}", t.vlen, t.vlen_max) });
    }
    if s.is_empty() { "RV64GC only".into() } else { s.join(", ") }
}

/// A function a dispatcher calls and counts: a kgen entry point of a variant, or an
/// upstream function with an entry point's prototype under another name.
pub struct Callee {
    pub symbol: String,
    pub entry: &'static Entry,
    /// The variant's name and the extensions it needs (its run-time condition).
    pub variant: &'static str,
    pub exts: BTreeSet<Ext>,
}

impl Callee {
    pub fn of(u: &Use, e: &'static Entry) -> Result<Callee, String> {
        Ok(Callee { symbol: u.sym(e)?, entry: e, variant: u.variant.name, exts: u.exts() })
    }
    /// The name the dispatcher calls: the counting wrapper in a counting build, the
    /// function itself otherwise.
    pub fn call(&self) -> String {
        format!("kgen_{}", self.symbol)
    }
    /// `f(a, b, c)` through the wrapper.
    pub fn call_with_args(&self) -> String {
        let args: Vec<&str> = self.entry.params.iter().map(|p| p.name).collect();
        format!("{}({})", self.call(), args.join(", "))
    }
}

/// The counters of one dispatcher (`tag` unique in its translation unit): counter 0 counts
/// the calls that went to upstream code (`KGEN_UPSTREAM(tag)`), then one per callee. In a
/// counting build each callee gets a static wrapper `kgen_<symbol>` that counts and calls;
/// otherwise `kgen_<symbol>` is the function itself.
pub fn counting_block(tag: &str, kernel: &'static str, callees: &[Callee]) -> (String, Vec<Counter>) {
    let mut counters = vec![Counter { name: format!("{kernel}:upstream"), kernel, variant: None, exts: BTreeSet::new(), by_length: false }];
    counters.extend(callees.iter().map(|c| Counter { name: c.symbol.clone(), kernel, variant: Some(c.variant), exts: c.exts.clone(), by_length: false }));
    let quoted: Vec<String> = counters.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let mut s = String::new();
    s.push_str("#ifdef OPENSSL_KGEN_COUNTERS\n");
    s.push_str(&format!("KGEN_COUNTERS({tag}, {})\n", quoted.join(", ")));
    for (i, c) in callees.iter().enumerate() {
        let proto = c.entry.prototype_named(&c.call(), Abi::Psabi);
        let args: Vec<&str> = c.entry.params.iter().map(|p| p.name).collect();
        let ret = if c.entry.ret.is_value() { "return " } else { "" };
        s.push_str(&format!("static {proto}\n{{\n    KGEN_COUNT({tag}, {});\n    {ret}{}({});\n}}\n", i + 1, c.symbol, args.join(", ")));
    }
    s.push_str("#else\n");
    for c in callees {
        s.push_str(&format!("# define {} {}\n", c.call(), c.symbol));
    }
    s.push_str("#endif");
    (s, counters)
}

/// One counter of a counting build: the line name it reports, and what it counts.
#[derive(Clone, Debug)]
pub struct Counter {
    /// `AES_encrypt_c906`, or `aes:upstream` for the calls that went to upstream code.
    pub name: String,
    pub kernel: &'static str,
    /// The kgen variant whose function it counts (None: upstream's code).
    pub variant: Option<&'static str>,
    /// The extensions beyond RV64GC the variant needs.
    pub exts: BTreeSet<Ext>,
    /// The dispatcher also chooses by length: this function may run where an earlier
    /// variant is usable (for calls shorter than that variant's crossover).
    pub by_length: bool,
}

/// Marks the counter of `symbol` as chosen by length too ([`Counter::by_length`]).
pub fn by_length(counters: &mut [Counter], symbol: &str) {
    for c in counters.iter_mut().filter(|c| c.name == symbol) {
        c.by_length = true;
    }
}

/// A generated C file's opening comment: the generator, the command, then `what`.
pub fn file_comment(base: &str, what: &str) -> String {
    let mut s = format!(
        "/* SPDX-License-Identifier: {} */\n/*\n * Generated by {}; do not edit. Regenerate with:\n *   {}\n",
        kgen_emit::spdx(kgen_dsl::Abi::Psabi),
        kgen_emit::GENERATOR,
        super::command(base)
    );
    for l in super::wrap(what).lines() {
        if l.is_empty() {
            s.push_str(" *\n");
        } else {
            s.push_str(&format!(" * {l}\n"));
        }
    }
    s.push_str(" */");
    s
}

/// A C block comment of wrapped text, indented by `indent`.
pub fn comment(indent: &str, text: &str) -> String {
    let lines: Vec<String> = super::wrap(text).lines().map(str::to_string).collect();
    if lines.len() == 1 && lines[0].len() + indent.len() + 6 <= 80 {
        return format!("{indent}/* {} */", lines[0]);
    }
    let mut s = format!("{indent}/*\n");
    for l in lines {
        if l.is_empty() {
            s.push_str(&format!("{indent} *\n"));
        } else {
            s.push_str(&format!("{indent} * {l}\n"));
        }
    }
    s.push_str(&format!("{indent} */"));
    s
}
