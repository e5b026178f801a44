// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim tune: which pages_to_scan and sleep_millisecs (or advisor, smart
 * scan, zero pages, max_page_sharing) for this trace, within a CPU budget?
 * The options, files and exit status around analysis/tune.h.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include "analysis/gnuplot.h"
#include "analysis/tune.h"
#include "analysis/workers.h"
#include "cli/cli.h"
#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/file_id.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/signals.h"
#include "util/size.h"

#define PROG "ksmsim tune"
#define BUDGET_DEFAULT 5.0

static void usage(FILE *f)
{
	size_t n;
	const struct tune_setting *grid = tune_default_grid(&n);

	fprintf(f,
"usage: ksmsim tune TRACE [--cpu-budget PCT] [-o CSV] [--plot PNG] [--jobs N] [OPTIONS]\n"
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
"and at the end; the oracle's ideal saving at the end, and the first\n"
"sample time at which pages saved reached 50%% and 90%% of it; cow_ksm per\n"
"second (the application's copy-on-write faults on merged pages); the\n"
"rmap_items' memory (saved x 4 KiB - general_profit) and general_profit.\n"
"The frontier: a setting is on it unless another has no more CPU and no\n"
"smaller mean saved, one of the two strictly. The recommendation: among\n"
"the settings within the budget, the one with the largest mean saved\n"
"(ties: the least CPU, then the first listed); when none is within, the\n"
"cheapest, and the report says so. It prints why, and the cheapest\n"
"setting that would save more.\n"
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
"  --setting SPEC      a setting in place of the default grid (repeat for\n"
"                      more, run in the order given): comma-separated\n"
"                      KNOB=VALUE of pages_to_scan, sleep_millisecs,\n"
"                      advisor (0|1), advisor_target_scan_time, smart_scan,\n"
"                      use_zero_pages, max_page_sharing; the rest as the\n"
"                      kernel's defaults, e.g. pages_to_scan=2000,sleep_millisecs=20\n"
"  -j, --jobs N        runs at once, each in a process of its own (default:\n"
"                      the CPUs online; fewer when N times the model's\n"
"                      memory estimate would pass the --max-memory limit).\n"
"                      The output does not depend on it\n"
"  -o, --csv FILE      one row per setting, each complete on its own (the\n"
"                      trace, every knob, every figure, the cost table, the\n"
"                      budget, within_budget, frontier and recommended as 0/1)\n"
"  --plot PNG          mean pages saved against ksmd CPU %% (log scale), drawn\n"
"                      by gnuplot (pngcairo): the frontier joined and\n"
"                      labelled, the recommendation circled, the budget a\n"
"                      dashed line; without gnuplot: an error before any run\n"
"Run options, the same for every setting:\n");
	run_options_help(f, RUN_OPTIONS_TUNE, 22);
	fprintf(f,
"(tune refuses the knobs its settings pin: --pages-to-scan, --sleep-millisecs,\n"
"--smart-scan, --use-zero-pages, --max-page-sharing,\n"
"--advisor-target-scan-time; use --setting.)\n"
"\n"
"ksmd's CPU comes from the built-in cost table (measured once on the\n"
"reference machine) unless --costs-csv names one measured here ('ksmsim\n"
"bench costs --csv'); the report says which. On a trace of digest content\n"
"(version 4) nothing changes: tune compares no checksums.\n"
"TRACE is read whole and checked before any run, then once per run (so it\n"
"must be a file, not '-'). Every setting is one deterministic run in a fresh\n"
"process: the report, CSV and plot are the same bytes on a rerun and with\n"
"any --jobs; timings go to standard error only.\n"
"Exit status: 0 done, 1 an invariant failed (--check), 2 bad usage, bad\n"
"input (one line naming the option, or 'FILE:LINE: problem'), a trace too\n"
"big for the memory, or a failed plot; 128 + signal when interrupted (130\n"
"SIGINT, 143 SIGTERM, 129 SIGHUP, 141 SIGPIPE). Outputs are written whole\n"
"or not at all, only once every run succeeded.\n");
}

enum { OPT_BUDGET = 256, OPT_SETTING, OPT_JOBS, OPT_CSV, OPT_PLOT, OPT_HELP };

static int report(GError *error)
{
	int status = error && error->domain == TUNE_ERROR ? error->code : run_error_status(error);

	error_line(PROG, error ? error->message : "failed");
	g_clear_error(&error);
	return status;
}

/* The command line, as parsed. */
struct args {
	struct run_options ro;		/* the run options, and in ro.cfg the run */
	const char *csv_path, *png;
	uint64_t jobs;
	double budget;
	GArray *settings;		/* of struct tune_setting: --setting, in order */
};

