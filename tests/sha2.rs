//! SHA-256 and SHA-512 kernels (c906, rv64gc, rv64gc-zbb; OpenSSL, Linux and Go ABIs) against
//! FIPS 180-4 and RustCrypto `sha2`: in kgen-sim with misaligned accesses trapping and the
//! input mapped only as far as the aligned words that hold it (FIPS 180-4 example vectors,
//! every message length 0..=1100 at every input offset 0..7 through padding written here,
//! random chaining values and block counts against `compress256`/`compress512`, what the
//! function writes, secrets left behind, data-independent modeled time), and through a C
//! harness that pads and calls the emitted assembly under QEMU, with a CPU lacking the
//! extensions as a negative control. The Go builds run here against random states and
//! for their modeled cost; as Go packages against Go's own code in tests/emit_go.rs.

use kgen_dsl::entry::Entry;
use kgen_dsl::Abi;
use kgen_kernels::sha2 as k;
use kgen_sim::mem::{Misaligned, Perm};
use kgen_sim::Env;
use rand::{Rng, SeedableRng};
use sha2::Digest;
use std::fmt::Write as _;

mod common;

const VARIANTS: [&str; 3] = ["c906", "rv64gc", "rv64gc-zbb"];
const ABIS: [Abi; 2] = [Abi::Psabi, Abi::Linux];
/// The Go form too (`len` in bytes; the schedule in its Go frame, at 8(sp).. here).
const ALL_ABIS: [Abi; 3] = [Abi::Psabi, Abi::Linux, Abi::Go];

/// Where the tests map message bytes (above every buffer `Env::buffer` hands out).
const MSG_BASE: u64 = 0x4000_0000;
const MSG_REGION: &str = "sha2-message";

/// One of the two algorithms, as the tests see it.
#[derive(Clone, Copy)]
struct Alg {
    kernel: &'static str,
    /// Bytes per block and per word.
    block: usize,
    ws: usize,
    /// FIPS 180-4 5.3.3 / 5.3.5.
    iv: [u64; 8],
    /// Bytes of OpenSSL's context (h[8] first).
    ctx_bytes: usize,
}

