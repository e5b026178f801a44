/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Colliding pairs for a fixed-seed page checksum. jhash2 (initval 17) and
 * the kernel's xxhash (XXH64 seed 0, low 32 bits) are public and keyless, so
 * a guest can search for two contents of one page with equal checksums: set
 * one 64-bit word of a base page to V = value(0), value(1), ..., hash every
 * full page and remember each checksum until one repeats. For a b-bit
 * checksum n tries give about n^2 / 2^(b+1) pairs: the first after ~77,000
 * tries (50%) at 32 bits, ~128 pairs in 2^20 tries, and none in any
 * practical budget at 64 bits (the first near 2^32 tries).
 *
 * A page that alternates between the two contents of a pair changes at
 * every write while its checksum stays put: KSM's gate takes it for a page
 * that holds still.
 *
 * Users: checksum-adversarial (gen_collide.c) and the collision study
 * (analysis/false_positive.c). Deterministic: the same search gives the same
 * pairs in the same order.
 */
#ifndef KSMSIM_WORKLOADS_COLLPAIR_H
#define KSMSIM_WORKLOADS_COLLPAIR_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "hashes/hash.h"

#define COLLPAIR_PAGE 4096u
#define COLLPAIR_WORDS (COLLPAIR_PAGE / 8)
/* Tries per sweep unless told otherwise: ~128 pairs at 32 bits, ~1-2 s of jhash2. */
#define COLLPAIR_DEFAULT_BUDGET (UINT64_C(1) << 20)
/* A try's index is kept in 32 bits; 2^32 tries is the 64-bit birthday point. */
#define COLLPAIR_MAX_BUDGET (UINT64_C(1) << 32)

#define COLLPAIR_ERROR (collpair_error_quark())
GQuark collpair_error_quark(void);
enum { COLLPAIR_ERROR_INVALID, COLLPAIR_ERROR_NOMEM };

/* One search: a base page, the word that varies, and the hash to beat. */
struct collpair_search {
	const struct page_hash *h;	/* a row with a function */
	unsigned bits;			/* compare the low bits only; 0: all of h->bits */
	const uint8_t *base;		/* COLLPAIR_PAGE bytes; word `word` is overwritten */
	unsigned word;			/* 0 .. COLLPAIR_WORDS - 1, as `word:I:V` sets it */
	uint64_t salt;			/* picks the sequence of values tried */
	uint64_t budget;		/* tries at most: 2 .. COLLPAIR_MAX_BUDGET */
	uint64_t want;			/* stop after this many pairs (0: none wanted) */
};

/* v1 was tried before v2; the two differ and the pages hash equal. */
struct collpair {
	uint64_t v1, v2;
};

struct collpair_sweep {
	struct collpair *pairs;		/* in the order found; g_free() */
	uint64_t npairs;
	uint64_t tries;			/* pages hashed */
	double seconds;			/* wall time of the sweep (not part of the result) */
};

/*
 * Value number i of the sequence salt picks: a bijection of i, so no value
 * is tried twice within 2^64 tries.
 */
uint64_t collpair_value(uint64_t salt, uint64_t i);

/*
 * Sweeps until s->want pairs or s->budget tries. Each value belongs to one
 * pair at most. False with *error set on a bad search (no function, word out
 * of range, budget out of bounds) or when the table does not fit in memory;
 * finding fewer pairs than wanted is no error.
 */
bool collpair_find(const struct collpair_search *s, struct collpair_sweep *out, GError **error);
void collpair_sweep_clear(struct collpair_sweep *out);

/* The page `rand:seed` (traces/FORMAT.md): SplitMix64 words, little-endian. */
void collpair_rand_page(uint64_t seed, uint8_t page[COLLPAIR_PAGE]);
/* page with word `word` set to v, little-endian, as `word:I:V` writes it. */
void collpair_set_word(uint8_t *page, unsigned word, uint64_t v);

/* The chance that a sweep of n tries finds at least one pair of b-bit checksums. */
double collpair_chance(uint64_t n, unsigned bits);

#endif
