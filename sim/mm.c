// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Simulated address spaces and what processes do to them: map, write
 * (with the copy-on-write of KSM pages and KSM zero pages), madvise,
 * unmap and exit. Only cow_ksm and ksm_zero_pages move here, at once, as
 * in the kernel, through ksm.c's hooks (ksm_cow_ksm_page,
 * ksm_map_zero_page, ksm_might_unmap_zero_page); everything else waits
 * for ksmd's next visit.
 */
#include <string.h>
#include "sim/ksm_internal.h"

static gint cmp_u64(gconstpointer a, gconstpointer b, gpointer unused)
{
	uint64_t x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
	return x < y ? -1 : x > y;
}

/* ---- the table of PTE chunks ---- */

/* The span of indexes a node at level (1: its slots are chunks) covers. */
static inline uint64_t pt_span(uint32_t level)
{
	return UINT64_C(1) << (PT_DIR_SHIFT * level);
}

static inline unsigned pt_way(uint64_t idx, uint32_t level)
{
	return (idx >> (PT_DIR_SHIFT * (level - 1))) & (PT_DIR_SIZE - 1);
}

static void pt_dir_free(struct pt_dir *d, uint32_t level)
{
	if (!d)
		return;
	for (unsigned i = 0; i < PT_DIR_SIZE; i++) {
		if (level > 1)
			pt_dir_free(d->slot[i], level - 1);
		else
			g_free(d->slot[i]);
	}
	g_free(d);
}

/* The chunk of index idx, NULL when the mm has none there. */
static struct pt_chunk *pt_lookup(const struct mm *mm, uint64_t idx)
{
	if (!mm->pt_root || idx - mm->pt_base >= pt_span(mm->pt_height))
		return NULL;
	struct pt_dir *d = mm->pt_root;
	for (uint32_t level = mm->pt_height; level > 1; level--) {
		d = d->slot[pt_way(idx, level)];
		if (!d)
			return NULL;
	}
	return d->slot[pt_way(idx, 1)];
}

static void pt_insert(struct mm *mm, uint64_t idx, struct pt_chunk *c)
{
	g_assert(idx < (UINT64_C(1) << 32));	/* vpns are below 2^32 */
	if (!mm->pt_root) {
		mm->pt_root = g_new0(struct pt_dir, 1);
		mm->pt_dirs++;
		mm->pt_height = 1;
		mm->pt_base = idx & ~(pt_span(1) - 1);
	}
	/* out of range: a level above, the old root one of its slots */
	while (idx - mm->pt_base >= pt_span(mm->pt_height)) {
		struct pt_dir *up = g_new0(struct pt_dir, 1);
		mm->pt_dirs++;
		mm->pt_height++;
		up->slot[pt_way(mm->pt_base, mm->pt_height)] = mm->pt_root;
		mm->pt_root = up;
		mm->pt_base &= ~(pt_span(mm->pt_height) - 1);
	}
	struct pt_dir *d = mm->pt_root;
	for (uint32_t level = mm->pt_height; level > 1; level--) {
		void **slot = &d->slot[pt_way(idx, level)];
		if (!*slot) {
			*slot = g_new0(struct pt_dir, 1);
			mm->pt_dirs++;
		}
		d = *slot;
	}
	d->slot[pt_way(idx, 1)] = c;
	mm->nr_chunks++;
}

static bool pt_dir_empty(const struct pt_dir *d)
{
	for (unsigned i = 0; i < PT_DIR_SIZE; i++)
		if (d->slot[i])
			return false;
	return true;
}

/* Frees the chunk of index idx, and the nodes it leaves empty. */
static void pt_remove(struct mm *mm, uint64_t idx)
{
	struct pt_dir *path[64 / PT_DIR_SHIFT + 1];
	struct pt_dir *d = mm->pt_root;
	for (uint32_t level = mm->pt_height; level > 1; level--) {
		path[level] = d;
		d = d->slot[pt_way(idx, level)];
	}
	path[1] = d;
	g_free(d->slot[pt_way(idx, 1)]);
	d->slot[pt_way(idx, 1)] = NULL;
	mm->nr_chunks--;
	for (uint32_t level = 1; level <= mm->pt_height && pt_dir_empty(path[level]); level++) {
		g_free(path[level]);
		mm->pt_dirs--;
		if (level == mm->pt_height) {
			mm->pt_root = NULL;
			mm->pt_height = 0;
			break;
		}
		path[level + 1]->slot[pt_way(idx, level + 1)] = NULL;
	}
}

/* The first chunk at index idx or above under d, at level, whose range starts at lo. */
static struct pt_chunk *pt_dir_next(const struct pt_dir *d, uint32_t level, uint64_t lo,
				    uint64_t *idx)
{
	uint64_t span = pt_span(level - 1);
	for (unsigned i = *idx > lo ? (unsigned)((*idx - lo) / span) : 0; i < PT_DIR_SIZE; i++) {
		if (!d->slot[i])
			continue;
		uint64_t at = lo + i * span;
		if (level == 1) {
			*idx = at;
			return d->slot[i];
		}
		uint64_t from = MAX(*idx, at);
		struct pt_chunk *c = pt_dir_next(d->slot[i], level - 1, at, &from);
		if (c) {
			*idx = from;
			return c;
		}
	}
	return NULL;
}

struct pt_chunk *pt_chunk_next(const struct mm *mm, uint64_t *idx)
{
	if (!mm->pt_root || *idx >= mm->pt_base + pt_span(mm->pt_height))
		return NULL;
	return pt_dir_next(mm->pt_root, mm->pt_height, mm->pt_base, idx);
}

