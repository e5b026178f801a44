// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd as Linux 6.18's mm/ksm.c has it: the scan cursor, cmp_and_merge_page,
 * the stable and unstable trees, smart scan, the advisor and the sysfs
 * knobs, in the kernel's order and with its bookkeeping. Functions carry
 * the names of the kernel functions they mirror, so each can be read beside
 * its twin; sim/MODEL.md walks through them with what was measured live.
 *
 * The trees sort pages by their bytes. The stable tree holds the KSM pages,
 * write-protected, so it stays sorted; a node whose page is mapped
 * max_page_sharing times becomes a chain of dups, one KSM page each. The
 * unstable tree holds pages that kept their checksum since the last visit
 * and matched nothing; they stay writable, so a walk may find it out of
 * order, and it is dropped at each pass's start. There is one of each per
 * NUMA node (one in all with merge_across_nodes), and per class under the
 * classified policy: tree_index() picks one.
 *
 * An rmap_item stands for one address of an mm: get_next_rmap_item() makes
 * it when the cursor first meets a page there, and it is freed when the
 * cursor passes the address with no page to visit, or its mm leaves. Its flags say where it
 * is: STABLE_FLAG, listed under a stable node (head); UNSTABLE_FLAG, in an
 * unstable tree, with the pass it went in by in SEQNR_MASK (a tree one
 * pass old is gone already); neither, volatile. The kernel keeps them in
 * the low bits of the address. remove_rmap_item_from_tree() undoes them.
 *
 * Not modelled: NUMA migration (migrate_nodes, stable nodes moved between
 * nodes, stable_tree_search's -EBUSY), max_page_sharing_bypass (only a
 * WARN_ON_ONCE depends on it), locks and page references but for the
 * lru_add batch's. The walks ahead of the unstable-tree search
 * (walk_ahead.h), the policies' gates (policy_gate.c), the statistics
 * (ksm_stats.c), the start and end (ksm_new.c) and the pricing of the work
 * (pricing.c) live in files of their own. The twins state what happens
 * through the hooks of ksm_events.h, which count it and tell the
 * measurements that observe it (exposure.c, false_positives.c).
 */
#include <string.h>
#include "sim/walk_ahead.h"

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
	return k->nr_classes == 1 ? 0 : classify_page(k, page, mm);
}

/* Which of root_stable_tree[] / root_unstable_tree[] a page's search uses. */
static inline uint32_t tree_index(const struct ksm *k, const struct page *page,
				  const struct mm *mm)
{
	return tree_nid(k, page->nid) * k->nr_classes + page_class(k, page, mm);
}

static uint64_t counted_checksum(struct ksm *k, uint64_t checksum)
{
	ksm_ev_checksum(k);
	return checksum;
}

static uint64_t calc_checksum(struct ksm *k, struct page *p)
{
	return counted_checksum(k, content_checksum(p->c, k->hash_fn, NULL));
}

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

/* ---- what mm.c calls, as mm/memory.c calls into KSM (include/linux/ksm.h) ---- */

/* As ksm_map_zero_page() does: a KSM zero PTE is mapped, and counted at once. */
void ksm_map_zero_page(struct ksm *k, struct mm *mm)
{
	k->zero_pages++;
	mm->ksm_zero_pages++;
}

/* As ksm_might_unmap_zero_page() does: a PTE goes away; a KSM zero PTE is uncounted at once. */
void ksm_might_unmap_zero_page(struct ksm *k, struct mm *mm, const struct page *pte)
{
	if (pte == KSM_ZERO_PTE) {
		k->zero_pages--;
		mm->ksm_zero_pages--;
	}
}

/*
 * do_wp_page copies a KSM page at mm's vpn (COW_KSM): on a store, or on an
 * unshare fault (break_ksm). The copy's CPU time is the faulting task's,
 * not ksmd's: no cost here. A store within the pass after the merge is
 * partial-hash's miss.
 */
