// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim advise: the runs (one fork()ed worker per configuration), the
 * frontier and the pick, and the table, CSV and plot of them (advise.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analysis/advise.h"
#include "analysis/frontier.h"
#include "analysis/gnuplot.h"
#include "analysis/workers.h"
#include "marks/marks.h"
#include "sim/output.h"
#include "traces/reader.h"

G_DEFINE_QUARK(ksmsim-advise-error-quark, advise_error)

static bool is_kernel(const struct advise_config *c)
{
	return !strcmp(ksm_policy_name(&c->policy), "kernel");
}

static const char *hash_column(const struct advise_config *c)
{
	return c->hash ? c->hash->name : "none";
}

char *advise_config_name(const struct advise_config *c)
{
	if (!c->hash)
		return g_strdup(ksm_policy_name(&c->policy));
	return g_strdup_printf("%s/%s", ksm_policy_name(&c->policy), c->hash->name);
}

bool advise_config_run(const struct advise_opts *o, const struct advise_config *c,
		       struct run_config *run, GError **error)
{
	*run = o->run;
	run->hash = c->hash;
	run->model.policy = c->policy;
	return run_config_resolve(run, error);
}

/* ------------------------------------------------------------ one run */

struct advise_job {
	const struct advise_opts *o;
	const struct advise_config *cfg;
};

/* One configuration, as `ksmsim run` replays it with the same options (in a worker). */
static int run_one(const void *ctx, size_t i, void *out, char *why, size_t why_size)
{
	const struct advise_job *job = ctx;
	const struct advise_opts *o = job->o;
	const struct advise_config *c = &job->cfg[i];
	struct run_config cfg;
	struct run run = { 0 };
	struct advise_row *row = out;
	int status = WORKERS_OK;
	int64_t t0 = g_get_monotonic_time();
	struct series_stats st = { 0 };
	struct sampler sm;
	/* run's samples, without the oracle: the pick needs none before the end */
	struct loop_sinks sinks = {
		.sample = sampler_sink,
		.sample_every_us = o->run.interval_ms * 1000,
		.ctx = &sm,
	};
	struct loop_result res;
	GError *error = NULL;

	sampler_init(&sm, &st, NULL, false, o->run.interval_ms, o->run.interval_ms);
	if (!advise_config_run(o, c, &cfg, &error) || !run_open(&run, &cfg, &error) ||
	    !run_replay(&run, &sinks, &res, &error)) {
		status = run_error_status(error);
		g_strlcpy(why, error->message, why_size);
		g_error_free(error);
	} else {
		struct snapshot s;

		sampler_finish(&sm, run.k);
		snapshot_take(run.k, cfg.ideal, &s);
		row->cpu_ms = frontier_round(s.t.cpu_ns / 1e6, 3);
		row->pages_sharing = s.c.pages_sharing;
		row->ksm_zero_pages = s.c.ksm_zero_pages;
		row->saved_end = snapshot_saved(&s);
		row->samples = st.samples;
		row->saved_mean = st.samples ?
			frontier_round((double)st.saved.sum / (double)st.samples, 3) :
			(double)row->saved_end;
		row->cow_ksm = s.c.cow_ksm;
		row->false_positives = s.t.false_positives;
		row->corrupt_walks = s.t.unstable_corrupt_walks;
		row->checksums = s.t.checksums;
		row->has_missed = s.has_ideal;
		row->missed_merges = s.has_ideal ? s.ideal.missed_merges : 0;
		ksm_policy_stats(run.k, &row->stats);
		row->wall_s = (g_get_monotonic_time() - t0) / 1e6;
	}
	run_close(&run);
	return status;
}

/* ------------------------------------------------------------ the workers */

static char *job_name(const void *ctx, size_t i)
{
	return advise_config_name(&((const struct advise_job *)ctx)->cfg[i]);
}

bool advise_run(const struct advise_opts *o, const struct advise_config *cfg, size_t n,
		struct advise_row *rows, GError **error)
{
	struct advise_job job = { o, cfg };
	struct workers_spec s = {
		.n = n, .row_size = sizeof(*rows), .jobs = o->jobs, .run = run_one,
		.name = job_name, .ctx = &job, .prog = "ksmsim advise", .verbose = o->verbose,
		.domain = ADVISE_ERROR,
	};

	return workers_run(&s, rows, error);
}

/* ------------------------------------------------------------ frontier, pick */

/* The rows as the frontier sees them: CPU in ms (g_free). */
static struct frontier_point *points(const struct advise_row *rows, size_t n)
{
	struct frontier_point *p = g_new(struct frontier_point, n ? n : 1);

	for (size_t i = 0; i < n; i++)
		p[i] = (struct frontier_point){ rows[i].cpu_ms, rows[i].saved_mean };
	return p;
}

/*
 * The kernel rows the pick is chosen from: those whose gate let no changed
 * page through, when there are any. Pages a blind checksum seems to save
 * were merged while they changed, and CoW takes them back.
 */
static bool candidate(const struct advise_config *cfg, const struct advise_row *rows, size_t n,
		      size_t i)
{
	bool clean = false;

	if (!is_kernel(&cfg[i]))
		return false;
	for (size_t j = 0; j < n; j++)
		if (is_kernel(&cfg[j]) && !rows[j].false_positives)
			clean = true;
	return !clean || !rows[i].false_positives;
}

long advise_judge(const struct advise_config *cfg, struct advise_row *rows, size_t n)
{
	struct frontier_point *p = points(rows, n);
	bool *on = g_new(bool, n ? n : 1), *cand = g_new(bool, n ? n : 1);

	frontier_mark(p, n, on);
	for (size_t i = 0; i < n; i++) {
		rows[i].frontier = on[i];
		rows[i].pick = false;
		cand[i] = candidate(cfg, rows, n, i);
	}
	long pick = frontier_best(p, n, cand);
	if (pick >= 0)
		rows[pick].pick = true;
	g_free(cand);
	g_free(on);
	g_free(p);
	return pick;
}

/* ------------------------------------------------------------ outputs */

/* The policy figures that are not zero, "name=N ...", or "". */
static void stats_text(GString *s, const struct ksm_policy_stats *st)
{
	const struct { const char *name; uint64_t v; } f[] = {
		{ "dirty_checks", st->dirty_checks }, { "dirty_flushes", st->dirty_flushes },
		{ "dirty_same_bytes", st->dirty_same_bytes }, { "partial_words", st->partial_words },
		{ "partial_grows", st->partial_grows }, { "class_searches", st->class_searches },
		{ "class_lost", st->class_lost },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(f); i++)
		if (f[i].v)
			g_string_append_printf(s, "%s%s=%" PRIu64, s->len ? " " : "", f[i].name, f[i].v);
}

enum { T_POLICY, T_HASH, T_CPU, T_END, T_MEAN, T_COW, T_FP, T_WALKS, T_SUMS, T_MISSED, T_MARK,
       T_STATS, T_NR };
static const char *const t_head[T_NR] = {
	"policy", "hash", "ksmd_cpu_ms", "saved_end", "saved_mean", "cow_ksm", "false_pos",
	"corrupt_walks", "checksums", "missed", "pareto", "policy_stats",
};

void advise_table(FILE *f, const struct advise_config *cfg, const struct advise_row *rows,
		  size_t n, long pick)
{
	gchar **cell = g_new0(gchar *, (n + 1) * T_NR);
	int width[T_NR];

	for (int c = 0; c < T_NR; c++)
		cell[c] = g_strdup(t_head[c]);
	for (size_t i = 0; i < n; i++) {
		const struct advise_row *r = &rows[i];
		gchar **row = &cell[(i + 1) * T_NR];
		GString *st = g_string_new(NULL);

		stats_text(st, &r->stats);
		row[T_POLICY] = g_strdup(ksm_policy_name(&cfg[i].policy));
		row[T_HASH] = g_strdup(hash_column(&cfg[i]));
		row[T_CPU] = g_strdup_printf("%.3f", r->cpu_ms);
		row[T_END] = g_strdup_printf("%" PRIu64, r->saved_end);
		row[T_MEAN] = g_strdup_printf("%.1f", r->saved_mean);
		row[T_COW] = g_strdup_printf("%" PRIu64, r->cow_ksm);
		row[T_FP] = g_strdup_printf("%" PRIu64, r->false_positives);
		row[T_WALKS] = g_strdup_printf("%" PRIu64, r->corrupt_walks);
		row[T_SUMS] = g_strdup_printf("%" PRIu64, r->checksums);
		row[T_MISSED] = r->has_missed ? g_strdup_printf("%" PRIu64, r->missed_merges) :
			g_strdup("-");
		row[T_MARK] = g_strdup(r->frontier && r->pick ? "* pick" : r->frontier ? "*" :
				       r->pick ? "pick" : "");
		row[T_STATS] = g_string_free(st, FALSE);
	}
	for (int c = 0; c < T_NR; c++) {
		width[c] = 0;
		for (size_t i = 0; i <= n; i++)
			width[c] = MAX(width[c], (int)strlen(cell[i * T_NR + c]));
	}
	for (size_t i = 0; i <= n; i++) {
		GString *line = g_string_new(NULL);

		for (int c = 0; c < T_NR; c++) {
			const char *v = cell[i * T_NR + c];
			bool left = c == T_POLICY || c == T_HASH || c == T_MARK || c == T_STATS;

			if (c)
				g_string_append(line, "  ");
			if (c == T_NR - 1)
				g_string_append(line, v);	/* no trailing blanks */
			else
				g_string_append_printf(line, left ? "%-*s" : "%*s", width[c], v);
		}
		while (line->len && line->str[line->len - 1] == ' ')
			g_string_truncate(line, line->len - 1);
		fprintf(f, "%s\n", line->str);
		g_string_free(line, TRUE);
	}
	for (size_t i = 0; i < (n + 1) * T_NR; i++)
		g_free(cell[i]);
	g_free(cell);
	fprintf(f, "\n%zu configurations, one deterministic run each. saved = pages_sharing +"
		" ksm_zero_pages; saved_mean over\nthe samples after t = 0; corrupt_walks ="
		" unstable_corrupt_walks; missed = missed_merges at the end.\n"
		"* = on the Pareto frontier: no other row has no more CPU and no fewer pages saved"
		" on average,\none of them strictly.\n", n);
	advise_verdict(f, cfg, rows, n, pick);
}

/* "kernel/crc32c (1.234 ms, 2595.0 saved)" */
static void put_row_brief(GString *s, const struct advise_config *c, const struct advise_row *r)
{
	char *name = advise_config_name(c);

	g_string_append_printf(s, "%s (%.3f ms, %.1f saved)", name, r->cpu_ms, r->saved_mean);
	g_free(name);
}

void advise_verdict(FILE *f, const struct advise_config *cfg, const struct advise_row *rows,
		    size_t n, long pick)
{
	GString *s = g_string_new(NULL);
	struct frontier_point *pt = points(rows, n);
	size_t *order = g_new(size_t, n ? n : 1);
	bool *in = g_new(bool, n ? n : 1);

	/* the frontier from cheapest to dearest, ties in configuration order */
	for (size_t i = 0; i < n; i++)
		in[i] = rows[i].frontier;
	size_t nf = frontier_by_cpu(pt, n, in, order);
	if (pick < 0) {
		g_string_append(s, "No kernel row, so no checksum to pick");
	} else {
		const struct advise_row *p = &rows[pick];
		long xx = -1;
		GString *blind = g_string_new(NULL);

		for (size_t i = 0; i < n; i++) {
			bool cand = candidate(cfg, rows, n, i);

			/* the candidates cheaper than the pick */
			in[i] = cand && rows[i].cpu_ms < p->cpu_ms;
			if (!is_kernel(&cfg[i]))
				continue;
			if (!strcmp(hash_column(&cfg[i]), HASH_DEFAULT))
				xx = (long)i;
			if (!cand)
				g_string_append_printf(blind, "%s%s (%" PRIu64 ")",
						       blind->len ? ", " : "", cfg[i].hash->name,
						       rows[i].false_positives);
		}
		long cheaper = frontier_cheapest(pt, n, in);
		for (size_t i = 0; i < n; i++)
			in[i] = frontier_dominates(&pt[i], &pt[pick]);
		long dom = frontier_cheapest(pt, n, in);
		g_string_append_printf(s, "Pick %s for this trace: the cheapest checksum whose kernel"
				       " row loses no pages saved against the best kernel row%s (%.3f"
				       " ms of modelled ksmd CPU", cfg[pick].hash->name,
				       blind->len ? " without false positives" : "", p->cpu_ms);
		if (xx == pick)
			g_string_append(s, ", and the kernel's own choice");
		else if (xx >= 0)
			g_string_append_printf(s, " against %.3f ms for %s, the kernel's",
					       rows[xx].cpu_ms, HASH_DEFAULT);
		g_string_append_printf(s, "; %.1f pages saved on average", p->saved_mean);
		if (cheaper >= 0)
			g_string_append_printf(s, "; the cheaper %s saves %.1f fewer",
					       cfg[cheaper].hash->name,
					       p->saved_mean - rows[cheaper].saved_mean);
		g_string_append_c(s, ')');
		if (blind->len)
			g_string_append_printf(s, ", leaving out the checksums whose gate let"
					       " changed pages through (false positives): %s",
					       blind->str);
		g_string_free(blind, TRUE);
		if (dom >= 0) {
			g_string_append(s, ", though ");
			put_row_brief(s, &cfg[dom], &rows[dom]);
			g_string_append(s, " dominates it");
		}
	}
	g_string_append(s, "; on the Pareto frontier overall: ");
	for (size_t k = 0; k < nf; k++) {
		if (k)
			g_string_append(s, k + 1 == nf ? " and " : ", ");
		put_row_brief(s, &cfg[order[k]], &rows[order[k]]);
	}
	fprintf(f, "%s.\n", s->str);
	g_string_free(s, TRUE);
	g_free(in);
	g_free(order);
	g_free(pt);
}

void advise_csv(FILE *f, const struct advise_config *cfg, const struct advise_row *rows,
		size_t n)
{
	fputs("policy,hash,ksmd_cpu_ms,saved_end,saved_mean,pages_sharing,ksm_zero_pages,samples,"
	      "cow_ksm,false_positives,unstable_corrupt_walks,checksums,missed_merges,"
	      "dirty_checks,dirty_flushes,dirty_same_bytes,partial_words,partial_grows,"
	      "class_searches,class_lost,frontier,pick\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct advise_row *r = &rows[i];
		const struct ksm_policy_stats *st = &r->stats;

		marks_put_field(f, ksm_policy_name(&cfg[i].policy), true);
		marks_put_field(f, hash_column(&cfg[i]), false);
		fprintf(f, ",%.3f,%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->cpu_ms, r->saved_end,
			r->saved_mean, r->pages_sharing, r->ksm_zero_pages, r->samples, r->cow_ksm,
			r->false_positives, r->corrupt_walks, r->checksums);
		if (r->has_missed)
			fprintf(f, "%" PRIu64, r->missed_merges);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%d,%d\n", st->dirty_checks, st->dirty_flushes,
			st->dirty_same_bytes, st->partial_words, st->partial_grows,
			st->class_searches, st->class_lost, r->frontier, r->pick);
	}
}

