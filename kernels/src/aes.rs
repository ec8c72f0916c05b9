//! AES (FIPS-197) with T-tables, in OpenSSL 3.5's riscv64 ABI.
//!
//! ```text
//! void AES_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key);
//! void AES_decrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key);
//! int AES_set_encrypt_key(const unsigned char *userKey, const int bits, AES_KEY *key);
//! int AES_set_decrypt_key(const unsigned char *userKey, const int bits, AES_KEY *key);
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
//! Constant time: **no**. T-table AES loads from addresses that depend on the key and the
//! data; cache-timing attacks apply. The constant-time lint reports these loads as a
//! declared leak. Use a bitsliced or vector-crypto AES where that matters.
//!
//! Performance (C906 cost model, `kgen bench aes`): see README.md's table.

use crate::{Kernel, Variant};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::func::LeakKind;
use kgen_dsl::object::DataObj;
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::{Abi, BuildError, Func, Module, Reg};
use kgen_macros::kasm;

/// OpenSSL's `AES_KEY`: 60 round-key words, then `int rounds` at byte 240.
const AES_KEY: Elem = Elem::Named { name: "AES_KEY", align: 4, def: "struct aes_key_st { unsigned int rd_key[60]; int rounds; }" };
const ABIS: &[Abi] = &[Abi::Psabi, Abi::Go];
/// The rounds field is public; the round keys are not.
const ROUNDS_PUBLIC: &[(i64, i64)] = &[(240, 244)];
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
pub const ENTRIES: &[&Entry] = &[&ENCRYPT, &DECRYPT, &SET_ENCRYPT_KEY, &SET_DECRYPT_KEY];

pub const KERNEL: Kernel = Kernel {
    name: "aes",
    summary: "AES-128/192/256 block encrypt/decrypt and key schedules (T-tables, OpenSSL ABI)",
    variants: &[
        Variant { name: "c906", target: "c906", abis: &[Abi::Psabi, Abi::Go], build: |v, t, abi| build(Isa::C906, v, t, abi), vlens: &[] },
        Variant { name: "rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Go], build: |v, t, abi| build(Isa::Rv64, v, t, abi), vlens: &[] },
    ],
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
/// Te0[x] = (2S, S, S, 3S) as bytes 0..3 and Te_k = Te0 rotated left by 8k.
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

/// Td0..Td3 then the inverse S-box: Td0[x] = (14·IS, 9·IS, 13·IS, 11·IS).
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

const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

// ---- the two ways to look a byte up -----------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// th.extu + th.lrwu / th.lrbu
    C906,
    /// shift, mask, add, load
    Rv64,
}

/// Why T-table AES is not constant time: the declared leak of every table lookup.
const TABLE_LEAK: &str = "T-table lookups index the AES tables by key- and data-dependent bytes";

/// `dst = tab[byte at bit `lsb` of src]` (32-bit entries).
fn lookup_w(f: &mut Func, isa: Isa, dst: Reg, tab: Reg, src: Reg, lsb: u32) {
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
fn lookup_b(f: &mut Func, isa: Isa, dst: Reg, tab: Reg, src: Reg, lsb: u32) {
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
enum Combine {
    /// acc ^= v
    Xor,
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
struct Lk {
    acc: Reg,
    tab: Reg,
    src: Reg,
    lsb: u32,
    byte: bool,
    how: Combine,
}

/// Emits lookups so that each result is used at least two instructions after its load (no
/// load-use stall on the C906): lookup i+1 starts before lookup i is combined.
fn pipelined(f: &mut Func, isa: Isa, lks: &[Lk], tmps: &[Reg]) {
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
                Combine::ShlXor(sh) => kasm!(f, slli {t}, {t}, {sh}; xor {acc}, {acc}, {t};),
                Combine::Mula(m) => kasm!(f, th.mula {acc}, {t}, {m};),
            }
        }
    }
}

struct Regs {
    key: Reg,
    out: Reg,
    tab: [Reg; 5],
    s: [Reg; 4],
    n: [Reg; 4],
    tmp: [Reg; 2],
}

/// Loads table bases: tab[0..4] = T0..T3, tab[4] = the byte S-box after them.
fn table_bases(f: &mut Func, r: &Regs, sym: &str) {
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
    load_block(f, r, inp, [s0, s2]);
    load_key64(f, r, t0, 0, r.n[0]);
    load_key64(f, r, t1, 8, r.n[0]);
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
/// words around the block: nothing outside them is touched).
fn load_block(f: &mut Func, r: &Regs, p: Reg, dst: [Reg; 2]) {
    let [d0, d1] = dst;
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, ld {d0}, 0({p}); ld {d1}, 8({p}););
        return;
    }
    let [a, sh, rsh, w] = r.n;
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
fn load_key64(f: &mut Func, r: &Regs, dst: Reg, off: i64, tmp: Reg) {
    let key = r.key;
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, ld {dst}, {off}({key}););
    } else {
        let o4 = off + 4;
        kasm!(f, lwu {dst}, {off}({key}); lwu {tmp}, {o4}({key}); slli {tmp}, {tmp}, 32; or {dst}, {dst}, {tmp};);
    }
}

