/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text that goes into a one-line comment of an output file (a CSV's "#"
 * lines): C-style escapes for control characters and backslashes, so that a
 * newline in a path or a label can never start a line of its own. UTF-8 is
 * kept as it is.
 */
#ifndef KSMSIM_UTIL_ESCAPE_H
#define KSMSIM_UTIL_ESCAPE_H

/* A new string (g_free). */
char *escape_line(const char *text);

/*
 * An error on standard error as one line, "PREFIX: MESSAGE", the message
 * escaped: a newline or a terminal escape in a file name, an option value
 * or a trace token must not start a line of its own or reach the terminal.
 */
void error_line(const char *prefix, const char *msg);

#endif
