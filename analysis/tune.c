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
#include "traces/check.h"
#include "traces/reader.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/parse.h"

G_DEFINE_QUARK(ksmsim-tune-error-quark, tune_error)

const char tune_csv_header[] =
	"trace,setting,pages_to_scan,sleep_millisecs,advisor_mode,advisor_target_scan_time,"
	"smart_scan,use_zero_pages,max_page_sharing,duration_s,ksmd_cpu_ms,ksmd_cpu_pct,"
	"samples,saved_mean,saved_end,ideal_saved_end,t50_s,t90_s,cow_ksm,cow_per_s,"
	"rmap_items,rmap_bytes,general_profit,pages_to_scan_end,saved_mean_mib,"
	"saved_mean_pct_mapped,mapped_pages,cpu_spread_pct,ksmd_cpu_pct_low,"
	"ksmd_cpu_pct_high,in_band,costs,cpu_budget_pct,"
	"within_budget,frontier,recommended";

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
	/* Linux 6.1 has neither knob (cmd_tune.c keeps no setting that needs them) */
	if (run->model.kernel != KSM_KERNEL_6_1) {
		pin(&run->model, KNOB_ADVISOR_MODE, s->advisor ? ADVISOR_SCAN_TIME : ADVISOR_NONE);
		if (s->advisor)
			pin(&run->model, KNOB_ADVISOR_TARGET_SCAN_TIME, s->target_scan_time);
		pin(&run->model, KNOB_SMART_SCAN, s->smart_scan);
	}
	pin(&run->model, KNOB_USE_ZERO_PAGES, s->use_zero_pages);
	pin(&run->model, KNOB_MAX_PAGE_SHARING, s->max_page_sharing);
	return run_config_resolve(run, error);
}

/* ------------------------------------------------------------ one run */

struct series {
	GArray *t_us, *saved;	/* of uint64_t: the samples after t = 0 */
};

