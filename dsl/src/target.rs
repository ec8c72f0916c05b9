//! Named target profiles: the `-march` string and the extensions a kernel may use.

use crate::ext::{Ext, Ext::*, ExtSet};
use crate::isa::VDialect;

/// A target profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: &'static str,
    pub exts: ExtSet,
    /// VLEN in bits the code is timed and simulated at, the smallest it must work with (0 =
    /// no vector unit).
    pub vlen: usize,
    /// The largest VLEN the code must be correct for (the checker's vector extents use it).
    pub vlen_max: usize,
    /// How the core handles a scalar access not aligned to its size.
    pub misaligned: Misaligned,
    /// How the core's multiplier times a 64-bit multiply.
    pub multiplier: Multiplier,
    /// How the core's divider times a division.
    pub divider: Divider,
    pub summary: &'static str,
}

/// Misaligned scalar loads and stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misaligned {
    /// Done in hardware at full speed (the C906).
    Fast,
    /// May trap to the OS, which emulates them slowly (Linux) or not at all: code must not
    /// make them (the checker rejects them; the simulator traps).
    Slow,
}

/// Multiplier timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Multiplier {
    /// The C906: a 64-bit multiply takes 3 cycles when both factors fit 32 bits (signed or
    /// unsigned as the instruction reads them), 6 otherwise (../shared/FACTS.md).
    C906,
    /// No data-dependent latency is assumed.
    Constant,
}

const G: &[Ext] = &[I, M, A, F, D, C, Zicsr, Zifencei];
const THEAD_SCALAR: &[Ext] = &[XTheadBa, XTheadBb, XTheadBs, XTheadCondMov, XTheadMac, XTheadMemIdx, XTheadMemPair, XTheadSync];

fn set(groups: &[&[Ext]]) -> ExtSet {
    groups.iter().flat_map(|g| g.iter()).fold(ExtSet::EMPTY, |s, e| s.union(ExtSet::one(*e)))
}

/// Divider timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Divider {
    /// The C906: 6 + (bits of the dividend - bits of the divisor)/2 cycles, 3 for a repeat
    /// of the last operands or a zero operand (openc906 RTL, dsl/src/timing.rs).
    C906,
    /// Not known to be constant: RISC-V's Zkt, which lists the instructions of
    /// data-independent latency, leaves out every division, and dividers commonly finish
    /// early on small quotients.
    DataDependent,
}

/// A C906 profile (VLEN 128 when it has the vector unit).
fn c906(name: &'static str, exts: ExtSet, vlen: usize, summary: &'static str) -> Target {
    Target { name, exts, vlen, vlen_max: vlen, misaligned: Misaligned::Fast, multiplier: Multiplier::C906, divider: Divider::C906, summary }
}

/// A standard-core profile: no fast misaligned access assumed, VLEN from `vlen` up to
/// `vlen_max`.
fn standard(name: &'static str, exts: ExtSet, vlen: usize, vlen_max: usize, summary: &'static str) -> Target {
    Target { name, exts, vlen, vlen_max, misaligned: Misaligned::Slow, multiplier: Multiplier::Constant, divider: Divider::DataDependent, summary }
}

/// Every target kgen knows.
pub fn targets() -> Vec<Target> {
    vec![
        c906("c906", set(&[G, THEAD_SCALAR, &[XTheadVector]]), 128, "T-Head C906 (SG2002, CV1800B, D1): RV64GC + XThead scalar + XTheadVector, VLEN 128"),
        c906("c906-novector", set(&[G, THEAD_SCALAR]), 0, "C906 without the vector unit"),
        standard("rv64gc", set(&[G]), 0, 0, "generic RV64GC"),
        standard("rv64gc-zbb", set(&[G, &[Zbb]]), 0, 0, "RV64GC + Zbb"),
        standard("rv64gc-zbc", set(&[G, &[Zbb, Zbc]]), 0, 0, "RV64GC + Zbb + Zbc"),
        standard("rv64gcv", set(&[G, &[V, Zbb]]), 128, 512, "RV64GCV (RVV 1.0, VLEN 128 to 512) + Zbb"),
        standard(
            "rva23",
            set(&[G, &[V, Zba, Zbb, Zbs, Zicond, Zvbb, Zvkb, Zvbc, Zvkg]]),
            128,
            512,
            "RVA23U64 with Zvbc and Zvkg (VLEN 128 to 512)",
        ),
    ]
}

/// Looks a target up by name.
pub fn target(name: &str) -> Option<Target> {
    targets().into_iter().find(|t| t.name == name)
}

impl Target {
    pub fn has(&self, e: Ext) -> bool {
        self.exts.contains(e)
    }
    /// The target with one more extension (for code written elsewhere that uses more than
    /// a profile has: `kgen bench --asm --ext`). A vector extension on a target without a
    /// vector unit gives it VLEN 128; the two vector dialects do not mix.
    pub fn with_ext(mut self, e: Ext) -> Result<Target, String> {
        let rvv = [V, Zvkb, Zvbb, Zvbc, Zvkg];
        if (e == XTheadVector && self.has(V)) || (rvv.contains(&e) && self.has(XTheadVector)) {
            return Err(format!("target {} has {}: {} is the other vector dialect", self.name, if self.has(V) { "RVV 1.0" } else { "XTheadVector" }, e.name()));
        }
        if rvv.contains(&e) && e != V {
            self.exts = self.exts.union(ExtSet::one(V));
        }
        if (e == XTheadVector || rvv.contains(&e)) && self.vlen == 0 {
            self.vlen = 128;
            self.vlen_max = 128;
        }
        self.exts = self.exts.union(ExtSet::one(e));
        Ok(self)
    }
    /// The vector dialect the target has, if any.
    pub fn vdialect(&self) -> Option<VDialect> {
        if self.has(XTheadVector) {
            Some(VDialect::Thead)
        } else if self.has(V) {
            Some(VDialect::V1)
        } else {
            None
        }
    }
    /// The `-march` string GNU as takes for this target.
    pub fn march(&self) -> String {
        march_of(self.exts)
    }
}

/// `rv64imafdc_zicsr_..._xtheadvector` for an extension set (single-letter extensions
/// first in canonical order, then multi-letter ones).
pub fn march_of(exts: ExtSet) -> String {
    let mut s = String::from("rv64");
    for e in [I, M, A, F, D, C] {
        if exts.contains(e) {
            s.push_str(e.name());
        }
    }
    if exts.contains(V) {
        s.push('v');
    }
    for e in exts.iter() {
        if e.name().len() > 1 {
            s.push('_');
            s.push_str(e.name());
        }
    }
    s
}
