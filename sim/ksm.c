// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd: the scan cursor, cmp_and_merge_page, the stable and unstable trees
 * with stable-node chains, smart scan, the advisor and the sysfs knobs, in
 * the order and with the bookkeeping of Linux 6.18's mm/ksm.c. Functions
 * carry the names of the kernel functions they mirror, so each can be read
 * beside its twin; sim/MODEL.md describes them one by one, with what was
 * measured on a live kernel.
 */
#include <stddef.h>
#include <string.h>
#include <xxhash.h>
#include "sim/ksm_internal.h"

/* ---- small helpers ---- */

static inline uint32_t tree_nid(const struct ksm *k, uint32_t nid)
{
	return k->knob[KNOB_MERGE_ACROSS_NODES] ? 0 : nid;
}

/*
 * The classified policy's class of a page about to be searched for or
 * filed by mm's rmap_item; 0 with one class (the kernel).
 */
static inline uint32_t page_class(const struct ksm *k, const struct page *page,
				  const struct mm *mm)
{
	if (k->nr_classes == 1)
		return 0;
	if (k->opt.policy.class_by == KSM_CLASS_BY_MM)
		return mm->class_id;
	/* Equal pages share their first 8 bytes, so they always share a class. */
	return (uint32_t)(((page_key8(page) * 0x9E3779B97F4A7C15ull) >> 32) % k->nr_classes);
}

/* Which of root_stable_tree[] / root_unstable_tree[] a page's search uses. */
static inline uint32_t tree_index(const struct ksm *k, const struct page *page,
				  const struct mm *mm)
{
	return tree_nid(k, page->nid) * k->nr_classes + page_class(k, page, mm);
}

/* memcmp_pages, with its cost counted. */
static int memcmp_pages(struct ksm *k, const struct page *pa, const struct page *pb)
{
	const content *a = pa->c, *b = pb->c;
	k->truth.memcmp_calls++;
	uint64_t ka = page_key8(pa), kb = page_key8(pb);
	if (ka != kb) {
		k->truth.memcmp_bytes += 1 + __builtin_clzll(ka ^ kb) / 8;
		k->batch_cpu_ns += k->opt.costs.node_ns;
		return ka < kb ? -1 : 1;
	}
	int r = a == b ? 0 : content_cmp(a, b);
	/* Where bytes tie past the first 8 the compare usually runs long. */
	k->truth.memcmp_bytes += TRACE_PAGE_SIZE;
	k->batch_cpu_ns += k->opt.costs.memcmp_ns;
	return r;
}

static uint64_t counted_checksum(struct ksm *k, uint64_t checksum)
{
	k->truth.checksums++;
	k->batch_cpu_ns += k->opt.costs.checksum_ns;
	return checksum;
}

static uint64_t calc_checksum(struct ksm *k, struct page *p)
{
	return counted_checksum(k, content_checksum(p->c, k->hash_fn, NULL));
}

/* What a simulated page costs: bench model prints it, this keeps it from creeping. */
G_STATIC_ASSERT(TRACE_VPN_LIMIT <= (UINT64_C(1) << 32));	/* rmap_item.vpn */
G_STATIC_ASSERT(sizeof(struct rmap_item) == 88);
G_STATIC_ASSERT(sizeof(struct page) == 40);

/* ---- mm slots ---- */

static bool mm_slots_empty(const struct ksm *k)
{
	return list_empty(&k->mm_head.mm_node);
}

static struct mm *next_mm_slot(const struct mm *mm)
{
	return list_entry(mm->mm_node.next, struct mm, mm_node);
}

static void mm_slot_del(struct mm *mm)
{
	list_del(&mm->mm_node);
	mm->registered = false;
}

/*
 * As __ksm_enter() does: a new mm goes just behind the cursor, so that its
 * pages get a whole pass to settle before ksmd reaches them; while run=2
 * unmerges, at the tail.
 */
void ksm_enter(struct ksm *k, struct mm *mm)
{
	if (k->knob[KNOB_RUN] & KSM_RUN_UNMERGE)
		list_add_tail(&mm->mm_node, &k->mm_head.mm_node);
	else
		list_add_tail(&mm->mm_node, &k->scan.mm_slot->mm_node);
	mm->registered = true;
}

/*
 * As __ksm_exit() does: an mm without rmap_items leaves its slot at once;
 * one with rmap_items moves right after the cursor, where ksmd meets it
 * next and frees them. The cursor's own mm is left to ksmd.
 */
void ksm_exit(struct ksm *k, struct mm *mm)
{
	if (!mm->registered || k->scan.mm_slot == mm)
		return;
	if (!mm->rmap_list)
		mm_slot_del(mm);
	else
		list_move(&mm->mm_node, &k->scan.mm_slot->mm_node);
}

/* Every mm: the slot list in scan order, then the live mms without a slot. */
GPtrArray *ksm_all_mms(const struct ksm *k)
{
	GPtrArray *all = g_ptr_array_new();
	for (struct mm *mm = next_mm_slot(&k->mm_head); mm != &k->mm_head; mm = next_mm_slot(mm))
		g_ptr_array_add(all, mm);
	GHashTableIter it;
	gpointer key, val;
	g_hash_table_iter_init(&it, k->mm_by_name);
	while (g_hash_table_iter_next(&it, &key, &val))
		if (!((struct mm *)val)->registered)
			g_ptr_array_add(all, val);
	return all;
}

/* ---- stable nodes and chains ---- */

static struct stable_node *alloc_stable_node(void)
{
	return g_new0(struct stable_node, 1);
}

static void free_stable_node(struct stable_node *n)
{
	g_free(n);
}

static bool is_stable_node_chain(const struct stable_node *n)
{
	return n->rmap_hlist_len == STABLE_NODE_CHAIN;
}

static bool is_stable_node_dup(const struct stable_node *n)
{
	return n->is_dup;
}

static bool __is_page_sharing_candidate(const struct ksm *k, const struct stable_node *n, int offset)
{
	return n->rmap_hlist_len &&
	       (uint64_t)(n->rmap_hlist_len + offset) < k->knob[KNOB_MAX_PAGE_SHARING];
}

static bool is_page_sharing_candidate(const struct ksm *k, const struct stable_node *n)
{
	return __is_page_sharing_candidate(k, n, 0);
}

static void stable_node_chain_add_dup(struct ksm *k, struct stable_node *dup,
				      struct stable_node *chain)
{
	dup->is_dup = true;
	dup->chain = chain;
	hlist_add_head(&dup->hlist_dup, &chain->hlist);
	k->stable_node_dups++;
}

static void __stable_node_dup_del(struct ksm *k, struct stable_node *dup)
{
	hlist_del(&dup->hlist_dup);
	k->stable_node_dups--;
}

static void stable_node_dup_del(struct ksm *k, struct stable_node *dup)
{
	if (is_stable_node_dup(dup))
		__stable_node_dup_del(k, dup);
	else
		rb_erase(&dup->node, &k->root_stable_tree[dup->root]);
}

static void free_stable_node_chain(struct ksm *k, struct stable_node *chain, struct rb_root *root)
{
	rb_erase(&chain->node, root);
	free_stable_node(chain);
	k->stable_node_chains--;
}

/*
 * As remove_node_from_stable_tree() does once the node's KSM page is gone:
 * every rmap_item still listed stops counting as shared or sharing at once,
 * without waiting for ksmd to reach it, then the node leaves the tree or
 * its chain.
 */
static void remove_node_from_stable_tree(struct ksm *k, struct stable_node *node)
{
	struct rmap_item *rmap_item;
	hlist_for_each_entry(rmap_item, &node->hlist, hlist) {
		if (rmap_item->hlist.next)
			k->pages_sharing--;
		else
			k->pages_shared--;
		rmap_item->mm->ksm_merging_pages--;
		rmap_item->flags &= ~KSM_FLAG_MASK;
		rmap_item->head = NULL;
	}
	stable_node_dup_del(k, node);
	free_stable_node(node);
}

/* As ksm_get_folio() does: the node's page, or NULL after removing a stale node. */
static struct page *ksm_get_folio(struct ksm *k, struct stable_node *node)
{
	if (node->page)
		return node->page;
	remove_node_from_stable_tree(k, node);
	return NULL;
}

static struct stable_node *alloc_stable_node_chain(struct ksm *k, struct stable_node *dup,
						   struct rb_root *root)
{
	struct stable_node *chain = alloc_stable_node();
	chain->chain_prune_time = jiffies_of(k->now);
	chain->rmap_hlist_len = STABLE_NODE_CHAIN;
	chain->nid = dup->nid;
	chain->root = dup->root;
	k->stable_node_chains++;
	rb_replace_node(&dup->node, &chain->node, root);
	stable_node_chain_add_dup(k, dup, chain);
	return chain;
}

