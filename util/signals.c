// SPDX-License-Identifier: GPL-2.0-or-later
/* One handling of SIGINT/SIGTERM for every command (signals.h). */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <glib.h>
#include "util/exit_status.h"
#include "util/signals.h"

/*
 * Paths to remove live in a fixed table so that the handler can remove them
 * without allocating or locking.
 */
#define MAX_TRACKED 32
#define PATH_CAP 4096
static char tracked[MAX_TRACKED][PATH_CAP];
static volatile sig_atomic_t tracked_used[MAX_TRACKED];
/* Two buffers, so that the handler never sees one half-written. */
static char progress[2][512];
static volatile sig_atomic_t progress_cur;
static volatile sig_atomic_t line_open;
static volatile sig_atomic_t caught;

/* Every terminating signal that can be caught and that a user or a pipe sends. */
static const int exit_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

void signals_hold(bool hold, sigset_t *old)
{
	if (hold) {
		sigset_t set;

		sigemptyset(&set);
		for (size_t i = 0; i < G_N_ELEMENTS(exit_signals); i++)
			sigaddset(&set, exit_signals[i]);
		sigprocmask(SIG_BLOCK, &set, old);
	} else {
		sigprocmask(SIG_SETMASK, old, NULL);
	}
}

int signals_track(const char *path)
{
	if (strlen(path) >= PATH_CAP)
		return -1;
	for (int i = 0; i < MAX_TRACKED; i++) {
		if (!tracked_used[i]) {
			strcpy(tracked[i], path);
			/* the name is whole before the handler can see the slot in use */
			atomic_signal_fence(memory_order_seq_cst);
			tracked_used[i] = 1;
			return i;
		}
	}
	return -1;
}

void signals_untrack(int handle)
{
	if (handle >= 0 && handle < MAX_TRACKED)
		tracked_used[handle] = 0;
}

void signals_set_progress(const char *line)
{
	int next = !progress_cur;
	g_strlcpy(progress[next], line ? line : "", sizeof(progress[next]));
	progress_cur = next;
}

void signals_set_line_open(bool open)
{
	line_open = open;
}

int signals_caught(void)
{
	return caught;
}

int signals_exit_status(int rc)
{
	return caught ? 128 + caught : rc;
}

static void put(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void put_count(int v)
{
	char num[16];
	int n = 0;

	do
		num[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		put(&num[--n], 1);
}

static int remove_tracked(void)
{
	int removed = 0;

	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked_used[i] && unlink(tracked[i]) == 0) {
			tracked_used[i] = 0;
			removed++;
		}
	return removed;
}

static void put_removed(int removed)
{
	if (removed) {
		static const char one[] = " unfinished output file removed";
		static const char many[] = " unfinished output files removed";
		put("; ", 2);
		put_count(removed);
		if (removed == 1)
			put(one, sizeof(one) - 1);
		else
			put(many, sizeof(many) - 1);
	}
}

/* Async-signal-safe: unlink, write and _exit only. */
static void on_exit_signal(int sig)
{
	int removed = remove_tracked();

	/* The reader of a pipe went away (`| head`): nobody to tell, as for any filter. */
	if (sig == SIGPIPE)
		_exit(128 + sig);
	if (line_open)
		put("\n", 1);
	static const char msg[] = "ksmsim: interrupted";
	put(msg, sizeof(msg) - 1);
	const char *line = progress[progress_cur];
	if (line[0]) {
		put("; ", 2);
		put(line, strnlen(line, sizeof(progress[0])));
	}
	put_removed(removed);
	put("\n", 1);
	_exit(128 + sig);
}

static const char *(*oom_undo)(void);
static int worker_report_fd = -1;

void signals_forked_worker(int report_fd)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		tracked_used[i] = 0;
	progress[0][0] = progress[1][0] = '\0';
	line_open = 0;
	oom_undo = NULL;
	worker_report_fd = report_fd;
}

void signals_on_out_of_memory(const char *(*undo)(void))
{
	oom_undo = undo;
}

/* Allocates nothing: the heap is what ran out. */
void signals_out_of_memory(const char *what)
{
	sigset_t old;
	const char *(*undo)(void) = oom_undo;
	const char *undone = NULL;

	signals_hold(true, &old);
	if (worker_report_fd >= 0) {
		static const char head[] = "out of memory: ";
		struct iovec v[2] = { { (void *)head, sizeof(head) - 1 },
				      { (void *)what, strlen(what) } };

		(void)!writev(worker_report_fd, v, 2);
		_exit(SIGNALS_EXIT_OOM);
	}
	oom_undo = NULL;	/* once, should the undo itself run out */
	int removed = remove_tracked();
	if (undo)
		undone = undo();
	if (line_open)
		put("\n", 1);
	static const char msg[] = "ksmsim: out of memory: ";
	put(msg, sizeof(msg) - 1);
	put(what, strlen(what));
	put_removed(removed);
	if (undone) {
		put("; ", 2);
		put(undone, strlen(undone));
	}
	put("\n", 1);
	_exit(EXIT_USAGE);
}

static void on_glib_fatal(const gchar *domain, GLogLevelFlags level, const gchar *message,
			  gpointer data)
{
	/* gmem.c's words when g_malloc and its kin fail */
	const char *oom = message ? strstr(message, "failed to allocate") : NULL;
	if (oom)
		signals_out_of_memory(oom);
	remove_tracked();
	g_log_default_handler(domain, level, message, data);
}

void signals_catch_glib_fatal(void)
{
	g_log_set_handler("GLib", G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
			  on_glib_fatal, NULL);
}

static void on_defer_signal(int sig)
{
	caught = sig;
}

void signals_install(enum signals_mode mode)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (mode == SIGNALS_DEFER) {
		/* No SA_RESTART: sleeps and pipe reads must return so the command can clean up. */
		sa.sa_handler = on_defer_signal;
		/*
		 * SIGPIPE too: a reader of stdout or stderr that goes away
		 * (`| head`) must not end record or calibrate before they put
		 * things back; the write fails with EPIPE and the command ends
		 * as for the others. live ignores it after this (live.h).
		 */
		for (size_t i = 0; i < G_N_ELEMENTS(exit_signals); i++)
			sigaction(exit_signals[i], &sa, NULL);
		return;
	}
	sa.sa_handler = on_exit_signal;
	/* one signal at a time: the second waits for the first's _exit */
	for (size_t i = 0; i < G_N_ELEMENTS(exit_signals); i++)
		sigaddset(&sa.sa_mask, exit_signals[i]);
	for (size_t i = 0; i < G_N_ELEMENTS(exit_signals); i++) {
		int sig = exit_signals[i];

		/*
		 * A signal ignored on entry stays ignored, as whoever started us
		 * meant it: a script's background job and Ctrl-C, nohup and SIGHUP.
		 */
		if (sig != SIGTERM && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sig, &sa, NULL);
	}
}
