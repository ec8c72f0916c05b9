//! `kgen jit-run`: a kernel variant's OpenSSL-ABI module loaded into a JIT buffer
//! ([`kgen_emit::jit`]) and called on the kernel's known answers ([`kgen_dsl::kernel::kat`]):
//! natively on a riscv64 host, elsewhere in kgen-sim with the buffer's bytes mapped at the
//! buffer's own address. One plan runs three ways: in kgen-sim ([`run_sim`]), natively
//! ([`run_host`] with [`Jit::call`](kgen_emit::jit::Jit), riscv64 only), and as a script
//! ([`script`]) for a C loader that maps the image and calls it through function pointers,
//! as on a board (tests/jit.rs runs such a loader under QEMU). Each way yields an
//! [`Outcome`] that [`Plan::verdicts`] compares.
//!
//! Native calls need a CPU that implements the variant's target (the c906 variants need a
//! T-Head core; a missing extension kills the process with SIGILL); `--sim` runs any
//! variant in kgen-sim instead.

pub use kgen_dsl::kernel::kat::{hex, Arg, Outcome, Plan, Verdict};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::target::Target;
use kgen_dsl::Abi;
use kgen_emit::jit::{self, FlatImage, Jit, PAGE};
use kgen_sim::mem::Perm;
use kgen_sim::Machine;

/// The plan as input for a loader that has the image mapped (tests/jit.rs has one in
/// C): one line `buf SIZE OFFSET HEX` per buffer (`-` for an empty one), then one line
/// `call FUNC_OFFSET NARGS ARG...` per call, with the function's offset in the image in
/// hex and each argument as `bINDEX+BYTE` (an address in a buffer) or `iHEX`. The loader
/// prints `ret INDEX HEX` per call and `buf INDEX HEX` per buffer after the last call.
pub fn script(plan: &Plan, img: &FlatImage) -> Result<String, String> {
    let mut s = String::new();
    for b in &plan.buffers {
        let h = if b.bytes.is_empty() { "-".to_string() } else { hex(&b.bytes) };
        s.push_str(&format!("buf {} {} {h}\n", b.bytes.len(), b.offset));
    }
    for c in &plan.calls {
        let addr = *img.symbols.get(&c.func).ok_or_else(|| format!("no function `{}` in the image", c.func))?;
        let args: Vec<String> = c
            .args
            .iter()
            .map(|a| match *a {
                Arg::Buf(i, off) => format!("b{i}+{off}"),
                Arg::Int(v) => format!("i{v:x}"),
            })
            .collect();
        s.push_str(&format!("call {:x} {} {}\n", addr - img.base, args.len(), args.join(" ")));
    }
    Ok(s)
}

// ---- running a plan ---------------------------------------------------------------------------

/// Size of the simulator's scratch area (return sentinel, stack, buffers).
const SCRATCH: u64 = 1 << 26;
/// Registers a psABI function must give back unchanged: gp, tp, s0..s11.
const PRESERVED: [usize; 14] = [3, 4, 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27];

/// The value a preserved register holds across a simulated call.
fn seed(r: usize) -> u64 {
    0x5eed_0000_0000_0000 | ((r as u64) << 8)
}

