//! Architectural state the table's semantics act on, and the helpers they share.
//!
//! The simulator (kgen-sim) owns memory (through [`Bus`]), the fetch loop and the cost
//! model; what one instruction does to registers and memory is defined next to its row,
//! in terms of this state.

use super::VDialect;
use std::fmt;

/// Why execution stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trap {
    /// A load or store that the memory refused (unmapped, permission, misaligned).
    Mem { addr: u64, write: bool, bytes: u8, reason: String },
    /// An instruction that cannot execute (undecodable, outside the target, bad vtype...).
    Illegal(String),
    Ecall,
    Ebreak,
    /// A run stopped after this many instructions without reaching its end (a call that
    /// did not return, or a limit set too low).
    StepLimit(u64),
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::Mem { addr, write, bytes, reason } => write!(
                f,
                "{} of {bytes} byte(s) at {addr:#x}: {reason}",
                if *write { "store" } else { "load" }
            ),
            Trap::Illegal(s) => write!(f, "illegal instruction: {s}"),
            Trap::Ecall => f.write_str("ecall"),
            Trap::Ebreak => f.write_str("ebreak"),
            Trap::StepLimit(n) => write!(f, "did not return within {n} instructions"),
        }
    }
}

/// Memory as the semantics see it. `bytes` is 1, 2, 4 or 8; values are little-endian.
pub trait Bus {
    fn load(&mut self, addr: u64, bytes: u8) -> Result<u64, Trap>;
    fn store(&mut self, addr: u64, bytes: u8, val: u64) -> Result<(), Trap>;
}

/// CSR numbers kgen names.
pub mod csr {
    pub const FFLAGS: u16 = 0x001;
    pub const FRM: u16 = 0x002;
    pub const FCSR: u16 = 0x003;
    pub const VSTART: u16 = 0x008;
    pub const VXSAT: u16 = 0x009;
    pub const VXRM: u16 = 0x00a;
    pub const VCSR: u16 = 0x00f;
    pub const CYCLE: u16 = 0xc00;
    pub const TIME: u16 = 0xc01;
    pub const INSTRET: u16 = 0xc02;
    pub const VL: u16 = 0xc20;
    pub const VTYPE: u16 = 0xc21;
    pub const VLENB: u16 = 0xc22;
    /// (number, name) for printing and parsing.
    pub const NAMES: &[(u16, &str)] = &[
        (FFLAGS, "fflags"),
        (FRM, "frm"),
        (FCSR, "fcsr"),
        (VSTART, "vstart"),
        (VXSAT, "vxsat"),
        (VXRM, "vxrm"),
        (VCSR, "vcsr"),
        (CYCLE, "cycle"),
        (TIME, "time"),
        (INSTRET, "instret"),
        (VL, "vl"),
        (VTYPE, "vtype"),
        (VLENB, "vlenb"),
    ];
}

/// One hart's registers.
#[derive(Clone, PartialEq, Eq)]
pub struct Hart {
    pub x: [u64; 32],
    pub pc: u64,
    /// Where execution continues; semantics of control transfers set it.
    pub next_pc: u64,
    /// VLEN / 8.
    pub vlenb: usize,
    /// The 32 vector registers, `vlenb` bytes each, register 0 first.
    pub v: Vec<u8>,
    pub vl: u64,
    /// Raw vtype CSR (layout per dialect; bit 63 = vill).
    pub vtype: u64,
    pub vstart: u64,
    pub vxrm: u8,
    pub vxsat: bool,
    pub fcsr: u32,
    /// Retired-instruction counter (also read as cycle/time by the CSR semantics).
    pub instret: u64,
    /// Whether the hart has a vector unit (the vector CSRs exist).
    pub has_vector: bool,
}

