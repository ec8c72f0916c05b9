//! SHA-256 and SHA-512 (FIPS 180-4): the block (compression) functions, in OpenSSL 3.5's
//! `sha*_block_data_order` ABI, a Linux-kernel form and a Go form. One description, two
//! kernels: the two algorithms differ only in word size, round count, rotation amounts and
//! round constants ([`Algo`]).
//!
//! ```text
//! OpenSSL: void sha256_block_data_order(SHA256_CTX *ctx, const void *in, size_t num);
//!          void sha512_block_data_order(SHA512_CTX *ctx, const void *in, size_t num);
//! Linux:   void sha256_blocks_<v>(struct sha256_block_state *state, const u8 *data, size_t nblocks);
//!          void sha512_blocks_<v>(struct sha512_block_state *state, const u8 *data, size_t nblocks);
//! Go:      func sha256Block<V>(dig *uint32, p *byte, len uint64)
//!          func sha512Block<V>(dig *uint64, p *byte, len uint64)
//! ```
//! `ctx->h[0..8]` (the first member of OpenSSL's `SHA256_CTX`/`SHA512_CTX`, and the kernel's
//! `struct sha*_block_state`) is the chaining value as host-order words; `num`/`nblocks`
//! 64-byte (SHA-256) or 128-byte (SHA-512) blocks are compressed into it; `num == 0` does
//! nothing. `in` may have any alignment. The OpenSSL functions are named
//! `sha256_block_data_order_<v>` and also exported as `sha256_block_data_order` (likewise
//! SHA-512). Go: `len` is in bytes and rounded down to whole blocks, as `crypto/sha256`'s
//! `block(dig, p)` does with `len(p)`; the function has a Go frame of 96 (SHA-256) or 160
//! (SHA-512) bytes (`TEXT $96` or `$160`, `NOSPLIT`) for the schedule and the saved
//! pointers.
//!
//! Variants:
//! - `c906`: rotations in one `th.srriw` (SHA-256) or `th.srri` (SHA-512); message words
//!   read with one `lw`/`ld` at any alignment (the C906 does misaligned loads in hardware)
//!   and byte-swapped with `th.revw`/`th.rev`.
//! - `rv64gc-zbb`: `roriw`/`rori`, and `rev8` on aligned doublewords; input that is not
//!   8-byte aligned is read byte by byte (an out-of-line path chosen per block).
//! - `rv64gc`: SHA-512 rotates with two shifts per rotation; SHA-256 builds `x:x`
//!   (the word in both halves of a register) once per Σ/σ, so each rotation is one `srli`.
//!   Input is read byte by byte.
//!
//! Schedule. Rounds 0..15 run straight; rounds 16.. in a loop of 16 (the state roles come
//! back to the same registers every 8 rounds, the schedule ring every 16). The schedule
//! W[0..16] is a ring in a stack slot; the last eight words are also kept in registers, so
//! a step `W[i] = W[i-16] + σ0(W[i-15]) + W[i-7] + σ1(W[i-2])` loads one word (W[i-15],
//! which is W[i-16] of the next step) and stores one.
//! T1 is accumulated in the register of h, and Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b
//! reuses the previous round's a ^ b, so a round is 24 instructions with its constant load.
//! Loads are placed at least one instruction before their use (the C906's load-to-use
//! latency is 2). SHA-256 words live in the low 32 bits of registers; the upper bits are
//! don't-care, as only instructions that read the low 32 bits consume a word
//! (`th.srriw`/`roriw`/`srliw`, `sw`, and the rv64gc `x:x` build, which shifts them out).
//! `th.addsl` and the indexed loads (`th.lurw`) do not help here: every shift-and-add of
//! SHA-2 is an xor of rotations, and every address is a constant offset.
//!
//! Go. ABI0 leaves 24 integer registers (the psABI 28): enough for the eight schedule words
//! beside the state, the temporaries and kp, even in SHA-256's shifts form (`rv64gc`),
//! whose σ needs a second temporary: the scheduler keeps within what the ABI leaves, and
//! the allocator would spill where it could not (`kgen check` lists any spill). The Go
//! builds model as fast as their OpenSSL builds, a little faster for one block (no
//! callee-saved registers to save). `cargo test --release --test sha2
//! cost_report -- --nocapture` prints both (without Go's own frame set-up, a few
//! instructions a call).
//!
//! Constant time: no branch and no address depends on the message or the state (branches
//! on `num` and on `in`'s alignment only); no multiplies. The stack slot holding the
//! schedule is zeroed at return, and the caller-saved registers that held state or
//! schedule words are cleared (the checker proves nothing secret is left).
//!
//! Performance (C906 cost model, cycles per byte; `kgen bench sha256 --markdown` and `kgen
//! bench sha512 --markdown` regenerate it; the RTL figures and OpenSSL's C code beside them
//! are in README.md, from tests/sha2_baseline.rs):
//!
//! | kernel | variant | 1 block | 256 B | 1024 B | 16384 B |
//! |---|---|---:|---:|---:|---:|
//! | sha256 | c906 | 37.77 | 37.05 | 36.84 | 36.77 |
//! | sha256 | rv64gc | 50.55 | 49.80 | 49.59 | 49.52 |
//! | sha256 | rv64gc-zbb | 37.83 | 37.09 | 36.87 | 36.80 |
//! | sha512 | c906 | 23.84 | 23.59 | 23.36 | 23.29 |
//! | sha512 | rv64gc | 37.97 | 37.72 | 37.48 | 37.41 |
//! | sha512 | rv64gc-zbb | 24.00 | 23.74 | 23.50 | 23.43 |

