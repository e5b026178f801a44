// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim hashes: the checksum registry, one line per checksum. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "hashes/hash.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim hashes\n\n"
		"List the page checksums the model can gate on: name, bits the\n"
		"value holds, and what it computes over one 4096-byte page. The\n"
		"default, marked *, is what KSM computes today. Where a checksum has\n"
		"several implementations, the one chosen for this CPU is shown.\n");
}

int cmd_hashes(int argc, char **argv)
{
	size_t n;
	const struct page_hash *h = hash_all(&n);

	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			usage(stdout);
			return 0;
		}
		return cli_extra_arg("ksmsim hashes", argv[1]);
	}
	int width = 8;	/* the names in one column, however long the longest */

	for (size_t i = 0; i < n; i++)
		width = MAX(width, (int)strlen(h[i].name));
	for (size_t i = 0; i < n; i++) {
		const char *impl = h[i].impl ? h[i].impl() : NULL;

		printf("%-*s %c %2u  %s%s%s%s\n", width, h[i].name,
		       strcmp(h[i].name, HASH_DEFAULT) ? ' ' : '*', h[i].bits,
		       h[i].summary, impl ? " [" : "", impl ? impl : "",
		       impl ? "]" : "");
	}
	return 0;
}
