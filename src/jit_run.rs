//! `kgen jit-run`: a kernel variant's OpenSSL-ABI module loaded into a JIT buffer
//! ([`kgen_emit::jit`]) and called on known-answer vectors: natively on a riscv64 host,
//! elsewhere in kgen-sim with the buffer's bytes mapped at the buffer's own address.
//!
//! A kernel's checks are a [`Plan`]: buffers (initial bytes, placement), calls (function,
//! arguments, expected result) and the byte ranges compared with known answers. One plan
//! runs three ways: in kgen-sim ([`run_sim`]), natively ([`run_host`] with
//! [`Jit::call`](kgen_emit::jit::Jit), riscv64 only), and as a script ([`Plan::script`]) for
//! a C loader that maps the image and calls it through function pointers, as on a board
//! (tests/jit.rs runs such a loader under QEMU). Each way yields an [`Outcome`] (every
//! call's a0, every buffer's final bytes) that [`Plan::verdicts`] compares.
//!
//! Vectors:
//! - AES: FIPS-197 appendix C.1-C.3, encrypt and decrypt.
//! - ChaCha20: RFC 8439 2.4.2, alone (114 bytes) and at the start of 512- and 1100-byte
//!   buffers, so vector variants compute it in their lanes and rows; the bytes past the
//!   RFC's come from [`chacha20_xor`], the RFC 8439 block function written out (tests/jit.rs
//!   checks it against RustCrypto).
//! - ChaCha20-Poly1305 (the stitched bulk seal/open): RFC 8439 2.8.2's key, nonce and
//!   plaintext at counter 1, the first whole block against the RFC's ciphertext; 128-,
//!   512- and 1100-byte buffers (the scalar path, the lanes merged with Poly1305, a last
//!   partial group) against [`chacha20_xor`]; the bytes past the whole blocks untouched.
//!   The Poly1305 context starts with r = 1 (h = 0), so h ends as the sum of the hashed
//!   blocks with their pad bits, reduced as the base-2^32 kernel stores it
//!   ([`poly1305_r1`]; tests/jit.rs checks it against RustCrypto); the RFC 8439 tag with the
//!   real one-time key needs the `poly1305` functions around the kernel, which
//!   tests/chacha20_poly1305.rs checks.
//! - Poly1305: RFC 8439 2.5.2, with the message 8-byte aligned and at an odd address (the
//!   kernels' shifted-load path).
//! - GHASH: the GCM specification's test case 2 (H = E(K, 0^128) for K = 0, C =
//!   0388dace60b6a392f328c2b971b2fe78): X1 = C·H through `gcm_gmult` and GHASH(H, {}, C)
//!   through `gcm_ghash` (tests/jit.rs checks both values against RustCrypto).
//! - SHA-256, SHA-512: FIPS 180-4's "abc" (one block) and two-block examples, padded here,
//!   from the initial hash value, with the message at an odd address.
//!
//! Native calls need a CPU that implements the variant's target (the c906 variants need a
//! T-Head core; a missing extension kills the process with SIGILL); `--sim` runs any
//! variant in kgen-sim instead.

use kgen_dsl::entry::Entry;
use kgen_dsl::target::Target;
use kgen_dsl::Abi;
use kgen_kernels::{aes, aes_gcm, chacha, chacha20_poly1305 as cp, ghash, poly1305, sha2};
use kgen_emit::jit::{self, FlatImage, Jit, PAGE};
use kgen_sim::mem::Perm;
use kgen_sim::Machine;

/// A buffer the calls of a plan use.
#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    /// Placement: the buffer starts this many bytes past a 64-byte boundary.
    pub offset: usize,
    /// The alignment the entry points it is passed to guarantee (placements must keep it).
    pub align: u32,
}

/// An argument of a call.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// The address of byte `.1` of buffer `.0`.
    Buf(usize, usize),
    Int(u64),
}

/// A call through the C ABI.
#[derive(Clone, Debug)]
pub struct Call {
    pub func: String,
    pub args: Vec<Arg>,
    /// The a0 the call must return (for functions with a result).
    pub ret: Option<u64>,
}

/// A known answer: bytes `off..off + want.len()` of buffer `buf` after the last call.
#[derive(Clone, Debug)]
pub struct Expect {
    pub name: String,
    pub buf: usize,
    pub off: usize,
    pub want: Vec<u8>,
}

/// Buffers, calls (in order) and the known answers of one kernel variant.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub buffers: Vec<Buffer>,
    pub calls: Vec<Call>,
    pub expects: Vec<Expect>,
    /// Calls that do not match their entry points' declarations.
    pub errors: Vec<String>,
}

/// What running a plan gave: a0 of every call, the final bytes of every buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub rets: Vec<u64>,
    pub buffers: Vec<Vec<u8>>,
}

/// One comparison with a known answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub name: String,
    /// Hex bytes, or a decimal result.
    pub got: String,
    pub want: String,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.got == self.want
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex constant")).collect()
}

impl Plan {
    fn buf(&mut self, name: &'static str, bytes: Vec<u8>, offset: usize) -> usize {
        self.buffers.push(Buffer { name, bytes, offset, align: 1 });
        self.buffers.len() - 1
    }

