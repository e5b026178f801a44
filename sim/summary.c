// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A run's summary (output.h): the readable table on standard output and
 * the --summary-csv row (--json is the same row), the end state beside the
 * sampler's means and peaks (sampler.c).
 */
#include <inttypes.h>
#include <stddef.h>
#include "sim/output.h"

void output_digest_note(FILE *f, uint64_t digests)
{
	if (!digests)
		return;
	fprintf(f, "\ndigest content: %" PRIu64 " write/fill records carry a 128-bit digest, not the\n"
		"  page's bytes; equal digests are equal pages and a checksum is a function of\n"
		"  the digest, so checksum false positives cannot be studied on this trace\n"
		"  (false_positives counts stand-in bytes only)\n", digests);
}

void output_summary_text(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			 uint64_t records, uint64_t batches, const struct snapshot *s)
{
	fprintf(f, "ksmsim run: %s, checksum %s%s\n", trace, hash,
		s->linux_6_1 ? ", Linux 6.1 (--kernel 6.1)" : "");
	fprintf(f, "  %" PRIu64 " records, %" PRIu64 " ksmd batches, %.3f s simulated\n\n",
		records, batches, sim_us / 1e6);
	struct marks_values v = output_values(s);

	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];
		char buf[64];

		if (i == 0)
			fprintf(f, "kernel counters (/sys/kernel/mm/ksm, /proc/vmstat)\n");
		else if (marks_in_format(col - 1) && !marks_in_format(col))
			fprintf(f, "\nwhat the kernel cannot see\n");
		if (!marks_shown(col, MARKS_SET_ALL, output_rows_version(s->thp, s->linux_6_1)))
			continue;
		if (col->kind == MARKS_FRACTION) {
			/* a share, and none at all where there is nothing to save */
			if (s->has_ideal && s->ideal.ideal_saved)
				fprintf(f, "  %-30s %13.1f%%  %s\n", col->name,
					100.0 * s->ideal.actual_saved / s->ideal.ideal_saved,
					col->help);
		} else if (marks_format(col, &v, buf, sizeof(buf))) {
			fprintf(f, "  %-30s %14s  %s\n", col->name, buf, col->help);
		}
	}
}

/* The figures a run summary gives the mean and peak of, in the summary's order. */
static const struct {
	const char *name;	/* a marks column's, or the saving's own */
	size_t off;		/* its struct series_stat in struct series_stats */
} series_cols[] = {
	{ "pages_sharing", offsetof(struct series_stats, pages_sharing) },
	{ "pages_unshared", offsetof(struct series_stats, pages_unshared) },
	{ "pages_volatile", offsetof(struct series_stats, pages_volatile) },
	{ "saved", offsetof(struct series_stats, saved) },
};

void run_summary_finish(struct run_summary *rs, struct ksm *k, const struct ksm_options *opt,
			const trace_reader *r, const struct loop_result *res, bool with_ideal)
{
	rs->policy = ksm_policy_name(&opt->policy);
	/* the price each checksum was charged, so a reader need not parse the cost table */
	rs->checksum_ns = opt->costs.checksum_ns;
	rs->workload = trace_reader_gen_fact(r, "workload");
	rs->seed = trace_reader_gen_fact(r, "seed");
	rs->scale = trace_reader_gen_fact(r, "scale");
	rs->res = *res;
	snapshot_take(k, with_ideal, &rs->end);
	for (int i = 0; i < KNOB_NR; i++) {
		rs->knob[i] = ksm_knob(k, i);
		rs->pinned[i] = opt->pinned[i];
		rs->pinned_value[i] = opt->pinned_value[i];
	}
}

