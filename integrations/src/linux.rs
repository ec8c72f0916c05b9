//! `kgen linux-patches --base 6.12.118 [--src TREE] --out DIR`: a `git format-patch` series
//! against the Linux kernel (Debian's `linux-source-6.12`) that gives the kernel's crypto
//! kgen's kernels on riscv64, all under `arch/riscv/crypto/kgen/`:
//!
//! 1. detection and test counters: `kgen.h` (a T-Head C9xx core by mvendorid, marchid and
//!    mimpid, which Linux 6.12 reports for modules; Zba/Zbb/Zbc/Zbs and RVV 1.0 by the ISA
//!    the kernel reports), `kgen-common.c` (with `CRYPTO_KGEN_TRACE`, a testing option:
//!    per-variant call counters and, at the end of boot, a look-up of every algorithm the
//!    series registers and of the templates that use them, which runs their self-tests),
//!    the Kconfig menu, and two config fragments (`kgen-crypto.config` turns on what the
//!    series adds, `kgen-crypto-selftest.config` the self-tests and the counters);
//! 2. one patch per kernel that fills a [`LinuxSlot`]: its `.S` files (one per variant, as
//!    `kgen emit --abi linux` writes them) and a glue file, generated from the kernel's
//!    entry-point declarations: the prototypes, a dispatcher per entry point (the variant
//!    chosen at boot, vector code between `kernel_vector_begin()`/`end()` or, where SIMD is
//!    not usable, the first scalar variant the CPU has) and the slot's library hooks or
//!    crypto API algorithms.
//!
//! At boot each glue picks the first of its variants the CPU can run and prints one line
//! (`kgen: chacha20: c906-novector`). Drivers are named `<algorithm>-kgen-<variant>` and
//! have priority 200: above the generic C (100), below the Zvk* drivers (300).

use crate::series::{check_edits, format, Edit, Patch};
use kgen_dsl::entry::{Entry, Ret};
use kgen_dsl::kernel::hooks::{Hook, Linux, LinuxSlot};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::{Abi, Ext, Module};
use kgen_emit::{Compat, EmitOptions};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A kernel release the series is for: its name, where its sources are (under kgen's
/// toolchain directory, or absolute), and the lines of its files the series edits.
pub struct Base {
    pub name: &'static str,
    pub dir: &'static str,
    pub edits: &'static [Edit],
    /// The C types of the entry points' declarations that the base's headers define (the
    /// glue defines the others from the declarations), and the header of each.
    pub defines: &'static [(&'static str, &'static str)],
}

/// Linux 6.12.118, Debian's `linux-source-6.12` 6.12.118-1~deb12u1 (bookworm-security).
pub const LINUX_6_12_118: Base = Base {
    name: "6.12.118",
    dir: "linux-6.12.118/linux-source-6.12",
    edits: &[
        ("arch/riscv/crypto/Kconfig", "endmenu", "source \"arch/riscv/crypto/kgen/Kconfig\"\n\nendmenu"),
        (
            "arch/riscv/crypto/Makefile",
            "sm4-riscv64-y := sm4-riscv64-glue.o sm4-riscv64-zvksed-zvkb.o",
            "sm4-riscv64-y := sm4-riscv64-glue.o sm4-riscv64-zvksed-zvkb.o\n\nobj-$(CONFIG_CRYPTO_KGEN) += kgen/",
        ),
    ],
    // 6.12 has no struct sha256_block_state / sha512_block_state (7.x does).
    defines: &[("struct crypto_aes_ctx", "include/crypto/aes.h")],
};

pub const BASES: &[&Base] = &[&LINUX_6_12_118];

/// The directory the series' files go to.
pub const DIR: &str = "arch/riscv/crypto/kgen";
/// Where the config fragments go (`make kgen-crypto.config` merges one).
pub const CONFIGS: &str = "arch/riscv/configs";

impl Base {
    /// The default source tree (scripts/setup-toolchain.sh unpacks it there).
    pub fn path(&self) -> PathBuf {
        let p = Path::new(self.dir);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            kgen_harness::oracle::toolchain_dir().join(p)
        }
    }
}

/// The base named `name`.
pub fn base(name: &str) -> Result<&'static Base, String> {
    BASES
        .iter()
        .copied()
        .find(|b| b.name == name)
        .ok_or_else(|| format!("linux-patches: unknown --base `{name}` (known: {})", BASES.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")))
}

/// The command that regenerates the series (named in every generated file).
pub fn command(base: &str) -> String {
    format!("kgen linux-patches --base {base} --out DIR")
}

/// One variant of a slot's kernel as the glue sees it.
struct Var {
    name: &'static str,
    module: Module,
    /// The C condition under which the CPU runs it.
    cond: String,
    /// It uses the vector unit: called between kernel_vector_begin()/end(), compiled only
    /// with CONFIG_RISCV_ISA_V.
    vector: bool,
}

/// A kernel filling a slot, with its variants in dispatch order.
struct Filled {
    kernel: &'static Kernel,
    hook: &'static Linux,
    vars: Vec<Var>,
}

/// What the glue calls a slot (module, Kconfig and file names, boot lines).
fn alg_name(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "chacha20",
        LinuxSlot::Poly1305 { .. } => "poly1305",
        LinuxSlot::Ghash { .. } => "ghash",
        LinuxSlot::Sha2 { bits: 256 } => "sha256",
        LinuxSlot::Sha2 { .. } => "sha512",
        LinuxSlot::Aes => "aes",
    }
}

/// The number of entry points each slot takes.
fn entries_of(slot: LinuxSlot) -> usize {
    match slot {
        LinuxSlot::ChaCha20 | LinuxSlot::Sha2 { .. } => 1,
        LinuxSlot::Ghash { .. } => 2,
        LinuxSlot::Poly1305 { .. } => 3,
        LinuxSlot::Aes => 6,
    }
}

/// The C condition (on kgen.h's helpers) under which a module's instructions can run.
fn needs(kernel: &str, v: &kgen_dsl::kernel::Variant, m: &Module) -> Result<(String, bool), String> {
    let used = m.exts_used();
    let mut conds = Vec::new();
    let mut vector = false;
    for e in &used {
        match e {
            Ext::XTheadVector => {
                return Err(format!("linux-patches: {kernel} {}: XTheadVector has no kernel-mode support in Linux 6.12; name a variant without it", v.name))
            }
            Ext::V => {
                let lo = v.vlens.iter().min().copied().unwrap_or(128);
                let hi = v.vlens.iter().max().copied().unwrap_or(65536);
                conds.push(format!("kgen_rvv({lo}, {hi})"));
                vector = true;
            }
            Ext::Zba | Ext::Zbb | Ext::Zbc | Ext::Zbs => conds.push(format!("riscv_isa_extension_available(NULL, {})", e.name().to_uppercase())),
            e if e.name().starts_with("xthead") => {
                if !conds.iter().any(|c| c == "kgen_thead_c9xx()") {
                    conds.push("kgen_thead_c9xx()".into())
                }
            }
            e => return Err(format!("linux-patches: {kernel} {} uses {}, which the Linux glue does not test for", v.name, e.name())),
        }
    }
    Ok((if conds.is_empty() { "true".into() } else { conds.join(" && ") }, vector))
}

fn filled(kernel: &'static Kernel, hook: &'static Linux) -> Result<Filled, String> {
    let want = entries_of(hook.slot);
    if hook.entries.len() != want || hook.variants.is_empty() {
        return Err(format!(
            "linux-patches: the {} slot takes {want} entry points and some variants; kernel `{}` names {} and {}",
            alg_name(hook.slot),
            kernel.name,
            hook.entries.len(),
            hook.variants.len()
        ));
    }
    let mut vars = Vec::new();
    for &v in hook.variants {
        let var = kernel.variant(v).ok_or_else(|| format!("linux-patches: kernel `{}` has no variant `{v}`", kernel.name))?;
        if !var.abis.contains(&Abi::Linux) {
            return Err(format!("linux-patches: {} {v} has no Linux form", kernel.name));
        }
        let m = var.build(Abi::Linux).map_err(|e| format!("linux-patches: {} {v}: {e}", kernel.name))?;
        if m.declares_leaks() {
            return Err(format!("linux-patches: {} {v} declares a leak; the Linux series takes only constant-time code", kernel.name));
        }
        for e in hook.entries {
            if !m.funcs.iter().any(|f| f.func.name == e.symbol(v)) {
                return Err(format!("linux-patches: {} {v} has no function {}", kernel.name, e.symbol(v)));
            }
        }
        let (cond, vector) = needs(kernel.name, var, &m)?;
        vars.push(Var { name: v, module: m, cond, vector });
    }
    if vars.last().is_some_and(|v| v.cond != "true") {
        return Err(format!("linux-patches: {}: the last variant ({}) must run on every RV64GC core", kernel.name, vars.last().unwrap().name));
    }
    Ok(Filled { kernel, hook, vars })
}

