//! The C906 model against physical measurements of a C906 (Allwinner D1, MangoPi MQ Pro,
//! 1 GHz): camel-cdr's rvv-bench results, kept with a later revision of the code that
//! produced them in `../shared/calibration/` (`d1-measured.tsv`; see its README, and
//! docs/cost-model.md, "Which rvv-bench ran"). That code runs here on the model, as
//! rvv-bench ran it on the board:
//!
//! - memcpy/memset: `memcpy.S`/`memset.S` preprocessed once per LMUL (`MX(x)` = `x##m1`
//!   ... `x##m8`, as rvv-bench's `template.S` includes them) and assembled for the C906,
//!   so their RVV 1.0 instructions run as rvv-rollback translated them for the D1; the
//!   `scalar` byte loops are `memcpy.c`/`memset.c` compiled with the cross gcc at -O3.
//!   Before each timed call the destination is rewritten (as the driver's `memset` does);
//!   the "aligned" series use offset 0 from a 16-byte aligned block (glibc's malloc of
//!   64 MiB), the other series random offsets below 512, drawn per sample; the figure is
//!   the mean of the middle 60% of the sorted samples, as rvv-bench's `bench_time`. The
//!   random series first runs the previous size's samples, untimed (rvv-bench runs the
//!   sizes in increasing order on the same buffers), and its two untimed calls share one
//!   random offset pair (both start from the same random state).
//! - chacha20: `vchacha.s` (`vector_chacha20`, RVV 1.0 rolled back) and `boring.c`'s
//!   `boring_chacha20`; poly1305: `boring_poly1305_init` + `update` + `finish` in one timed
//!   call, over n rounded up to 16 (the figure divides the unrounded n, as the driver does).
//!
//! The model runs with its L1 data cache (`C906::with_l1`): the buffers sit where rvv-bench
//! puts them (the second at `mem + MAX_MEM/2`, the same offset in every cache way; the
//! kept memcpy.c adds 9 bytes to the source, which the D1's aligned rows say its run did
//! not: [`Setup::KEPT_MEMCPY_C`]), the
//! driver's two untimed calls, each followed by its checksum of the destination, warm it,
//! and between timed calls the driver's own lines ([`FOREIGN_LINES`]) and its `memset` of
//! the destination go through it (docs/cost-model.md, "L1 data cache").
//! [`Programs::model_with_amr_of`] runs a row with the L1's store-stream detector on
//! (docs/cost-model.md, "The store stream"); the row-by-row comparison runs without it.
//!
//! `boring.c` and the scalar loops are compiled by Debian 12's riscv64 gcc (the D1 build's
//! compiler is not recorded; rvv-bench's README names an RVV 0.7.1 GCC of 2023):
//! [`CFLAGS`].

use kgen_harness::oracle::Tool;
use kgen_dsl::asmfile::{assemble_files_with, AsmOptions};
use kgen_dsl::object::Object;
use kgen_dsl::target::{target, Target};
use kgen_sim::Env;
use rand::{Rng, RngCore, SeedableRng};
use std::path::{Path, PathBuf};

/// Flags for `boring.c`, `memcpy.c` and `memset.c`. rvv-bench's `config.mk` says
/// `-march=rv64gcv -O3`; kgen-sim runs no compressed instructions and the D1's vector
/// unit is not RVV 1.0, so the C is built scalar, without C. GCC 12's SLP vectoriser
/// turns boring.c's byte loops into word-wide shift-and-mask code that the 2023 RVV 0.7.1
/// GCCs did not emit (+15% instructions in boring_chacha20: [`CFLAGS_PLAIN`] shows it);
/// it is turned off.
pub const CFLAGS: &[&str] = &["-O3", "-fno-tree-slp-vectorize", "-march=rv64gc", "-mabi=lp64d"];
/// Plain `-O3` (reported beside, not compared).
pub const CFLAGS_PLAIN: &[&str] = &["-O3", "-march=rv64gc", "-mabi=lp64d"];

/// The calibration folder: `$KGEN_CALIBRATION`, else `../shared/calibration` beside the
/// repository.
pub fn calibration_dir() -> PathBuf {
    std::env::var_os("KGEN_CALIBRATION").map(PathBuf::from).unwrap_or_else(|| kgen_harness::oracle::repo_root().join("../shared/calibration"))
}

