// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim collide: how often does a page checksum fool KSM? The options and
 * output files of the three studies in analysis/ (analysis/collide.h).
 */
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include "analysis/collide.h"
#include "cli/cli.h"
#include "hashes/hash.h"
#include "util/file_id.h"
#include "util/atomic_file.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/signals.h"
#include "workloads/collpair.h"

#define BDAY_PROG "ksmsim collide birthday"
#define FP_PROG "ksmsim collide false-positive"
#define KSM_PROG "ksmsim collide ksm"
#define DEFAULT_HASHES "jhash2,crc32c,crc32,xxhash,xxh32,xxh64,xxh3"

/* A comma list of hash names, each checked against the registry; NULL after one line. */
static GPtrArray *parse_hashes(const char *sub, const char *list)
{
	GPtrArray *out = g_ptr_array_new();
	char *prog = g_strdup_printf("ksmsim collide %s", sub);

	if (!cli_hash_list(prog, "--hashes", list, out)) {
		g_ptr_array_free(out, TRUE);
		out = NULL;
	}
	g_free(prog);
	return out;
}

/* Every CPU this process may run on (taskset, cgroup cpusets), not every CPU online. */
static unsigned default_threads(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > COLLIDE_MAX_THREADS ? COLLIDE_MAX_THREADS : (unsigned)n;
}

/* Outputs onto each other or onto an input are refused before any work. */
static bool distinct_files(const char *sub, const struct file_use *uses, size_t n)
{
	GError *error = NULL;

	if (file_uses_distinct(uses, n, &error))
		return true;
	char *prog = g_strdup_printf("ksmsim collide %s", sub);

	cli_error(prog, "%s", error->message);
	g_free(prog);
	g_error_free(error);
	return false;
}

static FILE *open_out(const char *path, atomic_file **af)
{
	GError *error = NULL;

	*af = atomic_file_open(path, &error);
	if (!*af) {
		cli_error("ksmsim collide", "%s", error->message);
		g_error_free(error);
		return NULL;
	}
	return atomic_file_stream(*af);
}