/*
 * As stable_node_dup() does: pick the dup of a chain to merge into, the
 * fullest one that can still take a mapping (any live one if none can).
 * Only a pruning walk, at most once per stable_node_chains_prune_millisecs,
 * looks at every dup and so drops every stale one; otherwise the first
 * candidate ends the walk. A chain left with one dup collapses back into a
 * regular node, and a chosen dup that is not first moves to the front so
 * the next walk finds it at once.
 */
static struct page *stable_node_dup(struct ksm *k, struct stable_node **dup_out,
				    struct stable_node **node_io, struct rb_root *root, bool prune)
{
	struct stable_node *chain = *node_io, *found = NULL, *dup;
	struct hlist_node *next;
	struct page *tree_page = NULL;
	int found_len = 0;
	uint64_t now = jiffies_of(k->now);

	if (!prune ||
	    now < chain->chain_prune_time +
			  msecs_to_jiffies(k->knob[KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS]))
		prune = false;
	else
		chain->chain_prune_time = now;

	hlist_for_each_entry_safe(dup, next, &chain->hlist, hlist_dup) {
		struct page *p = ksm_get_folio(k, dup);
		if (!p)
			continue;
		if (!found || (is_page_sharing_candidate(k, dup) &&
			       (!is_page_sharing_candidate(k, found) ||
				dup->rmap_hlist_len > found_len))) {
			found = dup;
			found_len = dup->rmap_hlist_len;
			tree_page = p;
			if (!prune && is_page_sharing_candidate(k, found))
				break;
		}
	}

	if (found) {
		if (chain->hlist.first == &found->hlist_dup && !found->hlist_dup.next) {
			/* One dup left: it takes the chain's place in the tree. */
			rb_replace_node(&chain->node, &found->node, root);
			found->is_dup = false;
			found->chain = NULL;
			found->hlist_dup.pprev = NULL;
			free_stable_node(chain);
			k->stable_node_chains--;
			k->stable_node_dups--;
			*node_io = found;
		} else if (chain->hlist.first != &found->hlist_dup &&
			   __is_page_sharing_candidate(k, found, 1)) {
			hlist_del(&found->hlist_dup);
			hlist_add_head(&found->hlist_dup, &chain->hlist);
		}
	} else {
		free_stable_node_chain(k, chain, root);
	}
	*dup_out = found;
	return tree_page;
}

static struct page *__stable_node_chain(struct ksm *k, struct stable_node **dup_out,
					struct stable_node **node_io, struct rb_root *root,
					bool prune)
{
	struct stable_node *n = *node_io;
	if (!is_stable_node_chain(n)) {
		*dup_out = n;
		return ksm_get_folio(k, n);
	}
	return stable_node_dup(k, dup_out, node_io, root, prune);
}

static inline struct page *walk_node_page(struct ksm *k, struct stable_node **dup,
					  struct stable_node **node, struct rb_root *root,
					  bool prune)
{
	k->batch_cpu_ns += k->opt.costs.node_ns;
	return __stable_node_chain(k, dup, node, root, prune);
}

/*
 * As stable_tree_search() does, without the migration cases: descend by
 * memcmp, resolving each chain to a dup on the way; equal content is a
 * match only while its node can take one more mapping. A stale node met
 * on the way is removed, and the walk starts over from the root.
 */
static struct page *stable_tree_search(struct ksm *k, struct page *page, const struct mm *mm)
{
	if (page->ksm && page_stable_node(page))
		return page;	/* a KSM page already: its rmap_item may not track it yet */

	struct rb_root *root = &k->root_stable_tree[tree_index(k, page, mm)];
again:;
	struct rb_node **new = &root->rb_node;
	while (*new) {
		struct stable_node *node = rb_entry(*new, struct stable_node, node), *dup;
		struct page *tree_page = walk_node_page(k, &dup, &node, root, true);
		if (!tree_page)
			goto again;
		int ret = memcmp_pages(k, page, tree_page);
		struct rb_node *parent = *new;
		if (ret < 0) {
			new = &parent->rb_left;
		} else if (ret > 0) {
			new = &parent->rb_right;
		} else {
			if (!is_page_sharing_candidate(k, dup))
				return NULL;
			return tree_page;
		}
	}
	return NULL;
}

/*
 * As stable_tree_insert() does: file the new KSM page. Equal content means
 * the node it met was full (max_page_sharing), so the new page becomes a
 * further dup, turning a regular node into a chain first.
 */
static struct stable_node *stable_tree_insert(struct ksm *k, struct page *kpage,
					      const struct mm *mm)
{
	uint32_t nid = kpage->nid, idx = tree_index(k, kpage, mm);
	struct rb_root *root = &k->root_stable_tree[idx];
	struct rb_node **new, *parent;
	struct stable_node *node = NULL, *dup;
	bool need_chain = false;
again:
	parent = NULL;
	new = &root->rb_node;
	while (*new) {
		node = rb_entry(*new, struct stable_node, node);
		struct page *tree_page = walk_node_page(k, &dup, &node, root, false);
		if (!tree_page)
			goto again;
		int ret = memcmp_pages(k, kpage, tree_page);
		parent = *new;
		if (ret < 0) {
			new = &parent->rb_left;
		} else if (ret > 0) {
			new = &parent->rb_right;
		} else {
			need_chain = true;
			break;
		}
	}
	struct stable_node *sdup = alloc_stable_node();
	sdup->page = kpage;
	sdup->nid = nid;
	sdup->root = idx;
	if (!need_chain) {
		rb_link_node(&sdup->node, parent, new);
		rb_insert_color(&sdup->node, root);
	} else {
		if (!is_stable_node_chain(node))
			node = alloc_stable_node_chain(k, node, root);
		stable_node_chain_add_dup(k, sdup, node);
	}
	kpage->folio_stable = sdup;
	return sdup;
}

/*
 * As stable_tree_append() does: list the rmap_item under its KSM page's
 * node. The first one listed counts as pages_shared, each further one as
 * pages_sharing.
 */
static void stable_tree_append(struct ksm *k, struct rmap_item *rmap_item, struct stable_node *node)
{
	node->rmap_hlist_len++;
	rmap_item->head = node;
	rmap_item->flags |= STABLE_FLAG;
	hlist_add_head(&rmap_item->hlist, &node->hlist);
	if (rmap_item->hlist.next)
		k->pages_sharing++;
	else
		k->pages_shared++;
	rmap_item->mm->ksm_merging_pages++;
}

/* ---- rmap_items ---- */

/*
 * As remove_rmap_item_from_tree() does. In the unstable tree, an rmap_item
 * whose seqnr is one pass old sits in a tree that was already thrown away
 * (the roots are reset at each pass start), so only this pass's are erased.
 */
static void remove_rmap_item_from_tree(struct ksm *k, struct rmap_item *rmap_item)
{
	if (rmap_item->flags & STABLE_FLAG) {
		struct stable_node *node = rmap_item->head;
		if (!ksm_get_folio(k, node))
			return;
		hlist_del(&rmap_item->hlist);
		if (!hlist_empty(&node->hlist))
			k->pages_sharing--;
		else
			k->pages_shared--;
		rmap_item->mm->ksm_merging_pages--;
		node->rmap_hlist_len--;
		rmap_item->head = NULL;
		rmap_item->flags = 0;
	} else if (rmap_item->flags & UNSTABLE_FLAG) {
		uint8_t age = (uint8_t)(k->scan.seqnr - (rmap_item->flags & SEQNR_MASK));
		g_assert(age <= 1);
		if (!age) {
			rb_erase(&rmap_item->node, &k->root_unstable_tree[rmap_item->nid]);
			k->unstable_gen++;
		}
		k->pages_unshared--;
		rmap_item->flags = 0;
	}
}

static void free_rmap_item(struct ksm *k, struct rmap_item *rmap_item)
{
	k->rmap_items--;
	rmap_item->mm->ksm_rmap_items--;
	if (rmap_item->cached_page)
		rmap_item->cached_page->rmap_item = NULL;
	if (rmap_item->seen)
		content_unref(rmap_item->seen);
	slab_free(&k->rmap_item_cache, rmap_item);
}

static void remove_trailing_rmap_items(struct ksm *k, struct rmap_item **link)
{
	while (*link) {
		struct rmap_item *rmap_item = *link;
		*link = rmap_item->rmap_list;
		remove_rmap_item_from_tree(k, rmap_item);
		free_rmap_item(k, rmap_item);
	}
}

