// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksm-flood: the shape of LTP's ksm01/ksm02 tests. Processes fill all their
 * memory with one byte, then change patterns step by step; every step ends
 * in a settle and a mark, so the counters at each mark are exact. Then a
 * CoW flood (every merged page stored to), its re-merge, and run=2.
 */
#include <stdio.h>
#include "workloads/gen.h"

#define FLOOD_STEPS 6

static bool all_fill(struct gen *g, char (*mm)[16], unsigned n, uint64_t pages, uint8_t byte,
		     int except, uint8_t other)
{
	for (unsigned p = 0; p < n; p++)
		gen_fill(g, mm[p], GEN_GUEST_BASE, pages, CONTENT_BYTE,
			 (int)p == except ? other : byte);
	return !g->failed;
}

bool gen_ksm_flood(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	unsigned n = sz->vms;
	char (*mm)[16] = g_malloc0(sizeof(*mm) * n);
	uint64_t pages = sz->pages;

	for (unsigned p = 0; p < n; p++) {
		snprintf(mm[p], sizeof(mm[p]), "p%u", p + 1);
		gen_spawn(g, mm[p]);
		gen_map(g, mm[p], GEN_GUEST_BASE, pages);
		gen_advise(g, mm[p], GEN_GUEST_BASE, pages, true);
	}
	for (unsigned step = 0; step < FLOOD_STEPS && !g->failed; step++) {
		gen_at(g, sz->duration_us * step / FLOOD_STEPS);
		switch (step) {
		case 0:	/* merge flood: every page of every process 'c' */
			all_fill(g, mm, n, pages, 'c', -1, 0);
			gen_settle(g, 2);
			gen_mark(g, "merge_c");
			break;
		case 1:	/* one process changes everything: a CoW of each of its pages */
			gen_fill(g, mm[0], GEN_GUEST_BASE, pages, CONTENT_BYTE, 'a');
			gen_settle(g, 2);
			gen_mark(g, "p1_a");
			break;
		case 2:	/* all 'a' but the last process, which goes 'b' */
			all_fill(g, mm, n, pages, 'a', (int)n - 1, 'b');
			gen_settle(g, 2);
			gen_mark(g, "a_last_b");
			break;
		case 3:	/* one page of the last process differs */
			gen_fill(g, mm[n - 1], GEN_GUEST_BASE, 1, CONTENT_BYTE, 'd');
			gen_settle(g, 2);
			gen_mark(g, "one_d");
			break;
		case 4:	/* CoW flood: every page stored to, same bytes, then merged again */
			all_fill(g, mm, n, pages, 'a', (int)n - 1, 'b');
			gen_mark(g, "cow_flood");
			gen_settle(g, 2);
			gen_mark(g, "remerged");
			break;
		case 5:	/* unmerge everything */
			gen_set(g, KNOB_RUN, 2);
			gen_mark(g, "unmerged");
			break;
		}
	}
	gen_at(g, sz->duration_us);
	for (unsigned p = 0; p < n; p++)
		gen_exit(g, mm[p]);
	g_free(mm);
	return gen_mark(g, "end");
}
