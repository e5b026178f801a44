// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd: the scan cursor, cmp_and_merge_page, the stable and unstable trees
 * with stable-node chains, smart scan, the advisor and the sysfs knobs, in
 * the order and with the bookkeeping of Linux 6.18's mm/ksm.c. The
 * reference is ../shared/reference/ksm-model.md; section numbers below
 * point into it.
 */
#include <string.h>
#include "sim/ksm_internal.h"

static void remove_rmap_item_from_tree(struct ksm *k, struct rmap_item *item);

/* ---- small helpers ---- */

static inline uint32_t tree_nid(const struct ksm *k, uint32_t nid)
{
	return k->knob[KNOB_MERGE_ACROSS_NODES] ? 0 : nid;
}

/* memcmp_pages, with its cost counted. */
static int memcmp_pages(struct ksm *k, const struct page *pa, const struct page *pb)
{
	const content *a = pa->c, *b = pb->c;
	k->truth.memcmp_calls++;
	uint64_t ka = pa->key8, kb = pb->key8;
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

static uint64_t calc_checksum(struct ksm *k, struct page *p)
{
	k->truth.checksums++;
	k->batch_cpu_ns += k->opt.costs.checksum_ns;
	return content_checksum(p->c, k->hash_fn, NULL);
}

/* ---- mm slots (§2.1) ---- */

static bool slot_list_empty(const struct ksm *k)
{
	return k->mm_head.slot_next == &k->mm_head;
}

static void slot_insert_before(struct mm *pos, struct mm *mm)
{
	mm->slot_prev = pos->slot_prev;
	mm->slot_next = pos;
	pos->slot_prev->slot_next = mm;
	pos->slot_prev = mm;
}

static void slot_del(struct mm *mm)
{
	mm->slot_prev->slot_next = mm->slot_next;
	mm->slot_next->slot_prev = mm->slot_prev;
	mm->slot_prev = mm->slot_next = NULL;
}

/* __ksm_enter: behind the cursor, or at the tail while unmerging. */
void ksm_enter(struct ksm *k, struct mm *mm)
{
	bool was_empty = slot_list_empty(k);
	if (k->knob[KNOB_RUN] & 2)
		slot_insert_before(&k->mm_head, mm);
	else
		slot_insert_before(k->scan.mm_slot, mm);
	mm->registered = true;
	(void)was_empty;	/* the wake-up is ksmd_wake_if_needed's job */
}

/* __ksm_exit: an mm with items moves right after the cursor; ksmd frees it. */
void ksm_exit(struct ksm *k, struct mm *mm)
{
	if (!mm->registered || k->scan.mm_slot == mm)
		return;
	if (!mm->rmap_list) {
		slot_del(mm);
		mm->registered = false;
		return;
	}
	slot_del(mm);
	struct mm *cur = k->scan.mm_slot;
	mm->slot_prev = cur;
	mm->slot_next = cur->slot_next;
	cur->slot_next->slot_prev = mm;
	cur->slot_next = mm;
}

/* ---- stable nodes (§6) ---- */

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
	dup->dnext = chain->dups;
	if (chain->dups)
		chain->dups->dpprev = &dup->dnext;
	chain->dups = dup;
	dup->dpprev = &chain->dups;
	k->stable_node_dups++;
}

static void __stable_node_dup_del(struct ksm *k, struct stable_node *dup)
{
	*dup->dpprev = dup->dnext;
	if (dup->dnext)
		dup->dnext->dpprev = dup->dpprev;
	dup->dnext = NULL;
	dup->dpprev = NULL;
	k->stable_node_dups--;
}

static void stable_node_dup_del(struct ksm *k, struct stable_node *dup)
{
	if (dup->is_dup)
		__stable_node_dup_del(k, dup);
	else
		rb_erase(&dup->node, &k->root_stable_tree[tree_nid(k, dup->nid)]);
}

static void free_stable_node_chain(struct ksm *k, struct stable_node *chain, struct rb_root *root)
{
	rb_erase(&chain->node, root);
	free_stable_node(chain);
	k->stable_node_chains--;
}

