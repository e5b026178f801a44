// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim bench calibrate: the cost table fitted to what the live ksmd
 * spends. Each designed scenario is a small trace (written here) that
 * isolates one or two of the model's cost terms; it is replayed on the live
 * kernel --repeat times (ksmd's own CPU time from schedstat, at the last
 * mark: the marks' ksmd_cpu_ms), and once through the model, which counts
 * how many of each term the same trace costs (ksm_cost_counts). The live
 * medians are then fitted as a non-negative sum of counts times costs by
 * weighted non-negative least squares (Lawson-Hanson; weights 1/live time,
 * so every scenario's relative error counts alike).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "bench/bench.h"
#include "bench/bench_ref.h"
#include "hashes/hash.h"
#include "live/live.h"
#include "marks/marks.h"
#include "sim/cost_model.h"
#include "sim/profile.h"
#include "sim/run.h"
#include "util/atomic_file.h"
#include "util/exit_status.h"
#include "util/signals.h"
#include "util/escape.h"
#include "util/splitmix64.h"

#define SKIP_STATUS 77

/* What the scenarios fit; the others keep a fixed value (see fixed_terms). */
static const enum cost_term fitted[] = {
	COST_VISIT, COST_CHECKSUM, COST_TREE_LEVEL, COST_MEMCMP_BYTE, COST_MERGE,
	COST_STABLE_INSERT, COST_RMAP_ITEM, COST_SKIP, COST_FULL_PASS, COST_CHAIN_STEP,
	COST_TREE_COLD, COST_REVISIT,
};
#define NFIT G_N_ELEMENTS(fitted)
/* their column heads in the counts table */
static const char *const fitted_short[NFIT] = {
	"visit", "checksum", "level", "cmp_byte", "merge", "st_insert", "rmap_new", "skip",
	"pass", "chain", "cold", "revisit",
};

#define MAX_REPEAT 64
#define PROF_GROUPS 8	/* profile_ngroups(), checked at the start */
#define GROUP_OTHER 7	/* profile_group_name(7) is "other" */

enum shape {
	SHAPE_DISTINCT,		/* every page different: checksums, unstable tree */
	SHAPE_PAIRS,		/* two mms with the same pages: one merge per pair */
	SHAPE_IDENTICAL,	/* one content everywhere: merges, chains at max_page_sharing */
	SHAPE_ZERO,		/* zero pages with use_zero_pages 1 */
	SHAPE_SMART,		/* distinct, smart_scan 1: skips after the first passes */
	SHAPE_CONTENTS,		/* 64 contents, each on many pages: merges into many chains */
	/*
	 * Real workloads' KSM pages lie in no order the scan follows (the
	 * copies of one heap put the same object at different places, merges
	 * come in any order), so a revisit finds its stable node and KSM page
	 * out of the caches; and the pages that stay unshared search a stable
	 * tree of every merged content at every pass. The shapes above keep
	 * the copies in one order: these two do not.
	 */
	SHAPE_SCATTERED,	/* pairs, the second mm's pages in a shuffled order */
	SHAPE_SERVICE,		/* 3 copies: shuffled shared pages, 1 in 8 unique */
	/*
	 * Where a term lacked support: pages equal but for their last word
	 * (every compare reads the whole page), pages rewritten before every
	 * pass (volatile: a checksum and no tree), pairs merged and then
	 * written again (CoW breaks: the rmap_items leave the stable tree
	 * and merge again).
	 */
	SHAPE_LATE,
	SHAPE_VOLATILE,
	SHAPE_COW,
};

struct scenario {
	const char *name;
	const char *isolates;
	enum shape shape;
	unsigned pages;		/* over all its mms */
	unsigned passes;
	unsigned max_page_sharing;	/* 0: 256, the kernel's default */
	unsigned mms;		/* 0: 2 */
	unsigned rewrites;	/* rounds of rewriting, passes of settle after each */
	/* filled in */
	char *path;
	struct cost_counts counts;	/* the model's, at the last mark */
	double model_ms;		/* the built-in table's */
	double live_ms;			/* median */
	double live_min, live_max;
	double fit_ms;
	/* the live profile's groups (sim/profile.h), ms at the last mark, per replay */
	double gms[MAX_REPEAT][PROF_GROUPS];
	double tot[MAX_REPEAT];		/* ksmd's ms the profile saw, per replay */
	double gmed[PROF_GROUPS];	/* each group's median */
	double tot_med;
};

#define SCEN(n, w, sh, p, ps) { .name = n, .isolates = w, .shape = sh, .pages = p, .passes = ps }
#define SCEN_MPS(n, w, sh, p, ps, mps)                                                             \
	{ .name = n, .isolates = w, .shape = sh, .pages = p, .passes = ps, .max_page_sharing = mps }
static struct scenario scenarios[] = {
	SCEN("distinct-4k", "visit, checksum, rmap_item_new", SHAPE_DISTINCT, 4096, 4),
	SCEN("distinct-16k", "visit, checksum, tree_level", SHAPE_DISTINCT, 16384, 4),
	SCEN("distinct-64k", "tree_level, memcmp_byte (a deeper tree)", SHAPE_DISTINCT, 65536, 4),
	SCEN("distinct-64k-2", "rmap_item_new against visits (fewer passes)", SHAPE_DISTINCT, 65536, 2),
	SCEN("distinct-16k-10", "visit, checksum (many passes)", SHAPE_DISTINCT, 16384, 10),
	SCEN("pairs-16k", "merge, stable_insert (one each per pair)", SHAPE_PAIRS, 16384, 3),
	SCEN("pairs-64k", "merge, stable_insert, stable tree levels", SHAPE_PAIRS, 65536, 3),
	SCEN("identical-32k", "merge into chains (stable_insert per 256)", SHAPE_IDENTICAL, 32768, 3),
	SCEN("identical-32k-12", "already merged, runs of one KSM page: visit alone", SHAPE_IDENTICAL, 32768, 12),
	SCEN("zero-32k", "merge with the zero page, memcmp_byte", SHAPE_ZERO, 32768, 3),
	SCEN("smart-32k-12", "smart_scan_skip", SHAPE_SMART, 32768, 12),
	SCEN("tiny-64-400", "full_pass (64 pages, 400 passes)", SHAPE_DISTINCT, 64, 400),
	/*
	 * Chains: the same merges at two chain lengths (stable_node_dup walks
	 * every dup while stable_node_chains_prune_millisecs is 0), so the
	 * walk's steps separate from the merges; and trees, compares and
	 * merges at a size past the caches, where each level's page is cold.
	 */
	SCEN_MPS("chains-32k-8", "chain_step (chains of 8 dups)", SHAPE_CONTENTS, 32768, 3, 64),
	SCEN_MPS("chains-32k-128", "chain_step (chains of 128 dups)", SHAPE_CONTENTS, 32768, 3, 4),
	SCEN("distinct-256k", "tree_level, memcmp_byte (cold, 1 GiB)", SHAPE_DISTINCT, 262144, 3),
	SCEN("pairs-256k", "merge, stable_insert (cold, 1 GiB)", SHAPE_PAIRS, 262144, 3),
	/* as workloads lay their pages out (see SHAPE_SCATTERED) */
	SCEN("scattered-64k-3", "merging out of scan order (scattered-64k-12 less its revisits)",
	     SHAPE_SCATTERED, 65536, 3),
	SCEN("scattered-64k-12", "revisit: KSM pages out of scan order", SHAPE_SCATTERED, 65536, 12),
	SCEN("scattered-256k-8", "revisit: KSM pages out of scan order (cold)", SHAPE_SCATTERED,
	     262144, 8),
	{ .name = "service-96k-10", .isolates = "searches of a large stable tree, shuffled revisits",
	  .shape = SHAPE_SERVICE, .pages = 98304, .passes = 10, .mms = 3 },
	SCEN("late-16k", "memcmp_byte: compares that read the whole page", SHAPE_LATE, 16384, 3),
	{ .name = "volatile-32k-6", .isolates = "visit, checksum without trees (volatile pages)",
	  .shape = SHAPE_VOLATILE, .pages = 32768, .passes = 1, .rewrites = 5 },
	{ .name = "cow-32k-3x2", .isolates = "merge again after CoW breaks, rmap_items leaving the tree",
	  .shape = SHAPE_COW, .pages = 32768, .passes = 2, .rewrites = 2 },
};
#define NSCEN G_N_ELEMENTS(scenarios)

/* --------------------------------------------------------- the traces */

/* A permutation of 0..n-1 from seed (Fisher-Yates over SplitMix64). */
static unsigned *shuffled(unsigned n, uint64_t seed)
{
	unsigned *perm = g_new(unsigned, MAX(n, 1u));

	for (unsigned i = 0; i < n; i++)
		perm[i] = i;
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)(splitmix64_next(&seed) % i);
		unsigned t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	return perm;
}

/*
 * One page at a time: page vpn of mm m gets rand:seed. (fillseq with one
 * page: the shuffled shapes cannot use runs.)
 */
static void put_page(GString *t, int m, unsigned vpn, uint64_t seed)
{
	g_string_append_printf(t, "0 fillseq m%d 0x%x 1 %" PRIu64 "\n", m, vpn, seed);
}

static bool write_trace(struct scenario *s, const char *dir, double scale, GError **error)
{
	unsigned nmm = s->mms ? s->mms : 2;
	unsigned pages = (unsigned)MAX(16.0, s->pages * scale);
	unsigned half = pages / nmm;
	GString *t = g_string_new("ksmtrace 1\n");

	if (s->pages <= 64)
		half = s->pages / 2;	/* the per-pass scenario keeps its size */
	g_string_append_printf(t, "# bench calibrate scenario %s: %s\n", s->name, s->isolates);
	g_string_append_printf(t, "0 set pages_to_scan 10000\n0 set sleep_millisecs 10\n"
			       "0 set max_page_sharing %u\n"
			       "0 set stable_node_chains_prune_millisecs 0\n",
			       s->max_page_sharing ? s->max_page_sharing : 256);
	g_string_append_printf(t, "0 set smart_scan %d\n0 set use_zero_pages %d\n",
			       s->shape == SHAPE_SMART, s->shape == SHAPE_ZERO);
	for (unsigned m = 0; m < nmm; m++) {
		g_string_append_printf(t, "0 spawn m%u\n0 map m%u 0x100000 %u\n"
				       "0 advise m%u 0x100000 %u mergeable\n", m, m, half, m, half);
		switch (s->shape) {
		case SHAPE_DISTINCT:
		case SHAPE_SMART:
			g_string_append_printf(t, "0 fillseq m%u 0x100000 %u %u\n", m, half,
					       1000000u * (m + 1));
			break;
		case SHAPE_PAIRS:
		case SHAPE_COW:
			g_string_append_printf(t, "0 fillseq m%u 0x100000 %u 5000000\n", m, half);
			break;
		case SHAPE_VOLATILE:
			g_string_append_printf(t, "0 fillseq m%u 0x100000 %u %u\n", m, half,
					       1000000u * (m + 1));
			break;
		case SHAPE_LATE:
			/* one byte everywhere, the last word each page's own */
			g_string_append_printf(t, "0 fill m%u 0x100000 %u byte:5a\n", m, half);
			for (unsigned i = 0; i < half; i++)
				g_string_append_printf(t, "0 write m%u 0x%x word:511:%u\n", m,
						       0x100000 + i, 1000u + m * half + i);
			break;
		case SHAPE_IDENTICAL:
			g_string_append_printf(t, "0 fill m%u 0x100000 %u byte:5a\n", m, half);
			break;
		case SHAPE_ZERO:
			g_string_append_printf(t, "0 fill m%u 0x100000 %u zero\n", m, half);
			break;
		case SHAPE_CONTENTS:
			/* 64 runs of one byte each, the same in both mms */
			for (unsigned c = 0, each = MAX(1u, half / 64); c < 64; c++)
				g_string_append_printf(t, "0 fill m%u 0x%x %u byte:%02x\n", m,
						       0x100000 + c * each, each, 0x40 + c);
			break;
		case SHAPE_SCATTERED:
			if (m == 0) {
				g_string_append_printf(t, "0 fillseq m0 0x100000 %u 5000000\n", half);
			} else {
				unsigned *perm = shuffled(half, 0x5ca77e2d);
				for (unsigned i = 0; i < half; i++)
					put_page(t, (int)m, 0x100000 + i, 5000000u + perm[i]);
				g_free(perm);
			}
			break;
		case SHAPE_SERVICE: {
			/*
			 * Every copy: the same shared contents, each copy in
			 * its own order, and 1 page in 8 its own (a unique
			 * seed), at places of its own among them.
			 */
			unsigned *perm = shuffled(half, 0x5e2u + m);
			for (unsigned i = 0; i < half; i++)
				put_page(t, (int)m, 0x100000 + i,
					 perm[i] % 8 == 7 ? 9000000u + 1000000u * m + perm[i] :
							    5000000u + perm[i]);
			g_free(perm);
			break;
		}
		}
	}
	g_string_append_printf(t, "0 set run 1\n0 settle %u\n", s->passes);
	for (unsigned r = 1; r <= s->rewrites; r++) {
		for (unsigned m = 0; m < nmm; m++) {
			if (s->shape == SHAPE_VOLATILE)	/* new bytes: every checksum moves */
				g_string_append_printf(t, "0 fillseq m%u 0x100000 %u %u\n", m, half,
						       1000000u * (m + 1) + 100000u * r);
			else if (m == 1)	/* SHAPE_COW: the same bytes, every merged page copied */
				g_string_append_printf(t, "0 fillseq m1 0x100000 %u 5000000\n", half);
		}
		g_string_append_printf(t, "0 settle %u\n", s->passes);
	}
	g_string_append(t, "0 mark end\n");
	s->path = g_strconcat(dir, G_DIR_SEPARATOR_S, s->name, ".ksmt", NULL);
	bool ok = g_file_set_contents(s->path, t->str, (gssize)t->len, error);
	g_string_free(t, TRUE);
	return ok;
}

/* --------------------------------------------------------- the model */

struct model_ctx {
	struct cost_counts counts;
	double cpu_ns;
};

static bool on_mark(void *ctx, const char *label, uint64_t t_us, struct ksm *k, GError **error)
{
	struct model_ctx *m = ctx;
	struct ksm_truth t;

	(void)label, (void)t_us, (void)error;
	ksm_cost_counts(k, &m->counts);
	ksm_truth(k, &t);
	m->cpu_ns = t.cpu_ns;
	return true;
}

/* The model's counts of s and its CPU time with costs (NULL: the built-in table). */
static bool model_run(struct scenario *s, const char *costs, double *cpu_ms, GError **error)
{
	struct run_config cfg = { .trace = s->path, .costs_csv = costs };
	struct run run;
	struct model_ctx m = { 0 };
	struct loop_sinks sinks = { .mark = on_mark, .ctx = &m };
	struct loop_result res;

	if (!run_config_resolve(&cfg, error) || !run_open(&run, &cfg, error))
		return false;
	bool ok = run_replay(&run, &sinks, &res, error);
	run_close(&run);
	s->counts = m.counts;
	*cpu_ms = m.cpu_ns / 1e6;
	return ok;
}

/* --------------------------------------------------------- the live ksmd */

/* ksmd_cpu_ms of the last row of a live marks file. */
static bool last_cpu_ms(const char *text, double *ms, GError **error)
{
	const char *end = text + strlen(text);

	while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	const char *line = end;
	while (line > text && line[-1] != '\n')
		line--;
	const char *comma = NULL;
	for (const char *p = line; p < end; p++)
		if (*p == ',')
			comma = p;
	char *num = comma ? g_strndup(comma + 1, (gsize)(end - comma - 1)) : NULL;
	char *stop = NULL;
	if (num && *num)
		*ms = g_ascii_strtod(num, &stop);
	bool ok = num && *num && stop && !*stop;
	if (!ok)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "the live replay wrote no ksmd_cpu_ms (is ksmd visible in /proc?)");
	g_free(num);
	return ok;
}

