//! Constant-time AES (FIPS-197): fixsliced, four blocks in eight 64-bit words, in
//! OpenSSL 3.5's riscv64 ABI and with the `aes` kernel's functions and `AES_KEY`, so it
//! replaces it where it is linked.
//!
//! ```text
//! void AES_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key);
//! void AES_decrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key);
//! int AES_set_encrypt_key(const unsigned char *userKey, const int bits, AES_KEY *key);
//! int AES_set_decrypt_key(const unsigned char *userKey, const int bits, AES_KEY *key);
//! void AES_ctr32_encrypt(const unsigned char *in, unsigned char *out, size_t blocks,
//!                        const AES_KEY *key, const unsigned char ivec[16]);
//! ```
//! `AES_KEY` is the `aes` kernel's: 60 round-key words in memory byte order, `int rounds`
//! at byte 240; the decryption schedule is the equivalent inverse cipher's (reversed,
//! InvMixColumns on all but the first and last round keys), as OpenSSL's. Set-key returns
//! 0, -1 for a NULL pointer, -2 for a key size other than 128/192/256. `in`, `out`,
//! `userKey` and `ivec` may be unaligned and `in == out` is allowed.
//!
//! For Linux the same code takes round keys as lib/crypto's generic AES does (the words of
//! `AES_KEY`'s schedules, and the round count): `aes_ct_encrypt_<variant>(rk, nrounds, out,
//! in)`, `aes_ct_decrypt_<variant>(inv_rk, nrounds, out, in)` (the equivalent inverse
//! cipher's keys), `aes_ct_ctr32_<variant>(rk, nrounds, out, in, nblocks, iv)` and
//! `aes_ct_ecb_encrypt/decrypt_<variant>(rk, nrounds, out, in, nblocks)` (four blocks a
//! pass); `aes_ct_expandkey_<variant>(ctx, in_key, key_len)` (0 or -EINVAL) fills a
//! `struct crypto_aes_ctx` (`key_enc`, `key_dec`, `key_length`).
//!
//! The cipher: the state of four blocks is eight 64-bit words, word `p` holding bit `p` of
//! every byte (row `r`, column `c`, block `j` at bit `16r + 4c + j`). SubBytes is Boyar and
//! Peralta's 113-gate circuit on the eight words; ShiftRows is never computed in the rounds
//! (fixslicing: MixColumns rotates rows and columns by an amount that cycles with the
//! round, and the round keys are stored shifted to match); see [`mod@slice`]. The round keys
//! are made bitsliced from the `AES_KEY` on every call (as OpenSSL's bsaes does):
//! `AES_ctr32_encrypt` makes them once into its frame; the block functions make each one
//! where the round needs it. The key schedules compute SubWord with the same circuit on
//! the four bytes of the word, and InvMixColumns with shifts and masks.
//!
//! Constant time: yes, with no declared leak. No branch and no address depends on the key
//! or the data (branches test the key size, the block count and the buffers' alignment, all
//! public), and there is no multiply or division. The vector code's gathers permute by
//! public index tables (the data is what moves, not the addresses), and no vector
//! instruction it uses takes a data-dependent time on the C906.
//!
//! `AES_encrypt` and `AES_decrypt` compute one block in all four lanes; `AES_ctr32_encrypt`
//! four counter blocks per iteration (twelve with the vector unit). Its nonce bytes are the same in every block, so they
//! are transposed once, and only the counter's four bytes are transposed per iteration.
//!
//! Variants: `c906-novector` rotates with `th.srri` and swaps bytes with `th.revw`;
//! `rv64gc-zbb` with `rori` and `rev8`; `rv64gc` with shifts. `c906` is `c906-novector`
//! except for `AES_ctr32_encrypt`, which also uses XTheadVector (VLEN 128): twelve blocks a
//! pass, eight bitsliced in vector registers (see [`mod@vslice`]: register `p` holds bit `p`
//! of every byte, block `j` in bit `j` of each byte, so ShiftRows and MixColumns' row
//! rotations are byte permutations, one `vrgather.vv` each) and four in the scalar words,
//! the two streams merged by modeled issue time. Its vector round keys are the key bytes,
//! permuted and with 0x63 added per call (16 bytes a round); each round spreads them to
//! the eight planes with two shifts a plane. Every pass computes twelve blocks; calls of
//! up to six blocks, and the last one to four blocks of a call, are done one block at a
//! time by the nibble lookups below instead (about 1,000 cycles a block, against 4,640 for
//! a pass), and calls of up to six blocks skip making the bitsliced round keys. A call of
//! seven or eight blocks pays a whole pass and is a little faster on `c906-novector`
//! (the OpenSSL series dispatches those there). Its `AES_encrypt` and `AES_decrypt` (and
//! the Linux `aes_ct_encrypt` and `aes_ct_decrypt`) take one block in one vector register
//! and compute the S-box by nibble lookups ([`mod@vperm`]: 13 `vrgather.vv` and 19 vector
//! ALU operations an encryption round, 19 gathers and 18 ALU operations a decryption
//! round, against the bitsliced pass's four lanes for one block). The caller must check that XTheadVector is
//! enabled with VLEN 128.
//!
//! `rv64gcv` (RVV 1.0, VLEN 128 to 512) runs counter mode in the vector unit alone:
//! VLEN / 16 blocks a pass, the same layout in every 16-byte group of a register (the
//! permutations' indices for 64-byte registers, the round keys copied to every group, the
//! counters written into the blocks by a strided store), the rounds a loop of one round;
//! its `AES_encrypt` and `AES_decrypt` are the nibble-lookup ones, the rest the Zbb scalar
//! code.
//!
//! Cost (AES-128, C906 model cycles per call as tests/rtl_calibration.rs prints them): `AES_ctr32_encrypt`
//! takes 4,995 cycles for 64 bytes (one pass of four blocks) and 43,058 for 1 KiB (16
//! passes), so a pass costs 2,538 cycles (39.7 per byte) and a call 2,457 more: making the
//! bitsliced round keys, the frame's zeros and wipe, the saved registers. Short calls pay
//! mostly for that. The S-box is 1,130 of the 2,030 or so instructions of a pass's
//! rounds, MixColumns 770 (240 of them rotations, three instructions each on `rv64gc`).
//! A single block costs a whole pass, and its round keys are made as its rounds go.
//!
//! Performance (C906 cost model, cycles per byte; `kgen bench aes-ct --markdown`
//! regenerates it):
//!
//! | kernel | variant | function | 16 B | 64 B | 256 B | 1024 B | 1400 B | 4096 B | 16384 B | instr/B |
//! |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
//! | aes-ct | c906 | AES_encrypt | 64.00 | 64.00 | 64.00 | 64.00 | 64.37 | 64.00 | 64.00 | 24.12 |
//! | aes-ct | c906 | AES_decrypt | 76.88 | 76.88 | 76.88 | 76.88 | 77.31 | 76.88 | 76.88 | 27.50 |
//! | aes-ct | c906 | AES_set_encrypt_key(128) | 124.81 | – | – | – | – | – | – | 115.25 |
//! | aes-ct | c906 | AES_ctr32_encrypt | 84.31 | 67.33 | 45.43 | 29.49 | 28.04 | 25.50 | 24.50 | 23.61 |
//! | aes-ct | c906-novector | AES_encrypt | 268.12 | 268.12 | 268.12 | 268.12 | 269.66 | 268.12 | 268.12 | 265.88 |
//! | aes-ct | c906-novector | AES_decrypt | 301.50 | 301.50 | 301.50 | 301.50 | 303.22 | 301.50 | 301.50 | 295.56 |
//! | aes-ct | c906-novector | AES_set_encrypt_key(128) | 124.81 | – | – | – | – | – | – | 115.25 |
//! | aes-ct | c906-novector | AES_ctr32_encrypt | 307.94 | 78.05 | 49.27 | 42.05 | 41.39 | 40.24 | 39.79 | 39.01 |
//! | aes-ct | rv64gc | AES_encrypt | 305.50 | 305.50 | 305.50 | 305.50 | 307.25 | 305.50 | 305.50 | 301.44 |
//! | aes-ct | rv64gc | AES_decrypt | 340.56 | 340.56 | 340.56 | 340.56 | 342.51 | 340.56 | 340.56 | 331.88 |
//! | aes-ct | rv64gc | AES_set_encrypt_key(128) | 129.12 | – | – | – | – | – | – | 118.81 |
//! | aes-ct | rv64gc | AES_ctr32_encrypt | 349.38 | 87.98 | 57.77 | 50.18 | 49.50 | 48.29 | 47.81 | 47.17 |
//! | aes-ct | rv64gc-zbb | AES_encrypt | 275.50 | 275.50 | 275.50 | 275.50 | 277.07 | 275.50 | 275.50 | 271.44 |
//! | aes-ct | rv64gc-zbb | AES_decrypt | 310.25 | 310.25 | 310.25 | 310.25 | 312.02 | 310.25 | 310.25 | 301.81 |
//! | aes-ct | rv64gc-zbb | AES_set_encrypt_key(128) | 127.88 | – | – | – | – | – | – | 117.56 |
//! | aes-ct | rv64gc-zbb | AES_ctr32_encrypt | 315.62 | 79.55 | 49.46 | 41.91 | 41.22 | 40.02 | 39.55 | 38.97 |
//! | aes-ct | rv64gcv | AES_encrypt | 65.00 | 65.00 | 65.00 | 65.00 | 65.37 | 65.00 | 65.00 | 24.19 |
//! | aes-ct | rv64gcv | AES_decrypt | 77.88 | 77.88 | 77.88 | 77.88 | 78.32 | 77.88 | 77.88 | 27.56 |
//! | aes-ct | rv64gcv | AES_set_encrypt_key(128) | 127.88 | – | – | – | – | – | – | 117.56 |
//! | aes-ct | rv64gcv | AES_ctr32_encrypt | 328.12 | 82.03 | 38.33 | 36.32 | 36.14 | 35.82 | 35.69 | 16.15 |

#[path = "aes_ct/slice.rs"]
pub mod slice;
#[path = "aes_ct/vslice.rs"]
pub mod vslice;
#[path = "aes_ct/vector.rs"]
mod vector;
#[path = "aes_ct/vperm.rs"]
pub mod vperm;

use crate::aes::{self, Functions};
use crate::{Kernel, Variant};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::kernel::hooks::{GoStd, GoStdSlot, Hook, Linux, LinuxSlot, Openssl, OpensslSlot};
use kgen_dsl::kernel::Bench;
use kgen_dsl::object::DataObj;
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::isa::VDialect;
use kgen_dsl::{Abi, BuildError, Ext, Func, Module, Opnd, Reg, Slot};
use kgen_macros::kasm;
use slice::{Gates, Words, MASKS};
use vector::{load, store, Seg};

/// OpenSSL's `AES_KEY`, as the `aes` kernel declares it.
const AES_KEY: Elem = Elem::Named { name: "AES_KEY", align: 4, def: "struct aes_key_st { unsigned int rd_key[60]; int rounds; }" };
const ABIS: &[Abi] = &[Abi::Psabi, Abi::Go];
const VARIANT_ABIS: &[Abi] = &[Abi::Psabi, Abi::Linux, Abi::Go];
const BLOCK_PARAMS: &[Param] = &[
    Param::ptr("in", Elem::U8, In, true),
    Param::ptr("out", Elem::U8, Out, false),
    Param::ptr("key", AES_KEY, In, true).public(aes::ROUNDS_PUBLIC),
];
const SETKEY_PARAMS: &[Param] =
    &[Param::ptr("userKey", Elem::U8, In, true), Param::val("bits", Ty::I32, false), Param::ptr("key", AES_KEY, Out, true)];

