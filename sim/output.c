// SPDX-License-Identifier: GPL-2.0-or-later
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include "sim/output.h"

/* The version whose columns a row of the model shows (ksm_thp_columns, --kernel). */
static int rows_version(bool thp, bool linux_6_1)
{
	return (thp ? MARKS_THP_VERSION : 0) | (linux_6_1 ? MARKS_LINUX_6_1 : 0);
}

/* A snapshot as marks_put_values() takes it. */
static struct marks_values values_of(const struct snapshot *s)
{
	return (struct marks_values){
		.c = &s->c, .t = &s->t, .ideal = s->has_ideal ? &s->ideal : NULL,
	};
}

void snapshot_take(struct ksm *k, bool with_ideal, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->thp = ksm_thp_columns(k);
	s->linux_6_1 = ksm_modelled_kernel(k) == KSM_KERNEL_6_1;
	ksm_counters(k, &s->c);
	ksm_truth(k, &s->t);
	if (with_ideal) {
		ksm_ideal(k, &s->ideal);
		s->has_ideal = true;
	}
}

void output_marks_header(FILE *f, bool thp, bool linux_6_1)
{
	marks_write_header(f, MARKS_SET_ALL, rows_version(thp, linux_6_1));
}

void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s)
{
	struct marks_values v = values_of(s);

	marks_write_row(f, MARKS_SET_ALL, rows_version(s->thp, s->linux_6_1), label, t_us, &v);
}

void output_series_header(FILE *f, bool thp, bool linux_6_1)
{
	fputs("t_us,trace_t_us", f);
	marks_put_header(f, MARKS_SET_ALL, rows_version(thp, linux_6_1));
	fputc('\n', f);
}

void output_series_row(FILE *f, uint64_t sim_us, uint64_t trace_us, const struct snapshot *s)
{
	struct marks_values v = values_of(s);

	fprintf(f, "%" PRIu64 ",%" PRIu64, sim_us, trace_us);
	marks_put_values(f, MARKS_SET_ALL, rows_version(s->thp, s->linux_6_1), &v);
	fputc('\n', f);
}

/* Which policies a statistic belongs to. */
enum policy_stat_of { OF_DIRTY_BIT, OF_PARTIAL, OF_CLASSES };

static bool policy_stat_mine(const struct ksm_policy *p, enum policy_stat_of of)
{
	switch (of) {
	case OF_DIRTY_BIT:
		return p->detector == KSM_DETECT_DIRTY_BIT;
	case OF_PARTIAL:
		return p->detector == KSM_DETECT_PARTIAL;
	case OF_CLASSES:	/* classes by a page feature; selective's by domain say nothing */
		return p->classes > 1 && p->class_by < KSM_CLASS_BY_DOMAIN;
	}
	return false;
}

void output_policy_text(FILE *f, const struct ksm_policy *p, const struct ksm_policy_stats *ps)
{
	static const struct {
		const char *name;
		size_t off;
		enum policy_stat_of of;
		const char *what;
	} rows[] = {
#define PS(field, of, what) { #field, offsetof(struct ksm_policy_stats, field), of, what }
		PS(dirty_checks, OF_DIRTY_BIT, "visits that tested the dirty bit"),
		PS(dirty_flushes, OF_DIRTY_BIT, "... found it set: cleared, TLB flushed"),
		PS(dirty_same_bytes, OF_DIRTY_BIT, "... set although the bytes had not changed"),
		PS(partial_words, OF_PARTIAL, "32-bit words sampled"),
		PS(partial_grows, OF_PARTIAL, "times a VMA's sample doubled after a miss"),
		PS(class_searches, OF_CLASSES, "unstable-tree inserts checked against other classes"),
		PS(class_lost, OF_CLASSES, "... that another class could have merged"),
#undef PS
	};
	fprintf(f, "\npolicy %s\n", ksm_policy_name(p));
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		uint64_t v = *(const uint64_t *)((const char *)ps + rows[i].off);
		if (policy_stat_mine(p, rows[i].of))
			fprintf(f, "  %-30s %12" PRIu64 "  %s\n", rows[i].name, v, rows[i].what);
	}
}

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
	struct marks_values v = values_of(s);

	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];
		char buf[64];

		if (i == 0)
			fprintf(f, "kernel counters (/sys/kernel/mm/ksm, /proc/vmstat)\n");
		else if (marks_in_format(col - 1) && !marks_in_format(col))
			fprintf(f, "\nwhat the kernel cannot see\n");
		if (!marks_shown(col, MARKS_SET_ALL, rows_version(s->thp, s->linux_6_1)))
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
	struct marks_values end = values_of(&rs->end);
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