static struct rmap_item *get_next_rmap_item(struct ksm *k, struct mm *mm,
					    struct rmap_item **link, uint64_t vpn)
{
	while (*link) {
		struct rmap_item *rmap_item = *link;
		if (rmap_item->vpn == vpn)
			return rmap_item;
		if (rmap_item->vpn > vpn)
			break;
		*link = rmap_item->rmap_list;
		remove_rmap_item_from_tree(k, rmap_item);
		free_rmap_item(k, rmap_item);
	}
	struct rmap_item *rmap_item = slab_alloc0(&k->rmap_item_cache);
	k->rmap_items++;
	mm->ksm_rmap_items++;
	rmap_item->mm = mm;
	rmap_item->vpn = vpn;
	rmap_item->rmap_list = *link;
	*link = rmap_item;
	return rmap_item;
}

/* ---- unstable tree ---- */

/*
 * As get_mergeable_page() does: the page at the rmap_item's address if it
 * still sits in a mergeable VMA of a live mm, else NULL.
 */
static struct page *get_mergeable_page(struct ksm *k, struct rmap_item *rmap_item)
{
	struct mm *mm = rmap_item->mm;
	if (mm->exiting)
		return NULL;
	/* The page keeps the cache honest; only VMA changes are checked here. */
	if (rmap_item->cached_page && rmap_item->vma_gen == mm->vma_gen)
		return rmap_item->cached_page;
	struct vma *v = find_vma(mm, rmap_item->vpn);
	if (!v || !v->mergeable)
		return NULL;
	struct page *p = pte_get(mm, rmap_item->vpn);
	if (!pte_is_page(p))
		return NULL;
	if (p->mapcount == 1 && rmap_item->cached_page != p) {
		if (rmap_item->cached_page)
			rmap_item->cached_page->rmap_item = NULL;
		page_uncache(p);
		rmap_item->cached_page = p;
		p->rmap_item = rmap_item;
		rmap_item->cached_key = page_key8(p);
	}
	rmap_item->vma_gen = mm->vma_gen;
	return p;
}

/* ---- what the classified policy loses (truth: no cost, no side effects) ---- */

static bool unstable_tree_has_twin(struct rb_node *n, const struct page *page)
{
	while (n) {
		const struct rmap_item *it = rb_entry(n, struct rmap_item, node);
		const struct page *p = it->mm->exiting ? NULL : pte_get(it->mm, it->vpn);
		if (!pte_is_page(p))
			return false;
		int ret = p->c == page->c ? 0 : content_cmp(page->c, p->c);
		if (!ret)
			return true;
		n = ret < 0 ? n->rb_left : n->rb_right;
	}
	return false;
}

static bool stable_tree_has_twin(struct rb_node *n, const struct page *page)
{
	while (n) {
		const struct stable_node *node = rb_entry(n, struct stable_node, node);
		if (is_stable_node_chain(node)) {
			if (!node->hlist.first)
				return false;
			node = hlist_entry(node->hlist.first, struct stable_node, hlist_dup);
		}
		if (!node->page)
			return false;
		int ret = node->page->c == page->c ? 0 : content_cmp(page->c, node->page->c);
		if (!ret)
			return true;
		n = ret < 0 ? n->rb_left : n->rb_right;
	}
	return false;
}

/*
 * A page about to be inserted in tree idx: would another class of the same
 * node have had a page to merge it with? Then classification lost a merge.
 */
static void class_lost_check(struct ksm *k, const struct page *page, uint32_t idx)
{
	uint32_t base = idx - idx % k->nr_classes;
	k->pstats.class_searches++;
	for (uint32_t i = base; i < base + k->nr_classes; i++) {
		if (i == idx)
			continue;
		if (unstable_tree_has_twin(k->root_unstable_tree[i].rb_node, page) ||
		    stable_tree_has_twin(k->root_stable_tree[i].rb_node, page)) {
			k->pstats.class_lost++;
			return;
		}
	}
}

/*
 * The walks ahead: KSM_AHEAD_STEPS steps, round robin over the ring, each
 * a level down its page's path by its key; loading only.
 */
static inline unsigned step_walks_ahead(struct ksm *k, unsigned head, unsigned n, unsigned turn)
{
	for (unsigned t = 0; t < KSM_AHEAD_STEPS; t++) {
		struct walk_ahead *a = &k->ahead[(head + turn) % KSM_LOOKAHEAD];
		turn = turn + 1 < n ? turn + 1 : 0;
		const struct rb_node *node = a->node;
		if (node) {
			const struct rmap_item *it = rb_entry(node, struct rmap_item, node);
			node = a->key < it->cached_key ? node->rb_left : node->rb_right;
			if (node) {
				/* the item's first 56 bytes may span two lines */
				__builtin_prefetch(node);
				__builtin_prefetch((const char *)node + 55);
			}
			a->node = node;
		}
	}
	return turn;
}

/*
 * What a search adds to the counters, kept in registers while it runs:
 * through memory, the floating-point cost sum would be the level loop's
 * longest dependency. The sum takes the same terms in the same order, so
 * it is the same to the bit; it is written back before anything else
 * adds to it. key_cmps holds the compares decided by the cached keys in
 * its high half and their bytes in its low half: one add a level.
 */
_Static_assert(offsetof(struct rb_node, rb_right) ==
		       offsetof(struct rb_node, rb_left) + sizeof(struct rb_node *),
	       "the search picks a child by index: rb_left and rb_right side by side");

struct search_tally {
	double cpu_ns;
	uint64_t key_cmps;
	bool corrupt;
};

static void search_tally_flush(struct ksm *k, struct search_tally *t)
{
	k->batch_cpu_ns = t->cpu_ns;
	k->truth.memcmp_calls += t->key_cmps >> 32;
	k->truth.memcmp_bytes += (uint32_t)t->key_cmps;
	t->key_cmps = 0;
	if (t->corrupt)
		k->truth.unstable_corrupt_walks++;	/* once a walk */
	t->corrupt = false;
}

/* memcmp_pages() inside the search: its cost joins the sum in order. */
static int search_memcmp_pages(struct ksm *k, struct search_tally *t, const struct page *pa,
			       const struct page *pb)
{
	k->batch_cpu_ns = t->cpu_ns;
	int ret = memcmp_pages(k, pa, pb);
	t->cpu_ns = k->batch_cpu_ns;
	return ret;
}

/*
 * As unstable_tree_search_insert() does: look for a page with the same
 * bytes in the unstable tree, or insert the rmap_item where the search fell
 * off. The tree's pages are not write-protected, so a page that vanished
 * (or the page itself, reached again) ends the search without inserting,
 * and with merge_across_nodes 0 a match on another node counts as none.
 */
static struct rmap_item *unstable_tree_search_insert(struct ksm *k, struct rmap_item *rmap_item,
						     struct page *page, struct page **tree_pagep)
{
	uint32_t nid = tree_index(k, page, rmap_item->mm);
	struct rb_root *root = &k->root_unstable_tree[nid];
	struct rb_node **new = &root->rb_node, *parent = NULL;

	/*
	 * The walk is a chain of cache misses, one a level. The walks of the
	 * next visits go down beside it by their keys, loading only (no
	 * node is freed or moved meanwhile), so their misses overlap this
	 * one's and their own walks find the lines loaded.
	 */
	const unsigned n_ahead = k->n_ahead, ahead_head = k->ahead_head;
	if (k->ahead_tree != nid + 1 || k->ahead_gen != k->unstable_gen) {
		k->ahead_tree = nid + 1;
		k->ahead_gen = k->unstable_gen;
		for (unsigned j = 0; j < n_ahead; j++)
			k->ahead[(ahead_head + j) % KSM_LOOKAHEAD].node = root->rb_node;
	}
	unsigned turn = k->ahead_turn < n_ahead ? k->ahead_turn : 0;

