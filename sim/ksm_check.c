// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Looking at the whole model at once: the invariant checker (--check) and
 * the oracle's view of how much merging the contents allow. Both walk every
 * structure, so they run on request, never on the hot path.
 */
#include <string.h>
#include "sim/ksm_internal.h"

struct walk {
	struct ksm *k;
	GString *err;
	GHashTable *mapped;	/* struct page * -> PTE count */
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
	if (n->parent != parent)
		fail(w, "rbtree: broken parent link");
	if (n->red && ((n->left && n->left->red) || (n->right && n->right->red)))
		fail(w, "rbtree: red node with a red child");
	int l = rb_black_height(w, n->left, n), r = rb_black_height(w, n->right, n);
	if (l != r)
		fail(w, "rbtree: unequal black heights");
	return l + !n->red;
}

static void check_node_items(struct walk *w, struct stable_node *node)
{
	int n = 0;
	for (struct rmap_item *it = node->items; it; it = it->hnext) {
		n++;
		if (!(it->flags & STABLE_FLAG) || it->head != node)
			fail(w, "stable node lists an item that does not point back to it");
	}
	if (n != node->rmap_hlist_len)
		fail(w, "stable node: rmap_hlist_len %d but %d items", node->rmap_hlist_len, n);
	if (n) {
		w->shared++;
		w->sharing += n - 1;
	}
	if (node->page) {
		if (!node->page->ksm || node->page->node != node)
			fail(w, "stable node's page is not its KSM page");
	}
}

static const content *node_content(struct stable_node *node)
{
	if (node->rmap_hlist_len != STABLE_NODE_CHAIN)
		return node->page ? node->page->c : NULL;
	for (struct stable_node *d = node->dups; d; d = d->dnext)
		if (d->page)
			return d->page->c;
	return NULL;
}

static void check_stable_tree(struct walk *w, struct rb_root *root)
{
	rb_black_height(w, root->node, NULL);
	const content *prev = NULL;
	for (struct rb_node *n = rb_first(root); n; n = rb_next(n)) {
		struct stable_node *node = rb_entry(n, struct stable_node, node);
		if (node->is_dup)
			fail(w, "a dup sits in the stable tree");
		if (node->rmap_hlist_len == STABLE_NODE_CHAIN) {
			w->chains++;
			const content *first = NULL;
			for (struct stable_node *d = node->dups; d; d = d->dnext) {
				w->dups++;
				if (!d->is_dup || d->chain != node)
					fail(w, "chain lists a dup that does not point back");
				check_node_items(w, d);
				if (d->page) {
					if (first && content_cmp(first, d->page->c) != 0)
						fail(w, "dups of one chain hold different bytes");
					first = d->page->c;
				}
			}
		} else {
			check_node_items(w, node);
		}
		/* Stale nodes have no bytes; order holds among the live ones. */
		const content *c = node_content(node);
		if (c && prev && content_cmp(prev, c) >= 0)
			fail(w, "stable tree out of memcmp order");
		if (c)
			prev = c;
	}
}

static void count_pte(gpointer key, gpointer value, gpointer data)
{
	struct walk *w = data;
	struct page *p = key;
	if (p->mapcount != GPOINTER_TO_UINT(value))
		fail(w, "page mapcount %u but %u PTEs map it", p->mapcount, GPOINTER_TO_UINT(value));
}

