//! The C906 model against the physical D1 measurements of ../shared/calibration/
//! (`kgen_calibration::d1`): memcpy and memset (rvv m1/m2/m4/m8 and scalar, aligned and random
//! offsets, 64 B to 16 KiB), rvv-chacha-poly's vector ChaCha20 and BoringSSL's C ChaCha20
//! and Poly1305 at 1 KiB and 16 KiB, each within 10% (two rows reported with evidence
//! instead); and every memcpy/memset size from 64 B to 16 KiB, with the rows outside 10%
//! only where docs/cost-model.md says; and that the D1's aligned memcpy read its source at
//! `mem + MAX_MEM/2`, not 9 bytes past it as the kept memcpy.c does. Prints the tables (docs/cost-model.md carries them).

use kgen_calibration::d1;
use kgen_harness::oracle;

/// Rows the model misses by more than 10% and that are reported, not asserted. Each comes
/// with evidence the test recomputes from the measurements and the model (docs/cost-model.md,
/// the D1 section): if the evidence stops holding, or the row comes within 10%, the test
/// fails and the row leaves this list.
const UNEXPLAINED: &[(&str, &str, &str, usize, &[Evidence])] = &[
    ("memcpy", "memcpy aligned", "rvv_m4", 16295, &[Evidence::LmulConflict { other: "rvv_m2" }, Evidence::SameAccesses { other: "rvv_align_dest_m4" }]),
    ("memset", "memset aligned", "rvv_m4", 16295, &[Evidence::LonePoint]),
];

/// Why a row is not asserted.
#[derive(Clone, Copy, Debug)]
enum Evidence {
    /// The measurement stands more than 15% above both neighbouring sizes of its series,
    /// and the model is within 10% of both neighbours; and over every series of the bench
    /// such points are a property of the D1's sizes of 8–32 KiB (at least ten, and at least
    /// ten times as frequent as in its rows of 1–8 KiB), where some cache sets hold two or
    /// more lines of the buffer: the row is one of many the measurement shows there.
    LonePoint,
    /// Within 10% of this row needs the copy's L1-miss cycles (above the series' 7748-byte
    /// plateau) to rise by more than within 10% of `other` (same series and size) allows
    /// them to, while the model's miss cycles are the same at both LMULs (within 5%): no
    /// miss cost that does not depend on LMUL passes both.
    LmulConflict { other: &'static str },
    /// `other` (a loop of the same file, d1::OTHER_LOOPS) makes the same memory accesses
    /// in the same order: the model is within 2% of the D1 for both at the series' row
    /// nearest 4 KiB (L1-resident) and gives them figures within 2% of each other at this
    /// size, where the D1's two figures differ by more than 1.1/0.9: no figure is within
    /// 10% of both.
    SameAccesses { other: &'static str },
}

fn d1_at<'a>(rows: &'a [d1::D1Row], bench: &str, series: &str, imp: &str) -> Vec<&'a d1::D1Row> {
    let mut v: Vec<&d1::D1Row> = rows.iter().filter(|r| r.bench == bench && r.series == series && r.imp == imp).collect();
    v.sort_by_key(|r| r.bytes);
    v
}

/// The model's figure for a D1 row, run now.
fn run_model(p: &d1::Programs) -> impl Fn(&d1::D1Row) -> f64 + '_ {
    |r| p.model_of(&r.bench, &r.series, &r.imp, r.bytes).expect("the model runs the row")
}

