//! The checks of `kgen_dsl::check`, each against a small hand-written function that
//! passes and a broken copy of it that the check must reject (its negative control); then
//! the same checks on every kernel, and `Module::add` refusing a kernel that fails one.

use kgen_dsl::check::{check_func, check_func_limited, Check, Finding};
use kgen_dsl::entry::{Access, Elem, Ty};
use kgen_dsl::func::{Func, LeakKind};
use kgen_dsl::target::target;
use kgen_dsl::{Abi, Module};
use kgen_macros::kasm;

/// A pointer to bytes the caller aligns to `align`.
fn bytes(access: Access, align: u32) -> Ty {
    Ty::Ptr { elem: Elem::U8, access, align }
}

/// Builds a function with physical registers: `dst` (a0) is a public output buffer,
/// `key` (a1) points to secret bytes (both 8-byte aligned), `n` (a2) is a public count.
fn build(tgt: &str, abi: Abi, body: impl FnOnce(&mut Func)) -> Func {
    let t = target(tgt).unwrap();
    let mut f = Func::new("probe", &t, abi);
    f.arg("dst", bytes(Access::Out, 8), false);
    f.arg("key", bytes(Access::In, 8), true);
    f.arg("n", Ty::Size, false);
    body(&mut f);
    f.finish().expect("probe builds")
}

fn findings(tgt: &str, abi: Abi, body: impl FnOnce(&mut Func)) -> Vec<Finding> {
    check_func(&build(tgt, abi, body), abi)
}

fn errors_of(fs: &[Finding]) -> Vec<Check> {
    let mut v: Vec<Check> = fs.iter().filter(|x| !x.declared).map(|x| x.check).collect();
    v.dedup();
    v
}

/// The good version passes; the broken one fails exactly with `want` (and nothing else).
fn pair(tgt: &str, good: impl FnOnce(&mut Func), bad: impl FnOnce(&mut Func), want: Check) -> Finding {
    let g = findings(tgt, Abi::Psabi, good);
    assert!(errors_of(&g).is_empty(), "good version rejected: {g:#?}");
    let b = findings(tgt, Abi::Psabi, bad);
    assert_eq!(errors_of(&b), vec![want], "broken version: {b:#?}");
    b.into_iter().find(|x| x.check == want).unwrap()
}

#[test]
fn callee_saved_registers_restored() {
    let f = pair(
        "rv64gc",
        |f| {
            kasm!(f,
                addi sp, sp, -16; sd s0, 0(sp);
                ld s0, 0(a0); sd s0, 8(a0);
                ld s0, 0(sp); addi sp, sp, 16; ret;
            )
        },
        |f| kasm!(f, ld s0, 0(a0); sd s0, 8(a0); ret;),
        Check::CalleeSaved,
    );
    assert!(f.msg.contains("s0"), "{f}");
    assert_eq!(f.inst, "ret");
}

#[test]
fn callee_saved_on_every_path() {
    // Restored on the fall-through path only: the early return leaks s1's new value.
    let b = findings("rv64gc", Abi::Psabi, |f| {
        kasm!(f,
            addi sp, sp, -16; sd s1, 0(sp);
            li s1, 5;
            beqz a2, out;
            ld s1, 0(sp); addi sp, sp, 16;
        out:
            ret;
        )
    });
    let e = errors_of(&b);
    assert!(e.contains(&Check::CalleeSaved) && e.contains(&Check::StackPointer), "{b:#?}");
}

#[test]
fn return_address_kept() {
    pair(
        "rv64gc",
        |f| kasm!(f, addi sp, sp, -16; sd ra, 8(sp); ld t2, 0(a0); jalr ra, 0(t2); ld ra, 8(sp); addi sp, sp, 16; ret;),
        |f| kasm!(f, addi sp, sp, -16; ld t2, 0(a0); jalr ra, 0(t2); addi sp, sp, 16; ret;),
        Check::CalleeSaved,
    );
}

#[test]
fn stack_pointer_restored_and_aligned() {
    pair(
        "rv64gc",
        |f| kasm!(f, addi sp, sp, -32; sd a2, 0(sp); ld a2, 0(sp); addi sp, sp, 32; ret;),
        |f| kasm!(f, addi sp, sp, -32; sd a2, 0(sp); ld a2, 0(sp); addi sp, sp, 16; ret;),
        Check::StackPointer,
    );
    // Misaligned at a call.
    let b = findings("rv64gc", Abi::Psabi, |f| {
        kasm!(f, addi sp, sp, -24; sd ra, 8(sp); ld t2, 0(a0); jalr ra, 0(t2); ld ra, 8(sp); addi sp, sp, 24; ret;)
    });
    assert_eq!(errors_of(&b), vec![Check::StackPointer], "{b:#?}");
}

#[test]
fn reserved_registers_untouched() {
    assert!(errors_of(&findings("rv64gc", Abi::Psabi, |f| kasm!(f, addi t0, a2, 1; sd t0, 0(a0); ret;))).is_empty());
    let b = findings("rv64gc", Abi::Psabi, |f| kasm!(f, addi tp, a2, 1; sd tp, 0(a0); ret;));
    let r = b.iter().find(|x| x.check == Check::Reserved).unwrap_or_else(|| panic!("{b:#?}"));
    assert!(r.msg.contains("tp") && r.inst.starts_with("addi tp"), "{r}");
    // Go reserves s10 (x26), s11 (g) and t6 besides gp and tp.
    let go = findings("rv64gc", Abi::Go, |f| kasm!(f, addi s11, a2, 1; sd s11, 0(a0); ret;));
    assert!(errors_of(&go).contains(&Check::Reserved), "{go:#?}");
}

