//! kgen's own ELF objects and JIT images, checked against GNU binutils 2.44, a static
//! riscv64 link, QEMU user mode and kgen-sim:
//! - the `.text`/`.rodata` bytes of kgen's ELF equal GNU as's for the OpenSSL `.S`;
//! - `readelf` lists the PC-relative relocations GNU as writes (without R_RISCV_RELAX),
//!   the symbols, and the double-float `e_flags`;
//! - the object links into a static C program that computes the FIPS-197 AES-128 vector
//!   under `qemu-riscv64 -cpu thead-c906`, and dies with SIGILL under `-cpu rv64` (the
//!   c906 variant uses T-Head instructions) while the rv64gc variant runs there;
//! - a JIT image runs AES in kgen-sim at the JIT buffer's own address, and the same image
//!   linked for a fixed address runs natively (under QEMU) from a small C loader.

use kgen_harness::oracle::{self, Binutils};
use kgen_dsl::{Abi, Module};
use kgen_emit::{elf, jit, EmitOptions};
use kgen_sim::mem::Perm;
use kgen_sim::Machine;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Output;

const KEY: &str = "000102030405060708090a0b0c0d0e0f";
const PT: &str = "00112233445566778899aabbccddeeff";
const CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn aes(variant: &str) -> Module {
    kgen_kernels::kernel("aes").unwrap().variant(variant).unwrap().build(Abi::Psabi).unwrap_or_else(|e| panic!("{e}"))
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn ok(what: &str, o: &Output) -> String {
    assert!(o.status.success(), "{what} failed ({}):\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes kgen's ELF object and GNU as's object (from the OpenSSL `.S`) for `variant`.
/// Returns (kgen.o, gnu.o).
fn objects(m: &Module, dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let asm = oracle::assembler(Binutils::V2_44)?;
    let kgen_o = dir.join("kgen.o");
    std::fs::write(&kgen_o, elf::elf_object(m).unwrap()).unwrap();
    let s = kgen_emit::openssl_s(m, &EmitOptions { command: "test".into(), ..Default::default() }).unwrap();
    let src = dir.join("aes.S");
    std::fs::write(&src, s).unwrap();
    let gnu_o = dir.join("gnu.o");
    ok("GNU as 2.44", &asm.run(&[&format!("-march={}", m.target.march()), "-o", p(&gnu_o), p(&src)]).unwrap());
    Some((kgen_o, gnu_o))
}

fn section(objcopy: &oracle::Tool, obj: &Path, name: &str) -> Vec<u8> {
    let out = obj.with_extension(format!("{}.bin", name.trim_start_matches('.')));
    ok("objcopy", &objcopy.run(&["-O", "binary", "-j", name, p(obj), p(&out)]).unwrap());
    std::fs::read(&out).unwrap()
}

#[test]
fn text_and_rodata_match_gnu_as() {
    for variant in ["c906", "rv64gc"] {
        let m = aes(variant);
        let dir = oracle::scratch(&format!("emit-elf-bytes-{variant}"));
        let Some((kgen_o, gnu_o)) = objects(&m, &dir) else { return };
        let Some(objcopy) = oracle::binutils(Binutils::V2_44, "objcopy") else { return };
        let obj = m.object().unwrap();
        let (kt, gt) = (section(&objcopy, &kgen_o, ".text"), section(&objcopy, &gnu_o, ".text"));
        assert_eq!(kt.len(), obj.text.len(), "{variant}: .text length");
        assert!(kt == gt, "{variant}: kgen's .text differs from GNU as's (first difference at byte {:?})", kt.iter().zip(&gt).position(|(a, b)| a != b));
        let (kr, gr) = (section(&objcopy, &kgen_o, ".rodata"), section(&objcopy, &gnu_o, ".rodata"));
        assert_eq!(kr.len(), obj.rodata.len());
        assert!(kr == gr, "{variant}: kgen's .rodata differs from GNU as's");
    }
}

/// (offset, type, symbol value, symbol name, addend) rows of `readelf -rW`.
fn relocs(readelf: &oracle::Tool, obj: &Path) -> Vec<(u64, String, u64, String, i64)> {
    let text = ok("readelf -r", &readelf.run(&["-rW", p(obj)]).unwrap());
    let mut v = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 3 || !f[2].starts_with("R_RISCV_") {
            continue;
        }
        let off = u64::from_str_radix(f[0], 16).unwrap();
        let (val, name, addend) = if f.len() >= 7 {
            let a = i64::from_str_radix(f[6], 16).unwrap();
            (u64::from_str_radix(f[3], 16).unwrap(), f[4].to_string(), if f[5] == "-" { -a } else { a })
        } else {
            (0, String::new(), 0)
        };
        v.push((off, f[2].to_string(), val, name, addend));
    }
    v
}

#[test]
fn readelf_relocations_symbols_and_flags() {
    for variant in ["c906", "rv64gc"] {
        let m = aes(variant);
        let dir = oracle::scratch(&format!("emit-elf-readelf-{variant}"));
        let Some((kgen_o, gnu_o)) = objects(&m, &dir) else { return };
        let Some(readelf) = oracle::binutils(Binutils::V2_44, "readelf") else { return };
        let obj = m.object().unwrap();

        // Relocations: exactly one PCREL_HI20 per auipc (against the data object, with the
        // addend) and one PCREL_LO12_I per addi (against a label at the auipc), no RELAX.
        let ours = relocs(&readelf, &kgen_o);
        assert_eq!(ours.len(), obj.relocs.len(), "{variant}: one ELF relocation per kgen relocation");
        assert!(ours.iter().all(|r| r.1 != "R_RISCV_RELAX"), "{variant}: kgen must not emit R_RISCV_RELAX");
        let hi20 = ours.iter().filter(|r| r.1 == "R_RISCV_PCREL_HI20").count();
        let lo12 = ours.iter().filter(|r| r.1 == "R_RISCV_PCREL_LO12_I").count();
        assert!(hi20 >= 3 && hi20 == lo12 && hi20 + lo12 == ours.len(), "{variant}: relocation types {ours:?}");
        for r in &ours {
            match r.1.as_str() {
                "R_RISCV_PCREL_HI20" => {
                    let k = obj.relocs.iter().find(|k| k.offset as u64 == r.0).unwrap();
                    assert_eq!((r.3.as_str(), r.4), (k.sym.as_str(), k.addend), "{variant}: HI20 at {:#x}", r.0);
                }
                _ => {
                    assert!(r.3.starts_with(".Lpcrel_hi") && r.4 == 0, "{variant}: LO12 at {:#x} is against {} + {}", r.0, r.3, r.4);
                    assert_eq!(r.2 + 4, r.0, "{variant}: the LO12 label must sit on the auipc right before");
                }
            }
        }
        // The same PC-relative relocations as GNU as (whose label names differ; GNU as also
        // writes RELAX/BRANCH/JAL for linker relaxation, which kgen's final code has no use for).
        let key = |v: &[(u64, String, u64, String, i64)]| {
            let mut k: Vec<(u64, String, u64, String, i64)> = v
                .iter()
                .filter(|r| r.1.starts_with("R_RISCV_PCREL"))
                .map(|r| if r.1 == "R_RISCV_PCREL_HI20" { r.clone() } else { (r.0, r.1.clone(), r.2, String::new(), r.4) })
                .collect();
            k.sort();
            k
        };
        assert_eq!(key(&ours), key(&relocs(&readelf, &gnu_o)), "{variant}: PC-relative relocations differ from GNU as's");

        // Header flags: double-float ABI, no RVC.
        let h = ok("readelf -h", &readelf.run(&["-hW", p(&kgen_o)]).unwrap());
        assert!(h.lines().any(|l| l.trim() == "Flags:                             0x4, double-float ABI"), "{variant}: flags in\n{h}");
        assert!(h.contains("RISC-V") && h.contains("REL (Relocatable file)") && h.contains("ELF64"), "{h}");

        // Symbols: every function and alias a global FUNC with the function's size, every
        // data object a local OBJECT; the same value/size/type/bind as GNU as for the names
        // both define.
        // (name, value, size, type, bind, section name)
        let syms = |o: &Path| -> Vec<(String, u64, u64, String, String, String)> {
            let secs = ok("readelf -S", &readelf.run(&["-SW", p(o)]).unwrap());
            let sec_name = |ndx: &str| -> String {
                secs.lines()
                    .filter_map(|l| l.trim_start().strip_prefix('['))
                    .filter_map(|l| l.split_once(']'))
                    .find(|(n, _)| n.trim() == ndx)
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .unwrap_or(ndx)
                    .to_string()
            };
            let t = ok("readelf -s", &readelf.run(&["-sW", p(o)]).unwrap());
            t.lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    (f.len() == 8 && f[0].trim_end_matches(':').parse::<u32>().is_ok()).then(|| {
                        (f[7].to_string(), u64::from_str_radix(f[1], 16).unwrap(), f[2].parse().unwrap(), f[3].to_string(), f[4].to_string(), sec_name(f[6]))
                    })
                })
                .collect()
        };
        let (ks, gs) = (syms(&kgen_o), syms(&gnu_o));
        for l in &m.funcs {
            let s = ks.iter().find(|s| s.0 == l.func.name).unwrap_or_else(|| panic!("{variant}: no symbol {}", l.func.name));
            assert_eq!((s.3.as_str(), s.4.as_str(), s.5.as_str()), ("FUNC", "GLOBAL", ".text"), "{variant}: {s:?}");
            let g = gs.iter().find(|g| g.0 == s.0).unwrap();
            assert_eq!(s, g, "{variant}: symbol differs from GNU as's");
        }
        for (alias, f) in &m.aliases {
            let a = ks.iter().find(|s| &s.0 == alias).unwrap_or_else(|| panic!("{variant}: no alias {alias}"));
            let t = ks.iter().find(|s| &s.0 == f).unwrap();
            assert_eq!((a.1, a.2, a.3.as_str(), a.4.as_str(), a.5.as_str()), (t.1, t.2, "FUNC", "GLOBAL", t.5.as_str()), "{variant}: alias {alias}");
            let g = gs.iter().find(|g| &g.0 == alias).unwrap();
            assert_eq!((a.1, a.5.as_str()), (g.1, g.5.as_str()), "{variant}: alias {alias} address differs from GNU as's");
        }
        for d in &m.data {
            let s = ks.iter().find(|s| s.0 == d.name).unwrap();
            assert_eq!((s.2, s.3.as_str(), s.4.as_str(), s.5.as_str()), (d.bytes.len() as u64, "OBJECT", "LOCAL", ".rodata"), "{variant}: {s:?}");
            assert_eq!(s, gs.iter().find(|g| g.0 == d.name).unwrap(), "{variant}: data symbol differs from GNU as's");
        }
        let labels = ks.iter().filter(|s| s.0.starts_with(".Lpcrel_hi")).count();
        assert_eq!(labels, hi20, "{variant}: one .Lpcrel_hi label per auipc");
    }
}