/*
 * The live profile's last mark (live --profile's CSV: label,term,samples,
 * share,ms, cumulative), each term's ms into its group (sim/profile.h);
 * "other" (samples none of the table's functions is on) spread over the
 * groups in proportion, so that they add up to ksmd's time.
 */
static bool profile_groups(const char *text, double gms[PROF_GROUPS], double *total,
			   GError **error)
{
	char **lines = g_strsplit(text, "\n", -1);
	double term_ms[LIVE_PROFILE_NR] = { 0 };
	bool any = false;

	for (char **l = lines; *l; l++) {
		char **f;

		if (!**l || **l == '#' || g_str_has_prefix(*l, "label,"))
			continue;
		f = g_strsplit(*l, ",", -1);
		if (g_strv_length(f) == 5)
			for (int t = 0; t < LIVE_PROFILE_NR; t++)
				if (!strcmp(f[1], live_profile_term_names[t])) {
					term_ms[t] = g_ascii_strtod(f[4], NULL);	/* the last wins */
					any = true;
				}
		g_strfreev(f);
	}
	g_strfreev(lines);
	if (!any) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "the live profile wrote no rows (no mark reached?)");
		return false;
	}
	double sum = 0, other = 0;

	memset(gms, 0, sizeof(double) * PROF_GROUPS);
	for (int t = 0; t < LIVE_PROFILE_NR; t++) {
		int g = profile_group_of(live_profile_term_names[t]);

		sum += term_ms[t];
		if (g == GROUP_OTHER || g < 0)
			other += term_ms[t];
		else
			gms[g] += term_ms[t];
	}
	for (int g = 0; g < PROF_GROUPS && sum > other; g++)
		gms[g] *= sum / (sum - other);
	*total = sum;
	return true;
}

