// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jhash2 written the plain way, as the kernel header reads: a general
 * length, a loop while more than 3 words remain, a falling-through switch
 * for the tail. The benchmark's yardstick for jhash2.c, which must not be
 * slower; the tests check both agree.
 */
#include <stdint.h>
#include <string.h>
#include "bench/bench_ref.h"
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#define ROL(w, s) (((w) << (s)) | ((w) >> (32 - (s))))

static uint32_t jhash2_plain(const uint32_t *k, uint32_t length, uint32_t initval)
{
	uint32_t a, b, c;

	a = b = c = 0xdeadbeefu + (length << 2) + initval;
	while (length > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		a -= c; a ^= ROL(c, 4);  c += b;
		b -= a; b ^= ROL(a, 6);  a += c;
		c -= b; c ^= ROL(b, 8);  b += a;
		a -= c; a ^= ROL(c, 16); c += b;
		b -= a; b ^= ROL(a, 19); a += c;
		c -= b; c ^= ROL(b, 4);  b += a;
		length -= 3;
		k += 3;
	}
	switch (length) {
	case 3:
		c += k[2];
		/* fall through */
	case 2:
		b += k[1];
		/* fall through */
	case 1:
		a += k[0];
		c ^= b; c -= ROL(b, 14);
		a ^= c; a -= ROL(c, 11);
		b ^= a; b -= ROL(a, 25);
		c ^= b; c -= ROL(b, 16);
		a ^= c; a -= ROL(c, 4);
		b ^= a; b -= ROL(a, 14);
		c ^= b; c -= ROL(b, 24);
		break;
	}
	return c;
}

uint64_t ref_jhash2_plain(const void *page)
{
	/* Pages are page-aligned u32 arrays in the kernel too. */
	return jhash2_plain(page, HASH_PAGE_SIZE / 4, PAGE_JHASH2_INITVAL);
}
