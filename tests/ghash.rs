//! GHASH against RustCrypto's `ghash` and the GCM test vectors (via AES-GCM tags computed
//! with RustCrypto's `aes`): Wycheproof's AES-GCM set, the GCM spec's test cases, random
//! keys, states and messages, chaining across split calls, every block count around the
//! `c906` vector path's thresholds; in kgen-sim and under QEMU (T-Head's for XTheadVector).
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use ghash::universal_hash::UniversalHash;
use kgen_dsl::entry::Entry;
use kgen_dsl::Abi;
use kgen_kernels::ghash as kg;
use kgen_sim::Env;
use rand::{Rng, SeedableRng};

mod common;

const VARIANTS: [&str; 4] = ["c906", "c906-novector", "rv64gc", "rv64gc-zbc"];

fn module(variant: &str, abi: Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel("ghash").unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{variant}: {e}"))
}

/// A GHASH instance in the simulator, through the OpenSSL ABI.
struct Sim {
    e: Env,
    variant: String,
    table: u64,
}

impl Sim {
    fn new(variant: &str) -> Sim {
        let m = module(variant, Abi::Psabi);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap();
        let table = e.buffer(&[0u8; 256], 0, true);
        Sim { e, variant: variant.into(), table }
    }

    /// With the C906 cost model on.
    fn timed(variant: &str) -> Sim {
        let m = module(variant, Abi::Psabi);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap().with_cost_model();
        let table = e.buffer(&[0u8; 256], 0, true);
        Sim { e, variant: variant.into(), table }
    }

    /// The address of this variant's function for entry point `en`.
    fn func(&self, en: &Entry) -> u64 {
        self.e.sym(&en.symbol(&self.variant))
    }

    fn init(&mut self, h: &[u8; 16]) {
        // u64 H[2] in host order: the big-endian words of E(0).
        let mut hb = Vec::new();
        hb.extend_from_slice(&u64::from_be_bytes(h[..8].try_into().unwrap()).to_le_bytes());
        hb.extend_from_slice(&u64::from_be_bytes(h[8..].try_into().unwrap()).to_le_bytes());
        let hp = self.e.buffer(&hb, 0, false);
        let f = self.func(&kg::INIT);
        self.e.call(f, &[self.table, hp]).unwrap();
    }

    /// Xi after absorbing `msg` (a multiple of 16 bytes) at byte offset `off`.
    fn ghash(&mut self, xi: &[u8; 16], msg: &[u8], off: usize) -> [u8; 16] {
        let x = self.e.buffer(xi, 0, true);
        let inp = self.e.buffer(msg, off, false);
        let f = self.func(&kg::GHASH);
        self.e.call(f, &[x, self.table, inp, msg.len() as u64]).unwrap();
        self.e.read(x, 16).try_into().unwrap()
    }

    fn gmult(&mut self, xi: &[u8; 16]) -> [u8; 16] {
        let x = self.e.buffer(xi, 0, true);
        let f = self.func(&kg::GMULT);
        self.e.call(f, &[x, self.table]).unwrap();
        self.e.read(x, 16).try_into().unwrap()
    }
}

/// Vector instructions the machine has run since the last reset of its counts.
fn vector_instructions(e: &mut Env) -> u64 {
    let n = e.m.counts().iter().filter(|(c, _)| c.is_vector()).map(|(_, n)| n).sum();
    e.m.reset_counts();
    n
}

