// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The chain index against the walk it stands for: random churn of a
 * chain's dups (new at the head, moved to the head, deleted anywhere,
 * candidacy and pages changing), and after every change the index's first
 * dup of each kind, the place of each, and the counts are what walking the
 * list in order gives. The dups and their page come from the slabs a run
 * has (the node names its page by its index in the page slab).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sim/ksm_internal.h"

#define N 300

struct model {
	struct stable_node *list[N];	/* list order, head first */
	bool cand[N];			/* of list[i], is_page_sharing_candidate() */
	int n;
};

static struct ksm *k;		/* only its two slabs */
static struct page *the_page;

static void check(const struct chain_index *ci, const struct model *m)
{
	uint32_t stale = 0, cands = 0;
	struct stable_node *first[CHAIN_KINDS] = { 0 };
	for (int i = 0; i < m->n; i++) {
		struct stable_node *d = m->list[i];
		struct page *p = stable_node_page(k, d);
		assert_true(!p || p == the_page);
		bool live = p, c = m->cand[i];
		stale += !live;
		cands += c;
		assert_int_equal(chain_index_place(ci, d), i + 1);
		if (!first[CHAIN_ALL])
			first[CHAIN_ALL] = d;
		if (live && !first[CHAIN_LIVE])
			first[CHAIN_LIVE] = d;
		if (live && c && !first[CHAIN_CAND])
			first[CHAIN_CAND] = d;
		if (!live && !first[CHAIN_STALE])
			first[CHAIN_STALE] = d;
	}
	assert_int_equal(ci->nr_dups, m->n);
	assert_int_equal(ci->nr_stale, stale);
	assert_int_equal(ci->nr_candidates, cands);
	for (int t = 0; t < CHAIN_KINDS; t++)
		assert_ptr_equal(chain_index_first(ci, t), first[t]);
}

static void remove_at(struct model *m, int i)
{
	memmove(&m->list[i], &m->list[i + 1], (m->n - i - 1) * sizeof(m->list[0]));
	memmove(&m->cand[i], &m->cand[i + 1], (m->n - i - 1) * sizeof(m->cand[0]));
	m->n--;
}

static void push_head(struct model *m, struct stable_node *d, bool c)
{
	memmove(&m->list[1], &m->list[0], m->n * sizeof(m->list[0]));
	memmove(&m->cand[1], &m->cand[0], m->n * sizeof(m->cand[0]));
	m->list[0] = d;
	m->cand[0] = c;
	m->n++;
}

static void test_churn(void **state)
{
	(void)state;
	k = g_new0(struct ksm, 1);
	slab_init(&k->page_slab, sizeof(struct page), _Alignof(struct page), "pages");
	slab_init(&k->stable_node_cache, sizeof(struct stable_node), 64, "stable nodes");
	/* not the slab's first page: an index above 1 decodes too */
	slab_alloc0(&k->page_slab);
	the_page = slab_alloc0(&k->page_slab);
	struct chain_index *ci = chain_index_new();
	struct model m = { .n = 0 };
	int unused = N;
	struct stable_node *pool[N];
	for (int i = 0; i < N; i++)
		pool[i] = slab_alloc0(&k->stable_node_cache);
	srand(7);
	for (int step = 0; step < 20000; step++) {
		int op = rand() % 6;
		if ((op == 0 || !m.n) && unused) {	/* a new dup at the head */
			struct stable_node *d = pool[--unused];
			stable_node_set_page(k, d, rand() % 8 ? the_page : NULL);
			bool c = rand() % 2;
			chain_index_add_head(ci, d, c);
			push_head(&m, d, c);
		} else if (!m.n) {
			continue;
		} else if (op == 1) {			/* a dup deleted */
			int i = rand() % m.n;
			chain_index_del(ci, m.list[i]);
			pool[unused++] = m.list[i];
			remove_at(&m, i);
		} else if (op == 2) {			/* a dup moved to the head */
			int i = rand() % m.n;
			struct stable_node *d = m.list[i];
			bool c = m.cand[i];
			chain_index_del(ci, d);
			chain_index_add_head(ci, d, c);
			remove_at(&m, i);
			push_head(&m, d, c);
		} else if (op == 3) {			/* candidacy changes */
			int i = rand() % m.n;
			m.cand[i] = !m.cand[i];
			chain_index_update(ci, m.list[i], m.cand[i]);
		} else if (op == 4) {			/* a page freed */
			int i = rand() % m.n;
			if (stable_node_page(k, m.list[i])) {
				stable_node_set_page(k, m.list[i], NULL);
				chain_index_page_gone(ci, m.list[i]);
			}
		} else {
			continue;
		}
		check(ci, &m);
	}
	chain_index_free(ci);
	slab_destroy(&k->stable_node_cache);
	slab_destroy(&k->page_slab);
	g_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
