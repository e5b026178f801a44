// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim gen: write a synthetic workload's trace (generators in gen_*.c). */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "hashes/hash.h"
#include "traces/writer.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/progress.h"
#include "util/signals.h"
#include "workloads/gen.h"

#define PROG "ksmsim gen"
#define DEF_SEED 1
#define DEF_PAGES_TO_SCAN 1600	/* the 2017 experiment's knobs */
#define DEF_SLEEP_MS 200

/* The command line as parsed. */
struct args {
	struct gen_opts o;
	const char *out;
	uint64_t zero;			/* --use-zero-pages; ZERO_UNSET: not given */
	bool help, verbose, quiet, force_progress, list;
	struct cli_once once;		/* the options given */
};
#define ZERO_UNSET UINT64_MAX

enum {
	OPT_SEED = 256, OPT_VMS, OPT_MEM, OPT_DUR, OPT_SCALE, OPT_PTS, OPT_SLEEP, OPT_MARKS,
	OPT_ZERO, OPT_PROGRESS, OPT_QUIET, OPT_LIST, OPT_HASH, OPT_CALIBRATION, OPT_ADVISOR,
	OPT_PROBE_PAGES, OPT_PROBE_AT, OPT_PROBE_EVERY, OPT_PROBE_SPREAD, OPT_PROBE_CHANNEL,
};

#define AT(f) offsetof(struct args, f)
static bool once_or_ms(const void *at)
{
	double s = *(const double *)at;

	return s == 0 || s >= 1e-3;
}

#define SECONDS_1E9(v, open) .kind = CLI_DOUBLE, .arg = "S", .offset = AT(v), .dmin = 0, .dmax = 1e9, \
	.dmin_open = open
