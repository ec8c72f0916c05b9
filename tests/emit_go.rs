//! Go output: the kernels built for the Go ABI, written as Go packages (`.s` + `.go`) with
//! a `_test.go`, pass `go vet` (asmdecl checks the frame offsets and sizes against the
//! declarations), build with `go test -c` for riscv64 and run under QEMU:
//! - AES computes the FIPS-197 vectors: c906 on `-cpu thead-c906` (and not on `-cpu rv64`:
//!   negative control), rv64gc on `-cpu rv64`;
//! - Poly1305, ChaCha20 and GHASH (every variant; the vector ones under T-Head's QEMU
//!   `c906fdv` and `rv64,v=true` at VLEN 128/256/512, with Go frames for their spills) agree with
//!   golang.org/x/crypto's poly1305 and chacha20 (RFC 8439 vectors, every length 0..=1100
//!   at random offsets, split updates, in place), x/crypto rejects the kernels' tags with a
//!   bit flipped, the c906 variants die with SIGILL on `-cpu rv64`, and a package with one
//!   instruction of the kernel changed fails its test (negative controls);
//! - SHA-256 and SHA-512 (every variant, the schedule in a Go frame) agree with the standard
//!   library's crypto/sha256 and crypto/sha512 (every length 0..=1100 at offsets 0..7); the
//!   same negative controls. (That the frame's schedule is wiped at return is the checker's
//!   proof, as for every kernel.)
//!
//! Unsupported modules give errors, not files.

use kgen_harness::oracle;
use kgen::outputs::{self, Format};
use kgen_dsl::Abi;
use kgen_emit::go::{go_files, go_name, go_type};
use kgen_emit::{Compat, EmitError, EmitOptions};
use std::path::{Path, PathBuf};

mod common;

fn opts() -> EmitOptions {
    EmitOptions { command: "kgen emit aes --abi go".into(), ..Default::default() }
}

fn aes(variant: &str, abi: Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel("aes").unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{e}"))
}

