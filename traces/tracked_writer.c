// SPDX-License-Identifier: GPL-2.0-or-later
#include "traces/tracked_writer.h"
#include "util/signals.h"

bool tracked_writer_open(struct tracked_writer *t, const char *path, enum trace_format fmt,
			 int version, GError **error)
{
	signals_install(SIGNALS_EXIT);
	t->w = trace_writer_open_version(path, fmt, version, error);
	t->handle = -1;
	return t->w != NULL;
}

bool tracked_writer_close(struct tracked_writer *t, GError **error)
{
	bool ok = trace_writer_close(t->w, error);

	t->w = NULL;
	return ok;
}

void tracked_writer_abort(struct tracked_writer *t)
{
	trace_writer_abort(t->w);
	t->w = NULL;
}
