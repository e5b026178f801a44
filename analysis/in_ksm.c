// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * In-KSM study: one trace replayed through the model once per hash, and a
 * table of what each checksum gate let through. The generated trace keeps
 * the unstable tree well above 1 GiB and rewrites two ranges every epoch:
 * one with random words, which every checksum sees, and one with deltas
 * from the common kernel of crc32c and crc32 (workloads/crcdelta.h), which
 * both CRCs miss.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/collide.h"
#include "analysis/study.h"
#include "marks/marks.h"
#include "sim/output.h"
#include "traces/writer.h"
#include "workloads/crcdelta.h"
#include "util/escape.h"

#define GUEST_BASE UINT64_C(0x100000)	/* first vpn of every guest */
#define WINDOW_OFF 2048u		/* the crafted window, mid-page */

/* ----------------------------------------------------------- the trace */

struct out {
	trace_writer *w;
	struct trace_record *rec;	/* reused: each put sets the fields its verb reads */
	GError **error;
	bool ok;
};

static void put(struct out *o, uint64_t t_us, enum trace_verb verb, unsigned guest)
{
	if (!o->ok)
		return;
	o->rec->t_us = t_us;
	o->rec->verb = verb;
	snprintf(o->rec->mm, sizeof(o->rec->mm), "g%u", guest);
	o->ok = trace_writer_put(o->w, o->rec, o->error);
}

static void put_set(struct out *o, enum ksm_knob knob, uint64_t value)
{
	o->rec->knob = knob;
	o->rec->value = value;
	put(o, 0, TRACE_SET, 0);
}

static void put_mark(struct out *o, uint64_t t_us, const char *label)
{
	g_strlcpy(o->rec->label, label, sizeof(o->rec->label));
	put(o, t_us, TRACE_MARK, 0);
}

/* map, advise or fillseq of n pages from vpn */
static void put_range(struct out *o, enum trace_verb verb, unsigned guest, uint64_t vpn,
		      uint64_t n, uint64_t seed)
{
	o->rec->vpn = vpn;
	o->rec->npages = n;
	o->rec->mergeable = true;
	o->rec->seed = seed;
	put(o, 0, verb, guest);
}

static void put_fill_word(struct out *o, uint64_t t_us, unsigned guest, uint64_t vpn,
			  uint64_t n, unsigned word, uint64_t value)
{
	o->rec->vpn = vpn;
	o->rec->npages = n;
	o->rec->content.form = CONTENT_WORD;
	o->rec->content.off = word;
	o->rec->content.value = value;
	put(o, t_us, TRACE_FILL, guest);
}

static void put_fill_bytes(struct out *o, uint64_t t_us, unsigned guest, uint64_t vpn,
			   uint64_t n, const uint8_t *d)
{
	o->rec->vpn = vpn;
	o->rec->npages = n;
	o->rec->content.form = CONTENT_BYTES;
	o->rec->content.off = WINDOW_OFF;
	o->rec->content.len = CRCDELTA_LEN;
	memcpy(o->rec->content.data, d, CRCDELTA_LEN);
	put(o, t_us, TRACE_FILL, guest);
}

static void put_setup(struct out *o, const struct ksm_study_trace *g, uint64_t craft_at)
{
	static const uint8_t zero[CRCDELTA_LEN];

	put_set(o, KNOB_PAGES_TO_SCAN, 4000);
	put_set(o, KNOB_SLEEP_MILLISECS, 20);
	for (unsigned i = 0; i < g->guests; i++) {
		put(o, 0, TRACE_SPAWN, i);
		put_range(o, TRACE_MAP, i, GUEST_BASE, g->pages, 0);
		put_range(o, TRACE_ADVISE, i, GUEST_BASE, g->pages, 0);
		if (g->image)
			put_range(o, TRACE_FILLSEQ, i, GUEST_BASE, g->image, UINT64_C(1) << 40);
		/* private seeds far apart: no page equals another guest's */
		if (g->pages > g->image)
			put_range(o, TRACE_FILLSEQ, i, GUEST_BASE + g->image, g->pages - g->image,
				  (uint64_t)(i + 2) << 40);
		/* the crafted window starts at zero, so each delta is the window's whole content */
		if (g->crafted)
			put_fill_bytes(o, 0, i, craft_at, g->crafted, zero);
	}
	put_set(o, KNOB_RUN, 1);
	put_mark(o, 0, "start");
}

