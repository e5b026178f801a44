// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include "cli.h"
int cmd_run(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ksmsim run: not built yet\n");
	return 2;
}
