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
#include <signal.h>
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
 * "ksmsim: interrupted; <the progress line set below>" and, if it removed
 * any, "; N unfinished output file(s) removed" to stderr, and exit 130 / 143.
 * progress.h keeps the line current; a command without a progress reporter
 * may set it itself. A SIGINT ignored when the process started (background
 * jobs of a script) stays ignored.
 */
void atomic_file_install_signals(void);
void atomic_file_set_progress(const char *line);	/* copied; may be NULL */
/*
 * For output written by other means (trace_writer's own temporary file): the
 * handler removes path too until it is untracked. Returns a handle for
 * atomic_file_untrack, -1 if the table is full (then nothing is removed).
 * Call with the signals blocked, or accept that one arriving between the
 * file's creation and this call leaves it behind.
 */
int atomic_file_track(const char *path);
void atomic_file_untrack(int handle);	/* -1: nothing */
/* A terminal line without its newline is on stderr: the handler ends it first. */
void atomic_file_set_line_open(bool open);

/* Block SIGINT/SIGTERM (hold) or restore *old: for steps that must not be cut. */
void atomic_file_hold_signals(bool hold, sigset_t *old);

#endif
