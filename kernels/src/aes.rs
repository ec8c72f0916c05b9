//! AES (FIPS-197) with T-tables, in OpenSSL 3.5's riscv64 ABI.
//!
//! ```text
//! void AES_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key);
//! void AES_decrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key);
//! int AES_set_encrypt_key(const unsigned char *userKey, const int bits, AES_KEY *key);
//! int AES_set_decrypt_key(const unsigned char *userKey, const int bits, AES_KEY *key);
//! void AES_ctr32_encrypt(const unsigned char *in, unsigned char *out, size_t blocks,
//!                        const AES_KEY *key, const unsigned char ivec[16]);
//! ```
//! `AES_KEY` is 60 round-key words then `int rounds` at byte 240; round keys are kept in
//! memory byte order (column j of round r is the little-endian word at byte 16r + 4j), as
//! OpenSSL's riscv64 assembly does. Set-key returns 0, -1 for a NULL pointer, -2 for a key
//! size other than 128/192/256. `in`, `out` and `userKey` may be unaligned (they are read
//! with 64- and 32-bit loads: hardware or the kernel must handle misaligned accesses; the
//! C906 does in hardware) and `in == out` is allowed.
//!
//! Variants: `c906` picks each byte with `th.extu` and looks it up with `th.lrwu` (shift 2)
//! — two instructions per lookup — and uses `th.lrbu` for the final round; `rv64gc` uses
//! shift, mask, add, load. Both fully unroll the rounds and enter at the round the key size
//! needs, so no loop counter runs. The tables are computed here from the S-box.
//!
//! `AES_ctr32_encrypt` is OpenSSL's `ctr128_f`: out = in ^ E(counter block) for `blocks`
//! whole blocks, the big-endian 32-bit counter in ivec[12..16] incremented mod 2^32 (no
//! carry into bytes 0..12; ivec is not written back). Round keys, table bases and the
//! counter stay in registers across blocks, and since only the counter's low byte changes
//! from one block to the next, round 1 changes in one column and round 2 in one lookup per
//! column: the rest of both is cached and recomputed every 256 counter values. Per block
//! that is 0.4% more than `AES_encrypt` at 2 blocks and 18% less at 1024 (c906; rv64gc
//! 3% and 19% less); one block costs 662 cycles against 559 (the set-up, the cache and the
//! callee-saved registers: `cargo test --release --test aes ctr32_cost -- --nocapture`).
//!
//! Constant time: **no**. T-table AES loads from addresses that depend on the key and the
//! data; cache-timing attacks apply. The constant-time lint reports these loads as a
//! declared leak. Use a bitsliced or vector-crypto AES where that matters.
//!
//! Performance (C906 cost model, cycles per byte; `kgen bench aes --markdown` regenerates
//! it; `kgen bench aes --rtl` adds the C906 RTL, within 1.5% of these figures):
//!
//! | kernel | variant | function | 16 B | 64 B | 256 B | 1024 B | 1400 B | 4096 B | 16384 B | instr/B |
//! |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
//! | aes | c906 | AES_encrypt | 34.81 | 34.81 | 34.81 | 34.81 | 35.01 | 34.81 | 34.81 | 34.69 |
//! | aes | c906 | AES_decrypt | 34.81 | 34.81 | 34.81 | 34.81 | 35.01 | 34.81 | 34.81 | 34.69 |
//! | aes | c906 | AES_set_encrypt_key(128) | 58.12 | – | – | – | – | – | – | 46.62 |
//! | aes | c906 | AES_ctr32_encrypt | 40.44 | 32.03 | 29.90 | 29.37 | 29.32 | 29.26 | 29.23 | 28.66 |
//! | aes | rv64gc | AES_encrypt | 56.94 | 56.94 | 56.94 | 56.94 | 57.26 | 56.94 | 56.94 | 56.19 |
//! | aes | rv64gc | AES_decrypt | 56.94 | 56.94 | 56.94 | 56.94 | 57.26 | 56.94 | 56.94 | 56.19 |
//! | aes | rv64gc | AES_set_encrypt_key(128) | 65.50 | – | – | – | – | – | – | 53.25 |
//! | aes | rv64gc | AES_ctr32_encrypt | 64.19 | 50.58 | 47.14 | 46.29 | 46.21 | 46.12 | 46.07 | 45.81 |

use crate::{Kernel, Variant};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::kernel::hooks::{Hook, Openssl, OpensslSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, rtl, Bench, Harness, Measured};
use kgen_dsl::func::LeakKind;
use kgen_dsl::object::DataObj;
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::{Abi, BuildError, Func, Module, Reg};
use kgen_macros::kasm;

/// OpenSSL's `AES_KEY`: 60 round-key words, then `int rounds` at byte 240.
const AES_KEY: Elem = Elem::Named { name: "AES_KEY", align: 4, def: "struct aes_key_st { unsigned int rd_key[60]; int rounds; }" };
const ABIS: &[Abi] = &[Abi::Psabi, Abi::Go];
/// The rounds field is public; the round keys are not.
pub(crate) const ROUNDS_PUBLIC: &[(i64, i64)] = &[(240, 244)];
const BLOCK_PARAMS: &[Param] = &[
    Param::ptr("in", Elem::U8, In, true),
    Param::ptr("out", Elem::U8, Out, false),
    Param::ptr("key", AES_KEY, In, true).public(ROUNDS_PUBLIC),
];
const SETKEY_PARAMS: &[Param] =
    &[Param::ptr("userKey", Elem::U8, In, true), Param::val("bits", Ty::I32, false), Param::ptr("key", AES_KEY, Out, true)];

/// `void AES_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key)`.
pub const ENCRYPT: Entry = Entry {
    kernel: "aes",
    prefix: "AES_encrypt_",
    suffix: "",
    alias: Some("AES_encrypt"),
    abis: ABIS,
    params: BLOCK_PARAMS,
    ret: Ret::Void,
    summary: "AES block encryption (T-tables)",
};
/// `void AES_decrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key)`.
pub const DECRYPT: Entry = Entry { prefix: "AES_decrypt_", alias: Some("AES_decrypt"), summary: "AES block decryption (T-tables)", ..ENCRYPT };
/// `int AES_set_encrypt_key(const unsigned char *userKey, int bits, AES_KEY *key)`.
pub const SET_ENCRYPT_KEY: Entry = Entry {
    kernel: "aes",
    prefix: "AES_set_encrypt_key_",
    suffix: "",
    alias: Some("AES_set_encrypt_key"),
    abis: ABIS,
    params: SETKEY_PARAMS,
    ret: Ret::Int,
    summary: "AES key schedule: 0, -1 for a NULL pointer, -2 for a key size other than 128/192/256",
};
/// `int AES_set_decrypt_key(const unsigned char *userKey, int bits, AES_KEY *key)`.
pub const SET_DECRYPT_KEY: Entry = Entry {
    prefix: "AES_set_decrypt_key_",
    alias: Some("AES_set_decrypt_key"),
    summary: "AES decryption key schedule (equivalent inverse cipher): 0, -1, -2 as set_encrypt_key",
    ..SET_ENCRYPT_KEY
};
/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&ENCRYPT, &DECRYPT, &SET_ENCRYPT_KEY, &SET_DECRYPT_KEY, &CTR32];

/// OpenSSL's five AES functions, as a kernel declares them: what the benchmark, the known
/// answers and the RTL plan call (`aes` and `aes-ct` share them).
pub(crate) struct Functions {
    pub encrypt: &'static Entry,
    pub decrypt: &'static Entry,
    pub set_encrypt_key: &'static Entry,
    pub set_decrypt_key: &'static Entry,
    pub ctr32: &'static Entry,
}

const FUNCTIONS: Functions = Functions { encrypt: &ENCRYPT, decrypt: &DECRYPT, set_encrypt_key: &SET_ENCRYPT_KEY, set_decrypt_key: &SET_DECRYPT_KEY, ctr32: &CTR32 };