bool collide_ksm_write_trace(const char *path, const struct ksm_study_trace *g,
			     GError **error)
{
	trace_writer *w = trace_writer_open(path, trace_format_from_path(path), error);

	if (!w)
		return false;
	struct out o = { w, g_new0(struct trace_record, 1), error, true };
	struct crc_kernel k;
	uint64_t st = study_stream(g->seed, 9, 0);
	uint64_t priv = g->pages - g->image - g->churn - g->crafted;
	uint64_t churn_at = GUEST_BASE + g->image + priv, craft_at = churn_at + g->churn;
	uint64_t epochs = g->seconds * 1000 / g->epoch_ms;
	uint8_t d[CRCDELTA_LEN];
	gchar *about = g_strdup_printf(
		"ksmsim collide ksm: %u guests x %" PRIu64 " pages (%.2f GiB), seed %" PRIu64 "\n"
		"image %" PRIu64 ", churn %" PRIu64 ", crafted %" PRIu64 " pages per guest, epoch %"
		PRIu64 " ms", g->guests, g->pages, g->guests * g->pages / 262144.0, g->seed,
		g->image, g->churn, g->crafted, g->epoch_ms);

	crcdelta_kernel(&k);
	o.ok = trace_writer_comment(w, about, error);
	g_free(about);
	put_setup(&o, g, craft_at);
	for (uint64_t e = 1; e <= epochs && o.ok; e++) {
		uint64_t t = e * g->epoch_ms * 1000;

		for (unsigned i = 0; i < g->guests; i++) {
			if (g->churn)
				put_fill_word(&o, t, i, churn_at, g->churn, (unsigned)(e % PAGE_WORDS),
					      splitmix64_next(&st));
			if (g->crafted) {
				crcdelta_pick(&k, &st, d);
				put_fill_bytes(&o, t, i, craft_at, g->crafted, d);
			}
			/* every 10th epoch a guest writes to 1% of its image: CoW */
			if (e % 10 == i % 10 && g->image >= 100) {
				uint64_t n = g->image / 100;
				uint64_t at = GUEST_BASE + splitmix64_next(&st) % (g->image - n + 1);

				put_fill_word(&o, t, i, at, n, 0, splitmix64_next(&st));
			}
		}
	}
	put_mark(&o, (epochs + 1) * g->epoch_ms * 1000, "end");
	g_free(o.rec);
	if (!o.ok) {
		trace_writer_abort(w);
		return false;
	}
	return trace_writer_close(w, error);
}

/* ------------------------------------------------------------- the runs */

enum col {
	COL_SHARING, COL_UNSHARED, COL_VOLATILE, COL_COW, COL_CHECKSUMS, COL_GATE_CHANGED,
	COL_FALSE_POSITIVES, COL_INSERTS, COL_CORRUPT_WALKS, COL_CHANGED_AFTER_INSERT,
	COL_MISSED_MERGES, COL_CPU_MS, N_COLS
};

