//! AES-GCM (NIST SP 800-38D) bulk encryption and decryption in OpenSSL 3.5's stitched
//! shape: AES counter mode on the scalar core and GHASH in XTheadVector lanes, in one loop.
//!
//! ```text
//! size_t aes_gcm_encrypt_c906(const unsigned char *in, unsigned char *out, size_t len,
//!                             const void *key, unsigned char ivec[16], u64 *Xi);
//! size_t aes_gcm_decrypt_c906(const unsigned char *in, unsigned char *out, size_t len,
//!                             const void *key, unsigned char ivec[16], u64 *Xi);
//! ```
//! `key` is the `AES_KEY` of this project's `AES_set_encrypt_key` (AES-128/192/256), `ivec`
//! the next counter block (gcm128_context's `Yi`: the big-endian 32-bit counter in bytes
//! 12..16), `Xi` the GHASH accumulator (gcm128_context's `Xi`, the GCM byte string), and
//! the `Htable` that `ghash c906`'s `gcm_init_c906` wrote lies at `Xi + 32` (gcm128_context:
//! Xi at 64, H at 80, Htable at 96). The functions process the longest prefix of `in`
//! made of whole groups of 8 blocks (128 bytes), return its length (0 if `len` < 128),
//! advance ivec's counter by its blocks (mod 2^32) and Xi over the ciphertext; the caller
//! handles the rest (OpenSSL: `CRYPTO_gcm128_encrypt_ctr32` with `AES_ctr32_encrypt` and
//! `gcm_ghash_c906`) and adds the result to the message length. `in`, `out` may be
//! unaligned (the C906 handles misaligned accesses) and `in == out` is allowed.
//!
//! Variant `c906` (XTheadVector, VLEN 128). Per group of 8 blocks:
//! - Rounds 1 and 2 of each block come from a cache (see `aes`'s counter mode: only the
//!   counter's low byte changes between blocks, so round 1 changes in one column and round
//!   2 in one lookup per column; the cache is refreshed every 256 counter values), then
//!   AES-192/256's extra rounds (out of line), into a stack slot, block by block.
//! - The rest (the 7 rounds every key size shares and the final round, `Xi ^= ` and the
//!   stores) is one straight block of about 3,400 scalar instructions, merged by modeled
//!   issue time (`Func::merge`) with the GHASH of a group: the previous group's ciphertext
//!   when encrypting (the first group's slot hashes its own input, and the result is
//!   dropped; the last group is hashed after the loop), this group's input when decrypting
//!   (loaded into vector registers before any output is stored, so `in == out` works).
//! - GHASH of a group is `Xi' = (Xi ^ C0)·H^8 ^ C1·H^7 ^ … ^ C7·H` with one reduction. All
//!   nine 32×32 Karatsuba pieces run in the vector unit, e32 at LMUL 2, lane l = block l
//!   with key H^(8-l): the holes method of `ghash c906` (`vmul`/`vmacc` for the low words,
//!   `vmulhu` for the high words, class masks, the lanes summed by `vredxor`). The key's
//!   classes are laid out per call in the frame with one segment store per piece, so each
//!   piece loads its four key classes with one segment load. The scalar core only issues
//!   the vector instructions, folds Xi into block 0, and recombines and reduces the nine
//!   piece sums once per group.
//!
//! Issue slots per group of 128 bytes (AES-128, `kgen check aes-gcm` lists the functions):
//! the cached rounds and stores about 230, the shared rounds and final about 3,430 (8 ×
//! (4 + 7 × 52 + 55 + 6)), GHASH's vector instructions about 780 (9 pieces × 81, the byte
//! reversal, transposition and operand stores), the recombination and reduction about 55:
//! some 4,500, 35 per byte. The vector unit is busy about 3,150 cycles per group
//! (dsl/src/timing.rs: e32 LMUL 2 operations 4 cycles, the key's segment load 32), below
//! the scalar core's time, so the merge can hide it.
//!
//! Constant time: **no**, for the same reason as `aes`: the T-table lookups are indexed by
//! key- and data-dependent bytes (the declared leak). GHASH is constant time (as `ghash
//! c906`); branches depend only on the length and the counter (public); the epilogue
//! zeroes the vector registers and the frame (key classes, blocks, states, sums). The
//! caller must check that XTheadVector is enabled (else use `AES_ctr32_encrypt` and
//! `gcm_ghash_c906_novector`, which read the same key schedule and table). The OpenSSL
//! series therefore uses it only with `--with-leaky-kernels`; by default its AES-GCM slot
//! takes `aes-gcm-ct`, the constant-time bulk functions (`aes-ct`'s bitsliced counter mode
//! and this GHASH, chunk by chunk).
//!
//! No `c906-novector` form: interleaving scalar AES-CTR with scalar GHASH can only fill
//! stall cycles, since the C906 issues one instruction a cycle. At 16 KiB
//! `AES_ctr32_encrypt` (c906) is 469,565 instructions in 478,844 cycles and
//! `gcm_ghash_c906_novector` 436,285 in 438,345 (`kgen bench aes --sizes 16384`, `kgen bench
//! ghash --sizes 16384`): 917,189 cycles in series, 905,850 issue slots, so a perfect
//! interleave saves at most 1.2%, too little to pay for a third variant, before the spills that the two
//! loops' 28 and 27 live integer values (`kgen check aes`, `kgen check ghash`) would add.
//!
//! No Linux form: the kernel's AES-GCM library (`lib/crypto/aesgcm.c`) is one-shot
//! (`aesgcm_encrypt(ctx, dst, src, len, assoc, assoc_len, iv, authtag)`) over its own
//! `struct aesgcm_ctx` (a `crypto_aes_ctx` and the bare hash key, no table) with no
//! architecture hook; the crypto API's `gcm(aes)` drivers are AEADs with private glue. No Go
//! form: Go's AES-GCM is the standard library's (`crypto/cipher` over
//! `crypto/internal/fips140/aes/gcm`, assembly only for other architectures), which a
//! program cannot replace, and x/crypto has no AES-GCM.
//!
//! Performance (C906 cost model, cycles per byte; `kgen bench aes-gcm --markdown`
//! regenerates it; sizes are whole groups, 1408 for 1400):
//!
//! | kernel | variant | function | 128 B | 256 B | 1024 B | 1408 B | 4096 B | 16384 B | instr/B |
//! |---|---|---|---:|---:|---:|---:|---:|---:|---:|
//! | aes-gcm | c906 | aes_gcm_encrypt_c906 | 67.49 | 52.17 | 40.63 | 39.58 | 37.79 | 37.07 | 35.72 |
//! | aes-gcm | c906 | aes_gcm_decrypt_c906 | 43.38 | 40.02 | 37.47 | 37.24 | 36.88 | 36.72 | 35.52 |
//!
//! The instr/B column is the bound: one issue slot per instruction, 35.8 c/B at 16 KiB,
//! against 37.1 modeled (encrypt hashes the last group after the loop, unmerged, which the
//! small sizes feel). Whole messages as OpenSSL calls the kernels (the bulk here, the rest
//! with `AES_ctr32_encrypt` and `gcm_ghash_c906`, `cargo test --release --test aes_gcm
//! openssl_message_cost -- --nocapture`): encrypt 42.57 c/B at 1400 B and 37.15 at 16 KiB,
//! decrypt 40.23 and 36.80 (targets 45 and 40); README.md compares them with the series
//! path and the physical C906.

