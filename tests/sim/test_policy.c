// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The policies' decision rules, driven visit by visit as tests/sim/test_ksm.c
 * drives the kernel's: the parser, the dirty bit, partial hashing and its
 * growth after a miss, and classified trees with the merges they lose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xxhash.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

static void expect_refused(const char *spec, const char *needle)
{
	struct ksm_policy p;
	GError *error = NULL;
	assert_false(ksm_policy_parse(spec, &p, &error));
	assert_non_null(error);
	if (!strstr(error->message, needle))
		fail_msg("'%s': message '%s' lacks '%s'", spec, error->message, needle);
	g_error_free(error);
}

static void test_parse(void **state)
{
	struct ksm_policy p, zero = { 0 };
	assert_true(ksm_policy_parse("kernel", &p, NULL));
	assert_memory_equal(&p, &zero, sizeof(p));
	assert_string_equal(ksm_policy_name(&p), "kernel");
	assert_true(ksm_policy_parse("Dirty-Bit", &p, NULL));
	assert_int_equal(p.detector, KSM_DETECT_DIRTY_BIT);
	assert_string_equal(ksm_policy_name(&p), "dirty-bit");
	assert_true(ksm_policy_parse("partial-hash:k=32", &p, NULL));
	assert_int_equal(p.partial_k, 32);
	assert_int_equal(p.partial_k_max, KSM_PARTIAL_WORDS_MAX);
	assert_string_equal(ksm_policy_name(&p), "partial-hash:k=32,max=1024");
	assert_true(ksm_policy_parse("classified:by=mm,classes=4", &p, NULL));
	assert_int_equal(p.classes, 4);
	assert_int_equal(p.class_by, KSM_CLASS_BY_MM);
	assert_string_equal(ksm_policy_name(&p), "classified:classes=4,by=mm");
	assert_true(ksm_policy_parse("no-gate", &p, NULL));
	assert_int_equal(p.detector, KSM_DETECT_NONE);

	expect_refused("nope", "no such policy (kernel, no-gate");
	expect_refused("classifed", "did you mean 'classified'");
	expect_refused("partial-hash:k=3", "power of 2");
	expect_refused("partial-hash:k=2048", "power of 2");
	expect_refused("partial-hash:k=64,max=32", "below");
	expect_refused("kernel:x=1", "takes no parameters");
	expect_refused("classified:by=foo", "key8 or mm");
	expect_refused("classified:classes=0", "1 to 4096");
	expect_refused("classified:", "nothing after");
	expect_refused("partial-hash:k", "key=value");
	expect_refused("classified:depth=3", "no parameter 'depth'");
}

/*
 * dirty-bit: a written page waits a pass, whatever its bytes; an unwritten
 * one goes to the trees; no checksum is ever computed.
 */
static void test_dirty_bit(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	two_equal_pages(s);

	pass(k, 2);	/* both were written: volatile, bits cleared */
	assert_int_equal(k->pstats.dirty_flushes, 2);
	assert_int_equal(k->pages_unshared + k->pages_shared, 0);
	assert_false(pte_get(mm_of(k, "a"), 0)->dirty);
	pass(k, 2);	/* clean: unstable tree, then a merge */
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->truth.checksums, 0);

	/* A third page rewritten with the bytes it held: still "written". */
	spawn_mergeable(s, "c", 1);
	write_form(s, "c", 0, CONTENT_BYTE, 9, 0);
	pass(k, 3);
	write_form(s, "c", 0, CONTENT_BYTE, 9, 0);
	uint64_t flushes = k->pstats.dirty_flushes;
	pass(k, 3);
	assert_int_equal(k->pstats.dirty_flushes, flushes + 1);
	assert_int_equal(k->pstats.dirty_same_bytes, 1);
	assert_int_equal(k->truth.false_positives, 0);
	assert_int_equal(k->truth.checksums, 0);
	check_invariants(k);
}

/*
 * partial-hash, k = 16: the sampled 32-bit words sit 256 bytes apart, so a
 * change to bytes 8..15 is unseen (a false positive) and one to bytes
 * 256..263 is seen.
 */
static void test_partial_hash_blind_spot(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 1);
	write_form(s, "a", 0, CONTENT_RAND, 1, 0);
	pass(k, 1);
	pass(k, 1);
	assert_int_equal(k->pages_unshared, 1);

	write_form(s, "a", 0, CONTENT_WORD, 12345, 1);	/* bytes 8..15 */
	pass(k, 1);
	assert_int_equal(k->truth.gate_changed, 1);
	assert_int_equal(k->truth.false_positives, 1);
	assert_int_equal(k->pages_unshared, 1);	/* let through to the tree */

	write_form(s, "a", 0, CONTENT_WORD, 12345, 32);	/* bytes 256..263 */
	pass(k, 1);
	assert_int_equal(k->truth.gate_changed, 2);
	assert_int_equal(k->truth.false_positives, 1);
	assert_int_equal(k->pages_unshared, 0);	/* volatile */
	assert_int_equal(k->pstats.partial_words, 16 * 4);
	check_invariants(k);
}

