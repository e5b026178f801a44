/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Byte changes that a CRC cannot see. crc32 and crc32c are affine over
 * GF(2): for messages of one length, crc(A ^ D) = crc(A) ^ crc(D) ^ crc(0).
 * A delta D with crc(D) == crc(0) for both polynomials therefore leaves both
 * checksums of any page unchanged while its bytes change. Such deltas are
 * found by solving the 64 linear conditions over the 128 bits of a 16-byte
 * window. Self-contained (zlib for crc32) so tests can compile it directly.
 */
#ifndef KSMSIM_CRCDELTA_H
#define KSMSIM_CRCDELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRCDELTA_PAGE 4096u
#define CRCDELTA_LEN 16u	/* bytes in a delta's window: 128 unknowns, 64 conditions */

struct crc_delta {
	unsigned off;		/* window start in the page */
	uint8_t d[CRCDELTA_LEN];	/* XOR pattern, never all zero */
};

/* CRC-32C (Castagnoli), init ~0, final ~0, as the kernel's crc32c(0, p, n) reports. */
uint32_t crcdelta_crc32c(const void *buf, size_t len);
/* zlib's crc32(0, buf, len): IEEE 802.3. */
uint32_t crcdelta_crc32(const void *buf, size_t len);

/*
 * A delta in the window at off (off + CRCDELTA_LEN <= page) that keeps both
 * CRCs of a page. pick chooses among the solutions (deterministically).
 */
bool crcdelta_solve(unsigned off, uint64_t pick, struct crc_delta *out);

/* Bytes [off, off + len) of the page `rand:seed` (spec: SplitMix64, LE words). */
void crcdelta_rand_bytes(uint64_t seed, unsigned off, unsigned len, uint8_t *out);

#endif