    /// A call of entry point `e` of `variant`: the arguments must match its parameters (a
    /// buffer for each pointer, an integer for each value), else the plan records why not.
    fn call(&mut self, e: &Entry, variant: &str, args: Vec<Arg>, ret: Option<u64>) {
        let func = e.symbol(variant);
        if args.len() != e.params.len() {
            self.errors.push(format!("{func}: {} arguments for {} parameters", args.len(), e.params.len()));
        }
        for (a, p) in args.iter().zip(e.params) {
            if let Arg::Buf(i, _) = a {
                // Placements of the buffer may move it by multiples of the parameter's
                // alignment only.
                if let Some(b) = self.buffers.get_mut(*i) {
                    b.align = b.align.max(p.ty.align());
                }
            }
            let ok = match (a, p.ty) {
                (Arg::Buf(..), t) => t.is_ptr(),
                // A null pointer (poly1305_init's optional table) is an integer 0.
                (Arg::Int(v), t) => !t.is_ptr() || *v == 0,
            };
            if !ok {
                self.errors.push(format!("{func}: argument `{}` is a {:?} but the plan passes {a:?}", p.name, p.ty));
            }
        }
        if ret.is_some() != e.ret.is_value() {
            self.errors.push(format!("{func}: the plan's expected result does not match its {} result", e.ret.c()));
        }
        self.calls.push(Call { func, args, ret });
    }

    fn expect(&mut self, name: String, buf: usize, off: usize, want: Vec<u8>) {
        self.expects.push(Expect { name, buf, off, want });
    }

    /// Compares `o` with the expected results and known answers.
    pub fn verdicts(&self, o: &Outcome) -> Vec<Verdict> {
        let mut v = Vec::new();
        for (k, (c, r)) in self.calls.iter().zip(&o.rets).enumerate() {
            if let Some(want) = c.ret {
                // C `int` results come back sign-extended in a0.
                let name = format!("call {} {}: result", k + 1, c.func);
                v.push(Verdict { name, got: (*r as i64).to_string(), want: (want as i64).to_string() });
            }
        }
        for e in &self.expects {
            let got = o.buffers.get(e.buf).and_then(|b| b.get(e.off..e.off + e.want.len())).map(hex).unwrap_or_default();
            v.push(Verdict { name: e.name.clone(), got, want: hex(&e.want) });
        }
        v
    }

    /// The plan as input for a loader that has the image mapped (tests/jit.rs has one in
    /// C): one line `buf SIZE OFFSET HEX` per buffer (`-` for an empty one), then one line
    /// `call FUNC_OFFSET NARGS ARG...` per call, with the function's offset in the image in
    /// hex and each argument as `bINDEX+BYTE` (an address in a buffer) or `iHEX`. The loader
    /// prints `ret INDEX HEX` per call and `buf INDEX HEX` per buffer after the last call.
    pub fn script(&self, img: &FlatImage) -> Result<String, String> {
        let mut s = String::new();
        for b in &self.buffers {
            let h = if b.bytes.is_empty() { "-".to_string() } else { hex(&b.bytes) };
            s.push_str(&format!("buf {} {} {h}\n", b.bytes.len(), b.offset));
        }
        for c in &self.calls {
            let addr = *img.symbols.get(&c.func).ok_or_else(|| format!("no function `{}` in the image", c.func))?;
            let args: Vec<String> = c
                .args
                .iter()
                .map(|a| match *a {
                    Arg::Buf(i, off) => format!("b{i}+{off}"),
                    Arg::Int(v) => format!("i{v:x}"),
                })
                .collect();
            s.push_str(&format!("call {:x} {} {}\n", addr - img.base, args.len(), args.join(" ")));
        }
        Ok(s)
    }
}

// ---- the known answers ----------------------------------------------------------------------

const AES_PT: &str = "00112233445566778899aabbccddeeff";
/// FIPS-197 C.1, C.2, C.3: key 000102..., plaintext 00112233...
const AES_CT: [(u64, &str); 3] =
    [(128, "69c4e0d86a7b0430d8cdb78070b4c55a"), (192, "dda97ca4864cdfe06eaf70a0ec0d7191"), (256, "8ea2b7ca516745bfeafc49904b496089")];

/// RFC 8439 2.4.2: key 00..1f, nonce 000000000000004a00000000, counter 1.
const CHACHA_PT: &[u8] = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
const CHACHA_CT: &str = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d";
const CHACHA_NONCE: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0];

/// RFC 8439 2.5.2.
const POLY_KEY: &str = "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b";
const POLY_MSG: &[u8] = b"Cryptographic Forum Research Group";
const POLY_TAG: &str = "a8061dc1305136c6c22b8baf0c0127a9";

/// GCM specification, test case 2: H = E(0^128, 0^128), the ciphertext block, X1 = C·H and
/// GHASH(H, {}, C) (which is the tag ab6e47d4... xor E(K, Y0) = 58e2fcce...).
pub const GHASH_H: &str = "66e94bd4ef8a2c3b884cfa59ca342b2e";
pub const GHASH_C: &str = "0388dace60b6a392f328c2b971b2fe78";
pub const GHASH_X1: &str = "5e2ec746917062882c85b0685353deb7";
pub const GHASH_TC2: &str = "f38cbb1ad69223dcc3457ae5b6b0f885";

