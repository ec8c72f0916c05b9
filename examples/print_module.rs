//! Prints a kernel variant's OpenSSL `.S` (quick look without the CLI).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let k = kgen_kernels::kernel(&a[1]).unwrap();
    let m = k.variant(&a[2]).unwrap().build(kgen_dsl::Abi::Psabi).unwrap();
    let o = kgen_emit::EmitOptions { command: "example".into(), ..Default::default() };
    print!("{}", kgen_emit::openssl_s(&m, &o).unwrap());
}