/// The slots' fillers in the series' order.
fn slots(kernels: &[&'static Kernel]) -> Result<Vec<Filled>, String> {
    let mut found: Vec<(&'static Kernel, &'static Linux)> = Vec::new();
    for &k in kernels {
        for h in k.hooks {
            if let Hook::Linux(l) = h {
                if let Some((other, _)) = found.iter().find(|(_, o)| o.slot == l.slot) {
                    return Err(format!("linux-patches: kernels `{}` and `{}` both fill the {} slot", other.name, k.name, alg_name(l.slot)));
                }
                found.push((k, l));
            }
        }
    }
    if found.is_empty() {
        return Err("linux-patches: no kernel fills a Linux slot".into());
    }
    found.sort_by_key(|(_, h)| h.slot);
    found.into_iter().map(|(k, h)| filled(k, h)).collect()
}

/// A C identifier for the kernel's dispatcher of entry `e`: `kgen_` + the symbol without
/// the variant (`kgen_chacha`, `kgen_ghash_init`, `kgen_aes_ct_ctr32`).
fn dispatcher(e: &Entry) -> String {
    format!("kgen_{}{}", e.prefix.trim_end_matches('_'), e.suffix)
}

/// `C` of the series' generated-file comment.
fn banner(base: &str, what: &str) -> String {
    format!("/*\n * Generated by {}; do not edit. Regenerate with:\n *   {}\n *\n{} */\n", kgen_emit::GENERATOR, command(base), what.lines().map(|l| if l.is_empty() { " *\n".to_string() } else { format!(" * {l}\n") }).collect::<String>())
}

/// The C type definitions the base lacks for the entries' named types (Linux 6.12 has no
/// `struct sha256_block_state`): from the entries' declarations.
fn type_defs(base: &Base, f: &Filled) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    for e in f.hook.entries {
        for p in e.params {
            if let Some(kgen_dsl::entry::Elem::Named { name, def, .. }) = p.ty.elem() {
                if !seen.contains(&name) && !base.defines.iter().any(|(t, _)| *t == name) {
                    seen.push(name);
                    let _ = writeln!(out, "/* Not in this kernel's headers: the layout kgen's code reads. */\n{def};\n");
                }
            }
        }
    }
    out
}

/// Checks the base's facts against its tree: every type it says it defines is there.
fn check_defines(base: &Base, src: &Path) -> Result<(), String> {
    for (t, h) in base.defines {
        let text = std::fs::read_to_string(src.join(h)).map_err(|e| format!("linux-patches: base {}: {h}: {e}", base.name))?;
        if !text.contains(&format!("{t} {{")) {
            return Err(format!("linux-patches: base {}: {h} does not define {t}", base.name));
        }
    }
    Ok(())
}

