/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the traces tests: every test runs in a fresh temporary
 * directory (the current directory while it runs), so the file names in
 * error messages are short and exact ("t.ksmt:3: ...").
 */
#ifndef KSMSIM_TESTS_TRACES_COMMON_H
#define KSMSIM_TESTS_TRACES_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "traces/reader.h"
#include "traces/writer.h"

static char *test_dir;
static char *test_old_cwd;

G_GNUC_UNUSED static int dir_setup(void **state)
{
	GError *error = NULL;

	test_old_cwd = g_get_current_dir();
	test_dir = g_dir_make_tmp("ksmsim-traces-XXXXXX", &error);
	assert_non_null(test_dir);
	assert_int_equal(chdir(test_dir), 0);
	return 0;
}

G_GNUC_UNUSED static int dir_teardown(void **state)
{
	GDir *d = g_dir_open(".", 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d)))
		g_unlink(name);
	if (d)
		g_dir_close(d);
	assert_int_equal(chdir(test_old_cwd), 0);
	g_rmdir(test_dir);
	g_free(test_dir);
	g_free(test_old_cwd);
	return 0;
}

G_GNUC_UNUSED static void put_file(const char *name, const void *data, size_t len)
{
	GError *error = NULL;

	assert_true(g_file_set_contents(name, data, len, &error));
}

/*
 * Reads every record of the file; returns NULL when the whole trace is
 * accepted, else the error message (to free). *count gets the records read.
 */
G_GNUC_UNUSED static char *read_file_all(const char *name, uint64_t *count)
{
	GError *error = NULL;
	struct trace_record *rec = g_new0(struct trace_record, 1);
	trace_reader *r = trace_reader_open(name, &error);
	uint64_t n = 0;
	int rc;
	char *msg = NULL;

	if (!r)
		goto out;
	while ((rc = trace_reader_next(r, rec, &error)) > 0)
		n++;
	if (rc < 0)
		assert_non_null(error);
	else
		assert_int_equal(trace_reader_next(r, rec, &error), 0);
	trace_reader_free(r);
out:
	if (error) {
		msg = g_strdup(error->message);
		g_error_free(error);
	}
	if (count)
		*count = n;
	g_free(rec);
	return msg;
}

G_GNUC_UNUSED static char *read_text(const char *text, uint64_t *count)
{
	put_file("t.ksmt", text, strlen(text));
	return read_file_all("t.ksmt", count);
}

/* Converts file in to out (format from out's name); returns the error or NULL. */
G_GNUC_UNUSED static char *convert(const char *in, const char *out)
{
	GError *error = NULL;
	struct trace_record *rec = g_new0(struct trace_record, 1);
	trace_reader *r = trace_reader_open(in, &error);
	trace_writer *w = NULL;
	char *msg = NULL;
	int rc = -1;

	if (r) {
		/* the output keeps the input's version, as ksmsim trace convert does */
		int version = trace_reader_version(r, &error);

		if (version > 0)
			w = trace_writer_open_version(out, trace_format_from_path(out), version, &error);
	}
	if (w) {
		while ((rc = trace_reader_next(r, rec, &error)) > 0)
			if (!trace_writer_put(w, rec, &error))
				break;
		if (error)
			trace_writer_abort(w);
		else
			trace_writer_close(w, &error);
	}
	trace_reader_free(r);
	if (error) {
		msg = g_strdup(error->message);
		g_error_free(error);
	}
	g_free(rec);
	return msg;
}

G_GNUC_UNUSED static char *slurp(const char *name, size_t *len)
{
	char *data = NULL;
	gsize n = 0;

	assert_true(g_file_get_contents(name, &data, &n, NULL));
	if (len)
		*len = n;
	return data;
}

/* The file holds exactly text. */
G_GNUC_UNUSED static void assert_file(const char *name, const char *text)
{
	char *data = slurp(name, NULL);

	assert_string_equal(data, text);
	g_free(data);
}

/* The two files have the same bytes. */
G_GNUC_UNUSED static void assert_same_files(const char *a, const char *b)
{
	size_t la, lb;
	char *da = slurp(a, &la), *db = slurp(b, &lb);

	assert_int_equal(la, lb);
	assert_memory_equal(da, db, la);
	g_free(da);
	g_free(db);
}

#endif
