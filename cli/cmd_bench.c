// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim bench WHAT: one benchmark per file of bench/, dispatched here with
 * its options parsed into the struct it takes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"
#include "cli/cli.h"
#include "util/parse.h"

/*
 * Each benchmark's options as rows (cli.h, struct cli_opt) over a struct
 * holding the options the benchmark takes: parsing, the refusals' wording
 * and the help lines are loops over them.
 */

/* One benchmark's command line: -1 to go on, else the exit status (help printed, or one line). */
static int parse(const char *prog, const struct cli_opt *rows, size_t n, int argc, char **argv,
		 void *args, const bool *help, void (*usage)(FILE *))
{
	struct cli_once once = { 0 };
	int status = cli_opts_parse(prog, rows, n, argc, argv, &once, args);

	if (status >= 0)
		return status;
	if (*help) {
		usage(stdout);
		return 0;
	}
	if (optind != argc)
		return cli_extra_arg(prog, argv[optind]);
	return -1;
}

/* ------------------------------------------------------------------ trace */

struct trace_args {
	struct bench_trace_opts o;
	bool help;
};
#define TR(f) offsetof(struct trace_args, f)
static const struct cli_opt trace_rows[] = {
	{ "records", 'n', CLI_U64, "N", TR(o.records), .min = 1, .max = UINT64_C(1) << 40,
	  .show_default = true, .help = "records to generate" },
	{ "repeat", 'r', CLI_U64, "N", TR(o.repeat), .min = 1, .max = 100, .show_default = true,
	  .help = "timed reads of each file, best one reported" },
	{ "help", 'h', CLI_FLAG, NULL, TR(help), .help = "show this help" },
};
static const struct trace_args trace_defaults = { .o = { .records = 10000000, .repeat = 3 } };

static void trace_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench trace [--records N]\n"
		"\n"
		"Write a synthetic trace of about N records (default 10000000: writes and\n"
		"fills of every content form over %d mms of %u pages) as text and as\n"
		"binary into a temporary directory, time reading each back through the\n"
		"validating reader (best of --repeat runs), print records/s and MB/s of\n"
		"file read, and remove the directory.\n"
		"\n", BENCH_TRACE_MMS, BENCH_TRACE_PAGES);
	cli_opts_help(out, trace_rows, G_N_ELEMENTS(trace_rows), &trace_defaults, 19);
}

static int run_trace_bench(int argc, char **argv)
{
	struct trace_args a = trace_defaults;
	int status = parse("ksmsim bench trace", trace_rows, G_N_ELEMENTS(trace_rows), argc, argv,
			   &a, &a.help, trace_usage);

	return status >= 0 ? status : bench_trace(&a.o);
}

/* ------------------------------------------------------------------ costs */

struct costs_args {
	struct bench_costs_opts o;
	bool help;
};
#define CO(f) offsetof(struct costs_args, f)
static const struct cli_opt costs_rows[] = {
	{ "csv", 256, CLI_STR, "FILE", CO(o.csv),
	  .help = "also write the table as CSV (columns in hashes/hash.h)" },
	{ "reps", 257, CLI_INT, "N", CO(o.reps), .min = 1, .max = 1000, .show_default = true,
	  .help = "repetitions per figure, median reported" },
	{ "cold-mib", 258, CLI_U64, "N", CO(o.cold_mib), .min = 64, .max = 1 << 20,
	  .show_default = true, .help = "cold buffer size in MiB, at least 64" },
	{ "help", 'h', CLI_FLAG, NULL, CO(help), .help = "this text" },
};
static const struct costs_args costs_defaults = { .o = { .reps = 7, .cold_mib = 1024 } };

static void costs_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench costs [--csv FILE] [--reps N] [--cold-mib N]\n\n"
		"Per-page cost of every checksum in `ksmsim hashes` and of reference\n"
		"page operations (read, memcmp, copy, a PTE write-protect and\n"
		"TLB flush: what the dirty-bit policy pays), hot (one page in L1)\n"
		"and cold (streaming through distinct pages of a large buffer), as\n"
		"ns/page and GiB/s, the median of N repetitions timed in the thread's CPU\n"
		"time (not wall time: other jobs' turns are not charged), and as a ratio to\n"
		"jhash2. Two-page rows are per operation on two pages.\n\n");
	cli_opts_help(out, costs_rows, G_N_ELEMENTS(costs_rows), &costs_defaults, 17);
}