/* One replay; with gms, under the profile, each group's ms into gms. */
static bool live_once(const struct scenario *s, double *ms, double gms[PROF_GROUPS],
		      GError **error)
{
	char *buf = NULL, *pbuf = NULL;
	size_t len = 0, plen = 0;
	FILE *f = open_memstream(&buf, &len);
	FILE *pf = gms ? open_memstream(&pbuf, &plen) : NULL;
	struct live_replay_params p = {
		.trace_name = s->name, .settle_timeout = 600, .base = LIVE_DEFAULT_BASE,
		.cpu = LIVE_CPU_LEAST_BUSY, .marks = f,
	};
	GError *rerr = NULL;
	trace_reader *r = NULL;
	struct live_session *sess = NULL;
	bool ok = false;
	double total = 0;

	if (!f || (gms && !pf)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "open_memstream failed");
		goto out;
	}
	r = trace_reader_open(s->path, error);
	if (!r)
		goto out;
	if (pf && !(p.profile = live_profile_open(pf, error)))
		goto out;
	sess = live_session_begin(error);
	if (!sess)
		goto out;
	ok = live_replay(&p, r, error);
	if (!live_session_end(sess, &rerr)) {
		if (ok)
			g_propagate_prefixed_error(error, rerr, "restoring KSM failed: ");
		else
			g_error_free(rerr);
		ok = false;
	}