use crate::aes::{self, Ctr, Isa};
use crate::ghash::{class_products, host_words, htable, karatsuba128_reduce, karatsuba64, LANES, POWERS};
use crate::{Kernel, Variant};
use kgen_dsl::kernel::hooks::{Hook, Openssl, OpensslSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, Bench, Harness, Measured};
use kgen_dsl::entry::{symbol_suffix, Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::object::DataObj;
use kgen_dsl::target::Target;
use kgen_dsl::{Abi, BuildError, Func, Label, Module, Opnd, Reg, Slot};
use kgen_macros::kasm;

/// The bulk functions' parameters (`aes-gcm-ct`'s too).
pub(crate) const PARAMS: &[Param] = &[
    Param::ptr("in", Elem::U8, In, true),
    Param::ptr("out", Elem::U8, Out, false),
    Param::val("len", Ty::Size, false),
    Param::ptr("key", Elem::Void, In, true).aligned(4).public(aes::ROUNDS_PUBLIC),
    Param::ptr("ivec", Elem::U8, InOut, false),
    Param::ptr("Xi", Elem::U64, InOut, true),
];

/// `size_t aes_gcm_encrypt_V(in, out, len, key, ivec, Xi)`.
pub const ENCRYPT: Entry = Entry {
    kernel: "aes-gcm",
    prefix: "aes_gcm_encrypt_",
    suffix: "",
    alias: None,
    abis: &[Abi::Psabi],
    params: PARAMS,
    ret: Ret::Size,
    summary: "AES-GCM encryption of the whole 128-byte groups of in: out, ivec's counter and Xi advanced; returns the bytes done",
};
/// `size_t aes_gcm_decrypt_V(in, out, len, key, ivec, Xi)`.
pub const DECRYPT: Entry = Entry {
    prefix: "aes_gcm_decrypt_",
    summary: "AES-GCM decryption of the whole 128-byte groups of in: out, ivec's counter and Xi advanced; returns the bytes done",
    ..ENCRYPT
};
/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&ENCRYPT, &DECRYPT];

pub const KERNEL: Kernel = Kernel {
    benches: &[Bench { abi: Abi::Psabi, module: None, drive: bench }],
    kat: Some(kat),
    hooks: &[Hook::Openssl(Openssl {
        slot: OpensslSlot::AesGcm { group: GROUP as usize, aes: ("aes", "c906"), ghash: ("ghash", GHASH_VARIANT) },
        variants: &["c906"],
        entries: &[&ENCRYPT, &DECRYPT],
    })],
    ..Kernel::new(
        "aes-gcm",
        "AES-GCM bulk en/decryption (OpenSSL's stitched aes_gcm_encrypt shape): T-table AES-CTR merged with XTheadVector GHASH",
        &[Variant { name: "c906", target: "c906", abis: &[Abi::Psabi], build, vlens: &[] }],
        ENTRIES,
    )
};

