// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim diff A.csv B.csv: compare two marks files row by row and counter
 * by counter (marks/marks.h, marks_diff), e.g. a model run against a live
 * recording, and print the cells that differ.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "cli/cli.h"
#include "util/json.h"
#include "util/parse.h"
#include "marks/marks.h"
#include "sim/profile.h"

static void usage_text(FILE *out)
{
	fprintf(out,
		"usage: ksmsim diff A.csv B.csv [--only COLS] [--ignore COLS] [--cpu-tolerance PCT]\n"
		"                   [--cpu-floor-ms MS] [--json]\n"
		"       ksmsim diff --profile A B [--share-tolerance PP]\n\n"
		"Compares two marks files row by row (same position, same label) on the\n"
		"counters t_us .. %s, or only the comma-separated COLS given to --only\n"
		"(extra columns too), less those given to --ignore; the counters Linux 6.1\n"
		"has no file for (pages_scanned, pages_skipped, ksm_zero_pages,\n"
		"general_profit) are compared where both files have them. Per-mm files (written\n"
		"by --mm-stats-csv) pair rows on label and mm and compare t_us and the\n"
		"ksm_stat columns. Cells either file lists\n"
		"in a '# ... cells that differ between runs: label.column=..., ...' comment\n"
		"are skipped. Prints a table of differing cells (label, column, A, B, B-A).\n\n"
		"%s, ksmd's CPU time (modelled by run, measured by live), is a time and\n"
		"not a count: where both files have it (or --only names it) it is compared\n"
		"apart, by the ratio B/A, which must lie within 1 +- PCT/100 (--cpu-tolerance,\n"
		"default %.0f); rows where both are below --cpu-floor-ms (default %.0f) agree.\n"
		"Its table and verdict are printed after the exact counters'.\n"
		"--json prints one JSON object instead: a, b (the files), differences (the\n"
		"first table's rows: label, column, a, b, delta; a missing side null),\n"
		"rows_a, rows_b, compared, skipped, cpu_column, cpu (the second table's:\n"
		"label, a_ms, b_ms, ratio, verdict), cpu_outside, and agree (true/false).\n"
		"Exit status: 0 all compared cells agree (CPU within tolerance), 1 some exact\n"
		"counter differs or the CPU is outside the tolerance (the last line says\n"
		"which), 2 bad input.\n"
		"--profile compares two profiles of ksmd's CPU by term ('ksmsim live\n"
		"--profile', 'ksmsim run --profile-csv') at their last mark: each term's\n"
		"share, the live terms folded into those the model prices as one (visit:\n"
		"page_table_walk + mmap_lock + scan; tree_search: page_compare +\n"
		"stable_folio + tree_page). Exit 1 when a share differs by more than PP\n"
		"percentage points (--share-tolerance, default %.0f).\n\nOptions:\n",
		marks_columns[MARKS_COW_KSM].name, marks_columns[MARKS_KSMD_CPU_MS].name,
		MARKS_CPU_TOLERANCE_PCT, MARKS_CPU_FLOOR_MS, PROFILE_SHARE_TOLERANCE_PP);
}

static void print_table(const struct marks_diff *d)
{
	for (guint i = 0; i < d->cells->len; i++) {
		const struct marks_cell_diff *c = &g_array_index(d->cells, struct marks_cell_diff, i);

		if (i == 0)
			printf("%-24s %-20s %14s %14s %12s\n", "label", "column", "A", "B", "B-A");
		if (c->has_delta)
			printf("%-24s %-20s %14s %14s %+12lld\n", c->row, c->column, c->a, c->b,
			       c->delta);
		else
			printf("%-24s %-20s %14s %14s %12s\n", c->row, c->column,
			       c->a ? c->a : "-", c->b ? c->b : "-", "");
	}
	if (d->rows_a != d->rows_b)
		printf("row count: A has %u marks, B has %u\n", d->rows_a, d->rows_b);
	if (d->cells->len)
		printf("%u difference%s (%u cells compared, %u skipped as varying between runs)\n",
		       d->cells->len, d->cells->len == 1 ? "" : "s", d->compared, d->skipped);
	else
		printf("no differences (%u cells compared, %u skipped as varying between runs)\n",
		       d->compared, d->skipped);
}

