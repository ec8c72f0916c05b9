//! Random instruction sequences for the differential test against QEMU: generation (legal
//! operands for the current vector configuration, memory accesses inside a known buffer,
//! forward branches and counted loops), running them in kgen-sim, the assembly harness that
//! runs the same bytes under QEMU, and parsing its output.
//!
//! Both sides execute the bytes kgen's encoder produced (the encoder itself is checked
//! against GNU as separately); the harness states vector instructions as `.word`s so that
//! binutils 2.40 can assemble it.

use crate::machine::{Fault, Machine};
use crate::mem::Perm;
use kgen_dsl::abi::Abi;
use kgen_dsl::func::{Func, Item, Label, Opnd, Reg};
use kgen_dsl::isa::{table, Addr, Class, Form, Inst, Kind, Role, Row, VDialect, VGroup};
use kgen_dsl::object::assemble;
use kgen_dsl::target::Target;
use kgen_dsl::{Ext, ExtSet};
use rand::seq::IndexedRandom;
use rand::Rng;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Where the sequences' data buffer lives, in kgen-sim and in the QEMU harness (mmap'd
/// there at this fixed address).
pub const MEM_ADDR: u64 = 0x4000_0000;
pub const MEM_SIZE: usize = 16384;
/// Where sequence code is placed in kgen-sim.
pub const CODE_ADDR: u64 = 0x20_0000;
/// VLEN of the vector families.
pub const VLENB: usize = 16;

/// Base registers for memory accesses (point into the buffer, never written except by
/// increment-address forms), the index and stride registers (small values), the loop counter.
const BASE_A: u8 = 8;
const BASE_B: u8 = 9;
const INDEX: u8 = 18;
const STRIDE: u8 = 19;
const LOOP: u8 = 27;
/// Registers sequences may write.
const DEST_POOL: &[u8] = &[0, 1, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31];
/// Vector registers holding small byte offsets (indexed accesses); never written.
const VINDEX: u8 = 24;

/// A family of sequences: which instructions, which emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// RV64IM + Zba/Zbb/Zbc/Zbs/Zbkb/Zbkc/Zicond, upstream QEMU `-cpu rv64,...`.
    Scalar,
    /// RV64IM + the T-Head scalar extensions, upstream QEMU `-cpu thead-c906`.
    XTheadScalar,
    /// XTheadVector, T-Head's QEMU `-cpu c906fdv`.
    XTheadVector,
    /// RVV 1.0 + Zvkb/Zvbb/Zvbc/Zvkg, upstream QEMU `-cpu rv64,v=true,vlen=128,...`.
    Rvv,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Scalar, Family::XTheadScalar, Family::XTheadVector, Family::Rvv];
    pub fn name(self) -> &'static str {
        match self {
            Family::Scalar => "RV64IM + Zb*/Zicond",
            Family::XTheadScalar => "XThead scalar",
            Family::XTheadVector => "XTheadVector",
            Family::Rvv => "RVV 1.0 + Zvk*",
        }
    }
    pub fn exts(self) -> ExtSet {
        use Ext::*;
        let base = [I, M, Zicsr, Zifencei];
        match self {
            Family::Scalar => ExtSet::of(&[I, M, Zicsr, Zifencei, Zba, Zbb, Zbc, Zbs, Zbkb, Zbkc, Zicond]),
            Family::XTheadScalar => ExtSet::of(&base).union(ExtSet::of(&[XTheadBa, XTheadBb, XTheadBs, XTheadCondMov, XTheadMac, XTheadMemIdx, XTheadMemPair, XTheadSync])),
            Family::XTheadVector => ExtSet::of(&base).union(ExtSet::one(XTheadVector)),
            Family::Rvv => ExtSet::of(&base).union(ExtSet::of(&[V, Zvkb, Zvbb, Zvbc, Zvkg])),
        }
    }
    /// The extensions whose rows this family is about (weighted up in generation).
    fn focus(self) -> ExtSet {
        use Ext::*;
        match self {
            Family::Scalar => ExtSet::of(&[Zba, Zbb, Zbc, Zbs, Zbkb, Zbkc, Zicond]),
            Family::XTheadScalar => self.exts().without(I).without(M).without(Zicsr).without(Zifencei),
            Family::XTheadVector => ExtSet::one(XTheadVector),
            Family::Rvv => ExtSet::of(&[V, Zvkb, Zvbb, Zvbc, Zvkg]),
        }
    }
    pub fn dialect(self) -> Option<VDialect> {
        match self {
            Family::XTheadVector => Some(VDialect::Thead),
            Family::Rvv => Some(VDialect::V1),
            _ => None,
        }
    }
    pub fn target(self) -> Target {
        // QEMU user mode performs misaligned accesses, and so does this target.
        let vlen = if self.dialect().is_some() { VLENB * 8 } else { 0 };
        Target {
            name: "diff",
            exts: self.exts(),
            vlen,
            vlen_max: vlen,
            misaligned: kgen_dsl::target::Misaligned::Fast,
            multiplier: kgen_dsl::target::Multiplier::Constant,
            divider: kgen_dsl::target::Divider::DataDependent,
            summary: "",
        }
    }
    /// (which QEMU, -cpu argument).
    pub fn qemu(self) -> (&'static str, &'static str) {
        match self {
            Family::Scalar => ("upstream", "rv64,zba=true,zbb=true,zbc=true,zbs=true,zbkb=true,zbkc=true,zicond=true"),
            Family::XTheadScalar => ("upstream", "thead-c906"),
            Family::XTheadVector => ("xuantie", "c906fdv"),
            Family::Rvv => ("upstream", "rv64,v=true,vlen=128,elen=64,zvbb=true,zvkb=true,zvbc=true,zvkg=true"),
        }
    }
}

