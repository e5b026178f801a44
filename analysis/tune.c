// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim tune: the grid, one run per setting in a worker (workers.h), the
 * figures of a run, the frontier and the pick, and the report, CSV and
 * plot of them (tune.h).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "analysis/frontier.h"
#include "analysis/gnuplot.h"
#include "analysis/tune.h"
#include "marks/marks.h"
#include "analysis/workers.h"
#include "sim/output.h"
#include "util/escape.h"
#include "util/parse.h"

G_DEFINE_QUARK(ksmsim-tune-error-quark, tune_error)

#define MPS_DEFAULT 256		/* max_page_sharing's default (knob_table) */
#define T20 20			/* sleep_millisecs' default */

/*
 * The default grid: what operators use, from the kernel's default (100
 * pages every 20 ms) to 3000 every 20 ms (Meta's "substantial" setting),
 * the same rates reached with longer sleeps, the scan-time advisor at four
 * target scan times, and at 1000 and 3000 pages / 20 ms without smart
 * scan, with KSM zero pages, and two max_page_sharing values.
 */
#define PS(p, s) { .pages_to_scan = (p), .sleep_millisecs = (s), .smart_scan = true, \
		   .max_page_sharing = MPS_DEFAULT }
#define ADV(t) { .pages_to_scan = 500, .sleep_millisecs = T20, .advisor = true, \
		 .target_scan_time = (t), .smart_scan = true, .max_page_sharing = MPS_DEFAULT }
static const struct tune_setting default_grid[] = {
	PS(100, T20), PS(200, T20), PS(500, T20), PS(1000, T20), PS(1500, T20), PS(2000, T20),
	PS(3000, T20),
	PS(500, 50), PS(1000, 50), PS(3000, 50), PS(1000, 100), PS(3000, 100), PS(1600, 200),
	PS(3000, 200),
	ADV(200), ADV(60), ADV(20), ADV(5),
	{ .pages_to_scan = 1000, .sleep_millisecs = T20, .max_page_sharing = MPS_DEFAULT },
	{ .pages_to_scan = 3000, .sleep_millisecs = T20, .max_page_sharing = MPS_DEFAULT },
	{ .pages_to_scan = 1000, .sleep_millisecs = T20, .smart_scan = true, .use_zero_pages = true,
	  .max_page_sharing = MPS_DEFAULT },
	{ .pages_to_scan = 3000, .sleep_millisecs = T20, .smart_scan = true, .use_zero_pages = true,
	  .max_page_sharing = MPS_DEFAULT },
	{ .pages_to_scan = 1000, .sleep_millisecs = T20, .smart_scan = true, .max_page_sharing = 64 },
	{ .pages_to_scan = 1000, .sleep_millisecs = T20, .smart_scan = true, .max_page_sharing = 1024 },
};
#undef PS
#undef ADV

const struct tune_setting *tune_default_grid(size_t *n)
{
	*n = G_N_ELEMENTS(default_grid);
	return default_grid;
}

char *tune_setting_name(const struct tune_setting *s)
{
	GString *g = g_string_new(NULL);

	if (s->advisor)
		g_string_append_printf(g, "advisor %" PRIu64 "s", s->target_scan_time);
	else
		g_string_append_printf(g, "%" PRIu64 "/%" PRIu64, s->pages_to_scan,
				       s->sleep_millisecs);
	if (s->advisor && s->sleep_millisecs != T20)
		g_string_append_printf(g, " sleep=%" PRIu64, s->sleep_millisecs);
	if (!s->smart_scan)
		g_string_append(g, " smart_scan=0");
	if (s->use_zero_pages)
		g_string_append(g, " zero_pages");
	if (s->max_page_sharing != MPS_DEFAULT)
		g_string_append_printf(g, " mps=%" PRIu64, s->max_page_sharing);
	return g_string_free(g, FALSE);
}

