//! `kgen bench`: instructions and modeled C906 cycles of a kernel's benchmark driver on
//! kgen-sim: for a variant's module, for an assembly file that implements the kernel's
//! OpenSSL ABI (the same driver), or for the Go build as Go's assembler makes it.

pub use kgen_dsl::kernel::Harness;
use kgen_dsl::kernel::{Bench, Kernel, Measured};
use kgen_dsl::object::Object;
use kgen_dsl::target::Target;
use kgen_dsl::Abi;
use kgen_sim::{CallError, Env};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Message sizes of the tables (bytes).
pub const SIZES: [usize; 7] = [16, 64, 256, 1024, 1400, 4096, 16384];

/// The largest message `kgen bench` runs (the simulator maps each buffer in memory).
pub const MAX_SIZE: usize = 64 << 20;

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    pub kernel: String,
    pub variant: String,
    /// What was measured (function or operation).
    pub what: String,
    pub bytes: usize,
    pub instructions: u64,
    pub cycles: u64,
}

impl Row {
    pub fn cpb(&self) -> f64 {
        self.cycles as f64 / self.bytes.max(1) as f64
    }
}

/// The rows of a benchmark's figures, labelled with the kernel and the variant.
fn rows(kernel: &str, variant: &str, figures: Vec<Measured>) -> Vec<Row> {
    figures
        .into_iter()
        .map(|m| Row { kernel: kernel.into(), variant: variant.into(), what: m.what, bytes: m.bytes, instructions: m.instructions, cycles: m.cycles })
        .collect()
}

/// Runs `bench` of `kernel` on a harness where its symbols are linked (a kgen module's, or
/// an assembled file's: functions are found by their entry points' names, see
/// [`kgen_dsl::entry::Entry::find_in`]); the rows name `variant`.
pub fn drive(kernel: &Kernel, bench: &Bench, variant: &str, h: &mut dyn Harness, sizes: &[usize]) -> Result<Vec<Row>, String> {
    let figures = (bench.drive)(h, sizes).map_err(|e| format!("{} {variant}: {e}", kernel.name))?;
    Ok(rows(kernel.name, variant, figures))
}

/// The OpenSSL-ABI benchmark of `kernel`, or an error saying it has none.
pub fn psabi_bench(kernel: &Kernel) -> Result<&Bench, String> {
    kernel.bench(Abi::Psabi).ok_or_else(|| format!("kernel `{}` has no benchmark driver", kernel.name))
}

/// Benchmarks an object (a kgen module's, or an assembled file's) with the kernel's
/// OpenSSL-ABI driver.
pub fn bench_object(kernel: &Kernel, variant: &str, obj: &Object, target: &Target, sizes: &[usize]) -> Result<Vec<Row>, String> {
    let b = psabi_bench(kernel)?;
    let mut env = Env::new(obj, target)?.with_cost_model();
    env.m.max_steps = 1 << 34;
    drive(kernel, b, variant, &mut env, sizes)
}

/// A module built for the Linux kernel's ABI (arguments in registers, as the OpenSSL build),
/// measured by one of the kernel's Linux-ABI drivers.
pub fn bench_linux_module(kernel: &Kernel, bench: &Bench, variant: &str, m: &kgen_dsl::Module, sizes: &[usize]) -> Result<Vec<Row>, String> {
    let obj = m.object().map_err(|e| e.to_string())?;
    let mut env = Env::new(&obj, &m.target)?.for_abi(Abi::Linux).with_cost_model();
    env.m.max_steps = 1 << 34;
    drive(kernel, bench, variant, &mut env, sizes)
}

/// Go's ABI0 on kgen-sim: the functions as Go's assembler builds them from kgen's Go output
/// ([`kgen_emit::go::abi0_object`]: prologue, argument loads from the caller's frame, body,
/// epilogue), called with their arguments written where ABI0 puts them.
struct Abi0 {
    env: Env,
    frames: HashMap<u64, kgen_emit::go::ArgFrame>,
}

impl Harness for Abi0 {
    fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64 {
        self.env.buffer(data, offset, writable)
    }
    fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String> {
        self.env.entry(e)
    }
    fn lookup(&self, name: &str) -> Result<u64, String> {
        self.env.lookup(name)
    }
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String> {
        let fr = self.frames.get(&f).ok_or_else(|| format!("no Go function at {f:#x}"))?;
        for ((name, t, off), v) in fr.args.iter().zip(args) {
            let b = v.to_le_bytes();
            let n = t.size as usize;
            if n < 8 && v >> (8 * n) != 0 && (*v as i64) >> (8 * n - 1) != -1 {
                return Err(format!("argument `{name}` = {v:#x} does not fit {}", t.name));
            }
            self.env.m.mem.write_bytes(kgen_sim::call::CALL_SP + kgen_emit::go::FIXED_FRAME as u64 + *off as u64, &b[..n]);
        }
        Env::call(&mut self.env, f, &[]).map(|o| (o.instructions, o.cycles)).map_err(|e: CallError| e.to_string())
    }
}

