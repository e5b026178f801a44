/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live kernel's KSM controls: /sys/kernel/mm/ksm knobs and counters,
 * /proc/vmstat's cow_ksm, saving and restoring every knob, the replay lock,
 * and the SIGINT/SIGTERM flag every blocking wait of `ksmsim live` checks.
 *
 * The live KSM is shared by the whole machine, so every path out of a
 * command that touched it must go through ksmfs_restore().
 */
#ifndef KSMSIM_LIVE_KSMFS_H
#define KSMSIM_LIVE_KSMFS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include "traces/trace.h"

#define KSMFS_DIR "/sys/kernel/mm/ksm"
#define KSMFS_LOCK "/run/ksmsim-live.lock"

/* Knob values as the kernel printed them (advisor_mode: the bracketed word). */
struct ksm_saved {
	bool present[KNOB_NR];
	char val[KNOB_NR][32];
};

/* The marks columns read from the kernel (cumulative ones raw). */
struct ksm_counters {
	uint64_t full_scans, pages_scanned, pages_shared, pages_sharing;
	uint64_t pages_unshared, pages_volatile, pages_skipped, ksm_zero_pages;
	uint64_t stable_node_chains, stable_node_dups;
	int64_t general_profit;
	uint64_t cow_ksm;	/* /proc/vmstat */
};

/*
 * Whether live KSM can be used here: root, the directory present and its
 * knobs writable. On false, *why says what is missing (for a skip message).
 */
bool ksmfs_usable(char **why);

bool ksmfs_read(const char *name, char *buf, size_t cap, GError **error);
bool ksmfs_read_u64(const char *name, uint64_t *v, GError **error);
/* A write the kernel refuses is an error naming the knob, value and errno. */
bool ksmfs_write(const char *name, const char *value, GError **error);
bool ksmfs_write_knob(enum ksm_knob knob, uint64_t value, GError **error);
bool ksmfs_read_counters(struct ksm_counters *c, GError **error);

bool ksmfs_save(struct ksm_saved *s, GError **error);
/* run=2, then the trace defaults (knob_defaults), run ends at 0. */
bool ksmfs_set_defaults(GError **error);
/*
 * run=2 (unmerge everything), then every saved knob in an order the kernel
 * accepts (max_page_sharing and merge_across_nodes while nothing is merged,
 * advisor_mode before pages_to_scan), then run. Tries every knob even after
 * a failure; the error names the first one that failed.
 */
bool ksmfs_restore(const struct ksm_saved *s, GError **error);

/*
 * Processes other than ours (and the pids in skip[]) that KSM knows about:
 * their ksm_stat shows rmap items, merged pages or mergeable memory. Returns
 * false with a message naming the first one.
 */
bool ksmfs_check_idle(const pid_t *skip, size_t nskip, GError **error);

/*
 * The replay lock (flock on KSMFS_LOCK). It also holds the saved knobs while
 * a replay runs, so that a replay killed by SIGKILL is repaired by the next
 * one: ksmfs_lock() returns those values in *stale (stale->present all
 * false when the last replay ended cleanly).
 */
int ksmfs_lock(struct ksm_saved *stale, GError **error);
void ksmfs_lock_record(int fd, const struct ksm_saved *s);
void ksmfs_unlock(int fd);	/* clears the record, closes */

/*
 * Everything a live command does before touching KSM and after: refuse
 * unless usable, idle and unlocked; save the knobs (or take over those of a
 * replay that was killed); catch SIGINT/SIGTERM; run=2 and the kernel's
 * defaults. ksmfs_session_end() restores and unlocks; call it on every path
 * once begin succeeded (its children must be gone by then).
 */
struct ksmfs_session {
	int lock_fd;
	struct ksm_saved saved;
};
bool ksmfs_session_begin(struct ksmfs_session *s, GError **error);
bool ksmfs_session_end(struct ksmfs_session *s, GError **error);

#endif