/// Whether the D1 row (`bench`, `series`, `imp`, `n`) stands more than `factor` times above
/// both neighbouring sizes of its series while the model (`model` of a row) is within 10% of
/// them: Ok with a description, or Err saying which part fails.
fn lone_point(model: &dyn Fn(&d1::D1Row) -> f64, rows: &[d1::D1Row], (bench, series, imp, n): (&str, &str, &str, usize), factor: f64) -> Result<String, String> {
    let s = d1_at(rows, bench, series, imp);
    let k = s.iter().position(|r| r.bytes == n).filter(|&k| k > 0 && k + 1 < s.len()).ok_or(format!("{bench} {series} {imp} {n}: no row on both sides"))?;
    let (lo, hi) = (s[k - 1], s[k + 1]);
    let me = s[k].cycles_per_byte;
    if !stands_alone([lo, s[k], hi], factor) {
        return Err(format!("{bench} {series} {imp} {n}: {me:.3} c/B is not a lone point ({} B {:.3}, {} B {:.3})", lo.bytes, lo.cycles_per_byte, hi.bytes, hi.cycles_per_byte));
    }
    let mut at = Vec::new();
    for r in [lo, hi] {
        let m = model(r);
        if (m / r.cycles_per_byte - 1.0).abs() > 0.10 {
            return Err(format!("{bench} {series} {imp}: the model misses the neighbour at {} B too ({m:.3} against {:.3})", r.bytes, r.cycles_per_byte));
        }
        at.push(format!("{:.3} at {} B (model {m:.3})", r.cycles_per_byte, r.bytes));
    }
    Ok(format!("D1 {me:.3} c/B against {} in the same series", at.join(" and ")))
}

/// Whether the middle of three neighbouring D1 rows of a series stands more than `factor`
/// times above both others.
fn stands_alone([lo, me, hi]: [&d1::D1Row; 3], factor: f64) -> bool {
    me.cycles_per_byte > factor * lo.cycles_per_byte && me.cycles_per_byte > factor * hi.cycles_per_byte
}

/// The D1 rows of `bench` (every series and implementation) from `lo` to below `hi` bytes
/// that have a row on both sides in their series: those that stand more than `factor`
/// times above both neighbours, and how many rows there are.
fn lone_points_in<'a>(rows: &'a [d1::D1Row], bench: &str, (lo, hi): (usize, usize), factor: f64) -> (Vec<&'a d1::D1Row>, usize) {
    let mut keys: Vec<(&str, &str)> = rows.iter().filter(|r| r.bench == bench).map(|r| (r.series.as_str(), r.imp.as_str())).collect();
    keys.sort_unstable();
    keys.dedup();
    let (mut lone, mut all) = (Vec::new(), 0);
    for (series, imp) in keys {
        let s = d1_at(rows, bench, series, imp);
        for w in s.windows(3).filter(|w| (lo..hi).contains(&w[1].bytes)) {
            all += 1;
            if stands_alone([w[0], w[1], w[2]], factor) {
                lone.push(w[1]);
            }
        }
    }
    lone.sort_by_key(|r| r.bytes);
    (lone, all)
}