/// The package's test: FIPS-197 encrypt/decrypt for the three key sizes, and the set-key
/// error results (through the int32 result slot).
fn test_go(v: &str) -> String {
    // The Go names' variant part (`aesEncryptC906` → `C906`).
    let sfx = kgen_kernels::aes::ENCRYPT.go_name(v).unwrap().trim_start_matches("aesEncrypt").to_string();
    format!(
        r#"//go:build riscv64 && !purego

package aes

import (
	"encoding/hex"
	"testing"
)

func unhex(s string) []byte {{
	b, err := hex.DecodeString(s)
	if err != nil {{
		panic(err)
	}}
	return b
}}

func TestFIPS197(t *testing.T) {{
	pt := unhex("00112233445566778899aabbccddeeff")
	for _, c := range []struct{{ key, ct string }}{{
		{{"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"}},
		{{"000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"}},
		{{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"}},
	}} {{
		key := unhex(c.key)
		var ks, dks [244]byte
		if r := aesSetEncryptKey{sfx}(&key[0], int32(len(key)*8), &ks[0]); r != 0 {{
			t.Fatalf("set_encrypt_key(%d bits) = %d", len(key)*8, r)
		}}
		out := make([]byte, 16)
		aesEncrypt{sfx}(&pt[0], &out[0], &ks[0])
		if got := hex.EncodeToString(out); got != c.ct {{
			t.Errorf("AES-%d encrypt: got %s, want %s", len(key)*8, got, c.ct)
		}}
		if r := aesSetDecryptKey{sfx}(&key[0], int32(len(key)*8), &dks[0]); r != 0 {{
			t.Fatalf("set_decrypt_key(%d bits) = %d", len(key)*8, r)
		}}
		back := make([]byte, 16)
		aesDecrypt{sfx}(&out[0], &back[0], &dks[0])
		if got := hex.EncodeToString(back); got != hex.EncodeToString(pt) {{
			t.Errorf("AES-%d decrypt: got %s", len(key)*8, got)
		}}
	}}
}}

func TestSetKeyErrors(t *testing.T) {{
	key := make([]byte, 32)
	var ks [244]byte
	if r := aesSetEncryptKey{sfx}(nil, 128, &ks[0]); r != -1 {{
		t.Errorf("nil key: got %d, want -1", r)
	}}
	if r := aesSetEncryptKey{sfx}(&key[0], 100, &ks[0]); r != -2 {{
		t.Errorf("100 bits: got %d, want -2", r)
	}}
}}
"#
    )
}

fn run(what: &str, c: &mut std::process::Command) -> std::process::Output {
    let o = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(o.status.success(), "{what} failed ({}):\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    o
}

fn go_cmd(go: &oracle::Tool, dir: &Path) -> std::process::Command {
    let mut c = go.command();
    let cache = oracle::repo_root().join("target").join("kgen-scratch").join("go-cache");
    c.current_dir(dir)
        .env("GOARCH", "riscv64")
        .env("GOOS", "linux")
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GOCACHE", &cache)
        .env("GOPATH", dir.join("gopath"));
    c
}

#[test]
fn aes_go_package_vets_builds_and_runs_under_qemu() {
    let (Some(go), Some(qemu)) = (oracle::go(), oracle::qemu()) else { return };
    for (variant, cpu, bad_cpu) in [("c906", "thead-c906", Some("rv64")), ("rv64gc", "rv64", None)] {
        let m = aes(variant, Abi::Go);
        let (s, g) = go_files(&m, &opts(), "aes").unwrap_or_else(|e| panic!("{variant}: {e}"));
        let head = "// SPDX-License-Identifier: BSD-3-Clause OR MIT\n//go:build riscv64 && !purego\n\n";
        assert!(s.starts_with(head) && g.starts_with(head), "{s}\n{g}");
        assert!(s.contains("#include \"textflag.h\""));
        assert!(g.contains("\npackage aes\n"));
        assert!(s.contains(&format!("TEXT ·aesEncrypt{}(SB), NOSPLIT, $0-24", if variant == "c906" { "C906" } else { "Rv64gc" })), "{s}");
        assert!(s.contains("GLOBL ·kgen_aes_") && s.contains("RODATA|NOPTR"));
        // Every instruction of the module is one line (a Go mnemonic or a WORD), a
        // `MOV $·sym(SB)` stands for an auipc+addi pair, and each `kgen_ret:` epilogue adds
        // one RET (the argument loads and the result store are the `(FP)` lines).
        let body: Vec<&str> = s.lines().filter(|l| l.starts_with('\t') && l[1..].starts_with(|c: char| c.is_ascii_uppercase()) && !l.contains("(FP)")).collect();
        let movs = body.iter().filter(|l| l.starts_with("\tMOV\t$·")).count();
        let epilogues = s.lines().filter(|l| *l == "kgen_ret:").count();
        let insts: usize = m.codes().unwrap().iter().map(|c| c.insts.len()).sum();
        assert_eq!(body.len() + movs - epilogues, insts, "{variant}: instruction count");
        assert_eq!(movs, m.object().unwrap().relocs.len() / 2);
        // Go mnemonics where Go has them; WORDs only for what it lacks (the T-Head ones).
        let words = body.iter().filter(|l| l.starts_with("\tWORD")).count();
        assert!(body.len() > words + 500, "{variant}: {words} of {} lines are WORDs", body.len());
        assert!(body.iter().any(|l| l.starts_with("\tMOVWU\t") || l.starts_with("\tMOVBU\t")), "{variant}: no Go-syntax load");
        assert_eq!(words > 0, variant == "c906", "{variant}: {words} WORDs");

        let dir = oracle::scratch(&format!("emit-go-{variant}"));
        std::fs::write(dir.join("go.mod"), "module kgen.test/aes\n\ngo 1.23\n").unwrap();
        std::fs::write(dir.join("aes_riscv64.s"), &s).unwrap();
        std::fs::write(dir.join("aes_riscv64.go"), &g).unwrap();
        std::fs::write(dir.join("aes_riscv64_test.go"), test_go(variant)).unwrap();
        run(&format!("{variant}: go vet"), go_cmd(&go, &dir).arg("vet").arg("."));
        let gofmt = go.program.with_file_name("gofmt");
        let o = run("gofmt -l", std::process::Command::new(&gofmt).arg("-l").arg(dir.join("aes_riscv64.go")));
        assert!(o.stdout.is_empty(), "{variant}: the generated .go is not gofmt-formatted");
        run(&format!("{variant}: go test -c"), go_cmd(&go, &dir).args(["test", "-c", "-o", "aes.test", "."]));
        let exe = dir.join("aes.test");
        let o = run(&format!("{variant} under -cpu {cpu}"), qemu.command().args(["-cpu", cpu]).arg(&exe).arg("-test.v"));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("--- PASS: TestFIPS197") && out.contains("--- PASS: TestSetKeyErrors") && out.trim_end().ends_with("PASS"), "{out}");
        if let Some(bad) = bad_cpu {
            let o = qemu.command().args(["-cpu", bad]).arg(&exe).output().unwrap();
            assert!(!o.status.success(), "{variant} under -cpu {bad} must fail (T-Head instructions)");
            assert!(String::from_utf8_lossy(&o.stderr).contains("SIGILL"), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
}

#[test]
fn go_output_refuses_what_go_cannot_run() {
    let unsupported = |r: Result<(String, String), EmitError>| match r {
        Err(EmitError::Unsupported(s)) => s,
        Err(e) => panic!("wrong error kind: {e}"),
        Ok(_) => panic!("accepted"),
    };
    // Built for the psABI: refused as such.
    let m = aes("rv64gc", Abi::Psabi);
    assert!(unsupported(go_files(&m, &opts(), "aes")).contains("go ABI"));
    // The psABI build saves s1 on the stack: Go output refuses frames.
    let mut m2 = m.clone();
    m2.abi = Abi::Go;
    assert!(unsupported(go_files(&m2, &opts(), "aes")).contains("frame"));
    // A psABI function that writes s11 (X27, Go's g) without a frame.
    let mut m3 = aes("rv64gc", Abi::Go);
    let f = &mut m3.funcs[0].func;
    let i = f.items.iter().position(|it| matches!(it, kgen_dsl::func::Item::Inst(ii) if ii.row().mnemonic == "addi" && matches!(ii.ops[2], kgen_dsl::Opnd::Imm(_)))).unwrap();
    if let kgen_dsl::func::Item::Inst(ii) = &mut f.items[i] {
        ii.ops[0] = kgen_dsl::Opnd::Reg(kgen_dsl::Reg::X(27));
    }
    assert!(unsupported(go_files(&m3, &opts(), "aes")).contains("s11"));
    // An auipc whose addi was moved away.
    let mut m4 = aes("rv64gc", Abi::Go);
    let f = &mut m4.funcs[0].func;
    let au = f.items.iter().position(|it| matches!(it, kgen_dsl::func::Item::Inst(ii) if ii.row().mnemonic == "auipc")).unwrap();
    let nop = kgen_dsl::func::Item::Inst(kgen_dsl::func::InstItem::new(
        kgen_dsl::table().lookup("addi").unwrap(),
        vec![kgen_dsl::Opnd::Reg(kgen_dsl::Reg::X(0)), kgen_dsl::Opnd::Reg(kgen_dsl::Reg::X(0)), kgen_dsl::Opnd::Imm(0)],
        true,
    ));
    f.items.insert(au + 1, nop);
    assert!(unsupported(go_files(&m4, &opts(), "aes")).contains("not directly followed"));
    // Not a package name.
    assert!(unsupported(go_files(&aes("rv64gc", Abi::Go), &opts(), "func")).contains("package"));
    // A Go-syntax instruction reading tp (x4), which Go's assembler cannot name as X4.
    let mut m5 = aes("rv64gc", Abi::Go);
    let f = &mut m5.funcs[0].func;
    let i = f.items.iter().position(|it| matches!(it, kgen_dsl::func::Item::Inst(ii) if ii.row().mnemonic == "xor")).unwrap();
    if let kgen_dsl::func::Item::Inst(ii) = &mut f.items[i] {
        ii.ops[2] = kgen_dsl::Opnd::Reg(kgen_dsl::Reg::X(4));
    }
    assert!(unsupported(go_files(&m5, &opts(), "aes")).contains("no name for x4"));
    // A branch whose target is a number, not a label (Go resolves targets by label).
    let mut m6 = aes("rv64gc", Abi::Go);
    let f = &mut m6.funcs[0].func;
    let i = f.items.iter().position(|it| matches!(it, kgen_dsl::func::Item::Inst(ii) if ii.row().go.is_some() && matches!(ii.ops.last(), Some(kgen_dsl::Opnd::Label(_))))).unwrap();
    if let kgen_dsl::func::Item::Inst(ii) = &mut f.items[i] {
        *ii.ops.last_mut().unwrap() = kgen_dsl::Opnd::Imm(8);
    }
    assert!(unsupported(go_files(&m6, &opts(), "aes")).contains("not a label"));
}

#[test]
fn go_names_and_types() {
    assert_eq!(go_name("AES_encrypt_c906").unwrap(), "aesEncryptC906");
    assert_eq!(go_name("AES_set_decrypt_key").unwrap(), "aesSetDecryptKey");
    assert_eq!(go_name("chacha20_blocks").unwrap(), "chacha20Blocks");
    assert_eq!(go_name("gcm_ghash_4bit").unwrap(), "gcmGhash4bit");
    assert!(go_name("_").is_err());
    assert!(go_name("2fast").is_err());
    use kgen_dsl::entry::{Access, Elem, Ty};
    let ptr = |elem| Ty::Ptr { elem, access: Access::In, align: 1 };
    for (t, g) in [
        (ptr(Elem::U8), "*byte"),
        (ptr(Elem::Named { name: "AES_KEY", align: 4, def: "" }), "*byte"),
        (ptr(Elem::U32), "*uint32"),
        (ptr(Elem::U64), "*uint64"),
        (ptr(Elem::U128), "*byte"),
        (Ty::Size, "uint64"),
        (Ty::I32, "int32"),
        (Ty::U32, "uint32"),
    ] {
        assert_eq!(go_type(t).unwrap().name, g, "{t:?}");
    }
    assert!(go_type(Ty::FuncTable).is_err());
}

/// The Go ABI outputs of `kernel` (what `kgen all` writes and goldens/ holds), rendered:
/// (variant, Go function names of the module's global functions, files).
fn go_outputs(kernel: &str) -> Vec<(&'static str, Vec<String>, Vec<(String, Vec<u8>)>)> {
    outputs::all(kgen_kernels::kernels())
        .into_iter()
        .filter(|o| o.kernel.name == kernel && o.abi == Abi::Go && o.format == Format::S)
        .map(|o| {
            let m = o.variant.build(Abi::Go).unwrap_or_else(|e| panic!("{kernel} {}: {e}", o.variant.name));
            let names = m.funcs.iter().filter(|l| l.global).map(|l| go_name(&l.func.name).unwrap()).collect();
            (o.variant.name, names, o.render(Compat::Binutils244).unwrap())
        })
        .collect()
}

/// A Go package directory with the kernel's generated files, a go.mod that takes
/// golang.org/x/crypto from Debian's sources, and `test` as its test file.
fn go_package(name: &str, files: &[(String, Vec<u8>)], test: &str, crypto: &Path, sys: &Path) -> PathBuf {
    let dir = oracle::scratch(&format!("emit-go-{name}"));
    let gomod = format!(
        "module kgen.test/{name}\n\ngo 1.23\n\nrequire golang.org/x/crypto v0.0.0\n\nreplace golang.org/x/crypto => {}\n\nreplace golang.org/x/sys => {}\n",
        crypto.display(),
        sys.display()
    );
    std::fs::write(dir.join("go.mod"), gomod).unwrap();
    for (rel, bytes) in files {
        std::fs::write(dir.join(Path::new(rel).file_name().unwrap()), bytes).unwrap();
    }
    std::fs::write(dir.join(format!("{name}_riscv64_test.go")), test).unwrap();
    dir
}

/// `go vet`, gofmt on the generated `.go` files, `go test -c`; returns the test binary.
fn vet_and_build(go: &oracle::Tool, dir: &Path, what: &str) -> PathBuf {
    run(&format!("{what}: go vet"), go_cmd(go, dir).arg("vet").arg("."));
    let gofmt = go.program.with_file_name("gofmt");
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "go") {
            let o = run("gofmt -l", std::process::Command::new(&gofmt).arg("-l").arg(&p));
            assert!(o.stdout.is_empty(), "{what}: {} is not gofmt-formatted", p.display());
        }
    }
    run(&format!("{what}: go test -c"), go_cmd(go, dir).args(["test", "-c", "-o", "pkg.test", "."]));
    dir.join("pkg.test")
}

/// Runs the test binary under `-cpu cpu` on the subtests matching `filter`.
fn run_tests(qemu: &oracle::Tool, cpu: &str, exe: &Path, filter: &str) -> std::process::Output {
    qemu.command().args(["-cpu", cpu]).arg(exe).args(["-test.v", "-test.run", filter]).output().unwrap()
}

/// The Go label of a variant (`64-c906` → `64C906`): the part of `go_name` after `prefix`.
fn label(go_func: &str, prefix: &str) -> String {
    go_func.strip_prefix(prefix).unwrap_or_else(|| panic!("{go_func} does not start with {prefix}")).to_string()
}

/// Copies the package and changes one instruction of `file`: the first `WORD` whose text
/// starts with one of `mnemonics` (shifts) is decoded with the ISA table, its shift amount
/// changed by one and re-encoded; or the first Go-syntax line of one of them (the Go
/// spelling the ISA table's row gives, with an immediate) gets its shift amount changed.
fn mutated_package(dir: &Path, file: &str, mnemonics: &[&str]) -> (PathBuf, String) {
    let to = dir.with_file_name(format!("{}-mutated", dir.file_name().unwrap().to_string_lossy()));
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_file() && !e.path().ends_with("pkg.test") {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    let path = to.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut changed = None;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if changed.is_none() {
                for m in mnemonics {
                    let t = kgen_dsl::table();
                    let Some(g) = t.row(t.form(m)).go else { continue };
                    let Some(rest) = l.strip_prefix(&format!("\t{}\t$", g.form.mnemonic)) else { continue };
                    let (n, tail) = rest.split_once(',').unwrap();
                    let n: i64 = n.parse().unwrap();
                    changed = Some(format!("{m} {}", l.trim()));
                    return format!("\t{}\t${},{tail}\t// (shift amount changed by the test)", g.form.mnemonic, n ^ 1);
                }
            }
            let Some(rest) = l.strip_prefix("\tWORD\t$0x") else { return l.to_string() };
            let (word, comment) = rest.split_once("\t// ").unwrap();
            if changed.is_none() && mnemonics.iter().any(|m| comment.starts_with(&format!("{m} "))) {
                let exts = kgen_dsl::target::target("c906").unwrap().exts;
                let mut inst = kgen_dsl::table().decode(u32::from_str_radix(word, 16).unwrap(), exts).expect("a WORD kgen wrote decodes");
                inst.ops[2] ^= 1;
                let w = inst.encode().expect("a shift amount one off is still in range");
                changed = Some(comment.to_string());
                return format!("\tWORD\t${w:#010x}\t// {comment} (shift amount changed by the test)");
            }
            l.to_string()
        })
        .collect();
    let changed = changed.unwrap_or_else(|| panic!("{file}: no {mnemonics:?} instruction to change"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    (to, changed)
}

/// The Go runtime reports a SIGILL and exits with status 2.
fn assert_sigill(o: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("SIGILL: illegal instruction"), "{what} must die with SIGILL, got {}:\n{err}", o.status);
}

fn assert_passed(o: &std::process::Output, what: &str, subtests: &[String], test: &str) {
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{what} failed ({}):\n{out}{}", o.status, String::from_utf8_lossy(&o.stderr));
    for s in subtests {
        assert!(out.contains(&format!("--- PASS: {test}/{s} ")), "{what}: no PASS line for {test}/{s}:\n{out}");
    }
    assert!(out.trim_end().ends_with("PASS"), "{what}:\n{out}");
}

const POLY1305_TEST_GO: &str = r#"//go:build riscv64 && !purego

package poly1305

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand"
	"testing"
	"unsafe"

	ref "golang.org/x/crypto/poly1305"
)

type impl struct {
	name   string
	init   func(ctx *byte, key *byte)
	blocks func(ctx *byte, inp *byte, len uint64, padbit uint32)
	emit   func(ctx *byte, mac *byte, nonce *uint32)
}

var impls = []impl{
IMPLS}

// tag is the RFC 8439 tag of msg by the kernel: whole blocks in calls of at most step
// bytes (a multiple of 16) with pad bit 1, then the last partial block padded with 0x01
// and zeros, with pad bit 0.
func tag(p impl, key *[32]byte, msg []byte, step int) [16]byte {
	var ctx [24]uint64 // 192 bytes, 8-byte aligned
	c := (*byte)(unsafe.Pointer(&ctx[0]))
	p.init(c, &key[0])
	full := len(msg) &^ 15
	for off := 0; off < full; off += step {
		p.blocks(c, &msg[off], uint64(min(step, full-off)), 1)
	}
	if rem := len(msg) - full; rem > 0 {
		var last [16]byte
		copy(last[:], msg[full:])
		last[rem] = 1
		p.blocks(c, &last[0], 16, 0)
	}
	var nonce [4]uint32
	for i := range nonce {
		nonce[i] = binary.LittleEndian.Uint32(key[16+4*i:])
	}
	var mac [16]byte
	p.emit(c, &mac[0], &nonce[0])
	return mac
}

func TestPoly1305(t *testing.T) {
	for _, p := range impls {
		t.Run(p.name, func(t *testing.T) {
			var key [32]byte
			k, _ := hex.DecodeString("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")
			copy(key[:], k)
			if got := tag(p, &key, []byte("Cryptographic Forum Research Group"), 16); hex.EncodeToString(got[:]) != "a8061dc1305136c6c22b8baf0c0127a9" {
				t.Fatalf("RFC 8439 2.5.2: got %x", got)
			}
			rng := rand.New(rand.NewSource(1))
			buf := make([]byte, 1100+16)
			for n := 0; n <= 1100; n++ {
				rng.Read(key[:])
				rng.Read(buf)
				off, step := rng.Intn(16), 16*(1+rng.Intn(8))
				msg := buf[off : off+n]
				var want [16]byte
				ref.Sum(&want, msg, &key)
				got := tag(p, &key, msg, step)
				if got != want {
					t.Fatalf("length %d at offset %d, %d bytes per call: got %x, want %x", n, off, step, got, want)
				}
				got[n%16] ^= 1 << (n % 8)
				if ref.Verify(&got, msg, &key) {
					t.Fatalf("length %d: x/crypto accepted a tag with a bit flipped", n)
				}
			}
		})
	}
}
"#;

const CHACHA20_TEST_GO: &str = r#"//go:build riscv64 && !purego

package chacha20

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math/rand"
	"testing"

	ref "golang.org/x/crypto/chacha20"
)

type impl struct {
	name string
	xor  func(out *byte, inp *byte, len uint64, key *uint32, counter *uint32)
}

var impls = []impl{
IMPLS}

func words(b []byte) []uint32 {
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// keystreamXOR is the kernel: dst = src ^ the keystream from block ctr on.
func keystreamXOR(p impl, dst, src []byte, key *[32]byte, nonce *[12]byte, ctr uint32) {
	k := words(key[:])
	c := append([]uint32{ctr}, words(nonce[:])...)
	var out, inp *byte
	if len(src) > 0 {
		out, inp = &dst[0], &src[0]
	}
	p.xor(out, inp, uint64(len(src)), &k[0], &c[0])
}

func TestChaCha20(t *testing.T) {
	for _, p := range impls {
		t.Run(p.name, func(t *testing.T) {
			var key [32]byte
			for i := range key {
				key[i] = byte(i)
			}
			nonce := [12]byte{7: 0x4a}
			pt := []byte("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
			ct := make([]byte, len(pt))
			keystreamXOR(p, ct, pt, &key, &nonce, 1)
			if got := hex.EncodeToString(ct); got != "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d" {
				t.Fatalf("RFC 8439 2.4.2: got %s", got)
			}
			rng := rand.New(rand.NewSource(2))
			src := make([]byte, 4096+16)
			dst := make([]byte, 4096+16)
			lengths := []int{4096}
			for n := 0; n <= 1100; n++ {
				lengths = append(lengths, n)
			}
			for _, n := range lengths {
				rng.Read(key[:])
				rng.Read(nonce[:])
				rng.Read(src)
				ctr := uint32(rng.Int31())
				in, out := src[rng.Intn(16):][:n], dst[rng.Intn(16):][:n]
				want := make([]byte, n)
				c, err := ref.NewUnauthenticatedCipher(key[:], nonce[:])
				if err != nil {
					t.Fatal(err)
				}
				c.SetCounter(ctr)
				c.XORKeyStream(want, in)
				if n%3 == 0 {
					out = in
				}
				keystreamXOR(p, out, in, &key, &nonce, ctr)
				if !bytes.Equal(out, want) {
					t.Fatalf("length %d, counter %#x, in place %v: got %x..., want %x...", n, ctr, n%3 == 0, out[:min(n, 16)], want[:min(n, 16)])
				}
			}
		})
	}
}
"#;

#[test]
fn poly1305_go_package_matches_x_crypto_under_qemu() {
    let (Some(go), Some(qemu), Some((crypto, sys))) = (oracle::go(), oracle::qemu(), common::go_x_crypto()) else { return };
    let outs = go_outputs("poly1305");
    assert_eq!(outs.len(), 4, "every Poly1305 variant has a Go build");
    let mut impls = String::new();
    let mut files = Vec::new();
    let mut labels = Vec::new();
    for (variant, names, fs) in &outs {
        assert_eq!(names.len(), 3, "{variant}: init, blocks, emit");
        let l = label(&names[0], "poly1305Init");
        assert_eq!((label(&names[1], "poly1305Blocks"), label(&names[2], "poly1305Emit")), (l.clone(), l.clone()));
        impls.push_str(&format!("\t{{\"{l}\", {}, {}, {}}},\n", names[0], names[1], names[2]));
        labels.push((variant.to_string(), l));
        files.extend(fs.iter().cloned());
    }
    let dir = go_package("poly1305", &files, &POLY1305_TEST_GO.replace("IMPLS", &impls), &crypto, &sys);
    let exe = vet_and_build(&go, &dir, "poly1305");
    let all: Vec<String> = labels.iter().map(|(_, l)| l.clone()).collect();
    assert_passed(&run_tests(&qemu, "thead-c906", &exe, "TestPoly1305"), "poly1305 under -cpu thead-c906", &all, "TestPoly1305");
    let generic: Vec<String> = labels.iter().filter(|(v, _)| v.ends_with("rv64gc")).map(|(_, l)| l.clone()).collect();
    assert_eq!(generic.len(), 2);
    assert_passed(&run_tests(&qemu, "rv64", &exe, "TestPoly1305/Rv64gc$"), "poly1305 rv64gc under -cpu rv64", &generic, "TestPoly1305");
    // Negative controls: the c906 variants need T-Head instructions; a changed shift in one
    // variant's init makes its test fail against x/crypto.
    assert_sigill(&run_tests(&qemu, "rv64", &exe, "TestPoly1305/C906$"), "the c906 variants under -cpu rv64");
    let (bad, changed) = mutated_package(&dir, "poly1305_32_rv64gc_riscv64.s", &["srli"]);
    let exe = vet_and_build(&go, &bad, "poly1305 (mutated)");
    let o = run_tests(&qemu, "rv64", &exe, "TestPoly1305/32Rv64gc$");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("--- FAIL: TestPoly1305/32Rv64gc") && out.contains("RFC 8439 2.5.2: got"), "`{changed}` changed must fail the test:\n{out}");
}

#[test]
fn chacha20_go_package_matches_x_crypto_under_qemu() {
    let (Some(go), Some(qemu), Some((crypto, sys))) = (oracle::go(), oracle::qemu(), common::go_x_crypto()) else { return };
    let Some(thead) = oracle::xuantie_qemu() else { return };
    let outs = go_outputs("chacha20");
    let variants: Vec<&str> = outs.iter().map(|o| o.0).collect();
    assert_eq!(variants, ["c906", "c906-novector", "rv64gcv", "rv64gc", "rva23"], "every ChaCha20 variant has a Go build");
    let mut impls = String::new();
    let mut files = Vec::new();
    let mut labels = Vec::new();
    for (variant, names, fs) in &outs {
        assert_eq!(names.len(), 1, "{variant}");
        let l = label(&names[0], "chaCha20Ctr32");
        impls.push_str(&format!("\t{{\"{l}\", {}}},\n", names[0]));
        labels.push(l);
        files.extend(fs.iter().cloned());
    }
    let sub = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    // The lane variants spill under Go's registers and keep their slots in a Go frame.
    let text = |f: &str| String::from_utf8(files.iter().find(|(n, _)| n.ends_with(f)).unwrap().1.clone()).unwrap();
    assert!(text("chacha20_c906_riscv64.s").contains("TEXT ·chaCha20Ctr32C906(SB), NOSPLIT, $"), "a framed NOSPLIT TEXT line");
    assert!(!text("chacha20_c906_riscv64.s").contains("NOSPLIT, $0-"), "the c906 lanes need a frame under Go");
    let dir = go_package("chacha20", &files, &CHACHA20_TEST_GO.replace("IMPLS", &impls), &crypto, &sys);
    let exe = vet_and_build(&go, &dir, "chacha20");
    // XTheadVector: T-Head's QEMU; the scalar C906 variants also on upstream QEMU's c906.
    assert_passed(&run_tests(&thead, "c906fdv", &exe, "TestChaCha20/(C906|C906Novector|Rv64gc)$"), "chacha20 under T-Head's -cpu c906fdv", &sub(&["C906", "C906Novector", "Rv64gc"]), "TestChaCha20");
    assert_passed(&run_tests(&qemu, "thead-c906", &exe, "TestChaCha20/(C906Novector|Rv64gc)$"), "chacha20 under -cpu thead-c906", &sub(&["C906Novector", "Rv64gc"]), "TestChaCha20");
    for vlen in [128, 256, 512] {
        let cpu = format!("rv64,v=true,vlen={vlen},zbb=true,zvkb=true");
        assert_passed(&run_tests(&qemu, &cpu, &exe, "TestChaCha20/(Rv64gcv|Rva23|Rv64gc)$"), &format!("chacha20 under -cpu {cpu}"), &sub(&["Rv64gcv", "Rva23", "Rv64gc"]), "TestChaCha20");
    }
    // Negative controls: missing extensions fault; a changed shift fails against x/crypto.
    assert_sigill(&run_tests(&qemu, "rv64", &exe, "TestChaCha20/C906Novector$"), "c906-novector under -cpu rv64");
    assert_sigill(&run_tests(&qemu, "thead-c906", &exe, "TestChaCha20/C906$"), "c906 (XTheadVector) under upstream -cpu thead-c906");
    assert_sigill(&run_tests(&qemu, "rv64,zbb=true", &exe, "TestChaCha20/Rv64gcv$"), "rv64gcv under -cpu rv64 without V");
    let (bad, changed) = mutated_package(&dir, "chacha20_rv64gc_riscv64.s", &["srliw"]);
    let exe = vet_and_build(&go, &bad, "chacha20 (mutated)");
    let o = run_tests(&qemu, "rv64", &exe, "TestChaCha20/Rv64gc$");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("--- FAIL: TestChaCha20/Rv64gc") && out.contains("RFC 8439 2.4.2: got"), "`{changed}` changed must fail the test:\n{out}");
}

const GHASH_TEST_GO: &str = r#"//go:build riscv64 && !purego

package ghash

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/rand"
	"testing"
)

