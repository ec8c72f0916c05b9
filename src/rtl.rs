//! The cycle-accurate C906: openc906's RTL verilated (../shared/c906-rtl, built by
//! `scripts/setup-toolchain.sh` under `~/.cache/c906rtl/`, found through
//! `.toolchain/c906rtl`). It has no vector unit, so it times scalar code.
//!
//! A [`Plan`] says what to run: buffers (64-byte aligned, filled with fixed bytes) and a
//! list of calls, each made once to warm caches and predictors and then `reps` times, as
//! the RTL kit's harness (`harness/run.sh`, `bench.h`) does; its table of `BENCH` entries is
//! generated here from the kernels' entry points (symbols from [`Entry::symbol`], a C
//! wrapper for functions of more than four arguments). [`run_rtl`] runs a plan on the RTL
//! (results cached under `~/.cache/kgen-rtl/`, keyed by everything that was run: the
//! simulation is deterministic); [`run_model`] runs the same calls, with the same protocol,
//! on kgen's cost model.

use crate::oracle;
use kgen_dsl::entry::Entry;
use kgen_dsl::object::Object;
use kgen_dsl::target::Target;
use kgen_dsl::Abi;
use kgen_sim::Env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// An argument of a planned call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// Buffer k of the plan.
    Buf(usize),
    Int(u64),
}

/// One harness entry: `func(args)` called once, then `reps` times.
#[derive(Clone, Debug)]
pub struct Call {
    /// The symbol called.
    pub symbol: String,
    pub args: Vec<Arg>,
    pub reps: u64,
}

/// What a row of `kgen bench` is made of: `calls` times the cycles of planned call `call`.
#[derive(Clone, Debug)]
pub struct RowPlan {
    pub what: String,
    pub bytes: usize,
    pub call: usize,
    pub calls: u64,
}

/// Buffers, calls in order, and the rows they give.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub label: String,
    pub bufs: Vec<Vec<u8>>,
    pub calls: Vec<Call>,
    pub rows: Vec<RowPlan>,
}

impl Plan {
    fn buf(&mut self, data: Vec<u8>) -> Arg {
        self.bufs.push(data);
        Arg::Buf(self.bufs.len() - 1)
    }
    fn call(&mut self, e: &Entry, variant: &str, args: Vec<Arg>) -> usize {
        assert_eq!(args.len(), e.params.len(), "{}: arguments for every parameter", e.symbol(variant));
        self.calls.push(Call { symbol: e.symbol(variant), args, reps: 1 });
        self.calls.len() - 1
    }
    fn row(&mut self, what: String, bytes: usize, call: usize, calls: u64) {
        self.rows.push(RowPlan { what, bytes, call, calls });
    }
}

/// The name `kgen bench` gives an entry's row (the alias a module exports, else the symbol).
fn bench_name(e: &Entry, variant: &str) -> String {
    e.alias_in(Abi::Psabi).map(str::to_string).unwrap_or_else(|| e.symbol(variant))
}