/* The options: type, bounds, target and help; the knobs' bounds from knob_table. */
static const struct cli_opt rows[] = {
	{ "output", 'o', CLI_STR, "FILE", AT(out), .help = "the trace to write (required)" },
	{ "seed", OPT_SEED, CLI_U64, "N", AT(o.seed), .max = UINT64_MAX, .show_default = true,
	  .wants = "an unsigned 64-bit number", .help = "seed of every random choice" },
	{ "vms", OPT_VMS, CLI_UINT, "N", AT(o.vms), .min = 1, .max = 4096,
	  .help = "guests, or processes for ksm-flood; one mm each" },
	{ "mem-mib", OPT_MEM, CLI_U64, "N", AT(o.mem_mib), .min = 1, .max = UINT64_C(1) << 24,
	  .help = "memory per VM / process, MiB" },
	{ "duration-s", OPT_DUR, SECONDS_1E9(o.duration_s, true),
	  .wants = "seconds, more than 0 and at most 1e9",
	  .help = "trace time, seconds (default: the workload's\nduration x --scale)" },
	{ "scale", OPT_SCALE, CLI_DOUBLE, "F", AT(o.scale), .dmin = 0, .dmax = 1000, .dmin_open = true,
	  .wants = "a factor, more than 0 and at most 1000",
	  .help = "multiply memory sizes (and the default duration)\n"
		  "by F, 0 < F <= 1000: e.g. 0.001 for tests" },
	{ "pages-to-scan", OPT_PTS, CLI_KNOB, "N", AT(o.pages_to_scan), .knob = KNOB_PAGES_TO_SCAN,
	  .show_default = true, .help = "'set pages_to_scan' at t=0" },
	{ "sleep-millisecs", OPT_SLEEP, CLI_KNOB, "N", AT(o.sleep_ms), .knob = KNOB_SLEEP_MILLISECS,
	  .show_default = true, .help = "'set sleep_millisecs' at t=0" },
	{ "use-zero-pages", OPT_ZERO, CLI_KNOB, "0|1", AT(zero), .knob = KNOB_USE_ZERO_PAGES,
	  .help = "also 'set use_zero_pages' at t=0" },
	{ "marks-every-ms", OPT_MARKS, CLI_U64, "N", AT(o.marks_every_ms), .min = 1,
	  .max = UINT64_C(1) << 40, .wants = "a period of at least 1 ms (at most 2^40)",
	  .help = "a 'mark' every N ms of trace time, labels s0001,\n"
		  "s0002, ... (every workload also marks 'end')" },
	{ "calibration", OPT_CALIBRATION, CLI_OWN, "NAME",
	  .help = "what the parameters of kernel-build, iozone and\n"
		  "number-crunching are fitted to: 2017 (default),\n"
		  "the 2017 KVM experiment (4 x 4 GiB, 1800 s), on\n"
		  "1800 time steps whatever the duration;\n"
		  "guests-tcg, real 4 x 512 MiB TCG guests\n"
		  "(workloads/README.md), on\n"
		  "duration / --scale time steps (one a second at\n"
		  "full size); other workloads have 2017 only" },
	{ "advisor", OPT_ADVISOR, CLI_FLAG, NULL, AT(o.advisor),
	  .help = "'set advisor_mode scan-time' at t=0, after\n"
		  "pages_to_scan (the advisor then drives it)" },
	{ "probe-pages", OPT_PROBE_PAGES, CLI_U64, "K", AT(o.probe_pages), .min = 1,
	  .max = UINT64_C(1) << 24,
	  .help = "probe only: the victim's pages the attacker\n"
		  "knows and copies (default 100)" },
	{ "probe-at", OPT_PROBE_AT, SECONDS_1E9(o.probe_at_s, false),
	  .wants = "seconds from 0 to 1e9",
	  .help = "probe only: the attacker's first write of the\n"
		  "copies, seconds (default a tenth of the duration)" },
	{ "probe-every", OPT_PROBE_EVERY, SECONDS_1E9(o.probe_every_s, false),
	  .wants = "seconds, 0 (once) or from 0.001 to 1e9", .valid = once_or_ms,
	  .help = "probe only: its writes again every S seconds\n(default 0: once)" },
	{ "probe-spread", OPT_PROBE_SPREAD, SECONDS_1E9(o.probe_spread_s, false),
	  .wants = "seconds from 0 to 1e9",
	  .help = "probe only: page i of K written at --probe-at +\n"
		  "i x S / K, each round (default 0: all at once)" },
	{ "probe-channel", OPT_PROBE_CHANNEL, CLI_OWN, "cow|unmap|unmerge",
	  .help = "probe only: how the attacker reads its copies:\n"
		  "cow (default) writes them again; unmap munmaps\n"
		  "(and maps) them, unmerge MADV_UNMERGEABLEs them,\n"
		  "each round before its writes (once: at the end)" },
	{ "hash", OPT_HASH, CLI_OWN, "NAME",
	  .help = "checksum-adversarial only: the checksum whose\n"
		  "colliding pairs it writes (default " HASH_DEFAULT "; a\n"
		  "32-bit one: see ksmsim hashes)" },
	{ "verbose", 'v', CLI_FLAG, NULL, AT(verbose),
	  .help = "print the record count on standard error" },
	{ "progress", OPT_PROGRESS, CLI_FLAG, NULL, AT(force_progress),
	  .help = "progress on standard error (records, percent of\n"
		  "the trace's duration, time left) even when it is\n"
		  "not a terminal; by default shown on a terminal" },
	{ "quiet", OPT_QUIET, CLI_FLAG, NULL, AT(quiet), .help = "no progress" },
	{ "list", OPT_LIST, CLI_FLAG, NULL, AT(list),
	  .help = "print the workload names, one per line, and exit" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help),
	  .help = "this help; 'ksmsim gen WORKLOAD --help' describes\none workload" },
};

/* What the options start from: the 2017 experiment's knobs. */
static const struct args defaults = {
	.o = {
		.seed = DEF_SEED, .scale = 1.0, .duration_s = -1,
		.pages_to_scan = DEF_PAGES_TO_SCAN, .sleep_ms = DEF_SLEEP_MS,
		.use_zero_pages = -1, .probe_at_s = -1,
	},
	.zero = ZERO_UNSET,
};

