//! GHASH (NIST SP 800-38D): `Xi = (Xi ^ block) • H` over GF(2^128), for cores without a
//! carry-less multiplier, in OpenSSL 3.5's `gcm_*` ABI and a Linux-kernel form.
//!
//! ```text
//! void gcm_init_V(u128 Htable[16], const u64 H[2]);    // H in host order (OpenSSL swaps E(0))
//! void gcm_gmult_V(u64 Xi[2], const u128 Htable[16]);
//! void gcm_ghash_V(u64 Xi[2], const u128 Htable[16], const u8 *inp, size_t len); // len % 16 == 0
//! void ghash_V_init(u8 table[256], const u8 h[16]);    // Linux: h = E(0) as bytes
//! void ghash_V(u8 acc[16], const u8 table[256], const u8 *data, size_t nblocks);
//! func gcmInitV(Htable *byte, H *uint64)                // Go (ABI0): the OpenSSL functions
//! func gcmGmultV(Xi *uint64, Htable *byte)
//! func gcmGhashV(Xi *uint64, Htable *byte, inp *byte, len uint64)
//! ```
//! (`V` is the variant name with `-` as `_`; in Go spelling `C906`, `C906Novector`, `Rv64gc`,
//! `Rv64gcZbc`; `c906`'s Go build keeps its vector path's operands in a Go frame.) `Xi`/`acc`
//! is the GCM byte string; `inp` and `data` may be unaligned: the C906 loads them with
//! 64-bit loads (it handles misaligned loads in hardware), the other variants read a
//! misaligned block with the aligned doublewords around it, combined by shifts. The table
//! layout is each variant's own.
//!
//! Representation: a block loaded big-endian is the bit-reversal of its polynomial, so a
//! carry-less product of two loaded blocks is the reversed product shifted by one. `init`
//! stores the "twisted" key `H·x^-1` (`H << 1`, xor `0xc2..01` if the bit shifted out
//! was set), after which the 256-bit product needs no shift, and the upper half is folded
//! into the lower with shifts by 1, 2, 7 and 63, 62, 57 (P = x^128 + x^7 + x^2 + x + 1).
//!
//! Variants:
//! - `c906-novector`, `rv64gc`: the 128×128 product by Karatsuba over three 64×64 products,
//!   each by Karatsuba over three 32×32 products: nine 32×32 carry-less products per block.
//!   Each is computed with integer multiplies on operands with holes: `a_i = a & 0x1111…<<i`
//!   and likewise `b_j`, so every bit of the integer product `a_i·b_j` at a position
//!   ≡ i+j (mod 4) counts the pairs of bits meeting there (at most 8 < 16, so no carry
//!   reaches the next such position); XOR the four products of each class, keep its
//!   positions, OR the classes: 16 multiplies. On the C906 two products whose count peaks
//!   lie four positions apart can be added instead of XORed (the counts stay ≤ 15), so
//!   `th.mula` accumulates four of them. The key's 36 masked 32-bit parts are precomputed
//!   by `init`.
//!   *Constant time*: no table lookups, no secret-dependent branches, and every multiply
//!   operand is < 2^32: the C906 multiplier takes 3 cycles only when both operands' upper 32
//!   bits are zero (6 otherwise), so 32×32 pieces keep its timing independent of the data
//!   (the checker proves each operand zero-extended). `rv64gc` is the same without
//!   `th.mula`, `th.rev` and `th.extu` (byte swaps by masks and shifts).
//! - `c906` (XTheadVector, VLEN 128): inputs of at least 10 blocks (Linux: 8) go in groups
//!   of eight with one reduction per group (aggregated reduction: the products are linear,
//!   so their 256-bit sum is reduced once):
//!   `Xi' = (Xi ^ C0)·H^8 ^ C1·H^7 ^ … ^ C7·H`.
//!   Each product is split into the same nine 32×32 Karatsuba pieces, and each piece summed
//!   over the group. The five pieces with mid operands (lo_l^lo_h, hi_l^hi_h, lo_l^hi_l,
//!   lo_h^hi_h and the xor of the last two) run in the vector unit, e32 at LMUL 2: lane l
//!   holds block l and multiplies it by H^(8-l); the holes method with `vmul` for the low
//!   words and `vmulhu` for the high words of the 64-bit products (pairs four peaks apart
//!   added by `vmacc`; the class masks are the same on both words), masked per piece, then
//!   the lanes summed (`vredxor`) and moved out (`vext.x.v`). The four word pieces run on
//!   the scalar core over the eight blocks, their class sums XORed over the blocks and
//!   masked once. The two streams are merged by modeled issue time (the vector unit runs
//!   each instruction for 4 cycles while the core issues scalar ones). The group's byte
//!   reversal (e8 load, `vrgather` with 15..0, store: no alignment needed) and the
//!   transposition (segment load of the eight blocks: lane l = block l) are vector work
//!   too; the reversal of the next group runs alongside the reduction. After the groups,
//!   five to seven blocks left make one more group, in its last lanes (keys H^r .. H,
//!   zeros before them, Xi folded into the first); one to four go to the scalar loop
//!   (a group costs about as much as four blocks one at a time); shorter inputs use the scalar code of `c906-novector`. The
//!   class masks are built from 0x88, which doubles as the short-input limit, so the test
//!   for the vector path costs the short path no instruction.
//!   *Table* (`Htable[16]`, 256 bytes): [0, 144) the 36 masked parts of the twisted H as in
//!   `c906-novector` (whose functions accept this table), [144, 256) the twisted powers
//!   H^2..H^8, 16 bytes each, low doubleword first (computed by `init`). Per call the
//!   vector path lays the lanes' key classes out in its frame (1.5 KiB, with the group's
//!   blocks, operands and piece sums).
//!   *Constant time*: as `c906-novector` for the scalar instructions; the branches depend
//!   only on the length, addresses only on the pointers and the length; the vector
//!   instructions' timing does not depend on the data (published C906 figures: vl and
//!   masking do not change it; vrgather's indices are the constant 15..0). At return the
//!   epilogue zeroes every vector register and the frame's slots (the checker verifies no
//!   secret is left, tests/ghash.rs scans registers and stack after calls). The caller
//!   must check that XTheadVector is enabled (Linux: hwprobe key 11, bit 0; the Linux form
//!   also needs `kernel_vector_begin/end` around the call) and else use `c906-novector`.
//! - `rv64gc-zbc`: `clmul`/`clmulh` (Zbc), three 64×64 products by Karatsuba, `rev8` (Zbb).
//!
//! Performance (C906 cost model, cycles per byte; `kgen bench ghash` regenerates it):
//!
//! | bytes | 16 | 64 | 256 | 1024 | 1408 | 4096 | 16384 |
//! |---|---:|---:|---:|---:|---:|---:|---:|
//! | c906 | 31.12 | 27.88 | 16.67 | 14.69 | 14.51 | 14.20 | 14.07 |
//! | c906-novector | 31.19 | 27.89 | 27.04 | 26.82 | 26.80 | 26.77 | 26.75 |

use crate::{Kernel, Variant};
use kgen_dsl::kernel::hooks::{GoStd, GoStdSlot, Hook, Linux, LinuxSlot, Openssl, OpensslSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, rtl, Bench, Harness, Measured};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::isa::VDialect;
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::{Abi, BuildError, Ext, Func, Label, Module, Opnd, Reg, Slot};
use kgen_macros::kasm;