/// `void AES_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key)`.
pub const ENCRYPT: Entry = Entry {
    kernel: "aes-ct",
    prefix: "AES_ct_encrypt_",
    suffix: "",
    alias: Some("AES_encrypt"),
    abis: ABIS,
    params: BLOCK_PARAMS,
    ret: Ret::Void,
    summary: "AES block encryption, constant time (fixsliced)",
};
/// `void AES_decrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key)`.
pub const DECRYPT: Entry =
    Entry { prefix: "AES_ct_decrypt_", alias: Some("AES_decrypt"), summary: "AES block decryption, constant time (fixsliced), with AES_set_decrypt_key's schedule", ..ENCRYPT };
/// `int AES_set_encrypt_key(const unsigned char *userKey, int bits, AES_KEY *key)`.
pub const SET_ENCRYPT_KEY: Entry = Entry {
    kernel: "aes-ct",
    prefix: "AES_ct_set_encrypt_key_",
    suffix: "",
    alias: Some("AES_set_encrypt_key"),
    abis: ABIS,
    params: SETKEY_PARAMS,
    ret: Ret::Int,
    summary: "AES key schedule, constant time: 0, -1 for a NULL pointer, -2 for a key size other than 128/192/256",
};
/// `int AES_set_decrypt_key(const unsigned char *userKey, int bits, AES_KEY *key)`.
pub const SET_DECRYPT_KEY: Entry = Entry {
    prefix: "AES_ct_set_decrypt_key_",
    alias: Some("AES_set_decrypt_key"),
    summary: "AES decryption key schedule (equivalent inverse cipher), constant time: 0, -1, -2 as set_encrypt_key",
    ..SET_ENCRYPT_KEY
};
/// `void AES_ctr32_encrypt(const unsigned char *in, unsigned char *out, size_t blocks,
/// const AES_KEY *key, const unsigned char ivec[16])`: OpenSSL's `ctr128_f`.
pub const CTR32: Entry = Entry {
    kernel: "aes-ct",
    prefix: "AES_ct_ctr32_encrypt_",
    suffix: "",
    alias: Some("AES_ctr32_encrypt"),
    abis: ABIS,
    params: &[
        Param::ptr("in", Elem::U8, In, true),
        Param::ptr("out", Elem::U8, Out, false),
        Param::val("blocks", Ty::Size, false),
        Param::ptr("key", AES_KEY, In, true).public(aes::ROUNDS_PUBLIC),
        Param::ptr("ivec", Elem::U8, In, false).array(16),
    ],
    ret: Ret::Void,
    summary: "AES counter mode, constant time: out = in ^ E(ivec), the big-endian 32-bit counter in ivec[12..16] incremented (mod 2^32) per block; ivec is not written back",
};
/// The Linux library's AES context (`<crypto/aes.h>`): the encryption schedule, the
/// decryption schedule (equivalent inverse cipher), both laid out as `AES_KEY`'s round keys,
/// and the key's length in bytes.
const CRYPTO_AES_CTX: Elem =
    Elem::Named { name: "struct crypto_aes_ctx", align: 4, def: "struct crypto_aes_ctx { u32 key_enc[60]; u32 key_dec[60]; u32 key_length; }" };
/// `key_length`, from which the round count follows.
const KEY_LENGTH_PUBLIC: &[(i64, i64)] = &[(480, 484)];
/// The round keys the Linux cipher forms take, as lib/crypto's generic AES does (`rndkeys`,
/// `nrounds`): `crypto_aes_ctx`'s `key_enc` or `key_dec` on 6.x, `aes_enckey`'s `k.rndkeys`
/// or `aes_key`'s `inv_k.inv_rndkeys` on 7.x; `nrounds` (10, 12 or 14) is public.
const LINUX_KEY_PARAMS: [Param; 2] = [Param::ptr("rk", Elem::U32, In, true).array(60), Param::val("nrounds", Ty::I32, false)];
const LINUX_BLOCK_PARAMS: &[Param] = &[LINUX_KEY_PARAMS[0], LINUX_KEY_PARAMS[1], Param::ptr("out", Elem::U8, Out, false), Param::ptr("in", Elem::U8, In, true)];
/// `void aes_ct_encrypt_<variant>(const u32 *rk, int nrounds, u8 *out, const u8 *in)`
/// (Linux: lib/crypto's `aes_encrypt_generic`).
pub const LINUX_ENCRYPT: Entry = Entry {
    kernel: "aes-ct",
    prefix: "aes_ct_encrypt_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: LINUX_BLOCK_PARAMS,
    ret: Ret::Void,
    summary: "AES block encryption with the standard round keys rk (nrounds rounds), constant time (fixsliced)",
};
/// `void aes_ct_decrypt_<variant>(const u32 *rk, int nrounds, u8 *out, const u8 *in)`, rk
/// the equivalent inverse cipher's round keys (Linux: lib/crypto's `aes_decrypt_generic`).
pub const LINUX_DECRYPT: Entry =
    Entry { prefix: "aes_ct_decrypt_", summary: "AES block decryption with the equivalent inverse cipher's round keys rk (nrounds rounds), constant time (fixsliced)", ..LINUX_ENCRYPT };
/// `int aes_ct_expandkey_<variant>(struct crypto_aes_ctx *ctx, const u8 *in_key, unsigned
/// int key_len)` (Linux: lib/crypto's `aes_expandkey`).
pub const LINUX_EXPANDKEY: Entry = Entry {
    kernel: "aes-ct",
    prefix: "aes_ct_expandkey_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[
        Param::ptr("ctx", CRYPTO_AES_CTX, Out, true).public(KEY_LENGTH_PUBLIC),
        Param::ptr("in_key", Elem::U8, In, true),
        Param::val("key_len", Ty::U32, false),
    ],
    ret: Ret::Int,
    summary: "AES key expansion into key_enc, key_dec and key_length, constant time: 0, or -EINVAL (-22) for a key length other than 16, 24 or 32 bytes",
};
/// `void aes_ct_ctr32_<variant>(const u32 *rk, int nrounds, u8 *out, const u8 *in, size_t
/// nblocks, const u8 iv[16])`: counter mode over whole blocks.
pub const LINUX_CTR32: Entry = Entry {
    kernel: "aes-ct",
    prefix: "aes_ct_ctr32_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[
        LINUX_KEY_PARAMS[0],
        LINUX_KEY_PARAMS[1],
        Param::ptr("out", Elem::U8, Out, false),
        Param::ptr("in", Elem::U8, In, true),
        Param::val("nblocks", Ty::Size, false),
        Param::ptr("iv", Elem::U8, In, false).array(16),
    ],
    ret: Ret::Void,
    summary: "AES counter mode with the standard round keys rk, constant time: out = in ^ E(iv), the big-endian 32-bit counter in iv[12..16] incremented (mod 2^32) per block; iv is not written back (the caller carries into iv[0..12])",
};
/// `void aes_ct_ecb_encrypt_<variant>(const u32 *rk, int nrounds, u8 *out, const u8 *in,
/// size_t nblocks)`: ECB over whole blocks.
pub const LINUX_ECB_ENCRYPT: Entry = Entry {
    kernel: "aes-ct",
    prefix: "aes_ct_ecb_encrypt_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[LINUX_KEY_PARAMS[0], LINUX_KEY_PARAMS[1], Param::ptr("out", Elem::U8, Out, false), Param::ptr("in", Elem::U8, In, true), Param::val("nblocks", Ty::Size, false)],
    ret: Ret::Void,
    summary: "AES-ECB encryption of nblocks whole blocks with the standard round keys rk, constant time (fixsliced, four blocks a pass)",
};
/// `void aes_ct_ecb_decrypt_<variant>(const u32 *rk, int nrounds, u8 *out, const u8 *in,
/// size_t nblocks)`, rk the equivalent inverse cipher's round keys.
pub const LINUX_ECB_DECRYPT: Entry = Entry {
    prefix: "aes_ct_ecb_decrypt_",
    summary: "AES-ECB decryption of nblocks whole blocks with the equivalent inverse cipher's round keys rk, constant time (fixsliced, four blocks a pass)",
    ..LINUX_ECB_ENCRYPT
};
/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] =
    &[&ENCRYPT, &DECRYPT, &SET_ENCRYPT_KEY, &SET_DECRYPT_KEY, &CTR32, &LINUX_ENCRYPT, &LINUX_DECRYPT, &LINUX_EXPANDKEY, &LINUX_CTR32, &LINUX_ECB_ENCRYPT, &LINUX_ECB_DECRYPT];
const FUNCTIONS: Functions = Functions { encrypt: &ENCRYPT, decrypt: &DECRYPT, set_encrypt_key: &SET_ENCRYPT_KEY, set_decrypt_key: &SET_DECRYPT_KEY, ctr32: &CTR32 };

pub const KERNEL: Kernel = Kernel {
    benches: &[
        Bench { abi: Abi::Psabi, module: None, drive: |h, s| aes::bench(&FUNCTIONS, h, s) },
        Bench { abi: Abi::Go, module: None, drive: |h, s| aes::bench(&FUNCTIONS, h, s) },
        Bench { abi: Abi::Linux, module: None, drive: linux_bench },
    ],
    kat: Some(|v| aes::kat(&FUNCTIONS, v)),
    rtl: Some(|v, s| aes::rtl_plan(&FUNCTIONS, v, s)),
    // OpenSSL's AES on every riscv64 CPU: the C906 with its vector unit, the T-Head scalar
    // variant, then Zbb, then RV64GC.
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::Aes, variants: &["c906", "c906-novector", "rv64gc-zbb", "rv64gc"], entries: ENTRIES }),
        Hook::GoStd(GoStd {
            slot: GoStdSlot::Aes,
            variants: &["c906", "c906-novector", "rv64gcv", "rv64gc-zbb", "rv64gc"],
            entries: &[&SET_ENCRYPT_KEY, &SET_DECRYPT_KEY, &ENCRYPT, &DECRYPT, &CTR32],
        }),
        Hook::Linux(Linux {
            slot: LinuxSlot::Aes,
            variants: &["c906", "c906-novector", "rv64gcv", "rv64gc-zbb", "rv64gc"],
            entries: &[&LINUX_EXPANDKEY, &LINUX_ENCRYPT, &LINUX_DECRYPT, &LINUX_CTR32, &LINUX_ECB_ENCRYPT, &LINUX_ECB_DECRYPT],
        }),
    ],
    ..Kernel::new(
        "aes-ct",
        "AES-128/192/256 block encrypt/decrypt, key schedules and counter mode, constant time (fixsliced, OpenSSL ABI)",
        &[
            Variant { name: "c906", target: "c906", abis: VARIANT_ABIS, build, vlens: &[] },
            Variant { name: "c906-novector", target: "c906-novector", abis: VARIANT_ABIS, build, vlens: &[] },
            Variant { name: "rv64gc", target: "rv64gc", abis: VARIANT_ABIS, build, vlens: &[] },
            Variant { name: "rv64gc-zbb", target: "rv64gc-zbb", abis: VARIANT_ABIS, build, vlens: &[] },
            Variant { name: "rv64gcv", target: "rv64gcv", abis: VARIANT_ABIS, build, vlens: &[128, 256, 512] },
        ],
        ENTRIES,
    )
};

// ---- the words as instructions ------------------------------------------------------------

/// How a variant rotates a 64-bit word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rot {
    /// `th.srri` (XTheadBb)
    Thead,
    /// `rori` (Zbb)
    Zbb,
    /// `srli`, `slli`, `or`
    Shifts,
}

fn rot_of(t: &Target) -> Rot {
    if t.has(Ext::XTheadBb) {
        Rot::Thead
    } else if t.has(Ext::Zbb) {
        Rot::Zbb
    } else {
        Rot::Shifts
    }
}

/// Where [`Em`] loads the masks from.
#[derive(Clone, Copy)]
enum Masks {
    /// The variant's table, its address in the register.
    Table(Reg),
    /// A copy in the frame (no register holds an address through the rounds).
    Frame(Slot),
}