/// One row of `d1-measured.tsv`.
#[derive(Clone, Debug, PartialEq)]
pub struct D1Row {
    pub bench: String,
    pub series: String,
    pub imp: String,
    pub bytes: usize,
    pub cycles_per_byte: f64,
}

/// Reads `d1-measured.tsv`.
pub fn measured(dir: &Path) -> Result<Vec<D1Row>, String> {
    let p = dir.join("d1-measured.tsv");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut rows = Vec::new();
    for (k, l) in text.lines().enumerate() {
        if l.starts_with('#') || l.starts_with("bench\t") || l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        let bad = || format!("{}: line {}: expected bench, series, impl, bytes, bytes_per_cycle, cycles_per_byte", p.display(), k + 1);
        if f.len() != 6 {
            return Err(bad());
        }
        let bpc: f64 = f[4].parse().map_err(|_| bad())?;
        rows.push(D1Row { bench: f[0].into(), series: f[1].into(), imp: f[2].into(), bytes: f[3].parse().map_err(|_| bad())?, cycles_per_byte: 1.0 / bpc });
    }
    Ok(rows)
}

/// The calibration's programs, assembled for the C906.
pub struct Programs {
    /// memcpy.S, memset.S per LMUL 1, 2, 4, 8.
    pub memcpy: Vec<Object>,
    pub memset: Vec<Object>,
    /// memcpy.c, memset.c (the `scalar` loops), vchacha.s, boring.c with [`CFLAGS`] and
    /// with [`CFLAGS_PLAIN`].
    pub memcpy_c: Object,
    pub memset_c: Object,
    pub vchacha: Object,
    pub boring: Object,
    pub boring_plain: Object,
}

impl Programs {
    /// The memcpy (`set`: memset) program of `imp`: `scalar`, or a loop of memcpy.S/memset.S
    /// at an LMUL (`rvv_m1`..`rvv_m8`, or one of [`OTHER_LOOPS`] as `rvv_tail_m4`).
    pub fn copy(&self, set: bool, imp: &str) -> Result<&Object, String> {
        if imp == "scalar" {
            return Ok(if set { &self.memset_c } else { &self.memcpy_c });
        }
        let bench = if set { "memset" } else { "memcpy" };
        let unknown = || format!("no {bench} program `{imp}`");
        let (lp, m) = loop_of(imp).ok_or_else(unknown)?;
        let known = lp == "rvv" || OTHER_LOOPS.iter().any(|(b, loops)| *b == bench && loops.contains(&lp));
        let k = LMULS.iter().position(|&x| x == m).filter(|_| known).ok_or_else(unknown)?;
        Ok(if set { &self.memset[k] } else { &self.memcpy[k] })
    }

    /// The model's cycles per byte for the D1 memcpy/memset row (`bench`, `series`, `imp`,
    /// `bytes`), run as rvv-bench ran it.
    pub fn model_of(&self, bench: &str, series: &str, imp: &str, bytes: usize) -> Result<f64, String> {
        self.row(bench, series, imp, bytes, Setup::CALIBRATED)
    }

    /// [`Programs::model_of`] with the L1's store-stream detector on, as the firmware of
    /// D1 boards sets it (Allwinner's U-Boot writes `mhint` = 0x600c: AMR 1).
    pub fn model_with_amr_of(&self, bench: &str, series: &str, imp: &str, bytes: usize) -> Result<f64, String> {
        self.row(bench, series, imp, bytes, Setup { amr: true, ..Setup::CALIBRATED })
    }

    /// The model's cycles per byte for the row, run as `h` says.
    fn row(&self, bench: &str, series: &str, imp: &str, bytes: usize, h: Setup) -> Result<f64, String> {
        let set = bench == "memset";
        copy_or_set(self.copy(set, imp)?, &format!("{bench}_{imp}"), bytes, series == bench, set, h)
    }
}