#[test]
fn no_read_before_write() {
    let f = pair("rv64gc", |f| kasm!(f, li t1, 3; add t0, a2, t1; sd t0, 0(a0); ret;), |f| kasm!(f, add t0, a2, t1; sd t0, 0(a0); ret;), Check::ReadBeforeWrite);
    assert!(f.msg.contains("t1"), "{f}");
}

#[test]
fn stack_accesses_inside_the_frame() {
    pair(
        "rv64gc",
        |f| kasm!(f, addi sp, sp, -16; sd a2, 8(sp); ld a2, 8(sp); addi sp, sp, 16; ret;),
        |f| kasm!(f, addi sp, sp, -16; sd a2, 16(sp); ld a2, 16(sp); addi sp, sp, 16; ret;),
        Check::StackBounds,
    );
}

#[test]
fn stack_accesses_through_a_range_of_offsets() {
    // sp + (n & 24) + k reaches bytes 0..32 of a 32-byte frame: inside, written first.
    // The same with (n & 56) may reach past the frame; with the frame written only in part,
    // some bytes may be read before they are written.
    let fill = |f: &mut Func| kasm!(f, addi sp, sp, -32; sd zero, 0(sp); sd zero, 8(sp); sd zero, 16(sp); sd zero, 24(sp););
    // (The bytes past the frame were not written either: both checks report it.)
    let b = findings("rv64gc", Abi::Psabi, |f| {
        fill(f);
        kasm!(f, andi t0, a2, 56; add t0, sp, t0; ld t1, 0(t0); sd t1, 0(a0); addi sp, sp, 32; ret;)
    });
    let f = b.iter().find(|x| x.check == Check::StackBounds).unwrap_or_else(|| panic!("{b:#?}"));
    assert!(f.msg.contains("sp-32..sp+32 may leave the frame"), "{f}");
    let f = pair(
        "rv64gc",
        |f| {
            fill(f);
            kasm!(f, andi t0, a2, 24; add t0, sp, t0; ld t1, 0(t0); sd t1, 0(a0); addi sp, sp, 32; ret;)
        },
        |f| {
            kasm!(f, addi sp, sp, -32; sd zero, 0(sp); sd zero, 8(sp); sd zero, 16(sp););
            kasm!(f, andi t0, a2, 24; add t0, sp, t0; ld t1, 0(t0); sd t1, 0(a0); addi sp, sp, 32; ret;)
        },
        Check::ReadBeforeWrite,
    );
    assert!(f.msg.contains("sp-32..sp+0"), "{f}");
}

#[test]
fn vtype_set_before_vector_use() {
    pair(
        "c906",
        |f| kasm!(f, th.vsetvli t0, a2, e32, m1, d1; th.vle.v v1, (a0); th.vse.v v1, (a0); ret;),
        |f| kasm!(f, th.vle.v v1, (a0); th.vse.v v1, (a0); ret;),
        Check::VectorType,
    );
    // Set on one path only.
    let b = findings("rv64gcv", Abi::Psabi, |f| {
        kasm!(f,
            beqz a2, skip;
            vsetvli t0, a2, e32, m1, ta, ma;
        skip:
            vle32.v v1, (a0); vse32.v v1, (a0); ret;
        )
    });
    assert_eq!(errors_of(&b), vec![Check::VectorType], "{b:#?}");
}

#[test]
fn vector_groups_aligned() {
    pair(
        "rv64gcv",
        |f| kasm!(f, vsetvli t0, a2, e32, m2, ta, ma; vle32.v v2, (a0); vadd.vv v4, v2, v2; vse32.v v4, (a0); ret;),
        |f| kasm!(f, vsetvli t0, a2, e32, m2, ta, ma; vle32.v v2, (a0); vadd.vv v5, v2, v2; vse32.v v5, (a0); ret;),
        Check::VectorGroups,
    );
}

#[test]
fn no_illegal_group_overlap() {
    // RVV 1.0 at LMUL 2: the narrowing source v4-v7 (EMUL 4) may overlap the destination
    // only in its lowest-numbered part (v4-v5); a destination at v6-v7 is illegal. Only the
    // vtype known on that path says how long the groups are, so this is the checker's job.
    pair(
        "rv64gcv",
        |f| kasm!(f, vsetvli t0, a2, e64, m4, ta, ma; vle64.v v4, (a0); vsetvli t0, a2, e32, m2, ta, ma; vnsrl.wi v4, v4, 0; vse32.v v4, (a0); ret;),
        |f| kasm!(f, vsetvli t0, a2, e64, m4, ta, ma; vle64.v v4, (a0); vsetvli t0, a2, e32, m2, ta, ma; vnsrl.wi v6, v4, 0; vse32.v v6, (a0); ret;),
        Check::VectorGroups,
    );
}