static int run_costs_bench(int argc, char **argv)
{
	struct costs_args a = costs_defaults;
	int status = parse("ksmsim bench costs", costs_rows, G_N_ELEMENTS(costs_rows), argc, argv,
			   &a, &a.help, costs_usage);

	return status >= 0 ? status : bench_costs(&a.o);
}

/* ------------------------------------------------------------------ model */

struct model_args {
	struct bench_model_opts o;
	bool help;
};
#define MO(f) offsetof(struct model_args, f)
static const struct cli_opt model_rows[] = {
	{ "live-rate", 256, CLI_DOUBLE, "PAGES_PER_S", MO(o.live_rate), .dmax = 1e12,
	  .dmin_open = true, .wants = "a positive number of pages per second (at most 1e12)",
	  .show_default = true, .help = "the live ksmd's rate, for the ratio" },
	{ "measure-live", 257, CLI_FLAG, NULL, MO(o.measure_live),
	  .help = "run 'ksmsim live --measure-scan-rate' first (root)" },
	{ "mib", 258, CLI_U64, "N", MO(o.mib), .min = 1, .max = BENCH_MODEL_MAX_MIB,
	  .show_default = true, .help = "job 1's MiB of distinct pages" },
	{ "vm-mib", 259, CLI_U64, "N", MO(o.vm_mib), .min = 1, .max = BENCH_MODEL_MAX_MIB,
	  .show_default = true, .help = "job 2's MiB per guest" },
	{ "skip-big", 260, CLI_FLAG, NULL, MO(o.skip_big), .help = "skip jobs 2 and 3" },
	{ "host-gib", 261, CLI_U64, "N", MO(o.host_gib), .max = BENCH_MODEL_MAX_MIB,
	  .show_default = true, .help = "job 3's host in GiB, 0 skips it" },
	{ "help", 'h', CLI_FLAG, NULL, MO(help), .help = "this text" },
};
static const struct model_args model_defaults = {
	.o = {
		.live_rate = 180000,	/* the figure for this machine's ksmd */
		.mib = 1024, .vm_mib = 4096, .host_gib = 256,
	},
};

static void model_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench model [--mib N] [--vm-mib N] [--host-gib N] [--skip-big]\n"
		"                          [--live-rate PAGES_PER_S | --measure-live]\n"
		"Job 1: N MiB (default 1024) of distinct pages in 2 mms, smart_scan 0,\n"
		"8 full scans: simulated visits per wall second against the live ksmd's\n"
		"rate (default 180000 pages/s; --measure-live runs 'ksmsim live\n"
		"--measure-scan-rate' first, as root). Job 2: 4 guests of --vm-mib MiB\n"
		"(default 4096) of mixed pages, 10 full scans: peak RSS and bytes per\n"
		"simulated page (target: peak RSS <= 2 GiB). Job 3, run before job 2\n"
		"(each run with a content store of its own): a host of --host-gib\n"
		"GiB (default 256, 64 Mi pages; 1024 is a 1 TiB host; 0 skips it) in\n"
		"16 GiB guests, 3 full scans, (a) with job 2's mix, (b) all pages\n"
		"distinct: bytes per page by structure, peak RSS (target: 80 bytes per\n"
		"page), visits per second. --skip-big skips jobs 2 and 3. Each job's\n"
		"peak RSS is its own (VmHWM is reset before it).\n\n");
	cli_opts_help(out, model_rows, G_N_ELEMENTS(model_rows), &model_defaults, 28);
}

static int run_model_bench(int argc, char **argv)
{
	struct model_args a = model_defaults;
	int status = parse("ksmsim bench model", model_rows, G_N_ELEMENTS(model_rows), argc, argv,
			   &a, &a.help, model_usage);

	return status >= 0 ? status : bench_model(&a.o);
}

/* -------------------------------------------------------------- calibrate */

struct calibrate_args {
	struct bench_calibrate_opts o;
	bool help;
};
#define CA(f) offsetof(struct calibrate_args, f)
static const struct cli_opt calibrate_rows[] = {
	{ "out", 'o', CLI_STR, "FILE", CA(o.out), .help = "the fitted cost table" },
	{ "repeat", 256, CLI_INT, "N", CA(o.repeat), .min = 1, .max = 64, .show_default = true,
	  .help = "live replays of each scenario (the median kept)" },
	{ "scale", 257, CLI_DOUBLE, "F", CA(o.scale), .dmin = 0.01, .dmax = 16,
	  .show_default = true, .help = "multiply the scenarios' pages" },
	{ "wait", 258, CLI_DOUBLE, "S", CA(o.wait_s), .dmax = 86400, .show_default = true,
	  .help = "seconds in all to wait for KSM to be free" },
	{ "synthetic", 259, CLI_STR, "TABLE", CA(o.synthetic),
	  .help = "check the fit against TABLE, no kernel" },
	{ "traces", 260, CLI_STR, "DIR", CA(o.traces), .help = "keep the scenario traces in DIR" },
	{ "help", 'h', CLI_FLAG, NULL, CA(help), .help = "this text" },
};
static const struct calibrate_args calibrate_defaults = {
	.o = { .repeat = 3, .scale = 1, .wait_s = 600 },
};

