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
