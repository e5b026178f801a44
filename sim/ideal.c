// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ideal-dedup oracle: how much merging the contents allow right now,
 * against what KSM has achieved. It groups every present page of every
 * mergeable VMA by its bytes (no checksum can fool it); a group of n
 * mappings could save n - ceil(n / max_page_sharing) pages, a group of
 * zero pages all n with use_zero_pages. It walks every page table, so it
 * runs when an output asks for it, never on the hot path.
 */
#include <string.h>
#include "sim/ksm_internal.h"


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
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		if (!mm->registered || mm->exiting)
			continue;	/* no mergeable VMA, or gone */
		struct vma *v = NULL;
		for (GTreeNode *cn = g_tree_node_first(mm->chunks); cn; cn = g_tree_node_next(cn)) {
			uint64_t base = GPOINTER_TO_SIZE(g_tree_node_key(cn)) << PT_SHIFT;
			struct pt_chunk *c = g_tree_node_value(cn);
			for (unsigned j = 0; j < PT_SIZE; j++) {
				struct page *p = c->pte[j];
				if (!p || p == ZERO_PFN_PTE)
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
					/* a page a fork shares is saved as a KSM page is */
					if (p->ksm || p->mapcount > 1) {
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
	g_ptr_array_free(all, TRUE);
	content_unref(zero);
}