/// Bytes per group (one block per lane).
pub const GROUP: i64 = 16 * LANES as i64;
/// Karatsuba pieces of a 128×128 product.
const PIECES: usize = 9;

/// Byte `off` of a stack slot, as an instruction operand.
#[derive(Clone, Copy)]
struct StackAt(Slot, i64);

impl From<StackAt> for Opnd {
    fn from(s: StackAt) -> Opnd {
        Opnd::Stack { slot: s.0, off: s.1 }
    }
}

fn at(slot: Slot, off: i64) -> StackAt {
    StackAt(slot, off)
}

/// Secret stack slots.
struct Frame {
    /// Key classes: piece t, lane l (key H^(8-l)), class j at 128t + 16l + 4j (a segment).
    kp: Slot,
    /// A group's blocks, byte-reversed (block l at 16l: lo, then hi); at set-up, the lanes'
    /// key powers.
    blocks: Slot,
    /// The nine pieces' operands, 32 bytes (8 lanes) each.
    opnd: Slot,
    /// The nine piece sums (64-bit carry-less products summed over the group) at 8t.
    sums: Slot,
    /// The group's AES states after the cached (and extra) rounds, block b at 16b.
    states: Slot,
}

/// Vector registers (e32 at LMUL 2 unless said otherwise).
struct V {
    /// A piece's operand and its four classes.
    a: Reg,
    ap: [Reg; 4],
    /// The key piece's four classes: fields of a segment (eight registers).
    bseg: Reg,
    bp: [Reg; 4],
    /// Class accumulators and temporaries (low words, high words), the masked piece.
    z: [Reg; 2],
    t: [Reg; 2],
    out: [Reg; 2],
    /// Element 0 is zero (the reductions' start).
    zero: Reg,
    red: [Reg; 2],
    /// Segment-load destination: word k of the eight blocks in w[k]; the five mid operands.
    wseg: Reg,
    w: [Reg; 4],
    mids: [Reg; 5],
    /// e8: a group's bytes (LMUL 8, one block per register), reversed per block, and the
    /// index 15..0.
    bytes: Reg,
    bytes_k: [Reg; LANES],
    rev: Reg,
    rev_k: [Reg; LANES],
    idx: Reg,
}

impl V {
    fn new(f: &mut Func) -> V {
        let wseg = f.vreg("w", 8);
        let bseg = f.vreg("b", 8);
        let (bytes, rev) = (f.vreg("bytes", 8), f.vreg("rev", 8));
        V {
            a: f.vreg("a", 2),
            ap: f.vregs("ap", 2),
            bseg,
            bp: std::array::from_fn(|k| f.vpart(bseg, 2 * k as u8, 2)),
            z: f.vregs("z", 2),
            t: f.vregs("t", 2),
            out: f.vregs("out", 2),
            zero: f.vreg("zero", 1),
            red: f.vregs("red", 2),
            wseg,
            w: std::array::from_fn(|k| f.vpart(wseg, 2 * k as u8, 2)),
            mids: f.vregs("mid", 2),
            bytes,
            bytes_k: std::array::from_fn(|k| f.vpart(bytes, k as u8, 1)),
            rev,
            rev_k: std::array::from_fn(|k| f.vpart(rev, k as u8, 1)),
            idx: f.vreg("idx", 1),
        }
    }

    /// The nine pieces' operands (or key pieces) in table-slot order: lo[31:0], lo[63:32],
    /// their xor, the same for hi, then lo^hi's.
    fn operands(&self) -> [Reg; PIECES] {
        let ([w0, w1, w2, w3], m) = (self.w, self.mids);
        [w0, w1, m[0], w2, w3, m[1], m[2], m[3], m[4]]
    }
}

/// GHASH's registers and slots.
struct Gh {
    fr: Frame,
    v: V,
    /// Class masks 0x1111…1111 << k (the vector instructions read their low words).
    m: [Reg; 4],
    /// Address of a vector access (sp + a slot offset).
    p: Reg,
    /// A lane sum's low and high word.
    e: [Reg; 2],
    /// Xi as the big-endian pair (hi, lo).
    hi: Reg,
    lo: Reg,
}