use crate::{Kernel, Variant};
use kgen_dsl::kernel::hooks::{GoStd, GoStdSlot, Hook, Linux, LinuxSlot, Openssl, OpensslSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, rtl, Bench, Harness, Measured};
use kgen_dsl::entry::{symbol_suffix, Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::func::x::SP;
use kgen_dsl::object::DataObj;
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::{Abi, BuildError, Ext, Func, Module, Opnd, Reg, Slot};
use kgen_macros::kasm;

const ABIS: &[Abi] = &[Abi::Psabi, Abi::Linux, Abi::Go];

// ANCHOR: kernel
pub const SHA256: Kernel = Kernel {
    benches: &[
        Bench { abi: Abi::Psabi, module: None, drive: |h, sizes| bench(&A256, h, sizes) },
        Bench { abi: Abi::Go, module: None, drive: |h, sizes| bench_go(&A256, h, sizes) },
    ],
    kat: Some(|v| kat(&A256, v)),
    rtl: Some(|v, sizes| rtl_plan(&A256, v, sizes)),
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::Sha2 { bits: 256 }, variants: &["c906"], entries: &[&SHA256_BLOCKS] }),
        Hook::GoStd(GoStd { slot: GoStdSlot::Sha2 { bits: 256 }, variants: &["c906"], entries: &[&SHA256_GO] }),
        Hook::Linux(Linux { slot: LinuxSlot::Sha2 { bits: 256 }, variants: &["c906", "rv64gc-zbb", "rv64gc"], entries: &[&SHA256_LINUX] }),
    ],
    ..Kernel::new(
        "sha256",
        "SHA-256 block function: th.srriw rotations (c906), Zbb, or shifts (OpenSSL, Linux, Go)",
        &[
            Variant { name: "c906", target: "c906", abis: ABIS, build: |v, t, abi| build(&A256, v, t, abi), vlens: &[] },
            Variant { name: "rv64gc", target: "rv64gc", abis: ABIS, build: |v, t, abi| build(&A256, v, t, abi), vlens: &[] },
            Variant { name: "rv64gc-zbb", target: "rv64gc-zbb", abis: ABIS, build: |v, t, abi| build(&A256, v, t, abi), vlens: &[] },
        ],
        &[&SHA256_BLOCKS, &SHA256_LINUX, &SHA256_GO],
    )
};
// ANCHOR_END: kernel

pub const SHA512: Kernel = Kernel {
    benches: &[
        Bench { abi: Abi::Psabi, module: None, drive: |h, sizes| bench(&A512, h, sizes) },
        Bench { abi: Abi::Go, module: None, drive: |h, sizes| bench_go(&A512, h, sizes) },
    ],
    kat: Some(|v| kat(&A512, v)),
    rtl: Some(|v, sizes| rtl_plan(&A512, v, sizes)),
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::Sha2 { bits: 512 }, variants: &["c906"], entries: &[&SHA512_BLOCKS] }),
        Hook::GoStd(GoStd { slot: GoStdSlot::Sha2 { bits: 512 }, variants: &["c906"], entries: &[&SHA512_GO] }),
        Hook::Linux(Linux { slot: LinuxSlot::Sha2 { bits: 512 }, variants: &["c906", "rv64gc-zbb", "rv64gc"], entries: &[&SHA512_LINUX] }),
    ],
    ..Kernel::new(
        "sha512",
        "SHA-512 block function: th.srri rotations (c906), Zbb, or shifts (OpenSSL, Linux, Go)",
        &[
            Variant { name: "c906", target: "c906", abis: ABIS, build: |v, t, abi| build(&A512, v, t, abi), vlens: &[] },
            Variant { name: "rv64gc", target: "rv64gc", abis: ABIS, build: |v, t, abi| build(&A512, v, t, abi), vlens: &[] },
            Variant { name: "rv64gc-zbb", target: "rv64gc-zbb", abis: ABIS, build: |v, t, abi| build(&A512, v, t, abi), vlens: &[] },
        ],
        &[&SHA512_BLOCKS, &SHA512_LINUX, &SHA512_GO],
    )
};

// ---- entry points -------------------------------------------------------------------------

// ANCHOR: entry
/// OpenSSL's `SHA256_CTX` (include/openssl/sha.h): h[8] first.
const SHA256_CTX: Elem = Elem::Named {
    name: "SHA256_CTX",
    align: 4,
    def: "struct SHA256state_st { unsigned int h[8]; unsigned int Nl, Nh; unsigned int data[16]; unsigned int num, md_len; }",
};
/// OpenSSL's `SHA512_CTX`: h[8] first.
const SHA512_CTX: Elem = Elem::Named {
    name: "SHA512_CTX",
    align: 8,
    def: "struct SHA512state_st { unsigned long long h[8]; unsigned long long Nl, Nh; union { unsigned long long d[16]; unsigned char p[128]; } u; unsigned int num, md_len; }",
};
/// The kernel's `struct sha256_block_state` (include/crypto/sha2.h).
const SHA256_STATE: Elem = Elem::Named { name: "struct sha256_block_state", align: 4, def: "struct sha256_block_state { u32 h[8]; }" };
const SHA512_STATE: Elem = Elem::Named { name: "struct sha512_block_state", align: 8, def: "struct sha512_block_state { u64 h[8]; }" };