/// Checks one piece of evidence for an UNEXPLAINED row; a description of what was found.
fn check_evidence(p: &d1::Programs, rows: &[d1::D1Row], cases: &[d1::Case], (bench, series, imp, n): (&str, &str, &str, usize), ev: Evidence) -> String {
    let model = |imp: &str, bytes: usize| p.model_of(bench, series, imp, bytes).expect("the model runs the row");
    let case = |imp: &str| cases.iter().find(|c| (c.bench.as_str(), c.series.as_str(), c.imp.as_str(), c.bytes) == (bench, series, imp, n)).expect("a compared case");
    match ev {
        Evidence::LonePoint => {
            let here = lone_point(&run_model(p), rows, (bench, series, imp, n), 1.15).unwrap_or_else(|e| panic!("{e}"));
            assert!((8192..32768).contains(&n), "{bench} {series} {imp} {n}: the lone-point rates are of 8-32 KiB");
            let (lone, all) = lone_points_in(rows, bench, (8192, 32768), 1.15);
            let (lone_small, all_small) = lone_points_in(rows, bench, (1024, 8192), 1.15);
            let (n_lone, n_small) = (lone.len(), lone_small.len());
            let (rate, rate_small) = (n_lone as f64 / all as f64, n_small as f64 / all_small as f64);
            assert!(n_lone >= 10 && rate >= 10.0 * rate_small, "{bench}: the D1 has {n_lone} lone points in {all} rows of 8-32 KiB and {n_small} in {all_small} of 1-8 KiB: no longer a property of the larger sizes");
            let at: Vec<String> = lone.iter().map(|r| format!("{} {} {}", r.bytes, r.series, r.imp)).collect();
            format!("{here}; over all {bench} series the D1 has {n_lone} such points in {all} rows of 8-32 KiB ({}) and {n_small} in {all_small} of 1-8 KiB", at.join(", "))
        }
        Evidence::LmulConflict { other } => {
            let nf = n as f64;
            let plateau = d1_at(rows, bench, series, imp).iter().rfind(|r| r.bytes <= 8192).map(|r| r.bytes).expect("a row below 8 KiB");
            let extra = |imp: &str, c: &d1::Case| (c.model - model(imp, plateau)) * nf;
            let (a, b) = (case(imp), case(other));
            let (ea, eb) = (extra(imp, a), extra(other, b));
            let need = (0.9 * a.d1 - a.model) * nf;
            let allow = (1.1 * b.d1 - b.model) * nf;
            assert!(((ea - eb) / eb).abs() < 0.05, "{bench} {series} {n}: the model's miss cycles now differ by LMUL ({imp} {ea:.0}, {other} {eb:.0})");
            assert!(need > allow, "{bench} {series} {n}: within 10% of {imp} needs {need:.0} more cycles, {other} allows {allow:.0}: no longer a conflict");
            format!("within 10% needs {need:.0} more miss cycles at {imp}, while {other} allows at most {allow:.0}; the model's miss cycles are {ea:.0} and {eb:.0}")
        }
        Evidence::SameAccesses { other } => {
            let d1_of = |imp: &str, bytes: usize| d1::nearest(rows, bench, series, imp, bytes).filter(|r| r.bytes == bytes).unwrap_or_else(|| panic!("no D1 row {series} {imp} {bytes}")).cycles_per_byte;
            let small = d1::nearest(rows, bench, series, imp, 4096).expect("a row near 4 KiB").bytes;
            for x in [imp, other] {
                let (m, d) = (model(x, small), d1_of(x, small));
                assert!((m / d - 1.0).abs() <= 0.02, "{series} {x} {small}: the model is {:.3} of the D1 where the data is in the L1", m / d);
            }
            let (ma, mb) = (case(imp).model, model(other, n));
            let (da, db) = (d1_of(imp, n), d1_of(other, n));
            assert!((ma / mb - 1.0).abs() <= 0.02, "{series} {n}: the model now tells {imp} and {other} apart ({ma:.3} and {mb:.3} c/B)");
            assert!(da / db > 1.1 / 0.9, "{series} {n}: the D1's {imp} and {other} are {:.3} apart: a figure within 10% of both exists", da / db);
            format!("{other}, the same accesses (the model within 2% of the D1 for both at {small} B), measured {db:.3} c/B at this size against {da:.3}; the model gives them {mb:.3} and {ma:.3}")
        }
    }
}

/// The D1 rows and the calibration programs (assembled in scratch directory `name`), or
/// None when an oracle is missing (a failure under CI=true).
fn setup(name: &str) -> Option<(Vec<d1::D1Row>, d1::Programs)> {
    let gcc = oracle::gcc()?;
    let dir = d1::calibration_dir();
    if !dir.join("d1-measured.tsv").exists() {
        return oracle::missing(&format!("the D1 calibration data ({})", dir.display()));
    }
    let rows = d1::measured(&dir).expect("d1-measured.tsv");
    let p = d1::programs(&gcc, &dir, &oracle::scratch(name)).expect("the calibration programs assemble");
    Some((rows, p))
}