static struct mm *mm_new(const struct ksm *k, const char *name, uint32_t nid)
{
	struct mm *mm = g_new0(struct mm, 1);
	mm->page_slab = &k->page_slab;
	g_strlcpy(mm->name, name, sizeof(mm->name));
	mm->nid = nid;
	mm->vmas = g_tree_new_full(cmp_u64, NULL, NULL, g_free);
	mm->last_chunk_idx = UINT64_MAX;
	mm->peek_chunk_idx = UINT64_MAX;
	return mm;
}

void mm_destroy(struct ksm *k, struct mm *mm)
{
	g_assert(!mm->rmap_list);
	if (mm->idx < k->mm_table->len && g_ptr_array_index(k->mm_table, mm->idx) == mm) {
		g_ptr_array_index(k->mm_table, mm->idx) = NULL;
		g_array_append_val(k->mm_free_idx, mm->idx);
	}
	g_tree_destroy(mm->vmas);
	pt_dir_free(mm->pt_root, mm->pt_height);
	g_free(mm);
}

/* ---- VMAs ---- */

struct vma *find_vma(struct mm *mm, uint64_t vpn)
{
	/* The last VMA starting at or below vpn, if it reaches past vpn. */
	GTreeNode *n = g_tree_upper_bound(mm->vmas, GSIZE_TO_POINTER(vpn));
	n = n ? g_tree_node_previous(n) : g_tree_node_last(mm->vmas);
	if (!n)
		return NULL;
	struct vma *v = g_tree_node_value(n);
	return vpn < v->end ? v : NULL;
}

struct vma *next_vma(struct mm *mm, uint64_t vpn)
{
	struct vma *v = find_vma(mm, vpn);
	if (v)
		return v;
	GTreeNode *n = g_tree_lower_bound(mm->vmas, GSIZE_TO_POINTER(vpn));
	return n ? g_tree_node_value(n) : NULL;
}

static struct vma *vma_insert(struct mm *mm, uint64_t start, uint64_t end, bool mergeable)
{
	struct vma *v = g_new(struct vma, 1);
	v->start = start;
	v->end = end;
	v->mergeable = mergeable;
	v->advised_off = false;
	v->hugepage = false;
	v->partial_k = 0;
	g_tree_insert(mm->vmas, GSIZE_TO_POINTER(start), v);
	return v;
}

/* A VMA like v (its flags) over [start, end). */
static struct vma *vma_insert_like(struct mm *mm, uint64_t start, uint64_t end,
				   const struct vma *v)
{
	struct vma *n = vma_insert(mm, start, end, v->mergeable);
	n->advised_off = v->advised_off;
	n->hugepage = v->hugepage;
	n->partial_k = v->partial_k;
	return n;
}

/* Split so that no VMA straddles start or end. */
static void vma_split_at(struct mm *mm, uint64_t at)
{
	struct vma *v = find_vma(mm, at);
	if (!v || v->start == at)
		return;
	uint64_t end = v->end;
	v->end = at;
	vma_insert_like(mm, at, end, v);
}

/* VMAs inside [start, end), after splitting at both ends, in order. */
static GPtrArray *vmas_in(struct mm *mm, uint64_t start, uint64_t end)
{
	vma_split_at(mm, start);
	vma_split_at(mm, end);
	GPtrArray *out = g_ptr_array_new();
	for (struct vma *v = next_vma(mm, start); v && v->start < end;) {
		g_ptr_array_add(out, v);
		GTreeNode *n = g_tree_lookup_node(mm->vmas, GSIZE_TO_POINTER(v->start));
		n = g_tree_node_next(n);
		v = n ? g_tree_node_value(n) : NULL;
	}
	return out;
}

bool mm_has_mergeable(struct mm *mm)
{
	for (GTreeNode *n = g_tree_node_first(mm->vmas); n; n = g_tree_node_next(n))
		if (((struct vma *)g_tree_node_value(n))->mergeable)
			return true;
	return false;
}

/* ---- page tables ---- */

static struct pt_chunk *chunk_get(struct mm *mm, uint64_t idx, bool create)
{
	if (mm->last_chunk_idx == idx)
		return mm->last_chunk;
	struct pt_chunk *c = pt_lookup(mm, idx);
	if (!c && create) {
		c = g_new0(struct pt_chunk, 1);
		pt_insert(mm, idx, c);
	}
	if (c) {
		mm->last_chunk = c;
		mm->last_chunk_idx = idx;
	}
	return c;
}

struct page *pte_get(struct mm *mm, uint64_t vpn)
{
	struct pt_chunk *c = chunk_get(mm, vpn >> PT_SHIFT, false);
	return c ? pte_page(mm->page_slab, c->pte[vpn & (PT_SIZE - 1)]) : NULL;
}

static inline bool scannable(const struct page *p)
{
	return pte_is_page(p);
}

void pte_set(struct ksm *k, struct mm *mm, uint64_t vpn, struct page *p)
{
	struct pt_chunk *c = chunk_get(mm, vpn >> PT_SHIFT, p != NULL);
	if (!c)
		return;
	unsigned i = vpn & (PT_SIZE - 1);
	bool was = c->pte[i] > PTE_MARKERS, is = scannable(p);
	c->pte[i] = pte_of(mm->page_slab, p);
	if (is && !page_mapped_once(p))
		page_uncache(k, p);	/* a second mapping: a cached rmap_item would be ambiguous */
	if (was != is) {
		c->present[i / 64] ^= UINT64_C(1) << (i % 64);
		c->npresent += is ? 1 : -1;
	}
}