/// Copies the rounds' masks ([`slice::ROUND_MASKS`]) into the frame: 2 instructions a
/// mask, once a call.
fn masks_in_frame(f: &mut Func, variant: &str) -> Masks {
    let slot = f.slot("masks", 8 * slice::ROUND_MASKS as u32, 8, false);
    let (base, t) = (f.xreg("table"), f.xreg("mask"));
    f.public(base);
    f.public(t);
    f.la(base, &masks_sym(variant));
    for i in 0..slice::ROUND_MASKS {
        let off = 8 * i as i64;
        kasm!(f, ld {t}, {off}({base}); sd {t}, {StackAt(slot, off)}(sp););
    }
    Masks::Frame(slot)
}

/// [`Words`] as instructions on fresh virtual registers, the masks loaded from `masks`.
struct Em<'a> {
    f: &'a mut Func,
    rot: Rot,
    masks: Masks,
}

impl Em<'_> {
    fn new_reg(&mut self) -> Reg {
        self.f.xreg("w")
    }
}

impl Gates for Em<'_> {
    type V = Reg;
    fn xor(&mut self, a: Reg, b: Reg) -> Reg {
        let d = self.new_reg();
        kasm!(self.f, xor {d}, {a}, {b};);
        d
    }
    fn and(&mut self, a: Reg, b: Reg) -> Reg {
        let d = self.new_reg();
        kasm!(self.f, and {d}, {a}, {b};);
        d
    }
    fn not(&mut self, a: Reg) -> Reg {
        let d = self.new_reg();
        kasm!(self.f, xori {d}, {a}, -1;);
        d
    }
}

impl Words for Em<'_> {
    fn or(&mut self, a: Reg, b: Reg) -> Reg {
        let d = self.new_reg();
        kasm!(self.f, or {d}, {a}, {b};);
        d
    }
    fn ror(&mut self, a: Reg, n: u32) -> Reg {
        let d = self.new_reg();
        let n = n as i64;
        match self.rot {
            Rot::Thead => kasm!(self.f, th.srri {d}, {a}, {n};),
            Rot::Zbb => kasm!(self.f, rori {d}, {a}, {n};),
            Rot::Shifts => {
                let (t, l) = (self.new_reg(), 64 - n);
                kasm!(self.f, srli {t}, {a}, {n}; slli {d}, {a}, {l}; or {d}, {d}, {t};);
            }
        }
        d
    }
    fn srl(&mut self, a: Reg, n: u32) -> Reg {
        let d = self.new_reg();
        let n = n as i64;
        kasm!(self.f, srli {d}, {a}, {n};);
        d
    }
    fn sll(&mut self, a: Reg, n: u32) -> Reg {
        let d = self.new_reg();
        let n = n as i64;
        kasm!(self.f, slli {d}, {a}, {n};);
        d
    }
    fn zext32(&mut self, a: Reg) -> Reg {
        let d = self.new_reg();
        if self.rot == Rot::Thead {
            kasm!(self.f, th.extu {d}, {a}, 31, 0;);
        } else {
            kasm!(self.f, slli {d}, {a}, 32; srli {d}, {d}, 32;);
        }
        d
    }
    fn konst(&mut self, c: u64) -> Reg {
        let d = self.new_reg();
        let i = MASKS.iter().position(|&m| m == c).unwrap_or_else(|| panic!("{c:#018x} is not in the mask table"));
        let off = 8 * i as i64;
        match self.masks {
            Masks::Table(base) => kasm!(self.f, ld {d}, {off}({base});),
            Masks::Frame(slot) if i < slice::ROUND_MASKS => kasm!(self.f, ld {d}, {StackAt(slot, off)}(sp);),
            Masks::Frame(_) => panic!("{c:#018x} is a key schedule's mask, not in the frame's copy"),
        }
        d
    }
}

/// Byte `off` of a stack slot, as an instruction operand.
#[derive(Clone, Copy)]
struct StackAt(Slot, i64);

impl From<StackAt> for Opnd {
    fn from(s: StackAt) -> Opnd {
        Opnd::Stack { slot: s.0, off: s.1 }
    }
}

fn xor8(w: &mut Em, a: [Reg; 8], b: [Reg; 8]) -> [Reg; 8] {
    std::array::from_fn(|i| w.xor(a[i], b[i]))
}

/// `a ^ b` into `into` (the registers where paths meet), or into new registers.
fn xor8_into(w: &mut Em, a: [Reg; 8], b: [Reg; 8], into: Option<[Reg; 8]>) -> [Reg; 8] {
    match into {
        None => xor8(w, a, b),
        Some(d) => {
            for i in 0..8 {
                let (di, ai, bi) = (d[i], a[i], b[i]);
                kasm!(w.f, xor {di}, {ai}, {bi};);
            }
            d
        }
    }
}

/// Round key `i` of the schedule at `key` (byte 16i), bitsliced, `SR^shift`, 0x63 if `not63`.
fn key_words(w: &mut Em, key: Reg, off: i64, shift: u32, not63: bool) -> [Reg; 8] {
    let (lo, hi, t) = (w.new_reg(), w.new_reg(), w.new_reg());
    aes::load_key64(w.f, key, lo, off, t);
    aes::load_key64(w.f, key, hi, off + 8, t);
    slice::round_key(w, lo, hi, shift, not63)
}

/// Where a round's key words come from: made where the round adds them (so they are not
/// live across its S-box).
type Keys<'k> = &'k dyn Fn(&mut Em) -> [Reg; 8];

/// Encryption round `r` (1 .. rounds-1) on `s`, its result into `into` if given.
fn enc_round(w: &mut Em, s: [Reg; 8], r: usize, k: Keys, into: Option<[Reg; 8]>) -> [Reg; 8] {
    let s = slice::sbox(w, s);
    let s = slice::mix_columns(w, s, (r % 4) as u32);
    let k = k(w);
    xor8_into(w, s, k, into)
}

/// The last encryption round (SubBytes, the key), SR² first if `shift`.
fn enc_final(w: &mut Em, s: [Reg; 8], shift: bool, k: Keys, into: Option<[Reg; 8]>) -> [Reg; 8] {
    let s = if shift { s.map(|v| slice::shift_rows(w, v, 2)) } else { s };
    let s = slice::sbox(w, s);
    let k = k(w);
    xor8_into(w, s, k, into)
}

/// Decryption round `r` (rounds-1 .. 1): InvMixColumns, the key, InvSubBytes.
fn dec_round(w: &mut Em, s: [Reg; 8], r: usize, k: Keys) -> [Reg; 8] {
    let s = slice::inv_mix_columns(w, s, (r % 4) as u32);
    let k = k(w);
    let s = xor8(w, s, k);
    slice::inv_sbox(w, s)
}

/// The masks table's symbol.
fn masks_sym(variant: &str) -> String {
    data_sym(variant, "masks")
}

/// A data object's symbol: `kgen_aes_ct_<variant>_<what>` (the masks, the round constants,
/// the vector code's tables).
fn data_sym(variant: &str, what: &str) -> String {
    format!("kgen_aes_ct_{}_{what}", variant.replace('-', "_"))
}

fn masks_data(variant: &str) -> DataObj {
    DataObj {
        name: masks_sym(variant),
        align: 8,
        bytes: MASKS.iter().flat_map(|m| m.to_le_bytes()).collect(),
        elem: 8,
        global: false,
        comment: "the transposition's, ShiftRows' and the column rotations' masks".into(),
    }
}

// ---- one block ----------------------------------------------------------------------------

/// Where the rounds find their keys: `load(w, kp, off, r, last)` gives round `r`'s words
/// from `off` bytes past the key pointer `kp` (`last`: the final round's); the pointer starts
/// at round 1's key and moves `4 * stride` bytes per pass of the four-round loop.
struct KeySource<'a> {
    stride: i64,
    load: &'a dyn Fn(&mut Em, Reg, i64, usize, bool) -> [Reg; 8],
    /// For keys in the frame at this slot offset: the pointer is made from `sp` at each
    /// pass, `slot + (pass offset & 0x300)`, so the checks know its range.
    frame: Option<StackAt>,
}

/// Encryption rounds 1 .. rounds-1 and the last round. `sl` holds the state after round 0
/// (its registers carry the state around the four-round loop); the result goes into `fin`.
/// Rounds 1..8 (AES-128, AES-192) or 1..12 (AES-256) run as a loop of four rounds, whose
/// MixColumns rotations repeat every four rounds; then round 9 or 13, AES-192's rounds 10
/// and 11, and the last round, SR² before it if `pre[0]` (AES-128, AES-256) or `pre[1]`
/// (AES-192). The key size is public.
#[allow(clippy::too_many_arguments)]
fn enc_rounds(f: &mut Func, rot: Rot, masks: Masks, rounds: Reg, kp: Reg, sl: [Reg; 8], fin: [Reg; 8], k: &KeySource, pre: [bool; 2], side: Option<&vector::VSide>) {
    let [n, po, t] = [f.xreg("n"), f.xreg("pass_off"), f.xreg("t")];
    for r in [n, po, t] {
        f.public(r);
    }
    let st = k.stride;
    let point = |f: &mut Func| {
        if let Some(base) = k.frame {
            kasm!(f, andi {t}, {po}, 0x300; addi {kp}, sp, {base}; add {kp}, {kp}, {t};);
        }
    };
    if let Some(v) = side {
        v.seg(f, Seg::Start);
    }
    kasm!(f, addi {po}, zero, 0; rounds4:);
    point(f);
    merged(f, side, Seg::Pass, |f| {
        let mut w = Em { f, rot, masks };
        let mut s = sl;
        for j in 0..4 {
            s = enc_round(&mut w, s, j + 1, &|w| (k.load)(w, kp, st * j as i64, j + 1, false), (j == 3).then_some(sl));
        }
    });
    let (step, rest) = (4 * st, 3 * st);
    if k.frame.is_none() {
        kasm!(f, addi {kp}, {kp}, {step};);
    }
    // Passes: (rounds - 2) / 4, two or three; the loop ends when the offset reaches that
    // many steps.
    let sh = step.trailing_zeros() as i64;
    kasm!(f, addi {po}, {po}, {step}; addi {t}, {rounds}, -2; srli {t}, {t}, 2; slli {t}, {t}, {sh}; bltu {po}, {t}, rounds4;);
    point(f);
    let s9: [Reg; 8] = f.xregs("s9");
    merged(f, side, Seg::Ninth, |f| {
        let mut w = Em { f, rot, masks };
        enc_round(&mut w, sl, 9, &|w| (k.load)(w, kp, 0, 9, false), Some(s9));
    });
    kasm!(f, addi {n}, zero, 12; bne {rounds}, {n}, last_round;);
    merged(f, side, Seg::Aes192, |f| {
        let mut w = Em { f, rot, masks };
        let s = enc_round(&mut w, s9, 10, &|w| (k.load)(w, kp, st, 10, false), None);
        let s = enc_round(&mut w, s, 11, &|w| (k.load)(w, kp, 2 * st, 11, false), None);
        enc_final(&mut w, s, pre[1], &|w| (k.load)(w, kp, rest, 12, true), Some(fin));
    });
    kasm!(f, j rounds_done; last_round:);
    merged(f, side, Seg::Last, |f| {
        let mut w = Em { f, rot, masks };
        enc_final(&mut w, s9, pre[0], &|w| (k.load)(w, kp, st, 10, true), Some(fin));
    });
    kasm!(f, rounds_done:);
}

/// The scalar part `scalar`, merged with the vector side's part `seg` when there is one.
fn merged(f: &mut Func, side: Option<&vector::VSide>, seg: Seg, scalar: impl FnOnce(&mut Func)) {
    match side {
        Some(v) => f.merge(|f| v.seg(f, seg), scalar),
        None => scalar(f),
    }
}