#[test]
fn go_abi_has_no_callee_saved_registers() {
    // Go's ABI0 lets a function clobber s1; the psABI does not.
    let body = |f: &mut Func| kasm!(f, addi s1, a2, 1; sd s1, 0(a0); ret;);
    assert!(errors_of(&findings("rv64gc", Abi::Go, body)).is_empty());
    assert_eq!(errors_of(&findings("rv64gc", Abi::Psabi, body)), vec![Check::CalleeSaved]);
}

#[test]
fn secrets_wiped_from_registers() {
    // What is stored to the public output is published (t1); the key word in t0 is not.
    let f = pair(
        "rv64gc",
        |f| kasm!(f, lw t0, 0(a1); addi t1, t0, 1; sw t1, 0(a0); li t0, 0; ret;),
        |f| kasm!(f, lw t0, 0(a1); addi t1, t0, 1; sw t1, 0(a0); ret;),
        Check::SecretLeft,
    );
    assert!(f.msg.contains("t0"), "{f}");
    // Vector registers too.
    pair(
        "c906",
        |f| kasm!(f, th.vsetvli t0, a2, e32, m1, d1; th.vle.v v3, (a1); th.vadd.vv v4, v3, v3; th.vse.v v4, (a0); th.vmv.v.i v3, 0; ret;),
        |f| kasm!(f, th.vsetvli t0, a2, e32, m1, d1; th.vle.v v3, (a1); th.vadd.vv v4, v3, v3; th.vse.v v4, (a0); ret;),
        Check::SecretLeft,
    );
}

#[test]
fn secrets_wiped_from_the_stack() {
    let f = pair(
        "rv64gc",
        |f| kasm!(f, addi sp, sp, -16; ld t0, 0(a1); sd t0, 0(sp); sd zero, 0(sp); li t0, 0; addi sp, sp, 16; ret;),
        |f| kasm!(f, addi sp, sp, -16; ld t0, 0(a1); sd t0, 0(sp); li t0, 0; addi sp, sp, 16; ret;),
        Check::SecretLeft,
    );
    assert!(f.msg.contains("stack"), "{f}");
}

#[test]
fn no_branch_on_secrets() {
    let bad = |f: &mut Func| kasm!(f, lw t0, 0(a1); beqz t0, out; sw a2, 0(a0); out: li t0, 0; ret;);
    pair("rv64gc", |f| kasm!(f, lw t0, 0(a1); beqz a2, out; sw t0, 0(a0); out: li t0, 0; ret;), bad, Check::SecretBranch);
    // Declared on purpose: reported, not an error.
    let d = findings("rv64gc", Abi::Psabi, |f| f.leaking(LeakKind::SecretBranch, "test", bad));
    assert!(errors_of(&d).is_empty() && d.iter().any(|x| x.declared && x.check == Check::SecretBranch), "{d:#?}");
}

#[test]
fn no_secret_addresses() {
    pair(
        "rv64gc",
        |f| kasm!(f, lbu t0, 0(a1); add t1, a0, a2; sb t0, 0(t1); li t0, 0; ret;),
        |f| kasm!(f, lbu t0, 0(a1); add t1, a0, t0; lbu t1, 0(t1); sb t1, 0(a0); li t0, 0; li t1, 0; ret;),
        Check::SecretAddress,
    );
}

#[test]
fn public_bytes_of_a_secret_argument() {
    // The key schedule's round count is public: branching on it is fine, on a key word not.
    let run = |off: i64| {
        let t = target("rv64gc").unwrap();
        let mut f = Func::new("probe", &t, Abi::Psabi);
        f.arg("dst", bytes(Access::Out, 8), false);
        let key = f.arg("key", bytes(Access::In, 8), true);
        f.public_bytes(key, 240, 244);
        kasm!(f, lw t0, {off}(a1); beqz t0, out; sw zero, 0(a0); out: ret;);
        errors_of(&check_func(&f.finish().unwrap(), Abi::Psabi))
    };
    assert!(run(240).is_empty());
    assert_eq!(run(236), vec![Check::SecretBranch, Check::SecretLeft]);
}

#[test]
fn c906_multiplies_on_the_fast_path() {
    // The C906 multiplier takes longer when an operand's upper 32 bits are non-zero: a
    // 64-bit secret operand is a timing leak there; a zero-extended 32-bit one is not.
    let good = |f: &mut Func| kasm!(f, lwu t0, 0(a1); lwu t1, 4(a1); mul t0, t0, t1; sd t0, 0(a0); li t0, 0; li t1, 0; ret;);
    let bad = |f: &mut Func| kasm!(f, ld t0, 0(a1); lwu t1, 4(a1); mul t0, t0, t1; sd t0, 0(a0); li t0, 0; li t1, 0; ret;);
    let f = pair("c906", good, bad, Check::SecretMulTiming);
    assert!(f.msg.contains("t0"), "{f}");
    // A core without that multiplier has no such rule.
    assert!(errors_of(&findings("rv64gc", Abi::Psabi, bad)).is_empty());
    // Upper bits cleared by shifts count as zero-extension.
    assert!(errors_of(&findings("c906", Abi::Psabi, |f| {
        kasm!(f, ld t0, 0(a1); slli t0, t0, 32; srli t0, t0, 32; lwu t1, 4(a1); mul t0, t0, t1; sd t0, 0(a0); li t0, 0; li t1, 0; ret;)
    }))
    .is_empty());
}