/// The 16 bytes at `p` = (d0, d1), little-endian; a misaligned `p` byte by byte where
/// misaligned accesses are slow. d0 and d1 are clobbered.
fn store_block(f: &mut Func, p: Reg, d: [Reg; 2], t: Reg) {
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
        for (k, w) in [d0, d1].into_iter().enumerate() {
            for i in 0..8i64 {
                let off = 8 * k as i64 + i;
                kasm!(f, sb {w}, {off}({p}););
                if i < 7 {
                    kasm!(f, srli {w}, {w}, 8;);
                }
            }
        }
        kasm!(f, j out_stored;);
    });
}

/// One full round u: n_j = rk_j ^ T0[a.b0] ^ T1[b.b1] ^ T2[c.b2] ^ T3[d.b3] where
/// (a, b, c, d) are the columns ShiftRows (or InvShiftRows) brings to column j. `src[j]` is
/// (register, bit offset) of column j.
fn round(f: &mut Func, isa: Isa, r: &Regs, src: [(Reg, u32); 4], dst: [Reg; 4], u: i64, inverse: bool) {
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

/// The final round (SubBytes, ShiftRows, AddRoundKey, no MixColumns) from `src`, stored to
/// `out` as two 64-bit words: out01 = rk01 ^ c0 ^ c1 << 32, where column j's bytes are
/// c_j = S[a.b0] + S[b.b1]·2^8 + S[c.b2]·2^16 + S[d.b3]·2^24 (th.mula on the C906, shifts
/// and xors elsewhere).
fn final_round(f: &mut Func, isa: Isa, r: &Regs, src: [Reg; 4], c: [Reg; 4], consts: [Reg; 3], inverse: bool) {
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
    let out = r.out;
    let _ = key;
    load_key64(f, r, t0, 224, r.s[0]);
    load_key64(f, r, t1, 232, r.s[0]);
    // out[0..8] = (c0 | c1 << 32) ^ rk, out[8..16] = (c2 | c3 << 32) ^ rk. c3, the last
    // accumulation, is read last; where misaligned stores are fast the first store comes
    // before it, leaving the multiplier's result a write-back slot (docs/cost-model.md).
    kasm!(f,
        slli {c1}, {c1}, 32;
        xor {c0}, {c0}, {t0};
        xor {c0}, {c0}, {c1};
    );
    if f.target.misaligned == Misaligned::Fast {
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
    store_block(f, out, [c0, c2], t0);
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
    let r = Regs { key, out, tab, s, n, tmp };
    let rounds = f.xreg("rounds");
    table_bases(&mut f, &r, tables);
    block_entry(&mut f, &r, inp, rounds);
    // Layout: AES-256 (rounds 1..5) and AES-192 (rounds 3..5) first, then AES-128's
    // rounds 5..13 and the final round, which they jump into at round 6; AES-128 gets there
    // with one taken branch (a branch seen first is predicted taken: no misprediction on a
    // cold predictor). The first round of each path reads the packed entry state.
    let [s0, _, s2, _] = r.s;
    let packed = [(s0, 0), (s0, 32), (s2, 0), (s2, 32)];
    let t = r.tmp[0];
    let emit_round = |f: &mut Func, u: i64, first: bool| {
        let (src, dst) = if u % 2 == 1 { (r.s, r.n) } else { (r.n, r.s) };
        let cols = if first { packed } else { [(src[0], 0), (src[1], 0), (src[2], 0), (src[3], 0)] };
        f.comment(format!("round {u} of 13{}", if first { " (first round of this key size)" } else { "" }));
        round(f, isa, &r, cols, dst, u, inverse);
    };
    kasm!(f, addi {t}, zero, 10; beq {rounds}, {t}, aes128;);
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
    kasm!(f, j r4; aes128:);
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
    final_round(&mut f, isa, &r, r.n, col, consts, inverse);
    f.ret();
    f
}

// ---- key schedules ----------------------------------------------------------------------

/// Parameter checks shared by both set-key functions: a0 = -1 / -2 on bad input (returns
/// early), else `nk` = key words (4/6/8), `total` = schedule words (44/52/60), and
/// rounds stored at byte 240.
fn setkey_checks(f: &mut Func, user: Reg, bits: Reg, key: Reg, nk: Reg, total: Reg) {
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
fn load_word_any(f: &mut Func, dst: Reg, p: Reg, tmp: Reg) {
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
    Ok(m)
}

