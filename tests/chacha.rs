//! ChaCha20 kernels against RustCrypto `chacha20` and RFC 8439, in kgen-sim.
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use kgen_dsl::Abi;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

const VARIANTS: [&str; 4] = ["c906", "c906-novector", "rv64gcv", "rv64gc"];

fn module(variant: &str, abi: Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel("chacha20").unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{variant}: {e}"))
}

fn env(variant: &str, abi: Abi) -> Env {
    let m = module(variant, abi);
    Env::new(&m.object().unwrap(), &m.target).unwrap()
}

/// The RFC 8439 block function, written out: used where RustCrypto stops (it refuses the
/// block at counter 2^32 - 1, and OpenSSL's 32-bit counter wraps there); checked against
/// RustCrypto everywhere else by `reference_agrees_with_rustcrypto`.
fn rfc_block(key: &[u8; 32], ctr: u32, nonce: &[u8; 12]) -> [u8; 64] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&kgen_kernels::chacha::SIGMA);
    for i in 0..8 {
        s[4 + i] = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap());
    }
    s[12] = ctr;
    for i in 0..3 {
        s[13 + i] = u32::from_le_bytes(nonce[4 * i..4 * i + 4].try_into().unwrap());
    }
    let mut x = s;
    let qr = |x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize| {
        x[a] = x[a].wrapping_add(x[b]); x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]); x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]); x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]); x[b] = (x[b] ^ x[c]).rotate_left(7);
    };
    for _ in 0..10 {
        qr(&mut x, 0, 4, 8, 12); qr(&mut x, 1, 5, 9, 13); qr(&mut x, 2, 6, 10, 14); qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15); qr(&mut x, 1, 6, 11, 12); qr(&mut x, 2, 7, 8, 13); qr(&mut x, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&x[i].wrapping_add(s[i]).to_le_bytes());
    }
    out
}

/// Keystream XOR starting at block `ctr` with a 32-bit counter that wraps: RustCrypto for
/// counters below 2^32 - 1, the written-out block function for that last block.
fn reference(key: &[u8; 32], ctr: u32, nonce: &[u8; 12], data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut done = 0usize;
    let mut c = ctr;
    while done < out.len() {
        if c == u32::MAX {
            let ks = rfc_block(key, c, nonce);
            let n = (out.len() - done).min(64);
            for i in 0..n {
                out[done + i] ^= ks[i];
            }
            done += n;
            c = 0;
            continue;
        }
        let blocks_left = (u32::MAX - c) as u64;
        let run = ((blocks_left * 64).min((out.len() - done) as u64)) as usize;
        let mut ch = chacha20::ChaCha20::new(key.into(), nonce.into());
        ch.seek(c as u64 * 64);
        ch.apply_keystream(&mut out[done..done + run]);
        done += run;
        c = c.wrapping_add(run.div_ceil(64) as u32);
    }
    out
}

#[test]
fn reference_agrees_with_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for _ in 0..200 {
        let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
        let ctr = rng.random_range(0..u32::MAX - 1);
        let mut ks = [0u8; 64];
        let mut ch = chacha20::ChaCha20::new((&key).into(), (&nonce).into());
        ch.seek(ctr as u64 * 64);
        ch.apply_keystream(&mut ks);
        assert_eq!(ks, rfc_block(&key, ctr, &nonce));
    }
}

fn run_openssl(e: &mut Env, key: &[u8; 32], ctr: u32, nonce: &[u8; 12], data: &[u8], in_off: usize, out_off: usize, in_place: bool) -> Vec<u8> {
    let kb = e.buffer(key, 0, false);
    let mut cw = ctr.to_le_bytes().to_vec();
    cw.extend_from_slice(nonce);
    let cb = e.buffer(&cw, 0, false);
    let inp = e.buffer(data, in_off, true);
    let out = if in_place { inp } else { e.buffer(&vec![0xa5; data.len()], out_off, true) };
    e.call(e.sym("ChaCha20_ctr32"), &[out, inp, data.len() as u64, kb, cb]).unwrap_or_else(|x| panic!("len {}: {x}", data.len()));
    e.read(out, data.len())
}

#[test]
fn rfc8439_vector() {
    // RFC 8439 2.4.2
    let key: [u8; 32] = std::array::from_fn(|i| i as u8);
    let nonce = [0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0];
    let pt = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
    let want = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d";
    for v in VARIANTS {
        let mut e = env(v, Abi::Psabi);
        let got = run_openssl(&mut e, &key, 1, &nonce, pt, 0, 0, false);
        let hex: String = got.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, want, "{v}");
    }
}

#[test]
fn every_length_and_offset() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for v in VARIANTS {
        let mut e = env(v, Abi::Psabi);
        for len in (0..=1100).step_by(7).chain([4096, 16384]) {
            let key: [u8; 32] = rng.random();
            let nonce: [u8; 12] = rng.random();
            let ctr: u32 = rng.random();
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let (io, oo) = (rng.random_range(0..16), rng.random_range(0..16));
            let got = run_openssl(&mut e, &key, ctr, &nonce, &data, io, oo, len % 3 == 0);
            assert_eq!(got, reference(&key, ctr, &nonce, &data), "{v} len {len} offsets {io}/{oo}");
        }
    }
}

#[test]
fn linux_whole_blocks_and_counter_writeback() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    for v in VARIANTS {
        let mut e = env(v, Abi::Linux);
        for nrounds in [20u64, 12, 8] {
            for nblocks in [1u64, 2, 4, 5, 6, 11] {
                let key: [u8; 32] = rng.random();
                let nonce: [u8; 12] = rng.random();
                let ctr: u32 = u32::MAX - 2;
                let mut state = Vec::new();
                for w in kgen_kernels::chacha::SIGMA {
                    state.extend_from_slice(&w.to_le_bytes());
                }
                state.extend_from_slice(&key);
                state.extend_from_slice(&ctr.to_le_bytes());
                state.extend_from_slice(&nonce);
                let sb = e.buffer(&state, 0, true);
                let data: Vec<u8> = (0..nblocks * 64).map(|_| rng.random()).collect();
                let inp = e.buffer(&data, 0, false);
                let out = e.buffer(&vec![0; data.len()], 0, true);
                e.call(e.sym(&format!("chacha_{}", v.replace('-', "_"))), &[sb, inp, out, nblocks, nrounds]).unwrap();
                let got = e.read(out, data.len());
                if nrounds == 20 {
                    assert_eq!(got, reference(&key, ctr, &nonce, &data), "{v} nblocks {nblocks}");
                }
                let new_ctr = u32::from_le_bytes(e.read(sb + 48, 4).try_into().unwrap());
                assert_eq!(new_ctr, ctr.wrapping_add(nblocks as u32), "{v} counter written back");
            }
        }
    }
}

#[test]
fn cost() {
    for v in VARIANTS {
        let m = module(v, Abi::Psabi);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        for len in [64usize, 128, 256, 320, 1024, 4096] {
            let kb = e.buffer(&[1; 32], 0, false);
            let cb = e.buffer(&[0; 16], 0, false);
            let inp = e.buffer(&vec![0; len], 0, true);
            e.call(e.sym("ChaCha20_ctr32"), &[inp, inp, len as u64, kb, cb]).unwrap();
            let r = e.call(e.sym("ChaCha20_ctr32"), &[inp, inp, len as u64, kb, cb]).unwrap();
            println!("{v:>14} {len:>5} B: {:>7} instructions {:>7} cycles {:>6.2} c/B {:?}", r.instructions, r.cycles, r.cycles as f64 / len as f64, e.m.cost.as_ref().unwrap().breakdown);
        }
    }
}
