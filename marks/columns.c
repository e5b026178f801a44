// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The marks registry (marks.h): every column of a marks row, in the order
 * rows show it. The names here are the only spelling of the format's
 * columns; a sysfs or vmstat column is named as the kernel names its file.
 */
#include "marks/marks.h"

#define SYS(f, cum, h) { #f, MARKS_SYSFS, MARKS_U64, offsetof(struct ksm_counters, f), 0, cum, h }
#define VM(f, v, h) { #f, MARKS_VMSTAT, MARKS_U64, offsetof(struct ksm_counters, f), v, true, h }
#define MOD(f, h) { #f, MARKS_MODEL, MARKS_U64, offsetof(struct ksm_counters, f), 0, false, h }
#define TRU(f, h) { #f, MARKS_TRUTH, MARKS_U64, offsetof(struct ksm_truth, f), 0, true, h }
#define ORA(f, h) { #f, MARKS_ORACLE, MARKS_U64, offsetof(struct ksm_ideal, f), 0, false, h }

const struct marks_column marks_columns[MARKS_NR] = {
	[MARKS_FULL_SCANS] = SYS(full_scans, true, "completed passes since the trace start"),
	[MARKS_PAGES_SCANNED] = SYS(pages_scanned, true, "rmap items visited"),
	[MARKS_PAGES_SHARED] = SYS(pages_shared, false, "KSM pages in use"),
	[MARKS_PAGES_SHARING] = SYS(pages_sharing, false,
				    "further mappings of KSM pages (memory saved)"),
	[MARKS_PAGES_UNSHARED] = SYS(pages_unshared, false, "items in the unstable tree"),
	[MARKS_PAGES_VOLATILE] = SYS(pages_volatile, false,
				     "items changing too fast to be put in a tree"),
	[MARKS_PAGES_SKIPPED] = SYS(pages_skipped, true, "smart-scan skips"),
	[MARKS_KSM_ZERO_PAGES] = SYS(ksm_zero_pages, false, "PTEs KSM mapped to the zero page"),
	[MARKS_STABLE_NODE_CHAINS] = SYS(stable_node_chains, false, "stable-node chains"),
	[MARKS_STABLE_NODE_DUPS] = SYS(stable_node_dups, false, "dups in chains"),
	[MARKS_GENERAL_PROFIT] = { "general_profit", MARKS_SYSFS, MARKS_I64,
				   offsetof(struct ksm_counters, general_profit), 0, false,
				   "bytes saved minus rmap item overhead" },
	[MARKS_COW_KSM] = VM(cow_ksm, 0, "copy-on-write and unshare faults on KSM pages"),
	[MARKS_THP_FAULT_ALLOC] = VM(thp_fault_alloc, MARKS_THP_VERSION,
				     "THPs a store faulted in (/proc/vmstat)"),
	[MARKS_THP_SPLIT_PAGE] = VM(thp_split_page, MARKS_THP_VERSION,
				    "THPs split into small pages (/proc/vmstat)"),
	[MARKS_THP_SPLIT_PMD] = VM(thp_split_pmd, MARKS_THP_VERSION,
				   "PMD mappings of THPs split (/proc/vmstat)"),
	[MARKS_RMAP_ITEMS] = MOD(rmap_items, "rmap items allocated"),
	[MARKS_PAGES_TO_SCAN] = MOD(pages_to_scan, "pages_to_scan now (the advisor moves it)"),
	[MARKS_CHECKSUMS] = TRU(checksums, "page checksums computed by ksmd"),
	[MARKS_GATE_CHECKS] = TRU(gate_checks, "checksum gate decisions on pages seen before"),
	[MARKS_GATE_CHANGED] = TRU(gate_changed, "... on pages whose bytes had changed"),
	[MARKS_FALSE_POSITIVES] = TRU(false_positives, "... that the checksum judged unchanged"),
	[MARKS_UNSTABLE_INSERTS] = TRU(unstable_inserts, "unstable tree insertions"),
	[MARKS_UNSTABLE_ABORTS] = TRU(unstable_aborts,
				      "unstable searches stopped by a vanished page"),
	[MARKS_UNSTABLE_CORRUPT_WALKS] = TRU(unstable_corrupt_walks,
					     "unstable searches through a changed page"),
	[MARKS_UNSTABLE_CHANGED_AFTER_INSERT] = TRU(unstable_changed_after_insert,
					"inserted pages changed before their next visit"),
	[MARKS_MERGES_TWO] = TRU(merges_two, "KSM pages made from two pages"),
	[MARKS_MERGES_STABLE] = TRU(merges_stable, "pages merged into an existing KSM page"),
	[MARKS_MERGES_ZERO] = TRU(merges_zero, "pages merged with the zero page"),
	[MARKS_MERGES_REFUSED_LRU] = { "merges_refused_lru", MARKS_TRUTH, MARKS_U64,
				       offsetof(struct ksm_truth, merge_refused_lru), 0, true,
		"merges refused: the page was new and still in a per-CPU LRU batch" },
	[MARKS_MEMCMP_CALLS] = TRU(memcmp_calls, "page comparisons"),
	[MARKS_MEMCMP_BYTES] = TRU(memcmp_bytes, "bytes those comparisons read (estimate)"),
	[MARKS_PAGE_COPIES] = TRU(page_copies, "KSM pages copied by CoW or unshare"),
	[MARKS_COW_FRESH] = TRU(cow_fresh, "CoW writes before a full scan ended since the merge"),
	[MARKS_COW_LATER] = TRU(cow_later, "CoW writes later"),
	[MARKS_COW_UNSHARE] = TRU(cow_unshare, "unshare faults (MADV_UNMERGEABLE, run=2)"),
	[MARKS_MMU_INVALIDATIONS] = TRU(mmu_invalidations, "secondary-MMU range invalidations"),
	[MARKS_MMU_CHANGE_PTE] = TRU(mmu_change_pte, "secondary-MMU change_pte-style updates"),
	[MARKS_KSMD_CPU_MS] = { "ksmd_cpu_ms", MARKS_TRUTH, MARKS_MS,
				offsetof(struct ksm_truth, cpu_ns), 0, true,
				"modelled ksmd CPU time", true },
	[MARKS_MERGEABLE_PAGES] = ORA(mergeable_pages, "present pages in mergeable areas"),
	[MARKS_IDEAL_SAVED] = ORA(ideal_saved, "pages an oracle merging everything would save"),
	[MARKS_ACTUAL_SAVED] = ORA(actual_saved, "pages saved now (mappings beyond one of a KSM"
				   " or forked page, zero pages)"),
	[MARKS_MISSED_MERGES] = ORA(missed_merges, "ideal_saved - actual_saved"),
	[MARKS_DEDUP_FRACTION] = { "dedup_fraction", MARKS_ORACLE, MARKS_FRACTION, 0, 0, false,
				   "share of the ideal saving reached" },
};

#undef SYS
#undef VM
#undef MOD
#undef TRU
#undef ORA

bool marks_kernel(const struct marks_column *col)
{
	return col->source == MARKS_SYSFS || col->source == MARKS_VMSTAT;
}

bool marks_measured(const struct marks_column *col)
{
	return col->live;
}

bool marks_in_format(const struct marks_column *col)
{
	return marks_kernel(col) && !col->version;
}

bool marks_linux_6_1_lacks(const struct marks_column *col)
{
	/* pages_scanned and ksm_zero_pages came in 6.6, pages_skipped in 6.7, general_profit in 6.4 */
	return col == &marks_columns[MARKS_PAGES_SCANNED] ||
	       col == &marks_columns[MARKS_PAGES_SKIPPED] ||
	       col == &marks_columns[MARKS_KSM_ZERO_PAGES] ||
	       col == &marks_columns[MARKS_GENERAL_PROFIT];
}

bool marks_shown(const struct marks_column *col, enum marks_set set, int version)
{
	if ((version & MARKS_LINUX_6_1) && marks_linux_6_1_lacks(col))
		return false;
	version &= ~MARKS_LINUX_6_1;
	return col->version <= version && (set == MARKS_SET_ALL || marks_kernel(col) || col->live);
}