/// How `kgen_calibration::d1` runs a memcpy/memset row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    /// The L1's store-stream detector on (`mhint` AMR 1, [`kgen_sim::cost::Amr`]).
    pub amr: bool,
    /// Bytes added to memcpy's source beyond `mem + MAX_MEM/2 + sOff` (the kept memcpy.c's
    /// `+ 9`), at most [`MAX_SRC_SKEW`]; memset has no source.
    pub src_skew: u64,
}

impl Setup {
    /// The calibration's (the row-by-row comparison, the sweep, the other loops): the
    /// detector off (which of the two the D1's copies at 8-16 KiB follow is open:
    /// docs/cost-model.md, "The store stream"), the source at `mem + MAX_MEM/2 + sOff`,
    /// where the D1's aligned rows say its run put it.
    pub const CALIBRATED: Setup = Setup { amr: false, src_skew: 0 };
    /// The kept memcpy.c's `common`, which puts the source 9 bytes further
    /// (`mem + MAX_MEM/2 + sOff + 9`), added in rvv-bench 000b9bd with the 64 MiB
    /// `MAX_MEM` the D1 run already had, so the history does not date it; the aligned rows
    /// where the data stays in the L1 say the D1 copied from an aligned source
    /// (`the_d1_copied_from_an_aligned_source` in tests/d1_calibration.rs).
    pub const KEPT_MEMCPY_C: Setup = Setup { amr: false, src_skew: 9 };
}

/// The most [`Setup::src_skew`] may be: the harness's source data reaches 1024 bytes past
/// the copy, and the random offsets take 511 of them.
pub const MAX_SRC_SKEW: u64 = 512;

/// The name of rvv-bench's memcpy/memset series: random offsets, or offset 0.
pub fn series(bench: &str, random: bool) -> String {
    if random { bench.to_string() } else { format!("{bench} aligned") }
}

/// The implementations of the memcpy/memset series kgen compares.
pub const COPY_IMPLS: [&str; 5] = ["rvv_m1", "rvv_m2", "rvv_m4", "rvv_m8", "scalar"];

/// The LMULs memcpy.S and memset.S are built at (`Programs::memcpy`/`memset` in this order).
pub const LMULS: [usize; 4] = [1, 2, 4, 8];

/// The loop and the LMUL of a memcpy.S/memset.S implementation name (`rvv_tail_m4`:
/// `("rvv_tail", 4)`), or None for another name.
pub fn loop_of(imp: &str) -> Option<(&str, usize)> {
    let (lp, m) = imp.rsplit_once("_m")?;
    let m: usize = m.parse().ok()?;
    LMULS.contains(&m).then_some((lp, m))
}

/// The other loops of memcpy.S and memset.S the D1 measured (each at m1, m2, m4, m8), run
/// as evidence for the vsetvl and divider rows (docs/cost-model.md, "Other rvv-bench
/// loops"): the same copy with its vsetvli before the branch (`rvv_align_dest`,
/// `rvv_align_dest_hybrid`, `rvv_align_src`, `memset`'s `rvv_align`, the last three after
/// an aligning step), a fixed vl and a `remu` for the tail (`rvv_tail`, `rvv_tail_4x`
/// unrolled four times), and 16 bytes a step at every LMUL (`rvv_128`).
pub const OTHER_LOOPS: [(&str, &[&str]); 2] = [
    ("memcpy", &["rvv_align_dest", "rvv_align_dest_hybrid", "rvv_align_src", "rvv_tail", "rvv_128"]),
    ("memset", &["rvv_align", "rvv_tail", "rvv_tail_4x"]),
];

/// The D1 rows of [`OTHER_LOOPS`] (both series) whose sizes are in `sizes`, on the model,
/// on every core; in the order bench, series, loop, LMUL, size.
pub fn other_loops(p: &Programs, rows: &[D1Row], sizes: std::ops::RangeInclusive<usize>) -> Result<Vec<Case>, String> {
    let wanted: Vec<(&str, Vec<String>)> = OTHER_LOOPS.iter().map(|(bench, loops)| (*bench, loops.iter().flat_map(|lp| LMULS.map(|m| format!("{lp}_m{m}"))).collect())).collect();
    model_rows(p, rows, &wanted, sizes, Setup::CALIBRATED)
}

