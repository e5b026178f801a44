// SPDX-License-Identifier: GPL-2.0-or-later
/* CRC-invisible deltas: see crcdelta.h for the algebra. */
#include <string.h>
#include <zlib.h>
#include "workloads/crcdelta.h"

static uint32_t crc32c_table[256];
static bool crc32c_ready;

static void crc32c_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & -(c & 1));	/* reflected Castagnoli */
		crc32c_table[i] = c;
	}
	crc32c_ready = true;
}

uint32_t crcdelta_crc32c(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = ~0u;

	if (!crc32c_ready)
		crc32c_init();
	while (len--)
		c = (c >> 8) ^ crc32c_table[(c ^ *p++) & 0xff];
	return ~c;
}

uint32_t crcdelta_crc32(const void *buf, size_t len)
{
	return (uint32_t)crc32(0, buf, (uInt)len);
}

/*
 * Column b of the system: how flipping bit b of the window moves the two
 * CRCs of a zero page (crc32c in the low half, crc32 in the high half).
 */
static uint64_t column(uint8_t *page, unsigned off, unsigned b, uint64_t base)
{
	uint64_t v;

	page[off + b / 8] ^= (uint8_t)(1u << (b % 8));
	v = (uint64_t)crcdelta_crc32c(page, CRCDELTA_PAGE) |
	    (uint64_t)crcdelta_crc32(page, CRCDELTA_PAGE) << 32;
	page[off + b / 8] ^= (uint8_t)(1u << (b % 8));
	return v ^ base;
}

bool crcdelta_solve(unsigned off, uint64_t pick, struct crc_delta *out)
{
	static uint8_t page[CRCDELTA_PAGE];	/* all zero between calls */
	uint64_t rows[64][2] = { { 0 } };	/* row r: bit r of every column */
	int pivot_col[64];
	bool is_pivot[128] = { false };
	unsigned free_cols[128], nfree = 0, rank = 0;
	uint64_t base;

	if (off + CRCDELTA_LEN > CRCDELTA_PAGE)
		return false;
	base = (uint64_t)crcdelta_crc32c(page, CRCDELTA_PAGE) |
	       (uint64_t)crcdelta_crc32(page, CRCDELTA_PAGE) << 32;
	for (unsigned b = 0; b < 128; b++) {
		uint64_t col = column(page, off, b, base);

		for (unsigned r = 0; r < 64; r++)
			if (col >> r & 1)
				rows[r][b / 64] |= UINT64_C(1) << (b % 64);
	}
	/* Reduced row echelon form over GF(2). */
	for (unsigned c = 0; c < 128 && rank < 64; c++) {
		unsigned r = rank;
		uint64_t bit = UINT64_C(1) << (c % 64);

		while (r < 64 && !(rows[r][c / 64] & bit))
			r++;
		if (r == 64)
			continue;
		if (r != rank) {
			uint64_t t0 = rows[r][0], t1 = rows[r][1];

			rows[r][0] = rows[rank][0];
			rows[r][1] = rows[rank][1];
			rows[rank][0] = t0;
			rows[rank][1] = t1;
		}
		for (unsigned i = 0; i < 64; i++)
			if (i != rank && (rows[i][c / 64] & bit)) {
				rows[i][0] ^= rows[rank][0];
				rows[i][1] ^= rows[rank][1];
			}
		pivot_col[rank++] = (int)c;
		is_pivot[c] = true;
	}
	for (unsigned c = 0; c < 128; c++)
		if (!is_pivot[c])
			free_cols[nfree++] = c;
	if (!nfree)
		return false;

	/* One free unknown set, the others clear: each pivot unknown then equals its row's entry. */
	unsigned f = free_cols[pick % nfree];
	uint8_t x[128] = { 0 };

	x[f] = 1;
	for (unsigned i = 0; i < rank; i++)
		x[pivot_col[i]] = (uint8_t)(rows[i][f / 64] >> (f % 64) & 1);
	out->off = off;
	memset(out->d, 0, sizeof(out->d));
	for (unsigned b = 0; b < 128; b++)
		if (x[b])
			out->d[b / 8] |= (uint8_t)(1u << (b % 8));
	return true;
}

void crcdelta_rand_bytes(uint64_t seed, unsigned off, unsigned len, uint8_t *out)
{
	uint64_t state = seed;
	unsigned end = off + len;

	for (unsigned w = 0; w * 8 < end; w++) {
		uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));

		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		z ^= z >> 31;
		for (unsigned k = 0; k < 8; k++) {
			unsigned pos = w * 8 + k;

			if (pos >= off && pos < end)
				out[pos - off] = (uint8_t)(z >> (8 * k));
		}
	}
}
