/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `ksmsim tune`: one trace replayed under a grid of knob settings
 * (pages_to_scan and sleep_millisecs, the scan-time advisor with its target
 * scan time, smart_scan, use_zero_pages, max_page_sharing), each setting
 * in a worker process of its own (analysis/workers.h), so that the output
 * does not depend on --jobs. Per setting: pages saved over the run, at the
 * end and how soon, ksmd's CPU as a share of one CPU, the application's
 * copy-on-write faults on merged pages, rmap_item memory; the frontier of
 * CPU against pages saved, and the setting to use for a CPU budget.
 */
#ifndef KSMSIM_ANALYSIS_TUNE_H
#define KSMSIM_ANALYSIS_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>
#include "sim/run.h"

#define TUNE_ERROR (tune_error_quark())
GQuark tune_error_quark(void);	/* codes: enum workers_status (1 invariant, 2 input) */

/* One point of the grid: every knob it pins for the whole run. */
struct tune_setting {
	uint64_t pages_to_scan;		/* with the advisor: where it starts (advisor_min_pages_to_scan) */
	uint64_t sleep_millisecs;
	bool advisor;			/* advisor_mode scan-time */
	uint64_t target_scan_time;	/* advisor_target_scan_time, s (with advisor) */
	bool smart_scan;
	bool use_zero_pages;
	uint64_t max_page_sharing;
};

/* The default grid (24 settings, README.md and --help say which). */
const struct tune_setting *tune_default_grid(size_t *n);
/* "1000/20", "advisor 60s", "1000/20 smart_scan=0": what the plot and table call it (g_free). */
char *tune_setting_name(const struct tune_setting *s);
/*
 * Parse one setting "pages_to_scan=N,sleep_millisecs=N,..." (the knobs in
 * sysfs spelling; advisor=1 with advisor_target_scan_time=S; the rest as
 * the kernel's defaults): false with the problem (g_free) in *why.
 */
bool tune_setting_parse(const char *text, struct tune_setting *s, char **why);

/* One setting's figures: plain data, as a worker writes it to its pipe. */
struct tune_row {
	double duration_s;		/* simulated time at the end */
	double cpu_ms;			/* modelled ksmd CPU over the run, 3 decimals */
	double cpu_pct;			/* cpu_ms as a share of one CPU over duration_s, 3 decimals */
	uint64_t samples;		/* samples after t = 0 */
	double saved_mean;		/* pages_sharing + ksm_zero_pages over them, 3 decimals */
	uint64_t saved_end;
	bool has_ideal;			/* the oracle ran at the end (not --no-ideal) */
	uint64_t ideal_end;		/* the oracle's ideal_saved at the end */
	double t50_s, t90_s;		/* first sample with saved >= 50% / 90% of ideal_end; < 0: never */
	uint64_t cow_ksm;
	double cow_per_s;		/* cow_ksm / duration_s, 3 decimals */
	uint64_t rmap_items;		/* at the end */
	int64_t general_profit;		/* at the end */
	uint64_t rmap_bytes;		/* saved_end x 4096 - general_profit: the rmap_items' memory */
	uint64_t pages_to_scan_end;	/* what the advisor left it at */
	/* tune_judge */
	bool frontier, pick, within;	/* within: cpu_pct <= the budget */
};

struct tune_opts {
	struct run_config run;		/* the trace, costs, check, interval, ...; each setting pins its knobs */
	unsigned jobs;			/* workers at once */
	bool verbose;			/* a line per finished setting on stderr */
};

/* The run of setting s (sim/run.h), resolved: false with the refusal. */
bool tune_setting_run(const struct tune_opts *o, const struct tune_setting *s,
		      struct run_config *run, GError **error);

/* Every setting, o->jobs at a time; rows[i] for s[i]. False with the first failure. */
bool tune_run(const struct tune_opts *o, const struct tune_setting *s, size_t n,
	      struct tune_row *rows, GError **error);

/*
 * The frontier (a row is on it unless another has no more CPU and no
 * smaller mean saved, one strictly), the rows within budget_pct, and the
 * pick: among those within, the largest mean saved (ties: the least CPU,
 * then the first listed); when none is within, the cheapest. Returns it.
 */
long tune_judge(struct tune_row *rows, size_t n, double budget_pct);

/*
 * What the outputs say beyond the rows: the budget, the CPU price's spread
 * (the modelled CPU is good to about +-15% against the live ksmd,
 * sim/MODEL.md; the pick's band is the settings whose CPU lies within it),
 * the memory the trace maps (what the saving is a share of) and the run
 * every setting shares (the reproduce line).
 */
struct tune_frame {
	const char *trace, *costs_csv;
	double budget_pct;
	double spread_pct;		/* +- percent of a setting's CPU figure */
	uint64_t mapped_pages;		/* the most pages the trace maps at once; 0: unknown */
	const struct run_config *run;	/* the run options given to tune, before a setting's knobs */
};
#define TUNE_SPREAD_DEFAULT 15.0

/* The most pages path maps at once (as `trace stat` counts them): false with the reader's error. */
bool tune_trace_mapped(const char *path, uint64_t *pages, GError **error);

/*
 * The pick's band: band[i] when rows[i]'s CPU lies within the pick's CPU
 * +- spread_pct (ties and the pick itself included); how many.
 */
size_t tune_band(const struct tune_row *rows, size_t n, long pick, double spread_pct, bool *band);

/*
 * The table, the costs line, the recommendation with its reasons, its band,
 * the sysfs writes that apply it and those that restore the knobs found
 * (read from /sys/kernel/mm/ksm where readable, else the kernel's
 * defaults), and the `ksmsim run` line that reproduces its row.
 */
void tune_report(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
		 const struct tune_row *rows, size_t n, long pick);
/* The CSV's first line (without its newline). */
extern const char tune_csv_header[];
/* A header, then one row per setting, each complete on its own. */
void tune_csv(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
	      const struct tune_row *rows, size_t n);
/*
 * One JSON object: the frame and an array of the CSV's rows, the same
 * fields under the same names (numbers as numbers, empty cells null).
 */
void tune_json(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
	       const struct tune_row *rows, size_t n, long pick);
/* MiB saved (mean) against ksmd CPU %, the frontier joined, the pick circled, the budget a line. */
bool tune_plot(FILE *png, const char *title, const struct tune_frame *fr,
	       const struct tune_setting *s, const struct tune_row *rows, size_t n, GError **error);

/*
 * A tune CSV read back (tune_read.c), with what tune_plot needs to draw
 * the plot `--plot` drew for the same rows: the settings, their rows and
 * the frame. Every field is the file's, as tune_csv wrote it.
 */
struct tune_table {
	char *trace, *costs;		/* the rows' (one of each) */
	struct tune_frame fr;		/* trace, costs, budget, spread, mapped pages (0: not in the file) */
	struct tune_setting *s;
	struct tune_row *rows;		/* cpu_pct, saved_mean, within, frontier, pick */
	size_t n;
};
/*
 * Reads path: the header tune_csv writes (or the one before mapped_pages
 * and the band's columns were added), every row with the header's fields,
 * each setting's name what its knobs say, every number a number, the
 * trace, costs, budget, spread and mapped pages the same on every row,
 * and within_budget, frontier and recommended what tune_judge makes of the
 * rows. False with "PATH:LINE: problem" (TUNE_ERROR, code 2).
 */
bool tune_csv_read(const char *path, struct tune_table *t, GError **error);
void tune_table_clear(struct tune_table *t);

#endif
