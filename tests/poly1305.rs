//! Poly1305 kernels (64-c906, 64-rv64gc, 32-c906, 32-rv64gc; OpenSSL and Linux ABIs)
//! against RFC 8439 and RustCrypto `poly1305`: in kgen-sim with misaligned accesses
//! trapping and the input mapped only as far as the aligned words that hold it (every
//! length 0..=1100 at every offset 0..15, split updates, pad bits, clamp limits, h at and
//! around 2^130 - 5, nonce carries, contexts moved between variants, secrets left behind),
//! through a C harness under QEMU, and on the C906 cost model (cycles per byte, long
//! multiplies, data-independent timing of the 32-bit paths).

use kgen_dsl::Abi;
use kgen_sim::mem::{Misaligned, Perm};
use kgen_sim::{Env, Outcome};
use poly1305::universal_hash::KeyInit;
use poly1305::Poly1305;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;

mod common;

const VARIANTS: [&str; 4] = ["64-c906", "64-rv64gc", "32-c906", "32-rv64gc"];
const ABIS: [Abi; 2] = [Abi::Psabi, Abi::Linux];

/// Where the tests map message bytes (above every buffer `Env::buffer` hands out here).
const MSG_BASE: u64 = 0x4000_0000;
const MSG_REGION: &str = "poly1305-message";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn module(variant: &str, abi: Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel("poly1305").unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{variant} {abi}: {e}"))
}

/// Symbol names of (init, blocks, emit) for a variant and ABI.
fn names(variant: &str, abi: Abi) -> [String; 3] {
    use kgen_kernels::poly1305 as p;
    let es: [&kgen_dsl::entry::Entry; 3] = match abi {
        Abi::Linux => [&p::LINUX_INIT, &p::LINUX_BLOCKS, &p::LINUX_EMIT],
        Abi::Go => [&p::GO_INIT, &p::BLOCKS, &p::EMIT],
        Abi::Psabi => [&p::INIT, &p::BLOCKS, &p::EMIT],
    };
    es.map(|e| e.symbol(variant))
}

/// RustCrypto: the RFC 8439 tag of `msg` (full blocks with the pad bit, a last partial
/// block padded with 0x01 and zeros, without it).
fn rustcrypto(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    Poly1305::new(&poly1305::Key::from(*key)).compute_unpadded(msg).into()
}

/// A written-out Poly1305 on little-endian u64 limbs (schoolbook products, 2^130 ≡ 5
/// folding), with a pad bit per block: for what RustCrypto's API cannot express (pad bit 0
/// on any block). Checked against RustCrypto by `reference_agrees_with_rustcrypto`.
mod reference {
    fn trim(mut a: Vec<u64>) -> Vec<u64> {
        while a.len() > 1 && a.last() == Some(&0) {
            a.pop();
        }
        a
    }
    pub fn add(a: &[u64], b: &[u64]) -> Vec<u64> {
        let n = a.len().max(b.len()) + 1;
        let mut out = vec![0u64; n];
        let mut carry = 0u128;
        for (i, o) in out.iter_mut().enumerate() {
            let s = *a.get(i).unwrap_or(&0) as u128 + *b.get(i).unwrap_or(&0) as u128 + carry;
            *o = s as u64;
            carry = s >> 64;
        }
        trim(out)
    }
    fn sub(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; a.len()];
        let mut borrow = 0i128;
        for i in 0..a.len() {
            let d = a[i] as i128 - *b.get(i).unwrap_or(&0) as i128 - borrow;
            out[i] = d as u64;
            borrow = (d < 0) as i128;
        }
        assert_eq!(borrow, 0, "sub underflow");
        trim(out)
    }
    pub fn mul(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; a.len() + b.len()];
        for i in 0..a.len() {
            let mut carry = 0u128;
            for j in 0..b.len() {
                let t = out[i + j] as u128 + a[i] as u128 * b[j] as u128 + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            out[i + b.len()] = carry as u64;
        }
        trim(out)
    }
    fn ge(a: &[u64], b: &[u64]) -> bool {
        let n = a.len().max(b.len());
        for i in (0..n).rev() {
            let (x, y) = (*a.get(i).unwrap_or(&0), *b.get(i).unwrap_or(&0));
            if x != y {
                return x > y;
            }
        }
        true
    }
    /// (a mod 2^130, a >> 130)
    fn split130(a: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let lo = vec![*a.first().unwrap_or(&0), *a.get(1).unwrap_or(&0), *a.get(2).unwrap_or(&0) & 3];
        let w = |i: usize| *a.get(i).unwrap_or(&0);
        let hi: Vec<u64> = (2..a.len().max(3)).map(|i| (w(i) >> 2) | (w(i + 1) << 62)).collect();
        (trim(lo), trim(hi))
    }
    pub fn p() -> Vec<u64> {
        vec![u64::MAX - 4, u64::MAX, 3]
    }
    /// a mod 2^130 - 5.
    pub fn reduce(a: &[u64]) -> Vec<u64> {
        let mut x = a.to_vec();
        loop {
            let (lo, hi) = split130(&x);
            if hi == [0] {
                break;
            }
            x = add(&lo, &mul(&hi, &[5]));
        }
        if ge(&x, &p()) {
            x = sub(&x, &p());
        }
        x
    }
    pub fn limbs(v: u128) -> Vec<u64> {
        trim(vec![v as u64, (v >> 64) as u64])
    }
    pub fn clamp(key: &[u8]) -> u128 {
        u128::from_le_bytes(key[..16].try_into().unwrap()) & 0x0fff_fffc_0fff_fffc_0fff_fffc_0fff_ffff
    }
    /// ((h mod p) + s) mod 2^128, little-endian.
    pub fn finish(h: &[u64], s: u128) -> [u8; 16] {
        let t = add(&reduce(h), &limbs(s));
        let v = *t.first().unwrap_or(&0) as u128 | (*t.get(1).unwrap_or(&0) as u128) << 64;
        v.to_le_bytes()
    }
    /// The tag of 16-byte blocks with their pad bits.
    pub fn tag(key: &[u8; 32], blocks: &[([u8; 16], bool)]) -> [u8; 16] {
        let r = limbs(clamp(key));
        let mut h = vec![0u64];
        for (b, pad) in blocks {
            let mut m = limbs(u128::from_le_bytes(*b));
            if *pad {
                m = add(&m, &[0, 0, 1]);
            }
            h = reduce(&mul(&add(&h, &m), &r));
        }
        finish(&h, u128::from_le_bytes(key[16..].try_into().unwrap()))
    }
    /// The RFC 8439 blocks of a message: full blocks with the pad bit, a padded last one
    /// without.
    pub fn rfc_blocks(msg: &[u8]) -> Vec<([u8; 16], bool)> {
        let mut v: Vec<([u8; 16], bool)> = msg.chunks_exact(16).map(|c| (c.try_into().unwrap(), true)).collect();
        let rem = msg.len() % 16;
        if rem != 0 {
            let mut b = [0u8; 16];
            b[..rem].copy_from_slice(&msg[msg.len() - rem..]);
            b[rem] = 1;
            v.push((b, false));
        }
        v
    }
}

