//! Constant time, observed: every entry point of every `aes-ct` variant (OpenSSL and Linux
//! forms) and of `aes-gcm-ct` runs in kgen-sim on
//! random keys and inputs of one length, and what a timing observer could see of each
//! instruction (`Machine::ct_event`: the instruction stream, every address read or written,
//! the C906 multiplier's path, division operands) must be the same on every run. The
//! checker proves the same from the code (no declared leak in these kernels); this watches
//! the code run. Negative controls: the T-table kernels' traces differ from key to key.

use kgen_dsl::entry::Entry;
use kgen_dsl::Abi;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

mod common;

fn env(kernel: &str, variant: &str) -> Env {
    common::sim(&common::module(kernel, variant, Abi::Psabi))
}

/// The observer's record of one call.
fn trace(e: &mut Env, f: &str, args: &[u64]) -> Vec<u64> {
    e.m.ct_trace = Some(Vec::new());
    let s = e.sym(f);
    e.call(s, args).unwrap_or_else(|x| panic!("{f}: {x}"));
    e.m.ct_trace.take().unwrap()
}

/// Where two records part: the instruction (pc) and the position in the record.
fn first_difference(a: &[u64], b: &[u64]) -> Option<String> {
    if a == b {
        return None;
    }
    let k = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    Some(format!("records of {} and {} values part at value {k} ({:#x?} against {:#x?})", a.len(), b.len(), a.get(k), b.get(k)))
}

/// One run of every entry point on fresh random keys and data; the records by name.
fn run_all(e: &mut Env, rng: &mut impl Rng, bits: usize, bufs: &Bufs) -> Vec<(String, Vec<u64>)> {
    let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
    e.m.mem.write_bytes(bufs.key, &key);
    let data: Vec<u8> = (0..bufs.len).map(|_| rng.random()).collect();
    e.m.mem.write_bytes(bufs.data, &data);
    let iv: [u8; 16] = rng.random();
    e.m.mem.write_bytes(bufs.iv, &iv);
    let b = bits as u64;
    vec![
        ("AES_set_encrypt_key".into(), trace(e, "AES_set_encrypt_key", &[bufs.key, b, bufs.ks])),
        ("AES_set_decrypt_key".into(), trace(e, "AES_set_decrypt_key", &[bufs.key, b, bufs.dks])),
        ("AES_encrypt".into(), trace(e, "AES_encrypt", &[bufs.data, bufs.out, bufs.ks])),
        ("AES_decrypt".into(), trace(e, "AES_decrypt", &[bufs.data, bufs.out, bufs.dks])),
        ("AES_ctr32_encrypt".into(), trace(e, "AES_ctr32_encrypt", &[bufs.data, bufs.out, (bufs.len / 16) as u64, bufs.ks, bufs.iv])),
        ("AES_ctr32_encrypt, 16 blocks".into(), trace(e, "AES_ctr32_encrypt", &[bufs.data, bufs.out, 16.min(bufs.len as u64 / 16), bufs.ks, bufs.iv])),
        ("AES_ctr32_encrypt, 3 blocks".into(), trace(e, "AES_ctr32_encrypt", &[bufs.data, bufs.out, 3.min(bufs.len as u64 / 16), bufs.ks, bufs.iv])),
    ]
}

struct Bufs {
    key: u64,
    ks: u64,
    dks: u64,
    data: u64,
    out: u64,
    iv: u64,
    len: usize,
}

fn bufs(e: &mut Env, blocks: usize) -> Bufs {
    let len = 16 * blocks;
    Bufs {
        key: e.buffer(&[0; 32], 0, false),
        ks: e.buffer(&[0; 244], 0, true),
        dks: e.buffer(&[0; 244], 0, true),
        data: e.buffer(&vec![0; len], 1, true),
        out: e.buffer(&vec![0; len], 3, true),
        iv: e.buffer(&[0; 16], 0, false),
        len,
    }
}

