// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim bench costs: what one page costs each checksum and each page
 * operation KSM performs, hot (the page in L1, hashed again and again) and
 * cold (streaming through a buffer far larger than the caches, every page
 * touched once per pass). Each figure is the median of --reps runs, in this
 * thread's CPU time.
 * The CSV is the cost table the model reads; columns in hashes/hash.h.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>
#include <csv.h>
#include "bench/bench.h"
#include "bench/bench_ref.h"
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"
#include "util/atomic_file.h"
#include "util/exit_status.h"
#include "util/signals.h"
#include "util/escape.h"

#define PAGE HASH_PAGE_SIZE
#define GIB (1024.0 * 1024.0 * 1024.0)
#define HOT_REP_NS 20e6		/* each hot repetition runs ~20 ms */
#define COLD_REP_NS 250e6	/* a cold repetition stops after ~250 ms ... */
#define COLD_MIN_PAGES 16384	/* ... but reads at least 64 MiB */

static volatile uint64_t sink;	/* results land here: no dead code */

struct row {
	const char *name;
	const char *kind;	/* "hash" or "reference" */
	unsigned bits;
	page_hash_fn one;
	uint64_t (*two)(void *a, void *b, void *tmp);
	double hot_ns, cold_ns;
	size_t cold_pages;	/* pages (or pairs) per cold repetition */
};

struct cold_buf {
	unsigned char *base;
	size_t pages;		/* a multiple of 2: the halves are equal */
	size_t cursor;		/* next page; walks on across rows and reps */
};

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The figures' clock: this thread's CPU time, so that on a shared machine
 * the time other jobs hold the CPU is not charged to a page (wall time at
 * load 17 on 2 CPUs tripled some hot figures). What the other jobs do to
 * the caches still shows, in the cold figures most.
 */
static double cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double gib_s(double ns)
{
	return ns > 0 ? PAGE / ns * 1e9 / GIB : 0;
}

/* ns per call of iters calls on the same page(s). */
static double hot_once(const struct row *r, unsigned char *a, unsigned char *b,
		       unsigned char *tmp, long iters)
{
	double t0 = cpu_now_ns();

	if (r->one)
		for (long i = 0; i < iters; i++)
			sink += r->one(a);
	else
		for (long i = 0; i < iters; i++)
			sink += r->two(a, b, tmp);
	return (cpu_now_ns() - t0) / iters;
}

/* Size one hot repetition of r to about HOT_REP_NS (this also warms it up). */
static long hot_iters(const struct row *r, unsigned char *a, unsigned char *b,
		      unsigned char *tmp)
{
	double est;
	long iters = 16;

	while ((est = hot_once(r, a, b, tmp, iters)) * iters < HOT_REP_NS / 8)
		iters *= 4;
	return (long)(HOT_REP_NS / est) + 1;
}

/*
 * Hot figures, repetitions interleaved across rows: on a shared machine the
 * load drifts, and rows measured side by side see the same drift, so the
 * ratios between them (the targets) stay meaningful.
 */
static void measure_hot_all(struct row *rows, size_t n, int reps, unsigned char *a,
			    unsigned char *b, unsigned char *tmp)
{
	long *iters = g_new(long, n);
	double *t = g_new(double, n * (size_t)reps);

	for (size_t i = 0; i < n; i++)
		iters[i] = hot_iters(&rows[i], a, b, tmp);
	for (int rep = 0; rep < reps; rep++)
		for (size_t i = 0; i < n; i++)
			t[i * reps + rep] = hot_once(&rows[i], a, b, tmp, iters[i]);
	for (size_t i = 0; i < n; i++)
		rows[i].hot_ns = bench_median(t + i * reps, reps);
	g_free(iters);
	g_free(t);
}

/* Pages of one cold repetition, starting at the cursor, wrapping. */
static double cold_once(const struct row *r, struct cold_buf *cb, size_t n,
			unsigned char *tmp)
{
	size_t half = cb->pages / 2;
	double t0 = cpu_now_ns();

	for (size_t k = 0; k < n; k++) {
		size_t i = cb->cursor;
		unsigned char *p = cb->base + i * PAGE;

		if (r->one) {
			sink += r->one(p);
		} else {
			/* Pair i with its twin half a buffer away. */
			size_t j = i < half ? i + half : i - half;

			sink += r->two(p, cb->base + j * PAGE, tmp);
		}
		cb->cursor = i + 1 == cb->pages ? 0 : i + 1;
	}
	return (cpu_now_ns() - t0) / n;
}

