// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One test per kernel edge case of sim/ksm.c's twins of mm/ksm.c (Linux
 * 6.18): stable-node chains (stable_tree_insert, stable_node_dup and its
 * pruning, the collapse of a chain), max_page_sharing and
 * remove_all_stable_nodes, zero pages, smart scan (should_skip_rmap_item,
 * skip_age), the scan-time advisor, the checksum gate, the lru_add batch,
 * run = 2, the counters (general_profit, pages_volatile, full_scans) and the
 * cursor's freeing of rmap_items (remove_trailing_rmap_items).
 *
 * Each state is built by hand through the harness, and each expected value
 * is derived in a comment from the kernel's rule, not read off the model.
 * Times are simulated µs; a jiffy is 4000 µs (HZ 250).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

/* ---- helpers ---- */

#define NAMES 16

/* The name of mm i: "m0", "m1", ... */
static const char *m(unsigned i)
{
	static char names[NAMES][8];
	assert_true(i < NAMES);
	g_snprintf(names[i], sizeof(names[i]), "m%u", i);
	return names[i];
}

/* mms m[from] .. m[from + n - 1], one mergeable page each holding byte value. */
static void spawn_pages(struct sim *s, unsigned from, unsigned n, uint8_t value)
{
	for (unsigned i = from; i < from + n; i++) {
		spawn_mergeable(s, m(i), 1);
		fill(s, m(i), 0, 1, value);
	}
}

static struct page *page_at(struct ksm *k, const char *mm, uint64_t vpn)
{
	return pte_get(mm_of(k, mm), vpn);
}

/* The stable node (or dup) of the KSM page mapped at mm's vpn 0. */
static struct stable_node *node_of(struct ksm *k, const char *mm)
{
	struct page *p = page_at(k, mm, 0);
	assert_true(pte_is_page(p) && p->ksm);
	return page_stable_node(k, p);
}

/* The node at the root of the (only) stable tree. */
static struct stable_node *stable_root(struct ksm *k)
{
	assert_non_null(k->root_stable_tree[0].rb_node);
	return rb_entry(k->root_stable_tree[0].rb_node, struct stable_node, node);
}

static struct stable_node *first_dup(struct stable_node *chain)
{
	assert_int_equal(chain->rmap_hlist_len, STABLE_NODE_CHAIN);
	assert_non_null(chain->hlist.first);
	return hlist_entry(chain->hlist.first, struct stable_node, hlist_dup);
}

static struct ksm_counters counters(struct ksm *k)
{
	struct ksm_counters c;
	ksm_counters(k, &c);
	return c;
}

/* Replace the page at mm's vpn 0 by a new page of byte value: munmap, mmap, madvise, store. */
static void remap_page(struct sim *s, const char *mm, uint8_t value)
{
	unmap_pages(s, mm, 0, 1);
	on(s, TRACE_MAP, mm, 0, 1);
	apply(s);
	on(s, TRACE_ADVISE, mm, 0, 1);
	s->rec.mergeable = true;
	apply(s);
	fill(s, mm, 0, 1, value);
}

static void fork_mm(struct sim *s, const char *parent, const char *child)
{
	on(s, TRACE_FORK, parent, 0, 0);
	g_strlcpy(s->rec.child, child, sizeof(s->rec.child));
	apply(s);
}

/* As setup_two_equal_pages, after the two passes that merge them: one KSM page. */
static int setup_merged_pair(void **state)
{
	setup_two_equal_pages(state);
	struct ksm *k = ((struct sim *)*state)->k;
	pass(k, 2);	/* checksums only */
	pass(k, 2);	/* a: unstable tree; b: merged with a */
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	return 0;
}

/* mm a with one mergeable page of byte 1: nothing to merge it with. */
static int setup_one_page(void **state)
{
	sim_setup(state);
	struct sim *s = *state;
	spawn_mergeable(s, "a", 1);
	fill(s, "a", 0, 1, 1);
	return 0;
}

/* ---- stable-node chains ---- */

/*
 * A chain of two full dups at max_page_sharing mps, built by two passes
 * over 2 x mps one-page mms of byte 5. The second pass, in slot order: m0
 * goes to the unstable tree; m1 matches it, and the two make KSM page A
 * (rmap_hlist_len 2); m2 .. m[mps-1] find A in the stable tree while it is
 * a sharing candidate (0 < len < mps) and join it, so A ends full at mps.
 * m[mps] finds A full (stable_tree_search: not a candidate, NULL) and goes
 * to the unstable tree; m[mps+1] matches it: KSM page B, which
 * stable_tree_insert files beside the equal A by turning A into the first
 * dup of a chain and adding B at its head. The rest find the chain, whose
 * first candidate is B (no prune is due at time 0), and fill B up to mps.
 */
static void build_full_chain(struct sim *s, unsigned mps)
{
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, mps);
	spawn_pages(s, 0, 2 * mps, 5);
	pass(k, 2 * mps);
	pass(k, 2 * mps);
	assert_int_equal(k->stable_node_chains, 1);
	assert_int_equal(k->stable_node_dups, 2);
	assert_int_equal(k->pages_shared, 2);
	assert_int_equal(k->pages_sharing, 2 * (mps - 1));
	assert_int_equal(node_of(k, m(0))->rmap_hlist_len, mps);
	assert_int_equal(node_of(k, m(mps))->rmap_hlist_len, mps);
}

/*
 * max_page_sharing 3, five equal pages: m0 + m1 make A (2), m2 joins it
 * (3 = full), m3 is refused by the full A and waits in the unstable tree,
 * m4 merges with m3 into B, which stable_tree_insert makes a dup: A becomes
 * the chain's first dup (stable_node_chains + 1, dups + 1) and B joins at
 * the head (dups + 1). pages_shared counts the two KSM pages, pages_sharing
 * the mappings beyond the first of each: 2 + 1.
 */
static void test_chain_forms_when_node_full(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, 3);
	spawn_pages(s, 0, 5, 5);
	pass(k, 5);
	pass(k, 5);
	assert_int_equal(k->pages_shared, 2);
	assert_int_equal(k->pages_sharing, 3);
	assert_int_equal(k->pages_unshared, 0);
	assert_int_equal(k->stable_node_chains, 1);
	assert_int_equal(k->stable_node_dups, 2);
	struct stable_node *a = node_of(k, m(0)), *b = node_of(k, m(3)), *chain = stable_root(k);
	assert_ptr_equal(node_of(k, m(2)), a);
	assert_ptr_equal(node_of(k, m(4)), b);
	assert_int_equal(a->rmap_hlist_len, 3);
	assert_int_equal(b->rmap_hlist_len, 2);
	assert_true(a->is_dup && b->is_dup);
	assert_ptr_equal(stable_node_chain(k, a), chain);
	assert_ptr_equal(first_dup(chain), b);	/* hlist_add_head */
	assert_ptr_equal(b->hlist_dup.next, &a->hlist_dup);
	check_invariants(k);
}

/*
 * From build_full_chain(mps), the dups thinned by stores: the first
 * take_a mappings of A and take_b of B are written with bytes of their own
 * (a copy-on-write each), and a new mm n of byte 5 is spawned. The next
 * pass visits each written page (not KSM any more: its rmap_item leaves its
 * node, rmap_hlist_len - 1, and the changed checksum makes it volatile) and
 * gives n its first visit (the checksum only). The pass after visits
 * everyone but n and stops there, n's second visit to come: it will search
 * the stable tree through the chain, whose dups hold A = mps - take_a
 * (last in the chain) and B = mps - take_b (first).
 */
