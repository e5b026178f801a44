// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Two marks files compared cell by cell (marks.h), e.g. a model run against
 * a live recording: `ksmsim diff` and the conformance suite's verdict.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "marks/marks.h"

G_DEFINE_QUARK(ksmsim-marks-error-quark, marks_error)

/* The columns compared by default besides the registries': the mark's time. */
#define KEY_T_US "t_us"

/* Standard: t_us and the kernel's columns, which must be integers in a marks file. */
static bool std_col(const char *name)
{
	if (!strcmp(name, KEY_T_US))
		return true;
	for (size_t i = 0; i < MARKS_NR; i++)
		if (marks_kernel(&marks_columns[i]) && !strcmp(marks_columns[i].name, name))
			return true;
	return false;
}

struct marks_file {
	const char *path;
	GPtrArray *header;	/* char * */
	GPtrArray *rows;	/* GPtrArray of char *, one per header column */
	GArray *lines;		/* uint64 line number of each row */
	GHashTable *skip;	/* "label.column" set */
};
static void marks_free(struct marks_file *m)
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

GPtrArray *marks_split_csv(const char *line, const char **why)
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

static bool marks_load(struct marks_file *m, const char *path, GError **error)
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
		g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s: %s", path,
			    err->code == G_FILE_ERROR_NOENT ? "no such file" : err->message);
		g_error_free(err);
		return false;
	}
	if (strlen(text) != len) {
		g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s: contains a NUL byte", path);
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
		f = marks_split_csv(l, &why);
		if (!f) {
			g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:%" G_GUINT64_FORMAT ": %s",
				    path, (guint64)ln, why);
			ok = false;
		} else if (!m->header) {
			m->header = f;
			for (guint i = 0; ok && i < f->len; i++) {
				if (col_index(f, f->pdata[i]) != (int)i) {
					g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:%" G_GUINT64_FORMAT
						    ": column '%s' appears twice", path,
						    (guint64)ln, (char *)f->pdata[i]);
					ok = false;
				}
			}
			if (ok && col_index(f, "label") < 0) {
				g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:%" G_GUINT64_FORMAT
					    ": the header has no 'label' column", path, (guint64)ln);
				ok = false;
			}
		} else if (f->len != m->header->len) {
			g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:%" G_GUINT64_FORMAT
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
		g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:1: no header row", path);
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
static bool check_numbers(struct marks_file *m, GPtrArray *cols, GError **error)
{
	for (guint r = 0; r < m->rows->len; r++) {
		GPtrArray *row = m->rows->pdata[r];

		for (guint c = 0; c < cols->len; c++) {
			int i = col_index(m->header, cols->pdata[c]);
			long long v;
			if (std_col(cols->pdata[c]) && !parse_int(row->pdata[i], &v)) {
				g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:%" G_GUINT64_FORMAT
					    ": %s '%s' is not an integer", m->path,
					    (guint64)g_array_index(m->lines, uint64_t, r),
					    (char *)cols->pdata[c], (char *)row->pdata[i]);
				return false;
			}
		}
	}
	return true;
}

/* The measured column a name is (ksmd_cpu_ms), or NULL. */
static const char *measured_col(const char *name)
{
	for (size_t i = 0; i < MARKS_NR; i++)
		if (marks_measured(&marks_columns[i]) && !strcmp(marks_columns[i].name, name))
			return marks_columns[i].name;
	return NULL;
}

/* A measured cell: a non-negative finite number, or empty (not measured). */
static bool parse_ms(const char *s, double *v, bool *empty)
{
	char *end;

	*empty = !*s;
	if (*empty)
		return true;
	errno = 0;
	*v = strtod(s, &end);
	return !*end && !errno && *v >= 0 && *v < 1e300;
}