/// `void sha256_block_data_order(SHA256_CTX *ctx, const void *in, size_t num)` (OpenSSL).
pub const SHA256_BLOCKS: Entry = Entry {
    kernel: "sha256",
    prefix: "sha256_block_data_order_",
    suffix: "",
    alias: Some("sha256_block_data_order"),
    abis: &[Abi::Psabi],
    params: &[Param::ptr("ctx", SHA256_CTX, InOut, true), Param::ptr("in", Elem::Void, In, true), Param::val("num", Ty::Size, false)],
    ret: Ret::Void,
    summary: "SHA-256: compress num 64-byte blocks into ctx->h[0..8]",
};
// ANCHOR_END: entry
/// `void sha256_blocks_V(struct sha256_block_state *state, const u8 *data, size_t nblocks)`
/// (Linux, as lib/crypto's `sha256_blocks_generic`).
pub const SHA256_LINUX: Entry = Entry {
    kernel: "sha256",
    prefix: "sha256_blocks_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[Param::ptr("state", SHA256_STATE, InOut, true), Param::ptr("data", Elem::U8, In, true), Param::val("nblocks", Ty::Size, false)],
    ret: Ret::Void,
    summary: "SHA-256: compress nblocks 64-byte blocks into state->h[0..8]",
};
/// `func sha256Block<V>(dig *uint32, p *byte, len uint64)` (Go).
pub const SHA256_GO: Entry = Entry {
    kernel: "sha256",
    prefix: "sha256_block_",
    suffix: "",
    alias: None,
    abis: &[Abi::Go],
    params: &[Param::ptr("dig", Elem::U32, InOut, true), Param::ptr("p", Elem::U8, In, true), Param::val("len", Ty::Size, false)],
    ret: Ret::Void,
    summary: "SHA-256: compress len / 64 blocks of p into dig[0..8]",
};
/// `void sha512_block_data_order(SHA512_CTX *ctx, const void *in, size_t num)` (OpenSSL).
pub const SHA512_BLOCKS: Entry = Entry {
    kernel: "sha512",
    prefix: "sha512_block_data_order_",
    alias: Some("sha512_block_data_order"),
    params: &[Param::ptr("ctx", SHA512_CTX, InOut, true), Param::ptr("in", Elem::Void, In, true), Param::val("num", Ty::Size, false)],
    summary: "SHA-512: compress num 128-byte blocks into ctx->h[0..8]",
    ..SHA256_BLOCKS
};
/// `void sha512_blocks_V(struct sha512_block_state *state, const u8 *data, size_t nblocks)`
/// (Linux).
pub const SHA512_LINUX: Entry = Entry {
    kernel: "sha512",
    prefix: "sha512_blocks_",
    params: &[Param::ptr("state", SHA512_STATE, InOut, true), Param::ptr("data", Elem::U8, In, true), Param::val("nblocks", Ty::Size, false)],
    summary: "SHA-512: compress nblocks 128-byte blocks into state->h[0..8]",
    ..SHA256_LINUX
};
/// `func sha512Block<V>(dig *uint64, p *byte, len uint64)` (Go).
pub const SHA512_GO: Entry = Entry {
    kernel: "sha512",
    prefix: "sha512_block_",
    params: &[Param::ptr("dig", Elem::U64, InOut, true), Param::ptr("p", Elem::U8, In, true), Param::val("len", Ty::Size, false)],
    summary: "SHA-512: compress len / 128 blocks of p into dig[0..8]",
    ..SHA256_GO
};
/// Every entry point of the two kernels.
pub const ENTRIES: &[&Entry] = &[&SHA256_BLOCKS, &SHA256_LINUX, &SHA256_GO, &SHA512_BLOCKS, &SHA512_LINUX, &SHA512_GO];

// ---- the algorithms -----------------------------------------------------------------------

/// What distinguishes SHA-256 from SHA-512.
pub struct Algo {
    pub kernel: &'static str,
    /// Bytes per word: 4 or 8.
    pub ws: i64,
    pub rounds: usize,
    /// Σ0, Σ1: three rotations each.
    pub big0: [u32; 3],
    pub big1: [u32; 3],
    /// σ0, σ1: two rotations and a shift.
    pub small0: [u32; 3],
    pub small1: [u32; 3],
    /// The entry points per ABI: OpenSSL, Linux, Go.
    pub entries: [&'static Entry; 3],
}

pub const A256: Algo = Algo {
    kernel: "sha256",
    ws: 4,
    rounds: 64,
    big0: [2, 13, 22],
    big1: [6, 11, 25],
    small0: [7, 18, 3],
    small1: [17, 19, 10],
    entries: [&SHA256_BLOCKS, &SHA256_LINUX, &SHA256_GO],
};

pub const A512: Algo = Algo {
    kernel: "sha512",
    ws: 8,
    rounds: 80,
    big0: [28, 34, 39],
    big1: [14, 18, 41],
    small0: [1, 8, 7],
    small1: [19, 61, 6],
    entries: [&SHA512_BLOCKS, &SHA512_LINUX, &SHA512_GO],
};

impl Algo {
    /// Bytes per block.
    pub fn block(&self) -> i64 {
        16 * self.ws
    }
    fn entry(&self, abi: Abi) -> &'static Entry {
        match abi {
            Abi::Psabi => self.entries[0],
            Abi::Linux => self.entries[1],
            Abi::Go => self.entries[2],
        }
    }
    /// K: the first 32 (SHA-256) or 64 (SHA-512) bits of the fractional parts of the cube
    /// roots of the first 64 (80) primes, as little-endian words.
    pub fn k_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for p in primes(self.rounds) {
            let frac = cbrt_frac64(p);
            if self.ws == 4 {
                out.extend_from_slice(&((frac >> 32) as u32).to_le_bytes());
            } else {
                out.extend_from_slice(&frac.to_le_bytes());
            }
        }
        out
    }
}