/// Slots, roles, class masks, the key classes (from the table at `ht`) and Xi.
fn gh_setup(f: &mut Func, xi: Reg) -> Gh {
    let fr = Frame {
        kp: f.slot("key_classes", (PIECES * 128) as u32, 16, true),
        blocks: f.slot("blocks", GROUP as u32, 16, true),
        opnd: f.slot("operands", (PIECES * 32) as u32, 16, true),
        sums: f.slot("sums", (PIECES * 8) as u32, 8, true),
        states: f.slot("states", GROUP as u32, 16, true),
    };
    let (p, m) = (f.xreg("vaddr"), f.xregs::<4>("mask"));
    f.public(p);
    let t = f.xreg("mask_t");
    f.public(t);
    f.comment("class masks: m[3] = 0x8888888888888888, m[k] = m[3] >> (3 - k)");
    kasm!(f, addi {t}, zero, 0x88; slli {m[3]}, {t}, 8; or {m[3]}, {m[3]}, {t};);
    for sh in [16, 32] {
        kasm!(f, slli {t}, {m[3]}, {sh}; or {m[3]}, {m[3]}, {t};);
    }
    for k in 0..3 {
        kasm!(f, srli {m[k]}, {m[3]}, {3 - k as i64};);
    }
    for r in m {
        f.public(r);
    }
    let gh = Gh { fr, v: V::new(f), m, p, e: f.xregs::<2>("lane_sum"), hi: f.xreg("hi"), lo: f.xreg("lo") };
    let ht = f.xreg("Htable");
    f.public(ht);
    kasm!(f, addi {ht}, {xi}, 32;);
    key_setup(f, &gh, ht);
    let (hi, lo) = (gh.hi, gh.lo);
    f.comment("(hi, lo) = Xi as a big-endian 128-bit value");
    kasm!(f, ld {hi}, 0({xi}); ld {lo}, 8({xi}); th.rev {hi}, {hi}; th.rev {lo}, {lo};);
    gh
}

/// Key classes: lane l of piece t is piece t of H^(8-l), its classes stored as a segment.
fn key_setup(f: &mut Func, gh: &Gh, ht: Reg) {
    let (fr, v, p) = (&gh.fr, &gh.v, gh.p);
    let (t0, t1) = (f.xreg("kw0"), f.xreg("kw1"));
    f.comment("blocks[16l..16l+16] = H^(8-l) for l < 7 (the table's powers)");
    for l in 0..LANES - 1 {
        let off = POWERS + 16 * (LANES - 2 - l) as i64;
        let (o8, b) = (off + 8, 16 * l as i64);
        kasm!(f, ld {t0}, {off}({ht}); ld {t1}, {o8}({ht}); sd {t0}, {at(fr.blocks, b)}(sp); sd {t1}, {at(fr.blocks, b + 8)}(sp););
    }
    f.comment("blocks[112..128] = H: each word the OR of its four classes (table slots 0, 1, 3, 4)");
    for (n, slot) in [0i64, 1, 3, 4].into_iter().enumerate() {
        let o = 16 * slot;
        kasm!(f, lwu {t0}, {o}({ht}););
        for k in 1..4 {
            let ok = o + 4 * k;
            kasm!(f, lwu {t1}, {ok}({ht}); or {t0}, {t0}, {t1};);
        }
        kasm!(f, sw {t0}, {at(fr.blocks, 112 + 4 * n as i64)}(sp););
    }
    kasm!(f, th.vsetvli zero, zero, e32, m2, d1;);
    transpose(f, gh);
    f.comment("key classes of piece t: segment (class 0..3 of each lane) at key_classes + 128t");
    for (t, kv) in v.operands().into_iter().enumerate() {
        for j in 0..4 {
            let (bj, mj) = (v.bp[j], gh.m[j]);
            kasm!(f, th.vand.vx {bj}, {kv}, {mj};);
        }
        let bseg = v.bseg;
        kasm!(f, addi {p}, sp, {at(fr.kp, 128 * t as i64)}; th.vsseg4e.v {bseg}, ({p}););
    }
    let (zero, idx) = (v.zero, v.idx);
    kasm!(f,
        th.vsetvli zero, zero, e8, m1, d1;
        th.vmv.v.i {zero}, 0;
        th.vid.v {idx};
        th.vrsub.vi {idx}, {idx}, 15;
        th.vsetvli zero, zero, e32, m2, d1;
    );
}

/// w[0..4] = words 0..3 of the eight blocks in `blocks` (lane l = block l); mids = w0^w1,
/// w2^w3, w0^w2, w1^w3, (w0^w2)^(w1^w3).
fn transpose(f: &mut Func, gh: &Gh) {
    let (v, p) = (&gh.v, gh.p);
    let (wseg, [w0, w1, w2, w3], [m2, m5, m6, m7, m8]) = (v.wseg, v.w, v.mids);
    f.comment("transpose: lane l of w[k] = word k of block l; the mid operands");
    kasm!(f,
        addi {p}, sp, {at(gh.fr.blocks, 0)};
        th.vlseg4e.v {wseg}, ({p});
        th.vxor.vv {m2}, {w0}, {w1};
        th.vxor.vv {m5}, {w2}, {w3};
        th.vxor.vv {m6}, {w0}, {w2};
        th.vxor.vv {m7}, {w1}, {w3};
        th.vxor.vv {m8}, {m6}, {m7};
    );
}

/// bytes = the group at `src` (e8, LMUL 8).
fn load_group(f: &mut Func, gh: &Gh, src: Reg) {
    let bytes = gh.v.bytes;
    f.comment("bytes = the group's 128 bytes");
    kasm!(f, th.vsetvli zero, zero, e8, m8, d1; th.vle.v {bytes}, ({src}););
}

