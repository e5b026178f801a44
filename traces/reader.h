/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming trace readers. One interface for every on-disk form: text,
 * gzip-compressed text and the compact binary form (itself zlib-compressed);
 * the form is detected from the first bytes, not the file name.
 *
 * Every record handed out has passed the format's checks (FORMAT.md) that can be made
 * without running the model: syntax, ranges, time order, mm existence,
 * mapped pages, knob values, and settle preconditions. Errors come back as a
 * GError whose message is one line "FILE:LINE: problem" (binary: "FILE:
 * offset N: problem").
 */
#ifndef KSMSIM_TRACES_READER_H
#define KSMSIM_TRACES_READER_H

#include "traces/check.h"
#include "traces/trace.h"

typedef struct trace_reader trace_reader;

#define TRACE_ERROR (trace_error_quark())
GQuark trace_error_quark(void);
enum trace_error_code { TRACE_ERROR_IO, TRACE_ERROR_PARSE };

/* path "-" reads standard input. */
trace_reader *trace_reader_open(const char *path, GError **error);
/* 1: *rec filled; 0: end of trace; -1: error set. */
int trace_reader_next(trace_reader *r, struct trace_record *rec, GError **error);
const char *trace_reader_path(const trace_reader *r);
/*
 * The trace's format version (1 to 4), reading the header if that has not
 * happened yet; -1 with error set when the header is bad. A v2 reader puts
 * each blob's bytes into the records that use it (CONTENT_BLOB), so records
 * stay self-contained; the blobs are kept for the whole read, 4 KiB each,
 * in memory or, past trace_reader_spill_blobs's limit, on disk.
 */
int trace_reader_version(trace_reader *r, GError **error);
uint64_t trace_reader_blobs(const trace_reader *r);	/* defined so far */
uint64_t trace_reader_blobs_in_memory(const trace_reader *r);	/* of them, in memory */
/*
 * write and fill records with digest content (v4) handed out so far: a run
 * on such a trace cannot study checksum false positives (FORMAT.md).
 */
uint64_t trace_reader_digests(const trace_reader *r);
/* "gzip", "binary" or "text", as the first bytes showed it (after a record was read). */
const char *trace_reader_form(trace_reader *r);
/*
 * Keep at most mem_max blobs in memory (the default: all) and the rest in an
 * unlinked temporary file in $TMPDIR, read back when a record names one, at
 * most disk_max bytes of them (0: while the file system keeps 1 GiB free).
 * A blob past that is refused: "FILE:LINE: blob N: DISK_WHY" (or "FILE:
 * offset N: ..."), and so is one the file cannot take, naming the folder.
 * Blobs are untimed, so a stream of blob definitions alone never reaches a
 * record a caller could refuse; this is how a memory limit reaches them.
 */
void trace_reader_spill_blobs(trace_reader *r, uint64_t mem_max, uint64_t disk_max,
			      const char *disk_why);
/* Bytes consumed from the file so far and its size (0 if unknown): progress. */
uint64_t trace_reader_offset(const trace_reader *r);
uint64_t trace_reader_size(const trace_reader *r);
/*
 * The value of key in the trace's gen line, the comment "# ksmsim gen:
 * key=value ..." that `ksmsim gen` writes between the header and the first
 * record (FORMAT.md, "Marks and what a run prints"): NULL when the trace has
 * none (the binary form keeps no comments) or the line no such key. Known
 * once the first record has been read; valid until trace_reader_free.
 */
const char *trace_reader_gen_fact(const trace_reader *r, const char *key);
/* The state the records read so far built (check.h): pages, mms, knobs. */
struct trace_check *trace_reader_check(trace_reader *r);
void trace_reader_free(trace_reader *r);

#endif
