//! `kgen bench --asm FILE --call 'SYMBOL(ARGS)'`: any function of assembly files (GNU
//! syntax; RVV 1.0 input on an XTheadVector target runs as rvv-rollback translates it) timed
//! on the C906 model.
//!
//! Arguments, comma separated, in a0..a7:
//!
//! | argument | meaning |
//! |---|---|
//! | `123`, `-1`, `0x40` | an integer |
//! | `buf:N` | a pointer to N bytes of random data (the same bytes on every run), 64-byte aligned |
//! | `buf:N:zero`, `buf:N:fill=0x5a`, `buf:N:file=PATH` | zero-filled, filled with one byte, or the file's bytes (N at most the file's size) |
//! | `buf:N:align=A` | aligned to A (a power of two) and not to 2A: `align=1` gives an odd address |
//! | `buf:N:ro` | mapped read-only |
//! | `buf:N:name=S`, `@S` | a buffer named S, and the same buffer again (in this or a later call) |
//!
//! Every buffer is refilled before every call of the call that defines it (functions may
//! work in place); `@S` passes the buffer as the earlier calls left it (state carried from
//! an init call to an update call). The function is called once to warm up, then `repeat`
//! times; the row gives the mean instructions and cycles of the repeated calls, and cycles
//! per byte of the bytes [`BytesFrom`] names (by default the largest buffer the call
//! wrote). A call that has not returned after its step limit (by default 4 Mi
//! instructions plus 256 per byte of its buffers) stops with an error saying so.
//!
//! `.S` files go through the C preprocessor first, as gcc would (`riscv64-linux-gnu-gcc -E`
//! with the target's `-march`, `-D` and `-I`): [`read_source`].

use crate::bench::Row;
use kgen_dsl::object::Object;
use std::path::Path;
use kgen_dsl::target::Target;
use kgen_sim::{CallError, Env};
use rand::{RngCore, SeedableRng};
use std::collections::HashMap;
use std::path::PathBuf;

/// The largest buffer one argument may ask for.
pub const MAX_BUFFER: usize = kgen_sim::call::MAX_BUFFER_BYTES / 4;

/// How a buffer is filled before each call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fill {
    Random,
    Byte(u8),
    File(PathBuf),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufSpec {
    pub size: usize,
    /// The address is a multiple of this and not of twice this (64 and above: 64-aligned).
    pub align: usize,
    pub fill: Fill,
    pub writable: bool,
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgSpec {
    Int(u64),
    Buf(BufSpec),
    /// A buffer named earlier.
    Ref(String),
}

/// `SYMBOL(ARGS)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSpec {
    pub text: String,
    pub symbol: String,
    pub args: Vec<ArgSpec>,
}

fn parse_int(s: &str) -> Option<u64> {
    kgen_dsl::text::parse_int(s).map(|v| v as u64)
}

/// Parses `SYMBOL(ARG, ...)`.
pub fn parse_call(text: &str) -> Result<CallSpec, String> {
    let bad = |why: String| format!("--call `{text}`: {why}");
    let t = text.trim();
    let open = t.find('(').ok_or_else(|| bad("expected SYMBOL(ARGS)".into()))?;
    let inner = t[open + 1..].strip_suffix(')').ok_or_else(|| bad("missing `)` at the end".into()))?;
    let symbol = t[..open].trim();
    if symbol.is_empty() || !symbol.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$') {
        return Err(bad(format!("`{symbol}` is not a symbol name")));
    }
    let mut args = Vec::new();
    for a in inner.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        args.push(parse_arg(a).map_err(|w| bad(format!("argument `{a}`: {w}")))?);
    }
    if args.len() > 8 {
        return Err(bad(format!("{} arguments: at most 8 go in registers (a0..a7)", args.len())));
    }
    Ok(CallSpec { text: t.to_string(), symbol: symbol.to_string(), args })
}

