//! Prints a differential-test sequence containing a given instruction word with the
//! simulator's vtype/vl before each instruction (debugging aid).
use kgen_sim::diff::*;
use kgen_sim::Machine;
use kgen_sim::mem::Perm;
use rand::SeedableRng;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let f = match a[2].as_str() { "XTheadVector" => Family::XTheadVector, "Scalar" => Family::Scalar, "XTheadScalar" => Family::XTheadScalar, _ => Family::Rvv };
    let want = u32::from_str_radix(&a[1], 16).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xd1ff ^ f as u64);
    for n in 0..3000 {
        let s = generate_runnable(f, &mut rng, 24);
        let words: Vec<u32> = s.code.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        if !words.contains(&want) { continue; }
        println!("seq {n}");
        let t = f.target();
        let mut m = Machine::new(&t);
        m.mem.map("code", CODE_ADDR, 8192, Perm::RX);
        m.mem.write_bytes(CODE_ADDR, &s.code);
        m.mem.map("buffer", MEM_ADDR, MEM_SIZE, Perm::RW);
        m.mem.write_bytes(MEM_ADDR, &mem_init(s.mem_seed));
        m.hart.x = s.x; m.hart.v.copy_from_slice(&s.v);
        m.hart.vsetvl(f.dialect().unwrap(), 0, Some(s.avl), s.vtype);
        m.hart.pc = CODE_ADDR;
        let end = CODE_ADDR + s.code.len() as u64;
        while m.hart.pc != end {
            let pc = m.hart.pc;
            let w = m.mem.fetch(pc).unwrap();
            let i = kgen_dsl::table().decode(w, t.exts).unwrap();
            println!("  vtype {:#x} vl {:3} vstart {} | {}", m.hart.vtype, m.hart.vl, m.hart.vstart, kgen_dsl::text::print_inst(&i));
            m.step().unwrap();
        }
        break;
    }
}
