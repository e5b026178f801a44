// SPDX-License-Identifier: GPL-2.0-or-later
/* A stable-node chain's dups by their place in its list (chain_index.h). */
#include "sim/chain_index.h"

#include <glib.h>

#include "sim/ksm_internal.h"

struct chain_index *chain_index_new(void)
{
	return g_new0(struct chain_index, 1);
}

void chain_index_free(struct chain_index *ci)
{
	if (!ci)
		return;
	for (int t = 0; t < CHAIN_KINDS; t++)
		g_free(ci->tree[t]);
	g_free(ci->bits);
	g_free(ci->at);
	g_free(ci);
}

static void tree_add(uint32_t *tree, uint32_t cap, uint32_t slot, int delta)
{
	for (uint32_t i = slot + 1; i <= cap; i += i & -i)
		tree[i] += delta;
}

/* Dups of the tree's kind in slots [0, slot]. */
static uint32_t tree_prefix(const uint32_t *tree, uint32_t slot)
{
	uint32_t n = 0;
	for (uint32_t i = slot + 1; i; i -= i & -i)
		n += tree[i];
	return n;
}

/* The slot holding the rank-th (1-based, from slot 0) dup of the tree's kind. */
static uint32_t tree_find(const uint32_t *tree, uint32_t cap, uint32_t rank)
{
	uint32_t pos = 0, step = 1;
	while (step <= cap / 2)
		step <<= 1;
	for (; step; step >>= 1)
		if (pos + step <= cap && tree[pos + step] < rank) {
			pos += step;
			rank -= tree[pos];
		}
	return pos;	/* the 1-based index pos + 1, as a slot */
}

/* Beside the trees' bits: is_page_sharing_candidate(), stale or not. */
#define CANDIDATE_BIT (1u << CHAIN_KINDS)

static unsigned kinds_of(const struct stable_node *dup, bool candidate)
{
	unsigned b = 1u << CHAIN_ALL | (candidate ? CANDIDATE_BIT : 0);
	if (dup->kpfn)	/* its page not freed yet */
		b |= 1u << CHAIN_LIVE | (candidate ? 1u << CHAIN_CAND : 0);
	else
		b |= 1u << CHAIN_STALE;
	return b;
}

/* A slot's kinds become b: the trees and the counts follow. */
static void set_kinds(struct chain_index *ci, uint32_t slot, unsigned b)
{
	unsigned was = ci->bits[slot];
	for (int t = 0; t < CHAIN_KINDS; t++)
		if ((was ^ b) & 1u << t) {
			int delta = b & 1u << t ? 1 : -1;
			tree_add(ci->tree[t], ci->cap, slot, delta);
			ci->total[t] += delta;
		}
	ci->nr_dups += !!(b & 1u << CHAIN_ALL) - !!(was & 1u << CHAIN_ALL);
	ci->nr_stale += !!(b & 1u << CHAIN_STALE) - !!(was & 1u << CHAIN_STALE);
	ci->nr_candidates += !!(b & CANDIDATE_BIT) - !!(was & CANDIDATE_BIT);
	ci->bits[slot] = b;
}

/*
 * Slots ran out: the listed dups renumbered 0.. from the tail (ascending
 * slots keep list order), into room for as many changes again, and the
 * trees rebuilt in O(cap).
 */
static void renumber(struct chain_index *ci)
{
	uint32_t cap = 2 * ci->nr_dups + 16, n = 0;
	struct stable_node **at = g_new0(struct stable_node *, cap);
	uint8_t *bits = g_new0(uint8_t, cap);
	for (uint32_t s = 0; s < ci->next; s++)
		if (ci->at[s]) {
			at[n] = ci->at[s];
			bits[n] = ci->bits[s];
			at[n]->chain_slot = n;
			n++;
		}
	g_free(ci->at);
	g_free(ci->bits);
	ci->at = at;
	ci->bits = bits;
	ci->cap = cap;
	ci->next = n;
	for (int t = 0; t < CHAIN_KINDS; t++) {
		g_free(ci->tree[t]);
		uint32_t *tree = ci->tree[t] = g_new0(uint32_t, cap + 1);
		for (uint32_t i = 1; i <= cap; i++) {
			tree[i] += !!(bits[i - 1] & 1u << t);
			uint32_t up = i + (i & -i);
			if (up <= cap)
				tree[up] += tree[i];
		}
	}
}

void chain_index_add_head(struct chain_index *ci, struct stable_node *dup, bool candidate)
{
	if (ci->next == ci->cap)
		renumber(ci);
	uint32_t slot = ci->next++;
	ci->at[slot] = dup;
	dup->chain_slot = slot;
	set_kinds(ci, slot, kinds_of(dup, candidate));
}

void chain_index_del(struct chain_index *ci, struct stable_node *dup)
{
	set_kinds(ci, dup->chain_slot, 0);
	ci->at[dup->chain_slot] = NULL;
}

void chain_index_update(struct chain_index *ci, struct stable_node *dup, bool candidate)
{
	set_kinds(ci, dup->chain_slot, kinds_of(dup, candidate));
}

void chain_index_page_gone(struct chain_index *ci, struct stable_node *dup)
{
	unsigned was = ci->bits[dup->chain_slot];
	set_kinds(ci, dup->chain_slot, kinds_of(dup, was & CANDIDATE_BIT));
}

struct stable_node *chain_index_first(const struct chain_index *ci, enum chain_kind kind)
{
	uint32_t n = ci->total[kind];
	return n ? ci->at[tree_find(ci->tree[kind], ci->cap, n)] : NULL;
}

uint32_t chain_index_place(const struct chain_index *ci, const struct stable_node *dup)
{
	uint32_t below = dup->chain_slot ? tree_prefix(ci->tree[CHAIN_ALL], dup->chain_slot - 1) : 0;
	return ci->nr_dups - below;
}