/// SP 800-38A F.5.1, CTR-AES128.Encrypt: key, initial counter block, plaintext, ciphertext.
pub const CTR_KEY: &str = "2b7e151628aed2a6abf7158809cf4f3c";
pub const CTR_IV: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
pub const CTR_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
pub const CTR_CT: &str = "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee";

/// GCM specification, test case 3: K, the 96-bit IV, P, C and GHASH(H, {}, C) (the tag
/// 4d5c2af3... xor E(K, Y0) = 3247184b...).
pub const GCM3_K: &str = "feffe9928665731c6d6a8f9467308308";
pub const GCM3_IV: &str = "cafebabefacedbaddecaf888";
pub const GCM3_P: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
pub const GCM3_C: &str = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985";
pub const GCM3_GHASH: &str = "7f1b32b81b820d02614f8895ac1d4eac";

/// The ChaCha20 block function (RFC 8439 2.3) for a 32-bit counter.
pub fn chacha20_block(key: &[u8; 32], counter: u32, nonce: &[u8; 12]) -> [u8; 64] {
    let word = |b: &[u8], i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&kgen_kernels::chacha::SIGMA);
    for i in 0..8 {
        s[4 + i] = word(key, i);
    }
    s[12] = counter;
    for i in 0..3 {
        s[13 + i] = word(nonce, i);
    }
    let mut x = s;
    let qr = |x: &mut [u32; 16], [a, b, c, d]: [usize; 4]| {
        // a += b; d ^= a; d <<<= 16; c += d; b ^= c; b <<<= 12; ... 8, 7
        for (p, q, r, n) in [(a, b, d, 16), (c, d, b, 12), (a, b, d, 8), (c, d, b, 7)] {
            x[p] = x[p].wrapping_add(x[q]);
            x[r] = (x[r] ^ x[p]).rotate_left(n);
        }
    };
    for _ in 0..10 {
        for q in [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15], [0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]] {
            qr(&mut x, q);
        }
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&x[i].wrapping_add(s[i]).to_le_bytes());
    }
    out
}

/// `data` XOR the keystream from block `counter` on, the counter wrapping at 2^32 as
/// OpenSSL's `ChaCha20_ctr32` does.
pub fn chacha20_xor(key: &[u8; 32], counter: u32, nonce: &[u8; 12], data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    for (k, chunk) in out.chunks_mut(64).enumerate() {
        let ks = chacha20_block(key, counter.wrapping_add(k as u32), nonce);
        for (b, s) in chunk.iter_mut().zip(ks) {
            *b ^= s;
        }
    }
    out
}

fn aes_plan(v: &str) -> Plan {
    let mut p = Plan::default();
    let pt = p.buf("in", unhex(AES_PT), 0);
    for (n, (bits, ct)) in AES_CT.into_iter().enumerate() {
        let key = p.buf("userKey", (0..(bits / 8) as u8).collect(), 0);
        // AES_KEY: 60 round-key words and int rounds.
        let ks = p.buf("AES_KEY (encrypt)", vec![0; 244], 0);
        let dks = p.buf("AES_KEY (decrypt)", vec![0; 244], 0);
        let out = p.buf("out", vec![0; 16], 0);
        let back = p.buf("decrypted", vec![0; 16], 0);
        p.call(&aes::SET_ENCRYPT_KEY, v, vec![Arg::Buf(key, 0), Arg::Int(bits), Arg::Buf(ks, 0)], Some(0));
        p.call(&aes::ENCRYPT, v, vec![Arg::Buf(pt, 0), Arg::Buf(out, 0), Arg::Buf(ks, 0)], None);
        p.call(&aes::SET_DECRYPT_KEY, v, vec![Arg::Buf(key, 0), Arg::Int(bits), Arg::Buf(dks, 0)], Some(0));
        p.call(&aes::DECRYPT, v, vec![Arg::Buf(out, 0), Arg::Buf(back, 0), Arg::Buf(dks, 0)], None);
        p.expect(format!("FIPS-197 C.{} AES-{bits} encrypt", n + 1), out, 0, unhex(ct));
        p.expect(format!("FIPS-197 C.{} AES-{bits} decrypt", n + 1), back, 0, unhex(AES_PT));
    }
    // SP 800-38A F.5.1 in place (the counter's low word fcfdfeff does not wrap in four
    // blocks, so a 32-bit counter gives the same blocks); ivec is not written back.
    let key = p.buf("userKey", unhex(CTR_KEY), 0);
    let ks = p.buf("AES_KEY (encrypt)", vec![0; 244], 0);
    let iv = p.buf("ivec", unhex(CTR_IV), 0);
    let data = p.buf("in/out", unhex(CTR_PT), 0);
    p.call(&aes::SET_ENCRYPT_KEY, v, vec![Arg::Buf(key, 0), Arg::Int(128), Arg::Buf(ks, 0)], Some(0));
    p.call(&aes::CTR32, v, vec![Arg::Buf(data, 0), Arg::Buf(data, 0), Arg::Int(4), Arg::Buf(ks, 0), Arg::Buf(iv, 0)], None);
    p.expect("SP 800-38A F.5.1 CTR-AES128 (AES_ctr32_encrypt, 4 blocks in place)".into(), data, 0, unhex(CTR_CT));
    p.expect("SP 800-38A F.5.1: ivec unchanged".into(), iv, 0, unhex(CTR_IV));
    p
}

