// SPDX-License-Identifier: GPL-2.0-or-later
/* The checks every reader fuzz target shares: see fuzz_common.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <zlib.h>
#include "fuzz_common.h"
#include "traces/reader.h"
#include "traces/writer.h"

/* Past this many records an accepted trace is only read, not round-tripped. */
#define ROUNDTRIP_MAX_RECORDS 200000

static int in_fd = -1;
static char in_path[64];
static char *tmp_dir, *bin_path, *text_path, *bin2_path;

static void cleanup(void)
{
	if (!tmp_dir)
		return;
	g_remove(bin_path);
	g_remove(text_path);
	g_remove(bin2_path);
	g_rmdir(tmp_dir);
}

static void setup(void)
{
	if (in_fd >= 0)
		return;
	in_fd = memfd_create("ksmsim-fuzz-input", MFD_CLOEXEC);
	if (in_fd < 0) {
		fprintf(stderr, "fuzz: memfd_create: %s\n", strerror(errno));
		abort();
	}
	snprintf(in_path, sizeof(in_path), "/proc/self/fd/%d", in_fd);
	GError *error = NULL;
	tmp_dir = g_dir_make_tmp("ksmsim-fuzz-XXXXXX", &error);
	if (!tmp_dir) {
		fprintf(stderr, "fuzz: %s\n", error->message);
		abort();
	}
	bin_path = g_build_filename(tmp_dir, "out.ksmb", NULL);
	text_path = g_build_filename(tmp_dir, "out.ksmt", NULL);
	bin2_path = g_build_filename(tmp_dir, "again.ksmb", NULL);
	atexit(cleanup);
}

static void put_input(const uint8_t *data, size_t size)
{
	if (ftruncate(in_fd, 0) != 0) {
		fprintf(stderr, "fuzz: ftruncate: %s\n", strerror(errno));
		abort();
	}
	size_t done = 0;
	while (done < size) {
		ssize_t n = pwrite(in_fd, data + done, size - done, (off_t)done);
		if (n <= 0) {
			fprintf(stderr, "fuzz: pwrite: %s\n", strerror(errno));
			abort();
		}
		done += (size_t)n;
	}
}

static G_NORETURN void failf(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz check failed: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static bool all_digits(const char *s, const char **end)
{
	const char *p = s;
	while (*p >= '0' && *p <= '9')
		p++;
	*end = p;
	return p > s;
}

/*
 * Shapes that a long fuzzing campaign may be told to accept
 * (KSMFUZZ_ALLOW="cannot read,..."): a known, reported finding should not
 * stop the search for new ones. Never set in the test suite.
 */
static bool allowed_anyway(const char *rest)
{
	const char *allow = getenv("KSMFUZZ_ALLOW");
	if (!allow || !*allow || strncmp(rest, ": ", 2) != 0)
		return false;
	bool ok = false;
	char **items = g_strsplit(allow, ",", -1);
	for (char **i = items; *i && !ok; i++)
		ok = **i && g_str_has_prefix(rest + 2, *i);
	g_strfreev(items);
	return ok;
}

/* Lines in the input when it is plain text (0: not plain text), for the checks below. */
static uint64_t plain_lines;

/* "PATH:LINE: problem" or "PATH: offset N: problem", one line. */
static void check_error_shape(const GError *error, const char *path)
{
	if (!error)
		failf("the reader failed without an error");
	const char *msg = error->message;
	if (error->domain != TRACE_ERROR)
		failf("error outside TRACE_ERROR: %s", msg);
	if (strchr(msg, '\n') || strchr(msg, '\r'))
		failf("error message of more than one line: %s", msg);
	if (!g_utf8_validate(msg, -1, NULL))
		failf("error message is not UTF-8: %s", msg);
	if (!g_str_has_prefix(msg, path))
		failf("error message does not start with the file name: %s", msg);
	const char *rest = msg + strlen(path), *p;
	if (rest[0] == ':' && all_digits(rest + 1, &p) && rest[1] != '0') {
		/* FILE:LINE: problem, LINE a line of the file (or the one after the last) */
		uint64_t line = g_ascii_strtoull(rest + 1, NULL, 10);
		if (plain_lines && line > plain_lines + 1)
			failf("error on line %" G_GUINT64_FORMAT " of a %" G_GUINT64_FORMAT
			      "-line file: %s", line, plain_lines, msg);
	} else if (g_str_has_prefix(rest, ": offset ") && all_digits(rest + 9, &p)) {
		/* FILE: offset N: problem */
	} else if (allowed_anyway(rest)) {
		return;
	} else {
		failf("error message not 'FILE:LINE: problem' or 'FILE: offset N: problem': %s",
		      msg);
	}
	if (p[0] != ':' || p[1] != ' ' || !p[2] || p[2] == ' ')
		failf("error message without a problem after the position: %s", msg);
}

/* The canonical text of a record; blob pages by their bytes, not their ids. */
static void canonical(const struct trace_record *rec, GString *out)
{
	bool page = (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL) &&
		    rec->content.form == CONTENT_BLOB;
	if (!page) {
		trace_record_format(rec, out);
	} else {
		struct trace_record *copy = g_memdup2(rec, sizeof(*rec));
		copy->content.value = 0;
		trace_record_format(copy, out);
		char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, rec->content.data,
							TRACE_PAGE_SIZE);
		g_string_append_printf(out, " [page %s]", sum);
		g_free(sum);
		g_free(copy);
	}
	g_string_append_c(out, '\n');
}

/*
 * Reads path to its end: 0 accepted (records appended to canon, version set),
 * -1 rejected (error checked). Writes every record to w when w is not NULL.
 */
