//! The text assembler front end reads OpenSSL 3.5.7's generated riscv64 assembly and kgen's
//! own printed code into the same bytes GNU as produces; bad syntax is an error with the
//! line number.

use kgen_harness::oracle::{self, Binutils};
use kgen_dsl::asmfile::{assemble_file, eval_expr};
use kgen_dsl::target::target;
use std::collections::HashMap;

fn gnu_text(src: &str, march: &str, tag: &str) -> Option<Vec<u8>> {
    let asm = oracle::assembler(Binutils::V2_44)?;
    let objcopy = oracle::binutils(Binutils::V2_44, "objcopy")?;
    let dir = oracle::scratch("asm_frontend");
    let s = dir.join(format!("{tag}.s"));
    let o = dir.join(format!("{tag}.o"));
    let b = dir.join(format!("{tag}.bin"));
    std::fs::write(&s, format!(".option norvc\n{src}")).unwrap();
    let r = asm.run(&[&format!("-march={march}"), "-o", o.to_str().unwrap(), s.to_str().unwrap()]).unwrap();
    assert!(r.status.success(), "GNU as: {}", String::from_utf8_lossy(&r.stderr));
    let r = objcopy.run(&["-O", "binary", "-j", ".text", o.to_str().unwrap(), b.to_str().unwrap()]).unwrap();
    assert!(r.status.success());
    Some(std::fs::read(&b).unwrap())
}

#[test]
fn upstream_openssl_riscv64_files_assemble_like_gnu_as() {
    let dir = oracle::toolchain_dir().join("openssl-asm");
    if !dir.join("aes-riscv64.s").exists() {
        oracle::missing::<()>("OpenSSL 3.5.7 perlasm outputs (.toolchain/openssl-asm)");
        return;
    }
    for (file, tgt, march) in [
        ("aes-riscv64.s", "rv64gc", "rv64gc"),
        ("ghash-riscv64.s", "rv64gc-zbc+zbkb", "rv64gc_zbb_zbc_zbkb"),
        ("chacha-riscv64-v-zbb.s", "rv64gcv", "rv64gcv_zbb"),
        ("ghash-riscv64-zvkg.s", "rva23", "rv64gcv_zba_zbb_zbs_zvkg"),
    ] {
        let src = std::fs::read_to_string(dir.join(file)).unwrap();
        let (base, extra) = tgt.split_once('+').unwrap_or((tgt, ""));
        let mut t = target(base).unwrap();
        for e in extra.split('+').filter(|e| !e.is_empty()) {
            t.exts = t.exts.union(kgen_dsl::ExtSet::one(kgen_dsl::Ext::from_name(e).unwrap()));
        }
        let ours = assemble_file(&src, &t).unwrap_or_else(|e| panic!("{file}: {e}"));
        let Some(gnu) = gnu_text(&src, march, file) else { return };
        assert_eq!(ours.object.text.len(), gnu.len(), "{file}: .text size");
        assert!(ours.object.text == gnu, "{file}: .text bytes differ from GNU as");
        let syms: Vec<&str> = ours.object.symbols.iter().filter(|s| s.global).map(|s| s.name.as_str()).collect();
        println!("{file}: {} bytes of .text agree with GNU as; global symbols {syms:?}", gnu.len());
        assert!(!syms.is_empty());
    }
}

#[test]
fn syntax_errors_carry_the_line_number() {
    let t = target("rv64gc").unwrap();
    let e = assemble_file(".text\nf:\n  addi a0, a0, 1\n  frobnicate a0\n", &t).err().unwrap();
    assert_eq!(e.line, 4);
    assert!(e.msg.contains("unknown instruction `frobnicate`"), "{e}");
    let e = assemble_file(".text\n  addi a0, a0, 5000\n", &t).err().unwrap();
    assert_eq!(e.line, 2);
    assert!(e.msg.contains("out of range"), "{e}");
    let e = assemble_file(".text\n  .frob 1\n", &t).err().unwrap();
    assert!(e.msg.contains("unknown directive"), "{e}");
    let e = assemble_file(".text\n  th.extu a0, a1, 3, 1\n", &t).err().unwrap();
    assert!(e.msg.contains("xtheadbb"), "{e}");
}

#[test]
fn constant_expressions() {
    let n = HashMap::from([("K".to_string(), 5i64)]);
    assert_eq!(eval_expr("~0xFFF", &n), Some(!0xfff));
    assert_eq!(eval_expr("0+2", &n), Some(2));
    assert_eq!(eval_expr("(1<<K)-1", &n), Some(31));
    assert_eq!(eval_expr("-4*K+1", &n), Some(-19));
    assert_eq!(eval_expr("1 +", &n), None);
}

/// What compiler output needs beyond perlasm files (gcc -O3's OpenSSL SHA-2 code): a
/// conditional branch beyond ±4 KiB (GNU as inverts it over a `jal`), a load from a
/// symbol (`ld rd, .LC0`: `auipc` + `ld` from `%pcrel_lo`) and `lla rd, sym+off`; the
/// same bytes as GNU as.
#[test]
fn compiler_forms_assemble_like_gnu_as() {
    let far: String = (0..1100).map(|_| "  addi a0, a0, 1\n").collect();
    let src = format!(
        ".text\n.globl f\nf:\n  beq a1, zero, .Lfar\n  ld a5, .LC0\n  lla t0, tab+8\n  lw t1, tab-4+8\n{far}.Lfar:\n  ret\n.section .rodata\n.align 3\n.LC0:\n  .dword 42\ntab:\n  .word 1, 2, 3\n"
    );
    let t = target("rv64gc").unwrap();
    let ours = assemble_file(&src, &t).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ours.object.text.len(), 4 * (1 + 1 + 2 + 2 + 2 + 1100 + 1), "the far branch became two instructions");
    let Some(gnu) = gnu_text(&src, "rv64gc", "compiler_forms") else { return };
    assert!(ours.object.text == gnu, ".text bytes differ from GNU as");
}

