//! The `c906` variant's counter mode: eight blocks bitsliced in the vector unit
//! ([`super::vslice`]) beside four in the scalar core ([`super::slice`]), twelve blocks a
//! pass, the two instruction streams merged by their modeled issue times so the scalar
//! core issues while the vector unit works.

use super::vslice::{self, Bytes, Perm};
use super::{slice, Gates, StackAt};
use kgen_dsl::isa::VDialect;
use kgen_dsl::{Func, Reg, Slot};
use kgen_macros::kasm;

/// Where the vector side keeps its round keys and state.
pub(super) struct VSide {
    pub d: VDialect,
    /// The permutation table's symbol (16 bytes a table), and where the rounds read the
    /// tables.
    pub tab: String,
    pub tabs: Tabs,
    /// Bytes of frame a round key takes (16, or 64 for VLEN up to 512, replicated).
    pub kstride: i64,
    /// Round 1's key bytes (16 a round, as [`vslice::round_key_bytes`] makes them; the
    /// rounds spread them to planes).
    pub keys: Slot,
    /// The pass offset (64 a pass of four rounds), public.
    pub vpo: Reg,
    /// The state after round 0 and after each pass (the registers of an LMUL-8 group,
    /// which the transposition works on whole); after round 9 or 13; the output (the
    /// registers of another LMUL-8 group).
    pub sl: [Reg; 8],
    pub s9: [Reg; 8],
    pub fin: [Reg; 8],
}

/// Where the rounds read the permutation tables.
#[derive(Clone)]
pub(super) enum Tabs {
    /// A copy in the frame (16 bytes a table; with the scalar stream merged in, no
    /// register holds an address through the rounds).
    Frame(Slot),
    /// The data object `sym`, 64 bytes a table: each table's 16 indices for every 16-byte
    /// group of a register up to VLEN 512 (`16m + idx`).
    Data(String),
}

/// Where a [`VEm`] finds the permutation tables.
#[derive(Clone, Copy)]
pub(super) enum TabAt {
    Frame(Slot),
    /// The address of [`Tabs::Data`]'s object.
    Reg(Reg),
}

impl TabAt {
    /// `t = ` the address of `p`'s indices.
    fn address(self, f: &mut Func, t: Reg, p: Perm) {
        match self {
            TabAt::Frame(slot) => {
                let at = StackAt(slot, p.offset());
                kasm!(f, addi {t}, sp, {at};);
            }
            TabAt::Reg(base) => {
                let o = 4 * p.offset();
                kasm!(f, addi {t}, {base}, {o};);
            }
        }
    }
}

/// The parts of the rounds, as [`super::enc_rounds`] runs them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Seg {
    /// Before the loop of four rounds.
    Start,
    /// One pass of the loop.
    Pass,
    /// Round 9 (AES-128, AES-192) or 13 (AES-256).
    Ninth,
    /// AES-192's rounds 10 and 11 and its last round.
    Aes192,
    /// The last round of AES-128 and AES-256.
    Last,
}

pub(super) fn load(f: &mut Func, d: VDialect, v: Reg, base: Reg) {
    match d {
        VDialect::Thead => kasm!(f, th.vlb.v {v}, ({base});),
        VDialect::V1 => kasm!(f, vle8.v {v}, ({base});),
    }
}

pub(super) fn store(f: &mut Func, d: VDialect, v: Reg, base: Reg) {
    match d {
        VDialect::Thead => kasm!(f, th.vsb.v {v}, ({base});),
        VDialect::V1 => kasm!(f, vse8.v {v}, ({base});),
    }
}

/// [`Bytes`] as vector instructions (e8, vl = 16) on fresh registers; permutation indices
/// loaded from the frame's copy of the table once per emitter, byte masks put in scalar
/// registers once.
pub(super) struct VEm<'a> {
    pub f: &'a mut Func,
    pub d: VDialect,
    pub tab: TabAt,
    idx: Vec<(Perm, Reg)>,
    masks: Vec<(u8, Reg)>,
}

