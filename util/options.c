// SPDX-License-Identifier: GPL-2.0-or-later
/* Option messages that name the option (options.h). */
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "util/escape.h"
#include "util/exit_status.h"
#include "util/options.h"

const char *option_name(const struct option *longopts, int c)
{
	static char buf[80];

	for (const struct option *o = longopts; o && o->name; o++)
		if (!o->flag && o->val == c) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	snprintf(buf, sizeof(buf), "-%c", c > 0 && c < 128 ? c : '?');
	return buf;
}

int option_error(const char *prog, char **argv, const struct option *longopts, int c)
{
	/* getopt has moved past the word it complains about; reportf escapes it */
	const char *word = optind > 0 ? argv[optind - 1] : "";
	int len = (int)strcspn(word, "=");

	if (c == ':') {
		if (strncmp(word, "--", 2) == 0)
			reportf(prog, "%.*s needs a value (see '%s --help')", len, word, prog);
		else
			reportf(prog, "%s needs a value (see '%s --help')", option_name(longopts, optopt),
				prog);
	} else if (optopt && strncmp(word, "--", 2) != 0) {
		/* a letter of a cluster (-xq): the byte, escaped if it is no character */
		reportf(prog, "unknown option '-%c' (see '%s --help')", (char)optopt, prog);
	} else if (optopt) {
		/* a long option given a value it does not take */
		reportf(prog, "%.*s takes no value (see '%s --help')", len, word, prog);
	} else {
		reportf(prog, "unknown option '%.*s' (see '%s --help')", len, word, prog);
	}
	return EXIT_USAGE;
}