/// `aes-gcm` on the GCM specification's test case 3, with the key schedule and the GHASH
/// table that `aes c906` and `ghash c906` compute (in kgen-sim, [`crate::gcm`]).
/// Decrypt: three zero blocks (from Xi = 0 they leave Xi at 0), C, then the lengths block,
/// from counter ffffffff, so C meets counters 2..5 after the 2^32 wrap: the output holds P
/// and Xi is GHASH(H, {}, C). Encrypt: P twice from counter 2, in place: C first.
fn aes_gcm_plan(v: &str) -> Result<Plan, String> {
    let mut p = Plan::default();
    let k = crate::gcm::GcmSetup::new()?.key(&unhex(GCM3_K))?;
    let ivec = |c: u32| {
        let mut b = unhex(GCM3_IV);
        b.extend_from_slice(&c.to_be_bytes());
        b
    };
    let ks = p.buf("AES_KEY", k.schedule.clone(), 0);
    let mut msg = vec![0u8; 48];
    msg.extend_from_slice(&unhex(GCM3_C));
    msg.extend_from_slice(&0u64.to_be_bytes());
    msg.extend_from_slice(&(8 * 64u64).to_be_bytes());
    let inp = p.buf("in", msg, 0);
    let out = p.buf("out", vec![0; 128], 0);
    let iv = p.buf("ivec", ivec(0xffff_ffff), 0);
    let ctx = p.buf("Xi, H, Htable", k.context(&[0; 16]), 0);
    let args = |i: usize, o: usize, iv: usize, ctx: usize| vec![Arg::Buf(i, 0), Arg::Buf(o, 0), Arg::Int(128), Arg::Buf(ks, 0), Arg::Buf(iv, 0), Arg::Buf(ctx, 0)];
    p.call(&aes_gcm::DECRYPT, v, args(inp, out, iv, ctx), Some(128));
    p.expect("GCM test case 3: P from C (aes_gcm_decrypt, blocks 3..6)".into(), out, 48, unhex(GCM3_P));
    p.expect("GCM test case 3: Xi = GHASH(H, {}, C) (aes_gcm_decrypt)".into(), ctx, 0, unhex(GCM3_GHASH));
    p.expect("aes_gcm_decrypt: ivec's counter ffffffff + 8 (mod 2^32)".into(), iv, 0, ivec(7));
    let mut twice = unhex(GCM3_P);
    twice.extend_from_slice(&unhex(GCM3_P));
    let data = p.buf("in/out", twice, 0);
    let iv2 = p.buf("ivec", ivec(2), 0);
    let ctx2 = p.buf("Xi, H, Htable", k.context(&[0; 16]), 0);
    p.call(&aes_gcm::ENCRYPT, v, args(data, data, iv2, ctx2), Some(128));
    p.expect("GCM test case 3: C from P (aes_gcm_encrypt, blocks 0..3, in place)".into(), data, 0, unhex(GCM3_C));
    p.expect("aes_gcm_encrypt: ivec's counter 2 + 8".into(), iv2, 0, ivec(10));
    Ok(p)
}

fn chacha_plan(v: &str) -> Plan {
    let mut p = Plan::default();
    let key: [u8; 32] = std::array::from_fn(|i| i as u8);
    let kb = p.buf("key", key.to_vec(), 0);
    let mut counter = 1u32.to_le_bytes().to_vec();
    counter.extend_from_slice(&CHACHA_NONCE);
    let cb = p.buf("counter", counter, 0);
    let rfc = CHACHA_PT.len();
    for len in [rfc, 512, 1100] {
        let mut data = CHACHA_PT.to_vec();
        data.resize(len, 0);
        let want = chacha20_xor(&key, 1, &CHACHA_NONCE, &data);
        let inp = p.buf("inp", data, 0);
        let out = p.buf("out", vec![0; len], 0);
        p.call(&chacha::CTR32, v, vec![Arg::Buf(out, 0), Arg::Buf(inp, 0), Arg::Int(len as u64), Arg::Buf(kb, 0), Arg::Buf(cb, 0)], None);
        p.expect(format!("RFC 8439 2.4.2, {len}-byte buffer"), out, 0, unhex(CHACHA_CT));
        if len > rfc {
            p.expect(format!("RFC 8439 2.4.2 key, bytes {rfc}..{len} (block function)"), out, rfc, want[rfc..].to_vec());
        }
    }
    p
}

/// RFC 8439 2.8.2: key 80..9f, nonce 07000000 40414243 44454647, counter 1; the
/// plaintext is [`CHACHA_PT`]. The first 64 bytes of its ciphertext.
const AEAD_NONCE: [u8; 12] = [7, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47];
const AEAD_CT64: &str = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36";

