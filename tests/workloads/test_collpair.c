// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Colliding pairs (workloads/collpair.c): within the documented budget the
 * finder gives pairs for jhash2 and xxhash whose two pages differ and hash
 * equal, checked on pages the project's content model builds from
 * `rand:SEED` and `word:I:V` (which knows nothing of the finder); xxh64
 * gives none in a small budget; the same search gives the same pairs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hashes/hash.h"
#include "content/content.h"
#include "workloads/collpair.h"
#include "workloads/crcdelta.h"

#define SEED UINT64_C(0x5eed)
#define WORD 77u

static const struct page_hash *hash(const char *name)
{
	const struct page_hash *h = hash_lookup(name);

	assert_non_null(h);
	return h;
}

/* The page the simulator holds after `rand:seed` then `word:word:v`. */
static void model_page(uint64_t seed, unsigned word, uint64_t v, uint8_t *out)
{
	struct trace_content *tc = g_new0(struct trace_content, 1);
	content *base, *c;

	tc->form = CONTENT_RAND;
	tc->value = seed;
	base = content_apply(NULL, tc);
	memset(tc, 0, sizeof(*tc));
	tc->form = CONTENT_WORD;
	tc->off = word;
	tc->len = 8;
	tc->value = v;
	c = content_apply(base, tc);
	content_materialize(c, out);
	content_unref(c);
	content_unref(base);
	g_free(tc);
}

static void sweep(const char *name, unsigned bits, uint64_t budget, uint64_t want,
		  struct collpair_sweep *sw)
{
	static uint8_t base[COLLPAIR_PAGE];
	struct collpair_search s = { hash(name), bits, base, WORD, 99, budget, want };
	GError *error = NULL;

	collpair_rand_page(SEED, base);
	if (!collpair_find(&s, sw, &error))
		fail_msg("%s", error->message);
	printf("# %s: %" G_GUINT64_FORMAT " pairs in %" G_GUINT64_FORMAT " tries, %.2f s\n",
	       name, sw->npairs, sw->tries, sw->seconds);
}

static void test_page_model(void **state)
{
	uint8_t a[COLLPAIR_PAGE], b[COLLPAIR_PAGE];
	uint64_t w;

	collpair_rand_page(0, a);
	memcpy(&w, a, 8);
	assert_int_equal(w, UINT64_C(0xE220A8397B1DCDAF));	/* FORMAT.md's check value */
	crcdelta_rand_bytes(SEED, 0, COLLPAIR_PAGE, b);
	collpair_rand_page(SEED, a);
	assert_memory_equal(a, b, COLLPAIR_PAGE);
	/* word I is bytes 8I..8I+7, little-endian, as the content model sets it */
	collpair_set_word(a, WORD, UINT64_C(0x0102030405060708));
	assert_int_equal(a[8 * WORD], 0x08);
	assert_int_equal(a[8 * WORD + 7], 0x01);
	model_page(SEED, WORD, UINT64_C(0x0102030405060708), b);
	assert_memory_equal(a, b, COLLPAIR_PAGE);
}

/* Each pair: two different pages of the content model, one checksum. */
static void check_pairs(const char *name, const struct collpair_sweep *sw, unsigned bits)
{
	const struct page_hash *h = hash(name);
	uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
	uint8_t p1[COLLPAIR_PAGE], p2[COLLPAIR_PAGE];

	for (uint64_t i = 0; i < sw->npairs; i++) {
		const struct collpair *p = &sw->pairs[i];

		assert_int_not_equal(p->v1, p->v2);
		model_page(SEED, WORD, p->v1, p1);
		model_page(SEED, WORD, p->v2, p2);
		assert_memory_not_equal(p1, p2, COLLPAIR_PAGE);
		assert_int_equal(h->fn(p1) & mask, h->fn(p2) & mask);
	}
}

static void test_32bit(const char *name)
{
	struct collpair_sweep sw;

	sweep(name, 0, COLLPAIR_DEFAULT_BUDGET, 4, &sw);
	assert_int_equal(sw.npairs, 4);
	assert_true(sw.tries <= COLLPAIR_DEFAULT_BUDGET);
	check_pairs(name, &sw, 32);
	collpair_sweep_clear(&sw);
}

