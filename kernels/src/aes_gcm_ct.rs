//! Constant-time AES-GCM (NIST SP 800-38D) bulk encryption and decryption in OpenSSL's
//! stitched shape, with the same contract as `aes-gcm`:
//!
//! ```text
//! size_t aes_gcm_ct_encrypt_c906(const unsigned char *in, unsigned char *out, size_t len,
//!                                const void *key, unsigned char ivec[16], u64 *Xi);
//! size_t aes_gcm_ct_decrypt_c906(const unsigned char *in, unsigned char *out, size_t len,
//!                                const void *key, unsigned char ivec[16], u64 *Xi);
//! ```
//! `key` is the `AES_KEY` of `aes-ct`'s (or `aes`'s: the same bytes) `AES_set_encrypt_key`
//! (AES-128/192/256), `ivec` the next counter block (the big-endian 32-bit counter in bytes
//! 12..16), `Xi` the GHASH accumulator, and the `Htable` that `ghash c906`'s `gcm_init_c906`
//! wrote lies at `Xi + 32` (gcm128_context: Xi at 64, H at 80, Htable at 96). The functions
//! process every whole block of `in` (the longest prefix of a multiple of 16 bytes), return
//! its length, advance ivec's counter by its blocks (mod 2^32) and Xi over the ciphertext;
//! the caller does the last partial block. `in`, `out` may be unaligned and `in == out` is
//! allowed.
//!
//! Variant `c906` (XTheadVector, VLEN 128). The message goes in chunks of up to
//! [`CHUNK_BLOCKS`] blocks (6 KiB: in and out stay in the C906's 32 KiB data cache); a chunk
//! is `aes-ct c906`'s counter mode (twelve blocks a pass: eight bitsliced in the vector
//! registers and four fixsliced in the scalar words, the two instruction streams merged)
//! followed, when encrypting, by `ghash c906`'s GHASH of the chunk's ciphertext (nine
//! Karatsuba pieces of eight blocks in XTheadVector lanes, merged with the scalar pieces);
//! decrypting hashes the chunk's input first. Both bodies are those of `AES_ctr32_encrypt`
//! and `gcm_ghash_c906`, inlined, their frames sharing the same bytes.
//!
//! Why not one loop of finer grain, as `aes-gcm` merges its T-table AES with the vector
//! GHASH: here each half already keeps both the single-issue core and the vector unit busy
//! (a counter-mode pass issues 4,497 instructions in 4,636 cycles, the vector unit busy about
//! 4,250 of them), so there are no idle slots for the other half to fill. A loop that merged
//! the bitsliced vector AES with a scalar GHASH instead would issue, per 128 bytes, at least
//! the vector AES's 1,883 instructions and the scalar GHASH's 3,408 (`ghash c906-novector`):
//! 41.34 cycles per byte before any overhead, more than these chunks take (`cargo test
//! --release --test aes_gcm constant_time_gcm -- --nocapture` prints both).
//!
//! Constant time: every branch depends on the length alone, every address on the pointers
//! and the length, no multiply's operands on secrets beyond the 32-bit pieces whose timing
//! does not depend on them (as `aes-ct` and `ghash c906`); the checks pass it with no leak
//! declared, and tests/constant_time.rs compares its traces over random keys and inputs.
//! The epilogue zeroes the vector registers and the frame. The caller must check that
//! XTheadVector is enabled (else use `aes-ct c906-novector`'s `AES_ctr32_encrypt` and
//! `gcm_ghash_c906_novector`, which read the same key schedule and table).
//!
//! No Linux form: the kernel's AES-GCM library has no architecture hook for bulk AES-GCM
//! (see `aes-gcm`). No Go form: the Go series' GCM (`crypto/internal/fips140/aes/gcm` on
//! riscv64) runs `aes-ct`'s counter mode and `ghash`'s GHASH in turn, constant time already;
//! Go has no stitched AES-GCM hook on riscv64 for these functions to fill.
//!
//! Performance (C906 cost model, cycles per byte, AES-128; `kgen bench aes-gcm-ct
//! --markdown`; sizes are whole blocks, 1408 for 1400). The chunks' cost is the two halves'
//! (`aes-ct c906`'s `AES_ctr32_encrypt` 24.50 and `ghash c906`'s `gcm_ghash_c906` 14.07 at
//! 16 KiB) and the counter mode's set-up, about 3,000 cycles a chunk (the bitsliced round
//! keys); short calls pay that set-up and the last one to four blocks one at a time:
//!
//! | kernel | variant | function | 16 B | 64 B | 256 B | 1024 B | 1408 B | 4096 B | 16384 B | instr/B |
//! |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
//! | aes-gcm-ct | c906 | aes_gcm_ct_encrypt_c906 | 135.94 | 103.98 | 62.12 | 44.18 | 42.55 | 39.69 | 38.95 | 37.58 |
//! | aes-gcm-ct | c906 | aes_gcm_ct_decrypt_c906 | 136.12 | 104.03 | 62.14 | 44.18 | 42.55 | 39.69 | 38.95 | 37.58 |
//!
//! Whole messages as OpenSSL calls the kernels (the bulk here, the tag's mask and the last
//! partial block with `aes-ct`'s `AES_encrypt`, the lengths with `gcm_ghash_c906`; `cargo
//! test --release --test aes_gcm constant_time_gcm -- --nocapture`) are in
//! docs/performance.md; the targets are 45 c/B at 1400 bytes and 40 at 16 KiB.