#[test]
fn aes_ct_leaves_the_same_trace_for_every_key_and_input() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
    for variant in ["c906", "c906-novector", "rv64gc", "rv64gc-zbb", "rv64gcv"] {
        let mut e = env("aes-ct", variant);
        // Nineteen blocks: counter mode's loops (four blocks a pass, or twelve on the c906)
        // and their tails; also 16 and 3 blocks (the c906's last pass of four blocks and
        // its short calls, one block at a time).
        let b = bufs(&mut e, 19);
        for bits in [128, 192, 256] {
            let first = run_all(&mut e, &mut rng, bits, &b);
            for _ in 0..40 {
                for ((name, a), (_, t)) in first.iter().zip(run_all(&mut e, &mut rng, bits, &b)) {
                    if let Some(d) = first_difference(a, &t) {
                        panic!("aes-ct {variant} {name} (AES-{bits}): the trace depends on the key or the data: {d}");
                    }
                }
            }
            let n: usize = first.iter().map(|(_, t)| t.len()).sum();
            println!("aes-ct {variant} AES-{bits}: 41 runs of the five functions (counter mode at three lengths), {n} values recorded per run, all the same");
        }
    }
}

/// The Linux forms (on a `struct crypto_aes_ctx`'s keys): expandkey, one block each way, counter mode
/// and ECB over nineteen blocks, 41 runs per key size, the same records.
#[test]
fn aes_ct_linux_forms_leave_the_same_trace_for_every_key_and_input() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(37);
    for variant in ["c906", "c906-novector", "rv64gc", "rv64gc-zbb", "rv64gcv"] {
        let mut e = common::sim(&common::module("aes-ct", variant, Abi::Linux));
        let sfx = variant.replace('-', "_");
        let b = bufs(&mut e, 19);
        let ctx = e.buffer(&[0; 484], 0, true);
        for len in [16usize, 24, 32] {
            let run = |e: &mut Env, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<(&'static str, Vec<u64>)> {
                let key: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                e.m.mem.write_bytes(b.key, &key);
                let data: Vec<u8> = (0..b.len).map(|_| rng.random()).collect();
                e.m.mem.write_bytes(b.data, &data);
                let iv: [u8; 16] = rng.random();
                e.m.mem.write_bytes(b.iv, &iv);
                // key_enc at 0, key_dec at 240, the rounds from the key's length.
                let (enc, dec, nr) = (ctx, ctx + 240, 6 + len as u64 / 4);
                vec![
                    ("expandkey", trace(e, &format!("aes_ct_expandkey_{sfx}"), &[ctx, b.key, len as u64])),
                    ("encrypt", trace(e, &format!("aes_ct_encrypt_{sfx}"), &[enc, nr, b.out, b.data])),
                    ("decrypt", trace(e, &format!("aes_ct_decrypt_{sfx}"), &[dec, nr, b.out, b.data])),
                    ("ctr32", trace(e, &format!("aes_ct_ctr32_{sfx}"), &[enc, nr, b.out, b.data, (b.len / 16) as u64, b.iv])),
                    ("ctr32, 16 blocks", trace(e, &format!("aes_ct_ctr32_{sfx}"), &[enc, nr, b.out, b.data, 16, b.iv])),
                    ("ctr32, 3 blocks", trace(e, &format!("aes_ct_ctr32_{sfx}"), &[enc, nr, b.out, b.data, 3, b.iv])),
                    ("ecb_encrypt", trace(e, &format!("aes_ct_ecb_encrypt_{sfx}"), &[enc, nr, b.out, b.data, (b.len / 16) as u64])),
                    ("ecb_decrypt", trace(e, &format!("aes_ct_ecb_decrypt_{sfx}"), &[dec, nr, b.out, b.data, (b.len / 16) as u64])),
                ]
            };
            let first = run(&mut e, &mut rng);
            for _ in 0..40 {
                for ((name, a), (_, t)) in first.iter().zip(run(&mut e, &mut rng)) {
                    if let Some(d) = first_difference(a, &t) {
                        panic!("aes-ct {variant} aes_ct_{name} (key_len {len}): the trace depends on the key or the data: {d}");
                    }
                }
            }
        }
        println!("aes-ct {variant}, Linux forms: 41 runs per key size, the same records");
    }
}

