/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output files that appear whole or not at all: written under a temporary
 * name in the target's directory and renamed on commit. Uncommitted files
 * are removed by atomic_file_abort() and, when the command is interrupted,
 * by util/signals.h, with which their temporary names are registered.
 */
#ifndef KSMSIM_UTIL_ATOMIC_FILE_H
#define KSMSIM_UTIL_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <glib.h>

typedef struct atomic_file atomic_file;

/* path "-" is standard output (never renamed, never removed). */
atomic_file *atomic_file_open(const char *path, GError **error);
FILE *atomic_file_stream(atomic_file *f);
bool atomic_file_commit(atomic_file *f, GError **error);	/* frees f */
void atomic_file_abort(atomic_file *f);				/* frees f */

#endif