/* ------------------------------------------------------------ the plot */

bool advise_plot_available(GError **error)
{
	return gnuplot_available(ADVISE_ERROR, error);
}

/* Today's kernel: the kernel policy with its own checksum, xxhash. */
static bool is_today(const struct advise_config *c)
{
	char *name = advise_config_name(c);
	bool today = strcmp(name, "kernel/" HASH_DEFAULT) == 0;

	g_free(name);
	return today;
}

/*
 * One datablock of rows, x y "label" (which: 0 dominated, 1 frontier, 2
 * the pick, 3 today's kernel); frontier rows in CPU order so the
 * staircase joins them.
 */
static void gp_block(GString *s, const char *name, const struct advise_config *cfg,
		     const struct advise_row *rows, size_t n, int which)
{
	struct frontier_point *pt = points(rows, n);
	size_t *order = g_new(size_t, n ? n : 1);
	bool *in = g_new(bool, n ? n : 1);

	for (size_t i = 0; i < n; i++)
		in[i] = which == 0 ? !rows[i].frontier : which == 1 ? rows[i].frontier :
			which == 2 ? rows[i].pick : is_today(&cfg[i]);
	size_t m = frontier_by_cpu(pt, n, in, order);
	g_free(in);
	g_free(pt);
	g_string_append_printf(s, "$%s << EOD\n", name);
	for (size_t k = 0; k < m; k++) {
		char *label = advise_config_name(&cfg[order[k]]);

		g_string_append_printf(s, "%.3f %.3f \"%s\"\n", rows[order[k]].cpu_ms,
				       rows[order[k]].saved_mean, label);
		g_free(label);
	}
	/* gnuplot refuses to plot an empty block: one point off the chart */
	if (!m)
		g_string_append(s, "NaN NaN \"\"\n");
	g_string_append(s, "EOD\n");
	/*
	 * Labels one by one. Along the frontier CPU and pages saved rise
	 * together, so the cheapest point's label goes below it, the others'
	 * above, the pick's further below. Today's kernel keeps only its
	 * legend entry: its label met the frontier's at the same height.
	 * Dominated rows stay unlabelled: many share one pages-saved value, and
	 * their labels would cover each other (the table names every row).
	 */
	for (size_t k = 0; which && which != 3 && k < m; k++) {
		char *label = advise_config_name(&cfg[order[k]]);

		g_string_append(s, "set label ");
		gnuplot_quoted(s, label);
		g_string_append_printf(s, " at %.3f,%.3f left offset 1.2,%s tc rgb '%s'%s\n",
				       rows[order[k]].cpu_ms, rows[order[k]].saved_mean,
				       which == 2 ? "-2.0" : k ? "0.9" : "-0.9",
				       which == 2 ? "#0050c0" : "#c00000", "");
		g_free(label);
	}
	g_free(order);
}

