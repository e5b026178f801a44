/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model's state, shared by ksm.c (ksmd: cursor, trees, merging), mm.c
 * (what processes do: map, write, unmap, exit, madvise), walk_ahead.c (the
 * unstable-tree search's prefetching), policy_gate.c (the policies'
 * decisions), ksm_stats.c (counters and memory), ksm_check.c (the
 * invariant checker), ideal.c (the dedup oracle) and tests/sim/test_ksm.c.
 * Not for the rest of the tree: sim/ksm.h is the model's public face.
 * Names follow mm/ksm.c so that each function can be read beside its
 * kernel twin.
 */
#ifndef KSMSIM_SIM_KSM_INTERNAL_H
#define KSMSIM_SIM_KSM_INTERNAL_H

#include "sim/chain_index.h"
#include "content/content.h"
#include "sim/ksm.h"
#include "sim/list.h"
#include "sim/rbtree.h"
#include "sim/slab.h"

#define HZ 250
#define US_PER_JIFFY (1000000 / HZ)
#define MSEC_PER_SEC 1000
#define NSEC_PER_MSEC 1000000
#define PAGE_SIZE TRACE_PAGE_SIZE

/* Values of the run knob. */
#define KSM_RUN_MERGE 1
#define KSM_RUN_UNMERGE 2

/* pages_to_scan when no advisor drives it (set_advisor_defaults). */
#define DEFAULT_PAGES_TO_SCAN (knob_table[KNOB_PAGES_TO_SCAN].def)

/*
 * The scan-time advisor's fixed parameters: the weight in percent of the
 * newest scan in the moving average of changes, and the floor of its CPU
 * budget in percent (the ceiling is the advisor_max_cpu knob).
 */
#define EWMA_WEIGHT 30
#define KSM_ADVISOR_MIN_CPU 10

/*
 * sizeof(struct ksm_rmap_item) on a 64-bit kernel: what general_profit and
 * ksm_process_profit charge per rmap_item (ours is larger, and not what the
 * kernel reports).
 */
#define KSM_RMAP_ITEM_SIZE 64

#define SEQNR_MASK 0x0ff
#define UNSTABLE_FLAG 0x100
#define STABLE_FLAG 0x200
#define KSM_FLAG_MASK (SEQNR_MASK | UNSTABLE_FLAG | STABLE_FLAG)
#define STABLE_NODE_CHAIN (-1024)

/* A PTE that maps the zero page on KSM's behalf (use_zero_pages). */
#define KSM_ZERO_PTE ((struct page *)1)
/*
 * A PTE that maps the zero page for no one's sake: a zero-filled subpage of
 * a THP that a split gave back (try_to_map_unused_to_zeropage). Not
 * anonymous, so ksmd passes it by; not counted in ksm_zero_pages.
 */
#define ZERO_PFN_PTE ((struct page *)2)

struct page;

/* A PTE value that is a page of its own, not one of the zero-page markers. */
static inline bool pte_is_page(const struct page *p)
{
	return (uintptr_t)p > (uintptr_t)ZERO_PFN_PTE;
}

/* Subpages of a PMD-sized folio (x86-64: 2 MiB of 4 KiB pages). */
#define HPAGE_PMD_NR 512u

/*
 * One mm's mapping of a THP: by one PMD (all 512 subpages, write-protected
 * in every mm after a fork shared it), or by PTEs once that PMD was split
 * (a VMA cut, or the first store after a fork).
 */
struct thp_map {
	struct mm *mm;
	uint32_t ptes;			/* the mm's PTEs that map a subpage (all 512 while by PMD) */
	bool pmd_mapped;
};

/*
 * A PMD-sized anonymous folio (THP) that the first store in a hugepage
 * VMA allocated. Its subpages are struct pages of their own, at
 * start .. start + 511 of every mm that maps it (a fork maps it at the
 * same addresses in the child), each pointing here until the folio is
 * split. mapcount, mm_id and maybe_shared follow the kernel's large
 * mapcount (a PMD counts one mapping, a PTE one) and its two mm_id slots,
 * which decide whether a store may reuse a subpage in place
 * (__wp_can_reuse_large_anon_folio).
 */
struct thp {
	uint64_t start;			/* vpn, HPAGE_PMD_NR-aligned */
	uint32_t pages;			/* subpages still mapped and in the folio */
	uint32_t nmaps;			/* mms that map it: maps[0 .. nmaps) */
	struct thp_map *maps;
	uint32_t mapcount;		/* folio_large_mapcount: PMD mappings + PTE mappings */
	struct mm *mm_id[2];		/* the folio's mm_id slots; NULL: MM_ID_DUMMY */
	bool maybe_shared;		/* FOLIO_MM_IDS_SHARED_BIT */
};

