//! ChaCha20-Poly1305 (RFC 8439) bulk encryption and decryption in one pass: ChaCha20 in
//! XTheadVector lanes, merged with the scalar base-2^32 Poly1305 of the ciphertext.
//!
//! ```text
//! OpenSSL-style: void chacha20_poly1305_seal(unsigned char *out, const unsigned char *in,
//!                    size_t len, const unsigned int key[8], const unsigned int counter[4],
//!                    void *poly);
//!                void chacha20_poly1305_open(... the same arguments ...);
//! Go:            func chacha20Poly1305SealC906(out *byte, in *byte, len uint64,
//!                    key *uint32, counter *uint32, poly *byte)    (and ...OpenC906)
//! Go, x/crypto:  func chacha20Poly1305SealMacstateC906(out *byte, in *byte, len uint64,
//!                    key *uint32, counter *uint32, state *uint64) (and ...OpenMacstateC906)
//! ```
//! (The Go forms are tested in kgen-sim under Go's register rules and, built with Go in
//! one package with `chacha20` c906 and `poly1305` 32-c906, against x/crypto's
//! chacha20poly1305 under T-Head's QEMU.) The `Macstate` forms ([`macstate_module`]) are
//! the same kernel with its Poly1305 on golang.org/x/crypto's internal/poly1305 `macState`
//! (`h [3]uint64; r [2]uint64; s [2]uint64`) instead of the context: as `poly1305`'s
//! macState blocks function, s_i = r_i + (r_i >> 2) comes from r and bytes 40..56
//! (x/crypto's s) are never touched; h is stored as the context stores it, which is
//! macState's h. `kgen go-patches` puts them behind x/crypto's chacha20poly1305 seal/open
//! (the whole blocks of each call; the Poly1305 key, AAD, tail and lengths through chacha20
//! and poly1305); `tests/chacha20_poly1305.rs` checks them in kgen-sim against RustCrypto,
//! `tests/go_patches.rs` with x/crypto's own tests under T-Head's QEMU `c906fdv`.
//! `seal`: out = in ^ keystream, then Poly1305 absorbs out; `open`: Poly1305 absorbs in,
//! then out = in ^ keystream. The bytes processed are `len` rounded down to a multiple of
//! 64 (whole ChaCha20 blocks); what is left over is the caller's, with
//! `ChaCha20_ctr32` and `poly1305_blocks`. `key` is the 256-bit key as eight little-endian
//! words; `counter` as for `ChaCha20_ctr32`: `counter[0]` the 32-bit block counter of the
//! first block (it wraps without carrying into `counter[1]`, and is not written back),
//! `counter[1..3]` the nonce. `poly` is the 192-byte, 8-byte aligned context that the
//! `poly1305_init` of `poly1305` variant `32-c906` filled (any state after its
//! `poly1305_blocks`); the kernel does to it what `poly1305_blocks(poly, ct, len, 1)`
//! would, ct the ciphertext (`out` for seal, `in` for open), so the AEAD's padding, AAD and
//! length block go through that variant's functions before and after (see
//! `tests/chacha20_poly1305.rs`, which builds the RFC 8439 AEAD so). `out == in` is allowed;
//! otherwise the buffers must not overlap. Any alignment (the C906 does misaligned scalar
//! accesses in hardware; the vector unit touches only the frame). Extensions: RV64GC,
//! XTheadVector (VLEN 128), XTheadBb (`th.srriw`, `th.extu`), XTheadBa (`th.addsl`),
//! XTheadMac (`th.mula`). The caller checks that XTheadVector is enabled (Linux: hwprobe
//! key 11, bit 0) and otherwise calls the ChaCha20 and Poly1305 functions in turn.
//!
//! Design. The scalar pipeline of the C906 issues one instruction per cycle while the
//! vector unit works on its own; so ChaCha20 runs in the vector unit only (four blocks in
//! four e32 lanes, LMUL 1, as `chacha20` `c906`'s lanes) and the scalar core does the rest:
//! it XORs the keystream into the data, stores the result and absorbs the ciphertext into
//! Poly1305 (32-c906's base-2^32 block, constant time). The keystream of a group of four
//! blocks goes to a 256-byte buffer in the frame (word i of the four lanes at 16·i, one
//! unit-stride store per word); while the vector unit computes the next group's keystream
//! into registers, the scalar core consumes the buffer: the two streams are independent
//! but for that buffer, and the region that merges them (`f.merge_with`, by modeled issue
//! time) places the vector stores of the new keystream after the scalar loads of the old
//! one (`MemOrder::BReadsFirst`). The first group's keystream is computed alone, the last
//! group's XOR and Poly1305 run alone; every group in between overlaps completely.
//! The first column round of a block does not depend on the counter in three of its four
//! columns, so it is computed once per call on the scalar core and the lanes start from
//! its result (48 of a group's 1280 vector instructions saved); column 0 runs in the lanes,
//! interleaved with the splats of the other words.
//!
//! The bound is issue slots: the C906 issues one instruction per cycle, vector
//! instructions included (its vector loads, stores and vsetvli take two slots), and a group
//! of four blocks is 2268 instructions in the loop (8.86 per byte: 1282 vector ones, about
//! 900 for the XOR and Poly1305, the rest state loads, addresses and the loop). The model
//! runs a steady-state group in 2616 cycles (10.22 c/B at 16 KiB), 87% of the slots
//! filled. A fifth block on the scalar
//! core, as `chacha20` `c906` does, would add 1064 instructions for 64 bytes (16.6 per
//! byte), so it could only be slower here.
//!
//! Linux: lib/crypto's ChaCha20-Poly1305 (`chacha20poly1305_encrypt` and friends) calls
//! `chacha20_crypt` and `poly1305_update` in turn and has no stitched architecture hook, so
//! this kernel has no Linux form; the Linux builds of `chacha20` and `poly1305` are the
//! pieces that fit there.
//!
//! Constant time: no branch and no address depends on the key, the data or the Poly1305
//! state (the loop runs on the length); every scalar multiply has operands below 2^32 (the
//! C906's 3-cycle path, as `32-c906`). Secrets in the frame (the block state, the first
//! column round, the keystream buffer), vector registers and caller-saved registers are
//! wiped at return.
//!
//! Performance (calibrated C906 cost model, cycles per byte; regenerate with
//! `kgen bench chacha20-poly1305 --markdown`; sizes are whole blocks, 1400 measured as
//! 1408). In series on the same data, `chacha20` `c906` then `poly1305` `32-c906` take
//! 12.08 c/B at 16 KiB and 12.61 at 1408 B (`tests/chacha20_poly1305.rs` prints both):
//!
//! | kernel | variant | function | 64 B | 256 B | 1024 B | 1408 B | 4096 B | 16384 B | instr/B |
//! |---|---|---|---:|---:|---:|---:|---:|---:|---:|
//! | chacha20-poly1305 | c906 | chacha20_poly1305_seal | 23.16 | 15.22 | 11.42 | 11.66 | 10.46 | 10.22 | 8.87 |
//! | chacha20-poly1305 | c906 | chacha20_poly1305_open | 23.16 | 15.22 | 11.42 | 11.66 | 10.46 | 10.22 | 8.87 |
//!
//! One or two blocks run on the scalar core alone (23.16 c/B at 64 B against 22.19 in
//! series); with one group (256 B) nothing overlaps (15.22 against 15.08).