/// The argument list of a call forwarding every parameter.
fn args(e: &Entry) -> String {
    e.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// The dispatcher's own prototype: the entry's, under the dispatcher's name, static.
fn dispatcher_proto(e: &Entry) -> String {
    format!("static {}", e.prototype_named(&dispatcher(e), Abi::Linux))
}

/// Prototypes, the variant table, the boot-time choice and one dispatcher per entry.
fn dispatch(f: &Filled) -> String {
    let alg = alg_name(f.hook.slot);
    let n = f.vars.len();
    let last = n - 1;
    let mut s = String::new();
    for v in &f.vars {
        if v.vector {
            s.push_str("#ifdef CONFIG_RISCV_ISA_V\n");
        }
        for e in f.hook.entries {
            let _ = writeln!(s, "asmlinkage {};", e.prototype(v.name, Abi::Linux));
        }
        if v.vector {
            s.push_str("#endif\n");
        }
    }
    let _ = writeln!(s, "\n/* The variants, in the order the CPU is asked for them. */");
    let _ = writeln!(s, "static const char *const kgen_{alg}_variants[] = {{ {} }};", f.vars.iter().map(|v| format!("\"{}\"", v.name)).collect::<Vec<_>>().join(", "));
    let _ = writeln!(s, "static atomic_long_t kgen_{alg}_calls[{n}];");
    let _ = writeln!(s, "/* The variant chosen at boot, and the scalar one used where SIMD is not usable; the");
    let _ = writeln!(s, " * last variant (plain RV64GC) until the choice is made. */");
    let _ = writeln!(s, "static int kgen_{alg}_variant __ro_after_init = {last};");
    let _ = writeln!(s, "static int kgen_{alg}_scalar __ro_after_init = {last};\n");
    let _ = writeln!(s, "static int __init kgen_{alg}_pick(bool scalar_only)\n{{");
    for (i, v) in f.vars.iter().enumerate().take(last) {
        if v.vector {
            let _ = writeln!(s, "\tif (IS_ENABLED(CONFIG_RISCV_ISA_V) && !scalar_only && {})\n\t\treturn {i};", v.cond);
        } else {
            let _ = writeln!(s, "\tif ({})\n\t\treturn {i};", v.cond);
        }
    }
    let _ = writeln!(s, "\treturn {last};\n}}\n");
    let vec_idx: Vec<usize> = f.vars.iter().enumerate().filter(|(_, v)| v.vector).map(|(i, _)| i).collect();
    let _ = writeln!(s, "/* The variant to run now. */\nstatic inline int kgen_{alg}_now(void)\n{{\n\tint v = READ_ONCE(kgen_{alg}_variant);\n");
    if !vec_idx.is_empty() {
        let _ = writeln!(s, "\tif (({}) && !crypto_simd_usable())\n\t\tv = kgen_{alg}_scalar;", vec_idx.iter().map(|i| format!("v == {i}")).collect::<Vec<_>>().join(" || "));
    }
    let _ = writeln!(s, "\treturn v;\n}}\n");
    for e in f.hook.entries {
        let _ = writeln!(s, "{}\n{{\n\tint v = kgen_{alg}_now();\n\n\tkgen_count(kgen_{alg}_calls, v);\n\tswitch (v) {{", dispatcher_proto(e));
        let ret = e.ret != Ret::Void;
        for (i, v) in f.vars.iter().enumerate() {
            let call = format!("{}({})", e.symbol(v.name), args(e));
            if i == last {
                let _ = writeln!(s, "\tdefault:");
            } else {
                let _ = writeln!(s, "\tcase {i}:");
            }
            if v.vector {
                let _ = writeln!(s, "#ifdef CONFIG_RISCV_ISA_V\n\t{{");
                if ret {
                    let _ = writeln!(s, "\t\t{} r;\n\n\t\tkernel_vector_begin();\n\t\tr = {call};\n\t\tkernel_vector_end();\n\t\treturn r;", e.ret.c_in(Abi::Linux));
                } else {
                    let _ = writeln!(s, "\t\tkernel_vector_begin();\n\t\t{call};\n\t\tkernel_vector_end();\n\t\treturn;");
                }
                let _ = writeln!(s, "\t}}\n#else\n\t\tbreak;\n#endif");
            } else if ret {
                let _ = writeln!(s, "\t\treturn {call};");
            } else {
                let _ = writeln!(s, "\t\t{call};\n\t\treturn;");
            }
        }
        let _ = writeln!(s, "\t}}");
        // Only reached for a vector variant compiled out, which is never chosen.
        let last_call = format!("{}({})", e.symbol(f.vars[last].name), args(e));
        if ret {
            let _ = writeln!(s, "\treturn {last_call};\n}}\n");
        } else {
            let _ = writeln!(s, "\t{last_call};\n}}\n");
        }
    }
    let _ = writeln!(
        s,
        "static struct kgen_trace kgen_{alg}_trace = {{\n\t.alg = \"{alg}\",\n\t.variants = kgen_{alg}_variants,\n\t.n = {n},\n\t.calls = kgen_{alg}_calls,\n\t.checks = kgen_{alg}_checks,\n}};\n"
    );
    let _ = writeln!(
        s,
        "/* Chooses the variant, names the drivers after it and prints the choice. */\nstatic void __init kgen_{alg}_choose(void)\n{{\n\tkgen_{alg}_variant = kgen_{alg}_pick(false);\n\tkgen_{alg}_scalar = kgen_{alg}_pick(true);\n\tkgen_announce(&kgen_{alg}_trace, kgen_{alg}_variant, kgen_{alg}_scalar);\n}}"
    );
    s
}

const KGEN_H: &str = r#"/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
@BANNER@
#ifndef _RISCV_CRYPTO_KGEN_H
#define _RISCV_CRYPTO_KGEN_H

#include <asm/cpufeature.h>
#include <asm/sbi.h>
#include <asm/simd.h>
#include <asm/vector.h>
#include <crypto/internal/simd.h>
#include <linux/atomic.h>
#include <linux/crypto.h>
#include <linux/list.h>
#include <linux/types.h>

/* mvendorid of T-Head (JEDEC bank 12, 0x37). */
#define KGEN_THEAD_VENDOR	0x5b7

/*
 * A T-Head C906/C910 core: mvendorid T-Head with marchid 0 and mimpid 0. Those cores have
 * the scalar extensions XTheadBa, XTheadBb, XTheadMac, XTheadMemIdx and XTheadCondMov,
 * which Linux does not report: the ids decide.
 */
static inline bool kgen_thead_c9xx(void)
{
	return riscv_cached_mvendorid(0) == KGEN_THEAD_VENDOR &&
	       riscv_cached_marchid(0) == 0 && riscv_cached_mimpid(0) == 0;
}

/* RVV 1.0 usable in the kernel, with VLEN in [lo, hi] bits. */
static inline bool kgen_rvv(int lo, int hi)
{
#ifdef CONFIG_RISCV_ISA_V
	return has_vector() && riscv_vector_vlen() >= lo && riscv_vector_vlen() <= hi;
#else
	return false;
#endif
}

/* One algorithm of the series: its variants, their call counters and what to look up. */
struct kgen_trace {
	const char *alg;
	const char *const *variants;
	int n;
	atomic_long_t *calls;
	/* Algorithm and driver names whose look-up runs their self-tests, NULL-terminated. */
	const char *const *checks;
	struct list_head list;
};

void kgen_announce(struct kgen_trace *t, int variant, int scalar);
void kgen_driver_name(struct crypto_alg *alg, const char *suffix, const char *variant);

#ifdef CONFIG_CRYPTO_KGEN_TRACE
#define kgen_count(calls, v)	atomic_long_inc(&(calls)[v])
#else
#define kgen_count(calls, v)	do { } while (0)
#endif

#endif /* _RISCV_CRYPTO_KGEN_H */
"#;

const KGEN_COMMON_C: &str = r#"// SPDX-License-Identifier: GPL-2.0-only OR MIT
@BANNER@
#include <crypto/aead.h>
#include <linux/crypto.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include "kgen.h"

static LIST_HEAD(kgen_traces);
static DEFINE_MUTEX(kgen_traces_lock);

/* Prints the variant an algorithm chose at boot and keeps its counters for the report. */
void kgen_announce(struct kgen_trace *t, int variant, int scalar)
{
	if (scalar != variant)
		pr_info("kgen: %s: %s (%s where SIMD is not usable)\n", t->alg, t->variants[variant], t->variants[scalar]);
	else
		pr_info("kgen: %s: %s\n", t->alg, t->variants[variant]);
	mutex_lock(&kgen_traces_lock);
	list_add_tail(&t->list, &kgen_traces);
	mutex_unlock(&kgen_traces_lock);
}
EXPORT_SYMBOL_GPL(kgen_announce);

/*
 * Names a driver after its algorithm and the variant: "ghash" becomes
 * "ghash-kgen-rv64gc-zbc"; a mode's name drops its parentheses, "ctr(aes)" with suffix
 * "-aes" becoming "ctr-aes-kgen-rv64gc".
 */
void kgen_driver_name(struct crypto_alg *alg, const char *suffix, const char *variant)
{
	char mode[CRYPTO_MAX_ALG_NAME];
	char *paren;

	strscpy(mode, alg->cra_name);
	paren = strchr(mode, '(');
	if (paren)
		*paren = 0;
	snprintf(alg->cra_driver_name, CRYPTO_MAX_ALG_NAME, "%s%s-kgen-%s", mode, suffix, variant);
}
EXPORT_SYMBOL_GPL(kgen_driver_name);

#ifdef CONFIG_CRYPTO_KGEN_TRACE
/*
 * At the end of boot: look up every algorithm and template the series' algorithms serve
 * (which waits for, or runs, their self-tests), print each result, then the calls each
 * variant took.
 */
static int __init kgen_trace_report(void)
{
	struct kgen_trace *t;
	const char *const *c;
	int i;

	mutex_lock(&kgen_traces_lock);
	list_for_each_entry(t, &kgen_traces, list) {
		for (c = t->checks; *c; c++) {
			/* A template's AEAD: its driver name shows which drivers it took. */
			if (!strncmp(*c, "gcm(", 4) || !strncmp(*c, "rfc", 3)) {
				struct crypto_aead *a = crypto_alloc_aead(*c, 0, 0);

				if (IS_ERR(a)) {
					pr_info("kgen: test: %s: FAILED (%ld)\n", *c, PTR_ERR(a));
				} else {
					pr_info("kgen: test: %s: ok (%s)\n", *c, crypto_tfm_alg_driver_name(crypto_aead_tfm(a)));
					crypto_free_aead(a);
				}
			} else {
				pr_info("kgen: test: %s: %s\n", *c, crypto_has_alg(*c, 0, 0) ? "ok" : "FAILED");
			}
		}
	}
	list_for_each_entry(t, &kgen_traces, list) {
		for (i = 0; i < t->n; i++)
			pr_info("kgen: calls: %s %s %ld\n", t->alg, t->variants[i], atomic_long_read(&t->calls[i]));
	}
	mutex_unlock(&kgen_traces_lock);
	return 0;
}
late_initcall_sync(kgen_trace_report);
#endif
"#;

/// The Kconfig text of one slot.
fn kconfig_entry(f: &Filled) -> String {
    let (sym, prompt, selects): (&str, &str, &[&str]) = match f.hook.slot {
        LinuxSlot::ChaCha20 => (
            "CRYPTO_CHACHA20_KGEN",
            "Ciphers: ChaCha20, XChaCha20, XChaCha12 (kgen), and the ChaCha library",
            &["CRYPTO_SKCIPHER", "CRYPTO_LIB_CHACHA_GENERIC", "CRYPTO_ARCH_HAVE_LIB_CHACHA"],
        ),
        LinuxSlot::Poly1305 { .. } => ("CRYPTO_POLY1305_KGEN", "Hash functions: Poly1305 (kgen), and the Poly1305 library", &["CRYPTO_HASH", "CRYPTO_ARCH_HAVE_LIB_POLY1305"]),
        LinuxSlot::Ghash { .. } => ("CRYPTO_GHASH_KGEN", "Hash functions: GHASH (kgen), for GCM", &["CRYPTO_HASH"]),
        LinuxSlot::Sha2 { bits: 256 } => ("CRYPTO_SHA256_KGEN", "Hash functions: SHA-224 and SHA-256 (kgen)", &["CRYPTO_HASH", "CRYPTO_SHA256"]),
        LinuxSlot::Sha2 { .. } => ("CRYPTO_SHA512_KGEN", "Hash functions: SHA-384 and SHA-512 (kgen)", &["CRYPTO_HASH", "CRYPTO_SHA512"]),
        LinuxSlot::Aes => ("CRYPTO_AES_KGEN", "Ciphers: AES, modes: ECB, CTR (kgen, constant time)", &["CRYPTO_ALGAPI", "CRYPTO_SKCIPHER", "CRYPTO_LIB_AES"]),
    };
    let mut s = format!("config {sym}\n\ttristate \"{prompt}\"\n\tdefault CRYPTO_KGEN\n");
    for sel in selects {
        let _ = writeln!(s, "\tselect {sel}");
    }
    let _ = writeln!(s, "\thelp\n\t  {}.\n\n\t  kgen's {} kernel; at boot the first of these variants the CPU runs:", f.kernel.summary.trim_end_matches('.'), f.kernel.name);
    for v in &f.vars {
        let _ = writeln!(s, "\t  - {}: {}{}", v.name, v.cond, if v.vector { " (scalar fallback where SIMD is not usable)" } else { "" });
    }
    s
}

fn kconfig_symbol(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "CRYPTO_CHACHA20_KGEN",
        LinuxSlot::Poly1305 { .. } => "CRYPTO_POLY1305_KGEN",
        LinuxSlot::Ghash { .. } => "CRYPTO_GHASH_KGEN",
        LinuxSlot::Sha2 { bits: 256 } => "CRYPTO_SHA256_KGEN",
        LinuxSlot::Sha2 { .. } => "CRYPTO_SHA512_KGEN",
        LinuxSlot::Aes => "CRYPTO_AES_KGEN",
    }
}

