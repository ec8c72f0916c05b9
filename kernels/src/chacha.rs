//! ChaCha20 (RFC 8439) keystream XOR: four blocks in vector lanes interleaved with a fifth
//! block in scalar registers, or scalar only.
//!
//! ```text
//! OpenSSL: void ChaCha20_ctr32(unsigned char *out, const unsigned char *inp, size_t len,
//!                              const unsigned int key[8], const unsigned int counter[4]);
//! Linux:   void chacha_<variant>(u32 state[16], const u8 *in, u8 *out, size_t nblocks,
//!                                int nrounds);
//! Go:      func chaCha20Ctr32<V>(out *byte, inp *byte, len uint64, key *uint32, counter *uint32)
//! ```
//! OpenSSL: `counter[0]` is the 32-bit block counter (it wraps without carrying into
//! `counter[1]`, and is not written back), `counter[1..3]` the nonce; any `len`, a partial
//! last block included; `out == inp` allowed. Linux: `state` is the 16-word ChaCha state
//! (constants, key, counter, nonce); `nblocks > 0` full blocks; `nrounds` 8, 12 or 20; the
//! counter (word 12) is written back. Go: as OpenSSL; `<V>` is the variant in Go spelling
//! (`C906Novector`, `Rv64gc`).
//!
//! Variants: `c906` runs four blocks in XTheadVector lanes (e32, m1; VLEN 128) and a fifth
//! in scalar registers, interleaved so both units stay busy, for every 320 bytes; the rest
//! (and buffers not 4-byte aligned: XTheadVector's 32-bit strided accesses need aligned
//! addresses) goes through the scalar block. Rotations: `th.srriw` on the scalar side,
//! shift-right plus multiply-add (`d·2^n + (d >> (32-n))`) on the vector side, which has no
//! rotate. `c906-novector`: scalar only with `th.srriw`. `rv64gcv`: RVV 1.0 lanes (vl = 4
//! whatever VLEN) plus a scalar block with Zbb's `roriw`. `rva23`: the same with Zvkb's
//! `vror.vi` for the vector rotations (one instruction instead of two). `rv64gc`: scalar only, rotations
//! as two shifts and an or. The vector code is written once, in RVV 1.0 mnemonics, and
//! emitted in each target's dialect (`vadd.vv` becomes `th.vadd.vv` on the C906); the
//! accesses whose meaning differs (strided loads, the mask) are written per dialect.
//!
//! Alignment: the C906 does misaligned scalar accesses in hardware, so its variants use
//! 32-bit loads and stores on any pointer. Other cores may trap on them (Linux emulates them
//! slowly), so there each block tests `(inp | out) & 3` and XORs misaligned buffers byte by
//! byte, as CRYPTOGAMS' chacha-riscv does; the vector lanes only ever see aligned buffers.
//!
//! Go (ABI0): 25 integer registers are free (`ra` among them: a function that writes it gets
//! a Go frame, whose prologue saves it). The scalar block needs 16 state words, 2
//! temporaries and out, inp, len, the counter and the key, counter and sigma pointers: 25.
//! The Go builds are the OpenSSL builds' code; where it needs more registers than Go leaves
//! (the lane variants' vector paths: three more pointers and a loop counter) the allocator
//! spills a few values into a Go frame (`kgen check` lists them).
//!
//! Keystream never reaches memory (a partial block is XORed straight from the registers);
//! the vector registers and any scalar registers that held keystream are wiped before
//! returning.

use crate::{Kernel, Variant};
use kgen_dsl::kernel::hooks::{Hook, Linux, LinuxSlot, Openssl, OpensslSlot, XCrypto, XCryptoSlot};
use kgen_dsl::kernel::kat::{self, unhex, Arg::*};
use kgen_dsl::kernel::{figure, measured, rtl, Bench, Harness, Measured};
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::isa::VDialect;
use kgen_dsl::object::DataObj;
use kgen_dsl::target::{Misaligned, Target};
use kgen_dsl::{Abi, BuildError, Ext, Func, Label, Module, Reg};
use kgen_macros::kasm;