/// The Poly1305 state h that the base-2^32 `poly1305_blocks` (padbit 1) leaves in its
/// context for r = 1 from h = 0: h = h + block + 2^128 per 16-byte block, each step
/// folded once (h = h mod 2^130 + 5·(h >> 130)), and folded twice more when stored (so
/// h < 5·2^128, congruent to the sum modulo 2^130 - 5). The 24 context bytes h0..h3 (u32)
/// and h4 (u64), little-endian. With r = 1 the kernel's products are the limbs
/// themselves, so its partial reduction is exactly these folds.
pub fn poly1305_r1(msg: &[u8]) -> [u8; 24] {
    // h = lo + hi·2^128
    let fold = |(lo, hi): (u128, u64)| -> (u128, u64) {
        let (lo, c) = lo.overflowing_add(5 * (hi >> 2) as u128);
        (lo, (hi & 3) + c as u64)
    };
    let mut h = (0u128, 0u64);
    for b in msg.chunks_exact(16) {
        let (lo, hi) = fold(h);
        let (lo, c) = lo.overflowing_add(u128::from_le_bytes(b.try_into().expect("16 bytes")));
        h = (lo, hi + c as u64 + 1);
    }
    let (lo, hi) = fold(fold(h));
    let mut out = [0u8; 24];
    out[..16].copy_from_slice(&lo.to_le_bytes());
    out[16..].copy_from_slice(&hi.to_le_bytes());
    out
}

fn chacha20_poly1305_plan(v: &str) -> Plan {
    let mut p = Plan::default();
    let key: [u8; 32] = std::array::from_fn(|i| 0x80 + i as u8);
    let kb = p.buf("key", key.to_vec(), 0);
    let mut counter = 1u32.to_le_bytes().to_vec();
    counter.extend_from_slice(&AEAD_NONCE);
    let cb = p.buf("counter", counter, 0);
    // The context of poly1305_init for r = 1: h = 0, r = (1, 0, 0, 0), s1..s3 = 0.
    let mut ctx = vec![0u8; poly1305::CTX_BYTES];
    ctx[poly1305::CTX_R as usize] = 1;
    for len in [CHACHA_PT.len(), 128, 512, 1100] {
        let mut data = CHACHA_PT.to_vec();
        data.resize(len, 0);
        let whole = len & !63;
        let ct = chacha20_xor(&key, 1, &AEAD_NONCE, &data);
        let h = poly1305_r1(&ct[..whole]);
        for (seal, entry, what, from, to) in [(true, &cp::SEAL, "seal", &data, &ct), (false, &cp::OPEN, "open", &ct, &data)] {
            let inp = p.buf("in", from.clone(), 1);
            let out = p.buf("out", vec![0; len], 3);
            let c = p.buf("poly", ctx.clone(), 0);
            p.call(entry, v, vec![Arg::Buf(out, 0), Arg::Buf(inp, 0), Arg::Int(len as u64), Arg::Buf(kb, 0), Arg::Buf(cb, 0), Arg::Buf(c, 0)], None);
            if seal {
                p.expect(format!("RFC 8439 2.8.2 ciphertext, block 1 ({what}, {len}-byte buffer)"), out, 0, unhex(AEAD_CT64));
            }
            p.expect(format!("{what} of {len} bytes: the {whole} whole-block bytes (block function)"), out, 0, to[..whole].to_vec());
            if len > whole {
                p.expect(format!("{what} of {len} bytes: the {} bytes after them untouched", len - whole), out, whole, vec![0; len - whole]);
            }
            p.expect(format!("{what} of {len} bytes: Poly1305 h of the ciphertext (r = 1)"), c, poly1305::CTX_H as usize, h.to_vec());
        }
    }
    p
}

fn poly1305_plan(v: &str) -> Plan {
    let mut p = Plan::default();
    let key = unhex(POLY_KEY);
    let full = POLY_MSG.len() / 16 * 16;
    let mut last = POLY_MSG[full..].to_vec();
    last.push(1);
    last.resize(16, 0);
    for (what, off) in [("8-byte aligned message", 0), ("message at an odd address", 1)] {
        let ctx = p.buf("ctx", vec![0; 192], 0);
        let kb = p.buf("key", key.clone(), 0);
        let msg = p.buf("inp", POLY_MSG.to_vec(), off);
        let lb = p.buf("last block, padded", last.clone(), 0);
        let mac = p.buf("mac", vec![0; 16], 3);
        p.call(&poly1305::INIT, v, vec![Arg::Buf(ctx, 0), Arg::Buf(kb, 0), Arg::Int(0)], Some(0));
        p.call(&poly1305::BLOCKS, v, vec![Arg::Buf(ctx, 0), Arg::Buf(msg, 0), Arg::Int(full as u64), Arg::Int(1)], None);
        p.call(&poly1305::BLOCKS, v, vec![Arg::Buf(ctx, 0), Arg::Buf(lb, 0), Arg::Int(16), Arg::Int(0)], None);
        // The nonce is the key's second half (4-byte aligned: the key buffer is).
        p.call(&poly1305::EMIT, v, vec![Arg::Buf(ctx, 0), Arg::Buf(mac, 0), Arg::Buf(kb, 16)], None);
        p.expect(format!("RFC 8439 2.5.2 tag, {what}"), mac, 0, unhex(POLY_TAG));
    }
    p
}

