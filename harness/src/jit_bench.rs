//! `kgen jit-bench`: the cycles a JIT-loaded kernel takes on this CPU, beside the C906
//! cost model's figure for the same calls.
//!
//! The module is built for the OpenSSL ABI, loaded into an executable buffer
//! ([`kgen_emit::jit`]) and driven by the same benchmark driver as `kgen bench`
//! ([`crate::bench::drive`] with the kernel's OpenSSL-ABI driver), with buffers in this process. Each call is made once to warm
//! the caches and then `runs` times, timed with the hardware cycle counter, and the median
//! is kept. The counter is Linux's `perf_event_open` (PERF_COUNT_HW_CPU_CYCLES, user mode
//! only) where the kernel offers it, else the `cycle` CSR read directly (`rdcycle`), which
//! Linux 6.6 and later may refuse to user space; whether `rdcycle` works is tried in a
//! child process first, so a refusal is reported, not a crash. Off a riscv64 host there is no
//! counter to read: only the model's column is printed, and the report says why.
//!
//! Under QEMU the "measured" cycles are QEMU's host-derived counter and mean nothing; the
//! figures are for the board.

#[cfg(target_arch = "riscv64")]
use crate::bench::Harness;
use crate::bench::{self, Row};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::Abi;
use std::fmt::Write as _;

/// Timed calls per measurement (the median is kept).
pub const RUNS: usize = 9;

/// One line of the report: the model's and the counter's cycles for the same call.
#[derive(Clone, Debug)]
pub struct Line {
    pub model: Row,
    /// Measured cycles of the same call, if a counter was read.
    pub measured: Option<u64>,
}

/// The result of `kgen jit-bench`.
#[derive(Clone, Debug)]
pub struct Report {
    pub kernel: String,
    pub variant: String,
    /// The counter used, or why there is none.
    pub counter: Result<&'static str, String>,
    pub lines: Vec<Line>,
}

impl Report {
    /// The table `kgen jit-bench` prints: modeled and measured cycles per byte, and their
    /// ratio (measured / model).
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "== {} {} (OpenSSL ABI, JIT buffer)", self.kernel, self.variant);
        match &self.counter {
            Ok(c) => {
                let _ = writeln!(s, "   counter: {c}; each figure the median of {RUNS} warm calls");
            }
            Err(why) => {
                let _ = writeln!(s, "   measured: no hardware cycle counter available: {why}");
            }
        }
        let _ = writeln!(s, "{:<26} {:>7} {:>12} {:>12} {:>7}", "function", "bytes", "model c/B", "measured c/B", "ratio");
        for l in &self.lines {
            let r = &l.model;
            let (m, ratio) = match l.measured {
                Some(c) => {
                    let cpb = c as f64 / r.bytes.max(1) as f64;
                    (format!("{cpb:.2}"), format!("{:.2}", cpb / r.cpb().max(f64::MIN_POSITIVE)))
                }
                None => ("–".to_string(), "–".to_string()),
            };
            let _ = writeln!(s, "{:<26} {:>7} {:>12.2} {:>12} {:>7}", r.what, r.bytes, r.cpb(), m, ratio);
        }
        s
    }
}

/// Builds `kernel` `variant`, measures it natively (on riscv64) and on the model.
pub fn jit_bench(k: &Kernel, variant: &str, sizes: &[usize], runs: usize) -> Result<Report, String> {
    let kernel = k.name;
    let v = k.variant(variant).ok_or_else(|| format!("kernel `{kernel}` has no variant `{variant}`"))?;
    bench::psabi_bench(k)?;
    let m = v.build(Abi::Psabi).map_err(|e| e.to_string())?;
    let obj = m.object().map_err(|e| e.to_string())?;
    let model = bench::bench_object(k, variant, &obj, &m.target, sizes)?;
    let (counter, measured) = native(k, variant, &m, sizes, runs);
    let lines = model
        .into_iter()
        .enumerate()
        .map(|(i, r)| Line { measured: measured.as_ref().and_then(|ms| ms.get(i).map(|x| x.cycles)), model: r })
        .collect();
    Ok(Report { kernel: kernel.into(), variant: variant.into(), counter, lines })
}

#[cfg(target_arch = "riscv64")]
fn native(kernel: &Kernel, variant: &str, m: &kgen_dsl::Module, sizes: &[usize], runs: usize) -> (Result<&'static str, String>, Option<Vec<Row>>) {
    let counter = match counter::Counter::open() {
        Ok(c) => c,
        Err(e) => return (Err(e), None),
    };
    let name = counter.name();
    let j = match kgen_emit::jit::jit(m) {
        Ok(j) => j,
        Err(e) => return (Err(format!("loading the JIT buffer: {e}")), None),
    };
    let mut h = NativeHarness { jit: &j, bufs: Vec::new(), counter, runs: runs.max(1) };
    let b = match bench::psabi_bench(kernel) {
        Ok(b) => b,
        Err(e) => return (Err(e), None),
    };
    match bench::drive(kernel, b, variant, &mut h, sizes) {
        Ok(rows) => (Ok(name), Some(rows)),
        Err(e) => (Err(format!("the native calls failed: {e}")), None),
    }
}

#[cfg(not(target_arch = "riscv64"))]
fn native(_: &Kernel, _: &str, _: &kgen_dsl::Module, _: &[usize], _: usize) -> (Result<&'static str, String>, Option<Vec<Row>>) {
    (Err(format!("this host is {}, not riscv64 (run kgen jit-bench on the board; see README.md)", std::env::consts::ARCH)), None)
}

