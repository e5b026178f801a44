// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tune CSV read back (tune.h, tune_csv_read): what `ksmsim tune --replot`
 * draws a plot from, so that a figure can be redrawn by today's plot from
 * the rows a study recorded, without running the study again. The file is
 * checked whole before anything is drawn: a plot from a damaged file would
 * show points nobody measured.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "analysis/tune.h"
#include "marks/marks.h"
#include "util/parse.h"

/* The header before the mapped memory and the band's columns (results of 2026-11). */
static const char header_v1[] =
	"trace,setting,pages_to_scan,sleep_millisecs,advisor_mode,advisor_target_scan_time,"
	"smart_scan,use_zero_pages,max_page_sharing,duration_s,ksmd_cpu_ms,ksmd_cpu_pct,"
	"samples,saved_mean,saved_end,ideal_saved_end,t50_s,t90_s,cow_ksm,cow_per_s,"
	"rmap_items,rmap_bytes,general_profit,pages_to_scan_end,costs,cpu_budget_pct,"
	"within_budget,frontier,recommended";

/* Text columns; every other cell is a number, empty only in these. */
static const char *const text_cols[] = { "trace", "setting", "advisor_mode", "costs" };
static const char *const may_be_empty[] = {
	"advisor_target_scan_time", "ideal_saved_end", "t50_s", "t90_s", "saved_mean_pct_mapped",
};

