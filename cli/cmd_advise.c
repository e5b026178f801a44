// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim advise: which checksum, and which policy, for this trace? The
 * options, files and exit status around analysis/advise.h.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include "analysis/advise.h"
#include "cli/cli.h"
#include "hashes/hash.h"
#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/file_id.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/signals.h"
#include "util/size.h"

#define PROG "ksmsim advise"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ksmsim advise TRACE [OPTIONS]\n"
"Replays TRACE through the model once per configuration: every checksum\n"
"('ksmsim hashes', all but none) with each policy whose decision reads the\n"
"checksum (kernel, classified), and once with each policy that reads none\n"
"(no-gate, dirty-bit, partial-hash: their hash column says 'none'; they run\n"
"as 'ksmsim run --policy P' does without --hash). Each policy runs with its\n"
"default parameters ('ksmsim policies'; selective, which gives up saving to\n"
"isolate security domains, only when --policies names it). It prints a\n"
"table, one row per configuration in that order, marks the Pareto frontier\n"
"and ends with one sentence: the checksum to pick and the rows on the\n"
"frontier.\n"
"\n"
"Columns: modelled ksmd CPU (ms, as run's ksmd_cpu_ms); pages saved\n"
"(pages_sharing + ksm_zero_pages) at the end and their mean over the\n"
"samples after t = 0 (every --interval-ms, and one at the end, as run's\n"
"--csv); cow_ksm; checksum false positives; unstable_corrupt_walks;\n"
"checksums computed; missed_merges at the end (the oracle's walk; '-' with\n"
"--no-ideal); the policy's own figures where not zero.\n"
"\n"
"Frontier: a row is on it unless another row has no more CPU and no\n"
"smaller mean saved, one of the two strictly (figures as printed in the\n"
"CSV: 3 decimals).\n"
"Pick: the candidates are the rows of the kernel policy with no false\n"
"positive (all kernel rows if each has some: pages a blind checksum seems\n"
"to save were merged while they changed, and CoW takes them back). B is\n"
"the largest mean saved among them; the pick is the cheapest candidate\n"
"whose mean saved is B (ties: the first listed), i.e. the cheapest checksum\n"
"that loses no pages saved. No candidate is cheaper without losing pages,\n"
"so it is the best trade-off the kernel's design offers; when a row of\n"
"another policy has no more CPU and no fewer pages saved (one strictly),\n"
"the sentence names it as dominating the pick, and the frontier rows.\n"
"Without a kernel row there is no pick.\n"
"\n"
"  --policies LIST     comma list of policy specs as run's --policy takes\n"
"                      them (default: every registry row, in its order); a\n"
"                      key=value after a spec's ':' belongs to that spec:\n"
"                      kernel,classified:classes=8,by=mm,dirty-bit\n"
"  --hashes LIST       comma list of checksums for the policies that read\n"
"                      one (default: all but none, in 'ksmsim hashes' order)\n"
"  -j, --jobs N        runs at once, each in a process of its own (default:\n"
"                      the CPUs online; fewer when N times the model's\n"
"                      memory estimate would pass the --max-memory limit).\n"
"                      The output does not depend on it\n"
"  -o, --csv FILE      the rows as CSV (frontier and pick as 0/1)\n"
"  --plot PNG          CPU against mean saved, drawn by gnuplot (pngcairo):\n"
"                      the frontier as a labelled staircase, the pick\n"
"                      circled, today's kernel (kernel/xxhash) boxed;\n"
"                      without gnuplot: an error before any run\n"
"Run options, the same for every configuration:\n");
	run_options_help(f, RUN_OPTIONS_ADVISE, 22);
	fprintf(f,
"\n"
"On a trace with digest content (version 4) the rows are computed as usual\n"
"and a warning line follows the table: false_pos says nothing there.\n"
"TRACE is read whole and checked before any run, then once per run (so it\n"
"must be a file, not '-'). Every row is one deterministic run, each in a\n"
"fresh process: the table, CSV and plot are the same bytes on a rerun and\n"
"with any --jobs; timings go to standard error only.\n"
"Exit status: 0 done, 1 an invariant failed (--check), 2 bad usage, bad\n"
"input (one line naming the option, or 'FILE:LINE: problem'), a trace too\n"
"big for the memory, or a failed plot; 128 + signal when interrupted (130\n"
"SIGINT, 143 SIGTERM, 129 SIGHUP, 141 SIGPIPE). Outputs are written whole\n"
"or not at all, only once every run succeeded.\n");
}


/*
 * --policies: a spec's parameters are comma-separated too, so a piece with
 * '=' and no ':' continues the spec before it.
 */
