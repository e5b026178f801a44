/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the three collision studies share (internal to analysis/): random
 * pages from per-trial streams, checksum truncation and the parallel loop.
 */
#ifndef KSMSIM_ANALYSIS_STUDY_H
#define KSMSIM_ANALYSIS_STUDY_H

#include <stdint.h>
#include "hashes/hash.h"
#include "util/splitmix64.h"

#define PAGE_WORDS (HASH_PAGE_SIZE / 8)

/* An independent stream per (seed, a, b): trials never share random numbers. */
uint64_t study_stream(uint64_t seed, uint64_t a, uint64_t b);

static inline void study_fill_random(uint64_t *page, uint64_t *state)
{
	for (unsigned i = 0; i < PAGE_WORDS; i++)
		page[i] = splitmix64_next(state);
}

/* The low `bits` bits of a checksum: what a narrower gate would compare. */
static inline uint64_t study_mask(unsigned bits)
{
	return bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
}

/*
 * fn(i, worker, data) for every i in [0, n), on `threads` threads (at most
 * COLLIDE_MAX_THREADS); worker < threads names the thread, so that it can own
 * scratch space. Which thread takes which i is left to chance: results must
 * be stored by i.
 */
void study_par_for(unsigned threads, uint64_t n,
		   void (*fn)(uint64_t i, unsigned worker, void *data), void *data);

/* Seconds since t0 (g_get_monotonic_time), for the timing lines on stderr. */
double study_seconds(int64_t t0);

#endif
