// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim live: replay a trace on this machine's real KSM and print the same
 * marks CSV as `ksmsim run`, so that the two can be diffed.
 *
 * Each trace mm is a child process (child.c); the kernel's knobs are saved,
 * set to the trace defaults and restored on every way out (ksmfs.c).
 *
 * Records stamped with the same time form a group that must not interleave
 * with a ksmd batch: while run is 1 the group is applied with run written 0
 * (the write waits for a running batch to end) and run=1 is written back
 * after it. A settle inside a group lets ksmd run and stops it again as soon
 * as full_scans has moved far enough, well within ksmd's sleep.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "live/child.h"
#include "live/ksmfs.h"
#include "sim/ksm_stat_csv.h"
#include "traces/reader.h"
#include "util/atomic_file.h"
#include "util/signals.h"

int live_measure_scan_rate(int argc, char **argv);	/* scanrate.c */

#define SETTLE_POLL_NS 1000000	/* 1 ms: ksmd's 10 ms sleep is the margin */
/*
 * A settle needs that margin to stop ksmd at the pass boundary: below it
 * (sleep_millisecs 0 never sleeps) the settle runs at this sleep instead.
 * The trace clock stands still in a settle, so only jiffies-based effects
 * (chain pruning, the advisor) could tell.
 */
#define SETTLE_MIN_SLEEP_MS 10

struct replay {
	const char *path;
	double settle_timeout;
	uint64_t base;
	int cpu;		/* every trace process runs here; -1: anywhere */
	GHashTable *mms;	/* name -> struct live_child */
	FILE *csv;
	FILE *mm_stats;		/* --mm-stats-csv, or NULL */
	struct ksm_counters start;
	uint64_t full_acc;	/* full_scans counted before the last run=2 */
	uint64_t full_base;	/* kernel full_scans when full_acc was taken */
	int want_run;		/* the trace's run */
	uint64_t sleep_ms;	/* the trace's sleep_millisecs */
	int kernel_run;		/* what we last wrote */
	bool in_group;
	uint64_t group_t;
	uint64_t origin_ns;	/* trace time 0 on CLOCK_MONOTONIC */
	uint64_t settled_ns;	/* time spent in settles: the trace clock stood still */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static bool interrupted(GError **error)
{
	if (!signals_caught())
		return false;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted");
	return true;
}

static bool sleep_until(uint64_t t_ns, GError **error)
{
	struct timespec ts = { .tv_sec = t_ns / 1000000000u, .tv_nsec = t_ns % 1000000000u };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (interrupted(error))
			return false;
	return !interrupted(error);
}

static bool write_run(struct replay *rp, int run, GError **error)
{
	if (rp->kernel_run == run)
		return true;
	if (run == 2) {
		/* the kernel zeroes full_scans: keep counting across it */
		uint64_t fs;

		if (!ksmfs_read_u64("full_scans", &fs, error))
			return false;
		rp->full_acc += fs - rp->full_base;
		rp->full_base = 0;
	}
	if (!ksmfs_write_knob(KNOB_RUN, run, error))
		return false;
	rp->kernel_run = run;
	return true;
}

/* Stop ksmd for a group of same-time records. */
static bool group_begin(struct replay *rp, uint64_t t_us, GError **error)
{
	rp->in_group = true;
	rp->group_t = t_us;
	return rp->want_run != 1 || write_run(rp, 0, error);
}

static bool group_end(struct replay *rp, GError **error)
{
	rp->in_group = false;
	return write_run(rp, rp->want_run, error);
}

static bool do_set(struct replay *rp, const struct trace_record *rec, GError **error)
{
	if (rec->knob == KNOB_SLEEP_MILLISECS)
		rp->sleep_ms = rec->value;
	if (rec->knob != KNOB_RUN)
		return ksmfs_write_knob(rec->knob, rec->value, error);
	rp->want_run = (int)rec->value;
	if (rec->value == 1 && rp->in_group)	/* ksmd starts when the group ends, or at a settle */
		return true;
	return write_run(rp, (int)rec->value, error);
}

static bool do_settle(struct replay *rp, const struct trace_record *rec, GError **error)
{
	uint64_t fs0, fs, t0 = now_ns(), deadline;
	bool lift = rp->sleep_ms < SETTLE_MIN_SLEEP_MS;

	if (rp->want_run != 1) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE,
			    "settle while run is %d: the scanner cannot progress", rp->want_run);
		return false;
	}
	deadline = t0 + (uint64_t)(rp->settle_timeout * 1e9);
	if (lift && !ksmfs_write_knob(KNOB_SLEEP_MILLISECS, SETTLE_MIN_SLEEP_MS, error))
		return false;
	if (!ksmfs_read_u64("full_scans", &fs0, error) || !write_run(rp, 1, error))
		return false;
	for (;;) {
		if (!ksmfs_read_u64("full_scans", &fs, error))
			return false;
		if (fs >= fs0 + rec->value)
			break;
		if (now_ns() > deadline) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "settle %" G_GUINT64_FORMAT ": full_scans grew by only %"
				    G_GUINT64_FORMAT " in %.0f s (--settle-timeout)",
				    (guint64)rec->value, (guint64)(fs - fs0), rp->settle_timeout);
			return false;
		}
		if (!sleep_until(now_ns() + SETTLE_POLL_NS, error))
			return false;
	}
	/* stop ksmd again before its sleep ends: later same-time records come first */
	if (rp->in_group && !write_run(rp, 0, error))
		return false;
	if (lift && !ksmfs_write_knob(KNOB_SLEEP_MILLISECS, rp->sleep_ms, error))
		return false;
	rp->settled_ns += now_ns() - t0;
	return true;
}