/* The knobs a setting pins: a command-line value for them would be lost. */
static bool grid_knob(int knob)
{
	return knob == KNOB_PAGES_TO_SCAN || knob == KNOB_SLEEP_MILLISECS ||
	       knob == KNOB_SMART_SCAN || knob == KNOB_USE_ZERO_PAGES ||
	       knob == KNOB_MAX_PAGE_SHARING || knob == KNOB_ADVISOR_TARGET_SCAN_TIME;
}

static int bad_value(const char *opt, const char *arg, const char *wants)
{
	char *v = escape_line(arg);

	fprintf(stderr, PROG ": %s wants %s, not '%s'\n", opt, wants, v);
	g_free(v);
	return EXIT_USAGE;
}

/* -1: go on; else the exit status (help printed, or one line on stderr). */
static int parse(int argc, char **argv, struct args *a)
{
	static const struct option fixed[] = {
		{ "cpu-budget", required_argument, NULL, OPT_BUDGET },
		{ "setting", required_argument, NULL, OPT_SETTING },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	GArray *longopts = g_array_new(TRUE, TRUE, sizeof(struct option));
	int status = -1, c;

	g_array_append_vals(longopts, fixed, G_N_ELEMENTS(fixed));
	run_options_add(&a->ro, longopts);
	const struct option *lo = (const struct option *)longopts->data;

	optind = 1;
	opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, ":hj:o:", lo, NULL)) != -1) {
		switch (c) {
		case OPT_BUDGET:
			if (!parse_double(optarg, &a->budget) || !(a->budget > 0) ||
			    a->budget > 100)
				status = bad_value("--cpu-budget", optarg,
						   "a percentage of one CPU, more than 0 and at most 100");
			break;
		case OPT_SETTING: {
			struct tune_setting s;
			char *why;

			if (!tune_setting_parse(optarg, &s, &why)) {
				char *w = escape_line(why);

				fprintf(stderr, PROG ": --setting: %s\n", w);
				g_free(w);
				g_free(why);
				status = EXIT_USAGE;
			} else {
				g_array_append_val(a->settings, s);
			}
			break;
		}
		case 'j':
		case OPT_JOBS:
			if (!parse_u64(optarg, WORKERS_MAX_JOBS, &a->jobs) || !a->jobs) {
				char *w = g_strdup_printf("1 to %d worker processes", WORKERS_MAX_JOBS);

				status = bad_value(option_name(lo, c), optarg, w);
				g_free(w);
			}
			break;
		case 'o':
		case OPT_CSV: a->csv_path = optarg; break;
		case OPT_PLOT: a->png = optarg; break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			status = 0;
			break;
		default:
			if (c >= CLI_OPT_KNOB && c < CLI_OPT_KNOB + KNOB_NR && grid_knob(c - CLI_OPT_KNOB)) {
				fprintf(stderr, PROG ": %s: tune sets %s in each setting (see --setting)\n",
					option_name(lo, c), knob_table[c - CLI_OPT_KNOB].name);
				status = EXIT_USAGE;
				break;
			}
			int took = run_option_take(&a->ro, c, optarg);
			if (took < 0)
				status = EXIT_USAGE;
			else if (!took)
				status = option_error(PROG, argv, lo, c);
		}
	}
	g_array_free(longopts, TRUE);
	if (status >= 0)
		return status;
	if (optind == argc) {
		fprintf(stderr, PROG ": a TRACE is required (see --help)\n");
		return EXIT_USAGE;
	}
	if (argc - optind > 1) {
		char *v = escape_line(argv[optind + 1]);

		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", v);
		g_free(v);
		return EXIT_USAGE;
	}
	a->ro.cfg.trace = argv[optind];
	/* every worker opens the trace again: a pipe or FIFO would be drained by the check */
	struct stat st;
	if (!strcmp(a->ro.cfg.trace, "-") ||
	    (stat(a->ro.cfg.trace, &st) == 0 && !S_ISREG(st.st_mode))) {
		char *name = escape_line(a->ro.cfg.trace);

		fprintf(stderr, PROG ": %s: TRACE is read once per run: a regular file, not a pipe,"
			" FIFO or device\n", name);
		g_free(name);
		return EXIT_USAGE;
	}
	return -1;
}

/* The whole trace read once, and as many runs at once as the memory holds. */
static bool plan_jobs(struct args *a, size_t n, unsigned *jobs, GError **error)
{
	struct run_config check = a->ro.cfg;
	struct run_estimate est;

	if (!check.max_memory_given)
		check.max_memory = mem_available();
	if (!run_estimate(&check, NULL, &est, error))
		return false;
	uint64_t limit = check.max_memory, want = a->jobs;
	if (!want) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		want = online < 1 ? 1 : MIN((uint64_t)online, WORKERS_MAX_JOBS);
	}
	want = MIN(want, (uint64_t)(n ? n : 1));
	if (limit && est.need && want > limit / est.need) {
		if (!a->ro.quiet)
			fprintf(stderr, PROG ": %" PRIu64 " runs at once instead of %" PRIu64
				": each needs about %" PRIu64 " MiB\n", limit / est.need, want,
				est.need >> 20);
		want = MAX(limit / est.need, 1);
	}
	*jobs = (unsigned)want;
	return true;
}