/// The D1 rows of each bench's implementations in `wanted` (both series) whose sizes are in
/// `sizes`, on the model (run by `h`), on every core;
/// in the order bench, series, implementation, size.
fn model_rows(p: &Programs, rows: &[D1Row], wanted: &[(&str, Vec<String>)], sizes: std::ops::RangeInclusive<usize>, h: Setup) -> Result<Vec<Case>, String> {
    let mut todo: Vec<&D1Row> = Vec::new();
    for (bench, imps) in wanted {
        for random in [false, true] {
            let series = series(bench, random);
            for imp in imps {
                todo.extend(rows.iter().filter(|r| r.bench == *bench && r.series == series && r.imp == *imp && sizes.contains(&r.bytes)));
            }
        }
    }
    kgen_harness::par_map(&todo, |r| Ok(Case::of(r, p.row(&r.bench, &r.series, &r.imp, r.bytes, h)?))).into_iter().collect()
}

/// A memcpy for boring.c's `poly1305_init` (it tail-calls one; the D1 ran glibc's): word
/// copies, then bytes. Written here, not taken from any library.
const MEMCPY: &str = "
.text
.globl memcpy
memcpy:
    mv t0, a0
    srli t1, a2, 3
    beqz t1, 2f
1:  ld t2, 0(a1)
    sd t2, 0(t0)
    addi a1, a1, 8
    addi t0, t0, 8
    addi t1, t1, -1
    bnez t1, 1b
2:  andi a2, a2, 7
    beqz a2, 4f
3:  lbu t2, 0(a1)
    sb t2, 0(t0)
    addi a1, a1, 1
    addi t0, t0, 1
    addi a2, a2, -1
    bnez a2, 3b
4:  ret
";

fn c906() -> Target {
    target("c906").expect("the c906 target")
}

fn asm(files: &[(&str, &str)]) -> Result<Object, String> {
    assemble_files_with(files, &c906(), AsmOptions { unknown_as_trap: true, linked_alignment: false }).map(|a| a.object).map_err(|e| e.to_string())
}

