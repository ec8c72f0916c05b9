//! The AES kernels, `aes` (T-tables) and `aes-ct` (fixsliced, constant time), every variant,
//! against FIPS-197 and RustCrypto `aes`: in kgen-sim (10,000 random (key, block) pairs per
//! key size and direction, unaligned and in-place buffers, the key-schedule layout, the
//! -1/-2 returns; counter mode at every block count 0..=64 and across the 2^32 wrap, no
//! secret left behind) and, through a C harness calling the emitted `.S` with the real ABI
//! (callee-saved registers checked by canaries), under QEMU (`-cpu thead-c906` and T-Head's
//! `c906fdv` for the C906 builds, `-cpu rv64`, `-cpu rv64,zbb=true`; a CPU without the
//! variant's extensions must refuse it).

use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use kgen_harness::oracle;
use kgen_dsl::Abi;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;

/// (kernel, variant): every AES build.
const VARIANTS: [(&str, &str); 7] =
    [("aes", "c906"), ("aes", "rv64gc"), ("aes-ct", "c906"), ("aes-ct", "c906-novector"), ("aes-ct", "rv64gc"), ("aes-ct", "rv64gc-zbb"), ("aes-ct", "rv64gcv")];

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn module(kernel: &str, variant: &str) -> kgen_dsl::Module {
    common::module(kernel, variant, Abi::Psabi)
}

fn env(kernel: &str, variant: &str) -> Env {
    common::sim(&module(kernel, variant))
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

const FIPS: [(&str, &str); 3] = [
    ("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
    ("000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"),
    ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"),
];
const FIPS_PT: &str = "00112233445566778899aabbccddeeff";

#[test]
fn fips197_vectors() {
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        let pt = hex(FIPS_PT);
        for (key, ct) in FIPS {
            let key = hex(key);
            let k = e.buffer(&key, 0, false);
            let ks = e.buffer(&[0u8; 244], 0, true);
            assert_eq!(e.call(e.sym("AES_set_encrypt_key"), &[k, key.len() as u64 * 8, ks]).unwrap().a0, 0);
            let inp = e.buffer(&pt, 0, false);
            let out = e.buffer(&[0u8; 16], 0, true);
            e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
            assert_eq!(e.read(out, 16), hex(ct), "{kernel} {variant} encrypt {}", key.len() * 8);
            let dks = e.buffer(&[0u8; 244], 0, true);
            assert_eq!(e.call(e.sym("AES_set_decrypt_key"), &[k, key.len() as u64 * 8, dks]).unwrap().a0, 0);
            let cin = e.buffer(&hex(ct), 0, false);
            e.call(e.sym("AES_decrypt"), &[cin, out, dks]).unwrap();
            assert_eq!(e.read(out, 16), pt, "{kernel} {variant} decrypt {}", key.len() * 8);
        }
    }
}

/// FIPS-197 appendix A: the last expanded word of each example key, in memory byte order at
/// byte 4·(total-1); the round count at byte 240.
#[test]
fn key_schedule_layout() {
    let cases = [
        ("2b7e151628aed2a6abf7158809cf4f3c", 44, "b6630ca6", 10),
        ("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b", 52, "01002202", 12),
        ("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", 60, "706c631e", 14),
    ];
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        for (key, words, last, rounds) in cases {
            let key = hex(key);
            let k = e.buffer(&key, 0, false);
            let ks = e.buffer(&[0xee; 244], 0, true);
            e.call(e.sym("AES_set_encrypt_key"), &[k, key.len() as u64 * 8, ks]).unwrap();
            let sched = e.read(ks, 244);
            assert_eq!(&sched[..key.len()], &key[..], "round key 0 is the key itself");
            assert_eq!(tohex(&sched[4 * (words - 1)..4 * words]), last, "{kernel} {variant}: last word");
            assert_eq!(u32::from_le_bytes(sched[240..244].try_into().unwrap()), rounds);
            if words < 60 {
                assert!(sched[4 * words..240].iter().all(|&b| b == 0xee), "nothing written past the schedule");
            }
        }
    }
}

#[test]
fn bad_arguments() {
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        let k = e.buffer(&[1; 32], 0, false);
        let ks = e.buffer(&[0; 244], 0, true);
        for f in ["AES_set_encrypt_key", "AES_set_decrypt_key"] {
            let s = e.sym(f);
            assert_eq!(e.call(s, &[0, 128, ks]).unwrap().a0 as i64, -1, "{kernel} {variant} {f} null key");
            assert_eq!(e.call(s, &[k, 128, 0]).unwrap().a0 as i64, -1, "{kernel} {variant} {f} null schedule");
            for bits in [0u64, 64, 127, 129, 255, 512, (-128i64) as u64] {
                assert_eq!(e.call(s, &[k, bits, ks]).unwrap().a0 as i64, -2, "{kernel} {variant} {f} bits {bits}");
            }
        }
    }
}

/// 1,000 random keys per size with 10 random blocks each, every block at a random
/// misalignment, in place every other time.
#[test]
fn random_against_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut pairs = 0;
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        let ks = e.buffer(&[0u8; 244], 0, true);
        let dks = e.buffer(&[0u8; 244], 0, true);
        let kbuf = e.buffer(&[0u8; 32], 3, true);
        let area = e.buffer(&[0u8; 64], 0, true);
        for bits in [128u64, 192, 256] {
            for _ in 0..1000 {
                let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
                e.m.mem.write_bytes(kbuf, &key);
                assert_eq!(e.call(e.sym("AES_set_encrypt_key"), &[kbuf, bits, ks]).unwrap().a0, 0);
                assert_eq!(e.call(e.sym("AES_set_decrypt_key"), &[kbuf, bits, dks]).unwrap().a0, 0);
                for n in 0..10 {
                    let pt: [u8; 16] = rng.random();
                    let inp = area + rng.random_range(0..16);
                    let out = if n % 2 == 0 { inp } else { area + 32 + rng.random_range(0..16) };
                    for (f, s, want) in [("AES_encrypt", ks, rc_encrypt(&key, &pt)), ("AES_decrypt", dks, rc_decrypt(&key, &pt))] {
                        e.m.mem.write_bytes(inp, &pt);
                        e.call(e.sym(f), &[inp, out, s]).unwrap();
                        assert_eq!(e.read(out, 16), want, "{kernel} {variant} {f} {bits}");
                        pairs += 1;
                    }
                }
            }
        }
    }
    println!("{pairs} (key, block) pairs agree with RustCrypto (10,000 per variant, key size and direction)");
}