const S256: Alg = Alg {
    kernel: "sha256",
    block: 64,
    ws: 4,
    iv: [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19],
    ctx_bytes: 112,
};
const S512: Alg = Alg {
    kernel: "sha512",
    block: 128,
    ws: 8,
    iv: [
        0x6a09e667f3bcc908,
        0xbb67ae8584caa73b,
        0x3c6ef372fe94f82b,
        0xa54ff53a5f1d36f1,
        0x510e527fade682d1,
        0x9b05688c2b3e6c1f,
        0x1f83d9abfb41bd6b,
        0x5be0cd19137e2179,
    ],
    ctx_bytes: 216,
};
const ALGS: [Alg; 2] = [S256, S512];

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Alg {
    fn entry(&self, abi: Abi) -> &'static Entry {
        match (self.ws, abi) {
            (4, Abi::Psabi) => &k::SHA256_BLOCKS,
            (4, Abi::Linux) => &k::SHA256_LINUX,
            (4, Abi::Go) => &k::SHA256_GO,
            (_, Abi::Psabi) => &k::SHA512_BLOCKS,
            (_, Abi::Linux) => &k::SHA512_LINUX,
            (_, Abi::Go) => &k::SHA512_GO,
        }
    }

    fn module(&self, variant: &str, abi: Abi) -> kgen_dsl::Module {
        kgen_kernels::kernel(self.kernel).unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{} {variant} {abi}: {e}", self.kernel))
    }

    // ANCHOR: pad
    /// FIPS 180-4 5.1: msg, 0x80, zeros, the bit length big-endian (8 or 16 bytes).
    fn pad(&self, msg: &[u8]) -> Vec<u8> {
        let lenbytes = 2 * self.ws;
        let mut v = msg.to_vec();
        v.push(0x80);
        while v.len() % self.block != self.block - lenbytes {
            v.push(0);
        }
        let bits = (msg.len() as u128) * 8;
        v.extend_from_slice(&bits.to_be_bytes()[16 - lenbytes..]);
        v
    }
    // ANCHOR_END: pad

    /// RustCrypto's digest.
    fn rustcrypto(&self, msg: &[u8]) -> Vec<u8> {
        if self.ws == 4 {
            sha2::Sha256::digest(msg).to_vec()
        } else {
            sha2::Sha512::digest(msg).to_vec()
        }
    }

    /// RustCrypto's compression of whole blocks into `st`.
    fn compress_ref(&self, st: [u64; 8], data: &[u8]) -> [u64; 8] {
        if self.ws == 4 {
            let mut s: [u32; 8] = st.map(|x| x as u32);
            let blocks: Vec<[u8; 64]> = data.chunks_exact(64).map(|c| c.try_into().unwrap()).collect();
            sha2::block_api::compress256(&mut s, &blocks);
            s.map(|x| x as u64)
        } else {
            let mut s = st;
            let blocks: Vec<[u8; 128]> = data.chunks_exact(128).map(|c| c.try_into().unwrap()).collect();
            sha2::block_api::compress512(&mut s, &blocks);
            s
        }
    }

    /// h[0..8] as host-order (little-endian) words.
    fn state_bytes(&self, st: &[u64; 8]) -> Vec<u8> {
        st.iter().flat_map(|w| w.to_le_bytes()[..self.ws].to_vec()).collect()
    }

    fn state_of(&self, b: &[u8]) -> [u64; 8] {
        std::array::from_fn(|j| {
            let mut w = [0u8; 8];
            w[..self.ws].copy_from_slice(&b[self.ws * j..self.ws * (j + 1)]);
            u64::from_le_bytes(w)
        })
    }

    /// The digest of a final state: its words big-endian.
    fn digest_of(&self, st: &[u64; 8]) -> Vec<u8> {
        st.iter().flat_map(|w| w.to_be_bytes()[8 - self.ws..].to_vec()).collect()
    }

    /// The message schedule W[0..rounds] of one block (for the secrets scan).
    fn schedule(&self, block: &[u8]) -> Vec<u64> {
        let (rounds, mask) = if self.ws == 4 { (64, 0xffff_ffffu64) } else { (80, u64::MAX) };
        let bits = 8 * self.ws as u32;
        let ror = |x: u64, n: u32| ((x >> n) | (x << (bits - n))) & mask;
        let (s0, s1): ([u32; 3], [u32; 3]) = if self.ws == 4 { ([7, 18, 3], [17, 19, 10]) } else { ([1, 8, 7], [19, 61, 6]) };
        let mut w: Vec<u64> = block
            .chunks(self.ws)
            .map(|c| {
                let mut b = [0u8; 8];
                b[8 - self.ws..].copy_from_slice(c);
                u64::from_be_bytes(b)
            })
            .collect();
        for i in 16..rounds {
            let a = ror(w[i - 15], s0[0]) ^ ror(w[i - 15], s0[1]) ^ (w[i - 15] >> s0[2]);
            let b = ror(w[i - 2], s1[0]) ^ ror(w[i - 2], s1[1]) ^ (w[i - 2] >> s1[2]);
            w.push(w[i - 16].wrapping_add(a).wrapping_add(w[i - 7]).wrapping_add(b) & mask);
        }
        w
    }
}

/// One variant and ABI in kgen-sim: the context (OpenSSL's whole structure, 64-byte
/// aligned) and the block function. Misaligned accesses trap.
struct Sim {
    alg: Alg,
    abi: Abi,
    e: Env,
    f: u64,
    ctx: u64,
    what: String,
}

impl Sim {
    fn new(alg: Alg, variant: &str, abi: Abi) -> Sim {
        Sim::from_module(alg, &alg.module(variant, abi), false)
    }

    fn from_module(alg: Alg, m: &kgen_dsl::Module, cost: bool) -> Sim {
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().for_abi(m.abi);
        if cost {
            e = e.with_cost_model();
        }
        // The C906 does misaligned loads in hardware (its variant reads the input with them);
        // elsewhere a misaligned access traps.
        if m.target.misaligned == kgen_dsl::target::Misaligned::Slow {
            e.m.mem.misaligned = Misaligned::Trap;
        }
        let f = e.sym(&m.symbol(alg.entry(m.abi)).unwrap());
        let ctx = e.buffer(&vec![0u8; alg.ctx_bytes], 0, true);
        Sim { alg, abi: m.abi, e, f, ctx, what: format!("{} {} {}", alg.kernel, m.variant, m.abi) }
    }