pub const KERNEL: Kernel = Kernel {
    benches: &[Bench { abi: Abi::Psabi, module: None, drive: bench }, Bench { abi: Abi::Go, module: None, drive: bench }],
    kat: Some(kat),
    rtl: Some(rtl_plan),
    hooks: &[
        Hook::Openssl(Openssl { slot: OpensslSlot::ChaCha20, variants: &["c906", "c906-novector"], entries: &[&CTR32] }),
        Hook::XCrypto(XCrypto { slot: XCryptoSlot::ChaCha20, variants: &["c906", "c906-novector"], module: None, entries: &[&CTR32] }),
        Hook::Linux(Linux { slot: LinuxSlot::ChaCha20, variants: &["c906", "c906-novector", "rv64gcv", "rv64gc"], entries: &[&LINUX] }),
    ],
    ..Kernel::new(
        "chacha20",
        "ChaCha20 keystream XOR: 4 vector lanes + 1 scalar block, or scalar (OpenSSL, Linux; Go for the scalar variants)",
        &[
            Variant { name: "c906", target: "c906", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
            Variant { name: "c906-novector", target: "c906-novector", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
            Variant { name: "rv64gcv", target: "rv64gcv", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[128, 256, 512] },
            Variant { name: "rv64gc", target: "rv64gc", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[] },
            Variant { name: "rva23", target: "rva23", abis: &[Abi::Psabi, Abi::Linux, Abi::Go], build, vlens: &[128, 256, 512] },
        ],
        ENTRIES,
    )
};

/// `void ChaCha20_ctr32(unsigned char *out, const unsigned char *inp, size_t len, const
/// unsigned int key[8], const unsigned int counter[4])` (OpenSSL; the same in Go).
pub const CTR32: Entry = Entry {
    kernel: "chacha20",
    prefix: "ChaCha20_ctr32_",
    suffix: "",
    alias: Some("ChaCha20_ctr32"),
    abis: &[Abi::Psabi, Abi::Go],
    params: &[
        Param::ptr("out", Elem::U8, Out, false),
        Param::ptr("inp", Elem::U8, In, true),
        Param::val("len", Ty::Size, false),
        Param::ptr("key", Elem::U32, In, true),
        Param::ptr("counter", Elem::U32, In, false),
    ],
    ret: Ret::Void,
    summary: "ChaCha20 keystream XOR, 20 rounds, 32-bit counter",
};

/// `void chacha_<variant>(u32 state[16], const u8 *in, u8 *out, size_t nblocks, int
/// nrounds)` (Linux).
pub const LINUX: Entry = Entry {
    kernel: "chacha20",
    prefix: "chacha_",
    suffix: "",
    alias: None,
    abis: &[Abi::Linux],
    params: &[
        // The constants, the counter and the nonce are public; the key (words 4..12) is not.
        Param::ptr("state", Elem::U32, InOut, true).public(&[(0, 16), (48, 64)]),
        Param::ptr("in", Elem::U8, In, true),
        Param::ptr("out", Elem::U8, Out, false),
        Param::val("nblocks", Ty::Size, false),
        Param::val("nrounds", Ty::I32, false),
    ],
    ret: Ret::Void,
    summary: "ChaCha keystream XOR of whole blocks, nrounds 8/12/20, counter written back",
};

/// Every entry point of the kernel.
pub const ENTRIES: &[&Entry] = &[&CTR32, &LINUX];

/// "expand 32-byte k"
pub const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Quarter-round index sets: four columns, then four diagonals.
pub(crate) const COLUMNS: [[usize; 4]; 4] = [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]];
pub(crate) const DIAGONALS: [[usize; 4]; 4] = [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]];

#[derive(Clone, Copy, PartialEq, Eq)]
enum ScalarRot {
    /// th.srriw (XTheadBb)
    Thead,
    /// roriw (Zbb)
    Zbb,
    /// slliw + srliw + or
    Shifts,
}

#[derive(Clone, Copy)]
pub(crate) struct Isa {
    rot: ScalarRot,
    vector: Option<VDialect>,
    /// Zvkb's `vror.vi` for the vector rotations (else shift right + multiply-add).
    vror: bool,
    /// Misaligned 32-bit accesses may trap: misaligned buffers are XORed byte by byte.
    slow_misaligned: bool,
}

impl Isa {
    /// The lane path wherever the target has a vector unit.
    pub(crate) fn of(t: &Target) -> Isa {
        let rot = if t.has(Ext::XTheadBb) {
            ScalarRot::Thead
        } else if t.has(Ext::Zbb) {
            ScalarRot::Zbb
        } else {
            ScalarRot::Shifts
        };
        let vector = t.vdialect();
        Isa { rot, vector, vror: vector == Some(VDialect::V1) && t.has(Ext::Zvkb), slow_misaligned: t.misaligned == Misaligned::Slow }
    }
}

/// x = x <<< n (32-bit) on the scalar side.
pub(crate) fn rotl(f: &mut Func, isa: Isa, x: Reg, n: u32, tmp: Reg) {
    let r = 32 - n;
    match isa.rot {
        ScalarRot::Thead => kasm!(f, th.srriw {x}, {x}, {r};),
        ScalarRot::Zbb => kasm!(f, roriw {x}, {x}, {r};),
        ScalarRot::Shifts => kasm!(f, slliw {tmp}, {x}, {n}; srliw {x}, {x}, {r}; or {x}, {x}, {tmp};),
    }
}

/// One quarter round on scalar registers.
pub(crate) fn scalar_quarter_round(f: &mut Func, isa: Isa, [a, b, c, d]: [Reg; 4], tmp: Reg) {
    f.comment("a += b; d ^= a; d <<<= 16; c += d; b ^= c; b <<<= 12; ... 8, 7");
    for (p, q, r, n) in [(a, b, d, 16), (c, d, b, 12), (a, b, d, 8), (c, d, b, 7)] {
        kasm!(f, addw {p}, {p}, {q}; xor {r}, {r}, {p};);
        rotl(f, isa, r, n, tmp);
    }
}

/// One double round on the scalar state (four column then four diagonal quarter rounds).
fn scalar_double_round(f: &mut Func, isa: Isa, x: &[Reg; 16], tmp: Reg) {
    for set in [COLUMNS, DIAGONALS] {
        for [a, b, c, d] in set {
            scalar_quarter_round(f, isa, [x[a], x[b], x[c], x[d]], tmp);
        }
    }
}

/// Vector registers of the lane path.
pub(crate) struct VRegs {
    pub(crate) v: [Reg; 16],
    pub(crate) t: [Reg; 4],
    /// Splat 2^16, 2^12, 2^8, 2^7 (rotation by multiply-add).
    pub(crate) k: [Reg; 4],
    pub(crate) vid: Reg,
}