/*
 * The node's KSM page is gone: every item still listed leaves it at once
 * (§6.5), then the node leaves the tree or its chain.
 */
static void remove_node_from_stable_tree(struct ksm *k, struct stable_node *node)
{
	for (struct rmap_item *item = node->items; item; item = item->hnext) {
		if (item->hnext)
			k->pages_sharing--;
		else
			k->pages_shared--;
		item->mm->ksm_merging_pages--;
		item->flags &= ~(STABLE_FLAG | UNSTABLE_FLAG | SEQNR_MASK);
		item->head = NULL;
	}
	stable_node_dup_del(k, node);
	free_stable_node(node);
}

/* ksm_get_folio: the node's page, or NULL after removing a stale node. */
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
	k->stable_node_chains++;
	rb_replace_node(&dup->node, &chain->node, root);
	stable_node_chain_add_dup(k, dup, chain);
	return chain;
}

/* Pick a dup of a chain (§6.2); may prune stale dups and collapse the chain. */
static struct page *stable_node_dup(struct ksm *k, struct stable_node **dup_out,
				    struct stable_node **node_io, struct rb_root *root, bool prune)
{
	struct stable_node *chain = *node_io, *found = NULL, *dup, *next;
	struct page *tree_page = NULL;
	int found_len = 0;
	uint64_t now = jiffies_of(k->now);

	if (!prune ||
	    now < chain->chain_prune_time +
			  msecs_to_jiffies(k->knob[KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS]))
		prune = false;
	else
		chain->chain_prune_time = now;

