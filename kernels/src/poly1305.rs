//! Poly1305 (RFC 8439): the one-time authenticator over 2^130 - 5, as CRYPTOGAMS-style
//! init / blocks / emit, with a base-2^64 path and a constant-time base-2^32 path.
//!
//! ```text
//! OpenSSL: int  poly1305_init(void *ctx, const unsigned char key[16], void *func[2]);
//!          void poly1305_blocks(void *ctx, const unsigned char *inp, size_t len, unsigned int padbit);
//!          void poly1305_emit(void *ctx, unsigned char mac[16], const unsigned int nonce[4]);
//! Linux:   void poly1305_block_init_<v>(void *state, const u8 raw_key[16]);
//!          void poly1305_blocks_<v>(void *state, const u8 *src, u32 len, u32 hibit);
//!          void poly1305_emit_<v>(const void *state, u8 digest[16], const u32 nonce[4]);
//! Go:      func poly1305Init<V>(ctx *byte, key *byte)
//!          func poly1305Blocks<V>(ctx *byte, inp *byte, len uint64, padbit uint32)
//!          func poly1305Emit<V>(ctx *byte, mac *byte, nonce *uint32)
//! x/crypto: func poly1305BlocksMacstate<V>(state *macState, inp *byte, len uint64, padbit uint32)
//! ```
//! The last (base-2^32 variants, Go only, [`macstate_module`]) is blocks on
//! golang.org/x/crypto's `macState` for `kgen go-patches` (see [`MACSTATE_BLOCKS`]).
//! `<v>` is the variant with `-` turned into `_` (`32_c906`), `<V>` its Go spelling
//! (`32C906`). The OpenSSL functions are named `poly1305_init_<v>`, `poly1305_blocks_<v>`,
//! `poly1305_emit_<v>` and also exported under the plain names above. `poly1305_init`
//! fills `func[0]`/`func[1]` with this variant's blocks and emit and returns 1, as
//! CRYPTOGAMS does (0, leaving `func` alone, when `key` or `func` is NULL: OpenSSL's
//! `Poly1305_Init` then uses the plain `poly1305_blocks`/`poly1305_emit`). The Go build's
//! init has neither the `func` argument (a `void **` has no Go type) nor the result;
//! otherwise the Go functions are the OpenSSL ones. In Go the
//! context is any 8-byte aligned 192-byte buffer, e.g. a `[24]uint64`.
//!
//! Preconditions. `ctx` is 8-byte aligned and 192 bytes (OpenSSL's `double opaque[24]`),
//! set up by `init` before `blocks` or `emit`; it is opaque to C. `key` (16 bytes: r) and
//! `mac` may have any alignment (byte loads and stores). `init` with `key == NULL` only
//! sets h = 0. `blocks` hashes `len` rounded down to a multiple of 16 and adds `padbit`
//! (any non-zero value counts as 1) at 2^128 of each block; the caller pads a last partial
//! block (data, 0x01, zeros) and passes padbit 0 for it. `inp` may have any alignment:
//! input that is 8-byte aligned (64-bit path) or 4-byte aligned (32-bit path) is read with
//! plain loads; other input with aligned 64-bit loads combined by shifts, chosen at run
//! time, so no misaligned access is ever made. `emit` reduces h mod 2^130 - 5, adds
//! `nonce` (the key's s, four 4-byte-aligned words) mod 2^128, writes the 16-byte
//! little-endian tag and does not modify `ctx`.
//!
//! Variants: `64-c906`, `64-rv64gc` (base 2^64 with `mul`/`mulhu`, as CRYPTOGAMS does; the
//! c906 form fuses the two products by h2 with `th.mula` and multiplies by 5 with
//! `th.addsl`); `32-c906`, `32-rv64gc` (base 2^32: every multiply has both operands below
//! 2^32; the c906 form fuses multiply and add with `th.mula`, interleaving the four
//! accumulations so dependent `th.mula` are four apart, and zero-extends with `th.extu`).
//! Extensions: c906 variants RV64GC + XTheadBb (`th.extu`), XTheadBa (`th.addsl`),
//! XTheadMac (`th.mula`); rv64gc variants RV64GC only.
//!
//! Context layout (bytes; one layout for every variant, so a context may move between
//! them):
//!
//! | offset | 32-bit path | 64-bit path |
//! |---|---|---|
//! | 0, 4, 8, 12 | h0, h1, h2, h3 (u32) | h0 (u64) at 0, h1 (u64) at 8 |
//! | 16 | h4 (u32; the word at 20 is 0) | h2 (u64) |
//! | 24, 28, 32, 36 | r0, r1, r2, r3 (u32, clamped) | r0 (u64) at 24, r1 (u64) at 32 |
//! | 40, 44 | s2, s3 (u32, s_i = r_i + (r_i >> 2)) | s1 = r1 + (r1 >> 2) (u64) |
//! | 48 | s1 (u32; the word at 52 is 0) | – |
//!
//! The columns are the same bytes: the u64 limbs are pairs of u32 limbs, and because r2 and
//! r3 are multiples of 4, the 64-bit s1 = 5·(r2 + r3·2^32)/4 = s2 + s3·2^32. After every
//! call the stored h has h4 (the 64-bit h2) <= 4: h < 2^131 - 10, which both paths and emit
//! accept.
//!
//! Constant time: no branch and no address depends on the key, h or the message (the loop
//! runs on the length, the load path on the pointer's alignment); emit's final reduction
//! selects with a mask. The 32-bit path multiplies only values whose upper 32 bits are
//! zero by construction (loaded with `lwu`, shifted right by 32, or zero-extended by
//! `th.extu`/shifts), so the C906's multiplier always takes its 3-cycle path and the time
//! does not depend on the data. The 64-bit path's `mul`/`mulhu` have operands of up to 64
//! bits: on the C906 each takes the 3- or 6-cycle path depending on the upper 32 bits of h
//! and r, so its time depends on the key and the message there (declared to the
//! constant-time lint as a leak); use the 32-bit variants on the C906. Caller-saved
//! registers that held secrets are wiped on return; nothing is spilled.
//!
//! Performance (C906 cost model, `kgen bench poly1305`, `--abi go` for the Go forms, and the cost report of
//! `tests/poly1305.rs`): see README.md's table.

use crate::{Kernel, Variant};
use kgen_dsl::kernel::hooks::{Hook, Linux, LinuxSlot, Openssl, OpensslSlot, XCrypto, XCryptoSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, rtl, Bench, Harness, Measured};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::func::LeakKind;
use kgen_dsl::target::{Multiplier, Target};
use kgen_dsl::{Abi, BuildError, Ext, Func, Label, Module, Reg};
use kgen_macros::kasm;