/// One double round on the four-lane vector state: the four quarter rounds of each half
/// run in lockstep so every instruction's inputs are at least four instructions old.
/// Rotate: t = d >> (32-n); d = d·2^n + t (vmadd).
fn vector_double_round(f: &mut Func, isa: Isa, r: &VRegs) {
    for set in [COLUMNS, DIAGONALS] {
        vector_quarter_rounds(f, isa, r, &set);
    }
}

/// Up to four quarter rounds (index sets `set`) on the vector state, in lockstep; the
/// rotation temporaries are `r.t[0..set.len()]`.
pub(crate) fn vector_quarter_rounds(f: &mut Func, isa: Isa, r: &VRegs, set: &[[usize; 4]]) {
    for (step, (pi, qi, ri, n)) in [(0usize, 1usize, 3usize, 16i64), (2, 3, 1, 12), (0, 1, 3, 8), (2, 3, 1, 7)].into_iter().enumerate() {
        let k = r.k[step];
        for q in set {
            let (p, s) = (r.v[q[pi]], r.v[q[qi]]);
            kasm!(f, vadd.vv {p}, {p}, {s};);
        }
        for q in set {
            let (p, d) = (r.v[q[pi]], r.v[q[ri]]);
            kasm!(f, vxor.vv {d}, {d}, {p};);
        }
        let sh = 32 - n;
        if isa.vror {
            for q in set {
                let d = r.v[q[ri]];
                kasm!(f, vror.vi {d}, {d}, {sh};);
            }
            continue;
        }
        for (j, q) in set.iter().enumerate() {
            let (t, d) = (r.t[j], r.v[q[ri]]);
            kasm!(f, vsrl.vi {t}, {d}, {sh};);
        }
        for (j, q) in set.iter().enumerate() {
            let (t, d) = (r.t[j], r.v[q[ri]]);
            kasm!(f, vmadd.vv {d}, {k}, {t};);
        }
    }
}

/// Where state word i comes from.
#[derive(Clone, Copy)]
enum Words {
    /// OpenSSL/Go: constants from the sigma table, key[0..8], counter[1..3].
    Split { sigma: Reg, key: Reg, counter: Reg },
    /// Linux: the 16-word state.
    State { state: Reg },
}

/// A state word: in memory at (base register, byte offset).
#[derive(Clone, Copy)]
struct Word(Reg, i64);

impl Words {
    /// Where word i is (word 12, the counter, is in a register).
    fn src(&self, i: usize) -> Word {
        match *self {
            Words::Split { sigma, key, counter } => match i {
                0..=3 => Word(sigma, 4 * i as i64),
                4..=11 => Word(key, 4 * (i as i64 - 4)),
                _ => Word(counter, 4 * (i as i64 - 12)),
            },
            Words::State { state } => Word(state, 4 * i as i64),
        }
    }
}

/// dst = word i (sign-extended, as `lw` leaves it).
fn load_word(f: &mut Func, w: &Words, i: usize, dst: Reg) {
    let Word(b, off) = w.src(i);
    kasm!(f, lw {dst}, {off}({b}););
}

/// Registers shared by the paths.
struct Ctx {
    isa: Isa,
    words: Words,
    out: Reg,
    inp: Reg,
    len: Reg,
    ctr: Reg,
    /// Double rounds, when they vary (the Linux entry); else 10.
    drs: Option<Reg>,
    x: [Reg; 16],
    t: [Reg; 2],
    /// Pointer temporaries of the lane output.
    p: [Reg; 3],
    /// Double-round counter of the vector paths.
    dr: Reg,
}

/// x_i = state word i (x12 = ctr + ctr_add).
fn init_scalar(f: &mut Func, c: &Ctx, ctr_add: i64) {
    for (i, &x) in c.x.iter().enumerate() {
        if i == 12 {
            let ctr = c.ctr;
            kasm!(f, addiw {x}, {ctr}, {ctr_add};);
        } else {
            load_word(f, &c.words, i, x);
        }
    }
}

/// x_i += state word i, loads two ahead of their use; with `also_vector`, the lanes add the
/// same words (`ctrv`: the lanes' counters).
fn feed_forward_scalar(f: &mut Func, c: &Ctx, ctr_add: i64, also_vector: Option<(&VRegs, Reg)>) {
    let n = 16;
    for k in 0..n + 1 {
        if k < n {
            let t = c.t[k % 2];
            if k == 12 {
                let ctr = c.ctr;
                kasm!(f, addiw {t}, {ctr}, {ctr_add};);
            } else {
                load_word(f, &c.words, k, t);
            }
        }
        if k >= 1 {
            let i = k - 1;
            let (x, t) = (c.x[i], c.t[i % 2]);
            kasm!(f, addw {x}, {x}, {t};);
            if let Some((v, ctrv)) = also_vector {
                let vi = v.v[i];
                if i == 12 {
                    kasm!(f, vadd.vv {vi}, {vi}, {ctrv};);
                } else {
                    // Word i of every lane is the same as the scalar block's (before add).
                    kasm!(f, vadd.vx {vi}, {vi}, {t};);
                }
            }
        }
    }
}

