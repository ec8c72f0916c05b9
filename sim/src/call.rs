//! Calling a function the way C would: arguments in a0–a7, a 16-byte aligned stack with
//! guard pages, `ra` pointing at a return sentinel. Callee-saved registers (and gp/tp) are
//! seeded with random values and checked on return, as BoringSSL's abi_test does; buffers
//! are placed in their own regions between guard gaps, at any alignment.

use crate::cost::C906;
use crate::machine::{Fault, Machine};
use crate::mem::Perm;
use kgen_dsl::object::{link, Object};
use kgen_dsl::target::Target;
use kgen_dsl::Abi;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::fmt;

pub const TEXT_BASE: u64 = 0x1_0000;
pub const RETURN_SENTINEL: u64 = 0x7ff0_0000;
pub const STACK_TOP: u64 = 0x7fe0_0000;
pub const STACK_SIZE: usize = 64 * 1024;
/// sp at the entry of every [`Env::call`]. Go's ABI0 arguments are at `CALL_SP + 8 + off`
/// (above the return-address word), where a caller writes them before the call.
pub const CALL_SP: u64 = STACK_TOP - 16 * 64;
const HEAP_BASE: u64 = 0x1000_0000;
const GUARD: u64 = 0x1000;

/// What went wrong in a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    Fault(Fault),
    /// The function broke the calling convention.
    Abi(String),
    /// The function called a symbol no input defines (see [`Env::with_undefined_stubs`]).
    Undefined(String),
    /// The function ran an instruction the assembler kept as a trap (what it was).
    Unassembled(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Fault(x) => write!(f, "fault {x}"),
            CallError::Abi(s) => write!(f, "ABI violation: {s}"),
            CallError::Undefined(s) => write!(f, "called `{s}`, which no input defines"),
            CallError::Unassembled(s) => write!(f, "ran {s}"),
        }
    }
}

impl std::error::Error for CallError {}

/// Result of one call.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub a0: u64,
    pub instructions: u64,
    /// Modeled C906 cycles (when the cost model is on).
    pub cycles: u64,
    pub long_muls: u64,
    pub muls: u64,
}

/// The registers a call under `abi` must leave unchanged.
fn preserved_by(abi: Abi) -> Vec<u8> {
    abi.callee_saved().iter().chain(abi.reserved()).copied().collect()
}

/// A machine with a loaded object, a stack and a buffer allocator.
pub struct Env {
    pub m: Machine,
    pub symbols: HashMap<String, u64>,
    next_buf: u64,
    rng: rand_chacha::ChaCha8Rng,
    /// Registers that must come back unchanged: the ABI's callee-saved and reserved ones
    /// (the psABI's unless [`Env::for_abi`] says otherwise).
    pub preserved: Vec<u8>,
    /// Go's ABI0: the word at 0(sp) holds the return address, as Go's frame prologue leaves
    /// it (a function that writes ra reloads it from there).
    go_frame: bool,
    /// Addresses given to symbols no input defines (nothing is mapped there: a call
    /// faults and is reported by name).
    pub undefined: HashMap<u64, String>,
    /// Addresses of instructions an assembly file had that kgen cannot run.
    pub unassembled: HashMap<u64, String>,
}

/// Where [`Env::with_undefined_stubs`] places undefined symbols (unmapped).
pub const UNDEFINED_BASE: u64 = 0x0800_0000;
/// The most bytes of buffers one environment maps.
pub const MAX_BUFFER_BYTES: usize = 1 << 30;

impl Env {
    /// Links `obj` at a fixed address and maps stack and sentinel.
    pub fn new(obj: &Object, target: &Target) -> Result<Env, String> {
        let img = link(obj, TEXT_BASE, &HashMap::new())?;
        Ok(Env::from_image(&img, target))
    }