mod common;

const HARNESS: &str = r#"
int main(void) {
  int c0 = getchar();
  if (c0 == 'X') { canary_call6((canary_fn)clobber_s5, 0, 0, 0, 0, 0, 0); return 0; }
  ungetc(c0, stdin);
  char kh[80], ph[40];
  int bits;
  while (scanf("%d %79s %39s", &bits, kh, ph) == 3) {
    unsigned char key[32], pt[16], buf[48], ct[16], dt[16];
    AES_KEY ek, dk;
    unhex(kh, key); unhex(ph, pt);
    if (AES_set_encrypt_key(key, bits, &ek) || AES_set_decrypt_key(key, bits, &dk)) { printf("setkey failed\n"); return 1; }
    memcpy(buf + 1, pt, 16);                 /* unaligned input */
    canary_call6((canary_fn)AES_encrypt, (unsigned long)(buf + 1), (unsigned long)(buf + 19), (unsigned long)&ek, 0, 0, 0); /* unaligned output */
    memcpy(ct, buf + 19, 16);
    canary_call6((canary_fn)AES_decrypt, (unsigned long)ct, (unsigned long)dt, (unsigned long)&dk, 0, 0, 0);
    for (int i = 0; i < 16; i++) printf("%02x", ct[i]);
    printf(" ");
    for (int i = 0; i < 16; i++) printf("%02x", dt[i]);
    printf(" %d %d\n", AES_set_encrypt_key(0, 128, &ek), AES_set_encrypt_key(key, 100, &ek));
  }
  return 0;
}
"#;

