// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jhash2(page as 1024 u32, 1024, 17): Bob Jenkins' lookup3 hashword as in
 * the kernel's include/linux/jhash.h, which KSM used until 2018 (4.20).
 * The page length is fixed, so the loop count and the one-word tail are
 * constants: 1024 = 341 * 3 + 1.
 */
#include <string.h>
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#define WORDS (HASH_PAGE_SIZE / 4)

static inline uint32_t rol32(uint32_t w, unsigned s)
{
	return (w << s) | (w >> (32 - s));
}

#define JMIX(a, b, c) do {					\
	a -= c; a ^= rol32(c, 4);  c += b;			\
	b -= a; b ^= rol32(a, 6);  a += c;			\
	c -= b; c ^= rol32(b, 8);  b += a;			\
	a -= c; a ^= rol32(c, 16); c += b;			\
	b -= a; b ^= rol32(a, 19); a += c;			\
	c -= b; c ^= rol32(b, 4);  b += a;			\
} while (0)

#define JFINAL(a, b, c) do {					\
	c ^= b; c -= rol32(b, 14);				\
	a ^= c; a -= rol32(c, 11);				\
	b ^= a; b -= rol32(a, 25);				\
	c ^= b; c -= rol32(b, 16);				\
	a ^= c; a -= rol32(c, 4);				\
	b ^= a; b -= rol32(a, 14);				\
	c ^= b; c -= rol32(b, 24);				\
} while (0)

/* memcpy: no alignment or aliasing assumptions; compiles to one load. */
static inline uint32_t w32(const unsigned char *p, unsigned i)
{
	uint32_t w;

	memcpy(&w, p + 4 * i, sizeof(w));
	return w;
}

uint64_t page_jhash2(const void *page)
{
	const unsigned char *k = page;
	uint32_t a, b, c;

	a = b = c = 0xdeadbeefu + (WORDS << 2) + PAGE_JHASH2_INITVAL;
	/*
	 * One long dependency chain: nothing to parallelise, but unrolling
	 * lets the loads run ahead of the mixing.
	 */
#pragma GCC unroll 4
	for (unsigned i = 0; i < WORDS - 1; i += 3) {
		a += w32(k, i);
		b += w32(k, i + 1);
		c += w32(k, i + 2);
		JMIX(a, b, c);
	}
	a += w32(k, WORDS - 1);
	JFINAL(a, b, c);
	return c;
}