/* Each sample of the shared sampler, kept for reach(). */
static void on_each(void *p, uint64_t sim_us, const struct snapshot *snap)
{
	struct series *s = p;
	uint64_t saved = snapshot_saved(snap);

	g_array_append_val(s->t_us, sim_us);
	g_array_append_val(s->saved, saved);
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
	struct series_stats st = { 0 };
	struct sampler sm;
	/* run's samples, without the oracle: reach() compares them with the end's */
	struct loop_sinks sinks = {
		.sample = sampler_sink,
		.sample_every_us = job->o->run.interval_ms * 1000,
		.ctx = &sm,
	};
	struct loop_result res;
	GError *error = NULL;
	int status = WORKERS_OK;

	sampler_init(&sm, &st, NULL, false, job->o->run.interval_ms, job->o->run.interval_ms);
	sm.each = on_each;
	sm.each_ctx = &ser;
	if (!tune_setting_run(job->o, &job->s[i], &cfg, &error) || !run_open(&run, &cfg, &error) ||
	    !run_replay(&run, &sinks, &res, &error)) {
		status = run_error_status(error);
		g_strlcpy(why, error->message, why_size);
		g_error_free(error);
	} else {
		struct snapshot s;

		sampler_finish(&sm, run.k);
		snapshot_take(run.k, cfg.ideal, &s);
		row->duration_s = res.sim_end_us / 1e6;
		row->cpu_ms = frontier_round(s.t.cpu_ns / 1e6, 3);
		row->cpu_pct = res.sim_end_us ?
			frontier_round(s.t.cpu_ns / 1e3 / (double)res.sim_end_us * 100, 3) : 0;
		row->saved_end = snapshot_saved(&s);
		row->samples = st.samples;
		row->saved_mean = row->samples ?
			frontier_round((double)st.saved.sum / (double)row->samples, 3) :
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

enum { C_NAME, C_CPU, C_MEAN, C_MIB, C_PCT, C_END, C_IDEAL, C_T50, C_T90, C_COW, C_RMAP,
       C_PROFIT, C_MARK, C_NR };
static const char *const c_head[C_NR] = {
	"setting", "ksmd_cpu_%", "saved_mean", "MiB", "%mem", "saved_end", "ideal_end", "t50_s",
	"t90_s", "cow/s", "rmap_KiB", "general_profit", "",
};

#define MIB(pages) ((pages) * 4096.0 / (1 << 20))

/* pages as a share of the memory the trace maps, in percent; "-" when that is unknown */
static char *pct_of_mapped(const struct tune_frame *fr, double pages)
{
	return fr->mapped_pages ? g_strdup_printf("%.1f", 100.0 * pages / (double)fr->mapped_pages) :
		g_strdup("-");
}

static const char *costs_text(const char *costs_csv)
{
	return costs_csv ? costs_csv : NULL;
}

size_t tune_band(const struct tune_row *rows, size_t n, long pick, double spread_pct, bool *band)
{
	size_t in = 0;

	for (size_t i = 0; i < n; i++) {
		double c = rows[i].cpu_pct;

		band[i] = false;
		if (pick < 0)
			continue;
		double p = rows[pick].cpu_pct, lo = p * (1 - spread_pct / 100), hi = p * (1 + spread_pct / 100);

		band[i] = (size_t)pick == i || (c >= lo && c <= hi);
		in += band[i];
	}
	return in;
}

/* The best within budget when every CPU figure is scaled by factor: the pick under that price. */
static long pick_at(const struct tune_row *rows, size_t n, double budget_pct, double factor)
{
	struct frontier_point *pt = points(rows, n);
	bool *within = g_new(bool, n ? n : 1);

	for (size_t i = 0; i < n; i++) {
		pt[i].cpu *= factor;
		within[i] = rows[i].cpu_pct * factor <= budget_pct;
	}
	long best = frontier_best(pt, n, within);
	g_free(within);
	g_free(pt);
	return best;
}

/*
 * The band: the pick's CPU figure is only as good as the cost table (about
 * +-15% against the live ksmd), so a pick 0.02 points under the budget is
 * not a firm choice. List the settings whose CPU is within that spread of
 * the pick's, and say which setting would be picked at either end of it.
 */
static void report_band(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
			const struct tune_row *rows, size_t n, long pick, const bool *band)
{
	double sp = fr->spread_pct / 100, pc = rows[pick].cpu_pct;
	size_t m = 0;
	size_t *order = g_new(size_t, n ? n : 1);

	for (size_t i = 0; i < n; i++)
		if (band[i])
			order[m++] = i;
	/* most saved first; ties in grid order (an insertion sort keeps it stable) */
	for (size_t a = 1; a < m; a++)
		for (size_t b = a; b > 0 && rows[order[b]].saved_mean > rows[order[b - 1]].saved_mean; b--) {
			size_t t = order[b];

			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	fprintf(f, "\nBand: ksmd CPU %.3f%% +-%.3g%% (%.3f..%.3f%%, --cpu-spread): %zu setting%s"
		" within it, most saved first:\n", pc, fr->spread_pct, pc * (1 - sp), pc * (1 + sp), m,
		m == 1 ? "" : "s");
	for (size_t k = 0; k < m; k++) {
		const struct tune_row *r = &rows[order[k]];
		char *nm = tune_setting_name(&s[order[k]]), *pct = pct_of_mapped(fr, r->saved_mean);

		fprintf(f, "  %-24s %7.3f%%  %10.1f pages  %8.1f MiB  %5s%% of memory  %6.1f%% of the"
			" pick's%s%s\n", nm, r->cpu_pct, r->saved_mean, MIB(r->saved_mean), pct,
			rows[pick].saved_mean ? 100 * r->saved_mean / rows[pick].saved_mean : 100.0,
			r->within ? "" : ", over the budget", (long)order[k] == pick ? " (the pick)" : "");
		g_free(nm);
		g_free(pct);
	}
	g_free(order);
	long hi = pick_at(rows, n, fr->budget_pct, 1 + sp), lo = pick_at(rows, n, fr->budget_pct, 1 - sp);
	char *hn = hi >= 0 ? tune_setting_name(&s[hi]) : g_strdup("none (every setting over the budget)");
	char *ln = lo >= 0 ? tune_setting_name(&s[lo]) : g_strdup("none");

	if (hi == pick && lo == pick)
		fprintf(f, "The pick stays the pick with every CPU figure %.3g%% higher or lower.\n",
			fr->spread_pct);
	else
		fprintf(f, "With every CPU figure %.3g%% higher the pick would be %s; %.3g%% lower, %s.\n",
			fr->spread_pct, hn, fr->spread_pct, ln);
	g_free(hn);
	g_free(ln);
}

/* A knob's value as its sysfs file reads (advisor_mode "[none] scan-time": the bracketed one). */
static bool host_knob(enum ksm_knob k, char *out, size_t size)
{
	char *path = g_strdup_printf("/sys/kernel/mm/ksm/%s", knob_table[k].name), *text = NULL;
	bool ok = g_file_get_contents(path, &text, NULL, NULL);

	g_free(path);
	if (!ok)
		return false;
	char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;

	if (open && close) {
		*close = '\0';
		g_strlcpy(out, open + 1, size);
	} else {
		g_strlcpy(out, g_strstrip(text), size);
	}
	g_free(text);
	return *out != '\0';
}

/* The knobs a setting writes, in the order they are applied: advisor first, run last. */
static const enum ksm_knob apply_order[] = {
	KNOB_ADVISOR_MODE, KNOB_ADVISOR_TARGET_SCAN_TIME, KNOB_PAGES_TO_SCAN, KNOB_SLEEP_MILLISECS,
	KNOB_SMART_SCAN, KNOB_USE_ZERO_PAGES, KNOB_MAX_PAGE_SHARING, KNOB_RUN,
};

static void knob_value(const struct tune_setting *s, enum ksm_knob k, char *out, size_t size)
{
	uint64_t v = 0;

	switch (k) {
	case KNOB_ADVISOR_MODE: g_strlcpy(out, s->advisor ? "scan-time" : "none", size); return;
	case KNOB_ADVISOR_TARGET_SCAN_TIME: v = s->target_scan_time; break;
	case KNOB_PAGES_TO_SCAN: v = s->pages_to_scan; break;
	case KNOB_SLEEP_MILLISECS: v = s->sleep_millisecs; break;
	case KNOB_SMART_SCAN: v = s->smart_scan; break;
	case KNOB_USE_ZERO_PAGES: v = s->use_zero_pages; break;
	case KNOB_MAX_PAGE_SHARING: v = s->max_page_sharing; break;
	default: v = 1; break;	/* run */
	}
	g_snprintf(out, size, "%" PRIu64, v);
}

/*
 * The writes that apply the pick, and those that put back what the host
 * has now. run=2 first: max_page_sharing refuses a change (EBUSY) while any
 * page is merged, and unmerging first makes every setting start as the
 * model's run starts, from nothing merged.
 */
/* Linux 6.1 has no smart_scan and no advisor files: nothing to write or put back. */
static bool knob_absent(const struct tune_frame *fr, enum ksm_knob k)
{
	return fr->run && fr->run->model.kernel == KSM_KERNEL_6_1 &&
	       (k == KNOB_SMART_SCAN || k == KNOB_ADVISOR_MODE || k == KNOB_ADVISOR_TARGET_SCAN_TIME);
}

static void report_apply(FILE *f, const struct tune_frame *fr, const struct tune_setting *s)
{
	char now[KNOB_NR][64];
	bool all_read = true;

	for (size_t i = 0; i < G_N_ELEMENTS(apply_order); i++) {
		enum ksm_knob k = apply_order[i];

		if (!host_knob(k, now[k], sizeof(now[k]))) {
			all_read = false;
			if (k == KNOB_ADVISOR_MODE)
				g_strlcpy(now[k], "none", sizeof(now[k]));
			else
				g_snprintf(now[k], sizeof(now[k]), "%" PRIu64, knob_table[k].def);
		}
	}
	fprintf(f, "\nApply it (as root; run=2 first unmerges, as max_page_sharing can change only"
		" then):\n  echo 2 > /sys/kernel/mm/ksm/run\n");
	for (size_t i = 0; i < G_N_ELEMENTS(apply_order); i++) {
		enum ksm_knob k = apply_order[i];
		char v[64];

		/* with the advisor, pages_to_scan is its to drive; without, its target means nothing */
		if ((k == KNOB_PAGES_TO_SCAN && s->advisor) ||
		    (k == KNOB_ADVISOR_TARGET_SCAN_TIME && !s->advisor) || knob_absent(fr, k))
			continue;
		knob_value(s, k, v, sizeof(v));
		fprintf(f, "  echo %s > /sys/kernel/mm/ksm/%s\n", v, knob_table[k].name);
	}
	fprintf(f, "Restore %s:\n  echo 2 > /sys/kernel/mm/ksm/run\n", all_read ?
		"the values /sys/kernel/mm/ksm has now" : "the kernel's defaults (/sys/kernel/mm/ksm"
		" is not readable here)");
	for (size_t i = 0; i < G_N_ELEMENTS(apply_order); i++) {
		enum ksm_knob k = apply_order[i];

		if (!knob_absent(fr, k))
			fprintf(f, "  echo %s > /sys/kernel/mm/ksm/%s\n", now[k], knob_table[k].name);
	}
}

/* A word for the shell: as it is when it is safe, else in single quotes. */
static void shell_word(GString *g, const char *w)
{
	bool plain = *w != '\0';

	for (const char *p = w; *p; p++)
		plain &= g_ascii_isalnum(*p) || strchr("/._-+=,:@%", *p);
	if (plain) {
		g_string_append(g, w);
		return;
	}
	g_string_append_c(g, '\'');
	for (const char *p = w; *p; p++)
		if (*p == '\'')
			g_string_append(g, "'\\''");
		else
			g_string_append_c(g, *p);
	g_string_append_c(g, '\'');
}

/* The pick as --setting takes it (tune's and verify's). */
static char *setting_spec(const struct tune_setting *s)
{
	GString *g = g_string_new(NULL);

	if (s->advisor)
		g_string_append_printf(g, "advisor=1,advisor_target_scan_time=%" PRIu64, s->target_scan_time);
	else
		g_string_append_printf(g, "pages_to_scan=%" PRIu64, s->pages_to_scan);
	g_string_append_printf(g, ",sleep_millisecs=%" PRIu64 ",smart_scan=%d,use_zero_pages=%d,"
			       "max_page_sharing=%" PRIu64, s->sleep_millisecs, s->smart_scan,
			       s->use_zero_pages, s->max_page_sharing);
	return g_string_free(g, FALSE);
}

/* The line that checks the pick on this host's processes, live (cmd_verify.c). */
static void report_verify(FILE *f, const struct tune_frame *fr, const struct tune_setting *s)
{
	if (fr->run && fr->run->model.kernel == KSM_KERNEL_6_1) {
		/* verify models the host's kernel, 6.18: a 6.1 pick is checked on a 6.1 kernel */
		fprintf(f, "'ksmsim verify' models Linux 6.18: check a 6.1 pick on a 6.1 kernel"
			" (workloads/vm/replay-6.1.sh replays a trace on one).\n");
		return;
	}
	char *spec = setting_spec(s);
	GString *g = g_string_new("ksmsim verify --trace ");

	shell_word(g, fr->trace);
	g_string_append_printf(g, " --setting %s --pid PID[,PID...] --minutes 5", spec);
	if (fr->costs_csv) {
		g_string_append(g, " --costs-csv ");
		shell_word(g, fr->costs_csv);
	}
	fprintf(f, "Check it live on the recorded processes (root; knobs put back after):\n  %s\n",
		g->str);
	g_string_free(g, TRUE);
	g_free(spec);
}

/*
 * The `ksmsim run` line that reproduces the pick's row: the same trace,
 * batch time, sample period, cost table and every knob pinned as tune pins
 * them (its ksmd_cpu_ms and the end's pages_sharing + ksm_zero_pages are
 * the row's). run has no advisor_mode option: an advisor setting has none.
 */
static void report_reproduce(FILE *f, const struct tune_frame *fr, const struct tune_setting *s)
{
	if (!fr->run)
		return;
	if (s->advisor) {
		fprintf(f, "\n'ksmsim run' pins no advisor_mode: no line reproduces an advisor setting.\n");
		report_verify(f, fr, s);
		return;
	}
	struct tune_opts o = { .run = *fr->run };
	struct run_config cfg;
	GError *error = NULL;

	if (!tune_setting_run(&o, s, &cfg, &error)) {
		g_error_free(error);
		return;
	}
	GString *g = g_string_new("ksmsim run --trace ");

	shell_word(g, fr->trace);
	g_string_append_printf(g, " --batch-time --interval-ms %" PRIu64, cfg.interval_ms);
	if (cfg.model.kernel == KSM_KERNEL_6_1)
		g_string_append(g, " --kernel 6.1");
	if (cfg.costs_csv) {
		g_string_append(g, " --costs-csv ");
		shell_word(g, cfg.costs_csv);
	}
	if (!cfg.ideal)
		g_string_append(g, " --no-ideal");
	if (cfg.model.check)
		g_string_append(g, " --check");
	for (int k = 0; k < KNOB_NR; k++) {
		if (!cfg.model.pinned[k] || k == KNOB_ADVISOR_MODE || k == KNOB_RUN)
			continue;
		char *opt = g_strdelimit(g_strdup(knob_table[k].name), "_", '-');

		g_string_append_printf(g, " --%s %" PRIu64, opt, cfg.model.pinned_value[k]);
		g_free(opt);
	}
	/* run takes --interval-ms only with a file of samples: the summary's row */
	g_string_append(g, " --summary-csv pick-summary.csv");
	fprintf(f, "\nReproduce its row (ksmd_cpu_ms; pages_sharing + ksm_zero_pages at the end):\n"
		"  %s\n", g->str);
	g_string_free(g, TRUE);
	report_verify(f, fr, s);
}

void tune_report(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
		 const struct tune_row *rows, size_t n, long pick)
{
	const char *trace = fr->trace, *costs_csv = fr->costs_csv;
	double budget_pct = fr->budget_pct;
	bool *band = g_new0(bool, n ? n : 1);
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
		row[C_MIB] = g_strdup_printf("%.1f", MIB(r->saved_mean));
		row[C_PCT] = pct_of_mapped(fr, r->saved_mean);
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
	tune_band(rows, n, pick, fr->spread_pct, band);
	for (size_t i = 0; i < n; i++)
		if (band[i] && !rows[i].pick) {
			char *m = cell[(i + 1) * C_NR + C_MARK];

			cell[(i + 1) * C_NR + C_MARK] = g_strconcat(m, " band", NULL);
			g_free(m);
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
		" fewer pages saved on average, one strictly); over = above the\nbudget; band ="
		" CPU within the pick's +-%.3g%%. MiB = saved_mean x 4 KiB; %%mem = saved_mean as a"
		" share\nof the most pages the trace maps at once (%" PRIu64 " pages, %.1f MiB).\n",
		tname, n, fr->spread_pct, fr->mapped_pages, MIB((double)fr->mapped_pages));
	g_free(tname);
	if (costs_text(costs_csv))
		fprintf(f, "ksmd CPU from the cost table %s (--costs-csv).\n", costs_csv);
	else
		fprintf(f, "ksmd CPU from the built-in cost table (fitted to the live ksmd of the"
			" reference machine,\nAMD EPYC): give --costs-csv FILE from 'ksmsim bench"
			" calibrate -o' for this machine's.\n");
	if (pick < 0) {
		fprintf(f, "No setting ran: nothing to recommend.\n");
		g_free(band);
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
	if (fr->run && fr->run->model.kernel == KSM_KERNEL_6_1)
		fprintf(f, "Modelled kernel: Linux 6.1 (--kernel 6.1): no smart scan or advisor, the"
			" stable tree searched before the checksum.\n");
	report_band(f, fr, s, rows, n, pick, band);
	report_apply(f, fr, &s[pick]);
	report_reproduce(f, fr, &s[pick]);
	fflush(f);
	g_free(name);
	g_free(band);
}

void tune_csv(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
	      const struct tune_row *rows, size_t n)
{
	const char *trace = fr->trace, *costs_csv = fr->costs_csv;
	double budget_pct = fr->budget_pct;
	long pick = -1;

	for (size_t i = 0; i < n; i++)
		if (rows[i].pick)
			pick = (long)i;
	bool *band = g_new0(bool, n ? n : 1);
	tune_band(rows, n, pick, fr->spread_pct, band);
	fprintf(f, "%s\n", tune_csv_header);
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
		fprintf(f, "%.3f,", MIB(r->saved_mean));
		if (fr->mapped_pages)
			fprintf(f, "%.3f", 100.0 * r->saved_mean / (double)fr->mapped_pages);
		fprintf(f, ",%" PRIu64 ",%.3f,%.3f,%.3f,%d,", fr->mapped_pages, fr->spread_pct,
			frontier_round(r->cpu_pct * (1 - fr->spread_pct / 100), 3),
			frontier_round(r->cpu_pct * (1 + fr->spread_pct / 100), 3), band[i]);
		marks_put_field(f, costs_csv ? costs_csv : "built-in", true);
		/* the budget exactly: %.3f unless that rounds it (0.0001 was 0.000) */
		char b[32];

		snprintf(b, sizeof(b), "%.3f", budget_pct);
		if (strtod(b, NULL) != budget_pct)
			snprintf(b, sizeof(b), "%.17g", budget_pct);
		fprintf(f, ",%s,%d,%d,%d\n", b, r->within, r->frontier, r->pick);
	}
	g_free(band);
}

bool tune_trace_mapped(const char *path, uint64_t *pages, GError **error)
{
	trace_reader *r = trace_reader_open(path, error);
	struct trace_record *rec = g_new(struct trace_record, 1);
	struct trace_check *ck = trace_check_new();
	int rc = -1;

	*pages = 0;
	while (r && (rc = trace_reader_next(r, rec, error)) > 0) {
		/* the reader has checked the record: this only follows the mappings */
		g_free(trace_check_apply(ck, rec, NULL, NULL));
		if (rec->verb == TRACE_MAP || rec->verb == TRACE_FORK)
			*pages = MAX(*pages, trace_check_mapped_pages(ck));
	}
	if (r)
		trace_reader_free(r);
	trace_check_free(ck);
	g_free(rec);
	return rc == 0;
}

/* ------------------------------------------------------------ the plot */

/*
 * The plot's geometry, fixed so that labels can be placed in pixels: the
 * canvas and the graph's box in it (margins at screen fractions), and what
 * a label of the 11-point font takes (a generous character width, so that
 * two boxes that do not meet here do not meet in the PNG).
 */
#define PLOT_W 1100.0
#define PLOT_H 700.0
#define GX0 0.09
#define GX1 0.86
#define GY0 0.10
#define GY1 0.88
#define CHAR_W 9.0
#define LINE_H 16.0
#define POINT_R 9.0
#define PICK_R 17.0

struct box { double x0, y0, x1, y1; };	/* pixels, y up */

static bool boxes_meet(const struct box *a, const struct box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

struct placer {
	GArray *taken;		/* of struct box: labels placed, points, the budget's label */
	double lx0, lx1, ly0, ly1;	/* the axes' ranges: log10 x, MiB y */
};

static void to_px(const struct placer *pl, double cpu, double mib, double *x, double *y)
{
	*x = PLOT_W * (GX0 + (GX1 - GX0) * (log10(cpu) - pl->lx0) / (pl->lx1 - pl->lx0));
	*y = PLOT_H * (GY0 + (GY1 - GY0) * (mib - pl->ly0) / (pl->ly1 - pl->ly0));
}

/* How much of box b lies on what is taken or outside the graph: 0 is a free place. */
static double clash(const struct placer *pl, const struct box *b)
{
	double bad = 0;

	for (guint i = 0; i < pl->taken->len; i++) {
		const struct box *t = &g_array_index(pl->taken, struct box, i);

		if (boxes_meet(b, t))
			bad += (MIN(b->x1, t->x1) - MAX(b->x0, t->x0)) * (MIN(b->y1, t->y1) - MAX(b->y0, t->y0));
	}
	if (b->x0 < PLOT_W * GX0 || b->x1 > PLOT_W * GX1 || b->y0 < PLOT_H * GY0 || b->y1 > PLOT_H * GY1)
		bad += 1e6;
	return bad;
}

/*
 * A label for the point at (x, y): the first of the places around it, near
 * ones first, where it meets nothing placed before and stays in the graph
 * (else the one that meets least), joined to its point by a thin line when
 * it had to move away. Written as gnuplot at screen coordinates.
 */
static void place_label(GString *g, struct placer *pl, double x, double y, double r,
			const char *text, const char *colour)
{
	double w = CHAR_W * (double)g_utf8_strlen(text, -1) + 4, h = LINE_H;
	static const double dy[] = { 0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6 };
	struct box best = { 0 };
	double best_bad = INFINITY;
	bool far = false;

	for (size_t k = 0; k < G_N_ELEMENTS(dy) && best_bad > 0; k++) {
		for (int side = 0; side < 2 && best_bad > 0; side++) {
			double cy = y + dy[k] * (h + 2);
			struct box b = side ? (struct box){ x - r - 2 - w, cy - h / 2, x - r - 2, cy + h / 2 } :
				(struct box){ x + r + 2, cy - h / 2, x + r + 2 + w, cy + h / 2 };
			double bad = clash(pl, &b);

			if (bad < best_bad) {
				best_bad = bad;
				best = b;
				far = k > 0;
			}
		}
	}
	g_array_append_val(pl->taken, best);
	/*
	 * A label left of its point ends at its box's right edge, where the
	 * line to the point starts: the box is wider than the text (CHAR_W is
	 * generous), and text set from its left edge would end well short of
	 * the line.
	 */
	bool left_of = best.x1 <= x;

	g_string_append(g, "set label ");
	gnuplot_quoted(g, text);
	g_string_append_printf(g, " at screen %.5f,%.5f %s tc rgb '%s'\n",
			       (left_of ? best.x1 - 2 : best.x0 + 2) / PLOT_W,
			       (best.y0 + best.y1) / 2 / PLOT_H, left_of ? "right" : "left", colour);
	if (far) {
		double ex = best.x0 > x ? best.x0 : best.x1;

		g_string_append_printf(g, "set arrow from screen %.5f,%.5f to screen %.5f,%.5f nohead"
				       " lw 0.5 lc rgb '%s'\n", ex / PLOT_W, (best.y0 + best.y1) / 2 / PLOT_H,
				       x / PLOT_W, y / PLOT_H, colour);
	}
}

/* One datablock of the rows in[]: x y (CPU %, MiB), in CPU order so a line joins them. */
static void gp_block(GString *g, const char *name, const struct tune_row *rows, size_t n,
		     const bool *in)
{
	struct frontier_point *pt = points(rows, n);
	size_t *order = g_new(size_t, n ? n : 1);
	size_t m = frontier_by_cpu(pt, n, in, order);

	g_free(pt);
	g_string_append_printf(g, "$%s << EOD\n", name);
	for (size_t k = 0; k < m; k++)
		g_string_append_printf(g, "%.6f %.3f\n", MAX(rows[order[k]].cpu_pct, 1e-6),
				       MIB(rows[order[k]].saved_mean));
	/* gnuplot refuses to plot an empty block: one point off the chart */
	if (!m)
		g_string_append(g, "NaN NaN\n");
	g_string_append(g, "EOD\n");
	g_free(order);
}

/*
 * The frontier's staircase, as boxes a few pixels thick, taken: no label
 * is placed across it. From (x1, y1) across to (x2, y1), then up to
 * (x2, y2), as gnuplot draws `with steps`; only from three points on, as
 * the staircase itself.
 */
static void steps_taken(struct placer *pl, const struct tune_row *rows, size_t n)
{
	bool *in = g_new(bool, n ? n : 1);
	size_t *order = g_new(size_t, n ? n : 1);
	struct frontier_point *pt = points(rows, n);

	for (size_t i = 0; i < n; i++)
		in[i] = rows[i].frontier;
	size_t m = frontier_by_cpu(pt, n, in, order);

	for (size_t k = 0; m >= 3 && k + 1 < m; k++) {
		const struct tune_row *a = &rows[order[k]], *b = &rows[order[k + 1]];
		double x1, y1, x2, y2;

		to_px(pl, MAX(a->cpu_pct, 1e-6), MIB(a->saved_mean), &x1, &y1);
		to_px(pl, MAX(b->cpu_pct, 1e-6), MIB(b->saved_mean), &x2, &y2);
		struct box across = { MIN(x1, x2), y1 - 2, MAX(x1, x2), y1 + 2 };
		struct box up = { x2 - 2, MIN(y1, y2), x2 + 2, MAX(y1, y2) };

		g_array_append_val(pl->taken, across);
		g_array_append_val(pl->taken, up);
	}
	g_free(pt);
	g_free(order);
	g_free(in);
}

/*
 * Every point labelled (settings on one point share a label): the pick
 * first, then the frontier's, then the dominated ones in grey, each where
 * it meets no label placed before it nor any point.
 */
static void gp_labels(GString *g, struct placer *pl, const struct tune_setting *s,
		      const struct tune_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double x, y;

		to_px(pl, MAX(rows[i].cpu_pct, 1e-6), MIB(rows[i].saved_mean), &x, &y);
		/* the pick's ring is drawn at ps 3: about twice a point's size */
		double r = rows[i].pick ? PICK_R : POINT_R;
		struct box b = { x - r, y - r, x + r, y + r };
		g_array_append_val(pl->taken, b);
	}
	steps_taken(pl, rows, n);
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct tune_row *r = &rows[i];
			bool first = true;

			if ((pass == 0) != r->pick || (pass == 1 && !r->frontier) || (pass == 2 && r->frontier))
				continue;
			for (size_t j = 0; j < i; j++)
				if (rows[j].cpu_pct == r->cpu_pct && rows[j].saved_mean == r->saved_mean)
					first = false;
			if (!first && !r->pick)
				continue;	/* labelled with the first of them */
			GString *names = g_string_new(r->pick ? "recommended: " : "");
			bool any = false;

			for (size_t j = 0; j < n; j++) {
				if (rows[j].cpu_pct != r->cpu_pct || rows[j].saved_mean != r->saved_mean)
					continue;
				char *one = tune_setting_name(&s[j]);

				g_string_append_printf(names, "%s%s", any ? ", " : "", one);
				any = true;
				g_free(one);
			}
			double x, y;

			to_px(pl, MAX(r->cpu_pct, 1e-6), MIB(r->saved_mean), &x, &y);
			place_label(g, pl, x, y, r->pick ? PICK_R : POINT_R, names->str, r->pick ? "#0050c0" : r->frontier ? "#c00000" :
				    "#707070");
			g_string_free(names, TRUE);
		}
	}
}

bool tune_plot(FILE *png, const char *title, const struct tune_frame *fr,
	       const struct tune_setting *s, const struct tune_row *rows, size_t n, GError **error)
{
	GString *g = g_string_new(NULL);
	double budget_pct = fr->budget_pct;
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = -INFINITY;

	g_string_append_printf(g, "set terminal pngcairo size %.0f,%.0f noenhanced font ',11'\n"
			       "set title ", PLOT_W, PLOT_H);
	gnuplot_quoted(g, title);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].cpu_pct > 0)
			xmin = MIN(xmin, rows[i].cpu_pct);
		xmax = MAX(xmax, rows[i].cpu_pct);
		ymin = MIN(ymin, MIB(rows[i].saved_mean));
		ymax = MAX(ymax, MIB(rows[i].saved_mean));
	}
	xmax = MAX(xmax, budget_pct);
	if (budget_pct > 0)
		xmin = MIN(xmin, budget_pct);
	if (!n)
		ymin = ymax = 0;
	if (!(xmin < INFINITY) || xmax <= 0)
		xmin = xmax = 1;
	double pad = MAX(MAX((ymax - ymin) * 0.10, fabs(ymax) * 0.01), 0.01);
	/* room on the right for labels of the costliest points */
	double lo = xmin / 1.6, hi = xmax * 3.5;
	struct placer pl = { g_array_new(FALSE, FALSE, sizeof(struct box)), log10(lo), log10(hi),
			     ymin - pad, ymax + pad };

	/* a log scale: the grid spans 30 times the kernel default's scan rate */
	g_string_append_printf(g, "\nset lmargin at screen %.2f\nset rmargin at screen %.2f\n"
			       "set bmargin at screen %.2f\nset tmargin at screen %.2f\n"
			       "set xlabel 'modelled ksmd CPU (%% of one CPU, log scale)'\n"
			       "set ylabel 'MiB saved ((pages_sharing + ksm_zero_pages) x 4 KiB), mean"
			       " over the run'\nset grid xtics ytics\n"
			       "set key top left inside vertical Left reverse\n"
			       "set logscale x\nset xrange [%.6g:%.6g]\nset yrange [%.6f:%.6f]\n",
			       GX0, GX1, GY0, GY1, lo, hi, pl.ly0, pl.ly1);
	if (fr->mapped_pages) {
		double mem = MIB((double)fr->mapped_pages);

		g_string_append_printf(g, "set y2range [%.6f:%.6f]\nset y2tics\nset ytics nomirror\n"
				       "set y2label '%% of the memory the trace maps (%.1f MiB)'\n",
				       pl.ly0 * 100 / mem, pl.ly1 * 100 / mem, mem);
	}
	gnuplot_log_tics(g, lo, hi);
	/* the key's corner, top left (no setting saves most for least CPU): no label there */
	struct box key = { PLOT_W * GX0, PLOT_H * GY1 - 3.5 * LINE_H, PLOT_W * GX0 + 26 * CHAR_W,
			   PLOT_H * GY1 };
	g_array_append_val(pl.taken, key);
	if (budget_pct > 0) {
		double bx, by;

		to_px(&pl, budget_pct, pl.ly1, &bx, &by);
		g_string_append_printf(g, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead"
				       " dt 2 lc rgb '#208020'\n", budget_pct, budget_pct);
		/* the budget's label just inside the top, left of its line */
		char *bl = g_strdup_printf("budget %.3g%%", budget_pct);
		double w = CHAR_W * (double)strlen(bl) + 4;
		struct box b = { bx - 4 - w, by - 4 - LINE_H, bx - 4, by - 4 };

		g_array_append_val(pl.taken, b);
		g_string_append(g, "set label ");
		gnuplot_quoted(g, bl);
		g_string_append_printf(g, " at screen %.5f,%.5f left tc rgb '#208020'\n", (b.x0 + 2) / PLOT_W,
				       (b.y0 + b.y1) / 2 / PLOT_H);
		g_free(bl);
	}
	bool *in = g_new(bool, n ? n : 1);
	size_t on_front = 0;

	for (int which = 0; which < 3; which++) {
		for (size_t i = 0; i < n; i++) {
			in[i] = which == 0 ? !rows[i].frontier : which == 1 ? rows[i].frontier : rows[i].pick;
			on_front += which == 1 && in[i];
		}
		gp_block(g, which == 0 ? "rest" : which == 1 ? "front" : "pick", rows, n, in);
	}
	g_free(in);
	gp_labels(g, &pl, s, rows, n);
	g_array_free(pl.taken, TRUE);
	/*
	 * The frontier as a staircase, as advise draws it: between two of its
	 * points, more CPU buys nothing until the next one. Only from three
	 * points on: a line through two says no more than the two points do.
	 */
	g_string_append(g, "plot $rest using 1:2 with points pt 7 ps 1.1 lc rgb 'gray60'"
			" title 'dominated', ");
	if (on_front >= 3)
		g_string_append(g, "$front using 1:2 with steps lw 2 lc rgb '#c00000' notitle, ");
	g_string_append(g, "$front using 1:2 with points pt 7 ps 1.7 lc rgb '#c00000'"
			" title 'frontier', ");
	g_string_append(g, "$pick using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#0050c0'"
			" title 'recommended'\n");
	bool ok = gnuplot_draw(png, g->str, TUNE_ERROR, error);

	g_string_free(g, TRUE);
	return ok;
}

