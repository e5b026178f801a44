// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include "cli.h"
int cmd_collide(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ksmsim: cmd_collide is not built yet\n");
	return 2;
}