/// One variant and ABI in kgen-sim, with its buffers: the context (192 bytes, 64-byte
/// aligned), the key and the tag at odd addresses, the nonce 4-byte but not 8-byte aligned,
/// the padded last block at an odd address. Misaligned accesses trap.
struct Sim {
    e: Env,
    variant: &'static str,
    abi: Abi,
    f: [u64; 3],
    ctx: u64,
    key: u64,
    nonce: u64,
    mac: u64,
    last: u64,
}

impl Sim {
    fn new(variant: &'static str, abi: Abi) -> Sim {
        Sim::from_module(variant, abi, &module(variant, abi), false)
    }

    fn from_module(variant: &'static str, abi: Abi, m: &kgen_dsl::Module, cost: bool) -> Sim {
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap();
        if cost {
            e = e.with_cost_model();
        }
        e.m.mem.misaligned = Misaligned::Trap;
        let f = names(variant, abi).map(|n| e.sym(&n));
        let ctx = e.buffer(&[0u8; 192], 0, true);
        let key = e.buffer(&[0u8; 16], 3, true);
        let nonce = e.buffer(&[0u8; 16], 4, true);
        let mac = e.buffer(&[0u8; 16], 7, true);
        let last = e.buffer(&[0u8; 16], 9, true);
        Sim { e, variant, abi, f, ctx, key, nonce, mac, last }
    }

    fn what(&self) -> String {
        format!("{} {}", self.variant, self.abi)
    }

    fn call(&mut self, k: usize, args: &[u64]) -> Outcome {
        let w = self.what();
        self.e.call(self.f[k], args).unwrap_or_else(|x| panic!("{w}: {x}"))
    }

    /// init with key[0..16] (the context is filled with junk first).
    fn init(&mut self, key: &[u8]) -> Outcome {
        self.e.m.mem.write_bytes(self.ctx, &[0x5a; 192]);
        self.e.m.mem.write_bytes(self.key, &key[..16]);
        let (ctx, kp) = (self.ctx, self.key);
        let o = if self.abi == Abi::Linux { self.call(0, &[ctx, kp]) } else { self.call(0, &[ctx, kp, 0]) };
        if self.abi != Abi::Linux {
            assert_eq!(o.a0, 0, "{}: poly1305_init returns 0", self.what());
        }
        o
    }

    /// Maps `data` at MSG_BASE + off in a read-only region that ends with the aligned word
    /// holding its last byte and starts with the aligned word holding its first (junk in
    /// the rest of those words); returns its address. An empty `data` maps nothing.
    fn place(&mut self, data: &[u8], off: usize) -> u64 {
        self.e.m.mem.regions.retain(|r| r.name != MSG_REGION);
        let start = MSG_BASE + off as u64;
        if !data.is_empty() {
            let lo = start & !7;
            let hi = (start + data.len() as u64 + 7) & !7;
            self.e.m.mem.map(MSG_REGION, lo, (hi - lo) as usize, Perm::R);
            self.e.m.mem.write_bytes(lo, &common::gen_bytes(start ^ 0x9e37, (hi - lo) as usize));
            self.e.m.mem.write_bytes(start, data);
        }
        start
    }

