// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The page content model against traces/FORMAT.md: exact bytes of every form, the
 * SplitMix64 check values, memcmp order on random pairs, interning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "sim/content.h"

#define PAGE 4096

/* An independent, deliberately plain page builder for cross-checks. */
static void plain_rand(uint8_t *page, uint64_t seed)
{
	for (int i = 0; i < 512; i++) {
		seed += 0x9E3779B97F4A7C15ull;
		uint64_t z = seed;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		z ^= z >> 31;
		for (int b = 0; b < 8; b++)
			page[i * 8 + b] = (uint8_t)(z >> (8 * b));
	}
}

static struct trace_content tc_word(unsigned i, uint64_t v)
{
	struct trace_content t = { .form = CONTENT_WORD, .off = i, .value = v };
	return t;
}

static void test_splitmix_check_values(void **state)
{
	uint64_t s = 0;
	assert_true(splitmix64_next(&s) == UINT64_C(0xE220A8397B1DCDAF));
	assert_true(splitmix64_next(&s) == UINT64_C(0x6E789E6AA1B965F4));
	content *c = content_rand(0);
	uint8_t buf[PAGE];
	content_materialize(c, buf);
	/* little-endian words */
	assert_int_equal(buf[0], 0xAF);
	assert_int_equal(buf[7], 0xE2);
	assert_int_equal(buf[8], 0xF4);
	content_unref(c);
}

static void test_forms_exact(void **state)
{
	uint8_t want[PAGE], got[PAGE];
	struct trace_content t;

	content *z = content_zero();
	content_materialize(z, got);
	memset(want, 0, PAGE);
	assert_memory_equal(got, want, PAGE);
	assert_true(content_is_zero(z));

	t = (struct trace_content){ .form = CONTENT_BYTE, .value = 0xab };
	content *b = content_apply(NULL, &t);
	memset(want, 0xab, PAGE);
	content_materialize(b, got);
	assert_memory_equal(got, want, PAGE);
	assert_false(content_is_zero(b));

	/* word on byte:ab */
	t = tc_word(3, 0x0102030405060708ull);
	content *w = content_apply(b, &t);
	uint8_t le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	memcpy(want + 24, le, 8);
	content_materialize(w, got);
	assert_memory_equal(got, want, PAGE);

	/* patch: first len bytes of rand:seed at off */
	t = (struct trace_content){ .form = CONTENT_PATCH, .off = 100, .len = 50, .value = 9 };
	content *p = content_apply(w, &t);
	uint8_t r[PAGE];
	plain_rand(r, 9);
	memcpy(want + 100, r, 50);
	content_materialize(p, got);
	assert_memory_equal(got, want, PAGE);

	/* bytes at the very end of the page */
	t = (struct trace_content){ .form = CONTENT_BYTES, .off = 4093, .len = 3 };
	t.data[0] = 1;
	t.data[1] = 2;
	t.data[2] = 3;
	content *y = content_apply(p, &t);
	want[4093] = 1;
	want[4094] = 2;
	want[4095] = 3;
	content_materialize(y, got);
	assert_memory_equal(got, want, PAGE);

	/* a modification of a page not yet present starts from zero */
	t = tc_word(511, 1);
	content *n = content_apply(NULL, &t);
	memset(want, 0, PAGE);
	want[4088] = 1;
	content_materialize(n, got);
	assert_memory_equal(got, want, PAGE);

	content_unref(z);
	content_unref(b);
	content_unref(w);
	content_unref(p);
	content_unref(y);
	content_unref(n);
}

