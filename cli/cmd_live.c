// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim live: replay a trace on this machine's real KSM and print the same
 * marks CSV as `ksmsim run`, so that the two can be diffed; measure ksmd's
 * top scan rate; or say whether live KSM can be used here. The replayer,
 * the session that saves and restores KSM's knobs, and the scan-rate
 * measurement are live/ (live/live.h); this file reads the options, opens
 * the output files and picks the exit status.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "live/live.h"
#include "traces/reader.h"
#include "util/escape.h"
#include "util/file_id.h"
#include "util/atomic_file.h"
#include "util/parse.h"
#include "util/signals.h"

#define MAX_MIB 65536

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim live --trace FILE [--marks-csv FILE] [--mm-stats-csv FILE]\n"
		"                   [--settle-timeout SEC] [--base ADDR] [--cpu N|any]\n"
		"                   [--khugepaged hold|run] [--profile FILE]\n"
		"       ksmsim live --measure-scan-rate [--mib N] [--csv FILE]\n"
		"       ksmsim live --check\n\n"
		"Replays a trace on this machine's real KSM (root only): one process per mm,\n"
		"anonymous mappings at ADDR + vpn * 4096 (ADDR in decimal, default\n"
		"%" G_GUINT64_FORMAT " = 32 TiB),\n"
		"and prints the marks CSV of `ksmsim run` (standard output by default);\n"
		"--mm-stats-csv also writes every live process's /proc/PID/ksm_stat at each\n"
		"mark, in the form of `ksmsim run --mm-stats-csv`.\n"
		"Every KSM knob is saved first, set to the kernel defaults, and restored\n"
		"(after run=2) however the replay ends, running out of memory included; a\n"
		"settle that does not finish within --settle-timeout seconds (default 120)\n"
		"is an error. A settle runs ksmd with sleep_millisecs at least 10, so that\n"
		"it can be stopped at the pass boundary.\n"
		"The records of one trace time are applied with ksmd stopped, and the trace\n"
		"clock stands still while they are (a settle included).\n"
		"Every trace process is pinned to one CPU (--cpu; default the least busy\n"
		"one this process may use, over 0.1 s) once its own start-up writes are\n"
		"done, and the replayer moves to the other CPUs: a new page waits in its\n"
		"CPU's lru_add batch, which the model keeps as one, for trace pages only.\n"
		"--cpu any lets the scheduler place them all.\n"
		"khugepaged, which collapses small pages of MADV_HUGEPAGE areas into huge\n"
		"pages when it pleases, is held still (its sleeps set to 4294967295 ms,\n"
		"restored with KSM's knobs); --khugepaged run leaves it alone.\n"
		"--measure-scan-rate measures ksmd's top scan rate (pages/s) on distinct,\n"
		"identical and zero pages, N MiB each (default 1024, at most %d) over 2\n"
		"processes.\n"
		"--profile FILE samples ksmd's kernel call chains while the trace replays\n"
		"(perf cpu-clock every 250 us of ksmd's CPU, symbols from /proc/kallsyms)\n"
		"and writes at each mark every cost term's samples, share and ms so far\n"
		"(label,term,samples,share,ms; the terms and their kernel functions in\n"
		"live/profile.c and sim/MODEL.md, \"ksmd measured by function\").\n"
		"--check exits 0 when a replay could run here, else says why and exits 1.\n",
		(guint64)LIVE_DEFAULT_BASE, MAX_MIB);
}

static int check_only(void)
{
	GError *err = NULL;

	if (!live_check_usable(&err)) {
		printf("%s\n", err->message);
		g_error_free(err);
		return 1;
	}
	printf("live KSM is usable\n");
	return 0;
}

static void print_rate(FILE *f, const struct live_scan_rate *r)
{
	fprintf(f, "%-10s %10" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %9.3f %12.0f %13.3f\n",
		r->set, (guint64)r->pages, (guint64)r->scanned, r->seconds, r->per_s, r->warm_s);
}

static bool write_rates_csv(atomic_file *csv, const struct live_scan_rate *rates, int n,
			    GError **error)
{
	FILE *f = atomic_file_stream(csv);

	fprintf(f, "# ksmd top scan rate: pages_to_scan 10000, sleep_millisecs 0, "
		"smart_scan 0, %d passes after %d warm-up passes\n",
		LIVE_SCAN_MEASURED_PASSES, LIVE_SCAN_WARM_PASSES);
	fprintf(f, "set,pages,pages_scanned,seconds,pages_per_s,warmup_seconds\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f,%.0f,%.6f\n",
			rates[i].set, (guint64)rates[i].pages, (guint64)rates[i].scanned,
			rates[i].seconds, rates[i].per_s, rates[i].warm_s);
	return atomic_file_commit(csv, error);
}