fn ghash_plan(v: &str) -> Plan {
    let mut p = Plan::default();
    // u64 H[2] in host order: the big-endian halves of H as little-endian words.
    let h = unhex(GHASH_H);
    let mut hw = Vec::new();
    for half in h.chunks(8) {
        hw.extend_from_slice(&u64::from_be_bytes(half.try_into().expect("8 bytes")).to_le_bytes());
    }
    let table = p.buf("Htable", vec![0; 256], 0);
    let hb = p.buf("H", hw, 0);
    p.call(&ghash::INIT, v, vec![Arg::Buf(table, 0), Arg::Buf(hb, 0)], None);
    let x1 = p.buf("Xi (gmult)", unhex(GHASH_C), 0);
    p.call(&ghash::GMULT, v, vec![Arg::Buf(x1, 0), Arg::Buf(table, 0)], None);
    p.expect("GCM test case 2: X1 = C·H (gcm_gmult)".into(), x1, 0, unhex(GHASH_X1));
    // 14 zero blocks (from Xi = 0 they leave Xi at 0, so the result is still test case 2's,
    // and vector variants take their lanes), C, then the lengths block: len(A) = 0,
    // len(C) = 128 bits, big-endian.
    let mut msg = vec![0u8; 16 * 14];
    msg.extend_from_slice(&unhex(GHASH_C));
    msg.extend_from_slice(&0u64.to_be_bytes());
    msg.extend_from_slice(&128u64.to_be_bytes());
    let xi = p.buf("Xi (ghash)", vec![0; 16], 0);
    let inp = p.buf("inp", msg, 0);
    p.call(&ghash::GHASH, v, vec![Arg::Buf(xi, 0), Arg::Buf(table, 0), Arg::Buf(inp, 0), Arg::Int(16 * 16)], None);
    p.expect("GCM test case 2: GHASH(H, {}, C) (gcm_ghash)".into(), xi, 0, unhex(GHASH_TC2));
    p
}

/// FIPS 180-4 5.3.3 and 5.3.5: the initial hash values.
const SHA256_IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const SHA512_IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];
/// FIPS 180-4's example messages and digests (NIST's "Examples with intermediate values").
const SHA_ABC: &[u8] = b"abc";
const SHA256_2BLOCK: &[u8] = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
const SHA512_2BLOCK: &[u8] = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
const SHA256_DIGESTS: [&str; 2] =
    ["ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"];
const SHA512_DIGESTS: [&str; 2] = [
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
];

/// FIPS 180-4 5.1 padding to whole `block`-byte blocks (length field of `lenbytes`).
fn sha_pad(msg: &[u8], block: usize, lenbytes: usize) -> Vec<u8> {
    let mut v = msg.to_vec();
    v.push(0x80);
    while v.len() % block != block - lenbytes {
        v.push(0);
    }
    v.extend_from_slice(&((msg.len() as u128) * 8).to_be_bytes()[16 - lenbytes..]);
    v
}

// ANCHOR: sha2-plan
fn sha2_plan(kernel: &str, v: &str) -> Plan {
    let mut p = Plan::default();
    let wide = kernel == "sha512";
    let (entry, block, msgs, digests) =
        if wide { (&sha2::SHA512_BLOCKS, 128, [SHA_ABC, SHA512_2BLOCK], SHA512_DIGESTS) } else { (&sha2::SHA256_BLOCKS, 64, [SHA_ABC, SHA256_2BLOCK], SHA256_DIGESTS) };
    for (msg, digest) in msgs.into_iter().zip(digests) {
        let mut ctx = Vec::new();
        for j in 0..8 {
            if wide {
                ctx.extend_from_slice(&SHA512_IV[j].to_le_bytes());
            } else {
                ctx.extend_from_slice(&SHA256_IV[j].to_le_bytes());
            }
        }
        let words = ctx.len();
        let c = p.buf("ctx", ctx, 0);
        let padded = sha_pad(msg, block, block / 8);
        let n = padded.len() / block;
        let inp = p.buf("in", padded, 1);
        p.call(entry, v, vec![Arg::Buf(c, 0), Arg::Buf(inp, 0), Arg::Int(n as u64)], None);
        // The digest is h[] big-endian: the expected bytes are its words in host order.
        let want = unhex(digest);
        let host: Vec<u8> = want.chunks(words / 8).flat_map(|w| w.iter().rev().copied().collect::<Vec<_>>()).collect();
        p.expect(format!("FIPS 180-4 {kernel} of {} bytes ({n} blocks): h[0..8]", msg.len()), c, 0, host);
    }
    p
}
// ANCHOR_END: sha2-plan

/// The known-answer plan of a kernel variant (OpenSSL ABI).
pub fn plan(kernel: &str, variant: &str) -> Result<Plan, String> {
    let p = match kernel {
        "aes" => aes_plan(variant),
        "aes-gcm" => aes_gcm_plan(variant)?,
        "chacha20" => chacha_plan(variant),
        "poly1305" => poly1305_plan(variant),
        "chacha20-poly1305" => chacha20_poly1305_plan(variant),
        "ghash" => ghash_plan(variant),
        "sha256" | "sha512" => sha2_plan(kernel, variant),
        _ => return Err(format!("no known-answer checks for kernel `{kernel}`")),
    };
    match p.errors.first() {
        Some(e) => Err(format!("{kernel} {variant}: the known-answer plan does not match the entry points: {e}")),
        None => Ok(p),
    }
}

// ---- running a plan ---------------------------------------------------------------------------

/// Size of the simulator's scratch area (return sentinel, stack, buffers).
const SCRATCH: u64 = 1 << 26;
/// Registers a psABI function must give back unchanged: gp, tp, s0..s11.
const PRESERVED: [usize; 14] = [3, 4, 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27];

