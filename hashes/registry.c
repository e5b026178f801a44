// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The registry of page checksums: one row per checksum, in listing order.
 * Each function returns what the kernel (or the named library) would store
 * for one 4096-byte page, widened to u64.
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <glib.h>
#include <zlib.h>
#include <xxhash.h>
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"
#include "util/nearest.h"

/* What KSM stores since 4.20 on 64-bit: XXH64 seed 0, low 32 bits. */
static uint64_t page_xxhash(const void *page)
{
	return (uint32_t)XXH64(page, HASH_PAGE_SIZE, 0);
}

static uint64_t page_crc32c(const void *page)
{
	return crc32c(0, page, HASH_PAGE_SIZE);
}

static uint64_t page_crc32(const void *page)
{
	return crc32(0, page, HASH_PAGE_SIZE);
}

static uint64_t page_xxh32(const void *page)
{
	return XXH32(page, HASH_PAGE_SIZE, 0);
}

static uint64_t page_xxh64(const void *page)
{
	return XXH64(page, HASH_PAGE_SIZE, 0);
}

/* First 8 bytes of the digest, read big-endian (as the digest prints). */
static uint64_t page_digest(GChecksumType type, const void *page)
{
	GChecksum *ck = g_checksum_new(type);
	guint8 digest[32];
	gsize len = sizeof(digest);
	uint64_t v = 0;

	g_checksum_update(ck, page, HASH_PAGE_SIZE);
	g_checksum_get_digest(ck, digest, &len);
	g_checksum_free(ck);
	for (int i = 0; i < 8; i++)
		v = (v << 8) | digest[i];
	return v;
}

static uint64_t page_sha1(const void *page)
{
	return page_digest(G_CHECKSUM_SHA1, page);
}

static uint64_t page_sha256(const void *page)
{
	return page_digest(G_CHECKSUM_SHA256, page);
}

/* siphash's price: jhash2's 5,499.6 ns x 0.975, the hot ratio of siphash to jhash2-kernel (fixed-seed/price.csv). */
#define SIPHASH_COLD_NS 5364.6

static const struct page_hash hashes[] = {
	{ "xxhash", 32, page_xxhash, 1684.361, NULL,
	  "KSM since 4.20: XXH64(page, 4096, 0), low 32 bits (libxxhash)" },
	{ "jhash2", 32, page_jhash2, 5499.600, NULL,
	  "KSM until 4.20: jhash2(page as 1024 u32, 1024, 17)" },
	{ "crc32c", 32, page_crc32c, 2185.784, crc32c_impl,
	  "CRC-32C Castagnoli, init ~0, final ~0 (crc32c(0, page, 4096))" },
	{ "crc32", 32, page_crc32, 3293.444, NULL,
	  "zlib crc32(0, page, 4096), IEEE 802.3" },
	{ "xxh32", 32, page_xxh32, 2093.689, NULL,
	  "XXH32(page, 4096, 0) (libxxhash)" },
	{ "xxh64", 64, page_xxh64, 1684.361, NULL,
	  "XXH64(page, 4096, 0), all 64 bits (libxxhash)" },
	{ "xxh3", 64, page_xxh3, 1152.705, page_xxh3_impl,
	  "XXH3_64bits(page, 4096): our AVX-512/AVX2 page kernel, else inlined" },
	/*
	 * The keyed rows (siphash.c): their key is hash_key()'s, which no
	 * trace holds. xxhash-seeded costs what xxhash does (the seed is one
	 * more add at the start); siphash is priced as jhash2 is, since both
	 * are scalar and compute-bound (the kernel's lib/siphash.c is scalar
	 * C like this one): jhash2's price x their least hot ns a page over
	 * two `bench costs` runs (analysis/fixed_seed_remedy.sh --price,
	 * analysis/results/fixed-seed/price.csv).
	 */
	{ "xxhash-seeded", 32, page_xxhash_seeded, 1684.361, NULL,
	  "XXH64(page, 4096, key) low 32 bits: key KSMSIM_HASH_KEY (default 1), in no trace" },
	{ "siphash", 32, page_siphash, SIPHASH_COLD_NS, NULL,
	  "SipHash-2-4(page, 4096, 128-bit key) low 32 bits: key KSMSIM_HASH_KEY (default 1), in no trace" },
	{ "sha1", 64, page_sha1, 23524.601, NULL,
	  "SHA-1 (GLib), first 8 digest bytes as a big-endian u64" },
	{ "sha256", 64, page_sha256, 47049.202, NULL,
	  "SHA-256 (GLib), first 8 digest bytes as a big-endian u64" },
	{ "none", 0, NULL, 0, NULL,
	  "no checksum gate: every page goes straight to the trees" },
};

const struct page_hash *hash_lookup(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < G_N_ELEMENTS(hashes); i++)
		if (g_ascii_strcasecmp(hashes[i].name, name) == 0)
			return &hashes[i];
	return NULL;
}

const char *hash_nearest(const char *name)
{
	ptrdiff_t i = name_nearest(name, hashes, G_N_ELEMENTS(hashes), sizeof(hashes[0]),
				   offsetof(struct page_hash, name));
	return i < 0 ? NULL : hashes[i].name;
}

const struct page_hash *hash_resolve(const char *name, bool allow_none, GError **error)
{
	const struct page_hash *h = hash_lookup(name);
	const char *near = h ? NULL : hash_nearest(name);

	if (h && (h->fn || allow_none))
		return h;
	if (h)
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "'%s' computes no"
			    " checksum; name one ('ksmsim hashes' lists them)", name);
	else if (near)
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "unknown checksum"
			    " '%s'; did you mean '%s'? ('ksmsim hashes' lists them)", name, near);
	else
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "unknown checksum"
			    " '%s' ('ksmsim hashes' lists them)", name ? name : "");
	return NULL;
}

const struct page_hash *hash_all(size_t *n)
{
	*n = G_N_ELEMENTS(hashes);
	return hashes;
}