static void thin_chain_before_search(struct sim *s, unsigned mps, unsigned take_a, unsigned take_b)
{
	struct ksm *k = s->k;
	build_full_chain(s, mps);
	for (unsigned i = 0; i < take_a; i++)
		fill(s, m(i), 0, 1, (uint8_t)(20 + i));
	for (unsigned i = 0; i < take_b; i++)
		fill(s, m(mps + i), 0, 1, (uint8_t)(40 + i));
	spawn_mergeable(s, "n", 1);
	fill(s, "n", 0, 1, 5);
	pass(k, 2 * mps + 1);
	assert_int_equal(node_of(k, m(mps - 1))->rmap_hlist_len, mps - take_a);
	assert_int_equal(node_of(k, m(2 * mps - 1))->rmap_hlist_len, mps - take_b);
	for (unsigned i = 0; i < 2 * mps; i++)
		expect_visit(k, m(i), 0);
}

/*
 * stable_node_dup without a prune due (stable_node_chains_prune_millisecs
 * is 2000 ms = 500 jiffies since the chain's chain_prune_time, jiffy 0, and
 * it is jiffy 499): the walk stops at the first sharing candidate, B at the
 * head with 2 of 4, though A, further on, holds 3. n joins B.
 */
static void test_dup_without_prune_takes_first_candidate(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	thin_chain_before_search(s, 4, 1, 2);
	struct stable_node *a = node_of(k, m(3)), *b = node_of(k, m(7)), *chain = stable_root(k);
	at(s, 2000000 - 1);	/* jiffy 499 */
	expect_visit(k, "n", 0);
	assert_ptr_equal(node_of(k, "n"), b);
	assert_int_equal(b->rmap_hlist_len, 3);
	assert_int_equal(a->rmap_hlist_len, 3);
	assert_int_equal(chain->chain_prune_time, 0);
	check_invariants(k);
}

/*
 * At jiffy 500 the prune is due: stable_node_dup walks every dup, sets
 * chain_prune_time to now and keeps the candidate with the most rmap_items
 * (the kernel packs pages: `dup->rmap_hlist_len > found_rmap_hlist_len`):
 * A with 3 of 4 over B with 2. A stays where it is, since it cannot take
 * one more merge beyond this one (__is_page_sharing_candidate(A, 1):
 * 3 + 1 < 4 is false). n joins A, which is then full.
 */
static void test_dup_prune_takes_fullest_candidate(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	thin_chain_before_search(s, 4, 1, 2);
	struct stable_node *a = node_of(k, m(3)), *b = node_of(k, m(7)), *chain = stable_root(k);
	at(s, 2000000);	/* jiffy 500 */
	expect_visit(k, "n", 0);
	assert_ptr_equal(node_of(k, "n"), a);
	assert_int_equal(a->rmap_hlist_len, 4);
	assert_int_equal(b->rmap_hlist_len, 2);
	assert_int_equal(chain->chain_prune_time, 500);
	assert_ptr_equal(first_dup(chain), b);
	check_invariants(k);
}

/*
 * The interval is the knob: at 100 ms it is msecs_to_jiffies(100) = 25
 * jiffies (rounded up: 25000 / 1000), so at 100 ms = jiffy 25 a prune is
 * due and n joins the fullest candidate, A.
 */
static void test_dup_prune_interval_is_the_knob(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS, 100);
	thin_chain_before_search(s, 4, 1, 2);
	struct stable_node *a = node_of(k, m(3)), *chain = stable_root(k);
	at(s, 100000);
	expect_visit(k, "n", 0);
	assert_ptr_equal(node_of(k, "n"), a);
	assert_int_equal(chain->chain_prune_time, 25);
}

/*
 * max_page_sharing 5, A holding 3 (last) and B 2 (first): the pruning walk
 * picks A (3 > 2), and since A can take one more merge beyond this one
 * (3 + 1 < 5), stable_node_dup moves it to the head of the chain, where the
 * next walk without a prune stops at once.
 */
static void test_dup_found_moves_to_head(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	thin_chain_before_search(s, 5, 2, 3);
	struct stable_node *a = node_of(k, m(4)), *b = node_of(k, m(9)), *chain = stable_root(k);
	assert_ptr_equal(first_dup(chain), b);
	at(s, 2000000);
	expect_visit(k, "n", 0);
	assert_ptr_equal(node_of(k, "n"), a);
	assert_int_equal(a->rmap_hlist_len, 4);
	assert_ptr_equal(first_dup(chain), a);
	assert_ptr_equal(a->hlist_dup.next, &b->hlist_dup);
	check_invariants(k);
}

/*
 * max_page_sharing 2, six equal pages. The second pass: m0 + m1 make A,
 * full at 2; m2 finds A full (no candidate: the search returns NULL) and
 * waits in the unstable tree, and m3 merges with it into B, filed as a dup
 * beside A in a new chain; m4 finds no candidate among the chain's full
 * dups, waits, and m5 merges with it into C, added at the chain's head.
 * The chain lists C, B, A.
 * Then m5 is written (C drops to 1 item at its visit, a candidate again)
 * and a new mm n of byte 5 spawned; a pass gives n its first visit. The
 * next pass visits m0 .. m5, after which A's two mappings are unmapped:
 * A's KSM page is freed and A is stale, which nobody has noticed yet
 * (pages_shared still counts it). The next visit is n's second.
 */
static void stale_dup_behind_candidate(struct sim *s)
{
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, 2);
	spawn_pages(s, 0, 6, 5);
	pass(k, 6);
	pass(k, 6);
	assert_int_equal(k->stable_node_dups, 3);
	fill(s, m(5), 0, 1, 30);
	spawn_mergeable(s, "n", 1);
	fill(s, "n", 0, 1, 5);
	pass(k, 7);
	assert_int_equal(node_of(k, m(4))->rmap_hlist_len, 1);
	for (unsigned i = 0; i < 6; i++)
		expect_visit(k, m(i), 0);
	unmap_pages(s, m(0), 0, 1);
	unmap_pages(s, m(1), 0, 1);
	/* C, B and the stale A: two items each but C's one */
	assert_int_equal(k->pages_shared, 3);
	assert_int_equal(k->pages_sharing, 2);
}

/*
 * Without a prune due, the walk stops at C, the first candidate, and
 * never asks A for its page: A and its counts stay until a later walk or
 * the cursor meets them. n joins C.
 */
static void test_dup_walk_without_prune_leaves_stale_dup(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	stale_dup_behind_candidate(s);
	expect_visit(k, "n", 0);
	assert_ptr_equal(node_of(k, "n"), node_of(k, m(4)));
	assert_int_equal(k->stable_node_dups, 3);
	assert_int_equal(k->pages_shared, 3);
	assert_int_equal(k->pages_sharing, 3);	/* + n */
}

/*
 * With a prune due the walk asks every dup for its page: ksm_get_folio
 * finds A's page gone and remove_node_from_stable_tree drops A at once,
 * both its items' counts with it (the first listed, which has a next,
 * from pages_sharing; the last from pages_shared) and its place in the
 * chain (stable_node_dups - 1). n still joins C, the only candidate.
 */
static void test_dup_prune_removes_stale_dup(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	stale_dup_behind_candidate(s);
	struct rmap_item *r0 = rmap_at(k, mm_of(k, m(0))->rmap_list);
	at(s, 2000000);
	expect_visit(k, "n", 0);
	assert_ptr_equal(node_of(k, "n"), node_of(k, m(4)));
	assert_int_equal(k->stable_node_dups, 2);
	assert_int_equal(k->stable_node_chains, 1);
	assert_int_equal(k->pages_shared, 2);	/* B, C */
	assert_int_equal(k->pages_sharing, 2);	/* B's second, n */
	assert_int_equal(r0->flags & KSM_FLAG_MASK, 0);
	assert_int_equal(mm_of(k, m(0))->ksm_merging_pages, 0);
	check_invariants(k);
}

