#[test]
fn probe() {
    for v in ["c906", "rv64gc"] {
        let r = kgen_kernels::kernel("aes").unwrap().variant(v).unwrap().build(kgen_dsl::Abi::Go);
        match r {
            Ok(m) => { for l in &m.funcs { println!("{v} {} frame {:?} ret {}", l.func.name, l.frame.saved, l.func.ret); } }
            Err(e) => println!("{v} err {e}"),
        }
    }
}
