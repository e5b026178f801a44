// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim: the command table and dispatch. Each subcommand lives in its own file. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "util/signals.h"

#ifndef KSMSIM_VERSION
#define KSMSIM_VERSION "unknown"
#endif

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "run", cmd_run, "replay a trace through the KSM model; marks, time series, summary" },
	{ "live", cmd_live, "replay a trace on this machine's real KSM (root)" },
	{ "diff", cmd_diff, "compare two marks CSV files counter by counter" },
	{ "trace", cmd_trace, "convert, cat or describe trace files (text, .gz, binary)" },
	{ "gen", cmd_gen, "generate a synthetic workload trace" },
	{ "record", cmd_record, "capture a running program's page writes as a trace (root)" },
	{ "collide", cmd_collide, "checksum collision and false-positive study" },
	{ "advise", cmd_advise, "every checksum and policy on one trace: Pareto frontier, the pick" },
	{ "hashes", cmd_hashes, "list the page checksums --hash accepts" },
	{ "policies", cmd_policies, "list the designs --policy accepts in place of the kernel's" },
	{ "bench", cmd_bench, "benchmarks: trace parsing, checksum costs, the model" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim COMMAND [OPTIONS]\n"
		"A deterministic simulator of the Linux KSM scanner (mm/ksm.c, Linux 6.18).\n\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'ksmsim COMMAND --help' describes each command.\n"
		"Exit status: 0 success, 1 differences found or check failed, 2 bad usage,\n"
		"bad input or out of memory, 130/143 interrupted.\n");
}

int main(int argc, char **argv)
{
	signals_catch_glib_fatal();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ksmsim %s\n", KSMSIM_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ksmsim: unknown command '%s' (see ksmsim --help)\n", argv[1]);
	return EXIT_USAGE;
}