#[test]
fn model_reproduces_the_d1_measurements() {
    let Some((rows, p)) = setup("d1") else { return };
    let cases = d1::cases(&p, &rows, true).expect("the calibration runs");
    println!("{}", d1::table(&cases));
    println!("harness cycles: {} assumed, {:.1} implied by the 64-byte memcpy/memset rows", d1::HARNESS_CYCLES, d1::harness_implied(&cases));
    let compared: Vec<&d1::Case> = cases.iter().filter(|c| !c.bench.contains("-O3")).collect();
    let worst = compared.iter().map(|c| (c.ratio() - 1.0).abs()).fold(0.0, f64::max);
    println!("{} cases compared (gcc -O3 rows reported only), worst |model/D1 - 1| = {:.1}%", compared.len(), 100.0 * worst);
    let listed = |c: &d1::Case| UNEXPLAINED.iter().find(|u| (u.0, u.1, u.2, u.3) == (c.bench.as_str(), c.series.as_str(), c.imp.as_str(), c.bytes));
    for c in &compared {
        if let Some(u) = listed(c) {
            let why: Vec<String> = u.4.iter().map(|&ev| check_evidence(&p, &rows, &cases, (u.0, u.1, u.2, u.3), ev)).collect();
            let why = why.join("; ");
            println!("not asserted: {} {} {} {}: model/D1 {:.3} ({why})", c.bench, c.series, c.imp, c.bytes, c.ratio());
            assert!((c.ratio() - 1.0).abs() > 0.10, "{} {} {} {} is within 10% now: take it off UNEXPLAINED", c.bench, c.series, c.imp, c.bytes);
        }
    }
    assert_eq!(UNEXPLAINED.iter().filter(|u| !compared.iter().any(|c| (u.0, u.1, u.2, u.3) == (c.bench.as_str(), c.series.as_str(), c.imp.as_str(), c.bytes))).count(), 0, "an UNEXPLAINED row is not among the cases");
    let off: Vec<String> = compared.iter().filter(|c| (c.ratio() - 1.0).abs() > 0.10 && listed(c).is_none()).map(|c| format!("{} {} {} {}: {:.3}", c.bench, c.series, c.imp, c.bytes, c.ratio())).collect();
    assert!(off.is_empty(), "model off by more than 10%:\n{}", off.join("\n"));
}

/// Most rows of the 1400-row sweep (every memcpy/memset size the D1 measured from 64 B to
/// 16 KiB, not only the five compared row by row above) the model may miss by more than
/// 10%: as many as when the sweep was added, so a new miss fails and is looked at. Each miss
/// must also be of a kind docs/cost-model.md ("Every size") describes: a memcpy of 8 KiB or
/// more at LMUL 2 to 8, or a lone point of the measurement.
const SWEEP_MISSES: usize = 27;

/// The kind of a row the model misses by more than 10%, of those docs/cost-model.md
/// describes ("Every size"), or None.
fn miss_kind(model: &dyn Fn(&d1::D1Row) -> f64, rows: &[d1::D1Row], c: &d1::Case) -> Option<&'static str> {
    if lone_point(model, rows, (&c.bench, &c.series, &c.imp, c.bytes), 1.10).is_ok() {
        Some("lone point")
    } else if c.bench == "memcpy" && c.bytes >= 8192 && ["rvv_m2", "rvv_m4", "rvv_m8"].contains(&c.imp.as_str()) {
        Some("memcpy 8-16 KiB")
    } else {
        None
    }
}

/// Negative control of [`miss_kind`]: D1 rows given a model figure half theirs are
/// described only where the docs say; the lone point's neighbour is no lone point.
#[test]
fn sweep_classifier_refuses_undescribed_misses() {
    let Some((rows, p)) = setup("d1-sweep-control") else { return };
    let model = run_model(&p);
    let case = |bench: &str, series: &str, imp: &str, bytes: usize| {
        let r = rows.iter().find(|r| (r.bench.as_str(), r.series.as_str(), r.imp.as_str(), r.bytes) == (bench, series, imp, bytes)).expect("a D1 row");
        d1::Case { bench: bench.into(), series: series.into(), imp: imp.into(), bytes, d1: r.cycles_per_byte, model: 0.5 * r.cycles_per_byte }
    };
    assert_eq!(miss_kind(&model, &rows, &case("memset", "memset aligned", "rvv_m2", 1020)), None);
    assert_eq!(miss_kind(&model, &rows, &case("memcpy", "memcpy", "scalar", 10434)), None);
    assert_eq!(miss_kind(&model, &rows, &case("memcpy", "memcpy", "rvv_m4", 3961)), None);
    assert_eq!(miss_kind(&model, &rows, &case("memset", "memset aligned", "rvv_m4", 15129)), None);
    assert_eq!(miss_kind(&model, &rows, &case("memcpy", "memcpy", "rvv_m4", 10434)), Some("memcpy 8-16 KiB"));
    assert_eq!(miss_kind(&model, &rows, &case("memset", "memset aligned", "rvv_m4", 16295)), Some("lone point"));
}

