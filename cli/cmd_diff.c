// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim diff A.csv B.csv: compare two marks files (spec, "Marks") row by
 * row and counter by counter, e.g. a model run against a live recording.
 *
 * Rows pair up by position and must carry the same label. The columns
 * compared are the spec's counters (t_us to cow_ksm), narrowed by --only and
 * --ignore; extra columns are compared only when --only names them. Files
 * with an 'mm' column (--mm-stats-csv: one row per mm and mark) pair rows on
 * label and mm, and compare the ksm_stat columns. Cells a
 * file's comments list as varying between live runs ("cells that differ
 * between runs: label.column=value, ...") are skipped.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "cli/cli.h"

static const char *const std_cols[] = {
	"t_us", "full_scans", "pages_scanned", "pages_shared", "pages_sharing",
	"pages_unshared", "pages_volatile", "pages_skipped", "ksm_zero_pages",
	"stable_node_chains", "stable_node_dups", "general_profit", "cow_ksm",
};

/* The per-mm files (sim/ksm_stat_csv.h). */
static const char *const mm_cols[] = {
	"t_us", "ksm_rmap_items", "ksm_zero_pages", "ksm_merging_pages",
	"ksm_process_profit", "ksm_mergeable",
};

struct marks {
	const char *path;
	GPtrArray *header;	/* char * */
	GPtrArray *rows;	/* GPtrArray of char *, one per header column */
	GArray *lines;		/* uint64 line number of each row */
	GHashTable *skip;	/* "label.column" set */
};

#define DIFF_ERROR (g_quark_from_static_string("ksmsim-diff"))

static void marks_free(struct marks *m)
{
	if (m->header)
		g_ptr_array_unref(m->header);
	if (m->rows)
		g_ptr_array_unref(m->rows);
	if (m->lines)
		g_array_unref(m->lines);
	if (m->skip)
		g_hash_table_destroy(m->skip);
}

/* Splits one CSV line (RFC 4180 quoting, no embedded newlines); NULL + *why on error. */
static GPtrArray *split_csv(const char *line, const char **why)
{
	GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
	GString *cur = g_string_new(NULL);
	const char *p = line;

	for (;;) {
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p) {
					*why = "unterminated quoted field";
					goto bad;
				}
				if (*p == '"' && p[1] == '"') {
					g_string_append_c(cur, '"');
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					g_string_append_c(cur, *p++);
				}
			}
			if (*p && *p != ',') {
				*why = "text after a closing quote";
				goto bad;
			}
		} else {
			while (*p && *p != ',') {
				if (*p == '"') {
					*why = "quote inside an unquoted field";
					goto bad;
				}
				g_string_append_c(cur, *p++);
			}
		}
		g_ptr_array_add(f, g_strdup(g_strstrip(cur->str)));
		g_string_truncate(cur, 0);
		if (!*p)
			break;
		p++;	/* the comma */
	}
	g_string_free(cur, TRUE);
	return f;
bad:
	g_string_free(cur, TRUE);
	g_ptr_array_unref(f);
	return NULL;
}

/* "cells that differ between runs: a.b=1, c.d=2": remember a.b and c.d. */
static void parse_skip_comment(const char *line, GHashTable *skip)
{
	static const char key[] = "cells that differ between runs:";
	const char *p = strstr(line, key);
	char **items;

	if (!p)
		return;
	items = g_strsplit(p + strlen(key), ",", -1);
	for (char **it = items; *it; it++) {
		char *cell = g_strstrip(*it), *eq = strchr(cell, '=');

		if (eq)
			*eq = '\0';
		g_strstrip(cell);
		if (strrchr(cell, '.'))
			g_hash_table_add(skip, g_strdup(cell));
	}
	g_strfreev(items);
}

static int col_index(GPtrArray *header, const char *name)
{
	for (guint i = 0; i < header->len; i++)
		if (!strcmp(header->pdata[i], name))
			return (int)i;
	return -1;
}

