/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ksmd's CPU by term, in the live profile's terms (live/profile.c): the
 * model's breakdown at each mark (`ksmsim run --profile-csv`), and the
 * comparison of two such breakdowns, live or modelled, share by share
 * (`ksmsim diff --profile`). sim/MODEL.md, "ksmd measured by function".
 */
#ifndef KSMSIM_SIM_PROFILE_H
#define KSMSIM_SIM_PROFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <glib.h>
#include "sim/cost_model.h"

#define PROFILE_SHARE_TOLERANCE_PP 5.0

/* The header line of --profile-csv (after its comment). */
void profile_model_header(FILE *f, const char *trace_label);
/* One mark: each term's count, share and ms from the counts so far and the run's prices. */
void profile_model_row(FILE *f, const char *label, const struct cost_counts *c,
		       const struct cost_table *t);

/*
 * The groups both a live profile and the model's can name (visit,
 * checksum, tree_search, merge, rmap_item, chain_walk, full_pass, other):
 * how many, each one's name, the group of a live or modelled term's name
 * (-1: unknown), and the group a cost term is charged to.
 */
size_t profile_ngroups(void);
const char *profile_group_name(size_t g);
int profile_group_of(const char *term);
int profile_term_group(enum cost_term t);

/*
 * Compares two profiles (either `live --profile` or `run --profile-csv`)
 * at their last mark: each file's terms folded into the groups both can
 * name (the model prices a visit as one: the live page_table_walk,
 * mmap_lock and scan are its parts), and each group's share in
 * percentage points. Prints a table to out; 0 when every share is within
 * tol_pp, 1 when one is not, -1 with error set for bad input.
 */
int profile_diff(const char *a, const char *b, double tol_pp, FILE *out, GError **error);

#endif
