// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim collide: how often does a page checksum fool KSM?
 *
 *   birthday        first repeated checksum among distinct pages, per hash
 *   false-positive  a page changes, does its checksum stay the same?
 *   ksm             the same question asked inside the model, via `ksmsim run`
 *
 * Everything is a pure function of --seed: trials get their own SplitMix64
 * stream and threads only decide who computes which trial, so the CSV bytes
 * do not depend on the thread count. Timing goes to stderr, never to CSV.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include "cli/cli.h"
#include "hashes/hash.h"
#include "util/atomic_file.h"
#include "util/signals.h"

#define PAGE_WORDS (HASH_PAGE_SIZE / 8)
#define DEFAULT_HASHES "jhash2,crc32c,crc32,xxhash,xxh32,xxh64,xxh3"

static uint64_t sm64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Independent stream per (seed, a, b): trials never share random numbers. */
static uint64_t stream_seed(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t s = seed ^ (a * 0xD1B54A32D192ED03ull) ^ (b * 0x8CB92BA72F3D8DD7ull);
	sm64(&s);
	return sm64(&s);
}

static void fill_random(uint64_t *page, uint64_t *state)
{
	for (unsigned i = 0; i < PAGE_WORDS; i++)
		page[i] = sm64(state);
}

static uint64_t hash_mask(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

/* P(some repeat among n values uniform over 2^bits): the birthday formula. */
static double birthday_p(double n, unsigned bits)
{
	if (n < 2)
		return 0;
	return -expm1(-n * (n - 1) / ldexp(1.0, (int)bits + 1));
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		return false;
	*v = x;
	return true;
}

/* A comma list of hash names, each checked against the registry. */
static GPtrArray *parse_hashes(const char *list)
{
	GPtrArray *out = g_ptr_array_new();
	gchar **names = g_strsplit(list, ",", -1);
	for (gchar **n = names; *n; n++) {
		const struct page_hash *h = hash_lookup(*n);
		if (!h || !h->fn) {
			fprintf(stderr, "ksmsim collide: '%s' is not a checksum (see ksmsim hashes)\n", *n);
			g_ptr_array_free(out, TRUE);
			out = NULL;
			break;
		}
		g_ptr_array_add(out, (gpointer)h);
	}
	g_strfreev(names);
	if (out && out->len == 0) {
		g_ptr_array_free(out, TRUE);
		out = NULL;
	}
	return out;
}

/* Run fn(i, data) for i in [0, n) on `threads` threads; order of work is free. */
#define MAX_THREADS 256

struct par {
	void (*fn)(uint64_t i, unsigned worker, void *data);
	void *data;
	uint64_t n;
	uint64_t next;
	unsigned workers;
};

struct par_arg {
	struct par *par;
	unsigned worker;
};

static gpointer par_worker(gpointer p)
{
	struct par_arg *a = p;
	for (;;) {
		uint64_t i = __atomic_fetch_add(&a->par->next, 1, __ATOMIC_RELAXED);
		if (i >= a->par->n)
			break;
		a->par->fn(i, a->worker, a->par->data);
	}
	return NULL;
}

/* fn(i, worker, data) for i in [0, n); worker < threads owns its scratch. */
static void par_for(unsigned threads, uint64_t n,
		    void (*fn)(uint64_t, unsigned, void *), void *data)
{
	struct par par = { fn, data, n, 0, threads };
	struct par_arg arg[MAX_THREADS];
	GThread *t[MAX_THREADS];
	for (unsigned i = 0; i < threads; i++)
		arg[i] = (struct par_arg){ &par, i };
	for (unsigned i = 1; i < threads; i++)
		t[i] = g_thread_new("collide", par_worker, &arg[i]);
	par_worker(&arg[0]);
	for (unsigned i = 1; i < threads; i++)
		g_thread_join(t[i]);
}

static unsigned default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

static FILE *open_out(const char *path, atomic_file **af)
{
	GError *error = NULL;
	*af = atomic_file_open(path, &error);
	if (!*af) {
		fprintf(stderr, "ksmsim collide: %s\n", error->message);
		g_error_free(error);
		return NULL;
	}
	return atomic_file_stream(*af);
}

static bool commit_out(atomic_file *af)
{
	GError *error = NULL;
	if (!atomic_file_commit(af, &error)) {
		fprintf(stderr, "ksmsim collide: %s\n", error->message);
		g_error_free(error);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- birthday */

enum page_kind { PAGES_WORDS, PAGES_COUNTER, PAGES_FULL };
static const char *const page_kind_name[] = { "words", "counter", "full" };

struct bday {
	const struct page_hash *h;
	unsigned bits;			/* after --bits truncation */
	enum page_kind kind;
	uint64_t seed, max_pages;
	uint64_t *first;		/* per trial: page count at first repeat, 0 none */
	struct seen *seen;		/* one table per worker */
};

/*
 * Open addressing keyed by checksum; a slot is live when its stamp is the
 * current trial's, so the table is never cleared between trials.
 */
struct seen {
	uint64_t *key;
	uint32_t *stamp;
	uint64_t mask;
	uint32_t now;
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
	uint64_t i = (v * 0x9E3779B97F4A7C15ull) >> 17;
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
	uint64_t st = stream_seed(b->seed, 1, t);
	uint64_t m = hash_mask(b->bits);

	if (!seen->key)
		seen_init(seen, b->max_pages);
	if (++seen->now == 0) {		/* stamp wrapped: really clear */
		memset(seen->stamp, 0, (seen->mask + 1) * sizeof(*seen->stamp));
		seen->now = 1;
	}
	/*
	 * words/counter: one random base page per trial and, per page, word 0 a
	 * counter (so the pages are distinct for sure) and, for words, word 1 a
	 * fresh random value. A CRC of two pages differing only in a span of at
	 * most 32 bits never agrees, so counter pages can never collide under
	 * crc32/crc32c: that structure, not chance, decides.
	 */
	fill_random(page, &st);
	b->first[t] = 0;
	for (uint64_t i = 1; i <= b->max_pages; i++) {
		switch (b->kind) {
		case PAGES_FULL:
			fill_random(page, &st);
			break;
		case PAGES_WORDS:
			page[1] = sm64(&st);
			/* fall through */
		case PAGES_COUNTER:
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

/*
 * Expected page count at the first repeat: the sum over k of P(no repeat
 * among k pages); past 36 bits the asymptote sqrt(pi N / 2) + 2/3 is exact
 * to far more digits than we print.
 */
static double birthday_mean(unsigned bits)
{
	double N = ldexp(1.0, (int)bits), surv = 1, sum = 0;
	if (bits > 36)
		return sqrt(M_PI * N / 2) + 2.0 / 3;
	for (uint64_t k = 0; surv > 1e-12; k++) {
		sum += surv;		/* P(first > k) */
		surv *= 1 - (double)k / N;
	}
	return sum;
}

static const char bday_help[] =
"usage: ksmsim collide birthday [OPTIONS]\n"
"Hashes distinct pages until the first checksum repeats, many trials per\n"
"hash, and compares the share of trials collided by N pages with the\n"
"birthday formula 1-exp(-n(n-1)/2^(bits+1)).\n\n"
"  --hashes LIST      comma list (default " DEFAULT_HASHES ")\n"
"  --trials N         trials per hash of width <= 32 bits (default 100)\n"
"  --trials-wide N    trials per 64-bit hash (default 4)\n"
"  --max-pages N      pages per trial at most, <= 32 bits (default 400000)\n"
"  --max-pages-wide N pages per trial, 64-bit hashes (default 200000)\n"
"  --bits B           keep only the low B bits of every checksum (1-64)\n"
"  --pages KIND       words: a random base page per trial, per page word 0 a\n"
"                     counter and word 1 random (default; distinct pages);\n"
"                     counter: word 0 only; full: 4096 fresh random bytes\n"
"  --full-random      same as --pages full\n"
"  --at N,N...        page counts to report (default 78000,200000)\n"
"  --seed N           (default 1)\n"
"  --threads N        (default: online CPUs; output does not depend on it)\n"
"  -o, --csv FILE     one row per hash\n"
"  --curve-csv FILE   hash,bits,n,observed,formula on a grid of n\n"
"  --plot PNG         plot the curves with gnuplot (needs --curve-csv)\n";

static int plot_curves(const char *curve_csv, const char *png)
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
		return 2;
	}
	fputs(s->str, gp);
	g_string_free(s, TRUE);
	int rc = pclose(gp);
	gchar *tmp = g_strdup_printf("%s.tmp", png);
	if (rc != 0 || rename(tmp, png) != 0) {
		unlink(tmp);
		fprintf(stderr, "ksmsim collide: gnuplot failed for %s\n", png);
		g_free(tmp);
		return 2;
	}
	g_free(tmp);
	return 0;
}

static int cmd_birthday(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hashes", required_argument, NULL, 'H' },
		{ "trials", required_argument, NULL, 't' },
		{ "trials-wide", required_argument, NULL, 'T' },
		{ "max-pages", required_argument, NULL, 'm' },
		{ "max-pages-wide", required_argument, NULL, 'M' },
		{ "bits", required_argument, NULL, 'b' },
		{ "pages", required_argument, NULL, 'p' },
		{ "full-random", no_argument, NULL, 'F' },
		{ "at", required_argument, NULL, 'a' },
		{ "seed", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'o' },
		{ "curve-csv", required_argument, NULL, 'c' },
		{ "plot", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *hashes = DEFAULT_HASHES, *csv = NULL, *curve = NULL, *png = NULL;
	const char *at_list = "78000,200000";
	uint64_t trials = 100, trials_wide = 4, max_pages = 400000, max_wide = 200000;
	uint64_t seed = 1, bits_opt = 0, threads = default_threads();
	enum page_kind kind = PAGES_WORDS;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'H': hashes = optarg; break;
		case 't': ok = parse_u64(optarg, &trials) && trials > 0; break;
		case 'T': ok = parse_u64(optarg, &trials_wide); break;
		case 'm': ok = parse_u64(optarg, &max_pages) && max_pages > 0; break;
		case 'M': ok = parse_u64(optarg, &max_wide) && max_wide > 0; break;
		case 'b': ok = parse_u64(optarg, &bits_opt) && bits_opt >= 1 && bits_opt <= 64; break;
		case 'p':
			if (!strcmp(optarg, "words")) kind = PAGES_WORDS;
			else if (!strcmp(optarg, "counter")) kind = PAGES_COUNTER;
			else if (!strcmp(optarg, "full")) kind = PAGES_FULL;
			else ok = false;
			break;
		case 'F': kind = PAGES_FULL; break;
		case 'a': at_list = optarg; break;
		case 's': ok = parse_u64(optarg, &seed); break;
		case 'j': ok = parse_u64(optarg, &threads) && threads > 0 && threads <= MAX_THREADS; break;
		case 'o': csv = optarg; break;
		case 'c': curve = optarg; break;
		case 'P': png = optarg; break;
		case 'h': fputs(bday_help, stdout); return 0;
		default: fputs(bday_help, stderr); return EXIT_USAGE;
		}
		if (!ok) {
			fprintf(stderr, "ksmsim collide birthday: bad value '%s'\n", optarg);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || (png && !curve)) {
		fputs(bday_help, stderr);
		return EXIT_USAGE;
	}
	/* Memory per thread grows with max pages; 2^31 pages is past any sane use. */
	if (max_pages > (1ull << 31) || max_wide > (1ull << 31)) {
		fprintf(stderr, "ksmsim collide birthday: --max-pages too large\n");
		return EXIT_USAGE;
	}
	GPtrArray *hs = parse_hashes(hashes);
	if (!hs)
		return EXIT_USAGE;
	GArray *at = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	gchar **ats = g_strsplit(at_list, ",", -1);
	for (gchar **a = ats; *a; a++) {
		uint64_t v;
		if (!parse_u64(*a, &v) || v < 2) {
			fprintf(stderr, "ksmsim collide birthday: bad --at '%s'\n", *a);
			g_strfreev(ats);
			return EXIT_USAGE;
		}
		g_array_append_val(at, v);
	}
	g_strfreev(ats);

	signals_install(SIGNALS_EXIT);
	atomic_file *af = NULL, *cf = NULL;
	FILE *out = NULL, *cout = NULL;
	if (csv && !(out = open_out(csv, &af)))
		return EXIT_USAGE;
	if (curve && !(cout = open_out(curve, &cf))) {
		if (af)
			atomic_file_abort(af);
		return EXIT_USAGE;
	}
	if (out) {
		fputs("hash,bits,pages,seed,trials,max_pages,collided,mean_first,expected_mean,"
		      "p10,p50,p90,min_first,max_first", out);
		for (guint k = 0; k < at->len; k++) {
			uint64_t n = g_array_index(at, uint64_t, k);
			fprintf(out, ",frac_%" PRIu64 ",formula_%" PRIu64 ",se_%" PRIu64, n, n, n);
		}
		fputs(",formula_max_pages\n", out);
	}
	if (cout)
		fputs("hash,bits,n,observed,formula\n", cout);

	printf("%-8s %4s %6s %8s %8s %9s %9s %9s", "hash", "bits", "trials", "collided",
	       "mean", "expected", "p50", "max_pages");
	for (guint k = 0; k < at->len; k++) {
		char lab[48];
		snprintf(lab, sizeof(lab), "by %" PRIu64 ": obs / formula +- se", g_array_index(at, uint64_t, k));
		printf("  %-27s", lab);
	}
	printf("\n");

	for (guint hi = 0; hi < hs->len; hi++) {
		const struct page_hash *h = g_ptr_array_index(hs, hi);
		unsigned bits = bits_opt && bits_opt < h->bits ? (unsigned)bits_opt : h->bits;
		bool wide = bits > 32;
		uint64_t nt = wide ? trials_wide : trials;
		uint64_t mp = wide ? max_wide : max_pages;
		struct bday b = { h, bits, kind, seed, mp, g_new0(uint64_t, nt ? nt : 1),
				  g_new0(struct seen, threads) };
		gint64 t0 = g_get_monotonic_time();

		par_for((unsigned)threads, nt, bday_trial, &b);
		for (unsigned w = 0; w < threads; w++) {
			g_free(b.seen[w].key);
			g_free(b.seen[w].stamp);
		}
		g_free(b.seen);

		uint64_t collided = 0, sum = 0;
		uint64_t *sorted = g_new(uint64_t, nt ? nt : 1);
		for (uint64_t t = 0; t < nt; t++) {
			/* censored trials sort after every collided one */
			sorted[t] = b.first[t] ? b.first[t] : UINT64_MAX;
			if (b.first[t]) {
				collided++;
				sum += b.first[t];
			}
		}
		qsort(sorted, nt, sizeof(*sorted), cmp_u64);
		double expect = birthday_mean(bits);
		char q[3][24], mean[32] = "", mn[24] = "", mx[24] = "";
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
		}
		if (out) {
			fprintf(out, "%s,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%s,%.6g,%s,%s,%s,%s,%s",
				h->name, bits, page_kind_name[kind], seed, nt, mp, collided,
				mean, expect, q[0], q[1], q[2], mn, mx);
		}
		char ex[24];
		snprintf(ex, sizeof(ex), expect < 1e9 ? "%.0f" : "%.3g", expect);
		printf("%-8s %4u %6" PRIu64 " %8" PRIu64 " %8s %9s %9s %9" PRIu64,
		       h->name, bits, nt, collided, mean, ex, q[1], mp);
		for (guint k = 0; k < at->len; k++) {
			uint64_t n = g_array_index(at, uint64_t, k), hit = 0;
			double f = birthday_p((double)n, bits);
			double se = nt ? sqrt(f * (1 - f) / nt) : 0;
			for (uint64_t t = 0; t < nt; t++)
				hit += b.first[t] && b.first[t] <= n;
			/* Beyond max pages a trial's fate is unknown: no figure. */
			if (n > mp || !nt) {
				if (out)
					fprintf(out, ",,%.6g,%.6g", f, se);
				printf("  %6s / %-8.3g        ", "-", f);
			} else {
				if (out)
					fprintf(out, ",%.6f,%.6g,%.6g", (double)hit / nt, f, se);
				printf("  %6.3f / %-8.3g +- %-5.3f", (double)hit / nt, f, se);
			}
		}
		if (out)
			fprintf(out, ",%.6g\n", birthday_p((double)mp, bits));
		printf("\n");
		fflush(stdout);
		if (cout) {
			/* 100 steps plus the --at points, the formula in full precision */
			uint64_t step = mp / 100 ? mp / 100 : 1;
			for (uint64_t n = 0; n <= mp; n += step) {
				uint64_t hit = 0;
				for (uint64_t t = 0; t < nt; t++)
					hit += b.first[t] && b.first[t] <= n;
				fprintf(cout, "%s,%u,%" PRIu64 ",%.6f,%.6g\n", h->name, bits, n,
					nt ? (double)hit / nt : 0.0, birthday_p((double)n, bits));
			}
		}
		fprintf(stderr, "  %s: %.1f s\n", h->name, (g_get_monotonic_time() - t0) / 1e6);
		g_free(sorted);
		g_free(b.first);
	}
	g_ptr_array_free(hs, TRUE);
	g_array_free(at, TRUE);
	if ((af && !commit_out(af)) || (cf && !commit_out(cf)))
		return EXIT_USAGE;
	if (png)
		return plot_curves(curve, png);
	return 0;
}

/* --------------------------------------------------- crafted CRC deltas */

/*
 * For a fixed length a CRC is affine over GF(2): crc(a ^ d) = crc(a) ^ L(d)
 * with L linear. A window of DELTA_BYTES bytes gives DELTA_BYTES*8 unit
 * vectors; their images under (crc32c, crc32) are 64-bit, so at least
 * DELTA_BYTES*8 - 64 independent combinations map to zero. Any nonzero
 * element of that kernel, XORed into any page at any offset, keeps both
 * CRCs (a CRC's x^k multiplier is invertible, so the offset does not matter).
 */
#define DELTA_BYTES 16
#define DELTA_BITS (DELTA_BYTES * 8)

struct kernel {
	unsigned dim;
	uint8_t basis[DELTA_BITS][DELTA_BYTES];
};

static uint64_t crc_image(const struct page_hash *a, const struct page_hash *b, const uint8_t *page)
{
	return (a->fn(page) & 0xffffffffull) | (b->fn(page) & 0xffffffffull) << 32;
}

static bool crc_kernel(struct kernel *k)
{
	const struct page_hash *c1 = hash_lookup("crc32c"), *c2 = hash_lookup("crc32");
	if (!c1 || !c2 || !c1->fn || !c2->fn)
		return false;
	uint8_t *page = g_malloc0(HASH_PAGE_SIZE);
	uint64_t zero = crc_image(c1, c2, page);
	/* echelon form: row with leading bit p in piv[p], plus the combination */
	uint64_t piv_v[64];
	uint8_t piv_c[64][DELTA_BYTES];
	bool have[64] = { false };

	k->dim = 0;
	for (unsigned j = 0; j < DELTA_BITS; j++) {
		page[j / 8] = (uint8_t)(1u << (j % 8));
		uint64_t v = crc_image(c1, c2, page) ^ zero;
		page[j / 8] = 0;
		uint8_t comb[DELTA_BYTES] = { 0 };
		comb[j / 8] = (uint8_t)(1u << (j % 8));
		while (v) {
			int p = 63 - __builtin_clzll(v);
			if (!have[p]) {
				have[p] = true;
				piv_v[p] = v;
				memcpy(piv_c[p], comb, DELTA_BYTES);
				break;
			}
			v ^= piv_v[p];
			for (int i = 0; i < DELTA_BYTES; i++)
				comb[i] ^= piv_c[p][i];
		}
		if (!v)
			memcpy(k->basis[k->dim++], comb, DELTA_BYTES);
	}
	g_free(page);
	return k->dim > 0;
}

/* A random nonzero kernel element. */
static void kernel_pick(const struct kernel *k, uint64_t *st, uint8_t *d)
{
	bool nonzero = false;
	while (!nonzero) {
		memset(d, 0, DELTA_BYTES);
		for (unsigned i = 0; i < k->dim; i += 64) {
			uint64_t r = sm64(st);
			for (unsigned j = i; j < k->dim && j < i + 64; j++)
				if (r >> (j - i) & 1)
					for (int b = 0; b < DELTA_BYTES; b++)
						d[b] ^= k->basis[j][b];
		}
		for (int b = 0; b < DELTA_BYTES; b++)
			nonzero |= d[b] != 0;
	}
}

/* ----------------------------------------------------------- false positive */

enum change { CH_BITFLIP, CH_WORD, CH_PATCH, CH_CRAFTED, N_CHANGES };
static const char *const change_name[] = { "bitflip", "word", "patch", "crafted-crc" };

#define FP_BLOCK 4096u		/* trials per work item */

struct fp {
	const struct page_hash *h;
	unsigned bits, hash_index;
	enum change ch;
	uint64_t seed, trials;
	const struct kernel *k;
	uint64_t *same;		/* per block */
};

static void fp_block(uint64_t blk, unsigned worker, void *data)
{
	const struct fp *f = data;
	uint64_t page[PAGE_WORDS] __attribute__((aligned(64)));
	uint8_t *bytes = (uint8_t *)page, save[64];
	/* the same pages and changes for every hash: a paired comparison */
	uint64_t st = stream_seed(f->seed, 2 + f->ch, blk);
	uint64_t m = hash_mask(f->bits), same = 0;
	uint64_t end = (blk + 1) * FP_BLOCK < f->trials ? (blk + 1) * FP_BLOCK : f->trials;

	fill_random(page, &st);
	for (uint64_t t = blk * FP_BLOCK; t < end; t++) {
		/* a new page every trial: one more random word */
		page[t % PAGE_WORDS] = sm64(&st);
		uint64_t before = f->h->fn(page) & m, r = sm64(&st);
		unsigned off = 0, len = 0;

		switch (f->ch) {
		case CH_BITFLIP:
			off = (unsigned)(r % HASH_PAGE_SIZE);
			len = 1;
			save[0] = bytes[off];
			bytes[off] ^= (uint8_t)(1u << (r >> 32 & 7));
			break;
		case CH_WORD: {
			unsigned w = (unsigned)(r % PAGE_WORDS);
			uint64_t v;
			do
				v = sm64(&st);
			while (v == page[w]);
			off = w * 8;
			len = 8;
			memcpy(save, bytes + off, 8);
			page[w] = v;
			break;
		}
		case CH_PATCH: {
			len = 1 + (unsigned)(r % 64);
			off = (unsigned)((r >> 8) % (HASH_PAGE_SIZE - len + 1));
			memcpy(save, bytes + off, len);
			do {
				for (unsigned i = 0; i < len; i += 8) {
					uint64_t x = sm64(&st);
					memcpy(bytes + off + i, &x, len - i < 8 ? len - i : 8);
				}
			} while (!memcmp(save, bytes + off, len));
			break;
		}
		case CH_CRAFTED: {
			uint8_t d[DELTA_BYTES];
			kernel_pick(f->k, &st, d);
			len = DELTA_BYTES;
			off = (unsigned)(r % (HASH_PAGE_SIZE - len + 1));
			memcpy(save, bytes + off, len);
			for (unsigned i = 0; i < len; i++)
				bytes[off + i] ^= d[i];
			break;
		}
		default:
			break;
		}
		same += (f->h->fn(page) & m) == before;
		memcpy(bytes + off, save, len);
	}
	f->same[blk] = same;
}

static const char fp_help[] =
"usage: ksmsim collide false-positive [OPTIONS]\n"
"The share of page changes that keep the page's checksum: what KSM's\n"
"checksum gate gets wrong. Changes: bitflip (one bit), word (one u64 word\n"
"set to a new random value), patch (1-64 random bytes at a random offset),\n"
"crafted-crc (a random nonzero delta from the common kernel of crc32c and\n"
"crc32, found by GF(2) elimination, XORed in at a random offset).\n\n"
"  --hashes LIST      comma list (default " DEFAULT_HASHES ")\n"
"  --changes LIST     comma list (default bitflip,word,patch,crafted-crc)\n"
"  --trials N         changes per hash and kind (default 1000000)\n"
"  --bits B           keep only the low B bits of every checksum\n"
"  --seed N           (default 1)\n"
"  --threads N        (default: online CPUs; output does not depend on it)\n"
"  --print-delta      print one crafted delta (hex) and exit\n"
"  -o, --csv FILE     one row per hash and change kind\n";

static int cmd_false_positive(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hashes", required_argument, NULL, 'H' },
		{ "changes", required_argument, NULL, 'C' },
		{ "trials", required_argument, NULL, 't' },
		{ "bits", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'j' },
		{ "print-delta", no_argument, NULL, 'D' },
		{ "csv", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *hashes = DEFAULT_HASHES, *changes = "bitflip,word,patch,crafted-crc";
	const char *csv = NULL;
	uint64_t trials = 1000000, seed = 1, bits_opt = 0, threads = default_threads();
	bool print_delta = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'H': hashes = optarg; break;
		case 'C': changes = optarg; break;
		case 't': ok = parse_u64(optarg, &trials) && trials > 0; break;
		case 'b': ok = parse_u64(optarg, &bits_opt) && bits_opt >= 1 && bits_opt <= 64; break;
		case 's': ok = parse_u64(optarg, &seed); break;
		case 'j': ok = parse_u64(optarg, &threads) && threads > 0 && threads <= MAX_THREADS; break;
		case 'D': print_delta = true; break;
		case 'o': csv = optarg; break;
		case 'h': fputs(fp_help, stdout); return 0;
		default: fputs(fp_help, stderr); return EXIT_USAGE;
		}
		if (!ok) {
			fprintf(stderr, "ksmsim collide false-positive: bad value '%s'\n", optarg);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fputs(fp_help, stderr);
		return EXIT_USAGE;
	}
	static struct kernel k;
	if (!crc_kernel(&k)) {
		fprintf(stderr, "ksmsim collide: no crc32c/crc32 in the registry\n");
		return EXIT_USAGE;
	}
	if (print_delta) {
		uint64_t st = seed;
		uint8_t d[DELTA_BYTES];
		kernel_pick(&k, &st, d);
		for (int i = 0; i < DELTA_BYTES; i++)
			printf("%02x", d[i]);
		printf("\n");
		return 0;
	}
	bool want[N_CHANGES] = { false };
	gchar **cl = g_strsplit(changes, ",", -1);
	for (gchar **p = cl; *p; p++) {
		int i;
		for (i = 0; i < N_CHANGES; i++)
			if (!strcmp(*p, change_name[i]) || (i == CH_CRAFTED && !strcmp(*p, "crafted")))
				break;
		if (i == N_CHANGES) {
			fprintf(stderr, "ksmsim collide false-positive: unknown change '%s'\n", *p);
			g_strfreev(cl);
			return EXIT_USAGE;
		}
		want[i] = true;
	}
	g_strfreev(cl);
	GPtrArray *hs = parse_hashes(hashes);
	if (!hs)
		return EXIT_USAGE;

	signals_install(SIGNALS_EXIT);
	atomic_file *af = NULL;
	FILE *out = NULL;
	if (csv && !(out = open_out(csv, &af)))
		return EXIT_USAGE;
	if (out)
		fputs("hash,bits,change,seed,trials,unchanged,rate,rate_upper95,expected_rate\n", out);
	printf("%-8s %4s %-12s %10s %9s %12s %12s %12s\n", "hash", "bits", "change", "trials",
	       "unchanged", "rate", "upper95", "expected");
	uint64_t nblk = (trials + FP_BLOCK - 1) / FP_BLOCK;
	for (guint hi = 0; hi < hs->len; hi++) {
		const struct page_hash *h = g_ptr_array_index(hs, hi);
		unsigned bits = bits_opt && bits_opt < h->bits ? (unsigned)bits_opt : h->bits;
		bool is_crc = !strcmp(h->name, "crc32c") || !strcmp(h->name, "crc32");
		for (int ch = 0; ch < N_CHANGES; ch++) {
			if (!want[ch])
				continue;
			struct fp f = { h, bits, hi, ch, seed, trials, &k, g_new0(uint64_t, nblk) };
			gint64 t0 = g_get_monotonic_time();
			par_for((unsigned)threads, nblk, fp_block, &f);
			uint64_t same = 0;
			for (uint64_t b = 0; b < nblk; b++)
				same += f.same[b];
			g_free(f.same);
			double rate = (double)same / trials;
			/* zero seen: the rule of three; else a normal interval */
			double up = same ? rate + 1.96 * sqrt(rate * (1 - rate) / trials) : 3.0 / trials;
			if (up > 1)
				up = 1;
			/*
			 * A CRC detects every burst of up to 32 bits, so a single
			 * bit flip never passes; its crafted kernel always does
			 * (truncation keeps an equality an equality).
			 */
			double expect = ldexp(1.0, -(int)bits);
			if (is_crc && ch == CH_BITFLIP && bits == 32)
				expect = 0;
			if (is_crc && ch == CH_CRAFTED)
				expect = 1;
			if (out)
				fprintf(out, "%s,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6g,%.6g,%.6g\n",
					h->name, bits, change_name[ch], seed, trials, same, rate, up, expect);
			printf("%-8s %4u %-12s %10" PRIu64 " %9" PRIu64 " %12.4g %12.4g %12.4g\n",
			       h->name, bits, change_name[ch], trials, same, rate, up, expect);
			fflush(stdout);
			fprintf(stderr, "  %s %s: %.1f s\n", h->name, change_name[ch],
				(g_get_monotonic_time() - t0) / 1e6);
		}
	}
	g_ptr_array_free(hs, TRUE);
	if (af && !commit_out(af))
		return EXIT_USAGE;
	return 0;
}

/* ---------------------------------------------------------------- ksm */

struct ksm_gen {
	unsigned guests;
	uint64_t pages, image, churn, crafted, seconds, epoch_ms, seed;
};

static void hex_bytes(FILE *f, const uint8_t *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%02x", d[i]);
}

/*
 * A trace whose unstable tree holds far more than 1 GiB: per guest an image
 * shared by all guests (merges, then CoW), private pages (the unstable
 * tree), a churn range rewritten with random words (every checksum sees
 * it) and a crafted range whose 16-byte window steps through the crc32c/
 * crc32 kernel (the CRCs see nothing: every state has the same CRCs).
 */
static bool write_ksm_trace(const char *path, const struct ksm_gen *g, const struct kernel *k)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	uint64_t st = stream_seed(g->seed, 9, 0);
	const uint64_t base = 0x100000, woff = 2048;	/* window mid-page */
	uint64_t priv = g->pages - g->image - g->churn - g->crafted;
	uint64_t churn_at = base + g->image + priv, craft_at = churn_at + g->churn;
	uint8_t zero[DELTA_BYTES] = { 0 }, d[DELTA_BYTES];

	fprintf(f, "ksmtrace 1\n# ksmsim collide ksm: %u guests x %" PRIu64 " pages (%.2f GiB), seed %" PRIu64 "\n"
		"# image %" PRIu64 ", churn %" PRIu64 ", crafted %" PRIu64 " pages per guest, epoch %" PRIu64 " ms\n",
		g->guests, g->pages, g->guests * g->pages / 262144.0, g->seed,
		g->image, g->churn, g->crafted, g->epoch_ms);
	fprintf(f, "0 set pages_to_scan 4000\n0 set sleep_millisecs 20\n");
	for (unsigned i = 0; i < g->guests; i++) {
		fprintf(f, "0 spawn g%u\n0 map g%u %#" PRIx64 " %" PRIu64 "\n"
			"0 advise g%u %#" PRIx64 " %" PRIu64 " mergeable\n",
			i, i, base, g->pages, i, base, g->pages);
		if (g->image)
			fprintf(f, "0 fillseq g%u %#" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				i, base, g->image, UINT64_C(1) << 40);
		/* private seeds far apart: no page equals another guest's */
		if (g->pages > g->image)
			fprintf(f, "0 fillseq g%u %#" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				i, base + g->image, g->pages - g->image, (uint64_t)(i + 2) << 40);
		if (g->crafted) {
			fprintf(f, "0 fill g%u %#" PRIx64 " %" PRIu64 " bytes:%" PRIu64 ":",
				i, craft_at, g->crafted, woff);
			hex_bytes(f, zero, DELTA_BYTES);
			fputc('\n', f);
		}
	}
	fprintf(f, "0 set run 1\n0 mark start\n");
	uint64_t epochs = g->seconds * 1000 / g->epoch_ms;
	for (uint64_t e = 1; e <= epochs; e++) {
		uint64_t t = e * g->epoch_ms * 1000;
		for (unsigned i = 0; i < g->guests; i++) {
			if (g->churn)
				fprintf(f, "%" PRIu64 " fill g%u %#" PRIx64 " %" PRIu64 " word:%u:%#" PRIx64 "\n",
					t, i, churn_at, g->churn, (unsigned)(e % PAGE_WORDS), sm64(&st));
			if (g->crafted) {
				kernel_pick(k, &st, d);
				fprintf(f, "%" PRIu64 " fill g%u %#" PRIx64 " %" PRIu64 " bytes:%" PRIu64 ":",
					t, i, craft_at, g->crafted, woff);
				hex_bytes(f, d, DELTA_BYTES);
				fputc('\n', f);
			}
			/* every 10th epoch a guest writes to 1% of its image: CoW */
			if (e % 10 == i % 10 && g->image >= 100) {
				uint64_t n = g->image / 100, at = base + (sm64(&st) % (g->image - n + 1));
				fprintf(f, "%" PRIu64 " fill g%u %#" PRIx64 " %" PRIu64 " word:0:%#" PRIx64 "\n",
					t, i, at, n, sm64(&st));
			}
		}
	}
	fprintf(f, "%" PRIu64 " mark end\n", (epochs + 1) * g->epoch_ms * 1000);
	return fclose(f) == 0;
}

/* ksmsim run ... as a child of this very binary; its stdout is silenced. */
static int run_child(GPtrArray *args)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv("/proc/self/exe", (char **)args->pdata);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Peak and mean pages_unshared over a time series' samples after t = 0. */
static void series_stats(const char *path, double *peak, double *avg)
{
	gchar *text = NULL;
	*peak = *avg = NAN;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return;
	gchar **lines = g_strsplit(text, "\n", -1);
	g_free(text);
	int col = -1;
	gchar **hdr = g_strsplit(lines[0], ",", -1);
	for (int j = 0; hdr[j]; j++)
		if (!strcmp(hdr[j], "pages_unshared"))
			col = j;
	g_strfreev(hdr);
	double max = 0, sum = 0;
	unsigned n = 0;
	for (int i = 1; col >= 0 && lines[i] && lines[i][0]; i++) {
		gchar **f = g_strsplit(lines[i], ",", -1);
		if ((int)g_strv_length(f) > col && strcmp(f[0], "0")) {
			double v = g_ascii_strtod(f[col], NULL);
			max = v > max ? v : max;
			sum += v;
			n++;
		}
		g_strfreev(f);
	}
	g_strfreev(lines);
	if (n) {
		*peak = max;
		*avg = sum / n;
	}
}

static const char ksm_help[] =
"usage: ksmsim collide ksm [OPTIONS] [-- RUN-OPTIONS]\n"
"Replays one trace through the model once per hash (`ksmsim run`) and\n"
"tabulates what the checksum gate let through. Without --trace it writes\n"
"its own: guests whose unstable tree holds > 1 GiB, a churn range rewritten\n"
"with random words, and a crafted range rewritten with crc32c/crc32-\n"
"preserving deltas.\n\n"
"  --trace FILE        replay this trace instead\n"
"  --keep-trace FILE   also keep the generated trace there\n"
"  --hashes LIST       (default jhash2,crc32c,crc32,xxhash,xxh64)\n"
"  --guests N          (default 4)\n"
"  --pages N           pages per guest (default 100000: 4 x 390 MiB)\n"
"  --image N           pages per guest shared by all guests (default 10000)\n"
"  --churn N           pages per guest rewritten with random words (default 4000)\n"
"  --crafted N         pages per guest rewritten with CRC-kernel deltas (default 4000)\n"
"  --seconds N         trace length (default 30)\n"
"  --epoch-ms N        rewrite period (default 300)\n"
"  --seed N            (default 1)\n"
"  --run-csv FILE      all `ksmsim run --summary-csv` rows, one per hash\n"
"  -o, --csv FILE      the table below as CSV\n"
"RUN-OPTIONS go to every `ksmsim run` (e.g. --pages-to-scan 1600).\n";

static const char *const ksm_cols[] = {
	"pages_sharing", "pages_unshared", "pages_volatile", "cow_ksm", "checksums",
	"gate_changed", "false_positives", "unstable_inserts", "unstable_corrupt_walks",
	"unstable_changed_after_insert", "missed_merges", "ksmd_cpu_ms",
};
#define N_KSM_COLS G_N_ELEMENTS(ksm_cols)
#define KSM_COL_INSERTS 7	/* ksm_cols[] index of unstable_inserts */

static int cmd_ksm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "trace", required_argument, NULL, 'r' },
		{ "keep-trace", required_argument, NULL, 'k' },
		{ "hashes", required_argument, NULL, 'H' },
		{ "guests", required_argument, NULL, 'g' },
		{ "pages", required_argument, NULL, 'p' },
		{ "image", required_argument, NULL, 'i' },
		{ "churn", required_argument, NULL, 'c' },
		{ "crafted", required_argument, NULL, 'C' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "epoch-ms", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 's' },
		{ "run-csv", required_argument, NULL, 'R' },
		{ "csv", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *trace = NULL, *keep = NULL, *hashes = "jhash2,crc32c,crc32,xxhash,xxh64";
	const char *run_csv = NULL, *csv = NULL;
	struct ksm_gen g = { 4, 100000, 10000, 4000, 4000, 30, 300, 1 };
	uint64_t guests = 4;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+ho:", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'r': trace = optarg; break;
		case 'k': keep = optarg; break;
		case 'H': hashes = optarg; break;
		case 'g': ok = parse_u64(optarg, &guests) && guests >= 1 && guests <= 1000; break;
		case 'p': ok = parse_u64(optarg, &g.pages) && g.pages >= 1; break;
		case 'i': ok = parse_u64(optarg, &g.image); break;
		case 'c': ok = parse_u64(optarg, &g.churn); break;
		case 'C': ok = parse_u64(optarg, &g.crafted); break;
		case 'S': ok = parse_u64(optarg, &g.seconds) && g.seconds >= 1; break;
		case 'e': ok = parse_u64(optarg, &g.epoch_ms) && g.epoch_ms >= 1; break;
		case 's': ok = parse_u64(optarg, &g.seed); break;
		case 'R': run_csv = optarg; break;
		case 'o': csv = optarg; break;
		case 'h': fputs(ksm_help, stdout); return 0;
		default: fputs(ksm_help, stderr); return EXIT_USAGE;
		}
		if (!ok) {
			fprintf(stderr, "ksmsim collide ksm: bad value '%s'\n", optarg);
			return EXIT_USAGE;
		}
	}
	g.guests = (unsigned)guests;
	if (g.image + g.churn + g.crafted > g.pages || g.pages > (1ull << 30)) {
		fprintf(stderr, "ksmsim collide ksm: --image + --churn + --crafted exceed --pages\n");
		return EXIT_USAGE;
	}
	GPtrArray *hs = parse_hashes(hashes);
	if (!hs)
		return EXIT_USAGE;
	static struct kernel k;
	if (!crc_kernel(&k))
		return EXIT_USAGE;

	signals_install(SIGNALS_EXIT);
	gchar *dir = g_dir_make_tmp("ksmsim-collide-XXXXXX", NULL);
	if (!dir) {
		fprintf(stderr, "ksmsim collide ksm: no temporary directory\n");
		return EXIT_USAGE;
	}
	gchar *gen = NULL;
	int rc = 0;
	if (!trace) {
		gen = keep ? g_strdup(keep) : g_build_filename(dir, "ksm.ksmt", NULL);
		if (!write_ksm_trace(gen, &g, &k)) {
			fprintf(stderr, "ksmsim collide ksm: cannot write %s\n", gen);
			rc = EXIT_USAGE;
			goto out;
		}
		trace = gen;
	}

	atomic_file *af = NULL, *rf = NULL;
	FILE *out = NULL, *rout = NULL;
	if (csv && !(out = open_out(csv, &af))) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (run_csv && !(rout = open_out(run_csv, &rf))) {
		rc = EXIT_USAGE;
		goto out;
	}
	double values[64][N_KSM_COLS], peak[64], avg[64];
	printf("%-8s", "hash");
	for (size_t i = 0; i < N_KSM_COLS; i++)
		printf(" %s", ksm_cols[i]);
	printf(" extra_unstable_inserts peak_unshared avg_unshared\n");
	for (guint hi = 0; hi < hs->len && hi < 64; hi++) {
		const struct page_hash *h = g_ptr_array_index(hs, hi);
		gchar *sum = g_strdup_printf("%s/summary-%s.csv", dir, h->name);
		GPtrArray *args = g_ptr_array_new();
		g_ptr_array_add(args, "ksmsim");
		g_ptr_array_add(args, "run");
		g_ptr_array_add(args, "--quiet");
		g_ptr_array_add(args, "--trace");
		g_ptr_array_add(args, (gpointer)trace);
		g_ptr_array_add(args, "--hash");
		g_ptr_array_add(args, (gpointer)h->name);
		g_ptr_array_add(args, "--summary-csv");
		g_ptr_array_add(args, sum);
		/* rows name the trace, not the temporary folder it was written to */
		g_ptr_array_add(args, "--trace-label");
		g_ptr_array_add(args, gen && !keep ? "(generated)" : (gpointer)trace);
		/* the final snapshot may fall mid-scan: keep 1 s samples for the peak */
		gchar *ser = g_strdup_printf("%s/series-%s.csv", dir, h->name);
		g_ptr_array_add(args, "--csv");
		g_ptr_array_add(args, ser);
		for (int i = optind; i < argc; i++)
			g_ptr_array_add(args, argv[i]);
		g_ptr_array_add(args, NULL);
		gint64 t0 = g_get_monotonic_time();
		int r = run_child(args);
		g_ptr_array_free(args, TRUE);
		fprintf(stderr, "  run %s: %.1f s\n", h->name, (g_get_monotonic_time() - t0) / 1e6);
		series_stats(ser, &peak[hi], &avg[hi]);
		g_free(ser);
		gchar *text = NULL;
		if (r != 0 || !g_file_get_contents(sum, &text, NULL, NULL)) {
			fprintf(stderr, "ksmsim collide ksm: ksmsim run --hash %s failed (%d)\n", h->name, r);
			g_free(sum);
			rc = r == 130 || r == 143 ? r : EXIT_USAGE;
			goto abort;
		}
		g_free(sum);
		/* The summary is two lines: header and one row; trace names have no commas here. */
		gchar **lines = g_strsplit(text, "\n", 3);
		gchar **hdr = g_strsplit(lines[0], ",", -1), **row = g_strsplit(lines[1] ? lines[1] : "", ",", -1);
		if (rout) {
			if (hi == 0)
				fprintf(rout, "%s\n", lines[0]);
			fprintf(rout, "%s\n", lines[1] ? lines[1] : "");
		}
		for (size_t i = 0; i < N_KSM_COLS; i++) {
			values[hi][i] = NAN;
			for (int j = 0; hdr[j] && row[j] && j < (int)g_strv_length(row); j++)
				if (!strcmp(hdr[j], ksm_cols[i]))
					values[hi][i] = g_ascii_strtod(row[j], NULL);
		}
		g_strfreev(hdr);
		g_strfreev(row);
		g_strfreev(lines);
		g_free(text);
	}
	/* extra insertions: against the hash that inserted fewest, the honest gate */
	double least = INFINITY;
	for (guint hi = 0; hi < hs->len && hi < 64; hi++)
		if (values[hi][KSM_COL_INSERTS] < least)
			least = values[hi][KSM_COL_INSERTS];
	if (out) {
		fputs("hash,bits", out);
		for (size_t i = 0; i < N_KSM_COLS; i++)
			fprintf(out, ",%s", ksm_cols[i]);
		fputs(",extra_unstable_inserts,peak_pages_unshared,avg_pages_unshared\n", out);
	}
	for (guint hi = 0; hi < hs->len && hi < 64; hi++) {
		const struct page_hash *h = g_ptr_array_index(hs, hi);
		printf("%-8s", h->name);
		if (out)
			fprintf(out, "%s,%u", h->name, h->bits);
		for (size_t i = 0; i < N_KSM_COLS; i++) {
			bool ms = !strcmp(ksm_cols[i], "ksmd_cpu_ms");
			printf(" %*.*f", (int)strlen(ksm_cols[i]), ms ? 1 : 0, values[hi][i]);
			if (out)
				fprintf(out, ",%.*f", ms ? 3 : 0, values[hi][i]);
		}
		printf(" %22.0f %13.0f %12.1f\n", values[hi][KSM_COL_INSERTS] - least, peak[hi], avg[hi]);
		if (out)
			fprintf(out, ",%.0f,%.0f,%.1f\n", values[hi][KSM_COL_INSERTS] - least, peak[hi], avg[hi]);
	}
	if ((af && !commit_out(af)) || (rf && !commit_out(rf)))
		rc = EXIT_USAGE;
	af = rf = NULL;