static void measure_cold(struct row *r, int reps, struct cold_buf *cb,
			 unsigned char *tmp)
{
	double t[reps];
	/* Guess from the hot figure plus a DRAM stream's worth per page. */
	double est = r->hot_ns + (r->two ? 1000 : 400);
	size_t n = (size_t)(COLD_REP_NS / est);
	size_t floor = COLD_MIN_PAGES < cb->pages ? COLD_MIN_PAGES : cb->pages;

	n = n < floor ? floor : n > cb->pages ? cb->pages : n;
	for (int i = 0; i < reps; i++)
		t[i] = cold_once(r, cb, n, tmp);
	r->cold_ns = bench_median(t, reps);
	r->cold_pages = n;
}

static void fill_random(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static const struct row *find_row(const struct row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

/*
 * The targets: want num's hot time / den's hot time >= min (a speed-up),
 * or <= max (a slow-down allowance).
 */
static int print_checks(FILE *out, const struct row *rows, size_t n)
{
	static const struct {
		const char *fast, *slow;
		double min_speedup;
		const char *what;
	} checks[] = {
		{ "crc32c", "crc32c-1stream", 2.5, "hot crc32c >= 2.5x one-stream crc32 loop" },
		{ "crc32c-own", "crc32c-1stream", 2.5, "(ours, unregistered when ISA-L is) same" },
		{ "xxh3", "xxh3-lib", 4.0, "hot xxh3 >= 4x libxxhash XXH3_64bits" },
		{ "xxhash", "xxh64-lib", 1 / 1.1, "xxhash within 10% of libxxhash XXH64" },
		{ "jhash2", "jhash2-plain", 1 / 1.1, "jhash2 within 10% of plain -O2 jhash2" },
	};
	int misses = 0;

	fprintf(out, "\nchecks (hot):\n");
	for (size_t i = 0; i < G_N_ELEMENTS(checks); i++) {
		const struct row *f = find_row(rows, n, checks[i].fast);
		const struct row *s = find_row(rows, n, checks[i].slow);

		if (!f || !s) {
			fprintf(out, "  n/a   %-44s (%s not measured)\n", checks[i].what,
				f ? checks[i].slow : checks[i].fast);
			continue;
		}
		double speedup = s->hot_ns / f->hot_ns;
		bool ok = speedup >= checks[i].min_speedup;

		misses += !ok;
		fprintf(out, "  %-5s %-44s %s/%s = %.2fx\n", ok ? "ok" : "MISS",
			checks[i].what, checks[i].slow, checks[i].fast, speedup);
	}
	return misses;
}

static void csv_field(FILE *f, const char *s, bool last)
{
	csv_fwrite(f, s, strlen(s));
	fputc(last ? '\n' : ',', f);
}

static void write_csv(FILE *f, const struct row *rows, size_t n, double jhash2_ns)
{
	fputs(HASH_COSTS_HEADER "\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char v[6][32];

		snprintf(v[0], sizeof(v[0]), "%u", r->bits);
		snprintf(v[1], sizeof(v[1]), "%.2f", r->hot_ns);
		snprintf(v[2], sizeof(v[2]), "%.3f", gib_s(r->hot_ns));
		snprintf(v[3], sizeof(v[3]), "%.2f", r->cold_ns);
		snprintf(v[4], sizeof(v[4]), "%.3f", gib_s(r->cold_ns));
		snprintf(v[5], sizeof(v[5]), "%.4f", jhash2_ns > 0 ? r->hot_ns / jhash2_ns : 0);
		csv_field(f, r->name, false);
		csv_field(f, r->kind, false);
		for (int k = 0; k < 6; k++)
			csv_field(f, v[k], k == 5);
	}
}

int bench_costs(const struct bench_costs_opts *o)
{
	const char *csv_path = o->csv;
	int reps = o->reps;
	uint64_t cold_mib = o->cold_mib;
	atomic_file *af = NULL;
	GError *err = NULL;

	/* Rows: the registry's checksums, then the references. */
	size_t nh, nr, n = 0;
	const struct page_hash *hs = hash_all(&nh);
	const struct cost_ref *refs = cost_refs(&nr);
	struct row *rows = g_new0(struct row, nh + nr);

	for (size_t i = 0; i < nh; i++)
		if (hs[i].fn)
			rows[n++] = (struct row){ .name = hs[i].name, .kind = "hash",
						  .bits = hs[i].bits, .one = hs[i].fn };
	for (size_t i = 0; i < nr; i++)
		rows[n++] = (struct row){ .name = refs[i].name, .kind = "reference",
					  .bits = refs[i].bits, .one = refs[i].one,
					  .two = refs[i].two };

	if (csv_path) {
		signals_install(SIGNALS_EXIT);
		af = atomic_file_open(csv_path, &err);
		if (!af) {
			reportf("ksmsim bench costs", "%s", err->message);
			g_error_free(err);
			g_free(rows);
			return EXIT_USAGE;
		}
	}
	/* With the CSV on stdout the table goes to stderr. */
	FILE *out = csv_path && !strcmp(csv_path, "-") ? stderr : stdout;

	struct cold_buf cb = { .pages = (size_t)cold_mib * (1024 * 1024 / PAGE) };
	size_t bytes = cb.pages * PAGE;
	unsigned char *hot = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cb.base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cb.base == MAP_FAILED || hot == MAP_FAILED) {
		reportf("ksmsim bench costs", "cannot allocate %" PRIu64 " MiB",
			cold_mib);
		if (af)
			atomic_file_abort(af);
		if (cb.base != MAP_FAILED)
			munmap(cb.base, bytes);
		if (hot != MAP_FAILED)
			munmap(hot, 3 * PAGE);
		g_free(rows);
		return EXIT_FAILURE;
	}
	/* Random first half, twin second half: pair ops see equal pages. */
	fill_random(cb.base, bytes / 2, 0x2545f4914f6cdd1dull);
	memcpy(cb.base + bytes / 2, cb.base, bytes / 2);
	fill_random(hot, PAGE, 0x9e3779b97f4a7c15ull);
	memcpy(hot + PAGE, hot, PAGE);

	fprintf(out, "bench costs: %d reps (median, thread CPU time), hot = 1 page in L1, cold = "
		"streaming a %" PRIu64 " MiB buffer\ncrc32c: %s; crc32c-own: %s; xxh3: %s; "
		"xxh3-inline: %s\n\n",
		reps, cold_mib, crc32c_impl(), crc32c_own_impl(), page_xxh3_impl(),
		page_xxh3_inline_impl());
	fprintf(out, "%-18s %-4s %4s %10s %8s %10s %8s %7s %7s %8s\n", "name", "kind",
		"bits", "hot ns/pg", "GiB/s", "cold ns/pg", "GiB/s", "hot/jh2",
		"cold/jh2", "cold MiB");
	fflush(out);

	double t0 = bench_now_ns();
	const struct row *jh = find_row(rows, n, "jhash2");
	bool tty = isatty(STDERR_FILENO);

	if (tty)
		fprintf(stderr, "\r%-50s", "bench costs: hot, all rows interleaved");
	measure_hot_all(rows, n, reps, hot, hot + PAGE, hot + 2 * PAGE);
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		char progress[128];

		snprintf(progress, sizeof(progress), "bench costs: %s (%zu/%zu)",
			 r->name, i + 1, n);
		signals_set_progress(progress);
		if (tty)
			fprintf(stderr, "\r%-50s", progress);
		measure_cold(r, reps, &cb, hot + 2 * PAGE);
	}
	if (tty)
		fprintf(stderr, "\r%-50s\r", "");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(out, "%-18s %-4s %4u %10.1f %8.2f %10.1f %8.2f %7.3f %8.3f %8zu\n",
			r->name, r->kind[0] == 'h' ? "hash" : "ref", r->bits,
			r->hot_ns, gib_s(r->hot_ns), r->cold_ns, gib_s(r->cold_ns),
			jh ? r->hot_ns / jh->hot_ns : 0, jh ? r->cold_ns / jh->cold_ns : 0,
			r->cold_pages * PAGE / (1024 * 1024) * (size_t)reps);
	}
	signals_set_progress(NULL);
	print_checks(out, rows, n);
	fprintf(out, "\nratios are ns/page relative to jhash2 (< 1 is cheaper); "
		"cold MiB = distinct data read per figure; %.1f s\n",
		(bench_now_ns() - t0) / 1e9);

	int rc = 0;

	if (af) {
		write_csv(atomic_file_stream(af), rows, n, jh ? jh->hot_ns : 0);
		if (!atomic_file_commit(af, &err)) {
			reportf("ksmsim bench costs", "%s", err->message);
			g_error_free(err);
			rc = EXIT_FAILURE;
		}
	}
	munmap(cb.base, bytes);
	munmap(hot, 3 * PAGE);
	g_free(rows);
	return rc;
}
