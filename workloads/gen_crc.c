// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * crc-adversarial: pages changed by deltas that both CRCs miss (crcdelta.c),
 * beside pages changed the ordinary way. The generator keeps its own model
 * of each adversarial page: its base is rand:<seed>, and a mask says which
 * of the CRC_WINDOWS deltas are XORed in. A toggle rewrites one 16-byte
 * window with `bytes:`, which sets bytes, so it writes base ^ (new mask bit ?
 * delta : 0).
 *
 * The shared region is identical in every guest and mirrored, unchanged, in
 * each, so its contents sit in the stable tree. Only the first guest's copy
 * changes. A CRC gate lets those changing pages through to the trees, where
 * they merge whenever they hold the original bytes and are copied again at
 * the next toggle; a gate that sees the change keeps them volatile.
 */
#include <stdio.h>
#include "workloads/crcdelta.h"
#include "workloads/gen.h"

#define CRC_WINDOWS 4
static const unsigned window_off[CRC_WINDOWS] = { 512, 1536, 2560, 3584 };

enum { TAG_CRC_IMAGE = 0x100, TAG_CRC_PRIV, TAG_CRC_SHARED, TAG_CRC_OWN, TAG_CRC_ORD,
       TAG_CRC_DELTA, TAG_CRC_RNG };

/* Fractions of each VM's pages (estimates; README "crc-adversarial"). */
static const struct {
	double image, zero, priv, adv_shared, adv_own, ordinary;
	unsigned period;	/* ticks between two changes of one page */
} ca = { .image = 0.38, .zero = 0.10, .priv = 0.05, .adv_shared = 0.02, .adv_own = 0.02,
	 .ordinary = 0.02, .period = 3 };

struct adv_region {
	uint64_t vpn, n, seed;	/* page i's base is rand:(seed + i) */
	uint8_t *mask;
};

/* Toggle delta w of page i: the bytes record that does it. */
static bool toggle(struct gen *g, const char *mm, struct adv_region *r, uint64_t i, unsigned w,
		   const struct crc_delta *d)
{
	uint8_t cur[CRCDELTA_LEN];

	crcdelta_rand_bytes(r->seed + i, d->off, CRCDELTA_LEN, cur);
	r->mask[i] ^= (uint8_t)(1u << w);
	if (r->mask[i] & (1u << w))
		for (unsigned b = 0; b < CRCDELTA_LEN; b++)
			cur[b] ^= d->d[b];
	return gen_write_bytes(g, mm, r->vpn + i, d->off, cur, CRCDELTA_LEN);
}

static void toggle_some(struct gen *g, const char *mm, struct adv_region *r, unsigned k,
			const struct crc_delta *deltas)
{
	unsigned w = (k / ca.period) % CRC_WINDOWS;

	for (uint64_t i = k % ca.period; i < r->n && !g->failed; i += ca.period)
		toggle(g, mm, r, i, w, &deltas[w]);
}

bool gen_crc_adversarial(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	struct crc_delta deltas[CRC_WINDOWS];
	uint64_t M = sz->pages, vpn = GEN_GUEST_BASE;
	uint64_t n_image = (uint64_t)(M * ca.image), n_zero = (uint64_t)(M * ca.zero);
	uint64_t n_priv = (uint64_t)(M * ca.priv), n_ord = (uint64_t)(M * ca.ordinary);
	uint64_t n_sh = (uint64_t)(M * ca.adv_shared), n_own = (uint64_t)(M * ca.adv_own);
	uint64_t v_zero = vpn + n_image, v_priv = v_zero + n_zero, v_sh = v_priv + n_priv;
	/* A mirror of the shared region that never changes keeps its contents in the stable tree. */
	uint64_t v_mirror = v_sh + n_sh, v_own = v_mirror + n_sh, v_ord = v_own + n_own;
	unsigned vms = sz->vms;
	struct adv_region shared, *own = g_new0(struct adv_region, vms);
	char (*mm)[16] = g_malloc0(sizeof(*mm) * vms);
	struct gen_rng rng;
	bool ok = true;

	for (unsigned w = 0; w < CRC_WINDOWS; w++)
		if (!crcdelta_solve(window_off[w], gen_seed(g, TAG_CRC_DELTA, w, 0), &deltas[w]))
			g_error("crcdelta: no solution at offset %u", window_off[w]);	/* cannot happen */
	gen_rng_init(&rng, gen_seed(g, TAG_CRC_RNG, 0, 0));
	/* The first guest's copy of the shared region is the one that changes. */
	shared = (struct adv_region){ v_sh, n_sh, gen_seed(g, TAG_CRC_SHARED, 0, 0),
				      g_malloc0(n_sh + 1) };
	for (unsigned v = 0; v < vms; v++) {
		own[v] = (struct adv_region){ v_own, n_own, gen_seed(g, TAG_CRC_OWN, v, 0),
					      g_malloc0(n_own + 1) };
		snprintf(mm[v], sizeof(mm[v]), "vm%u", v + 1);
		gen_spawn(g, mm[v]);
		gen_map(g, mm[v], vpn, M);
		gen_advise(g, mm[v], vpn, M, true);
		gen_fillseq(g, mm[v], vpn, n_image, gen_seed(g, TAG_CRC_IMAGE, 0, 0));
		if (n_zero)
			gen_fill(g, mm[v], v_zero, n_zero, CONTENT_ZERO, 0);
		gen_fillseq(g, mm[v], v_priv, n_priv, gen_seed(g, TAG_CRC_PRIV, v, 0));
		gen_fillseq(g, mm[v], v_sh, n_sh, shared.seed);
		gen_fillseq(g, mm[v], v_mirror, n_sh, shared.seed);
		gen_fillseq(g, mm[v], v_own, n_own, own[v].seed);
		gen_fillseq(g, mm[v], v_ord, n_ord, gen_seed(g, TAG_CRC_ORD, 0, 0));
	}
	for (unsigned k = 1; k < sz->ticks && !g->failed; k++) {
		gen_at(g, sz->duration_us * k / sz->ticks);
		for (unsigned v = 0; v < vms; v++) {
			toggle_some(g, mm[v], &own[v], k, deltas);
			if (v)
				continue;
			toggle_some(g, mm[v], &shared, k, deltas);
			/* Ordinary changes, same pace: one word of the page gets a new value. */
			for (uint64_t i = k % ca.period; i < n_ord && !g->failed; i += ca.period)
				gen_write_word(g, mm[v], v_ord + i, (unsigned)gen_rng_below(&rng, 512),
					       gen_rng_next(&rng));
		}
	}
	for (unsigned v = 0; v < vms; v++)
		g_free(own[v].mask);
	g_free(shared.mask);
	g_free(own);
	g_free(mm);
	gen_at(g, sz->duration_us);
	ok = gen_mark(g, "end");
	return ok;
}