static void usage(FILE *f)
{
	size_t n;
	const struct gen_workload *wl = gen_workloads(&n);

	fprintf(f,
"usage: ksmsim gen WORKLOAD [OPTIONS] -o FILE\n"
"Writes a synthetic page-write trace. The same options and --seed give a\n"
"byte-identical file. FILE's name picks the form: .ksmb binary, .gz\n"
"gzip-compressed text, anything else text ('-' is standard output).\n"
"\n"
"Workloads (defaults: VMs x MiB each, duration):\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-20s %s\n  %-20s (%u x %" PRIu64 " MiB, %.0f s)\n", wl[i].name,
			wl[i].summary, "", wl[i].def_vms, wl[i].def_mem_mib, wl[i].def_duration_s);
	fprintf(f,
"\n"
"Options:\n");
	cli_opts_help(f, rows, G_N_ELEMENTS(rows), &defaults, 27);
	fprintf(f,
"\n"
"Every trace starts with the knobs above and 'set run 1' at t=0.\n"
"Exit status: 0 written, 2 bad usage or a failed write, 130/143 interrupted\n"
"by SIGINT/SIGTERM (no partial file is left behind in any of these cases).\n");
}

static void usage_workload(FILE *f, const struct gen_workload *wl)
{
	fprintf(f, "usage: ksmsim gen %s [OPTIONS] -o FILE\n%s.\n\n%s\n"
		"Defaults: --vms %u --mem-mib %" PRIu64 " --duration-s %.0f (%u time steps).\n",
		wl->name, wl->summary, wl->help, wl->def_vms, wl->def_mem_mib,
		wl->def_duration_s, wl->def_ticks);
	if (wl->calibrated)
		fprintf(f, "Calibrations (--calibration NAME); the description above is 2017's,\n"
			"workloads/README.md gives the others' parameters:\n");
	for (int c = 0; wl->calibrated && c < GEN_CALIBRATIONS; c++)
		fprintf(f, "  %-12s %s%s\n", gen_calibration_info(c)->name,
			gen_calibration_info(c)->summary, c == GEN_CAL_2017 ? " (default)" : "");
	fprintf(f, "'ksmsim gen --help' lists the options; workloads/README.md gives the\n"
		"sources of the parameters.\n");
}

