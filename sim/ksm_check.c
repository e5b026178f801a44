// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The invariant checker (run --check): after a batch, walk every structure
 * and recount what the model keeps as counters: rmap_items per mm and in
 * all, stable and unstable membership, pages_shared/sharing against the
 * stable trees, chains and dups, mapcounts against the PTEs (a page a
 * fork shares is write-protected; a THP's subpages are where it is in
 * every mm that maps it, none of them KSM, all counted, and its mappings,
 * large mapcount and mm_id slots agree with the PTEs), KSM zero pages, VMA flags against the
 * mm slot and merge-any; and the red-black and memcmp order of the trees. It reads, never
 * fixes, and runs on request only, never on the hot path.
 */
#include "sim/ksm_internal.h"

struct walk {
	struct ksm *k;
	GString *err;
	GHashTable *mapped;	/* struct page * -> PTE count */
	GHashTable *thps;	/* struct thp * -> subpages met */
	GHashTable *thp_ptes;	/* struct thp_map * -> PTEs met */
	uint64_t items, stable_items, unstable_items;
	uint64_t shared, sharing, chains, dups;
};

static void fail(struct walk *w, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void fail(struct walk *w, const char *fmt, ...)
{
	if (w->err->len)
		return;	/* the first violation is the one to read */
	va_list ap;
	va_start(ap, fmt);
	g_string_append_vprintf(w->err, fmt, ap);
	va_end(ap);
}

static int rb_black_height(struct walk *w, const struct rb_node *n, const struct rb_node *parent)
{
	if (!n)
		return 1;
	if (rb_parent(n) != parent)
		fail(w, "rbtree: broken parent link");
	if (rb_is_red(n) &&
	    ((n->rb_left && rb_is_red(n->rb_left)) || (n->rb_right && rb_is_red(n->rb_right))))
		fail(w, "rbtree: red node with a red child");
	int l = rb_black_height(w, n->rb_left, n), r = rb_black_height(w, n->rb_right, n);
	if (l != r)
		fail(w, "rbtree: unequal black heights");
	return l + !rb_is_red(n);
}

static void check_node_items(struct walk *w, struct stable_node *node)
{
	int n = 0;
	struct rmap_item *rmap_item;
	hlist_for_each_entry(rmap_item, &node->hlist, hlist) {
		n++;
		if (!(rmap_item->flags & STABLE_FLAG) || rmap_item->head != node)
			fail(w, "stable node lists an rmap_item that does not point back to it");
	}
	if (n != node->rmap_hlist_len)
		fail(w, "stable node: rmap_hlist_len %d but %d items", node->rmap_hlist_len, n);
	if (n) {
		w->shared++;
		w->sharing += n - 1;
	}
	struct page *kpage = stable_node_page(w->k, node);
	if (kpage) {
		if (!kpage->ksm || page_stable_node(w->k, kpage) != node)
			fail(w, "stable node's page is not its KSM page");
	}
}

static const content *node_content(const struct ksm *k, struct stable_node *node)
{
	if (!is_stable_node_chain(node))
		return node->kpfn ? stable_node_page(k, node)->c : NULL;
	struct stable_node *dup;
	hlist_for_each_entry(dup, &node->hlist, hlist_dup)
		if (dup->kpfn)
			return stable_node_page(k, dup)->c;
	return NULL;
}

static void check_stable_tree(struct walk *w, struct rb_root *root)
{
	rb_black_height(w, root->rb_node, NULL);
	const content *prev = NULL;
	for (struct rb_node *n = rb_first(root); n; n = rb_next(n)) {
		struct stable_node *node = rb_entry(n, struct stable_node, node);
		if (node->is_dup)
			fail(w, "a dup sits in the stable tree");
		if (is_stable_node_chain(node)) {
			w->chains++;
			const content *first = NULL;
			struct stable_node *dup;
			uint32_t nr_dups = 0, nr_candidates = 0, nr_stale = 0;
			uint64_t slot_before = UINT64_MAX;
			hlist_for_each_entry(dup, &node->hlist, hlist_dup) {
				w->dups++;
				/* The index keeps the list's order: slots fall from the head. */
				if (dup->chain_slot >= slot_before || dup->chain_slot >= node->dups->next ||
				    node->dups->at[dup->chain_slot] != dup)
					fail(w, "chain index has a dup out of the list's order");
				slot_before = dup->chain_slot;
				nr_dups++;
				nr_candidates += is_page_sharing_candidate(w->k, dup);
				nr_stale += !dup->kpfn;
				if (!dup->is_dup || stable_node_chain(w->k, dup) != node)
					fail(w, "chain lists a dup that does not point back");
				check_node_items(w, dup);
				if (dup->kpfn) {
					const content *c = stable_node_page(w->k, dup)->c;
					if (first && content_cmp(first, c) != 0)
						fail(w, "dups of one chain hold different bytes");
					first = c;
				}
			}
			/* The index's counts, which its trees follow. */
			if (node->dups->nr_dups != nr_dups ||
			    node->dups->nr_candidates != nr_candidates ||
			    node->dups->nr_stale != nr_stale)
				fail(w, "chain counts %u dups, %u candidates, %u stale but lists %u, %u, %u",
				     node->dups->nr_dups, node->dups->nr_candidates, node->dups->nr_stale,
				     nr_dups, nr_candidates, nr_stale);
		} else {
			check_node_items(w, node);
		}
		/* Stale nodes have no bytes; order holds among the live ones. */
		const content *c = node_content(w->k, node);
		if (c && prev && content_cmp(prev, c) >= 0)
			fail(w, "stable tree out of memcmp order");
		if (c)
			prev = c;
	}
}

/*
 * A THP: its subpage count, each mm's PTE count (all 512 while by PMD),
 * the large mapcount (a PMD one, a PTE one), the mm_id slots (each held by
 * an mm that maps it) and the shared bit (clear only while one mm maps
 * it: the kernel may leave it set longer, never clear it sooner).
 */
static void count_thp(gpointer key, gpointer value, gpointer data)
{
	struct walk *w = data;
	const struct thp *t = key;
	if (t->pages != GPOINTER_TO_UINT(value))
		fail(w, "a THP holds %u subpages but %u PTEs map one", t->pages,
		     GPOINTER_TO_UINT(value));
	uint32_t mapcount = 0;
	for (uint32_t i = 0; i < t->nmaps; i++) {
		const struct thp_map *m = &t->maps[i];
		guint met = GPOINTER_TO_UINT(g_hash_table_lookup(w->thp_ptes, m));
		if (m->ptes != met || (m->pmd_mapped && m->ptes != HPAGE_PMD_NR))
			fail(w, "mm %s maps a THP by %u PTEs%s but %u PTEs map one", m->mm->name,
			     m->ptes, m->pmd_mapped ? " (by PMD)" : "", met);
		for (uint32_t j = 0; j < i; j++)
			if (t->maps[j].mm == m->mm)
				fail(w, "mm %s maps a THP twice", m->mm->name);
		mapcount += m->pmd_mapped ? 1 : m->ptes;
	}
	if (mapcount != t->mapcount)
		fail(w, "a THP's large mapcount is %u but its mappings are %u", t->mapcount,
		     mapcount);
	for (int i = 0; i < 2; i++) {
		bool mapped = false;
		for (uint32_t j = 0; j < t->nmaps; j++)
			mapped |= t->maps[j].mm == t->mm_id[i];
		if (t->mm_id[i] && !mapped)
			fail(w, "a THP's mm_id slot %d is held by an mm that does not map it", i);
	}
	if (t->nmaps > 1 && !t->maybe_shared)
		fail(w, "a THP mapped by %u mms is not marked maybe shared", t->nmaps);
}

static void count_pte(gpointer key, gpointer value, gpointer data)
{
	struct walk *w = data;
	struct page *p = key;
	if (page_mapcount(w->k, p) != GPOINTER_TO_UINT(value))
		fail(w, "page mapcount %u but %u PTEs map it", page_mapcount(w->k, p),
		     GPOINTER_TO_UINT(value));
}

char *ksm_check(struct ksm *k)
{
	struct walk w = { .k = k, .err = g_string_new(NULL) };
	w.mapped = g_hash_table_new(NULL, NULL);
	w.thps = g_hash_table_new(NULL, NULL);
	w.thp_ptes = g_hash_table_new(NULL, NULL);
	GPtrArray *mms = ksm_all_mms(k);

	uint64_t zero = 0;
	for (guint i = 0; i < mms->len; i++) {
		struct mm *mm = mms->pdata[i];
		uint64_t last = 0, n = 0, merging = 0, mm_zero = 0;
		bool first = true;
		for (struct rmap_item *rmap_item = rmap_at(k, mm->rmap_list); rmap_item;
		     rmap_item = rmap_at(k, rmap_item->rmap_list)) {
			if (!first && rmap_item->vpn <= last)
				fail(&w, "mm %s: rmap_list not sorted", mm->name);
			if (rmap_item_mm(k, rmap_item) != mm)
				fail(&w, "mm %s: an rmap_item of another mm", mm->name);
			first = false;
			last = rmap_item->vpn;
			n++;
			if (rmap_item->flags & STABLE_FLAG) {
				w.stable_items++;
				merging++;
			}
			if (rmap_item->flags & UNSTABLE_FLAG)
				w.unstable_items++;
		}
		w.items += n;
		if (n != mm->ksm_rmap_items)
			fail(&w, "mm %s: ksm_rmap_items %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
			     " items", mm->name, mm->ksm_rmap_items, n);
		if (merging != mm->ksm_merging_pages)
			fail(&w, "mm %s: ksm_merging_pages %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
			     " stable items", mm->name, mm->ksm_merging_pages, merging);
		struct pt_chunk *c;
		for (uint64_t idx = 0; (c = pt_chunk_next(mm, &idx)); idx++) {
			for (unsigned j = 0; j < PT_SIZE; j++) {
				struct page *p = pte_page(&k->page_slab, c->pte[j]);
				if (p == KSM_ZERO_PTE) {
					mm_zero++;
				} else if (pte_is_page(p)) {
					uint64_t vpn = (idx << PT_SHIFT) + j;
					if (page_thp(k, p)) {
						const struct thp *t = page_thp(k, p);
						const struct thp_map *m = NULL;
						for (uint32_t x = 0; x < t->nmaps; x++)
							if (t->maps[x].mm == mm)
								m = &t->maps[x];
						if (p->ksm || !m || vpn < t->start ||
						    vpn >= t->start + HPAGE_PMD_NR)
							fail(&w, "mm %s: vpn %" G_GUINT64_FORMAT " is a subpage "
							     "of a THP but %s", mm->name, vpn,
							     p->ksm ? "KSM" : "not where the THP is");
						if (!g_hash_table_contains(w.mapped, p)) {
							guint th = GPOINTER_TO_UINT(g_hash_table_lookup(w.thps, t));
							g_hash_table_insert(w.thps, (gpointer)t,
									    GUINT_TO_POINTER(th + 1));
						}
						if (m) {
							guint mp = GPOINTER_TO_UINT(g_hash_table_lookup(w.thp_ptes, m));
							g_hash_table_insert(w.thp_ptes, (gpointer)m,
									    GUINT_TO_POINTER(mp + 1));
						}
					}
					if (!p->ksm && page_mapcount(k, p) > 1 && !p->wrprotect)
						fail(&w, "mm %s: an anonymous page mapped %u times is "
						     "writable", mm->name, page_mapcount(k, p));
					guint cnt = GPOINTER_TO_UINT(g_hash_table_lookup(w.mapped, p));
					g_hash_table_insert(w.mapped, p, GUINT_TO_POINTER(cnt + 1));
				}
			}
		}
		for (GTreeNode *vn = g_tree_node_first(mm->vmas); vn && !mm->exiting;
		     vn = g_tree_node_next(vn)) {
			const struct vma *v = g_tree_node_value(vn);
			if (v->mergeable && !mm->registered)
				fail(&w, "mm %s: a mergeable VMA but no mm slot", mm->name);
			if (mm->merge_any && !v->mergeable && !v->advised_off)
				fail(&w, "mm %s: merge-any but VMA at %" G_GUINT64_FORMAT
				     " is not mergeable", mm->name, v->start);
		}
		if (mm_zero != mm->ksm_zero_pages)
			fail(&w, "mm %s: ksm_zero_pages %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
			     " KSM zero PTEs", mm->name, mm->ksm_zero_pages, mm_zero);
		zero += mm_zero;
	}
	g_hash_table_foreach(w.mapped, count_pte, &w);
	g_hash_table_foreach(w.thps, count_thp, &w);
	for (uint32_t tree = 0; tree < ksm_nr_trees(k); tree++) {
		check_stable_tree(&w, &k->root_stable_tree[tree]);
		rb_black_height(&w, k->root_unstable_tree[tree].rb_node, NULL);
	}
	if (w.items != k->rmap_items)
		fail(&w, "ksm_rmap_items %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT " items",
		     k->rmap_items, w.items);
	if (w.unstable_items != k->pages_unshared)
		fail(&w, "pages_unshared %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
		     " items carry UNSTABLE_FLAG", k->pages_unshared, w.unstable_items);
	if (w.shared != k->pages_shared || w.sharing != k->pages_sharing)
		fail(&w, "pages_shared/sharing %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
		     " but the stable tree holds %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
		     k->pages_shared, k->pages_sharing, w.shared, w.sharing);
	if (w.shared + w.sharing != w.stable_items)
		fail(&w, "%" G_GUINT64_FORMAT " stable items but the tree lists %" G_GUINT64_FORMAT,
		     w.stable_items, w.shared + w.sharing);
	if (w.chains != k->stable_node_chains || w.dups != k->stable_node_dups)
		fail(&w, "stable_node_chains/dups %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
		     " but the tree holds %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
		     k->stable_node_chains, k->stable_node_dups, w.chains, w.dups);
	if (zero != k->zero_pages)
		fail(&w, "ksm_zero_pages %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
		     " KSM zero PTEs", k->zero_pages, zero);
	if (k->pages_shared + k->pages_sharing + k->pages_unshared > k->rmap_items)
		fail(&w, "shared + sharing + unshared exceed rmap items");
	g_hash_table_destroy(w.mapped);
	g_hash_table_destroy(w.thps);
	g_hash_table_destroy(w.thp_ptes);
	g_ptr_array_free(mms, TRUE);
	return g_string_free(w.err, w.err->len == 0);
}
