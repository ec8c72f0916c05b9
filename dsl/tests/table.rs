//! ISA table tests that need no toolchain: consistency of the rows, and agreement with the
//! encodings GNU as produced (dsl/tests/data/encodings.txt, written by the gnu_as test).

use kgen_dsl::isa::consistency::{coverage_errors, overlaps, worlds, Shape};
use kgen_dsl::isa::{all_exts_with, table, Inst, VDialect};
use kgen_dsl::text::{parse_inst, print_inst};
use kgen_dsl::{Ext, ExtSet};

#[test]
fn no_two_rows_overlap_within_a_target() {
    let shapes: Vec<Shape> = table().rows().iter().map(Shape::from).collect();
    let o = overlaps(&shapes, &worlds());
    assert!(o.is_empty(), "overlapping rows: {o:?}");
}

#[test]
fn overlap_check_rejects_overlapping_rows() {
    // Negative control: two rows that share words (the second's fixed bits are a subset).
    let e = ExtSet::one(Ext::I);
    let a = Shape { name: "a", mask: 0x707f, bits: 0x0013, fields: 0, ext: e, specializes: None };
    let b = Shape { name: "b", mask: 0x7f, bits: 0x13, fields: 0, ext: e, specializes: None };
    assert_eq!(overlaps(&[a, b], &worlds()), vec![("a", "b")]);
    // Declared specialization is allowed; different worlds are allowed.
    let b2 = Shape { specializes: Some("a"), ..b };
    assert!(overlaps(&[a, b2], &worlds()).is_empty());
    let th = Shape { ext: ExtSet::one(Ext::XTheadVector), ..a };
    let v = Shape { ext: ExtSet::one(Ext::V), ..b };
    assert!(overlaps(&[th, v], &worlds()).is_empty());
}

#[test]
fn every_bit_of_every_row_is_accounted_for() {
    let rows: Vec<_> = table().rows().iter().collect();
    let errs = coverage_errors(&rows);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn flipping_a_fixed_bit_never_decodes_to_the_same_row() {
    let data = encodings();
    let mut checked = 0;
    for (word, inst, _) in &data {
        let row = inst.row();
        let exts = all_exts_with(row.vdialect.unwrap_or(VDialect::Thead));
        for bit in 0..32 {
            if row.mask & (1 << bit) == 0 {
                continue;
            }
            if let Some(d) = table().decode(word ^ (1 << bit), exts) {
                assert_ne!(d.form, inst.form, "{}: flipping fixed bit {bit} still decodes as {}", print_inst(inst), row.mnemonic);
            }
            checked += 1;
        }
    }
    assert!(checked > 100_000, "only {checked} flips checked");
}

/// (word, instruction, text) from the committed file.
fn encodings() -> Vec<(u32, Inst, String)> {
    let text = include_str!("data/encodings.txt");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "bad line {line}");
        let word = u32::from_str_radix(f[0], 16).unwrap();
        let inst = parse_inst(f[3]).unwrap_or_else(|e| panic!("{}: {e}", f[3]));
        out.push((word, inst, f[3].to_string()));
    }
    out
}

#[test]
fn committed_gnu_encodings_match_encoder_decoder_and_printer() {
    let data = encodings();
    let forms: std::collections::BTreeSet<_> = data.iter().map(|(_, i, _)| i.form).collect();
    assert_eq!(forms.len(), table().rows().len(), "every form has committed encodings");
    for (word, inst, text) in &data {
        assert_eq!(inst.encode().unwrap(), *word, "encode `{text}`");
        let exts = all_exts_with(inst.row().vdialect.unwrap_or(VDialect::Thead));
        assert_eq!(table().decode(*word, exts), Some(*inst), "decode {word:08x}");
        assert_eq!(&print_inst(inst), text, "print");
    }
    println!("{} committed encodings for {} forms agree", data.len(), forms.len());
}

#[test]
fn operand_errors_name_the_instruction_operand_and_reason() {
    let f = table().form("addi");
    let e = table().row(f).encode(&[10, 11, 4096]).unwrap_err();
    assert_eq!(e.to_string(), "`addi` operand `imm`: immediate 4096 out of range -2048..=2047");
    let f = table().form("beq");
    let e = table().row(f).encode(&[10, 11, 7]).unwrap_err();
    assert!(e.to_string().contains("not a multiple of 2"), "{e}");
    let f = table().form("th.extu");
    let e = table().row(f).encode(&[10, 11, 3, 8]).unwrap_err();
    assert!(e.to_string().contains("`msb`: must be >= `lsb`"), "{e}");
    let f = table().form("th.vadd.vv");
    let e = table().row(f).encode(&[0, 1, 2, 0]).unwrap_err();
    assert!(e.to_string().contains("masked instruction cannot write v0"), "{e}");
}

#[test]
fn rust_and_method_names_are_systematic() {
    let r = table().row(table().form("th.lrwu"));
    assert_eq!(r.rust_name(), "ThLrwu");
    assert_eq!(r.method_name(), "th_lrwu");
    assert_eq!(table().row(table().form("vadd.vv")).rust_name(), "VaddVv");
}

/// A bus that answers every load with a value derived from the address.
struct AnyMem;
impl kgen_dsl::isa::Bus for AnyMem {
    fn load(&mut self, addr: u64, bytes: u8) -> Result<u64, kgen_dsl::isa::Trap> {
        let v = addr.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
        Ok(if bytes == 8 { v } else { v & ((1u64 << (8 * bytes as u32)) - 1) })
    }
    fn store(&mut self, _: u64, _: u8, _: u64) -> Result<(), kgen_dsl::isa::Trap> {
        Ok(())
    }
}

