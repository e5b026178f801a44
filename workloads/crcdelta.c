// SPDX-License-Identifier: GPL-2.0-or-later
/* CRC-invisible deltas: see crcdelta.h for the algebra. */
#include <string.h>
#include <zlib.h>
#include "hashes/hash.h"
#include "util/splitmix64.h"
#include "workloads/crcdelta.h"

/* Both CRCs of a page side by side: crc32c in the low half, crc32 in the high. */
static uint64_t crc_pair(const uint8_t *page)
{
	return (uint64_t)crc32c(0, page, CRCDELTA_PAGE) |
	       (uint64_t)crc32(0, page, CRCDELTA_PAGE) << 32;
}

/*
 * Gaussian elimination one column at a time: each bit's image under the
 * two CRCs is reduced by the images kept so far (indexed by their leading
 * bit). An image that does not reduce to zero is kept, with the bits that
 * made it; one that does names a delta in the kernel.
 */
void crcdelta_kernel(struct crc_kernel *k)
{
	static uint8_t page[CRCDELTA_PAGE];	/* all zero between calls */
	uint64_t zero = crc_pair(page), piv_v[64];
	uint8_t piv_c[64][CRCDELTA_LEN];
	bool have[64] = { false };

	k->dim = 0;
	for (unsigned j = 0; j < CRCDELTA_BITS; j++) {
		uint8_t comb[CRCDELTA_LEN] = { 0 };
		uint64_t v;

		page[j / 8] = (uint8_t)(1u << (j % 8));
		v = crc_pair(page) ^ zero;
		page[j / 8] = 0;
		comb[j / 8] = (uint8_t)(1u << (j % 8));
		while (v) {
			int p = 63 - __builtin_clzll(v);

			if (!have[p]) {
				have[p] = true;
				piv_v[p] = v;
				memcpy(piv_c[p], comb, CRCDELTA_LEN);
				break;
			}
			v ^= piv_v[p];
			for (unsigned i = 0; i < CRCDELTA_LEN; i++)
				comb[i] ^= piv_c[p][i];
		}
		if (!v)
			memcpy(k->basis[k->dim++], comb, CRCDELTA_LEN);
	}
}

void crcdelta_pick(const struct crc_kernel *k, uint64_t *state, uint8_t d[CRCDELTA_LEN])
{
	bool nonzero = false;

	while (!nonzero) {
		memset(d, 0, CRCDELTA_LEN);
		for (unsigned i = 0; i < k->dim; i += 64) {
			uint64_t r = splitmix64_next(state);

			for (unsigned j = i; j < k->dim && j < i + 64; j++)
				if (r >> (j - i) & 1)
					for (unsigned b = 0; b < CRCDELTA_LEN; b++)
						d[b] ^= k->basis[j][b];
		}
		for (unsigned b = 0; b < CRCDELTA_LEN; b++)
			nonzero |= d[b] != 0;
	}
}

bool crcdelta_solve(unsigned off, uint64_t pick, struct crc_delta *out)
{
	struct crc_kernel k;

	if (off + CRCDELTA_LEN > CRCDELTA_PAGE)
		return false;
	crcdelta_kernel(&k);
	out->off = off;
	memcpy(out->d, k.basis[pick % k.dim], CRCDELTA_LEN);
	return true;
}

void crcdelta_rand_bytes(uint64_t seed, unsigned off, unsigned len, uint8_t *out)
{
	uint64_t state = seed;
	unsigned end = off + len;

	for (unsigned w = 0; w * 8 < end; w++) {
		uint64_t z = splitmix64_next(&state);

		for (unsigned k = 0; k < 8; k++) {
			unsigned pos = w * 8 + k;

			if (pos >= off && pos < end)
				out[pos - off] = (uint8_t)(z >> (8 * k));
		}
	}
}