use crate::chacha::{self, VRegs, COLUMNS, DIAGONALS, SIGMA};
use crate::poly1305::{self, Layout, Pad, P32};
use crate::{Kernel, Variant};
use kgen_dsl::kernel::hooks::{Hook, Openssl, OpensslSlot, XCrypto, XCryptoSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, Bench, Harness, Measured};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::isa::VDialect;
use kgen_dsl::func::MemOrder;
use kgen_dsl::target::Target;
use kgen_dsl::{Abi, BuildError, Func, Module, Opnd, Reg, Slot};
use kgen_macros::kasm;

pub const KERNEL: Kernel = Kernel {
    benches: &[
        Bench { abi: Abi::Psabi, module: None, drive: bench },
        Bench { abi: Abi::Go, module: None, drive: bench },
        Bench { abi: Abi::Go, module: Some(macstate_companion), drive: bench_macstate },
    ],
    kat: Some(kat),
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::ChaCha20Poly1305, variants: &["c906"], entries: &[&SEAL, &OPEN] }),
        Hook::XCrypto(XCrypto { slot: XCryptoSlot::ChaCha20Poly1305, variants: &["c906"], module: Some(macstate_companion), entries: &[&MACSTATE_SEAL, &MACSTATE_OPEN] }),
    ],
    ..Kernel::new(
        "chacha20-poly1305",
        "ChaCha20-Poly1305 seal/open of whole blocks: ChaCha20 in XTheadVector lanes merged with scalar base-2^32 Poly1305 (OpenSSL-style, Go)",
        &[Variant { name: "c906", target: "c906", abis: &[Abi::Psabi, Abi::Go], build, vlens: &[] }],
        ENTRIES,
    )
};

