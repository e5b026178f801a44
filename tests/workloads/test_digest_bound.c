// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace convert --content digest's per-mm bound (workloads/digest.h): a
 * store that would take one mm past it is refused at its line, before any
 * of its pages is followed, and nothing is written; a store that only
 * rewrites pages already followed is not. With the real bound (2^27) the
 * same trace at 2^28 pages would have crashed inside GLib (issue 46).
 */
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
#include "workloads/digest.h"

static char *trace_file(const char *dir, const char *name, const char *text)
{
	char *path = g_build_filename(dir, name, NULL);

	assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

static bool convert(const char *in, const char *out, uint64_t cap, GError **error)
{
	trace_reader *r = trace_reader_open(in, error);
	bool ok;

	assert_non_null(r);
	ok = digest_convert_capped(r, out, TRACE_FMT_TEXT, 0, false, cap, error);
	trace_reader_free(r);
	return ok;
}

static void test_bound(void **state)
{
	(void)state;
	char *dir = g_dir_make_tmp("ksmsim-digest-bound-XXXXXX", NULL);
	/* 100 pages of a, then 20 more: 120 > the bound of 110 */
	char *over = trace_file(dir, "over.ksmt",
				"ksmtrace 1\n0 spawn a\n0 map a 0 1000\n"
				"1 fill a 0 100 rand:1\n2 fill a 100 20 byte:07\n");
	/* 100 pages, rewritten whole twice: never past 100 */
	char *rewrite = trace_file(dir, "rewrite.ksmt",
				   "ksmtrace 1\n0 spawn a\n0 map a 0 1000\n"
				   "1 fill a 0 100 rand:1\n2 fill a 0 100 byte:07\n"
				   "3 fillseq a 0 100 0x5\n");
	char *out = g_build_filename(dir, "out.ksmt", NULL);
	GError *error = NULL;

	assert_false(convert(over, out, 110, &error));
	assert_non_null(error);
	assert_non_null(strstr(error->message, "over.ksmt:5: converting to digests would follow "
					       "more than 110 pages of one mm here (120 pages of a"));
	assert_null(strchr(error->message, '\n'));
	g_clear_error(&error);
	assert_false(g_file_test(out, G_FILE_TEST_EXISTS));	/* nothing written */

	assert_true(convert(rewrite, out, 100, &error));
	assert_null(error);
	assert_true(g_file_test(out, G_FILE_TEST_EXISTS));
	/* the bound the command uses holds 2^27 pages, below GLib's ~2^28 */
	assert_true(DIGEST_MM_PAGES_MAX == (UINT64_C(1) << 27));

	g_unlink(out);
	g_unlink(over);
	g_unlink(rewrite);
	g_rmdir(dir);
	g_free(out);
	g_free(over);
	g_free(rewrite);
	g_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_bound) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