/// Ten double rounds unrolled; with `variable` set, enters at double round 10 - drs
/// (drs = 10, 6 or 4 for 20, 12 or 8 rounds). `dr` emits one double round.
fn unrolled(f: &mut Func, c: &Ctx, mut dr: impl FnMut(&mut Func)) {
    f.scope(|f| {
        if let Some(drs) = c.drs {
            let t = c.t[0];
            kasm!(f, addi {t}, zero, 6; beq {drs}, {t}, dr4; addi {t}, zero, 4; beq {drs}, {t}, dr6;);
        }
        for k in 0..10 {
            if c.drs.is_some() && k == 4 {
                kasm!(f, dr4:);
            }
            if c.drs.is_some() && k == 6 {
                kasm!(f, dr6:);
            }
            f.comment(format!("double round {} of 10", k + 1));
            dr(f);
        }
    })
}

/// out[0..64] = inp[0..64] ^ x (32-bit words; loads issued ahead of their use).
fn xor_block_scalar(f: &mut Func, c: &Ctx, off: i64) {
    let (inp, out) = (c.inp, c.out);
    for k in 0..17 {
        if k < 16 {
            let (t, o) = (c.t[k % 2], off + 4 * k as i64);
            kasm!(f, lw {t}, {o}({inp}););
        }
        if k >= 1 {
            let i = k - 1;
            let (t, x, o) = (c.t[i % 2], c.x[i], off + 4 * i as i64);
            kasm!(f, xor {t}, {t}, {x}; sw {t}, {o}({out}););
        }
    }
}

/// out[0..64] = inp[0..64] ^ x byte by byte (misaligned buffers where misaligned words are
/// slow); the x words are consumed.
fn xor_block_bytes(f: &mut Func, c: &Ctx) {
    let (inp, out, a) = (c.inp, c.out, c.t[0]);
    for (i, &x) in c.x.iter().enumerate() {
        for b in 0..4 {
            let o = 4 * i as i64 + b;
            kasm!(f, lbu {a}, {o}({inp}); xor {a}, {a}, {x}; sb {a}, {o}({out}););
            if b < 3 {
                kasm!(f, srli {x}, {x}, 8;);
            }
        }
    }
}

/// The entry points of one copy of the scalar path, for code outside it.
struct ScalarEntry {
    top: Label,
    partial: Label,
    done: Label,
}

impl ScalarEntry {
    fn new(f: &mut Func) -> ScalarEntry {
        ScalarEntry { top: f.label(), partial: f.label(), done: f.label() }
    }
}

/// Scalar path: one block at a time; a partial last block straight from the registers.
/// `aligned`: the pointers are known 4-byte aligned here (no byte path needed).
fn scalar_path(f: &mut Func, c: &Ctx, e: &ScalarEntry, aligned: bool) {
    let (out, inp, len, ctr) = (c.out, c.inp, c.len, c.ctr);
    let [t0, _] = c.t;
    let (top, partial, done) = (e.top, e.partial, e.done);
    let bytes = c.isa.slow_misaligned && !aligned;
    f.scope(|f| {
        f.bind(top);
        kasm!(f, beqz {len}, {done}; block:);
        init_scalar(f, c, 0);
        let tmp = c.t[0];
        unrolled(f, c, |f| scalar_double_round(f, c.isa, &c.x, tmp));
        feed_forward_scalar(f, c, 0, None);
        kasm!(f, addi {t0}, zero, 64; bltu {len}, {t0}, {partial};);
        if bytes {
            f.comment("misaligned buffers: byte by byte");
            kasm!(f, or {t0}, {out}, {inp}; andi {t0}, {t0}, 3; bnez {t0}, block_bytes;);
        }
        xor_block_scalar(f, c, 0);
        kasm!(f,
        next_block:
            addi {out}, {out}, 64;
            addi {inp}, {inp}, 64;
            addi {len}, {len}, -64;
            addiw {ctr}, {ctr}, 1;
            bnez {len}, block;
            j {done};
        );
        if bytes {
            kasm!(f, block_bytes:);
            xor_block_bytes(f, c);
            kasm!(f, j next_block;);
        }
        f.bind(partial);
        f.comment("partial block (len < 64): whole words while 4 bytes remain, then the last bytes of the next keystream word, from the registers (no keystream in memory)");
        let [a, w] = c.t;
        if bytes {
            kasm!(f, or {a}, {out}, {inp}; andi {a}, {a}, 3; bnez {a}, partial_bytes;);
        }
        let whole_words = |f: &mut Func, by_bytes: bool| {
            for i in 0..16usize {
                let x = c.x[i];
                let next = f.label();
                kasm!(f,
                    addi {a}, zero, 4;
                    bgeu {len}, {a}, {next};
                    addi {w}, {x}, 0;
                    j tail;
                );
                f.bind(next);
                if by_bytes {
                    for b in 0..4i64 {
                        kasm!(f, lbu {a}, {b}({inp}); xor {a}, {a}, {x}; sb {a}, {b}({out}););
                        if b < 3 {
                            kasm!(f, srli {x}, {x}, 8;);
                        }
                    }
                } else {
                    kasm!(f, lw {a}, 0({inp}); xor {a}, {a}, {x}; sw {a}, 0({out}););
                }
                kasm!(f,
                    addi {inp}, {inp}, 4;
                    addi {out}, {out}, 4;
                    addi {len}, {len}, -4;
                );
            }
            f.comment("unreachable: len < 64 leaves at most 15 whole words");
        };
        whole_words(f, false);
        if bytes {
            kasm!(f, partial_bytes:);
            whole_words(f, true);
        }
        kasm!(f,
        tail:
            beqz {len}, skip;
        byte:
            lbu {a}, 0({inp});
            xor {a}, {a}, {w};
            sb {a}, 0({out});
            srli {w}, {w}, 8;
            addi {inp}, {inp}, 1;
            addi {out}, {out}, 1;
            addi {len}, {len}, -1;
            bnez {len}, byte;
        skip:
            addiw {ctr}, {ctr}, 1;
        );
        f.bind(done);
    });
}

