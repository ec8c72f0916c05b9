//! ChaCha20-Poly1305 (`chacha20-poly1305` c906: seal and open of whole 64-byte blocks,
//! ChaCha20 in vector lanes merged with the scalar Poly1305) against RFC 8439 section
//! 2.8.2, Wycheproof and RustCrypto `chacha20poly1305`, in kgen-sim through the real ABI
//! (the simulator seeds and checks the callee-saved registers on every call) and under
//! T-Head's QEMU `-cpu c906fdv` (the C harness calls the kernel through a trampoline that
//! puts canaries in s0..s11 and checks them, sp and tp, with a control that changes s5).
//! The AEAD around the kernel is built from kgen's own
//! functions, as a caller would: `ChaCha20_ctr32` (`chacha20` c906) for the Poly1305 key and
//! the last partial block, `poly1305_*` (`32-c906`, whose context the kernel continues) for
//! the AAD, the padding and the lengths. The Go (ABI0) forms run the AEAD cases in
//! kgen-sim under Go's register rules, and so do the Go forms on x/crypto's `macState`
//! (what `kgen go-patches` uses), with poly1305's macState blocks function around them.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::ChaCha20Poly1305;
use kgen_dsl::{Abi, Module};
use kgen_kernels::{chacha, chacha20_poly1305 as cp, poly1305 as p};
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

mod common;

use common::chacha20_xor;

/// The kernel's module and the two whose functions the AEAD needs around it.
fn modules(abi: Abi) -> [Module; 3] {
    let b = |k: &str, v: &str| kgen_kernels::kernel(k).unwrap().variant(v).unwrap().build(abi).unwrap_or_else(|e| panic!("{k} {v}: {e}"));
    [b("chacha20-poly1305", "c906"), b("chacha20", "c906"), b("poly1305", "32-c906")]
}