impl fmt::Debug for Hart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hart {{ pc: {:#x}, x: {:x?}, vl: {}, vtype: {:#x} }}", self.pc, self.x, self.vl, self.vtype)
    }
}

/// Decoded vector configuration for one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VConf {
    pub dialect: VDialect,
    /// Element width in bits.
    pub sew: u32,
    /// LMUL as a fraction num/den (den > 1 only for RVV 1.0 fractional LMUL).
    pub lmul_num: u32,
    pub lmul_den: u32,
    pub vl: usize,
    pub vlmax: usize,
    /// RVV 1.0 tail/mask agnostic flags (treated as undisturbed, as QEMU does by default).
    pub ta: bool,
    pub ma: bool,
}

impl VConf {
    /// Registers in one LMUL group (at least 1).
    pub fn group_regs(&self) -> usize {
        (self.lmul_num / self.lmul_den).max(1) as usize
    }
    /// Mask element width for XTheadVector (SEW/LMUL), 1 for RVV 1.0.
    pub fn mlen(&self) -> usize {
        match self.dialect {
            VDialect::Thead => (self.sew / self.lmul_num) as usize,
            VDialect::V1 => 1,
        }
    }
}

/// Sign-extends the low `bits` of `v`.
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    }
}

/// Keeps the low `bits` of `v`.
pub fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

impl Hart {
    /// A hart with zeroed registers and the given VLEN in bits.
    pub fn new(vlen_bits: usize) -> Hart {
        let vlenb = vlen_bits / 8;
        Hart {
            x: [0; 32],
            pc: 0,
            next_pc: 0,
            vlenb,
            v: vec![0; 32 * vlenb],
            vl: 0,
            vtype: 1 << 63,
            vstart: 0,
            vxrm: 0,
            vxsat: false,
            fcsr: 0,
            instret: 0,
            has_vector: true,
        }
    }

    /// Reads integer register `r` (x0 reads 0).
    #[inline]
    pub fn x(&self, r: i64) -> u64 {
        self.x[r as usize]
    }
    /// Writes integer register `r` (writes to x0 are dropped).
    #[inline]
    pub fn set_x(&mut self, r: i64, v: u64) {
        if r != 0 {
            self.x[r as usize] = v;
        }
    }
    /// Continues at `pc + off`.
    #[inline]
    pub fn jump_rel(&mut self, off: i64) {
        self.next_pc = self.pc.wrapping_add(off as u64);
    }

    fn vector_csr(n: u16) -> bool {
        matches!(n, csr::VSTART | csr::VXSAT | csr::VXRM | csr::VCSR | csr::VL | csr::VTYPE | csr::VLENB)
    }

    pub fn csr_read(&self, n: u16) -> Result<u64, Trap> {
        if !self.has_vector && Self::vector_csr(n) {
            return Err(Trap::Illegal(format!("CSR {n:#x} needs a vector unit")));
        }
        Ok(match n {
            csr::FFLAGS => (self.fcsr & 0x1f) as u64,
            csr::FRM => ((self.fcsr >> 5) & 7) as u64,
            csr::FCSR => self.fcsr as u64,
            csr::VSTART => self.vstart,
            csr::VXSAT => self.vxsat as u64,
            csr::VXRM => self.vxrm as u64,
            csr::VCSR => (self.vxsat as u64) | ((self.vxrm as u64) << 1),
            csr::CYCLE | csr::TIME | csr::INSTRET => self.instret,
            csr::VL => self.vl,
            csr::VTYPE => self.vtype,
            csr::VLENB => self.vlenb as u64,
            _ => return Err(Trap::Illegal(format!("CSR {n:#x} is not simulated"))),
        })
    }