/*
 * A physical page: what a PTE points to. 24 bytes: a host of 2^28 pages
 * keeps one per written page, so its links are 32-bit indexes in their
 * slabs (slab_index) rather than pointers. A KSM page is never part of a
 * THP (the merge splits it first), so its stable node and a THP subpage's
 * folio share a word, told apart by the ksm flag: use page_stable_node()
 * and page_thp() to read them. Nor is it ever in the lru_add batch (the
 * merge is refused while the page waits there, and a page joins the batch
 * only when it is made), so the time of its merge takes the batch's word.
 * The mapcount shares a word with the node and the flags: 18 bits, enough
 * for all but a KSM page shared past 262,142 mappings, whose count is
 * kept aside (page_mapcount()).
 */
struct page {
	content *c;			/* NULL once freed (kept while rmap_items refer to it) */
	/*
	 * ksm: folio_stable_node, in k->stable_node_cache (0 while being
	 * merged); !ksm: the THP it is a subpage of, in k->thp_cache, until
	 * split (0: none)
	 */
	uint32_t folio;
	uint32_t rmap_item;		/* the rmap_item caching this page, in k->rmap_item_cache (0: none) */
	uint32_t mapcount_low : 18;	/* PAGE_MAPCOUNT_ASIDE: in k->mapcount_aside; page_mapcount() */
	uint32_t nid : 10;		/* at most TRACE_NODE_MAX */
	bool ksm : 1;			/* PageKsm */
	bool dirty : 1;			/* the PTE's dirty bit (the dirty-bit policy's only) */
	bool wrprotect : 1;		/* shared since a fork: the next store faults (do_wp_page) */
	bool ideal_seen : 1;		/* met already by the running oracle walk (ideal.c) */
	union {
		uint32_t lru_gen;	/* !ksm: k->lru_gen when it joined the lru_add batch */
		uint32_t merged_at;	/* ksm: full scans completed when it became KSM (2^32: never) */
	};
};

/* mapcount_low's largest value: the mapcount is this or more, kept in k->mapcount_aside. */
#define PAGE_MAPCOUNT_ASIDE ((UINT32_C(1) << 18) - 1)

/*
 * Mapped exactly once: exact without the side table, whose counts are all
 * PAGE_MAPCOUNT_ASIDE or more.
 */
static inline bool page_mapped_once(const struct page *p)
{
	return p->mapcount_low == 1;
}

/* The first 8 bytes, compared before the rest: cheap for a plain content. */
static inline uint64_t page_key8(const struct page *p)
{
	return content_key8(p->c);
}

/*
 * 64 bytes, as the kernel's, each in one cache line of its slab: what an
 * unstable-tree walk reads at every level is the tree link, and the
 * rmap_item's page cached (as its index in the page slab) with the high
 * half of its first 8 bytes, kept valid by the page itself (see
 * page_set_content and page_put_mapping), so a walk touches one line per
 * level and no page unless those 4 bytes tie. As in the kernel, the
 * unstable tree's link and the stable node's list share their bytes: an
 * rmap_item is in one tree at a time.
 */
struct rmap_item {
	union {
		struct rb_node node;		/* unstable tree, while UNSTABLE_FLAG */
		struct {			/* while STABLE_FLAG */
			struct stable_node *head;
			struct hlist_node hlist;	/* in head->hlist */
		};
	};
	uint32_t mm_idx;		/* whose address it is: rmap_item_mm() */
	uint32_t rmap_list;		/* next rmap_item of the mm, by address: rmap_at() */
	uint32_t cached_page;		/* get_mergeable_page's answer, while valid: rmap_item_cached_page() */
	uint32_t cached_key;		/* the high half of that page's key8 */
	/* One word: mm_vma_changed() drops the mm's caches when vma_gen wraps. */
	uint64_t vma_gen : 16;		/* mm->vma_gen when it was cached */
	uint64_t tree : 22;		/* index of the unstable tree it sits in (tree_index) */
	uint64_t flags : 10;		/* KSM_FLAG_MASK: the kernel keeps them in address */
	uint64_t changed : 1;		/* page written since it entered the unstable tree */
	uint64_t age : 8;
	uint64_t remaining_skips : 4;	/* at most skip_age()'s 8 */
	uint32_t vpn;			/* below TRACE_VPN_LIMIT */
	/*
	 * The low half of the checksum at the last visit; where the run's
	 * checksum is wider than 32 bits (k->wide_checksum), the high half is
	 * the item's side bytes in its slab. Read and set it with
	 * rmap_item_oldchecksum() and rmap_item_set_oldchecksum().
	 */
	uint32_t oldchecksum_lo;
	/* --- */
	/*
	 * The bytes at the last visit (truth): what oldchecksum was taken
	 * of, and while UNSTABLE_FLAG what was put in the unstable tree.
	 */
	content *seen;
};

