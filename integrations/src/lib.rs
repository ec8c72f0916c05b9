//! kgen-integrations: the patch series that put kgen's kernels into upstream projects,
//! written from the kernels' hooks ([`kgen_dsl::kernel::hooks`]): OpenSSL's libcrypto
//! ([`openssl`], `kgen openssl-patches`) and golang.org/x/crypto ([`xcrypto`],
//! `kgen go-patches`). Each writer knows the places of its project a kernel can fill, and
//! takes the entry points and variants from the kernels that declare them.

pub mod openssl;
pub mod xcrypto;
