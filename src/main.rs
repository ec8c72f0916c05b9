//! kgen: generate checked RISC-V crypto kernels for the T-Head C906 and standard cores.

fn main() -> std::process::ExitCode {
    kgen::cli::run(kgen_kernels::kernels(), env!("CARGO_MANIFEST_DIR"))
}
