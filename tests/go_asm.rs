//! The oracle for the ISA table's Go spellings (`kgen_dsl::isa::go`): every Go output (each
//! kernel variant with a Go build, and the macState modules `kgen go-patches` writes into
//! x/crypto) is assembled with Go's own assembler (`go tool asm -S`, GOARCH=riscv64), and
//! each function's machine code is compared, byte for byte, with what kgen encodes for it
//! ([`kgen_emit::go::abi0_object`]: Go's prologue, the argument loads, kgen's body, the
//! epilogue). PC-relative relocations are compared without their
//! immediates (Go leaves them to its linker). Functions with Go's stack check (a frame over
//! the nosplit limit) are counted and left out. Negative control: a `MOVW` load changed
//! to `MOVWU` in one output is reported as a mismatch at that instruction.

mod common;

use common::{go_tool_asm as assemble, parse_go_listing as parse_listing};
use kgen_harness::oracle;
use kgen::outputs::{self, Format};
use kgen_dsl::Abi;
use kgen_emit::go::{abi0_object, go_files, go_name};
use kgen_emit::EmitOptions;
use std::collections::HashMap;

/// Compares Go's bytes of each function with kgen's; returns the mismatches and the number
/// of instructions compared.
fn compare(go_syms: &HashMap<String, (Vec<u8>, Vec<(usize, usize)>)>, m: &kgen_dsl::Module) -> (Vec<String>, usize, usize) {
    let (obj, skipped) = abi0_object(m).unwrap();
    let mut bad = Vec::new();
    let mut n = 0;
    for sym in obj.symbols.iter().filter(|s| s.func) {
        let gname = go_name(&sym.name).unwrap();
        let Some((gb, rel)) = go_syms.get(&gname) else {
            bad.push(format!("{}: Go's listing has no {gname}", sym.name));
            continue;
        };
        let kb = &obj.text[sym.offset as usize..(sym.offset + sym.size) as usize];
        if gb.len() != kb.len() {
            bad.push(format!("{}: Go made {} bytes, kgen {}", sym.name, gb.len(), kb.len()));
            continue;
        }
        for off in (0..kb.len()).step_by(4) {
            let w = |b: &[u8]| u32::from_le_bytes(b[off..off + 4].try_into().unwrap());
            let relocated = rel.iter().any(|&(o, l)| off >= o && off < o + l);
            // A relocated word: opcode, rd (and funct3/rs1 of an addi) only.
            let mask = if relocated { 0xfff } else { u32::MAX };
            n += 1;
            if w(gb) & mask != w(kb) & mask {
                let d = kgen_dsl::table().decode(w(kb), kgen_dsl::isa::all_exts_with(kgen_dsl::isa::VDialect::Thead));
                bad.push(format!("{} +{off:#x}: Go {:#010x}, kgen {:#010x} ({})", sym.name, w(gb), w(kb), d.map(|i| kgen_dsl::text::print_inst(&i)).unwrap_or_default()));
            }
        }
    }
    (bad, n, skipped.len())
}

#[test]
fn go_mnemonics_assemble_to_kgens_encoding() {
    let Some(go) = oracle::go() else { return };
    let dir = oracle::scratch("go-asm-oracle");
    let opts = EmitOptions { command: "kgen emit".into(), ..Default::default() };
    println!("{:<10} {:<16} {:>6} {:>6} {:>6} {:>8}", "kernel", "variant", "lines", "Go", "WORD", "skipped");
    let (mut total, mut go_lines, mut modules) = (0, 0, 0);
    let mut mnemonics = std::collections::BTreeSet::new();
    // Every Go output, and the macState modules `kgen go-patches` writes into x/crypto.
    let mut builds: Vec<(String, String, kgen_dsl::Module)> = outputs::all(kgen_kernels::kernels())
        .into_iter()
        .filter(|o| o.abi == Abi::Go && o.format == Format::S)
        .map(|o| (o.kernel.name.to_string(), o.variant.name.to_string(), o.variant.build(Abi::Go).unwrap_or_else(|e| panic!("{} {}: {e}", o.kernel.name, o.variant.name))))
        .collect();
    for v in ["32-c906", "32-rv64gc"] {
        builds.push(("poly1305".into(), format!("{v}/macstate"), kgen_kernels::poly1305::macstate_module(v).unwrap()));
    }
    builds.push(("chacha20-poly1305".into(), "c906/macstate".into(), kgen_kernels::chacha20_poly1305::macstate_module("c906").unwrap()));
    for (kernel, variant, m) in builds {
        let (s, _) = go_files(&m, &opts, "kgenpkg").unwrap();
        let listing = assemble(&go, &dir, &s, "kgenpkg");
        let syms = parse_listing(&listing, "kgenpkg");
        let (bad, n, skipped) = compare(&syms, &m);
        assert!(bad.is_empty(), "{kernel} {variant}: Go's assembler and kgen disagree:\n{}", bad[..bad.len().min(20)].join("\n"));
        let insts: Vec<&str> = s.lines().filter(|l| l.starts_with('\t') && l[1..].starts_with(|c: char| c.is_ascii_uppercase())).collect();
        let words = insts.iter().filter(|l| l.starts_with("\tWORD")).count();
        for l in &insts {
            mnemonics.insert(l.trim().split('\t').next().unwrap().to_string());
        }
        println!("{:<10} {:<16} {:>6} {:>6} {:>6} {:>8}", kernel, variant, insts.len(), insts.len() - words, words, skipped);
        total += n;
        go_lines += insts.len() - words;
        modules += 1;
    }
    println!("{modules} modules, {total} instructions compared, {go_lines} lines in Go syntax; mnemonics used: {mnemonics:?}");
    assert!(modules >= 10 && total > 10_000, "{modules} modules, {total} instructions");

    // Negative control: one load's width changed in the text is a mismatch Go's bytes show.
    let m = kgen_kernels::kernel("chacha20").unwrap().variant("c906-novector").unwrap().build(Abi::Go).unwrap();
    let (s, _) = go_files(&m, &opts, "kgenpkg").unwrap();
    let k = s.find("\tMOVW\t4(").expect("a MOVW load");
    let bad_s = format!("{}\tMOVWU{}", &s[..k], &s[k + 5..]);
    let (bad, _, _) = compare(&parse_listing(&assemble(&go, &dir, &bad_s, "kgenpkg"), "kgenpkg"), &m);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("lw "), "{bad:?}");
}

