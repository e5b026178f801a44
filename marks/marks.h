/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The marks format: the CSV row a `mark` record prints (traces/FORMAT.md,
 * "Marks and what a run prints"), the contract between the model (`ksmsim
 * run`), the live kernel (`ksmsim live`) and every conformance test.
 *
 * One registry, marks_columns[], names every column once: where its value
 * comes from, which trace version shows it, whether it counts from the
 * trace's start. The model's and the live replay's writers, the live
 * replay's reads of /sys/kernel/mm/ksm and /proc/vmstat, the model's
 * summary and `ksmsim diff` all take their columns from it; so do the
 * per-mm rows of /proc/PID/ksm_stat (--mm-stats-csv) from theirs,
 * marks_mm_columns[].
 */
#ifndef KSMSIM_MARKS_MARKS_H
#define KSMSIM_MARKS_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>

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
	/* /proc/vmstat (printed for version 3 traces) */
	uint64_t thp_fault_alloc;
	uint64_t thp_split_page;
	uint64_t thp_split_pmd;
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
	uint64_t actual_saved;		/* mappings beyond one of each page (KSM, or shared by a fork) + KSM zero pages */
	uint64_t missed_merges;		/* ideal_saved - actual_saved */
};

/* /proc/PID/ksm_stat of one live mm. */
struct ksm_mm_stat {
	const char *name;
	uint64_t ksm_rmap_items;
	uint64_t ksm_zero_pages;
	uint64_t ksm_merging_pages;
	int64_t ksm_process_profit;
	bool ksm_mergeable;		/* some VMA has VM_MERGEABLE */
	bool ksm_merge_any;		/* MMF_VM_MERGE_ANY (prctl) */
};

/* ------------------------------------------------------------ the registry */

/* Where a column's value comes from, and so which struct holds it. */
enum marks_source {
	MARKS_SYSFS,	/* /sys/kernel/mm/ksm/<name>, in struct ksm_counters */
	MARKS_VMSTAT,	/* /proc/vmstat's <name>, in struct ksm_counters */
	MARKS_MODEL,	/* struct ksm_counters, the model's only: no live file shows it */
	MARKS_TRUTH,	/* struct ksm_truth: what the kernel cannot see */
	MARKS_ORACLE,	/* struct ksm_ideal: the oracle's walk; empty in rows without it */
};

enum marks_kind {
	MARKS_U64,
	MARKS_I64,
	MARKS_MS,	/* a double of nanoseconds, shown in milliseconds */
	MARKS_FRACTION,	/* actual_saved / ideal_saved (1 when there is nothing to save) */
	MARKS_BOOL,	/* 0 or 1 (the per-mm rows) */
};

/* The trace version whose rows add /proc/vmstat's THP events (traces/FORMAT.md). */
#define MARKS_THP_VERSION 3

struct marks_column {
	const char *name;	/* in the header; a sysfs or vmstat column's file or key */
	enum marks_source source;
	enum marks_kind kind;
	size_t off;		/* in the source's struct */
	int version;		/* the oldest trace version whose rows show it; 0: every one */
	bool cumulative;	/* counts from the trace's start (live: less the start's) */
	const char *help;	/* the model's summary */
	bool live;		/* not the kernel's file, yet `ksmsim live` measures it too */
};