const PARAMS: &[Param] = &[
    Param::ptr("out", Elem::U8, Out, false),
    Param::ptr("in", Elem::U8, In, true),
    Param::val("len", Ty::Size, false),
    Param::ptr("key", Elem::U32, In, true),
    Param::ptr("counter", Elem::U32, In, false),
    Param::ptr("poly", Elem::Void, InOut, true).aligned(8),
];

/// `void chacha20_poly1305_seal(unsigned char *out, const unsigned char *in, size_t len,
/// const unsigned int key[8], const unsigned int counter[4], void *poly)` (and Go).
pub const SEAL: Entry = Entry {
    kernel: "chacha20-poly1305",
    prefix: "chacha20_poly1305_seal_",
    suffix: "",
    alias: Some("chacha20_poly1305_seal"),
    abis: &[Abi::Psabi, Abi::Go],
    params: PARAMS,
    ret: Ret::Void,
    summary: "ChaCha20 keystream XOR of len & -64 bytes, then Poly1305 blocks (padbit 1) of the output",
};

/// `void chacha20_poly1305_open(...)`: the same arguments; Poly1305 absorbs `in`.
pub const OPEN: Entry = Entry {
    prefix: "chacha20_poly1305_open_",
    alias: Some("chacha20_poly1305_open"),
    summary: "Poly1305 blocks (padbit 1) of len & -64 bytes of the input, and their ChaCha20 keystream XOR",
    ..SEAL
};

const MACSTATE_PARAMS: &[Param] = &[
    Param::ptr("out", Elem::U8, Out, false),
    Param::ptr("in", Elem::U8, In, true),
    Param::val("len", Ty::Size, false),
    Param::ptr("key", Elem::U32, In, true),
    Param::ptr("counter", Elem::U32, In, false),
    Param::ptr("state", Elem::U64, InOut, true).aligned(8),
];

/// [`SEAL`] on golang.org/x/crypto's internal/poly1305 `macState` (v0.25.0: `h [3]uint64;
/// r [2]uint64; s [2]uint64`, 56 bytes) instead of the context, Go only:
/// `func chacha20Poly1305SealMacstate<V>(out *byte, in *byte, len uint64, key *uint32,
/// counter *uint32, state *uint64)`, `state` the macState's address. As `poly1305`'s
/// [`poly1305::MACSTATE_BLOCKS`]: h and r are the context's bytes already, s_i = r_i +
/// (r_i >> 2) is computed from r (macState has the key's s at 40..56, never touched), and
/// an h that comes in with `h[2]` up to 7 is inside the bounds (`h[2] <= 4` on the way out).
pub const MACSTATE_SEAL: Entry = Entry {
    kernel: "chacha20-poly1305",
    prefix: "chacha20_poly1305_seal_macstate_",
    suffix: "",
    alias: None,
    abis: &[Abi::Go],
    params: MACSTATE_PARAMS,
    ret: Ret::Void,
    summary: "ChaCha20 keystream XOR of len & -64 bytes, then Poly1305 blocks (padbit 1) of the output into x/crypto's macState",
};

/// [`OPEN`] on x/crypto's `macState`, Go only (as [`MACSTATE_SEAL`]).
pub const MACSTATE_OPEN: Entry = Entry {
    prefix: "chacha20_poly1305_open_macstate_",
    summary: "Poly1305 blocks (padbit 1) of len & -64 bytes of the input into x/crypto's macState, and their ChaCha20 keystream XOR",
    ..MACSTATE_SEAL
};

/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&SEAL, &OPEN, &MACSTATE_SEAL, &MACSTATE_OPEN];

/// Blocks per group (vector lanes).
const LANES: usize = 4;
/// Inputs of fewer blocks than this run on the scalar core alone.
const SHORT: usize = 3;
const _: () = assert!(SHORT == 3, "the short path is written for one or two blocks");
/// Byte offsets in the `state` slot: the block state (word 12, the counter, unused), and
/// each word after the first column round (columns 1..3 only).
const ORIG: i64 = 0;
const PRE: i64 = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Seal,
    Open,
}