/// Negative control of [`lone_points_in`] on made-up rows: a smooth series has none, a
/// point 20% above both neighbours counts once, a rise that stays is no lone point, and
/// rows outside the range or at a series' ends are not counted.
#[test]
fn lone_points_are_counted_only_where_they_stand_alone() {
    let row = |imp: &str, bytes: usize, cycles_per_byte: f64| d1::D1Row { bench: "memset".into(), series: "memset".into(), imp: imp.into(), bytes, cycles_per_byte };
    let mut rows: Vec<d1::D1Row> = (0..8).map(|k| row("smooth", 8192 + 1000 * k, 1.0 + 0.01 * k as f64)).collect();
    rows.extend([(8192, 1.0), (9192, 1.2), (10192, 1.0), (11192, 1.3), (12192, 1.3), (13192, 1.0)].map(|(b, c)| row("spiky", b, c)));
    let found = |range, bench| {
        let (lone, all) = lone_points_in(&rows, bench, range, 1.15);
        (lone.iter().map(|r| (r.imp.clone(), r.bytes)).collect::<Vec<_>>(), all)
    };
    assert_eq!(found((8192, 32768), "memset"), (vec![("spiky".to_string(), 9192)], 6 + 4));
    assert_eq!(found((10000, 32768), "memset"), (vec![], 5 + 3));
    assert_eq!(found((8192, 32768), "memcpy"), (vec![], 0));
}

#[test]
fn model_follows_every_d1_copy_size() {
    let Some((rows, p)) = setup("d1-sweep") else { return };
    let cases = d1::sweep(&p, &rows).expect("the sweep runs");
    assert_eq!(cases.len(), 1400, "the sweep's rows");
    println!("| bench | series | impl | rows | within 10% | worst model/D1 |\n|---|---|---|---:|---:|---:|");
    let mut keys: Vec<(&str, &str, &str)> = cases.iter().map(|c| (c.bench.as_str(), c.series.as_str(), c.imp.as_str())).collect();
    keys.dedup();
    // A neighbour's figure from the sweep where it has the row (the 16 KiB rows' upper
    // neighbours it has not).
    let key = |r: &d1::D1Row| (r.bench.clone(), r.series.clone(), r.imp.clone(), r.bytes);
    let swept: std::collections::HashMap<_, f64> = cases.iter().map(|c| ((c.bench.clone(), c.series.clone(), c.imp.clone(), c.bytes), c.model)).collect();
    let run = run_model(&p);
    let model = |r: &d1::D1Row| swept.get(&key(r)).copied().unwrap_or_else(|| run(r));
    let mut off = Vec::new();
    for k in &keys {
        let s: Vec<&d1::Case> = cases.iter().filter(|c| (c.bench.as_str(), c.series.as_str(), c.imp.as_str()) == *k).collect();
        let within = s.iter().filter(|c| (c.ratio() - 1.0).abs() <= 0.10).count();
        let worst = s.iter().map(|c| c.ratio()).max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs())).unwrap_or(1.0);
        println!("| {} | {} | {} | {} | {} | {:.3} |", k.0, k.1, k.2, s.len(), within, worst);
        for c in s.iter().filter(|c| (c.ratio() - 1.0).abs() > 0.10) {
            off.push((*c, miss_kind(&model, &rows, c)));
        }
    }
    println!("\nrows off by more than 10%:");
    for (c, kind) in &off {
        println!("  {} {} {} {} B: D1 {:.3}, model {:.3} ({:.3}; {})", c.bench, c.series, c.imp, c.bytes, c.d1, c.model, c.ratio(), kind.unwrap_or("NOT DESCRIBED"));
    }
    println!("{} of {} rows within 10%", cases.len() - off.len(), cases.len());
    // The copies of 7-16 KiB in cycles per call (docs/cost-model.md, "Every size").
    println!("\nmemcpy, cycles per call: D1 (D1 - model)\n| series | bytes | {} |\n|---|---:|{}", d1::COPY_IMPLS.join(" | "), "---:|".repeat(d1::COPY_IMPLS.len()));
    for series in ["memcpy aligned", "memcpy"] {
        let mut sizes: Vec<usize> = cases.iter().filter(|c| c.series == series && c.bytes >= 7000).map(|c| c.bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for n in sizes {
            let cells: Vec<String> = d1::COPY_IMPLS
                .iter()
                .map(|imp| match cases.iter().find(|c| c.series == series && c.imp == *imp && c.bytes == n) {
                    Some(c) => format!("{:.0} ({:+.0})", c.d1 * n as f64, (c.d1 - c.model) * n as f64),
                    None => "-".into(),
                })
                .collect();
            println!("| {series} | {n} | {} |", cells.join(" | "));
        }
    }
    let undescribed: Vec<String> = off.iter().filter(|(_, k)| k.is_none()).map(|(c, _)| format!("{} {} {} {}", c.bench, c.series, c.imp, c.bytes)).collect();
    assert!(undescribed.is_empty(), "rows off by more than 10% of no kind docs/cost-model.md describes: {}", undescribed.join(", "));
    assert!(off.len() <= SWEEP_MISSES, "{} rows off by more than 10% (at most {SWEEP_MISSES})", off.len());
}

