//! From lowered functions to code: layout, label resolution, relocations, an object
//! (sections, symbols, relocations) and a linker that places it at an address. Relocations
//! are applied by decoding the instruction, setting its immediate operand and encoding it
//! again, so the bit layout comes from the ISA table alone.

use crate::ir::{BuildError, Func, Item, Label, Opnd, Reg};
use crate::isa::{all_exts_with, table, Inst, Kind, VDialect};
use std::collections::HashMap;

/// A relocation against a symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub offset: u32,
    pub kind: RelocKind,
    pub sym: String,
    pub addend: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelocKind {
    /// `auipc`: high 20 bits of `sym + addend - pc`.
    PcrelHi20,
    /// I-type low 12 bits matching the `auipc` at text offset `hi`.
    PcrelLo12I { hi: u32 },
    /// S-type low 12 bits matching the `auipc` at text offset `hi`.
    PcrelLo12S { hi: u32 },
}

/// One assembled function.
#[derive(Clone, Debug)]
pub struct Code {
    pub name: String,
    pub bytes: Vec<u8>,
    /// (offset, instruction, item index) of every instruction.
    pub insts: Vec<(u32, Inst, usize)>,
    pub relocs: Vec<Reloc>,
    /// Offsets of bound labels.
    pub labels: HashMap<Label, u32>,
}

fn berr(f: &Func, idx: usize, inst: String, reason: String) -> BuildError {
    BuildError { func: f.name.clone(), inst, index: Some(idx), loc: None, reason }
}

/// Encodes a lowered function (physical registers only). Offsets are relative to the
/// function start.
pub fn assemble(f: &Func) -> Result<Code, BuildError> {
    let mut labels = HashMap::new();
    let mut pc = 0u32;
    for it in &f.items {
        match it {
            Item::Label(l) => {
                labels.insert(*l, pc);
            }
            Item::Inst(_) => pc += 4,
            Item::Data(d) => pc += d.len() as u32,
            Item::Exit | Item::Region(_) => return Err(berr(f, 0, String::new(), "function was not lowered (exit or region not expanded)".into())),
            Item::Comment(_) => {}
        }
    }
    let mut bytes = Vec::with_capacity(pc as usize);
    let mut insts = Vec::new();
    let mut relocs = Vec::new();
    let mut hi_of: HashMap<u32, (String, i64)> = HashMap::new();
    let mut pc = 0u32;
    let mut n = 0usize;
    for (idx, it) in f.items.iter().enumerate() {
        if let Item::Data(d) = it {
            bytes.extend_from_slice(d);
            pc += d.len() as u32;
            continue;
        }
        let Item::Inst(i) = it else { continue };
        let row = i.row();
        let mut vals = Vec::with_capacity(i.ops.len());
        for (spec, o) in row.ops.iter().zip(&i.ops) {
            let v = match o {
                Opnd::Reg(Reg::X(r)) | Opnd::Reg(Reg::V(r)) => *r as i64,
                Opnd::Reg(r) => return Err(berr(f, n, f.inst_text(i), format!("virtual register {r:?} left after allocation"))),
                Opnd::Imm(v) => *v,
                Opnd::Label(l) => {
                    let t = *labels.get(l).ok_or_else(|| berr(f, n, f.inst_text(i), format!("label {} not placed", f.label_name(*l))))?;
                    t as i64 - pc as i64
                }
                Opnd::PcrelHi { sym, addend } => {
                    relocs.push(Reloc { offset: pc, kind: RelocKind::PcrelHi20, sym: sym.clone(), addend: *addend });
                    hi_of.insert(pc, (sym.clone(), *addend));
                    0
                }
                Opnd::PcrelLo { anchor } => {
                    let hi = *labels.get(anchor).ok_or_else(|| berr(f, n, f.inst_text(i), "pcrel_lo anchor not placed".into()))?;
                    let (sym, addend) = hi_of.get(&hi).cloned().ok_or_else(|| berr(f, n, f.inst_text(i), "pcrel_lo anchor is not an auipc".into()))?;
                    let kind = if matches!(spec.kind, Kind::MemOff(_)) && row.mem.is_some_and(|m| m.dir == crate::isa::Dir::Store) {
                        RelocKind::PcrelLo12S { hi }
                    } else {
                        RelocKind::PcrelLo12I { hi }
                    };
                    relocs.push(Reloc { offset: pc, kind, sym, addend });
                    0
                }
                Opnd::Stack { .. } => return Err(berr(f, n, f.inst_text(i), "stack slot not resolved".into())),
            };
            vals.push(v);
        }
        let word = row.encode(&vals).map_err(|e| berr(f, n, f.inst_text(i), format!("operand `{}`: {}", e.operand, e.reason)))?;
        bytes.extend_from_slice(&word.to_le_bytes());
        insts.push((pc, Inst::new(i.form, &vals), idx));
        pc += 4;
        n += 1;
    }
    Ok(Code { name: f.name.clone(), bytes, insts, relocs, labels })
}

/// Read-only data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataObj {
    pub name: String,
    pub align: u32,
    pub bytes: Vec<u8>,
    /// Element size used when printing (1, 4 or 8).
    pub elem: u8,
    pub global: bool,
    pub comment: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    Text,
    Rodata,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub section: Section,
    pub offset: u32,
    pub size: u32,
    pub global: bool,
    pub func: bool,
}

