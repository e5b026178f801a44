// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The worker pool behind advise and tune (workers.h): one fork()ed process
 * per job, its row back through a pipe, read once the worker has exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analysis/workers.h"
#include "util/fd_io.h"
#include "util/signals.h"
#include "util/escape.h"

/* What a worker writes to its pipe: its status, then its row. */
struct msg {
	int status;
	double wall_s;			/* for stderr, never an output */
	char error[1024];
	unsigned char row[];
};
G_STATIC_ASSERT(sizeof(struct msg) + WORKERS_ROW_MAX <= PIPE_BUF);

/*
 * A worker dies with the command: on the terminal's ^C with it (the default
 * action, nothing of its own to clean), and when the parent is gone.
 * Signals a background job was started with ignored stay ignored, as in the
 * parent (util/signals.h).
 */
static void worker_signals(pid_t parent)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
		struct sigaction old;

		sigaddset(&set, sigs[i]);
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    (old.sa_handler != SIG_IGN || sigs[i] == SIGTERM))
			signal(sigs[i], SIG_DFL);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
}

struct slot {
	pid_t pid;		/* 0: free */
	int fd;			/* the read end of the worker's pipe */
	size_t idx;
};

static bool spawn(const struct workers_spec *s, size_t idx, struct slot *slot, GError **error)
{
	int p[2];
	pid_t parent = getpid();

	if (pipe(p) < 0) {
		g_set_error(error, s->domain, WORKERS_INPUT, "pipe: %s", g_strerror(errno));
		return false;
	}
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	/* nothing buffered may be written twice */
	fflush(NULL);
	/*
	 * Until the child has its own dispositions, a signal (the SIGTERM that
	 * stops it when another job failed) would run the parent's handler in
	 * it, which removes the parent's unfinished outputs: keep them blocked
	 * across the fork; worker_signals unblocks them.
	 */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid_t pid = fork();
	if (pid != 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		g_set_error(error, s->domain, WORKERS_INPUT, "fork: %s", g_strerror(errno));
		close(p[0]);
		close(p[1]);
		return false;
	}
	if (pid == 0) {
		size_t size = sizeof(struct msg) + s->row_size;

		close(p[0]);
		worker_signals(parent);
		/* the parent's outputs are its own; running out of memory is reported to it */
		signals_forked_worker(p[1]);

		struct msg *m = g_malloc0(size);
		int64_t t0 = g_get_monotonic_time();

		m->status = s->run(s->ctx, idx, m->row, m->error, sizeof(m->error));
		m->wall_s = (g_get_monotonic_time() - t0) / 1e6;
		_exit(fd_write_all(p[1], m, size) ? 0 : 1);
	}
	close(p[1]);
	slot->pid = pid;
	slot->fd = p[0];
	return true;
}

/* got bytes of the worker's pipe are in report: its own words, when it ran out of memory */
static void describe_death(char *buf, size_t size, int ws, const void *report, size_t got)
{
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == SIGNALS_EXIT_OOM && got)
		snprintf(buf, size, "its worker ran %.*s", (int)MIN(got, size), (const char *)report);
	else if (WIFSIGNALED(ws))
		snprintf(buf, size, "its worker was killed by signal %d (%s)", WTERMSIG(ws),
			 strsignal(WTERMSIG(ws)));
	else
		snprintf(buf, size, "its worker exited with status %d before it reported",
			 WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}

bool workers_run(const struct workers_spec *s, void *rows, GError **error)
{
	unsigned jobs = s->jobs ? s->jobs : 1;
	size_t size = sizeof(struct msg) + s->row_size;
	struct slot *slots = g_new0(struct slot, jobs);
	struct msg *m = g_malloc0(size);
	size_t next = 0, running = 0, done = 0, n = s->n;
	long failed = -1;		/* the first job (in order) that failed */
	int fail_status = 0;
	char fail_text[1024 + 64] = "";
	bool stop = false;		/* a failure: start no more, stop the others */
	int64_t t_start = g_get_monotonic_time();

	g_assert(s->row_size <= WORKERS_ROW_MAX);
	while (running || (next < n && !stop)) {
		for (unsigned j = 0; j < jobs && next < n && !stop; j++) {
			if (slots[j].pid)
				continue;
			if (!spawn(s, next, &slots[j], error)) {
				stop = true;
				fail_status = -1;
				for (unsigned k = 0; k < jobs; k++)
					if (slots[k].pid)
						kill(slots[k].pid, SIGTERM);
				break;
			}
			slots[j].idx = next++;
			running++;
		}
		if (!running)
			break;
		int ws;
		pid_t pid = waitpid(-1, &ws, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;	/* no child left: cannot happen while running > 0 */
		}
		struct slot *sl = NULL;
		for (unsigned j = 0; j < jobs; j++)
			if (slots[j].pid == pid)
				sl = &slots[j];
		if (!sl)
			continue;
		size_t got = fd_read_all(sl->fd, m, size);
		close(sl->fd);
		sl->pid = 0;
		running--;
		char *name = s->name(s->ctx, sl->idx);
		bool whole = got == size && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;

		if (whole && m->status == WORKERS_OK) {
			memcpy((char *)rows + sl->idx * s->row_size, m->row, s->row_size);
			done++;
			if (s->verbose) {
				/* the time left at the pace so far: the runs done and the wall time they took */
				double el = (g_get_monotonic_time() - t_start) / 1e6;
				double left = el / (double)done * (double)(n - done);

				reportf(s->prog, "%zu/%zu %s: %.1f s (%.0f s so far, ETA %.0f s)",
					done, n, name, m->wall_s, el, left);
			}
		} else if (!stop || (fail_status > 0 && (long)sl->idx < failed && whole)) {
			/* after a failure, the workers stopped on purpose are no news */
			char why[160];

			if (!whole)
				describe_death(why, sizeof(why), ws, m, got);
			m->error[sizeof(m->error) - 1] = '\0';
			snprintf(fail_text, sizeof(fail_text), "%s: %s", name, whole ? m->error : why);
			fail_status = whole ? m->status : WORKERS_INPUT;
			failed = (long)sl->idx;
			if (!stop)
				for (unsigned j = 0; j < jobs; j++)
					if (slots[j].pid)
						kill(slots[j].pid, SIGTERM);
			stop = true;
		}
		g_free(name);
	}
	g_free(slots);
	g_free(m);
	if (fail_status > 0)
		g_set_error(error, s->domain, fail_status, "%s", fail_text);
	return !stop;
}