    fn blocks_at(&mut self, inp: u64, len: u64, padbit: u64) -> Outcome {
        let ctx = self.ctx;
        self.call(1, &[ctx, inp, len, padbit])
    }

    /// blocks over `data` placed at offset `off`, passing `len` (>= data.len() rounded down).
    fn blocks(&mut self, data: &[u8], off: usize, len: u64, padbit: u64) -> Outcome {
        let inp = self.place(data, off);
        self.blocks_at(inp, len, padbit)
    }

    /// blocks over the RFC padding of a 1..15-byte tail, pad bit 0.
    fn last_block(&mut self, tail: &[u8]) {
        let mut b = [0u8; 16];
        b[..tail.len()].copy_from_slice(tail);
        b[tail.len()] = 1;
        self.e.m.mem.write_bytes(self.last, &b);
        let last = self.last;
        self.blocks_at(last, 16, 0);
    }

    fn emit(&mut self, s: &[u8]) -> [u8; 16] {
        self.e.m.mem.write_bytes(self.nonce, &s[..16]);
        self.e.m.mem.write_bytes(self.mac, &[0xee; 16]);
        let (ctx, mac, nonce) = (self.ctx, self.mac, self.nonce);
        self.call(2, &[ctx, mac, nonce]);
        self.e.read(mac, 16).try_into().unwrap()
    }

    /// The tag of `msg` at input offset `off`, the RFC way: full blocks with the pad bit,
    /// the tail padded. `len_arg` is the length passed to blocks (it rounds it down).
    fn tag(&mut self, key: &[u8; 32], msg: &[u8], off: usize, len_arg: u64) -> [u8; 16] {
        self.init(key);
        let full = msg.len() / 16 * 16;
        self.blocks(&msg[..full], off, len_arg, 1);
        if full < msg.len() {
            self.last_block(&msg[full..]);
        }
        self.emit(&key[16..])
    }

    fn ctx_bytes(&mut self) -> Vec<u8> {
        self.e.read(self.ctx, 192)
    }
}

#[test]
fn reference_agrees_with_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for n in 0..400 {
        let key: [u8; 32] = rng.random();
        let len = n % 97 + if n % 5 == 0 { 600 } else { 0 };
        let msg: Vec<u8> = (0..len).map(|_| if n % 3 == 0 { 0xff } else { rng.random() }).collect();
        assert_eq!(reference::tag(&key, &reference::rfc_blocks(&msg)), rustcrypto(&key, &msg), "len {len}");
    }
}

#[test]
fn rfc8439_vector() {
    // RFC 8439, 2.5.2
    let key: [u8; 32] = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b").try_into().unwrap();
    let msg = b"Cryptographic Forum Research Group";
    let want = "a8061dc1305136c6c22b8baf0c0127a9";
    assert_eq!(tohex(&rustcrypto(&key, msg)), want);
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            if abi == Abi::Psabi {
                for (plain, f) in ["poly1305_init", "poly1305_blocks", "poly1305_emit"].into_iter().zip(s.f) {
                    assert_eq!(s.e.sym(plain), f, "{v}: {plain} is an alias of the variant's function");
                }
            }
            for off in [0, 1, 4, 7] {
                assert_eq!(tohex(&s.tag(&key, msg, off, msg.len() as u64)), want, "{v} {abi} offset {off}");
            }
            // The clamped r of 2.5.2 and h = 0 after init, at the documented offsets.
            s.init(&key);
            let c = s.ctx_bytes();
            assert_eq!(tohex(&c[0..24]), "00".repeat(24), "{v} {abi}: h = 0");
            let r = u128::from_str_radix("806d5400e52447c036d555408bed685", 16).unwrap();
            assert_eq!(tohex(&c[24..40]), tohex(&r.to_le_bytes()), "{v} {abi}: r (RFC 8439 2.5.2)");
        }
    }
}

/// RFC 8439 appendix A.3 vectors 5-9: r = 1 or 2 and messages that leave h at or past
/// 2^130 - 5 (each tag checked against RustCrypto first).
#[test]
fn rfc8439_edge_vectors() {
    let ff = "ff".repeat(16);
    let r2 = format!("02{}", "00".repeat(15));
    let r1 = format!("01{}", "00".repeat(15));
    let zero = "00".repeat(16);
    let cases = [
        (format!("{r2}{zero}"), ff.clone(), format!("03{}", "00".repeat(15))),
        (format!("{r2}{ff}"), format!("02{}", "00".repeat(15)), format!("03{}", "00".repeat(15))),
        (format!("{r1}{zero}"), format!("{ff}f0{}11{}", "ff".repeat(15), "00".repeat(15)), format!("05{}", "00".repeat(15))),
        (format!("{r1}{zero}"), format!("{ff}fb{}{}", "fe".repeat(15), "01".repeat(16)), "00".repeat(16)),
        (format!("{r2}{zero}"), format!("fd{}", "ff".repeat(15)), format!("fa{}", "ff".repeat(15))),
    ];
    for (key, msg, tag) in &cases {
        let key: [u8; 32] = hex(key).try_into().unwrap();
        assert_eq!(tohex(&rustcrypto(&key, &hex(msg))), *tag, "RustCrypto on A.3 {msg}");
    }
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            for (key, msg, tag) in &cases {
                let key: [u8; 32] = hex(key).try_into().unwrap();
                let m = hex(msg);
                assert_eq!(tohex(&s.tag(&key, &m, 3, m.len() as u64)), *tag, "{v} {abi} A.3 {msg}");
            }
        }
    }
}