/// The first `n` primes.
fn primes(n: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::new();
    let mut c = 2u64;
    while v.len() < n {
        if v.iter().take_while(|&&p| p * p <= c).all(|&p| !c.is_multiple_of(p)) {
            v.push(c);
        }
        c += 1;
    }
    v
}

/// a·b truncated to 256 bits (little-endian 64-bit limbs).
fn mul256(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut r = [0u64; 4];
    for i in 0..4 {
        let mut carry = 0u128;
        for j in 0..4 - i {
            let t = r[i + j] as u128 + a[i] as u128 * b[j] as u128 + carry;
            r[i + j] = t as u64;
            carry = t >> 64;
        }
    }
    r
}

/// floor(cbrt(p)·2^64) mod 2^64: the first 64 bits of the fractional part of p's cube
/// root, as the largest x with x^3 <= p·2^192 (binary search; p < 512, so x < 2^67).
fn cbrt_frac64(p: u64) -> u64 {
    let limbs = |x: u128| [x as u64, (x >> 64) as u64, 0, 0];
    let target = [0, 0, 0, p];
    let le = |a: [u64; 4], b: [u64; 4]| a.iter().rev().cmp(b.iter().rev()) != std::cmp::Ordering::Greater;
    let (mut lo, mut hi) = (0u128, 1u128 << 67);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let m = limbs(mid);
        if le(mul256(&mul256(&m, &m), &m), target) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo as u64
}

// ---- instruction choices ------------------------------------------------------------------

/// How a word is rotated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rot {
    /// th.srriw / th.srri (XTheadBb)
    Thead,
    /// roriw / rori (Zbb)
    Zbb,
    /// Shifts: `x:x` then `srli` (32-bit words), `srli`/`slli` pairs (64-bit)
    Shifts,
}

/// How the message words are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Load {
    /// One `lw`/`ld` at any alignment and `th.revw`/`th.rev`, in the round.
    Direct,
    /// Aligned doublewords and `rev8` into the schedule ring before the rounds; byte loads
    /// when the input is not 8-byte aligned.
    Rev8,
    /// Byte loads into the ring before the rounds.
    Bytes,
}

/// The stack slots of the schedule ring (secret) and of the saved pointers (public).
#[derive(Clone, Copy)]
struct Mem {
    w: Slot,
    p: Slot,
}

/// The offset operand of a word access: a stack-slot offset or an immediate.
#[derive(Clone)]
struct Off(Opnd);

impl From<Off> for Opnd {
    fn from(o: Off) -> Opnd {
        o.0
    }
}

/// Saved pointers (doubleword index in the pointer area).
const P_CTX: usize = 0;
const P_END: usize = 1;
const P_IN: usize = 2;
const P_KEND: usize = 3;

struct Ctx<'a> {
    a: &'a Algo,
    rot: Rot,
    load: Load,
    mem: Mem,
    /// The last eight schedule words, also kept in registers: W[j] in `win[j % 8]`.
    win: [Reg; 8],
}

impl Ctx<'_> {
    /// (base, offset) of ring word `i`.
    fn w_at(&self, i: usize) -> (Reg, Off) {
        self.ring(self.a.ws * (i % 16) as i64)
    }
    /// (base, offset) of byte `off` of the ring.
    fn ring(&self, off: i64) -> (Reg, Off) {
        (SP, Off(Opnd::Stack { slot: self.mem.w, off }))
    }
    /// (base, offset) of saved pointer `k`.
    fn p_at(&self, k: usize) -> (Reg, Off) {
        (SP, Off(Opnd::Stack { slot: self.mem.p, off: 8 * k as i64 }))
    }
}

/// dst = the word at off(base).
fn load(f: &mut Func, ws: i64, dst: Reg, (base, off): (Reg, Off)) {
    if ws == 4 {
        kasm!(f, lw {dst}, {off}({base}););
    } else {
        kasm!(f, ld {dst}, {off}({base}););
    }
}

/// The word at off(base) = src.
fn store(f: &mut Func, ws: i64, src: Reg, (base, off): (Reg, Off)) {
    if ws == 4 {
        kasm!(f, sw {src}, {off}({base}););
    } else {
        kasm!(f, sd {src}, {off}({base}););
    }
}

fn load_ptr(f: &mut Func, c: &Ctx, dst: Reg, k: usize) {
    let (base, off) = c.p_at(k);
    kasm!(f, ld {dst}, {off}({base}););
}

fn store_ptr(f: &mut Func, c: &Ctx, src: Reg, k: usize) {
    let (base, off) = c.p_at(k);
    kasm!(f, sd {src}, {off}({base}););
}

/// The last term of a Σ/σ.
#[derive(Clone, Copy)]
enum Last {
    Rot(u32),
    Shr(u32),
}