	struct search_tally tally = { .cpu_ns = k->batch_cpu_ns };
	const double node_ns = k->opt.costs.node_ns;
	struct rmap_item *found = NULL;
	const uint64_t key = page_key8(page);
	struct rb_node **grand_kids = NULL, *uncle = NULL;
	unsigned grand_way = 0;
	while (*new) {
		struct rmap_item *tree_rmap_item = rb_entry(*new, struct rmap_item, node);
		if (n_ahead)
			turn = step_walks_ahead(k, ahead_head, n_ahead, turn);
		tally.cpu_ns += node_ns;
		struct page *tree_page = get_mergeable_page(k, tree_rmap_item);
		if (!tree_page) {
			k->truth.unstable_aborts++;
			goto out;
		}
		if (tree_page == page)
			goto out;
		int ret;
		if (tree_rmap_item->cached_page == tree_page) {
			/* Fast path: the key and the change flag live in the rmap_item. */
			tally.corrupt |= tree_rmap_item->changed;
			const uint64_t tree_key = tree_rmap_item->cached_key;
			if (tree_key != key) {
				tally.key_cmps += (UINT64_C(1) << 32) + 1 + __builtin_clzll(tree_key ^ key) / 8;
				tally.cpu_ns += node_ns;
				ret = key < tree_key ? -1 : 1;
			} else {
				ret = search_memcmp_pages(k, &tally, page, tree_page);
			}
		} else {
			tally.corrupt |= tree_rmap_item->seen &&
					 !content_equal(tree_rmap_item->seen, tree_page->c);
			ret = search_memcmp_pages(k, &tally, page, tree_page);
		}
		parent = *new;
		if (__builtin_expect(ret == 0, 0)) {
			if (k->knob[KNOB_MERGE_ACROSS_NODES] || tree_page->nid == page->nid) {
				*tree_pagep = tree_page;
				found = tree_rmap_item;
			}
			goto out;
		}
		/*
		 * Which way is a coin toss, so it is chosen without a branch
		 * (a mispredicted one would also drop the loads queued after
		 * it).
		 */
		struct rb_node **kids = &parent->rb_left;	/* rb_right follows (asserted above) */
		const unsigned way = ret > 0;
		uncle = grand_kids ? grand_kids[!grand_way] : NULL;
		grand_kids = kids;
		grand_way = way;
		new = kids + way;
	}
	/*
	 * rb_insert_color reads the new node's uncle, which no walk went
	 * through. Fetched for it here only: the way not taken at every
	 * level would be a miss a level, for the few that the fix-up reads.
	 */
	__builtin_prefetch(uncle);
	search_tally_flush(k, &tally);
	k->ahead_turn = turn;
	if (k->nr_classes > 1)
		class_lost_check(k, page, nid);
	rmap_item->flags |= UNSTABLE_FLAG | (k->scan.seqnr & SEQNR_MASK);
	rmap_item->nid = nid;
	rb_link_node(&rmap_item->node, parent, new);
	rb_insert_color(&rmap_item->node, root);
	k->pages_unshared++;
	k->truth.unstable_inserts++;
	/* seen is the bytes inserted until the next visit: a gate set it this visit, or this does */
	if (rmap_item->seen != page->c) {
		if (rmap_item->seen)
			content_unref(rmap_item->seen);
		rmap_item->seen = content_ref(page->c);
	}
	rmap_item->changed = false;
	return NULL;
out:
	search_tally_flush(k, &tally);
	k->ahead_turn = turn;
	return found;
}

/* ---- merging ---- */

/*
 * As try_to_merge_one_page() does: write_protect_page(), then
 * pages_identical() and replace_page(). write_protect_page() fails while the
 * page waits in an lru_add batch, whose reference raises its refcount.
 * kpage NULL: the page itself becomes the KSM page.
 */
static int try_to_merge_one_page(struct ksm *k, struct mm *mm, uint64_t vpn, struct page *page,
				 struct page *kpage)
{
	if (page == kpage)
		return 0;
	if (page_thp(page))
		thp_split(k, page_thp(page));	/* split_huge_page: a small page from here */
	k->truth.mmu_invalidations++;	/* write_protect_page */
	if (pte_get(mm, vpn) != page)
		return -1;	/* not mapped here now: a split gave it to the zero page */
	if (lru_batched(k, page)) {
		k->truth.merge_refused_lru++;
		return -1;
	}
	k->truth.mmu_change_pte++;
	if (!kpage) {
		page->dirty = false;	/* write-protected clean */
		g_assert(!page->folio_thp);	/* split above: the word becomes the stable node's */
		page->ksm = true;
		page->folio_stable = NULL;
		page->merged_at = k->full_scans_total;
		return 0;
	}
	if (kpage == KSM_ZERO_PTE) {
		k->truth.memcmp_calls++;
		k->truth.memcmp_bytes += TRACE_PAGE_SIZE;
		k->batch_cpu_ns += k->opt.costs.memcmp_ns;
		if (!content_is_zero(page->c))
			return -1;
		pte_set(mm, vpn, KSM_ZERO_PTE);
		page_put_mapping(k, page);
		k->zero_pages++;
		mm->ksm_zero_pages++;
		k->truth.mmu_invalidations++;	/* replace_page */
		k->truth.mmu_change_pte++;
		k->truth.merges_zero++;
		return 0;
	}
	if (memcmp_pages(k, page, kpage) != 0)
		return -1;
	kpage->mapcount++;
	pte_set(mm, vpn, kpage);
	page_put_mapping(k, page);
	k->truth.mmu_invalidations++;	/* replace_page */
	k->truth.mmu_change_pte++;
	return 0;
}

/* As find_mergeable_vma() does, as a yes/no. */
static bool find_mergeable_vma(struct mm *mm, uint64_t vpn)
{
	if (mm->exiting)
		return false;
	struct vma *v = find_vma(mm, vpn);
	return v && v->mergeable;
}

static int try_to_merge_with_ksm_page(struct ksm *k, struct rmap_item *rmap_item, struct page *page,
				      struct page *kpage)
{
	if (!find_mergeable_vma(rmap_item->mm, rmap_item->vpn))
		return -1;
	int err = try_to_merge_one_page(k, rmap_item->mm, rmap_item->vpn, page, kpage);
	if (err)
		return err;
	remove_rmap_item_from_tree(k, rmap_item);
	return 0;
}

/*
 * As try_to_merge_two_pages() does: the rmap_item's page becomes the KSM
 * page and the tree's page is merged into it; if that second step fails,
 * break_cow() undoes the first.
 */
static struct page *try_to_merge_two_pages(struct ksm *k, struct rmap_item *rmap_item,
					   struct page *page, struct rmap_item *tree_rmap_item,
					   struct page *tree_page)
{
	/* one THP under two references: split_huge_page refuses */
	if (page_thp(page) && page_thp(page) == page_thp(tree_page))
		return NULL;
	if (try_to_merge_with_ksm_page(k, rmap_item, page, NULL))
		return NULL;
	if (try_to_merge_with_ksm_page(k, tree_rmap_item, tree_page, page)) {
		/* a KSM page mapped once: break_cow unshares it (a fresh copy) */
		break_ksm_range(k, rmap_item->mm, rmap_item->vpn, rmap_item->vpn + 1);
		return NULL;
	}
	return page;
}

/* ---- the policies' change detectors ---- */

/*
 * What the simulator knows of a detector's decision: whether the bytes
 * changed since the last visit, and so whether letting the page through
 * was a false positive. Remembers the bytes for the next visit.
 */
static void gate_truth(struct ksm *k, struct rmap_item *rmap_item, const struct page *page,
		       bool passed)
{
	if (rmap_item->seen) {
		k->truth.gate_checks++;
		if (!content_equal(rmap_item->seen, page->c)) {
			k->truth.gate_changed++;
			if (passed)
				k->truth.false_positives++;
		}
	}
	if (rmap_item->seen != page->c) {
		if (rmap_item->seen)
			content_unref(rmap_item->seen);
		rmap_item->seen = content_ref(page->c);
	}
}

/* partial-hash: the words sampled for this rmap_item's VMA. */
static unsigned partial_words(struct ksm *k, const struct rmap_item *rmap_item)
{
	struct vma *v = find_vma(rmap_item->mm, rmap_item->vpn);
	return v && v->partial_k ? v->partial_k : k->opt.policy.partial_k;
}

/*
 * kw 32-bit words at a stride of 1024 / kw, hashed as the kernel hashes a
 * page (XXH64, seed 0, low 32 bits): kw = 1024 is the kernel's xxhash.
 */
static uint64_t partial_checksum(const uint8_t *bytes, unsigned kw)
{
	uint32_t w[KSM_PARTIAL_WORDS_MAX];
	unsigned stride = KSM_PARTIAL_WORDS_MAX / kw;
	for (unsigned j = 0; j < kw; j++)
		memcpy(&w[j], bytes + 4 * (size_t)j * stride, 4);
	return (uint32_t)XXH64(w, (size_t)kw * 4, 0);
}

void partial_hash_missed(struct ksm *k, struct vma *v)
{
	if (k->detector != KSM_DETECT_PARTIAL || !v)
		return;
	unsigned cur = v->partial_k ? v->partial_k : k->opt.policy.partial_k;
	if (cur < k->opt.policy.partial_k_max) {
		v->partial_k = (uint16_t)(cur * 2);
		k->pstats.partial_grows++;
	}
}