/*
 * max_page_sharing 2: a chain of B (m2, m3; first) and A (m0, m1), made as
 * in stale_dup_behind_candidate. A new mm n of byte 5 gets its first visit
 * in a pass; in the next, after m0 .. m3 were visited, both mappings of A
 * (stale_a) and of B (stale_b) are unmapped, which frees their KSM pages
 * and leaves their nodes stale. The next visit is n's second.
 */
static void two_dups_one_stale(struct sim *s, bool stale_a, bool stale_b)
{
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, 2);
	spawn_pages(s, 0, 4, 5);
	pass(k, 4);
	pass(k, 4);
	assert_int_equal(k->stable_node_chains, 1);
	spawn_mergeable(s, "n", 1);
	fill(s, "n", 0, 1, 5);
	pass(k, 5);
	for (unsigned i = 0; i < 4; i++)
		expect_visit(k, m(i), 0);
	for (unsigned i = 0; i < 4; i++)
		if ((i < 2 && stale_a) || (i >= 2 && stale_b))
			unmap_pages(s, m(i), 0, 1);
}

/*
 * n's search walks the chain (no prune due): B is stale and goes; A is
 * alive, though full, and is the one dup left, so stable_node_dup puts A
 * back in the tree in the chain's place and frees the chain
 * (stable_node_chains - 1, stable_node_dups - 1): the kernel collapses on
 * hlist_is_singular_node alone, whatever the dup's fill. A is full (2 of
 * 2), so the search then finds no candidate and n goes to the unstable
 * tree.
 */
static void test_chain_collapses_to_last_dup(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	two_dups_one_stale(s, false, true);
	struct stable_node *a = node_of(k, m(0));
	expect_visit(k, "n", 0);
	assert_int_equal(k->stable_node_chains, 0);
	assert_int_equal(k->stable_node_dups, 0);
	assert_ptr_equal(stable_root(k), a);
	assert_false(a->is_dup);
	assert_null(stable_node_chain(k, a));
	assert_int_equal(a->rmap_hlist_len, 2);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->pages_unshared, 1);	/* n */
	assert_true(rmap_at(k, mm_of(k, "n")->rmap_list)->flags & UNSTABLE_FLAG);
	check_invariants(k);
}

/*
 * Both dups stale: the walk removes both, finds none, and frees the chain
 * (free_stable_node_chain); the search starts again on an empty tree and n
 * goes to the unstable tree. Every count of the four items is gone.
 */
static void test_chain_freed_when_no_dup_alive(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	two_dups_one_stale(s, true, true);
	expect_visit(k, "n", 0);
	assert_int_equal(k->stable_node_chains, 0);
	assert_int_equal(k->stable_node_dups, 0);
	assert_null(k->root_stable_tree[0].rb_node);
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->pages_sharing, 0);
	assert_int_equal(k->pages_unshared, 1);
	check_invariants(k);
}

/*
 * A regular node whose KSM page went (both mappings unmapped after their
 * visit) is noticed by the next search that meets it: ksm_get_folio
 * removes it and its items stop counting at once (pages_shared and
 * pages_sharing 0), before the cursor reaches their addresses; their
 * rmap_items stay, now volatile. The search restarts on the empty tree.
 */
static void test_stale_node_drops_counts_at_once(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "c", 1);
	fill(s, "c", 0, 1, 7);
	pass(k, 3);	/* a and b: KSM already; c: its checksum */
	expect_visit(k, "a", 0);
	expect_visit(k, "b", 0);
	unmap_pages(s, "a", 0, 1);
	unmap_pages(s, "b", 0, 1);
	assert_int_equal(k->pages_shared, 1);	/* not noticed yet */
	expect_visit(k, "c", 0);
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->pages_sharing, 0);
	assert_null(k->root_stable_tree[0].rb_node);
	assert_int_equal(k->pages_unshared, 1);	/* c */
	assert_int_equal(mm_of(k, "a")->ksm_merging_pages, 0);
	assert_int_equal(rmap_at(k, mm_of(k, "a")->rmap_list)->flags & KSM_FLAG_MASK, 0);
	/* three rmap_items, one in the unstable tree: two volatile */
	assert_int_equal(counters(k).pages_volatile, 2);
}

/*
 * A KSM page shared by fork: the child c maps it with no rmap_item. At c's
 * first visit cmp_and_merge_page sees a KSM page its item is not listed
 * under, so it takes no checksum; stable_tree_search returns the page
 * itself ("ksm page forked"), try_to_merge_one_page has nothing to do, and
 * stable_tree_append lists the item: pages_sharing + 1, past
 * max_page_sharing (2) if need be (the kernel's max_page_sharing_bypass).
 */
static void test_forked_ksm_page_listed_past_max_page_sharing(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, 2);	/* no KSM page yet: accepted */
	pass(k, 2);
	pass(k, 2);
	struct stable_node *node = node_of(k, "a");
	assert_int_equal(node->rmap_hlist_len, 2);	/* full */
	fork_mm(s, "a", "c");
	uint64_t checksums = k->truth.checksums;
	expect_visit(k, "a", 0);
	expect_visit(k, "b", 0);
	expect_visit(k, "c", 0);	/* first visit */
	assert_int_equal(k->truth.checksums, checksums);
	assert_ptr_equal(rmap_at(k, mm_of(k, "c")->rmap_list)->head, node);
	assert_int_equal(node->rmap_hlist_len, 3);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 2);
	assert_int_equal(k->truth.merges_stable, 0);	/* no page was replaced */
	assert_int_equal(page_mapcount(k, page_at(k, "c", 0)), 3);
}

/* ---- max_page_sharing and remove_all_stable_nodes ---- */

/*
 * max_page_sharing_store refuses a change (EBUSY) while pages_shared is
 * not 0; the same value is no change and is accepted.
 */
static void test_max_page_sharing_refused_while_shared(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	s->rec.verb = TRACE_SET;
	s->rec.knob = KNOB_MAX_PAGE_SHARING;
	s->rec.value = 3;
	apply_refused(s, KSM_ERROR_BUSY);
	assert_int_equal(ksm_knob(k, KNOB_MAX_PAGE_SHARING), 256);
	set(s, KNOB_MAX_PAGE_SHARING, 256);
	assert_int_equal(k->pages_shared, 1);
}

/*
 * remove_all_stable_nodes refuses a node whose KSM page is still mapped,
 * even with pages_shared 0. a's KSM page is forked into c, then a and b
 * unmap theirs; the cursor frees a's and b's items as it passes (each
 * leaves the node: pages_sharing, then pages_shared - 1) and stops on c's
 * page before c's item is listed. The node has no item but a mapped page:
 * busy, so the change is refused and the node stays.
 */
static void test_max_page_sharing_busy_node(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	struct stable_node *node = node_of(k, "a");
	fork_mm(s, "a", "c");
	unmap_pages(s, "a", 0, 1);
	unmap_pages(s, "b", 0, 1);
	struct page *page = NULL;
	struct rmap_item *rc = scan_get_next_rmap_item(k, &page);
	assert_non_null(rc);
	assert_ptr_equal(rmap_item_mm(k, rc), mm_of(k, "c"));
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->pages_sharing, 0);
	assert_int_equal(node->rmap_hlist_len, 0);
	s->rec.verb = TRACE_SET;
	s->rec.knob = KNOB_MAX_PAGE_SHARING;
	s->rec.value = 3;
	apply_refused(s, KSM_ERROR_BUSY);
	assert_int_equal(ksm_knob(k, KNOB_MAX_PAGE_SHARING), 256);
	assert_ptr_equal(stable_root(k), node);
	cmp_and_merge_page(k, page, rc);	/* c's item is listed now */
	assert_int_equal(k->pages_shared, 1);
}

/*
 * An emptied chain stays in the tree: with every mapping of both dups
 * unmapped, the cursor frees the four items, each asking its dup for its
 * page and so removing it (stable_node_dups 0), but nothing walks the
 * chain itself (stable_node_chains 1). An accepted max_page_sharing change
 * runs remove_all_stable_nodes, which frees it.
 */
