//! OpenSSL 3.5.7's own riscv64 AES, assembled by kgen's front end, runs in kgen-sim and
//! agrees with RustCrypto's `aes`; its modeled C906 cost is compared with the measurement.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use kgen_harness::oracle;
use kgen_dsl::asmfile::assemble_file;
use kgen_dsl::target::target;
use kgen_sim::Env;

#[test]
fn upstream_aes_runs_in_the_simulator() {
    let path = oracle::toolchain_dir().join("openssl-asm/aes-riscv64.s");
    let Ok(src) = std::fs::read_to_string(&path) else {
        oracle::missing::<()>("OpenSSL 3.5.7 perlasm outputs");
        return;
    };
    let t = target("rv64gc").unwrap();
    let a = assemble_file(&src, &t).unwrap();
    let mut env = Env::new(&a.object, &t).unwrap().with_cost_model();
    let key: [u8; 16] = *b"\x2b\x7e\x15\x16\x28\xae\xd2\xa6\xab\xf7\x15\x88\x09\xcf\x4f\x3c";
    let pt: [u8; 16] = *b"\x32\x43\xf6\xa8\x88\x5a\x30\x8d\x31\x31\x98\xa2\xe0\x37\x07\x34";
    let k = env.buffer(&key, 0, false);
    let ks = env.buffer(&[0u8; 244], 0, true);
    let r = env.call(env.sym("AES_set_encrypt_key"), &[k, 128, ks]).unwrap();
    assert_eq!(r.a0, 0);
    let inp = env.buffer(&pt, 0, false);
    let out = env.buffer(&[0u8; 16], 0, true);
    // Warm the model's predictor, then measure.
    env.call(env.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
    let r = env.call(env.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
    let got = env.read(out, 16);
    let mut block = aes::Block::from(pt);
    aes::Aes128::new(&key.into()).encrypt_block(&mut block);
    assert_eq!(got, block.to_vec());
    println!("upstream AES-128 encrypt: {} instructions, {} modeled C906 cycles (measured on RTL: 967, 970)", r.instructions, r.cycles);
    // The calibration point of ../shared/FACTS.md: within a few percent of the RTL.
    assert!((r.cycles as f64 - 970.0).abs() <= 0.03 * 970.0, "model {} vs RTL 970", r.cycles);
}
