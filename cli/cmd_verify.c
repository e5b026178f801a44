// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim verify: a setting applied to this host's KSM for processes that
 * already run (made mergeable by merge-exec or their own madvise), sampled
 * every so often beside the model's prediction for their recorded trace
 * under the same setting. The question it answers: does tune's pick do
 * here what the model said it would?
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <glib.h>
#include "analysis/tune.h"
#include "cli/cli.h"
#include "live/live.h"
#include "marks/marks.h"
#include "sim/output.h"
#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/signals.h"

#define PROG "ksmsim verify"
#define MINUTES_DEFAULT 5.0
#define EVERY_DEFAULT 60.0

static void usage(FILE *f);

static void usage_text(FILE *f)
{
	fprintf(f,
"usage: ksmsim verify --trace FILE --setting SPEC --pid PID[,PID...]\n"
"                     [--minutes M] [--every S] [--costs-csv FILE] [--csv FILE] [--json]\n"
"Applies SPEC to this host's KSM for the running processes PID... (made\n"
"mergeable by 'ksmsim merge-exec' or their own madvise), for M minutes, and\n"
"every S seconds prints pages_sharing and ksmd's CPU beside what the model\n"
"predicts for FILE (their trace, from 'ksmsim record --pid') under the same\n"
"setting, with the ratios live / model. As root; the live KSM is the\n"
"machine's: every knob is saved first and put back however verify ends\n"
"(run=2 first, which unmerges, then the saved values; Ctrl-C too).\n"
"\n"
"First run=2 and run=0 (nothing merged: the model starts from there too),\n"
"then SPEC's knobs, then run=1 at t = 0. The model replays FILE from its\n"
"start with SPEC pinned and batches taking their modelled CPU time, as tune\n"
"runs it; its t = 0 is the trace's start, so the comparison holds when the\n"
"processes do now what they did while recorded (a steady service, or the\n"
"same programs started again the same way). Samples after the trace's end\n"
"have no prediction ('-').\n"
"\n");
}

static void usage_columns(FILE *f)
{
	fprintf(f,
"\n"
"Columns: t_s (seconds since run=1), live_pages_sharing, model_pages_sharing,\n"
"pages_sharing_ratio, live_ksm_zero_pages, model_ksm_zero_pages,\n"
"live_ksmd_cpu_ms (/proc/<ksmd>/schedstat: time on a CPU, not wall time),\n"
"model_ksmd_cpu_ms, ksmd_cpu_ratio, live_full_scans, model_full_scans.\n"
"The modelled CPU is good to about +-15-20%% (the cost table; 'ksmsim bench\n"
"calibrate' fits one here); pages_sharing far closer on steady services.\n"
"\n"
"Exit status: 0 done, 2 bad usage or input, KSM missing, not root or in use\n"
"by another process, 128 + the signal when interrupted (knobs restored).\n");
}

enum { OPT_TRACE = 256, OPT_SETTING, OPT_PID, OPT_MINUTES, OPT_EVERY, OPT_COSTS, OPT_CSV,
       OPT_JSON };

struct args {
	const char *trace, *costs_csv, *csv;
	struct tune_setting setting;
	bool have_setting, json, help;
	GArray *pids;		/* of pid_t */
	double minutes, every;
	struct cli_once once;	/* the options given */
};