/// Above 16 KiB (outside the comparison the issue asks for, and so not asserted row by
/// row): the D1's memcpy rows of 16-32 KiB against the model without and with the L1's
/// store-stream detector (`aq_lsu_amr.v`; Allwinner's U-Boot turns it on for the D1). With
/// it the copy's destination stops evicting its source once a store stream is seen; without
/// it the model is two to four times slower than the D1 there. Prints both, and the five
/// sizes of the row-by-row comparison with the detector on (docs/cost-model.md, "The store
/// stream"); fails if the detector stops fitting the D1 beyond 16 KiB better than its
/// absence, or fits fewer than 70% of the rows.
#[test]
fn the_d1_copies_beyond_16k_with_its_store_stream_detector_on() {
    let Some((rows, p)) = setup("d1-amr") else { return };
    let big = |amr| d1::sweep_range(&p, &rows, &["memcpy"], 16385..=32767, d1::Setup { amr, ..d1::Setup::CALIBRATED }).expect("the model runs the rows");
    let (plain, amr) = (big(false), big(true));
    println!("| series | impl | bytes | D1 c/B | model c/B | model/D1 | with the detector c/B | model/D1 |\n|---|---|---:|---:|---:|---:|---:|---:|");
    let within = |c: &d1::Case| (c.ratio() - 1.0).abs() <= 0.10;
    for (a, b) in plain.iter().zip(&amr) {
        println!("| {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |", a.series, a.imp, a.bytes, a.d1, a.model, a.ratio(), b.model, b.ratio());
    }
    let (n_plain, n_amr) = (plain.iter().filter(|c| within(c)).count(), amr.iter().filter(|c| within(c)).count());
    println!("16-32 KiB memcpy rows within 10%: {n_plain} of {} without the detector, {n_amr} with it", amr.len());
    assert!(n_amr > n_plain, "the detector no longer fits the D1 beyond 16 KiB better ({n_amr} against {n_plain})");
    assert!(10 * n_amr >= 7 * amr.len(), "with the detector only {n_amr} of {} rows within 10%", amr.len());
    // The sweep's rows (64 B-16 KiB), and among them the row-by-row comparison's five
    // sizes, with the detector on.
    let swept = d1::sweep_range(&p, &rows, &["memcpy", "memset"], d1::COPY_SIZES[0]..=d1::COPY_SIZES[d1::COPY_SIZES.len() - 1], d1::Setup { amr: true, ..d1::Setup::CALIBRATED }).expect("the model runs the rows");
    let five_size = |c: &d1::Case| d1::COPY_SIZES.iter().any(|&n| d1::nearest(&rows, &c.bench, &c.series, &c.imp, n).map(|r| r.bytes) == Some(c.bytes));
    let five: Vec<&d1::Case> = swept.iter().filter(|c| five_size(c)).collect();
    let off: Vec<String> = five.iter().filter(|c| !within(c)).map(|c| format!("  {} {} {} {}: D1 {:.3}, with the detector {:.3} ({:.3})", c.bench, c.series, c.imp, c.bytes, c.d1, c.model, c.ratio())).collect();
    println!("with the detector on, 64 B-16 KiB: {} of {} sweep rows within 10%", swept.iter().filter(|c| within(c)).count(), swept.len());
    println!("the five sizes with the detector on: {} of {} memcpy/memset rows within 10%; the others:\n{}", five.len() - off.len(), five.len(), off.join("\n"));
}

