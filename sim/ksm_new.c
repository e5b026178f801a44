// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The model's start and end: ksm_new sets the knobs to their defaults (or
 * the pinned values), builds the trees for one node and attaches the
 * observers the options ask for; ksm_free tears everything down without
 * the kernel's bookkeeping. Apart from ksm.c, which is ksmd's twins only.
 */
#include "sim/chain_index.h"
#include "sim/ksm_internal.h"

struct ksm *ksm_new(const struct ksm_options *opt)
{
	struct ksm *k = g_new0(struct ksm, 1);
	k->opt = *opt;
	if (!k->opt.hash)
		k->opt.hash = hash_lookup(HASH_DEFAULT);
	k->detector = k->opt.policy.detector;
	k->hash_fn = k->opt.hash && k->detector == KSM_DETECT_CHECKSUM ? k->opt.hash->fn : NULL;
	partial_hash_init(k);
	if (k->hash_fn) {
		content *z = content_zero();
		k->zero_checksum = content_checksum(z, k->hash_fn, NULL);
		content_unref(z);
	}
	for (int i = 0; i < KNOB_NR; i++)
		k->knob[i] = knob_table[i].def;
	if (k->opt.kernel == KSM_KERNEL_6_1)
		k->knob[KNOB_SMART_SCAN] = 0;	/* no smart scan before 6.7: every page, every pass */
	k->pagevec_size = k->opt.kernel == KSM_KERNEL_6_1 ? PAGEVEC_SIZE_6_1 : PAGEVEC_SIZE;
	for (int i = 0; i < KNOB_NR; i++)
		if (k->opt.pinned[i])
			k->knob[i] = k->opt.pinned_value[i];
	k->mm_by_name = g_hash_table_new(g_str_hash, g_str_equal);
	k->mm_table = g_ptr_array_new();
	k->mm_free_idx = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	INIT_LIST_HEAD(&k->mm_head.mm_node);
	k->scan.mm_slot = &k->mm_head;
	k->nr_roots = 1;
	k->nr_classes = MAX(k->opt.policy.classes, 1);
	k->selective = k->opt.policy.class_by >= KSM_CLASS_BY_DOMAIN;
	k->domains_next = k->opt.domains ? k->opt.domains->names->len : 0;
	k->domain_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	ksm_observers_attach(k);
	k->root_stable_tree = g_new0(struct rb_root, k->nr_classes);
	k->root_unstable_tree = g_new0(struct rb_root, k->nr_classes);
	k->ksmd = KSMD_WAITING;
	k->lru_gen = 1;		/* 0 is no page's batch */
	/* The partial-hash detector's sums and 64-bit checksums: high halves aside. */
	k->wide_checksum = k->detector == KSM_DETECT_PARTIAL || (k->hash_fn && k->opt.hash->bits > 32);
	/* one cache line each: a tree walk reads one an rmap_item */
	slab_init_side(&k->rmap_item_cache, sizeof(struct rmap_item), 64,
		       k->wide_checksum ? sizeof(uint32_t) : 0, "an arena of rmap_items");
	slab_init(&k->page_slab, sizeof(struct page), _Alignof(struct page), "an arena of pages");
	g_assert(k->page_slab.size == sizeof(struct page) && k->page_slab.first == PAGE_SLAB_FIRST &&
		 k->page_slab.slot_bits == PAGE_SLAB_SLOT_BITS);	/* page_slab_at() */
	/* one cache line each */
	slab_init(&k->stable_node_cache, sizeof(struct stable_node), 64,
		  "an arena of stable nodes");
	/* THPs by index too: a subpage's folio is 32 bits (struct page) */
	slab_init(&k->thp_cache, sizeof(struct thp), _Alignof(struct thp), "an arena of THPs");
	k->mapcount_aside = g_hash_table_new(g_direct_hash, g_direct_equal);
	return k;
}

static void free_tree_nodes(struct ksm *k, struct rb_node *n)
{
	if (!n)
		return;
	free_tree_nodes(k, n->rb_left);
	free_tree_nodes(k, n->rb_right);
	struct stable_node *node = rb_entry(n, struct stable_node, node);
	if (is_stable_node_chain(node)) {
		struct stable_node *dup;
		struct hlist_node *next;
		hlist_for_each_entry_safe(dup, next, &node->hlist, hlist_dup)
			free_stable_node(k, dup);
	}
	free_stable_node(k, node);
}

void ksm_free(struct ksm *k)
{
	if (!k)
		return;
	/*
	 * Teardown without bookkeeping: rmap_items, then pages, then nodes.
	 * The observers go first: the zaps below are no unmaps of the run's.
	 */
	ksm_observers_free(k);
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		struct rmap_item *rmap_item, *next;
		for (rmap_item = rmap_at(k, mm->rmap_list); rmap_item; rmap_item = next) {
			next = rmap_at(k, rmap_item->rmap_list);
			free_rmap_item(k, rmap_item);
		}
		mm->rmap_list = 0;
		mm_zap_all(k, mm);
		mm_destroy(k, mm);
	}
	g_ptr_array_free(all, TRUE);
	for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
		free_tree_nodes(k, k->root_stable_tree[i].rb_node);
	g_free(k->root_stable_tree);
	g_free(k->root_unstable_tree);
	g_hash_table_destroy(k->mm_by_name);
	g_ptr_array_free(k->mm_table, TRUE);
	g_array_free(k->mm_free_idx, TRUE);
	g_hash_table_destroy(k->domain_seen);
	slab_destroy(&k->rmap_item_cache);
	slab_destroy(&k->page_slab);
	slab_destroy(&k->stable_node_cache);
	slab_destroy(&k->thp_cache);
	g_hash_table_destroy(k->mapcount_aside);
	g_free(k);
}