/// `AES_encrypt` / `AES_decrypt`: the block in all four lanes; each round key bitsliced
/// from the `AES_KEY` where its round adds it.
fn block_fn(e: &'static Entry, variant: &str, t: &Target, abi: Abi, inverse: bool) -> Func {
    let mut f = Func::entry(e, variant, t, abi);
    let (inp, out, key, rounds) = if abi == Abi::Linux {
        let [key, rounds, out, inp] = f.params();
        (inp, out, key, rounds)
    } else {
        let [inp, out, key] = f.params();
        let rounds = f.xreg("rounds");
        f.public(rounds);
        kasm!(f, lw {rounds}, 240({key}););
        (inp, out, key, rounds)
    };
    if let Some(d) = t.vdialect() {
        if inverse {
            vector::vperm_decrypt(&mut f, d, &data_sym(variant, "vperm_dec"), inp, out, key, rounds);
        } else {
            vector::vperm_encrypt(&mut f, d, &data_sym(variant, "vperm"), inp, out, key, rounds);
        }
        f.ret();
        return f;
    }
    let masks = masks_in_frame(&mut f, variant);
    let [lo, hi] = [f.xreg("lo"), f.xreg("hi")];
    let tmp = f.xregs::<4>("ld");
    aes::load_block(&mut f, tmp, inp, [lo, hi]);
    let rot = rot_of(t);
    let mut w = Em { f: &mut f, rot, masks };
    let packed = slice::round_key(&mut w, lo, hi, 0, false);
    let fin = cipher4(&mut f, rot, masks, key, rounds, packed, inverse);
    let mut w = Em { f: &mut f, rot, masks };
    let lanes = slice::unpack(&mut w, fin);
    let (olo, ohi) = lanes[0];
    let n = f.xreg("n");
    store16(&mut f, out, [olo, ohi], n);
    f.ret();
    f
}

/// The cipher on four packed blocks, `packed` ([`slice::pack`]), with the schedule at
/// `key` (the decryption schedule if `inverse`): the result's planes.
fn cipher4(f: &mut Func, rot: Rot, masks: Masks, key: Reg, rounds: Reg, packed: [Reg; 8], inverse: bool) -> [Reg; 8] {
    let [n, kp, cnt] = [f.xreg("n"), f.xreg("kp"), f.xreg("passes")];
    for r in [n, kp, cnt] {
        f.public(r);
    }
    let sl: [Reg; 8] = f.xregs("sl");
    let fin: [Reg; 8] = f.xregs("fin");
    // The schedule's round keys, bitsliced where they are added: SR^-(r mod 4) but the last.
    let schedule = |w: &mut Em, kp: Reg, off: i64, r: usize, last: bool| key_words(w, kp, off, if last { 0 } else { slice::key_shift(r) }, true);
    let src = KeySource { stride: 16, load: &schedule, frame: None };
    if !inverse {
        let mut w = Em { f: &mut *f, rot, masks };
        let k = key_words(&mut w, key, 0, 0, false);
        xor8_into(&mut w, packed, k, Some(sl));
        kasm!(f, addi {kp}, {key}, 16;);
        enc_rounds(f, rot, masks, rounds, kp, sl, fin, &src, [slice::final_shift(10), slice::final_shift(12)], None);
    } else {
        // The decryption schedule's key i is round rounds-i's: the last round's first. Its
        // rounds rounds-1 .. 1 take MixColumns' rotations of r mod 4 = 3, 2 (AES-192's two
        // extra rounds), then 1, 0, 3, 2 in a loop, then 1.
        let mut w = Em { f: &mut *f, rot, masks };
        let k = key_words(&mut w, key, 0, 0, true);
        let s = xor8(&mut w, packed, k);
        let s = slice::inv_sbox(&mut w, s);
        kasm!(f, addi {n}, zero, 12; bne {rounds}, {n}, not192;);
        let mut w = Em { f: &mut *f, rot, masks };
        let s11 = dec_round(&mut w, s, 11, &|w| key_words(w, key, 16, slice::key_shift(11), true));
        let s10 = dec_round(&mut w, s11, 10, &|w| key_words(w, key, 32, slice::key_shift(10), true));
        for (a, b) in sl.into_iter().zip(s10) {
            w.f.mv(a, b);
        }
        kasm!(f, addi {kp}, {key}, 48; addi {cnt}, zero, 2; j rounds4; not192:);
        let mut w = Em { f: &mut *f, rot, masks };
        let sr: [Reg; 8] = s.map(|v| slice::shift_rows(&mut w, v, 2));
        for (a, b) in sl.into_iter().zip(sr) {
            w.f.mv(a, b);
        }
        kasm!(f, addi {kp}, {key}, 16; addi {cnt}, zero, 2; addi {n}, zero, 14; bne {rounds}, {n}, rounds4; addi {cnt}, zero, 3; rounds4:);
        let mut w = Em { f: &mut *f, rot, masks };
        let mut s = sl;
        for j in 0..4usize {
            let r = [1, 0, 3, 2][j];
            s = dec_round(&mut w, s, r, &|w| key_words(w, kp, 16 * j as i64, slice::key_shift(r), true));
        }
        for (a, b) in sl.into_iter().zip(s) {
            w.f.mv(a, b);
        }
        kasm!(f, addi {kp}, {kp}, 64; addi {cnt}, {cnt}, -1; bnez {cnt}, rounds4;);
        let mut w = Em { f: &mut *f, rot, masks };
        let s = dec_round(&mut w, sl, 1, &|w| key_words(w, kp, 0, slice::key_shift(1), true));
        let k = key_words(&mut w, kp, 16, 0, false);
        xor8_into(&mut w, s, k, Some(fin));
    }
    fin
}

/// Linux's ECB over whole blocks: four blocks a pass through [`cipher4`] (a last pass of one
/// to three repeats its first block in the lanes left over and stores only its own).
fn ecb_fn(e: &'static Entry, variant: &str, t: &Target, inverse: bool) -> Func {
    let mut f = Func::entry(e, variant, t, Abi::Linux);
    let [key, rounds, out, inp, nblocks] = f.params();
    let [p, c] = [f.xreg("p"), f.xreg("c")];
    for r in [p, c] {
        f.public(r);
    }
    kasm!(f, bnez {nblocks}, start; j done; start:);
    let masks = masks_in_frame(&mut f, variant);
    let rot = rot_of(t);
    kasm!(f, group:);
    let tmp = f.xregs::<4>("ld");
    let blocks: [(Reg, Reg); 4] = std::array::from_fn(|j| {
        let (lo, hi) = (f.xreg("lo"), f.xreg("hi"));
        let (jj, o) = (j as i64, 16 * j as i64);
        f.scope(|f| {
            if j == 0 {
                aes::load_block(f, tmp, inp, [lo, hi]);
            } else {
                kasm!(f, addi {p}, {inp}, 0; addi {c}, zero, {jj}; bgeu {c}, {nblocks}, first; addi {p}, {inp}, {o}; first:);
                aes::load_block(f, tmp, p, [lo, hi]);
            }
        });
        (lo, hi)
    });
    let mut w = Em { f: &mut f, rot, masks };
    let packed = slice::pack(&mut w, blocks);
    let fin = cipher4(&mut f, rot, masks, key, rounds, packed, inverse);
    let mut w = Em { f: &mut f, rot, masks };
    let lanes = slice::unpack(&mut w, fin);
    for (j, (lo, hi)) in lanes.into_iter().enumerate() {
        if j == 0 {
            f.scope(|f| store16(f, out, [lo, hi], c));
        } else {
            let (jj, o) = (j as i64, 16 * j as i64);
            f.scope(|f| {
                kasm!(f, addi {c}, zero, {jj}; bgeu {c}, {nblocks}, skip; addi {p}, {out}, {o};);
                store16(f, p, [lo, hi], c);
                kasm!(f, skip:);
            });
        }
    }
    kasm!(f,
        addi {c}, zero, 4;
        bgeu {c}, {nblocks}, done;
        addi {nblocks}, {nblocks}, -4;
        addi {inp}, {inp}, 64;
        addi {out}, {out}, 64;
        j group;
    done:
    );
    f.ret();
    f
}

/// The 16 bytes at `p` = (d0, d1), little-endian; where misaligned doublewords are slow, a
/// misaligned `p` byte by byte, an aligned one through `p & -8` (see [`aligned_pointers`]).
fn store16(f: &mut Func, p: Reg, d: [Reg; 2], t: Reg) {
    let [d0, d1] = d;
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, sd {d0}, 0({p}); sd {d1}, 8({p}););
        return;
    }
    kasm!(f, andi {t}, {p}, 7; bnez {t}, out_unaligned; andi {t}, {p}, -8; sd {d0}, 0({t}); sd {d1}, 8({t}); out_stored:);
    f.cold(|f| {
        kasm!(f, out_unaligned:);
        aes::store_bytes16(f, p, d);
        kasm!(f, j out_stored;);
    });
}

// ---- counter mode -------------------------------------------------------------------------

/// The counter's big-endian bytes of one block (`ctr`, a 32-bit value) as the transposition
/// takes them: bytes 12..16 of a block are row 0..3 of column 3, which [`slice::gather`]
/// puts in byte slots 1, 3, 5, 7 of its second word.
fn counter_word(w: &mut Em, ctr: Reg) -> Reg {
    let b = w.new_reg();
    match w.rot {
        Rot::Thead => kasm!(w.f, th.revw {b}, {ctr}; th.extu {b}, {b}, 31, 0;),
        Rot::Zbb => kasm!(w.f, rev8 {b}, {ctr}; srli {b}, {b}, 32;),
        Rot::Shifts => {
            let (t, u) = (w.new_reg(), w.new_reg());
            kasm!(w.f,
                slli {b}, {ctr}, 24; srliw {t}, {ctr}, 24; or {b}, {b}, {t};
                srliw {t}, {ctr}, 8; andi {t}, {t}, 255; slli {t}, {t}, 16; or {b}, {b}, {t};
                srliw {t}, {ctr}, 16; andi {t}, {t}, 255; slli {u}, {t}, 8; or {b}, {b}, {u};
                slli {b}, {b}, 32; srli {b}, {b}, 32;
            );
        }
    }
    // bytes b0 b1 b2 b3 -> slots 1, 3, 5, 7
    let t = w.sll(b, 16);
    let b = w.or(b, t);
    let m = w.konst(MASKS[13]);
    let b = w.and(b, m);
    let t = w.sll(b, 8);
    let b = w.or(b, t);
    let m = w.konst(MASKS[7]);
    let b = w.and(b, m);
    w.sll(b, 8)
}

/// The transposition of four counter columns (`g[j]` from [`counter_word`]; the words of
/// columns 0..2 are zero, so half the swaps have nothing to do).
fn counter_planes(w: &mut Em, g: [Reg; 4]) -> [Reg; 8] {
    let m = w.konst(MASKS[0]);
    let (t5, t4) = slice::swapmove(w, g[1], g[0], 1, m);
    let (t7, t6) = slice::swapmove(w, g[3], g[2], 1, m);
    let m = w.konst(MASKS[1]);
    let (t6, t4) = slice::swapmove(w, t6, t4, 2, m);
    let (t7, t5) = slice::swapmove(w, t7, t5, 2, m);
    let m = w.konst(MASKS[2]);
    let mut out = [t4, t5, t6, t7, t4, t5, t6, t7];
    for i in 0..4 {
        // swapmove(t[4+i], 0, 4, m): the low word receives what leaves the high one.
        let t = w.and(out[4 + i], m);
        out[4 + i] = w.xor(out[4 + i], t);
        out[i] = w.sll(t, 4);
    }
    out
}

/// Counter mode's function for `abi` and its parameters in the OpenSSL form's order: in,
/// out, blocks, the key (Linux: the round keys), ivec; and Linux's `nrounds`.
fn ctr32_entry(variant: &str, t: &Target, abi: Abi) -> (Func, [Reg; 5], Option<Reg>) {
    let linux = abi == Abi::Linux;
    let mut f = Func::entry(if linux { &LINUX_CTR32 } else { &CTR32 }, variant, t, abi);
    if linux {
        let [rk, nrounds, out, inp, blocks, iv] = f.params();
        (f, [inp, out, blocks, rk, iv], Some(nrounds))
    } else {
        let p = f.params();
        (f, p, None)
    }
}

