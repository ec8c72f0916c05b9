//! One AES block in one 16-byte vector register, the S-box computed by nibble lookups
//! (`vrgather.vv` into 16-byte tables), as Hamburg's vector-permute AES does it, with
//! tables derived here.
//!
//! The field: GF(2^8) as GF(16)\[y\]/(y^2 + y + ν) (GF(16) = GF(2)\[z\]/(z^4 + z + 1)); an
//! element `x = i + k·y` is the byte `i << 4 | k`. With `j = i + k` its norm is
//! `N = i·j + ν·k^2` and `1/x = (j + k·y)/N`. For `a = 1/ν`:
//! `io = 1/(1/i + a/k) + j` and `jo = 1/(1/j + a/k) + i` are both `N/(ν(k + a·i))` and
//! `N/(ν(k + a·j))`, whose inverses are linear in `1/x`'s coordinates
//! (`c1 = j/N`, `c2 = k/N`): `1/io = c1 + (1 + ν)c2` and `1/jo = c1 + ν·c2`. So
//! `c2 = 1/io + 1/jo`, `c1 = ν/io + (1 + ν)/jo`, and any GF(2)-linear function of `1/x`
//! (the S-box's affine map without its constant, and twice it) is `F[io] ^ G[jo]` for
//! two 16-entry tables. Each step is a lookup of one nibble, with `1/0` written as 0x80:
//! a lookup at an index of 16 or more gives 0 (as `vrgather.vv` does past VLMAX), and
//! XORs keep the bit, so `1/∞ = 0` and `∞ + n = ∞` come out of the same instructions.
//! The input byte reaches the tower basis by two lookups (low and high nibble, XORed: the
//! isomorphism is linear).
//!
//! The state stays in AES's basis between rounds, with the S-box's constant 0x63 added
//! (`x + 0x63`: then the round keys are the `AES_KEY`'s as they are, and the constant is
//! added once before round 1 and once after the last): the low nibble's table adds
//! `φ(0x63)` back on the way into the tower basis. The S-box's output `A` (without its
//! constant) comes from two tables, `2A` from `A` by shifts (xtime), and ShiftRows and
//! MixColumns are byte permutations and XORs of them: with `a = SR(A)` and `R1`, `R3` the
//! rotations of every column's rows by one and by three,
//! `X = 2a ^ R1 a`, `out = X ^ R3 a ^ R1 X` (= `2a + 3·R1 a + R2 a + R3 a`), four
//! permutations a round (`2a = SR(2A)`, `R1 a`, `R3 a` straight from `A`).
//!
//! Decryption (the equivalent inverse cipher, on the `AES_KEY` of `AES_set_decrypt_key`)
//! looks up the inverse S-box's input, `L^-1(y + 0x63)` for the affine map's linear part
//! `L`, as `L^-1(y) + L^-1(0x63)` (the low nibble's table adds the constant): two lookups
//! into the tower basis again, the same inversion, and tables for 9, 11, 13 and 14 times
//! the result. InvMixColumns after InvShiftRows is then
//! `InvSR(14T ^ Q'(11T ^ Q'(13T ^ Q'(9T))))` with `Q' = SR·R1·SR^-1` (in(r + 1, c - 1)).

/// GF(16) product, modulo z^4 + z + 1.
fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0;
    for _ in 0..4 {
        if b & 1 != 0 {
            r ^= a;
        }
        b >>= 1;
        a <<= 1;
        if a & 16 != 0 {
            a ^= 0b10011;
        }
    }
    r
}

fn ginv(a: u8) -> u8 {
    (1..16).find(|&b| gmul(a, b) == 1).unwrap_or(0)
}

/// The smallest ν with y^2 + y + ν irreducible over GF(16).
fn nu() -> u8 {
    (1..16).find(|&n| (0..16).all(|t| gmul(t, t) ^ t ^ n != 0)).unwrap_or(0)
}

/// Tower product of `i1 + k1 y` and `i2 + k2 y` (bytes `i << 4 | k`).
fn tmul(x: u8, y: u8, nu: u8) -> u8 {
    let (i1, k1, i2, k2) = (x >> 4, x & 15, y >> 4, y & 15);
    let kk = gmul(k1, k2);
    // y^2 = y + ν
    let i = gmul(i1, i2) ^ gmul(kk, nu);
    let k = gmul(i1, k2) ^ gmul(k1, i2) ^ kk;
    i << 4 | k
}

