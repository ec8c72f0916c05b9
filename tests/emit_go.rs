//! Go output: the AES kernels built for the Go ABI, written as a Go package (`.s` + `.go`)
//! with a `_test.go`, pass `go vet` (asmdecl checks the frame offsets and sizes against the
//! declarations), build with `go test -c` for riscv64, and compute the FIPS-197 vectors
//! under QEMU: c906 on `-cpu thead-c906` (and not on `-cpu rv64`: negative control), rv64gc
//! on `-cpu rv64`. Unsupported modules give errors, not files.

use kgen::oracle;
use kgen_dsl::Abi;
use kgen_emit::go::{go_files, go_name, go_type};
use kgen_emit::{EmitError, EmitOptions};
use std::path::Path;

fn opts() -> EmitOptions {
    EmitOptions { command: "kgen emit aes --abi go".into(), ..Default::default() }
}

fn aes(variant: &str, abi: Abi) -> kgen_dsl::Module {
    kgen_kernels::kernel("aes").unwrap().variant(variant).unwrap().build(abi).unwrap_or_else(|e| panic!("{e}"))
}

/// The package's test: FIPS-197 encrypt/decrypt for the three key sizes, and the set-key
/// error results (through the int32 result slot).
fn test_go(v: &str) -> String {
    let sfx = v.replace("rv64gc", "Rv64gc").replace("c906", "C906");
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
        assert!(s.starts_with("//go:build riscv64 && !purego\n") && g.starts_with("//go:build riscv64 && !purego\n"));
        assert!(s.contains("#include \"textflag.h\""));
        assert!(g.contains("\npackage aes\n"));
        assert!(s.contains(&format!("TEXT ·aesEncrypt{}(SB), NOSPLIT, $0-24", if variant == "c906" { "C906" } else { "Rv64gc" })), "{s}");
        assert!(s.contains("GLOBL ·kgen_aes_") && s.contains("RODATA|NOPTR"));
        // Every instruction word of the module appears: as a WORD, or inside a MOV/RET/JMP.
        let words = s.lines().filter(|l| l.trim_start().starts_with("WORD")).count();
        let movs = s.lines().filter(|l| l.trim_start().starts_with("MOV\t$·")).count();
        let rets = s.lines().filter(|l| l.contains("// jalr zero, 0(ra)")).count();
        let insts: usize = m.codes().unwrap().iter().map(|c| c.insts.len()).sum();
        assert_eq!(words + 2 * movs + rets, insts, "{variant}: instruction count");
        assert_eq!(movs, m.object().unwrap().relocs.len() / 2);

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
    let nop = kgen_dsl::func::Item::Inst(kgen_dsl::func::InstItem {
        form: kgen_dsl::table().lookup("addi").unwrap(),
        ops: vec![kgen_dsl::Opnd::Reg(kgen_dsl::Reg::X(0)), kgen_dsl::Opnd::Reg(kgen_dsl::Reg::X(0)), kgen_dsl::Opnd::Imm(0)],
        comment: None,
        loc: None,
        public_def: true,
    });
    f.items.insert(au + 1, nop);
    assert!(unsupported(go_files(&m4, &opts(), "aes")).contains("not directly followed"));
    // Not a package name.
    assert!(unsupported(go_files(&aes("rv64gc", Abi::Go), &opts(), "func")).contains("package"));
}

#[test]
fn go_names_and_types() {
    assert_eq!(go_name("AES_encrypt_c906").unwrap(), "aesEncryptC906");
    assert_eq!(go_name("AES_set_decrypt_key").unwrap(), "aesSetDecryptKey");
    assert_eq!(go_name("chacha20_blocks").unwrap(), "chacha20Blocks");
    assert_eq!(go_name("gcm_ghash_4bit").unwrap(), "gcmGhash4bit");
    assert!(go_name("_").is_err());
    assert!(go_name("2fast").is_err());
    for (c, g) in [
        ("const unsigned char *", "*byte"),
        ("AES_KEY *", "*byte"),
        ("const u32 *", "*uint32"),
        ("unsigned int *", "*uint32"),
        ("uint64_t *", "*uint64"),
        ("size_t", "uint64"),
        ("const int", "int32"),
        ("unsigned int", "uint32"),
        ("u32", "uint32"),
        ("long", "int64"),
        ("u8", "uint8"),
    ] {
        assert_eq!(go_type(c).unwrap().name, g, "{c}");
    }
    assert!(go_type("float").is_err());
    assert!(go_type("char **").is_err());
}