abort:
	if (af)
		atomic_file_abort(af);
	if (rf)
		atomic_file_abort(rf);
out:
	g_ptr_array_free(hs, TRUE);
	if (gen && !keep)
		unlink(gen);
	g_free(gen);
	/* the summaries, then the directory */
	GDir *d = g_dir_open(dir, 0, NULL);
	if (d) {
		const char *name;
		while ((name = g_dir_read_name(d))) {
			gchar *p = g_build_filename(dir, name, NULL);
			unlink(p);
			g_free(p);
		}
		g_dir_close(d);
	}
	rmdir(dir);
	g_free(dir);
	return rc;
}

/* ----------------------------------------------------------------- dispatch */

static const char collide_help[] =
"usage: ksmsim collide MODE [OPTIONS]\n"
"Checksum collision study; every figure is a function of --seed.\n\n"
"  birthday        first repeated checksum among distinct pages vs the\n"
"                  birthday formula, per hash\n"
"  false-positive  share of page changes that keep the checksum (what KSM's\n"
"                  gate gets wrong), random and crafted CRC-linear changes\n"
"  ksm             the consequence in the model: one `ksmsim run` per hash\n\n"
"'ksmsim collide MODE --help' lists each mode's options.\n";

int cmd_collide(int argc, char **argv)
{
	if (argc < 2) {
		fputs(collide_help, stderr);
		return EXIT_USAGE;
	}
	const char *mode = argv[1];
	if (!strcmp(mode, "--help") || !strcmp(mode, "-h")) {
		fputs(collide_help, stdout);
		return 0;
	}
	if (!strcmp(mode, "birthday"))
		return cmd_birthday(argc - 1, argv + 1);
	if (!strcmp(mode, "false-positive") || !strcmp(mode, "fp"))
		return cmd_false_positive(argc - 1, argv + 1);
	if (!strcmp(mode, "ksm"))
		return cmd_ksm(argc - 1, argv + 1);
	fprintf(stderr, "ksmsim collide: unknown mode '%s'\n", mode);
	fputs(collide_help, stderr);
	return EXIT_USAGE;
}