/* ------------------------------------------------------------ JSON */

struct csv_args {
	const struct tune_frame *fr;
	const struct tune_setting *s;
	const struct tune_row *rows;
	size_t n;
};

static void fill_csv(void *ctx, FILE *f)
{
	const struct csv_args *a = ctx;

	tune_csv(f, a->fr, a->s, a->rows, a->n);
}

void tune_json(FILE *f, const struct tune_frame *fr, const struct tune_setting *s,
	       const struct tune_row *rows, size_t n, long pick)
{
	struct csv_args a = { fr, s, rows, n };
	char *csv = json_capture(fill_csv, &a);
	GString *g = g_string_new("{\"command\": \"tune\", \"trace\": ");

	json_string(g, fr->trace);
	g_string_append_printf(g, ", \"cpu_budget_pct\": %.3f, \"cpu_spread_pct\": %.3f,"
			       " \"mapped_pages\": %" PRIu64 ", \"recommended\": ", fr->budget_pct,
			       fr->spread_pct, fr->mapped_pages);
	if (pick >= 0) {
		char *name = tune_setting_name(&s[pick]);

		json_string(g, name);
		g_free(name);
	} else {
		g_string_append(g, "null");
	}
	/* the rows: the CSV's, field for field */
	g_string_append(g, ",\n\"settings\": ");
	json_csv_rows(g, csv);
	g_string_append(g, "}\n");
	fputs(g->str, f);
	g_string_free(g, TRUE);
	g_free(csv);
}