/*
 * The gate of a policy other than the kernel's: true when the page is to
 * wait for the next pass (volatile), as a moved checksum makes it.
 */
static bool policy_gate_volatile(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	switch (k->detector) {
	case KSM_DETECT_DIRTY_BIT: {
		bool written = page->dirty;
		k->pstats.dirty_checks++;
		if (written) {
			page->dirty = false;
			k->pstats.dirty_flushes++;
			k->batch_cpu_ns += k->opt.policy.dirty_flush_ns ? k->opt.policy.dirty_flush_ns
									 : k->opt.costs.dirty_clear_ns;
			if (rmap_item->seen && content_equal(rmap_item->seen, page->c))
				k->pstats.dirty_same_bytes++;
		}
		gate_truth(k, rmap_item, page, !written);
		return written;
	}
	case KSM_DETECT_PARTIAL: {
		unsigned kw = partial_words(k, rmap_item);
		uint64_t checksum = partial_checksum(content_peek(page->c), kw);
		k->truth.checksums++;
		k->pstats.partial_words += kw;
		/* A strided word is a cache line of its own until the stride falls below one. */
		k->batch_cpu_ns += k->opt.costs.checksum_ns * (kw < 64 ? kw : 64) / 64.0;
		gate_truth(k, rmap_item, page, checksum == rmap_item->oldchecksum);
		if (rmap_item->oldchecksum != checksum) {
			rmap_item->oldchecksum = checksum;
			return true;
		}
		return false;
	}
	default:
		return false;
	}
}

/*
 * As try_to_merge_with_zero_page() does with use_zero_pages: a page whose
 * checksum is the zero page's maps the shared zero page instead of joining
 * a tree. Without a checksum gate, the bytes themselves decide.
 */
static int try_to_merge_with_zero_page(struct ksm *k, struct rmap_item *rmap_item,
				       struct page *page)
{
	bool zero_match;
	if (k->hash_fn)
		zero_match = rmap_item->oldchecksum == k->zero_checksum;
	else if (k->detector == KSM_DETECT_PARTIAL)
		zero_match = rmap_item->oldchecksum ==
			     k->partial_zero[__builtin_ctz(partial_words(k, rmap_item))];
	else
		zero_match = content_is_zero(page->c);
	if (!k->knob[KNOB_USE_ZERO_PAGES] || !zero_match)
		return -1;
	if (!find_mergeable_vma(rmap_item->mm, rmap_item->vpn))
		return 0;
	return try_to_merge_one_page(k, rmap_item->mm, rmap_item->vpn, page, KSM_ZERO_PTE);
}

/*
 * As cmp_and_merge_page() does: the stable tree first; then the checksum
 * gate (a page whose checksum moved since the last visit is volatile:
 * record the new one and wait); then the zero page; then the unstable
 * tree, where a match makes a new KSM page of the two.
 */
static void __cmp_and_merge_page(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	struct stable_node *stable_node = page->ksm ? page_stable_node(page) : NULL;

	if (stable_node) {
		if ((rmap_item->flags & STABLE_FLAG) && rmap_item->head == stable_node)
			return;
	} else {
		if ((rmap_item->flags & UNSTABLE_FLAG) && rmap_item->seen &&
		    !content_equal(rmap_item->seen, page->c))
			k->truth.unstable_changed_after_insert++;
		remove_rmap_item_from_tree(k, rmap_item);

		if (k->hash_fn) {
			/*
			 * The same bytes as at the last visit give the same
			 * checksum: counted and charged, not recomputed.
			 */
			uint64_t checksum = rmap_item->seen && rmap_item->seen == page->c ?
						    counted_checksum(k, rmap_item->oldchecksum) :
						    calc_checksum(k, page);
			if (rmap_item->seen) {
				k->truth.gate_checks++;
				bool changed = !content_equal(rmap_item->seen, page->c);
				if (changed) {
					k->truth.gate_changed++;
					if (checksum == rmap_item->oldchecksum)
						k->truth.false_positives++;
				}
				/* A changed checksum over unchanged bytes cannot happen. */
				g_assert(changed || checksum == rmap_item->oldchecksum);
			}
			if (rmap_item->seen != page->c) {
				if (rmap_item->seen)
					content_unref(rmap_item->seen);
				rmap_item->seen = content_ref(page->c);
			}
			if (rmap_item->oldchecksum != checksum) {
				rmap_item->oldchecksum = checksum;
				return;
			}
		} else if (k->detector != KSM_DETECT_CHECKSUM &&
			   policy_gate_volatile(k, page, rmap_item)) {
			return;
		}
		if (!try_to_merge_with_zero_page(k, rmap_item, page))
			return;
	}

	struct page *kpage = stable_tree_search(k, page, rmap_item->mm);
	if (kpage == page && (rmap_item->flags & STABLE_FLAG) && rmap_item->head == stable_node)
		return;

	remove_rmap_item_from_tree(k, rmap_item);

	if (kpage) {
		if (!try_to_merge_with_ksm_page(k, rmap_item, page, kpage)) {
			stable_tree_append(k, rmap_item, page_stable_node(kpage));
			if (kpage != page)
				k->truth.merges_stable++;
		}
		return;
	}

	struct page *tree_page = NULL;
	struct rmap_item *tree_rmap_item =
		unstable_tree_search_insert(k, rmap_item, page, &tree_page);
	if (tree_rmap_item) {
		/* before the attempt: a failed one may have freed page (break_cow) */
		bool same_thp = page_thp(page) && page_thp(page) == page_thp(tree_page);
		kpage = try_to_merge_two_pages(k, rmap_item, page, tree_rmap_item, tree_page);
		if (kpage) {
			struct stable_node *node = stable_tree_insert(k, kpage, rmap_item->mm);
			stable_tree_append(k, tree_rmap_item, node);
			stable_tree_append(k, rmap_item, node);
			k->truth.merges_two++;
		} else if (same_thp) {
			/* both in one THP: split it now, merge on a later visit */
			thp_split(k, page_thp(page));
		}
	}
}

/*
 * The kernel holds a reference on the page through cmp_and_merge_page: a
 * THP split that gives it to the zero page unmaps it, but it lives until
 * the visit ends.
 */
void cmp_and_merge_page(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	if (!page_thp(page)) {
		/* only a split of its own THP can unmap the page meanwhile */
		__cmp_and_merge_page(k, page, rmap_item);
		return;
	}
	k->pinned = page;
	k->pinned_unmapped = false;
	__cmp_and_merge_page(k, page, rmap_item);
	k->pinned = NULL;
	if (k->pinned_unmapped)
		page_free(k, page);
}

/* ---- smart scan ---- */

/* As skip_age() does: how many passes to skip, growing with the rmap_item's age. */

static unsigned skip_age(uint8_t age)
{
	if (age <= 3)
		return 1;
	if (age <= 5)
		return 2;
	if (age <= 8)
		return 4;
	return 8;
}

/*
 * As should_skip_rmap_item() does: a page that stayed unmerged for three
 * passes is skipped for a while, the longer the older it is. KSM pages are
 * never skipped. A skipped rmap_item leaves the tree it was in.
 */
static bool should_skip_rmap_item(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	if (!k->knob[KNOB_SMART_SCAN])
		return false;
	if (page->ksm)
		return false;
	uint8_t age = rmap_item->age;
	if (age != 255)
		rmap_item->age++;
	if (age < 3)
		return false;
	if (!rmap_item->remaining_skips) {
		rmap_item->remaining_skips = skip_age(age);
		return false;
	}
	k->pages_skipped++;
	rmap_item->remaining_skips--;
	remove_rmap_item_from_tree(k, rmap_item);
	return true;
}

/* ---- the scan-time advisor ---- */

static void advisor_start_scan(struct ksm *k)
{
	if (k->knob[KNOB_ADVISOR_MODE] == ADVISOR_SCAN_TIME)
		k->advisor.start_scan_us = k->now;
}

/* The last pass's time, or this one's when there was none. */
static uint64_t prev_scan_time(const struct advisor_ctx *ctx, uint64_t scan_time)
{
	return ctx->scan_time ? ctx->scan_time : scan_time;
}

static uint64_t ewma(uint64_t prev, uint64_t curr)
{
	return ((100 - EWMA_WEIGHT) * prev + EWMA_WEIGHT * curr) / 100;
}

/*
 * As scan_time_advisor() does at the end of a pass: scale pages_to_scan by
 * how far the pass's time (whole seconds, at least 1) is from the target,
 * smoothed by a moving average of the change from pass to pass; then keep
 * the CPU share it implies between KSM_ADVISOR_MIN_CPU and advisor_max_cpu
 * percent, and the value at most advisor_max_pages_to_scan. All integer
 * arithmetic, in the kernel's order: the truncations are part of the result.
 */