/* k = 1024 samples every word in order: the kernel's xxhash, exactly. */
static void test_partial_hash_full_is_xxhash(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 1);
	write_form(s, "a", 0, CONTENT_RAND, 99, 0);
	struct rmap_item *ri = visit(k);
	assert_non_null(ri);
	struct page *p = pte_get(mm_of(k, "a"), 0);
	uint8_t buf[TRACE_PAGE_SIZE];
	content_materialize(p->c, buf);
	assert_int_equal(rmap_item_oldchecksum(k, ri), (uint32_t)XXH64(buf, sizeof(buf), 0));
	assert_int_equal(rmap_item_oldchecksum(k, ri), hash_lookup("xxhash")->fn(buf));
}

/* A page merged in a VMA and written in the same pass doubles the VMA's k. */
static void test_partial_hash_grows_after_miss(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	two_equal_pages(s);
	pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->pages_sharing, 1);
	struct vma *v = find_vma(mm_of(k, "a"), 0);
	assert_int_equal(v->partial_k, 0);	/* the policy's first k */
	write_form(s, "a", 0, CONTENT_BYTE, 8, 0);	/* CoW before the pass ended */
	assert_int_equal(k->truth.cow_fresh, 1);
	assert_int_equal(v->partial_k, 32);
	assert_int_equal(k->pstats.partial_grows, 1);
	/* b's mapping of the same new KSM page: its own VMA's miss. */
	write_form(s, "b", 0, CONTENT_BYTE, 5, 0);
	assert_int_equal(k->truth.cow_fresh, 2);
	assert_int_equal(find_vma(mm_of(k, "b"), 0)->partial_k, 32);
	assert_int_equal(k->pstats.partial_grows, 2);
	/* A new KSM page of both, broken at once again: k stays at max=32. */
	write_form(s, "a", 0, CONTENT_BYTE, 5, 0);
	pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->pages_sharing, 1);
	write_form(s, "a", 0, CONTENT_BYTE, 9, 0);
	assert_int_equal(k->truth.cow_fresh, 3);
	assert_int_equal(v->partial_k, 32);
	assert_int_equal(k->pstats.partial_grows, 2);
	check_invariants(k);
}

/*
 * classified by=mm: equal pages in two mms of different classes never
 * merge, and each insert sees the twin it lost; one class merges them.
 */
static void test_classified_by_mm(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 1);
	spawn_mergeable(s, "b", 1);
	assert_int_not_equal(mm_of(k, "a")->class_id, mm_of(k, "b")->class_id);
	write_form(s, "a", 0, CONTENT_BYTE, 7, 0);
	write_form(s, "b", 0, CONTENT_BYTE, 7, 0);
	pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->pages_unshared, 2);
	assert_int_equal(k->pstats.class_searches, 2);
	assert_int_equal(k->pstats.class_lost, 1);	/* b's insert: a sat in class 0 */
	check_invariants(k);
}

/* classified by=key8: equal pages share their first 8 bytes, so a class. */
static void test_classified_by_key8_merges(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	two_equal_pages(s);
	pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pstats.class_lost, 0);
	check_invariants(k);
}

/* by=key8 spreads distinct pages over the classes: each tree holds a share. */
static void test_classified_key8_spreads(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 64);
	for (uint64_t i = 0; i < 64; i++)
		write_form(s, "a", i, CONTENT_RAND, 1000 + i, 0);
	pass(k, 64);
	pass(k, 64);
	assert_int_equal(k->pages_unshared, 64);
	unsigned used = 0;
	for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
		used += k->root_unstable_tree[i].rb_node != NULL;
	assert_int_equal(ksm_nr_trees(k), 4);
	assert_int_equal(used, 4);
	check_invariants(k);
}

/* A test on a fresh model under the policy spec: sim_setup reads it from *state. */
#define policy_test(f, spec) \
	cmocka_unit_test_prestate_setup_teardown(f, sim_setup, sim_teardown, (void *)(spec))

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		policy_test(test_dirty_bit, "dirty-bit"),
		policy_test(test_partial_hash_blind_spot, "partial-hash:k=16,max=16"),
		policy_test(test_partial_hash_full_is_xxhash, "partial-hash:k=1024"),
		policy_test(test_partial_hash_grows_after_miss, "partial-hash:k=16,max=32"),
		policy_test(test_classified_by_mm, "classified:classes=2,by=mm"),
		policy_test(test_classified_by_key8_merges, "classified:classes=2,by=key8"),
		policy_test(test_classified_key8_spreads, "classified:classes=4"),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