static void test_same_bytes_two_routes(void **state)
{
	/* rand:0 == zero + patch:0:4096:0 (as in the conformance content_forms case) */
	content *a = content_rand(0);
	struct trace_content t = { .form = CONTENT_PATCH, .off = 0, .len = 4096, .value = 0 };
	content *b = content_apply(NULL, &t);
	assert_int_equal(content_cmp(a, b), 0);
	assert_true(content_equal(a, b));
	assert_true(content_digest(a) == content_digest(b));

	/* byte:11 then bytes that change nothing is byte:11, the same object */
	struct trace_content tb = { .form = CONTENT_BYTE, .value = 0x11 };
	content *c = content_apply(NULL, &tb);
	struct trace_content tx = { .form = CONTENT_BYTES, .off = 10, .len = 2 };
	tx.data[0] = tx.data[1] = 0x11;
	content *d = content_apply(c, &tx);
	assert_ptr_equal(c, d);

	/* overwriting every byte with zero words gives the canonical zero page */
	content *e = content_ref(c);
	for (unsigned i = 0; i < 512; i++) {
		struct trace_content tw = tc_word(i, 0);
		content *next = content_apply(e, &tw);
		content_unref(e);
		e = next;
	}
	assert_true(content_is_zero(e));
	content_unref(a);
	content_unref(b);
	content_unref(c);
	content_unref(d);
	content_unref(e);
}

static void test_interning(void **state)
{
	content *a = content_rand(77), *b = content_rand(77);
	assert_ptr_equal(a, b);
	struct trace_content t = tc_word(0, 5);
	content *c = content_apply(a, &t), *d = content_apply(b, &t);
	assert_ptr_equal(c, d);
	uint64_t objs, bytes;
	content_stats(&objs, &bytes);
	assert_true(objs >= 2);
	content_unref(a);
	content_unref(b);
	content_unref(c);
	content_unref(d);
}

/* memcmp order of the materialised bytes, on random pairs of related pages. */
static void test_cmp_matches_memcmp(void **state)
{
	uint64_t rng = 12345;
	uint8_t pa[PAGE], pb[PAGE];
	for (int iter = 0; iter < 3000; iter++) {
		content *x[2];
		for (int j = 0; j < 2; j++) {
			uint64_t r = splitmix64_next(&rng);
			struct trace_content t = { 0 };
			switch (r % 3) {
			case 0: t.form = CONTENT_ZERO; break;
			case 1: t.form = CONTENT_BYTE; t.value = (r >> 8) % 3; break;
			default: t.form = CONTENT_RAND; t.value = (r >> 8) % 4; break;
			}
			x[j] = content_apply(NULL, &t);
			int mods = (int)((r >> 16) % 4);
			for (int m = 0; m < mods; m++) {
				uint64_t q = splitmix64_next(&rng);
				struct trace_content u = { 0 };
				switch (q % 3) {
				case 0:
					u = tc_word((q >> 8) % 4 == 0 ? 0 : (unsigned)((q >> 12) % 512), (q >> 20) % 3);
					break;
				case 1:
					u.form = CONTENT_PATCH;
					u.off = (uint32_t)((q >> 8) % 4000);
					u.len = (uint32_t)((q >> 20) % 96) + 1;
					u.value = (q >> 30) % 3;
					break;
				default:
					u.form = CONTENT_BYTES;
					u.off = (uint32_t)((q >> 8) % 16);
					u.len = 1;
					u.data[0] = (uint8_t)((q >> 24) % 2);
					break;
				}
				content *next = content_apply(x[j], &u);
				content_unref(x[j]);
				x[j] = next;
			}
		}
		content_materialize(x[0], pa);
		content_materialize(x[1], pb);
		int want = memcmp(pa, pb, PAGE);
		int got = content_cmp(x[0], x[1]);
		assert_int_equal(want < 0 ? -1 : want > 0, got < 0 ? -1 : got > 0);
		assert_int_equal(content_cmp(x[1], x[0]) < 0 ? -1 : content_cmp(x[1], x[0]) > 0,
				 want < 0 ? 1 : want > 0 ? -1 : 0);
		assert_int_equal(content_is_zero(x[0]), !memcmp(pa, (uint8_t[PAGE]){ 0 }, PAGE));
		content_unref(x[0]);
		content_unref(x[1]);
	}
}