static bool check_measured(struct marks_file *m, const char *col, GError **error)
{
	int i = col_index(m->header, col);

	for (guint r = 0; r < m->rows->len; r++) {
		const char *cell = ((GPtrArray *)m->rows->pdata[r])->pdata[i];
		double v;
		bool empty;

		if (!parse_ms(cell, &v, &empty)) {
			g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD, "%s:%" G_GUINT64_FORMAT
				    ": %s '%s' is not a number of milliseconds", m->path,
				    (guint64)g_array_index(m->lines, uint64_t, r), col, cell);
			return false;
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
static char *row_key(const struct marks_file *m, const GPtrArray *row)
{
	int mm = col_index(m->header, "mm");
	const char *label = row->pdata[col_index(m->header, "label")];

	return mm < 0 ? g_strdup(label) : g_strdup_printf("%s@%s", label,
							  (char *)row->pdata[mm]);
}


static void add_cell(struct marks_diff *d, const char *row, const char *col, const char *a,
		     const char *b)
{
	struct marks_cell_diff c = {
		.row = g_strdup(row), .column = g_strdup(col),
		.a = g_strdup(a), .b = g_strdup(b),
	};
	long long va, vb;

	if (a && b && parse_int(a, &va) && parse_int(b, &vb)) {
		c.has_delta = true;
		c.delta = vb - va;
	}
	g_array_append_val(d->cells, c);
}

static void clear_cell(gpointer p)
{
	struct marks_cell_diff *c = p;

	g_free(c->row);
	g_free(c->column);
	g_free(c->a);
	g_free(c->b);
}

/* A column compared by default, unless ignored or an optional one a file lacks. */
static void add_default(GPtrArray *cols, struct marks_file m[2], char **ignore, const char *name,
			bool optional)
{
	if (in_list(ignore, name) || (optional && (col_index(m[0].header, name) < 0 ||
						   col_index(m[1].header, name) < 0)))
		return;
	g_ptr_array_add(cols, (char *)name);
}

/*
 * only (less ignore, never label), or the standard columns of the files'
 * kind less ignore; *cpu the measured column compared by ratio (listed in
 * only, or by default where both files have it), or NULL.
 */
static GPtrArray *columns(struct marks_file m[2], char **only, char **ignore, const char **cpu,
			  GError **error)
{
	GPtrArray *cols = g_ptr_array_new();

	*cpu = NULL;
	if (only) {
		for (char **p = only; *p; p++) {
			if (!**p || !strcmp(*p, "label") || in_list(ignore, *p))
				continue;
			if (measured_col(*p))
				*cpu = measured_col(*p);
			else
				g_ptr_array_add(cols, *p);
		}
	} else {
		bool per_mm = col_index(m[0].header, "mm") >= 0 && col_index(m[1].header, "mm") >= 0;

		add_default(cols, m, ignore, KEY_T_US, false);
		/* what Linux 6.1 has no file for is compared where both files have it */
		for (size_t i = 0; per_mm && i < MARKS_MM_NR; i++)
			add_default(cols, m, ignore, marks_mm_columns[i].name,
				    marks_mm_columns[i].optional || marks_mm_linux_6_1_lacks(i));
		for (size_t i = 0; !per_mm && i < MARKS_NR; i++)
			if (marks_kernel(&marks_columns[i]))
				add_default(cols, m, ignore, marks_columns[i].name,
					    !marks_in_format(&marks_columns[i]) ||
					    marks_linux_6_1_lacks(&marks_columns[i]));
		for (size_t i = 0; !per_mm && i < MARKS_NR; i++) {
			const char *name = marks_columns[i].name;

			if (marks_measured(&marks_columns[i]) && !in_list(ignore, name) &&
			    col_index(m[0].header, name) >= 0 && col_index(m[1].header, name) >= 0)
				*cpu = name;
		}
	}
	for (int f = 0; *cpu && f < 2; f++) {
		if (col_index(m[f].header, *cpu) < 0) {
			g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD,
				    "%s: the header has no column '%s'", m[f].path, *cpu);
			g_ptr_array_unref(cols);
			return NULL;
		}
		if (!check_measured(&m[f], *cpu, error)) {
			g_ptr_array_unref(cols);
			return NULL;
		}
	}
	for (guint c = 0; c < cols->len; c++) {
		for (int f = 0; f < 2; f++) {
			if (col_index(m[f].header, cols->pdata[c]) < 0) {
				g_set_error(error, MARKS_ERROR, MARKS_ERROR_BAD,
					    "%s: the header has no column '%s'", m[f].path,
					    (char *)cols->pdata[c]);
				g_ptr_array_unref(cols);
				return NULL;
			}
		}
	}
	for (int f = 0; f < 2; f++) {
		if (!check_numbers(&m[f], cols, error)) {
			g_ptr_array_unref(cols);
			return NULL;
		}
	}
	return cols;
}

/* The measured column of one row pair, by ratio (marks.h). */
static void compare_cpu(struct marks_file m[2], GPtrArray *ra, GPtrArray *rb, const char *label,
			const struct marks_diff_opts *o, struct marks_diff *d)
{
	const char *col = d->cpu_column;
	char *cell = g_strdup_printf("%s.%s", label, col);
	bool skip = g_hash_table_contains(m[0].skip, cell) || g_hash_table_contains(m[1].skip, cell);
	struct marks_cpu_cell c = { 0 };
	bool ea, eb;

	g_free(cell);
	parse_ms(ra->pdata[col_index(m[0].header, col)], &c.a_ms, &ea);
	parse_ms(rb->pdata[col_index(m[1].header, col)], &c.b_ms, &eb);
	if (skip || ea || eb) {
		d->skipped++;
		return;
	}
	c.row = g_strdup(label);
	c.ratio = c.a_ms > 0 ? c.b_ms / c.a_ms : 0;
	c.below_floor = c.a_ms < o->cpu_floor_ms && c.b_ms < o->cpu_floor_ms;
	c.within = c.a_ms == c.b_ms || c.below_floor ||
		   (c.a_ms > 0 && c.ratio >= 1 - o->cpu_tolerance && c.ratio <= 1 + o->cpu_tolerance);
	d->cpu_outside += !c.within;
	g_array_append_val(d->cpu, c);
}

static void compare_rows(struct marks_file m[2], GPtrArray *cols, const struct marks_diff_opts *o,
			 struct marks_diff *d)
{
	guint nrows = MIN(m[0].rows->len, m[1].rows->len);

	for (guint r = 0; r < nrows; r++) {
		GPtrArray *ra = m[0].rows->pdata[r], *rb = m[1].rows->pdata[r];
		char *la = row_key(&m[0], ra), *lb = row_key(&m[1], rb);

		if (strcmp(la, lb)) {
			char *where = g_strdup_printf("row %u", r + 1);

			add_cell(d, where, "label", la, lb);
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
				d->skipped++;
				continue;
			}
			d->compared++;
			if (strcmp(a, b))
				add_cell(d, la, col, a, b);
		}
		if (d->cpu_column)
			compare_cpu(m, ra, rb, la, o, d);
		g_free(la);
		g_free(lb);
	}
	/* rows only one file has */
	for (int f = 0; f < 2; f++) {
		for (guint r = nrows; r < m[f].rows->len; r++) {
			char *label = row_key(&m[f], m[f].rows->pdata[r]);

			add_cell(d, label, "(row)", f ? NULL : "present", f ? "present" : NULL);
			g_free(label);
		}
	}
}

