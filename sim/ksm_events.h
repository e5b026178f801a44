/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model's tracepoints: every event a measurement needs, stated once by
 * the twins in ksm.c, mm.c and policy_gate.c, named after the kernel's own
 * (include/trace/events/ksm.h, the COW_KSM vm event) where it has one and
 * ksm_ev_* where only the model has it. A hook bumps the always-on counters
 * (struct ksm_truth, the cost counts) inline, and then, behind one
 * predictable branch (k->obs, NULL unless a run asked for a measurement),
 * calls the run's observers (struct ksm_observer_ops). The twins count,
 * price and report nothing themselves: a new measurement is an observer in
 * a file of its own, not a diff of a twin.
 *
 * Included by ksm_internal.h, after struct ksm.
 */
#ifndef KSMSIM_SIM_KSM_EVENTS_H
#define KSMSIM_SIM_KSM_EVENTS_H

/*
 * What an observer may watch. Every member may be NULL. Observers see the
 * model read-only, while the event happens, and change nothing of it.
 */
struct ksm_observer_ops {
	/* page was allocated or written (its bytes are new) */
	void (*page_written)(void *ctx, const struct ksm *k, const struct page *page);
	/*
	 * rmap_item's page, page (freed by now, its pointer still a key),
	 * merged into the KSM page rmap_item is listed under.
	 */
	void (*merged)(void *ctx, const struct ksm *k, struct rmap_item *rmap_item,
		       const struct page *page);
	/* mm's page merged into the KSM zero page */
	void (*zero_merged)(void *ctx, const struct ksm *k, const struct mm *mm,
			    const struct page *page);
	/* mm's mapping at vpn of KSM page page ends by CoW or unshare */
	void (*cow_ksm)(void *ctx, const struct ksm *k, const struct mm *mm, uint64_t vpn,
			const struct page *page);
	/*
	 * mm's PTE at vpn (a page, or a zero PTE) goes: zapped by munmap or
	 * exit (unmerge false), or about to be unshared by MADV_UNMERGEABLE or
	 * prctl 0 (true: break_ksm, still mapped). Called before the change.
	 */
	void (*unmapped)(void *ctx, const struct ksm *k, const struct mm *mm, uint64_t vpn,
			 const struct page *pte, bool unmerge);
	/* rmap_item is listed under a stable node afresh, or leaves it */
	void (*rmap_item_listed)(void *ctx, const struct ksm *k, const struct rmap_item *rmap_item);
	/* a new stable node (a KSM page's) was filed */
	void (*stable_node_new)(void *ctx, const struct ksm *k, const struct stable_node *node);
	/* a stale stable node is about to be freed */
	void (*stable_node_gone)(void *ctx, const struct ksm *k, const struct stable_node *node);
	/* the gate let page through although its bytes changed since seen */
	void (*false_positive)(void *ctx, const struct ksm *k, const struct rmap_item *rmap_item,
			       const struct page *page);
	/* a pass of the scan starts or ends */
	void (*scan)(void *ctx, const struct ksm *k, bool start);
	/* the scan-time advisor set pages_to_scan */
	void (*advisor)(void *ctx, const struct ksm *k, uint64_t scan_time, uint64_t pages_to_scan,
			uint64_t cpu_percent);
	/* the run ends: free ctx */
	void (*free)(void *ctx);
};

struct ksm_observer {
	const struct ksm_observer_ops *ops;
	void *ctx;
};

/* The run's observers; k->obs is NULL while there are none. */
struct ksm_observers {
	size_t n;
	struct ksm_observer o[];
};

/* Add an observer to k (ksm_new attaches the options'); ksm_free frees them. */
void ksm_observe(struct ksm *k, const struct ksm_observer_ops *ops, void *ctx);
/* Attach what k->opt asks for (exposure, the false-positive log): observers.c. */
void ksm_observers_attach(struct ksm *k);
void ksm_observers_free(struct ksm *k);

#define KSM_OBSERVE(k, member, ...)                                                  \
	do {                                                                         \
		if (G_UNLIKELY((k)->obs)) {                                          \
			const struct ksm_observers *obs_ = (k)->obs;                  \
			for (size_t i_ = 0; i_ < obs_->n; i_++)                       \
				if (obs_->o[i_].ops->member)                          \
					obs_->o[i_].ops->member(obs_->o[i_].ctx, k,   \
								__VA_ARGS__); \
		}                                                                    \
	} while (0)

/* ---- the kernel's tracepoints ---- */

static inline void trace_ksm_start_scan(struct ksm *k)
{
	KSM_OBSERVE(k, scan, true);
}

static inline void trace_ksm_stop_scan(struct ksm *k)
{
	k->cost_n.n[COST_FULL_PASS]++;
	KSM_OBSERVE(k, scan, false);
}

