// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim gen: write a synthetic workload's trace (generators in gen_*.c). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "hashes/hash.h"
#include "traces/writer.h"
#include "util/escape.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/progress.h"
#include "util/signals.h"
#include "workloads/gen.h"

#define DEF_SEED 1
#define DEF_PAGES_TO_SCAN 1600	/* the 2017 experiment's knobs */
#define DEF_SLEEP_MS 200

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
"Options:\n"
"  -o, --output FILE        the trace to write (required)\n"
"  --seed N                 seed of every random choice (default %d)\n"
"  --vms N                  guests, or processes for ksm-flood; one mm each\n"
"  --mem-mib N              memory per VM / process, MiB\n"
"  --duration-s S           trace time, seconds (default: the workload's\n"
"                           duration x --scale)\n"
"  --scale F                multiply memory sizes (and the default duration)\n"
"                           by F, 0 < F <= 1000: e.g. 0.001 for tests\n"
"  --pages-to-scan N        'set pages_to_scan' at t=0 (default %d)\n"
"  --sleep-millisecs N      'set sleep_millisecs' at t=0 (default %d)\n"
"  --use-zero-pages 0|1     also 'set use_zero_pages' at t=0\n"
"  --marks-every-ms N       a 'mark' every N ms of trace time, labels s0001,\n"
"                           s0002, ... (every workload also marks 'end')\n"
"  --calibration NAME       what the parameters of kernel-build, iozone and\n"
"                           number-crunching are fitted to: 2017 (default),\n"
"                           the 2017 KVM experiment (4 x 4 GiB, 1800 s), on\n"
"                           1800 time steps whatever the duration;\n"
"                           guests-tcg, real 4 x 512 MiB TCG guests\n"
"                           (workloads/README.md), on\n"
"                           duration / --scale time steps (one a second at\n"
"                           full size); other workloads have 2017 only\n"
"  --advisor                'set advisor_mode scan-time' at t=0, after\n"
"                           pages_to_scan (the advisor then drives it)\n"
"  --probe-pages K          probe only: the victim's pages the attacker\n"
"                           knows and copies (default 100)\n"
"  --probe-at S             probe only: the attacker's first write of the\n"
"                           copies, seconds (default a tenth of the duration)\n"
"  --probe-every S          probe only: its writes again every S seconds\n"
"                           (default 0: once)\n"
"  --probe-spread S         probe only: page i of K written at --probe-at +\n"
"                           i x S / K, each round (default 0: all at once)\n"
"  --hash NAME              checksum-adversarial only: the checksum whose\n"
"                           colliding pairs it writes (default " HASH_DEFAULT "; a\n"
"                           32-bit one: see ksmsim hashes)\n"
"  -v, --verbose            print the record count on standard error\n"
"  --progress               progress on standard error (records, percent of\n"
"                           the trace's duration, time left) even when it is\n"
"                           not a terminal; by default shown on a terminal\n"
"  --quiet                  no progress\n"
"  --list                   print the workload names, one per line, and exit\n"
"  -h, --help               this help; 'ksmsim gen WORKLOAD --help' describes\n"
"                           one workload\n"
"\n"
"Every trace starts with the knobs above and 'set run 1' at t=0.\n"
"Exit status: 0 written, 2 bad usage or a failed write, 130/143 interrupted\n"
"by SIGINT/SIGTERM (no partial file is left behind in any of these cases).\n",
		DEF_SEED, DEF_PAGES_TO_SCAN, DEF_SLEEP_MS);
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

/* One line: the arguments are what the user typed, so they are escaped. */
static int bad(const char *fmt, const char *a, const char *b)
{
	char *ea = escape_line(a), *eb = escape_line(b);

	fprintf(stderr, "ksmsim gen: ");
	fprintf(stderr, fmt, ea, eb);
	fputc('\n', stderr);
	g_free(ea);
	g_free(eb);
	return EXIT_USAGE;
}

enum {
	OPT_SEED = 256, OPT_VMS, OPT_MEM, OPT_DUR, OPT_SCALE, OPT_PTS, OPT_SLEEP, OPT_MARKS,
	OPT_ZERO, OPT_PROGRESS, OPT_QUIET, OPT_LIST, OPT_HASH, OPT_CALIBRATION, OPT_ADVISOR,
	OPT_PROBE_PAGES, OPT_PROBE_AT, OPT_PROBE_EVERY, OPT_PROBE_SPREAD,
};

