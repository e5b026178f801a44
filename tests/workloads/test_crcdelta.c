// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CRC-invisible deltas (workloads/crcdelta.c): both CRCs of a page stay put
 * while its bytes, xxhash and jhash2 change. Checked twice: on pages built
 * by the generator's own page model, and on every `bytes:` write of a
 * generated crc-adversarial trace (argv[1]) replayed through the project's
 * content model, which knows nothing of the generator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>
#include "hashes/hash.h"
#include "hashes/hash.h"
#include "content/content.h"
#include "traces/reader.h"
#include "workloads/crcdelta.h"

static const char *trace_path;

static uint64_t h(const char *name, const uint8_t *page)
{
	const struct page_hash *ph = hash_lookup(name);

	assert_non_null(ph);
	return ph->fn(page);
}

static void test_page_model(void **state)
{
	uint8_t b[16];

	/* FORMAT.md's check values for SplitMix64 from state 0. */
	crcdelta_rand_bytes(0, 0, 16, b);
	uint64_t w0, w1;
	memcpy(&w0, b, 8);
	memcpy(&w1, b + 8, 8);
	assert_int_equal(w0, UINT64_C(0xE220A8397B1DCDAF));
	assert_int_equal(w1, UINT64_C(0x6E789E6AA1B965F4));
	/* A window equals the same bytes of the whole page. */
	uint8_t page[4096];

	crcdelta_rand_bytes(12345, 0, 4096, page);
	crcdelta_rand_bytes(12345, 1531, 16, b);
	assert_memory_equal(b, page + 1531, 16);
}

/* The basis: 64 vectors (128 unknowns, 64 independent conditions), each invisible to both CRCs. */
static void test_kernel(void **state)
{
	struct crc_kernel k;
	uint8_t zero[4096] = { 0 }, page[4096] = { 0 };

	crcdelta_kernel(&k);
	assert_int_equal(k.dim, CRCDELTA_BITS - 64);
	for (unsigned j = 0; j < k.dim; j++) {
		memcpy(page + 100, k.basis[j], CRCDELTA_LEN);
		assert_memory_not_equal(page, zero, 4096);
		assert_int_equal(crc32c(0, page, 4096), crc32c(0, zero, 4096));
		assert_int_equal(crc32(0, page, 4096), crc32(0, zero, 4096));
	}
	/* a random pick is a nonzero element, and the same state picks the same one */
	uint64_t s1 = 42, s2 = 42;
	uint8_t d1[CRCDELTA_LEN], d2[CRCDELTA_LEN], none[CRCDELTA_LEN] = { 0 };

	crcdelta_pick(&k, &s1, d1);
	crcdelta_pick(&k, &s2, d2);
	assert_memory_equal(d1, d2, CRCDELTA_LEN);
	assert_memory_not_equal(d1, none, CRCDELTA_LEN);
	assert_int_equal(s1, s2);
}

static void test_deltas(void **state)
{
	static const unsigned offs[] = { 0, 512, 1536, 2560, 3584, 4080, 777 };
	uint8_t a[4096], b[4096];

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		for (uint64_t pick = 0; pick < 5; pick++) {
			struct crc_delta d;
			uint64_t seed = pick * 1000003 + offs[i];

			assert_true(crcdelta_solve(offs[i], pick, &d));
			crcdelta_rand_bytes(seed, 0, 4096, a);
			memcpy(b, a, sizeof(b));
			for (unsigned k = 0; k < CRCDELTA_LEN; k++)
				b[d.off + k] ^= d.d[k];
			assert_memory_not_equal(a, b, 4096);
			assert_int_equal(crc32c(0, a, 4096), crc32c(0, b, 4096));
			assert_int_equal(crc32(0, a, 4096), crc32(0, b, 4096));
			/* The project's checksum registry agrees... */
			assert_int_equal(h("crc32c", a), h("crc32c", b));
			assert_int_equal(h("crc32", a), h("crc32", b));
			/* ...and the hashes that are not linear see the change. */
			assert_int_not_equal(h("xxhash", a), h("xxhash", b));
			assert_int_not_equal(h("jhash2", a), h("jhash2", b));
		}
	assert_false(crcdelta_solve(4090, 0, &(struct crc_delta){ 0 }));
}

/* Replay the generated trace's contents; check every bytes: write. */
static void test_trace(void **state)
{
	GError *error = NULL;
	trace_reader *r = trace_reader_open(trace_path, &error);
	GHashTable *pages = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
						  (GDestroyNotify)content_unref);
	struct trace_record *rec = g_new(struct trace_record, 1);
	struct trace_content *tc = g_new0(struct trace_content, 1);
	uint8_t before[4096], after[4096];
	uint64_t crafted = 0, ordinary = 0;
	int got;

	if (!r)
		fail_msg("%s", error->message);
	while ((got = trace_reader_next(r, rec, &error)) == 1) {
		if (rec->verb != TRACE_WRITE && rec->verb != TRACE_FILL && rec->verb != TRACE_FILLSEQ)
			continue;
		for (uint64_t i = 0; i < rec->npages; i++) {
			char *key = g_strdup_printf("%s:%" G_GINT64_MODIFIER "x", rec->mm, rec->vpn + i);
			content *cur = g_hash_table_lookup(pages, key);
			content *next;

			if (rec->verb == TRACE_FILLSEQ) {
				tc->form = CONTENT_RAND;
				tc->value = rec->seed + i;
				next = content_apply(cur, tc);
			} else {
				next = content_apply(cur, &rec->content);
			}
			if (rec->verb == TRACE_WRITE &&
			    (rec->content.form == CONTENT_BYTES || rec->content.form == CONTENT_WORD)) {
				assert_non_null(cur);
				content_materialize(cur, before);
				content_materialize(next, after);
				assert_memory_not_equal(before, after, 4096);
				assert_int_not_equal(h("xxhash", before), h("xxhash", after));
				if (rec->content.form == CONTENT_BYTES) {
					assert_int_equal(h("crc32c", before), h("crc32c", after));
					assert_int_equal(h("crc32", before), h("crc32", after));
					crafted++;
				} else {
					assert_int_not_equal(h("crc32c", before), h("crc32c", after));
					ordinary++;
				}
			}
			g_hash_table_replace(pages, key, next);
		}
	}
	if (got < 0)
		fail_msg("%s", error->message);
	assert_true(crafted > 1000);
	assert_true(ordinary > 100);
	printf("# %" G_GUINT64_FORMAT " crafted writes kept both CRCs, %" G_GUINT64_FORMAT
	       " ordinary writes changed them\n", crafted, ordinary);
	trace_reader_free(r);
	g_hash_table_destroy(pages);
	g_free(rec);
	g_free(tc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_model),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_deltas),
		cmocka_unit_test(test_trace),
	};

	trace_path = argc > 1 ? argv[1] : NULL;
	if (!trace_path) {
		fprintf(stderr, "usage: test_crcdelta CRC-ADVERSARIAL-TRACE\n");
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