#[test]
fn every_kernel_passes_and_declares_its_leaks() {
    let mut built = 0;
    for k in kgen_kernels::kernels() {
        for v in k.variants {
            for &abi in v.abis {
                let m = v.build(abi).unwrap_or_else(|e| panic!("{} {} {abi}: {e}", k.name, v.name));
                for l in &m.funcs {
                    let fs = kgen_dsl::check::check_func_with(&l.func, abi, &m.data_alignments());
                    assert!(errors_of(&fs).is_empty(), "{} {}: {:#?}", k.name, v.name, fs);
                    assert_eq!(fs, l.findings);
                    for x in fs.iter().filter(|x| x.declared) {
                        assert!(l.func.leaks.iter().any(|d| Some(d.kind) == x.check.leak()));
                    }
                    built += 1;
                }
            }
        }
    }
    assert!(built >= 20, "{built} functions");
    // The T-table AES declares its table lookups; ChaCha20 declares nothing.
    let aes = kgen_kernels::kernel("aes").unwrap().variant("c906").unwrap().build(Abi::Psabi).unwrap();
    assert!(aes.funcs.iter().any(|l| l.findings.iter().any(|x| x.check == Check::SecretAddress)));
    let chacha = kgen_kernels::kernel("chacha20").unwrap().variant("c906").unwrap().build(Abi::Psabi).unwrap();
    assert!(chacha.funcs.iter().all(|l| l.findings.is_empty() && l.func.leaks.is_empty()));
}

#[test]
fn module_refuses_a_function_failing_a_check() {
    // Virtual registers: lowering saves and wipes what it allocated, but cannot fix a
    // branch on a secret; the error names kernel, function, instruction and reason.
    let t = target("c906").unwrap();
    let mut f = Func::new("leaky", &t, Abi::Psabi);
    let key = f.arg("key", bytes(Access::In, 4), true);
    let w = f.xreg("w");
    kasm!(f, lw {w}, 0({key}); bnez {w}, out; sw zero, 0({key}); out: ret;);
    let mut m = Module::new("demo", "c906", &t, Abi::Psabi);
    let e = m.add(f, true).unwrap_err().to_string();
    assert!(e.contains("demo c906") && e.contains("leaky") && e.contains("bne t0") && e.contains("SecretBranch"), "{e}");
}

/// The static secret check's dynamic counterpart: after real calls in the simulator, no
/// 4-byte window of the key, the round keys or the plaintext is left in any register or
/// in the stack below the caller's sp. Negative control: the scan finds a key the test
/// plants in a register.
#[test]
fn no_secret_left_after_calls() {
    use kgen_sim::Env;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let env = |kernel: &str, variant: &str| {
        let m = kgen_kernels::kernel(kernel).unwrap().variant(variant).unwrap().build(Abi::Psabi).unwrap();
        Env::new(&m.object().unwrap(), &m.target).unwrap()
    };
    for variant in ["c906", "rv64gc"] {
        let mut e = env("aes", variant);
        let key: [u8; 16] = rng.random();
        let pt: [u8; 16] = rng.random();
        let k = e.buffer(&key, 0, false);
        let ks = e.buffer(&[0u8; 244], 0, true);
        e.call(e.sym("AES_set_encrypt_key"), &[k, 128, ks]).unwrap();
        let sched = e.read(ks, 176);
        assert_eq!(e.scan_for_secret(&sched, 4), Vec::<String>::new(), "aes {variant} set_encrypt_key");
        let inp = e.buffer(&pt, 0, false);
        let out = e.buffer(&[0u8; 16], 0, true);
        e.call(e.sym("AES_encrypt"), &[inp, out, ks]).unwrap();
        assert_eq!(e.scan_for_secret(&sched, 4), Vec::<String>::new(), "aes {variant} encrypt: round keys");
        assert_eq!(e.scan_for_secret(&pt, 4), Vec::<String>::new(), "aes {variant} encrypt: plaintext");
    }
    for variant in ["c906", "c906-novector", "rv64gcv", "rva23", "rv64gc"] {
        let mut e = env("chacha20", variant);
        for len in [37usize, 64, 200, 1000] {
            let key: [u8; 32] = rng.random();
            let ctr: [u8; 16] = rng.random();
            let pt: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let (kb, cb) = (e.buffer(&key, 0, false), e.buffer(&ctr, 0, false));
            let inp = e.buffer(&pt, 0, false);
            let out = e.buffer(&vec![0u8; len], 0, true);
            e.call(e.sym("ChaCha20_ctr32"), &[out, inp, len as u64, kb, cb]).unwrap();
            let ks: Vec<u8> = e.read(out, len).iter().zip(&pt).map(|(c, p)| c ^ p).collect();
            for (what, s) in [("key", &key[..]), ("plaintext", &pt[..]), ("keystream", &ks[..])] {
                assert_eq!(e.scan_for_secret(s, 4), Vec::<String>::new(), "chacha20 {variant} len {len}: {what}");
            }
        }
    }
    // Negative control: a key word planted in a register is found.
    let mut e = env("aes", "c906");
    let key: [u8; 16] = rng.random();
    let k = e.buffer(&key, 0, false);
    let ks = e.buffer(&[0u8; 244], 0, true);
    e.call(e.sym("AES_set_encrypt_key"), &[k, 128, ks]).unwrap();
    e.m.hart.x[7] = u32::from_le_bytes(key[4..8].try_into().unwrap()) as u64;
    assert_eq!(e.scan_for_secret(&key, 4), vec!["register t2".to_string()]);
}

