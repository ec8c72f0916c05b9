//! Sparse memory: mapped regions with permissions; everything else faults (so a region's
//! neighbours act as guard pages).

use kgen_dsl::isa::{Bus, Trap};

/// Access permissions of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

impl Perm {
    pub const RX: Perm = Perm { read: true, write: false, exec: true };
    pub const R: Perm = Perm { read: true, write: false, exec: false };
    pub const RW: Perm = Perm { read: true, write: true, exec: false };
}

#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub base: u64,
    pub data: Vec<u8>,
    pub perm: Perm,
}

/// What to do with a misaligned access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misaligned {
    /// Perform it (as hardware with fast misaligned access, or a kernel that emulates it).
    Allow,
    /// Fault, so code that needs aligned pointers is found.
    Trap,
}

#[derive(Clone, Debug)]
pub struct Memory {
    pub regions: Vec<Region>,
    pub misaligned: Misaligned,
    last: usize,
    /// Lowest and highest addresses written (for "touched memory" comparisons).
    pub written: Vec<(u64, u8)>,
    pub record_writes: bool,
}

impl Default for Memory {
    fn default() -> Self {
        Memory { regions: Vec::new(), misaligned: Misaligned::Allow, last: 0, written: Vec::new(), record_writes: false }
    }
}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Maps `size` zero bytes at `base`. Regions must not overlap. (Regions are kept in
    /// address order, so a lookup is a binary search however many buffers a test maps.)
    pub fn map(&mut self, name: &str, base: u64, size: usize, perm: Perm) {
        let at = self.regions.partition_point(|r| r.base < base);
        let overlaps = |r: &Region| base < r.base + r.data.len() as u64 && r.base < base + size as u64;
        let clash = self.regions.get(at).is_some_and(overlaps) || (at > 0 && overlaps(&self.regions[at - 1]));
        assert!(!clash, "region {name} at {base:#x} overlaps another");
        self.regions.insert(at, Region { name: name.to_string(), base, data: vec![0; size], perm });
        self.last = 0;
    }

    pub fn region(&self, name: &str) -> Option<&Region> {
        self.regions.iter().find(|r| r.name == name)
    }

    fn find(&mut self, addr: u64, n: u64) -> Option<usize> {
        let hit = |r: &Region| addr >= r.base && addr.checked_add(n).is_some_and(|e| e <= r.base + r.data.len() as u64);
        if self.last < self.regions.len() && hit(&self.regions[self.last]) {
            return Some(self.last);
        }
        let i = self.regions.partition_point(|r| r.base <= addr).checked_sub(1)?;
        if !hit(&self.regions[i]) {
            return None;
        }
        self.last = i;
        Some(i)
    }

    fn fault(&self, addr: u64, write: bool, bytes: u8, reason: &str) -> Trap {
        let near = self
            .regions
            .iter()
            .map(|r| {
                let end = r.base + r.data.len() as u64;
                let d = if addr < r.base { r.base - addr } else { addr.saturating_sub(end) };
                (d, r)
            })
            .min_by_key(|(d, _)| *d)
            .map(|(d, r)| format!(" ({d} bytes from region `{}`)", r.name))
            .unwrap_or_default();
        Trap::Mem { addr, write, bytes, reason: format!("{reason}{near}") }
    }

    /// Copies bytes in (ignoring permissions: loader use).
    pub fn write_bytes(&mut self, addr: u64, b: &[u8]) {
        let i = self.find(addr, b.len() as u64).unwrap_or_else(|| panic!("write_bytes outside mapped memory at {addr:#x}"));
        let r = &mut self.regions[i];
        let o = (addr - r.base) as usize;
        r.data[o..o + b.len()].copy_from_slice(b);
    }

    pub fn read_bytes(&mut self, addr: u64, n: usize) -> Vec<u8> {
        let i = self.find(addr, n as u64).unwrap_or_else(|| panic!("read_bytes outside mapped memory at {addr:#x}"));
        let r = &self.regions[i];
        let o = (addr - r.base) as usize;
        r.data[o..o + n].to_vec()
    }

    /// Fetches the instruction word at `pc` (must be executable).
    pub fn fetch(&mut self, pc: u64) -> Result<u32, Trap> {
        let i = self.find(pc, 4).ok_or_else(|| self.fault(pc, false, 4, "fetch from unmapped memory"))?;
        let r = &self.regions[i];
        if !r.perm.exec {
            return Err(self.fault(pc, false, 4, "fetch from non-executable memory"));
        }
        let o = (pc - r.base) as usize;
        Ok(u32::from_le_bytes(r.data[o..o + 4].try_into().unwrap()))
    }
}

impl Bus for Memory {
    fn load(&mut self, addr: u64, bytes: u8) -> Result<u64, Trap> {
        if self.misaligned == Misaligned::Trap && !addr.is_multiple_of(bytes as u64) {
            return Err(self.fault(addr, false, bytes, "misaligned load"));
        }
        let i = self.find(addr, bytes as u64).ok_or_else(|| self.fault(addr, false, bytes, "load from unmapped memory"))?;
        let r = &self.regions[i];
        if !r.perm.read {
            return Err(self.fault(addr, false, bytes, "load from unreadable memory"));
        }
        let o = (addr - r.base) as usize;
        let mut v = 0u64;
        for k in 0..bytes as usize {
            v |= (r.data[o + k] as u64) << (8 * k);
        }
        Ok(v)
    }

    fn store(&mut self, addr: u64, bytes: u8, val: u64) -> Result<(), Trap> {
        if self.misaligned == Misaligned::Trap && !addr.is_multiple_of(bytes as u64) {
            return Err(self.fault(addr, true, bytes, "misaligned store"));
        }
        let i = self.find(addr, bytes as u64).ok_or_else(|| self.fault(addr, true, bytes, "store to unmapped memory"))?;
        if !self.regions[i].perm.write {
            return Err(self.fault(addr, true, bytes, "store to read-only memory"));
        }
        let r = &mut self.regions[i];
        let o = (addr - r.base) as usize;
        for k in 0..bytes as usize {
            r.data[o + k] = (val >> (8 * k)) as u8;
        }
        if self.record_writes {
            self.written.push((addr, bytes));
        }
        Ok(())
    }
}