fn run_tool(t: &Tool, args: &[&str]) -> Result<String, String> {
    let o = t.run(args).map_err(|e| format!("{}: {e}", t.program.display()))?;
    if !o.status.success() {
        return Err(format!("{} {}: {}", t.program.display(), args.join(" "), String::from_utf8_lossy(&o.stderr)));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Preprocesses, compiles and assembles the calibration's sources (`gcc` is the riscv64
/// cross compiler; `scratch` a directory for its outputs).
pub fn programs(gcc: &Tool, dir: &Path, scratch: &Path) -> Result<Programs, String> {
    let bench = dir.join("rvv-bench/bench");
    let ccp = dir.join("rvv-chacha-poly");
    let s = |p: PathBuf| p.display().to_string();
    let mut memcpy = Vec::new();
    let mut memset = Vec::new();
    for m in LMULS {
        let def = format!("-DMX(x)=x##m{m}");
        for (name, out) in [("memcpy.S", &mut memcpy), ("memset.S", &mut memset)] {
            let src = run_tool(gcc, &["-E", "-P", "-x", "assembler-with-cpp", &def, &s(bench.join(name))])?;
            let label = format!("{name} (MX=m{m})");
            out.push(asm(&[(&label, &src)])?);
        }
    }
    let cc = |src: &Path, flags: &[&str], out: &str| -> Result<String, String> {
        let o = scratch.join(out);
        let mut args: Vec<&str> = flags.to_vec();
        let (sp, op, inc) = (s(src.to_path_buf()), s(o.clone()), format!("-I{}", s(bench.clone())));
        args.extend(["-S", "-o", &op, &inc, &sp]);
        run_tool(gcc, &args)?;
        std::fs::read_to_string(&o).map_err(|e| format!("{}: {e}", o.display()))
    };
    let memcpy_c = cc(&bench.join("memcpy.c"), CFLAGS, "memcpy.s")?;
    let memset_c = cc(&bench.join("memset.c"), CFLAGS, "memset.s")?;
    let boring = cc(&ccp.join("boring.c"), CFLAGS, "boring.s")?;
    let boring_plain = cc(&ccp.join("boring.c"), CFLAGS_PLAIN, "boring-O3.s")?;
    let vchacha = std::fs::read_to_string(ccp.join("vchacha.s")).map_err(|e| format!("vchacha.s: {e}"))?;
    Ok(Programs {
        memcpy,
        memset,
        memcpy_c: asm(&[("memcpy.c", &memcpy_c)])?,
        memset_c: asm(&[("memset.c", &memset_c)])?,
        vchacha: asm(&[("vchacha.s", &vchacha)])?,
        boring: asm(&[("boring.c", &boring), ("memcpy (kgen's)", MEMCPY)])?,
        boring_plain: asm(&[("boring.c -O3", &boring_plain), ("memcpy (kgen's)", MEMCPY)])?,
    })
}

/// One comparison.
#[derive(Clone, Debug)]
pub struct Case {
    pub bench: String,
    pub series: String,
    pub imp: String,
    pub bytes: usize,
    pub d1: f64,
    pub model: f64,
}

impl Case {
    fn of(r: &D1Row, model: f64) -> Case {
        Case { bench: r.bench.clone(), series: r.series.clone(), imp: r.imp.clone(), bytes: r.bytes, d1: r.cycles_per_byte, model }
    }
    pub fn ratio(&self) -> f64 {
        self.model / self.d1
    }
}

/// Cycles rvv-bench's timed region adds to the function itself (`rdcycle`, the call
/// through a function pointer and its return, storing the result, `rdcycle`): the mean
/// over the 64-byte memcpy/memset rows of D1 cycles minus the model's, which the test
/// prints ([`harness_implied`]); added to every modeled call before comparing.
pub const HARNESS_CYCLES: f64 = 15.0;

/// What the rows imply for [`HARNESS_CYCLES`] (the mean of D1 − model cycles at the
/// 64-byte memcpy/memset rows, the model's taken without it).
pub fn harness_implied(cases: &[Case]) -> f64 {
    let d: Vec<f64> = cases
        .iter()
        .filter(|c| (c.bench == "memcpy" || c.bench == "memset") && c.bytes == 64)
        .map(|c| (c.d1 - c.model) * c.bytes as f64 + HARNESS_CYCLES)
        .collect();
    d.iter().sum::<f64>() / d.len().max(1) as f64
}

/// rvv-bench's statistic: the mean of sorted samples [R/5, 4R/5).
fn trimmed_mean(mut v: Vec<u64>) -> f64 {
    v.sort_unstable();
    let (lo, hi) = (v.len() / 5, (v.len() * 4).div_ceil(5));
    let s = &v[lo..hi.max(lo + 1)];
    s.iter().sum::<u64>() as f64 / s.len() as f64
}

/// Samples per random-offset point (rvv-bench keeps 21 to 64).
pub const SAMPLES: usize = 21;

fn env(obj: &Object) -> Result<Env, String> {
    let mut e = Env::with_undefined_stubs(obj, &c906())?;
    let mut c = kgen_sim::cost::C906::new().with_l1();
    // rvv-bench calls one function 24 to 66 times in a row (two untimed calls, then 22 to
    // 64 samples): its branches are known to the predictor [M: the D1's memset
    // rvv_tail_4x rows, see docs/cost-model.md].
    c.keep_predictor = true;
    e.m.cost = Some(c);
    e.m.max_steps = 1 << 30;
    Ok(e)
}

/// Lines that rvv-bench's driver and the kernel (its `clock()` system call, after every
/// sample past the first `MIN_REPEATS`) bring into the L1 between two timed calls, as
/// offsets in an 8 KiB cache way: the first three lines of each 4 KiB page [A, fitted: the aligned memcpy rows step up by
/// 600-800 cycles at 8347 bytes, where the three sets of the first lines of the way come
/// to hold four lines of the copy, and no earlier; page-aligned structures start there].
pub const FOREIGN_LINES: [u64; 6] = [0, 64, 128, 4096, 4096 + 64, 4096 + 128];
/// Where those lines are (an address nothing else uses).
const FOREIGN_BASE: u64 = 0x7000_0000;

/// What the driver does between two timed calls, as the L1 sees it: its own and the
/// kernel's lines ([`FOREIGN_LINES`]), then `memset(dest, c, len)` in 8-byte stores [A:
/// glibc's generic memset stores words].
fn between_calls(e: &mut Env, dest: u64, len: usize) {
    if let Some(l1) = e.m.cost.as_mut().and_then(|c| c.l1.as_mut()) {
        for off in FOREIGN_LINES {
            l1.access(FOREIGN_BASE + off);
        }
        l1.store_range(dest, len as u64, 8);
    }
}

/// rvv-bench's `checksum(n)` after an untimed call: it reads the destination's `n + 9` bytes.
fn checksum(e: &mut Env, dest: u64, len: usize) {
    if let Some(l1) = e.m.cost.as_mut().and_then(|c| c.l1.as_mut()) {
        l1.access_range(dest, len as u64);
    }
}

/// rvv-bench's `mem`: one block, its first byte 16 past a page boundary (glibc's malloc
/// of 64 MiB maps it, after a 16-byte header); the driver's second buffer is at
/// `mem + MAX_MEM/2`, the same offset in every cache way. Returns (mem, that buffer).
fn two_buffers(e: &mut Env, n: usize, second: &[u8]) -> Result<(u64, u64), String> {
    let half = (n + 2048).next_multiple_of(8192);
    let mut data = vec![0u8; 2 * half];
    data[half + 16..half + 16 + second.len()].copy_from_slice(second);
    let base = e.try_buffer(&data, 0, true)?;
    Ok((base + 16, base + half as u64 + 16))
}

/// memcpy (`dst, src, n`) or memset (`dst, c, n`) on the model, cycles per byte, placed and
/// called as rvv-bench does (`random`: its random-offset series, a trimmed mean).
/// `h`: the store-stream detector and the source's place ([`Setup`]).
pub fn copy_or_set(obj: &Object, sym: &str, n: usize, random: bool, set: bool, h: Setup) -> Result<f64, String> {
    if h.src_skew > MAX_SRC_SKEW {
        return Err(format!("{sym}({n}): a source skew of {} bytes is more than the harness holds ({MAX_SRC_SKEW})", h.src_skew));
    }
    let mut e = env(obj)?;
    if h.amr {
        if let Some(c) = e.m.cost.as_mut() {
            c.l1 = c.l1.take().map(|l| l.with_amr(1));
        }
    }
    let f = e.lookup(sym)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
    let mut src = vec![0u8; n + 1024];
    rng.fill_bytes(&mut src);
    let (dbase, sbase) = two_buffers(&mut e, n, &src)?;
    let c = rng.random::<u8>() as u64;
    let one_n = |e: &mut Env, d_off: u64, s_off: u64, n: usize| -> Result<u64, String> {
        let dest = dbase + d_off;
        e.m.mem.write_bytes(dest, &vec![if set { c as u8 + 3 } else { 0 }; n + 9]);
        between_calls(e, dest, n + 9);
        let args = if set { [dest, c, n as u64] } else { [dest, sbase + h.src_skew + s_off, n as u64] };
        Ok(e.call(f, &args).map_err(|x| format!("{sym}({n}): {x}"))?.cycles)
    };
    let one = |e: &mut Env, d_off: u64, s_off: u64| one_n(e, d_off, s_off, n);
    // The random series ran its sizes in increasing order on the same buffers: the
    // previous size's samples (timed there) left their lines in the L1; run here untimed.
    if random {
        let p = previous_size(n);
        for _ in 0..SAMPLES {
            let (d, s) = (rng.random::<u64>() & 511, rng.random::<u64>() & 511);
            one_n(&mut e, d, s, p)?;
        }
    }
    // rvv-bench's two untimed calls (the checksum comparison), from one random state:
    // both at the same offsets. The D1's second call ran `impls[0]` (libc's memcpy or
    // memset) on the same lines; the kernel stands in for it here.
    let (d, s) = if random { (rng.random::<u64>() & 511, rng.random::<u64>() & 511) } else { (0, 0) };
    for _ in 0..2 {
        one(&mut e, d, s)?;
        checksum(&mut e, dbase + d, n + 9);
    }
    let cycles = if random {
        let mut v = Vec::new();
        for _ in 0..SAMPLES {
            let (d, s) = (rng.random::<u64>() & 511, rng.random::<u64>() & 511);
            v.push(one(&mut e, d, s)?);
        }
        trimmed_mean(v)
    } else if h.amr {
        // With the detector on, which lines a copy leaves in the L1 changes from one call
        // to the next until it settles: the samples, as for the random series.
        let mut v = Vec::new();
        for _ in 0..SAMPLES {
            v.push(one(&mut e, 0, 0)?);
        }
        trimmed_mean(v)
    } else {
        one(&mut e, 0, 0)? as f64
    };
    Ok((cycles + HARNESS_CYCLES) / n as f64)
}

/// The size the D1 run measured before `n`, for `n` among its memcpy/memset sizes (they step
/// by `c + c/13 + 3`, an older `NEXT` than the kept config.h's `c + c/17 + 3`); otherwise
/// the p with p + p/13 + 3 = n if there is one, else `n`.
pub fn previous_size(n: usize) -> usize {
    (n.saturating_sub(n / 12 + 4)..n).find(|&p| p + p / 13 + 3 == n).unwrap_or(n)
}

/// ChaCha20 `f(out, in, n, key, nonce, 0)` on the model, cycles per byte.
fn chacha(obj: &Object, sym: &str, n: usize) -> Result<f64, String> {
    let mut e = env(obj)?;
    let f = e.lookup(sym)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
    let mut key = [0u8; 32];
    rng.fill_bytes(&mut key);
    // The 12-byte nonce sits in a larger array (vchacha.s loads 8 bytes at offset 8).
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce[..12]);
    let (k, no) = (e.try_buffer(&key, 0, false)?, e.try_buffer(&nonce, 0, false)?);
    let mut input = vec![0u8; n + 16];
    rng.fill_bytes(&mut input);
    // chacha20.c: out = mem, in = mem + MAX_MEM/2 + 16.
    let (out, second) = two_buffers(&mut e, n + 16, &[])?;
    let inp = second + 16;
    e.m.mem.write_bytes(inp, &input);
    let one = |e: &mut Env| -> Result<u64, String> {
        e.m.mem.write_bytes(out, &vec![0u8; n + 16]);
        between_calls(e, out, n + 16);
        Ok(e.call(f, &[out, inp, n as u64, k, no, 0]).map_err(|x| format!("{sym}({n}): {x}"))?.cycles)
    };
    one(&mut e)?;
    Ok((one(&mut e)? as f64 + HARNESS_CYCLES) / n as f64)
}

/// boring's Poly1305 init + update + finish on the model, cycles per (unrounded) byte.
fn poly(obj: &Object, n: usize) -> Result<f64, String> {
    let mut e = env(obj)?;
    let (init, update, finish) = (e.lookup("boring_poly1305_init")?, e.lookup("boring_poly1305_update")?, e.lookup("boring_poly1305_finish")?);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1305);
    let mut key = [0u8; 32];
    rng.fill_bytes(&mut key);
    let k = e.try_buffer(&key, 0, false)?;
    let state = e.try_buffer(&[0u8; 512], 0, true)?;
    let sig = e.try_buffer(&[0u8; 16], 0, true)?;
    let rounded = (n + 15) & !15;
    let mut msg = vec![0u8; rounded];
    rng.fill_bytes(&mut msg);
    let m = e.try_buffer(&msg, 16, false)?;
    let one = |e: &mut Env| -> Result<u64, String> {
        let a = e.call(init, &[state, k]).map_err(|x| format!("boring_poly1305_init: {x}"))?.cycles;
        let b = e.call(update, &[state, m, rounded as u64]).map_err(|x| format!("boring_poly1305_update({rounded}): {x}"))?.cycles;
        let c = e.call(finish, &[state, sig]).map_err(|x| format!("boring_poly1305_finish: {x}"))?.cycles;
        Ok(a + b + c)
    };
    one(&mut e)?;
    Ok((one(&mut e)? as f64 + HARNESS_CYCLES) / n as f64)
}