/// AES's GF(2^8) product (modulo x^8 + x^4 + x^3 + x + 1).
fn amul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
        b >>= 1;
    }
    r
}

/// The S-box's affine map without its constant.
fn affine(x: u8) -> u8 {
    x ^ x.rotate_left(1) ^ x.rotate_left(2) ^ x.rotate_left(3) ^ x.rotate_left(4)
}

/// The tables, 16 bytes each, in this order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Table {
    /// The carried byte's (AES byte + 0x63) low nibble to the tower basis, with 0x63's
    /// image added; and the high nibble's.
    InLo,
    InHi,
    /// `1/n` (0x80 for 0), `a/n` (0x80 for 0).
    Inv,
    InvA,
    /// `F[io] ^ G[jo]` = the affine map's linear part of `1/x`.
    F1,
    G1,
    /// Gather indices: ShiftRows; rows rotated by one after it; rows rotated by three
    /// after it; rows rotated by one.
    Sr,
    R1Sr,
    R3Sr,
    Rot1,
    /// Decryption: a byte's low nibble to the tower basis through `L^-1`, with
    /// `L^-1(0x63)`'s image added; the high nibble's.
    DInLo,
    DInHi,
    /// `1/x` in AES's basis (`DF1[io] ^ DG1[jo]`), and 9, 11, 13 and 14 times it.
    DF1,
    DG1,
    DF9,
    DG9,
    DFb,
    DGb,
    DFd,
    DGd,
    DFe,
    DGe,
    /// Gather indices: `Q'` (in(r + 1, c - 1)), InvShiftRows.
    Qd,
    InvSr,
}

/// The encryption tables, in the order of their data object.
pub const TABLES: [Table; 10] = [Table::InLo, Table::InHi, Table::Inv, Table::InvA, Table::F1, Table::G1, Table::Sr, Table::R1Sr, Table::R3Sr, Table::Rot1];

/// The decryption tables, in the order of their data object.
pub const DTABLES: [Table; 16] = [
    Table::DInLo,
    Table::DInHi,
    Table::Inv,
    Table::InvA,
    Table::DF1,
    Table::DG1,
    Table::DF9,
    Table::DG9,
    Table::DFb,
    Table::DGb,
    Table::DFd,
    Table::DGd,
    Table::DFe,
    Table::DGe,
    Table::Qd,
    Table::InvSr,
];

/// The encryption tables' bytes.
pub fn tables() -> Vec<[u8; 16]> {
    TABLES.iter().map(|&t| table(t)).collect()
}

/// The decryption tables' bytes.
pub fn dtables() -> Vec<[u8; 16]> {
    DTABLES.iter().map(|&t| table(t)).collect()
}

