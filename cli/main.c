// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim: the command table and dispatch. Each subcommand lives in its own file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/version.h"
#include "hashes/hash.h"
#include "util/escape.h"
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
	{ "record", cmd_record, "capture a program's page writes as a trace, or attach to running ones (root)" },
	{ "collide", cmd_collide, "checksum collision and false-positive study" },
	{ "advise", cmd_advise, "every checksum and policy on one trace: Pareto frontier, the pick" },
	{ "tune", cmd_tune, "a trace under a grid of knob settings: saving, CPU, the setting to use" },
	{ "hashes", cmd_hashes, "list the page checksums --hash accepts" },
	{ "policies", cmd_policies, "list the designs --policy accepts in place of the kernel's" },
	{ "verify", cmd_verify, "a setting on this host's KSM for running processes, beside the model (root)" },
	{ "merge-exec", cmd_merge_exec, "run a program with process-wide KSM merging set (prctl)" },
	{ "bench", cmd_bench, "benchmarks: trace parsing, checksum costs, the model; calibrate on the live ksmd" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim COMMAND [OPTIONS]\n"
		"A deterministic simulator of the Linux KSM scanner (mm/ksm.c, Linux 6.18).\n\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'ksmsim COMMAND --help' (or 'ksmsim help COMMAND') describes each command;\n"
		"'ksmsim --version' names the version and the commit it was built from.\n"
		"Exit status: 0 success, 1 differences found or check failed, 2 bad usage,\n"
		"bad input or out of memory, 130/143 interrupted.\n");
}

/*
 * A closed standard stream would be the next file opened: the summary
 * would land in an output file, or an output in the terminal's place. Give
 * each one that is closed /dev/null opened the wrong way round, so that
 * writing to a closed standard output fails as it should.
 */
static void hold_standard_fds(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		int got = open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
		if (got >= 0 && got != fd) {
			dup2(got, fd);
			close(got);
		}
	}
}

/*
 * What a command printed on standard output must have reached it: a full
 * disk or a closed stream is an error (one line, exit 2), not a lost summary.
 */
static int check_stdout(const char *command, int status)	/* command: NULL for ksmsim's own */
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	/* a failed command said why in its one line: a second would be about the same loss */
	if (status >= EXIT_USAGE)
		return status;
	int err = errno ? errno : EIO;
	char *prog = g_strconcat("ksmsim", command ? " " : "", command, NULL);

	cli_error(prog, "standard output: %s", g_strerror(err));
	g_free(prog);
	return status ? status : EXIT_USAGE;
}

/*
 * The keyed checksums' key (xxhash-seeded, siphash: hashes/siphash.c) comes
 * from KSMSIM_HASH_KEY, default 1, so runs reproduce; a value that is not a
 * number would silently become 0, a key the user never chose: refused.
 */
static bool hash_key_from_env(void)
{
	const char *e = getenv("KSMSIM_HASH_KEY");
	guint64 k;

	if (!e || !*e)
		return true;
	if (!g_ascii_string_to_unsigned(e, 10, 0, G_MAXUINT64, &k, NULL)) {
		cli_error("ksmsim", "KSMSIM_HASH_KEY wants a decimal number, not '%s'", e);
		return false;
	}
	hash_set_key(k);
	return true;
}

int main(int argc, char **argv)
{
	hold_standard_fds();
	signals_catch_glib_fatal();
	if (!hash_key_from_env())
		return EXIT_USAGE;
	if (argc < 2)
		return cli_error("ksmsim", "a COMMAND is required (see 'ksmsim --help')");
	/* "ksmsim help COMMAND" is "ksmsim COMMAND --help" */
	if (strcmp(argv[1], "help") == 0 && argc == 3) {
		char *help_argv[] = { argv[2], "--help", NULL };

		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (strcmp(argv[2], commands[i].name) == 0)
				return check_stdout(commands[i].name, commands[i].fn(2, help_argv));
		return cli_error("ksmsim", "unknown command '%s' (see ksmsim --help)", argv[2]);
	}
	if (argc > 2 && strcmp(argv[1], "help") == 0)
		return cli_error("ksmsim", "help takes one COMMAND, not '%s' too", argv[3]);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return check_stdout(NULL, 0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ksmsim %s (commit %s)\n", KSMSIM_VERSION, KSMSIM_COMMIT);
		return check_stdout(NULL, 0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return check_stdout(commands[i].name, commands[i].fn(argc - 1, argv + 1));
	cli_error("ksmsim", "unknown command '%s' (see ksmsim --help)", argv[1]);
	return EXIT_USAGE;
}
