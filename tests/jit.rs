//! `kgen jit-run` and the JIT buffer as a board would run it:
//! - every kernel variant passes its known-answer plan in kgen-sim at the JIT buffer's own
//!   address; the plan's derived answers (the written-out ChaCha20 block function, the GCM
//!   test case 2 values) agree with RustCrypto;
//! - the image is position independent: linked at any page-aligned address it is the same
//!   bytes, and a C loader, cross-built and run under QEMU, maps the JIT buffer's bytes
//!   twice at addresses the kernel picks, calls the functions through function pointers on
//!   the same plan, and gets the known answers from both copies (c906 scalar variants on
//!   `-cpu thead-c906`, XTheadVector ones on T-Head's QEMU `-cpu c906fdv`, the others on
//!   `-cpu rv64,...`);
//! - negative controls: a flipped byte makes the checks fail (in kgen-sim, through the CLI,
//!   and in the loader), a CPU without the variant's extensions dies with SIGILL, and an
//!   image that refers outside itself is refused.

use kgen_harness::jit::{self as jit_run, Outcome, Path as RunPath, Plan, Verdict};
use kgen_harness::oracle::{self, Tool};
use kgen_dsl::{Abi, Module};
use kgen_emit::jit::{self, FlatImage};
use rand::{Rng, SeedableRng};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Output;

mod common;

/// Every (kernel, variant) of the kernels with known answers (a kernel without a plan has
/// nothing to run; every kernel of kgen's has one, which `every_kernel_has_known_answers`
/// asserts).
fn variants() -> Vec<(&'static str, &'static str)> {
    kgen_kernels::kernels().iter().filter(|k| k.kat.is_some()).flat_map(|k| k.variants.iter().map(move |v| (k.name, v.name))).collect()
}

#[test]
fn every_kernel_has_known_answers() {
    let missing: Vec<&str> = kgen_kernels::kernels().iter().filter(|k| k.kat.is_none()).map(|k| k.name).collect();
    assert!(missing.is_empty(), "kernels without known answers: {missing:?}");
}

