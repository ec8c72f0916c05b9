//! A missing oracle fails a test under `CI=true` and only skips it otherwise: the test
//! runs itself as a child with the private toolchain folder pointed at nothing.

use kgen_harness::oracle;

#[test]
fn missing_oracle_fails_under_ci() {
    if std::env::var_os("KGEN_ORACLE_PROBE").is_some() {
        // The child: T-Head's QEMU lives in the (now empty) toolchain folder.
        assert!(oracle::xuantie_qemu().is_none(), "found a QEMU in a folder that does not exist");
        return;
    }
    let child = |ci: &str| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["missing_oracle_fails_under_ci", "--exact", "--nocapture", "--test-threads=1"])
            .env("KGEN_ORACLE_PROBE", "1")
            .env("KGEN_TOOLCHAIN", "/nonexistent/kgen-toolchain")
            .env("CI", ci)
            .output()
            .unwrap()
    };
    let o = child("true");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!o.status.success() && text.contains("oracle missing under CI=true: T-Head qemu-riscv64"), "under CI=true: {text}");
    let o = child("false");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && text.contains("SKIPPED: T-Head qemu-riscv64"), "outside CI: {text}");
}