/// Byte `off` of a stack slot, as an instruction operand.
#[derive(Clone, Copy)]
struct At(Slot, i64);

impl From<At> for Opnd {
    fn from(s: At) -> Opnd {
        Opnd::Stack { slot: s.0, off: s.1 }
    }
}

/// What both streams need.
struct Ctx {
    ci: chacha::Isa,
    d: VDialect,
    state: Slot,
    ks: Slot,
    inp: Reg,
    out: Reg,
    ctr: Reg,
    dir: Dir,
}

/// The state slot: the block state's words (sigma, key, nonce) and, for columns 1..3, the
/// words after the first column round (they do not depend on the counter).
fn setup_state(f: &mut Func, c: &Ctx, key: Reg, counter: Reg) {
    let x = f.xregs::<4>("w");
    let t = f.xreg("wt");
    let st = c.state;
    for j in 0..4usize {
        f.comment(format!("column {j}: words {j}, {}, {}, {} (sigma, key, key, nonce)", 4 + j, 8 + j, 12 + j));
        let [a, b, cc, d] = x;
        let (kb, kc) = (4 * j as i64, 16 + 4 * j as i64);
        f.li(a, SIGMA[j] as i32 as i64);
        kasm!(f, lw {b}, {kb}({key}); lw {cc}, {kc}({key}););
        let mut words = vec![(a, j), (b, 4 + j), (cc, 8 + j)];
        if j > 0 {
            let off = 4 * j as i64;
            kasm!(f, lw {d}, {off}({counter}););
            words.push((d, 12 + j));
        }
        for &(r, i) in &words {
            let o = At(st, ORIG + 4 * i as i64);
            kasm!(f, sw {r}, {o}(sp););
        }
        if j > 0 {
            chacha::scalar_quarter_round(f, c.ci, x, t);
            for &(r, i) in &words {
                let o = At(st, PRE + 4 * i as i64);
                kasm!(f, sw {r}, {o}(sp););
            }
        }
    }
}

/// The keystream of one group into the `ks` slot: lane k is block ctr + k (vl lanes).
fn vector_group(f: &mut Func, c: &Ctx, v: &VRegs, t: [Reg; 2], p: Reg) {
    let (st, ctr, vid) = (c.state, c.ctr, v.vid);
    f.comment("lanes: words 0, 4, 8 splat, word 12 = ctr + lane; column 0's quarter round, the other words splat from the first column round");
    for (k, i) in [0usize, 4, 8].into_iter().enumerate() {
        let (vi, tk, o) = (v.v[i], t[k % 2], At(st, ORIG + 4 * i as i64));
        kasm!(f, lw {tk}, {o}(sp); vmv.v.x {vi}, {tk};);
    }
    let v12 = v.v[12];
    kasm!(f, vadd.vx {v12}, {vid}, {ctr};);
    let splats = |f: &mut Func| {
        for (k, i) in (0..16).filter(|i| i % 4 != 0).enumerate() {
            let (vi, tk, o) = (v.v[i], t[k % 2], At(st, PRE + 4 * i as i64));
            kasm!(f, lw {tk}, {o}(sp); vmv.v.x {vi}, {tk};);
        }
    };
    f.interleave(|f| chacha::vector_quarter_rounds(f, c.ci, v, &COLUMNS[..1]), splats);
    f.comment("the diagonal round, then nine double rounds");
    chacha::vector_quarter_rounds(f, c.ci, v, &DIAGONALS);
    for _ in 1..10 {
        chacha::vector_quarter_rounds(f, c.ci, v, &COLUMNS);
        chacha::vector_quarter_rounds(f, c.ci, v, &DIAGONALS);
    }
    f.comment("feed-forward: x_i += state word i (word 12: + lane + ctr)");
    for i in 0..16usize {
        let vi = v.v[i];
        if i == 12 {
            kasm!(f, vadd.vv {vi}, {vi}, {vid}; vadd.vx {vi}, {vi}, {ctr};);
        } else {
            let (tk, o) = (t[i % 2], At(st, ORIG + 4 * i as i64));
            kasm!(f, lw {tk}, {o}(sp); vadd.vx {vi}, {vi}, {tk};);
        }
    }
    f.comment("ks[16i..16i+16] = word i of the lanes");
    for i in 0..16usize {
        let (vi, o) = (v.v[i], At(c.ks, 16 * i as i64));
        kasm!(f, addi {p}, sp, {o};);
        chacha::store_row(f, c.d, vi, p);
    }
}