pub const KERNEL: Kernel = Kernel {
    benches: &[Bench { abi: Abi::Psabi, module: None, drive: |h, s| bench(&FUNCTIONS, h, s) }, Bench { abi: Abi::Go, module: None, drive: |h, s| bench(&FUNCTIONS, h, s) }],
    kat: Some(|v| kat(&FUNCTIONS, v)),
    rtl: Some(|v, s| rtl_plan(&FUNCTIONS, v, s)),
    hooks: &[Hook::Openssl(Openssl { slot: OpensslSlot::Aes, variants: &["c906"], entries: ENTRIES })],
    ..Kernel::new(
        "aes",
        "AES-128/192/256 block encrypt/decrypt and key schedules (T-tables, OpenSSL ABI)",
        &[
            Variant { name: "c906", target: "c906", abis: &[Abi::Psabi, Abi::Go], build: |v, t, abi| build(Isa::C906, v, t, abi), vlens: &[] },
            Variant { name: "rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Go], build: |v, t, abi| build(Isa::Rv64, v, t, abi), vlens: &[] },
        ],
        ENTRIES,
    )
};

// ---- tables ---------------------------------------------------------------------------

fn xtime(a: u8) -> u8 {
    (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 }
}

fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    p
}

/// The AES S-box: multiplicative inverse in GF(2^8) followed by the affine map.
pub fn sbox() -> [u8; 256] {
    let mut s = [0u8; 256];
    for (x, out) in s.iter_mut().enumerate() {
        let inv = if x == 0 { 0 } else { (1..=255u8).find(|&y| gmul(x as u8, y) == 1).unwrap() };
        let mut b = inv;
        let mut r = 0x63u8;
        for _ in 0..5 {
            r ^= b;
            b = b.rotate_left(1);
        }
        *out = r;
    }
    s
}

pub fn inv_sbox() -> [u8; 256] {
    let s = sbox();
    let mut i = [0u8; 256];
    for (x, &y) in s.iter().enumerate() {
        i[y as usize] = x as u8;
    }
    i
}

fn word(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

/// Te0..Te3 (each 256 little-endian words) then the S-box (256 bytes). Column j's new value
/// is Te0[s_j.b0] ^ Te1[s_{j+1}.b1] ^ Te2[s_{j+2}.b2] ^ Te3[s_{j+3}.b3] ^ rk_j, with
/// `Te0[x]` = (2S, S, S, 3S) as bytes 0..3 and Te_k = Te0 rotated left by 8k.
pub fn enc_tables() -> Vec<u8> {
    let s = sbox();
    let mut out = Vec::with_capacity(4 * 1024 + 256);
    for k in 0..4 {
        for x in 0..256 {
            let v = s[x];
            let t0 = word([xtime(v), v, v, xtime(v) ^ v]);
            out.extend_from_slice(&t0.rotate_left(8 * k).to_le_bytes());
        }
    }
    out.extend_from_slice(&s);
    out
}

/// Td0..Td3 then the inverse S-box: `Td0[x]` = (14·IS, 9·IS, 13·IS, 11·IS).
pub fn dec_tables() -> Vec<u8> {
    let is = inv_sbox();
    let mut out = Vec::with_capacity(4 * 1024 + 256);
    for k in 0..4 {
        for x in 0..256 {
            let v = is[x];
            let t0 = word([gmul(v, 14), gmul(v, 9), gmul(v, 13), gmul(v, 11)]);
            out.extend_from_slice(&t0.rotate_left(8 * k).to_le_bytes());
        }
    }
    out.extend_from_slice(&is);
    out
}

pub(crate) const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

// ---- the two ways to look a byte up -----------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// th.extu + th.lrwu / th.lrbu
    C906,
    /// shift, mask, add, load
    Rv64,
}

/// Why T-table AES is not constant time: the declared leak of every table lookup.
pub const TABLE_LEAK: &str = "T-table lookups index the AES tables by key- and data-dependent bytes";

/// `dst = tab[byte at bit `lsb` of src]` (32-bit entries).
pub(crate) fn lookup_w(f: &mut Func, isa: Isa, dst: Reg, tab: Reg, src: Reg, lsb: u32) {
    f.leaking(LeakKind::SecretAddress, TABLE_LEAK, |f| match isa {
        Isa::C906 => {
            let msb = lsb + 7;
            kasm!(f, th.extu {dst}, {src}, {msb}, {lsb}; th.lrwu {dst}, {tab}, {dst}, 2;);
        }
        Isa::Rv64 => {
            if lsb == 0 {
                kasm!(f, slli {dst}, {src}, 2;);
            } else {
                let sh = lsb - 2;
                kasm!(f, srli {dst}, {src}, {sh};);
            }
            kasm!(f, andi {dst}, {dst}, 0x3fc; add {dst}, {dst}, {tab}; lwu {dst}, 0({dst}););
        }
    })
}

/// `dst = tab[byte at bit `lsb` of src]` (byte entries).
pub(crate) fn lookup_b(f: &mut Func, isa: Isa, dst: Reg, tab: Reg, src: Reg, lsb: u32) {
    f.leaking(LeakKind::SecretAddress, TABLE_LEAK, |f| match isa {
        Isa::C906 => {
            let msb = lsb + 7;
            kasm!(f, th.extu {dst}, {src}, {msb}, {lsb}; th.lrbu {dst}, {tab}, {dst}, 0;);
        }
        Isa::Rv64 => {
            if lsb == 0 {
                kasm!(f, andi {dst}, {src}, 255;);
            } else {
                kasm!(f, srli {dst}, {src}, {lsb}; andi {dst}, {dst}, 255;);
            }
            kasm!(f, add {dst}, {dst}, {tab}; lbu {dst}, 0({dst}););
        }
    })
}

/// How a looked-up value is combined into its accumulator.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    /// acc ^= v
    Xor,
    /// acc = r ^ v
    XorWith(Reg),
    /// acc = v (the first contribution)
    Init,
    /// acc ^= v << n
    ShlXor(u32),
    /// acc += v * m (th.mula; v < 2^8 and m = 2^k with k <= 24, so + is ^ and the C906's
    /// multiplier takes its short, data-independent path)
    Mula(Reg),
}

/// A lookup queued for software pipelining: acc (op)= table[byte at bit lsb of src].
#[derive(Clone, Copy)]
pub(crate) struct Lk {
    pub acc: Reg,
    pub tab: Reg,
    pub src: Reg,
    pub lsb: u32,
    pub byte: bool,
    pub how: Combine,
}

/// Emits lookups so that each result is used at least two instructions after its load (no
/// load-use stall on the C906): lookup i+1 starts before lookup i is combined.
pub(crate) fn pipelined(f: &mut Func, isa: Isa, lks: &[Lk], tmps: &[Reg]) {
    let depth = tmps.len() - 1;
    for i in 0..lks.len() + depth {
        if i < lks.len() {
            let l = lks[i];
            let t = if l.how == Combine::Init { l.acc } else { tmps[i % tmps.len()] };
            if l.byte {
                lookup_b(f, isa, t, l.tab, l.src, l.lsb);
            } else {
                lookup_w(f, isa, t, l.tab, l.src, l.lsb);
            }
        }
        if i >= depth {
            let l = lks[i - depth];
            let t = tmps[(i - depth) % tmps.len()];
            let acc = l.acc;
            match l.how {
                Combine::Init => {}
                Combine::Xor => kasm!(f, xor {acc}, {acc}, {t};),
                Combine::XorWith(r) => kasm!(f, xor {acc}, {r}, {t};),
                Combine::ShlXor(sh) => kasm!(f, slli {t}, {t}, {sh}; xor {acc}, {acc}, {t};),
                Combine::Mula(m) => kasm!(f, th.mula {acc}, {t}, {m};),
            }
        }
    }
}

/// Registers of the round functions.
pub(crate) struct Regs {
    /// Round u of 13 finds its key at 16u(key) (see [`block_entry`]).
    pub key: Reg,
    /// T0..T3, then the byte S-box after them.
    pub tab: [Reg; 5],
    /// The state between rounds (odd rounds read `s` and write `n`).
    pub s: [Reg; 4],
    pub n: [Reg; 4],
    /// Lookup results in flight.
    pub tmp: [Reg; 2],
}