/// The three modules as one (for one simulated image).
fn combined(abi: Abi) -> Module {
    let [mut m, c, q] = modules(abi);
    for o in [c, q] {
        m.funcs.extend(o.funcs);
        m.data.extend(o.data);
        m.aliases.extend(o.aliases);
    }
    m
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// RustCrypto's Poly1305 tag of `msg` (whole blocks get the pad bit) under r || s.
fn poly_ref(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    use ::poly1305::universal_hash::KeyInit as _;
    ::poly1305::Poly1305::new(&::poly1305::Key::from(*key)).compute_unpadded(msg).into()
}

/// The functions of the combined image.
struct Sim {
    e: Env,
    seal: u64,
    open: u64,
    ctr32: u64,
    init: u64,
    blocks: u64,
    emit: u64,
    /// Modeled cycles of every call made through [`Sim::run`] so far.
    cycles: u64,
    /// Whether [`Sim::aead`] puts the whole blocks through the stitched kernel (else
    /// everything goes through `ChaCha20_ctr32` and `poly1305_blocks`, in series).
    stitched: bool,
}

/// How a kernel call is laid out.
#[derive(Clone, Copy, Debug)]
struct Layout {
    io: usize,
    oo: usize,
    in_place: bool,
}

impl Sim {
    fn new() -> Sim {
        Sim::with(false)
    }

    /// With the C906 cost model on, or not.
    fn with(cost: bool) -> Sim {
        Sim::build(cost, Abi::Psabi)
    }

    /// The three modules' `abi` forms, calls checked against that ABI's rules (Go's ABI0:
    /// nothing callee-saved, gp, tp, X26, X27 and X31 untouched).
    fn build(cost: bool, abi: Abi) -> Sim {
        let m = combined(abi);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().for_abi(abi);
        if cost {
            e = e.with_cost_model();
        }
        let f = |x: &kgen_dsl::entry::Entry| e.entry(x).unwrap_or_else(|err| panic!("{err}")).1;
        Sim { seal: f(&cp::SEAL), open: f(&cp::OPEN), ctr32: f(&chacha::CTR32), init: f(&p::INIT), blocks: f(&p::BLOCKS), emit: f(&p::EMIT), e, cycles: 0, stitched: true }
    }

    /// Calls `f`, adding its modeled cycles to `self.cycles`.
    fn run(&mut self, f: u64, args: &[u64]) -> Result<kgen_sim::Outcome, kgen_sim::CallError> {
        let o = self.e.call(f, args)?;
        self.cycles += o.cycles;
        Ok(o)
    }

    fn counter(&mut self, ctr: u32, nonce: &[u8; 12]) -> u64 {
        let mut w = ctr.to_le_bytes().to_vec();
        w.extend_from_slice(nonce);
        self.e.buffer(&w, 0, false)
    }

    /// A Poly1305 context initialised by `poly1305_init` with r = key[0..16].
    fn context(&mut self, key: &[u8; 32]) -> u64 {
        let ctx = self.e.buffer(&[0u8; 192], 0, true);
        let kb = self.e.buffer(&key[..16], 0, false);
        self.run(self.init, &[ctx, kb, 0]).unwrap();
        ctx
    }

    /// The tag of the context with s = key[16..32].
    fn tag(&mut self, ctx: u64, key: &[u8; 32]) -> [u8; 16] {
        let s = self.e.buffer(&key[16..], 0, false);
        let mac = self.e.buffer(&[0u8; 16], 0, true);
        self.run(self.emit, &[ctx, mac, s]).unwrap();
        self.e.read(mac, 16).try_into().unwrap()
    }

    /// Poly1305 of `n` bytes at `at`: whole blocks, then the rest padded with zeros to a
    /// block (RFC 8439's pad16), all with the pad bit.
    fn pad16(&mut self, ctx: u64, at: u64, n: usize) {
        let whole = n & !15;
        self.run(self.blocks, &[ctx, at, whole as u64, 1]).unwrap();
        if n > whole {
            let mut last = self.e.read(at + whole as u64, n - whole);
            last.resize(16, 0);
            let b = self.e.buffer(&last, 0, false);
            self.run(self.blocks, &[ctx, b, 16, 1]).unwrap();
        }
    }

    /// The kernel on `len` bytes (the buffers hold `data`), counter `ctr`, in calls that
    /// start at the `cuts` (byte offsets; the last call gets the rest of `len`).
    fn kernel(&mut self, seal: bool, key: &[u8; 32], ctr: u32, nonce: &[u8; 12], ctx: u64, data: &[u8], len: usize, cuts: &[usize], l: Layout) -> Vec<u8> {
        let kb = self.e.buffer(key, 0, false);
        let inp = self.e.buffer(data, l.io, true);
        let out = if l.in_place { inp } else { self.e.buffer(&vec![0xa5; data.len()], l.oo, true) };
        let mut starts: Vec<usize> = cuts.iter().map(|&c| c & !63).filter(|&c| c < len).collect();
        starts.push(0);
        starts.sort_unstable();
        starts.dedup();
        let f = if seal { self.seal } else { self.open };
        for (k, &a) in starts.iter().enumerate() {
            let b = starts.get(k + 1).copied().unwrap_or(len);
            let cb = self.counter(ctr.wrapping_add((a / 64) as u32), nonce);
            let (o, i) = (out + a as u64, inp + a as u64);
            self.run(f, &[o, i, (b - a) as u64, kb, cb, ctx]).unwrap_or_else(|x| panic!("len {len} piece {a}..{b}: {x}"));
        }
        self.e.read(out, data.len())
    }

    /// RFC 8439's AEAD, seal (returns ciphertext and tag) or open (plaintext and the tag
    /// it computes), the whole blocks through the kernel (in calls split at `cuts`; the last
    /// call's length includes the partial block, which the kernel leaves alone).
    fn aead(&mut self, seal: bool, key: &[u8; 32], nonce: &[u8; 12], aad: &[u8], text: &[u8], cuts: &[usize], l: Layout) -> (Vec<u8>, [u8; 16]) {
        let n = text.len();
        let bulk = if self.stitched { n & !63 } else { 0 };
        let kb = self.e.buffer(key, 0, false);
        let zero = self.e.buffer(&[0u8; 32], 0, false);
        let pk = self.e.buffer(&[0u8; 32], 0, true);
        let c0 = self.counter(0, nonce);
        self.run(self.ctr32, &[pk, zero, 32, kb, c0]).unwrap();
        let polykey: [u8; 32] = self.e.read(pk, 32).try_into().unwrap();
        let ctx = self.context(&polykey);
        let ab = self.e.buffer(aad, 0, false);
        self.pad16(ctx, ab, aad.len());
        let inp = self.e.buffer(text, l.io, true);
        let out = if l.in_place { inp } else { self.e.buffer(&vec![0xa5; n], l.oo, true) };
        let mut starts: Vec<usize> = cuts.iter().map(|&c| c & !63).filter(|&c| c < bulk).collect();
        starts.push(0);
        starts.sort_unstable();
        starts.dedup();
        let (f, stitched) = (if seal { self.seal } else { self.open }, self.stitched);
        for (k, &a) in starts.iter().enumerate().filter(|_| stitched) {
            let b = starts.get(k + 1).copied().unwrap_or(n);
            let cb = self.counter(1 + (a / 64) as u32, nonce);
            self.run(f, &[out + a as u64, inp + a as u64, (b - a) as u64, kb, cb, ctx]).unwrap_or_else(|x| panic!("len {n}: {x}"));
        }
        let cb = self.counter(1 + (bulk / 64) as u32, nonce);
        let (ti, to, tail) = (inp + bulk as u64, out + bulk as u64, n - bulk);
        if seal {
            self.run(self.ctr32, &[to, ti, tail as u64, kb, cb]).unwrap();
            self.pad16(ctx, to, tail);
        } else {
            self.pad16(ctx, ti, tail);
            self.run(self.ctr32, &[to, ti, tail as u64, kb, cb]).unwrap();
        }
        let mut lens = (aad.len() as u64).to_le_bytes().to_vec();
        lens.extend_from_slice(&(n as u64).to_le_bytes());
        let lb = self.e.buffer(&lens, 0, false);
        self.run(self.blocks, &[ctx, lb, 16, 1]).unwrap();
        let tag = self.tag(ctx, &polykey);
        (self.e.read(out, n), tag)
    }
}

const APART: Layout = Layout { io: 0, oo: 0, in_place: false };

#[test]
fn rfc8439_aead_vector() {
    // RFC 8439 2.8.2
    let key: [u8; 32] = std::array::from_fn(|i| 0x80 + i as u8);
    let nonce: [u8; 12] = hex("070000004041424344454647").try_into().unwrap();
    let aad = hex("50515253c0c1c2c3c4c5c6c7");
    let pt = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
    let ct = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116";
    let tag = "1ae10b594f09e26a7e902ecbd0600691";
    let mut s = Sim::new();
    let (c, t) = s.aead(true, &key, &nonce, &aad, pt, &[], APART);
    assert_eq!((tohex(&c), tohex(&t)), (ct.to_string(), tag.to_string()), "seal");
    let (q, t2) = s.aead(false, &key, &nonce, &aad, &hex(ct), &[], APART);
    assert_eq!((q, tohex(&t2)), (pt.to_vec(), tag.to_string()), "open");
}

/// Every ChaCha20-Poly1305 test of Wycheproof with a 96-bit nonce: seal gives the test's
/// ciphertext and tag exactly when the test is valid, and open computes its tag only then
/// (the invalid tests alter the tag, the ciphertext or the AAD).
#[test]
fn wycheproof_chacha20_poly1305() {
    let set = wycheproof::aead::TestSet::load(wycheproof::aead::TestName::ChaCha20Poly1305).unwrap();
    let mut s = Sim::new();
    let (mut valid, mut invalid) = (0, 0);
    for g in &set.test_groups {
        if g.nonce_size != 96 {
            continue; // the others test nonce sizes RFC 8439 does not have
        }
        for t in &g.tests {
            let key: [u8; 32] = t.key[..].try_into().unwrap();
            let nonce: [u8; 12] = t.nonce[..].try_into().unwrap();
            let (ct, tag) = s.aead(true, &key, &nonce, &t.aad, &t.pt, &[64], APART);
            let want = t.result != wycheproof::TestResult::Invalid;
            assert_eq!(ct[..] == t.ct[..] && tag[..] == t.tag[..], want, "seal: wycheproof test {} ({:?})", t.tc_id, t.flags);
            let (pt, tag2) = s.aead(false, &key, &nonce, &t.aad, &t.ct, &[128], APART);
            assert_eq!(tag2[..] == t.tag[..], want, "open: wycheproof test {} ({:?})", t.tc_id, t.flags);
            if want {
                assert_eq!(pt[..], t.pt[..], "open: wycheproof test {}", t.tc_id);
                valid += 1;
            } else {
                invalid += 1;
            }
        }
    }
    assert!(valid > 200 && invalid > 50, "{valid} {invalid}");
    println!("{valid} valid and {invalid} invalid Wycheproof ChaCha20-Poly1305 tests agree");
}

/// 10,000 random AEAD cases against RustCrypto: every length 0..=1100 (twice), then random
/// lengths (a few up to 5000), random AAD of 0..64 bytes, the whole blocks in one to three
/// kernel calls, offsets 0..15, in place a third of the time; seal is RustCrypto's output,
/// open gives the plaintext and the same tag.
#[test]
fn ten_thousand_random_cases_against_rustcrypto() {
    std::thread::scope(|sc| {
        for half in 0..2u64 {
            sc.spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8439 + half);
                let mut s = Sim::new();
                for k in 0..5000usize {
                    let n = 5000 * half as usize + k;
                    if n.is_multiple_of(200) {
                        // Every call maps new guarded buffers: start afresh to bound memory.
                        s = Sim::new();
                    }
                    let len = match n {
                        0..2202 => n % 1101,
                        _ if n.is_multiple_of(50) => rng.random_range(1100..5000),
                        _ => rng.random_range(0..=1100),
                    };
                    aead_case(&mut s, &mut rng, n, len, 64, "");
                }
            });
        }
    });
}