/// d = x >>> n (Thead, Zbb).
fn ror(f: &mut Func, c: &Ctx, d: Reg, x: Reg, n: u32) {
    match (c.rot, c.a.ws) {
        (Rot::Thead, 4) => kasm!(f, th.srriw {d}, {x}, {n};),
        (Rot::Thead, _) => kasm!(f, th.srri {d}, {x}, {n};),
        (Rot::Zbb, 4) => kasm!(f, roriw {d}, {x}, {n};),
        (Rot::Zbb, _) => kasm!(f, rori {d}, {x}, {n};),
        (Rot::Shifts, _) => f.fail("ror: the shifts variant rotates inside sigma()"),
    }
}

/// d = x >> n (logical, word size).
fn shr(f: &mut Func, c: &Ctx, d: Reg, x: Reg, n: u32) {
    if c.a.ws == 4 {
        kasm!(f, srliw {d}, {x}, {n};);
    } else {
        kasm!(f, srli {d}, {x}, {n};);
    }
}

// ANCHOR: sigma
/// d = (x >>> r0) ^ (x >>> r1) ^ last(x): Σ with three rotations, σ with a shift last.
/// `t[1]` is used by the 32-bit shifts form only.
fn sigma(f: &mut Func, c: &Ctx, d: Reg, x: Reg, r: [u32; 2], last: Last, t: [Reg; 2]) {
    let [t0, t1] = t;
    match (c.rot, c.a.ws) {
        (Rot::Thead | Rot::Zbb, _) => {
            ror(f, c, d, x, r[0]);
            ror(f, c, t0, x, r[1]);
            kasm!(f, xor {d}, {d}, {t0};);
            match last {
                Last::Rot(n) => ror(f, c, t0, x, n),
                Last::Shr(n) => shr(f, c, t0, x, n),
            }
            kasm!(f, xor {d}, {d}, {t0};);
        }
        (Rot::Shifts, 4) => {
            // t1 = x:x, so (t1 >> n) mod 2^32 = x >>> n
            kasm!(f, slli {t1}, {x}, 32; srli {t0}, {t1}, 32; or {t1}, {t1}, {t0};);
            let [r0, r1] = r;
            kasm!(f, srli {d}, {t1}, {r0}; srli {t0}, {t1}, {r1}; xor {d}, {d}, {t0};);
            match last {
                Last::Rot(n) => kasm!(f, srli {t0}, {t1}, {n};),
                Last::Shr(n) => kasm!(f, srliw {t0}, {x}, {n};),
            }
            kasm!(f, xor {d}, {d}, {t0};);
        }
        (Rot::Shifts, _) => {
            // x >>> n = (x >> n) ^ (x << (64 - n)): the two halves have no bit in common
            let [r0, r1] = r;
            let (l0, l1) = (64 - r0, 64 - r1);
            kasm!(f,
                srli {d}, {x}, {r0}; slli {t0}, {x}, {l0}; xor {d}, {d}, {t0};
                srli {t0}, {x}, {r1}; xor {d}, {d}, {t0}; slli {t0}, {x}, {l1}; xor {d}, {d}, {t0};
            );
            match last {
                Last::Rot(n) => {
                    let l = 64 - n;
                    kasm!(f, srli {t0}, {x}, {n}; xor {d}, {d}, {t0}; slli {t0}, {x}, {l}; xor {d}, {d}, {t0};);
                }
                Last::Shr(n) => kasm!(f, srli {t0}, {x}, {n}; xor {d}, {d}, {t0};),
            }
        }
    }
}
// ANCHOR_END: sigma

// ---- rounds -------------------------------------------------------------------------------

/// Temporaries of a round and a schedule step (the step runs before the round, so they
/// share them).
struct Temps {
    t: [Reg; 3],
    /// K[i]
    k: Reg,
    /// a ^ b of this round and of the previous one (= this round's b ^ c), by round parity.
    ab: [Reg; 2],
    /// W[i-15] loaded in step i (= W[i-16] of step i+1), by step parity.
    x: [Reg; 2],
}

// ANCHOR: roles
/// The state registers in the roles of round `i`: (a, b, c, d, e, f, g, h). A round writes
/// the new a into h's register and the new e into d's, so the roles move by one register
/// per round and come back every 8.
fn roles(st: &[Reg; 8], i: usize) -> [Reg; 8] {
    std::array::from_fn(|j| st[(j + 8 - i % 8) % 8])
}
// ANCHOR_END: roles

// ANCHOR: round
/// One round with W[i] in `w` and K[i] in `tm.k`.
fn round(f: &mut Func, c: &Ctx, st: &[Reg; 8], i: usize, w: Reg, tm: &Temps) {
    let [a, b, _, d, e, fv, g, h] = roles(st, i);
    let [t1, t2, t3] = tm.t;
    let (k, ab, bc) = (tm.k, tm.ab[i % 2], tm.ab[(i + 1) % 2]);
    let [s0, s1, s2] = c.a.big1;
    f.comment("T1 = h + Σ1(e) + Ch(e, f, g) + K[i] + W[i], in h; Ch = ((f ^ g) & e) ^ g; d += T1");
    sigma(f, c, t1, e, [s0, s1], Last::Rot(s2), [t2, t3]);
    kasm!(f,
        add {h}, {h}, {w};
        xor {t2}, {fv}, {g};
        and {t2}, {t2}, {e};
        xor {t2}, {t2}, {g};
        add {h}, {h}, {k};
        add {h}, {h}, {t1};
        add {h}, {h}, {t2};
        add {d}, {d}, {h};
    );
    let [s0, s1, s2] = c.a.big0;
    f.comment("h = T1 + Σ0(a) + Maj(a, b, c); Maj = ((a ^ b) & (b ^ c)) ^ b, b ^ c the previous round's a ^ b");
    sigma(f, c, t1, a, [s0, s1], Last::Rot(s2), [t2, t3]);
    kasm!(f,
        xor {ab}, {a}, {b};
        and {t2}, {ab}, {bc};
        xor {t2}, {t2}, {b};
        add {h}, {h}, {t1};
        add {h}, {h}, {t2};
    );
}
// ANCHOR_END: round

