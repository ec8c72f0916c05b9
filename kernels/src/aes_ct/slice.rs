//! Fixsliced AES on 64-bit words (four blocks at a time), written once against [`Words`]:
//! [`Model`] computes it on `u64`s (the unit tests hold it against FIPS-197 AES), and the
//! kernel's emitter turns the same calls into instructions.
//!
//! Layout: eight words, word `p` holding bit `p` of every byte of the four blocks; in a
//! word, bit `16r + 4c + j` is row `r`, column `c` of block `j` (a 16-bit lane per row, a
//! nibble per column, a bit per block). Row rotations are then 64-bit rotations by 16, and
//! column rotations rotate nibbles inside the lanes.
//!
//! Fixslicing (Adomnicai and Peyrin): ShiftRows is never computed in the rounds. The state
//! after round `r` is kept as `SR^-(r mod 4)` of the true state, MixColumns is replaced by
//! `SR^-k ∘ MixColumns ∘ SR^k` for `k = r mod 4` (rotations of rows and columns), and the
//! round keys are stored shifted the same way. The S-box is Boyar and Peralta's 113-gate
//! circuit (32 AND, 81 XOR), which computes `S(x) ^ 0x63`; the 0x63 goes into the round
//! keys (MixColumns maps a constant 0x63 in every byte to itself).

