//! kgen-kernels: the kernel descriptions. Each kernel is one file with functions that
//! build a [`Module`] for a variant, a target and an ABI; [`kernels`] lists them all.

pub mod aes;
pub mod aes_gcm;
pub mod chacha;
pub mod chacha20_poly1305;
pub mod ghash;
pub mod poly1305;
pub mod sha2;

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
    /// The VLENs an RVV 1.0 variant is correct for (and tested at); empty: the target's
    /// own (none, or the C906's fixed 128).
    pub vlens: &'static [usize],
}

/// A kernel and its variants.
#[derive(Clone, Copy)]
pub struct Kernel {
    pub name: &'static str,
    pub summary: &'static str,
    pub variants: &'static [Variant],
}

impl Variant {
    /// The variant's target profile, with the VLEN range the variant supports.
    pub fn target(&self) -> Target {
        let mut t = target(self.target).expect("variant names a known target");
        if let (Some(&lo), Some(&hi)) = (self.vlens.iter().min(), self.vlens.iter().max()) {
            t.vlen = lo;
            t.vlen_max = hi;
        }
        t
    }

    /// Builds the variant for its own target.
    pub fn build(&self, abi: Abi) -> Result<Module, BuildError> {
        (self.build)(self.name, &self.target(), abi)
    }
}

/// Every kernel kgen knows.
pub fn kernels() -> &'static [Kernel] {
    &[aes::KERNEL, aes_gcm::KERNEL, chacha::KERNEL, chacha20_poly1305::KERNEL, ghash::KERNEL, poly1305::KERNEL, sha2::SHA256, sha2::SHA512]
}

/// Looks a kernel up by name.
pub fn kernel(name: &str) -> Option<&'static Kernel> {
    kernels().iter().find(|k| k.name == name)
}

pub use kgen_dsl::entry::symbol_suffix;

impl Kernel {
    pub fn variant(&self, name: &str) -> Option<&'static Variant> {
        self.variants.iter().find(|v| v.name == name)
    }
}