/// One random AEAD case of `len` bytes (AAD up to `aad_max`, up to two cuts, random
/// offsets, in place every third case): seal against RustCrypto, then open back.
fn aead_case(s: &mut Sim, rng: &mut rand_chacha::ChaCha8Rng, n: usize, len: usize, aad_max: usize, form: &str) {
    let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
    let aad: Vec<u8> = (0..rng.random_range(0..=aad_max)).map(|_| rng.random()).collect();
    let pt: Vec<u8> = (0..len).map(|_| rng.random()).collect();
    let cuts: Vec<usize> = (0..rng.random_range(0..3)).map(|_| rng.random_range(0..=len)).collect();
    let l = Layout { io: rng.random_range(0..16), oo: rng.random_range(0..16), in_place: n.is_multiple_of(3) };
    let want = ChaCha20Poly1305::new((&key).into()).encrypt((&nonce).into(), Payload { msg: &pt, aad: &aad }).unwrap();
    let (ct, tag) = s.aead(true, &key, &nonce, &aad, &pt, &cuts, l);
    let what = format!("{form}case {n}: len {len} aad {} cuts {cuts:?} {l:?}", aad.len());
    assert_eq!([&ct[..], &tag[..]].concat(), want, "seal, {what}");
    let (back, tag2) = s.aead(false, &key, &nonce, &aad, &ct, &cuts, l);
    assert!(back == pt && tag2 == tag, "open, {what}");
}

/// The Go (ABI0) forms, with kgen-sim checking Go's register rules and the frame Go's
/// prologue leaves (return address at 0(sp)): 1,200 AEAD cases of every length 0..1100 and
/// some longer, split and in place, against RustCrypto. (Go's own build of the package,
/// against x/crypto under QEMU, is in tests/emit_go.rs.)
#[test]
fn go_forms_against_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1200);
    let mut s = Sim::build(false, Abi::Go);
    for n in 0..1200usize {
        if n % 200 == 199 {
            s = Sim::build(false, Abi::Go);
        }
        let len = if n <= 1100 { n } else { rng.random_range(1100..3000) };
        aead_case(&mut s, &mut rng, n, len, 40, "Go form, ");
    }
}

/// The kernel by itself: any counter (near the 2^32 wrap too: it wraps without a carry), any
/// length (rounded down to whole blocks; the bytes after them are not touched), split
/// calls, in place. The keystream is RustCrypto's (and the written-out block function at
/// the last counter); the Poly1305 context ends where RustCrypto's Poly1305 of the
/// ciphertext does.
#[test]
fn kernel_counters_lengths_and_splits() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let mut s = Sim::new();
    for n in 0..1500usize {
        if n.is_multiple_of(200) {
            s = Sim::new();
        }
        let len = match n % 4 {
            0 => 64 * rng.random_range(0..18),
            1 => rng.random_range(0..1200),
            _ => 64 * rng.random_range(1..10) + rng.random_range(0..64) * (n % 2),
        };
        let ctr: u32 = if n.is_multiple_of(3) { u32::MAX - rng.random_range(0..12) } else { rng.random() };
        let (key, nonce, pkey): ([u8; 32], [u8; 12], [u8; 32]) = (rng.random(), rng.random(), rng.random());
        let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let cuts: Vec<usize> = (0..rng.random_range(0..3)).map(|_| rng.random_range(0..=len)).collect();
        let l = Layout { io: rng.random_range(0..16), oo: rng.random_range(0..16), in_place: n.is_multiple_of(5) };
        let seal = n.is_multiple_of(2);
        let whole = len & !63;
        let ctx = s.context(&pkey);
        let got = s.kernel(seal, &key, ctr, &nonce, ctx, &data, len, &cuts, l);
        let mut want = chacha20_xor(&key, ctr, &nonce, &data[..whole]);
        let hashed = if seal { want.clone() } else { data[..whole].to_vec() };
        want.extend_from_slice(if l.in_place { &data[whole..] } else { &[0xa5; 64][..len - whole] });
        let what = format!("case {n}: {} len {len} ctr {ctr:#x} cuts {cuts:?} {l:?}", if seal { "seal" } else { "open" });
        assert_eq!(got, want, "{what}");
        assert_eq!(s.tag(ctx, &pkey), poly_ref(&pkey, &hashed), "Poly1305, {what}");
    }
}

