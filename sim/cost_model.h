/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What ksmd's work costs in CPU time, per operation. The defaults are
 * figures `ksmsim bench costs` measured once on the project's reference
 * machine (2-core x86-64 VM), so that runs stay reproducible; --costs-csv
 * substitutes a table measured on the machine at hand.
 */
#ifndef KSMSIM_SIM_COST_MODEL_H
#define KSMSIM_SIM_COST_MODEL_H

#include <stdbool.h>
#include <glib.h>

struct cost_table {
	double checksum_ns;	/* one page checksum with the run's hash (cold) */
	double memcmp_ns;	/* one full-page compare (cold) */
	double copy_ns;		/* one page copy */
	double visit_ns;	/* fixed cost of visiting an rmap item */
	double node_ns;		/* one tree level: fetch node, get page */
	double dirty_clear_ns;	/* dirty-bit: clear a set bit and flush its TLB entry */
};

/* Defaults for the named checksum. */
void cost_table_default(struct cost_table *t, const char *hash_name);
/* Overrides from a `ksmsim bench costs --csv` file; false with error set. */
bool cost_table_load(struct cost_table *t, const char *path, const char *hash_name,
		     GError **error);

#endif
