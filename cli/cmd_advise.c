// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim advise: which checksum, and which policy, for this trace? The
 * options, files and exit status around analysis/advise.h.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "analysis/advise.h"
#include "cli/cli.h"
#include "hashes/hash.h"
#include "util/atomic_file.h"
#include "util/json.h"
#include "util/signals.h"

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
"  --json              the table on standard output as one JSON object: the\n"
"                      pick's name and 'rows', the CSV's rows with its fields\n");
	pool_options_help_jobs(f);
	fprintf(f,
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
"with any --jobs; timings go to standard error only.\n");
	pool_options_help_exit(f);
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
		cli_error(PROG, "--policies: an empty list (name one policy or more)");
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
			cli_error(PROG, "--policies: an empty name in '%s'", list);
			ok = false;
		} else if (!ksm_policy_parse(spec, &p, &error)) {
			const char *why = error->message;

			/* the parser speaks of --policy; here the option is --policies */
			if (g_str_has_prefix(why, "--policy "))
				why += strlen("--policy ");
			cli_error(PROG, "--policies: %s", why);
			g_error_free(error);
			ok = false;
		} else {
			for (guint j = 0; j < out->len && ok; j++) {
				const struct ksm_policy *q = &g_array_index(out, struct ksm_policy, j);

				if (!strcmp(ksm_policy_name(q), ksm_policy_name(&p))) {
					cli_error(PROG, "--policies: %s is listed twice",
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

enum { OPT_POLICIES = 256, OPT_HASHES, OPT_JSON };

/* The command line, as parsed. */
struct args {
	struct pool_options po;		/* the options advise shares with tune; in po.ro.cfg the run */
	const char *policies_list, *hashes_list;
	bool json;			/* --json */
};

/* advise's own options (cli.h, pool_take_fn): 1 taken, 0 not advise's. */
static int take(void *ctx, int c, const char *arg, const struct option *lo)
{
	struct args *a = ctx;

	if (c == OPT_POLICIES)
		a->policies_list = arg;
	else if (c == OPT_HASHES)
		a->hashes_list = arg;
	else if (c == OPT_JSON)
		a->json = true;
	return c == OPT_POLICIES || c == OPT_HASHES || c == OPT_JSON;
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

/* The configurations, their rows and the pick: what the pool's callbacks see. */
struct advise_pool {
	const struct advise_config *cv;
	size_t n;
	struct advise_row *rows;
	long pick;
	bool json;
	bool k61;	/* --kernel 6.1: the report says so (6.18's stays as it was) */
};

static bool run_all(void *ctx, const struct run_config *run, unsigned jobs, bool verbose,
		    GError **error)
{
	struct advise_pool *ap = ctx;
	struct advise_opts o = { .run = *run, .jobs = jobs, .verbose = verbose };

	if (!advise_run(&o, ap->cv, ap->n, ap->rows, error))
		return false;
	ap->k61 = run->model.kernel == KSM_KERNEL_6_1;
	ap->pick = advise_judge(ap->cv, ap->rows, ap->n);
	return true;
}

static void put_csv(void *ctx, FILE *f)
{
	struct advise_pool *ap = ctx;

	advise_csv(f, ap->cv, ap->rows, ap->n);
}

static bool put_plot(void *ctx, FILE *png, const char *title, GError **error)
{
	struct advise_pool *ap = ctx;

	return advise_plot(png, title, ap->cv, ap->rows, ap->n, error);
}

/* --json: the CSV's rows under its names, so the two carry the same fields. */
static void put_json(struct advise_pool *ap, FILE *f, uint64_t digests)
{
	char *csv = json_capture(put_csv, ap);
	GString *g = g_string_new("{\"command\": \"advise\", \"pick\": ");

	/* the pick: its index in rows (the row whose pick field is 1) */
	if (ap->pick >= 0)
		g_string_append_printf(g, "%ld", ap->pick);
	else
		g_string_append(g, "null");
	g_string_append_printf(g, ", \"digest_records\": %" PRIu64 ",\n\"rows\": ", digests);
	json_csv_rows(g, csv);
	g_string_append(g, "}\n");
	fputs(g->str, f);
	g_string_free(g, TRUE);
	g_free(csv);
}

static void put_table(void *ctx, FILE *f, uint64_t digests)
{
	struct advise_pool *ap = ctx;

	if (ap->json) {
		put_json(ap, f, digests);
		return;
	}
	advise_table(f, ap->cv, ap->rows, ap->n, ap->pick);
	if (ap->k61)
		fprintf(f, "Modelled kernel: Linux 6.1 (--kernel 6.1): no smart scan, the stable tree"
			" searched before the checksum (sim/MODEL.md, \"Linux 6.1\").\n");
	if (digests)
		fprintf(f, "Warning: TRACE holds digest content (%" PRIu64 " records, trace version 4):"
			" every checksum is a function of the digest, so false_pos counts only the"
			" model's stand-in bytes; CPU and pages saved stand.\n", digests);
}

int cmd_advise(int argc, char **argv)
{
	static const struct option own[] = {
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "hashes", required_argument, NULL, OPT_HASHES },
		{ "json", no_argument, NULL, OPT_JSON },
	};
	struct args a = { 0 };
	GArray *cfg = NULL;
	GError *error = NULL;
	int status;

	pool_options_init(&a.po, PROG, RUN_OPTIONS_ADVISE);
	status = pool_options_parse(&a.po, argc, argv, own, G_N_ELEMENTS(own), take, &a, usage);
	if (status >= 0)
		goto out;
	status = EXIT_USAGE;
	if (!pool_options_files(&a.po, &error)) {
		status = pool_report(PROG, ADVISE_ERROR, error);
		goto out;
	}
	cfg = configure(&a, &error);
	if (!cfg)
		goto out;
	size_t n = cfg->len;
	const struct advise_config *cv = (const struct advise_config *)cfg->data;

	/* a cost table that cannot be read is refused before any run, not by every worker */
	struct advise_opts o = { .run = a.po.ro.cfg };
	for (size_t i = 0; i < n && !error; i++) {
		struct run_config one;

		advise_config_run(&o, &cv[i], &one, &error);
	}
	if (error || (a.po.png && !advise_plot_available(&error))) {
		pool_report(PROG, ADVISE_ERROR, error);
		goto out;
	}
	signals_install(SIGNALS_EXIT);
	const struct pool_command cmd = {
		.domain = ADVISE_ERROR,
		.plot_what = "modelled ksmd CPU against pages saved, one point per configuration",
		.run = run_all, .csv = put_csv, .plot = put_plot, .report = put_table,
	};
	struct advise_pool ap = { cv, n, g_new0(struct advise_row, n ? n : 1), -1, a.json, false };
	if (pool_run(&a.po, n, &cmd, &ap, &error))
		status = 0;
	else
		status = pool_report(PROG, ADVISE_ERROR, error);
	g_free(ap.rows);
out:
	if (cfg)
		g_array_free(cfg, TRUE);
	pool_options_free(&a.po);
	return status;
}
