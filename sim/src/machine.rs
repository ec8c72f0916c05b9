//! The fetch-decode-execute loop over machine code bytes, with counts by class and an
//! optional cost model watching every instruction.

use crate::cost::C906;
use crate::mem::{Memory, Perm};
use kgen_dsl::isa::{all_exts_with, table, Class, Hart, Inst, Trap, VDialect};
use kgen_dsl::object::Image;
use kgen_dsl::target::Target;
use kgen_dsl::text::print_inst;
use kgen_dsl::ExtSet;
use std::collections::BTreeMap;
use std::fmt;

/// Why execution stopped: where, at what, and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub pc: u64,
    /// The instruction (text), or its word if it does not decode.
    pub inst: String,
    pub trap: Trap,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inst.is_empty() {
            write!(f, "at pc {:#x}: {}", self.pc, self.trap)
        } else {
            write!(f, "at pc {:#x} `{}`: {}", self.pc, self.inst, self.trap)
        }
    }
}

impl std::error::Error for Fault {}


const CACHE: usize = 1 << 14;

const ALL_CLASSES: &[Class] = &[
    Class::Alu, Class::Load, Class::Store, Class::Branch, Class::Jal, Class::Jalr, Class::Mul, Class::MulW, Class::MulAcc,
    Class::MulAccW, Class::Div, Class::DivW, Class::Csr, Class::Fence, Class::System, Class::VSet, Class::VAlu, Class::VMul,
    Class::VDiv, Class::VWiden, Class::VLoad, Class::VStore, Class::VSlide, Class::VSlideDown, Class::VGather, Class::VReduce, Class::VMask,
    Class::VMove, Class::VToScalar, Class::VCrypto,
];

/// A hart with memory, running one target's instruction set.
pub struct Machine {
    pub hart: Hart,
    pub mem: Memory,
    pub target: Target,
    exts: ExtSet,
    /// Direct-mapped decode cache: (pc, instruction) at index (pc / 4) mod CACHE.
    cache: Vec<(u64, Inst)>,
    class_counts: [u64; 64],
    pub cost: Option<C906>,
    /// Stop with a fault after this many instructions (runaway loops).
    pub max_steps: u64,
    /// When set, (pc, modeled cycle after the instruction issued) for every instruction
    /// (a cost profile).
    pub trace: Option<Vec<(u64, u64)>>,
    /// When set, what a timing observer could see of each instruction (see
    /// [`Machine::ct_event`]): two runs of constant-time code on inputs of the same lengths
    /// leave the same record.
    pub ct_trace: Option<Vec<u64>>,
}

impl Machine {
    /// A machine for `target`, VLEN from the target (128 if it has no vector unit, unused).
    pub fn new(target: &Target) -> Machine {
        let vlen = if target.vlen == 0 { 128 } else { target.vlen };
        let mut hart = Hart::new(vlen);
        hart.has_vector = target.vdialect().is_some();
        let mut mem = Memory::new();
        // A core without fast misaligned access may trap on one: so does the simulator, so
        // that code relying on it is found (QEMU user mode performs them silently).
        if target.misaligned == kgen_dsl::target::Misaligned::Slow {
            mem.misaligned = crate::mem::Misaligned::Trap;
        }
        Machine {
            hart,
            mem,
            target: target.clone(),
            exts: target.exts,
            cache: vec![(u64::MAX, Inst::new(kgen_dsl::Form(0), &[])); CACHE],
            class_counts: [0; 64],
            cost: None,
            max_steps: 1 << 32,
            trace: None,
            ct_trace: None,
        }
    }

    /// Maps a linked image: text read+execute, rodata read-only.
    pub fn load(&mut self, img: &Image) {
        let tlen = img.text.len().next_multiple_of(4096).max(4096);
        self.mem.map("text", img.text_base, tlen, Perm::RX);
        self.mem.write_bytes(img.text_base, &img.text);
        if !img.rodata.is_empty() {
            self.mem.map("rodata", img.rodata_base, img.rodata.len().next_multiple_of(4096), Perm::R);
            self.mem.write_bytes(img.rodata_base, &img.rodata);
        }
        self.flush_cache();
    }

    /// Forgets decoded instructions (after code in memory changed).
    pub fn flush_cache(&mut self) {
        for e in &mut self.cache {
            e.0 = u64::MAX;
        }
    }

    #[inline]
    fn decode_at(&mut self, pc: u64) -> Result<Inst, Fault> {
        let slot = (pc >> 2) as usize & (CACHE - 1);
        if self.cache[slot].0 == pc {
            return Ok(self.cache[slot].1);
        }
        let w = self.mem.fetch(pc).map_err(|trap| Fault { pc, inst: String::new(), trap })?;
        match table().decode(w, self.exts) {
            Some(i) => {
                self.cache[slot] = (pc, i);
                Ok(i)
            }
            None => {
                // Outside the target, or not an instruction at all?
                let other = [VDialect::Thead, VDialect::V1].iter().find_map(|d| table().decode(w, all_exts_with(*d)));
                let trap = match other {
                    Some(i) => Trap::Illegal(format!("`{}` needs {}, which target {} does not have", i.row().mnemonic, i.row().ext, self.target.name)),
                    None => Trap::Illegal(format!("{w:#010x} is not an instruction")),
                };
                Err(Fault { pc, inst: format!(".word {w:#010x}"), trap })
            }
        }
    }

