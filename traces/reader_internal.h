/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace reader's state, shared by its three parts and nothing else:
 * reader.c (opening, the form, the input through zlib's gz layer, the v2
 * blob store's use (blob_store.c keeps them), the public calls that dispatch), read_text.c (the text
 * grammar) and read_binary.c (the binary decoder). traces/reader.h is the
 * reader's public face.
 *
 * Both parsers hand every record to the shared checker (check.c), so the two
 * forms accept exactly the same traces; an error is one line "FILE:LINE:
 * problem" (text) or "FILE: offset N: problem" (binary), built by
 * reader_fail, after which the reader stays failed.
 */
#ifndef KSMSIM_TRACES_READER_INTERNAL_H
#define KSMSIM_TRACES_READER_INTERNAL_H

#include <zlib.h>
#include "traces/blob_store.h"
#include "traces/check.h"
#include "traces/reader.h"

enum reader_form { FORM_TEXT, FORM_BINARY };

struct trace_reader {
	char *path;
	int fd;
	gzFile gz;
	uint64_t size;
	enum reader_form form;
	struct trace_check *ck;
	bool failed;		/* an error was returned: stay failed */
	bool done;
	int version;		/* 0 until the header has been read */

	struct blob_store blobs;	/* v2 blobs, in memory and beyond it on disk */
	uint64_t digests;	/* write and fill records with digest content handed out */

	/* Bytes out of the gz layer: [in_pos, in_len) not consumed yet. */
	uint8_t *in;
	size_t in_cap, in_pos, in_len;
	bool in_eof;

	/* text */
	uint64_t line;
	bool header;
	bool in_records;	/* a record was read: the preamble is over */
	char **gen_facts;	/* "key=value" words of the gen line, NULL if none */

	/* binary: inflated records in [out_pos, out_len); out_base is out[0]'s offset */
	z_stream zs;
	bool zs_live, zs_end;
	uint8_t *out;
	size_t out_pos, out_len;
	uint64_t out_base;
	uint64_t nrec;
	uint64_t t_us, prev_vpn;
	struct check_mm **slots;	/* slot -> live mm, NULL when free */
	uint32_t nslots, slots_cap;
	uint32_t *free_slots;		/* freed slots, reused last-freed first */
	uint32_t nfree;
};


/* Sets "PATH<fmt>" and makes every later call fail too; returns -1. */
int reader_fail(trace_reader *r, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/*
 * Reads more of the input after [in_pos, in_len), moving the unread bytes to
 * the front and growing the buffer if full. Returns the bytes added (0 at
 * the end, in_eof then set), -1 with the error placed like every other.
 */
int reader_fill(trace_reader *r, GError **error);

/*
 * The text form (read_text.c): the next record, 0 at the end, -1 on error.
 * header_only: stop (returning 0) once the header has been read.
 */
int reader_text_next(trace_reader *r, struct trace_record *rec, GError **error,
		     bool header_only);

/*
 * The binary form (read_binary.c): reader_bin_start checks the file header
 * and starts inflating (the version is then known); reader_bin_next returns
 * the next record (1), the end (0) or an error (-1), starting if need be.
 */
int reader_bin_start(trace_reader *r, GError **error);
int reader_bin_next(trace_reader *r, struct trace_record *rec, GError **error);

#endif