/* try_to_merge_one_page write-protects the page: an MMU invalidation. */
static inline void trace_ksm_merge_one_page(struct ksm *k)
{
	k->truth.mmu_invalidations++;
}

/* ... and with the PTE made read-only, write_protect_page changed it. */
static inline void ksm_ev_wrprotect_pte(struct ksm *k)
{
	k->truth.mmu_change_pte++;
}

/* replace_page: the PTE now maps the KSM page (or the zero page). */
static inline void ksm_ev_replace_page(struct ksm *k)
{
	k->truth.mmu_invalidations++;
	k->truth.mmu_change_pte++;
}

/* rmap_item's page merged into an existing KSM page (a stable-tree match). */
static inline void trace_ksm_merge_with_ksm_page(struct ksm *k, struct rmap_item *rmap_item,
						 const struct page *page)
{
	k->truth.merges_stable++;
	KSM_OBSERVE(k, merged, rmap_item, page);
}

/* Two pages made one new KSM page (an unstable-tree match): tree's first. */
static inline void ksm_ev_merge_two(struct ksm *k, struct rmap_item *tree_rmap_item,
				    const struct page *tree_page, struct rmap_item *rmap_item,
				    const struct page *page)
{
	k->truth.merges_two++;
	KSM_OBSERVE(k, merged, tree_rmap_item, tree_page);
	KSM_OBSERVE(k, merged, rmap_item, page);
}

/* mm's page is about to be replaced by the KSM zero page. */
static inline void ksm_ev_merge_zero(struct ksm *k, const struct mm *mm, const struct page *page)
{
	KSM_OBSERVE(k, zero_merged, mm, page);
	k->truth.merges_zero++;
}

/* A KSM page's node was filed (stable_tree_insert). */
static inline void ksm_ev_stable_insert(struct ksm *k, const struct stable_node *node)
{
	k->cost_n.n[COST_STABLE_INSERT]++;
	KSM_OBSERVE(k, stable_node_new, node);
}

/* rmap_item listed under a stable node (stable_tree_append). */
static inline void ksm_ev_stable_append(struct ksm *k, const struct rmap_item *rmap_item)
{
	KSM_OBSERVE(k, rmap_item_listed, rmap_item);
}

/* rmap_item leaves its stable node (remove_rmap_item_from_tree). */
static inline void trace_ksm_remove_rmap_item(struct ksm *k, const struct rmap_item *rmap_item)
{
	KSM_OBSERVE(k, rmap_item_listed, rmap_item);
}

/* A stale stable node leaves the tree (remove_node_from_stable_tree): its page was freed. */
static inline void trace_ksm_remove_ksm_page(struct ksm *k, const struct stable_node *node)
{
	KSM_OBSERVE(k, stable_node_gone, node);
}

/* The scan-time advisor's decision. */
static inline void trace_ksm_advisor(struct ksm *k, uint64_t scan_time, uint64_t pages_to_scan,
				     uint64_t cpu_percent)
{
	KSM_OBSERVE(k, advisor, scan_time, pages_to_scan, cpu_percent);
}

/*
 * do_wp_page copied KSM page page at mm's vpn (the COW_KSM vm event): on a
 * store (fresh: within the pass after its merge, or later) or an unshare.
 */
enum ksm_cow_kind { KSM_COW_UNSHARE, KSM_COW_FRESH, KSM_COW_LATER };
static inline void trace_ksm_cow_ksm(struct ksm *k, const struct mm *mm, uint64_t vpn,
				     const struct page *page, enum ksm_cow_kind kind)
{
	k->cow_ksm++;
	KSM_OBSERVE(k, cow_ksm, mm, vpn, page);
	k->truth.page_copies++;
	k->truth.mmu_invalidations++;
	k->truth.mmu_change_pte++;
	if (kind == KSM_COW_UNSHARE)
		k->truth.cow_unshare++;
	else if (kind == KSM_COW_FRESH)
		k->truth.cow_fresh++;
	else
		k->truth.cow_later++;
}

/* ---- the model's own events ---- */

/* mm.c: page allocated (first touch, CoW copy) or written in place. */
static inline void ksm_ev_page_written(struct ksm *k, const struct page *page)
{
	KSM_OBSERVE(k, page_written, page);
}

/* mm.c: a present PTE zapped (munmap, exit) or about to be unmerged (MADV_UNMERGEABLE). */
static inline void ksm_ev_unmap(struct ksm *k, const struct mm *mm, uint64_t vpn,
				const struct page *pte, bool unmerge)
{
	KSM_OBSERVE(k, unmapped, mm, vpn, pte, unmerge);
}
/* ksmd visits an rmap_item (ksm_do_scan). */
static inline void ksm_ev_visit(struct ksm *k)
{
	k->cost_n.n[COST_VISIT]++;
}

/* A page checksum, computed or known to be the last one. */
static inline void ksm_ev_checksum(struct ksm *k)
{
	k->truth.checksums++;
	k->cost_n.n[COST_CHECKSUM]++;
}