#[test]
fn emitted_assembly_under_qemu() {
    let dir = oracle::scratch("aes_qemu");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut input = String::new();
    let mut expect = Vec::new();
    for (k, _) in FIPS {
        let key = hex(k);
        let _ = writeln!(input, "{} {} {FIPS_PT}", key.len() * 8, k);
        expect.push((key, hex(FIPS_PT)));
    }
    for n in 0..600 {
        let bits = [128, 192, 256][n % 3];
        let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
        let pt: [u8; 16] = rng.random();
        let _ = writeln!(input, "{bits} {} {}", tohex(&key), tohex(&pt));
        expect.push((key, pt.to_vec()));
    }
    for (kernel, variant) in VARIANTS {
        let m = module(kernel, variant);
        // The harness declares nothing: the prototypes come from the generated header; the
        // block functions are called through the canary trampoline.
        let src = format!("{}{}{}{HARNESS}", common::C_HELPERS, common::CANARIES_H, common::header(&dir, &m));
        let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
        let name = format!("{kernel}-{variant}");
        let Some(bin) = common::build(&dir, &name, &src, &[(&format!("{name}.S"), kgen_emit::openssl_s(&m, &o).unwrap()), ("canaries.S", common::canaries_s())]) else { return };
        for (q, cpu, bad) in qemus(&m) {
            let Some(q) = q else { return };
            let out = common::run(&q, &cpu, &bin, &input);
            assert!(out.status.success(), "{name} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), expect.len());
            for ((key, pt), line) in expect.iter().zip(&lines) {
                let f: Vec<&str> = line.split_whitespace().collect();
                let pt16: [u8; 16] = pt.as_slice().try_into().unwrap();
                assert_eq!(f[0], tohex(&rc_encrypt(key, &pt16)), "{name} {line}");
                assert_eq!(f[1], tohex(pt), "{name} decrypt");
                assert_eq!((f[2], f[3]), ("-1", "-2"));
            }
            println!("{name}: {} vectors agree under qemu -cpu {cpu}", lines.len());
            // The CPU without the target's vector unit refuses the build only if what this
            // harness calls (the block functions and key schedules) uses it.
            let vector = m.funcs.iter().filter(|l| !l.func.name.contains("ctr32")).any(|l| l.frame.uses_vector);
            if let Some(bad) = bad.filter(|_| vector || m.target.vdialect().is_none()) {
                let out = common::run(&q, &bad, &bin, &input);
                assert!(!out.status.success(), "{name} must not run under -cpu {bad}");
                println!("{name}: -cpu {bad} refuses it ({})", out.status);
            }
        }
        canaries_control(&m, &bin);
    }
}

/// The QEMU CPUs a build runs under: the target's (at every VLEN an RVV 1.0 build is
/// declared for), and for the C906 builds without vectors T-Head's own QEMU as well.
fn qemus(m: &kgen_dsl::Module) -> Vec<(Option<oracle::Tool>, String, Option<String>)> {
    let mut v = common::emulators(m);
    if m.target.name == "c906-novector" {
        v.push((oracle::xuantie_qemu(), "c906fdv".to_string(), None));
    }
    v
}

/// The canaries' control: input "X" makes the harness call a function that changes s5
/// through the trampoline, which must exit with 99.
fn canaries_control(m: &kgen_dsl::Module, bin: &std::path::Path) {
    let (Some(q), cpu, _) = common::emulator(m) else { return };
    let out = common::run(&q, &cpu, bin, "X");
    assert_eq!(out.status.code(), Some(99), "{} {}: the canaries missed a changed s5", m.kernel, m.variant);
}

#[test]
fn two_instructions_per_lookup_in_the_c906_rounds() {
    // Count the instructions of one full round in the listing: 16 lookups of 2 instructions
    // (th.extu + th.lrwu), 16 xor, 4 round-key loads.
    let m = module("aes", "c906");
    let f = &m.func("AES_encrypt_c906").unwrap().func;
    let lines = f.listing();
    let start = lines.iter().position(|l| matches!(l, kgen_dsl::func::Line::Comment(c) if c.starts_with("round 6 "))).unwrap();
    let end = lines.iter().position(|l| matches!(l, kgen_dsl::func::Line::Comment(c) if c.starts_with("round 7 "))).unwrap();
    let insts: Vec<&str> = lines[start..end]
        .iter()
        .filter_map(|l| if let kgen_dsl::func::Line::Inst { text, .. } = l { Some(text.split(' ').next().unwrap()) } else { None })
        .collect();
    let count = |m: &str| insts.iter().filter(|&&x| x == m).count();
    assert_eq!(insts.len(), 52, "{insts:?}");
    assert_eq!((count("th.extu"), count("th.lrwu"), count("xor"), count("lw")), (16, 16, 16, 4));
}

#[test]
fn cost_report() {
    for (kernel, variant) in VARIANTS {
        let m = module(kernel, variant);
        if kernel != "aes" {
            continue; // the T-table kernel's targets
        }
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let kb = e.buffer(&[7u8; 16], 0, false);
        let ks = e.buffer(&[0u8; 244], 0, true);
        e.call(e.sym("AES_set_encrypt_key"), &[kb, 128, ks]).unwrap();
        let inp = e.buffer(&[1u8; 16], 0, false);
        let out = e.buffer(&[0u8; 16], 0, true);
        e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        let r = e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        println!("{kernel} {variant}: AES-128 encrypt {} instructions, {} modeled cycles", r.instructions, r.cycles);
        if variant == "c906" {
            assert!(r.cycles <= 560, "c906 AES-128 encrypt above the 560-cycle target: {}", r.cycles);
        }
    }
}

// ---- AES_ctr32_encrypt ---------------------------------------------------------------------

/// RustCrypto's CTR mode (`ctr::Ctr32BE` over `aes`) from `iv`: the big-endian counter in
/// bytes 12..16 wraps to 0 without a carry into bytes 0..12, as OpenSSL's `ctr128_f` does.
/// (`Ctr32BE` refuses to run past the wrap, so the keystream after it is a second instance
/// from counter 0.)
fn ctr32_reference(key: &[u8], iv: &[u8; 16], data: &[u8]) -> Vec<u8> {
    use ctr::cipher::{KeyIvInit, StreamCipher};
    let mut out = data.to_vec();
    let mut iv = *iv;
    let mut at = 0;
    while at < out.len() {
        let ctr = u32::from_be_bytes(iv[12..].try_into().unwrap());
        // Blocks up to and including the one with counter 2^32 - 1.
        let room = (u32::MAX - ctr) as usize + 1;
        let n = (out.len() - at).min(room.saturating_mul(16));
        let chunk = &mut out[at..at + n];
        match key.len() {
            16 => ctr::Ctr32BE::<aes::Aes128>::new_from_slices(key, &iv).unwrap().apply_keystream(chunk),
            24 => ctr::Ctr32BE::<aes::Aes192>::new_from_slices(key, &iv).unwrap().apply_keystream(chunk),
            _ => ctr::Ctr32BE::<aes::Aes256>::new_from_slices(key, &iv).unwrap().apply_keystream(chunk),
        }
        at += n;
        iv[12..].copy_from_slice(&ctr.wrapping_add((n / 16) as u32).to_be_bytes());
    }
    out
}

/// A key schedule made by the variant's own AES_set_encrypt_key.
fn schedule(e: &mut Env, key: &[u8]) -> u64 {
    let k = e.buffer(key, 0, false);
    let ks = e.buffer(&[0u8; 244], 0, true);
    assert_eq!(e.call(e.sym("AES_set_encrypt_key"), &[k, key.len() as u64 * 8, ks]).unwrap().a0, 0);
    ks
}

/// A random IV whose counter starts anywhere, near the 2^32 wrap, or just before a
/// low-byte run ends (where the kernel refreshes its cache).
fn random_iv(rng: &mut impl Rng, n: usize) -> [u8; 16] {
    let mut iv: [u8; 16] = rng.random();
    let ctr: u32 = match n % 4 {
        0 => rng.random(),
        1 => u32::MAX - rng.random_range(0..70),
        2 => (rng.random::<u32>() & !0xff) | rng.random_range(0xc0..=0xff),
        _ => rng.random_range(0..3),
    };
    iv[12..].copy_from_slice(&ctr.to_be_bytes());
    iv
}

/// Every block count 0..=64 for each key size and variant, against RustCrypto: counters
/// anywhere (near the 2^32 wrap, across low-byte runs), in place every other time, input
/// and output at random misalignments (rv64gc's shifted-load and byte-store paths); the
/// bytes after the output and the IV are left alone. Through the simulator's C ABI, which
/// checks the callee-saved registers.
#[test]
fn ctr32_every_block_count_against_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(32);
    let mut cases = 0;
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        let f = e.sym("AES_ctr32_encrypt");
        let area = e.buffer(&[0u8; 16 * 64 + 64], 0, true);
        // Outputs with 192 bytes after them that must stay as they were (a pass of the c906's
        // counter mode is twelve blocks).
        let outs = e.buffer(&[0u8; 16 * 64 + 224], 0, true);
        let ivb = e.buffer(&[0u8; 16], 0, false);
        for bits in [128usize, 192, 256] {
            for blocks in 0..=64usize {
                for n in 0..4 {
                    let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
                    let ks = schedule(&mut e, &key);
                    let iv = random_iv(&mut rng, n);
                    e.m.mem.write_bytes(ivb, &iv);
                    let pt: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
                    let inp = area + rng.random_range(0..16);
                    let inplace = (n + blocks) % 2 == 0;
                    let out = if inplace { inp } else { outs + rng.random_range(0..16) };
                    e.m.mem.write_bytes(inp, &pt);
                    if !inplace {
                        e.m.mem.write_bytes(out, &vec![0xee; 16 * blocks + 192]);
                    }
                    e.call(f, &[inp, out, blocks as u64, ks, ivb]).unwrap_or_else(|x| panic!("{kernel} {variant}: {x}"));
                    let want = ctr32_reference(&key, &iv, &pt);
                    assert_eq!(e.read(out, pt.len()), want, "{kernel} {variant} AES-{bits}, {blocks} blocks, iv {}", tohex(&iv));
                    if !inplace {
                        assert_eq!(e.read(out + pt.len() as u64, 192), vec![0xee; 192], "{kernel} {variant}: wrote past the output");
                    }
                    assert_eq!(e.read(ivb, 16), iv.to_vec(), "{kernel} {variant}: ivec is not written back");
                    cases += 1;
                }
            }
        }
    }
    println!("{cases} AES_ctr32_encrypt calls agree with RustCrypto's Ctr32BE");
}