/// Every length 0..=1100 at every input offset 0..15 (17,600 tags per variant) against
/// RustCrypto, with a fresh random key each; blocks is passed the unrounded length.
#[test]
fn every_length_and_offset() {
    for (k, v) in VARIANTS.into_iter().enumerate() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(100 + k as u64);
        let mut s = Sim::new(v, Abi::Psabi);
        let mut n = 0;
        for len in 0..=1100usize {
            let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            for off in 0..16 {
                let key: [u8; 32] = rng.random();
                let got = s.tag(&key, &msg, off, len as u64);
                assert_eq!(got, rustcrypto(&key, &msg), "{v}: len {len} offset {off}");
                n += 1;
            }
        }
        println!("{v}: {n} tags agree with RustCrypto (lengths 0..=1100 x offsets 0..15)");
    }
}

/// The Linux entry points on random messages, with junk in the upper half of the u32
/// length register.
#[test]
fn linux_abi_random() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    for v in VARIANTS {
        let mut s = Sim::new(v, Abi::Linux);
        for n in 0..300 {
            let len = rng.random_range(0..700usize);
            let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let key: [u8; 32] = rng.random();
            let junk = if n % 2 == 0 { 0 } else { 0xdead_beef_0000_0000u64 };
            let off = rng.random_range(0..16);
            assert_eq!(s.tag(&key, &msg, off, len as u64 | junk), rustcrypto(&key, &msg), "{v} linux len {len} offset {off}");
        }
    }
}

/// blocks in several calls (zero-length pieces included, each piece at its own alignment),
/// pad bit 0 and 1 on any block, and non-zero pad bits other than 1.
#[test]
fn split_updates_and_pad_bits() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            for _ in 0..150 {
                let key: [u8; 32] = rng.random();
                let nblocks = rng.random_range(0..40usize);
                let data: Vec<u8> = (0..16 * nblocks).map(|_| rng.random()).collect();
                // Pieces of whole blocks, each with one pad bit.
                let mut blocks = Vec::new();
                s.init(&key);
                let mut at = 0;
                while at < nblocks {
                    let k = rng.random_range(0..=(nblocks - at).min(9));
                    let pad = rng.random_range(0..3u32);
                    let padbit: u64 = match pad {
                        0 => 0,
                        1 => 1,
                        _ => [2u64, 0x8000_0000, 0xffff_ffff][rng.random_range(0..3)],
                    };
                    let piece = &data[16 * at..16 * (at + k)];
                    s.blocks(piece, rng.random_range(0..16), piece.len() as u64, padbit);
                    for c in piece.chunks_exact(16) {
                        blocks.push((c.try_into().unwrap(), pad != 0));
                    }
                    at += k;
                }
                let got = s.emit(&key[16..]);
                assert_eq!(got, reference::tag(&key, &blocks), "{v} {abi}: {nblocks} blocks in pieces");
                // The same message with pad bit 1 throughout, split differently, against RustCrypto.
                let tail: Vec<u8> = (0..rng.random_range(0..16)).map(|_| rng.random()).collect();
                let mut msg = data.clone();
                msg.extend_from_slice(&tail);
                s.init(&key);
                let cut = 16 * rng.random_range(0..=nblocks);
                s.blocks(&data[..cut], rng.random_range(0..16), cut as u64, 1);
                s.blocks(&data[cut..], rng.random_range(0..16), (data.len() - cut) as u64, 1);
                if !tail.is_empty() {
                    s.last_block(&tail);
                }
                assert_eq!(s.emit(&key[16..]), rustcrypto(&key, &msg), "{v} {abi}: split at {cut}");
            }
        }
    }
}

/// r at the clamp limits (key bytes all ones and all zeros before clamping), s all ones
/// (the nonce addition carries out of 2^128), messages of all ones (the largest h).
#[test]
fn clamp_limits_and_nonce_overflow() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(14);
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            for rbyte in [0xffu8, 0x00] {
                for sbyte in [0xffu8, 0x00, 0x80] {
                    let mut key = [rbyte; 32];
                    key[16..].fill(sbyte);
                    for len in [0usize, 1, 15, 16, 17, 32, 48, 64, 160, 1024, 1039] {
                        for fill in [0xffu8, 0x00, 0x5a] {
                            let msg = vec![fill; len];
                            let off = rng.random_range(0..16);
                            assert_eq!(s.tag(&key, &msg, off, len as u64), rustcrypto(&key, &msg), "{v} {abi}: r bytes {rbyte:#x}, s bytes {sbyte:#x}, {len} bytes of {fill:#x}");
                        }
                    }
                }
            }
            for _ in 0..100 {
                let mut key: [u8; 32] = rng.random();
                key[16..].fill(0xff);
                let msg: Vec<u8> = (0..rng.random_range(0..300)).map(|_| rng.random()).collect();
                assert_eq!(s.tag(&key, &msg, 0, msg.len() as u64), rustcrypto(&key, &msg), "{v} {abi}: s = 2^128 - 1");
            }
        }
    }
}