type impl struct {
	name  string
	init  func(Htable *byte, H *uint64)
	gmult func(Xi *uint64, Htable *byte)
	ghash func(Xi *uint64, Htable *byte, inp *byte, len uint64)
}

var impls = []impl{
IMPLS}

func pad16(b []byte) []byte {
	return append(append([]byte{}, b...), make([]byte, (16-len(b)%16)%16)...)
}

// tag is the AES-GCM tag (96-bit nonce) with the kernel as GHASH.
func tag(p impl, key, nonce, aad, ct []byte) []byte {
	blk, _ := aes.NewCipher(key)
	var h [16]byte
	blk.Encrypt(h[:], h[:])
	hw := [2]uint64{binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:])}
	table := make([]byte, 256)
	p.init(&table[0], &hw[0])
	msg := append(pad16(aad), pad16(ct)...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(len(aad))*8)
	msg = binary.BigEndian.AppendUint64(msg, uint64(len(ct))*8)
	var xi [2]uint64
	p.ghash(&xi[0], &table[0], &msg[0], uint64(len(msg)))
	s := make([]byte, 16)
	binary.LittleEndian.PutUint64(s, xi[0])
	binary.LittleEndian.PutUint64(s[8:], xi[1])
	j0 := append(append([]byte{}, nonce...), 0, 0, 0, 1)
	blk.Encrypt(j0, j0)
	for i := range s {
		s[i] ^= j0[i]
	}
	// gmult agrees with ghash on one block from zero.
	xm := [2]uint64{xi[0], xi[1]}
	p.gmult(&xm[0], &table[0])
	var xg [2]uint64
	p.ghash(&xg[0], &table[0], &s[0], 0)
	one := make([]byte, 16)
	binary.LittleEndian.PutUint64(one, xi[0])
	binary.LittleEndian.PutUint64(one[8:], xi[1])
	p.ghash(&xg[0], &table[0], &one[0], 16)
	if xm != xg {
		return nil
	}
	return s
}