/// The counter wraps from 2^32 - 1 to 0 inside a call, leaving bytes 0..12 alone: checked
/// against the keystream written out block by block with AES_encrypt.
#[test]
fn ctr32_wraps_at_2_pow_32() {
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        let key = [0x42u8; 16];
        let ks = schedule(&mut e, &key);
        let mut iv = [0x11u8; 16];
        iv[12..].copy_from_slice(&0xffff_fffdu32.to_be_bytes());
        let ivb = e.buffer(&iv, 0, false);
        let zeros = e.buffer(&[0u8; 16 * 6], 0, true);
        e.call(e.sym("AES_ctr32_encrypt"), &[zeros, zeros, 6, ks, ivb]).unwrap();
        let got = e.read(zeros, 16 * 6);
        for (k, ctr) in [0xffff_fffdu32, 0xffff_fffe, 0xffff_ffff, 0, 1, 2].into_iter().enumerate() {
            let mut block = [0x11u8; 16];
            block[12..].copy_from_slice(&ctr.to_be_bytes());
            assert_eq!(got[16 * k..16 * k + 16], rc_encrypt(&key, &block), "{kernel} {variant}: block {k} (counter {ctr:#x})");
        }
    }
}

/// After counter-mode calls no 6-byte window of the round keys or of the keystream is left
/// in a register or in the stack (the cache holds round-key material and is wiped).
/// Negative control: a round-key word planted in a register is found.
#[test]
fn ctr32_leaves_no_secret() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    for (kernel, variant) in VARIANTS {
        let mut e = env(kernel, variant);
        for (bits, blocks) in [(128usize, 1usize), (192, 7), (256, 300)] {
            let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
            let ks = schedule(&mut e, &key);
            let sched = e.read(ks, 240);
            let iv = random_iv(&mut rng, 2);
            let ivb = e.buffer(&iv, 0, false);
            let zeros = e.buffer(&vec![0u8; 16 * blocks], 0, true);
            e.call(e.sym("AES_ctr32_encrypt"), &[zeros, zeros, blocks as u64, ks, ivb]).unwrap();
            let keystream = e.read(zeros, 16 * blocks);
            for (what, secret) in [("round keys", &sched[..16 * (bits / 32 + 7)]), ("keystream", &keystream[..])] {
                assert_eq!(e.scan_for_secret(secret, 6), Vec::<String>::new(), "{kernel} {variant} AES-{bits}: {what}");
            }
        }
        let ks = schedule(&mut e, &[9u8; 16]);
        let sched = e.read(ks, 176);
        e.m.hart.x[7] = u64::from_le_bytes(sched[40..48].try_into().unwrap());
        assert_eq!(e.scan_for_secret(&sched, 6), vec!["register t2".to_string()], "{kernel} {variant}: the planted word is found");
    }
}

const CTR_HARNESS: &str = r#"
int main(void) {
  int c0 = getchar();
  if (c0 == 'X') { canary_call6((canary_fn)clobber_s5, 0, 0, 0, 0, 0, 0); return 0; }
  ungetc(c0, stdin);
  char kh[80], ih[40];
  unsigned long bits, blocks, seed, inoff, outoff, inplace;
  while (scanf("%lu %79s %39s %lu %lu %lu %lu %lu", &bits, kh, ih, &blocks, &seed, &inoff, &outoff, &inplace) == 8) {
    unsigned char key[32], iv[16], keep[16];
    AES_KEY ks;
    unhex(kh, key); unhex(ih, iv);
    memcpy(keep, iv, 16);
    if (AES_set_encrypt_key(key, bits, &ks)) { printf("setkey failed\n"); return 1; }
    size_t n = 16 * blocks;
    unsigned char *in = malloc(n + 32), *outb = malloc(n + 32);
    gen_bytes(seed, in + inoff, n);
    unsigned char *out = inplace ? in + inoff : outb + outoff;
    canary_call6((canary_fn)AES_ctr32_encrypt, (unsigned long)(in + inoff), (unsigned long)out, blocks, (unsigned long)&ks, (unsigned long)iv, 0);
    printf("%016llx %d\n", (unsigned long long)fnv(out, n), memcmp(iv, keep, 16) == 0);
    free(in); free(outb);
  }
  return 0;
}
"#;

