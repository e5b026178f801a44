// SPDX-License-Identifier: GPL-2.0-or-later
/* util/: the one number rule, clashing files, where atomic outputs land. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/file_id.h"
#include "util/parse.h"

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	assert_true(parse_u64("0", 10, &v));
	assert_int_equal(v, 0);
	assert_true(parse_u64("0100", 1000, &v));
	assert_int_equal(v, 100);	/* decimal, as in traces: not octal */
	assert_true(parse_u64("18446744073709551615", UINT64_MAX, &v));
	assert_true(v == UINT64_MAX);
	v = 7;
	const char *bad[] = { "", " 5", "5 ", "-5", "+5", " -5", "0x10", "1e3", "5a",
			      "18446744073709551616", "99999999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(parse_u64(bad[i], UINT64_MAX, &v));
		assert_int_equal(v, 7);	/* untouched on failure */
	}
	assert_false(parse_u64("11", 10, &v));
	assert_true(parse_u64("10", 10, &v));
}

/* escape_term: what a terminal must never get raw, and what it keeps. */
static void test_escape_term(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "a\nb", "a\\nb" },
		{ "\x1b[31mred", "\\x1b[31mred" },
		{ "a\rb\tc\x07", "a\\rb\\tc\\x07" },
		{ "del\x7f", "del\\x7f" },
		{ "csi\x9b", "csi\\x9b" },		/* a raw 0x9b: no UTF-8, CSI on 8-bit terminals */
		{ "c1\xc2\x9b", "c1\\u009b" },	/* U+009B, valid UTF-8 but a C1 control */
		{ "\xff\xfe", "\\xff\\xfe" },
		{ "\xe2\x82", "\\xe2\\x82" },	/* a cut sequence */
		{ "\xc0\xaf", "\\xc0\\xaf" },	/* an overlong '/' */
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },	/* UTF-8 kept */
		{ "back\\slash", "back\\slash" },	/* not escaped twice */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = escape_term(cases[i].in, 0);

		assert_string_equal(got, cases[i].out);
		g_free(got);
	}
	/* too long: head, "[...]", tail, at most max bytes, cut between characters */
	GString *big = g_string_new("head");
	for (int i = 0; i < 5000; i++)
		g_string_append(big, "\xc3\xa9\n");
	g_string_append(big, "tail");
	char *got = escape_term(big->str, 1000);
	assert_true(strlen(got) <= 1000);
	assert_true(g_str_has_prefix(got, "head"));
	assert_true(g_str_has_suffix(got, "tail"));
	assert_non_null(strstr(got, "[...]"));
	assert_true(g_utf8_validate(got, -1, NULL));
	assert_null(strchr(got, '\n'));
	g_free(got);
	g_string_free(big, TRUE);
}

static void test_parse_double(void **state)
{
	double d = -1;

	assert_true(parse_double("0.5", &d));
	assert_true(d == 0.5);
	assert_true(parse_double("1e3", &d));
	assert_true(d == 1000);
	/* a subnormal is representable: strtod's ERANGE is no refusal (retime --factor) */
	assert_true(parse_double("1e-308", &d));
	assert_true(d > 0 && d < 2.3e-308);
	d = -1;
	const char *bad[] = { "", " 1", "1 ", "nan", "inf", "0x1p3", "1,5", "abc", "1e999",
			      "1e-400" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(parse_double(bad[i], &d));
		assert_true(d == -1);
	}
}

static char *dir;

static int in_temp_dir(void **state)
{
	dir = g_dir_make_tmp("ksmsim-util-XXXXXX", NULL);
	assert_non_null(dir);
	assert_int_equal(chdir(dir), 0);
	return 0;
}

static int out_of_temp_dir(void **state)
{
	assert_int_equal(chdir("/"), 0);
	char *cmd = g_strdup_printf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	g_free(cmd);
	g_free(dir);
	return 0;
}

static void touch(const char *path)
{
	assert_true(g_file_set_contents(path, "x\n", -1, NULL));
}

static bool distinct(const char *in, const char *out1, const char *out2, char **msg)
{
	struct file_use uses[] = {
		{ "--trace", in, false }, { "--marks-csv", out1, true }, { "--csv", out2, true },
	};
	GError *error = NULL;
	bool ok = file_uses_distinct(uses, 3, &error);

	*msg = error ? g_strdup(error->message) : NULL;
	g_clear_error(&error);
	return ok;
}

