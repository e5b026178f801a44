/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-mm CSV of /proc/PID/ksm_stat at each mark, written alike by the
 * model (`run --mm-stats-csv`) and the live replay (`live --mm-stats-csv`)
 * so that `ksmsim diff` can compare them: one row per live mm, in name
 * order, "label,t_us,mm,ksm_rmap_items,ksm_zero_pages,ksm_merging_pages,
 * ksm_process_profit,ksm_mergeable,ksm_merge_any" (the last two 0/1;
 * ksm_merge_any was added with trace version 3). Kept apart from the
 * model's headers: live/ has its own view of the kernel's counters.
 */
#ifndef KSMSIM_SIM_KSM_STAT_CSV_H
#define KSMSIM_SIM_KSM_STAT_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ksm_stat_row {
	const char *mm;
	uint64_t ksm_rmap_items;
	uint64_t ksm_zero_pages;
	uint64_t ksm_merging_pages;
	int64_t ksm_process_profit;
	bool ksm_mergeable;
	bool ksm_merge_any;
};

void ksm_stat_csv_header(FILE *f);
void ksm_stat_csv_row(FILE *f, const char *label, uint64_t t_us, const struct ksm_stat_row *r);

#endif
