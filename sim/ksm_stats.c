// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the model shows of itself: the counters of /sys/kernel/mm/ksm and
 * /proc/vmstat, the truth the kernel cannot see, the policies' figures,
 * each mm's /proc/PID/ksm_stat, and where its memory goes (bench model)
 * with the estimate that refuses a run too big to hold. Read only.
 */
#include <string.h>
#include "sim/ksm_internal.h"
#include "traces/check.h"

/* ---- /sys/kernel/mm/ksm ---- */

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

/* ksm.c's mm_slots_empty(), read from outside: a view, not a twin. */
bool ksm_mm_registered(const struct ksm *k)
{
	return !list_empty(&k->mm_head.mm_node);
}

bool ksm_thp_columns(const struct ksm *k)
{
	return k->opt.thp_columns;
}

/* ---- memory ---- */

/*
 * Peak RSS measured with 1 Mi written pages in 2 mms (half distinct, half
 * one byte pattern, merged) and with 100000 one-page mms: 199 and 146
 * bytes a page with and without the oracle, 1.5 KiB an mm, with 88-byte
 * rmap_items; 72-byte ones take 16 a visited page off each (183, 130),
 * and bench model's mixed job 2 (many overlay contents) from 178 to the
 * figure in sim/MODEL.md ("Sizing a run"). Rounded up by the same
 * margins as before, so that a refused run would really not have fitted.
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

/* What a simulated page costs: bench model prints it, this keeps it from creeping. */
G_STATIC_ASSERT(TRACE_VPN_LIMIT <= (UINT64_C(1) << 32));	/* rmap_item.vpn */
G_STATIC_ASSERT(sizeof(struct rmap_item) == 64);
G_STATIC_ASSERT(TRACE_NODE_MAX < (1u << 10));	/* page.nid */
G_STATIC_ASSERT(sizeof(struct page) == 24);
/* stable_node.tree: every tree_index(), nodes x classes */
G_STATIC_ASSERT((uint64_t)(TRACE_NODE_MAX + 1) * KSM_CLASSES_MAX <= (UINT64_C(1) << 22));
G_STATIC_ASSERT(sizeof(struct stable_node) == 64);

#define HEAP_OVERHEAD 16u	/* malloc's header, per object */
#define TREE_NODE_BYTES 40u	/* a GTreeNode */
#define TREE_BYTES 48u		/* a GTree: its VMAs' */
#define NAME_SLOT_BYTES 24u	/* mm_by_name: a GHashTable slot (key, value, hash), rounded up */

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
	out->stable_nodes = slab_bytes(&k->stable_node_cache);
	uint64_t heap;
	content_stats(&out->content_objects, &heap);
	out->contents = content_footprint();
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		uint64_t chunks = mm->nr_chunks;
		uint64_t vmas = (uint64_t)g_tree_nnodes(mm->vmas);
		out->pt_chunks += chunks;
		out->page_tables += chunks * (sizeof(struct pt_chunk) + HEAP_OVERHEAD) +
				    (uint64_t)mm->pt_dirs * (sizeof(struct pt_dir) + HEAP_OVERHEAD);
		out->mms += sizeof(struct mm) + HEAP_OVERHEAD + TREE_BYTES +
			    vmas * (sizeof(struct vma) + HEAP_OVERHEAD + TREE_NODE_BYTES);
	}
	out->mm_count = all->len;
	g_ptr_array_free(all, TRUE);
	out->mms += (uint64_t)g_hash_table_size(k->mm_by_name) * NAME_SLOT_BYTES +
		    (uint64_t)k->mm_table->len * sizeof(struct mm *);
	out->total = out->rmap_items + out->pages + out->stable_nodes + out->contents +
		     out->page_tables + out->mms;
}

/* ---- /proc/PID/ksm_stat ---- */

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
			.ksm_rmap_items = mm->ksm_rmap_items + mm->forked_rmap_items,
			.ksm_zero_pages = mm->ksm_zero_pages,
			.ksm_merging_pages = mm->ksm_merging_pages + mm->forked_merging_pages,
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
