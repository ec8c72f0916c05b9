//! kgen-kernels: the kernel descriptions. Each kernel is one file with functions that
//! build a [`kgen_dsl::Module`] for a variant, a target and an ABI; [`kernels`] lists them all.

pub mod aes;
pub mod aes_ct;
pub mod aes_gcm;
pub mod aes_gcm_ct;
pub mod chacha;
pub mod chacha20_poly1305;
pub mod ghash;
pub mod poly1305;
pub mod sha2;

pub use kgen_dsl::kernel::{Bench, Harness, Kernel, Measured, Variant};

/// Every kernel kgen knows.
pub fn kernels() -> &'static [&'static Kernel] {
    &[&aes::KERNEL, &aes_ct::KERNEL, &aes_gcm::KERNEL, &aes_gcm_ct::KERNEL, &chacha::KERNEL, &chacha20_poly1305::KERNEL, &ghash::KERNEL, &poly1305::KERNEL, &sha2::SHA256, &sha2::SHA512]
}

/// Looks a kernel up by name.
pub fn kernel(name: &str) -> Option<&'static Kernel> {
    kgen_dsl::kernel::find(kernels(), name)
}

pub use kgen_dsl::entry::symbol_suffix;