/// Rows not generated, with the reason (they are covered elsewhere).
const EXCLUDED: &[(&[&str], &str)] = &[
    (&["auipc"], "result depends on the code address, which differs between the two runs"),
    (&["jalr"], "indirect jumps need a code address"),
    (&["ecall", "ebreak"], "traps"),
    (&["th.sfence.vmas"], "privileged"),
    (&["csrrw", "csrrc", "csrrwi", "csrrsi", "csrrci"], "CSR writes other than vxrm/vxsat are not user state"),
    // T-Head's QEMU truncates instead of saturating when the shift amount is 0; the .vx
    // and .vi forms are tested with nonzero shifts, these would hit it at random.
    (
        &["th.vnclipu.vv", "th.vnclip.vv", "th.vnclipu.vx", "th.vnclip.vx", "th.vnclipu.vi", "th.vnclip.vi"],
        "T-Head's QEMU deviates from the rounding rule (shift 0, and overflow when rounding 2^64-1): docs/oracles.md",
    ),
    (&["th.vrgather.vx"], "T-Head's QEMU compares the index as signed (x = 2^63 reads element 0): docs/oracles.md"),
];

/// The forms named in a list of mnemonics.
fn forms(names: &[&str]) -> Vec<Form> {
    names.iter().map(|n| table().form(n)).collect()
}

/// XTheadVector's narrowing clips: generated with nonzero shift amounts only (see
/// [`EXCLUDED`]).
fn is_thead_nclip(row: &Row) -> bool {
    forms(&["th.vnclipu.vx", "th.vnclip.vx", "th.vnclipu.vi", "th.vnclip.vi"]).contains(&row.form)
}

/// Why a row is not generated (and is covered elsewhere).
pub fn excluded(row: &Row) -> Option<&'static str> {
    EXCLUDED.iter().find(|(names, _)| forms(names).contains(&row.form)).map(|(_, why)| *why)
}

/// Initial and final architectural state compared between the two runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub x: [u64; 32],
    pub v: Vec<u8>,
    pub vl: u64,
    pub vtype: u64,
    pub vxsat: u64,
    /// (offset, value) of every 8-byte word of the buffer that changed.
    pub mem: Vec<(u32, u64)>,
}

/// One generated sequence.
#[derive(Clone, Debug)]
pub struct Seq {
    pub family: Family,
    pub code: Vec<u8>,
    pub insts: Vec<Inst>,
    pub x: [u64; 32],
    pub v: Vec<u8>,
    pub vtype: u64,
    pub avl: u64,
    pub vxrm: u64,
    pub mem_seed: u64,
    pub looped: bool,
}