out:
	if (r)
		trace_reader_free(r);
	live_profile_close(p.profile);
	if (f)
		fclose(f);
	if (pf)
		fclose(pf);
	ok = ok && last_cpu_ms(buf, ms, error);
	ok = ok && (!gms || profile_groups(pbuf, gms, &total, error));
	free(buf);
	free(pbuf);
	return ok;
}

/*
 * One clean replay: wait (up to wait_s in all) while another process uses
 * KSM, and throw a replay away when one began to meanwhile (its pages
 * would be in ksmd's time). The machine is shared; the knobs are ours.
 */
static bool live_clean(const struct scenario *s, double *ms, double gms[PROF_GROUPS],
		       double *waited, double wait_s, GError **error)
{
	for (;;) {
		GError *busy = NULL;

		if (live_check_usable(&busy)) {
			if (!live_once(s, ms, gms, error))
				return false;
			if (live_check_usable(NULL))
				return true;
			printf("  (%s: another process used KSM during the replay: again)\n", s->name);
			continue;
		}
		if (*waited >= wait_s) {
			g_propagate_prefixed_error(error, busy, "waited %.0f s: ", *waited);
			return false;
		}
		g_error_free(busy);
		struct timespec ts = { 2, 0 };
		nanosleep(&ts, NULL);
		*waited += 2;
		if (signals_caught()) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted");
			return false;
		}
	}
}

/* --------------------------------------------------------- the fit */

/*
 * Solves the n x n system m x = v (row-major, overwritten) by Gaussian
 * elimination with partial pivoting; false when singular.
 */
static bool solve(double *m, double *v, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		size_t piv = c;

		for (size_t r = c + 1; r < n; r++)
			if (fabs(m[r * n + c]) > fabs(m[piv * n + c]))
				piv = r;
		if (fabs(m[piv * n + c]) < 1e-300)
			return false;
		if (piv != c) {
			for (size_t k = 0; k < n; k++) {
				double tmp = m[c * n + k];

				m[c * n + k] = m[piv * n + k];
				m[piv * n + k] = tmp;
			}
			double tmp = v[c];
			v[c] = v[piv];
			v[piv] = tmp;
		}
		for (size_t r = 0; r < n; r++) {
			if (r == c)
				continue;
			double f = m[r * n + c] / m[c * n + c];

			for (size_t k = c; k < n; k++)
				m[r * n + k] -= f * m[c * n + k];
			v[r] -= f * v[c];
		}
	}
	for (size_t c = 0; c < n; c++)
		v[c] /= m[c * n + c];
	return true;
}

/* Least squares of a (rows x cols, row-major) on b over the columns in set; x gets them. */
static bool ls_subset(const double *a, const double *b, size_t rows, size_t cols,
		      const bool *set, double *x, double *inv_diag)
{
	size_t idx[NFIT], n = 0;
	double m[NFIT * NFIT], v[NFIT];

	for (size_t j = 0; j < cols; j++)
		if (set[j])
			idx[n++] = j;
	for (size_t p = 0; p < n; p++) {
		v[p] = 0;
		for (size_t r = 0; r < rows; r++)
			v[p] += a[r * cols + idx[p]] * b[r];
		for (size_t q = 0; q < n; q++) {
			m[p * n + q] = 0;
			for (size_t r = 0; r < rows; r++)
				m[p * n + q] += a[r * cols + idx[p]] * a[r * cols + idx[q]];
		}
	}
	/* the inverse's diagonal, for the uncertainties: one solve per unit vector */
	if (inv_diag) {
		for (size_t p = 0; p < n; p++) {
			double mm[NFIT * NFIT], e[NFIT] = { 0 };

			memcpy(mm, m, sizeof(double) * n * n);
			e[p] = 1;
			if (!solve(mm, e, n))
				return false;
			inv_diag[idx[p]] = e[p];
		}
	}
	if (!solve(m, v, n))
		return false;
	for (size_t j = 0; j < cols; j++)
		x[j] = 0;
	for (size_t p = 0; p < n; p++)
		x[idx[p]] = v[p];
	return true;
}

/*
 * Lawson and Hanson's NNLS: min |a x - b| with x >= 0, the active set
 * grown by the largest gradient and shrunk where a step would go negative.
 */
static bool nnls(const double *a, const double *b, size_t rows, size_t cols, double *x,
		 bool *passive)
{
	double z[NFIT], w[NFIT];

	for (size_t j = 0; j < cols; j++)
		x[j] = 0, passive[j] = false;
	for (int iter = 0; iter < 100; iter++) {
		size_t best = cols;
		double wmax = 1e-12;

		for (size_t j = 0; j < cols; j++) {
			w[j] = 0;
			for (size_t r = 0; r < rows; r++) {
				double res = b[r];

				for (size_t k = 0; k < cols; k++)
					res -= a[r * cols + k] * x[k];
				w[j] += a[r * cols + j] * res;
			}
			if (!passive[j] && w[j] > wmax)
				wmax = w[j], best = j;
		}
		if (best == cols)
			return true;
		passive[best] = true;
		for (;;) {
			if (!ls_subset(a, b, rows, cols, passive, z, NULL))
				return false;
			bool neg = false;

			for (size_t j = 0; j < cols; j++)
				neg |= passive[j] && z[j] <= 0;
			if (!neg) {
				memcpy(x, z, sizeof(double) * cols);
				break;
			}
			double alpha = 1;

			for (size_t j = 0; j < cols; j++)
				if (passive[j] && z[j] <= 0)
					alpha = MIN(alpha, x[j] / (x[j] - z[j]));
			for (size_t j = 0; j < cols; j++) {
				x[j] += alpha * (z[j] - x[j]);
				if (passive[j] && x[j] <= 1e-15)
					passive[j] = false, x[j] = 0;
			}
		}
	}
	return true;
}

/* --------------------------------------------------------- the report */