/// The D1 row of `bench/series/imp` nearest to `bytes`.
pub fn nearest<'a>(rows: &'a [D1Row], bench: &str, series: &str, imp: &str, bytes: usize) -> Option<&'a D1Row> {
    rows.iter().filter(|r| r.bench == bench && r.series == series && r.imp == imp).min_by_key(|r| r.bytes.abs_diff(bytes))
}

/// The sizes compared for memcpy/memset: the rows nearest to these (64 B to 16 KiB).
pub const COPY_SIZES: [usize; 5] = [64, 256, 1024, 4096, 16384];
/// The sizes compared for ChaCha20 and Poly1305.
pub const KERNEL_SIZES: [usize; 2] = [1024, 16384];

/// Every comparison the calibration makes: memcpy and memset (rvv m1/m2/m4/m8 and scalar,
/// aligned and random offsets) at [`COPY_SIZES`], the ChaCha20s and Poly1305 at
/// [`KERNEL_SIZES`]. `extra` adds boring.c at plain -O3 (bench `chacha20 -O3`).
pub fn cases(p: &Programs, rows: &[D1Row], extra: bool) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    let mut push = |r: &D1Row, model: f64, label: Option<&str>| {
        let mut c = Case::of(r, model);
        if let Some(l) = label {
            c.bench = l.to_string();
        }
        out.push(c);
    };
    for bench in ["memcpy", "memset"] {
        for random in [false, true] {
            let series = series(bench, random);
            for imp in COPY_IMPLS {
                for &n in &COPY_SIZES {
                    let r = nearest(rows, bench, &series, imp, n).ok_or_else(|| format!("d1-measured.tsv has no {series} {imp}"))?;
                    push(r, p.model_of(bench, &series, imp, r.bytes)?, None);
                }
            }
        }
    }
    for &n in &KERNEL_SIZES {
        let r = nearest(rows, "chacha20", "chacha20 aligned", "rvv", n).ok_or("d1-measured.tsv has no chacha20 rvv")?;
        push(r, chacha(&p.vchacha, "vector_chacha20", r.bytes)?, None);
        let r = nearest(rows, "chacha20", "chacha20 aligned", "boring", n).ok_or("d1-measured.tsv has no chacha20 boring")?;
        push(r, chacha(&p.boring, "boring_chacha20", r.bytes)?, None);
        if extra {
            push(r, chacha(&p.boring_plain, "boring_chacha20", r.bytes)?, Some("chacha20 (gcc -O3)"));
        }
        let r = nearest(rows, "poly1305", "poly1305 aligned", "boring", n).ok_or("d1-measured.tsv has no poly1305 boring")?;
        push(r, poly(&p.boring, r.bytes)?, None);
        if extra {
            push(r, poly(&p.boring_plain, r.bytes)?, Some("poly1305 (gcc -O3)"));
        }
    }
    Ok(out)
}