impl<'a> VEm<'a> {
    pub fn new(f: &'a mut Func, d: VDialect, tab: TabAt) -> VEm<'a> {
        VEm { f, d, tab, idx: vec![], masks: vec![] }
    }
    fn v(&mut self) -> Reg {
        self.f.vreg("v", 1)
    }
}

impl Gates for VEm<'_> {
    type V = Reg;
    fn xor(&mut self, a: Reg, b: Reg) -> Reg {
        let d = self.v();
        kasm!(self.f, vxor.vv {d}, {a}, {b};);
        d
    }
    fn and(&mut self, a: Reg, b: Reg) -> Reg {
        let d = self.v();
        kasm!(self.f, vand.vv {d}, {a}, {b};);
        d
    }
    fn not(&mut self, a: Reg) -> Reg {
        let d = self.v();
        kasm!(self.f, vxor.vi {d}, {a}, -1;);
        d
    }
}

impl Bytes for VEm<'_> {
    fn srl(&mut self, a: Reg, n: u32) -> Reg {
        let (d, n) = (self.v(), n as i64);
        kasm!(self.f, vsrl.vi {d}, {a}, {n};);
        d
    }
    fn sll(&mut self, a: Reg, n: u32) -> Reg {
        let (d, n) = (self.v(), n as i64);
        kasm!(self.f, vsll.vi {d}, {a}, {n};);
        d
    }
    fn mask(&mut self, a: Reg, m: u8) -> Reg {
        let r = match self.masks.iter().find(|(k, _)| *k == m) {
            Some(&(_, r)) => r,
            None => {
                let r = self.f.xreg("m");
                self.f.public(r);
                let mi = m as i64;
                kasm!(self.f, addi {r}, zero, {mi};);
                self.masks.push((m, r));
                r
            }
        };
        let d = self.v();
        kasm!(self.f, vand.vx {d}, {a}, {r};);
        d
    }
    fn permute(&mut self, a: Reg, p: Perm) -> Reg {
        let i = match self.idx.iter().find(|(q, _)| *q == p) {
            Some(&(_, i)) => i,
            None => {
                let (i, t) = (self.f.vreg("idx", 1), self.f.xreg("t"));
                self.f.public(t);
                self.tab.address(self.f, t, p);
                load(self.f, self.d, i, t);
                self.idx.push((p, i));
                i
            }
        };
        let d = self.v();
        kasm!(self.f, vrgather.vv {d}, {a}, {i};);
        d
    }
}

/// The table's address in a new public register.
pub(super) fn table(f: &mut Func, sym: &str) -> Reg {
    let t = f.xreg("perms");
    f.public(t);
    f.la(t, sym);
    t
}

/// `vd = a ^ b` into `into[p]` or new registers.
fn xor_into(f: &mut Func, a: Reg, b: Reg, into: Option<Reg>) -> Reg {
    let d = into.unwrap_or_else(|| f.vreg("v", 1));
    kasm!(f, vxor.vv {d}, {a}, {b};);
    d
}

/// The key bytes at `kp + off` spread to planes (bit `p` of each byte shifted to the top,
/// then arithmetically down over the byte) and added to `s`.
fn add_key(f: &mut Func, d: VDialect, s: [Reg; 8], kp: Reg, off: i64, into: Option<[Reg; 8]>) -> [Reg; 8] {
    let (a, kb) = (f.xreg("a"), f.vreg("kb", 1));
    f.public(a);
    kasm!(f, addi {a}, {kp}, {off};);
    load(f, d, kb, a);
    std::array::from_fn(|p| {
        let t = f.vreg("k", 1);
        let up = 7 - p as i64;
        if up == 0 {
            kasm!(f, vsra.vi {t}, {kb}, 7;);
        } else {
            kasm!(f, vsll.vi {t}, {kb}, {up}; vsra.vi {t}, {t}, 7;);
        }
        xor_into(f, s[p], t, into.map(|r| r[p]))
    })
}

