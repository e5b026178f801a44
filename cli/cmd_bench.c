// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim bench WHAT: one benchmark per file of bench/, dispatched here with
 * its options parsed into the struct it takes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"
#include "cli/cli.h"
#include "util/escape.h"
#include "util/parse.h"

/* Each parser: -1 to go on, else the exit status (help printed, or the refusal). */

static int trace_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench trace [--records N]\n"
		"\n"
		"Write a synthetic trace of about N records (default 10000000: writes and\n"
		"fills of every content form over %d mms of %u pages) as text and as\n"
		"binary into a temporary directory, time reading each back through the\n"
		"validating reader (best of --repeat runs), print records/s and MB/s of\n"
		"file read, and remove the directory.\n"
		"\n"
		"  -n, --records N  records to generate (default 10000000)\n"
		"  -r, --repeat N   timed reads of each file, best one reported (default 3)\n"
		"  -h, --help       show this help\n",
		BENCH_TRACE_MMS, BENCH_TRACE_PAGES);
	return out == stdout ? 0 : EXIT_USAGE;
}

static int parse_trace(int argc, char **argv, struct bench_trace_opts *o)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "n:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, UINT64_C(1) << 40, &o->records) || o->records < 1) {
				fprintf(stderr, "ksmsim bench trace: bad --records '%s': "
					"want a whole number from 1 to 2^40\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'r':
			if (!parse_u64(optarg, 100, &o->repeat) || o->repeat < 1) {
				fprintf(stderr, "ksmsim bench trace: bad --repeat '%s': "
					"want a whole number from 1 to 100\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			return trace_usage(stdout);
		default:
			return trace_usage(stderr);
		}
	}
	if (optind != argc)
		return trace_usage(stderr);
	return -1;
}

static void costs_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench costs [--csv FILE] [--reps N] [--cold-mib N]\n\n"
		"Per-page cost of every checksum in `ksmsim hashes` and of reference\n"
		"page operations (read, memcmp, copy, exchange, a PTE write-protect and\n"
		"TLB flush: what the dirty-bit policy pays), hot (one page in L1)\n"
		"and cold (streaming through distinct pages of a large buffer), as\n"
		"ns/page and GiB/s, the median of N repetitions, and as a ratio to\n"
		"jhash2. Two-page rows are per operation on two pages.\n\n"
		"  --csv FILE     also write the table as CSV (columns in hashes/hash.h)\n"
		"  --reps N       repetitions per figure, median reported (default 7)\n"
		"  --cold-mib N   cold buffer size in MiB (default 1024, at least 64)\n"
		"  -h, --help     this text\n");
}

static int parse_costs(int argc, char **argv, struct bench_costs_opts *o)
{
	enum { OPT_CSV, OPT_REPS, OPT_COLD_MIB, NOPTS };
	static const struct {
		const char *name;
		uint64_t min, max;	/* for the numbers */
	} opts[NOPTS] = {
		[OPT_CSV] = { "--csv", 0, 0 },
		[OPT_REPS] = { "--reps", 1, 1000 },
		[OPT_COLD_MIB] = { "--cold-mib", 64, 1 << 20 },
	};
	uint64_t num[NOPTS] = { [OPT_REPS] = 7, [OPT_COLD_MIB] = 1024 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		int which = -1;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			costs_usage(stdout);
			return 0;
		}
		for (int k = 0; k < NOPTS; k++) {
			size_t l = strlen(opts[k].name);

			if (!strncmp(a, opts[k].name, l) && (a[l] == '=' || !a[l])) {
				which = k;
				val = a[l] == '=' ? a + l + 1 : (i + 1 < argc ? argv[++i] : NULL);
			}
		}
		if (which < 0 || !val) {
			fprintf(stderr, "ksmsim bench costs: %s '%s'\n",
				which < 0 ? "unknown option" : "missing value for", a);
			costs_usage(stderr);
			return EXIT_USAGE;
		}
		if (which == OPT_CSV) {
			o->csv = val;
		} else if (!parse_u64(val, opts[which].max, &num[which]) ||
			   num[which] < opts[which].min) {
			fprintf(stderr, "ksmsim bench costs: bad value '%s' for %s: "
				"want a whole number from %" PRIu64 " to %" PRIu64 "\n",
				val, opts[which].name, opts[which].min, opts[which].max);
			return EXIT_USAGE;
		}
	}
	o->reps = (int)num[OPT_REPS];
	o->cold_mib = num[OPT_COLD_MIB];
	return -1;
}

