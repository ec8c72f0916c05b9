//! Loading a module into executable memory of this process (a JIT buffer from `dynasmrt`).
//!
//! The image has the layout [`kgen_dsl::object::link`] gives it: `.text` at the start of
//! the buffer, `.rodata` at the next page boundary after it. The object is linked at the
//! buffer's own address, copied in, and the whole buffer is then made read+execute
//! (`dynasmrt` maps it as one region, so `.rodata` is executable too, but never writable).
//!
//! Nothing here encodes an instruction: relocations are applied by kgen-dsl's linker.
//! Calling into the buffer is only possible on a riscv64 host (`Jit::call`); elsewhere the
//! bytes can be inspected ([`image_bytes`], [`Jit::image`]) or run in kgen-sim.
//!
//! The image is position independent: every relocation is PC-relative and resolves to a
//! symbol inside the image ([`position_independent`] checks this before linking), so the
//! bytes linked for one page-aligned address are the bytes for any other, and a loader may
//! copy them anywhere (page aligned) without relocating.

use crate::EmitError;
use dynasmrt::mmap::MutableBuffer;
use dynasmrt::ExecutableBuffer;
use kgen_dsl::object::{link, Object, RelocKind};
use kgen_dsl::Module;
use std::collections::HashMap;

/// Page size the image layout assumes (as [`kgen_dsl::object::link`] does).
pub const PAGE: u64 = 4096;

/// A module loaded into executable memory.
#[derive(Debug)]
pub struct Jit {
    /// The executable mapping (read+execute); its length is the image length.
    pub buffer: ExecutableBuffer,
    /// Address of the first byte of the buffer (= `.text`).
    pub base: u64,
    /// Address of every symbol (functions, aliases, data objects).
    pub symbols: HashMap<String, u64>,
    /// Length of `.text` at the start of the buffer.
    pub text_len: usize,
    /// Offset of `.rodata` in the buffer (page aligned; equals the image length when the
    /// module has no data).
    pub rodata_offset: usize,
}

/// A linked flat image: text, zero padding to the page boundary, rodata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatImage {
    /// Address the image was linked for.
    pub base: u64,
    pub bytes: Vec<u8>,
    pub symbols: HashMap<String, u64>,
    pub text_len: usize,
    pub rodata_offset: usize,
}

/// Offset of `.rodata` and total size of the image of `o` (linked at a page-aligned base).
fn layout(o: &Object) -> Result<(usize, usize), EmitError> {
    if o.rodata_align as u64 > PAGE {
        return Err(EmitError::Unsupported(format!("JIT: .rodata alignment {} exceeds the page size", o.rodata_align)));
    }
    let rodata_offset = (o.text.len() as u64).next_multiple_of(PAGE) as usize;
    let size = if o.rodata.is_empty() { o.text.len() } else { rodata_offset + o.rodata.len() };
    Ok((rodata_offset, size))
}

/// Links `m` for address `base` (page aligned) as one flat image, the layout [`jit`] uses:
/// what a loader on a board copies to `base`.
pub fn flat_image(m: &Module, base: u64) -> Result<FlatImage, EmitError> {
    let o = m.object()?;
    flat_image_of(&o, base)
}

/// Checks that the image of `o` does not depend on where it is loaded: every relocation is
/// PC-relative (the match has no default arm, so a new relocation kind must be decided
/// here) and refers to a symbol of the object itself.
pub fn position_independent(o: &Object) -> Result<(), EmitError> {
    for r in &o.relocs {
        match r.kind {
            RelocKind::PcrelHi20 | RelocKind::PcrelLo12I { .. } | RelocKind::PcrelLo12S { .. } => {}
        }
        if !o.symbols.iter().any(|s| s.name == r.sym) {
            return Err(EmitError::Unsupported(format!("JIT: `{}` (relocation at {:#x}) is not in the image", r.sym, r.offset)));
        }
    }
    Ok(())
}

fn flat_image_of(o: &Object, base: u64) -> Result<FlatImage, EmitError> {
    position_independent(o)?;
    if base & (PAGE - 1) != 0 {
        return Err(EmitError::Unsupported(format!("JIT: image base {base:#x} is not page aligned")));
    }
    let (rodata_offset, size) = layout(o)?;
    let img = link(o, base, &HashMap::new()).map_err(|e| EmitError::Unsupported(format!("JIT: linking at {base:#x}: {e}")))?;
    if img.text_base != base || (!o.rodata.is_empty() && img.rodata_base != base + rodata_offset as u64) {
        return Err(EmitError::Unsupported("JIT: the linker placed .rodata elsewhere than the image layout expects".into()));
    }
    let mut bytes = vec![0u8; size];
    bytes[..img.text.len()].copy_from_slice(&img.text);
    if !img.rodata.is_empty() {
        bytes[rodata_offset..].copy_from_slice(&img.rodata);
    }
    Ok(FlatImage { base, bytes, symbols: img.symbols, text_len: img.text.len(), rodata_offset })
}

/// Loads `m` into a fresh executable buffer of this process, linked at the buffer's address.
pub fn jit(m: &Module) -> Result<Jit, EmitError> {
    jit_with(m, |_| {})
}

