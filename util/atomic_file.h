/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output files that appear whole or not at all.
 *
 * Where an output goes is decided when it is opened, before any work:
 *  - "-" is standard output, written in place;
 *  - a device, FIFO or socket, or a symlink to one, is written in place,
 *    streaming (there is nothing to rename, and nothing is removed on a
 *    failure): `-o /dev/null` stays /dev/null;
 *  - a regular file, a new name, or a symlink to a regular file (then its
 *    target, never the link) is written to a temporary name beside it and
 *    renamed over it on commit. A replaced file keeps its mode; a new one
 *    gets 0666 & ~umask, as the shell's `>` would give it;
 *  - an empty path, a directory, or a dangling symlink is refused.
 * Temporary names are registered with util/signals.h, so an interruption
 * removes them; atomic_file_abort() removes them on an error.
 */
#ifndef KSMSIM_UTIL_ATOMIC_FILE_H
#define KSMSIM_UTIL_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <glib.h>

/*
 * The file-descriptor half, for writers that wrap the descriptor in their
 * own stream (traces/write_text.c and write_binary.c: stdio, zlib). The caller closes fd; then
 * commit renames the temporary into place, abort removes it.
 */
struct atomic_target {
	char *path;		/* as given, for messages */
	char *final;		/* the file the rename replaces; NULL when written in place */
	char *tmp;		/* the temporary; NULL when written in place */
	int fd;			/* dup of standard output for "-" */
	int track;		/* util/signals.h handle, -1 for none */
};

bool atomic_target_open(struct atomic_target *t, const char *path, GError **error);
bool atomic_target_commit(struct atomic_target *t, GError **error);
void atomic_target_abort(struct atomic_target *t);

typedef struct atomic_file atomic_file;

atomic_file *atomic_file_open(const char *path, GError **error);
FILE *atomic_file_stream(atomic_file *f);
bool atomic_file_commit(atomic_file *f, GError **error);	/* frees f */
void atomic_file_abort(atomic_file *f);				/* frees f */
/*
 * Several outputs of one command, whole or not at all: each in order
 * (NULL ones skipped) with the terminating signals held, so that an
 * interruption cannot leave some renamed and others removed; after the
 * first that fails the rest are aborted. Every *files[i] is freed and set
 * to NULL.
 */
bool atomic_file_commit_all(atomic_file **const files[], size_t n, GError **error);

#endif
