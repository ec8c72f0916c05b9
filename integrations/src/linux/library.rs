//! The Linux 7.x layout: one header per slot under `lib/crypto/riscv/kgen/`, included by
//! the library's riscv header (`lib/crypto/riscv/chacha.h`, ...), whose fallback to the
//! generic C becomes kgen's code; for Poly1305 it takes the place of the CRYPTOGAMS code.
//! Everything is static, compiled into the library module as upstream's arch code is.

use super::{banner, dispatch, kconfig_symbol, type_defs, Base, Filled, Layout};
use kgen_dsl::kernel::hooks::LinuxSlot;

/// What the slot's header gives the library.
pub(super) fn doc(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "the ChaCha library's chacha_crypt_arch() where upstream's Zvkb code does not run",
        LinuxSlot::Poly1305 { .. } => "the Poly1305 library's block functions, in place of the CRYPTOGAMS code",
        LinuxSlot::Ghash { .. } => "the GHASH library's ghash_blocks_arch() where upstream's Zvkg code does not run (GCM takes it)",
        LinuxSlot::Sha2 { bits: 256 } => "the SHA-224/256 library's sha256_blocks() where upstream's Zvknh code does not run",
        LinuxSlot::Sha2 { .. } => "the SHA-384/512 library's sha512_blocks() where upstream's Zvknhb code does not run",
        LinuxSlot::Aes => "the AES library's key preparation and block functions, and its ECB and CTR hooks, where upstream's Zvkned code does not run (CBC, CCM, GCM and the MACs take them)",
    }
}

/// The library's name in a patch subject.
pub(super) fn doc_name(slot: LinuxSlot) -> &'static str {
    match slot {
        LinuxSlot::ChaCha20 => "ChaCha",
        LinuxSlot::Poly1305 { .. } => "Poly1305",
        LinuxSlot::Ghash { .. } => "GHASH",
        LinuxSlot::Sha2 { bits: 256 } => "SHA-224/256",
        LinuxSlot::Sha2 { .. } => "SHA-384/512",
        LinuxSlot::Aes => "AES",
    }
}

/// The header of a slot: with the slot's option on, the dispatchers and what the library's
/// riscv header calls; with it off, the same names as the generic code's.
pub(super) fn header(base: &Base, f: &Filled) -> Result<String, String> {
    let alg = super::alg_name(f.hook.slot);
    let sym = kconfig_symbol(f.hook.slot);
    let guard = format!("_LIB_CRYPTO_RISCV_KGEN_{}_H", alg.to_uppercase());
    let what = format!("{alg} on kgen's {} kernel ({}): {}.", f.kernel.name, f.vars.iter().map(|v| v.name).collect::<Vec<_>>().join(", "), doc(f.hook.slot));
    let (bridge, off) = match f.hook.slot {
        LinuxSlot::ChaCha20 => (CHACHA.replace("@CRYPT_BODY@", &super::chacha_crypt_body("state->x")), "#define kgen_chacha_crypt chacha_crypt_generic\n#define kgen_chacha20_choose() do { } while (0)\n"),
        LinuxSlot::Poly1305 { state_bytes } => (POLY1305.replace("@STATE_BYTES@", &state_bytes.to_string()), ""),
        LinuxSlot::Ghash { table_bytes } => (
            GHASH.replace("@TABLE_BYTES@", &table_bytes.to_string()),
            "static inline void kgen_ghash_preparekey(struct ghash_key *key, const u8 *raw_key) { }\n#define kgen_ghash_blocks(acc, key, data, nblocks) ghash_blocks_generic(acc, &(key)->h, data, nblocks)\n#define kgen_ghash_choose() do { } while (0)\n",
        ),
        LinuxSlot::Sha2 { bits: 256 } => (String::new(), "#define kgen_sha256_blocks sha256_blocks_generic\n#define kgen_sha256_choose() do { } while (0)\n"),
        LinuxSlot::Sha2 { .. } => (String::new(), "#define kgen_sha512_blocks sha512_blocks_generic\n#define kgen_sha512_choose() do { } while (0)\n"),
        LinuxSlot::Aes => (
            AES.replace("@AES_BLOCKS@", super::AES_BLOCKS),
            "#define kgen_aes_preparekey(k, inv_k, in_key, key_len) \\\n\taes_expandkey_generic((k)->rndkeys, (inv_k) ? (inv_k)->inv_rndkeys : NULL, in_key, key_len)\n#define kgen_aes_ct_encrypt aes_encrypt_generic\n#define kgen_aes_ct_decrypt aes_decrypt_generic\n#define kgen_aes_choose() do { } while (0)\n",
        ),
    };
    let mut s = format!("/* SPDX-License-Identifier: GPL-2.0-only OR MIT */\n{}\n#ifndef {guard}\n#define {guard}\n\n#ifdef CONFIG_{sym}\n\n#include \"kgen.h\"\n\n", banner(base.name, &what));
    s.push_str(&type_defs(base, f));
    s.push_str(&dispatch(f, Layout::Library));
    s.push('\n');
    s.push_str(&bridge);
    if off.is_empty() {
        s.push_str("\n#endif /* CONFIG_");
        s.push_str(sym);
        s.push_str(" */\n");
    } else {
        s.push_str("\n#else /* !CONFIG_");
        s.push_str(sym);
        s.push_str(": the generic code */\n\n");
        s.push_str(off);
        s.push_str("\n#endif\n");
    }
    let _ = std::fmt::Write::write_fmt(&mut s, format_args!("#endif /* {guard} */\n"));
    Ok(s)
}