pub const KERNEL: Kernel = Kernel {
    benches: &[
        Bench { abi: Abi::Psabi, module: None, drive: bench },
        Bench { abi: Abi::Go, module: None, drive: bench },
        Bench { abi: Abi::Go, module: Some(macstate_companion), drive: bench_macstate },
    ],
    kat: Some(kat),
    rtl: Some(rtl_plan),
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::Poly1305 { compare: Some("64-rv64gc") }, variants: &["32-c906", "32-rv64gc"], entries: &[&INIT, &BLOCKS, &EMIT] }),
        Hook::XCrypto(XCrypto { slot: XCryptoSlot::Poly1305, variants: &["32-c906", "32-rv64gc"], module: Some(macstate_companion), entries: &[&MACSTATE_BLOCKS] }),
        // The Linux state is the context's first 56 bytes (the layout above).
        Hook::Linux(Linux { slot: LinuxSlot::Poly1305 { state_bytes: 56 }, variants: &["32-c906", "32-rv64gc"], entries: &[&LINUX_INIT, &LINUX_BLOCKS, &LINUX_EMIT] }),
    ],
    ..Kernel::new(
        "poly1305",
        "Poly1305 init/blocks/emit: base 2^64 (mul/mulhu) or constant-time base 2^32 (OpenSSL, Linux, Go)",
        &[
            Variant { name: "64-c906", target: "c906", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build: |v, t, abi| build(Radix::R64, v, t, abi), vlens: &[] },
            Variant { name: "64-rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build: |v, t, abi| build(Radix::R64, v, t, abi), vlens: &[] },
            Variant { name: "32-c906", target: "c906", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build: |v, t, abi| build(Radix::R32, v, t, abi), vlens: &[] },
            Variant { name: "32-rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build: |v, t, abi| build(Radix::R32, v, t, abi), vlens: &[] },
        ],
        ENTRIES,
    )
};

/// The context: opaque, 8-byte aligned (OpenSSL's `double opaque[24]`).
const CTX: Param = Param::ptr("ctx", Elem::Void, InOut, true).aligned(8);

/// `int poly1305_init(void *ctx, const unsigned char key[16], void *func[2])` (OpenSSL).
pub const INIT: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_init_",
    suffix: "",
    alias: Some("poly1305_init"),
    abis: &[Abi::Psabi],
    params: &[CTX, Param::ptr("key", Elem::U8, In, true), Param::val("func", Ty::FuncTable, false)],
    ret: Ret::Int,
    summary: "Poly1305 key setup: h = 0, clamped r and s = r + (r >> 2) for both paths; func[] = this variant's blocks, emit",
};
/// `poly1305_init` without the function table and result (Go).
pub const GO_INIT: Entry = Entry {
    abis: &[Abi::Go],
    alias: None,
    params: &[CTX, Param::ptr("key", Elem::U8, In, true)],
    ret: Ret::Void,
    summary: "Poly1305 key setup: h = 0, clamped r and s = r + (r >> 2) for both paths",
    ..INIT
};
/// `void poly1305_blocks(void *ctx, const unsigned char *inp, size_t len, unsigned int
/// padbit)` (OpenSSL, Go).
pub const BLOCKS: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_blocks_",
    suffix: "",
    alias: Some("poly1305_blocks"),
    abis: &[Abi::Psabi, Abi::Go],
    params: &[CTX, Param::ptr("inp", Elem::U8, In, true), Param::val("len", Ty::Size, false), Param::val("padbit", Ty::U32, false)],
    ret: Ret::Void,
    summary: "Poly1305 blocks: h = (h + m + padbit·2^128)·r for each 16-byte block",
};
/// `void poly1305_emit(void *ctx, unsigned char mac[16], const unsigned int nonce[4])`
/// (OpenSSL, Go).
pub const EMIT: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_emit_",
    suffix: "",
    alias: Some("poly1305_emit"),
    abis: &[Abi::Psabi, Abi::Go],
    params: &[
        Param::ptr("ctx", Elem::Void, In, true).aligned(8),
        Param::ptr("mac", Elem::U8, Out, false),
        Param::ptr("nonce", Elem::U32, In, true),
    ],
    ret: Ret::Void,
    summary: "Poly1305 final reduction mod 2^130 - 5, plus nonce mod 2^128, 16-byte tag",
};
const STATE: Param = Param::ptr("state", Elem::Void, InOut, true).aligned(8);
/// `void poly1305_block_init_V(void *state, const u8 raw_key[16])` (Linux).
pub const LINUX_INIT: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_block_init_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[STATE, Param::ptr("raw_key", Elem::U8, In, true)],
    ret: Ret::Void,
    summary: "Poly1305 key setup: h = 0, clamped r and s = r + (r >> 2) for both paths",
};
/// `void poly1305_blocks_V(void *state, const u8 *src, u32 len, u32 hibit)` (Linux).
pub const LINUX_BLOCKS: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_blocks_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[STATE, Param::ptr("src", Elem::U8, In, true), Param::val("len", Ty::U32, false), Param::val("hibit", Ty::U32, false)],
    ret: Ret::Void,
    summary: "Poly1305 blocks: h = (h + m + hibit·2^128)·r for each 16-byte block",
};
/// `void poly1305_emit_V(const void *state, u8 digest[16], const u32 nonce[4])` (Linux).
pub const LINUX_EMIT: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_emit_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[
        Param::ptr("state", Elem::Void, In, true).aligned(8),
        Param::ptr("digest", Elem::U8, Out, false),
        Param::ptr("nonce", Elem::U32, In, true),
    ],
    ret: Ret::Void,
    summary: "Poly1305 final reduction mod 2^130 - 5, plus nonce mod 2^128, 16-byte tag",
};
/// The blocks function on golang.org/x/crypto's `macState` (internal/poly1305, v0.25.0:
/// `h [3]uint64; r [2]uint64; s [2]uint64`), Go only, base 2^32 variants only:
/// `func poly1305BlocksMacstate<V>(state *macState, inp *byte, len uint64, padbit uint32)`.
/// h and r are the context's bytes already (h0..h3 u32 = `h[0]`, `h[1]`; h4 = `h[2]`; r0..r3 =
/// `r[0]`, `r[1]`); x/crypto keeps the key's s at 40..56 where the context has s1..s3, so this
/// form computes s_i = r_i + (r_i >> 2) from r instead of loading them and never touches
/// bytes 40..56. x/crypto's h may come in with `h[2]` up to 7 (its partially reduced h <
/// 2·(2^130 - 5)); the bounds of `blocks32` hold for that as well (h4 only enters as
/// the small multiplier q), and the h it stores has `h[2] <= 4`.
pub const MACSTATE_BLOCKS: Entry = Entry {
    kernel: "poly1305",
    prefix: "poly1305_blocks_macstate_",
    suffix: "",
    alias: None,
    abis: &[Abi::Go],
    params: &[
        Param::ptr("state", Elem::Go { name: "macState", align: 8 }, InOut, true).aligned(8),
        Param::ptr("inp", Elem::U8, In, true),
        Param::val("len", Ty::Size, false),
        Param::val("padbit", Ty::U32, false),
    ],
    ret: Ret::Void,
    summary: "Poly1305 blocks on x/crypto's macState: h = (h + m + padbit·2^128)·r for each 16-byte block",
};
/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&INIT, &GO_INIT, &BLOCKS, &EMIT, &LINUX_INIT, &LINUX_BLOCKS, &LINUX_EMIT, &MACSTATE_BLOCKS];

/// Where the blocks function finds s1..s3.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Layout {
    /// The context's s1..s3 (at [`CTX_S1`], [`CTX_S23`]).
    Context,
    /// x/crypto's macState: computed from r.
    MacState,
}

/// Bytes of the context (OpenSSL's `double opaque[24]`).
pub const CTX_BYTES: usize = 192;
/// Byte offset of h (five u32 limbs at 0..20, or three u64 limbs at 0..24).
pub const CTX_H: i64 = 0;
/// Byte offset of r (four u32 limbs, or two u64 limbs).
pub const CTX_R: i64 = 24;
/// Byte offset of s2, s3 (u32), which together are the 64-bit path's s1 (u64).
pub const CTX_S23: i64 = 40;
/// Byte offset of s1 (u32) of the 32-bit path.
pub const CTX_S1: i64 = 48;

