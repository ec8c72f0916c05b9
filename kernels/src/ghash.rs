//! GHASH (NIST SP 800-38D): `Xi = (Xi ^ block) • H` over GF(2^128), for cores without a
//! carry-less multiplier, in OpenSSL 3.5's `gcm_*` ABI and a Linux-kernel form.
//!
//! ```text
//! void gcm_init_V(u128 Htable[16], const u64 H[2]);    // H in host order (OpenSSL swaps E(0))
//! void gcm_gmult_V(u64 Xi[2], const u128 Htable[16]);
//! void gcm_ghash_V(u64 Xi[2], const u128 Htable[16], const u8 *inp, size_t len); // len % 16 == 0
//! void ghash_V_init(u8 table[256], const u8 h[16]);    // Linux: h = E(0) as bytes
//! void ghash_V(u8 acc[16], const u8 table[256], const u8 *data, size_t nblocks);
//! ```
//! (`V` is the variant name with `-` as `_`.) `Xi`/`acc` is the GCM byte string; `inp`
//! and `data` may be unaligned (64-bit loads; the C906 handles misaligned loads in
//! hardware, other cores may trap to the OS). The table layout is each variant's own.
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
//! - `rv64gc-zbc`: `clmul`/`clmulh` (Zbc), three 64×64 products by Karatsuba, `rev8` (Zbb).
//!
//! Performance (C906 cost model): `kgen bench ghash` prints the table; README.md has it.

use crate::{Kernel, Variant};
use kgen_dsl::sched::{c906_latency, schedule};
use kgen_dsl::target::Target;
use kgen_dsl::{Abi, BuildError, Ext, Func, Module, Reg};
use kgen_macros::kasm;

pub const KERNEL: Kernel = Kernel {
    name: "ghash",
    summary: "GHASH without carry-less multiply (32x32 Karatsuba on integer multiplies), and a Zbc form (OpenSSL, Linux)",
    variants: &[
        Variant { name: "c906-novector", target: "c906-novector", abis: &[Abi::Psabi, Abi::Linux], build: build_c906_novector },
        Variant { name: "rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Linux], build: build_rv64gc },
        Variant { name: "rv64gc-zbc", target: "rv64gc-zbc", abis: &[Abi::Psabi, Abi::Linux], build: build_rv64gc_zbc },
    ],
};

/// `x^-1` in the reversed representation, upper word (the lower word is 1).
const TWIST_HI: i64 = 0xc2 << 56;

/// Registers left to the allocator beyond what the scheduler counts, tightest first: the
/// scheduler's count ignores interference the colouring meets, so a build that runs out
/// of registers is retried with a wider margin.
const MARGINS: [usize; 6] = [1, 2, 3, 4, 6, 8];

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
        Isa { mul, bits }
    }
}

/// Registers bound for the whole function.
struct Ctx {
    isa: Isa,
    /// The precomputed key table.
    ht: Reg,
    /// Class masks `0x1111…1111 << k` (hole variants).
    m: [Reg; 4],
    /// Byte-swap masks `0x00ff00ff…`, `0x0000ffff…` (no byte-reverse instruction).
    bs: [Reg; 2],
    /// Values the scheduled multiply may keep live at once (the allocatable registers less
    /// those live across it untouched).
    cap: usize,
}

impl Ctx {
    /// `through`: values live across the multiply that it does not read.
    fn new(f: &mut Func, isa: Isa, ht: Reg, through: usize, margin: usize) -> Ctx {
        let plain = Isa::of(&f.target).bits == Bits::Plain;
        let cap = f.abi.allocatable_x().len() - through - if plain { 2 } else { 0 } - margin;
        let m = f.xregs::<4>("mask");
        let bs = f.xregs::<2>("bswap_mask");
        if matches!(isa.mul, Mul::Holes { .. }) {
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
        Ctx { isa, ht, m, bs, cap }
    }
}

/// x = byte-reverse(x) (64-bit).
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
fn class_groups(mula: bool, k: usize) -> Vec<Vec<(usize, usize)>> {
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
    let body = f.capture(|f| gf_mul_body(f, c, hi, lo));
    match schedule(body, c.cap, 24, c906_latency) {
        Ok(items) => f.append(items),
        Err(e) => f.fail(format!("scheduling the GF(2^128) multiply: {e}")),
    }
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
                        kasm!(f, and {t}, {v}, {c.m[k]}; sw {t}, {off}({ht}););
                    }
                }
            }
        }
    }
}

fn sfx(variant: &str) -> String {
    variant.replace('-', "_")
}