/// The emitted `.S` linked into a C harness (the prototypes from the generated header) and
/// run under QEMU: c906 under `-cpu thead-c906` (refused by `-cpu rv64`), rv64gc under
/// `-cpu rv64`; every block count 0..=40 and longer runs, counters near the wrap, misaligned
/// and in-place buffers.
#[test]
fn ctr32_emitted_assembly_under_qemu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(34);
    let mut input = String::new();
    let mut want = Vec::new();
    for n in 0..300usize {
        let bits = [128usize, 192, 256][n % 3];
        let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
        let iv = random_iv(&mut rng, n / 3);
        let blocks = if n % 50 == 49 { 700 } else { n % 41 };
        let (seed, inoff, outoff, inplace): (u64, usize, usize, bool) = (rng.random(), rng.random_range(0..16), rng.random_range(0..16), n % 2 == 0);
        input.push_str(&format!("{bits} {} {} {blocks} {seed} {inoff} {outoff} {}\n", tohex(&key), tohex(&iv), inplace as u8));
        let ct = ctr32_reference(&key, &iv, &common::gen_bytes(seed, 16 * blocks));
        want.push(format!("{:016x} 1", common::fnv(&ct)));
    }
    let dir = oracle::scratch("aes_ctr32_qemu");
    for (kernel, variant) in VARIANTS {
        let m = module(kernel, variant);
        let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
        let name = format!("{kernel}-ctr32-{variant}");
        let src = format!("{}{}{}{CTR_HARNESS}", common::C_HELPERS, common::CANARIES_H, common::header(&dir, &m));
        let Some(bin) = common::build(&dir, &name, &src, &[(&format!("{name}.S"), kgen_emit::openssl_s(&m, &o).unwrap()), ("canaries.S", common::canaries_s())]) else { return };
        for (q, cpu, bad) in qemus(&m) {
            let Some(q) = q else { return };
            let out = common::run(&q, &cpu, &bin, &input);
            assert!(out.status.success(), "{name} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
            let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
            assert_eq!(got.len(), want.len());
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name}: case {k}");
            }
            println!("{name}: {} cases agree under qemu -cpu {cpu}", got.len());
            if let Some(bad) = bad {
                let out = common::run(&q, &bad, &bin, &input);
                assert!(!out.status.success(), "{name} must fault under -cpu {bad}");
                println!("{name}: -cpu {bad} refuses it ({})", out.status);
            }
        }
        canaries_control(&m, &bin);
    }
}

/// Modeled cost per block (printed; the bound is the target): from two blocks on,
/// AES_ctr32_encrypt costs at most 1.02 x AES_encrypt per block on the c906 model.
#[test]
fn ctr32_cost() {
    for (kernel, variant) in VARIANTS {
        let m = module(kernel, variant);
        if kernel != "aes" {
            continue; // the T-table kernel's targets
        }
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let ks = schedule(&mut e, &[7u8; 16]);
        let one = e.buffer(&[1u8; 16], 0, true);
        e.call(e.sym("AES_encrypt"), &[one, one, ks]).unwrap();
        let block = e.call(e.sym("AES_encrypt"), &[one, one, ks]).unwrap().cycles;
        let ivb = e.buffer(&[3u8; 16], 0, false);
        let f = e.sym("AES_ctr32_encrypt");
        for blocks in [1u64, 2, 4, 16, 64, 1024] {
            let buf = e.buffer(&vec![0u8; 16 * blocks as usize], 0, true);
            e.call(f, &[buf, buf, blocks, ks, ivb]).unwrap();
            let c = e.call(f, &[buf, buf, blocks, ks, ivb]).unwrap().cycles;
            let per = c as f64 / blocks as f64;
            println!("{kernel} {variant}: {blocks:5} blocks: {per:7.1} cycles/block (AES_encrypt {block}: {:.3})", per / block as f64);
            // The target (issue 14) on both variants, from two blocks on: a one-block call
            // also pays the counter set-up, the cache and the callee-saved registers (the
            // README states that bound).
            if blocks >= 2 {
                assert!(per <= 1.02 * block as f64, "{kernel} {variant}: {blocks} blocks cost {per:.1} cycles/block > 1.02 x {block}");
            }
        }
    }
}

/// Both kernels make the same `AES_KEY`, for encryption and for decryption (the equivalent
/// inverse cipher's schedule), so either kernel's functions take the other's keys.
#[test]
fn every_build_makes_the_same_schedules() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
    let mut envs: Vec<(&str, &str, Env)> = VARIANTS.iter().map(|&(k, v)| (k, v, env(k, v))).collect();
    for bits in [128usize, 192, 256] {
        for _ in 0..20 {
            let key: Vec<u8> = (0..bits / 8).map(|_| rng.random()).collect();
            let mut first: Option<(Vec<u8>, Vec<u8>)> = None;
            for (kernel, variant, e) in envs.iter_mut() {
                let k = e.buffer(&key, 0, false);
                let (ks, dks) = (e.buffer(&[0u8; 244], 0, true), e.buffer(&[0u8; 244], 0, true));
                e.call(e.sym("AES_set_encrypt_key"), &[k, bits as u64, ks]).unwrap();
                e.call(e.sym("AES_set_decrypt_key"), &[k, bits as u64, dks]).unwrap();
                let got = (e.read(ks, 244), e.read(dks, 244));
                match &first {
                    None => first = Some(got),
                    Some(f) => assert_eq!(&got, f, "{kernel} {variant} AES-{bits}: schedules differ from aes c906's"),
                }
            }
        }
    }
}

// ---- aes-ct's Linux forms -------------------------------------------------------------------