static void test_empty_chain_freed_by_knob_change(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_MAX_PAGE_SHARING, 2);
	spawn_pages(s, 0, 4, 5);
	pass(k, 4);
	pass(k, 4);
	for (unsigned i = 0; i < 4; i++)
		unmap_pages(s, m(i), 0, 1);
	pass(k, 0);	/* every mm loses its items and, with no VMA, its slot */
	assert_int_equal(k->rmap_items, 0);
	assert_int_equal(k->stable_node_dups, 0);
	assert_int_equal(k->stable_node_chains, 1);
	assert_int_equal(stable_root(k)->rmap_hlist_len, STABLE_NODE_CHAIN);
	assert_int_equal(k->pages_shared, 0);
	set(s, KNOB_MAX_PAGE_SHARING, 3);
	assert_int_equal(ksm_knob(k, KNOB_MAX_PAGE_SHARING), 3);
	assert_int_equal(k->stable_node_chains, 0);
	assert_null(k->root_stable_tree[0].rb_node);
}

/* ---- zero pages ---- */

/* mm a with two zero pages, merged with the zero page (use_zero_pages 1). */
static int setup_zero_pages_merged(void **state)
{
	sim_setup(state);
	struct sim *s = *state;
	set(s, KNOB_USE_ZERO_PAGES, 1);
	spawn_mergeable(s, "a", 2);
	fill(s, "a", 0, 2, 0);
	pass(s->k, 2);	/* the checksums: zero_checksum */
	pass(s->k, 2);	/* try_to_merge_with_zero_page */
	assert_int_equal(s->k->zero_pages, 2);
	assert_ptr_equal(page_at(s->k, "a", 0), KSM_ZERO_PTE);
	return 0;
}

/*
 * try_to_merge_with_zero_page runs before the stable tree: a zero page
 * whose checksum is zero_checksum maps the zero page even though a KSM page
 * of zeros exists (made while use_zero_pages was 0). The KSM page keeps its
 * two mappings.
 */
static void test_zero_page_before_stable_tree(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 2);
	fill(s, "a", 0, 2, 0);
	pass(k, 2);
	pass(k, 2);
	struct stable_node *node = node_of(k, "a");
	spawn_mergeable(s, "b", 1);
	fill(s, "b", 0, 1, 0);
	set(s, KNOB_USE_ZERO_PAGES, 1);
	pass(k, 3);	/* b: the checksum */
	pass(k, 3);
	assert_ptr_equal(page_at(k, "b", 0), KSM_ZERO_PTE);
	assert_int_equal(k->zero_pages, 1);
	assert_int_equal(mm_of(k, "b")->ksm_zero_pages, 1);
	assert_int_equal(node->rmap_hlist_len, 2);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->truth.merges_zero, 1);
	assert_int_equal(k->truth.merges_stable, 0);
	check_invariants(k);
}

/*
 * A page that is zero but for its last 8 bytes has not the zero page's
 * checksum: it is not mapped to the zero page, and two of them merge as a
 * KSM page.
 */
static void test_almost_zero_page_not_zero_merged(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_USE_ZERO_PAGES, 1);
	spawn_mergeable(s, "a", 2);
	write_form(s, "a", 0, CONTENT_WORD, 1, 511);
	write_form(s, "a", 1, CONTENT_WORD, 1, 511);
	pass(k, 2);
	assert_int_not_equal(rmap_item_oldchecksum(k, rmap_at(k, mm_of(k, "a")->rmap_list)), k->zero_checksum);
	pass(k, 2);
	assert_int_equal(k->zero_pages, 0);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
}

/*
 * A store to a KSM zero PTE copies from the zero page: no KSM folio, so no
 * cow_ksm, and ksm_zero_pages (global and the mm's) drops at once
 * (ksm_might_unmap_zero_page).
 */
static void test_zero_page_store_drops_count(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	fill(s, "a", 0, 1, 3);
	assert_int_equal(k->zero_pages, 1);
	assert_int_equal(mm_of(k, "a")->ksm_zero_pages, 1);
	assert_int_equal(k->cow_ksm, 0);
	struct page *p = page_at(k, "a", 0);
	assert_true(pte_is_page(p));
	assert_false(p->ksm);
	assert_int_equal(counters(k).ksm_zero_pages, 1);
}

/* munmap of a KSM zero PTE lowers ksm_zero_pages at once, without cow_ksm. */
static void test_zero_page_unmap_drops_count(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	unmap_pages(s, "a", 1, 1);
	assert_int_equal(k->zero_pages, 1);
	assert_int_equal(mm_of(k, "a")->ksm_zero_pages, 1);
	assert_int_equal(k->cow_ksm, 0);
}

/*
 * MADV_UNMERGEABLE: break_ksm turns each KSM zero PTE back into a private
 * zeroed page (ksm_zero_pages - 1 each, no cow_ksm).
 */
static void test_zero_page_unmergeable_unshares(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	on(s, TRACE_ADVISE, "a", 0, 2);
	s->rec.mergeable = false;
	apply(s);
	assert_int_equal(k->zero_pages, 0);
	assert_int_equal(mm_of(k, "a")->ksm_zero_pages, 0);
	assert_int_equal(k->cow_ksm, 0);
	for (uint64_t vpn = 0; vpn < 2; vpn++) {
		struct page *p = page_at(k, "a", vpn);
		assert_true(pte_is_page(p));
		assert_true(content_is_zero(p->c));
	}
}

/*
 * After the merge the rmap_items stay, volatile; the cursor does not visit
 * zero PTEs, so at the end of a's next walk remove_trailing_rmap_items
 * frees both. general_profit then charges no rmap_item:
 * (pages_sharing 0 + ksm_zero_pages 2) x 4096 - 0 x 64.
 */
static void test_zero_page_items_freed_next_pass(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	assert_int_equal(k->rmap_items, 2);
	assert_int_equal(rmap_at(k, mm_of(k, "a")->rmap_list)->flags & KSM_FLAG_MASK, 0);
	assert_int_equal(counters(k).general_profit, 2 * 4096 - 2 * 64);
	pass(k, 0);
	assert_int_equal(k->rmap_items, 0);
	assert_int_equal(mm_of(k, "a")->ksm_rmap_items, 0);
	assert_true(mm_of(k, "a")->registered);	/* its VMA is still mergeable */
	assert_int_equal(counters(k).general_profit, 2 * 4096);
}

/* ---- smart scan ---- */

/*
 * should_skip_rmap_item on a page that never merges: the item ages by one a
 * visit; ages 0-2 are processed; from age 3, when remaining_skips is 0 the
 * page is processed and remaining_skips = skip_age(age) (1 to age 3, 2 to
 * 5, 4 to 8, 8 beyond), else skipped. Passes, from 0:
 *   0, 1, 2: processed (ages 0-2); 3: processed, skips 1;
 *   4: skipped; 5: processed (age 5), skips 2; 6, 7: skipped;
 *   8: processed (age 8), skips 4; 9-12 skipped; 13: processed (age 13),
 *   skips 8; 14-21 skipped; 22 processed; 23-30 skipped; 31; ...; 40.
 * In 41 passes: 10 processed, 31 skipped; the age is 41.
 */
static void test_smart_scan_processed_passes(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_SMART_SCAN, 1);
	static const unsigned processed[] = { 0, 1, 2, 3, 5, 8, 13, 22, 31, 40 };
	unsigned next = 0;
	for (unsigned p = 0; p <= 40; p++) {
		bool expected = next < G_N_ELEMENTS(processed) && processed[next] == p;
		struct rmap_item *r = visit(k);
		if (expected) {
			if (!r)
				fail_msg("pass %u: skipped, expected processed", p);
			next++;
			expect_end_of_pass(k, p + 1);
		} else if (r) {
			fail_msg("pass %u: processed, expected skipped", p);
		} else {
			assert_int_equal(k->full_scans_total, p + 1);
		}
	}
	assert_int_equal(next, G_N_ELEMENTS(processed));
	assert_int_equal(k->pages_skipped, 31);
	assert_int_equal(rmap_at(k, mm_of(k, "a")->rmap_list)->age, 41);
}