/// The vector stream of a group's GHASH: byte reversal (from `src`, or from `bytes` loaded
/// already), Xi folded into block 0, transposition, the nine pieces into `sums`.
fn ghash_group(f: &mut Func, gh: &Gh, src: Option<Reg>) {
    let (v, p, fr) = (&gh.v, gh.p, &gh.fr);
    if let Some(src) = src {
        load_group(f, gh, src);
    }
    f.comment("blocks[l] = reverse(block l) (e8)");
    kasm!(f, th.vsetvli zero, zero, e8, m1, d1;);
    for k in 0..LANES {
        let (d, s, idx) = (v.rev_k[k], v.bytes_k[k], v.idx);
        kasm!(f, th.vrgather.vv {d}, {s}, {idx};);
    }
    let rev = v.rev;
    kasm!(f,
        th.vsetvli zero, zero, e8, m8, d1;
        addi {p}, sp, {at(fr.blocks, 0)};
        th.vse.v {rev}, ({p});
        th.vsetvli zero, zero, e32, m2, d1;
    );
    let (t, hi, lo) = (f.xreg("fold"), gh.hi, gh.lo);
    f.comment("block 0 ^= Xi");
    kasm!(f,
        ld {t}, {at(fr.blocks, 0)}(sp); xor {t}, {t}, {lo}; sd {t}, {at(fr.blocks, 0)}(sp);
        ld {t}, {at(fr.blocks, 8)}(sp); xor {t}, {t}, {hi}; sd {t}, {at(fr.blocks, 8)}(sp);
    );
    transpose(f, gh);
    f.comment("operands[t] = the operand of piece t");
    for (i, r) in v.operands().into_iter().enumerate() {
        kasm!(f, addi {p}, sp, {at(fr.opnd, 32 * i as i64)}; th.vse.v {r}, ({p}););
    }
    for t in 0..PIECES {
        piece(f, gh, t);
    }
}

/// sums[t] = XOR over the lanes of operand t ⊗ key piece t: the 32×32 products of the
/// classes (`vmul` low words, `vmulhu` high words), class k = XOR of the products
/// a_i·b_j with i + j ≡ k (mod 4) (low words of the pairs whose count peaks are four
/// apart added by `vmacc`), masked and ORed; then the lane sums (`vredxor`).
fn piece(f: &mut Func, gh: &Gh, t: usize) {
    let (v, p, fr) = (&gh.v, gh.p, &gh.fr);
    let (a, bseg) = (v.a, v.bseg);
    f.comment(format!("piece {t}: a[k] = operand & m[k]; b[j] = the key's classes (one segment load)"));
    kasm!(f, addi {p}, sp, {at(fr.opnd, 32 * t as i64)}; th.vle.v {a}, ({p}););
    for k in 0..4 {
        let (ak, mk) = (v.ap[k], gh.m[k]);
        kasm!(f, th.vand.vx {ak}, {a}, {mk};);
    }
    kasm!(f, addi {p}, sp, {at(fr.kp, 128 * t as i64)}; th.vlseg4e.v {bseg}, ({p}););
    let [ol, oh] = v.out;
    for k in 0..4 {
        f.comment(format!("class {k}: low words (pairs added), high words; out |= z & m[{k}]"));
        class_products(f, k, v.ap, v.bp, v.z, v.t, v.out, gh.m[k]);
    }
    let ([r0, r1], zero, [e0, e1]) = (v.red, v.zero, gh.e);
    f.comment(format!("sums[{t}] = lane sums (high word << 32 | low word)"));
    kasm!(f,
        th.vredxor.vs {r0}, {ol}, {zero};
        th.vredxor.vs {r1}, {oh}, {zero};
        th.vext.x.v {e0}, {r0}, zero;
        th.vext.x.v {e1}, {r1}, zero;
        slli {e1}, {e1}, 32;
        or {e0}, {e0}, {e1};
        sd {e0}, {at(fr.sums, 8 * t as i64)}(sp);
    );
}

/// (hi, lo) = the group's sum of products, reduced: the nine piece sums recombined.
fn combine(f: &mut Func, gh: &Gh) {
    let (hi, lo, sums) = (gh.hi, gh.lo, gh.fr.sums);
    f.schedule(|f| {
        let s = f.xregs::<PIECES>("sum");
        f.comment("Xi = the nine piece sums: Karatsuba 64 for lo, hi, lo^hi; Karatsuba 128; reduce");
        for (t, r) in s.into_iter().enumerate() {
            kasm!(f, ld {r}, {at(sums, 8 * t as i64)}(sp););
        }
        let q = f.xregs::<6>("p");
        for g in 0..3 {
            karatsuba64(f, s[3 * g], s[3 * g + 1], s[3 * g + 2], q[2 * g], q[2 * g + 1]);
        }
        karatsuba128_reduce(f, q, hi, lo);
    });
}