/// gcm_init / ghash_init.
fn init_fn(isa: Isa, t: &Target, abi: Abi, name: &str, margin: usize) -> Func {
    let mut f = Func::new(name, t, abi);
    let linux = abi == Abi::Linux;
    f.summary = "GHASH key set-up: the twisted key and its precomputed pieces".into();
    let ht = f.arg(if linux { "table" } else { "Htable" }, if linux { "u8 *" } else { "u128 *" }, true);
    let h = f.arg(if linux { "h" } else { "H" }, if linux { "const u8 *" } else { "const u64 *" }, true);
    let c = Ctx::new(&mut f, isa, ht, 0, margin);
    let (hi, lo) = (f.xreg("hi"), f.xreg("lo"));
    if linux {
        load_be(&mut f, &c, h, 0, hi, lo);
    } else {
        f.comment("H[0], H[1]: E(0) as two host-order (big-endian read) words");
        kasm!(f, ld {hi}, 0({h}); ld {lo}, 8({h}););
    }
    write_table(&mut f, &c, hi, lo);
    f.ret();
    f
}

/// gcm_gmult: Xi = Xi • H.
fn gmult_fn(isa: Isa, t: &Target, abi: Abi, name: &str, margin: usize) -> Func {
    let mut f = Func::new(name, t, abi);
    f.summary = "GHASH: Xi = Xi * H".into();
    let xi = f.arg("Xi", "u64 *", true);
    let ht = f.arg("Htable", "const u128 *", true);
    let c = Ctx::new(&mut f, isa, ht, 1, margin);
    let (hi, lo) = (f.xreg("hi"), f.xreg("lo"));
    load_be(&mut f, &c, xi, 0, hi, lo);
    gf_mul(&mut f, &c, hi, lo);
    store_be(&mut f, &c, xi, hi, lo);
    f.ret();
    f
}

/// gcm_ghash / ghash: for each 16-byte block, Xi = (Xi ^ block) • H.
fn ghash_fn(isa: Isa, t: &Target, abi: Abi, name: &str, margin: usize) -> Func {
    let mut f = Func::new(name, t, abi);
    let linux = abi == Abi::Linux;
    f.summary = "GHASH: Xi = (Xi ^ block) * H for each 16-byte block".into();
    let xi = f.arg(if linux { "acc" } else { "Xi" }, if linux { "u8 *" } else { "u64 *" }, true);
    let ht = f.arg(if linux { "table" } else { "Htable" }, if linux { "const u8 *" } else { "const u128 *" }, true);
    let inp = f.arg(if linux { "data" } else { "inp" }, "const u8 *", true);
    let len = f.arg(if linux { "nblocks" } else { "len" }, "size_t", false);
    let c = Ctx::new(&mut f, isa, ht, 3, margin);
    let (hi, lo, bh, bl) = (f.xreg("hi"), f.xreg("lo"), f.xreg("blk_hi"), f.xreg("blk_lo"));
    if !linux {
        kasm!(f, srli {len}, {len}, 4;);
    }
    kasm!(f, beqz {len}, done;);
    load_be(&mut f, &c, xi, 0, hi, lo);
    kasm!(f, block:);
    load_be(&mut f, &c, inp, 0, bh, bl);
    kasm!(f, xor {hi}, {hi}, {bh}; xor {lo}, {lo}, {bl};);
    gf_mul(&mut f, &c, hi, lo);
    kasm!(f, addi {inp}, {inp}, 16; addi {len}, {len}, -1; bnez {len}, block;);
    store_be(&mut f, &c, xi, hi, lo);
    kasm!(f, done:);
    f.ret();
    f
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut last = None;
    for margin in MARGINS {
        match build_with(variant, t, abi, margin) {
            Err(e) if e.reason.starts_with("out of integer registers") => last = Some(e),
            r => return r,
        }
    }
    Err(last.expect("at least one margin"))
}

fn build_with(variant: &str, t: &Target, abi: Abi, margin: usize) -> Result<Module, BuildError> {
    let isa = Isa::of(t);
    let mut m = Module::new("ghash", variant, t, abi);
    m.notes = vec![match isa.mul {
        Mul::Holes { .. } => "GHASH (SP 800-38D) from 32x32 integer multiplies on operands with holes. Constant time: no table lookups or secret branches; every multiply operand < 2^32 (the C906's fixed 3-cycle path).".into(),
        Mul::Clmul => "GHASH (SP 800-38D) with Zbc clmul/clmulh. Constant time if the core's clmul is.".into(),
    }];
    let s = sfx(variant);
    match abi {
        Abi::Linux => {
            m.add(init_fn(isa, t, abi, &format!("ghash_{s}_init"), margin), true)?;
            m.add(ghash_fn(isa, t, abi, &format!("ghash_{s}"), margin), true)?;
        }
        _ => {
            m.add(init_fn(isa, t, abi, &format!("gcm_init_{s}"), margin), true)?;
            m.add(gmult_fn(isa, t, abi, &format!("gcm_gmult_{s}"), margin), true)?;
            m.add(ghash_fn(isa, t, abi, &format!("gcm_ghash_{s}"), margin), true)?;
        }
    }
    Ok(m)
}

fn build_c906_novector(t: &Target, abi: Abi) -> Result<Module, BuildError> {
    build("c906-novector", t, abi)
}
fn build_rv64gc(t: &Target, abi: Abi) -> Result<Module, BuildError> {
    build("rv64gc", t, abi)
}
fn build_rv64gc_zbc(t: &Target, abi: Abi) -> Result<Module, BuildError> {
    build("rv64gc-zbc", t, abi)
}