/// Loads table bases: tab[0..4] = T0..T3, tab[4] = the byte S-box after them.
pub(crate) fn table_bases(f: &mut Func, r: &Regs, sym: &str) {
    f.la(r.tab[0], sym);
    for k in 1..4 {
        let (d, s) = (r.tab[k], r.tab[k - 1]);
        kasm!(f, addi {d}, {s}, 1024;);
    }
}

/// Entry: load the block xor round key 0 as two 64-bit halves (s0 = columns 0|1,
/// s2 = columns 2|3; the first round reads columns 1 and 3 from the upper halves), and set
/// `key` so that full round u (1..13) finds its round key at 16u and the final one at 224.
/// Leaves the round count in `rounds`.
fn block_entry(f: &mut Func, r: &Regs, inp: Reg, rounds: Reg) {
    let [s0, _, s2, _] = r.s;
    let [t0, t1] = r.tmp;
    let key = r.key;
    load_block(f, r.n, inp, [s0, s2]);
    load_key64(f, r.key, t0, 0, r.n[0]);
    load_key64(f, r.key, t1, 8, r.n[0]);
    kasm!(f,
        lw {rounds}, 240({key});
        xor {s0}, {s0}, {t0};
        xor {s2}, {s2}, {t1};
        // key' = key + 16*rounds - 224: round u of 13 then reads 16u(key').
        slli {t0}, {rounds}, 4;
        add {key}, {key}, {t0};
        addi {key}, {key}, -224;
    );
}

/// dst = the 16 bytes at `p` as two little-endian doublewords. Where misaligned accesses
/// are slow, a misaligned `p` is read with aligned loads combined by shifts (the aligned
/// words around the block: nothing outside them is touched). `tmp`: four temporaries.
pub(crate) fn load_block(f: &mut Func, tmp: [Reg; 4], p: Reg, dst: [Reg; 2]) {
    let [d0, d1] = dst;
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, ld {d0}, 0({p}); ld {d1}, 8({p}););
        return;
    }
    let [a, sh, rsh, w] = tmp;
    kasm!(f,
        andi {sh}, {p}, 7;
        bnez {sh}, in_unaligned;
        ld {d0}, 0({p});
        ld {d1}, 8({p});
    in_loaded:
    );
    f.cold(|f| kasm!(f,
    in_unaligned:
        // a = p rounded down; d_k = (w_k >> 8·(p mod 8)) | (w_{k+1} << (64 - 8·(p mod 8)))
        sub {a}, {p}, {sh};
        slli {sh}, {sh}, 3;
        sub {rsh}, zero, {sh};
        ld {d0}, 0({a});
        ld {d1}, 8({a});
        ld {w}, 16({a});
        srl {d0}, {d0}, {sh};
        sll {a}, {d1}, {rsh};
        or {d0}, {d0}, {a};
        srl {d1}, {d1}, {sh};
        sll {w}, {w}, {rsh};
        or {d1}, {d1}, {w};
        j in_loaded;
    ));
}

/// dst = round-key bytes off..off+8 as a little-endian doubleword (`AES_KEY` is only
/// 4-byte aligned: two word loads where misaligned doublewords are slow).
pub(crate) fn load_key64(f: &mut Func, key: Reg, dst: Reg, off: i64, tmp: Reg) {
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, ld {dst}, {off}({key}););
    } else {
        let o4 = off + 4;
        kasm!(f, lwu {dst}, {off}({key}); lwu {tmp}, {o4}({key}); slli {tmp}, {tmp}, 32; or {dst}, {dst}, {tmp};);
    }
}

/// The 16 bytes at `p` = (d0, d1), little-endian; a misaligned `p` byte by byte where
/// misaligned accesses are slow. d0 and d1 are clobbered.
pub(crate) fn store_block(f: &mut Func, p: Reg, d: [Reg; 2], t: Reg) {
    let [d0, d1] = d;
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, sd {d0}, 0({p}); sd {d1}, 8({p}););
        return;
    }
    kasm!(f,
        andi {t}, {p}, 7;
        bnez {t}, out_unaligned;
        sd {d0}, 0({p});
        sd {d1}, 8({p});
    out_stored:
    );
    f.cold(|f| {
        kasm!(f, out_unaligned:);
        store_bytes16(f, p, d);
        kasm!(f, j out_stored;);
    });
}

/// The 16 bytes (d0, d1), little-endian, stored at `p` a byte at a time (any alignment);
/// d0 and d1 are clobbered.
pub(crate) fn store_bytes16(f: &mut Func, p: Reg, d: [Reg; 2]) {
    for (k, w) in d.into_iter().enumerate() {
        for i in 0..8i64 {
            let off = 8 * k as i64 + i;
            kasm!(f, sb {w}, {off}({p}););
            if i < 7 {
                kasm!(f, srli {w}, {w}, 8;);
            }
        }
    }
}

/// One full round u: n_j = rk_j ^ T0[a.b0] ^ T1[b.b1] ^ T2[c.b2] ^ T3[d.b3] where
/// (a, b, c, d) are the columns ShiftRows (or InvShiftRows) brings to column j. `src[j]` is
/// (register, bit offset) of column j.
pub(crate) fn round(f: &mut Func, isa: Isa, r: &Regs, src: [(Reg, u32); 4], dst: [Reg; 4], u: i64, inverse: bool) {
    for j in 0..4 {
        let (d, off, key) = (dst[j], 16 * u + 4 * j as i64, r.key);
        kasm!(f, lw {d}, {off}({key}););
    }
    let mut lks = Vec::new();
    for (j, &acc) in dst.iter().enumerate() {
        for k in 0..4 {
            let col = if inverse { (j + 4 - k) % 4 } else { (j + k) % 4 };
            let (reg, base) = src[col];
            lks.push(Lk { acc, tab: r.tab[k], src: reg, lsb: base + 8 * k as u32, byte: false, how: Combine::Xor });
        }
    }
    pipelined(f, isa, &lks, &r.tmp);
}

/// The final round (SubBytes, ShiftRows, AddRoundKey, no MixColumns) from `src`, left in
/// c0 and c2 as the two 64-bit output words, and stored to `out` if given: c0 = rk01 ^ c0 ^ c1 << 32, where column j's
/// bytes are c_j = S[a.b0] + S[b.b1]·2^8 + S[c.b2]·2^16 + S[d.b3]·2^24 (th.mula on the
/// C906, shifts and xors elsewhere).
pub(crate) fn final_columns(f: &mut Func, isa: Isa, r: &Regs, src: [Reg; 4], c: [Reg; 4], consts: [Reg; 3], inverse: bool, out: Option<Reg>) {
    let key = r.key;
    if isa == Isa::C906 {
        let [k8, k16, k24] = consts;
        kasm!(f, addi {k8}, zero, 256; lui {k16}, 16; lui {k24}, 4096;);
    }
    let mut lks = Vec::new();
    // Byte-major order: the four columns' accumulations interleave (th.mula has latency 3).
    for k in 0..4 {
        for (j, &acc) in c.iter().enumerate() {
            let col = if inverse { (j + 4 - k) % 4 } else { (j + k) % 4 };
            let how = match (k, isa) {
                (0, _) => Combine::Init,
                (_, Isa::C906) => Combine::Mula(consts[k - 1]),
                (_, Isa::Rv64) => Combine::ShlXor(8 * k as u32),
            };
            lks.push(Lk { acc, tab: r.tab[4], src: src[col], lsb: 8 * k as u32, byte: true, how });
        }
    }
    pipelined(f, isa, &lks, &r.tmp);
    let [c0, c1, c2, c3] = c;
    let [t0, t1] = r.tmp;
    let _ = key;
    load_key64(f, r.key, t0, 224, r.s[0]);
    load_key64(f, r.key, t1, 232, r.s[0]);
    // out[0..8] = (c0 | c1 << 32) ^ rk, out[8..16] = (c2 | c3 << 32) ^ rk. c3, the last
    // accumulation, is read last; where misaligned stores are fast the first store comes
    // before it, leaving the multiplier's result a write-back slot (docs/cost-model.md).
    kasm!(f,
        slli {c1}, {c1}, 32;
        xor {c0}, {c0}, {t0};
        xor {c0}, {c0}, {c1};
    );
    if let Some(out) = out.filter(|_| f.target.misaligned == Misaligned::Fast) {
        kasm!(f,
            sd {c0}, 0({out});
            slli {c3}, {c3}, 32;
            xor {c2}, {c2}, {t1};
            xor {c2}, {c2}, {c3};
            sd {c2}, 8({out});
        );
        return;
    }
    kasm!(f,
        slli {c3}, {c3}, 32;
        xor {c2}, {c2}, {t1};
        xor {c2}, {c2}, {c3};
    );
    if let Some(out) = out {
        store_block(f, out, [c0, c2], t0);
    }
}