/// `rounds` from the key: Linux's `nrounds` argument, or `AES_KEY`'s `rounds` at 240.
fn load_rounds(f: &mut Func, key: Reg, nrounds: Option<Reg>, rounds: Reg) {
    match nrounds {
        Some(n) => f.mv(rounds, n),
        None => kasm!(f, lw {rounds}, 240({key});),
    }
}

fn ctr32_fn(variant: &str, t: &Target, abi: Abi) -> Func {
    if let Some(d @ VDialect::V1) = t.vdialect() {
        return ctr32_vector_only(variant, t, abi, d);
    }
    let (mut f, io, nrounds) = ctr32_entry(variant, t, abi);
    ctr32_body(&mut f, variant, t, io, nrounds);
    f
}

/// `AES_ctr32_encrypt`'s body (the scalar and XTheadVector variants), on `io` = in, out,
/// blocks, key, ivec (in, out and blocks are consumed) and the round count `nrounds` if the
/// caller has it (else the `AES_KEY`'s): a function of its own, or inlined in another
/// ([`Func::inline`]: `aes-gcm-ct`'s bulk functions), with the data objects of
/// [`data_objects`] in its module.
pub(crate) fn ctr32_body(f: &mut Func, variant: &str, t: &Target, io: [Reg; 5], nrounds: Option<Reg>) {
    let [inp, out, blocks, key, ivec] = io;
    let rot = rot_of(t);
    // Round keys 0..=14, and two slots more: the keys are made in a loop of four through a
    // pointer whose range the checks see as up to 0x300 past round 1's.
    let kbuf = f.slot("round_keys", 17 * 64, 8, true);
    // Linux's `nrounds` argument is the round count itself; else it is loaded from the key.
    let rounds = nrounds.unwrap_or_else(|| f.xreg("rounds"));
    let [n, ctr] = [f.xreg("n"), f.xreg("ctr")];
    for r in [rounds, n, ctr] {
        f.public(r);
    }
    let ks = |r: usize, p: usize| StackAt(kbuf, 64 * r as i64 + 8 * p as i64);
    kasm!(f, bnez {blocks}, start; j done; start:);
    let thead = t.vdialect() == Some(VDialect::Thead);
    if thead {
        if nrounds.is_none() {
            load_rounds(f, key, None, rounds);
        }
        f.comment("up to FEW_FIRST blocks: one at a time by nibble lookups (a bitsliced pass computes twelve)");
        let c = f.xreg("c");
        f.public(c);
        kasm!(f, addi {n}, zero, {FEW_FIRST}; bltu {n}, {blocks}, many; lwu {c}, 12({ivec}); th.revw {ctr}, {c}; j few; many:);
    }
    let masks = masks_in_frame(f, variant);
    if !thead && nrounds.is_none() {
        load_rounds(f, key, None, rounds);
    }
    f.comment("the round keys, bitsliced, into the frame: round r's at 64r. Zeros first (every key's bytes are then written before they are read, which the loop's stores cannot show)");
    for r in 1..=16 {
        for p in 0..8 {
            kasm!(f, sd zero, {ks(r, p)}(sp););
        }
    }
    // Round r's key at 64(r-1) past `kd`: SR^-(r mod 4) and 0x63, the last one SR²-shifted
    // (the rounds leave SR² of the output's planes, and each block's bytes are swapped back
    // after the transposition: 4 instructions a block instead of 6 a plane).
    let [ka, kd, po, tt] = [f.xreg("ka"), f.xreg("kd"), f.xreg("pass_off"), f.xreg("t")];
    for r in [ka, kd, po, tt] {
        f.public(r);
    }
    let make = |f: &mut Func, off: i64, shift: u32, to: i64| {
        let mut w = Em { f: &mut *f, rot, masks };
        let k = key_words(&mut w, ka, off, shift, true);
        for (p, v) in k.into_iter().enumerate() {
            let o = to + 8 * p as i64;
            kasm!(f, sd {v}, {o}({kd}););
        }
    };
    let point = |f: &mut Func| kasm!(f, andi {tt}, {po}, 0x300; addi {kd}, sp, {ks(1, 0)}; add {kd}, {kd}, {tt};);
    // Four keys a pass, SR^-1, SR^-2, SR^-3, SR^0 (key_shift of 1, 2, 3, 4 mod 4); a pass
    // ends after its second key once `rounds` keys are made: rounds 10 and 14 end there,
    // and their last key's SR² is key_shift(2). Rounds 12 end after a whole pass, whose
    // last key (12) is made again SR²-shifted. One loop for every key size keeps the
    // function under 16 KiB of code, one way of the C906's instruction cache (at 18 KiB the
    // RTL missed in it at every call: docs/cost-model.md).
    let lim = f.xreg("keys_end");
    f.public(lim);
    kasm!(f, slli {lim}, {rounds}, 6; addi {ka}, {key}, 16; addi {po}, zero, 0; keys4:);
    point(f);
    for j in 0..2usize {
        make(f, 16 * j as i64, slice::key_shift(j + 1), 64 * j as i64);
    }
    kasm!(f, addi {tt}, {po}, 128; bgeu {tt}, {lim}, keys_done;);
    for j in 2..4usize {
        make(f, 16 * j as i64, slice::key_shift(j + 1), 64 * j as i64);
    }
    kasm!(f, addi {ka}, {ka}, 64; addi {po}, {po}, 256; bltu {po}, {lim}, keys4; j keys12;);
    kasm!(f, keys_done:);
    f.cold(|f| {
        f.comment("rounds 12: key 12 again, SR²-shifted");
        kasm!(f, keys12:);
        make(f, -16, 2, 192);
        kasm!(f, j keys_done;);
    });
    f.comment("the nonce (ivec[0..12]) bitsliced with round key 0, in round key 0's place; the counter");
    let [lo, hi] = [f.xreg("lo"), f.xreg("hi")];
    let tmp = f.xregs::<4>("ld");
    aes::load_block(f, tmp, ivec, [lo, hi]);
    let mut w = Em { f, rot, masks };
    let nhi = w.zext32(hi);
    let s = slice::round_key(&mut w, lo, nhi, 0, false);
    let k = key_words(&mut w, key, 0, 0, false);
    let s = xor8(&mut w, s, k);
    for (p, v) in s.into_iter().enumerate() {
        kasm!(w.f, sd {v}, {ks(0, p)}(sp););
    }
    let c = w.srl(hi, 32);
    match rot {
        Rot::Thead => kasm!(f, th.revw {ctr}, {c};),
        _ => {
            // The counter block's bytes 12..16 as the big-endian value: counter_word's
            // byte swap undone (a swap of a swap), on the value's four bytes.
            let mut w = Em { f, rot, masks };
            let v = counter_word_value(&mut w, c);
            f.mv(ctr, v);
        }
    }
    let [sl, fin]: [[Reg; 8]; 2] = [f.xregs("sl"), f.xregs("fin")];
    let from_frame = |w: &mut Em, kp: Reg, off: i64, _r: usize, _last: bool| -> [Reg; 8] {
        std::array::from_fn(|p| {
            let k = w.new_reg();
            let o = off + 8 * p as i64;
            kasm!(w.f, ld {k}, {o}({kp}););
            k
        })
    };
    let kp = f.xreg("kp");
    f.public(kp);
    let src = KeySource { stride: 64, load: &from_frame, frame: Some(ks(1, 0)) };
    let pre = [!slice::final_shift(10), !slice::final_shift(12)];
    if let Some(d) = t.vdialect() {
        let c = Ctr { rot, masks, ks: ks(0, 0), ctr, sl, fin };
        vector_ctr(f, &c, d, variant, [inp, out, blocks, key, rounds], [lo, hi], ivec, |f, side| enc_rounds(f, rot, masks, rounds, kp, sl, fin, &src, pre, Some(side)));
        return;
    }
    kasm!(f, four:);
    f.comment("four counter blocks: the nonce's planes ^ the counters' planes");
    let c = Ctr { rot, masks, ks: ks(0, 0), ctr, sl, fin };
    counter_state(f, &c, 0);
    f.comment("the rounds: every key size's last round leaves SR² of its planes (see the keys above)");
    enc_rounds(f, rot, masks, rounds, kp, sl, fin, &src, pre, None);
    kasm!(f, keystream:);
    let ksw = keystream(f, &c);
    let [a, b] = [f.xreg("a"), f.xreg("b")];
    kasm!(f, addi {n}, zero, 4; bltu {blocks}, {n}, tail;);
    let slow = t.misaligned == Misaligned::Slow;
    if slow {
        kasm!(f, or {a}, {inp}, {out}; andi {a}, {a}, 7; bnez {a}, four_bytes;);
    }
    f.comment("out = in ^ keystream, four blocks");
    let (pi, po) = aligned_pointers(f, inp, out, slow);
    for (i, k) in ksw.into_iter().enumerate() {
        let off = 8 * i as i64;
        kasm!(f, ld {a}, {off}({pi}); xor {a}, {a}, {k}; sd {a}, {off}({po}););
    }
    kasm!(f, four_next:
        addi {inp}, {inp}, 64;
        addi {out}, {out}, 64;
        addi {blocks}, {blocks}, -4;
        addiw {ctr}, {ctr}, 4;
        bnez {blocks}, four;
        j done;
    );
    if slow {
        f.cold(|f| {
            kasm!(f, four_bytes:);
            xor_bytes(f, inp, out, &ksw, 64, a, b);
            kasm!(f, j four_next;);
        });
    }
    f.comment("one to three blocks left: as many keystream blocks, a block at a time");
    kasm!(f, tail:);
    for j in 0..3 {
        let jj = j as i64 + 1;
        let k = [ksw[2 * j], ksw[2 * j + 1]];
        let off = 16 * j as i64;
        if slow {
            f.scope(|f| {
                kasm!(f, or {a}, {inp}, {out}; andi {a}, {a}, 7; bnez {a}, bytes;);
                let (pi, po) = aligned_pointers(f, inp, out, true);
                for (h, kw) in k.into_iter().enumerate() {
                    let o = off + 8 * h as i64;
                    kasm!(f, ld {a}, {o}({pi}); xor {a}, {a}, {kw}; sd {a}, {o}({po}););
                }
                kasm!(f, j next; bytes:);
                let (pi, po) = (f.xreg("pi"), f.xreg("po"));
                kasm!(f, addi {pi}, {inp}, {off}; addi {po}, {out}, {off};);
                xor_bytes(f, pi, po, &k, 16, a, b);
                kasm!(f, next:);
            });
        } else {
            for (h, kw) in k.into_iter().enumerate() {
                let o = off + 8 * h as i64;
                kasm!(f, ld {a}, {o}({inp}); xor {a}, {a}, {kw}; sd {a}, {o}({out}););
            }
        }
        if j < 2 {
            kasm!(f, addi {n}, zero, {jj}; beq {blocks}, {n}, done;);
        }
    }
    kasm!(f, done:);
    f.ret();
}

/// What the scalar counter-mode pass works with: the round-0 planes of the nonce at `ks`
/// in the frame, the counter, the state's registers at the loop's edges.
struct Ctr {
    rot: Rot,
    masks: Masks,
    ks: StackAt,
    ctr: Reg,
    sl: [Reg; 8],
    fin: [Reg; 8],
}

/// The state after round 0 of four counter blocks, `ctr + off` to `ctr + off + 3`, into
/// `c.sl`: the nonce's planes ^ the counters' planes.
fn counter_state(f: &mut Func, c: &Ctr, off: i64) {
    let mut w = Em { f, rot: c.rot, masks: c.masks };
    let ctr = c.ctr;
    let g: [Reg; 4] = std::array::from_fn(|j| {
        let cj = w.new_reg();
        let jj = j as i64 + off;
        kasm!(w.f, addiw {cj}, {ctr}, {jj};);
        counter_word(&mut w, cj)
    });
    let col = counter_planes(&mut w, g);
    let k0: [Reg; 8] = std::array::from_fn(|p| {
        let k = w.new_reg();
        let at = StackAt(c.ks.0, c.ks.1 + 8 * p as i64);
        kasm!(w.f, ld {k}, {at}(sp););
        k
    });
    xor8_into(&mut w, col, k0, Some(c.sl));
}