/// tm.k = K[i], from kp = &K[base].
fn load_k(f: &mut Func, c: &Ctx, kp: Reg, i: usize, base: usize, tm: &Temps) {
    let off = c.a.ws * (i - base) as i64;
    load(f, c.a.ws, tm.k, (kp, Off(Opnd::Imm(off))));
}

/// Rounds 0..15: W[i] from the input (Direct) or the ring (filled by the message phase);
/// kp = &K[0].
fn first_rounds(f: &mut Func, c: &Ctx, st: &[Reg; 8], inp: Reg, kp: Reg, tm: &Temps) {
    let ws = c.a.ws;
    for i in 0..16 {
        let w = c.win[i % 8];
        match c.load {
            Load::Direct => {
                f.comment("W[i] = big-endian word i of the block; ring[i] = W[i]");
                load(f, ws, w, (inp, Off(Opnd::Imm(ws * i as i64))));
                load_k(f, c, kp, i, 0, tm);
                if ws == 4 {
                    kasm!(f, th.revw {w}, {w};);
                } else {
                    kasm!(f, th.rev {w}, {w};);
                }
                store(f, ws, w, c.w_at(i));
            }
            Load::Rev8 | Load::Bytes => {
                load(f, ws, w, c.w_at(i));
                load_k(f, c, kp, i, 0, tm);
            }
        }
        round(f, c, st, i, w, tm);
    }
}

// ANCHOR: schedule
/// Step i >= 16 of the schedule, then round i: W[i] = W[i-16] + σ0(W[i-15]) + W[i-7] +
/// σ1(W[i-2]). W[i-16] is in `x[(i-1) % 2]` (loaded the step before), W[i-15] is loaded
/// into `x[i % 2]`, W[i-2] and W[i-7] come from the register window.
fn schedule_round(f: &mut Func, c: &Ctx, st: &[Reg; 8], i: usize, kp: Reg, base: usize, tm: &Temps) {
    let ws = c.a.ws;
    let (w2, w7, wn) = (c.win[(i - 2) % 8], c.win[(i - 7) % 8], c.win[i % 8]);
    let (xprev, xcur) = (tm.x[(i + 1) % 2], tm.x[i % 2]);
    let [t1, t2, t3] = tm.t;
    f.comment("W[i] = W[i-16] + σ0(W[i-15]) + W[i-7] + σ1(W[i-2]); ring[i] = W[i]");
    load(f, ws, xcur, c.w_at(i - 15));
    load_k(f, c, kp, i, base, tm);
    let [r0, r1, sh] = c.a.small1;
    sigma(f, c, t1, w2, [r0, r1], Last::Shr(sh), [t2, t3]);
    kasm!(f, add {wn}, {xprev}, {t1};);
    let [r0, r1, sh] = c.a.small0;
    sigma(f, c, t1, xcur, [r0, r1], Last::Shr(sh), [t2, t3]);
    kasm!(f, add {wn}, {wn}, {t1}; add {wn}, {wn}, {w7};);
    store(f, ws, wn, c.w_at(i));
    round(f, c, st, i, wn, tm);
}
// ANCHOR_END: schedule

/// The message phase of the Rev8 and Bytes variants: ring[0..16] = the block's big-endian
/// words.
fn message_phase(f: &mut Func, c: &Ctx, inp: Reg) {
    let ws = c.a.ws;
    let bytes = |f: &mut Func| {
        let (acc, t) = (f.xreg("m"), f.xreg("mb"));
        f.comment("ring[j] = in[ws·j] << 8·(ws-1) | ... | in[ws·j + ws-1], byte by byte");
        for j in 0..16i64 {
            kasm!(f, lbu {acc}, {ws * j}({inp}););
            for b in 1..ws {
                let off = ws * j + b;
                kasm!(f, lbu {t}, {off}({inp}); slli {acc}, {acc}, 8; or {acc}, {acc}, {t};);
            }
            store(f, ws, acc, c.w_at(j as usize));
        }
    };
    match c.load {
        Load::Direct => {}
        Load::Bytes => bytes(f),
        Load::Rev8 => {
            let sh = f.xreg("misaligned");
            f.public(sh);
            let [u, v] = [f.xreg("m0"), f.xreg("m1")];
            f.scope(|f| {
                kasm!(f, andi {sh}, {inp}, 7; bnez {sh}, unaligned;);
                f.comment("ring[2j], ring[2j+1] (SHA-256) or ring[j] (SHA-512) = rev8(doubleword j)");
                for j in (0..8 * ws / 4).step_by(2) {
                    let (o0, o1) = (8 * j, 8 * j + 8);
                    kasm!(f, ld {u}, {o0}({inp}); ld {v}, {o1}({inp}); rev8 {u}, {u}; rev8 {v}, {v};);
                    if ws == 4 {
                        // rev8 leaves W[2j] in the upper half: swap the halves to store in order
                        kasm!(f, rori {u}, {u}, 32; rori {v}, {v}, 32;);
                    }
                    for (r, o) in [(u, o0), (v, o1)] {
                        let (base, off) = c.ring(o);
                        kasm!(f, sd {r}, {off}({base}););
                    }
                }
                kasm!(f, loaded:);
                f.cold(|f| {
                    kasm!(f, unaligned:);
                    bytes(f);
                    kasm!(f, j loaded;);
                });
            });
        }
    }
}