/*
 * skip_age's steps, each on the item as the kernel leaves it: age A,
 * remaining_skips 0, one more visit: processed, remaining_skips =
 * skip_age(A), age A + 1 but never beyond 255 (U8_MAX).
 */
static void test_smart_scan_skip_age_steps(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_SMART_SCAN, 1);
	pass(k, 1);
	struct rmap_item *r = rmap_at(k, mm_of(k, "a")->rmap_list);
	static const struct { uint8_t age, skips, next_age; } steps[] = {
		{ 3, 1, 4 }, { 4, 2, 5 }, { 5, 2, 6 }, { 6, 4, 7 }, { 8, 4, 9 },
		{ 9, 8, 10 }, { 200, 8, 201 }, { 254, 8, 255 }, { 255, 8, 255 },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(steps); i++) {
		r->age = steps[i].age;
		r->remaining_skips = 0;
		assert_ptr_equal(visit(k), r);
		expect_end_of_pass(k, k->full_scans_total + 1);
		assert_int_equal(r->remaining_skips, steps[i].skips);
		assert_int_equal(r->age, steps[i].next_age);
	}
	/* at 255 a skip leaves the age as it is */
	assert_null(visit(k));
	assert_int_equal(r->age, 255);
	assert_int_equal(r->remaining_skips, 7);
	assert_int_equal(k->pages_skipped, 1);
}

/*
 * A skip takes the item out of what it counted for: a unique page is in
 * the unstable tree after passes 1-3 (pages_unshared 1); skipped at pass 4,
 * remove_rmap_item_from_tree drops it (inserted at seqnr 3, one pass old:
 * nothing to erase, pages_unshared - 1) and it is volatile.
 */
static void test_smart_scan_skip_leaves_unstable_tree(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_SMART_SCAN, 1);
	for (unsigned p = 0; p < 4; p++)
		pass(k, 1);
	struct rmap_item *r = rmap_at(k, mm_of(k, "a")->rmap_list);
	assert_int_equal(r->flags, UNSTABLE_FLAG | 3);
	assert_int_equal(k->pages_unshared, 1);
	expect_end_of_pass(k, 5);	/* skipped */
	assert_int_equal(k->pages_skipped, 1);
	assert_int_equal(k->pages_unshared, 0);
	assert_int_equal(r->flags, 0);
	assert_int_equal(counters(k).pages_volatile, 1);
}

/*
 * KSM pages are never skipped and do not age: a and b reach age 2 on their
 * two visits before the merge, and keep it through ten passes as KSM
 * pages.
 */
static void test_smart_scan_spares_ksm_pages(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_SMART_SCAN, 1);
	for (unsigned p = 0; p < 12; p++)
		pass(k, 2);
	assert_int_equal(k->pages_skipped, 0);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(rmap_at(k, mm_of(k, "a")->rmap_list)->age, 2);
	assert_int_equal(rmap_at(k, mm_of(k, "b")->rmap_list)->age, 2);
}

/*
 * A skip is no visit: ksm_do_scan counts pages_scanned only for pages
 * handed to cmp_and_merge_page. One page, a batch a pass: passes 0-3
 * process it, pass 4 skips it (see above), so after five batches
 * pages_scanned is 4, pages_skipped 1, full_scans 5.
 */
static void test_smart_scan_skip_not_scanned(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_SMART_SCAN, 1);
	set(s, KNOB_RUN, 1);
	for (unsigned b = 0; b < 5; b++)
		ksm_run_batch(k, k->now);
	struct ksm_counters c = counters(k);
	assert_int_equal(c.pages_scanned, 4);
	assert_int_equal(c.pages_skipped, 1);
	assert_int_equal(c.full_scans, 5);
}

/* smart_scan 0: should_skip_rmap_item returns before ageing the item. */
static void test_smart_scan_off_does_not_age(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	for (unsigned p = 0; p < 6; p++)
		pass(k, 1);
	struct rmap_item *r = rmap_at(k, mm_of(k, "a")->rmap_list);
	assert_int_equal(r->age, 0);
	assert_int_equal(r->remaining_skips, 0);
	assert_int_equal(k->pages_skipped, 0);
}

/* ---- the scan-time advisor ---- */

/*
 * One pass of the advisor: it starts at start_us (advisor_start_scan notes
 * the time), lasts dur_us, and ksmd's CPU time grows by cpu_ns meanwhile;
 * at its end scan_time_advisor rewrites pages_to_scan.
 */
static void advisor_pass(struct sim *s, uint64_t start_us, uint64_t dur_us, double cpu_ns)
{
	struct ksm *k = s->k;
	at(s, start_us);
	assert_non_null(visit(k));
	at(s, start_us + dur_us);
	k->truth.cpu_ns += cpu_ns;
	expect_end_of_pass(k, k->full_scans_total + 1);
}

/* pages_to_scan 1000 from advisor_min_pages_to_scan, target 60 s. */
static int setup_advisor(void **state)
{
	setup_one_page(state);
	struct sim *s = *state;
	set(s, KNOB_ADVISOR_MIN_PAGES_TO_SCAN, 1000);
	set(s, KNOB_ADVISOR_TARGET_SCAN_TIME, 60);
	set(s, KNOB_ADVISOR_MODE, ADVISOR_SCAN_TIME);
	assert_int_equal(ksm_knob(s->k, KNOB_PAGES_TO_SCAN), 1000);
	return 0;
}

/*
 * set_advisor_defaults: scan-time sets pages_to_scan to
 * advisor_min_pages_to_scan (500 by default), none back to 100; while the
 * advisor is on a write of pages_to_scan is refused (EINVAL).
 */
static void test_advisor_mode_sets_pages_to_scan(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_PAGES_TO_SCAN, 777);
	set(s, KNOB_ADVISOR_MODE, ADVISOR_SCAN_TIME);
	assert_int_equal(ksm_knob(k, KNOB_PAGES_TO_SCAN), 500);
	s->rec.verb = TRACE_SET;
	s->rec.knob = KNOB_PAGES_TO_SCAN;
	s->rec.value = 50;
	apply_refused(s, KSM_ERROR_INVAL);
	assert_int_equal(ksm_knob(k, KNOB_PAGES_TO_SCAN), 500);
	set(s, KNOB_ADVISOR_MODE, ADVISOR_NONE);
	assert_int_equal(ksm_knob(k, KNOB_PAGES_TO_SCAN), 100);
}

/*
 * The first pass: 90 s, 45 s of CPU. scan_time 90; cpu_percent =
 * 45000 ms x 100 / 90000 = 50; no last scan, so last_scan_time = 90;
 * factor = 60 x 100 / 90 = 66 (truncated); change = 90 x 100 / 90 = 100,
 * ewma(0, 100) = (70 x 0 + 30 x 100) / 100 = 30; pages = 1000 x 100 / 66 =
 * 1515, x 30 / 100 = 454; per_page_cost = 1000 / 50 = 20: min(454, 20 x
 * 70) = 454, max(454, 20 x 10) = 454, min(454, 30000) = 454.
 */
static void test_advisor_first_pass(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	advisor_pass(s, 1000000, 90000000, 45e9);
	assert_int_equal(ksm_knob(k, KNOB_PAGES_TO_SCAN), 454);
	assert_int_equal(k->advisor.scan_time, 90);
	assert_int_equal(k->advisor.change, 30);
}