bool tune_setting_parse(const char *text, struct tune_setting *s, char **why)
{
	static const enum ksm_knob knobs[] = {
		KNOB_PAGES_TO_SCAN, KNOB_SLEEP_MILLISECS, KNOB_SMART_SCAN, KNOB_USE_ZERO_PAGES,
		KNOB_MAX_PAGE_SHARING, KNOB_ADVISOR_TARGET_SCAN_TIME,
	};
	gchar **parts = g_strsplit(text, ",", -1);
	bool ok = true, pages_given = false;

	*s = (struct tune_setting){ .pages_to_scan = knob_table[KNOB_PAGES_TO_SCAN].def,
				    .sleep_millisecs = T20, .smart_scan = true,
				    .target_scan_time = knob_table[KNOB_ADVISOR_TARGET_SCAN_TIME].def,
				    .max_page_sharing = MPS_DEFAULT };
	*why = NULL;
	if (!*text) {
		*why = g_strdup("an empty setting");
		ok = false;
	}
	for (gchar **p = parts; ok && *p; p++) {
		char *eq = strchr(*p, '=');
		uint64_t v = 0;
		int k = -1;

		if (!eq) {
			*why = g_strdup_printf("'%s' is not KNOB=VALUE", *p);
			ok = false;
			break;
		}
		*eq = '\0';
		if (!strcmp(*p, "advisor")) {
			if (!parse_u64(eq + 1, 1, &v)) {
				*why = g_strdup_printf("advisor wants 0 or 1, not '%s'", eq + 1);
				ok = false;
			}
			s->advisor = v;
			continue;
		}
		for (size_t i = 0; i < G_N_ELEMENTS(knobs); i++)
			if (!strcmp(*p, knob_table[knobs[i]].name))
				k = knobs[i];
		if (k < 0) {
			*why = g_strdup_printf("unknown knob '%s' (pages_to_scan, sleep_millisecs, "
					       "advisor, advisor_target_scan_time, smart_scan, "
					       "use_zero_pages, max_page_sharing)", *p);
			ok = false;
			break;
		}
		const struct knob_info *kn = &knob_table[k];
		if (!parse_u64(eq + 1, kn->max, &v) || v < kn->min) {
			*why = g_strdup_printf("%s wants %" PRIu64 "..%" PRIu64 ", not '%s'", kn->name,
					       kn->min, kn->max, eq + 1);
			ok = false;
			break;
		}
		switch (k) {
		case KNOB_PAGES_TO_SCAN: s->pages_to_scan = v; pages_given = true; break;
		case KNOB_SLEEP_MILLISECS: s->sleep_millisecs = v; break;
		case KNOB_SMART_SCAN: s->smart_scan = v; break;
		case KNOB_USE_ZERO_PAGES: s->use_zero_pages = v; break;
		case KNOB_MAX_PAGE_SHARING: s->max_page_sharing = v; break;
		default: s->target_scan_time = v; break;
		}
	}
	if (ok && s->advisor && pages_given) {
		*why = g_strdup("pages_to_scan cannot be set with the advisor, which drives it "
				"(it starts at advisor_min_pages_to_scan)");
		ok = false;
	}
	if (ok && s->advisor)
		s->pages_to_scan = knob_table[KNOB_ADVISOR_MIN_PAGES_TO_SCAN].def;
	g_strfreev(parts);
	return ok;
}

static void pin(struct ksm_options *m, enum ksm_knob k, uint64_t v)
{
	m->pinned[k] = true;
	m->pinned_value[k] = v;
}