/// The control: the T-table kernel looks up tables at addresses made of key and data bytes,
/// so its records differ from key to key (AES_encrypt and the key schedule's S-box lookups).
#[test]
fn the_t_table_kernel_leaves_different_traces() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(36);
    let mut e = env("aes", "c906");
    let b = bufs(&mut e, 1);
    let first = run_all(&mut e, &mut rng, 128, &b);
    let again = run_all(&mut e, &mut rng, 128, &b);
    for ((name, a), (_, t)) in first.iter().zip(&again) {
        if name == "AES_encrypt" || name == "AES_set_encrypt_key" {
            assert!(first_difference(a, t).is_some(), "aes c906 {name}: the T-table lookups left the same trace");
        }
    }
}

/// `aes-gcm-ct c906`'s bulk functions: random keys (their schedule and GHASH table), Xi,
/// counters and data of one length give the same record, at 19 blocks and 5 bytes (one
/// chunk with its tail: a pass of twelve, the last blocks one at a time, GHASH's groups and
/// single blocks) and at 390 blocks (a second chunk). Control: `aes-gcm c906` (T-table AES)
/// leaves different records.
#[test]
fn aes_gcm_ct_leaves_the_same_trace_for_every_key_and_input() {
    use kgen_kernels::aes_gcm::GcmKey;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(37);
    // The buffers once per length (their addresses are in the record); new contents every run.
    let bufs = |e: &mut Env, len: usize| -> [u64; 5] {
        [e.buffer(&[0; 244], 0, false), e.buffer(&vec![0; len], 1, true), e.buffer(&vec![0; len], 3, true), e.buffer(&[0; 16], 0, true), e.buffer(&[0; 288], 0, true)]
    };
    let one = |e: &mut Env, rng: &mut rand_chacha::ChaCha8Rng, bits: usize, len: usize, b: [u64; 5], entries: [&Entry; 2]| -> Vec<(String, Vec<u64>)> {
        let [ks, inp, out, iv, ctx] = b;
        let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
        let gk = GcmKey::new(&key);
        e.m.mem.write_bytes(ks, &gk.schedule);
        let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        e.m.mem.write_bytes(inp, &data);
        let mut runs = Vec::new();
        for entry in entries {
            e.m.mem.write_bytes(iv, &rng.random::<[u8; 16]>());
            e.m.mem.write_bytes(ctx, &gk.context(&rng.random()));
            let f = entry.symbol("c906");
            runs.push((f.clone(), trace(e, &f, &[inp, out, len as u64, ks, iv, ctx])));
        }
        runs
    };
    let ct = [&kgen_kernels::aes_gcm_ct::ENCRYPT, &kgen_kernels::aes_gcm_ct::DECRYPT];
    let leaky = [&kgen_kernels::aes_gcm::ENCRYPT, &kgen_kernels::aes_gcm::DECRYPT];
    let mut e = env("aes-gcm-ct", "c906");
    for (bits, len, n) in [(128, 309, 40), (192, 309, 40), (256, 309, 40), (256, 390 * 16, 10)] {
        let b = bufs(&mut e, len);
        let first = one(&mut e, &mut rng, bits, len, b, ct);
        for _ in 0..n {
            for ((name, a), (_, t)) in first.iter().zip(one(&mut e, &mut rng, bits, len, b, ct)) {
                if let Some(d) = first_difference(a, &t) {
                    panic!("aes-gcm-ct c906 {name} (AES-{bits}, {len} bytes): the trace depends on the key or the data: {d}");
                }
            }
        }
        let k: usize = first.iter().map(|(_, t)| t.len()).sum();
        println!("aes-gcm-ct c906 AES-{bits}, {len} bytes: {} runs of both functions, {k} values recorded per run, all the same", n + 1);
    }
    let mut e = env("aes-gcm", "c906");
    let b = bufs(&mut e, 256);
    let (a, b) = (one(&mut e, &mut rng, 128, 256, b, leaky), one(&mut e, &mut rng, 128, 256, b, leaky));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(first_difference(x, y).is_some(), "aes-gcm c906 {name}: the T-table lookups left the same trace");
    }
}