/// Sets vl = `avl` at e32, m1.
pub(crate) fn set_vl(f: &mut Func, avl: Reg) {
    kasm!(f, vsetvli zero, {avl}, e32, m1, ta, ma;);
}

/// `n` double rounds as a loop (the lane paths have spare scalar issue slots, so the loop
/// costs nothing there); `dr` emits one double round.
fn dr_loop(f: &mut Func, c: &Ctx, mut dr: impl FnMut(&mut Func)) {
    let k = c.dr;
    if let Some(drs) = c.drs {
        kasm!(f, addi {k}, {drs}, 0;);
    } else {
        kasm!(f, addi {k}, zero, 10;);
    }
    f.scope(|f| {
        kasm!(f, dr:);
        dr(f);
        kasm!(f, addi {k}, {k}, -1; bnez {k}, dr;);
    });
}

/// t = 32-bit elements at base, base + 64, ... (one word of each lane's block).
fn load_strided(f: &mut Func, d: VDialect, t: Reg, base: Reg, stride: Reg) {
    match d {
        VDialect::Thead => kasm!(f, th.vlsw.v {t}, ({base}), {stride};),
        VDialect::V1 => kasm!(f, vlse32.v {t}, ({base}), {stride};),
    }
}

fn store_strided(f: &mut Func, d: VDialect, t: Reg, base: Reg, stride: Reg) {
    match d {
        VDialect::Thead => kasm!(f, th.vssw.v {t}, ({base}), {stride};),
        VDialect::V1 => kasm!(f, vsse32.v {t}, ({base}), {stride};),
    }
}

/// t = the four 32-bit words at base.
pub(crate) fn load_row(f: &mut Func, d: VDialect, t: Reg, base: Reg) {
    match d {
        VDialect::Thead => kasm!(f, th.vlw.v {t}, ({base});),
        VDialect::V1 => kasm!(f, vle32.v {t}, ({base});),
    }
}

pub(crate) fn store_row(f: &mut Func, d: VDialect, t: Reg, base: Reg) {
    match d {
        VDialect::Thead => kasm!(f, th.vsw.v {t}, ({base});),
        VDialect::V1 => kasm!(f, vse32.v {t}, ({base});),
    }
}

/// One iteration of `lanes` vector blocks (vl = lanes) and a scalar block after them. With
/// `full`, lanes = 4 and the scalar block is written too (320 bytes); otherwise the scalar
/// block's keystream is left in x for the caller.
fn lanes_iteration(f: &mut Func, c: &Ctx, d: VDialect, v: &VRegs, ctrv: Reg, lanes: Reg, full: bool) {
    let (out, inp) = (c.out, c.inp);
    let ctr = c.ctr;
    f.comment("state words into the scalar block and (splat) the lanes; lane k counts ctr+k, the scalar block ctr+lanes");
    init_scalar(f, c, 0);
    let x12 = c.x[12];
    kasm!(f, addw {x12}, {ctr}, {lanes};);
    for (i, &x) in c.x.iter().enumerate() {
        let (vi, src) = (v.v[i], if i == 12 { c.ctr } else { x });
        kasm!(f, vmv.v.x {vi}, {src};);
    }
    let (v12, vid) = (v.v[12], v.vid);
    kasm!(f, vadd.vv {v12}, {v12}, {vid}; vmv.v.v {ctrv}, {v12};);
    dr_loop(f, c, |f| {
        f.comment("four vector lanes interleaved with the scalar block");
        f.interleave(|f| vector_double_round(f, c.isa, v), |f| scalar_double_round(f, c.isa, &c.x, c.t[0]));
    });
    f.comment("feed-forward: the scalar block and the lanes add the same state words");
    feed_forward_scalar(f, c, 0, Some((v, ctrv)));
    // The scalar block's counter was ctr + lanes; feed_forward added ctr: add lanes too.
    kasm!(f, addw {x12}, {x12}, {lanes};);
    f.comment("output: lane k's word i at 64k + 4i (strided by 64)");
    let (pi, po, stride) = (c.p[0], c.p[1], c.p[2]);
    let vec_io = |f: &mut Func| {
        kasm!(f, addi {pi}, {inp}, 0; addi {po}, {out}, 0; addi {stride}, zero, 64;);
        for k in 0..18 {
            if k < 16 {
                let t = v.t[k % 4];
                load_strided(f, d, t, pi, stride);
                kasm!(f, addi {pi}, {pi}, 4;);
            }
            if k >= 2 {
                let i = k - 2;
                let (t, vi) = (v.t[i % 4], v.v[i]);
                kasm!(f, vxor.vv {t}, {t}, {vi};);
                store_strided(f, d, t, po, stride);
                kasm!(f, addi {po}, {po}, 4;);
            }
        }
    };
    if full {
        f.comment("... interleaved with the scalar block's, bytes 256..320");
        f.interleave(vec_io, |f| xor_block_scalar(f, c, 256));
    } else {
        vec_io(f);
    }
}

