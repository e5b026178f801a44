/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checks every trace record passes, whatever form it came in: value
 * ranges (trace_record_validate) and the state a trace builds up as it goes
 * (trace_check_apply): time order, which mms live, which pages are mapped
 * and mergeable, the knobs. Shared by the readers and the writers so that
 * text and binary accept exactly the same traces.
 *
 * State is proportional to the live mappings, never to the records: mapped
 * and mergeable ranges are kept as interval sets.
 */
#ifndef KSMSIM_TRACES_CHECK_H
#define KSMSIM_TRACES_CHECK_H

#include "traces/trace.h"

#define TRACE_NODE_MAX 1023	/* MAX_NUMNODES - 1 with NODES_SHIFT 10 */

struct trace_check;

/* Interval set of pages (check.c); fields private to check.c. */
struct iset {
	GTree *t;		/* NULL while the set is one interval or none */
	struct ival {
		uint64_t s, e;	/* pages [s, e) */
	} one;			/* that interval, when one_used */
	bool one_used;
	uint64_t cs, ce;	/* the last interval a lookup hit */
	uint64_t pages;
};

/* One live mm. name and tag may be read by users; tag is theirs to set. */
struct check_mm {
	char name[TRACE_NAME_MAX + 1];
	uint32_t name_len;
	uint32_t tag;		/* e.g. the binary form's slot */
	struct iset mapped;
	struct iset mergeable;
	struct iset written;	/* kept only with trace_check_count_written() */
	struct iset hugepage;	/* v3: ranges advised hugepage (VM_HUGEPAGE), with count_written */
	bool merge_any;		/* v3: prctl memory-merge 1 (MMF_VM_MERGE_ANY), kept across fork */
};

struct trace_check *trace_check_new(void);
void trace_check_free(struct trace_check *ck);

/*
 * Ranges of one record taken alone. NULL when fine, else a new string
 * naming the problem (no location).
 */
char *trace_record_validate(const struct trace_record *rec);

/*
 * Checks rec against the state so far and applies it. mm is the record's mm
 * when the caller already knows it (binary slots), else NULL and it is looked
 * up by name (for fork: the parent). On success returns NULL and, when
 * out_mm is not NULL, stores the record's mm there (the new one for spawn and
 * fork, NULL after exit). On failure returns a new string naming the problem;
 * the state is then unchanged.
 *
 * fork gives the child a copy of the parent's mapped, mergeable and written
 * pages and its merge-any flag. prctl memory-merge 1 makes every mapped page
 * mergeable, and every page mapped later while it holds; memory-merge 0 on an
 * mm with merge-any clears it and every mergeable range (as the kernel's
 * ksm_disable_merge_any() does, madvised ranges included), and does nothing
 * to an mm without it.
 */
char *trace_check_apply(struct trace_check *ck, const struct trace_record *rec,
			struct check_mm *mm, struct check_mm **out_mm);

/* The live mm of that name, or NULL. */
struct check_mm *trace_check_find(struct trace_check *ck, const char *name);

/*
 * Also keep, from now on, which pages have been written (write, fill,
 * fillseq; unmap and exit forget them, fork copies them): what a replay
 * holds in memory. A store into a 2 MiB block that lies wholly in mapped
 * ranges advised hugepage counts the whole block: the model (as the kernel
 * with THP in madvise mode) faults a PMD-sized folio of HPAGE_PMD_NR pages
 * there, each with its struct page and rmap_item once ksmd visits it.
 * Call before the first spawn.
 */
void trace_check_count_written(struct trace_check *ck);
uint64_t trace_check_written_pages(const struct trace_check *ck);
/* Pages mapped in all live mms now, and live mms. */
uint64_t trace_check_mapped_pages(const struct trace_check *ck);
unsigned int trace_check_live_mms(const struct trace_check *ck);

/* True when name is 1..TRACE_NAME_MAX chars of [A-Za-z0-9_.-]. */
bool trace_name_valid(const char *name, size_t len);

#endif