fn parse_arg(a: &str) -> Result<ArgSpec, String> {
    if let Some(n) = a.strip_prefix('@') {
        return Ok(ArgSpec::Ref(n.to_string()));
    }
    let Some(rest) = a.strip_prefix("buf:") else {
        return parse_int(a).map(ArgSpec::Int).ok_or_else(|| "not an integer, `buf:SIZE[:...]` or `@NAME`".to_string());
    };
    let mut parts = rest.split(':');
    let size = parts.next().and_then(parse_int).ok_or("the size is not an integer")?;
    if size as u128 > MAX_BUFFER as u128 {
        return Err(format!("{size} bytes: a buffer holds at most {MAX_BUFFER} bytes in the simulator"));
    }
    let mut b = BufSpec { size: size as usize, align: 64, fill: Fill::Random, writable: true, name: None };
    for p in parts {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        match k {
            "zero" => b.fill = Fill::Byte(0),
            "random" => b.fill = Fill::Random,
            "ro" => b.writable = false,
            "fill" => b.fill = Fill::Byte(parse_int(v).filter(|&x| x < 256).ok_or("fill= takes a byte")? as u8),
            "file" => b.fill = Fill::File(PathBuf::from(v)),
            "name" if !v.is_empty() => b.name = Some(v.to_string()),
            "align" => {
                let al = parse_int(v).filter(|x| x.is_power_of_two() && *x <= 4096).ok_or("align= takes a power of two up to 4096")?;
                b.align = al as usize;
            }
            _ => return Err(format!("unknown buffer option `{p}` (zero, random, fill=B, file=PATH, align=A, ro, name=S)")),
        }
    }
    Ok(ArgSpec::Buf(b))
}

struct Placed {
    addr: u64,
    data: Vec<u8>,
    writable: bool,
}

/// An environment with the inputs linked and the calls' buffers placed.
pub struct Runner {
    pub env: Env,
    bufs: Vec<Placed>,
    named: HashMap<String, usize>,
    seed: u64,
}

/// A call ready to run: the function's address, the registers, and the buffers to refill.
pub struct Prepared {
    pub spec: CallSpec,
    pub entry: u64,
    pub args: Vec<u64>,
    bufs: Vec<usize>,
    /// Per argument: the buffer's size and whether the call may write it, or the integer.
    sizes: Vec<Result<(usize, bool), u64>>,
    /// Per argument: the warm-up call changed the buffer's bytes.
    written: Vec<bool>,
    /// Bytes of all the call's buffers.
    pub buffer_bytes: usize,
}

impl Prepared {
    /// The bytes `from` names for this call.
    pub fn bytes(&self, from: &BytesFrom) -> usize {
        match *from {
            BytesFrom::Fixed(n) => n,
            BytesFrom::Arg(n) => match self.sizes.get(n) {
                Some(Ok((size, _))) => *size,
                Some(Err(v)) => *v as usize,
                None => 1,
            },
            BytesFrom::LargestWritten => {
                let bufs = || self.sizes.iter().zip(&self.written).filter_map(|(s, w)| s.as_ref().ok().map(|(n, _)| (*n, *w)));
                let written = bufs().filter(|(_, w)| *w).map(|(n, _)| n).max();
                written.or_else(|| bufs().map(|(n, _)| n).max()).unwrap_or(1)
            }
        }
    }
}

impl Runner {
    /// Links `obj` (undefined symbols are reported when called) with the cost model on.
    pub fn new(obj: &Object, target: &Target) -> Result<Runner, String> {
        let mut env = Env::with_undefined_stubs(obj, target)?.with_cost_model();
        env.m.max_steps = default_steps(0);
        Ok(Runner { env, bufs: Vec::new(), named: HashMap::new(), seed: 0 })
    }

    fn place(&mut self, b: &BufSpec) -> Result<usize, String> {
        let data = match &b.fill {
            Fill::Byte(v) => vec![*v; b.size],
            Fill::Random => {
                let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(0x6b67_656e + self.seed);
                self.seed += 1;
                let mut d = vec![0u8; b.size];
                r.fill_bytes(&mut d);
                d
            }
            Fill::File(p) => {
                let mut d = std::fs::read(p).map_err(|e| format!("buf file {}: {e}", p.display()))?;
                if d.len() < b.size {
                    return Err(format!("buf file {}: {} bytes, the buffer wants {}", p.display(), d.len(), b.size));
                }
                d.truncate(b.size);
                d
            }
        };
        // Offset from the 64-byte boundary Env::buffer places at: `align` exactly.
        let offset = if b.align >= 64 { 0 } else { b.align };
        let addr = self.env.try_buffer(&data, offset, b.writable)?;
        self.bufs.push(Placed { addr, data, writable: b.writable });
        Ok(self.bufs.len() - 1)
    }

