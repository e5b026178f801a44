// SPDX-License-Identifier: GPL-2.0-or-later
/* Colliding pairs for a fixed-seed checksum: see collpair.h. */
#include <math.h>
#include <string.h>
#include "util/splitmix64.h"
#include "workloads/collpair.h"

G_DEFINE_QUARK(ksmsim-collpair-error-quark, collpair_error)

#define TAG_PAIRED (UINT64_C(1) << 63)	/* the slot's value is in a pair already */
#define MIN_SLOTS_LOG 12

/* tag: 0 empty, else the try's index + 1 (and TAG_PAIRED once it is used). */
struct slot {
	uint64_t sum;
	uint64_t tag;
};

struct table {
	struct slot *s;
	unsigned log;
	uint64_t used;
};

/* Checksums can be linear (the CRCs) or cut short: mix before taking the top bits. */
static inline uint64_t slot_of(const struct table *t, uint64_t sum)
{
	return (sum * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - t->log);
}

static struct slot *probe(const struct table *t, uint64_t sum)
{
	uint64_t mask = (UINT64_C(1) << t->log) - 1;

	for (uint64_t i = slot_of(t, sum);; i = (i + 1) & mask)
		if (!t->s[i].tag || t->s[i].sum == sum)
			return &t->s[i];
}

static bool grow(struct table *t)
{
	struct table n = { g_try_new0(struct slot, (size_t)1 << (t->log + 1)), t->log + 1, t->used };

	if (!n.s)
		return false;
	for (uint64_t i = 0; t->s && i < (UINT64_C(1) << t->log); i++)
		if (t->s[i].tag)
			*probe(&n, t->s[i].sum) = t->s[i];
	g_free(t->s);
	*t = n;
	return true;
}

uint64_t collpair_value(uint64_t salt, uint64_t i)
{
	/* salt + i * gamma is a bijection of i (gamma is odd), and so is the mix */
	uint64_t st = salt + i * SPLITMIX64_GAMMA;

	return splitmix64_next(&st);
}

void collpair_set_word(uint8_t *page, unsigned word, uint64_t v)
{
	uint64_t le = GUINT64_TO_LE(v);

	memcpy(page + 8 * (size_t)word, &le, 8);
}

void collpair_rand_page(uint64_t seed, uint8_t page[COLLPAIR_PAGE])
{
	uint64_t st = seed;

	for (unsigned i = 0; i < COLLPAIR_WORDS; i++)
		collpair_set_word(page, i, splitmix64_next(&st));
}

double collpair_chance(uint64_t n, unsigned bits)
{
	double pairs = (double)n * ((double)n - 1) / 2;

	return n < 2 ? 0 : -expm1(-pairs * ldexp(1.0, -(int)bits));
}

static bool add_pair(struct collpair_sweep *out, uint64_t *cap, uint64_t v1, uint64_t v2)
{
	if (out->npairs == *cap) {
		uint64_t ncap = *cap ? *cap * 2 : 64;
		struct collpair *p = g_try_renew(struct collpair, out->pairs, ncap);

		if (!p)
			return false;
		out->pairs = p;
		*cap = ncap;
	}
	out->pairs[out->npairs++] = (struct collpair){ v1, v2 };
	return true;
}

bool collpair_find(const struct collpair_search *s, struct collpair_sweep *out, GError **error)
{
	unsigned bits = s->h && s->bits && s->bits < s->h->bits ? s->bits : s->h ? s->h->bits : 0;
	uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
	uint64_t page[COLLPAIR_WORDS] __attribute__((aligned(64)));
	struct table t = { NULL, MIN_SLOTS_LOG - 1, 0 };
	uint64_t cap = 0;
	int64_t t0 = g_get_monotonic_time();

	memset(out, 0, sizeof(*out));
	if (!s->h || !s->h->fn || !bits) {
		g_set_error(error, COLLPAIR_ERROR, COLLPAIR_ERROR_INVALID,
			    "%s computes no checksum: there is nothing to collide",
			    s->h ? s->h->name : "(no hash)");
		return false;
	}
	if (s->word >= COLLPAIR_WORDS || !s->base) {
		g_set_error(error, COLLPAIR_ERROR, COLLPAIR_ERROR_INVALID,
			    "word %u: a page has words 0 to %u", s->word, COLLPAIR_WORDS - 1);
		return false;
	}
	if (s->budget < 2 || s->budget > COLLPAIR_MAX_BUDGET) {
		g_set_error(error, COLLPAIR_ERROR, COLLPAIR_ERROR_INVALID,
			    "a budget of %" G_GUINT64_FORMAT " tries: 2 to %" G_GUINT64_FORMAT,
			    s->budget, COLLPAIR_MAX_BUDGET);
		return false;
	}
	if (!grow(&t))
		goto nomem;
	memcpy(page, s->base, COLLPAIR_PAGE);
	/* Only the one word changes between tries: the cost is the hash alone. */
	while (out->tries < s->budget && out->npairs < s->want) {
		uint64_t i = out->tries++, v = collpair_value(s->salt, i);

		collpair_set_word((uint8_t *)page, s->word, v);

		uint64_t sum = s->h->fn(page) & mask;
		struct slot *e = probe(&t, sum);

		if (e->tag && !(e->tag & TAG_PAIRED)) {
			uint64_t first = (e->tag & ~TAG_PAIRED) - 1;

			if (!add_pair(out, &cap, collpair_value(s->salt, first), v))
				goto nomem;
			e->tag |= TAG_PAIRED;
			continue;
		}
		/* a repeat of a paired checksum starts a new candidate in its place */
		if (!e->tag)
			t.used++;
		e->sum = sum;
		e->tag = i + 1;
		if (t.used * 2 > (UINT64_C(1) << t.log) && !grow(&t))
			goto nomem;
	}
	g_free(t.s);
	out->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
	return true;
nomem:
	g_free(t.s);
	g_set_error(error, COLLPAIR_ERROR, COLLPAIR_ERROR_NOMEM,
		    "no memory for the table of a %" G_GUINT64_FORMAT "-try sweep (at try %"
		    G_GUINT64_FORMAT ")", s->budget, out->tries);
	collpair_sweep_clear(out);
	return false;
}

void collpair_sweep_clear(struct collpair_sweep *out)
{
	g_free(out->pairs);
	out->pairs = NULL;
	out->npairs = 0;
}
