// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The policies' decisions (sim/MODEL.md, "Policies"), taken where the
 * kernel takes its own: ksm.c calls in from the gate of cmp_and_merge_page,
 * from try_to_merge_with_zero_page and from tree_index, and mm.c from the
 * CoW of a KSM page (through ksm_cow_ksm_page). policy.c holds the
 * registry and the parser. Also what classification loses
 * (class_lost_check): truth, without cost or side effect on the model.
 * (gate_truth, the judgement of every gate, is inline in ksm_internal.h;
 * a false positive's report is false_positives.c's.)
 */
#include <string.h>
#include <xxhash.h>
#include "sim/ksm_internal.h"

/* 2^64 / phi, odd: Fibonacci hashing's multiplier (the kernel's GOLDEN_RATIO_64 is its negation). */
#define GOLDEN_RATIO_2_64 0x9E3779B97F4A7C15ull

/* ---- partial-hash ---- */

/* The words sampled for this rmap_item's VMA. */
static unsigned partial_words(struct ksm *k, const struct rmap_item *rmap_item)
{
	struct vma *v = find_vma(rmap_item_mm(k, rmap_item), rmap_item->vpn);
	return v && v->partial_k ? v->partial_k : k->opt.policy.partial_k;
}

/*
 * kw 32-bit words at a stride of 1024 / kw, hashed as the kernel hashes a
 * page (XXH64, seed 0, low 32 bits): kw = 1024 is the kernel's xxhash.
 */
static uint64_t partial_checksum(const uint8_t *bytes, unsigned kw)
{
	uint32_t w[KSM_PARTIAL_WORDS_MAX];
	unsigned stride = KSM_PARTIAL_WORDS_MAX / kw;
	for (unsigned j = 0; j < kw; j++)
		memcpy(&w[j], bytes + 4 * (size_t)j * stride, 4);
	return (uint32_t)XXH64(w, (size_t)kw * 4, 0);
}

void partial_hash_init(struct ksm *k)
{
	if (k->detector != KSM_DETECT_PARTIAL)
		return;
	content *z = content_zero();
	for (unsigned i = 0; i < G_N_ELEMENTS(k->partial_zero); i++)
		k->partial_zero[i] = partial_checksum(content_peek(z), 1u << i);
	content_unref(z);
}

uint64_t partial_zero_checksum(struct ksm *k, const struct rmap_item *rmap_item)
{
	return k->partial_zero[__builtin_ctz(partial_words(k, rmap_item))];
}

void partial_hash_missed(struct ksm *k, struct vma *v)
{
	if (k->detector != KSM_DETECT_PARTIAL || !v)
		return;
	unsigned cur = v->partial_k ? v->partial_k : k->opt.policy.partial_k;
	if (cur < k->opt.policy.partial_k_max) {
		v->partial_k = (uint16_t)(cur * 2);
		ksm_ev_partial_grow(k);
	}
}

/* ---- the gate ---- */

bool policy_gate_volatile(struct ksm *k, struct page *page, struct rmap_item *rmap_item)
{
	switch (k->detector) {
	case KSM_DETECT_DIRTY_BIT: {
		bool written = page->dirty;
		ksm_ev_dirty_check(k, rmap_item, page, written);
		if (written) {
			page->dirty = false;
			ksm_ev_dirty_flush(k);
		}
		gate_truth(k, rmap_item, page, !written);
		return written;
	}
	case KSM_DETECT_PARTIAL: {
		unsigned kw = partial_words(k, rmap_item);
		uint64_t checksum = partial_checksum(content_peek(page->c), kw);
		ksm_ev_partial_checksum(k, kw);
		gate_truth(k, rmap_item, page, checksum == rmap_item_oldchecksum(k, rmap_item));
		if (rmap_item_oldchecksum(k, rmap_item) != checksum) {
			rmap_item_set_oldchecksum(k, rmap_item, checksum);
			return true;
		}
		return false;
	}
	default:
		return false;
	}
}

/* ---- classified ---- */

uint32_t classify_page(const struct ksm *k, const struct page *page, const struct mm *mm)
{
	if (k->opt.policy.class_by != KSM_CLASS_BY_KEY8)
		return mm->class_id;
	/* Equal pages share their first 8 bytes, so they always share a class. */
	return (uint32_t)(((page_key8(page) * GOLDEN_RATIO_2_64) >> 32) % k->nr_classes);
}

void classify_mm(struct ksm *k, struct mm *mm)
{
	if (k->selective)	/* a tree per domain */
		mm->class_id = mm->domain + 1;
	else
		mm->class_id = k->mms_spawned++ % k->nr_classes;
}

/* ---- what the classified policy loses (truth: no cost, no side effects) ---- */

static bool unstable_tree_has_twin(const struct ksm *k, struct rb_node *n,
				   const struct page *page)
{
	while (n) {
		const struct rmap_item *it = rb_entry(n, struct rmap_item, node);
		struct mm *mm = rmap_item_mm(k, it);
		const struct page *p = mm->exiting ? NULL : pte_get(mm, it->vpn);
		if (!pte_is_page(p))
			return false;
		int ret = p->c == page->c ? 0 : content_cmp(page->c, p->c);
		if (!ret)
			return true;
		n = ret < 0 ? n->rb_left : n->rb_right;
	}
	return false;
}

static bool stable_tree_has_twin(const struct ksm *k, struct rb_node *n, const struct page *page)
{
	while (n) {
		const struct stable_node *node = rb_entry(n, struct stable_node, node);
		if (is_stable_node_chain(node)) {
			if (!node->hlist.first)
				return false;
			node = hlist_entry(node->hlist.first, struct stable_node, hlist_dup);
		}
		const struct page *kpage = stable_node_page(k, node);
		if (!kpage)
			return false;
		int ret = kpage->c == page->c ? 0 : content_cmp(page->c, kpage->c);
		if (!ret)
			return true;
		n = ret < 0 ? n->rb_left : n->rb_right;
	}
	return false;
}

void class_lost_check(struct ksm *k, const struct page *page, uint32_t tree)
{
	uint32_t base = tree - tree % k->nr_classes;
	for (uint32_t i = base; i < base + k->nr_classes; i++) {
		if (i == tree)
			continue;
		if (unstable_tree_has_twin(k, k->root_unstable_tree[i].rb_node, page) ||
		    stable_tree_has_twin(k, k->root_stable_tree[i].rb_node, page)) {
			ksm_ev_class_search(k, true);
			return;
		}
	}
	ksm_ev_class_search(k, false);
}
