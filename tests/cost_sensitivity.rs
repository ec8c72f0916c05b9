//! The vector figures' sensitivity to each vector row of the timing table (issue 19, item
//! 4): ChaCha20 `c906` and GHASH `c906` at 16 KiB on the model as it is, and with one row's
//! vector-unit time and latency doubled (`C906::slow`). Asserts the calibrated figures meet
//! the targets (ChaCha20 c906 at most 9.5 c/B, GHASH c906 at most 15 c/B) and that
//! doubling the rows each kernel is built from moves it (a model that ignored `slow` would
//! fail). docs/cost-model.md carries the table:
//! `cargo test --release --test cost_sensitivity -- --nocapture`.

use kgen_dsl::timing::Source;
use kgen_dsl::Abi;
use kgen_sim::Env;

fn cpb(kernel: &str, variant: &str, slow: Option<Source>) -> f64 {
    let k = kgen_kernels::kernel(kernel).expect("kernel");
    let v = k.variant(variant).expect("variant");
    let m = v.build(Abi::Psabi).expect("builds");
    let obj = m.object().expect("object");
    let mut env = Env::new(&obj, &m.target).expect("links").with_cost_model();
    env.m.max_steps = 1 << 34;
    if let Some(c) = env.m.cost.as_mut() {
        c.slow = slow;
    }
    let rows = kgen_harness::bench::drive(k, k.bench(Abi::Psabi).expect("a driver"), variant, &mut env, &[16384]).expect("runs");
    rows[0].cpb()
}

#[test]
fn vector_rows_sensitivity() {
    let base = (cpb("chacha20", "c906", None), cpb("ghash", "c906", None));
    println!("| row twice as slow | ChaCha20 c906, 16 KiB | GHASH c906, 16 KiB |\n|---|---:|---:|");
    println!("| (none: the calibrated model) | {:.2} | {:.2} |", base.0, base.1);
    let mut moved = (false, false);
    for s in Source::VECTOR {
        let (c, g) = (cpb("chacha20", "c906", Some(s)), cpb("ghash", "c906", Some(s)));
        moved.0 |= c > base.0 * 1.01;
        moved.1 |= g > base.1 * 1.01;
        println!("| {} | {:.2} ({:+.0}%) | {:.2} ({:+.0}%) |", s.name(), c, 100.0 * (c / base.0 - 1.0), g, 100.0 * (g / base.1 - 1.0));
    }
    assert!(base.0 <= 9.5, "ChaCha20 c906 at 16 KiB: {:.2} c/B, target 9.5", base.0);
    assert!(base.1 <= 15.0, "GHASH c906 at 16 KiB: {:.2} c/B, target 15", base.1);
    assert!(moved.0 && moved.1, "doubling a vector row moves neither kernel: the sensitivity study does not reach the model");
}