use crate::aes_gcm::{self, PARAMS};
use crate::{aes_ct, ghash, Kernel, Variant};
use kgen_dsl::entry::{Entry, Ret};
use kgen_dsl::kernel::hooks::{Hook, Openssl, OpensslSlot};
use kgen_dsl::kernel::{kat, Bench, Harness, Measured};
use kgen_dsl::target::Target;
use kgen_dsl::{Abi, BuildError, Func, Module};
use kgen_macros::kasm;

/// `size_t aes_gcm_ct_encrypt_V(in, out, len, key, ivec, Xi)`.
pub const ENCRYPT: Entry = Entry {
    kernel: "aes-gcm-ct",
    prefix: "aes_gcm_ct_encrypt_",
    suffix: "",
    alias: None,
    abis: &[Abi::Psabi],
    params: PARAMS,
    ret: Ret::Size,
    summary: "constant-time AES-GCM encryption of the whole blocks of in: out, ivec's counter and Xi advanced; returns the bytes done",
};
/// `size_t aes_gcm_ct_decrypt_V(in, out, len, key, ivec, Xi)`.
pub const DECRYPT: Entry = Entry {
    prefix: "aes_gcm_ct_decrypt_",
    summary: "constant-time AES-GCM decryption of the whole blocks of in: out, ivec's counter and Xi advanced; returns the bytes done",
    ..ENCRYPT
};
/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&ENCRYPT, &DECRYPT];

/// The `aes-ct` variant whose counter mode a chunk runs (and whose `AES_KEY` it reads).
pub const AES_VARIANT: &str = "c906";
/// The `ghash` variant whose GHASH a chunk runs, and whose `gcm_init` makes the Htable.
pub const GHASH_VARIANT: &str = aes_gcm::GHASH_VARIANT;
/// Blocks a chunk has at most: a whole number of `aes-ct c906`'s twelve-block passes and
/// of `ghash c906`'s eight-block groups, 6 KiB.
pub const CHUNK_BLOCKS: i64 = 384;
const _: () = assert!(CHUNK_BLOCKS % aes_ct::PASS_BLOCKS == 0 && CHUNK_BLOCKS % ghash::LANES as i64 == 0);

pub const KERNEL: Kernel = Kernel {
    benches: &[Bench { abi: Abi::Psabi, module: None, drive: bench }],
    kat: Some(kat),
    hooks: &[Hook::Openssl(Openssl {
        slot: OpensslSlot::AesGcm { group: 16, aes: ("aes-ct", AES_VARIANT), ghash: ("ghash", GHASH_VARIANT) },
        variants: &["c906"],
        entries: &[&ENCRYPT, &DECRYPT],
    })],
    ..Kernel::new(
        "aes-gcm-ct",
        "constant-time AES-GCM bulk en/decryption (OpenSSL's stitched aes_gcm_encrypt shape): aes-ct's bitsliced counter mode and XTheadVector GHASH, chunk by chunk",
        &[Variant { name: "c906", target: "c906", abis: &[Abi::Psabi], build, vlens: &[] }],
        ENTRIES,
    )
};