func TestGHASH(t *testing.T) {
	for _, p := range impls {
		t.Run(p.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(3))
			for n := 0; n < 300; n++ {
				key := make([]byte, []int{16, 24, 32}[n%3])
				nonce := make([]byte, 12)
				aad := make([]byte, rng.Intn(80))
				pt := make([]byte, rng.Intn(600))
				rng.Read(key)
				rng.Read(nonce)
				rng.Read(aad)
				rng.Read(pt)
				blk, _ := aes.NewCipher(key)
				g, _ := cipher.NewGCM(blk)
				sealed := g.Seal(nil, nonce, pt, aad)
				ct, want := sealed[:len(pt)], sealed[len(pt):]
				got := tag(p, key, nonce, aad, ct)
				if got == nil {
					t.Fatalf("case %d: gmult disagrees with ghash", n)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("case %d (key %d bytes, aad %d, pt %d): tag %x, crypto/cipher %x", n, len(key), len(aad), len(pt), got, want)
				}
			}
		})
	}
}
"#;

#[test]
fn ghash_go_package_matches_crypto_cipher_under_qemu() {
    let (Some(go), Some(qemu), Some((crypto, sys))) = (oracle::go(), oracle::qemu(), common::go_x_crypto()) else { return };
    let Some(thead) = oracle::xuantie_qemu() else { return };
    let outs = go_outputs("ghash");
    let variants: Vec<&str> = outs.iter().map(|o| o.0).collect();
    assert_eq!(variants, ["c906", "c906-novector", "rv64gc", "rv64gc-zbc"], "every GHASH variant has a Go build");
    let mut impls = String::new();
    let mut files = Vec::new();
    let mut labels = Vec::new();
    for (variant, names, fs) in &outs {
        assert_eq!(names.len(), 3, "{variant}: init, gmult, ghash");
        let l = label(&names[0], "gcmInit");
        impls.push_str(&format!("\t{{\"{l}\", {}, {}, {}}},\n", names[0], names[1], names[2]));
        labels.push(l);
        files.extend(fs.iter().cloned());
    }
    // The vector path keeps 1.5 KiB of operands on the stack: a Go frame too large for
    // NOSPLIT, so the function starts with Go's stack check.
    let s = String::from_utf8(files.iter().find(|(n, _)| n.ends_with("ghash_c906_riscv64.s")).unwrap().1.clone()).unwrap();
    assert!(s.contains("TEXT ·gcmGhashC906(SB), 0, $"), "gcmGhashC906 has a frame over the nosplit limit");
    let dir = go_package("ghash", &files, &GHASH_TEST_GO.replace("IMPLS", &impls), &crypto, &sys);
    let exe = vet_and_build(&go, &dir, "ghash");
    assert_passed(&run_tests(&thead, "c906fdv", &exe, "TestGHASH/(C906|C906Novector|Rv64gc)$"), "ghash under T-Head's -cpu c906fdv", &labels[..3], "TestGHASH");
    assert_passed(&run_tests(&qemu, "thead-c906", &exe, "TestGHASH/(C906Novector|Rv64gc)$"), "ghash under -cpu thead-c906", &labels[1..3], "TestGHASH");
    assert_passed(&run_tests(&qemu, "rv64,zbb=true,zbc=true", &exe, "TestGHASH/Rv64gcZbc$"), "ghash zbc under -cpu rv64,zbc=true", &labels[3..], "TestGHASH");
    // Negative controls: missing extensions fault; a changed shift fails against crypto/cipher.
    assert_sigill(&run_tests(&qemu, "rv64", &exe, "TestGHASH/C906Novector$"), "c906-novector under -cpu rv64");
    assert_sigill(&run_tests(&qemu, "thead-c906", &exe, "TestGHASH/C906$"), "c906 (XTheadVector) under upstream -cpu thead-c906");
    assert_sigill(&run_tests(&qemu, "rv64,zbc=false", &exe, "TestGHASH/Rv64gcZbc$"), "rv64gc-zbc under -cpu rv64,zbc=false");
    let (bad, changed) = mutated_package(&dir, "ghash_rv64gc_riscv64.s", &["srli"]);
    let exe = vet_and_build(&go, &bad, "ghash (mutated)");
    let o = run_tests(&qemu, "rv64", &exe, "TestGHASH/Rv64gc$");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("--- FAIL: TestGHASH/Rv64gc"), "`{changed}` changed must fail the test:\n{out}");
}

