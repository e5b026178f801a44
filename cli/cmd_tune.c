// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim tune: which pages_to_scan and sleep_millisecs (or advisor, smart
 * scan, zero pages, max_page_sharing) for this trace, within a CPU budget?
 * The options, files and exit status around analysis/tune.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "analysis/gnuplot.h"
#include "analysis/tune.h"
#include "cli/cli.h"
#include "util/atomic_file.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/signals.h"

#define PROG "ksmsim tune"
#define BUDGET_DEFAULT 5.0
/* the plot's title after "ksmsim tune TRACE: ", for a run and a replot alike */
#define PLOT_WHAT "MiB saved against modelled ksmd CPU, one point per setting"

static void usage(FILE *f)
{
	size_t n;
	const struct tune_setting *grid = tune_default_grid(&n);

	fprintf(f,
"usage: ksmsim tune TRACE [--cpu-budget PCT] [-o CSV] [--plot PNG] [--jobs N] [OPTIONS]\n"
"       ksmsim tune --replot CSV --plot PNG\n"
"Replays TRACE through the model once per knob setting and recommends the\n"
"setting for a ksmd CPU budget. Each setting pins pages_to_scan,\n"
"sleep_millisecs, advisor_mode (with advisor_target_scan_time),\n"
"smart_scan, use_zero_pages and max_page_sharing for the whole run (the\n"
"trace's own 'set' records of them are ignored); batches take their\n"
"modelled CPU time (run's --batch-time, always on here), so a setting\n"
"that would need more than one CPU is held to what one CPU scans.\n"
"\n"
"Per setting: ksmd CPU as a share of one CPU over the run; pages saved\n"
"(pages_sharing + ksm_zero_pages) on average over the samples after t = 0\n"
"(also in MiB and as a share of the most pages the trace maps at once)\n"
"and at the end; the oracle's ideal saving at the end, and the first\n"
"sample time at which pages saved reached 50%% and 90%% of it; cow_ksm per\n"
"second (the application's copy-on-write faults on merged pages); the\n"
"rmap_items' memory (saved x 4 KiB - general_profit) and general_profit.\n"
"The frontier: a setting is on it unless another has no more CPU and no\n"
"smaller mean saved, one of the two strictly. The recommendation: among\n"
"the settings within the budget, the one with the largest mean saved\n"
"(ties: the least CPU, then the first listed); when none is within, the\n"
"cheapest, and the report says so. It prints why, the cheapest setting\n"
"that would save more, the band (the settings whose CPU is within the\n"
"pick's +- --cpu-spread), the sysfs writes that apply the pick and those\n"
"that restore the knobs found in /sys/kernel/mm/ksm (the kernel's defaults\n"
"where it is not readable), and the 'ksmsim run' line that reproduces the\n"
"pick's row. Progress on standard error: a line per finished setting with\n"
"the time so far and an estimate of the time left.\n"
"\n"
"The default grid (%zu settings; pages/ms is pages_to_scan/sleep_millisecs):\n", n);
	for (size_t i = 0; i < n; i++) {
		char *name = tune_setting_name(&grid[i]);

		fprintf(f, "%s%s", i % 6 ? ", " : i ? ",\n  " : "  ", name);
		g_free(name);
	}
	fprintf(f,
"\n"
"(advisor Ns: advisor_mode scan-time with advisor_target_scan_time N,\n"
"starting from advisor_min_pages_to_scan at 20 ms; smart_scan=0: smart\n"
"scan off; zero_pages: use_zero_pages 1; mps=N: max_page_sharing N; the\n"
"rest at the kernel's defaults: smart_scan 1, use_zero_pages 0,\n"
"max_page_sharing 256).\n"
"\n"
"  --cpu-budget PCT    ksmd CPU the recommendation may take, in percent of\n"
"                      one CPU, more than 0 and at most 100 (default 5)\n"
"  --cpu-spread PCT    how far the modelled CPU may be off, +- percent of\n"
"                      each figure (default 15: the cost table against the\n"
"                      live ksmd, sim/MODEL.md); the pick's band is the\n"
"                      settings within it, and the report names the pick at\n"
"                      either end of it\n"
"  --json              the report on standard output as one JSON object: the\n"
"                      budget, spread, mapped pages, the recommended setting's\n"
"                      name and 'settings', the CSV's rows with its fields\n"
"  --setting SPEC      a setting in place of the default grid (repeat for\n"
"                      more, run in the order given): comma-separated\n"
"                      KNOB=VALUE of pages_to_scan, sleep_millisecs,\n"
"                      advisor (0|1), advisor_target_scan_time, smart_scan,\n"
"                      use_zero_pages, max_page_sharing; the rest as the\n"
"                      kernel's defaults, e.g. pages_to_scan=2000,sleep_millisecs=20\n");
	pool_options_help_jobs(f);
	fprintf(f,
"  -o, --csv FILE      one row per setting, each complete on its own (the\n"
"                      trace, every knob, every figure, the cost table, the\n"
"                      budget, within_budget, frontier and recommended as 0/1)\n"
"  --plot PNG          mean MiB saved (and %% of the mapped memory) against\n"
"                      ksmd CPU %% (log scale), drawn by gnuplot (pngcairo):\n"
"                      the frontier joined, every point labelled where no\n"
"                      label overlaps another, the recommendation circled,\n"
"                      the budget a dashed line; without gnuplot: an error\n"
"                      before any run\n"
"  --replot CSV        with --plot PNG and nothing else: no run; the plot\n"
"                      --plot drew for the rows of CSV, a file '-o' wrote\n"
"                      (today's plot from a recorded study). CSV is checked\n"
"                      whole first: its header, each row's fields, numbers\n"
"                      and setting name, and its within_budget, frontier\n"
"                      and recommended against the rows; a bad one is\n"
"                      refused with 'CSV:LINE: problem' (exit 2)\n"
"Run options, the same for every setting:\n");
	run_options_help(f, RUN_OPTIONS_TUNE, 22);
	fprintf(f,
"(tune refuses the knobs its settings pin: --pages-to-scan, --sleep-millisecs,\n"
"--smart-scan, --use-zero-pages, --max-page-sharing,\n"
"--advisor-target-scan-time; use --setting.)\n"
"\n"
"ksmd's CPU comes from the built-in cost table (fitted to the live ksmd of\n"
"the reference machine, AMD EPYC) unless --costs-csv names one fitted here\n"
"('ksmsim bench calibrate -o FILE'); the report says which. On a trace of digest content\n"
"(version 4) nothing changes: tune compares no checksums.\n"
"TRACE is read whole and checked before any run, then once per run (so it\n"
"must be a file, not '-'). Every setting is one deterministic run in a fresh\n"
"process: the report, CSV and plot are the same bytes on a rerun and with\n"
"any --jobs; timings go to standard error only.\n");
	pool_options_help_exit(f);
}