void ksm_cow_ksm_page(struct ksm *k, struct mm *mm, uint64_t vpn, const struct page *page,
		      bool unshare)
{
	bool fresh = !unshare && k->full_scans_total <= page->merged_at + 1;

	trace_ksm_cow_ksm(k, mm, vpn, page,
			  unshare ? KSM_COW_UNSHARE : fresh ? KSM_COW_FRESH : KSM_COW_LATER);
	if (fresh)
		partial_hash_missed(k, find_vma(mm, vpn));
}

/*
 * A new mm on node nid: the trees of every node up to nid exist from now
 * on (the kernel allocates them for every possible node at start-up).
 */
void ksm_grow_roots(struct ksm *k, uint32_t nid)
{
	if (nid < k->nr_roots)
		return;
	uint32_t n = (nid + 1) * k->nr_classes;
	k->root_stable_tree = g_renew(struct rb_root, k->root_stable_tree, n);
	k->root_unstable_tree = g_renew(struct rb_root, k->root_unstable_tree, n);
	for (uint32_t i = ksm_nr_trees(k); i < n; i++)
		k->root_stable_tree[i] = k->root_unstable_tree[i] = (struct rb_root){ 0 };
	k->nr_roots = nid + 1;
}

/* ---- stable nodes and chains ---- */

static struct stable_node *alloc_stable_node(struct ksm *k)
{
	return slab_alloc0(&k->stable_node_cache);
}

void free_stable_node(struct ksm *k, struct stable_node *n)
{
	if (is_stable_node_chain(n))
		chain_index_free(n->dups);
	slab_free(&k->stable_node_cache, n);
}

static bool is_stable_node_dup(const struct stable_node *n)
{
	return n->is_dup;
}

/* rmap_hlist_len moves by delta: a dup's chain reindexes it. */
static void stable_node_len_add(const struct ksm *k, struct stable_node *node, int delta)
{
	node->rmap_hlist_len += delta;
	if (node->is_dup)
		chain_index_update(stable_node_chain(k, node)->dups, node, is_page_sharing_candidate(k, node));
}

static void stable_node_chain_add_dup(struct ksm *k, struct stable_node *dup,
				      struct stable_node *chain)
{
	dup->is_dup = true;
	stable_node_set_chain(k, dup, chain);
	hlist_add_head(&dup->hlist_dup, &chain->hlist);
	chain_index_add_head(chain->dups, dup, is_page_sharing_candidate(k, dup));
	k->stable_node_dups++;
}

static void __stable_node_dup_del(struct ksm *k, struct stable_node *dup)
{
	hlist_del(&dup->hlist_dup);
	chain_index_del(stable_node_chain(k, dup)->dups, dup);
	k->stable_node_dups--;
}

static void stable_node_dup_del(struct ksm *k, struct stable_node *dup)
{
	if (is_stable_node_dup(dup))
		__stable_node_dup_del(k, dup);
	else
		rb_erase(&dup->node, &k->root_stable_tree[dup->tree]);
}

static void free_stable_node_chain(struct ksm *k, struct stable_node *chain, struct rb_root *root)
{
	rb_erase(&chain->node, root);
	free_stable_node(k, chain);
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
		rmap_item_mm(k, rmap_item)->ksm_merging_pages--;
		rmap_item->flags &= ~KSM_FLAG_MASK;
		rmap_item->head = NULL;
	}
	trace_ksm_remove_ksm_page(k, node);
	stable_node_dup_del(k, node);
	free_stable_node(k, node);
}

/* As ksm_get_folio() does: the node's page, or NULL after removing a stale node. */
static struct page *ksm_get_folio(struct ksm *k, struct stable_node *node)
{
	struct page *p = stable_node_page(k, node);
	if (p)
		return p;
	remove_node_from_stable_tree(k, node);
	return NULL;
}