/// The rounds in a loop of one round (the vector-only counter mode): round `r`'s
/// MixColumns permutations and round key found at run time (the tables by `r mod 4`, the
/// key at `64 (r - 1)`), the state in `v.sl`; then the last round, with `SR^(N mod 4)`
/// (the identity for AES-192) from the table by `N mod 4`, into `v.fin`.
pub(super) fn rounds_loop(f: &mut Func, v: &VSide, rounds: Reg) {
    let d = v.d;
    let Tabs::Data(sym) = &v.tabs else { return f.fail("rounds_loop: the tables must be data") };
    let [r, t, kp, a] = [f.xreg("r"), f.xreg("t"), f.xreg("vkp"), f.xreg("a")];
    for x in [r, t, kp, a] {
        f.public(x);
    }
    let tab = table(f, sym);
    let base = StackAt(v.keys, 0);
    let key_at = |f: &mut Func| {
        // kp = sp + keys + (64 (r - 1) & 0x3c0): round r's key, r <= 14.
        kasm!(f, addi {t}, {r}, -1; slli {t}, {t}, 6; andi {t}, {t}, 0x3c0; addi {kp}, sp, {base}; add {kp}, {kp}, {t};);
    };
    kasm!(f, addi {r}, zero, 1; vround:);
    let [i1, i2] = [f.vreg("rot1", 1), f.vreg("rot2", 1)];
    // Rot1(r mod 4) at 64 (4 + r mod 4), Rot2 at 64 (8 + r mod 4).
    kasm!(f, andi {t}, {r}, 3; slli {t}, {t}, 6; add {a}, {tab}, {t}; addi {a}, {a}, 256;);
    load(f, d, i1, a);
    kasm!(f, addi {a}, {a}, 256;);
    load(f, d, i2, a);
    key_at(f);
    f.schedule_window(64, |f| {
        let mut w = VEm::new(f, d, TabAt::Reg(tab));
        // The loaded tables stand for this round's permutations, whatever `r mod 4` is.
        w.idx = vec![(Perm::Rot1(0), i1), (Perm::Rot2(0), i2)];
        let s = slice::sbox(&mut w, v.sl);
        let s = vslice::mix_columns(&mut w, s, 0);
        add_key(f, d, s, kp, 0, Some(v.sl));
    });
    kasm!(f, addi {r}, {r}, 1; bltu {r}, {rounds}, vround;);
    f.comment("the last round: S-box, key, SR^(rounds mod 4) (the table by rounds mod 4)");
    key_at(f);
    let i = f.vreg("sr", 1);
    kasm!(f, andi {t}, {rounds}, 3; slli {t}, {t}, 6; add {a}, {tab}, {t};);
    load(f, d, i, a);
    let mut w = VEm::new(f, d, TabAt::Reg(tab));
    let s = slice::sbox(&mut w, v.sl);
    let s = add_key(f, d, s, kp, 0, None);
    for p in 0..8 {
        let (dp, sp) = (v.fin[p], s[p]);
        kasm!(f, vrgather.vv {dp}, {sp}, {i};);
    }
}

/// Round `r` (1 .. N-1; `r mod 4` matters) on the planes, the key at `kp + off`.
fn round(f: &mut Func, d: VDialect, tab: TabAt, s: [Reg; 8], r: u32, kp: Reg, off: i64, into: Option<[Reg; 8]>) -> [Reg; 8] {
    let mut w = VEm::new(f, d, tab);
    let s = slice::sbox(&mut w, s);
    let s = vslice::mix_columns(&mut w, s, r % 4);
    add_key(f, d, s, kp, off, into)
}

