/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internal to live/: the live kernel's KSM files, /sys/kernel/mm/ksm knobs
 * and counters, /proc/vmstat's cow_ksm and /proc/PID/ksm_stat. Saving and
 * restoring the knobs and the replay lock are the session's (live.h), in
 * ksmfs.c too; the replayer and the scan-rate measurement only read and
 * write single files.
 */
#ifndef KSMSIM_LIVE_KSMFS_H
#define KSMSIM_LIVE_KSMFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include "sim/ksm_stat_csv.h"
#include "traces/trace.h"

/* The marks columns read from the kernel (cumulative ones raw). */
struct ksm_counters {
	uint64_t full_scans, pages_scanned, pages_shared, pages_sharing;
	uint64_t pages_unshared, pages_volatile, pages_skipped, ksm_zero_pages;
	uint64_t stable_node_chains, stable_node_dups;
	int64_t general_profit;
	uint64_t cow_ksm;	/* /proc/vmstat */
	uint64_t thp_fault_alloc, thp_split_page, thp_split_pmd;	/* /proc/vmstat */
};

bool ksmfs_read_u64(const char *name, uint64_t *v, GError **error);
/* A write the kernel refuses is an error naming the knob, value and errno. */
bool ksmfs_write(const char *name, const char *value, GError **error);
bool ksmfs_write_knob(enum ksm_knob knob, uint64_t value, GError **error);
bool ksmfs_read_counters(struct ksm_counters *c, GError **error);
/* /proc/PID/ksm_stat in the model's row (st->mm left NULL for the caller). */
bool ksmfs_read_ksm_stat(pid_t pid, struct ksm_stat_row *st, GError **error);

#endif
