//! Runs a few instructions in kgen-sim and under the emulator for a family, from chosen
//! registers, and prints both final states: a tool for investigating differential-test
//! disagreements.
//!
//! cargo run -p kgen-sim --example probe -- FAMILY VTYPE AVL 'inst; inst; ...' [xN=VAL ...] [vN=HEXBYTES ...]
use kgen_dsl::text::parse_inst;
use kgen_sim::diff::*;
use std::collections::BTreeMap;
use std::process::Command;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let f = match a[1].as_str() {
        "XTheadVector" => Family::XTheadVector,
        "Rvv" => Family::Rvv,
        "XTheadScalar" => Family::XTheadScalar,
        _ => Family::Scalar,
    };
    let vtype = u64::from_str_radix(a[2].trim_start_matches("0x"), 16).unwrap();
    let avl: u64 = a[3].parse().unwrap();
    let insts: Vec<_> = a[4].split(';').filter(|s| !s.trim().is_empty()).map(|s| parse_inst(s).unwrap()).collect();
    let mut code = Vec::new();
    for i in &insts {
        code.extend_from_slice(&i.encode().unwrap().to_le_bytes());
    }
    let mut x = [0u64; 32];
    x[8] = MEM_ADDR + 8192;
    x[9] = MEM_ADDR + 6144;
    let mut v = vec![0u8; 32 * VLENB];
    for (k, b) in v.iter_mut().enumerate() {
        *b = (k as u8).wrapping_mul(37).wrapping_add(11);
    }
    for arg in &a[5..] {
        let (r, val) = arg.split_once('=').unwrap();
        if let Some(n) = r.strip_prefix('x') {
            x[n.parse::<usize>().unwrap()] = u64::from_str_radix(val.trim_start_matches("0x"), 16).unwrap();
        } else if let Some(n) = r.strip_prefix('v') {
            let n: usize = n.parse().unwrap();
            for (k, b) in (0..val.len() / 2).map(|i| u8::from_str_radix(&val[2 * i..2 * i + 2], 16).unwrap()).enumerate() {
                v[n * VLENB + k] = b;
            }
        }
    }
    let seq = Seq { family: f, code, insts, x, v, vtype, avl, vxrm: 0, mem_seed: 1, looped: false };
    let sim = run_sim(&seq, &BTreeMap::new());
    let dir = std::env::temp_dir().join("kgen-probe");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("h.S"), harness_asm(std::slice::from_ref(&seq))).unwrap();
    std::fs::write(dir.join("h.c"), HARNESS_C).unwrap();
    let o = Command::new("riscv64-linux-gnu-gcc").args(["-static", "-O1", "-o"]).arg(dir.join("h")).arg(dir.join("h.c")).arg(dir.join("h.S")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let q = match f.qemu().0 {
        "xuantie" => format!("{}/.toolchain/xuantie/qemu/qemu-riscv64", env!("CARGO_MANIFEST_DIR").trim_end_matches("/sim")),
        _ => "qemu-riscv64".into(),
    };
    let r = Command::new(q).args(["-cpu", f.qemu().1]).arg(dir.join("h")).output().unwrap();
    let qs = parse_output(&String::from_utf8_lossy(&r.stdout), f.dialect().is_some());
    println!("sim: {:?}", sim.as_ref().map(|s| (s.vl, s.vtype)));
    if let (Ok(s), Some(q)) = (&sim, qs.first()) {
        for d in differences(s, q) {
            println!("  {d}");
        }
        for vr in 0..32 {
            if s.v[vr * VLENB..(vr + 1) * VLENB] != seq.v[vr * VLENB..(vr + 1) * VLENB] || q.v[vr * VLENB..(vr + 1) * VLENB] != seq.v[vr * VLENB..(vr + 1) * VLENB] {
                println!("v{vr}: init {:02x?}\n      sim {:02x?}\n     qemu {:02x?}", &seq.v[vr * VLENB..(vr + 1) * VLENB], &s.v[vr * VLENB..(vr + 1) * VLENB], &q.v[vr * VLENB..(vr + 1) * VLENB]);
            }
        }
    } else {
        println!("sim {:?} qemu {:?} {}", sim.err(), !qs.is_empty(), String::from_utf8_lossy(&r.stderr));
    }
}
