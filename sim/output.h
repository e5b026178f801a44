/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model's numbers as CSV rows and as a human summary, in the columns of
 * the marks registry (marks/marks.h): the format's first, in its order
 * (traces/FORMAT.md, what the live kernel prints), then the simulator's own.
 */
#ifndef KSMSIM_SIM_OUTPUT_H
#define KSMSIM_SIM_OUTPUT_H

#include <stdio.h>
#include "sim/ksm.h"
#include "sim/loop.h"
#include "traces/reader.h"

/* One snapshot of everything a row shows. */
struct snapshot {
	struct ksm_counters c;
	struct ksm_truth t;
	struct ksm_ideal ideal;
	bool has_ideal;
	bool thp;		/* show the THP columns (ksm_thp_columns) */
	bool linux_6_1;		/* --kernel 6.1: without the sysfs files 6.1 lacks */
};

void snapshot_take(struct ksm *k, bool with_ideal, struct snapshot *s);
/* The marks version whose columns a row shows (ksm_thp_columns, --kernel 6.1). */
int output_rows_version(bool thp, bool linux_6_1);
/* A snapshot as marks_put_values() takes it. */
struct marks_values output_values(const struct snapshot *s);

/* Marks (marks_output.c): "label,t_us,<counters>,<extras>" */
/* thp: the THP columns after cow_ksm, as the live replay of a version 3 trace prints them */
/* linux_6_1: without the columns Linux 6.1 lacks (MARKS_LINUX_6_1) */
void output_marks_header(FILE *f, bool thp, bool linux_6_1);
void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s);
/* Time series (sampler.c): "t_us,trace_t_us,<counters>,<extras>" */
void output_series_header(FILE *f, bool thp, bool linux_6_1);
void output_series_row(FILE *f, uint64_t sim_us, uint64_t trace_us, const struct snapshot *s);
/*
 * Summary (summary.c): a readable table, or CSV: the header, then one row
 * per run, run facts first.
 */
void output_summary_text(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			 uint64_t records, uint64_t batches, const struct snapshot *s);

/*
 * After the summary of a run on digest content (trace version 4; digests
 * records with it, nothing printed when 0): false positives cannot be
 * studied on it, since the model only has stand-in bytes (sim/MODEL.md).
 */
void output_digest_note(FILE *f, uint64_t digests);

/* A non-kernel policy's own figures, after the summary (policy_stats.c). */
void output_policy_text(FILE *f, const struct ksm_policy *p, const struct ksm_policy_stats *ps);

/*
 * Means and peaks over a run's time-series samples (sim/loop.h says when
 * they fall). Each stands for the period that ends at it, so the one at
 * t = 0, which stands for none, is left out.
 */
struct series_stat {
	uint64_t sum, peak;
};
struct series_stats {
	uint64_t samples;
	struct series_stat pages_sharing, pages_unshared, pages_volatile;
	struct series_stat saved;	/* pages_sharing + ksm_zero_pages: advise's and tune's saving */
	uint64_t ideal_samples;		/* those with the oracle's figures */
	uint64_t missed_sum;
	double fraction_sum;		/* dedup_fraction */
};
void series_stats_add(struct series_stats *st, uint64_t sim_us, const struct snapshot *s);

/*
 * The time-series samples of a run (sim/sampler.c), as `ksmsim run` takes
 * them (its --csv rows and its summary's means) and `collide ksm`,
 * `advise` and `tune` with it (these two without the oracle): each
 * sample is held until the next one comes, so that the last, the end of
 * the run after which nothing changes, always gets the oracle's walk; the
 * others get it when due, every ideal_every_us (the walk visits every
 * page: at every 1 s sample it would cost more than the run).
 */
#define SAMPLER_IDEAL_INTERVAL_MS 60000	/* `ksmsim run --ideal-interval-ms` default */
struct sampler {
	struct series_stats *stats;
	FILE *series;			/* the --csv rows, or NULL */
	bool ideal;			/* the oracle at all (not --no-ideal) */
	uint64_t ideal_every_us, next_ideal_us;
	struct snapshot pending;
	uint64_t pending_us, pending_trace_us;
	bool have_pending;
	/* each sample after t = 0 as it is counted, or NULL (tune keeps the series) */
	void (*each)(void *each_ctx, uint64_t sim_us, const struct snapshot *s);
	void *each_ctx;
};
/* ideal_interval_ms is rounded up to whole samples, so the oracle's rows are rows. */
void sampler_init(struct sampler *sm, struct series_stats *stats, FILE *series, bool ideal,
		  uint64_t interval_ms, uint64_t ideal_interval_ms);
void sampler_take(struct sampler *sm, struct ksm *k, uint64_t sim_us, uint64_t trace_us);
/* After loop_run succeeded: the last sample, with the oracle. */
void sampler_finish(struct sampler *sm, struct ksm *k);
/* A loop sample sink (struct loop_sinks .sample) whose ctx is a struct sampler. */
bool sampler_sink(void *sampler, uint64_t sim_us, uint64_t trace_us, struct ksm *k,
		  GError **error);