/// Rows of the other rvv-bench loops (64 B to 8 KiB) the model may miss by more than 10%:
/// as many as when the test was added, so that a new miss is looked at.
const OTHER_LOOP_MISSES: usize = 36;

/// The other loops of memcpy.S and memset.S the D1 measured (`d1::OTHER_LOOPS`, at 64 B to
/// 8 KiB, where the data stays in the L1): evidence for the vsetvl row (the loops whose
/// vsetvli sits before the branch run a cycle an iteration faster than `rvv`'s, whose
/// vsetvli is followed by the load) and the divider's (`remu` before the loop). Prints the
/// table; fails if more than one row of the memcpy loops that differ from `rvv` only in
/// where the vsetvli sits is outside 10% (one is when the test was added), or if more than
/// OTHER_LOOP_MISSES rows are.
#[test]
fn the_other_d1_loops_follow_the_vsetvl_and_divider_rows() {
    let Some((rows, p)) = setup("d1-other") else { return };
    let cases = d1::other_loops(&p, &rows, 64..=8191).expect("the other loops run");
    let within = |c: &d1::Case| (c.ratio() - 1.0).abs() <= 0.10;
    let family = |c: &d1::Case| d1::loop_of(&c.imp).map(|x| x.0.to_string()).unwrap_or_default();
    println!("| bench | series | loop (m1-m8) | rows | within 10% | worst model/D1 |\n|---|---|---|---:|---:|---:|");
    let mut keys: Vec<(String, String, String)> = cases.iter().map(|c| (c.bench.clone(), c.series.clone(), family(c))).collect();
    keys.dedup();
    for k in &keys {
        let s: Vec<&d1::Case> = cases.iter().filter(|c| (&c.bench, &c.series, &family(c)) == (&k.0, &k.1, &k.2)).collect();
        let worst = s.iter().map(|c| c.ratio()).fold(1.0, |w: f64, r| if (r - 1.0).abs() > (w - 1.0).abs() { r } else { w });
        println!("| {} | {} | {} | {} | {} | {:.3} |", k.0, k.1, k.2, s.len(), s.iter().filter(|c| within(c)).count(), worst);
    }
    let off: Vec<&d1::Case> = cases.iter().filter(|c| !within(c)).collect();
    println!("{} of {} rows within 10%; the others:", cases.len() - off.len(), cases.len());
    for c in &off {
        println!("  {} {} {} {} B: D1 {:.0}, model {:.0} cycles ({:.3})", c.bench, c.series, c.imp, c.bytes, c.d1 * c.bytes as f64, c.model * c.bytes as f64, c.ratio());
    }
    let rotated = |c: &d1::Case| c.bench == "memcpy" && ["rvv_align_dest", "rvv_align_src"].contains(&family(c).as_str());
    let moved: Vec<String> = off.iter().filter(|c| rotated(c)).map(|c| format!("{} {} {}", c.series, c.imp, c.bytes)).collect();
    let n = cases.iter().filter(|c| rotated(c)).count();
    println!("memcpy with the vsetvli before the branch (rvv_align_dest, rvv_align_src): {} of {n} within 10%", n - moved.len());
    assert!(moved.len() <= 1, "loops with the vsetvli before the branch off by more than 10%: {}", moved.join(", "));
    assert!(off.len() <= OTHER_LOOP_MISSES, "{} rows off by more than 10% (at most {OTHER_LOOP_MISSES})", off.len());
}