/// The four keystream blocks from the planes in `c.fin` (which hold SR² of them), as eight
/// words in memory order.
fn keystream(f: &mut Func, c: &Ctr) -> [Reg; 8] {
    let mut w = Em { f: &mut *f, rot: c.rot, masks: c.masks };
    let lanes = slice::unpack(&mut w, c.fin);
    f.comment("SR² of each block: bytes 1, 3, 5, 7 trade places with bytes 9, 11, 13, 15");
    let mut w = Em { f, rot: c.rot, masks: c.masks };
    let m = w.konst(MASKS[14]);
    let lanes = lanes.map(|(lo, hi)| {
        let t = w.xor(lo, hi);
        let t = w.and(t, m);
        (w.xor(lo, t), w.xor(hi, t))
    });
    std::array::from_fn(|i| if i % 2 == 0 { lanes[i / 2].0 } else { lanes[i / 2].1 })
}

/// Blocks of a pass of counter mode with XTheadVector (variant `c906`): eight in the vector
/// registers, four in the scalar words.
pub(crate) const PASS_BLOCKS: i64 = 12;

/// Counter mode with the vector unit: twelve blocks a pass, blocks 0..8 bitsliced in the
/// vector registers and 8..12 in the scalar words, every pass (the last one too, whose
/// surplus keystream is not used) through `rounds` (the scalar rounds with the vector side
/// merged in). `io` = in, out, blocks, key, rounds; `ivec` = the counter block's words.
fn vector_ctr(f: &mut Func, c: &Ctr, d: VDialect, variant: &str, io: [Reg; 5], ivec: [Reg; 2], ivp: Reg, rounds_fn: impl Fn(&mut Func, &vector::VSide)) {
    let [inp, out, blocks, key, rounds] = io;
    let ctr = c.ctr;
    let (sg, fg) = (f.vreg("vsl", 8), f.vreg("vfin", 8));
    let perms = vector::Tabs::Frame(f.slot("perms", 192, 16, false));
    let v = vector::VSide::new(f, d, data_sym(variant, "perms"), perms, 16, fg);
    let cbuf = f.slot("counter_blocks", 128, 16, true);
    vector::set_vl16(f);
    f.comment("the vector round keys into the frame: round r's bytes at 16(r-1)");
    vector::make_keys(f, &v, key, rounds, None);
    f.comment("eight counter blocks in the frame, ^ round key 0: the nonce's now, the counters' every pass");
    let [lo, hi] = ivec;
    let [k0a, k0b, k03] = [f.xreg("k0"), f.xreg("k1"), f.xreg("k03")];
    aes::load_key64(f, key, k0a, 0, k03);
    aes::load_key64(f, key, k0b, 8, k03);
    kasm!(f, xor {k0a}, {k0a}, {lo}; xor {k0b}, {k0b}, {hi}; srli {k03}, {k0b}, 32;);
    for j in 0..8i64 {
        let (a, b) = (StackAt(cbuf, 16 * j), StackAt(cbuf, 16 * j + 8));
        kasm!(f, sd {k0a}, {a}(sp); sd {k0b}, {b}(sp););
    }
    let n = f.xreg("n");
    f.public(n);
    kasm!(f, twelve:);
    f.merge(
        |f| {
            f.comment("vector: counters ctr .. ctr+7 (^ round key 0) into the blocks, which hold the nonce ^ round key 0; the blocks as bit planes");
            let k3 = f.xreg("k03");
            f.public(k3);
            kasm!(f, lwu {k3}, 12({key}););
            for j in 0..8i64 {
                let (cj, at) = (f.xreg("c"), StackAt(cbuf, 16 * j + 12));
                f.public(cj);
                kasm!(f, addiw {cj}, {ctr}, {j}; th.revw {cj}, {cj}; xor {cj}, {cj}, {k3}; sw {cj}, {at}(sp););
            }
            let (a, at) = (f.xreg("a"), StackAt(cbuf, 0));
            f.public(a);
            kasm!(f, addi {a}, sp, {at}; addi {n}, zero, 128;);
            vector::set_vl_m8(f, n);
            load(f, d, sg, a);
            vector::transpose_group(f, sg, None);
            for (p, &sp) in v.sl.iter().enumerate() {
                let part = f.vpart(sg, p as u8, 1);
                kasm!(f, vmv.v.v {sp}, {part};);
            }
        },
        |f| {
            f.comment("scalar: counters ctr+8 .. ctr+11");
            counter_state(f, c, 8);
        },
    );
    rounds_fn(f, &v);
    let mut ksw = [c.fin[0]; 8];
    f.merge(|f| vector::transpose_group(f, fg, None), |f| ksw = keystream(f, c));
    // out = in ^ keystream: blocks 0..8 at e8, m8 (vl = 16 a block), blocks 8..12 by
    // scalar words (the C906 loads and stores misaligned words at full speed).
    let vblocks = |f: &mut Func, nb: Reg| {
        let (a, x) = (f.xreg("a"), f.vreg("x", 8));
        f.public(a);
        vector::set_vl_m8(f, nb);
        load(f, d, x, inp);
        kasm!(f, vxor.vv {x}, {x}, {fg};);
        store(f, d, x, out);
    };
    let sblock = |f: &mut Func, j: usize| {
        for h in 0..2 {
            let (a, o, k) = (f.xreg("a"), 16 * j as i64 + 8 * h as i64, ksw[2 * (j - 8) + h]);
            kasm!(f, ld {a}, {o}({inp}); xor {a}, {a}, {k}; sd {a}, {o}({out}););
        }
    };
    kasm!(f, addi {n}, zero, {PASS_BLOCKS}; bltu {blocks}, {n}, partial;);
    f.comment("out = in ^ keystream, twelve blocks");
    f.merge(
        |f| {
            kasm!(f, addi {n}, zero, 128;);
            vblocks(f, n);
        },
        |f| {
            for j in 8..12 {
                sblock(f, j);
            }
        },
    );
    kasm!(f,
        addi {inp}, {inp}, {16 * PASS_BLOCKS};
        addi {out}, {out}, {16 * PASS_BLOCKS};
        addi {blocks}, {blocks}, {-PASS_BLOCKS};
        addiw {ctr}, {ctr}, {PASS_BLOCKS};
        beqz {blocks}, done;
        addi {n}, zero, {FEW};
        bltu {n}, {blocks}, twelve;
        j few;
    );
    f.comment("fewer than twelve blocks: as many of the pass's keystream blocks (vl = 16 min(blocks, 8))");
    let nb = f.xreg("nb");
    f.public(nb);
    kasm!(f,
    partial:
        addi {n}, zero, 8;
        addi {nb}, {blocks}, 0;
        bgeu {n}, {blocks}, short;
        addi {nb}, zero, 8;
    short:
        slli {nb}, {nb}, 4;
    );
    vblocks(f, nb);
    for j in 8..12 {
        let jj = j as i64;
        kasm!(f, addi {n}, zero, {jj}; bgeu {n}, {blocks}, done;);
        sblock(f, j);
    }
    kasm!(f, j done;);
    few_blocks(f, d, variant, [inp, out, blocks, key, rounds], ivp, ctr);
    kasm!(f, done:);
    f.ret();
}

/// Most blocks a call's last pass leaves to [`few_blocks`]: a nibble-lookup block costs
/// about a quarter of a twelve-block pass.
const FEW: i64 = 4;
/// Most blocks a call hands to [`few_blocks`] from its start, which also saves making the
/// bitsliced round keys (`kgen bench aes-ct` at 16 to 144 bytes shows the crossing).
const FEW_FIRST: i64 = 6;

/// `few:` `blocks` (1 ..= [`FEW_FIRST`]) counter blocks from `ctr` on, one at a time by nibble
/// lookups ([`vector::perm_rounds`], the `AES_KEY`'s own round keys): the block is
/// ivec's nonce with the big-endian counter, made in the frame.
fn few_blocks(f: &mut Func, d: VDialect, variant: &str, io: [Reg; 5], ivp: Reg, ctr: Reg) {
    let [inp, out, blocks, key, rounds] = io;
    let cb = f.slot("few_block", 16, 16, true);
    let [a, c] = [f.xreg("a"), f.xreg("c")];
    f.public(a);
    kasm!(f, few:);
    let tabs = vector::perm_tables(f, d, &data_sym(variant, "vperm"));
    let [nv, k0, s, x] = [f.vreg("nonce", 1), f.vreg("k0", 1), f.vreg("s", 1), f.vreg("x", 1)];
    kasm!(f, addi {a}, sp, {StackAt(cb, 0)};);
    load(f, d, nv, ivp);
    store(f, d, nv, a);
    load(f, d, k0, key);
    kasm!(f, few_block:);
    f.comment("s = the counter block ^ round key 0; out = in ^ its encryption");
    kasm!(f, th.revw {c}, {ctr}; sw {c}, {StackAt(cb, 12)}(sp); addi {a}, sp, {StackAt(cb, 0)};);
    load(f, d, s, a);
    kasm!(f, vxor.vv {s}, {s}, {k0};);
    let y = vector::perm_rounds(f, d, &tabs, s, key, rounds);
    load(f, d, x, inp);
    kasm!(f, vxor.vv {x}, {x}, {y};);
    store(f, d, x, out);
    kasm!(f,
        addi {inp}, {inp}, 16;
        addi {out}, {out}, 16;
        addiw {ctr}, {ctr}, 1;
        addi {blocks}, {blocks}, -1;
        bnez {blocks}, few_block;
    );
}