/// Benchmarks a module built for the Go ABI as Go runs it (see `Abi0`) with `bench`.
/// Returns the rows and the functions left out (Go's stack-check prologue is not modeled).
pub fn bench_go_module(kernel: &Kernel, bench: &Bench, variant: &str, m: &kgen_dsl::Module, sizes: &[usize]) -> Result<(Vec<Row>, Vec<String>), String> {
    let (obj, skipped) = kgen_emit::go::abi0_object(m).map_err(|e| format!("{} {variant}: {e}", m.kernel))?;
    if !skipped.is_empty() {
        return Ok((Vec::new(), skipped));
    }
    let mut env = Env::new(&obj, &m.target)?.for_abi(kgen_dsl::Abi::Go).with_cost_model();
    env.m.max_steps = 1 << 34;
    let mut frames = HashMap::new();
    for l in m.funcs.iter().filter(|l| l.global) {
        let a = env.lookup(&l.func.name)?;
        frames.insert(a, kgen_emit::go::arg_frame(l).map_err(|e| e.to_string())?);
    }
    let mut h = Abi0 { env, frames };
    let mut rows = drive(kernel, bench, variant, &mut h, sizes)?;
    for r in &mut rows {
        r.kernel = m.kernel.clone();
        // The Go name of the function (`ChaCha20_ctr32_c906` → `chaCha20Ctr32C906`).
        let (sym, rest) = r.what.split_at(r.what.find('(').unwrap_or(r.what.len()));
        r.what = format!("{}{rest}", kgen_emit::go::go_name(sym).map_err(|e| e.to_string())?);
    }
    Ok((rows, Vec::new()))
}

/// The table as text.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<10} {:<16} {:<34} {:>7} {:>12} {:>12} {:>9}", "kernel", "variant", "measured", "bytes", "instructions", "cycles", "cyc/byte");
    for r in rows {
        let _ = writeln!(
            s,
            "{:<10} {:<16} {:<34} {:>7} {:>12} {:>12} {:>9.2}",
            r.kernel, r.variant, r.what, r.bytes, r.instructions, r.cycles, r.cpb()
        );
    }
    s
}

/// The (kernel, variant, function) of `rows`, each once, in the order they first appear:
/// the lines of a table.
pub fn row_keys(rows: &[Row]) -> Vec<(&str, &str, &str)> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in rows {
        let k = (r.kernel.as_str(), r.variant.as_str(), r.what.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

/// A Markdown summary: one line per kernel, variant and function, modeled cycles per byte
/// for each size (instructions per byte in the last column, at the largest size). A size a
/// block-granular kernel rounded up shares the requested size's column.
pub fn markdown(rows: &[Row]) -> String {
    // Kernels that work in whole blocks round a size up (1400 -> 1408): same column.
    let col = |b: usize| rows.iter().map(|r| r.bytes).filter(|&x| x <= b && b - x < 16).min().unwrap_or(b);
    let mut sizes: Vec<usize> = rows.iter().map(|r| col(r.bytes)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let keys = row_keys(rows);
    let mut s = String::from("| kernel | variant | function |");
    for n in &sizes {
        let _ = write!(s, " {n} B |");
    }
    s.push_str(" instr/B |\n|---|---|---|");
    for _ in &sizes {
        s.push_str("---:|");
    }
    s.push_str("---:|\n");
    for (k, v, w) in keys {
        let _ = write!(s, "| {k} | {v} | {w} |");
        let mut last = None;
        for n in &sizes {
            match rows.iter().find(|r| r.kernel == k && r.variant == v && r.what == w && col(r.bytes) == *n) {
                Some(r) => {
                    let _ = write!(s, " {:.2} |", r.cpb());
                    last = Some(r);
                }
                None => s.push_str(" – |"),
            }
        }
        match last {
            Some(r) => {
                let _ = writeln!(s, " {:.2} |", r.instructions as f64 / r.bytes.max(1) as f64);
            }
            None => s.push_str(" – |\n"),
        }
    }
    s
}

pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from("kernel,variant,measured,bytes,instructions,cycles,cycles_per_byte\n");
    for r in rows {
        let _ = writeln!(s, "{},{},{},{},{},{},{:.3}", r.kernel, r.variant, r.what, r.bytes, r.instructions, r.cycles, r.cpb());
    }
    s
}

pub fn json(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "  {{\"kernel\": \"{}\", \"variant\": \"{}\", \"measured\": \"{}\", \"bytes\": {}, \"instructions\": {}, \"cycles\": {}, \"cycles_per_byte\": {:.3}}}",
                r.kernel,
                r.variant,
                r.what,
                r.bytes,
                r.instructions,
                r.cycles,
                r.cpb()
            )
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}