/// The SHA-2 Go builds' test: every message length 0..=1100 at offsets 0..7, padded here
/// and compressed in two calls (the second with a length that is not a whole number of
/// blocks: the kernel rounds it down), against the standard library's crypto/sha256 or
/// crypto/sha512.
const SHA2_TEST_GO: &str = r#"//go:build riscv64 && !purego

package PKG

import (
	"bytes"
	ref "crypto/PKG"
	"encoding/binary"
	"math/rand"
	"testing"
)

type impl struct {
	name  string
	block func(dig *WORD, p *byte, len uint64)
}

var impls = []impl{
IMPLS}

var iv = [8]WORD{IV}

func digest(f impl, msg []byte, off int) []byte {
	padded := append(append([]byte{}, msg...), 0x80)
	for len(padded)%BLOCK != BLOCK-2*WS {
		padded = append(padded, 0)
	}
	padded = append(padded, make([]byte, 2*WS-8)...)
	padded = binary.BigEndian.AppendUint64(padded, uint64(len(msg))*8)
	buf := make([]byte, len(padded)+BLOCK+8)
	p := buf[off:]
	copy(p, padded)
	h := iv
	cut := len(padded) / BLOCK / 2 * BLOCK
	f.block(&h[0], &p[0], uint64(cut))
	f.block(&h[0], &p[cut], uint64(len(padded)-cut+BLOCK-1))
	out := make([]byte, 0, 8*WS)
	for _, w := range h {
		out = binary.BigEndian.APPEND(out, w)
	}
	return out
}

