// SPDX-License-Identifier: GPL-2.0-or-later
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <csv.h>
#include "sim/output.h"

enum kind { U64, I64, DBL };

/* Every numeric column: its name and where its value lives in a snapshot. */
static const struct column {
	const char *name;
	enum kind kind;
	size_t off;
	bool ideal;		/* needs the oracle's walk */
	const char *help;
} columns[] = {
#define C(f, h) { #f, U64, offsetof(struct snapshot, c.f), false, h }
#define T(f, h) { #f, U64, offsetof(struct snapshot, t.f), false, h }
#define I(f, h) { #f, U64, offsetof(struct snapshot, ideal.f), true, h }
	C(full_scans, "completed passes since the trace start"),
	C(pages_scanned, "rmap items visited"),
	C(pages_shared, "KSM pages in use"),
	C(pages_sharing, "further mappings of KSM pages (memory saved)"),
	C(pages_unshared, "items in the unstable tree"),
	C(pages_volatile, "items changing too fast to be put in a tree"),
	C(pages_skipped, "smart-scan skips"),
	C(ksm_zero_pages, "PTEs KSM mapped to the zero page"),
	C(stable_node_chains, "stable-node chains"),
	C(stable_node_dups, "dups in chains"),
	{ "general_profit", I64, offsetof(struct snapshot, c.general_profit), false,
	  "bytes saved minus rmap item overhead" },
	C(cow_ksm, "copy-on-write and unshare faults on KSM pages"),
	/* the format's columns (FORMAT.md, "Marks") end here; then, for version 3 traces: */
	C(thp_fault_alloc, "THPs a store faulted in (/proc/vmstat)"),
	C(thp_split_page, "THPs split into small pages (/proc/vmstat)"),
	C(thp_split_pmd, "PMD mappings of THPs split (/proc/vmstat)"),
	C(rmap_items, "rmap items allocated"),
	C(pages_to_scan, "pages_to_scan now (the advisor moves it)"),
	T(checksums, "page checksums computed by ksmd"),
	T(gate_checks, "checksum gate decisions on pages seen before"),
	T(gate_changed, "... on pages whose bytes had changed"),
	T(false_positives, "... that the checksum judged unchanged"),
	T(unstable_inserts, "unstable tree insertions"),
	T(unstable_aborts, "unstable searches stopped by a vanished page"),
	T(unstable_corrupt_walks, "unstable searches through a changed page"),
	T(unstable_changed_after_insert, "inserted pages changed before their next visit"),
	T(merges_two, "KSM pages made from two pages"),
	T(merges_stable, "pages merged into an existing KSM page"),
	T(merges_zero, "pages merged with the zero page"),
	{ "merges_refused_lru", U64, offsetof(struct snapshot, t.merge_refused_lru), false,
	  "merges refused: the page was new and still in a per-CPU LRU batch" },
	T(memcmp_calls, "page comparisons"),
	T(memcmp_bytes, "bytes those comparisons read (estimate)"),
	T(page_copies, "KSM pages copied by CoW or unshare"),
	T(cow_fresh, "CoW writes before a full scan ended since the merge"),
	T(cow_later, "CoW writes later"),
	T(cow_unshare, "unshare faults (MADV_UNMERGEABLE, run=2)"),
	T(mmu_invalidations, "secondary-MMU range invalidations"),
	T(mmu_change_pte, "secondary-MMU change_pte-style updates"),
	{ "ksmd_cpu_ms", DBL, offsetof(struct snapshot, t.cpu_ns), false,
	  "modelled ksmd CPU time" },
	I(mergeable_pages, "present pages in mergeable areas"),
	I(ideal_saved, "pages an oracle merging everything would save"),
	I(actual_saved, "pages saved now (mappings beyond one of a KSM or forked page, zero pages)"),
	I(missed_merges, "ideal_saved - actual_saved"),
#undef C
#undef T
#undef I
};

#define N_SPEC 12	/* columns[] entries that are the format's columns */
#define N_THP 3		/* then the THP columns, shown for version 3 traces only */

static bool shown(size_t i, bool thp)
{
	return thp || i < N_SPEC || i >= N_SPEC + N_THP;
}

void snapshot_take(struct ksm *k, bool with_ideal, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->thp = ksm_thp_columns(k);
	ksm_counters(k, &s->c);
	ksm_truth(k, &s->t);
	if (with_ideal) {
		ksm_ideal(k, &s->ideal);
		s->has_ideal = true;
	}
}

static void put_field(FILE *f, const char *text, bool first)
{
	if (!first)
		fputc(',', f);
	/* Quote only where needed, so plain labels read the same as the kernel's files. */
	if (strpbrk(text, ",\"\r\n \t"))
		csv_fwrite(f, text, strlen(text));
	else
		fputs(text, f);
}

