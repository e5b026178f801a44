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
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "live/live.h"
#include "traces/reader.h"
#include "util/file_id.h"
#include "util/atomic_file.h"
#include "util/parse.h"
#include "util/signals.h"

#define MAX_MIB 65536
#define PROG "ksmsim live"

static void usage(FILE *out);

static void usage_text(FILE *out)
{
	fprintf(out,
		"usage: ksmsim live --trace FILE [--marks-csv FILE] [--mm-stats-csv FILE]\n"
		"                   [--settle-timeout SEC] [--settle-sleep MS] [--base ADDR]\n"
		"                   [--cpu N|any]\n"
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
		"is an error. A settle runs ksmd with sleep_millisecs at least 10 (or\n"
		"--settle-sleep MS), so that it can be stopped at the pass boundary: a\n"
		"slow machine, such as an emulated guest, needs a longer sleep.\n"
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
static int measure_scan_rate(uint64_t mib, const char *csv_path)
{
	struct live_session *sess;
	struct live_scan_rate rates[LIVE_SET_NR];
	atomic_file *csv = NULL;
	GError *err = NULL, *rerr = NULL;
	bool ok = true;
	int nsets = 0;

	if (csv_path && !(csv = atomic_file_open(csv_path, &err))) {
		cli_error(PROG, "%s", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	sess = live_session_begin(&err);
	if (!sess) {
		cli_error(PROG, "%s", err->message);
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
		cli_error(PROG, "restoring KSM failed: %s", rerr->message);
		g_error_free(rerr);
		ok = false;
	}
	if (!ok) {
		if (err)
			cli_error(PROG, "%s", err->message);
		g_clear_error(&err);
		atomic_file_abort(csv);
		return signals_exit_status(1);
	}
	if (csv && !write_rates_csv(csv, rates, nsets, &err)) {
		cli_error(PROG, "%s", err->message);
		g_error_free(err);
		return 1;
	}
	return signals_exit_status(0);
}


/* The command line as parsed. */
struct args {
	struct live_replay_params p;
	const char *trace, *marks, *mm_stats, *khugepaged, *cpu, *csv, *profile;
	uint64_t mib;
	bool help, scan_rate, check;
	struct cli_once once;
};

enum {
	OPT_TRACE = 256, OPT_MARKS, OPT_MM_STATS, OPT_SETTLE, OPT_BASE, OPT_CPU, OPT_KHUGEPAGED,
	OPT_SCAN_RATE, OPT_MIB, OPT_CSV, OPT_CHECK, OPT_PROFILE, OPT_SETTLE_SLEEP,
};
#define AT(f) offsetof(struct args, f)
static bool page_aligned(const void *base)
{
	return *(const uint64_t *)base % TRACE_PAGE_SIZE == 0;
}

/* Parsed before anything is done: --khugepaged acts only once the whole line is good. */
static const struct cli_opt rows[] = {
	{ "trace", OPT_TRACE, CLI_STR, "FILE", AT(trace), .help = "the trace to replay ('-': standard input)" },
	{ "marks-csv", OPT_MARKS, CLI_STR, "FILE", AT(marks), .show_default = true,
	  .help = "the marks CSV" },
	{ "mm-stats-csv", OPT_MM_STATS, CLI_STR, "FILE", AT(mm_stats),
	  .help = "every process's ksm_stat at each mark" },
	{ "settle-timeout", OPT_SETTLE, CLI_DOUBLE, "SEC", AT(p.settle_timeout), .dmax = 1e9,
	  .dmin_open = true, .wants = "seconds, more than 0 and at most 1e9", .show_default = true,
	  .help = "a settle longer than this is an error" },
	{ "settle-sleep", OPT_SETTLE_SLEEP, CLI_U64, "MS", AT(p.settle_sleep_ms),
	  .min = LIVE_SETTLE_SLEEP_MS, .max = 60000, .show_default = true,
	  .wants = "milliseconds, 10 to 60000",
	  .help = "ksmd's least sleep_millisecs in a settle" },
	{ "base", OPT_BASE, CLI_U64, "ADDR", AT(p.base), .max = LIVE_MAX_BASE,
	  .wants = "an address in decimal, page aligned, at most 2^47 - 2^44", .show_default = true,
	  .valid = page_aligned, .help = "where the mappings start" },
	{ "cpu", OPT_CPU, CLI_STR, "N|any", AT(cpu),
	  .help = "the CPU of the trace processes (default the least busy)" },
	{ "khugepaged", OPT_KHUGEPAGED, CLI_STR, "hold|run", AT(khugepaged),
	  .help = "hold khugepaged still (default) or let it run" },
	{ "measure-scan-rate", OPT_SCAN_RATE, CLI_FLAG, NULL, AT(scan_rate),
	  .help = "measure ksmd's top scan rate instead of replaying" },
	{ "mib", OPT_MIB, CLI_U64, "N", AT(mib), .min = 1, .max = MAX_MIB, .show_default = true,
	  .help = "--measure-scan-rate: MiB of each set" },
	{ "csv", OPT_CSV, CLI_STR, "FILE", AT(csv), .help = "--measure-scan-rate: the rates as CSV" },
	{ "profile", OPT_PROFILE, CLI_STR, "FILE", AT(profile),
	  .help = "ksmd's CPU by cost term at each mark (perf, root)" },
	{ "check", OPT_CHECK, CLI_FLAG, NULL, AT(check), .help = "whether a replay could run here" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help), .help = "this help" },
};

static const struct args defaults;

static void usage(FILE *out)
{
	usage_text(out);
	fprintf(out, "\nOptions:\n");
	cli_opts_help(out, rows, G_N_ELEMENTS(rows), &defaults, 24);
}

/* What the table cannot say: -1 to go on, else the exit status after one line. */
static int check_values(struct args *a)
{
	uint64_t n;

	if (a->khugepaged && strcmp(a->khugepaged, "hold") && strcmp(a->khugepaged, "run"))
		return cli_usage_error(PROG, "--khugepaged", "hold or run", a->khugepaged);
	if (a->cpu && !strcmp(a->cpu, "any"))
		a->p.cpu = LIVE_CPU_ANY;
	else if (a->cpu && parse_u64(a->cpu, INT_MAX, &n) && live_cpu_allowed((int)n))
		a->p.cpu = (int)n;
	else if (a->cpu)
		return cli_usage_error(PROG, "--cpu", "a CPU this process may run on, or 'any'",
				       a->cpu);
	return -1;
}

/* The options: -1 to go on, else the exit status (help printed, or one line on stderr). */
static int parse_options(int argc, char **argv, struct args *a)
{
	int status = cli_opts_parse(PROG, rows, G_N_ELEMENTS(rows), argc, argv, &a->once, a);

	if (status >= 0)
		return status;
	if (a->help) {
		usage(stdout);
		return 0;
	}
	if (optind < argc)
		return cli_extra_arg(PROG, argv[optind]);
	/* the modes' options apart */
	bool seen_replay = false, seen_rate = false;
	for (int o = OPT_TRACE; o <= OPT_KHUGEPAGED; o++)
		seen_replay |= (a->once.seen[o / 8] >> (o % 8)) & 1;
	for (int o = OPT_MIB; o <= OPT_CSV; o++)
		seen_rate |= (a->once.seen[o / 8] >> (o % 8)) & 1;
	if (a->check && (seen_replay || seen_rate || a->scan_rate))
		return cli_error(PROG, "--check takes no other option");
	if (a->scan_rate && seen_replay)
		return cli_error(PROG, "--measure-scan-rate takes --mib and --csv only");
	if (!a->scan_rate && seen_rate)
		return cli_error(PROG, "--mib and --csv go with --measure-scan-rate");
	if (!a->check && !a->scan_rate && !a->trace)
		return cli_error(PROG, "--trace FILE is required (see 'ksmsim live --help')");
	return check_values(a);
}

static const struct args defaults = {
	.p = { .settle_timeout = 120, .settle_sleep_ms = LIVE_SETTLE_SLEEP_MS,
	       .base = LIVE_DEFAULT_BASE, .cpu = LIVE_CPU_LEAST_BUSY },
	.marks = "-", .mib = 1024,
};

int cmd_live(int argc, char **argv)
{
	struct args a = defaults;
	struct live_replay_params p;
	const char *trace, *marks, *mm_stats_path, *profile_path;
	struct live_session *sess;
	trace_reader *r = NULL;
	atomic_file *out = NULL, *mm_out = NULL, *prof_out = NULL;
	GError *err = NULL, *rerr = NULL;
	bool ok;
	int rc;

	rc = parse_options(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (a.check)
		return check_only();
	if (a.scan_rate)
		return measure_scan_rate(a.mib, a.csv);
	if (a.khugepaged)
		live_hold_khugepaged(!strcmp(a.khugepaged, "hold"));
	p = a.p;
	trace = a.trace;
	marks = a.marks;
	mm_stats_path = a.mm_stats;
	profile_path = a.profile;
	const struct file_use uses[] = {
		{ "--trace", trace, false }, { "--marks-csv", marks, true },
		{ "--mm-stats-csv", mm_stats_path, true }, { "--profile", profile_path, true },
	};
	if (!file_uses_distinct(uses, G_N_ELEMENTS(uses), &err))
		return cli_gerror(PROG, err);
	if (strcmp(trace, "-") != 0 && !live_trace_check(trace, &err))
		return cli_gerror(PROG, err);
	r = trace_reader_open(trace, &err);
	if (!r)
		return cli_gerror(PROG, err);
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
		return cli_gerror(PROG, err);
	}
	/* perf or the symbols unavailable: one line, before KSM is touched */
	if (prof_out && !(p.profile = live_profile_open(atomic_file_stream(prof_out), &err))) {
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		atomic_file_abort(prof_out);
		trace_reader_free(r);
		cli_gerror(PROG, err);
		return 1;
	}
	sess = live_session_begin(&err);
	if (!sess) {
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		atomic_file_abort(prof_out);
		live_profile_close(p.profile);
		trace_reader_free(r);
		return cli_gerror(PROG, err);
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
		cli_error(PROG, "restoring KSM failed: %s", rerr->message);
		g_error_free(rerr);
		ok = false;
	}
	if (!ok) {
		/* the trace's fault is bad input; the machine's is a failure */
		rc = err && (err->domain == TRACE_ERROR ||
			     g_error_matches(err, LIVE_ERROR, LIVE_ERROR_TRACE)) ? EXIT_USAGE : 1;
		if (err)
			cli_error(PROG, "%s", err->message);
		g_clear_error(&err);
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		atomic_file_abort(prof_out);
		return signals_exit_status(rc);
	}
	atomic_file **const outs[] = { &out, &mm_out, &prof_out };
	if (!atomic_file_commit_all(outs, G_N_ELEMENTS(outs), &err)) {
		/*
		 * A full disk or a reader gone (`| head`: SIGPIPE is ignored
		 * during a replay, so the write fails with EPIPE): exit 2 as
		 * for every command's output (README), which also keeps
		 * main's stdout check from saying it a second time.
		 */
		cli_error(PROG, "%s", err->message);
		g_error_free(err);
		return signals_exit_status(EXIT_USAGE);
	}
	return signals_exit_status(0);
}
