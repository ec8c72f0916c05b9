//! Compile-time errors of `kasm!` point at the offending token.
#[test]
fn bad_inputs_are_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
