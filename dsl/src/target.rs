//! Named target profiles: the `-march` string and the extensions a kernel may use.

use crate::ext::{Ext, Ext::*, ExtSet};
use crate::isa::VDialect;

/// A target profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: &'static str,
    pub exts: ExtSet,
    /// VLEN in bits the kernels may assume (0 = no vector unit).
    pub vlen: usize,
    pub summary: &'static str,
}

const G: &[Ext] = &[I, M, A, F, D, C, Zicsr, Zifencei];
const THEAD_SCALAR: &[Ext] = &[XTheadBa, XTheadBb, XTheadBs, XTheadCondMov, XTheadMac, XTheadMemIdx, XTheadMemPair, XTheadSync];

fn set(groups: &[&[Ext]]) -> ExtSet {
    groups.iter().flat_map(|g| g.iter()).fold(ExtSet::EMPTY, |s, e| s.union(ExtSet::one(*e)))
}

/// Every target kgen knows.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "c906",
            exts: set(&[G, THEAD_SCALAR, &[XTheadVector]]),
            vlen: 128,
            summary: "T-Head C906 (SG2002, CV1800B, D1): RV64GC + XThead scalar + XTheadVector, VLEN 128",
        },
        Target { name: "c906-novector", exts: set(&[G, THEAD_SCALAR]), vlen: 0, summary: "C906 without the vector unit" },
        Target { name: "rv64gc", exts: set(&[G]), vlen: 0, summary: "generic RV64GC" },
        Target { name: "rv64gc-zbb", exts: set(&[G, &[Zbb]]), vlen: 0, summary: "RV64GC + Zbb" },
        Target { name: "rv64gc-zbc", exts: set(&[G, &[Zbb, Zbc]]), vlen: 0, summary: "RV64GC + Zbb + Zbc" },
        Target { name: "rv64gcv", exts: set(&[G, &[V, Zbb]]), vlen: 128, summary: "RV64GCV (RVV 1.0, VLEN >= 128) + Zbb" },
        Target {
            name: "rva23",
            exts: set(&[G, &[V, Zba, Zbb, Zbs, Zicond, Zvbb, Zvkb, Zvbc, Zvkg]]),
            vlen: 128,
            summary: "RVA23U64 with Zvbc and Zvkg (vector crypto for GHASH)",
        },
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