/*
 * One struct for the three kinds, as in the kernel: a regular node (in the
 * tree, hlist holds its rmap_items), a chain (in the tree, hlist holds its
 * dups) and a dup (in a chain's hlist by hlist_dup, hlist holds its
 * rmap_items). 64 bytes, one cache line of its slab: a dup is in no tree,
 * so its place in the chain takes the tree link's bytes (as the kernel's
 * union of node with hlist_dup); the chain and the KSM page are 32-bit
 * indexes in their slabs (stable_node_chain(), stable_node_page()); the
 * tree (at most 1,024 nodes x 4,096 classes), the node, the count and the
 * dup flag share one word.
 */
struct stable_node {
	union {
		struct rb_node node;		/* regular node or chain: in the tree */
		struct {			/* dup */
			struct hlist_node hlist_dup;	/* in chain->hlist */
			uint32_t chain_idx;	/* its chain: stable_node_chain() */
			uint32_t chain_slot;	/* its place in chain->dups */
		};
	};
	uint32_t tree : 22;		/* index of the tree it was filed in (tree_index) */
	uint32_t nid : 10;		/* at most TRACE_NODE_MAX */
	int rmap_hlist_len : 31;	/* rmap_items, or STABLE_NODE_CHAIN */
	bool is_dup : 1;		/* the kernel's head == STABLE_NODE_DUP_HEAD */
	struct hlist_head hlist;	/* rmap_items newest first; chain: dups, head first */
	/*
	 * Chain: its dups by their place in hlist, kept where a dup joins,
	 * moves or leaves, its rmap_hlist_len changes or its page is freed,
	 * so that stable_node_dup() finds the dup its walk stops at, and the
	 * steps it takes, without walking.
	 */
	struct chain_index *dups;
	uint64_t chain_prune_time;	/* chain: jiffies */
	/* kpfn: stable_node_page(); 0 once the page was freed (stale) */
	uint32_t kpfn;
};

static inline bool is_stable_node_chain(const struct stable_node *n)
{
	return n->rmap_hlist_len == STABLE_NODE_CHAIN;
}

struct vma {
	uint64_t start, end;		/* vpn range [start, end) */
	bool mergeable;
	bool advised_off;		/* MADV_UNMERGEABLE since the last MADV_MERGEABLE or merge-any */
	bool hugepage;			/* VM_HUGEPAGE: MADV_HUGEPAGE (THP mode madvise) */
	uint16_t partial_k;		/* partial-hash: words sampled here; 0: the policy's first k */
};

#define PT_SHIFT 6
#define PT_SIZE (1u << PT_SHIFT)
/*
 * 64 PTEs. A PTE is 32 bits, half a pointer: 0 maps nothing, 1 and 2 are
 * the two zero-page markers (KSM_ZERO_PTE, ZERO_PFN_PTE), anything else
 * is a page's index in the page slab plus 2 (pte_page(), pte_of()).
 */
struct pt_chunk {
	uint64_t present[PT_SIZE / 64];
	uint32_t npresent;		/* PTEs mapping a scannable page */
	uint32_t pte[PT_SIZE];
};

#define PTE_MARKERS ((uint32_t)(uintptr_t)ZERO_PFN_PTE)

/*
 * A node of an mm's table of chunks: at the last level its slots are
 * chunks, above it nodes. 16 ways keep a one-chunk mm's table small (one
 * node) and a dense one's at 1/8 byte a page.
 */
#define PT_DIR_SHIFT 4
#define PT_DIR_SIZE (1u << PT_DIR_SHIFT)
struct pt_dir {
	void *slot[PT_DIR_SIZE];
};

/*
 * The page slab's geometry as constants (ksm_new() asserts them): pages
 * 8-byte aligned at their 24 bytes, the first after an 8-byte header,
 * 2^21 slots an arena (1,398,101 used). A PTE read and a walk level decode
 * an index with a load of the arena and shifts, not slab_at()'s loads of
 * the geometry and its multiply.
 */
#define PAGE_SLAB_SLOT_BITS 21
#define PAGE_SLAB_FIRST 8

/* The page of index (not 0) in the page slab. */
static inline struct page *page_slab_at(const struct slab *pages, uint32_t index)
{
	index--;
	return (struct page *)(pages->arenas[index >> PAGE_SLAB_SLOT_BITS] + PAGE_SLAB_FIRST +
			       (size_t)(index & ((UINT32_C(1) << PAGE_SLAB_SLOT_BITS) - 1)) *
				       sizeof(struct page));
}

/* What a PTE maps: NULL, a zero-page marker or a page of the slab pages. */
static inline struct page *pte_page(const struct slab *pages, uint32_t pte)
{
	if (pte <= PTE_MARKERS)
		return (struct page *)(uintptr_t)pte;
	return page_slab_at(pages, pte - PTE_MARKERS);
}

static inline uint32_t pte_of(const struct slab *pages, const struct page *p)
{
	if (!pte_is_page(p))
		return (uint32_t)(uintptr_t)p;
	uint32_t index = slab_index(pages, p);
	g_assert(index <= UINT32_MAX - PTE_MARKERS);
	return index + PTE_MARKERS;
}