/// Every row of the ISA table with a Go spelling, at random operands (edge values biased:
/// x0, x31, immediate limits; registers Go cannot name are left out): each line is
/// assembled by Go in a NOFRAME function between pads and must give exactly the word kgen
/// encodes. Branch targets are written `n(PC)`. Prints the rows with and without a Go form.
#[test]
fn every_go_spelling_in_the_table_assembles_to_the_rows_encoding() {
    use rand::SeedableRng;
    let Some(go) = oracle::go() else { return };
    let dir = oracle::scratch("go-asm-rows");
    let t = kgen_dsl::table();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    const PAD: usize = 64;
    let mut lines: Vec<(String, u32, String)> = Vec::new();
    let mut rows_with = Vec::new();
    let mut specials_hit = std::collections::BTreeSet::new();
    for r in t.rows() {
        let Some(g) = r.go else { continue };
        rows_with.push(r.mnemonic);
        let mut tries = 0;
        let mut made = 0;
        while made < 60 && tries < 2000 {
            tries += 1;
            // Targets are whole instructions (the generator makes them multiples of 4),
            // within the pads.
            let v = kgen_dsl::isa::gen::random_operands(r, &mut rng, kgen_dsl::isa::gen::Limits { max_rel: 4 * PAD as i64 - 8 });
            let Ok(w) = r.encode(&v) else { continue };
            let label = |k: usize| format!("{}(PC)", v[k] / 4);
            let Ok(text) = g.text(&v, &label) else { continue };
            if let Some((_, _, f)) = g.special.iter().find(|(k, val, _)| v.get(*k as usize) == Some(val)) {
                specials_hit.insert(f.mnemonic);
            }
            made += 1;
            lines.push((text, w, kgen_dsl::text::print_inst(&kgen_dsl::Inst::new(r.form, &v))));
        }
        assert!(made > 0, "{}: no operands Go can write", r.mnemonic);
    }
    // Every special spelling appears at least once (they are keyed on x0 and 0/-1/1, which
    // the generator favours).
    for r in t.rows() {
        for (_, _, f) in r.go.map(|g| g.special).unwrap_or(&[]) {
            assert!(specials_hit.contains(f.mnemonic), "{}: the {} spelling was never generated", r.mnemonic, f.mnemonic);
        }
    }
    let mut s = String::from("#include \"textflag.h\"\n\nTEXT ·rows(SB), NOSPLIT|NOFRAME, $0\n");
    let pad = "\tWORD\t$0x00000013\n".repeat(PAD);
    for (text, _, _) in &lines {
        s += &pad;
        s += &format!("\t{text}\n");
    }
    s += &pad;
    let listing = assemble(&go, &dir, &s, "kgenrows");
    let syms = parse_listing(&listing, "kgenrows");
    let (bytes, _) = &syms["rows"];
    assert_eq!(bytes.len(), 4 * (PAD * (lines.len() + 1) + lines.len()), "Go expanded some line to more than one instruction");
    let mut bad = Vec::new();
    for (k, (text, w, gnu)) in lines.iter().enumerate() {
        let off = 4 * (PAD * (k + 1) + k);
        let got = u32::from_le_bytes(bytes[off..off + 4].try_into().unwrap());
        if got != *w {
            bad.push(format!("`{text}` gave {got:#010x}; kgen encodes `{gnu}` as {w:#010x}"));
        }
    }
    let without: Vec<&str> = t.rows().iter().filter(|r| r.go.is_none() && r.vdialect.is_none() && !r.mnemonic.starts_with("th.")).map(|r| r.mnemonic).collect();
    println!("{} rows with a Go spelling ({} lines assembled): {rows_with:?}", rows_with.len(), lines.len());
    println!("scalar non-T-Head rows written as WORD: {without:?}");
    assert!(bad.is_empty(), "{} of {} lines differ:\n{}", bad.len(), lines.len(), bad[..bad.len().min(30)].join("\n"));
    assert!(rows_with.len() >= 80, "{} rows with a Go spelling", rows_with.len());
}
