// SPDX-License-Identifier: GPL-2.0-or-later
/* One-line escapes for comment text and error lines (escape.h). */
#include <stdio.h>
#include <glib.h>
#include "util/escape.h"

char *escape_line(const char *text)
{
	GString *out = g_string_sized_new(strlen(text));

	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		switch (*p) {
		case '\\': g_string_append(out, "\\\\"); break;
		case '\n': g_string_append(out, "\\n"); break;
		case '\r': g_string_append(out, "\\r"); break;
		case '\t': g_string_append(out, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				g_string_append_printf(out, "\\x%02x", *p);
			else
				g_string_append_c(out, (char)*p);
		}
	}
	return g_string_free(out, FALSE);
}

void error_line(const char *prefix, const char *msg)
{
	char *line = escape_line(msg);

	fprintf(stderr, "%s: %s\n", prefix, line);
	g_free(line);
}