/// The buffer contents for a seed: xorshift64*, the same in the C harness.
pub fn mem_init(seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    let mut out = Vec::with_capacity(MEM_SIZE);
    while out.len() < MEM_SIZE {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        out.extend_from_slice(&s.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out
}

fn edge_u64(rng: &mut impl Rng) -> u64 {
    match rng.random_range(0..12) {
        0 => 0,
        1 => u64::MAX,
        2 => 1,
        3 => 0x8000_0000_0000_0000,
        4 => 0x7fff_ffff,
        5 => 0x8000_0000,
        6 => 0xffff_ffff,
        7 => rng.random_range(0..64),
        8 => (rng.random::<u32>() as i32) as i64 as u64,
        _ => rng.random(),
    }
}

/// Vector configuration the generator tracks.
#[derive(Clone, Copy, Debug)]
struct VCfg {
    sew: u32,
    /// Registers per LMUL group (1 for fractional LMUL).
    lmul: u32,
    /// LMUL numerator/denominator.
    num: u32,
    den: u32,
}

fn vtype_value(d: VDialect, sew: u32, num: u32, den: u32) -> u64 {
    let vsew = sew.trailing_zeros() as u64 - 3;
    let vlmul = if den == 1 { num.trailing_zeros() as u64 } else { 8 - den.trailing_zeros() as u64 };
    match d {
        VDialect::Thead => vlmul | (vsew << 2),
        VDialect::V1 => vlmul | (vsew << 3) | 0xc0,
    }
}

fn random_vcfg(rng: &mut impl Rng, d: VDialect) -> (VCfg, u64) {
    loop {
        // XTheadVector: SEW 8..32 only. Whether the C906 implements e64 is uncertain, and
        // T-Head's QEMU truncates scalars to 32 bits in e64 slides; kgen's C906 kernels
        // use e32.
        let sews: &[u32] = if d == VDialect::Thead { &[8, 16, 32] } else { &[8, 16, 32, 64] };
        let sew = sews[rng.random_range(0..sews.len())];
        let (num, den) = match d {
            VDialect::Thead => (1 << rng.random_range(0..4), 1),
            VDialect::V1 => [(1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (1, 4), (1, 8)][rng.random_range(0..7)],
        };
        if den > 1 && sew > 64 / den {
            continue;
        }
        let cfg = VCfg { sew, lmul: (num / den).max(1), num, den };
        return (cfg, vtype_value(d, sew, num, den));
    }
}

struct Gen<'r, R: Rng> {
    rng: &'r mut R,
    family: Family,
    cfg: Option<VCfg>,
}

impl<R: Rng> Gen<'_, R> {
    /// Registers an operand group occupies: (first, count) for a chosen base.
    fn group_size(&self, g: VGroup) -> Option<u32> {
        let c = self.cfg?;
        Some(match g {
            VGroup::Lmul => c.lmul,
            VGroup::Wide => {
                if c.sew > 32 || c.num * 2 / c.den > 8 {
                    return None;
                }
                (2 * c.num / c.den).max(1)
            }
            VGroup::Mask | VGroup::Scalar => 1,
            VGroup::Seg(nf) => {
                if nf as u32 * c.lmul > 8 {
                    return None;
                }
                nf as u32 * c.lmul
            }
            VGroup::Eew { nf, eew } => {
                let num = eew as u32 * c.num;
                let den = c.sew * c.den;
                if num > 8 * den || num * 8 < den {
                    return None;
                }
                let emul = (num / den).max(1);
                if nf as u32 * emul > 8 {
                    return None;
                }
                nf as u32 * emul
            }
            VGroup::Whole(n) => n as u32,
            VGroup::EltGroup => {
                if c.sew != 32 {
                    return None;
                }
                c.lmul
            }
        })
    }

    fn align_of(&self, g: VGroup) -> u32 {
        let c = self.cfg.unwrap();
        match g {
            VGroup::Mask | VGroup::Scalar => 1,
            VGroup::Seg(_) => c.lmul,
            VGroup::Eew { eew, .. } => ((eew as u32 * c.num) / (c.sew * c.den)).max(1),
            VGroup::Whole(n) => n as u32,
            g => self.group_size(g).unwrap_or(1),
        }
    }

    /// Operands for `row`, or None if the row cannot be used in the current configuration.
    fn operands(&mut self, row: &Row, labels_ahead: &mut dyn FnMut(&mut R) -> Label) -> Option<Vec<Opnd>> {
        let masked = self.rng.random_range(0..10) < 3;
        let mut ops: Vec<Opnd> = Vec::with_capacity(row.ops.len());
        let mut used_groups: Vec<(u32, u32)> = Vec::new();
        let mut dest_group: Option<usize> = None;
        let mem = row.mem;
        // Sources first so the destination can avoid them: two passes.
        let mut vals: Vec<Option<Opnd>> = vec![None; row.ops.len()];
        for pass in 0..2 {
            for (i, spec) in row.ops.iter().enumerate() {
                let is_dest = matches!(spec.role, Role::Def | Role::UseDef);
                if matches!(spec.kind, Kind::V(_)) && (pass == 0) == is_dest {
                    continue;
                }
                if !matches!(spec.kind, Kind::V(_)) && pass == 1 {
                    continue;
                }
                let v = match spec.kind {
                    Kind::X | Kind::XMem => {
                        let is_base = mem.is_some_and(|m| match m.addr {
                            Addr::BaseOff { base, .. } | Addr::BaseIdx { base, .. } | Addr::Incr { base, .. } | Addr::Pair { base, .. } | Addr::VUnit { base } | Addr::VStrided { base, .. } | Addr::VIndexed { base, .. } => base as usize == i,
                        });
                        let is_index = mem.is_some_and(|m| matches!(m.addr, Addr::BaseIdx { index, .. } if index as usize == i));
                        let is_stride = mem.is_some_and(|m| matches!(m.addr, Addr::VStrided { stride, .. } if stride as usize == i));
                        let r = if is_base {
                            if self.rng.random() { BASE_A } else { BASE_B }
                        } else if is_index {
                            INDEX
                        } else if is_stride || (is_thead_nclip(row) && spec.name == "rs1") {
                            STRIDE
                        } else if is_dest {
                            *DEST_POOL.choose(self.rng).unwrap()
                        } else {
                            // sp, gp and tp hold the harness's own values under QEMU.
                            loop {
                                let r = self.rng.random_range(0..32);
                                if !matches!(r, 2..=4) {
                                    break r;
                                }
                            }
                        };
                        Opnd::Reg(Reg::X(r))
                    }
                    Kind::MemOff(s) => {
                        let bytes = mem.map(|m| m.bytes.max(1) as i64).unwrap_or(1);
                        let v = self.rng.random_range(-256..256i64) / bytes * bytes;
                        Opnd::Imm(v.clamp(s.min, s.max))
                    }
                    Kind::Imm(s) if is_thead_nclip(row) => Opnd::Imm(self.rng.random_range(1..=s.max)),
                    Kind::Imm(s) => {
                        let v = if matches!(mem.map(|m| m.addr), Some(Addr::Incr { .. })) && spec.name == "imm2" {
                            self.rng.random_range(0..2)
                        } else {
                            kgen_dsl::isa::gen::random_operand(self.rng, spec.kind, Default::default())
                        };
                        // Memory-pair offsets stay small; shifts by the row's spec.
                        Opnd::Imm(v.clamp(s.min, s.max))
                    }
                    Kind::Rel(_) => Opnd::Label(labels_ahead(self.rng)),
                    Kind::Vm => Opnd::Imm(if masked { 0 } else { 1 }),
                    Kind::V0 => Opnd::Reg(Reg::V(0)),
                    Kind::VtypeTh | Kind::Vtype => {
                        let d = self.family.dialect()?;
                        let (cfg, vt) = random_vcfg(self.rng, d);
                        self.cfg = Some(cfg);
                        Opnd::Imm(vt as i64)
                    }
                    Kind::Csr => Opnd::Imm([0xc20i64, 0xc21, 0xc22][self.rng.random_range(0..3)]),
                    Kind::FenceSet => Opnd::Imm(self.rng.random_range(1..16)),
                    Kind::Lit(v) => Opnd::Imm(v),
                    Kind::V(g) => {
                        self.cfg?;
                        let size = self.group_size(g)?;
                        let align = self.align_of(g).max(1);
                        let is_index = mem.is_some_and(|m| matches!(m.addr, Addr::VIndexed { index, .. } if index as usize == i));
                        let base = if is_index {
                            if size > 8 {
                                return None;
                            }
                            VINDEX as u32
                        } else {
                            let limit = if is_dest { VINDEX as u32 } else { 32 };
                            let cands: Vec<u32> = (0..32u32)
                                .step_by(align as usize)
                                .filter(|&b| b + size <= limit)
                                .filter(|&b| !(is_dest && masked && b == 0))
                                .filter(|&b| !is_dest || !used_groups.iter().any(|&(s, n)| b < s + n && s < b + size))
                                .collect();
                            *cands.choose(self.rng)?
                        };
                        if is_dest {
                            dest_group = Some(i);
                        }
                        used_groups.push((base, size));
                        Opnd::Reg(Reg::V(base as u8))
                    }
                };
                vals[i] = Some(v);
            }
        }
        let _ = dest_group;
        for v in vals {
            ops.push(v?);
        }
        // The link value of jal is a code address, which differs between the two runs.
        if row.class == Class::Jal {
            ops[0] = Opnd::Reg(Reg::X(0));
        }
        // CSR reads only: csrrs rd, <vl|vtype|vlenb>, x0.
        if row.class == Class::Csr {
            ops[2] = Opnd::Reg(Reg::X(0));
        }
        // vsetvl takes its vtype from a register: use x0 (vtype 0 = e8, m1), a legal one.
        if matches!(row.vset, Some(kgen_dsl::isa::VType::Reg(_))) {
            ops[2] = Opnd::Reg(Reg::X(0));
            self.cfg = Some(VCfg { sew: 8, lmul: 1, num: 1, den: 1 });
        }
        Some(ops)
    }
}

/// Rows the family's sequences draw from.
pub fn family_rows(f: Family) -> Vec<Form> {
    table()
        .rows()
        .iter()
        .filter(|r| r.ext.intersects(f.exts()) && r.ext.iter().all(|e| f.exts().contains(e) || !r.ext.contains(e)) && excluded(r).is_none())
        .filter(|r| r.ext.iter().any(|e| f.exts().contains(e)))
        .filter(|r| !(r.class == Class::Csr && (r.form != table().form("csrrs") || f.dialect().is_none())))
        .map(|r| r.form)
        .collect()
}

/// Generates a sequence of about `len` instructions (a counted loop in some of them).
pub fn generate(family: Family, rng: &mut impl Rng, len: usize, seed: u64) -> Seq {
    let rows = family_rows(family);
    let focus: Vec<Form> = rows.iter().copied().filter(|f| table().row(*f).ext.intersects(family.focus())).collect();
    let target = family.target();
    let mut x = [0u64; 32];
    for r in x.iter_mut().skip(1) {
        *r = edge_u64(rng);
    }
    x[BASE_A as usize] = MEM_ADDR + 8192;
    x[BASE_B as usize] = MEM_ADDR + 6144;
    x[INDEX as usize] = rng.random_range(0..32);
    // Never a multiple of 64: it doubles as the shift amount of th.vnclip*.vx (see excluded()).
    x[STRIDE as usize] = [1u64, 4, 8, 16, (-8i64) as u64][rng.random_range(0..5)];
    let mut v = vec![0u8; 32 * VLENB];
    rng.fill(&mut v[..]);
    for (k, b) in v[VINDEX as usize * VLENB..].iter_mut().enumerate() {
        *b = if k % 8 == 0 { 8 * rng.random_range(0..32) } else { 0 };
    }
    let (cfg, vtype) = match family.dialect() {
        Some(d) => {
            let (c, vt) = random_vcfg(rng, d);
            (Some(c), vt)
        }
        None => (None, 0),
    };
    let avl = if rng.random_range(0..4) == 0 { rng.random_range(0..300) } else { 1000 };
    let looped = rng.random_range(0..10) < 3;
    let mut g = Gen { rng, family, cfg };
    let mut f = Func::new("seq", &target, Abi::Psabi);
    f.wipe = false;
    let body_len = len;
    // Labels at every body position and the end; forward branches only.
    let labels: Vec<Label> = (0..=body_len).map(|_| f.label()).collect();
    let end_loop = labels[body_len];
    let top = f.label();
    if looped {
        let iters = g.rng.random_range(2..5);
        f.inst("addi", &[Reg::X(LOOP).into(), Reg::X(0).into(), Opnd::Imm(iters)]);
        f.bind(top);
    }
    let mut k = 0;
    let mut attempts = 0;
    while k < body_len {
        attempts += 1;
        assert!(attempts < 100_000, "generator stuck");
        let pick = if !focus.is_empty() && g.rng.random_range(0..10) < 8 { *focus.choose(g.rng).unwrap() } else { *rows.choose(g.rng).unwrap() };
        let row = table().row(pick);
        let saved_cfg = g.cfg;
        let here = k;
        let mut ahead = |r: &mut _| {
            let t = Rng::random_range(r, here + 1..=body_len);
            labels[t]
        };
        let Some(ops) = g.operands(row, &mut ahead) else {
            g.cfg = saved_cfg;
            continue;
        };
        f.bind(labels[k]);
        f.emit(pick, ops, None);
        if let Some(e) = f.errors.pop() {
            // A rule the generator did not satisfy: drop and retry.
            f.items.pop();
            let _ = e;
            g.cfg = saved_cfg;
            f.labels[labels[k].0 as usize].bound = false;
            continue;
        }
        k += 1;
    }
    f.bind(end_loop);
    if looped {
        f.inst("addi", &[Reg::X(LOOP).into(), Reg::X(LOOP).into(), Opnd::Imm(-1)]);
        f.inst("bne", &[Reg::X(LOOP).into(), Reg::X(0).into(), top.into()]);
    }
    let code = assemble(&f).expect("sequence assembles");
    let insts = code.insts.iter().map(|(_, i, _)| *i).collect();
    let vxrm = g.rng.random_range(0..4);
    Seq { family, code: code.bytes, insts, x, v, vtype, avl, vxrm, mem_seed: seed, looped }
}

/// Runs a sequence in kgen-sim. `tweak` may replace a row's semantics (negative controls).
pub fn run_sim(seq: &Seq, overrides: &BTreeMap<Form, kgen_dsl::isa::Sem>) -> Result<State, Fault> {
    let target = seq.family.target();
    let mut m = Machine::new(&target);
    m.max_steps = 10_000;
    m.mem.map("code", CODE_ADDR, seq.code.len().next_multiple_of(4096) + 4096, Perm::RX);
    m.mem.write_bytes(CODE_ADDR, &seq.code);
    m.mem.map("buffer", MEM_ADDR, MEM_SIZE, Perm::RW);
    let init = mem_init(seq.mem_seed);
    m.mem.write_bytes(MEM_ADDR, &init);
    m.hart.x = seq.x;
    m.hart.x[0] = 0;
    m.hart.v.copy_from_slice(&seq.v);
    m.hart.vxrm = seq.vxrm as u8;
    if let Some(d) = seq.family.dialect() {
        m.hart.vsetvl(d, 0, Some(seq.avl), seq.vtype);
    }
    m.hart.pc = CODE_ADDR;
    let end = CODE_ADDR + seq.code.len() as u64;
    if overrides.is_empty() {
        m.run_until(end)?;
    } else {
        while m.hart.pc != end {
            let pc = m.hart.pc;
            let w = m.mem.fetch(pc).map_err(|trap| Fault { pc, inst: String::new(), trap })?;
            let inst = table().decode(w, target.exts).unwrap();
            if let Some(sem) = overrides.get(&inst.form) {
                m.hart.next_pc = pc + 4;
                let n = inst.row().ops.len();
                sem(&mut m.hart, &mut m.mem, &inst.ops[..n]).map_err(|trap| Fault { pc, inst: String::new(), trap })?;
                m.hart.pc = m.hart.next_pc;
            } else {
                m.step()?;
            }
        }
    }
    let now = m.mem.read_bytes(MEM_ADDR, MEM_SIZE);
    let mut mem = Vec::new();
    for off in (0..MEM_SIZE).step_by(8) {
        if now[off..off + 8] != init[off..off + 8] {
            mem.push((off as u32, u64::from_le_bytes(now[off..off + 8].try_into().unwrap())));
        }
    }
    let vec = seq.family.dialect().is_some();
    Ok(State {
        x: m.hart.x,
        v: if vec { m.hart.v.clone() } else { Vec::new() },
        vl: if vec { m.hart.vl } else { 0 },
        vtype: if vec { m.hart.vtype } else { 0 },
        vxsat: if vec { m.hart.vxsat as u64 } else { 0 },
        mem,
    })
}

fn word(mn: &str, ops: &[i64]) -> u32 {
    table().row(table().form(mn)).encode(ops).unwrap()
}

/// The harness assembly for a batch (GNU syntax binutils 2.40 assembles; vector
/// instructions as `.word`). Each `kgen_seq_N(struct state *)` loads the state, runs the
/// sequence, stores the state.
pub fn harness_asm(seqs: &[Seq]) -> String {
    let mut s = String::from("# generated by kgen's differential test\n.option norvc\n.text\n");
    for (n, q) in seqs.iter().enumerate() {
        let d = q.family.dialect();
        let _ = writeln!(s, ".p2align 2\n.globl kgen_seq_{n}\nkgen_seq_{n}:");
        s.push_str("\taddi sp, sp, -128\n\tsd ra, 0(sp)\n");
        for (k, r) in [8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27].iter().enumerate() {
            let _ = writeln!(s, "\tsd x{r}, {}(sp)", 8 + 8 * k);
        }
        s.push_str("\tsd a0, 112(sp)\n");
        if let Some(d) = d {
            // vl = VLMAX at e8/m8, load v0..v31 from the state.
            let (vsetvli, vle) = match d {
                VDialect::Thead => ("th.vsetvli", "th.vle.v"),
                VDialect::V1 => ("vsetvli", "vle8.v"),
            };
            let vt_e8m8 = vtype_value(d, 8, 8, 1) as i64;
            let _ = writeln!(s, "\t.word {:#010x} # {vsetvli} t0, zero, e8, m8", word(vsetvli, &[5, 0, vt_e8m8]));
            for g in 0..4 {
                let _ = writeln!(s, "\taddi t1, a0, {}", 256 + 128 * g);
                let ops: Vec<i64> = vec![8 * g, 6, 1];
                let _ = writeln!(s, "\t.word {:#010x} # {vle} v{}, (t1)", word(vle, &ops), 8 * g);
            }
            let _ = writeln!(s, "\tcsrwi vxrm, {}\n\tcsrwi vxsat, 0", q.vxrm);
            let _ = writeln!(s, "\tld t0, 792(a0)\n\t.word {:#010x} # {vsetvli} zero, t0, {:#x}", word(vsetvli, &[0, 5, q.vtype as i64]), q.vtype);
        }
        for r in 1..32 {
            if matches!(r, 2 | 3 | 4 | 10) {
                continue;
            }
            let _ = writeln!(s, "\tld x{r}, {}(a0)", 8 * r);
        }
        s.push_str("\tld x10, 80(a0)\n");
        for w in q.code.chunks(4) {
            let w = u32::from_le_bytes(w.try_into().unwrap());
            let _ = writeln!(s, "\t.word {w:#010x}");
        }
        s.push_str("\tsd t6, -8(sp)\n\tld t6, 112(sp)\n");
        for r in 1..31 {
            if matches!(r, 2..=4) {
                continue;
            }
            let _ = writeln!(s, "\tsd x{r}, {}(t6)", 8 * r);
        }
        s.push_str("\tld t5, -8(sp)\n\tsd t5, 248(t6)\n");
        if let Some(d) = d {
            s.push_str("\tcsrr t0, vl\n\tsd t0, 768(t6)\n\tcsrr t0, vtype\n\tsd t0, 776(t6)\n\tcsrr t0, vxsat\n\tsd t0, 784(t6)\n");
            let (vsetvli, vse) = match d {
                VDialect::Thead => ("th.vsetvli", "th.vse.v"),
                VDialect::V1 => ("vsetvli", "vse8.v"),
            };
            let vt_e8m8 = vtype_value(d, 8, 8, 1) as i64;
            let _ = writeln!(s, "\t.word {:#010x} # {vsetvli} t0, zero, e8, m8", word(vsetvli, &[5, 0, vt_e8m8]));
            for g in 0..4 {
                let _ = writeln!(s, "\taddi t1, t6, {}", 256 + 128 * g);
                let _ = writeln!(s, "\t.word {:#010x} # {vse} v{}, (t1)", word(vse, &[8 * g, 6, 1]), 8 * g);
            }
        }
        s.push_str("\tld ra, 0(sp)\n");
        for (k, r) in [8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27].iter().enumerate() {
            let _ = writeln!(s, "\tld x{r}, {}(sp)", 8 + 8 * k);
        }
        s.push_str("\taddi sp, sp, 128\n\tret\n");
    }
    // Tables: function pointers, initial states, memory seeds.
    s.push_str(".section .rodata\n.p2align 3\n.globl kgen_nseq\nkgen_nseq:\n");
    let _ = writeln!(s, "\t.quad {}", seqs.len());
    s.push_str(".globl kgen_seqs\nkgen_seqs:\n");
    for n in 0..seqs.len() {
        let _ = writeln!(s, "\t.quad kgen_seq_{n}");
    }
    s.push_str(".globl kgen_init\nkgen_init:\n");
    for q in seqs {
        // struct state { u64 x[32]; u8 v[512]; u64 vl, vtype, vxsat, avl; u64 seed; u64 pad[3]; } = 832 bytes
        for r in 0..32 {
            let _ = writeln!(s, "\t.quad {:#x}", q.x[r]);
        }
        for c in q.v.chunks(8) {
            let _ = writeln!(s, "\t.quad {:#x}", u64::from_le_bytes(c.try_into().unwrap()));
        }
        let _ = writeln!(s, "\t.quad 0, 0, 0, {}, {:#x}, 0, 0, 0", q.avl, q.mem_seed);
    }
    s
}

/// Size of the C harness's `struct state`.
pub const STATE_SIZE: usize = 832;

/// The C side of the harness (compiled with riscv64-linux-gnu-gcc -static).
pub const HARNESS_C: &str = r#"/* generated by kgen's differential test */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#define MEM_ADDR 0x40000000UL
#define MEM_SIZE 16384
struct state { uint64_t x[32]; uint8_t v[512]; uint64_t vl, vtype, vxsat, avl, seed, pad[3]; };
extern const uint64_t kgen_nseq;
extern void (*const kgen_seqs[])(struct state *);
extern const struct state kgen_init[];
static uint8_t init[MEM_SIZE];
static void fill(uint64_t s) {
  s |= 1;
  for (int i = 0; i < MEM_SIZE; i += 8) {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    uint64_t v = s * 0x2545F4914F6CDD1DULL;
    memcpy(init + i, &v, 8);
  }
}
int main(void) {
  uint8_t *mem = mmap((void *)MEM_ADDR, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (mem != (uint8_t *)MEM_ADDR) { printf("mmap failed\n"); return 1; }
  for (uint64_t n = 0; n < kgen_nseq; n++) {
    struct state st = kgen_init[n];
    fill(st.seed);
    memcpy(mem, init, MEM_SIZE);
    kgen_seqs[n](&st);
    printf("S %lu\nX", (unsigned long)n);
    for (int r = 0; r < 32; r++) printf(" %lx", (unsigned long)st.x[r]);
    printf("\nV ");
    for (int b = 0; b < 512; b++) printf("%02x", st.v[b]);
    printf("\nC %lx %lx %lx\n", (unsigned long)st.vl, (unsigned long)st.vtype, (unsigned long)st.vxsat);
    for (int o = 0; o < MEM_SIZE; o += 8)
      if (memcmp(mem + o, init + o, 8)) { uint64_t v; memcpy(&v, mem + o, 8); printf("M %x %lx\n", o, (unsigned long)v); }
    printf("E\n");
  }
  return 0;
}
"#;

/// Parses the harness's output into one state per sequence.
pub fn parse_output(out: &str, vector: bool) -> Vec<State> {
    let mut states = Vec::new();
    let mut cur: Option<State> = None;
    for l in out.lines() {
        let mut f = l.split_whitespace();
        match f.next() {
            Some("S") => cur = Some(State { x: [0; 32], v: Vec::new(), vl: 0, vtype: 0, vxsat: 0, mem: Vec::new() }),
            Some("X") => {
                let c = cur.as_mut().unwrap();
                for (r, t) in f.enumerate() {
                    c.x[r] = u64::from_str_radix(t, 16).unwrap();
                }
            }
            Some("V") if vector => {
                let hex = f.next().unwrap_or("");
                cur.as_mut().unwrap().v = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
            }
            Some("C") if vector => {
                let c = cur.as_mut().unwrap();
                let v: Vec<u64> = f.map(|t| u64::from_str_radix(t, 16).unwrap()).collect();
                (c.vl, c.vtype, c.vxsat) = (v[0], v[1], v[2]);
            }
            Some("M") => {
                let off = u32::from_str_radix(f.next().unwrap(), 16).unwrap();
                let val = u64::from_str_radix(f.next().unwrap(), 16).unwrap();
                cur.as_mut().unwrap().mem.push((off, val));
            }
            Some("E") => states.push(cur.take().unwrap()),
            _ => {}
        }
    }
    states
}

/// Describes the differences between two final states.
pub fn differences(sim: &State, qemu: &State) -> Vec<String> {
    let mut d = Vec::new();
    for r in 0..32 {
        if matches!(r, 2..=4) {
            continue;
        }
        if sim.x[r] != qemu.x[r] {
            d.push(format!("{}: sim {:#x}, qemu {:#x}", kgen_dsl::text::XNAMES[r], sim.x[r], qemu.x[r]));
        }
    }
    for v in 0..sim.v.len() / VLENB {
        let (a, b) = (&sim.v[v * VLENB..(v + 1) * VLENB], &qemu.v[v * VLENB..(v + 1) * VLENB]);
        if a != b {
            d.push(format!("v{v}: sim {a:02x?}, qemu {b:02x?}"));
        }
    }
    if (sim.vl, sim.vtype, sim.vxsat) != (qemu.vl, qemu.vtype, qemu.vxsat) {
        d.push(format!("vl/vtype/vxsat: sim {}/{:#x}/{}, qemu {}/{:#x}/{}", sim.vl, sim.vtype, sim.vxsat, qemu.vl, qemu.vtype, qemu.vxsat));
    }
    if sim.mem != qemu.mem {
        d.push(format!("memory: sim wrote {:x?}, qemu wrote {:x?}", &sim.mem[..sim.mem.len().min(8)], &qemu.mem[..qemu.mem.len().min(8)]));
    }
    d
}

/// Generates sequences that run in kgen-sim without faulting (instructions the simulator
/// finds illegal in the configuration reached are regenerated away).
pub fn generate_runnable(family: Family, rng: &mut impl Rng, len: usize) -> Seq {
    loop {
        let seed = rng.random();
        let s = generate(family, rng, len, seed);
        if run_sim(&s, &BTreeMap::new()).is_ok() {
            return s;
        }
    }
}

/// Forms each sequence contains, for coverage counts.
pub fn forms_of(seq: &Seq) -> Vec<Form> {
    seq.insts.iter().map(|i| i.form).collect()
}

#[allow(dead_code)]
fn unused(_: &Item) {}

impl Seq {
    /// The first `k` instructions as a sequence of their own (None if a branch in them
    /// would leave the shortened code).
    pub fn prefix(&self, k: usize) -> Option<Seq> {
        let mut code = Vec::new();
        for (n, i) in self.insts[..k].iter().enumerate() {
            let row = i.row();
            if let Some(p) = row.ops.iter().position(|o| matches!(o.kind, Kind::Rel(_))) {
                let target = n as i64 + i.ops[p] / 4;
                if target > k as i64 || target < 0 {
                    return None;
                }
            }
            code.extend_from_slice(&i.encode().ok()?.to_le_bytes());
        }
        Some(Seq { code, insts: self.insts[..k].to_vec(), looped: false, ..self.clone() })
    }
}