/// What the kernel's first column round stores for the lanes (columns 1..3 of the block
/// state: they do not depend on the counter), by word index.
fn first_column_round(key: &[u8; 32], nonce: &[u8; 12]) -> [u32; 16] {
    let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    let mut x = [0u32; 16];
    x[..4].copy_from_slice(&chacha::SIGMA);
    for i in 0..8 {
        x[4 + i] = w(key, i);
    }
    for i in 0..3 {
        x[13 + i] = w(nonce, i);
    }
    for j in 1..4 {
        let (a, b, c, d) = (j, 4 + j, 8 + j, 12 + j);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(7);
    }
    x
}

/// After a call, no register and no byte of the stack the kernel used holds 8 bytes of the
/// key, the keystream, the first column round, Poly1305's r and s or its h (the checker
/// proves the wipes statically; this looks at a real run). The scan finds what is there:
/// the context pointer in its argument register and the saved return address in the frame.
#[test]
fn secrets_are_wiped_from_registers_and_stack() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for seal in [true, false] {
        for len in [64usize, 320, 1024] {
            let mut s = Sim::new();
            let (key, nonce, pkey): ([u8; 32], [u8; 12], [u8; 32]) = (rng.random(), rng.random(), rng.random());
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let ctx = s.context(&pkey);
            let kb = s.e.buffer(&key, 0, false);
            let cb = s.counter(7, &nonce);
            let inp = s.e.buffer(&data, 0, false);
            let out = s.e.buffer(&vec![0; len], 0, true);
            s.e.call(if seal { s.seal } else { s.open }, &[out, inp, len as u64, kb, cb, ctx]).unwrap();
            let got = s.e.read(out, len);
            let keystream: Vec<u8> = got.iter().zip(&data).map(|(a, b)| a ^ b).collect();
            let pre = first_column_round(&key, &nonce);
            let pairs: Vec<u8> = [1usize, 2, 5, 6, 9, 10, 13, 14].iter().flat_map(|&i| [pre[i], pre[i + 1]]).flat_map(u32::to_le_bytes).collect();
            let r_s_h = s.e.read(ctx, 52);
            let what = format!("{} {len} B", if seal { "seal" } else { "open" });
            for (name, secret) in [("key", &key[..]), ("keystream", &keystream[..]), ("first column round", &pairs[..]), ("Poly1305 h, r, s", &r_s_h[..])] {
                for w in secret.chunks(8).filter(|w| w.len() == 8 && w.iter().filter(|&&b| b != 0).count() >= 6) {
                    let left = s.e.scan_for_secret(w, 8);
                    assert!(left.is_empty(), "{what}: {name} bytes {w:02x?} left in {left:?}");
                }
            }
            // The control: what is left on purpose is found (the context pointer stays in a5).
            assert!(s.e.scan_for_secret(&ctx.to_le_bytes(), 8).contains(&"register a5".to_string()), "{what}: the scan sees registers");
            assert!(s.e.scan_for_secret(&kgen_sim::call::RETURN_SENTINEL.to_le_bytes(), 8).contains(&"stack below sp".to_string()), "{what}: the scan sees the frame");
        }
    }
}

/// Modeled cost against the issue's targets (at most 10.5 c/B at 16 KiB and 12 at 1400 B,
/// measured at 1408: whole blocks), and against ChaCha20 c906 then Poly1305 32-c906 on the
/// same data from two groups (512 B) on; the cost does not depend on the key or the data.
#[test]
fn cost_against_the_targets_and_the_two_calls_in_series() {
    let mut s = Sim::with(true);
    println!("{:>6} {:>10} {:>10} {:>10}", "bytes", "seal c/B", "open c/B", "series c/B");
    for len in [64usize, 256, 1024, 1408, 4096, 16384] {
        let mut cycles = Vec::new();
        for (f, seed) in [(s.seal, 1u8), (s.open, 1), (s.seal, 2)] {
            let key = [seed; 32];
            let kb = s.e.buffer(&key, 0, false);
            let cb = s.counter(1, &[seed; 12]);
            let ctx = s.context(&[seed.wrapping_mul(77); 32]);
            let buf = s.e.buffer(&vec![seed; len], 0, true);
            s.e.call(f, &[buf, buf, len as u64, kb, cb, ctx]).unwrap();
            cycles.push(s.e.call(f, &[buf, buf, len as u64, kb, cb, ctx]).unwrap().cycles);
        }
        assert_eq!(cycles[0], cycles[2], "{len} B: the cost does not depend on the key or the data");
        // In series: ChaCha20_ctr32 over the buffer, then poly1305_blocks over the result.
        let kb = s.e.buffer(&[1; 32], 0, false);
        let cb = s.counter(1, &[1; 12]);
        let ctx = s.context(&[77; 32]);
        let buf = s.e.buffer(&vec![1; len], 0, true);
        let series = |s: &mut Sim| s.e.call(s.ctr32, &[buf, buf, len as u64, kb, cb]).unwrap().cycles + s.e.call(s.blocks, &[ctx, buf, len as u64, 1]).unwrap().cycles;
        series(&mut s);
        let series = series(&mut s);
        let cpb = |c: u64| c as f64 / len as f64;
        println!("{len:>6} {:>10.2} {:>10.2} {:>10.2}", cpb(cycles[0]), cpb(cycles[1]), cpb(series));
        // From two groups of four blocks on, one group's keystream overlaps the previous
        // group's XOR and Poly1305; with one group (256 B) nothing overlaps, and the kernel
        // costs about what the two calls do (printed above, not asserted).
        if len >= 512 {
            assert!(cycles[0] < series && cycles[1] < series, "{len} B: one pass must beat the two calls: {cycles:?} vs {series}");
        }
        let target = match len {
            16384 => Some(10.5),
            1408 => Some(12.0),
            _ => None,
        };
        if let Some(t) = target {
            for (what, c) in [("seal", cycles[0]), ("open", cycles[1])] {
                assert!(cpb(c) <= t, "{what} at {len} B: {:.2} c/B, target {t}", cpb(c));
            }
        }
    }
}