bool tune_setting_run(const struct tune_opts *o, const struct tune_setting *s,
		      struct run_config *run, GError **error)
{
	*run = o->run;
	/*
	 * Every knob of the grid pinned, so the trace's own `set`s of them are
	 * ignored; the advisor starts where the kernel's set_advisor_defaults
	 * puts it, and moves pages_to_scan from there.
	 */
	pin(&run->model, KNOB_PAGES_TO_SCAN, s->pages_to_scan);
	pin(&run->model, KNOB_SLEEP_MILLISECS, s->sleep_millisecs);
	pin(&run->model, KNOB_ADVISOR_MODE, s->advisor ? ADVISOR_SCAN_TIME : ADVISOR_NONE);
	if (s->advisor)
		pin(&run->model, KNOB_ADVISOR_TARGET_SCAN_TIME, s->target_scan_time);
	pin(&run->model, KNOB_SMART_SCAN, s->smart_scan);
	pin(&run->model, KNOB_USE_ZERO_PAGES, s->use_zero_pages);
	pin(&run->model, KNOB_MAX_PAGE_SHARING, s->max_page_sharing);
	return run_config_resolve(run, error);
}

/* ------------------------------------------------------------ one run */

struct series {
	GArray *t_us, *saved;	/* of uint64_t: the samples after t = 0 */
};

static bool on_sample(void *p, uint64_t sim_us, uint64_t trace_us, struct ksm *k, GError **error)
{
	struct series *s = p;
	struct ksm_counters c;

	if (!sim_us)
		return true;
	ksm_counters(k, &c);
	uint64_t saved = c.pages_sharing + c.ksm_zero_pages;
	g_array_append_val(s->t_us, sim_us);
	g_array_append_val(s->saved, saved);
	return true;
}

/* The first sample time with saved >= share x ideal, in s; -1 when none. */
static double reach(const struct series *s, uint64_t ideal, double share)
{
	if (!ideal)
		return -1;
	for (guint i = 0; i < s->t_us->len; i++)
		if ((double)g_array_index(s->saved, uint64_t, i) >= share * (double)ideal)
			return frontier_round(g_array_index(s->t_us, uint64_t, i) / 1e6, 3);
	return -1;
}

struct tune_job {
	const struct tune_opts *o;
	const struct tune_setting *s;
};