/// AES_encrypt / AES_decrypt.
fn block_fn(isa: Isa, e: &'static Entry, variant: &str, t: &Target, abi: Abi, tables: &str, inverse: bool) -> Func {
    let mut f = Func::entry(e, variant, t, abi);
    let [inp, out, key] = f.params();
    let tab = [f.xreg("T0"), f.xreg("T1"), f.xreg("T2"), f.xreg("T3"), f.xreg("S")];
    let s = f.xregs::<4>("s");
    let n = f.xregs::<4>("n");
    let tmp = f.xregs::<2>("t");
    let consts = [f.xreg("k8"), f.xreg("k16"), f.xreg("k24")];
    let col = f.xregs::<4>("c");
    for p in tab.iter().chain(&consts) {
        f.public(*p);
    }
    // The two output words are published (stored to out); the other columns are not.
    f.public(col[0]);
    f.public(col[2]);
    let r = Regs { key, tab, s, n, tmp };
    let rounds = f.xreg("rounds");
    table_bases(&mut f, &r, tables);
    block_entry(&mut f, &r, inp, rounds);
    // Layout: AES-128 branches over the AES-256/192 entry rounds to its first round (a taken
    // branch the model and the RTL charge 2 cycles when the BTB does not know it, where a
    // not-taken one seen first is predicted taken and costs 4); AES-256 and AES-192 run
    // their first rounds and jump into the shared rounds. The first round of each path
    // reads the packed entry state.
    let [s0, _, s2, _] = r.s;
    let packed = [(s0, 0), (s0, 32), (s2, 0), (s2, 32)];
    let t = r.tmp[0];
    let emit_round = |f: &mut Func, u: i64, first: bool| {
        let (src, dst) = if u % 2 == 1 { (r.s, r.n) } else { (r.n, r.s) };
        let cols = if first { packed } else { [(src[0], 0), (src[1], 0), (src[2], 0), (src[3], 0)] };
        f.comment(format!("round {u} of 13{}", if first { " (first round of this key size)" } else { "" }));
        round(f, isa, &r, cols, dst, u, inverse);
    };
    kasm!(f, addi {t}, zero, 10; beq {rounds}, {t}, r128;);
    f.comment("AES-256: rounds 1..5, then round 6 onwards below; AES-192: rounds 3..5");
    kasm!(f, addi {t}, zero, 12; beq {rounds}, {t}, aes192;);
    emit_round(&mut f, 1, true);
    for u in 2..=5 {
        if u == 4 {
            let l = f.named_label("r4");
            f.bind(l);
        }
        emit_round(&mut f, u, false);
    }
    kasm!(f, j r6; aes192:);
    emit_round(&mut f, 3, true);
    kasm!(f, j r4; r128:);
    emit_round(&mut f, 5, true);
    for u in 6..=13 {
        if u == 6 {
            let l = f.named_label("r6");
            f.bind(l);
        }
        emit_round(&mut f, u, false);
    }
    f.comment("final round: S-box bytes, no MixColumns");
    let (s4, t3) = (r.tab[4], r.tab[3]);
    kasm!(f, addi {s4}, {t3}, 1024;);
    final_columns(&mut f, isa, &r, r.n, col, consts, inverse, Some(out));
    f.ret();
    f
}

// ---- key schedules ----------------------------------------------------------------------

/// Parameter checks shared by both set-key functions: a0 = -1 / -2 on bad input (returns
/// early), else `nk` = key words (4/6/8), `total` = schedule words (44/52/60), and
/// rounds stored at byte 240.
pub(crate) fn setkey_checks(f: &mut Func, user: Reg, bits: Reg, key: Reg, nk: Reg, total: Reg) {
    let t = f.xreg("t");
    kasm!(f,
        beqz {user}, null;
        beqz {key}, null;
        addi {t}, zero, 128;
        beq {bits}, {t}, k128;
        addi {t}, zero, 192;
        beq {bits}, {t}, k192;
        addi {t}, zero, 256;
        beq {bits}, {t}, k256;
    );
    f.ret_imm(-2);
    kasm!(f, null:);
    f.ret_imm(-1);
    kasm!(f,
    k128:
        addi {nk}, zero, 4;
        j kset;
    k192:
        addi {nk}, zero, 6;
        j kset;
    k256:
        addi {nk}, zero, 8;
    kset:
        // rounds = nk + 6, total words = 4 * (rounds + 1)
        addi {t}, {nk}, 6;
        sw {t}, 240({key});
        addi {total}, {t}, 1;
        slli {total}, {total}, 2;
    );
}

/// Expands the key into `key` (FIPS-197 5.2, words in memory byte order).
fn expand(f: &mut Func, isa: Isa, user: Reg, key: Reg, nk: Reg, total: Reg, sbox: Reg, rcon: Reg) {
    let [w, t, b, p, i, k, lim] = [f.xreg("w"), f.xreg("tw"), f.xreg("b"), f.xreg("p"), f.xreg("i"), f.xreg("k"), f.xreg("lim")];
    f.comment("copy the user key: w[0..nk]");
    kasm!(f,
        addi {i}, zero, 0;
    copy:
        slli {t}, {i}, 2;
        add {p}, {user}, {t};
    );
    load_word_any(f, w, p, b);
    kasm!(f,
        add {p}, {key}, {t};
        sw {w}, 0({p});
        addi {i}, {i}, 1;
        bltu {i}, {nk}, copy;
        // p = &w[nk]; w = w[nk-1]; k = i mod nk
        addi {p}, {p}, 4;
        addi {k}, zero, 0;
    next:
        bnez {k}, not_rot;
    );
    f.comment("temp = SubWord(RotWord(temp)) ^ rcon: bytes (S[b1], S[b2], S[b3], S[b0])");
    sub_word(f, isa, t, w, sbox, b, true);
    kasm!(f,
        lbu {b}, 0({rcon});
        addi {rcon}, {rcon}, 1;
        xor {w}, {t}, {b};
        j mix;
    not_rot:
        addi {lim}, zero, 4;
        bne {k}, {lim}, mix;
        addi {lim}, zero, 8;
        bne {nk}, {lim}, mix;
    );
    f.comment("AES-256, i mod 8 = 4: temp = SubWord(temp)");
    sub_word(f, isa, t, w, sbox, b, false);
    kasm!(f,
        addi {w}, {t}, 0;
    mix:
        // w[i] = w[i - nk] ^ temp
        slli {t}, {nk}, 2;
        sub {t}, {p}, {t};
        lw {t}, 0({t});
        xor {w}, {w}, {t};
        sw {w}, 0({p});
        addi {p}, {p}, 4;
        addi {i}, {i}, 1;
        addi {k}, {k}, 1;
        bne {k}, {nk}, same;
        addi {k}, zero, 0;
    same:
        bltu {i}, {total}, next;
    );
}

/// dst = the little-endian word at `p`, which may be misaligned (byte loads where
/// misaligned accesses are slow).
pub(crate) fn load_word_any(f: &mut Func, dst: Reg, p: Reg, tmp: Reg) {
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, lwu {dst}, 0({p}););
        return;
    }
    kasm!(f, lbu {dst}, 0({p}););
    for k in 1..4i64 {
        let sh = 8 * k;
        kasm!(f, lbu {tmp}, {k}({p}); slli {tmp}, {tmp}, {sh}; or {dst}, {dst}, {tmp};);
    }
}