/* The columns in the order rows show them: indexes of marks_columns[]. */
enum marks_col {
	/* the format's columns (FORMAT.md, "Marks"), what the live kernel shows */
	MARKS_FULL_SCANS, MARKS_PAGES_SCANNED, MARKS_PAGES_SHARED, MARKS_PAGES_SHARING,
	MARKS_PAGES_UNSHARED, MARKS_PAGES_VOLATILE, MARKS_PAGES_SKIPPED, MARKS_KSM_ZERO_PAGES,
	MARKS_STABLE_NODE_CHAINS, MARKS_STABLE_NODE_DUPS, MARKS_GENERAL_PROFIT, MARKS_COW_KSM,
	/* then, for version 3 traces */
	MARKS_THP_FAULT_ALLOC, MARKS_THP_SPLIT_PAGE, MARKS_THP_SPLIT_PMD,
	/* the model's own */
	MARKS_RMAP_ITEMS, MARKS_PAGES_TO_SCAN,
	MARKS_CHECKSUMS, MARKS_GATE_CHECKS, MARKS_GATE_CHANGED, MARKS_FALSE_POSITIVES,
	MARKS_UNSTABLE_INSERTS, MARKS_UNSTABLE_ABORTS, MARKS_UNSTABLE_CORRUPT_WALKS,
	MARKS_UNSTABLE_CHANGED_AFTER_INSERT, MARKS_MERGES_TWO, MARKS_MERGES_STABLE,
	MARKS_MERGES_ZERO, MARKS_MERGES_REFUSED_LRU, MARKS_MEMCMP_CALLS, MARKS_MEMCMP_BYTES,
	MARKS_PAGE_COPIES, MARKS_COW_FRESH, MARKS_COW_LATER, MARKS_COW_UNSHARE,
	MARKS_MMU_INVALIDATIONS, MARKS_MMU_CHANGE_PTE, MARKS_KSMD_CPU_MS,
	MARKS_MERGEABLE_PAGES, MARKS_IDEAL_SAVED, MARKS_ACTUAL_SAVED, MARKS_MISSED_MERGES,
	MARKS_DEDUP_FRACTION,
	MARKS_NR
};
extern const struct marks_column marks_columns[MARKS_NR];

/* Read from the live kernel: /sys/kernel/mm/ksm or /proc/vmstat. */
bool marks_kernel(const struct marks_column *col);
/* ksmd_cpu_ms: compared by ratio within a tolerance, not exactly (ksmsim diff). */
bool marks_measured(const struct marks_column *col);
/* One of the format's columns: the kernel's, shown for traces of every version. */
bool marks_in_format(const struct marks_column *col);

/* ------------------------------------------------------------ the writers */

/*
 * Which columns a file shows after its own first ones: the kernel's and
 * ksmd_cpu_ms (the one column live measures that no sysfs file shows), as
 * `ksmsim live` prints them, or all, as the model does (the kernel's first,
 * in the same order); either only those its trace version has.
 */
enum marks_set {
	MARKS_SET_KERNEL,
	MARKS_SET_ALL,
};
bool marks_shown(const struct marks_column *col, enum marks_set set, int version);
/*
 * Or'd into a writer's version: rows of a model of Linux 6.1 (--kernel
 * 6.1), which show none of the sysfs files 6.1 does not have
 * (marks_linux_6_1_lacks: pages_scanned, pages_skipped, ksm_zero_pages,
 * general_profit; the per-mm rows keep ksm_rmap_items and
 * ksm_merging_pages only).
 */
#define MARKS_LINUX_6_1 0x100
bool marks_linux_6_1_lacks(const struct marks_column *col);

/* One row's numbers. */
struct marks_values {
	const struct ksm_counters *c;
	const struct ksm_truth *t;		/* MARKS_SET_ALL; live: cpu_ns only, or NULL */
	const struct ksm_ideal *ideal;		/* NULL: the oracle's cells are empty */
};

/* The dedup_fraction column: the share of the ideal saving reached. */
double marks_dedup_fraction(const struct ksm_ideal *i);
/* A value as a row shows it; false: an empty cell (no oracle's walk). */
bool marks_format(const struct marks_column *col, const struct marks_values *v, char *buf,
		  size_t size);
/* A text cell, after a comma unless first, quoted only where CSV needs it. */
void marks_put_field(FILE *f, const char *text, bool first);
/*
 * One CSV line's cells (RFC 4180 quoting, no embedded newlines, each cell
 * stripped), as marks_put_field writes them: NULL with *why on error.
 */
GPtrArray *marks_split_csv(const char *line, const char **why);
/* ",name" for each column set and version show. */
void marks_put_header(FILE *f, enum marks_set set, int version);
/* ",value" for each of them. */
void marks_put_values(FILE *f, enum marks_set set, int version, const struct marks_values *v);
/* "name, name": the kernel's cumulative columns that version shows first (0: the format's). */
void marks_put_cumulative(FILE *f, int version);

/* A marks file: "label,t_us,<columns>" and a row per mark. */
void marks_write_header(FILE *f, enum marks_set set, int version);
void marks_write_row(FILE *f, enum marks_set set, int version, const char *label,
		     uint64_t t_us, const struct marks_values *v);

