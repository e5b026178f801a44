// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A recording whose heap runs out: follows a program (sleep, in a process
 * group of its own, as `ksmsim record` starts it) with its trace open at
 * argv[1], then asks GLib for more memory than any machine has. Prints the
 * program's pid first; test_oom.sh checks what is left behind. Any return
 * means the allocation did not end the process.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>
#include <glib.h>
#include "traces/writer.h"
#include "util/signals.h"
#include "workloads/record/record.h"

int main(int argc, char **argv)
{
	GError *error = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: oom_recording TRACE\n");
		return 1;
	}
	signals_catch_glib_fatal();
	signals_install(SIGNALS_DEFER);
	trace_writer *w = trace_writer_open_version(argv[1], trace_format_from_path(argv[1]), 3,
						    &error);
	if (!w) {
		fprintf(stderr, "oom_recording: %s\n", error->message);
		return 1;
	}
	struct recorder *rc = recorder_new(w, RECORD_FIND_COMPARE, RECORD_SCOPE_ALL, NULL);
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		setpgid(0, 0);
		execlp("sleep", "sleep", "300", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	/* until its exec closes the pipe, the child would only note a SIGTERM */
	close(ready[1]);
	char c;
	while (read(ready[0], &c, 1) < 0)
		;
	close(ready[0]);
	recorder_follow(rc, pid);
	printf("%d\n", (int)pid);
	fflush(stdout);
	volatile gsize huge = G_MAXSIZE / 2;
	void *p = g_malloc(huge);
	fprintf(stderr, "oom_recording: g_malloc(%zu) returned %p\n", (size_t)huge, p);
	return 1;
}