static void print_header(FILE *f, const char *path)
{
	struct utsname u;

	if (uname(&u) != 0)
		strcpy(u.release, "?"), strcpy(u.machine, "?");
	fprintf(f, "# recorded on a live Linux %s %s kernel by replaying %s\n",
		u.release, u.machine, path);
	fprintf(f, "# full_scans, pages_scanned, pages_skipped, cow_ksm: counted from the "
		"start of the trace (full_scans keeps counting across run=2);\n");
	fprintf(f, "# all other counters: the kernel's values at the mark; t_us: the "
		"mark's timestamp as written in the trace\n");
	fprintf(f, "label,t_us,full_scans,pages_scanned,pages_shared,pages_sharing,"
		"pages_unshared,pages_volatile,pages_skipped,ksm_zero_pages,"
		"stable_node_chains,stable_node_dups,general_profit,cow_ksm\n");
}

static gint cmp_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* /proc/PID/ksm_stat of one child, in the model's struct. */
static bool read_ksm_stat(const struct live_child *c, struct ksm_stat_row *st, GError **error)
{
	char path[64], *text = NULL;
	unsigned seen = 0;

	snprintf(path, sizeof(path), "/proc/%ld/ksm_stat", (long)c->pid);
	if (!g_file_get_contents(path, &text, NULL, error))
		return false;
	memset(st, 0, sizeof(*st));
	st->mm = c->name;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char key[64], val[32];

		if (sscanf(line, "%63s %31s", key, val) != 2)
			continue;
		if (!strcmp(key, "ksm_rmap_items"))
			st->ksm_rmap_items = g_ascii_strtoull(val, NULL, 10), seen |= 1;
		else if (!strcmp(key, "ksm_zero_pages"))
			st->ksm_zero_pages = g_ascii_strtoull(val, NULL, 10), seen |= 2;
		else if (!strcmp(key, "ksm_merging_pages"))
			st->ksm_merging_pages = g_ascii_strtoull(val, NULL, 10), seen |= 4;
		else if (!strcmp(key, "ksm_process_profit"))
			st->ksm_process_profit = g_ascii_strtoll(val, NULL, 10), seen |= 8;
		else if (!strcmp(key, "ksm_mergeable:"))
			st->ksm_mergeable = !strcmp(val, "yes"), seen |= 16;
	}
	g_free(text);
	if (seen != 31) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "%s: not the ksm_stat this tool knows (a field is missing)", path);
		return false;
	}
	return true;
}