unsigned pte_peek_keys(struct mm *mm, uint64_t vpn, uint64_t *vpns, uint64_t *keys, unsigned max,
		       uint64_t *next)
{
	uint64_t idx = vpn >> PT_SHIFT;
	const struct pt_chunk *c;
	unsigned n = 0;
	if (idx == mm->last_chunk_idx) {
		c = mm->last_chunk;
	} else {
		/* a cache of its own: the model's last_chunk stays as the model left it */
		if (idx != mm->peek_chunk_idx) {
			mm->peek_chunk = pt_lookup(mm, idx);
			mm->peek_chunk_idx = idx;
		}
		c = mm->peek_chunk;
	}
	unsigned i = vpn & (PT_SIZE - 1);
	if (c) {
		for (; i < PT_SIZE && n < max; i++) {
			const struct page *p = pte_page(mm->page_slab, c->pte[i]);
			if (pte_is_page(p) && !p->ksm) {
				vpns[n] = (idx << PT_SHIFT) | i;
				keys[n++] = page_key8(p);
			}
		}
	} else {
		i = PT_SIZE;
	}
	*next = (idx << PT_SHIFT) + i;	/* i may be PT_SIZE: the next chunk */
	return n;
}

uint64_t next_present(struct mm *mm, uint64_t vpn, uint64_t end)
{
	while (vpn < end) {
		uint64_t idx = vpn >> PT_SHIFT;
		struct pt_chunk *c = chunk_get(mm, idx, false);
		if (!c) {
			c = pt_chunk_next(mm, &idx);
			if (!c)
				return UINT64_MAX;
			vpn = idx << PT_SHIFT;
			mm->last_chunk = c;
			mm->last_chunk_idx = idx;
			if (vpn >= end)
				return UINT64_MAX;
		}
		if (c->npresent) {
			unsigned i = vpn & (PT_SIZE - 1);
			while (i < PT_SIZE) {
				uint64_t w = c->present[i / 64] >> (i % 64);
				if (w) {
					i += __builtin_ctzll(w);
					uint64_t hit = (idx << PT_SHIFT) | i;
					return hit < end ? hit : UINT64_MAX;
				}
				i = (i / 64 + 1) * 64;
			}
		}
		vpn = (idx + 1) << PT_SHIFT;
	}
	return UINT64_MAX;
}

/* ---- pages ---- */

/* Takes the reference to c. */
static void page_set_content(struct ksm *k, struct page *p, content *c)
{
	struct rmap_item *rmap_item = page_rmap_item(k, p);
	if (rmap_item) {
		rmap_item->cached_key = (uint32_t)(content_key8(c) >> 32);
		if (rmap_item->seen && !content_equal(rmap_item->seen, c))
			rmap_item->changed = true;
	}
	if (p->c)
		content_unref(p->c);
	p->c = c;
}

static struct page *page_alloc(struct ksm *k, content *c, uint32_t nid)
{
	struct page *p = slab_alloc0(&k->page_slab);
	p->mapcount_low = 1;	/* page_mapcount() */
	p->nid = nid;
	page_set_content(k, p, c);
	ksm_ev_page_written(k, p);
	return p;
}

static struct page *page_new(struct ksm *k, content *c, uint32_t nid)
{
	struct page *p = page_alloc(k, c, nid);
	lru_add(k, p);
	return p;
}

/*
 * page_mapcount_add()'s slow path: a count of PAGE_MAPCOUNT_ASIDE or more
 * moves to the side table, one below it back into the page.
 */
void page_mapcount_set_aside(struct ksm *k, struct page *p, uint32_t mapcount)
{
	if (mapcount >= PAGE_MAPCOUNT_ASIDE) {
		p->mapcount_low = PAGE_MAPCOUNT_ASIDE;
		g_hash_table_insert(k->mapcount_aside, p, GUINT_TO_POINTER(mapcount));
	} else {
		g_hash_table_remove(k->mapcount_aside, p);
		p->mapcount_low = mapcount;
	}
}

void page_uncache(struct ksm *k, struct page *p)
{
	if (page_rmap_item(k, p)) {
		page_rmap_item(k, p)->cached_page = 0;
		page_set_rmap_item(k, p, NULL);
	}
}

/*
 * A map, unmap or madvise: the mm's cached pages (get_mergeable_page) are
 * checked again. An rmap_item keeps 16 bits of the generation, so when it
 * wraps every cache of the mm is dropped, lest one 65,536 changes old pass.
 */
static void mm_vma_changed(struct ksm *k, struct mm *mm)
{
	if (++mm->vma_gen)
		return;
	for (struct rmap_item *r = rmap_at(k, mm->rmap_list); r; r = rmap_at(k, r->rmap_list))
		if (r->cached_page)
			page_uncache(k, rmap_item_cached_page(k, r));
}

void page_free(struct ksm *k, struct page *p)
{
	if (page_stable_node(k, p))
		stable_node_page_gone(k, page_stable_node(k, p));
	content_unref(p->c);
	slab_free(&k->page_slab, p);
}

static void thp_put(struct ksm *k, struct thp *t)
{
	if (--t->pages == 0) {
		g_assert(t->nmaps == 0);
		g_free(t->maps);
		slab_free(&k->thp_cache, t);
	}
}

/*
 * One mapping of p went away; the last one frees it (its node goes stale),
 * unless ksmd is working on it: then when it is done.
 */
void page_put_mapping(struct ksm *k, struct page *p)
{
	page_uncache(k, p);
	if (page_mapcount_add(k, p, -1))
		return;
	if (page_thp(k, p)) {
		thp_put(k, page_thp(k, p));
		page_set_thp(k, p, NULL);
	}
	if (p == k->pinned) {
		k->pinned_unmapped = true;
		return;
	}
	page_free(k, p);
}

/* ---- transparent huge pages ---- */

/*
 * Would a first store at vpn fault in a THP? As THP mode madvise decides
 * it: the HPAGE_PMD_NR-aligned range around vpn lies in hugepage VMAs
 * with one set of flags (the kernel would have merged them into one VMA)
 * and has no page table yet (no PTE in it: the model keeps none empty).
 */