#define AT(f) offsetof(struct args, f)
/* The options: type, bounds, target and help (--setting and --pid parsed by own()). */
static const struct cli_opt rows[] = {
	{ "trace", OPT_TRACE, CLI_STR, "FILE", AT(trace), .help = "the processes' recorded trace" },
	{ "setting", OPT_SETTING, CLI_OWN, "SPEC",
	  .help = "the knobs, as tune takes them: comma-separated\n"
		  "KNOB=VALUE of pages_to_scan, sleep_millisecs, advisor\n"
		  "(0|1), advisor_target_scan_time, smart_scan,\n"
		  "use_zero_pages, max_page_sharing; the rest as the\n"
		  "kernel's defaults" },
	{ "pid", OPT_PID, CLI_OWN, "PID[,PID...]", .repeats = true,
	  .help = "the processes measured; their KSM use is expected,\n"
		  "any other process's refuses the run (its pages would\n"
		  "count), as 'ksmsim live' refuses; at least one must\n"
		  "be mergeable (ksm_stat: ksm_merge_any or ksm_mergeable);\n"
		  "may be given again (the lists add up)" },
	{ "minutes", OPT_MINUTES, CLI_DOUBLE, "M", AT(minutes), .dmin = 0, .dmax = 10080,
	  .dmin_open = true, .wants = "more than 0 and at most 10080 (a week)", .show_default = true,
	  .help = "how long, more than 0 and at most 10080;\nfractions allowed" },
	{ "every", OPT_EVERY, CLI_DOUBLE, "S", AT(every), .dmin = 0.1, .dmax = 86400,
	  .wants = "seconds, 0.1 to 86400", .show_default = true,
	  .help = "seconds between samples, 0.1 to 86400" },
	{ "costs-csv", OPT_COSTS, CLI_STR, "FILE", AT(costs_csv),
	  .help = "the model's cost table ('ksmsim bench calibrate -o')" },
	{ "csv", OPT_CSV, CLI_STR, "FILE", AT(csv), .help = "the samples, one row each (columns below)" },
	{ "json", OPT_JSON, CLI_FLAG, NULL, AT(json),
	  .help = "standard output as one JSON object: the run's facts\n"
		  "and 'samples', the CSV's rows under the CSV's names" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help), .stops = true, .help = "this text" },
};

static const struct args defaults = { .minutes = MINUTES_DEFAULT, .every = EVERY_DEFAULT };

static void usage(FILE *f)
{
	usage_text(f);
	cli_opts_help(f, rows, G_N_ELEMENTS(rows), &defaults, 22);
	usage_columns(f);
}

/* One sample of each side. */
struct point {
	double t_s;
	bool have;			/* the model reached this time */
	uint64_t pages_sharing, ksm_zero_pages, full_scans;
	double cpu_ms;
};

static bool bad(const char *what, const char *arg)
{
	cli_error(PROG, "%s, not '%s'", what, arg);
	return false;
}

static bool parse_pids(const char *arg, GArray *out)
{
	gchar **parts = g_strsplit(arg, ",", -1);
	bool ok = *arg != '\0';

	for (gchar **p = parts; ok && *p; p++) {
		uint64_t v;

		ok = parse_u64(*p, INT32_MAX, &v) && v > 0;
		if (ok) {
			pid_t pid = (pid_t)v;

			g_array_append_val(out, pid);
		}
	}
	g_strfreev(parts);
	return ok || bad("--pid wants process ids, comma-separated", arg);
}

/* --setting and --pid: 1 taken, -1 refused after one line. */
static int own(void *base, int c, const char *arg)
{
	struct args *a = base;
	char *why = NULL;

	if (c == OPT_PID)
		return parse_pids(arg, a->pids) ? 1 : -1;
	if (tune_setting_parse(arg, &a->setting, &why)) {
		a->have_setting = true;
		return 1;
	}
	cli_error(PROG, "--setting: %s", why);
	g_free(why);
	return -1;
}

/* The model's samples: every --every seconds of simulated time after 0. */
struct model_ctx {
	uint64_t every_us;
	GArray *pts;		/* of struct point */
};

static bool on_sample(void *p, uint64_t sim_us, uint64_t trace_us, struct ksm *k, GError **error)
{
	struct model_ctx *m = p;
	struct snapshot s;

	if (!sim_us || sim_us % m->every_us)
		return true;	/* t = 0, and the end's extra sample */
	snapshot_take(k, false, &s);
	struct point pt = { sim_us / 1e6, true, s.c.pages_sharing, s.c.ksm_zero_pages, s.c.full_scans,
			    s.t.cpu_ns / 1e6 };
	g_array_append_val(m->pts, pt);
	return true;
}

