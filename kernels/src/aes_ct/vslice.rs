//! Bitsliced AES on 16-byte vector registers (e8, VLEN 128): eight blocks in eight
//! registers, written once against [`Bytes`]. [`Model`] computes it on byte arrays (the
//! unit tests hold it against FIPS-197 AES) and the kernel's emitter turns the same calls
//! into vector instructions.
//!
//! Layout: register `p` holds bit `p` of every byte; its byte `4c + r` (the state's byte
//! order: row `r`, column `c`) holds that bit of the eight blocks, block `j` at bit `j`.
//! Every movement of bytes inside a block is then a byte permutation of each register (one
//! `vrgather.vv`), and the transposition from blocks to bit planes is an 8×8 bit
//! transposition in every byte (shifts and masks inside the bytes).
//!
//! Fixslicing, as in [`super::slice`], but with a period of four for every round: the
//! state after round `r` is kept as `SR^-r` of the true state, so round `r`'s MixColumns
//! becomes `SR^-r ∘ MixColumns ∘ SR^r`, whose two row rotations are byte permutations
//! that depend on `r mod 4`; round key `r` is stored as `SR^-r` of itself (plus 0x63 from
//! round 1 on, for the S-box circuit's missing constant). After the last round `N` the
//! state is `SR^-N` of the output: one more permutation, `SR^(N mod 4)` (none for
//! AES-192).

use super::slice::Gates;

/// Byte operations on a register of 16 bytes, each returning a new value.
pub trait Bytes: Gates {
    /// Every byte shifted right by `n` (1..7).
    fn srl(&mut self, a: Self::V, n: u32) -> Self::V;
    /// Every byte shifted left by `n` (1..7).
    fn sll(&mut self, a: Self::V, n: u32) -> Self::V;
    /// Every byte ANDed with `m`.
    fn mask(&mut self, a: Self::V, m: u8) -> Self::V;
    /// `out[i] = a[p.index()[i]]`.
    fn permute(&mut self, a: Self::V, p: Perm) -> Self::V;
}

/// The byte permutations the cipher uses (each an index vector in [`table`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Perm {
    /// ShiftRows applied `n` times (0..3).
    Sr(u32),
    /// `SR^-k ∘ rot ∘ SR^k` for a rotation of every column's rows by one (`k` = 0..3).
    Rot1(u32),
    /// The same for a rotation by two.
    Rot2(u32),
}

/// Gather indices of `x -> ShiftRows^n(x)`: out(r, c) = in(r, c + n r).
fn sr(n: u32) -> [u8; 16] {
    std::array::from_fn(|i| {
        let (c, r) = (i / 4, i % 4);
        (4 * ((c + n as usize * r) % 4) + r) as u8
    })
}

/// Gather indices of a rotation of the rows in every column: out(r, c) = in(r + m, c).
fn rot(m: usize) -> [u8; 16] {
    std::array::from_fn(|i| (4 * (i / 4) + (i % 4 + m) % 4) as u8)
}

/// The gather indices of `A ∘ B` (B first) from theirs.
fn compose(a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
    std::array::from_fn(|i| b[a[i] as usize])
}

impl Perm {
    pub fn index(self) -> [u8; 16] {
        let conj = |k: u32, m: usize| compose(compose(sr((4 - k) % 4), rot(m)), sr(k));
        match self {
            Perm::Sr(n) => sr(n % 4),
            Perm::Rot1(k) => conj(k % 4, 1),
            Perm::Rot2(k) => conj(k % 4, 2),
        }
    }

    /// Its place in [`table`], in bytes.
    pub fn offset(self) -> i64 {
        let (group, n) = match self {
            Perm::Sr(n) => (0, n),
            Perm::Rot1(k) => (1, k),
            Perm::Rot2(k) => (2, k),
        };
        16 * (4 * group + (n % 4) as i64)
    }
}

/// Every permutation's indices, 16 bytes each, in [`Perm::offset`] order.
pub fn table() -> Vec<u8> {
    [Perm::Sr as fn(u32) -> Perm, Perm::Rot1, Perm::Rot2].iter().flat_map(|p| (0..4).flat_map(move |k| p(k).index())).collect()
}