/// Block `lane` of the group in the keystream buffer, at `in`/`out` + 64·lane: out = in ^
/// keystream, and its four Poly1305 blocks (of out for seal, of in for open).
fn scalar_block(f: &mut Func, c: &Ctx, p: &P32, lane: usize) {
    let (inp, out) = (c.inp, c.out);
    for b in 0..4usize {
        let base = 64 * lane as i64 + 16 * b as i64;
        f.comment(format!("bytes {base}..{}: out = in ^ keystream; Poly1305 of the {}", base + 16, if c.dir == Dir::Seal { "output" } else { "input" }));
        // h holds nothing live between blocks: it carries the keystream words here.
        for w in 0..4usize {
            let (m, o) = (p.m[w], base + 4 * w as i64);
            kasm!(f, lwu {m}, {o}({inp}););
        }
        for w in 0..4usize {
            let (k, o) = (p.h[w], At(c.ks, 16 * (4 * b + w) as i64 + 4 * lane as i64));
            kasm!(f, lwu {k}, {o}(sp););
        }
        for w in 0..4usize {
            let (m, k, o) = (p.m[w], p.h[w], base + 4 * w as i64);
            match c.dir {
                // m = in ^ ks: the ciphertext is hashed.
                Dir::Seal => kasm!(f, xor {m}, {m}, {k}; sw {m}, {o}({out});),
                // m = in stays: the ciphertext is hashed.
                Dir::Open => kasm!(f, xor {k}, {k}, {m}; sw {k}, {o}({out});),
            }
        }
        f.comment("d0 += 5·(q >> 2); e = ((q & 3) + 1) << 32; h = d + m + e·2^96 in limbs; (d, q) = h·r");
        poly1305::fold32(f, p, p.q, p.d[0], Pad::One);
        poly1305::carry32(f, p, p.d, Some(p.m), p.h);
        poly1305::multiply32(f, p);
    }
}

/// Block `lane` of a group (counter ctr + lane) on the scalar core, from the first column
/// round in the frame, into the keystream buffer (short inputs, where lanes would be
/// mostly idle).
fn scalar_keystream(f: &mut Func, c: &Ctx, x: &[Reg; 16], t: Reg, lane: usize) {
    let (st, ctr) = (c.state, c.ctr);
    f.comment(format!("block {lane} on the scalar core: column 0 from the state, the other words from the first column round"));
    for (i, &xi) in x.iter().enumerate() {
        if i == 12 {
            kasm!(f, addiw {xi}, {ctr}, {lane as i64};);
        } else {
            let o = At(st, if i % 4 == 0 { ORIG } else { PRE } + 4 * i as i64);
            kasm!(f, lw {xi}, {o}(sp););
        }
    }
    let [a, b, cc, d] = COLUMNS[0];
    chacha::scalar_quarter_round(f, c.ci, [x[a], x[b], x[cc], x[d]], t);
    for k in 0..10 {
        let sets: &[[[usize; 4]; 4]] = if k == 0 { &[DIAGONALS] } else { &[COLUMNS, DIAGONALS] };
        for set in sets {
            for [a, b, cc, d] in *set {
                chacha::scalar_quarter_round(f, c.ci, [x[a], x[b], x[cc], x[d]], t);
            }
        }
    }
    f.comment("feed-forward; ks[16i + 4·lane] = word i");
    for (i, &xi) in x.iter().enumerate() {
        if i == 12 {
            kasm!(f, addw {xi}, {xi}, {ctr}; addiw {xi}, {xi}, {lane as i64};);
        } else {
            let o = At(st, ORIG + 4 * i as i64);
            kasm!(f, lw {t}, {o}(sp); addw {xi}, {xi}, {t};);
        }
        let o = At(c.ks, 16 * i as i64 + 4 * lane as i64);
        kasm!(f, sw {xi}, {o}(sp););
    }
}

/// The XOR and Poly1305 of the `lanes` (1..=max) blocks in the keystream buffer, then h
/// back into the context and the return (`lanes` is not read when max is 1).
fn last_blocks(f: &mut Func, c: &Ctx, p: &P32, lanes: Reg, max: usize, ctx: Reg) {
    f.scope(|f| {
        for lane in 0..max {
            scalar_block(f, c, p, lane);
            if lane + 1 < max {
                kasm!(f, addi {lanes}, {lanes}, -1; beqz {lanes}, done;);
            }
        }
        kasm!(f, done:);
    });
    f.comment("h back into the context");
    poly1305::store_state32(f, p, ctx);
    f.ret();
}

