// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Retiming (retime.h): text as a line transform checked by the reader
 * running alongside, binary through the reader and writer, gzip around
 * either.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "traces/reader.h"
#include "traces/retime.h"
#include "traces/writer.h"
#include "util/atomic_file.h"
#include "util/signals.h"

#define IO_BUF (256 * 1024)

/*
 * t * factor to the nearest µs; false when that is beyond 2^64-1. Long
 * double holds every 64-bit time exactly (x86-64), so scaling by 2 and then
 * by 0.5 gives each time back; a product of non-negative numbers rounded
 * by IEEE rules never decreases when t grows, so neither does the result.
 */
static bool scale(uint64_t t, double factor, uint64_t *out)
{
	long double v = (long double)t * factor;
	uint64_t whole;

	if (!(v < 0x1p64L))
		return false;
	whole = (uint64_t)v;	/* v >= 0: truncation is the floor */
	/* halves round up, which keeps the map monotone */
	if (v - whole >= 0.5L && whole++ == UINT64_MAX)
		return false;
	*out = whole;
	return true;
}

static bool overflow(GError **error, const char *where, uint64_t t, double factor)
{
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE,
		    "%s: time %" PRIu64 " times %g is beyond 2^64-1 us", where, t, factor);
	return false;
}

/* The retimed stream: plain or gzip, into a file that appears whole or not at all. */
struct out {
	struct atomic_target t;
	const char *path;
	FILE *f;
	gzFile gz;
};

static bool out_error(struct out *o, GError **error, int err)
{
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot write: %s", o->path,
		    g_strerror(err));
	return false;
}

static bool out_open(struct out *o, const char *path, bool gz, GError **error)
{
	GError *err = NULL;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!atomic_target_open(&o->t, path, &err)) {
		g_set_error_literal(error, TRACE_ERROR, TRACE_ERROR_IO, err->message);
		g_error_free(err);
		return false;
	}
	/* as the writer (writer.c) makes gzip text, so a ksmsim .gz comes back the same */
	if (gz && (o->gz = gzdopen(o->t.fd, "wb6")))
		gzbuffer(o->gz, IO_BUF);
	else if (!gz && (o->f = fdopen(o->t.fd, "w")))
		setvbuf(o->f, NULL, _IOFBF, IO_BUF);
	if (!o->gz && !o->f) {
		close(o->t.fd);
		atomic_target_abort(&o->t);
		return out_error(o, error, ENOMEM);
	}
	return true;
}

static bool out_write(struct out *o, const void *p, size_t n, GError **error)
{
	if (o->gz ? gzwrite(o->gz, p, n) != (int)n : fwrite(p, 1, n, o->f) != n)
		return out_error(o, error, errno ? errno : EIO);
	return true;
}

/* Closes the stream and commits the file; on a failure nothing is left. */
static bool out_close(struct out *o, GError **error)
{
	GError *err = NULL;
	int ret;

	errno = 0;
	ret = o->gz ? gzclose_w(o->gz) : fclose(o->f);
	o->gz = NULL;
	o->f = NULL;
	if (ret != 0) {
		atomic_target_abort(&o->t);
		return out_error(o, error, errno ? errno : EIO);
	}
	if (!atomic_target_commit(&o->t, &err)) {
		g_set_error_literal(error, TRACE_ERROR, TRACE_ERROR_IO, err->message);
		g_error_free(err);
		return false;
	}
	return true;
}

static void out_abort(struct out *o)
{
	if (o->gz)
		gzclose_w(o->gz);
	else if (o->f)
		fclose(o->f);
	atomic_target_abort(&o->t);
}

/* One line of src into line, its '\n' included if it has one; false at the end. */
static bool read_line(gzFile src, GString *line)
{
	char buf[4096];

	g_string_truncate(line, 0);
	while (gzgets(src, buf, sizeof(buf))) {
		size_t n = strlen(buf);

		g_string_append_len(line, buf, n);
		if (n && buf[n - 1] == '\n')
			break;
	}
	return line->len > 0;
}

/*
 * The time token of rec's line (after leading blanks) becomes t * factor.
 * A token with leading zeros keeps its width where the new time fits, so
 * that retiming there and back gives the line back.
 */
static bool retime_line(GString *line, const struct trace_record *rec, double factor,
			const char *in, GError **error)
{
	size_t a = strspn(line->str, " \t"), n = strspn(line->str + a, "0123456789");
	uint64_t t;
	char num[32];

	if (!scale(rec->t_us, factor, &t)) {
		char *where = g_strdup_printf("%s:%" PRIu64, in, rec->line);

		overflow(error, where, rec->t_us, factor);
		g_free(where);
		return false;
	}
	snprintf(num, sizeof(num), "%0*" PRIu64, line->str[a] == '0' ? (int)n : 1, t);
	g_string_erase(line, a, n);
	g_string_insert(line, a, num);
	return true;
}

/*
 * Text: every line copied but for the time tokens of records. The reader
 * says which lines are records (and checks the trace): the next record's
 * line number is the next line to retime.
 */
