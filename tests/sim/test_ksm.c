// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd's two steps driven by hand: scan_get_next_rmap_item() picks the next
 * page, cmp_and_merge_page() decides its fate. Each test starts from a
 * fixture (a few small address spaces built through ksm_apply: no trace
 * file, no event loop, no batches) and then checks the rmap_items, trees
 * and counters after each visit, as mm/ksm.c would leave them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

/* mm a with two zero-filled mergeable pages. */
static int setup_two_zero_pages(void **state)
{
	sim_setup(state);
	struct sim *s = *state;
	spawn_mergeable(s, "a", 2);
	fill(s, "a", 0, 2, 0);
	return 0;
}

/* mms a and b with 100 mergeable pages each, all holding byte 7. */
static int setup_two_hundred_equal_pages(void **state)
{
	sim_setup(state);
	struct sim *s = *state;
	spawn_mergeable(s, "a", 100);
	spawn_mergeable(s, "b", 100);
	fill(s, "a", 0, 100, 7);
	fill(s, "b", 0, 100, 7);
	return 0;
}

/* First visit: checksum only. Second: unstable tree, then a merge of the two. */
static void test_merge_two_identical_pages(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	struct page *pa = pte_get(mm_of(k, "a"), 0), *pb = pte_get(mm_of(k, "b"), 0);

	struct rmap_item *ra = visit(k);
	assert_ptr_equal(rmap_item_mm(k, ra), mm_of(k, "a"));
	assert_int_equal(ra->flags, 0);
	assert_int_equal(rmap_item_oldchecksum(k, ra), content_checksum(pa->c, k->hash_fn, NULL));
	assert_int_equal(k->truth.checksums, 1);
	struct rmap_item *rb = visit(k);
	assert_ptr_equal(rmap_item_mm(k, rb), mm_of(k, "b"));
	assert_int_equal(rmap_item_oldchecksum(k, rb), rmap_item_oldchecksum(k, ra));
	assert_int_equal(k->pages_unshared, 0);
	expect_end_of_pass(k, 1);
	assert_int_equal(k->rmap_items, 2);

	assert_ptr_equal(visit(k), ra);
	assert_true(ra->flags & UNSTABLE_FLAG);
	assert_int_equal(ra->flags & SEQNR_MASK, 1);
	assert_int_equal(k->pages_unshared, 1);
	assert_ptr_equal(visit(k), rb);
	assert_int_equal(k->pages_unshared, 0);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->truth.merges_two, 1);
	assert_true((ra->flags & STABLE_FLAG) && (rb->flags & STABLE_FLAG));
	assert_ptr_equal(ra->head, rb->head);
	assert_int_equal(ra->head->rmap_hlist_len, 2);
	/* b's page became the KSM page; a's was replaced by it and freed. */
	assert_ptr_equal(pte_get(mm_of(k, "a"), 0), pb);
	assert_ptr_equal(pte_get(mm_of(k, "b"), 0), pb);
	assert_true(pb->ksm);
	assert_int_equal(page_mapcount(k, pb), 2);
	assert_ptr_equal(page_stable_node(k, pb), ra->head);
	assert_ptr_not_equal(pa, pb);
	assert_int_equal(mm_of(k, "a")->ksm_merging_pages, 1);
	expect_end_of_pass(k, 2);

	/* A third pass finds both already in the stable tree: nothing moves. */
	pass(k, 2);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->truth.merges_two + k->truth.merges_stable, 1);
	check_invariants(k);
}

