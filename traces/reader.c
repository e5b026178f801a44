// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace readers (reader.h): opening, the input and dispatch. The file is
 * read through zlib's gz layer, which passes plain bytes through and gunzips
 * gzip members, so text, .gz text and binary (even gzipped binary) share one
 * input path; the first byte of what comes out picks the parser: the text
 * grammar (read_text.c) or the binary decoder (read_binary.c). Both hand
 * their records to the shared checker (check.c), so they accept exactly the
 * same traces.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "traces/binary.h"
#include "traces/reader_internal.h"

#define IN_CHUNK (256 * 1024)

G_DEFINE_QUARK(trace-error-quark, trace_error)

uint64_t trace_reader_blobs(const trace_reader *r)
{
	return r->blobs.n;
}

uint64_t trace_reader_blobs_in_memory(const trace_reader *r)
{
	return blob_store_in_memory(&r->blobs);
}

const char *trace_reader_form(trace_reader *r)
{
	if (r->gz && !gzdirect(r->gz))
		return "gzip";
	return r->form == FORM_BINARY ? "binary" : "text";
}

void trace_reader_spill_blobs(trace_reader *r, uint64_t mem_max, uint64_t disk_max,
			      const char *disk_why)
{
	blob_store_spill(&r->blobs, mem_max, disk_max, disk_why);
}

int reader_fail(trace_reader *r, GError **error, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s%s", r->path, msg);
	g_free(msg);
	r->failed = true;
	return -1;
}

/*
 * A failure of the gzip layer, placed like every other error: the text line
 * being read, or the offset in the binary stream (header: in the file).
 */
static int in_fail(trace_reader *r, GError **error, const char *problem)
{
	if (r->form == FORM_BINARY)
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: offset %" G_GUINT64_FORMAT
			    ": cannot read: %s", r->path,
			    r->zs_live ? r->out_base + r->out_len : (uint64_t)r->in_len, problem);
	else
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s:%" G_GUINT64_FORMAT
			    ": cannot read: %s", r->path, r->line + 1, problem);
	r->failed = true;
	return -1;
}

int reader_fill(trace_reader *r, GError **error)
{
	size_t rem = r->in_len - r->in_pos;
	int n;

	if (r->in_pos) {
		memmove(r->in, r->in + r->in_pos, rem);
		r->in_pos = 0;
		r->in_len = rem;
	}
	/* Grows only for a line longer than the buffer. */
	if (r->in_cap - r->in_len < IN_CHUNK / 4) {
		r->in_cap = MAX(2 * r->in_cap, r->in_len + IN_CHUNK);
		r->in = g_realloc(r->in, r->in_cap);
	}
	n = gzread(r->gz, r->in + r->in_len, MIN(r->in_cap - r->in_len, (size_t)INT_MAX / 2));
	if (n < 0) {
		int err;
		const char *msg = gzerror(r->gz, &err);

		return in_fail(r, error, err == Z_ERRNO ? g_strerror(errno) : msg);
	}
	if (n == 0) {
		int err;
		const char *msg = gzerror(r->gz, &err);

		/* zlib reports a cut gzip member only here, as Z_BUF_ERROR */
		if (err != Z_OK)
			return in_fail(r, error, err == Z_BUF_ERROR ? "truncated gzip data" : msg);
		r->in_eof = true;
	}
	r->in_len += n;
	return n;
}

const char *trace_reader_path(const trace_reader *r)
{
	return r->path;
}

uint64_t trace_reader_offset(const trace_reader *r)
{
	long off = r->gz ? gzoffset(r->gz) : 0;

	return off > 0 ? (uint64_t)off : 0;
}

uint64_t trace_reader_size(const trace_reader *r)
{
	return r->size;
}

struct trace_check *trace_reader_check(trace_reader *r)
{
	return r->ck;
}

void trace_reader_free(trace_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose_r(r->gz);	/* closes fd */
	else if (r->fd >= 0)
		close(r->fd);
	if (r->zs_live)
		inflateEnd(&r->zs);
	trace_check_free(r->ck);
	blob_store_clear(&r->blobs);
	g_free(r->slots);
	g_free(r->free_slots);
	g_free(r->in);
	g_free(r->out);
	g_free(r->path);
	g_strfreev(r->gen_facts);
	g_free(r);
}

trace_reader *trace_reader_open(const char *path, GError **error)
{
	trace_reader *r = g_new0(trace_reader, 1);
	struct stat st;

	blob_store_init(&r->blobs);
	r->path = g_strdup(path);
	r->fd = -1;
	if (strcmp(path, "-") == 0) {
		r->fd = dup(STDIN_FILENO);
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (r->fd < 0) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path,
			    g_strerror(errno));
		trace_reader_free(r);
		return NULL;
	}
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode))
		r->size = st.st_size;
	if (fstat(r->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path,
			    g_strerror(EISDIR));
		trace_reader_free(r);
		return NULL;
	}
	r->gz = gzdopen(r->fd, "rb");
	if (!r->gz) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: out of memory", path);
		trace_reader_free(r);
		return NULL;
	}
	/* smaller than our reads, so that zlib reads plain files straight into ours */
	gzbuffer(r->gz, IN_CHUNK / 4);
	r->ck = trace_check_new();
	/* The first byte decides: text never starts with 0x89 (invalid UTF-8). */
	if (reader_fill(r, error) < 0) {
		trace_reader_free(r);
		return NULL;
	}
	r->form = r->in_len > 0 && r->in[0] == (uint8_t)BIN_MAGIC[0] ? FORM_BINARY : FORM_TEXT;
	return r;
}

int trace_reader_next(trace_reader *r, struct trace_record *rec, GError **error)
{
	if (r->failed) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: reading after an error", r->path);
		return -1;
	}
	if (r->done)
		return 0;
	int got = r->form == FORM_TEXT ? reader_text_next(r, rec, error, false) :
		  reader_bin_next(r, rec, error);

	if (got == 1 && (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL) &&
	    rec->content.form == CONTENT_DIGEST)
		r->digests++;
	return got;
}

uint64_t trace_reader_digests(const trace_reader *r)
{
	return r->digests;
}

int trace_reader_version(trace_reader *r, GError **error)
{
	if (r->version)
		return r->version;
	if (r->failed) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: reading after an error", r->path);
		return -1;
	}
	if (r->form == FORM_TEXT) {
		if (reader_text_next(r, NULL, error, true) < 0)
			return -1;
	} else if (!r->zs_live && reader_bin_start(r, error) < 0) {
		return -1;
	}
	return r->version;
}