/// aes-ct's Linux-ABI functions on `struct crypto_aes_ctx` (key_enc, key_dec, key_length):
/// the expanded key against the OpenSSL forms' schedules (and the bytes past them left
/// alone), -EINVAL for other key lengths with the context untouched, and random blocks and
/// counter-mode runs against RustCrypto, in kgen-sim through the C ABI (callee-saved
/// registers checked).
#[test]
fn aes_ct_linux_forms_against_the_openssl_forms_and_rustcrypto() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut cases = 0;
    for variant in ["c906", "c906-novector", "rv64gc", "rv64gc-zbb", "rv64gcv"] {
        let m = common::module("aes-ct", variant, Abi::Linux);
        let mut e = common::sim(&m);
        let mut o = env("aes-ct", variant);
        let sfx = variant.replace('-', "_");
        let [expand, enc, dec, ctr, ecb_enc, ecb_dec] = ["expandkey", "encrypt", "decrypt", "ctr32", "ecb_encrypt", "ecb_decrypt"].map(|f| e.sym(&format!("aes_ct_{f}_{sfx}")));
        let ctx = e.buffer(&[0u8; 484], 0, true);
        let kbuf = e.buffer(&[0u8; 32], 0, true);
        let area = e.buffer(&[0u8; 16 * 20 + 32], 0, true);
        let outs = e.buffer(&[0u8; 16 * 20 + 32], 0, true);
        let ivb = e.buffer(&[0u8; 16], 0, false);
        let kb = o.buffer(&[0u8; 32], 0, true);
        let (oks, odk) = (o.buffer(&[0xeeu8; 244], 0, true), o.buffer(&[0xeeu8; 244], 0, true));
        for bad in [0u64, 15, 20, 31, 33, 128] {
            e.m.mem.write_bytes(ctx, &[0x5a; 484]);
            assert_eq!(e.call(expand, &[ctx, kbuf, bad]).unwrap().a0 as i64, -22, "{variant}: key_len {bad}");
            assert_eq!(e.read(ctx, 484), vec![0x5a; 484], "{variant}: key_len {bad} wrote the context");
        }
        for len in [16usize, 24, 32] {
            for _ in 0..40 {
                let key: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                e.m.mem.write_bytes(kbuf, &key);
                e.m.mem.write_bytes(ctx, &[0xee; 484]);
                assert_eq!(e.call(expand, &[ctx, kbuf, len as u64]).unwrap().a0, 0, "{variant} expandkey {len}");
                o.m.mem.write_bytes(kb, &key);
                o.m.mem.write_bytes(oks, &[0xee; 244]);
                o.m.mem.write_bytes(odk, &[0xee; 244]);
                assert_eq!(o.call(o.sym("AES_set_encrypt_key"), &[kb, 8 * len as u64, oks]).unwrap().a0, 0);
                assert_eq!(o.call(o.sym("AES_set_decrypt_key"), &[kb, 8 * len as u64, odk]).unwrap().a0, 0);
                let c = e.read(ctx, 484);
                assert_eq!(&c[..240], &o.read(oks, 240)[..], "{variant} AES-{}: key_enc", 8 * len);
                assert_eq!(&c[240..480], &o.read(odk, 240)[..], "{variant} AES-{}: key_dec", 8 * len);
                assert_eq!(&c[480..], &(len as u32).to_le_bytes(), "{variant}: key_length");
                // The cipher forms take key_enc or key_dec and the round count.
                let (enc_rk, dec_rk, nr) = (ctx, ctx + 240, 6 + len as u64 / 4);
                for n in 0..4 {
                    let pt: [u8; 16] = rng.random();
                    let inp = area + rng.random_range(0..16);
                    let out = if n % 2 == 0 { inp } else { outs + rng.random_range(0..16) };
                    for (f, rk, want) in [(enc, enc_rk, rc_encrypt(&key, &pt)), (dec, dec_rk, rc_decrypt(&key, &pt))] {
                        e.m.mem.write_bytes(inp, &pt);
                        e.call(f, &[rk, nr, out, inp]).unwrap();
                        assert_eq!(e.read(out, 16), want, "{variant} AES-{} block", 8 * len);
                        cases += 1;
                    }
                }
                let blocks = rng.random_range(0..=20usize);
                let iv = random_iv(&mut rng, blocks);
                e.m.mem.write_bytes(ivb, &iv);
                let pt: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
                let inp = area + rng.random_range(0..16);
                let out = outs + rng.random_range(0..16);
                e.m.mem.write_bytes(inp, &pt);
                e.call(ctr, &[enc_rk, nr, out, inp, blocks as u64, ivb]).unwrap();
                assert_eq!(e.read(out, pt.len()), ctr32_reference(&key, &iv, &pt), "{variant} AES-{} ctr32, {blocks} blocks", 8 * len);
                assert_eq!(e.read(ivb, 16), iv.to_vec(), "{variant}: iv is not written back");
                cases += 1;
                // ECB over 0..=9 blocks, in place every other time, nothing written past.
                let blocks = rng.random_range(0..=9usize);
                let pt: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
                for (f, rk, dir) in [(ecb_enc, enc_rk, 0), (ecb_dec, dec_rk, 1)] {
                    let inp = area + rng.random_range(0..16);
                    let inplace = rng.random::<bool>();
                    let out = if inplace { inp } else { outs + rng.random_range(0..16) };
                    e.m.mem.write_bytes(inp, &pt);
                    if !inplace {
                        e.m.mem.write_bytes(out, &vec![0xee; 16 * blocks + 192]);
                    }
                    e.call(f, &[rk, nr, out, inp, blocks as u64]).unwrap();
                    let want: Vec<u8> = pt.chunks(16).flat_map(|b| {
                        let b: [u8; 16] = b.try_into().unwrap();
                        if dir == 0 { rc_encrypt(&key, &b) } else { rc_decrypt(&key, &b) }
                    }).collect();
                    assert_eq!(e.read(out, pt.len()), want, "{variant} AES-{} ecb {dir}, {blocks} blocks", 8 * len);
                    if !inplace {
                        assert_eq!(e.read(out + pt.len() as u64, 16), vec![0xee; 16], "{variant}: ecb wrote past the output");
                    }
                    cases += 1;
                }
            }
        }
    }
    println!("{cases} Linux-form calls agree with RustCrypto");
}

