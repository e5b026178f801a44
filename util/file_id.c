// SPDX-License-Identifier: GPL-2.0-or-later
/* Clashing inputs and outputs, found before any work (file_id.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file_id.h"

struct file_key {
	bool dash;		/* "-": standard input or output */
	bool exists;
	bool stream;		/* a device or FIFO: may be named twice */
	dev_t dev;
	ino_t ino;
	char *name;		/* resolved, for names not created yet */
};

static void key_of(const char *path, bool output, struct file_key *k)
{
	struct stat st = { 0 };

	*k = (struct file_key){ 0 };
	if (strcmp(path, "-") == 0) {
		/*
		 * The stream is the file it was redirected from or to: writing
		 * --csv /dev/stdout while standard output is that file would
		 * lose one of the two.
		 */
		k->dash = true;
		k->exists = fstat(output ? STDOUT_FILENO : STDIN_FILENO, &st) == 0 &&
			    S_ISREG(st.st_mode);
		k->dev = st.st_dev;
		k->ino = st.st_ino;
		k->name = g_strdup("-");
		return;
	}
	if (stat(path, &st) == 0) {
		k->exists = true;
		k->stream = !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
		k->dev = st.st_dev;
		k->ino = st.st_ino;
		return;
	}
	char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
	char *real = realpath(dir, NULL);

	k->name = g_build_filename(real ? real : dir, base, NULL);
	free(real);
	g_free(dir);
	g_free(base);
}

static bool same(const struct file_key *a, const struct file_key *b)
{
	if (a->dash && b->dash)
		return true;
	if (a->exists != b->exists)
		return false;
	if (a->exists)
		return !a->stream && a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->name, b->name) == 0;
}

bool file_uses_distinct(const struct file_use *uses, size_t n, GError **error)
{
	struct file_key *keys = g_new0(struct file_key, n);
	bool ok = true;

	for (size_t i = 0; i < n; i++)
		if (uses[i].path)
			key_of(uses[i].path, uses[i].output, &keys[i]);
	for (size_t i = 0; i < n && ok; i++) {
		if (!uses[i].path)
			continue;
		for (size_t j = 0; j < i && ok; j++) {
			if (!uses[j].path || !(uses[i].output || uses[j].output))
				continue;
			/* standard input and standard output are two streams */
			if (keys[i].dash && keys[j].dash && uses[i].output != uses[j].output)
				continue;
			if (!same(&keys[i], &keys[j]))
				continue;
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
				    "%s %s: same file as %s %s", uses[i].option, uses[i].path,
				    uses[j].option, uses[j].path);
			ok = false;
		}
	}
	for (size_t i = 0; i < n; i++)
		g_free(keys[i].name);
	g_free(keys);
	return ok;
}
