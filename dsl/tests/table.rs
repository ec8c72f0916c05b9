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