#[test]
fn module_refuses_a_register_the_abi_forbids() {
    // Go's ABI0 keeps g in X27 (s11): a kernel that names it is refused, with the reason.
    let t = target("rv64gc").unwrap();
    let mut f = Func::new("uses_g", &t, Abi::Go);
    let p = f.arg("p", Ty::Ptr { elem: Elem::U64, access: Access::InOut, align: 8 }, false);
    kasm!(f, ld s11, 0({p}); sd s11, 8({p}); ret;);
    let mut m = Module::new("demo", "rv64gc", &t, Abi::Go);
    let e = m.add(f, true).unwrap_err().to_string();
    assert!(e.contains("demo rv64gc (go): uses_g") && e.contains("ld s11") && e.contains("Reserved") && e.contains("go ABI reserves"), "{e}");
}

#[test]
fn vector_stack_accesses() {
    // A whole unit-stride group (VLMAX = 4 words at e32, m1: 16 bytes) stored in the frame is
    // bounds-checked over its full size, and its secret granules must be wiped.
    pair(
        "c906",
        |f| {
            kasm!(f,
                addi sp, sp, -32; th.vsetvli t0, zero, e32, m1, d1;
                th.vle.v v1, (a0); addi t1, sp, 16; th.vse.v v1, (t1);
                addi sp, sp, 32; ret;
            )
        },
        |f| {
            kasm!(f,
                addi sp, sp, -32; th.vsetvli t0, zero, e32, m1, d1;
                th.vle.v v1, (a0); addi t1, sp, 24; th.vse.v v1, (t1);
                addi sp, sp, 32; ret;
            )
        },
        Check::StackBounds,
    );
    let f = pair(
        "c906",
        |f| {
            kasm!(f,
                addi sp, sp, -32; th.vsetvli t0, zero, e32, m1, d1;
                th.vle.v v1, (a1); th.vse.v v1, (sp); th.vle.v v2, (sp); th.vse.v v2, (a0);
                th.vmv.v.i v1, 0; th.vmv.v.i v2, 0; th.vse.v v1, (sp);
                addi sp, sp, 32; ret;
            )
        },
        |f| {
            kasm!(f,
                addi sp, sp, -32; th.vsetvli t0, zero, e32, m1, d1;
                th.vle.v v1, (a1); th.vse.v v1, (sp); th.vle.v v2, (sp); th.vse.v v2, (a0);
                th.vmv.v.i v1, 0; th.vmv.v.i v2, 0;
                addi sp, sp, 32; ret;
            )
        },
        Check::SecretLeft,
    );
    assert!(f.msg.contains("stack"), "{f}");
}

#[test]
fn a_stored_vector_group_is_published_whole() {
    // At LMUL 2 a store writes v2 and v3: both hold what the caller now has, nothing to wipe.
    // Negative control: the same load with only v2 stored leaves v3's secret half.
    pair(
        "c906",
        |f| kasm!(f, th.vsetvli t0, zero, e32, m2, d1; th.vle.v v2, (a1); th.vse.v v2, (a0); ret;),
        |f| {
            kasm!(f,
                th.vsetvli t0, zero, e32, m2, d1; th.vle.v v2, (a1);
                th.vsetvli t0, zero, e32, m1, d1; th.vse.v v2, (a0); ret;
            )
        },
        Check::SecretLeft,
    );
}

#[test]
fn stack_secrets_are_tracked_by_the_byte() {
    // A narrower store over a secret doubleword wipes only its own bytes.
    let f = pair(
        "rv64gc",
        |f| kasm!(f, addi sp, sp, -16; ld t0, 0(a1); sd t0, 0(sp); sd zero, 0(sp); li t0, 0; addi sp, sp, 16; ret;),
        |f| kasm!(f, addi sp, sp, -16; ld t0, 0(a1); sd t0, 0(sp); sw zero, 0(sp); li t0, 0; addi sp, sp, 16; ret;),
        Check::SecretLeft,
    );
    assert!(f.msg.contains("sp-12..sp-8"), "{f}");
    // Byte stores wiping every byte are enough.
    let g = findings("rv64gc", Abi::Psabi, |f| {
        kasm!(f, addi sp, sp, -16; ld t0, 0(a1); sd t0, 0(sp); sw zero, 0(sp); sh zero, 4(sp); sb zero, 6(sp); sb zero, 7(sp); li t0, 0; addi sp, sp, 16; ret;)
    });
    assert!(errors_of(&g).is_empty(), "{g:#?}");
}

#[test]
fn a_dataflow_that_does_not_converge_is_an_error() {
    // A loop needs more than one pass; with the pass limit at 1 the check must say it did
    // not finish rather than report what it had.
    let f = build("rv64gc", Abi::Psabi, |f| kasm!(f, li t0, 0; top: addi t0, t0, 1; bne t0, a2, top; sd t0, 0(a0); li t0, 0; ret;));
    let limited = check_func_limited(&f, Abi::Psabi, 1);
    assert_eq!(errors_of(&limited), vec![Check::Dataflow], "{limited:#?}");
    assert!(errors_of(&check_func(&f, Abi::Psabi)).is_empty());
}