/// lanes = min(4, left / 64); vl = lanes.
fn set_lanes(f: &mut Func, lanes: Reg, left: Reg, t: Reg) {
    f.scope(|f| {
        kasm!(f,
            srli {lanes}, {left}, 6;
            addi {t}, zero, 4;
            bltu {lanes}, {t}, fits;
            addi {lanes}, zero, 4;
        fits:
        );
        chacha::set_vl(f, lanes);
    });
}

fn aead_fn(dir: Dir, variant: &str, t: &Target, abi: Abi, layout: Layout) -> Func {
    let e = match (dir, layout) {
        (Dir::Seal, Layout::Context) => &SEAL,
        (Dir::Open, Layout::Context) => &OPEN,
        (Dir::Seal, Layout::MacState) => &MACSTATE_SEAL,
        (Dir::Open, Layout::MacState) => &MACSTATE_OPEN,
    };
    let mut f = Func::entry(e, variant, t, abi);
    let [out, inp, len, key, counter, ctx] = f.params();
    let d = t.vdialect().unwrap_or(VDialect::Thead);
    let c = Ctx {
        ci: chacha::Isa::of(t),
        d,
        state: f.slot("state", 128, 16, true),
        ks: f.slot("keystream", 64 * LANES as u32, 16, true),
        inp,
        out,
        ctr: f.xreg("ctr"),
        dir,
    };
    let (lanes, left, t0) = (f.xreg("lanes"), f.xreg("left"), f.xreg("t"));
    for r in [lanes, left, t0, c.ctr] {
        f.public(r);
    }
    f.comment("whole blocks only: len & -64 bytes");
    kasm!(f,
        andi {len}, {len}, -64;
        beqz {len}, nothing;
    );
    let ctr = c.ctr;
    kasm!(f, lw {ctr}, 0({counter}););
    setup_state(&mut f, &c, key, counter);
    f.comment("one or two blocks: on the scalar core (lanes would idle), with their own exit (no vector registers to wipe)");
    kasm!(f,
        srli {lanes}, {len}, 6;
        addi {t0}, zero, {SHORT as i64};
        bltu {lanes}, {t0}, short;
    );
    f.comment("Poly1305: r, s and the loop state (d, q) = h from the context");
    let pi = poly1305::Isa::of(t);
    let p = P32::new(&mut f, pi);
    poly1305::load_state32_as(&mut f, &p, ctx, layout);
    let v = VRegs { v: f.vregs::<16>("v", 1), t: f.vregs::<4>("vt", 1), k: f.vregs::<4>("k", 1), vid: f.vreg("vid", 1) };
    f.comment("vector set-up at vl = 4: rotation multipliers 2^16, 2^12, 2^8, 2^7; lane indices");
    kasm!(f, addi {lanes}, zero, 4;);
    chacha::set_vl(&mut f, lanes);
    for (j, sh) in [16i64, 12, 8, 7].into_iter().enumerate() {
        let kj = v.k[j];
        f.li(t0, 1 << sh);
        kasm!(f, vmv.v.x {kj}, {t0};);
    }
    let vid = v.vid;
    kasm!(f, vid.v {vid};);
    // vt carry state words (secret); vp addresses the keystream buffer.
    let vt = [f.xreg("vt0"), f.xreg("vt1")];
    let vp = f.xreg("vp");
    f.public(vp);
    f.comment("the first group's keystream, alone");
    set_lanes(&mut f, lanes, len, t0);
    vector_group(&mut f, &c, &v, vt, vp);
    kasm!(f,
        slli {t0}, {lanes}, 6;
        sub {left}, {len}, {t0};
        addw {ctr}, {ctr}, {lanes};
    );
    f.scope(|f| {
        kasm!(f,
        group:
            beqz {left}, last;
        );
        set_lanes(f, lanes, left, t0);
        f.comment("the next group's keystream in the lanes, merged with the XOR and Poly1305 of the buffered group (the buffer is read before it is rewritten)");
        f.merge_with([4, 4], MemOrder::BReadsFirst, |f| vector_group(f, &c, &v, vt, vp), |f| {
            for lane in 0..LANES {
                scalar_block(f, &c, &p, lane);
            }
        });
        kasm!(f,
            slli {t0}, {lanes}, 6;
            sub {left}, {left}, {t0};
            addw {ctr}, {ctr}, {lanes};
            addi {inp}, {inp}, 256;
            addi {out}, {out}, 256;
            j group;
        last:
        );
        f.comment("the last group: lanes blocks in the buffer");
        last_blocks(f, &c, &p, lanes, LANES, ctx);
    });
    kasm!(f, short:);
    let x = f.xregs::<16>("x");
    let xt = f.xreg("xt");
    // Each count has its own tail (the checks see every keystream word read written).
    // The Poly1305 state in registers of its own, loaded after the keystream (no value is
    // live across both the vector path and this one).
    let q = P32::new(&mut f, pi);
    scalar_keystream(&mut f, &c, &x, xt, 0);
    kasm!(f, addi {t0}, zero, 1; beq {lanes}, {t0}, one_block;);
    scalar_keystream(&mut f, &c, &x, xt, 1);
    poly1305::load_state32_as(&mut f, &q, ctx, layout);
    last_blocks(&mut f, &c, &q, lanes, 2, ctx);
    kasm!(f, one_block:);
    poly1305::load_state32_as(&mut f, &q, ctx, layout);
    last_blocks(&mut f, &c, &q, lanes, 1, ctx);
    kasm!(f, nothing:);
    f.ret();
    f
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let mut m = Module::new("chacha20-poly1305", variant, t, abi);
    m.notes = vec![
        "ChaCha20-Poly1305 (RFC 8439) bulk seal/open of whole 64-byte blocks; poly is poly1305 32-c906's".into(),
        "context. Constant time: no secret-dependent branches or addresses; multiplies of values < 2^32.".into(),
    ];
    m.add(aead_fn(Dir::Seal, variant, t, abi, Layout::Context), true)?;
    m.add(aead_fn(Dir::Open, variant, t, abi, Layout::Context), true)?;
    Ok(m)
}