/// kgen/Kconfig with the slots so far.
fn kconfig(fs: &[&Filled]) -> String {
    let mut s = String::from(
        "# SPDX-License-Identifier: GPL-2.0-only OR MIT\n# Generated by kgen; do not edit.\n\nmenuconfig CRYPTO_KGEN\n\tbool \"kgen's riscv64 kernels (RV64GC, Zbb/Zbc, RVV 1.0, T-Head C906 scalar)\"\n\tdepends on 64BIT\n\thelp\n\t  Constant-time scalar and vector code generated by kgen, chosen at boot\n\t  by the CPU: T-Head C906/C910 cores by their ids, Zba/Zbb/Zbc/Zbs and\n\t  RVV 1.0 by the ISA the kernel reports. Priority 200: above the\n\t  generic C, below the Zvk* drivers.\n\nif CRYPTO_KGEN\n\nconfig CRYPTO_KGEN_TRACE\n\tbool \"Count which kgen variant runs (for testing)\"\n\thelp\n\t  Counts the calls each variant takes and, at the end of boot, looks\n\t  up every algorithm the kgen drivers serve (running their self-tests)\n\t  and prints the results and the counts. For testing only.\n",
    );
    for f in fs {
        s.push('\n');
        s.push_str(&kconfig_entry(f));
    }
    s.push_str("\nendif # CRYPTO_KGEN\n");
    s
}

/// The object's base name of variant `v` of `f`'s kernel (`chacha20-c906-novector`).
fn s_name(f: &Filled, v: &Var) -> String {
    format!("{}-{}", f.kernel.name, v.name)
}

/// kgen/Makefile with the slots so far.
fn makefile(fs: &[&Filled]) -> String {
    let mut s = String::from("# SPDX-License-Identifier: GPL-2.0-only OR MIT\n# Generated by kgen; do not edit.\n\nobj-$(CONFIG_CRYPTO_KGEN) += kgen-common.o\n");
    for f in fs {
        let alg = alg_name(f.hook.slot);
        let _ = writeln!(s, "\nobj-$({}) += kgen-{alg}.o", kconfig_symbol(f.hook.slot).replace("CRYPTO", "CONFIG_CRYPTO"));
        let scalar: Vec<String> = f.vars.iter().filter(|v| !v.vector).map(|v| format!("{}.o", s_name(f, v))).collect();
        let _ = writeln!(s, "kgen-{alg}-y := {alg}-glue.o {}", scalar.join(" "));
        for v in f.vars.iter().filter(|v| v.vector) {
            let _ = writeln!(s, "kgen-{alg}-$(CONFIG_RISCV_ISA_V) += {}.o", s_name(f, v));
        }
    }
    s
}

/// The config fragments with the slots so far: (what the series adds, the self-tests).
fn fragments(fs: &[&Filled]) -> (String, String) {
    let mut on = String::from("# Generated by kgen: kgen's riscv64 crypto (make kgen-crypto.config)\nCONFIG_CRYPTO_KGEN=y\n");
    let mut test = String::from(
        "# Generated by kgen: the crypto self-tests with kgen's counters (make kgen-crypto-selftest.config)\nCONFIG_CRYPTO_KGEN_TRACE=y\nCONFIG_DEBUG_KERNEL=y\nCONFIG_CRYPTO_MANAGER=y\n# CONFIG_CRYPTO_MANAGER_DISABLE_TESTS is not set\nCONFIG_CRYPTO_MANAGER_EXTRA_TESTS=y\n",
    );
    for f in fs {
        let _ = writeln!(on, "CONFIG_{}=y", kconfig_symbol(f.hook.slot).trim_start_matches("CONFIG_"));
        let generic: &[&str] = match f.hook.slot {
            LinuxSlot::ChaCha20 => &["CRYPTO_CHACHA20", "CRYPTO_LIB_CHACHA20POLY1305", "CRYPTO_CHACHA20POLY1305"],
            LinuxSlot::Poly1305 { .. } => &["CRYPTO_POLY1305", "CRYPTO_LIB_POLY1305", "CRYPTO_CHACHA20POLY1305"],
            LinuxSlot::Ghash { .. } => &["CRYPTO_GHASH", "CRYPTO_GCM", "CRYPTO_CTR"],
            LinuxSlot::Sha2 { bits: 256 } => &["CRYPTO_SHA256"],
            LinuxSlot::Sha2 { .. } => &["CRYPTO_SHA512"],
            LinuxSlot::Aes => &["CRYPTO_AES", "CRYPTO_ECB", "CRYPTO_CTR", "CRYPTO_GCM"],
        };
        for g in generic {
            let line = format!("CONFIG_{g}=y\n");
            if !test.contains(&line) {
                test.push_str(&line);
            }
        }
    }
    (on, test)
}

/// The names whose look-up at the end of boot runs a slot's self-tests: its own
/// algorithms by driver name, and the templates built on them.
fn checks(slot: LinuxSlot) -> &'static [&'static str] {
    match slot {
        LinuxSlot::ChaCha20 => &["chacha20", "xchacha20", "xchacha12"],
        LinuxSlot::Poly1305 { .. } => &["poly1305", "rfc7539(chacha20,poly1305)", "rfc7539esp(chacha20,poly1305)"],
        LinuxSlot::Ghash { .. } => &["ghash", "gcm(aes)", "rfc4106(gcm(aes))"],
        LinuxSlot::Sha2 { bits: 256 } => &["sha224", "sha256"],
        LinuxSlot::Sha2 { .. } => &["sha384", "sha512"],
        LinuxSlot::Aes => &["aes", "ecb(aes)", "ctr(aes)"],
    }
}

/// The glue file of a slot.
fn glue(base: &Base, f: &Filled) -> Result<String, String> {
    let alg = alg_name(f.hook.slot);
    let what = format!("{alg} on kgen's {} kernel ({}): {}.", f.kernel.name, f.vars.iter().map(|v| v.name).collect::<Vec<_>>().join(", "), glue_doc(f.hook.slot));
    let mut s = format!("// SPDX-License-Identifier: GPL-2.0-only OR MIT\n{}\n", banner(base.name, &what));
    s.push_str(includes(f.hook.slot));
    s.push_str("#include \"kgen.h\"\n\n");
    s.push_str(&type_defs(base, f));
    let _ = writeln!(s, "static const char *const kgen_{alg}_checks[] = {{ {}, NULL }};\n", checks(f.hook.slot).iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "));
    s.push_str(&dispatch(f));
    s.push('\n');
    let body = match f.hook.slot {
        LinuxSlot::ChaCha20 => CHACHA_GLUE.to_string(),
        LinuxSlot::Poly1305 { state_bytes } => POLY1305_GLUE.replace("@STATE_BYTES@", &state_bytes.to_string()),
        LinuxSlot::Ghash { table_bytes } => GHASH_GLUE.replace("@TABLE_BYTES@", &table_bytes.to_string()),
        LinuxSlot::Sha2 { bits } => sha2_glue(bits, f.hook.entries[0]),
        LinuxSlot::Aes => AES_GLUE.to_string(),
    };
    s.push_str(&body);
    for e in f.hook.entries {
        let d = dispatcher(e);
        if !s.contains(&format!("{d}(")) {
            return Err(format!("linux-patches: the {alg} glue does not call {d}"));
        }
    }
    Ok(s)
}

fn glue_doc(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "the ChaCha library's chacha_crypt_arch() and the chacha20, xchacha20 and xchacha12 skciphers",
        LinuxSlot::Poly1305 { .. } => "the Poly1305 library's poly1305_{init,update,final}_arch() and the poly1305 shash",
        LinuxSlot::Ghash { .. } => "the ghash shash, which gcm(aes) and rfc4106(gcm(aes)) take",
        LinuxSlot::Sha2 { bits: 256 } => "the sha224 and sha256 shashes",
        LinuxSlot::Sha2 { .. } => "the sha384 and sha512 shashes",
        LinuxSlot::Aes => "the aes cipher and the ecb(aes) and ctr(aes) skciphers, constant time",
    }
}