#[test]
fn an_indirect_jump_is_rejected_and_a_tail_call_is_an_exit() {
    let b = findings("rv64gc", Abi::Psabi, |f| kasm!(f, ld t0, 0(a0); jr t0;));
    assert_eq!(errors_of(&b), vec![Check::ControlFlow], "{b:#?}");
    // A tail call leaves the function: the exit checks run on that path (a secret left in
    // t2 is found; `tail` itself goes through t1), and a clean one passes.
    let leak = findings("rv64gc", Abi::Psabi, |f| {
        kasm!(f, ld t2, 0(a1););
        f.tail("elsewhere");
    });
    assert!(errors_of(&leak).contains(&Check::SecretLeft), "{leak:#?}");
    let clean = findings("rv64gc", Abi::Psabi, |f| {
        kasm!(f, ld t0, 0(a1); sd t0, 0(a0); li t0, 0;);
        f.tail("elsewhere");
    });
    assert!(errors_of(&clean).is_empty(), "{clean:#?}");
    // A path that runs off the end of the code.
    let off = findings("rv64gc", Abi::Psabi, |f| kasm!(f, beqz a2, out; ret; out: li t0, 1;));
    assert_eq!(errors_of(&off), vec![Check::ControlFlow], "{off:#?}");
}

#[test]
fn a_declared_leak_covers_its_region_only_and_must_be_used() {
    let branch = |f: &mut Func| kasm!(f, lw t0, 0(a1); beqz t0, out; sw a2, 0(a0); out: li t0, 0;);
    // Declared around the branch: fine.
    let ok = findings("rv64gc", Abi::Psabi, |f| {
        f.leaking(LeakKind::SecretBranch, "test", branch);
        kasm!(f, ret;);
    });
    assert!(errors_of(&ok).is_empty(), "{ok:#?}");
    // Declared on other instructions: the branch is an error, and the declaration unused.
    let elsewhere = findings("rv64gc", Abi::Psabi, |f| {
        f.leaking(LeakKind::SecretBranch, "test", |f| kasm!(f, addi t1, zero, 0;));
        branch(f);
        kasm!(f, ret;);
    });
    assert_eq!(errors_of(&elsewhere), vec![Check::SecretBranch, Check::UnusedLeak], "{elsewhere:#?}");
    // A declaration with nothing to excuse.
    let unused = findings("rv64gc", Abi::Psabi, |f| {
        f.leaking(LeakKind::SecretAddress, "nothing here", |f| kasm!(f, ld t0, 0(a1); sd t0, 0(a0); li t0, 0;));
        kasm!(f, ret;);
    });
    assert_eq!(errors_of(&unused), vec![Check::UnusedLeak], "{unused:#?}");
}

#[test]
fn misaligned_accesses_on_targets_that_trap() {
    let probe = |tgt: &str, align: u32, body: &dyn Fn(&mut Func)| {
        let t = target(tgt).unwrap();
        let mut f = Func::new("probe", &t, Abi::Psabi);
        f.arg("dst", bytes(Access::Out, 8), false);
        f.arg("src", bytes(Access::In, align), false);
        body(&mut f);
        errors_of(&check_func(&f.finish().unwrap(), Abi::Psabi))
    };
    let load = |f: &mut Func| kasm!(f, lw t0, 0(a1); sw t0, 0(a0); ret;);
    // A 4-byte load through a byte pointer: refused where misaligned access traps.
    assert_eq!(probe("rv64gc", 1, &load), vec![Check::Misaligned]);
    assert!(probe("rv64gc", 4, &load).is_empty());
    assert!(probe("c906", 1, &load).is_empty(), "the C906 does misaligned accesses in hardware");
    // An alignment test on the path proves it (also through `or` of two pointers), and
    // pointer arithmetic keeps it.
    let tested = |f: &mut Func| kasm!(f, or t1, a0, a1; andi t1, t1, 3; bnez t1, out; lw t0, 4(a1); addi t2, a1, 8; lw t0, 0(t2); sw t0, 0(a0); out: li t0, 0; ret;);
    assert!(probe("rv64gc", 1, &tested).is_empty());
    // ... but not on the other edge, nor past an odd offset.
    let wrong_edge = |f: &mut Func| kasm!(f, andi t1, a1, 3; beqz t1, out; lw t0, 0(a1); sw t0, 0(a0); out: li t0, 0; ret;);
    assert_eq!(probe("rv64gc", 1, &wrong_edge), vec![Check::Misaligned]);
    let odd = |f: &mut Func| kasm!(f, andi t1, a1, 3; bnez t1, out; lw t0, 2(a1); sw t0, 0(a0); out: li t0, 0; ret;);
    assert_eq!(probe("rv64gc", 1, &odd), vec![Check::Misaligned]);
    // Rounding down with `sub p, p, p & 7` aligns.
    let rounded = |f: &mut Func| kasm!(f, andi t1, a1, 7; sub t2, a1, t1; ld t0, 0(t2); sd t0, 0(a0); li t0, 0; ret;);
    assert!(probe("rv64gc", 1, &rounded).is_empty());
}