    /// Maps `data` at MSG_BASE + off, read-only, in a region that starts with the aligned
    /// doubleword holding its first byte and ends with the one holding its last (junk in
    /// the rest of those doublewords).
    fn place(&mut self, data: &[u8], off: usize) -> u64 {
        self.e.m.mem.regions.retain(|r| r.name != MSG_REGION);
        let start = MSG_BASE + off as u64;
        if !data.is_empty() {
            let lo = start & !7;
            let hi = (start + data.len() as u64 + 7) & !7;
            self.e.m.mem.map(MSG_REGION, lo, (hi - lo) as usize, Perm::R);
            self.e.m.mem.write_bytes(lo, &common::gen_bytes(start ^ 0x5a5a, (hi - lo) as usize));
            self.e.m.mem.write_bytes(start, data);
        }
        start
    }

    // ANCHOR: compress
    /// Calls the block function on `data` (whole blocks) at offset `off` with h = `st`;
    /// returns h afterwards and the call's outcome.
    fn compress(&mut self, st: &[u64; 8], data: &[u8], off: usize) -> ([u64; 8], kgen_sim::Outcome) {
        let c = self.ctx;
        let sb = self.alg.state_bytes(st);
        self.e.m.mem.write_bytes(c, &sb);
        let inp = self.place(data, off);
        let n = (data.len() / self.alg.block) as u64;
        // The Go form takes bytes and rounds down to whole blocks.
        let n = if self.abi == Abi::Go { n * self.alg.block as u64 + self.alg.block as u64 - 1 } else { n };
        let w = self.what.clone();
        let o = self.e.call(self.f, &[c, inp, n]).unwrap_or_else(|x| panic!("{w}: {x}"));
        let b = self.e.read(c, 8 * self.alg.ws);
        (self.alg.state_of(&b), o)
    }
    // ANCHOR_END: compress

    /// The digest of `msg`, padded here, with the padded message at offset `off`.
    fn hash(&mut self, msg: &[u8], off: usize) -> Vec<u8> {
        let p = self.alg.pad(msg);
        let iv = self.alg.iv;
        let (st, _) = self.compress(&iv, &p, off);
        self.alg.digest_of(&st)
    }
}