static bool parse_policies(const char *list, GArray *out)
{
	gchar **pieces = g_strsplit(list, ",", -1);
	GPtrArray *specs = g_ptr_array_new_with_free_func(g_free);
	bool ok = true;

	/* g_strsplit gives no piece at all for "": an empty list would run nothing */
	if (!*list) {
		fprintf(stderr, PROG ": --policies: an empty list (name one policy or more)\n");
		ok = false;
	}
	for (gchar **p = pieces; *p; p++) {
		if (specs->len && strchr(*p, '=') && !strchr(*p, ':')) {
			gchar **last = (gchar **)&specs->pdata[specs->len - 1];
			gchar *joined = g_strconcat(*last, ",", *p, NULL);

			g_free(*last);
			*last = joined;
		} else {
			g_ptr_array_add(specs, g_strdup(*p));
		}
	}
	for (guint i = 0; i < specs->len && ok; i++) {
		const char *spec = specs->pdata[i];
		struct ksm_policy p;
		GError *error = NULL;

		if (!*spec) {
			fprintf(stderr, PROG ": --policies: an empty name in '%s'\n", list);
			ok = false;
		} else if (!ksm_policy_parse(spec, &p, &error)) {
			const char *why = error->message;

			/* the parser speaks of --policy; here the option is --policies */
			if (g_str_has_prefix(why, "--policy "))
				why += strlen("--policy ");
			fprintf(stderr, PROG ": --policies: %s\n", why);
			g_error_free(error);
			ok = false;
		} else {
			for (guint j = 0; j < out->len && ok; j++) {
				const struct ksm_policy *q = &g_array_index(out, struct ksm_policy, j);

				if (!strcmp(ksm_policy_name(q), ksm_policy_name(&p))) {
					fprintf(stderr, PROG ": --policies: %s is listed twice\n",
						ksm_policy_name(&p));
					ok = false;
				}
			}
			if (ok)
				g_array_append_val(out, p);
		}
	}
	g_ptr_array_free(specs, TRUE);
	g_strfreev(pieces);
	return ok;
}

/* Every policy that reads the checksum once per hash; every other once, hash "none". */
static GArray *configurations(GArray *policies, GPtrArray *hashes)
{
	GArray *cfg = g_array_new(FALSE, TRUE, sizeof(struct advise_config));

	for (guint i = 0; i < policies->len; i++) {
		const struct ksm_policy *p = &g_array_index(policies, struct ksm_policy, i);
		/* a NULL row is the kernel's, which gates on the checksum */
		bool reads = !p->row || p->row->uses_hash;

		for (guint j = 0; j < (reads ? hashes->len : 1); j++) {
			struct advise_config c = { *p, reads ? hashes->pdata[j] : NULL };

			g_array_append_val(cfg, c);
		}
	}
	return cfg;
}

enum { OPT_POLICIES = 256, OPT_HASHES, OPT_JOBS, OPT_CSV, OPT_PLOT, OPT_HELP };

static int report(GError *error)
{
	int status = error && error->domain == ADVISE_ERROR ? error->code : run_error_status(error);

	error_line(PROG, error ? error->message : "failed");
	g_clear_error(&error);
	return status;
}

/* The command line, as parsed. */
struct args {
	struct run_options ro;		/* the run options, and in ro.cfg the run */
	const char *policies_list, *hashes_list, *csv_path, *png;
	uint64_t jobs;
	uint64_t digests;		/* records with digest content (v4): warned of */
};

/* -1: go on; else the exit status (help printed, or one line on stderr). */
static int parse(int argc, char **argv, struct args *a)
{
	static const struct option fixed[] = {
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "hashes", required_argument, NULL, OPT_HASHES },
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
		case OPT_POLICIES: a->policies_list = optarg; break;
		case OPT_HASHES: a->hashes_list = optarg; break;
		case 'j':
		case OPT_JOBS:
			if (!parse_u64(optarg, ADVISE_MAX_JOBS, &a->jobs) || !a->jobs) {
				char *v = escape_line(optarg);

				fprintf(stderr, PROG ": %s wants 1 to %d worker processes, not '%s'\n",
					option_name(lo, c), ADVISE_MAX_JOBS, v);
				g_free(v);
				status = EXIT_USAGE;
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
		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", argv[optind + 1]);
		return EXIT_USAGE;
	}
	a->ro.cfg.trace = argv[optind];
	/*
	 * Every worker opens the trace again: a pipe or FIFO would be drained
	 * by the check and leave the workers blocked in open() for ever.
	 */
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

/* The configurations the lists name, in order; NULL after one line on stderr. */
static GArray *configure(const struct args *a, GError **error)
{
	GArray *policies = g_array_new(FALSE, TRUE, sizeof(struct ksm_policy));
	GPtrArray *hashes = g_ptr_array_new();
	GArray *cfg = NULL;
	bool ok;

	if (!a->policies_list) {
		size_t nrows;
		const struct ksm_policy_row *all = ksm_policy_all(&nrows);
		GString *l = g_string_new(NULL);

		/* selective trades saving for isolation, not CPU: no rival on the frontier */
		for (size_t i = 0; i < nrows; i++)
			if (!all[i].isolates)
				g_string_append_printf(l, "%s%s", l->len ? "," : "", all[i].name);
		ok = parse_policies(l->str, policies);
		g_string_free(l, TRUE);
	} else {
		ok = parse_policies(a->policies_list, policies);
	}
	if (ok && a->hashes_list) {
		ok = cli_hash_list(PROG, "--hashes", a->hashes_list, hashes);
	} else if (ok) {
		size_t nh;
		const struct page_hash *all = hash_all(&nh);

		for (size_t i = 0; i < nh; i++)
			if (all[i].fn)
				g_ptr_array_add(hashes, (gpointer)&all[i]);
	}
	if (ok)
		cfg = configurations(policies, hashes);
	g_array_free(policies, TRUE);
	g_ptr_array_free(hashes, TRUE);
	return cfg;
}

/*
 * The whole trace read once, so that a bad record stops everything before
 * any run, and as many runs at once as the memory holds: false with the
 * refusal.
 */
static bool plan_jobs(struct args *a, size_t n, unsigned *jobs, GError **error)
{
	struct run_config check = a->ro.cfg;
	struct run_estimate est;

	/* a limit on all runs at once: one run may take it whole */
	if (!check.max_memory_given)
		check.max_memory = mem_available();
	if (!run_estimate(&check, NULL, &est, error))
		return false;
	a->digests = est.digests;
	uint64_t limit = check.max_memory, want = a->jobs;
	if (!want) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		want = online < 1 ? 1 : MIN((uint64_t)online, ADVISE_MAX_JOBS);
	}
	want = MIN(want, (uint64_t)(n ? n : 1));
	if (limit && est.need && want > limit / est.need) {
		if (!a->ro.quiet)
			fprintf(stderr, PROG ": %" PRIu64 " runs at once instead of %" PRIu64
				": each needs about %" PRIu64 " MiB\n", limit / est.need, want,
				est.need >> 20);
		want = limit / est.need;
	}
	*jobs = (unsigned)want;
	return true;
}

