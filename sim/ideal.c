// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ideal-dedup oracle: how much merging the contents allow right now,
 * against what KSM has achieved. It groups every present page of every
 * mergeable VMA by its bytes (no checksum can fool it); a group of n
 * mappings could save n - ceil(n / max_page_sharing) pages, a group of
 * zero pages all n with use_zero_pages. It walks every page table, so it
 * runs when an output asks for it, never on the hot path.
 *
 * Groups are found by the first 8 bytes (equal bytes, equal key8), which an
 * immediate content gives without building its page, then by the content
 * handle. Only when a page's handle is new to its key8 does it take the
 * page's digest, and the bytes decide between equal digests: exact, and on
 * a host of distinct pages it builds no page at all.
 */
#include <string.h>
#include "sim/ksm_internal.h"

/* A group, the first of its key8: held in the table's own slot. */
struct slot {
	uint64_t key8;
	const content *c;	/* NULL: an empty slot */
	uint32_t ptes;		/* mappings holding these bytes (a run maps < 2^32) */
	uint32_t next;		/* the next group of this key8 in more[], 1-based; 0: none */
};

/* Another group of the same key8: bytes that differ further on. */
struct more {
	const content *c;
	uint32_t ptes;
	uint32_t next;
};

struct groups {
	struct slot *slot;	/* open addressing by key8, at most 70% full */
	size_t mask, used;
	struct more *more;
	size_t n_more, cap_more;
};

/* key8s often differ in their high bytes only: every bit must reach the low ones */
static size_t slot_hash(uint64_t key8)
{
	uint64_t h = (key8 ^ key8 >> 30) * UINT64_C(0xbf58476d1ce4e5b9);
	h = (h ^ h >> 27) * UINT64_C(0x94d049bb133111eb);
	return (size_t)(h ^ h >> 31);
}

static struct slot *find_slot(struct slot *slot, size_t mask, uint64_t key8)
{
	size_t i = slot_hash(key8) & mask;
	while (slot[i].c && slot[i].key8 != key8)
		i = (i + 1) & mask;
	return &slot[i];
}

static void rehash(struct groups *gs, size_t slots)
{
	struct slot *old = gs->slot;
	size_t old_slots = old ? gs->mask + 1 : 0;
	gs->slot = g_new0(struct slot, slots);
	gs->mask = slots - 1;
	for (size_t i = 0; i < old_slots; i++)
		if (old[i].c)
			*find_slot(gs->slot, gs->mask, old[i].key8) = old[i];
	g_free(old);
}

static bool same_bytes(const content *a, uint64_t digest_b, const content *b)
{
	return content_digest((content *)a) == digest_b && content_equal(a, b);
}

/* The mapping count of pc's group, a new group if its bytes are new. */
static uint32_t *group_of(struct groups *gs, const content *pc)
{
	if ((gs->used + 1) * 10 > (gs->mask + 1) * 7)
		rehash(gs, (gs->mask + 1) * 2);
	uint64_t key8 = content_key8(pc);
	struct slot *s = find_slot(gs->slot, gs->mask, key8);
	if (!s->c) {
		*s = (struct slot){ .key8 = key8, .c = pc };
		gs->used++;
		return &s->ptes;
	}
	if (s->c == pc)
		return &s->ptes;
	for (uint32_t j = s->next; j; j = gs->more[j - 1].next)
		if (gs->more[j - 1].c == pc)
			return &gs->more[j - 1].ptes;
	/* a handle new to this key8: other bytes, or the same bytes told otherwise */
	uint64_t d = content_digest((content *)pc);
	if (same_bytes(s->c, d, pc))
		return &s->ptes;
	for (uint32_t j = s->next; j; j = gs->more[j - 1].next)
		if (same_bytes(gs->more[j - 1].c, d, pc))
			return &gs->more[j - 1].ptes;
	if (gs->n_more == gs->cap_more) {
		g_assert(gs->cap_more < UINT32_MAX / 2);
		gs->cap_more = gs->cap_more ? gs->cap_more * 2 : 1024;
		gs->more = g_renew(struct more, gs->more, gs->cap_more);
	}
	gs->more[gs->n_more] = (struct more){ .c = pc, .next = s->next };
	s->next = (uint32_t)++gs->n_more;
	return &gs->more[gs->n_more - 1].ptes;
}

static uint64_t group_saved(const struct ksm *k, const content *c, uint64_t ptes)
{
	uint64_t m = k->knob[KNOB_MAX_PAGE_SHARING];
	if (k->knob[KNOB_USE_ZERO_PAGES] && content_is_zero(c))
		return ptes;
	return ptes >= 2 ? ptes - (ptes + m - 1) / m : 0;
}

void ksm_ideal(struct ksm *k, struct ksm_ideal *out)
{
	memset(out, 0, sizeof(*out));
	struct groups gs = { 0 };
	rehash(&gs, k->ideal_slots ? k->ideal_slots : 8192);
	/* pages met once already (KSM, or shared by a fork): their flag is cleared after */
	GPtrArray *shared = g_ptr_array_new();
	content *zero = content_zero();
	GPtrArray *all = ksm_all_mms(k);
	for (guint i = 0; i < all->len; i++) {
		struct mm *mm = all->pdata[i];
		if (!mm->registered || mm->exiting)
			continue;	/* no mergeable VMA, or gone */
		struct vma *v = NULL;
		struct pt_chunk *c;
		for (uint64_t idx = 0; (c = pt_chunk_next(mm, &idx)); idx++) {
			uint64_t base = idx << PT_SHIFT;
			for (unsigned j = 0; j < PT_SIZE; j++) {
				struct page *p = pte_page(&k->page_slab, c->pte[j]);
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
					if (p->ksm || page_mapcount(k, p) > 1) {
						if (p->ideal_seen) {
							out->actual_saved++;
						} else {
							p->ideal_seen = true;
							g_ptr_array_add(shared, p);
						}
					}
				}
				(*group_of(&gs, pc))++;
			}
		}
	}
	g_assert(out->mergeable_pages < UINT32_MAX);	/* no group count wrapped */
	uint64_t ideal = 0;
	for (size_t i = 0; i <= gs.mask; i++)
		if (gs.slot[i].c)
			ideal += group_saved(k, gs.slot[i].c, gs.slot[i].ptes);
	for (size_t i = 0; i < gs.n_more; i++)
		ideal += group_saved(k, gs.more[i].c, gs.more[i].ptes);
	out->ideal_saved = ideal;
	out->missed_merges = ideal > out->actual_saved ? ideal - out->actual_saved : 0;
	for (guint i = 0; i < shared->len; i++)
		((struct page *)shared->pdata[i])->ideal_seen = false;
	g_ptr_array_free(shared, TRUE);
	k->ideal_slots = gs.mask + 1;
	g_free(gs.slot);
	g_free(gs.more);
	g_ptr_array_free(all, TRUE);
	content_unref(zero);
}
