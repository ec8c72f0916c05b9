//! The builder and `kasm!` produce the code GNU as would assemble from the printed text:
//! virtual registers are allocated, labels resolved, pseudo-instructions expanded,
//! relocations recorded; and bad input gives errors naming function, instruction and reason.

use kgen_harness::oracle::{self, Binutils};
use kgen_dsl::func::{Func, Item, Line};
use kgen_dsl::lower::lower;
use kgen_dsl::object::{assemble, build_object, DataObj};
use kgen_dsl::target::target;
use kgen_dsl::{Abi, Reg};
use kgen_macros::kasm;

fn sample() -> Func {
    let t = target("c906").unwrap();
    let mut f = Func::new("sample", &t, Abi::Psabi);
    let out = f.arg("out", kgen_dsl::entry::Ty::Ptr { elem: kgen_dsl::entry::Elem::U8, access: kgen_dsl::entry::Access::Out, align: 1 }, false);
    let n = f.arg("n", kgen_dsl::entry::Ty::Size, false);
    let acc = f.xreg("acc");
    let tab = f.xreg("tab");
    let tmp = f.xreg("tmp");
    let v = f.vreg("v", 1);
    kasm!(f,
        li {acc}, 0x61707865;
        la {tab}, table;
        th.vsetvli zero, zero, e32, m1, d1;
        th.vmv.v.x {v}, {acc};
    top:
        beqz {n}, done;
        th.extu {tmp}, {acc}, 15, 8;
        th.lrwu {tmp}, {tab}, {tmp}, 2;
        xor {acc}, {acc}, {tmp};
        sw {acc}, 0({out});
        addi {out}, {out}, 4;
        addi {n}, {n}, -1;
        j top;
    done:
        th.vse.v {v}, ({out});
        li {tmp}, 0x123456789abcdef0;
        sd {tmp}, 8({out});
        ret;
    );
    f.finish().expect("sample builds")
}

fn render(f: &Func) -> String {
    let mut s = String::from(".option norvc\n.text\n.p2align 2\n.globl sample\nsample:\n");
    for l in f.listing() {
        match l {
            Line::Label(n) => s.push_str(&format!("{n}:\n")),
            Line::Inst { text, .. } => s.push_str(&format!("\t{text}\n")),
            Line::Comment(c) => s.push_str(&format!("\t# {c}\n")),
            Line::Data(d) => s.push_str(&format!("\t.byte {}\n", d.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(","))),
        }
    }
    s.push_str(".section .rodata\n.p2align 2\ntable:\n.word 1,2,3,4\n");
    s
}

#[test]
fn builder_output_matches_gnu_as() {
    let mut f = sample();
    let frame = lower(&mut f).expect("lowering");
    assert_eq!(frame.size, 0, "leaf function with only temporaries needs no frame");
    let code = assemble(&f).expect("assembles");
    assert_eq!(code.relocs.len(), 2, "la gives a pcrel_hi/lo pair");
    let obj = build_object(&[(code.clone(), true)], &[DataObj { name: "table".into(), align: 4, bytes: vec![0; 16], elem: 4, global: false, comment: String::new() }]);
    let text = render(&f);
    let Some(asm) = oracle::assembler(Binutils::V2_44) else { return };
    let Some(objcopy) = oracle::binutils(Binutils::V2_44, "objcopy") else { return };
    let dir = oracle::scratch("builder");
    std::fs::write(dir.join("s.S"), &text).unwrap();
    let o = dir.join("s.o");
    let r = asm.run(&["-march=rv64gc_xtheadba_xtheadbb_xtheadmemidx_xtheadvector", "-o", o.to_str().unwrap(), dir.join("s.S").to_str().unwrap()]).unwrap();
    assert!(r.status.success(), "GNU as rejected:\n{text}\n{}", String::from_utf8_lossy(&r.stderr));
    let bin = dir.join("s.bin");
    let r = objcopy.run(&["-O", "binary", "-j", ".text", o.to_str().unwrap(), bin.to_str().unwrap()]).unwrap();
    assert!(r.status.success());
    let gnu = std::fs::read(&bin).unwrap();
    assert_eq!(gnu, obj.text, "kgen's .text differs from GNU as for:\n{text}");
}