/// Every permutation's indices for registers of up to 64 bytes (VLEN 512), 64 bytes each
/// in [`Perm::offset`]` × 4` order: the 16 indices of each 16-byte group point into that
/// group (`16m + idx`); then the four `SR^n` again, every group's indices into the first
/// group (`idx`: a 16-byte value permuted and copied to every group).
pub fn wide_table() -> Vec<u8> {
    let t = table();
    let within = t.chunks(16).flat_map(|c| (0..4u8).flat_map(move |m| c.iter().map(move |&i| 16 * m + i)));
    let copies = t[..64].chunks(16).flat_map(|c| (0..4).flat_map(move |_| c.iter().copied()));
    within.chain(copies).collect()
}

/// The power of ShiftRows that round key `r` is stored with: `SR^-r`.
pub fn key_shift(r: usize) -> u32 {
    ((4 - r % 4) % 4) as u32
}

/// Round key `r` as the rounds add it, in bytes: `SR^-r`, and 0x63 from round 1 on.
pub fn round_key_bytes(k: [u8; 16], r: usize) -> [u8; 16] {
    let idx = Perm::Sr(key_shift(r)).index();
    std::array::from_fn(|i| k[idx[i] as usize] ^ if r == 0 { 0 } else { 0x63 })
}

/// Bytes spread to bit planes (the same in all eight blocks): byte `i` of plane `p` is
/// 0xff where bit `p` of `k[i]` is set.
pub fn planes(k: [u8; 16]) -> [[u8; 16]; 8] {
    std::array::from_fn(|p| k.map(|b| 0u8.wrapping_sub(b >> p & 1)))
}

/// `t = (a ^ (b >> s)) & m; a ^= t; b ^= t << s` in every byte: bit `i` of `a` (for `i`
/// in `m`) trades places with bit `i + s` of `b`.
pub fn swapmove<W: Bytes>(w: &mut W, a: W::V, b: W::V, s: u32, m: u8) -> (W::V, W::V) {
    let u = w.srl(b, s);
    let u = w.xor(a, u);
    let t = w.mask(u, m);
    let a = w.xor(a, t);
    let u = w.sll(t, s);
    let b = w.xor(b, u);
    (a, b)
}

/// Eight blocks (register `j` = block `j`'s bytes) to bit planes, and back (an involution).
pub fn transpose<W: Bytes>(w: &mut W, t: [W::V; 8]) -> [W::V; 8] {
    let mut t = t;
    for (s, m, pairs) in [
        (1, 0x55, [(1, 0), (3, 2), (5, 4), (7, 6)]),
        (2, 0x33, [(2, 0), (3, 1), (6, 4), (7, 5)]),
        (4, 0x0f, [(4, 0), (5, 1), (6, 2), (7, 3)]),
    ] {
        for (a, b) in pairs {
            (t[a], t[b]) = swapmove(w, t[a], t[b], s, m);
        }
    }
    t
}

/// `SR^-k ∘ MixColumns ∘ SR^k` on the eight planes: with `b = Rot1(a)` and `c = a ^ b`,
/// `out = b ^ 2c ^ Rot2(c)`.
pub fn mix_columns<W: Bytes>(w: &mut W, a: [W::V; 8], k: u32) -> [W::V; 8] {
    let b: [W::V; 8] = std::array::from_fn(|i| w.permute(a[i], Perm::Rot1(k)));
    let c: [W::V; 8] = std::array::from_fn(|i| w.xor(a[i], b[i]));
    std::array::from_fn(|i| {
        let g = w.permute(c[i], Perm::Rot2(k));
        // 2c by bit planes (x^8 = x^4 + x^3 + x + 1).
        let t = match i {
            0 => c[7],
            1 | 3 | 4 => w.xor(c[i - 1], c[7]),
            _ => c[i - 1],
        };
        let t = w.xor(b[i], t);
        w.xor(t, g)
    })
}

/// The registers computed on byte arrays.
pub struct Model;

impl Gates for Model {
    type V = [u8; 16];
    fn xor(&mut self, a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
        std::array::from_fn(|i| a[i] ^ b[i])
    }
    fn and(&mut self, a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
        std::array::from_fn(|i| a[i] & b[i])
    }
    fn not(&mut self, a: [u8; 16]) -> [u8; 16] {
        a.map(|x| !x)
    }
}

