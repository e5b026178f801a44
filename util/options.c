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
	/* getopt has moved past the word it complains about */
	/* the word as typed, escaped: a newline in it must not start a line */
	char *word = escape_line(optind > 0 ? argv[optind - 1] : "");
	int len = (int)strcspn(word, "=");

	if (c == ':') {
		if (strncmp(word, "--", 2) == 0)
			fprintf(stderr, "%s: %.*s needs a value", prog, len, word);
		else
			fprintf(stderr, "%s: %s needs a value", prog, option_name(longopts, optopt));
	} else if (optopt > 0 && optopt < 128 && strncmp(word, "--", 2) != 0) {
		if (g_ascii_isgraph(optopt))
			fprintf(stderr, "%s: unknown option '-%c'", prog, optopt);
		else
			fprintf(stderr, "%s: unknown option '-\\x%02x'", prog, optopt);
	} else if (optopt) {
		/* a long option given a value it does not take */
		fprintf(stderr, "%s: %.*s takes no value", prog, len, word);
	} else {
		fprintf(stderr, "%s: unknown option '%.*s'", prog, len, word);
	}
	fprintf(stderr, " (see '%s --help')\n", prog);
	g_free(word);
	return EXIT_USAGE;
}
