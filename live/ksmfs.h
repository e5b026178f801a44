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
#include "marks/marks.h"
#include "traces/trace.h"

bool ksmfs_read_u64(const char *name, uint64_t *v, GError **error);
/* A write the kernel refuses is an error naming the knob, value and errno. */
bool ksmfs_write(const char *name, const char *value, GError **error);
bool ksmfs_write_knob(enum ksm_knob knob, uint64_t value, GError **error);
/* A marks column read from /sys/kernel/mm/ksm, by the registry's name. */
bool ksmfs_read_column(enum marks_col col, uint64_t *v, GError **error);
/*
 * Whether this kernel has a sysfs column's file: older kernels lack some
 * (Linux 6.1 has no pages_scanned, pages_skipped, ksm_zero_pages or
 * general_profit), and a replay there leaves those columns out.
 */
bool ksmfs_has_column(enum marks_col col);
/* The marks columns the kernel has (marks_kernel()), raw; the model's only and absent ones left 0. */
bool ksmfs_read_counters(struct ksm_counters *c, GError **error);
/*
 * The per-mm fields (a bit per marks_mm_columns[] index) this kernel shows:
 * /proc/self/ksm_stat's keys, and ksm_merging_pages from its own file
 * /proc/PID/ksm_merging_pages where ksm_stat lacks it (Linux 6.1's
 * ksm_stat has ksm_rmap_items only). 0: no ksm_stat at all.
 */
unsigned ksmfs_ksm_stat_fields(void);
/*
 * /proc/PID/ksm_stat in the model's row (st->name left NULL for the
 * caller): every field of fields must be there; the others are left 0.
 */
bool ksmfs_read_ksm_stat(pid_t pid, unsigned fields, struct ksm_mm_stat *st, GError **error);
/* A knob's file is there (smart_scan and the advisor's are not before Linux 6.7-6.9). */
bool ksmfs_has_knob(enum ksm_knob knob);

#endif
