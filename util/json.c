// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON from a command's CSV (json.h): the same fields, so the two cannot drift. */
#include <string.h>
#include "util/json.h"

void json_string(GString *g, const char *s)
{
	g_string_append_c(g, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			g_string_append_printf(g, "\\%c", *p);
		else if (*p == '\n')
			g_string_append(g, "\\n");
		else if (*p == '\t')
			g_string_append(g, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			g_string_append_printf(g, "\\u%04x", *p);
		else
			g_string_append_c(g, (char)*p);
	}
	g_string_append_c(g, '"');
}

/* JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (g_ascii_isdigit(*s))
		while (g_ascii_isdigit(*s))
			s++;
	else
		return false;
	if (*s == '.') {
		s++;
		if (!g_ascii_isdigit(*s))
			return false;
		while (g_ascii_isdigit(*s))
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!g_ascii_isdigit(*s))
			return false;
		while (g_ascii_isdigit(*s))
			s++;
	}
	return *s == '\0';
}

static void value(GString *g, const char *cell, bool quoted)
{
	if (!*cell && !quoted)
		g_string_append(g, "null");
	else if (!quoted && is_number(cell))
		g_string_append(g, cell);
	else
		json_string(g, cell);
}

/*
 * One CSV record from *p (RFC 4180: "..." with "" for a quote, newlines
 * inside quotes kept): its cells, and whether each was quoted. NULL at the end.
 */
static GPtrArray *record(const char **p, GArray *quoted)
{
	const char *s = *p;

	while (*s == '#') {	/* a comment line */
		const char *nl = strchr(s, '\n');

		s = nl ? nl + 1 : s + strlen(s);
	}
	if (!*s) {
		*p = s;
		return NULL;
	}
	GPtrArray *cells = g_ptr_array_new_with_free_func(g_free);
	GString *cell = g_string_new(NULL);
	bool q = false;

	g_array_set_size(quoted, 0);
	for (;;) {
		if (*s == '"' && !cell->len && !q) {
			q = true;
			for (s++; *s; s++) {
				if (*s == '"' && s[1] == '"')
					g_string_append_c(cell, *s++);
				else if (*s == '"')
					break;
				else
					g_string_append_c(cell, *s);
			}
			if (*s)
				s++;
			continue;
		}
		if (*s == ',' || *s == '\n' || *s == '\0' || (*s == '\r' && s[1] == '\n')) {
			g_ptr_array_add(cells, g_string_free(cell, FALSE));
			g_array_append_val(quoted, q);
			q = false;
			if (*s != ',') {
				s += *s == '\r' ? 2 : *s ? 1 : 0;
				break;
			}
			s++;
			cell = g_string_new(NULL);
			continue;
		}
		g_string_append_c(cell, *s++);
	}
	*p = s;
	return cells;
}

static void rows(GString *g, const char *csv, bool first_only)
{
	GArray *qh = g_array_new(FALSE, FALSE, sizeof(bool)), *q = g_array_new(FALSE, FALSE, sizeof(bool));
	const char *p = csv;
	GPtrArray *head = record(&p, qh), *cells;
	bool any = false;

	if (!first_only)
		g_string_append_c(g, '[');
	while (head && (cells = record(&p, q))) {
		g_string_append(g, any ? ",\n" : first_only ? "" : "\n");
		g_string_append_c(g, '{');
		for (guint i = 0; i < head->len; i++) {
			if (i)
				g_string_append(g, ", ");
			json_string(g, head->pdata[i]);
			g_string_append(g, ": ");
			if (i < cells->len)
				value(g, cells->pdata[i], g_array_index(q, bool, i));
			else
				g_string_append(g, "null");
		}
		g_string_append_c(g, '}');
		any = true;
		g_ptr_array_free(cells, TRUE);
		if (first_only)
			break;
	}
	if (first_only && !any)
		g_string_append(g, "null");
	if (!first_only)
		g_string_append(g, any ? "\n]" : "]");
	if (head)
		g_ptr_array_free(head, TRUE);
	g_array_free(qh, TRUE);
	g_array_free(q, TRUE);
}

void json_csv_rows(GString *g, const char *csv)
{
	rows(g, csv, false);
}

void json_csv_first(GString *g, const char *csv)
{
	rows(g, csv, true);
}

char *json_capture(void (*fill)(void *ctx, FILE *f), void *ctx)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return g_strdup("");
	fill(ctx, f);
	fclose(f);
	char *out = g_strdup(buf ? buf : "");

	free(buf);
	return out;
}