/// Buffers in this process and calls into the JIT buffer, timed.
#[cfg(target_arch = "riscv64")]
struct NativeHarness<'a> {
    jit: &'a kgen_emit::jit::Jit,
    /// Storage of every buffer handed out (never reallocated, kept until the end).
    bufs: Vec<Vec<u8>>,
    counter: counter::Counter,
    runs: usize,
}

#[cfg(target_arch = "riscv64")]
impl Harness for NativeHarness<'_> {
    fn buffer(&mut self, data: &[u8], offset: usize, _writable: bool) -> u64 {
        let mut v = vec![0u8; data.len() + offset + 64];
        let addr = v.as_ptr() as usize;
        let start = addr.next_multiple_of(64) - addr + offset;
        v[start..start + data.len()].copy_from_slice(data);
        let a = v.as_ptr() as u64 + start as u64;
        self.bufs.push(v);
        a
    }
    fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String> {
        let name = e.find_in(self.jit.symbols.keys()).ok_or_else(|| format!("no function for entry point {}* in the module", e.prefix))?;
        Ok((name.clone(), self.lookup(&name)?))
    }
    fn lookup(&self, name: &str) -> Result<u64, String> {
        self.jit.addr(name).map_err(|e| e.to_string())
    }
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String> {
        let mut times = Vec::with_capacity(self.runs);
        // SAFETY: the benchmark driver passes each function buffers of the sizes it
        // accesses (the same calls kgen-sim checks in `kgen bench`), the module is built for
        // the psABI, and the user runs the variant on a CPU that implements its target.
        unsafe { self.jit.call_addr(f, args) }.map_err(|e| e.to_string())?;
        for _ in 0..self.runs {
            let t0 = self.counter.read();
            // SAFETY: as above.
            unsafe { self.jit.call_addr(f, args) }.map_err(|e| e.to_string())?;
            let t1 = self.counter.read();
            times.push(t1.wrapping_sub(t0));
        }
        times.sort_unstable();
        Ok((0, times[times.len() / 2]))
    }
}

#[cfg(target_arch = "riscv64")]
mod counter {
    /// A cycle counter this process can read.
    pub enum Counter {
        /// A perf event file descriptor (PERF_COUNT_HW_CPU_CYCLES, user mode).
        Perf(i32),
        /// The `cycle` CSR (`rdcycle`).
        Csr,
    }

    impl Counter {
        pub fn open() -> Result<Counter, String> {
            if let Some(fd) = perf_cycles() {
                return Ok(Counter::Perf(fd));
            }
            if rdcycle_allowed() {
                return Ok(Counter::Csr);
            }
            Err("perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed and rdcycle traps (Linux 6.6+ disables user cycle reads unless perf allows them: sysctl kernel.perf_user_access=2)".into())
        }

        pub fn name(&self) -> &'static str {
            match self {
                Counter::Perf(_) => "perf_event_open (PERF_COUNT_HW_CPU_CYCLES, user mode)",
                Counter::Csr => "rdcycle (the cycle CSR)",
            }
        }

        pub fn read(&self) -> u64 {
            match self {
                Counter::Perf(fd) => {
                    let mut v = 0u64;
                    // SAFETY: reading 8 bytes from an open perf event fd into a u64.
                    let n = unsafe { libc::read(*fd, (&mut v as *mut u64).cast(), 8) };
                    if n == 8 { v } else { 0 }
                }
                Counter::Csr => rdcycle(),
            }
        }
    }

    impl Drop for Counter {
        fn drop(&mut self) {
            if let Counter::Perf(fd) = self {
                // SAFETY: closing the fd this value owns.
                unsafe { libc::close(*fd) };
            }
        }
    }

    fn rdcycle() -> u64 {
        let c: u64;
        // SAFETY: reads the cycle CSR; no memory is touched.
        unsafe { std::arch::asm!("rdcycle {0}", out(reg) c, options(nomem, nostack)) };
        c
    }

    /// perf_event_open for this thread's user-mode CPU cycles, or None.
    fn perf_cycles() -> Option<i32> {
        // struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type at 0, size at 4,
        // config at 8, flags at 40 (bit 5 exclude_kernel, bit 6 exclude_hv).
        let mut attr = [0u8; 64];
        attr[0..4].copy_from_slice(&0u32.to_le_bytes()); // PERF_TYPE_HARDWARE
        attr[4..8].copy_from_slice(&64u32.to_le_bytes());
        attr[8..16].copy_from_slice(&0u64.to_le_bytes()); // PERF_COUNT_HW_CPU_CYCLES
        attr[40..48].copy_from_slice(&((1u64 << 5) | (1u64 << 6)).to_le_bytes());
        // SAFETY: the syscall reads the 64-byte attribute structure above.
        let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
        if fd < 0 {
            return None;
        }
        let fd = fd as i32;
        let c = Counter::Perf(fd);
        // A counter that does not count (a stub PMU) is no counter.
        let (a, b) = (c.read(), {
            let mut x = 0u64;
            for i in 0..10_000u64 {
                x = x.wrapping_add(std::hint::black_box(i));
            }
            std::hint::black_box(x);
            c.read()
        });
        if b > a {
            std::mem::forget(c);
            Some(fd)
        } else {
            None
        }
    }

    /// Whether `rdcycle` works in user mode here: tried in a child process, which dies of
    /// SIGILL where the kernel refuses it.
    fn rdcycle_allowed() -> bool {
        // SAFETY: fork in a process that then only reads a CSR and exits in the child.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let a = rdcycle();
            let b = rdcycle();
            // SAFETY: leaving the child without running the parent's destructors.
            unsafe { libc::_exit(if b >= a { 0 } else { 1 }) };
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        // SAFETY: waiting for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}