/* The saving a sample shows: merged pages, the zero page's included. */
static inline uint64_t snapshot_saved(const struct snapshot *s)
{
	return s->c.pages_sharing + s->c.ksm_zero_pages;
}

/* A whole run, for a summary row that needs no other file to be read. */
struct run_summary {
	const char *trace;		/* as the outputs name it */
	const char *hash;
	double checksum_ns;		/* what the cost table charged one checksum of hash */
	const char *policy;		/* the merge policy: "kernel", mm/ksm.c's */
	const char *workload, *seed, *scale;	/* the trace's gen line; NULL: none */
	struct loop_result res;
	uint64_t interval_ms;		/* the samples' period */
	struct series_stats series;
	struct snapshot end;		/* at the end of the run */
	uint64_t knob[KNOB_NR];		/* at the end of the run */
	bool pinned[KNOB_NR];		/* fixed from the command line, to pinned_value */
	uint64_t pinned_value[KNOB_NR];
};
/* Facts, knobs and the end snapshot of a run that loop_run finished; series as sampled. */
void run_summary_finish(struct run_summary *rs, struct ksm *k, const struct ksm_options *opt,
			const trace_reader *r, const struct loop_result *res, bool with_ideal);
void output_run_summary_header(FILE *f);
void output_run_summary_row(FILE *f, const struct run_summary *rs);

/*
 * The exposure figures (ksm_exposure, exposure.c) as CSV, "scope,figure,count,p50,p90,
 * p99,max": scope cross, within, or domain:NAME (a named domain's pages in
 * merges across domains); figure write_to_merge_us, merged_us (until the
 * CoW or unshare), domains_at_peak; then scope all with counts only:
 * zero_merges (within, all of them), saved_pages, saved_cross_pages,
 * saved_cross_zero_pages. d names the domains (NULL: none).
 */
void output_exposure_csv(FILE *f, const struct ksm_exposure *e, const struct ksm_domains *d);
/* The same, a few lines for the summary. */
void output_exposure_text(FILE *f, const struct ksm_exposure *e);
/*
 * --false-positives-csv (false_positives.c): the header, then a row per false positive of the
 * gate as the model meets it: t_us, mm, vpn (hex), the checksum (hex, the
 * same before and after), bytes_changed and changed_bytes (offsets in the
 * page, ranges "a-b" joined by ';').
 */
void output_false_positives_header(FILE *f);
void output_false_positive_row(FILE *f, const struct ksm_false_positive *fp);


/* ---- the outputs of a run, one row each (sim/MODEL.md, "Outputs as observers") ---- */

/* What an output sees of its run: the facts its provenance line names, the end's figures. */
struct output_run {
	const char *trace_label;	/* what outputs call the trace */
	const char *hash_label;		/* ... and the checksum (", policy P" for a policy) */
	enum ksm_kernel kernel;		/* the kernel modelled: its columns */
	bool ideal;			/* the oracle's figures at marks (not --no-ideal) */
	bool thp;			/* the THP columns (a version 3 trace) */
	const struct cost_table *costs;	/* the run's prices */
	const struct ksm_policy *policy;	/* the run's (--policy) */
	const struct ksm_domains *domains;	/* --domain's names, or NULL */
	/* at the end: the summary, and the exposure figures when that observer ran */
	const struct run_summary *sum;
	const struct ksm_exposure *expo;
};

/*
 * One output: the option that names its file, its help, and what fills it.
 * attach, before the run, asks the model for the observers it needs
 * (ksm_events.h: exposure, the false-positive log), handed where its
 * stream will be; start writes its provenance line and header, mark its
 * rows at each mark, end its rows when the run is done; samples: it needs
 * the sampler's rows or means (sampler.c). Every hook may be NULL.
 */
struct run_output {
	const char *name;	/* the option, without "--" */
	const char *help;
	void (*attach)(struct ksm_options *opt, FILE *const *f);
	void (*start)(FILE *f, const struct output_run *r);
	void (*mark)(FILE *f, const struct output_run *r, const char *label, uint64_t t_us,
		     struct ksm *k);
	void (*end)(FILE *f, const struct output_run *r, struct ksm *k);
	bool samples;
};

/*
 * The provenance line a CSV of a run starts with, in the one wording:
 * what names the file's contents (NULL: none).
 */
void output_provenance(FILE *f, const struct output_run *r, const char *what);

/* Each output's row, in the file of the observer that fills it. */
extern const struct run_output marks_output;		/* marks_output.c */
extern const struct run_output mm_stats_output;		/* marks_output.c */
extern const struct run_output series_output;		/* sampler.c */
extern const struct run_output summary_output;		/* summary.c */
extern const struct run_output exposure_output;		/* exposure.c */
extern const struct run_output false_positives_output;	/* false_positives.c */
extern const struct run_output profile_output;		/* profile.c */
extern const struct run_output policy_stats_output;	/* policy_stats.c */

#endif