static bool thp_fault_allowed(struct mm *mm, uint64_t vpn)
{
	uint64_t h = vpn & ~(uint64_t)(HPAGE_PMD_NR - 1), end = h + HPAGE_PMD_NR;
	struct vma *v = find_vma(mm, h);
	if (!v || !v->hugepage)
		return false;
	bool mergeable = v->mergeable;
	while (v->end < end) {
		struct vma *n = find_vma(mm, v->end);
		if (!n || !n->hugepage || n->mergeable != mergeable)
			return false;
		v = n;
	}
	uint64_t idx = h >> PT_SHIFT;
	return !pt_chunk_next(mm, &idx) || idx >= end >> PT_SHIFT;
}

/* The mm's mapping of t, if it has one. */
static struct thp_map *thp_map_of(struct thp *t, const struct mm *mm)
{
	for (uint32_t i = 0; i < t->nmaps; i++)
		if (t->maps[i].mm == mm)
			return &t->maps[i];
	return NULL;
}

/* Mappings of the folio that m holds, as the large mapcount counts them. */
static uint32_t thp_map_count(const struct thp_map *m)
{
	return m ? (m->pmd_mapped ? 1 : m->ptes) : 0;
}

/*
 * As folio_add_return_large_mapcount() does with CONFIG_MM_ID: n more
 * mappings by mm. An mm that holds no slot takes a free one; the folio is
 * then maybe shared if others map it too. A third mm holds no slot (the
 * second one's arrival already marked the folio shared).
 */
static void folio_add_large_mapcount(struct thp *t, struct mm *mm, uint32_t n)
{
	t->mapcount += n;
	if (t->mm_id[0] == mm || t->mm_id[1] == mm)
		return;
	if (!t->mm_id[0]) {
		t->mm_id[0] = mm;
		if (t->mapcount != n)
			t->maybe_shared = true;
	} else if (!t->mm_id[1]) {
		t->mm_id[1] = mm;
		t->maybe_shared = true;
	}
}

/*
 * As folio_sub_return_large_mapcount() does: n fewer mappings by mm, which
 * keeps left. A slot whose mm still maps the folio changes nothing more;
 * otherwise the slot is freed, and when one slot then owns every mapping
 * the folio is exclusive again.
 */
static void folio_sub_large_mapcount(struct thp *t, struct mm *mm, uint32_t n, uint32_t left)
{
	t->mapcount -= n;
	for (int i = 0; i < 2; i++) {
		if (t->mm_id[i] != mm)
			continue;
		if (left)
			return;
		t->mm_id[i] = NULL;
	}
	for (int i = 0; i < 2; i++) {
		uint32_t owned = t->mm_id[i] ? thp_map_count(thp_map_of(t, t->mm_id[i])) : 0;
		if (owned == t->mapcount)
			t->maybe_shared = false;
	}
}

/* mm maps one more subpage of t, by PTE or (pmd_mapped, a fork's copy_huge_pmd) within a PMD. */
static void thp_map_pte(struct thp *t, struct mm *mm, bool pmd_mapped)
{
	struct thp_map *m = thp_map_of(t, mm);
	if (!m) {
		t->maps = g_renew(struct thp_map, t->maps, t->nmaps + 1);
		m = &t->maps[t->nmaps++];
		*m = (struct thp_map){ .mm = mm, .pmd_mapped = pmd_mapped };
		if (pmd_mapped)
			folio_add_large_mapcount(t, mm, 1);
	}
	m->ptes++;
	if (!m->pmd_mapped)
		folio_add_large_mapcount(t, mm, 1);
}

/*
 * One PTE of mm that mapped a subpage of t goes (zap, or a CoW copy takes
 * its place): before page_put_mapping, which may free t. The last one
 * of a PMD-mapped folio is the PMD's own zap (zap_huge_pmd).
 */
static void thp_unmap_pte(struct thp *t, struct mm *mm)
{
	struct thp_map *m = thp_map_of(t, mm);
	g_assert(m && m->ptes);
	m->ptes--;
	if (!m->pmd_mapped)
		folio_sub_large_mapcount(t, mm, 1, m->ptes);
	else if (!m->ptes)
		folio_sub_large_mapcount(t, mm, 1, 0);
	if (!m->ptes)
		*m = t->maps[--t->nmaps];
}

/*
 * do_huge_pmd_anonymous_page: a zeroed PMD-sized folio, the store in one
 * subpage. A large folio moves the CPU's whole lru_add batch to the LRU at
 * once, itself included.
 */
static void thp_fault(struct ksm *k, struct mm *mm, uint64_t vpn, content *next)
{
	uint64_t h = vpn & ~(uint64_t)(HPAGE_PMD_NR - 1);
	struct thp *t = slab_alloc0(&k->thp_cache);
	content *zero = content_zero();
	lru_add_drain(k);
	t->start = h;
	t->pages = HPAGE_PMD_NR;
	t->nmaps = 1;
	t->maps = g_new(struct thp_map, 1);
	t->maps[0] = (struct thp_map){ .mm = mm, .ptes = HPAGE_PMD_NR, .pmd_mapped = true };
	t->mapcount = 1;	/* folio_set_large_mapcount */
	t->mm_id[0] = mm;
	for (uint32_t i = 0; i < HPAGE_PMD_NR; i++) {
		struct page *p = page_alloc(k, h + i == vpn ? next : content_ref(zero), mm->nid);
		page_set_thp(k, p, t);
		p->lru_gen = k->lru_gen - 1;	/* on the LRU */
		p->dirty = h + i == vpn;
		pte_set(k, mm, h + i, p);
	}
	content_unref(zero);
	k->thp_fault_alloc++;
}

