//! ChaCha20 kernels against RustCrypto `chacha20` and RFC 8439, in kgen-sim.
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use common::{chacha20_xor as reference, rfc_block, rfc_block_rounds};
use kgen_dsl::Abi;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

const VARIANTS: [&str; 5] = ["c906", "c906-novector", "rv64gcv", "rva23", "rv64gc"];

fn module(variant: &str, abi: Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel("chacha20").unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{variant}: {e}"))
}

fn env(variant: &str, abi: Abi) -> Env {
    let m = module(variant, abi);
    Env::new(&m.object().unwrap(), &m.target).unwrap()
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
        let mut ks8 = [0u8; 64];
        let mut c8 = chacha20::ChaCha8::new((&key).into(), (&nonce).into());
        c8.seek(ctr as u64 * 64);
        c8.apply_keystream(&mut ks8);
        assert_eq!(ks8, rfc_block_rounds(&key, ctr, &nonce, 8));
        let mut ks12 = [0u8; 64];
        let mut c12 = chacha20::ChaCha12::new((&key).into(), (&nonce).into());
        c12.seek(ctr as u64 * 64);
        c12.apply_keystream(&mut ks12);
        assert_eq!(ks12, rfc_block_rounds(&key, ctr, &nonce, 12));
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

/// One case: random key, nonce, data and offsets; `len` bytes from block `ctr`; checked
/// against the reference.
fn random_case(e: &mut Env, rng: &mut rand_chacha::ChaCha8Rng, len: usize, ctr: u32, in_place: bool, what: &str) {
    let (key, nonce): ([u8; 32], [u8; 12]) = (rng.random(), rng.random());
    let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
    let (io, oo) = (rng.random_range(0..16), rng.random_range(0..16));
    let got = run_openssl(e, &key, ctr, &nonce, &data, io, oo, in_place);
    assert_eq!(got, reference(&key, ctr, &nonce, &data), "{what}: len {len} ctr {ctr:#x} offsets {io}/{oo} in place {in_place}");
}

#[test]
fn every_length_and_offset() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for v in VARIANTS {
        let mut e = env(v, Abi::Psabi);
        for len in (0..=1100).step_by(7).chain([4096, 16384]) {
            let ctr: u32 = rng.random();
            random_case(&mut e, &mut rng, len, ctr, len % 3 == 0, v);
        }
    }
}

/// 10,000 random cases per variant: lengths mostly 0..1100 (some 1100..5000), offsets
/// 0..15, in place a third of the time, counters anywhere and near the 2^32 wrap.
#[test]
fn ten_thousand_random_cases() {
    std::thread::scope(|sc| {
        for v in VARIANTS {
            sc.spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
                let mut e = env(v, Abi::Psabi);
                for n in 0..10_000 {
                    if n % 200 == 0 {
                        // Every call maps new guarded buffers: start afresh to bound memory.
                        e = env(v, Abi::Psabi);
                    }
                    let len = if n % 50 == 0 { rng.random_range(1100..5000) } else { rng.random_range(0..=1100) };
                    let ctr: u32 = if n % 10 == 0 { u32::MAX - rng.random_range(0..80) } else { rng.random() };
                    random_case(&mut e, &mut rng, len, ctr, n % 3 == 0, &format!("{v} case {n}"));
                }
            });
        }
    });
}

/// The Linux kernel's 16-word state: constants, key, counter, nonce (little-endian).
fn linux_state(key: &[u8; 32], ctr: u32, nonce: &[u8; 12]) -> Vec<u8> {
    let mut state: Vec<u8> = kgen_kernels::chacha::SIGMA.iter().flat_map(|w| w.to_le_bytes()).collect();
    state.extend_from_slice(key);
    state.extend_from_slice(&ctr.to_le_bytes());
    state.extend_from_slice(nonce);
    state
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
                let state = linux_state(&key, ctr, &nonce);
                let sb = e.buffer(&state, 0, true);
                let data: Vec<u8> = (0..nblocks * 64).map(|_| rng.random()).collect();
                let inp = e.buffer(&data, 0, false);
                let out = e.buffer(&vec![0; data.len()], 0, true);
                e.call(e.sym(&kgen_kernels::chacha::LINUX.symbol(v)), &[sb, inp, out, nblocks, nrounds]).unwrap();
                let got = e.read(out, data.len());
                let want: Vec<u8> = data
                    .chunks(64)
                    .enumerate()
                    .flat_map(|(b, c)| {
                        let ks = rfc_block_rounds(&key, ctr.wrapping_add(b as u32), &nonce, nrounds as usize);
                        c.iter().zip(ks).map(|(x, k)| x ^ k).collect::<Vec<u8>>()
                    })
                    .collect();
                assert_eq!(got, want, "{v} nblocks {nblocks} nrounds {nrounds}");
                let new_ctr = u32::from_le_bytes(e.read(sb + 48, 4).try_into().unwrap());
                assert_eq!(new_ctr, ctr.wrapping_add(nblocks as u32), "{v} counter written back");
            }
        }
    }
}

