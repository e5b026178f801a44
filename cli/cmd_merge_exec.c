// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim merge-exec: run a program with prctl(PR_SET_MEMORY_MERGE, 1)
 * already set, so that KSM scans every anonymous private writable mapping
 * of an unmodified service (memcached, redis: they have no switch for
 * MADV_MERGEABLE). The flag is the mm's, kept across execve and inherited
 * by fork (Linux 6.6+), so setting it here and then exec'ing is enough.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "cli/cli.h"
#include "util/escape.h"

#define PROG "ksmsim merge-exec"
#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

/* Its own failures, as env(1) and nice(1) give them: kept apart from the program's status. */
#define EXIT_MERGE_FAILED 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

static void usage(FILE *f)
{
	fprintf(f,
"usage: ksmsim merge-exec [--] COMMAND [ARG...]\n"
"Runs COMMAND with prctl(PR_SET_MEMORY_MERGE, 1) set, so that KSM may merge\n"
"every anonymous private writable page of it and of every process it forks\n"
"(process-wide merge, Linux 6.4+; kept across exec since 6.6), as if the\n"
"program advised MADV_MERGEABLE on all its memory. Nothing else changes:\n"
"the same process (no fork), environment, descriptors and signals; COMMAND\n"
"is searched in PATH as execvp(3) does. KSM itself must still be on\n"
"(/sys/kernel/mm/ksm/run 1) for anything to merge; 'ksmsim verify' sets it.\n"
"\n"
"  ksmsim merge-exec -- memcached -u nobody -p 11311 -m 1024\n"
"\n"
"  -h, --help   this text\n"
"\n"
"Exit status: COMMAND's own; 125 when the kernel refuses the prctl (EINVAL:\n"
"no process-wide KSM in this kernel; EPERM: not allowed here), 126 when\n"
"COMMAND is found but cannot be run, 127 when it is not found, 2 for bad\n"
"usage (no COMMAND).\n");
}

int cmd_merge_exec(int argc, char **argv)
{
	int first = 1;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--"))
		first = 2;
	else if (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		char *m = g_strdup_printf("unknown option '%s' (put '--' before a COMMAND that"
					  " begins with '-')", argv[1]);

		cli_error(PROG, "%s", m);
		g_free(m);
		return EXIT_USAGE;
	}
	if (first >= argc) {
		cli_error(PROG, "no COMMAND to run (ksmsim merge-exec -- COMMAND [ARG...])");
		return EXIT_USAGE;
	}
	if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0) {
		int e = errno;
		char *m = g_strdup_printf("prctl(PR_SET_MEMORY_MERGE): %s (%s): %s", strerrorname_np(e)
					  ? strerrorname_np(e) : "?", g_strerror(e),
					  e == EINVAL ? "this kernel has no process-wide KSM"
					  " (Linux 6.4+ with CONFIG_KSM)" : e == EPERM ?
					  "not permitted here (a seccomp filter or a security"
					  " module refuses it)" : "the kernel refused it");

		cli_error(PROG, "%s", m);
		g_free(m);
		return EXIT_MERGE_FAILED;
	}
	/* what execvp writes is the program's: nothing of ours may be left buffered */
	fflush(stdout);
	execvp(argv[first], argv + first);
	int e = errno;
	char *m = g_strdup_printf("%s: %s", argv[first], g_strerror(e));

	cli_error(PROG, "%s", m);
	g_free(m);
	return e == ENOENT || e == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
