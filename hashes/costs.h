/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-page cost table that `ksmsim bench costs --csv FILE` writes and
 * the model reads (--costs-csv). One header line, then one row per
 * measured function, columns in this order:
 *
 *   name              registry name (hash) or reference name, e.g. "memcmp"
 *   kind              "hash" (a registry row) or "reference"
 *   bits              bits of the value; 0 for memcmp, copy, ...
 *   hot_ns_per_page   median ns for one page already in L1
 *   hot_gib_s         4096 B / hot_ns_per_page, in GiB/s
 *   cold_ns_per_page  median ns per page streaming through distinct pages
 *                     (>= the last-level cache, 1 GiB by default)
 *   cold_gib_s        as hot_gib_s, cold
 *   ratio_to_jhash2   hot_ns_per_page / jhash2's hot_ns_per_page (<1 cheaper)
 *
 * Two-page rows (memcmp, copy, exchange-*) give the cost of one operation
 * on two pages; their GiB/s counts 4096 B per operation.
 */
#ifndef KSMSIM_COSTS_H
#define KSMSIM_COSTS_H

#include <glib.h>

#define HASH_COSTS_HEADER "name,kind,bits,hot_ns_per_page,hot_gib_s," \
			  "cold_ns_per_page,cold_gib_s,ratio_to_jhash2"
#define HASH_COSTS_NCOLS 8

struct hash_cost {
	char name[32];
	char kind[16];
	unsigned bits;
	double hot_ns, hot_gib_s;
	double cold_ns, cold_gib_s;
	double ratio_to_jhash2;
};

/* A GArray of struct hash_cost, or NULL with *error set. */
GArray *hash_costs_read(const char *path, GError **error);
/* NULL when the table has no row of that name. */
const struct hash_cost *hash_costs_find(const GArray *costs, const char *name);

#endif