const LINUX_HARNESS: &str = r#"
int main(void) {
  int c0 = getchar();
  if (c0 == 'X') { canary_call6((canary_fn)clobber_s5, 0, 0, 0, 0, 0, 0); return 0; }
  ungetc(c0, stdin);
  char kh[80], ph[40], ih[40];
  unsigned len, nblocks;
  while (scanf("%u %79s %39s %39s %u", &len, kh, ph, ih, &nblocks) == 5) {
    unsigned char key[32], pt[16], iv[16], buf[48], ct[16], dt[16], data[16 * 20 + 1], out[16 * 20 + 1];
    struct crypto_aes_ctx ctx;
    unhex(kh, key); unhex(ph, pt); unhex(ih, iv);
    if (EXPANDKEY(&ctx, key, len)) { printf("expandkey failed\n"); return 1; }
    if (ctx.key_length != len) { printf("key_length %u\n", ctx.key_length); return 1; }
    unsigned long enc = (unsigned long)ctx.key_enc, dec = (unsigned long)ctx.key_dec, nr = 6 + len / 4;
    memcpy(buf + 1, pt, 16);                 /* unaligned input */
    canary_call6((canary_fn)ENCRYPT, enc, nr, (unsigned long)(buf + 19), (unsigned long)(buf + 1), 0, 0);
    memcpy(ct, buf + 19, 16);
    canary_call6((canary_fn)DECRYPT, dec, nr, (unsigned long)dt, (unsigned long)ct, 0, 0);
    for (unsigned i = 0; i < 16 * nblocks; i++) data[i + 1] = (unsigned char)(i * 7 + len);
    canary_call6((canary_fn)CTR32, enc, nr, (unsigned long)(out + 1), (unsigned long)(data + 1), nblocks, (unsigned long)iv);
    unsigned char ecb[16 * 20 + 1], back[16 * 20];
    canary_call6((canary_fn)ECB_ENCRYPT, enc, nr, (unsigned long)(ecb + 1), (unsigned long)(data + 1), nblocks, 0);
    canary_call6((canary_fn)ECB_DECRYPT, dec, nr, (unsigned long)back, (unsigned long)(ecb + 1), nblocks, 0);
    if (memcmp(back, data + 1, 16 * nblocks)) { printf("ecb round trip failed\n"); return 1; }
    for (unsigned i = 0; i < 16 * nblocks; i++) printf("%02x", ecb[i + 1]);
    printf(" ");
    for (int i = 0; i < 16; i++) printf("%02x", ct[i]);
    printf(" ");
    for (int i = 0; i < 16; i++) printf("%02x", dt[i]);
    printf(" ");
    for (unsigned i = 0; i < 16 * nblocks; i++) printf("%02x", out[i + 1]);
    printf(" %d\n", EXPANDKEY(&ctx, key, 20));
  }
  return 0;
}
"#;