/* The summary columns the table repeats: their marks columns, whose names it shows. */
static const enum marks_col cols[N_COLS] = {
	[COL_SHARING] = MARKS_PAGES_SHARING,
	[COL_UNSHARED] = MARKS_PAGES_UNSHARED,
	[COL_VOLATILE] = MARKS_PAGES_VOLATILE,
	[COL_COW] = MARKS_COW_KSM,
	[COL_CHECKSUMS] = MARKS_CHECKSUMS,
	[COL_GATE_CHANGED] = MARKS_GATE_CHANGED,
	[COL_FALSE_POSITIVES] = MARKS_FALSE_POSITIVES,
	[COL_INSERTS] = MARKS_UNSTABLE_INSERTS,
	[COL_CORRUPT_WALKS] = MARKS_UNSTABLE_CORRUPT_WALKS,
	[COL_CHANGED_AFTER_INSERT] = MARKS_UNSTABLE_CHANGED_AFTER_INSERT,
	[COL_MISSED_MERGES] = MARKS_MISSED_MERGES,
	[COL_CPU_MS] = MARKS_KSMD_CPU_MS,
};
#define col_name(i) (marks_columns[cols[i]].name)

struct row {
	double v[N_COLS];
	double peak_unshared, avg_unshared;	/* over the samples after t = 0 */
};

/* pages_unshared over the run: the final snapshot may fall mid-scan, the peak does not. */
static void row_fill(struct row *row, const struct snapshot *s, const struct series_stats *ser)
{
	char ms[64];

	row->v[COL_SHARING] = (double)s->c.pages_sharing;
	row->v[COL_UNSHARED] = (double)s->c.pages_unshared;
	row->v[COL_VOLATILE] = (double)s->c.pages_volatile;
	row->v[COL_COW] = (double)s->c.cow_ksm;
	row->v[COL_CHECKSUMS] = (double)s->t.checksums;
	row->v[COL_GATE_CHANGED] = (double)s->t.gate_changed;
	row->v[COL_FALSE_POSITIVES] = (double)s->t.false_positives;
	row->v[COL_INSERTS] = (double)s->t.unstable_inserts;
	row->v[COL_CORRUPT_WALKS] = (double)s->t.unstable_corrupt_walks;
	row->v[COL_CHANGED_AFTER_INSERT] = (double)s->t.unstable_changed_after_insert;
	/* without the oracle's walk there is no figure: 0, as an empty summary field */
	row->v[COL_MISSED_MERGES] = s->has_ideal ? (double)s->ideal.missed_merges : 0;
	/* the summary's figure, rounded to its 3 decimals, so the table agrees with --run-csv */
	snprintf(ms, sizeof(ms), "%.3f", s->t.cpu_ns / 1e6);
	row->v[COL_CPU_MS] = g_ascii_strtod(ms, NULL);
	row->peak_unshared = ser->samples ? (double)ser->pages_unshared.peak : NAN;
	row->avg_unshared = ser->samples ? (double)ser->pages_unshared.sum / (double)ser->samples
					 : NAN;
}

/* One replay with hash h, as `ksmsim run` does it with the same options. */
static bool run_one(const struct ksm_study_opts *o, const struct page_hash *h, bool first,
		    struct row *row, GError **error)
{
	struct run_config cfg = o->run;
	struct run run = { 0 };

	cfg.hash = h;
	if (!run_config_resolve(&cfg, error) || !run_open(&run, &cfg, error))
		return false;
	struct run_summary *sum = g_new0(struct run_summary, 1);	/* with two snapshots */
	struct sampler *sm = g_new0(struct sampler, 1);

	/* the samples `ksmsim run` takes, so that --run-csv rows are run's rows */
	sampler_init(sm, &sum->series, NULL, cfg.ideal, cfg.interval_ms, cfg.ideal_interval_ms);
	struct loop_sinks sinks = {
		.sample = sampler_sink,
		.sample_every_us = cfg.interval_ms * 1000,
		.ctx = sm,
	};
	struct loop_result res;
	bool ok = run_replay(&run, &sinks, &res, error);

	if (ok) {
		sampler_finish(sm, run.k);
		sum->trace = o->label;
		sum->hash = cfg.hash_name;
		sum->interval_ms = cfg.interval_ms;
		run_summary_finish(sum, run.k, &run.opt, run.reader, &res, cfg.ideal);
		if (o->run_csv) {
			if (first)
				output_run_summary_header(o->run_csv);
			output_run_summary_row(o->run_csv, sum);
		}
		row_fill(row, &sum->end, &sum->series);
	}
	g_free(sm);
	g_free(sum);
	run_close(&run);
	return ok;
}

