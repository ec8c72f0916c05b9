//! The `kgen` command line, as a library: [`run`] gives a crate every command of the
//! `kgen` tool for the kernels it passes, with the same flags and output. kgen's own binary
//! is `kgen::cli::run(kgen_kernels::kernels(), env!("CARGO_MANIFEST_DIR"))`; a crate with
//! kernels of its own calls it the same way from its `main`, with its own list and its own
//! directory (where `kgen goldens` keeps its golden files).
//!
//! Every argument is checked before any work starts: a contradictory or meaningless
//! combination is one error line and exit status 2; a kernel that fails its checks, a
//! known answer that does not match, goldens that differ: exit status 1.

use crate::outputs::{self, Format, Output};
use clap::{Parser, Subcommand};
use kgen_dsl::asmfile::{assemble_files_with, AsmOptions};
use kgen_dsl::isa::{table, Kind};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::target::{target, targets, Target};
use kgen_dsl::{Abi, Ext};
use kgen_emit::Compat;
use kgen_harness::asmcall::{self, BytesFrom};
use kgen_harness::bench;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "kgen", version, about = "Generate checked RISC-V crypto kernels (T-Head C906 and standard cores)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant, reason = "one value per run, parsed from the command line")]
enum Cmd {
    /// List kernels, variants, targets and outputs.
    List,
    /// List every instruction form in the ISA table.
    Isa {
        /// Only forms of this extension (e.g. xtheadvector, zbb).
        #[arg(long)]
        ext: Option<String>,
    },
    /// Write one output (one file; for the Go ABI a .s and a .go file).
    Emit {
        kernel: String,
        /// Variant (e.g. c906, rv64gc); or give --target.
        #[arg(long)]
        variant: Option<String>,
        /// Target profile selecting the variant built for it (with --variant: must be
        /// that variant's target).
        #[arg(long)]
        target: Option<String>,
        /// openssl, linux or go.
        #[arg(long, default_value = "openssl")]
        abi: String,
        /// s (assembly; for go the .s and .go files), pl (perlasm shim), o (ELF object),
        /// h (C header).
        #[arg(long, default_value = "s")]
        format: String,
        /// Output path (default: standard output). For the Go ABI's two files: a
        /// directory (created if it does not exist).
        #[arg(short, long)]
        o: Option<PathBuf>,
        /// binutils-2.40 (vector and crypto extensions as .word) or binutils-2.44
        /// (default); for assembly only.
        #[arg(long)]
        asm_compat: Option<String>,
    },
    /// Write every output of every kernel under DIR.
    All {
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// As for emit (default binutils-2.44).
        #[arg(long, default_value = "binutils-2.44")]
        asm_compat: String,
    },
    /// Build every kernel (or one) and print each function's register/frame report.
    Check { kernel: Option<String> },
    /// Modeled C906 instructions and cycles per byte of kernels' benchmarks, of an
    /// assembly file through a kernel's benchmark, or of any function of assembly files.
    Bench {
        /// One kernel (default: every kernel with a benchmark).
        kernel: Option<String>,
        /// Measure this assembly file (implementing KERNEL's OpenSSL ABI) instead; with
        /// --call, any function of it (several --asm files are linked together). `.S`
        /// files go through the C preprocessor first.
        #[arg(long)]
        asm: Vec<PathBuf>,
        /// With --asm: time `SYMBOL(ARGS)` (arguments: integers, `buf:SIZE[:zero|:fill=B|
        /// :file=PATH][:align=A][:ro][:name=S]`, `@S`; see docs/cli.md). May be repeated.
        #[arg(long)]
        call: Vec<String>,
        /// With --call: calls measured after one warm-up call (the mean is printed).
        #[arg(long)]
        repeat: Option<usize>,
        /// With --call: the bytes cycles per byte divide by, once per --call (or once for
        /// a single call).
        #[arg(long)]
        bytes: Vec<usize>,
        /// With --call: the argument whose size gives the bytes (`aN`: a buffer's size or
        /// an integer's value), once per --call or once for all; default the largest
        /// buffer the call wrote.
        #[arg(long)]
        bytes_from: Vec<String>,
        /// With --asm: the target whose instructions the file may use (default c906).
        #[arg(long)]
        target: Option<String>,
        /// With --asm: more extensions beyond the target's (comma separated, e.g.
        /// zbkb,zvkned).
        #[arg(long)]
        ext: Option<String>,
        /// With --asm (.S files): a preprocessor definition, as gcc's -D. May be repeated.
        #[arg(short = 'D', value_name = "NAME[=VALUE]")]
        define: Vec<String>,
        /// With --asm (.S files): an include directory, as gcc's -I. May be repeated.
        #[arg(short = 'I', value_name = "DIR")]
        include: Vec<PathBuf>,
        /// With --asm: stop a call that has not returned after this many instructions
        /// (default: from the buffers' sizes).
        #[arg(long)]
        max_steps: Option<u64>,
        #[arg(long)]
        csv: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        /// Sizes in bytes (comma separated), for kernels' benchmarks.
        #[arg(long)]
        sizes: Option<String>,
        /// Print a Markdown summary (cycles per byte by size) instead of the full table.
        #[arg(long)]
        markdown: bool,
        /// `go`: the Go (ABI0) builds instead, as Go's assembler makes them (prologue,
        /// argument loads from the caller's frame, epilogue), with the kernels' companion
        /// modules for upstream Go code; `linux`: the Linux-ABI builds, by the kernels'
        /// Linux drivers.
        #[arg(long, default_value = "openssl")]
        abi: String,
        /// Also run scalar variants on the cycle-accurate C906 RTL (../shared/c906-rtl,
        /// built by the set-up script; results are cached) and print its column.
        #[arg(long)]
        rtl: bool,
        /// Write cycles/byte against size (log scale) as an SVG chart: one line per
        /// variant and function, model and (with --rtl) RTL.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Load a kernel (OpenSSL ABI) into a JIT buffer and run its known-answer checks:
    /// natively on a riscv64 host (whose CPU must implement the variant's target), else in
    /// kgen-sim at the buffer's address. Exits non-zero if a check fails.
    JitRun {
        kernel: String,
        /// Variant (default: every variant of the kernel).
        #[arg(long)]
        variant: Option<String>,
        /// Run in kgen-sim even on a riscv64 host.
        #[arg(long)]
        sim: bool,
        /// Negative control: invert the low bit of the buffer's byte at this offset (decimal
        /// or 0x hex) before running; the checks should then fail.
        #[arg(long, value_parser = parse_offset)]
        flip_byte: Option<usize>,
    },
    /// Time a JIT-loaded kernel (OpenSSL ABI) with this CPU's cycle counter, beside the
    /// C906 model's figures for the same calls (on a riscv64 host; elsewhere the model's
    /// figures only, with the reason).
    JitBench {
        /// A kernel with a benchmark driver (see `kgen bench`).
        kernel: String,
        /// Variant (default: every variant of the kernel).
        #[arg(long)]
        variant: Option<String>,
        /// Sizes in bytes (comma separated).
        #[arg(long)]
        sizes: Option<String>,
        /// Timed calls per figure (the median is printed).
        #[arg(long, default_value_t = kgen_harness::jit_bench::RUNS)]
        runs: usize,
    },
    /// Write the `git format-patch` series that makes OpenSSL use the kernels on riscv64
    /// (T-Head detection, then one patch per kernel that fills an OpenSSL hook).
    OpensslPatches {
        /// The OpenSSL release the series is for (3.5.7, 3.6.3 or 4.0.2).
        #[arg(long)]
        base: String,
        /// The unpacked OpenSSL source tree of that release (default: the one
        /// scripts/setup-toolchain.sh puts in .toolchain/openssl-<base>).
        #[arg(long)]
        src: Option<PathBuf>,
        /// Directory for 0001-*.patch ... (created if needed).
        #[arg(long)]
        out: PathBuf,
        /// Also use kernels that declare a cache-timing leak (T-table AES and the stitched
        /// AES-GCM on it: faster, but their table addresses depend on the key and the data).
        /// Without it every AES in the series is constant time.
        #[arg(long)]
        with_leaky_kernels: bool,
    },
    /// Write a `git format-patch` series against golang.org/x/crypto (Debian's
    /// golang-golang-x-crypto-dev sources) adding the riscv64 port: chacha20,
    /// internal/poly1305, chacha20poly1305; or against Go's own tree (GOROOT): AES, CTR
    /// and GCM; on the kernels that fill those hooks.
    GoPatches {
        /// The base the series applies to: x-crypto-0.25.0, x-crypto-0.58.0 or go-1.27.4.
        #[arg(long)]
        base: String,
        /// Directory for the `*.patch` files.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the `git format-patch` series that puts the kernels into Linux on riscv64
    /// (arch/riscv/crypto/kgen/: detection and test counters, then one patch per kernel
    /// that fills a Linux slot, with config fragments).
    LinuxPatches {
        /// The Linux release the series is for (6.12.118).
        #[arg(long)]
        base: String,
        /// The unpacked Linux source tree of that release (default: the one
        /// scripts/setup-toolchain.sh puts in .toolchain/linux-<base>).
        #[arg(long)]
        src: Option<PathBuf>,
        /// Directory for 0001-*.patch ... (created if needed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Compare (or with --bless rewrite) the golden files: every output, byte for byte.
    Goldens {
        #[arg(long)]
        bless: bool,
        /// The goldens tree (default: `goldens/` of the project the tool was built from).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// A failure: `Usage` (bad arguments, exit 2) or `Failed` (the work found a problem or
/// could not be done, exit 1).
#[derive(Debug)]
pub enum Error {
    Usage(String),
    Failed(String),
}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error::Failed(s)
    }
}

impl From<&str> for Error {
    fn from(s: &str) -> Error {
        Error::Failed(s.to_string())
    }
}

fn usage<T>(msg: impl Into<String>) -> Result<T, Error> {
    Err(Error::Usage(msg.into()))
}

/// Parses the process's arguments and runs the command for `kernels`; `home` is the
/// directory of the crate that calls it (its `goldens/` is the default goldens tree). For
/// a program's `main`: on Unix it restores the default action of SIGPIPE, so output into a
/// closed pipe ends the process as it does any Unix tool's.
pub fn run(kernels: &[&'static Kernel], home: &str) -> ExitCode {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default has no preconditions; a
    // program's main calls this before it starts threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    match run_cmd(kernels, Path::new(home), cli.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(m)) => {
            eprintln!("kgen: error: {m}");
            ExitCode::from(2)
        }
        Err(Error::Failed(m)) => {
            eprintln!("kgen: error: {m}");
            ExitCode::FAILURE
        }
    }
}

fn parse_offset(s: &str) -> Result<usize, String> {
    match s.strip_prefix("0x") {
        Some(h) => usize::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|_| format!("`{s}` is not an offset"))
}

fn compat(s: &str) -> Result<Compat, Error> {
    Compat::from_name(s).ok_or_else(|| Error::Usage(format!("unknown --asm-compat `{s}` (binutils-2.40 or binutils-2.44)")))
}

fn kernel_named(kernels: &[&'static Kernel], name: &str) -> Result<&'static Kernel, Error> {
    kgen_dsl::kernel::find(kernels, name).ok_or_else(|| {
        let names: Vec<&str> = kernels.iter().map(|k| k.name).collect();
        Error::Usage(format!("unknown kernel `{name}` (kernels: {})", names.join(", ")))
    })
}

/// The variants named (or all of the kernel's), each checked to exist.
fn variants_of(k: &'static Kernel, variant: Option<&str>) -> Result<Vec<&'static str>, Error> {
    match variant {
        Some(v) => match k.variant(v) {
            Some(v) => Ok(vec![v.name]),
            None => usage(format!("kernel `{}` has no variant `{v}` (variants: {})", k.name, k.variants.iter().map(|v| v.name).collect::<Vec<_>>().join(", "))),
        },
        None => Ok(k.variants.iter().map(|v| v.name).collect()),
    }
}

fn find_output(kernels: &[&'static Kernel], kernel: &str, variant: Option<&str>, tgt: Option<&str>, abi: &str, format: &str) -> Result<Output, Error> {
    let k = kernel_named(kernels, kernel)?;
    let v = match (variant, tgt) {
        (Some(v), t) => {
            let var = k.variant(v).ok_or_else(|| Error::Usage(format!("kernel `{kernel}` has no variant `{v}`")))?;
            if let Some(t) = t {
                if var.target != t {
                    return usage(format!("kernel `{kernel}` variant `{v}` is built for target `{}`, not `{t}` (give one of --variant and --target)", var.target));
                }
            }
            var
        }
        (None, Some(t)) => {
            if target(t).is_none() {
                return usage(format!("unknown target `{t}` (see `kgen list`)"));
            }
            let m: Vec<_> = k.variants.iter().filter(|v| v.target == t).collect();
            match m.len() {
                1 => m[0],
                0 => return usage(format!("kernel `{kernel}` has no variant for target `{t}`")),
                _ => return usage(format!("kernel `{kernel}` has several variants for `{t}`: give --variant")),
            }
        }
        (None, None) => return usage("emit: give --variant or --target"),
    };
    let abi = Abi::from_name(abi).ok_or_else(|| Error::Usage(format!("unknown ABI `{abi}` (openssl, linux, go)")))?;
    if !v.abis.contains(&abi) {
        return usage(format!("{kernel} {} is not available for the {} ABI", v.name, abi.name()));
    }
    let format = Format::from_name(format).ok_or_else(|| Error::Usage(format!("unknown format `{format}` (s, pl, o, h)")))?;
    if !outputs::formats(abi).contains(&format) {
        return usage(format!("no {} output for the {} ABI", format.name(), abi.name()));
    }
    Ok(Output { kernel: k, variant: v, abi, format })
}

/// An output file path given by the user: not a directory, in a directory that exists.
fn check_out_file(flag: &str, p: &Path) -> Result<(), Error> {
    if p.is_dir() {
        return usage(format!("{flag} {}: is a directory; give a file path", p.display()));
    }
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return usage(format!("{flag} {}: the directory {} does not exist", p.display(), parent.display()));
    }
    Ok(())
}

/// An output directory given by the user: a directory, or a path that does not exist yet.
fn check_out_dir(flag: &str, p: &Path) -> Result<(), Error> {
    if p.exists() && !p.is_dir() {
        return usage(format!("{flag} {}: exists and is not a directory", p.display()));
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// `--sizes 16,64`: byte counts, each at least 1 and at most what the simulator holds
/// (default: the bench table's sizes).
fn parse_sizes(s: Option<&str>) -> Result<Vec<usize>, Error> {
    let Some(s) = s else { return Ok(bench::SIZES.to_vec()) };
    let mut v = Vec::new();
    for x in s.split(',').map(str::trim) {
        let n: usize = x.parse().map_err(|_| Error::Usage(format!("--sizes: `{x}` is not a byte count")))?;
        if n == 0 {
            return usage("--sizes: a size is at least 1 byte");
        }
        if n > bench::MAX_SIZE {
            return usage(format!("--sizes: {n} bytes: the simulator holds messages of at most {} bytes", bench::MAX_SIZE));
        }
        v.push(n);
    }
    Ok(v)
}

/// The `--asm` files' target: the named profile plus the `--ext` extensions.
fn asm_target(tgt: Option<&str>, ext: Option<&str>) -> Result<Target, Error> {
    let name = tgt.unwrap_or("c906");
    let mut t = target(name).ok_or_else(|| Error::Usage(format!("unknown target `{name}` (see `kgen list`)")))?;
    if let Some(list) = ext {
        for e in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let x = Ext::from_name(e).ok_or_else(|| Error::Usage(format!("--ext: unknown extension `{e}` (see `kgen isa`)")))?;
            t = t.with_ext(x).map_err(Error::Usage)?;
        }
    }
    Ok(t)
}

/// Reads the `--asm` inputs (`.S` through the C preprocessor) and assembles them into one
/// object; the label names them.
fn load_inputs(paths: &[PathBuf], t: &Target, defines: &[String], includes: &[PathBuf]) -> Result<(kgen_dsl::object::Object, String), Error> {
    let mut srcs = Vec::new();
    for p in paths {
        srcs.push((p.display().to_string(), asmcall::read_source(p, defines, includes)?));
    }
    let files: Vec<(&str, &str)> = srcs.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
    let opts = AsmOptions { unknown_as_trap: true, linked_alignment: true };
    let a = assemble_files_with(&files, t, opts).map_err(|e| e.to_string())?;
    let label = paths.iter().map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()).collect::<Vec<_>>().join("+");
    Ok((a.object, label))
}

fn run_cmd(kernels: &[&'static Kernel], home: &Path, cmd: Cmd) -> Result<(), Error> {
    for k in kernels {
        k.validate().map_err(Error::Failed)?;
    }
    match cmd {
        Cmd::List => {
            println!("kernels:");
            for k in kernels {
                println!("  {:<10} {}", k.name, k.summary);
                for v in k.variants {
                    let abis: Vec<&str> = v.abis.iter().map(|a| a.name()).collect();
                    println!("    {:<16} target {:<14} ABIs {}", v.name, v.target, abis.join(", "));
                }
            }
            println!("targets:");
            for t in targets() {
                println!("  {:<14} -march={}\n  {:<14} {}", t.name, t.march(), "", t.summary);
            }
            println!("outputs: openssl (.S, perlasm .pl, ELF .o, .h), linux (.S, ELF .o, .h), go (.s + .go)");
            Ok(())
        }
        Cmd::Isa { ext } => {
            let want = match ext {
                Some(e) => Some(Ext::from_name(&e).ok_or_else(|| Error::Usage(format!("unknown extension `{e}`")))?),
                None => None,
            };
            let mut n = 0;
            for r in table().rows() {
                if want.is_some_and(|e| !r.ext.contains(e)) {
                    continue;
                }
                let kinds: Vec<String> = r
                    .ops
                    .iter()
                    .map(|o| match o.kind {
                        Kind::X => format!("{}:x", o.name),
                        Kind::XMem => format!("({}):x", o.name),
                        Kind::V(g) => format!("{}:v{g:?}", o.name),
                        Kind::Imm(s) | Kind::MemOff(s) => format!("{}:imm[{}..={}]", o.name, s.min, s.max),
                        Kind::Rel(s) => format!("{}:rel[{}..={}]", o.name, s.min, s.max),
                        Kind::Vm => "vm".into(),
                        Kind::V0 => "v0".into(),
                        Kind::VtypeTh | Kind::Vtype => format!("{}:vtype", o.name),
                        Kind::Csr => "csr".into(),
                        Kind::FenceSet => format!("{}:iorw", o.name),
                        Kind::Lit(v) => format!("{v}"),
                    })
                    .collect();
                println!("{:<20} {:<16} {:08x}/{:08x}  {}", r.mnemonic, r.ext.to_string(), r.bits, r.mask, kinds.join(" "));
                n += 1;
            }
            eprintln!("{n} forms");
            Ok(())
        }
        Cmd::Emit { kernel, variant, target: tgt, abi, format, o, asm_compat } => {
            let out = find_output(kernels, &kernel, variant.as_deref(), tgt.as_deref(), &abi, &format)?;
            let c = match asm_compat.as_deref() {
                None => Compat::Binutils244,
                Some(s) => {
                    if out.format == Format::O || out.format == Format::H || out.abi == Abi::Go {
                        return usage(format!("--asm-compat applies to OpenSSL and Linux assembly (.S, .pl), not to the {} {} output", out.abi.name(), out.format.name()));
                    }
                    compat(s)?
                }
            };
            let multi = out.abi == Abi::Go && out.format == Format::S;
            match (&o, multi) {
                (None, true) => return usage("emit: the go output is two files (.s and .go): give -o DIR"),
                (None, false) if out.format == Format::O => return usage("emit: an ELF object is binary: give -o PATH"),
                (Some(p), true) => {
                    check_out_dir("-o", p)?;
                    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                    if !p.exists() && ["s", "S", "go", "o", "h", "pl"].contains(&ext) {
                        return usage(format!("-o {}: the go output is two files (.s and .go): -o names a directory, not a file", p.display()));
                    }
                }
                (Some(p), false) if !p.is_dir() => check_out_file("-o", p)?,
                _ => {}
            }
            let files = out.render(c)?;
            match o {
                Some(p) if multi || p.is_dir() => {
                    for (rel, bytes) in &files {
                        let name = Path::new(rel).file_name().unwrap_or_default();
                        let path = p.join(name);
                        write(&path, bytes)?;
                        println!("wrote {}", path.display());
                    }
                    Ok(())
                }
                Some(p) => Ok(write(&p, &files[0].1)?),
                None => {
                    use std::io::Write;
                    std::io::stdout().write_all(&files[0].1).map_err(|e| Error::Failed(e.to_string()))
                }
            }
        }
        Cmd::All { out, asm_compat } => {
            let c = compat(&asm_compat)?;
            check_out_dir("--out", &out)?;
            let t0 = Instant::now();
            let all = outputs::all(kernels);
            let mut total = 0usize;
            let mut rows = Vec::new();
            let mut nfiles = 0;
            // One build per kernel, variant and ABI, shared by its formats; builds run on
            // every core (one worker a core, each taking the next build in the list). The
            // outputs of one build are next to each other in the list.
            let key = |o: &&Output| (o.kernel.name, o.variant.name, o.abi);
            let mut firsts: Vec<&Output> = all.iter().collect();
            firsts.dedup_by_key(|o| key(o));
            // Each worker renders the module it built at once (text, objects, shims), so no
            // worker waits for the last build; writing in order.
            let groups: Vec<Result<Vec<Vec<(String, Vec<u8>)>>, String>> = kgen_harness::par_map(&firsts, |o| {
                let m = o.build()?;
                let outs: Vec<&Output> = all.iter().filter(|x| key(x) == key(o)).collect();
                outputs::render_group(&m, &outs, c)
            });
            let mut rendered = Vec::new();
            for g in groups {
                rendered.extend(g?.into_iter().map(Ok::<_, String>));
            }
            for (o, files) in all.iter().zip(rendered) {
                for (rel, bytes) in files? {
                    let path = out.join(&rel);
                    write(&path, &bytes)?;
                    println!("wrote {} ({} bytes)", path.display(), bytes.len());
                    total += bytes.len();
                    nfiles += 1;
                }
                rows.push((o.kernel.name, o.variant.name, o.abi.name(), o.format.name()));
            }
            println!("\n{:<10} {:<14} {:<8} {:<6}", "kernel", "variant", "abi", "format");
            for r in &rows {
                println!("{:<10} {:<14} {:<8} {:<6}", r.0, r.1, r.2, r.3);
            }
            println!("{} outputs, {nfiles} files, {} bytes, in {:.2} s", all.len(), total, t0.elapsed().as_secs_f64());
            Ok(())
        }
        Cmd::Check { kernel } => {
            let list: Vec<&'static Kernel> = match &kernel {
                Some(k) => vec![kernel_named(kernels, k)?],
                None => kernels.to_vec(),
            };
            let mut failed = 0;
            for k in list {
                for v in k.variants {
                    for &abi in v.abis {
                        println!("== {} {} ({} ABI, target {})", k.name, v.name, abi.name(), v.target);
                        let m = match v.build(abi) {
                            Ok(m) => m,
                            Err(e) => {
                                println!("  FAILED: {e}");
                                failed += 1;
                                continue;
                            }
                        };
                        for l in &m.funcs {
                            for line in kgen_dsl::report::Report::of(l).lines() {
                                println!("  {line}");
                            }
                        }
                    }
                }
            }
            if failed > 0 {
                return Err(Error::Failed(format!("{failed} kernel builds failed their checks")));
            }
            Ok(())
        }
        Cmd::Bench { kernel, asm, call, repeat, bytes, bytes_from, target: tgt, ext, define, include, max_steps, csv, json, sizes, markdown, rtl, plot, abi } => {
            // Every argument is checked before anything runs.
            let want = match abi.as_str() {
                "openssl" | "psabi" => Abi::Psabi,
                "go" => Abi::Go,
                "linux" => Abi::Linux,
                other => return usage(format!("bench --abi: unknown ABI `{other}` (openssl, linux or go)")),
            };
            let go = want == Abi::Go;
            for (flag, p) in [("--csv", &csv), ("--json", &json), ("--plot", &plot)] {
                if let Some(p) = p {
                    check_out_file(flag, p)?;
                }
            }
            let with_asm = !asm.is_empty();
            if let Some(p) = asm.iter().find(|p| !p.is_file()) {
                return usage(format!("bench --asm {}: no such file", p.display()));
            }
            for d in &include {
                if !d.is_dir() {
                    return usage(format!("bench -I {}: no such directory", d.display()));
                }
            }
            if !with_asm {
                for (flag, given) in [
                    ("--target", tgt.is_some()),
                    ("--ext", ext.is_some()),
                    ("-D", !define.is_empty()),
                    ("-I", !include.is_empty()),
                    ("--max-steps", max_steps.is_some()),
                    ("--call", !call.is_empty()),
                ] {
                    if given {
                        return usage(format!("bench: {flag} applies to --asm files"));
                    }
                }
            }
            if call.is_empty() {
                for (flag, given) in [("--repeat", repeat.is_some()), ("--bytes", !bytes.is_empty()), ("--bytes-from", !bytes_from.is_empty())] {
                    if given {
                        return usage(format!("bench: {flag} applies to --call"));
                    }
                }
            }
            if want != Abi::Psabi && with_asm {
                return usage(format!("bench: --asm measures an OpenSSL-ABI file; it does not combine with --abi {abi}"));
            }
            if rtl && (with_asm || want != Abi::Psabi) {
                return usage(format!("bench: --rtl measures kgen's own scalar variants in the OpenSSL ABI (not --asm files, not --abi {abi})"));
            }
            if max_steps == Some(0) {
                return usage("bench: --max-steps is at least 1");
            }
            if !call.is_empty() {
                if kernel.is_some() {
                    return usage("bench: --call times the named functions; a kernel name does not combine with it");
                }
                if sizes.is_some() {
                    return usage("bench: --sizes is for kernels' benchmarks; with --call the buffers' sizes are in the call");
                }
                if repeat == Some(0) {
                    return usage("bench: --repeat is at least 1");
                }
                if !bytes.is_empty() && !bytes_from.is_empty() {
                    return usage("bench: give --bytes or --bytes-from, not both");
                }
                for (flag, n) in [("--bytes", bytes.len()), ("--bytes-from", bytes_from.len())] {
                    if n > 1 && n != call.len() {
                        return usage(format!("bench: {flag} is given {n} times for {} --call: once per call, or once for all", call.len()));
                    }
                }
                if bytes.len() == 1 && call.len() > 1 {
                    return usage("bench: one --bytes for several --call: give it once per call");
                }
                if bytes.contains(&0) {
                    return usage("bench: --bytes is at least 1");
                }
                let t = asm_target(tgt.as_deref(), ext.as_deref())?;
                let specs: Vec<_> = call.iter().map(|c| asmcall::parse_call(c)).collect::<Result<_, _>>().map_err(Error::Usage)?;
                let froms: Vec<BytesFrom> = if !bytes.is_empty() {
                    bytes.iter().map(|&n| BytesFrom::Fixed(n)).collect()
                } else if !bytes_from.is_empty() {
                    bytes_from.iter().map(|s| BytesFrom::parse(s)).collect::<Result<_, _>>().map_err(Error::Usage)?
                } else {
                    vec![BytesFrom::LargestWritten]
                };
                let froms: Vec<BytesFrom> = (0..specs.len()).map(|i| froms[if froms.len() == 1 { 0 } else { i }].clone()).collect();
                for (s, f) in specs.iter().zip(&froms) {
                    f.check(s).map_err(Error::Usage)?;
                }
                let (obj, label) = load_inputs(&asm, &t, &define, &include)?;
                let opts = asmcall::Options { repeat: repeat.unwrap_or(1), max_steps };
                let rows = asmcall::bench_calls(&label, &obj, &t, &specs, &froms, &opts)?;
                return report(kernels, &rows, markdown, false, kernel.as_deref(), csv, json, plot);
            }
            let sizes = parse_sizes(sizes.as_deref())?;
            let mut rows = Vec::new();
            if with_asm {
                if asm.len() > 1 {
                    return usage("bench: several --asm files need --call (a kernel's driver takes one file)");
                }
                let name = kernel.as_deref().ok_or(Error::Usage("bench: --asm needs the kernel whose ABI the file implements, or --call".into()))?;
                let k = kernel_named(kernels, name)?;
                bench::psabi_bench(k).map_err(Error::Usage)?;
                let t = asm_target(tgt.as_deref(), ext.as_deref())?;
                let (obj, label) = load_inputs(&asm, &t, &define, &include)?;
                rows.extend(bench::bench_object(k, &label, &obj, &t, &sizes)?);
                return report(kernels, &rows, markdown, false, kernel.as_deref(), csv, json, plot);
            }
            let list: Vec<&'static Kernel> = match &kernel {
                Some(n) => {
                    let k = kernel_named(kernels, n)?;
                    if !k.benches.iter().any(|b| b.abi == want) {
                        return usage(format!("kernel `{}` has no benchmark driver for the {} ABI", k.name, want.name()));
                    }
                    vec![k]
                }
                None => kernels.to_vec(),
            };
            for k in list {
                if !k.benches.iter().any(|b| b.abi == want) {
                    eprintln!("kgen bench: {}: no benchmark driver for the {} ABI", k.name, want.name());
                    continue;
                }
                for v in k.variants {
                    if go {
                        for b in k.benches.iter().filter(|b| b.abi == Abi::Go) {
                            let m = match b.module {
                                None if v.abis.contains(&Abi::Go) => v.build(Abi::Go).map_err(|e| e.to_string())?,
                                None => continue,
                                Some(f) => match f(v.name).map_err(|e| e.to_string())? {
                                    Some(m) => m,
                                    None => continue,
                                },
                            };
                            let (r, skipped) = bench::bench_go_module(k, b, &format!("{}/go", v.name), &m, &sizes)?;
                            if !skipped.is_empty() {
                                eprintln!("kgen bench: {} {} (go): not modeled: {} (Go's stack-check prologue)", k.name, v.name, skipped.join(", "));
                            }
                            rows.extend(r);
                        }
                        continue;
                    }
                    if want == Abi::Linux {
                        if v.abis.contains(&Abi::Linux) {
                            let m = v.build(Abi::Linux).map_err(|e| e.to_string())?;
                            for b in k.benches.iter().filter(|b| b.abi == Abi::Linux) {
                                rows.extend(bench::bench_linux_module(k, b, &format!("{}/linux", v.name), &m, &sizes)?);
                            }
                        }
                        continue;
                    }
                    if !v.abis.contains(&Abi::Psabi) {
                        continue;
                    }
                    let m = v.build(Abi::Psabi).map_err(|e| e.to_string())?;
                    let obj = m.object().map_err(|e| e.to_string())?;
                    rows.extend(bench::bench_object(k, v.name, &obj, &m.target, &sizes)?);
                }
            }
            report(kernels, &rows, markdown, rtl, kernel.as_deref(), csv, json, plot)
        }
        Cmd::JitRun { kernel, variant, sim, flip_byte } => {
            let k = kernel_named(kernels, &kernel)?;
            if k.kat.is_none() {
                return usage(format!("kernel `{}` has no known-answer checks", k.name));
            }
            let variants = variants_of(k, variant.as_deref())?;
            let mut failed = Vec::new();
            for v in variants {
                let r = kgen_harness::jit::jit_run(k, v, sim, flip_byte)?;
                for l in r.lines() {
                    println!("{l}");
                }
                if !r.passed() {
                    failed.push(v);
                }
            }
            if failed.is_empty() {
                Ok(())
            } else {
                Err(Error::Failed(format!("{kernel} {}: known-answer checks failed", failed.join(", "))))
            }
        }
        Cmd::JitBench { kernel, variant, sizes, runs } => {
            let k = kernel_named(kernels, &kernel)?;
            if runs == 0 {
                return usage("jit-bench: --runs is at least 1");
            }
            bench::psabi_bench(k).map_err(Error::Usage)?;
            let sizes = parse_sizes(sizes.as_deref())?;
            let variants = variants_of(k, variant.as_deref())?;
            for v in variants {
                print!("{}", kgen_harness::jit_bench::jit_bench(k, v, &sizes, runs)?.text());
            }
            Ok(())
        }
        Cmd::OpensslPatches { base, src, out, with_leaky_kernels } => {
            use kgen_integrations::openssl;
            if !openssl::BASES.contains(&base.as_str()) {
                return usage(format!("openssl-patches: unknown --base `{base}` (known: {})", openssl::BASES.join(", ")));
            }
            check_out_dir("--out", &out)?;
            let src = src.unwrap_or_else(|| openssl::default_src(&base));
            if !src.is_dir() {
                return usage(format!("openssl-patches: {} is not an OpenSSL source tree (give --src; scripts/setup-toolchain.sh unpacks {base} there)", src.display()));
            }
            let leaks = if with_leaky_kernels { openssl::Leaks::Allow } else { openssl::Leaks::Refuse };
            let series = openssl::series(&src, &base, kernels, leaks)?;
            for p in series.write(&out)? {
                println!("wrote {}", p.display());
            }
            Ok(())
        }
        Cmd::GoPatches { base, out } => {
            use kgen_integrations::{gostd, xcrypto};
            let known: Vec<&str> = xcrypto::BASES.iter().map(|b| b.name).chain(gostd::BASES.iter().map(|b| b.name)).collect();
            if !known.contains(&base.as_str()) {
                return usage(format!("go-patches: unknown --base `{base}` (known: {})", known.join(", ")));
            }
            check_out_dir("--out", &out)?;
            let written = if gostd::BASES.iter().any(|b| b.name == base) { gostd::run(&base, &out, kernels)? } else { xcrypto::run(&base, &out, kernels)? };
            for p in written {
                println!("{}", p.display());
            }
            Ok(())
        }
        Cmd::LinuxPatches { base, src, out } => {
            use kgen_integrations::linux;
            linux::base(&base).map_err(Error::Usage)?;
            check_out_dir("--out", &out)?;
            if let Some(s) = &src {
                if !s.join("Makefile").is_file() {
                    return usage(format!("linux-patches: {} is not a Linux source tree", s.display()));
                }
            }
            for p in linux::run(&base, src.as_deref(), &out, kernels)? {
                println!("{}", p.display());
            }
            Ok(())
        }
        Cmd::Goldens { bless, dir } => {
            let dir = dir.unwrap_or_else(|| home.join("goldens"));
            crate::goldens::check_dir(&dir, bless).map_err(Error::Usage)?;
            Ok(crate::goldens::run(kernels, &dir, bless)?)
        }
    }
}

/// Prints the rows (with the RTL column if asked) and writes the files asked for.
#[allow(clippy::too_many_arguments)]
fn report(kernels: &[&'static Kernel], rows: &[bench::Row], markdown: bool, rtl: bool, kernel: Option<&str>, csv: Option<PathBuf>, json: Option<PathBuf>, plot: Option<PathBuf>) -> Result<(), Error> {
    let rtl_figures = if rtl { Some(kgen_harness::rtl::figures_for(kernels, rows, &std::env::temp_dir().join(format!("kgen-rtl-{}", std::process::id())))?) } else { None };
    match (&rtl_figures, markdown) {
        (Some(f), true) => print!("{}", kgen_harness::rtl::markdown_with_rtl(rows, f)),
        (Some(f), false) => print!("{}", kgen_harness::rtl::table_with_rtl(rows, f)),
        (None, true) => print!("{}", bench::markdown(rows)),
        (None, false) => print!("{}", bench::table(rows)),
    }
    if let Some(p) = plot {
        let name = kernel.map(|k| format!(" {k}")).unwrap_or_default();
        let title = format!("kgen bench{name} --plot (C906 model{})", if rtl { ", RTL" } else { "" });
        write(&p, crate::plot::bench_chart(&title, rows, rtl_figures.as_ref()).as_bytes())?;
    }
    if let Some(p) = csv {
        write(&p, bench::csv(rows).as_bytes())?;
    }
    if let Some(p) = json {
        write(&p, bench::json(rows).as_bytes())?;
    }
    Ok(())
}