/// How the variant's instructions are chosen.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// th.mula, th.extu, th.addsl
    Thead,
    /// RV64GC only
    Rv64,
}

impl Isa {
    pub(crate) fn of(t: &Target) -> Isa {
        if t.has(Ext::XTheadMac) && t.has(Ext::XTheadBb) && t.has(Ext::XTheadBa) {
            Isa::Thead
        } else {
            Isa::Rv64
        }
    }
}

/// The arithmetic of the blocks function.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Radix {
    /// h in three 64-bit limbs, 64-bit multiplies.
    R64,
    /// h in five 32-bit limbs, products of 32-bit values.
    R32,
}

// ---- small helpers ------------------------------------------------------------------------

/// rd = rs mod 2^32, by an instruction the constant-time lint sees as zero-extending.
fn zext32(f: &mut Func, isa: Isa, rd: Reg, rs: Reg) {
    match isa {
        Isa::Thead => kasm!(f, th.extu {rd}, {rs}, 31, 0;),
        Isa::Rv64 => kasm!(f, slli {rd}, {rs}, 32; srli {rd}, {rd}, 32;),
    }
}

/// c = 5·c (c + 4c); `tmp` is clobbered on rv64gc.
fn times5(f: &mut Func, isa: Isa, c: Reg, tmp: Reg) {
    match isa {
        Isa::Thead => kasm!(f, th.addsl {c}, {c}, {c}, 2;),
        Isa::Rv64 => kasm!(f, slli {tmp}, {c}, 2; add {c}, {c}, {tmp};),
    }
}

/// dst = the eight bytes at off(p), little-endian, read with byte loads (any alignment).
fn load_le64_bytes(f: &mut Func, dst: Reg, p: Reg, off: i64, tmp: [Reg; 2]) {
    kasm!(f, lbu {dst}, {off}({p}););
    for i in 1..8i64 {
        let (t, o, sh) = (tmp[(i % 2) as usize], off + i, 8 * i);
        kasm!(f, lbu {t}, {o}({p}); slli {t}, {t}, {sh}; or {dst}, {dst}, {t};);
    }
}

// ---- init ---------------------------------------------------------------------------------

/// poly1305_init / poly1305_block_init: h = 0; r = key & 0x0ffffffc0ffffffc0ffffffc0fffffff;
/// the s values of both paths.
/// `table`: the OpenSSL build's (blocks, emit) names, stored into `func`.
fn init_fn(variant: &str, t: &Target, abi: Abi, table: (&str, &str)) -> Func {
    let e = match abi {
        Abi::Psabi => &INIT,
        Abi::Go => &GO_INIT,
        Abi::Linux => &LINUX_INIT,
    };
    let mut f = Func::entry(e, variant, t, abi);
    let (ctx, key, func) = match abi {
        Abi::Psabi => {
            let [ctx, key, func] = f.params();
            (ctx, key, Some(func))
        }
        _ => {
            let [ctx, key] = f.params();
            (ctx, key, None)
        }
    };
    let [lo, hi, s, u] = [f.xreg("r0"), f.xreg("r1"), f.xreg("s1"), f.xreg("s1w")];
    let tmp = f.xregs::<2>("t");
    let mask = f.xreg("mask");
    f.public(mask);
    f.comment("h = 0 (h4's upper word too)");
    kasm!(f,
        sd zero, {CTX_H}({ctx});
        sd zero, {CTX_H + 8}({ctx});
        sd zero, {CTX_H + 16}({ctx});
        beqz {key}, done;
    );
    f.comment("r = key[0..16] little-endian, read byte by byte");
    load_le64_bytes(&mut f, lo, key, 0, tmp);
    load_le64_bytes(&mut f, hi, key, 8, tmp);
    f.comment("clamp: r0 &= 0x0ffffffc0fffffff, r1 &= 0x0ffffffc0ffffffc (64-bit limbs)");
    f.li(mask, 0x0fff_fffc_0fff_ffff);
    let t0 = tmp[0];
    kasm!(f,
        and {lo}, {lo}, {mask};
        andi {mask}, {mask}, -4;
        and {hi}, {hi}, {mask};
    );
    f.comment("s1 = r1 + (r1 >> 2) (64-bit; = s2 | s3 << 32); s1w = r1w + (r1w >> 2) with r1w = r0 >> 32");
    kasm!(f,
        srli {s}, {hi}, 2;
        add {s}, {s}, {hi};
        srli {u}, {lo}, 32;
        srli {t0}, {lo}, 34;
        add {u}, {u}, {t0};
        sd {lo}, {CTX_R}({ctx});
        sd {hi}, {CTX_R + 8}({ctx});
        sd {s}, {CTX_S23}({ctx});
        sd {u}, {CTX_S1}({ctx});
    );
    if let Some(func) = func {
        f.comment("func[0] = blocks, func[1] = emit (this variant's); return 1 (0 without a key or a table)");
        let p = f.xreg("fp");
        f.public(p);
        kasm!(f, beqz {func}, done;);
        f.la(p, table.0);
        kasm!(f, sd {p}, 0({func}););
        f.la(p, table.1);
        kasm!(f, sd {p}, 8({func}););
        f.ret_imm(1);
        kasm!(f, done:);
        f.ret_imm(0);
    } else {
        kasm!(f, done:);
        f.ret();
    }
    f
}

// ---- emit ---------------------------------------------------------------------------------

/// poly1305_emit: tag = ((h mod 2^130-5) + nonce) mod 2^128, little-endian. Reads h as three
/// u64 limbs (both paths store that form).
fn emit_fn(isa: Isa, variant: &str, t: &Target, abi: Abi) -> Func {
    let mut f = Func::entry(if abi == Abi::Linux { &LINUX_EMIT } else { &EMIT }, variant, t, abi);
    let [ctx, mac, nonce] = f.params();
    let [h0, h1, h2] = f.xregs::<3>("h");
    let [g0, g1, g2] = f.xregs::<3>("g");
    let [c, mask] = [f.xreg("c"), f.xreg("mask")];
    let [n0, n1, n2, n3] = f.xregs::<4>("n");
    kasm!(f,
        ld {h0}, {CTX_H}({ctx});
        ld {h1}, {CTX_H + 8}({ctx});
        ld {h2}, {CTX_H + 16}({ctx});
        lwu {n0}, 0({nonce});
        lwu {n1}, 4({nonce});
        lwu {n2}, 8({nonce});
        lwu {n3}, 12({nonce});
    );
    f.comment("h = (h mod 2^130) + 5·(h >> 130): for h2 < 2^62, now h < 2^130 + 2^63 < 2·(2^130 - 5)");
    kasm!(f, srli {c}, {h2}, 2;);
    times5(&mut f, isa, c, g0);
    kasm!(f,
        andi {h2}, {h2}, 3;
        add {h0}, {h0}, {c};
        sltu {c}, {h0}, {c};
        add {h1}, {h1}, {c};
        sltu {c}, {h1}, {c};
        add {h2}, {h2}, {c};
    );
    f.comment("g = h + 5; h >= p exactly when g >= 2^130: mask = -(g >> 130), all ones or zero");
    kasm!(f,
        addi {g0}, {h0}, 5;
        sltiu {c}, {g0}, 5;
        add {g1}, {h1}, {c};
        sltu {c}, {g1}, {c};
        add {g2}, {h2}, {c};
        srli {g2}, {g2}, 2;
        sub {mask}, zero, {g2};
    );
    f.comment("h = mask ? g : h (mod 2^128), without a branch");
    kasm!(f,
        xor {g0}, {g0}, {h0};
        xor {g1}, {g1}, {h1};
        and {g0}, {g0}, {mask};
        and {g1}, {g1}, {mask};
        xor {h0}, {h0}, {g0};
        xor {h1}, {h1}, {g1};
    );
    f.comment("h += nonce (mod 2^128)");
    kasm!(f,
        slli {n1}, {n1}, 32;
        slli {n3}, {n3}, 32;
        or {n0}, {n0}, {n1};
        or {n2}, {n2}, {n3};
        add {h0}, {h0}, {n0};
        sltu {c}, {h0}, {n0};
        add {h1}, {h1}, {n2};
        add {h1}, {h1}, {c};
    );
    f.comment("mac[0..16] = h, little-endian, byte by byte (any alignment)");
    for (k, w) in [h0, h1].into_iter().enumerate() {
        for i in 0..8i64 {
            let off = 8 * k as i64 + i;
            kasm!(f, sb {w}, {off}({mac}););
            if i < 7 {
                kasm!(f, srli {w}, {w}, 8;);
            }
        }
    }
    f.ret();
    f
}