struct mm {
	char name[TRACE_NAME_MAX + 1];
	uint32_t nid;
	bool exiting;			/* mm_users == 0 */
	bool registered;		/* MMF_VM_MERGEABLE: has a slot */
	bool merge_any;			/* MMF_VM_MERGE_ANY: prctl(PR_SET_MEMORY_MERGE, 1) */
	bool thp_advised;		/* some VMA was ever advised hugepage: faults check for THP */
	struct list_head mm_node;	/* the mm slot list, rooted in ksm->mm_head */
	uint32_t rmap_list;		/* its rmap_items by address: rmap_at() */
	uint32_t idx;			/* in k->mm_table: an rmap_item's mm_idx */
	GTree *vmas;			/* start vpn -> struct vma */
	/*
	 * Its PTE chunks by index (pt_chunk_next()): a radix table of
	 * PT_DIR_SIZE-way nodes, pt_height levels over the aligned range from
	 * pt_base, grown as chunks outside it come (NULL: no chunk yet).
	 */
	struct pt_dir *pt_root;
	uint64_t pt_base;
	uint32_t pt_height;
	uint32_t pt_dirs;		/* nodes of the table */
	uint64_t nr_chunks;
	const struct slab *page_slab;	/* the run's pages, which the PTEs name (pte_page) */
	struct pt_chunk *last_chunk;
	uint64_t last_chunk_idx;
	struct pt_chunk *peek_chunk;	/* pte_peek_keys' own last chunk */
	uint64_t peek_chunk_idx;
	uint64_t ksm_rmap_items;
	uint64_t ksm_merging_pages;
	uint64_t ksm_zero_pages;
	/*
	 * --kernel 6.1: the parent's two counters at the fork, which 6.1's
	 * dup_mm() copied with the rest of mm_struct and never cleared, so a
	 * child's ksm_stat starts from them (measured on 6.1.192); 0 on 6.18.
	 */
	uint64_t forked_rmap_items, forked_merging_pages;
	uint16_t vma_gen;		/* bumped by every map, unmap and madvise (mm_vma_changed) */
	uint32_t class_id;		/* classified by=mm: spawn order modulo the classes */
	uint32_t domain;		/* its security domain (struct ksm_domains) */
};

/* The mm and its mm_slot are one struct here: an mm has a slot while registered. */
struct ksm_scan {
	struct mm *mm_slot;		/* &ksm->mm_head between passes */
	uint64_t address;
	bool saw_mergeable;		/* stands in for the kernel's "address != 0" */
	uint32_t *rmap_list;		/* a link: rmap_at() */
	uint64_t seqnr;
};

enum ksmd_state { KSMD_WAITING, KSMD_SLEEPING };

/*
 * Walks ahead: the unstable-tree search also walks the paths of the next
 * pages ksmd will visit, loading only, a step at a time and from where it
 * left them, so that their cache misses overlap its own and the walks to
 * come find their lines loaded. They decide nothing (sim/walk_ahead.h).
 */
#define KSM_LOOKAHEAD 64	/* walks: a prefetch depth */
#define KSM_AHEAD_STEPS 2	/* steps of walks ahead per level of the search */

struct walk_ahead {
	const struct mm *mm;
	uint64_t vpn, key;
	const struct rb_node *node;	/* where it stands; NULL: fell off */
};

struct walks_ahead {
	struct walk_ahead ring[KSM_LOOKAHEAD];	/* in scan order from head */
	unsigned head, n, turn;		/* first walk, walks, the next to step */
	/*
	 * The walks hold only nodes of the unstable tree of index tree - 1
	 * (0: none yet; an index, as the roots' array moves when it grows)
	 * as it was when unstable_gen was gen. unstable_gen moves whenever a
	 * node leaves an unstable tree (walks_ahead_forget), and the next
	 * search then starts every walk again at the root, so no walk reads
	 * a node that left (or was freed) and steps need no check.
	 */
	uint32_t tree;
	uint64_t gen, unstable_gen;
	/*
	 * The first vpn of peek_mm the page-table peek has not looked at:
	 * where the ring is empty because the pages ahead are KSM pages (an
	 * idle, merged guest), the next plan goes on from there instead of
	 * reading the same PTEs and struct pages again at every visit.
	 */
	const struct mm *peek_mm;
	uint64_t peek_to;
};

struct advisor_ctx {
	uint64_t start_scan_us;
	uint64_t scan_time;
	uint64_t change;
	double cpu_ns;
};