enum { OPT_BUDGET = 256, OPT_SETTING, OPT_SPREAD, OPT_JSON };

/* The command line, as parsed. */
struct args {
	struct pool_options po;		/* the options tune shares with advise; in po.ro.cfg the run */
	double budget;
	double spread;			/* --cpu-spread */
	bool json;			/* --json */
	GArray *settings;		/* of struct tune_setting: --setting, in order */
	const char *setting_61;		/* the first --setting naming a knob Linux 6.1 lacks */
};

/*
 * Under --kernel 6.1: a --setting naming smart_scan or the advisor is
 * refused (6.1 has neither knob); the default grid loses its advisor
 * settings and its smart_scan=0 ones (what every 6.1 setting is), and
 * keeps the rest, whose smart scan is then not pinned (tune_setting_run).
 */
static bool settings_for_61(struct args *a, const struct tune_setting **sv, size_t *n)
{
	if (a->po.ro.cfg.model.kernel != KSM_KERNEL_6_1)
		return true;
	if (a->setting_61) {
		cli_error(PROG, "--setting '%s': Linux 6.1 has no smart_scan or advisor knob;"
			  " drop it or use --kernel 6.18", a->setting_61);
		return false;
	}
	if (a->settings->len)
		return true;
	for (size_t i = 0; i < *n; i++)
		if (!(*sv)[i].advisor && (*sv)[i].smart_scan)
			g_array_append_val(a->settings, (*sv)[i]);
	*sv = (const struct tune_setting *)a->settings->data;
	*n = a->settings->len;
	return true;
}

/* The knobs a setting pins: a command-line value for them would be lost. */
static bool grid_knob(int knob)
{
	return knob == KNOB_PAGES_TO_SCAN || knob == KNOB_SLEEP_MILLISECS ||
	       knob == KNOB_SMART_SCAN || knob == KNOB_USE_ZERO_PAGES ||
	       knob == KNOB_MAX_PAGE_SHARING || knob == KNOB_ADVISOR_TARGET_SCAN_TIME;
}