/* A page whose checksum moved since the last visit stays out of both trees. */
static void test_changed_checksum_is_volatile(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 2);
	struct rmap_item *ra = rmap_at(k, mm_of(k, "a")->rmap_list);
	uint64_t before = rmap_item_oldchecksum(k, ra);

	fill(s, "a", 0, 1, 9);	/* written in place: not a KSM page */
	assert_ptr_equal(visit(k), ra);
	assert_int_equal(ra->flags, 0);
	assert_int_not_equal(rmap_item_oldchecksum(k, ra), before);
	assert_int_equal(k->truth.gate_changed, 1);
	assert_ptr_equal(visit(k), rmap_at(k, mm_of(k, "b")->rmap_list));
	assert_int_equal(k->pages_unshared, 1);	/* b only */
	expect_end_of_pass(k, 2);
	struct ksm_counters c;
	ksm_counters(k, &c);
	assert_int_equal(c.pages_volatile, 1);
	assert_int_equal(c.pages_shared, 0);

	/* Stable again: both go into the (fresh) unstable tree, and differ. */
	pass(k, 2);
	assert_int_equal(k->pages_unshared, 2);
	assert_int_equal(k->pages_shared, 0);
	ksm_counters(k, &c);
	assert_int_equal(c.pages_volatile, 0);
	check_invariants(k);
}

/* use_zero_pages: zero-filled pages map the zero page, no KSM page at all. */
static void test_zero_pages_merge_to_zero_page(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_USE_ZERO_PAGES, 1);
	pass(k, 2);
	assert_int_equal(k->zero_pages, 0);
	assert_int_equal(rmap_item_oldchecksum(k, rmap_at(k, mm_of(k, "a")->rmap_list)), k->zero_checksum);

	pass(k, 2);
	assert_ptr_equal(pte_get(mm_of(k, "a"), 0), KSM_ZERO_PTE);
	assert_ptr_equal(pte_get(mm_of(k, "a"), 1), KSM_ZERO_PTE);
	assert_int_equal(k->zero_pages, 2);
	assert_int_equal(mm_of(k, "a")->ksm_zero_pages, 2);
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->truth.merges_zero, 2);
	struct ksm_counters c;
	ksm_counters(k, &c);
	/* two pages saved, two 64-byte rmap_items charged */
	assert_int_equal(c.general_profit, 2 * 4096 - 2 * 64);
	GArray *stats = ksm_mm_stats(k);
	assert_int_equal(stats->len, 1);
	assert_int_equal(g_array_index(stats, struct ksm_mm_stat, 0).ksm_process_profit,
			 2 * 4096 - 2 * 64);
	g_array_free(stats, TRUE);
	check_invariants(k);
}

/* Without use_zero_pages the same two pages make an ordinary KSM page. */
static void test_zero_pages_without_use_zero_pages(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->zero_pages, 0);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_true(pte_get(mm_of(k, "a"), 0)->ksm);
	check_invariants(k);
}

/* max_page_sharing 2 and four equal pages: two KSM pages, dups of one chain. */
static void test_max_page_sharing_makes_chain(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, 2);
	const char *names[] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++) {
		spawn_mergeable(s, names[i], 1);
		fill(s, names[i], 0, 1, 5);
	}
	pass(k, 4);
	expect_visit(k, "a", 0);	/* into the unstable tree */
	expect_visit(k, "b", 0);	/* merged with a: the node is now full */
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->stable_node_chains, 0);
	expect_visit(k, "c", 0);	/* the full node refuses it: unstable tree */
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_unshared, 1);
	expect_visit(k, "d", 0);	/* merged with c: a second KSM page, same bytes */
	expect_end_of_pass(k, 2);

	assert_int_equal(k->pages_shared, 2);
	assert_int_equal(k->pages_sharing, 2);
	assert_int_equal(k->stable_node_chains, 1);
	assert_int_equal(k->stable_node_dups, 2);
	struct rmap_item *ra = rmap_at(k, mm_of(k, "a")->rmap_list), *rc = rmap_at(k, mm_of(k, "c")->rmap_list);
	assert_ptr_not_equal(ra->head, rc->head);
	assert_true(ra->head->is_dup && rc->head->is_dup);
	assert_ptr_equal(stable_node_chain(k, ra->head), stable_node_chain(k, rc->head));
	assert_ptr_equal(pte_get(mm_of(k, "a"), 0), pte_get(mm_of(k, "b"), 0));
	assert_ptr_equal(pte_get(mm_of(k, "c"), 0), pte_get(mm_of(k, "d"), 0));
	assert_ptr_not_equal(pte_get(mm_of(k, "a"), 0), pte_get(mm_of(k, "c"), 0));
	check_invariants(k);
}