static bool write_mm_stats(struct replay *rp, const struct trace_record *rec, GError **error)
{
	GPtrArray *names = g_ptr_array_new();
	GHashTableIter it;
	gpointer key;
	bool ok = true;

	g_hash_table_iter_init(&it, rp->mms);
	while (g_hash_table_iter_next(&it, &key, NULL))
		g_ptr_array_add(names, key);
	g_ptr_array_sort(names, cmp_name);
	for (guint i = 0; i < names->len && ok; i++) {
		struct ksm_stat_row st;

		ok = read_ksm_stat(g_hash_table_lookup(rp->mms, names->pdata[i]), &st, error);
		if (ok)
			ksm_stat_csv_row(rp->mm_stats, rec->label, rec->t_us, &st);
	}
	g_ptr_array_unref(names);
	return ok;
}

static bool do_mark(struct replay *rp, const struct trace_record *rec, GError **error)
{
	struct ksm_counters c;

	if (rp->mm_stats && !write_mm_stats(rp, rec, error))
		return false;

	if (!ksmfs_read_counters(&c, error))
		return false;
	fprintf(rp->csv, "%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
		",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
		",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
		",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GINT64_FORMAT
		",%" G_GUINT64_FORMAT "\n",
		rec->label, (guint64)rec->t_us,
		(guint64)(rp->full_acc + c.full_scans - rp->full_base),
		(guint64)(c.pages_scanned - rp->start.pages_scanned),
		(guint64)c.pages_shared, (guint64)c.pages_sharing, (guint64)c.pages_unshared,
		(guint64)c.pages_volatile,
		(guint64)(c.pages_skipped - rp->start.pages_skipped),
		(guint64)c.ksm_zero_pages, (guint64)c.stable_node_chains,
		(guint64)c.stable_node_dups, (gint64)c.general_profit,
		(guint64)(c.cow_ksm - rp->start.cow_ksm));
	return true;
}

static bool apply(struct replay *rp, const struct trace_record *rec, GError **error)
{
	struct live_child *c;

	switch (rec->verb) {
	case TRACE_SPAWN:
		if (rec->node != 0) {
			/* one node here: memory placement cannot be honoured */
			g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE,
				    "spawn %s node=%u: the live replay supports node 0 only",
				    rec->mm, rec->node);
			return false;
		}
		c = live_child_spawn(rec->mm, rp->base, rp->cpu, error);
		if (!c)
			return false;
		g_hash_table_replace(rp->mms, c->name, c);
		return true;
	case TRACE_EXIT:
		c = g_hash_table_lookup(rp->mms, rec->mm);
		if (!c)
			break;
		g_hash_table_steal(rp->mms, rec->mm);
		return live_child_exit(c, error);
	case TRACE_SET:
		return do_set(rp, rec, error);
	case TRACE_SETTLE:
		return do_settle(rp, rec, error);
	case TRACE_MARK:
		return do_mark(rp, rec, error);
	default:
		c = g_hash_table_lookup(rp->mms, rec->mm);
		if (!c)
			break;
		return live_child_do(c, rec, error);
	}
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "no live mm named %s", rec->mm);
	return false;
}

/* The whole trace through the reader first: a bad line must not half-run. */
static bool validate(const char *path, GError **error)
{
	static struct trace_record rec;
	trace_reader *r = trace_reader_open(path, error);
	int n;

	if (!r)
		return false;
	while ((n = trace_reader_next(r, &rec, error)) > 0)
		;
	trace_reader_free(r);
	return n == 0;
}