static void calibrate_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench calibrate [-o FILE] [--repeat N] [--scale F] [--wait S]\n"
		"                              [--synthetic TABLE] [--traces DIR]\n\n"
		"Fits the model's cost table to the live ksmd (root; live KSM unused by\n"
		"anything else, else it says why and exits 77): 23 designed scenario\n"
		"traces, each isolating one or two cost terms (distinct pages at four\n"
		"tree sizes and three pass counts, pairs at two sizes, identical pages\n"
		"into chains and already merged, 64 contents into chains of 8 and of 128\n"
		"dups, zero pages with use_zero_pages, smart-scan skips, many passes of\n"
		"few pages; and as workloads lay pages out: pairs merged out of scan\n"
		"order, then revisited at two sizes, three copies of one service, each\n"
		"in its own order with 1 page in 8 its own; pages differing only in their\n"
		"last word, pages rewritten every pass, pairs merged and written again),\n"
		"each replayed on the live\n"
		"ksmd --repeat times\n"
		"(default 3; its CPU time from /proc/<ksmd>/schedstat at the last mark,\n"
		"the median kept) and through the model, which counts each term. Where\n"
		"ksmd can be sampled (perf events, /proc/kallsyms) each group of terms is\n"
		"priced from its own kernel functions' time in ksmd's profile (live\n"
		"--profile) over the model's counts, with its spread over the replays;\n"
		"else (or with KSMSIM_CALIBRATE_BLIND=1) the blind fit of the total:\n"
		"weighted non-negative least squares (Lawson-Hanson, weights 1/live time).\n"
		"Prints each term's price and each scenario's residual;\n"
		"-o writes the table 'ksmsim run --costs-csv' takes (sim/MODEL.md, \"What\n"
		"ksmd's CPU costs\"). --scale F multiplies the scenarios' pages (default 1).\n"
		"KSM's knobs are saved first and restored on every exit path. While another\n"
		"process uses KSM a replay waits (--wait S in all, default 600, then exit 1),\n"
		"and a replay during which one began is thrown away and run again.\n"
		"--synthetic TABLE checks the fit without a kernel: the model's CPU with\n"
		"TABLE stands for the live ksmd's, and the fit must give TABLE back.\n"
		"--traces DIR keeps the scenario traces there (DIR/NAME.ksmt; DIR new or\n"
		"empty), to read or replay what was measured.\n\n");
	cli_opts_help(out, calibrate_rows, G_N_ELEMENTS(calibrate_rows), &calibrate_defaults, 20);
}

static int run_calibrate_bench(int argc, char **argv)
{
	struct calibrate_args a = calibrate_defaults;
	int status = parse("ksmsim bench calibrate", calibrate_rows, G_N_ELEMENTS(calibrate_rows),
			   argc, argv, &a, &a.help, calibrate_usage);

	if (status >= 0)
		return status;
	if (a.o.traces && !*a.o.traces)
		return cli_usage_error("ksmsim bench calibrate", "--traces", "a directory", "");
	return bench_calibrate(&a.o);
}

int cmd_bench(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
		const char *summary;
	} benches[] = {
		{ "trace", run_trace_bench, "records/s parsing large text and binary traces" },
		{ "costs", run_costs_bench, "per-page cost of each checksum, memcmp, copy" },
		{ "model", run_model_bench, "model visits per second, peak RSS, bytes per page" },
		{ "calibrate", run_calibrate_bench,
		  "the cost table fitted to the live ksmd's CPU (root)" },
	};
	if (argc < 2)
		return cli_error("ksmsim bench", "WHAT is required: trace, costs, model or calibrate"
				 " (see 'ksmsim bench --help')");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("usage: ksmsim bench WHAT [OPTIONS]\n\n");
		for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
			printf("  %-9s %s\n", benches[i].name, benches[i].summary);
		return 0;
	}
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			return benches[i].fn(argc - 1, argv + 1);
	return cli_error("ksmsim bench", "unknown benchmark '%s': trace, costs, model or calibrate"
			 " (see 'ksmsim bench --help')", argv[1]);
}
