//! The Linux 6.12 layout: one glue file per slot under `arch/riscv/crypto/kgen/`, filling
//! the library's arch hooks where 6.12 has them (ChaCha, Poly1305) and registering crypto
//! API algorithms (skciphers, shashes, the AES cipher).

use super::{alg_name, banner, dispatch, dispatcher, type_defs, Base, Filled};
use kgen_dsl::entry::Entry;
use kgen_dsl::kernel::hooks::LinuxSlot;

/// The glue file of a slot.
pub(super) fn glue(base: &Base, f: &Filled) -> Result<String, String> {
    let alg = alg_name(f.hook.slot);
    let what = format!("{alg} on kgen's {} kernel ({}): {}.", f.kernel.name, f.vars.iter().map(|v| v.name).collect::<Vec<_>>().join(", "), glue_doc(f.hook.slot));
    let mut s = format!("// SPDX-License-Identifier: GPL-2.0-only OR MIT\n{}\n", banner(base.name, &what));
    s.push_str(includes(f.hook.slot));
    s.push_str("#include \"kgen.h\"\n\n");
    s.push_str(&type_defs(base, f));
    s.push_str(&dispatch(f, super::Layout::Drivers));
    s.push('\n');
    let body = match f.hook.slot {
        LinuxSlot::ChaCha20 => CHACHA_GLUE.replace("@CRYPT_BODY@", &super::chacha_crypt_body("state")),
        LinuxSlot::Poly1305 { state_bytes } => POLY1305_GLUE.replace("@STATE_BYTES@", &state_bytes.to_string()),
        LinuxSlot::Ghash { table_bytes } => GHASH_GLUE.replace("@TABLE_BYTES@", &table_bytes.to_string()),
        LinuxSlot::Sha2 { bits } => sha2_glue(bits, f.hook.entries[0]),
        LinuxSlot::Aes => AES_GLUE.replace("@AES_BLOCKS@", super::AES_BLOCKS),
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

pub(super) fn glue_doc(slot: LinuxSlot) -> &'static str {
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
@CRYPT_BODY@EXPORT_SYMBOL(chacha_crypt_arch);

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

const AES_GLUE: &str = r#"/* The round count of a context's key (lib/crypto's generic AES: 6 + key_length / 4). */
static inline int kgen_aes_nrounds(const struct crypto_aes_ctx *ctx)
{
	return 6 + ctx->key_length / 4;
}

static int kgen_aes_cipher_setkey(struct crypto_tfm *tfm, const u8 *key, unsigned int len)
{
	return kgen_aes_ct_expandkey(crypto_tfm_ctx(tfm), key, len);
}

static void kgen_aes_cipher_encrypt(struct crypto_tfm *tfm, u8 *dst, const u8 *src)
{
	const struct crypto_aes_ctx *ctx = crypto_tfm_ctx(tfm);

	kgen_aes_ct_encrypt(ctx->key_enc, kgen_aes_nrounds(ctx), dst, src);
}

static void kgen_aes_cipher_decrypt(struct crypto_tfm *tfm, u8 *dst, const u8 *src)
{
	const struct crypto_aes_ctx *ctx = crypto_tfm_ctx(tfm);

	kgen_aes_ct_decrypt(ctx->key_dec, kgen_aes_nrounds(ctx), dst, src);
}

static int kgen_aes_skcipher_setkey(struct crypto_skcipher *tfm, const u8 *key, unsigned int len)
{
	return kgen_aes_ct_expandkey(crypto_skcipher_ctx(tfm), key, len);
}

@AES_BLOCKS@
static int kgen_aes_ecb(struct skcipher_request *req, bool enc)
{
	const struct crypto_aes_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct skcipher_walk walk;
	unsigned int nbytes;
	int err;

	err = skcipher_walk_virt(&walk, req, false);
	while ((nbytes = walk.nbytes) != 0) {
		kgen_aes_ecb_blocks(enc ? ctx->key_enc : ctx->key_dec, kgen_aes_nrounds(ctx), walk.dst.virt.addr, walk.src.virt.addr, nbytes / AES_BLOCK_SIZE, enc);
		err = skcipher_walk_done(&walk, nbytes % AES_BLOCK_SIZE);
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

static int kgen_aes_ctr(struct skcipher_request *req)
{
	const struct crypto_aes_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct skcipher_walk walk;
	unsigned int nbytes;
	int err;

	err = skcipher_walk_virt(&walk, req, false);
	while ((nbytes = walk.nbytes) != 0) {
		unsigned int tail = nbytes % AES_BLOCK_SIZE;

		if (nbytes == walk.total) {
			kgen_aes_ctr_bytes(ctx->key_enc, kgen_aes_nrounds(ctx), walk.dst.virt.addr, walk.src.virt.addr, nbytes, walk.iv);
			tail = 0;
		} else {
			kgen_aes_ctr_blocks(ctx->key_enc, kgen_aes_nrounds(ctx), walk.dst.virt.addr, walk.src.virt.addr, nbytes / AES_BLOCK_SIZE, walk.iv);
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