static int read_all(const char *path, GString *canon, uint64_t *nrec, int *version,
		    bool expect_ok)
{
	GError *error = NULL;
	trace_reader *r = trace_reader_open(path, &error);
	*nrec = 0;
	if (!r) {
		/* the first read happens at open: the input can be refused there */
		if (expect_ok)
			failf("cannot open %s: %s", path, error ? error->message : "(no error)");
		check_error_shape(error, path);
		g_clear_error(&error);
		return -1;
	}
	struct trace_record *rec = g_new0(struct trace_record, 1);
	int got;
	while ((got = trace_reader_next(r, rec, &error)) == 1) {
		if (error)
			failf("a record came with an error set: %s", error->message);
		if (++*nrec <= ROUNDTRIP_MAX_RECORDS && canon)
			canonical(rec, canon);
	}
	if (got == 0) {
		if (error)
			failf("end of trace with an error set: %s", error->message);
		/* the end stays the end */
		if (trace_reader_next(r, rec, &error) != 0)
			failf("a second end of trace did not return 0: %s",
			      error ? error->message : "");
		*version = trace_reader_version(r, &error);
		if (*version < TRACE_VERSION_MIN || *version > TRACE_VERSION_MAX)
			failf("accepted trace of version %d", *version);
	} else {
		if (got != -1)
			failf("trace_reader_next returned %d", got);
		if (expect_ok)
			failf("a trace written by trace_writer was rejected: %s",
			      error ? error->message : "(no error)");
		check_error_shape(error, path);
		g_clear_error(&error);
		/* after an error every call fails, with one message, and does not crash */
		if (trace_reader_next(r, rec, &error) != -1)
			failf("the reader went on after an error");
		if (!error || !g_str_has_prefix(error->message, path) ||
		    strchr(error->message, '\n'))
			failf("a call after an error: %s", error ? error->message : "(no error)");
		g_clear_error(&error);
	}
	g_free(rec);
	trace_reader_free(r);
	return got == 0 ? 0 : -1;
}

static void write_all(const char *src, const char *dst, enum trace_format fmt, int version)
{
	GError *error = NULL;
	trace_reader *r = trace_reader_open(src, &error);
	if (!r)
		failf("cannot reopen %s: %s", src, error->message);
	trace_writer *w = trace_writer_open_version(dst, fmt, version, &error);
	if (!w)
		failf("cannot write %s: %s", dst, error->message);
	struct trace_record *rec = g_new0(struct trace_record, 1);
	int got;
	while ((got = trace_reader_next(r, rec, &error)) == 1)
		if (!trace_writer_put(w, rec, &error)) {
			GString *s = g_string_new(NULL);
			trace_record_format(rec, s);
			failf("the writer refused an accepted record '%s': %s", s->str,
			      error->message);
		}
	if (got != 0)
		failf("second read of an accepted trace failed: %s",
		      error ? error->message : "(no error)");
	if (!trace_writer_close(w, &error))
		failf("cannot close %s: %s", dst, error->message);
	g_free(rec);
	trace_reader_free(r);
}

static void compare(const GString *want, const GString *got, const char *what)
{
	if (g_string_equal(want, got))
		return;
	size_t i = 0, line = 1, start = 0;
	while (i < want->len && i < got->len && want->str[i] == got->str[i]) {
		if (want->str[i] == '\n') {
			line++;
			start = i + 1;
		}
		i++;
	}
	const char *a = want->str + start, *b = got->str + start;
	failf("%s changed record %zu:\n  read:     %.*s\n  reread:   %.*s", what, line,
	      (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
}

static char *slurp(const char *path, size_t *len)
{
	char *s;
	GError *error = NULL;
	if (!g_file_get_contents(path, &s, len, &error))
		failf("%s", error->message);
	return s;
}

void fuzz_check_trace(const uint8_t *data, size_t size)
{
	setup();
	put_input(data, size);
	plain_lines = 0;
	if (!(size >= 1 && data[0] == 0x89) && !(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
		plain_lines = 1;
		for (size_t i = 0; i < size; i++)
			plain_lines += data[i] == '\n';
	}
	GString *canon = g_string_new(NULL);
	uint64_t nrec;
	int version = 0;
	if (read_all(in_path, canon, &nrec, &version, false) == 0 &&
	    nrec <= ROUNDTRIP_MAX_RECORDS) {
		GString *again = g_string_new(NULL);
		uint64_t n2;
		int v2;
		plain_lines = 0;
		/* binary form */
		write_all(in_path, bin_path, TRACE_FMT_BINARY, version);
		read_all(bin_path, again, &n2, &v2, true);
		compare(canon, again, "text -> binary -> records");
		/* binary -> binary gives the same bytes */
		write_all(bin_path, bin2_path, TRACE_FMT_BINARY, version);
		size_t l1, l2;
		char *b1 = slurp(bin_path, &l1), *b2 = slurp(bin2_path, &l2);
		if (l1 != l2 || memcmp(b1, b2, l1) != 0)
			failf("binary -> binary changed the bytes (%zu -> %zu)", l1, l2);
		g_free(b1);
		g_free(b2);
		/* text form */
		g_string_truncate(again, 0);
		write_all(in_path, text_path, TRACE_FMT_TEXT, version);
		read_all(text_path, again, &n2, &v2, true);
		compare(canon, again, "text -> text -> records");
		g_string_free(again, TRUE);
	}
	g_string_free(canon, TRUE);
}

uint8_t *fuzz_deflate(const uint8_t *data, size_t size, int level, int gzip, size_t *out_len)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, level, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	size_t cap = deflateBound(&zs, size) + 32;
	uint8_t *out = g_malloc(cap);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)size;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		abort();
	*out_len = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}