static int parse_model(int argc, char **argv, struct bench_model_opts *o)
{
	static const struct option longopts[] = {
		{ "live-rate", required_argument, NULL, 'l' },
		{ "measure-live", no_argument, NULL, 'L' },
		{ "mib", required_argument, NULL, 'm' },
		{ "vm-mib", required_argument, NULL, 'v' },
		{ "skip-big", no_argument, NULL, 's' },
		{ "host-gib", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (!parse_double(optarg, &o->live_rate) || o->live_rate <= 0) {
				fprintf(stderr, "ksmsim bench model: bad --live-rate '%s': "
					"want a positive number of pages per second\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L': o->measure_live = true; break;
		case 'm':
		case 'v':
			if (!parse_u64(optarg, BENCH_MODEL_MAX_MIB, c == 'm' ? &o->mib : &o->vm_mib) ||
			    !(c == 'm' ? o->mib : o->vm_mib)) {
				fprintf(stderr, "ksmsim bench model: bad --%s '%s': "
					"want a whole number of MiB from 1 to %" PRIu64 "\n",
					c == 'm' ? "mib" : "vm-mib", optarg, BENCH_MODEL_MAX_MIB);
				return EXIT_USAGE;
			}
			break;
		case 's': o->skip_big = true; break;
		case 'H':
			if (!parse_u64(optarg, BENCH_MODEL_MAX_MIB, &o->host_gib)) {
				fprintf(stderr, "ksmsim bench model: bad --host-gib '%s': "
					"want a whole number of GiB from 0 to %" PRIu64 "\n",
					optarg, BENCH_MODEL_MAX_MIB);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: ksmsim bench model [--mib N] [--vm-mib N] [--host-gib N] [--skip-big]\n"
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
			       "peak RSS is its own (VmHWM is reset before it).\n");
			return 0;
		default:
			fprintf(stderr, "ksmsim bench model: bad option (see --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ksmsim bench model: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	return -1;
}

static int run_trace_bench(int argc, char **argv)
{
	struct bench_trace_opts o = { .records = 10000000, .repeat = 3 };
	int status = parse_trace(argc, argv, &o);

	return status >= 0 ? status : bench_trace(&o);
}

static int run_costs_bench(int argc, char **argv)
{
	struct bench_costs_opts o = { 0 };
	int status = parse_costs(argc, argv, &o);

	return status >= 0 ? status : bench_costs(&o);
}

static int run_model_bench(int argc, char **argv)
{
	struct bench_model_opts o = {
		.live_rate = 180000,	/* the figure for this machine's ksmd */
		.mib = 1024, .vm_mib = 4096, .host_gib = 256,
	};
	int status = parse_model(argc, argv, &o);

	return status >= 0 ? status : bench_model(&o);
}

static void calibrate_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim bench calibrate [-o FILE] [--repeat N] [--scale F] [--wait S]\n"
		"                              [--synthetic TABLE] [--traces DIR]\n\n"
		"Fits the model's cost table to the live ksmd (root; live KSM unused by\n"
		"anything else, else it says why and exits 77): 20 designed scenario\n"
		"traces, each isolating one or two cost terms (distinct pages at four\n"
		"tree sizes and three pass counts, pairs at two sizes, identical pages\n"
		"into chains and already merged, 64 contents into chains of 8 and of 128\n"
		"dups, zero pages with use_zero_pages, smart-scan skips, many passes of\n"
		"few pages; and as workloads lay pages out: pairs merged out of scan\n"
		"order, then revisited at two sizes, three copies of one service, each\n"
		"in its own order with 1 page in 8 its own), each replayed on the live\n"
		"ksmd --repeat times\n"
		"(default 3; its CPU time from /proc/<ksmd>/schedstat at the last mark,\n"
		"the median kept) and through the model, which counts each term. The fit:\n"
		"weighted non-negative least squares (Lawson-Hanson, weights 1/live time).\n"
		"Prints each term with its uncertainty (1 sd) and each scenario's residual;\n"
		"-o writes the table 'ksmsim run --costs-csv' takes (sim/MODEL.md, \"What\n"
		"ksmd's CPU costs\"). --scale F multiplies the scenarios' pages (default 1).\n"
		"KSM's knobs are saved first and restored on every exit path. While another\n"
		"process uses KSM a replay waits (--wait S in all, default 600, then exit 1),\n"
		"and a replay during which one began is thrown away and run again.\n"
		"--synthetic TABLE checks the fit without a kernel: the model's CPU with\n"
		"TABLE stands for the live ksmd's, and the fit must give TABLE back.\n"
		"--traces DIR keeps the scenario traces there (DIR/NAME.ksmt; DIR new or\n"
		"empty), to read or replay what was measured.\n");
}

static int run_calibrate_bench(int argc, char **argv)
{
	struct bench_calibrate_opts o = { .repeat = 3, .scale = 1, .wait_s = 600 };

	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		double f;

		if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
			calibrate_usage(stdout);
			return 0;
		} else if ((!strcmp(opt, "-o") || !strcmp(opt, "--out")) && v) {
			o.out = v;
		} else if (!strcmp(opt, "--repeat") && v && parse_u64(v, 64, &n) && n >= 1) {
			o.repeat = (int)n;
		} else if (!strcmp(opt, "--wait") && v && parse_double(v, &f) && f >= 0 && f <= 86400) {
			o.wait_s = f;
		} else if (!strcmp(opt, "--synthetic") && v) {
			o.synthetic = v;
		} else if (!strcmp(opt, "--traces") && v && *v) {
			o.traces = v;
		} else if (!strcmp(opt, "--scale") && v && parse_double(v, &f) && f >= 0.01 &&
			   f <= 16) {
			o.scale = f;
		} else {
			char *e = escape_line(v ? v : "");

			fprintf(stderr, "ksmsim bench calibrate: %s%s%s%s: bad option or value "
				"(-o FILE, --repeat 1..64, --scale 0.01..16; see --help)\n", opt,
				v ? " '" : "", v ? e : "", v ? "'" : "");
			g_free(e);
			return EXIT_USAGE;
		}
		i++;
	}
	return bench_calibrate(&o);
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
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		FILE *out = argc < 2 ? stderr : stdout;
		fprintf(out, "usage: ksmsim bench WHAT [OPTIONS]\n\n");
		for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
			fprintf(out, "  %-9s %s\n", benches[i].name, benches[i].summary);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			return benches[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ksmsim bench: unknown benchmark '%s'\n", argv[1]);
	return EXIT_USAGE;
}