/// The whole RFC 8439 AEAD, as a TLS record would use it (13 bytes of AAD), on the model:
/// the Poly1305 key's block, init, AAD, the text, the lengths and the tag, with the whole
/// blocks through the stitched kernel and, for comparison, everything through
/// `ChaCha20_ctr32` and `poly1305_blocks` in series (printed, not asserted: the targets are
/// the bulk function's; what separates these rows from its rows is the fixed part, the key
/// block, init, the partial last block through `ChaCha20_ctr32`, the lengths and the tag).
/// The outputs of the two compositions agree (the control that they compute the same
/// thing).
#[test]
fn cost_of_the_whole_aead() {
    let mut s = Sim::with(true);
    let (key, nonce, aad) = ([9u8; 32], [3u8; 12], [0x17u8; 13]);
    println!("{:>6} {:>14} {:>14} {:>14} {:>14}", "bytes", "seal c/B", "open c/B", "series seal", "series open");
    for len in [64usize, 256, 1024, 1400, 4096, 16384] {
        let pt = vec![0x33u8; len];
        let mut row = Vec::new();
        let mut results: Vec<(Vec<u8>, [u8; 16])> = Vec::new();
        for stitched in [true, false] {
            s.stitched = stitched;
            for seal in [true, false] {
                let text = if seal { pt.clone() } else { results[0].0.clone() };
                s.aead(seal, &key, &nonce, &aad, &text, &[], APART);
                let before = s.cycles;
                let r = s.aead(seal, &key, &nonce, &aad, &text, &[], APART);
                row.push((s.cycles - before) as f64 / len as f64);
                results.push(r);
            }
        }
        assert_eq!(results[0], results[2], "{len} B: seal, stitched and in series");
        assert_eq!(results[1], results[3], "{len} B: open, stitched and in series");
        assert_eq!((&results[1].0, results[1].1), (&pt, results[0].1), "{len} B: open inverts seal");
        println!("{len:>6} {:>14.2} {:>14.2} {:>14.2} {:>14.2}", row[0], row[1], row[2], row[3]);
    }
}

const AEAD_HARNESS: &str = r#"
typedef void (*bulk_fn)(unsigned char *, const unsigned char *, size_t, const unsigned int *, const unsigned int *, void *);
/* canaries.S: calls fn(a..f) with canaries in s0..s11 (and tp, sp kept), exits 99 if one changed */
void canary_call6(bulk_fn fn, unsigned char *a, const unsigned char *b, size_t c, const unsigned int *d, const unsigned int *e, void *f);
void clobber_s5(unsigned char *, const unsigned char *, size_t, const unsigned int *, const unsigned int *, void *);

static void pad16(void *ctx, const unsigned char *p, size_t n) {
  size_t whole = n & ~(size_t)15;
  poly1305_blocks_32_c906(ctx, p, whole, 1);
  if (n > whole) {
    unsigned char last[16] = {0};
    memcpy(last, p + whole, n - whole);
    poly1305_blocks_32_c906(ctx, last, 16, 1);
  }
}

/* RFC 8439's AEAD from kgen's functions; the whole blocks in two calls split at `split`. */
static void aead(int seal, const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t alen,
                 const unsigned char *in, unsigned char *out, size_t len, size_t split, unsigned char tag[16]) {
  unsigned int kw[8], ctr[4], s[4];
  unsigned char zero[32] = {0}, pk[32];
  double ctx[24];
  memcpy(kw, key, 32);
  ctr[0] = 0;
  memcpy(&ctr[1], nonce, 12);
  ChaCha20_ctr32_c906(pk, zero, 32, kw, ctr);
  poly1305_init_32_c906(ctx, pk, 0);
  pad16(ctx, aad, alen);
  size_t bulk = len & ~(size_t)63;
  split &= ~(size_t)63;
  if (split > bulk) split = bulk;
  bulk_fn f = seal ? chacha20_poly1305_seal_c906 : chacha20_poly1305_open_c906;
  ctr[0] = 1;
  canary_call6(f, out, in, split, kw, ctr, ctx);
  ctr[0] = 1 + split / 64;
  canary_call6(f, out + split, in + split, len - split, kw, ctr, ctx);
  ctr[0] = 1 + bulk / 64;
  if (seal) {
    ChaCha20_ctr32_c906(out + bulk, in + bulk, len - bulk, kw, ctr);
    pad16(ctx, out + bulk, len - bulk);
  } else {
    pad16(ctx, in + bulk, len - bulk);
    ChaCha20_ctr32_c906(out + bulk, in + bulk, len - bulk, kw, ctr);
  }
  unsigned long long lens[2] = {alen, len};
  poly1305_blocks_32_c906(ctx, (const unsigned char *)lens, 16, 1);
  memcpy(s, pk + 16, 16);
  poly1305_emit_32_c906(ctx, tag, s);
}