static void put_value(FILE *f, const struct column *col, const struct snapshot *s)
{
	const char *base = (const char *)s + col->off;
	char buf[64];
	if (col->ideal && !s->has_ideal) {
		fputc(',', f);
		return;
	}
	switch (col->kind) {
	case U64:
		snprintf(buf, sizeof(buf), "%" PRIu64, *(const uint64_t *)base);
		break;
	case I64:
		snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)base);
		break;
	case DBL:
		snprintf(buf, sizeof(buf), "%.3f", *(const double *)base / 1e6);
		break;
	}
	fputc(',', f);
	fputs(buf, f);
}

/* Share of the ideal saving reached; all of it when there is none to reach. */
static double dedup_fraction(const struct ksm_ideal *i)
{
	return i->ideal_saved ? (double)i->actual_saved / (double)i->ideal_saved : 1.0;
}

/* The snapshot's columns, each after a comma. */
static void header_cols(FILE *f, bool thp)
{
	for (size_t i = 0; i < G_N_ELEMENTS(columns); i++) {
		if (!shown(i, thp))
			continue;
		fputc(',', f);
		fputs(columns[i].name, f);
	}
	fputs(",dedup_fraction", f);
}

static void row_cols(FILE *f, const struct snapshot *s, bool thp)
{
	for (size_t i = 0; i < G_N_ELEMENTS(columns); i++)
		if (shown(i, thp))
			put_value(f, &columns[i], s);
	if (s->has_ideal)
		fprintf(f, ",%.4f", dedup_fraction(&s->ideal));
	else
		fputc(',', f);
}

static void header_tail(FILE *f, bool thp)
{
	header_cols(f, thp);
	fputc('\n', f);
}

static void row_tail(FILE *f, const struct snapshot *s)
{
	row_cols(f, s, s->thp);
	fputc('\n', f);
}

void output_marks_header(FILE *f, bool thp)
{
	fputs("label,t_us", f);
	header_tail(f, thp);
}

void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s)
{
	put_field(f, label, true);
	fprintf(f, ",%" PRIu64, t_us);
	row_tail(f, s);
}

void output_series_header(FILE *f, bool thp)
{
	fputs("t_us,trace_t_us", f);
	header_tail(f, thp);
}

void output_series_row(FILE *f, uint64_t sim_us, uint64_t trace_us, const struct snapshot *s)
{
	fprintf(f, "%" PRIu64 ",%" PRIu64, sim_us, trace_us);
	row_tail(f, s);
}

void output_policy_text(FILE *f, const struct ksm_policy *p, const struct ksm_policy_stats *ps)
{
	static const struct {
		const char *name;
		size_t off;
		const char *what;
	} rows[] = {
#define PS(field, what) { #field, offsetof(struct ksm_policy_stats, field), what }
		PS(dirty_checks, "visits that tested the dirty bit"),
		PS(dirty_flushes, "... found it set: cleared, TLB flushed"),
		PS(dirty_same_bytes, "... set although the bytes had not changed"),
		PS(partial_words, "32-bit words sampled"),
		PS(partial_grows, "times a VMA's sample doubled after a miss"),
		PS(class_searches, "unstable-tree inserts checked against other classes"),
		PS(class_lost, "... that another class could have merged"),
#undef PS
	};
	fprintf(f, "\npolicy %s\n", ksm_policy_name(p));
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		uint64_t v = *(const uint64_t *)((const char *)ps + rows[i].off);
		bool mine = (p->detector == KSM_DETECT_DIRTY_BIT && rows[i].name[0] == 'd') ||
			    (p->detector == KSM_DETECT_PARTIAL && rows[i].name[0] == 'p') ||
			    (p->classes > 1 && rows[i].name[0] == 'c');
		if (mine)
			fprintf(f, "  %-30s %12" PRIu64 "  %s\n", rows[i].name, v, rows[i].what);
	}
}

void output_summary_text(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			 uint64_t records, uint64_t batches, const struct snapshot *s)
{
	fprintf(f, "ksmsim run: %s, checksum %s\n", trace, hash);
	fprintf(f, "  %" PRIu64 " records, %" PRIu64 " ksmd batches, %.3f s simulated\n\n",
		records, batches, sim_us / 1e6);
	for (size_t i = 0; i < G_N_ELEMENTS(columns); i++) {
		if (i == 0)
			fprintf(f, "kernel counters (/sys/kernel/mm/ksm, /proc/vmstat)\n");
		if (i == N_SPEC)
			fprintf(f, "\nwhat the kernel cannot see\n");
		if ((columns[i].ideal && !s->has_ideal) || !shown(i, s->thp))
			continue;
		const char *base = (const char *)s + columns[i].off;
		char buf[64];
		if (columns[i].kind == U64)
			snprintf(buf, sizeof(buf), "%" PRIu64, *(const uint64_t *)base);
		else if (columns[i].kind == I64)
			snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)base);
		else
			snprintf(buf, sizeof(buf), "%.3f", *(const double *)base / 1e6);
		fprintf(f, "  %-30s %14s  %s\n", columns[i].name, buf, columns[i].help);
	}
	if (s->has_ideal && s->ideal.ideal_saved)
		fprintf(f, "  %-30s %13.1f%%  %s\n", "dedup_fraction",
			100.0 * s->ideal.actual_saved / s->ideal.ideal_saved,
			"share of the ideal saving reached");
}