bool advise_plot(FILE *png, const char *title, const struct advise_config *cfg,
		 const struct advise_row *rows, size_t n, GError **error)
{
	GString *s = g_string_new(NULL);

	g_string_append(s, "set terminal pngcairo size 1100,700 noenhanced font ',11'\n"
			"set title ");
	gnuplot_quoted(s, title);
	/* ranges set here: gnuplot complains of an empty one when every row saves the same */
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].cpu_ms > 0)
			xmin = MIN(xmin, rows[i].cpu_ms);
		xmax = MAX(xmax, rows[i].cpu_ms);
		ymin = MIN(ymin, rows[i].saved_mean);
		ymax = MAX(ymax, rows[i].saved_mean);
	}
	if (!n)
		ymin = ymax = 0;
	if (!(xmin < INFINITY) || xmax <= 0)
		xmin = xmax = 1;
	double pad = MAX(MAX((ymax - ymin) * 0.08, fabs(ymax) * 0.01), 1.0);
	/* a log scale: the sha rows cost ten times the rest, which would crowd together */
	g_string_append_printf(s, "\nset xlabel 'modelled ksmd CPU (ms, log scale)'\n"
			       "set ylabel 'pages saved (pages_sharing + ksm_zero_pages), mean over"
			       " the run'\nset grid xtics ytics\nset key below horizontal\n"
			       "set logscale x\nset xrange [%.6g:%.6g]\nset yrange [%.3f:%.3f]\n",
			       xmin / 1.25, xmax * 2.2, ymin - pad, ymax + pad);
	gnuplot_log_tics(s, xmin / 1.25, xmax * 2.2);
	gp_block(s, "rest", cfg, rows, n, 0);
	gp_block(s, "front", cfg, rows, n, 1);
	gp_block(s, "pick", cfg, rows, n, 2);
	gp_block(s, "today", cfg, rows, n, 3);
	/*
	 * The frontier as a staircase: between two of its points, more CPU
	 * buys nothing until the next one. Only from three points on: a line
	 * through two says no more than the two points do.
	 */
	size_t on_front = 0;
	for (size_t i = 0; i < n; i++)
		on_front += rows[i].frontier != 0;
	g_string_append(s, "plot $rest using 1:2 with points pt 7 ps 1.1 lc rgb 'gray60'"
			" title 'dominated', ");
	if (on_front >= 3)
		g_string_append(s, "$front using 1:2 with steps lw 2 lc rgb '#c00000' notitle, ");
	g_string_append(s, "$front using 1:2 with points pt 7 ps 1.7 lc rgb '#c00000'"
			" title 'Pareto frontier', "
			"$pick using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#0050c0'"
			" title 'pick (kernel checksum)', "
			"$today using 1:2 with points pt 4 ps 3.6 lw 2 lc rgb '#208020'"
			" title 'today: kernel/xxhash'\n");
	bool ok = gnuplot_draw(png, s->str, ADVISE_ERROR, error);

	g_string_free(s, TRUE);
	return ok;
}
