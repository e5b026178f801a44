// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * probe: the KSM side channel's attacker. A victim holds K pages the
 * attacker knows (a library's pages, a key file's) among background
 * guests; at time t the attacker writes copies of them into its own
 * memory, and every P seconds writes them again: a write that takes a CoW
 * fault tells it a copy was merged, so the victim holds that page. With
 * `ksmsim run --domain victim=victim --domain attacker=attacker
 * --exposure-csv`, the rows domain:attacker give how soon after t the
 * copies merged (write_to_merge_us, one merge a page when P is 0) and how
 * long each stayed merged until the next probe write (merged_us).
 *
 * The background guests (--vms x --mem-mib) are each a domain of their
 * own: a shared image (identical in every guest), zeroed free pages and
 * private pages, all written at t = 0, as idle guests after boot.
 */
#include <stdio.h>
#include "workloads/gen.h"

enum { TAG_PROBE_IMAGE = 0x300, TAG_PROBE_PRIV, TAG_PROBE_VICTIM };

/* Fractions of each guest's pages (the rest are private). */
#define PROBE_IMAGE 0.35
#define PROBE_ZERO 0.15

bool gen_probe(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	uint64_t k = o->probe_pages ? o->probe_pages : GEN_PROBE_DEF_PAGES;
	uint64_t at = (uint64_t)(o->probe_at_s >= 0 ? o->probe_at_s * 1e6 : sz->duration_us / 10);
	uint64_t every = (uint64_t)(o->probe_every_s * 1e6);
	uint64_t spread = (uint64_t)(o->probe_spread_s * 1e6);
	uint64_t image = (uint64_t)((double)sz->pages * PROBE_IMAGE);
	uint64_t zero = (uint64_t)((double)sz->pages * PROBE_ZERO);
	uint64_t victim_seed = gen_seed(g, TAG_PROBE_VICTIM, 0, 0);
	char mm[16];

	for (unsigned v = 0; v < sz->vms; v++) {
		snprintf(mm, sizeof(mm), "vm%u", v + 1);
		gen_spawn(g, mm);
		gen_map(g, mm, GEN_GUEST_BASE, sz->pages);
		gen_advise(g, mm, GEN_GUEST_BASE, sz->pages, true);
		gen_fillseq(g, mm, GEN_GUEST_BASE, image, gen_seed(g, TAG_PROBE_IMAGE, 0, 0));
		gen_fill(g, mm, GEN_GUEST_BASE + image, zero, CONTENT_ZERO, 0);
		gen_fillseq(g, mm, GEN_GUEST_BASE + image + zero, sz->pages - image - zero,
			    gen_seed(g, TAG_PROBE_PRIV, v, 0));
	}
	gen_spawn(g, "victim");
	gen_map(g, "victim", GEN_GUEST_BASE, k);
	gen_advise(g, "victim", GEN_GUEST_BASE, k, true);
	gen_fillseq(g, "victim", GEN_GUEST_BASE, k, victim_seed);
	gen_spawn(g, "attacker");
	gen_map(g, "attacker", GEN_GUEST_BASE, k);
	gen_advise(g, "attacker", GEN_GUEST_BASE, k, true);
	/*
	 * The probe: copies of the victim's pages at t, written again every P;
	 * spread over S, page i at t + i S / K, so that the copies meet ksmd's
	 * cursor at every phase of its pass.
	 */
	for (uint64_t t = at; t < sz->duration_us && !g->failed; t += every) {
		if (!spread) {
			gen_at(g, t);
			gen_fillseq(g, "attacker", GEN_GUEST_BASE, k, victim_seed);
		}
		for (uint64_t i = 0; spread && i < k && !g->failed; i++) {
			gen_at(g, t + (uint64_t)((unsigned __int128)spread * i / k));
			gen_fillseq(g, "attacker", GEN_GUEST_BASE + i, 1, victim_seed + i);
		}
		if (!every)
			break;
	}
	gen_at(g, sz->duration_us);
	gen_mark(g, "end");
	return !g->failed;
}