/* The live kernel's cumulative counters made to count from start. */
void marks_since(struct ksm_counters *now, const struct ksm_counters *start);

/* ------------------------------------------------------- the per-mm rows */

/*
 * The per-mm CSV of /proc/PID/ksm_stat at each mark, written alike by the
 * model (`run --mm-stats-csv`) and the live replay (`live --mm-stats-csv`):
 * one row per live mm, in name order, "label,t_us,mm,<columns>".
 */
struct marks_mm_column {
	const char *name;	/* in the header, and ksm_stat's key ("name:" for a bool) */
	enum marks_kind kind;	/* MARKS_U64, MARKS_I64 or MARKS_BOOL ("yes"/"no" in ksm_stat) */
	size_t off;		/* in struct ksm_mm_stat */
	bool optional;		/* files from before ksmsim knew it lack it */
};
#define MARKS_MM_NR 6
extern const struct marks_mm_column marks_mm_columns[MARKS_MM_NR];

void marks_mm_write_header(FILE *f);
void marks_mm_write_row(FILE *f, const char *label, uint64_t t_us, const struct ksm_mm_stat *st);
/* Column i is not in Linux 6.1's ksm_stat (nor a file of its own there). */
bool marks_mm_linux_6_1_lacks(size_t i);
/* The same, with version 0 or MARKS_LINUX_6_1 (then only the columns 6.1 shows). */
void marks_mm_write_header_for(FILE *f, int version);
void marks_mm_write_row_for(FILE *f, int version, const char *label, uint64_t t_us,
			    const struct ksm_mm_stat *st);

/* ------------------------------------------------------------ the diff */

#define MARKS_ERROR (marks_error_quark())
GQuark marks_error_quark(void);
enum marks_error {
	MARKS_ERROR_BAD,	/* a file cannot be compared: unreadable, or not a marks file */
};

/*
 * Two marks files (or two --mm-stats-csv files) compared cell by cell.
 * Rows pair up by position and must carry the same label (and mm). The
 * columns are t_us and the kernel's (the ksm_stat columns for per-mm
 * files; those older files lack, and those Linux 6.1 has no file for,
 * compared where both have them), or only
 * those named in only (extra columns too), less those in ignore; both
 * lists may be NULL. Cells either file lists in a "cells that differ
 * between runs: label.column=..., ..." comment are skipped.
 *
 * ksmd_cpu_ms (marks_measured) is a time, not a count: where both files
 * have it (and it is not ignored) it is compared apart, by the ratio B/A
 * within 1 +- cpu_tolerance, rows where both values are below cpu_floor_ms
 * counted as agreeing (a batch or two of noise); an empty cell (a live
 * replay that could not see ksmd) is not compared.
 */
#define MARKS_CPU_TOLERANCE_PCT 15.0
#define MARKS_CPU_FLOOR_MS 10.0
struct marks_diff_opts {
	char **only, **ignore;
	double cpu_tolerance;	/* a fraction: 0.15 */
	double cpu_floor_ms;
};
struct marks_cell_diff {
	char *row;		/* label, label@mm, or "row N" when the labels differ */
	char *column;		/* "label" (labels differ), "(row)" (one file lacks the row) */
	char *a, *b;		/* NULL: the row is missing on that side */
	bool has_delta;		/* both integers */
	long long delta;	/* b - a */
};
struct marks_cpu_cell {
	char *row;
	double a_ms, b_ms;
	double ratio;		/* b / a; 0 when a is 0 */
	bool below_floor;	/* both under cpu_floor_ms: agreeing */
	bool within;		/* below_floor, or the ratio within tolerance */
};
struct marks_diff {
	GArray *cells;		/* struct marks_cell_diff, in file order: the exact counters */
	GArray *cpu;		/* struct marks_cpu_cell, one per row compared (empty: none) */
	unsigned rows_a, rows_b;
	unsigned compared, skipped;
	unsigned cpu_outside;	/* cpu cells outside the tolerance */
	const char *cpu_column;	/* the column cpu compares, or NULL when neither file has it */
};
/* false: a file is unreadable or not a marks file (MARKS_ERROR, naming file:line). */
bool marks_diff(const char *path_a, const char *path_b, const struct marks_diff_opts *opts,
		struct marks_diff *out, GError **error);
void marks_diff_clear(struct marks_diff *d);

#endif