/// The vector paths, for buffers whose pointers are 4-byte aligned: every 320 bytes four
/// lanes and a scalar block; a 192..319-byte rest as 3 or 4 lanes plus a partial scalar
/// block; a 128..191-byte rest as one block in rows (horizontal) plus a scalar block.
fn vector_path(f: &mut Func, c: &Ctx, d: VDialect, tail: &ScalarEntry, short: Label) {
    let (out, inp, len, ctr) = (c.out, c.inp, c.len, c.ctr);
    let (scalar_top, partial, done) = (tail.top, tail.partial, tail.done);
    let v = VRegs { v: f.vregs::<16>("v", 1), t: f.vregs::<4>("vt", 1), k: f.vregs::<4>("k", 1), vid: f.vreg("vid", 1) };
    let ctrv = f.vreg("ctrv", 1);
    let [t0, _] = c.t;
    let lanes = f.xreg("lanes");
    f.public(lanes);
    f.scope(|f| {
        f.comment("unaligned buffers: the scalar copy that never touched a vector register (its exit wipes none)");
        kasm!(f,
            or {t0}, {out}, {inp};
            andi {t0}, {t0}, 3;
            bnez {t0}, {short};
        );
        f.comment("vector set-up: e32, m1, vl = 4; rotation multipliers 2^16, 2^12, 2^8, 2^7; lane indices");
        kasm!(f, addi {lanes}, zero, 4;);
        set_vl(f, lanes);
        if !c.isa.vror {
            for (j, sh) in [16i64, 12, 8, 7].into_iter().enumerate() {
                let kj = v.k[j];
                f.li(t0, 1 << sh);
                kasm!(f, vmv.v.x {kj}, {t0};);
            }
        }
        let vid = v.vid;
        kasm!(f,
            vid.v {vid};
        lanes_loop:
            addi {t0}, zero, 320;
            bltu {len}, {t0}, lanes_rest;
            addi {lanes}, zero, 4;
        );
        lanes_iteration(f, c, d, &v, ctrv, lanes, true);
        kasm!(f,
            addi {out}, {out}, 320;
            addi {inp}, {inp}, 320;
            addi {len}, {len}, -320;
            addiw {ctr}, {ctr}, 5;
            j lanes_loop;
        lanes_rest:
            addi {t0}, zero, 128;
            bltu {len}, {t0}, {scalar_top};
            addi {t0}, zero, 192;
            bltu {len}, {t0}, rows;
            // lanes = min(4, len / 64) (len < 320 here, so len / 64 <= 4)
            srli {lanes}, {len}, 6;
        );
        set_vl(f, lanes);
        lanes_iteration(f, c, d, &v, ctrv, lanes, false);
        kasm!(f,
            srli {lanes}, {len}, 6;
            slli {t0}, {lanes}, 6;
            add {out}, {out}, {t0};
            add {inp}, {inp}, {t0};
            sub {len}, {len}, {t0};
            addw {ctr}, {ctr}, {lanes};
            bnez {len}, {partial};
            j {done};
        rows:
        );
        rows_path(f, c, d, &v);
        kasm!(f, j {scalar_top};);
    });
}

