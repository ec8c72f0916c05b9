//! `kgen-siphash`: every command of the `kgen` tool (emit, all, check, bench, jit-run,
//! jit-bench, goldens, ...) for this crate's kernel. `cargo run -- list`.

// ANCHOR: main
fn main() -> std::process::ExitCode {
    kgen::cli::run(&[&kgen_siphash::KERNEL], env!("CARGO_MANIFEST_DIR"))
}
// ANCHOR_END: main
