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
#include "marks/marks.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim diff A.csv B.csv [--only COLS] [--ignore COLS]\n\n"
		"Compares two marks files row by row (same position, same label) on the\n"
		"counters t_us .. %s, or only the comma-separated COLS given to --only\n"
		"(extra columns too), less those given to --ignore. Per-mm files (written\n"
		"by --mm-stats-csv) pair rows on label and mm and compare t_us and the\n"
		"ksm_stat columns. Cells either file lists\n"
		"in a '# ... cells that differ between runs: label.column=..., ...' comment\n"
		"are skipped. Prints a table of differing cells (label, column, A, B, B-A).\n"
		"Exit status: 0 all compared cells agree, 1 some differ, 2 bad input.\n",
		marks_columns[MARKS_COW_KSM].name);
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
	struct marks_diff d;
	GError *err = NULL;
	int npaths = 0, rc = EXIT_USAGE;

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
	if (!marks_diff(paths[0], paths[1], only, ignore, &d, &err)) {
		error_line("ksmsim diff", err->message);
		g_error_free(err);
		goto out;
	}
	print_table(&d);
	rc = d.cells->len ? 1 : 0;
	marks_diff_clear(&d);
out:
	g_strfreev(only);
	g_strfreev(ignore);
	return rc;
}