/// One block with its rows in four vector registers (words 0-3, 4-7, 8-11, 12-15) and the
/// next block in scalar registers, interleaved: 128 bytes for buffers of 128..191 bytes,
/// where four lanes would waste most of their work.
fn rows_path(f: &mut Func, c: &Ctx, d: VDialect, v: &VRegs) {
    let (out, inp, len, ctr) = (c.out, c.inp, c.len, c.ctr);
    let (r, tt) = ([v.v[0], v.v[1], v.v[2], v.v[3]], [v.v[4], v.v[5], v.v[6], v.v[7]]);
    let idx = [v.v[8], v.v[9], v.v[10]];
    let (mask, orig) = (v.v[11], [v.v[12], v.v[13], v.v[14], v.v[15]]);
    f.comment("rotation indices idx_k[i] = (i + k) mod 4; mask selects element 0 (the counter)");
    let vid = v.vid;
    for k in 0..3usize {
        let (ik, add) = (idx[k], (k + 1) as i64);
        kasm!(f, vadd.vi {ik}, {vid}, {add}; vand.vi {ik}, {ik}, 3;);
    }
    // The mask's layout differs between the dialects: written per dialect.
    match d {
        VDialect::Thead => kasm!(f, th.vmseq.vi {mask}, {vid}, 0;),
        VDialect::V1 => kasm!(f, vmseq.vi {mask}, {vid}, 0;),
    }
    f.comment("rows of the state: word sources per ABI; the counter word is ctr (merged in)");
    let pr = c.p[0];
    for k in 0..4 {
        let Word(b, o) = c.words.src(4 * k);
        kasm!(f, addi {pr}, {b}, {o};);
        load_row(f, d, orig[k], pr);
    }
    let o3 = orig[3];
    f.set_mask(mask);
    match d {
        VDialect::Thead => kasm!(f, th.vmerge.vxm {o3}, {o3}, {ctr}, v0;),
        VDialect::V1 => kasm!(f, vmerge.vxm {o3}, {o3}, {ctr}, v0;),
    }
    for k in 0..4 {
        let (rk, ok) = (r[k], orig[k]);
        kasm!(f, vmv.v.v {rk}, {ok};);
    }
    f.comment("the scalar block is the second: counter ctr + 1");
    init_scalar(f, c, 1);
    dr_loop(f, c, |f| {
        let rows_dr = |f: &mut Func| {
            let mut r = r;
            let mut tt = tt;
            for half in 0..2 {
                for (step, (p, q, s, n)) in [(0usize, 1usize, 3usize, 16i64), (2, 3, 1, 12), (0, 1, 3, 8), (2, 3, 1, 7)].into_iter().enumerate() {
                    let (rp, rq, rs, t0, kk, sh) = (r[p], r[q], r[s], tt[0], v.k[step], 32 - n);
                    kasm!(f, vadd.vv {rp}, {rp}, {rq}; vxor.vv {rs}, {rs}, {rp};);
                    if c.isa.vror {
                        kasm!(f, vror.vi {rs}, {rs}, {sh};);
                    } else {
                        kasm!(f, vsrl.vi {t0}, {rs}, {sh}; vmadd.vv {rs}, {kk}, {t0};);
                    }
                }
                // rows b, c, d rotate left by 1, 2, 3 words (then back by 3, 2, 1)
                for row in 1..4usize {
                    let k = if half == 0 { row } else { 4 - row };
                    let (dst, src, ix) = (tt[row], r[row], idx[k - 1]);
                    kasm!(f, vrgather.vv {dst}, {src}, {ix};);
                    std::mem::swap(&mut r[row], &mut tt[row]);
                }
            }
        };
        f.interleave(rows_dr, |f| scalar_double_round(f, c.isa, &c.x, c.t[0]));
    });
    f.comment("feed-forward and output: the rows block at 0..64, the scalar block at 64..128");
    for k in 0..4 {
        let (rk, ok) = (r[k], orig[k]);
        kasm!(f, vadd.vv {rk}, {rk}, {ok};);
    }
    feed_forward_scalar(f, c, 1, None);
    let vec_io = |f: &mut Func| {
        for k in 0..4 {
            let off = 16 * k as i64;
            kasm!(f, addi {pr}, {inp}, {off};);
            load_row(f, d, tt[k], pr);
        }
        for k in 0..4 {
            let (off, po, tk, rk) = (16 * k as i64, c.p[1], tt[k], r[k]);
            kasm!(f, vxor.vv {tk}, {tk}, {rk}; addi {po}, {out}, {off};);
            store_row(f, d, tk, po);
        }
    };
    f.interleave(vec_io, |f| xor_block_scalar(f, c, 64));
    kasm!(f,
        addi {out}, {out}, 128;
        addi {inp}, {inp}, 128;
        addi {len}, {len}, -128;
        addiw {ctr}, {ctr}, 2;
    );
}

/// The whole body; `exit` emits what follows it (the Linux counter write-back) and the
/// return. With a vector path, short and unaligned buffers take a second copy of the scalar
/// path with its own exit, so they pay neither the vector set-up nor the vector wipe.
fn body(f: &mut Func, isa: Isa, words: Words, out: Reg, inp: Reg, len: Reg, ctr: Reg, drs: Option<Reg>, exit: &dyn Fn(&mut Func)) {
    let x = f.xregs::<16>("x");
    let t = f.xregs::<2>("t");
    let p = f.xregs::<3>("p");
    let dr = f.xreg("dr");
    let c = Ctx { isa, words, out, inp, len, ctr, drs, x, t, p, dr };
    let tail = ScalarEntry::new(f);
    match isa.vector {
        Some(d) => {
            let short = ScalarEntry::new(f);
            let vector = f.label();
            let [t0, _] = c.t;
            // if (len < 128) the scalar copy that never touches a vector register (its exit
            // wipes none), placed next so the branch to it is near and taken (a branch seen
            // first is predicted taken; the vector path is beyond a conditional branch's reach)
            kasm!(f, addi {t0}, zero, 128; bltu {len}, {t0}, {short.top}; j {vector};);
            scalar_path(f, &c, &short, false);
            exit(f);
            f.bind(vector);
            vector_path(f, &c, d, &tail, short.top);
            // Reached only from the vector path: the pointers are 4-byte aligned there.
            scalar_path(f, &c, &tail, true);
            exit(f);
        }
        None => {
            scalar_path(f, &c, &tail, false);
            exit(f);
        }
    }
}

/// OpenSSL (and Go) entry: ChaCha20_ctr32(out, inp, len, key, counter); the constants are
/// loaded from the table `sigma`.
fn openssl_fn(isa: Isa, variant: &str, t: &Target, abi: Abi, sigma: &str) -> Func {
    let mut f = Func::entry(&CTR32, variant, t, abi);
    let [out, inp, len, key, counter] = f.params();
    let sig = f.xreg("sigma");
    f.public(sig);
    f.la(sig, sigma);
    let ctr = f.xreg("ctr");
    kasm!(f, lw {ctr}, 0({counter}););
    body(&mut f, isa, Words::Split { sigma: sig, key, counter }, out, inp, len, ctr, None, &|f| f.ret());
    f
}