static bool marks_load(struct marks *m, const char *path, GError **error)
{
	char *text = NULL, **lines;
	gsize len;
	GError *err = NULL;
	bool ok = true;

	memset(m, 0, sizeof(*m));
	m->path = path;
	m->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	m->lines = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	m->skip = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!g_file_get_contents(path, &text, &len, &err)) {
		g_set_error(error, DIFF_ERROR, 2, "%s: %s", path,
			    err->code == G_FILE_ERROR_NOENT ? "no such file" : err->message);
		g_error_free(err);
		return false;
	}
	if (strlen(text) != len) {
		g_set_error(error, DIFF_ERROR, 2, "%s: contains a NUL byte", path);
		g_free(text);
		return false;
	}
	lines = g_strsplit(text, "\n", -1);
	g_free(text);
	for (uint64_t ln = 1; ok && lines[ln - 1]; ln++) {
		char *l = lines[ln - 1];
		size_t n = strlen(l);
		const char *why = NULL;
		GPtrArray *f;

		if (n && l[n - 1] == '\r')
			l[--n] = '\0';
		if (l[0] == '#') {
			parse_skip_comment(l, m->skip);
			continue;
		}
		if (!*g_strstrip(l))
			continue;
		f = split_csv(l, &why);
		if (!f) {
			g_set_error(error, DIFF_ERROR, 2, "%s:%" G_GUINT64_FORMAT ": %s",
				    path, (guint64)ln, why);
			ok = false;
		} else if (!m->header) {
			m->header = f;
			for (guint i = 0; ok && i < f->len; i++) {
				if (col_index(f, f->pdata[i]) != (int)i) {
					g_set_error(error, DIFF_ERROR, 2, "%s:%" G_GUINT64_FORMAT
						    ": column '%s' appears twice", path,
						    (guint64)ln, (char *)f->pdata[i]);
					ok = false;
				}
			}
			if (ok && col_index(f, "label") < 0) {
				g_set_error(error, DIFF_ERROR, 2, "%s:%" G_GUINT64_FORMAT
					    ": the header has no 'label' column", path, (guint64)ln);
				ok = false;
			}
		} else if (f->len != m->header->len) {
			g_set_error(error, DIFF_ERROR, 2, "%s:%" G_GUINT64_FORMAT
				    ": %u fields, the header has %u", path, (guint64)ln,
				    f->len, m->header->len);
			g_ptr_array_unref(f);
			ok = false;
		} else {
			g_ptr_array_add(m->rows, f);
			g_array_append_val(m->lines, ln);
		}
	}
	g_strfreev(lines);
	if (ok && !m->header) {
		g_set_error(error, DIFF_ERROR, 2, "%s:1: no header row", path);
		ok = false;
	}
	return ok;
}

static bool parse_int(const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return *s && !*end && !errno;
}

/* Standard counters must be integers: otherwise the file is not a marks file. */
static bool check_numbers(struct marks *m, GPtrArray *cols, GError **error)
{
	for (guint r = 0; r < m->rows->len; r++) {
		GPtrArray *row = m->rows->pdata[r];

		for (guint c = 0; c < cols->len; c++) {
			int i = col_index(m->header, cols->pdata[c]);
			long long v;
			bool std = false;

			for (size_t s = 0; s < G_N_ELEMENTS(std_cols); s++)
				std |= !strcmp(std_cols[s], cols->pdata[c]);
			if (std && !parse_int(row->pdata[i], &v)) {
				g_set_error(error, DIFF_ERROR, 2, "%s:%" G_GUINT64_FORMAT
					    ": %s '%s' is not an integer", m->path,
					    (guint64)g_array_index(m->lines, uint64_t, r),
					    (char *)cols->pdata[c], (char *)row->pdata[i]);
				return false;
			}
		}
	}
	return true;
}

