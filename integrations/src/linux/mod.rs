//! `kgen linux-patches --base 6.12.118|7.3.4 [--src TREE] --out DIR`: a `git format-patch`
//! series against the Linux kernel (Debian's `linux-source-6.12` or `-7.3`) that gives the
//! kernel's crypto kgen's kernels on riscv64:
//!
//! 1. detection and test counters: `kgen.h` (a T-Head C9xx core by mvendorid, marchid and
//!    mimpid, which Linux reports for modules; Zba/Zbb/Zbc/Zbs, RVV 1.0 and, from 6.14,
//!    XTheadVector by the ISA the kernel reports), `kgen-common.c` (with
//!    `CRYPTO_KGEN_TRACE`, a testing option: per-variant call counters printed at shutdown
//!    and, at the end of boot, a look-up of every algorithm and template the series serves,
//!    which runs their self-tests), the Kconfig menu, and two config fragments
//!    (`kgen-crypto.config` turns on what the series adds, `kgen-crypto-selftest.config` the
//!    self-tests and the counters);
//! 2. one patch per kernel that fills a [`LinuxSlot`]: its `.S` files (one per variant, as
//!    `kgen emit --abi linux` writes them) and its glue, generated from the kernel's
//!    entry-point declarations: the prototypes, a dispatcher per entry point (the variant
//!    chosen at boot, vector code between `kernel_vector_begin()`/`end()` or, where SIMD is
//!    not usable, the first scalar variant the CPU has) and what the slot asks of the base.
//!
//! The two bases take kgen's code differently ([`Layout`]): 6.12 (`drivers.rs`) under
//! `arch/riscv/crypto/kgen/`, filling the library hooks it has and registering crypto API
//! drivers named `<algorithm>-kgen-<variant>` with priority 200 (above the generic C, below
//! the Zvk* drivers); 7.x (`library.rs`) under `lib/crypto/riscv/kgen/`, as what the
//! library's riscv code runs where upstream's Zvk* code does not. At boot each algorithm
//! prints the variant it chose (`kgen: chacha20: c906-novector`).

mod drivers;
mod library;

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
    /// Where kgen's code plugs in.
    pub layout: Layout,
    /// The kernel runs XTheadVector code between kernel_vector_begin()/end() when
    /// has_xtheadvector() (Linux 6.14 and later).
    pub xtheadvector: bool,
    /// The edits (indices into `edits`) of the first patch, and of each slot's patch (by the
    /// slot's name, `chacha20`, `ghash`, ...).
    pub common_edits: &'static [usize],
    pub slot_edits: &'static [(&'static str, &'static [usize])],
}

/// How a base takes kgen's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Linux 6.12: `arch/riscv/crypto/kgen/`, one glue file per slot filling the library
    /// hooks 6.12 has (ChaCha, Poly1305) and registering crypto API algorithms.
    Drivers,
    /// Linux 7.x: `lib/crypto/riscv/kgen/`, one header per slot that the library's riscv
    /// header includes; kgen's code is what runs where upstream's Zvk* code does not (and
    /// replaces the CRYPTOGAMS Poly1305).
    Library,
}

impl Layout {
    /// The directory the series' own files go to.
    pub fn dir(self) -> &'static str {
        match self {
            Layout::Drivers => "arch/riscv/crypto/kgen",
            Layout::Library => "lib/crypto/riscv/kgen",
        }
    }
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
    layout: Layout::Drivers,
    xtheadvector: false,
    common_edits: &[0, 1],
    slot_edits: &[],
};