fn module(kernel: &str, variant: &str) -> Module {
    kgen_kernels::kernel(kernel).unwrap().variant(variant).unwrap().build(Abi::Psabi).unwrap_or_else(|e| panic!("{kernel} {variant}: {e}"))
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

#[test]
fn reference_values_agree_with_rustcrypto() {
    use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    for n in 0..200usize {
        let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
        let ctr = rng.random_range(0..u32::MAX - 64);
        let data: Vec<u8> = (0..n * 7).map(|_| rng.random()).collect();
        let mut want = data.clone();
        let mut c = chacha20::ChaCha20::new((&key).into(), (&nonce).into());
        c.seek(ctr as u64 * 64);
        c.apply_keystream(&mut want);
        assert_eq!(kgen_kernels::chacha::chacha20_xor(&key, ctr, &nonce, &data), want, "length {}", data.len());
    }
    // GCM test case 2: H = AES-128(0, 0), X1 = C·H, GHASH(H, {}, C).
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    use ghash::universal_hash::UniversalHash;
    let mut h = aes::Block::from([0u8; 16]);
    aes::Aes128::new_from_slice(&[0; 16]).unwrap().encrypt_block(&mut h);
    assert_eq!(h.to_vec(), unhex(kgen_kernels::ghash::TC2_H));
    let c: [u8; 16] = unhex(kgen_kernels::ghash::TC2_C).try_into().unwrap();
    let mut g = ghash::GHash::new(&h);
    g.update(&[c.into()]);
    assert_eq!(g.finalize().to_vec(), unhex(kgen_kernels::ghash::TC2_X1));
    let mut lens = [0u8; 16];
    lens[8..].copy_from_slice(&128u64.to_be_bytes());
    let mut g = ghash::GHash::new(&h);
    g.update(&[c.into(), lens.into()]);
    assert_eq!(g.finalize().to_vec(), unhex(kgen_kernels::ghash::TC2_GHASH));
    // SP 800-38A F.5.1 through RustCrypto's 32-bit counter mode.
    let mut data = unhex(kgen_kernels::aes::CTR_PT);
    ctr::Ctr32BE::<aes::Aes128>::new_from_slices(&unhex(kgen_kernels::aes::CTR_KEY), &unhex(kgen_kernels::aes::CTR_IV)).unwrap().apply_keystream(&mut data);
    assert_eq!(data, unhex(kgen_kernels::aes::CTR_CT));
    // GCM test case 3: C (RustCrypto's AES-GCM) and GHASH(H, {}, C) with H = E(K, 0).
    use aes_gcm::aead::AeadInOut;
    let k3 = unhex(kgen_kernels::aes_gcm::TC3_K);
    let nonce = aes_gcm::Nonce::<aes_gcm::aead::consts::U12>::try_from(&unhex(kgen_kernels::aes_gcm::TC3_IV)[..]).unwrap();
    let mut buf = unhex(kgen_kernels::aes_gcm::TC3_P);
    aes_gcm::Aes128Gcm::new_from_slice(&k3).unwrap().encrypt_inout_detached(&nonce, &[], buf.as_mut_slice().into()).unwrap();
    assert_eq!(buf, unhex(kgen_kernels::aes_gcm::TC3_C));
    let mut h = aes::Block::from([0u8; 16]);
    aes::Aes128::new_from_slice(&k3).unwrap().encrypt_block(&mut h);
    let mut blocks: Vec<ghash::Block> = buf.chunks(16).map(|b| <[u8; 16]>::try_from(b).unwrap().into()).collect();
    let mut lens = [0u8; 16];
    lens[8..].copy_from_slice(&(8 * buf.len() as u64).to_be_bytes());
    blocks.push(lens.into());
    let mut g = ghash::GHash::new(&h);
    g.update(&blocks);
    assert_eq!(g.finalize().to_vec(), unhex(kgen_kernels::aes_gcm::TC3_GHASH));
    // The ChaCha20-Poly1305 plan's h for r = 1, reduced modulo 2^130 - 5, is RustCrypto's
    // Poly1305 tag for r = 1, s = 0 (the tag is h mod p, mod 2^128); the control: one bit
    // of the message changes it.
    let mut one = [0u8; 32];
    one[0] = 1;
    for n in 0..100usize {
        let mut msg: Vec<u8> = (0..16 * (n % 70)).map(|_| rng.random()).collect();
        if n.is_multiple_of(10) {
            msg.iter_mut().for_each(|b| *b = 0xff); // the largest blocks: the folds carry
        }
        let h = kgen_kernels::poly1305::h_for_r1(&msg);
        let got = reduce_p(&h);
        let want: [u8; 16] = poly1305::Poly1305::new(&poly1305::Key::from(one)).compute_unpadded(&msg).into();
        assert_eq!(got, want, "{} blocks", msg.len() / 16);
        if !msg.is_empty() {
            msg[0] ^= 1;
            assert_ne!(reduce_p(&kgen_kernels::poly1305::h_for_r1(&msg)), want, "{} blocks: the control", msg.len() / 16);
        }
    }
}

/// The 24 context bytes of h (u128 and u64 limbs, h < 2^133) reduced modulo 2^130 - 5, the
/// low 128 bits.
fn reduce_p(h: &[u8; 24]) -> [u8; 16] {
    let mut lo = u128::from_le_bytes(h[..16].try_into().unwrap());
    let mut hi = u64::from_le_bytes(h[16..].try_into().unwrap());
    // Fold until h < 2^130, then subtract p once if h >= p.
    while hi >= 4 {
        let (l, c) = lo.overflowing_add(5 * (hi >> 2) as u128);
        (lo, hi) = (l, (hi & 3) + c as u64);
    }
    // h >= p = 2^130 - 5 exactly when hi == 3 and lo >= 2^128 - 5.
    if hi == 3 && lo >= u128::MAX - 4 {
        lo = lo.wrapping_add(5);
    }
    lo.to_le_bytes()
}

#[test]
fn every_variant_passes_in_the_simulator_at_the_buffer_address() {
    for (k, v) in variants() {
        let r = jit_run::jit_run(kgen_kernels::kernel(k).unwrap(), v, true, None).unwrap_or_else(|e| panic!("{k} {v}: {e}"));
        let report = r.lines().join("\n");
        assert!(r.passed(), "{k} {v}:\n{report}");
        assert_eq!(r.path, RunPath::Simulated);
        assert!(r.verdicts.len() >= 2, "{k} {v}: {report}");
        assert_eq!(r.base % jit::PAGE, 0);
        println!("{report}");
    }
}

#[test]
fn a_flipped_byte_fails_the_checks() {
    // The first byte of the code: its low bits are the instruction length, so the first
    // call faults.
    let r = jit_run::jit_run(kgen_kernels::kernel("poly1305").unwrap(), "32-c906", true, Some(0)).unwrap();
    assert!(!r.passed() && r.error.as_deref().is_some_and(|e| e.contains("fault")), "{}", r.lines().join("\n"));
    // A byte of ChaCha20's constants ("expand 32-byte k"): every answer changes.
    let j = jit::jit(&module("chacha20", "rv64gc")).unwrap();
    let r = jit_run::jit_run(kgen_kernels::kernel("chacha20").unwrap(), "rv64gc", true, Some(j.rodata_offset)).unwrap();
    assert!(r.error.is_none() && !r.passed() && r.verdicts.iter().all(|v| !v.ok()), "{}", r.lines().join("\n"));
    assert!(jit_run::jit_run(kgen_kernels::kernel("chacha20").unwrap(), "rv64gc", true, Some(1 << 30)).is_err(), "an offset past the buffer is an error");
}

#[test]
fn cli_exit_status_follows_the_checks() {
    let kgen = env!("CARGO_BIN_EXE_kgen");
    let o = std::process::Command::new(kgen).args(["jit-run", "ghash", "--variant", "rv64gc", "--sim"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("path: simulated in kgen-sim") && out.contains("ok        GCM test case 2") && out.contains("2/2 checks match"), "{out}");
    let o = std::process::Command::new(kgen).args(["jit-run", "ghash", "--variant", "rv64gc", "--sim", "--flip-byte", "0"]).output().unwrap();
    assert!(!o.status.success(), "a flipped byte must fail: {}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("known-answer checks failed"));
    let o = std::process::Command::new(kgen).args(["jit-run", "no-such-kernel"]).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).starts_with("kgen: error: unknown kernel"));
}

#[test]
fn the_image_is_position_independent() {
    for (k, v) in variants() {
        let m = module(k, v);
        let o = m.object().unwrap();
        jit::position_independent(&o).unwrap_or_else(|e| panic!("{k} {v}: {e}"));
        let j = jit::jit(&m).unwrap().image();
        let low = jit::flat_image(&m, 0x1_0000).unwrap();
        let high = jit::flat_image(&m, 0x3f_ffff_0000 - 0x10_0000).unwrap();
        assert!(low.bytes == j.bytes && high.bytes == j.bytes, "{k} {v}: the image depends on its address");
        for (name, &addr) in &j.symbols {
            assert_eq!(addr - j.base, low.symbols[name] - low.base, "{k} {v}: {name}");
        }
        if !o.relocs.is_empty() {
            // Negative control: a reference to a symbol outside the image is refused.
            let mut bad = o.clone();
            bad.relocs[0].sym = "outside".into();
            assert!(jit::position_independent(&bad).is_err(), "{k} {v}");
        }
    }
}

/// Maps an image (read+execute) at addresses mmap picks, once per copy, and runs a
/// `Plan::script` against each copy: prints `copy K ADDRESS`, `ret I HEX` after each call,
/// `buf I HEX` per buffer at the end.
const LOADER_C: &str = r#"
#include <sys/mman.h>
typedef uint64_t (*fn8)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  static unsigned char data[1 << 20];
  *n = fread(data, 1, sizeof data, f);
  fclose(f);
  return data;
}
int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: loader IMAGE SCRIPT COPIES\n"); return 2; }
  size_t n;
  unsigned char *img = slurp(argv[1], &n);
  size_t len = (n + 4095) & ~(size_t)4095;
  for (int k = 0; k < atoi(argv[3]); k++) {
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 2; }
    memcpy(p, img, n);
    if (mprotect(p, len, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 2; }
    __builtin___clear_cache((char *)p, (char *)p + n);
    printf("copy %d %lx\n", k, (unsigned long)p);
    FILE *s = fopen(argv[2], "r");
    if (!s) { perror(argv[2]); return 2; }
    unsigned char *bufs[64];
    size_t sizes[64];
    int nb = 0, nc = 0;
    char word[16];
    while (fscanf(s, "%15s", word) == 1) {
      if (!strcmp(word, "buf")) {
        size_t size, off;
        if (fscanf(s, "%zu %zu", &size, &off) != 2 || nb == 64) return 2;
        char *hex = malloc(2 * size + 16);
        if (fscanf(s, "%s", hex) != 1) return 2;
        unsigned char *raw = aligned_alloc(64, (size + off + 127) & ~(size_t)63);
        bufs[nb] = raw + off;
        sizes[nb] = size;
        if (size) unhex(hex, bufs[nb]);
        free(hex);
        nb++;
      } else if (!strcmp(word, "call")) {
        unsigned long off;
        int na;
        if (fscanf(s, "%lx %d", &off, &na) != 2 || na > 8) return 2;
        uint64_t a[8] = {0};
        for (int i = 0; i < na; i++) {
          char t[64];
          int bi;
          unsigned long bo;
          if (fscanf(s, "%63s", t) != 1) return 2;
          if (t[0] == 'b' && sscanf(t + 1, "%d+%lu", &bi, &bo) == 2 && bi < nb) a[i] = (uint64_t)(uintptr_t)(bufs[bi] + bo);
          else if (t[0] == 'i') a[i] = strtoull(t + 1, 0, 16);
          else return 2;
        }
        fn8 f = (fn8)(uintptr_t)(p + off);
        uint64_t r = f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        printf("ret %d %llx\n", nc++, (unsigned long long)r);
        fflush(stdout);
      } else {
        return 2;
      }
    }
    fclose(s);
    for (int i = 0; i < nb; i++) {
      printf("buf %d ", i);
      for (size_t j = 0; j < sizes[i]; j++) printf("%02x", bufs[i][j]);
      printf("\n");
    }
  }
  return 0;
}
"#;