    /// Like [`Env::new`], but a symbol the object references and does not define gets an
    /// address where nothing is mapped: the object links, and a call to the symbol fails
    /// naming it ([`CallError::Undefined`]).
    pub fn with_undefined_stubs(obj: &Object, target: &Target) -> Result<Env, String> {
        let defined: std::collections::HashSet<&str> = obj.symbols.iter().map(|s| s.name.as_str()).collect();
        let mut ext = HashMap::new();
        let mut undefined = HashMap::new();
        for sym in obj.relocs.iter().map(|r| &r.sym).chain(obj.data_relocs.iter().map(|d| &d.2)) {
            if !defined.contains(sym.as_str()) && !ext.contains_key(sym) {
                let a = UNDEFINED_BASE + 16 * ext.len() as u64;
                ext.insert(sym.clone(), a);
                undefined.insert(a, sym.clone());
            }
        }
        let img = link(obj, TEXT_BASE, &ext)?;
        let mut env = Env::from_image(&img, target);
        for n in undefined.values() {
            env.symbols.remove(n);
        }
        env.undefined = undefined;
        env.unassembled = obj.unknown.iter().map(|(o, m)| (TEXT_BASE + *o as u64, m.clone())).collect();
        Ok(env)
    }

    fn from_image(img: &kgen_dsl::object::Image, target: &Target) -> Env {
        let mut m = Machine::new(target);
        m.load(img);
        m.mem.map("stack", STACK_TOP - STACK_SIZE as u64, STACK_SIZE, Perm::RW);
        m.mem.map("return-sentinel", RETURN_SENTINEL, 4096, Perm::RX);
        Env {
            m,
            symbols: img.symbols.clone(),
            next_buf: HEAP_BASE,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(1),
            preserved: preserved_by(Abi::Psabi),
            go_frame: false,
            undefined: HashMap::new(),
            unassembled: HashMap::new(),
        }
    }

    /// Bytes of buffers mapped so far (guards included).
    pub fn buffer_bytes(&self) -> u64 {
        self.next_buf - HEAP_BASE
    }

    /// Checks calls against `abi`'s rules: under Go's ABI0 no register is callee-saved and
    /// gp, tp, X26, X27 and X31 must be untouched. (A Go function's frame, `TEXT $N`, is at
    /// 8(sp).. of the caller's sp here, with the return address at 0(sp) as Go's prologue
    /// leaves it: Go's assembler, which would allocate the frame, is not involved.)
    pub fn for_abi(mut self, abi: Abi) -> Env {
        self.preserved = preserved_by(abi);
        self.go_frame = abi == Abi::Go;
        self
    }

    /// Turns the C906 cost model on.
    pub fn with_cost_model(mut self) -> Env {
        self.m.cost = Some(C906::new());
        self
    }