#[test]
fn sign_extended_factors_are_short_for_signed_multiplies_only() {
    // A secret loaded with `lw` is sign-extended from bit 31: the C906 multiplier reads it
    // as short for `mul` (signed), not for `mulhu` (unsigned).
    let mul = |f: &mut Func| kasm!(f, lw t0, 0(a1); lw t1, 4(a1); mul t0, t0, t1; sd t0, 0(a0); li t0, 0; li t1, 0; ret;);
    let mulhu = |f: &mut Func| kasm!(f, lw t0, 0(a1); lw t1, 4(a1); mulhu t0, t0, t1; sd t0, 0(a0); li t0, 0; li t1, 0; ret;);
    assert!(errors_of(&findings("c906", Abi::Psabi, mul)).is_empty());
    assert_eq!(errors_of(&findings("c906", Abi::Psabi, mulhu)), vec![Check::SecretMulTiming]);
}

#[test]
fn vector_stack_extents_follow_the_targets_vlen() {
    // A vector group stored at VLMAX to a 16-byte frame: it fits at VLEN 128 and overflows
    // the frame on a target that may have VLEN 512.
    let body = |f: &mut Func| kasm!(f, addi sp, sp, -16; vsetvli t0, zero, e32, m1, ta, ma; vmv.v.i v1, 0; vse32.v v1, (sp); addi sp, sp, 16; ret;);
    let mut t = target("rv64gcv").unwrap();
    t.vlen_max = 128;
    let mut f = Func::new("probe", &t, Abi::Psabi);
    body(&mut f);
    assert!(errors_of(&check_func(&f.clone().finish().unwrap(), Abi::Psabi)).is_empty());
    t.vlen_max = 512;
    let mut f = Func::new("probe", &t, Abi::Psabi);
    body(&mut f);
    assert_eq!(errors_of(&check_func(&f.finish().unwrap(), Abi::Psabi)), vec![Check::StackBounds]);
}

#[test]
fn no_division_by_or_of_secrets() {
    // A division's time depends on its operands on the C906 (6 + the difference of their
    // bit lengths / 2 cycles) and is not known constant on any other target: a secret
    // dividend or divisor is a timing leak everywhere; public operands are not.
    let good = |f: &mut Func| kasm!(f, lwu t0, 0(a1); divu t1, a2, a2; sd t0, 0(a0); sd t1, 8(a0); li t0, 0; ret;);
    let dividend = |f: &mut Func| kasm!(f, lwu t0, 0(a1); divu t1, t0, a2; sd t1, 0(a0); li t0, 0; li t1, 0; ret;);
    let divisor = |f: &mut Func| kasm!(f, lwu t0, 0(a1); remu t1, a2, t0; sd t1, 0(a0); li t0, 0; li t1, 0; ret;);
    for tgt in ["c906", "rv64gc"] {
        let f = pair(tgt, good, dividend, Check::SecretDivTiming);
        assert!(f.msg.contains("dividend t0") && f.inst.starts_with("divu"), "{tgt}: {f}");
        let f = pair(tgt, good, divisor, Check::SecretDivTiming);
        assert!(f.msg.contains("divisor t0") && f.inst.starts_with("remu"), "{tgt}: {f}");
    }
    // Excused only by a declared leak of that kind.
    let d = findings("c906", Abi::Psabi, |f| f.leaking(LeakKind::SecretDivTiming, "test", dividend));
    assert!(errors_of(&d).is_empty() && d.iter().any(|x| x.declared && x.check == Check::SecretDivTiming), "{d:#?}");
    let wrong = findings("c906", Abi::Psabi, |f| f.leaking(LeakKind::SecretMulTiming, "test", dividend));
    assert!(errors_of(&wrong).contains(&Check::SecretDivTiming), "{wrong:#?}");
}

#[test]
fn no_vector_division_by_or_of_secrets() {
    // Vector division is outside Zvkt's data-independent set, and the C906's vector divider
    // is iterative: a secret element as dividend or divisor (or a secret scalar divisor of
    // the .vx form) is a timing leak; the same division of public elements is not.
    let good = |f: &mut Func| {
        kasm!(f,
            vsetvli t0, a2, e32, m1, ta, ma; vle32.v v1, (a1); vle32.v v3, (a0);
            vdivu.vv v2, v3, v3; vadd.vv v2, v2, v1; vse32.v v2, (a0);
            vmv.v.i v1, 0; vmv.v.i v2, 0; ret;
        )
    };
    let dividend = |f: &mut Func| {
        kasm!(f,
            vsetvli t0, a2, e32, m1, ta, ma; vle32.v v1, (a1); vle32.v v3, (a0);
            vdivu.vv v2, v1, v3; vse32.v v2, (a0);
            vmv.v.i v1, 0; vmv.v.i v2, 0; ret;
        )
    };
    let divisor = |f: &mut Func| {
        kasm!(f,
            vsetvli t0, a2, e32, m1, ta, ma; lwu t1, 0(a1); vle32.v v3, (a0);
            vremu.vx v2, v3, t1; vse32.v v2, (a0);
            vmv.v.i v2, 0; li t1, 0; ret;
        )
    };
    let f = pair("rv64gcv", good, dividend, Check::SecretDivTiming);
    assert!(f.msg.contains("dividend v1") && f.msg.contains("Zvkt") && f.inst.starts_with("vdivu.vv"), "{f}");
    let f = pair("rv64gcv", good, divisor, Check::SecretDivTiming);
    assert!(f.msg.contains("divisor t1") && f.inst.starts_with("vremu.vx"), "{f}");
    // XTheadVector's divide on the C906.
    let f = pair(
        "c906",
        |f| kasm!(f, th.vsetvli t0, a2, e32, m1, d1; th.vle.v v1, (a1); th.vle.v v3, (a0); th.vdivu.vv v2, v3, v3; th.vadd.vv v2, v2, v1; th.vse.v v2, (a0); th.vmv.v.i v1, 0; th.vmv.v.i v2, 0; ret;),
        |f| kasm!(f, th.vsetvli t0, a2, e32, m1, d1; th.vle.v v1, (a1); th.vle.v v3, (a0); th.vdivu.vv v2, v3, v1; th.vse.v v2, (a0); th.vmv.v.i v1, 0; th.vmv.v.i v2, 0; ret;),
        Check::SecretDivTiming,
    );
    assert!(f.msg.contains("divisor v1") && f.inst.starts_with("th.vdivu.vv"), "{f}");
}

