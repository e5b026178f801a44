/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON output made from the CSV a command writes, so that --json carries
 * the CSV's fields under the same names by construction: each row an
 * object keyed by the header, a cell that is a JSON number written as one,
 * an empty cell null, anything else a string. Lines starting with '#' (the
 * CSVs' comments) are skipped.
 */
#ifndef KSMSIM_UTIL_JSON_H
#define KSMSIM_UTIL_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <glib.h>

/* s as a JSON string, quotes included, appended to g (control bytes as \uXXXX). */
void json_string(GString *g, const char *s);
/* The CSV text's rows as a JSON array of objects, appended to g. */
void json_csv_rows(GString *g, const char *csv);
/* The CSV text's first row as one object (null when there is none). */
void json_csv_first(GString *g, const char *csv);

/*
 * What a writer callback puts on a FILE, as text (g_free): the CSV that
 * fill(ctx, f) writes, for the functions above.
 */
char *json_capture(void (*fill)(void *ctx, FILE *f), void *ctx);

#endif