static void hexout(const unsigned char *b, size_t n) { for (size_t i = 0; i < n; i++) printf("%02x", b[i]); }

int main(void) {
  /* the canaries' control: input starting with X calls a function that changes s5 */
  int c0 = getchar();
  if (c0 == 'X') {
    canary_call6(clobber_s5, 0, 0, 0, 0, 0, 0);
    printf("the canaries missed s5\n");
    return 0;
  }
  ungetc(c0, stdin);
  unsigned long len, alen, io, oo, inplace, split, seed;
  char kh[80], nh[40];
  while (scanf("%lu %lu %lu %lu %lu %lu %79s %39s %lu", &len, &alen, &io, &oo, &inplace, &split, kh, nh, &seed) == 9) {
    unsigned char key[32], nonce[12], tag[16], tag2[16], aad[64];
    unhex(kh, key);
    unhex(nh, nonce);
    gen_bytes(seed ^ 0x5555, aad, alen);
    unsigned char *pt = malloc(len + 32), *a = malloc(len + 32), *b = malloc(len + 32);
    gen_bytes(seed, pt, len);
    memcpy(a + io, pt, len);
    unsigned char *ct = inplace ? a + io : b + oo;
    aead(1, key, nonce, aad, alen, a + io, ct, len, split, tag);
    printf("%016llx ", (unsigned long long)fnv(ct, len));
    hexout(tag, 16);
    /* open in place or into the other buffer */
    unsigned char *back = inplace ? ct : a + io;
    aead(0, key, nonce, aad, alen, ct, back, len, split, tag2);
    printf(" %d %d", memcmp(back, pt, len) == 0, memcmp(tag, tag2, 16) == 0);
    /* a flipped ciphertext bit changes the tag open computes */
    if (len > 0) {
      aead(1, key, nonce, aad, alen, pt, b, len, split, tag);
      b[len / 2] ^= 4;
      aead(0, key, nonce, aad, alen, b, a, len, split, tag2);
      printf(" %d", memcmp(tag, tag2, 16) != 0);
    } else {
      printf(" 1");
    }
    printf("\n");
    free(pt); free(a); free(b);
  }
  return 0;
}
"#;

#[test]
fn emitted_assembly_under_qemu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1305);
    let mut input = String::new();
    let mut want = Vec::new();
    let mut cases = Vec::new();
    for n in 0..10_000usize {
        let len = match n {
            0..=1100 => n,
            _ if n.is_multiple_of(100) => rng.random_range(1100..8000),
            _ => rng.random_range(0..=1100),
        };
        let alen = rng.random_range(0..=64);
        let (key, nonce, seed): ([u8; 32], [u8; 12], u64) = (rng.random(), rng.random(), rng.random());
        let (io, oo, inplace, split) = (rng.random_range(0..16), rng.random_range(0..16), (n.is_multiple_of(3)) as u8, rng.random_range(0..=len));
        input.push_str(&format!("{len} {alen} {io} {oo} {inplace} {split} {} {} {seed}\n", tohex(&key), tohex(&nonce)));
        let pt = common::gen_bytes(seed, len);
        let aad = common::gen_bytes(seed ^ 0x5555, alen);
        let sealed = ChaCha20Poly1305::new((&key).into()).encrypt((&nonce).into(), Payload { msg: &pt, aad: &aad }).unwrap();
        want.push(format!("{:016x} {} 1 1 1", common::fnv(&sealed[..len]), tohex(&sealed[len..])));
        cases.push(format!("len {len} aad {alen} offsets {io}/{oo} in place {inplace} split {split}"));
    }
    let dir = kgen_harness::oracle::scratch("chacha20_poly1305_qemu");
    let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
    let ms = modules(Abi::Psabi);
    let mut asm = Vec::new();
    let mut src = common::C_HELPERS.to_string();
    for m in &ms {
        asm.push((format!("{}-{}.S", m.kernel, m.variant), kgen_emit::openssl_s(m, &o).unwrap()));
        src.push_str(&common::header(&dir, m));
    }
    src.push_str(AEAD_HARNESS);
    asm.push(("canaries.S".to_string(), common::canaries_s()));
    let files: Vec<(&str, String)> = asm.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let Some(bin) = common::build(&dir, "chacha20-poly1305", &src, &files) else { return };
    let (q, cpu, bad) = common::emulator(&ms[0]);
    let Some(q) = q else { return };
    let control = common::run(&q, &cpu, &bin, "X\n");
    assert_eq!(control.status.code(), Some(99), "the canaries must catch a changed s5: {} {}", control.status, String::from_utf8_lossy(&control.stdout));
    let out = common::run(&q, &cpu, &bin, &input);
    assert!(out.status.success(), "under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
    let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(got.len(), want.len(), "-cpu {cpu}");
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "under qemu -cpu {cpu}: case {k}, {}", cases[k]);
    }
    println!("{} AEAD cases agree with RustCrypto under qemu -cpu {cpu}", got.len());
    let bad = bad.expect("a vector kernel has a CPU without the vector unit");
    let out = common::run(&q, &bad, &bin, &input);
    assert!(!out.status.success(), "must fault under -cpu {bad}");
    println!("-cpu {bad} refuses it ({})", out.status);
}

