//! ELF relocatable objects: what GNU as would write for the module's OpenSSL `.S`, built
//! directly from the bytes and relocations kgen-dsl produced ([`Module::object`]).
//!
//! The object is ELF64, little endian, `EM_RISCV`, with
//! - `.text` (the functions, each 4-byte aligned) and `.rodata` (the data objects, aligned to
//!   [`Object::rodata_align`]), plus an empty `.note.GNU-stack` so linkers do not ask for an
//!   executable stack;
//! - one `STT_FUNC` symbol per function (global or local as [`Symbol::global`] says), one
//!   extra global `STT_FUNC` per alias at the same address, one `STT_OBJECT` per data
//!   object, and one local `STT_NOTYPE` label `.Lpcrel_hi<N>` at every `auipc` that
//!   starts a PC-relative address;
//! - for every `auipc`, `R_RISCV_PCREL_HI20` against the target symbol with the addend;
//!   for the matching low part, `R_RISCV_PCREL_LO12_I` (or `_S` for a store) against the
//!   `.Lpcrel_hi<N>` label with addend 0 — exactly what GNU as emits for
//!   `auipc rd, %pcrel_hi(sym); addi rd, rd, %pcrel_lo(label)`. No `R_RISCV_RELAX` is
//!   written: kgen's code is final, so a linker must not shorten it.
//!
//! `e_flags` carries the float ABI only: double-float (`EF_RISCV_FLOAT_ABI_DOUBLE`) for the
//! psABI and Go modules, soft-float for Linux-kernel modules (the kernel is built with
//! `-mabi=lp64`, and ld refuses to mix float ABIs). `EF_RISCV_RVC` is never set: kgen never
//! emits compressed instructions.
//!
//! Symbols a relocation names that the module does not define become undefined global
//! symbols, for the final link to resolve.
//!
//! [`Symbol::global`]: kgen_dsl::object::Symbol::global
//! [`Object::rodata_align`]: kgen_dsl::object::Object::rodata_align

use crate::EmitError;
use kgen_dsl::object::{Object, RelocKind, Section, FUNC_ALIGN};
use kgen_dsl::{Abi, Module};
use object::elf;
use object::write::{self, Relocation, SectionId, Symbol, SymbolId, SymbolSection};
use object::{Architecture, BinaryFormat, Endianness, FileFlags, RelocationFlags, SectionKind, SymbolFlags, SymbolKind, SymbolScope};
use std::collections::HashMap;

/// The `e_flags` kgen writes for a module built for `abi`.
pub fn e_flags(abi: Abi) -> u32 {
    match abi {
        Abi::Linux => elf::EF_RISCV_FLOAT_ABI_SOFT.0,
        Abi::Psabi | Abi::Go => elf::EF_RISCV_FLOAT_ABI_DOUBLE.0,
    }
}

/// The name of the label symbol kgen places at the `n`-th `auipc` (in `.text` order).
pub fn pcrel_label(n: usize) -> String {
    format!(".Lpcrel_hi{n}")
}

/// The module as an ELF64 RISC-V relocatable object (see the module documentation).
pub fn elf_object(m: &Module) -> Result<Vec<u8>, EmitError> {
    let obj = m.object()?;
    object_bytes(&obj, e_flags(m.abi))
}

fn unsupported(s: String) -> EmitError {
    EmitError::Unsupported(format!("ELF object: {s}"))
}