/// The value a preserved register holds across a simulated call.
fn seed(r: usize) -> u64 {
    0x5eed_0000_0000_0000 | ((r as u64) << 8)
}

/// Runs `plan` in kgen-sim for `target`, with `img` mapped at its own address (text
/// read+execute, data read-only) and the buffers, a stack and a return sentinel in a
/// scratch area that does not overlap it. Each call gets ra = the sentinel and a 16-byte
/// aligned sp; sp, gp, tp and s0..s11 must come back unchanged.
pub fn run_sim(img: &FlatImage, target: &Target, plan: &Plan) -> Result<Outcome, String> {
    let end = (img.base + img.bytes.len() as u64).next_multiple_of(PAGE);
    let scratch = [0x1000_0000u64, 0x40_0000_0000]
        .into_iter()
        .find(|&s| s + SCRATCH <= img.base || s >= end)
        .ok_or_else(|| format!("no room for the simulator's buffers beside the image at {:#x}", img.base))?;
    let mut m = Machine::new(target);
    m.max_steps = 100_000_000;
    m.mem.map("jit-text", img.base, img.rodata_offset, Perm::RX);
    m.mem.write_bytes(img.base, &img.bytes[..img.text_len]);
    if img.bytes.len() > img.rodata_offset {
        let ro = &img.bytes[img.rodata_offset..];
        let at = img.base + img.rodata_offset as u64;
        m.mem.map("jit-rodata", at, ro.len().next_multiple_of(PAGE as usize), Perm::R);
        m.mem.write_bytes(at, ro);
    }
    let sentinel = scratch;
    m.mem.map("return-sentinel", sentinel, PAGE as usize, Perm::RX);
    m.mem.map("stack", scratch + 0x1_0000, 0x1_0000, Perm::RW);
    let sp = scratch + 0x2_0000 - 64;
    // Each buffer in its own region, unmapped pages between them.
    let mut next = scratch + 0x10_0000;
    let mut addrs = Vec::new();
    for (i, b) in plan.buffers.iter().enumerate() {
        let size = (b.offset + b.bytes.len()).next_multiple_of(PAGE as usize).max(PAGE as usize);
        if next + size as u64 + PAGE > scratch + SCRATCH {
            return Err("the plan's buffers do not fit the simulator's scratch area".into());
        }
        m.mem.map(&format!("buffer {i} ({})", b.name), next, size, Perm::RW);
        m.mem.write_bytes(next + b.offset as u64, &b.bytes);
        addrs.push(next + b.offset as u64);
        next += size as u64 + PAGE;
    }
    let mut rets = Vec::new();
    for c in &plan.calls {
        let entry = *img.symbols.get(&c.func).ok_or_else(|| format!("no function `{}` in the image", c.func))?;
        if entry < img.base || entry >= img.base + img.text_len as u64 {
            return Err(format!("`{}` is not code in the image", c.func));
        }
        if c.args.len() > 8 {
            return Err(format!("{}: {} arguments; at most 8 go in registers", c.func, c.args.len()));
        }
        let h = &mut m.hart;
        for &r in &PRESERVED {
            h.x[r] = seed(r);
        }
        for (k, a) in c.args.iter().enumerate() {
            h.x[10 + k] = match *a {
                Arg::Buf(i, off) => addrs[i] + off as u64,
                Arg::Int(v) => v,
            };
        }
        h.x[1] = sentinel;
        h.x[2] = sp;
        h.pc = entry;
        h.vtype = 1 << 63;
        h.vl = 0;
        m.run_until(sentinel).map_err(|f| format!("{}: fault {f}", c.func))?;
        let h = &m.hart;
        if h.x[2] != sp {
            return Err(format!("{}: sp is {:#x} after the call, was {sp:#x}", c.func, h.x[2]));
        }
        if let Some(&r) = PRESERVED.iter().find(|&&r| h.x[r] != seed(r)) {
            return Err(format!("{}: {} was not preserved", c.func, kgen_dsl::text::XNAMES[r]));
        }
        rets.push(h.x[10]);
    }
    let buffers = plan.buffers.iter().zip(&addrs).map(|(b, &a)| m.mem.read_bytes(a, b.bytes.len())).collect();
    Ok(Outcome { rets, buffers })
}

/// Runs `plan` with buffers in this process's memory, calling each function through `call`
/// (function name, argument registers) -> a0: the native path.
pub fn run_host(plan: &Plan, call: &mut dyn FnMut(&str, &[u64]) -> Result<u64, String>) -> Result<Outcome, String> {
    // (storage, index of the buffer's first byte in it); the storage never reallocates.
    let mut store: Vec<(Vec<u8>, usize)> = plan
        .buffers
        .iter()
        .map(|b| {
            let mut v = vec![0u8; b.bytes.len() + b.offset + 64];
            let addr = v.as_ptr() as usize;
            let start = addr.next_multiple_of(64) - addr + b.offset;
            v[start..start + b.bytes.len()].copy_from_slice(&b.bytes);
            (v, start)
        })
        .collect();
    let addrs: Vec<u64> = store.iter_mut().map(|(v, start)| v.as_mut_ptr() as u64 + *start as u64).collect();
    let mut rets = Vec::new();
    for c in &plan.calls {
        let args: Vec<u64> = c
            .args
            .iter()
            .map(|a| match *a {
                Arg::Buf(i, off) => addrs[i] + off as u64,
                Arg::Int(v) => v,
            })
            .collect();
        rets.push(call(&c.func, &args)?);
    }
    let buffers = store.iter().zip(&plan.buffers).map(|((v, start), b)| v[*start..*start + b.bytes.len()].to_vec()).collect();
    Ok(Outcome { rets, buffers })
}