/// RustCrypto's GHASH continued from state `xi` (GHASH is linear: fold `xi` into the first
/// block).
fn reference(h: &[u8; 16], xi: &[u8; 16], msg: &[u8]) -> [u8; 16] {
    if msg.is_empty() {
        return *xi;
    }
    let mut g = ghash::GHash::new(&(*h).into());
    let mut first = [0u8; 16];
    for i in 0..16 {
        first[i] = msg[i] ^ xi[i];
    }
    g.update(&[first.into()]);
    let rest: Vec<ghash::Block> = msg[16..].chunks(16).map(|c| <[u8; 16]>::try_from(c).unwrap().into()).collect();
    g.update(&rest);
    g.finalize().into()
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

/// The AES-GCM tag of (key, iv, aad, ct), its GHASH computed by the kernel.
fn gcm_tag(s: &mut Sim, key: &[u8], iv: &[u8], aad: &[u8], ct: &[u8]) -> [u8; 16] {
    let h = aes_block(key, [0; 16]);
    s.init(&h);
    let j0: [u8; 16] = if iv.len() == 12 {
        let mut j = [0u8; 16];
        j[..12].copy_from_slice(iv);
        j[15] = 1;
        j
    } else {
        let mut m = pad16(iv);
        m.extend_from_slice(&[0u8; 8]);
        m.extend_from_slice(&(iv.len() as u64 * 8).to_be_bytes());
        s.ghash(&[0; 16], &m, 0)
    };
    let mut m = pad16(aad);
    m.extend_from_slice(&pad16(ct));
    m.extend_from_slice(&(aad.len() as u64 * 8).to_be_bytes());
    m.extend_from_slice(&(ct.len() as u64 * 8).to_be_bytes());
    let g = s.ghash(&[0; 16], &m, 0);
    let e = aes_block(key, j0);
    std::array::from_fn(|i| g[i] ^ e[i])
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Test cases 1-4 of the GCM specification (McGrew & Viega), AES-128.
#[test]
fn gcm_spec_test_cases() {
    let k3 = "feffe9928665731c6d6a8f9467308308";
    let iv3 = "cafebabefacedbaddecaf888";
    let c3 = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985";
    let cases = [
        ("00000000000000000000000000000000", "000000000000000000000000", "", "", "58e2fccefa7e3061367f1d57a4e7455a"),
        ("00000000000000000000000000000000", "000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"),
        (k3, iv3, "", c3, "4d5c2af327cd64a62cf35abd2ba6fab4"),
        (k3, iv3, "feedfacedeadbeeffeedfacedeadbeefabaddad2", &c3[..120], "5bc94fbc3221a5db94fae95ae7121a47"),
    ];
    for v in VARIANTS {
        let mut s = Sim::new(v);
        for (n, (k, iv, a, c, t)) in cases.iter().enumerate() {
            assert_eq!(gcm_tag(&mut s, &hex(k), &hex(iv), &hex(a), &hex(c)).to_vec(), hex(t), "{v}: test case {}", n + 1);
        }
    }
}

/// Every AES-GCM test of Wycheproof: the tag computed with the kernel's GHASH matches
/// exactly when the test is valid (its invalid tests alter tag, ciphertext or AAD).
#[test]
fn wycheproof_aes_gcm() {
    let set = wycheproof::aead::TestSet::load(wycheproof::aead::TestName::AesGcm).unwrap();
    for v in VARIANTS {
        let mut s = Sim::new(v);
        let (mut valid, mut invalid) = (0, 0);
        for g in &set.test_groups {
            if g.nonce_size == 0 {
                continue; // GCM needs a non-empty IV
            }
            for t in &g.tests {
                let tag = gcm_tag(&mut s, &t.key, &t.nonce, &t.aad, &t.ct);
                let ok = tag[..t.tag.len()] == t.tag[..];
                let want = t.result != wycheproof::TestResult::Invalid;
                assert_eq!(ok, want, "{v}: wycheproof test {} ({:?})", t.tc_id, t.flags);
                if want {
                    valid += 1
                } else {
                    invalid += 1
                }
            }
        }
        assert!(valid > 100 && invalid > 50, "{valid} {invalid}");
        println!("{v}: {valid} valid and {invalid} invalid Wycheproof AES-GCM tests agree");
    }
}

/// 10,000 random (H, Xi, message) cases per variant: lengths 0..4096 in steps of 16 and
/// 16384, misaligned inputs, dense and sparse bit patterns; gmult too.
#[test]
fn random_against_rustcrypto() {
    std::thread::scope(|sc| {
        for v in VARIANTS {
            sc.spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
                let mut s = Sim::new(v);
                let mut h = [0u8; 16];
                for n in 0..10_000usize {
                    if n % 50 == 0 {
                        h = match n / 50 % 4 {
                            0 => [0xff; 16],
                            1 => rng.random::<[u8; 16]>().map(|b| b & rng.random::<u8>()),
                            _ => rng.random(),
                        };
                        s.init(&h);
                    }
                    let len = if n % 997 == 0 { 16384 } else { 16 * (n % 257) };
                    let bits = n % 3;
                    let msg: Vec<u8> = (0..len).map(|_| match bits { 0 => rng.random(), 1 => 0xff, _ => rng.random::<u8>() & rng.random::<u8>() & rng.random::<u8>() }).collect();
                    let xi: [u8; 16] = if n % 11 == 0 { [0xff; 16] } else { rng.random() };
                    let got = s.ghash(&xi, &msg, n % 8);
                    assert_eq!(got, reference(&h, &xi, &msg), "{v}: case {n}, len {len}");
                    if n % 16 == 0 {
                        assert_eq!(s.gmult(&xi), reference(&h, &[0; 16], &xi), "{v}: gmult, case {n}");
                    }
                }
            });
        }
    });
}