/// Linux 7.3.4, Debian's `linux-source-7.3` 7.3.4-1~bpo13+1 (trixie-backports).
pub const LINUX_7_3_4: Base = Base {
    name: "7.3.4",
    dir: "linux-7.3.4/linux-source-7.3",
    edits: &[
        // 0, 1: the Kconfig and the objects
        ("lib/Kconfig", "source \"lib/crypto/Kconfig\"", "source \"lib/crypto/Kconfig\"\nsource \"lib/crypto/riscv/kgen/Kconfig\""),
        ("lib/crypto/Makefile", "obj-$(CONFIG_CRYPTO_SELFTESTS_FULL)\t\t+= simd.o", "obj-$(CONFIG_CRYPTO_SELFTESTS_FULL)\t\t+= simd.o\n\ninclude $(src)/riscv/kgen/kgen.mk"),
        // 2..4: chacha
        ("lib/crypto/riscv/chacha.h", "#include <linux/linkage.h>", "#include <linux/linkage.h>\n#include \"kgen/chacha20.h\""),
        ("lib/crypto/riscv/chacha.h", "\t\treturn chacha_crypt_generic(state, dst, src, bytes, nrounds);", "\t\treturn kgen_chacha_crypt(state, dst, src, bytes, nrounds);"),
        ("lib/crypto/riscv/chacha.h", "\tif (riscv_isa_extension_available(NULL, ZVKB) &&", "\tkgen_chacha20_choose();\n\tif (riscv_isa_extension_available(NULL, ZVKB) &&"),
        // 5..7: poly1305 (kgen's in place of the CRYPTOGAMS code)
        ("lib/crypto/riscv/poly1305.h", "asmlinkage void poly1305_block_init(struct poly1305_block_state *state,", "#ifdef CONFIG_CRYPTO_POLY1305_KGEN\n#include \"kgen/poly1305.h\"\n#else\nasmlinkage void poly1305_block_init(struct poly1305_block_state *state,"),
        ("lib/crypto/riscv/poly1305.h", "\t\t\t      const u32 nonce[4]);", "\t\t\t      const u32 nonce[4]);\n#endif"),
        ("lib/crypto/Makefile", "libpoly1305-y += riscv/poly1305-core.o", "libpoly1305-$(if $(CONFIG_CRYPTO_POLY1305_KGEN),,y) += riscv/poly1305-core.o"),
        // 8..11: ghash
        ("lib/crypto/riscv/gf128hash.h", "#include <asm/vector.h>", "#include <asm/vector.h>\n#include \"kgen/ghash.h\""),
        ("lib/crypto/riscv/gf128hash.h", "\tmemcpy(key->h_raw, raw_key, GHASH_BLOCK_SIZE);", "\tmemcpy(key->h_raw, raw_key, GHASH_BLOCK_SIZE);\n\tkgen_ghash_preparekey(key, raw_key);"),
        ("lib/crypto/riscv/gf128hash.h", "\t\tghash_blocks_generic(acc, &key->h, data, nblocks);", "\t\tkgen_ghash_blocks(acc, key, data, nblocks);"),
        ("lib/crypto/riscv/gf128hash.h", "\tif (riscv_isa_extension_available(NULL, ZVKG) &&", "\tkgen_ghash_choose();\n\tif (riscv_isa_extension_available(NULL, ZVKG) &&"),
        // 12: the key table beside the raw key
        ("include/crypto/gf128hash.h", "\tu8 h_raw[GHASH_BLOCK_SIZE];", "\tu8 h_raw[GHASH_BLOCK_SIZE];\n#ifdef CONFIG_CRYPTO_GHASH_KGEN\n\t/** @kgen_table: kgen's GHASH key table, made from @h_raw */\n\tu8 kgen_table[256] __aligned(8);\n#endif"),
        // 13..15: sha256
        ("lib/crypto/riscv/sha256.h", "#include <asm/vector.h>", "#include <asm/vector.h>\n#include \"kgen/sha256.h\""),
        ("lib/crypto/riscv/sha256.h", "\t\tsha256_blocks_generic(state, data, nblocks);", "\t\tkgen_sha256_blocks(state, data, nblocks);"),
        ("lib/crypto/riscv/sha256.h", "\t/* Both zvknha and zvknhb provide the SHA-256 instructions. */", "\tkgen_sha256_choose();\n\t/* Both zvknha and zvknhb provide the SHA-256 instructions. */"),
        // 16..18: sha512
        ("lib/crypto/riscv/sha512.h", "#include <asm/vector.h>", "#include <asm/vector.h>\n#include \"kgen/sha512.h\""),
        ("lib/crypto/riscv/sha512.h", "\t\tsha512_blocks_generic(state, data, nblocks);", "\t\tkgen_sha512_blocks(state, data, nblocks);"),
        ("lib/crypto/riscv/sha512.h", "\tif (riscv_isa_extension_available(NULL, ZVKNHB) &&", "\tkgen_sha512_choose();\n\tif (riscv_isa_extension_available(NULL, ZVKNHB) &&"),
        // 19..23: aes (kgen's header after have_zvkned, which its ECB and CTR hooks test)
        ("lib/crypto/riscv/aes.h", "static __ro_after_init DEFINE_STATIC_KEY_FALSE(have_zvkned);", "static __ro_after_init DEFINE_STATIC_KEY_FALSE(have_zvkned);\n\n#include \"kgen/aes.h\""),
        ("lib/crypto/riscv/aes.h", "\taes_expandkey_generic(k->rndkeys, inv_k ? inv_k->inv_rndkeys : NULL,", "\tkgen_aes_preparekey(k, inv_k,"),
        ("lib/crypto/riscv/aes.h", "\t\taes_encrypt_generic(key->k.rndkeys, key->nrounds, out, in);", "\t\tkgen_aes_ct_encrypt(key->k.rndkeys, key->nrounds, out, in);"),
        ("lib/crypto/riscv/aes.h", "\t\taes_decrypt_generic(key->inv_k.inv_rndkeys, key->nrounds,", "\t\tkgen_aes_ct_decrypt(key->inv_k.inv_rndkeys, key->nrounds,"),
        ("lib/crypto/riscv/aes.h", "\tif (riscv_isa_extension_available(NULL, ZVKNED) &&", "\tkgen_aes_choose();\n\tif (riscv_isa_extension_available(NULL, ZVKNED) &&"),
    ],
    defines: &[
        ("struct sha256_block_state", "include/crypto/sha2.h"),
        ("struct sha512_block_state", "include/crypto/sha2.h"),
        ("struct crypto_aes_ctx", "include/crypto/aes.h"),
    ],
    layout: Layout::Library,
    xtheadvector: true,
    common_edits: &[0, 1],
    slot_edits: &[("chacha20", &[2, 3, 4]), ("poly1305", &[5, 6, 7]), ("ghash", &[8, 9, 10, 11, 12]), ("sha256", &[13, 14, 15]), ("sha512", &[16, 17, 18]), ("aes", &[19, 20, 21, 22, 23])],
};