/*
 * A chain lookup charges one chain_step per dup the kernel's walk looks at,
 * whether the model walks or reads the chain's counts: with
 * max_page_sharing 2, equal pages in b..h make a chain of full dups, and a
 * lookup that finds no candidate looks at every one. A stale dup (its KSM
 * page unmapped) is looked at too, and pruned, before ksmd reaches the
 * items that point to it.
 */
static void test_chain_lookup_charges_every_dup(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	const uint64_t *steps = &k->cost_n.n[COST_CHAIN_STEP];
	set(s, KNOB_MAX_PAGE_SHARING, 2);
	const char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	for (int i = 0; i < 8; i++) {
		spawn_mergeable(s, names[i], 1);
		fill(s, names[i], 0, 1, i ? 5 : 9);
	}
	pass(k, 8);
	expect_visit(k, "a", 0);	/* other bytes: unstable tree */
	expect_visit(k, "b", 0);	/* unstable tree */
	expect_visit(k, "c", 0);	/* merged with b: a full node */
	expect_visit(k, "d", 0);	/* the full node refuses it: unstable tree */
	expect_visit(k, "e", 0);	/* merged with d: a chain of two dups */
	assert_int_equal(k->stable_node_chains, 1);
	assert_int_equal(*steps, 0);
	expect_visit(k, "f", 0);	/* no candidate: both dups looked at */
	assert_int_equal(*steps, 2);
	expect_visit(k, "g", 0);	/* the same, twice (merge with f, insert): a third dup */
	assert_int_equal(*steps, 6);
	assert_int_equal(k->stable_node_dups, 3);
	expect_visit(k, "h", 0);	/* no candidate among three */
	assert_int_equal(*steps, 9);
	expect_end_of_pass(k, 2);
	check_invariants(k);

	unmap_pages(s, "b", 0, 1);	/* b and c mapped the last dup's KSM page */
	unmap_pages(s, "c", 0, 1);
	expect_visit(k, "a", 0);	/* its search meets the chain: two full dups, the stale one pruned */
	assert_int_equal(*steps, 12);
	assert_int_equal(k->stable_node_dups, 2);
	assert_int_equal(k->stable_node_chains, 1);
	check_invariants(k);
}

/*
 * The cursor: mms in slot order, pages by address, mergeable VMAs only; a
 * full scan at the end of each pass, then the first mm again. An mm that
 * registers mid-pass goes just behind the cursor (next pass, before the
 * mm being scanned); an rmap_item whose page went away is freed when the
 * cursor passes its address.
 */
static void test_scan_order_and_wrap(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 4);
	fill(s, "a", 1, 1, 1);
	fill(s, "a", 3, 1, 2);
	on(s, TRACE_MAP, "a", 10, 2);	/* not mergeable: never scanned */
	apply(s);
	fill(s, "a", 10, 1, 3);
	on(s, TRACE_MAP, "a", 20, 1);
	apply(s);
	on(s, TRACE_ADVISE, "a", 20, 1);
	s->rec.mergeable = true;
	apply(s);
	fill(s, "a", 20, 1, 4);
	spawn_mergeable(s, "b", 2);
	fill(s, "b", 0, 2, 5);	/* equal pages: merging must not disturb the order */

	for (int round = 1; round <= 2; round++) {
		expect_visit(k, "a", 1);
		expect_visit(k, "a", 3);
		expect_visit(k, "a", 20);
		expect_visit(k, "b", 0);
		expect_visit(k, "b", 1);
		expect_end_of_pass(k, round);
		assert_int_equal(k->scan.seqnr, round);
	}
	assert_int_equal(mm_of(k, "a")->ksm_rmap_items, 3);

	expect_visit(k, "a", 1);
	spawn_mergeable(s, "c", 1);
	fill(s, "c", 0, 1, 6);
	on(s, TRACE_UNMAP, "a", 3, 1);
	apply(s);
	expect_visit(k, "a", 20);	/* vpn 3's rmap_item is freed on the way */
	assert_int_equal(mm_of(k, "a")->ksm_rmap_items, 2);
	expect_visit(k, "b", 0);
	expect_visit(k, "b", 1);
	expect_end_of_pass(k, 3);

	expect_visit(k, "c", 0);
	expect_visit(k, "a", 1);
	expect_visit(k, "a", 20);
	expect_visit(k, "b", 0);
	expect_visit(k, "b", 1);
	expect_end_of_pass(k, 4);
	check_invariants(k);
}