/// aes-ct's Linux `.S` (with a stand-in `<linux/linkage.h>`) through the real ABI with
/// canaries, under QEMU: expandkey, one block each way (unaligned), counter mode and ECB
/// (both ways) over 0..20 blocks, and -EINVAL for a 20-byte key, against RustCrypto.
#[test]
fn aes_ct_linux_assembly_under_qemu() {
    let dir = oracle::scratch("aes_ct_linux_qemu");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut input = String::new();
    let mut expect = Vec::new();
    for n in 0..150 {
        let len = [16usize, 24, 32][n % 3];
        let key: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let pt: [u8; 16] = rng.random();
        let iv = random_iv(&mut rng, n);
        let nblocks = n % 21;
        let _ = writeln!(input, "{len} {} {} {} {nblocks}", tohex(&key), tohex(&pt), tohex(&iv));
        let data: Vec<u8> = (0..16 * nblocks).map(|i| (i * 7 + len) as u8).collect();
        expect.push((key.clone(), pt, ctr32_reference(&key, &iv, &data)));
    }
    for variant in ["c906", "c906-novector", "rv64gc", "rv64gc-zbb", "rv64gcv"] {
        let m = common::module("aes-ct", variant, Abi::Linux);
        let sfx = variant.replace('-', "_");
        let defs = format!("#define EXPANDKEY aes_ct_expandkey_{sfx}\n#define ENCRYPT aes_ct_encrypt_{sfx}\n#define DECRYPT aes_ct_decrypt_{sfx}\n#define CTR32 aes_ct_ctr32_{sfx}\n#define ECB_ENCRYPT aes_ct_ecb_encrypt_{sfx}\n#define ECB_DECRYPT aes_ct_ecb_decrypt_{sfx}\n");
        let src = format!("{}{}{}{defs}{LINUX_HARNESS}", common::C_HELPERS, common::CANARIES_H, common::header(&dir, &m));
        let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
        let name = format!("aes-ct-{variant}-linux");
        let Some(bin) = common::build(&dir, &name, &src, &[(&format!("{name}.S"), kgen_emit::linux_s(&m, &o).unwrap()), ("canaries.S", common::canaries_s())]) else { return };
        for (q, cpu, bad) in qemus(&m) {
            let Some(q) = q else { return };
            let out = common::run(&q, &cpu, &bin, &input);
            assert!(out.status.success(), "{name} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), expect.len(), "{name}: {text}");
            for ((key, pt, ctr), line) in expect.iter().zip(&lines) {
                let f: Vec<&str> = line.split(' ').collect();
                assert_eq!(f.len(), 5, "{name}: {line}");
                // ECB, the block each way, counter mode, the bad key length.
                let data: Vec<u8> = (0..ctr.len()).map(|i| (i * 7 + key.len()) as u8).collect();
                let ecb: Vec<u8> = data.chunks(16).flat_map(|b| rc_encrypt(key, &b.try_into().unwrap())).collect();
                assert_eq!(f[0], tohex(&ecb), "{name} ecb");
                assert_eq!(f[1], tohex(&rc_encrypt(key, pt)), "{name} encrypt");
                assert_eq!(f[2], tohex(pt), "{name} decrypt");
                assert_eq!(f[3], tohex(ctr), "{name} ctr32");
                assert_eq!(f[4], "-22");
            }
            println!("{name}: {} cases agree under qemu -cpu {cpu}", lines.len());
            if let Some(bad) = bad {
                let out = common::run(&q, &bad, &bin, &input);
                assert!(!out.status.success(), "{name} must not run under -cpu {bad}");
            }
        }
        canaries_control(&m, &bin);
    }
}

/// aes-ct rv64gcv's counter mode at VLEN 128, 256 and 512 in kgen-sim: the keystream
/// against RustCrypto at every VLEN, and the vector instructions per byte (printed) about
/// halving with each doubling of VLEN (a pass is VLEN / 16 blocks in the same code).
#[test]
fn rv64gcv_counter_mode_scales_with_vlen() {
    let m = module("aes-ct", "rv64gcv");
    let obj = m.object().unwrap();
    let key: Vec<u8> = (0..16u8).map(|i| i.wrapping_mul(29)).collect();
    let iv = [7u8; 16];
    let n = 16384;
    let pt: Vec<u8> = (0..n).map(|i| (i * 13) as u8).collect();
    let want = ctr32_reference(&key, &iv, &pt);
    let mut per_byte = Vec::new();
    for vlen in [128usize, 256, 512] {
        let mut t = m.target.clone();
        t.vlen = vlen;
        let mut e = Env::new(&obj, &t).unwrap().with_cost_model();
        let ks = schedule(&mut e, &key);
        let ivb = e.buffer(&iv, 0, false);
        let buf = e.buffer(&pt, 3, true);
        e.m.reset_counts();
        e.call(e.sym("AES_ctr32_encrypt"), &[buf, buf, (n / 16) as u64, ks, ivb]).unwrap();
        assert_eq!(e.read(buf, n), want, "VLEN {vlen}");
        let vector: u64 = e.m.counts().iter().filter(|(c, _)| c.is_vector()).map(|(_, k)| k).sum();
        let all = e.m.instructions();
        let v = vector as f64 / n as f64;
        println!("aes-ct rv64gcv AES_ctr32_encrypt, 16 KiB at VLEN {vlen}: {v:.2} vector instructions per byte, {:.2} in all", all as f64 / n as f64);
        per_byte.push(v);
    }
    for w in per_byte.windows(2) {
        let r = w[1] / w[0];
        assert!((0.45..=0.55).contains(&r), "vector instructions per byte {:.2} -> {:.2}: ratio {r:.3}", w[0], w[1]);
    }
}

/// What bounds one block on the C906 (printed; the numbers are the cost model's own
/// counters): `aes-ct c906`'s `AES_encrypt` and `AES_decrypt` issue a few hundred
/// instructions, and the vector unit's arithmetic pipe is busy for nearly the whole call
/// (the sum of its instructions' times from the timing table: 4 cycles a `vrgather.vv`, 2
/// an ALU operation at e8, LMUL 1). So no schedule of these operations is faster than that
/// busy time, and the encryption's, above the 880 cycles of 55 cycles per byte, is the
/// bound on one block computed this way (docs/performance.md says why the gathers are the
/// floor with an `AES_KEY`'s round keys). Asserted: the pipe's busy time is at least 85% of
/// the call, and the issue slots (instructions) are under half of it.
#[test]
fn one_block_is_bound_by_the_vector_unit() {
    for variant in ["c906", "rv64gcv"] {
        let m = module("aes-ct", variant);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let ks = schedule(&mut e, &[7u8; 16]);
        let dks = e.buffer(&[0u8; 244], 0, true);
        let key = e.buffer(&[7u8; 16], 0, false);
        e.call(e.sym("AES_set_decrypt_key"), &[key, 128, dks]).unwrap();
        let one = e.buffer(&[1u8; 16], 0, true);
        for (f, k) in [("AES_encrypt", ks), ("AES_decrypt", dks)] {
            e.call(e.sym(f), &[one, one, k]).unwrap();
            e.m.cost.as_mut().unwrap().breakdown = Default::default();
            let r = e.call(e.sym(f), &[one, one, k]).unwrap();
            let b = e.m.cost.as_ref().unwrap().breakdown.clone();
            println!(
                "aes-ct {variant} {f}: {} cycles ({:.2} c/B), {} instructions; vector ALU busy {} cycles ({:.0}%), vector loads and stores {}, issue waiting for the vector unit {}",
                r.cycles,
                r.cycles as f64 / 16.0,
                r.instructions,
                b.vector_alu_busy,
                100.0 * b.vector_alu_busy as f64 / r.cycles as f64,
                b.vector_memory_busy,
                b.vector_unit_waits
            );
            assert!(b.vector_alu_busy as f64 >= 0.85 * r.cycles as f64 && b.vector_alu_busy <= r.cycles, "aes-ct {variant} {f}: vector ALU busy {} of {} cycles", b.vector_alu_busy, r.cycles);
            assert!(2 * r.instructions < r.cycles, "aes-ct {variant} {f}: {} instructions in {} cycles", r.instructions, r.cycles);
            if f == "AES_encrypt" && variant == "c906" {
                assert!(b.vector_alu_busy > 880, "the vector ALU's work fits 55 c/B now ({} cycles): the bound in docs/performance.md is stale", b.vector_alu_busy);
            }
        }
    }
}