/// FIPS 180-4's examples (the NIST "Examples with intermediate values" messages: "abc",
/// the two-block 448-bit and 896-bit messages, the empty message, one million 'a'), each
/// digest checked against RustCrypto first.
#[test]
fn fips180_vectors() {
    let m448 = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".to_vec();
    let m896 = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".to_vec();
    let million = vec![b'a'; 1_000_000];
    let cases: [(Alg, Vec<u8>, &str); 8] = [
        (S256, b"abc".to_vec(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (S256, Vec::new(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (S256, m448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (S256, million.clone(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        (S512, b"abc".to_vec(), "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
        (S512, Vec::new(), "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
        (S512, m896, "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
        (S512, million, "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"),
    ];
    for (alg, msg, want) in &cases {
        assert_eq!(tohex(&alg.rustcrypto(msg)), *want, "RustCrypto {} of {} bytes", alg.kernel, msg.len());
        assert_eq!(tohex(&alg.digest_of(&alg.compress_ref(alg.iv, &alg.pad(msg)))), *want, "padding here, {} bytes", msg.len());
    }
    for alg in ALGS {
        for v in VARIANTS {
            for abi in ABIS {
                let mut s = Sim::new(alg, v, abi);
                if abi == Abi::Psabi {
                    let plain = format!("{}_block_data_order", alg.kernel);
                    assert_eq!(s.e.sym(&plain), s.f, "{}: {plain} is an alias of the variant's function", s.what);
                }
                for (a, msg, want) in &cases {
                    if a.kernel != alg.kernel || (msg.len() > 1000 && abi == Abi::Linux) {
                        continue;
                    }
                    for off in [0, 3] {
                        assert_eq!(tohex(&s.hash(msg, off)), *want, "{} on {} bytes at offset {off}", s.what, msg.len());
                    }
                }
            }
        }
    }
}

// ANCHOR: every-length
/// Every message length 0..=1100 (across every block boundary and the padding's one- or
/// two-block split) at input offsets 0..7, random messages, against RustCrypto.
#[test]
fn every_length_and_offset() {
    for (ka, alg) in ALGS.into_iter().enumerate() {
        for (kv, v) in VARIANTS.into_iter().enumerate() {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(100 + 10 * ka as u64 + kv as u64);
            let mut s = Sim::new(alg, v, Abi::Psabi);
            let mut n = 0;
            for len in 0..=1100usize {
                let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                let off = len % 8;
                assert_eq!(s.hash(&msg, off), alg.rustcrypto(&msg), "{}: length {len} at offset {off}", s.what);
                n += 1;
            }
            println!("{}: {n} digests agree with RustCrypto (lengths 0..=1100, offsets 0..7)", s.what);
        }
    }
}
// ANCHOR_END: every-length

/// Random chaining values, block counts 0..24 and offsets 0..15 against RustCrypto's
/// `compress256`/`compress512`, with messages of all-zero, all-one and random bytes; the
/// function writes h[0..8] only (the rest of OpenSSL's context keeps its bytes), and
/// num = 0 changes nothing.
#[test]
fn random_states_against_compress() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for alg in ALGS {
        for v in VARIANTS {
            for abi in ALL_ABIS {
                let mut s = Sim::new(alg, v, abi);
                let tail = alg.ctx_bytes - 8 * alg.ws;
                for case in 0..60 {
                    let st: [u64; 8] = std::array::from_fn(|_| rng.random::<u64>() & if alg.ws == 4 { 0xffff_ffff } else { u64::MAX });
                    let nb = rng.random_range(0..24usize);
                    let data: Vec<u8> = (0..nb * alg.block).map(|i| match case % 3 {
                        0 => 0,
                        1 => 0xff,
                        _ => (i as u8).wrapping_mul(rng.random::<u8>() | 1),
                    }).collect();
                    let junk: Vec<u8> = (0..tail).map(|_| rng.random()).collect();
                    let c = s.ctx + 8 * alg.ws as u64;
                    s.e.m.mem.write_bytes(c, &junk);
                    let (got, _) = s.compress(&st, &data, rng.random_range(0..16));
                    assert_eq!(got, alg.compress_ref(st, &data), "{}: {nb} blocks, case {case}", s.what);
                    assert_eq!(s.e.read(c, tail), junk, "{}: wrote past h[8]", s.what);
                }
                let st = alg.iv;
                let (got, _) = s.compress(&st, &[], 1);
                assert_eq!(got, st, "{}: num = 0", s.what);
            }
        }
    }
}

/// The schedule the secrets scan looks for is SHA-2's: a compression written with it
/// (FIPS 180-4 6.2.2 / 6.4.2, K from the kernel crate) agrees with RustCrypto's.
#[test]
fn schedule_for_the_scan_is_right() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    for (alg, a) in [(S256, &k::A256), (S512, &k::A512)] {
        let (bits, mask) = (8 * alg.ws as u32, if alg.ws == 4 { 0xffff_ffffu64 } else { u64::MAX });
        let ror = |x: u64, n: u32| ((x >> n) | (x << (bits - n))) & mask;
        let kb = a.k_bytes();
        let kk: Vec<u64> = kb
            .chunks(alg.ws)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..alg.ws].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let block: Vec<u8> = (0..alg.block).map(|_| rng.random()).collect();
        let w = alg.schedule(&block);
        let mut v = alg.iv;
        for (i, wi) in w.iter().enumerate() {
            let [a0, b, c, d, e, f, g, h] = v;
            let s1 = ror(e, a.big1[0]) ^ ror(e, a.big1[1]) ^ ror(e, a.big1[2]);
            let ch = (e & f) ^ (!e & g);
            let t1 = h.wrapping_add(s1).wrapping_add(ch).wrapping_add(kk[i]).wrapping_add(*wi) & mask;
            let s0 = ror(a0, a.big0[0]) ^ ror(a0, a.big0[1]) ^ ror(a0, a.big0[2]);
            let maj = (a0 & b) ^ (a0 & c) ^ (b & c);
            v = [t1.wrapping_add(s0).wrapping_add(maj) & mask, a0, b, c, d.wrapping_add(t1) & mask, e, f, g];
        }
        let got: [u64; 8] = std::array::from_fn(|j| alg.iv[j].wrapping_add(v[j]) & mask);
        assert_eq!(got, alg.compress_ref(alg.iv, &block), "{}", alg.kernel);
    }
}

/// After a call no register and nothing below the stack pointer holds message bytes (as
/// loaded or byte-swapped), a schedule word, or the working state.
#[test]
fn no_secrets_left() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for alg in ALGS {
        for v in VARIANTS {
            for abi in ABIS {
                let mut s = Sim::new(alg, v, abi);
                let data: Vec<u8> = (0..3 * alg.block).map(|_| rng.random()).collect();
                let st = alg.iv;
                let (after, _) = s.compress(&st, &data, 5);
                let last = &data[2 * alg.block..];
                let swapped: Vec<u8> = last.chunks(alg.ws).flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>()).collect();
                let w: Vec<u8> = alg.schedule(last).iter().flat_map(|x| x.to_le_bytes()[..alg.ws].to_vec()).collect();
                // The working variables a..h before the final addition: h' - h (per word).
                let before = alg.compress_ref(st, &data[..2 * alg.block]);
                let mask = if alg.ws == 4 { 0xffff_ffff } else { u64::MAX };
                let work: Vec<u8> = (0..8).flat_map(|j| (after[j].wrapping_sub(before[j]) & mask).to_le_bytes()[..alg.ws].to_vec()).collect();
                for (what, secret) in [("message", &data), ("byte-swapped message", &swapped), ("schedule", &w), ("working state", &work)] {
                    assert_eq!(s.e.scan_for_secret(secret, alg.ws.min(6)), Vec::<String>::new(), "{}: {what}", s.what);
                }
            }
        }
    }
}

/// The modeled time depends only on the block count (and, for rv64gc-zbb, on whether the
/// input is 8-byte aligned): the same for messages of zeros, ones and random bytes and for
/// any chaining value.
#[test]
fn timing_independent_of_data() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    for alg in ALGS {
        for v in VARIANTS {
            let mut s = Sim::from_module(alg, &alg.module(v, Abi::Psabi), true);
            let mut cycles = std::collections::BTreeSet::new();
            for case in 0..12 {
                let st: [u64; 8] = std::array::from_fn(|_| rng.random());
                let data: Vec<u8> = (0..4 * alg.block).map(|_| [0, 0xff, rng.random()][case % 3]).collect();
                s.compress(&st, &data, 0);
                let (_, o) = s.compress(&st, &data, 0);
                cycles.insert(o.cycles);
            }
            println!("{} {v}: 4 blocks, modeled cycles over 12 messages/states: {cycles:?}", alg.kernel);
            assert_eq!(cycles.len(), 1, "{} {v}: the time depends on the data", alg.kernel);
        }
    }
}

/// Modeled C906 cycles per byte (second of two calls), printed; c906 within the issue's
/// target of 0.6 of OpenSSL's C on the model (tests/sha2_baseline.rs measures the C code:
/// 78.75 c/B for SHA-256, 40.43 for SHA-512 at 256 bytes), and every Go build within 2% of
/// its OpenSSL build (sha2.rs's header: with eight schedule words in registers, SHA-256's
/// rv64gc Go build spills kp and is 4% slower).
#[test]
fn cost_report() {
    let mut table = String::new();
    let mut openssl = std::collections::HashMap::new();
    let _ = writeln!(table, "{:<8} {:<11} {:<7} {:>6} {:>8} {:>8} {:>7} {:>9}", "kernel", "variant", "abi", "bytes", "instr", "cycles", "c/B", "instr/blk");
    for alg in ALGS {
        for v in VARIANTS {
            for abi in [Abi::Psabi, Abi::Go] {
                let mut s = Sim::from_module(alg, &alg.module(v, abi), true);
                for nb in [1usize, 4, 16] {
                    let data = vec![0x5au8; nb * alg.block];
                    s.compress(&alg.iv, &data, 0);
                    let (_, o) = s.compress(&alg.iv, &data, 0);
                    let cpb = o.cycles as f64 / data.len() as f64;
                    let _ = writeln!(table, "{:<8} {v:<11} {:<7} {:>6} {:>8} {:>8} {cpb:>7.2} {:>9.0}", alg.kernel, abi.name(), data.len(), o.instructions, o.cycles, o.instructions as f64 / nb as f64);
                    if abi == Abi::Psabi {
                        openssl.insert((alg.kernel, v, nb), cpb);
                    } else {
                        let base = openssl[&(alg.kernel, v, nb)];
                        assert!(cpb <= 1.02 * base, "{} {v} go: {cpb:.2} c/B at {} bytes, the OpenSSL build {base:.2}", alg.kernel, data.len());
                    }
                    if v == "c906" && nb >= 4 {
                        let limit = if alg.ws == 4 { 0.6 * 78.75 } else { 0.6 * 40.43 };
                        assert!(cpb <= limit, "{} c906: {cpb:.2} c/B at {} bytes, target {limit:.2}", alg.kernel, data.len());
                    }
                }
                let data = vec![0x5au8; 16 * alg.block];
                s.compress(&alg.iv, &data, 3);
                let (_, o) = s.compress(&alg.iv, &data, 3);
                let _ = writeln!(table, "{:<8} {v:<11} {:<7} {:>6} at offset 3: {:.2} c/B", alg.kernel, abi.name(), data.len(), o.cycles as f64 / data.len() as f64);
            }
        }
    }
    println!("{table}");
}

// ---- QEMU ---------------------------------------------------------------------------------

/// Reads `len off seed` lines, pads the generated message in a buffer at `off`, calls the
/// block function on the padded blocks (split in two calls at a block boundary) and prints
/// the digest.
const HARNESS: &str = r#"
int main(void) {
  unsigned long len, off, seed;
  while (scanf("%lu %lu %lu", &len, &off, &seed) == 3) {
    size_t padded = (len + 1 + 2 * WS + BLOCK - 1) / BLOCK * BLOCK;
    unsigned char *buf = malloc(padded + 16), *p = buf + off;
    gen_bytes(seed, p, len);
    memset(p + len, 0, padded - len);
    p[len] = 0x80;
    unsigned long long bits = (unsigned long long)len * 8;
    for (int i = 0; i < 8; i++) p[padded - 1 - i] = (unsigned char)(bits >> (8 * i));
    CTX ctx;
    memset(&ctx, 0xa5, sizeof ctx);
    for (int i = 0; i < 8; i++) ctx.h[i] = IV[i];
    size_t nb = padded / BLOCK, cut = nb / 2;
    BLOCKFN(&ctx, p, cut);
    BLOCKFN(&ctx, p + cut * BLOCK, nb - cut);
    for (int i = 0; i < 8; i++)
      for (int b = WS - 1; b >= 0; b--) printf("%02x", (unsigned)(ctx.h[i] >> (8 * b)) & 0xff);
    printf("\n");
    free(buf);
  }
  return 0;
}
"#;

fn defines(alg: Alg, abi: Abi, m: &kgen_dsl::Module) -> String {
    let (word, iv) = if alg.ws == 4 {
        ("unsigned int", alg.iv.iter().map(|x| format!("{x:#x}u")).collect::<Vec<_>>())
    } else {
        ("unsigned long long", alg.iv.iter().map(|x| format!("{x:#x}ull")).collect::<Vec<_>>())
    };
    let ctx = match abi {
        Abi::Linux => format!("struct {}_block_state", alg.kernel),
        _ => format!("SHA{}_CTX", 8 * alg.ws * 8),
    };
    let f = m.symbol(alg.entry(abi)).unwrap();
    format!("#define WS {}\n#define BLOCK {}\n#define CTX {ctx}\n#define BLOCKFN {f}\nstatic const {word} IV[8] = {{{}}};\n", alg.ws, alg.block, iv.join(", "))
}

#[test]
fn emitted_assembly_under_qemu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let mut cases = Vec::new();
    for len in (0..=300).chain([1000, 4096, 65536 + 17]) {
        cases.push((len, rng.random_range(0..16usize), rng.random::<u64>()));
    }
    let input: String = cases.iter().map(|(l, o, s)| format!("{l} {o} {s}\n")).collect();
    let dir = kgen_harness::oracle::scratch("sha2_qemu");
    let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
    for alg in ALGS {
        let want: Vec<String> = cases.iter().map(|&(l, _, s)| tohex(&alg.rustcrypto(&common::gen_bytes(s, l)))).collect();
        for v in VARIANTS {
            for abi in ABIS {
                // ANCHOR: qemu
                let m = alg.module(v, abi);
                let (q, cpu, bad) = common::emulator(&m);
                let asm = if abi == Abi::Linux { kgen_emit::linux_s(&m, &o).unwrap() } else { kgen_emit::openssl_s(&m, &o).unwrap() };
                let src = format!("{}{}{}{HARNESS}", common::C_HELPERS, common::header(&dir, &m), defines(alg, abi, &m));
                let name = format!("{}-{}-{v}", alg.kernel, abi.name());
                let Some(bin) = common::build(&dir, &name, &src, &[(&format!("{name}.S"), asm)]) else { return };
                let Some(q) = q else { return };
                let out = common::run(&q, &cpu, &bin, &input);
                assert!(out.status.success(), "{name} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
                let got: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
                assert_eq!(got.len(), want.len(), "{name}");
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g, w, "{name} under qemu, case {k}: {:?}", cases[k]);
                }
                println!("{name}: {} digests agree with RustCrypto under qemu -cpu {cpu}", got.len());
                if let Some(bad) = bad {
                    let out = common::run(&q, &bad, &bin, &input);
                    assert!(!out.status.success(), "{name} must fault under -cpu {bad}");
                    println!("{name}: -cpu {bad} refuses it ({})", out.status);
                }
                // ANCHOR_END: qemu
            }
        }
    }
}