/// The Go forms on golang.org/x/crypto's `macState` (what `kgen go-patches` puts in
/// x/crypto's chacha20poly1305), in kgen-sim under Go's register rules: the AEAD as the
/// patched x/crypto builds it: `ChaCha20_ctr32` (Go form) for the Poly1305 key and the tail,
/// `poly1305`'s macState blocks function for the AAD, the padded tail and the lengths,
/// x/crypto's `finalize` (h mod 2^130 - 5, plus s) written out here. 1,200 cases of every
/// length 0..1100 and some longer, split and in place, against RustCrypto; x/crypto's s
/// (bytes 40..56 of the macState) is never written. Negative control: the context form of
/// the kernel on the same macState (it reads s1..s3 where macState has the key's s) gives
/// wrong tags.
#[test]
fn macstate_go_forms_against_rustcrypto() {
    struct Ms {
        e: Env,
        seal: u64,
        open: u64,
        ctr32: u64,
        blocks: u64,
    }
    fn sim(context_form: bool) -> Ms {
        let b = |k: &str, v: &str| kgen_kernels::kernel(k).unwrap().variant(v).unwrap().build(Abi::Go).unwrap();
        let mut m = if context_form { b("chacha20-poly1305", "c906") } else { cp::macstate_module("c906").unwrap() };
        for o in [b("chacha20", "c906"), p::macstate_module("32-c906").unwrap()] {
            m.funcs.extend(o.funcs);
            m.data.extend(o.data);
            m.aliases.extend(o.aliases);
        }
        let e = Env::new(&m.object().unwrap(), &m.target).unwrap().for_abi(Abi::Go);
        let f = |x: &kgen_dsl::entry::Entry| e.entry(x).unwrap_or_else(|err| panic!("{err}")).1;
        let (seal, open) = if context_form { (f(&cp::SEAL), f(&cp::OPEN)) } else { (f(&cp::MACSTATE_SEAL), f(&cp::MACSTATE_OPEN)) };
        Ms { seal, open, ctr32: f(&chacha::CTR32), blocks: f(&p::MACSTATE_BLOCKS), e }
    }
    /// x/crypto's finalize: (h mod 2^130 - 5) + s mod 2^128.
    fn finalize(st: &[u8]) -> [u8; 16] {
        let u = |i: usize| u64::from_le_bytes(st[8 * i..8 * i + 8].try_into().unwrap());
        let (mut lo, mut hi) = (u(0) as u128 | (u(1) as u128) << 64, u(2) as u128);
        let (plo, phi) = (u128::MAX - 4, 3u128);
        while (hi, lo) >= (phi, plo) {
            let (l, borrow) = lo.overflowing_sub(plo);
            (lo, hi) = (l, hi - phi - borrow as u128);
        }
        let s = u(5) as u128 | (u(6) as u128) << 64;
        lo.wrapping_add(s).to_le_bytes()
    }
    fn aead(s: &mut Ms, seal: bool, key: &[u8; 32], nonce: &[u8; 12], aad: &[u8], text: &[u8], cuts: &[usize], l: Layout) -> (Vec<u8>, [u8; 16]) {
        let n = text.len();
        let bulk = n & !63;
        let counter = |e: &mut Env, c: u32| {
            let mut w = c.to_le_bytes().to_vec();
            w.extend_from_slice(nonce);
            e.buffer(&w, 0, false)
        };
        let kb = s.e.buffer(key, 0, false);
        let pk = s.e.buffer(&[0u8; 32], 0, true);
        let c0 = counter(&mut s.e, 0);
        s.e.call(s.ctr32, &[pk, pk, 32, kb, c0]).unwrap();
        let polykey = s.e.read(pk, 32);
        // poly1305.New: h = 0, r clamped, s the key's second half.
        let mut ms = [0u8; 56];
        let r = |i: usize| u64::from_le_bytes(polykey[8 * i..8 * i + 8].try_into().unwrap());
        ms[24..32].copy_from_slice(&(r(0) & 0x0fff_fffc_0fff_ffff).to_le_bytes());
        ms[32..40].copy_from_slice(&(r(1) & 0x0fff_fffc_0fff_fffc).to_le_bytes());
        ms[40..56].copy_from_slice(&polykey[16..]);
        let st = s.e.buffer(&ms, 0, true);
        let padded = |s: &mut Ms, at: u64, len: usize| {
            let whole = len & !15;
            if whole > 0 {
                s.e.call(s.blocks, &[st, at, whole as u64, 1]).unwrap();
            }
            if len > whole {
                let mut last = s.e.read(at + whole as u64, len - whole);
                last.resize(16, 0);
                let b = s.e.buffer(&last, 0, false);
                s.e.call(s.blocks, &[st, b, 16, 1]).unwrap();
            }
        };
        let ab = s.e.buffer(aad, 0, false);
        padded(s, ab, aad.len());
        let inp = s.e.buffer(text, l.io, true);
        let out = if l.in_place { inp } else { s.e.buffer(&vec![0xa5; n], l.oo, true) };
        let mut starts: Vec<usize> = cuts.iter().map(|&c| c & !63).filter(|&c| c < bulk).collect();
        starts.push(0);
        starts.sort_unstable();
        starts.dedup();
        let f = if seal { s.seal } else { s.open };
        for (k, &a) in starts.iter().enumerate() {
            let b = starts.get(k + 1).copied().unwrap_or(bulk);
            if b > a {
                let cb = counter(&mut s.e, 1 + (a / 64) as u32);
                s.e.call(f, &[out + a as u64, inp + a as u64, (b - a) as u64, kb, cb, st]).unwrap_or_else(|x| panic!("len {n}: {x}"));
            }
        }
        let cb = counter(&mut s.e, 1 + (bulk / 64) as u32);
        let (ti, to, tail) = (inp + bulk as u64, out + bulk as u64, n - bulk);
        if seal {
            s.e.call(s.ctr32, &[to, ti, tail as u64, kb, cb]).unwrap();
            padded(s, to, tail);
        } else {
            padded(s, ti, tail);
            s.e.call(s.ctr32, &[to, ti, tail as u64, kb, cb]).unwrap();
        }
        let mut lens = (aad.len() as u64).to_le_bytes().to_vec();
        lens.extend_from_slice(&(n as u64).to_le_bytes());
        let lb = s.e.buffer(&lens, 0, false);
        s.e.call(s.blocks, &[st, lb, 16, 1]).unwrap();
        let after = s.e.read(st, 56);
        assert_eq!(after[40..], polykey[16..], "x/crypto's s is not touched (len {n})");
        (s.e.read(out, n), finalize(&after))
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5656);
    let mut s = sim(false);
    for n in 0..1200usize {
        if n % 200 == 199 {
            s = sim(false);
        }
        let len = if n <= 1100 { n } else { rng.random_range(1100..3000) };
        let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
        let aad: Vec<u8> = (0..rng.random_range(0..=40)).map(|_| rng.random()).collect();
        let pt: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let cuts: Vec<usize> = (0..rng.random_range(0..3)).map(|_| rng.random_range(0..=len)).collect();
        let l = Layout { io: rng.random_range(0..16), oo: rng.random_range(0..16), in_place: n.is_multiple_of(3) };
        let want = ChaCha20Poly1305::new((&key).into()).encrypt((&nonce).into(), Payload { msg: &pt, aad: &aad }).unwrap();
        let (ct, tag) = aead(&mut s, true, &key, &nonce, &aad, &pt, &cuts, l);
        let what = format!("macState Go form, case {n}: len {len} aad {} cuts {cuts:?} {l:?}", aad.len());
        assert_eq!([&ct[..], &tag[..]].concat(), want, "seal, {what}");
        let (back, tag2) = aead(&mut s, false, &key, &nonce, &aad, &ct, &cuts, l);
        assert!(back == pt && tag2 == tag, "open, {what}");
    }
    // Negative control: the context form reads s1..s3 from bytes 40..52, the key's s here.
    let mut bad = sim(true);
    let (mut wrong, mut cases) = (0, 0);
    for len in [64usize, 128, 300, 1000] {
        let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
        let pt: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let want = ChaCha20Poly1305::new((&key).into()).encrypt((&nonce).into(), Payload { msg: &pt, aad: b"" }).unwrap();
        let (ct, tag) = aead(&mut bad, true, &key, &nonce, b"", &pt, &[], APART);
        cases += 1;
        assert_eq!(ct[..], want[..len], "the keystream does not depend on the layout");
        wrong += usize::from(tag[..] != want[len..]);
    }
    assert_eq!(wrong, cases, "the context form on a macState must give wrong tags");
}

