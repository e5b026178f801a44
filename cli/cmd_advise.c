// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim advise: which checksum, and which policy, for this trace? The
 * options, files and exit status around analysis/advise.h.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include "analysis/advise.h"
#include "cli/cli.h"
#include "hashes/hash.h"
#include "util/atomic_file.h"
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
"default parameters ('ksmsim policies'). It prints a table, one row per\n"
"configuration in that order, marks the Pareto frontier and ends with one\n"
"sentence: the checksum to pick and the rows on the frontier.\n"
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
"                      the frontier joined and labelled, the pick circled;\n"
"                      without gnuplot: an error before any run\n"
"  --interval-ms N     the samples' period (default 1000)\n"
"  --quiet             no line per finished run on standard error\n"
"Run options, the same for every configuration:\n"
"  --costs-csv FILE    per-page costs from 'ksmsim bench costs --csv'\n"
"                      (default: the figures built in, so runs reproduce)\n"
"  --check             verify the model's invariants after every batch (slow)\n"
"  --batch-time        batches take their modelled CPU time\n"
"  --no-ideal          no oracle walk at the end (missed_merges left empty)\n"
"  --max-memory SIZE   the memory all runs at once may take (K, M, G, T;\n"
"                      default: the machine's MemAvailable)\n"
"  knobs as run takes them, fixed for the whole run:\n"
CLI_KNOB_OPTIONS_HELP
"\n"
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