/* The runs, then the outputs: false with the error. */
static bool tune(struct args *a, const struct tune_setting *sv, size_t n, GError **error)
{
	struct tune_opts o = { .run = a->ro.cfg, .verbose = !a->ro.quiet };
	struct tune_row *rows = NULL;
	atomic_file *csv = NULL, *plot = NULL;
	bool ok = false;

	if ((a->csv_path && !(csv = atomic_file_open(a->csv_path, error))) ||
	    (a->png && !(plot = atomic_file_open(a->png, error))) || !plan_jobs(a, n, &o.jobs, error))
		goto out;
	/* each run was held to the limit above, whole */
	o.run.max_memory = 0;
	rows = g_new0(struct tune_row, n ? n : 1);
	int64_t t0 = g_get_monotonic_time();
	if (!tune_run(&o, sv, n, rows, error))
		goto out;
	long pick = tune_judge(rows, n, a->budget);
	if (csv)
		tune_csv(atomic_file_stream(csv), o.run.trace, o.run.costs_csv, sv, rows, n, a->budget);
	if (plot) {
		gchar *base = g_path_get_basename(o.run.trace);
		gchar *title = g_strdup_printf("ksmsim tune %s: pages saved against modelled ksmd CPU,"
					       " one point per setting", base);
		bool drawn = tune_plot(atomic_file_stream(plot), title, sv, rows, n, a->budget, error);

		g_free(title);
		g_free(base);
		if (!drawn)
			goto out;
	}
	atomic_file **const all[] = { &csv, &plot };
	if (!atomic_file_commit_all(all, G_N_ELEMENTS(all), error))
		goto out;
	tune_report(stdout, o.run.trace, o.run.costs_csv, sv, rows, n, pick, a->budget);
	if (fflush(stdout) != 0) {
		g_set_error(error, TUNE_ERROR, WORKERS_INPUT, "standard output: write failed");
		goto out;
	}
	if (o.verbose)
		fprintf(stderr, PROG ": %zu runs, %u at once: %.1f s\n", n, o.jobs,
			(g_get_monotonic_time() - t0) / 1e6);
	ok = true;
out:
	atomic_file_abort(csv);
	atomic_file_abort(plot);
	g_free(rows);
	return ok;
}

int cmd_tune(int argc, char **argv)
{
	struct args a = { .budget = BUDGET_DEFAULT };
	GError *error = NULL;
	int status;

	a.settings = g_array_new(FALSE, TRUE, sizeof(struct tune_setting));
	run_options_init(&a.ro, PROG, RUN_OPTIONS_TUNE);
	/* how fast a setting saves wants a finer clock than run's 1 s; batches cost time */
	a.ro.cfg.interval_ms = 100;
	a.ro.cfg.model.batch_time = true;
	status = parse(argc, argv, &a);
	if (status >= 0)
		goto out;
	status = EXIT_USAGE;
	const struct file_use uses[] = {
		{ "TRACE", a.ro.cfg.trace, false }, { "--costs-csv", a.ro.cfg.costs_csv, false },
		{ "--csv", a.csv_path, true }, { "--plot", a.png, true },
	};
	if (!file_uses_distinct(uses, G_N_ELEMENTS(uses), &error)) {
		status = report(error);
		goto out;
	}
	size_t n;
	const struct tune_setting *sv = tune_default_grid(&n);
	if (a.settings->len) {
		sv = (const struct tune_setting *)a.settings->data;
		n = a.settings->len;
	}
	/* a cost table that cannot be read is refused before any run, not by every worker */
	struct tune_opts o = { .run = a.ro.cfg };
	struct run_config one;
	if (!tune_setting_run(&o, &sv[0], &one, &error)) {
		/* the only refusal here is the cost table's: name the option */
		if (a.ro.cfg.costs_csv) {
			char *m = g_strdup_printf("--costs-csv: %s", error->message);

			g_free(error->message);
			error->message = m;
		}
		status = report(error);
		goto out;
	}
	if (a.png && !gnuplot_available(TUNE_ERROR, &error)) {
		status = report(error);
		goto out;
	}
	signals_install(SIGNALS_EXIT);
	status = tune(&a, sv, n, &error) ? 0 : report(error);
out:
	g_array_free(a.settings, TRUE);
	run_options_free(&a.ro);
	return status;
}