/// dst = S-box applied to each byte of src; `rot` also rotates (RotWord first).
fn sub_word(f: &mut Func, isa: Isa, dst: Reg, src: Reg, sbox: Reg, tmp: Reg, rot: bool) {
    for pos in 0..4u32 {
        let k = if rot { (pos + 1) % 4 } else { pos };
        let into = if pos == 0 { dst } else { tmp };
        lookup_b(f, isa, into, sbox, src, 8 * k);
        if pos > 0 {
            let sh = 8 * pos;
            kasm!(f, slli {tmp}, {tmp}, {sh}; or {dst}, {dst}, {tmp};);
        }
    }
}

fn setkey_fn(isa: Isa, e: &'static Entry, variant: &str, t: &Target, abi: Abi, enc_tab: &str, dec_tab: Option<&str>) -> Func {
    let mut f = Func::entry(e, variant, t, abi);
    let [user, bits, key] = f.params();
    let [nk, total, sbox, rcon] = [f.xreg("nk"), f.xreg("total"), f.xreg("sbox"), f.xreg("rcon")];
    setkey_checks(&mut f, user, bits, key, nk, total);
    f.la_off(sbox, enc_tab, 4096);
    f.la(rcon, &format!("{enc_tab}_rcon"));
    expand(&mut f, isa, user, key, nk, total, sbox, rcon);
    if let Some(dec_tab) = dec_tab {
        decrypt_schedule(&mut f, isa, key, total, sbox, dec_tab);
    }
    f.ret_imm(0);
    f
}

/// Turns an encryption schedule into the equivalent-inverse-cipher one: round keys in
/// reverse order, InvMixColumns on all but the first and last
/// (Td0[S[b0]] ^ Td1[S[b1]] ^ Td2[S[b2]] ^ Td3[S[b3]]).
fn decrypt_schedule(f: &mut Func, isa: Isa, key: Reg, total: Reg, sbox: Reg, dec_tab: &str) {
    let [lo, hi, a, b, td0, td1, td2, td3, x, y] =
        [f.xreg("lo"), f.xreg("hi"), f.xreg("a"), f.xreg("b"), f.xreg("Td0"), f.xreg("Td1"), f.xreg("Td2"), f.xreg("Td3"), f.xreg("x"), f.xreg("y")];
    f.comment("reverse the order of the round keys (16 bytes at a time)");
    kasm!(f,
        addi {lo}, {key}, 0;
        slli {hi}, {total}, 2;
        add {hi}, {hi}, {key};
        addi {hi}, {hi}, -16;
    swap:
    );
    // AES_KEY is 4-byte aligned: doublewords only where misaligned ones are fast.
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f,
            ld {a}, 0({lo}); ld {b}, 0({hi}); sd {b}, 0({lo}); sd {a}, 0({hi});
            ld {a}, 8({lo}); ld {b}, 8({hi}); sd {b}, 8({lo}); sd {a}, 8({hi});
        );
    } else {
        for off in [0i64, 4, 8, 12] {
            kasm!(f, lw {a}, {off}({lo}); lw {b}, {off}({hi}); sw {b}, {off}({lo}); sw {a}, {off}({hi}););
        }
    }
    kasm!(f,
        addi {lo}, {lo}, 16;
        addi {hi}, {hi}, -16;
        bltu {lo}, {hi}, swap;
    );
    f.comment("InvMixColumns of words 4 .. total-4");
    f.la(td0, dec_tab);
    kasm!(f,
        addi {td1}, {td0}, 1024;
        addi {td2}, {td1}, 1024;
        addi {td3}, {td2}, 1024;
        addi {lo}, {key}, 16;
        slli {hi}, {total}, 2;
        add {hi}, {hi}, {key};
        addi {hi}, {hi}, -16;
    imc:
        lwu {a}, 0({lo});
    );
    let tds = [td0, td1, td2, td3];
    for (k, &td) in tds.iter().enumerate() {
        lookup_b(f, isa, x, sbox, a, 8 * k as u32);
        f.leaking(LeakKind::SecretAddress, TABLE_LEAK, |f| {
            if isa == Isa::C906 {
                kasm!(f, th.lrwu {x}, {td}, {x}, 2;);
            } else {
                kasm!(f, slli {x}, {x}, 2; add {x}, {x}, {td}; lwu {x}, 0({x}););
            }
        });
        if k == 0 {
            kasm!(f, addi {y}, {x}, 0;);
        } else {
            kasm!(f, xor {y}, {y}, {x};);
        }
    }
    kasm!(f,
        sw {y}, 0({lo});
        addi {lo}, {lo}, 4;
        bltu {lo}, {hi}, imc;
    );
}


// ---- counter mode -----------------------------------------------------------------------

/// `void AES_ctr32_encrypt(const unsigned char *in, unsigned char *out, size_t blocks,
/// const AES_KEY *key, const unsigned char ivec[16])`: OpenSSL's `ctr128_f`.
pub const CTR32: Entry = Entry {
    kernel: "aes",
    prefix: "AES_ctr32_encrypt_",
    suffix: "",
    alias: Some("AES_ctr32_encrypt"),
    abis: ABIS,
    params: &[
        Param::ptr("in", Elem::U8, In, true),
        Param::ptr("out", Elem::U8, Out, false),
        Param::val("blocks", Ty::Size, false),
        Param::ptr("key", AES_KEY, In, true).public(ROUNDS_PUBLIC),
        Param::ptr("ivec", Elem::U8, In, false).array(16),
    ],
    ret: Ret::Void,
    summary: "AES counter mode: out = in ^ E(ivec), the big-endian 32-bit counter in ivec[12..16] incremented (mod 2^32) per block; ivec is not written back",
};

/// Counter mode's state across blocks. Only the counter's low byte changes from one block
/// to the next (until it wraps): round 1 then changes in column 0 alone, and round 2 in one
/// lookup per column. `refresh` computes the rest once per 256 counter values.
pub(crate) struct Ctr {
    pub isa: Isa,
    pub r: Regs,
    /// The `AES_KEY` (round keys 0..2 are read by the refresh).
    pub key0: Reg,
    pub ivec: Reg,
    /// The counter in host order (low 32 bits; kept sign-extended by `addiw`).
    pub ctr: Reg,
    /// Byte 15 of round key 0 (the counter's low byte is XORed with it).
    pub k15: Reg,
    /// Round 1, column 0 without the counter byte's lookup.
    pub p0: Reg,
    /// Round 2, column j without the lookup of round 1's column 0.
    pub q: [Reg; 4],
    /// rounds - 10: 0 for AES-128, which has no rounds before the shared ones.
    pub extra: Reg,
}

/// Round 2's lookup of round 1's column 0 lands in column j through table k = (4 - j) mod 4.
fn col0_table(j: usize) -> usize {
    (4 - j) % 4
}

/// dst = the little-endian word at off(p), p of any alignment (byte loads where misaligned
/// accesses are slow).
fn load_word_at(f: &mut Func, dst: Reg, p: Reg, off: i64, tmp: Reg) {
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, lwu {dst}, {off}({p}););
        return;
    }
    kasm!(f, lbu {dst}, {off}({p}););
    for k in 1..4i64 {
        let (o, sh) = (off + k, 8 * k);
        kasm!(f, lbu {tmp}, {o}({p}); slli {tmp}, {tmp}, {sh}; or {dst}, {dst}, {tmp};);
    }
}

