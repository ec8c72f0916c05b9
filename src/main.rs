//! kgen: generate checked RISC-V crypto kernels for the T-Head C906 and standard cores.

use clap::{Parser, Subcommand};
use kgen::bench;
use kgen::outputs::{self, Format, Output};
use kgen_dsl::asmfile::assemble_file;
use kgen_dsl::isa::{table, Kind};
use kgen_dsl::target::{target, targets};
use kgen_dsl::{Abi, Ext};
use kgen_emit::Compat;
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
enum Cmd {
    /// List kernels, variants, targets and outputs.
    List,
    /// List every instruction form in the ISA table.
    Isa {
        /// Only forms of this extension (e.g. xtheadvector, zbb).
        #[arg(long)]
        ext: Option<String>,
    },
    /// Write one output file.
    Emit {
        kernel: String,
        /// Variant (e.g. c906, rv64gc); or give --target.
        #[arg(long)]
        variant: Option<String>,
        /// Target profile selecting the variant built for it.
        #[arg(long)]
        target: Option<String>,
        /// openssl, linux or go.
        #[arg(long, default_value = "openssl")]
        abi: String,
        /// s (assembly; for go the .s and .go files), pl (perlasm shim), o (ELF object).
        #[arg(long, default_value = "s")]
        format: String,
        /// Output path (default: standard output).
        #[arg(short, long)]
        o: Option<PathBuf>,
        /// binutils-2.40 (vector and crypto extensions as .word) or binutils-2.44.
        #[arg(long, default_value = "binutils-2.44")]
        asm_compat: String,
    },
    /// Write every output of every kernel under DIR (the main job).
    All {
        #[arg(long, default_value = "out")]
        out: PathBuf,
        #[arg(long, default_value = "binutils-2.44")]
        asm_compat: String,
    },
    /// Build every kernel and print each function's register/frame report.
    Check {
        kernel: Option<String>,
    },
    /// Modeled C906 instructions and cycles per byte for every kernel variant.
    Bench {
        kernel: Option<String>,
        /// Measure this assembly file (implementing KERNEL's OpenSSL ABI) instead; with
        /// --call, any function of it (several --asm files are linked together).
        #[arg(long)]
        asm: Vec<PathBuf>,
        /// With --asm: time `SYMBOL(ARGS)` (arguments: integers, `buf:SIZE[:zero|:fill=B|
        /// :file=PATH][:align=A][:ro][:name=S]`, `@S`; see README). May be repeated.
        #[arg(long)]
        call: Vec<String>,
        /// With --call: calls measured after one warm-up call (the mean is printed).
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// With --call: bytes for cycles per byte (default: the largest buffer).
        #[arg(long)]
        bytes: Option<usize>,
        /// Target whose extensions the file may use (with --asm).
        #[arg(long, default_value = "c906")]
        target: String,
        #[arg(long)]
        csv: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        /// Sizes in bytes (comma separated).
        #[arg(long)]
        sizes: Option<String>,
        /// Print a Markdown summary (cycles per byte by size) instead of the full table.
        #[arg(long)]
        markdown: bool,
        /// `go`: the Go (ABI0) builds instead, as Go's assembler makes them (prologue,
        /// argument loads from the caller's frame, epilogue), with x/crypto's poly1305
        /// macState function (`kgen go-patches`).
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
        /// aes, chacha20, chacha20-poly1305, ghash, poly1305, sha256 or sha512.
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
        #[arg(long, default_value_t = kgen::jit_bench::RUNS)]
        runs: usize,
    },
    /// Write the `git format-patch` series that makes OpenSSL use kgen's kernels on
    /// riscv64 (T-Head detection, then one patch per kernel), against an OpenSSL tree.
    OpensslPatches {
        /// The OpenSSL release the series is for (3.5.7).
        #[arg(long)]
        base: String,
        /// The unpacked OpenSSL source tree of that release (default: the one
        /// scripts/setup-toolchain.sh puts in .toolchain/openssl-<base>).
        #[arg(long)]
        src: Option<PathBuf>,
        /// Directory for 0001-*.patch ... (created if needed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Write a `git format-patch` series against golang.org/x/crypto (Debian's
    /// golang-golang-x-crypto-dev sources) adding the riscv64 port: chacha20,
    /// internal/poly1305, chacha20poly1305 on kgen's kernels, with run-time detection.
    GoPatches {
        /// The base the series applies to: x-crypto-0.25.0.
        #[arg(long)]
        base: String,
        /// Directory for the `*.patch` files.
        #[arg(long)]
        out: PathBuf,
    },
    /// Compare (or with --bless rewrite) the golden files under goldens/.
    Goldens {
        #[arg(long)]
        bless: bool,
        #[arg(long, default_value = "goldens")]
        dir: PathBuf,
    },
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("kgen: error: {msg}");
    ExitCode::FAILURE
}

fn parse_offset(s: &str) -> Result<usize, String> {
    match s.strip_prefix("0x") {
        Some(h) => usize::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|_| format!("`{s}` is not an offset"))
}

fn compat(s: &str) -> Result<Compat, String> {
    Compat::from_name(s).ok_or_else(|| format!("unknown --asm-compat `{s}` (binutils-2.40 or binutils-2.44)"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

fn find_output(kernel: &str, variant: Option<&str>, tgt: Option<&str>, abi: &str, format: &str) -> Result<Output, String> {
    let k = kgen_kernels::kernel(kernel).ok_or_else(|| format!("unknown kernel `{kernel}` (see `kgen list`)"))?;
    let v = match (variant, tgt) {
        (Some(v), _) => k.variant(v).ok_or_else(|| format!("kernel `{kernel}` has no variant `{v}`"))?,
        (None, Some(t)) => {
            let m: Vec<_> = k.variants.iter().filter(|v| v.target == t).collect();
            match m.len() {
                1 => m[0],
                0 => return Err(format!("kernel `{kernel}` has no variant for target `{t}`")),
                _ => return Err(format!("kernel `{kernel}` has several variants for `{t}`: give --variant")),
            }
        }
        (None, None) => return Err("give --variant or --target".into()),
    };
    let abi = Abi::from_name(abi).ok_or_else(|| format!("unknown ABI `{abi}` (openssl, linux, go)"))?;
    if !v.abis.contains(&abi) {
        return Err(format!("{kernel} {} is not available for the {} ABI", v.name, abi.name()));
    }
    let format = Format::from_name(format).ok_or_else(|| format!("unknown format `{format}`"))?;
    if !outputs::formats(abi).contains(&format) {
        return Err(format!("no {} output for the {} ABI", format.name(), abi.name()));
    }
    Ok(Output { kernel: k, variant: v, abi, format })
}

/// Reads and assembles the `--asm` inputs into one object; the label names them.
fn load_inputs(paths: &[PathBuf], t: &kgen_dsl::target::Target) -> Result<(kgen_dsl::object::Object, String), String> {
    let mut srcs = Vec::new();
    for p in paths {
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{}: not a text (assembly) file", p.display()))?;
        srcs.push((p.display().to_string(), text));
    }
    let files: Vec<(&str, &str)> = srcs.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
    let opts = kgen_dsl::asmfile::AsmOptions { unknown_as_trap: true };
    let a = kgen_dsl::asmfile::assemble_files_with(&files, t, opts).map_err(|e| e.to_string())?;
    let label = paths.iter().map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()).collect::<Vec<_>>().join("+");
    Ok((a.object, label))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn run(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::List => {
            println!("kernels:");
            for k in kgen_kernels::kernels() {
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
            println!("outputs: openssl (.S, perlasm .pl, ELF .o), linux (.S, ELF .o), go (.s + .go)");
            Ok(())
        }
        Cmd::Isa { ext } => {
            let want = match ext {
                Some(e) => Some(Ext::from_name(&e).ok_or_else(|| format!("unknown extension `{e}`"))?),
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
            let out = find_output(&kernel, variant.as_deref(), tgt.as_deref(), &abi, &format)?;
            let files = out.render(compat(&asm_compat)?)?;
            match (o, files.len()) {
                (Some(p), 1) => write(&p, &files[0].1),
                (Some(dir), _) => {
                    for (rel, bytes) in &files {
                        let name = Path::new(rel).file_name().unwrap_or_default();
                        write(&dir.join(name), bytes)?;
                    }
                    Ok(())
                }
                (None, 1) if out.format != Format::O => {
                    use std::io::Write;
                    std::io::stdout().write_all(&files[0].1).map_err(|e| e.to_string())
                }
                (None, _) => Err("this output is binary or several files: give -o PATH (a directory for Go)".into()),
            }
        }
        Cmd::All { out, asm_compat } => {
            let c = compat(&asm_compat)?;
            let t0 = Instant::now();
            let all = outputs::all();
            let mut total = 0usize;
            let mut rows = Vec::new();
            let mut nfiles = 0;
            // One build per kernel, variant and ABI, shared by its formats; builds run on
            // every core (one worker a core, each taking the next build in the list).
            let key = |o: &&kgen::outputs::Output| (o.kernel.name, o.variant.name, o.abi);
            let mut firsts: Vec<&kgen::outputs::Output> = all.iter().collect();
            firsts.dedup_by_key(|o| key(o));
            let builds: Vec<Result<kgen_dsl::Module, String>> = kgen::par_map(&firsts, |o| o.build());
            let mut modules = std::collections::HashMap::new();
            for (o, m) in firsts.iter().zip(builds) {
                modules.insert(key(o), m?);
            }
            // Rendering (text, objects, shims) runs on every core too; writing in order.
            let rendered: Vec<Result<Vec<(String, Vec<u8>)>, String>> = kgen::par_map(&all, |o| o.render_module(&modules[&key(&o)], c));
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
            if let Some(k) = &kernel {
                kgen_kernels::kernel(k).ok_or_else(|| format!("unknown kernel `{k}` (see `kgen list`)"))?;
            }
            let mut failed = 0;
            for k in kgen_kernels::kernels() {
                if kernel.as_deref().is_some_and(|n| n != k.name) {
                    continue;
                }
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
                return Err(format!("{failed} kernel builds failed their checks"));
            }
            Ok(())
        }
        Cmd::Bench { kernel, asm, call, repeat, bytes, target: tgt, csv, json, sizes, markdown, rtl, plot, abi } => {
            let go = match abi.as_str() {
                "openssl" | "psabi" => false,
                "go" => true,
                other => return Err(format!("bench --abi: unknown ABI `{other}` (openssl or go)")),
            };
            if go && !asm.is_empty() {
                return Err("bench: --asm measures an OpenSSL-ABI file; it does not combine with --abi go".into());
            }
            if let Some(k) = &kernel {
                kgen_kernels::kernel(k).ok_or_else(|| format!("unknown kernel `{k}` (see `kgen list`)"))?;
            }
            let kernel_name = kernel.as_deref().map(|k| format!(" {k}")).unwrap_or_default();
            let sizes = parse_sizes(sizes.as_deref())?;
            if let Some(&n) = sizes.iter().find(|&&n| n > bench::MAX_SIZE) {
                return Err(format!("size {n}: the simulator holds messages of at most {} bytes (--sizes)", bench::MAX_SIZE));
            }
            let mut rows = Vec::new();
            if !call.is_empty() {
                if asm.is_empty() {
                    return Err("--call needs the --asm file(s) that define the function".into());
                }
                let t = target(&tgt).ok_or_else(|| format!("unknown target `{tgt}`"))?;
                let (obj, label) = load_inputs(&asm, &t)?;
                let specs: Vec<_> = call.iter().map(|c| kgen::asmcall::parse_call(c)).collect::<Result<_, _>>()?;
                rows.extend(kgen::asmcall::bench_calls(&label, &obj, &t, &specs, repeat, bytes)?);
            } else if asm.len() > 1 {
                return Err("several --asm files need --call (a kernel's driver takes one file)".into());
            } else if let Some(path) = asm.first() {
                let kernel = kernel.ok_or("--asm needs the kernel whose ABI the file implements")?;
                let t = target(&tgt).ok_or_else(|| format!("unknown target `{tgt}`"))?;
                let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let a = assemble_file(&src, &t).map_err(|e| format!("{}: {e}", path.display()))?;
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                rows.extend(bench::bench_object(&kernel, &name, &a.object, &t, &sizes)?);
            } else {
                for k in kgen_kernels::kernels() {
                    if kernel.as_deref().is_some_and(|n| n != k.name) {
                        continue;
                    }
                    for v in k.variants {
                        if go {
                            if !v.abis.contains(&Abi::Go) {
                                continue;
                            }
                            let driver = match k.name {
                                "sha256" => "sha256-go",
                                "sha512" => "sha512-go",
                                n => n,
                            };
                            let mut builds = vec![(driver, v.build(Abi::Go).map_err(|e| e.to_string())?)];
                            if k.name == "poly1305" && v.name.starts_with("32-") {
                                builds.push(("poly1305-macstate", kgen_kernels::poly1305::macstate_module(v.name).map_err(|e| e.to_string())?));
                            }
                            if k.name == "chacha20-poly1305" {
                                builds.push(("chacha20-poly1305-macstate", kgen_kernels::chacha20_poly1305::macstate_module(v.name).map_err(|e| e.to_string())?));
                            }
                            for (driver, m) in builds {
                                let (r, skipped) = bench::bench_go_module(driver, &format!("{}/go", v.name), &m, &sizes)?;
                                if !skipped.is_empty() {
                                    eprintln!("kgen bench: {} {} (go): not modeled: {} (Go's stack-check prologue)", k.name, v.name, skipped.join(", "));
                                }
                                rows.extend(r);
                            }
                            continue;
                        }
                        let m = v.build(Abi::Psabi).map_err(|e| e.to_string())?;
                        let obj = m.object().map_err(|e| e.to_string())?;
                        rows.extend(bench::bench_object(k.name, v.name, &obj, &m.target, &sizes)?);
                    }
                }
            }
            let rtl_figures = if rtl {
                if !call.is_empty() || !asm.is_empty() {
                    return Err("--rtl measures kgen's own scalar variants (not --asm files)".into());
                }
                Some(kgen::rtl::figures_for(&rows, &std::env::temp_dir().join(format!("kgen-rtl-{}", std::process::id())))?)
            } else {
                None
            };
            match (&rtl_figures, markdown) {
                (Some(f), true) => print!("{}", kgen::rtl::markdown_with_rtl(&rows, f)),
                (Some(f), false) => print!("{}", kgen::rtl::table_with_rtl(&rows, f)),
                (None, true) => print!("{}", bench::markdown(&rows)),
                (None, false) => print!("{}", bench::table(&rows)),
            }
            if let Some(p) = plot {
                let title = format!("kgen bench{} --plot (C906 model{})", kernel_name, if rtl { ", RTL" } else { "" });
                write(&p, kgen::plot::bench_chart(&title, &rows, rtl_figures.as_ref()).as_bytes())?;
            }
            if let Some(p) = csv {
                write(&p, bench::csv(&rows).as_bytes())?;
            }
            if let Some(p) = json {
                write(&p, bench::json(&rows).as_bytes())?;
            }
            Ok(())
        }
        Cmd::JitRun { kernel, variant, sim, flip_byte } => {
            let k = kgen_kernels::kernel(&kernel).ok_or_else(|| format!("unknown kernel `{kernel}` (see `kgen list`)"))?;
            let variants: Vec<&str> = match &variant {
                Some(v) => vec![v.as_str()],
                None => k.variants.iter().map(|v| v.name).collect(),
            };
            let mut failed = Vec::new();
            for v in variants {
                let r = kgen::jit_run::jit_run(&kernel, v, sim, flip_byte)?;
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
                Err(format!("{kernel} {}: known-answer checks failed", failed.join(", ")))
            }
        }
        Cmd::JitBench { kernel, variant, sizes, runs } => {
            let k = kgen_kernels::kernel(&kernel).ok_or_else(|| format!("unknown kernel `{kernel}` (see `kgen list`)"))?;
            let sizes = parse_sizes(sizes.as_deref())?;
            let variants: Vec<&str> = match &variant {
                Some(v) => vec![v.as_str()],
                None => k.variants.iter().map(|v| v.name).collect(),
            };
            for v in variants {
                print!("{}", kgen::jit_bench::jit_bench(&kernel, v, &sizes, runs)?.text());
            }
            Ok(())
        }
        Cmd::OpensslPatches { base, src, out } => {
            let src = src.unwrap_or_else(|| kgen::openssl::default_src(&base));
            let series = kgen::openssl::series(&src, &base)?;
            for p in series.write(&out)? {
                println!("wrote {}", p.display());
            }
            Ok(())
        }
        Cmd::Goldens { bless, dir } => kgen::goldens::run(&dir, bless),
        Cmd::GoPatches { base, out } => {
            for p in kgen::gopatches::run(&base, &out)? {
                println!("{}", p.display());
            }
            Ok(())
        }
    }
}

/// `--sizes 16,64`: byte counts (default: the bench table's sizes).
fn parse_sizes(s: Option<&str>) -> Result<Vec<usize>, String> {
    match s {
        Some(s) => s.split(',').map(|x| x.trim().parse().map_err(|_| format!("bad size `{x}`"))).collect(),
        None => Ok(bench::SIZES.to_vec()),
    }
}