/// Linux entry: chacha_<variant>(state, in, out, nblocks, nrounds); writes the counter back.
fn linux_fn(isa: Isa, variant: &str, t: &Target) -> Func {
    let mut f = Func::entry(&LINUX, variant, t, Abi::Linux);
    let [state, inp, out, nblocks, nrounds] = f.params();
    let (len, ctr, drs) = (f.xreg("len"), f.xreg("ctr"), f.xreg("drs"));
    f.public(drs);
    kasm!(f,
        slli {len}, {nblocks}, 6;
        lw {ctr}, 48({state});
        srli {drs}, {nrounds}, 1;
    );
    body(&mut f, isa, Words::State { state }, out, inp, len, ctr, Some(drs), &|f| {
        kasm!(f, sw {ctr}, 48({state}););
        f.ret();
    });
    f
}

fn build(variant: &str, t: &Target, abi: Abi) -> Result<Module, BuildError> {
    let isa = Isa::of(t);
    let mut m = Module::new("chacha20", variant, t, abi);
    m.notes = vec!["ChaCha20 (RFC 8439). Constant time: no secret-dependent branches or addresses.".into()];
    match abi {
        Abi::Linux => {
            m.add(linux_fn(isa, variant, t), true)?;
        }
        _ => {
            let sigma = format!("kgen_chacha_{}_sigma", kgen_dsl::entry::symbol_suffix(variant));
            let bytes: Vec<u8> = SIGMA.iter().flat_map(|w| w.to_le_bytes()).collect();
            m.add_data(DataObj { name: sigma.clone(), align: 4, bytes, elem: 4, global: false, comment: "\"expand 32-byte k\"".into() });
            m.add(openssl_fn(isa, variant, t, abi, &sigma), true)?;
        }
    }
    Ok(m)
}

// ---- what the commands need: benchmark, known answers, RTL plan, hooks --------------------------

/// The key and counter block the benchmarks use (the values do not change the cost).
const BENCH_KEY: [u8; 32] = [0x42; 32];
const BENCH_COUNTER: [u8; 16] = [1, 0, 0, 0, 9, 9, 9, 9, 7, 7, 7, 7, 5, 5, 5, 5];

/// `kgen bench chacha20`: `ChaCha20_ctr32` over the size, in place.
fn bench(h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Measured>, String> {
    let key = h.buffer(&BENCH_KEY, 0, false);
    let ctr = h.buffer(&BENCH_COUNTER, 0, false);
    let (name, f) = h.entry(&CTR32)?;
    let mut rows = Vec::new();
    for &n in sizes {
        let buf = h.buffer(&vec![0x5a; n], 0, true);
        let m = measured(h, |h| h.call(f, &[buf, buf, n as u64, key, ctr]))?;
        rows.push(figure(&name, n, m));
    }
    Ok(rows)
}

/// The ChaCha20 block function (RFC 8439 2.3) for a 32-bit counter, written out as the RFC
/// gives it: the known answers past the RFC's own bytes come from it (tests/jit.rs checks it
/// against RustCrypto).
pub fn chacha20_block(key: &[u8; 32], counter: u32, nonce: &[u8; 12]) -> [u8; 64] {
    let word = |b: &[u8], i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&SIGMA);
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
        for q in COLUMNS.into_iter().chain(DIAGONALS) {
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

/// RFC 8439 2.4.2: key 00..1f, nonce 000000000000004a00000000, counter 1, this plaintext
/// and its ciphertext.
pub const RFC_PT: &[u8] = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
pub const RFC_CT: &str = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d";
pub const RFC_NONCE: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0];

/// Known answers: RFC 8439 2.4.2 alone (114 bytes) and at the start of 512- and 1100-byte
/// buffers, so vector variants compute it in their lanes and rows; the bytes past the
/// RFC's come from [`chacha20_xor`].
fn kat(v: &str) -> Result<kat::Plan, String> {
    let mut p = kat::Plan::default();
    let key: [u8; 32] = std::array::from_fn(|i| i as u8);
    let kb = p.buf("key", key.to_vec(), 0);
    let mut counter = 1u32.to_le_bytes().to_vec();
    counter.extend_from_slice(&RFC_NONCE);
    let cb = p.buf("counter", counter, 0);
    let rfc = RFC_PT.len();
    for len in [rfc, 512, 1100] {
        let mut data = RFC_PT.to_vec();
        data.resize(len, 0);
        let want = chacha20_xor(&key, 1, &RFC_NONCE, &data);
        let inp = p.buf("inp", data, 0);
        let out = p.buf("out", vec![0; len], 0);
        p.call(&CTR32, v, vec![Buf(out, 0), Buf(inp, 0), Int(len as u64), Buf(kb, 0), Buf(cb, 0)], None);
        p.expect(format!("RFC 8439 2.4.2, {len}-byte buffer"), out, 0, unhex(RFC_CT));
        if len > rfc {
            p.expect(format!("RFC 8439 2.4.2 key, bytes {rfc}..{len} (block function)"), out, rfc, want[rfc..].to_vec());
        }
    }
    Ok(p)
}

/// What [`bench`] measures, on the RTL.
fn rtl_plan(variant: &str, sizes: &[usize]) -> Result<rtl::Plan, String> {
    let mut p = rtl::Plan::new(format!("chacha20 {variant}"));
    let key = p.buf(BENCH_KEY.to_vec());
    let ctr = p.buf(BENCH_COUNTER.to_vec());
    for &n in sizes {
        let b = p.buf(vec![0x5a; n]);
        let c = p.call(&CTR32, variant, vec![b.clone(), b, rtl::Arg::Int(n as u64), key.clone(), ctr.clone()])?;
        p.row(rtl::bench_name(&CTR32, variant), n, c, 1);
    }
    Ok(p)
}