/// One table's bytes.
pub fn table(which: Table) -> [u8; 16] {
    let nu = nu();
    // φ: AES's basis to the tower's, by a root of AES's polynomial in the tower field.
    // 1 = 1 + 0·y.
    let one = 0x10u8;
    let tpow = |b: u8, e: u32| (0..e).fold(one, |acc, _| tmul(acc, b, nu));
    let beta = (1..=255u8).find(|&b| tpow(b, 8) ^ tpow(b, 4) ^ tpow(b, 3) ^ b ^ one == 0).expect("a root");
    let phi = |x: u8| (0..8).filter(|&n| x >> n & 1 != 0).fold(0u8, |acc, n| acc ^ tpow(beta, n));
    let mut phi_inv = [0u8; 256];
    for x in 0..=255u8 {
        phi_inv[phi(x) as usize] = x;
    }
    // L(c1 + c2 y) = affine-linear(φ^-1(c1 + c2 y)).
    let l = |c1: u8, c2: u8| affine(phi_inv[(c1 << 4 | c2) as usize]);
    let inv_or_inf = |n: u8| if n == 0 { 0x80 } else { ginv(n) };
    let f = |io: u8| {
        if io == 0 {
            0
        } else {
            l(gmul(nu, ginv(io)), ginv(io))
        }
    };
    let g = |jo: u8| {
        if jo == 0 {
            0
        } else {
            l(gmul(nu ^ 1, ginv(jo)), ginv(jo))
        }
    };
    // Decryption: L^-1, and 1/x in AES's basis times k.
    let mut l_inv = [0u8; 256];
    for x in 0..=255u8 {
        l_inv[affine(x) as usize] = x;
    }
    let ld = |c1: u8, c2: u8| phi_inv[(c1 << 4 | c2) as usize];
    let fd = |k: u8, io: u8| {
        if io == 0 {
            0
        } else {
            amul(k, ld(gmul(nu, ginv(io)), ginv(io)))
        }
    };
    let gd = |k: u8, jo: u8| {
        if jo == 0 {
            0
        } else {
            amul(k, ld(gmul(nu ^ 1, ginv(jo)), ginv(jo)))
        }
    };
    let mul = |k: u8, h: &dyn Fn(u8, u8) -> u8| -> [u8; 16] { std::array::from_fn(|n| h(k, n as u8)) };
    let a = ginv(nu);
    let perm = |h: &dyn Fn(usize, usize) -> usize| -> [u8; 16] { std::array::from_fn(|i| h(i / 4, i % 4) as u8) };
    // Gather indices: out(r, c) = in(...): ShiftRows in(r, c + r); R1 in(r + 1, c).
    let sr = |c: usize, r: usize| 4 * ((c + r) % 4) + r;
    let r1sr = |c: usize, r: usize| sr(c, (r + 1) % 4);
    let r3sr = |c: usize, r: usize| sr(c, (r + 3) % 4);
    let rot1 = |c: usize, r: usize| 4 * c + (r + 1) % 4;
    let qd = |c: usize, r: usize| 4 * ((c + 3) % 4) + (r + 1) % 4;
    let invsr = |c: usize, r: usize| 4 * ((c + 4 - r) % 4) + r;
    match which {
        Table::InLo => std::array::from_fn(|n| phi(n as u8) ^ phi(0x63)),
        Table::InHi => std::array::from_fn(|n| phi((n as u8) << 4)),
        Table::Inv => std::array::from_fn(|n| inv_or_inf(n as u8)),
        Table::InvA => std::array::from_fn(|n| if n == 0 { 0x80 } else { gmul(a, ginv(n as u8)) }),
        Table::F1 => std::array::from_fn(|n| f(n as u8)),
        Table::G1 => std::array::from_fn(|n| g(n as u8)),
        Table::Sr => perm(&sr),
        Table::R1Sr => perm(&r1sr),
        Table::R3Sr => perm(&r3sr),
        Table::Rot1 => perm(&rot1),
        Table::DInLo => std::array::from_fn(|n| phi(l_inv[n]) ^ phi(l_inv[0x63])),
        Table::DInHi => std::array::from_fn(|n| phi(l_inv[n << 4])),
        Table::DF1 => mul(1, &fd),
        Table::DG1 => mul(1, &gd),
        Table::DF9 => mul(9, &fd),
        Table::DG9 => mul(9, &gd),
        Table::DFb => mul(11, &fd),
        Table::DGb => mul(11, &gd),
        Table::DFd => mul(13, &fd),
        Table::DGd => mul(13, &gd),
        Table::DFe => mul(14, &fd),
        Table::DGe => mul(14, &gd),
        Table::Qd => perm(&qd),
        Table::InvSr => perm(&invsr),
    }
}