static void put_table(const struct ksm_study_opts *o, const struct row *rows)
{
	/* extra insertions: against the hash that inserted fewest, the honest gate */
	double least = INFINITY;

	for (unsigned hi = 0; hi < o->nhashes; hi++)
		least = MIN(least, rows[hi].v[COL_INSERTS]);
	/* the table comes whole once every run succeeded: a failed study prints none of it */
	fprintf(o->table, "%-8s", "hash");
	for (unsigned i = 0; i < N_COLS; i++)
		fprintf(o->table, " %s", col_name(i));
	fprintf(o->table, " extra_unstable_inserts peak_unshared avg_unshared chance_false_positives\n");
	if (o->csv) {
		fputs("hash,bits", o->csv);
		for (unsigned i = 0; i < N_COLS; i++)
			fprintf(o->csv, ",%s", col_name(i));
		fputs(",extra_unstable_inserts,peak_pages_unshared,avg_pages_unshared,"
		      "chance_false_positives\n", o->csv);
	}
	for (unsigned hi = 0; hi < o->nhashes; hi++) {
		const struct page_hash *h = o->hashes[hi];
		const struct row *r = &rows[hi];
		double extra = r->v[COL_INSERTS] - least;
		/* each changed page a random change would pass with probability 2^-bits */
		double chance = r->v[COL_GATE_CHANGED] * ldexp(1.0, -(int)h->bits);

		fprintf(o->table, "%-8s", h->name);
		if (o->csv)
			fprintf(o->csv, "%s,%u", h->name, h->bits);
		for (unsigned i = 0; i < N_COLS; i++) {
			bool ms = i == COL_CPU_MS;

			fprintf(o->table, " %*.*f", (int)strlen(col_name(i)), ms ? 1 : 0, r->v[i]);
			if (o->csv)
				fprintf(o->csv, ",%.*f", ms ? 3 : 0, r->v[i]);
		}
		fprintf(o->table, " %22.0f %13.0f %12.1f %22.3g\n", extra, r->peak_unshared,
			r->avg_unshared, chance);
		if (o->csv)
			fprintf(o->csv, ",%.0f,%.0f,%.1f,%.3g\n", extra, r->peak_unshared,
				r->avg_unshared, chance);
	}
	fprintf(o->table,
		"One deterministic run per hash: every count is exact for this trace. chance_false_positives\n"
		"= gate_changed x 2^-bits, what the gate would let through if every change were random;\n"
		"false positives beyond it come from changes the checksum is blind to.\n");
}

bool collide_ksm(const struct ksm_study_opts *o, GError **error)
{
	struct row *rows;
	bool ok = true;
	struct run_estimate est;

	/*
	 * A trace of digests holds no page bytes: every checksum is a function
	 * of the digest, so what the study counts would be nothing but the
	 * stand-in bytes' collisions. Refused before any run.
	 */
	if (!run_estimate(&o->run, NULL, &est, error))
		return false;
	if (est.digests) {
		g_set_error(error, RUN_ERROR, RUN_ERROR_INPUT, "%s: digest content (trace version 4, "
			    "%" G_GUINT64_FORMAT " records): checksum false positives cannot be "
			    "studied on it (record it with --content bytes)", o->run.trace, est.digests);
		return false;
	}
	rows = g_new0(struct row, o->nhashes ? o->nhashes : 1);
	for (unsigned hi = 0; hi < o->nhashes && ok; hi++) {
		int64_t t0 = g_get_monotonic_time();

		ok = run_one(o, o->hashes[hi], hi == 0, &rows[hi], error);
		if (ok)
			reportf(NULL, "  run %s: %.1f s", o->hashes[hi]->name, study_seconds(t0));
	}
	if (ok)
		put_table(o, rows);
	g_free(rows);
	return ok;
}