/*
 * The second pass, from 454: 45 s, 22.5 s of CPU. cpu_percent = 22500 x
 * 100 / 45000 = 50; last_scan_time 90; factor = 6000 / 45 = 133; change =
 * 45 x 100 / 90 = 50, ewma(30, 50) = (2100 + 1500) / 100 = 36; pages =
 * 454 x 100 / 133 = 341, x 36 / 100 = 122; per_page_cost = 454 / 50 = 9:
 * min(122, 630) = 122, max(122, 90) = 122.
 */
static void test_advisor_second_pass_smooths(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	advisor_pass(s, 1000000, 90000000, 45e9);
	advisor_pass(s, 91000000, 45000000, 22.5e9);
	assert_int_equal(ksm_knob(k, KNOB_PAGES_TO_SCAN), 122);
	assert_int_equal(k->advisor.scan_time, 45);
	assert_int_equal(k->advisor.change, 36);
}

/* advisor_max_cpu 20: the first pass's 454 is capped at per_page_cost 20 x 20 = 400. */
static void test_advisor_max_cpu_caps(void **state)
{
	struct sim *s = *state;
	set(s, KNOB_ADVISOR_MAX_CPU, 20);
	advisor_pass(s, 1000000, 90000000, 45e9);
	assert_int_equal(ksm_knob(s->k, KNOB_PAGES_TO_SCAN), 400);
}

/* advisor_max_pages_to_scan 300 caps last: min(454, 300). */
static void test_advisor_max_pages_caps(void **state)
{
	struct sim *s = *state;
	set(s, KNOB_ADVISOR_MAX_PAGES_TO_SCAN, 300);
	advisor_pass(s, 1000000, 90000000, 45e9);
	assert_int_equal(ksm_knob(s->k, KNOB_PAGES_TO_SCAN), 300);
}

/*
 * The floors, with the defaults (pages_to_scan 500, target 200 s): a pass
 * of 0.4 s is scan_time 0, taken as 1; no CPU is cpu_percent 0, taken as
 * 1. factor = 200 x 100 / 1 = 20000; change ewma(0, 100) = 30; pages = 500
 * x 100 / 20000 = 2, x 30 / 100 = 0; per_page_cost = 500 / 1 = 500:
 * min(0, 35000) = 0, then the KSM_ADVISOR_MIN_CPU floor max(0, 500 x 10) =
 * 5000, under advisor_max_pages_to_scan (30000).
 */
static void test_advisor_floors(void **state)
{
	struct sim *s = *state;
	set(s, KNOB_ADVISOR_MODE, ADVISOR_SCAN_TIME);
	advisor_pass(s, 1000000, 400000, 0);
	assert_int_equal(ksm_knob(s->k, KNOB_PAGES_TO_SCAN), 5000);
	assert_int_equal(s->k->advisor.scan_time, 1);
}

/* advisor_mode none: passes leave pages_to_scan alone. */
static void test_advisor_off_leaves_pages_to_scan(void **state)
{
	struct sim *s = *state;
	advisor_pass(s, 1000000, 90000000, 45e9);
	assert_int_equal(ksm_knob(s->k, KNOB_PAGES_TO_SCAN), 100);
	assert_int_equal(s->k->advisor.scan_time, 0);
}

/* ---- the checksum gate ---- */

/*
 * A new page merges only at its second visit: the first records its
 * checksum (6.11+ checks the checksum before the stable tree), even beside
 * an identical KSM page.
 */
static void test_first_visit_only_records_checksum(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "c", 1);
	fill(s, "c", 0, 1, 7);
	pass(k, 3);
	struct rmap_item *rc = rmap_at(k, mm_of(k, "c")->rmap_list);
	assert_int_equal(rmap_item_oldchecksum(k, rc), rmap_item_oldchecksum(k, rmap_at(k, mm_of(k, "a")->rmap_list)));
	assert_int_equal(rc->flags, 0);
	assert_int_equal(k->pages_sharing, 1);
	pass(k, 3);
	assert_int_equal(k->pages_sharing, 2);
	assert_ptr_equal(rc->head, node_of(k, "a"));
	assert_int_equal(k->truth.merges_stable, 1);
}

/*
 * The gate compares checksums, not writes: a page rewritten with other
 * bytes and then its old ones again has its old checksum at the next
 * visit, passes, and merges.
 */
static void test_rewritten_same_bytes_passes_gate(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 2);
	fill(s, "a", 0, 1, 9);
	fill(s, "a", 0, 1, 7);
	pass(k, 2);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->truth.gate_changed, 0);
}

/*
 * A page whose checksum moved is volatile for the visit: it is neither
 * merged with the equal page waiting in the unstable tree nor inserted;
 * the next visit, with the same checksum, merges.
 */
static void test_changed_page_not_merged(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	fill(s, "b", 0, 1, 5);
	pass(k, 2);
	fill(s, "b", 0, 1, 7);	/* now equal to a */
	expect_visit(k, "a", 0);
	assert_int_equal(k->pages_unshared, 1);
	expect_visit(k, "b", 0);
	assert_int_equal(k->truth.merges_two, 0);
	assert_int_equal(k->pages_unshared, 1);
	assert_int_equal(rmap_at(k, mm_of(k, "b")->rmap_list)->flags, 0);
	expect_end_of_pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->truth.merges_two, 1);
}

/* ---- the lru_add batch ---- */

/*
 * The batch holds PAGEVEC_SIZE (31) pages: 30 added are all in it (each
 * would be refused by write_protect_page); the 31st fills it and it drains,
 * taking every page out at once.
 */
static void test_lru_batch_drains_at_31(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	struct page pages[PAGEVEC_SIZE];
	memset(pages, 0, sizeof(pages));
	assert_int_equal(k->lru_pending, 0);
	for (unsigned i = 0; i < PAGEVEC_SIZE - 1; i++)
		lru_add(k, &pages[i]);
	assert_int_equal(k->lru_pending, PAGEVEC_SIZE - 1);
	for (unsigned i = 0; i < PAGEVEC_SIZE - 1; i++)
		assert_true(lru_batched(k, &pages[i]));
	lru_add(k, &pages[PAGEVEC_SIZE - 1]);
	assert_int_equal(k->lru_pending, 0);
	for (unsigned i = 0; i < PAGEVEC_SIZE; i++)
		assert_false(lru_batched(k, &pages[i]));
}

/* Pages faulted in before a pass wait in the batch until its start drains it. */
static void test_lru_batch_drained_at_pass_start(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	assert_true(lru_batched(k, page_at(k, "a", 0)));
	assert_true(lru_batched(k, page_at(k, "b", 0)));
	expect_visit(k, "a", 0);
	assert_false(lru_batched(k, page_at(k, "b", 0)));
}

/*
 * A page faulted in mid-pass and reached later in it is refused by
 * write_protect_page (the batch's reference): b's page is replaced by a new
 * one of the same bytes after a went into the unstable tree. b's item is
 * reused with its checksum, so b passes the gate and matches a, but the
 * first step of try_to_merge_two_pages (b's page) fails and nothing
 * changes: b volatile, a still in the tree. The next pass starts with a
 * drain, and they merge.
 */
static void test_lru_batch_refuses_merge(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 2);
	expect_visit(k, "a", 0);
	remap_page(s, "b", 7);
	assert_true(lru_batched(k, page_at(k, "b", 0)));
	expect_visit(k, "b", 0);
	assert_int_equal(k->truth.merge_refused_lru, 1);
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->pages_unshared, 1);
	assert_int_equal(rmap_at(k, mm_of(k, "b")->rmap_list)->flags, 0);
	assert_false(page_at(k, "b", 0)->ksm);
	expect_end_of_pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
}

