// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/atomic_file.h"

struct atomic_file {
	FILE *stream;
	char *path;
	char *tmp;		/* NULL for standard output */
	int slot;
};

/*
 * Temporary names live in a fixed table so that the signal handler can
 * remove them without allocating or locking.
 */
#define MAX_OPEN 32
#define PATH_CAP 4096
static char pending[MAX_OPEN][PATH_CAP];
static volatile sig_atomic_t pending_used[MAX_OPEN];
/* Two buffers, so that the handler never sees one half-written. */
static char progress[2][512];
static volatile sig_atomic_t progress_cur;
static volatile sig_atomic_t line_open;

/* Opening and registering a temporary name happen with the signals held. */
void atomic_file_hold_signals(bool hold, sigset_t *old)
{
	if (hold) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, old);
	} else {
		sigprocmask(SIG_SETMASK, old, NULL);
	}
}

int atomic_file_track(const char *path)
{
	if (strlen(path) >= PATH_CAP)
		return -1;
	for (int i = 0; i < MAX_OPEN; i++) {
		if (!pending_used[i]) {
			strcpy(pending[i], path);
			/* the name is whole before the handler can see the slot in use */
			atomic_signal_fence(memory_order_seq_cst);
			pending_used[i] = 1;
			return i;
		}
	}
	return -1;
}

void atomic_file_untrack(int handle)
{
	if (handle >= 0 && handle < MAX_OPEN)
		pending_used[handle] = 0;
}

atomic_file *atomic_file_open(const char *path, GError **error)
{
	atomic_file *f = g_new0(atomic_file, 1);
	f->path = g_strdup(path);
	f->slot = -1;
	if (strcmp(path, "-") == 0) {
		f->stream = stdout;
		return f;
	}
	f->tmp = g_strdup_printf("%s.tmp.XXXXXX", path);
	sigset_t old;
	atomic_file_hold_signals(true, &old);
	int fd = g_mkstemp(f->tmp);
	if (fd < 0) {
		int err = errno;
		atomic_file_hold_signals(false, &old);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "%s: cannot create: %s", path, g_strerror(err));
		goto fail;
	}
	f->slot = atomic_file_track(f->tmp);
	atomic_file_hold_signals(false, &old);
	f->stream = fdopen(fd, "w");
	if (!f->stream) {
		int err = errno;
		close(fd);
		unlink(f->tmp);
		atomic_file_untrack(f->slot);
		f->slot = -1;
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %s", path,
			    g_strerror(err));
		goto fail;
	}
	return f;
fail:
	g_free(f->tmp);
	g_free(f->path);
	g_free(f);
	return NULL;
}

FILE *atomic_file_stream(atomic_file *f)
{
	return f->stream;
}

const char *atomic_file_path(const atomic_file *f)
{
	return f->path;
}

static void release(atomic_file *f)
{
	atomic_file_untrack(f->slot);
	g_free(f->tmp);
	g_free(f->path);
	g_free(f);
}

bool atomic_file_commit(atomic_file *f, GError **error)
{
	bool ok = true;
	if (!f->tmp) {
		if (fflush(f->stream) != 0) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO,
				    "standard output: %s", g_strerror(errno));
			ok = false;
		}
		release(f);
		return ok;
	}
	if (ferror(f->stream) | (fclose(f->stream) != 0)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write failed: %s",
			    f->path, g_strerror(errno));
		unlink(f->tmp);
		ok = false;
	} else if (rename(f->tmp, f->path) != 0) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: cannot rename: %s",
			    f->path, g_strerror(errno));
		unlink(f->tmp);
		ok = false;
	}
	release(f);
	return ok;
}

void atomic_file_abort(atomic_file *f)
{
	if (!f)
		return;
	if (f->tmp) {
		fclose(f->stream);
		unlink(f->tmp);
	} else {
		fflush(f->stream);
	}
	release(f);
}

void atomic_file_set_progress(const char *line)
{
	int next = !progress_cur;
	g_strlcpy(progress[next], line ? line : "", sizeof(progress[next]));
	progress_cur = next;
}

void atomic_file_set_line_open(bool open)
{
	line_open = open;
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

/* Async-signal-safe: unlink, write and _exit only. */
static void on_signal(int sig)
{
	int saved = errno, removed = 0;
	for (int i = 0; i < MAX_OPEN; i++)
		if (pending_used[i] && unlink(pending[i]) == 0)
			removed++;
	if (line_open)
		put("\n", 1);
	static const char msg[] = "ksmsim: interrupted";
	put(msg, sizeof(msg) - 1);
	const char *line = progress[progress_cur];
	if (line[0]) {
		put("; ", 2);
		put(line, strnlen(line, sizeof(progress[0])));
	}
	if (removed) {
		char num[16];
		int n = 0;
		for (int v = removed; v; v /= 10)
			num[n++] = (char)('0' + v % 10);
		put("; ", 2);
		while (n)
			put(&num[--n], 1);
		static const char one[] = " unfinished output file removed";
		static const char many[] = " unfinished output files removed";
		if (removed == 1)
			put(one, sizeof(one) - 1);
		else
			put(many, sizeof(many) - 1);
	}
	put("\n", 1);
	errno = saved;
	_exit(128 + sig);
}

void atomic_file_install_signals(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* one signal at a time: the second waits for the first's _exit */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	/*
	 * A SIGINT ignored on entry stays ignored, as the shell meant it (a
	 * background job of a script must not die of the terminal's Ctrl-C).
	 */
	if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
		sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