static struct stable_node *alloc_stable_node_chain(struct ksm *k, struct stable_node *dup,
						   struct rb_root *root)
{
	struct stable_node *chain = alloc_stable_node(k);
	chain->chain_prune_time = jiffies_of(k->now);
	chain->rmap_hlist_len = STABLE_NODE_CHAIN;
	chain->dups = chain_index_new();
	chain->nid = dup->nid;
	chain->tree = dup->tree;
	k->stable_node_chains++;
	rb_replace_node(&dup->node, &chain->node, root);
	stable_node_chain_add_dup(k, dup, chain);
	return chain;
}

/*
 * What stable_node_dup()'s walk without pruning finds, from the chain's
 * index: it stops at the first live candidate, else looks at every dup and
 * takes the first live one; it charges a chain_step for each dup it looks
 * at and drops each stale one it meets (ksm_get_folio()), head first.
 */
static struct stable_node *stable_node_first_candidate(struct ksm *k, struct chain_index *ci)
{
	struct stable_node *found = chain_index_first(ci, CHAIN_CAND), *stale;
	ksm_ev_chain_step(k, found ? chain_index_place(ci, found) : ci->nr_dups);
	while ((stale = chain_index_first(ci, CHAIN_STALE)) &&
	       (!found || stale->chain_slot > found->chain_slot))
		remove_node_from_stable_tree(k, stale);
	return found ? found : chain_index_first(ci, CHAIN_LIVE);
}