// ---- blocks: shared set-up ------------------------------------------------------------------

/// Arguments of the blocks function and the values derived from them.
struct Args {
    ctx: Reg,
    inp: Reg,
    /// inp + (len & -16)
    end: Reg,
    /// 0 or 1
    pad: Reg,
    /// Scratch for the alignment test.
    t: Reg,
}

/// The blocks entry point of an ABI.
fn blocks_entry_point(abi: Abi) -> &'static Entry {
    if abi == Abi::Linux { &LINUX_BLOCKS } else { &BLOCKS }
}

/// The arguments; len = len & -16; returns early when it is 0; pad = padbit != 0.
fn blocks_entry(f: &mut Func, abi: Abi) -> Args {
    let [ctx, inp, len, padbit] = f.params();
    let [end, pad, t] = [f.xreg("end"), f.xreg("pad"), f.xreg("t")];
    for r in [end, pad, t] {
        f.public(r);
    }
    if abi == Abi::Linux {
        // A u32 argument arrives sign-extended (psABI).
        f.zext_w(len, len);
    }
    kasm!(f,
        andi {len}, {len}, -16;
        beqz {len}, nothing;
        add {end}, {inp}, {len};
        sltu {pad}, zero, {padbit};
    );
    Args { ctx, inp, end, pad, t }
}

/// Unaligned input: inp and end move down to the 8-byte boundary; sh = 8·(inp mod 8) (not
/// 0 here), rsh = 64 - sh (as a shift amount, -sh mod 64).
fn unaligned_entry(f: &mut Func, a: &Args, sh: Reg, rsh: Reg) {
    let (inp, end, t) = (a.inp, a.end, a.t);
    kasm!(f,
        andi {t}, {inp}, 7;
        sub {inp}, {inp}, {t};
        sub {end}, {end}, {t};
        slli {sh}, {t}, 3;
        sub {rsh}, zero, {sh};
    );
}

/// w = the 16 input bytes at inp (two little-endian u64) read with aligned loads only:
/// w_k = (x_k >> sh) | (x_{k+1} << (64 - sh)) with x_0..x_2 the aligned words at inp,
/// inp + 8, inp + 16 (x_2 holds the block's last byte: nothing past its word is read).
fn load_unaligned(f: &mut Func, inp: Reg, sh: Reg, rsh: Reg, w: [Reg; 2], x: Reg, t: Reg) {
    let [w0, w1] = w;
    kasm!(f,
        ld {w0}, 0({inp});
        ld {w1}, 8({inp});
        ld {x}, 16({inp});
        srl {w0}, {w0}, {sh};
        sll {t}, {w1}, {rsh};
        or {w0}, {w0}, {t};
        srl {w1}, {w1}, {sh};
        sll {x}, {x}, {rsh};
        or {w1}, {w1}, {x};
    );
}

// ---- blocks: base 2^32 ---------------------------------------------------------------------

/// Registers of the base-2^32 loop.
pub(crate) struct P32 {
    pub(crate) isa: Isa,
    /// r0..r3 (< 2^28, loaded with lwu).
    pub(crate) r: [Reg; 4],
    /// s1..s3: s_i = r_i + (r_i >> 2) < 2^28.33.
    pub(crate) s: [Reg; 3],
    /// Accumulators d0..d3 (64-bit) and q = h4·r0 (weight 2^128).
    pub(crate) d: [Reg; 4],
    pub(crate) q: Reg,
    /// Multiplier operands h0..h4, each < 2^32.
    pub(crate) h: [Reg; 5],
    /// Message limbs.
    pub(crate) m: [Reg; 4],
    pub(crate) c: Reg,
    pub(crate) e: Reg,
    /// Products waiting to be added (rv64gc).
    pub(crate) p: [Reg; 4],
}

impl P32 {
    /// The registers of the base-2^32 loop, new.
    pub(crate) fn new(f: &mut Func, isa: Isa) -> P32 {
        P32 {
            isa,
            r: f.xregs::<4>("r"),
            s: [f.xreg("s1"), f.xreg("s2"), f.xreg("s3")],
            d: f.xregs::<4>("d"),
            q: f.xreg("q"),
            h: f.xregs::<5>("h"),
            m: f.xregs::<4>("m"),
            c: f.xreg("c"),
            e: f.xreg("e"),
            p: f.xregs::<4>("p"),
        }
    }
}

/// The pad bit of the blocks being absorbed.
#[derive(Clone, Copy)]
pub(crate) enum Pad {
    /// None (the final reduction).
    None,
    /// 0 or 1 in a register.
    Reg(Reg),
    /// 1 (whole blocks of a message).
    One,
}

impl P32 {
    /// The factor of h_j in d_i: r_{i-j}, or s_{4+i-j} where the product wraps past 2^128
    /// (2^128·r_k·2^32k = r_k·2^(32(k-4))·2^130 ≡ 5/4·r_k·2^(32(k-4)), and 4 | r_k for k ≥ 1).
    fn coef(&self, i: usize, j: usize) -> Reg {
        if j <= i { self.r[i - j] } else { self.s[3 + i - j] }
    }
}

/// d0 += 5·(q >> 2); e = ((q & 3) + pad) << 32. q (weight 2^128) splits into its bits at
/// 2^130 and above, which wrap round as 5·(q >> 2) at weight 1, and q & 3, which joins limb
/// 3 at bit 32 together with the pad bit of the next block.
pub(crate) fn fold32(f: &mut Func, p: &P32, q: Reg, d0: Reg, pad: Pad) {
    let (c, e) = (p.c, p.e);
    kasm!(f, srli {c}, {q}, 2;);
    times5(f, p.isa, c, e);
    kasm!(f, add {d0}, {d0}, {c}; andi {e}, {q}, 3;);
    match pad {
        Pad::None => {}
        Pad::Reg(pad) => kasm!(f, add {e}, {e}, {pad};),
        Pad::One => kasm!(f, addi {e}, {e}, 1;),
    }
    kasm!(f, slli {e}, {e}, 32;);
}

