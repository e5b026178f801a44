// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim diff A.csv B.csv: compare two marks files row by row and counter
 * by counter (marks/marks.h, marks_diff), e.g. a model run against a live
 * recording, and print the cells that differ.
 */
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "cli/cli.h"
#include "util/escape.h"
#include "util/parse.h"
#include "marks/marks.h"
#include "sim/profile.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim diff A.csv B.csv [--only COLS] [--ignore COLS] [--cpu-tolerance PCT]\n"
		"                   [--cpu-floor-ms MS]\n"
		"       ksmsim diff --profile A B [--share-tolerance PP]\n\n"
		"Compares two marks files row by row (same position, same label) on the\n"
		"counters t_us .. %s, or only the comma-separated COLS given to --only\n"
		"(extra columns too), less those given to --ignore. Per-mm files (written\n"
		"by --mm-stats-csv) pair rows on label and mm and compare t_us and the\n"
		"ksm_stat columns. Cells either file lists\n"
		"in a '# ... cells that differ between runs: label.column=..., ...' comment\n"
		"are skipped. Prints a table of differing cells (label, column, A, B, B-A).\n\n"
		"%s, ksmd's CPU time (modelled by run, measured by live), is a time and\n"
		"not a count: where both files have it (or --only names it) it is compared\n"
		"apart, by the ratio B/A, which must lie within 1 +- PCT/100 (--cpu-tolerance,\n"
		"default %.0f); rows where both are below --cpu-floor-ms (default %.0f) agree.\n"
		"Its table and verdict are printed after the exact counters'.\n"
		"Exit status: 0 all compared cells agree (CPU within tolerance), 1 some exact\n"
		"counter differs or the CPU is outside the tolerance (the last line says\n"
		"which), 2 bad input.\n\n"
		"--profile compares two profiles of ksmd's CPU by term ('ksmsim live\n"
		"--profile', 'ksmsim run --profile-csv') at their last mark: each term's\n"
		"share, the live terms folded into those the model prices as one (visit:\n"
		"page_table_walk + mmap_lock + scan; tree_search: page_compare +\n"
		"stable_folio + tree_page). Exit 1 when a share differs by more than PP\n"
		"percentage points (--share-tolerance, default %.0f).\n",
		marks_columns[MARKS_COW_KSM].name, marks_columns[MARKS_KSMD_CPU_MS].name,
		MARKS_CPU_TOLERANCE_PCT, MARKS_CPU_FLOOR_MS, PROFILE_SHARE_TOLERANCE_PP);
}

/* --profile A B [--share-tolerance PP]: the shares of two profiles. */
static int diff_profile(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL };
	double tol = PROFILE_SHARE_TOLERANCE_PP;
	int npaths = 0;
	GError *err = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--profile"))
			continue;
		if (!strcmp(argv[i], "--share-tolerance")) {
			if (i + 1 >= argc || !parse_double(argv[i + 1], &tol) || tol < 0 || tol > 100) {
				fprintf(stderr, "ksmsim diff: --share-tolerance needs percentage "
					"points from 0 to 100\n");
				return EXIT_USAGE;
			}
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "ksmsim diff: unknown option '%s' with --profile\n", argv[i]);
			return EXIT_USAGE;
		} else if (npaths < 2) {
			paths[npaths++] = argv[i];
		} else {
			fprintf(stderr, "ksmsim diff: --profile takes two files\n");
			return EXIT_USAGE;
		}
	}
	if (npaths != 2) {
		fprintf(stderr, "ksmsim diff: --profile takes two files (see 'ksmsim diff --help')\n");
		return EXIT_USAGE;
	}
	int rc = profile_diff(paths[0], paths[1], tol, stdout, &err);

	if (rc < 0) {
		error_line("ksmsim diff", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	return rc;
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

/* "a, b,c" as {"a", "b", "c"}, replacing an earlier list. */
static void set_list(char ***list, const char *arg)
{
	g_strfreev(*list);
	*list = g_strsplit(arg, ",", -1);
	for (char **p = *list; *p; p++)
		g_strstrip(*p);
}

int cmd_diff(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL };
	char **only = NULL, **ignore = NULL;
	struct marks_diff_opts o = {
		.cpu_tolerance = MARKS_CPU_TOLERANCE_PCT / 100, .cpu_floor_ms = MARKS_CPU_FLOOR_MS,
	};
	struct marks_diff d;
	GError *err = NULL;
	int npaths = 0, rc = EXIT_USAGE;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--profile"))
			return diff_profile(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--only") || !strcmp(argv[i], "--ignore")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "ksmsim diff: %s needs a list of columns\n", argv[i]);
				goto out;
			}
			set_list(argv[i][2] == 'o' ? &only : &ignore, argv[i + 1]);
			i++;
		} else if (!strcmp(argv[i], "--cpu-tolerance") || !strcmp(argv[i], "--cpu-floor-ms")) {
			bool tol = argv[i][6] == 't';
			double v;

			if (i + 1 >= argc || !parse_double(argv[i + 1], &v) || v < 0 ||
			    (tol && v > 1000) || (!tol && v > 1e9)) {
				char *val = i + 1 < argc ? escape_line(argv[i + 1]) : g_strdup("nothing");

				fprintf(stderr, "ksmsim diff: %s: '%s' is not a number from 0 to %s\n",
					argv[i], val, tol ? "1000 (percent)" : "1e9 (ms)");
				g_free(val);
				goto out;
			}
			if (tol)
				o.cpu_tolerance = v / 100;
			else
				o.cpu_floor_ms = v;
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "ksmsim diff: unknown option '%s'\n", argv[i]);
			goto out;
		} else if (npaths < 2) {
			paths[npaths++] = argv[i];
		} else {
			fprintf(stderr, "ksmsim diff: more than two files\n");
			goto out;
		}
	}
	if (npaths != 2) {
		usage(stderr);
		goto out;
	}
	o.only = only;
	o.ignore = ignore;
	if (!marks_diff(paths[0], paths[1], &o, &d, &err)) {
		error_line("ksmsim diff", err->message);
		g_error_free(err);
		goto out;
	}
	print_table(&d);
	print_cpu(&d, o.cpu_tolerance, o.cpu_floor_ms);
	rc = d.cells->len || d.cpu_outside ? 1 : 0;
	marks_diff_clear(&d);
out:
	g_strfreev(only);
	g_strfreev(ignore);
	return rc;
}