fn includes(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "#include <crypto/algapi.h>\n#include <crypto/internal/chacha.h>\n#include <crypto/internal/skcipher.h>\n#include <linux/module.h>\n#include <linux/sizes.h>\n#include <linux/string.h>\n",
        LinuxSlot::Poly1305 { .. } => "#include <crypto/algapi.h>\n#include <crypto/internal/hash.h>\n#include <crypto/internal/poly1305.h>\n#include <linux/module.h>\n#include <linux/string.h>\n#include <linux/unaligned.h>\n",
        LinuxSlot::Ghash { .. } => "#include <crypto/ghash.h>\n#include <crypto/internal/hash.h>\n#include <linux/module.h>\n#include <linux/string.h>\n",
        LinuxSlot::Sha2 { bits: 256 } => "#include <crypto/internal/hash.h>\n#include <crypto/sha2.h>\n#include <crypto/sha256_base.h>\n#include <linux/module.h>\n",
        LinuxSlot::Sha2 { .. } => "#include <crypto/internal/hash.h>\n#include <crypto/sha2.h>\n#include <crypto/sha512_base.h>\n#include <linux/module.h>\n",
        LinuxSlot::Aes => "#include <crypto/aes.h>\n#include <crypto/algapi.h>\n#include <crypto/internal/cipher.h>\n#include <crypto/internal/skcipher.h>\n#include <linux/module.h>\n#include <linux/sizes.h>\n#include <linux/unaligned.h>\n",
    }
}

const CHACHA_GLUE: &str = r#"/*
 * The library's ChaCha: whole blocks straight from the caller's buffers, in pieces of
 * 4 KiB (vector code runs with preemption off); the last partial block through a
 * block on the stack, wiped after.
 */
void chacha_crypt_arch(u32 *state, u8 *dst, const u8 *src, unsigned int bytes, int nrounds)
{
	size_t blocks = bytes / CHACHA_BLOCK_SIZE;
	unsigned int tail = bytes % CHACHA_BLOCK_SIZE;

	while (blocks) {
		size_t n = min_t(size_t, blocks, SZ_4K / CHACHA_BLOCK_SIZE);

		kgen_chacha(state, src, dst, n, nrounds);
		src += n * CHACHA_BLOCK_SIZE;
		dst += n * CHACHA_BLOCK_SIZE;
		blocks -= n;
	}
	if (tail) {
		u8 buf[CHACHA_BLOCK_SIZE] = {};

		memcpy(buf, src, tail);
		kgen_chacha(state, buf, buf, 1, nrounds);
		memcpy(dst, buf, tail);
		memzero_explicit(buf, sizeof(buf));
	}
}
EXPORT_SYMBOL(chacha_crypt_arch);

void hchacha_block_arch(const u32 *state, u32 *stream, int nrounds)
{
	hchacha_block_generic(state, stream, nrounds);
}
EXPORT_SYMBOL(hchacha_block_arch);

void chacha_init_arch(u32 *state, const u32 *key, const u8 *iv)
{
	chacha_init_generic(state, key, iv);
}
EXPORT_SYMBOL(chacha_init_arch);

static int kgen_chacha_stream(struct skcipher_request *req, const struct chacha_ctx *ctx, const u8 *iv)
{
	struct skcipher_walk walk;
	u32 state[CHACHA_STATE_WORDS];
	int err;

	err = skcipher_walk_virt(&walk, req, false);
	chacha_init_generic(state, ctx->key, iv);
	while (walk.nbytes > 0) {
		unsigned int nbytes = walk.nbytes;

		if (nbytes < walk.total)
			nbytes = round_down(nbytes, walk.stride);
		chacha_crypt_arch(state, walk.dst.virt.addr, walk.src.virt.addr, nbytes, ctx->nrounds);
		err = skcipher_walk_done(&walk, walk.nbytes - nbytes);
	}
	memzero_explicit(state, sizeof(state));
	return err;
}

static int kgen_chacha_crypt(struct skcipher_request *req)
{
	const struct chacha_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));

	return kgen_chacha_stream(req, ctx, req->iv);
}

/* XChaCha: HChaCha on the key and the IV's first 16 bytes gives the subkey; the IV's last
 * 16 bytes, counter half first, are the stream's IV. */
static int kgen_xchacha_crypt(struct skcipher_request *req)
{
	const struct chacha_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct chacha_ctx sub;
	u32 state[CHACHA_STATE_WORDS];
	u8 iv[CHACHA_IV_SIZE];
	int err;

	chacha_init_generic(state, ctx->key, req->iv);
	hchacha_block_arch(state, sub.key, ctx->nrounds);
	sub.nrounds = ctx->nrounds;
	memcpy(iv, req->iv + 24, 8);
	memcpy(iv + 8, req->iv + 16, 8);
	err = kgen_chacha_stream(req, &sub, iv);
	memzero_explicit(&sub, sizeof(sub));
	memzero_explicit(state, sizeof(state));
	return err;
}

static struct skcipher_alg kgen_chacha_algs[] = {
	{
		.base.cra_name = "chacha20",
		.setkey = chacha20_setkey,
		.encrypt = kgen_chacha_crypt,
		.decrypt = kgen_chacha_crypt,
		.ivsize = CHACHA_IV_SIZE,
	}, {
		.base.cra_name = "xchacha20",
		.setkey = chacha20_setkey,
		.encrypt = kgen_xchacha_crypt,
		.decrypt = kgen_xchacha_crypt,
		.ivsize = XCHACHA_IV_SIZE,
	}, {
		.base.cra_name = "xchacha12",
		.setkey = chacha12_setkey,
		.encrypt = kgen_xchacha_crypt,
		.decrypt = kgen_xchacha_crypt,
		.ivsize = XCHACHA_IV_SIZE,
	},
};

static int __init kgen_chacha20_init(void)
{
	int i;

	kgen_chacha20_choose();
	for (i = 0; i < ARRAY_SIZE(kgen_chacha_algs); i++) {
		struct skcipher_alg *a = &kgen_chacha_algs[i];

		kgen_driver_name(&a->base, "", kgen_chacha20_variants[kgen_chacha20_variant]);
		a->base.cra_priority = 200;
		a->base.cra_blocksize = 1;
		a->base.cra_ctxsize = sizeof(struct chacha_ctx);
		a->base.cra_module = THIS_MODULE;
		a->min_keysize = CHACHA_KEY_SIZE;
		a->max_keysize = CHACHA_KEY_SIZE;
		a->chunksize = CHACHA_BLOCK_SIZE;
	}
	return IS_REACHABLE(CONFIG_CRYPTO_SKCIPHER) ? crypto_register_skciphers(kgen_chacha_algs, ARRAY_SIZE(kgen_chacha_algs)) : 0;
}

static void __exit kgen_chacha20_exit(void)
{
	if (IS_REACHABLE(CONFIG_CRYPTO_SKCIPHER))
		crypto_unregister_skciphers(kgen_chacha_algs, ARRAY_SIZE(kgen_chacha_algs));
}

module_init(kgen_chacha20_init);
module_exit(kgen_chacha20_exit);

MODULE_DESCRIPTION("ChaCha20, XChaCha20, XChaCha12 and the ChaCha library (kgen)");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_ALIAS_CRYPTO("chacha20");
MODULE_ALIAS_CRYPTO("xchacha20");
MODULE_ALIAS_CRYPTO("xchacha12");
"#;

const POLY1305_GLUE: &str = r#"/* kgen's state is h and what follows it in struct poly1305_desc_ctx: at most
 * @STATE_BYTES@ bytes, 8-byte aligned. */
static_assert(sizeof(struct poly1305_desc_ctx) - offsetof(struct poly1305_desc_ctx, h) >= @STATE_BYTES@);
static_assert(offsetof(struct poly1305_desc_ctx, h) % 8 == 0);

void poly1305_init_arch(struct poly1305_desc_ctx *desc, const u8 key[POLY1305_KEY_SIZE])
{
	int i;

	kgen_poly1305_block_init(&desc->h, key);
	for (i = 0; i < 4; i++)
		desc->s[i] = get_unaligned_le32(key + 16 + 4 * i);
	desc->buflen = 0;
}
EXPORT_SYMBOL(poly1305_init_arch);

