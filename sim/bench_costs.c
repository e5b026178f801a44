// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include "cli.h"
int bench_costs(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ksmsim: bench_costs is not built yet\n");
	return 2;
}
