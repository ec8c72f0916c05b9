//! The patches: detection first, then one per kernel. Each is written from the kernels'
//! entry points: a dispatcher calls what the variant's module implements, under the
//! condition its instructions need.

use super::c::{by_length, cap_name, comment, counting_block, file_comment, Callee, Counter, Use};
use super::tree::Tree;
use super::{command, wrap, Leaks, Patch};
use kgen_dsl::entry::symbol_suffix;
use kgen_dsl::entry::Entry;
use kgen_dsl::kernel::hooks::{Hook, Openssl, OpensslSlot};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::Ext;
use std::collections::BTreeSet;

/// Every patch, in order: detection, then one per OpenSSL hook of `kernels`, in the
/// order of the slots ([`OpensslSlot`]); a patch builds in the variants its hook names, in
/// dispatch order.
///
/// A hook whose variants declare a leak (their checks' findings) is left out under
/// [`Leaks::Refuse`]; under [`Leaks::Allow`] it displaces a constant-time hook of its slot.
pub fn all(t: &mut Tree, base: &str, kernels: &[&'static Kernel], leaks: Leaks) -> Result<Vec<Patch>, String> {
    // Each hook's variants, built once: what the patches call and whether they leak.
    let mut filled: Vec<(&'static Kernel, &'static Openssl, Vec<Use>)> = Vec::new();
    for &k in kernels {
        for h in k.hooks {
            if let Hook::Openssl(o) = h {
                if o.variants.is_empty() {
                    return Err(format!("openssl-patches: kernel `{}`'s OpenSSL hook names no variant", k.name));
                }
                filled.push((k, o, o.variants.iter().map(|v| Use::new(k, v, o.entries)).collect::<Result<_, _>>()?));
            }
        }
    }
    let leaky = |us: &[Use]| us.iter().any(|u| u.module.declares_leaks());
    let leaky_slots: Vec<OpensslSlot> = filled.iter().filter(|h| leaky(&h.2)).map(|h| h.1.slot).collect();
    filled.retain(|(_, o, us)| match leaks {
        Leaks::Refuse => !leaky(us),
        Leaks::Allow => leaky(us) || !leaky_slots.iter().any(|s| s.same_place(&o.slot)),
    });
    filled.sort_by_key(|(_, o, _)| o.slot);
    for w in filled.windows(2) {
        if w[0].1.slot.same_place(&w[1].1.slot) {
            return Err(format!("openssl-patches: kernels `{}` and `{}` both fill OpenSSL's {:?} slot", w[0].0.name, w[1].0.name, w[0].1.slot));
        }
    }
    let (hooks, uses): (Vec<(&'static Kernel, &'static Openssl)>, Vec<Vec<Use>>) = filled.into_iter().map(|(k, o, us)| ((k, o), us)).unzip();
    let want = |us: &[Use], n: usize| -> Result<(), String> {
        if us.len() == n {
            Ok(())
        } else {
            Err(format!("openssl-patches: the {:?} slot takes {n} variant(s); kernel `{}` names {}", hooks.iter().find(|h| h.0.name == us[0].kernel.name).map(|h| h.1.slot), us[0].kernel.name, us.len()))
        }
    };
    let entries = |us: &[Use], n: usize| -> Result<(), String> {
        if us[0].entries.len() == n {
            Ok(())
        } else {
            Err(format!("openssl-patches: kernel `{}`'s OpenSSL hook lists {} entry points; its slot calls {n}", us[0].kernel.name, us[0].entries.len()))
        }
    };
    if hooks.is_empty() {
        let names: Vec<&str> = kernels.iter().map(|k| k.name).collect();
        return Err(format!("openssl-patches: none of the kernels ({}) fills an OpenSSL slot (their hooks)", names.join(", ")));
    }
    let mut out = vec![detection(t, base, &uses)?];
    for ((_, o), us) in hooks.iter().zip(&uses) {
        let n = out.len() + 1;
        out.push(match o.slot {
            OpensslSlot::Aes => aes(t, base, n, us)?,
            OpensslSlot::ChaCha20 => {
                want(us, 2)?;
                entries(us, 1)?;
                chacha20(t, base, n, &us[0], &us[1])?
            }
            OpensslSlot::Ghash => {
                want(us, 2)?;
                entries(us, 3)?;
                ghash(t, base, n, &us[0], &us[1])?
            }
            OpensslSlot::AesGcm { group, aes, ghash } => {
                want(us, 1)?;
                entries(us, 2)?;
                let of = |(k, v): (&str, &str)| uses.iter().flatten().find(|u| u.kernel.name == k && u.variant.name == v);
                match (of(aes), of(ghash)) {
                    (Some(a), Some(g)) => aes_gcm(t, base, n, &us[0], group, a, g)?,
                    _ => return Err(format!("openssl-patches: {} {} needs {} {} and {} {} in the series", us[0].kernel.name, us[0].variant.name, aes.0, aes.1, ghash.0, ghash.1)),
                }
            }
            OpensslSlot::Poly1305 { compare } => {
                want(us, 2)?;
                entries(us, 3)?;
                let cmp = compare.map(|v| Use::new(us[0].kernel, v, us[0].entries)).transpose()?;
                poly1305(t, base, n, &us[0], &us[1], cmp.as_ref())?
            }
            OpensslSlot::ChaCha20Poly1305 => {
                want(us, 1)?;
                entries(us, 2)?;
                chacha20_poly1305(t, base, n, &us[0])?
            }
            OpensslSlot::Sha2 { bits } => {
                want(us, 1)?;
                entries(us, 1)?;
                sha2(t, base, n, &us[0], bits)?
            }
        });
    }
    Ok(out)
}

/// The commit message's closing paragraph.
fn regenerate(base: &str, n: usize) -> String {
    format!("Generated by {}, patch {n} of the series; regenerate the series with:\n\n  {}", kgen_emit::GENERATOR, command(base))
}

fn patch(t: &mut Tree, slug: &str, subject: String, body: String, counters: Vec<Counter>) -> Patch {
    Patch { slug: slug.into(), subject, body: wrap(&body), diffs: t.take_diffs(), counters }
}

// ---- patch 1: detection -------------------------------------------------------------------

/// The T-Head capability bits: every XThead extension a built-in variant uses, in the
/// free bits of riscv_arch.def (word 0 from bit 24, then word 1; bit 31 is avoided, the
/// header shifts an `int`).
fn thead_caps(uses: &[Vec<Use>]) -> Vec<(Ext, usize, usize)> {
    let exts: BTreeSet<Ext> = uses.iter().flatten().flat_map(|u| u.exts()).filter(|e| e.name().starts_with("xthead")).collect();
    let mut slots = (24..31).map(|b| (0, b)).chain((0..31).map(|b| (1, b)));
    exts.into_iter().map(|e| {
        let (w, b) = slots.next().expect("enough capability bits");
        (e, w, b)
    }).collect()
}

/// `th.vsetvli a0, zero, e8, m1`, encoded by kgen's ISA table (binutils 2.40 does not know
/// XTheadVector, so the C file carries the word).
fn vsetvli_vlmax_e8() -> Result<(u32, String), String> {
    let text = "th.vsetvli a0, zero, e8, m1, d1";
    let i = kgen_dsl::text::parse_inst(text).map_err(|e| format!("openssl-patches: `{text}`: {e:?}"))?;
    let w = i.encode().map_err(|e| format!("openssl-patches: `{text}`: {e:?}"))?;
    Ok((w, text.to_string()))
}

fn detection(t: &mut Tree, base: &str, uses: &[Vec<Use>]) -> Result<Patch, String> {
    let caps = thead_caps(uses);
    if caps.is_empty() {
        return Err("openssl-patches: the series' first patch detects the T-Head extensions its variants use, and none of them uses one".into());
    }
    let def = "include/crypto/riscv_arch.def";
    // Every other extension a variant uses must be a capability OpenSSL already has.
    let def_text = t.read(def)?.to_string();
    for u in uses.iter().flatten() {
        for e in u.exts() {
            let known = def_text.contains(&format!("RISCV_DEFINE_CAP({},", cap_name(e))) || caps.iter().any(|c| c.0 == e);
            if !known {
                return Err(format!("openssl-patches: {} {} uses {}, which {def} has no capability for", u.kernel.name, u.variant.name, e.name()));
            }
        }
    }
    // OPENSSL_riscvcap is matched by substring ("_NAME"): no name may begin another.
    let names: Vec<String> = def_text
        .lines()
        .filter_map(|l| l.strip_prefix("RISCV_DEFINE_CAP(").and_then(|r| r.split(',').next()).map(str::to_string))
        .chain(caps.iter().map(|c| cap_name(c.0)))
        .collect();
    for (e, _, _) in &caps {
        let n = cap_name(*e);
        if let Some(m) = names.iter().find(|m| **m != n && (n.starts_with(m.as_str()) || m.starts_with(&n))) {
            return Err(format!("openssl-patches: capability {n} and {m}: OPENSSL_riscvcap's substring match cannot tell them apart"));
        }
    }
    let lines: Vec<String> = caps.iter().map(|(e, w, b)| format!("RISCV_DEFINE_CAP({}, {w}, {b}, -1, 0)", cap_name(*e))).collect();
    let scalar: Vec<String> = caps.iter().filter(|c| c.0 != Ext::XTheadVector).map(|c| format!("\"{}\"", cap_name(c.0))).collect();
    let names_list: Vec<String> = caps.iter().map(|c| c.0.name().to_string()).collect();
    t.insert_after(
        def,
        "RISCV_DEFINE_CAP(ZVKSH, 0, 23, 4, (1 << 25))",
        &format!(
            "\n{}\n{}",
            comment(
                "",
                "T-Head (XuanTie C9xx) vendor extensions, used by kgen's kernels. They have no hwprobe bit of this kind: crypto/riscvcap.c sets them from riscv_hwprobe's vendor and core ids and RISCV_HWPROBE_KEY_VENDOR_EXT_THEAD_0 (thead_probe()), or OPENSSL_riscvcap names them."
            ),
            lines.join("\n")
        ),
    )?;
    t.insert_after(
        "include/crypto/riscv_arch.h",
        "size_t riscv_vlen(void);",
        &format!(
            "\n{}\nsize_t riscv_xtheadvector_vlen(void);",
            comment("", "Get the VLEN in bits of the XTheadVector unit (th.vsetvli's VLMAX at e8, m1, times 8). If RISCV_HAS_XTHEADVECTOR() is false, then this returns 0.")
        ),
    )?;
    t.create("include/crypto/riscv_kgen.h", &kgen_header(base))?;

    let rc = "crypto/riscvcap.c";
    let (word, asm) = vsetvli_vlmax_e8()?;
    t.insert_after(
        rc,
        "#include <sys/auxv.h>\n#endif",
        &format!(
            r#"#include "crypto/riscv_kgen.h"

{}
#if defined(__linux__) && defined(__riscv) && __riscv_xlen == 64 && !defined(FIPS_MODULE)
#define KGEN_THEAD_PROBE
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#ifndef __NR_riscv_hwprobe
#define __NR_riscv_hwprobe 258
#endif
#ifndef PR_RISCV_V_GET_CONTROL
#define PR_RISCV_V_GET_CONTROL 70
#endif
#define KGEN_PR_RISCV_V_VSTATE_CTRL_CUR_MASK 0x3
#define KGEN_PR_RISCV_V_VSTATE_CTRL_ON 2
/* struct riscv_hwprobe and the keys used here, as in asm/hwprobe.h. */
struct kgen_riscv_hwprobe {{
    int64_t key;
    uint64_t value;
}};
#define KGEN_HWPROBE_KEY_MVENDORID 0
#define KGEN_HWPROBE_KEY_MARCHID 1
#define KGEN_HWPROBE_KEY_MIMPID 2
#define KGEN_HWPROBE_KEY_VENDOR_EXT_THEAD_0 11
#define KGEN_HWPROBE_VENDOR_EXT_XTHEADVECTOR (1 << 0)
/* T-Head's JEDEC vendor id; its C906, C910 and C920 cores report marchid 0, mimpid 0. */
#define KGEN_MVENDORID_THEAD 0x5b7
#endif"#,
            comment(
                "",
                &format!(
                    "T-Head detection for kgen's kernels ({}). riscv_hwprobe(2) is called with its own number and structure: the kernel headers of a build may predate it (asm/hwprobe.h, Linux 6.4), and then OSSL_RISCV_HWPROBE is not defined. Not in the FIPS module, like OpenSSL's own hwprobe code.",
                    names_list.join(", ")
                )
            )
        ),
    )?;
    t.insert_after(rc, "static size_t vlen = 0;", "static size_t xtheadvector_vlen = 0;")?;
    t.insert_after(
        rc,
        "size_t riscv_vlen(void)\n{\n    return vlen;\n}",
        &format!(
            r#"
size_t riscv_xtheadvector_vlen(void)
{{
    return xtheadvector_vlen;
}}

/* {asm}: vl = VLMAX of 8-bit elements (XTheadVector, as a word for binutils 2.40). */
static size_t xtheadvector_vlmax_e8(void)
{{
    register size_t vl __asm__("a0");

    __asm__ __volatile__(".word {word:#010x}" : "=r"(vl));
    return vl;
}}

#ifdef KGEN_THEAD_PROBE
static void set_cap(const char *name)
{{
    for (size_t i = 0; i < kRISCVNumCaps; ++i)
        if (strcmp(RISCV_capabilities[i].name, name) == 0)
            OPENSSL_riscvcap_P[RISCV_capabilities[i].index] |= (1 << RISCV_capabilities[i].bit_offset);
}}

{}
static void thead_probe(void)
{{
    static const char *const scalar[] = {{ {} }};
    struct kgen_riscv_hwprobe p[4] = {{
        {{ KGEN_HWPROBE_KEY_MVENDORID, 0 }},
        {{ KGEN_HWPROBE_KEY_MARCHID, 0 }},
        {{ KGEN_HWPROBE_KEY_MIMPID, 0 }},
        {{ KGEN_HWPROBE_KEY_VENDOR_EXT_THEAD_0, 0 }},
    }};
    long ctl;

    /* cpus NULL: every online CPU (a value that differs between CPUs is reported as -1). */
    if (syscall(__NR_riscv_hwprobe, p, 4, 0, NULL, 0) != 0)
        return; /* ENOSYS: Linux before 6.4 */
    if (p[0].key != KGEN_HWPROBE_KEY_MVENDORID || p[0].value != KGEN_MVENDORID_THEAD
        || p[1].key != KGEN_HWPROBE_KEY_MARCHID || p[1].value != 0
        || p[2].key != KGEN_HWPROBE_KEY_MIMPID || p[2].value != 0)
        return;
    for (size_t i = 0; i < sizeof(scalar) / sizeof(scalar[0]); i++)
        set_cap(scalar[i]);
    /* A kernel that does not know the key answers key -1. */
    if (p[3].key != KGEN_HWPROBE_KEY_VENDOR_EXT_THEAD_0
        || (p[3].value & KGEN_HWPROBE_VENDOR_EXT_XTHEADVECTOR) == 0)
        return;
    ctl = prctl(PR_RISCV_V_GET_CONTROL, 0, 0, 0, 0);
    if (ctl >= 0
        && (ctl & KGEN_PR_RISCV_V_VSTATE_CTRL_CUR_MASK) == KGEN_PR_RISCV_V_VSTATE_CTRL_ON)
        set_cap("{}");
}}
#endif

#ifdef OPENSSL_KGEN_COUNTERS
#include <stdio.h>
/* Counting builds: a dispatcher's counts, appended to the file ${} names. */
void ossl_kgen_counts_report(const char *const *names, const unsigned long *counts, size_t n)
{{
    const char *path = getenv("{}");
    FILE *f;

    if (path == NULL || (f = fopen(path, "a")) == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        if (counts[i] != 0)
            fprintf(f, "%s %lu\n", names[i], counts[i]);
    fclose(f);
}}
#endif"#,
            comment(
                "",
                "The T-Head scalar extensions when riscv_hwprobe reports a T-Head C9xx core on every online CPU; XTheadVector as well when the kernel reports it on every online CPU (key RISCV_HWPROBE_KEY_VENDOR_EXT_THEAD_0, bit 0; mainline enables it only where the GhostWrite mitigation allows) and lets this thread use the vector unit (PR_RISCV_V_GET_CONTROL: current state on)."
            ),
            scalar.join(", "),
            cap_name(Ext::XTheadVector),
            super::COUNTS_ENV,
            super::COUNTS_ENV,
        ),
    )?;
    t.replace(
        rc,
        "    if (RISCV_HAS_V()) {\n        vlen = riscv_vlen_asm();\n    }\n}",
        "#ifdef KGEN_THEAD_PROBE\n    if (e == NULL)\n        thead_probe();\n#endif\n\n    if (RISCV_HAS_V()) {\n        vlen = riscv_vlen_asm();\n    }\n    if (RISCV_HAS_XTHEADVECTOR())\n        xtheadvector_vlen = xtheadvector_vlmax_e8() * 8;\n}",
    )?;

    let env_example = format!("rv64gc_{}", caps.iter().map(|c| c.0.name()).collect::<Vec<_>>().join("_"));
    let body = format!(
        "Capability bits for the T-Head (XuanTie C9xx) extensions that kgen's kernels use ({names}), and their detection, for the dispatchers the next patches add.\n\n\
         - include/crypto/riscv_arch.def: {caps}; so RISCV_HAS_{first}() and friends exist, OPENSSL_riscvcap takes the names (for example OPENSSL_riscvcap={env_example}) and `openssl info -cpusettings` shows them.\n\
         - crypto/riscvcap.c: thead_probe(), run once from OPENSSL_cpuid_setup() when OPENSSL_riscvcap is not set. It calls riscv_hwprobe(2) (syscall {nr}, with its own structure: Debian 12's cross headers and other pre-6.4 headers have no asm/hwprobe.h, and OpenSSL's own hwprobe code is then compiled out) for all online CPUs. mvendorid 0x5b7 (T-Head) with marchid 0 and mimpid 0 (what the C906, C910 and C920 report; Linux's T-Head errata code keys on the same ids) sets the scalar extensions; XTheadVector additionally needs key 11 (RISCV_HWPROBE_KEY_VENDOR_EXT_THEAD_0) bit 0 and PR_RISCV_V_GET_CONTROL saying this thread may use the vector unit. No /proc/cpuinfo. ENOSYS (Linux before 6.4) or any other answer leaves the bits clear.\n\
         - riscv_xtheadvector_vlen(): XTheadVector's VLEN, measured once with th.vsetvli (0 without XTheadVector); the vector kernels need the VLEN they were built for.\n\
         - include/crypto/riscv_kgen.h: the counters of a counting build (see below), shared by the dispatchers.\n\n\
         Run-time switches: OPENSSL_riscvcap replaces detection as before (OPENSSL_riscvcap=rv64gc keeps every kgen kernel off; naming xtheadvector asserts that the vector unit may be used). A build configured with -D{macro} (./Configure linux64-riscv64 ... -D{macro}) counts every call of a kgen function and every fallback to upstream code, and appends the non-zero counts to the file ${env} names at exit; other builds contain no counters.\n\n{}",
        regenerate(base, 1),
        names = names_list.join(", "),
        caps = lines.join(", "),
        first = cap_name(caps[0].0),
        nr = 258,
        macro = super::COUNTING_MACRO,
        env = super::COUNTS_ENV,
    );
    Ok(patch(t, "riscv-detect-the-T-Head-extensions-for-kgen-kernels", "riscv: detect the T-Head extensions for kgen's kernels".into(), body, vec![]))
}

fn kgen_header(base: &str) -> String {
    format!(
        r#"{}
#ifndef OSSL_CRYPTO_RISCV_KGEN_H
#define OSSL_CRYPTO_RISCV_KGEN_H

#include <stddef.h>
#include "crypto/riscv_arch.h"

#ifdef {m}
void ossl_kgen_counts_report(const char *const *names, const unsigned long *counts, size_t n);
/* KGEN_COUNTERS(tag, "name", ...): a dispatcher's counters, reported at exit. */
#define KGEN_COUNTERS(tag, ...)                                                    \
    static const char *const kgen_##tag##_names[] = {{ __VA_ARGS__ }};               \
    static unsigned long kgen_##tag##_counts[sizeof(kgen_##tag##_names)            \
        / sizeof(kgen_##tag##_names[0])];                                          \
    __attribute__((destructor)) static void kgen_##tag##_report(void)              \
    {{                                                                              \
        ossl_kgen_counts_report(kgen_##tag##_names, kgen_##tag##_counts,           \
            sizeof(kgen_##tag##_names) / sizeof(kgen_##tag##_names[0]));           \
    }}
#define KGEN_COUNT(tag, i) __atomic_fetch_add(&kgen_##tag##_counts[i], 1, __ATOMIC_RELAXED)
/* Counter 0 of every dispatcher: calls (or key set-ups) that went to upstream code. */
#define KGEN_UPSTREAM(tag) KGEN_COUNT(tag, 0)
#else
#define KGEN_UPSTREAM(tag) ((void)0)
#endif

#endif
"#,
        file_comment(
            base,
            &format!(
                "What the dispatchers that call kgen's kernels share.\n\nCounting builds (./Configure ... -D{m}): each dispatcher counts the calls of every kgen function it calls, through a static wrapper, and the calls (or key set-ups) it hands to upstream code (counter 0, \"<kernel>:upstream\"); at exit it appends \"name count\" lines for the non-zero counts to the file the environment variable {e} names. Without -D{m} there are no counters and the dispatchers call kgen's functions directly.",
                m = super::COUNTING_MACRO,
                e = super::COUNTS_ENV
            )
        ),
        m = super::COUNTING_MACRO,
    )
}

// ---- kernels -------------------------------------------------------------------------------

/// The perlasm shim of a variant, under `dir/asm/`, and its GENERATE line.
fn add_shim(t: &mut Tree, base: &str, dir: &str, u: &Use) -> Result<(String, String), String> {
    let stem = u.stem();
    t.create(&format!("{dir}/asm/{stem}.pl"), &u.shim(base)?)?;
    Ok((format!("{stem}.s"), format!("GENERATE[{stem}.s]=asm/{stem}.pl")))
}

/// The perlasm shims of `uses` under `dir/asm/`, their objects appended to the
/// `$VAR_riscv64=` line of `dir/build.info` and their GENERATE lines after the line
/// `generate_after`; returns the objects' names.
fn add_to_build(t: &mut Tree, base: &str, dir: &str, var: &str, generate_after: &str, uses: &[&Use]) -> Result<Vec<String>, String> {
    let bi = format!("{dir}/build.info");
    let (mut objs, mut gens) = (Vec::new(), Vec::new());
    for u in uses {
        let (o, g) = add_shim(t, base, dir, u)?;
        objs.push(o);
        gens.push(g);
    }
    let prefix = format!("  ${var}_riscv64=");
    let line = t.read(&bi)?.lines().find(|l| l.starts_with(&prefix)).map(str::to_string).ok_or_else(|| format!("openssl-patches: {bi} has no ${var}_riscv64 line"))?;
    t.replace(&bi, &line, &format!("{line} {}", objs.join(" ")))?;
    t.insert_after(&bi, generate_after, &gens.join("\n"))?;
    Ok(objs)
}

/// Declarations of what a dispatcher calls from a variant.
fn decls(u: &Use, entries: &[&'static Entry]) -> Result<String, String> {
    let mut s = format!("/* `kgen emit {} --variant {} --format h` */\n", u.kernel.name, u.variant.name);
    for e in entries {
        s.push_str(&u.decl(e)?);
        s.push('\n');
    }
    Ok(s.trim_end().to_string())
}

/// The entry points of `entries` the module implements.
fn implemented(u: &Use, entries: &[&'static Entry]) -> Vec<&'static Entry> {
    entries.iter().copied().filter(|e| u.has(e)).collect()
}

/// One line per variant for the commit message: what it needs.
fn needs(u: &Use) -> String {
    let exts: Vec<String> = u.exts().iter().map(|e| cap_name(*e)).collect();
    if exts.is_empty() { format!("{} (RV64GC only)", u.variant.name) } else { format!("{} when RISCV_HAS_{}()", u.variant.name, exts.join("() && RISCV_HAS_")) }
}

/// The lines of crypto/chacha/build.info and crypto/modes/build.info after which kgen's
/// GENERATE lines go (upstream's last riscv64 ones).
const CHACHA_GENERATE: &str = "GENERATE[chacha-riscv64-v-zbb-zvkb.s]=asm/chacha-riscv64-v-zbb.pl zvkb";
const MODES_GENERATE: &str = "GENERATE[aes-gcm-riscv64-zvkb-zvkg-zvkned.s]=asm/aes-gcm-riscv64-zvkb-zvkg-zvkned.pl";

/// The variant part of upstream's riscv64 T-table functions once this series renames them
/// (`AES_encrypt_rv64i`).
const UPSTREAM_AES_PART: &str = "rv64i";

fn aes(t: &mut Tree, base: &str, n: usize, us: &[Use]) -> Result<Patch, String> {
    let u = &us[0];
    let pl = "crypto/aes/asm/aes-riscv64.pl";
    // The public functions upstream's riscv64 T-table code defines, which kgen's entry
    // points with those names take over.
    let upstream_globals: Vec<String> = t.read(pl)?.lines().filter_map(|l| l.strip_prefix(".globl ")).map(|s| s.trim().to_string()).collect();
    let taken: Vec<&'static Entry> = implemented(u, u.entries).into_iter().filter(|e| e.alias.is_some_and(|a| upstream_globals.iter().any(|g| g == a))).collect();
    if taken.is_empty() {
        return Err(format!("openssl-patches: {pl} defines none of {} {}'s functions", u.kernel.name, u.variant.name));
    }
    // Upstream's functions keep their entry point's prototype under the name the perl line
    // below gives them: the public name, then `_rv64i`.
    let renamed = |e: &Entry| format!("{}_{UPSTREAM_AES_PART}", e.alias.expect("aliased"));
    let names: Vec<&str> = taken.iter().map(|e| e.alias.expect("aliased")).collect();
    t.insert_before(
        pl,
        "print $code;",
        &format!(
            "# kgen: crypto/aes/aes_riscv.c defines these names and calls this code as\n# NAME_{p} where kgen's kernel is not selected.\n$code =~ s/\\b({})\\b/$1_{p}/g;\n",
            names.join("|"),
            p = UPSTREAM_AES_PART
        ),
    )?;
    // AES_ctr32_encrypt, which OpenSSL declares for a platform's assembly under AES_CTR_ASM
    // and upstream's riscv64 code lacks: the dispatcher defines it, over a C loop on
    // upstream's block function where kgen's code is not selected. With AES_CTR_ASM the
    // providers' AES-CTR and AES-GCM take it as their ctr128_f.
    let ctr32: Vec<&'static Entry> = u.entries.iter().copied().filter(|e| e.alias == Some("AES_ctr32_encrypt")).collect();
    let added: Vec<&'static Entry> = implemented(u, &ctr32);
    let funcs: Vec<&'static Entry> = taken.iter().chain(&added).copied().collect();
    // Every variant, in dispatch order, implements the same functions.
    for v in &us[1..] {
        if let Some(e) = funcs.iter().find(|e| !v.has(e)) {
            return Err(format!("openssl-patches: {} {} lacks {}, which {} has", v.kernel.name, v.variant.name, e.alias.unwrap_or(e.prefix), u.variant.name));
        }
    }
    let flat: Vec<Callee> = us.iter().flat_map(|v| funcs.iter().map(move |e| Callee::of(v, e))).collect::<Result<_, _>>()?;
    let (counting, mut counters) = counting_block("aes", u.kernel.name, &flat);
    // A vector variant's counter mode pays for a whole batch of blocks per pass: calls of
    // the counts between its crossovers with the next variant (where that one models
    // faster) go down the list: (up to, from) blocks.
    let mut min_blocks: Vec<Option<(usize, usize)>> = vec![None; us.len()];
    let mut crossovers = String::new();
    if let Some(e) = added.first() {
        for i in 0..us.len().saturating_sub(1) {
            if !us[i].exts().iter().any(|x| matches!(x, Ext::XTheadVector | Ext::V)) {
                continue;
            }
            let sizes: Vec<usize> = (1..=64).map(|b| 16 * b).chain([16384]).collect();
            let (a, b) = (modeled_cpb_fn(&us[i], e, &sizes)?, modeled_cpb_fn(&us[i + 1], e, &sizes)?);
            let from = (0..sizes.len()).rposition(|k| a[k] >= b[k]).map_or(0, |k| sizes.get(k + 1).copied().unwrap_or(usize::MAX));
            if from == usize::MAX {
                return Err(format!("openssl-patches: {} {}'s AES_ctr32_encrypt never models faster than {}'s", u.kernel.name, us[i].variant.name, us[i + 1].variant.name));
            }
            let upto = sizes.iter().zip(a.iter().zip(&b)).take_while(|(_, (x, y))| x < y).last().map_or(0, |(&n, _)| n);
            if upto + 16 >= from {
                continue;
            }
            min_blocks[i] = Some((upto / 16, from / 16));
            by_length(&mut counters, &Callee::of(&us[i + 1], e)?.symbol);
            let shown = [1usize, 2, 4, 6, 8, 9, 12, 16, 64, 1024];
            let row = |v: &[f64]| shown.iter().map(|&n| format!("{:.2}", v[sizes.iter().position(|&s| s == 16 * n).unwrap_or(sizes.len() - 1)])).collect::<Vec<_>>().join(" | ");
            let few = if upto == 0 { String::new() } else { format!("up to {} blocks and ", upto / 16) };
            crossovers.push_str(&format!(
                "AES_ctr32_encrypt takes {} for {few}from {} blocks on and {} between: the largest count up to which and the smallest count from which {} models faster at every count from 1 to 64 and at 1024 (`kgen bench {}`, kgen's C906 model), cycles per byte:\n\n| blocks | {} |\n|---|{}\n| {} | {} |\n| {} | {} |\n\n",
                us[i].variant.name,
                from / 16,
                us[i + 1].variant.name,
                us[i].variant.name,
                u.kernel.name,
                shown.map(|n| n.to_string()).join(" | "),
                "---:|".repeat(shown.len()),
                us[i].variant.name,
                row(&a),
                us[i + 1].variant.name,
                row(&b),
            ));
        }
    }
    let mut upstream = String::from("/* Upstream's crypto/aes/asm/aes-riscv64.pl, renamed by this patch. */\n");
    let mut defs = String::new();
    let upstream_ctr = "aes_ctr32_encrypt_rv64i";
    let mut fallback = String::new();
    if let Some(e) = added.first() {
        fallback.push_str(&format!(
            "\n/*\n * Counter mode on upstream's block function, as a ctr128_f: the big-endian 32-bit\n * counter in ivec[12..16] wraps, ivec is not written back.\n */\nstatic {}\n{{\n    unsigned char ctr[16], ks[16];\n    uint32_t c;\n    size_t i;\n\n    memcpy(ctr, ivec, 16);\n    c = (uint32_t)ctr[12] << 24 | (uint32_t)ctr[13] << 16 | (uint32_t)ctr[14] << 8 | ctr[15];\n    for (; blocks > 0; blocks--, in += 16, out += 16) {{\n        AES_encrypt_{p}(ctr, ks, key);\n        for (i = 0; i < 16; i++)\n            out[i] = in[i] ^ ks[i];\n        c++;\n        ctr[12] = (unsigned char)(c >> 24);\n        ctr[13] = (unsigned char)(c >> 16);\n        ctr[14] = (unsigned char)(c >> 8);\n        ctr[15] = (unsigned char)c;\n    }}\n    OPENSSL_cleanse(ks, sizeof(ks));\n}}\n",
            e.prototype_named(upstream_ctr, kgen_dsl::Abi::Psabi),
            p = UPSTREAM_AES_PART
        ));
        if !taken.iter().any(|t| t.alias == Some("AES_encrypt")) {
            return Err(format!("openssl-patches: {} {}: AES_ctr32_encrypt's upstream path needs AES_encrypt", u.kernel.name, u.variant.name));
        }
    }
    for (j, e) in funcs.iter().enumerate() {
        if taken.contains(e) {
            upstream.push_str(&format!("{};\n", e.prototype_named(&renamed(e), kgen_dsl::Abi::Psabi)));
        }
        let args: Vec<&str> = e.params.iter().map(|p| p.name).collect();
        let (ret, tail) = if e.ret.is_value() { ("return ", "") } else { ("", "\n        return;") };
        let arms: String = us
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let cond = match min_blocks[i].filter(|_| added.contains(e)) {
                    Some((0, n)) => format!("blocks >= {n} && {}", v.usable()),
                    Some((m, n)) => format!("(blocks <= {m} || blocks >= {n}) && {}", v.usable()),
                    None => v.usable(),
                };
                format!("    if ({cond}) {{\n        {ret}{};{tail}\n    }}\n", flat[i * funcs.len() + j].call_with_args())
            })
            .collect();
        defs.push_str(&format!(
            "\n{}\n{{\n{arms}    KGEN_UPSTREAM(aes);\n    {ret}{}({});\n}}\n",
            e.prototype_named(e.alias.expect("aliased"), kgen_dsl::Abi::Psabi),
            if taken.contains(e) { renamed(e) } else { upstream_ctr.to_string() },
            args.join(", ")
        ));
    }
    upstream.push_str(&fallback);
    let variants: Vec<&str> = us.iter().map(|v| v.variant.name).collect();
    let defines: Vec<String> = us.iter().map(|v| v.usable_define()).collect();
    let declared: Vec<String> = us.iter().map(|v| decls(v, &funcs)).collect::<Result<_, _>>()?;
    let src = format!(
        "{}\n\n#include \"internal/deprecated.h\"\n\n#include <stdint.h>\n#include <string.h>\n#include <openssl/aes.h>\n#include <openssl/crypto.h>\n#include \"crypto/modes.h\"\n#include \"crypto/aes_platform.h\"\n#include \"crypto/riscv_kgen.h\"\n\n{}\n\n{}\n\n{}\n\n{}\n{defs}",
        file_comment(
            base,
            &format!(
                "{} on riscv64: kgen's {} code ({}), the first whose extensions are present (RISCV_HAS_*, set once by OPENSSL_cpuid_setup), else upstream's crypto/aes/asm/aes-riscv64.pl, whose functions this patch renames NAME_rv64i. Both make the standard AES_KEY (FIPS-197's expanded words in memory order, the round count at byte 240; kgen's tests/aes.rs checks it), so code elsewhere that takes AES_set_encrypt_key's schedule (the providers' Zvkned AES-192 paths) works with either.",
                names.join(", "),
                u.kernel.name,
                variants.join(", ")
            )
        ),
        defines.join("\n"),
        declared.join("\n\n"),
        upstream.trim_end(),
        counting,
    );
    t.create("crypto/aes/aes_riscv.c", &src)?;
    let (mut objs, mut gens) = (Vec::new(), Vec::new());
    for v in us {
        let (obj, generate) = add_shim(t, base, "crypto/aes", v)?;
        objs.push(obj);
        gens.push(generate);
    }
    let bi = "crypto/aes/build.info";
    let line = "  $AESASM_riscv64=aes_cbc.c aes-riscv64.s aes-riscv64-zkn.s aes-riscv64-zvkb-zvkned.s aes-riscv64-zvkned.s aes-riscv64-zvbb-zvkg-zvkned.s";
    t.replace(bi, line, &format!("  $AESASM_riscv64=aes_riscv.c {} {}", line.trim_start().trim_start_matches("$AESASM_riscv64="), objs.join(" ")))?;
    if !added.is_empty() {
        t.replace(bi, "  $AESDEF_riscv64=AES_ASM", "  $AESDEF_riscv64=AES_ASM AES_CTR_ASM")?;
    }
    t.insert_after(bi, "GENERATE[aes-riscv64-zvbb-zvkg-zvkned.s]=asm/aes-riscv64-zvbb-zvkg-zvkned.pl", &gens.join("\n"))?;
    let ctr_lines = if added.is_empty() {
        String::new()
    } else {
        "- crypto/aes/aes_riscv.c also defines AES_ctr32_encrypt (kgen's counter mode, or a loop on upstream's AES_encrypt), and crypto/aes/build.info adds AES_CTR_ASM to $AESDEF_riscv64: the providers' generic AES-CTR and AES-GCM (used where Zkn and Zvkned are absent) then take it as their ctr128_f, as on s390x.\n".to_string()
    };
    let shims: Vec<String> = us.iter().map(|v| format!("crypto/aes/asm/{}.pl", v.stem())).collect();
    let body = format!(
        "AES from kgen's {k} kernel ({vs}). {notes}\n\n\
         - {shims}: perlasm shims that write kgen's assembly (`kgen emit {k} --variant V`, no aliases) as {objs}.\n\
         - crypto/aes/aes_riscv.c: {names} for riscv64, each choosing kgen's function ({}) or upstream's.\n\
         - crypto/aes/asm/aes-riscv64.pl: its functions renamed NAME_rv64i (the public names are the dispatcher's; every symbol of libcrypto stays).\n\
         - crypto/aes/build.info: both in $AESASM_riscv64.\n{ctr_lines}\n\
         Run-time selection: {selection} The Zkn and Zvkned paths of the providers are chosen before these functions, as before. One branch on the capability word per variant and call.\n\n{crossovers}{}",
        us.iter().map(needs).collect::<Vec<_>>().join("; "),
        regenerate(base, n),
        k = u.kernel.name,
        vs = variants.join(", "),
        notes = u.module.notes.join(" "),
        shims = shims.join(", "),
        objs = objs.join(", "),
        names = names.join(", "),
        selection = if us.iter().any(|v| v.exts().is_empty()) {
            "the first of kgen's variants, in the order above, whose extensions OPENSSL_cpuid_setup found (patch 1) or OPENSSL_riscvcap names; the last needs none, so every CPU runs kgen's code, and upstream's T-table code (which is not constant time) stays in the library, renamed, but is not called."
        } else {
            "kgen's code when OPENSSL_cpuid_setup found the extensions it uses (patch 1) or OPENSSL_riscvcap names them, the variants in the order above; upstream's T-table code otherwise, which is not constant time."
        },
    );
    Ok(patch(t, "riscv64-AES-from-kgen", format!("riscv64: AES from kgen ({} {})", u.kernel.name, variants.join(", ")), body, counters))
}

/// ChaCha20's crossover: the smallest length from which the vector variant models faster
/// than the scalar one at every measured length (kgen's C906 model, `kgen bench`), with the
/// table.
fn chacha_crossover(vec: &Use, scalar: &Use) -> Result<(usize, Vec<(usize, u64, u64)>), String> {
    let sizes: Vec<usize> = (1..=64).map(|i| 16 * i).chain((17..=64).map(|i| 64 * i)).chain([16384]).collect();
    let run = |u: &Use| -> Result<Vec<u64>, String> {
        let obj = u.module.object().map_err(|e| e.to_string())?;
        let rows = kgen_harness::bench::bench_object(u.kernel, u.variant.name, &obj, &u.module.target, &sizes)?;
        Ok(rows.iter().map(|r| r.cycles).collect())
    };
    let (a, b) = (run(vec)?, run(scalar)?);
    if a.len() != sizes.len() || b.len() != sizes.len() {
        return Err("openssl-patches: the ChaCha20 bench driver measured other sizes than asked".into());
    }
    let table: Vec<(usize, u64, u64)> = sizes.iter().zip(a.iter().zip(&b)).map(|(&n, (&x, &y))| (n, x, y)).collect();
    let from = table.iter().rposition(|r| r.1 >= r.2).map(|i| table.get(i + 1).map(|r| r.0).unwrap_or(usize::MAX)).unwrap_or(0);
    Ok((from, table))
}

/// Modeled cycles per byte (`kgen bench`, kgen's C906 model) of a variant's bulk function
/// at `sizes`: its only measured function, or the one for entry `e`.
fn modeled(u: &Use, e: Option<&Entry>, sizes: &[usize]) -> Result<Vec<f64>, String> {
    let sym = e.map(|e| u.sym(e)).transpose()?;
    let obj = u.module.object().map_err(|e| e.to_string())?;
    let rows = kgen_harness::bench::bench_object(u.kernel, u.variant.name, &obj, &u.module.target, sizes)?;
    let v: Vec<f64> = rows.iter().filter(|r| sym.as_ref().is_none_or(|s| &r.what == s)).map(|r| r.cpb()).collect();
    if v.len() != sizes.len() {
        return Err(format!("openssl-patches: the {} bench driver measured {} at other sizes than asked", u.kernel.name, sym.as_deref().unwrap_or("its functions")));
    }
    Ok(v)
}

/// [`modeled`] of the variant's one measured function.
fn modeled_cpb(u: &Use, sizes: &[usize]) -> Result<Vec<f64>, String> {
    modeled(u, None, sizes)
}

/// [`modeled`] of the function for entry `e`.
fn modeled_cpb_fn(u: &Use, e: &Entry, sizes: &[usize]) -> Result<Vec<f64>, String> {
    modeled(u, Some(e), sizes)
}

fn slashed(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join("/")
}

fn chacha20(t: &mut Tree, base: &str, n: usize, vec: &Use, scalar: &Use) -> Result<Patch, String> {
    let ctr32 = vec.entries[0];
    let (from, table) = chacha_crossover(vec, scalar)?;
    if from == usize::MAX {
        return Err(format!("openssl-patches: chacha20 {} never models faster than {}", vec.variant.name, scalar.variant.name));
    }
    let cv = Callee::of(vec, ctr32)?;
    let cs = Callee::of(scalar, ctr32)?;
    let (counting, mut counters) = counting_block("chacha20", vec.kernel.name, &[Callee::of(vec, ctr32)?, Callee::of(scalar, ctr32)?]);
    by_length(&mut counters, &cs.symbol);
    let shown: Vec<&(usize, u64, u64)> = table.iter().filter(|r| [16, 64, 112, 128, 192, 256, 512, 1024, 4096, 16384].contains(&r.0)).collect();
    let mut tab = format!("| bytes | {} c/B | {} c/B |\n", vec.variant.name, scalar.variant.name);
    for r in &shown {
        tab.push_str(&format!("| {:>5} | {:>6.2} | {:>6.2} |\n", r.0, r.1 as f64 / r.0 as f64, r.2 as f64 / r.0 as f64));
    }
    let min = format!("KGEN_CHACHA20_{}_MIN_LEN", symbol_suffix(vec.variant.name).to_ascii_uppercase());
    let cross = comment(
        "",
        &format!(
            "Lengths from which kgen {v} models faster than {s} at every length measured ({n} lengths from 16 to 16384 bytes, `kgen bench chacha20` on kgen's C906 model); below it {s} is faster.",
            v = vec.variant.name,
            s = scalar.variant.name,
            n = table.len()
        ),
    );
    let cr = "crypto/chacha/chacha_riscv.c";
    t.insert_after(
        cr,
        "void ChaCha20_ctr32_v_zbb(unsigned char *out, const unsigned char *inp,\n    size_t len, const unsigned int key[8],\n    const unsigned int counter[4]);",
        &format!(
            "\n#include \"crypto/riscv_kgen.h\"\n\n{}\n\n{}\n\n{cross}\n#define {min} {from}\n\n{}\n\n{}\n\n{counting}",
            vec.usable_define(),
            scalar.usable_define(),
            decls(vec, &[ctr32])?,
            decls(scalar, &[ctr32])?,
        ),
    )?;
    t.replace(
        cr,
        "    } else {\n        ChaCha20_ctr32_c(out, inp, len, key, counter);\n    }",
        &format!(
            "    }} else if ({} && len >= {min}) {{\n        {};\n    }} else if ({}) {{\n        {};\n    }} else {{\n        KGEN_UPSTREAM(chacha20);\n        ChaCha20_ctr32_c(out, inp, len, key, counter);\n    }}",
            vec.usable(),
            cv.call_with_args(),
            scalar.usable(),
            cs.call_with_args()
        ),
    )?;
    let objs = add_to_build(t, base, "crypto/chacha", "CHACHAASM", CHACHA_GENERATE, &[vec, scalar])?;
    let (o1, o2) = (&objs[0], &objs[1]);
    let body = format!(
        "ChaCha20 from kgen: {v} (four XTheadVector lanes with a scalar block interleaved) and {s} (scalar, th.srriw rotations), any length and alignment, constant time.\n\n\
         - crypto/chacha/asm/{st1}.pl, {st2}.pl: perlasm shims writing kgen's assembly ({o1}, {o2}).\n\
         - crypto/chacha/chacha_riscv.c: ChaCha20_ctr32() chooses, after upstream's RVV 1.0 path: {v} for len >= {from}, else {s}, else upstream's C.\n\
         - crypto/chacha/build.info: both in $CHACHAASM_riscv64.\n\n\
         Run-time selection: {n1}; {n2} (capability bits from patch 1 or OPENSSL_riscvcap). The length threshold is kgen's crossover table: the smallest length from which {v} models faster than {s} at every measured length (`kgen bench chacha20`, kgen's C906 model, {cnt} lengths from 16 to 16384 bytes), cycles per byte:\n\n{tab}\n\
         Below {from} bytes {v} runs its own copy of the scalar code and is within a few percent of {s}. {s} takes {s1k:.2} cycles per byte at 1 KiB on the model; kgen's README puts scalar ChaCha20 without the T-Head rotations (CRYPTOGAMS on the C906 RTL, kgen's own rv64gc on the model) at about 27, so upstream's C runs only without the T-Head extensions.\n\n{}",
        regenerate(base, n),
        v = vec.variant.name,
        s = scalar.variant.name,
        st1 = vec.stem(),
        st2 = scalar.stem(),
        n1 = needs(vec),
        n2 = needs(scalar),
        cnt = table.len(),
        s1k = table.iter().find(|r| r.0 == 1024).map(|r| r.2 as f64 / 1024.0).unwrap_or(f64::NAN),
    );
    Ok(patch(t, "riscv64-ChaCha20-from-kgen", format!("riscv64: ChaCha20 from kgen ({}, {})", vec.variant.name, scalar.variant.name), body, counters))
}

fn ghash(t: &mut Tree, base: &str, n: usize, vec: &Use, scalar: &Use) -> Result<Patch, String> {
    let entries = [vec.entries[0], vec.entries[1], vec.entries[2]];
    for u in [vec, scalar] {
        if implemented(u, &entries).len() != 3 {
            return Err(format!("openssl-patches: ghash {} lacks one of gcm_init/gmult/ghash", u.variant.name));
        }
    }
    let callees: Vec<Callee> = [vec, scalar].iter().flat_map(|u| entries.iter().map(move |e| Callee::of(u, e))).collect::<Result<_, _>>()?;
    let (counting, counters) = counting_block("ghash", vec.kernel.name, &callees);
    let gcm = "crypto/modes/gcm128.c";
    t.insert_after(
        gcm,
        "void gcm_ghash_rv64i_zvkg(u64 Xi[2], const u128 Htable[16],\n    const u8 *inp, size_t len);",
        &format!(
            "/* kgen's GHASH, constant time (crypto/modes/asm/ghash-kgen-*.pl). */\n#include \"crypto/riscv_kgen.h\"\n{}\n{}\n{}\n{}\n{counting}",
            vec.usable_define(),
            scalar.usable_define(),
            decls(vec, &entries)?,
            decls(scalar, &entries)?
        ),
    )?;
    let set = |u: &Use| -> String {
        let c: Vec<Callee> = entries.iter().map(|e| Callee::of(u, e).expect("checked above")).collect();
        format!("        ctx->ginit = {};\n        ctx->gmult = {};\n        ctx->ghash = {};\n", c[0].call(), c[1].call(), c[2].call())
    };
    t.replace(
        gcm,
        "        }\n    }\n    return;\n#elif defined(GHASH_ASM)",
        &format!(
            "        }}\n    }} else if ({}) {{\n{}    }} else if ({}) {{\n{}    }} else {{\n        KGEN_UPSTREAM(ghash);\n    }}\n    return;\n#elif defined(GHASH_ASM)",
            vec.usable(),
            set(vec),
            scalar.usable(),
            set(scalar)
        ),
    )?;
    let objs = add_to_build(t, base, "crypto/modes", "MODESASM", MODES_GENERATE, &[vec, scalar])?;
    let (o1, o2) = (&objs[0], &objs[1]);
    let body = format!(
        "GHASH from kgen, constant time: {v} (XTheadVector lanes beside the scalar core from 10 blocks on, scalar below) and {s} (scalar 32x32 pieces, th.mula, Karatsuba). The table is OpenSSL's u128 Htable[16].\n\n\
         - crypto/modes/asm/{st1}.pl, {st2}.pl: perlasm shims writing kgen's assembly ({o1}, {o2}).\n\
         - crypto/modes/gcm128.c: gcm_get_funcs() chooses, after upstream's Zvkg, Zvkb+Zvbc and Zbc code: {v}, else {s}, else upstream's 4-bit tables in C (not constant time).\n\
         - crypto/modes/build.info: both in $MODESASM_riscv64.\n\n\
         Run-time selection, once per key (CRYPTO_gcm128_init): {n1}; {n2}. On kgen's C906 model (`kgen bench ghash`) {v} takes {cv} cycles per byte at 16/64/256 bytes, {s} {cs}; kgen's README puts OpenSSL's 4-bit tables at about 33, so the order is by what the CPU has. In a counting build the upstream counter counts key set-ups, the kgen counters calls.\n\n{}",
        regenerate(base, n),
        cv = slashed(&modeled_cpb(vec, &[16, 64, 256])?),
        cs = slashed(&modeled_cpb(scalar, &[16, 64, 256])?),
        v = vec.variant.name,
        s = scalar.variant.name,
        st1 = vec.stem(),
        st2 = scalar.stem(),
        n1 = needs(vec),
        n2 = needs(scalar),
    );
    Ok(patch(t, "riscv64-GHASH-from-kgen", format!("riscv64: GHASH from kgen ({}, {})", vec.variant.name, scalar.variant.name), body, counters))
}

/// The stitched AES-GCM: a provider GCM implementation whose cipher update hands the whole
/// groups of each call to kgen's aes_gcm_encrypt/decrypt, the rest to
/// CRYPTO_gcm128_*_ctr32 with AES_ctr32_encrypt (ppc's cipher_aes_gcm_hw_ppc.inc is the
/// model). It reads the key schedule of `aes`'s AES_set_encrypt_key and the Htable of
/// `ghash`'s gcm_init.
fn aes_gcm(t: &mut Tree, base: &str, n: usize, u: &Use, group: usize, aes: &Use, ghash: &Use) -> Result<Patch, String> {
    let (encrypt, decrypt) = (u.entries[0], u.entries[1]);
    let entries = [encrypt, decrypt];
    if implemented(u, &entries).len() != 2 {
        return Err(format!("openssl-patches: aes-gcm {} lacks aes_gcm_encrypt or aes_gcm_decrypt", u.variant.name));
    }
    let callees: Vec<Callee> = entries.iter().map(|e| Callee::of(u, e)).collect::<Result<_, _>>()?;
    let (counting, counters) = counting_block("aes_gcm", u.kernel.name, &callees);
    let gh = Callee::of(ghash, ghash.entries[2])?;
    let is_fn = format!("ossl_kgen_gcm_ghash_is_{}", symbol_suffix(ghash.variant.name));
    // gcm128.c: whether a context's GHASH is ghash's (the function the stitched code's
    // Htable layout belongs to; in a counting build, its counting wrapper).
    let gcm = "crypto/modes/gcm128.c";
    t.replace(
        gcm,
        "#endif\n#endif\n\nstatic void gcm_get_funcs(struct gcm_funcs_st *ctx)",
        &format!(
            "{}\nint {is_fn}(const GCM128_CONTEXT *ctx)\n{{\n    return ctx->funcs.ghash == {};\n}}\n#endif\n#endif\n\nstatic void gcm_get_funcs(struct gcm_funcs_st *ctx)",
            comment("", &format!("For the stitched AES-GCM (providers/implementations/ciphers/cipher_aes_gcm_hw_rv64i.inc): whether ctx hashes with kgen's ghash {}, whose Htable kgen's aes-gcm {} reads.", ghash.variant.name, u.variant.name)),
            gh.call()
        ),
    )?;
    t.insert_after(
        "include/crypto/riscv_kgen.h",
        "#define KGEN_UPSTREAM(tag) ((void)0)\n#endif",
        &format!("\n{}\nstruct gcm128_context;\nint {is_fn}(const struct gcm128_context *ctx);", comment("", &format!("crypto/modes/gcm128.c: whether ctx hashes with kgen's ghash {} (for the stitched AES-GCM).", ghash.variant.name))),
    )?;
    let inc = "providers/implementations/ciphers/cipher_aes_gcm_hw_rv64i.inc";
    let (enc, dec) = (&callees[0], &callees[1]);
    let update = format!(
        r#"static int kgen_aes_gcm_cipher_update(PROV_GCM_CTX *ctx, const unsigned char *in,
                                      size_t len, unsigned char *out)
{{
    size_t bulk = 0, res = (16 - ctx->gcm.mres) % 16;

    if (ctx->ctr == NULL)
        return generic_aes_gcm_cipher_update(ctx, in, len, out);
    if (len >= res + {group} && ctx->ctr == (ctr128_f)AES_ctr32_encrypt
        && {is_fn}(&ctx->gcm)) {{
        if (ctx->enc ? CRYPTO_gcm128_encrypt(&ctx->gcm, in, out, res)
                     : CRYPTO_gcm128_decrypt(&ctx->gcm, in, out, res))
            return 0;
        if (ctx->enc)
            bulk = {e}(in + res, out + res, len - res, ctx->gcm.key,
                       ctx->gcm.Yi.c, ctx->gcm.Xi.u);
        else
            bulk = {d}(in + res, out + res, len - res, ctx->gcm.key,
                       ctx->gcm.Yi.c, ctx->gcm.Xi.u);
        ctx->gcm.len.u[1] += bulk;
        bulk += res;
    }}
    if (ctx->enc ? CRYPTO_gcm128_encrypt_ctr32(&ctx->gcm, in + bulk, out + bulk,
                                               len - bulk, ctx->ctr)
                 : CRYPTO_gcm128_decrypt_ctr32(&ctx->gcm, in + bulk, out + bulk,
                                               len - bulk, ctx->ctr))
        return 0;
    return 1;
}}

static const PROV_GCM_HW kgen_aes_gcm = {{
    aes_gcm_initkey,
    ossl_gcm_setiv,
    ossl_gcm_aad_update,
    kgen_aes_gcm_cipher_update,
    ossl_gcm_cipher_final,
    ossl_gcm_one_shot
}};"#,
        e = enc.call(),
        d = dec.call(),
    );
    t.insert_before(
        inc,
        "const PROV_GCM_HW *ossl_prov_aes_hw_gcm(size_t keybits) {",
        &format!(
            "{}\n#include \"crypto/riscv_kgen.h\"\n{}\n{}\n{}\n{counting}\n\n{update}\n",
            comment("", &format!("kgen's {} {} (AES-GCM in one function), for the whole {group}-byte pieces of each update; the key schedule is crypto/aes/aes_riscv.c's AES_set_encrypt_key (kgen's {} {} on this CPU), the Htable crypto/modes/gcm128.c's (kgen's ghash {}).", u.kernel.name, u.variant.name, aes.kernel.name, aes.variant.name, ghash.variant.name)),
            u.usable_define(),
            aes.usable_define(),
            decls(u, &entries)?,
        ),
    )?;
    t.replace(
        inc,
        "      return &rv64i_zknd_zkne_gcm;\n    }\n\n    return &aes_gcm;",
        &format!("      return &rv64i_zknd_zkne_gcm;\n    }}\n\n    if ({} && {})\n      return &kgen_aes_gcm;\n    KGEN_UPSTREAM(aes_gcm);\n    return &aes_gcm;", u.usable(), aes.usable()),
    )?;
    let obj_name = format!("{}.s", u.stem());
    let body = format!(
        "AES-GCM in one function from kgen's {k} ({v}): {summary}; OpenSSL's aes_gcm_encrypt/decrypt contract (Htable at Xi + 32, returns the bytes done, whole {group}-byte pieces, advances Yi's 32-bit counter).\n\n\
         - crypto/modes/asm/{stem}.pl: a perlasm shim that writes kgen's assembly (`kgen emit {k} --variant {v}`) as {obj}, in $MODESASM_riscv64.\n\
         - providers/implementations/ciphers/cipher_aes_gcm_hw_rv64i.inc: a PROV_GCM_HW whose cipher update gives the whole {group}-byte pieces of each call to kgen's code and the rest to CRYPTO_gcm128_encrypt_ctr32/decrypt_ctr32 with AES_ctr32_encrypt (ppc's cipher update is the model); ossl_prov_aes_hw_gcm returns it, after upstream's Zvkned and Zkn choices, when both {k} {v} and {ak} {a} can run ({k} {n1}; {ak} {n2}).\n\
         - crypto/modes/gcm128.c: {is_fn}() (declared in include/crypto/riscv_kgen.h), which tells the provider the context's GHASH is kgen's ghash {g} (the Htable kgen's AES-GCM reads).\n\n\
         Run-time selection, once per key: kgen's AES-GCM when the CPU has what {ak} {a} and {k} {v} need (patch 1) and gcm_get_funcs chose ghash {g}; else upstream's generic GCM, which with AES_CTR_ASM (the AES patch) uses AES_ctr32_encrypt. On kgen's C906 model (`kgen bench {k}`) {v} encrypts at {ce} and decrypts at {cd} cycles per byte at 1024/16384 bytes.\n\n{}",
        regenerate(base, n),
        v = u.variant.name,
        a = aes.variant.name,
        g = ghash.variant.name,
        k = u.kernel.name,
        ak = aes.kernel.name,
        summary = u.kernel.summary,
        n1 = needs(u),
        n2 = needs(aes),
        stem = u.stem(),
        obj = obj_name,
        ce = slashed(&modeled_cpb_fn(u, encrypt, &[1024, 16384])?),
        cd = slashed(&modeled_cpb_fn(u, decrypt, &[1024, 16384])?),
    );
    add_to_build(t, base, "crypto/modes", "MODESASM", MODES_GENERATE, &[u])?;
    Ok(patch(t, "riscv64-AES-GCM-from-kgen", format!("riscv64: AES-GCM from kgen ({} {})", u.kernel.name, u.variant.name), body, counters))
}

fn poly1305(t: &mut Tree, base: &str, n: usize, thead: &Use, other: &Use, compare: Option<&Use>) -> Result<Patch, String> {
    let entries = [thead.entries[0], thead.entries[1], thead.entries[2]];
    let callees: Vec<Callee> = [thead, other].iter().flat_map(|u| entries.iter().map(move |e| Callee::of(u, e))).collect::<Result<_, _>>()?;
    let (counting, counters) = counting_block("poly1305", thead.kernel.name, &callees);
    let branch = |c: &[Callee]| -> String {
        format!(
            "    if (!{})\n        return 0;\n    f[0] = (void *)(uintptr_t){};\n    f[1] = (void *)(uintptr_t){};\n    return 1;\n",
            c[0].call_with_args().replace("func)", "f)"),
            c[1].call(),
            c[2].call()
        )
    };
    let oc = &callees[3..];
    let src = format!(
        "{}\n\n#include <stddef.h>\n#include <stdint.h>\n#include \"crypto/riscv_kgen.h\"\n\n{}\n\n{}\n\n{}\n\n{}\n\n{counting}\n\n\
         int poly1305_init(void *ctx, const unsigned char key[16], void *func);\n\
         void poly1305_blocks(void *ctx, const unsigned char *inp, size_t len, unsigned int padbit);\n\
         void poly1305_emit(void *ctx, unsigned char mac[16], const unsigned int nonce[4]);\n\n\
         {}\nint poly1305_init(void *ctx, const unsigned char key[16], void *func)\n{{\n    void **f = func;\n\n    if ({}) {{\n{}    }}\n{}}}\n\n\
         {}\nvoid poly1305_blocks(void *ctx, const unsigned char *inp, size_t len, unsigned int padbit)\n{{\n    {}(ctx, inp, len, padbit);\n}}\n\n\
         void poly1305_emit(void *ctx, unsigned char mac[16], const unsigned int nonce[4])\n{{\n    {}(ctx, mac, nonce);\n}}\n",
        file_comment(
            base,
            &format!(
                "Poly1305 on riscv64 from kgen, both paths base 2^32 and constant time (every multiply has factors below 2^32, so the C906's multiplier takes the same time whatever the data): {} where the T-Head extensions it uses are present, else {}. The state in ctx (POLY1305's opaque[]) is the same for both.",
                thead.variant.name, other.variant.name
            )
        ),
        thead.usable_define(),
        other.usable_define(),
        decls(thead, &entries)?,
        decls(other, &entries)?,
        comment("", "poly1305.c under POLY1305_ASM: poly1305_init() sets up ctx and fills func[] with the blocks and emit functions to use (returns 1), or returns 0 and then poly1305_blocks() and poly1305_emit() are used."),
        thead.usable(),
        branch(&callees[..3]).lines().map(|l| format!("    {l}\n")).collect::<String>(),
        branch(oc),
        comment("", &format!("Named by poly1305.c (used only if poly1305_init() returned 0): {}.", other.variant.name)),
        oc[1].call(),
        oc[2].call(),
    );
    t.create("crypto/poly1305/poly1305_riscv.c", &src)?;
    let bi = "crypto/poly1305/build.info";
    let (o1, g1) = add_shim(t, base, "crypto/poly1305", thead)?;
    let (o2, g2) = add_shim(t, base, "crypto/poly1305", other)?;
    t.insert_after(bi, "  $POLY1305ASM_c64xplus=poly1305-c64xplus.s", &format!("\n  $POLY1305ASM_riscv64=poly1305_riscv.c {o1} {o2}"))?;
    t.insert_after(bi, "GENERATE[poly1305-s390x.S]=asm/poly1305-s390x.pl", &format!("{g1}\n{g2}"))?;
    let body = format!(
        "Poly1305 from kgen, base 2^32 and constant time on every path: {a} (th.mula, th.addsl) and {b} (plain RV64GC). OpenSSL has no riscv64 Poly1305 assembly; with this patch $POLY1305ASM_riscv64 is set, so POLY1305_ASM is defined for libcrypto and poly1305.c calls poly1305_init/blocks/emit.\n\n\
         - crypto/poly1305/asm/{st1}.pl, {st2}.pl: perlasm shims writing kgen's assembly ({o1}, {o2}).\n\
         - crypto/poly1305/poly1305_riscv.c: poly1305_init() chooses the variant and fills the function table (the CRYPTOGAMS convention of poly1305.c); poly1305_blocks() and poly1305_emit() exist for poly1305.c's fallback.\n\
         - crypto/poly1305/build.info: $POLY1305ASM_riscv64 and the GENERATE lines.\n\n\
         Run-time selection, once per key (Poly1305_Init): {n1}; otherwise {b}. Under POLY1305_ASM the upstream C code is compiled out (poly1305.c defines it only without POLY1305_ASM), so the other path is {b}, constant time; on kgen's C906 model (`kgen bench poly1305`, 1 KiB) it takes {x:.2} cycles per byte, kgen's base 2^64 64-rv64gc (the kind of code upstream's C is) {y:.2}.\n\n{}",
        regenerate(base, n),
        x = modeled_cpb(other, &[1024])?[0],
        y = compare.map(|c| modeled_cpb(c, &[1024]).map(|v| v[0])).transpose()?.unwrap_or(f64::NAN),
        a = thead.variant.name,
        b = other.variant.name,
        st1 = thead.stem(),
        st2 = other.stem(),
        n1 = needs(thead),
    );
    Ok(patch(t, "riscv64-Poly1305-from-kgen", format!("riscv64: Poly1305 from kgen ({}, {})", thead.variant.name, other.variant.name), body, counters))
}

/// The stitched ChaCha20-Poly1305: the provider's AEAD update (and its TLS record path)
/// hands the whole 64-byte blocks of each call to kgen's seal/open when the ChaCha20
/// keystream and the Poly1305 buffer are at block boundaries; ChaCha20 and Poly1305 do the
/// rest as before. The Poly1305 state is the POLY1305 context's opaque[], which the
/// Poly1305 patch's poly1305_init set up (both of its variants keep the layout the kernel
/// reads).
fn chacha20_poly1305(t: &mut Tree, base: &str, n: usize, u: &Use) -> Result<Patch, String> {
    let (seal, open) = (u.entries[0], u.entries[1]);
    let entries = [seal, open];
    if implemented(u, &entries).len() != 2 {
        return Err(format!("openssl-patches: chacha20-poly1305 {} lacks seal or open", u.variant.name));
    }
    let callees: Vec<Callee> = entries.iter().map(|e| Callee::of(u, e)).collect::<Result<_, _>>()?;
    let (counting, counters) = counting_block("chapoly", u.kernel.name, &callees);
    let hw = "providers/implementations/ciphers/cipher_chacha20_poly1305_hw.c";
    let bulk = format!(
        r#"/*
 * The whole 64-byte blocks at the start of out/in, sealed (enc) or opened by kgen's
 * chacha20-poly1305 {v}, when the keystream and the Poly1305 buffer are at block
 * boundaries; the block counter advances as chacha20_cipher() advances it (the kernel's
 * 32-bit counter must not wrap inside a call). Returns the bytes done (0: none).
 */
static size_t kgen_chacha20_poly1305_bulk(PROV_CHACHA20_POLY1305_CTX *ctx,
                                          unsigned char *out,
                                          const unsigned char *in, size_t len,
                                          int enc)
{{
    PROV_CHACHA20_CTX *c = &ctx->chacha;
    size_t blocks = len / CHACHA_BLK_SIZE;
    unsigned int left;

    if (!{usable}) {{
        KGEN_UPSTREAM(chapoly);
        return 0;
    }}
    if (c->partial_len == CHACHA_BLK_SIZE) {{
        /* A keystream block used up: what chacha20_cipher() does next. */
        c->partial_len = 0;
        if (++c->counter[0] == 0)
            c->counter[1]++;
    }}
    if (c->partial_len != 0 || ctx->poly1305.num != 0)
        return 0;
    left = 0U - c->counter[0]; /* blocks before the 32-bit counter wraps; 0: 2^32 */
    if (blocks > (1U << 28))
        blocks = 1U << 28;
    if (left != 0 && blocks > left)
        blocks = left;
    if (blocks == 0)
        return 0;
    len = blocks * CHACHA_BLK_SIZE;
    if (enc)
        {seal}(out, in, len, c->key.d, c->counter, ctx->poly1305.opaque);
    else
        {open}(out, in, len, c->key.d, c->counter, ctx->poly1305.opaque);
    c->counter[0] += (unsigned int)blocks;
    if (c->counter[0] == 0)
        c->counter[1]++;
    return len;
}}"#,
        v = u.variant.name,
        usable = u.usable(),
        seal = callees[0].call(),
        open = callees[1].call(),
    );
    t.insert_after(
        hw,
        "#include \"cipher_chacha20_poly1305.h\"",
        &format!(
            "\n\n#if defined(OPENSSL_CPUID_OBJ) && defined(__riscv) && __riscv_xlen == 64\n{}\n# include \"crypto/riscv_kgen.h\"\n{}\n{}\n{counting}\n\n{bulk}\n#else\n# define kgen_chacha20_poly1305_bulk(ctx, out, in, len, enc) ((size_t)0)\n#endif",
            comment("", &format!("kgen's stitched ChaCha20-Poly1305 ({}): ChaCha20 in XTheadVector lanes merged with the scalar base-2^32 Poly1305 of the ciphertext, for the whole blocks of each call.", u.variant.name)),
            u.usable_define(),
            decls(u, &entries)?,
        ),
    )?;
    // The AEAD update: the stitched whole blocks first, the rest as before.
    t.replace(
        hw,
        "            if (bctx->enc) { /* plaintext */\n                ctx->chacha.base.hw->cipher(&ctx->chacha.base, out, in, plen);\n                Poly1305_Update(poly, out, plen);",
        "            if (bctx->enc) { /* plaintext */\n                size_t done = kgen_chacha20_poly1305_bulk(ctx, out, in, plen, 1);\n\n                ctx->chacha.base.hw->cipher(&ctx->chacha.base, out + done, in + done,\n                    plen - done);\n                Poly1305_Update(poly, out + done, plen - done);",
    )?;
    t.replace(
        hw,
        "            } else { /* ciphertext */\n                Poly1305_Update(poly, in, plen);\n                ctx->chacha.base.hw->cipher(&ctx->chacha.base, out, in, plen);",
        "            } else { /* ciphertext */\n                size_t done = kgen_chacha20_poly1305_bulk(ctx, out, in, plen, 0);\n\n                Poly1305_Update(poly, in + done, plen - done);\n                ctx->chacha.base.hw->cipher(&ctx->chacha.base, out + done, in + done,\n                    plen - done);",
    )?;
    // The TLS record path (records longer than one block).
    t.replace(
        hw,
        "        if (bctx->enc) {\n            ChaCha20_ctr32(out, in, plen, ctx->chacha.key.d, ctx->chacha.counter);\n            Poly1305_Update(poly, out, plen);\n        } else {\n            Poly1305_Update(poly, in, plen);\n            ChaCha20_ctr32(out, in, plen, ctx->chacha.key.d, ctx->chacha.counter);\n        }",
        "        {\n            size_t done = kgen_chacha20_poly1305_bulk(ctx, out, in, plen, bctx->enc);\n\n            if (bctx->enc) {\n                ChaCha20_ctr32(out + done, in + done, plen - done, ctx->chacha.key.d,\n                    ctx->chacha.counter);\n                Poly1305_Update(poly, out + done, plen - done);\n            } else {\n                Poly1305_Update(poly, in + done, plen - done);\n                ChaCha20_ctr32(out + done, in + done, plen - done, ctx->chacha.key.d,\n                    ctx->chacha.counter);\n            }\n        }",
    )?;
    let obj = add_to_build(t, base, "crypto/chacha", "CHACHAASM", CHACHA_GENERATE, &[u])?.remove(0);
    let body = format!(
        "The stitched ChaCha20-Poly1305 from kgen ({v}): ChaCha20 in four XTheadVector lanes merged, by modeled issue time, with the scalar base-2^32 Poly1305 (constant time) of the ciphertext, one pass over the data.\n\n\
         - crypto/chacha/asm/{stem}.pl: a perlasm shim that writes kgen's assembly ({obj}), in $CHACHAASM_riscv64.\n\
         - providers/implementations/ciphers/cipher_chacha20_poly1305_hw.c: the AEAD update and the TLS record path give the whole 64-byte blocks of each call to chacha20_poly1305_seal/open_{sfx} when ChaCha20 has no partial keystream block and Poly1305 no buffered bytes (the AAD is padded before the text, so every call whose text so far is whole blocks, the first included); the counter advances as chacha20_cipher() advances it, never across the 32-bit wrap in one call; ChaCha20 and Poly1305 do the rest, as before. The Poly1305 state is POLY1305's opaque[], which the Poly1305 patch's poly1305_init set up (both its variants keep the layout the kernel reads).\n\n\
         Run-time selection, per call: {need}; otherwise the provider's code unchanged. On kgen's C906 model (`kgen bench chacha20-poly1305`) seal runs at {cs} cycles per byte at 1024/16384 bytes.\n\n{}",
        regenerate(base, n),
        v = u.variant.name,
        sfx = symbol_suffix(u.variant.name),
        stem = u.stem(),
        need = needs(u),
        cs = slashed(&modeled_cpb_fn(u, seal, &[1024, 16384])?),
    );
    Ok(patch(t, "riscv64-stitched-ChaCha20-Poly1305-from-kgen", format!("riscv64: stitched ChaCha20-Poly1305 from kgen ({})", u.variant.name), body, counters))
}

fn sha2(t: &mut Tree, base: &str, n: usize, u: &Use, bits: u32) -> Result<Patch, String> {
    let e = u.entries[0];
    let c = Callee::of(u, e)?;
    let tag = format!("sha{bits}");
    let (counting, counters) = counting_block(&tag, u.kernel.name, &[Callee::of(u, e)?]);
    let f = "crypto/sha/sha_riscv.c";
    let text = t.read(f)?.to_string();
    // The block function's prototype (its context's type differs between releases), then
    // its definition: the first branch is upstream's vector-crypto code; kgen's goes next,
    // before upstream's scalar code (OpenSSL's C, or from 3.6 its own rv64 and Zbb
    // assembly), each of whose calls counts as upstream's.
    let head = format!("void sha{bits}_block_data_order(");
    let proto = text.lines().find(|l| l.starts_with(&head) && l.ends_with(");")).ok_or_else(|| format!("openssl-patches: {f} declares no {head}...);"))?.to_string();
    t.insert_after(f, &proto, &format!("\n#include \"crypto/riscv_kgen.h\"\n\n{}\n\n{}\n\n{counting}", u.usable_define(), decls(u, &[e])?))?;
    let def = proto.trim_end_matches(';');
    let body = text.split(&format!("\n{def}\n{{\n")).nth(1).and_then(|b| b.split("\n}\n").next()).ok_or_else(|| format!("openssl-patches: {f} does not define {def}"))?;
    let first_else = body.find("\n    } else").ok_or_else(|| format!("openssl-patches: {def} in {f} has no else branch"))?;
    let (vector, scalar) = body.split_at(first_else);
    let call = format!("        sha{bits}_block_data_order_");
    let upstream: Vec<&str> = scalar.lines().filter(|l| l.starts_with(&call)).collect();
    if upstream.is_empty() {
        return Err(format!("openssl-patches: {def} in {f} calls no scalar sha{bits}_block_data_order_*"));
    }
    let mut counted = scalar.to_string();
    for l in &upstream {
        counted = counted.replacen(&format!("\n{l}\n"), &format!("\n        KGEN_UPSTREAM({tag});\n{l}\n"), 1);
    }
    let kgen = format!("\n    }} else if ({}) {{\n        {};", u.usable(), c.call_with_args());
    t.replace(f, body, &format!("{vector}{kgen}{counted}"))?;
    let scalar_names: Vec<String> = upstream.iter().map(|l| l.trim().split('(').next().unwrap_or("").to_string()).collect();
    let o = add_to_build(t, base, "crypto/sha", "SHA1ASM", "GENERATE[sha512-riscv64-zvkb-zvknhb.S]=asm/sha512-riscv64-zvkb-zvknhb.pl", &[u])?.remove(0);
    let before = if scalar_names.iter().all(|s| s.ends_with("_c")) {
        "upstream's C".to_string()
    } else {
        format!("upstream's scalar code ({})", scalar_names.join(", "))
    };
    let body = format!(
        "SHA-{bits} block function from kgen ({v}: th.srri{w} rotations, loads at any alignment, constant time).\n\n\
         - crypto/sha/asm/{st}.pl: a perlasm shim writing kgen's assembly ({o}).\n\
         - crypto/sha/sha_riscv.c: sha{bits}_block_data_order() chooses, after upstream's vector-crypto code: {v}, else {before} as before.\n\
         - crypto/sha/build.info: the file in $SHA1ASM_riscv64.\n\n\
         Run-time selection, per call: {needs} (patch 1 or OPENSSL_riscvcap); otherwise upstream's code as before. kgen's code comes before {before} because it is faster than it on the C906 (kgen's docs/performance.md gives both, on kgen's C906 model and on the C906 RTL).\n\n{}",
        regenerate(base, n),
        v = u.variant.name,
        w = if bits == 256 { "w" } else { "" },
        st = u.stem(),
        needs = needs(u),
    );
    Ok(patch(t, &format!("riscv64-SHA-{bits}-from-kgen"), format!("riscv64: SHA-{bits} from kgen ({})", u.variant.name), body, counters))
}