struct ksm {
	struct ksm_options opt;
	page_hash_fn hash_fn;	/* NULL: no checksum gate */
	bool wide_checksum;	/* oldchecksum may exceed 32 bits: its high half is a side byte */
	uint64_t zero_checksum;
	enum ksm_detector detector;	/* the policy's; KSM_DETECT_CHECKSUM: the kernel's */
	uint32_t nr_classes;		/* trees per node: 1 but for classified */
	uint32_t mms_spawned;		/* classified by=mm: the next mm's class */
	uint32_t domains_next;		/* the next unnamed mm's domain */
	bool selective;			/* selective, zero-only-cross: classes are domains */
	struct exposure *expo;		/* the exposure observer's state; NULL unless opt.exposure */
	struct ksm_observers *obs;	/* the run's observers (ksm_events.h); NULL: none */
	GHashTable *domain_seen;	/* names of opt.domains' mms that joined the model */
	/* partial-hash: the zero page's value for k = 2^i words, i = 0 .. log2(KSM_PARTIAL_WORDS_MAX) */
	uint64_t partial_zero[__builtin_ctz(KSM_PARTIAL_WORDS_MAX) + 1];
	struct ksm_policy_stats pstats;
	uint64_t knob[KNOB_NR];

	GHashTable *mm_by_name;		/* live mms */
	GPtrArray *mm_table;		/* live mms by idx (NULL: free), for rmap_item_mm() */
	GArray *mm_free_idx;		/* indexes of mm_table free for the next mm */
	struct mm mm_head;		/* slot list sentinel */
	struct ksm_scan scan;

	/* nr_roots nodes x nr_classes classes each (tree_index); ksm_grow_roots adds nodes */
	struct rb_root *root_stable_tree;
	struct rb_root *root_unstable_tree;
	uint32_t nr_roots;

	/* kernel counters */
	uint64_t pages_shared, pages_sharing, pages_unshared, rmap_items;
	uint64_t stable_node_chains, stable_node_dups, zero_pages;
	uint64_t pages_scanned, pages_skipped, cow_ksm, full_scans_total;
	/* /proc/vmstat's THP events */
	uint64_t thp_fault_alloc, thp_split_page, thp_split_pmd;
	/* the page cmp_and_merge_page works on: a split may unmap it meanwhile */
	struct page *pinned;
	bool pinned_unmapped;

	struct ksm_truth truth;

	/* ksmd */
	enum ksmd_state ksmd;
	uint64_t wake_at;
	uint64_t sleep_ms_at_sleep;
	uint64_t now;			/* simulated µs */
	struct advisor_ctx advisor;
	double batch_cpu_ns;		/* this batch's, up to the last ksm_charge */
	/*
	 * What each cost term counted (cost_model.h), and what ksm_charge
	 * priced already, by row (pricing.c).
	 */
	struct cost_counts cost_n;
	uint64_t charged[COST_NR + 4];
	uint64_t partial_lines;		/* partial-hash: cache lines of sampled words hashed */
	/*
	 * The KSM page the last visit found its page merged in (COST_REVISIT
	 * counts the others); NULL after any other visit and at a batch's
	 * start, so it is always a page still mapped where it was met.
	 */
	const struct page *revisit_last;
	/*
	 * The oracle's group table at its last walk (ideal.c), in slots: the
	 * next walk starts at that size instead of doubling up from 8192, whose
	 * rehashes took 40% of a walk of a full-size trace.
	 */
	size_t ideal_slots;
	struct slab rmap_item_cache;
	struct slab page_slab;
	struct slab stable_node_cache;
	struct slab thp_cache;
	GHashTable *mapcount_aside;	/* page -> mapcount, for those of PAGE_MAPCOUNT_ASIDE or more */

	struct walks_ahead ahead;	/* sim/walk_ahead.h */

	/* the per-CPU lru_add batch, modelled as one (see lru_add below) */
	uint32_t lru_gen;
	uint32_t lru_pending;
	uint32_t pagevec_size;		/* PAGEVEC_SIZE, or PAGEVEC_SIZE_6_1 under --kernel 6.1 */
};

/*
 * A new anonymous page (first touch, CoW copy, unshare) waits in a per-CPU
 * folio batch until PAGEVEC_SIZE (31) have gathered or ksmd drains every
 * CPU at the start of a pass. The batch holds a reference, so
 * write_protect_page sees a raised refcount and KSM cannot merge the page
 * meanwhile: pages allocated mid-pass and reached later in the same pass
 * stay out of both trees (pages_volatile). Measured live on 6.18: N
 * same-content CoWs mid-pass leave exactly N mod 31 unmerged, and neither
 * munmap nor exit in between drains them (tests/conformance tricky_lru_*).
 * Which CPU a task writes from is not in a trace, so one batch stands for
 * all of them.
 */
#define PAGEVEC_SIZE 31
/*
 * Linux 6.1's: 15 ("mm: increase folio batch size" made it 31 in 6.5).
 * Measured in a 6.1.192 guest: N CoWs mid-pass leave N mod 15 unmerged,
 * and there munmap drains the batch (6.1's unmap_region() calls
 * lru_add_drain(); tests/conformance tricky_lru_batch, tricky_lru_spawn).
 */