static void test_file_uses(void **state)
{
	char *msg;

	touch("t.ksmt");
	assert_true(distinct("t.ksmt", "m.csv", "s.csv", &msg));
	assert_false(distinct("t.ksmt", "t.ksmt", NULL, &msg));
	assert_string_equal(msg, "--marks-csv t.ksmt: same file as --trace t.ksmt");
	g_free(msg);
	/* not created yet, spelt two ways */
	assert_false(distinct("t.ksmt", "m.csv", "./m.csv", &msg));
	assert_string_equal(msg, "--csv ./m.csv: same file as --marks-csv m.csv");
	g_free(msg);
	/* a symlink to the input */
	assert_int_equal(symlink("t.ksmt", "l.csv"), 0);
	assert_false(distinct("t.ksmt", "l.csv", NULL, &msg));
	g_free(msg);
	/* a hard link */
	assert_int_equal(link("t.ksmt", "h.csv"), 0);
	assert_false(distinct("t.ksmt", NULL, "h.csv", &msg));
	g_free(msg);
	/* standard input and output are two streams; two outputs to stdout are not */
	assert_true(distinct("-", "-", NULL, &msg));
	assert_false(distinct("t.ksmt", "-", "-", &msg));
	g_free(msg);
	/* a device may take several outputs */
	assert_true(distinct("t.ksmt", "/dev/null", "/dev/null", &msg));
	/* two inputs may be one file */
	struct file_use two_in[] = { { "a", "t.ksmt", false }, { "b", "t.ksmt", false } };
	assert_true(file_uses_distinct(two_in, 2, NULL));
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void write_out(const char *path, const char *text)
{
	GError *error = NULL;
	atomic_file *f = atomic_file_open(path, &error);

	assert_non_null(f);
	fputs(text, atomic_file_stream(f));
	assert_true(atomic_file_commit(f, &error));
}

static void test_atomic_modes(void **state)
{
	mode_t old = umask(027);

	write_out("new.csv", "a\n");
	assert_int_equal(mode_of("new.csv"), 0640);
	assert_int_equal(chmod("new.csv", 0604), 0);
	write_out("new.csv", "b\n");
	assert_int_equal(mode_of("new.csv"), 0604);	/* a replaced file keeps its mode */
	umask(old);
}

static void test_atomic_symlink(void **state)
{
	struct stat st;
	char *text;

	touch("target.csv");
	assert_int_equal(symlink("target.csv", "link.csv"), 0);
	write_out("link.csv", "through\n");
	assert_int_equal(lstat("link.csv", &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_true(g_file_get_contents("target.csv", &text, NULL, NULL));
	assert_string_equal(text, "through\n");
	g_free(text);
}

static void test_atomic_abort(void **state)
{
	GError *error = NULL;
	atomic_file *f = atomic_file_open("gone.csv", &error);

	assert_non_null(f);
	fputs("partial\n", atomic_file_stream(f));
	atomic_file_abort(f);
	GDir *d = g_dir_open(".", 0, NULL);
	assert_null(g_dir_read_name(d));	/* neither the file nor its temporary */
	g_dir_close(d);
}

static void test_atomic_refused(void **state)
{
	GError *error = NULL;

	assert_int_equal(mkdir("sub", 0700), 0);
	assert_null(atomic_file_open("sub", &error));
	assert_string_equal(error->message, "sub: is a directory");
	g_clear_error(&error);
	assert_null(atomic_file_open("", &error));
	assert_string_equal(error->message, "empty output path");
	g_clear_error(&error);
	assert_null(atomic_file_open("no/such/dir.csv", &error));
	assert_string_equal(error->message,
			    "no/such/dir.csv: cannot create: No such file or directory");
	g_clear_error(&error);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_escape_term),
		cmocka_unit_test_setup_teardown(test_file_uses, in_temp_dir, out_of_temp_dir),
		cmocka_unit_test_setup_teardown(test_atomic_modes, in_temp_dir, out_of_temp_dir),
		cmocka_unit_test_setup_teardown(test_atomic_symlink, in_temp_dir, out_of_temp_dir),
		cmocka_unit_test_setup_teardown(test_atomic_abort, in_temp_dir, out_of_temp_dir),
		cmocka_unit_test_setup_teardown(test_atomic_refused, in_temp_dir, out_of_temp_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