/* --calibration NAME: false after one line naming the valid ones (and a near miss). */
static bool parse_calibration(const char *arg, enum gen_calibration *c)
{
	const char *near = gen_calibration_nearest(arg);

	if (gen_calibration_find(arg, c))
		return true;
	fprintf(stderr, "ksmsim gen: --calibration '%s': not a calibration", arg);
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fprintf(stderr, " (valid:");
	for (int i = 0; i < GEN_CALIBRATIONS; i++)
		fprintf(stderr, "%s %s", i ? "," : "", gen_calibration_info(i)->name);
	fprintf(stderr, ")\n");
	return false;
}

/* The command line as parsed. */
struct args {
	struct gen_opts o;
	const char *out;
	bool help, verbose, quiet, force_progress, probe_given;
};

/* The options: -1 to go on, else the exit status (--list printed, or one line on stderr). */
static int parse(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "vms", required_argument, NULL, OPT_VMS },
		{ "mem-mib", required_argument, NULL, OPT_MEM },
		{ "duration-s", required_argument, NULL, OPT_DUR },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "pages-to-scan", required_argument, NULL, OPT_PTS },
		{ "sleep-millisecs", required_argument, NULL, OPT_SLEEP },
		{ "marks-every-ms", required_argument, NULL, OPT_MARKS },
		{ "use-zero-pages", required_argument, NULL, OPT_ZERO },
		{ "hash", required_argument, NULL, OPT_HASH },
		{ "calibration", required_argument, NULL, OPT_CALIBRATION },
		{ "advisor", no_argument, NULL, OPT_ADVISOR },
		{ "probe-pages", required_argument, NULL, OPT_PROBE_PAGES },
		{ "probe-at", required_argument, NULL, OPT_PROBE_AT },
		{ "probe-every", required_argument, NULL, OPT_PROBE_EVERY },
		{ "probe-spread", required_argument, NULL, OPT_PROBE_SPREAD },
		{ "verbose", no_argument, NULL, 'v' },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen_opts *o = &a->o;
	uint64_t v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
		const char *arg = optarg;

		switch (c) {
		case 'o':
			a->out = arg;
			break;
		case OPT_SEED:
			if (!parse_u64(arg, UINT64_MAX, &o->seed))
				return bad("--seed '%s': not an unsigned 64-bit number%s", arg, "");
			break;
		case OPT_VMS:
			if (!parse_u64(arg, 4096, &v) || !v)
				return bad("--vms '%s': a count from 1 to 4096%s", arg, "");
			o->vms = (unsigned)v;
			break;
		case OPT_MEM:
			if (!parse_u64(arg, UINT64_C(1) << 24, &v) || !v)
				return bad("--mem-mib '%s': a size from 1 to 16777216 MiB%s", arg, "");
			o->mem_mib = v;
			break;
		case OPT_DUR:
			if (!parse_double(arg, &o->duration_s) || o->duration_s <= 0 ||
			    o->duration_s > 1e9)
				return bad("--duration-s '%s': seconds, more than 0 and at most 1e9%s",
					   arg, "");
			break;
		case OPT_SCALE:
			if (!parse_double(arg, &o->scale) || o->scale <= 0 || o->scale > 1000)
				return bad("--scale '%s': a factor, more than 0 and at most 1000%s",
					   arg, "");
			break;
		case OPT_PTS:
			if (!parse_u64(arg, UINT32_MAX, &o->pages_to_scan))
				return bad("--pages-to-scan '%s': 0 to 4294967295%s", arg, "");
			break;
		case OPT_SLEEP:
			if (!parse_u64(arg, UINT32_MAX, &o->sleep_ms))
				return bad("--sleep-millisecs '%s': 0 to 4294967295%s", arg, "");
			break;
		case OPT_MARKS:
			if (!parse_u64(arg, UINT64_C(1) << 40, &o->marks_every_ms) || !o->marks_every_ms)
				return bad("--marks-every-ms '%s': a period of at least 1 ms%s", arg, "");
			break;
		case OPT_ZERO:
			if (strcmp(arg, "0") && strcmp(arg, "1"))
				return bad("--use-zero-pages '%s': 0 or 1%s", arg, "");
			o->use_zero_pages = arg[0] - '0';
			break;
		case OPT_HASH: {
			const struct page_hash *h = cli_hash_arg("ksmsim gen", "--hash", arg, false);

			if (!h)
				return EXIT_USAGE;
			o->hash = h->name;
			break;
		}
		case OPT_CALIBRATION:
			if (!parse_calibration(arg, &o->calibration))
				return EXIT_USAGE;
			break;
		case OPT_ADVISOR:
			o->advisor = true;
			break;
		case OPT_PROBE_PAGES:
			if (!parse_u64(arg, UINT64_C(1) << 24, &o->probe_pages) || !o->probe_pages)
				return bad("--probe-pages '%s': a count from 1 to 16777216%s", arg, "");
			a->probe_given = true;
			break;
		case OPT_PROBE_AT:
			if (!parse_double(arg, &o->probe_at_s) || !(o->probe_at_s >= 0) ||
			    o->probe_at_s > 1e9)
				return bad("--probe-at '%s': seconds from 0 to 1e9%s", arg, "");
			a->probe_given = true;
			break;
		case OPT_PROBE_EVERY:
			if (!parse_double(arg, &o->probe_every_s) || !(o->probe_every_s >= 0) ||
			    o->probe_every_s > 1e9 || (o->probe_every_s > 0 && o->probe_every_s < 1e-3))
				return bad("--probe-every '%s': seconds, 0 (once) or from 0.001 to 1e9%s",
					   arg, "");
			a->probe_given = true;
			break;
		case OPT_PROBE_SPREAD:
			if (!parse_double(arg, &o->probe_spread_s) || !(o->probe_spread_s >= 0) ||
			    o->probe_spread_s > 1e9)
				return bad("--probe-spread '%s': seconds from 0 to 1e9%s", arg, "");
			a->probe_given = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case OPT_PROGRESS:
			a->force_progress = true;
			break;
		case OPT_QUIET:
			a->quiet = true;
			break;
		case 'h':
			a->help = true;
			break;
		case OPT_LIST: {
			size_t n;
			const struct gen_workload *all = gen_workloads(&n);

			for (size_t i = 0; i < n; i++)
				printf("%s\n", all[i].name);
			return 0;
		}
		case ':':
		case '?':
			return option_error("ksmsim gen", argv, longopts, c);
		}
	}
	return -1;
}