/// A branch to `labels[bi]` (bi in 0..labels.len()).
fn dispatch(f: &mut Func, bi: Reg, labels: &[Label], t: Reg) {
    for (k, &l) in labels.iter().enumerate() {
        if k + 1 == labels.len() {
            kasm!(f, j {l};);
        } else {
            kasm!(f, addi {t}, zero, {k as i64}; beq {bi}, {t}, {l};);
        }
    }
}

/// The group's first part, block by block (straight, so each state goes to a known slot
/// offset): rounds 1, 2 from the cache, AES-192/256's extra rounds (one out-of-line copy,
/// which returns through `bi`), the state into `states[16b..]`; ctr += 1, refreshing the
/// cache when its low byte wraps (out of line, likewise).
fn front_group(f: &mut Func, c: &Ctr, states: Slot, bi: Reg) {
    let (s, ctr, extra, t) = (c.r.s, c.ctr, c.extra, c.r.tmp[1]);
    f.scope(|f| {
        let name = |f: &mut Func, n: &str, b: usize| f.named_label(&format!("{n}{b}"));
        let (to_extra, extra_done, to_refresh, refreshed): (Vec<Label>, Vec<Label>, Vec<Label>, Vec<Label>) = (
            (0..LANES).map(|b| name(f, "extra", b)).collect(),
            (0..LANES).map(|b| name(f, "extra_done", b)).collect(),
            (0..LANES).map(|b| name(f, "refresh", b)).collect(),
            (0..LANES).map(|b| name(f, "refreshed", b)).collect(),
        );
        let (extra_rounds, refresh) = (f.named_label("extra_rounds"), f.named_label("refresh_cache"));
        for b in 0..LANES {
            aes::ctr_front(f, c);
            kasm!(f, bnez {extra}, {to_extra[b]};);
            f.bind(extra_done[b]);
            f.comment(format!("states[{b}] = s; ctr += 1"));
            for (j, &r) in s.iter().enumerate() {
                kasm!(f, sw {r}, {at(states, 16 * b as i64 + 4 * j as i64)}(sp););
            }
            kasm!(f, addiw {ctr}, {ctr}, 1; andi {t}, {ctr}, 255; beqz {t}, {to_refresh[b]};);
            f.bind(refreshed[b]);
            let bl = b as i64;
            let (xe, xr) = (to_extra[b], to_refresh[b]);
            f.cold(|f| {
                f.bind(xe);
                kasm!(f, addi {bi}, zero, {bl}; j {extra_rounds};);
                f.bind(xr);
                kasm!(f, addi {bi}, zero, {bl}; j {refresh};);
            });
        }
        f.cold(|f| {
            f.bind(extra_rounds);
            aes::ctr_extra_round_body(f, c);
            dispatch(f, bi, &extra_done, t);
            f.bind(refresh);
            aes::ctr_refresh(f, c);
            dispatch(f, bi, &refreshed, t);
        });
    });
}

/// The scalar stream of a group: for each block, the shared rounds and the final round
/// from `states`, out = in ^ keystream.
fn aes_group(f: &mut Func, c: &Ctr, states: Slot, inp: Reg, out: Reg, col: [Reg; 4], consts: [Reg; 3]) {
    for b in 0..LANES as i64 {
        f.comment(format!("block {b}: s = states[{b}]"));
        for (j, &r) in c.r.s.iter().enumerate() {
            kasm!(f, lw {r}, {at(states, 16 * b + 4 * j as i64)}(sp););
        }
        aes::ctr_shared_rounds(f, c, col, consts);
        f.comment(format!("out[{b}] = in[{b}] ^ keystream"));
        aes::ctr_xor_out(f, c, [col[0], col[2]], inp, out, 16 * b);
    }
}

