/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace writer's state, shared by its three parts and nothing else:
 * writer.c (opening, the checks every record passes, blob numbering,
 * committing), write_text.c (canonical text, plain or gzip) and
 * write_binary.c (the binary form's records and its deflate stream).
 * traces/writer.h is the writer's public face.
 */
#ifndef KSMSIM_TRACES_WRITER_INTERNAL_H
#define KSMSIM_TRACES_WRITER_INTERNAL_H

#include <stdio.h>
#include <zlib.h>
#include "traces/check.h"
#include "traces/writer.h"
#include "util/atomic_file.h"

struct trace_writer {
	enum trace_format fmt;
	char *path;		/* as given, for messages */
	struct atomic_target out;	/* fd, and the temporary renamed on close */
	int fd;			/* out.fd until the stream owns it, then -1 */
	FILE *f;		/* text */
	gzFile gz;		/* gz text */
	GString *line;
	struct trace_check *ck;
	uint64_t nrec;
	bool failed;
	int version;

	/* v2: 128-bit hash of a page's bytes -> blob id + 1 */
	GHashTable *blob_ids;
	uint64_t nblobs, nrefs;
	struct trace_record *renum;	/* a blob record with the writer's id */

	/* binary */
	z_stream zs;
	bool zs_live;
	z_stream probe;		/* trial compression of each chunk */
	bool probe_live;
	uint8_t *scratch;
	int level;		/* of zs now */
	uint8_t *buf;		/* records not yet deflated */
	size_t len;
	uint8_t *zout;
	uint64_t t_us, prev_vpn;
	uint32_t nslots;
	uint32_t *free_slots;	/* reused last-freed first, as the reader does */
	uint32_t nfree, free_cap;
};

/* Sets "PATH: what: strerror(err)", makes the writer failed; returns false. */
bool writer_err(trace_writer *w, GError **error, const char *what, int err);

/*
 * Each form's part (write_text.c, write_binary.c): open starts the stream on
 * w->fd and writes the header; put writes a record the checks have passed
 * (binary: mm is the checker's mm of the record, fork's child; slot exit's
 * mm's and fork's parent's); blob defines blob number id (ids count up from
 * 0); close ends the stream and closes the file (w->fd is -1 after it).
 */
bool writer_text_open(trace_writer *w, GError **error);
bool writer_text_put(trace_writer *w, const struct trace_record *rec, GError **error);
bool writer_text_blob(trace_writer *w, uint64_t id, const uint8_t *page, GError **error);
bool writer_text_close(trace_writer *w, GError **error);

bool writer_bin_open(trace_writer *w, GError **error);
bool writer_bin_put(trace_writer *w, const struct trace_record *rec, struct check_mm *mm,
		    uint32_t slot, GError **error);
bool writer_bin_blob(trace_writer *w, const uint8_t *page, GError **error);
bool writer_bin_close(trace_writer *w, GError **error);

#endif