/// Carry propagation into multiplier operands: t_i = d_i (+ m_i) + t_{i-1} >> 32 (t_3 also
/// + e), h_i = t_i mod 2^32, h4 = t_3 >> 32; t_i is built in d_i.
pub(crate) fn carry32(f: &mut Func, p: &P32, d: [Reg; 4], m: Option<[Reg; 4]>, h: [Reg; 5]) {
    let (c, e) = (p.c, p.e);
    for i in 0..4 {
        let di = d[i];
        if let Some(m) = m {
            let mi = m[i];
            kasm!(f, add {di}, {di}, {mi};);
        }
        if i > 0 {
            kasm!(f, add {di}, {di}, {c};);
        }
        if i == 3 {
            let h4 = h[4];
            kasm!(f, add {di}, {di}, {e}; srli {h4}, {di}, 32;);
        } else {
            kasm!(f, srli {c}, {di}, 32;);
        }
        zext32(f, p.isa, h[i], di);
    }
}

/// d = h·r "mod" 2^130 - 5 as four 64-bit column sums plus q = h4·r0:
///   d0 = h0·r0 + h1·s3 + h2·s2 + h3·s1
///   d1 = h0·r1 + h1·r0 + h2·s3 + h3·s2 + h4·s1
///   d2 = h0·r2 + h1·r1 + h2·r0 + h3·s3 + h4·s2
///   d3 = h0·r3 + h1·r2 + h2·r1 + h3·r0 + h4·s3
///   q  = h4·r0
/// Emitted by h_j (one product into each accumulator per group), so the accumulations of
/// one column are four instructions apart (th.mula's result latency is 3).
pub(crate) fn multiply32(f: &mut Func, p: &P32) {
    multiply32_onto(f, p, false)
}

/// [`multiply32`]; with `onto` (T-Head only) d0..d3 already hold the next block's message
/// words and the products accumulate onto them: d_i = m_i + (h·r)_i.
fn multiply32_onto(f: &mut Func, p: &P32, onto: bool) {
    assert!(!onto || p.isa == Isa::Thead, "multiply32_onto: accumulating onto d needs th.mula");
    let mut groups: Vec<[(Reg, Reg, Reg); 4]> = Vec::new();
    for j in 0..4 {
        groups.push(std::array::from_fn(|i| (p.d[i], p.h[j], p.coef(i, j))));
    }
    groups.push([(p.q, p.h[4], p.r[0]), (p.d[1], p.h[4], p.s[0]), (p.d[2], p.h[4], p.s[1]), (p.d[3], p.h[4], p.s[2])]);
    for (j, g) in groups.iter().enumerate() {
        // The first product of each accumulator starts it: group 0 (unless d holds the
        // next block), and q in group 4.
        let starts = |k: usize| (j == 0 && !onto) || (j == 4 && k == 0);
        match p.isa {
            Isa::Thead => {
                for (k, &(acc, a, b)) in g.iter().enumerate() {
                    if starts(k) {
                        kasm!(f, mul {acc}, {a}, {b};);
                    } else {
                        kasm!(f, th.mula {acc}, {a}, {b};);
                    }
                }
            }
            Isa::Rv64 => {
                // Products of a group first, sums after: each sum reads a product at least
                // three instructions old.
                let mut slot = 0;
                let mut pending = Vec::new();
                for (k, &(acc, a, b)) in g.iter().enumerate() {
                    if starts(k) {
                        kasm!(f, mul {acc}, {a}, {b};);
                    } else {
                        let t = p.p[slot];
                        slot += 1;
                        kasm!(f, mul {t}, {a}, {b};);
                        pending.push((acc, t));
                    }
                }
                for (acc, t) in pending {
                    kasm!(f, add {acc}, {acc}, {t};);
                }
            }
        }
    }
}

/// One block per iteration: h = (h + m + pad·2^128)·r. The loop carries the unreduced
/// product (d, q); each iteration first folds q, then adds the block while propagating
/// carries, then multiplies.
fn loop32(f: &mut Func, p: &P32, a: &Args, top: Label, unaligned: Option<(Reg, Reg)>) {
    let (inp, end) = (a.inp, a.end);
    f.bind(top);
    match unaligned {
        None => {
            f.comment("m = the block's four little-endian words");
            for (i, &mi) in p.m.iter().enumerate() {
                let off = 4 * i as i64;
                kasm!(f, lwu {mi}, {off}({inp}););
            }
        }
        Some((sh, rsh)) => {
            f.comment("m = the block's words, from aligned 64-bit loads");
            let [m0, m1, m2, m3] = p.m;
            load_unaligned(f, inp, sh, rsh, [m0, m2], m3, m1);
            kasm!(f, srli {m1}, {m0}, 32; srli {m3}, {m2}, 32;);
            zext32(f, p.isa, m0, m0);
            zext32(f, p.isa, m2, m2);
        }
    }
    // Scheduled: the multiplies of h0 can start while the carries of h1..h3 run.
    f.schedule(|f| {
        f.comment("d0 += 5·(q >> 2); e = ((q & 3) + pad) << 32");
        fold32(f, p, p.q, p.d[0], Pad::Reg(a.pad));
        f.comment("h = d + m + e·2^96, carried into 32-bit limbs h0..h3 and h4 < 2^31");
        carry32(f, p, p.d, Some(p.m), p.h);
        f.comment("(d, q) = h·r");
        multiply32(f, p);
    });
    kasm!(f,
        addi {inp}, {inp}, 16;
        bne {inp}, {end}, {top};
    );
}

/// The T-Head loop over 4-byte-aligned input, with the message added where the multiplier
/// does it for free: each iteration loads the next block's words into d0..d3 and the
/// products of h·r accumulate onto them (th.mula), so the carries find d + m ready and no
/// add of m remains. On entry d holds h + m of the first block (added here); the last block
/// multiplies from zero (nothing past `end` is read) and falls through to what follows.
fn loop32_onto(f: &mut Func, p: &P32, a: &Args, top: Label) {
    let (inp, end) = (a.inp, a.end);
    let last = f.named_label("last");
    f.comment("d += m of the first block; end = the last block");
    f.schedule(|f| {
        for (i, (&mi, &di)) in p.m.iter().zip(&p.d).enumerate() {
            let off = 4 * i as i64;
            kasm!(f, lwu {mi}, {off}({inp}); add {di}, {di}, {mi};);
        }
    });
    // More than one block (the usual case) is the taken branch: a predictor that has not
    // seen it yet guesses taken.
    kasm!(f,
        addi {end}, {end}, -16;
        bne {inp}, {end}, {top};
        j {last};
    );
    f.bind(top);
    f.schedule_loop(|f| {
        f.comment("d0 += 5·(q >> 2); e = ((q & 3) + pad) << 32");
        fold32(f, p, p.q, p.d[0], Pad::Reg(a.pad));
        f.comment("h = d + e·2^96 (d holds m), carried into 32-bit limbs h0..h3 and h4 < 2^31");
        carry32(f, p, p.d, None, p.h);
        f.comment("d = the next block's words; (d, q) = m + h·r");
        for (i, &di) in p.d.iter().enumerate() {
            let off = 16 + 4 * i as i64;
            kasm!(f, lwu {di}, {off}({inp}););
        }
        multiply32_onto(f, p, true);
    });
    kasm!(f,
        addi {inp}, {inp}, 16;
        bne {inp}, {end}, {top};
    );
    f.bind(last);
    f.schedule(|f| {
        f.comment("the last block: d0 += 5·(q >> 2); h = d + e·2^96 in limbs; (d, q) = h·r");
        fold32(f, p, p.q, p.d[0], Pad::Reg(a.pad));
        carry32(f, p, p.d, None, p.h);
        multiply32(f, p);
    });
}

