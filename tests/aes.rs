//! AES kernels against FIPS-197 and RustCrypto `aes`, in kgen-sim.
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use kgen_dsl::Abi;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn env(variant: &str) -> Env {
    let k = kgen_kernels::kernel("aes").unwrap();
    let v = k.variant(variant).unwrap();
    let m = v.build(Abi::Psabi).unwrap_or_else(|e| panic!("{e}"));
    Env::new(&m.object().unwrap(), &m.target).unwrap()
}

fn rc_encrypt(key: &[u8], block: &[u8; 16]) -> [u8; 16] {
    let mut b = aes::Block::from(*block);
    match key.len() {
        16 => aes::Aes128::new_from_slice(key).unwrap().encrypt_block(&mut b),
        24 => aes::Aes192::new_from_slice(key).unwrap().encrypt_block(&mut b),
        _ => aes::Aes256::new_from_slice(key).unwrap().encrypt_block(&mut b),
    }
    b.into()
}

fn rc_decrypt(key: &[u8], block: &[u8; 16]) -> [u8; 16] {
    let mut b = aes::Block::from(*block);
    match key.len() {
        16 => aes::Aes128::new_from_slice(key).unwrap().decrypt_block(&mut b),
        24 => aes::Aes192::new_from_slice(key).unwrap().decrypt_block(&mut b),
        _ => aes::Aes256::new_from_slice(key).unwrap().decrypt_block(&mut b),
    }
    b.into()
}

#[test]
fn fips197_vectors() {
    for variant in std::env::var("AESV").map(|v| vec![v]).unwrap_or(vec!["c906".into(), "rv64gc".into()]) {
        let variant = variant.as_str();
        let mut e = env(variant);
        let pt = hex("00112233445566778899aabbccddeeff");
        for (key, ct) in [
            ("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
            ("000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"),
            ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"),
        ] {
            let key = hex(key);
            let k = e.buffer(&key, 0, false);
            let ks = e.buffer(&[0u8; 244], 0, true);
            let r = e.call(e.sym("AES_set_encrypt_key"), &[k, key.len() as u64 * 8, ks]).unwrap();
            assert_eq!(r.a0, 0);
            let inp = e.buffer(&pt, 0, false);
            let out = e.buffer(&[0u8; 16], 0, true);
            e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
            assert_eq!(e.read(out, 16), hex(ct), "{variant} encrypt {}", key.len() * 8);
            let dks = e.buffer(&[0u8; 244], 0, true);
            let r = e.call(e.sym("AES_set_decrypt_key"), &[k, key.len() as u64 * 8, dks]).unwrap();
            assert_eq!(r.a0, 0);
            let cin = e.buffer(&hex(ct), 0, false);
            e.call(e.sym("AES_decrypt"), &[cin, out, dks]).unwrap();
            assert_eq!(e.read(out, 16), pt, "{variant} decrypt {}", key.len() * 8);
        }
    }
}

#[test]
fn random_against_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for variant in ["c906", "rv64gc"] {
        let mut e = env(variant);
        let ks = e.buffer(&[0u8; 244], 0, true);
        let dks = e.buffer(&[0u8; 244], 0, true);
        let kbuf = e.buffer(&[0u8; 32], 3, true);
        let inp = e.buffer(&[0u8; 16], 5, true);
        let out = e.buffer(&[0u8; 16], 7, true);
        for bits in [128u64, 192, 256] {
            for _ in 0..20 {
                let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
                e.m.mem.write_bytes(kbuf, &key);
                assert_eq!(e.call(e.sym("AES_set_encrypt_key"), &[kbuf, bits, ks]).unwrap().a0, 0);
                assert_eq!(e.call(e.sym("AES_set_decrypt_key"), &[kbuf, bits, dks]).unwrap().a0, 0);
                for _ in 0..10 {
                    let pt: [u8; 16] = rng.random();
                    e.m.mem.write_bytes(inp, &pt);
                    e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
                    assert_eq!(e.read(out, 16), rc_encrypt(&key, &pt), "{variant} {bits}");
                    e.call(e.sym("AES_decrypt"), &[inp, out, dks]).unwrap();
                    assert_eq!(e.read(out, 16), rc_decrypt(&key, &pt), "{variant} {bits} dec");
                }
            }
        }
    }
}

#[test]
fn cost_report() {
    for variant in ["c906", "rv64gc"] {
        let k = kgen_kernels::kernel("aes").unwrap();
        let m = k.variant(variant).unwrap().build(Abi::Psabi).unwrap();
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let key = [7u8; 16];
        let kb = e.buffer(&key, 0, false);
        let ks = e.buffer(&[0u8; 244], 0, true);
        e.call(e.sym("AES_set_encrypt_key"), &[kb, 128, ks]).unwrap();
        let inp = e.buffer(&[1u8; 16], 0, false);
        let out = e.buffer(&[0u8; 16], 0, true);
        e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        let r = e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        println!("{variant}: AES-128 encrypt {} instructions, {} cycles; breakdown {:?}", r.instructions, r.cycles, e.m.cost.as_ref().unwrap().breakdown);
    }
}
