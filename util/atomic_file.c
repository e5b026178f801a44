// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/atomic_file.h"
#include "util/signals.h"

struct atomic_file {
	FILE *stream;
	char *path;
	char *tmp;		/* NULL for standard output */
	int slot;
};

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
	signals_hold(true, &old);
	int fd = g_mkstemp(f->tmp);
	if (fd < 0) {
		int err = errno;
		signals_hold(false, &old);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "%s: cannot create: %s", path, g_strerror(err));
		goto fail;
	}
	f->slot = signals_track(f->tmp);
	signals_hold(false, &old);
	f->stream = fdopen(fd, "w");
	if (!f->stream) {
		int err = errno;
		close(fd);
		unlink(f->tmp);
		signals_untrack(f->slot);
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

static void release(atomic_file *f)
{
	signals_untrack(f->slot);
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
