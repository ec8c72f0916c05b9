//! What a kernel tells kgen's commands. A [`Kernel`] names its variants (how each is built
//! for a target and an ABI) and its entry points, and carries everything the commands need
//! to know about it: how `kgen bench` measures it ([`Bench`]), its known answers
//! (`kgen jit-run` and the tests' native and QEMU runs, [`kat`]), the calls the
//! cycle-accurate RTL runs ([`rtl`]) and which hooks of OpenSSL and golang.org/x/crypto it
//! fills ([`hooks`]). A kernel without one of these simply has none: the commands that need
//! it say so for that kernel alone.
//!
//! A crate outside kgen describes its kernels with these types and hands them to
//! `kgen::cli::run`, which gives it every command of the `kgen` tool.

pub mod hooks;
pub mod kat;
pub mod rtl;

use crate::entry::Entry;
use crate::target::{target, Target};
use crate::{Abi, BuildError, Module};

/// One way to build a kernel (for example `c906`: T-Head extensions).
#[derive(Clone, Copy)]
pub struct Variant {
    pub name: &'static str,
    /// Target profile the variant is built for ([`crate::target::targets`]).
    pub target: &'static str,
    /// ABIs it can be emitted for.
    pub abis: &'static [Abi],
    /// Builds the variant (its name, for symbols) for a target and an ABI.
    pub build: fn(&str, &Target, Abi) -> Result<Module, BuildError>,
    /// The VLENs an RVV 1.0 variant is correct for (and tested at); empty: the target's
    /// own (none, or the C906's fixed 128).
    pub vlens: &'static [usize],
}

impl Variant {
    /// The variant's target profile, with the VLEN range the variant supports; an error
    /// naming the target if no profile has that name.
    pub fn try_target(&self) -> Result<Target, String> {
        let mut t = target(self.target).ok_or_else(|| format!("variant `{}` names an unknown target `{}`", self.name, self.target))?;
        if let (Some(&lo), Some(&hi)) = (self.vlens.iter().min(), self.vlens.iter().max()) {
            t.vlen = lo;
            t.vlen_max = hi;
        }
        Ok(t)
    }

    /// As [`Variant::try_target`], for variants whose target is known to exist (every
    /// kernel's variants are checked by [`Kernel::validate`]).
    pub fn target(&self) -> Target {
        self.try_target().expect("variant names a known target")
    }

    /// Builds the variant for its own target.
    pub fn build(&self, abi: Abi) -> Result<Module, BuildError> {
        let t = self.try_target().map_err(|reason| BuildError { func: self.name.into(), inst: String::new(), index: None, loc: None, reason })?;
        (self.build)(self.name, &t, abi)
    }
}

/// A kernel: its variants, entry points and what the commands need to know about it.
#[derive(Clone, Copy)]
pub struct Kernel {
    pub name: &'static str,
    pub summary: &'static str,
    pub variants: &'static [Variant],
    /// Every entry point the kernel's modules implement (for look-ups by symbol).
    pub entries: &'static [&'static Entry],
    /// How `kgen bench` measures it, one row per module kind (the OpenSSL build, the Go
    /// build, a companion module); empty: no benchmark.
    pub benches: &'static [Bench],
    /// Its known-answer checks for a variant (OpenSSL ABI); `None`: none.
    pub kat: Option<fn(&str) -> Result<kat::Plan, String>>,
    /// The calls the cycle-accurate C906 RTL runs for `kgen bench --rtl` (scalar variants),
    /// measuring what [`Kernel::benches`]' OpenSSL-ABI driver measures; `None`: none.
    pub rtl: Option<fn(&str, &[usize]) -> Result<rtl::Plan, String>>,
    /// The hooks of upstream projects the kernel fills.
    pub hooks: &'static [hooks::Hook],
}