    /// Resolves the symbol and places the call's new buffers.
    pub fn prepare(&mut self, spec: &CallSpec) -> Result<Prepared, String> {
        let entry = self.env.lookup(&spec.symbol)?;
        let mut args = Vec::new();
        let mut bufs = Vec::new();
        let mut sizes = Vec::new();
        let mut buffer_bytes = 0;
        for a in &spec.args {
            match a {
                ArgSpec::Int(v) => {
                    args.push(*v);
                    sizes.push(Err(*v));
                }
                ArgSpec::Buf(b) => {
                    let k = self.place(b)?;
                    if let Some(n) = &b.name {
                        self.named.insert(n.clone(), k);
                    }
                    args.push(self.bufs[k].addr);
                    bufs.push(k);
                    sizes.push(Ok((b.size, b.writable)));
                    buffer_bytes += b.size;
                }
                ArgSpec::Ref(n) => {
                    // As the earlier calls left it (not refilled: it carries state).
                    let k = *self.named.get(n).ok_or_else(|| format!("--call `{}`: no buffer named `{n}` before", spec.text))?;
                    args.push(self.bufs[k].addr);
                    sizes.push(Ok((self.bufs[k].data.len(), self.bufs[k].writable)));
                    buffer_bytes += self.bufs[k].data.len();
                }
            }
        }
        let written = vec![false; sizes.len()];
        Ok(Prepared { spec: spec.clone(), entry, args, bufs, sizes, written, buffer_bytes })
    }

    /// Refills the call's buffers and calls it once.
    pub fn call(&mut self, p: &Prepared) -> Result<kgen_sim::call::Outcome, String> {
        self.refill(p);
        self.env.call(p.entry, &p.args).map_err(|e: CallError| format!("{}: {e}", p.spec.symbol))
    }

    fn refill(&mut self, p: &Prepared) {
        for &k in &p.bufs {
            let b = &self.bufs[k];
            if b.writable {
                self.env.m.mem.write_bytes(b.addr, &b.data);
            }
        }
    }

    /// The warm-up call: as [`Runner::call`], noting which of its buffers it wrote.
    pub fn warm_up(&mut self, p: &mut Prepared) -> Result<(), String> {
        self.refill(p);
        let before: Vec<Option<Vec<u8>>> = p.args.iter().zip(&p.sizes).map(|(&a, s)| s.as_ref().ok().map(|(n, _)| self.env.m.mem.read_bytes(a, *n))).collect();
        self.env.call(p.entry, &p.args).map_err(|e: CallError| format!("{}: {e}", p.spec.symbol))?;
        for (k, b) in before.into_iter().enumerate() {
            if let Some(b) = b {
                p.written[k] = self.env.m.mem.read_bytes(p.args[k], b.len()) != b;
            }
        }
        Ok(())
    }

    /// `warmup` calls, then the mean instructions and cycles of `repeat` calls.
    pub fn measure(&mut self, p: &Prepared, warmup: usize, repeat: usize) -> Result<(f64, f64), String> {
        for _ in 0..warmup {
            self.call(p)?;
        }
        let (mut i, mut c) = (0u64, 0u64);
        for _ in 0..repeat.max(1) {
            let o = self.call(p)?;
            i += o.instructions;
            c += o.cycles;
        }
        let n = repeat.max(1) as f64;
        Ok((i as f64 / n, c as f64 / n))
    }
}

/// Where a call's cycles-per-byte figure takes its bytes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BytesFrom {
    /// A fixed count (`--bytes N`).
    Fixed(usize),
    /// Argument `aN`: a buffer's size, or an integer argument's value (`--bytes-from aN`).
    Arg(usize),
    /// The largest buffer the call wrote (its bytes changed in the warm-up call); the
    /// largest buffer if it wrote none; 1 if it has none.
    LargestWritten,
}

impl BytesFrom {
    /// `a0`..`a7`.
    pub fn parse(s: &str) -> Result<BytesFrom, String> {
        s.strip_prefix('a')
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n < 8)
            .map(BytesFrom::Arg)
            .ok_or_else(|| format!("--bytes-from `{s}`: name an argument register, a0 to a7"))
    }

    /// Whether `spec` has the argument named.
    pub fn check(&self, spec: &CallSpec) -> Result<(), String> {
        match *self {
            BytesFrom::Arg(n) if n >= spec.args.len() => Err(format!("--bytes-from a{n}: `{}` has {} arguments (a0..a{})", spec.text, spec.args.len(), spec.args.len().saturating_sub(1))),
            BytesFrom::Arg(n) if spec.args[n] == ArgSpec::Int(0) => Err(format!("--bytes-from a{n}: `{}` passes 0 there", spec.text)),
            _ => Ok(()),
        }
    }
}