/* Random edit sequences: the content's bytes always equal a plain byte array's. */
static void test_edits_match_plain_page(void **state)
{
	uint64_t rng = 777;
	uint8_t plain[PAGE], got[PAGE];
	for (int iter = 0; iter < 400; iter++) {
		uint64_t r = splitmix64_next(&rng);
		content *c;
		if (r % 3 == 0) {
			c = content_zero();
			memset(plain, 0, PAGE);
		} else if (r % 3 == 1) {
			struct trace_content t = { .form = CONTENT_BYTE, .value = 0x5a };
			c = content_apply(NULL, &t);
			memset(plain, 0x5a, PAGE);
		} else {
			c = content_rand(r >> 8);
			plain_rand(plain, r >> 8);
		}
		int edits = (int)(splitmix64_next(&rng) % 60);
		for (int e = 0; e < edits; e++) {
			uint64_t q = splitmix64_next(&rng);
			struct trace_content u = { 0 };
			switch (q % 3) {
			case 0:
				u = tc_word((unsigned)((q >> 8) % 512), (q >> 20) % 4);
				{
					uint64_t v = u.value;
					for (int b = 0; b < 8; b++)
						plain[u.off * 8 + b] = (uint8_t)(v >> (8 * b));
				}
				break;
			case 1: {
				u.form = CONTENT_PATCH;
				u.len = (uint32_t)((q >> 8) % 200) + 1;
				u.off = (uint32_t)((q >> 20) % (PAGE - u.len + 1));
				u.value = q >> 40;
				uint8_t rp[PAGE];
				plain_rand(rp, u.value);
				memcpy(plain + u.off, rp, u.len);
				break;
			}
			default:
				u.form = CONTENT_BYTES;
				u.len = (uint32_t)((q >> 8) % 12) + 1;
				u.off = (uint32_t)((q >> 20) % (PAGE - u.len + 1));
				for (unsigned b = 0; b < u.len; b++) {
					/* often the byte already there, so runs and gaps get exercised */
					u.data[b] = (q >> (b % 8)) & 1 ? plain[u.off + b] : (uint8_t)(q >> 32);
					plain[u.off + b] = u.data[b];
				}
				break;
			}
			content *next = content_apply(c, &u);
			content_unref(c);
			c = next;
			content_materialize(c, got);
			assert_memory_equal(got, plain, PAGE);
		}
		content_unref(c);
	}
}

static uint64_t sum_hash(const void *page)
{
	const uint64_t *w = page;
	uint64_t s = 0;
	for (int i = 0; i < 512; i++)
		s = s * 31 + w[i];
	return s;
}

static void test_checksum_cached(void **state)
{
	content *c = content_rand(5);
	uint64_t computed = 0;
	uint64_t a = content_checksum(c, sum_hash, &computed);
	uint64_t b = content_checksum(c, sum_hash, &computed);
	assert_true(a == b);
	assert_int_equal(computed, 1);
	uint8_t buf[PAGE];
	content_materialize(c, buf);
	assert_true(a == sum_hash(buf));
	content_unref(c);
}

/* Memory: many distinct rand pages cost far less than 4 KiB each. */
static void test_compact(void **state)
{
	enum { N = 100000 };
	content **v = malloc(N * sizeof(*v));
	uint64_t objs0, bytes0, objs1, bytes1;
	content_stats(&objs0, &bytes0);
	for (int i = 0; i < N; i++)
		v[i] = content_rand(1000000 + (uint64_t)i);
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1 - objs0, N);
	assert_true((bytes1 - bytes0) / N < 256);
	for (int i = 0; i < N; i++)
		content_unref(v[i]);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splitmix_check_values),
		cmocka_unit_test(test_forms_exact),
		cmocka_unit_test(test_same_bytes_two_routes),
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_cmp_matches_memcmp),
		cmocka_unit_test(test_edits_match_plain_page),
		cmocka_unit_test(test_checksum_cached),
		cmocka_unit_test(test_compact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