/*
 * __split_huge_pmd of mm's PMD mapping of t: 512 PTEs in its place, as
 * writable as the PMD was; the folio stays whole. The PTE mappings are
 * added before the PMD's is removed, so mm keeps its mm_id slot.
 */
static void thp_split_pmd(struct ksm *k, struct thp *t, struct mm *mm)
{
	struct thp_map *m = thp_map_of(t, mm);
	if (!m || !m->pmd_mapped)
		return;
	m->pmd_mapped = false;
	folio_add_large_mapcount(t, mm, m->ptes);
	folio_sub_large_mapcount(t, mm, 1, m->ptes);
	k->thp_split_pmd++;
}

/* split_huge_pmd_address: a cut through a PMD-mapped THP maps it by PTEs; the folio stays whole. */
static void thp_split_pmd_at(struct ksm *k, struct mm *mm, uint64_t at)
{
	if (at % HPAGE_PMD_NR == 0)
		return;
	struct page *p = pte_get(mm, at);
	if (!pte_is_page(p) || !page_thp(k, p)) {
		p = pte_get(mm, at - 1);
		if (!pte_is_page(p) || !page_thp(k, p))
			return;
	}
	thp_split_pmd(k, page_thp(k, p), mm);
}

/*
 * split_huge_page, as KSM calls it with one reference of its own: the
 * rmap walk (unmap_folio) splits the PMD of every mm that maps the folio
 * by one (thp_split_pmd + 1 each), then every subpage becomes a small page,
 * still mapped (and write-protected) wherever it was; a subpage that holds
 * only zeros is mapped to the zero page instead in every mm
 * (remap_page(RMP_USE_SHARED_ZEROPAGE), since 6.12; under --kernel 6.1 it
 * stays a small page of zeros) and freed. The caller has ruled
 * out a second reference to the folio, which makes the kernel's refuse.
 */
void thp_split(struct ksm *k, struct thp *t)
{
	uint64_t start = t->start;
	for (uint32_t i = 0; i < t->nmaps; i++)
		if (t->maps[i].pmd_mapped)
			k->thp_split_pmd++;
	k->thp_split_page++;
	uint32_t nmaps = t->nmaps;
	struct thp_map *maps = g_memdup2(t->maps, nmaps * sizeof(*maps));
	t->nmaps = 0;
	t->pages++;	/* held until the loop is done */
	for (uint64_t vpn = start; vpn < start + HPAGE_PMD_NR; vpn++) {
		struct page *p = NULL;
		for (uint32_t i = 0; i < nmaps; i++) {
			struct page *q = pte_get(maps[i].mm, vpn);
			if (pte_is_page(q) && (q == p || page_thp(k, q) == t)) {
				p = q;
				if (page_thp(k, p)) {
					page_set_thp(k, p, NULL);
					t->pages--;
				}
				if (content_is_zero(p->c) && !ksm_linux_6_1(k)) {
					pte_set(k, maps[i].mm, vpn, ZERO_PFN_PTE);
					/* may free p, if no later mm maps it */
					page_put_mapping(k, p);
				}
			}
		}
	}
	g_free(maps);
	thp_put(k, t);
}

/*
 * As wp_can_reuse_anon_folio() does for a small anonymous page that a fork
 * left mapped write-protected: reused in place once this is its only
 * mapping. A page off the LRU (waiting in the lru_add batch) makes the
 * fault drain the batch first, unless the page already has more than three
 * references (mappings plus the batch's), which fails at once.
 */
static bool wp_can_reuse_anon_page(struct ksm *k, struct page *p)
{
	bool batched = lru_batched(k, p);
	if (page_mapcount(k, p) + batched > 3)
		return false;
	if (batched)
		lru_add_drain(k);
	if (page_mapcount(k, p) > 1)
		return false;
	p->wrprotect = false;
	return true;
}

/*
 * A store to a write-protected subpage of a THP that mm maps, as 6.18
 * handles it. Mapped by mm's PMD, do_huge_pmd_wp_page reuses the whole
 * folio when the PMD is its only reference (the other mms are gone: the
 * PMD becomes writable, no later store there faults); otherwise it splits
 * mm's PMD (thp_split_pmd + 1) and the fault falls back to the PTE. There
 * do_wp_page asks __wp_can_reuse_large_anon_folio: the subpage is reused
 * in place when the folio is not maybe-shared (mm alone maps it) and more
 * than one of its pages is mapped; otherwise the caller copies it into a
 * small page (wp_page_copy), and the folio stays large, mapped by PTEs
 * here and as before elsewhere. A THP is never in the lru_add batch.
 */
static bool wp_can_reuse_thp_subpage(struct ksm *k, struct mm *mm, struct page *p)
{
	struct thp *t = page_thp(k, p);
	const struct thp_map *m = thp_map_of(t, mm);
	if (m->pmd_mapped) {
		if (t->mapcount == 1) {
			for (uint64_t vpn = t->start; vpn < t->start + HPAGE_PMD_NR; vpn++) {
				struct page *q = pte_get(mm, vpn);
				if (pte_is_page(q) && page_thp(k, q) == t)
					q->wrprotect = false;
			}
			return true;
		}
		thp_split_pmd(k, t, mm);
	}
	if (ksm_linux_6_1(k)) {
		/*
		 * 6.1's do_wp_page knows no large mapcount: a subpage that
		 * lost PageAnonExclusive at the fork is reused only when its
		 * folio's refcount is this one mapping (page_count() == 1).
		 */
		if (t->mapcount != 1)
			return false;
	} else if (t->mapcount <= 1 || t->maybe_shared) {
		return false;
	}
	p->wrprotect = false;
	return true;
}

/* The bytes a store leaves over cur: replacement's, or tc applied. */
static content *stored_content(const content *cur, const struct trace_content *tc,
			       content *replacement)
{
	return replacement ? content_ref(replacement) : content_apply(cur, tc);
}