/// How calls are run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Calls measured after the warm-up call.
    pub repeat: usize,
    /// The step limit per call (default: from the buffers).
    pub max_steps: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options { repeat: 1, max_steps: None }
    }
}

/// The default step limit of a call whose buffers hold `bytes` bytes in all.
pub fn default_steps(bytes: usize) -> u64 {
    (1u64 << 22) + 256 * bytes as u64
}

/// The source text of an assembly file: `.S` files through the C preprocessor (with the
/// `-D` definitions and `-I` directories, as gcc would run it for riscv64), other files as
/// they are.
pub fn read_source(p: &Path, defines: &[String], includes: &[PathBuf]) -> Result<String, String> {
    let preprocess = p.extension().is_some_and(|e| e == "S");
    if !preprocess {
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        return String::from_utf8(bytes).map_err(|_| format!("{}: not a text (assembly) file", p.display()));
    }
    if !p.is_file() {
        return Err(format!("{}: no such file", p.display()));
    }
    let gcc = Path::new("/usr/bin/riscv64-linux-gnu-gcc");
    if !gcc.exists() {
        return Err(format!("{}: a .S file needs the C preprocessor for riscv64 (riscv64-linux-gnu-gcc; scripts/setup-toolchain.sh installs it)", p.display()));
    }
    let mut c = std::process::Command::new(gcc);
    c.args(["-E", "-x", "assembler-with-cpp", "-march=rv64gc", "-mabi=lp64d"]);
    for d in defines {
        c.arg(format!("-D{d}"));
    }
    for i in includes {
        c.arg("-I").arg(i);
    }
    let o = c.arg(p).output().map_err(|e| format!("{}: the C preprocessor: {e}", p.display()))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let first = err.lines().find(|l| l.contains("error")).unwrap_or_else(|| err.lines().next().unwrap_or(""));
        return Err(format!("{}: the C preprocessor failed: {}", p.display(), first.trim()));
    }
    String::from_utf8(o.stdout).map_err(|_| format!("{}: the preprocessed text is not UTF-8", p.display()))
}

/// Times each call (in order, in one environment: named buffers carry over) and gives one
/// row per call, its bytes from `bytes[i]`.
pub fn bench_calls(label: &str, obj: &Object, target: &Target, calls: &[CallSpec], bytes: &[BytesFrom], opts: &Options) -> Result<Vec<Row>, String> {
    let mut r = Runner::new(obj, target)?;
    let mut rows = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let mut p = r.prepare(c)?;
        r.env.m.max_steps = opts.max_steps.unwrap_or_else(|| default_steps(p.buffer_bytes));
        r.warm_up(&mut p)?;
        let (ins, cy) = r.measure(&p, 0, opts.repeat)?;
        let from = bytes.get(i).or(bytes.first()).unwrap_or(&BytesFrom::LargestWritten);
        rows.push(Row {
            kernel: label.to_string(),
            variant: target.name.to_string(),
            what: c.text.clone(),
            bytes: p.bytes(from).max(1),
            instructions: ins.round() as u64,
            cycles: cy.round() as u64,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_syntax() {
        let c = parse_call("memcpy(buf:1024, buf:1024:align=1:zero, 1024)").unwrap();
        assert_eq!(c.symbol, "memcpy");
        assert_eq!(c.args.len(), 3);
        assert_eq!(c.args[2], ArgSpec::Int(1024));
        match &c.args[1] {
            ArgSpec::Buf(b) => assert_eq!((b.size, b.align, &b.fill), (1024, 1, &Fill::Byte(0))),
            other => panic!("{other:?}"),
        }
        assert_eq!(parse_call("f()").unwrap().args, vec![]);
        assert_eq!(parse_call("f(-1)").unwrap().args, vec![ArgSpec::Int(u64::MAX)]);
        for bad in ["f", "f(", "(1)", "f(buf:)", "f(buf:16:align=3)", "f(buf:16:what)", "f(x)", "f(1,2,3,4,5,6,7,8,9)", "f(buf:999999999999)"] {
            let e = parse_call(bad).expect_err(bad);
            assert!(e.starts_with("--call"), "{e}");
        }
    }
}
