// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A THP that a fork shares (sim/mm.c), one test per kernel path of Linux
 * 6.18: copy_huge_pmd at the fork, do_huge_pmd_wp_page at the first store
 * (reuse when the PMD is the folio's only reference, else split the PMD),
 * do_wp_page on a PTE-mapped subpage (__wp_can_reuse_large_anon_folio:
 * the folio's large mapcount and its mm_id slots), and split_huge_page of
 * a folio two mms map (every PMD split, zero subpages to the zero page in
 * both). Expected values are derived in comments from the kernel's rules,
 * not read off the model; every test ends with the invariant checker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

#define HUGE 512u	/* HPAGE_PMD_NR */

static void fork_mm(struct sim *s, const char *parent, const char *child)
{
	on(s, TRACE_FORK, parent, 0, 0);
	g_strlcpy(s->rec.child, child, sizeof(s->rec.child));
	apply(s);
}

static void exit_mm(struct sim *s, const char *mm)
{
	on(s, TRACE_EXIT, mm, 0, 0);
	apply(s);
}

static void advise_thp(struct sim *s, const char *mm, uint64_t vpn, uint64_t npages, bool huge)
{
	on(s, TRACE_ADVISE, mm, vpn, npages);
	s->rec.thp_advice = huge ? TRACE_ADVICE_HUGEPAGE : TRACE_ADVICE_NOHUGEPAGE;
	apply(s);
}

/* mm a: one mergeable hugepage VMA of 512 pages, faulted in as a THP by a store of byte 5 at 0. */
static struct thp *thp_a(struct sim *s)
{
	spawn_mergeable(s, "a", HUGE);
	advise_thp(s, "a", 0, HUGE, true);
	fill(s, "a", 0, 1, 5);
	struct page *p = pte_get(mm_of(s->k, "a"), 0);
	assert_non_null(page_thp(s->k, p));
	assert_int_equal(s->k->thp_fault_alloc, 1);
	return page_thp(s->k, p);
}

static const struct thp_map *map_of(const struct thp *t, struct ksm *k, const char *mm)
{
	struct mm *want = mm_of(k, mm);
	for (uint32_t i = 0; i < t->nmaps; i++)
		if (t->maps[i].mm == want)
			return &t->maps[i];
	return NULL;
}

/* copy_huge_pmd: the child maps the folio by a PMD too, both write-protected, no split. */
static void test_fork_shares_pmd(void **state)
{
	struct sim *s = *state;
	struct thp *t = thp_a(s);
	fork_mm(s, "a", "c");
	struct mm *a = mm_of(s->k, "a"), *c = mm_of(s->k, "c");
	for (uint64_t v = 0; v < HUGE; v++) {
		struct page *p = pte_get(a, v);
		assert_ptr_equal(p, pte_get(c, v));
		assert_ptr_equal(page_thp(s->k, p), t);
		assert_int_equal(page_mapcount(s->k, p), 2);
		assert_true(p->wrprotect);
	}
	/* two PMD mappings: large mapcount 2, a in slot 0 (the fault), c in slot 1: shared */
	assert_int_equal(t->nmaps, 2);
	assert_true(map_of(t, s->k, "a")->pmd_mapped && map_of(t, s->k, "c")->pmd_mapped);
	assert_int_equal(t->mapcount, 2);
	assert_ptr_equal(t->mm_id[0], a);
	assert_ptr_equal(t->mm_id[1], c);
	assert_true(t->maybe_shared);
	assert_int_equal(s->k->thp_split_pmd, 0);
	assert_int_equal(s->k->thp_split_page, 0);
	check_invariants(s->k);
}

/*
 * The first store after the fork, in mm writer: do_huge_pmd_wp_page finds
 * the folio's refcount 2 (two PMDs): the writer's PMD is split
 * (thp_split_pmd 1) and the PTE fault copies the subpage (the folio is
 * maybe shared), no cow_ksm. The other mm's PMD stays. A second store by
 * the writer copies again without another split.
 */
static void first_store_after_fork(struct sim *s, const char *writer, const char *other)
{
	struct thp *t = thp_a(s);
	fork_mm(s, "a", "c");
	struct mm *w = mm_of(s->k, writer), *o = mm_of(s->k, other);
	struct page *sub = pte_get(w, 7);
	fill(s, writer, 7, 1, 9);
	assert_int_equal(s->k->thp_split_pmd, 1);
	struct page *copy = pte_get(w, 7);
	assert_ptr_not_equal(copy, sub);
	assert_null(page_thp(s->k, copy));
	assert_int_equal(page_mapcount(s->k, copy), 1);
	assert_ptr_equal(pte_get(o, 7), sub);
	assert_int_equal(page_mapcount(s->k, sub), 1);
	assert_ptr_equal(page_thp(s->k, sub), t);
	assert_false(map_of(t, s->k, writer)->pmd_mapped);
	assert_int_equal(map_of(t, s->k, writer)->ptes, HUGE - 1);
	assert_true(map_of(t, s->k, other)->pmd_mapped);
	/* 511 PTEs of the writer and the other's PMD */
	assert_int_equal(t->mapcount, HUGE - 1 + 1);
	assert_int_equal(t->pages, HUGE);	/* the other still maps subpage 7 */
	fill(s, writer, 8, 1, 9);
	assert_int_equal(s->k->thp_split_pmd, 1);
	assert_null(page_thp(s->k, pte_get(w, 8)));
	assert_int_equal(t->mapcount, HUGE - 2 + 1);
	assert_int_equal(s->k->cow_ksm, 0);
	check_invariants(s->k);
}

static void test_parent_store_splits_own_pmd_and_copies(void **state)
{
	first_store_after_fork(*state, "a", "c");
}

static void test_child_store_splits_own_pmd_and_copies(void **state)
{
	first_store_after_fork(*state, "c", "a");
}

/*
 * The child exits before any store: the parent's PMD is the folio's only
 * reference (refcount 1), so do_huge_pmd_wp_page reuses the whole folio in
 * place: no split, no copy, every subpage writable again.
 */
static void test_parent_store_after_child_exit_reuses_folio(void **state)
{
	struct sim *s = *state;
	struct thp *t = thp_a(s);
	fork_mm(s, "a", "c");
	exit_mm(s, "c");
	struct mm *a = mm_of(s->k, "a");
	struct page *sub = pte_get(a, 7);
	fill(s, "a", 7, 1, 9);
	assert_ptr_equal(pte_get(a, 7), sub);
	assert_ptr_equal(page_thp(s->k, sub), t);
	assert_int_equal(s->k->thp_split_pmd, 0);
	assert_true(map_of(t, s->k, "a")->pmd_mapped);
	assert_int_equal(t->mapcount, 1);
	assert_false(t->maybe_shared);	/* c's slot freed: a owns every mapping */
	for (uint64_t v = 0; v < HUGE; v++)
		assert_false(pte_get(a, v)->wrprotect);
	check_invariants(s->k);
}

/*
 * A PTE-mapped THP (a VMA cut split a's PMD before the fork): the fork
 * copies its PTEs. a's store copies while c maps the folio; once c has
 * exited, a alone maps it (its slot owns every mapping) and a store reuses
 * the subpage in place (__wp_can_reuse_large_anon_folio).
 */
static void test_pte_mapped_copy_then_reuse(void **state)
{
	struct sim *s = *state;
	struct thp *t = thp_a(s);
	advise_thp(s, "a", HUGE - 12, 12, false);
	assert_int_equal(s->k->thp_split_pmd, 1);
	fork_mm(s, "a", "c");
	assert_false(map_of(t, s->k, "c")->pmd_mapped);
	assert_int_equal(t->mapcount, 2 * HUGE);
	struct mm *a = mm_of(s->k, "a");
	struct page *sub = pte_get(a, 3);
	fill(s, "a", 3, 1, 9);
	assert_ptr_not_equal(pte_get(a, 3), sub);
	exit_mm(s, "c");
	assert_false(t->maybe_shared);
	assert_int_equal(t->mapcount, HUGE - 1);
	sub = pte_get(a, 4);
	fill(s, "a", 4, 1, 9);
	assert_ptr_equal(pte_get(a, 4), sub);
	assert_false(sub->wrprotect);
	assert_true(pte_get(a, 5)->wrprotect);	/* reuse makes one PTE writable */
	assert_int_equal(s->k->thp_split_pmd, 1);
	check_invariants(s->k);
}

/*
 * "Let's just free up a large folio if only a single page is mapped": a
 * store to the one subpage still mapped copies it even though the mm alone
 * maps the folio, and the folio goes.
 */
static void test_last_mapped_subpage_is_copied(void **state)
{
	struct sim *s = *state;
	thp_a(s);
	fork_mm(s, "a", "c");
	exit_mm(s, "c");
	unmap_pages(s, "a", 0, HUGE - 1);	/* splits a's PMD at 511 */
	assert_int_equal(s->k->thp_split_pmd, 1);
	struct mm *a = mm_of(s->k, "a");
	struct page *sub = pte_get(a, HUGE - 1);
	assert_non_null(page_thp(s->k, sub));
	assert_true(sub->wrprotect);
	fill(s, "a", HUGE - 1, 1, 9);
	assert_ptr_not_equal(pte_get(a, HUGE - 1), sub);
	assert_null(page_thp(s->k, pte_get(a, HUGE - 1)));
	check_invariants(s->k);
}

/*
 * Three mms: a (slot 0), c (slot 1), d (no slot: the folio is already
 * marked shared). d's store splits d's PMD and copies. Then a and c exit:
 * freeing their slots never finds one slot owning every mapping (d holds
 * none), so the folio stays maybe shared and d's next store copies
 * although d alone maps it.
 */
static void test_third_mm_keeps_folio_maybe_shared(void **state)
{
	struct sim *s = *state;
	struct thp *t = thp_a(s);
	fork_mm(s, "a", "c");
	fork_mm(s, "a", "d");
	struct mm *d = mm_of(s->k, "d");
	assert_ptr_not_equal(t->mm_id[0], d);
	assert_ptr_not_equal(t->mm_id[1], d);
	fill(s, "d", 0, 1, 9);
	exit_mm(s, "a");
	exit_mm(s, "c");
	assert_int_equal(t->nmaps, 1);
	assert_int_equal(t->mapcount, HUGE - 1);
	assert_true(t->maybe_shared);
	struct page *sub = pte_get(d, 1);
	fill(s, "d", 1, 1, 9);
	assert_ptr_not_equal(pte_get(d, 1), sub);
	check_invariants(s->k);
}

/*
 * split_huge_page of a folio two mms map by PMD, as KSM's merge calls it:
 * both PMDs split (thp_split_pmd 2), one page split; each zero subpage maps
 * the zero page in both mms, the subpage with data is a small page mapped
 * by both, still write-protected.
 */
static void test_split_of_shared_folio(void **state)
{
	struct sim *s = *state;
	struct thp *t = thp_a(s);
	fork_mm(s, "a", "c");
	struct mm *a = mm_of(s->k, "a"), *c = mm_of(s->k, "c");
	struct page *data = pte_get(a, 0);
	thp_split(s->k, t);
	assert_int_equal(s->k->thp_split_pmd, 2);
	assert_int_equal(s->k->thp_split_page, 1);
	assert_ptr_equal(pte_get(a, 0), data);
	assert_ptr_equal(pte_get(c, 0), data);
	assert_null(page_thp(s->k, data));
	assert_int_equal(page_mapcount(s->k, data), 2);
	assert_true(data->wrprotect);
	for (uint64_t v = 1; v < HUGE; v++) {
		assert_ptr_equal(pte_get(a, v), ZERO_PFN_PTE);
		assert_ptr_equal(pte_get(c, v), ZERO_PFN_PTE);
	}
	check_invariants(s->k);
}

/*
 * ksmd merges a subpage of the shared folio with b's equal small page: the
 * split succeeds (KSM's one reference; the mappings account for the rest),
 * the subpage becomes the KSM page in place for both mms.
 */
static void test_ksm_merges_shared_subpage(void **state)
{
	struct sim *s = *state;
	thp_a(s);
	fork_mm(s, "a", "c");
	spawn_mergeable(s, "b", 1);
	fill(s, "b", 0, 1, 5);
	set(s, KNOB_RUN, 1);
	for (int pass = 0; pass < 3; pass++)
		while (visit(s->k))
			;
	struct mm *a = mm_of(s->k, "a"), *c = mm_of(s->k, "c");
	struct page *p = pte_get(a, 0);
	assert_true(p->ksm);
	assert_ptr_equal(pte_get(c, 0), p);
	assert_int_equal(s->k->thp_split_page, 1);
	assert_int_equal(s->k->thp_split_pmd, 2);
	/* one KSM page for a, c and b: a's and c's items both on its node */
	assert_int_equal(s->k->pages_shared, 1);
	assert_int_equal(s->k->pages_sharing, 2);
	check_invariants(s->k);
}

#define fixture(f) cmocka_unit_test_setup_teardown(f, sim_setup, sim_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		fixture(test_fork_shares_pmd),
		fixture(test_parent_store_splits_own_pmd_and_copies),
		fixture(test_child_store_splits_own_pmd_and_copies),
		fixture(test_parent_store_after_child_exit_reuses_folio),
		fixture(test_pte_mapped_copy_then_reuse),
		fixture(test_last_mapped_subpage_is_copied),
		fixture(test_third_mm_keeps_folio_maybe_shared),
		fixture(test_split_of_shared_folio),
		fixture(test_ksm_merges_shared_subpage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