/// Runs `plan` in kgen-sim for `target`, with `img` mapped at its own address (text
/// read+execute, data read-only) and the buffers, a stack and a return sentinel in a
/// scratch area that does not overlap it. Each call gets ra = the sentinel and a 16-byte
/// aligned sp; sp, gp, tp and s0..s11 must come back unchanged.
pub fn run_sim(img: &FlatImage, target: &Target, plan: &Plan) -> Result<Outcome, String> {
    let end = (img.base + img.bytes.len() as u64).next_multiple_of(PAGE);
    let scratch = [0x1000_0000u64, 0x40_0000_0000]
        .into_iter()
        .find(|&s| s + SCRATCH <= img.base || s >= end)
        .ok_or_else(|| format!("no room for the simulator's buffers beside the image at {:#x}", img.base))?;
    let mut m = Machine::new(target);
    m.max_steps = 100_000_000;
    m.mem.map("jit-text", img.base, img.rodata_offset, Perm::RX);
    m.mem.write_bytes(img.base, &img.bytes[..img.text_len]);
    if img.bytes.len() > img.rodata_offset {
        let ro = &img.bytes[img.rodata_offset..];
        let at = img.base + img.rodata_offset as u64;
        m.mem.map("jit-rodata", at, ro.len().next_multiple_of(PAGE as usize), Perm::R);
        m.mem.write_bytes(at, ro);
    }
    let sentinel = scratch;
    m.mem.map("return-sentinel", sentinel, PAGE as usize, Perm::RX);
    m.mem.map("stack", scratch + 0x1_0000, 0x1_0000, Perm::RW);
    let sp = scratch + 0x2_0000 - 64;
    // Each buffer in its own region, unmapped pages between them.
    let mut next = scratch + 0x10_0000;
    let mut addrs = Vec::new();
    for (i, b) in plan.buffers.iter().enumerate() {
        let size = (b.offset + b.bytes.len()).next_multiple_of(PAGE as usize).max(PAGE as usize);
        if next + size as u64 + PAGE > scratch + SCRATCH {
            return Err("the plan's buffers do not fit the simulator's scratch area".into());
        }
        m.mem.map(&format!("buffer {i} ({})", b.name), next, size, Perm::RW);
        m.mem.write_bytes(next + b.offset as u64, &b.bytes);
        addrs.push(next + b.offset as u64);
        next += size as u64 + PAGE;
    }
    let mut rets = Vec::new();
    for c in &plan.calls {
        let entry = *img.symbols.get(&c.func).ok_or_else(|| format!("no function `{}` in the image", c.func))?;
        if entry < img.base || entry >= img.base + img.text_len as u64 {
            return Err(format!("`{}` is not code in the image", c.func));
        }
        if c.args.len() > 8 {
            return Err(format!("{}: {} arguments; at most 8 go in registers", c.func, c.args.len()));
        }
        let h = &mut m.hart;
        for &r in &PRESERVED {
            h.x[r] = seed(r);
        }
        for (k, a) in c.args.iter().enumerate() {
            h.x[10 + k] = match *a {
                Arg::Buf(i, off) => addrs[i] + off as u64,
                Arg::Int(v) => v,
            };
        }
        h.x[1] = sentinel;
        h.x[2] = sp;
        h.pc = entry;
        h.vtype = 1 << 63;
        h.vl = 0;
        m.run_until(sentinel).map_err(|f| format!("{}: fault {f}", c.func))?;
        let h = &m.hart;
        if h.x[2] != sp {
            return Err(format!("{}: sp is {:#x} after the call, was {sp:#x}", c.func, h.x[2]));
        }
        if let Some(&r) = PRESERVED.iter().find(|&&r| h.x[r] != seed(r)) {
            return Err(format!("{}: {} was not preserved", c.func, kgen_dsl::text::XNAMES[r]));
        }
        rets.push(h.x[10]);
    }
    let buffers = plan.buffers.iter().zip(&addrs).map(|(b, &a)| m.mem.read_bytes(a, b.bytes.len())).collect();
    Ok(Outcome { rets, buffers })
}

/// Runs `plan` with buffers in this process's memory, calling each function through `call`
/// (function name, argument registers) -> a0: the native path.
pub fn run_host(plan: &Plan, call: &mut dyn FnMut(&str, &[u64]) -> Result<u64, String>) -> Result<Outcome, String> {
    // (storage, index of the buffer's first byte in it); the storage never reallocates.
    let mut store: Vec<(Vec<u8>, usize)> = plan
        .buffers
        .iter()
        .map(|b| {
            let mut v = vec![0u8; b.bytes.len() + b.offset + 64];
            let addr = v.as_ptr() as usize;
            let start = addr.next_multiple_of(64) - addr + b.offset;
            v[start..start + b.bytes.len()].copy_from_slice(&b.bytes);
            (v, start)
        })
        .collect();
    let addrs: Vec<u64> = store.iter_mut().map(|(v, start)| v.as_mut_ptr() as u64 + *start as u64).collect();
    let mut rets = Vec::new();
    for c in &plan.calls {
        let args: Vec<u64> = c
            .args
            .iter()
            .map(|a| match *a {
                Arg::Buf(i, off) => addrs[i] + off as u64,
                Arg::Int(v) => v,
            })
            .collect();
        rets.push(call(&c.func, &args)?);
    }
    let buffers = store.iter().zip(&plan.buffers).map(|((v, start), b)| v[*start..*start + b.bytes.len()].to_vec()).collect();
    Ok(Outcome { rets, buffers })
}

#[cfg(target_arch = "riscv64")]
fn run_native(j: &Jit, plan: &Plan) -> Result<Outcome, String> {
    run_host(plan, &mut |f, args| {
        // SAFETY: the module is built for the psABI (kgen's OpenSSL ABI); every plan passes
        // each function buffers of the sizes it accesses (see the plans above); the CPU must
        // implement the variant's target, which the module documentation asks of the user.
        unsafe { j.call(f, args) }.map_err(|e| e.to_string())
    })
}