static void scan_time_advisor(struct ksm *k)
{
	struct advisor_ctx *ctx = &k->advisor;
	uint64_t scan_time = (k->now - ctx->start_scan_us) / 1000 / MSEC_PER_SEC;
	if (!scan_time)
		scan_time = 1;
	double cpu_now = k->truth.cpu_ns + k->batch_cpu_ns;
	uint64_t cpu_time_diff_ms = (uint64_t)((cpu_now - ctx->cpu_ns) / NSEC_PER_MSEC);
	uint64_t cpu_percent = cpu_time_diff_ms * 100 / (scan_time * MSEC_PER_SEC);
	if (!cpu_percent)
		cpu_percent = 1;
	uint64_t last_scan_time = prev_scan_time(ctx, scan_time);
	uint64_t factor = k->knob[KNOB_ADVISOR_TARGET_SCAN_TIME] * 100 / scan_time;
	if (!factor)
		factor = 1;
	uint64_t change = scan_time * 100 / last_scan_time;
	if (!change)
		change = 1;
	change = ewma(ctx->change, change);
	uint64_t pts = k->knob[KNOB_PAGES_TO_SCAN];
	uint64_t pages = pts * 100 / factor;
	pages = pages * change / 100;
	uint64_t per_page_cost = pts / cpu_percent;
	if (!per_page_cost)
		per_page_cost = 1;
	pages = MIN(pages, per_page_cost * k->knob[KNOB_ADVISOR_MAX_CPU]);
	pages = MAX(pages, per_page_cost * KSM_ADVISOR_MIN_CPU);
	pages = MIN(pages, k->knob[KNOB_ADVISOR_MAX_PAGES_TO_SCAN]);
	ctx->change = change;
	ctx->scan_time = scan_time;
	ctx->cpu_ns = cpu_now;
	k->knob[KNOB_PAGES_TO_SCAN] = pages;
}

static void advisor_stop_scan(struct ksm *k)
{
	if (k->knob[KNOB_ADVISOR_MODE] == ADVISOR_SCAN_TIME)
		scan_time_advisor(k);
}

/* ---- the cursor ---- */

/*
 * As scan_get_next_rmap_item() does: the next present page of a mergeable
 * VMA after the cursor, with its rmap_item (found in the mm's rmap_list, or
 * added there in address order; rmap_items skipped over are freed). A pass
 * starts by draining the lru_add batches and dropping the unstable tree.
 * An mm with no mergeable VMA left, or exiting, loses its rmap_items and
 * its slot when the cursor leaves it. NULL at the end of a pass (the full
 * scan is counted), or when there is no mm to scan.
 */
struct rmap_item *scan_get_next_rmap_item(struct ksm *k, struct page **pagep)
{
	struct ksm_scan *s = &k->scan;
	struct mm *mm;

	if (mm_slots_empty(k))
		return NULL;
	mm = s->mm_slot;
	if (mm == &k->mm_head) {
		/* lru_add_drain_all(): pages faulted before the pass can merge in it */
		lru_add_drain(k);
		advisor_start_scan(k);
		for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
			k->root_unstable_tree[i].rb_node = NULL;
		k->unstable_gen++;
		mm = s->mm_slot = next_mm_slot(mm);
		if (mm == &k->mm_head)
			return NULL;
next_mm:
		s->address = 0;
		s->saw_mergeable = false;
		s->rmap_list = &mm->rmap_list;
	}

	if (mm->exiting)
		goto no_vmas;

	for (struct vma *v = next_vma(mm, s->address); v; v = next_vma(mm, v->end)) {
		if (!v->mergeable)
			continue;
		s->saw_mergeable = true;
		if (s->address < v->start)
			s->address = v->start;
		while (s->address < v->end) {
			uint64_t vpn = next_present(mm, s->address, v->end);
			if (vpn == UINT64_MAX) {
				s->address = v->end;
				break;
			}
			s->address = vpn;
			struct page *page = pte_get(mm, vpn);
			struct rmap_item *rmap_item = get_next_rmap_item(k, mm, s->rmap_list, vpn);
			s->rmap_list = &rmap_item->rmap_list;
			if (should_skip_rmap_item(k, page, rmap_item)) {
				s->address++;
				continue;
			}
			s->address++;
			*pagep = page;
			return rmap_item;
		}
	}

	if (mm->exiting) {
no_vmas:
		s->address = 0;
		s->saw_mergeable = false;
		s->rmap_list = &mm->rmap_list;
	}
	remove_trailing_rmap_items(k, s->rmap_list);

	s->mm_slot = next_mm_slot(mm);
	if (!s->saw_mergeable) {
		/* No VM_MERGEABLE area left (or exiting): unregister the mm. */
		mm_slot_del(mm);
		if (mm->exiting)
			mm_destroy(k, mm);
	}
	mm = s->mm_slot;
	if (mm != &k->mm_head)
		goto next_mm;

	advisor_stop_scan(k);
	s->seqnr++;
	k->full_scans_total++;
	return NULL;
}

/*
 * The walks ahead, for the pages after the cursor in its mm: those for
 * pages the cursor has reached are dropped, the ring is filled up from
 * after its last page. A new walk starts at the root of the tree the
 * walks are in (see ahead_gen).
 */
static void plan_walks_ahead(struct ksm *k)
{
	struct mm *mm = k->scan.mm_slot;
	uint64_t cur = k->scan.address;	/* just past the page visited now */

	while (k->n_ahead) {
		const struct walk_ahead *a = &k->ahead[k->ahead_head];
		if (a->mm == mm && a->vpn >= cur)
			break;
		k->ahead_head = (k->ahead_head + 1) % KSM_LOOKAHEAD;
		k->n_ahead--;
	}
	if (k->n_ahead < KSM_LOOKAHEAD / 2) {
		uint64_t vpns[KSM_LOOKAHEAD], keys[KSM_LOOKAHEAD];
		uint64_t from = k->n_ahead ?
			k->ahead[(k->ahead_head + k->n_ahead - 1) % KSM_LOOKAHEAD].vpn + 1 : cur;
		unsigned got = pte_peek_keys(mm, from, vpns, keys, KSM_LOOKAHEAD - k->n_ahead);
		if (!got)
			got = pte_peek_keys(mm, (from | (PT_SIZE - 1)) + 1, vpns, keys,
					    KSM_LOOKAHEAD - k->n_ahead);
		for (unsigned j = 0; j < got; j++) {
			unsigned slot = (k->ahead_head + k->n_ahead++) % KSM_LOOKAHEAD;
			k->ahead[slot] = (struct walk_ahead){
				.mm = mm, .vpn = vpns[j], .key = keys[j],
				.node = k->ahead_tree ?
						k->root_unstable_tree[k->ahead_tree - 1].rb_node : NULL,
			};
		}
	}
}

/* As ksm_do_scan() does: one batch of up to pages_to_scan visits. */
static void ksm_do_scan(struct ksm *k, uint64_t scan_npages)
{
	while (scan_npages--) {
		struct page *page;
		struct rmap_item *rmap_item = scan_get_next_rmap_item(k, &page);
		if (!rmap_item)
			return;
		k->batch_cpu_ns += k->opt.costs.visit_ns;
		plan_walks_ahead(k);
		cmp_and_merge_page(k, page, rmap_item);
		k->pages_scanned++;
	}
}

/* ---- ksmd scheduling ---- */

/* As ksmd_should_run() does: run=1 and some mm has a slot. */
static bool ksmd_should_run(const struct ksm *k)
{
	return k->knob[KNOB_RUN] == KSM_RUN_MERGE && !mm_slots_empty(k);
}

/* A record made ksmd's work possible (or a knob allowed it): it wakes now. */
static void ksmd_wake_if_needed(struct ksm *k)
{
	if (k->ksmd == KSMD_WAITING && ksmd_should_run(k)) {
		k->ksmd = KSMD_SLEEPING;	/* due now */
		k->wake_at = k->now;
		k->sleep_ms_at_sleep = k->knob[KNOB_SLEEP_MILLISECS];
	}
}

uint64_t ksm_next_batch(const struct ksm *k)
{
	return k->ksmd == KSMD_WAITING ? UINT64_MAX : k->wake_at;
}