/// The result-extension facts of the rows hold for what the rows' own semantics compute,
/// on random operands (so the checker's width analysis rests on the table, not on belief).
#[test]
fn result_extension_facts_agree_with_the_semantics() {
    use kgen_dsl::isa::{gen, Extend, Hart, Kind, Role};
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let mut checked = 0;
    for row in table().rows().iter().filter(|r| r.result != Extend::Unknown && r.vdialect.is_none()) {
        for _ in 0..200 {
            let ops = gen::random_operands(row, &mut rng, Default::default());
            if ops[0] == 0 {
                continue;
            }
            let mut h = Hart::new(128);
            for r in 1..32 {
                // Mostly small values, sometimes large ones, for the operand-relative facts.
                h.x[r] = if rng.random_bool(0.5) { rng.random::<u64>() } else { rng.random::<u32>() as u64 >> rng.random_range(0..32) };
            }
            let before = h.x;
            let reg = |k: u8| before[ops[k as usize] as usize];
            let imm = |k: u8| ops[k as usize];
            if (row.sem)(&mut h, &mut AnyMem, &ops).is_err() {
                continue;
            }
            let v = h.x[ops[0] as usize];
            let zext = |n: i64| n >= 64 || v >> n == 0;
            let sext = |n: i64| n >= 64 || (((v << (64 - n)) as i64) >> (64 - n)) as u64 == v;
            let width = |x: u64| 64 - x.leading_zeros() as i64;
            let opval = |k: u8| if matches!(row.ops[k as usize].kind, Kind::X | Kind::XMem) { reg(k) } else { imm(k) as u64 };
            let ok = match row.result {
                Extend::Zero(n) => zext(n as i64),
                Extend::Sign(n) => sext(n as i64),
                Extend::ZeroAboveImm(k) => zext(imm(k) + 1),
                Extend::SignFromImm(k) => sext(imm(k) + 1),
                Extend::ShiftRightImm { src, sh } => zext((width(reg(src)) - imm(sh)).max(0)),
                Extend::ShiftRight { src } => zext(width(reg(src))),
                Extend::And(a, b) => {
                    let (x, y) = (opval(a), opval(b));
                    zext(width(x).min(width(y)))
                }
                Extend::Or(a, b) => zext(width(opval(a)).max(width(opval(b)))),
                Extend::Upper(k) => v == ((imm(k) << 12) as i32) as i64 as u64,
                Extend::Unknown => true,
            };
            assert!(ok, "{}: {:?} does not hold for {ops:?}: result {v:#x}", row.mnemonic, row.result);
            assert!(row.ops[0].role == Role::Def || row.ops[0].role == Role::UseDef);
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked}");
}

/// Every conditional branch names an inverse that branches on exactly the other operand
/// pairs (by the rows' semantics), and the table resolved it.
#[test]
fn branch_inverses_are_complementary() {
    use kgen_dsl::isa::{Control, Flow, Hart};
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let mut n = 0;
    for row in table().rows().iter().filter(|r| matches!(r.flow, Flow::Branch { .. })) {
        let inv = table().row(row.inverse.unwrap_or_else(|| panic!("{} has no inverse", row.mnemonic)));
        assert_eq!(inv.inverse, Some(row.form));
        for _ in 0..500 {
            let (a, b) = if rng.random_bool(0.2) { let v = rng.random::<u64>(); (v, v) } else { (rng.random::<u64>(), rng.random::<u64>()) };
            let taken = |r: &kgen_dsl::Row| {
                let mut h = Hart::new(128);
                h.x[5] = a;
                h.x[6] = b;
                h.pc = 0x1000;
                h.next_pc = 0x1004;
                (r.sem)(&mut h, &mut AnyMem, &[5, 6, 64]).unwrap();
                h.next_pc != 0x1004
            };
            assert_ne!(taken(row), taken(inv), "{} / {} on {a:#x}, {b:#x}", row.mnemonic, inv.mnemonic);
        }
        assert_eq!(Inst::new(row.form, &[5, 6, 64]).control(), Control::Branch);
        n += 1;
    }
    assert_eq!(n, 6);
    // Returns, calls and jumps.
    let jalr = table().form("jalr");
    assert_eq!(Inst::new(jalr, &[0, 0, 1]).control(), Control::Return);
    assert_eq!(Inst::new(jalr, &[0, 0, 5]).control(), Control::IndirectJump);
    assert_eq!(Inst::new(jalr, &[1, 0, 5]).control(), Control::Call);
    let jal = table().form("jal");
    assert_eq!(Inst::new(jal, &[0, 8]).control(), Control::Jump);
    assert_eq!(Inst::new(jal, &[1, 8]).control(), Control::Call);
}

/// Dialect twins: the RVV 1.0 rows that a neutral kernel may write map to XTheadVector rows
/// with the same operands; mask-producing and carry forms, loads and stores do not.
#[test]
fn vector_twins() {
    let twin = |m: &str| table().row(table().form(m)).twin.map(|f| table().row(f).mnemonic);
    for (v, th) in [("vadd.vv", "th.vadd.vv"), ("vxor.vv", "th.vxor.vv"), ("vmadd.vv", "th.vmadd.vv"), ("vrgather.vv", "th.vrgather.vv"), ("vid.v", "th.vid.v"), ("vmv.v.x", "th.vmv.v.x")] {
        assert_eq!(twin(v), Some(th), "{v}");
        assert_eq!(twin(th), Some(v), "{th}");
    }
    for none in ["vmseq.vi", "vmerge.vxm", "vle32.v", "vsetvli", "vmsleu.vi", "vror.vi"] {
        assert_eq!(twin(none), None, "{none}");
    }
}