/* --calibration NAME: false after one line naming the valid ones (and a near miss). */
static bool parse_calibration(const char *arg, enum gen_calibration *c)
{
	const char *near = gen_calibration_nearest(arg);

	if (gen_calibration_find(arg, c))
		return true;
	GString *valid = g_string_new(NULL);

	for (int i = 0; i < GEN_CALIBRATIONS; i++)
		g_string_append_printf(valid, "%s %s", i ? "," : "", gen_calibration_info(i)->name);
	cli_error(PROG, "--calibration '%s': not a calibration%s%s%s (valid:%s)", arg,
		  near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", valid->str);
	g_string_free(valid, TRUE);
	return false;
}

/* --probe-channel NAME: false after one line. */
static bool parse_channel(const char *arg, enum gen_probe_channel *out)
{
	static const char *const ch[] = { "cow", "unmap", "unmerge" };

	for (size_t i = 0; i < G_N_ELEMENTS(ch); i++)
		if (!strcmp(arg, ch[i])) {
			*out = (enum gen_probe_channel)i;
			return true;
		}
	cli_usage_error(PROG, "--probe-channel", "cow, unmap or unmerge", arg);
	return false;
}

/* The CLI_OWN rows: 1 taken, -1 refused after one line. */
static int own(void *base, int c, const char *arg)
{
	struct args *a = base;
	const struct page_hash *h;

	switch (c) {
	case OPT_HASH:
		h = cli_hash_arg(PROG, "--hash", arg, false);
		if (h)
			a->o.hash = h->name;
		return h ? 1 : -1;
	case OPT_PROBE_CHANNEL:
		return parse_channel(arg, &a->o.probe_channel) ? 1 : -1;
	case OPT_CALIBRATION:
		return parse_calibration(arg, &a->o.calibration) ? 1 : -1;
	}
	return 0;
}

/* The options: -1 to go on, else the exit status (--list printed, or one line on stderr). */
static int parse(int argc, char **argv, struct args *a)
{
	const struct cli_parser p = { .prog = PROG, .rows = rows, .n = G_N_ELEMENTS(rows), .base = a,
				      .once = &a->once, .own = own };
	int status = cli_parse(&p, argc, argv);

	if (status < 0 && a->list) {
		size_t n;
		const struct gen_workload *all = gen_workloads(&n);

		for (size_t i = 0; i < n; i++)
			printf("%s\n", all[i].name);
		return 0;
	}
	if (a->zero != ZERO_UNSET)
		a->o.use_zero_pages = (int)a->zero;
	return status;
}

/* Any of probe's own options given. */
static bool probe_given(const struct args *a)
{
	static const int probe[] = { OPT_PROBE_PAGES, OPT_PROBE_AT, OPT_PROBE_EVERY, OPT_PROBE_SPREAD,
				     OPT_PROBE_CHANNEL };

	for (size_t i = 0; i < G_N_ELEMENTS(probe); i++)
		if (a->once.seen[probe[i] / 8] & (1u << (probe[i] % 8)))
			return true;
	return false;
}

int cmd_gen(int argc, char **argv)
{
	struct args a = defaults;
	int status = parse(argc, argv, &a);

	if (status >= 0)
		return status;
	const struct gen_workload *wl = NULL;

	if (optind < argc) {
		wl = gen_workload_find(argv[optind]);
		if (!wl && !a.help)
			return cli_error(PROG, "unknown workload '%s' (see ksmsim gen --help)",
					 argv[optind]);
		if (optind + 1 < argc)
			return cli_error(PROG, "one workload, not '%s' too", argv[optind + 1]);
	}
	if (a.help) {
		if (wl)
			usage_workload(stdout, wl);
		else
			usage(stdout);
		return 0;
	}
	if (!wl)
		return cli_error(PROG, "a WORKLOAD is required ('ksmsim gen --list' names them;"
				 " see --help)");
	if (!a.out)
		return cli_error(PROG, "no output file: give -o FILE");
	if (probe_given(&a) && !wl->takes_probe)
		return cli_error(PROG, "--probe-pages, --probe-at, --probe-every, --probe-spread,"
				 " --probe-channel: only"
				 " probe takes them, not %s", wl->name);
	if (a.o.probe_every_s > 0 && a.o.probe_spread_s > a.o.probe_every_s)
		return cli_error(PROG, "--probe-spread: longer than --probe-every (each round of"
				 " writes ends before the next begins)");
	if (a.o.hash && !wl->takes_hash)
		return cli_error(PROG, "--hash: %s attacks no checksum (only checksum-adversarial"
				 " takes --hash)", wl->name);

	struct gen_size sz;
	/* "ksmsim gen WORKLOAD": the prefix of what is said about this workload */
	char wprog[96];
	g_snprintf(wprog, sizeof(wprog), PROG " %s", wl->name);
	char *problem = gen_resolve(wl, &a.o, &sz);

	if (problem) {
		cli_error(wprog, "%s", problem);
		g_free(problem);
		return EXIT_USAGE;
	}
	/* a first write at or past the end would leave a trace with no probe (issue 46) */
	if (wl->takes_probe && a.o.probe_at_s >= 0 && a.o.probe_at_s * 1e6 >= (double)sz.duration_us)
		return cli_error(wprog, "--probe-at %g: at or past the trace's end (%.6g s)",
				 a.o.probe_at_s, sz.duration_us / 1e6);

	GError *error = NULL;
	trace_writer *w;
	struct progress *progress;
	uint64_t records = 0;

	/* An interruption removes the unfinished output (util/signals.h). */
	signals_install(SIGNALS_EXIT);
	w = trace_writer_open_version(a.out, trace_format_from_path(a.out), 1, &error);
	if (!w)
		return cli_gerror(PROG, error);
	progress = progress_new("ksmsim gen", a.quiet ? PROGRESS_NEVER :
				a.force_progress ? PROGRESS_ALWAYS : PROGRESS_AUTO);
	progress_phase(progress, "writing", "records");

	bool ok = gen_write(w, wl, &a.o, &sz, progress, &records, &error);

	progress_finish(progress);
	progress_free(progress);
	if (ok)
		ok = trace_writer_close(w, &error);
	else
		trace_writer_abort(w);
	if (!ok) {
		cli_error(wprog, "%s", error ? error->message : "generation failed");
		g_clear_error(&error);
		return EXIT_USAGE;
	}
	if (a.verbose)
		cli_notice(wprog, "%" PRIu64 " records to %s", records, a.out);
	return 0;
}