/* --measure-scan-rate: every set in one session, each row printed as it is measured. */
static int measure_scan_rate(int argc, char **argv)
{
	uint64_t mib = 1024;
	const char *csv_path = NULL;
	struct live_session *sess;
	struct live_scan_rate rates[LIVE_SET_NR];
	atomic_file *csv = NULL;
	GError *err = NULL, *rerr = NULL;
	bool ok = true;
	int nsets = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--measure-scan-rate"))
			continue;
		if (i + 1 >= argc) {
			fprintf(stderr, "ksmsim live: %s needs a value or is unknown\n", argv[i]);
			return EXIT_USAGE;
		}
		if (!strcmp(argv[i], "--mib")) {
			if (!parse_u64(argv[i + 1], MAX_MIB, &mib) || mib < 1) {
				fprintf(stderr, "ksmsim live: bad --mib '%s' (1 to %d)\n", argv[i + 1],
					MAX_MIB);
				return EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--csv")) {
			csv_path = argv[i + 1];
		} else {
			fprintf(stderr, "ksmsim live: unknown option '%s' with --measure-scan-rate\n",
				argv[i]);
			return EXIT_USAGE;
		}
		i++;
	}
	if (csv_path && !(csv = atomic_file_open(csv_path, &err))) {
		error_line("ksmsim live", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	sess = live_session_begin(&err);
	if (!sess) {
		error_line("ksmsim live", err->message);
		g_error_free(err);
		atomic_file_abort(csv);
		return EXIT_USAGE;
	}
	printf("ksmd top scan rate: %" G_GUINT64_FORMAT " MiB per set over 2 processes, "
	       "pages_to_scan 10000, sleep_millisecs 0, smart_scan 0\n", (guint64)mib);
	printf("%-10s %10s %12s %9s %12s %13s\n", "set", "pages", "scanned", "seconds", "pages/s",
	       "warm-up s");
	for (int set = 0; set < LIVE_SET_NR && ok; set++) {
		ok = live_measure_scan_rate(set, mib * 256, &rates[set], &err);
		if (ok) {
			print_rate(stdout, &rates[set]);
			fflush(stdout);
			nsets++;
		}
	}
	if (!live_session_end(sess, &rerr)) {
		error_line("ksmsim live: restoring KSM failed", rerr->message);
		g_error_free(rerr);
		ok = false;
	}
	if (!ok) {
		if (err)
			error_line("ksmsim live", err->message);
		g_clear_error(&err);
		atomic_file_abort(csv);
		return signals_exit_status(1);
	}
	if (csv && !write_rates_csv(csv, rates, nsets, &err)) {
		error_line("ksmsim live", err->message);
		g_error_free(err);
		return 1;
	}
	return signals_exit_status(0);
}

enum live_mode {
	MODE_REPLAY,
	MODE_HELP,
	MODE_SCAN_RATE,
	MODE_CHECK,
};

/*
 * The options in order: the first --help, --measure-scan-rate or --check
 * in an option's place (not an option's value) decides the mode and ends
 * the parse. 0 to go on, else the exit status.
 */
static int parse_options(int argc, char **argv, enum live_mode *mode,
			 struct live_replay_params *p, const char **trace, const char **marks,
			 const char **mm_stats, const char **profile)
{
	*mode = MODE_REPLAY;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			*mode = MODE_HELP;
			return 0;
		} else if (!strcmp(a, "--measure-scan-rate")) {
			*mode = MODE_SCAN_RATE;
			return 0;
		} else if (!strcmp(a, "--check")) {
			*mode = MODE_CHECK;
			return 0;
		} else if (!v) {
			static const char *const takes_value[] = { "--trace", "--marks-csv",
				"--mm-stats-csv", "--settle-timeout", "--base", "--cpu",
				"--khugepaged", "--profile" };
			bool known = false;

			for (size_t k = 0; k < G_N_ELEMENTS(takes_value); k++)
				known |= !strcmp(a, takes_value[k]);
			if (known)
				fprintf(stderr, "ksmsim live: %s needs a value\n", a);
			else
				fprintf(stderr, "ksmsim live: unknown option '%s' (see 'ksmsim live --help')\n", a);
			return EXIT_USAGE;
		} else if (!strcmp(a, "--trace")) {
			*trace = v;
		} else if (!strcmp(a, "--marks-csv")) {
			*marks = v;
		} else if (!strcmp(a, "--mm-stats-csv")) {
			*mm_stats = v;
		} else if (!strcmp(a, "--profile")) {
			*profile = v;
		} else if (!strcmp(a, "--settle-timeout")) {
			if (!parse_double(v, &p->settle_timeout) || !(p->settle_timeout > 0)) {
				fprintf(stderr, "ksmsim live: bad --settle-timeout '%s'\n", v);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--base")) {
			if (!parse_u64(v, LIVE_MAX_BASE, &p->base) || p->base % TRACE_PAGE_SIZE) {
				fprintf(stderr, "ksmsim live: bad --base '%s' (decimal, page aligned, "
					"at most 2^47 - 2^44)\n", v);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--khugepaged")) {
			if (strcmp(v, "hold") && strcmp(v, "run")) {
				fprintf(stderr, "ksmsim live: bad --khugepaged '%s' (hold or run)\n", v);
				return EXIT_USAGE;
			}
			live_hold_khugepaged(!strcmp(v, "hold"));
		} else if (!strcmp(a, "--cpu")) {
			if (!strcmp(v, "any")) {
				p->cpu = LIVE_CPU_ANY;
			} else if (parse_u64(v, INT_MAX, &n) && live_cpu_allowed((int)n)) {
				p->cpu = (int)n;
			} else {
				fprintf(stderr, "ksmsim live: bad --cpu '%s' (a CPU this process "
					"may run on, or 'any')\n", v);
				return EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "ksmsim live: unknown option '%s'\n", a);
			return EXIT_USAGE;
		}
		i++;
	}
	return 0;
}

static int bad_input(GError *err)
{
	error_line("ksmsim live", err->message);
	g_error_free(err);
	return EXIT_USAGE;
}

int cmd_live(int argc, char **argv)
{
	const char *trace = NULL, *marks = "-", *mm_stats_path = NULL, *profile_path = NULL;
	struct live_replay_params p = {
		.settle_timeout = 120,
		.base = LIVE_DEFAULT_BASE,
		.cpu = LIVE_CPU_LEAST_BUSY,
	};
	struct live_session *sess;
	trace_reader *r = NULL;
	atomic_file *out = NULL, *mm_out = NULL, *prof_out = NULL;
	GError *err = NULL, *rerr = NULL;
	enum live_mode mode;
	bool ok;
	int rc;

	rc = parse_options(argc, argv, &mode, &p, &trace, &marks, &mm_stats_path, &profile_path);
	if (rc)
		return rc;
	switch (mode) {
	case MODE_HELP:
		usage(stdout);
		return 0;
	case MODE_SCAN_RATE:
		return measure_scan_rate(argc, argv);
	case MODE_CHECK:
		return check_only();
	case MODE_REPLAY:
		break;
	}
	if (!trace) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const struct file_use uses[] = {
		{ "--trace", trace, false }, { "--marks-csv", marks, true },
		{ "--mm-stats-csv", mm_stats_path, true }, { "--profile", profile_path, true },
	};
	if (!file_uses_distinct(uses, G_N_ELEMENTS(uses), &err))
		return bad_input(err);
	if (strcmp(trace, "-") != 0 && !live_trace_check(trace, &err))
		return bad_input(err);
	r = trace_reader_open(trace, &err);
	if (!r)
		return bad_input(err);
	out = atomic_file_open(marks, &err);
	if (out && mm_stats_path && !(mm_out = atomic_file_open(mm_stats_path, &err))) {
		atomic_file_abort(out);
		out = NULL;
	}
	if (out && profile_path && !(prof_out = atomic_file_open(profile_path, &err))) {
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		out = NULL;
	}
	if (!out) {
		trace_reader_free(r);
		return bad_input(err);
	}
	/* perf or the symbols unavailable: one line, before KSM is touched */
	if (prof_out && !(p.profile = live_profile_open(atomic_file_stream(prof_out), &err))) {
		error_line("ksmsim live", err->message);
		g_error_free(err);
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		atomic_file_abort(prof_out);
		trace_reader_free(r);
		return 1;
	}
	sess = live_session_begin(&err);
	if (!sess) {
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		atomic_file_abort(prof_out);
		live_profile_close(p.profile);
		trace_reader_free(r);
		return bad_input(err);
	}

	p.trace_name = trace;
	p.marks = atomic_file_stream(out);
	p.mm_stats = mm_out ? atomic_file_stream(mm_out) : NULL;
	ok = live_replay(&p, r, &err);
	trace_reader_free(r);
	if (p.profile) {
		fprintf(atomic_file_stream(prof_out), "# samples lost (the buffer full): %"
			G_GUINT64_FORMAT "\n", (guint64)live_profile_lost(p.profile));
		live_profile_close(p.profile);
	}
	if (!live_session_end(sess, &rerr)) {
		error_line("ksmsim live: restoring KSM failed", rerr->message);
		g_error_free(rerr);
		ok = false;
	}
	if (!ok) {
		/* the trace's fault is bad input; the machine's is a failure */
		rc = err && (err->domain == TRACE_ERROR ||
			     g_error_matches(err, LIVE_ERROR, LIVE_ERROR_TRACE)) ? EXIT_USAGE : 1;
		if (err)
			error_line("ksmsim live", err->message);
		g_clear_error(&err);
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		atomic_file_abort(prof_out);
		return signals_exit_status(rc);
	}
	atomic_file **const outs[] = { &out, &mm_out, &prof_out };
	if (!atomic_file_commit_all(outs, G_N_ELEMENTS(outs), &err)) {
		error_line("ksmsim live", err->message);
		g_error_free(err);
		return 1;
	}
	return signals_exit_status(0);
}