/// Sections, symbols and relocations of a module.
#[derive(Clone, Debug, Default)]
pub struct Object {
    pub text: Vec<u8>,
    pub rodata: Vec<u8>,
    pub rodata_align: u32,
    pub symbols: Vec<Symbol>,
    /// Relocations in .text (offsets relative to .text).
    pub relocs: Vec<Reloc>,
    /// Every instruction with its .text offset.
    pub insts: Vec<(u32, Inst)>,
    /// Instructions an assembly file had that kgen's ISA table does not (with
    /// `unknown_as_trap`): their .text offsets (an illegal word is there) and what they were.
    pub unknown: Vec<(u32, String)>,
    /// Absolute addresses stored in .rodata: (offset, bytes (4 or 8), symbol, addend).
    pub data_relocs: Vec<(u32, u8, String, i64)>,
}

/// Function alignment in .text (matches `.p2align 2` in the printed assembly).
pub const FUNC_ALIGN: u32 = 4;

/// Lays out assembled functions and data into an object.
pub fn build_object(code: &[(Code, bool)], data: &[DataObj]) -> Object {
    let mut o = Object { rodata_align: 1, ..Default::default() };
    for (c, global) in code {
        while !(o.text.len() as u32).is_multiple_of(FUNC_ALIGN) {
            o.text.push(0);
        }
        let base = o.text.len() as u32;
        o.symbols.push(Symbol { name: c.name.clone(), section: Section::Text, offset: base, size: c.bytes.len() as u32, global: *global, func: true });
        o.text.extend_from_slice(&c.bytes);
        for r in &c.relocs {
            let kind = match r.kind {
                RelocKind::PcrelLo12I { hi } => RelocKind::PcrelLo12I { hi: hi + base },
                RelocKind::PcrelLo12S { hi } => RelocKind::PcrelLo12S { hi: hi + base },
                k => k,
            };
            o.relocs.push(Reloc { offset: r.offset + base, kind, sym: r.sym.clone(), addend: r.addend });
        }
        o.insts.extend(c.insts.iter().map(|(off, i, _)| (off + base, *i)));
    }
    for d in data {
        while !(o.rodata.len() as u32).is_multiple_of(d.align.max(1)) {
            o.rodata.push(0);
        }
        o.rodata_align = o.rodata_align.max(d.align);
        o.symbols.push(Symbol { name: d.name.clone(), section: Section::Rodata, offset: o.rodata.len() as u32, size: d.bytes.len() as u32, global: d.global, func: false });
        o.rodata.extend_from_slice(&d.bytes);
    }
    o
}

/// A linked image: sections at fixed addresses, relocations applied.
#[derive(Clone, Debug)]
pub struct Image {
    pub text_base: u64,
    pub text: Vec<u8>,
    pub rodata_base: u64,
    pub rodata: Vec<u8>,
    pub symbols: HashMap<String, u64>,
}

/// Sets the immediate operand of the instruction at `off` in `text` to `value`.
fn patch(text: &mut [u8], off: u32, value: i64, what: &str) -> Result<(), String> {
    let o = off as usize;
    let w = u32::from_le_bytes(text[o..o + 4].try_into().unwrap());
    let exts = all_exts_with(VDialect::Thead);
    let inst = table().decode(w, exts).ok_or_else(|| format!("{what}: no instruction at {off:#x}"))?;
    let row = inst.row();
    let k = row
        .ops
        .iter()
        .position(|s| matches!(s.kind, Kind::Imm(_) | Kind::MemOff(_)))
        .ok_or_else(|| format!("{what}: `{}` has no immediate", row.mnemonic))?;
    let mut ops = inst.args().to_vec();
    ops[k] = value;
    let nw = row.encode(&ops).map_err(|e| format!("{what}: {e}"))?;
    text[o..o + 4].copy_from_slice(&nw.to_le_bytes());
    Ok(())
}

/// Places `.text` at `text_base` and `.rodata` right after it (page-aligned) and applies
/// the relocations. Symbols not defined in the object are looked up in `extern_syms`.
pub fn link(o: &Object, text_base: u64, extern_syms: &HashMap<String, u64>) -> Result<Image, String> {
    let rodata_base = (text_base + o.text.len() as u64).next_multiple_of(4096);
    let mut symbols = extern_syms.clone();
    for s in &o.symbols {
        let base = match s.section {
            Section::Text => text_base,
            Section::Rodata => rodata_base,
        };
        symbols.insert(s.name.clone(), base + s.offset as u64);
    }
    let mut text = o.text.clone();
    for r in &o.relocs {
        let target = *symbols.get(&r.sym).ok_or_else(|| format!("undefined symbol `{}`", r.sym))? as i64 + r.addend;
        match r.kind {
            RelocKind::PcrelHi20 => {
                let pc = (text_base + r.offset as u64) as i64;
                let d = target - pc;
                if d != d as i32 as i64 {
                    return Err(format!("`{}` is out of auipc range", r.sym));
                }
                patch(&mut text, r.offset, ((d + 0x800) >> 12) & 0xfffff, &r.sym)?;
            }
            RelocKind::PcrelLo12I { hi } | RelocKind::PcrelLo12S { hi } => {
                let pc = (text_base + hi as u64) as i64;
                let d = target - pc;
                patch(&mut text, r.offset, (d << 52) >> 52, &r.sym)?;
            }
        }
    }
    let mut rodata = o.rodata.clone();
    for (off, size, sym, addend) in &o.data_relocs {
        let v = (*symbols.get(sym).ok_or_else(|| format!("undefined symbol `{sym}`"))? as i64).wrapping_add(*addend) as u64;
        let (o, n) = (*off as usize, *size as usize);
        let slot = rodata.get_mut(o..o + n).ok_or_else(|| format!("`{sym}`: data relocation outside .rodata"))?;
        slot.copy_from_slice(&v.to_le_bytes()[..n]);
    }
    Ok(Image { text_base, text, rodata_base, rodata, symbols })
}
