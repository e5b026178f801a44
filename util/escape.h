/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text made safe for one line.
 *
 * escape_line: text that goes into a one-line comment of an output file (a
 * CSV's "#" lines): C-style escapes for control characters and
 * backslashes, so that a newline in a path or a label can never start a
 * line of its own. UTF-8 is kept as it is (output bytes do not change).
 *
 * vreportf: the one writer of messages on standard error (as git's
 * usage.c vreportf()). Every error, warning and notice of ksmsim, in cli/
 * and in the libraries, goes through it; the formatted message is escaped
 * as a whole (escape_term), so the "one line, always" rule holds whatever
 * a file name, option value or trace token carries.
 */
#ifndef KSMSIM_UTIL_ESCAPE_H
#define KSMSIM_UTIL_ESCAPE_H

#include <stdarg.h>
#include <stddef.h>
#include <glib.h>

/* A new string (g_free). */
char *escape_line(const char *text);

/*
 * Text for a terminal, a new string (g_free): C0 controls, DEL and the C1
 * controls (U+0080..U+009F, which 8-bit terminals read as CSI and the
 * like) as \n, \r, \t or \xNN (C1: \u0080..\u009f); every byte that is not part of valid
 * UTF-8 (a raw 0x9b is CSI on an 8-bit terminal) as \xNN. Backslashes stay
 * as they are: text escaped once (a library's message quoting a token) is
 * not escaped twice. Longer than max bytes (0: no limit), the middle is cut
 * at a character's edge and replaced by "[...]".
 */
char *escape_term(const char *text, size_t max);

/* The longest line vreportf writes, in bytes before its newline. */
#define REPORT_MAX 8192

/*
 * One line on standard error, "PREFIX: MESSAGE\n" (just "MESSAGE\n" when
 * prefix is NULL), written by one write: the message formatted, then
 * escaped by escape_term.
 */
void vreportf(const char *prefix, const char *fmt, va_list ap) G_GNUC_PRINTF(2, 0);
void reportf(const char *prefix, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* reportf(prefix, "%s", msg): kept for the libraries' callers. */
void error_line(const char *prefix, const char *msg);

#endif