/* A store to vpn: fault in, CoW a KSM page or KSM zero page, or write in place. */
static void write_page(struct ksm *k, struct mm *mm, uint64_t vpn, const struct trace_content *tc,
		       content *replacement)
{
	struct page *p = pte_get(mm, vpn);
	content *next;
	if (!p) {
		next = stored_content(NULL, tc, replacement);
		if (mm->thp_advised && thp_fault_allowed(mm, vpn)) {
			thp_fault(k, mm, vpn, next);
			return;
		}
		pte_set(k, mm, vpn, p = page_new(k, next, mm->nid));
		p->dirty = true;
		return;
	}
	if (p == ZERO_PFN_PTE) {
		/* wp_page_copy from the zero pfn: a small page, whatever the VMA's advice */
		next = stored_content(NULL, tc, replacement);
		pte_set(k, mm, vpn, p = page_new(k, next, mm->nid));
		p->dirty = true;
		return;
	}
	if (p == KSM_ZERO_PTE) {
		/* wp_page_copy from the zero pfn: no KSM folio, so no cow_ksm. */
		ksm_might_unmap_zero_page(k, mm, p);
		ksm_ev_replace_page(k);	/* wp_page_copy's */
		next = stored_content(NULL, tc, replacement);
		pte_set(k, mm, vpn, p = page_new(k, next, mm->nid));
		p->dirty = true;
		return;
	}
	next = stored_content(p->c, tc, replacement);
	if (p->ksm) {
		/* KSM folios are never reused in place: always copied. */
		ksm_cow_ksm_page(k, mm, vpn, p, false);
		struct page *copy = page_new(k, next, mm->nid);
		copy->dirty = true;
		pte_set(k, mm, vpn, copy);
		page_put_mapping(k, p);
		return;
	}
	if (p->wrprotect && !(page_thp(k, p) ? wp_can_reuse_thp_subpage(k, mm, p)
					  : wp_can_reuse_anon_page(k, p))) {
		/* wp_page_copy: the other mappings keep the old page; no KSM folio, no cow_ksm */
		ksm_ev_replace_page(k);	/* wp_page_copy's */
		struct page *copy = page_new(k, next, mm->nid);
		copy->dirty = true;
		pte_set(k, mm, vpn, copy);
		if (page_thp(k, p))
			thp_unmap_pte(page_thp(k, p), mm);
		page_put_mapping(k, p);
		return;
	}
	page_set_content(k, p, next);
	p->dirty = true;
	ksm_ev_page_written(k, p);
}

/* Zap every PTE of [start, end). */
static void zap_range(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end)
{
	for (uint64_t vpn = start; vpn < end;) {
		uint64_t idx = vpn >> PT_SHIFT;
		struct pt_chunk *c = chunk_get(mm, idx, false);
		if (!c) {
			if (!pt_chunk_next(mm, &idx))
				return;
			vpn = MAX(vpn, idx << PT_SHIFT);
			continue;
		}
		uint64_t stop = MIN(end, (idx + 1) << PT_SHIFT);
		for (; vpn < stop; vpn++) {
			struct page *p = pte_page(mm->page_slab, c->pte[vpn & (PT_SIZE - 1)]);
			if (!p)
				continue;
			ksm_ev_unmap(k, mm, vpn, p, false);
			pte_set(k, mm, vpn, NULL);
			if (pte_is_page(p) && page_thp(k, p))
				thp_unmap_pte(page_thp(k, p), mm);
			if (pte_is_page(p))
				page_put_mapping(k, p);
			else
				ksm_might_unmap_zero_page(k, mm, p);
		}
		if (c->npresent == 0) {
			bool empty = true;
			for (unsigned i = 0; i < PT_SIZE && empty; i++)
				empty = !c->pte[i];
			if (empty) {
				if (mm->last_chunk == c)
					mm->last_chunk_idx = UINT64_MAX;
				if (mm->peek_chunk == c)
					mm->peek_chunk_idx = UINT64_MAX;
				pt_remove(mm, idx);
			}
		}
	}
}

void mm_zap_all(struct ksm *k, struct mm *mm)
{
	zap_range(k, mm, 0, UINT64_MAX);
}

/*
 * break_ksm over a range: an unshare fault on every KSM page (cow_ksm, a
 * private copy) and every KSM zero PTE (a private zeroed page, no cow_ksm).
 */
void break_ksm_range(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end)
{
	for (uint64_t vpn = start; vpn < end; vpn++) {
		struct page *p = pte_get(mm, vpn);
		if (!p)
			continue;
		if (p == KSM_ZERO_PTE) {
			ksm_might_unmap_zero_page(k, mm, p);
			/*
			 * Before 6.6 ("ksm: support unsharing KSM-placed zero
			 * pages") break_ksm passed the zero page by: it stays
			 * mapped, as any zero PTE, and KSM forgets it.
			 */
			pte_set(k, mm, vpn, ksm_linux_6_1(k) ? ZERO_PFN_PTE :
				page_new(k, content_zero(), mm->nid));
		} else if (p != ZERO_PFN_PTE && p->ksm) {
			ksm_cow_ksm_page(k, mm, vpn, p, true);
			pte_set(k, mm, vpn, page_new(k, content_ref(p->c), mm->nid));
			page_put_mapping(k, p);
		}
	}
}

/*
 * The exposure's unmap channel (sim/MODEL.md): an unmerge event for every
 * present PTE of [start, end) before break_ksm_range; only when observed.
 */
static void unmerge_range(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end)
{
	if (k->obs)
		for (uint64_t vpn = start; vpn < end; vpn++) {
			struct page *p = pte_get(mm, vpn);
			if (p)
				ksm_ev_unmap(k, mm, vpn, p, true);
		}
	break_ksm_range(k, mm, start, end);
}