/* The other checksums: xxhash's fitted cost times each one's measured ratio to it. */
static void checksum_rows(double xxhash_ns, const char ***names, double **ns, size_t *n)
{
	size_t nh;
	const struct page_hash *hs = hash_all(&nh);
	const struct page_hash *xx = hash_lookup("xxhash");

	*names = g_new0(const char *, nh);
	*ns = g_new0(double, nh);
	*n = 0;
	for (size_t i = 0; i < nh; i++) {
		if (!hs[i].fn)
			continue;
		double ratio = kernel_hash_ratio(hs[i].name);

		if (ratio <= 0)	/* no kernel-shaped twin: the registry's cold figures */
			ratio = hs[i].cold_ns / xx->cold_ns;
		(*names)[*n] = hs[i].name;
		(*ns)[(*n)++] = xxhash_ns * ratio;
	}
}

/*
 * The fit at one cold depth h: the scenarios' rows weighted by their live
 * time (so the fit minimises relative errors), each column scaled to at
 * most 1, the non-negative solution and the plain least squares over its
 * free terms (for the uncertainties); each scenario's fitted time set.
 */
#define COLD_DEPTH_MIN 4
#define COLD_DEPTH_MAX 32
struct fit {
	unsigned cold_depth;
	double x[NFIT], scale[NFIT], inv[NFIT], rss;
	bool passive[NFIT];
	size_t nfree;
};

static uint64_t count_at(const struct scenario *s, size_t j, unsigned cold_depth)
{
	return fitted[j] == COST_TREE_COLD ? cost_cold_levels(&s->counts, cold_depth)
					   : s->counts.n[fitted[j]];
}

static bool fit_at(unsigned h, struct fit *f)
{
	double a[NSCEN * NFIT], b[NSCEN];

	memset(f, 0, sizeof(*f));
	f->cold_depth = h;
	for (size_t j = 0; j < NFIT; j++) {
		for (size_t i = 0; i < NSCEN; i++)
			f->scale[j] = MAX(f->scale[j], (double)count_at(&scenarios[i], j, h) /
						       (scenarios[i].live_ms * 1e6));
		if (f->scale[j] == 0)
			f->scale[j] = 1;
	}
	for (size_t i = 0; i < NSCEN; i++) {
		b[i] = 1;
		for (size_t j = 0; j < NFIT; j++)
			a[i * NFIT + j] = (double)count_at(&scenarios[i], j, h) /
					  (scenarios[i].live_ms * 1e6) / f->scale[j];
	}
	if (!nnls(a, b, NSCEN, NFIT, f->x, f->passive) ||
	    !ls_subset(a, b, NSCEN, NFIT, f->passive, f->x, f->inv))
		return false;
	for (size_t j = 0; j < NFIT; j++)
		f->nfree += f->passive[j];
	for (size_t i = 0; i < NSCEN; i++) {
		double fit = 0;

		for (size_t j = 0; j < NFIT; j++)
			fit += a[i * NFIT + j] * f->x[j];
		f->rss += (1 - fit) * (1 - fit);
		scenarios[i].fit_ms = fit * scenarios[i].live_ms;
	}
	return true;
}

/* --traces: a new or empty directory (no file of the user's is replaced); else *dir, a temporary one. */
static bool traces_dir(const struct bench_calibrate_opts *o, char **dir, GError **err)
{
	GDir *d;

	if (!o->traces) {
		*dir = g_dir_make_tmp("ksmsim-calibrate-XXXXXX", err);
		return *dir != NULL;
	}
	if (g_mkdir_with_parents(o->traces, 0777) != 0) {
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "--traces %s: %s",
			    o->traces, g_strerror(errno));
		return false;
	}
	d = g_dir_open(o->traces, 0, err);
	if (!d) {
		g_prefix_error(err, "--traces %s: ", o->traces);
		return false;
	}
	bool empty = g_dir_read_name(d) == NULL;
	g_dir_close(d);
	if (!empty) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "--traces %s: not empty (give a new or empty directory)", o->traces);
		return false;
	}
	return true;
}

static const char *machine_facts(void);

/* The fitted table t into af (-o), committed; af is done with either way. */
static bool write_table(const struct bench_calibrate_opts *o, atomic_file *af,
			const struct cost_table *t, const char *prices_from, GError **err)
{
	const char **names;
	double *ns;
	size_t nh;
	FILE *f = atomic_file_stream(af);

	checksum_rows(t->checksum_ns, &names, &ns, &nh);
	if (o->synthetic)
		fprintf(f, "# ksmsim bench calibrate --synthetic: fitted to the model's own "
			"CPU, not a live ksmd's\n");
	else
		fprintf(f, "# ksmsim bench calibrate, %d live replays a scenario (median), "
			"%s\n", o->repeat, prices_from);
	fprintf(f, "# %s\n", machine_facts());
	fprintf(f, "# checksum:xxhash fitted; the others xxhash's times their ratio to it as "
		"ksmd computes them (kernel_hash_ratio), or the registry's cold ratio\n");
	cost_table_write(f, t, names, ns, nh);
	g_free(names);
	g_free(ns);
	if (!atomic_file_commit(af, err))
		return false;
	printf("\nwrote %s\n", o->out);
	return true;
}

/* --------------------------------------------------------- the profile's fit */

/* The machine and the moment, for every table and report. */
static const char *machine_facts(void)
{
	static char buf[384];
	struct utsname u;
	char when[32] = "", *load = NULL;
	time_t now = time(NULL);
	struct tm tm;

	if (uname(&u) != 0)
		g_strlcpy(u.release, "?", sizeof(u.release));
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	if (g_file_get_contents("/proc/loadavg", &load, NULL, NULL))
		*strchrnul(load, ' ') = '\0';
	snprintf(buf, sizeof(buf), "machine: %s, %ld CPUs, Linux %s, %s, load %s", bench_cpu_model(),
		 sysconf(_SC_NPROCESSORS_ONLN), u.release, when, load ? load : "?");
	g_free(load);
	return buf;
}

static uint64_t count_term(const struct scenario *s, int t, unsigned h)
{
	if (t == COST_TREE_COLD)
		return cost_cold_levels(&s->counts, h);
	if (t == COST_TREE_SCAN)
		return s->counts.n[COST_TREE_LEVEL];
	return s->counts.n[t];
}

/*
 * The terms a group's functions price: the group's (sim/profile.c) but
 * memcmp_long (its bytes are memcmp_byte's) and thp_split (no scenario
 * splits a THP).
 */
