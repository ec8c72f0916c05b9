//! The C906 model against the physical D1 measurements of ../shared/calibration/
//! (`kgen::d1`): memcpy and memset (rvv m1/m2/m4/m8 and scalar, aligned and random
//! offsets, 64 B to 16 KiB), rvv-chacha-poly's vector ChaCha20 and BoringSSL's C ChaCha20
//! and Poly1305 at 1 KiB and 16 KiB, each within 10%. Prints the model/measured table
//! (docs/cost-model.md carries it).

use kgen::d1;
use kgen::oracle;

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
    let off: Vec<String> = compared.iter().filter(|c| (c.ratio() - 1.0).abs() > 0.10).map(|c| format!("{} {} {} {}: {:.3}", c.bench, c.series, c.imp, c.bytes, c.ratio())).collect();
    assert!(off.is_empty(), "model off by more than 10%:\n{}", off.join("\n"));
}