    pub fn csr_write(&mut self, n: u16, v: u64) -> Result<(), Trap> {
        if !self.has_vector && Self::vector_csr(n) {
            return Err(Trap::Illegal(format!("CSR {n:#x} needs a vector unit")));
        }
        match n {
            csr::FFLAGS => self.fcsr = (self.fcsr & !0x1f) | (v as u32 & 0x1f),
            csr::FRM => self.fcsr = (self.fcsr & !0xe0) | ((v as u32 & 7) << 5),
            csr::FCSR => self.fcsr = v as u32 & 0xff,
            csr::VSTART => self.vstart = v,
            csr::VXSAT => self.vxsat = v & 1 != 0,
            csr::VXRM => self.vxrm = (v & 3) as u8,
            csr::VCSR => {
                self.vxsat = v & 1 != 0;
                self.vxrm = ((v >> 1) & 3) as u8;
            }
            _ => return Err(Trap::Illegal(format!("CSR {n:#x} is read-only or not simulated"))),
        }
        Ok(())
    }

    // ----- vector configuration -------------------------------------------------------

    /// Decodes `vtype` for `dialect`; `None` if it is illegal.
    pub fn decode_vtype(&self, dialect: VDialect, vtype: u64) -> Option<VConf> {
        let vlen = (self.vlenb * 8) as u32;
        let (sew, num, den, ta, ma) = match dialect {
            VDialect::Thead => {
                if vtype >> 7 != 0 || (vtype >> 5) & 3 != 0 {
                    return None;
                }
                let vsew = ((vtype >> 2) & 7) as u32;
                if vsew > 3 {
                    return None;
                }
                (8 << vsew, 1 << (vtype & 3), 1, false, false)
            }
            VDialect::V1 => {
                if vtype >> 8 != 0 {
                    return None;
                }
                let vsew = ((vtype >> 3) & 7) as u32;
                let vlmul = (vtype & 7) as u32;
                if vsew > 3 || vlmul == 4 {
                    return None;
                }
                let (num, den) = if vlmul < 4 { (1 << vlmul, 1) } else { (1, 1 << (8 - vlmul)) };
                let sew = 8 << vsew;
                // ELEN = 64: SEW must fit LMUL * ELEN.
                if den > 1 && sew > 64 / den {
                    return None;
                }
                (sew, num, den, vtype & 0x40 != 0, vtype & 0x80 != 0)
            }
        };
        let vlmax = (vlen * num / den / sew) as usize;
        Some(VConf { dialect, sew, lmul_num: num, lmul_den: den, vl: 0, vlmax, ta, ma })
    }

    /// The configuration the current vtype/vl give, or an illegal-instruction trap.
    pub fn vconf(&self, dialect: VDialect) -> Result<VConf, Trap> {
        if self.vtype >> 63 != 0 {
            return Err(Trap::Illegal("vector instruction with vill set (no vsetvl yet)".into()));
        }
        let mut c = self
            .decode_vtype(dialect, self.vtype)
            .ok_or_else(|| Trap::Illegal(format!("vtype {:#x} is not valid", self.vtype)))?;
        c.vl = self.vl as usize;
        Ok(c)
    }

    /// vsetvl/vsetvli/vsetivli. `avl` is `None` when rs1 is x0.
    pub fn vsetvl(&mut self, dialect: VDialect, rd: i64, avl: Option<u64>, vtype: u64) -> u64 {
        match self.decode_vtype(dialect, vtype) {
            None => {
                self.vtype = 1 << 63;
                self.vl = 0;
            }
            Some(c) => {
                let vlmax = c.vlmax as u64;
                self.vl = match (avl, dialect) {
                    (Some(a), _) => a.min(vlmax),
                    (None, VDialect::Thead) => vlmax,
                    (None, VDialect::V1) if rd != 0 => vlmax,
                    (None, VDialect::V1) => self.vl.min(vlmax),
                };
                self.vtype = vtype;
            }
        }
        self.vstart = 0;
        self.set_x(rd, self.vl);
        self.vl
    }

    // ----- vector element access --------------------------------------------------------

    /// Checks that registers `reg .. reg+n` exist.
    pub fn vcheck(&self, reg: i64, n: usize, what: &str) -> Result<(), Trap> {
        if reg as usize + n > 32 {
            return Err(Trap::Illegal(format!("{what} group v{reg} of {n} registers runs past v31")));
        }
        Ok(())
    }