pub const KERNEL: Kernel = Kernel {
    benches: &[Bench { abi: Abi::Psabi, module: None, drive: bench }, Bench { abi: Abi::Go, module: None, drive: bench }],
    kat: Some(kat),
    rtl: Some(rtl_plan),
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::Ghash, variants: &["c906", "c906-novector"], entries: &[&INIT, &GMULT, &GHASH] }),
        Hook::GoStd(GoStd { slot: GoStdSlot::Ghash, variants: &["c906", "c906-novector", "rv64gc-zbc", "rv64gc"], entries: &[&INIT, &GHASH] }),
        Hook::Linux(Linux { slot: LinuxSlot::Ghash { table_bytes: 256 }, variants: &["c906", "c906-novector", "rv64gc-zbc", "rv64gc"], entries: &[&LINUX_INIT, &LINUX_GHASH] }),
    ],
    ..Kernel::new(
        "ghash",
        "GHASH without carry-less multiply (32x32 Karatsuba on integer multiplies), and a Zbc form (OpenSSL, Linux, Go)",
        &[
            Variant { name: "c906", target: "c906", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
            Variant { name: "c906-novector", target: "c906-novector", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
            Variant { name: "rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
            Variant { name: "rv64gc-zbc", target: "rv64gc-zbc", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
        ],
        ENTRIES,
    )
};

const OPENSSL_GO: &[Abi] = &[Abi::Psabi, Abi::Go];

/// `void gcm_init_V(u128 Htable[16], const u64 H[2])`: H is E(0) as two host-order words
/// (OpenSSL byte-swaps it).
pub const INIT: Entry = Entry {
    kernel: "ghash",
    prefix: "gcm_init_",
    suffix: "",
    alias: None,
    abis: OPENSSL_GO,
    params: &[Param::ptr("Htable", Elem::U128, Out, true), Param::ptr("H", Elem::U64, In, true)],
    ret: Ret::Void,
    summary: "GHASH key set-up: the twisted key and its precomputed pieces",
};
/// `void gcm_gmult_V(u64 Xi[2], const u128 Htable[16])`.
pub const GMULT: Entry = Entry {
    kernel: "ghash",
    prefix: "gcm_gmult_",
    suffix: "",
    alias: None,
    abis: OPENSSL_GO,
    params: &[Param::ptr("Xi", Elem::U64, InOut, true), Param::ptr("Htable", Elem::U128, In, true)],
    ret: Ret::Void,
    summary: "GHASH: Xi = Xi * H",
};
/// `void gcm_ghash_V(u64 Xi[2], const u128 Htable[16], const u8 *inp, size_t len)`; len a
/// multiple of 16.
pub const GHASH: Entry = Entry {
    kernel: "ghash",
    prefix: "gcm_ghash_",
    suffix: "",
    alias: None,
    abis: OPENSSL_GO,
    params: &[
        Param::ptr("Xi", Elem::U64, InOut, true),
        Param::ptr("Htable", Elem::U128, In, true),
        Param::ptr("inp", Elem::U8, In, true),
        Param::val("len", Ty::Size, false),
    ],
    ret: Ret::Void,
    summary: "GHASH: Xi = (Xi ^ block) * H for each 16-byte block",
};
/// `void ghash_V_init(u8 table[256], const u8 h[16])` (Linux): h = E(0) as bytes; the table
/// 8-byte aligned.
pub const LINUX_INIT: Entry = Entry {
    kernel: "ghash",
    prefix: "ghash_",
    suffix: "_init",
    alias: None,
    abis: &[Abi::Linux],
    params: &[Param::ptr("table", Elem::U8, Out, true).aligned(8), Param::ptr("h", Elem::U8, In, true)],
    ret: Ret::Void,
    summary: "GHASH key set-up: the twisted key and its precomputed pieces",
};
/// `void ghash_V(u8 acc[16], const u8 table[256], const u8 *data, size_t nblocks)` (Linux):
/// acc is the GCM byte string, acc and table 8-byte aligned.
pub const LINUX_GHASH: Entry = Entry {
    kernel: "ghash",
    prefix: "ghash_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[
        Param::ptr("acc", Elem::U8, InOut, true).aligned(8),
        Param::ptr("table", Elem::U8, In, true).aligned(8),
        Param::ptr("data", Elem::U8, In, true),
        Param::val("nblocks", Ty::Size, false),
    ],
    ret: Ret::Void,
    summary: "GHASH: acc = (acc ^ block) * H for each of nblocks 16-byte blocks",
};
/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&INIT, &GMULT, &GHASH, &LINUX_INIT, &LINUX_GHASH];

/// `x^-1` in the reversed representation, upper word (the lower word is 1).
const TWIST_HI: i64 = 0xc2 << 56;

/// Bytes of the table the hole variants use: 9 pieces × 4 masked parts × 4 bytes.
pub const HOLES_TABLE_BYTES: usize = 144;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mul {
    /// Integer multiplies on operands with holes; `mula`: XTheadMac accumulation.
    Holes { mula: bool },
    /// Zbc carry-less multiplies.
    Clmul,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bits {
    /// XTheadBb: th.rev, th.extu.
    Thead,
    /// Zbb: rev8 (zero-extension by shifts).
    Zbb,
    /// Neither: masks and shifts.
    Plain,
}

#[derive(Clone, Copy)]
struct Isa {
    mul: Mul,
    bits: Bits,
    /// XTheadVector lanes for long inputs (variant `c906`).
    vector: bool,
}

impl Isa {
    fn of(t: &Target) -> Isa {
        let bits = if t.has(Ext::XTheadBb) {
            Bits::Thead
        } else if t.has(Ext::Zbb) {
            Bits::Zbb
        } else {
            Bits::Plain
        };
        let mul = if t.has(Ext::Zbc) { Mul::Clmul } else { Mul::Holes { mula: t.has(Ext::XTheadMac) } };
        Isa { mul, bits, vector: t.vdialect() == Some(VDialect::Thead) }
    }
}

/// Registers bound for the whole function.
struct Ctx {
    isa: Isa,
    /// The precomputed key table.
    ht: Reg,
    /// Class masks `0x1111…1111 << k` (hole variants).
    m: [Reg; 4],
    /// Byte-swap masks `0x00ff00ff…`, `0x0000ffff…` (no byte-reverse instruction). Where
    /// registers run out (Go's ABI0) the allocator remakes the constants where they are read.
    bs: [Reg; 2],
    /// 0x88, the seed of the masks (vector variant): also the short-input limit.
    seed: Reg,
}

impl Ctx {
    fn new(f: &mut Func, isa: Isa, ht: Reg) -> Ctx {
        let m = f.xregs::<4>("mask");
        let bs = f.xregs::<2>("bswap_mask");
        let seed = f.xreg("mask_seed");
        f.public(seed);
        if isa.vector {
            let t = f.xreg("mask_t");
            f.public(t);
            f.comment("class masks from seed = 0x88: m[3] = 0x8888888888888888, m[k] = m[3] >> (3 - k)");
            kasm!(f, addi {seed}, zero, 0x88; slli {t}, {seed}, 8; or {m[3]}, {seed}, {t};);
            for sh in [16, 32] {
                kasm!(f, slli {t}, {m[3]}, {sh}; or {m[3]}, {m[3]}, {t};);
            }
            for k in 0..3 {
                kasm!(f, srli {m[k]}, {m[3]}, {3 - k as i64};);
            }
            for r in m {
                f.public(r);
            }
        } else if matches!(isa.mul, Mul::Holes { .. }) {
            f.comment("class masks: m[k] = 0x1111111111111111 << k");
            f.li(m[0], 0x1111_1111_1111_1111);
            for k in 1..4 {
                kasm!(f, slli {m[k]}, {m[0]}, {k as i64};);
            }
            for r in m {
                f.public(r);
            }
        }
        if isa.bits == Bits::Plain {
            f.li(bs[0], 0x00ff_00ff_00ff_00ff);
            f.li(bs[1], 0x0000_ffff_0000_ffff);
            for r in bs {
                f.public(r);
            }
        }
        Ctx { isa, ht, m, bs, seed }
    }
}

/// x = byte-reverse(x) (64-bit), with the byte-swap masks `c.bs` where there is no
/// byte-reverse instruction.
fn bswap(f: &mut Func, c: &Ctx, x: Reg) {
    match c.isa.bits {
        Bits::Thead => kasm!(f, th.rev {x}, {x};),
        Bits::Zbb => kasm!(f, rev8 {x}, {x};),
        Bits::Plain => {
            let (t, [m8, m16]) = (f.xreg("bswap_t"), c.bs);
            f.comment("swap bytes in halfwords, halfwords in words, words");
            kasm!(f,
                srli {t}, {x}, 8; and {t}, {t}, {m8}; and {x}, {x}, {m8}; slli {x}, {x}, 8; or {x}, {x}, {t};
                srli {t}, {x}, 16; and {t}, {t}, {m16}; and {x}, {x}, {m16}; slli {x}, {x}, 16; or {x}, {x}, {t};
                srli {t}, {x}, 32; slli {x}, {x}, 32; or {x}, {x}, {t};
            );
        }
    }
}

/// Loads 16 bytes at `off(p)` as the big-endian pair (hi, lo).
fn load_be(f: &mut Func, c: &Ctx, p: Reg, off: i64, hi: Reg, lo: Reg) {
    let o8 = off + 8;
    kasm!(f, ld {hi}, {off}({p}); ld {lo}, {o8}({p}););
    bswap(f, c, hi);
    bswap(f, c, lo);
}

/// As [`load_be`] at offset 0, for a pointer of any alignment: where misaligned doublewords
/// are slow, a misaligned `p` is read with the aligned doublewords around the block,
/// combined by shifts (nothing outside those words is touched).
fn load_be_any(f: &mut Func, c: &Ctx, p: Reg, hi: Reg, lo: Reg) {
    if f.target.misaligned == Misaligned::Fast {
        return load_be(f, c, p, 0, hi, lo);
    }
    let (sh, a, w) = (f.xreg("ua_shift"), f.xreg("ua_base"), f.xreg("ua_word"));
    f.public(sh);
    f.public(a);
    f.scope(|f| {
        kasm!(f,
            andi {sh}, {p}, 7;
            bnez {sh}, unaligned;
            ld {hi}, 0({p});
            ld {lo}, 8({p});
        loaded:
        );
        f.cold(|f| kasm!(f,
        unaligned:
            // a = p rounded down; word_k = (w_k >> 8·(p mod 8)) | (w_{k+1} << (64 - 8·(p mod 8)))
            sub {a}, {p}, {sh};
            slli {sh}, {sh}, 3;
            ld {hi}, 0({a});
            ld {lo}, 8({a});
            ld {w}, 16({a});
            srl {hi}, {hi}, {sh};
            sub {sh}, zero, {sh};
            sll {a}, {lo}, {sh};
            or {hi}, {hi}, {a};
            sub {sh}, zero, {sh};
            srl {lo}, {lo}, {sh};
            sub {sh}, zero, {sh};
            sll {w}, {w}, {sh};
            or {lo}, {lo}, {w};
            j loaded;
        ));
    });
    bswap(f, c, hi);
    bswap(f, c, lo);
}

/// Stores (hi, lo) as 16 big-endian bytes at `p` (both registers are byte-swapped).
fn store_be(f: &mut Func, c: &Ctx, p: Reg, hi: Reg, lo: Reg) {
    bswap(f, c, hi);
    bswap(f, c, lo);
    kasm!(f, sd {hi}, 0({p}); sd {lo}, 8({p}););
}

/// dst = the low 32 bits of src, zero-extended.
fn zext32(f: &mut Func, c: &Ctx, dst: Reg, src: Reg) {
    match c.isa.bits {
        Bits::Thead => kasm!(f, th.extu {dst}, {src}, 31, 0;),
        _ => kasm!(f, slli {dst}, {src}, 32; srli {dst}, {dst}, 32;),
    }
}

/// Which 32-bit operand of a 64×64 Karatsuba step.
#[derive(Clone, Copy)]
enum Half {
    Lo,
    Hi,
    /// `w[31:0] ^ w[63:32]`
    Mid,
}

/// The four classes `a & m[i]` of a 32-bit operand taken from `w`.
fn parts(f: &mut Func, c: &Ctx, w: Reg, which: Half) -> [Reg; 4] {
    let a = f.xreg("a32");
    match which {
        Half::Lo => zext32(f, c, a, w),
        Half::Hi => kasm!(f, srli {a}, {w}, 32;),
        Half::Mid => {
            let t = f.xreg("a32_hi");
            zext32(f, c, a, w);
            kasm!(f, srli {t}, {w}, 32; xor {a}, {a}, {t};);
        }
    }
    let p = f.xregs::<4>("a");
    for k in 0..4 {
        kasm!(f, and {p[k]}, {a}, {c.m[k]};);
    }
    p
}

/// The products of each class (i + j ≡ k mod 4), as groups: the products of a group are
/// added (`th.mula`), the groups XORed. With `th.mula` two products are added only when
/// their count peaks (at bit i + j + 28) are four apart, so no count exceeds 15.
pub(crate) fn class_groups(mula: bool, k: usize) -> Vec<Vec<(usize, usize)>> {
    let all: Vec<(usize, usize)> = (0..4).map(|i| (i, (k + 4 - i) % 4)).collect();
    if !mula {
        return all.into_iter().map(|p| vec![p]).collect();
    }
    match k {
        0 => vec![vec![(0, 0), (1, 3)], vec![(2, 2)], vec![(3, 1)]],
        1 => vec![vec![(0, 1), (2, 3)], vec![(1, 0), (3, 2)]],
        2 => vec![vec![(0, 2), (3, 3)], vec![(1, 1)], vec![(2, 0)]],
        _ => all.into_iter().map(|p| vec![p]).collect(),
    }
}

/// out = a ⊗ b (32×32 carry-less, 64-bit result), `a` given as its four classes, `b` the
/// key piece `slot` of the table. z_k = XOR of the class-k groups; out = OR of z_k & m[k].
fn piece(f: &mut Func, c: &Ctx, a: &[Reg; 4], slot: usize, out: Reg) {
    let Mul::Holes { mula } = c.isa.mul else { unreachable!("piece is for the hole variants") };
    let b = f.xregs::<4>("b");
    let ht = c.ht;
    for (k, bk) in b.iter().enumerate() {
        let off = (16 * slot + 4 * k) as i64;
        kasm!(f, lwu {bk}, {off}({ht}););
    }
    for k in 0..4 {
        let (z, t) = (f.xreg("z"), f.xreg("zt"));
        for (g, group) in class_groups(mula, k).iter().enumerate() {
            let acc = if g == 0 { z } else { t };
            for (n, &(i, j)) in group.iter().enumerate() {
                if n == 0 {
                    kasm!(f, mul {acc}, {a[i]}, {b[j]};);
                } else {
                    kasm!(f, th.mula {acc}, {a[i]}, {b[j]};);
                }
            }
            if g > 0 {
                kasm!(f, xor {z}, {z}, {t};);
            }
        }
        if k == 0 {
            kasm!(f, and {out}, {z}, {c.m[0]};);
        } else {
            kasm!(f, and {z}, {z}, {c.m[k]}; or {out}, {out}, {z};);
        }
    }
}

/// (lo, hi) = w ⊗ key-half (64×64 → 128) by Karatsuba over 32-bit halves; the key's
/// pieces are table slots `slot0..slot0+3` (low half, high half, their XOR).
fn mul64_holes(f: &mut Func, c: &Ctx, w: Reg, slot0: usize, lo: Reg, hi: Reg) {
    let (l, h, m) = (f.xreg("l"), f.xreg("h"), f.xreg("m"));
    for (n, (which, out)) in [(Half::Lo, l), (Half::Hi, h), (Half::Mid, m)].into_iter().enumerate() {
        let a = parts(f, c, w, which);
        piece(f, c, &a, slot0 + n, out);
    }
    karatsuba64(f, l, h, m, lo, hi);
}

/// (hi:lo) = h<<64 ^ (m ^ l ^ h)<<32 ^ l: a 64×64 product from its three 32×32 pieces.
pub(crate) fn karatsuba64(f: &mut Func, l: Reg, h: Reg, m: Reg, lo: Reg, hi: Reg) {
    f.comment("m ^= l ^ h; (hi:lo) = h<<64 ^ m<<32 ^ l");
    let t = f.xreg("t");
    kasm!(f,
        xor {m}, {m}, {l}; xor {m}, {m}, {h};
        slli {t}, {m}, 32; xor {lo}, {l}, {t};
        srli {t}, {m}, 32; xor {hi}, {h}, {t};
    );
}

/// (lo, hi) = w ⊗ key-half with Zbc; the key half is the table doubleword at `off`.
fn mul64_clmul(f: &mut Func, c: &Ctx, w: Reg, off: i64, lo: Reg, hi: Reg) {
    let (k, ht) = (f.xreg("key_half"), c.ht);
    kasm!(f, ld {k}, {off}({ht}); clmul {lo}, {w}, {k}; clmulh {hi}, {w}, {k};);
}

/// (hi:lo) = (hi:lo) • H: the 256-bit carry-less product with the twisted key, then the
/// reduction.
fn gf_mul(f: &mut Func, c: &Ctx, hi: Reg, lo: Reg) {
    f.schedule(|f| gf_mul_body(f, c, hi, lo));
}

fn gf_mul_body(f: &mut Func, c: &Ctx, hi: Reg, lo: Reg) {
    let [l0, l1, h0, h1, m0, m1] = f.xregs::<6>("p");
    let am = f.xreg("a_mid");
    f.comment("Karatsuba: L = lo*Hlo, H = hi*Hhi, M = (lo^hi)*(Hlo^Hhi)");
    kasm!(f, xor {am}, {lo}, {hi};);
    match c.isa.mul {
        Mul::Holes { .. } => {
            mul64_holes(f, c, lo, 0, l0, l1);
            mul64_holes(f, c, hi, 3, h0, h1);
            mul64_holes(f, c, am, 6, m0, m1);
        }
        Mul::Clmul => {
            mul64_clmul(f, c, lo, 0, l0, l1);
            mul64_clmul(f, c, hi, 8, h0, h1);
            mul64_clmul(f, c, am, 16, m0, m1);
        }
    }
    karatsuba128_reduce(f, [l0, l1, h0, h1, m0, m1], hi, lo);
}

/// (hi, lo) = (H<<128 ^ (M ^ L ^ H)<<64 ^ L) mod P from the three 128-bit products
/// L = (l0, l1), H = (h0, h1), M = (m0, m1).
pub(crate) fn karatsuba128_reduce(f: &mut Func, p: [Reg; 6], hi: Reg, lo: Reg) {
    let [l0, l1, h0, h1, m0, m1] = p;
    f.comment("M ^= L ^ H; X3:X2:X1:X0 = H<<128 ^ M<<64 ^ L");
    kasm!(f,
        xor {m0}, {m0}, {l0}; xor {m1}, {m1}, {l1};
        xor {m0}, {m0}, {h0}; xor {m1}, {m1}, {h1};
        xor {l1}, {l1}, {m0}; xor {h0}, {h0}, {m1};
    );
    reduce(f, [l0, l1, h0, h1], hi, lo);
}

/// (hi, lo) = X3:X2 ^ fold(X1:X0): X1:X0 holds the coefficients of x^128..x^255 (reversed).
/// D = X1 ^ X0<<63 ^ X0<<62 ^ X0<<57;
/// lo = X2 ^ X0 ^ X0>>1 ^ X0>>2 ^ X0>>7 ^ D<<63 ^ D<<62 ^ D<<57;  hi = X3 ^ D ^ D>>1 ^ D>>2 ^ D>>7.
fn reduce(f: &mut Func, x: [Reg; 4], hi: Reg, lo: Reg) {
    let [x0, x1, x2, x3] = x;
    let (t, u) = (f.xreg("r_t"), f.xreg("r_u"));
    f.comment("reduce modulo x^128 + x^7 + x^2 + x + 1 (reversed)");
    kasm!(f,
        slli {t}, {x0}, 63; slli {u}, {x0}, 62; xor {x1}, {x1}, {t}; xor {x1}, {x1}, {u}; slli {t}, {x0}, 57; xor {x1}, {x1}, {t};
        srli {t}, {x0}, 1; srli {u}, {x0}, 2; xor {x2}, {x2}, {x0}; xor {x2}, {x2}, {t}; xor {x2}, {x2}, {u}; srli {t}, {x0}, 7; xor {x2}, {x2}, {t};
        slli {t}, {x1}, 63; slli {u}, {x1}, 62; xor {x2}, {x2}, {t}; xor {x2}, {x2}, {u}; slli {t}, {x1}, 57; xor {lo}, {x2}, {t};
        srli {t}, {x1}, 1; srli {u}, {x1}, 2; xor {x3}, {x3}, {x1}; xor {x3}, {x3}, {t}; xor {x3}, {x3}, {u}; srli {t}, {x1}, 7; xor {hi}, {x3}, {t};
    );
}

/// Twists (hi, lo) = H into H·x^-1 and writes the variant's table.
fn write_table(f: &mut Func, c: &Ctx, hi: Reg, lo: Reg) {
    let (t, u) = (f.xreg("t"), f.xreg("u"));
    f.comment("H·x^-1: (hi:lo) <<= 1; if the bit shifted out was set, ^= 0xc2000000_00000000_00000000_00000001");
    kasm!(f,
        srai {t}, {hi}, 63;
        srli {u}, {lo}, 63;
        slli {hi}, {hi}, 1; or {hi}, {hi}, {u};
        slli {lo}, {lo}, 1;
        andi {u}, {t}, 1; xor {lo}, {lo}, {u};
    );
    f.li(u, TWIST_HI);
    kasm!(f, and {t}, {t}, {u}; xor {hi}, {hi}, {t};);
    let ht = c.ht;
    match c.isa.mul {
        Mul::Clmul => {
            f.comment("table: Hlo, Hhi, Hlo^Hhi");
            kasm!(f, sd {lo}, 0({ht}); sd {hi}, 8({ht}); xor {t}, {lo}, {hi}; sd {t}, 16({ht}););
        }
        Mul::Holes { .. } => {
            f.comment("table: for each key piece (Hlo[31:0], Hlo[63:32], their xor, the same for Hhi and Hlo^Hhi), its four classes as 32-bit words");
            let mid = f.xreg("hmid");
            kasm!(f, xor {mid}, {lo}, {hi};);
            for (g, w) in [lo, hi, mid].into_iter().enumerate() {
                let (p0, p1) = (f.xreg("h0"), f.xreg("h1"));
                zext32(f, c, p0, w);
                kasm!(f, srli {p1}, {w}, 32;);
                for (s, which) in [0usize, 1, 2].into_iter().enumerate() {
                    let v = match which {
                        0 => p0,
                        1 => p1,
                        _ => {
                            let x = f.xreg("h01");
                            kasm!(f, xor {x}, {p0}, {p1};);
                            x
                        }
                    };
                    for k in 0..4 {
                        let off = (16 * (3 * g + s) + 4 * k) as i64;
                        kasm!(f, and {t}, {v}, {c.m[k]};);
                        kasm!(f, sw {t}, {off}({ht}););
                    }
                }
            }
        }
    }
}

/// gcm_init / ghash_init.
fn init_fn(isa: Isa, variant: &str, t: &Target, abi: Abi) -> Func {
    let linux = abi == Abi::Linux;
    let mut f = Func::entry(if linux { &LINUX_INIT } else { &INIT }, variant, t, abi);
    let [ht, h] = f.params();
    let c = Ctx::new(&mut f, isa, ht);
    let (hi, lo) = (f.xreg("hi"), f.xreg("lo"));
    if linux {
        load_be_any(&mut f, &c, h, hi, lo);
    } else {
        f.comment("H[0], H[1]: E(0) as two host-order (big-endian read) words");
        kasm!(f, ld {hi}, 0({h}); ld {lo}, 8({h}););
    }
    write_table(&mut f, &c, hi, lo);
    if isa.vector {
        write_powers(&mut f, &c, hi, lo);
    }
    f.ret();
    f
}

/// Table bytes [POWERS, 256): H^2..H^8 (twisted), low doubleword first; (hi, lo) holds the
/// twisted H on entry.
fn write_powers(f: &mut Func, c: &Ctx, hi: Reg, lo: Reg) {
    let (out, n, ht) = (f.xreg("pow_out"), f.xreg("pow_n"), c.ht);
    f.public(out);
    f.public(n);
    f.comment("for k = 2..8: (hi:lo) = (hi:lo) • H; table[POWERS + 16(k-2)] = (lo, hi)");
    kasm!(f, addi {out}, {ht}, {POWERS}; addi {n}, zero, {LANES as i64 - 1};);
    kasm!(f, powers:);
    gf_mul(f, c, hi, lo);
    kasm!(f, sd {lo}, 0({out}); sd {hi}, 8({out}); addi {out}, {out}, 16; addi {n}, {n}, -1; bnez {n}, powers;);
}

/// gcm_gmult: Xi = Xi • H.
fn gmult_fn(isa: Isa, variant: &str, t: &Target, abi: Abi) -> Func {
    let mut f = Func::entry(&GMULT, variant, t, abi);
    let [xi, ht] = f.params();
    let c = Ctx::new(&mut f, isa, ht);
    let (hi, lo) = (f.xreg("hi"), f.xreg("lo"));
    load_be(&mut f, &c, xi, 0, hi, lo);
    gf_mul(&mut f, &c, hi, lo);
    store_be(&mut f, &c, xi, hi, lo);
    f.ret();
    f
}

/// gcm_ghash / ghash: for each 16-byte block, Xi = (Xi ^ block) • H.
fn ghash_fn(isa: Isa, variant: &str, t: &Target, abi: Abi) -> Func {
    let linux = abi == Abi::Linux;
    let mut f = Func::entry(if linux { &LINUX_GHASH } else { &GHASH }, variant, t, abi);
    let p = f.params();
    ghash_body(&mut f, isa, p, linux);
    f
}

/// [`ghash_body`] for `t`'s instructions.
pub(crate) fn ghash_inline(f: &mut Func, t: &Target, io: [Reg; 4]) {
    ghash_body(f, Isa::of(t), io, false);
}

/// `gcm_ghash`'s body on `io` = Xi, Htable, in, len (in and len are consumed; `len` in
/// blocks under Linux, else in bytes): a function of its own, or inlined in another
/// ([`Func::inline`]: `aes-gcm-ct`'s bulk functions, through [`ghash_inline`]).
fn ghash_body(f: &mut Func, isa: Isa, io: [Reg; 4], linux: bool) {
    let [xi, ht, inp, len] = io;
    let c = Ctx::new(f, isa, ht);
    let (hi, lo, bh, bl) = (f.xreg("hi"), f.xreg("lo"), f.xreg("blk_hi"), f.xreg("blk_lo"));
    // The short path's counter: OpenSSL with vectors, len - 16 (bytes after this block):
    // one unsigned test sends len = 0 and len >= 16 + 136 (10 blocks) to the vector
    // path's entry; otherwise blocks left.
    let bytes = isa.vector && !linux;
    if bytes {
        let seed = c.seed;
        f.comment("len -= 16; len was 0 or at least 10 blocks: vector path entry");
        kasm!(f, addi {len}, {len}, -16; bgeu {len}, {seed}, lanes;);
    } else {
        if !linux {
            kasm!(f, srli {len}, {len}, 4;);
        }
        kasm!(f, beqz {len}, done;);
        if isa.vector {
            let groups = f.xreg("groups");
            f.public(groups);
            f.comment("at least one group of LANES blocks: the vector path");
            kasm!(f, srli {groups}, {len}, {(LANES as i64).trailing_zeros() as i64}; bnez {groups}, lanes;);
        }
    }
    load_be(f, &c, xi, 0, hi, lo);
    kasm!(f, block:);
    load_be_any(f, &c, inp, bh, bl);
    kasm!(f, xor {hi}, {hi}, {bh}; xor {lo}, {lo}, {bl};);
    gf_mul(f, &c, hi, lo);
    if bytes {
        kasm!(f, addi {inp}, {inp}, 16; addi {len}, {len}, -16; bgez {len}, block;);
    } else {
        kasm!(f, addi {inp}, {inp}, 16; addi {len}, {len}, -1; bnez {len}, block;);
    }
    store_be(f, &c, xi, hi, lo);
    kasm!(f, done:);
    f.ret();
    if isa.vector {
        kasm!(f, lanes:);
        if bytes {
            kasm!(f, addi {len}, {len}, 16; srli {len}, {len}, 4; beqz {len}, done;);
        }
        vector_path(f, &c, xi, inp, len);
    }
}

// ---- XTheadVector path (variant `c906`) ------------------------------------------------

/// Blocks per group: one per e32 lane at LMUL 2 (VLEN 128).
pub(crate) const LANES: usize = 8;
/// Table offset of H^2..H^8 (twisted, 16 bytes each, low doubleword first).
pub(crate) const POWERS: i64 = HOLES_TABLE_BYTES as i64;
/// Karatsuba pieces (table slots) the scalar core computes, with the byte offset of the
/// block word each multiplies: lo[31:0], lo[63:32], hi[31:0], hi[63:32].
const SCALAR_PIECES: [(usize, i64); 4] = [(0, 0), (1, 4), (3, 8), (4, 12)];
/// Pieces the vector lanes compute: the mid operands (slot 2: lo_l^lo_h, 5: hi_l^hi_h,
/// 6: lo_l^hi_l, 7: lo_h^hi_h, 8: the xor of 6 and 7), in the order of the operand slot.
const VECTOR_PIECES: [usize; 5] = [2, 5, 6, 7, 8];

/// Secret stack slots of the vector path.
struct VFrame {
    /// Key classes: lane l's class j of piece t (of H^(8-l)) at 128t + 32j + 4l.
    kp: Slot,
    /// A group's blocks, byte-swapped: block l at 16l (lo, then hi); at set-up, the lanes'
    /// raw key powers.
    blocks: Slot,
    /// The vector pieces' operands, 32 bytes (8 lanes) each.
    opnd: Slot,
    /// The nine pieces summed over a group (64-bit carry-less products) at 8t.
    sums: Slot,
}

/// Byte `off` of a stack slot, as an instruction operand.
#[derive(Clone, Copy)]
struct StackAt(Slot, i64);

impl From<StackAt> for Opnd {
    fn from(s: StackAt) -> Opnd {
        Opnd::Stack { slot: s.0, off: s.1 }
    }
}

fn so(slot: Slot, off: i64) -> StackAt {
    StackAt(slot, off)
}

/// Vector registers (e32, LMUL 2: every group is an even pair).
struct VRoles {
    /// A piece's operand, its four classes, the key piece's four classes.
    a: Reg,
    ap: [Reg; 4],
    bp: [Reg; 4],
    /// Class accumulators and product temporaries: low words, high words.
    z: [Reg; 2],
    t: [Reg; 2],
    /// The masked piece: low words, high words.
    out: [Reg; 2],
    /// Element 0 is zero: the reductions' initial value.
    zero: Reg,
    /// Reduction results (`vext` reads a group).
    red: [Reg; 2],
    /// Segment-load destination (`wseg`, eight registers): words 0..3 of eight blocks in
    /// its fields w[0..4].
    wseg: Reg,
    w: [Reg; 4],
    /// The five mid operands.
    mids: [Reg; 5],
    /// e8: a group's 128 bytes (LMUL 8, one block per register), the same byte-reversed
    /// per block, and the reversing index 15, 14, …, 0.
    bytes: Reg,
    rev: Reg,
    /// Register k of `bytes` and of `rev` (one block each).
    bytes_k: [Reg; LANES],
    rev_k: [Reg; LANES],
    idx: Reg,
}

impl VRoles {
    /// The roles, as virtual registers: e32 at LMUL 2 (pairs) unless said otherwise.
    fn new(f: &mut Func) -> VRoles {
        let wseg = f.vreg("w", 8);
        let w = std::array::from_fn(|k| f.vpart(wseg, 2 * k as u8, 2));
        let (bytes, rev) = (f.vreg("bytes", 8), f.vreg("rev", 8));
        VRoles {
            a: f.vreg("a", 2),
            ap: f.vregs("ap", 2),
            bp: f.vregs("bp", 2),
            z: f.vregs("z", 2),
            t: f.vregs("t", 2),
            out: f.vregs("out", 2),
            zero: f.vreg("zero", 1),
            red: f.vregs("red", 2),
            wseg,
            w,
            mids: f.vregs("mid", 2),
            bytes,
            rev,
            bytes_k: std::array::from_fn(|k| f.vpart(bytes, k as u8, 1)),
            rev_k: std::array::from_fn(|k| f.vpart(rev, k as u8, 1)),
            idx: f.vreg("idx", 1),
        }
    }
}

/// The vector path's scalar registers.
struct VCtx {
    fr: VFrame,
    v: VRoles,
    /// Address of a vector access (sp + slot offset).
    p: Reg,
    /// A lane sum's low and high word.
    e: [Reg; 2],
}

/// Key set-up: lane l of every key class vector holds H^(8-l)'s class.
fn key_setup(f: &mut Func, c: &Ctx, vc: &VCtx) {
    let (fr, v, p, ht) = (&vc.fr, &vc.v, vc.p, c.ht);
    let (t0, t1) = (f.xreg("kw0"), f.xreg("kw1"));
    f.comment("blocks[16l..16l+16] = H^(8-l) for l < 7 (table powers)");
    for l in 0..LANES - 1 {
        let off = POWERS + 16 * (LANES - 2 - l) as i64;
        let o8 = off + 8;
        kasm!(f,
            ld {t0}, {off}({ht}); ld {t1}, {o8}({ht});
            sd {t0}, {so(fr.blocks, 16 * l as i64)}(sp); sd {t1}, {so(fr.blocks, 16 * l as i64 + 8)}(sp);
        );
    }
    f.comment("blocks[112..128] = H: each word the OR of its four classes (table slots 0, 1, 3, 4)");
    for (n, slot) in [0i64, 1, 3, 4].into_iter().enumerate() {
        let o = 16 * slot;
        kasm!(f, lwu {t0}, {o}({ht}););
        for k in 1..4 {
            let ok = o + 4 * k;
            kasm!(f, lwu {t1}, {ok}({ht}); or {t0}, {t0}, {t1};);
        }
        kasm!(f, sw {t0}, {so(fr.blocks, 112 + 4 * n as i64)}(sp););
    }
    kasm!(f, th.vsetvli zero, zero, e32, m2, d1;);
    transpose(f, vc);
    f.comment("key classes: kp[t][j] = piece t of the lanes' powers & m[j]");
    let key = [v.w[0], v.w[1], v.mids[0], v.w[2], v.w[3], v.mids[1], v.mids[2], v.mids[3], v.mids[4]];
    let tmp = [v.t[0], v.t[1], v.out[0], v.out[1]];
    let mut n = 0;
    for (t, kv) in key.into_iter().enumerate() {
        for j in 0..4 {
            let (tv, mj) = (tmp[n % 4], c.m[j]);
            n += 1;
            kasm!(f,
                th.vand.vx {tv}, {kv}, {mj};
                addi {p}, sp, {so(fr.kp, 128 * t as i64 + 32 * j as i64)};
                th.vse.v {tv}, ({p});
            );
        }
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

/// w[0..4] = words 0..3 of the eight blocks in `blocks` (lane l = block l); mids = the
/// Karatsuba mid operands.
fn transpose(f: &mut Func, vc: &VCtx) {
    let (v, p) = (&vc.v, vc.p);
    let (wseg, [w0, w1, w2, w3], [m2, m5, m6, m7, m8]) = (v.wseg, v.w, v.mids);
    f.comment("transpose: lane l of w[k] = word k of block l; mids: w0^w1, w2^w3, w0^w2, w1^w3, (w0^w2)^(w1^w3)");
    kasm!(f,
        addi {p}, sp, {so(vc.fr.blocks, 0)};
        th.vlseg4e.v {wseg}, ({p});
        th.vxor.vv {m2}, {w0}, {w1};
        th.vxor.vv {m5}, {w2}, {w3};
        th.vxor.vv {m6}, {w0}, {w2};
        th.vxor.vv {m7}, {w1}, {w3};
        th.vxor.vv {m8}, {m6}, {m7};
    );
}

/// blocks = the eight blocks at `src`, each byte-reversed: lo then hi of the big-endian
/// 128-bit block, as host-order doublewords (e8 loads need no alignment).
fn vector_swap(f: &mut Func, vc: &VCtx, src: Reg) {
    let (v, p) = (&vc.v, vc.p);
    let (bytes, rev, idx) = (v.bytes, v.rev, v.idx);
    f.comment("blocks[l] = reverse(block l at src) (e8)");
    kasm!(f, th.vsetvli zero, zero, e8, m8, d1; th.vle.v {bytes}, ({src}); th.vsetvli zero, zero, e8, m1, d1;);
    for k in 0..LANES {
        let (d, s) = (v.rev_k[k], v.bytes_k[k]);
        kasm!(f, th.vrgather.vv {d}, {s}, {idx};);
    }
    kasm!(f,
        th.vsetvli zero, zero, e8, m8, d1;
        addi {p}, sp, {so(vc.fr.blocks, 0)};
        th.vse.v {rev}, ({p});
        th.vsetvli zero, zero, e32, m2, d1;
    );
}

/// The vector stream of a group: the five mid pieces of all eight blocks, each summed over
/// the lanes into sums[t].
fn vector_group(f: &mut Func, c: &Ctx, vc: &VCtx) {
    transpose(f, vc);
    let p = vc.p;
    for (i, r) in vc.v.mids.into_iter().enumerate() {
        kasm!(f, addi {p}, sp, {so(vc.fr.opnd, 32 * i as i64)}; th.vse.v {r}, ({p}););
    }
    for (i, t) in VECTOR_PIECES.into_iter().enumerate() {
        f.schedule_window(32, |f| vector_piece(f, c, vc, i, t));
    }
}

/// The vector operations of a class product (see [`vector_piece`]).
#[derive(Clone, Copy)]
enum VOp {
    /// d = x·y (low words)
    Mul,
    /// d += x·y (low words)
    Macc,
    /// d = (x·y) >> 32
    Mulhu,
    /// d = x ^ y
    Xor,
}

/// sums[t] = XOR over the lanes of (operand i) ⊗ (key piece t): the 32×32 products of the
/// classes (e32 `vmul` low words, `vmulhu` high words), class k = XOR of the products
/// a_i·b_j with i + j ≡ k (mod 4) (low words of the pairs four peaks apart added by
/// `vmacc`), masked and ORed; then the lane sum (`vredxor`) of each word.
fn vector_piece(f: &mut Func, c: &Ctx, vc: &VCtx, i: usize, t: usize) {
    let (v, p) = (&vc.v, vc.p);
    let a = v.a;
    f.comment(format!("piece {t}: operand classes a[k] = a & m[k], key classes b[j]"));
    kasm!(f, addi {p}, sp, {so(vc.fr.opnd, 32 * i as i64)}; th.vle.v {a}, ({p}););
    for k in 0..4 {
        let (ak, mk) = (v.ap[k], c.m[k]);
        kasm!(f, th.vand.vx {ak}, {a}, {mk};);
    }
    for j in 0..4 {
        let bj = v.bp[j];
        kasm!(f, addi {p}, sp, {so(vc.fr.kp, 128 * t as i64 + 32 * j as i64)}; th.vle.v {bj}, ({p}););
    }
    let [ol, oh] = v.out;
    for k in 0..4 {
        f.comment(format!("class {k}: low words (pairs added), high words; out |= z & m[{k}]"));
        class_products(f, k, v.ap, v.bp, v.z, v.t, v.out, c.m[k]);
    }
    let ([r0, r1], zero, [e0, e1]) = (v.red, v.zero, vc.e);
    f.comment(format!("sums[{t}] = lane sums (high word << 32 | low word)"));
    kasm!(f,
        th.vredxor.vs {r0}, {ol}, {zero};
        th.vredxor.vs {r1}, {oh}, {zero};
        th.vext.x.v {e0}, {r0}, zero;
        th.vext.x.v {e1}, {r1}, zero;
        slli {e1}, {e1}, 32;
        or {e0}, {e0}, {e1};
        sd {e0}, {so(vc.fr.sums, 8 * t as i64)}(sp);
    );
}

/// Class k of a piece's 32×32 products into `out`: the low words of the pairs a_i·b_j with
/// i + j ≡ k (mod 4) (`vmul`, pairs four count peaks apart added by `vmacc`) and the high
/// words (`vmulhu`), interleaved, masked by m[k] (`mk`) and ORed into `out` (set for k = 0).
/// `z` and `t` are scratch pairs (low, high).
#[allow(clippy::too_many_arguments)]
pub(crate) fn class_products(f: &mut Func, k: usize, ap: [Reg; 4], bp: [Reg; 4], z: [Reg; 2], t: [Reg; 2], out: [Reg; 2], mk: Reg) {
    let ([zl, zh], [tl, th], [ol, oh]) = (z, t, out);
    let mut lo: Vec<(VOp, Reg, Reg, Reg)> = Vec::new();
    for (g, group) in class_groups(true, k).iter().enumerate() {
        let dst = if g == 0 { zl } else { tl };
        for (n, &(ai, bj)) in group.iter().enumerate() {
            lo.push((if n == 0 { VOp::Mul } else { VOp::Macc }, dst, ap[ai], bp[bj]));
        }
        if g > 0 {
            lo.push((VOp::Xor, zl, zl, tl));
        }
    }
    let mut hi: Vec<(VOp, Reg, Reg, Reg)> = Vec::new();
    for (n, ai) in (0..4).enumerate() {
        let bj = (k + 4 - ai) % 4;
        hi.push((VOp::Mulhu, if n == 0 { zh } else { th }, ap[ai], bp[bj]));
        if n > 0 {
            hi.push((VOp::Xor, zh, zh, th));
        }
    }
    for n in 0..lo.len().max(hi.len()) {
        for ops in [&lo, &hi] {
            if let Some(&(op, d, x, y)) = ops.get(n) {
                match op {
                    VOp::Mul => kasm!(f, th.vmul.vv {d}, {x}, {y};),
                    VOp::Macc => kasm!(f, th.vmacc.vv {d}, {x}, {y};),
                    VOp::Mulhu => kasm!(f, th.vmulhu.vv {d}, {x}, {y};),
                    VOp::Xor => kasm!(f, th.vxor.vv {d}, {x}, {y};),
                }
            }
        }
    }
    if k == 0 {
        kasm!(f, th.vand.vx {ol}, {zl}, {mk}; th.vand.vx {oh}, {zh}, {mk};);
    } else {
        kasm!(f,
            th.vand.vx {zl}, {zl}, {mk}; th.vand.vx {zh}, {zh}, {mk};
            th.vor.vv {ol}, {ol}, {zl}; th.vor.vv {oh}, {oh}, {zh};
        );
    }
}

/// The scalar stream of a group: the four word pieces of all eight blocks (class sums
/// XORed over the blocks, masked once).
fn scalar_group(f: &mut Func, c: &Ctx, vc: &VCtx) {
    for (t, w) in SCALAR_PIECES {
        f.schedule(|f| scalar_piece(f, c, vc, t, w));
    }
}

/// sums[t] = XOR over the blocks l of (word w of block l) ⊗ (key piece t of H^(8-l)).
fn scalar_piece(f: &mut Func, c: &Ctx, vc: &VCtx, t: usize, w: i64) {
    let z = f.xregs::<4>("zc");
    let mut started = [false; 4];
    f.comment(format!("piece {t}: z[k] ^= a_i·b_j (i + j ≡ k) over the eight blocks"));
    for l in 0..LANES as i64 {
        let a = f.xreg("a32");
        kasm!(f, lwu {a}, {so(vc.fr.blocks, 16 * l + w)}(sp););
        let ap = f.xregs::<4>("a");
        for k in 0..4 {
            kasm!(f, and {ap[k]}, {a}, {c.m[k]};);
        }
        let bp = f.xregs::<4>("b");
        for j in 0..4 {
            kasm!(f, lwu {bp[j]}, {so(vc.fr.kp, 128 * t as i64 + 32 * j as i64 + 4 * l)}(sp););
        }
        for k in 0..4 {
            for group in class_groups(true, k) {
                let acc = if started[k] { f.xreg("zt") } else { z[k] };
                for (n, &(i, j)) in group.iter().enumerate() {
                    if n == 0 {
                        kasm!(f, mul {acc}, {ap[i]}, {bp[j]};);
                    } else {
                        kasm!(f, th.mula {acc}, {ap[i]}, {bp[j]};);
                    }
                }
                if started[k] {
                    kasm!(f, xor {z[k]}, {z[k]}, {acc};);
                }
                started[k] = true;
            }
        }
    }
    let out = f.xreg("piece");
    f.comment(format!("sums[{t}] = OR of z[k] & m[k]"));
    kasm!(f, and {out}, {z[0]}, {c.m[0]};);
    for k in 1..4 {
        kasm!(f, and {z[k]}, {z[k]}, {c.m[k]}; or {out}, {out}, {z[k]};);
    }
    kasm!(f, sd {out}, {so(vc.fr.sums, 8 * t as i64)}(sp););
}

/// (hi, lo) = the group's sum of products, reduced: the nine piece sums recombined.
fn combine_group(f: &mut Func, vc: &VCtx, hi: Reg, lo: Reg) {
    f.schedule(|f| {
        let s = f.xregs::<9>("sum");
        f.comment("the nine piece sums; Karatsuba 64 for lo, hi, lo^hi; Karatsuba 128; reduce");
        for (t, r) in s.into_iter().enumerate() {
            kasm!(f, ld {r}, {so(vc.fr.sums, 8 * t as i64)}(sp););
        }
        let q = f.xregs::<6>("p");
        for g in 0..3 {
            karatsuba64(f, s[3 * g], s[3 * g + 1], s[3 * g + 2], q[2 * g], q[2 * g + 1]);
        }
        karatsuba128_reduce(f, q, hi, lo);
    });
}

/// Groups of eight blocks: Xi' = (Xi ^ C0)·H^8 ^ C1·H^7 ^ … ^ C7·H, each product as nine
/// Karatsuba pieces summed over the group before one reduction: five in the vector lanes
/// (lane l = block l, key H^(8-l)), four on the scalar core, interleaved. The rest (< 8
/// blocks) one at a time.
fn vector_path(f: &mut Func, c: &Ctx, xi: Reg, inp: Reg, len: Reg) {
    let fr = VFrame {
        kp: f.slot("key_classes", 9 * 4 * 4 * LANES as u32, 16, true),
        blocks: f.slot("blocks", 16 * LANES as u32, 16, true),
        opnd: f.slot("operands", 4 * LANES as u32 * VECTOR_PIECES.len() as u32, 16, true),
        sums: f.slot("sums", 8 * 9, 8, true),
    };
    let (p, src) = (f.xreg("vaddr"), f.xreg("src"));
    f.public(p);
    f.public(src);
    let e = f.xregs::<2>("lane_sum");
    let vc = VCtx { fr, v: VRoles::new(f), p, e };
    key_setup(f, c, &vc);
    let (hi, lo) = (f.xreg("hi"), f.xreg("lo"));
    load_be(f, c, xi, 0, hi, lo);
    vector_swap(f, &vc, inp);
    kasm!(f, group:);
    let (t, u) = (f.xreg("t"), f.xreg("u"));
    f.public(u);
    f.comment("block 0 ^= Xi; src = the next group if there is one, else this one (read, never used)");
    kasm!(f,
        ld {t}, {so(vc.fr.blocks, 0)}(sp); xor {t}, {t}, {lo}; sd {t}, {so(vc.fr.blocks, 0)}(sp);
        ld {t}, {so(vc.fr.blocks, 8)}(sp); xor {t}, {t}, {hi}; sd {t}, {so(vc.fr.blocks, 8)}(sp);
        sltiu {u}, {len}, {2 * LANES as i64}; addi {u}, {u}, -1; andi {u}, {u}, {16 * LANES as i64}; add {src}, {inp}, {u};
    );
    f.comment("the vector pieces and the scalar ones, merged by modeled issue time");
    f.merge(|f| vector_group(f, c, &vc), |f| scalar_group(f, c, &vc));
    f.comment("the group's sum, reduced, alongside the next group's byte reversal");
    f.merge(|f| vector_swap(f, &vc, src), |f| combine_group(f, &vc, hi, lo));
    kasm!(f,
        addi {inp}, {inp}, {16 * LANES as i64};
        addi {len}, {len}, {-(LANES as i64)};
        addi {u}, {len}, {-(LANES as i64)};
        bgez {u}, group;
        beqz {len}, lanes_store;
        addi {u}, {len}, {-PARTIAL};
        bgez {u}, partial;
    lanes_block:
    );
    let (bh, bl) = (f.xreg("blk_hi"), f.xreg("blk_lo"));
    load_be(f, c, inp, 0, bh, bl);
    kasm!(f, xor {hi}, {hi}, {bh}; xor {lo}, {lo}, {bl};);
    gf_mul(f, c, hi, lo);
    kasm!(f, addi {inp}, {inp}, 16; addi {len}, {len}, -1; bnez {len}, lanes_block; lanes_store:);
    store_be(f, c, xi, hi, lo);
    f.ret();
    partial_group(f, &vc, [inp, len], [hi, lo]);
}

/// Fewest blocks left after the groups that [`partial_group`] takes (a group costs about
/// four blocks one at a time).
const PARTIAL: i64 = 5;

/// `partial:` the last r = `len` blocks (PARTIAL ..= 7) as one more group with blocks in
/// lanes 8-r .. 7 (keys H^r .. H) and zeros before them, Xi folded into lane 8-r; then back
/// into the group loop with Xi = 0, `len` = 8 and `inp` 16(8-r) back, so that the loop ends
/// after it (its read of the next group from `inp` stays in the input already hashed).
fn partial_group(f: &mut Func, vc: &VCtx, io: [Reg; 2], x: [Reg; 2]) {
    let ([inp, len], [hi, lo], (v, p)) = (io, x, (&vc.v, vc.p));
    let [t, u, w] = [f.xreg("bytes_left"), f.xreg("lane_off"), f.xreg("w")];
    f.public(t);
    f.public(u);
    let (bytes, rev, idx) = (v.bytes, v.rev, v.idx);
    f.comment("the r blocks left, reversed, at blocks[16(8-r)..], zeros before them");
    kasm!(f,
    partial:
        th.vsetvli zero, zero, e8, m8, d1;
        th.vmv.v.i {rev}, 0;
        addi {p}, sp, {so(vc.fr.blocks, 0)};
        th.vse.v {rev}, ({p});
        slli {t}, {len}, 4;
        th.vsetvli zero, {t}, e8, m8, d1;
        th.vle.v {bytes}, ({inp});
        th.vsetvli zero, zero, e8, m1, d1;
    );
    for k in 0..LANES {
        let (d, s) = (v.rev_k[k], v.bytes_k[k]);
        kasm!(f, th.vrgather.vv {d}, {s}, {idx};);
    }
    let (cases, joined): (Vec<Label>, Label) = ((PARTIAL..LANES as i64).map(|r| f.named_label(&format!("partial{r}"))).collect(), f.named_label("partial_joined"));
    for (k, &l) in cases.iter().enumerate() {
        if k + 1 < cases.len() {
            kasm!(f, addi {u}, zero, {PARTIAL + k as i64}; beq {len}, {u}, {l};);
        }
    }
    for (k, &l) in cases.iter().enumerate().rev() {
        let r = PARTIAL + k as i64;
        let (lane, back) = (so(vc.fr.blocks, 16 * (LANES as i64 - r)), -16 * (LANES as i64 - r));
        f.comment(format!("{r} blocks: at lane {}; lane {} ^= Xi; inp -= {}", LANES as i64 - r, LANES as i64 - r, -back));
        f.bind(l);
        kasm!(f,
            addi {p}, sp, {lane};
            th.vsetvli zero, {t}, e8, m8, d1;
            th.vse.v {rev}, ({p});
            ld {w}, 0({p}); xor {w}, {w}, {lo}; sd {w}, 0({p});
            ld {w}, 8({p}); xor {w}, {w}, {hi}; sd {w}, 8({p});
            addi {inp}, {inp}, {back};
        );
        if k > 0 {
            kasm!(f, j {joined};);
        }
    }
    f.bind(joined);
    f.comment("Xi = 0 (folded), len = 8: one more pass of the group loop");
    kasm!(f,
        th.vsetvli zero, zero, e32, m2, d1;
        addi {hi}, zero, 0;
        addi {lo}, zero, 0;
        addi {len}, zero, {LANES as i64};
        j group;
    );
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let isa = Isa::of(t);
    let mut m = Module::new("ghash", variant, t, abi);
    m.notes = vec![match isa.mul {
        Mul::Holes { .. } => "GHASH (SP 800-38D) from 32x32 integer multiplies on operands with holes. Constant time: no table lookups or secret branches; every multiply operand < 2^32 (the C906's fixed 3-cycle path).".into(),
        Mul::Clmul => "GHASH (SP 800-38D) with Zbc clmul/clmulh. Constant time if the core's clmul is.".into(),
    }];
    if isa.vector {
        m.notes.push("From 10 blocks (Linux: 8) the same products run partly in XTheadVector lanes (8 blocks per group, one reduction per group): call only if XTheadVector is enabled (user space: riscv_hwprobe key 11 bit 0; Linux: has_xtheadvector(), inside kernel_vector_begin/end), else use c906-novector, which accepts this table. Vector registers and the stack frame are zeroed at return.".into());
    }
    m.add(init_fn(isa, variant, t, abi), true)?;
    if abi != Abi::Linux {
        m.add(gmult_fn(isa, variant, t, abi), true)?;
    }
    m.add(ghash_fn(isa, variant, t, abi), true)?;
    Ok(m)
}


// ---- what the commands need: benchmark, known answers, RTL plan, hooks --------------------------

/// H = E(0^128, 0^128), the key the benchmarks use.
pub const BENCH_H: [u8; 16] = [0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b, 0x2e];

/// `kgen bench ghash`: `gcm_init`, then `gcm_ghash` over the size (whole blocks); init is
/// the one with the same variant part as ghash's (a file may hold several).
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let (ghash_name, ghash) = h.entry(&GHASH)?;
    let part = GHASH.variant_part(&ghash_name).unwrap_or_default().to_string();
    let init = h.lookup(&INIT.symbol_for_part(&part))?;
    let table = h.buffer(&[0u8; 256], 0, true);
    let hb = h.buffer(&BENCH_H, 0, false);
    h.call(init, &[table, hb])?;
    let xi = h.buffer(&[0u8; 16], 0, true);
    let mut rows = Vec::new();
    for &n in sizes {
        let n = n.max(16).next_multiple_of(16);
        let inp = h.buffer(&vec![0x5a; n], 0, false);
        let m = measured(h, |h| h.call(ghash, &[xi, table, inp, n as u64]))?;
        rows.push(figure(&ghash_name, n, m));
    }
    Ok(rows)
}

/// GCM specification, test case 2: H = E(0^128, 0^128), the ciphertext block, X1 = C·H and
/// GHASH(H, {}, C) (which is the tag ab6e47d4... xor E(K, Y0) = 58e2fcce...).
pub const TC2_H: &str = "66e94bd4ef8a2c3b884cfa59ca342b2e";
pub const TC2_C: &str = "0388dace60b6a392f328c2b971b2fe78";
pub const TC2_X1: &str = "5e2ec746917062882c85b0685353deb7";
pub const TC2_GHASH: &str = "f38cbb1ad69223dcc3457ae5b6b0f885";

/// Known answers (test case 2): X1 = C·H through `gcm_gmult` and GHASH(H, {}, C) through
/// `gcm_ghash`.
fn kat(v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let table = p.buf("Htable", vec![0; 256], 0);
    let hb = p.buf("H", host_words(unhex(TC2_H).try_into().expect("16 bytes")), 0);
    p.call(&INIT, v, vec![Buf(table, 0), Buf(hb, 0)], None);
    let x1 = p.buf("Xi (gmult)", unhex(TC2_C), 0);
    p.call(&GMULT, v, vec![Buf(x1, 0), Buf(table, 0)], None);
    p.expect("GCM test case 2: X1 = C·H (gcm_gmult)".into(), x1, 0, unhex(TC2_X1));
    // 14 zero blocks (from Xi = 0 they leave Xi at 0, so the result is still test case 2's,
    // and vector variants take their lanes), C, then the lengths block: len(A) = 0,
    // len(C) = 128 bits, big-endian.
    let mut msg = vec![0u8; 16 * 14];
    msg.extend_from_slice(&unhex(TC2_C));
    msg.extend_from_slice(&0u64.to_be_bytes());
    msg.extend_from_slice(&128u64.to_be_bytes());
    let xi = p.buf("Xi (ghash)", vec![0; 16], 0);
    let inp = p.buf("inp", msg, 0);
    p.call(&GHASH, v, vec![Buf(xi, 0), Buf(table, 0), Buf(inp, 0), Int(16 * 16)], None);
    p.expect("GCM test case 2: GHASH(H, {}, C) (gcm_ghash)".into(), xi, 0, unhex(TC2_GHASH));
    Ok(p)
}

/// What [`bench`] measures, on the RTL.
fn rtl_plan(variant: &str, sizes: &[usize]) -> Result<rtl::Plan, String> {
    let mut p = rtl::Plan::new(format!("ghash {variant}"));
    let table = p.buf(vec![0; 256]);
    let hb = p.buf(BENCH_H.to_vec());
    p.call(&INIT, variant, vec![table.clone(), hb])?;
    let xi = p.buf(vec![0; 16]);
    for &n in sizes {
        let n = n.max(16).next_multiple_of(16);
        let inp = p.buf(vec![0x5a; n]);
        let c = p.call(&GHASH, variant, vec![xi.clone(), table.clone(), inp, rtl::Arg::Int(n as u64)])?;
        p.row(rtl::bench_name(&GHASH, variant), n, c, 1);
    }
    Ok(p)
}

/// OpenSSL's `u64 H[2]`: the big-endian halves of E(0) as host-order (little-endian) words.
pub fn host_words(h: [u8; 16]) -> Vec<u8> {
    h.chunks(8).flat_map(|half| u64::from_be_bytes(half.try_into().expect("8 bytes")).to_le_bytes()).collect()
}

/// GF(2^128) multiplication as SP 800-38D 6.3 defines it (blocks as big-endian integers).
fn gf128_mul(x: u128, y: u128) -> u128 {
    let (mut z, mut v) = (0u128, y);
    for i in 0..128 {
        if x >> (127 - i) & 1 == 1 {
            z ^= v;
        }
        v = (v >> 1) ^ if v & 1 == 1 { 0xe1 << 120 } else { 0 };
    }
    z
}

/// The table `gcm_init` of a variant built for `t` writes for H = E(0) (256 bytes, zero
/// where the variant writes nothing), computed here from the specification: what a caller of
/// another kernel that reads this table (the stitched AES-GCM) sets up. The twisted key is
/// H·x^-1 (see the module documentation); the hole variants store its pieces' classes, the
/// vector variant also the twisted powers H^2..H^8, the Zbc variant its halves.
pub fn htable(t: &Target, h: [u8; 16]) -> Vec<u8> {
    let isa = Isa::of(t);
    let twist = |v: u128| (v << 1) ^ if v >> 127 == 1 { (0xc2 << 120) | 1 } else { 0 };
    let hv = u128::from_be_bytes(h);
    let tw = twist(hv);
    let (lo, hi) = (tw as u64, (tw >> 64) as u64);
    let mut out = vec![0u8; 256];
    match isa.mul {
        Mul::Clmul => {
            for (k, w) in [lo, hi, lo ^ hi].into_iter().enumerate() {
                out[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
            }
        }
        Mul::Holes { .. } => {
            for (g, w) in [lo, hi, lo ^ hi].into_iter().enumerate() {
                let (p0, p1) = (w & 0xffff_ffff, w >> 32);
                for (s, v) in [p0, p1, p0 ^ p1].into_iter().enumerate() {
                    for k in 0..4 {
                        let off = 16 * (3 * g + s) + 4 * k;
                        out[off..off + 4].copy_from_slice(&((v & (0x1111_1111 << k)) as u32).to_le_bytes());
                    }
                }
            }
            if isa.vector {
                let mut p = hv;
                for k in 0..LANES - 1 {
                    p = gf128_mul(p, hv);
                    let tp = twist(p);
                    let off = POWERS as usize + 16 * k;
                    out[off..off + 8].copy_from_slice(&(tp as u64).to_le_bytes());
                    out[off + 8..off + 16].copy_from_slice(&((tp >> 64) as u64).to_le_bytes());
                }
            }
        }
    }
    out
}
