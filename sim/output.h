/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model's numbers as CSV rows and as a human summary. Mark rows start
 * with the format's columns in its order (traces/FORMAT.md) (what the live kernel
 * prints); the columns after them are the simulator's own.
 */
#ifndef KSMSIM_OUTPUT_H
#define KSMSIM_OUTPUT_H

#include <stdio.h>
#include "sim/ksm.h"

/* One snapshot of everything a row shows. */
struct snapshot {
	struct ksm_counters c;
	struct ksm_truth t;
	struct ksm_ideal ideal;
	bool has_ideal;
};

void snapshot_take(struct ksm *k, bool with_ideal, struct snapshot *s);

/* Marks: "label,t_us,<counters>,<extras>" */
void output_marks_header(FILE *f);
void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s);
/* Time series: "t_us,trace_t_us,<counters>,<extras>" */
void output_series_header(FILE *f);
void output_series_row(FILE *f, uint64_t sim_us, uint64_t trace_us, const struct snapshot *s);
/* Summary: a readable table, or CSV: the header, then one row per run, run facts first. */
void output_summary_text(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			 uint64_t records, uint64_t batches, const struct snapshot *s);
void output_summary_header(FILE *f);
void output_summary_row(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			uint64_t records, uint64_t batches, const struct snapshot *s);

#endif