/// The gates of the S-box circuits, on whatever holds the bit planes (64-bit words here,
/// vector registers in [`super::vslice`]), each returning a new value.
pub trait Gates {
    type V: Copy;
    fn xor(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn and(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn not(&mut self, a: Self::V) -> Self::V;
}

/// 64-bit word operations, each returning a new value.
pub trait Words: Gates {
    fn or(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Rotate right by `n` (1..63).
    fn ror(&mut self, a: Self::V, n: u32) -> Self::V;
    fn srl(&mut self, a: Self::V, n: u32) -> Self::V;
    fn sll(&mut self, a: Self::V, n: u32) -> Self::V;
    /// The low 32 bits, zero-extended.
    fn zext32(&mut self, a: Self::V) -> Self::V;
    /// A 64-bit constant (a mask).
    fn konst(&mut self, c: u64) -> Self::V;
}

/// The words computed on `u64`s.
pub struct Model;

impl Gates for Model {
    type V = u64;
    fn xor(&mut self, a: u64, b: u64) -> u64 {
        a ^ b
    }
    fn and(&mut self, a: u64, b: u64) -> u64 {
        a & b
    }
    fn not(&mut self, a: u64) -> u64 {
        !a
    }
}

impl Words for Model {
    fn or(&mut self, a: u64, b: u64) -> u64 {
        a | b
    }
    fn ror(&mut self, a: u64, n: u32) -> u64 {
        a.rotate_right(n)
    }
    fn srl(&mut self, a: u64, n: u32) -> u64 {
        a >> n
    }
    fn sll(&mut self, a: u64, n: u32) -> u64 {
        a << n
    }
    fn zext32(&mut self, a: u64) -> u64 {
        a & 0xffff_ffff
    }
    fn konst(&mut self, c: u64) -> u64 {
        c
    }
}

/// Every mask constant the slicing uses; a kernel keeps them where one load reaches them.
pub const MASKS: [u64; 20] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0f0f_0f0f_0f0f_0f0f,
    0x0000_0000_ffff_0000,
    0x0000_ff00_0000_ff00,
    0xffff_ffff_0000_0000,
    0x0fff_0fff_0fff_0fff,
    0x00ff_00ff_00ff_00ff,
    0x000f_000f_000f_000f,
    0x00f0_00ff_000f_0000,
    0x0f0f_0000_0f0f_0000,
    0x00ff_0000_00ff_0000,
    0x000f_00ff_00f0_0000,
    0x0000_ffff_0000_ffff,
    // SR² of a block in (lo, hi): its odd bytes.
    0xff00_ff00_ff00_ff00,
    // The key schedules' byte arithmetic on 32-bit words (after ROUND_MASKS: not in the
    // frame copy of the rounds' masks).
    0x0101_0101,
    0x6363_6363,
    0x8080_8080,
    0x7f7f_7f7f,
    0x1b1b_1b1b,
];

/// The masks the rounds, the transpositions and the keystream read ([`MASKS`]' first ones;
/// the rest are the key schedules').
pub const ROUND_MASKS: usize = 15;

/// Columns `0..4-k` of every row: the part of a column rotation by `k` that stays in its lane.
fn column_mask(k: u32) -> u64 {
    match k {
        1 => 0x0fff_0fff_0fff_0fff,
        2 => 0x00ff_00ff_00ff_00ff,
        _ => 0x000f_000f_000f_000f,
    }
}

/// `t = (a ^ (b >> s)) & m; a ^= t; b ^= t << s`: bit `i` of `a` (for `i` in `m`) trades
/// places with bit `i + s` of `b`.
pub fn swapmove<W: Words>(w: &mut W, a: W::V, b: W::V, s: u32, m: W::V) -> (W::V, W::V) {
    let u = w.srl(b, s);
    let u = w.xor(a, u);
    let t = w.and(u, m);
    let a = w.xor(a, t);
    let u = w.sll(t, s);
    let b = w.xor(b, u);
    (a, b)
}

/// [`swapmove`] inside one word: bit `i` (in `m`) trades places with bit `i + s`.
pub fn dswap<W: Words>(w: &mut W, x: W::V, s: u32, m: W::V) -> W::V {
    let u = w.srl(x, s);
    let u = w.xor(x, u);
    let t = w.and(u, m);
    let x = w.xor(x, t);
    let u = w.sll(t, s);
    w.xor(x, u)
}

/// One block's bytes (`lo` = bytes 0..8, `hi` = bytes 8..16, little-endian) as the two
/// words the transposition takes: bytes 0, 8, 1, 9, 2, 10, 3, 11 and 4, 12, 5, 13, ...
/// (row `r` of columns 0 and 2, then of columns 1 and 3).
pub fn gather<W: Words>(w: &mut W, lo: W::V, hi: W::V) -> (W::V, W::V) {
    let (m16, m8, mhi) = (w.konst(MASKS[3]), w.konst(MASKS[4]), w.konst(MASKS[5]));
    let a = w.zext32(lo);
    let b = w.sll(hi, 32);
    let x = w.or(a, b);
    let a = w.srl(lo, 32);
    let b = w.and(hi, mhi);
    let y = w.or(a, b);
    let x = dswap(w, x, 16, m16);
    let x = dswap(w, x, 8, m8);
    let y = dswap(w, y, 16, m16);
    let y = dswap(w, y, 8, m8);
    (x, y)
}

/// The inverse of [`gather`]: `(lo, hi)` of the block.
pub fn scatter<W: Words>(w: &mut W, x: W::V, y: W::V) -> (W::V, W::V) {
    let (m16, m8, mhi) = (w.konst(MASKS[3]), w.konst(MASKS[4]), w.konst(MASKS[5]));
    let x = dswap(w, x, 8, m8);
    let x = dswap(w, x, 16, m16);
    let y = dswap(w, y, 8, m8);
    let y = dswap(w, y, 16, m16);
    let a = w.zext32(x);
    let b = w.sll(y, 32);
    let lo = w.or(a, b);
    let a = w.srl(x, 32);
    let b = w.and(y, mhi);
    let hi = w.or(a, b);
    (lo, hi)
}

/// The transposition (an involution): `t[j]`, `t[4 + j]` of block `j` (from [`gather`])
/// become the eight bit planes, and back.
pub fn ortho<W: Words>(w: &mut W, t: [W::V; 8]) -> [W::V; 8] {
    let mut t = t;
    for (s, m, pairs) in [
        (1, MASKS[0], [(1, 0), (3, 2), (5, 4), (7, 6)]),
        (2, MASKS[1], [(2, 0), (3, 1), (6, 4), (7, 5)]),
        (4, MASKS[2], [(4, 0), (5, 1), (6, 2), (7, 3)]),
    ] {
        let m = w.konst(m);
        for (a, b) in pairs {
            (t[a], t[b]) = swapmove(w, t[a], t[b], s, m);
        }
    }
    t
}

/// Four blocks (`(lo, hi)` each) as bit planes.
pub fn pack<W: Words>(w: &mut W, blocks: [(W::V, W::V); 4]) -> [W::V; 8] {
    let g = blocks.map(|(lo, hi)| gather(w, lo, hi));
    ortho(w, [g[0].0, g[1].0, g[2].0, g[3].0, g[0].1, g[1].1, g[2].1, g[3].1])
}

/// The inverse of [`pack`].
pub fn unpack<W: Words>(w: &mut W, s: [W::V; 8]) -> [(W::V, W::V); 4] {
    let t = ortho(w, s);
    std::array::from_fn(|j| scatter(w, t[j], t[4 + j]))
}

/// A round key (the same block in all four lanes) as bit planes, `SR^shift` applied and,
/// if `not63`, 0x63 added to every byte (words 0, 1, 5, 6 complemented).
pub fn round_key<W: Words>(w: &mut W, lo: W::V, hi: W::V, shift: u32, not63: bool) -> [W::V; 8] {
    let (x, y) = gather(w, lo, hi);
    // The transposition of [x, x, x, x, y, y, y, y]: its first two stages meet equal words,
    // so each pair is computed once.
    let m1 = w.konst(MASKS[0]);
    let (x1, x0) = swapmove(w, x, x, 1, m1);
    let (y1, y0) = swapmove(w, y, y, 1, m1);
    let m2 = w.konst(MASKS[1]);
    let (t2, t0) = swapmove(w, x0, x0, 2, m2);
    let (t3, t1) = swapmove(w, x1, x1, 2, m2);
    let (t6, t4) = swapmove(w, y0, y0, 2, m2);
    let (t7, t5) = swapmove(w, y1, y1, 2, m2);
    let m4 = w.konst(MASKS[2]);
    let (t4, t0) = swapmove(w, t4, t0, 4, m4);
    let (t5, t1) = swapmove(w, t5, t1, 4, m4);
    let (t6, t2) = swapmove(w, t6, t2, 4, m4);
    let (t7, t3) = swapmove(w, t7, t3, 4, m4);
    let mut k = [t0, t1, t2, t3, t4, t5, t6, t7];
    if shift != 0 {
        k = k.map(|v| shift_rows(w, v, shift));
    }
    if not63 {
        for p in [0, 1, 5, 6] {
            k[p] = w.not(k[p]);
        }
    }
    k
}

/// ShiftRows applied `k` times (1..3) to one bit plane.
pub fn shift_rows<W: Words>(w: &mut W, x: W::V, k: u32) -> W::V {
    match k {
        2 => {
            let m = w.konst(MASKS[11]);
            dswap(w, x, 8, m)
        }
        _ => {
            let m8 = w.konst(if k == 1 { MASKS[9] } else { MASKS[12] });
            let x = dswap(w, x, 8, m8);
            let m4 = w.konst(MASKS[10]);
            dswap(w, x, 4, m4)
        }
    }
}

/// Rows rotated by `rho` and columns by `kappa`: out(r, c) = in(r + rho, c + kappa).
/// `m` is `column_mask(kappa)` when `kappa` is not 0.
pub fn rotate<W: Words>(w: &mut W, x: W::V, rho: u32, kappa: u32, m: Option<W::V>) -> W::V {
    if kappa == 0 {
        return w.ror(x, 16 * rho);
    }
    let a = w.ror(x, 16 * rho + 4 * kappa);
    let b = w.ror(x, 16 * (rho - 1) + 4 * kappa);
    let d = w.xor(a, b);
    let d = w.and(d, m.expect("a column mask"));
    w.xor(b, d)
}

/// The two rotations of round `r`'s MixColumns (`k = r mod 4`): rows by 1 and columns by
/// `k`, rows by 2 and columns by `2k mod 4`.
fn mc_rotations(k: u32) -> [(u32, u32); 2] {
    [(1, k), (2, (2 * k) % 4)]
}

/// `SR^-k ∘ MixColumns ∘ SR^k` on the eight planes.
pub fn mix_columns<W: Words>(w: &mut W, a: [W::V; 8], k: u32) -> [W::V; 8] {
    let [(r1, k1), (r2, k2)] = mc_rotations(k);
    let m1 = (k1 != 0).then(|| w.konst(column_mask(k1)));
    let b: [W::V; 8] = std::array::from_fn(|i| rotate(w, a[i], r1, k1, m1));
    let c: [W::V; 8] = std::array::from_fn(|i| w.xor(a[i], b[i]));
    let m2 = (k2 != 0).then(|| w.konst(column_mask(k2)));
    // out_i = b_i ^ (2c)_i ^ G(c_i), 2c by bit planes (x^8 = x^4 + x^3 + x + 1).
    let two = |w: &mut W, i: usize| -> W::V {
        match i {
            0 => c[7],
            1 | 3 | 4 => w.xor(c[i - 1], c[7]),
            _ => c[i - 1],
        }
    };
    std::array::from_fn(|i| {
        let g = rotate(w, c[i], r2, k2, m2);
        let t = two(w, i);
        let t = w.xor(b[i], t);
        w.xor(t, g)
    })
}

/// The inverse of [`mix_columns`] for the same `k`.
pub fn inv_mix_columns<W: Words>(w: &mut W, a: [W::V; 8], k: u32) -> [W::V; 8] {
    let [(r1, k1), (r2, k2)] = mc_rotations(k);
    let m1 = (k1 != 0).then(|| w.konst(column_mask(k1)));
    let b: [W::V; 8] = std::array::from_fn(|i| rotate(w, a[i], r1, k1, m1));
    let c: [W::V; 8] = std::array::from_fn(|i| w.xor(a[i], b[i]));
    // d = a ^ 2c, e = c ^ 4d, out = d ^ e ^ G(e).
    let d: [W::V; 8] = std::array::from_fn(|i| {
        let t = match i {
            0 => c[7],
            1 | 3 | 4 => w.xor(c[i - 1], c[7]),
            _ => c[i - 1],
        };
        w.xor(a[i], t)
    });
    let four = |w: &mut W, i: usize| -> W::V {
        // 4d by bit planes: d shifted up two places, d6 and d7 reduced.
        match i {
            0 => d[6],
            1 => w.xor(d[6], d[7]),
            2 => w.xor(d[0], d[7]),
            3 => w.xor(d[1], d[6]),
            4 => {
                let t = w.xor(d[2], d[6]);
                w.xor(t, d[7])
            }
            5 => w.xor(d[3], d[7]),
            6 => d[4],
            _ => d[5],
        }
    };
    let e: [W::V; 8] = std::array::from_fn(|i| {
        let t = four(w, i);
        w.xor(c[i], t)
    });
    let m2 = (k2 != 0).then(|| w.konst(column_mask(k2)));
    std::array::from_fn(|i| {
        let g = rotate(w, e[i], r2, k2, m2);
        let t = w.xor(d[i], e[i]);
        w.xor(t, g)
    })
}

/// The S-box of every byte, plus 0x63 (Boyar-Peralta's 113 gates: 32 AND, 81 XOR).
pub fn sbox<W: Gates>(w: &mut W, s: [W::V; 8]) -> [W::V; 8] {
    // Inputs U0 (the top bit) .. U7 (the bottom bit).
    let u: [W::V; 8] = std::array::from_fn(|k| s[7 - k]);
    let x = |w: &mut W, a, b| w.xor(a, b);
    let n = |w: &mut W, a, b| w.and(a, b);
    let y14 = x(w, u[3], u[5]);
    let y13 = x(w, u[0], u[6]);
    let y12 = x(w, y13, y14);
    let t1 = x(w, u[4], y12);
    let y15 = x(w, t1, u[5]);
    let t2 = n(w, y12, y15);
    let y6 = x(w, y15, u[7]);
    let y20 = x(w, t1, u[1]);
    let y9 = x(w, u[0], u[3]);
    let y11 = x(w, y20, y9);
    let t12 = n(w, y9, y11);
    let y7 = x(w, u[7], y11);
    let y8 = x(w, u[0], u[5]);
    let t0 = x(w, u[1], u[2]);
    let y10 = x(w, y15, t0);
    let y17 = x(w, y10, y11);
    let t13 = n(w, y14, y17);
    let t14 = x(w, t13, t12);
    let y19 = x(w, y10, y8);
    let t15 = n(w, y8, y10);
    let t16 = x(w, t15, t12);
    let y16 = x(w, t0, y11);
    let y21 = x(w, y13, y16);
    let t7 = n(w, y13, y16);
    let y18 = x(w, u[0], y16);
    let y1 = x(w, t0, u[7]);
    let y4 = x(w, y1, u[3]);
    let t5 = n(w, y4, u[7]);
    let t6 = x(w, t5, t2);
    let t18 = x(w, t6, t16);
    let t22 = x(w, t18, y19);
    let y2 = x(w, y1, u[0]);
    let t10 = n(w, y2, y7);
    let t11 = x(w, t10, t7);
    let t20 = x(w, t11, t16);
    let t24 = x(w, t20, y18);
    let y5 = x(w, y1, u[6]);
    let t8 = n(w, y5, y1);
    let t9 = x(w, t8, t7);
    let t19 = x(w, t9, t14);
    let t23 = x(w, t19, y21);
    let y3 = x(w, y5, y8);
    let t3 = n(w, y3, y6);
    let t4 = x(w, t3, t2);
    let t17 = x(w, t4, y20);
    let t21 = x(w, t17, t14);
    let t26 = n(w, t21, t23);
    let t27 = x(w, t24, t26);
    let t31 = x(w, t22, t26);
    let t25 = x(w, t21, t22);
    let t28 = n(w, t25, t27);
    let t29 = x(w, t28, t22);
    let z14 = n(w, t29, y2);
    let z5 = n(w, t29, y7);
    let t30 = x(w, t23, t24);
    let t32 = n(w, t31, t30);
    let t33 = x(w, t32, t24);
    let t35 = x(w, t27, t33);
    let t36 = n(w, t24, t35);
    let t38 = x(w, t27, t36);
    let t39 = n(w, t29, t38);
    let t40 = x(w, t25, t39);
    let t43 = x(w, t29, t40);
    let z3 = n(w, t43, y16);
    let tc12 = x(w, z3, z5);
    let z12 = n(w, t43, y13);
    let z13 = n(w, t40, y5);
    let z4 = n(w, t40, y1);
    let tc6 = x(w, z3, z4);
    let t34 = x(w, t23, t33);
    let t37 = x(w, t36, t34);
    let t41 = x(w, t40, t37);
    let z8 = n(w, t41, y10);
    let z17 = n(w, t41, y8);
    let t44 = x(w, t33, t37);
    let z0 = n(w, t44, y15);
    let z9 = n(w, t44, y12);
    let z10 = n(w, t37, y3);
    let z1 = n(w, t37, y6);
    let tc5 = x(w, z1, z0);
    let tc11 = x(w, tc6, tc5);
    let z11 = n(w, t33, y4);
    let t42 = x(w, t29, t33);
    let t45 = x(w, t42, t41);
    let z7 = n(w, t45, y17);
    let tc8 = x(w, z7, tc6);
    let z16 = n(w, t45, y14);
    let z6 = n(w, t42, y11);
    let tc16 = x(w, z6, tc8);
    let z15 = n(w, t42, y9);
    let tc20 = x(w, z15, tc16);
    let tc1 = x(w, z15, z16);
    let tc2 = x(w, z10, tc1);
    let tc21 = x(w, tc2, z11);
    let tc3 = x(w, z9, tc2);
    let s0 = x(w, tc3, tc16);
    let s3 = x(w, tc3, tc11);
    let s1 = x(w, s3, tc16);
    let tc13 = x(w, z13, tc1);
    let z2 = n(w, t33, u[7]);
    let tc4 = x(w, z0, z2);
    let tc7 = x(w, z12, tc4);
    let tc9 = x(w, z8, tc7);
    let tc10 = x(w, tc8, tc9);
    let tc17 = x(w, z14, tc10);
    let s5 = x(w, tc21, tc17);
    let tc26 = x(w, tc17, tc20);
    let s2 = x(w, tc26, z17);
    let tc14 = x(w, tc4, tc12);
    let tc18 = x(w, tc13, tc14);
    let s6 = x(w, tc10, tc18);
    let s7 = x(w, z12, tc18);
    let s4 = x(w, tc14, s3);
    [s7, s6, s5, s4, s3, s2, s1, s0]
}

/// The inverse of [`sbox`]: `S^-1(x ^ 0x63)` of every byte (127 gates: 34 AND, 93 XOR).
pub fn inv_sbox<W: Gates>(w: &mut W, s: [W::V; 8]) -> [W::V; 8] {
    let u: [W::V; 8] = std::array::from_fn(|k| s[7 - k]);
    let x = |w: &mut W, a, b| w.xor(a, b);
    let n = |w: &mut W, a, b| w.and(a, b);
    let t23 = x(w, u[0], u[3]);
    let t8 = x(w, u[1], t23);
    let m2 = n(w, t23, t8);
    let t4 = x(w, u[4], t8);
    let t22 = x(w, u[1], u[3]);
    let t2 = x(w, u[0], u[1]);
    let t1 = x(w, u[3], u[4]);
    let t9 = x(w, u[7], t1);
    let m7 = n(w, t22, t9);
    let t24 = x(w, u[4], u[7]);
    let t10 = x(w, t2, t24);
    let m14 = n(w, t2, t10);
    let r5 = x(w, u[6], u[7]);
    let t3 = x(w, t1, r5);
    let t13 = x(w, t2, r5);
    let t19 = x(w, t22, r5);
    let t17 = x(w, u[2], t19);
    let t25 = x(w, u[2], t1);
    let r13 = x(w, u[1], u[6]);
    let t20 = x(w, t24, r13);
    let m9 = n(w, t20, t17);
    let r17 = x(w, u[2], u[5]);
    let t6 = x(w, t22, r17);
    let m1 = n(w, t13, t6);
    let y5 = x(w, u[0], r17);
    let m4 = n(w, t19, y5);
    let m5 = x(w, m4, m1);
    let m17 = x(w, m5, t24);
    let r18 = x(w, u[5], u[6]);
    let t27 = x(w, t1, r18);
    let t15 = x(w, t10, t27);
    let m11 = n(w, t1, t15);
    let m15 = x(w, m14, m11);
    let m21 = x(w, m17, m15);
    let m12 = n(w, t4, t27);
    let m13 = x(w, m12, m11);
    let t14 = x(w, t10, r18);
    let m3 = x(w, t14, m1);
    let m16 = x(w, m3, m2);
    let m20 = x(w, m16, m13);
    let r19 = x(w, u[2], u[4]);
    let t16 = x(w, r13, r19);
    let t26 = x(w, t3, t16);
    let m6 = n(w, t3, t16);
    let m8 = x(w, t26, m6);
    let m18 = x(w, m8, m7);
    let m22 = x(w, m18, m13);
    let m25 = n(w, m22, m20);
    let m26 = x(w, m21, m25);
    let m10 = x(w, m9, m6);
    let m19 = x(w, m10, m15);
    let m23 = x(w, m19, t25);
    let m28 = x(w, m23, m25);
    let m24 = x(w, m22, m23);
    let m30 = n(w, m26, m24);
    let m39 = x(w, m23, m30);
    let m48 = n(w, m39, y5);
    let m57 = n(w, m39, t19);
    let m36 = x(w, m24, m25);
    let m31 = n(w, m20, m23);
    let m27 = x(w, m20, m21);
    let m32 = n(w, m27, m31);
    let m29 = n(w, m28, m27);
    let m37 = x(w, m21, m29);
    let m42 = x(w, m37, m39);
    let m52 = n(w, m42, t15);
    let m61 = n(w, m42, t1);
    let p0 = x(w, m52, m61);
    let p16 = x(w, m57, m61);
    let m60 = n(w, m37, t20);
    let m51 = n(w, m37, t17);
    let m33 = x(w, m27, m25);
    let m38 = x(w, m32, m33);
    let m43 = x(w, m37, m38);
    let m49 = n(w, m43, t16);
    let p6 = x(w, m49, m60);
    let p13 = x(w, m49, m51);
    let m58 = n(w, m43, t3);
    let m50 = n(w, m38, t9);
    let m59 = n(w, m38, t22);
    let p1 = x(w, m58, m59);
    let p7 = x(w, p0, p1);
    let m34 = n(w, m21, m22);
    let m35 = n(w, m24, m34);
    let m40 = x(w, m35, m36);
    let m41 = x(w, m38, m40);
    let m45 = x(w, m42, m41);
    let m53 = n(w, m45, t27);
    let p8 = x(w, m50, m53);
    let p23 = x(w, p7, p8);
    let m62 = n(w, m45, t4);
    let p14 = x(w, m49, m62);
    let s6 = x(w, p14, p23);
    let m54 = n(w, m41, t10);
    let p2 = x(w, m54, m62);
    let p22 = x(w, p2, p7);
    let s0 = x(w, p13, p22);
    let p17 = x(w, m58, p2);
    let p15 = x(w, m54, m59);
    let m63 = n(w, m41, t2);
    let m44 = x(w, m39, m40);
    let m46 = n(w, m44, t6);
    let p5 = x(w, m46, m51);
    let p18 = x(w, m63, p5);
    let p24 = x(w, p5, p7);
    let p12 = x(w, m46, m48);
    let s3 = x(w, p12, p22);
    let m55 = n(w, m44, t13);
    let p9 = x(w, m55, m63);
    let s7 = x(w, p9, p16);
    let m47 = n(w, m40, t8);
    let p3 = x(w, m47, m50);
    let p19 = x(w, p2, p3);
    let s5 = x(w, p19, p24);
    let p11 = x(w, p0, p3);
    let p26 = x(w, p9, p11);
    let m56 = n(w, m40, t23);
    let p4 = x(w, m48, m56);
    let p20 = x(w, p4, p6);
    let p29 = x(w, p15, p20);
    let s1 = x(w, p26, p29);
    let p10 = x(w, m57, p4);
    let p27 = x(w, p10, p18);
    let s4 = x(w, p23, p27);
    let p25 = x(w, p6, p10);
    let p28 = x(w, p11, p25);
    let s2 = x(w, p17, p28);
    [s7, s6, s5, s4, s3, s2, s1, s0]
}

/// The shift of round `r`'s stored key: `SR^-(r mod 4)` as a power of SR (0 for none).
pub fn key_shift(r: usize) -> u32 {
    ((4 - r % 4) % 4) as u32
}

/// Whether the last round is preceded by SR² (the rounds before it left the state shifted
/// by `SR^-((rounds - 1) mod 4)`; 1 for AES-128 and AES-256, 3 for AES-192, where the
/// final round's ShiftRows brings it back).
pub fn final_shift(rounds: usize) -> bool {
    (rounds - 1) % 4 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> u64 {
        // xorshift64*
        *seed ^= *seed >> 12;
        *seed ^= *seed << 25;
        *seed ^= *seed >> 27;
        seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn halves(b: &[u8]) -> (u64, u64) {
        (u64::from_le_bytes(b[..8].try_into().unwrap()), u64::from_le_bytes(b[8..16].try_into().unwrap()))
    }

    fn bytes((lo, hi): (u64, u64)) -> [u8; 16] {
        let mut o = [0; 16];
        o[..8].copy_from_slice(&lo.to_le_bytes());
        o[8..].copy_from_slice(&hi.to_le_bytes());
        o
    }

    /// The round keys of a schedule (standard or the decryption one) as the rounds read
    /// them: `keys[r]` for round `r`, shifted and with 0x63 as [`round_key`] makes them.
    fn keys(ks: &[u8], rounds: usize, order: impl Fn(usize) -> usize) -> Vec<[u64; 8]> {
        (0..=rounds)
            .map(|r| {
                let (lo, hi) = halves(&ks[16 * order(r)..]);
                let shift = if r == 0 || r == rounds { 0 } else { key_shift(r) };
                round_key(&mut Model, lo, hi, shift, r != 0)
            })
            .collect()
    }

    fn xor8(a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        std::array::from_fn(|i| a[i] ^ b[i])
    }

    fn encrypt4(ks: &[u8], blocks: [[u8; 16]; 4]) -> [[u8; 16]; 4] {
        let m = &mut Model;
        let rounds = i32::from_le_bytes(ks[240..244].try_into().unwrap()) as usize;
        let k = keys(ks, rounds, |r| r);
        let mut s = xor8(pack(m, blocks.map(|b| halves(&b))), k[0]);
        for (r, kr) in k.iter().enumerate().take(rounds).skip(1) {
            s = sbox(m, s);
            s = mix_columns(m, s, (r % 4) as u32);
            s = xor8(s, *kr);
        }
        if final_shift(rounds) {
            s = s.map(|v| shift_rows(m, v, 2));
        }
        s = xor8(sbox(m, s), k[rounds]);
        unpack(m, s).map(bytes)
    }

    /// Decryption with OpenSSL's decryption schedule (the equivalent inverse cipher's keys:
    /// reversed, InvMixColumns on all but the first and last).
    fn decrypt4(dks: &[u8], blocks: [[u8; 16]; 4]) -> [[u8; 16]; 4] {
        let m = &mut Model;
        let rounds = i32::from_le_bytes(dks[240..244].try_into().unwrap()) as usize;
        let d = keys(dks, rounds, |r| rounds - r);
        let mut s = xor8(pack(m, blocks.map(|b| halves(&b))), d[rounds]);
        s = inv_sbox(m, s);
        if final_shift(rounds) {
            s = s.map(|v| shift_rows(m, v, 2));
        }
        for r in (1..rounds).rev() {
            s = xor8(inv_mix_columns(m, s, (r % 4) as u32), d[r]);
            s = inv_sbox(m, s);
        }
        s = xor8(s, d[0]);
        unpack(m, s).map(bytes)
    }

    fn decryption_schedule(ks: &[u8]) -> Vec<u8> {
        let rounds = i32::from_le_bytes(ks[240..244].try_into().unwrap()) as usize;
        let mul = |a: u8, b: u8| -> u8 {
            let (mut a, mut b, mut p) = (a, b, 0u8);
            while b != 0 {
                if b & 1 != 0 {
                    p ^= a;
                }
                a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
                b >>= 1;
            }
            p
        };
        let mut out = ks.to_vec();
        for i in 0..=rounds {
            let src = &ks[16 * (rounds - i)..16 * (rounds - i) + 16];
            for c in 0..4 {
                let a = &src[4 * c..4 * c + 4];
                for r in 0..4 {
                    out[16 * i + 4 * c + r] = if i == 0 || i == rounds {
                        a[r]
                    } else {
                        mul(a[r], 14) ^ mul(a[(r + 1) % 4], 11) ^ mul(a[(r + 2) % 4], 13) ^ mul(a[(r + 3) % 4], 9)
                    };
                }
            }
        }
        out
    }

    #[test]
    fn sbox_circuits_are_the_sbox_plus_0x63_and_its_inverse() {
        let s = crate::aes::sbox();
        for x in 0..=255u8 {
            // The byte in every position: plane p is all ones where bit p of x is set.
            let planes: [u64; 8] = std::array::from_fn(|p| if x >> p & 1 != 0 { !0 } else { 0 });
            let out = sbox(&mut Model, planes);
            let y = (0..8).fold(0u8, |acc, p| acc | (((out[p] & 1) as u8) << p));
            assert!(out.iter().all(|&w| w == 0 || w == !0));
            assert_eq!(y, s[x as usize] ^ 0x63, "S({x:#04x})");
            let back = inv_sbox(&mut Model, out);
            let z = (0..8).fold(0u8, |acc, p| acc | (((back[p] & 1) as u8) << p));
            assert_eq!(z, x, "S^-1");
        }
    }

    #[test]
    fn pack_puts_row_column_and_block_where_the_layout_says() {
        let mut seed = 7;
        let blocks: [[u8; 16]; 4] = std::array::from_fn(|_| std::array::from_fn(|_| rng(&mut seed) as u8));
        let s = pack(&mut Model, blocks.map(|b| halves(&b)));
        for (j, b) in blocks.iter().enumerate() {
            for r in 0..4 {
                for c in 0..4 {
                    for (p, w) in s.iter().enumerate() {
                        assert_eq!(w >> (16 * r + 4 * c + j) & 1, (b[4 * c + r] >> p & 1) as u64, "block {j} row {r} col {c} bit {p}");
                    }
                }
            }
        }
        assert_eq!(unpack(&mut Model, s).map(bytes), blocks);
    }

    #[test]
    fn fixsliced_aes_is_aes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        // FIPS-197 C.1-C.3.
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        for (n, ct) in [(16, "69c4e0d86a7b0430d8cdb78070b4c55a"), (24, "dda97ca4864cdfe06eaf70a0ec0d7191"), (32, "8ea2b7ca516745bfeafc49904b496089")] {
            let key: Vec<u8> = (0..n as u8).collect();
            let ks = crate::aes::schedule(&key);
            let got = encrypt4(&ks, [pt; 4]);
            let want: Vec<u8> = (0..16).map(|i| u8::from_str_radix(&ct[2 * i..2 * i + 2], 16).unwrap()).collect();
            assert!(got.iter().all(|b| b[..] == want[..]), "AES-{}", n * 8);
            assert_eq!(decrypt4(&decryption_schedule(&ks), got), [pt; 4]);
        }
        for n in [16, 24, 32] {
            for _ in 0..40 {
                let key: Vec<u8> = (0..n).map(|_| rng(&mut seed) as u8).collect();
                let ks = crate::aes::schedule(&key);
                let blocks: [[u8; 16]; 4] = std::array::from_fn(|_| std::array::from_fn(|_| rng(&mut seed) as u8));
                let ct = encrypt4(&ks, blocks);
                for j in 0..4 {
                    assert_eq!(ct[j], crate::aes::encrypt_block(&ks, blocks[j]), "AES-{} block {j}", n * 8);
                }
                assert_eq!(decrypt4(&decryption_schedule(&ks), ct), blocks);
            }
        }
    }
}