/// dst = the bytes of the low word of src reversed (dst's upper half is not used).
fn bswap32(f: &mut Func, isa: Isa, dst: Reg, src: Reg, t: Reg) {
    match isa {
        Isa::C906 => kasm!(f, th.revw {dst}, {src};),
        Isa::Rv64 => {
            f.comment("dst = byte0 << 24 | byte1 << 16 | byte2 << 8 | byte3");
            kasm!(f, andi {dst}, {src}, 255; slli {dst}, {dst}, 24;);
            for (sh, to) in [(8i64, 16i64), (16, 8), (24, 0)] {
                kasm!(f, srli {t}, {src}, {sh}; andi {t}, {t}, 255;);
                if to > 0 {
                    kasm!(f, slli {t}, {t}, {to};);
                }
                kasm!(f, or {dst}, {dst}, {t};);
            }
        }
    }
}

/// Sets up counter mode: table bases, `key'` for the shared rounds, the counter from
/// ivec[12..16] (big-endian) and the cache.
pub(crate) fn ctr_setup(f: &mut Func, isa: Isa, key: Reg, ivec: Reg, tables: &str) -> Ctr {
    let tab = [f.xreg("T0"), f.xreg("T1"), f.xreg("T2"), f.xreg("T3"), f.xreg("S")];
    for p in tab {
        f.public(p);
    }
    let r = Regs { key: f.xreg("rk"), tab, s: f.xregs::<4>("s"), n: f.xregs::<4>("n"), tmp: f.xregs::<2>("t") };
    let (ctr, extra) = (f.xreg("ctr"), f.xreg("extra"));
    f.public(ctr);
    f.public(extra);
    f.public(r.key);
    let c = Ctr { isa, key0: key, ivec, ctr, k15: f.xreg("k15"), p0: f.xreg("p0"), q: f.xregs::<4>("q"), extra, r };
    table_bases(f, &c.r, tables);
    let (rk, t) = (c.r.key, c.r.tmp[0]);
    f.comment("rk = key + 16*rounds - 224: shared round u of 13 finds its key at 16u(rk); extra = rounds - 10");
    kasm!(f,
        lw {extra}, 240({key});
        slli {t}, {extra}, 4;
        add {rk}, {key}, {t};
        addi {rk}, {rk}, -224;
        addi {extra}, {extra}, -10;
    );
    f.comment("ctr = ivec[12..16] as a big-endian word");
    if isa == Isa::C906 {
        kasm!(f, lwu {t}, 12({ivec}); th.revw {ctr}, {t};);
    } else {
        kasm!(f, lbu {ctr}, 12({ivec}););
        for o in 13..16i64 {
            kasm!(f, slli {ctr}, {ctr}, 8; lbu {t}, {o}({ivec}); or {ctr}, {ctr}, {t};);
        }
    }
    ctr_refresh(f, &c);
    c
}

/// The cache for the counter's current upper 24 bits: s = counter block ^ round key 0,
/// round 1 (p0: column 0 without s3.b3's lookup; n1..n3 whole), round 2 without the
/// lookups of round 1's column 0 (q).
pub(crate) fn ctr_refresh(f: &mut Func, c: &Ctr) {
    let (isa, r) = (c.isa, &c.r);
    let (s, n, [t0, t1]) = (r.s, r.n, r.tmp);
    let (key, iv, k15, p0) = (c.key0, c.ivec, c.k15, c.p0);
    f.comment("s[j] = ivec word j ^ rk0[j]; s3 = bswap32(ctr) ^ rk0[3]; k15 = byte 15 of rk0");
    for j in 0..3 {
        let o = 4 * j as i64;
        load_word_at(f, s[j], iv, o, t0);
        kasm!(f, lw {t1}, {o}({key}); xor {s[j]}, {s[j]}, {t1};);
    }
    bswap32(f, isa, s[3], c.ctr, t0);
    kasm!(f, lw {t1}, 12({key}); xor {s[3]}, {s[3]}, {t1}; lbu {k15}, 15({key}););
    f.comment("round 1: p0 = rk1[0] ^ T0[s0.b0] ^ T1[s1.b1] ^ T2[s2.b2]; n[1..4] whole");
    let acc1 = [p0, n[1], n[2], n[3]];
    for (j, &a) in acc1.iter().enumerate() {
        let o = 16 + 4 * j as i64;
        kasm!(f, lw {a}, {o}({key}););
    }
    let mut lks = Vec::new();
    for (j, &acc) in acc1.iter().enumerate() {
        for k in 0..4 {
            if (j + k) % 4 == 3 && j == 0 {
                continue;
            }
            lks.push(Lk { acc, tab: r.tab[k], src: s[(j + k) % 4], lsb: 8 * k as u32, byte: false, how: Combine::Xor });
        }
    }
    pipelined(f, isa, &lks, &r.tmp);
    f.comment("round 2: q[j] = rk2[j] ^ the lookups of n1..n3");
    for (j, &a) in c.q.iter().enumerate() {
        let o = 32 + 4 * j as i64;
        kasm!(f, lw {a}, {o}({key}););
    }
    let mut lks = Vec::new();
    for (j, &acc) in c.q.iter().enumerate() {
        for k in 0..4 {
            if k == col0_table(j) {
                continue;
            }
            lks.push(Lk { acc, tab: r.tab[k], src: n[(j + k) % 4], lsb: 8 * k as u32, byte: false, how: Combine::Xor });
        }
    }
    pipelined(f, isa, &lks, &r.tmp);
}

/// Rounds 1 and 2 of the block for the current counter, from the cache, into `s`:
/// n0 = p0 ^ T3[(ctr ^ k15) & 0xff]; s[j] = q[j] ^ T_k[n0.b_k] with k = (4 - j) mod 4.
pub(crate) fn ctr_front(f: &mut Func, c: &Ctr) {
    let (r, n0, t0) = (&c.r, c.r.n[0], c.r.tmp[0]);
    let (ctr, k15, p0) = (c.ctr, c.k15, c.p0);
    f.comment("rounds 1, 2 from the cache: n0 = p0 ^ T3[ctr.b0 ^ k15]; s[j] = q[j] ^ T_k[n0.b_k]");
    kasm!(f, xor {t0}, {ctr}, {k15};);
    lookup_w(f, c.isa, t0, r.tab[3], t0, 0);
    kasm!(f, xor {n0}, {p0}, {t0};);
    let lks: Vec<Lk> = (0..4)
        .map(|j| {
            let k = col0_table(j);
            Lk { acc: r.s[j], tab: r.tab[k], src: n0, lsb: 8 * k as u32, byte: false, how: Combine::XorWith(c.q[j]) }
        })
        .collect();
    pipelined(f, c.isa, &lks, &r.tmp);
}

/// The rounds AES-192 (rounds 3, 4) and AES-256 (rounds 3..6) have before the shared ones,
/// out of line: `s` in, `s` out.
pub(crate) fn ctr_extra_rounds(f: &mut Func, c: &Ctr) {
    let extra = c.extra;
    f.scope(|f| {
        kasm!(f, bnez {extra}, extra_rounds; shared:);
        f.cold(|f| {
            kasm!(f, extra_rounds:);
            ctr_extra_round_body(f, c);
            kasm!(f, j shared;);
        });
    });
}

/// The extra rounds themselves (AES-192 or AES-256; falls through at the end).
pub(crate) fn ctr_extra_round_body(f: &mut Func, c: &Ctr) {
    let (r, extra, t) = (&c.r, c.extra, c.r.tmp[0]);
    let cols = |x: [Reg; 4]| x.map(|v| (v, 0));
    f.scope(|f| {
        f.comment("AES-256: rounds 3..6 (u = 3..6); AES-192: rounds 3, 4 (u = 5, 6)");
        kasm!(f, addi {t}, {extra}, -2; beqz {t}, aes192;);
        round(f, c.isa, r, cols(r.s), r.n, 3, false);
        round(f, c.isa, r, cols(r.n), r.s, 4, false);
        kasm!(f, aes192:);
        round(f, c.isa, r, cols(r.s), r.n, 5, false);
        round(f, c.isa, r, cols(r.n), r.s, 6, false);
    });
}

