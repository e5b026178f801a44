// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * False-positive study: the share of page changes that keep the page's
 * checksum, which is what KSM's checksum gate gets wrong. Every hash sees
 * the same pages and the same changes (a paired comparison).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "analysis/collide.h"
#include "analysis/study.h"
#include "workloads/collpair.h"
#include "workloads/crcdelta.h"
#include "util/escape.h"

const char *const fp_change_names[FP_NR_CHANGES] = { "bitflip", "word", "patch", "crafted-crc",
						     "colliding-pair" };

#define FP_BLOCK 4096u		/* trials per work item */

struct fp {
	const struct page_hash *h;
	unsigned bits;
	enum fp_change ch;
	uint64_t seed, trials;
	const struct crc_kernel *k;
	uint64_t *same;		/* per block: changes the checksum missed */
};

/* Change the page in place as kind ch says; *off and *len cover the bytes touched, saved in save. */
static void change_page(const struct fp *f, uint64_t *page, uint64_t r, uint64_t *st,
			unsigned *off, unsigned *len, uint8_t *save)
{
	uint8_t *bytes = (uint8_t *)page;

	switch (f->ch) {
	case FP_BITFLIP:
		*off = (unsigned)(r % HASH_PAGE_SIZE);
		*len = 1;
		save[0] = bytes[*off];
		bytes[*off] ^= (uint8_t)(1u << (r >> 32 & 7));
		break;
	case FP_WORD: {
		unsigned w = (unsigned)(r % PAGE_WORDS);
		uint64_t v;

		do
			v = splitmix64_next(st);
		while (v == page[w]);
		*off = w * 8;
		*len = 8;
		memcpy(save, bytes + *off, 8);
		page[w] = v;
		break;
	}
	case FP_PATCH:
		*len = 1 + (unsigned)(r % 64);
		*off = (unsigned)((r >> 8) % (HASH_PAGE_SIZE - *len + 1));
		memcpy(save, bytes + *off, *len);
		do {
			for (unsigned i = 0; i < *len; i += 8) {
				uint64_t x = splitmix64_next(st);

				memcpy(bytes + *off + i, &x, *len - i < 8 ? *len - i : 8);
			}
		} while (!memcmp(save, bytes + *off, *len));
		break;
	case FP_CRAFTED: {
		uint8_t d[CRCDELTA_LEN];

		crcdelta_pick(f->k, st, d);
		*len = CRCDELTA_LEN;
		*off = (unsigned)(r % (HASH_PAGE_SIZE - *len + 1));
		memcpy(save, bytes + *off, *len);
		for (unsigned i = 0; i < *len; i++)
			bytes[*off + i] ^= d[i];
		break;
	}
	default:
		*off = *len = 0;
		break;
	}
}

static void fp_block(uint64_t blk, unsigned worker, void *data)
{
	const struct fp *f = data;
	uint64_t page[PAGE_WORDS] __attribute__((aligned(64)));
	uint8_t save[64];
	uint64_t st = study_stream(f->seed, 2 + f->ch, blk);
	uint64_t m = study_mask(f->bits), same = 0;
	uint64_t end = (blk + 1) * FP_BLOCK < f->trials ? (blk + 1) * FP_BLOCK : f->trials;

	study_fill_random(page, &st);
	for (uint64_t t = blk * FP_BLOCK; t < end; t++) {
		/* a new page every trial: one more random word */
		page[t % PAGE_WORDS] = splitmix64_next(&st);
		uint64_t before = f->h->fn(page) & m, r = splitmix64_next(&st);
		unsigned off, len;

		change_page(f, page, r, &st, &off, &len, save);
		same += (f->h->fn(page) & m) == before;
		memcpy((uint8_t *)page + off, save, len);
	}
	f->same[blk] = same;
}

/*
 * What chance alone predicts, 2^-bits, except where the CRC's structure
 * decides: a CRC catches every burst of up to 32 bits, so a single bit flip
 * never passes at full width, and its crafted kernel always passes
 * (truncation keeps an equality an equality).
 */
static double expected_rate(const struct page_hash *h, unsigned bits, enum fp_change ch,
			    uint64_t budget)
{
	bool is_crc = !strcmp(h->name, "crc32c") || !strcmp(h->name, "crc32");

	/* every pair found is missed: the rate is 1 with the chance of finding one, else 0 */
	if (ch == FP_COLLPAIR)
		return collpair_chance(budget, bits);
	if (is_crc && ch == FP_BITFLIP && bits == 32)
		return 0;
	if (is_crc && ch == FP_CRAFTED)
		return 1;
	return ldexp(1.0, -(int)bits);
}