/// With r = 1 the accumulator is the plain sum of the blocks: blocks chosen so it ends at
/// T = k·2^128 + rem for T around p = 2^130 - 5, 2^130 and 2p (k pad-bit-only blocks, then
/// rem with pad bit 0), and runs of all-ones blocks with the pad bit; s at 0, 1 and all ones.
#[test]
fn h_around_p() {
    let p = reference::p();
    let mut targets: Vec<Vec<u64>> = Vec::new();
    for base in [p.clone(), vec![0, 0, 4], reference::add(&p, &p), vec![0, 0, 3], vec![0]] {
        for d in 0..8u64 {
            targets.push(reference::add(&base, &[d]));
            if base != [0] && d > 0 {
                // base - d
                let mut t = base.clone();
                let mut borrow = d;
                for l in t.iter_mut() {
                    let (x, b) = l.overflowing_sub(borrow);
                    *l = x;
                    borrow = b as u64;
                }
                targets.push(t);
            }
        }
    }
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            for sv in [0u128, 1, u128::MAX] {
                let mut key = [0u8; 32];
                key[0] = 1;
                key[16..].copy_from_slice(&sv.to_le_bytes());
                for t in &targets {
                    let k = (t.get(2).copied().unwrap_or(0)) as usize;
                    let rem = t.first().copied().unwrap_or(0) as u128 | (t.get(1).copied().unwrap_or(0) as u128) << 64;
                    s.init(&key);
                    s.blocks(&vec![0u8; 16 * k], 5, 16 * k as u64, 1);
                    s.blocks(&rem.to_le_bytes(), 2, 16, 0);
                    let want = reference::finish(t, sv);
                    let mut blocks = vec![([0u8; 16], true); k];
                    blocks.push((rem.to_le_bytes(), false));
                    assert_eq!(want, reference::tag(&key, &blocks));
                    assert_eq!(s.emit(&key[16..]), want, "{v} {abi}: h = {t:x?}, s = {sv:#x}");
                }
                for n in 1..12 {
                    let msg = vec![0xffu8; 16 * n];
                    assert_eq!(s.tag(&key, &msg, 0, msg.len() as u64), rustcrypto(&key, &msg), "{v} {abi}: {n} all-ones blocks, r = 1");
                }
            }
        }
    }
}

/// emit on contexts written directly: h2 far beyond what blocks leaves (emit folds
/// h >> 130 first, so any h2 < 2^62 works), h0/h1 at their extremes, nonces that carry.
#[test]
fn emit_on_crafted_contexts() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
    let h2s = [0u64, 1, 3, 4, 5, 7, 8, 1 << 20, u32::MAX as u64, (1 << 62) - 1];
    let h01s = [0u64, 1, 4, u64::MAX - 5, u64::MAX - 4, u64::MAX];
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            for &h2 in &h2s {
                for _ in 0..40 {
                    let h0 = if rng.random() { h01s[rng.random_range(0..h01s.len())] } else { rng.random() };
                    let h1 = if rng.random() { h01s[rng.random_range(0..h01s.len())] } else { rng.random() };
                    let sv: u128 = [0, 1, u128::MAX, rng.random()][rng.random_range(0..4)];
                    let mut ctx = [0u8; 24];
                    for (k, w) in [h0, h1, h2].into_iter().enumerate() {
                        ctx[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
                    }
                    let c = s.ctx;
                    s.e.m.mem.write_bytes(c, &ctx);
                    assert_eq!(s.emit(&sv.to_le_bytes()), reference::finish(&[h0, h1, h2], sv), "{v} {abi}: h = {h2:#x}:{h1:#x}:{h0:#x}, s = {sv:#x}");
                }
            }
        }
    }
}

