// SPDX-License-Identifier: GPL-2.0-or-later
/* Reader for the cost table described in hash.h, with libcsv. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <csv.h>
#include "hashes/hash.h"
#include "util/parse.h"

struct reader {
	GArray *rows;
	struct hash_cost cur;
	unsigned col;		/* field index within the current record */
	unsigned line;		/* 1-based record number */
	GString *err;		/* first problem found */
	GString *header;	/* record 1, fields joined by commas */
};

static void on_field(void *data, size_t len, void *ctx)
{
	struct reader *r = ctx;
	char buf[64];
	unsigned col = r->col++;
	double *dst[] = { &r->cur.hot_ns, &r->cur.hot_gib_s, &r->cur.cold_ns,
			  &r->cur.cold_gib_s, &r->cur.ratio_to_jhash2 };
	uint64_t bits;

	if (r->line == 1) {
		if (col)
			g_string_append_c(r->header, ',');
		g_string_append_len(r->header, data ? data : "", len);
		return;
	}
	if (r->err->len)
		return;
	if (len >= sizeof(buf) || col >= HASH_COSTS_NCOLS) {
		g_string_printf(r->err, "record %u: field %u too long or too many fields",
				r->line, col + 1);
		return;
	}
	memcpy(buf, data ? data : "", len);
	buf[len] = '\0';
	switch (col) {
	case 0:
		g_strlcpy(r->cur.name, buf, sizeof(r->cur.name));
		break;
	case 1:
		g_strlcpy(r->cur.kind, buf, sizeof(r->cur.kind));
		break;
	case 2:
		if (!parse_u64(buf, 64, &bits))
			goto bad;
		r->cur.bits = (unsigned)bits;
		break;
	default:
		if (!parse_double(buf, dst[col - 3]))
			goto bad;
		break;
	}
	return;
bad:
	g_string_printf(r->err, "record %u: bad number '%s' in column %u",
			r->line, buf, col + 1);
}

static void on_record(int term, void *ctx)
{
	struct reader *r = ctx;

	if (r->line == 1 && strcmp(r->header->str, HASH_COSTS_HEADER) != 0)
		g_string_printf(r->err, "header is not \"%s\"", HASH_COSTS_HEADER);
	if (!r->err->len && r->line > 1 && r->col != HASH_COSTS_NCOLS)
		g_string_printf(r->err, "record %u: %u fields, expected %d",
				r->line, r->col, HASH_COSTS_NCOLS);
	if (!r->err->len && r->line > 1)
		g_array_append_val(r->rows, r->cur);
	memset(&r->cur, 0, sizeof(r->cur));
	r->col = 0;
	r->line++;
}

GArray *hash_costs_read(const char *path, GError **error)
{
	struct reader r = { .line = 1 };
	struct csv_parser p;
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: %s", path, g_strerror(errno));
		return NULL;
	}
	if (csv_init(&p, CSV_STRICT | CSV_APPEND_NULL) != 0) {
		fclose(f);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "csv_init failed");
		return NULL;
	}
	r.rows = g_array_new(FALSE, TRUE, sizeof(struct hash_cost));
	r.err = g_string_new(NULL);
	r.header = g_string_new(NULL);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (csv_parse(&p, buf, n, on_field, on_record, &r) != n) {
			g_string_printf(r.err, "%s", csv_strerror(csv_error(&p)));
			break;
		}
	if (r.line == 1 && !r.err->len)
		g_string_printf(r.err, "empty, no header");
	if (ferror(f) && !r.err->len)
		g_string_printf(r.err, "read error");
	csv_fini(&p, on_field, on_record, &r);
	csv_free(&p);
	fclose(f);
	if (r.err->len) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s",
			    path, r.err->str);
		g_array_free(r.rows, TRUE);
		r.rows = NULL;
	}
	g_string_free(r.err, TRUE);
	g_string_free(r.header, TRUE);
	return r.rows;
}

const struct hash_cost *hash_costs_find(const GArray *costs, const char *name)
{
	for (guint i = 0; i < costs->len; i++) {
		const struct hash_cost *c = &g_array_index(costs, struct hash_cost, i);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}
