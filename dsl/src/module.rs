//! A module: the lowered functions and read-only data of one kernel variant for one target
//! and ABI — what every emitter (OpenSSL/Linux/Go assembly, ELF, JIT) and the simulator
//! consume.

use crate::abi::Abi;
use crate::check::{check_func_with, Finding};
use crate::entry::Entry;
use std::collections::HashMap;
use crate::ir::{BuildError, Func};
use crate::lower::lower;
use crate::ir::Frame;
use crate::object::{assemble, build_object, Code, DataObj, Object};
use crate::target::Target;

/// A function after lowering, with its frame.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub func: Func,
    pub frame: Frame,
    pub global: bool,
    /// Instructions in the body before lowering (for reports).
    pub body_insts: usize,
    /// What the checks found: declared leaks only (a module with an error is not built).
    pub findings: Vec<Finding>,
}

impl Lowered {
    /// `ret name(type a, type b)`, from the function's entry point (or its arguments).
    pub fn c_prototype(&self) -> String {
        let f = &self.func;
        if let Some(e) = f.entry {
            return e.prototype_named(&f.name, f.abi);
        }
        let args: Vec<String> = f.args.iter().map(|a| format!("{} {}", a.ty.c(f.abi), a.name)).collect();
        format!("{} {}({})", f.result.c_in(f.abi), f.name, if args.is_empty() { "void".into() } else { args.join(", ") })
    }
}

#[derive(Clone, Debug)]
pub struct Module {
    pub kernel: String,
    pub variant: String,
    pub target: Target,
    pub abi: Abi,
    pub funcs: Vec<Lowered>,
    pub data: Vec<DataObj>,
    /// Lines for the file header (what the kernel computes, its constant-time status...).
    pub notes: Vec<String>,
    /// Extra global names for functions: (alias, function).
    pub aliases: Vec<(String, String)>,
}

impl Module {
    pub fn new(kernel: &str, variant: &str, target: &Target, abi: Abi) -> Module {
        Module {
            kernel: kernel.into(),
            variant: variant.into(),
            target: target.clone(),
            abi,
            funcs: Vec::new(),
            data: Vec::new(),
            notes: Vec::new(),
            aliases: Vec::new(),
        }
    }

    /// Finishes, lowers, checks and adds a function. The first check that fails (see
    /// [`crate::check`]) is the error, naming the kernel, the instruction and the reason.
    /// Data the function addresses must be added first (the checks use its alignment).
    pub fn add(&mut self, f: Func, global: bool) -> Result<(), BuildError> {
        let refuse = |reason: String| BuildError { func: format!("{} {} ({}): {}", self.kernel, self.variant, self.abi, f.name), inst: String::new(), index: None, loc: None, reason };
        if f.abi != self.abi {
            return Err(refuse(format!("the function is built for the {} ABI; the module is for the {} ABI", f.abi, self.abi)));
        }
        if self.funcs.iter().any(|l| l.func.name == f.name) || self.data.iter().any(|d| d.name == f.name) {
            return Err(refuse(format!("the module already has a symbol `{}`", f.name)));
        }
        let mut f = f.finish()?;
        let body_insts = f.inst_count();
        let frame = lower(&mut f)?;
        let findings = check_func_with(&f, self.abi, &self.data_alignments());
        let errors: Vec<&Finding> = findings.iter().filter(|x| !x.declared).collect();
        if let Some(e) = errors.first() {
            let more = if errors.len() > 1 { format!(" (and {} more)", errors.len() - 1) } else { String::new() };
            return Err(BuildError {
                func: format!("{} {} ({}): {}", self.kernel, self.variant, self.abi, e.func),
                inst: e.inst.clone(),
                index: Some(e.index),
                loc: None,
                reason: format!("check {:?} failed: {}{more}", e.check, e.msg),
            });
        }
        if let Some(a) = f.entry.and_then(|e| e.alias_in(self.abi)) {
            self.aliases.push((a.to_string(), f.name.clone()));
        }
        self.funcs.push(Lowered { func: f, frame, global, body_insts, findings });
        Ok(())
    }

    /// Whether any function's checks found a declared leak (code that is not constant time
    /// and says so).
    pub fn declares_leaks(&self) -> bool {
        self.funcs.iter().any(|l| l.findings.iter().any(|x| x.declared))
    }

    /// The alignment of each data object (what the checks know of `la` addresses).
    pub fn data_alignments(&self) -> HashMap<String, u32> {
        self.data.iter().map(|d| (d.name.clone(), d.align)).collect()
    }

    pub fn add_data(&mut self, d: DataObj) {
        self.data.push(d);
    }

    /// Encodes every function.
    pub fn codes(&self) -> Result<Vec<Code>, BuildError> {
        self.funcs.iter().map(|l| assemble(&l.func)).collect()
    }

    /// The module as an object (aliases become extra symbols).
    pub fn object(&self) -> Result<Object, BuildError> {
        let codes = self.codes()?;
        let pairs: Vec<(Code, bool)> = codes.into_iter().zip(&self.funcs).map(|(c, l)| (c, l.global)).collect();
        let mut o = build_object(&pairs, &self.data);
        for (alias, f) in &self.aliases {
            if let Some(s) = o.symbols.iter().find(|s| &s.name == f).cloned() {
                o.symbols.push(crate::object::Symbol { name: alias.clone(), global: true, ..s });
            }
        }
        Ok(o)
    }

    /// The extensions the module's instructions use beyond RV64GC itself (for each
    /// instruction, the first extension of its row that the target has).
    pub fn exts_used(&self) -> std::collections::BTreeSet<crate::Ext> {
        use crate::Ext::*;
        const BASE: [crate::Ext; 8] = [I, M, A, F, D, C, Zicsr, Zifencei];
        let mut used = std::collections::BTreeSet::new();
        for l in &self.funcs {
            for it in &l.func.items {
                if let crate::ir::Item::Inst(i) = it {
                    if let Some(e) = i.row().ext.iter().find(|e| self.target.exts.contains(*e)) {
                        if !BASE.contains(&e) {
                            used.insert(e);
                        }
                    }
                }
            }
        }
        used
    }

    pub fn func(&self, name: &str) -> Option<&Lowered> {
        self.funcs.iter().find(|l| l.func.name == name)
    }

    /// The function implementing entry point `e`.
    pub fn of(&self, e: &Entry) -> Option<&Lowered> {
        self.funcs.iter().find(|l| l.func.entry.is_some_and(|x| std::ptr::eq(x, e) || x == e))
    }

    /// The symbol of the function implementing `e` (an error naming the entry if the module
    /// has none).
    pub fn symbol(&self, e: &Entry) -> Result<String, String> {
        self.of(e).map(|l| l.func.name.clone()).ok_or_else(|| {
            format!("{} {} ({} ABI) has no function for entry point {}", self.kernel, self.variant, self.abi, e.symbol(&self.variant))
        })
    }
}
