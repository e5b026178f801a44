// SPDX-License-Identifier: GPL-2.0-or-later
/* The progress line's wording (sim/progress.c) and its never-on-stdout rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/progress.h"

static const char *fmt(const char *phase, uint64_t done, uint64_t pos, uint64_t size,
		       int64_t us)
{
	static char buf[200];
	progress_format(buf, sizeof(buf), phase, "records", done, pos, size, us);
	return buf;
}

static void test_lines(void **state)
{
	assert_string_equal(fmt("running", 1234, 50, 100, 2000000),
			    "running: 1234 records, 50.0%, 617/s, ETA 2s");
	/* size unknown (a pipe): no share, no ETA */
	assert_string_equal(fmt("running", 1234, 50, 0, 2000000), "running: 1234 records, 617/s");
	/* nothing counted yet: the share only */
	assert_string_equal(fmt("running", 0, 121, 1000, 500000), "running: 12.1%");
	/* too early for a rate */
	assert_string_equal(fmt("running", 5, 1, 2, 10000), "running: 5 records, 50.0%");
	/* big rates and long ETAs stay short */
	assert_string_equal(fmt("", 12345678, 1, 100, 10000000),
			    "12345678 records, 1.0%, 1.23M/s, ETA 16m30s");
	assert_string_equal(fmt("x", 20000, 1, 1000, 10000000),
			    "x: 20000 records, 0.1%, 2000/s, ETA 2h46m");
	/* done */
	assert_string_equal(fmt("running", 10, 100, 100, 3000000),
			    "running: 10 records, 100.0%, 3/s");
	assert_string_equal(fmt("running", 10, 200, 100, 3000000),
			    "running: 10 records, 100.0%, 3/s");
}

static void test_truncates(void **state)
{
	char small[16];
	progress_format(small, sizeof(small), "a long phase name", "records", 1, 1, 2, 1000000);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* Shown or not, nothing reaches standard output. */
static void test_stdout_untouched(void **state)
{
	fflush(stdout);
	char path[] = "/tmp/ksmsim-progress-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	int saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	for (int mode = PROGRESS_AUTO; mode <= PROGRESS_NEVER; mode++) {
		struct progress *p = progress_new("test", (enum progress_mode)mode);
		assert_int_equal(progress_shown(p), mode == PROGRESS_ALWAYS ||
				 (mode == PROGRESS_AUTO && isatty(STDERR_FILENO)));
		progress_phase(p, "phase", "pages");
		for (uint64_t i = 0; i < 1000; i++)
			progress_update(p, i, i, 1000);
		progress_finish(p);
		assert_non_null(strstr(progress_line(p), "phase: 999 pages"));
		progress_free(p);
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_truncates),
		cmocka_unit_test(test_stdout_untouched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