#[test]
fn allocation_uses_no_callee_saved_registers_when_temporaries_suffice() {
    let mut f = sample();
    let frame = lower(&mut f).unwrap();
    assert!(frame.saved.is_empty(), "{:?}", frame.saved);
    // arguments stay in a0/a1
    assert_eq!(f.args[0].reg, Reg::X(10));
    assert_eq!(f.args[1].reg, Reg::X(11));
}

#[test]
fn errors_name_function_instruction_and_reason() {
    let t = target("rv64gc").unwrap();
    let mut f = Func::new("bad_ext", &t, Abi::Psabi);
    let a = f.xreg("a");
    kasm!(f, th.extu {a}, {a}, 15, 8; ret;);
    let e = f.finish().unwrap_err();
    assert_eq!(e.func, "bad_ext");
    assert!(e.to_string().contains("th.extu %a, %a, 15, 8"), "{e}");
    assert!(e.reason.contains("xtheadbb") && e.reason.contains("rv64gc"), "{e}");

    let mut f = Func::new("bad_imm", &t, Abi::Psabi);
    let a = f.xreg("a");
    let big = 5000;
    kasm!(f, li {a}, 0; addi {a}, {a}, {big}; ret;);
    let e = f.finish().unwrap_err();
    assert!(e.to_string().contains("bad_imm, instruction 1 `addi %a, %a, 5000`"), "{e}");
    assert!(e.reason.contains("out of range -2048..=2047"), "{e}");

    let mut f = Func::new("bad_label", &t, Abi::Psabi);
    kasm!(f, j nowhere; ret;);
    let e = f.finish().unwrap_err();
    assert!(e.reason.contains("never placed"), "{e}");

    let mut f = Func::new("read_before_write", &t, Abi::Psabi);
    let a = f.xreg("a");
    kasm!(f, addi {a}, {a}, 1; ret;);
    let mut f = f.finish().unwrap();
    let e = lower(&mut f).unwrap_err();
    assert!(e.reason.contains("`a` is read before it is written"), "{e}");
}

/// Ends `f` returning the sum of `regs`, and finishes it.
fn return_sum(mut f: Func, regs: &[Reg]) -> Func {
    let sum = f.xreg("sum");
    f.li(sum, 0);
    for r in regs {
        kasm!(f, add {sum}, {sum}, {*r};);
    }
    f.ret_value(sum);
    f.result = kgen_dsl::entry::Ret::Size;
    f.ret();
    f.finish().unwrap()
}