/* One setting, as `ksmsim run` replays it with the same knobs pinned (in a worker). */
static int run_one(const void *ctx, size_t i, void *out, char *why, size_t why_size)
{
	const struct tune_job *job = ctx;
	struct run_config cfg;
	struct run run = { 0 };
	struct tune_row *row = out;
	struct series ser = { g_array_new(FALSE, FALSE, sizeof(uint64_t)),
			      g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	struct loop_sinks sinks = {
		.sample = on_sample,
		.sample_every_us = job->o->run.interval_ms * 1000,
		.ctx = &ser,
	};
	struct loop_result res;
	GError *error = NULL;
	int status = WORKERS_OK;

	if (!tune_setting_run(job->o, &job->s[i], &cfg, &error) || !run_open(&run, &cfg, &error) ||
	    !run_replay(&run, &sinks, &res, &error)) {
		status = run_error_status(error);
		g_strlcpy(why, error->message, why_size);
		g_error_free(error);
	} else {
		struct snapshot s;
		uint64_t sum = 0;

		snapshot_take(run.k, cfg.ideal, &s);
		row->duration_s = res.sim_end_us / 1e6;
		row->cpu_ms = frontier_round(s.t.cpu_ns / 1e6, 3);
		row->cpu_pct = res.sim_end_us ?
			frontier_round(s.t.cpu_ns / 1e3 / (double)res.sim_end_us * 100, 3) : 0;
		row->saved_end = s.c.pages_sharing + s.c.ksm_zero_pages;
		row->samples = ser.saved->len;
		for (guint j = 0; j < ser.saved->len; j++)
			sum += g_array_index(ser.saved, uint64_t, j);
		row->saved_mean = row->samples ? frontier_round((double)sum / (double)row->samples, 3) :
			(double)row->saved_end;
		row->has_ideal = s.has_ideal;
		row->ideal_end = s.has_ideal ? s.ideal.ideal_saved : 0;
		row->t50_s = s.has_ideal ? reach(&ser, row->ideal_end, 0.5) : -1;
		row->t90_s = s.has_ideal ? reach(&ser, row->ideal_end, 0.9) : -1;
		row->cow_ksm = s.c.cow_ksm;
		row->cow_per_s = res.sim_end_us ?
			frontier_round((double)s.c.cow_ksm / (res.sim_end_us / 1e6), 3) : 0;
		row->rmap_items = s.c.rmap_items;
		row->general_profit = s.c.general_profit;
		row->rmap_bytes = (uint64_t)((int64_t)(row->saved_end * 4096) - s.c.general_profit);
		row->pages_to_scan_end = s.c.pages_to_scan;
	}
	run_close(&run);
	g_array_free(ser.t_us, TRUE);
	g_array_free(ser.saved, TRUE);
	return status;
}

static char *job_name(const void *ctx, size_t i)
{
	return tune_setting_name(&((const struct tune_job *)ctx)->s[i]);
}

bool tune_run(const struct tune_opts *o, const struct tune_setting *s, size_t n,
	      struct tune_row *rows, GError **error)
{
	struct tune_job job = { o, s };
	struct workers_spec w = {
		.n = n, .row_size = sizeof(*rows), .jobs = o->jobs, .run = run_one,
		.name = job_name, .ctx = &job, .prog = "ksmsim tune", .verbose = o->verbose,
		.domain = TUNE_ERROR,
	};

	return workers_run(&w, rows, error);
}

/* ------------------------------------------------------------ frontier, pick */

/* The rows as the frontier sees them: CPU as a share of one CPU (g_free). */
static struct frontier_point *points(const struct tune_row *rows, size_t n)
{
	struct frontier_point *p = g_new(struct frontier_point, n ? n : 1);

	for (size_t i = 0; i < n; i++)
		p[i] = (struct frontier_point){ rows[i].cpu_pct, rows[i].saved_mean };
	return p;
}

long tune_judge(struct tune_row *rows, size_t n, double budget_pct)
{
	struct frontier_point *p = points(rows, n);
	bool *on = g_new(bool, n ? n : 1), *within = g_new(bool, n ? n : 1);

	frontier_mark(p, n, on);
	for (size_t i = 0; i < n; i++) {
		rows[i].frontier = on[i];
		rows[i].pick = false;
		rows[i].within = within[i] = rows[i].cpu_pct <= budget_pct;
	}
	/* the most saved within the budget; when none is within, the cheapest */
	long pick = frontier_best(p, n, within);
	if (pick < 0)
		pick = frontier_cheapest(p, n, NULL);
	if (pick >= 0)
		rows[pick].pick = true;
	g_free(within);
	g_free(on);
	g_free(p);
	return pick;
}

/* ------------------------------------------------------------ outputs */

static void knobs_text(GString *g, const struct tune_setting *s)
{
	if (s->advisor)
		g_string_append_printf(g, "advisor_mode=scan-time advisor_target_scan_time=%" PRIu64
				       " sleep_millisecs=%" PRIu64, s->target_scan_time,
				       s->sleep_millisecs);
	else
		g_string_append_printf(g, "pages_to_scan=%" PRIu64 " sleep_millisecs=%" PRIu64,
				       s->pages_to_scan, s->sleep_millisecs);
	g_string_append_printf(g, " smart_scan=%d use_zero_pages=%d max_page_sharing=%" PRIu64,
			       s->smart_scan, s->use_zero_pages, s->max_page_sharing);
}

static char *secs(double t)
{
	return t < 0 ? g_strdup("-") : g_strdup_printf("%.3f", t);
}

enum { C_NAME, C_CPU, C_MEAN, C_END, C_IDEAL, C_T50, C_T90, C_COW, C_RMAP, C_PROFIT, C_MARK,
       C_NR };
static const char *const c_head[C_NR] = {
	"setting", "ksmd_cpu_%", "saved_mean", "saved_end", "ideal_end", "t50_s", "t90_s",
	"cow/s", "rmap_KiB", "general_profit", "",
};

static const char *costs_text(const char *costs_csv)
{
	return costs_csv ? costs_csv : NULL;
}

void tune_report(FILE *f, const char *trace, const char *costs_csv, const struct tune_setting *s,
		 const struct tune_row *rows, size_t n, long pick, double budget_pct)
{
	gchar **cell = g_new0(gchar *, (n + 1) * C_NR);
	int width[C_NR] = { 0 };

	for (int c = 0; c < C_NR; c++)
		cell[c] = g_strdup(c_head[c]);
	for (size_t i = 0; i < n; i++) {
		const struct tune_row *r = &rows[i];
		gchar **row = cell + (i + 1) * C_NR;

		row[C_NAME] = tune_setting_name(&s[i]);
		row[C_CPU] = g_strdup_printf("%.3f", r->cpu_pct);
		row[C_MEAN] = g_strdup_printf("%.1f", r->saved_mean);
		row[C_END] = g_strdup_printf("%" PRIu64, r->saved_end);
		row[C_IDEAL] = r->has_ideal ? g_strdup_printf("%" PRIu64, r->ideal_end) : g_strdup("-");
		row[C_T50] = secs(r->t50_s);
		row[C_T90] = secs(r->t90_s);
		row[C_COW] = g_strdup_printf("%.3f", r->cow_per_s);
		row[C_RMAP] = g_strdup_printf("%.1f", r->rmap_bytes / 1024.0);
		row[C_PROFIT] = g_strdup_printf("%" PRId64, r->general_profit);
		row[C_MARK] = g_strdup_printf("%s%s%s", r->frontier ? "*" : "",
					      r->within ? "" : " over", r->pick ? " pick" : "");
	}
	for (size_t i = 0; i <= n; i++)
		for (int c = 0; c < C_NR; c++)
			width[c] = MAX(width[c], (int)g_utf8_strlen(cell[i * C_NR + c], -1));
	for (size_t i = 0; i <= n; i++) {
		GString *line = g_string_new(NULL);

		for (int c = 0; c < C_NR; c++) {
			const char *v = cell[i * C_NR + c];
			int pad = width[c] - (int)g_utf8_strlen(v, -1);

			if (c)
				g_string_append(line, "  ");
			if (c == C_NAME || c == C_MARK) {
				g_string_append(line, v);
				if (c != C_MARK)
					g_string_append_printf(line, "%*s", pad, "");
			} else {
				g_string_append_printf(line, "%*s%s", pad, "", v);
			}
		}
		while (line->len && line->str[line->len - 1] == ' ')
			g_string_truncate(line, line->len - 1);
		fprintf(f, "%s\n", line->str);
		g_string_free(line, TRUE);
	}
	for (size_t i = 0; i < (n + 1) * C_NR; i++)
		g_free(cell[i]);
	g_free(cell);

	char *tname = escape_line(trace);	/* one line, whatever the file is called */

	fprintf(f, "\ntrace %s\n%zu settings, one deterministic run each, every knob of the grid"
		" pinned (the trace's own\nsets of them ignored). saved = pages_sharing +"
		" ksm_zero_pages; saved_mean over the samples after\nt = 0; ideal_end = the"
		" oracle's ideal_saved at the end; t50_s, t90_s = first sample with saved >=\n"
		"50%% / 90%% of ideal_end ('-': never); ksmd_cpu_%% = modelled ksmd CPU as a share of"
		" one CPU over\nthe run; cow/s = cow_ksm per second (the application's copy-on-write"
		" faults on merged pages);\nrmap_KiB = rmap_item memory (saved x 4 KiB -"
		" general_profit). * = on the frontier (no other\nsetting has no more CPU and no"
		" fewer pages saved on average, one strictly); over = above the\nbudget.\n", tname, n);
	g_free(tname);
	if (costs_text(costs_csv))
		fprintf(f, "ksmd CPU from the cost table %s (--costs-csv).\n", costs_csv);
	else
		fprintf(f, "ksmd CPU from the built-in cost table (fitted to the live ksmd of the"
			" reference machine,\nAMD EPYC): give --costs-csv FILE from 'ksmsim bench"
			" calibrate -o' for this machine's.\n");
	if (pick < 0) {
		fprintf(f, "No setting ran: nothing to recommend.\n");
		return;
	}
	const struct tune_row *p = &rows[pick];
	GString *g = g_string_new(NULL);
	knobs_text(g, &s[pick]);
	fprintf(f, "\nRecommended for a budget of %.3g%% of one CPU: %s\n", budget_pct, g->str);
	g_string_free(g, TRUE);
	size_t within = 0;
	struct frontier_point *pt = points(rows, n);
	bool *more = g_new(bool, n);
	for (size_t i = 0; i < n; i++) {
		within += rows[i].within;
		more[i] = rows[i].saved_mean > p->saved_mean;
	}
	long better = frontier_cheapest(pt, n, more);	/* the cheapest that saves more than the pick */
	g_free(more);
	g_free(pt);
	char *name = tune_setting_name(&s[pick]);
	if (!p->within)
		fprintf(f, "Why: no setting stays within %.3g%% of one CPU; %s is the cheapest, at"
			" %.3f%%. Raise --cpu-budget, or leave KSM off.\n", budget_pct, name,
			p->cpu_pct);
	else
		fprintf(f, "Why: of the %zu settings within the budget it saves the most pages on"
			" average (ties: the\nleast CPU): %.1f pages (%.1f MiB)", within, p->saved_mean,
			p->saved_mean * 4096 / (1 << 20));
	if (p->within && p->has_ideal && p->ideal_end)
		fprintf(f, ", %.1f%% of the ideal %" PRIu64 " at the end", 100.0 * p->saved_end /
			(double)p->ideal_end, p->ideal_end);
	if (p->within) {
		fprintf(f, ";\nksmd takes %.3f%% of one CPU", p->cpu_pct);
		if (p->t90_s >= 0)
			fprintf(f, ", 90%% of the ideal saving is reached after %.1f s", p->t90_s);
		else if (p->t50_s >= 0)
			fprintf(f, ", 50%% of the ideal saving after %.1f s (90%% never)", p->t50_s);
		fprintf(f, ", %.3f CoW faults/s, rmap_items %.1f KiB.\n", p->cow_per_s,
			p->rmap_bytes / 1024.0);
		if (better >= 0) {
			char *bn = tune_setting_name(&s[better]);

			fprintf(f, "Saving more takes more CPU: the cheapest setting that saves more, %s,"
				" needs %.3f%% of one CPU\nfor %.1f pages on average.\n", bn,
				rows[better].cpu_pct, rows[better].saved_mean);
			g_free(bn);
		} else {
			fprintf(f, "No setting of the grid saves more on average.\n");
		}
	}
	fflush(f);
	g_free(name);
}

void tune_csv(FILE *f, const char *trace, const char *costs_csv, const struct tune_setting *s,
	      const struct tune_row *rows, size_t n, double budget_pct)
{
	fputs("trace,setting,pages_to_scan,sleep_millisecs,advisor_mode,advisor_target_scan_time,"
	      "smart_scan,use_zero_pages,max_page_sharing,duration_s,ksmd_cpu_ms,ksmd_cpu_pct,"
	      "samples,saved_mean,saved_end,ideal_saved_end,t50_s,t90_s,cow_ksm,cow_per_s,"
	      "rmap_items,rmap_bytes,general_profit,pages_to_scan_end,costs,cpu_budget_pct,"
	      "within_budget,frontier,recommended\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct tune_row *r = &rows[i];
		const struct tune_setting *st = &s[i];
		char *name = tune_setting_name(st);

		marks_put_field(f, trace, true);
		marks_put_field(f, name, false);
		g_free(name);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%s,", st->pages_to_scan, st->sleep_millisecs,
			st->advisor ? "scan-time" : "none");
		if (st->advisor)
			fprintf(f, "%" PRIu64, st->target_scan_time);
		fprintf(f, ",%d,%d,%" PRIu64 ",%.6f,%.3f,%.3f,%" PRIu64 ",%.3f,%" PRIu64 ",",
			st->smart_scan, st->use_zero_pages, st->max_page_sharing, r->duration_s,
			r->cpu_ms, r->cpu_pct, r->samples, r->saved_mean, r->saved_end);
		if (r->has_ideal)
			fprintf(f, "%" PRIu64, r->ideal_end);
		fputc(',', f);
		if (r->t50_s >= 0)
			fprintf(f, "%.3f", r->t50_s);
		fputc(',', f);
		if (r->t90_s >= 0)
			fprintf(f, "%.3f", r->t90_s);
		fprintf(f, ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRIu64 ",",
			r->cow_ksm, r->cow_per_s, r->rmap_items, r->rmap_bytes, r->general_profit,
			r->pages_to_scan_end);
		marks_put_field(f, costs_csv ? costs_csv : "built-in", true);
		/* the budget exactly: %.3f unless that rounds it (0.0001 was 0.000) */
		char b[32];

		snprintf(b, sizeof(b), "%.3f", budget_pct);
		if (strtod(b, NULL) != budget_pct)
			snprintf(b, sizeof(b), "%.17g", budget_pct);
		fprintf(f, ",%s,%d,%d,%d\n", b, r->within, r->frontier, r->pick);
	}
}