/// As [`jit`], with `patch` applied to the linked bytes before the buffer becomes
/// executable: for negative controls (a corrupted byte must make a known-answer check fail).
pub fn jit_with(m: &Module, patch: impl FnOnce(&mut [u8])) -> Result<Jit, EmitError> {
    let o = m.object()?;
    let (_, size) = layout(&o)?;
    if size == 0 {
        return Err(EmitError::Unsupported("JIT: the module has no code".into()));
    }
    let io = |what: &str, e: std::io::Error| EmitError::Unsupported(format!("JIT: {what}: {e}"));
    let mut buf = MutableBuffer::new(size).map_err(|e| io("mapping memory", e))?;
    buf.set_len(size);
    let base = buf.as_ptr() as u64;
    let mut img = flat_image_of(&o, base)?;
    patch(&mut img.bytes);
    buf.copy_from_slice(&img.bytes);
    let buffer = buf.make_exec().map_err(|e| io("making the buffer executable", e))?;
    dynasmrt::cache_control::prepare_for_execution(&buffer);
    Ok(Jit { buffer, base, symbols: img.symbols, text_len: img.text_len, rodata_offset: img.rodata_offset })
}

/// The bytes in the JIT buffer: text, zero padding to the page boundary, rodata.
pub fn image_bytes(j: &Jit) -> Vec<u8> {
    j.buffer.to_vec()
}

impl Jit {
    /// The buffer as a flat image: its bytes, its address and its symbols (what kgen-sim
    /// maps to run the buffer at its own address, or a loader copies elsewhere).
    pub fn image(&self) -> FlatImage {
        FlatImage { base: self.base, bytes: image_bytes(self), symbols: self.symbols.clone(), text_len: self.text_len, rodata_offset: self.rodata_offset }
    }

    /// Address of `sym`.
    pub fn addr(&self, sym: &str) -> Result<u64, EmitError> {
        self.symbols.get(sym).copied().ok_or_else(|| EmitError::Unsupported(format!("JIT: no symbol `{sym}`")))
    }

    /// Calls function `sym` with up to 8 integer arguments (a0..a7) through the C calling
    /// convention and returns a0.
    ///
    /// # Safety
    /// The function must be one that may be called with these arguments: pointers must
    /// point to memory of the sizes it accesses, and the module must have been built for
    /// the psABI (kgen's OpenSSL ABI) and for a target this CPU implements.
    #[cfg(target_arch = "riscv64")]
    pub unsafe fn call(&self, sym: &str, args: &[u64]) -> Result<u64, EmitError> {
        let addr = self.func_addr(sym, args.len())?;
        // SAFETY: forwarded to the caller.
        Ok(unsafe { call_c(addr, args) })
    }

    /// Calls the function at `addr` (a function symbol's address in the buffer) as
    /// [`Jit::call`] does.
    ///
    /// # Safety
    /// As [`Jit::call`].
    #[cfg(target_arch = "riscv64")]
    pub unsafe fn call_addr(&self, addr: u64, args: &[u64]) -> Result<u64, EmitError> {
        if args.len() > 8 {
            return Err(EmitError::Unsupported(format!("JIT: {} arguments; at most 8 go in registers", args.len())));
        }
        if addr < self.base || addr >= self.base + self.text_len as u64 {
            return Err(EmitError::Unsupported(format!("JIT: {addr:#x} is not in the buffer's code")));
        }
        // SAFETY: forwarded to the caller.
        Ok(unsafe { call_c(addr, args) })
    }

    /// Address of function `sym` inside the buffer, checked for a call with `nargs` args.
    #[cfg_attr(not(target_arch = "riscv64"), allow(dead_code))]
    fn func_addr(&self, sym: &str, nargs: usize) -> Result<u64, EmitError> {
        if nargs > 8 {
            return Err(EmitError::Unsupported(format!("JIT: {nargs} arguments; at most 8 go in registers")));
        }
        let addr = self.addr(sym)?;
        if addr < self.base || addr >= self.base + self.text_len as u64 {
            return Err(EmitError::Unsupported(format!("JIT: `{sym}` is not a function in the buffer")));
        }
        Ok(addr)
    }
}

/// Calls the code at `addr` as `extern "C" fn(u64 × 8) -> u64`. Unused argument registers
/// get 0 (the psABI lets a callee ignore registers past its parameters).
///
/// Compiled on every host so the code is type-checked, but only reachable on riscv64.
///
/// # Safety
/// `addr` must be the entry of a psABI function for this CPU, and the arguments valid for it.
#[cfg_attr(not(target_arch = "riscv64"), allow(dead_code))]
unsafe fn call_c(addr: u64, args: &[u64]) -> u64 {
    type F = extern "C" fn(u64, u64, u64, u64, u64, u64, u64, u64) -> u64;
    let mut a = [0u64; 8];
    a[..args.len()].copy_from_slice(args);
    // SAFETY: the caller guarantees `addr` is a function with the psABI signature above.
    let f: F = unsafe { std::mem::transmute::<usize, F>(addr as usize) };
    f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
}