/// 40 integer values live at once spill (and still add up); 40 constants are remade instead; 5 vector groups of 8 under a
/// vtype only known at run time cannot, and the error lists what is live.
#[test]
fn pressure_spills_or_lists_live_values() {
    let t = target("rv64gc").unwrap();
    let mut f = Func::new("pressure", &t, Abi::Psabi);
    let x = f.arg("x", kgen_dsl::entry::Ty::Size, false);
    // x + i, not constants (those the allocator would remake rather than spill).
    let regs: Vec<Reg> = (0..40).map(|i| f.xreg(&format!("v{i}"))).collect();
    for (i, r) in regs.iter().enumerate() {
        kasm!(f, addi {*r}, {x}, {i as i64};);
    }
    let mut f = return_sum(f, &regs);
    let frame = lower(&mut f).unwrap();
    assert!(frame.spills.stores > 0 && frame.spills.reloads > 0 && frame.spills.cost > 0, "{:?}", frame.spills);
    let obj = build_object(&[(assemble(&f).unwrap(), true)], &[]);
    let mut e = kgen_sim::Env::new(&obj, &t).unwrap();
    assert_eq!(e.call(e.sym("pressure"), &[1000]).unwrap().a0, 40 * 1000 + (0..40).sum::<u64>());

    let mut f = Func::new("constants", &t, Abi::Psabi);
    let regs: Vec<Reg> = (0..40).map(|i| f.xreg(&format!("c{i}"))).collect();
    for (i, r) in regs.iter().enumerate() {
        f.li(*r, i as i64);
    }
    let mut f = return_sum(f, &regs);
    let frame = lower(&mut f).unwrap();
    assert!(frame.spills.stores == 0 && !frame.spills.remade.is_empty(), "{:?}", frame.spills);
    let obj = build_object(&[(assemble(&f).unwrap(), true)], &[]);
    let mut e = kgen_sim::Env::new(&obj, &t).unwrap();
    assert_eq!(e.call(e.sym("constants"), &[]).unwrap().a0, (0..40).sum::<u64>());

    let t = target("rv64gcv").unwrap();
    let mut f = Func::new("vpressure", &t, Abi::Psabi);
    let vt = f.arg("vtype", kgen_dsl::entry::Ty::Size, false);
    let groups: Vec<Reg> = (0..5).map(|i| f.vreg(&format!("g{i}"), 8)).collect();
    let n = f.xreg("n");
    kasm!(f, vsetvl {n}, zero, {vt};);
    for g in &groups {
        kasm!(f, vid.v {*g};);
    }
    for g in &groups[1..] {
        let g0 = groups[0];
        kasm!(f, vadd.vv {g0}, {g0}, {*g};);
    }
    f.ret();
    let mut f = f.finish().unwrap();
    let e = lower(&mut f).unwrap_err();
    assert!(e.reason.contains("out of vector registers"), "{e}");
    assert!(e.reason.contains("none of the values live there can be spilled"), "{e}");
    assert!(e.reason.contains("g4"), "{e}");
}

#[test]
fn li_expands_every_constant_shape() {
    // The sequences are checked by execution in the simulator tests; here: lengths.
    for (v, n) in [(0i64, 1), (2047, 1), (-2048, 1), (4096, 1), (0x12345, 2), (0x7fff_ffff, 2), (-0x8000_0000, 1), (0x1_0000_0000, 2), (0x123456789abcdef0, 8)] {
        assert!(kgen_dsl::li_steps(v).len() <= n, "li {v:#x}: {:?}", kgen_dsl::li_steps(v));
    }
}

/// Vector code written once in RVV 1.0 mnemonics is emitted in each target's dialect, and
/// where the dialects differ in meaning the builder says so instead of guessing.
#[test]
fn dialect_neutral_vector_code() {
    let build = |tgt: &str, body: &dyn Fn(&mut Func, Reg, Reg, Reg)| {
        let t = target(tgt).unwrap();
        let mut f = Func::new("neutral", &t, Abi::Psabi);
        let (a, b, n) = (f.vreg("a", 1), f.vreg("b", 1), f.xreg("n"));
        kasm!(f, li {n}, 4; vsetvli zero, {n}, e32, m1, ta, ma; vmv.v.i {a}, 1; vmv.v.i {b}, 2;);
        body(&mut f, a, b, n);
        f.ret();
        f.finish()
    };
    let add = |f: &mut Func, a: Reg, b: Reg, _: Reg| kasm!(f, vadd.vv {a}, {a}, {b}; vid.v {b};);
    let names = |f: &Func| f.items.iter().filter_map(|i| if let Item::Inst(x) = i { Some(x.row().mnemonic) } else { None }).collect::<Vec<_>>();
    let th = build("c906", &add).unwrap();
    assert_eq!(names(&th)[1..], ["th.vsetvli", "th.vmv.v.i", "th.vmv.v.i", "th.vadd.vv", "th.vid.v"]);
    // e32, m1 in XTheadVector's vtype layout.
    let Item::Inst(vs) = &th.items[1] else { panic!() };
    assert_eq!(vs.ops[2], kgen_dsl::Opnd::Imm(0b01000));
    let v1 = build("rv64gcv", &add).unwrap();
    assert_eq!(names(&v1)[1..], ["vsetvli", "vmv.v.i", "vmv.v.i", "vadd.vv", "vid.v"]);
    // Where the meaning differs: an error naming the instruction and why.
    let err = |body: &dyn Fn(&mut Func, Reg, Reg, Reg)| build("c906", body).unwrap_err().to_string();
    assert!(err(&|f, a, b, _| kasm!(f, vadd.vv {a}, {a}, {b}, v0.t;)).contains("masks"));
    assert!(err(&|f, a, b, _| kasm!(f, vmseq.vi {a}, {b}, 0;)).contains("vmseq.vi"));
    assert!(err(&|f, _, _, n| kasm!(f, vsetvli zero, {n}, e32, m1, tu, ma;)).contains("tail-undisturbed"));
    assert!(err(&|f, _, _, _| kasm!(f, vsetvli zero, zero, e32, m1, ta, ma;)).contains("keeps vl"));
    assert!(err(&|f, _, _, n| kasm!(f, vsetvli zero, {n}, e32, mf2, ta, ma;)).contains("fractional"));
}