/* tune's own options (cli.h, pool_take_fn): 1 taken, 0 not tune's, -1 refused. */
static int take(void *ctx, int c, const char *arg, const struct option *lo)
{
	struct args *a = ctx;

	switch (c) {
	case OPT_BUDGET:
		if (!parse_double(arg, &a->budget) || !(a->budget > 0) || a->budget > 100) {
			cli_usage_error(PROG, "--cpu-budget",
					"a percentage of one CPU, more than 0 and at most 100", arg);
			return -1;
		}
		return 1;
	case OPT_SPREAD:
		if (!parse_double(arg, &a->spread) || !(a->spread >= 0) || a->spread >= 100) {
			cli_usage_error(PROG, "--cpu-spread",
					"a percentage, at least 0 and less than 100", arg);
			return -1;
		}
		return 1;
	case OPT_JSON:
		a->json = true;
		return 1;
	case OPT_SETTING: {
		struct tune_setting s;
		char *why;

		if (!tune_setting_parse(arg, &s, &why)) {
			cli_error(PROG, "--setting: %s", why);
			g_free(why);
			return -1;
		}
		g_array_append_val(a->settings, s);
		if (!a->setting_61 && (strstr(arg, "smart_scan") || strstr(arg, "advisor")))
			a->setting_61 = arg;
		return 1;
	}
	}
	if (c >= CLI_OPT_KNOB && c < CLI_OPT_KNOB + KNOB_NR && grid_knob(c - CLI_OPT_KNOB)) {
		cli_error(PROG, "%s: tune sets %s in each setting (see --setting)",
			option_name(lo, c), knob_table[c - CLI_OPT_KNOB].name);
		return -1;
	}
	return 0;
}

/* The settings, their rows, the budget and the pick: what the pool's callbacks see. */
struct tune_pool {
	struct tune_frame fr;
	const struct tune_setting *sv;
	size_t n;
	struct tune_row *rows;
	long pick;
	bool json;
};

static bool run_all(void *ctx, const struct run_config *run, unsigned jobs, bool verbose,
		    GError **error)
{
	struct tune_pool *tp = ctx;
	struct tune_opts o = { .run = *run, .jobs = jobs, .verbose = verbose };

	if (!tune_run(&o, tp->sv, tp->n, tp->rows, error))
		return false;
	tp->pick = tune_judge(tp->rows, tp->n, tp->fr.budget_pct);
	return true;
}

static void put_csv(void *ctx, FILE *f)
{
	struct tune_pool *tp = ctx;

	tune_csv(f, &tp->fr, tp->sv, tp->rows, tp->n);
}

static bool put_plot(void *ctx, FILE *png, const char *title, GError **error)
{
	struct tune_pool *tp = ctx;

	return tune_plot(png, title, &tp->fr, tp->sv, tp->rows, tp->n, error);
}

static void put_report(void *ctx, FILE *f, uint64_t digests)
{
	struct tune_pool *tp = ctx;

	/* digest content changes nothing here: tune compares no checksums */
	if (tp->json)
		tune_json(f, &tp->fr, tp->sv, tp->rows, tp->n, tp->pick);
	else
		tune_report(f, &tp->fr, tp->sv, tp->rows, tp->n, tp->pick);
}

/* --replot given: the only mode without a TRACE. */
static bool replot_asked(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--replot") || g_str_has_prefix(argv[i], "--replot="))
			return true;
	return false;
}

/*
 * ksmsim tune --replot CSV --plot PNG: the rows read back (tune_csv_read),
 * drawn by tune_plot under the title a run gives them (pool_options.c's
 * plot_title: the trace's base name), so the bytes are a run's.
 */