/// The base-2^32 state from a context in `layout`: r0..r3, s1..s3, and the loop state
/// (d, q) = h (h4 in q).
pub(crate) fn load_state32_as(f: &mut Func, p: &P32, ctx: Reg, layout: Layout) {
    f.comment("r0..r3, s1..s3; the loop state (d, q) = h (h4 in q)");
    for (i, &r) in p.r.iter().enumerate() {
        let off = CTX_R + 4 * i as i64;
        kasm!(f, lwu {r}, {off}({ctx}););
    }
    let [s1, s2, s3] = p.s;
    match layout {
        Layout::Context => kasm!(f,
            lwu {s1}, {CTX_S1}({ctx});
            lwu {s2}, {CTX_S23}({ctx});
            lwu {s3}, {CTX_S23 + 4}({ctx});
        ),
        Layout::MacState => {
            f.comment("s_i = r_i + (r_i >> 2) mod 2^32 (macState has the key's s where the context has these)");
            for (k, &si) in p.s.iter().enumerate() {
                let ri = p.r[k + 1];
                kasm!(f, srli {si}, {ri}, 2; add {si}, {si}, {ri};);
                // s_i < 1.25·2^28; said with a zero-extension the constant-time lint sees.
                zext32(f, p.isa, si, si);
            }
        }
    }
    for (i, &d) in p.d.iter().enumerate() {
        let off = CTX_H + 4 * i as i64;
        kasm!(f, lwu {d}, {off}({ctx}););
    }
    let q = p.q;
    kasm!(f, lwu {q}, {CTX_H + 16}({ctx}););
}

/// The loop state (d, q) reduced to limbs and stored as the context's h (h4 <= 4).
pub(crate) fn store_state32(f: &mut Func, p: &P32, ctx: Reg) {
    f.comment("h = d + q·2^128 in limbs (h4 < 2^31), then once more from h4: h4 <= 4");
    fold32(f, p, p.q, p.d[0], Pad::None);
    carry32(f, p, p.d, None, p.h);
    let [h0, h1, h2, h3, h4] = p.h;
    fold32(f, p, h4, h0, Pad::None);
    carry32(f, p, [h0, h1, h2, h3], None, p.h);
    kasm!(f,
        sw {h0}, {CTX_H}({ctx});
        sw {h1}, {CTX_H + 4}({ctx});
        sw {h2}, {CTX_H + 8}({ctx});
        sw {h3}, {CTX_H + 12}({ctx});
        sd {h4}, {CTX_H + 16}({ctx});
    );
}

/// Bounds of the base-2^32 loop. r is clamped: r0 < 2^28, r1..r3 < 2^28 and multiples of
/// 4, so s_i = 5·r_i/4 < 1.25·2^28 (< 2^28.33).
/// - Multiplier inputs: h0..h3 < 2^32 (zero-extended), h4 < 2^31 (shown below). Every
///   product h_j·r_k, h_j·s_k is below 2^32·1.25·2^28 = 1.25·2^60 < 2^61.
/// - Column sums: d0 < 2^60·(1 + 3·1.25) = 4.75·2^60; d1 < 2^60·(1 + 1 + 1.25 + 1.25) +
///   2^31·1.25·2^28 = 5.125·2^60; d2 < 4.875·2^60; d3 < 4.625·2^60; q = h4·r0 < 2^59. All
///   below 2^63: no sum of five products overflows 64 bits.
/// - Fold: 5·(q >> 2) <= 1.25·q < 0.625·2^60, so d0 < 5.375·2^60; e <= 4·2^32.
/// - Carry: t_i = d_i + m_i + carry < 5.4·2^60 < 2^63 (on T-Head m_i is in d_i already,
///   accumulated onto: the same sum), carries < 5.4·2^28; t3 < 4.625·2^60
///   + 2^32 + 2^31 + 2^34, so h4 = t3 >> 32 < 4.63·2^28 < 2^31, as assumed.
/// - On entry h comes from the context (h0..h3 < 2^32, h4 <= 4): inside these bounds.
fn blocks32(isa: Isa, variant: &str, t: &Target, abi: Abi, layout: Layout) -> Func {
    let entry = if layout == Layout::MacState { &MACSTATE_BLOCKS } else { blocks_entry_point(abi) };
    let mut f = Func::entry(entry, variant, t, abi);
    let a = blocks_entry(&mut f, abi);
    let ctx = a.ctx;
    let p = P32::new(&mut f, isa);
    load_state32_as(&mut f, &p, ctx, layout);
    let (tt, inp) = (a.t, a.inp);
    kasm!(f,
        andi {tt}, {inp}, 3;
        bnez {tt}, unaligned;
    );
    let top = f.named_label("loop");
    let tail = f.named_label("tail");
    if isa == Isa::Thead {
        loop32_onto(&mut f, &p, &a, top);
    } else {
        loop32(&mut f, &p, &a, top, None);
    }
    f.bind(tail);
    store_state32(&mut f, &p, ctx);
    f.ret();
    f.comment("input not 4-byte aligned");
    let (sh, rsh) = (f.xreg("sh"), f.xreg("rsh"));
    f.public(sh);
    f.public(rsh);
    kasm!(f, unaligned:);
    unaligned_entry(&mut f, &a, sh, rsh);
    let utop = f.named_label("loop_unaligned");
    loop32(&mut f, &p, &a, utop, Some((sh, rsh)));
    kasm!(f, j {tail}; nothing:);
    f.ret();
    f
}

// ---- blocks: base 2^64 ---------------------------------------------------------------------