/// The block function.
fn blocks_fn(a: &Algo, variant: &str, t: &Target, abi: Abi, ksym: &str) -> Func {
    let mut f = Func::entry(a.entry(abi), variant, t, abi);
    let [ctx, inp, n] = f.params();
    let ws = a.ws;
    // ANCHOR: slots
    let mem = Mem { w: f.slot("W", 16 * ws as u32, 8, true), p: f.slot("saved", 32, 8, false) };
    // ANCHOR_END: slots
    // ANCHOR: choices
    let rot = if t.has(Ext::XTheadBb) {
        Rot::Thead
    } else if t.has(Ext::Zbb) {
        Rot::Zbb
    } else {
        Rot::Shifts
    };
    let msg = if t.misaligned == Misaligned::Fast && t.has(Ext::XTheadBb) {
        Load::Direct
    } else if t.has(Ext::Zbb) {
        Load::Rev8
    } else {
        Load::Bytes
    };
    let c = Ctx { a, rot, load: msg, mem, win: std::array::from_fn(|j| f.xreg(&format!("w{j}"))) };
    // ANCHOR_END: choices
    let st: [Reg; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"].map(|s| f.xreg(s));
    let tm = Temps {
        t: f.xregs::<3>("t"),
        k: f.xreg("k"),
        ab: [f.xreg("ab0"), f.xreg("ab1")],
        x: [f.xreg("x0"), f.xreg("x1")],
    };
    let [kp, end, cp, kend] = [f.xreg("kp"), f.xreg("end"), f.xreg("ctx_saved"), f.xreg("kend")];
    for r in [kp, end, cp, kend] {
        f.public(r);
    }
    let shift = a.block().trailing_zeros();
    if abi == Abi::Go {
        f.comment("num = len / block");
        kasm!(f, srli {n}, {n}, {shift};);
    }
    f.comment("end = in + num·block; save ctx and end; state = ctx->h; kp = K");
    kasm!(f,
        beqz {n}, done;
        slli {end}, {n}, {shift};
        add {end}, {end}, {inp};
    );
    store_ptr(&mut f, &c, end, P_END);
    store_ptr(&mut f, &c, ctx, P_CTX);
    for (j, &s) in st.iter().enumerate() {
        load(&mut f, ws, s, (ctx, Off(Opnd::Imm(ws * j as i64))));
    }
    f.la_off(kend, ksym, ws * a.rounds as i64);
    store_ptr(&mut f, &c, kend, P_KEND);
    f.la(kp, ksym);
    let [_, b, cc, ..] = st;
    kasm!(f, block:);
    message_phase(&mut f, &c, inp);
    f.comment("b ^ c for round 0's Maj");
    let bc = tm.ab[1];
    kasm!(f, xor {bc}, {b}, {cc};);
    first_rounds(&mut f, &c, &st, inp, kp, &tm);
    let blk = a.block();
    f.comment("in += block (saved); x1 = W[0], the W[i-16] of step 16; kp = &K[16]");
    kasm!(f, addi {inp}, {inp}, {blk};);
    store_ptr(&mut f, &c, inp, P_IN);
    load(&mut f, ws, tm.x[1], c.w_at(0));
    kasm!(f, addi {kp}, {kp}, {blk};);
    // ANCHOR: loop
    kasm!(f, rounds:);
    for i in 16..32 {
        schedule_round(&mut f, &c, &st, i, kp, 16, &tm);
    }
    f.comment("kp += 16 words; loop until kp = &K[rounds]");
    load_ptr(&mut f, &c, kend, P_KEND);
    kasm!(f,
        addi {kp}, {kp}, {blk};
        bne {kp}, {kend}, rounds;
    );
    // ANCHOR_END: loop
    f.comment("ctx->h[j] += state[j] (the sums are the next block's state); kp = K");
    load_ptr(&mut f, &c, cp, P_CTX);
    let sums = f.xregs::<8>("hsum");
    for (j, &s) in sums.iter().enumerate() {
        load(&mut f, ws, s, (cp, Off(Opnd::Imm(ws * j as i64))));
    }
    for (j, (&s, &h)) in st.iter().zip(&sums).enumerate() {
        kasm!(f, add {s}, {s}, {h};);
        store(&mut f, ws, s, (cp, Off(Opnd::Imm(ws * j as i64))));
    }
    let back = -(ws * a.rounds as i64);
    load_ptr(&mut f, &c, inp, P_IN);
    load_ptr(&mut f, &c, end, P_END);
    kasm!(f,
        addi {kp}, {kp}, {back};
        bne {inp}, {end}, block;
    );
    kasm!(f, done:);
    f.ret();
    f
}

// ANCHOR: build
/// The module of a variant.
fn build(a: &Algo, variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new(a.kernel, variant, t, abi);
    let bits = 8 * a.ws * 8;
    m.notes = vec![
        format!("SHA-{bits} block function (FIPS 180-4). Constant time: no branch or address depends on the"),
        "message or the state. The message schedule lives in a stack slot and is zeroed at return;".into(),
        "secret registers are cleared.".into(),
    ];
    let ksym = format!("kgen_{}_{}_k", a.kernel, symbol_suffix(variant));
    let what = if a.ws == 4 { "32 bits of the fractional parts of the cube roots of the first 64" } else { "64 bits of the fractional parts of the cube roots of the first 80" };
    m.add_data(DataObj { name: ksym.clone(), align: 8, bytes: a.k_bytes(), elem: a.ws as u8, global: false, comment: format!("K: the first {what} primes") });
    m.add(blocks_fn(a, variant, t, abi, &ksym), true)?;
    Ok(m)
}
// ANCHOR_END: build

// ---- what the commands need: benchmark, known answers, RTL plan, hooks --------------------------

// ANCHOR: sha2-driver
/// `kgen bench sha256|sha512`: sha*_block_data_order over the size rounded up to whole
/// blocks, from a 64-byte aligned buffer (OpenSSL ABI: ctx, in, num).
fn bench(a: &Algo, h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let block = a.block() as usize;
    let (name, f) = h.entry(a.entries[0])?;
    let ctx = h.buffer(&[0x6au8; 216], 0, true);
    let mut rows: Vec<Measured> = Vec::new();
    for &n in sizes {
        let n = n.max(block).next_multiple_of(block);
        if rows.iter().any(|r| r.bytes == n) {
            continue; // a smaller size rounded up to the same blocks
        }
        let inp = h.buffer(&vec![0x5a; n], 0, false);
        let m = measured(h, |h| h.call(f, &[ctx, inp, (n / block) as u64]))?;
        rows.push(figure(&name, n, m));
    }
    Ok(rows)
}
// ANCHOR_END: sha2-driver

/// The Go form: the length in bytes (whole blocks of it are compressed).
fn bench_go(a: &Algo, h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let block = a.block() as usize;
    let (name, f) = h.entry(a.entries[2])?;
    let dig = h.buffer(&[0x6au8; 64], 0, true);
    let mut rows: Vec<Measured> = Vec::new();
    for &n in sizes {
        let n = n.max(block).next_multiple_of(block);
        if rows.iter().any(|r| r.bytes == n) {
            continue;
        }
        let inp = h.buffer(&vec![0x5a; n], 0, false);
        let m = measured(h, |h| h.call(f, &[dig, inp, n as u64]))?;
        rows.push(figure(&name, n, m));
    }
    Ok(rows)
}

/// FIPS 180-4 5.3.3 and 5.3.5: the initial hash values.
pub const SHA256_IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
pub const SHA512_IV: [u64; 8] = [
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
/// Known answers: FIPS 180-4's "abc" (one block) and two-block examples, padded here, from
/// the initial hash value, with the message at an odd address.
fn kat(a: &Algo, v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let wide = a.ws == 8;
    let block = a.block() as usize;
    let (msgs, digests) = if wide { ([SHA_ABC, SHA512_2BLOCK], SHA512_DIGESTS) } else { ([SHA_ABC, SHA256_2BLOCK], SHA256_DIGESTS) };
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
        p.call(a.entries[0], v, vec![Buf(c, 0), Buf(inp, 0), Int(n as u64)], None);
        // The digest is h[] big-endian: the expected bytes are its words in host order.
        let want = unhex(digest);
        let host: Vec<u8> = want.chunks(words / 8).flat_map(|w| w.iter().rev().copied().collect::<Vec<_>>()).collect();
        p.expect(format!("FIPS 180-4 {} of {} bytes ({n} blocks): h[0..8]", a.kernel, msg.len()), c, 0, host);
    }
    Ok(p)
}
// ANCHOR_END: sha2-plan

/// What [`bench`] measures, on the RTL.
fn rtl_plan(a: &Algo, variant: &str, sizes: &[usize]) -> Result<rtl::Plan, String> {
    let block = a.block() as usize;
    let mut p = rtl::Plan::new(format!("{} {variant}", a.kernel));
    let ctx = p.buf(vec![0x6a; 216]);
    let mut done = Vec::new();
    for &n in sizes {
        let n = n.max(block).next_multiple_of(block);
        if done.contains(&n) {
            continue; // a smaller size rounded up to the same blocks
        }
        done.push(n);
        let inp = p.buf(vec![0x5a; n]);
        let c = p.call(a.entries[0], variant, vec![ctx.clone(), inp, rtl::Arg::Int((n / block) as u64)])?;
        p.row(rtl::bench_name(a.entries[0], variant), n, c, 1);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 180-4 4.2.2 and 4.2.3: the first and last constants.
    #[test]
    fn round_constants() {
        let k = A256.k_bytes();
        let w = |i: usize| u32::from_le_bytes(k[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!((w(0), w(1), w(63)), (0x428a2f98, 0x71374491, 0xc67178f2));
        let k = A512.k_bytes();
        let d = |i: usize| u64::from_le_bytes(k[8 * i..8 * i + 8].try_into().unwrap());
        assert_eq!((d(0), d(79)), (0x428a2f98d728ae22, 0x6c44198c4a475817));
    }
}
