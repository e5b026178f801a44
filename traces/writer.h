/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trace writers. Output goes to a temporary file beside the target and is
 * renamed into place by trace_writer_close(), so a failed or interrupted
 * write never leaves a partial trace behind.
 */
#ifndef KSMSIM_TRACES_WRITER_H
#define KSMSIM_TRACES_WRITER_H

#include "traces/trace.h"

enum trace_format {
	TRACE_FMT_TEXT,		/* .ksmt (anything else) */
	TRACE_FMT_TEXT_GZ,	/* .ksmt.gz / .gz */
	TRACE_FMT_BINARY,	/* .ksmb */
};

typedef struct trace_writer trace_writer;

enum trace_format trace_format_from_path(const char *path);
/* path "-" writes standard output (no rename). */
trace_writer *trace_writer_open(const char *path, enum trace_format fmt, GError **error);
/*
 * Any version, 1 to 3 (trace_writer_open writes version 1); the writer takes
 * only records its version has, and a caller picks the lowest version that
 * holds its records (ksmsim trace convert keeps the input's). A v2 or v3
 * writer takes CONTENT_BLOB records and stores each distinct page once: it
 * ignores the record's blob id, numbers blobs itself in order of first use
 * (keyed by a 128-bit hash of the bytes) and defines each just before its
 * first use. Only a v3 writer takes fork, prctl and THP advice.
 */
trace_writer *trace_writer_open_version(const char *path, enum trace_format fmt, int version,
					GError **error);
/* Blobs defined and blob references written so far. */
uint64_t trace_writer_blobs(const trace_writer *w);
uint64_t trace_writer_blob_refs(const trace_writer *w);
bool trace_writer_put(trace_writer *w, const struct trace_record *rec, GError **error);
/* A comment line (text forms only; ignored by the binary form). */
bool trace_writer_comment(trace_writer *w, const char *text, GError **error);
bool trace_writer_close(trace_writer *w, GError **error);	/* commit */
void trace_writer_abort(trace_writer *w);			/* discard */

/* The canonical text of one record, without the newline, appended to out. */
void trace_record_format(const struct trace_record *rec, GString *out);

#endif