static const char *knob_text(enum ksm_knob knob, uint64_t v, char *buf, size_t size)
{
	if (knob == KNOB_ADVISOR_MODE)
		return v == ADVISOR_SCAN_TIME ? "scan-time" : "none";
	snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

/* pages_to_scan is a snapshot column already: the others follow the series figures. */
static bool knob_column(enum ksm_knob knob)
{
	return knob != KNOB_PAGES_TO_SCAN;
}

void output_run_summary_header(FILE *f)
{
	/* one table for runs of any trace: no THP columns */
	fputs("trace,hash,checksum_ns,policy,workload,seed,scale,sim_us,records,batches", f);
	marks_put_header(f, MARKS_SET_ALL, 0);
	fputs(",interval_ms,samples", f);
	for (size_t i = 0; i < G_N_ELEMENTS(series_cols); i++)
		fprintf(f, ",avg_%s,peak_%s", series_cols[i].name, series_cols[i].name);
	fputs(",avg_missed_merges,avg_dedup_fraction,pinned", f);
	for (int i = 0; i < KNOB_NR; i++)
		if (knob_column(i))
			fprintf(f, ",%s", knob_table[i].name);
	fputc('\n', f);
}

/*
 * The end snapshot's cells: one table for runs of any trace and kernel, so
 * under --kernel 6.1 the columns 6.1 lacks are there, and empty.
 */
static void put_summary_values(FILE *f, const struct snapshot *s, const struct marks_values *v)
{
	char buf[64];

	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];

		if (!marks_shown(col, MARKS_SET_ALL, 0))
			continue;
		fputc(',', f);
		if (!(s->linux_6_1 && marks_linux_6_1_lacks(col)) &&
		    marks_format(col, v, buf, sizeof(buf)))
			fputs(buf, f);
	}
}

static void put_fact(FILE *f, const char *text)
{
	marks_put_field(f, text ? text : "", false);
}

void output_run_summary_row(FILE *f, const struct run_summary *rs)
{
	const struct series_stats *st = &rs->series;
	struct marks_values end = output_values(&rs->end);
	char buf[32];

	marks_put_field(f, rs->trace, true);
	put_fact(f, rs->hash);
	/* to the table's 3 decimals (cost_table_write) */
	fprintf(f, ",%.3f", rs->checksum_ns);
	put_fact(f, rs->policy);
	put_fact(f, rs->workload);
	put_fact(f, rs->seed);
	put_fact(f, rs->scale);
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, rs->res.sim_end_us, rs->res.records,
		rs->res.batches);
	put_summary_values(f, &rs->end, &end);
	fprintf(f, ",%" PRIu64 ",%" PRIu64, rs->interval_ms, st->samples);
	for (size_t i = 0; i < G_N_ELEMENTS(series_cols); i++) {
		const struct series_stat *x =
			(const void *)((const char *)st + series_cols[i].off);
		if (st->samples)
			fprintf(f, ",%.3f,%" PRIu64, (double)x->sum / (double)st->samples, x->peak);
		else
			fputs(",,", f);
	}
	if (st->ideal_samples)
		fprintf(f, ",%.3f,%.4f", (double)st->missed_sum / (double)st->ideal_samples,
			st->fraction_sum / (double)st->ideal_samples);
	else
		fputs(",,", f);
	/* "knob=value;..." of the command line's knobs, in the kernel's names */
	fputc(',', f);
	int n = 0;
	if (rs->end.linux_6_1) {
		fputs("kernel=6.1", f);	/* --kernel: a choice of the command line too */
		n++;
	}
	for (int i = 0; i < KNOB_NR; i++)
		if (rs->pinned[i])
			fprintf(f, "%s%s=%s", n++ ? ";" : "", knob_table[i].name,
				knob_text(i, rs->pinned_value[i], buf, sizeof(buf)));
	for (int i = 0; i < KNOB_NR; i++)
		if (knob_column(i) && rs->end.linux_6_1 && ksm_kernel_lacks_knob(KSM_KERNEL_6_1, i))
			fputc(',', f);	/* a knob 6.1 lacks: empty */
		else if (knob_column(i))
			fprintf(f, ",%s", knob_text(i, rs->knob[i], buf, sizeof(buf)));
	fputc('\n', f);
}

static void summary_end(FILE *f, const struct output_run *r, struct ksm *k)
{
	output_run_summary_header(f);
	output_run_summary_row(f, r->sum);
}

const struct run_output summary_output = {
	"summary-csv",
	"the run as one CSV row, columns named in\n"
	"traces/FORMAT.md ('Marks and what a run prints'):\n"
	"trace, hash, checksum_ns (what the run charged a\n"
	"checksum: the cost table's checksum:HASH row),\n"
	"policy; workload, seed, scale of a\n"
	"'ksmsim gen' trace (text forms); the end-of-run\n"
	"columns; over the samples after t = 0 that --csv\n"
	"has (taken without it too): avg_ and peak_ of\n"
	"pages_sharing, pages_unshared, pages_volatile and\n"
	"saved (pages_sharing + ksm_zero_pages, the saving\n"
	"advise and tune report), avg_ of missed_merges and\n"
	"dedup_fraction (over the samples the oracle saw);\n"
	"pinned (the knobs given here, knob=value;...);\n"
	"every knob's value at the end of the run",
	.end = summary_end, .samples = true,
};