static size_t group_cols(int g, int cols[COST_NR])
{
	size_t n = 0;

	for (int t = 0; t < COST_NR; t++)
		if (profile_term_group(t) == g && t != COST_MEMCMP_LONG && t != COST_THP_SPLIT)
			cols[n++] = t;
	return n;
}

/* ksmd's ms and group g's in scenario s: one replay's, or (rep < 0) the medians */
static double w_of(const struct scenario *s, int rep)
{
	return rep < 0 ? s->tot_med : s->tot[rep];
}
static double g_of(const struct scenario *s, int g, int rep)
{
	return rep < 0 ? s->gmed[g] : s->gms[rep][g];
}

/*
 * Group g's prices: its functions' live ms in each scenario against the
 * model's counts of the group's terms, non-negative least squares with
 * each scenario's row divided by ksmd's time in it (the residuals are
 * shares). A group of one term is its time over its count, weighted so.
 */
static bool fit_group(int g, unsigned h, int rep, double price[COST_NR], double *rss)
{
	int cols[COST_NR];
	size_t nc = group_cols(g, cols);
	double a[NSCEN * NFIT], b[NSCEN], x[NFIT], scale[NFIT] = { 0 };
	bool passive[NFIT];

	*rss = 0;
	if (!nc)
		return true;
	for (size_t j = 0; j < nc; j++) {
		for (size_t i = 0; i < NSCEN; i++)
			scale[j] = MAX(scale[j], (double)count_term(&scenarios[i], cols[j], h) /
						 (w_of(&scenarios[i], rep) * 1e6));
		if (scale[j] == 0)
			scale[j] = 1;
	}
	for (size_t i = 0; i < NSCEN; i++) {
		double w = w_of(&scenarios[i], rep);

		b[i] = g_of(&scenarios[i], g, rep) / w;
		for (size_t j = 0; j < nc; j++)
			a[i * nc + j] = (double)count_term(&scenarios[i], cols[j], h) / (w * 1e6) /
					scale[j];
	}
	if (!nnls(a, b, NSCEN, nc, x, passive))
		return false;
	for (size_t j = 0; j < nc; j++)
		price[cols[j]] = x[j] / scale[j];
	for (size_t i = 0; i < NSCEN; i++) {
		double fit = 0;

		for (size_t j = 0; j < nc; j++)
			fit += a[i * nc + j] * x[j];
		*rss += (b[i] - fit) * (b[i] - fit);
	}
	return true;
}

/* The model's ms of group g in s with prices p at depth h. */
static double model_group_ms(const struct scenario *s, int g, const double p[COST_NR], unsigned h)
{
	double ns = 0;

	for (int t = 0; t < COST_NR; t++)
		if (profile_term_group(t) == g)
			ns += (double)count_term(s, t, h) * p[t];
	return ns / 1e6;
}

static void print_scenarios(const double p[COST_NR], unsigned h)
{
	printf("\n%-18s %10s %10s %7s  %s\n", "scenario", "live ms", "model ms", "ratio",
	       "share pp, model - live (visit checksum tree_search merge rmap chain pass)");
	for (size_t i = 0; i < NSCEN; i++) {
		const struct scenario *s = &scenarios[i];
		double m[PROF_GROUPS], mt = 0, worst = 0;

		for (int g = 0; g < GROUP_OTHER; g++)
			mt += m[g] = model_group_ms(s, g, p, h);
		printf("%-18s %10.1f %10.1f %7.3f ", s->name, s->tot_med, mt, mt / s->tot_med);
		for (int g = 0; g < GROUP_OTHER; g++) {
			double d = 100 * (m[g] / mt - s->gmed[g] / s->tot_med);

			printf(" %+5.1f", d);
			worst = fabs(d) > fabs(worst) ? d : worst;
		}
		printf("  worst %+.1f\n", worst);
	}
}

/*
 * The prices from the live profile (sim/MODEL.md, "Calibrating from the
 * profile"): each group of terms from its own functions' time, so no
 * term's cost can hide in another group's; within a group (visit,
 * revisit, skip and a level's scan-loop part; warm and cold levels and
 * compared bytes; merge and stable insert) the scenarios separate them.
 * The spread: the same fit on each replay's times alone.
 */