/*
 * VMA v's flags change, within a madvise or munmap of [start, end): the
 * kernel splits the VMA at start and end, and a cut through a PMD-mapped
 * THP splits the PMD.
 */
static void vma_cut(struct ksm *k, struct mm *mm, const struct vma *v, uint64_t start, uint64_t end)
{
	if (v->start == start)
		thp_split_pmd_at(k, mm, start);
	if (v->end == end)
		thp_split_pmd_at(k, mm, end);
}

static void advise(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end, bool mergeable)
{
	mm_vma_changed(k, mm);
	GPtrArray *vs = vmas_in(mm, start, end);
	for (guint i = 0; i < vs->len; i++) {
		struct vma *v = vs->pdata[i];
		v->advised_off = !mergeable;
		if (mergeable) {
			if (v->mergeable)
				continue;
			if (!mm->registered)
				ksm_enter(k, mm);
			vma_cut(k, mm, v, start, end);
			v->mergeable = true;
		} else {
			if (!v->mergeable)
				continue;
			vma_cut(k, mm, v, start, end);
			unmerge_range(k, mm, v->start, v->end);
			v->mergeable = false;
		}
	}
	g_ptr_array_free(vs, TRUE);
}

/*
 * MADV_HUGEPAGE / MADV_NOHUGEPAGE: only later faults see it; a THP already
 * there stays (khugepaged, which could collapse small pages into one, is
 * not modelled: the live replay holds it still).
 */
static void advise_thp(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end, bool huge)
{
	mm_vma_changed(k, mm);
	GPtrArray *vs = vmas_in(mm, start, end);
	for (guint i = 0; i < vs->len; i++) {
		struct vma *v = vs->pdata[i];
		if (v->hugepage != huge)
			vma_cut(k, mm, v, start, end);
		v->hugepage = huge;
		mm->thp_advised |= huge;
	}
	g_ptr_array_free(vs, TRUE);
}

/*
 * prctl(PR_SET_MEMORY_MERGE): 1 as ksm_enable_merge_any() does (the mm
 * joins ksmd's list even with no VMA yet, and every VMA becomes
 * mergeable; a second 1 changes nothing), 0 as ksm_disable_merge_any()
 * does (every mergeable VMA is unmerged and cleared, whoever set it; the
 * slot stays until ksmd finds no mergeable VMA). 0 without 1 is a no-op.
 */
static void set_memory_merge(struct ksm *k, struct mm *mm, bool on)
{
	if (on == mm->merge_any)
		return;
	mm_vma_changed(k, mm);
	if (on && !mm->registered)
		ksm_enter(k, mm);
	mm->merge_any = on;
	for (GTreeNode *n = g_tree_node_first(mm->vmas); n; n = g_tree_node_next(n)) {
		struct vma *v = g_tree_node_value(n);
		if (on) {
			v->mergeable = true;
			v->advised_off = false;
		} else if (v->mergeable) {
			unmerge_range(k, mm, v->start, v->end);
			v->mergeable = false;
		}
	}
}

/*
 * As the mm/ksm.c side of fork (dup_mmap, copy_page_range) does: the child
 * joins ksmd's list behind the cursor if the parent is on it and inherits
 * merge-any; it gets every VMA with its flags and every PTE. An anonymous
 * page is then mapped twice and write-protected in both (the next store
 * to either copies it); a KSM page gains a mapping that no rmap_item
 * tracks until ksmd meets it in the child; a KSM zero PTE is copied as
 * is, and counted at once. A THP is shared as it is mapped: a PMD-mapped
 * one by a PMD in the child too (copy_huge_pmd), a PTE-mapped one PTE by
 * PTE (copy_present_ptes); either way write-protected in both, its
 * subpages mapped twice.
 */
static struct mm *mm_fork(struct ksm *k, struct mm *parent, const char *name)
{
	struct mm *child = mm_new(k, name, parent->nid);
	if (ksm_linux_6_1(k)) {
		child->forked_rmap_items = parent->ksm_rmap_items + parent->forked_rmap_items;
		child->forked_merging_pages = parent->ksm_merging_pages + parent->forked_merging_pages;
	}
	child->merge_any = parent->merge_any;
	child->thp_advised = parent->thp_advised;
	if (parent->registered)
		ksm_enter(k, child);
	for (GTreeNode *n = g_tree_node_first(parent->vmas); n; n = g_tree_node_next(n)) {
		struct vma *v = g_tree_node_value(n);
		vma_insert_like(child, v->start, v->end, v);
	}
	struct pt_chunk *c;
	for (uint64_t idx = 0; (c = pt_chunk_next(parent, &idx)); idx++) {
		uint64_t base = idx << PT_SHIFT;
		for (unsigned i = 0; i < PT_SIZE; i++) {
			struct page *p = pte_page(parent->page_slab, c->pte[i]);
			if (!p)
				continue;
			if (p == KSM_ZERO_PTE) {
				ksm_map_zero_page(k, child);
			} else if (p != ZERO_PFN_PTE) {
				page_mapcount_add(k, p, 1);
				if (!p->ksm)
					p->wrprotect = true;
				if (page_thp(k, p))
					thp_map_pte(page_thp(k, p), child,
						    thp_map_of(page_thp(k, p), parent)->pmd_mapped);
			}
			pte_set(k, child, base + i, p);
		}
	}
	return child;
}