static const char *const expo_figures[KSM_EXPO_NR] = {
	[KSM_EXPO_WRITE_TO_MERGE] = "write_to_merge_us",
	[KSM_EXPO_MERGED] = "merged_us",
	[KSM_EXPO_DOMAINS] = "domains_at_peak",
};

static void expo_row(FILE *f, const char *scope, const char *figure, const struct ksm_expo_dist *d)
{
	marks_put_field(f, scope, true);
	fprintf(f, ",%s,%" PRIu64, figure, d->count);
	if (d->count)
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", d->p50, d->p90,
			d->p99, d->max);
	else
		fputs(",,,,\n", f);
}

static void expo_count(FILE *f, const char *figure, uint64_t v)
{
	fprintf(f, "all,%s,%" PRIu64 ",,,,\n", figure, v);
}

void output_false_positives_header(FILE *f)
{
	fputs("t_us,mm,vpn,checksum,bytes_changed,changed_bytes\n", f);
}

void output_false_positive_row(FILE *f, const struct ksm_false_positive *fp)
{
	fprintf(f, "%" PRIu64 ",%s,0x%" PRIx32 ",0x%" PRIx64 ",%" PRIu32 ",%s\n", fp->t_us, fp->mm,
		fp->vpn, fp->checksum, fp->bytes_changed, fp->ranges);
}

void output_exposure_csv(FILE *f, const struct ksm_exposure *e, const struct ksm_domains *d)
{
	static const char *const scopes[KSM_EXPO_SCOPES] = { "cross", "within" };

	fputs("scope,figure,count,p50,p90,p99,max\n", f);
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		for (int i = 0; i < KSM_EXPO_NR; i++)
			expo_row(f, scopes[s], expo_figures[i], &e->d[s][i]);
	for (size_t i = 0; i < e->named && d; i++) {
		char *scope = g_strdup_printf("domain:%s", (const char *)d->names->pdata[i]);
		for (int j = 0; j < 2; j++)
			expo_row(f, scope, expo_figures[j], &e->by_domain[i][j]);
		g_free(scope);
	}
	expo_count(f, "zero_merges", e->zero_merges);
	expo_count(f, "saved_pages", e->saved);
	expo_count(f, "saved_cross_pages", e->saved_cross);
	expo_count(f, "saved_cross_zero_pages", e->saved_cross_zero);
	if (!e->unmaps)
		return;		/* the unmap channel's rows: only when a PTE was unmapped or unmerged */
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		expo_row(f, scopes[s], "unmap_reveal_us", &e->unmap_reveal[s]);
	for (size_t i = 0; i < e->named && d; i++) {
		char *scope = g_strdup_printf("domain:%s", (const char *)d->names->pdata[i]);
		expo_row(f, scope, "unmap_reveal_us", &e->reveal_by_domain[i]);
		marks_put_field(f, scope, true);
		fprintf(f, ",unmaps,%" PRIu64 ",,,,\n", e->unmaps_by_domain[i]);
		g_free(scope);
	}
	expo_count(f, "unmaps", e->unmaps);
	expo_count(f, "unmap_reveals_in_chain", e->reveals_in_chain);
}

static void expo_line(FILE *f, const char *what, const struct ksm_expo_dist *d, bool us)
{
	if (!d->count) {
		fprintf(f, "  %-34s none\n", what);
		return;
	}
	if (us)
		fprintf(f, "  %-34s p50 %.3f s, p99 %.3f s, max %.3f s\n", what, d->p50 / 1e6,
			d->p99 / 1e6, d->max / 1e6);
	else
		fprintf(f, "  %-34s p50 %" PRIu64 ", p99 %" PRIu64 ", max %" PRIu64 "\n", what, d->p50,
			d->p99, d->max);
}

void output_exposure_text(FILE *f, const struct ksm_exposure *e)
{
	const struct ksm_expo_dist *c = e->d[KSM_EXPO_CROSS], *w = e->d[KSM_EXPO_WITHIN];

	fprintf(f, "Exposure: %" PRIu64 " merges across security domains, %" PRIu64 " within one"
		" (%" PRIu64 " into the zero page)\n", c[KSM_EXPO_WRITE_TO_MERGE].count,
		w[KSM_EXPO_WRITE_TO_MERGE].count, e->zero_merges);
	expo_line(f, "across: last write to merge", &c[KSM_EXPO_WRITE_TO_MERGE], true);
	expo_line(f, "across: merged until CoW/unshare", &c[KSM_EXPO_MERGED], true);
	expo_line(f, "across: domains per KSM page", &c[KSM_EXPO_DOMAINS], false);
	fprintf(f, "  saving across domains at the end:  %" PRIu64 " of %" PRIu64 " pages saved"
		" (%" PRIu64 " of them zero pages)\n", e->saved_cross, e->saved, e->saved_cross_zero);
}