int cmd_gen(int argc, char **argv)
{
	struct args a = {
		.o = {
			.seed = DEF_SEED, .scale = 1.0, .duration_s = -1,
			.pages_to_scan = DEF_PAGES_TO_SCAN, .sleep_ms = DEF_SLEEP_MS,
			.use_zero_pages = -1, .probe_at_s = -1,
		},
	};
	int status = parse(argc, argv, &a);

	if (status >= 0)
		return status;
	const struct gen_workload *wl = NULL;

	if (optind < argc) {
		wl = gen_workload_find(argv[optind]);
		if (!wl && !a.help)
			return bad("unknown workload '%s' (see ksmsim gen --help)%s", argv[optind], "");
		if (optind + 1 < argc)
			return bad("one workload, not '%s' too%s", argv[optind + 1], "");
	}
	if (a.help) {
		if (wl)
			usage_workload(stdout, wl);
		else
			usage(stdout);
		return 0;
	}
	if (!wl) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!a.out)
		return bad("no output file: give -o FILE%s%s", "", "");
	if (a.probe_given && !wl->takes_probe)
		return bad("--probe-pages, --probe-at, --probe-every, --probe-spread: only probe takes"
			   " them, not %s%s", wl->name, "");
	if (a.o.probe_every_s > 0 && a.o.probe_spread_s > a.o.probe_every_s)
		return bad("--probe-spread: longer than --probe-every (each round of writes ends"
			   " before the next begins)%s%s", "", "");
	if (a.o.hash && !wl->takes_hash)
		return bad("--hash: %s attacks no checksum (only checksum-adversarial takes"
			   " --hash)%s", wl->name, "");

	struct gen_size sz;
	char *problem = gen_resolve(wl, &a.o, &sz);

	if (problem) {
		fprintf(stderr, "ksmsim gen %s: %s\n", wl->name, problem);
		g_free(problem);
		return EXIT_USAGE;
	}

	GError *error = NULL;
	trace_writer *w;
	struct progress *progress;
	uint64_t records = 0;

	/* An interruption removes the unfinished output (util/signals.h). */
	signals_install(SIGNALS_EXIT);
	w = trace_writer_open_version(a.out, trace_format_from_path(a.out), 1, &error);
	if (!w) {
		error_line("ksmsim gen", error->message);
		g_error_free(error);
		return EXIT_USAGE;
	}
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
		fprintf(stderr, "ksmsim gen %s: %s\n", wl->name,
			error ? error->message : "generation failed");
		g_clear_error(&error);
		return EXIT_USAGE;
	}
	if (a.verbose)
		fprintf(stderr, "ksmsim gen %s: %" PRIu64 " records to %s\n", wl->name, records, a.out);
	return 0;
}