/// Modeled cost: every result right, the same cycles on a second identical call (the
/// model is deterministic once warm), and the claim the README makes about the dispatcher:
/// `c906` is faster than `c906-novector` from 128 bytes up and within 1% below.
#[test]
fn cost() {
    let mut cycles = std::collections::BTreeMap::new();
    for v in VARIANTS {
        let m = module(v, Abi::Psabi);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let (key, nonce) = ([1u8; 32], [0u8; 12]);
        for len in [64usize, 100, 128, 256, 320, 1024, 4096] {
            let kb = e.buffer(&key, 0, false);
            let cb = e.buffer(&[0; 16], 0, false);
            let data = vec![0u8; len];
            let inp = e.buffer(&data, 0, true);
            let f = e.sym("ChaCha20_ctr32");
            let first = e.call(f, &[inp, inp, len as u64, kb, cb]).unwrap();
            assert_eq!(e.read(inp, len), reference(&key, 0, &nonce, &data), "{v} {len} B");
            let second = e.call(f, &[inp, inp, len as u64, kb, cb]).unwrap();
            assert_eq!(e.read(inp, len), data, "{v} {len} B: applying the keystream twice gives the input back");
            assert_eq!(first.instructions, second.instructions, "{v} {len} B");
            println!("{v:>14} {len:>5} B: {:>7} instructions {:>7} cycles {:>6.2} c/B {:?}", second.instructions, second.cycles, second.cycles as f64 / len as f64, e.m.cost.as_ref().unwrap().breakdown);
            cycles.insert((v, len), second.cycles);
        }
    }
    for len in [64usize, 100, 128, 256, 320, 1024, 4096] {
        let (vec, scalar) = (cycles[&("c906", len)], cycles[&("c906-novector", len)]);
        if len >= 128 {
            assert!(vec < scalar, "c906 must beat c906-novector at {len} B: {vec} >= {scalar} cycles");
        } else {
            assert!(vec as f64 <= scalar as f64 * 1.01, "c906 must stay within 1% of c906-novector at {len} B: {vec} vs {scalar} cycles");
        }
    }
}

/// A long buffer through the lane path, checked against the reference (and the
/// simulator's speed printed, for information).
#[test]
fn long_buffer_matches_reference() {
    let m = module("c906", Abi::Psabi);
    let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap();
    let (key, nonce): ([u8; 32], [u8; 12]) = (std::array::from_fn(|i| i as u8), [7; 12]);
    let kb = e.buffer(&key, 0, false);
    let mut counter = (u32::MAX - 700).to_le_bytes().to_vec();
    counter.extend_from_slice(&nonce);
    let cb = e.buffer(&counter, 0, false);
    let data = common::gen_bytes(99, 65536);
    let inp = e.buffer(&data, 0, true);
    let t = std::time::Instant::now();
    let r = e.call(e.sym("ChaCha20_ctr32"), &[inp, inp, 65536, kb, cb]).unwrap();
    let s = t.elapsed().as_secs_f64();
    assert_eq!(e.read(inp, 65536), reference(&key, u32::MAX - 700, &nonce, &data), "64 KiB across the counter wrap");
    println!("{} instructions in {s:.3} s: {:.1} M instructions/s", r.instructions, r.instructions as f64 / s / 1e6);
}

mod common;

const CHACHA_HARNESS: &str = r#"
int main(void) {
  static unsigned char buf[70000 + 64];
  unsigned long len, io, oo, inplace, seed; unsigned ctr;
  char kh[80], nh[40];
  while (scanf("%lu %lu %lu %lu %u %79s %39s %lu", &len, &io, &oo, &inplace, &ctr, kh, nh, &seed) == 8) {
    unsigned int key[8], counter[4];
    unhex(kh, (unsigned char *)key);
    counter[0] = ctr;
    unhex(nh, (unsigned char *)&counter[1]);
    unsigned char *in = malloc(len + 32), *out = malloc(len + 32);
    gen_bytes(seed, in + io, len);
    unsigned char *dst = inplace ? in + io : out + oo;
    ChaCha20_ctr32(dst, in + io, len, key, counter);
    printf("%016llx\n", (unsigned long long)fnv(dst, len));
    free(in); free(out);
  }
  (void)buf;
  return 0;
}
"#;

const CHACHA_LINUX_HARNESS: &str = r#"
int main(void) {
  unsigned long nblocks, seed; unsigned ctr; int nrounds;
  char sh[140];
  while (scanf("%lu %d %u %139s %lu", &nblocks, &nrounds, &ctr, sh, &seed) == 5) {
    unsigned int state[16];
    unhex(sh, (unsigned char *)state);
    state[12] = ctr;
    size_t len = nblocks * 64;
    unsigned char *in = malloc(len), *out = malloc(len);
    gen_bytes(seed, in, len);
    SYM(state, in, out, nblocks, nrounds);
    printf("%016llx %u\n", (unsigned long long)fnv(out, len), state[12]);
    free(in); free(out);
  }
  return 0;
}
"#;

struct QCase {
    len: usize,
    io: usize,
    oo: usize,
    inplace: bool,
    ctr: u32,
    key: [u8; 32],
    nonce: [u8; 12],
    seed: u64,
}