/// Every variant's context has the same layout: a message hashed partly by one variant and
/// finished by another (init, blocks, emit in three different variants) gives the RFC tag.
#[test]
fn context_moves_between_variants() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
    let mut sims: Vec<Sim> = VARIANTS.into_iter().map(|v| Sim::new(v, Abi::Psabi)).collect();
    for n in 0..200 {
        let key: [u8; 32] = rng.random();
        let msg: Vec<u8> = (0..16 * rng.random_range(0..30)).map(|_| rng.random()).collect();
        let (a, b, c) = (n % 4, (n / 4) % 4, (n / 16) % 4);
        sims[a].init(&key);
        let ctx = sims[a].ctx_bytes();
        let cut = 16 * rng.random_range(0..=msg.len() / 16);
        let cb = sims[b].ctx;
        sims[b].e.m.mem.write_bytes(cb, &ctx);
        sims[b].blocks(&msg[..cut], 1, cut as u64, 1);
        let ctx = sims[b].ctx_bytes();
        let cc = sims[c].ctx;
        sims[c].e.m.mem.write_bytes(cc, &ctx);
        sims[c].blocks(&msg[cut..], 6, (msg.len() - cut) as u64, 1);
        let got = sims[c].emit(&key[16..]);
        assert_eq!(got, rustcrypto(&key, &msg), "init {}, blocks {}, then {}", VARIANTS[a], VARIANTS[b], VARIANTS[c]);
    }
}

/// What the functions write: init only bytes 0..56 (h, r, s), blocks only h (0..24), emit
/// only the 16 tag bytes; init with a NULL key only zeroes h; blocks with len < 16 changes
/// nothing. Stored h keeps h0..h3 < 2^32 and h4 <= 4.
#[test]
fn context_writes_and_layout() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            let key: [u8; 32] = rng.random();
            s.init(&key);
            let c = s.ctx_bytes();
            assert!(c[56..].iter().all(|&b| b == 0x5a), "{v} {abi}: init wrote past byte 56");
            let r = reference::clamp(&key);
            let w = |i: usize| (r >> (32 * i)) as u32;
            let u32at = |o: usize| u32::from_le_bytes(c[o..o + 4].try_into().unwrap());
            for i in 0..4 {
                assert_eq!(u32at(24 + 4 * i), w(i), "{v} {abi}: r{i}");
            }
            for (o, i) in [(48, 1), (40, 2), (44, 3)] {
                assert_eq!(u32at(o), w(i) + (w(i) >> 2), "{v} {abi}: s{i} at {o}");
            }
            assert_eq!(u32at(52), 0);
            // NULL key: h = 0, r untouched.
            let (ctx, ab) = (s.ctx, s.abi);
            s.e.m.mem.write_bytes(ctx, &[0x77; 192]);
            let args: Vec<u64> = if ab == Abi::Linux { vec![ctx, 0] } else { vec![ctx, 0, 0] };
            s.call(0, &args);
            let c = s.ctx_bytes();
            assert!(c[..24].iter().all(|&b| b == 0) && c[24..].iter().all(|&b| b == 0x77), "{v} {abi}: init(NULL)");
            // blocks writes h only; the stored limbs are small.
            s.init(&key);
            let before = s.ctx_bytes();
            let msg = vec![0xffu8; 16 * 33];
            s.blocks(&msg, 3, msg.len() as u64 + 15, 1);
            let after = s.ctx_bytes();
            assert_eq!(before[24..], after[24..], "{v} {abi}: blocks wrote outside h");
            let h4 = u64::from_le_bytes(after[16..24].try_into().unwrap());
            assert!(h4 <= 4, "{v} {abi}: h4 = {h4}");
            let before = after.clone();
            for len in [0u64, 1, 15] {
                s.blocks(&msg[..len as usize], 1, len, 1);
                assert_eq!(s.ctx_bytes(), before, "{v} {abi}: blocks with len {len}");
            }
            // emit: only the tag, and the context is unchanged.
            s.e.m.mem.record_writes = true;
            s.e.m.mem.written.clear();
            s.emit(&key[16..]);
            s.e.m.mem.record_writes = false;
            let mut bytes: Vec<u64> = s.e.m.mem.written.iter().flat_map(|&(a, n)| a..a + n as u64).collect();
            bytes.sort();
            assert_eq!(bytes, (s.mac..s.mac + 16).collect::<Vec<_>>(), "{v} {abi}: emit writes only the tag");
            assert_eq!(s.ctx_bytes(), before);
        }
    }
}

/// After each call no register and nothing below the stack pointer holds key material
/// (clamped r, s) or message bytes.
#[test]
fn no_secrets_left() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for v in VARIANTS {
        for abi in ABIS {
            let mut s = Sim::new(v, abi);
            let key: [u8; 32] = rng.random();
            let msg: Vec<u8> = (0..16 * 20).map(|_| rng.random()).collect();
            let r = reference::clamp(&key).to_le_bytes();
            s.init(&key);
            assert_eq!(s.e.scan_for_secret(&r, 6), Vec::<String>::new(), "{v} {abi} init: r");
            assert_eq!(s.e.scan_for_secret(&key[..16], 6), Vec::<String>::new(), "{v} {abi} init: key");
            for off in [0, 4, 5] {
                s.blocks(&msg, off, msg.len() as u64, 1);
                assert_eq!(s.e.scan_for_secret(&r, 6), Vec::<String>::new(), "{v} {abi} blocks: r");
                assert_eq!(s.e.scan_for_secret(&msg, 6), Vec::<String>::new(), "{v} {abi} blocks offset {off}: message");
            }
            s.emit(&key[16..]);
            assert_eq!(s.e.scan_for_secret(&key[16..], 6), Vec::<String>::new(), "{v} {abi} emit: s");
        }
    }
}

