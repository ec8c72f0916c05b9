//! SipHash-2-4 (Aumasson and Bernstein, 2012): a 64-bit keyed hash of a byte string.
//!
//! ```text
//! OpenSSL ABI (psABI): uint64_t siphash24_<variant>(const unsigned char key[16],
//!                                                  const unsigned char *in, size_t len);
//! Go:                  func siphash24<V>(key *byte, in *byte, len uint64) uint64
//! ```
//! `in` may be unaligned. The key is secret and the message public (hash-table keys come
//! from whoever sends them), so the code branches and addresses memory on `len` only.
//!
//! Variants: `c906` rotates with `th.srri` (XTheadBb) and loads message words with `ld`
//! at any alignment (the C906 does misaligned accesses in hardware); `rv64gc-zbb` rotates
//! with `rori`; `rv64gc` with two shifts and an or. Cores other than the C906 may trap on
//! a misaligned `ld`, so there the message is read a byte at a time.

use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::kernel::kat::{self, Arg::*};
use kgen_dsl::kernel::{figure, measured, Bench, Harness, Kernel, Measured, Variant};
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::{Abi, BuildError, Ext, Func, Module, Reg};
use kgen_macros::kasm;

// ANCHOR: entry
/// `uint64_t siphash24_<variant>(const unsigned char key[16], const unsigned char *in,
/// size_t len)`: the interface, declared once.
pub const SIPHASH: Entry = Entry {
    kernel: "siphash",
    prefix: "siphash24_",
    suffix: "",
    alias: None,
    abis: &[Abi::Psabi, Abi::Go],
    params: &[
        Param::ptr("key", Elem::U8, In, true).array(16),
        Param::ptr("in", Elem::U8, In, false),
        Param::val("len", Ty::Size, false),
    ],
    ret: Ret::U64,
    summary: "SipHash-2-4 of in[0..len) under the 128-bit key",
};
// ANCHOR_END: entry

const ABIS: &[Abi] = &[Abi::Psabi, Abi::Go];

// ANCHOR: kernel
/// The kernel, as kgen's commands see it.
pub const KERNEL: Kernel = Kernel {
    benches: &[Bench { abi: Abi::Psabi, module: None, drive: bench }, Bench { abi: Abi::Go, module: None, drive: bench }],
    kat: Some(kat),
    ..Kernel::new(
        "siphash",
        "SipHash-2-4: th.srri (c906), rori (Zbb) or shifts",
        &[
            Variant { name: "c906", target: "c906-novector", abis: ABIS, build, vlens: &[] },
            Variant { name: "rv64gc-zbb", target: "rv64gc-zbb", abis: ABIS, build, vlens: &[] },
            Variant { name: "rv64gc", target: "rv64gc", abis: ABIS, build, vlens: &[] },
        ],
        &[&SIPHASH],
    )
};
// ANCHOR_END: kernel

/// v0..v3 = k0, k1, k0, k1 xor "somepseudorandomlygeneratedbytes".
const INIT: [u64; 4] = [0x736f_6d65_7073_6575, 0x646f_7261_6e64_6f6d, 0x6c79_6765_6e65_7261, 0x7465_6462_7974_6573];

/// d = x <<< n, with what the target has.
fn rotl(f: &mut Func, x: Reg, n: u32, t: Reg) {
    let r = 64 - n;
    if f.target.has(Ext::XTheadBb) {
        kasm!(f, th.srri {x}, {x}, {r};);
    } else if f.target.has(Ext::Zbb) {
        kasm!(f, rori {x}, {x}, {r};);
    } else {
        kasm!(f, slli {t}, {x}, {n}; srli {x}, {x}, {r}; or {x}, {x}, {t};);
    }
}

/// One SipRound over v.
fn round(f: &mut Func, v: [Reg; 4], t: Reg) {
    let [v0, v1, v2, v3] = v;
    f.comment("v0 += v1; v1 <<<= 13; v1 ^= v0; v0 <<<= 32");
    kasm!(f, add {v0}, {v0}, {v1};);
    rotl(f, v1, 13, t);
    kasm!(f, xor {v1}, {v1}, {v0};);
    rotl(f, v0, 32, t);
    f.comment("v2 += v3; v3 <<<= 16; v3 ^= v2");
    kasm!(f, add {v2}, {v2}, {v3};);
    rotl(f, v3, 16, t);
    kasm!(f, xor {v3}, {v3}, {v2};);
    f.comment("v0 += v3; v3 <<<= 21; v3 ^= v0");
    kasm!(f, add {v0}, {v0}, {v3};);
    rotl(f, v3, 21, t);
    kasm!(f, xor {v3}, {v3}, {v0};);
    f.comment("v2 += v1; v1 <<<= 17; v1 ^= v2; v2 <<<= 32");
    kasm!(f, add {v2}, {v2}, {v1};);
    rotl(f, v1, 17, t);
    kasm!(f, xor {v1}, {v1}, {v2};);
    rotl(f, v2, 32, t);
}

/// m = the 8 little-endian bytes at p: one `ld` where misaligned loads are fast, else
/// byte by byte.
fn load_word(f: &mut Func, m: Reg, p: Reg, t: Reg) {
    if f.target.misaligned == Misaligned::Fast {
        kasm!(f, ld {m}, 0({p}););
        return;
    }
    kasm!(f, lbu {m}, 0({p}););
    for k in 1..8i64 {
        let sh = 8 * k;
        kasm!(f, lbu {t}, {k}({p}); slli {t}, {t}, {sh}; or {m}, {m}, {t};);
    }
}