#define PAGEVEC_SIZE_6_1 15

static inline void lru_add_drain(struct ksm *k)
{
	k->lru_gen++;
	k->lru_pending = 0;
}

static inline void lru_add(struct ksm *k, struct page *p)
{
	p->lru_gen = k->lru_gen;
	if (++k->lru_pending == k->pagevec_size)
		lru_add_drain(k);
}

static inline bool lru_batched(const struct ksm *k, const struct page *p)
{
	return !p->ksm && p->lru_gen == k->lru_gen;
}

/* An rmap_item's mm, and its successor on the mm's list (NULL at the end). */
static inline struct mm *rmap_item_mm(const struct ksm *k, const struct rmap_item *r)
{
	return g_ptr_array_index(k->mm_table, r->mm_idx);
}

static inline struct rmap_item *rmap_at(const struct ksm *k, uint32_t link)
{
	return slab_at(&k->rmap_item_cache, link);
}

/* The node's KSM page (kpfn), NULL once it was freed (stale) and for a chain. */
static inline struct page *stable_node_page(const struct ksm *k, const struct stable_node *n)
{
	return n->kpfn ? page_slab_at(&k->page_slab, n->kpfn) : NULL;
}

static inline void stable_node_set_page(const struct ksm *k, struct stable_node *n, struct page *p)
{
	n->kpfn = slab_index(&k->page_slab, p);
}

/* A dup's chain; NULL for a node that is not a dup. */
static inline struct stable_node *stable_node_chain(const struct ksm *k, const struct stable_node *n)
{
	return n->is_dup ? slab_at(&k->stable_node_cache, n->chain_idx) : NULL;
}

static inline void stable_node_set_chain(const struct ksm *k, struct stable_node *n,
					 struct stable_node *chain)
{
	n->chain_idx = slab_index(&k->stable_node_cache, chain);
}

/*
 * A stable node's KSM page was freed: the node is stale until ksmd meets
 * it. A dup's chain indexes it as stale (stable_node_dup() drops it).
 */
static inline void stable_node_page_gone(const struct ksm *k, struct stable_node *n)
{
	n->kpfn = 0;
	if (n->is_dup)
		chain_index_page_gone(stable_node_chain(k, n)->dups, n);
}

/* The page the rmap_item caches (NULL: none). */
static inline struct page *rmap_item_cached_page(const struct ksm *k, const struct rmap_item *r)
{
	return r->cached_page ? page_slab_at(&k->page_slab, r->cached_page) : NULL;
}

static inline void rmap_item_set_cached_page(struct ksm *k, struct rmap_item *r, struct page *p)
{
	r->cached_page = slab_index(&k->page_slab, p);
}

/* The rmap_item that caches p (NULL: none): rmap_item_cached_page()'s other end. */
static inline struct rmap_item *page_rmap_item(const struct ksm *k, const struct page *p)
{
	return rmap_at(k, p->rmap_item);
}

static inline void page_set_rmap_item(struct ksm *k, struct page *p, struct rmap_item *rmap_item)
{
	p->rmap_item = slab_index(&k->rmap_item_cache, rmap_item);
}

static inline struct stable_node *page_stable_node(const struct ksm *k, const struct page *p)
{
	return p->ksm ? slab_at(&k->stable_node_cache, p->folio) : NULL;
}

static inline void page_set_stable_node(struct ksm *k, struct page *p, struct stable_node *n)
{
	g_assert(p->ksm);
	p->folio = slab_index(&k->stable_node_cache, n);
}

static inline struct thp *page_thp(const struct ksm *k, const struct page *p)
{
	return p->ksm ? NULL : slab_at(&k->thp_cache, p->folio);
}

static inline void page_set_thp(struct ksm *k, struct page *p, struct thp *t)
{
	g_assert(!p->ksm);
	p->folio = slab_index(&k->thp_cache, t);
}

/*
 * The mapcount: its low 18 bits' value, or past them the side table's,
 * which holds a page only while its count is PAGE_MAPCOUNT_ASIDE or more.
 */
static inline uint32_t page_mapcount(const struct ksm *k, const struct page *p)
{
	if (G_LIKELY(p->mapcount_low != PAGE_MAPCOUNT_ASIDE))
		return p->mapcount_low;
	return GPOINTER_TO_UINT(g_hash_table_lookup(k->mapcount_aside, p));
}

void page_mapcount_set_aside(struct ksm *k, struct page *p, uint32_t mapcount);

/* One mapping more, or (delta -1) less; the new mapcount. */
static inline uint32_t page_mapcount_add(struct ksm *k, struct page *p, int delta)
{
	uint32_t n = page_mapcount(k, p) + (uint32_t)delta;
	if (G_LIKELY(n < PAGE_MAPCOUNT_ASIDE && p->mapcount_low != PAGE_MAPCOUNT_ASIDE))
		p->mapcount_low = n;
	else
		page_mapcount_set_aside(k, p, n);
	return n;
}