/// The rounds every key size shares (u = 7..13) and the final round, from `s`: the
/// keystream block in (col[0], col[2]).
pub(crate) fn ctr_shared_rounds(f: &mut Func, c: &Ctr, col: [Reg; 4], consts: [Reg; 3]) {
    let r = &c.r;
    for u in 7..=13 {
        let (src, dst) = if u % 2 == 1 { (r.s, r.n) } else { (r.n, r.s) };
        f.comment(format!("round u = {u} of 13"));
        round(f, c.isa, r, src.map(|v| (v, 0)), dst, u, false);
    }
    f.comment("final round");
    let (s4, t3) = (r.tab[4], r.tab[3]);
    kasm!(f, addi {s4}, {t3}, 1024;);
    final_columns(f, c.isa, r, r.n, col, consts, false, None);
}

/// out[off..off + 16] = in[off..off + 16] ^ (k0, k1), the keystream's two words; `inp`
/// and `out` of any alignment. k0 and k1 are clobbered.
pub(crate) fn ctr_xor_out(f: &mut Func, c: &Ctr, k: [Reg; 2], inp: Reg, out: Reg, off: i64) {
    let (d0, d1) = (f.xreg("in0"), f.xreg("in1"));
    let [k0, k1] = k;
    if f.target.misaligned == Misaligned::Fast {
        let o8 = off + 8;
        kasm!(f, ld {d0}, {off}({inp}); ld {d1}, {o8}({inp}); xor {k0}, {k0}, {d0}; xor {k1}, {k1}, {d1}; sd {k0}, {off}({out}); sd {k1}, {o8}({out}););
        return;
    }
    assert_eq!(off, 0, "the misaligned-safe paths take the block at offset 0");
    load_block(f, c.r.n, inp, [d0, d1]);
    kasm!(f, xor {k0}, {k0}, {d0}; xor {k1}, {k1}, {d1};);
    store_block(f, out, [k0, k1], d0);
}

/// ctr += 1 (mod 2^32); a new low-byte run refreshes the cache (out of line).
pub(crate) fn ctr_next(f: &mut Func, c: &Ctr) {
    let (ctr, t) = (c.ctr, c.r.tmp[1]);
    f.scope(|f| {
        kasm!(f, addiw {ctr}, {ctr}, 1; andi {t}, {ctr}, 255; beqz {t}, refresh; refreshed:);
        f.cold(|f| {
            kasm!(f, refresh:);
            ctr_refresh(f, c);
            kasm!(f, j refreshed;);
        });
    });
}

/// The final-round constants 2^8, 2^16, 2^24 (th.mula) and the round-output registers.
pub(crate) fn ctr_block_regs(f: &mut Func) -> ([Reg; 4], [Reg; 3]) {
    let col = f.xregs::<4>("c");
    let consts = [f.xreg("k8"), f.xreg("k16"), f.xreg("k24")];
    for p in consts {
        f.public(p);
    }
    (col, consts)
}

/// AES_ctr32_encrypt.
fn ctr32_fn(isa: Isa, variant: &str, t: &Target, abi: Abi, tables: &str) -> Func {
    let mut f = Func::entry(&CTR32, variant, t, abi);
    let [inp, out, blocks, key, ivec] = f.params();
    f.comment("blocks == 0 returns (the common path takes the branch: a taken branch the BTB does not know costs 2, a not-taken one seen first 4)");
    kasm!(f, bnez {blocks}, start; j done; start:);
    let c = ctr_setup(&mut f, isa, key, ivec, tables);
    let (col, consts) = ctr_block_regs(&mut f);
    kasm!(f, block:);
    ctr_front(&mut f, &c);
    ctr_extra_rounds(&mut f, &c);
    ctr_shared_rounds(&mut f, &c, col, consts);
    f.comment("out = in ^ keystream");
    ctr_xor_out(&mut f, &c, [col[0], col[2]], inp, out, 0);
    kasm!(f, addi {inp}, {inp}, 16; addi {out}, {out}, 16; addi {blocks}, {blocks}, -1;);
    ctr_next(&mut f, &c);
    kasm!(f, bnez {blocks}, block; done:);
    f.ret();
    f
}

fn build(isa: Isa, variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new("aes", variant, t, abi);
    m.notes = vec![
        "AES with T-tables (FIPS-197). NOT constant time: table lookups are indexed by key- and".into(),
        "data-dependent bytes, so cache timing can leak the key.".into(),
    ];
    let enc = format!("kgen_aes_{variant}_te");
    let dec = format!("kgen_aes_{variant}_td");
    m.add_data(DataObj { name: enc.clone(), align: 64, bytes: enc_tables(), elem: 4, global: false, comment: "Te0..Te3 (1 KiB each), then the S-box".into() });
    m.add_data(DataObj { name: dec.clone(), align: 64, bytes: dec_tables(), elem: 4, global: false, comment: "Td0..Td3 (1 KiB each), then the inverse S-box".into() });
    m.add_data(DataObj { name: format!("{enc}_rcon"), align: 1, bytes: RCON.to_vec(), elem: 1, global: false, comment: "round constants".into() });
    m.add(block_fn(isa, &ENCRYPT, variant, t, abi, &enc, false), true)?;
    m.add(block_fn(isa, &DECRYPT, variant, t, abi, &dec, true), true)?;
    m.add(setkey_fn(isa, &SET_ENCRYPT_KEY, variant, t, abi, &enc, None), true)?;
    m.add(setkey_fn(isa, &SET_DECRYPT_KEY, variant, t, abi, &enc, Some(&dec)), true)?;
    m.add(ctr32_fn(isa, variant, t, abi, &enc), true)?;
    Ok(m)
}


// ---- what the commands need: benchmark, known answers, RTL plan, hooks --------------------------

/// `kgen bench aes`: the block functions over the size one block at a time (in place, so
/// the table lookups see the size's data), `AES_set_encrypt_key(128)`, and
/// `AES_ctr32_encrypt` over the size in whole blocks (in place, AES-128) from a counter
/// whose low byte starts at 0x02 (as after GCM's J0): one cache refresh per 256 blocks.
pub(crate) fn bench(e: &Functions, h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let mut rows = Vec::new();
    let key = h.buffer(&[0x2b; 16], 0, false);
    let ks = h.buffer(&[0u8; 244], 0, true);
    let dks = h.buffer(&[0u8; 244], 0, true);
    let (set_name, set_e) = h.entry(e.set_encrypt_key)?;
    let (_, set_d) = h.entry(e.set_decrypt_key)?;
    h.call(set_e, &[key, 128, ks])?;
    h.call(set_d, &[key, 128, dks])?;
    for (entry, ks) in [(e.encrypt, ks), (e.decrypt, dks)] {
        let (name, f) = h.entry(entry)?;
        rows.extend(block_at_a_time(h, &name, f, sizes, &|p| vec![p, p, ks])?);
    }
    let m = measured(h, |h| h.call(set_e, &[key, 128, ks]))?;
    rows.push(figure(format!("{set_name}(128)"), 16, m));
    if let Ok((name, ctr)) = h.entry(e.ctr32) {
        let iv = h.buffer(&BENCH_IV, 0, false);
        for &n in sizes {
            let n = n.max(16).next_multiple_of(16);
            let buf = h.buffer(&vec![0x5a; n], 0, true);
            let m = measured(h, |h| h.call(ctr, &[buf, buf, (n / 16) as u64, ks, iv]))?;
            rows.push(figure(&name, n, m));
        }
    }
    Ok(rows)
}

/// Rows for a one-block function called once a block over each size's buffer, in place
/// (`args(p)`: the call's arguments for the block at `p`).
pub(crate) fn block_at_a_time(h: &mut dyn Harness, name: &str, f: u64, sizes: &[usize], args: &dyn Fn(u64) -> Vec<u64>) -> Result<Vec<Measured>, String> {
    let mut rows = Vec::new();
    for &n in sizes {
        let inp = h.buffer(&vec![0x5a; n.max(16)], 0, true);
        let m = measured(h, |h| {
            let (mut i, mut c) = (0, 0);
            for b in 0..n.div_ceil(16) {
                let (oi, oc) = h.call(f, &args(inp + 16 * b as u64))?;
                i += oi;
                c += oc;
            }
            Ok((i, c))
        })?;
        rows.push(figure(name, n, m));
    }
    Ok(rows)
}

