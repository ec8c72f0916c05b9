//! Arbitrary input never panics (issue 19, item 6). Three kinds of random input, over
//! 100,000 cases in all, each run under `catch_unwind`:
//!
//! - GNU-syntax files made of random directives, labels, mnemonics of the ISA table with
//!   random operands, and garbage, through the assembler front end (`--asm`);
//! - random `--call` argument strings through its parser;
//! - random *valid* instruction streams (the differential test's generator, printed as GNU
//!   syntax, in a frame that saves the callee-saved registers) assembled, linked and called
//!   with a buffer on the cost model (`--asm FILE --call 'f(buf:16384)'`).
//!
//! Every failure must be one line naming the file (assembler) or the symbol (call).

use kgen_harness::asmcall::{parse_call, Runner};
use kgen_dsl::asmfile::{assemble_files_with, AsmOptions};
use kgen_dsl::isa::table;
use kgen_dsl::target::target;
use kgen_sim::diff::{generate, Family};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};

const DIRECTIVES: &[&str] = &[
    ".text", ".data", ".section .rodata", ".globl f", ".global g", ".type f, @function", ".size f, .-f", ".align 3", ".balign 8", ".p2align 4",
    ".byte 1, 2, 0xff", ".half 7", ".word 0x12345678", ".dword f", ".quad 1b", ".zero 16", ".space 3", ".string \"a\\n\"", ".asciz \"x\\x41\"",
    ".set n, 3", ".equ m, n*2", ".macro mm a, b=2", ".endm", ".rept 3", ".rept 100000", ".endr", ".irp r, a0, a1", ".comm buf, 64, 8",
    ".option norvc", ".option push", ".option pop", ".attribute arch, \"rv64gc\"", ".ifdef n", ".endif", ".if 1", ".else", ".include \"x\"",
    ".fill 4, 1, 0", ".org 0x10", ".local q", ".weak w",
];
const OPERANDS: &[&str] = &[
    "a0", "a1", "t0", "t6", "x5", "x31", "x32", "zero", "sp", "ra", "s0", "v0", "v8", "v31", "v32", "f0", "0(a0)", "-8(sp)", "(a1)", "4096(t0)",
    "1b", "2f", "f", "g", "%hi(f)", "%lo(f)", "%pcrel_hi(f)", "f@plt", "0x7fffffff", "-2048", "2047", "4096", "-1", "0", "e8", "e32", "e64", "m1",
    "m4", "m8", "mf2", "ta", "ma", "tu", "d1", "v0.t", "n", "n+1", "(", ")", "", "99999999999999999999999", "\\a", "'c'", "-", "1<<70", ".",
];
const GARBAGE: &[&str] = &["#", "//", "/*", "*/", ";", "\"", "\\", ":", ",,", "@", "$", "\t", "\u{e9}", "\0", "1:", "f:", "loop:", "2:"];

fn random_line(rng: &mut impl Rng, mnemonics: &[&str]) -> String {
    match rng.random_range(0..10) {
        0..=1 => DIRECTIVES.choose(rng).unwrap().to_string(),
        2 => GARBAGE.choose(rng).unwrap().to_string() + OPERANDS.choose(rng).unwrap(),
        3 => ["f:", "1:", "2:", "g:", "loop: addi a0, a0, -1", "mm a0", "mm", "ret", "call f", "tail g", "j 1b", "la a0, buf", "li a0, 1<<40"]
            .choose(rng)
            .unwrap()
            .to_string(),
        _ => {
            let m = mnemonics.choose(rng).unwrap();
            let n = rng.random_range(0..5);
            let ops: Vec<&str> = (0..n).map(|_| *OPERANDS.choose(rng).unwrap()).collect();
            let sep = if rng.random_range(0..20) == 0 { " " } else { ", " };
            format!("{m} {}", ops.join(sep))
        }
    }
}

fn one_line_naming(err: &str, name: &str) -> Result<(), String> {
    if err.contains('\n') || !err.contains(name) {
        return Err(format!("not one line naming `{name}`: {err:?}"));
    }
    Ok(())
}

/// Runs `f` and turns a panic into an error that shows the input.
fn no_panic(input: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|e| format!("{e}\ninput:\n{input}")),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(format!("panic: {msg}\ninput:\n{input}"))
        }
    }
}