/* An mm whose last mergeable VMA went away loses its slot at the cursor. */
static void test_unmergeable_mm_leaves_slot_list(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 1);
	fill(s, "a", 0, 1, 1);
	spawn_mergeable(s, "b", 1);
	fill(s, "b", 0, 1, 2);
	pass(k, 2);
	on(s, TRACE_ADVISE, "a", 0, 1);
	s->rec.mergeable = false;
	apply(s);
	assert_true(mm_of(k, "a")->registered);
	expect_visit(k, "b", 0);
	assert_false(mm_of(k, "a")->registered);
	assert_int_equal(mm_of(k, "a")->ksm_rmap_items, 0);
	expect_end_of_pass(k, 2);
	expect_visit(k, "b", 0);
	expect_end_of_pass(k, 3);
	check_invariants(k);
}

/* ksm_memory: counts what the structures hold, and the total is their sum. */
static void test_memory_breakdown(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 200);
	pass(k, 200);
	struct ksm_memory m;
	ksm_memory(k, &m);
	assert_int_equal(m.rmap_item_count, 200);
	assert_int_equal(m.mm_count, 2);
	assert_int_equal(m.stable_node_count, 1);	/* one KSM page: 200 < max_page_sharing */
	assert_true(m.rmap_items >= 200 * sizeof(struct rmap_item));
	assert_int_equal(m.total, m.rmap_items + m.pages + m.stable_nodes + m.contents +
				      m.page_tables + m.mms);
}

/*
 * The oracle groups by bytes: pages that share their first 8 bytes but not
 * the rest are apart, and the same bytes under two descriptions (a plain
 * rand content plus a word, and the whole page written out) are together.
 */
static void test_ideal_groups_by_bytes(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 6);
	write_form(s, "a", 0, CONTENT_RAND, 5, 0);
	write_form(s, "a", 1, CONTENT_RAND, 5, 0);
	write_form(s, "a", 1, CONTENT_WORD, 42, 100);	/* byte 800 on: same key8 */
	write_form(s, "a", 2, CONTENT_RAND, 5, 0);
	write_form(s, "a", 2, CONTENT_WORD, 42, 100);
	uint8_t bytes[4096];
	content_materialize(pte_get(mm_of(k, "a"), 1)->c, bytes);
	on(s, TRACE_WRITE, "a", 3, 1);
	s->rec.content.form = CONTENT_BYTES;
	s->rec.content.off = 0;
	s->rec.content.len = sizeof(bytes);
	memcpy(s->rec.content.data, bytes, sizeof(bytes));
	apply(s);
	write_form(s, "a", 4, CONTENT_RAND, 5, 0);
	write_form(s, "a", 5, CONTENT_RAND, 6, 0);
	const content *c1 = pte_get(mm_of(k, "a"), 1)->c, *c3 = pte_get(mm_of(k, "a"), 3)->c;
	assert_ptr_not_equal(c1, c3);	/* two descriptions */
	assert_int_equal(content_key8(c1), content_key8(pte_get(mm_of(k, "a"), 0)->c));

	struct ksm_ideal id;
	ksm_ideal(k, &id);
	assert_int_equal(id.mergeable_pages, 6);
	assert_int_equal(id.actual_saved, 0);
	/* {0, 4} saves 1, {1, 2, 3} saves 2, {5} nothing */
	assert_int_equal(id.ideal_saved, 3);
	assert_int_equal(id.missed_merges, 3);
	/* and the walk leaves no page marked: a second call agrees */
	ksm_ideal(k, &id);
	assert_int_equal(id.ideal_saved, 3);
}

/*
 * An rmap_item keeps 16 bits of its mm's VMA generation, so when the mm's
 * wraps every cache of the mm is dropped: a page cached 65,536 VMA changes
 * ago never passes for one checked since.
 */