#[cfg(not(target_arch = "riscv64"))]
fn run_native(_: &Jit, _: &Plan) -> Result<Outcome, String> {
    Err("native calls need a riscv64 host".into())
}

/// How the buffer's code ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Called in this process (riscv64 host).
    Native,
    /// Run in kgen-sim, mapped at the buffer's address.
    Simulated,
}

/// The result of `kgen jit-run` for one variant.
#[derive(Clone, Debug)]
pub struct Run {
    pub kernel: String,
    pub variant: String,
    pub target: String,
    pub path: Path,
    /// Address of the JIT buffer.
    pub base: u64,
    pub text_len: usize,
    pub data_len: usize,
    pub verdicts: Vec<Verdict>,
    /// Why the calls did not complete (fault, ABI violation), if they did not.
    pub error: Option<String>,
}

impl Run {
    /// Every call completed and every check matched.
    pub fn passed(&self) -> bool {
        self.error.is_none() && !self.verdicts.is_empty() && self.verdicts.iter().all(Verdict::ok)
    }

    /// The report `kgen jit-run` prints.
    pub fn lines(&self) -> Vec<String> {
        let short = |s: &str| if s.len() > 64 { format!("{}… ({} bytes)", &s[..64], s.len() / 2) } else { s.to_string() };
        let mut out = vec![format!(
            "== {} {} (target {}, OpenSSL ABI): JIT buffer at {:#x}, {} bytes of code, {} bytes of data",
            self.kernel, self.variant, self.target, self.base, self.text_len, self.data_len
        )];
        out.push(match self.path {
            Path::Native => "   path: native (called in this process on the riscv64 host)".to_string(),
            Path::Simulated => format!("   path: simulated in kgen-sim at the buffer's address (host {})", std::env::consts::ARCH),
        });
        for v in &self.verdicts {
            if v.ok() {
                out.push(format!("   ok        {}: {}", v.name, short(&v.got)));
            } else {
                out.push(format!("   MISMATCH  {}: got {}, want {}", v.name, short(&v.got), short(&v.want)));
            }
        }
        if let Some(e) = &self.error {
            out.push(format!("   FAILED    {e}"));
        }
        let ok = self.verdicts.iter().filter(|v| v.ok()).count();
        out.push(format!("   {ok}/{} checks match{}", self.verdicts.len(), if self.passed() { "" } else { ": FAIL" }));
        out
    }
}

/// The known-answer plan of a kernel variant (OpenSSL ABI), checked against the entry
/// points' declarations; an error for a kernel without one.
pub fn plan(k: &Kernel, variant: &str) -> Result<Plan, String> {
    let f = k.kat.ok_or_else(|| format!("kernel `{}` has no known-answer checks", k.name))?;
    let p = f(variant).map_err(|e| format!("{} {variant}: {e}", k.name))?;
    match p.errors.first() {
        Some(e) => Err(format!("{} {variant}: the known-answer plan does not match the entry points: {e}", k.name)),
        None => Ok(p),
    }
}

/// Builds `kernel` `variant` for the OpenSSL ABI, loads it into a JIT buffer (with the low
/// bit of byte `flip` inverted, for a negative control) and runs its known-answer plan:
/// natively on a riscv64 host unless `force_sim`, else in kgen-sim.
pub fn jit_run(k: &Kernel, variant: &str, force_sim: bool, flip: Option<usize>) -> Result<Run, String> {
    let kernel = k.name;
    let v = k.variant(variant).ok_or_else(|| format!("kernel `{kernel}` has no variant `{variant}`"))?;
    let plan = plan(k, variant)?;
    let m = v.build(Abi::Psabi).map_err(|e| e.to_string())?;
    let mut bad_flip = None;
    let j = jit::jit_with(&m, |b| match flip {
        Some(off) if off < b.len() => b[off] ^= 1,
        Some(off) => bad_flip = Some(format!("--flip-byte {off:#x} is past the end of the {}-byte buffer", b.len())),
        None => {}
    })
    .map_err(|e| e.to_string())?;
    if let Some(e) = bad_flip {
        return Err(e);
    }
    let path = if cfg!(target_arch = "riscv64") && !force_sim { Path::Native } else { Path::Simulated };
    let outcome = match path {
        Path::Native => run_native(&j, &plan),
        Path::Simulated => run_sim(&j.image(), &m.target, &plan),
    };
    let (verdicts, error) = match outcome {
        Ok(o) => (plan.verdicts(&o), None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let data_len = j.image().bytes.len().saturating_sub(j.rodata_offset);
    Ok(Run { kernel: kernel.into(), variant: variant.into(), target: m.target.name.into(), path, base: j.base, text_len: j.text_len, data_len, verdicts, error })
}