/* partial-hash: a checksum of kw sampled words, strided: a line each up to 64. */
static inline void ksm_ev_partial_checksum(struct ksm *k, unsigned kw)
{
	k->truth.checksums++;
	k->pstats.partial_words += kw;
	k->partial_lines += kw < 64 ? kw : 64;
}

/* dirty-bit: a set bit cleared, its TLB entry flushed. */
static inline void ksm_ev_dirty_flush(struct ksm *k)
{
	k->pstats.dirty_flushes++;
}

/*
 * dirty-bit: the PTE's dirty bit read; when it was set (written), whether
 * the bytes are nonetheless those of the last visit (a store of the same
 * values, which a checksum would have let through).
 */
static inline void ksm_ev_dirty_check(struct ksm *k, const struct rmap_item *rmap_item,
				      const struct page *page, bool written)
{
	k->pstats.dirty_checks++;
	if (written && rmap_item->seen && content_equal(rmap_item->seen, page->c))
		k->pstats.dirty_same_bytes++;
}

/* partial-hash: a VMA's sampled words doubled (at most partial_k_max). */
static inline void ksm_ev_partial_grow(struct ksm *k)
{
	k->pstats.partial_grows++;
}

/* classified: an unstable-tree search in one class; lost: another class held a twin. */
static inline void ksm_ev_class_search(struct ksm *k, bool lost)
{
	k->pstats.class_searches++;
	if (lost)
		k->pstats.class_lost++;
}

/* One stable-tree level: fetch the node, get its page (chain, chain_prune). */
static inline void ksm_ev_tree_level(struct ksm *k)
{
	k->cost_n.n[COST_TREE_LEVEL]++;
}

/* A tree search went down depth levels: for the levels past the cold depth (cost_model.h). */
static inline void ksm_ev_search_depth(struct ksm *k, unsigned depth)
{
	k->cost_n.depths[depth < COST_DEPTHS ? depth : COST_DEPTHS - 1]++;
}

/* stable_node_dup looked at n dups of a chain. */
static inline void ksm_ev_chain_step(struct ksm *k, uint32_t n)
{
	k->cost_n.n[COST_CHAIN_STEP] += n;
}

/* A visit found its page merged, in a KSM page not the last visit's. */
static inline void ksm_ev_revisit(struct ksm *k)
{
	k->cost_n.n[COST_REVISIT]++;
}

/* A compare decided in the first 8 bytes: bytes read up to the first difference. */
static inline void ksm_ev_memcmp_short(struct ksm *k, unsigned bytes)
{
	k->truth.memcmp_calls++;
	k->truth.memcmp_bytes += bytes;
	k->cost_n.n[COST_TREE_LEVEL]++;
}

/* A compare whose first 8 bytes tie: it usually runs the page's length. */
static inline void ksm_ev_memcmp_long(struct ksm *k)
{
	k->truth.memcmp_calls++;
	k->truth.memcmp_bytes += TRACE_PAGE_SIZE;
	k->cost_n.n[COST_MEMCMP_LONG]++;
}

static inline void ksm_ev_rmap_item_new(struct ksm *k)
{
	k->cost_n.n[COST_RMAP_ITEM]++;
}

/* split_huge_page of a THP ksmd wants to merge. */
static inline void ksm_ev_thp_split(struct ksm *k)
{
	k->cost_n.n[COST_THP_SPLIT]++;
}

/* smart_scan skipped a visit. */
static inline void ksm_ev_skip(struct ksm *k)
{
	k->pages_skipped++;
	k->cost_n.n[COST_SKIP]++;
}

/* The unstable-tree search met a node whose page it cannot get. */
static inline void ksm_ev_unstable_abort(struct ksm *k)
{
	k->truth.unstable_aborts++;
}

static inline void ksm_ev_unstable_insert(struct ksm *k)
{
	k->truth.unstable_inserts++;
}

/* A page the unstable tree holds changed before its next visit. */
static inline void ksm_ev_unstable_changed(struct ksm *k)
{
	k->truth.unstable_changed_after_insert++;
}

/* write_protect_page refused: the page waits in an lru_add batch. */
static inline void ksm_ev_merge_refused_lru(struct ksm *k)
{
	k->truth.merge_refused_lru++;
}

/*
 * The gate's verdict on a visit (passed: judged unchanged) against the
 * truth (changed: the bytes differ from the last visit's, known only when
 * checked). A passed change is a false positive.
 */
static inline void ksm_ev_gate(struct ksm *k, const struct rmap_item *rmap_item,
			       const struct page *page, bool passed, bool changed)
{
	k->truth.gate_checks++;
	if (changed) {
		k->truth.gate_changed++;
		if (passed) {
			k->truth.false_positives++;
			KSM_OBSERVE(k, false_positive, rmap_item, page);
		}
	}
}

#endif