static bool model(const struct args *a, GArray *pts, GError **error)
{
	struct run_config base = { 0 };
	struct run_options ro;

	/* run's defaults, then what tune sets: batches take their modelled time */
	run_options_init(&ro, PROG, RUN_OPTIONS_TUNE);
	base = ro.cfg;
	base.trace = a->trace;
	base.costs_csv = a->costs_csv;
	base.ideal = false;
	base.interval_ms = (uint64_t)llround(a->every * 1000);
	base.model.batch_time = true;
	struct tune_opts o = { .run = base };
	struct run_config cfg;
	struct run run = { 0 };
	struct model_ctx m = { base.interval_ms * 1000, pts };
	struct loop_sinks sinks = { .sample = on_sample, .sample_every_us = m.every_us, .ctx = &m };
	struct loop_result res;
	bool ok = tune_setting_run(&o, &a->setting, &cfg, error) && run_open(&run, &cfg, error) &&
		  run_replay(&run, &sinks, &res, error);

	run_close(&run);
	run_options_free(&ro);
	return ok;
}

/* Whether pid's ksm_stat says it is mergeable: false with why when not, or when it is gone. */
static bool mergeable(pid_t pid, bool *yes, GError **error)
{
	char *path = g_strdup_printf("/proc/%d/ksm_stat", (int)pid), *text = NULL;
	bool ok = g_file_get_contents(path, &text, NULL, NULL);

	if (!ok)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "--pid %d: %s", (int)pid,
			    kill(pid, 0) == 0 || errno == EPERM ? "no /proc/PID/ksm_stat (a kernel"
			    " without KSM?)" : "no such process");

	*yes = ok && (strstr(text, "ksm_merge_any yes") || strstr(text, "ksm_merge_any: yes") ||
		      strstr(text, "ksm_mergeable yes") || strstr(text, "ksm_mergeable: yes"));
	g_free(text);
	g_free(path);
	return ok;
}

/* Sleeps until the monotonic time due (ns); false when a signal was caught. */
static bool wait_until(int64_t due_ns)
{
	struct timespec ts = { due_ns / 1000000000, due_ns % 1000000000 };

	while (!signals_caught()) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (rc == 0)
			return !signals_caught();
		if (rc != EINTR)
			return false;
	}
	return false;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The knobs of the setting, written in the order tune's apply lines give. */
static bool apply(const struct tune_setting *s, GError **error)
{
	return live_write_knob(KNOB_ADVISOR_MODE, s->advisor ? ADVISOR_SCAN_TIME : ADVISOR_NONE, error) &&
	       (!s->advisor || live_write_knob(KNOB_ADVISOR_TARGET_SCAN_TIME, s->target_scan_time, error)) &&
	       (s->advisor || live_write_knob(KNOB_PAGES_TO_SCAN, s->pages_to_scan, error)) &&
	       live_write_knob(KNOB_SLEEP_MILLISECS, s->sleep_millisecs, error) &&
	       live_write_knob(KNOB_SMART_SCAN, s->smart_scan, error) &&
	       live_write_knob(KNOB_USE_ZERO_PAGES, s->use_zero_pages, error) &&
	       live_write_knob(KNOB_MAX_PAGE_SHARING, s->max_page_sharing, error);
}

static char *ratio(double live, double model, bool have)
{
	return have && model > 0 ? g_strdup_printf("%.3f", live / model) : g_strdup("");
}

static void csv_row(FILE *f, const struct point *l, const struct point *m)
{
	char *r1 = ratio((double)l->pages_sharing, (double)m->pages_sharing, m->have);
	char *r2 = ratio(l->cpu_ms, m->cpu_ms, m->have);

	fprintf(f, "%.3f,%" PRIu64 ",", l->t_s, l->pages_sharing);
	if (m->have)
		fprintf(f, "%" PRIu64, m->pages_sharing);
	fprintf(f, ",%s,%" PRIu64 ",", r1, l->ksm_zero_pages);
	if (m->have)
		fprintf(f, "%" PRIu64, m->ksm_zero_pages);
	fprintf(f, ",%.3f,", l->cpu_ms);
	if (m->have)
		fprintf(f, "%.3f", m->cpu_ms);
	fprintf(f, ",%s,%" PRIu64 ",", r2, l->full_scans);
	if (m->have)
		fprintf(f, "%" PRIu64, m->full_scans);
	fputc('\n', f);
	g_free(r1);
	g_free(r2);
}