/* One turn of ksm_scan_thread(): a batch, then the sleep until the next. */
uint64_t ksm_run_batch(struct ksm *k, uint64_t now_us)
{
	k->now = now_us;
	k->batch_cpu_ns = 0;
	if (ksmd_should_run(k))
		ksm_do_scan(k, k->knob[KNOB_PAGES_TO_SCAN]);
	uint64_t cost_us = (uint64_t)(k->batch_cpu_ns / 1000);
	k->truth.cpu_ns += k->batch_cpu_ns;
	k->batch_cpu_ns = 0;
	uint64_t end = now_us + (k->opt.batch_time ? cost_us : 0);
	if (ksmd_should_run(k)) {
		uint64_t ms = k->knob[KNOB_SLEEP_MILLISECS];
		k->ksmd = KSMD_SLEEPING;
		k->sleep_ms_at_sleep = ms;
		if (ms == 0)
			/* No sleep: back-to-back batches, each as long as its modelled cost. */
			k->wake_at = now_us + MAX(cost_us, 1);
		else
			/*
			 * schedule_timeout(n) arms a timer that the wheel rounds up to
			 * the next tick, so it fires n + 1 ticks after the current one
			 * (measured live: 41-42 batches per second at 20 ms, not 50).
			 */
			k->wake_at = (jiffies_of(end) + msecs_to_jiffies(ms) + 1) * US_PER_JIFFY;
	} else {
		k->ksmd = KSMD_WAITING;
	}
	return end;
}

/* ---- run=2 ---- */

/* As remove_stable_node() does: only a stale node can go. */
static bool remove_stable_node(struct ksm *k, struct stable_node *node)
{
	if (!node->page) {
		remove_node_from_stable_tree(k, node);
		return true;
	}
	return false;	/* its KSM page is still mapped: busy */
}

static bool remove_stable_node_chain(struct ksm *k, struct stable_node *chain,
				     struct rb_root *root)
{
	struct stable_node *dup;
	struct hlist_node *next;
	hlist_for_each_entry_safe(dup, next, &chain->hlist, hlist_dup)
		if (!remove_stable_node(k, dup))
			return false;
	free_stable_node_chain(k, chain, root);
	return true;
}

/*
 * As remove_all_stable_nodes() does: take the root of each tree until it is
 * empty, and give up on that tree at the first busy node. True when every
 * tree emptied.
 */
static bool remove_all_stable_nodes(struct ksm *k)
{
	bool ok = true;
	for (uint32_t nid = 0; nid < ksm_nr_trees(k); nid++) {
		struct rb_root *root = &k->root_stable_tree[nid];
		while (root->rb_node) {
			struct stable_node *node = rb_entry(root->rb_node, struct stable_node, node);
			bool done = is_stable_node_chain(node) ? remove_stable_node_chain(k, node, root)
							       : remove_stable_node(k, node);
			if (!done) {
				ok = false;
				break;
			}
		}
	}
	return ok;
}

/*
 * As unmerge_and_remove_all_rmap_items() does for run=2: unshare every KSM
 * page and KSM zero page of every mergeable VMA, free every rmap_item, drop
 * the slots of exiting mms, then the stable nodes left stale.
 */
static void unmerge_and_remove_all_rmap_items(struct ksm *k)
{
	struct ksm_scan *s = &k->scan;
	s->mm_slot = next_mm_slot(&k->mm_head);
	while (s->mm_slot != &k->mm_head) {
		struct mm *mm = s->mm_slot;
		if (!mm->exiting) {
			for (GTreeNode *n = g_tree_node_first(mm->vmas); n; n = g_tree_node_next(n)) {
				struct vma *v = g_tree_node_value(n);
				if (v->mergeable)
					break_ksm_range(k, mm, v->start, v->end);
			}
		}
		remove_trailing_rmap_items(k, &mm->rmap_list);
		s->mm_slot = next_mm_slot(mm);
		if (mm->exiting) {
			mm_slot_del(mm);
			mm_destroy(k, mm);
		}
	}
	remove_all_stable_nodes(k);
	s->seqnr = 0;
	/*
	 * Every rmap_item is gone; the kernel leaves its unstable roots pointing at
	 * them until the next pass resets them. Resetting now is the same,
	 * and keeps the invariant checker off freed memory.
	 */
	for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
		k->root_unstable_tree[i].rb_node = NULL;
	k->unstable_gen++;
}

/* ---- knobs ---- */

/*
 * As set_advisor_defaults() does when advisor_mode changes: without an
 * advisor pages_to_scan returns to its default; with one, the advisor
 * starts afresh from advisor_min_pages_to_scan. A pinned pages_to_scan
 * stays as the command line set it.
 */
static void set_advisor_defaults(struct ksm *k)
{
	uint64_t pages_to_scan = DEFAULT_PAGES_TO_SCAN;
	if (k->knob[KNOB_ADVISOR_MODE] != ADVISOR_NONE) {
		memset(&k->advisor, 0, sizeof(k->advisor));
		pages_to_scan = k->knob[KNOB_ADVISOR_MIN_PAGES_TO_SCAN];
	}
	if (!k->opt.pinned[KNOB_PAGES_TO_SCAN])
		k->knob[KNOB_PAGES_TO_SCAN] = pages_to_scan;
}

/*
 * A knob write, refused where the sysfs store refuses it: max_page_sharing
 * and merge_across_nodes while KSM pages exist (EBUSY), pages_to_scan while
 * an advisor drives it (EINVAL). A knob pinned on the command line ignores
 * the trace's writes.
 */
static bool set_knob(struct ksm *k, enum ksm_knob knob, uint64_t value, GError **error)
{
	uint64_t old = k->knob[knob];
	if (k->opt.pinned[knob])
		return true;
	switch (knob) {
	case KNOB_RUN:
		if (old != value) {
			k->knob[KNOB_RUN] = value;
			if (value == KSM_RUN_UNMERGE)
				unmerge_and_remove_all_rmap_items(k);
		}
		break;
	case KNOB_MAX_PAGE_SHARING:
	case KNOB_MERGE_ACROSS_NODES:
		if (old != value) {
			if (k->pages_shared || !remove_all_stable_nodes(k)) {
				g_set_error(error, KSM_ERROR, KSM_ERROR_BUSY,
					    "the kernel refuses %s %" G_GUINT64_FORMAT
					    " (EBUSY): pages are merged; set run 2 first",
					    knob_table[knob].name, value);
				return false;
			}
			k->knob[knob] = value;
		}
		break;
	case KNOB_SLEEP_MILLISECS:
		k->knob[knob] = value;
		if (k->ksmd == KSMD_SLEEPING && value != k->sleep_ms_at_sleep && k->wake_at > k->now)
			k->wake_at = k->now;
		break;
	case KNOB_ADVISOR_MODE:
		if (old != value) {
			k->knob[knob] = value;
			set_advisor_defaults(k);
		}
		break;
	case KNOB_PAGES_TO_SCAN:
		if (k->knob[KNOB_ADVISOR_MODE] != ADVISOR_NONE) {
			g_set_error(error, KSM_ERROR, KSM_ERROR_INVAL,
				    "the kernel refuses pages_to_scan while advisor_mode is scan-time");
			return false;
		}
		k->knob[knob] = value;
		break;
	default:
		k->knob[knob] = value;
		break;
	}
	return true;
}

/* ---- public interface ---- */

G_DEFINE_QUARK(ksm-error-quark, ksm_error)

struct ksm *ksm_new(const struct ksm_options *opt)
{
	struct ksm *k = g_new0(struct ksm, 1);
	k->opt = *opt;
	if (!k->opt.hash)
		k->opt.hash = hash_lookup(HASH_DEFAULT);
	k->detector = k->opt.policy.detector;
	k->hash_fn = k->opt.hash && k->detector == KSM_DETECT_CHECKSUM ? k->opt.hash->fn : NULL;
	if (k->detector == KSM_DETECT_PARTIAL) {
		content *z = content_zero();
		for (unsigned i = 0; i < G_N_ELEMENTS(k->partial_zero); i++)
			k->partial_zero[i] = partial_checksum(content_peek(z), 1u << i);
		content_unref(z);
	}
	if (k->hash_fn) {
		content *z = content_zero();
		k->zero_checksum = content_checksum(z, k->hash_fn, NULL);
		content_unref(z);
	}
	for (int i = 0; i < KNOB_NR; i++)
		k->knob[i] = knob_table[i].def;
	for (int i = 0; i < KNOB_NR; i++)
		if (k->opt.pinned[i])
			k->knob[i] = k->opt.pinned_value[i];
	k->mm_by_name = g_hash_table_new(g_str_hash, g_str_equal);
	INIT_LIST_HEAD(&k->mm_head.mm_node);
	k->scan.mm_slot = &k->mm_head;
	k->nr_roots = 1;
	k->nr_classes = MAX(k->opt.policy.classes, 1);
	k->root_stable_tree = g_new0(struct rb_root, k->nr_classes);
	k->root_unstable_tree = g_new0(struct rb_root, k->nr_classes);
	k->ksmd = KSMD_WAITING;
	k->lru_gen = 1;		/* 0 is no page's batch */
	slab_init(&k->rmap_item_cache, sizeof(struct rmap_item), _Alignof(struct rmap_item),
		  "an arena of rmap_items");
	slab_init(&k->page_slab, sizeof(struct page), _Alignof(struct page), "an arena of pages");
	return k;
}