static bool replay(struct replay *rp, trace_reader *r, GError **error)
{
	static struct trace_record rec;
	int n;

	rp->origin_ns = now_ns();
	while ((n = trace_reader_next(r, &rec, error)) > 0) {
		GError *err = NULL;

		if (!rp->in_group || rec.t_us != rp->group_t) {
			if (rp->in_group && !group_end(rp, error))
				return false;
			if (!sleep_until(rp->origin_ns + rec.t_us * 1000 + rp->settled_ns, error) ||
			    !group_begin(rp, rec.t_us, error))
				return false;
		}
		if (!apply(rp, &rec, &err)) {
			if (g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_INTR))
				g_propagate_error(error, err);
			else
				g_propagate_prefixed_error(error, err, "%s:%" G_GUINT64_FORMAT ": ",
							   rp->path, (guint64)rec.line);
			return false;
		}
		if (interrupted(error))
			return false;
	}
	if (n < 0)
		return false;
	return !rp->in_group || group_end(rp, error);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim live --trace FILE [--marks-csv FILE] [--mm-stats-csv FILE]\n"
		"                   [--settle-timeout SEC] [--base ADDR] [--cpu N|any]\n"
		"       ksmsim live --measure-scan-rate [--mib N] [--csv FILE]\n"
		"       ksmsim live --check\n\n"
		"Replays a trace on this machine's real KSM (root only): one process per mm,\n"
		"anonymous mappings at ADDR + vpn * 4096 (default 0x%" G_GINT64_MODIFIER "x),\n"
		"and prints the marks CSV of `ksmsim run` (standard output by default);\n"
		"--mm-stats-csv also writes every live process's /proc/PID/ksm_stat at each\n"
		"mark, in the form of `ksmsim run --mm-stats-csv`.\n"
		"Every KSM knob is saved first, set to the kernel defaults, and restored\n"
		"(after run=2) however the replay ends; a settle that does not finish within\n"
		"--settle-timeout seconds (default 120) is an error. A settle runs ksmd with\n"
		"sleep_millisecs at least 10, so that it can be stopped at the pass boundary.\n"
		"Every trace process is pinned to one CPU (--cpu; default the least busy\n"
		"one this process may use, over 0.1 s) once its own start-up writes are\n"
		"done, and the replayer moves to the other CPUs: a new page waits in its\n"
		"CPU's lru_add batch, which the model keeps as one, for trace pages only.\n"
		"--cpu any lets the scheduler place them all.\n"
		"--measure-scan-rate measures ksmd's top scan rate (pages/s) on distinct,\n"
		"identical and zero pages, N MiB each (default 1024) over 2 processes.\n"
		"--check exits 0 when a replay could run here, else says why and exits 1.\n",
		(guint64)LIVE_DEFAULT_BASE);
}

static int check_only(void)
{
	char *why = NULL;
	GError *err = NULL;

	if (!ksmfs_usable(&why)) {
		printf("%s\n", why);
		g_free(why);
		return 1;
	}
	if (!ksmfs_check_idle(NULL, 0, &err)) {
		printf("%s\n", err->message);
		g_error_free(err);
		return 1;
	}
	printf("live KSM is usable\n");
	return 0;
}

static void kill_all(GHashTable *mms)
{
	GHashTableIter it;
	gpointer v;

	g_hash_table_iter_init(&it, mms);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		g_hash_table_iter_steal(&it);
		live_child_kill(v);
	}
}

