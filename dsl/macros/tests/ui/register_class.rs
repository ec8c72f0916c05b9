use kgen_dsl::{target::target, Abi, Func};
use kgen_macros::kasm;
fn main() {
    let mut f = Func::new("f", &target("c906").unwrap(), Abi::Psabi);
    kasm!(f, th.vadd.vv v1, a2, v3;);
}