pub const BASES: &[&Base] = &[&LINUX_6_12_118, &LINUX_7_3_4];

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
    /// with `guard` (CONFIG_RISCV_ISA_V, or CONFIG_RISCV_ISA_XTHEADVECTOR).
    vector: bool,
    guard: &'static str,
}

/// A kernel filling a slot, with its variants in dispatch order.
struct Filled {
    kernel: &'static Kernel,
    hook: &'static Linux,
    vars: Vec<Var>,
    /// Variants of the hook the base cannot run, and why.
    left_out: Vec<(&'static str, &'static str)>,
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

/// The C condition (on kgen.h's helpers) under which a module's instructions can run, and
/// the configuration option its vector code needs, if any.
fn needs(kernel: &str, v: &kgen_dsl::kernel::Variant, m: &Module) -> Result<(String, Option<&'static str>), String> {
    let used = m.exts_used();
    let mut conds = Vec::new();
    let mut guard = None;
    for e in &used {
        match e {
            Ext::XTheadVector => {
                conds.push("has_xtheadvector()".to_string());
                guard = Some("CONFIG_RISCV_ISA_XTHEADVECTOR");
            }
            Ext::V => {
                let lo = v.vlens.iter().min().copied().unwrap_or(128);
                let hi = v.vlens.iter().max().copied().unwrap_or(65536);
                conds.push(format!("kgen_rvv({lo}, {hi})"));
                guard = Some("CONFIG_RISCV_ISA_V");
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
    Ok((if conds.is_empty() { "true".into() } else { conds.join(" && ") }, guard))
}

fn filled(base: &Base, kernel: &'static Kernel, hook: &'static Linux) -> Result<Filled, String> {
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
    let mut left_out = Vec::new();
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
        let (cond, guard) = needs(kernel.name, var, &m)?;
        if guard == Some("CONFIG_RISCV_ISA_XTHEADVECTOR") && !base.xtheadvector {
            left_out.push((v, "XTheadVector: Linux before 6.14 has no kernel-mode support for it"));
            continue;
        }
        vars.push(Var { name: v, module: m, cond, vector: guard.is_some(), guard: guard.unwrap_or("") });
    }
    if vars.last().is_some_and(|v| v.cond != "true") {
        return Err(format!("linux-patches: {}: the last variant ({}) must run on every RV64GC core", kernel.name, vars.last().unwrap().name));
    }
    Ok(Filled { kernel, hook, vars, left_out })
}

/// The slots' fillers in the series' order.
fn slots(base: &Base, kernels: &[&'static Kernel]) -> Result<Vec<Filled>, String> {
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
    found.into_iter().map(|(k, h)| filled(base, k, h)).collect()
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
fn dispatch(f: &Filled, layout: Layout) -> String {
    // 6.12's glue chooses in its module init; 7.x's from the library's mod_init_arch().
    let init = if layout == Layout::Drivers { "__init " } else { "" };
    let alg = alg_name(f.hook.slot);
    let n = f.vars.len();
    let last = n - 1;
    let mut s = String::new();
    for v in &f.vars {
        if v.vector {
            let _ = writeln!(s, "#ifdef {}", v.guard);
        }
        for e in f.hook.entries {
            let _ = writeln!(s, "asmlinkage {};", e.prototype(v.name, Abi::Linux));
        }
        if v.vector {
            s.push_str("#endif\n");
        }
    }
    let _ = writeln!(s, "\nstatic const char *const kgen_{alg}_checks[] = {{ {}, NULL }};", checks(f.hook.slot, layout).iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "));
    let _ = writeln!(s, "\n/* The variants, in the order the CPU is asked for them. */");
    let _ = writeln!(s, "static const char *const kgen_{alg}_variants[] = {{ {} }};", f.vars.iter().map(|v| format!("\"{}\"", v.name)).collect::<Vec<_>>().join(", "));
    let _ = writeln!(s, "static atomic_long_t kgen_{alg}_calls[{n}];");
    let _ = writeln!(s, "/* The variant chosen at boot, and the scalar one used where SIMD is not usable; the");
    let _ = writeln!(s, " * last variant (plain RV64GC) until the choice is made. */");
    let _ = writeln!(s, "static int kgen_{alg}_variant __ro_after_init = {last};");
    let _ = writeln!(s, "static int kgen_{alg}_scalar __ro_after_init = {last};\n");
    let _ = writeln!(s, "static int {init}kgen_{alg}_pick(bool scalar_only)\n{{");
    for (i, v) in f.vars.iter().enumerate().take(last) {
        if v.vector {
            let _ = writeln!(s, "\tif (IS_ENABLED({}) && !scalar_only && {})\n\t\treturn {i};", v.guard, v.cond);
        } else {
            let _ = writeln!(s, "\tif ({})\n\t\treturn {i};", v.cond);
        }
    }
    let _ = writeln!(s, "\treturn {last};\n}}\n");
    let vec_idx: Vec<usize> = f.vars.iter().enumerate().filter(|(_, v)| v.vector).map(|(i, _)| i).collect();
    let _ = writeln!(s, "/* The variant to run now. */\nstatic inline int kgen_{alg}_now(void)\n{{\n\tint v = READ_ONCE(kgen_{alg}_variant);\n");
    if !vec_idx.is_empty() {
        let any = vec_idx.iter().map(|i| format!("v == {i}")).collect::<Vec<_>>().join(" || ");
        let any = if vec_idx.len() > 1 { format!("({any})") } else { any };
        let _ = writeln!(s, "\tif ({any} && !crypto_simd_usable())\n\t\tv = kgen_{alg}_scalar;");
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
                let _ = writeln!(s, "#ifdef {}\n\t{{", v.guard);
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
        "/* Chooses the variant and prints the choice. */\nstatic void {init}kgen_{alg}_choose(void)\n{{\n\tkgen_{alg}_variant = kgen_{alg}_pick(false);\n\tkgen_{alg}_scalar = kgen_{alg}_pick(true);\n\tkgen_announce(&kgen_{alg}_trace, kgen_{alg}_variant, kgen_{alg}_scalar);\n}}"
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
#include <linux/sizes.h>
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
	/* Algorithm and driver names whose look-up runs their self-tests, NULL-terminated
	 * (or NULL). */
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
#include <linux/reboot.h>
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
/* At shutdown (after every test, KUnit's included): the calls each variant took. */
static int kgen_report_calls(struct notifier_block *nb, unsigned long action, void *data)
{
	struct kgen_trace *t;
	int i;

	mutex_lock(&kgen_traces_lock);
	list_for_each_entry(t, &kgen_traces, list) {
		for (i = 0; i < t->n; i++)
			pr_info("kgen: calls: %s %s %ld\n", t->alg, t->variants[i], atomic_long_read(&t->calls[i]));
	}
	mutex_unlock(&kgen_traces_lock);
	return NOTIFY_DONE;
}

static struct notifier_block kgen_reboot_nb = {
	.notifier_call = kgen_report_calls,
};

/*
 * At the end of boot: look up every algorithm and template the series' algorithms serve
 * (which waits for, or runs, their self-tests) and print each result.
 */
static int __init kgen_trace_report(void)
{
	struct kgen_trace *t;
	const char *const *c;

	mutex_lock(&kgen_traces_lock);
	list_for_each_entry(t, &kgen_traces, list) {
		for (c = t->checks; c && *c; c++) {
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
	mutex_unlock(&kgen_traces_lock);
	return register_reboot_notifier(&kgen_reboot_nb);
}
late_initcall_sync(kgen_trace_report);
#endif
"#;

/// The Kconfig text of one slot.
fn kconfig_entry(f: &Filled, layout: Layout) -> String {
    let sym = kconfig_symbol(f.hook.slot);
    let (prompt, selects, lib_arch): (&str, &[&str], &str) = match (f.hook.slot, layout) {
        (LinuxSlot::ChaCha20, Layout::Drivers) => (
            "Ciphers: ChaCha20, XChaCha20, XChaCha12 (kgen), and the ChaCha library",
            &["CRYPTO_SKCIPHER", "CRYPTO_LIB_CHACHA_GENERIC", "CRYPTO_ARCH_HAVE_LIB_CHACHA"],
            "",
        ),
        (LinuxSlot::Poly1305 { .. }, Layout::Drivers) => ("Hash functions: Poly1305 (kgen), and the Poly1305 library", &["CRYPTO_HASH", "CRYPTO_ARCH_HAVE_LIB_POLY1305"], ""),
        (LinuxSlot::Ghash { .. }, Layout::Drivers) => ("Hash functions: GHASH (kgen), for GCM", &["CRYPTO_HASH"], ""),
        (LinuxSlot::Sha2 { bits: 256 }, Layout::Drivers) => ("Hash functions: SHA-224 and SHA-256 (kgen)", &["CRYPTO_HASH", "CRYPTO_SHA256"], ""),
        (LinuxSlot::Sha2 { .. }, Layout::Drivers) => ("Hash functions: SHA-384 and SHA-512 (kgen)", &["CRYPTO_HASH", "CRYPTO_SHA512"], ""),
        (LinuxSlot::Aes, Layout::Drivers) => ("Ciphers: AES, modes: ECB, CTR (kgen, constant time)", &["CRYPTO_ALGAPI", "CRYPTO_SKCIPHER", "CRYPTO_LIB_AES"], ""),
        (LinuxSlot::Aes, Layout::Library) => ("AES library (kgen, constant time)", &[], "CRYPTO_LIB_AES"),
        (LinuxSlot::ChaCha20, Layout::Library) => ("ChaCha library (kgen)", &[], "CRYPTO_LIB_CHACHA"),
        (LinuxSlot::Poly1305 { .. }, Layout::Library) => ("Poly1305 library (kgen, in place of the CRYPTOGAMS code)", &[], "CRYPTO_LIB_POLY1305"),
        (LinuxSlot::Ghash { .. }, Layout::Library) => ("GHASH library (kgen), for GCM", &[], "CRYPTO_LIB_GF128HASH"),
        (LinuxSlot::Sha2 { bits: 256 }, Layout::Library) => ("SHA-224 and SHA-256 library (kgen)", &[], "CRYPTO_LIB_SHA256"),
        (LinuxSlot::Sha2 { .. }, Layout::Library) => ("SHA-384 and SHA-512 library (kgen)", &[], "CRYPTO_LIB_SHA512"),
    };
    let mut s = match layout {
        Layout::Drivers => format!("config {sym}\n\ttristate \"{prompt}\"\n\tdefault CRYPTO_KGEN\n"),
        Layout::Library => format!("config {sym}\n\tbool \"{prompt}\"\n\tdepends on {lib_arch}\n\tdefault CRYPTO_KGEN\n"),
    };
    for sel in selects {
        let _ = writeln!(s, "\tselect {sel}");
    }
    let _ = writeln!(s, "\thelp\n\t  {}.\n\n\t  kgen's {} kernel; at boot the first of these variants the CPU runs:", f.kernel.summary.trim_end_matches('.'), f.kernel.name);
    for v in &f.vars {
        let _ = writeln!(s, "\t  - {}: {}{}", v.name, v.cond, if v.vector { " (scalar fallback where SIMD is not usable)" } else { "" });
    }
    if layout == Layout::Library {
        // The library's arch code is what includes kgen's; upstream's Zvk* code still runs
        // first where the CPU has it.
        let _ = writeln!(s, "\nconfig {lib_arch}_ARCH\n\tdefault y if {sym} && !KMSAN");
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
fn kconfig(fs: &[&Filled], layout: Layout) -> String {
    let (depends, prio) = match layout {
        Layout::Drivers => ("64BIT", "Priority 200: above the\n\t  generic C, below the Zvk* drivers."),
        Layout::Library => ("RISCV && 64BIT", "Where the CPU has the Zvk*\n\t  extensions, upstream's code runs instead."),
    };
    let mut s = format!(
        "# SPDX-License-Identifier: GPL-2.0-only OR MIT\n# Generated by kgen; do not edit.\n\nmenuconfig CRYPTO_KGEN\n\tbool \"kgen's riscv64 kernels (RV64GC, Zbb/Zbc, RVV 1.0, T-Head C906)\"\n\tdepends on {depends}\n\thelp\n\t  Constant-time scalar and vector code generated by kgen, chosen at boot\n\t  by the CPU: T-Head C906/C910 cores by their ids, Zba/Zbb/Zbc/Zbs and\n\t  RVV 1.0 by the ISA the kernel reports. {prio}\n\nif CRYPTO_KGEN\n\nconfig CRYPTO_KGEN_TRACE\n\tbool \"Count which kgen variant runs (for testing)\"\n\tselect CRYPTO_AEAD\n\thelp\n\t  Counts the calls each variant takes and prints them at shutdown; at\n\t  the end of boot, looks up every algorithm and template the kgen code\n\t  serves (running their self-tests) and prints the results. For\n\t  testing only.\n",
    );
    for f in fs {
        s.push('\n');
        s.push_str(&kconfig_entry(f, layout));
    }
    s.push_str("\nendif # CRYPTO_KGEN\n");
    s
}

/// The names whose look-up at the end of boot runs a slot's self-tests: its own
/// algorithms, and the templates built on them (7.x: the crypto API's algorithms on the
/// library).
fn checks(slot: LinuxSlot, layout: Layout) -> &'static [&'static str] {
    match (slot, layout) {
        (LinuxSlot::ChaCha20, Layout::Drivers) => &["chacha20", "xchacha20", "xchacha12"],
        (LinuxSlot::Poly1305 { .. }, Layout::Drivers) => &["poly1305", "rfc7539(chacha20,poly1305)", "rfc7539esp(chacha20,poly1305)"],
        (LinuxSlot::Ghash { .. }, Layout::Drivers) => &["ghash", "gcm(aes)", "rfc4106(gcm(aes))"],
        (LinuxSlot::ChaCha20, Layout::Library) => &["chacha20", "xchacha20", "xchacha12"],
        (LinuxSlot::Poly1305 { .. }, Layout::Library) => &["rfc7539(chacha20,poly1305)", "rfc7539esp(chacha20,poly1305)"],
        (LinuxSlot::Ghash { .. }, Layout::Library) => &["gcm(aes)", "rfc4106(gcm(aes))"],
        (LinuxSlot::Sha2 { bits: 256 }, _) => &["sha224", "sha256"],
        (LinuxSlot::Sha2 { .. }, _) => &["sha384", "sha512"],
        (LinuxSlot::Aes, Layout::Drivers) => &["aes", "ecb(aes)", "ctr(aes)"],
        (LinuxSlot::Aes, Layout::Library) => &["aes", "ecb(aes)", "cbc(aes)", "ctr(aes)", "ccm(aes)"],
    }
}

/// The object's base name of variant `v` of `f`'s kernel (`chacha20-c906-novector`).
fn s_name(f: &Filled, v: &Var) -> String {
    format!("{}-{}", f.kernel.name, v.name)
}

/// The library module (7.x's lib/crypto/Makefile) a slot's objects join.
fn lib_module(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "libchacha",
        LinuxSlot::Poly1305 { .. } => "libpoly1305",
        LinuxSlot::Ghash { .. } => "libgf128hash",
        LinuxSlot::Sha2 { bits: 256 } => "libsha256",
        LinuxSlot::Sha2 { .. } => "libsha512",
        LinuxSlot::Aes => "libaes",
    }
}

/// kgen's Makefile (6.12: kgen/Makefile; 7.x: kgen/kgen.mk, which lib/crypto/Makefile
/// includes) with the slots so far.
fn makefile(fs: &[&Filled], layout: Layout) -> String {
    let mut s = String::from("# SPDX-License-Identifier: GPL-2.0-only OR MIT\n# Generated by kgen; do not edit.\n\n");
    match layout {
        Layout::Drivers => s.push_str("obj-$(CONFIG_CRYPTO_KGEN) += kgen-common.o\n"),
        Layout::Library => s.push_str("# Included by lib/crypto/Makefile: paths are relative to lib/crypto/.\nobj-$(CONFIG_CRYPTO_KGEN) += riscv/kgen/kgen-common.o\n"),
    }
    for f in fs {
        let alg = alg_name(f.hook.slot);
        let sym = format!("CONFIG_{}", kconfig_symbol(f.hook.slot));
        match layout {
            Layout::Drivers => {
                let _ = writeln!(s, "\nobj-$({sym}) += kgen-{alg}.o");
                let scalar: Vec<String> = f.vars.iter().filter(|v| !v.vector).map(|v| format!("{}.o", s_name(f, v))).collect();
                let _ = writeln!(s, "kgen-{alg}-y := {alg}-glue.o {}", scalar.join(" "));
                for v in f.vars.iter().filter(|v| v.vector) {
                    let _ = writeln!(s, "kgen-{alg}-$({}) += {}.o", v.guard, s_name(f, v));
                }
            }
            Layout::Library => {
                let m = lib_module(f.hook.slot);
                let scalar: Vec<String> = f.vars.iter().filter(|v| !v.vector).map(|v| format!("riscv/kgen/{}.o", s_name(f, v))).collect();
                let _ = writeln!(s, "\n{m}-$({sym}) += {}", scalar.join(" "));
                for v in f.vars.iter().filter(|v| v.vector) {
                    let _ = writeln!(s, "{m}-$(if $({sym}),$({})) += riscv/kgen/{}.o", v.guard, s_name(f, v));
                }
            }
        }
    }
    s
}

/// The config fragments with the slots so far: (what the series adds, the self-tests).
fn fragments(fs: &[&Filled], layout: Layout) -> (String, String) {
    let mut on = String::from("# Generated by kgen: kgen's riscv64 crypto (make kgen-crypto.config)\nCONFIG_CRYPTO_KGEN=y\n");
    let mut test = String::from("# Generated by kgen: the crypto self-tests with kgen's counters (make kgen-crypto-selftest.config)\nCONFIG_CRYPTO_KGEN_TRACE=y\n");
    test.push_str(match layout {
        Layout::Drivers => "CONFIG_DEBUG_KERNEL=y\nCONFIG_CRYPTO_MANAGER=y\n# CONFIG_CRYPTO_MANAGER_DISABLE_TESTS is not set\nCONFIG_CRYPTO_MANAGER_EXTRA_TESTS=y\n",
        Layout::Library => "CONFIG_EXPERT=y\nCONFIG_CRYPTO_SELFTESTS=y\nCONFIG_CRYPTO_SELFTESTS_FULL=y\nCONFIG_KUNIT=y\nCONFIG_RUNTIME_TESTING_MENU=y\nCONFIG_CRYPTO_LIB_ENABLE_ALL_FOR_KUNIT=y\n",
    });
    for f in fs {
        let _ = writeln!(on, "CONFIG_{}=y", kconfig_symbol(f.hook.slot));
        let more: &[&str] = match (f.hook.slot, layout) {
            (LinuxSlot::ChaCha20, Layout::Drivers) => &["CRYPTO_CHACHA20", "CRYPTO_LIB_CHACHA20POLY1305", "CRYPTO_CHACHA20POLY1305"],
            (LinuxSlot::Poly1305 { .. }, Layout::Drivers) => &["CRYPTO_POLY1305", "CRYPTO_LIB_POLY1305", "CRYPTO_CHACHA20POLY1305"],
            (LinuxSlot::Ghash { .. }, Layout::Drivers) => &["CRYPTO_GHASH", "CRYPTO_GCM", "CRYPTO_CTR"],
            (LinuxSlot::Sha2 { bits: 256 }, Layout::Drivers) => &["CRYPTO_SHA256"],
            (LinuxSlot::Sha2 { .. }, Layout::Drivers) => &["CRYPTO_SHA512"],
            (LinuxSlot::Aes, Layout::Drivers) => &["CRYPTO_AES", "CRYPTO_ECB", "CRYPTO_CTR", "CRYPTO_GCM"],
            (LinuxSlot::Aes, Layout::Library) => &[
                "CRYPTO_LIB_AES_GCM_KUNIT_TEST",
                "CRYPTO_LIB_AES_CBC_MACS_KUNIT_TEST",
                "CRYPTO_LIB_AES_CCM_KUNIT_TEST",
                "CRYPTO_AES",
                "CRYPTO_ECB",
                "CRYPTO_CBC",
                "CRYPTO_CTR",
                "CRYPTO_CCM",
            ],
            (LinuxSlot::ChaCha20, Layout::Library) => &["CRYPTO_LIB_CHACHA20POLY1305_KUNIT_TEST", "CRYPTO_CHACHA20", "CRYPTO_CHACHA20POLY1305"],
            (LinuxSlot::Poly1305 { .. }, Layout::Library) => &["CRYPTO_LIB_POLY1305_KUNIT_TEST", "CRYPTO_CHACHA20POLY1305"],
            (LinuxSlot::Ghash { .. }, Layout::Library) => &["CRYPTO_LIB_GHASH_KUNIT_TEST", "CRYPTO_LIB_AES_GCM_KUNIT_TEST", "CRYPTO_AES", "CRYPTO_CTR", "CRYPTO_GCM"],
            (LinuxSlot::Sha2 { bits: 256 }, Layout::Library) => &["CRYPTO_LIB_SHA256_KUNIT_TEST", "CRYPTO_SHA256"],
            (LinuxSlot::Sha2 { .. }, Layout::Library) => &["CRYPTO_LIB_SHA512_KUNIT_TEST", "CRYPTO_SHA512"],
        };
        for g in more {
            let line = format!("CONFIG_{g}=y\n");
            if !test.contains(&line) {
                test.push_str(&line);
            }
        }
    }
    (on, test)
}

/// The body of both bases' ChaCha over any length, on kgen's whole-block dispatcher
/// (`kgen_chacha`) and the 16 state words at `state`: whole blocks straight from the
/// caller's buffers in pieces of 4 KiB, the last partial block through a block on the
/// stack, wiped after.
fn chacha_crypt_body(state: &str) -> String {
    CHACHA_CRYPT_BODY.replace("@STATE@", state)
}

const CHACHA_CRYPT_BODY: &str = r#"{
	size_t blocks = bytes / CHACHA_BLOCK_SIZE;
	unsigned int tail = bytes % CHACHA_BLOCK_SIZE;

	while (blocks) {
		size_t n = min_t(size_t, blocks, SZ_4K / CHACHA_BLOCK_SIZE);

		kgen_chacha(@STATE@, src, dst, n, nrounds);
		src += n * CHACHA_BLOCK_SIZE;
		dst += n * CHACHA_BLOCK_SIZE;
		blocks -= n;
	}
	if (tail) {
		u8 buf[CHACHA_BLOCK_SIZE] = {};

		memcpy(buf, src, tail);
		kgen_chacha(@STATE@, buf, buf, 1, nrounds);
		memcpy(dst, buf, tail);
		memzero_explicit(buf, sizeof(buf));
	}
}
"#;

/// Both bases' ECB and counter mode over kgen's whole-block dispatchers, on round keys as
/// lib/crypto's generic AES takes them (`rk`, `nrounds`): pieces of 4 KiB (vector code runs
/// with preemption off); counter mode splits where the counter's low 32 bits wrap (kgen's
/// code counts in them and does not write the IV back) and carries into the first 96 bits,
/// and takes a last partial block through a block on the stack, wiped after.
const AES_BLOCKS: &str = r#"static void __maybe_unused kgen_aes_ecb_blocks(const u32 *rk, int nrounds, u8 *dst, const u8 *src, size_t blocks, bool enc)
{
	while (blocks) {
		size_t n = min_t(size_t, blocks, SZ_4K / AES_BLOCK_SIZE);

		if (enc)
			kgen_aes_ct_ecb_encrypt(rk, nrounds, dst, src, n);
		else
			kgen_aes_ct_ecb_decrypt(rk, nrounds, dst, src, n);
		src += n * AES_BLOCK_SIZE;
		dst += n * AES_BLOCK_SIZE;
		blocks -= n;
	}
}

static void kgen_aes_ctr_blocks(const u32 *rk, int nrounds, u8 *dst, const u8 *src, size_t blocks, u8 iv[AES_BLOCK_SIZE])
{
	while (blocks) {
		u32 ctr = get_unaligned_be32(iv + 12);
		u64 room = (u64)U32_MAX - ctr + 1;
		size_t n = min_t(u64, min_t(size_t, blocks, SZ_4K / AES_BLOCK_SIZE), room);

		kgen_aes_ct_ctr32(rk, nrounds, dst, src, n, iv);
		put_unaligned_be32(ctr + (u32)n, iv + 12);
		if (ctr + (u32)n == 0)
			crypto_inc(iv, 12);
		src += n * AES_BLOCK_SIZE;
		dst += n * AES_BLOCK_SIZE;
		blocks -= n;
	}
}

/* Any length; the counter is incremented for a last partial block too. */
static void __maybe_unused kgen_aes_ctr_bytes(const u32 *rk, int nrounds, u8 *dst, const u8 *src, size_t len, u8 iv[AES_BLOCK_SIZE])
{
	size_t tail = len % AES_BLOCK_SIZE, done = len - tail;

	kgen_aes_ctr_blocks(rk, nrounds, dst, src, len / AES_BLOCK_SIZE, iv);
	if (tail) {
		u8 ks[AES_BLOCK_SIZE] = {};

		kgen_aes_ctr_blocks(rk, nrounds, ks, ks, 1, iv);
		crypto_xor_cpy(dst + done, src + done, ks, tail);
		memzero_explicit(ks, sizeof(ks));
	}
}
"#;

/// The `.S` file of a variant.
fn s_file(base: &str, v: &Var) -> Result<String, String> {
    let o = EmitOptions { command: command(base), compat: Compat::Binutils240 };
    kgen_emit::linux_s(&v.module, &o).map_err(|e| format!("linux-patches: {} {}: {e}", v.module.kernel, v.name))
}

/// The patches of the series against `src`, a tree of `base`.
fn patches(base: &Base, kernels: &[&'static Kernel]) -> Result<Vec<Patch>, String> {
    let fs = slots(base, kernels)?;
    let b = base.name;
    let layout = base.layout;
    let dir = layout.dir();
    let mut series = Vec::new();
    let common_files = |upto: &[&Filled]| -> Vec<(String, String)> {
        let (on, test) = fragments(upto, layout);
        let mk = if layout == Layout::Drivers { "Makefile" } else { "kgen.mk" };
        vec![
            (format!("{dir}/Kconfig"), kconfig(upto, layout)),
            (format!("{dir}/{mk}"), makefile(upto, layout)),
            (format!("{CONFIGS}/kgen-crypto.config"), on),
            (format!("{CONFIGS}/kgen-crypto-selftest.config"), test),
        ]
    };
    let mut files = common_files(&[]);
    files.push((format!("{dir}/kgen.h"), KGEN_H.replace("@BANNER@", &banner(b, "What kgen's glue files share: CPU detection and the test counters."))));
    files.push((format!("{dir}/kgen-common.c"), KGEN_COMMON_C.replace("@BANNER@", &banner(b, "The boot lines naming each algorithm's variant, and the test report."))));
    let place = match layout {
        Layout::Drivers => "arch/riscv/crypto/kgen/ holds riscv64 code generated by kgen and the glue that\nchooses, at boot,",
        Layout::Library => "lib/crypto/riscv/kgen/ holds riscv64 code generated by kgen, which the\nlibrary's riscv code runs where upstream's Zvk* code does not, and chooses, at\nboot,",
    };
    series.push(Patch {
        subject: "crypto: riscv/kgen - CPU detection and test counters for kgen's kernels".into(),
        body: format!("{place} the variant the CPU runs: T-Head C906/C910 cores by mvendorid,\nmarchid and mimpid (Linux does not report their scalar extensions), Zba/Zbb/Zbc/Zbs\nand RVV 1.0 by the ISA the kernel reports. CRYPTO_KGEN_TRACE, for testing, counts\nthe calls each variant takes, and looks up every algorithm and template the series\nserves at the end of boot, printing the results.\n\nkgen-crypto.config turns on what the series adds; kgen-crypto-selftest.config\nturns on the crypto self-tests and the counters."),
        files,
        edits: base.common_edits.to_vec(),
    });
    for k in 0..fs.len() {
        let f = &fs[k];
        let upto: Vec<&Filled> = fs[..=k].iter().collect();
        let mut files = common_files(&upto);
        let alg = alg_name(f.hook.slot);
        match layout {
            Layout::Drivers => files.push((format!("{dir}/{alg}-glue.c"), drivers::glue(base, f)?)),
            Layout::Library => files.push((format!("{dir}/{alg}.h"), library::header(base, f)?)),
        }
        for v in &f.vars {
            files.push((format!("{dir}/{}.S", s_name(f, v)), s_file(b, v)?));
        }
        let what = match layout {
            Layout::Drivers => drivers::glue_doc(f.hook.slot),
            Layout::Library => library::doc(f.hook.slot),
        };
        let mut body = format!("{}.\n\nkgen's {} kernel ({}); at boot the first variant the CPU runs:\n\n", capital(what), f.kernel.name, f.kernel.summary);
        for v in &f.vars {
            let _ = writeln!(body, "  {:<16} {}{}", v.name, v.cond, if v.vector { ", in kernel_vector_begin()/end()" } else { "" });
        }
        for (v, why) in &f.left_out {
            let _ = writeln!(body, "  ({v} is left out: {why}.)");
        }
        body.push_str("\nNo variant declares a leak: no branch, address or multiplier operand depends\non secret data (kgen's constant-time check).");
        let edits = base.slot_edits.iter().find(|(a, _)| *a == alg).map(|(_, e)| e.to_vec()).unwrap_or_default();
        let subject = match layout {
            Layout::Drivers => subject(f.hook.slot).to_string(),
            Layout::Library => format!("{} library", library::doc_name(f.hook.slot)),
        };
        series.push(Patch { subject: format!("crypto: riscv/kgen - {subject}"), body, files, edits });
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

