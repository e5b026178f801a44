/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KSM model: mm/ksm.c of Linux 6.18 replayed on simulated address
 * spaces (sim/MODEL.md). The event loop (sim/loop.h) feeds it trace records
 * and asks it when ksmd's next batch is due.
 */
#ifndef KSMSIM_SIM_KSM_H
#define KSMSIM_SIM_KSM_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "hashes/hash.h"
#include "sim/cost_model.h"
#include "traces/trace.h"

/* What /sys/kernel/mm/ksm and /proc/vmstat would show (plus rmap_items). */
struct ksm_counters {
	uint64_t full_scans;	/* from the trace start, across run=2 */
	uint64_t pages_scanned;
	uint64_t pages_shared;
	uint64_t pages_sharing;
	uint64_t pages_unshared;
	uint64_t pages_volatile;
	uint64_t pages_skipped;
	uint64_t ksm_zero_pages;
	uint64_t stable_node_chains;
	uint64_t stable_node_dups;
	int64_t general_profit;
	uint64_t cow_ksm;
	uint64_t rmap_items;
	uint64_t pages_to_scan;	/* current value (the advisor changes it) */
};

/* What the kernel cannot see. */
struct ksm_truth {
	uint64_t checksums;		/* calc_checksum calls */
	uint64_t gate_checks;		/* gate decisions on a page seen before */
	uint64_t gate_changed;		/* ... whose bytes had changed */
	uint64_t false_positives;	/* ... yet the checksum was equal */
	uint64_t unstable_inserts;
	uint64_t unstable_aborts;	/* searches stopped by a vanished page */
	uint64_t unstable_corrupt_walks;	/* walks through a node whose page changed */
	uint64_t unstable_changed_after_insert;	/* inserted, then changed before the next visit */
	uint64_t merges_two;		/* new KSM pages from the unstable tree */
	uint64_t merges_stable;		/* pages merged into an existing KSM page */
	uint64_t merges_zero;		/* pages mapped to the zero page */
	uint64_t merge_refused_lru;	/* write_protect_page refused: page in an lru_add batch */
	uint64_t memcmp_calls;
	uint64_t memcmp_bytes;
	uint64_t page_copies;		/* CoW copies of KSM pages */
	uint64_t cow_fresh;		/* CoW before a full scan ended since the merge */
	uint64_t cow_later;
	uint64_t cow_unshare;		/* unshare faults: MADV_UNMERGEABLE, run=2 */
	uint64_t mmu_invalidations;	/* secondary-MMU range invalidations */
	uint64_t mmu_change_pte;	/* change_pte-style single-PTE updates */
	double cpu_ns;			/* modelled ksmd CPU time */
};

/* Dedup the contents would allow, computed on demand (walks every page). */
struct ksm_ideal {
	uint64_t mergeable_pages;	/* present pages in mergeable areas */
	uint64_t ideal_saved;		/* pages an oracle would free */
	uint64_t actual_saved;		/* mappings of KSM pages beyond one + KSM zero pages */
	uint64_t missed_merges;		/* ideal_saved - actual_saved */
};

struct ksm_options {
	const struct page_hash *hash;	/* NULL: xxhash */
	struct cost_table costs;
	bool check;			/* verify invariants after every batch */
	bool batch_time;		/* batches take their modelled CPU time */
	bool pinned[KNOB_NR];		/* fixed from the command line: the trace's */
	uint64_t pinned_value[KNOB_NR];	/* `set` of these knobs is ignored */
};

struct ksm;

/* Records the model refuses, as the kernel would. */
#define KSM_ERROR (ksm_error_quark())
GQuark ksm_error_quark(void);
enum ksm_error_code {
	KSM_ERROR_BUSY,		/* a knob the kernel will not change while pages are merged */
	KSM_ERROR_INVAL,	/* pages_to_scan while the advisor drives it */
	KSM_ERROR_NO_MM,	/* a record naming an mm that does not exist */
};

struct ksm *ksm_new(const struct ksm_options *opt);
void ksm_free(struct ksm *k);
/*
 * Bytes the model needs for written_pages pages that hold bytes in mms
 * address spaces, with the ideal-dedup oracle or without: a measured
 * figure (bench model, peak RSS), for refusing a run the machine cannot
 * hold before it starts.
 */
uint64_t ksm_memory_estimate(uint64_t written_pages, uint64_t mms, bool ideal);

/*
 * Apply one record (not settle or mark) at simulated time now_us. A request
 * the kernel would refuse (EBUSY knob changes) returns false with a message.
 */
bool ksm_apply(struct ksm *k, const struct trace_record *r, uint64_t now_us, GError **error);

/* Simulated time of ksmd's next batch, or UINT64_MAX while it waits. */
uint64_t ksm_next_batch(const struct ksm *k);
/* Run the batch due at now_us; returns the batch's end time. */
uint64_t ksm_run_batch(struct ksm *k, uint64_t now_us);

void ksm_counters(const struct ksm *k, struct ksm_counters *c);
void ksm_truth(const struct ksm *k, struct ksm_truth *t);
void ksm_ideal(struct ksm *k, struct ksm_ideal *out);
uint64_t ksm_knob(const struct ksm *k, enum ksm_knob knob);

/* /proc/PID/ksm_stat of one live mm. */
struct ksm_mm_stat {
	const char *name;
	uint64_t ksm_rmap_items;
	uint64_t ksm_zero_pages;
	uint64_t ksm_merging_pages;
	int64_t ksm_process_profit;
	bool ksm_mergeable;		/* some VMA has VM_MERGEABLE */
};

/* Every live mm's ksm_stat, in name order (output must not depend on hashing). */
GArray *ksm_mm_stats(const struct ksm *k);	/* of struct ksm_mm_stat */

/* Invariant checker: NULL when all hold, else a description (g_free it). */
char *ksm_check(struct ksm *k);

#endif