/// The macState Go forms leave no secret behind either: the key, the keystream, the
/// macState's h and r (and the s_i computed from r, which only live in registers) are not
/// in any register or in the 4 KiB below sp (the frame) after the call. Controls: the scan
/// finds what is left on purpose: the state pointer (in t0, reloaded for h's store) and a
/// marker written below the frame before the call.
#[test]
fn macstate_forms_wipe_their_secrets() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(56);
    let m = cp::macstate_module("c906").unwrap();
    for seal in [true, false] {
        for len in [64usize, 320, 1024] {
            let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().for_abi(Abi::Go);
            let f = e.entry(if seal { &cp::MACSTATE_SEAL } else { &cp::MACSTATE_OPEN }).unwrap().1;
            let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
            let mut ms: [u8; 56] = std::array::from_fn(|_| rng.random());
            ms[16..24].copy_from_slice(&3u64.to_le_bytes());
            let r0 = u64::from_le_bytes(ms[24..32].try_into().unwrap()) & 0x0fff_fffc_0fff_ffff;
            let r1 = u64::from_le_bytes(ms[32..40].try_into().unwrap()) & 0x0fff_fffc_0fff_fffc;
            ms[24..32].copy_from_slice(&r0.to_le_bytes());
            ms[32..40].copy_from_slice(&r1.to_le_bytes());
            let st = e.buffer(&ms, 0, true);
            let kb = e.buffer(&key, 0, false);
            let mut c = 7u32.to_le_bytes().to_vec();
            c.extend_from_slice(&nonce);
            let cb = e.buffer(&c, 0, false);
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let inp = e.buffer(&data, 0, false);
            let out = e.buffer(&vec![0; len], 0, true);
            // A marker deep in the stack region the scan covers (below the kernel's frame).
            let marker = 0x5eed_f00d_cafe_d00du64.to_le_bytes();
            e.m.mem.write_bytes(kgen_sim::call::CALL_SP - 4096 + 64, &marker);
            e.call(f, &[out, inp, len as u64, kb, cb, st]).unwrap();
            let keystream: Vec<u8> = e.read(out, len).iter().zip(&data).map(|(a, b)| a ^ b).collect();
            let after = e.read(st, 56);
            assert_eq!(after[24..], ms[24..], "r and x/crypto's s are not written");
            let what = format!("macState {} {len} B", if seal { "seal" } else { "open" });
            for (name, secret) in [("key", &key[..]), ("keystream", &keystream[..]), ("Poly1305 h, r", &after[..40])] {
                for w in secret.chunks(8).filter(|w| w.len() == 8 && w.iter().filter(|&&b| b != 0).count() >= 6) {
                    let left = e.scan_for_secret(w, 8);
                    assert!(left.is_empty(), "{what}: {name} bytes {w:02x?} left in {left:?}");
                }
            }
            let found = e.scan_for_secret(&st.to_le_bytes(), 8);
            assert!(found.contains(&"register t0".to_string()), "{what}: the scan sees registers: {found:?}");
            let found = e.scan_for_secret(&marker, 8);
            assert_eq!(found, ["stack below sp"], "{what}: the scan sees the stack");
            println!("{what}: nothing secret left; the controls are found (the state pointer in t0, the marker below sp)");
        }
    }
}
