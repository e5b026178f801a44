// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The keyed checksums: SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012), written from the paper's description as the
 * kernel's lib/siphash.c computes it (scalar, 8 bytes a step, two rounds a
 * word and four to finish), and XXH64 with a seed. Both take their key from
 * hash_key(): a value no trace holds, so a trace's author cannot aim at it,
 * which is what a key drawn at boot and kept from guests gives the kernel.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"
#include "util/splitmix64.h"

static uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND()                                                         \
	do {                                                               \
		v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32); \
		v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;                   \
		v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;                   \
		v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32); \
	} while (0)

uint64_t siphash24(uint64_t k0, uint64_t k1, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56, m;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);	/* little-endian host, as the paper's words */
		v3 ^= m;
		SIPROUND();
		SIPROUND();
		v0 ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)p[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND();
	SIPROUND();
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND();
	SIPROUND();
	SIPROUND();
	SIPROUND();
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * The run's key: KSMSIM_HASH_KEY (a number, for replicates over keys) or
 * 1, stretched by SplitMix64 into two words; read once. Never 0 for
 * xxhash-seeded's seed, so the seeded row never equals the kernel's.
 */
static uint64_t key[2];
static bool key_set;

void hash_set_key(uint64_t k)
{
	uint64_t st = k;

	key[0] = splitmix64_next(&st);
	key[1] = splitmix64_next(&st);
	if (!key[0])
		key[0] = 1;
	key_set = true;
}

static const uint64_t *hash_key(void)
{
	if (!key_set) {
		const char *e = getenv("KSMSIM_HASH_KEY");

		hash_set_key(e && *e ? strtoull(e, NULL, 0) : 1);
	}
	return key;
}

/* A kernel-shaped keyed checksum: siphash(page, 4096, key), low 32 bits, as rmap_item keeps. */
uint64_t page_siphash(const void *page)
{
	const uint64_t *k = hash_key();

	return (uint32_t)siphash24(k[0], k[1], page, HASH_PAGE_SIZE);
}

/* The kernel's xxhash with a seed drawn at boot: XXH64(page, 4096, seed), low 32 bits. */
uint64_t page_xxhash_seeded(const void *page)
{
	return (uint32_t)XXH64(page, HASH_PAGE_SIZE, hash_key()[0]);
}