/// The last round: S-box, the key, then `SR^shift` into `into`.
fn last(f: &mut Func, d: VDialect, tab: TabAt, s: [Reg; 8], shift: u32, kp: Reg, off: i64, into: [Reg; 8]) {
    let mut w = VEm::new(f, d, tab);
    let s = slice::sbox(&mut w, s);
    if shift == 0 {
        add_key(f, d, s, kp, off, Some(into));
        return;
    }
    let s = add_key(f, d, s, kp, off, None);
    let (i, t) = (f.vreg("idx", 1), f.xreg("t"));
    f.public(t);
    tab.address(f, t, Perm::Sr(shift));
    load(f, d, i, t);
    for p in 0..8 {
        let (dp, sp) = (into[p], s[p]);
        kasm!(f, vrgather.vv {dp}, {sp}, {i};);
    }
}

impl VSide {
    /// The vector side's registers and frame slots: the permutation tables `tab` (a data
    /// object) read from `tabs`, round keys of `kstride` bytes, the output planes the
    /// registers of the LMUL-8 group `fg`.
    pub fn new(f: &mut Func, d: VDialect, tab: String, tabs: Tabs, kstride: i64, fg: Reg) -> VSide {
        let v = VSide {
            d,
            tab,
            tabs,
            kstride,
            keys: f.slot("vector_round_keys", keys_slot(kstride), 16, true),
            vpo: f.xreg("vpo"),
            sl: f.vregs("vsl", 1),
            s9: f.vregs("vs9", 1),
            fin: std::array::from_fn(|p| f.vpart(fg, p as u8, 1)),
        };
        f.public(v.vpo);
        v
    }

    /// The key pointer of the current pass: `sp + keys + (vpo & 3 step)` (a pass of four
    /// rounds is `step` = 4 `kstride` bytes; at most two passes come before the last).
    fn pointer(&self, f: &mut Func) -> Reg {
        let (kp, t, vpo) = (f.xreg("vkp"), f.xreg("t"), self.vpo);
        f.public(kp);
        f.public(t);
        let base = StackAt(self.keys, 0);
        let mask = 12 * self.kstride;
        kasm!(f, andi {t}, {vpo}, {mask}; addi {kp}, sp, {base}; add {kp}, {kp}, {t};);
        kp
    }

    /// The vector stream of one part of the rounds, list-scheduled on its own (a window of
    /// 64: the S-box circuit's order leaves dependent gates next to each other, which the
    /// vector unit's latency of 3 would stall) before it is merged with the scalar stream.
    pub fn seg(&self, f: &mut Func, s: Seg) {
        if s == Seg::Start {
            let vpo = self.vpo;
            kasm!(f, addi {vpo}, zero, 0;);
            return;
        }
        // The data tables' address is taken outside the scheduled region (`la` has a label).
        let tab = match &self.tabs {
            Tabs::Frame(slot) => TabAt::Frame(*slot),
            Tabs::Data(sym) => TabAt::Reg(table(f, sym)),
        };
        f.schedule_window(64, |f| self.seg_body(f, s, tab));
    }

    fn seg_body(&self, f: &mut Func, s: Seg, tab: TabAt) {
        let (d, vpo) = (self.d, self.vpo);
        let kp = self.pointer(f);
        let ks = self.kstride;
        match s {
            Seg::Start => {}
            Seg::Pass => {
                let mut st = self.sl;
                for j in 0..4u32 {
                    st = round(f, d, tab, st, j + 1, kp, ks * j as i64, (j == 3).then_some(self.sl));
                }
                let step = 4 * ks;
                kasm!(f, addi {vpo}, {vpo}, {step};);
            }
            Seg::Ninth => {
                round(f, d, tab, self.sl, 9, kp, 0, Some(self.s9));
            }
            Seg::Aes192 => {
                let st = round(f, d, tab, self.s9, 10, kp, ks, None);
                let st = round(f, d, tab, st, 11, kp, 2 * ks, None);
                last(f, d, tab, st, 0, kp, 3 * ks, self.fin);
            }
            Seg::Last => last(f, d, tab, self.s9, 2, kp, ks, self.fin),
        }
    }
}

