// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Birthday study: hash distinct pages until a checksum repeats, many trials
 * per hash, and set the share of trials collided by n pages beside the
 * birthday bound 1 - exp(-n(n-1) / 2^(bits+1)).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/collide.h"
#include "analysis/study.h"
#include "util/escape.h"

const char *const birthday_pages_names[BIRTHDAY_NR_PAGES] = { "words", "counter", "full" };

/*
 * Checksums seen in one trial: open addressing, a slot live when its stamp
 * is the current trial's, so the table is never cleared between trials.
 */
struct seen {
	uint64_t *key;
	uint32_t *stamp;
	uint64_t mask;
	uint32_t now;
};

struct bday {
	const struct page_hash *h;
	unsigned bits;			/* after truncation */
	enum birthday_pages kind;
	uint64_t seed, max_pages;
	uint64_t *first;		/* per trial: page count at the first repeat, 0 none */
	struct seen *seen;		/* one table per worker */
};

static void seen_init(struct seen *s, uint64_t max)
{
	uint64_t cap = 1024;

	while (cap < 2 * max)
		cap <<= 1;
	s->key = g_new(uint64_t, cap);
	s->stamp = g_new0(uint32_t, cap);
	s->mask = cap - 1;
	s->now = 0;
}

/* true if v was there already */
static bool seen_add(struct seen *s, uint64_t v)
{
	uint64_t i = (v * UINT64_C(0x9E3779B97F4A7C15)) >> 17;

	for (;; i++) {
		i &= s->mask;
		if (s->stamp[i] != s->now) {
			s->stamp[i] = s->now;
			s->key[i] = v;
			return false;
		}
		if (s->key[i] == v)
			return true;
	}
}