/// The Go module for golang.org/x/crypto's chacha20poly1305 (`kgen go-patches` writes it
/// into x/crypto's `chacha20poly1305_riscv64.s`): [`MACSTATE_SEAL`] and [`MACSTATE_OPEN`],
/// whose Poly1305 continues internal/poly1305's `macState`.
pub fn macstate_module(variant: &str) -> Result<Module, BuildError> {
    let v = KERNEL.variants.iter().find(|v| v.name == variant).ok_or_else(|| BuildError {
        func: MACSTATE_SEAL.prefix.to_string(),
        inst: String::new(),
        index: None,
        loc: None,
        reason: format!("chacha20-poly1305 has no variant `{variant}` (c906)"),
    })?;
    let t = v.target();
    let mut m = Module::new("chacha20-poly1305", variant, &t, Abi::Go);
    m.notes = vec![
        "ChaCha20-Poly1305 (RFC 8439) bulk seal/open of whole 64-byte blocks; Poly1305 continues".into(),
        "golang.org/x/crypto's macState (h [3]uint64, r [2]uint64, s [2]uint64; s_i computed from r,".into(),
        "bytes 40..56 not touched). Constant time: no secret-dependent branches or addresses;".into(),
        "multiplies of values < 2^32.".into(),
    ];
    m.add(aead_fn(Dir::Seal, variant, &t, Abi::Go, Layout::MacState), true)?;
    m.add(aead_fn(Dir::Open, variant, &t, Abi::Go, Layout::MacState), true)?;
    Ok(m)
}

// ---- what the commands need: benchmark, known answers, hooks ---------------------------------

/// The Go module of [`macstate_module`], as a benchmark's or hook's companion module.
fn macstate_companion(variant: &str) -> Result<Option<Module>, BuildError> {
    macstate_module(variant).map(Some)
}

const BENCH_KEY: [u8; 32] = [0x42; 32];
const BENCH_COUNTER: [u8; 16] = [1, 0, 0, 0, 9, 9, 9, 9, 7, 7, 7, 7, 5, 5, 5, 5];

