//! kgen-integrations: the patch series that put kgen's kernels into upstream projects,
//! written from the kernels' hooks ([`kgen_dsl::kernel::hooks`]): OpenSSL's libcrypto
//! ([`openssl`], `kgen openssl-patches`), golang.org/x/crypto ([`xcrypto`],
//! `kgen go-patches`) Go's standard library ([`gostd`], `kgen go-patches --base go-…`) and the Linux kernel
//! ([`linux`], `kgen linux-patches`). Each writer knows the places of its project a kernel can fill, and
//! takes the entry points and variants from the kernels that declare them.

pub mod gostd;
pub mod linux;
pub mod openssl;
mod series;
pub mod xcrypto;
