/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checksum collision study behind `ksmsim collide` (README.md here):
 *
 *   birthday        the first repeated checksum among distinct pages, per
 *                   hash, against the birthday bound
 *   false-positive  a page changes: does its checksum stay the same?
 *   in-KSM          the same question asked of the model, one run per hash
 *
 * Every figure is a pure function of the seed: each trial draws from its own
 * SplitMix64 stream and threads only decide who computes which trial, so no
 * output depends on the thread count. Tables go to opts->table, CSV to the
 * streams given (NULL: none), timing lines to stderr and never to a CSV.
 */
#ifndef KSMSIM_ANALYSIS_COLLIDE_H
#define KSMSIM_ANALYSIS_COLLIDE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>
#include "hashes/hash.h"
#include "sim/ksm.h"
#include "sim/run.h"

#define COLLIDE_MAX_THREADS 256

/* ---------------------------------------------------------------- birthday */

enum birthday_pages {
	BIRTHDAY_WORDS,		/* random base page; word 0 a counter, word 1 random */
	BIRTHDAY_COUNTER,	/* random base page; word 0 a counter */
	BIRTHDAY_FULL,		/* 4096 fresh random bytes per page */
	BIRTHDAY_NR_PAGES
};
extern const char *const birthday_pages_names[BIRTHDAY_NR_PAGES];

struct birthday_opts {
	const struct page_hash *const *hashes;	/* each with a function */
	unsigned nhashes;
	uint64_t trials, trials_wide;		/* per hash of <= 32 bits, of more */
	uint64_t max_pages, max_pages_wide;	/* pages per trial at most, likewise */
	unsigned bits;				/* keep only the low bits; 0: all */
	enum birthday_pages pages;
	const uint64_t *at;			/* page counts to report */
	unsigned nat;
	uint64_t seed;
	unsigned threads;			/* 1..COLLIDE_MAX_THREADS */
	FILE *table, *csv, *curve_csv;
};

void collide_birthday(const struct birthday_opts *o);
/* The curves of a --curve-csv file as a PNG, drawn by gnuplot. */
bool collide_birthday_plot(const char *curve_csv, const char *png, GError **error);

/* ----------------------------------------------------------- false positive */

/*
 * FP_COLLPAIR is the fixed-seed attack (workloads/collpair.h): per hash one
 * sweep of at most `budget` tries finds pairs of one page's contents with
 * equal checksums, and each pair used is one change (trials = pairs used,
 * at most `trials`); a hash with no pair in the budget has 0 trials.
 */
enum fp_change { FP_BITFLIP, FP_WORD, FP_PATCH, FP_CRAFTED, FP_COLLPAIR, FP_NR_CHANGES };
extern const char *const fp_change_names[FP_NR_CHANGES];

struct fp_opts {
	const struct page_hash *const *hashes;
	unsigned nhashes;
	bool changes[FP_NR_CHANGES];		/* the kinds to try */
	uint64_t trials;			/* per hash and kind */
	unsigned bits;
	uint64_t seed;
	unsigned threads;
	uint64_t budget;			/* colliding-pair tries per hash; 0: the default */
	FILE *table, *csv;
};

/* false with error set when a colliding-pair sweep fails (no memory for its table). */
bool collide_false_positive(const struct fp_opts *o, GError **error);
/* One crafted CRC-invisible delta drawn with seed, as hex and a newline. */
void collide_print_delta(FILE *f, uint64_t seed);

/* ------------------------------------------------------------------ in-KSM */

/*
 * The generated trace: per guest an image shared by all guests (merges,
 * then CoW), private pages (the unstable tree), a churn range rewritten
 * with random words and a crafted range rewritten with CRC-invisible deltas.
 */
struct ksm_study_trace {
	unsigned guests;
	uint64_t pages, image, churn, crafted;	/* pages per guest; image + churn + crafted <= pages */
	uint64_t seconds, epoch_ms, seed;
};

bool collide_ksm_write_trace(const char *path, const struct ksm_study_trace *g,
			     GError **error);

struct ksm_study_opts {
	const struct page_hash *const *hashes;
	unsigned nhashes;
	/*
	 * The run each hash replays (sim/run.h): the trace, knobs, check,
	 * batch time, costs, the oracle's walk (missed_merges) and the
	 * samples behind pages_unshared's peak and mean; the hash is set per
	 * run.
	 */
	struct run_config run;
	const char *label;		/* what the summary rows call the trace */
	FILE *table, *csv;
	FILE *run_csv;			/* every run's summary row, one header */
};

/* false with error set when a run fails (a bad record, an invariant with check). */
bool collide_ksm(const struct ksm_study_opts *o, GError **error);

#endif