/// The plan that measures what `kgen bench` measures for a kernel's variant at `sizes`
/// (the same functions, arguments and buffer contents as `bench::drive`).
pub fn plan(kernel: &str, variant: &str, sizes: &[usize]) -> Result<Plan, String> {
    use kgen_kernels::{aes, chacha, ghash, poly1305, sha2};
    let mut p = Plan { label: format!("{kernel} {variant}"), ..Default::default() };
    match kernel {
        "aes" => {
            let key = p.buf(vec![0x2b; 16]);
            let (ks, dks) = (p.buf(vec![0; 244]), p.buf(vec![0; 244]));
            let set_e = p.call(&aes::SET_ENCRYPT_KEY, variant, vec![key.clone(), Arg::Int(128), ks.clone()]);
            p.call(&aes::SET_DECRYPT_KEY, variant, vec![key, Arg::Int(128), dks.clone()]);
            let inp = p.buf(vec![0x5a; 16]);
            // One block in place, as many times as the largest size has blocks: the table
            // lookups' addresses change with the data, so the caches see what n bytes do.
            let reps = sizes.iter().map(|n| n.div_ceil(16)).max().unwrap_or(1) as u64;
            for (e, k) in [(&aes::ENCRYPT, ks.clone()), (&aes::DECRYPT, dks)] {
                let c = p.call(e, variant, vec![inp.clone(), inp.clone(), k]);
                p.calls[c].reps = reps;
                for &n in sizes {
                    p.row(bench_name(e, variant), n, c, n.div_ceil(16) as u64);
                }
            }
            p.row(format!("{}(128)", bench_name(&aes::SET_ENCRYPT_KEY, variant)), 16, set_e, 1);
            // Counter mode in place over whole blocks, from the counter bench::drive uses.
            let iv = p.buf(vec![0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88, 0, 0, 0, 2]);
            for &n in sizes {
                let n = n.max(16).next_multiple_of(16);
                let b = p.buf(vec![0x5a; n]);
                let c = p.call(&aes::CTR32, variant, vec![b.clone(), b, Arg::Int((n / 16) as u64), ks.clone(), iv.clone()]);
                p.row(bench_name(&aes::CTR32, variant), n, c, 1);
            }
        }
        "chacha20" => {
            let key = p.buf(vec![0x42; 32]);
            let ctr = p.buf(vec![1, 0, 0, 0, 9, 9, 9, 9, 7, 7, 7, 7, 5, 5, 5, 5]);
            for &n in sizes {
                let b = p.buf(vec![0x5a; n]);
                let c = p.call(&chacha::CTR32, variant, vec![b.clone(), b, Arg::Int(n as u64), key.clone(), ctr.clone()]);
                p.row(bench_name(&chacha::CTR32, variant), n, c, 1);
            }
        }
        "ghash" => {
            let table = p.buf(vec![0; 256]);
            let h = p.buf(vec![0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b, 0x2e]);
            p.call(&ghash::INIT, variant, vec![table.clone(), h]);
            let xi = p.buf(vec![0; 16]);
            for &n in sizes {
                let n = n.max(16).next_multiple_of(16);
                let inp = p.buf(vec![0x5a; n]);
                let c = p.call(&ghash::GHASH, variant, vec![xi.clone(), table.clone(), inp, Arg::Int(n as u64)]);
                p.row(bench_name(&ghash::GHASH, variant), n, c, 1);
            }
        }
        "poly1305" => {
            let key = p.buf(vec![0x3c; 32]);
            let ctx = p.buf(vec![0; 192]);
            p.call(&poly1305::INIT, variant, vec![ctx.clone(), key, Arg::Int(0)]);
            for &n in sizes {
                let n = n.max(16).next_multiple_of(16);
                let inp = p.buf(vec![0x5a; n]);
                let c = p.call(&poly1305::BLOCKS, variant, vec![ctx.clone(), inp, Arg::Int(n as u64), Arg::Int(1)]);
                p.row(bench_name(&poly1305::BLOCKS, variant), n, c, 1);
            }
        }
        "sha256" | "sha512" => {
            let (entry, block) = if kernel == "sha256" { (&sha2::SHA256_BLOCKS, 64) } else { (&sha2::SHA512_BLOCKS, 128) };
            let ctx = p.buf(vec![0x6a; 216]);
            let mut done = Vec::new();
            for &n in sizes {
                let n = n.max(block).next_multiple_of(block);
                if done.contains(&n) {
                    continue; // a smaller size rounded up to the same blocks
                }
                done.push(n);
                let inp = p.buf(vec![0x5a; n]);
                let c = p.call(entry, variant, vec![ctx.clone(), inp, Arg::Int((n / block) as u64)]);
                p.row(bench_name(entry, variant), n, c, 1);
            }
        }
        other => return Err(format!("no RTL plan for kernel `{other}`")),
    }
    Ok(p)
}

/// Whether the RTL (RV64GC with T-Head's scalar extensions, no vector unit) runs every
/// instruction of `obj`.
pub fn runs_on_rtl(obj: &Object) -> bool {
    let rtl = kgen_dsl::target::target("c906-novector").expect("the c906-novector target");
    obj.insts.iter().all(|(_, i)| i.row().ext.intersects(rtl.exts))
}

