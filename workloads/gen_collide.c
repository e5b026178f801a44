// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * checksum-adversarial: the fixed-seed attack. Pages that alternate between
 * the two contents of a colliding pair for one checksum (collpair.c), beside
 * pages changed the ordinary way. Built like crc-adversarial (gen_crc.c):
 * a shared attacked region, identical in every guest and mirrored,
 * unchanged, in each (so its contents sit in the stable tree), of which only
 * the first guest's copy changes; an own attacked region per guest that
 * every guest changes; an ordinary churn region.
 *
 * Every attacked page has its own pair (v1, v2) from a sweep over one base
 * page rand:B and one word I; the page is B with word I = v1 or v2, and a
 * toggle is one `word:I:V` write. Under the checksum the pairs were found
 * for, every toggle keeps the checksum: the gate lets a changing page into
 * the trees. Any other checksum sees each toggle.
 */
#include <math.h>
#include <stdio.h>
#include "workloads/collpair.h"
#include "workloads/gen.h"

/* Sweeps of COLLPAIR_DEFAULT_BUDGET tries at most; one is enough at the default size. */
#define CA_MAX_SWEEPS 16

enum { TAG_CA_IMAGE = 0x200, TAG_CA_PRIV, TAG_CA_ORD, TAG_CA_SWEEP, TAG_CA_RNG };

/* Fractions of each VM's pages (estimates; README "checksum-adversarial"). */
static const struct {
	double image, zero, priv, att_shared, att_own, ordinary;
	unsigned period;	/* ticks between two changes of one page */
} cs = { .image = 0.38, .zero = 0.10, .priv = 0.05, .att_shared = 0.002, .att_own = 0.002,
	 .ordinary = 0.02, .period = 3 };

/* One attacked page: its bytes are rand:base with word `word` = v[state]. */
struct att {
	uint64_t base;
	unsigned word;
	uint64_t v[2];
	unsigned state;
};

struct att_region {
	uint64_t vpn, n;
	struct att *p;
};

static bool fail(struct gen *g, const char *msg)
{
	if (!g->failed)
		g_set_error_literal(g->error, COLLPAIR_ERROR, COLLPAIR_ERROR_INVALID, msg);
	g->failed = true;
	return false;
}

/*
 * Pairs for n pages, sweep after sweep (each its own base page, word and
 * value sequence, all from the trace seed) until there are enough.
 */
static bool find_pairs(struct gen *g, const struct page_hash *h, struct att *out, uint64_t n)
{
	uint8_t *base = g_malloc(COLLPAIR_PAGE);
	uint64_t got = 0, tries = 0;
	unsigned k;
	GError *err = NULL;

	for (k = 0; k < CA_MAX_SWEEPS && got < n; k++) {
		struct collpair_search s = {
			.h = h, .base = base, .budget = COLLPAIR_DEFAULT_BUDGET, .want = n - got,
			.word = (unsigned)(gen_seed(g, TAG_CA_SWEEP, k, 1) % COLLPAIR_WORDS),
			.salt = gen_seed(g, TAG_CA_SWEEP, k, 2),
		};
		uint64_t seed = gen_seed(g, TAG_CA_SWEEP, k, 0);
		struct collpair_sweep sw;

		collpair_rand_page(seed, base);
		if (!collpair_find(&s, &sw, &err)) {
			g_free(base);
			fail(g, err->message);
			g_error_free(err);
			return false;
		}
		tries += sw.tries;
		for (uint64_t i = 0; i < sw.npairs; i++)
			out[got++] = (struct att){ seed, s.word, { sw.pairs[i].v1, sw.pairs[i].v2 }, 0 };
		collpair_sweep_clear(&sw);
	}
	g_free(base);
	if (got < n) {
		char *msg = g_strdup_printf("--hash %s: found only %" G_GUINT64_FORMAT " of the %"
					    G_GUINT64_FORMAT " colliding pairs needed in %u sweeps"
					    " (%" G_GUINT64_FORMAT " tries)", h->name, got, n, k,
					    tries);

		fail(g, msg);
		g_free(msg);
		return false;
	}
	return true;
}

/*
 * Refused before any sweep when the budget cannot give the pairs: a 64-bit
 * checksum (no pair to expect) or more attacked pages than the sweeps give.
 */
static bool feasible(struct gen *g, const struct page_hash *h, uint64_t need)
{
	double chance = collpair_chance(COLLPAIR_DEFAULT_BUDGET, h->bits);
	double per_sweep = ldexp((double)COLLPAIR_DEFAULT_BUDGET * COLLPAIR_DEFAULT_BUDGET,
				 -(int)h->bits - 1);
	char *msg = NULL;

	if (chance < 0.01)
		msg = g_strdup_printf("--hash %s: a %u-bit checksum; a sweep of %" G_GUINT64_FORMAT
				      " tries finds a colliding pair with probability %.2g (one"
				      " takes ~2^%u tries), so the attack is infeasible: use a"
				      " 32-bit --hash", h->name, h->bits, COLLPAIR_DEFAULT_BUDGET,
				      chance, h->bits / 2);
	else if ((double)need > 0.75 * CA_MAX_SWEEPS * per_sweep)
		msg = g_strdup_printf("%" G_GUINT64_FORMAT " attacked pages need as many colliding"
				      " pairs; %u sweeps of %" G_GUINT64_FORMAT " tries give about"
				      " %.0f for %s: use fewer --vms or a smaller --scale", need,
				      CA_MAX_SWEEPS, COLLPAIR_DEFAULT_BUDGET,
				      CA_MAX_SWEEPS * per_sweep, h->name);
	if (!msg)
		return true;
	fail(g, msg);
	g_free(msg);
	return false;
}

