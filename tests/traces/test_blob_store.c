// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader's blob store (traces/blob_store.h): every blob comes back with
 * its own bytes, from a memory slab, from the file or from the part not
 * written yet, across slab and file boundaries; --max-disk refuses the
 * blob past it; a folder the file cannot be made in is named.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "traces/blob_store.h"
#include "traces/trace.h"

/* blob id's bytes: its id in every word, so a blob from the wrong place shows */
static void fill(uint8_t *p, uint64_t id)
{
	for (size_t i = 0; i < TRACE_PAGE_SIZE; i += 8)
		memcpy(p + i, &(uint64_t){ id * 0x9e3779b97f4a7c15ull + i }, 8);
}

static void every_blob_back(uint64_t mem_max, uint64_t n)
{
	struct blob_store b;
	uint8_t got[TRACE_PAGE_SIZE], want[TRACE_PAGE_SIZE];
	char *why = NULL;

	blob_store_init(&b);
	if (mem_max != UINT64_MAX)
		blob_store_spill(&b, mem_max, 0, NULL);
	for (uint64_t id = 0; id < n; id++) {
		uint8_t *to = blob_store_new(&b, &why);

		assert_non_null(to);
		fill(to, id);
		/* the newest and an early one, as a record may name them at once */
		assert_true(blob_store_get(&b, id, got, &why));
		fill(want, id);
		assert_memory_equal(got, want, TRACE_PAGE_SIZE);
		assert_true(blob_store_get(&b, id / 3, got, &why));
		fill(want, id / 3);
		assert_memory_equal(got, want, TRACE_PAGE_SIZE);
	}
	for (uint64_t id = 0; id < n; id++) {
		assert_true(blob_store_get(&b, id, got, &why));
		fill(want, id);
		assert_memory_equal(got, want, TRACE_PAGE_SIZE);
	}
	assert_int_equal(blob_store_in_memory(&b), MIN(n, mem_max));
	assert_int_equal(blob_store_on_disk(&b), n - MIN(n, mem_max));
	blob_store_clear(&b);
}

static void test_memory_only(void **state)
{
	(void)state;
	every_blob_back(UINT64_MAX, 3 * BLOB_SLAB + 5);
}

static void test_spilled(void **state)
{
	(void)state;
	/* none, part of a slab, a slab and a bit in memory; several file writes */
	every_blob_back(0, 4 * BLOB_SLAB + 7);
	every_blob_back(5, 3 * BLOB_SLAB);
	every_blob_back(BLOB_SLAB + 1, 3 * BLOB_SLAB + 1);
}

static void test_max_disk(void **state)
{
	struct blob_store b;
	char *why = NULL;

	(void)state;
	blob_store_init(&b);
	blob_store_spill(&b, 2, 3 * TRACE_PAGE_SIZE, "past the limit (--max-disk)");
	for (int i = 0; i < 5; i++)
		assert_non_null(blob_store_new(&b, &why));
	assert_null(blob_store_new(&b, &why));
	assert_string_equal(why, "blob 5: past the limit (--max-disk)");
	g_free(why);
	blob_store_clear(&b);
}

static void test_no_folder(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	/* g_get_tmp_dir reads TMPDIR once, so a child sets it */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct blob_store b;
		char *why = NULL, *want;

		g_setenv("TMPDIR", "/nonexistent-ksmsim", TRUE);
		blob_store_init(&b);
		blob_store_spill(&b, 0, 0, NULL);
		want = g_strdup_printf("blob 0: cannot keep the blobs beyond the memory limit in "
				       "/nonexistent-ksmsim: %s", g_strerror(ENOENT));
		_exit(!blob_store_new(&b, &why) && strcmp(why, want) == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_folder),
		cmocka_unit_test(test_memory_only),
		cmocka_unit_test(test_spilled),
		cmocka_unit_test(test_max_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
