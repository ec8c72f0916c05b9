//! Every kernel variant with its buffers at every placement 0..15 bytes past a 64-byte
//! boundary that their entry points' declared alignment allows, in kgen-sim, where a target
//! without fast misaligned access traps on a misaligned access (as such a core may): the
//! known answers of `kgen jit-run`'s plans must still come out. The negative control shows
//! the trap catches a misaligned access the checks were bypassed for.

use kgen_harness::jit::{plan, run_sim};
use kgen_dsl::entry::{Access, Elem, Ty};
use kgen_dsl::target::{target, Misaligned};
use kgen_dsl::{Abi, Func};
use kgen_macros::kasm;

#[test]
fn every_variant_at_every_offset() {
    let mut runs = 0;
    for k in kgen_kernels::kernels() {
        for v in k.variants {
            let m = v.build(Abi::Psabi).unwrap_or_else(|e| panic!("{} {}: {e}", k.name, v.name));
            let img = kgen_emit::jit::flat_image(&m, 0x4000_0000).unwrap();
            let p = plan(k, v.name).unwrap();
            for b in 0..p.buffers.len() {
                let (orig, step) = (p.buffers[b].offset, p.buffers[b].align as usize);
                for off in (0..16).filter(|o| o % step == orig % step) {
                    let mut q = p.clone();
                    q.buffers[b].offset = off;
                    let out = run_sim(&img, &m.target, &q).unwrap_or_else(|e| {
                        panic!("{} {} ({}), buffer `{}` at offset {off}: {e}", k.name, v.name, m.target.name, q.buffers[b].name)
                    });
                    for verdict in q.verdicts(&out) {
                        assert!(verdict.ok(), "{} {}, buffer `{}` at offset {off}: {}: got {}, want {}", k.name, v.name, q.buffers[b].name, verdict.name, verdict.got, verdict.want);
                    }
                    runs += 1;
                }
            }
        }
    }
    println!("{runs} placements, every known answer right, no misaligned access trapped");
    assert!(runs > 500, "{runs}");
}

/// Without the checks, a 4-byte load through a byte pointer traps in the simulator on a
/// target without fast misaligned access, and not on the C906.
#[test]
fn the_simulator_traps_what_the_checks_would_refuse() {
    for (tgt, traps) in [("rv64gc", true), ("c906", false)] {
        let t = target(tgt).unwrap();
        assert_eq!(t.misaligned == Misaligned::Slow, traps);
        let mut f = Func::new("load", &t, Abi::Psabi);
        let p = f.arg("p", Ty::Ptr { elem: Elem::U8, access: Access::In, align: 1 }, false);
        let x = f.xreg("x");
        f.public(x);
        kasm!(f, lw {x}, 0({p}); sw {x}, 0({p}););
        f.ret();
        let mut f = f.finish().unwrap();
        kgen_dsl::lower::lower(&mut f).unwrap();
        let code = kgen_dsl::object::assemble(&f).unwrap();
        let obj = kgen_dsl::object::build_object(&[(code, true)], &[]);
        let mut e = kgen_sim::Env::new(&obj, &t).unwrap();
        let buf = e.buffer(&[1, 2, 3, 4, 5, 6, 7, 8], 1, true);
        let r = e.call(e.sym("load"), &[buf]);
        match (traps, r) {
            (true, Err(kgen_sim::CallError::Fault(x))) => assert!(x.to_string().contains("misaligned"), "{x}"),
            (false, Ok(_)) => {}
            (_, r) => panic!("{tgt}: {r:?}"),
        }
    }
}
