// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The front door's one voice (cli.h): every message a command prints on
 * standard error goes through these, on top of util/escape.h's vreportf,
 * which escapes the formatted text and writes exactly one line. Nothing
 * else in cli/ writes to stderr (tests/hardening/one_voice.sh checks it).
 */
#include <stdarg.h>
#include <string.h>
#include "cli/cli.h"
#include "util/escape.h"
#include "util/options.h"

int cli_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreportf(prog, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

void cli_notice(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreportf(prog, fmt, ap);
	va_end(ap);
}

void cli_warning(const char *prog, const char *fmt, ...)
{
	char *where = g_strdup_printf("%s: warning", prog);
	va_list ap;

	va_start(ap, fmt);
	vreportf(where, fmt, ap);
	va_end(ap);
	g_free(where);
}

int cli_usage_error(const char *prog, const char *option, const char *wants, const char *value)
{
	return cli_error(prog, "%s wants %s, not '%s'", option, wants, value ? value : "");
}

int cli_gerror(const char *prog, GError *error)
{
	cli_error(prog, "%s", error ? error->message : "failed");
	g_clear_error(&error);
	return EXIT_USAGE;
}

int cli_option_error(const char *prog, char **argv, const struct option *longopts, int c)
{
	return option_error(prog, argv, longopts, c);
}

int cli_extra_arg(const char *prog, const char *arg)
{
	return cli_error(prog, "unexpected argument '%s' (see '%s --help')", arg, prog);
}

bool cli_once(struct cli_once *once, const char *prog, const char *name, int c)
{
	if (c < 0 || c >= CLI_ONCE_MAX)
		return true;
	unsigned char bit = (unsigned char)(1u << (c % 8));

	if (once->seen[c / 8] & bit) {
		cli_error(prog, "%s given twice (it takes one value; see '%s --help')",
			  name, prog);
		return false;
	}
	once->seen[c / 8] |= bit;
	return true;
}