/// The vector round keys: round `r` (1 ..= `rounds`) from the `AES_KEY` at `key` into the
/// frame at `kstride (r - 1)`, as [`vslice::round_key_bytes`] makes them: a loop over the
/// rounds, the permutation `SR^-r` from the table by `-r mod 4`. With 16-byte keys (VLEN
/// 128) the table is copied into the frame first; with 64-byte keys (`wide`: an AVL of at
/// least VLMAX) the gather also copies the key into every 16-byte group of a register
/// ([`vslice::wide_table`]'s last four tables), and e8, m1, vl = VLMAX is left set.
pub(super) fn make_keys(f: &mut Func, v: &VSide, key: Reg, rounds: Reg, wide: Option<Reg>) {
    let d = v.d;
    let [r, po, a, t, c63, n] = [f.xreg("r"), f.xreg("kpo"), f.xreg("a"), f.xreg("t"), f.xreg("c63"), f.xreg("n")];
    for x in [r, po, a, t, c63, n] {
        f.public(x);
    }
    let tab = match (&v.tabs, wide) {
        (Tabs::Data(sym), Some(_)) => table(f, sym),
        (Tabs::Frame(_), None) => table(f, &v.tab),
        _ => return f.fail("make_keys: 64-byte keys go with the data tables, 16-byte ones with the frame's"),
    };
    let [kb, ix, g] = [f.vreg("kb", 1), f.vreg("ix", 1), f.vreg("g", 1)];
    if let Tabs::Frame(perms) = v.tabs {
        for i in 0..12i64 {
            let (o, at) = (16 * i, StackAt(perms, 16 * i));
            kasm!(f, addi {a}, {tab}, {o};);
            load(f, d, ix, a);
            kasm!(f, addi {a}, sp, {at};);
            store(f, d, ix, a);
        }
    }
    let base = StackAt(v.keys, 0);
    let (ks, shift) = (v.kstride, v.kstride.trailing_zeros() as i64);
    // The SR tables: the frame copy's first four (16 bytes each), or the wide table's last
    // four (64 bytes each, after its twelve).
    let first = if wide.is_some() { 12 * 64 } else { 0 };
    let mask = 15 * ks;
    zero_slot(f, d, v.keys, 16 * ks);
    kasm!(f, addi {r}, zero, 1; addi {po}, zero, 0; addi {c63}, zero, 0x63;);
    if wide.is_some() {
        kasm!(f, addi {n}, zero, 16;);
    }
    kasm!(f, vkeys:);
    if wide.is_some() {
        kasm!(f, vsetvli zero, {n}, e8, m1, ta, ma;);
    }
    kasm!(f,
        slli {a}, {r}, 4;
        add {a}, {key}, {a};
    );
    load(f, d, kb, a);
    if let Some(big) = wide {
        kasm!(f, vsetvli zero, {big}, e8, m1, ta, ma;);
    }
    kasm!(f, neg {a}, {r}; andi {a}, {a}, 3; slli {a}, {a}, {shift};);
    if first != 0 {
        kasm!(f, addi {a}, {a}, {first};);
    }
    kasm!(f, add {a}, {tab}, {a};);
    load(f, d, ix, a);
    kasm!(f,
        vrgather.vv {g}, {kb}, {ix};
        vxor.vx {g}, {g}, {c63};
        andi {t}, {po}, {mask};
        addi {a}, sp, {base};
        add {a}, {a}, {t};
    );
    store(f, d, g, a);
    kasm!(f,
        addi {po}, {po}, {ks};
        addi {r}, {r}, 1;
        bgeu {rounds}, {r}, vkeys;
    );
}

