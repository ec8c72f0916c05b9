//! `aes-gcm c906`'s and `aes-gcm-ct c906`'s bulk functions as OpenSSL's GCM code calls them:
//! the kernel takes the whole 128-byte groups (`aes-gcm-ct`: the whole blocks) of each
//! update, the rest is finished here with RustCrypto's `aes`
//! (CTR, `ctr::Ctr32BE`) and `ghash` from the state the kernel left (ivec's counter, Xi), and
//! the result is compared with RustCrypto's `aes-gcm` (random cases, every length
//! 0..1100, split calls), the GCM specification's test cases, Wycheproof's AES-GCM set, and,
//! for the functions' own contract, counters near the 2^32 wrap and arbitrary Xi. The key
//! schedule and table come from this project's `aes c906` and `ghash c906`. In kgen-sim
//! through the C ABI (callee-saved canaries checked on every call) and under T-Head's QEMU
//! `-cpu c906fdv` (refused by `c906fd`, which has no vector unit); nothing secret is left in
//! registers or on the stack; the constant-time lint finds only `aes-gcm`'s declared T-table
//! leak, and nothing in `aes-gcm-ct`.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use ghash::universal_hash::UniversalHash;
use kgen_dsl::Abi;
use kgen_dsl::entry::Entry;
use kgen_kernels::aes_gcm::{self as kg, GcmKey};
use kgen_kernels::aes_gcm_ct as kc;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

mod common;

/// What an AES-GCM caller sets up with other kernels before it calls the bulk functions:
/// the AES key schedule (`aes c906`'s `AES_set_encrypt_key`), H = E(K, 0) and the GHASH
/// table (`ghash c906`'s `gcm_init_c906`), computed by those kernels in kgen-sim. The
/// kernel's own [`GcmKey::new`] computes the same from the specifications (the known-answer
/// plan and the benchmark use it); `key_material_from_the_kernels_is_the_specifications`
/// checks they agree.
struct GcmSetup {
    aes: Env,
    ghash: Env,
}

impl GcmSetup {
    fn new() -> Result<GcmSetup, String> {
        let env = |k: &str| -> Result<Env, String> {
            let m = kgen_kernels::kernel(k).unwrap().variant(kg::GHASH_VARIANT).unwrap().build(Abi::Psabi).map_err(|e| e.to_string())?;
            Env::new(&m.object().map_err(|e| e.to_string())?, &m.target)
        };
        Ok(GcmSetup { aes: env("aes")?, ghash: env("ghash")? })
    }

    /// The material of `key` (16, 24 or 32 bytes).
    fn key(&mut self, key: &[u8]) -> Result<GcmKey, String> {
        let e = |x: kgen_sim::CallError| x.to_string();
        let a = &mut self.aes;
        let (_, set) = a.entry(&kgen_kernels::aes::SET_ENCRYPT_KEY)?;
        let (_, enc) = a.entry(&kgen_kernels::aes::ENCRYPT)?;
        let kb = a.buffer(key, 0, false);
        let ks = a.buffer(&[0u8; 244], 0, true);
        let r = a.call(set, &[kb, key.len() as u64 * 8, ks]).map_err(e)?;
        if r.a0 != 0 {
            return Err(format!("AES_set_encrypt_key({} bits) returned {}", key.len() * 8, r.a0 as i64));
        }
        let blk = a.buffer(&[0u8; 16], 0, true);
        a.call(enc, &[blk, blk, ks]).map_err(e)?;
        let h: [u8; 16] = a.read(blk, 16).try_into().expect("16 bytes");
        let schedule = a.read(ks, 244);
        let g = &mut self.ghash;
        let (_, init) = g.entry(&kgen_kernels::ghash::INIT)?;
        let hp = g.buffer(&kgen_kernels::ghash::host_words(h), 0, false);
        let table = g.buffer(&[0u8; 256], 0, true);
        g.call(init, &[table, hp]).map_err(e)?;
        Ok(GcmKey { schedule, h, htable: g.read(table, 256) })
    }
}

/// The key material the known-answer plan and the benchmark compute from the
/// specifications ([`GcmKey::new`]: FIPS-197's schedule and cipher, SP 800-38D's
/// multiplication, the table layout the GHASH kernel documents) is what the `aes` and
/// `ghash` kernels compute in kgen-sim, for every key size and random keys; and both
/// differ for a key one bit apart (the control).
#[test]
fn key_material_from_the_kernels_is_the_specifications() {
    let mut setup = GcmSetup::new().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x9c);
    for n in 0..60 {
        let len = [16, 24, 32][n % 3];
        let key: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let want = setup.key(&key).unwrap();
        assert_eq!(GcmKey::new(&key), want, "key {}", tohex(&key));
        let mut other = key.clone();
        other[n % len] ^= 1 << (n % 8);
        assert_ne!(GcmKey::new(&other), want, "key {}: the control", tohex(&key));
    }
}

/// A kernel with OpenSSL's bulk AES-GCM functions, and how much of a call they take.
struct Kind {
    kernel: &'static str,
    enc: &'static Entry,
    dec: &'static Entry,
    /// The functions process the longest prefix made of whole `unit`-byte pieces.
    unit: usize,
    /// The AES kernel whose `AES_set_encrypt_key` and `AES_encrypt` the caller has.
    aes: &'static str,
}

/// `aes-gcm c906`: T-table AES stitched with the vector GHASH, whole 128-byte groups.
const STITCHED: Kind = Kind { kernel: "aes-gcm", enc: &kg::ENCRYPT, dec: &kg::DECRYPT, unit: 128, aes: "aes" };
/// `aes-gcm-ct c906`: constant time, every whole block.
const CT: Kind = Kind { kernel: "aes-gcm-ct", enc: &kc::ENCRYPT, dec: &kc::DECRYPT, unit: 16, aes: "aes-ct" };