static bool retime_text(const char *in, gzFile src, struct out *o, double factor, GError **error)
{
	trace_reader *r = trace_reader_open(in, error);
	struct trace_record *rec = g_new(struct trace_record, 1);
	GString *line = g_string_sized_new(256);
	uint64_t lineno = 0;
	int have = r ? trace_reader_next(r, rec, error) : -1;
	bool ok = false;

	while (have >= 0 && read_line(src, line)) {
		lineno++;
		if (have > 0 && rec->line == lineno) {
			if (!retime_line(line, rec, factor, in, error))
				goto out;
			have = trace_reader_next(r, rec, error);
		}
		if (!out_write(o, line->str, line->len, error))
			goto out;
	}
	if (have < 0)
		goto out;
	if (have > 0 || gzeof(src) != 1) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot read: %s", in,
			    have > 0 ? "it changed while read" : "gzip data error");
		goto out;
	}
	ok = true;
out:
	trace_reader_free(r);
	g_free(rec);
	g_string_free(line, TRUE);
	return ok;
}

/* Binary: every record read, its time scaled, written again into out_path. */
static bool retime_binary(const char *in, const char *out_path, double factor, GError **error)
{
	trace_reader *r = trace_reader_open(in, error);
	struct trace_record *rec = g_new(struct trace_record, 1);
	trace_writer *w = NULL;
	int version = r ? trace_reader_version(r, error) : -1, rc = -1;

	if (version > 0)
		w = trace_writer_open_version(out_path, TRACE_FMT_BINARY, version, error);
	while (w && (rc = trace_reader_next(r, rec, error)) > 0) {
		if (!scale(rec->t_us, factor, &rec->t_us)) {
			char *where = g_strdup_printf("%s: record %" PRIu64, in, rec->line);

			overflow(error, where, rec->t_us, factor);
			g_free(where);
			rc = -1;
			break;
		}
		if (!trace_writer_put(w, rec, error)) {
			rc = -1;
			break;
		}
	}
	trace_reader_free(r);
	g_free(rec);
	if (rc < 0) {
		trace_writer_abort(w);
		return false;
	}
	return trace_writer_close(w, error);
}

/* Gzip binary: the binary retimed into a temporary, then compressed into out. */
static bool retime_binary_gz(const char *in, const char *out, double factor, GError **error)
{
	char *tmp = NULL, buf[IO_BUF / 4];
	int fd = g_file_open_tmp("ksmsim-retime-XXXXXX.ksmb", &tmp, error), track;
	struct out o;
	bool ok = false;
	FILE *f;

	if (fd < 0)
		return false;
	close(fd);
	track = signals_track(tmp);
	if (!retime_binary(in, tmp, factor, error) || !out_open(&o, out, true, error))
		goto out;
	f = fopen(tmp, "rb");
	ok = f != NULL;
	for (size_t n; ok && (n = fread(buf, 1, sizeof(buf), f)) > 0;)
		ok = out_write(&o, buf, n, error);
	if (f)
		fclose(f);
	if (!ok) {
		if (!f)
			out_error(&o, error, errno);
		out_abort(&o);
	} else {
		ok = out_close(&o, error);
	}
out:
	unlink(tmp);
	signals_untrack(track);
	g_free(tmp);
	return ok;
}

/* Whether path starts with the gzip magic; its first (decompressed) byte in *first. */
static bool sniff(const char *path, bool *gz, int *first, GError **error)
{
	unsigned char b[2] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	gzFile src;

	if (fd < 0) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path,
			    g_strerror(errno));
		return false;
	}
	*gz = read(fd, b, 2) == 2 && b[0] == 0x1f && b[1] == 0x8b;
	lseek(fd, 0, SEEK_SET);
	src = gzdopen(fd, "rb");
	*first = src ? gzgetc(src) : -1;
	if (src)
		gzclose_r(src);
	else
		close(fd);
	return true;
}

bool trace_retime(const char *in, const char *out, double factor, GError **error)
{
	bool gz, ok;
	int first;
	gzFile src;
	struct out o;

	g_return_val_if_fail(factor > 0 && factor <= G_MAXDOUBLE, false);
	/*
	 * IN is read more than once (sniffed, checked, copied): a FIFO would
	 * hang at its second open, and a pipe or device gives other bytes each
	 * time. stat, not open: opening a FIFO blocks until it has a writer.
	 */
	struct stat st;
	if (stat(in, &st) == 0 && !S_ISREG(st.st_mode)) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: not a regular file (retime "
			    "reads its input more than once; copy a pipe or FIFO to a file first)",
			    in);
		return false;
	}
	if (!sniff(in, &gz, &first, error))
		return false;
	/* a binary file starts with 0x89, which never begins UTF-8 text (FORMAT.md) */
	if (first == 0x89)
		return gz ? retime_binary_gz(in, out, factor, error) :
			    retime_binary(in, out, factor, error);
	src = gzopen(in, "rb");
	if (!src) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", in,
			    g_strerror(errno ? errno : ENOMEM));
		return false;
	}
	gzbuffer(src, IO_BUF);
	ok = out_open(&o, out, gz, error);
	if (ok && !retime_text(in, src, &o, factor, error)) {
		out_abort(&o);
		ok = false;
	} else if (ok) {
		ok = out_close(&o, error);
	}
	gzclose_r(src);
	return ok;
}