/// The function for one variant and ABI.
fn siphash(variant: &str, t: &Target, abi: Abi) -> Func {
    let mut f = Func::entry(&SIPHASH, variant, t, abi);
    let [key, inp, len] = f.params();
    let v = f.xregs::<4>("v");
    let (m, tmp, end, k1, sh) = (f.xreg("m"), f.xreg("t"), f.xreg("end"), f.xreg("k1"), f.xreg("sh"));
    f.public(end);
    f.public(sh);
    f.comment("k0, k1 = the key's little-endian halves; v = k0, k1, k0, k1 ^ INIT");
    load_word(&mut f, m, key, tmp);
    kasm!(f, addi {end}, {key}, 8;);
    load_word(&mut f, k1, end, tmp);
    for (i, k) in [m, k1, m, k1].into_iter().enumerate() {
        f.li(tmp, INIT[i] as i64);
        kasm!(f, xor {v[i]}, {k}, {tmp};);
    }
    f.comment("end = in + (len & ~7): the whole words");
    kasm!(f, andi {end}, {len}, -8; add {end}, {inp}, {end}; beq {inp}, {end}, tail; words:);
    load_word(&mut f, m, inp, tmp);
    kasm!(f, xor {v[3]}, {v[3]}, {m};);
    round(&mut f, v, tmp);
    round(&mut f, v, tmp);
    kasm!(f, xor {v[0]}, {v[0]}, {m}; addi {inp}, {inp}, 8; bne {inp}, {end}, words; tail:);
    f.comment("m = len << 56 | the last len & 7 bytes, little-endian");
    kasm!(f, slli {m}, {len}, 56; andi {len}, {len}, 7; beqz {len}, last; add {end}, {inp}, {len}; bytes:);
    f.comment("m |= in[i] << 8i for the tail's bytes, last first");
    kasm!(f, addi {end}, {end}, -1; lbu {tmp}, 0({end}); sub {sh}, {end}, {inp}; slli {sh}, {sh}, 3; sll {tmp}, {tmp}, {sh}; or {m}, {m}, {tmp}; bne {end}, {inp}, bytes; last:);
    kasm!(f, xor {v[3]}, {v[3]}, {m};);
    round(&mut f, v, tmp);
    round(&mut f, v, tmp);
    kasm!(f, xor {v[0]}, {v[0]}, {m}; xori {v[2]}, {v[2]}, 0xff;);
    for _ in 0..4 {
        round(&mut f, v, tmp);
    }
    // ANCHOR: result
    f.comment("return v0 ^ v1 ^ v2 ^ v3");
    kasm!(f, xor {m}, {v[0]}, {v[1]}; xor {tmp}, {v[2]}, {v[3]}; xor {m}, {m}, {tmp};);
    f.ret_value(m);
    f.ret();
    // ANCHOR_END: result
    f
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new("siphash", variant, t, abi);
    m.notes = vec!["SipHash-2-4. Constant time in the key: branches and addresses depend on len only.".into()];
    m.add(siphash(variant, t, abi), true)?;
    Ok(m)
}

/// SipHash-2-4 written out from the paper, for the known answers.
pub fn reference(key: &[u8; 16], msg: &[u8]) -> u64 {
    let k0 = u64::from_le_bytes(key[..8].try_into().unwrap());
    let k1 = u64::from_le_bytes(key[8..].try_into().unwrap());
    let mut v = [k0 ^ INIT[0], k1 ^ INIT[1], k0 ^ INIT[2], k1 ^ INIT[3]];
    let round = |v: &mut [u64; 4]| {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    };
    let mut words = msg.chunks_exact(8);
    for w in &mut words {
        let m = u64::from_le_bytes(w.try_into().unwrap());
        v[3] ^= m;
        round(&mut v);
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    let m = u64::from_le_bytes(last) | (msg.len() as u64) << 56;
    v[3] ^= m;
    round(&mut v);
    round(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

// ANCHOR: kat
/// Known answers: the paper's example (key 00..0f, the 15 bytes 00..0e:
/// a129ca6149be45e5) and the empty message (726fdb47dd0e0e31, the reference vectors'
/// first), then every length 0..40 at an odd address against [`reference`]. The result
/// comes back in a0; the plan compares it.
fn kat(v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let key: [u8; 16] = std::array::from_fn(|i| i as u8);
    let kb = p.buf("key", key.to_vec(), 0);
    for (len, want) in [(15, 0xa129_ca61_49be_45e5u64), (0, 0x726f_db47_dd0e_0e31)] {
        let msg = p.buf("in", (0..len as u8).collect(), 0);
        p.call(&SIPHASH, v, vec![Buf(kb, 0), Buf(msg, 0), Int(len as u64)], Some(want));
    }
    for len in 0..40usize {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let want = reference(&key, &data);
        let msg = p.buf("in", data, 1);
        p.call(&SIPHASH, v, vec![Buf(kb, 0), Buf(msg, 0), Int(len as u64)], Some(want));
    }
    Ok(p)
}
// ANCHOR_END: kat

// ANCHOR: bench
/// `kgen-siphash bench`: the hash of the size, from a 64-byte aligned buffer.
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let key = h.buffer(&[0x17; 16], 0, false);
    let (name, f) = h.entry(&SIPHASH)?;
    let mut rows = Vec::new();
    for &n in sizes {
        let inp = h.buffer(&vec![0x5a; n], 0, false);
        let m = measured(h, |h| h.call(f, &[key, inp, n as u64]))?;
        rows.push(figure(&name, n, m));
    }
    Ok(rows)
}
// ANCHOR_END: bench