/// The harness's table for `plan`: buffers, wrappers, `BENCH` entries in call order.
pub fn harness_c(plan: &Plan, params: impl Fn(&str) -> usize) -> String {
    let mut s = String::from(
        "/* Generated by kgen (src/rtl.rs) for the openc906 RTL harness. */\n#include \"bench.h\"\n#include <stdint.h>\n\
         /* bench.h's BENCH, kept in definition order (the harness runs the table in order). */\n\
         #define KBENCH(name, fn, a0, a1, a2, a3, reps, ops) \\\n\
         extern void fn(uint64_t, uint64_t, uint64_t, uint64_t); \\\n\
         __attribute__((used, no_reorder, section(\".bench_table\"))) static const struct bench name = \\\n\
         { fn, (uint64_t)(a0), (uint64_t)(a1), (uint64_t)(a2), (uint64_t)(a3), reps, ops };\n",
    );
    for (k, b) in plan.bufs.iter().enumerate() {
        let _ = write!(s, "static unsigned char buf{k}[{}] __attribute__((aligned(64))) = {{", b.len().max(1));
        for (j, x) in b.iter().enumerate() {
            if j % 32 == 0 {
                s.push('\n');
            }
            let _ = write!(s, "{x},");
        }
        s.push_str("\n};\n");
    }
    for (k, c) in plan.calls.iter().enumerate() {
        let arg = |a: &Arg| match a {
            Arg::Buf(b) => format!("(uint64_t)(uintptr_t)buf{b}"),
            Arg::Int(v) => format!("{v}ull"),
        };
        let n = params(&c.symbol).max(c.args.len());
        if n <= 4 {
            let mut a: Vec<String> = c.args.iter().map(arg).collect();
            a.resize(4, "0".into());
            let _ = writeln!(s, "KBENCH(e{k:03}, {}, {}, {}, {}, {}, {}, 1)", c.symbol, a[0], a[1], a[2], a[3], c.reps);
        } else {
            // More than four arguments: a wrapper passes the rest.
            let proto: Vec<String> = (0..n).map(|_| "uint64_t".to_string()).collect();
            let _ = writeln!(s, "extern void {}({});", c.symbol, proto.join(", "));
            let rest: Vec<String> = c.args[4..].iter().map(arg).collect();
            let _ = writeln!(
                s,
                "void w{k:03}(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) {{ {}(a0, a1, a2, a3, {}); }}",
                c.symbol,
                rest.join(", ")
            );
            let a: Vec<String> = c.args[..4].iter().map(arg).collect();
            let _ = writeln!(s, "KBENCH(e{k:03}, w{k:03}, {}, {}, {}, {}, {}, 1)", a[0], a[1], a[2], a[3], c.reps);
        }
    }
    s
}

/// The RTL kit: `$KGEN_C906_RTL_KIT`, else `../shared/c906-rtl` beside the repository.
pub fn kit_dir() -> PathBuf {
    std::env::var_os("KGEN_C906_RTL_KIT").map(PathBuf::from).unwrap_or_else(|| oracle::repo_root().join("../shared/c906-rtl"))
}

/// The built model's root (what `C906_RTL` names for the kit's scripts): the setup script's
/// `.toolchain/c906rtl` link, or `$C906_RTL`.
pub fn model_root() -> Option<PathBuf> {
    let p = std::env::var_os("C906_RTL").map(PathBuf::from).unwrap_or_else(|| oracle::toolchain_dir().join("c906rtl"));
    p.join("sim/obj_dir/Vc906").exists().then_some(p)
}

/// The RTL and its kit, or (under CI a failure, else a skip) `None`.
pub fn require() -> Option<(PathBuf, PathBuf)> {
    let kit = kit_dir();
    match (model_root(), kit.join("harness/run.sh").exists()) {
        (Some(m), true) => Some((m, kit)),
        _ => oracle::missing(&format!("the C906 RTL model (setup-toolchain.sh builds it from {})", kit.display())),
    }
}