const CHACHA: &str = r#"/*
 * Whole blocks straight from the caller's buffers, in pieces of 4 KiB (vector code runs
 * with preemption off); the last partial block through a block on the stack, wiped after.
 */
static void kgen_chacha_crypt(struct chacha_state *state, u8 *dst, const u8 *src, unsigned int bytes, int nrounds)
@CRYPT_BODY@"#;

const POLY1305: &str = r#"/* kgen's state is the block state: at most @STATE_BYTES@ bytes from h, 8-byte aligned. */
static_assert(sizeof(struct poly1305_block_state) >= @STATE_BYTES@);
static_assert(offsetof(struct poly1305_block_state, h) == 0);

static void poly1305_block_init(struct poly1305_block_state *state, const u8 raw_key[POLY1305_BLOCK_SIZE])
{
	kgen_poly1305_block_init(state, raw_key);
}

static void poly1305_blocks(struct poly1305_block_state *state, const u8 *src, u32 len, u32 hibit)
{
	kgen_poly1305_blocks(state, src, len, hibit);
}

static void poly1305_emit(const struct poly1305_state *state, u8 digest[POLY1305_DIGEST_SIZE], const u32 nonce[4])
{
	kgen_poly1305_emit(state, digest, nonce);
}

#define poly1305_mod_init_arch poly1305_mod_init_arch
static void poly1305_mod_init_arch(void)
{
	kgen_poly1305_choose();
}
"#;

const GHASH: &str = r#"static_assert(sizeof(((struct ghash_key *)0)->kgen_table) == @TABLE_BYTES@);

/* kgen's key table, beside upstream's forms of the key (the bytes a variant's table does
 * not use are zero, so equal keys are equal structures). */
static void kgen_ghash_preparekey(struct ghash_key *key, const u8 raw_key[GHASH_BLOCK_SIZE])
{
	memset(key->kgen_table, 0, sizeof(key->kgen_table));
	kgen_ghash_init(key->kgen_table, raw_key);
}

/* The accumulator is kept in POLYVAL's form; kgen's code takes GHASH's byte string. */
static void kgen_ghash_blocks(struct polyval_elem *acc, const struct ghash_key *key, const u8 *data, size_t nblocks)
{
	u8 g[GHASH_BLOCK_SIZE] __aligned(8);

	polyval_acc_to_ghash(acc, g);
	kgen_ghash(g, key->kgen_table, data, nblocks);
	ghash_acc_to_polyval(g, acc);
	memzero_explicit(g, sizeof(g));
}
"#;

const AES: &str = r#"/*
 * lib/crypto's keys as aes_expandkey_generic() makes them (the standard round keys, and
 * the equivalent inverse cipher's where inv_k is given), by kgen's key expansion into a
 * struct crypto_aes_ctx on the stack, wiped after.
 */
static void kgen_aes_preparekey(union aes_enckey_arch *k, union aes_invkey_arch *inv_k, const u8 *in_key, int key_len)
{
	struct crypto_aes_ctx ctx;

	static_assert(sizeof(k->rndkeys) == sizeof(ctx.key_enc));
	static_assert(sizeof(inv_k->inv_rndkeys) == sizeof(ctx.key_dec));
	WARN_ON_ONCE(kgen_aes_ct_expandkey(&ctx, in_key, key_len));
	memcpy(k->rndkeys, ctx.key_enc, sizeof(k->rndkeys));
	if (inv_k)
		memcpy(inv_k->inv_rndkeys, ctx.key_dec, sizeof(inv_k->inv_rndkeys));
	memzero_explicit(&ctx, sizeof(ctx));
}

@AES_BLOCKS@
/* The library's ECB and CTR hooks (for whole blocks, and any length): kgen's, unless
 * upstream's Zvkned code runs the block function. */
#define aes_ecb_encrypt_arch aes_ecb_encrypt_arch
static bool __maybe_unused aes_ecb_encrypt_arch(u8 *dst, const u8 *src, size_t len, const struct aes_enckey *key)
{
	if (static_branch_likely(&have_zvkned))
		return false;
	kgen_aes_ecb_blocks(key->k.rndkeys, key->nrounds, dst, src, len / AES_BLOCK_SIZE, true);
	return true;
}

#define aes_ecb_decrypt_arch aes_ecb_decrypt_arch
static bool __maybe_unused aes_ecb_decrypt_arch(u8 *dst, const u8 *src, size_t len, const struct aes_key *key)
{
	if (static_branch_likely(&have_zvkned))
		return false;
	kgen_aes_ecb_blocks(key->inv_k.inv_rndkeys, key->nrounds, dst, src, len / AES_BLOCK_SIZE, false);
	return true;
}

#define aes_ctr_arch aes_ctr_arch
static bool __maybe_unused aes_ctr_arch(u8 *dst, const u8 *src, size_t len, u8 ctr[AES_BLOCK_SIZE], const struct aes_enckey *key)
{
	if (static_branch_likely(&have_zvkned))
		return false;
	kgen_aes_ctr_bytes(key->k.rndkeys, key->nrounds, dst, src, len, ctr);
	return true;
}
"#;