/// Xi carried across calls: any split of a message gives the one-call result.
#[test]
fn chaining_across_calls() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for v in VARIANTS {
        let mut s = Sim::new(v);
        for _ in 0..50 {
            let h: [u8; 16] = rng.random();
            s.init(&h);
            let blocks = rng.random_range(1..40usize);
            let msg: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
            let mut xi = [0u8; 16];
            let mut at = 0;
            while at < blocks {
                let n = rng.random_range(0..=blocks - at);
                xi = s.ghash(&xi, &msg[16 * at..16 * (at + n)], 0);
                at += n;
            }
            assert_eq!(xi, reference(&h, &[0; 16], &msg), "{v}");
        }
    }
}

/// `c906` around its thresholds: every block count 0..=48 (the OpenSSL entry takes the
/// vector path from 10 blocks, the Linux entry from 8; groups of 8 blocks, then 5..7 left
/// as a last group in the upper lanes or 0..4 left
/// to the scalar loop), misaligned inputs, both ABIs; the vector unit runs exactly when the
/// path is meant to be taken, and the result matches RustCrypto either way.
#[test]
fn c906_every_block_count_around_the_thresholds() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
    let mut s = Sim::new("c906");
    let ml = module("c906", Abi::Linux);
    let mut el = Env::new(&ml.object().unwrap(), &ml.target).unwrap();
    let tl = el.buffer(&[0u8; 256], 0, true);
    for round in 0..6 {
        let h: [u8; 16] = if round == 0 { [0xff; 16] } else { rng.random() };
        s.init(&h);
        let hp = el.buffer(&h, 0, false);
        el.call(el.sym("ghash_c906_init"), &[tl, hp]).unwrap();
        for blocks in 0..=48usize {
            let msg: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
            let xi: [u8; 16] = rng.random();
            let want = reference(&h, &xi, &msg);
            vector_instructions(&mut s.e);
            assert_eq!(s.ghash(&xi, &msg, (round + blocks) % 8), want, "openssl: {blocks} blocks, key {round}");
            assert_eq!(vector_instructions(&mut s.e) > 0, blocks >= 10, "openssl: vector path at {blocks} blocks");
            let acc = el.buffer(&xi, 0, true);
            let d = el.buffer(&msg, (round + 3 * blocks) % 8, false);
            vector_instructions(&mut el);
            el.call(el.sym("ghash_c906"), &[acc, tl, d, blocks as u64]).unwrap();
            assert_eq!(el.read(acc, 16), want, "linux: {blocks} blocks, key {round}");
            assert_eq!(vector_instructions(&mut el) > 0, blocks >= 8, "linux: vector path at {blocks} blocks");
        }
    }
}

/// `c906`: a message split into calls whose sizes straddle the thresholds and the group
/// size (9, 10, 11, 15, 16, 17, 23, 24, 25 blocks …) chains to the one-call result.
#[test]
fn c906_chaining_across_thresholds() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let mut s = Sim::new("c906");
    let sizes = [1usize, 7, 8, 9, 10, 11, 15, 16, 17, 23, 24, 25, 31, 32, 33];
    for _ in 0..40 {
        let h: [u8; 16] = rng.random();
        s.init(&h);
        let parts: Vec<usize> = (0..rng.random_range(2..6)).map(|_| sizes[rng.random_range(0..sizes.len())]).collect();
        let total: usize = parts.iter().sum();
        let msg: Vec<u8> = (0..16 * total).map(|_| rng.random()).collect();
        let mut xi = [0u8; 16];
        let mut at = 0;
        for (k, n) in parts.iter().enumerate() {
            xi = s.ghash(&xi, &msg[16 * at..16 * (at + n)], k % 8);
            at += n;
        }
        assert_eq!(xi, reference(&h, &[0; 16], &msg), "parts {parts:?}");
    }
}

/// A table written by `gcm_init_c906` serves `c906-novector` (the fallback where the vector
/// unit is off): its first 144 bytes are that variant's layout.
#[test]
fn c906_table_serves_c906_novector() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let (mut v, mut n) = (Sim::new("c906"), Sim::new("c906-novector"));
    for _ in 0..20 {
        let h: [u8; 16] = rng.random();
        v.init(&h);
        let table = v.e.read(v.table, 256);
        n.e.m.mem.write_bytes(n.table, &table);
        let msg: Vec<u8> = (0..16 * rng.random_range(0..40usize)).map(|_| rng.random()).collect();
        let xi: [u8; 16] = rng.random();
        assert_eq!(n.ghash(&xi, &msg, 0), reference(&h, &xi, &msg));
        assert_eq!(n.gmult(&xi), reference(&h, &[0; 16], &xi));
    }
}