/* The runs, then the outputs: false with the error. */
static bool advise(struct args *a, const struct advise_config *cv, size_t n, GError **error)
{
	struct advise_opts o = { .run = a->ro.cfg, .verbose = !a->ro.quiet };
	struct advise_row *rows = NULL;
	atomic_file *csv = NULL, *plot = NULL;
	bool ok = false;

	if ((a->csv_path && !(csv = atomic_file_open(a->csv_path, error))) ||
	    (a->png && !(plot = atomic_file_open(a->png, error))) || !plan_jobs(a, n, &o.jobs, error))
		goto out;
	/* each run was held to the limit above, whole */
	o.run.max_memory = 0;
	rows = g_new0(struct advise_row, n ? n : 1);
	int64_t t0 = g_get_monotonic_time();
	if (!advise_run(&o, cv, n, rows, error))
		goto out;
	long pick = advise_judge(cv, rows, n);
	if (csv)
		advise_csv(atomic_file_stream(csv), cv, rows, n);
	if (plot) {
		gchar *base = g_path_get_basename(o.run.trace);
		gchar *title = g_strdup_printf("ksmsim advise %s: modelled ksmd CPU against pages"
					       " saved, one point per configuration", base);
		bool drawn = advise_plot(atomic_file_stream(plot), title, cv, rows, n, error);

		g_free(title);
		g_free(base);
		if (!drawn)
			goto out;
	}
	/* the plot only after the CSV */
	atomic_file **const all[] = { &csv, &plot };
	if (!atomic_file_commit_all(all, G_N_ELEMENTS(all), error))
		goto out;
	advise_table(stdout, cv, rows, n, pick);
	if (a->digests)
		printf("Warning: TRACE holds digest content (%" PRIu64 " records, trace version 4): every"
		       " checksum is a function of the digest, so false_pos counts only the model's"
		       " stand-in bytes; CPU and pages saved stand.\n", a->digests);
	if (fflush(stdout) != 0) {
		g_set_error(error, ADVISE_ERROR, ADVISE_ERROR_INPUT, "standard output: write failed");
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

int cmd_advise(int argc, char **argv)
{
	struct args a = { 0 };
	GArray *cfg = NULL;
	GError *error = NULL;
	int status;

	run_options_init(&a.ro, PROG, RUN_OPTIONS_ADVISE);
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
	cfg = configure(&a, &error);
	if (!cfg)
		goto out;
	size_t n = cfg->len;
	const struct advise_config *cv = (const struct advise_config *)cfg->data;

	/* a cost table that cannot be read is refused before any run, not by every worker */
	struct advise_opts o = { .run = a.ro.cfg };
	for (size_t i = 0; i < n && !error; i++) {
		struct run_config one;

		advise_config_run(&o, &cv[i], &one, &error);
	}
	if (error || (a.png && !advise_plot_available(&error))) {
		report(error);
		goto out;
	}
	signals_install(SIGNALS_EXIT);
	if (advise(&a, cv, n, &error))
		status = 0;
	else
		status = report(error);
out:
	if (cfg)
		g_array_free(cfg, TRUE);
	run_options_free(&a.ro);
	return status;
}