/// The loader's output: (address, outcome) per copy.
fn parse_loader(out: &str) -> Vec<(u64, Outcome)> {
    let mut copies: Vec<(u64, Outcome)> = Vec::new();
    for l in out.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["copy", _, addr] => copies.push((u64::from_str_radix(addr, 16).unwrap(), Outcome { rets: vec![], buffers: vec![] })),
            ["ret", _, v] => copies.last_mut().unwrap().1.rets.push(u64::from_str_radix(v, 16).unwrap()),
            ["buf", _, hex] => copies.last_mut().unwrap().1.buffers.push(unhex(hex)),
            ["buf", _] => copies.last_mut().unwrap().1.buffers.push(vec![]),
            _ => panic!("unexpected loader output line `{l}`"),
        }
    }
    copies
}

fn run_loader(q: &Tool, cpu: &str, loader: &Path, image: &Path, script: &Path) -> Output {
    q.command().args(["-cpu", cpu]).arg(loader).arg(image).arg(script).arg("2").output().unwrap()
}

/// Checks that both copies ran at distinct addresses (neither the one the image was linked
/// for) with the same results and buffers; returns the verdicts on the first copy.
fn loader_verdicts(plan: &Plan, o: &Output, what: &str, jit_base: u64) -> (Vec<Verdict>, [u64; 2]) {
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{what}: {}\n{out}{}", o.status, String::from_utf8_lossy(&o.stderr));
    let copies = parse_loader(&out);
    assert_eq!(copies.len(), 2, "{what}: {out}");
    let (a, b) = (&copies[0], &copies[1]);
    assert!(a.0 != b.0 && a.0 != jit_base && b.0 != jit_base, "{what}: the copies must sit at other addresses than the image was linked for");
    // a0 of a function without a result is whatever it left there (an address, say).
    let results = |o: &Outcome| -> Vec<u64> { plan.calls.iter().zip(&o.rets).filter(|(c, _)| c.ret.is_some()).map(|(_, r)| *r).collect() };
    assert!(a.1.buffers == b.1.buffers && results(&a.1) == results(&b.1), "{what}: the two copies disagree");
    assert_eq!((a.1.rets.len(), a.1.buffers.len()), (plan.calls.len(), plan.buffers.len()), "{what}");
    (plan.verdicts(&a.1), [a.0, b.0])
}