#define CSV_HEADER "t_s,live_pages_sharing,model_pages_sharing,pages_sharing_ratio," \
	"live_ksm_zero_pages,model_ksm_zero_pages,live_ksmd_cpu_ms,model_ksmd_cpu_ms," \
	"ksmd_cpu_ratio,live_full_scans,model_full_scans\n"

static void text_row(const struct point *l, const struct point *m)
{
	char mp[32] = "-", mc[32] = "-", r1[16] = "-", r2[16] = "-";

	if (m->have) {
		g_snprintf(mp, sizeof(mp), "%" PRIu64, m->pages_sharing);
		g_snprintf(mc, sizeof(mc), "%.1f", m->cpu_ms);
		if (m->pages_sharing)
			g_snprintf(r1, sizeof(r1), "%.3f", (double)l->pages_sharing / (double)m->pages_sharing);
		if (m->cpu_ms > 0)
			g_snprintf(r2, sizeof(r2), "%.3f", l->cpu_ms / m->cpu_ms);
	}
	printf("%8.1f  %12" PRIu64 "  %12s  %6s  %12.1f  %12s  %6s\n", l->t_s, l->pages_sharing, mp, r1,
	       l->cpu_ms, mc, r2);
	fflush(stdout);
}

/*
 * The live side, inside a session: the setting, run=1 at t = 0, a sample
 * every --every seconds (rows printed as they come), into live.
 */
static bool sample_live(const struct args *a, GArray *mpts, GArray *live, GError **error)
{
	uint64_t cpu0;
	bool seen;
	size_t n = (size_t)floor(a->minutes * 60 / a->every + 1e-9);

	if (!apply(&a->setting, error) || !live_ksmd_cpu_ns(&cpu0, &seen, error))
		return false;
	int64_t t0 = now_ns();

	if (!live_write_knob(KNOB_RUN, 1, error))
		return false;
	for (size_t i = 1; i <= n; i++) {
		struct ksm_counters c;
		uint64_t cpu;

		if (!wait_until(t0 + (int64_t)llround(i * a->every * 1e9)))
			return true;	/* interrupted: the caller reports it */
		double t = (now_ns() - t0) / 1e9;

		if (!live_read_counters(&c, error) || !live_ksmd_cpu_ns(&cpu, &seen, error))
			return false;
		struct point l = { t, true, c.pages_sharing, c.ksm_zero_pages, c.full_scans,
				   (cpu - cpu0) / 1e6 };
		g_array_append_val(live, l);
		struct point none = { 0 }, *m = i <= mpts->len ? &g_array_index(mpts, struct point, i - 1) : &none;

		if (!a->json)
			text_row(&l, m);
		else
			cli_notice(PROG, "%zu/%zu t=%.0f s pages_sharing %" PRIu64, i, n, t,
				   l.pages_sharing);
	}
	return true;
}

static void put_csv(FILE *f, GArray *live, GArray *mpts)
{
	struct point none = { 0 };

	fputs(CSV_HEADER, f);
	for (guint i = 0; i < live->len; i++)
		csv_row(f, &g_array_index(live, struct point, i),
			i < mpts->len ? &g_array_index(mpts, struct point, i) : &none);
}

struct json_ctx {
	GArray *live, *mpts;
};

static void fill(void *ctx, FILE *f)
{
	struct json_ctx *j = ctx;

	put_csv(f, j->live, j->mpts);
}

static void put_json(const struct args *a, GArray *live, GArray *mpts)
{
	struct json_ctx j = { live, mpts };
	char *csv = json_capture(fill, &j), *name = tune_setting_name(&a->setting);
	GString *g = g_string_new("{\"command\": \"verify\", \"trace\": ");

	json_string(g, a->trace);
	g_string_append(g, ", \"setting\": ");
	json_string(g, name);
	g_string_append(g, ", \"pids\": [");
	for (guint i = 0; i < a->pids->len; i++)
		g_string_append_printf(g, "%s%d", i ? ", " : "", (int)g_array_index(a->pids, pid_t, i));
	g_string_append_printf(g, "], \"minutes\": %.3f, \"every_s\": %.3f,\n\"samples\": ", a->minutes,
			       a->every);
	json_csv_rows(g, csv);
	g_string_append(g, "}\n");
	fputs(g->str, stdout);
	g_string_free(g, TRUE);
	g_free(csv);
	g_free(name);
}