/* The measured column, by ratio; then the verdict on both parts. */
static void print_cpu(const struct marks_diff *d, double tol, double floor_ms)
{
	if (!d->cpu_column)
		return;
	printf("\n%s by ratio (B/A within 1 +- %.3g, rows where both are below %.3g ms "
	       "agree):\n", d->cpu_column, tol, floor_ms);
	printf("%-24s %14s %14s %8s  %s\n", "label", "A ms", "B ms", "B/A", "verdict");
	for (guint i = 0; i < d->cpu->len; i++) {
		const struct marks_cpu_cell *c = &g_array_index(d->cpu, struct marks_cpu_cell, i);
		char ratio[32];

		if (c->a_ms > 0)
			snprintf(ratio, sizeof(ratio), "%.3f", c->ratio);
		else
			snprintf(ratio, sizeof(ratio), "-");
		printf("%-24s %14.3f %14.3f %8s  %s\n", c->row, c->a_ms, c->b_ms, ratio,
		       c->below_floor ? "ok (below floor)" : c->within ? "ok" : "OUTSIDE");
	}
	printf("%s: %u of %u rows outside the tolerance; exact counters: %s\n", d->cpu_column,
	       d->cpu_outside, d->cpu->len, d->cells->len ? "differ" : "agree");
}

static void json_or_null(GString *g, const char *s)
{
	if (s)
		json_string(g, s);
	else
		g_string_append(g, "null");
}

/* --json: the two tables and the verdict as one object, under the tables' column names. */
static void print_json(const struct marks_diff *d, const char *a, const char *b)
{
	GString *g = g_string_new("{\"command\": \"diff\", \"a\": ");

	json_string(g, a);
	g_string_append(g, ", \"b\": ");
	json_string(g, b);
	g_string_append(g, ",\n\"differences\": [");
	for (guint i = 0; i < d->cells->len; i++) {
		const struct marks_cell_diff *c = &g_array_index(d->cells, struct marks_cell_diff, i);

		g_string_append(g, i ? ",\n {\"label\": " : "\n {\"label\": ");
		json_string(g, c->row);
		g_string_append(g, ", \"column\": ");
		json_string(g, c->column);
		g_string_append(g, ", \"a\": ");
		json_or_null(g, c->a);
		g_string_append(g, ", \"b\": ");
		json_or_null(g, c->b);
		if (c->has_delta)
			g_string_append_printf(g, ", \"delta\": %lld}", c->delta);
		else
			g_string_append(g, ", \"delta\": null}");
	}
	g_string_append_printf(g, "],\n\"rows_a\": %u, \"rows_b\": %u, \"compared\": %u,"
			       " \"skipped\": %u, \"cpu_column\": ", d->rows_a, d->rows_b, d->compared,
			       d->skipped);
	json_or_null(g, d->cpu_column);
	g_string_append(g, ",\n\"cpu\": [");
	for (guint i = 0; d->cpu_column && i < d->cpu->len; i++) {
		const struct marks_cpu_cell *c = &g_array_index(d->cpu, struct marks_cpu_cell, i);

		g_string_append(g, i ? ",\n {\"label\": " : "\n {\"label\": ");
		json_string(g, c->row);
		g_string_append_printf(g, ", \"a_ms\": %.3f, \"b_ms\": %.3f, \"ratio\": ", c->a_ms, c->b_ms);
		if (c->a_ms > 0)
			g_string_append_printf(g, "%.3f", c->ratio);
		else
			g_string_append(g, "null");
		g_string_append_printf(g, ", \"verdict\": \"%s\"}", c->below_floor ? "ok (below floor)" :
				       c->within ? "ok" : "OUTSIDE");
	}
	g_string_append_printf(g, "],\n\"cpu_outside\": %u, \"agree\": %s}\n", d->cpu_outside,
			       d->cells->len || d->cpu_outside ? "false" : "true");
	fputs(g->str, stdout);
	g_string_free(g, TRUE);
}

/* "a, b,c" as {"a", "b", "c"} (g_strfreev; NULL for no list). */
static char **split_list(const char *arg)
{
	if (!arg)
		return NULL;
	char **list = g_strsplit(arg, ",", -1);

	for (char **p = list; *p; p++)
		g_strstrip(*p);
	return list;
}

#define PROG "ksmsim diff"