/// The size of [`VSide::keys`] for keys of `kstride` bytes: 14 rounds' keys, and the room
/// the checks need to see the loops' masked offsets (`& 15 kstride`, `& 12 kstride`) stay
/// inside.
pub(super) fn keys_slot(kstride: i64) -> u32 {
    16 * kstride as u32
}

/// `vsetvli` for e8, m8, vl = `n` bytes (`n` a register).
pub(super) fn set_vl_m8(f: &mut Func, n: Reg) {
    kasm!(f, vsetvli zero, {n}, e8, m8, ta, ma;);
}

/// The transposition of the eight registers of the LMUL-8 group `g` (block `j` in
/// register `j` to bit planes, and back), in place: the swaps of registers four apart at
/// LMUL 4, two apart at LMUL 2, one apart at LMUL 1 (the same work as eight registers one
/// at a time, in 42 instructions instead of 72). Whole registers: vl = 16 LMUL (VLEN 128),
/// or VLMAX where `big` holds an AVL at least that. Leaves e8, m1.
pub(super) fn transpose_group(f: &mut Func, g: Reg, big: Option<Reg>) {
    let n = f.xreg("n");
    f.public(n);
    for (s, m, lmul, pairs) in [(4i64, 0x0fi64, 4u8, &[(4u8, 0u8)][..]), (2, 0x33, 2, &[(2, 0), (6, 4)][..]), (1, 0x55, 1, &[(1, 0), (3, 2), (5, 4), (7, 6)][..])] {
        let vl = 16 * lmul as i64;
        let n = match big {
            Some(b) => b,
            None => {
                kasm!(f, addi {n}, zero, {vl};);
                n
            }
        };
        match lmul {
            4 => kasm!(f, vsetvli zero, {n}, e8, m4, ta, ma;),
            2 => kasm!(f, vsetvli zero, {n}, e8, m2, ta, ma;),
            _ => kasm!(f, vsetvli zero, {n}, e8, m1, ta, ma;),
        }
        let mr = f.xreg("m");
        f.public(mr);
        kasm!(f, addi {mr}, zero, {m};);
        for &(a, b) in pairs {
            let (ra, rb, t) = (f.vpart(g, a, lmul), f.vpart(g, b, lmul), f.vreg("t", lmul));
            kasm!(f,
                vsrl.vi {t}, {rb}, {s};
                vxor.vv {t}, {t}, {ra};
                vand.vx {t}, {t}, {mr};
                vxor.vv {ra}, {ra}, {t};
                vsll.vi {t}, {t}, {s};
                vxor.vv {rb}, {rb}, {t};
            );
        }
    }
}



/// `vsetvli` for e8, m1, vl = 16.
pub(super) fn set_vl16(f: &mut Func) {
    let n = f.xreg("n");
    f.public(n);
    kasm!(f, addi {n}, zero, 16; vsetvli zero, {n}, e8, m1, ta, ma;);
}

/// Zeros over `size` bytes (a multiple of 128) of a slot, 128 bytes a store (e8, m8), so
/// that every byte the loops write is also seen written before the loops read it; vl is 16
/// at e8, m1 again after.
pub(super) fn zero_slot(f: &mut Func, d: VDialect, slot: Slot, size: i64) {
    let [n, a] = [f.xreg("n"), f.xreg("a")];
    f.public(n);
    f.public(a);
    let z = f.vreg("zeros", 8);
    kasm!(f, addi {n}, zero, 128; vsetvli zero, {n}, e8, m8, ta, ma; vmv.v.i {z}, 0;);
    for o in (0..size).step_by(128) {
        let at = StackAt(slot, o);
        kasm!(f, addi {a}, sp, {at};);
        store(f, d, z, a);
    }
    set_vl16(f);
}

// ---- one block by nibble lookups ------------------------------------------------------

use super::vperm::{self, Lanes, Table};