/// After `c906` calls through the vector path, no 6-byte window of the key table, of the
/// message or of Xi is left in a register (integer or vector) or in the stack frame.
/// Negative control: a table word planted in a vector register is found.
#[test]
fn c906_leaves_no_secret() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(22);
    let mut s = Sim::new("c906");
    for blocks in [10usize, 17, 64] {
        let h: [u8; 16] = rng.random();
        s.init(&h);
        let table = s.e.read(s.table, 256);
        let msg: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
        let xi: [u8; 16] = rng.random();
        let out = s.ghash(&xi, &msg, 0);
        for (what, secret) in [("table", &table[..]), ("message", &msg[..]), ("Xi in", &xi[..]), ("Xi out", &out[..])] {
            assert_eq!(s.e.scan_for_secret(secret, 6), Vec::<String>::new(), "{blocks} blocks: {what}");
        }
        let vb = s.e.m.hart.vlenb;
        s.e.m.hart.v[5 * vb..5 * vb + 8].copy_from_slice(&table[144..152]);
        assert_eq!(s.e.scan_for_secret(&table, 6), vec!["register v5".to_string()]);
    }
}

/// The Linux form: the same function through `ghash_V_init(table, h)` with `h` as bytes
/// and `ghash_V(acc, table, data, nblocks)`.
#[test]
fn linux_form() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    for v in VARIANTS {
        let m = module(v, Abi::Linux);
        let mut e = Env::new(&m.object().unwrap(), &m.target).unwrap();
        for _ in 0..100 {
            let h: [u8; 16] = rng.random();
            let xi: [u8; 16] = rng.random();
            let blocks = rng.random_range(0..20usize);
            let msg: Vec<u8> = (0..16 * blocks).map(|_| rng.random()).collect();
            let t = e.buffer(&[0u8; 256], 0, true);
            let hp = e.buffer(&h, 3, false);
            e.call(e.sym(&kg::LINUX_INIT.symbol(v)), &[t, hp]).unwrap();
            let acc = e.buffer(&xi, 0, true);
            let d = e.buffer(&msg, 1, false);
            e.call(e.sym(&kg::LINUX_GHASH.symbol(v)), &[acc, t, d, blocks as u64]).unwrap();
            assert_eq!(e.read(acc, 16), reference(&h, &xi, &msg), "{v}");
        }
    }
}

/// OpenSSL's `len` is a byte count (a multiple of 16): 0 leaves Xi alone.
#[test]
fn zero_length_leaves_xi() {
    for v in VARIANTS {
        let mut s = Sim::new(v);
        s.init(&[7; 16]);
        assert_eq!(s.ghash(&[9; 16], &[], 0), [9; 16], "{v}");
    }
}

/// Modeled cycles per byte on the C906 (printed; the bounds are the targets): the scalar
/// variant at most 28 c/B at 4 KiB; `c906` at most 15 c/B at 16 KiB and never slower than
/// `c906-novector` at the benchmark sizes; every multiply on the 3-cycle path.
#[test]
fn cost() {
    let run = |variant: &str, len: usize| {
        let mut s = Sim::timed(variant);
        s.init(&[0x5a; 16]);
        let msg = vec![0xa5u8; len];
        let x = s.e.buffer(&[1u8; 16], 0, true);
        let inp = s.e.buffer(&msg, 0, false);
        let f = s.func(&kg::GHASH);
        s.e.call(f, &[x, s.table, inp, len as u64]).unwrap()
    };
    let r = run("c906-novector", 4096);
    let cpb = r.cycles as f64 / 4096.0;
    println!("c906-novector: {:.2} cycles/byte at 4 KiB, {} instructions per block, {} long multiplies", cpb, r.instructions / 256, r.long_muls);
    assert_eq!(r.long_muls, 0, "every multiply on the 3-cycle path");
    assert!(cpb <= 28.0, "{cpb:.2} c/B > 28");
    for len in [16usize, 64, 256, 1024, 1408, 4096, 16384] {
        let (v, n) = (run("c906", len), run("c906-novector", len));
        println!("{len:6} bytes: c906 {:6.2} c/B, c906-novector {:6.2} c/B", v.cycles as f64 / len as f64, n.cycles as f64 / len as f64);
        assert_eq!(v.long_muls, 0, "c906 at {len} bytes: every multiply on the 3-cycle path");
        assert!(v.cycles <= n.cycles, "c906 slower than c906-novector at {len} bytes: {} > {} cycles", v.cycles, n.cycles);
        if len == 16384 {
            assert!(v.cycles as f64 / len as f64 <= 15.0, "c906: {:.2} c/B > 15 at 16 KiB", v.cycles as f64 / len as f64);
        }
    }
}

