//! Assembly that kgen did not write, timed with `kgen bench --asm --call`: every command
//! line in docs/cli.md's list (OpenSSL's riscv64 perlasm outputs, rvv-chacha-poly's
//! `vchacha.s` and `vpoly.s`) runs as documented, and every call it times executes
//! (at least a few instructions per call, cycles at least the instructions). Every file of
//! `.toolchain/openssl-asm` must have a line.

use kgen_harness::oracle;
use std::path::Path;

/// The `kgen bench` lines of the documented block, each split into arguments as a shell
/// would (single quotes).
fn documented() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(oracle::repo_root().join("docs/cli.md")).unwrap();
    let block = doc.split("<!-- asm-files -->").nth(1).expect("docs/cli.md has the asm-files block");
    let body = block.split("```sh").nth(1).and_then(|b| b.split("```").next()).expect("a sh block");
    body.lines().filter(|l| l.starts_with("kgen bench")).map(words).collect()
}

fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

#[test]
fn every_documented_third_party_file_is_timed() {
    let root = oracle::repo_root();
    let lines = documented();
    assert!(lines.len() >= 6, "{lines:?}");
    // Every OpenSSL output the set-up script makes has its line.
    let asm_dir = oracle::toolchain_dir().join("openssl-asm");
    let Ok(rd) = std::fs::read_dir(&asm_dir) else {
        oracle::missing::<()>(&format!("OpenSSL's riscv64 assembly ({})", asm_dir.display()));
        return;
    };
    for f in rd.flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        assert!(lines.iter().any(|l| l.iter().any(|w| w.ends_with(&name))), "docs/cli.md has no command line for {name}");
    }
    for l in &lines {
        assert_eq!(l[0], "kgen");
        let files: Vec<&String> = l.iter().skip_while(|w| *w != "--asm").skip(1).take(1).collect();
        if !root.join(files[0]).exists() {
            oracle::missing::<()>(files[0]);
            continue;
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_kgen")).args(&l[1..]).current_dir(&root).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}: {}", l.join(" "), String::from_utf8_lossy(&o.stderr));
        let calls = l.iter().filter(|w| *w == "--call").count();
        let rows: Vec<Vec<&str>> = out.lines().skip(1).map(|r| r.split_whitespace().collect()).collect();
        assert_eq!(rows.len(), calls, "{out}");
        for r in &rows {
            let n = r.len();
            let (bytes, ins, cycles): (u64, u64, u64) = (r[n - 4].parse().unwrap(), r[n - 3].parse().unwrap(), r[n - 2].parse().unwrap());
            assert!(ins >= 5 && cycles >= ins && bytes >= 16, "{}: {r:?}", Path::new(files[0]).display());
        }
        println!("{}\n{out}", l.join(" "));
    }
}

#[test]
fn the_word_splitter_keeps_quoted_spaces() {
    assert_eq!(words("kgen bench --call 'f(buf:16, 3)' --x"), vec!["kgen", "bench", "--call", "f(buf:16, 3)", "--x"]);
}