void poly1305_update_arch(struct poly1305_desc_ctx *desc, const u8 *src, unsigned int nbytes)
{
	if (desc->buflen) {
		unsigned int n = min(nbytes, POLY1305_BLOCK_SIZE - desc->buflen);

		memcpy(desc->buf + desc->buflen, src, n);
		desc->buflen += n;
		src += n;
		nbytes -= n;
		if (desc->buflen < POLY1305_BLOCK_SIZE)
			return;
		kgen_poly1305_blocks(&desc->h, desc->buf, POLY1305_BLOCK_SIZE, 1);
		desc->buflen = 0;
	}
	if (nbytes >= POLY1305_BLOCK_SIZE) {
		unsigned int n = round_down(nbytes, POLY1305_BLOCK_SIZE);

		kgen_poly1305_blocks(&desc->h, src, n, 1);
		src += n;
		nbytes -= n;
	}
	if (nbytes) {
		memcpy(desc->buf, src, nbytes);
		desc->buflen = nbytes;
	}
}
EXPORT_SYMBOL(poly1305_update_arch);

void poly1305_final_arch(struct poly1305_desc_ctx *desc, u8 *digest)
{
	if (desc->buflen) {
		desc->buf[desc->buflen++] = 1;
		memset(desc->buf + desc->buflen, 0, POLY1305_BLOCK_SIZE - desc->buflen);
		kgen_poly1305_blocks(&desc->h, desc->buf, POLY1305_BLOCK_SIZE, 0);
	}
	kgen_poly1305_emit(&desc->h, digest, desc->s);
	memzero_explicit(desc, sizeof(*desc));
}
EXPORT_SYMBOL(poly1305_final_arch);

/*
 * The poly1305 shash: the key is the first 32 bytes of the data (r, then s), as the
 * generic driver takes it; rset and sset say how much of it has come.
 */
static int kgen_poly1305_shash_init(struct shash_desc *desc)
{
	struct poly1305_desc_ctx *d = shash_desc_ctx(desc);

	d->buflen = 0;
	d->rset = 0;
	d->sset = false;
	return 0;
}

/* One 16-byte piece of the key. */
static void kgen_poly1305_key_piece(struct poly1305_desc_ctx *d, const u8 *p)
{
	int i;

	if (!d->rset) {
		kgen_poly1305_block_init(&d->h, p);
		d->rset = 1;
		return;
	}
	for (i = 0; i < 4; i++)
		d->s[i] = get_unaligned_le32(p + 4 * i);
	d->sset = true;
}

static int kgen_poly1305_shash_update(struct shash_desc *desc, const u8 *src, unsigned int len)
{
	struct poly1305_desc_ctx *d = shash_desc_ctx(desc);

	while (!d->sset && len) {
		unsigned int n = min(len, POLY1305_BLOCK_SIZE - d->buflen);

		memcpy(d->buf + d->buflen, src, n);
		d->buflen += n;
		src += n;
		len -= n;
		if (d->buflen == POLY1305_BLOCK_SIZE) {
			kgen_poly1305_key_piece(d, d->buf);
			d->buflen = 0;
		}
	}
	if (len)
		poly1305_update_arch(d, src, len);
	return 0;
}

static int kgen_poly1305_shash_final(struct shash_desc *desc, u8 *dst)
{
	struct poly1305_desc_ctx *d = shash_desc_ctx(desc);

	if (!d->sset)
		return -ENOKEY;
	poly1305_final_arch(d, dst);
	return 0;
}

static struct shash_alg kgen_poly1305_alg = {
	.digestsize = POLY1305_DIGEST_SIZE,
	.init = kgen_poly1305_shash_init,
	.update = kgen_poly1305_shash_update,
	.final = kgen_poly1305_shash_final,
	.descsize = sizeof(struct poly1305_desc_ctx),
	.base = {
		.cra_name = "poly1305",
		.cra_priority = 200,
		.cra_blocksize = POLY1305_BLOCK_SIZE,
		.cra_module = THIS_MODULE,
	},
};

static int __init kgen_poly1305_init(void)
{
	kgen_poly1305_choose();
	kgen_driver_name(&kgen_poly1305_alg.base, "", kgen_poly1305_variants[kgen_poly1305_variant]);
	return IS_REACHABLE(CONFIG_CRYPTO_HASH) ? crypto_register_shash(&kgen_poly1305_alg) : 0;
}

static void __exit kgen_poly1305_exit(void)
{
	if (IS_REACHABLE(CONFIG_CRYPTO_HASH))
		crypto_unregister_shash(&kgen_poly1305_alg);
}

module_init(kgen_poly1305_init);
module_exit(kgen_poly1305_exit);

MODULE_DESCRIPTION("Poly1305 and the Poly1305 library (kgen, constant time)");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_ALIAS_CRYPTO("poly1305");
"#;

const GHASH_GLUE: &str = r#"struct kgen_ghash_tfm_ctx {
	/* kgen's key table, made from H by the init entry. */
	u8 table[@TABLE_BYTES@] __aligned(8);
};

struct kgen_ghash_desc_ctx {
	u8 acc[GHASH_BLOCK_SIZE] __aligned(8);
	u8 buf[GHASH_BLOCK_SIZE];
	unsigned int bytes;
};

static int kgen_ghash_setkey(struct crypto_shash *tfm, const u8 *key, unsigned int keylen)
{
	struct kgen_ghash_tfm_ctx *ctx = crypto_shash_ctx(tfm);

	if (keylen != GHASH_BLOCK_SIZE)
		return -EINVAL;
	kgen_ghash_init(ctx->table, key);
	return 0;
}

static int kgen_ghash_sinit(struct shash_desc *desc)
{
	struct kgen_ghash_desc_ctx *d = shash_desc_ctx(desc);

	memset(d, 0, sizeof(*d));
	return 0;
}

static int kgen_ghash_update(struct shash_desc *desc, const u8 *src, unsigned int len)
{
	const struct kgen_ghash_tfm_ctx *ctx = crypto_shash_ctx(desc->tfm);
	struct kgen_ghash_desc_ctx *d = shash_desc_ctx(desc);

	if (d->bytes) {
		unsigned int n = min(len, GHASH_BLOCK_SIZE - d->bytes);

		memcpy(d->buf + d->bytes, src, n);
		d->bytes += n;
		src += n;
		len -= n;
		if (d->bytes < GHASH_BLOCK_SIZE)
			return 0;
		kgen_ghash(d->acc, ctx->table, d->buf, 1);
		d->bytes = 0;
	}
	if (len >= GHASH_BLOCK_SIZE) {
		kgen_ghash(d->acc, ctx->table, src, len / GHASH_BLOCK_SIZE);
		src += round_down(len, GHASH_BLOCK_SIZE);
		len %= GHASH_BLOCK_SIZE;
	}
	if (len) {
		memcpy(d->buf, src, len);
		d->bytes = len;
	}
	return 0;
}

static int kgen_ghash_final(struct shash_desc *desc, u8 *dst)
{
	const struct kgen_ghash_tfm_ctx *ctx = crypto_shash_ctx(desc->tfm);
	struct kgen_ghash_desc_ctx *d = shash_desc_ctx(desc);

	if (d->bytes) {
		memset(d->buf + d->bytes, 0, GHASH_BLOCK_SIZE - d->bytes);
		kgen_ghash(d->acc, ctx->table, d->buf, 1);
	}
	memcpy(dst, d->acc, GHASH_DIGEST_SIZE);
	memzero_explicit(d, sizeof(*d));
	return 0;
}

static struct shash_alg kgen_ghash_alg = {
	.digestsize = GHASH_DIGEST_SIZE,
	.init = kgen_ghash_sinit,
	.update = kgen_ghash_update,
	.final = kgen_ghash_final,
	.setkey = kgen_ghash_setkey,
	.descsize = sizeof(struct kgen_ghash_desc_ctx),
	.base = {
		.cra_name = "ghash",
		.cra_priority = 200,
		.cra_blocksize = GHASH_BLOCK_SIZE,
		.cra_ctxsize = sizeof(struct kgen_ghash_tfm_ctx),
		.cra_module = THIS_MODULE,
	},
};

static int __init kgen_ghash_mod_init(void)
{
	kgen_ghash_choose();
	kgen_driver_name(&kgen_ghash_alg.base, "", kgen_ghash_variants[kgen_ghash_variant]);
	return crypto_register_shash(&kgen_ghash_alg);
}

static void __exit kgen_ghash_mod_exit(void)
{
	crypto_unregister_shash(&kgen_ghash_alg);
}

