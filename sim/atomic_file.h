/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output files that appear whole or not at all: written under a temporary
 * name in the target's directory and renamed on commit. Uncommitted files
 * are removed by atomic_file_abort() and, on SIGINT/SIGTERM, by the signal
 * handler that atomic_file_install_signals() sets up.
 */
#ifndef KSMSIM_ATOMIC_FILE_H
#define KSMSIM_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <glib.h>

typedef struct atomic_file atomic_file;

/* path "-" is standard output (never renamed, never removed). */
atomic_file *atomic_file_open(const char *path, GError **error);
FILE *atomic_file_stream(atomic_file *f);
const char *atomic_file_path(const atomic_file *f);
bool atomic_file_commit(atomic_file *f, GError **error);	/* frees f */
void atomic_file_abort(atomic_file *f);				/* frees f */

/*
 * SIGINT/SIGTERM: remove every uncommitted temporary file, print
 * "ksmsim: interrupted" plus the progress line set below to stderr, and exit
 * 130 / 143.
 */
void atomic_file_install_signals(void);
void atomic_file_set_progress(const char *line);	/* copied; may be NULL */

#endif