static void test_jhash2(void **state)
{
	test_32bit("jhash2");
}

static void test_xxhash(void **state)
{
	test_32bit("xxhash");
	/* a pair for xxhash is one of XXH64's low 32 bits, not of all 64 */
	struct collpair_sweep sw;
	uint8_t p1[COLLPAIR_PAGE], p2[COLLPAIR_PAGE];

	sweep("xxhash", 0, COLLPAIR_DEFAULT_BUDGET, 1, &sw);
	assert_int_equal(sw.npairs, 1);
	model_page(SEED, WORD, sw.pairs[0].v1, p1);
	model_page(SEED, WORD, sw.pairs[0].v2, p2);
	assert_int_not_equal(hash("xxh64")->fn(p1), hash("xxh64")->fn(p2));
	collpair_sweep_clear(&sw);
}

static void test_64bit(void **state)
{
	struct collpair_sweep sw;

	sweep("xxh64", 0, 1u << 16, 1, &sw);
	assert_int_equal(sw.npairs, 0);
	assert_int_equal(sw.tries, 1u << 16);
	collpair_sweep_clear(&sw);
	/* cut to 16 bits, the same hash gives pairs at once */
	sweep("xxh64", 16, 1u << 16, 50, &sw);
	assert_int_equal(sw.npairs, 50);
	check_pairs("xxh64", &sw, 16);
	collpair_sweep_clear(&sw);
}

/* Same search, same pairs in the same order; no value in two pairs. */
static void test_deterministic(void **state)
{
	struct collpair_sweep a, b;

	sweep("xxh3", 12, 1u << 15, 2000, &a);
	sweep("xxh3", 12, 1u << 15, 2000, &b);
	assert_true(a.npairs > 1000);
	assert_int_equal(a.npairs, b.npairs);
	assert_int_equal(a.tries, b.tries);
	assert_memory_equal(a.pairs, b.pairs, a.npairs * sizeof(*a.pairs));
	check_pairs("xxh3", &a, 12);
	GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);

	for (uint64_t i = 0; i < a.npairs; i++) {
		assert_false(g_hash_table_contains(seen, &a.pairs[i].v1));
		g_hash_table_add(seen, &a.pairs[i].v1);
		assert_false(g_hash_table_contains(seen, &a.pairs[i].v2));
		g_hash_table_add(seen, &a.pairs[i].v2);
	}
	g_hash_table_destroy(seen);
	collpair_sweep_clear(&a);
	collpair_sweep_clear(&b);
	/* and the budget bounds the tries, not the pairs wanted */
	sweep("xxh3", 12, 1000, 1u << 20, &a);
	assert_int_equal(a.tries, 1000);
	collpair_sweep_clear(&a);
}

static void test_bad(void **state)
{
	uint8_t base[COLLPAIR_PAGE] = { 0 };
	struct collpair_search s = { hash("none"), 0, base, 0, 0, 100, 1 };
	struct collpair_sweep sw;
	GError *error = NULL;

	assert_false(collpair_find(&s, &sw, &error));
	assert_non_null(error);
	g_clear_error(&error);
	s.h = hash("jhash2");
	s.word = COLLPAIR_WORDS;
	assert_false(collpair_find(&s, &sw, &error));
	g_clear_error(&error);
	s.word = 0;
	s.budget = COLLPAIR_MAX_BUDGET + 1;
	assert_false(collpair_find(&s, &sw, &error));
	g_clear_error(&error);
	s.budget = 1;
	assert_false(collpair_find(&s, &sw, &error));
	g_clear_error(&error);
	assert_true(collpair_chance(COLLPAIR_DEFAULT_BUDGET, 32) > 0.999);
	assert_true(collpair_chance(COLLPAIR_DEFAULT_BUDGET, 64) < 1e-7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_model),
		cmocka_unit_test(test_jhash2),
		cmocka_unit_test(test_xxhash),
		cmocka_unit_test(test_64bit),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
