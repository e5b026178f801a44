// SPDX-License-Identifier: GPL-2.0-or-later
/* Outputs that appear whole or not at all (atomic_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/atomic_file.h"
#include "util/signals.h"

struct atomic_file {
	FILE *stream;
	struct atomic_target t;
};

static bool fail_errno(GError **error, const char *path, const char *what, int err)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s: %s", path, what,
		    g_strerror(err));
	return false;
}

static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

static bool open_in_place(struct atomic_target *t, GError **error)
{
	/* O_NONBLOCK would make a FIFO without a reader fail; the shell's `>` waits too. */
	t->fd = open(t->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (t->fd < 0)
		return fail_errno(error, t->path, "cannot open", errno);
	return true;
}

static bool open_temporary(struct atomic_target *t, const struct stat *old, GError **error)
{
	sigset_t held;
	int err;

	t->tmp = g_strdup_printf("%s.tmp.XXXXXX", t->final);
	signals_hold(true, &held);
	t->fd = g_mkstemp_full(t->tmp, O_WRONLY | O_CLOEXEC, 0600);
	err = errno;
	if (t->fd >= 0)
		t->track = signals_track(t->tmp);
	signals_hold(false, &held);
	if (t->fd < 0) {
		g_clear_pointer(&t->tmp, g_free);
		return fail_errno(error, t->path, "cannot create", err);
	}
	/* mkstemp's 0600 would survive the rename. */
	if (old) {
		/* Only root can give the file back to another owner; others keep theirs. */
		if ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
		    fchown(t->fd, old->st_uid, old->st_gid) != 0 && errno != EPERM) {
			err = errno;
			atomic_target_abort(t);
			return fail_errno(error, t->path, "cannot keep the owner", err);
		}
		err = fchmod(t->fd, old->st_mode & 07777) ? errno : 0;
	} else {
		err = fchmod(t->fd, new_file_mode()) ? errno : 0;
	}
	if (err) {
		atomic_target_abort(t);
		return fail_errno(error, t->path, "cannot set the mode", err);
	}
	return true;
}

bool atomic_target_open(struct atomic_target *t, const char *path, GError **error)
{
	struct stat st, lst;

	*t = (struct atomic_target){ .path = g_strdup(path), .fd = -1, .track = -1 };
	if (strcmp(path, "-") == 0) {
		t->fd = dup(STDOUT_FILENO);
		if (t->fd < 0)
			goto fail_errno_stdout;
		/*
		 * A closed standard output is /dev/null opened for reading (cli/main.c):
		 * say EBADF, the truth, before fdopen's EINVAL or gzdopen's ENOMEM does.
		 */
		int fl = fcntl(t->fd, F_GETFL);
		if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY) {
			close(t->fd);
			t->fd = -1;
			errno = EBADF;
			goto fail_errno_stdout;
		}
		return true;
	}
	if (!*path) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "empty output path");
		goto fail;
	}
	if (lstat(path, &lst) != 0) {
		if (errno != ENOENT) {
			fail_errno(error, path, "cannot write", errno);
			goto fail;
		}
		t->final = g_strdup(path);
		if (!open_temporary(t, NULL, error))
			goto fail;
		return true;
	}
	if (stat(path, &st) != 0) {
		fail_errno(error, path, S_ISLNK(lst.st_mode) ? "symlink to a missing file" :
			   "cannot write", errno);
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s: is a directory", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		if (!open_in_place(t, error))
			goto fail;
		return true;
	}
	t->final = S_ISLNK(lst.st_mode) ? realpath(path, NULL) : g_strdup(path);
	if (!t->final) {
		fail_errno(error, path, "cannot resolve", errno);
		goto fail;
	}
	if (S_ISLNK(lst.st_mode)) {
		/* realpath's buffer is malloc's; keep every string g_free-able */
		char *resolved = t->final;

		t->final = g_strdup(resolved);
		free(resolved);
	}
	if (!open_temporary(t, &st, error))
		goto fail;
	return true;

fail_errno_stdout:
	fail_errno(error, "standard output", "cannot write", errno);
fail:
	g_clear_pointer(&t->path, g_free);
	g_clear_pointer(&t->final, g_free);
	return false;
}

static void target_free(struct atomic_target *t)
{
	sigset_t held;

	signals_hold(true, &held);
	signals_untrack(t->track);
	signals_hold(false, &held);
	t->track = -1;
	g_clear_pointer(&t->tmp, g_free);
	g_clear_pointer(&t->final, g_free);
	g_clear_pointer(&t->path, g_free);
}

bool atomic_target_commit(struct atomic_target *t, GError **error)
{
	bool ok = true;

	if (t->tmp && rename(t->tmp, t->final) != 0) {
		ok = fail_errno(error, t->path, "cannot rename into place", errno);
		unlink(t->tmp);
	}
	target_free(t);
	return ok;
}

void atomic_target_abort(struct atomic_target *t)
{
	if (t->tmp)
		unlink(t->tmp);
	target_free(t);
}

atomic_file *atomic_file_open(const char *path, GError **error)
{
	atomic_file *f = g_new0(atomic_file, 1);

	/* Standard output stays the one stdio stream, so that the order of what the command prints holds. */
	if (strcmp(path, "-") == 0) {
		f->stream = stdout;
		f->t = (struct atomic_target){ .path = g_strdup(path), .fd = -1, .track = -1 };
		return f;
	}
	if (!atomic_target_open(&f->t, path, error)) {
		g_free(f);
		return NULL;
	}
	f->stream = fdopen(f->t.fd, "w");
	if (!f->stream) {
		fail_errno(error, path, "cannot write", errno);
		close(f->t.fd);
		atomic_target_abort(&f->t);
		g_free(f);
		return NULL;
	}
	return f;
}

FILE *atomic_file_stream(atomic_file *f)
{
	return f->stream;
}

bool atomic_file_commit(atomic_file *f, GError **error)
{
	bool ok = true;

	if (f->stream == stdout) {
		if (fflush(stdout) != 0)
			ok = fail_errno(error, "standard output", "write failed", errno);
		target_free(&f->t);
		g_free(f);
		return ok;
	}
	if (ferror(f->stream) | (fclose(f->stream) != 0)) {
		ok = fail_errno(error, f->t.path, "write failed", errno ? errno : EIO);
		atomic_target_abort(&f->t);
	} else {
		ok = atomic_target_commit(&f->t, error);
	}
	g_free(f);
	return ok;
}

bool atomic_file_commit_all(atomic_file **const files[], size_t n, GError **error)
{
	sigset_t held;
	bool ok = true;

	signals_hold(true, &held);
	for (size_t i = 0; i < n; i++) {
		atomic_file *f = *files[i];

		*files[i] = NULL;
		if (f && ok)
			ok = atomic_file_commit(f, error);
		else if (f)
			atomic_file_abort(f);
	}
	signals_hold(false, &held);
	return ok;
}

void atomic_file_abort(atomic_file *f)
{
	if (!f)
		return;
	if (f->stream == stdout)
		fflush(stdout);
	else
		fclose(f->stream);
	atomic_target_abort(&f->t);
	g_free(f);
}