static bool profile_fit(const struct bench_calibrate_opts *o, struct cost_table *tp,
			GError **err)
{
	double pm[COST_NR] = { 0 }, lo[COST_NR], hi[COST_NR], rss, best_rss = INFINITY;
	double support[PROF_GROUPS] = { 0 };
	unsigned h = COLD_DEPTH_MIN;
	int gt = profile_term_group(COST_TREE_LEVEL);

	printf("\ncold depth: the tree_search group's weighted RSS at each depth:\n");
	for (unsigned d = COLD_DEPTH_MIN; d <= COLD_DEPTH_MAX; d++) {
		if (!fit_group(gt, d, -1, pm, &rss))
			goto singular;
		printf("  %2u: %.6f%s", d, rss, (d - COLD_DEPTH_MIN) % 6 == 5 ? "\n" : "");
		if (rss < best_rss * (1 - 1e-9))
			best_rss = rss, h = d;
	}
	printf("\n");
	for (int g = 0; g < GROUP_OTHER; g++)
		if (!fit_group(g, h, -1, pm, &rss))
			goto singular;
	for (int t = 0; t < COST_NR; t++)
		lo[t] = hi[t] = pm[t];
	for (int r = 0; r < o->repeat; r++) {
		double pr[COST_NR] = { 0 };

		for (int g = 0; g < GROUP_OTHER; g++)
			if (!fit_group(g, h, r, pr, &rss))
				goto singular;
		for (int t = 0; t < COST_NR; t++)
			lo[t] = MIN(lo[t], pr[t]), hi[t] = MAX(hi[t], pr[t]);
	}
	for (size_t i = 0; i < NSCEN; i++)
		for (int g = 0; g < GROUP_OTHER; g++)
			support[g] = MAX(support[g], scenarios[i].gmed[g] / scenarios[i].tot_med);

	cost_table_default(tp, hash_lookup(HASH_DEFAULT));
	printf("\nprices from the profile (each group's functions' time over its terms' counts;"
	       " spread: the fit on each of the %d replays alone):\n", o->repeat);
	printf("%-16s %11s %11s %11s  %-11s %8s  %s\n", "term", "ns", "min", "max", "group",
	       "support", "one count is");
	for (int t = 0; t < COST_NR; t++) {
		int g = profile_term_group(t);
		const char *note = "";

		if (t == COST_MEMCMP_LONG)
			note = " [fixed 0: its bytes are memcmp_byte's]";
		else if (t == COST_THP_SPLIT)
			note = " [fixed 0: no scenario splits a THP]";
		else if (pm[t] == 0)
			note = support[g] >= 0.005 ? " [AT 0 THOUGH ITS GROUP HAS >= 0.5%]"
						   : " [0: its group under 0.5% everywhere]";
		cost_set(tp, t, pm[t]);
		printf("%-16s %11.3f %11.3f %11.3f  %-11s %7.2f%%  %s%s\n", cost_terms[t].name, pm[t],
		       lo[t], hi[t], profile_group_name((size_t)g), 100 * support[g],
		       cost_terms[t].what, note);
	}
	tp->cold_depth = h;
	printf("%-16s %11u %11s %11s  (the tree_search group's smallest RSS)\n",
	       "tree_level_cold_depth", h, "", "");
	print_scenarios(pm, h);

	/* the kernel's own XXH64 a page: the checksum group's ms over the checksums */
	printf("\nxxh64 a page (the checksum group's ms over the model's checksums), per scenario:\n");
	for (size_t i = 0; i < NSCEN; i++) {
		const struct scenario *s = &scenarios[i];
		double v[MAX_REPEAT];
		uint64_t n = s->counts.n[COST_CHECKSUM];

		if (!n)
			continue;
		for (int r = 0; r < o->repeat; r++)
			v[r] = s->gms[r][profile_term_group(COST_CHECKSUM)] * 1e6 / (double)n;
		double med = bench_median(v, (size_t)o->repeat);

		printf("xxh64/page %-18s %9" PRIu64 " %8.1f %8.1f %8.1f\n", s->name, n, med, v[0],
		       v[o->repeat - 1]);
	}
	return true;
singular:
	g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_FAILED,
		    "the profile's fit is singular: the scenarios do not separate a group's terms");
	return false;
}

/*
 * The blind fit (no profile: perf events or the kernel's symbols
 * unavailable, or --synthetic --blind): ksmd's total time alone, weighted
 * NNLS over every term at once, into *tp. Terms collinear in the
 * scenarios come out at 0; sim/MODEL.md says why the profile's fit is
 * preferred.
 */
static bool blind_fit(struct cost_table *tp, GError **errp)
{
	GError *err = NULL;
	/* the cold depth is not a price: each depth is fitted, the best kept */
	struct fit best = { .rss = INFINITY }, f;

	printf("\ncold depth (levels a search keeps in the caches), weighted RSS of the fit:\n");
	for (unsigned h = COLD_DEPTH_MIN; h <= COLD_DEPTH_MAX; h++) {
		if (!fit_at(h, &f)) {
			g_set_error(&err, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "the fit is singular: the scenarios do not separate the terms");
			{ g_propagate_error(errp, err); return false; }
		}
		printf("  %2u: %.5f%s", h, f.rss, (h - COLD_DEPTH_MIN) % 6 == 5 ? "\n" : "");
		if (f.rss < best.rss * (1 - 1e-9))
			best = f;
	}
	printf("\n");
	fit_at(best.cold_depth, &best);	/* its residuals into the scenarios */
	const double *x = best.x, *scale = best.scale, *inv = best.inv;
	const bool *passive = best.passive;
	size_t nfree = best.nfree;
	double sigma2 = NSCEN > nfree ? best.rss / (double)(NSCEN - nfree) : 0;

	/* the design matrix: what each scenario counts of each term */
	printf("\nthe model's counts (thousands; cold levels past depth %u):\n%-18s",
	       best.cold_depth, "scenario");
	for (size_t j = 0; j < NFIT; j++)
		printf(" %9s", fitted_short[j]);
	for (size_t i = 0; i < NSCEN; i++) {
		printf("\n%-18s", scenarios[i].name);
		for (size_t j = 0; j < NFIT; j++)
			printf(" %9.1f", (double)count_at(&scenarios[i], j, best.cold_depth) / 1e3);
	}
	printf("\n");

	struct cost_table t;
	cost_table_default(&t, hash_lookup(HASH_DEFAULT));
	cost_set(&t, COST_MEMCMP_LONG, 0);	/* its bytes are in memcmp_byte */
	cost_set(&t, COST_THP_SPLIT, 0);
	t.cold_depth = best.cold_depth;
	printf("\nfit: weighted non-negative least squares (Lawson-Hanson), weights 1/live time;\n"
	       "uncertainty: 1 sd from sigma^2 (A'A)^-1 over the terms off the bound, "
	       "sigma^2 = RSS/(%zu - %zu)\n\n", NSCEN, nfree);
	printf("%-16s %12s %12s  %s\n", "term", "ns", "+- ns", "one count is");
	for (size_t j = 0; j < NFIT; j++) {
		double v = x[j] / scale[j], sd = passive[j] ? sqrt(sigma2 * inv[j]) / scale[j] : 0;

		char sds[32];

		snprintf(sds, sizeof(sds), passive[j] ? "%.3f" : "(at 0)", sd);
		cost_set(&t, fitted[j], v);
		printf("%-16s %12.3f %12s  %s\n", cost_terms[fitted[j]].name, v, sds,
		       cost_terms[fitted[j]].what);
	}
	printf("%-16s %12u %12s  %s\n", "tree_level_cold_depth", best.cold_depth, "(best RSS)",
	       "levels of a search that stay in the caches (not ns)");
	printf("%-16s %12.3f %12s  %s\n", cost_terms[COST_MEMCMP_LONG].name, 0.0, "(fixed)",
	       "its bytes are priced by memcmp_byte");
	printf("%-16s %12.3f %12s  %s\n", cost_terms[COST_THP_SPLIT].name, 0.0, "(fixed)",
	       "no scenario splits THPs: not fitted");
	printf("\n%-18s %12s %12s %9s\n", "scenario", "live ms", "fitted ms", "residual");
	for (size_t i = 0; i < NSCEN; i++)
		printf("%-18s %12.1f %12.1f %+8.1f%%\n", scenarios[i].name, scenarios[i].live_ms,
		       scenarios[i].fit_ms,
		       100 * (scenarios[i].fit_ms - scenarios[i].live_ms) / scenarios[i].live_ms);

	*tp = t;
	(void)err;
	return true;
}

