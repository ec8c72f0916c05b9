//! Which functions of upstream projects a kernel's entry points take over: the facts the
//! patch-series writers (`kgen openssl-patches`, `kgen go-patches` for x/crypto and for
//! Go's standard library, `kgen linux-patches`) need, declared with the
//! kernel. A slot is a place in the upstream code (OpenSSL's AES block functions,
//! x/crypto's ChaCha20 `xorKeyStreamBlocks`); the series writer knows how to fill each slot
//! and takes the entry points to call, and the variants to build in, from here.

use crate::entry::Entry;
use crate::{BuildError, Module};

/// A hook of an upstream project that a kernel fills.
#[derive(Clone, Copy, Debug)]
pub enum Hook {
    /// OpenSSL's libcrypto (`kgen openssl-patches`).
    Openssl(Openssl),
    /// golang.org/x/crypto (`kgen go-patches`).
    XCrypto(XCrypto),
    /// Go's own standard library (`kgen go-patches --base go-…`).
    GoStd(GoStd),
    /// The Linux kernel's crypto (`kgen linux-patches`).
    Linux(Linux),
}

/// A slot of an upstream project and the variants that fill it.
#[derive(Clone, Copy, Debug)]
pub struct Fill<S> {
    pub slot: S,
    /// The variants the series builds in, in dispatch order: at run time the first whose
    /// instructions the CPU has runs (OpenSSL's ChaCha20 also by length), else upstream's
    /// code.
    pub variants: &'static [&'static str],
    /// The entry points upstream's code calls, in the order the slot names them.
    pub entries: &'static [&'static Entry],
}

/// A slot of OpenSSL's riscv64 build and the variants that fill it.
pub type Openssl = Fill<OpensslSlot>;

/// The places in OpenSSL the series can give to a kernel. The order is the series' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpensslSlot {
    /// crypto/aes: the entries whose OpenSSL alias names a function of upstream's
    /// aes-riscv64.pl take it over (block functions, key schedules); the entry with alias
    /// `AES_ctr32_encrypt`, if any, becomes the providers' AES-CTR and AES-GCM `ctr128_f`.
    Aes,
    /// crypto/chacha: `ChaCha20_ctr32`. With two variants, the first runs from the length
    /// where it models faster than the second.
    ChaCha20,
    /// crypto/modes/gcm128.c: `gcm_init`, `gcm_gmult`, `gcm_ghash`.
    Ghash,
    /// The providers' AES-GCM: `aes_gcm_encrypt`, `aes_gcm_decrypt` of whole `group`-byte
    /// groups, reading the key schedule of AES kernel and variant `aes` and the Htable of
    /// GHASH kernel and variant `ghash`, which must fill their slots in the same series.
    AesGcm { group: usize, aes: (&'static str, &'static str), ghash: (&'static str, &'static str) },
    /// crypto/poly1305: `poly1305_init`, `poly1305_blocks`, `poly1305_emit`. `compare`: a
    /// variant whose modeled speed the commit message quotes beside the fallback's.
    Poly1305 { compare: Option<&'static str> },
    /// The providers' ChaCha20-Poly1305: seal, open of whole 64-byte blocks, continuing the
    /// state of the Poly1305 slot's `poly1305_init`.
    ChaCha20Poly1305,
    /// crypto/sha: `sha256_block_data_order` or `sha512_block_data_order` (by `bits`).
    Sha2 { bits: u32 },
}

impl OpensslSlot {
    /// Whether two hooks name the same place in OpenSSL: the same slot, whatever its
    /// parameters say about the kernel filling it (two AES-GCM kernels with their own
    /// group sizes and AES kernels take the same place; SHA-256 and SHA-512 are two).
    pub fn same_place(&self, other: &OpensslSlot) -> bool {
        match (self, other) {
            (OpensslSlot::Sha2 { bits: a }, OpensslSlot::Sha2 { bits: b }) => a == b,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

/// A slot of golang.org/x/crypto's riscv64 port and the variants that fill it.
#[derive(Clone, Copy, Debug)]
pub struct XCrypto {
    pub slot: XCryptoSlot,
    /// In dispatch order: the first whose instructions the CPU has runs, else the generic Go
    /// code.
    pub variants: &'static [&'static str],
    /// The functions, as Go assembly: the variant's own Go module (`None`) or a module made
    /// for x/crypto's own state structure.
    pub module: Option<fn(&str) -> Result<Option<Module>, BuildError>>,
    /// The entry points the package's Go code calls, in the order the slot names them.
    pub entries: &'static [&'static Entry],
}

/// The places in x/crypto the series can give to a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum XCryptoSlot {
    /// chacha20's `xorKeyStreamBlocks`: one `ChaCha20_ctr32`-shaped entry.
    ChaCha20,
    /// internal/poly1305's `update` on `macState`: one blocks entry.
    Poly1305,
    /// chacha20poly1305's seal/open of whole blocks on `macState`: seal, open.
    ChaCha20Poly1305,
}

/// A slot of Go's standard library (GOROOT/src) and the variants that fill it (each
/// variant's needs are read from the instructions it uses).
pub type GoStd = Fill<GoStdSlot>;

/// The places in Go's standard library the series can give to a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GoStdSlot {
    /// crypto/internal/fips140/aes: the block cipher, its CTR mode and the counter mode
    /// GCM uses: `set_encrypt_key`, `set_decrypt_key`, `encrypt`, `decrypt`, `ctr32`, on
    /// OpenSSL's `AES_KEY`.
    Aes,
    /// crypto/internal/fips140/aes/gcm: GHASH: `gcm_init`, `gcm_ghash` (OpenSSL's ABI).
    Ghash,
    /// crypto/internal/fips140/sha256 or sha512 (by `bits`): `block`, the Go form.
    Sha2 { bits: u32 },
}

/// A slot of the Linux kernel's crypto and the variants that fill it (each variant's needs
/// are read from the instructions it uses; the last must run on every RV64GC core).
pub type Linux = Fill<LinuxSlot>;

/// The places in the Linux kernel the series can give to a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinuxSlot {
    /// ChaCha: the library's `chacha_crypt_arch` (Linux 6.12) and the `chacha20`,
    /// `xchacha20`, `xchacha12` skciphers: one entry, ChaCha over whole blocks on the
    /// 16-word state, counter written back, `nrounds` 8/12/20.
    ChaCha20,
    /// Poly1305: the library's `poly1305_init_arch`/`update_arch`/`final_arch` and the
    /// `poly1305` shash: block init, blocks, emit on a state at `poly1305_desc_ctx.h` of at
    /// most `state_bytes`.
    Poly1305 { state_bytes: usize },
    /// The `ghash` shash (so `gcm(aes)` and `rfc4106(gcm(aes))` take it): table init from
    /// H, then blocks on the table.
    Ghash { table_bytes: usize },
    /// The `sha224`/`sha256` or `sha384`/`sha512` shashes (by `bits`): blocks on the state
    /// words at offset 0 of the kernel's state structure.
    Sha2 { bits: u32 },
    /// AES (6.x: the `aes` cipher, `ecb(aes)` and `ctr(aes)`; 7.x: the AES library's key
    /// preparation, block functions, ECB and CTR): expandkey into a `struct crypto_aes_ctx`,
    /// then encrypt, decrypt, ctr32, ecb encrypt and ecb decrypt on round keys and a round
    /// count (`rk`, `nrounds`), as lib/crypto's generic AES takes them.
    Aes,
}
