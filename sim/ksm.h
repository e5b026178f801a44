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
#include "marks/marks.h"
#include "sim/cost_model.h"
#include "traces/trace.h"

/*
 * What the model reports, struct ksm_counters, ksm_truth, ksm_ideal and
 * ksm_mm_stat, is the marks format's: marks/marks.h defines them.
 */

/*
 * Policies (sim/policy.c): what a run changes of the kernel's design. The
 * default, "kernel", is mm/ksm.c as it is; each other row of the registry
 * replaces one decision (sim/MODEL.md, "Policies"):
 *
 *   detector  how a page's change since the last visit is seen: the
 *             checksum gate (the kernel), none, the page table's dirty bit,
 *             or a hash of a few sampled words (UKSM's partial hashing)
 *   classes   how many trees per NUMA node each of the stable and unstable
 *             trees is split into, and by what feature of a page (CMD)
 *
 * Which pages a pass visits and in what order stays smart_scan's.
 */
enum ksm_detector {
	KSM_DETECT_CHECKSUM,	/* calc_checksum against oldchecksum; --hash none: no gate */
	KSM_DETECT_NONE,	/* no gate: every page goes to the trees */
	KSM_DETECT_DIRTY_BIT,	/* written since the last visit; the visit clears the bit */
	KSM_DETECT_PARTIAL,	/* a hash of k sampled 32-bit words, k per VMA */
};

enum ksm_class_by {
	KSM_CLASS_BY_KEY8,	/* a hash of the page's first 8 bytes */
	KSM_CLASS_BY_MM,	/* the mm the page is mapped in (its creator's, for a KSM page) */
	KSM_CLASS_BY_DOMAIN,	/* selective: the mm's security domain */
};

#define KSM_POLICY_SPEC_MAX 128
#define KSM_PARTIAL_WORDS_MAX 1024	/* 32-bit words in a page */
#define KSM_CLASSES_MAX 4096

struct ksm_policy_row;

/* A parsed --policy. All zero is the kernel's. */
struct ksm_policy {
	const struct ksm_policy_row *row;	/* NULL: "kernel" */
	enum ksm_detector detector;
	unsigned partial_k;		/* words sampled in a new VMA: 1..1024, a power of 2 */
	unsigned partial_k_max;		/* k doubles after a miss up to this */
	uint64_t dirty_flush_ns;	/* dirty-bit: cost of a clear and flush; 0: the cost table's */
	unsigned classes;		/* trees per node; 0 or 1: one */
	enum ksm_class_by class_by;
	char spec[KSM_POLICY_SPEC_MAX];	/* canonical NAME[:key=value,...]; "" for kernel */
};

/* A policy's key=value: sim/policy.c's rows (kind, bounds, default, field). */
struct ksm_policy_param;

/* One registry row: adding a policy is adding a row (and its decision). */
struct ksm_policy_row {
	const char *name;
	const char *summary;		/* one line for `ksmsim policies` */
	const char *params;		/* "key=default: meaning; ..." or "" */
	bool uses_hash;			/* decides with the --hash checksum */
	bool isolates;			/* gives up saving to isolate domains: advise runs it only when named */
	/* what the policy is before its keys: its detector and trees */
	enum ksm_detector detector;
	unsigned classes;		/* 0: one */
	enum ksm_class_by class_by;
	const struct ksm_policy_param *keys;	/* its key=value rows, ended by a NULL key */
};

/* All rows, in listing order ("kernel" first); *n receives the count. */
const struct ksm_policy_row *ksm_policy_all(size_t *n);
/*
 * Parse NAME[:key=value,...] (case of NAME does not matter). False with a
 * message that names the policy or key at fault and what it accepts.
 */
bool ksm_policy_parse(const char *spec, struct ksm_policy *out, GError **error);
/* What outputs call it: the canonical spec, "kernel" for the default. */
const char *ksm_policy_name(const struct ksm_policy *p);

/* What a policy did that the marks' columns do not show. */
struct ksm_policy_stats {
	uint64_t dirty_checks;		/* dirty-bit: visits that tested the bit */
	uint64_t dirty_flushes;		/* ... found it set: cleared with a TLB flush */
	uint64_t dirty_same_bytes;	/* ... set although the bytes were as at the last visit */
	uint64_t partial_words;		/* partial-hash: 32-bit words sampled */
	uint64_t partial_grows;		/* ... times a VMA's k doubled after a miss */
	uint64_t class_searches;	/* classified: unstable-tree searches */
	uint64_t class_lost;		/* ... that inserted while an equal page sat in another class */
};