module_init(kgen_ghash_mod_init);
module_exit(kgen_ghash_mod_exit);

MODULE_DESCRIPTION("GHASH (kgen, constant time)");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_ALIAS_CRYPTO("ghash");
"#;

/// The SHA-2 glue: `bits` 256 (sha224, sha256) or 512 (sha384, sha512).
fn sha2_glue(bits: u32, e: &Entry) -> String {
    let (small, state) = if bits == 256 { (224, "struct sha256_state") } else { (384, "struct sha512_state") };
    let block_state = match e.params[0].ty.elem() {
        Some(kgen_dsl::entry::Elem::Named { name, .. }) => name,
        _ => "void",
    };
    format!(
        r#"/* The base helpers' block function: kgen's on the state words at offset 0. */
static void kgen_sha{bits}_block_fn({state} *sst, u8 const *src, int blocks)
{{
	static_assert(offsetof({state}, state) == 0);
	{d}(({block_state} *)sst, src, blocks);
}}

static int kgen_sha{bits}_update(struct shash_desc *desc, const u8 *data, unsigned int len)
{{
	return sha{bits}_base_do_update(desc, data, len, kgen_sha{bits}_block_fn);
}}

static int kgen_sha{bits}_finup(struct shash_desc *desc, const u8 *data, unsigned int len, u8 *out)
{{
	if (len)
		sha{bits}_base_do_update(desc, data, len, kgen_sha{bits}_block_fn);
	sha{bits}_base_do_finalize(desc, kgen_sha{bits}_block_fn);
	return sha{bits}_base_finish(desc, out);
}}

static int kgen_sha{bits}_final(struct shash_desc *desc, u8 *out)
{{
	return kgen_sha{bits}_finup(desc, NULL, 0, out);
}}

static struct shash_alg kgen_sha{bits}_algs[] = {{
	{{
		.init = sha{bits}_base_init,
		.digestsize = SHA{bits}_DIGEST_SIZE,
		.base.cra_name = "sha{bits}",
	}}, {{
		.init = sha{small}_base_init,
		.digestsize = SHA{small}_DIGEST_SIZE,
		.base.cra_name = "sha{small}",
	}},
}};

static int __init kgen_sha{bits}_mod_init(void)
{{
	int i;

	kgen_sha{bits}_choose();
	for (i = 0; i < ARRAY_SIZE(kgen_sha{bits}_algs); i++) {{
		struct shash_alg *a = &kgen_sha{bits}_algs[i];

		kgen_driver_name(&a->base, "", kgen_sha{bits}_variants[kgen_sha{bits}_variant]);
		a->update = kgen_sha{bits}_update;
		a->final = kgen_sha{bits}_final;
		a->finup = kgen_sha{bits}_finup;
		a->descsize = sizeof({state});
		a->base.cra_priority = 200;
		a->base.cra_blocksize = SHA{bits}_BLOCK_SIZE;
		a->base.cra_module = THIS_MODULE;
	}}
	return crypto_register_shashes(kgen_sha{bits}_algs, ARRAY_SIZE(kgen_sha{bits}_algs));
}}

static void __exit kgen_sha{bits}_mod_exit(void)
{{
	crypto_unregister_shashes(kgen_sha{bits}_algs, ARRAY_SIZE(kgen_sha{bits}_algs));
}}

module_init(kgen_sha{bits}_mod_init);
module_exit(kgen_sha{bits}_mod_exit);

MODULE_DESCRIPTION("SHA-{small} and SHA-{bits} (kgen)");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_ALIAS_CRYPTO("sha{small}");
MODULE_ALIAS_CRYPTO("sha{bits}");
"#,
        d = dispatcher(e)
    )
}

const AES_GLUE: &str = r#"static int kgen_aes_cipher_setkey(struct crypto_tfm *tfm, const u8 *key, unsigned int len)
{
	return kgen_aes_ct_expandkey(crypto_tfm_ctx(tfm), key, len);
}

static void kgen_aes_cipher_encrypt(struct crypto_tfm *tfm, u8 *dst, const u8 *src)
{
	kgen_aes_ct_encrypt(crypto_tfm_ctx(tfm), dst, src);
}

static void kgen_aes_cipher_decrypt(struct crypto_tfm *tfm, u8 *dst, const u8 *src)
{
	kgen_aes_ct_decrypt(crypto_tfm_ctx(tfm), dst, src);
}

static int kgen_aes_skcipher_setkey(struct crypto_skcipher *tfm, const u8 *key, unsigned int len)
{
	return kgen_aes_ct_expandkey(crypto_skcipher_ctx(tfm), key, len);
}

static int kgen_aes_ecb(struct skcipher_request *req, bool enc)
{
	const struct crypto_aes_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct skcipher_walk walk;
	unsigned int nbytes;
	int err;

	err = skcipher_walk_virt(&walk, req, false);
	while ((nbytes = walk.nbytes) != 0) {
		size_t blocks = min_t(size_t, nbytes / AES_BLOCK_SIZE, SZ_4K / AES_BLOCK_SIZE);

		if (enc)
			kgen_aes_ct_ecb_encrypt(ctx, walk.dst.virt.addr, walk.src.virt.addr, blocks);
		else
			kgen_aes_ct_ecb_decrypt(ctx, walk.dst.virt.addr, walk.src.virt.addr, blocks);
		err = skcipher_walk_done(&walk, nbytes - blocks * AES_BLOCK_SIZE);
	}
	return err;
}

static int kgen_aes_ecb_encrypt(struct skcipher_request *req)
{
	return kgen_aes_ecb(req, true);
}

static int kgen_aes_ecb_decrypt(struct skcipher_request *req)
{
	return kgen_aes_ecb(req, false);
}

/*
 * Counter mode over whole blocks: kgen's counts in the IV's last 32 bits and does not
 * write the IV back, so calls stop where those bits wrap and the glue carries into the
 * first 96 bits; pieces of at most 4 KiB.
 */
static void kgen_aes_ctr_blocks(const struct crypto_aes_ctx *ctx, u8 *dst, const u8 *src, size_t blocks, u8 iv[AES_BLOCK_SIZE])
{
	while (blocks) {
		u32 ctr = get_unaligned_be32(iv + 12);
		u64 room = (u64)U32_MAX - ctr + 1;
		size_t n = min_t(u64, min_t(size_t, blocks, SZ_4K / AES_BLOCK_SIZE), room);

		kgen_aes_ct_ctr32(ctx, dst, src, n, iv);
		put_unaligned_be32(ctr + (u32)n, iv + 12);
		if (ctr + (u32)n == 0)
			crypto_inc(iv, 12);
		src += n * AES_BLOCK_SIZE;
		dst += n * AES_BLOCK_SIZE;
		blocks -= n;
	}
}

static int kgen_aes_ctr(struct skcipher_request *req)
{
	const struct crypto_aes_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct skcipher_walk walk;
	unsigned int nbytes;
	int err;

	err = skcipher_walk_virt(&walk, req, false);
	while ((nbytes = walk.nbytes) != 0) {
		unsigned int tail = nbytes % AES_BLOCK_SIZE;

		kgen_aes_ctr_blocks(ctx, walk.dst.virt.addr, walk.src.virt.addr, nbytes / AES_BLOCK_SIZE, walk.iv);
		if (tail && nbytes == walk.total) {
			u8 ks[AES_BLOCK_SIZE] = {};
			unsigned int done = nbytes - tail;

			kgen_aes_ctr_blocks(ctx, ks, ks, 1, walk.iv);
			crypto_xor_cpy(walk.dst.virt.addr + done, walk.src.virt.addr + done, ks, tail);
			memzero_explicit(ks, sizeof(ks));
			tail = 0;
		}
		err = skcipher_walk_done(&walk, tail);
	}
	return err;
}

static struct crypto_alg kgen_aes_cipher = {
	.cra_name = "aes",
	.cra_priority = 200,
	.cra_flags = CRYPTO_ALG_TYPE_CIPHER,
	.cra_blocksize = AES_BLOCK_SIZE,
	.cra_ctxsize = sizeof(struct crypto_aes_ctx),
	.cra_module = THIS_MODULE,
	.cra_cipher = {
		.cia_min_keysize = AES_MIN_KEY_SIZE,
		.cia_max_keysize = AES_MAX_KEY_SIZE,
		.cia_setkey = kgen_aes_cipher_setkey,
		.cia_encrypt = kgen_aes_cipher_encrypt,
		.cia_decrypt = kgen_aes_cipher_decrypt,
	},
};

