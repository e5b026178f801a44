/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `ksmsim advise`: one trace replayed under every checksum with each policy
 * whose decision reads it, and once under each policy that reads none; the
 * rows, their Pareto frontier (less modelled ksmd CPU, more pages saved on
 * average over the run) and the checksum to pick for the kernel.
 *
 * Every configuration runs in a fork()ed process of its own: a run's
 * content store is current process-wide (content/content.h), so threads
 * could not share it, and a
 * fresh process per run keeps every row independent of the others and of
 * the number of workers. A worker sends its fixed-size row back through a
 * pipe; rows are kept in configuration order, so no output depends on which
 * worker finished first.
 */
#ifndef KSMSIM_ANALYSIS_ADVISE_H
#define KSMSIM_ANALYSIS_ADVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>
#include "hashes/hash.h"
#include "sim/ksm.h"
#include "sim/run.h"

/* Why a run failed: the code is the command's exit status. */
#define ADVISE_ERROR (advise_error_quark())
GQuark advise_error_quark(void);
enum advise_error_code {
	ADVISE_ERROR_INVARIANT = 1,	/* --check found the model inconsistent */
	ADVISE_ERROR_INPUT = 2,		/* the trace, or a worker that could not run */
};

struct advise_config {
	struct ksm_policy policy;
	const struct page_hash *hash;	/* NULL: the policy reads no checksum ("none") */
};

/* One configuration's figures: plain data, as a worker writes it to its pipe. */
struct advise_row {
	double cpu_ms;			/* truth.cpu_ns, to run's 3 decimals */
	uint64_t pages_sharing, ksm_zero_pages;
	uint64_t saved_end;		/* pages_sharing + ksm_zero_pages at the end */
	uint64_t samples;		/* those after t = 0 */
	double saved_mean;		/* saved over them, to 3 decimals; no sample: saved_end */
	uint64_t cow_ksm, false_positives, corrupt_walks, checksums;
	bool has_missed;		/* the oracle ran at the end */
	uint64_t missed_merges;
	struct ksm_policy_stats stats;
	double wall_s;			/* the worker's wall time: for stderr, never an output */
	/* advise_judge */
	bool frontier, pick;
};

struct advise_opts {
	/*
	 * The run every configuration shares: the trace, knobs, check, batch
	 * time, costs, the oracle's walk at the end (missed_merges) and the
	 * samples behind saved_mean; each row sets its hash and policy.
	 */
	struct run_config run;
	unsigned jobs;			/* workers at once, 1..WORKERS_MAX_JOBS (analysis/workers.h) */
	bool verbose;			/* a line per finished run on stderr */
};

/* "kernel/xxhash", "dirty-bit": what messages and the plot call a row (g_free). */
char *advise_config_name(const struct advise_config *c);

/* The run of configuration c (sim/run.h), resolved: false with the refusal. */
bool advise_config_run(const struct advise_opts *o, const struct advise_config *c,
		       struct run_config *run, GError **error);

/*
 * Run every configuration, o->jobs at a time; rows[i] for cfg[i]. false
 * with the first failing configuration's error (ADVISE_ERROR, its code the
 * exit status); the workers still running are then stopped.
 */
bool advise_run(const struct advise_opts *o, const struct advise_config *cfg, size_t n,
		struct advise_row *rows, GError **error);

/*
 * Mark the Pareto frontier over all rows (a row is dominated when another
 * has no more CPU and no smaller mean saved, one of the two strictly) and
 * the pick: among the "kernel" rows (only those without false positives,
 * when there are any), the cheapest (ties: the first) whose mean saved
 * equals the largest any of them reached. Returns the pick's index, or -1
 * when no row is a kernel row.
 */
long advise_judge(const struct advise_config *cfg, struct advise_row *rows, size_t n);

/* The aligned table, a line on the marks, and the one-sentence verdict. */
void advise_table(FILE *f, const struct advise_config *cfg, const struct advise_row *rows,
		  size_t n, long pick);
/* The verdict alone, one line. */
void advise_verdict(FILE *f, const struct advise_config *cfg, const struct advise_row *rows,
		    size_t n, long pick);
/* A header line, then one row per configuration. */
void advise_csv(FILE *f, const struct advise_config *cfg, const struct advise_row *rows,
		size_t n);

/* Whether gnuplot with the pngcairo terminal can be started: checked before any work. */
bool advise_plot_available(GError **error);
/* CPU against mean saved, frontier rows highlighted and labelled, as a PNG written to png. */
bool advise_plot(FILE *png, const char *title, const struct advise_config *cfg,
		 const struct advise_row *rows, size_t n, GError **error);

#endif