int bench_calibrate(const struct bench_calibrate_opts *o)
{
	GError *err = NULL;
	char *dir = NULL;
	atomic_file *af = NULL;
	int rc = 1;

	if (!o->synthetic && !live_check_usable(&err)) {
		printf("ksmsim bench calibrate: skipped: %s\n", err->message);
		g_error_free(err);
		return SKIP_STATUS;
	}
	signals_install(SIGNALS_DEFER);
	if (o->out && !(af = atomic_file_open(o->out, &err))) {
		reportf("ksmsim bench calibrate", "%s", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	double waited = 0;

	if (!traces_dir(o, &dir, &err))
		goto fail;

	/*
	 * The profile's fit wherever ksmd can be sampled; the blind fit of
	 * the total time where it cannot (perf events or the symbols
	 * unavailable), or when KSMSIM_CALIBRATE_BLIND is set (to compare).
	 */
	bool use_profile = !g_getenv("KSMSIM_CALIBRATE_BLIND");
	struct cost_table syn;

	if (use_profile && !o->synthetic) {
		char *pb = NULL;
		size_t pl = 0;
		FILE *pf = open_memstream(&pb, &pl);
		GError *perr = NULL;
		struct live_profile *lp = pf ? live_profile_open(pf, &perr) : NULL;

		if (!lp) {
			printf("bench calibrate: no live profile (%s): the blind fit of ksmd's total "
			       "time instead\n", perr ? perr->message : "open_memstream failed");
			use_profile = false;
		}
		g_clear_error(&perr);
		live_profile_close(lp);
		if (pf)
			fclose(pf);
		free(pb);
	}
	if (o->synthetic) {
		cost_table_default(&syn, hash_lookup(HASH_DEFAULT));
		if (!cost_table_load(&syn, o->synthetic, hash_lookup(HASH_DEFAULT), &err))
			goto fail;
	}
	printf("%s\n", machine_facts());
	if (o->synthetic)
		printf("bench calibrate: %zu scenarios, SYNTHETIC: the model's CPU with %s stands "
		       "for the live ksmd's (a check of the fit), %s\n", NSCEN, o->synthetic,
		       use_profile ? "its profile by term" : "the blind fit");
	else
		printf("bench calibrate: %zu scenarios, %d live replays each (median), ksmd's CPU "
		       "from /proc/<ksmd>/schedstat, %s\n", NSCEN, o->repeat,
		       use_profile ? "by term from its sampled call chains (live --profile)"
				   : "the blind fit");
	for (size_t i = 0; i < NSCEN; i++) {
		struct scenario *s = &scenarios[i];
		double t[MAX_REPEAT], v[MAX_REPEAT];

		if (!write_trace(s, o->traces ? o->traces : dir, o->scale, &err) ||
		    !model_run(s, NULL, &s->model_ms, &err))
			goto fail;
		for (int r = 0; r < o->repeat; r++) {
			if (o->synthetic ? !model_run(s, o->synthetic, &t[r], &err)
					 : !live_clean(s, &t[r], use_profile ? s->gms[r] : NULL,
						       &waited, o->wait_s, &err))
				goto fail;
			if (o->synthetic) {	/* the model's own breakdown stands for the profile */
				double p[COST_NR];

				for (int k = 0; k < COST_NR; k++)
					p[k] = cost_get(&syn, k);
				for (int g = 0; g < PROF_GROUPS; g++)
					s->gms[r][g] = model_group_ms(s, g, p, (unsigned)syn.cold_depth);
			}
			s->tot[r] = 0;
			for (int g = 0; g < PROF_GROUPS; g++)
				s->tot[r] += s->gms[r][g];
			if (signals_caught()) {
				g_set_error(&err, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted");
				goto fail;
			}
		}
		for (int g = 0; g < PROF_GROUPS; g++) {
			for (int r = 0; r < o->repeat; r++)
				v[r] = s->gms[r][g];
			s->gmed[g] = bench_median(v, (size_t)o->repeat);
		}
		memcpy(v, s->tot, sizeof(double) * (size_t)o->repeat);
		s->tot_med = bench_median(v, (size_t)o->repeat);
		s->live_ms = bench_median(t, (size_t)o->repeat);	/* sorts t */
		s->live_min = t[0];
		s->live_max = t[o->repeat - 1];
		printf("  %-18s live %9.1f ms (%.1f-%.1f)  model (built-in table) %9.1f ms\n",
		       s->name, s->live_ms, s->live_min, s->live_max, s->model_ms);
		fflush(stdout);
	}

	struct cost_table t;
	bool fitted_ok = use_profile ? profile_fit(o, &t, &err) : blind_fit(&t, &err);

	if (!fitted_ok)
		goto fail;
	printf("\n%s (at the end)\n", machine_facts());
	if (af) {
		bool ok = write_table(o, af, &t, use_profile ? "each term from its functions' "
				      "time in ksmd's profile (live --profile)" :
				      "the blind fit of ksmd's total time", &err);

		af = NULL;
		if (!ok)
			goto fail;
	}
	rc = 0;
fail:
	if (err) {
		reportf("ksmsim bench calibrate", "%s", err->message);
		g_error_free(err);
	}
	if (af)
		atomic_file_abort(af);
	for (size_t i = 0; i < NSCEN; i++) {
		if (scenarios[i].path) {
			if (!o->traces)
				g_unlink(scenarios[i].path);
			g_free(scenarios[i].path);
			scenarios[i].path = NULL;
		}
	}
	if (dir) {
		g_rmdir(dir);
		g_free(dir);
	}
	return signals_exit_status(rc);
}

const char *bench_cpu_model(void)
{
	static char model[128] = "";
	char *text = NULL;

	if (model[0])
		return model;
	g_strlcpy(model, "unknown CPU", sizeof(model));
	if (g_file_get_contents("/proc/cpuinfo", &text, NULL, NULL)) {
		char *p = strstr(text, "model name");

		if (p && (p = strchr(p, ':'))) {
			char *end = strchr(p, '\n');

			if (end)
				*end = '\0';
			g_strlcpy(model, g_strstrip(p + 1), sizeof(model));
		}
		g_free(text);
	}
	return model;
}