#[cfg(target_arch = "riscv64")]
fn run_native(j: &Jit, plan: &Plan) -> Result<Outcome, String> {
    run_host(plan, &mut |f, args| {
        // SAFETY: the module is built for the psABI (kgen's OpenSSL ABI); every plan passes
        // each function buffers of the sizes it accesses (see the plans above); the CPU must
        // implement the variant's target, which the module documentation asks of the user.
        unsafe { j.call(f, args) }.map_err(|e| e.to_string())
    })
}

#[cfg(not(target_arch = "riscv64"))]
fn run_native(_: &Jit, _: &Plan) -> Result<Outcome, String> {
    Err("native calls need a riscv64 host".into())
}

/// How the buffer's code ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Called in this process (riscv64 host).
    Native,
    /// Run in kgen-sim, mapped at the buffer's address.
    Simulated,
}

/// The result of `kgen jit-run` for one variant.
#[derive(Clone, Debug)]
pub struct Run {
    pub kernel: String,
    pub variant: String,
    pub target: String,
    pub path: Path,
    /// Address of the JIT buffer.
    pub base: u64,
    pub text_len: usize,
    pub data_len: usize,
    pub verdicts: Vec<Verdict>,
    /// Why the calls did not complete (fault, ABI violation), if they did not.
    pub error: Option<String>,
}

impl Run {
    /// Every call completed and every check matched.
    pub fn passed(&self) -> bool {
        self.error.is_none() && !self.verdicts.is_empty() && self.verdicts.iter().all(Verdict::ok)
    }

    /// The report `kgen jit-run` prints.
    pub fn lines(&self) -> Vec<String> {
        let short = |s: &str| if s.len() > 64 { format!("{}… ({} bytes)", &s[..64], s.len() / 2) } else { s.to_string() };
        let mut out = vec![format!(
            "== {} {} (target {}, OpenSSL ABI): JIT buffer at {:#x}, {} bytes of code, {} bytes of data",
            self.kernel, self.variant, self.target, self.base, self.text_len, self.data_len
        )];
        out.push(match self.path {
            Path::Native => "   path: native (called in this process on the riscv64 host)".to_string(),
            Path::Simulated => format!("   path: simulated in kgen-sim at the buffer's address (host {})", std::env::consts::ARCH),
        });
        for v in &self.verdicts {
            if v.ok() {
                out.push(format!("   ok        {}: {}", v.name, short(&v.got)));
            } else {
                out.push(format!("   MISMATCH  {}: got {}, want {}", v.name, short(&v.got), short(&v.want)));
            }
        }
        if let Some(e) = &self.error {
            out.push(format!("   FAILED    {e}"));
        }
        let ok = self.verdicts.iter().filter(|v| v.ok()).count();
        out.push(format!("   {ok}/{} checks match{}", self.verdicts.len(), if self.passed() { "" } else { ": FAIL" }));
        out
    }
}

/// Builds `kernel` `variant` for the OpenSSL ABI, loads it into a JIT buffer (with the low
/// bit of byte `flip` inverted, for a negative control) and runs its known-answer plan:
/// natively on a riscv64 host unless `force_sim`, else in kgen-sim.
pub fn jit_run(kernel: &str, variant: &str, force_sim: bool, flip: Option<usize>) -> Result<Run, String> {
    let k = kgen_kernels::kernel(kernel).ok_or_else(|| format!("unknown kernel `{kernel}` (see `kgen list`)"))?;
    let v = k.variant(variant).ok_or_else(|| format!("kernel `{kernel}` has no variant `{variant}`"))?;
    let m = v.build(Abi::Psabi).map_err(|e| e.to_string())?;
    let plan = plan(kernel, variant)?;
    let mut bad_flip = None;
    let j = jit::jit_with(&m, |b| match flip {
        Some(off) if off < b.len() => b[off] ^= 1,
        Some(off) => bad_flip = Some(format!("--flip-byte {off:#x} is past the end of the {}-byte buffer", b.len())),
        None => {}
    })
    .map_err(|e| e.to_string())?;
    if let Some(e) = bad_flip {
        return Err(e);
    }
    let path = if cfg!(target_arch = "riscv64") && !force_sim { Path::Native } else { Path::Simulated };
    let outcome = match path {
        Path::Native => run_native(&j, &plan),
        Path::Simulated => run_sim(&j.image(), &m.target, &plan),
    };
    let (verdicts, error) = match outcome {
        Ok(o) => (plan.verdicts(&o), None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let data_len = j.image().bytes.len().saturating_sub(j.rodata_offset);
    Ok(Run { kernel: kernel.into(), variant: variant.into(), target: m.target.name.into(), path, base: j.base, text_len: j.text_len, data_len, verdicts, error })
}