static bool parse_hashes(const char *list, GPtrArray *out)
{
	gchar **names = g_strsplit(list, ",", -1);
	bool ok = true;

	for (gchar **n = names; *n && ok; n++) {
		const struct page_hash *h = hash_lookup(*n);
		const char *near = h ? NULL : hash_nearest(*n);

		if (h && !h->fn) {
			fprintf(stderr, PROG ": --hashes: 'none' is no checksum (the kernel without a"
				" gate is the no-gate policy)\n");
			ok = false;
		} else if (!h) {
			if (near)
				fprintf(stderr, PROG ": --hashes: unknown checksum '%s'; did you mean"
					" '%s'? ('ksmsim hashes' lists them)\n", *n, near);
			else
				fprintf(stderr, PROG ": --hashes: unknown checksum '%s' ('ksmsim hashes'"
					" lists them)\n", *n);
			ok = false;
		} else {
			for (guint j = 0; j < out->len && ok; j++)
				if (out->pdata[j] == h) {
					fprintf(stderr, PROG ": --hashes: %s is listed twice\n", h->name);
					ok = false;
				}
			if (ok)
				g_ptr_array_add(out, (gpointer)h);
		}
	}
	g_strfreev(names);
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

enum {
	OPT_POLICIES = 256, OPT_HASHES, OPT_JOBS, OPT_CSV, OPT_PLOT, OPT_INTERVAL, OPT_QUIET,
	OPT_COSTS, OPT_CHECK, OPT_BATCH_TIME, OPT_NO_IDEAL, OPT_MAX_MEMORY, OPT_HELP,
};

static int report(GError *error)
{
	int status = error && error->domain == ADVISE_ERROR ? error->code : EXIT_USAGE;

	fprintf(stderr, PROG ": %s\n", error ? error->message : "failed");
	g_clear_error(&error);
	return status;
}

int cmd_advise(int argc, char **argv)
{
	const char *policies_list = NULL, *hashes_list = NULL, *csv_path = NULL, *png = NULL;
	uint64_t jobs = 0, max_memory = 0;
	struct advise_opts o = { .ideal = true, .interval_ms = 1000, .verbose = true };
	static const struct option fixed[] = {
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "hashes", required_argument, NULL, OPT_HASHES },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "interval-ms", required_argument, NULL, OPT_INTERVAL },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "costs-csv", required_argument, NULL, OPT_COSTS },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "batch-time", no_argument, NULL, OPT_BATCH_TIME },
		{ "no-ideal", no_argument, NULL, OPT_NO_IDEAL },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	GArray *longopts = g_array_new(TRUE, TRUE, sizeof(struct option));
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	GArray *policies = g_array_new(FALSE, TRUE, sizeof(struct ksm_policy));
	GPtrArray *hashes = g_ptr_array_new();
	GArray *cfg = NULL;
	struct advise_row *rows = NULL;
	int status = EXIT_USAGE, c;

	g_array_append_vals(longopts, fixed, G_N_ELEMENTS(fixed));
	knob_options_add(longopts, names);
	const struct option *lo = (const struct option *)longopts->data;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hj:o:", lo, NULL)) != -1) {
		bool ok = true;

		switch (c) {
		case OPT_POLICIES: policies_list = optarg; break;
		case OPT_HASHES: hashes_list = optarg; break;
		case 'j':
		case OPT_JOBS: ok = parse_u64(optarg, ADVISE_MAX_JOBS, &jobs) && jobs; break;
		case 'o':
		case OPT_CSV: csv_path = optarg; break;
		case OPT_PLOT: png = optarg; break;
		case OPT_INTERVAL:
			ok = parse_u64(optarg, UINT64_MAX / 1000, &o.interval_ms) && o.interval_ms;
			break;
		case OPT_QUIET: o.verbose = false; break;
		case OPT_COSTS: o.costs_csv = optarg; break;
		case OPT_CHECK: o.model.check = true; break;
		case OPT_BATCH_TIME: o.model.batch_time = true; break;
		case OPT_NO_IDEAL: o.ideal = false; break;
		case OPT_MAX_MEMORY: ok = parse_size(optarg, &max_memory) && max_memory; break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			status = 0;
			goto out;
		default:
			int took = knob_option_take(PROG, c, optarg, &o.model);
			if (took < 0)
				goto out;
			if (took)
				break;
			status = option_error(PROG, argv, lo, c);
			goto out;
		}
		if (!ok) {
			fprintf(stderr, PROG ": %s: bad value '%s' (see --help)\n", option_name(lo, c),
				optarg);
			goto out;
		}
	}
	if (optind == argc) {
		fprintf(stderr, PROG ": a TRACE is required (see --help)\n");
		goto out;
	}
	if (argc - optind > 1) {
		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", argv[optind + 1]);
		goto out;
	}
	o.trace = argv[optind];
	if (!strcmp(o.trace, "-")) {
		fprintf(stderr, PROG ": TRACE is read once per run: a file, not '-'\n");
		goto out;
	}
	GError *error = NULL;
	const struct file_use uses[] = {
		{ "TRACE", o.trace, false }, { "--costs-csv", o.costs_csv, false },
		{ "--csv", csv_path, true }, { "--plot", png, true },
	};
	if (!file_uses_distinct(uses, G_N_ELEMENTS(uses), &error)) {
		status = report(error);
		goto out;
	}
	if (!policies_list) {
		size_t nrows;
		const struct ksm_policy_row *all = ksm_policy_all(&nrows);
		GString *l = g_string_new(NULL);

		for (size_t i = 0; i < nrows; i++)
			g_string_append_printf(l, "%s%s", i ? "," : "", all[i].name);
		bool ok = parse_policies(l->str, policies);
		g_string_free(l, TRUE);
		if (!ok)
			goto out;
	} else if (!parse_policies(policies_list, policies)) {
		goto out;
	}
	if (hashes_list) {
		if (!parse_hashes(hashes_list, hashes))
			goto out;
	} else {
		size_t nh;
		const struct page_hash *all = hash_all(&nh);

		for (size_t i = 0; i < nh; i++)
			if (all[i].fn)
				g_ptr_array_add(hashes, (gpointer)&all[i]);
	}
	cfg = configurations(policies, hashes);
	size_t n = cfg->len;
	const struct advise_config *cv = (const struct advise_config *)cfg->data;

	/* a cost table that cannot be read is refused before any run, not by every worker */
	if (o.costs_csv) {
		struct cost_table t;

		for (size_t i = 0; i < n && !error; i++) {
			const struct page_hash *h = cv[i].hash ? cv[i].hash :
				advise_hash_of(&cv[i].policy);

			cost_table_default(&t, h->name);
			cost_table_load(&t, o.costs_csv, h->name, &error);
		}
		if (error) {
			report(error);
			goto out;
		}
	}
	if (png && !advise_plot_available(&error)) {
		report(error);
		goto out;
	}

	signals_install(SIGNALS_EXIT);
	atomic_file *csv = NULL, *plot = NULL;
	if ((csv_path && !(csv = atomic_file_open(csv_path, &error))) ||
	    (png && !(plot = atomic_file_open(png, &error)))) {
		atomic_file_abort(csv);
		report(error);
		goto out;
	}
	uint64_t need;
	if (!advise_check_trace(o.trace, o.ideal, &need, &error))
		goto fail;
	/* as many runs at once as the memory holds */
	uint64_t limit = max_memory ? max_memory : mem_available();
	if (!jobs) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = online < 1 ? 1 : MIN((uint64_t)online, ADVISE_MAX_JOBS);
	}
	jobs = MIN(jobs, (uint64_t)(n ? n : 1));
	if (limit && need > limit) {
		char need_s[32], limit_s[32];

		format_size(need, need_s, sizeof(need_s));
		format_size(limit, limit_s, sizeof(limit_s));
		g_set_error(&error, ADVISE_ERROR, ADVISE_ERROR_INPUT,
			    "%s: one run of the model would need about %s, more than %s %s", o.trace,
			    need_s, limit_s, max_memory ? "(--max-memory)" :
			    "(the machine's MemAvailable; --max-memory sets the limit)");
		goto fail;
	}
	if (limit && need && jobs > limit / need) {
		if (o.verbose)
			fprintf(stderr, PROG ": %" PRIu64 " runs at once instead of %" PRIu64
				": each needs about %" PRIu64 " MiB\n", limit / need, jobs,
				need >> 20);
		jobs = limit / need;
	}
	o.jobs = (unsigned)jobs;
	rows = g_new0(struct advise_row, n ? n : 1);
	int64_t t0 = g_get_monotonic_time();
	if (!advise_run(&o, cv, n, rows, &error))
		goto fail;
	long pick = advise_judge(cv, rows, n);
	if (csv)
		advise_csv(atomic_file_stream(csv), cv, rows, n);
	if (plot) {
		gchar *base = g_path_get_basename(o.trace);
		gchar *title = g_strdup_printf("ksmsim advise %s: modelled ksmd CPU against pages"
					       " saved, one point per configuration", base);
		bool ok = advise_plot(atomic_file_stream(plot), title, cv, rows, n, &error);

		g_free(title);
		g_free(base);
		if (!ok)
			goto fail;
	}
	/* the signals wait while the files are renamed into place; the plot only after the CSV */
	sigset_t held;
	bool committed = true;
	signals_hold(true, &held);
	if (csv)
		committed = atomic_file_commit(csv, &error);
	csv = NULL;
	if (plot && committed)
		committed = atomic_file_commit(plot, &error);
	else if (plot)
		atomic_file_abort(plot);
	plot = NULL;
	signals_hold(false, &held);
	if (!committed)
		goto fail;
	advise_table(stdout, cv, rows, n, pick);
	if (fflush(stdout) != 0) {
		fprintf(stderr, PROG ": standard output: write failed\n");
		goto out;
	}
	if (o.verbose)
		fprintf(stderr, PROG ": %zu runs, %u at once: %.1f s\n", n, o.jobs,
			(g_get_monotonic_time() - t0) / 1e6);
	status = 0;
	goto out;
fail:
	atomic_file_abort(csv);
	atomic_file_abort(plot);
	status = report(error);
out:
	if (cfg)
		g_array_free(cfg, TRUE);
	g_free(rows);
	g_array_free(policies, TRUE);
	g_ptr_array_free(hashes, TRUE);
	g_array_free(longopts, TRUE);
	g_ptr_array_free(names, TRUE);
	return status;
}
