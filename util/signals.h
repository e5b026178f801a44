/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Terminating signals, handled one way by every command.
 *
 * Whatever the mode, the unfinished output files registered with
 * signals_track() (atomic_file.h registers its temporary names) never
 * outlive an interruption, and the process ends with status 128 + signal.
 *
 * SIGNALS_EXIT: for commands with nothing to undo outside their own files
 * (run, gen, trace, collide, bench). On SIGINT, SIGTERM, SIGHUP or SIGPIPE
 * the handler removes the tracked files, prints "ksmsim: interrupted;
 * <progress line>; N unfinished output files removed" (nothing for SIGPIPE:
 * the pipe's reader is gone) and exits at once. A signal other than SIGTERM
 * that was ignored at start-up (a script's background job, nohup) stays
 * ignored. Only SIGKILL can leave a temporary file behind; its random name
 * never stands in a later run's way.
 *
 * SIGNALS_DEFER: for commands that must put the machine back first (live
 * restores KSM's knobs, record stops its traced program). SIGHUP and
 * SIGPIPE are caught too; the handler only notes the signal, without SA_RESTART, so that a
 * blocking call returns EINTR. The command polls signals_caught(), cleans
 * up (aborting its outputs) and returns signals_exit_status(its status).
 */
#ifndef KSMSIM_UTIL_SIGNALS_H
#define KSMSIM_UTIL_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

enum signals_mode {
	SIGNALS_EXIT,
	SIGNALS_DEFER,
};

void signals_install(enum signals_mode mode);
/* The signal caught in SIGNALS_DEFER mode, 0 if none yet. */
int signals_caught(void);
/* 128 + the caught signal, or rc when none was caught. */
int signals_exit_status(int rc);

/*
 * path is removed on an interruption until untracked. Returns a handle for
 * signals_untrack, -1 if the table is full (then nothing is removed). Call
 * with the signals held, or accept that one arriving between the file's
 * creation and this call leaves it behind.
 */
int signals_track(const char *path);
void signals_untrack(int handle);	/* -1: nothing */

/*
 * Where an allocation failed and there is no way back: removes the tracked
 * files, prints one line "ksmsim: out of memory: WHAT" (with the count of
 * unfinished output files removed) and exits with status 2, as a trace too
 * big for the memory is refused. A SIGNALS_DEFER command's own clean-up is
 * skipped, but for what it hands to signals_on_out_of_memory().
 */
__attribute__((noreturn)) void signals_out_of_memory(const char *what);
/*
 * undo runs once in signals_out_of_memory(), before the message: for a
 * command that must put the machine back even then (live: KSM's knobs). It
 * must allocate nothing. It returns the words the message ends with (what it
 * did), or NULL. NULL: nothing to run.
 */
void signals_on_out_of_memory(const char *(*undo)(void));
/*
 * In a forked worker, whose parent reports for it: the parent's tracked
 * outputs are not the worker's to remove, and running out of memory writes
 * "out of memory: WHAT" to report_fd (the parent's pipe) instead of a line
 * on stderr, and exits with SIGNALS_EXIT_OOM, so the user reads one line,
 * the parent's, naming the worker.
 */
#define SIGNALS_EXIT_OOM 3
void signals_forked_worker(int report_fd);
/*
 * GLib aborts when its own allocator fails (g_malloc and every container
 * built on it): this routes that to signals_out_of_memory, and makes its
 * other fatal errors remove the tracked files before they abort.
 */
void signals_catch_glib_fatal(void);

/* Block the terminating signals (hold) or restore *old: for steps that must not be cut. */
void signals_hold(bool hold, sigset_t *old);

/* The line the interruption message repeats (copied; NULL: none); progress.h keeps it. */
void signals_set_progress(const char *line);
/* A terminal line without its newline is on stderr: the message ends it first. */
void signals_set_line_open(bool open);

#endif