static void advise_a(struct sim *s)
{
	on(s, TRACE_ADVISE, "a", 0, 1);
	s->rec.mergeable = true;
	apply(s);
}

static void test_vma_gen_wrap_drops_caches(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 1);
	fill(s, "a", 0, 1, 7);
	spawn_mergeable(s, "b", 1);
	fill(s, "b", 0, 1, 8);
	pass(k, 2);
	pass(k, 2);	/* both in the unstable tree: b's search cached a's page */
	struct mm *mm = mm_of(k, "a");
	struct rmap_item *ra = rmap_at(k, mm->rmap_list);
	struct page *pa = pte_get(mm, 0);
	assert_ptr_equal(rmap_item_cached_page(k, ra), pa);
	while ((uint16_t)(mm->vma_gen + 1) != 0)
		advise_a(s);
	assert_ptr_equal(rmap_item_cached_page(k, ra), pa);
	assert_int_not_equal(ra->vma_gen, mm->vma_gen);
	advise_a(s);	/* the wrap: 0 again, which the cache may have been taken at */
	assert_int_equal(mm->vma_gen, 0);
	assert_int_equal(ra->cached_page, 0);
	assert_null(page_rmap_item(k, pa));
	check_invariants(k);
	pass(k, 2);	/* and the walk caches it again */
	assert_ptr_equal(rmap_item_cached_page(k, ra), pa);
	check_invariants(k);
}

/*
 * struct page keeps 18 bits of mapcount: a count past them moves to
 * k->mapcount_aside, and back into the page once it falls below again,
 * every step reading the true count.
 */
static void test_mapcount_past_18_bits(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 1);
	fill(s, "a", 0, 1, 7);
	struct page *p = pte_get(mm_of(k, "a"), 0);
	assert_int_equal(page_mapcount(k, p), 1);
	assert_true(page_mapped_once(p));
	struct page before = *p;
	uint32_t top = PAGE_MAPCOUNT_ASIDE + 3;
	for (uint32_t n = 2; n <= top; n++) {
		assert_int_equal(page_mapcount_add(k, p, 1), n);
		assert_int_equal(page_mapcount(k, p), n);
		assert_int_equal(g_hash_table_size(k->mapcount_aside), n >= PAGE_MAPCOUNT_ASIDE);
	}
	assert_false(page_mapped_once(p));
	/* the bits beside it untouched */
	assert_int_equal(p->nid, before.nid);
	assert_true(p->ksm == before.ksm && p->dirty == before.dirty &&
		    p->wrprotect == before.wrprotect && p->ideal_seen == before.ideal_seen);
	for (uint32_t n = top - 1; n >= 1; n--) {
		assert_int_equal(page_mapcount_add(k, p, -1), n);
		assert_int_equal(page_mapcount(k, p), n);
		assert_int_equal(g_hash_table_size(k->mapcount_aside), n >= PAGE_MAPCOUNT_ASIDE);
	}
	assert_true(page_mapped_once(p));
	check_invariants(k);
}

#define fixture(f, setup) cmocka_unit_test_setup_teardown(f, setup, sim_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		fixture(test_merge_two_identical_pages, setup_two_equal_pages),
		fixture(test_vma_gen_wrap_drops_caches, sim_setup),
		fixture(test_mapcount_past_18_bits, sim_setup),
		fixture(test_changed_checksum_is_volatile, setup_two_equal_pages),
		fixture(test_zero_pages_merge_to_zero_page, setup_two_zero_pages),
		fixture(test_zero_pages_without_use_zero_pages, setup_two_zero_pages),
		fixture(test_max_page_sharing_makes_chain, sim_setup),
		fixture(test_chain_lookup_charges_every_dup, sim_setup),
		fixture(test_scan_order_and_wrap, sim_setup),
		fixture(test_unmergeable_mm_leaves_slot_list, sim_setup),
		fixture(test_memory_breakdown, setup_two_hundred_equal_pages),
		fixture(test_ideal_groups_by_bytes, sim_setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