mod common;

const MAIN_C: &str = r#"
#include <stdio.h>
int main(void) {
    static const unsigned char key[16] = {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15};
    static const unsigned char pt[16] = {0x00,0x11,0x22,0x33,0x44,0x55,0x66,0x77,0x88,0x99,0xaa,0xbb,0xcc,0xdd,0xee,0xff};
    unsigned char out[16];
    AES_KEY ks;
    int r = AES_set_encrypt_key(key, 128, &ks);
    if (r != 0) { printf("set_encrypt_key returned %d\n", r); return 1; }
    AES_encrypt(pt, out, &ks);
    for (int i = 0; i < 16; i++) printf("%02x", out[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn elf_object_links_and_runs_under_qemu() {
    let (Some(gcc), Some(qemu)) = (oracle::gcc(), oracle::qemu()) else { return };
    let dir = oracle::scratch("emit-elf-link");
    for (variant, cpus_ok, cpu_sigill) in [("c906", &["thead-c906"][..], Some("rv64")), ("rv64gc", &["rv64", "thead-c906"][..], None)] {
        let m = aes(variant);
        // The prototypes come from the generated header.
        std::fs::write(dir.join("main.c"), format!("{}{MAIN_C}", common::header(&dir, &m))).unwrap();
        let o = dir.join(format!("aes-{variant}.o"));
        std::fs::write(&o, elf::elf_object(&m).unwrap()).unwrap();
        let exe = dir.join(format!("aes-{variant}"));
        let out = gcc.command().args(["-static", "-O1", "-o", p(&exe), p(&dir.join("main.c")), p(&o)]).output().unwrap();
        ok(&format!("linking kgen's {variant} object"), &out);
        assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"), "linker warnings: {}", String::from_utf8_lossy(&out.stderr));
        for cpu in cpus_ok {
            let r = qemu.command().args(["-cpu", cpu, p(&exe)]).output().unwrap();
            assert_eq!(ok(&format!("{variant} under -cpu {cpu}"), &r).trim(), CT, "{variant} under -cpu {cpu}");
        }
        if let Some(cpu) = cpu_sigill {
            let r = qemu.command().args(["-cpu", cpu, p(&exe)]).output().unwrap();
            assert_eq!(r.status.signal(), Some(4), "{variant} under -cpu {cpu} must die with SIGILL, got {} with output {:?}", r.status, String::from_utf8_lossy(&r.stdout));
        }
    }
}

/// Runs `entry(args)` in `mach` (psABI: a0.., ra = sentinel) and returns a0.
fn sim_call(mach: &mut Machine, entry: u64, args: &[u64], sp: u64, sentinel: u64) -> u64 {
    for (i, a) in args.iter().enumerate() {
        mach.hart.x[10 + i] = *a;
    }
    mach.hart.x[2] = sp;
    mach.hart.x[1] = sentinel;
    mach.hart.pc = entry;
    mach.run_until(sentinel).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mach.hart.x[2], sp, "sp restored");
    mach.hart.x[10]
}

#[test]
fn jit_image_runs_in_sim_at_its_own_address() {
    let m = aes("c906");
    let j = jit::jit(&m).unwrap();
    let bytes = jit::image_bytes(&j);
    let obj = m.object().unwrap();
    assert_eq!(j.base % jit::PAGE, 0);
    assert_eq!(j.rodata_offset as u64 % jit::PAGE, 0);
    assert_eq!(bytes.len(), j.rodata_offset + obj.rodata.len());
    assert!(bytes[j.text_len..j.rodata_offset].iter().all(|&b| b == 0), "padding between text and rodata is zero");
    assert_eq!(&bytes[j.rodata_offset..], &obj.rodata[..]);
    // The buffer holds kgen-dsl's link of the object at the buffer's address.
    let img = kgen_dsl::object::link(&obj, j.base, &Default::default()).unwrap();
    assert_eq!(&bytes[..j.text_len], &img.text[..]);
    assert_eq!(j.symbols, img.symbols);
    // Relocated: the auipc immediates differ from the unrelocated object's (zero) ones.
    assert_ne!(&bytes[..j.text_len], &obj.text[..]);

    let mut mach = Machine::new(&m.target);
    mach.mem.map("jit-text", j.base, j.rodata_offset, Perm::RX);
    mach.mem.write_bytes(j.base, &bytes[..j.text_len]);
    let ro_len = (bytes.len() - j.rodata_offset).next_multiple_of(4096);
    mach.mem.map("jit-rodata", j.base + j.rodata_offset as u64, ro_len, Perm::R);
    mach.mem.write_bytes(j.base + j.rodata_offset as u64, &bytes[j.rodata_offset..]);
    // Stack, return sentinel and buffers well away from the JIT address.
    let scratch = if j.base > 0x1_0000_0000 { 0x1000_0000u64 } else { 0x7_0000_0000 };
    let (sentinel, stack, data) = (scratch, scratch + 0x10_0000, scratch + 0x20_0000);
    assert!(data + 0x1000 <= j.base || scratch >= j.base + bytes.len() as u64, "scratch regions overlap the JIT image");
    mach.mem.map("sentinel", sentinel, 4096, Perm::RX);
    mach.mem.map("stack", stack, 0x10000, Perm::RW);
    mach.mem.map("data", data, 4096, Perm::RW);
    mach.hart.vtype = 1 << 63;
    let (key, pt, ks, out) = (data, data + 16, data + 64, data + 512);
    mach.mem.write_bytes(key, &hex(KEY));
    mach.mem.write_bytes(pt, &hex(PT));
    let sp = stack + 0x10000 - 64;
    assert_eq!(sim_call(&mut mach, j.addr("AES_set_encrypt_key").unwrap(), &[key, 128, ks], sp, sentinel), 0);
    sim_call(&mut mach, j.addr("AES_encrypt").unwrap(), &[pt, out, ks], sp, sentinel);
    assert_eq!(to_hex(&mach.mem.read_bytes(out, 16)), CT);
    // Bad input is reported, not a panic.
    assert!(j.addr("no_such_function").is_err());
    assert!(jit::flat_image(&m, 0x1234).is_err(), "unaligned base is refused");
}

const LOADER_C: &str = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
typedef int (*setkey_fn)(const unsigned char *, int, void *);
typedef void (*encrypt_fn)(const unsigned char *, unsigned char *, const void *);
/* usage: loader IMAGE BASE SETKEY ENCRYPT (addresses in hex) */
int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror("open"); return 2; }
    static unsigned char img[1 << 20];
    size_t n = fread(img, 1, sizeof img, f);
    fclose(f);
    uintptr_t base = strtoull(argv[2], 0, 16);
    size_t len = (n + 4095) & ~(size_t)4095;
    void *p = mmap((void *)base, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)base) { fprintf(stderr, "mmap at %lx failed\n", (unsigned long)base); return 2; }
    memcpy(p, img, n);
    if (mprotect(p, len, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 2; }
    __builtin___clear_cache((char *)p, (char *)p + n);
    setkey_fn setkey = (setkey_fn)(uintptr_t)strtoull(argv[3], 0, 16);
    encrypt_fn encrypt = (encrypt_fn)(uintptr_t)strtoull(argv[4], 0, 16);
    static const unsigned char key[16] = {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15};
    static const unsigned char pt[16] = {0x00,0x11,0x22,0x33,0x44,0x55,0x66,0x77,0x88,0x99,0xaa,0xbb,0xcc,0xdd,0xee,0xff};
    unsigned char ks[256] __attribute__((aligned(16)));
    unsigned char out[16];
    int r = setkey(key, 128, ks);
    if (r != 0) { printf("setkey returned %d\n", r); return 1; }
    encrypt(pt, out, ks);
    for (int i = 0; i < 16; i++) printf("%02x", out[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn jit_image_runs_natively_from_a_loader_under_qemu() {
    let (Some(gcc), Some(qemu)) = (oracle::gcc(), oracle::qemu()) else { return };
    let dir = oracle::scratch("emit-jit-native");
    let base = 0x2_0000_0000u64;
    let m = aes("c906");
    let img = jit::flat_image(&m, base).unwrap();
    // The same bytes as the JIT buffer: every relocation is PC-relative within the image,
    // so the image does not depend on where it is loaded (only on the page-aligned layout).
    let j = jit::jit(&m).unwrap();
    assert_ne!(j.base, base);
    assert_eq!(img.bytes, jit::image_bytes(&j));
    assert_eq!((img.text_len, img.rodata_offset), (j.text_len, j.rodata_offset));
    assert_eq!(img.symbols["AES_encrypt"] - base, j.symbols["AES_encrypt"] - j.base);
    let file = dir.join("aes.img");
    std::fs::write(&file, &img.bytes).unwrap();
    std::fs::write(dir.join("loader.c"), LOADER_C).unwrap();
    let exe = dir.join("loader");
    ok("building the loader", &gcc.command().args(["-static", "-O1", "-o", p(&exe), p(&dir.join("loader.c"))]).output().unwrap());
    let a = |s: &str| format!("{:x}", img.symbols[s]);
    let args = [p(&exe).to_string(), p(&file).to_string(), format!("{base:x}"), a("AES_set_encrypt_key"), a("AES_encrypt")];
    let r = qemu.command().args(["-cpu", "thead-c906"]).args(&args).output().unwrap();
    assert_eq!(ok("loader under -cpu thead-c906", &r).trim(), CT);
    let r = qemu.command().args(["-cpu", "rv64"]).args(&args).output().unwrap();
    assert_eq!(r.status.signal(), Some(4), "the c906 image under -cpu rv64 must die with SIGILL, got {}", r.status);
}

#[test]
fn elf_refuses_bad_objects() {
    let m = aes("rv64gc");
    let mut o = m.object().unwrap();
    // A %pcrel_lo whose auipc is missing.
    o.relocs.retain(|r| r.kind != kgen_dsl::object::RelocKind::PcrelHi20);
    assert!(elf::object_bytes(&o, 4).is_err());
    // A symbol outside its section.
    let mut o = m.object().unwrap();
    o.symbols[0].size = o.text.len() as u32 + 4;
    assert!(elf::object_bytes(&o, 4).is_err());
    // External symbols become undefined globals instead of an error.
    let mut o = m.object().unwrap();
    let r = o.relocs.iter().position(|r| r.kind == kgen_dsl::object::RelocKind::PcrelHi20).unwrap();
    o.relocs[r].sym = "external_table".into();
    assert!(elf::object_bytes(&o, 4).is_ok());
    assert_eq!(elf::e_flags(Abi::Linux), 0);
    assert_eq!(elf::e_flags(Abi::Psabi), 4);
}