	for (dup = chain->dups; dup; dup = next) {
		next = dup->dnext;
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
		if (chain->dups == found && !found->dnext) {
			/* One dup left: it takes the chain's place in the tree. */
			rb_replace_node(&chain->node, &found->node, root);
			found->is_dup = false;
			found->chain = NULL;
			found->dpprev = NULL;
			free_stable_node(chain);
			k->stable_node_chains--;
			k->stable_node_dups--;
			*node_io = found;
		} else if (chain->dups != found && __is_page_sharing_candidate(k, found, 1)) {
			*found->dpprev = found->dnext;
			if (found->dnext)
				found->dnext->dpprev = found->dpprev;
			found->dnext = chain->dups;
			chain->dups->dpprev = &found->dnext;
			chain->dups = found;
			found->dpprev = &chain->dups;
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

/* §6.1. The page is not KSM here: forked KSM pages never reach the walk. */
static struct page *stable_tree_search(struct ksm *k, struct page *page)
{
	if (page->ksm && page->node)
		return page;	/* "KSM page forked", or an item not yet tracking it */

	struct rb_root *root = &k->root_stable_tree[tree_nid(k, page->nid)];
again:;
	struct rb_node **new = &root->node;
	while (*new) {
		struct stable_node *node = rb_entry(*new, struct stable_node, node), *dup;
		struct page *tree_page = walk_node_page(k, &dup, &node, root, true);
		if (!tree_page)
			goto again;
		int ret = memcmp_pages(k, page, tree_page);
		struct rb_node *parent = *new;
		if (ret < 0) {
			new = &parent->left;
		} else if (ret > 0) {
			new = &parent->right;
		} else {
			if (!is_page_sharing_candidate(k, dup))
				return NULL;
			return tree_page;
		}
	}
	return NULL;
}

/* §6.3: file the new KSM page; equal content makes (or extends) a chain. */
static struct stable_node *stable_tree_insert(struct ksm *k, struct page *kpage)
{
	uint32_t nid = kpage->nid;
	struct rb_root *root = &k->root_stable_tree[tree_nid(k, nid)];
	struct rb_node **new, *parent;
	struct stable_node *node = NULL, *dup;
	bool need_chain = false;
again:
	parent = NULL;
	new = &root->node;
	while (*new) {
		node = rb_entry(*new, struct stable_node, node);
		struct page *tree_page = walk_node_page(k, &dup, &node, root, false);
		if (!tree_page)
			goto again;
		int ret = memcmp_pages(k, kpage, tree_page);
		parent = *new;
		if (ret < 0) {
			new = &parent->left;
		} else if (ret > 0) {
			new = &parent->right;
		} else {
			need_chain = true;
			break;
		}
	}
	struct stable_node *sdup = alloc_stable_node();
	sdup->page = kpage;
	sdup->nid = nid;
	if (!need_chain) {
		rb_link_node(&sdup->node, parent, new);
		rb_insert_color(&sdup->node, root);
	} else {
		if (!is_stable_node_chain(node))
			node = alloc_stable_node_chain(k, node, root);
		stable_node_chain_add_dup(k, sdup, node);
	}
	kpage->node = sdup;
	return sdup;
}

/* §6.4 */
static void stable_tree_append(struct ksm *k, struct rmap_item *item, struct stable_node *node)
{
	node->rmap_hlist_len++;
	item->head = node;
	item->flags |= STABLE_FLAG;
	item->hnext = node->items;
	if (node->items)
		node->items->hpprev = &item->hnext;
	node->items = item;
	item->hpprev = &node->items;
	if (item->hnext)
		k->pages_sharing++;
	else
		k->pages_shared++;
	item->mm->ksm_merging_pages++;
}

/* ---- items (§4) ---- */

static void remove_rmap_item_from_tree(struct ksm *k, struct rmap_item *item)
{
	if (item->flags & STABLE_FLAG) {
		struct stable_node *node = item->head;
		if (!ksm_get_folio(k, node))
			return;
		*item->hpprev = item->hnext;
		if (item->hnext)
			item->hnext->hpprev = item->hpprev;
		item->hnext = NULL;
		item->hpprev = NULL;
		if (node->items)
			k->pages_sharing--;
		else
			k->pages_shared--;
		item->mm->ksm_merging_pages--;
		node->rmap_hlist_len--;
		item->head = NULL;
		item->flags = 0;
	} else if (item->flags & UNSTABLE_FLAG) {
		uint8_t age = (uint8_t)(k->scan.seqnr - (item->flags & SEQNR_MASK));
		g_assert(age <= 1);
		if (!age)
			rb_erase(&item->node, &k->root_unstable_tree[item->nid]);
		k->pages_unshared--;
		item->flags = 0;
	}
}

static void free_rmap_item(struct ksm *k, struct rmap_item *item)
{
	k->rmap_items--;
	item->mm->ksm_rmap_items--;
	if (item->cached_page)
		item->cached_page->item = NULL;
	if (item->seen)
		content_unref(item->seen);
	if (item->inserted)
		content_unref(item->inserted);
	slab_free(&k->item_slab, item);
}

static void remove_trailing_rmap_items(struct ksm *k, struct rmap_item **link)
{
	while (*link) {
		struct rmap_item *item = *link;
		*link = item->rmap_list;
		remove_rmap_item_from_tree(k, item);
		free_rmap_item(k, item);
	}
}

static struct rmap_item *get_next_rmap_item(struct ksm *k, struct mm *mm,
					    struct rmap_item **link, uint64_t vpn)
{
	while (*link) {
		struct rmap_item *item = *link;
		if (item->vpn == vpn)
			return item;
		if (item->vpn > vpn)
			break;
		*link = item->rmap_list;
		remove_rmap_item_from_tree(k, item);
		free_rmap_item(k, item);
	}
	struct rmap_item *item = slab_alloc0(&k->item_slab);
	k->rmap_items++;
	mm->ksm_rmap_items++;
	item->mm = mm;
	item->vpn = vpn;
	item->rmap_list = *link;
	*link = item;
	return item;
}

/* ---- unstable tree (§7) ---- */

/* The page at the item's address if ksmd may still merge it, else NULL. */
static struct page *get_mergeable_page(struct ksm *k, struct rmap_item *item)
{
	struct mm *mm = item->mm;
	if (mm->exiting)
		return NULL;
	/* The page keeps the cache honest; only VMA changes are checked here. */
	if (item->cached_page && item->vma_gen == mm->vma_gen)
		return item->cached_page;
	struct vma *v = find_vma(mm, item->vpn);
	if (!v || !v->mergeable)
		return NULL;
	struct page *p = pte_get(mm, item->vpn);
	if (!p || p == KSM_ZERO_PTE)
		return NULL;
	if (p->mapcount == 1 && item->cached_page != p) {
		if (item->cached_page)
			item->cached_page->item = NULL;
		page_uncache(p);
		item->cached_page = p;
		p->item = item;
		item->cached_key = p->key8;
	}
	item->vma_gen = mm->vma_gen;
	return p;
}

static struct rmap_item *unstable_tree_search_insert(struct ksm *k, struct rmap_item *item,
						     struct page *page, struct page **tree_pagep)
{
	uint32_t nid = tree_nid(k, page->nid);
	struct rb_root *root = &k->root_unstable_tree[nid];
	struct rb_node **new = &root->node, *parent = NULL;
	bool corrupt = false;

	while (*new) {
		struct rmap_item *tree_item = rb_entry(*new, struct rmap_item, node);
		/* The walk is a chain of cache misses: start both children early. */
		struct rb_node *l = (*new)->left, *r = (*new)->right;
		if (l) {
			__builtin_prefetch(l->left);
			__builtin_prefetch(l->right);
		}
		if (r) {
			__builtin_prefetch(r->left);
			__builtin_prefetch(r->right);
		}
		k->batch_cpu_ns += k->opt.costs.node_ns;
		struct page *tree_page = get_mergeable_page(k, tree_item);
		if (!tree_page) {
			k->truth.unstable_aborts++;
			return NULL;
		}
		if (tree_page == page)
			return NULL;
		bool changed;
		int ret;
		if (tree_item->cached_page == tree_page) {
			/* Fast path: the key and the change flag live in the item. */
			changed = tree_item->changed;
			if (tree_item->cached_key != page->key8) {
				k->truth.memcmp_calls++;
				k->truth.memcmp_bytes += 1 + __builtin_clzll(tree_item->cached_key ^ page->key8) / 8;
				k->batch_cpu_ns += k->opt.costs.node_ns;
				ret = page->key8 < tree_item->cached_key ? -1 : 1;
			} else {
				ret = memcmp_pages(k, page, tree_page);
			}
		} else {
			changed = tree_item->inserted && !content_equal(tree_item->inserted, tree_page->c);
			ret = memcmp_pages(k, page, tree_page);
		}
		if (!corrupt && changed) {
			corrupt = true;
			k->truth.unstable_corrupt_walks++;
		}
		parent = *new;
		if (ret < 0) {
			new = &parent->left;
		} else if (ret > 0) {
			new = &parent->right;
		} else if (!k->knob[KNOB_MERGE_ACROSS_NODES] && tree_page->nid != page->nid) {
			return NULL;
		} else {
			*tree_pagep = tree_page;
			return tree_item;
		}
	}
	item->flags |= UNSTABLE_FLAG | (k->scan.seqnr & SEQNR_MASK);
	item->nid = nid;
	rb_link_node(&item->node, parent, new);
	rb_insert_color(&item->node, root);
	k->pages_unshared++;
	k->truth.unstable_inserts++;
	if (item->inserted)
		content_unref(item->inserted);
	item->inserted = content_ref(page->c);
	item->changed = false;
	return NULL;
}

/* ---- merging (§5) ---- */

/*
 * write_protect_page + pages_identical + replace_page. write_protect_page
 * fails while the page waits in an lru_add batch (its refcount is raised).
 */
static int try_to_merge_one_page(struct ksm *k, struct mm *mm, uint64_t vpn, struct page *page,
				 struct page *kpage)
{
	if (page == kpage)
		return 0;
	k->truth.mmu_invalidations++;	/* write_protect_page */
	if (lru_batched(k, page)) {
		k->truth.merge_refused_lru++;
		return -1;
	}
	k->truth.mmu_change_pte++;
	if (!kpage) {
		page->ksm = true;
		page->node = NULL;
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

static bool find_mergeable_vma(struct mm *mm, uint64_t vpn)
{
	if (mm->exiting)
		return false;
	struct vma *v = find_vma(mm, vpn);
	return v && v->mergeable;
}

static int try_to_merge_with_ksm_page(struct ksm *k, struct rmap_item *item, struct page *page,
				      struct page *kpage)
{
	if (!find_mergeable_vma(item->mm, item->vpn))
		return -1;
	int err = try_to_merge_one_page(k, item->mm, item->vpn, page, kpage);
	if (err)
		return err;
	remove_rmap_item_from_tree(k, item);
	return 0;
}

static struct page *try_to_merge_two_pages(struct ksm *k, struct rmap_item *item, struct page *page,
					   struct rmap_item *tree_item, struct page *tree_page)
{
	if (try_to_merge_with_ksm_page(k, item, page, NULL))
		return NULL;
	if (try_to_merge_with_ksm_page(k, tree_item, tree_page, page)) {
		/* a KSM page mapped once: break_cow unshares it (a fresh copy) */
		break_ksm_range(k, item->mm, item->vpn, item->vpn + 1);
		return NULL;
	}
	return page;
}

static int try_to_merge_with_zero_page(struct ksm *k, struct rmap_item *item, struct page *page)
{
	bool zero_match = k->hash_fn ? item->oldchecksum == k->zero_checksum
				     : content_is_zero(page->c);
	if (!k->knob[KNOB_USE_ZERO_PAGES] || !zero_match)
		return -1;
	if (!find_mergeable_vma(item->mm, item->vpn))
		return 0;
	return try_to_merge_one_page(k, item->mm, item->vpn, page, KSM_ZERO_PTE);
}

static void cmp_and_merge_page(struct ksm *k, struct page *page, struct rmap_item *item)
{
	struct stable_node *stable_node = page->ksm ? page->node : NULL;

	if (stable_node) {
		if ((item->flags & STABLE_FLAG) && item->head == stable_node)
			return;
	} else {
		if ((item->flags & UNSTABLE_FLAG) && item->inserted &&
		    !content_equal(item->inserted, page->c))
			k->truth.unstable_changed_after_insert++;
		remove_rmap_item_from_tree(k, item);

		if (k->hash_fn) {
			uint64_t checksum = calc_checksum(k, page);
			if (item->seen) {
				k->truth.gate_checks++;
				bool changed = !content_equal(item->seen, page->c);
				if (changed) {
					k->truth.gate_changed++;
					if (checksum == item->oldchecksum)
						k->truth.false_positives++;
				}
				/* A changed checksum over unchanged bytes cannot happen. */
				g_assert(changed || checksum == item->oldchecksum);
			}
			if (item->seen != page->c) {
				if (item->seen)
					content_unref(item->seen);
				item->seen = content_ref(page->c);
			}
			if (item->oldchecksum != checksum) {
				item->oldchecksum = checksum;
				return;
			}
		}
		if (!try_to_merge_with_zero_page(k, item, page))
			return;
	}

	struct page *kpage = stable_tree_search(k, page);
	if (kpage == page && (item->flags & STABLE_FLAG) && item->head == stable_node)
		return;

	remove_rmap_item_from_tree(k, item);

	if (kpage) {
		if (!try_to_merge_with_ksm_page(k, item, page, kpage)) {
			stable_tree_append(k, item, kpage->node);
			if (kpage != page)
				k->truth.merges_stable++;
		}
		return;
	}

	struct page *tree_page = NULL;
	struct rmap_item *tree_item = unstable_tree_search_insert(k, item, page, &tree_page);
	if (tree_item) {
		kpage = try_to_merge_two_pages(k, item, page, tree_item, tree_page);
		if (kpage) {
			struct stable_node *node = stable_tree_insert(k, kpage);
			stable_tree_append(k, tree_item, node);
			stable_tree_append(k, item, node);
			k->truth.merges_two++;
		}
	}
}

/* ---- smart scan (§10) ---- */

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

static bool should_skip_rmap_item(struct ksm *k, struct page *page, struct rmap_item *item)
{
	if (!k->knob[KNOB_SMART_SCAN])
		return false;
	if (page->ksm)
		return false;
	uint8_t age = item->age;
	if (age != 255)
		item->age++;
	if (age < 3)
		return false;
	if (!item->remaining_skips) {
		item->remaining_skips = skip_age(age);
		return false;
	}
	k->pages_skipped++;
	item->remaining_skips--;
	remove_rmap_item_from_tree(k, item);
	return true;
}

/* ---- advisor (§11) ---- */

static void advisor_start_scan(struct ksm *k)
{
	if (k->knob[KNOB_ADVISOR_MODE] == ADVISOR_SCAN_TIME)
		k->advisor.start_scan_us = k->now;
}

static void advisor_stop_scan(struct ksm *k)
{
	if (k->knob[KNOB_ADVISOR_MODE] != ADVISOR_SCAN_TIME)
		return;
	struct advisor_ctx *ctx = &k->advisor;
	uint64_t scan_time = (k->now - ctx->start_scan_us) / 1000 / 1000;
	if (!scan_time)
		scan_time = 1;
	double cpu_now = k->truth.cpu_ns + k->batch_cpu_ns;
	uint64_t cpu_ms = (uint64_t)((cpu_now - ctx->cpu_ns) / 1e6);
	uint64_t cpu_percent = cpu_ms * 100 / (scan_time * 1000);
	if (!cpu_percent)
		cpu_percent = 1;
	uint64_t last = ctx->scan_time ? ctx->scan_time : scan_time;
	uint64_t factor = k->knob[KNOB_ADVISOR_TARGET_SCAN_TIME] * 100 / scan_time;
	if (!factor)
		factor = 1;
	uint64_t change = scan_time * 100 / last;
	if (!change)
		change = 1;
	change = (70 * ctx->change + 30 * change) / 100;
	uint64_t pts = k->knob[KNOB_PAGES_TO_SCAN];
	uint64_t pages = pts * 100 / factor;
	pages = pages * change / 100;
	uint64_t per_pct = pts / cpu_percent;
	if (!per_pct)
		per_pct = 1;
	pages = MIN(pages, per_pct * k->knob[KNOB_ADVISOR_MAX_CPU]);
	pages = MAX(pages, per_pct * 10);
	pages = MIN(pages, k->knob[KNOB_ADVISOR_MAX_PAGES_TO_SCAN]);
	ctx->change = change;
	ctx->scan_time = scan_time;
	ctx->cpu_ns = cpu_now;
	k->knob[KNOB_PAGES_TO_SCAN] = pages;
}

/* ---- the cursor (§4) ---- */

static struct rmap_item *scan_get_next_rmap_item(struct ksm *k, struct page **pagep)
{
	struct ksm_scan *s = &k->scan;
	struct mm *mm;

	if (slot_list_empty(k))
		return NULL;
	mm = s->mm_slot;
	if (mm == &k->mm_head) {
		/* lru_add_drain_all: pages faulted before the pass can merge in it */
		lru_add_drain(k);
		advisor_start_scan(k);
		for (uint32_t i = 0; i < k->nr_roots; i++)
			k->root_unstable_tree[i].node = NULL;
		mm = s->mm_slot = mm->slot_next;
		if (mm == &k->mm_head)
			return NULL;
		goto next_mm;
	}
	if (0) {
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
			struct rmap_item *item = get_next_rmap_item(k, mm, s->rmap_list, vpn);
			s->rmap_list = &item->rmap_list;
			if (should_skip_rmap_item(k, page, item)) {
				s->address++;
				continue;
			}
			s->address++;
			*pagep = page;
			return item;
		}
	}

	if (mm->exiting) {
no_vmas:
		s->address = 0;
		s->saw_mergeable = false;
		s->rmap_list = &mm->rmap_list;
	}
	remove_trailing_rmap_items(k, s->rmap_list);

	s->mm_slot = mm->slot_next;
	if (!s->saw_mergeable) {
		/* No VM_MERGEABLE area left (or exiting): unregister the mm. */
		slot_del(mm);
		mm->registered = false;
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

static void ksm_do_scan(struct ksm *k, uint64_t scan_npages)
{
	while (scan_npages--) {
		struct page *page;
		struct rmap_item *item = scan_get_next_rmap_item(k, &page);
		if (!item)
			return;
		k->batch_cpu_ns += k->opt.costs.visit_ns;
		cmp_and_merge_page(k, page, item);
		k->pages_scanned++;
	}
}

/* ---- ksmd scheduling (§3) ---- */

static bool ksmd_should_run(const struct ksm *k)
{
	return k->knob[KNOB_RUN] == 1 && !slot_list_empty(k);
}

void ksmd_wake_if_needed(struct ksm *k)
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

/* ---- run=2 (§9) ---- */

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
	struct stable_node *dup, *next;
	for (dup = chain->dups; dup; dup = next) {
		next = dup->dnext;
		if (!remove_stable_node(k, dup))
			return false;
	}
	free_stable_node_chain(k, chain, root);
	return true;
}

/*
 * remove_all_stable_nodes: like the kernel, take the root of each tree until
 * it is empty, and give up on that tree at the first busy node. True when
 * every tree emptied.
 */
static bool remove_all_stable_nodes(struct ksm *k)
{
	bool ok = true;
	for (uint32_t nid = 0; nid < k->nr_roots; nid++) {
		struct rb_root *root = &k->root_stable_tree[nid];
		while (root->node) {
			struct stable_node *node = rb_entry(root->node, struct stable_node, node);
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

static void unmerge_and_remove_all_rmap_items(struct ksm *k)
{
	struct ksm_scan *s = &k->scan;
	s->mm_slot = k->mm_head.slot_next;
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
		s->mm_slot = mm->slot_next;
		if (mm->exiting) {
			slot_del(mm);
			mm->registered = false;
			mm_destroy(k, mm);
		}
	}
	remove_all_stable_nodes(k);
	s->seqnr = 0;
	/*
	 * Every item is gone; the kernel leaves its unstable roots pointing at
	 * them until the next pass resets them. Resetting now is the same,
	 * and keeps the invariant checker off freed memory.
	 */
	for (uint32_t i = 0; i < k->nr_roots; i++)
		k->root_unstable_tree[i].node = NULL;
}

/* ---- knobs (§12) ---- */

static bool set_knob(struct ksm *k, enum ksm_knob knob, uint64_t value, GError **error)
{
	uint64_t old = k->knob[knob];
	if (k->opt.pinned[knob])
		return true;
	switch (knob) {
	case KNOB_RUN:
		if (old != value) {
			k->knob[KNOB_RUN] = value;
			if (value == 2)
				unmerge_and_remove_all_rmap_items(k);
		}
		break;
	case KNOB_MAX_PAGE_SHARING:
	case KNOB_MERGE_ACROSS_NODES:
		if (old != value) {
			if (k->pages_shared || !remove_all_stable_nodes(k)) {
				g_set_error(error, KSM_ERROR, 0,
					    "the kernel refuses %s %" G_GUINT64_FORMAT
					    " (EBUSY): pages are merged; set run 2 first",
					    knob_names[knob], value);
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
			uint64_t pts = value == ADVISOR_NONE ? 100 : k->knob[KNOB_ADVISOR_MIN_PAGES_TO_SCAN];
			if (value != ADVISOR_NONE)
				memset(&k->advisor, 0, sizeof(k->advisor));
			if (!k->opt.pinned[KNOB_PAGES_TO_SCAN])
				k->knob[KNOB_PAGES_TO_SCAN] = pts;
		}
		break;
	case KNOB_PAGES_TO_SCAN:
		if (k->knob[KNOB_ADVISOR_MODE] != ADVISOR_NONE) {
			g_set_error(error, KSM_ERROR, 0,
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

struct ksm *ksm_new(const struct ksm_options *opt)
{
	struct ksm *k = g_new0(struct ksm, 1);
	k->opt = *opt;
	if (!k->opt.hash)
		k->opt.hash = hash_lookup(HASH_DEFAULT);
	k->hash_fn = k->opt.hash ? (content_hash_fn)k->opt.hash->fn : NULL;
	if (k->hash_fn) {
		content *z = content_zero();
		k->zero_checksum = content_checksum(z, k->hash_fn, NULL);
		content_unref(z);
	}
	memcpy(k->knob, knob_defaults, sizeof(k->knob));
	for (int i = 0; i < KNOB_NR; i++)
		if (k->opt.pinned[i])
			k->knob[i] = k->opt.pinned_value[i];
	k->mm_by_name = g_hash_table_new(g_str_hash, g_str_equal);
	k->mm_head.slot_next = k->mm_head.slot_prev = &k->mm_head;
	k->scan.mm_slot = &k->mm_head;
	k->nr_roots = 1;
	k->root_stable_tree = g_new0(struct rb_root, 1);
	k->root_unstable_tree = g_new0(struct rb_root, 1);
	k->ksmd = KSMD_WAITING;
	k->lru_gen = 1;		/* 0 is no page's batch */
	slab_init(&k->item_slab, sizeof(struct rmap_item), 64);
	slab_init(&k->page_slab, sizeof(struct page), 16);
	return k;
}

static void free_tree_nodes(struct rb_node *n)
{
	if (!n)
		return;
	free_tree_nodes(n->left);
	free_tree_nodes(n->right);
	struct stable_node *node = rb_entry(n, struct stable_node, node);
	if (is_stable_node_chain(node)) {
		struct stable_node *d, *next;
		for (d = node->dups; d; d = next) {
			next = d->dnext;
			g_free(d);
		}
	}
	g_free(node);
}

void ksm_free(struct ksm *k)
{
	if (!k)
		return;
	/* Teardown without bookkeeping: items, then pages, then nodes. */
	GPtrArray *all = g_ptr_array_new();
	for (struct mm *mm = k->mm_head.slot_next; mm != &k->mm_head; mm = mm->slot_next)
		g_ptr_array_add(all, mm);
	GHashTableIter it;
	gpointer key, val;
	g_hash_table_iter_init(&it, k->mm_by_name);
	while (g_hash_table_iter_next(&it, &key, &val))
		if (!((struct mm *)val)->registered)
			g_ptr_array_add(all, val);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		struct rmap_item *item, *next;
		for (item = mm->rmap_list; item; item = next) {
			next = item->rmap_list;
			free_rmap_item(k, item);
		}
		mm->rmap_list = NULL;
		mm_zap_all(k, mm);
		mm_destroy(k, mm);
	}
	g_ptr_array_free(all, TRUE);
	for (uint32_t i = 0; i < k->nr_roots; i++)
		free_tree_nodes(k->root_stable_tree[i].node);
	g_free(k->root_stable_tree);
	g_free(k->root_unstable_tree);
	g_hash_table_destroy(k->mm_by_name);
	slab_destroy(&k->item_slab);
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
	c->general_profit = (int64_t)(k->pages_sharing + k->zero_pages) * 4096 -
			    (int64_t)k->rmap_items * 64;
	c->cow_ksm = k->cow_ksm;
	c->rmap_items = k->rmap_items;
	c->pages_to_scan = k->knob[KNOB_PAGES_TO_SCAN];
}

void ksm_truth(const struct ksm *k, struct ksm_truth *t)
{
	*t = k->truth;
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
	GHashTableIter it;
	gpointer key, val;
	g_hash_table_iter_init(&it, k->mm_by_name);
	while (g_hash_table_iter_next(&it, &key, &val)) {
		struct mm *mm = val;
		struct ksm_mm_stat st = {
			.name = mm->name,
			.ksm_rmap_items = mm->ksm_rmap_items,
			.ksm_zero_pages = mm->ksm_zero_pages,
			.ksm_merging_pages = mm->ksm_merging_pages,
			.ksm_process_profit = (int64_t)(mm->ksm_merging_pages + mm->ksm_zero_pages) * 4096 -
					      (int64_t)mm->ksm_rmap_items * 64,
			.ksm_mergeable = mm_has_mergeable(mm),
		};
		g_array_append_val(out, st);
	}
	g_array_sort(out, stat_by_name);
	return out;
}