/*
 * Security domains (--domain NAME=MM,...): tenants or VMs, by the names of
 * their mms. An mm named in none is a domain of its own; a fork child not
 * named in one is its parent's. Domain ids: the named ones 0 .. n - 1 in
 * the order given, then one per further mm in spawn order.
 */
struct ksm_domains {
	GPtrArray *names;		/* of char *: the named domains, by id */
	GHashTable *of_mm;		/* mm name -> GUINT_TO_POINTER(id + 1) */
};
/* An empty table; ksm_domains_add fills it, ksm_domains_free frees it. */
struct ksm_domains *ksm_domains_new(void);
void ksm_domains_free(struct ksm_domains *d);
/*
 * Add "NAME=MM[,MM...]"; false with the reason (an empty or repeated
 * name, no '=', an empty mm, an mm already in a domain).
 */
bool ksm_domains_add(struct ksm_domains *d, const char *spec, GError **error);

/* A false positive of the gate, with the bytes that changed unseen. */
struct ksm_false_positive {
	uint64_t t_us;			/* the visit's simulated time */
	const char *mm;			/* the page's mm, valid during the call */
	uint32_t vpn;
	uint64_t checksum;		/* the gate's value, the same before and after */
	uint32_t bytes_changed;		/* of the page's 4096 */
	const char *ranges;		/* the changed bytes: "1120;1400-1401;2044-2047" */
};

/*
 * Which kernel's mm/ksm.c the model follows (sim/MODEL.md, "Linux 6.1"):
 * 6.18, the default and the live oracle's, or 6.1 (Debian 12's), which
 * consults the stable tree before the checksum and has no smart scan,
 * advisor, merge-any prctl or KSM zero-page accounting.
 */
enum ksm_kernel {
	KSM_KERNEL_6_18,	/* zero: the default */
	KSM_KERNEL_6_1,
};
/* "6.18", "6.1" */
const char *ksm_kernel_name(enum ksm_kernel kernel);
/* "6.1" or "6.18" (also "6.1.y"-free spellings only); false for anything else. */
bool ksm_kernel_parse(const char *s, enum ksm_kernel *out);
/* The release that added knob, if kernel lacks its sysfs file ("6.7"); else NULL. */
const char *ksm_kernel_lacks_knob(enum ksm_kernel kernel, enum ksm_knob knob);

struct ksm_options {
	const struct page_hash *hash;	/* NULL: xxhash */
	enum ksm_kernel kernel;		/* zero: 6.18 */
	const struct ksm_domains *domains;	/* NULL: every mm its own domain */
	bool exposure;			/* keep the exposure figures (ksm_exposure) */
	struct ksm_policy policy;	/* zero: the kernel's */
	struct cost_table costs;
	bool check;			/* verify invariants after every batch */
	bool batch_time;		/* batches take their modelled CPU time */
	bool thp_columns;		/* rows show /proc/vmstat's THP events (version 3 traces) */
	bool pinned[KNOB_NR];		/* fixed from the command line: the trace's */
	uint64_t pinned_value[KNOB_NR];	/* `set` of these knobs is ignored */
	/*
	 * Called at every false positive of the gate (a page whose bytes
	 * changed since the last visit passed as unchanged), while it happens:
	 * NULL, none. Rare but unbounded, so the caller writes them out.
	 */
	void (*on_false_positive)(void *ctx, const struct ksm_false_positive *fp);
	void *false_positive_ctx;
};

struct ksm;