/// Counter mode in the vector unit alone (RVV 1.0, VLEN 128 to 512): VLEN / 16 blocks a
/// pass (eight registers of VLEN / 8 bytes: the bitsliced layout of [`vslice`] in every
/// 16-byte group), so each doubling of VLEN halves the vector instructions per byte.
/// A pass's counter blocks: the nonce ^ round key 0 copied to every block of the registers
/// by a gather and stored to the frame, the counters (big-endian, ^ round key 0) stored
/// over every block's last word by a strided store, the blocks loaded back.
fn ctr32_vector_only(variant: &str, t: &Target, abi: Abi, d: VDialect) -> Func {
    let (mut f, [inp, out, blocks, key, ivec], nrounds) = ctr32_entry(variant, t, abi);
    let [rounds, big, vlm, n, m, ctr, k3, nb] = [f.xreg("rounds"), f.xreg("big"), f.xreg("vlmax"), f.xreg("n"), f.xreg("m"), f.xreg("ctr"), f.xreg("k03"), f.xreg("nb")];
    for r in [rounds, big, vlm, n, m, ctr, nb] {
        f.public(r);
    }
    kasm!(f, bnez {blocks}, start; j done; start:);
    load_rounds(&mut f, key, nrounds, rounds);
    let fg = f.vreg("vfin", 8);
    let v = vector::VSide::new(&mut f, d, data_sym(variant, "perms"), vector::Tabs::Data(data_sym(variant, "wide")), 64, fg);
    f.comment("vl = VLMAX from here on (an AVL of 2047 is at least VLMAX at e8, m8 up to VLEN 2047)");
    kasm!(f, addi {big}, zero, 2047; vsetvli {vlm}, {big}, e8, m1, ta, ma;);
    f.comment("the vector round keys into the frame: round r's at 64(r-1), in every 16-byte group");
    vector::make_keys(&mut f, &v, key, rounds, Some(big));
    f.comment("the nonce ^ round key 0 (16 bytes), the counter, round key 0's last word");
    let [nk, k0, rep] = [f.vreg("nk", 1), f.vreg("k0", 1), f.vreg("rep", 1)];
    kasm!(f, addi {n}, zero, 16; vsetvli zero, {n}, e8, m1, ta, ma;);
    load(&mut f, d, nk, ivec);
    load(&mut f, d, k0, key);
    kasm!(f,
        vxor.vv {nk}, {nk}, {k0};
        vsetvli zero, {big}, e8, m1, ta, ma;
        vid.v {rep};
        vand.vi {rep}, {rep}, 15;
        lwu {k3}, 12({key});
        lbu {ctr}, 12({ivec});
        lbu {m}, 13({ivec});
        slli {ctr}, {ctr}, 8;
        or {ctr}, {ctr}, {m};
        lbu {m}, 14({ivec});
        slli {ctr}, {ctr}, 8;
        or {ctr}, {ctr}, {m};
        lbu {m}, 15({ivec});
        slli {ctr}, {ctr}, 8;
        or {ctr}, {ctr}, {m};
    );
    let blocks_rep = f.vreg("nonce", 1);
    kasm!(f, vrgather.vv {blocks_rep}, {nk}, {rep};);
    let cb = f.vreg("blocks", 8);
    let [cc, ct, cu] = [f.vreg("ctrs", 2), f.vreg("t", 2), f.vreg("u", 2)];
    // The pass's counter blocks in the frame: VLEN / 16 blocks of 16 bytes.
    let cbuf = f.slot("counter_blocks", 512, 16, true);
    let (at, at12) = (StackAt(cbuf, 0), StackAt(cbuf, 12));
    kasm!(f, pass:);
    f.comment("the pass's blocks: the nonce's copies into the frame, the counters ctr + b (big-endian, ^ round key 0) over block b's last word, the blocks back");
    for j in 0..8u8 {
        let pj = f.vpart(cb, j, 1);
        kasm!(f, vmv.v.v {pj}, {blocks_rep};);
    }
    kasm!(f, vsetvli zero, {big}, e8, m8, ta, ma; addi {m}, sp, {at};);
    store(&mut f, d, cb, m);
    kasm!(f,
        vsetvli zero, {big}, e32, m2, ta, ma;
        vid.v {cc};
        vadd.vx {cc}, {cc}, {ctr};
        vsll.vi {ct}, {cc}, 24;
        vsrl.vi {cc}, {cc}, 8;
        lui {m}, 16;
        addi {m}, {m}, -256;
        vand.vx {cu}, {cc}, {m};
        vor.vv {ct}, {ct}, {cu};
        vsrl.vi {cu}, {cc}, 16;
        vor.vv {ct}, {ct}, {cu};
        vsll.vi {cc}, {cc}, 16;
        slli {m}, {m}, 8;
        vand.vx {cc}, {cc}, {m};
        vor.vv {ct}, {ct}, {cc};
        vxor.vx {ct}, {ct}, {k3};
        addi {m}, sp, {at12};
        addi {n}, zero, 16;
        vsse32.v {ct}, ({m}), {n};
        vsetvli zero, {big}, e8, m8, ta, ma;
        addi {m}, sp, {at};
    );
    load(&mut f, d, cb, m);
    f.comment("the blocks as bit planes");
    vector::transpose_group(&mut f, cb, Some(big));
    for (p, &sp) in v.sl.iter().enumerate() {
        let part = f.vpart(cb, p as u8, 1);
        kasm!(f, vmv.v.v {sp}, {part};);
    }
    f.comment("the rounds");
    vector::rounds_loop(&mut f, &v, rounds);
    f.comment("planes back to blocks; out = in ^ keystream for min(blocks, VLEN / 16) blocks");
    vector::transpose_group(&mut f, fg, Some(big));
    let x = f.vreg("x", 8);
    kasm!(f,
        srli {nb}, {vlm}, 1;
        bgeu {blocks}, {nb}, whole;
        addi {nb}, {blocks}, 0;
    whole:
        slli {n}, {nb}, 4;
    );
    vector::set_vl_m8(&mut f, n);
    load(&mut f, d, x, inp);
    kasm!(f, vxor.vv {x}, {x}, {fg};);
    store(&mut f, d, x, out);
    kasm!(f,
        add {inp}, {inp}, {n};
        add {out}, {out}, {n};
        sub {blocks}, {blocks}, {nb};
        addw {ctr}, {ctr}, {nb};
        beqz {blocks}, done;
        vsetvli zero, {big}, e8, m1, ta, ma;
        j pass;
    done:
    );
    f.ret();
    f
}

/// The pointers to access doublewords through, where a test just found `(inp | out) & 7`
/// zero: on targets with slow misaligned accesses, `inp & -8` and `out & -8` (the same
/// addresses; their alignment then follows from the arithmetic, whatever registers the
/// pointers were reloaded into around the test).
fn aligned_pointers(f: &mut Func, inp: Reg, out: Reg, slow: bool) -> (Reg, Reg) {
    if !slow {
        return (inp, out);
    }
    let (pi, po) = (f.xreg("pi"), f.xreg("po"));
    kasm!(f, andi {pi}, {inp}, -8; andi {po}, {out}, -8;);
    (pi, po)
}

/// The counter value from its four big-endian bytes in the low word of `c` (a byte swap of
/// 32 bits, zero-extended).
fn counter_word_value(w: &mut Em, c: Reg) -> Reg {
    let b = w.new_reg();
    match w.rot {
        Rot::Zbb => kasm!(w.f, rev8 {b}, {c}; srli {b}, {b}, 32;),
        _ => {
            let (t, u) = (w.new_reg(), w.new_reg());
            kasm!(w.f,
                slliw {b}, {c}, 24; srliw {t}, {c}, 24; or {b}, {b}, {t};
                srliw {t}, {c}, 8; andi {t}, {t}, 255; slli {t}, {t}, 16; or {b}, {b}, {t};
                srliw {t}, {c}, 16; andi {t}, {t}, 255; slli {u}, {t}, 8; or {b}, {b}, {u};
                slli {b}, {b}, 32; srli {b}, {b}, 32;
            );
        }
    }
    b
}

/// out[0..n] = in[0..n] ^ the keystream words `k`, a byte at a time (buffers whose
/// doublewords would be misaligned where that is slow).
fn xor_bytes(f: &mut Func, inp: Reg, out: Reg, k: &[Reg], n: usize, a: Reg, b: Reg) {
    for i in 0..n {
        let (kw, sh, off) = (k[i / 8], 8 * (i % 8) as i64, i as i64);
        kasm!(f, lbu {a}, {off}({inp}); srli {b}, {kw}, {sh}; xor {a}, {a}, {b}; sb {a}, {off}({out}););
    }
}

// ---- key schedules ------------------------------------------------------------------------

/// SubWord of the four bytes of `x` (a 32-bit word; bits above 32 ignored) with the
/// S-box circuit: bit planes of the four bytes side by side (bit `8i` of plane `p` is bit
/// `p` of byte `i`), 113 gates, planes back to bytes, 0x63 added.
fn sub_word(w: &mut Em, x: Reg) -> Reg {
    let m = w.konst(MASKS[15]);
    let planes: [Reg; 8] = std::array::from_fn(|p| {
        let v = if p == 0 { x } else { w.srl(x, p as u32) };
        w.and(v, m)
    });
    let s = slice::sbox(w, planes);
    let mut acc = s[0];
    for (p, &v) in s.iter().enumerate().skip(1) {
        let t = w.sll(v, p as u32);
        acc = w.or(acc, t);
    }
    let c = w.konst(MASKS[16]);
    w.xor(acc, c)
}

/// Rotates the low word of `x` right by 8 (RotWord in memory byte order).
fn rot_word(w: &mut Em, x: Reg) -> Reg {
    let d = w.new_reg();
    match w.rot {
        Rot::Thead => kasm!(w.f, th.srriw {d}, {x}, 8;),
        Rot::Zbb => kasm!(w.f, roriw {d}, {x}, 8;),
        Rot::Shifts => {
            let t = w.new_reg();
            kasm!(w.f, srliw {d}, {x}, 8; slliw {t}, {x}, 24; or {d}, {d}, {t};);
        }
    }
    d
}

/// FIPS-197 5.2 into `key` (words in memory byte order), SubWord by [`sub_word`]: `nk`
/// words a pass (the last pass four), so that every branch but the loop's own goes the
/// same way in every pass.
fn expand(f: &mut Func, rot: Rot, masks: Masks, user: Reg, key: Reg, nk: Reg, total: Reg, rcon: Reg) {
    let [wv, t, b, p, q, i, lim] = [f.xreg("wv"), f.xreg("tw"), f.xreg("b"), f.xreg("p"), f.xreg("q"), f.xreg("i"), f.xreg("lim")];
    for r in [p, q, i, lim] {
        f.public(r);
    }
    f.comment("copy the user key: w[0..nk]");
    kasm!(f,
        addi {i}, zero, 0;
    copy:
        slli {t}, {i}, 2;
        add {p}, {user}, {t};
    );
    aes::load_word_any(f, wv, p, b);
    kasm!(f,
        add {p}, {key}, {t};
        sw {wv}, 0({p});
        addi {i}, {i}, 1;
        bltu {i}, {nk}, copy;
        addi {p}, {p}, 4;
        slli {t}, {nk}, 2;
        sub {q}, {p}, {t};
    pass:
    );
    f.comment("w[i] = w[i-nk] ^ SubWord(RotWord(w[i-1])) ^ rcon, then w[i+1..i+4]");
    let mut w = Em { f: &mut *f, rot, masks };
    let r = rot_word(&mut w, wv);
    let s = sub_word(&mut w, r);
    kasm!(f,
        lbu {b}, 0({rcon});
        addi {rcon}, {rcon}, 1;
        xor {wv}, {s}, {b};
    );
    let words = |f: &mut Func, n: i64| {
        for j in 0..n {
            let o = 4 * j;
            kasm!(f, lw {t}, {o}({q}); xor {wv}, {wv}, {t}; sw {wv}, {o}({p}););
        }
        let (bytes, n) = (4 * n, n);
        kasm!(f, addi {p}, {p}, {bytes}; addi {q}, {q}, {bytes}; addi {i}, {i}, {n};);
    };
    words(f, 4);
    kasm!(f,
        bgeu {i}, {total}, end;
        addi {lim}, zero, 4;
        beq {nk}, {lim}, pass;
        addi {lim}, zero, 8;
        bne {nk}, {lim}, two;
    );
    f.comment("AES-256: w[i+4] takes SubWord(w[i+3])");
    let mut w = Em { f: &mut *f, rot, masks };
    let s = sub_word(&mut w, wv);
    f.mv(wv, s);
    kasm!(f, two:);
    words(f, 2);
    kasm!(f,
        addi {lim}, zero, 8;
        bne {nk}, {lim}, pass;
    );
    words(f, 2);
    kasm!(f, j pass; end:);
}

/// Four bytes of `x` times 2 in GF(2^8), each: `(x & 0x7f) << 1`, and 0x1b where the top
/// bit was set (`(h << 1) - (h >> 7)` is 0xff in those bytes).
fn xtime4(w: &mut Em, x: Reg) -> Reg {
    let (m80, m7f, m1b) = (w.konst(MASKS[17]), w.konst(MASKS[18]), w.konst(MASKS[19]));
    let h = w.and(x, m80);
    let l = w.and(x, m7f);
    let l = w.sll(l, 1);
    let a = w.sll(h, 1);
    let b = w.srl(h, 7);
    let d = w.new_reg();
    kasm!(w.f, sub {d}, {a}, {b};);
    let d = w.and(d, m1b);
    w.xor(l, d)
}

/// Rotates the low word of `x` right by `n` bits (zero-extended result).
fn rot32(w: &mut Em, x: Reg, n: u32) -> Reg {
    let d = w.new_reg();
    let n = n as i64;
    match w.rot {
        Rot::Thead => kasm!(w.f, th.srriw {d}, {x}, {n}; th.extu {d}, {d}, 31, 0;),
        Rot::Zbb => kasm!(w.f, roriw {d}, {x}, {n}; slli {d}, {d}, 32; srli {d}, {d}, 32;),
        Rot::Shifts => {
            let (t, l) = (w.new_reg(), 32 - n);
            kasm!(w.f, srliw {d}, {x}, {n}; slliw {t}, {x}, {l}; or {d}, {d}, {t}; slli {d}, {d}, 32; srli {d}, {d}, 32;);
        }
    }
    d
}