const HARNESS: &str = r#"
int main(void) {
  static unsigned char table[256] __attribute__((aligned(16)));
  unsigned long len, off, seed; char hh[40], xh[40];
  while (scanf("%lu %lu %39s %39s %lu", &len, &off, hh, xh, &seed) == 5) {
    unsigned char h[16], xi[16] __attribute__((aligned(8)));
    unhex(hh, h); unhex(xh, xi);
#ifdef OPENSSL
    uint64_t H[2];
    for (int k = 0; k < 2; k++) { H[k] = 0; for (int b = 0; b < 8; b++) H[k] = H[k] << 8 | h[8 * k + b]; }
    INIT((void *)table, (void *)H);
    size_t arg = len;
#else
    INIT(table, h);
    size_t arg = len / 16;
#endif
    unsigned char *in = malloc(len + 16);
    gen_bytes(seed, in + off, len);
    GHASH((void *)xi, (void *)table, in + off, arg);
    for (int k = 0; k < 16; k++) printf("%02x", xi[k]);
    printf("\n");
    free(in);
  }
  return 0;
}
"#;

/// The emitted `.S` (OpenSSL and Linux forms), assembled by GNU as, linked with a C
/// harness and run under QEMU: XTheadVector under T-Head's QEMU `-cpu c906fdv` (`c906fd`,
/// without the vector unit, must refuse it), T-Head's scalar extensions under upstream
/// `-cpu thead-c906`, Zbc under `-cpu rv64,zbc=true`; a core without them must refuse the
/// code. Lengths cover every block count up to 256 (both `c906` thresholds) and 16 KiB.
#[test]
fn emitted_assembly_under_qemu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    let mut input = String::new();
    let mut want = Vec::new();
    let hexs = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    for n in 0..2000usize {
        let len = if n % 500 == 0 { 16384 } else { 16 * (n % 257) };
        let (h, xi, seed, off): ([u8; 16], [u8; 16], u64, usize) = (rng.random(), rng.random(), rng.random(), rng.random_range(0..8));
        input.push_str(&format!("{len} {off} {} {} {seed}\n", hexs(&h), hexs(&xi)));
        want.push(hexs(&reference(&h, &xi, &common::gen_bytes(seed, len))));
    }
    let dir = kgen_harness::oracle::scratch("ghash_qemu");
    for v in VARIANTS {
        let o = kgen_emit::EmitOptions { command: "test".into(), compat: kgen_emit::Compat::Binutils240 };
        for abi in [Abi::Psabi, Abi::Linux] {
            let m = module(v, abi);
            let (q, cpu, bad) = common::emulator(&m);
            let (asm, defs) = match abi {
                Abi::Linux => (kgen_emit::linux_s(&m, &o).unwrap(), format!("#define INIT {}\n#define GHASH {}\n", m.symbol(&kg::LINUX_INIT).unwrap(), m.symbol(&kg::LINUX_GHASH).unwrap())),
                _ => (kgen_emit::openssl_s(&m, &o).unwrap(), format!("#define OPENSSL\n#define INIT {}\n#define GHASH {}\n", m.symbol(&kg::INIT).unwrap(), m.symbol(&kg::GHASH).unwrap())),
            };
            let name = format!("ghash-{v}-{abi}");
            let src = format!("{}{}{defs}{HARNESS}", common::C_HELPERS, common::header(&dir, &m));
            let Some(bin) = common::build(&dir, &name, &src, &[(&format!("{name}.S"), asm)]) else { return };
            let Some(q) = q else { return };
            let out = common::run(&q, &cpu, &bin, &input);
            assert!(out.status.success(), "{name} under -cpu {cpu}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
            let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
            assert_eq!(got.len(), want.len(), "{name}");
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name} under qemu: case {k}");
            }
            println!("{name}: {} cases agree under qemu -cpu {cpu}", got.len());
            if let Some(bad) = bad {
                let out = common::run(&q, &bad, &bin, &input);
                assert!(!out.status.success(), "{name} must fault under -cpu {bad}");
                println!("{name}: -cpu {bad} refuses it ({})", out.status);
            }
        }
    }
}