static void free_tree_nodes(struct rb_node *n)
{
	if (!n)
		return;
	free_tree_nodes(n->rb_left);
	free_tree_nodes(n->rb_right);
	struct stable_node *node = rb_entry(n, struct stable_node, node);
	if (is_stable_node_chain(node)) {
		struct stable_node *dup;
		struct hlist_node *next;
		hlist_for_each_entry_safe(dup, next, &node->hlist, hlist_dup)
			free_stable_node(dup);
	}
	free_stable_node(node);
}

/*
 * Peak RSS measured with 1 Mi written pages in 2 mms (half distinct, half
 * one byte pattern, merged) and with 100000 one-page mms: 199 and 146
 * bytes a page with and without the oracle, 1.5 KiB an mm; bench model's
 * mixed job 2 (many overlay contents) peaks at 203 without it. Rounded up,
 * so that a refused run would really not have fitted.
 */
#define EST_BASE_BYTES (16u << 20)
#define EST_PAGE_BYTES 240u
#define EST_PAGE_BYTES_NO_IDEAL 220u
#define EST_MM_BYTES 2048u

uint64_t ksm_memory_estimate(uint64_t written_pages, uint64_t mms, bool ideal)
{
	uint64_t per_page = ideal ? EST_PAGE_BYTES : EST_PAGE_BYTES_NO_IDEAL;

	if (written_pages > (UINT64_MAX / 2) / per_page || mms > (UINT64_MAX / 2) / EST_MM_BYTES)
		return UINT64_MAX;
	return EST_BASE_BYTES + written_pages * per_page + mms * EST_MM_BYTES;
}

void ksm_free(struct ksm *k)
{
	if (!k)
		return;
	/* Teardown without bookkeeping: rmap_items, then pages, then nodes. */
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		struct rmap_item *rmap_item, *next;
		for (rmap_item = mm->rmap_list; rmap_item; rmap_item = next) {
			next = rmap_item->rmap_list;
			free_rmap_item(k, rmap_item);
		}
		mm->rmap_list = NULL;
		mm_zap_all(k, mm);
		mm_destroy(k, mm);
	}
	g_ptr_array_free(all, TRUE);
	for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
		free_tree_nodes(k->root_stable_tree[i].rb_node);
	g_free(k->root_stable_tree);
	g_free(k->root_unstable_tree);
	g_hash_table_destroy(k->mm_by_name);
	slab_destroy(&k->rmap_item_cache);
	slab_destroy(&k->page_slab);
	g_free(k);
}

bool ksm_apply(struct ksm *k, const struct trace_record *r, uint64_t now_us, GError **error)
{
	k->now = now_us;
	bool ok;
	if (r->verb == TRACE_SET)
		ok = set_knob(k, r->knob, r->value, error);
	else
		ok = mm_user_apply(k, r, error);
	if (ok)
		ksmd_wake_if_needed(k);
	return ok;
}

/*
 * What general_profit_show() and ksm_process_profit() report: the bytes of
 * the pages merging saved, less what the rmap_items cost. System-wide the
 * saved pages are pages_sharing (the first mapping of a KSM page saves
 * nothing); per mm they are ksm_merging_pages (all its mappings of KSM
 * pages); both add the KSM zero pages.
 */
static int64_t ksm_profit(uint64_t saved_pages, uint64_t rmap_items)
{
	return (int64_t)saved_pages * PAGE_SIZE - (int64_t)rmap_items * KSM_RMAP_ITEM_SIZE;
}

void ksm_counters(const struct ksm *k, struct ksm_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->full_scans = k->full_scans_total;
	c->pages_scanned = k->pages_scanned;
	c->pages_shared = k->pages_shared;
	c->pages_sharing = k->pages_sharing;
	c->pages_unshared = k->pages_unshared;
	int64_t vol = (int64_t)k->rmap_items - (int64_t)(k->pages_shared + k->pages_sharing +
							   k->pages_unshared);
	c->pages_volatile = vol > 0 ? (uint64_t)vol : 0;
	c->pages_skipped = k->pages_skipped;
	c->ksm_zero_pages = k->zero_pages;
	c->stable_node_chains = k->stable_node_chains;
	c->stable_node_dups = k->stable_node_dups;
	c->general_profit = ksm_profit(k->pages_sharing + k->zero_pages, k->rmap_items);
	c->cow_ksm = k->cow_ksm;
	c->thp_fault_alloc = k->thp_fault_alloc;
	c->thp_split_page = k->thp_split_page;
	c->thp_split_pmd = k->thp_split_pmd;
	c->rmap_items = k->rmap_items;
	c->pages_to_scan = k->knob[KNOB_PAGES_TO_SCAN];
}

void ksm_truth(const struct ksm *k, struct ksm_truth *t)
{
	*t = k->truth;
}

void ksm_policy_stats(const struct ksm *k, struct ksm_policy_stats *out)
{
	*out = k->pstats;
}

#define HEAP_OVERHEAD 16u	/* malloc's header, per object */
#define TREE_NODE_BYTES 40u	/* a GTreeNode */

static uint64_t stable_tree_nodes(const struct rb_node *n)
{
	if (!n)
		return 0;
	const struct stable_node *node = rb_entry(n, struct stable_node, node);
	uint64_t count = 1;
	if (is_stable_node_chain(node))
		for (const struct hlist_node *d = node->hlist.first; d; d = d->next)
			count++;
	return count + stable_tree_nodes(n->rb_left) + stable_tree_nodes(n->rb_right);
}

void ksm_memory(const struct ksm *k, struct ksm_memory *out)
{
	memset(out, 0, sizeof(*out));
	out->rmap_items = slab_bytes(&k->rmap_item_cache);
	out->rmap_item_count = k->rmap_items;
	out->pages = slab_bytes(&k->page_slab);
	for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
		out->stable_node_count += stable_tree_nodes(k->root_stable_tree[i].rb_node);
	out->stable_nodes = out->stable_node_count * (sizeof(struct stable_node) + HEAP_OVERHEAD);
	uint64_t heap;
	content_stats(&out->content_objects, &heap);
	out->contents = content_footprint();
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		uint64_t chunks = (uint64_t)g_tree_nnodes(mm->chunks);
		uint64_t vmas = (uint64_t)g_tree_nnodes(mm->vmas);
		out->pt_chunks += chunks;
		out->page_tables += chunks * (sizeof(struct pt_chunk) + HEAP_OVERHEAD + TREE_NODE_BYTES);
		out->mms += sizeof(struct mm) + HEAP_OVERHEAD + 2 * 48 +
			    vmas * (sizeof(struct vma) + HEAP_OVERHEAD + TREE_NODE_BYTES);
	}
	out->mm_count = all->len;
	g_ptr_array_free(all, TRUE);
	out->mms += (uint64_t)g_hash_table_size(k->mm_by_name) * 24;
	out->total = out->rmap_items + out->pages + out->stable_nodes + out->contents +
		     out->page_tables + out->mms;
}

bool ksm_thp_columns(const struct ksm *k)
{
	return k->opt.thp_columns;
}

uint64_t ksm_knob(const struct ksm *k, enum ksm_knob knob)
{
	return k->knob[knob];
}

static gint stat_by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(((const struct ksm_mm_stat *)a)->name, ((const struct ksm_mm_stat *)b)->name);
}

GArray *ksm_mm_stats(const struct ksm *k)
{
	GArray *out = g_array_new(FALSE, TRUE, sizeof(struct ksm_mm_stat));
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		if (mm->exiting)
			continue;	/* gone from /proc */
		struct ksm_mm_stat st = {
			.name = mm->name,
			.ksm_rmap_items = mm->ksm_rmap_items,
			.ksm_zero_pages = mm->ksm_zero_pages,
			.ksm_merging_pages = mm->ksm_merging_pages,
			.ksm_process_profit = ksm_profit(mm->ksm_merging_pages + mm->ksm_zero_pages,
							 mm->ksm_rmap_items),
			.ksm_mergeable = mm_has_mergeable(mm),
			.ksm_merge_any = mm->merge_any,
		};
		g_array_append_val(out, st);
	}
	g_ptr_array_free(all, TRUE);
	g_array_sort(out, stat_by_name);
	return out;
}