/// The counter block the benchmarks start from (GCM test case 3's IV, counter 2).
pub const BENCH_IV: [u8; 16] = [0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88, 0, 0, 0, 2];

/// FIPS-197 C.1-C.3: key 000102..., this plaintext, and the ciphertext per key size.
pub const FIPS197_PT: &str = "00112233445566778899aabbccddeeff";
pub const FIPS197_CT: [(u64, &str); 3] =
    [(128, "69c4e0d86a7b0430d8cdb78070b4c55a"), (192, "dda97ca4864cdfe06eaf70a0ec0d7191"), (256, "8ea2b7ca516745bfeafc49904b496089")];

/// SP 800-38A F.5.1, CTR-AES128.Encrypt: key, initial counter block, plaintext, ciphertext.
pub const CTR_KEY: &str = "2b7e151628aed2a6abf7158809cf4f3c";
pub const CTR_IV: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
pub const CTR_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
pub const CTR_CT: &str = "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee";

/// Known answers: FIPS-197 C.1-C.3 encrypt and decrypt; SP 800-38A F.5.1 in place (the
/// counter's low word fcfdfeff does not wrap in four blocks, so a 32-bit counter gives the
/// same blocks), ivec not written back.
pub(crate) fn kat(e: &Functions, v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let pt = p.buf("in", unhex(FIPS197_PT), 0);
    for (n, (bits, ct)) in FIPS197_CT.into_iter().enumerate() {
        let key = p.buf("userKey", (0..(bits / 8) as u8).collect(), 0);
        let ks = p.buf("AES_KEY (encrypt)", vec![0; 244], 0);
        let dks = p.buf("AES_KEY (decrypt)", vec![0; 244], 0);
        let out = p.buf("out", vec![0; 16], 0);
        let back = p.buf("decrypted", vec![0; 16], 0);
        p.call(e.set_encrypt_key, v, vec![Buf(key, 0), Int(bits), Buf(ks, 0)], Some(0));
        p.call(e.encrypt, v, vec![Buf(pt, 0), Buf(out, 0), Buf(ks, 0)], None);
        p.call(e.set_decrypt_key, v, vec![Buf(key, 0), Int(bits), Buf(dks, 0)], Some(0));
        p.call(e.decrypt, v, vec![Buf(out, 0), Buf(back, 0), Buf(dks, 0)], None);
        p.expect(format!("FIPS-197 C.{} AES-{bits} encrypt", n + 1), out, 0, unhex(ct));
        p.expect(format!("FIPS-197 C.{} AES-{bits} decrypt", n + 1), back, 0, unhex(FIPS197_PT));
    }
    let key = p.buf("userKey", unhex(CTR_KEY), 0);
    let ks = p.buf("AES_KEY (encrypt)", vec![0; 244], 0);
    let iv = p.buf("ivec", unhex(CTR_IV), 0);
    let data = p.buf("in/out", unhex(CTR_PT), 0);
    p.call(e.set_encrypt_key, v, vec![Buf(key, 0), Int(128), Buf(ks, 0)], Some(0));
    p.call(e.ctr32, v, vec![Buf(data, 0), Buf(data, 0), Int(4), Buf(ks, 0), Buf(iv, 0)], None);
    p.expect("SP 800-38A F.5.1 CTR-AES128 (AES_ctr32_encrypt, 4 blocks in place)".into(), data, 0, unhex(CTR_CT));
    p.expect("SP 800-38A F.5.1: ivec unchanged".into(), iv, 0, unhex(CTR_IV));
    Ok(p)
}

/// What [`bench`] measures, on the RTL: one block in place, called as many times as the
/// largest size has blocks (the lookups' addresses change with the data, so the caches see
/// what n bytes do), the key schedule, and counter mode from [`BENCH_IV`].
pub(crate) fn rtl_plan(e: &Functions, variant: &str, sizes: &[usize]) -> Result<rtl::Plan, String> {
    use rtl::Arg;
    let mut p = rtl::Plan::new(format!("{} {variant}", e.encrypt.kernel));
    let key = p.buf(vec![0x2b; 16]);
    let (ks, dks) = (p.buf(vec![0; 244]), p.buf(vec![0; 244]));
    let set_e = p.call(e.set_encrypt_key, variant, vec![key.clone(), Arg::Int(128), ks.clone()])?;
    p.call(e.set_decrypt_key, variant, vec![key, Arg::Int(128), dks.clone()])?;
    let inp = p.buf(vec![0x5a; 16]);
    let reps = sizes.iter().map(|n| n.div_ceil(16)).max().unwrap_or(1) as u64;
    for (fe, k) in [(e.encrypt, ks.clone()), (e.decrypt, dks)] {
        let c = p.call(fe, variant, vec![inp.clone(), inp.clone(), k])?;
        p.calls[c].reps = reps;
        for &n in sizes {
            p.row(rtl::bench_name(fe, variant), n, c, n.div_ceil(16) as u64);
        }
    }
    p.row(format!("{}(128)", rtl::bench_name(e.set_encrypt_key, variant)), 16, set_e, 1);
    let iv = p.buf(BENCH_IV.to_vec());
    for &n in sizes {
        let n = n.max(16).next_multiple_of(16);
        let b = p.buf(vec![0x5a; n]);
        let c = p.call(e.ctr32, variant, vec![b.clone(), b, Arg::Int((n / 16) as u64), ks.clone(), iv.clone()])?;
        p.row(rtl::bench_name(e.ctr32, variant), n, c, 1);
    }
    Ok(p)
}

/// The `AES_KEY` that `AES_set_encrypt_key` makes (FIPS-197 5.2's words in memory byte
/// order, the round count at byte 240), computed here from the S-box: what a caller of
/// another kernel that takes this schedule (the stitched AES-GCM) sets up. `key` is 16, 24
/// or 32 bytes.
pub fn schedule(key: &[u8]) -> Vec<u8> {
    let s = sbox();
    let nk = key.len() / 4;
    assert!(matches!(nk, 4 | 6 | 8), "AES keys are 16, 24 or 32 bytes");
    let rounds = nk + 6;
    let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [s[t[1] as usize] ^ RCON[i / nk - 1], s[t[2] as usize], s[t[3] as usize], s[t[0] as usize]];
        } else if nk > 6 && i % nk == 4 {
            t = t.map(|b| s[b as usize]);
        }
        w.push(std::array::from_fn(|j| w[i - nk][j] ^ t[j]));
    }
    let mut out: Vec<u8> = w.concat();
    out.resize(240, 0);
    out.extend_from_slice(&(rounds as i32).to_le_bytes());
    out
}

/// One block encrypted with a [`schedule`] (FIPS-197 5.1, written out from the S-box).
pub fn encrypt_block(schedule: &[u8], block: [u8; 16]) -> [u8; 16] {
    let s = sbox();
    let rounds = i32::from_le_bytes(schedule[240..244].try_into().expect("4 bytes")) as usize;
    let rk = |r: usize| -> [u8; 16] { schedule[16 * r..16 * r + 16].try_into().expect("16 bytes") };
    let mut st: [u8; 16] = std::array::from_fn(|i| block[i] ^ rk(0)[i]);
    for r in 1..=rounds {
        // SubBytes and ShiftRows: byte (row i, column j) comes from column j + i.
        let sub: [u8; 16] = std::array::from_fn(|k| s[st[4 * ((k / 4 + k % 4) % 4) + k % 4] as usize]);
        st = sub;
        if r < rounds {
            for c in 0..4 {
                let a: [u8; 4] = st[4 * c..4 * c + 4].try_into().expect("a column");
                for i in 0..4 {
                    st[4 * c + i] = gmul(a[i], 2) ^ gmul(a[(i + 1) % 4], 3) ^ a[(i + 2) % 4] ^ a[(i + 3) % 4];
                }
            }
        }
        let k = rk(r);
        for i in 0..16 {
            st[i] ^= k[i];
        }
    }
    st
}