/// kgen's OpenSSL `.S` files as shipped (a C comment heading them, `.set` aliases naming
/// functions defined after them, `%pcrel_hi`/`%pcrel_lo` pairs) assemble into the bytes of
/// kgen's own object, so `kgen bench --asm` times exactly what the kernels are.
#[test]
fn kgen_openssl_files_assemble_to_kgens_own_bytes() {
    let mut n = 0;
    for o in kgen::outputs::all(kgen_kernels::kernels()).into_iter().filter(|o| o.abi == kgen_dsl::Abi::Psabi && o.format == kgen::outputs::Format::S) {
        let (kernel, variant) = (o.kernel.name, o.variant.name);
        let (text, obj, t) = kgen_harness::rtl::variant_asm(o.kernel, variant).unwrap();
        let ours = assemble_file(&text, &t).unwrap_or_else(|e| panic!("{kernel} {variant}: {e}"));
        assert!(ours.object.text == obj.text, "{kernel} {variant}: .text differs from kgen's object");
        for s in obj.symbols.iter().filter(|s| s.global) {
            let a = ours.object.symbols.iter().find(|x| x.name == s.name).unwrap_or_else(|| panic!("{kernel} {variant}: no symbol {}", s.name));
            assert_eq!((a.offset, a.global), (s.offset, true), "{kernel} {variant}: symbol {}", s.name);
        }
        n += 1;
    }
    assert!(n >= 10, "only {n} OpenSSL files");
}

#[test]
fn aliases_and_c_comments() {
    let t = target("rv64gc").unwrap();
    let src = "/* a heading\n   over two lines */\n.text\n.globl g\n.set g, f\nf: /* inline */ addi a0, a0, 1\n  ret\n";
    let a = assemble_file(src, &t).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.object.text.len(), 8, "both instructions, the comment gone");
    let g = a.object.symbols.iter().find(|s| s.name == "g").expect("the alias is a symbol");
    assert!(g.global && g.offset == 0, "{g:?}");
    // An alias is a branch target too, and may name a local label; `/*` in a string, after
    // `#` or after `//` opens no comment.
    let src = ".text\n.set h, .Lx\n.set k, .Lx\n  j k\n  nop # /* not a comment\n  nop // nor /* this\n.Lx:\n  ret\n.section .rodata\n.ascii \"/*\"\n";
    let a = assemble_file(src, &t).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.object.text.len(), 16, "j, two nops, ret");
    let direct = assemble_file(&src.replace("j k", "j .Lx"), &t).unwrap_or_else(|e| panic!("{e}"));
    assert!(a.object.text == direct.object.text, "j k assembles as j .Lx");
    assert_eq!(a.object.symbols.iter().find(|s| s.name == "h").map(|s| s.offset), Some(12));
    // `#` and `;` inside a string, after an escaped quote, are bytes (gcc writes tables so:
    // 6.12's AES S-box); after the string, `;` separates statements and `#` is a comment.
    let a = assemble_file(".text\nf:\n  ret\n.section .rodata\n.ascii \"\\\"#;\\043\"; .byte 7 # \"\n", &t).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.object.rodata, b"\"#;#\x07", "the string's bytes, then the byte");
    // %pcrel_lo of an alias of the auipc's label is %pcrel_lo of the label.
    let src = ".text\n.set a, .Lp\nf:\n.Lp: auipc t0, %pcrel_hi(f)\n  addi t0, t0, %pcrel_lo(a)\n  ret\n";
    let a = assemble_file(src, &t).unwrap_or_else(|e| panic!("{e}"));
    let direct = assemble_file(&src.replace("%pcrel_lo(a)", "%pcrel_lo(.Lp)"), &t).unwrap_or_else(|e| panic!("{e}"));
    assert!(a.object.text == direct.object.text, "%pcrel_lo(a) assembles as %pcrel_lo(.Lp)");
    // %pcrel_lo of a numeric label.
    let a = assemble_file(".text\nf:\n1: auipc t0, %pcrel_hi(f)\n  addi t0, t0, %pcrel_lo(1b)\n  ret\n", &t).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.object.text.len(), 12);
    let e = assemble_file(".text\n.set g, nowhere\nf:\n  ret\n", &t).err().unwrap();
    assert_eq!(e.line, 2);
    assert!(e.msg.contains("`nowhere` is not a label"), "{e}");
    let e = assemble_file(".text\n.set g, K\n.equ K, 4\nf:\n  ret\n", &t).err().unwrap();
    assert!(e.line == 2 && e.msg.contains("constant defined after this line"), "{e}");
    let e = assemble_file(".text\nf:\n  ret\n/* never closed\n", &t).err().unwrap();
    assert!(e.line == 4 && e.msg.contains("never closed"), "{e}");
    let e = assemble_file(".text\nf:\n  addi a0, a0, %pcrel_hi(f)\n", &t).err().unwrap();
    assert!(e.msg.contains("belongs in an auipc"), "{e}");
}
