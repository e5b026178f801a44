// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "atomic_file.h"

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
static char progress[512];

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
	int fd = g_mkstemp(f->tmp);
	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: cannot create: %s", path, g_strerror(errno));
		goto fail;
	}
	f->stream = fdopen(fd, "w");
	if (!f->stream) {
		close(fd);
		unlink(f->tmp);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %s", path,
			    g_strerror(errno));
		goto fail;
	}
	for (int i = 0; i < MAX_OPEN; i++) {
		if (!pending_used[i] && strlen(f->tmp) < PATH_CAP) {
			strcpy(pending[i], f->tmp);
			pending_used[i] = 1;
			f->slot = i;
			break;
		}
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
	if (f->slot >= 0)
		pending_used[f->slot] = 0;
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
	/* Not atomic with respect to the handler; a torn line is acceptable. */
	g_strlcpy(progress, line ? line : "", sizeof(progress));
}

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_OPEN; i++)
		if (pending_used[i])
			unlink(pending[i]);
	static const char msg[] = "ksmsim: interrupted";
	ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	if (progress[0]) {
		r = write(STDERR_FILENO, "; ", 2);
		r = write(STDERR_FILENO, progress, strnlen(progress, sizeof(progress)));
	}
	r = write(STDERR_FILENO, "\n", 1);
	(void)r;
	_exit(128 + sig);
}

void atomic_file_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
