/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dups of one stable-node chain, indexed by their place in the chain's
 * list, so that stable_node_dup() finds the dup the kernel's walk would
 * stop at, and how many dups that walk looks at, without walking.
 *
 * The kernel only ever adds a dup at the head of the list (a new dup, or
 * the chosen one moved to the front) and deletes anywhere, so a dup's place
 * is a slot number that only grows: the head holds the highest slot, and
 * the dups a walk meets before a dup are exactly those in higher slots.
 * Four Fenwick trees over the slots count every dup, the live ones, the
 * live candidates (is_page_sharing_candidate() with a page) and the stale
 * ones (page freed), so the first of any kind and a dup's place in the
 * walk are O(log n). Slots are renumbered, in list order, when they run
 * out: amortised O(1) a change.
 *
 * Private to sim/ (the model and its invariant checker).
 */
#ifndef KSMSIM_SIM_CHAIN_INDEX_H
#define KSMSIM_SIM_CHAIN_INDEX_H

#include <stdbool.h>
#include <stdint.h>

struct stable_node;

/* What a dup is, for the index: one bit a tree. */
enum chain_kind {
	CHAIN_ALL = 0,		/* every listed dup */
	CHAIN_LIVE,		/* its page is there */
	CHAIN_CAND,		/* live and is_page_sharing_candidate() */
	CHAIN_STALE,		/* its page was freed */
	CHAIN_KINDS
};

struct chain_index {
	/*
	 * The counts ksm_check() recounts from the list: dups listed, of them
	 * is_page_sharing_candidate() (stale or not), of them stale.
	 */
	uint32_t nr_dups, nr_candidates, nr_stale;
	uint32_t total[CHAIN_KINDS];	/* dups of each kind */
	uint32_t cap, next;		/* slots allocated; the next head's slot */
	uint32_t *tree[CHAIN_KINDS];	/* Fenwick trees, 1-based, cap + 1 each */
	uint8_t *bits;			/* a slot's kinds (1 << chain_kind) */
	struct stable_node **at;	/* a slot's dup, NULL when free */
};

struct chain_index *chain_index_new(void);
void chain_index_free(struct chain_index *ci);

/* A dup joins at the head: candidate says is_page_sharing_candidate(). */
void chain_index_add_head(struct chain_index *ci, struct stable_node *dup, bool candidate);
/* A dup leaves the list. */
void chain_index_del(struct chain_index *ci, struct stable_node *dup);
/* A dup's candidacy or page changed: its kinds recounted. */
void chain_index_update(struct chain_index *ci, struct stable_node *dup, bool candidate);
/* A dup's page was freed (stable_node_page_gone()): it is stale. */
void chain_index_page_gone(struct chain_index *ci, struct stable_node *dup);

/* The dup nearest the head of a kind, or NULL when there is none. */
struct stable_node *chain_index_first(const struct chain_index *ci, enum chain_kind kind);
/* How many dups a walk from the head looks at up to and including dup. */
uint32_t chain_index_place(const struct chain_index *ci, const struct stable_node *dup);

#endif