/// Bounds of the base-2^64 path. r0, r1 < 2^60, s1 = 5·r1/4 < 1.25·2^60; h2 <= 4 on entry
/// to a block and <= 6 after adding it (one carry, one pad bit).
/// - hi(h0·r0) + hi(h1·s1) + 1 < 2.25·2^60, plus h2·s1 < 7.5·2^60: < 2^64, so that sum
///   needs no carry out (th.mula adds h2·s1 to hi(h1·s1) directly).
/// - d2 = hi(h0·r1) + hi(h1·r0) + h2·r0 + 2 carries < 8·2^60 < 2^63.
/// - After the reduction h2 = (d2 & 3) + carry <= 4.
fn blocks64(isa: Isa, variant: &str, t: &Target, abi: Abi) -> Func {
    let mut f = Func::entry(blocks_entry_point(abi), variant, t, abi);
    let a = blocks_entry(&mut f, abi);
    let (ctx, inp, end, pad) = (a.ctx, a.inp, a.end, a.pad);
    let [h0, h1, h2] = f.xregs::<3>("h");
    let [r0, r1, s1] = [f.xreg("r0"), f.xreg("r1"), f.xreg("s1")];
    let [d0, d1, d2] = f.xregs::<3>("d");
    let x = f.xregs::<5>("x");
    let [m0, m1] = f.xregs::<2>("m");
    let [c, c1] = [f.xreg("c"), f.xreg("c1")];
    let tt = a.t;
    kasm!(f,
        ld {h0}, {CTX_H}({ctx});
        ld {h1}, {CTX_H + 8}({ctx});
        ld {h2}, {CTX_H + 16}({ctx});
        ld {r0}, {CTX_R}({ctx});
        ld {r1}, {CTX_R + 8}({ctx});
        ld {s1}, {CTX_S23}({ctx});
        andi {tt}, {inp}, 7;
        bnez {tt}, unaligned;
    );
    let body = |f: &mut Func, top: Label, unaligned: Option<(Reg, Reg)>| {
        f.bind(top);
        match unaligned {
            None => kasm!(f, ld {m0}, 0({inp}); ld {m1}, 8({inp});),
            Some((sh, rsh)) => load_unaligned(f, inp, sh, rsh, [m0, m1], x[0], x[1]),
        }
        f.comment("h += m + pad·2^128");
        kasm!(f,
            add {h0}, {h0}, {m0};
            sltu {c}, {h0}, {m0};
            add {h1}, {h1}, {m1};
            sltu {c1}, {h1}, {m1};
            add {h1}, {h1}, {c};
            sltu {c}, {h1}, {c};
            add {h2}, {h2}, {pad};
            or {c}, {c}, {c1};
            add {h2}, {h2}, {c};
        );
        f.comment("d0 = lo(h0·r0) + lo(h1·s1); d1 = hi(h0·r0) + hi(h1·s1) + lo(h0·r1) + lo(h1·r0) + h2·s1;");
        f.comment("d2 = hi(h0·r1) + hi(h1·r0) + h2·r0 (+ carries); h1·r1·2^128 ≡ h1·s1 as 4 | r1");
        let [x0, x1, x2, x3, x4] = x;
        // On the C906 the multiplier's latency depends on the factors' upper halves: a leak
        // declared for these multiplies (other cores are assumed constant time).
        let products = |f: &mut Func| {
            kasm!(f,
                mul {d0}, {h0}, {r0};
                mulhu {d1}, {h0}, {r0};
                mul {x0}, {h1}, {s1};
                mulhu {x1}, {h1}, {s1};
                mul {x2}, {h0}, {r1};
                mulhu {d2}, {h0}, {r1};
            );
            match isa {
                Isa::Thead => kasm!(f, th.mula {x1}, {h2}, {s1}; mul {x3}, {h1}, {r0}; mulhu {x4}, {h1}, {r0}; th.mula {d2}, {h2}, {r0};),
                Isa::Rv64 => kasm!(f,
                    mul {c}, {h2}, {s1};
                    mul {x3}, {h1}, {r0};
                    mulhu {x4}, {h1}, {r0};
                    mul {c1}, {h2}, {r0};
                    add {x1}, {x1}, {c};
                    add {d2}, {d2}, {c1};
                ),
            }
        };
        if f.target.multiplier == Multiplier::C906 {
            f.leaking(LeakKind::SecretMulTiming, "64-bit multiplies of h and r: on the C906 their latency depends on the factors' upper 32 bits", products);
        } else {
            products(f);
        }
        kasm!(f,
            add {d0}, {d0}, {x0};
            sltu {x0}, {d0}, {x0};
            add {d1}, {d1}, {x1};
            add {d1}, {d1}, {x0};
            add {d1}, {d1}, {x2};
            sltu {x2}, {d1}, {x2};
            add {d1}, {d1}, {x3};
            sltu {x3}, {d1}, {x3};
            add {d2}, {d2}, {x4};
            add {d2}, {d2}, {x2};
            add {d2}, {d2}, {x3};
        );
        f.comment("h = (d mod 2^130) + 5·(d >> 130)");
        kasm!(f, srli {c}, {d2}, 2;);
        times5(f, isa, c, c1);
        kasm!(f,
            andi {h2}, {d2}, 3;
            add {h0}, {d0}, {c};
            sltu {c}, {h0}, {c};
            add {h1}, {d1}, {c};
            sltu {c}, {h1}, {c};
            add {h2}, {h2}, {c};
            addi {inp}, {inp}, 16;
            bne {inp}, {end}, {top};
        );
    };
    let top = f.named_label("loop");
    body(&mut f, top, None);
    let tail = f.named_label("tail");
    f.bind(tail);
    kasm!(f,
        sd {h0}, {CTX_H}({ctx});
        sd {h1}, {CTX_H + 8}({ctx});
        sd {h2}, {CTX_H + 16}({ctx});
    );
    f.ret();
    f.comment("input not 8-byte aligned");
    let (sh, rsh) = (f.xreg("sh"), f.xreg("rsh"));
    f.public(sh);
    f.public(rsh);
    kasm!(f, unaligned:);
    unaligned_entry(&mut f, &a, sh, rsh);
    let utop = f.named_label("loop_unaligned");
    body(&mut f, utop, Some((sh, rsh)));
    kasm!(f, j {tail}; nothing:);
    f.ret();
    f
}

// ---- modules ------------------------------------------------------------------------------

fn build(radix: Radix, variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let isa = Isa::of(t);
    let mut m = Module::new("poly1305", variant, t, abi);
    let mut notes: Vec<String> = match radix {
        Radix::R32 => vec![
            "Poly1305 (RFC 8439), base 2^32: every multiply has both operands below 2^32, so the C906".into(),
            "multiplier's time does not depend on the data. Constant time: no secret-dependent branches or".into(),
            "addresses.".into(),
        ],
        Radix::R64 => vec![
            "Poly1305 (RFC 8439), base 2^64 with 64-bit mul/mulhu. NOT constant time on the C906: its".into(),
            "multiplier takes 3 or 6 cycles depending on the operands' upper 32 bits (h and r). No".into(),
            "secret-dependent branches or addresses.".into(),
        ],
    };
    notes.extend([
        "Context (opaque, 192 bytes, 8-byte aligned; the same in every variant): h0..h3 u32 at 0..16,".to_string(),
        "h4 u64 at 16 (as u64: h0|h1 at 0, h2|h3 at 8, h4 at 16); r0..r3 u32 at 24..40 (clamped);".to_string(),
        "s2, s3 u32 at 40, 44 (= the u64 s1 of r2|r3); s1 u32 at 48; s_i = r_i + (r_i >> 2).".to_string(),
    ]);
    m.notes = notes;
    let blocks = match radix {
        Radix::R64 => blocks64(isa, variant, t, abi),
        Radix::R32 => blocks32(isa, variant, t, abi, Layout::Context),
    };
    let table = (BLOCKS.symbol(variant), EMIT.symbol(variant));
    m.add(init_fn(variant, t, abi, (&table.0, &table.1)), true)?;
    m.add(blocks, true)?;
    m.add(emit_fn(isa, variant, t, abi), true)?;
    Ok(m)
}

/// The Go module for golang.org/x/crypto's internal/poly1305 of a base-2^32 variant
/// (`32-c906`, `32-rv64gc`): [`MACSTATE_BLOCKS`] alone (`kgen go-patches` writes it into
/// x/crypto's `sum_riscv64.s`).
pub fn macstate_module(variant: &str) -> Result<Module, BuildError> {
    let v = KERNEL.variants.iter().find(|v| v.name == variant && v.name.starts_with("32-")).ok_or_else(|| BuildError {
        func: MACSTATE_BLOCKS.prefix.to_string(),
        inst: String::new(),
        index: None,
        loc: None,
        reason: format!("poly1305 has no base-2^32 variant `{variant}` (32-c906, 32-rv64gc)"),
    })?;
    let t = v.target();
    let mut m = Module::new("poly1305", variant, &t, Abi::Go);
    m.notes = vec![
        "Poly1305 (RFC 8439), base 2^32, on golang.org/x/crypto's macState (h [3]uint64, r [2]uint64,".into(),
        "s [2]uint64): every multiply has both operands below 2^32. Constant time: no secret-dependent".into(),
        "branches or addresses. Bytes 40..56 (x/crypto's s) are not touched.".into(),
    ];
    m.add(blocks32(Isa::of(&t), variant, &t, Abi::Go, Layout::MacState), true)?;
    Ok(m)
}