static void unmap(struct ksm *k, struct mm *mm, uint64_t start, uint64_t end)
{
	mm_vma_changed(k, mm);
	thp_split_pmd_at(k, mm, start);
	thp_split_pmd_at(k, mm, end);
	zap_range(k, mm, start, end);
	GPtrArray *vs = vmas_in(mm, start, end);
	for (guint i = 0; i < vs->len; i++)
		g_tree_remove(mm->vmas, GSIZE_TO_POINTER(((struct vma *)vs->pdata[i])->start));
	g_ptr_array_free(vs, TRUE);
}

/*
 * The security domain of a new mm named name (forked from parent, or
 * NULL); false when selective has no tree left for one more domain.
 */
static bool mm_domain(struct ksm *k, const char *name, const struct mm *parent,
		      uint32_t *domain, GError **error)
{
	*domain = domain_of_new_mm(k, name, parent);
	if (k->selective && *domain >= KSM_CLASSES_MAX - 1) {
		g_set_error(error, KSM_ERROR, KSM_ERROR_NOT_MODELLED,
			    "mm '%s': --policy %s keeps trees for %u security domains, and this"
			    " would be one more (name mms in --domain)", name,
			    k->opt.policy.row->name, KSM_CLASSES_MAX - 1);
		return false;
	}
	return true;
}

/* An mm's idx: what its rmap_items name it by (rmap_item_mm), reused after it. */
static void mm_set_idx(struct ksm *k, struct mm *mm)
{
	GArray *free_idx = k->mm_free_idx;
	if (free_idx->len) {
		mm->idx = g_array_index(free_idx, uint32_t, free_idx->len - 1);
		g_array_set_size(free_idx, free_idx->len - 1);
		g_ptr_array_index(k->mm_table, mm->idx) = mm;
	} else {
		mm->idx = k->mm_table->len;
		g_ptr_array_add(k->mm_table, mm);
	}
}

/* A new mm, spawned or forked, joins the model: by name, in its domain and class, with its node's trees. */
static void mm_add(struct ksm *k, struct mm *mm, uint32_t domain)
{
	mm_set_idx(k, mm);
	mm->domain = domain;
	g_hash_table_insert(k->mm_by_name, mm->name, mm);
	classify_mm(k, mm);
	ksm_grow_roots(k, mm->nid);
}

/* fork PARENT CHILD is refused for a child name in use. */
static bool fork_allowed(struct ksm *k, const struct trace_record *r, GError **error)
{
	if (g_hash_table_lookup(k->mm_by_name, r->child)) {
		g_set_error(error, KSM_ERROR, KSM_ERROR_EXISTS, "mm '%s' already exists", r->child);
		return false;
	}
	return true;
}

bool mm_user_apply(struct ksm *k, const struct trace_record *r, GError **error)
{
	struct mm *mm = NULL;
	uint32_t domain;
	if (r->verb != TRACE_SPAWN) {
		mm = g_hash_table_lookup(k->mm_by_name, r->mm);
		if (!mm) {
			/* The reader checks this; a direct caller may not have. */
			g_set_error(error, KSM_ERROR, KSM_ERROR_NO_MM,
				    "mm '%s' does not exist", r->mm);
			return false;
		}
	}
	switch (r->verb) {
	case TRACE_SPAWN:
		if (!mm_domain(k, r->mm, NULL, &domain, error))
			return false;
		mm_add(k, mm_new(k, r->mm, r->node), domain);
		break;
	case TRACE_FORK:
		if (!fork_allowed(k, r, error))
			return false;
		if (!mm_domain(k, r->child, mm, &domain, error))
			return false;
		mm_add(k, mm_fork(k, mm, r->child), domain);
		break;
	case TRACE_MAP:
		mm_vma_changed(k, mm);
		/* ksm_vma_flags: under merge-any a new VMA is mergeable, and rejoins the list */
		vma_insert(mm, r->vpn, r->vpn + r->npages, mm->merge_any);
		if (mm->merge_any && !mm->registered)
			ksm_enter(k, mm);
		break;
	case TRACE_PRCTL:
		if (!ksm_kernel_refuse_prctl(k, error))
			return false;
		set_memory_merge(k, mm, r->value != 0);
		break;
	case TRACE_ADVISE:
		if (r->thp_advice)
			advise_thp(k, mm, r->vpn, r->vpn + r->npages,
				   r->thp_advice == TRACE_ADVICE_HUGEPAGE);
		else
			advise(k, mm, r->vpn, r->vpn + r->npages, r->mergeable);
		break;
	case TRACE_WRITE:
	case TRACE_FILL: {
		/* A replacing form gives every page one shared content object. */
		content *same = NULL;
		if (r->content.form == CONTENT_ZERO || r->content.form == CONTENT_BYTE ||
		    r->content.form == CONTENT_RAND || r->content.form == CONTENT_BLOB ||
		    r->content.form == CONTENT_DIGEST)
			same = content_apply(NULL, &r->content);
		for (uint64_t i = 0; i < r->npages; i++)
			write_page(k, mm, r->vpn + i, &r->content, same);
		if (same)
			content_unref(same);
		break;
	}
	case TRACE_FILLSEQ:
		for (uint64_t i = 0; i < r->npages; i++) {
			content *c = content_rand(r->seed + i);
			write_page(k, mm, r->vpn + i, NULL, c);
			content_unref(c);
		}
		break;
	case TRACE_UNMAP:
		if (ksm_linux_6_1(k))
			lru_add_drain(k);	/* 6.1's unmap_region(), measured (PAGEVEC_SIZE_6_1) */
		unmap(k, mm, r->vpn, r->vpn + r->npages);
		break;
	case TRACE_EXIT:
		g_hash_table_remove(k->mm_by_name, mm->name);
		ksm_exit(k, mm);
		mm->exiting = true;
		zap_range(k, mm, 0, UINT64_MAX);
		if (!mm->registered)
			mm_destroy(k, mm);
		break;
	default:
		g_assert_not_reached();
	}
	return true;
}