/// FNV-1a, 64 bits, twice with different seeds: the key of a cached RTL run.
fn digest(parts: &[&[u8]]) -> String {
    let mut out = String::new();
    for seed in [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142] {
        let mut h = seed;
        for p in parts {
            for &b in p.iter().chain((p.len() as u64).to_le_bytes().iter()) {
                h ^= b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        let _ = write!(out, "{h:016x}");
    }
    out
}

/// Cycles and instructions per call of each planned call, from the harness's output.
fn parse(log: &str, n: usize) -> Result<Vec<(f64, f64)>, String> {
    let mut out = vec![None; n];
    for l in log.lines() {
        if let Some(t) = l.strip_prefix("TRAP") {
            return Err(format!("the RTL trapped:{t}"));
        }
        let Some(k) = l.strip_prefix('e').and_then(|r| r.get(..3)).and_then(|d| d.parse::<usize>().ok()) else { continue };
        let (Some(o), Some(c)) = (l.rfind('('), l.rfind(')')) else { continue };
        let raw: Vec<f64> = l[o + 1..c].split(',').filter_map(|x| x.trim().parse().ok()).collect();
        let reps: f64 = l.split_whitespace().nth(5).and_then(|r| r.parse().ok()).unwrap_or(1.0);
        if raw.len() == 4 && k < n {
            out[k] = Some(((raw[0] - raw[2]) / reps, (raw[1] - raw[3]) / reps));
        }
    }
    out.into_iter().enumerate().map(|(k, v)| v.ok_or_else(|| format!("the RTL harness printed no row for call {k}:\n{log}"))).collect()
}

/// The cache folder for RTL results.
fn cache_dir() -> PathBuf {
    std::env::var_os("KGEN_RTL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/kgen-rtl"))
}

/// Runs `plan` (its functions defined by `asm`, GNU assembly) on the RTL: cycles and
/// instructions per call of each call. `work` is a scratch directory.
pub fn run_rtl(plan: &Plan, asm: &str, params: impl Fn(&str) -> usize, model: &Path, kit: &Path, work: &Path) -> Result<Vec<(f64, f64)>, String> {
    let c = harness_c(plan, params);
    let mut kit_files: Vec<Vec<u8>> = Vec::new();
    for f in ["harness/run.sh", "harness/bench.h", "harness/crt.S", "harness/harness.c", "harness/link.ld", "harness/parse.py", "harness/mkimg.py"] {
        kit_files.push(std::fs::read(kit.join(f)).map_err(|e| format!("{}: {e}", kit.join(f).display()))?);
    }
    let bin = std::fs::read(model.join("sim/obj_dir/Vc906")).map_err(|e| format!("the RTL model: {e}"))?;
    let bin_key = digest(&[&bin]);
    let mut parts: Vec<&[u8]> = vec![c.as_bytes(), asm.as_bytes(), bin_key.as_bytes()];
    parts.extend(kit_files.iter().map(|v| v.as_slice()));
    let key = digest(&parts);
    let cached = cache_dir().join(format!("{key}.log"));
    if let Ok(log) = std::fs::read_to_string(&cached) {
        return parse(&log, plan.calls.len());
    }
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let (sf, cf) = (work.join("kernel.S"), work.join("table.c"));
    std::fs::write(&sf, asm).map_err(|e| e.to_string())?;
    std::fs::write(&cf, &c).map_err(|e| e.to_string())?;
    let o = std::process::Command::new(kit.join("harness/run.sh"))
        .arg(work.join("out"))
        .arg(&sf)
        .arg(&cf)
        .env("C906_RTL", model)
        .output()
        .map_err(|e| format!("harness/run.sh: {e}"))?;
    let log = String::from_utf8_lossy(&o.stdout).into_owned();
    if !o.status.success() {
        return Err(format!("harness/run.sh failed for {}: {}{}", plan.label, log, String::from_utf8_lossy(&o.stderr)));
    }
    let r = parse(&log, plan.calls.len())?;
    if std::fs::create_dir_all(cache_dir()).is_ok() {
        let _ = std::fs::write(&cached, &log);
    }
    Ok(r)
}

/// Runs `plan` on kgen's cost model with the harness's protocol (each call once, then
/// `reps` times; buffers 64-byte aligned): cycles and instructions per call.
pub fn run_model(plan: &Plan, obj: &Object, target: &Target) -> Result<Vec<(f64, f64)>, String> {
    let mut env = Env::new(obj, target)?.with_cost_model();
    env.m.max_steps = 1 << 34;
    let bufs: Vec<u64> = plan.bufs.iter().map(|b| env.try_buffer(b, 0, true)).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for c in &plan.calls {
        let f = env.lookup(&c.symbol)?;
        let args: Vec<u64> = c
            .args
            .iter()
            .map(|a| match a {
                Arg::Buf(k) => bufs[*k],
                Arg::Int(v) => *v,
            })
            .collect();
        let e = |x: kgen_sim::CallError| format!("{}: {x}", c.symbol);
        env.call(f, &args).map_err(e)?;
        let (mut cy, mut ins) = (0u64, 0u64);
        for _ in 0..c.reps {
            let o = env.call(f, &args).map_err(e)?;
            cy += o.cycles;
            ins += o.instructions;
        }
        out.push((cy as f64 / c.reps as f64, ins as f64 / c.reps as f64));
    }
    Ok(out)
}

/// A row's figure from per-call results.
pub fn row_cycles(plan: &Plan, per_call: &[(f64, f64)], r: &RowPlan) -> (f64, f64) {
    let (c, i) = per_call[r.call];
    let _ = plan;
    (c * r.calls as f64, i * r.calls as f64)
}

/// The number of parameters of the kernel entry point named `symbol` (for wrappers).
pub fn params_of(kernel: &str, variant: &str, symbol: &str) -> usize {
    let entries: &[&Entry] = match kernel {
        "aes" => kgen_kernels::aes::ENTRIES,
        "chacha20" => kgen_kernels::chacha::ENTRIES,
        "ghash" => kgen_kernels::ghash::ENTRIES,
        "poly1305" => kgen_kernels::poly1305::ENTRIES,
        _ => &[],
    };
    entries.iter().find(|e| e.symbol(variant) == symbol).map(|e| e.params.len()).unwrap_or(4)
}

/// One row measured on both.
#[derive(Clone, Debug)]
pub struct Compared {
    pub kernel: String,
    pub variant: String,
    pub what: String,
    pub bytes: usize,
    pub model_cycles: f64,
    pub rtl_cycles: f64,
    pub model_instructions: f64,
    pub rtl_instructions: f64,
}

impl Compared {
    pub fn ratio(&self) -> f64 {
        self.model_cycles / self.rtl_cycles
    }
}

/// The variant's OpenSSL-ABI assembly (what `kgen emit K --variant V --abi openssl --format
/// s --asm-compat binutils-2.40` prints) and its object.
pub fn variant_asm(kernel: &str, variant: &str) -> Result<(String, Object, Target), String> {
    let out = crate::outputs::all()
        .into_iter()
        .find(|o| o.kernel.name == kernel && o.variant.name == variant && o.abi == Abi::Psabi && o.format == crate::outputs::Format::S)
        .ok_or_else(|| format!("{kernel} {variant} has no OpenSSL assembly output"))?;
    let m = out.build()?;
    let compat = kgen_emit::Compat::from_name("binutils-2.40").expect("a known compat");
    let files = out.render_module(&m, compat)?;
    let text = String::from_utf8(files.into_iter().next().ok_or("no file rendered")?.1).map_err(|e| e.to_string())?;
    let obj = m.object().map_err(|e| e.to_string())?;
    Ok((text, obj, m.target.clone()))
}

/// Measures a variant's `kgen bench` rows at `sizes` on the RTL and on the model.
pub fn compare_variant(kernel: &str, variant: &str, sizes: &[usize], model: &Path, kit: &Path, work: &Path) -> Result<Vec<Compared>, String> {
    let p = plan(kernel, variant, sizes)?;
    let (asm, obj, target) = variant_asm(kernel, variant)?;
    let rtl = run_rtl(&p, &asm, |s| params_of(kernel, variant, s), model, kit, &work.join(format!("{kernel}-{variant}")))?;
    let sim = run_model(&p, &obj, &target)?;
    Ok(p.rows
        .iter()
        .map(|r| {
            let (mc, mi) = row_cycles(&p, &sim, r);
            let (rc, ri) = row_cycles(&p, &rtl, r);
            Compared {
                kernel: kernel.into(),
                variant: variant.into(),
                what: r.what.clone(),
                bytes: r.bytes,
                model_cycles: mc,
                rtl_cycles: rc,
                model_instructions: mi,
                rtl_instructions: ri,
            }
        })
        .collect())
}

/// The scalar variants the RTL runs, as (kernel, variant).
pub fn scalar_variants() -> Vec<(&'static str, &'static str)> {
    let mut v = Vec::new();
    for k in kgen_kernels::kernels() {
        for var in k.variants {
            if !var.abis.contains(&Abi::Psabi) {
                continue;
            }
            if var.build(Abi::Psabi).ok().and_then(|m| m.object().ok()).is_some_and(|o| runs_on_rtl(&o)) {
                v.push((k.name, var.name));
            }
        }
    }
    v
}

/// `kgen bench --rtl`: the RTL figures of the rows of scalar variants (kernel, variant,
/// what, bytes) -> cycles. Rows of variants the RTL cannot run are absent.
pub type RtlFigures = std::collections::HashMap<(String, String, String, usize), f64>;

/// Measures the RTL column for `rows` (those of scalar variants).
pub fn figures_for(rows: &[crate::bench::Row], work: &Path) -> Result<RtlFigures, String> {
    let (model, kit) = match (model_root(), kit_dir()) {
        (Some(m), k) if k.join("harness/run.sh").exists() => (m, k),
        _ => return Err(format!("--rtl: the C906 RTL model is not built (scripts/setup-toolchain.sh builds it from {})", kit_dir().display())),
    };
    let scalar = scalar_variants();
    let mut out = RtlFigures::new();
    let mut done: Vec<(String, String)> = Vec::new();
    for r in rows {
        let key = (r.kernel.clone(), r.variant.clone());
        if done.contains(&key) || !scalar.iter().any(|(k, v)| *k == r.kernel && *v == r.variant) {
            continue;
        }
        done.push(key);
        let mut sizes: Vec<usize> = rows.iter().filter(|x| x.kernel == r.kernel && x.variant == r.variant).map(|x| x.bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for c in compare_variant(&r.kernel, &r.variant, &sizes, &model, &kit, work)? {
            out.insert((c.kernel, c.variant, c.what, c.bytes), c.rtl_cycles);
        }
    }
    Ok(out)
}

/// The table with an RTL column (cycles and cycles per byte on the RTL, and model/RTL).
pub fn table_with_rtl(rows: &[crate::bench::Row], rtl: &RtlFigures) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<10} {:<14} {:<26} {:>7} {:>12} {:>12} {:>9} {:>12} {:>9} {:>9}", "kernel", "variant", "measured", "bytes", "instructions", "cycles", "cyc/byte", "RTL cycles", "RTL c/B", "model/RTL");
    for r in rows {
        let _ = write!(s, "{:<10} {:<14} {:<26} {:>7} {:>12} {:>12} {:>9.2}", r.kernel, r.variant, r.what, r.bytes, r.instructions, r.cycles, r.cpb());
        match rtl.get(&(r.kernel.clone(), r.variant.clone(), r.what.clone(), r.bytes)) {
            Some(c) => {
                let _ = writeln!(s, " {:>12.0} {:>9.2} {:>9.3}", c, c / r.bytes.max(1) as f64, r.cycles as f64 / c);
            }
            None => s.push_str(&format!(" {:>12} {:>9} {:>9}\n", "–", "–", "–")),
        }
    }
    s
}

/// Markdown: model and RTL cycles per byte side by side for each size.
pub fn markdown_with_rtl(rows: &[crate::bench::Row], rtl: &RtlFigures) -> String {
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let keys = crate::bench::row_keys(rows);
    let mut s = String::from("| kernel | variant | function |");
    for n in &sizes {
        let _ = write!(s, " {n} B model | {n} B RTL |");
    }
    s.push_str("\n|---|---|---|");
    for _ in &sizes {
        s.push_str("---:|---:|");
    }
    s.push('\n');
    for (k, v, w) in keys {
        let _ = write!(s, "| {k} | {v} | {w} |");
        for n in &sizes {
            match rows.iter().find(|r| r.kernel == k && r.variant == v && r.what == w && r.bytes == *n) {
                Some(r) => {
                    let _ = write!(s, " {:.2} |", r.cpb());
                    match rtl.get(&(k.to_string(), v.to_string(), w.to_string(), *n)) {
                        Some(c) => {
                            let _ = write!(s, " {:.2} |", c / r.bytes.max(1) as f64);
                        }
                        None => s.push_str(" – |"),
                    }
                }
                None => s.push_str(" – | – |"),
            }
        }
        s.push('\n');
    }
    s
}