fn crypt_fn(variant: &str, t: &Target, abi: Abi, decrypt: bool) -> Func {
    let mut f = Func::entry(if decrypt { &DECRYPT } else { &ENCRYPT }, variant, t, abi);
    let [inp, out, len, key, ivec, xi] = f.params();
    let [blocks, done] = [f.xreg("blocks"), f.xreg("done")];
    for r in [blocks, done] {
        f.public(r);
    }
    f.comment("done = the whole blocks' bytes");
    kasm!(f, srli {blocks}, {len}, 4; slli {done}, {blocks}, 4; beqz {blocks}, finish;);
    let share = f.share_group();
    // The chunk's blocks, min(blocks, CHUNK_BLOCKS), made where it is needed (a value live
    // through the inlined bodies would take a frame slot).
    let chunk = |f: &mut Func| {
        let n = f.xreg("n");
        f.public(n);
        f.scope(|f| kasm!(f, addi {n}, zero, {CHUNK_BLOCKS}; bgeu {blocks}, {n}, full; mv {n}, {blocks}; full:));
        n
    };
    kasm!(f, chunk:);
    let ctr = |f: &mut Func| {
        f.comment("counter mode over the chunk (aes-ct's AES_ctr32_encrypt, inlined)");
        f.sharing(share, 0, |f| {
            f.inline(|f| {
                let [i, o] = [f.xreg("ctr_in"), f.xreg("ctr_out")];
                for r in [i, o] {
                    f.public(r);
                }
                let n = chunk(f);
                kasm!(f, mv {i}, {inp}; mv {o}, {out};);
                aes_ct::ctr32_body(f, AES_VARIANT, t, [i, o, n, key, ivec], None);
            })
        });
        f.comment("ivec's counter += the chunk's blocks (big-endian, mod 2^32)");
        let (n, c) = (chunk(f), f.xreg("ctr"));
        f.public(c);
        kasm!(f, lwu {c}, 12({ivec}); th.revw {c}, {c}; addw {c}, {c}, {n}; th.revw {c}, {c}; sw {c}, 12({ivec}););
    };
    let hash = |f: &mut Func, src| {
        f.comment("GHASH of the chunk's ciphertext (ghash's gcm_ghash_c906, inlined; Htable at Xi + 32)");
        f.sharing(share, 1, |f| {
            f.inline(|f| {
                let [p, l, ht] = [f.xreg("hash_in"), f.xreg("hash_len"), f.xreg("htable")];
                for r in [p, l, ht] {
                    f.public(r);
                }
                let n = chunk(f);
                kasm!(f, mv {p}, {src}; slli {l}, {n}, 4; addi {ht}, {xi}, 32;);
                ghash::ghash_inline(f, t, [xi, ht, p, l]);
            })
        });
    };
    if decrypt {
        hash(&mut f, inp);
        ctr(&mut f);
    } else {
        ctr(&mut f);
        hash(&mut f, out);
    }
    let (n, c) = (chunk(&mut f), f.xreg("bytes"));
    f.public(c);
    kasm!(f, slli {c}, {n}, 4; add {inp}, {inp}, {c}; add {out}, {out}, {c}; sub {blocks}, {blocks}, {n}; bnez {blocks}, chunk; finish:);
    f.ret_value(done);
    f.ret();
    f
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new("aes-gcm-ct", variant, t, abi);
    m.notes = vec![
        "Constant-time AES-GCM bulk functions (OpenSSL's stitched aes_gcm_encrypt shape): every whole block; the caller does the rest.".into(),
        "AES bitsliced (aes-ct c906's counter mode), GHASH in XTheadVector lanes (ghash c906): call only if XTheadVector is enabled.".into(),
        "Htable (at Xi + 32) is gcm_init_c906's; key is AES_set_encrypt_key's (aes-ct or aes). Vector registers and the frame are zeroed at return.".into(),
    ];
    for d in aes_ct::data_objects(AES_VARIANT, t) {
        m.add_data(d);
    }
    m.add(crypt_fn(variant, t, abi, false), true)?;
    m.add(crypt_fn(variant, t, abi, true), true)?;
    Ok(m)
}

/// `kgen bench aes-gcm-ct`: encrypt and decrypt over the size rounded up to whole blocks, in
/// place, AES-128 (as `aes-gcm`'s bench).
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    aes_gcm::bench_entries(h, sizes, [&ENCRYPT, &DECRYPT], 16)
}

/// `aes-gcm`'s known answers (GCM test case 3, through the 2^32 counter wrap, in place).
fn kat(v: &str) -> Result<kat::Plan, String> {
    aes_gcm::kat_plan(v, &ENCRYPT, &DECRYPT)
}
