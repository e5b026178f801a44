// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim policies: the policy registry, one entry per design --policy takes. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "sim/ksm.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim policies\n\n"
		"List the designs 'ksmsim run --policy NAME[:KEY=VALUE,...]' can put in\n"
		"place of the kernel's: name, whether it decides with the --hash checksum,\n"
		"what it changes, and its keys with their defaults. The default, marked *,\n"
		"is mm/ksm.c as it is. sim/MODEL.md ('Policies') describes each rule and\n"
		"where its modelled cost comes from.\n");
}

int cmd_policies(int argc, char **argv)
{
	size_t n;
	const struct ksm_policy_row *rows = ksm_policy_all(&n);

	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			usage(stdout);
			return 0;
		}
		return cli_extra_arg("ksmsim policies", argv[1]);
	}
	for (size_t i = 0; i < n; i++) {
		printf("%-13s %c %-7s %s\n", rows[i].name, i ? ' ' : '*',
		       rows[i].uses_hash ? "--hash" : "no hash", rows[i].summary);
		if (rows[i].params[0])
			printf("%-24s keys: %s\n", "", rows[i].params);
	}
	return 0;
}
