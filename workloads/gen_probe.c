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
 * --probe-channel unmap or unmerge reads the copies the other way
 * (sim/MODEL.md, "Exposure", the unmap channel): each round after the
 * first starts by unmapping the copies (munmap, then map and advise them
 * again) or by MADV_UNMERGEABLE (then MADV_MERGEABLE again), and writes
 * them again; once (P 0) they are unmapped or unmerged at the trace's end.
 * The rows domain:attacker,unmap_reveal_us give how long after its write
 * an unmap or unmerge showed the copy merged with the victim's page.
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

/*
 * The unmap channel's read of n copies at vpn: munmap (mapped and advised
 * again for the next write) or MADV_UNMERGEABLE (advised mergeable again);
 * the CoW channel reads by its next write alone.
 */
static void probe_read(struct gen *g, enum gen_probe_channel ch, uint64_t vpn, uint64_t n)
{
	if (ch == GEN_PROBE_UNMAP) {
		gen_unmap(g, "attacker", vpn, n);
		gen_map(g, "attacker", vpn, n);
	} else if (ch == GEN_PROBE_UNMERGE) {
		gen_advise(g, "attacker", vpn, n, false);
	}
	if (ch != GEN_PROBE_COW)
		gen_advise(g, "attacker", vpn, n, true);
}

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
			if (t > at)
				probe_read(g, o->probe_channel, GEN_GUEST_BASE, k);
			gen_fillseq(g, "attacker", GEN_GUEST_BASE, k, victim_seed);
		}
		for (uint64_t i = 0; spread && i < k && !g->failed; i++) {
			gen_at(g, t + (uint64_t)((unsigned __int128)spread * i / k));
			if (t > at)
				probe_read(g, o->probe_channel, GEN_GUEST_BASE + i, 1);
			gen_fillseq(g, "attacker", GEN_GUEST_BASE + i, 1, victim_seed + i);
		}
		if (!every)
			break;
	}
	gen_at(g, sz->duration_us);
	if (!every)
		probe_read(g, o->probe_channel, GEN_GUEST_BASE, k);
	gen_mark(g, "end");
	return !g->failed;
}
