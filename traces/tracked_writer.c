// SPDX-License-Identifier: GPL-2.0-or-later
#include <signal.h>
#include "traces/tracked_writer.h"
#include "util/signals.h"

bool tracked_writer_open(struct tracked_writer *t, const char *path, enum trace_format fmt,
			 int version, GError **error)
{
	sigset_t old;

	signals_install(SIGNALS_EXIT);
	/* a signal between creating the temporary file and registering it would strand it */
	signals_hold(true, &old);
	t->w = trace_writer_open_version(path, fmt, version, error);
	t->handle = t->w && trace_writer_tmp_path(t->w) ?
		signals_track(trace_writer_tmp_path(t->w)) : -1;
	signals_hold(false, &old);
	return t->w != NULL;
}

bool tracked_writer_close(struct tracked_writer *t, GError **error)
{
	sigset_t old;
	bool ok;

	/* the rename and the untracking go together, or the handler removes a finished file */
	signals_hold(true, &old);
	ok = trace_writer_close(t->w, error);
	signals_untrack(t->handle);
	signals_hold(false, &old);
	t->w = NULL;
	t->handle = -1;
	return ok;
}

void tracked_writer_abort(struct tracked_writer *t)
{
	trace_writer_abort(t->w);
	signals_untrack(t->handle);
	t->w = NULL;
	t->handle = -1;
}