/// Every memcpy/memset row of the D1 measurements from 64 B to 16 KiB (rvv m1/m2/m4/m8 and
/// scalar, both series: 70 sizes each, 1400 rows), on the model, on every core.
pub fn sweep(p: &Programs, rows: &[D1Row]) -> Result<Vec<Case>, String> {
    sweep_range(p, rows, &["memcpy", "memset"], COPY_SIZES[0]..=COPY_SIZES[COPY_SIZES.len() - 1], Setup::CALIBRATED)
}

/// The D1 rows of `benches` (rvv m1/m2/m4/m8 and scalar, both series) whose sizes are in
/// `sizes`, on the model (run by `h`), on every core;
/// in the order bench, series, implementation, size.
pub fn sweep_range(p: &Programs, rows: &[D1Row], benches: &[&str], sizes: std::ops::RangeInclusive<usize>, h: Setup) -> Result<Vec<Case>, String> {
    let wanted: Vec<(&str, Vec<String>)> = benches.iter().map(|b| (*b, COPY_IMPLS.map(String::from).to_vec())).collect();
    model_rows(p, rows, &wanted, sizes, h)
}

/// The model/measured table.
pub fn table(cases: &[Case]) -> String {
    let mut s = String::from("| bench | series | impl | bytes | D1 c/B | model c/B | model/D1 |\n|---|---|---|---:|---:|---:|---:|\n");
    for c in cases {
        s.push_str(&format!("| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} |\n", c.bench, c.series, c.imp, c.bytes, c.d1, c.model, c.ratio()));
    }
    s
}