/// Vector operations on one 16-byte register, each returning a new value.
pub trait Lanes {
    type V: Copy;
    fn xor(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Every byte's low nibble.
    fn lo(&mut self, a: Self::V) -> Self::V;
    /// Every byte's high nibble.
    fn hi(&mut self, a: Self::V) -> Self::V;
    /// `out[i] = t[idx[i]]`, 0 where `idx[i]` is 16 or more.
    fn lookup(&mut self, t: Table, idx: Self::V) -> Self::V;
    /// `out[i] = a[t[i]]` (`t` one of the permutations).
    fn permute(&mut self, a: Self::V, t: Table) -> Self::V;
    /// Every byte times 2 in AES's field.
    fn xtime(&mut self, a: Self::V) -> Self::V;
}

/// `A`: the S-box of every byte without its 0x63, of the carried bytes `x` (AES's + 0x63).
pub fn sbox<W: Lanes>(w: &mut W, x: W::V) -> W::V {
    let (io, jo) = inversion(w, x, [Table::InLo, Table::InHi]);
    let (f, g) = (w.lookup(Table::F1, io), w.lookup(Table::G1, jo));
    w.xor(f, g)
}

/// `(io, jo)` of every byte's inverse, the byte taken to the tower basis by the tables
/// `basis` (low nibble's, high nibble's).
fn inversion<W: Lanes>(w: &mut W, x: W::V, basis: [Table; 2]) -> (W::V, W::V) {
    let (lo, hi) = (w.lo(x), w.hi(x));
    let (a, b) = (w.lookup(basis[0], lo), w.lookup(basis[1], hi));
    let t = w.xor(a, b);
    let (i, k) = (w.hi(t), w.lo(t));
    let ak = w.lookup(Table::InvA, k);
    let j = w.xor(i, k);
    let ii = w.lookup(Table::Inv, i);
    let iak = w.xor(ii, ak);
    let ij = w.lookup(Table::Inv, j);
    let jak = w.xor(ij, ak);
    let t = w.lookup(Table::Inv, iak);
    let io = w.xor(t, j);
    let t = w.lookup(Table::Inv, jak);
    let jo = w.xor(t, i);
    (io, jo)
}

/// A decryption round without its key: InvMixColumns(InvShiftRows(InvSubBytes)) of the
/// state.
pub fn inv_round<W: Lanes>(w: &mut W, x: W::V) -> W::V {
    let (io, jo) = inversion(w, x, [Table::DInLo, Table::DInHi]);
    let mut times = |f: Table, g: Table| {
        let (a, b) = (w.lookup(f, io), w.lookup(g, jo));
        w.xor(a, b)
    };
    let [t9, tb, td, te] = [times(Table::DF9, Table::DG9), times(Table::DFb, Table::DGb), times(Table::DFd, Table::DGd), times(Table::DFe, Table::DGe)];
    let h = w.permute(t9, Table::Qd);
    let h = w.xor(h, td);
    let h = w.permute(h, Table::Qd);
    let h = w.xor(h, tb);
    let h = w.permute(h, Table::Qd);
    let h = w.xor(h, te);
    w.permute(h, Table::InvSr)
}

/// The last decryption round without its key: InvShiftRows(InvSubBytes) of the state.
pub fn inv_last<W: Lanes>(w: &mut W, x: W::V) -> W::V {
    let (io, jo) = inversion(w, x, [Table::DInLo, Table::DInHi]);
    let (a, b) = (w.lookup(Table::DF1, io), w.lookup(Table::DG1, jo));
    let t = w.xor(a, b);
    w.permute(t, Table::InvSr)
}

/// ShiftRows then MixColumns of the S-box's output `A`: with `a = SR(A)`,
/// `X = 2a ^ R1 a`, `out = X ^ R3 a ^ R1 X`.
pub fn mix<W: Lanes>(w: &mut W, a: W::V) -> W::V {
    let a2 = w.xtime(a);
    let a2 = w.permute(a2, Table::Sr);
    let b = w.permute(a, Table::R1Sr);
    let d = w.permute(a, Table::R3Sr);
    let x = w.xor(a2, b);
    let y = w.xor(x, d);
    let z = w.permute(x, Table::Rot1);
    w.xor(y, z)
}

/// The registers computed on byte arrays, with every table.
pub struct Model;

impl Lanes for Model {
    type V = [u8; 16];
    fn xor(&mut self, a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
        std::array::from_fn(|i| a[i] ^ b[i])
    }
    fn lo(&mut self, a: [u8; 16]) -> [u8; 16] {
        a.map(|x| x & 15)
    }
    fn hi(&mut self, a: [u8; 16]) -> [u8; 16] {
        a.map(|x| x >> 4)
    }
    fn lookup(&mut self, t: Table, idx: [u8; 16]) -> [u8; 16] {
        let tab = table(t);
        idx.map(|i| if i < 16 { tab[i as usize] } else { 0 })
    }
    fn permute(&mut self, a: [u8; 16], t: Table) -> [u8; 16] {
        table(t).map(|i| a[i as usize])
    }
    fn xtime(&mut self, a: [u8; 16]) -> [u8; 16] {
        a.map(|x| amul(2, x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookups_compute_the_sbox() {
        let mut m = Model;
        let s = crate::aes::sbox();
        for x in 0..16u8 {
            let v: [u8; 16] = std::array::from_fn(|i| 16 * x + i as u8);
            let a = sbox(&mut m, v.map(|b| b ^ 0x63));
            let a2 = m.xtime(a);
            for i in 0..16 {
                let b = v[i] as usize;
                assert_eq!(a[i] ^ 0x63, s[b], "S({b:#04x})");
                assert_eq!(a2[i], amul(2, s[b] ^ 0x63), "2S({b:#04x})");
            }
        }
    }

    /// One block the kernel's way, against FIPS-197 AES.
    fn encrypt(ks: &[u8], block: [u8; 16]) -> [u8; 16] {
        let mut m = Model;
        let rounds = i32::from_le_bytes(ks[240..244].try_into().unwrap()) as usize;
        let key = |r: usize| -> [u8; 16] { std::array::from_fn(|i| ks[16 * r + i]) };
        let c = [0x63u8; 16];
        let mut s = m.xor(block, key(0));
        s = m.xor(s, c);
        for r in 1..rounds {
            let a = sbox(&mut m, s);
            let o = mix(&mut m, a);
            s = m.xor(o, key(r));
        }
        let a = sbox(&mut m, s);
        let a = m.permute(a, Table::Sr);
        let a = m.xor(a, c);
        m.xor(a, key(rounds))
    }

    /// OpenSSL's decryption schedule from the encryption one: the round keys reversed,
    /// InvMixColumns on all but the first and last.
    fn dschedule(ks: &[u8]) -> Vec<u8> {
        let rounds = i32::from_le_bytes(ks[240..244].try_into().unwrap()) as usize;
        let mut d = vec![0u8; 244];
        d[240..].copy_from_slice(&ks[240..]);
        for r in 0..=rounds {
            let k: [u8; 16] = ks[16 * (rounds - r)..16 * (rounds - r) + 16].try_into().unwrap();
            let k = if r == 0 || r == rounds {
                k
            } else {
                std::array::from_fn(|i| {
                    let (c, row) = (i / 4, i % 4);
                    let a = |j: usize| k[4 * c + (row + j) % 4];
                    amul(14, a(0)) ^ amul(11, a(1)) ^ amul(13, a(2)) ^ amul(9, a(3))
                })
            };
            d[16 * r..16 * r + 16].copy_from_slice(&k);
        }
        d
    }

    /// One block decrypted the kernel's way.
    fn decrypt(dks: &[u8], block: [u8; 16]) -> [u8; 16] {
        let mut m = Model;
        let rounds = i32::from_le_bytes(dks[240..244].try_into().unwrap()) as usize;
        let key = |r: usize| -> [u8; 16] { std::array::from_fn(|i| dks[16 * r + i]) };
        let mut s = m.xor(block, key(0));
        for r in 1..rounds {
            let o = inv_round(&mut m, s);
            s = m.xor(o, key(r));
        }
        let o = inv_last(&mut m, s);
        m.xor(o, key(rounds))
    }

    /// `check(schedule, block, bits)` on 30 random keys of each size, a random block each.
    fn random_cases(mut seed: u64, check: impl Fn(&[u8], [u8; 16], usize)) {
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        for n in [16usize, 24, 32] {
            for _ in 0..30 {
                let key: Vec<u8> = (0..n).map(|_| next()).collect();
                let b: [u8; 16] = std::array::from_fn(|_| next());
                check(&crate::aes::schedule(&key), b, 8 * n);
            }
        }
    }

    #[test]
    fn vector_permute_decryption_inverts_aes() {
        random_cases(0x0fed_cba9_8765_4321, |ks, b, bits| assert_eq!(decrypt(&dschedule(ks), crate::aes::encrypt_block(ks, b)), b, "AES-{bits}"));
    }

    #[test]
    fn vector_permute_aes_is_aes() {
        random_cases(0x1234_5678_9abc_def1, |ks, b, bits| assert_eq!(encrypt(ks, b), crate::aes::encrypt_block(ks, b), "AES-{bits}"));
    }
}