/// [`Lanes`] as vector instructions (e8, vl = 16) on fresh registers, table `list[i]` in
/// `tabs[i]`; `c1b` a scalar register holding 0x1b, where `xtime` is used.
struct PermEm<'a> {
    f: &'a mut Func,
    tabs: &'a [Reg],
    list: &'a [Table],
    c1b: Option<Reg>,
}

impl PermEm<'_> {
    fn v(&mut self) -> Reg {
        self.f.vreg("v", 1)
    }
    fn tab(&self, t: Table) -> Reg {
        self.tabs[self.list.iter().position(|&u| u == t).unwrap_or(0)]
    }
}

impl Lanes for PermEm<'_> {
    type V = Reg;
    fn xor(&mut self, a: Reg, b: Reg) -> Reg {
        let d = self.v();
        kasm!(self.f, vxor.vv {d}, {a}, {b};);
        d
    }
    fn lo(&mut self, a: Reg) -> Reg {
        let d = self.v();
        kasm!(self.f, vand.vi {d}, {a}, 15;);
        d
    }
    fn hi(&mut self, a: Reg) -> Reg {
        let d = self.v();
        kasm!(self.f, vsrl.vi {d}, {a}, 4;);
        d
    }
    fn lookup(&mut self, t: Table, idx: Reg) -> Reg {
        let (d, tr) = (self.v(), self.tab(t));
        kasm!(self.f, vrgather.vv {d}, {tr}, {idx};);
        d
    }
    fn permute(&mut self, a: Reg, t: Table) -> Reg {
        let (d, tr) = (self.v(), self.tab(t));
        kasm!(self.f, vrgather.vv {d}, {a}, {tr};);
        d
    }
    fn xtime(&mut self, a: Reg) -> Reg {
        let Some(c1b) = self.c1b else {
            self.f.fail("vperm: xtime without the 0x1b register");
            return a;
        };
        let (m, d) = (self.v(), self.v());
        kasm!(self.f,
            vsra.vi {m}, {a}, 7;
            vand.vx {m}, {m}, {c1b};
            vadd.vv {d}, {a}, {a};
            vxor.vv {d}, {d}, {m};
        );
        d
    }
}

/// The nibble-lookup tables of [`vperm`] for encryption, one register each (e8, vl = 16
/// is set), from the data object `sym`.
pub(super) fn perm_tables(f: &mut Func, d: VDialect, sym: &str) -> [Reg; 10] {
    load_tables(f, d, sym)
}

/// `N` tables of 16 bytes from the data object `sym`, one register each; sets e8, vl = 16.
fn load_tables<const N: usize>(f: &mut Func, d: VDialect, sym: &str) -> [Reg; N] {
    let [tab, a] = [f.xreg("tables"), f.xreg("a")];
    f.public(tab);
    f.public(a);
    set_vl16(f);
    f.comment("the lookup and permutation tables, one register each");
    f.la(tab, sym);
    std::array::from_fn(|i| {
        let (t, o) = (f.vreg("tab", 1), 16 * i as i64);
        kasm!(f, addi {a}, {tab}, {o};);
        load(f, d, t, a);
        t
    })
}

/// Rounds 1 .. `rounds` of one block by nibble lookups on `s` (the block ^ round key 0),
/// the round keys the standard schedule's at `key`; returns the register holding the
/// output block. The state carries 0x63 from round 1 on (see [`vperm`]): added to `s`
/// here, and to the output.
pub(super) fn perm_rounds(f: &mut Func, d: VDialect, tabs: &[Reg; 10], s: Reg, key: Reg, rounds: Reg) -> Reg {
    let [c63, c1b] = [f.xreg("c63"), f.xreg("c1b")];
    f.public(c63);
    f.public(c1b);
    kasm!(f, addi {c63}, zero, 0x63; addi {c1b}, zero, 0x1b; vxor.vx {s}, {s}, {c63};);
    let round = |w: &mut PermEm, s: Reg| {
        let a = vperm::sbox(w, s);
        vperm::mix(w, a)
    };
    let last = |w: &mut PermEm, s: Reg| {
        let y = vperm::sbox(w, s);
        w.permute(y, Table::Sr)
    };
    let y = perm_loop(f, d, (tabs, &vperm::TABLES), [s, key, rounds], Some(c1b), round, last);
    kasm!(f, vxor.vx {y}, {y}, {c63};);
    y
}