static struct skcipher_alg kgen_aes_skciphers[] = {
	{
		.base.cra_name = "ecb(aes)",
		.base.cra_blocksize = AES_BLOCK_SIZE,
		.setkey = kgen_aes_skcipher_setkey,
		.encrypt = kgen_aes_ecb_encrypt,
		.decrypt = kgen_aes_ecb_decrypt,
	}, {
		.base.cra_name = "ctr(aes)",
		.base.cra_blocksize = 1,
		.ivsize = AES_BLOCK_SIZE,
		.chunksize = AES_BLOCK_SIZE,
		.setkey = kgen_aes_skcipher_setkey,
		.encrypt = kgen_aes_ctr,
		.decrypt = kgen_aes_ctr,
	},
};

static int __init kgen_aes_mod_init(void)
{
	const char *v;
	int i, err;

	kgen_aes_choose();
	v = kgen_aes_variants[kgen_aes_variant];
	kgen_driver_name(&kgen_aes_cipher, "", v);
	for (i = 0; i < ARRAY_SIZE(kgen_aes_skciphers); i++) {
		struct skcipher_alg *a = &kgen_aes_skciphers[i];

		kgen_driver_name(&a->base, "-aes", v);
		a->base.cra_priority = 200;
		a->base.cra_ctxsize = sizeof(struct crypto_aes_ctx);
		a->base.cra_module = THIS_MODULE;
		a->min_keysize = AES_MIN_KEY_SIZE;
		a->max_keysize = AES_MAX_KEY_SIZE;
	}
	err = crypto_register_alg(&kgen_aes_cipher);
	if (err)
		return err;
	err = crypto_register_skciphers(kgen_aes_skciphers, ARRAY_SIZE(kgen_aes_skciphers));
	if (err)
		crypto_unregister_alg(&kgen_aes_cipher);
	return err;
}

static void __exit kgen_aes_mod_exit(void)
{
	crypto_unregister_skciphers(kgen_aes_skciphers, ARRAY_SIZE(kgen_aes_skciphers));
	crypto_unregister_alg(&kgen_aes_cipher);
}

module_init(kgen_aes_mod_init);
module_exit(kgen_aes_mod_exit);

MODULE_DESCRIPTION("AES, AES-ECB and AES-CTR (kgen, constant time)");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_IMPORT_NS(CRYPTO_INTERNAL);
MODULE_ALIAS_CRYPTO("aes");
MODULE_ALIAS_CRYPTO("ecb(aes)");
MODULE_ALIAS_CRYPTO("ctr(aes)");
"#;

/// The `.S` file of a variant.
fn s_file(base: &str, v: &Var) -> Result<String, String> {
    let o = EmitOptions { command: command(base), compat: Compat::Binutils240 };
    kgen_emit::linux_s(&v.module, &o).map_err(|e| format!("linux-patches: {} {}: {e}", v.module.kernel, v.name))
}

/// The patches of the series against `src`, a tree of `base`.
fn patches(base: &Base, kernels: &[&'static Kernel]) -> Result<Vec<Patch>, String> {
    let fs = slots(kernels)?;
    let b = base.name;
    let mut series = Vec::new();
    let common_files = |upto: &[&Filled]| -> Vec<(String, String)> {
        let (on, test) = fragments(upto);
        vec![
            (format!("{DIR}/Kconfig"), kconfig(upto)),
            (format!("{DIR}/Makefile"), makefile(upto)),
            (format!("{CONFIGS}/kgen-crypto.config"), on),
            (format!("{CONFIGS}/kgen-crypto-selftest.config"), test),
        ]
    };
    let mut files = common_files(&[]);
    files.push((format!("{DIR}/kgen.h"), KGEN_H.replace("@BANNER@", &banner(b, "What kgen's glue files share: CPU detection and the test counters."))));
    files.push((format!("{DIR}/kgen-common.c"), KGEN_COMMON_C.replace("@BANNER@", &banner(b, "The boot lines naming each algorithm's variant, and the test report."))));
    series.push(Patch {
        subject: "crypto: riscv/kgen - CPU detection and test counters for kgen's kernels".into(),
        body: "arch/riscv/crypto/kgen/ holds riscv64 code generated by kgen and the glue that\nchooses, at boot, the variant the CPU runs: T-Head C906/C910 cores by mvendorid,\nmarchid and mimpid (Linux does not report their scalar extensions), Zba/Zbb/Zbc/Zbs\nand RVV 1.0 by the ISA the kernel reports. CRYPTO_KGEN_TRACE, for testing, counts\nthe calls each variant takes and looks up every algorithm and template the series\nserves at the end of boot, printing the results.\n\nkgen-crypto.config turns on what the series adds; kgen-crypto-selftest.config\nturns on the crypto self-tests and the counters.".into(),
        files,
        edits: vec![0, 1],
    });
    for k in 0..fs.len() {
        let f = &fs[k];
        let upto: Vec<&Filled> = fs[..=k].iter().collect();
        let mut files = common_files(&upto);
        let alg = alg_name(f.hook.slot);
        files.push((format!("{DIR}/{alg}-glue.c"), glue(base, f)?));
        for v in &f.vars {
            files.push((format!("{DIR}/{}.S", s_name(f, v)), s_file(b, v)?));
        }
        let mut body = format!("{}.\n\nkgen's {} kernel ({}); at boot the first variant the CPU runs:\n\n", capital(glue_doc(f.hook.slot)), f.kernel.name, f.kernel.summary);
        for v in &f.vars {
            let _ = writeln!(body, "  {:<16} {}{}", v.name, v.cond, if v.vector { ", in kernel_vector_begin()/end()" } else { "" });
        }
        body.push_str("\nNo variant declares a leak: no branch, address or multiplier operand depends\non secret data (kgen's constant-time check).");
        series.push(Patch { subject: format!("crypto: riscv/kgen - {}", subject(f.hook.slot)), body, files, edits: vec![] });
    }
    Ok(series)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

fn subject(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "ChaCha20 library hooks and skciphers",
        LinuxSlot::Poly1305 { .. } => "Poly1305 library hooks and shash",
        LinuxSlot::Ghash { .. } => "GHASH shash",
        LinuxSlot::Sha2 { bits: 256 } => "SHA-224 and SHA-256 shashes",
        LinuxSlot::Sha2 { .. } => "SHA-384 and SHA-512 shashes",
        LinuxSlot::Aes => "constant-time AES cipher, ECB and CTR",
    }
}

/// The files the series for base `name` adds, as the last patch leaves them, without the
/// `.S` files (which are `kgen emit --abi linux --compat binutils-2.40`'s).
pub fn added_files(name: &str, kernels: &[&'static Kernel]) -> Result<Vec<(String, String)>, String> {
    let mut files: Vec<(String, String)> = Vec::new();
    for (rel, text) in patches(base(name)?, kernels)?.into_iter().flat_map(|p| p.files) {
        if rel.ends_with(".S") {
            continue;
        }
        match files.iter_mut().find(|(r, _)| *r == rel) {
            Some(f) => f.1 = text,
            None => files.push((rel, text)),
        }
    }
    Ok(files)
}

/// Writes the series for `base` (sources at `src`, or the base's default) into `out`.
pub fn run(name: &str, src: Option<&Path>, out: &Path, kernels: &[&'static Kernel]) -> Result<Vec<PathBuf>, String> {
    let base = base(name)?;
    let src = src.map(Path::to_path_buf).unwrap_or_else(|| base.path());
    if !src.join("Makefile").is_file() {
        return Err(format!("linux-patches: {} is not a Linux source tree (give --src; scripts/setup-toolchain.sh unpacks {name} there)", src.display()));
    }
    check_edits("linux-patches", name, &src, base.edits)?;
    check_defines(base, &src)?;
    let series = patches(base, kernels)?;
    let copy = |repo: &Path| {
        for (file, _, _) in base.edits {
            let to = repo.join(file);
            std::fs::create_dir_all(to.parent().unwrap()).map_err(|e| format!("linux-patches: {}: {e}", to.display()))?;
            std::fs::copy(src.join(file), &to).map_err(|e| format!("linux-patches: {file}: {e}"))?;
        }
        Ok(())
    };
    format("linux-patches", name, &format!("Linux {name} (the files the series edits)"), copy, base.edits, &series, &command(base.name), out)
}

