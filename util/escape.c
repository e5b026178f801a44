// SPDX-License-Identifier: GPL-2.0-or-later
/* One-line escapes for comment text and the one writer of messages (escape.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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

/*
 * The unit of text at p (one character, or one byte that is not valid
 * UTF-8): its length in the input, and its escaped form put in buf (at
 * most 8 bytes with the NUL); returns the escaped length.
 */
static size_t term_unit(const unsigned char *p, size_t *in_len, char buf[8])
{
	if (*p < 0x80) {
		*in_len = 1;
		switch (*p) {
		case '\n': return (size_t)g_strlcpy(buf, "\\n", 8);
		case '\r': return (size_t)g_strlcpy(buf, "\\r", 8);
		case '\t': return (size_t)g_strlcpy(buf, "\\t", 8);
		}
		if (*p < 0x20 || *p == 0x7f)
			return (size_t)snprintf(buf, 8, "\\x%02x", *p);
		buf[0] = (char)*p;
		buf[1] = 0;
		return 1;
	}
	/* a valid UTF-8 sequence: g_utf8_get_char_validated refuses overlong forms and surrogates */
	gunichar u = g_utf8_get_char_validated((const char *)p, -1);

	if (u == (gunichar)-1 || u == (gunichar)-2 || u >= 0x110000) {
		*in_len = 1;
		return (size_t)snprintf(buf, 8, "\\x%02x", *p);
	}
	*in_len = (size_t)g_unichar_to_utf8(u, NULL);
	if (u < 0xa0)	/* C1 controls */
		return (size_t)snprintf(buf, 8, "\\u%04x", (unsigned)u);
	memcpy(buf, p, *in_len);
	buf[*in_len] = 0;
	return *in_len;
}

char *escape_term(const char *text, size_t max)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t total = 0, n, k;
	char buf[8];

	for (const unsigned char *p = s; *p; p += n)
		total += term_unit(p, &n, buf);
	/* too long: keep a head and a tail, the cut at units' edges */
	size_t head = max && total > max ? max * 3 / 4 : total;
	size_t tail_from = max && total > max ? total - (max - head) + 5 : total;
	GString *out = g_string_sized_new(MIN(total, max ? max : total) + 8);
	size_t at = 0;
	bool cut = false;

	for (const unsigned char *p = s; *p; p += n) {
		k = term_unit(p, &n, buf);
		if (at + k <= head || at >= tail_from) {
			g_string_append_len(out, buf, (gssize)k);
		} else if (!cut) {
			g_string_append(out, "[...]");
			cut = true;
		}
		at += k;
	}
	return g_string_free(out, FALSE);
}

void vreportf(const char *prefix, const char *fmt, va_list ap)
{
	int saved_errno = errno;
	char *msg = g_strdup_vprintf(fmt, ap);
	char *text = prefix ? g_strdup_printf("%s: %s", prefix, msg) : g_strdup(msg);
	char *line = escape_term(text, REPORT_MAX);
	size_t len = strlen(line);

	/* one write, the newline with it: lines of processes at once do not interleave */
	line = g_realloc(line, len + 2);
	line[len] = '\n';
	line[len + 1] = 0;
	fflush(stderr);
	for (size_t done = 0; done < len + 1;) {
		ssize_t w = write(STDERR_FILENO, line + done, len + 1 - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	g_free(line);
	g_free(text);
	g_free(msg);
	errno = saved_errno;
}

void reportf(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreportf(prefix, fmt, ap);
	va_end(ap);
}

void error_line(const char *prefix, const char *msg)
{
	reportf(prefix, "%s", msg);
}