func TestSHA(t *testing.T) {
	for _, f := range impls {
		t.Run(f.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(5))
			for n := 0; n <= 1100; n++ {
				msg := make([]byte, n)
				rng.Read(msg)
				got := digest(f, msg, n%8)
				want := ref.SUM(msg)
				if !bytes.Equal(got, want[:]) {
					t.Fatalf("length %d: %x, crypto/PKG %x", n, got, want)
				}
			}
		})
	}
}
"#;

#[test]
fn sha2_go_packages_match_the_standard_library_under_qemu() {
    let (Some(go), Some(qemu), Some((crypto, sys))) = (oracle::go(), oracle::qemu(), common::go_x_crypto()) else { return };
    for (kernel, ws, block, iv, mutate) in [
        ("sha256", 4, 64, "0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19", "th.srriw"),
        (
            "sha512",
            8,
            128,
            "0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1, 0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179",
            "th.srri",
        ),
    ] {
        let outs = go_outputs(kernel);
        let variants: Vec<&str> = outs.iter().map(|o| o.0).collect();
        assert_eq!(variants, ["c906", "rv64gc", "rv64gc-zbb"], "{kernel}: every variant has a Go build");
        let (mut impls, mut files, mut labels) = (String::new(), Vec::new(), Vec::new());
        for (variant, names, fs) in &outs {
            assert_eq!(names.len(), 1, "{kernel} {variant}: one block function");
            let l = label(&names[0], &format!("{kernel}Block"));
            impls.push_str(&format!("\t{{\"{l}\", {}}},\n", names[0]));
            labels.push(l);
            files.extend(fs.iter().cloned());
        }
        let (word, append, sum) = if ws == 4 { ("uint32", "AppendUint32", "Sum256") } else { ("uint64", "AppendUint64", "Sum512") };
        let test = SHA2_TEST_GO
            .replace("PKG", kernel)
            .replace("IMPLS", &impls)
            .replace("WORD", word)
            .replace("APPEND", append)
            .replace("SUM", sum)
            .replace("BLOCK", &block.to_string())
            .replace("WS", &ws.to_string())
            .replace("IV", iv);
        let dir = go_package(kernel, &files, &test, &crypto, &sys);
        let exe = vet_and_build(&go, &dir, kernel);
        assert_passed(&run_tests(&qemu, "thead-c906", &exe, "TestSHA/(C906|Rv64gc)$"), &format!("{kernel} under -cpu thead-c906"), &labels[..2], "TestSHA");
        assert_passed(&run_tests(&qemu, "rv64,zbb=true", &exe, "TestSHA/Rv64gcZbb$"), &format!("{kernel} zbb under -cpu rv64,zbb=true"), &labels[2..], "TestSHA");
        // Negative controls: missing extensions fault.
        assert_sigill(&run_tests(&qemu, "rv64", &exe, "TestSHA/C906$"), &format!("{kernel} c906 under -cpu rv64"));
        assert_sigill(&run_tests(&qemu, "rv64,zbb=false", &exe, "TestSHA/Rv64gcZbb$"), &format!("{kernel} rv64gc-zbb under -cpu rv64,zbb=false"));
        // The c906 file with one rotation amount changed (`mutate`) fails against Go's code.
        let (bad, changed) = mutated_package(&dir, &format!("{kernel}_c906_riscv64.s"), &[mutate]);
        let exe = vet_and_build(&go, &bad, &format!("{kernel} (mutated)"));
        let o = run_tests(&qemu, "thead-c906", &exe, "TestSHA/C906$");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!o.status.success() && out.contains("--- FAIL: TestSHA/C906"), "{kernel}: `{changed}` changed must fail the test:\n{out}");
    }
}

