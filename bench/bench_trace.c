// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim bench trace: how fast the readers go. Generates one synthetic trace
 * (mostly write and fill records of every content form over several mms) in
 * text and binary form in a temporary directory, then times reading each
 * back through the full validating reader. The directory is removed after.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "bench/bench.h"
#include "traces/reader.h"
#include "traces/writer.h"
#include "util/exit_status.h"
#include "util/escape.h"
#include "util/splitmix64.h"

#define BENCH_MMS BENCH_TRACE_MMS
#define BENCH_PAGES BENCH_TRACE_PAGES

/* Writes the same records to both writers. */
static bool put2(trace_writer *a, trace_writer *b, const struct trace_record *rec, GError **error)
{
	return trace_writer_put(a, rec, error) && trace_writer_put(b, rec, error);
}

static bool generate(const char *text, const char *bin, uint64_t n, GError **error)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	trace_writer *wt = trace_writer_open(text, TRACE_FMT_TEXT, error), *wb = NULL;
	uint64_t state = 42, t = 0, vpn[BENCH_MMS] = { 0 };
	bool ok = wt && (wb = trace_writer_open(bin, TRACE_FMT_BINARY, error));

	for (int m = 0; ok && m < BENCH_MMS; m++) {
		memset(rec, 0, sizeof(*rec));
		snprintf(rec->mm, sizeof(rec->mm), "vm%d", m);
		rec->verb = TRACE_SPAWN;
		ok = put2(wt, wb, rec, error);
		rec->verb = TRACE_MAP;
		rec->npages = BENCH_PAGES;
		ok = ok && put2(wt, wb, rec, error);
		rec->verb = TRACE_ADVISE;
		rec->mergeable = true;
		ok = ok && put2(wt, wb, rec, error);
	}
	for (uint64_t i = 3 * BENCH_MMS; ok && i < n; i++) {
		uint64_t x = splitmix64_next(&state);
		int m = x % BENCH_MMS, pick = (x >> 8) % 100;
		struct trace_content *c = &rec->content;

		snprintf(rec->mm, sizeof(rec->mm), "vm%d", m);
		if ((x >> 16) % 10 == 0)
			t += 1 + (x >> 20) % 1000;
		rec->t_us = t;
		/* half the writes walk forward, half jump */
		vpn[m] = (x >> 32) & 1 ? (vpn[m] + 1) % BENCH_PAGES : (x >> 33) % BENCH_PAGES;
		rec->vpn = vpn[m];
		rec->npages = 1;
		rec->verb = TRACE_WRITE;
		c->value = splitmix64_next(&state);
		if (pick < 10) {
			c->form = CONTENT_ZERO;
			c->value = 0;
		} else if (pick < 35) {
			c->form = CONTENT_BYTE;
			c->value &= 0xff;
		} else if (pick < 60) {
			c->form = CONTENT_RAND;
			c->value %= 100000;	/* a small set of page images */
		} else if (pick < 80) {
			c->form = CONTENT_WORD;
			c->off = (x >> 40) % 512;
			c->len = 8;
			c->value &= 0xffff;
		} else if (pick < 90) {
			c->form = CONTENT_PATCH;
			c->off = (x >> 40) % 4000;
			c->len = 1 + (x >> 52) % 64;
		} else if (pick < 92) {
			c->form = CONTENT_BYTES;
			c->off = (x >> 40) % 4000;
			c->len = 1 + (x >> 52) % 16;
			for (uint32_t k = 0; k < c->len; k++)
				c->data[k] = (uint8_t)(x >> (k % 8 * 8));
		} else {
			rec->verb = TRACE_FILL;
			rec->vpn = rec->vpn & ~UINT64_C(15);
			rec->npages = 16;
			c->form = (x >> 40) & 1 ? CONTENT_BYTE : CONTENT_RAND;
			c->value &= 0xff;
		}
		ok = put2(wt, wb, rec, error);
	}
	if (ok)
		ok = trace_writer_close(wt, error) && trace_writer_close(wb, error);
	else {
		trace_writer_abort(wt);
		trace_writer_abort(wb);
	}
	g_free(rec);
	return ok;
}

/* Reads the whole file; the best of repeat runs, in seconds. */
static double time_read(const char *path, int repeat, uint64_t *records, GError **error)
{
	struct trace_record *rec = g_new(struct trace_record, 1);
	double best = 0;

	for (int i = 0; i < repeat; i++) {
		gint64 t0 = g_get_monotonic_time();
		trace_reader *r = trace_reader_open(path, error);
		uint64_t n = 0;
		int rc;
		double s;

		if (!r) {
			best = -1;
			break;
		}
		while ((rc = trace_reader_next(r, rec, error)) > 0)
			n++;
		trace_reader_free(r);
		if (rc < 0) {
			best = -1;
			break;
		}
		s = (g_get_monotonic_time() - t0) / 1e6;
		if (i == 0 || s < best)
			best = s;
		*records = n;
	}
	g_free(rec);
	return best;
}

static uint64_t file_size(const char *path)
{
	GStatBuf st;

	return g_stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int bench_trace(const struct bench_trace_opts *o)
{
	uint64_t n = o->records, repeat = o->repeat, nt = 0, nb = 0;
	int status = 0;
	GError *error = NULL;
	char *dir, *text, *bin;
	double st, sb;
	gint64 t0;

	dir = g_dir_make_tmp("ksmsim-bench-trace-XXXXXX", &error);
	if (!dir) {
		reportf("ksmsim bench trace", "%s", error->message);
		g_error_free(error);
		return EXIT_USAGE;
	}
	text = g_build_filename(dir, "bench.ksmt", NULL);
	bin = g_build_filename(dir, "bench.ksmb", NULL);

	printf("generating %" G_GUINT64_FORMAT " records in %s ...\n", n, dir);
	fflush(stdout);
	t0 = g_get_monotonic_time();
	if (!generate(text, bin, n, &error))
		goto fail;
	printf("generated in %.1f s: text %.1f MB, binary %.1f MB (%.2f bytes/record)\n",
	       (g_get_monotonic_time() - t0) / 1e6, file_size(text) / 1e6, file_size(bin) / 1e6,
	       (double)file_size(bin) / n);
	fflush(stdout);

	st = time_read(text, (int)repeat, &nt, &error);
	if (st < 0)
		goto fail;
	sb = time_read(bin, (int)repeat, &nb, &error);
	if (sb < 0)
		goto fail;
	printf("\n%-8s %12s %10s %14s %10s\n", "form", "records", "seconds", "records/s", "MB/s");
	printf("%-8s %12" G_GUINT64_FORMAT " %10.3f %14.0f %10.1f\n", "text", nt, st, nt / st,
	       file_size(text) / st / 1e6);
	printf("%-8s %12" G_GUINT64_FORMAT " %10.3f %14.0f %10.1f\n", "binary", nb, sb, nb / sb,
	       file_size(bin) / sb / 1e6);
	printf("\nbinary: %.1f M records/s (target 10); text: %.1f M records/s\n",
	       nb / sb / 1e6, nt / st / 1e6);
	goto out;
fail:
	reportf("ksmsim bench trace", "%s", error->message);
	g_error_free(error);
	status = EXIT_USAGE;
out:
	g_unlink(text);
	g_unlink(bin);
	g_rmdir(dir);
	g_free(text);
	g_free(bin);
	g_free(dir);
	return status;
}