// ---- what the commands need: benchmark, known answers, RTL plan, hooks --------------------------

/// The Go module of [`macstate_module`] for the variants that have one (the base-2^32
/// ones), as a benchmark's or hook's companion module.
fn macstate_companion(variant: &str) -> Result<Option<Module>, BuildError> {
    if variant.starts_with("32-") {
        macstate_module(variant).map(Some)
    } else {
        Ok(None)
    }
}

/// `kgen bench poly1305`: one init, then `poly1305_blocks` over the size (rounded up to
/// whole 16-byte blocks, which is what blocks hashes) with padbit 1, from a 64-byte aligned
/// buffer.
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let key = h.buffer(&[0x3c; 32], 0, false);
    let ctx = h.buffer(&[0u8; CTX_BYTES], 0, true);
    let (_, init) = h.entry(&INIT)?;
    let (name, blocks) = h.entry(&BLOCKS)?;
    h.call(init, &[ctx, key, 0])?;
    let mut rows = Vec::new();
    for &n in sizes {
        let n = n.max(16).next_multiple_of(16);
        let inp = h.buffer(&vec![0x5a; n], 0, false);
        let m = measured(h, |h| h.call(blocks, &[ctx, inp, n as u64, 1]))?;
        rows.push(figure(&name, n, m));
    }
    Ok(rows)
}

/// The Go form on x/crypto's macState (h = 0, r clamped from a 0x3c key, s), then the
/// blocks function over the size rounded up to whole blocks with padbit 1.
fn bench_macstate(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let st = h.buffer(&macstate(0x3c3c_3c3c_3c3c_3c3c), 0, true);
    let (name, blocks) = h.entry(&MACSTATE_BLOCKS)?;
    let mut rows = Vec::new();
    for &n in sizes {
        let n = n.max(16).next_multiple_of(16);
        let inp = h.buffer(&vec![0x5a; n], 0, false);
        let m = measured(h, |h| h.call(blocks, &[st, inp, n as u64, 1]))?;
        rows.push(figure(&name, n, m));
    }
    Ok(rows)
}

/// x/crypto's macState (56 bytes) with h = 0 and r clamped from the 64-bit `r` twice (s
/// zero: the kernels never read it).
pub fn macstate(r: u64) -> [u8; 56] {
    let mut state = [0u8; 56];
    state[24..32].copy_from_slice(&(r & 0x0fff_fffc_0fff_ffff).to_le_bytes());
    state[32..40].copy_from_slice(&(r & 0x0fff_fffc_0fff_fffc).to_le_bytes());
    state
}

/// A context as the base-2^32 `poly1305_init` fills it for the 16-byte `r` (the layout
/// above): h = 0, r clamped, s_i = r_i + (r_i >> 2).
pub fn context_for(r: &[u8; 16]) -> [u8; CTX_BYTES] {
    let w = |i: usize| u32::from_le_bytes(r[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    let clamp = [0x0fff_ffffu32, 0x0fff_fffc, 0x0fff_fffc, 0x0fff_fffc];
    let rs: Vec<u32> = (0..4).map(|i| w(i) & clamp[i]).collect();
    let mut ctx = [0u8; CTX_BYTES];
    let mut put = |off: i64, v: u32| ctx[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
    for (i, &x) in rs.iter().enumerate() {
        put(CTX_R + 4 * i as i64, x);
    }
    put(CTX_S23, rs[2] + (rs[2] >> 2));
    put(CTX_S23 + 4, rs[3] + (rs[3] >> 2));
    put(CTX_S1, rs[1] + (rs[1] >> 2));
    ctx
}

/// The state h that the base-2^32 `poly1305_blocks` (padbit 1) leaves in its context for
/// r = 1 from h = 0: h = h + block + 2^128 per 16-byte block, each step folded once
/// (h = h mod 2^130 + 5·(h >> 130)), and folded twice more when stored (so h < 5·2^128,
/// congruent to the sum modulo 2^130 - 5). The 24 context bytes h0..h3 (u32) and h4 (u64),
/// little-endian. With r = 1 the kernel's products are the limbs themselves, so its partial
/// reduction is exactly these folds.
pub fn h_for_r1(msg: &[u8]) -> [u8; 24] {
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

/// RFC 8439 2.5.2: key, message, tag.
pub const RFC_KEY: &str = "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b";
pub const RFC_MSG: &[u8] = b"Cryptographic Forum Research Group";
pub const RFC_TAG: &str = "a8061dc1305136c6c22b8baf0c0127a9";

/// Known answers: RFC 8439 2.5.2, with the message 8-byte aligned and at an odd address
/// (the kernels' shifted-load path).
fn kat(v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let key = unhex(RFC_KEY);
    let full = RFC_MSG.len() / 16 * 16;
    let mut last = RFC_MSG[full..].to_vec();
    last.push(1);
    last.resize(16, 0);
    for (what, off) in [("8-byte aligned message", 0), ("message at an odd address", 1)] {
        let ctx = p.buf("ctx", vec![0; CTX_BYTES], 0);
        let kb = p.buf("key", key.clone(), 0);
        let msg = p.buf("inp", RFC_MSG.to_vec(), off);
        let lb = p.buf("last block, padded", last.clone(), 0);
        let mac = p.buf("mac", vec![0; 16], 3);
        p.call(&INIT, v, vec![Buf(ctx, 0), Buf(kb, 0), Int(0)], Some(0));
        p.call(&BLOCKS, v, vec![Buf(ctx, 0), Buf(msg, 0), Int(full as u64), Int(1)], None);
        p.call(&BLOCKS, v, vec![Buf(ctx, 0), Buf(lb, 0), Int(16), Int(0)], None);
        // The nonce is the key's second half (4-byte aligned: the key buffer is).
        p.call(&EMIT, v, vec![Buf(ctx, 0), Buf(mac, 0), Buf(kb, 16)], None);
        p.expect(format!("RFC 8439 2.5.2 tag, {what}"), mac, 0, unhex(RFC_TAG));
    }
    Ok(p)
}

/// What [`bench`] measures, on the RTL.
fn rtl_plan(variant: &str, sizes: &[usize]) -> Result<rtl::Plan, String> {
    use rtl::Arg;
    let mut p = rtl::Plan::new(format!("poly1305 {variant}"));
    let key = p.buf(vec![0x3c; 32]);
    let ctx = p.buf(vec![0; CTX_BYTES]);
    p.call(&INIT, variant, vec![ctx.clone(), key, Arg::Int(0)])?;
    for &n in sizes {
        let n = n.max(16).next_multiple_of(16);
        let inp = p.buf(vec![0x5a; n]);
        let c = p.call(&BLOCKS, variant, vec![ctx.clone(), inp, Arg::Int(n as u64), Arg::Int(1)])?;
        p.row(rtl::bench_name(&BLOCKS, variant), n, c, 1);
    }
    Ok(p)
}