#[test]
fn random_files_and_calls_never_panic() {
    let targets = [target("c906").unwrap(), target("rv64gcv").unwrap()];
    let mnemonics: Vec<&str> = table().rows().iter().map(|r| r.mnemonic).chain(["vle8.v", "vse32.v", "vlsseg8e32.v", "vsetivli", "vmv1r.v", "nop", "mv"]).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    let files = 80_000;
    let (mut ok, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for k in 0..files {
        let lines = rng.random_range(1..10);
        let text: String = (0..lines).map(|_| random_line(&mut rng, &mnemonics) + "\n").collect();
        let t = &targets[k % 2];
        let name = format!("fuzz{k}.S");
        let r = no_panic(&text, || match assemble_files_with(&[(&name, &text)], t, AsmOptions { unknown_as_trap: k % 3 == 0, linked_alignment: k % 2 == 0 }) {
            Ok(_) => {
                ok += 1;
                Ok(())
            }
            Err(e) => {
                refused += 1;
                one_line_naming(&e.to_string(), &name)
            }
        });
        if let Err(e) = r {
            failures.push(e);
        }
    }
    // --call strings.
    let pieces = ["f", "(", ")", ",", "buf", ":", "16", "16384", "align=1", "align=3", "file=/nonexistent", "zero", "random", "0x10", "-1", "999999999999", "=", "x", " "];
    let calls = 10_000;
    for _ in 0..calls {
        let n = rng.random_range(1..12);
        let text: String = (0..n).map(|_| *pieces.choose(&mut rng).unwrap()).collect();
        if let Err(e) = no_panic(&text, || match parse_call(&text) {
            Ok(_) => Ok(()),
            Err(e) if e.contains('\n') => Err(format!("not one line: {e:?}")),
            Err(_) => Ok(()),
        }) {
            failures.push(e);
        }
    }
    let mut kinds: Vec<String> = failures.iter().map(|f| f.lines().next().unwrap_or("").chars().filter(|c| !c.is_ascii_digit()).collect()).collect();
    kinds.sort();
    kinds.dedup();
    for k in kinds.iter().take(20) {
        println!("failure kind: {k}");
    }
    println!("{files} random files: {ok} assembled, {refused} refused with one line naming the file; {calls} random --call strings");
    assert!(ok > 1000 && refused > 1000, "the generator should produce both assembling and failing files");
    assert!(failures.is_empty(), "{} failures, the first:\n{}", failures.len(), failures[0]);
}

#[test]
fn random_instruction_streams_run_through_asm_and_call() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1906);
    let per_file = 50;
    let files = 240;
    let (mut returned, mut faulted, mut cases) = (0, 0, 0);
    let mut asm_errors: Vec<String> = Vec::new();
    let mut failures = Vec::new();
    for k in 0..files {
        let family = [Family::Scalar, Family::XTheadScalar, Family::XTheadVector, Family::Rvv][k % 4];
        let t = family.target();
        let mut text = String::from(".text\n");
        for j in 0..per_file {
            let len = rng.random_range(1..30);
            let seed = rng.random();
            let seq = generate(family, &mut rng, len, seed);
            // A frame saving what the generator's sequences use (s0-s11, ra), the base
            // registers pointing into the buffer a0, and the vector configuration.
            text += &format!(".globl f{j}\nf{j}:\n  addi sp, sp, -112\n");
            for (i, r) in ["ra", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11"].iter().enumerate() {
                if i < 13 {
                    text += &format!("  sd {r}, {}(sp)\n", 8 * i.min(13));
                }
            }
            text += &format!("  addi s0, a0, 1024\n  addi s1, a0, 1536\n  li s2, {}\n  li s3, {}\n", seq.x[18] % 32, [1, 4, 8, 16, -8][(seq.x[19] % 5) as usize]);
            match family {
                Family::XTheadVector => text += &format!("  li t6, {}\n  th.vsetvli zero, t6, {}\n", seq.avl, kgen_dsl::text::vtype_th_text(seq.vtype as i64)),
                Family::Rvv => text += &format!("  li t6, {}\n  vsetvli zero, t6, {}\n", seq.avl, kgen_dsl::text::vtype_text(seq.vtype as i64)),
                _ => {}
            }
            // Branch targets as labels (the assembler takes no numeric offsets).
            for (n, i) in seq.insts.iter().enumerate() {
                let mut line = kgen_dsl::text::print_inst(i);
                if let Some(p) = i.row().ops.iter().position(|o| matches!(o.kind, kgen_dsl::isa::Kind::Rel(_))) {
                    let to = n as i64 + i.ops[p] / 4;
                    let cut = line.rfind([',', ' ']).unwrap_or(0);
                    line = format!("{} .Lf{j}_{to}", &line[..=cut]);
                }
                text += &format!(".Lf{j}_{n}:\n  {line}\n");
            }
            text += &format!(".Lf{j}_{}:\n", seq.insts.len());
            for (i, r) in ["ra", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11"].iter().enumerate() {
                text += &format!("  ld {r}, {}(sp)\n", 8 * i);
            }
            text += "  addi sp, sp, 112\n  ret\n";
        }
        let name = format!("streams{k}.S");
        let r = no_panic(&text, || {
            let a = match assemble_files_with(&[(&name, &text)], &t, AsmOptions { unknown_as_trap: true, linked_alignment: false }) {
                Ok(a) => a,
                Err(e) => {
                    if asm_errors.len() < 3 {
                        asm_errors.push(e.to_string());
                    }
                    return one_line_naming(&e.to_string(), &name);
                }
            };
            let mut run = Runner::new(&a.object, &t).map_err(|e| format!("{name}: {e}"))?;
            run.env.m.max_steps = 20_000;
            for j in 0..per_file {
                cases += 1;
                let spec = parse_call(&format!("f{j}(buf:16384)")).map_err(|e| format!("{name}: {e}"))?;
                let p = run.prepare(&spec).map_err(|e| format!("{name}: {e}"))?;
                match run.call(&p) {
                    Ok(_) => returned += 1,
                    Err(e) => {
                        faulted += 1;
                        one_line_naming(&e, &format!("f{j}"))?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = r {
            failures.push(e);
        }
    }
    println!("assembler refusals (first 3): {asm_errors:?}");
    println!("{cases} random instruction streams called: {returned} returned, {faulted} stopped with one line naming the function");
    assert!(returned > cases / 4, "most streams should run to their return");
    assert!(failures.is_empty(), "{} failures, the first:\n{}", failures.len(), failures[0]);
}