char *ksm_check(struct ksm *k)
{
	struct walk w = { .k = k, .err = g_string_new(NULL) };
	w.mapped = g_hash_table_new(NULL, NULL);
	GPtrArray *mms = g_ptr_array_new();
	for (struct mm *mm = k->mm_head.slot_next; mm != &k->mm_head; mm = mm->slot_next)
		g_ptr_array_add(mms, mm);
	GHashTableIter it;
	gpointer key, val;
	g_hash_table_iter_init(&it, k->mm_by_name);
	while (g_hash_table_iter_next(&it, &key, &val))
		if (!((struct mm *)val)->registered)
			g_ptr_array_add(mms, val);

	uint64_t zero = 0;
	for (guint i = 0; i < mms->len; i++) {
		struct mm *mm = mms->pdata[i];
		uint64_t last = 0, n = 0, merging = 0, mm_zero = 0;
		bool first = true;
		for (struct rmap_item *item = mm->rmap_list; item; item = item->rmap_list) {
			if (!first && item->vpn <= last)
				fail(&w, "mm %s: rmap_list not sorted", mm->name);
			first = false;
			last = item->vpn;
			n++;
			if (item->flags & STABLE_FLAG) {
				w.stable_items++;
				merging++;
			}
			if (item->flags & UNSTABLE_FLAG)
				w.unstable_items++;
		}
		w.items += n;
		if (n != mm->ksm_rmap_items)
			fail(&w, "mm %s: ksm_rmap_items %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
			     " items", mm->name, mm->ksm_rmap_items, n);
		if (merging != mm->ksm_merging_pages)
			fail(&w, "mm %s: ksm_merging_pages %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
			     " stable items", mm->name, mm->ksm_merging_pages, merging);
		for (GTreeNode *cn = g_tree_node_first(mm->chunks); cn; cn = g_tree_node_next(cn)) {
			struct pt_chunk *c = g_tree_node_value(cn);
			for (unsigned j = 0; j < PT_SIZE; j++) {
				struct page *p = c->pte[j];
				if (p == KSM_ZERO_PTE) {
					mm_zero++;
				} else if (p) {
					guint cnt = GPOINTER_TO_UINT(g_hash_table_lookup(w.mapped, p));
					g_hash_table_insert(w.mapped, p, GUINT_TO_POINTER(cnt + 1));
				}
			}
		}
		if (mm_zero != mm->ksm_zero_pages)
			fail(&w, "mm %s: ksm_zero_pages %" G_GUINT64_FORMAT " but %" G_GUINT64_FORMAT
			     " KSM zero PTEs", mm->name, mm->ksm_zero_pages, mm_zero);
		zero += mm_zero;
	}
	g_hash_table_foreach(w.mapped, count_pte, &w);
	for (uint32_t nid = 0; nid < k->nr_roots; nid++) {
		check_stable_tree(&w, &k->root_stable_tree[nid]);
		rb_black_height(&w, k->root_unstable_tree[nid].node, NULL);
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
	g_ptr_array_free(mms, TRUE);
	return g_string_free(w.err, w.err->len == 0);
}

/* ---- the oracle ---- */

struct group {
	const content *c;
	uint64_t ptes;		/* mappings holding these bytes */
	struct group *next;	/* digest collisions */
};

static void free_group_chain(gpointer p)
{
	struct group *g = p;
	while (g) {
		struct group *n = g->next;
		g_free(g);
		g = n;
	}
}

struct ideal_acc {
	struct ksm *k;
	uint64_t ideal;
};

static void add_ideal(gpointer key, gpointer value, gpointer data)
{
	struct ideal_acc *a = data;
	uint64_t m = a->k->knob[KNOB_MAX_PAGE_SHARING];
	for (struct group *g = value; g; g = g->next) {
		if (a->k->knob[KNOB_USE_ZERO_PAGES] && content_is_zero(g->c))
			a->ideal += g->ptes;
		else if (g->ptes >= 2)
			a->ideal += g->ptes - (g->ptes + m - 1) / m;
	}
}

void ksm_ideal(struct ksm *k, struct ksm_ideal *out)
{
	memset(out, 0, sizeof(*out));
	GHashTable *groups = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
						   free_group_chain);
	GHashTable *ksm_pages = g_hash_table_new(NULL, NULL);
	content *zero = content_zero();
	for (struct mm *mm = k->mm_head.slot_next; mm != &k->mm_head; mm = mm->slot_next) {
		if (mm->exiting)
			continue;
		struct vma *v = NULL;
		for (GTreeNode *cn = g_tree_node_first(mm->chunks); cn; cn = g_tree_node_next(cn)) {
			uint64_t base = GPOINTER_TO_SIZE(g_tree_node_key(cn)) << PT_SHIFT;
			struct pt_chunk *c = g_tree_node_value(cn);
			for (unsigned j = 0; j < PT_SIZE; j++) {
				struct page *p = c->pte[j];
				if (!p)
					continue;
				uint64_t vpn = base + j;
				if (!v || vpn < v->start || vpn >= v->end)
					v = find_vma(mm, vpn);
				if (!v || !v->mergeable)
					continue;
				out->mergeable_pages++;
				const content *pc;
				if (p == KSM_ZERO_PTE) {
					out->actual_saved++;
					pc = zero;
				} else {
					pc = p->c;
					if (p->ksm) {
						guint seen = GPOINTER_TO_UINT(
							g_hash_table_lookup(ksm_pages, p));
						if (seen)
							out->actual_saved++;
						g_hash_table_insert(ksm_pages, p,
								    GUINT_TO_POINTER(seen + 1));
					}
				}
				gint64 d = (gint64)content_digest((content *)pc);
				struct group *head = g_hash_table_lookup(groups, &d), *g;
				for (g = head; g; g = g->next)
					if (content_equal(g->c, pc))
						break;
				if (!g) {
					g = g_new0(struct group, 1);
					g->c = pc;
					if (head) {
						g->next = head->next;
						head->next = g;
					} else {
						g_hash_table_insert(groups, g_memdup2(&d, sizeof(d)), g);
					}
				}
				g->ptes++;
			}
		}
	}
	struct ideal_acc acc = { .k = k };
	g_hash_table_foreach(groups, add_ideal, &acc);
	out->ideal_saved = acc.ideal;
	out->missed_merges = acc.ideal > out->actual_saved ? acc.ideal - out->actual_saved : 0;
	g_hash_table_destroy(groups);
	g_hash_table_destroy(ksm_pages);
	content_unref(zero);
}
