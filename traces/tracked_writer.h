/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A trace_writer whose temporary file the SIGINT/SIGTERM handler of
 * atomic_file.h removes: for commands that write a trace and must leave no
 * partial file behind when interrupted (trace convert, gen).
 */
#ifndef KSMSIM_TRACKED_WRITER_H
#define KSMSIM_TRACKED_WRITER_H

#include <stdbool.h>
#include <glib.h>
#include "traces/writer.h"

struct tracked_writer {
	trace_writer *w;
	int handle;		/* atomic_file_track's, -1 for standard output */
};

/* Installs the signal handler; opens and registers with the signals held. */
bool tracked_writer_open(struct tracked_writer *t, const char *path, enum trace_format fmt,
			 int version, GError **error);
bool tracked_writer_close(struct tracked_writer *t, GError **error);
void tracked_writer_abort(struct tracked_writer *t);

#endif