// ---- QEMU ---------------------------------------------------------------------------------

const HARNESS: &str = r#"
#if LINUX
#define DO_INIT(c, k) (INIT(c, k), 0)
#else
#define DO_INIT(c, k) poly1305_init(c, k, 0)
#define BLOCKS poly1305_blocks
#define EMIT poly1305_emit
#endif
int main(void) {
  char kh[80];
  unsigned long len, off, cut, seed;
  while (scanf("%79s %lu %lu %lu %lu", kh, &len, &off, &cut, &seed) == 5) {
    double ctx[24];
    unsigned char keybuf[40], *key = keybuf + 3, mac[20];
    unsigned int nonce[4];
    unhex(kh, key);
    memcpy(nonce, key + 16, 16);
    unsigned char *buf = malloc(len + 32), *msg = buf + off;
    gen_bytes(seed, msg, len);
    size_t full = len & ~(size_t)15;
    if (cut > full) cut = full;
    int rc = DO_INIT(ctx, key);
    BLOCKS(ctx, msg, cut, 1);
    BLOCKS(ctx, msg + cut, len - cut, 1);   /* rounded down by the kernel */
    if (len % 16) {
      unsigned char last[16] = {0};
      memcpy(last, msg + full, len % 16);
      last[len % 16] = 1;
      BLOCKS(ctx, last, 16, 0);
    }
    EMIT(ctx, mac + 1, nonce);
    for (int i = 0; i < 16; i++) printf("%02x", mac[1 + i]);
    printf(" %d\n", rc);
    free(buf);
  }
  return 0;
}
"#;

#[test]
fn emitted_assembly_under_qemu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let mut input = String::new();
    let mut want = Vec::new();
    let mut push = |key: [u8; 32], len: usize, rng: &mut rand_chacha::ChaCha8Rng| {
        let (off, cut, seed): (usize, usize, u64) = (rng.random_range(0..16), 16 * rng.random_range(0..=len / 16 + 1), rng.random());
        let _ = writeln!(input, "{} {len} {off} {cut} {seed}", tohex(&key));
        want.push(format!("{} 0", tohex(&rustcrypto(&key, &common::gen_bytes(seed, len)))));
    };
    for len in 0..=260 {
        let key: [u8; 32] = rng.random();
        push(key, len, &mut rng);
    }
    for len in [1000usize, 1024, 4096, 16384, 65536 + 15] {
        for key in [rng.random(), [0xff; 32], [0; 32]] {
            push(key, len, &mut rng);
        }
    }
    let dir = kgen_harness::oracle::scratch("poly1305_qemu");
    let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
    for v in VARIANTS {
        for abi in ABIS {
            let m = module(v, abi);
            let (q, cpu, bad) = common::emulator(&m);
            let (asm, defs) = match abi {
                Abi::Linux => {
                    let [i, b, e] = names(v, abi);
                    (kgen_emit::linux_s(&m, &o).unwrap(), format!("#define LINUX 1\n#define INIT {i}\n#define BLOCKS {b}\n#define EMIT {e}\n"))
                }
                _ => (kgen_emit::openssl_s(&m, &o).unwrap(), "#define LINUX 0\n".to_string()),
            };
            let src = format!("{}{}{defs}{HARNESS}", common::C_HELPERS, common::header(&dir, &m));
            let name = format!("poly1305-{}-{v}", abi.name());
            let Some(bin) = common::build(&dir, &name, &src, &[(&format!("{name}.S"), asm)]) else { return };
            let Some(q) = q else { return };
            let out = common::run(&q, &cpu, &bin, &input);
            assert!(out.status.success(), "{v} {abi} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
            let got: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
            assert_eq!(got.len(), want.len(), "{v} {abi}");
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{v} {abi} under qemu, case {k}: {}", input.lines().nth(k).unwrap());
            }
            println!("{v} {abi}: {} tags agree under qemu -cpu {cpu}", got.len());
            if let Some(bad) = bad {
                let out = common::run(&q, &bad, &bin, &input);
                assert!(!out.status.success(), "{v} {abi} must fault under -cpu {bad}");
                println!("{v} {abi}: -cpu {bad} refuses it ({})", out.status);
            }
        }
    }
}

// ---- cost model -----------------------------------------------------------------------------

/// Modeled C906 cycles of one blocks call over `len` bytes (second of two calls).
fn blocks_cost(s: &mut Sim, len: usize, fill: impl Fn(usize) -> u8) -> Outcome {
    let msg: Vec<u8> = (0..len).map(fill).collect();
    let inp = s.place(&msg, 0);
    s.blocks_at(inp, len as u64, 1);
    s.blocks_at(inp, len as u64, 1)
}