/* ------------------------------------------------------------ the plot */

/* One datablock: x y; frontier rows in CPU order so the line joins them. */
static void gp_block(GString *g, const char *name, const struct tune_setting *s,
		     const struct tune_row *rows, size_t n, int which)
{
	struct frontier_point *pt = points(rows, n);
	size_t *order = g_new(size_t, n ? n : 1);
	bool *in = g_new(bool, n ? n : 1);

	for (size_t i = 0; i < n; i++)
		in[i] = which == 0 ? !rows[i].frontier : which == 1 ? rows[i].frontier : rows[i].pick;
	size_t m = frontier_by_cpu(pt, n, in, order);
	g_free(in);
	g_free(pt);
	g_string_append_printf(g, "$%s << EOD\n", name);
	for (size_t k = 0; k < m; k++)
		g_string_append_printf(g, "%.6f %.3f\n", MAX(rows[order[k]].cpu_pct, 1e-6),
				       rows[order[k]].saved_mean);
	/* gnuplot refuses to plot an empty block: one point off the chart */
	if (!m)
		g_string_append(g, "NaN NaN\n");
	g_string_append(g, "EOD\n");
	/*
	 * Labels on the frontier and the pick, alternately above and below;
	 * settings that land on one point (every advisor target, when the
	 * advisor's CPU floor decides) share one label.
	 */
	for (size_t k = 0, nth = 0; which && k < m; k++) {
		const struct tune_row *r = &rows[order[k]];
		GString *names = g_string_new(NULL);

		for (size_t j = 0; j < m; j++) {
			const struct tune_row *q = &rows[order[j]];

			if (q->cpu_pct != r->cpu_pct || q->saved_mean != r->saved_mean)
				continue;
			if (j < k)
				break;	/* labelled with the first of them */
			char *one = tune_setting_name(&s[order[j]]);

			g_string_append_printf(names, "%s%s", names->len ? ", " : "", one);
			g_free(one);
		}
		if (!names->len) {
			g_string_free(names, TRUE);
			continue;
		}
		char *label = g_string_free(names, FALSE);
		size_t k_alt = nth++;

		g_string_append(g, "set label ");
		if (which == 2) {
			/* the pick's label left of it, clear of the frontier's on the right */
			gnuplot_quoted(g, "recommended");
			g_string_append_printf(g, " at %.6f,%.3f right offset -1.8,0.9 tc rgb '#0050c0'\n",
					       MAX(rows[order[k]].cpu_pct, 1e-6),
					       rows[order[k]].saved_mean);
		} else {
			gnuplot_quoted(g, label);
			g_string_append_printf(g, " at %.6f,%.3f left offset 1.2,%s tc rgb '#c00000'\n",
					       MAX(rows[order[k]].cpu_pct, 1e-6),
					       rows[order[k]].saved_mean, k_alt % 2 ? "0.9" : "-0.9");
		}
		g_free(label);
	}
	g_free(order);
}