int cmd_live(int argc, char **argv)
{
	const char *trace = NULL, *marks = "-", *mm_stats_path = NULL;
	double timeout = 120;
	uint64_t base = LIVE_DEFAULT_BASE;
	int cpu = -2;	/* --cpu not given */
	struct replay rp;
	struct ksmfs_session sess;
	trace_reader *r = NULL;
	atomic_file *out = NULL, *mm_out = NULL;
	GError *err = NULL, *rerr = NULL;
	bool ok;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--measure-scan-rate")) {
			return live_measure_scan_rate(argc, argv);
		} else if (!strcmp(a, "--check")) {
			return check_only();
		} else if (!v) {
			fprintf(stderr, "ksmsim live: %s needs a value or is unknown\n", a);
			return EXIT_USAGE;
		} else if (!strcmp(a, "--trace")) {
			trace = v;
		} else if (!strcmp(a, "--marks-csv")) {
			marks = v;
		} else if (!strcmp(a, "--mm-stats-csv")) {
			mm_stats_path = v;
		} else if (!strcmp(a, "--settle-timeout")) {
			timeout = g_ascii_strtod(v, &end);
			if (*end || end == v || !(timeout > 0)) {
				fprintf(stderr, "ksmsim live: bad --settle-timeout '%s'\n", v);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--base")) {
			errno = 0;
			base = g_ascii_strtoull(v, &end, 0);
			/* room for vpn < 2^32 below the 47-bit user address limit */
			if (errno || *end || end == v || base % TRACE_PAGE_SIZE ||
			    base > (UINT64_C(1) << 47) - (TRACE_VPN_LIMIT * TRACE_PAGE_SIZE)) {
				fprintf(stderr, "ksmsim live: bad --base '%s' (page aligned, at most "
					"2^47 - 2^44)\n", v);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--cpu")) {
			long n;

			if (!strcmp(v, "any")) {
				cpu = -1;
			} else {
				errno = 0;
				n = strtol(v, &end, 10);
				if (errno || *end || end == v || n < 0 || n > INT_MAX ||
				    !live_cpu_allowed((int)n)) {
					fprintf(stderr, "ksmsim live: bad --cpu '%s' (a CPU this process "
						"may run on, or 'any')\n", v);
					return EXIT_USAGE;
				}
				cpu = (int)n;
			}
		} else {
			fprintf(stderr, "ksmsim live: unknown option '%s'\n", a);
			return EXIT_USAGE;
		}
		i++;
	}
	if (!trace) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(trace, "-") != 0 && !validate(trace, &err)) {
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	r = trace_reader_open(trace, &err);
	if (!r) {
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	out = atomic_file_open(marks, &err);
	if (out && mm_stats_path && !(mm_out = atomic_file_open(mm_stats_path, &err))) {
		atomic_file_abort(out);
		out = NULL;
	}
	if (!out) {
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		trace_reader_free(r);
		return EXIT_USAGE;
	}
	if (!ksmfs_session_begin(&sess, &err)) {
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		trace_reader_free(r);
		return EXIT_USAGE;
	}

	memset(&rp, 0, sizeof(rp));
	rp.path = trace;
	rp.settle_timeout = timeout;
	rp.base = base;
	rp.cpu = cpu == -2 ? live_default_cpu() : cpu;
	live_leave_cpu(rp.cpu);
	rp.mms = g_hash_table_new(g_str_hash, g_str_equal);
	rp.csv = atomic_file_stream(out);
	rp.want_run = rp.kernel_run = 0;
	rp.sleep_ms = knob_defaults[KNOB_SLEEP_MILLISECS];	/* what session_begin set */
	print_header(rp.csv, trace);
	if (mm_out) {
		rp.mm_stats = atomic_file_stream(mm_out);
		fprintf(rp.mm_stats, "# /proc/PID/ksm_stat of every live process at each mark, "
			"recorded by replaying %s\n", trace);
		ksm_stat_csv_header(rp.mm_stats);
	}
	ok = ksmfs_read_counters(&rp.start, &err);
	if (ok) {
		rp.full_base = rp.start.full_scans;
		ok = replay(&rp, r, &err);
	}
	kill_all(rp.mms);
	g_hash_table_destroy(rp.mms);
	trace_reader_free(r);
	if (!ksmfs_session_end(&sess, &rerr)) {
		fprintf(stderr, "ksmsim live: restoring KSM failed: %s\n", rerr->message);
		g_error_free(rerr);
		ok = false;
	}
	if (!ok) {
		int rc = err && err->domain == TRACE_ERROR ? EXIT_USAGE : 1;

		if (err)
			fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_clear_error(&err);
		atomic_file_abort(out);
		atomic_file_abort(mm_out);
		return signals_exit_status(rc);
	}
	bool committed = atomic_file_commit(out, &err);
	if (!committed)
		atomic_file_abort(mm_out);
	else if (mm_out)
		committed = atomic_file_commit(mm_out, &err);
	if (!committed) {
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	return signals_exit_status(0);
}