static bool in_list(char **list, const char *name)
{
	for (char **p = list; p && *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* A row's name in messages and in the varying-cells list: label, or label@mm. */
static char *row_key(const struct marks *m, const GPtrArray *row)
{
	int mm = col_index(m->header, "mm");
	const char *label = row->pdata[col_index(m->header, "label")];

	return mm < 0 ? g_strdup(label) : g_strdup_printf("%s@%s", label,
							  (char *)row->pdata[mm]);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim diff A.csv B.csv [--only COLS] [--ignore COLS]\n\n"
		"Compares two marks files row by row (same position, same label) on the\n"
		"counters t_us .. cow_ksm, or only the comma-separated COLS given to --only\n"
		"(extra columns too), less those given to --ignore. Per-mm files (written\n"
		"by --mm-stats-csv) pair rows on label and mm and compare t_us and the\n"
		"ksm_stat columns. Cells either file lists\n"
		"in a '# ... cells that differ between runs: label.column=..., ...' comment\n"
		"are skipped. Prints a table of differing cells (label, column, A, B, B-A).\n"
		"Exit status: 0 all compared cells agree, 1 some differ, 2 bad input.\n");
}

static void print_diff(int *ndiff, const char *label, const char *col, const char *a,
		       const char *b)
{
	long long va, vb;

	if ((*ndiff)++ == 0)
		printf("%-24s %-20s %14s %14s %12s\n", "label", "column", "A", "B", "B-A");
	if (a && b && parse_int(a, &va) && parse_int(b, &vb))
		printf("%-24s %-20s %14s %14s %+12lld\n", label, col, a, b, vb - va);
	else
		printf("%-24s %-20s %14s %14s %12s\n", label, col, a ? a : "-", b ? b : "-", "");
}

int cmd_diff(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL };
	char **only = NULL, **ignore = NULL;
	struct marks m[2];
	GPtrArray *cols = NULL;
	GError *err = NULL;
	int npaths = 0, ndiff = 0, ncompared = 0, nskipped = 0, rc = 2;
	guint nrows;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--only") || !strcmp(argv[i], "--ignore")) {
			char ***list = argv[i][2] == 'o' ? &only : &ignore;

			if (i + 1 >= argc) {
				fprintf(stderr, "ksmsim diff: %s needs a list of columns\n", argv[i]);
				goto out;
			}
			g_strfreev(*list);
			*list = g_strsplit(argv[++i], ",", -1);
			for (char **p = *list; *p; p++)
				g_strstrip(*p);
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
	memset(m, 0, sizeof(m));
	for (int f = 0; f < 2; f++) {
		if (!marks_load(&m[f], paths[f], &err)) {
			fprintf(stderr, "ksmsim diff: %s\n", err->message);
			g_error_free(err);
			goto out_marks;
		}
	}

	/* the columns to compare */
	cols = g_ptr_array_new();
	if (only) {
		for (char **p = only; *p; p++)
			if (**p && strcmp(*p, "label") && !in_list(ignore, *p))
				g_ptr_array_add(cols, *p);
	} else {
		bool per_mm = col_index(m[0].header, "mm") >= 0 && col_index(m[1].header, "mm") >= 0;
		const char *const *std = per_mm ? mm_cols : std_cols;
		size_t nstd = per_mm ? G_N_ELEMENTS(mm_cols) : G_N_ELEMENTS(std_cols);

		for (size_t s = 0; s < nstd; s++)
			if (!in_list(ignore, std[s]))
				g_ptr_array_add(cols, (char *)std[s]);
	}
	for (guint c = 0; c < cols->len; c++) {
		for (int f = 0; f < 2; f++) {
			if (col_index(m[f].header, cols->pdata[c]) < 0) {
				fprintf(stderr, "ksmsim diff: %s: the header has no column '%s'\n",
					paths[f], (char *)cols->pdata[c]);
				goto out_marks;
			}
		}
	}
	for (int f = 0; f < 2; f++) {
		if (!check_numbers(&m[f], cols, &err)) {
			fprintf(stderr, "ksmsim diff: %s\n", err->message);
			g_error_free(err);
			goto out_marks;
		}
	}

	nrows = MIN(m[0].rows->len, m[1].rows->len);
	for (guint r = 0; r < nrows; r++) {
		GPtrArray *ra = m[0].rows->pdata[r], *rb = m[1].rows->pdata[r];
		char *la = row_key(&m[0], ra), *lb = row_key(&m[1], rb);

		if (strcmp(la, lb)) {
			char *where = g_strdup_printf("row %u", r + 1);

			print_diff(&ndiff, where, "label", la, lb);
			g_free(where);
			g_free(la);
			g_free(lb);
			continue;
		}
		for (guint c = 0; c < cols->len; c++) {
			const char *col = cols->pdata[c];
			const char *a = ra->pdata[col_index(m[0].header, col)];
			const char *b = rb->pdata[col_index(m[1].header, col)];
			char *cell = g_strdup_printf("%s.%s", la, col);
			bool skip = g_hash_table_contains(m[0].skip, cell) ||
				    g_hash_table_contains(m[1].skip, cell);

			g_free(cell);
			if (skip) {
				nskipped++;
				continue;
			}
			ncompared++;
			if (strcmp(a, b))
				print_diff(&ndiff, la, col, a, b);
		}
		g_free(la);
		g_free(lb);
	}
	for (int f = 0; f < 2; f++) {
		for (guint r = nrows; r < m[f].rows->len; r++) {
			char *label = row_key(&m[f], m[f].rows->pdata[r]);

			print_diff(&ndiff, label, "(row)", f ? NULL : "present", f ? "present" : NULL);
			g_free(label);
		}
	}
	if (m[0].rows->len != m[1].rows->len)
		printf("row count: A has %u marks, B has %u\n", m[0].rows->len, m[1].rows->len);
	if (ndiff)
		printf("%d difference%s (%d cells compared, %d skipped as varying between runs)\n",
		       ndiff, ndiff == 1 ? "" : "s", ncompared, nskipped);
	else
		printf("no differences (%d cells compared, %d skipped as varying between runs)\n",
		       ncompared, nskipped);
	rc = ndiff ? 1 : 0;
out_marks:
	if (cols)
		g_ptr_array_unref(cols);
	marks_free(&m[0]);
	marks_free(&m[1]);
out:
	g_strfreev(only);
	g_strfreev(ignore);
	return rc;
}