const CHACHA20_POLY1305_TEST_GO: &str = r#"//go:build riscv64 && !purego

package chacha20poly1305

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math/rand"
	"testing"
	"unsafe"

	ref "golang.org/x/crypto/chacha20poly1305"
)

func words(b []byte) []uint32 {
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// pad16 hashes b, the last partial block padded with zeros (RFC 8439's pad16).
func pad16(c *byte, b []byte) {
	whole := len(b) &^ 15
	if whole > 0 {
		poly1305Blocks32C906(c, &b[0], uint64(whole), 1)
	}
	if len(b) > whole {
		var last [16]byte
		copy(last[:], b[whole:])
		poly1305Blocks32C906(c, &last[0], 16, 1)
	}
}

// aead is RFC 8439's AEAD from kgen's functions: the whole blocks through the stitched
// seal or open, in two calls split at split; the rest through ChaCha20_ctr32 and Poly1305.
func aead(seal bool, key, nonce, aad, in, out []byte, split int) [16]byte {
	kw := words(key)
	ctr := append([]uint32{0}, words(nonce)...)
	var pk, zero [32]byte
	chaCha20Ctr32C906(&pk[0], &zero[0], 32, &kw[0], &ctr[0])
	ctx := make([]uint64, 24)
	c := (*byte)(unsafe.Pointer(&ctx[0]))
	poly1305Init32C906(c, &pk[0])
	pad16(c, aad)
	n := len(in)
	bulk := n &^ 63
	split &^= 63
	if split > bulk {
		split = bulk
	}
	f := chacha20Poly1305OpenC906
	if seal {
		f = chacha20Poly1305SealC906
	}
	ctr[0] = 1
	if split > 0 {
		f(&out[0], &in[0], uint64(split), &kw[0], &ctr[0], c)
	}
	ctr[0] = 1 + uint32(split/64)
	if n > split {
		f(&out[split], &in[split], uint64(n-split), &kw[0], &ctr[0], c)
	}
	ctr[0] = 1 + uint32(bulk/64)
	if seal {
		if n > bulk {
			chaCha20Ctr32C906(&out[bulk], &in[bulk], uint64(n-bulk), &kw[0], &ctr[0])
		}
		pad16(c, out[bulk:n])
	} else {
		pad16(c, in[bulk:n])
		if n > bulk {
			chaCha20Ctr32C906(&out[bulk], &in[bulk], uint64(n-bulk), &kw[0], &ctr[0])
		}
	}
	var lens [16]byte
	binary.LittleEndian.PutUint64(lens[:], uint64(len(aad)))
	binary.LittleEndian.PutUint64(lens[8:], uint64(n))
	poly1305Blocks32C906(c, &lens[0], 16, 1)
	s := words(pk[16:])
	var tag [16]byte
	poly1305Emit32C906(c, &tag[0], &s[0])
	return tag
}

func TestRFC8439(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(0x80 + i)
	}
	nonce, _ := hex.DecodeString("070000004041424344454647")
	aad, _ := hex.DecodeString("50515253c0c1c2c3c4c5c6c7")
	pt := []byte("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
	want := "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116" + "1ae10b594f09e26a7e902ecbd0600691"
	ct := make([]byte, len(pt))
	tag := aead(true, key, nonce, aad, pt, ct, 0)
	if got := hex.EncodeToString(append(ct, tag[:]...)); got != want {
		t.Fatalf("RFC 8439 2.8.2: got %s", got)
	}
}

func TestAEAD(t *testing.T) {
	r := rand.New(rand.NewSource(8439))
	for n := 0; n < 1500; n++ {
		ln := n
		if n > 1100 {
			ln = 1100 + r.Intn(4000)
		}
		key, nonce := make([]byte, 32), make([]byte, 12)
		r.Read(key)
		r.Read(nonce)
		aad := make([]byte, r.Intn(40))
		r.Read(aad)
		pt := make([]byte, ln)
		r.Read(pt)
		split := r.Intn(ln + 1)
		a, _ := ref.New(key)
		want := a.Seal(nil, nonce, pt, aad)
		ct := make([]byte, ln)
		var tag [16]byte
		inPlace := n%3 == 0
		if inPlace {
			copy(ct, pt)
			tag = aead(true, key, nonce, aad, ct, ct, split)
		} else {
			tag = aead(true, key, nonce, aad, pt, ct, split)
		}
		if !bytes.Equal(append(append([]byte{}, ct...), tag[:]...), want) {
			t.Fatalf("seal: length %d, aad %d, split %d, in place %v: differs from x/crypto", ln, len(aad), split, inPlace)
		}
		back := make([]byte, ln)
		if tag2 := aead(false, key, nonce, aad, ct, back, split); tag2 != tag || !bytes.Equal(back, pt) {
			t.Fatalf("open: length %d, aad %d, split %d: wrong plaintext or tag", ln, len(aad), split)
		}
	}
}
"#;

/// The ChaCha20-Poly1305 Go build (with `chacha20` c906 and `poly1305` 32-c906 in the same
/// package for the rest of the AEAD) vets, builds and matches x/crypto's chacha20poly1305
/// under T-Head's QEMU: RFC 8439 2.8.2 and 1,500 random AEADs (every length 0..1100, split
/// calls, in place). Controls: upstream QEMU's c906 (no XTheadVector) dies with SIGILL; a
/// rotation changed by one fails against x/crypto. (The package glue that would use these
/// functions from Go's crypto is another issue's.)
#[test]
fn chacha20_poly1305_go_package_matches_x_crypto_under_qemu() {
    let (Some(go), Some(qemu), Some((crypto, sys))) = (oracle::go(), oracle::qemu(), common::go_x_crypto()) else { return };
    let Some(thead) = oracle::xuantie_qemu() else { return };
    let mut files = Vec::new();
    for (k, v) in [("chacha20-poly1305", "c906"), ("chacha20", "c906"), ("poly1305", "32-c906")] {
        let m = kgen_kernels::kernel(k).unwrap().variant(v).unwrap().build(Abi::Go).unwrap_or_else(|e| panic!("{k} {v}: {e}"));
        let (s, g) = go_files(&m, &opts(), "chacha20poly1305").unwrap_or_else(|e| panic!("{k} {v}: {e}"));
        let base = format!("{}_{}_riscv64", k.replace('-', "_"), v.replace('-', "_"));
        files.push((format!("{base}.s"), s.into_bytes()));
        files.push((format!("{base}.go"), g.into_bytes()));
    }
    let dir = go_package("chacha20poly1305", &files, CHACHA20_POLY1305_TEST_GO, &crypto, &sys);
    let exe = vet_and_build(&go, &dir, "chacha20poly1305");
    let o = run_tests(&thead, "c906fdv", &exe, "Test");
    assert_passed(&o, "chacha20poly1305 under T-Head's -cpu c906fdv", &[], "TestAEAD");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("--- PASS: TestRFC8439") && out.contains("--- PASS: TestAEAD"), "{out}");
    // (RFC 8439 2.8.2's one whole block takes the scalar path: the random cases reach the lanes.)
    assert_sigill(&run_tests(&qemu, "thead-c906", &exe, "TestAEAD"), "chacha20-poly1305 c906 (XTheadVector) under upstream -cpu thead-c906");
    let (bad, changed) = mutated_package(&dir, "chacha20_poly1305_c906_riscv64.s", &["th.vsrl.vi"]);
    let exe = vet_and_build(&go, &bad, "chacha20poly1305 (mutated)");
    let o = run_tests(&thead, "c906fdv", &exe, "TestAEAD");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("--- FAIL: TestAEAD") && out.contains("seal: length"), "`{changed}` changed must fail the test:\n{out}");
}
