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
/* The marks columns the kernel has (marks_kernel()), raw; the model's only left 0. */
bool ksmfs_read_counters(struct ksm_counters *c, GError **error);
/* /proc/PID/ksm_stat in the model's row (st->name left NULL for the caller). */
bool ksmfs_read_ksm_stat(pid_t pid, struct ksm_mm_stat *st, GError **error);

#endif