static void put_page(struct gen *g, const char *mm, uint64_t vpn, const struct att *a)
{
	gen_fill(g, mm, vpn, 1, CONTENT_RAND, a->base);
	gen_write_word(g, mm, vpn, a->word, a->v[a->state]);
}

/* Pages i = k mod period switch to the other value of their pair. */
static void toggle_some(struct gen *g, const char *mm, struct att_region *r, unsigned k)
{
	for (uint64_t i = k % cs.period; i < r->n && !g->failed; i += cs.period) {
		struct att *a = &r->p[i];

		a->state ^= 1;
		gen_write_word(g, mm, r->vpn + i, a->word, a->v[a->state]);
	}
}

static uint64_t at_least_one(double x)
{
	return x < 1 ? 1 : (uint64_t)x;
}

bool gen_checksum_adversarial(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	const struct page_hash *h = hash_lookup(o->hash ? o->hash : HASH_DEFAULT);
	uint64_t M = sz->pages, vpn = GEN_GUEST_BASE;
	uint64_t n_image = (uint64_t)(M * cs.image), n_zero = (uint64_t)(M * cs.zero);
	uint64_t n_priv = (uint64_t)(M * cs.priv), n_ord = (uint64_t)(M * cs.ordinary);
	uint64_t n_sh = at_least_one(M * cs.att_shared), n_own = at_least_one(M * cs.att_own);
	uint64_t v_zero = vpn + n_image, v_priv = v_zero + n_zero, v_sh = v_priv + n_priv;
	uint64_t v_mirror = v_sh + n_sh, v_own = v_mirror + n_sh, v_ord = v_own + n_own;
	unsigned vms = sz->vms;
	uint64_t need = n_sh + (uint64_t)vms * n_own;
	struct att_region shared, *own;
	struct att *pairs;
	char (*mm)[16];
	struct gen_rng rng;

	if (!h || !h->fn)
		return fail(g, "--hash: checksum-adversarial needs a checksum to attack");
	if (!feasible(g, h, need))
		return false;
	pairs = g_new(struct att, need);
	if (!find_pairs(g, h, pairs, need)) {
		g_free(pairs);
		return false;
	}
	own = g_new0(struct att_region, vms);
	mm = g_malloc0(sizeof(*mm) * vms);
	gen_rng_init(&rng, gen_seed(g, TAG_CA_RNG, 0, 0));
	shared = (struct att_region){ v_sh, n_sh, pairs };
	for (unsigned v = 0; v < vms; v++) {
		own[v] = (struct att_region){ v_own, n_own, pairs + n_sh + v * n_own };
		snprintf(mm[v], sizeof(mm[v]), "vm%u", v + 1);
		gen_spawn(g, mm[v]);
		gen_map(g, mm[v], vpn, M);
		gen_advise(g, mm[v], vpn, M, true);
		gen_fillseq(g, mm[v], vpn, n_image, gen_seed(g, TAG_CA_IMAGE, 0, 0));
		if (n_zero)
			gen_fill(g, mm[v], v_zero, n_zero, CONTENT_ZERO, 0);
		gen_fillseq(g, mm[v], v_priv, n_priv, gen_seed(g, TAG_CA_PRIV, v, 0));
		for (uint64_t i = 0; i < n_sh; i++) {
			put_page(g, mm[v], v_sh + i, &shared.p[i]);
			put_page(g, mm[v], v_mirror + i, &shared.p[i]);
		}
		for (uint64_t i = 0; i < n_own; i++)
			put_page(g, mm[v], v_own + i, &own[v].p[i]);
		gen_fillseq(g, mm[v], v_ord, n_ord, gen_seed(g, TAG_CA_ORD, 0, 0));
	}
	for (unsigned k = 1; k < sz->ticks && !g->failed; k++) {
		gen_at(g, sz->duration_us * k / sz->ticks);
		for (unsigned v = 0; v < vms; v++) {
			toggle_some(g, mm[v], &own[v], k);
			if (v)
				continue;
			toggle_some(g, mm[v], &shared, k);
			/* Ordinary changes, same pace: one word of the page gets a new value. */
			for (uint64_t i = k % cs.period; i < n_ord && !g->failed; i += cs.period)
				gen_write_word(g, mm[v], v_ord + i, (unsigned)gen_rng_below(&rng, 512),
					       gen_rng_next(&rng));
		}
	}
	g_free(pairs);
	g_free(own);
	g_free(mm);
	gen_at(g, sz->duration_us);
	return gen_mark(g, "end");
}