static void clear_cpu(gpointer p)
{
	g_free(((struct marks_cpu_cell *)p)->row);
}

bool marks_diff(const char *path_a, const char *path_b, const struct marks_diff_opts *opts,
		struct marks_diff *out, GError **error)
{
	static const struct marks_diff_opts defaults = {
		.cpu_tolerance = MARKS_CPU_TOLERANCE_PCT / 100, .cpu_floor_ms = MARKS_CPU_FLOOR_MS,
	};
	const struct marks_diff_opts *o = opts ? opts : &defaults;
	struct marks_file m[2];
	GPtrArray *cols = NULL;
	const char *cpu = NULL;
	bool ok;

	memset(out, 0, sizeof(*out));
	memset(m, 0, sizeof(m));
	ok = marks_load(&m[0], path_a, error) && marks_load(&m[1], path_b, error) &&
	     (cols = columns(m, o->only, o->ignore, &cpu, error));
	if (ok) {
		out->cells = g_array_new(FALSE, FALSE, sizeof(struct marks_cell_diff));
		g_array_set_clear_func(out->cells, clear_cell);
		out->cpu = g_array_new(FALSE, FALSE, sizeof(struct marks_cpu_cell));
		g_array_set_clear_func(out->cpu, clear_cpu);
		out->cpu_column = cpu;
		out->rows_a = m[0].rows->len;
		out->rows_b = m[1].rows->len;
		compare_rows(m, cols, o, out);
		g_ptr_array_unref(cols);
	}
	marks_free(&m[0]);
	marks_free(&m[1]);
	return ok;
}

void marks_diff_clear(struct marks_diff *d)
{
	if (d->cells)
		g_array_unref(d->cells);
	if (d->cpu)
		g_array_unref(d->cpu);
	memset(d, 0, sizeof(*d));
}