/*
 * The second step refused: a's page in the unstable tree is replaced by a
 * new one (in the batch) after a's visit. b matches it; b's own page
 * becomes a KSM page (step one), then merging a's into it is refused, so
 * break_cow unshares b's page again: an unshare fault on a KSM page,
 * cow_ksm + 1, and b maps a private copy.
 */
static void test_break_cow_when_tree_page_refused(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 2);
	expect_visit(k, "a", 0);
	remap_page(s, "a", 7);
	struct page *pb = page_at(k, "b", 0);
	expect_visit(k, "b", 0);
	assert_int_equal(k->truth.merge_refused_lru, 1);
	assert_int_equal(k->cow_ksm, 1);
	assert_int_equal(k->truth.merges_two, 0);
	assert_ptr_not_equal(page_at(k, "b", 0), pb);
	assert_false(page_at(k, "b", 0)->ksm);
	assert_int_equal(k->pages_shared, 0);
	assert_int_equal(k->pages_unshared, 1);	/* a */
	expect_end_of_pass(k, 2);
	pass(k, 2);
	assert_int_equal(k->pages_shared, 1);
	check_invariants(k);
}

/* ---- run = 2 ---- */

/* a and b merged, c's zero page on the zero page (use_zero_pages 1), run 1. */
static int setup_merged_and_zero(void **state)
{
	setup_two_equal_pages(state);
	struct sim *s = *state;
	set(s, KNOB_USE_ZERO_PAGES, 1);
	spawn_mergeable(s, "c", 1);
	fill(s, "c", 0, 1, 0);
	set(s, KNOB_RUN, 1);
	pass(s->k, 3);
	pass(s->k, 3);
	assert_int_equal(s->k->pages_sharing, 1);
	assert_int_equal(s->k->zero_pages, 1);
	return 0;
}

/*
 * run 2 (unmerge_and_remove_all_rmap_items): break_ksm on every mergeable
 * VMA (an unshare fault on each KSM page mapping, cow_ksm + 2; the zero
 * PTE back to a private zero page, ksm_zero_pages 0), every rmap_item freed,
 * every stable node removed, seqnr 0. The slots stay, and full_scans (from
 * the trace's start in the model) is kept.
 */
static void test_run2_unmerges_everything(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_RUN, 2);
	struct ksm_counters c = counters(k);
	assert_int_equal(c.pages_shared, 0);
	assert_int_equal(c.pages_sharing, 0);
	assert_int_equal(c.pages_unshared, 0);
	assert_int_equal(c.pages_volatile, 0);
	assert_int_equal(c.ksm_zero_pages, 0);
	assert_int_equal(c.rmap_items, 0);
	assert_int_equal(c.cow_ksm, 2);
	assert_int_equal(c.full_scans, 2);
	assert_int_equal(k->scan.seqnr, 0);
	assert_null(k->root_stable_tree[0].rb_node);
	assert_int_equal(mm_of(k, "c")->ksm_zero_pages, 0);
	assert_ptr_not_equal(page_at(k, "a", 0), page_at(k, "b", 0));
	assert_false(page_at(k, "a", 0)->ksm);
	assert_true(pte_is_page(page_at(k, "c", 0)));
	assert_true(mm_of(k, "a")->registered);
	assert_true(find_vma(mm_of(k, "a"), 0)->mergeable);
}

/* After run 2 every page is new: its next visit only takes the checksum. */
static void test_run2_then_run1_starts_afresh(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	set(s, KNOB_RUN, 2);
	set(s, KNOB_RUN, 1);
	pass(k, 3);
	assert_int_equal(k->pages_shared + k->pages_unshared + k->zero_pages, 0);
	assert_int_equal(counters(k).pages_volatile, 3);
	pass(k, 3);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 1);
	assert_int_equal(k->zero_pages, 1);
}

/* ---- counters ---- */

/*
 * general_profit is signed: three unique pages visited once are three
 * rmap_items and no saving, (0 + 0) x 4096 - 3 x 64 = -192.
 */
static void test_general_profit_negative(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 3);
	fill(s, "a", 0, 1, 1);
	fill(s, "a", 1, 1, 2);
	fill(s, "a", 2, 1, 3);
	pass(k, 3);
	assert_int_equal(counters(k).general_profit, -192);
	GArray *stats = ksm_mm_stats(k);
	assert_int_equal(g_array_index(stats, struct ksm_mm_stat, 0).ksm_process_profit, -192);
	g_array_free(stats, TRUE);
}

/*
 * System-wide the saving is pages_sharing (the first mapping of a KSM page
 * saves nothing): 1 x 4096 - 2 x 64 = 3968. Per mm it is
 * ksm_merging_pages, all its mappings of KSM pages: 1 x 4096 - 1 x 64 =
 * 4032 for each of a and b.
 */
static void test_general_and_process_profit(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	assert_int_equal(counters(k).general_profit, 3968);
	GArray *stats = ksm_mm_stats(k);
	assert_int_equal(stats->len, 2);
	for (guint i = 0; i < stats->len; i++) {
		struct ksm_mm_stat *st = &g_array_index(stats, struct ksm_mm_stat, i);
		assert_int_equal(st->ksm_merging_pages, 1);
		assert_int_equal(st->ksm_process_profit, 4032);
	}
	g_array_free(stats, TRUE);
}

/*
 * pages_volatile is what no tree counts: rmap_items - pages_shared -
 * pages_sharing - pages_unshared. Four items: a merged pair, c unique in
 * the unstable tree, d written since its last visit: 4 - 1 - 1 - 1 = 1.
 */
static void test_pages_volatile_is_the_rest(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "c", 1);
	fill(s, "c", 0, 1, 1);
	spawn_mergeable(s, "d", 1);
	fill(s, "d", 0, 1, 2);
	pass(k, 4);
	fill(s, "d", 0, 1, 3);
	pass(k, 4);
	struct ksm_counters c = counters(k);
	assert_int_equal(c.rmap_items, 4);
	assert_int_equal(c.pages_shared, 1);
	assert_int_equal(c.pages_sharing, 1);
	assert_int_equal(c.pages_unshared, 1);
	assert_int_equal(c.pages_volatile, 1);
}

/* pages_volatile_show conceals a negative difference as 0. */
static void test_pages_volatile_clamped_at_zero(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	pass(k, 2);
	assert_int_equal(counters(k).pages_volatile, 2);
	uint64_t saved = k->pages_unshared;
	k->pages_unshared = k->rmap_items + 1;	/* as a racy read could see */
	assert_int_equal(counters(k).pages_volatile, 0);
	k->pages_unshared = saved;
}

/* mm a with n unique pages, run 1, pages_to_scan p: batches through ksm_run_batch. */
static void batches(struct sim *s, unsigned n, unsigned p)
{
	spawn_mergeable(s, "a", n);
	for (unsigned i = 0; i < n; i++)
		fill(s, "a", i, 1, (uint8_t)(i + 1));
	set(s, KNOB_PAGES_TO_SCAN, p);
	set(s, KNOB_RUN, 1);
}

static void expect_batch(struct ksm *k, uint64_t pages_scanned, uint64_t full_scans)
{
	ksm_run_batch(k, k->now);
	assert_int_equal(counters(k).pages_scanned, pages_scanned);
	assert_int_equal(counters(k).full_scans, full_scans);
}

/*
 * ksm_do_scan ends a batch early at the end of a pass: 5 pages at
 * pages_to_scan 2 take floor(5 / 2) + 1 = 3 batches, the last visiting
 * 5 mod 2 = 1; the next batch starts a new pass.
 */
static void test_batch_ends_at_pass_end(void **state)
{
	struct sim *s = *state;
	batches(s, 5, 2);
	expect_batch(s->k, 2, 0);
	expect_batch(s->k, 4, 0);
	expect_batch(s->k, 5, 1);
	expect_batch(s->k, 7, 1);
}