#[test]
fn the_report_names_what_constant_time_covers() {
    let t = |name: &str| kgen_dsl::report::constant_time_classes(&target(name).unwrap());
    assert_eq!(t("c906"), "constant time (branches, addresses, multiplies, divisions)");
    assert_eq!(t("rv64gc"), "constant time (branches, addresses, divisions)");
    let m = kgen_kernels::kernel("sha256").unwrap().variant("rv64gc").unwrap().build(Abi::Psabi).unwrap();
    let lines = kgen_dsl::report::Report::of(&m.funcs[0]).lines().join("\n");
    assert!(lines.contains("constant time (branches, addresses, divisions)") && lines.contains("no store through a read-only pointer"), "{lines}");
}

#[test]
fn no_store_through_a_read_only_pointer() {
    // `key` (a1) is declared In (its prototype says const): writing through it is an error
    // naming it; writing through `dst` (Out) is what the function is for.
    let f = pair(
        "rv64gc",
        |f| kasm!(f, ld t0, 0(a0); addi t0, t0, 1; sd t0, 8(a0); ret;),
        |f| kasm!(f, ld t0, 0(a0); addi t0, t0, 1; sd t0, 8(a1); ret;),
        Check::StoreToInput,
    );
    assert!(f.msg.contains("`key`") && f.msg.contains("read-only"), "{f}");
    // Through a pointer derived from it, too.
    let b = findings("rv64gc", Abi::Psabi, |f| kasm!(f, addi t1, a1, 16; sd a2, 0(t1); ret;));
    assert_eq!(errors_of(&b), vec![Check::StoreToInput], "{b:#?}");
}

#[test]
fn linux_reserves_the_frame_pointer() {
    // s0 saved, used and restored: fine under the psABI, an error under Linux, whose
    // unwinder follows s0 as the frame pointer.
    let body = |f: &mut Func| kasm!(f, addi sp, sp, -16; sd s0, 0(sp); ld s0, 0(a0); sd s0, 8(a0); ld s0, 0(sp); addi sp, sp, 16; ret;);
    assert!(errors_of(&findings("rv64gc", Abi::Psabi, body)).is_empty());
    let l = findings("rv64gc", Abi::Linux, body);
    assert_eq!(errors_of(&l), vec![Check::Reserved], "{l:#?}");
    assert!(l[0].msg.contains("s0") && l[0].msg.contains("linux"), "{}", l[0]);
    // And the allocator never hands it out under Linux.
    assert!(!Abi::Linux.allocatable_x().contains(&8) && Abi::Psabi.allocatable_x().contains(&8));
}

#[test]
fn code_no_path_reaches_is_an_error() {
    let f = pair("rv64gc", |f| kasm!(f, ld t0, 0(a0); sd t0, 8(a0); ret;), |f| kasm!(f, ld t0, 0(a0); ret; sd t0, 8(a0); ret;), Check::ControlFlow);
    assert!(f.inst.starts_with("sd t0") && f.msg.contains("no path reaches"), "{f}");
    // Out-of-line code reached by a branch is fine.
    assert!(errors_of(&findings("rv64gc", Abi::Psabi, |f| kasm!(f, bnez a2, far; ret; far: sd a2, 0(a0); ret;))).is_empty());
}

#[test]
fn module_refuses_another_abi_and_a_symbol_twice() {
    let t = target("rv64gc").unwrap();
    let func = |abi: Abi| {
        let mut f = Func::new("f", &t, abi);
        let p = f.arg("p", Ty::Ptr { elem: Elem::U64, access: Access::InOut, align: 8 }, false);
        kasm!(f, ld t0, 0({p}); sd t0, 8({p}););
        f.ret();
        f
    };
    let mut m = Module::new("demo", "rv64gc", &t, Abi::Linux);
    let e = m.add(func(Abi::Psabi), true).unwrap_err().to_string();
    assert!(e.contains("demo rv64gc (linux): f") && e.contains("openssl ABI") && e.contains("linux ABI"), "{e}");
    m.add(func(Abi::Linux), true).unwrap();
    let e = m.add(func(Abi::Linux), true).unwrap_err().to_string();
    assert!(e.contains("already has a symbol `f`"), "{e}");
    assert_eq!(m.funcs.len(), 1);
}