static int replot(int argc, char **argv)
{
	enum { OPT_REPLOT = 256, OPT_PLOT };
	static const struct option lo[] = {
		{ "replot", required_argument, NULL, OPT_REPLOT },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_once once = { 0 };
	const char *csv = NULL, *png = NULL;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == '?' || c == ':')
			return cli_option_error(PROG, argv, lo, c);
		if (!cli_once(&once, PROG, option_name(lo, c), c))
			return EXIT_USAGE;
		if (c == OPT_REPLOT)
			csv = optarg;
		else
			png = optarg;
	}
	if (optind < argc)
		return cli_error(PROG, "--replot takes no TRACE nor run options, only --plot PNG,"
				 " not '%s'", argv[optind]);
	if (!png)
		return cli_error(PROG, "--replot wants --plot PNG: the file to draw");
	if (!*csv)
		return cli_usage_error(PROG, "--replot", "a tune CSV", csv);

	struct tune_table t;
	GError *error = NULL;
	atomic_file *out = NULL;

	if (!gnuplot_available(TUNE_ERROR, &error) || !tune_csv_read(csv, &t, &error))
		return pool_report(PROG, TUNE_ERROR, error);
	gchar *base = g_path_get_basename(t.trace);
	char *title = g_strdup_printf("%s %s: %s", PROG, base, PLOT_WHAT);
	bool ok = false;

	signals_install(SIGNALS_EXIT);
	if ((out = atomic_file_open(png, &error))) {
		/* the PNG whole or not at all: commit frees out either way */
		if (tune_plot(atomic_file_stream(out), title, &t.fr, t.s, t.rows, t.n, &error))
			ok = atomic_file_commit(out, &error);
		else
			atomic_file_abort(out);
	}
	g_free(title);
	g_free(base);
	tune_table_clear(&t);
	return ok ? 0 : pool_report(PROG, TUNE_ERROR, error);
}

int cmd_tune(int argc, char **argv)
{
	static const struct option own[] = {
		{ "cpu-budget", required_argument, NULL, OPT_BUDGET },
		{ "setting", required_argument, NULL, OPT_SETTING },
		{ "cpu-spread", required_argument, NULL, OPT_SPREAD },
		{ "json", no_argument, NULL, OPT_JSON },
	};
	struct args a = { .budget = BUDGET_DEFAULT, .spread = TUNE_SPREAD_DEFAULT };
	GError *error = NULL;
	int status;

	if (replot_asked(argc, argv))
		return replot(argc, argv);
	a.settings = g_array_new(FALSE, TRUE, sizeof(struct tune_setting));
	pool_options_init(&a.po, PROG, RUN_OPTIONS_TUNE);
	/* how fast a setting saves wants a finer clock than run's 1 s; batches cost time */
	a.po.ro.cfg.interval_ms = 100;
	a.po.ro.cfg.model.batch_time = true;
	a.po.repeats = (const int[]){ OPT_SETTING, 0 };
	status = pool_options_parse(&a.po, argc, argv, own, G_N_ELEMENTS(own), take, &a, usage);
	if (status >= 0)
		goto out;
	if (!pool_options_files(&a.po, &error)) {
		status = pool_report(PROG, TUNE_ERROR, error);
		goto out;
	}
	size_t n;
	const struct tune_setting *sv = tune_default_grid(&n);
	if (a.settings->len) {
		sv = (const struct tune_setting *)a.settings->data;
		n = a.settings->len;
	}
	if (!settings_for_61(&a, &sv, &n)) {
		status = EXIT_USAGE;
		goto out;
	}
	/* a cost table that cannot be read is refused before any run, not by every worker */
	struct tune_opts o = { .run = a.po.ro.cfg };
	struct run_config one;
	if (!tune_setting_run(&o, &sv[0], &one, &error)) {
		/* the only refusal here is the cost table's: name the option */
		if (a.po.ro.cfg.costs_csv) {
			char *m = g_strdup_printf("--costs-csv: %s", error->message);

			g_free(error->message);
			error->message = m;
		}
		status = pool_report(PROG, TUNE_ERROR, error);
		goto out;
	}
	if (a.po.png && !gnuplot_available(TUNE_ERROR, &error)) {
		status = pool_report(PROG, TUNE_ERROR, error);
		goto out;
	}
	signals_install(SIGNALS_EXIT);
	const struct pool_command cmd = {
		.domain = TUNE_ERROR,
		.plot_what = PLOT_WHAT,
		.run = run_all, .csv = put_csv, .plot = put_plot, .report = put_report,
	};
	/* what the saving is a share of: the most pages the trace maps at once */
	uint64_t mapped = 0;
	if (!tune_trace_mapped(a.po.ro.cfg.trace, &mapped, &error)) {
		status = pool_report(PROG, TUNE_ERROR, error);
		goto out;
	}
	struct tune_pool tp = {
		{ a.po.ro.cfg.trace, a.po.ro.cfg.costs_csv, a.budget, a.spread, mapped, &a.po.ro.cfg },
		sv, n, g_new0(struct tune_row, n ? n : 1), -1, a.json,
	};
	status = pool_run(&a.po, n, &cmd, &tp, &error) ? 0 : pool_report(PROG, TUNE_ERROR, error);
	g_free(tp.rows);
out:
	g_array_free(a.settings, TRUE);
	pool_options_free(&a.po);
	return status;
}