    /// Executes one instruction.
    #[inline]
    pub fn step(&mut self) -> Result<(), Fault> {
        let pc = self.hart.pc;
        let inst = self.decode_at(pc)?;
        let row = table().row(inst.form);
        if let Some(c) = &mut self.cost {
            c.issue(&self.hart, pc, &inst);
        }
        self.hart.next_pc = pc.wrapping_add(4);
        if self.ct_trace.is_some() {
            let mut ev = std::mem::take(&mut self.ct_trace).unwrap_or_default();
            self.ct_event(pc, row, &inst.ops[..row.ops.len()], &mut ev);
            self.ct_trace = Some(ev);
        }
        if let Err(trap) = (row.sem)(&mut self.hart, &mut self.mem, &inst.ops[..row.ops.len()]) {
            return Err(Fault { pc, inst: print_inst(&inst), trap });
        }
        if let Some(c) = &mut self.cost {
            c.resolve(pc, self.hart.next_pc, &inst);
            if let Some(t) = &mut self.trace {
                t.push((pc, c.cycle));
            }
        }
        self.class_counts[row.class as usize] += 1;
        self.hart.instret += 1;
        self.hart.pc = self.hart.next_pc;
        Ok(())
    }

    /// What a timing observer could see of one instruction about to run, appended to `out`:
    /// its pc (the instruction stream, so every branch taken or not), every address it reads
    /// or writes (each element of a vector access; an indexed access's index elements), and,
    /// where the target's timing depends on operand values, that dependence: the C906
    /// multiplier's long path (a factor beyond 32 bits) and, on every target, a division's
    /// operands (scalar or vector: no target promises a divider of constant time).
    pub fn ct_event(&self, pc: u64, row: &kgen_dsl::Row, ops: &[i64], out: &mut Vec<u64>) {
        use kgen_dsl::isa::Addr;
        out.push(pc);
        let h = &self.hart;
        let x = |k: u8| h.x(ops[k as usize]);
        let imm = |k: u8| ops[k as usize] as u64;
        if let Some(mem) = row.mem {
            let vector = row.class.is_vector();
            let conf = row.vdialect.and_then(|d| h.vconf(d).ok());
            let (vl, sew) = conf.map(|c| (c.vl as u64, c.sew)).unwrap_or((1, 64));
            let elem = if mem.bytes == 0 { sew as u64 / 8 } else { mem.bytes as u64 };
            let n = if vector { vl.min(4096) } else { 1 };
            match mem.addr {
                Addr::BaseOff { base, off } => {
                    for i in 0..n {
                        out.push(x(base).wrapping_add(imm(off)).wrapping_add(i * elem));
                    }
                }
                Addr::BaseIdx { base, index, shift, zext } => {
                    let idx = if zext { x(index) as u32 as u64 } else { x(index) };
                    out.push(x(base).wrapping_add(idx << (imm(shift) & 63)));
                }
                Addr::Incr { base, off, shift, before } => out.push(if before { x(base).wrapping_add(imm(off) << (imm(shift) & 63)) } else { x(base) }),
                Addr::Pair { base, off, shift } => out.push(x(base).wrapping_add(imm(off) << (imm(shift) & 63))),
                Addr::VUnit { base } => {
                    for i in 0..n {
                        out.push(x(base).wrapping_add(i * elem));
                    }
                }
                Addr::VStrided { base, stride } => {
                    for i in 0..n {
                        out.push(x(base).wrapping_add(i.wrapping_mul(x(stride))));
                    }
                }
                Addr::VIndexed { base, index } => {
                    for i in 0..n as usize {
                        out.push(x(base).wrapping_add(h.velem(ops[index as usize], i, sew)));
                    }
                }
            }
        }
        if let Some(m) = row.mul {
            if !m.narrow && self.target.multiplier == kgen_dsl::target::Multiplier::C906 {
                let (a, b) = (x(m.ops[0]), x(m.ops[1]));
                let clear = |v: u64, signed: bool| v >> 32 == 0 || (signed && v >> 32 == 0xffff_ffff && (v >> 31) & 1 == 1);
                out.push(u64::from(!(clear(a, m.signed[0]) && clear(b, m.signed[1]))));
            }
        }
        if let Some(d) = row.div {
            // Every target's division time may depend on its operands: their values.
            out.push(x(d.ops[0]));
            out.push(x(d.ops[1]));
        }
        if row.class == Class::VDiv {
            // An iterative divider per element: the elements' values (`vd, vs2, vs1/rs1`).
            let conf = row.vdialect.and_then(|dl| h.vconf(dl).ok());
            let (vl, sew) = conf.map(|c| (c.vl, c.sew)).unwrap_or((0, 64));
            let vector_divisor = matches!(row.ops.get(2).map(|o| o.kind), Some(kgen_dsl::isa::Kind::V(_)));
            for i in 0..vl.min(4096) {
                out.push(h.velem(ops[1], i, sew));
                out.push(if vector_divisor { h.velem(ops[2], i, sew) } else { x(2) });
            }
        }
    }

    /// Runs until the pc reaches `stop`.
    pub fn run_until(&mut self, stop: u64) -> Result<(), Fault> {
        let limit = self.hart.instret + self.max_steps;
        while self.hart.pc != stop {
            if self.hart.instret >= limit {
                return Err(Fault { pc: self.hart.pc, inst: String::new(), trap: Trap::StepLimit(self.max_steps) });
            }
            self.step()?;
        }
        Ok(())
    }

    /// Total instructions executed.
    pub fn instructions(&self) -> u64 {
        self.class_counts.iter().sum()
    }

    /// Instructions executed by class.
    pub fn counts(&self) -> BTreeMap<Class, u64> {
        ALL_CLASSES.iter().filter(|c| self.class_counts[**c as usize] > 0).map(|c| (*c, self.class_counts[*c as usize])).collect()
    }

    pub fn reset_counts(&mut self) {
        self.class_counts = [0; 64];
        if let Some(c) = &mut self.cost {
            c.reset();
        }
    }
}