    /// The address of a symbol (tests: panics naming it when it is missing; see
    /// [`Env::lookup`]).
    pub fn sym(&self, name: &str) -> u64 {
        self.lookup(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The address of a symbol, or an error naming it and the symbols there are.
    pub fn lookup(&self, name: &str) -> Result<u64, String> {
        self.symbols.get(name).copied().ok_or_else(|| {
            let mut have: Vec<&String> = self.symbols.keys().collect();
            have.sort();
            let list: Vec<&str> = have.iter().take(12).map(|s| s.as_str()).collect();
            format!("symbol `{name}` is not defined (defined: {}{})", list.join(", "), if have.len() > 12 { ", ..." } else { "" })
        })
    }

    /// The symbol implementing entry point `e` (its alias, or the first symbol of its form)
    /// and its address.
    pub fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String> {
        let name = e.find_in(self.symbols.keys()).ok_or_else(|| {
            format!("no function for entry point {}{}{} ({}*) is defined", e.prefix, "<variant>", e.suffix, e.alias.unwrap_or(e.prefix))
        })?;
        let a = self.lookup(&name)?;
        Ok((name, a))
    }

    /// [`Env::buffer`], or an error saying the limit when the environment would map more
    /// than [`MAX_BUFFER_BYTES`] of buffers.
    pub fn try_buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> Result<u64, String> {
        let size = (offset as u64).saturating_add(data.len() as u64).next_multiple_of(4096) + GUARD;
        if self.buffer_bytes().saturating_add(size) > MAX_BUFFER_BYTES as u64 {
            return Err(format!(
                "buffers of {} bytes in all: the simulator holds at most {MAX_BUFFER_BYTES} bytes of buffers",
                self.buffer_bytes() + size
            ));
        }
        Ok(self.buffer(data, offset, writable))
    }

    /// Places `data` in a fresh region (guarded on both sides) so that its address is
    /// `offset` bytes past a 64-byte boundary; `writable` maps it read-write.
    pub fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64 {
        let size = (offset + data.len()).next_multiple_of(4096).max(4096);
        let base = self.next_buf;
        self.next_buf += size as u64 + GUARD;
        let name = format!("buffer@{base:#x}");
        self.m.mem.map(&name, base, size, if writable { Perm::RW } else { Perm::R });
        // Place the data at the end of its page when possible so overruns hit the guard.
        let slack = size - offset - data.len();
        let start = base + (slack / 64 * 64) as u64 + offset as u64;
        self.m.mem.write_bytes(start, data);
        start
    }

    pub fn read(&mut self, addr: u64, n: usize) -> Vec<u8> {
        self.m.mem.read_bytes(addr, n)
    }

    /// Calls `entry` with `args`.
    pub fn call(&mut self, entry: u64, args: &[u64]) -> Result<Outcome, CallError> {
        let h = &mut self.m.hart;
        let mut seeds = [0u64; 32];
        for r in 1..32 {
            seeds[r] = self.rng.random();
            h.x[r] = seeds[r];
        }
        h.x[0] = 0;
        for (i, a) in args.iter().enumerate() {
            h.x[10 + i] = *a;
        }
        let sp = CALL_SP;
        h.x[2] = sp;
        h.x[1] = RETURN_SENTINEL;
        if self.go_frame {
            self.m.mem.write_bytes(sp, &RETURN_SENTINEL.to_le_bytes());
        }
        h.pc = entry;
        h.vtype = 1 << 63;
        h.vl = 0;
        let i0 = self.m.instructions();
        if let Some(c) = &mut self.m.cost {
            c.reset();
            c.note_call(RETURN_SENTINEL);
        }
        if let Err(f) = self.m.run_until(RETURN_SENTINEL) {
            if let Some(name) = self.undefined.get(&f.pc) {
                return Err(CallError::Undefined(name.clone()));
            }
            if let Some(what) = self.unassembled.get(&f.pc) {
                return Err(CallError::Unassembled(what.clone()));
            }
            return Err(CallError::Fault(f));
        }
        let h = &self.m.hart;
        if h.x[2] != sp {
            return Err(CallError::Abi(format!("sp is {:#x} after return, was {sp:#x}", h.x[2])));
        }
        for r in &self.preserved {
            let r = *r as usize;
            if h.x[r] != seeds[r] {
                return Err(CallError::Abi(format!("{} was not preserved", kgen_dsl::text::XNAMES[r])));
            }
        }
        let (cycles, long_muls, muls) = self.m.cost.as_ref().map(|c| (c.cycles(), c.long_muls, c.muls)).unwrap_or((0, 0, 0));
        Ok(Outcome { a0: h.x[10], instructions: self.m.instructions() - i0, cycles, long_muls, muls })
    }

    /// Looks for any `window`-byte run of `secret` in the registers and in the stack below
    /// the caller's sp (the frame the function used). Returns where it was found.
    pub fn scan_for_secret(&mut self, secret: &[u8], window: usize) -> Vec<String> {
        let mut found = Vec::new();
        if secret.len() < window {
            return found;
        }
        let windows: Vec<&[u8]> = secret.windows(window).filter(|w| w.iter().any(|&b| b != 0)).collect();
        let hit = |hay: &[u8]| windows.iter().any(|w| hay.windows(window).any(|x| x == *w));
        for r in 1..32 {
            if hit(&self.m.hart.x[r].to_le_bytes()) {
                found.push(format!("register {}", kgen_dsl::text::XNAMES[r]));
            }
        }
        let vb = self.m.hart.vlenb;
        for v in 0..32 {
            if hit(&self.m.hart.v[v * vb..(v + 1) * vb]) {
                found.push(format!("register v{v}"));
            }
        }
        let sp = CALL_SP;
        let below = self.read(sp - 4096, 4096);
        if hit(&below) {
            found.push("stack below sp".into());
        }
        found
    }
}

/// Kernels' benchmark drivers run on the cost model through this.
impl kgen_dsl::kernel::Harness for Env {
    fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64 {
        Env::buffer(self, data, offset, writable)
    }
    fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String> {
        Env::entry(self, e)
    }
    fn lookup(&self, name: &str) -> Result<u64, String> {
        Env::lookup(self, name)
    }
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String> {
        Env::call(self, f, args).map(|o| (o.instructions, o.cycles)).map_err(|e| e.to_string())
    }
}
