/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Byte changes that a CRC cannot see. crc32 and crc32c are affine over
 * GF(2): for messages of one length, crc(A ^ D) = crc(A) ^ crc(D) ^ crc(0).
 * A delta D with crc(D) == crc(0) for both polynomials therefore leaves both
 * checksums of any page unchanged while its bytes change. The deltas of a
 * 16-byte window that do this form a linear space (the common kernel of the
 * two CRCs' linear parts), found by elimination over the window's 128 bits
 * against the 64 conditions. Moving the window multiplies a CRC's linear
 * part by a power of x modulo its polynomial, which is invertible, so the
 * space is the same wherever the window sits.
 *
 * Users: crc-adversarial (gen_crc.c) and the collision study (analysis/).
 */
#ifndef KSMSIM_WORKLOADS_CRCDELTA_H
#define KSMSIM_WORKLOADS_CRCDELTA_H

#include <stdbool.h>
#include <stdint.h>

#define CRCDELTA_PAGE 4096u
#define CRCDELTA_LEN 16u	/* bytes in a delta's window: 128 unknowns, 64 conditions */
#define CRCDELTA_BITS (CRCDELTA_LEN * 8)

/* A basis of the deltas both CRCs miss; dim >= 64, since 64 conditions bind 128 bits. */
struct crc_kernel {
	unsigned dim;
	uint8_t basis[CRCDELTA_BITS][CRCDELTA_LEN];
};

struct crc_delta {
	unsigned off;		/* window start in the page */
	uint8_t d[CRCDELTA_LEN];	/* XOR pattern, never all zero */
};

/*
 * One basis vector per window bit whose image depends on the images of the
 * bits before it: that bit plus the independent earlier bits that cancel
 * its image (the null-space basis of the reduced echelon form), in bit order.
 */
void crcdelta_kernel(struct crc_kernel *k);

/* A random nonzero element of the kernel: a random subset of the basis, drawn from *state. */
void crcdelta_pick(const struct crc_kernel *k, uint64_t *state, uint8_t d[CRCDELTA_LEN]);

/*
 * Basis vector pick % dim as a delta in the window at off; false when the
 * window does not fit in the page (off + CRCDELTA_LEN > CRCDELTA_PAGE).
 */
bool crcdelta_solve(unsigned off, uint64_t pick, struct crc_delta *out);

/* Bytes [off, off + len) of the page `rand:seed` (traces/FORMAT.md: SplitMix64, LE words). */
void crcdelta_rand_bytes(uint64_t seed, unsigned off, unsigned len, uint8_t *out);

#endif
