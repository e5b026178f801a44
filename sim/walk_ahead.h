/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What makes the unstable-tree search fast, kept out of its twin
 * (unstable_tree_search_insert in ksm.c), which calls it at its start,
 * at each level and at its end. None of it decides anything: with or
 * without it the model's results are the same to the bit.
 *
 * The search's walk is a chain of cache misses, one a level. The walks
 * ahead go down beside it along the paths of the next pages ksmd will
 * visit, by their first 8 bytes read from the page table ahead of the
 * cursor (walks_ahead_plan, before each visit), a step at a time and from
 * where they left off, loading only, so that their misses overlap the
 * search's own and the walks to come find their lines loaded. The search
 * itself keeps its tallies in registers, decides a level by the keys the
 * rmap_items cache, picks the child without a branch and fetches the one
 * line off its path that rb_insert_color reads. sim/MODEL.md ("Sizing a
 * run") has the measurements behind each choice.
 */
#ifndef KSMSIM_SIM_WALK_AHEAD_H
#define KSMSIM_SIM_WALK_AHEAD_H

#include <stddef.h>
#include "sim/ksm_internal.h"

/*
 * Before a visit: the walks for pages the cursor has reached are dropped
 * and the ring is filled up from after its last page (walk_ahead.c).
 */
void walks_ahead_plan(struct ksm *k);

/*
 * A node left an unstable tree (an erase, a pass's reset): the next
 * search starts every walk again at the root, so that none reads a node
 * that left or was freed.
 */
static inline void walks_ahead_forget(struct ksm *k)
{
	k->ahead.unstable_gen++;
}

/*
 * KSM_AHEAD_STEPS steps, round robin over the n walks of the ring from
 * head, starting at turn, each a level down its page's path by its key;
 * loading only. Returns the next turn.
 */
static inline unsigned walks_ahead_step(struct walks_ahead *w, unsigned head, unsigned n,
					unsigned turn)
{
	for (unsigned t = 0; t < KSM_AHEAD_STEPS; t++) {
		struct walk_ahead *a = &w->ring[(head + turn) % KSM_LOOKAHEAD];
		turn = turn + 1 < n ? turn + 1 : 0;
		const struct rb_node *node = a->node;
		if (node) {
			const struct rmap_item *it = rb_entry(node, struct rmap_item, node);
			node = a->key >> 32 < it->cached_key ? node->rb_left : node->rb_right;
			if (node)
				__builtin_prefetch(node);	/* the item's one line */
			a->node = node;
		}
	}
	return turn;
}

/*
 * One unstable-tree search as the levels go: what it adds to the
 * counters, kept in registers while it runs and added at its end (the
 * time is priced from the counts at the batch's end, pricing.c), where
 * the walks ahead stand, and the path's last two levels for the uncle.
 */
struct search_walk {
	/* compares decided by the cached keys (high half) and their bytes (low half): one add a level */
	uint64_t key_cmps;
	uint64_t levels;		/* the tree_level count */
	unsigned depth;			/* tree levels gone down (for the cold levels) */
	uint64_t key;			/* the page's first 8 bytes */
	bool corrupt;			/* went through a node whose page changed */
	unsigned head, n_ahead, turn;	/* the walks ahead: the first, how many, the next to step */
	struct rb_node **grand_kids, *uncle;
	unsigned grand_way;
};

_Static_assert(offsetof(struct rb_node, rb_right) ==
		       offsetof(struct rb_node, rb_left) + sizeof(struct rb_node *),
	       "the search picks a child by index: rb_left and rb_right side by side");

/*
 * A search for page in the unstable tree of index tree begins. If that is
 * not the tree the walks ahead are in, or a node left it since, they
 * start again at its root.
 */
static inline void search_walk_start(struct ksm *k, struct search_walk *s, uint32_t tree,
				     const struct page *page)
{
	struct walks_ahead *w = &k->ahead;
	if (w->tree != tree + 1 || w->gen != w->unstable_gen) {
		const struct rb_node *root = k->root_unstable_tree[tree].rb_node;
		w->tree = tree + 1;
		w->gen = w->unstable_gen;
		for (unsigned j = 0; j < w->n; j++)
			w->ring[(w->head + j) % KSM_LOOKAHEAD].node = root;
	}
	s->key_cmps = 0;
	s->levels = 0;
	s->depth = 0;
	s->key = page_key8(page);
	s->corrupt = false;
	s->head = w->head;
	s->n_ahead = w->n;
	s->turn = w->turn < w->n ? w->turn : 0;
	s->grand_kids = NULL;
	s->uncle = NULL;
	s->grand_way = 0;
}

/* The search goes down a level: the walks ahead step, and the level costs node_ns. */
static inline void search_walk_level(struct ksm *k, struct search_walk *s)
{
	if (s->n_ahead)
		s->turn = walks_ahead_step(&k->ahead, s->head, s->n_ahead, s->turn);
	s->levels++;
	s->depth++;
}

/*
 * memcmp_pages(page, tree_page) within the search. The rmap_item's cached
 * page and key, kept valid by the page itself, decide most levels without
 * reading the page, and its change flag says whether the walk went through
 * a changed page; otherwise memcmp_pages decides, its cost joining the sum
 * in order.
 */
static inline int search_walk_memcmp(struct ksm *k, struct search_walk *s, const struct page *page,
				     const struct rmap_item *tree_rmap_item,
				     const struct page *tree_page)
{
	if (rmap_item_cached_page(k, tree_rmap_item) == tree_page) {
		s->corrupt |= tree_rmap_item->changed;
		/* the cached half decides when it differs; else the page does */
		const uint64_t tree_key = (uint64_t)tree_rmap_item->cached_key << 32;
		if (tree_rmap_item->cached_key != (uint32_t)(s->key >> 32)) {
			s->key_cmps += (UINT64_C(1) << 32) + 1 + __builtin_clzll(tree_key ^ s->key) / 8;
			s->levels++;
			return s->key < tree_key ? -1 : 1;
		}
	} else {
		s->corrupt |= tree_rmap_item->seen && !content_equal(tree_rmap_item->seen, tree_page->c);
	}
	return memcmp_pages(k, page, tree_page);
}

/*
 * The child of parent to go on to, rb_left for ret < 0 and rb_right for
 * ret > 0. Which way is a coin toss, so it is chosen without a branch (a
 * mispredicted one would also drop the loads queued after it).
 */
static inline struct rb_node **search_walk_child(struct search_walk *s, struct rb_node *parent,
						 int ret)
{
	struct rb_node **kids = &parent->rb_left;	/* rb_right follows (asserted above) */
	const unsigned way = ret > 0;
	s->uncle = s->grand_kids ? s->grand_kids[!s->grand_way] : NULL;
	s->grand_kids = kids;
	s->grand_way = way;
	return kids + way;
}

/*
 * The search fell off the tree, and rb_insert_color will read the new
 * node's uncle, which no walk went through. Fetched for it here only: the
 * way not taken at every level would be a miss a level, for the few that
 * the fix-up reads.
 */
static inline void search_walk_prefetch_uncle(const struct search_walk *s)
{
	__builtin_prefetch(s->uncle);
}

/* The search ends: its tallies go to the counters, and the walks ahead keep their turn. */
static inline void search_walk_end(struct ksm *k, const struct search_walk *s)
{
	k->cost_n.n[COST_TREE_LEVEL] += s->levels;
	ksm_ev_search_depth(k, s->depth);
	k->truth.memcmp_calls += s->key_cmps >> 32;
	k->truth.memcmp_bytes += (uint32_t)s->key_cmps;
	if (s->corrupt)
		k->truth.unstable_corrupt_walks++;	/* once a walk */
	k->ahead.turn = s->turn;
}

#endif