/// InvMixColumns of one column word (memory byte order): byte i = 14·a_i ^ 11·a_{i+1} ^
/// 13·a_{i+2} ^ 9·a_{i+3}.
fn inv_mix_column(w: &mut Em, x: Reg) -> Reg {
    let x2 = xtime4(w, x);
    let x4 = xtime4(w, x2);
    let x8 = xtime4(w, x4);
    let x9 = w.xor(x8, x);
    let x11 = w.xor(x9, x2);
    let x13 = w.xor(x9, x4);
    let x14 = w.xor(x8, x4);
    let x14 = w.xor(x14, x2);
    let a = rot32(w, x11, 8);
    let b = rot32(w, x13, 16);
    let c = rot32(w, x9, 24);
    let o = w.xor(x14, a);
    let o = w.xor(o, b);
    w.xor(o, c)
}

fn setkey_fn(e: &'static Entry, variant: &str, t: &Target, abi: Abi, decrypt: bool) -> Func {
    let mut f = Func::entry(e, variant, t, abi);
    let [user, bits, key] = f.params();
    let [nk, total, rcon, masks] = [f.xreg("nk"), f.xreg("total"), f.xreg("rcon"), f.xreg("masks")];
    for r in [nk, total, rcon, masks] {
        f.public(r);
    }
    let rot = rot_of(t);
    aes::setkey_checks(&mut f, user, bits, key, nk, total);
    f.la(masks, &masks_sym(variant));
    f.la(rcon, &format!("{}_rcon", masks_sym(variant)));
    let masks = Masks::Table(masks);
    expand(&mut f, rot, masks, user, key, nk, total, rcon);
    if decrypt {
        inv_schedule(&mut f, rot, masks, key, total);
    }
    f.ret_imm(0);
    f
}

/// The encryption schedule at `key` (`total` words) made the decryption schedule in place:
/// the round keys in reverse order, InvMixColumns of all but the first and the last.
fn inv_schedule(f: &mut Func, rot: Rot, masks: Masks, key: Reg, total: Reg) {
    let [lo, hi, a, b] = [f.xreg("lo"), f.xreg("hi"), f.xreg("a"), f.xreg("b")];
    for r in [lo, hi] {
        f.public(r);
    }
    f.comment("reverse the order of the round keys (16 bytes at a time)");
    kasm!(f, addi {lo}, {key}, 0;);
    last_round_key(f, hi, key, total);
    kasm!(f, swap:);
    for off in [0i64, 4, 8, 12] {
        kasm!(f, lw {a}, {off}({lo}); lw {b}, {off}({hi}); sw {b}, {off}({lo}); sw {a}, {off}({hi}););
    }
    kasm!(f,
        addi {lo}, {lo}, 16;
        addi {hi}, {hi}, -16;
        bltu {lo}, {hi}, swap;
    );
    imc_middle(f, rot, masks, key, total);
}

/// `p` = the schedule's last round key: `key` + 4 * `total` - 16.
fn last_round_key(f: &mut Func, p: Reg, key: Reg, total: Reg) {
    kasm!(f, slli {p}, {total}, 2; add {p}, {p}, {key}; addi {p}, {p}, -16;);
}

/// InvMixColumns of words 4 .. total-4 of the schedule at `key`.
fn imc_middle(f: &mut Func, rot: Rot, masks: Masks, key: Reg, total: Reg) {
    let [lo, hi, a] = [f.xreg("lo"), f.xreg("hi"), f.xreg("a")];
    for r in [lo, hi] {
        f.public(r);
    }
    f.comment("InvMixColumns of words 4 .. total-4");
    kasm!(f, addi {lo}, {key}, 16;);
    last_round_key(f, hi, key, total);
    kasm!(f, imc: lwu {a}, 0({lo}););
    let mut w = Em { f: &mut *f, rot, masks };
    let o = inv_mix_column(&mut w, a);
    kasm!(f,
        sw {o}, 0({lo});
        addi {lo}, {lo}, 4;
        bltu {lo}, {hi}, imc;
    );
}

/// Linux's `aes_expandkey`: `ctx->key_enc` as `AES_set_encrypt_key` makes it, `key_dec` as
/// `AES_set_decrypt_key` does (the same schedule reversed, then InvMixColumns), and
/// `key_length`.
fn expandkey_fn(variant: &str, t: &Target) -> Func {
    let mut f = Func::entry(&LINUX_EXPANDKEY, variant, t, Abi::Linux);
    let [ctx, user, len] = f.params();
    let [nk, total, rcon, masks, kd, src, n] = [f.xreg("nk"), f.xreg("total"), f.xreg("rcon"), f.xreg("masks"), f.xreg("kd"), f.xreg("src"), f.xreg("n")];
    for r in [nk, total, rcon, masks, kd, src, n] {
        f.public(r);
    }
    let rot = rot_of(t);
    kasm!(f,
        addi {n}, zero, 16;
        beq {len}, {n}, ok;
        addi {n}, zero, 24;
        beq {len}, {n}, ok;
        addi {n}, zero, 32;
        beq {len}, {n}, ok;
    );
    f.ret_imm(-22);
    kasm!(f,
    ok:
        // nk = key_len / 4; total words = 4 * (nk + 7)
        srli {nk}, {len}, 2;
        addi {total}, {nk}, 7;
        slli {total}, {total}, 2;
        sw {len}, 480({ctx});
    );
    f.la(masks, &masks_sym(variant));
    f.la(rcon, &format!("{}_rcon", masks_sym(variant)));
    let masks = Masks::Table(masks);
    expand(&mut f, rot, masks, user, ctx, nk, total, rcon);
    f.comment("key_dec: key_enc's round keys copied in reverse order, then InvMixColumns");
    let v = f.xreg("v");
    kasm!(f,
        addi {kd}, {ctx}, 240;
    );
    last_round_key(&mut f, src, ctx, total);
    kasm!(f, reverse:);
    for off in [0i64, 4, 8, 12] {
        kasm!(f, lw {v}, {off}({src}); sw {v}, {off}({kd}););
    }
    kasm!(f,
        addi {kd}, {kd}, 16;
        addi {src}, {src}, -16;
        bgeu {src}, {ctx}, reverse;
        addi {kd}, {ctx}, 240;
    );
    imc_middle(&mut f, rot, masks, kd, total);
    f.ret_imm(0);
    f
}

/// The Linux forms on a `struct crypto_aes_ctx`'s keys (AES-128): expandkey once, then one block
/// each way a call, counter mode and ECB over whole blocks, at each size.
fn linux_bench(h: &mut dyn kgen_dsl::kernel::Harness, sizes: &[usize]) -> Result<Vec<kgen_dsl::kernel::Measured>, String> {
    use kgen_dsl::kernel::{figure, measured};
    let mut rows = Vec::new();
    let key = h.buffer(&[0x2b; 16], 0, false);
    let ctx = h.buffer(&[0u8; 484], 0, true);
    let (xname, expand) = h.entry(&LINUX_EXPANDKEY)?;
    let m = measured(h, |h| h.call(expand, &[ctx, key, 16]))?;
    rows.push(figure(format!("{xname}(16)"), 16, m));
    // key_enc at 0, key_dec at 240; AES-128's ten rounds.
    for (e, rk) in [(&LINUX_ENCRYPT, ctx), (&LINUX_DECRYPT, ctx + 240)] {
        let (name, f) = h.entry(e)?;
        rows.extend(aes::block_at_a_time(h, &name, f, sizes, &|p| vec![rk, 10, p, p])?);
    }
    let iv = h.buffer(&aes::BENCH_IV, 0, false);
    for e in [&LINUX_CTR32, &LINUX_ECB_ENCRYPT, &LINUX_ECB_DECRYPT] {
        let (name, f) = h.entry(e)?;
        for &n in sizes {
            let n = n.max(16).next_multiple_of(16);
            let buf = h.buffer(&vec![0x5a; n], 0, true);
            let blocks = (n / 16) as u64;
            let args = match e.prefix {
                p if p == LINUX_CTR32.prefix => vec![ctx, 10, buf, buf, blocks, iv],
                p if p == LINUX_ECB_DECRYPT.prefix => vec![ctx + 240, 10, buf, buf, blocks],
                _ => vec![ctx, 10, buf, buf, blocks],
            };
            let m = measured(h, |h| h.call(f, &args))?;
            rows.push(figure(&name, n, m));
        }
    }
    Ok(rows)
}

/// The data objects `variant`'s code reads: the masks, the round constants and, with
/// vectors, the gather and lookup tables.
pub(crate) fn data_objects(variant: &str, t: &Target) -> Vec<DataObj> {
    let mut objs = Vec::new();
    objs.push(masks_data(variant));
    objs.push(DataObj {
        name: format!("{}_rcon", masks_sym(variant)),
        align: 1,
        bytes: aes::RCON.to_vec(),
        elem: 1,
        global: false,
        comment: "round constants".into(),
    });
    if t.vdialect().is_some() {
        objs.push(DataObj {
            name: data_sym(variant, "perms"),
            align: 16,
            bytes: vslice::table(),
            elem: 1,
            global: false,
            comment: "gather indices: SR^0..3, then MixColumns' row rotations by one and by two conjugated by SR^0..3".into(),
        });
        if t.vdialect() == Some(VDialect::V1) {
            objs.push(DataObj {
                name: data_sym(variant, "wide"),
                align: 64,
                bytes: vslice::wide_table(),
                elem: 1,
                global: false,
                comment: "the gather indices for registers of up to 64 bytes, then SR^0..3 copying one 16-byte group to all".into(),
            });
        }
        objs.push(DataObj {
            name: data_sym(variant, "vperm"),
            align: 16,
            bytes: vperm::tables().concat(),
            elem: 1,
            global: false,
            comment: "one block by nibble lookups: the tower basis in (0x63 added), 1/n, a/n, the S-box's linear part, four permutations".into(),
        });
        objs.push(DataObj {
            name: data_sym(variant, "vperm_dec"),
            align: 16,
            bytes: vperm::dtables().concat(),
            elem: 1,
            global: false,
            comment: "one block decrypted by nibble lookups: the tower basis in through the inverse affine map (0x63 added), 1/n, a/n, 1/x and 9, 11, 13, 14 times it, two permutations".into(),
        });
    }
    objs
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new("aes-ct", variant, t, abi);
    m.notes = vec![
        "AES (FIPS-197), constant time: fixsliced, four blocks in eight 64-bit words; no table".into(),
        "lookup, no branch on the key or the data.".into(),
    ];
    for d in data_objects(variant, t) {
        m.add_data(d);
    }
    if abi == Abi::Linux {
        m.add(block_fn(&LINUX_ENCRYPT, variant, t, abi, false), true)?;
        m.add(block_fn(&LINUX_DECRYPT, variant, t, abi, true), true)?;
        m.add(expandkey_fn(variant, t), true)?;
        m.add(ctr32_fn(variant, t, abi), true)?;
        m.add(ecb_fn(&LINUX_ECB_ENCRYPT, variant, t, false), true)?;
        m.add(ecb_fn(&LINUX_ECB_DECRYPT, variant, t, true), true)?;
        return Ok(m);
    }
    m.add(block_fn(&ENCRYPT, variant, t, abi, false), true)?;
    m.add(block_fn(&DECRYPT, variant, t, abi, true), true)?;
    m.add(setkey_fn(&SET_ENCRYPT_KEY, variant, t, abi, false), true)?;
    m.add(setkey_fn(&SET_DECRYPT_KEY, variant, t, abi, true), true)?;
    m.add(ctr32_fn(variant, t, abi), true)?;
    Ok(m)
}