/*
 * The 95% interval of a rate seen x times in n: the rule of three (0 to 3/n)
 * when x = 0 and its mirror when x = n, the Wilson score interval otherwise
 * (unlike the normal one it stays inside [0, 1] at a handful of hits).
 */
static void rate_interval(uint64_t x, uint64_t n, double *lo, double *hi)
{
	const double z = 1.96, z2 = z * z;
	double p = n ? (double)x / (double)n : 0, nn = (double)n;

	if (n == 0) {	/* nothing observed, nothing bounded */
		*lo = 0;
		*hi = 1;
	} else if (x == 0) {
		*lo = 0;
		*hi = MIN(1.0, 3 / nn);
	} else if (x == n) {
		*lo = MAX(0.0, 1 - 3 / nn);
		*hi = 1;
	} else {
		double mid = (p + z2 / (2 * nn)) / (1 + z2 / nn);
		double half = z / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));

		*lo = MAX(0.0, mid - half);
		*hi = MIN(1.0, mid + half);
	}
}

/*
 * The fixed-seed attack, one work item per hash: a sweep over word `word`
 * of the page rand:base (the same page, word and values for every hash),
 * then each pair found is a change from one content to the other, checked
 * with the hash again.
 */
struct cp_hash {
	uint64_t npairs, tries, same;
	double seconds;
	GError *error;
};

struct cp {
	const struct fp_opts *o;
	uint64_t base, salt, budget;
	unsigned word;
	struct cp_hash *per;	/* one per hash */
};

static unsigned hash_bits(const struct fp_opts *o, const struct page_hash *h)
{
	return o->bits && o->bits < h->bits ? o->bits : h->bits;
}

static void cp_hash(uint64_t hi, unsigned worker, void *data)
{
	const struct cp *c = data;
	const struct page_hash *h = c->o->hashes[hi];
	unsigned bits = hash_bits(c->o, h);
	uint64_t page[PAGE_WORDS] __attribute__((aligned(64)));
	uint64_t m = study_mask(bits);
	struct cp_hash *r = &c->per[hi];
	struct collpair_search s = { h, bits, (const uint8_t *)page, c->word, c->salt, c->budget,
				     MIN(c->o->trials, c->budget / 2) };
	struct collpair_sweep sw;

	collpair_rand_page(c->base, (uint8_t *)page);
	if (!collpair_find(&s, &sw, &r->error))
		return;
	for (uint64_t i = 0; i < sw.npairs; i++) {
		collpair_set_word((uint8_t *)page, c->word, sw.pairs[i].v1);
		uint64_t before = h->fn(page) & m;

		collpair_set_word((uint8_t *)page, c->word, sw.pairs[i].v2);
		r->same += (h->fn(page) & m) == before;
	}
	r->npairs = sw.npairs;
	r->tries = sw.tries;
	r->seconds = sw.seconds;
	collpair_sweep_clear(&sw);
}

static bool cp_run(const struct fp_opts *o, struct cp *c, GError **error)
{
	c->o = o;
	c->budget = o->budget ? o->budget : COLLPAIR_DEFAULT_BUDGET;
	c->base = study_stream(o->seed, 2 + FP_COLLPAIR, 0);
	c->word = (unsigned)(study_stream(o->seed, 2 + FP_COLLPAIR, 1) % PAGE_WORDS);
	c->salt = study_stream(o->seed, 2 + FP_COLLPAIR, 2);
	c->per = g_new0(struct cp_hash, o->nhashes);
	study_par_for(o->threads, o->nhashes, cp_hash, c);
	for (unsigned hi = 0; hi < o->nhashes; hi++)
		if (c->per[hi].error) {
			g_propagate_prefixed_error(error, c->per[hi].error, "colliding-pair, %s: ",
						   o->hashes[hi]->name);
			c->per[hi].error = NULL;
			for (unsigned k = hi + 1; k < o->nhashes; k++)
				g_clear_error(&c->per[k].error);
			return false;
		}
	return true;
}