/* 4 pages at pages_to_scan 2: the third batch visits 4 mod 2 = 0 and only ends the pass. */
static void test_batch_ends_pass_without_visit(void **state)
{
	struct sim *s = *state;
	batches(s, 4, 2);
	expect_batch(s->k, 2, 0);
	expect_batch(s->k, 4, 0);
	expect_batch(s->k, 4, 1);
}

/*
 * A pass over mms with no page to visit still counts in full_scans. Once
 * the last mm has no mergeable VMA, its walk unregisters it, and with the
 * slot list empty the cursor returns at once, counting nothing more.
 */
static void test_full_scans_count_empty_passes(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 4);
	pass(k, 0);
	pass(k, 0);
	assert_int_equal(counters(k).full_scans, 2);
	on(s, TRACE_ADVISE, "a", 0, 4);
	s->rec.mergeable = false;
	apply(s);
	pass(k, 0);	/* a unregistered at the end of its walk */
	assert_false(mm_of(k, "a")->registered);
	assert_null(visit(k));
	assert_int_equal(counters(k).full_scans, 3);
}

/* ---- the cursor frees rmap_items ---- */

/*
 * remove_trailing_rmap_items: items beyond the last page of an mm's walk
 * are freed at its end, each first undoing what it counted for. Four unique
 * pages in the unstable tree (inserted at seqnr 1); pages 2 and 3 unmapped;
 * the next pass reinserts 0 and 1 and frees 2 and 3 (one pass old: nothing
 * to erase, pages_unshared - 1 each): 2 items, 2 unshared.
 */
static void test_trailing_items_freed(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "a", 4);
	for (unsigned i = 0; i < 4; i++)
		fill(s, "a", i, 1, (uint8_t)(i + 1));
	pass(k, 4);
	pass(k, 4);
	assert_int_equal(k->pages_unshared, 4);
	unmap_pages(s, "a", 2, 2);
	pass(k, 2);
	assert_int_equal(k->rmap_items, 2);
	assert_int_equal(mm_of(k, "a")->ksm_rmap_items, 2);
	assert_int_equal(k->pages_unshared, 2);
	check_invariants(k);
}

/*
 * A stable item freed by the cursor leaves its node: a unmaps its mapping
 * of the KSM page, and at the end of a's walk (a with no VMA: also
 * unregistered) its item goes, pages_sharing - 1. The KSM page, mapped by
 * b alone, keeps its node: pages_shared 1, pages_sharing 0.
 */
static void test_trailing_stable_item_leaves_node(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	struct stable_node *node = node_of(k, "b");
	unmap_pages(s, "a", 0, 1);
	pass(k, 1);
	assert_false(mm_of(k, "a")->registered);
	assert_int_equal(mm_of(k, "a")->ksm_merging_pages, 0);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 0);
	assert_int_equal(node->rmap_hlist_len, 1);
	assert_ptr_equal(node_of(k, "b"), node);
	assert_int_equal(page_mapcount(k, page_at(k, "b", 0)), 1);
}

/*
 * __ksm_exit moves an mm with items just after the cursor; ksmd, reaching
 * it, frees all of them at once without visiting a page and drops the mm.
 * Here the cursor is between passes, so a is walked first: its item leaves
 * the node (pages_sharing - 1) before b's page is returned.
 */
static void test_exiting_mm_freed_at_cursor(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	spawn_mergeable(s, "c", 1);
	fill(s, "c", 0, 1, 1);
	pass(k, 3);
	pass(k, 3);
	on(s, TRACE_EXIT, "a", 0, 0);
	apply(s);
	assert_int_equal(k->rmap_items, 3);
	expect_visit(k, "b", 0);
	assert_int_equal(k->rmap_items, 2);
	assert_int_equal(k->pages_shared, 1);
	assert_int_equal(k->pages_sharing, 0);
	expect_visit(k, "c", 0);
	expect_end_of_pass(k, 3);
}

#define fixture(f, setup) cmocka_unit_test_setup_teardown(f, setup, sim_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		fixture(test_chain_forms_when_node_full, sim_setup),
		fixture(test_dup_without_prune_takes_first_candidate, sim_setup),
		fixture(test_dup_prune_takes_fullest_candidate, sim_setup),
		fixture(test_dup_prune_interval_is_the_knob, sim_setup),
		fixture(test_dup_found_moves_to_head, sim_setup),
		fixture(test_dup_walk_without_prune_leaves_stale_dup, sim_setup),
		fixture(test_dup_prune_removes_stale_dup, sim_setup),
		fixture(test_chain_collapses_to_last_dup, sim_setup),
		fixture(test_chain_freed_when_no_dup_alive, sim_setup),
		fixture(test_stale_node_drops_counts_at_once, setup_merged_pair),
		fixture(test_forked_ksm_page_listed_past_max_page_sharing, setup_two_equal_pages),
		fixture(test_max_page_sharing_refused_while_shared, setup_merged_pair),
		fixture(test_max_page_sharing_busy_node, setup_merged_pair),
		fixture(test_empty_chain_freed_by_knob_change, sim_setup),
		fixture(test_zero_page_before_stable_tree, sim_setup),
		fixture(test_almost_zero_page_not_zero_merged, sim_setup),
		fixture(test_zero_page_store_drops_count, setup_zero_pages_merged),
		fixture(test_zero_page_unmap_drops_count, setup_zero_pages_merged),
		fixture(test_zero_page_unmergeable_unshares, setup_zero_pages_merged),
		fixture(test_zero_page_items_freed_next_pass, setup_zero_pages_merged),
		fixture(test_smart_scan_processed_passes, setup_one_page),
		fixture(test_smart_scan_skip_age_steps, setup_one_page),
		fixture(test_smart_scan_skip_leaves_unstable_tree, setup_one_page),
		fixture(test_smart_scan_spares_ksm_pages, setup_two_equal_pages),
		fixture(test_smart_scan_skip_not_scanned, setup_one_page),
		fixture(test_smart_scan_off_does_not_age, setup_one_page),
		fixture(test_advisor_mode_sets_pages_to_scan, sim_setup),
		fixture(test_advisor_first_pass, setup_advisor),
		fixture(test_advisor_second_pass_smooths, setup_advisor),
		fixture(test_advisor_max_cpu_caps, setup_advisor),
		fixture(test_advisor_max_pages_caps, setup_advisor),
		fixture(test_advisor_floors, setup_one_page),
		fixture(test_advisor_off_leaves_pages_to_scan, setup_one_page),
		fixture(test_first_visit_only_records_checksum, setup_merged_pair),
		fixture(test_rewritten_same_bytes_passes_gate, setup_two_equal_pages),
		fixture(test_changed_page_not_merged, setup_two_equal_pages),
		fixture(test_lru_batch_drains_at_31, sim_setup),
		fixture(test_lru_batch_drained_at_pass_start, setup_two_equal_pages),
		fixture(test_lru_batch_refuses_merge, setup_two_equal_pages),
		fixture(test_break_cow_when_tree_page_refused, setup_two_equal_pages),
		fixture(test_run2_unmerges_everything, setup_merged_and_zero),
		fixture(test_run2_then_run1_starts_afresh, setup_merged_and_zero),
		fixture(test_general_profit_negative, sim_setup),
		fixture(test_general_and_process_profit, setup_merged_pair),
		fixture(test_pages_volatile_is_the_rest, setup_two_equal_pages),
		fixture(test_pages_volatile_clamped_at_zero, setup_two_equal_pages),
		fixture(test_batch_ends_at_pass_end, sim_setup),
		fixture(test_batch_ends_pass_without_visit, sim_setup),
		fixture(test_full_scans_count_empty_passes, sim_setup),
		fixture(test_trailing_items_freed, sim_setup),
		fixture(test_trailing_stable_item_leaves_node, setup_merged_pair),
		fixture(test_exiting_mm_freed_at_cursor, setup_two_equal_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