static int fail(GError *error, int status)
{
	cli_error(PROG, "%s", error->message);
	g_error_free(error);
	return status;
}

static int parse(struct args *a, int argc, char **argv)
{
	const struct cli_parser p = { .prog = PROG, .rows = rows, .n = G_N_ELEMENTS(rows), .base = a,
				      .once = &a->once, .own = own };
	int status = cli_parse(&p, argc, argv);

	if (status >= 0 || a->help) {
		if (a->help)
			usage(stdout);
		return status < 0 ? 0 : status;
	}
	if (optind < argc)
		return cli_extra_arg(PROG, argv[optind]);
	if (!a->trace || !a->have_setting || !a->pids->len) {
		cli_error(PROG, "--trace, --setting and --pid are needed (see ksmsim verify --help)");
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_verify(int argc, char **argv)
{
	struct args a = defaults;
	GArray *mpts = g_array_new(FALSE, TRUE, sizeof(struct point));
	GArray *live = g_array_new(FALSE, TRUE, sizeof(struct point));
	GError *error = NULL;
	atomic_file *out = NULL;
	struct live_session *s = NULL;
	int status;

	a.pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
	status = parse(&a, argc, argv);
	if (status >= 0)
		goto done;
	status = EXIT_USAGE;
	bool any = false;
	for (guint i = 0; i < a.pids->len; i++) {
		bool yes;

		if (!mergeable(g_array_index(a.pids, pid_t, i), &yes, &error)) {
			status = fail(error, EXIT_USAGE);
			goto done;
		}
		any |= yes;
	}
	if (!any) {
		cli_error(PROG, "none of the --pid processes is mergeable (start it with"
			   " 'ksmsim merge-exec -- COMMAND', or it must madvise MADV_MERGEABLE)");
		goto done;
	}
	if (a.csv && !(out = atomic_file_open(a.csv, &error))) {
		status = fail(error, EXIT_USAGE);
		goto done;
	}
	/* the model first: a bad trace or setting stops verify before KSM is touched */
	signals_install(SIGNALS_EXIT);
	if (!model(&a, mpts, &error)) {
		status = run_error_status(error);
		fail(error, 0);
		goto done;
	}
	live_allow_pids((const pid_t *)a.pids->data, a.pids->len);
	live_hold_khugepaged(false);	/* the services run as they always do */
	if (!(s = live_session_begin(&error))) {
		status = fail(error, EXIT_USAGE);
		goto done;
	}
	char *name = tune_setting_name(&a.setting);

	if (!a.json) {
		printf("verify: %s for %.3g min, a sample every %.3g s; model: %s\n", name, a.minutes,
		       a.every, a.trace);
		printf("%8s  %12s  %12s  %6s  %12s  %12s  %6s\n", "t_s", "live_sharing", "model",
		       "ratio", "live_cpu_ms", "model", "ratio");
		fflush(stdout);
	}
	g_free(name);
	bool ok = sample_live(&a, mpts, live, &error);
	GError *end_error = NULL;

	if (!live_session_end(s, &end_error)) {
		cli_error(PROG, "%s", end_error->message);
		g_error_free(end_error);
		ok = false;
		status = EXIT_USAGE;
	}
	if (!ok) {
		if (error)
			status = fail(error, EXIT_USAGE);
		goto done;
	}
	if (signals_caught()) {
		status = signals_exit_status(0);
		goto done;
	}
	if (out) {
		put_csv(atomic_file_stream(out), live, mpts);
		if (!atomic_file_commit(out, &error)) {
			out = NULL;
			status = fail(error, EXIT_USAGE);
			goto done;
		}
		out = NULL;
	}
	if (a.json)
		put_json(&a, live, mpts);
	status = 0;
done:
	if (out)
		atomic_file_abort(out);
	g_array_free(a.pids, TRUE);
	g_array_free(mpts, TRUE);
	g_array_free(live, TRUE);
	return status;
}