/* What each sweep found, under the table: the tries are the attacker's cost. */
static void cp_notes(const struct fp_opts *o, const struct cp *c)
{
	fprintf(o->table, "colliding-pair: per hash one sweep of at most %" PRIu64 " tries over word"
		" %u of the page rand:0x%" PRIx64 ";\neach pair found is one change (trials = pairs"
		" used, at most --trials and half the tries):\n", c->budget, c->word, c->base);
	for (unsigned hi = 0; hi < o->nhashes; hi++) {
		const struct page_hash *h = o->hashes[hi];
		const struct cp_hash *r = &c->per[hi];
		unsigned bits = hash_bits(o, h);

		if (r->npairs)
			fprintf(o->table, "  %-8s %2u bits: %" PRIu64 " pair%s in %" PRIu64 " tries"
				" (%.0f tries per pair)\n", h->name, bits, r->npairs,
				r->npairs == 1 ? "" : "s", r->tries, (double)r->tries / (double)r->npairs);
		else
			fprintf(o->table, "  %-8s %2u bits: no pair within %" PRIu64 " tries (chance"
				" of one %.2g): no change to make, rate 0\n", h->name, bits, r->tries,
				collpair_chance(r->tries, bits));
	}
}

bool collide_false_positive(const struct fp_opts *o, GError **error)
{
	struct crc_kernel k;
	uint64_t nblk = (o->trials + FP_BLOCK - 1) / FP_BLOCK;
	struct cp cp = { 0 };

	crcdelta_kernel(&k);
	reportf("collide false-positive", "%" PRIu64 " changes per hash and kind, on %u thread%s",
		o->trials, o->threads, o->threads == 1 ? "" : "s");
	if (o->changes[FP_COLLPAIR] && !cp_run(o, &cp, error)) {
		g_free(cp.per);
		return false;
	}
	if (o->csv)
		fputs("hash,bits,change,seed,trials,unchanged,rate,rate_upper95,expected_rate,"
		      "rate_lower95\n", o->csv);
	fprintf(o->table, "%-8s %4s %-12s %10s %9s %12s %12s %12s %12s\n", "hash", "bits", "change",
		"trials", "unchanged", "rate", "lower95", "upper95", "expected");
	for (unsigned hi = 0; hi < o->nhashes; hi++) {
		const struct page_hash *h = o->hashes[hi];
		unsigned bits = o->bits && o->bits < h->bits ? o->bits : h->bits;

		for (int ch = 0; ch < FP_NR_CHANGES; ch++) {
			if (!o->changes[ch])
				continue;
			int64_t t0 = g_get_monotonic_time();
			uint64_t same = 0, trials = o->trials;

			if (ch == FP_COLLPAIR) {
				same = cp.per[hi].same;
				trials = cp.per[hi].npairs;
			} else {
				struct fp f = { h, bits, ch, o->seed, o->trials, &k,
						g_new0(uint64_t, nblk) };

				study_par_for(o->threads, nblk, fp_block, &f);
				for (uint64_t b = 0; b < nblk; b++)
					same += f.same[b];
				g_free(f.same);
			}
			/* no pair, no change: rate 0 and an interval that says nothing (0..1) */
			double rate = trials ? (double)same / trials : 0, lo, up;
			double expect = expected_rate(h, bits, ch, cp.budget);

			rate_interval(same, trials, &lo, &up);
			if (o->csv)
				fprintf(o->csv, "%s,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%.6g,%.6g,%.6g,%.6g\n", h->name, bits, fp_change_names[ch],
					o->seed, trials, same, rate, up, expect, lo);
			fprintf(o->table, "%-8s %4u %-12s %10" PRIu64 " %9" PRIu64
				" %12.4g %12.4g %12.4g %12.4g\n", h->name, bits, fp_change_names[ch],
				trials, same, rate, lo, up, expect);
			fflush(o->table);
			if (ch == FP_COLLPAIR)
				reportf(NULL, "  %s %s: %.1f s (the sweep)", h->name,
					fp_change_names[ch], cp.per[hi].seconds);
			else
				reportf(NULL, "  %s %s: %.1f s", h->name, fp_change_names[ch],
					study_seconds(t0));
		}
	}
	fprintf(o->table,
		"lower95..upper95: the 95%% interval of the rate: 0 to 3/trials when none was seen\n"
		"(the rule of three), 1 - 3/trials to 1 when all were, else the Wilson score interval.\n");
	if (o->changes[FP_COLLPAIR])
		cp_notes(o, &cp);
	g_free(cp.per);
	return true;
}

void collide_print_delta(FILE *f, uint64_t seed)
{
	struct crc_kernel k;
	uint64_t st = seed;
	uint8_t d[CRCDELTA_LEN];

	crcdelta_kernel(&k);
	crcdelta_pick(&k, &st, d);
	for (unsigned i = 0; i < CRCDELTA_LEN; i++)
		fprintf(f, "%02x", d[i]);
	fprintf(f, "\n");
}