/*
 * As stable_node_dup() does: pick the dup of a chain to merge into, the
 * fullest one that can still take a mapping (any live one if none can).
 * Only a pruning walk, at most once per stable_node_chains_prune_millisecs,
 * looks at every dup and so drops every stale one; otherwise the first
 * candidate ends the walk. A chain left with one dup collapses back into a
 * regular node, and a chosen dup that is not first moves to the front so
 * the next walk finds it at once.
 *
 * Without pruning the model does not walk: the chain's index (chain->dups)
 * names the walk's pick, and stable_node_first_candidate() charges the
 * chain_steps the walk would take and drops the stale dups it would meet.
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

	if (!prune) {
		found = stable_node_first_candidate(k, chain->dups);
		tree_page = found ? stable_node_page(k, found) : NULL;
	} else {
		hlist_for_each_entry_safe(dup, next, &chain->hlist, hlist_dup) {
			ksm_ev_chain_step(k, 1);
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
	}

	if (found) {
		/* 6.1 collapsed only a pruning walk's last dup that can take more (6.11: any last dup) */
		if (chain->hlist.first == &found->hlist_dup && !found->hlist_dup.next &&
		    (!ksm_linux_6_1(k) || (prune && is_page_sharing_candidate(k, found)))) {
			/* One dup left: it takes the chain's place (its link: a union) */
			found->is_dup = false;
			rb_replace_node(&chain->node, &found->node, root);
			free_stable_node(k, chain);
			k->stable_node_chains--;
			k->stable_node_dups--;
			*node_io = found;
		} else if (chain->hlist.first != &found->hlist_dup &&
			   __is_page_sharing_candidate(k, found, 1)) {
			hlist_del(&found->hlist_dup);
			hlist_add_head(&found->hlist_dup, &chain->hlist);
			chain_index_del(chain->dups, found);
			chain_index_add_head(chain->dups, found, is_page_sharing_candidate(k, found));
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

/*
 * As chain_prune() and chain() do, for the search and the insertion: a
 * level's node resolved to its dup (pruning stale dups or not), the
 * level's cost charged.
 */
static inline struct page *chain_prune(struct ksm *k, struct stable_node **s_n_d,
				       struct stable_node **s_n, struct rb_root *root)
{
	ksm_ev_tree_level(k);
	return __stable_node_chain(k, s_n_d, s_n, root, true);
}

static inline struct page *chain(struct ksm *k, struct stable_node **s_n_d,
				 struct stable_node **s_n, struct rb_root *root)
{
	ksm_ev_tree_level(k);
	return __stable_node_chain(k, s_n_d, s_n, root, false);
}

/*
 * As stable_tree_search() does, without the migration cases: descend by
 * memcmp, resolving each chain to a dup on the way; equal content is a
 * match only while its node can take one more mapping. A stale node met
 * on the way is removed, and the walk starts over from the root.
 */
static struct page *stable_tree_search(struct ksm *k, struct page *page, const struct mm *mm)
{
	if (page->ksm && page_stable_node(k, page))
		return page;	/* a KSM page already: its rmap_item may not track it yet */

	struct rb_root *root = &k->root_stable_tree[tree_index(k, page, mm)];
	unsigned depth;
again:
	depth = 0;
	struct rb_node **new = &root->rb_node;
	while (*new) {
		struct stable_node *node = rb_entry(*new, struct stable_node, node), *dup;
		struct page *tree_page = chain_prune(k, &dup, &node, root);
		depth++;
		if (!tree_page) {
			ksm_ev_search_depth(k, depth);	/* the levels walked until the stale node */
			goto again;
		}
		int ret = memcmp_pages(k, page, tree_page);
		struct rb_node *parent = *new;
		if (ret < 0) {
			new = &parent->rb_left;
		} else if (ret > 0) {
			new = &parent->rb_right;
		} else {
			ksm_ev_search_depth(k, depth);
			if (!is_page_sharing_candidate(k, dup))
				return NULL;
			return tree_page;
		}
	}
	ksm_ev_search_depth(k, depth);
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
	uint32_t nid = kpage->nid, tree = tree_index(k, kpage, mm);
	struct rb_root *root = &k->root_stable_tree[tree];
	struct rb_node **new, *parent;
	struct stable_node *node = NULL, *dup;
	bool need_chain = false;
	unsigned depth;
again:
	parent = NULL;
	depth = 0;
	new = &root->rb_node;
	while (*new) {
		node = rb_entry(*new, struct stable_node, node);
		struct page *tree_page = chain(k, &dup, &node, root);
		depth++;
		if (!tree_page) {
			ksm_ev_search_depth(k, depth);
			goto again;
		}
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
	ksm_ev_search_depth(k, depth);
	struct stable_node *sdup = alloc_stable_node(k);
	ksm_ev_stable_insert(k, sdup);
	stable_node_set_page(k, sdup, kpage);
	sdup->nid = nid;
	sdup->tree = tree;
	if (!need_chain) {
		rb_link_node(&sdup->node, parent, new);
		rb_insert_color(&sdup->node, root);
	} else {
		if (!is_stable_node_chain(node))
			node = alloc_stable_node_chain(k, node, root);
		stable_node_chain_add_dup(k, sdup, node);
	}
	page_set_stable_node(k, kpage, sdup);
	return sdup;
}

/*
 * As stable_tree_append() does: list the rmap_item under its KSM page's
 * node. The first one listed counts as pages_shared, each further one as
 * pages_sharing.
 */
static void stable_tree_append(struct ksm *k, struct rmap_item *rmap_item, struct stable_node *node)
{
	stable_node_len_add(k, node, 1);
	rmap_item->head = node;
	rmap_item->flags |= STABLE_FLAG;
	ksm_ev_stable_append(k, rmap_item);
	hlist_add_head(&rmap_item->hlist, &node->hlist);
	if (rmap_item->hlist.next)
		k->pages_sharing++;
	else
		k->pages_shared++;
	rmap_item_mm(k, rmap_item)->ksm_merging_pages++;
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
		rmap_item_mm(k, rmap_item)->ksm_merging_pages--;
		stable_node_len_add(k, node, -1);
		rmap_item->head = NULL;
		rmap_item->flags = 0;
		trace_ksm_remove_rmap_item(k, rmap_item);
	} else if (rmap_item->flags & UNSTABLE_FLAG) {
		uint8_t age = (uint8_t)(k->scan.seqnr - (rmap_item->flags & SEQNR_MASK));
		g_assert(age <= 1);
		if (!age) {
			rb_erase(&rmap_item->node, &k->root_unstable_tree[rmap_item->tree]);
			walks_ahead_forget(k);
		}
		k->pages_unshared--;
		rmap_item->flags = 0;
	}
}

void free_rmap_item(struct ksm *k, struct rmap_item *rmap_item)
{
	k->rmap_items--;
	rmap_item_mm(k, rmap_item)->ksm_rmap_items--;
	if (rmap_item->cached_page)
		page_set_rmap_item(k, rmap_item_cached_page(k, rmap_item), NULL);
	if (rmap_item->seen)
		content_unref(rmap_item->seen);
	slab_free(&k->rmap_item_cache, rmap_item);
}

static void remove_trailing_rmap_items(struct ksm *k, uint32_t *link)
{
	while (*link) {
		struct rmap_item *rmap_item = rmap_at(k, *link);
		*link = rmap_item->rmap_list;
		remove_rmap_item_from_tree(k, rmap_item);
		free_rmap_item(k, rmap_item);
	}
}

static struct rmap_item *get_next_rmap_item(struct ksm *k, struct mm *mm,
					    uint32_t *link, uint64_t vpn)
{
	while (*link) {
		struct rmap_item *rmap_item = rmap_at(k, *link);
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
	ksm_ev_rmap_item_new(k);
	mm->ksm_rmap_items++;
	rmap_item->mm_idx = mm->idx;
	rmap_item->vpn = vpn;
	rmap_item->rmap_list = *link;
	*link = slab_index(&k->rmap_item_cache, rmap_item);
	return rmap_item;
}

/* ---- unstable tree ---- */

/*
 * As get_mergeable_page() does: the page at the rmap_item's address if it
 * still sits in a mergeable VMA of a live mm, else NULL.
 */
static struct page *get_mergeable_page(struct ksm *k, struct rmap_item *rmap_item)
{
	struct mm *mm = rmap_item_mm(k, rmap_item);
	if (mm->exiting)
		return NULL;
	/* The page keeps the cache honest; only VMA changes are checked here. */
	if (rmap_item->cached_page && rmap_item->vma_gen == mm->vma_gen)
		return rmap_item_cached_page(k, rmap_item);
	struct vma *v = find_vma(mm, rmap_item->vpn);
	if (!v || !v->mergeable)
		return NULL;
	struct page *p = pte_get(mm, rmap_item->vpn);
	if (!pte_is_page(p))
		return NULL;
	if (page_mapped_once(p) && rmap_item_cached_page(k, rmap_item) != p) {
		if (rmap_item->cached_page)
			page_set_rmap_item(k, rmap_item_cached_page(k, rmap_item), NULL);
		page_uncache(k, p);
		rmap_item_set_cached_page(k, rmap_item, p);
		page_set_rmap_item(k, p, rmap_item);
		rmap_item->cached_key = (uint32_t)(page_key8(p) >> 32);
	}
	rmap_item->vma_gen = mm->vma_gen;
	return p;
}

/*
 * As unstable_tree_search_insert() does: look for a page with the same
 * bytes in the unstable tree, or insert the rmap_item where the search fell
 * off. The tree's pages are not write-protected, so a page that vanished
 * (or the page itself, reached again) ends the search without inserting,
 * and with merge_across_nodes 0 a match on another node counts as none.
 * The search_walk_*() calls only make it fast (walk_ahead.h).
 */
static struct rmap_item *unstable_tree_search_insert(struct ksm *k, struct rmap_item *rmap_item,
						     struct page *page, struct page **tree_pagep)
{
	uint32_t tree = tree_index(k, page, rmap_item_mm(k, rmap_item));
	struct rb_root *root = &k->root_unstable_tree[tree];
	struct rb_node **new = &root->rb_node, *parent = NULL;
	struct rmap_item *found = NULL;
	struct search_walk walk;

	search_walk_start(k, &walk, tree, page);
	while (*new) {
		struct rmap_item *tree_rmap_item = rb_entry(*new, struct rmap_item, node);
		search_walk_level(k, &walk);
		struct page *tree_page = get_mergeable_page(k, tree_rmap_item);
		if (!tree_page) {
			ksm_ev_unstable_abort(k);
			goto out;
		}
		if (tree_page == page)
			goto out;	/* don't substitute a KSM page for a forked page */
		int ret = search_walk_memcmp(k, &walk, page, tree_rmap_item, tree_page);
		parent = *new;
		if (G_UNLIKELY(ret == 0)) {
			if (k->knob[KNOB_MERGE_ACROSS_NODES] || tree_page->nid == page->nid) {
				*tree_pagep = tree_page;
				found = tree_rmap_item;
			}
			goto out;
		}
		new = search_walk_child(&walk, parent, ret);	/* rb_left if ret < 0, else rb_right */
	}
	search_walk_prefetch_uncle(&walk);
	search_walk_end(k, &walk);
	if (k->nr_classes > 1 && !k->selective)
		class_lost_check(k, page, tree);
	rmap_item->flags |= UNSTABLE_FLAG | (k->scan.seqnr & SEQNR_MASK);
	rmap_item->tree = tree;
	rb_link_node(&rmap_item->node, parent, new);
	rb_insert_color(&rmap_item->node, root);
	k->pages_unshared++;
	ksm_ev_unstable_insert(k);
	/* seen is the bytes inserted until the next visit: a gate set it this visit, or this does */
	rmap_item_set_seen(rmap_item, page->c);
	rmap_item->changed = false;
	return NULL;
out:
	search_walk_end(k, &walk);
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
	if (page_thp(k, page)) {
		thp_split(k, page_thp(k, page));	/* split_huge_page: a small page from here */
		ksm_ev_thp_split(k);
	}
	trace_ksm_merge_one_page(k);	/* write_protect_page */
	if (pte_get(mm, vpn) != page)
		return -1;	/* not mapped here now: a split gave it to the zero page */
	if (lru_batched(k, page)) {
		ksm_ev_merge_refused_lru(k);
		return -1;
	}
	ksm_ev_wrprotect_pte(k);
	if (!kpage) {
		page->dirty = false;	/* write-protected clean */
		g_assert(!page->folio);	/* split above: the word becomes the stable node's */
		page->ksm = true;
		page_set_stable_node(k, page, NULL);
		page->merged_at = k->full_scans_total;
		return 0;
	}
	if (kpage == KSM_ZERO_PTE) {
		ksm_ev_memcmp_long(k);
		if (!content_is_zero(page->c))
			return -1;
		ksm_ev_merge_zero(k, mm, page);
		pte_set(k, mm, vpn, KSM_ZERO_PTE);
		page_put_mapping(k, page);
		ksm_map_zero_page(k, mm);
		ksm_ev_replace_page(k);
		return 0;
	}
	if (memcmp_pages(k, page, kpage) != 0)
		return -1;
	page_mapcount_add(k, kpage, 1);
	pte_set(k, mm, vpn, kpage);
	page_put_mapping(k, page);
	ksm_ev_replace_page(k);
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
	if (!find_mergeable_vma(rmap_item_mm(k, rmap_item), rmap_item->vpn))
		return -1;
	int err = try_to_merge_one_page(k, rmap_item_mm(k, rmap_item), rmap_item->vpn, page, kpage);
	if (err)
		return err;
	remove_rmap_item_from_tree(k, rmap_item);
	return 0;
}

/*
 * As break_cow() does: a KSM page mapped once, at the rmap_item's address,
 * is unshared (a fresh copy; break_ksm_range in mm.c is break_ksm()).
 */
static void break_cow(struct ksm *k, struct rmap_item *rmap_item)
{
	break_ksm_range(k, rmap_item_mm(k, rmap_item), rmap_item->vpn, rmap_item->vpn + 1);
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
	if (page_thp(k, page) && page_thp(k, page) == page_thp(k, tree_page))
		return NULL;
	if (try_to_merge_with_ksm_page(k, rmap_item, page, NULL))
		return NULL;
	if (try_to_merge_with_ksm_page(k, tree_rmap_item, tree_page, page)) {
		break_cow(k, rmap_item);
		return NULL;
	}
	return page;
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
		zero_match = rmap_item_oldchecksum(k, rmap_item) == k->zero_checksum;
	else if (k->detector == KSM_DETECT_PARTIAL)
		zero_match = rmap_item_oldchecksum(k, rmap_item) == partial_zero_checksum(k, rmap_item);
	else
		zero_match = content_is_zero(page->c);
	if (!k->knob[KNOB_USE_ZERO_PAGES] || !zero_match)
		return -1;
	if (!find_mergeable_vma(rmap_item_mm(k, rmap_item), rmap_item->vpn))
		return 0;
	return try_to_merge_one_page(k, rmap_item_mm(k, rmap_item), rmap_item->vpn, page, KSM_ZERO_PTE);
}

/*
 * The checksum gate (a page whose checksum moved since the last visit is
 * volatile: record the new one and wait), then the zero page: true when
 * either ends the visit. Under a policy other than the kernel's, its
 * detector stands in for the checksum (policy_gate.c); gate_truth()
 * judges either by the bytes.
 */
static bool gate_ends_visit(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	if (k->hash_fn) {
		/* The same bytes as at the last visit give the same checksum: counted, not recomputed. */
		uint64_t old = rmap_item_oldchecksum(k, rmap_item);
		uint64_t checksum = rmap_item->seen && rmap_item->seen == page->c ?
					    counted_checksum(k, old) : calc_checksum(k, page);
		bool changed = gate_truth(k, rmap_item, page, checksum == old);
		/* A changed checksum over unchanged bytes cannot happen. */
		g_assert(changed || checksum == old);
		if (old != checksum) {
			rmap_item_set_oldchecksum(k, rmap_item, checksum);
			return true;
		}
	} else if (k->detector != KSM_DETECT_CHECKSUM && policy_gate_volatile(k, page, rmap_item)) {
		return true;
	}
	return !try_to_merge_with_zero_page(k, rmap_item, page);
}

/*
 * As cmp_and_merge_page() does since 6.11: a KSM page whose rmap_item is
 * listed under its node is done. Any other page leaves the tree it was in
 * and meets the gate (gate_ends_visit). Then the stable tree, where a
 * match merges into the KSM page, and the unstable tree, where a match
 * makes a new KSM page of the two. Under --kernel 6.1 the gate comes after
 * the stable tree, for every page it does not merge (the order before
 * "mm/ksm: don't waste time searching stable tree for fast changing page").
 */
static void __cmp_and_merge_page(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	struct stable_node *stable_node = page->ksm ? page_stable_node(k, page) : NULL;
	const struct page *last = k->revisit_last;

	k->revisit_last = NULL;
	if (stable_node) {
		if ((rmap_item->flags & STABLE_FLAG) && rmap_item->head == stable_node) {
			/*
			 * Measured live: such a visit costs more than a plain
			 * one when its KSM page differs from the last visit's
			 * (its struct page and stable node from memory, the
			 * folio reference an atomic on a cold line), not when
			 * runs of pages share one KSM page (a chain's dups).
			 */
			if (page != last)
				ksm_ev_revisit(k);
			k->revisit_last = page;
			return;
		}
	} else {
		if ((rmap_item->flags & UNSTABLE_FLAG) && rmap_item->seen &&
		    !content_equal(rmap_item->seen, page->c))
			ksm_ev_unstable_changed(k);
		remove_rmap_item_from_tree(k, rmap_item);
		if (!ksm_linux_6_1(k) && gate_ends_visit(k, page, rmap_item))
			return;
	}

	struct page *kpage = stable_tree_search(k, page, rmap_item_mm(k, rmap_item));
	if (kpage == page && (rmap_item->flags & STABLE_FLAG) && rmap_item->head == stable_node)
		return;

	remove_rmap_item_from_tree(k, rmap_item);

	if (kpage) {
		if (!try_to_merge_with_ksm_page(k, rmap_item, page, kpage)) {
			/* without max_page_sharing_bypass: it only spares a KSM fork a WARN_ON_ONCE */
			stable_tree_append(k, rmap_item, page_stable_node(k, kpage));
			if (kpage != page)
				trace_ksm_merge_with_ksm_page(k, rmap_item, page);	/* page freed */
		}
		return;
	}
	if (ksm_linux_6_1(k) && gate_ends_visit(k, page, rmap_item))
		return;

	struct page *tree_page = NULL;
	struct rmap_item *tree_rmap_item =
		unstable_tree_search_insert(k, rmap_item, page, &tree_page);
	if (tree_rmap_item) {
		/* before the attempt: a failed one may have freed page (break_cow) */
		bool same_thp = page_thp(k, page) && page_thp(k, page) == page_thp(k, tree_page);
		kpage = try_to_merge_two_pages(k, rmap_item, page, tree_rmap_item, tree_page);
		if (kpage) {
			struct stable_node *node = stable_tree_insert(k, kpage, rmap_item_mm(k, rmap_item));
			stable_tree_append(k, tree_rmap_item, node);
			stable_tree_append(k, rmap_item, node);
			ksm_ev_merge_two(k, tree_rmap_item, tree_page, rmap_item, page);
		} else if (same_thp) {
			/* both in one THP: split it now, merge on a later visit */
			thp_split(k, page_thp(k, page));
			ksm_ev_thp_split(k);
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
	if (!page_thp(k, page)) {
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
	ksm_ev_skip(k);
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
	double cpu_now = ksm_cpu_ns(k);
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
	trace_ksm_advisor(k, scan_time, pages, cpu_percent);
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
		/* (the kernel prunes migrate_nodes here: no migration is modelled) */
		advisor_start_scan(k);
		trace_ksm_start_scan(k);
		for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
			k->root_unstable_tree[i].rb_node = NULL;
		walks_ahead_forget(k);
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
	trace_ksm_stop_scan(k);
	return NULL;
}

/* As ksm_do_scan() does: one batch of up to pages_to_scan visits. */
static void ksm_do_scan(struct ksm *k, uint64_t scan_npages)
{
	while (scan_npages--) {
		struct page *page;
		struct rmap_item *rmap_item = scan_get_next_rmap_item(k, &page);
		if (!rmap_item)
			return;
		ksm_ev_visit(k);
		walks_ahead_plan(k);	/* loads only, for speed (walk_ahead.h) */
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
	k->revisit_last = NULL;	/* records ran since: it may be gone */
	if (ksmd_should_run(k))
		ksm_do_scan(k, k->knob[KNOB_PAGES_TO_SCAN]);
	uint64_t cost_us = (uint64_t)(ksm_batch_end(k) / 1000);
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
	if (!node->kpfn) {
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
	for (uint32_t tree = 0; tree < ksm_nr_trees(k); tree++) {
		struct rb_root *root = &k->root_stable_tree[tree];
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
	walks_ahead_forget(k);
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
	if (k->knob[KNOB_ADVISOR_MODE] != ADVISOR_NONE)
		memset(&k->advisor, 0, sizeof(k->advisor));
	if (!k->opt.pinned[KNOB_PAGES_TO_SCAN])
		k->knob[KNOB_PAGES_TO_SCAN] = knob_advisor_pages_to_scan(k->knob);
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
	if (!ksm_kernel_refuse_knob(k, knob, error))
		return false;
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
		if (knob_pages_to_scan_refused(k->knob)) {
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

uint64_t ksm_knob(const struct ksm *k, enum ksm_knob knob)
{
	return k->knob[knob];
}