impl Kernel {
    /// A kernel with no benchmark, known answers, RTL plan or hooks (add them with struct
    /// update syntax: `Kernel { kat: Some(plan), ..Kernel::new(...) }`).
    pub const fn new(name: &'static str, summary: &'static str, variants: &'static [Variant], entries: &'static [&'static Entry]) -> Kernel {
        Kernel { name, summary, variants, entries, benches: &[], kat: None, rtl: None, hooks: &[] }
    }

    pub fn variant(&self, name: &str) -> Option<&'static Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// The benchmark of modules of `abi` (the variant's own build), if the kernel has one.
    pub fn bench(&self, abi: Abi) -> Option<&'static Bench> {
        self.benches.iter().find(|b| b.abi == abi && b.module.is_none())
    }

    /// The entry point a symbol of a variant's module implements.
    pub fn entry_of(&self, variant: &str, symbol: &str) -> Option<&'static Entry> {
        self.entries.iter().copied().find(|e| e.symbol(variant) == symbol)
    }

    /// What is wrong with the description, if anything: a name that is empty or not
    /// `[a-z0-9-]`, no variant, two variants of one name, a variant with an unknown target
    /// or an ABI its entries lack, an entry of another kernel.
    pub fn validate(&self) -> Result<(), String> {
        let named = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !named(self.name) {
            return Err(format!("kernel `{}`: a kernel's name is lowercase letters, digits and `-`", self.name));
        }
        if self.variants.is_empty() {
            return Err(format!("kernel `{}` has no variant", self.name));
        }
        for (i, v) in self.variants.iter().enumerate() {
            if !named(v.name) {
                return Err(format!("kernel `{}`: variant `{}`: a variant's name is lowercase letters, digits and `-`", self.name, v.name));
            }
            if self.variants[..i].iter().any(|w| w.name == v.name) {
                return Err(format!("kernel `{}` has two variants named `{}`", self.name, v.name));
            }
            v.try_target().map_err(|e| format!("kernel `{}`: {e}", self.name))?;
            if v.abis.is_empty() {
                return Err(format!("kernel `{}` variant `{}` lists no ABI", self.name, v.name));
            }
        }
        if let Some(e) = self.entries.iter().find(|e| e.kernel != self.name) {
            return Err(format!("kernel `{}` lists entry point {}…, which belongs to kernel `{}`", self.name, e.prefix, e.kernel));
        }
        Ok(())
    }
}

/// Looks a kernel up by name in a list.
pub fn find<'a>(kernels: &[&'a Kernel], name: &str) -> Option<&'a Kernel> {
    kernels.iter().copied().find(|k| k.name == name)
}

/// One figure of a benchmark: what was measured, over how many bytes, its instructions
/// (0 where the harness does not count them) and cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measured {
    pub what: String,
    pub bytes: usize,
    pub instructions: u64,
    pub cycles: u64,
}

/// A benchmark driver: calls a kernel's functions at the given sizes on a [`Harness`]
/// and returns the figures (a size the functions cannot take is rounded to one they can,
/// and the figure says so by its byte count).
pub type Drive = fn(&mut dyn Harness, &[usize]) -> Result<Vec<Measured>, String>;

/// How `kgen bench` measures one kind of module of a kernel.
#[derive(Clone, Copy)]
pub struct Bench {
    /// The ABI of the module measured: [`Abi::Psabi`] (the OpenSSL build) or [`Abi::Go`]
    /// (as Go's assembler builds it, arguments in the caller's frame).
    pub abi: Abi,
    /// `None`: the variant's own module for `abi`. Otherwise a companion module built for a
    /// variant (`Ok(None)`: that variant has none), such as the form of a function for an
    /// upstream project's own state structure.
    pub module: Option<fn(&str) -> Result<Option<Module>, BuildError>>,
    pub drive: Drive,
}

/// Where a benchmark driver calls the functions it measures: kgen-sim with the cost
/// model, a JIT buffer on a riscv64 host with its cycle counter, or Go's ABI0 in kgen-sim.
pub trait Harness {
    /// A buffer holding `data` at `offset` bytes past a 64-byte boundary; its address.
    fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64;
    /// The function implementing entry point `e`: (symbol, address).
    fn entry(&self, e: &Entry) -> Result<(String, u64), String>;
    /// The address of symbol `name`.
    fn lookup(&self, name: &str) -> Result<u64, String>;
    /// Calls `f`: (instructions, cycles) of the call (instructions 0 where not counted).
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String>;
}

/// Runs `f` twice (the first call warms the model's predictor and the buffers, or the
/// caches) and keeps the second call's (instructions, cycles).
pub fn measured(h: &mut dyn Harness, mut f: impl FnMut(&mut dyn Harness) -> Result<(u64, u64), String>) -> Result<(u64, u64), String> {
    f(h)?;
    f(h)
}

/// A figure named after what it measured.
pub fn figure(what: impl Into<String>, bytes: usize, (instructions, cycles): (u64, u64)) -> Measured {
    Measured { what: what.into(), bytes, instructions, cycles }
}
