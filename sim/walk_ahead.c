// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The walks ahead's ring, filled before each visit (sim/walk_ahead.h has
 * what they are for and the parts the search inlines).
 */
#include "sim/walk_ahead.h"

/*
 * The walks ahead, for the pages after the cursor in its mm: those for
 * pages the cursor has reached are dropped, the ring is filled up from
 * after its last page. A new walk starts at the root of the tree the
 * walks are in (see struct walks_ahead).
 */
void walks_ahead_plan(struct ksm *k)
{
	struct walks_ahead *w = &k->ahead;
	struct mm *mm = k->scan.mm_slot;
	uint64_t cur = k->scan.address;	/* just past the page visited now */

	while (w->n) {
		const struct walk_ahead *a = &w->ring[w->head];
		if (a->mm == mm && a->vpn >= cur)
			break;
		w->head = (w->head + 1) % KSM_LOOKAHEAD;
		w->n--;
	}
	if (w->n < KSM_LOOKAHEAD / 2) {
		uint64_t vpns[KSM_LOOKAHEAD], keys[KSM_LOOKAHEAD];
		uint64_t from = w->n ? w->ring[(w->head + w->n - 1) % KSM_LOOKAHEAD].vpn + 1 : cur;
		/*
		 * Skip what an earlier peek saw (a peek_to past the window is
		 * another pass's or mm's), and peek no further than the window:
		 * as far as a half-full ring of one page a chunk reaches.
		 */
		const uint64_t window = (uint64_t)KSM_LOOKAHEAD / 2 * PT_SIZE;
		if (w->peek_mm == mm && w->peek_to > from && w->peek_to <= cur + window + 2 * PT_SIZE)
			from = w->peek_to;
		if (from >= cur + window)
			return;
		uint64_t next;
		unsigned got = pte_peek_keys(mm, from, vpns, keys, KSM_LOOKAHEAD - w->n, &next);
		if (!got)
			got = pte_peek_keys(mm, next, vpns, keys, KSM_LOOKAHEAD - w->n, &next);
		w->peek_mm = mm;
		w->peek_to = next;
		for (unsigned j = 0; j < got; j++) {
			unsigned slot = (w->head + w->n++) % KSM_LOOKAHEAD;
			w->ring[slot] = (struct walk_ahead){
				.mm = mm, .vpn = vpns[j], .key = keys[j],
				.node = w->tree ? k->root_unstable_tree[w->tree - 1].rb_node : NULL,
			};
		}
	}
}