fn module(kind: &Kind) -> kgen_dsl::Module {
    kgen_kernels::kernel(kind.kernel).unwrap().variant("c906").unwrap().build(Abi::Psabi).unwrap_or_else(|e| panic!("{e}"))
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn pad16(v: &[u8]) -> Vec<u8> {
    let mut v = v.to_vec();
    v.resize(v.len().div_ceil(16) * 16, 0);
    v
}

fn aes_block(key: &[u8], b: [u8; 16]) -> [u8; 16] {
    let mut blk = aes::Block::from(b);
    match key.len() {
        16 => aes::Aes128::new_from_slice(key).unwrap().encrypt_block(&mut blk),
        24 => aes::Aes192::new_from_slice(key).unwrap().encrypt_block(&mut blk),
        _ => aes::Aes256::new_from_slice(key).unwrap().encrypt_block(&mut blk),
    }
    blk.into()
}

/// RustCrypto's GHASH continued from state `xi` over `msg` (a multiple of 16 bytes).
fn ghash_from(h: &[u8; 16], xi: &[u8; 16], msg: &[u8]) -> [u8; 16] {
    if msg.is_empty() {
        return *xi;
    }
    let mut g = ghash::GHash::new(&(*h).into());
    let first: [u8; 16] = std::array::from_fn(|i| msg[i] ^ xi[i]);
    g.update(&[first.into()]);
    let rest: Vec<ghash::Block> = msg[16..].chunks(16).map(|c| <[u8; 16]>::try_from(c).unwrap().into()).collect();
    g.update(&rest);
    g.finalize().into()
}

fn counter(iv: &[u8; 16]) -> u32 {
    u32::from_be_bytes(iv[12..].try_into().unwrap())
}

fn with_counter(iv: &[u8; 16], c: u32) -> [u8; 16] {
    let mut v = *iv;
    v[12..].copy_from_slice(&c.to_be_bytes());
    v
}

/// `data` XOR the keystream from counter block `iv` (RustCrypto's `ctr::Ctr32BE`; the
/// counter wraps mod 2^32 as GCM's inc32 does, so a wrap starts a second instance).
fn ctr32(key: &[u8], iv: &[u8; 16], data: &[u8]) -> Vec<u8> {
    use ctr::cipher::{KeyIvInit, StreamCipher};
    let mut out = data.to_vec();
    let mut iv = *iv;
    let mut at = 0;
    while at < out.len() {
        let room = (u32::MAX - counter(&iv)) as usize + 1;
        let n = (out.len() - at).min(room.saturating_mul(16));
        let chunk = &mut out[at..at + n];
        match key.len() {
            16 => ctr::Ctr32BE::<aes::Aes128>::new_from_slices(key, &iv).unwrap().apply_keystream(chunk),
            24 => ctr::Ctr32BE::<aes::Aes192>::new_from_slices(key, &iv).unwrap().apply_keystream(chunk),
            _ => ctr::Ctr32BE::<aes::Aes256>::new_from_slices(key, &iv).unwrap().apply_keystream(chunk),
        }
        at += n;
        iv = with_counter(&iv, counter(&iv).wrapping_add((n / 16) as u32));
    }
    out
}

/// What one call of a bulk function did.
#[derive(Debug, PartialEq, Eq)]
struct Bulk {
    done: usize,
    out: Vec<u8>,
    ivec: [u8; 16],
    xi: [u8; 16],
}

/// The contract, computed with RustCrypto: the whole `unit`-byte pieces of `input` processed,
/// the counter advanced by their blocks, Xi over their ciphertext.
fn bulk_reference(unit: usize, key: &[u8], h: &[u8; 16], decrypt: bool, ivec: &[u8; 16], xi: &[u8; 16], input: &[u8]) -> Bulk {
    let done = input.len() / unit * unit;
    let out = ctr32(key, ivec, &input[..done]);
    let ct = if decrypt { &input[..done] } else { &out[..] };
    Bulk { done, xi: ghash_from(h, xi, ct), ivec: with_counter(ivec, counter(ivec).wrapping_add((done / 16) as u32)), out }
}

/// The kernel in kgen-sim, with the key material the caller sets up.
struct Sim {
    e: Env,
    setup: GcmSetup,
    enc: u64,
    dec: u64,
    unit: usize,
}

/// A key with its material and, in the simulator, its schedule.
struct Key {
    bytes: Vec<u8>,
    gk: GcmKey,
    schedule: u64,
}

impl Sim {
    fn new(kind: &Kind) -> Sim {
        let m = module(kind);
        Sim::with_env(kind, Env::new(&m.object().unwrap(), &m.target).unwrap())
    }
    fn with_env(kind: &Kind, e: Env) -> Sim {
        let (enc, dec) = (e.sym(&kind.enc.symbol("c906")), e.sym(&kind.dec.symbol("c906")));
        Sim { e, setup: GcmSetup::new().unwrap(), enc, dec, unit: kind.unit }
    }

    fn key(&mut self, bytes: &[u8]) -> Key {
        let gk = self.setup.key(bytes).unwrap();
        let schedule = self.e.buffer(&gk.schedule, 0, false);
        Key { bytes: bytes.to_vec(), gk, schedule }
    }

    /// One call on `input` at byte offset `off` (out at `out_off`, or in place).
    fn call(&mut self, k: &Key, decrypt: bool, ivec: &[u8; 16], xi: &[u8; 16], input: &[u8], off: usize, out_off: Option<usize>) -> Bulk {
        let e = &mut self.e;
        let inp = e.buffer(input, off, true);
        let out = match out_off {
            Some(o) => e.buffer(&vec![0xee; input.len() + 16], o, true),
            None => inp,
        };
        let iv = e.buffer(ivec, 0, true);
        let ctx = e.buffer(&k.gk.context(xi), 0, true);
        let f = if decrypt { self.dec } else { self.enc };
        let r = e.call(f, &[inp, out, input.len() as u64, k.schedule, iv, ctx]).unwrap_or_else(|x| panic!("{x}"));
        let done = r.a0 as usize;
        if out_off.is_some() {
            assert!(e.read(out + done as u64, input.len() - done + 16).iter().all(|&b| b == 0xee), "wrote past the processed bytes");
        }
        let ctx_after = e.read(ctx, 288);
        assert_eq!(ctx_after[16..], k.gk.context(xi)[16..], "H and Htable are not written");
        Bulk { done, out: e.read(out, done), ivec: e.read(iv, 16).try_into().unwrap(), xi: ctx_after[..16].try_into().unwrap() }
    }
}

/// J0 for a nonce of any length (SP 800-38D 7.1).
fn j0(h: &[u8; 16], iv: &[u8]) -> [u8; 16] {
    if iv.len() == 12 {
        let mut j = [0u8; 16];
        j[..12].copy_from_slice(iv);
        j[15] = 1;
        return j;
    }
    let mut m = pad16(iv);
    m.extend_from_slice(&[0u8; 8]);
    m.extend_from_slice(&(iv.len() as u64 * 8).to_be_bytes());
    ghash_from(h, &[0; 16], &m)
}

/// A whole AES-GCM encryption (or decryption) as OpenSSL's caller runs it: the AAD hashed,
/// then each part of `text` (all but the last a multiple of 16 bytes) through the kernel,
/// the rest of each part finished with RustCrypto; then the lengths and the tag. The
/// kernel's returned count and counter are checked on every call. Returns (output, tag).
fn gcm(s: &mut Sim, k: &Key, decrypt: bool, iv: &[u8], aad: &[u8], text: &[u8], parts: &[usize], off: usize, inplace: bool) -> (Vec<u8>, [u8; 16]) {
    let h = k.gk.h;
    let j = j0(&h, iv);
    let mut xi = ghash_from(&h, &[0; 16], &pad16(aad));
    let mut ivec = with_counter(&j, counter(&j).wrapping_add(1));
    let mut out = Vec::new();
    let mut at = 0;
    for (n, &len) in parts.iter().enumerate() {
        assert!(n + 1 == parts.len() || len % 16 == 0);
        let part = &text[at..at + len];
        let b = s.call(k, decrypt, &ivec, &xi, part, (off + n) % 16, if inplace { None } else { Some((off + 3 * n) % 16) });
        assert_eq!(b.done, len / s.unit * s.unit, "the whole groups (blocks) are done");
        let want_ivec = with_counter(&ivec, counter(&ivec).wrapping_add((b.done / 16) as u32));
        assert_eq!(b.ivec, want_ivec, "ivec's counter advanced by the blocks done, bytes 0..12 unchanged");
        out.extend_from_slice(&b.out);
        let rest = ctr32(&k.bytes, &b.ivec, &part[b.done..]);
        let ct_rest = if decrypt { &part[b.done..] } else { &rest[..] };
        xi = ghash_from(&h, &b.xi, &pad16(ct_rest));
        ivec = with_counter(&b.ivec, counter(&b.ivec).wrapping_add(rest.len().div_ceil(16) as u32));
        out.extend_from_slice(&rest);
        at += len;
    }
    let mut lens = (aad.len() as u64 * 8).to_be_bytes().to_vec();
    lens.extend_from_slice(&(text.len() as u64 * 8).to_be_bytes());
    xi = ghash_from(&h, &xi, &lens);
    let ek = aes_block(&k.bytes, j);
    (out, std::array::from_fn(|i| xi[i] ^ ek[i]))
}

/// RustCrypto's AES-GCM (12-byte nonce): (ciphertext, tag).
fn rustcrypto_seal(key: &[u8], nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    use aes_gcm::aead::AeadInOut;
    let mut buf = pt.to_vec();
    let n = aes_gcm::Nonce::<aes_gcm::aead::consts::U12>::from(*nonce);
    let tag = match key.len() {
        16 => aes_gcm::Aes128Gcm::new_from_slice(key).unwrap().encrypt_inout_detached(&n, aad, buf.as_mut_slice().into()),
        24 => aes_gcm::AesGcm::<aes::Aes192, aes_gcm::aead::consts::U12>::new_from_slice(key).unwrap().encrypt_inout_detached(&n, aad, buf.as_mut_slice().into()),
        _ => aes_gcm::Aes256Gcm::new_from_slice(key).unwrap().encrypt_inout_detached(&n, aad, buf.as_mut_slice().into()),
    }
    .unwrap();
    (buf, tag.into())
}

/// Random split points: parts of whole blocks, the last one any length.
fn random_parts(rng: &mut impl Rng, len: usize, split: bool) -> Vec<usize> {
    if !split || len < 32 {
        return vec![len];
    }
    let mut parts = Vec::new();
    let mut left = len;
    while left > 0 {
        let blocks = rng.random_range(0..=left / 16);
        if blocks == 0 || rng.random_range(0..4) == 0 {
            parts.push(left);
            break;
        }
        parts.push(16 * blocks);
        left -= 16 * blocks;
    }
    parts
}

/// 10,000 random messages (AES-128/192/256, every length 0..=1100 and some of 16 KiB, random
/// AAD, one call or split calls, misaligned and in-place buffers), encrypted and decrypted
/// with the kernel in the loop, against RustCrypto's `aes-gcm`.
fn random_against_rustcrypto(kind: &Kind, seed: u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut s = Sim::new(kind);
    let (mut cases, mut bulk_bytes) = (0usize, 0usize);
    let mut k = s.key(&[0u8; 16]);
    for n in 0..10_000usize {
        if n % 25 == 0 {
            let size = [16usize, 24, 32][n / 25 % 3];
            let bytes: Vec<u8> = (0..size).map(|_| rng.random()).collect();
            k = s.key(&bytes);
        }
        let len = if n % 1000 == 999 { 16384 + 16 * rng.random_range(0..8) + rng.random_range(0..16) } else { n % 1101 };
        let pt: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let aad: Vec<u8> = (0..rng.random_range(0..40)).map(|_| rng.random()).collect();
        let nonce: [u8; 12] = rng.random();
        let parts = random_parts(&mut rng, len, n % 3 == 1);
        let (off, inplace) = (rng.random_range(0..16), n % 2 == 0);
        let (want_ct, want_tag) = rustcrypto_seal(&k.bytes, &nonce, &aad, &pt);
        let (ct, tag) = gcm(&mut s, &k, false, &nonce, &aad, &pt, &parts, off, inplace);
        assert_eq!((tohex(&ct), tag), (tohex(&want_ct), want_tag), "encrypt: case {n}, AES-{}, {len} bytes, parts {parts:?}", 8 * k.bytes.len());
        let (back, tag2) = gcm(&mut s, &k, true, &nonce, &aad, &ct, &parts, off + 5, !inplace);
        assert_eq!((back == pt, tag2), (true, want_tag), "decrypt: case {n}, {len} bytes, parts {parts:?}");
        cases += 1;
        bulk_bytes += parts.iter().map(|p| p / kind.unit * kind.unit).sum::<usize>();
    }
    println!("{}: {cases} random AES-GCM messages agree with RustCrypto aes-gcm, encrypted and decrypted ({bulk_bytes} bytes each way through the kernel)", kind.kernel);
}

#[test]
fn random_against_rustcrypto_aes_gcm() {
    random_against_rustcrypto(&STITCHED, 14);
}

#[test]
fn random_against_rustcrypto_aes_gcm_ct() {
    random_against_rustcrypto(&CT, 24);
}



/// The functions' contract from any state: counters just below the 2^32 wrap (the wrap
/// leaves bytes 0..12 alone), low-byte runs ending inside a group, arbitrary Xi, every
/// group count 0..=12 (`aes-gcm-ct`: every block count 0..=64) and partial tails,
/// misaligned and in place, both directions.
fn contract(kind: &Kind, seed: u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut s = Sim::new(kind);
    let counts = if kind.unit == 16 { 65 } else { 13 };
    let mut k = s.key(&[1u8; 16]);
    for n in 0..600usize {
        if n % 30 == 0 {
            let size = [16usize, 24, 32][n / 30 % 3];
            let bytes: Vec<u8> = (0..size).map(|_| rng.random()).collect();
            k = s.key(&bytes);
        }
        let ctr: u32 = match n % 4 {
            0 => u32::MAX - rng.random_range(0..200),
            1 => (rng.random::<u32>() & !0xff) | rng.random_range(0xf0..=0xff),
            2 => rng.random(),
            _ => rng.random_range(0..4),
        };
        let iv = with_counter(&rng.random(), ctr);
        let xi: [u8; 16] = if n % 7 == 0 { [0xff; 16] } else { rng.random() };
        let len = kind.unit * (n % counts) + if n % 2 == 0 { rng.random_range(0..kind.unit) } else { 0 };
        let input: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        for decrypt in [false, true] {
            let got = s.call(&k, decrypt, &iv, &xi, &input, rng.random_range(0..16), if n % 3 == 0 { None } else { Some(rng.random_range(0..16)) });
            assert_eq!(got, bulk_reference(kind.unit, &k.bytes, &k.gk.h, decrypt, &iv, &xi, &input), "{}: case {n}: decrypt {decrypt}, counter {ctr:#x}, {len} bytes", kind.kernel);
        }
    }
}

#[test]
fn contract_from_any_counter_and_xi() {
    contract(&STITCHED, 15);
}

#[test]
fn contract_from_any_counter_and_xi_ct() {
    contract(&CT, 25);
}



/// Test cases 1-18 of the GCM specification (McGrew & Viega): AES-128/192/256, 12-byte and
/// other IVs. Their messages are at most 64 bytes, below a group: `aes-gcm` must return 0
/// and leave the state alone, and the caller's code finishes them; `aes-gcm-ct` takes their
/// whole blocks (the tags match).
#[test]
fn gcm_spec_test_cases() {
    let k1 = "feffe9928665731c6d6a8f9467308308";
    let p = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
    let p4 = &p[..120];
    let a = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
    let z = "00000000000000000000000000000000";
    let key_of = |bits: usize| match bits {
        128 => k1.to_string(),
        192 => format!("{k1}{}", &k1[..16]),
        _ => format!("{k1}{k1}"),
    };
    let zkey = |bits: usize| "00".repeat(bits / 8);
    // (key, iv, pt, aad, ct, tag) for test cases 1..18.
    let mut cases: Vec<(String, &str, &str, &str, &str, &str)> = Vec::new();
    let ivs = ["cafebabefacedbaddecaf888", "cafebabefacedbad", "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b"];
    // Per key size, cases 1, 2, 3 (7, 8, 9; 13, 14, 15): [case 2's ct, case 1's tag, case
    // 2's tag, case 3's ct, case 3's tag].
    #[rustfmt::skip]
    let data: [[&str; 5]; 3] = [
        ["0388dace60b6a392f328c2b971b2fe78", "58e2fccefa7e3061367f1d57a4e7455a", "ab6e47d42cec13bdf53a67b21257bddf",
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985", "4d5c2af327cd64a62cf35abd2ba6fab4"],
        ["98e7247c07f0fe411c267e4384b0f600", "cd33b28ac773f74ba00ed1f312572435", "2ff58d80033927ab8ef4d4587514f0fb",
         "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256", "9924a7c8587336bfb118024db8674a14"],
        ["cea7403d4d606b6e074ec5d3baf39d18", "530f8afbc74536b9a963b4f1c4cb738b", "d0d1c8a799996bf0265b98b5d48ab919",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad", "b094dac5d93471bdec1a502270e3cc6c"],
    ];
    for (i, bits) in [128usize, 192, 256].into_iter().enumerate() {
        let d = &data[i];
        cases.push((zkey(bits), "000000000000000000000000", "", "", "", d[1]));
        cases.push((zkey(bits), "000000000000000000000000", z, "", d[0], d[2]));
        cases.push((key_of(bits), ivs[0], p, "", d[3], d[4]));
    }
    let mut checked = 0;
    for kind in [&STITCHED, &CT] {
        let mut s = Sim::new(kind);
        for (key, iv, pt, aad, ct, tag) in &cases {
            let k = s.key(&hex(key));
            let (got_ct, got_tag) = gcm(&mut s, &k, false, &hex(iv), &hex(aad), &hex(pt), &[hex(pt).len()], 3, false);
            assert_eq!(tohex(&got_ct), *ct, "key {key}");
            assert_eq!(tohex(&got_tag), *tag, "key {key}");
            let (back, tag2) = gcm(&mut s, &k, true, &hex(iv), &hex(aad), &hex(ct), &[hex(ct).len()], 0, true);
            assert_eq!((tohex(&back), tohex(&tag2)), (pt.to_string(), tag.to_string()));
            checked += 1;
        }
        // Cases 4..6, 10..12, 16..18: AAD, 60-byte plaintext, 12-, 8- and 60-byte IVs, checked
        // against RustCrypto-built GCM here (the spec's values for 4 are spelled out).
        let (ct4, tag4) = ("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091", "5bc94fbc3221a5db94fae95ae7121a47");
        let k = s.key(&hex(k1));
        let (c, t) = gcm(&mut s, &k, false, &hex(ivs[0]), &hex(a), &hex(p4), &[60], 0, true);
        assert_eq!((tohex(&c), tohex(&t)), (ct4.to_string(), tag4.to_string()), "test case 4");
        checked += 1;
        for bits in [128usize, 192, 256] {
            let k = s.key(&hex(&key_of(bits)));
            for iv in ivs {
                let (c, t) = gcm(&mut s, &k, false, &hex(iv), &hex(a), &hex(p4), &[60], 1, false);
                let (back, t2) = gcm(&mut s, &k, true, &hex(iv), &hex(a), &c, &[60], 2, false);
                assert_eq!((tohex(&back), t2), (p4.to_string(), t));
                if iv.len() == 24 {
                    let (wc, wt) = rustcrypto_seal(&k.bytes, &hex(iv).try_into().unwrap(), &hex(a), &hex(p4));
                    assert_eq!((c, t), (wc, wt), "AES-{bits}, 12-byte IV");
                }
                checked += 1;
            }
        }
    }
    println!("{checked} GCM specification cases agree (aes-gcm and aes-gcm-ct)");
}

/// Every AES-GCM test of Wycheproof (nonces of any length; messages up to 513 bytes, so
/// the kernel takes one to four groups of the long ones; the CounterWrap tests' counters
/// wrap inside them): valid tests give the expected ciphertext and tag, invalid ones
/// (altered tag, ciphertext or AAD) a different tag on decryption.
#[test]
fn wycheproof_aes_gcm() {
    let set = wycheproof::aead::TestSet::load(wycheproof::aead::TestName::AesGcm).unwrap();
    for kind in [&STITCHED, &CT] {
        let mut s = Sim::new(kind);
        let (mut valid, mut invalid, mut through_kernel, mut wraps) = (0, 0, 0, 0);
        for g in &set.test_groups {
            if g.nonce_size == 0 {
                continue; // GCM needs a non-empty IV
            }
            for t in &g.tests {
                let k = s.key(&t.key);
                let (back, tag) = gcm(&mut s, &k, true, &t.nonce, &t.aad, &t.ct, &[t.ct.len()], 1, false);
                let want = t.result != wycheproof::TestResult::Invalid;
                assert_eq!(tag[..t.tag.len()] == t.tag[..], want, "wycheproof test {} ({:?})", t.tc_id, t.flags);
                if want {
                    assert_eq!(back, t.pt.to_vec(), "wycheproof test {}: plaintext", t.tc_id);
                    let (ct, tag) = gcm(&mut s, &k, false, &t.nonce, &t.aad, &t.pt, &[t.pt.len()], 0, true);
                    assert_eq!((ct, &tag[..t.tag.len()]), (t.ct.to_vec(), &t.tag[..]), "wycheproof test {}: encryption", t.tc_id);
                    valid += 1;
                } else {
                    invalid += 1;
                }
                through_kernel += usize::from(t.ct.len() >= kind.unit);
                wraps += usize::from(t.flags.contains(&wycheproof::aead::TestFlag::CounterWrap));
            }
        }
        assert!(valid > 100 && invalid > 50 && through_kernel >= 20 && wraps > 0, "{valid} {invalid} {through_kernel} {wraps}");
        println!("{}: {valid} valid and {invalid} invalid Wycheproof AES-GCM tests agree ({through_kernel} with whole groups for the kernel, {wraps} counter-wrap tests)", kind.kernel);
    }
}

/// After calls through the kernel, no 6-byte window of the round keys, of H or the table
/// (see [`table_left`]), of the keystream, of the plaintext or of Xi (in and out) is left in
/// a register (integer or vector) or in the stack. Negative control: a table word planted in
/// a vector register is found.
#[test]
fn leaves_no_secret() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    for kind in [&STITCHED, &CT] {
        let mut s = Sim::new(kind);
        for (bits, len) in [(128usize, 128usize), (192, 700), (256, 2048)] {
            let bytes: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
            let k = s.key(&bytes);
            let iv = with_counter(&rng.random(), 0xffff_fff0);
            let xi: [u8; 16] = rng.random();
            let pt: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            for decrypt in [false, true] {
                let b = s.call(&k, decrypt, &iv, &xi, &pt, 0, Some(0));
                let keystream: Vec<u8> = b.out.iter().zip(&pt).map(|(x, y)| x ^ y).collect();
                let rounds = 16 * (bits / 32 + 7);
                let plain = if decrypt { &b.out[..] } else { &pt[..b.done] };
                assert_eq!(table_left(&mut s.e, &k.gk.htable), Vec::<String>::new(), "{}: AES-{bits}, {len} bytes, decrypt {decrypt}: Htable", kind.kernel);
                for (what, secret) in [
                    ("round keys", &k.gk.schedule[..rounds]),
                    ("H", &k.gk.h[..]),
                    ("keystream", &keystream[..]),
                    ("plaintext", plain),
                    ("Xi in", &xi[..]),
                    ("Xi out", &b.xi[..]),
                ] {
                    assert_eq!(s.e.scan_for_secret(secret, 6), Vec::<String>::new(), "{}: AES-{bits}, {len} bytes, decrypt {decrypt}: {what}", kind.kernel);
                }
            }
            let vb = s.e.m.hart.vlenb;
            s.e.m.hart.v[9 * vb..9 * vb + 8].copy_from_slice(&k.gk.htable[200..208]);
            assert_eq!(table_left(&mut s.e, &k.gk.htable), vec!["register v9".to_string()]);
        }
    }
}

/// Where 6-byte windows of the GHASH table with at least two nonzero bytes are left. The
/// table's words are class-masked (sparse by construction), and a window with one nonzero
/// byte also matches a pointer's bytes (`aes-gcm-ct` keeps spilled pointers in its frame,
/// public data it need not wipe).
fn table_left(e: &mut Env, table: &[u8]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for w in table.windows(6).filter(|w| w.iter().filter(|&&b| b != 0).count() >= 2) {
        for f in e.scan_for_secret(w, 6) {
            if !found.contains(&f) {
                found.push(f);
            }
        }
    }
    found
}

/// The checks' constant-time lint reports only the declared T-table leak (AES's table
/// lookups), and reports it: a declaration nothing needed would be an error.
#[test]
fn constant_time_lint_only_the_tables() {
    let m = module(&STITCHED);
    for l in &m.funcs {
        assert!(!l.findings.is_empty(), "{}: the T-table lookups are found", l.func.name);
        for x in &l.findings {
            assert!(x.declared, "{}: {x:?}", l.func.name);
            assert_eq!(x.check, kgen_dsl::check::Check::SecretAddress, "{}: {x:?}", l.func.name);
        }
        assert_eq!(l.func.leaks.len(), 1);
        assert_eq!(l.func.leaks[0].reason, kgen_kernels::aes::TABLE_LEAK);
    }
}

/// `aes-gcm-ct` declares no leak and the constant-time lint finds none (branches, addresses,
/// multiplies, divisions), in either function.
#[test]
fn aes_gcm_ct_is_constant_time_by_the_checks() {
    let m = module(&CT);
    assert_eq!(m.funcs.len(), 2);
    for l in &m.funcs {
        assert!(l.func.leaks.is_empty(), "{}: {:?}", l.func.name, l.func.leaks);
        assert!(l.findings.is_empty(), "{}: {:?}", l.func.name, l.findings);
    }
}

/// Modeled cycles per byte (printed; the bounds are the targets): AES-128 encrypt and
/// decrypt at most 40 c/B at 16 KiB and 45 c/B at 1408 bytes (11 groups), every multiply
/// on the C906's short path; `aes-gcm` and `aes-gcm-ct`.
#[test]
fn cost() {
    for kind in [&STITCHED, &CT] {
        let m = module(kind);
        println!("{} c906:", kind.kernel);
        let mut s = Sim::with_env(kind, Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model());
        let k = s.key(&[0x2b; 16]);
        for len in [128usize, 256, 1024, 1408, 4096, 16384] {
            for (decrypt, f) in [(false, s.enc), (true, s.dec)] {
                let e = &mut s.e;
                let buf = e.buffer(&vec![0x5a; len], 0, true);
                let iv = e.buffer(&with_counter(&[7; 16], 2), 0, true);
                let ctx = e.buffer(&k.gk.context(&[0; 16]), 0, true);
                e.call(f, &[buf, buf, len as u64, k.schedule, iv, ctx]).unwrap();
                let r = e.call(f, &[buf, buf, len as u64, k.schedule, iv, ctx]).unwrap();
                let cpb = r.cycles as f64 / len as f64;
                println!("{len:6} bytes: {} {cpb:6.2} c/B, {:6.2} instructions/B", if decrypt { "decrypt" } else { "encrypt" }, r.instructions as f64 / len as f64);
                assert_eq!(r.long_muls, 0, "every multiply on the 3-cycle path");
                assert_eq!(r.a0 as usize, len);
                let bound = match len {
                    16384 => Some(40.0),
                    1408 => Some(45.0),
                    _ => None,
                };
                if let Some(b) = bound {
                    assert!(cpb <= b, "{} at {len} bytes: {cpb:.2} c/B > {b}", if decrypt { "decrypt" } else { "encrypt" });
                }
            }
        }
    }
}

/// The calls OpenSSL 3.5 makes for one AES-128-GCM message (12-byte nonce, no AAD), each
/// timed on the C906 model in its own kernel's kgen-sim (`aes c906`, `ghash c906`,
/// `aes-gcm c906`): `AES_encrypt(J0)` for the tag's mask (`CRYPTO_gcm128_setiv`); with
/// `stitched`, `aes_gcm_encrypt`/`_decrypt` on the whole 128-byte groups
/// (`generic_aes_gcm_cipher_update`), else nothing; then `CRYPTO_gcm128_en/decrypt_ctr32`
/// on the rest: `AES_ctr32_encrypt` and `gcm_ghash` over the whole blocks in chunks of
/// `GHASH_CHUNK` (3 KiB; decrypt hashes first), `AES_encrypt` of the counter for a partial
/// block; `CRYPTO_gcm128_finish`: one `gcm_ghash` of the partial block (zero-padded) and the
/// lengths. The C around the calls is not counted. Returns (ciphertext or plaintext, tag,
/// modeled cycles of the calls).
struct Openssl {
    aes: Env,
    ghash: Env,
    gcm: Env,
    stitched: [&'static Entry; 2],
}

impl Openssl {
    /// With `gcm`'s bulk functions and the AES functions of its AES kernel (variant c906):
    /// `aes`, or `aes-ct`, whose counter mode OpenSSL's series gives every call of at least
    /// its crossover (9 blocks; each call here is 87 blocks or more).
    fn new(gcm: &Kind) -> Openssl {
        let env = |k: &str| {
            let m = kgen_kernels::kernel(k).unwrap().variant("c906").unwrap().build(Abi::Psabi).unwrap_or_else(|e| panic!("{e}"));
            Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model()
        };
        Openssl { aes: env(gcm.aes), ghash: env("ghash"), gcm: env(gcm.kernel), stitched: [gcm.enc, gcm.dec] }
    }

    fn message(&mut self, gk: &GcmKey, nonce: &[u8; 12], text: &[u8], decrypt: bool, stitched: bool) -> (Vec<u8>, [u8; 16], u64) {
        let mut cycles = 0u64;
        let mut tally = |o: kgen_sim::Outcome| {
            assert_eq!(o.long_muls, 0, "every multiply on the 3-cycle path");
            cycles += o.cycles;
        };
        let a = &mut self.aes;
        let ks = a.buffer(&gk.schedule, 0, false);
        let (aes_encrypt, ctr32) = (a.sym("AES_encrypt"), a.sym("AES_ctr32_encrypt"));
        let block = |a: &mut Env, b: &[u8; 16], tally: &mut dyn FnMut(kgen_sim::Outcome)| -> [u8; 16] {
            let p = a.buffer(b, 0, true);
            tally(a.call(aes_encrypt, &[p, p, ks]).unwrap());
            a.read(p, 16).try_into().unwrap()
        };
        let mut j = [0u8; 16];
        j[..12].copy_from_slice(nonce);
        j[15] = 1;
        let ek0 = block(a, &j, &mut tally);
        let mut yi = with_counter(&j, 2);
        let mut xi = [0u8; 16];
        let g = &mut self.ghash;
        let (gh, table) = (g.sym(&kgen_kernels::ghash::GHASH.symbol("c906")), g.buffer(&gk.htable, 0, false));
        let ghash = |g: &mut Env, xi: &mut [u8; 16], data: &[u8], tally: &mut dyn FnMut(kgen_sim::Outcome)| {
            let (x, d) = (g.buffer(xi, 0, true), g.buffer(data, 0, false));
            tally(g.call(gh, &[x, table, d, data.len() as u64]).unwrap());
            *xi = g.read(x, 16).try_into().unwrap();
        };
        let mut out = Vec::with_capacity(text.len());
        let mut at = 0;
        if stitched {
            let e = &mut self.gcm;
            let f = e.sym(&self.stitched[usize::from(decrypt)].symbol("c906"));
            let (buf, ks2) = (e.buffer(text, 0, true), e.buffer(&gk.schedule, 0, false));
            let (iv, ctx) = (e.buffer(&yi, 0, true), e.buffer(&gk.context(&xi), 0, true));
            let r = e.call(f, &[buf, buf, text.len() as u64, ks2, iv, ctx]).unwrap();
            at = r.a0 as usize;
            tally(r);
            out.extend_from_slice(&e.read(buf, at));
            yi = e.read(iv, 16).try_into().unwrap();
            xi = e.read(ctx, 16).try_into().unwrap();
        }
        while text.len() - at >= 16 {
            let n = ((text.len() - at) & !15).min(3 * 1024);
            let part = &text[at..at + n];
            let (buf, iv) = (a.buffer(part, 0, true), a.buffer(&yi, 0, false));
            if decrypt {
                ghash(g, &mut xi, part, &mut tally);
            }
            tally(a.call(ctr32, &[buf, buf, (n / 16) as u64, ks, iv]).unwrap());
            let o = a.read(buf, n);
            if !decrypt {
                ghash(g, &mut xi, &o, &mut tally);
            }
            out.extend_from_slice(&o);
            yi = with_counter(&yi, counter(&yi).wrapping_add((n / 16) as u32));
            at += n;
        }
        let mut fin = Vec::new();
        if at < text.len() {
            let ek = block(a, &yi, &mut tally);
            let tail: Vec<u8> = text[at..].iter().zip(ek).map(|(x, k)| x ^ k).collect();
            fin = pad16(if decrypt { &text[at..] } else { &tail });
            out.extend_from_slice(&tail);
        }
        fin.extend_from_slice(&0u64.to_be_bytes());
        fin.extend_from_slice(&(text.len() as u64 * 8).to_be_bytes());
        ghash(g, &mut xi, &fin, &mut tally);
        (out, std::array::from_fn(|i| xi[i] ^ ek0[i]), cycles)
    }
}

/// Whole AES-128-GCM messages as OpenSSL calls the kernels, on the C906 model: with the
/// stitched functions and, for comparison, with `AES_ctr32_encrypt` and `gcm_ghash_c906`
/// in series (what OpenSSL runs without them), both checked against RustCrypto's
/// `aes-gcm`. Target (issue 14): the stitched path at most 45 c/B at 1400 bytes and 40 at
/// 16 KiB, encrypt and decrypt.
#[test]
fn openssl_message_cost() {
    let mut o = Openssl::new(&STITCHED);
    let gk = GcmSetup::new().unwrap().key(&[0x2b; 16]).unwrap();
    let nonce = [0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88];
    println!("| bytes | direction | stitched c/B | series c/B | stitched/series |");
    println!("|---:|---|---:|---:|---:|");
    for len in [1400usize, 16384] {
        let pt = common::gen_bytes(len as u64, len);
        let (ct, tag) = rustcrypto_seal(&[0x2b; 16], &nonce, &[], &pt);
        for decrypt in [false, true] {
            let (input, want) = if decrypt { (&ct, &pt) } else { (&pt, &ct) };
            let mut cpb = [0f64; 2];
            for (i, stitched) in [true, false].into_iter().enumerate() {
                let (out, t, cycles) = o.message(&gk, &nonce, input, decrypt, stitched);
                assert_eq!(&out, want, "{len} bytes, decrypt {decrypt}, stitched {stitched}: output");
                assert_eq!(t, tag, "{len} bytes, decrypt {decrypt}, stitched {stitched}: tag");
                cpb[i] = cycles as f64 / len as f64;
            }
            let dir = if decrypt { "decrypt" } else { "encrypt" };
            println!("| {len} | {dir} | {:.2} | {:.2} | {:.3} |", cpb[0], cpb[1], cpb[0] / cpb[1]);
            let bound = if len == 1400 { 45.0 } else { 40.0 };
            assert!(cpb[0] <= bound, "{dir} of a {len}-byte message: {:.2} c/B > {bound}", cpb[0]);
        }
    }
}

/// Constant-time AES-128-GCM on the C906 as the OpenSSL series runs it by default: the
/// calls of [`Openssl::message`] with `aes-gcm-ct c906`'s bulk functions on the whole
/// blocks, `aes-ct c906`'s `AES_ctr32_encrypt` and `AES_encrypt` and `ghash c906`'s
/// `gcm_ghash` for the rest, checked against RustCrypto's `aes-gcm`; targets 45 c/B for a
/// 1400-byte message and 40 at 16 KiB, encrypt and decrypt. Beside it (printed) the same
/// message without the bulk functions (the counter mode and GHASH calls in 3 KiB turns).
///
/// And why the bulk functions run the two halves chunk by chunk rather than in one merged
/// loop (printed, asserted): a loop that merged the bitsliced vector AES with a scalar
/// GHASH (the shape of `aes-gcm c906` with the roles of the units swapped) issues, per 128
/// bytes, at least the vector AES's vector instructions (counted in `aes-ct c906`'s counter
/// mode: eight of a pass's twelve blocks) and the scalar GHASH's instructions (`ghash
/// c906-novector`, 32-bit pieces), and the C906 issues one instruction a cycle. That bound
/// lies above the measured cycles, because both halves already keep the vector unit and
/// the scalar core busy at once.
#[test]
fn constant_time_gcm_as_openssl_calls_it() {
    let mut o = Openssl::new(&CT);
    let gk = GcmSetup::new().unwrap().key(&[0x2b; 16]).unwrap();
    let nonce = [0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88];
    println!("| bytes | direction | aes-gcm-ct c906, c/B | aes-ct c906 + ghash c906 calls, c/B |");
    println!("|---:|---|---:|---:|");
    let mut at16k = 0f64;
    for len in [1400usize, 16384] {
        let pt = common::gen_bytes(len as u64 + 1, len);
        let (ct, tag) = rustcrypto_seal(&[0x2b; 16], &nonce, &[], &pt);
        for decrypt in [false, true] {
            let (input, want) = if decrypt { (&ct, &pt) } else { (&pt, &ct) };
            let mut cpb = [0f64; 2];
            for (i, stitched) in [true, false].into_iter().enumerate() {
                let (out, t, cycles) = o.message(&gk, &nonce, input, decrypt, stitched);
                assert_eq!(&out, want, "{len} bytes, decrypt {decrypt}, bulk functions {stitched}: output");
                assert_eq!(t, tag, "{len} bytes, decrypt {decrypt}, bulk functions {stitched}: tag");
                cpb[i] = cycles as f64 / len as f64;
            }
            let dir = if decrypt { "decrypt" } else { "encrypt" };
            println!("| {len} | {dir} | {:.2} | {:.2} |", cpb[0], cpb[1]);
            let bound = if len == 1400 { 45.0 } else { 40.0 };
            assert!(cpb[0] <= bound, "constant-time {dir} of a {len}-byte message: {:.2} c/B > {bound}", cpb[0]);
            if len == 16384 {
                at16k = at16k.max(cpb[0]);
            }
        }
    }
    let n = 16384usize;
    let a = &mut o.aes;
    let ks = a.buffer(&gk.schedule, 0, false);
    let (buf, iv) = (a.buffer(&vec![0x5a; n], 0, true), a.buffer(&[7u8; 16], 0, false));
    a.m.reset_counts();
    a.call(a.sym("AES_ctr32_encrypt"), &[buf, buf, (n / 16) as u64, ks, iv]).unwrap();
    let vector: u64 = a.m.counts().iter().filter(|(c, _)| c.is_vector()).map(|(_, k)| k).sum();
    let passes = (n / 16).div_ceil(12) as f64;
    let aes_vector = vector as f64 / passes;
    let m = kgen_kernels::kernel("ghash").unwrap().variant("c906-novector").unwrap().build(Abi::Psabi).unwrap();
    let mut g = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
    let (x, table, d) = (g.buffer(&[0u8; 16], 0, true), g.buffer(&gk.htable, 0, false), g.buffer(&vec![0x5a; n], 0, false));
    let r = g.call(g.sym(&kgen_kernels::ghash::GHASH.symbol("c906-novector")), &[x, table, d, n as u64]).unwrap();
    let ghash_scalar = r.instructions as f64 / (n / 128) as f64;
    let stitched = (aes_vector + ghash_scalar) / 128.0;
    println!("a merged group of 128 bytes issues at least {aes_vector:.0} vector instructions (aes-ct c906's eight vector blocks) + {ghash_scalar:.0} scalar GHASH instructions (ghash c906-novector): {stitched:.2} c/B, against {at16k:.2} for aes-gcm-ct's chunks");
    assert!(stitched > at16k, "a merged loop's bound {stitched:.2} c/B is below aes-gcm-ct's {at16k:.2}: the merged loop would pay");
}

const HARNESS: &str = r#"
struct ctx { uint64_t Xi[2], H[2]; unsigned char Htable[256]; } __attribute__((aligned(16)));
int main(void) {
  char kh[80], ih[40], xh[40];
  unsigned long bits, len, seed, inoff, outoff, inplace, decrypt;
  while (scanf("%lu %79s %39s %39s %lu %lu %lu %lu %lu %lu", &bits, kh, ih, xh, &len, &seed, &inoff, &outoff, &inplace, &decrypt) == 10) {
    unsigned char key[32], iv[16], h[16] = {0};
    static struct ctx c;
    AES_KEY ks;
    unhex(kh, key); unhex(ih, iv); unhex(xh, (unsigned char *)c.Xi);
    if (AES_set_encrypt_key(key, bits, &ks)) { printf("setkey failed\n"); return 1; }
    AES_encrypt(h, h, &ks);
    for (int k = 0; k < 2; k++) { c.H[k] = 0; for (int b = 0; b < 8; b++) c.H[k] = c.H[k] << 8 | h[8 * k + b]; }
    gcm_init_c906((void *)c.Htable, c.H);
    unsigned char *in = malloc(len + 32), *outb = malloc(len + 32);
    gen_bytes(seed, in + inoff, len);
    unsigned char *out = inplace ? in + inoff : outb + outoff;
    size_t done = (decrypt ? DECRYPT : ENCRYPT)(in + inoff, out, len, &ks, iv, c.Xi);
    printf("%lu %016llx ", (unsigned long)done, (unsigned long long)fnv(out, done));
    for (int k = 0; k < 16; k++) printf("%02x", iv[k]);
    printf(" ");
    for (int k = 0; k < 16; k++) printf("%02x", ((unsigned char *)c.Xi)[k]);
    printf("\n");
    free(in); free(outb);
  }
  return 0;
}
"#;

/// The emitted `.S` of `aes-gcm c906` (with `aes c906`) and of `aes-gcm-ct c906` (with
/// `aes-ct c906`), and `ghash c906` for the table, assembled by GNU as, linked into a C
/// harness (prototypes from the generated headers) and run under T-Head's QEMU `-cpu
/// c906fdv`; `-cpu c906fd` (no vector unit) must refuse it. Lengths cover group counts
/// 0..=16 with tails and 16 KiB, every key size, counters near the wrap, misaligned and
/// in-place buffers.
#[test]
fn emitted_assembly_under_qemu() {
    for (kind, seed) in [(&STITCHED, 17), (&CT, 27)] {
        under_qemu(kind, seed);
    }
}

fn under_qemu(kind: &Kind, seed: u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut setup = GcmSetup::new().unwrap();
    let mut input = String::new();
    let mut want = Vec::new();
    for n in 0..400usize {
        let bits = [128usize, 192, 256][n % 3];
        let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
        let ctr = if n % 4 == 0 { u32::MAX - rng.random_range(0..300) } else { rng.random() };
        let iv = with_counter(&rng.random(), ctr);
        let xi: [u8; 16] = rng.random();
        let len = if n % 100 == 99 { 16384 + 5 } else { 128 * (n % 17) + rng.random_range(0..128) };
        let (seed, inoff, outoff, inplace, decrypt): (u64, usize, usize, bool, bool) = (rng.random(), rng.random_range(0..16), rng.random_range(0..16), n % 2 == 0, n % 5 < 2);
        input.push_str(&format!("{bits} {} {} {} {len} {seed} {inoff} {outoff} {} {}\n", tohex(&key), tohex(&iv), tohex(&xi), inplace as u8, decrypt as u8));
        let gk = setup.key(&key).unwrap();
        let b = bulk_reference(kind.unit, &key, &gk.h, decrypt, &iv, &xi, &common::gen_bytes(seed, len));
        want.push(format!("{} {:016x} {} {}", b.done, common::fnv(&b.out), tohex(&b.ivec), tohex(&b.xi)));
    }
    let dir = kgen_harness::oracle::scratch(&format!("{}_qemu", kind.kernel.replace('-', "_")));
    let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
    let m = module(kind);
    let others: Vec<kgen_dsl::Module> =
        [kind.aes, "ghash"].iter().map(|k| kgen_kernels::kernel(k).unwrap().variant("c906").unwrap().build(Abi::Psabi).unwrap()).collect();
    let mut src = common::C_HELPERS.to_string();
    let mut asm = Vec::new();
    for x in others.iter().chain([&m]) {
        src.push_str(&common::header(&dir, x));
        asm.push((format!("{}-c906.S", x.kernel), kgen_emit::openssl_s(x, &o).unwrap()));
    }
    src.push_str(&format!("#define ENCRYPT {}\n#define DECRYPT {}\n", kind.enc.symbol("c906"), kind.dec.symbol("c906")));
    src.push_str(HARNESS);
    let files: Vec<(&str, String)> = asm.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
    let Some(bin) = common::build(&dir, &format!("{}-c906", kind.kernel), &src, &files) else { return };
    let (q, cpu, bad) = common::emulator(&m);
    let Some(q) = q else { return };
    let out = common::run(&q, &cpu, &bin, &input);
    assert!(out.status.success(), "under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
    let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "case {k}");
    }
    println!("{} c906: {} cases agree under qemu -cpu {cpu}", kind.kernel, got.len());
    let bad = bad.expect("a CPU without the vector unit");
    let out = common::run(&q, &bad, &bin, &input);
    assert!(!out.status.success(), "must fault under -cpu {bad}");
    println!("{} c906: -cpu {bad} refuses it ({})", kind.kernel, out.status);
}