/* The command line as parsed. */
struct args {
	const char *only, *ignore;
	double tolerance_pct, floor_ms, share_pp;
	bool help, json, profile;
	struct cli_once once;
};

enum { OPT_ONLY = 256, OPT_IGNORE, OPT_TOLERANCE, OPT_FLOOR, OPT_JSON, OPT_PROFILE, OPT_SHARE };
#define AT(f) offsetof(struct args, f)
static const struct cli_opt rows[] = {
	{ "only", OPT_ONLY, CLI_STR, "COLS", AT(only),
	  .help = "compare only these comma-separated columns" },
	{ "ignore", OPT_IGNORE, CLI_STR, "COLS", AT(ignore), .help = "skip these columns" },
	{ "cpu-tolerance", OPT_TOLERANCE, CLI_DOUBLE, "PCT", AT(tolerance_pct), .dmax = 1000,
	  .wants = "a number from 0 to 1000 (percent)", .show_default = true,
	  .help = "the CPU column's B/A within 1 +- PCT/100" },
	{ "cpu-floor-ms", OPT_FLOOR, CLI_DOUBLE, "MS", AT(floor_ms), .dmax = 1e9,
	  .wants = "a number from 0 to 1e9 (ms)", .show_default = true,
	  .help = "rows where both CPU times are below MS agree" },
	{ "profile", OPT_PROFILE, CLI_FLAG, NULL, AT(profile),
	  .help = "A and B are profiles of ksmd's CPU by term: compare shares" },
	{ "share-tolerance", OPT_SHARE, CLI_DOUBLE, "PP", AT(share_pp), .dmax = 100,
	  .wants = "percentage points from 0 to 100", .show_default = true,
	  .help = "--profile: a term's shares within PP points agree" },
	{ "json", OPT_JSON, CLI_FLAG, NULL, AT(json),
	  .help = "print one JSON object in place of the tables" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help), .help = "this help" },
};

static const struct args defaults = {
	.tolerance_pct = MARKS_CPU_TOLERANCE_PCT, .floor_ms = MARKS_CPU_FLOOR_MS,
	.share_pp = PROFILE_SHARE_TOLERANCE_PP,
};

static void usage(FILE *out)
{
	usage_text(out);
	cli_opts_help(out, rows, G_N_ELEMENTS(rows), &defaults, 24);
}

/* The options and the two files: -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct args *a, const char *paths[2])
{
	int status = cli_opts_parse(PROG, rows, G_N_ELEMENTS(rows), argc, argv, &a->once, a);

	if (status >= 0)
		return status;
	if (a->help) {
		usage(stdout);
		return 0;
	}
	if (argc - optind > 2)
		return cli_error(PROG, "more than two files ('%s' too; see --help)", argv[optind + 2]);
	if (argc - optind < 2)
		return cli_error(PROG, "two files, A.csv and B.csv, are required (see --help)");
	paths[0] = argv[optind];
	paths[1] = argv[optind + 1];
	return -1;
}

int cmd_diff(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL };
	struct args a = defaults;
	struct marks_diff d;
	GError *err = NULL;
	int rc = parse(argc, argv, &a, paths);

	if (rc >= 0)
		return rc;
	if (a.profile) {
		if (a.only || a.ignore || a.json)
			return cli_error(PROG, "--profile compares shares only: no --only, --ignore or --json");
		rc = profile_diff(paths[0], paths[1], a.share_pp, stdout, &err);
		return rc < 0 ? cli_gerror(PROG, err) : rc;
	}
	char **only = split_list(a.only), **ignore = split_list(a.ignore);
	struct marks_diff_opts o = {
		.cpu_tolerance = a.tolerance_pct / 100, .cpu_floor_ms = a.floor_ms,
		.only = only, .ignore = ignore,
	};

	rc = EXIT_USAGE;
	if (!marks_diff(paths[0], paths[1], &o, &d, &err)) {
		cli_gerror(PROG, err);
		goto out;
	}
	if (a.json) {
		print_json(&d, paths[0], paths[1]);
	} else {
		print_table(&d);
		print_cpu(&d, o.cpu_tolerance, o.cpu_floor_ms);
	}
	rc = d.cells->len || d.cpu_outside ? 1 : 0;
	marks_diff_clear(&d);
out:
	g_strfreev(only);
	g_strfreev(ignore);
	return rc;
}