/*
 * The checksum at the rmap_item's last visit (0 when new). The kernel's
 * (xxhash cut to 32 bits) and every 32-bit hash fit the item; a wider one
 * keeps its high half in the item's side bytes (ksm_new).
 */
static inline uint64_t rmap_item_oldchecksum(const struct ksm *k, const struct rmap_item *r)
{
	uint64_t lo = r->oldchecksum_lo;
	if (!k->wide_checksum)
		return lo;
	return lo | (uint64_t)*(const uint32_t *)slab_side(&k->rmap_item_cache, r) << 32;
}

static inline void rmap_item_set_oldchecksum(struct ksm *k, struct rmap_item *r, uint64_t sum)
{
	r->oldchecksum_lo = (uint32_t)sum;
	if (k->wide_checksum)
		*(uint32_t *)slab_side(&k->rmap_item_cache, r) = (uint32_t)(sum >> 32);
	else
		g_assert(sum >> 32 == 0);
}

/* Trees of each kind: one per node and class. */
static inline uint32_t ksm_nr_trees(const struct ksm *k)
{
	return k->nr_roots * k->nr_classes;
}

#include "sim/ksm_events.h"

/* mm.c */
void mm_destroy(struct ksm *k, struct mm *mm);
struct vma *find_vma(struct mm *mm, uint64_t vpn);
struct vma *next_vma(struct mm *mm, uint64_t vpn);	/* first with end > vpn */
/* The mm's first PTE chunk at index *idx or above, its index in *idx; NULL: none. */
struct pt_chunk *pt_chunk_next(const struct mm *mm, uint64_t *idx);
struct page *pte_get(struct mm *mm, uint64_t vpn);
void pte_set(struct ksm *k, struct mm *mm, uint64_t vpn, struct page *p);
/*
 * The vpns and first 8 bytes of up to max non-KSM pages mapped from vpn on,
 * as far as vpn's page-table chunk goes: hints for the walks ahead
 * (ksm_do_scan), read without changing the model's state. *next: the
 * first vpn it did not look at.
 */
unsigned pte_peek_keys(struct mm *mm, uint64_t vpn, uint64_t *vpns, uint64_t *keys,
		       unsigned max, uint64_t *next);
/* First vpn in [vpn, end) mapping a scannable page, or UINT64_MAX. */
uint64_t next_present(struct mm *mm, uint64_t vpn, uint64_t end);
void page_put_mapping(struct ksm *k, struct page *p);
void page_free(struct ksm *k, struct page *p);
/* split_huge_page: every subpage becomes a small page; zero-filled ones go to the zero page. */
void thp_split(struct ksm *k, struct thp *t);
void page_uncache(struct ksm *k, struct page *p);
void break_ksm_range(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end);
bool mm_user_apply(struct ksm *k, const struct trace_record *r, GError **error);
bool mm_has_mergeable(struct mm *mm);
void mm_zap_all(struct ksm *k, struct mm *mm);

/* ksm_61.c: a knob write or prctl the modelled kernel lacks is refused (KSM_ERROR_ABSENT). */
bool ksm_kernel_refuse_knob(const struct ksm *k, enum ksm_knob knob, GError **error);
bool ksm_kernel_refuse_prctl(const struct ksm *k, GError **error);

static inline bool ksm_linux_6_1(const struct ksm *k)
{
	return k->opt.kernel == KSM_KERNEL_6_1;
}

/* domains.c: mm's domain, as it joins the model (fork: parent, else NULL). */
uint32_t domain_of_new_mm(struct ksm *k, const char *name, const struct mm *parent);
/* exposure.c: the observer ksm_observers_attach adds for opt.exposure (k->expo its state). */
struct exposure *exposure_new(const struct ksm *k);
void exposure_free(struct exposure *e);
extern const struct ksm_observer_ops exposure_observer;
/* false_positives.c: the observer that hands each false positive to opt.on_false_positive. */
extern const struct ksm_observer_ops false_positive_observer;

/* pricing.c: ksmd's CPU time so far, this batch's work included (the advisor's clock). */
double ksm_cpu_ns(struct ksm *k);
/* The batch's CPU time, ns: added to truth.cpu_ns; the next batch starts from 0. */
double ksm_batch_end(struct ksm *k);

/* ksm.c */
void free_rmap_item(struct ksm *k, struct rmap_item *rmap_item);
void free_stable_node(struct ksm *k, struct stable_node *n);
void ksm_enter(struct ksm *k, struct mm *mm);
void ksm_exit(struct ksm *k, struct mm *mm);
/* What mm.c calls where mm/memory.c calls into KSM (include/linux/ksm.h). */
void ksm_map_zero_page(struct ksm *k, struct mm *mm);
void ksm_might_unmap_zero_page(struct ksm *k, struct mm *mm, const struct page *pte);
void ksm_cow_ksm_page(struct ksm *k, struct mm *mm, uint64_t vpn, const struct page *page,
		      bool unshare);