/// aes_gcm_encrypt / aes_gcm_decrypt.
fn crypt_fn(variant: &str, t: &Target, abi: Abi, tables: &str, decrypt: bool) -> Func {
    let mut f = Func::entry(if decrypt { &DECRYPT } else { &ENCRYPT }, variant, t, abi);
    let [inp, out, len, key, ivec, xi] = f.params();
    let (groups, done) = (f.xreg("groups"), f.xreg("done"));
    f.public(groups);
    f.public(done);
    f.comment("done = the whole groups' bytes");
    kasm!(f, srli {groups}, {len}, 7; slli {done}, {groups}, 7; beqz {groups}, finish;);
    let c = aes::ctr_setup(&mut f, Isa::C906, key, ivec, tables);
    let (col, consts) = aes::ctr_block_regs(&mut f);
    let gh = gh_setup(&mut f, xi);
    let bi = f.xreg("block");
    f.public(bi);
    let states = gh.fr.states;
    // The out-of-line rounds return through `bi`, which the checks do not follow: every
    // state word is written once before the loop, so no path reads an unwritten one.
    f.comment("states = 0");
    for o in (0..GROUP).step_by(8) {
        kasm!(f, sd zero, {at(states, o)}(sp););
    }
    if decrypt {
        kasm!(f, group:);
        front_group(&mut f, &c, states, bi);
        load_group(&mut f, &gh, inp);
        f.comment("GHASH of this group's input, merged with its AES");
        f.merge(|f| ghash_group(f, &gh, None), |f| aes_group(f, &c, states, inp, out, col, consts));
        combine(&mut f, &gh);
    } else {
        let (src, first) = (f.xreg("hash_src"), f.xreg("first"));
        f.public(src);
        f.public(first);
        f.comment("the first group's GHASH slot hashes its own input (dropped)");
        kasm!(f, mv {src}, {inp}; addi {first}, zero, 1;);
        kasm!(f, group:);
        front_group(&mut f, &c, states, bi);
        f.comment("GHASH of the previous group's ciphertext, merged with this group's AES");
        f.merge(|f| ghash_group(f, &gh, Some(src)), |f| aes_group(f, &c, states, inp, out, col, consts));
        kasm!(f, bnez {first}, dropped;);
        combine(&mut f, &gh);
        kasm!(f, dropped: addi {first}, zero, 0; mv {src}, {out};);
    }
    kasm!(f, addi {inp}, {inp}, {GROUP}; addi {out}, {out}, {GROUP}; addi {groups}, {groups}, -1; bnez {groups}, group;);
    if !decrypt {
        f.comment("the last group's GHASH");
        let last = out_prev(&mut f, out);
        ghash_group(&mut f, &gh, Some(last));
        combine(&mut f, &gh);
    }
    let (hi, lo, t0) = (gh.hi, gh.lo, c.r.tmp[0]);
    let ctr = c.ctr;
    f.comment("Xi = (hi, lo) as bytes; ivec[12..16] = ctr, big-endian");
    kasm!(f,
        th.rev {hi}, {hi}; th.rev {lo}, {lo}; sd {hi}, 0({xi}); sd {lo}, 8({xi});
        th.revw {t0}, {ctr}; sw {t0}, 12({ivec});
    finish:
    );
    f.ret_value(done);
    f.ret();
    f
}

/// A register holding out - GROUP (the last group's ciphertext after the loop).
fn out_prev(f: &mut Func, out: Reg) -> Reg {
    let p = f.xreg("last_group");
    f.public(p);
    kasm!(f, addi {p}, {out}, {-GROUP};);
    p
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new("aes-gcm", variant, t, abi);
    m.notes = vec![
        "AES-GCM bulk functions (OpenSSL's stitched aes_gcm_encrypt shape): whole 128-byte groups only, the caller does the rest.".into(),
        "AES with T-tables: NOT constant time (key- and data-dependent table lookups). GHASH in XTheadVector lanes: call only if XTheadVector is enabled.".into(),
        "Htable (at Xi + 32) is gcm_init_c906's; key is AES_set_encrypt_key's (aes c906). Vector registers and the frame are zeroed at return.".into(),
    ];
    let tables = format!("kgen_aes_gcm_{}_te", symbol_suffix(variant));
    m.add_data(DataObj { name: tables.clone(), align: 64, bytes: aes::enc_tables(), elem: 4, global: false, comment: "Te0..Te3 (1 KiB each), then the S-box".into() });
    m.add(crypt_fn(variant, t, abi, &tables, false), true)?;
    m.add(crypt_fn(variant, t, abi, &tables, true), true)?;
    Ok(m)
}

// ---- what the commands need: key material, benchmark, known answers, hooks -----------------------

/// A key's material, as a gcm128_context holds it for these functions: the `AES_KEY` of
/// `aes`'s `AES_set_encrypt_key`, H = E(K, 0^128) and the Htable of `ghash c906`'s
/// `gcm_init` (computed here from the specifications: [`aes::schedule`], [`htable`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcmKey {
    /// `AES_KEY`: 60 round-key words, then the round count (244 bytes).
    pub schedule: Vec<u8>,
    /// H = E(K, 0^128) as bytes.
    pub h: [u8; 16],
    /// `gcm_init_c906`'s table (256 bytes).
    pub htable: Vec<u8>,
}

/// The GHASH variant whose table the stitched code reads.
pub const GHASH_VARIANT: &str = "c906";

impl GcmKey {
    /// The material of `key` (16, 24 or 32 bytes).
    pub fn new(key: &[u8]) -> GcmKey {
        let schedule = aes::schedule(key);
        let h = aes::encrypt_block(&schedule, [0; 16]);
        let t = crate::ghash::KERNEL.variant(GHASH_VARIANT).expect("ghash has the variant aes-gcm reads").target();
        GcmKey { htable: htable(&t, h), schedule, h }
    }

    /// A gcm128_context's tail from Xi on, as the bulk functions read it: Xi (16 bytes),
    /// H (host-order words), Htable.
    pub fn context(&self, xi: &[u8; 16]) -> Vec<u8> {
        let mut c = xi.to_vec();
        c.extend_from_slice(&host_words(self.h));
        c.extend_from_slice(&self.htable);
        c
    }
}