static bool commit_out(atomic_file *af)
{
	GError *error = NULL;

	if (!atomic_file_commit(af, &error)) {
		cli_error("ksmsim collide", "%s", error->message);
		g_error_free(error);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- birthday */

static const char bday_help[] =
"usage: ksmsim collide birthday [OPTIONS]\n"
"Hashes distinct pages until the first checksum repeats, many trials per\n"
"hash, and compares the share of trials collided by N pages with the\n"
"birthday formula 1-exp(-n(n-1)/2^(bits+1)). The table gives each share\n"
"and mean with its 95% margin (1.96 standard errors); the CSV has se_N and\n"
"se_mean. With 2000 trials a share's margin is +-0.022 at the formula's 50%\n"
"point and the mean's +-1,900 pages (2.3%), so no hash that follows the\n"
"formula looks different by chance. The time goes as --trials and is spread\n"
"over --threads; the defaults' CPU time, measured, is in analysis/README.md\n"
"(minutes, not seconds).\n\n";

/* collide birthday's command line. */
struct bday_args {
	struct birthday_opts o;
	const char *hashes, *csv, *curve, *png, *at_list, *pages;
	bool full, help;
	struct cli_once once;
};

#define BDAY(f) offsetof(struct bday_args, f)
/* the vals of the long options: only -o and -h have a short form */
enum {
	B_HASHES = 256, B_TRIALS, B_TRIALS_WIDE, B_MAX_PAGES, B_MAX_PAGES_WIDE, B_BITS, B_PAGES, B_FULL,
	B_AT, B_SEED, B_THREADS, B_CURVE, B_PLOT,
};
static const struct cli_opt bday_rows[] = {
	{ "hashes", B_HASHES, CLI_STR, "LIST", BDAY(hashes), .help = "comma list (default " DEFAULT_HASHES ")" },
	{ "trials", B_TRIALS, CLI_U64, "N", BDAY(o.trials), .min = 1, .max = UINT64_MAX, .show_default = true,
	  .help = "trials per hash of width <= 32 bits" },
	{ "trials-wide", B_TRIALS_WIDE, CLI_U64, "N", BDAY(o.trials_wide), .max = UINT64_MAX,
	  .help = "trials per 64-bit hash (default 4: none should repeat)" },
	/* memory per thread grows with max pages; 2^31 pages is past any sane use */
	{ "max-pages", B_MAX_PAGES, CLI_U64, "N", BDAY(o.max_pages), .min = 1, .max = UINT64_C(1) << 31,
	  .help = "pages per trial at most, <= 32 bits (default 400000)" },
	{ "max-pages-wide", B_MAX_PAGES_WIDE, CLI_U64, "N", BDAY(o.max_pages_wide), .min = 1,
	  .max = UINT64_C(1) << 31, .show_default = true, .help = "pages per trial, 64-bit hashes" },
	{ "bits", B_BITS, CLI_UINT, "B", BDAY(o.bits), .min = 1, .max = 64,
	  .help = "keep only the low B bits of every checksum (1-64)" },
	{ "pages", B_PAGES, CLI_STR, "KIND", BDAY(pages),
	  .help = "words: a random base page per trial, per page word 0 a\n"
		  "counter and word 1 random (default; distinct pages);\n"
		  "counter: word 0 only; full: 4096 fresh random bytes" },
	{ "full-random", B_FULL, CLI_FLAG, NULL, BDAY(full), .help = "same as --pages full" },
	{ "at", B_AT, CLI_STR, "N,N...", BDAY(at_list), .show_default = true,
	  .help = "page counts to report" },
	{ "seed", B_SEED, CLI_U64, "N", BDAY(o.seed), .max = UINT64_MAX, .show_default = true, .help = "" },
	{ "threads", B_THREADS, CLI_UINT, "N", BDAY(o.threads), .min = 1, .max = COLLIDE_MAX_THREADS,
	  .help = "(default: every CPU this process may run on; the output\n"
		  "does not depend on it)" },
	{ "csv", 'o', CLI_STR, "FILE", BDAY(csv), .help = "one row per hash" },
	{ "curve-csv", B_CURVE, CLI_STR, "FILE", BDAY(curve),
	  .help = "hash,bits,n,observed,formula on a grid of n" },
	{ "plot", B_PLOT, CLI_STR, "PNG", BDAY(png),
	  .help = "plot the curves with gnuplot (needs --curve-csv)" },
	{ "help", 'h', CLI_FLAG, NULL, BDAY(help), .help = NULL },
};

static void bday_usage(FILE *f, const struct bday_args *defaults)
{
	fputs(bday_help, f);
	cli_opts_help(f, bday_rows, G_N_ELEMENTS(bday_rows), defaults, 21);
}

/*
 * A study's options from its table: getopt's entries (-o and -h the only
 * letters), and one line for what is refused. -1: go on, else the exit
 * status.
 */
static int study_options(const char *prog, const struct cli_opt *rows, size_t n, int argc,
			 char **argv, struct cli_once *once, void *args)
{
	int status = cli_opts_parse(prog, rows, n, argc, argv, once, args);

	if (status < 0 && optind != argc)
		status = cli_extra_arg(prog, argv[optind]);
	return status;
}

/* --at: page counts of at least 2. */
static GArray *parse_at(const char *list)
{
	GArray *at = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	gchar **ats = g_strsplit(list, ",", -1);

	for (gchar **a = ats; *a; a++) {
		uint64_t v;

		if (!parse_u64(*a, UINT64_MAX, &v) || v < 2) {
			cli_usage_error(BDAY_PROG, "--at", "page counts of at least 2", list);
			g_array_free(at, TRUE);
			at = NULL;
			break;
		}
		g_array_append_val(at, v);
	}
	g_strfreev(ats);
	return at;
}

static int cmd_birthday(int argc, char **argv)
{
	struct bday_args args = {
		.o = { .trials = 2000, .trials_wide = 4, .max_pages = 400000,
		       .max_pages_wide = 200000, .pages = BIRTHDAY_WORDS, .seed = 1,
		       .threads = default_threads(), .table = stdout },
		.hashes = DEFAULT_HASHES, .at_list = "78000,200000",
	};
	struct birthday_opts o;
	int status = study_options(BDAY_PROG, bday_rows, G_N_ELEMENTS(bday_rows), argc, argv,
				   &args.once, &args);

	if (args.help && status < 0) {
		bday_usage(stdout, &args);
		return 0;
	}
	if (status >= 0)
		return status;
	if (args.full)
		args.o.pages = BIRTHDAY_FULL;
	if (args.pages) {
		int k;

		for (k = 0; k < BIRTHDAY_NR_PAGES; k++)
			if (!strcmp(args.pages, birthday_pages_names[k]))
				break;
		if (k == BIRTHDAY_NR_PAGES)
			return cli_usage_error(BDAY_PROG, "--pages", "words, counter or full",
					       args.pages);
		if (args.full && k != BIRTHDAY_FULL)
			return cli_error(BDAY_PROG, "--full-random is --pages full, not --pages %s",
					 args.pages);
		args.o.pages = k;
	}
	o = args.o;
	const char *hashes = args.hashes, *csv = args.csv, *curve = args.curve, *png = args.png;
	const char *at_list = args.at_list;

	if (png && !curve)
		return cli_error(BDAY_PROG, "--plot draws the --curve-csv data: give --curve-csv"
				 " FILE too");
	const struct file_use uses[] = {
		{ "--csv", csv, true }, { "--curve-csv", curve, true }, { "--plot", png, true },
	};
	if (!distinct_files("birthday", uses, G_N_ELEMENTS(uses)))
		return EXIT_USAGE;
	GPtrArray *hs = parse_hashes("birthday", hashes);
	if (!hs)
		return EXIT_USAGE;
	GArray *at = parse_at(at_list);
	if (!at) {
		g_ptr_array_free(hs, TRUE);
		return EXIT_USAGE;
	}

	signals_install(SIGNALS_EXIT);
	atomic_file *af = NULL, *cf = NULL;
	int rc = EXIT_USAGE;
	if (csv && !(o.csv = open_out(csv, &af)))
		goto out;
	if (curve && !(o.curve_csv = open_out(curve, &cf))) {
		if (af)
			atomic_file_abort(af);
		goto out;
	}
	o.hashes = (const struct page_hash *const *)hs->pdata;
	o.nhashes = hs->len;
	o.at = (const uint64_t *)at->data;
	o.nat = at->len;
	collide_birthday(&o);
	if ((af && !commit_out(af)) || (cf && !commit_out(cf)))
		goto out;
	rc = 0;
	if (png) {
		GError *error = NULL;

		if (!collide_birthday_plot(curve, png, &error)) {
			cli_error("ksmsim collide", "%s", error->message);
			g_error_free(error);
			rc = EXIT_USAGE;
		}
	}
out:
	g_ptr_array_free(hs, TRUE);
	g_array_free(at, TRUE);
	return rc;
}

/* ----------------------------------------------------------- false positive */

static const char fp_help[] =
"usage: ksmsim collide false-positive [OPTIONS]\n"
"The share of page changes that keep the page's checksum: what KSM's\n"
"checksum gate gets wrong. Changes: bitflip (one bit), word (one u64 word\n"
"set to a new random value), patch (1-64 random bytes at a random offset),\n"
"crafted-crc (a random nonzero delta from the common kernel of crc32c and\n"
"crc32, found by GF(2) elimination, XORed in at a random offset),\n"
"colliding-pair (the fixed-seed attack: per hash one birthday sweep of at\n"
"most --budget tries sets one u64 word of one page to value after value\n"
"until checksums repeat; each pair found is one change from one content to\n"
"the other, so trials = pairs used, at most --trials; every fixed-seed 32-bit\n"
"hash misses all of them, and a 64-bit one gives no pair within the budget:\n"
"0 trials, rate 0, said under the table with the tries it took). Not in the\n"
"default list: its trials count pairs, not --trials changes.\n"
"Each rate comes with its 95% interval: 0 to 3/trials when no change kept\n"
"the checksum (the rule of three: 3e-7 at the default 10^7), the Wilson\n"
"score interval otherwise. A crafted-crc change costs 1.5 times a random\n"
"one (drawing the delta), not enough to give it fewer trials. The time goes\n"
"as --trials and is spread over --threads; the defaults' CPU time, measured,\n"
"is in analysis/README.md (minutes, not seconds).\n\n";

/* collide false-positive's command line. */
struct fp_args {
	struct fp_opts o;
	const char *hashes, *changes, *csv;
	bool print_delta, help;
	struct cli_once once;
};

enum { F_HASHES = 256, F_CHANGES, F_TRIALS, F_BITS, F_BUDGET, F_SEED, F_THREADS, F_DELTA };
#define FP(f) offsetof(struct fp_args, f)
static const struct cli_opt fp_rows[] = {
	{ "hashes", F_HASHES, CLI_STR, "LIST", FP(hashes), .help = "comma list (default " DEFAULT_HASHES ")" },
	{ "changes", F_CHANGES, CLI_STR, "LIST", FP(changes),
	  .help = "comma list (default bitflip,word,patch,crafted-crc;\nalso colliding-pair)" },
	{ "trials", F_TRIALS, CLI_U64, "N", FP(o.trials), .min = 1, .max = UINT64_MAX,
	  .show_default = true, .help = "changes per hash and kind" },
	{ "bits", F_BITS, CLI_UINT, "B", FP(o.bits), .min = 1, .max = 64,
	  .help = "keep only the low B bits of every checksum" },
	{ "budget", F_BUDGET, CLI_U64, "N", FP(o.budget), .min = 2, .max = COLLPAIR_MAX_BUDGET,
	  .help = "colliding-pair tries per hash, 2 to 2^32 (default 2^20 =\n"
		  "1048576: ~128 pairs of a 32-bit hash, 1.6 s of jhash2,\n"
		  "0.5 s of xxhash; its table takes up to 48 bytes a try,\n"
		  "48 MiB at the default, on each of --threads)" },
	{ "seed", F_SEED, CLI_U64, "N", FP(o.seed), .max = UINT64_MAX, .show_default = true, .help = "" },
	{ "threads", F_THREADS, CLI_UINT, "N", FP(o.threads), .min = 1, .max = COLLIDE_MAX_THREADS,
	  .help = "(default: every CPU this process may run on; the output\n"
		  "does not depend on it)" },
	{ "print-delta", F_DELTA, CLI_FLAG, NULL, FP(print_delta),
	  .help = "print one crafted delta (hex) and exit" },
	{ "csv", 'o', CLI_STR, "FILE", FP(csv), .help = "one row per hash and change kind" },
	{ "help", 'h', CLI_FLAG, NULL, FP(help), .help = NULL },
};

/* --changes: names from fp_change_names, "crafted" short for crafted-crc. */
static bool parse_changes(const char *list, bool want[FP_NR_CHANGES])
{
	gchar **cl = g_strsplit(list, ",", -1);
	bool ok = true;

	for (gchar **p = cl; *p && ok; p++) {
		int i;

		for (i = 0; i < FP_NR_CHANGES; i++)
			if (!strcmp(*p, fp_change_names[i]) || (i == FP_CRAFTED && !strcmp(*p, "crafted")))
				break;
		if (i == FP_NR_CHANGES) {
			cli_error(FP_PROG, "--changes: unknown change '%s'", *p);
			ok = false;
		} else {
			want[i] = true;
		}
	}
	g_strfreev(cl);
	return ok;
}

static int cmd_false_positive(int argc, char **argv)
{
	struct fp_args args = {
		.o = { .trials = 10000000, .seed = 1, .threads = default_threads(), .table = stdout },
		.hashes = DEFAULT_HASHES, .changes = "bitflip,word,patch,crafted-crc",
	};
	int status = study_options(FP_PROG, fp_rows, G_N_ELEMENTS(fp_rows), argc, argv, &args.once,
				   &args);

	if (args.help && status < 0) {
		fputs(fp_help, stdout);
		cli_opts_help(stdout, fp_rows, G_N_ELEMENTS(fp_rows), &args, 21);
		return 0;
	}
	if (status >= 0)
		return status;
	struct fp_opts o = args.o;
	const char *hashes = args.hashes, *changes = args.changes, *csv = args.csv;
	bool print_delta = args.print_delta;

	if (print_delta) {
		collide_print_delta(stdout, o.seed);
		return 0;
	}
	if (!parse_changes(changes, o.changes))
		return EXIT_USAGE;
	GPtrArray *hs = parse_hashes("false-positive", hashes);
	if (!hs)
		return EXIT_USAGE;

	signals_install(SIGNALS_EXIT);
	atomic_file *af = NULL;
	int rc = EXIT_USAGE;
	if (csv && !(o.csv = open_out(csv, &af)))
		goto out;
	o.hashes = (const struct page_hash *const *)hs->pdata;
	o.nhashes = hs->len;
	GError *error = NULL;

	if (!collide_false_positive(&o, &error)) {
		cli_error("ksmsim collide false-positive", "--budget %" PRIu64 ": %s",
			o.budget ? o.budget : COLLPAIR_DEFAULT_BUDGET, error->message);
		g_error_free(error);
		if (af)
			atomic_file_abort(af);
		goto out;
	}
	if (!af || commit_out(af))
		rc = 0;
out:
	g_ptr_array_free(hs, TRUE);
	return rc;
}

/* ---------------------------------------------------------------- ksm */

/* collide ksm's command line, as parsed. */
struct ksm_cmd {
	struct run_options ro;		/* the run options, and in ro.cfg the run */
	const char *keep, *hashes, *run_csv, *csv;
	struct ksm_study_trace g;	/* the trace it writes without --trace */
	bool help;
	struct cli_once once;		/* the study's options given */
};

#define KSM(f) offsetof(struct ksm_cmd, f)
#define COUNT_FROM(lo) .min = lo, .max = UINT64_MAX, .wants = "a count from " #lo " to 18446744073709551615"
/* the vals of the long options: only -o and -h have a short form */
enum {
	K_TRACE = 256, K_KEEP, K_HASHES, K_GUESTS, K_PAGES, K_IMAGE, K_CHURN, K_CRAFTED, K_SECONDS,
	K_EPOCH, K_SEED, K_RUN_CSV,
};
static const struct cli_opt ksm_rows[] = {
	{ "trace", K_TRACE, CLI_STR, "FILE", KSM(ro.cfg.trace), .help = "replay this trace instead" },
	{ "keep-trace", K_KEEP, CLI_STR, "FILE", KSM(keep),
	  .help = "also keep the generated trace there" },
	{ "hashes", K_HASHES, CLI_STR, "LIST", KSM(hashes), .show_default = true, .help = "" },
	{ "guests", K_GUESTS, CLI_UINT, "N", KSM(g.guests), .min = 1, .max = 1000,
	  .wants = "a count from 1 to 1000", .show_default = true, .help = "" },
	{ "pages", K_PAGES, CLI_U64, "N", KSM(g.pages), COUNT_FROM(1),
	  .help = "pages per guest (default 100000: 4 x 390 MiB)" },
	{ "image", K_IMAGE, CLI_U64, "N", KSM(g.image), COUNT_FROM(0), .show_default = true,
	  .help = "pages per guest shared by all guests" },
	{ "churn", K_CHURN, CLI_U64, "N", KSM(g.churn), COUNT_FROM(0), .show_default = true,
	  .help = "pages per guest rewritten with random words" },
	{ "crafted", K_CRAFTED, CLI_U64, "N", KSM(g.crafted), COUNT_FROM(0), .show_default = true,
	  .help = "pages per guest rewritten with CRC-kernel deltas" },
	{ "seconds", K_SECONDS, CLI_U64, "N", KSM(g.seconds), COUNT_FROM(1), .show_default = true,
	  .help = "trace length" },
	{ "epoch-ms", K_EPOCH, CLI_U64, "N", KSM(g.epoch_ms), COUNT_FROM(1), .show_default = true,
	  .help = "rewrite period" },
	{ "seed", K_SEED, CLI_U64, "N", KSM(g.seed), COUNT_FROM(0), .show_default = true, .help = "" },
	{ "run-csv", K_RUN_CSV, CLI_STR, "FILE", KSM(run_csv),
	  .help = "all `ksmsim run --summary-csv` rows, one per hash" },
	{ "csv", 'o', CLI_STR, "FILE", KSM(csv), .help = "the table below as CSV" },
	{ "help", 'h', CLI_FLAG, NULL, KSM(help), .stops = true },
};

static const struct ksm_cmd ksm_defaults = {
	.hashes = "jhash2,crc32c,crc32,xxhash,xxh64",
	.g = { 4, 100000, 10000, 4000, 4000, 30, 300, 1 },
};

static void ksm_usage(FILE *f)
{
	fputs("usage: ksmsim collide ksm [OPTIONS] [-- RUN-OPTIONS]\n"
"Replays one trace through the model once per hash (as `ksmsim run`) and\n"
"tabulates what the checksum gate let through. Without --trace it writes\n"
"its own: guests whose unstable tree holds > 1 GiB, a churn range rewritten\n"
"with random words, and a crafted range rewritten with crc32c/crc32-\n"
"preserving deltas. One deterministic run per hash, so every count is exact\n"
"for the trace; chance_false_positives (gate_changed x 2^-bits) is what\n"
"random changes alone would let through. The runs are sequential, on one\n"
"core; the defaults' CPU time, measured, is in analysis/README.md (the size\n"
"keeps the unstable tree above 1 GiB, the point of the study).\n\n", f);
	cli_opts_help(f, ksm_rows, G_N_ELEMENTS(ksm_rows), &ksm_defaults, 22);
	fputs("Run options, as `ksmsim run` takes them, the same for every hash (among\n"
	      "the others, or after '--'):\n", f);
	run_options_help(f, RUN_OPTIONS_COLLIDE_KSM, 22);
}

/* RUN-OPTIONS after '--': the run options alone. False after one line on stderr. */
static bool run_options_after_dashes(int argc, char **argv, struct run_options *ro)
{
	const struct cli_parser p = { .prog = ro->prog, .ro = ro, .in_order = true };
	int status = cli_parse(&p, argc, argv);

	if (status < 0 && optind < argc)
		status = cli_extra_arg(ro->prog, argv[optind]);
	return status < 0;
}

/* A temporary file for the generated trace, removed on an interruption too. */
static gchar *temp_trace(int *track)
{
	GError *error = NULL;
	gchar *path = NULL;
	int fd = g_file_open_tmp("ksmsim-collide-XXXXXX.ksmt", &path, &error);

	if (fd < 0) {
		cli_error(KSM_PROG, "no temporary file: %s", error->message);
		g_error_free(error);
		return NULL;
	}
	close(fd);
	*track = signals_track(path);
	return path;
}


/* The study's options and the run options before '--'; -1: go on, else the exit status. */
static int ksm_options(int argc, char **argv, struct ksm_cmd *k)
{
	const struct cli_parser p = { .prog = KSM_PROG, .rows = ksm_rows,
				      .n = G_N_ELEMENTS(ksm_rows), .base = k, .once = &k->once,
				      .ro = &k->ro, .in_order = true };
	int status = cli_parse(&p, argc, argv);

	if (k->help) {
		ksm_usage(stdout);
		return 0;
	}
	if (status < 0 && !run_options_after_dashes(argc - optind + 1, argv + optind - 1, &k->ro))
		status = EXIT_USAGE;
	return status;
}

/* The study itself: the trace (written unless given), a run per hash, the outputs. */
static int ksm_study(struct ksm_cmd *k)
{
	struct ksm_study_trace *g = &k->g;
	struct ksm_study_opts o = { .run = k->ro.cfg, .table = stdout };
	const char *keep = k->keep;

	if (g->pages > (UINT64_C(1) << 30))
		return cli_error(KSM_PROG, "--pages: at most 1073741824 pages per guest");
	if (g->image > g->pages || g->churn > g->pages - g->image ||
	    g->crafted > g->pages - g->image - g->churn)
		return cli_error(KSM_PROG, "--image + --churn + --crafted exceed --pages");
	/* every hash reads the trace again: standard input cannot be read twice */
	if ((o.run.trace && !strcmp(o.run.trace, "-")) || (keep && !strcmp(keep, "-"))) {
		cli_error(KSM_PROG, "the trace must be a file, not '-'");
		return EXIT_USAGE;
	}
	const struct file_use uses[] = {
		{ "--trace", o.run.trace, false }, { "--costs-csv", o.run.costs_csv, false },
		{ "--keep-trace", keep, true }, { "--csv", k->csv, true },
		{ "--run-csv", k->run_csv, true },
	};
	if (!distinct_files("ksm", uses, G_N_ELEMENTS(uses)))
		return EXIT_USAGE;
	GPtrArray *hs = parse_hashes("ksm", k->hashes);
	if (!hs)
		return EXIT_USAGE;

	signals_install(SIGNALS_EXIT);
	GError *error = NULL;
	gchar *gen = NULL;
	int track = -1, rc = EXIT_USAGE;
	atomic_file *af = NULL, *rf = NULL;
	if (!o.run.trace) {
		gen = keep ? g_strdup(keep) : temp_trace(&track);
		if (!gen)
			goto out;
		if (!collide_ksm_write_trace(gen, g, &error))
			goto fail;
		o.run.trace = gen;
	}
	/* rows name the trace, not the temporary file it was written to */
	o.label = gen && !keep ? "(generated)" : o.run.trace;
	if (k->csv && !(o.csv = open_out(k->csv, &af)))
		goto out;
	if (k->run_csv && !(o.run_csv = open_out(k->run_csv, &rf)))
		goto out;
	o.hashes = (const struct page_hash *const *)hs->pdata;
	o.nhashes = hs->len;
	if (!collide_ksm(&o, &error))
		goto fail;
	atomic_file **const all[] = { &af, &rf };
	if (!atomic_file_commit_all(all, G_N_ELEMENTS(all), &error))
		goto fail;
	rc = 0;
	goto out;
fail:
	cli_error(KSM_PROG, "%s", error->message);
	g_error_free(error);
out:
	atomic_file_abort(af);
	atomic_file_abort(rf);
	if (gen && !keep)
		unlink(gen);
	signals_untrack(track);
	g_free(gen);
	g_ptr_array_free(hs, TRUE);
	return rc;
}

static int cmd_ksm(int argc, char **argv)
{
	struct ksm_cmd k = ksm_defaults;
	int rc;

	run_options_init(&k.ro, KSM_PROG, RUN_OPTIONS_COLLIDE_KSM);
	rc = ksm_options(argc, argv, &k);
	if (rc < 0)
		rc = ksm_study(&k);
	run_options_free(&k.ro);
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
"                  and colliding pairs of fixed-seed hashes\n"
"  ksm             the consequence in the model: one `ksmsim run` per hash\n\n"
"'ksmsim collide MODE --help' lists each mode's options.\n";

int cmd_collide(int argc, char **argv)
{
	if (argc < 2)
		return cli_error("ksmsim collide", "a MODE is required: birthday, false-positive or ksm"
				 " (see 'ksmsim collide --help')");
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
	return cli_error("ksmsim collide", "unknown mode '%s': birthday, false-positive or ksm"
			 " (see 'ksmsim collide --help')", mode);
}
