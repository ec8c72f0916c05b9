//! AES kernels (both variants) against FIPS-197 and RustCrypto `aes`: in kgen-sim (10,000
//! random (key, block) pairs per key size and direction, unaligned and in-place buffers,
//! the key-schedule layout, the -1/-2 returns) and, through a C harness calling the
//! emitted `.S` with the real ABI, under QEMU (`-cpu thead-c906` for c906, `-cpu rv64` for
//! rv64gc; `-cpu rv64` must refuse the c906 build).

use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use kgen::oracle;
use kgen_dsl::Abi;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::Stdio;

const VARIANTS: [&str; 2] = ["c906", "rv64gc"];

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn module(variant: &str) -> kgen_dsl::Module {
    kgen_kernels::kernel("aes").unwrap().variant(variant).unwrap().build(Abi::Psabi).unwrap_or_else(|e| panic!("{e}"))
}

fn env(variant: &str) -> Env {
    let m = module(variant);
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

const FIPS: [(&str, &str); 3] = [
    ("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
    ("000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"),
    ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"),
];
const FIPS_PT: &str = "00112233445566778899aabbccddeeff";

#[test]
fn fips197_vectors() {
    for variant in VARIANTS {
        let mut e = env(variant);
        let pt = hex(FIPS_PT);
        for (key, ct) in FIPS {
            let key = hex(key);
            let k = e.buffer(&key, 0, false);
            let ks = e.buffer(&[0u8; 244], 0, true);
            assert_eq!(e.call(e.sym("AES_set_encrypt_key"), &[k, key.len() as u64 * 8, ks]).unwrap().a0, 0);
            let inp = e.buffer(&pt, 0, false);
            let out = e.buffer(&[0u8; 16], 0, true);
            e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
            assert_eq!(e.read(out, 16), hex(ct), "{variant} encrypt {}", key.len() * 8);
            let dks = e.buffer(&[0u8; 244], 0, true);
            assert_eq!(e.call(e.sym("AES_set_decrypt_key"), &[k, key.len() as u64 * 8, dks]).unwrap().a0, 0);
            let cin = e.buffer(&hex(ct), 0, false);
            e.call(e.sym("AES_decrypt"), &[cin, out, dks]).unwrap();
            assert_eq!(e.read(out, 16), pt, "{variant} decrypt {}", key.len() * 8);
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
    for variant in VARIANTS {
        let mut e = env(variant);
        for (key, words, last, rounds) in cases {
            let key = hex(key);
            let k = e.buffer(&key, 0, false);
            let ks = e.buffer(&[0xee; 244], 0, true);
            e.call(e.sym("AES_set_encrypt_key"), &[k, key.len() as u64 * 8, ks]).unwrap();
            let sched = e.read(ks, 244);
            assert_eq!(&sched[..key.len()], &key[..], "round key 0 is the key itself");
            assert_eq!(tohex(&sched[4 * (words - 1)..4 * words]), last, "{variant}: last word");
            assert_eq!(u32::from_le_bytes(sched[240..244].try_into().unwrap()), rounds);
            if words < 60 {
                assert!(sched[4 * words..240].iter().all(|&b| b == 0xee), "nothing written past the schedule");
            }
        }
    }
}

#[test]
fn bad_arguments() {
    for variant in VARIANTS {
        let mut e = env(variant);
        let k = e.buffer(&[1; 32], 0, false);
        let ks = e.buffer(&[0; 244], 0, true);
        for f in ["AES_set_encrypt_key", "AES_set_decrypt_key"] {
            let s = e.sym(f);
            assert_eq!(e.call(s, &[0, 128, ks]).unwrap().a0 as i64, -1, "{variant} {f} null key");
            assert_eq!(e.call(s, &[k, 128, 0]).unwrap().a0 as i64, -1, "{variant} {f} null schedule");
            for bits in [0u64, 64, 127, 129, 255, 512, (-128i64) as u64] {
                assert_eq!(e.call(s, &[k, bits, ks]).unwrap().a0 as i64, -2, "{variant} {f} bits {bits}");
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
    for variant in VARIANTS {
        let mut e = env(variant);
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
                        assert_eq!(e.read(out, 16), want, "{variant} {f} {bits}");
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
#include <stdio.h>
#include <string.h>
static int unhex(const char *s, unsigned char *out) {
  int n = 0; unsigned v;
  while (sscanf(s + 2 * n, "%2x", &v) == 1) out[n++] = v;
  return n;
}
int main(void) {
  char kh[80], ph[40];
  int bits;
  while (scanf("%d %79s %39s", &bits, kh, ph) == 3) {
    unsigned char key[32], pt[16], buf[48], ct[16], dt[16];
    AES_KEY ek, dk;
    unhex(kh, key); unhex(ph, pt);
    if (AES_set_encrypt_key(key, bits, &ek) || AES_set_decrypt_key(key, bits, &dk)) { printf("setkey failed\n"); return 1; }
    memcpy(buf + 1, pt, 16);                 /* unaligned input */
    AES_encrypt(buf + 1, buf + 19, &ek);     /* unaligned output */
    memcpy(ct, buf + 19, 16);
    AES_decrypt(ct, dt, &dk);
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
    let (Some(gcc), Some(qemu)) = (oracle::gcc(), oracle::qemu()) else { return };
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
    for (variant, cpu, bad_cpu) in [("c906", "thead-c906", Some("rv64")), ("rv64gc", "rv64", None)] {
        let m = module(variant);
        // The harness declares nothing: the prototypes come from the generated header.
        std::fs::write(dir.join("harness.c"), format!("{}{HARNESS}", common::header(&dir, &m))).unwrap();
        let o = kgen_emit::EmitOptions { command: "test".into(), ..Default::default() };
        let s = dir.join(format!("aes-{variant}.S"));
        std::fs::write(&s, kgen_emit::openssl_s(&m, &o).unwrap()).unwrap();
        let bin = dir.join(format!("aes-{variant}"));
        let r = gcc.command().args(["-static", "-O1", "-o"]).arg(&bin).arg(dir.join("harness.c")).arg(&s).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let run = |cpu: &str| {
            let mut child = qemu.command().args(["-cpu", cpu]).arg(&bin).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        };
        let out = run(cpu);
        assert!(out.status.success(), "{variant} under -cpu {cpu}: {}", out.status);
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), expect.len());
        for ((key, pt), line) in expect.iter().zip(&lines) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let pt16: [u8; 16] = pt.as_slice().try_into().unwrap();
            assert_eq!(f[0], tohex(&rc_encrypt(key, &pt16)), "{variant} {line}");
            assert_eq!(f[1], tohex(pt), "{variant} decrypt");
            assert_eq!((f[2], f[3]), ("-1", "-2"));
        }
        println!("{variant}: {} vectors agree under qemu -cpu {cpu}", lines.len());
        if let Some(bad) = bad_cpu {
            let out = run(bad);
            assert!(!out.status.success(), "the c906 build must not run under -cpu {bad}");
            println!("{variant}: -cpu {bad} refuses it ({})", out.status);
        }
    }
}

#[test]
fn two_instructions_per_lookup_in_the_c906_rounds() {
    // Count the instructions of one full round in the listing: 16 lookups of 2 instructions
    // (th.extu + th.lrwu), 16 xor, 4 round-key loads.
    let m = module("c906");
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
    for variant in VARIANTS {
        let m = module(variant);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let kb = e.buffer(&[7u8; 16], 0, false);
        let ks = e.buffer(&[0u8; 244], 0, true);
        e.call(e.sym("AES_set_encrypt_key"), &[kb, 128, ks]).unwrap();
        let inp = e.buffer(&[1u8; 16], 0, false);
        let out = e.buffer(&[0u8; 16], 0, true);
        e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        let r = e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        println!("{variant}: AES-128 encrypt {} instructions, {} modeled cycles", r.instructions, r.cycles);
        if variant == "c906" {
            assert!(r.cycles <= 560, "c906 AES-128 encrypt above the 560-cycle target: {}", r.cycles);
        }
    }
}