/// seal and open of `entries` over the size rounded up to whole 64-byte blocks (what they
/// process), in place, counter 1, on the Poly1305 state `state` (the kernel is constant
/// time: the values do not change the cost).
fn bench_on(h: &mut dyn Harness, sizes: &[usize], entries: [&Entry; 2], state: &[u8]) -> Result<Vec<Measured>, String> {
    let key = h.buffer(&BENCH_KEY, 0, false);
    let ctr = h.buffer(&BENCH_COUNTER, 0, false);
    let st = h.buffer(state, 0, true);
    let mut rows: Vec<Measured> = Vec::new();
    for entry in entries {
        let (name, f) = h.entry(entry)?;
        for &n in sizes {
            let n = n.max(64).next_multiple_of(64);
            if rows.iter().any(|r| r.what == name && r.bytes == n) {
                continue; // a smaller size rounded up to the same blocks
            }
            let buf = h.buffer(&vec![0x5a; n], 0, true);
            let m = measured(h, |h| h.call(f, &[buf, buf, n as u64, key, ctr, st]))?;
            rows.push(figure(&name, n, m));
        }
    }
    Ok(rows)
}

/// `kgen bench chacha20-poly1305`: seal and open on the context `poly1305 32-c906`'s init
/// lays out for a fixed key.
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    bench_on(h, sizes, [&SEAL, &OPEN], &poly1305::context_for(&[0x3c; 16]))
}

/// The Go forms on x/crypto's macState (h = 0, r clamped from a 0x3c key).
fn bench_macstate(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    bench_on(h, sizes, [&MACSTATE_SEAL, &MACSTATE_OPEN], &poly1305::macstate(0x3c3c_3c3c_3c3c_3c3c))
}

/// RFC 8439 2.8.2: key 80..9f, nonce 07000000 40414243 44454647, counter 1; the plaintext
/// is [`chacha::RFC_PT`]. The first 64 bytes of its ciphertext.
pub const RFC_NONCE: [u8; 12] = [7, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47];
pub const RFC_CT64: &str = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36";

/// Known answers for the bulk seal/open: RFC 8439 2.8.2's key, nonce and plaintext at
/// counter 1, the first whole block against the RFC's ciphertext; 128-, 512- and 1100-byte
/// buffers (the scalar path, the lanes merged with Poly1305, a last partial group) against
/// [`chacha::chacha20_xor`]; the bytes past the whole blocks untouched. The Poly1305 context
/// starts with r = 1 (h = 0), so h ends as [`poly1305::h_for_r1`] of the ciphertext; the
/// RFC's tag with the real one-time key needs the `poly1305` functions around the kernel,
/// which tests/chacha20_poly1305.rs checks.
fn kat(v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let key: [u8; 32] = std::array::from_fn(|i| 0x80 + i as u8);
    let kb = p.buf("key", key.to_vec(), 0);
    let mut counter = 1u32.to_le_bytes().to_vec();
    counter.extend_from_slice(&RFC_NONCE);
    let cb = p.buf("counter", counter, 0);
    // The context of poly1305_init for r = 1: h = 0, r = (1, 0, 0, 0), s1..s3 = 0.
    let mut ctx = vec![0u8; poly1305::CTX_BYTES];
    ctx[poly1305::CTX_R as usize] = 1;
    for len in [chacha::RFC_PT.len(), 128, 512, 1100] {
        let mut data = chacha::RFC_PT.to_vec();
        data.resize(len, 0);
        let whole = len & !63;
        let ct = chacha::chacha20_xor(&key, 1, &RFC_NONCE, &data);
        let h = poly1305::h_for_r1(&ct[..whole]);
        for (seal, entry, what, from, to) in [(true, &SEAL, "seal", &data, &ct), (false, &OPEN, "open", &ct, &data)] {
            let inp = p.buf("in", from.clone(), 1);
            let out = p.buf("out", vec![0; len], 3);
            let c = p.buf("poly", ctx.clone(), 0);
            p.call(entry, v, vec![Buf(out, 0), Buf(inp, 0), Int(len as u64), Buf(kb, 0), Buf(cb, 0), Buf(c, 0)], None);
            if seal {
                p.expect(format!("RFC 8439 2.8.2 ciphertext, block 1 ({what}, {len}-byte buffer)"), out, 0, unhex(RFC_CT64));
            }
            p.expect(format!("{what} of {len} bytes: the {whole} whole-block bytes (block function)"), out, 0, to[..whole].to_vec());
            if len > whole {
                p.expect(format!("{what} of {len} bytes: the {} bytes after them untouched", len - whole), out, whole, vec![0; len - whole]);
            }
            p.expect(format!("{what} of {len} bytes: Poly1305 h of the ciphertext (r = 1)"), c, poly1305::CTX_H as usize, h.to_vec());
        }
    }
    Ok(p)
}