/* The counters a run summary gives the mean and peak of, in series_stats order. */
static const char *const series_names[] = { "pages_sharing", "pages_unshared", "pages_volatile" };

void series_stats_add(struct series_stats *st, uint64_t sim_us, const struct snapshot *s)
{
	const uint64_t v[] = { s->c.pages_sharing, s->c.pages_unshared, s->c.pages_volatile };

	G_STATIC_ASSERT(G_N_ELEMENTS(v) == G_N_ELEMENTS(series_names));
	if (!sim_us)
		return;
	st->samples++;
	for (size_t i = 0; i < G_N_ELEMENTS(v); i++) {
		st->sum[i] += v[i];
		st->peak[i] = MAX(st->peak[i], v[i]);
	}
	if (s->has_ideal) {
		st->ideal_samples++;
		st->missed_sum += s->ideal.missed_merges;
		st->fraction_sum += dedup_fraction(&s->ideal);
	}
}

void sampler_init(struct sampler *sm, struct series_stats *stats, FILE *series, bool ideal,
		  uint64_t interval_ms, uint64_t ideal_interval_ms)
{
	*sm = (struct sampler){
		.stats = stats,
		.series = series,
		.ideal = ideal,
		.ideal_every_us = (ideal_interval_ms + interval_ms - 1) / interval_ms * interval_ms * 1000,
	};
}

static void sampler_flush(struct sampler *sm)
{
	if (!sm->have_pending)
		return;
	series_stats_add(sm->stats, sm->pending_us, &sm->pending);
	if (sm->series)
		output_series_row(sm->series, sm->pending_us, sm->pending_trace_us, &sm->pending);
	sm->have_pending = false;
}

void sampler_take(struct sampler *sm, struct ksm *k, uint64_t sim_us, uint64_t trace_us)
{
	bool oracle = sm->ideal && sim_us >= sm->next_ideal_us;

	if (oracle)
		sm->next_ideal_us = sim_us + sm->ideal_every_us;
	sampler_flush(sm);
	snapshot_take(k, oracle, &sm->pending);
	sm->pending_us = sim_us;
	sm->pending_trace_us = trace_us;
	sm->have_pending = true;
}

void sampler_finish(struct sampler *sm, struct ksm *k)
{
	if (sm->have_pending && sm->ideal && !sm->pending.has_ideal)
		snapshot_take(k, true, &sm->pending);
	sampler_flush(sm);
}

void run_summary_finish(struct run_summary *rs, struct ksm *k, const struct ksm_options *opt,
			const trace_reader *r, const struct loop_result *res, bool with_ideal)
{
	rs->policy = ksm_policy_name(&opt->policy);
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
	fputs("trace,hash,policy,workload,seed,scale,sim_us,records,batches", f);
	header_cols(f, false);
	fputs(",interval_ms,samples", f);
	for (size_t i = 0; i < G_N_ELEMENTS(series_names); i++)
		fprintf(f, ",avg_%s,peak_%s", series_names[i], series_names[i]);
	fputs(",avg_missed_merges,avg_dedup_fraction,pinned", f);
	for (int i = 0; i < KNOB_NR; i++)
		if (knob_column(i))
			fprintf(f, ",%s", knob_table[i].name);
	fputc('\n', f);
}

static void put_fact(FILE *f, const char *text)
{
	put_field(f, text ? text : "", false);
}

void output_run_summary_row(FILE *f, const struct run_summary *rs)
{
	const struct series_stats *st = &rs->series;
	char buf[32];

	put_field(f, rs->trace, true);
	put_fact(f, rs->hash);
	put_fact(f, rs->policy);
	put_fact(f, rs->workload);
	put_fact(f, rs->seed);
	put_fact(f, rs->scale);
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, rs->res.sim_end_us, rs->res.records,
		rs->res.batches);
	row_cols(f, &rs->end, false);
	fprintf(f, ",%" PRIu64 ",%" PRIu64, rs->interval_ms, st->samples);
	for (size_t i = 0; i < G_N_ELEMENTS(series_names); i++) {
		if (st->samples)
			fprintf(f, ",%.3f,%" PRIu64, (double)st->sum[i] / (double)st->samples,
				st->peak[i]);
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
	for (int i = 0, n = 0; i < KNOB_NR; i++)
		if (rs->pinned[i])
			fprintf(f, "%s%s=%s", n++ ? ";" : "", knob_table[i].name,
				knob_text(i, rs->pinned_value[i], buf, sizeof(buf)));
	for (int i = 0; i < KNOB_NR; i++)
		if (knob_column(i))
			fprintf(f, ",%s", knob_text(i, rs->knob[i], buf, sizeof(buf)));
	fputc('\n', f);
}