fn failures(v: &[Verdict]) -> Vec<String> {
    v.iter().filter(|v| !v.ok()).map(|v| format!("{}: got {}, want {}", v.name, v.got, v.want)).collect()
}

#[test]
fn jit_buffer_runs_from_a_c_loader_under_qemu() {
    let dir = oracle::scratch("jit-loader");
    let src = format!("{}{LOADER_C}", common::C_HELPERS);
    let Some(loader) = common::build(&dir, "loader", &src, &[]) else { return };
    for (k, v) in variants() {
        let m = module(k, v);
        let j = jit::jit(&m).unwrap();
        let img: FlatImage = j.image();
        let plan = jit_run::plan(kgen_kernels::kernel(k).unwrap(), v).unwrap();
        let (image, script) = (dir.join(format!("{k}-{v}.img")), dir.join(format!("{k}-{v}.script")));
        std::fs::write(&image, &img.bytes).unwrap();
        std::fs::write(&script, jit_run::script(&plan, &img).unwrap()).unwrap();
        let (q, cpu, bad) = common::emulator(&m);
        let Some(q) = q else { return };
        let what = format!("{k} {v} under -cpu {cpu}");
        let (verdicts, at) = loader_verdicts(&plan, &run_loader(&q, &cpu, &loader, &image, &script), &what, j.base);
        let failed = failures(&verdicts);
        assert!(failed.is_empty() && !verdicts.is_empty(), "{what}:\n{}", failed.join("\n"));
        println!("{what}: {} checks match in both copies (linked at {:#x}, run at {:#x} and {:#x})", verdicts.len(), j.base, at[0], at[1]);
        if let Some(bad) = bad {
            let o = run_loader(&q, &bad, &loader, &image, &script);
            assert_eq!(o.status.signal(), Some(4), "{k} {v} under -cpu {bad} must die with SIGILL, got {}", o.status);
        }
    }
    // A flipped byte in ChaCha20's constants: the loader's results no longer match.
    let m = module("chacha20", "rv64gc");
    let j = jit::jit(&m).unwrap();
    let mut img = j.image();
    img.bytes[img.rodata_offset] ^= 1;
    let plan = jit_run::plan(kgen_kernels::kernel("chacha20").unwrap(), "rv64gc").unwrap();
    let (image, script) = (dir.join("corrupt.img"), dir.join("corrupt.script"));
    std::fs::write(&image, &img.bytes).unwrap();
    std::fs::write(&script, jit_run::script(&plan, &img).unwrap()).unwrap();
    let Some(q) = oracle::qemu() else { return };
    let failed = failures(&loader_verdicts(&plan, &run_loader(&q, "rv64", &loader, &image, &script), "corrupted chacha20 rv64gc", j.base).0);
    assert_eq!(failed.len(), plan.expects.len(), "every check must fail: {failed:?}");
}
