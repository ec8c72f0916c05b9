//! kgen-kernels: the kernel descriptions. Each kernel is one file with functions that
//! build a [`Module`] for a variant, a target and an ABI; [`kernels`] lists them all.

pub mod aes;
pub mod chacha;
pub mod ghash;
pub mod poly1305;

use kgen_dsl::target::{target, Target};
use kgen_dsl::{Abi, BuildError, Module};

/// One way to build a kernel (for example `c906`: T-Head extensions).
#[derive(Clone, Copy)]
pub struct Variant {
    pub name: &'static str,
    /// Target profile the variant is built for.
    pub target: &'static str,
    /// ABIs it can be emitted for.
    pub abis: &'static [Abi],
    /// Builds the variant (its name, for symbols) for a target and an ABI.
    pub build: fn(&str, &Target, Abi) -> Result<Module, BuildError>,
}

/// A kernel and its variants.
#[derive(Clone, Copy)]
pub struct Kernel {
    pub name: &'static str,
    pub summary: &'static str,
    pub variants: &'static [Variant],
}

impl Variant {
    /// Builds the variant for its own target.
    pub fn build(&self, abi: Abi) -> Result<Module, BuildError> {
        let t = target(self.target).expect("variant names a known target");
        (self.build)(self.name, &t, abi)
    }
}

/// Every kernel kgen knows.
pub fn kernels() -> &'static [Kernel] {
    &[aes::KERNEL, chacha::KERNEL, ghash::KERNEL, poly1305::KERNEL]
}

/// Looks a kernel up by name.
pub fn kernel(name: &str) -> Option<&'static Kernel> {
    kernels().iter().find(|k| k.name == name)
}

/// The variant name in symbols: `c906-novector` → `c906_novector`.
pub fn symbol_suffix(variant: &str) -> String {
    variant.replace('-', "_")
}

impl Kernel {
    pub fn variant(&self, name: &str) -> Option<&'static Variant> {
        self.variants.iter().find(|v| v.name == name)
    }
}