static bool listed(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

/* One file being read: where, the header's cells, the line's. */
struct reader {
	const char *path;
	size_t line;
	GPtrArray *head, *cells;
	GError **error;
};

static bool fail(struct reader *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	m = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (r->line)
		g_set_error(r->error, TUNE_ERROR, 2, "%s:%zu: %s", r->path, r->line, m);
	else
		g_set_error(r->error, TUNE_ERROR, 2, "%s: %s", r->path, m);
	g_free(m);
	return false;
}

/* The cell of column name on this line; NULL when the header lacks it. */
static const char *cell(const struct reader *r, const char *name)
{
	for (guint i = 0; i < r->head->len; i++)
		if (!strcmp(r->head->pdata[i], name))
			return r->cells->pdata[i];
	return NULL;
}

static bool get_u64(struct reader *r, const char *name, uint64_t max, uint64_t *v)
{
	const char *c = cell(r, name);

	if (!parse_u64(c, max, v))
		return fail(r, "%s wants 0..%" PRIu64 ", not '%s'", name, max, c);
	return true;
}

static bool get_flag(struct reader *r, const char *name, bool *v)
{
	uint64_t u;

	if (!get_u64(r, name, 1, &u))
		return false;
	*v = u;
	return true;
}

/* Every numeric cell a finite number (or empty where the writer leaves it so). */
static bool numbers_ok(struct reader *r)
{
	for (guint i = 0; i < r->head->len; i++) {
		const char *name = r->head->pdata[i], *c = r->cells->pdata[i];
		double d;

		if (listed(name, text_cols, G_N_ELEMENTS(text_cols)))
			continue;
		if (!*c && listed(name, may_be_empty, G_N_ELEMENTS(may_be_empty)))
			continue;
		if (!parse_double(c, &d))
			return fail(r, "%s wants a number, not '%s'", name, c);
	}
	return true;
}

/* The setting the knob columns give, named as its setting column says. */
static bool read_setting(struct reader *r, struct tune_setting *s)
{
	const char *mode = cell(r, "advisor_mode"), *target = cell(r, "advisor_target_scan_time");

	memset(s, 0, sizeof(*s));
	if (!get_u64(r, "pages_to_scan", UINT32_MAX, &s->pages_to_scan) ||
	    !get_u64(r, "sleep_millisecs", UINT32_MAX, &s->sleep_millisecs) ||
	    !get_flag(r, "smart_scan", &s->smart_scan) ||
	    !get_flag(r, "use_zero_pages", &s->use_zero_pages) ||
	    !get_u64(r, "max_page_sharing", UINT32_MAX, &s->max_page_sharing))
		return false;
	if (!strcmp(mode, "scan-time")) {
		s->advisor = true;
		if (!get_u64(r, "advisor_target_scan_time", UINT32_MAX, &s->target_scan_time))
			return false;
	} else if (strcmp(mode, "none")) {
		return fail(r, "advisor_mode wants none or scan-time, not '%s'", mode);
	} else if (*target) {
		return fail(r, "advisor_target_scan_time '%s' without the advisor", target);
	}
	char *name = tune_setting_name(s);
	bool same = !strcmp(name, cell(r, "setting"));

	if (!same)
		fail(r, "setting '%s' is not what its knobs say ('%s')", cell(r, "setting"), name);
	g_free(name);
	return same;
}

/* A cell every row must have alike: the first row's, kept in *keep. */
static bool same_each_row(struct reader *r, const char *name, char **keep)
{
	const char *c = cell(r, name);

	if (!c)
		return true;
	if (!*keep)
		*keep = g_strdup(c);
	else if (strcmp(*keep, c))
		return fail(r, "%s '%s' differs from the first row's '%s'", name, c, *keep);
	return true;
}

/* One row: the setting, the figures the plot and the judge use, the flags. */
static bool read_row(struct reader *r, struct tune_setting *s, struct tune_row *row,
		     char **same)
{
	static const char *const alike[] = { "trace", "costs", "cpu_budget_pct", "cpu_spread_pct",
					     "mapped_pages" };

	if (r->cells->len != r->head->len)
		return fail(r, "%u fields, the header has %u", r->cells->len, r->head->len);
	if (!*cell(r, "trace"))
		return fail(r, "an empty trace");
	for (size_t i = 0; i < G_N_ELEMENTS(alike); i++)
		if (!same_each_row(r, alike[i], &same[i]))
			return false;
	if (!numbers_ok(r) || !read_setting(r, s))
		return false;
	/* numbers_ok has read them: only their sign is left to check */
	parse_double(cell(r, "ksmd_cpu_pct"), &row->cpu_pct);
	parse_double(cell(r, "saved_mean"), &row->saved_mean);
	if (row->cpu_pct < 0 || row->saved_mean < 0)
		return fail(r, "ksmd_cpu_pct and saved_mean cannot be negative");
	return get_flag(r, "within_budget", &row->within) && get_flag(r, "frontier", &row->frontier) &&
	       get_flag(r, "recommended", &row->pick);
}

/* The frame: what every row shares, checked. */
static bool read_frame(struct reader *r, struct tune_table *t, char **same)
{
	uint64_t mapped = 0;

	r->line = 2;	/* the first row's cells, the same on every row */
	t->trace = g_strdup(same[0]);
	t->costs = g_strdup(same[1]);
	t->fr = (struct tune_frame){ .trace = t->trace, .costs_csv = t->costs,
				     .spread_pct = TUNE_SPREAD_DEFAULT };
	if (!strcmp(t->costs, "built-in"))
		t->fr.costs_csv = NULL;
	if (!parse_double(same[2], &t->fr.budget_pct) || !(t->fr.budget_pct > 0) ||
	    t->fr.budget_pct > 100)
		return fail(r, "cpu_budget_pct wants more than 0 and at most 100, not '%s'", same[2]);
	if (same[3] && (!parse_double(same[3], &t->fr.spread_pct) || t->fr.spread_pct < 0 ||
			t->fr.spread_pct >= 100))
		return fail(r, "cpu_spread_pct wants 0 to less than 100, not '%s'", same[3]);
	if (same[4] && !parse_u64(same[4], UINT64_MAX, &mapped))
		return fail(r, "mapped_pages wants a count of pages, not '%s'", same[4]);
	t->fr.mapped_pages = mapped;
	return true;
}

/* within_budget, frontier and recommended as tune_judge makes them of the rows. */
static bool judged(struct reader *r, const struct tune_table *t)
{
	struct tune_row *again = g_memdup2(t->rows, t->n * sizeof(*again));
	bool ok = true;

	tune_judge(again, t->n, t->fr.budget_pct);
	for (size_t i = 0; ok && i < t->n; i++) {
		static const char *const what[] = { "within_budget", "frontier", "recommended" };
		const bool file[] = { t->rows[i].within, t->rows[i].frontier, t->rows[i].pick };
		const bool judge[] = { again[i].within, again[i].frontier, again[i].pick };

		r->line = i + 2;
		for (size_t k = 0; ok && k < G_N_ELEMENTS(what); k++)
			if (file[k] != judge[k])
				ok = fail(r, "%s is %d, but the rows' CPU and saving make it %d",
					  what[k], file[k], judge[k]);
	}
	g_free(again);
	return ok;
}

bool tune_csv_read(const char *path, struct tune_table *t, GError **error)
{
	struct reader r = { .path = path, .error = error };
	char *text = NULL, **lines = NULL, *same[5] = { 0 };
	const char *why;
	GError *err = NULL;
	bool ok = false;

	memset(t, 0, sizeof(*t));
	gsize len;
	/* g_file_get_contents' message names the file again: say why alone */
	FILE *probe = fopen(path, "rb");

	if (!probe)
		return fail(&r, "cannot open: %s", g_strerror(errno));
	fclose(probe);
	if (!g_file_get_contents(path, &text, &len, &err)) {
		fail(&r, "%s", err->message);
		g_error_free(err);
		return false;
	}
	if (strlen(text) != len) {
		r.line = 1;
		for (const char *p = text; p < text + strlen(text); p++)
			r.line += *p == '\n';
		fail(&r, "a NUL byte: not a CSV");
		g_free(text);
		return false;
	}
	lines = g_strsplit(text, "\n", -1);
	size_t nl = g_strv_length(lines);

	/* the writer ends every line: the last piece is empty */
	if (nl && !*lines[nl - 1])
		nl--;
	r.line = 1;
	if (!nl || (strcmp(lines[0], tune_csv_header) && strcmp(lines[0], header_v1))) {
		fail(&r, "not the header 'ksmsim tune -o' writes");
		goto out;
	}
	r.head = marks_split_csv(lines[0], &why);
	if (nl < 2) {
		fail(&r, "no rows after the header");
		goto out;
	}
	t->n = nl - 1;
	t->s = g_new0(struct tune_setting, t->n);
	t->rows = g_new0(struct tune_row, t->n);
	for (size_t i = 0; i < t->n; i++) {
		r.line = i + 2;
		if (memchr(lines[i + 1], '\r', strlen(lines[i + 1]))) {
			fail(&r, "a carriage return (the writer ends lines with \\n only)");
			goto out;
		}
		r.cells = marks_split_csv(lines[i + 1], &why);
		if (!r.cells) {
			fail(&r, "%s", why);
			goto out;
		}
		if (!read_row(&r, &t->s[i], &t->rows[i], same))
			goto out;
		g_ptr_array_unref(r.cells);
		r.cells = NULL;
	}
	ok = read_frame(&r, t, same) && judged(&r, t);
out:
	if (r.head)
		g_ptr_array_unref(r.head);
	if (r.cells)
		g_ptr_array_unref(r.cells);
	for (size_t i = 0; i < G_N_ELEMENTS(same); i++)
		g_free(same[i]);
	g_strfreev(lines);
	g_free(text);
	if (!ok)
		tune_table_clear(t);
	return ok;
}

void tune_table_clear(struct tune_table *t)
{
	g_free(t->trace);
	g_free(t->costs);
	g_free(t->s);
	g_free(t->rows);
	memset(t, 0, sizeof(*t));
}
