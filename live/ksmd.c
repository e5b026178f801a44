// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd's state (ksmd.h). After a batch, ksmd drops ksm_thread_mutex, then
 * tests run and, if it is 1, reads sleep_millisecs and sleeps that long
 * (waking early only if the knob changes from the value it read). A replay
 * that stops ksmd (run 0, which waits for the mutex), writes a new
 * sleep_millisecs and starts it again (run 1) can do all three while ksmd
 * sits preempted between the mutex and that test, as it may on a loaded
 * machine: ksmd would then see run 1 and the new sleep, and sleep it in full
 * where the kernel, with ksmd asleep, scans at once. Waiting for ksmd to be
 * asleep before the knob is written closes that window.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "live/ksmd.h"
#include "live/live.h"
#include "util/signals.h"

#define FALLBACK_NS 100000000	/* 100 ms, where ksmd cannot be seen */
#define POLL_NS 100000		/* 100 us */

/* The stat fields after the comm: "S 2 ..." for a kernel thread asleep. */
static bool read_stat(long pid, char *state, long *ppid, char comm[32])
{
	char path[64], buf[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');

	if (!open || !close || close < open || close - open - 1 >= 32)
		return false;
	memcpy(comm, open + 1, close - open - 1);
	comm[close - open - 1] = '\0';
	return sscanf(close + 1, " %c %ld", state, ppid) == 2;
}

/* ksmd: a thread named ksmd whose parent is kthreadd (pid 2); 0 if none. */
static long ksmd_pid(void)
{
	static long cached = -1;
	DIR *d;
	struct dirent *e;

	if (cached >= 0)
		return cached;
	cached = 0;
	d = opendir("/proc");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end, comm[32], state;
		long pid = strtol(e->d_name, &end, 10), ppid;

		if (*end || end == e->d_name)
			continue;
		if (read_stat(pid, &state, &ppid, comm) && ppid == 2 && !strcmp(comm, "ksmd")) {
			cached = pid;
			break;
		}
	}
	closedir(d);
	return cached;
}

long ksmd_find_pid(void)
{
	return ksmd_pid();
}

static bool nap(long ns, GError **error)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if (signals_caught()) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted");
		return false;
	}
	return true;
}

bool live_ksmd_cpu_ns(uint64_t *ns, bool *seen, GError **error)
{
	long pid = ksmd_pid();
	char path[64];
	unsigned long long run_ns;
	FILE *f;
	int n;

	*ns = 0;
	*seen = pid != 0;
	if (!pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/schedstat", pid);
	f = fopen(path, "re");
	if (!f) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: ksmd's CPU time cannot be read: %s", path, g_strerror(errno));
		return false;
	}
	/* "run_ns wait_ns timeslices": the first is the time ksmd ran on a CPU */
	n = fscanf(f, "%llu", &run_ns);
	fclose(f);
	if (n != 1) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s: no run time in ksmd's schedstat", path);
		return false;
	}
	*ns = run_ns;
	return true;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool ksmd_wait_asleep(double timeout_s, GError **error)
{
	long pid = ksmd_pid();
	double deadline = now_s() + timeout_s;

	if (!pid)
		return nap(FALLBACK_NS, error);
	for (;;) {
		char state, comm[32];
		long ppid;

		if (!read_stat(pid, &state, &ppid, comm)) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
				    "/proc/%ld/stat: ksmd's state cannot be read", pid);
			return false;
		}
		if (state == 'S' || state == 'I')
			return true;
		if (now_s() >= deadline) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "ksmd (pid %ld) was still in state %c %.0f s after run was "
				    "written 0", pid, state, timeout_s);
			return false;
		}
		if (!nap(POLL_NS, error))
			return false;
	}
}