void ksm_grow_roots(struct ksm *k, uint32_t nid);
/*
 * Every mm the model holds, each once: the slot list in scan order, then
 * the live mms without a slot (g_ptr_array_free it).
 */
GPtrArray *ksm_all_mms(const struct ksm *k);
/* ksmd's two steps per page, open to tests/sim/test_ksm.c. */
struct rmap_item *scan_get_next_rmap_item(struct ksm *k, struct page **pagep);
void cmp_and_merge_page(struct ksm *k, struct page *page, struct rmap_item *rmap_item);

/* policy_gate.c: the policies' decisions, and the truth about them */
/* gate_truth(), below: inline, as it runs at every visit of the kernel's gate. */
/*
 * The gate of a policy other than the kernel's: true when the page is to
 * wait for the next pass (volatile), as a moved checksum makes it.
 */
bool policy_gate_volatile(struct ksm *k, struct page *page, struct rmap_item *rmap_item);
/* partial-hash: the zero page's checksums, computed once (ksm_new). */
void partial_hash_init(struct ksm *k);
/* partial-hash: the zero page's checksum at the rmap_item's VMA's k. */
uint64_t partial_zero_checksum(struct ksm *k, const struct rmap_item *rmap_item);
/* partial-hash: a page merged in this VMA was written within the pass: sample more. */
void partial_hash_missed(struct ksm *k, struct vma *v);
/* classified, more than one class: the class of a page searched for or filed by mm's rmap_item. */
uint32_t classify_page(const struct ksm *k, const struct page *page, const struct mm *mm);
/* classified by=mm: a new mm's class, its spawn order modulo the classes. */
void classify_mm(struct ksm *k, struct mm *mm);
/*
 * A page about to be inserted in unstable tree tree: would another class of
 * the same node have had a page to merge it with? Then classification lost
 * a merge (class_lost).
 */
void class_lost_check(struct ksm *k, const struct page *page, uint32_t tree);

/* As the kernel's: with offset more mappings, is the node still below max_page_sharing? */
static inline bool __is_page_sharing_candidate(const struct ksm *k, const struct stable_node *n,
					       int offset)
{
	return n->rmap_hlist_len &&
	       (uint64_t)(n->rmap_hlist_len + offset) < k->knob[KNOB_MAX_PAGE_SHARING];
}

static inline bool is_page_sharing_candidate(const struct ksm *k, const struct stable_node *n)
{
	return __is_page_sharing_candidate(k, n, 0);
}

/*
 * As memcmp_pages() does, with its cost counted. Here, not in ksm.c, for
 * the unstable-tree search's compare (walk_ahead.h), which it is inlined
 * into: as an out-of-line call the search loop ran 1% more instructions.
 */
static inline int memcmp_pages(struct ksm *k, const struct page *pa, const struct page *pb)
{
	const content *a = pa->c, *b = pb->c;
	uint64_t ka = page_key8(pa), kb = page_key8(pb);
	if (ka != kb) {
		ksm_ev_memcmp_short(k, 1 + __builtin_clzll(ka ^ kb) / 8);
		return ka < kb ? -1 : 1;
	}
	int r = a == b ? 0 : content_cmp(a, b);
	/* Where bytes tie past the first 8 the compare usually runs long. */
	ksm_ev_memcmp_long(k);
	return r;
}

/* Remember the bytes of this visit: what the next visit is judged by. */
static inline void rmap_item_set_seen(struct rmap_item *rmap_item, content *c)
{
	if (rmap_item->seen != c) {
		if (rmap_item->seen)
			content_unref(rmap_item->seen);
		rmap_item->seen = content_ref(c);
	}
}

/*
 * What the simulator knows of a detector's decision: whether the bytes
 * changed since the last visit, and so whether letting the page through
 * (passed) was a false positive. Remembers the bytes for the next visit.
 * False when the bytes are known to be the same as at the last visit.
 * (The policies' gates are in policy_gate.c; this judges them all, and
 * the kernel's checksum gate at every visit, so it is inlined.)
 */
static inline bool gate_truth(struct ksm *k, struct rmap_item *rmap_item, const struct page *page,
			      bool passed)
{
	bool changed = true;
	if (rmap_item->seen) {
		changed = !content_equal(rmap_item->seen, page->c);
		ksm_ev_gate(k, rmap_item, page, passed, changed);
	}
	rmap_item_set_seen(rmap_item, page->c);
	return changed;
}

static inline uint64_t jiffies_of(uint64_t us)
{
	return us / US_PER_JIFFY;
}

static inline uint64_t msecs_to_jiffies(uint64_t ms)
{
	return (ms * HZ + MSEC_PER_SEC - 1) / MSEC_PER_SEC;
}

#endif
