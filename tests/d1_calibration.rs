//! The C906 model against the physical D1 measurements of ../shared/calibration/
//! (`kgen::d1`): memcpy and memset (rvv m1/m2/m4/m8 and scalar, aligned and random
//! offsets, 64 B to 16 KiB), rvv-chacha-poly's vector ChaCha20 and BoringSSL's C ChaCha20
//! and Poly1305 at 1 KiB and 16 KiB, each within 10%. Prints the model/measured table
//! (docs/cost-model.md carries it).

use kgen::d1;
use kgen::oracle;

/// Rows the model misses by more than 10% and that are reported, not asserted, each with the
/// evidence that the measurement, not a timing rule, is what stands out (docs/cost-model.md,
/// "D1 rows the model misses"). The test fails if one of them comes within 10%: then it
/// leaves this list.
const UNEXPLAINED: &[(&str, &str, &str, usize, &str)] = &[
    (
        "memcpy",
        "memcpy aligned",
        "rvv_m4",
        16295,
        "within 10% needs >= 1227 extra cycles for m4 where the m2 row allows <= 1180, and m2's point is 20% below its neighbours; one miss cost for every LMUL cannot meet both",
    ),
    ("memset", "memset aligned", "rvv_m4", 16295, "0.152 c/B between 0.127 at 15129 B and 0.127 at 17551 B in the same series: a lone point"),
];

#[test]
fn model_reproduces_the_d1_measurements() {
    let Some(gcc) = oracle::gcc() else { return };
    let dir = d1::calibration_dir();
    if !dir.join("d1-measured.tsv").exists() {
        oracle::missing::<()>(&format!("the D1 calibration data ({})", dir.display()));
        return;
    }
    let rows = d1::measured(&dir).expect("d1-measured.tsv");
    let scratch = oracle::scratch("d1");
    let p = d1::programs(&gcc, &dir, &scratch).expect("the calibration programs assemble");
    let cases = d1::cases(&p, &rows, true).expect("the calibration runs");
    println!("{}", d1::table(&cases));
    println!("harness cycles: {} assumed, {:.1} implied by the 64-byte memcpy/memset rows", d1::HARNESS_CYCLES, d1::harness_implied(&cases));
    let compared: Vec<&d1::Case> = cases.iter().filter(|c| !c.bench.contains("-O3")).collect();
    let worst = compared.iter().map(|c| (c.ratio() - 1.0).abs()).fold(0.0, f64::max);
    println!("{} cases compared (gcc -O3 rows reported only), worst |model/D1 - 1| = {:.1}%", compared.len(), 100.0 * worst);
    let listed = |c: &d1::Case| UNEXPLAINED.iter().find(|u| (u.0, u.1, u.2, u.3) == (c.bench.as_str(), c.series.as_str(), c.imp.as_str(), c.bytes));
    for c in &compared {
        if let Some(u) = listed(c) {
            println!("not asserted: {} {} {} {}: model/D1 {:.3} ({})", c.bench, c.series, c.imp, c.bytes, c.ratio(), u.4);
            assert!((c.ratio() - 1.0).abs() > 0.10, "{} {} {} {} is within 10% now: take it off UNEXPLAINED", c.bench, c.series, c.imp, c.bytes);
        }
    }
    assert_eq!(UNEXPLAINED.iter().filter(|u| !compared.iter().any(|c| (u.0, u.1, u.2, u.3) == (c.bench.as_str(), c.series.as_str(), c.imp.as_str(), c.bytes))).count(), 0, "an UNEXPLAINED row is not among the cases");
    let off: Vec<String> = compared.iter().filter(|c| (c.ratio() - 1.0).abs() > 0.10 && listed(c).is_none()).map(|c| format!("{} {} {} {}: {:.3}", c.bench, c.series, c.imp, c.bytes, c.ratio())).collect();
    assert!(off.is_empty(), "model off by more than 10%:\n{}", off.join("\n"));
}
