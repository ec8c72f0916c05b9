//! Prints every row: mnemonic, bits, mask, extensions (used to compare with other tables).
fn main() {
    for r in kgen_dsl::table().rows() {
        println!("{}\t{:08x}\t{:08x}\t{}", r.mnemonic, r.bits, r.mask, r.ext);
    }
}