    /// Element `i` (of `bits` width) of the group starting at `reg`.
    #[inline]
    pub fn velem(&self, reg: i64, i: usize, bits: u32) -> u64 {
        let b = (bits / 8) as usize;
        let off = reg as usize * self.vlenb + i * b;
        let v = &self.v[off..off + b];
        match b {
            1 => v[0] as u64,
            2 => u16::from_le_bytes([v[0], v[1]]) as u64,
            4 => u32::from_le_bytes(v.try_into().unwrap()) as u64,
            _ => u64::from_le_bytes(v.try_into().unwrap()),
        }
    }

    #[inline]
    pub fn set_velem(&mut self, reg: i64, i: usize, bits: u32, val: u64) {
        let b = (bits / 8) as usize;
        let off = reg as usize * self.vlenb + i * b;
        self.v[off..off + b].copy_from_slice(&val.to_le_bytes()[..b]);
    }

    /// Mask bit `i` of register `reg` under configuration `c` (dialect-dependent layout).
    #[inline]
    pub fn mask_bit(&self, reg: i64, i: usize, c: &VConf) -> bool {
        let bit = i * c.mlen();
        let byte = self.v[reg as usize * self.vlenb + bit / 8];
        (byte >> (bit % 8)) & 1 != 0
    }

    /// Writes mask element `i` of `reg`: for XTheadVector the whole MLEN-bit field
    /// (bit 0 = value, the rest zero); for RVV 1.0 one bit.
    pub fn set_mask_bit(&mut self, reg: i64, i: usize, c: &VConf, val: bool) {
        let mlen = c.mlen();
        let base = reg as usize * self.vlenb * 8;
        for k in 0..mlen {
            let bit = base + i * mlen + k;
            let m = 1u8 << (bit % 8);
            let v = k == 0 && val;
            if v {
                self.v[bit / 8] |= m;
            } else {
                self.v[bit / 8] &= !m;
            }
        }
    }

    /// Whether element `i` is active: unmasked (`vm` = 1) or v0's mask bit set.
    #[inline]
    pub fn active(&self, vm: i64, i: usize, c: &VConf) -> bool {
        vm != 0 || self.mask_bit(0, i, c)
    }

    /// Number of mask elements a mask register holds for whole-mask operations.
    pub fn mask_elems(&self, c: &VConf) -> usize {
        match c.dialect {
            VDialect::Thead => c.vlmax,
            VDialect::V1 => self.vlenb * 8,
        }
    }

    /// Writes computed elements of a destination group: `vals[i]` for active body
    /// elements (`None` keeps the old value), then the tail per the dialect (XTheadVector
    /// zeroes elements vl..VLMAX of the group; RVV 1.0 leaves them).
    pub fn write_group(&mut self, vd: i64, bits: u32, c: &VConf, vals: &[Option<u64>]) {
        for (i, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                self.set_velem(vd, i, bits, *v);
            }
        }
        // XTheadVector with vl = 0 changes nothing (T-Head's QEMU skips the instruction).
        if c.dialect == VDialect::Thead && c.vl > 0 {
            let total = c.vlmax;
            for i in vals.len().max(c.vl)..total {
                self.set_velem(vd, i, bits, 0);
            }
        }
        self.vstart = 0;
    }

    /// Writes a computed mask (elements 0..vl), then the tail per the dialect.
    pub fn write_mask(&mut self, vd: i64, c: &VConf, vals: &[Option<bool>]) {
        for (i, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                self.set_mask_bit(vd, i, c, *v);
            }
        }
        if c.dialect == VDialect::Thead && c.vl > 0 {
            for i in c.vl..c.vlmax {
                self.set_mask_bit(vd, i, c, false);
            }
        }
        self.vstart = 0;
    }
}
