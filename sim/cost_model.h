/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What ksmd's work costs in CPU time, per operation, each term named for
 * the kernel's work (sim/MODEL.md, "What ksmd's CPU costs"). The built-in
 * figures are fixed, so that runs stay reproducible: the table `ksmsim
 * bench calibrate` fitted to the live ksmd of the reference machine
 * (bench/tables/costs-amd-epyc.csv); --costs-csv substitutes one fitted
 * on the machine at hand.
 */
#ifndef KSMSIM_SIM_COST_MODEL_H
#define KSMSIM_SIM_COST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <glib.h>

#include "hashes/hash.h"

struct cost_table {
	double checksum_ns;	/* one page checksum with the run's hash */
	double memcmp_ns;	/* one compare whose first 8 bytes tie (runs long) */
	double copy_ns;		/* one page copy (a CoW: the faulting process's, not ksmd's) */
	double visit_ns;	/* visiting an rmap item: the page-table walk, the item lookup */
	double node_ns;		/* one tree level: fetch node, get page, first-8-byte compare */
	double dirty_clear_ns;	/* dirty-bit: clear a set bit and flush its TLB entry */
	double memcmp_byte_ns;	/* per byte a compare reads (early exit counted) */
	double merge_ns;	/* a merge: write-protect, TLB flush, replace_page */
	double stable_insert_ns;	/* a stable node made and linked */
	double rmap_item_ns;	/* a new rmap_item allocated */
	double thp_split_ns;	/* split_huge_page of a THP ksmd wants to merge */
	double skip_ns;		/* a smart-scan skip */
	double full_pass_ns;	/* the end of a pass: lru_add_drain_all, tree reset */
	double chain_step_ns;	/* a dup of a stable-node chain looked at (stable_node_dup) */
	double cold_ns;		/* a tree level past cold_depth: its node and page from memory */
	double revisit_ns;	/* a visit finding its page merged, in a KSM page not just met */
	/*
	 * A tree level's own work in the scan loop: on 6.18 the searches are
	 * inlined into ksm_scan_thread, so each level's node loads and key
	 * checks are that function's own samples, which the live profile
	 * counts with the visit's bookkeeping (sim/profile.c's "visit" group);
	 * node_ns is the level's page lookup and compare.
	 */
	double tree_scan_ns;
	/*
	 * Not a price: how many levels of a tree search stay in the caches.
	 * Every search goes through the top levels, so their nodes and pages
	 * stay cached; below this depth a level's nodes outnumber what the
	 * caches hold, and each level pays cold_ns more (bench calibrate fits
	 * both; 0 with cold_ns 0: no such level).
	 */
	double cold_depth;
};

/*
 * The terms, for the costs CSV, the counts and the fit. checksum is the
 * run's hash; its row in a CSV is "checksum:NAME" per hash.
 */
enum cost_term {
	COST_VISIT, COST_CHECKSUM, COST_TREE_LEVEL, COST_MEMCMP_LONG, COST_MEMCMP_BYTE,
	COST_MERGE, COST_STABLE_INSERT, COST_RMAP_ITEM, COST_THP_SPLIT, COST_SKIP,
	COST_FULL_PASS, COST_CHAIN_STEP, COST_TREE_COLD, COST_REVISIT, COST_TREE_SCAN,
	COST_NR
};
struct cost_term_info {
	const char *name;	/* the CSV row */
	size_t off;		/* in struct cost_table */
	const char *what;	/* what one count is */
};
extern const struct cost_term_info cost_terms[COST_NR];

/*
 * How many of each the model charged: what the CPU time is the sum of; and
 * how many tree searches went down each number of levels (the last bucket
 * also holds the deeper ones), from which the levels past any cold depth
 * follow (cost_cold_levels).
 */
#define COST_DEPTHS 96
struct cost_counts {
	uint64_t n[COST_NR];
	uint64_t depths[COST_DEPTHS];
};

/* The levels below depth, over the searches of c: what COST_TREE_COLD counts. */
static inline uint64_t cost_cold_levels(const struct cost_counts *c, unsigned depth)
{
	uint64_t n = 0;

	for (unsigned d = depth + 1; d < COST_DEPTHS; d++)
		n += c->depths[d] * (d - depth);
	return n;
}

static inline double cost_get(const struct cost_table *t, enum cost_term term)
{
	return *(const double *)((const char *)t + cost_terms[term].off);
}
static inline void cost_set(struct cost_table *t, enum cost_term term, double v)
{
	*(double *)((char *)t + cost_terms[term].off) = v;
}

/* The built-in table, the checksum priced as its registry row says (NULL: HASH_DEFAULT). */
void cost_table_default(struct cost_table *t, const struct page_hash *hash);

/*
 * A table from FILE: either a terms table ("term,ns" then one row per term
 * of cost_terms[], the checksum as "checksum:NAME" for each hash the
 * registry computes, "tree_level_cold_depth" (levels, not ns), "copy" and
 * "wrprotect-flush" optional), as `bench
 * calibrate -o` writes it, or a `bench costs --csv` table (its cold
 * figures for the checksum, memcmp, copy and wrprotect-flush; the other
 * terms keep their defaults). A terms table with a row missing, negative,
 * not a number, unknown or given twice is refused with one line
 * "FILE:LINE:COLUMN: problem". false with error set.
 */
bool cost_table_load(struct cost_table *t, const char *path, const struct page_hash *hash,
		     GError **error);

/* The terms table of t (the checksum row for every hash: checksum_ns[i] for hash i). */
void cost_table_write(FILE *f, const struct cost_table *t, const char *const *hash_names,
		      const double *checksum_ns, size_t nhashes);

#endif