#[test]
fn cost_report() {
    let sizes = [16usize, 64, 256, 1024, 16384];
    let mut table = String::new();
    let _ = writeln!(table, "{:<10} {:>6} {:>9} {:>9} {:>7} {:>10} {:>9}", "variant", "bytes", "instr", "cycles", "c/B", "long muls", "muls");
    for v in VARIANTS {
        let m = module(v, Abi::Psabi);
        let mut s = Sim::from_module(v, Abi::Psabi, &m, true);
        s.init(&[0x3cu8; 32]);
        let mut by = Vec::new();
        for &len in &sizes {
            let r = blocks_cost(&mut s, len, |i| (i * 131 + 7) as u8);
            let cpb = r.cycles as f64 / len as f64;
            let _ = writeln!(table, "{v:<10} {len:>6} {:>9} {:>9} {cpb:>7.2} {:>10} {:>9}", r.instructions, r.cycles, r.long_muls, r.muls);
            by.push((len, r.clone(), cpb));
            if v.starts_with("32") {
                assert_eq!(r.long_muls, 0, "{v} {len}: a multiply took the long path");
            } else {
                assert!(r.long_muls > 0, "{v}: the 64-bit path's multiplies take the long path (control)");
            }
        }
        let (i1k, i16k) = (by[3].1.instructions, by[4].1.instructions);
        let per_block = (i16k - i1k) as f64 / ((16384 - 1024) / 16) as f64;
        let c_block = (by[4].1.cycles - by[3].1.cycles) as f64 / ((16384 - 1024) / 16) as f64;
        let _ = writeln!(table, "{v:<10} per 16-byte block in the loop: {per_block:.1} instructions, {c_block:.1} cycles");
        if v == "32-c906" {
            for (len, _, cpb) in &by[3..] {
                assert!(*cpb <= 3.5, "32-c906 at {len} bytes: {cpb:.2} cycles/byte, target 3.5");
            }
        }
        // The unaligned-input path, for the record.
        let msg = vec![0x11u8; 16384];
        let inp = s.place(&msg, 3);
        s.blocks_at(inp, 16384, 1);
        let r = s.blocks_at(inp, 16384, 1);
        let _ = writeln!(table, "{v:<10} 16384 bytes at offset 3: {:.2} c/B", r.cycles as f64 / 16384.0);
    }
    println!("{table}");
}

/// The 32-bit paths' modeled time does not depend on the key or the message (same length
/// and alignment); the 64-bit c906 path's does (control: the model sees operand sizes).
#[test]
fn timing_independent_of_data_on_32_bit_paths() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    for v in VARIANTS {
        let m = module(v, Abi::Psabi);
        let mut s = Sim::from_module(v, Abi::Psabi, &m, true);
        let mut cycles = std::collections::BTreeSet::new();
        for k in 0..24 {
            let key: [u8; 32] = match k {
                0 => [0; 32],
                1 => [0xff; 32],
                2 => {
                    let mut x = [0u8; 32];
                    x[0] = 1;
                    x
                }
                _ => rng.random(),
            };
            s.init(&key);
            let salt: u8 = rng.random();
            let r = blocks_cost(&mut s, 1024, |i| match k % 3 {
                0 => 0,
                1 => 0xff,
                _ => (i as u8).wrapping_mul(salt) ^ salt,
            });
            let e = s.emit(&key[16..]);
            let _ = e;
            cycles.insert(r.cycles);
        }
        println!("{v}: blocks(1024) modeled cycles over 24 keys/messages: {cycles:?}");
        if v.starts_with("32") {
            assert_eq!(cycles.len(), 1, "{v}: time depends on the data");
        } else if v == "64-c906" {
            assert!(cycles.len() > 1, "{v}: control: the 64-bit multiplies' time should vary with the data");
        }
    }
}

/// The OpenSSL init fills `func` with the variant's blocks and emit and returns 1, as
/// CRYPTOGAMS does; without `func` or without a key it returns 0 and leaves `func` alone.
#[test]
fn init_fills_the_function_table() {
    for v in VARIANTS {
        let m = module(v, Abi::Psabi);
        let mut e = kgen_sim::Env::new(&m.object().unwrap(), &m.target).unwrap();
        let [init, blocks, emit] = names(v, Abi::Psabi);
        let ctx = e.buffer(&[0u8; 192], 0, true);
        let key = e.buffer(&[0x11u8; 32], 0, false);
        let func = e.buffer(&[0xeeu8; 16], 0, true);
        let r = e.call(e.sym(&init), &[ctx, key, func]).unwrap();
        assert_eq!(r.a0, 1, "{v}");
        let table = e.read(func, 16);
        assert_eq!(u64::from_le_bytes(table[..8].try_into().unwrap()), e.sym(&blocks), "{v}: func[0]");
        assert_eq!(u64::from_le_bytes(table[8..].try_into().unwrap()), e.sym(&emit), "{v}: func[1]");
        let untouched = e.buffer(&[0xeeu8; 16], 0, true);
        assert_eq!(e.call(e.sym(&init), &[ctx, key, 0]).unwrap().a0, 0, "{v}: no table");
        assert_eq!(e.call(e.sym(&init), &[ctx, 0, untouched]).unwrap().a0, 0, "{v}: no key");
        assert_eq!(e.read(untouched, 16), vec![0xee; 16], "{v}: func left alone without a key");
    }
}