/// Writes an already laid-out [`Object`] as an ELF relocatable with the given `e_flags`.
pub fn object_bytes(obj: &Object, e_flags: u32) -> Result<Vec<u8>, EmitError> {
    let mut w = write::Object::new(BinaryFormat::Elf, Architecture::Riscv64, Endianness::Little);
    w.flags = FileFlags::Elf { os_abi: elf::ELFOSABI_NONE, abi_version: 0, e_flags: elf::FileFlags(e_flags) };

    let text = w.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
    w.set_section_data(text, obj.text.clone(), FUNC_ALIGN as u64);
    let rodata = if obj.rodata.is_empty() {
        None
    } else {
        let align = obj.rodata_align.max(1) as u64;
        if !align.is_power_of_two() {
            return Err(unsupported(format!(".rodata alignment {align} is not a power of two")));
        }
        let id = w.add_section(Vec::new(), b".rodata".to_vec(), SectionKind::ReadOnlyData);
        w.set_section_data(id, obj.rodata.clone(), align);
        Some(id)
    };
    // An empty .note.GNU-stack: the code needs no executable stack (as the .S files say).
    let note = w.add_section(Vec::new(), b".note.GNU-stack".to_vec(), SectionKind::Other);
    w.section_mut(note).flags = object::SectionFlags::Elf { sh_type: elf::SHT_PROGBITS, sh_flags: elf::SectionFlags(0) };

    let section_of = |s: Section| -> Result<SectionId, EmitError> {
        match s {
            Section::Text => Ok(text),
            Section::Rodata => rodata.ok_or_else(|| unsupported("a symbol is in .rodata but the module has no data".into())),
        }
    };

    // Defined symbols (functions, aliases, data) in the object's order.
    let mut ids: HashMap<String, SymbolId> = HashMap::new();
    for s in &obj.symbols {
        let section = section_of(s.section)?;
        let len = match s.section {
            Section::Text => obj.text.len(),
            Section::Rodata => obj.rodata.len(),
        };
        if s.offset as usize + s.size as usize > len {
            return Err(unsupported(format!("symbol `{}` ({} bytes at {:#x}) lies outside its section", s.name, s.size, s.offset)));
        }
        if ids.contains_key(s.name.as_str()) {
            return Err(unsupported(format!("symbol `{}` is defined twice", s.name)));
        }
        let id = w.add_symbol(Symbol {
            name: s.name.as_bytes().to_vec(),
            value: s.offset as u64,
            size: s.size as u64,
            kind: if s.func { SymbolKind::Text } else { SymbolKind::Data },
            // Dynamic scope is ELF's STB_GLOBAL with default visibility (`.globl`);
            // Linkage would make it hidden.
            scope: if s.global { SymbolScope::Dynamic } else { SymbolScope::Compilation },
            weak: false,
            section: SymbolSection::Section(section),
            flags: SymbolFlags::None,
        });
        ids.insert(s.name.clone(), id);
    }

    // A local label at every auipc, in .text order, as GNU as names them.
    let mut his: Vec<u32> = obj.relocs.iter().filter(|r| r.kind == RelocKind::PcrelHi20).map(|r| r.offset).collect();
    his.sort_unstable();
    his.dedup();
    let mut labels: HashMap<u32, SymbolId> = HashMap::new();
    for (n, &off) in his.iter().enumerate() {
        if off as usize + 4 > obj.text.len() {
            return Err(unsupported(format!("relocation at {off:#x} lies outside .text")));
        }
        let id = w.add_symbol(Symbol {
            name: pcrel_label(n).into_bytes(),
            value: off as u64,
            size: 0,
            kind: SymbolKind::Label,
            scope: SymbolScope::Compilation,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::None,
        });
        labels.insert(off, id);
    }

    let mut relocs = obj.relocs.clone();
    relocs.sort_by_key(|r| r.offset);
    for r in &relocs {
        if r.offset as usize + 4 > obj.text.len() {
            return Err(unsupported(format!("relocation at {:#x} lies outside .text", r.offset)));
        }
        let (symbol, addend, r_type) = match r.kind {
            RelocKind::PcrelHi20 => {
                let id = match ids.get(r.sym.as_str()) {
                    Some(id) => *id,
                    None => {
                        let id = w.add_symbol(Symbol {
                            name: r.sym.as_bytes().to_vec(),
                            value: 0,
                            size: 0,
                            kind: SymbolKind::Unknown,
                            scope: SymbolScope::Unknown,
                            weak: false,
                            section: SymbolSection::Undefined,
                            flags: SymbolFlags::None,
                        });
                        ids.insert(r.sym.clone(), id);
                        id
                    }
                };
                (id, r.addend, elf::R_RISCV_PCREL_HI20)
            }
            RelocKind::PcrelLo12I { hi } | RelocKind::PcrelLo12S { hi } => {
                let label = *labels
                    .get(&hi)
                    .ok_or_else(|| unsupported(format!("%pcrel_lo at {:#x} refers to {hi:#x}, where there is no %pcrel_hi", r.offset)))?;
                let t = if matches!(r.kind, RelocKind::PcrelLo12S { .. }) { elf::R_RISCV_PCREL_LO12_S } else { elf::R_RISCV_PCREL_LO12_I };
                (label, 0, t)
            }
        };
        w.add_relocation(text, Relocation { offset: r.offset as u64, symbol, addend, flags: RelocationFlags::Elf { r_type } })
            .map_err(|e| unsupported(e.to_string()))?;
    }
    w.write().map_err(|e| unsupported(e.to_string()))
}