static void bday_trial(uint64_t t, unsigned worker, void *data)
{
	const struct bday *b = data;
	struct seen *seen = &b->seen[worker];
	uint64_t page[PAGE_WORDS] __attribute__((aligned(64)));
	uint64_t st = study_stream(b->seed, 1, t);
	uint64_t m = study_mask(b->bits);

	if (!seen->key)
		seen_init(seen, b->max_pages);
	if (++seen->now == 0) {		/* the stamp wrapped: clear for real */
		memset(seen->stamp, 0, (seen->mask + 1) * sizeof(*seen->stamp));
		seen->now = 1;
	}
	/*
	 * Counter pages differ from each other in one 64-bit word only. A CRC
	 * tells apart any two messages that differ in a span of at most 32
	 * bits, and the word's top half never changes here, so crc32/crc32c
	 * cannot repeat on them: structure decides, not chance.
	 */
	study_fill_random(page, &st);
	b->first[t] = 0;
	for (uint64_t i = 1; i <= b->max_pages; i++) {
		switch (b->kind) {
		case BIRTHDAY_FULL:
			study_fill_random(page, &st);
			break;
		case BIRTHDAY_WORDS:
			page[1] = splitmix64_next(&st);
			/* fall through */
		case BIRTHDAY_COUNTER:
		default:
			page[0] = i;
			break;
		}
		if (seen_add(seen, b->h->fn(page) & m)) {
			b->first[t] = i;
			break;
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* P(some repeat among n values uniform over 2^bits). */
static double birthday_p(double n, unsigned bits)
{
	if (n < 2)
		return 0;
	return -expm1(-n * (n - 1) / ldexp(1.0, (int)bits + 1));
}

/*
 * Mean and standard deviation of the page count at the first repeat, from
 * P(first > k): the mean is their sum over k, E[first^2] the sum of
 * (2k+1) P(first > k). Past 36 bits the asymptotes sqrt(pi N / 2) + 2/3 and
 * sqrt((2 - pi/2) N) agree to more digits than are printed.
 */
static void birthday_moments(unsigned bits, double *mean, double *sd)
{
	double N = ldexp(1.0, (int)bits), surv = 1, sum = 0, sum2 = 0;

	if (bits > 36) {
		*mean = sqrt(M_PI * N / 2) + 2.0 / 3;
		*sd = sqrt((2 - M_PI / 2) * N);
		return;
	}
	for (uint64_t k = 0; surv > 1e-12; k++) {
		sum += surv;		/* P(first > k) */
		sum2 += (2.0 * (double)k + 1) * surv;
		surv *= 1 - (double)k / N;
	}
	*mean = sum;
	*sd = sqrt(sum2 - sum * sum);
}

static void put_header(const struct birthday_opts *o)
{
	if (o->csv) {
		fputs("hash,bits,pages,seed,trials,max_pages,collided,mean_first,expected_mean,"
		      "p10,p50,p90,min_first,max_first", o->csv);
		for (unsigned k = 0; k < o->nat; k++)
			fprintf(o->csv, ",frac_%" PRIu64 ",formula_%" PRIu64 ",se_%" PRIu64,
				o->at[k], o->at[k], o->at[k]);
		/* formula_max_pages stays last: readers take it as $NF */
		fputs(",se_mean,formula_max_pages\n", o->csv);
	}
	if (o->curve_csv)
		fputs("hash,bits,n,observed,formula\n", o->curve_csv);
	fprintf(o->table, "%-8s %4s %6s %8s %8s %6s %9s %9s %9s", "hash", "bits", "trials",
		"collided", "mean", "+-95%", "expected", "p50", "max_pages");
	for (unsigned k = 0; k < o->nat; k++) {
		char lab[48];

		snprintf(lab, sizeof(lab), "by %" PRIu64 ": obs / formula +-95%%", o->at[k]);
		fprintf(o->table, "  %-27s", lab);
	}
	fprintf(o->table, "\n");
}

/* Trials collided within n pages. */
static uint64_t hits_by(const uint64_t *first, uint64_t nt, uint64_t n)
{
	uint64_t hit = 0;

	for (uint64_t t = 0; t < nt; t++)
		hit += first[t] && first[t] <= n;
	return hit;
}

/* One hash's row in the table and the CSV, and its curve. */
static void put_hash(const struct birthday_opts *o, const struct bday *b, uint64_t nt)
{
	const uint64_t mp = b->max_pages;
	uint64_t collided = 0, sum = 0;
	uint64_t *sorted = g_new(uint64_t, nt ? nt : 1);

	for (uint64_t t = 0; t < nt; t++) {
		/* censored trials sort after every collided one */
		sorted[t] = b->first[t] ? b->first[t] : UINT64_MAX;
		if (b->first[t]) {
			collided++;
			sum += b->first[t];
		}
	}
	qsort(sorted, nt, sizeof(*sorted), cmp_u64);
	double expect, sd;
	char q[3][24], mean[32] = "", mn[24] = "", mx[24] = "", ex[24], sem[24] = "", half[24] = "";

	birthday_moments(b->bits, &expect, &sd);
	/* the mean of the collided trials; censored ones (none by default) would bias it */
	double se_mean = collided ? sd / sqrt((double)collided) : 0;
	static const double qs[3] = { 0.1, 0.5, 0.9 };

	for (int i = 0; i < 3; i++) {
		uint64_t idx = nt ? (uint64_t)ceil(qs[i] * nt) - 1 : 0;

		q[i][0] = 0;
		if (nt && sorted[idx] != UINT64_MAX)
			snprintf(q[i], sizeof(q[i]), "%" PRIu64, sorted[idx]);
	}
	if (collided) {
		snprintf(mean, sizeof(mean), "%.1f", (double)sum / collided);
		snprintf(mn, sizeof(mn), "%" PRIu64, sorted[0]);
		snprintf(mx, sizeof(mx), "%" PRIu64, sorted[collided - 1]);
		snprintf(sem, sizeof(sem), "%.6g", se_mean);
		snprintf(half, sizeof(half), "%.0f", 1.96 * se_mean);
	}
	g_free(sorted);
	if (o->csv)
		fprintf(o->csv, "%s,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%s,%.6g,%s,%s,%s,%s,%s",
			b->h->name, b->bits, birthday_pages_names[b->kind], b->seed, nt, mp,
			collided, mean, expect, q[0], q[1], q[2], mn, mx);
	snprintf(ex, sizeof(ex), expect < 1e9 ? "%.0f" : "%.3g", expect);
	fprintf(o->table, "%-8s %4u %6" PRIu64 " %8" PRIu64 " %8s %6s %9s %9s %9" PRIu64,
		b->h->name, b->bits, nt, collided, mean, half, ex, q[1], mp);
	for (unsigned k = 0; k < o->nat; k++) {
		uint64_t n = o->at[k], hit = hits_by(b->first, nt, n);
		double f = birthday_p((double)n, b->bits);
		double se = nt ? sqrt(f * (1 - f) / nt) : 0;

		/* Beyond max pages a trial's fate is unknown: no figure. */
		if (n > mp || !nt) {
			if (o->csv)
				fprintf(o->csv, ",,%.6g,%.6g", f, se);
			fprintf(o->table, "  %6s / %-8.3g        ", "-", f);
		} else {
			if (o->csv)
				fprintf(o->csv, ",%.6f,%.6g,%.6g", (double)hit / nt, f, se);
			fprintf(o->table, "  %6.3f / %-8.3g +- %-5.3f", (double)hit / nt, f, 1.96 * se);
		}
	}
	if (o->csv)
		fprintf(o->csv, ",%s,%.6g\n", sem, birthday_p((double)mp, b->bits));
	fprintf(o->table, "\n");
	fflush(o->table);
	if (o->curve_csv) {
		/* 100 steps from 0 to max pages, the formula in full precision */
		uint64_t step = mp / 100 ? mp / 100 : 1;

		for (uint64_t n = 0; n <= mp; n += step)
			fprintf(o->curve_csv, "%s,%u,%" PRIu64 ",%.6f,%.6g\n", b->h->name, b->bits, n,
				nt ? (double)hits_by(b->first, nt, n) / nt : 0.0,
				birthday_p((double)n, b->bits));
	}
}

/* What the +-95% columns mean, under the table. */
static void put_footnote(const struct birthday_opts *o, bool any_wide)
{
	fprintf(o->table,
		"+-95%%: 1.96 standard errors of a hash that follows the birthday model. Its share\n"
		"of T trials collided by N pages lies within formula +- 1.96*sqrt(p(1-p)/T), p the\n"
		"formula's, and its mean within expected +- 1.96*sd/sqrt(collided), sd the model's,\n"
		"95%% of the time (se_N and se_mean in the CSV).\n");
	if (any_wide)
		fprintf(o->table, "Wider hashes: no repeat is expected; formula_max_pages in the CSV is the"
			" chance of one\nin a trial of max_pages pages.\n");
}

void collide_birthday(const struct birthday_opts *o)
{
	bool any_wide = false;

	reportf("collide birthday", "%" PRIu64 " trials per hash of <= 32 bits, %" PRIu64
		" wider, on %u thread%s", o->trials, o->trials_wide, o->threads,
		o->threads == 1 ? "" : "s");
	put_header(o);
	for (unsigned hi = 0; hi < o->nhashes; hi++) {
		const struct page_hash *h = o->hashes[hi];
		unsigned bits = o->bits && o->bits < h->bits ? o->bits : h->bits;
		bool wide = bits > 32;
		uint64_t nt = wide ? o->trials_wide : o->trials;
		struct bday b = { h, bits, o->pages, o->seed, wide ? o->max_pages_wide : o->max_pages,
				  g_new0(uint64_t, nt ? nt : 1), g_new0(struct seen, o->threads) };
		int64_t t0 = g_get_monotonic_time();

		any_wide |= wide;
		study_par_for(o->threads, nt, bday_trial, &b);
		for (unsigned w = 0; w < o->threads; w++) {
			g_free(b.seen[w].key);
			g_free(b.seen[w].stamp);
		}
		g_free(b.seen);
		put_hash(o, &b, nt);
		reportf(NULL, "  %s: %.1f s", h->name, study_seconds(t0));
		g_free(b.first);
	}
	put_footnote(o, any_wide);
}

bool collide_birthday_plot(const char *curve_csv, const char *png, GError **error)
{
	/* gnuplot reads the tidy CSV once per hash; the titles say what is what. */
	GString *s = g_string_new(NULL);
	g_string_append_printf(s,
		"set terminal pngcairo size 1100,700 noenhanced font ',11'\n"
		"set output '%s.tmp'\n"
		"set datafile separator ','\n"
		"set key autotitle columnhead bottom right\n"
		"set title 'Birthday collisions of page checksums: observed share of trials vs formula'\n"
		"set xlabel 'distinct pages hashed (n)'\nset ylabel 'P(a checksum repeated within n pages)'\n"
		"set yrange [0:1.02]\nset grid\n"
		"hashes = system(\"awk -F, 'NR>1 && !s[$1]++ {printf \\\"%%s \\\", $1}' '%s'\")\n"
		"plot for [h in hashes] '%s' using 3:(strcol(1) eq h ? $4 : NaN) with lines lw 2 title h.' observed', "
		"for [h in hashes] '%s' using 3:(strcol(1) eq h ? $5 : NaN) with lines dt 2 lc 'black' notitle\n",
		png, curve_csv, curve_csv, curve_csv);
	FILE *gp = popen("gnuplot", "w");
	if (!gp) {
		g_string_free(s, TRUE);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot start gnuplot for %s", png);
		return false;
	}
	fputs(s->str, gp);
	g_string_free(s, TRUE);
	int rc = pclose(gp);
	gchar *tmp = g_strdup_printf("%s.tmp", png);
	bool ok = rc == 0 && rename(tmp, png) == 0;

	if (!ok) {
		unlink(tmp);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "gnuplot failed for %s", png);
	}
	g_free(tmp);
	return ok;
}