/* Records the model refuses, as the kernel would. */
#define KSM_ERROR (ksm_error_quark())
GQuark ksm_error_quark(void);
enum ksm_error_code {
	KSM_ERROR_BUSY,		/* a knob the kernel will not change while pages are merged */
	KSM_ERROR_INVAL,	/* pages_to_scan while the advisor drives it */
	KSM_ERROR_NO_MM,	/* a record naming an mm that does not exist */
	KSM_ERROR_EXISTS,	/* a fork naming a child mm that exists already */
	KSM_ERROR_NOT_MODELLED,	/* a record whose effect the model does not reproduce */
	KSM_ERROR_ABSENT,	/* a knob or prctl the modelled kernel (--kernel) does not have */
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
/* How many of each cost term the model charged so far (cost_model.h). */
void ksm_cost_counts(const struct ksm *k, struct cost_counts *out);
void ksm_policy_stats(const struct ksm *k, struct ksm_policy_stats *out);
void ksm_ideal(struct ksm *k, struct ksm_ideal *out);
uint64_t ksm_knob(const struct ksm *k, enum ksm_knob knob);
/* Some mm has a slot on ksmd's list (MADV_MERGEABLE or prctl, not yet dropped). */
bool ksm_mm_registered(const struct ksm *k);
bool ksm_thp_columns(const struct ksm *k);
enum ksm_kernel ksm_modelled_kernel(const struct ksm *k);	/* opt.kernel */

/* Every live mm's ksm_stat, in name order (output must not depend on hashing). */
GArray *ksm_mm_stats(const struct ksm *k);	/* of struct ksm_mm_stat */

/*
 * Where the model's memory goes, in bytes, as its structures hold it now
 * (for `ksmsim bench model`): allocated arenas count whole, heap objects at
 * their size plus the allocator's and GLib's tree nodes' overhead (an
 * estimate: 16 and 40 bytes).
 */
struct ksm_memory {
	uint64_t rmap_items, rmap_item_count;	/* slab arenas; items live */
	uint64_t pages;				/* slab arenas of struct page */
	uint64_t stable_nodes, stable_node_count;	/* slab arenas; nodes, chains and dups in the trees */
	uint64_t contents, content_objects;	/* pool, intern table, overlays and whole pages */
	uint64_t page_tables, pt_chunks;	/* the mms' PTE chunks */
	uint64_t mms, mm_count;			/* struct mm, its VMAs, slot and name tables */
	uint64_t total;
};
void ksm_memory(const struct ksm *k, struct ksm_memory *out);

/*
 * Exposure (sim/exposure.c, sim/MODEL.md "Exposure"): for every merge of a
 * page into a KSM page (or the KSM zero page), whether it joins pages of
 * different security domains (cross) or one (within), and the
 * distributions of the time from the page's last write to the merge, of
 * the time a mapping stayed merged until its CoW or unshare, and of the
 * distinct domains sharing each KSM page at its peak. Times in the model's
 * µs; percentiles nearest-rank, exact.
 */
enum ksm_expo_figure {
	KSM_EXPO_WRITE_TO_MERGE,	/* µs from the page's last write to its merge */
	KSM_EXPO_MERGED,		/* µs from the merge to its CoW or unshare */
	KSM_EXPO_DOMAINS,		/* distinct domains sharing a KSM page at its peak */
	KSM_EXPO_NR,
};
enum ksm_expo_scope { KSM_EXPO_CROSS, KSM_EXPO_WITHIN, KSM_EXPO_SCOPES };
struct ksm_expo_dist {
	uint64_t count, p50, p90, p99, max;
};
struct ksm_exposure {
	struct ksm_expo_dist d[KSM_EXPO_SCOPES][KSM_EXPO_NR];
	uint64_t zero_merges;		/* of the merges within: into the KSM zero page */
	/* per named domain (--domain order): its pages' cross merges, the first two figures */
	size_t named;
	struct ksm_expo_dist (*by_domain)[2];
	/*
	 * Saving at the end: pages_sharing plus KSM zero PTEs; the part that
	 * partitioning by domain would lose (each KSM page's distinct domains
	 * less one), and of that part what KSM pages of zeroes hold.
	 */
	uint64_t saved, saved_cross, saved_cross_zero;
	/*
	 * The unmap channel: present PTEs unmapped (munmap, exit) or unmerged
	 * (MADV_UNMERGEABLE, prctl 0), all and per named domain; of those of a
	 * merged mapping whose KSM page another domain maps (cross) or only
	 * its own (within), µs from the page's last write before its merge to
	 * the unmap that revealed it; cross reveals whose KSM page is a chain's dup.
	 */
	uint64_t unmaps, reveals_in_chain;
	struct ksm_expo_dist unmap_reveal[KSM_EXPO_SCOPES];
	struct ksm_expo_dist *reveal_by_domain;	/* [named] */
	uint64_t *unmaps_by_domain;		/* [named] */
};
/* The figures so far; NULL by_domain with named 0. ksm_exposure_free frees by_domain. */
void ksm_exposure(const struct ksm *k, struct ksm_exposure *out);
void ksm_exposure_free(struct ksm_exposure *e);
/*
 * Bytes the exposure figures add per written page: their side tables (a
 * page's last store, an item's merge, a node's peak) and sample arrays
 * (measured: +63 on 1 Mi pages, sim/MODEL.md "Sizing a run").
 */
#define KSM_EXPOSURE_PAGE_BYTES 64u
/* Mms named in opt.domains that the model never saw spawned or forked: the first, or NULL. */
const char *ksm_domains_unseen(const struct ksm *k);

/* Invariant checker: NULL when all hold, else a description (g_free it). */
char *ksm_check(struct ksm *k);

#endif