impl Bytes for Model {
    fn srl(&mut self, a: [u8; 16], n: u32) -> [u8; 16] {
        a.map(|x| x >> n)
    }
    fn sll(&mut self, a: [u8; 16], n: u32) -> [u8; 16] {
        a.map(|x| x << n)
    }
    fn mask(&mut self, a: [u8; 16], m: u8) -> [u8; 16] {
        a.map(|x| x & m)
    }
    fn permute(&mut self, a: [u8; 16], p: Perm) -> [u8; 16] {
        let idx = p.index();
        std::array::from_fn(|i| a[idx[i] as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::super::slice::sbox;
    use super::*;

    fn xor8(a: [[u8; 16]; 8], b: [[u8; 16]; 8]) -> [[u8; 16]; 8] {
        std::array::from_fn(|p| std::array::from_fn(|i| a[p][i] ^ b[p][i]))
    }

    /// Eight blocks encrypted the way the kernel does it.
    fn encrypt8(ks: &[u8], blocks: [[u8; 16]; 8]) -> [[u8; 16]; 8] {
        let m = &mut Model;
        let rounds = i32::from_le_bytes(ks[240..244].try_into().unwrap()) as usize;
        let key = |r: usize| -> [u8; 16] { ks[16 * r..16 * r + 16].try_into().unwrap() };
        let k0 = key(0);
        let x = blocks.map(|b| Model.xor(b, k0));
        let mut s = transpose(m, x);
        for r in 1..rounds {
            s = sbox(m, s);
            s = mix_columns(m, s, (r % 4) as u32);
            s = xor8(s, planes(round_key_bytes(key(r), r)));
        }
        s = xor8(sbox(m, s), planes(round_key_bytes(key(rounds), rounds)));
        s = s.map(|v| m.permute(v, Perm::Sr((rounds % 4) as u32)));
        transpose(m, s)
    }

    #[test]
    fn permutations_are_what_they_say() {
        // SR^4 and the rotations' conjugates by SR^0 are the plain ones.
        assert_eq!(compose(compose(sr(1), sr(2)), sr(1)), sr(0));
        assert_eq!(Perm::Rot1(0).index(), rot(1));
        // FIPS-197's ShiftRows: row 1 of the output is row 1 of the input moved left by one.
        let s = sr(1);
        assert_eq!([s[1], s[5], s[9], s[13]], [5, 9, 13, 1]);
        let t = table();
        assert_eq!(t.len(), 192);
        for p in [Perm::Sr(3), Perm::Rot1(2), Perm::Rot2(1)] {
            let o = p.offset() as usize;
            assert_eq!(t[o..o + 16], p.index());
        }
    }

    #[test]
    fn transpose_puts_bits_where_the_layout_says() {
        let blocks: [[u8; 16]; 8] = std::array::from_fn(|j| std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ (j as u8).wrapping_mul(101)));
        let s = transpose(&mut Model, blocks);
        for (j, b) in blocks.iter().enumerate() {
            for (i, &x) in b.iter().enumerate() {
                for (p, v) in s.iter().enumerate() {
                    assert_eq!(v[i] >> j & 1, x >> p & 1, "block {j} byte {i} bit {p}");
                }
            }
        }
        assert_eq!(transpose(&mut Model, s), blocks);
    }

    #[test]
    fn vector_bitsliced_aes_is_aes() {
        let mut seed = 0x2545_f491_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        for (n, ct) in [(16, "69c4e0d86a7b0430d8cdb78070b4c55a"), (24, "dda97ca4864cdfe06eaf70a0ec0d7191"), (32, "8ea2b7ca516745bfeafc49904b496089")] {
            let key: Vec<u8> = (0..n as u8).collect();
            let ks = crate::aes::schedule(&key);
            let want: Vec<u8> = (0..16).map(|i| u8::from_str_radix(&ct[2 * i..2 * i + 2], 16).unwrap()).collect();
            assert!(encrypt8(&ks, [pt; 8]).iter().all(|b| b[..] == want[..]), "AES-{}", n * 8);
            for _ in 0..20 {
                let key: Vec<u8> = (0..n).map(|_| next()).collect();
                let ks = crate::aes::schedule(&key);
                let blocks: [[u8; 16]; 8] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
                let got = encrypt8(&ks, blocks);
                for j in 0..8 {
                    assert_eq!(got[j], crate::aes::encrypt_block(&ks, blocks[j]), "AES-{} block {j}", n * 8);
                }
            }
        }
    }
}