/// rvv-bench's kept memcpy.c puts the source 9 bytes past `mem + MAX_MEM/2 + sOff`;
/// `kgen_calibration::d1` does not (`d1::Setup::KEPT_MEMCPY_C` says why). The aligned memcpy rows where the data
/// stays in the L1 (64 B to 8 KiB, rvv m1-m8 and scalar) decide it: an unaligned source
/// costs the vector loads, and the model charges it. Prints, per implementation, how many
/// rows are within 2% and 5% and the mean |model/D1 - 1| with the source aligned and 9
/// bytes further (the random-offset series beside, where 9 more bytes of a random offset
/// change little); fails unless the aligned source fits the aligned series better on both
/// counts and on the mean, or if the 9 bytes move the random-offset series' count within
/// 2% by more than 3 rows.
#[test]
fn the_d1_copied_from_an_aligned_source() {
    fn pick<'a>(v: &'a [d1::Case], series: &str, imp: Option<&str>) -> Vec<&'a d1::Case> {
        v.iter().filter(|c| c.series == series && imp.is_none_or(|i| c.imp == i)).collect()
    }
    let Some((rows, p)) = setup("d1-source") else { return };
    let run = |h| d1::sweep_range(&p, &rows, &["memcpy"], 64..=8191, h).expect("the model runs the rows");
    let (aligned, kept) = (run(d1::Setup::CALIBRATED), run(d1::Setup::KEPT_MEMCPY_C));
    let err = |c: &d1::Case| (c.ratio() - 1.0).abs();
    let score = |s: &[&d1::Case]| (s.iter().filter(|c| err(c) <= 0.02).count(), s.iter().filter(|c| err(c) <= 0.05).count(), s.iter().map(|c| err(c)).sum::<f64>() / s.len().max(1) as f64);
    println!("| series | impl | rows | within 2%: source aligned, +9 | within 5%: aligned, +9 | mean error: aligned, +9 |\n|---|---|---:|---:|---:|---:|");
    let mut totals = Vec::new();
    for series in ["memcpy aligned", "memcpy"] {
        for imp in d1::COPY_IMPLS.iter().map(|&i| Some(i)).chain([None]) {
            let (a, k) = (pick(&aligned, series, imp), pick(&kept, series, imp));
            let (sa, sk) = (score(&a), score(&k));
            println!("| {series} | {} | {} | {}, {} | {}, {} | {:.3}, {:.3} |", imp.unwrap_or("all"), a.len(), sa.0, sk.0, sa.1, sk.1, sa.2, sk.2);
            if imp.is_none() {
                totals.push((series, sa, sk));
            }
        }
    }
    let total = |series: &str| totals.iter().find(|t| t.0 == series).map(|t| (t.1, t.2)).expect("the series' totals");
    let (a, k) = total("memcpy aligned");
    assert!(a.0 > k.0 && a.1 > k.1 && a.2 < k.2, "the aligned series no longer says the D1 copied from an aligned source: within 2% {} against {}, within 5% {} against {}, mean error {:.3} against {:.3}", a.0, k.0, a.1, k.1, a.2, k.2);
    let (a, k) = total("memcpy");
    assert!(a.0.abs_diff(k.0) <= 3, "9 more bytes of a random offset move the random-offset series: within 2% {} against {}", a.0, k.0);
    // A skew the harness's source data does not hold is refused, not run off its end.
    let too_far = d1::sweep_range(&p, &rows, &["memcpy"], 64..=64, d1::Setup { src_skew: d1::MAX_SRC_SKEW + 1, ..d1::Setup::CALIBRATED }).map(|_| ()).unwrap_err();
    assert!(too_far.contains("source skew of 513 bytes"), "{too_far}");
}