/// `kgen bench aes-gcm`: encrypt and decrypt over the size rounded up to whole 128-byte
/// groups (what the functions process), in place, AES-128, with the key material of
/// [`GcmKey`]; sizes below a group are not measured. Every call starts from the same counter
/// (the functions advance ivec, and where the counter's low byte wraps decides when the AES
/// cache is refreshed), so a row does not depend on the sizes measured before it.
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    bench_entries(h, sizes, [&ENCRYPT, &DECRYPT], GROUP as usize)
}

/// [`bench`] of the bulk functions `entries` (encrypt, decrypt), over sizes rounded up to
/// whole multiples of `unit` bytes.
pub(crate) fn bench_entries(h: &mut dyn Harness, sizes: &[usize], entries: [&'static Entry; 2], unit: usize) -> Result<Vec<Measured>, String> {
    let k = GcmKey::new(&[0x2b; 16]);
    let ks = h.buffer(&k.schedule, 0, false);
    let ctx = h.buffer(&k.context(&[0u8; 16]), 0, true);
    let mut rows = Vec::new();
    for entry in entries {
        let (name, f) = h.entry(entry)?;
        let mut done: Vec<usize> = Vec::new();
        for &n in sizes {
            let n = n.max(unit).next_multiple_of(unit);
            if done.contains(&n) {
                continue;
            }
            done.push(n);
            let buf = h.buffer(&vec![0x5a; n], 0, true);
            let m = measured(h, |h| {
                let iv = h.buffer(&aes::BENCH_IV, 0, true);
                h.call(f, &[buf, buf, n as u64, ks, iv, ctx])
            })?;
            rows.push(figure(&name, n, m));
        }
    }
    Ok(rows)
}

/// GCM specification, test case 3: K, the 96-bit IV, P, C and GHASH(H, {}, C) (the tag
/// 4d5c2af3... xor E(K, Y0) = 3247184b...).
pub const TC3_K: &str = "feffe9928665731c6d6a8f9467308308";
pub const TC3_IV: &str = "cafebabefacedbaddecaf888";
pub const TC3_P: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
pub const TC3_C: &str = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985";
pub const TC3_GHASH: &str = "7f1b32b81b820d02614f8895ac1d4eac";

/// Known answers (test case 3, key material from [`GcmKey`]). Decrypt: three zero blocks
/// (from Xi = 0 they leave Xi at 0), C, then the lengths block, from counter ffffffff, so C
/// meets counters 2..5 after the 2^32 wrap: the output holds P and Xi is GHASH(H, {}, C).
/// Encrypt: P twice from counter 2, in place: C first.
fn kat(v: &str) -> Result<kat::Plan, String> {
    kat_plan(v, &ENCRYPT, &DECRYPT)
}

/// [`kat`]'s plan for the bulk functions `enc` and `dec` of a kernel's variant `v` (the
/// calls are of whole 128-byte groups, which `aes-gcm-ct` processes too).
pub(crate) fn kat_plan(v: &str, enc: &'static Entry, dec: &'static Entry) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let k = GcmKey::new(&unhex(TC3_K));
    let ivec = |c: u32| {
        let mut b = unhex(TC3_IV);
        b.extend_from_slice(&c.to_be_bytes());
        b
    };
    let ks = p.buf("AES_KEY", k.schedule.clone(), 0);
    let mut msg = vec![0u8; 48];
    msg.extend_from_slice(&unhex(TC3_C));
    msg.extend_from_slice(&0u64.to_be_bytes());
    msg.extend_from_slice(&(8 * 64u64).to_be_bytes());
    let inp = p.buf("in", msg, 0);
    let out = p.buf("out", vec![0; 128], 0);
    let iv = p.buf("ivec", ivec(0xffff_ffff), 0);
    let ctx = p.buf("Xi, H, Htable", k.context(&[0; 16]), 0);
    let args = |i: usize, o: usize, iv: usize, ctx: usize| vec![Buf(i, 0), Buf(o, 0), Int(128), Buf(ks, 0), Buf(iv, 0), Buf(ctx, 0)];
    p.call(dec, v, args(inp, out, iv, ctx), Some(128));
    p.expect("GCM test case 3: P from C (aes_gcm_decrypt, blocks 3..6)".into(), out, 48, unhex(TC3_P));
    p.expect("GCM test case 3: Xi = GHASH(H, {}, C) (aes_gcm_decrypt)".into(), ctx, 0, unhex(TC3_GHASH));
    p.expect("aes_gcm_decrypt: ivec's counter ffffffff + 8 (mod 2^32)".into(), iv, 0, ivec(7));
    let mut twice = unhex(TC3_P);
    twice.extend_from_slice(&unhex(TC3_P));
    let data = p.buf("in/out", twice, 0);
    let iv2 = p.buf("ivec", ivec(2), 0);
    let ctx2 = p.buf("Xi, H, Htable", k.context(&[0; 16]), 0);
    p.call(enc, v, args(data, data, iv2, ctx2), Some(128));
    p.expect("GCM test case 3: C from P (aes_gcm_encrypt, blocks 0..3, in place)".into(), data, 0, unhex(TC3_C));
    p.expect("aes_gcm_encrypt: ivec's counter 2 + 8".into(), iv2, 0, ivec(10));
    Ok(p)
}