/// A body that returns early, written once and inlined twice (`Func::inline`: its `ret`
/// jumps past it, its labels are its own), each copy with a 64-byte slot in a frame-sharing
/// group (`Func::sharing`): the two slots get the same frame bytes, the frame holds one of
/// them, and the function computes what the two bodies in turn compute. Control: the same
/// slots outside the group take a frame twice as large.
#[test]
fn inlined_bodies_return_past_themselves_and_share_their_frame() {
    let t = target("rv64gc").unwrap();
    let build = |share: bool| -> Func {
        let mut f = Func::new("twice", &t, Abi::Psabi);
        let x = f.arg("x", kgen_dsl::entry::Ty::Size, false);
        let g = f.share_group();
        // Body: if x == 0 return; else x = 2x + 1 through a slot.
        let body = |f: &mut Func, member: u32| {
            let run = |f: &mut Func| {
                f.inline(|f| {
                    let s = f.slot("scratch", 64, 8, false);
                    let y = f.xreg("y");
                    kasm!(f, bnez {x}, work;);
                    f.ret();
                    kasm!(f, work: slli {y}, {x}, 1; addi {y}, {y}, 1;);
                    f.inst("sd", &[y.into(), kgen_dsl::Opnd::Stack { slot: s, off: 56 }, Reg::X(2).into()]);
                    f.inst("ld", &[x.into(), kgen_dsl::Opnd::Stack { slot: s, off: 56 }, Reg::X(2).into()]);
                })
            };
            if share {
                f.sharing(g, member, run);
            } else {
                run(f);
            }
        };
        body(&mut f, 0);
        body(&mut f, 1);
        f.ret_value(x);
        f.result = kgen_dsl::entry::Ret::Size;
        f.ret();
        f.finish().unwrap()
    };
    let mut f = build(true);
    let frame = lower(&mut f).unwrap();
    assert_eq!(frame.slots[0], frame.slots[1], "the members' slots share their bytes");
    assert_eq!(frame.size, 64);
    let obj = build_object(&[(assemble(&f).unwrap(), true)], &[]);
    let mut e = kgen_sim::Env::new(&obj, &t).unwrap();
    assert_eq!(e.call(e.sym("twice"), &[5]).unwrap().a0, 23);
    assert_eq!(e.call(e.sym("twice"), &[0]).unwrap().a0, 0, "both bodies return early, and the function goes on");
    let mut f = build(false);
    let frame = lower(&mut f).unwrap();
    assert_ne!(frame.slots[0], frame.slots[1]);
    assert_eq!(frame.size, 128);
}