/// Rounds 1 .. `rounds` by nibble lookups on `s` (the state after round 0) with the
/// tables `tabs.0[i]` = `tabs.1[i]`: `round` computes a middle round and `last` the last
/// one, each without its key; the keys from `key + 16` on. Returns the register holding
/// the output block.
fn perm_loop(
    f: &mut Func,
    d: VDialect,
    tabs: (&[Reg], &[Table]),
    [s, key, rounds]: [Reg; 3],
    c1b: Option<Reg>,
    round: impl Fn(&mut PermEm, Reg) -> Reg,
    last: impl Fn(&mut PermEm, Reg) -> Reg,
) -> Reg {
    let [n, kp] = [f.xreg("n"), f.xreg("kp")];
    f.public(n);
    f.public(kp);
    f.comment("rounds 1 .. rounds-1 in a loop");
    f.scope(|f| {
        kasm!(f,
            addi {kp}, {key}, 16;
            addi {n}, {rounds}, -1;
        vround:
        );
        f.schedule_window(64, |f| {
            let mut w = PermEm { f: &mut *f, tabs: tabs.0, list: tabs.1, c1b };
            let o = round(&mut w, s);
            let k = f.vreg("k", 1);
            load(f, d, k, kp);
            kasm!(f, vxor.vv {s}, {o}, {k};);
        });
        kasm!(f,
            addi {kp}, {kp}, 16;
            addi {n}, {n}, -1;
            bnez {n}, vround;
        );
        f.comment("the last round and its key");
        let mut w = PermEm { f: &mut *f, tabs: tabs.0, list: tabs.1, c1b };
        let y = last(&mut w, s);
        let k = f.vreg("k", 1);
        load(f, d, k, kp);
        kasm!(f, vxor.vv {y}, {y}, {k};);
        y
    })
}

/// One block encrypted in a vector register (see [`vperm`]): `inp`, `out` any alignment,
/// `key` the standard schedule, `rounds` its round count (public). The tables come from
/// the data object `sym`.
pub(super) fn vperm_encrypt(f: &mut Func, d: VDialect, sym: &str, inp: Reg, out: Reg, key: Reg, rounds: Reg) {
    let tabs = perm_tables(f, d, sym);
    f.comment("round 0");
    let [s, k] = [f.vreg("s", 1), f.vreg("k", 1)];
    load(f, d, s, inp);
    load(f, d, k, key);
    kasm!(f, vxor.vv {s}, {s}, {k};);
    let x = perm_rounds(f, d, &tabs, s, key, rounds);
    store(f, d, x, out);
}

/// One block decrypted in a vector register (see [`vperm`]): `key` the decryption schedule
/// (`AES_set_decrypt_key`'s), `rounds` its round count (public); the tables from the data
/// object `sym` ([`vperm::DTABLES`]).
pub(super) fn vperm_decrypt(f: &mut Func, d: VDialect, sym: &str, inp: Reg, out: Reg, key: Reg, rounds: Reg) {
    let tabs: [Reg; 16] = load_tables(f, d, sym);
    f.comment("round 0: the block ^ key 0");
    let [s, k] = [f.vreg("s", 1), f.vreg("k", 1)];
    load(f, d, s, inp);
    load(f, d, k, key);
    kasm!(f, vxor.vv {s}, {s}, {k};);
    let x = perm_loop(f, d, (&tabs, &vperm::DTABLES), [s, key, rounds], None, |w, s| vperm::inv_round(w, s), |w, s| vperm::inv_last(w, s));
    store(f, d, x, out);
}