fn qemu_cases() -> Vec<QCase> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
    let mut v = Vec::new();
    let mut push = |len: usize, ctr: u32, rng: &mut rand_chacha::ChaCha8Rng| {
        v.push(QCase { len, io: rng.random_range(0..16), oo: rng.random_range(0..16), inplace: rng.random_range(0..3) == 0, ctr, key: rng.random(), nonce: rng.random(), seed: rng.random() });
    };
    for len in (0..=1100).chain([4096, 16384, 65536]) {
        let ctr = rng.random();
        push(len, ctr, &mut rng);
    }
    for ctr in [0u32, 1, u32::MAX - 4, u32::MAX - 3, u32::MAX - 2, u32::MAX - 1, u32::MAX] {
        for len in [1usize, 64, 127, 128, 200, 320, 700] {
            push(len, ctr, &mut rng);
        }
    }
    for _ in 0..(10_000 - 1104 - 49) {
        let len = rng.random_range(0..2048);
        let ctr = if rng.random_range(0..10) == 0 { u32::MAX - rng.random_range(0..40) } else { rng.random() };
        push(len, ctr, &mut rng);
    }
    assert!(v.len() >= 10_000);
    v
}

#[test]
fn emitted_assembly_under_qemu() {
    let cases = qemu_cases();
    let mut input = String::new();
    let mut want = Vec::new();
    for c in &cases {
        let hexs = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        input.push_str(&format!("{} {} {} {} {} {} {} {}\n", c.len, c.io, c.oo, c.inplace as u8, c.ctr, hexs(&c.key), hexs(&c.nonce), c.seed));
        let data = common::gen_bytes(c.seed, c.len);
        want.push(format!("{:016x}", common::fnv(&reference(&c.key, c.ctr, &c.nonce, &data))));
    }
    let dir = kgen_harness::oracle::scratch("chacha_qemu");
    for v in VARIANTS {
        let m = module(v, Abi::Psabi);
        let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
        let asm = kgen_emit::openssl_s(&m, &o).unwrap();
        let src = format!("{}{}{CHACHA_HARNESS}", common::C_HELPERS, common::header(&dir, &m));
        let Some(bin) = common::build(&dir, &format!("chacha-{v}"), &src, &[(&format!("chacha-{v}.S"), asm)]) else { return };
        // Every VLEN the variant is declared for (RVV 1.0: 128, 256, 512).
        for (q, cpu, bad) in common::emulators(&m) {
            let Some(q) = q else { return };
            let out = common::run(&q, &cpu, &bin, &input);
            assert!(out.status.success(), "{v} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
            let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
            assert_eq!(got.len(), want.len(), "{v} -cpu {cpu}");
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                let c = &cases[k];
                assert_eq!(g, w, "{v} under qemu -cpu {cpu}: len {} offsets {}/{} in-place {} ctr {:#x}", c.len, c.io, c.oo, c.inplace, c.ctr);
            }
            println!("{v}: {} cases agree under qemu -cpu {cpu}", got.len());
            if let Some(bad) = bad {
                let out = common::run(&q, &bad, &bin, &input);
                assert!(!out.status.success(), "{v} must fault under -cpu {bad}");
                println!("{v}: -cpu {bad} refuses it ({})", out.status);
            }
        }
        let (q, cpu, _) = common::emulator(&m);
        let Some(q) = q else { return };
        // The Linux form, through the stub linkage.h.
        let ml = module(v, Abi::Linux);
        let lasm = kgen_emit::linux_s(&ml, &o).unwrap();
        let sym = kgen_kernels::chacha::LINUX.symbol(v);
        let lsrc = format!("{}{}#define SYM {sym}\n{CHACHA_LINUX_HARNESS}", common::C_HELPERS, common::header(&dir, &ml));
        let Some(lbin) = common::build(&dir, &format!("chacha-linux-{v}"), &lsrc, &[(&format!("chacha-linux-{v}.S"), lasm)]) else { return };
        let mut linput = String::new();
        let mut lwant = Vec::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for n in 0..60 {
            let nblocks = [1usize, 2, 3, 4, 5, 6, 9, 17][n % 8];
            let key: [u8; 32] = rng.random();
            let nonce: [u8; 12] = rng.random();
            let ctr: u32 = if n % 5 == 0 { u32::MAX - 2 } else { rng.random() };
            let seed: u64 = rng.random();
            let state = linux_state(&key, ctr, &nonce);
            let hexs: String = state.iter().map(|x| format!("{x:02x}")).collect();
            linput.push_str(&format!("{nblocks} 20 {ctr} {hexs} {seed}\n"));
            let data = common::gen_bytes(seed, nblocks * 64);
            lwant.push(format!("{:016x} {}", common::fnv(&reference(&key, ctr, &nonce, &data)), ctr.wrapping_add(nblocks as u32)));
        }
        let out = common::run(&q, &cpu, &lbin, &linput);
        assert!(out.status.success(), "linux {v}: {}", out.status);
        let got: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
        assert_eq!(got, lwant, "linux {v}");
        println!("{v}: Linux form agrees under qemu ({} cases)", got.len());
    }
}