bool tune_plot(FILE *png, const char *title, const struct tune_setting *s,
	       const struct tune_row *rows, size_t n, double budget_pct, GError **error)
{
	GString *g = g_string_new(NULL);
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = -INFINITY;

	g_string_append(g, "set terminal pngcairo size 1100,700 noenhanced font ',11'\nset title ");
	gnuplot_quoted(g, title);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].cpu_pct > 0)
			xmin = MIN(xmin, rows[i].cpu_pct);
		xmax = MAX(xmax, rows[i].cpu_pct);
		ymin = MIN(ymin, rows[i].saved_mean);
		ymax = MAX(ymax, rows[i].saved_mean);
	}
	xmax = MAX(xmax, budget_pct);
	if (budget_pct > 0)
		xmin = MIN(xmin, budget_pct);
	if (!n)
		ymin = ymax = 0;
	if (!(xmin < INFINITY) || xmax <= 0)
		xmin = xmax = 1;
	double pad = MAX(MAX((ymax - ymin) * 0.08, fabs(ymax) * 0.01), 1.0);
	double lo = xmin / 1.25, hi = xmax * 2.2;
	/* a log scale: the grid spans 30 times the kernel default's scan rate */
	g_string_append_printf(g, "\nset xlabel 'modelled ksmd CPU (%% of one CPU, log scale)'\n"
			       "set ylabel 'pages saved (pages_sharing + ksm_zero_pages), mean over"
			       " the run'\nset grid xtics ytics\nset key bottom right\n"
			       "set logscale x\nset xrange [%.6g:%.6g]\nset yrange [%.3f:%.3f]\n",
			       lo, hi, ymin - pad, ymax + pad);
	gnuplot_log_tics(g, lo, hi);
	if (budget_pct > 0)
		g_string_append_printf(g, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead"
				       " dt 2 lc rgb '#208020'\nset label 'budget %.3g%%' at %.6g,"
				       " graph 0.97 right offset -0.5,0 tc rgb '#208020'\n",
				       budget_pct, budget_pct, budget_pct, budget_pct);
	gp_block(g, "rest", s, rows, n, 0);
	gp_block(g, "front", s, rows, n, 1);
	gp_block(g, "pick", s, rows, n, 2);
	/* the frontier joined only from three points on: a line through two says nothing more */
	size_t on_front = 0;
	for (size_t i = 0; i < n; i++)
		on_front += rows[i].frontier != 0;
	g_string_append_printf(g, "plot $rest using 1:2 with points pt 7 ps 1.1 lc rgb 'gray60'"
			       " title 'dominated', "
			       "$front using 1:2 with %s pt 7 ps 1.7 lw 2 lc rgb '#c00000'"
			       " title 'frontier', ", on_front >= 3 ? "linespoints" : "points");
	g_string_append(g, "$pick using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#0050c0'"
			" title 'recommended'\n");
	bool ok = gnuplot_draw(png, g->str, TUNE_ERROR, error);

	g_string_free(g, TRUE);
	return ok;
}
