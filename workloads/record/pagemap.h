/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which pages of a process are present and written: /proc/PID/pagemap, clear_refs. */
#ifndef KSMSIM_WORKLOADS_RECORD_PAGEMAP_H
#define KSMSIM_WORKLOADS_RECORD_PAGEMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#define PAGEMAP_RUN_PAGES 64	/* the longest run: pages read from the process at once */

/* User pages [u, u + n) of the region at index region, to be read. */
struct dirty_run {
	uint64_t u, n;
	guint region;
};

/*
 * Appends to runs (struct dirty_run) the pages of the regions (struct
 * region) in the scope that pagemap fd shows present, and soft-dirty if
 * soft_dirty (all present ones of a region to reread). A page no
 * longer present leaves hashes (compare mode's last bytes, or NULL), so it
 * is recorded again when it is back.
 */
void pagemap_scan(int fd, const GArray *regions, bool soft_dirty, GHashTable *hashes,
		  GArray *runs);

/* Clears the soft-dirty bits through clear_refs fd: the next interval starts. */
bool pagemap_clear_soft_dirty(int fd);

#endif
