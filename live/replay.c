// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The live replay (live.h): a trace's records carried out on the real
 * kernel, with the marks CSV of `ksmsim run` written at each mark so that
 * the two can be diffed.
 *
 * Records stamped with the same time form a group that must not interleave
 * with a ksmd batch: while run is 1 the group is applied with run written 0
 * (the write waits for a running batch to end) and run=1 is written back
 * after it. A settle inside a group lets ksmd run and stops it again as soon
 * as full_scans has moved far enough, well within ksmd's sleep.
 *
 * A group happens at one instant of trace time, however long its records
 * (a fill of a million pages, a settle) take here: the trace clock stands
 * still from the moment the group was due until ksmd is let go at its end,
 * so the gap to the next group is the trace's, measured from there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "live/child.h"
#include "live/ksmd.h"
#include "live/ksmfs.h"
#include "live/live.h"
#include "marks/marks.h"
#include "util/escape.h"
#include "util/signals.h"

#define SETTLE_POLL_NS 1000000	/* 1 ms: ksmd's 10 ms sleep is the margin */
/*
 * A settle needs a margin to stop ksmd at the pass boundary: below
 * p->settle_sleep_ms (LIVE_SETTLE_SLEEP_MS, 10, unless told; sleep_millisecs
 * 0 never sleeps) the settle runs at that sleep instead. The trace clock
 * stands still in a settle, so only jiffies-based effects (chain pruning,
 * the advisor) could tell.
 */
#define KSMD_ASLEEP_TIMEOUT_S 10.0

struct replay {
	const struct live_replay_params *p;
	int cpu;		/* every trace process runs here; -1: anywhere */
	GHashTable *mms;	/* name -> struct live_child */
	/*
	 * The counters at the trace's start, the marks count from; full_scans
	 * less what run=2 took from it (mod 2^64).
	 */
	struct ksm_counters start;
	uint64_t start_cpu_ns;	/* ksmd's schedstat run time at the trace's start */
	bool ksmd_seen;		/* /proc shows ksmd: the marks carry its CPU time */
	int want_run;		/* the trace's run (the session left 0) */
	uint64_t sleep_ms;	/* the trace's sleep_millisecs */
	int kernel_run;		/* what we last wrote (the session: 0) */
	bool ksmd_may_wake;	/* run went from 1 to 0 or 2: ksmd may not be asleep yet */
	bool in_group;
	int version;		/* the trace's: version 3 marks show THP events */
	bool thp_checked;	/* THP's mode was found to honour MADV_HUGEPAGE */
	uint64_t group_t;
	uint64_t origin_ns;	/* trace time 0 on CLOCK_MONOTONIC */
	uint64_t held_ns;	/* time spent in groups: the trace clock stood still */
	bool here[MARKS_NR];	/* the kernel has the column's file (see col_shown) */
	unsigned mm_fields;	/* the ksm_stat fields it shows (ksmfs_ksm_stat_fields) */
};

G_DEFINE_QUARK(ksmsim-live-error-quark, live_error)

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
		/* the kernel zeroes full_scans: keep counting (the count so far off start) */
		uint64_t fs;

		if (!ksmfs_read_column(MARKS_FULL_SCANS, &fs, error))
			return false;
		rp->start.full_scans -= fs;
	}
	if (!ksmfs_write_knob(KNOB_RUN, run, error))
		return false;
	rp->ksmd_may_wake = run != 1 && rp->kernel_run == 1;
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

static uint64_t due_ns(const struct replay *rp, uint64_t t_us)
{
	return rp->origin_ns + t_us * 1000 + rp->held_ns;
}

static bool group_end(struct replay *rp, GError **error)
{
	uint64_t due = due_ns(rp, rp->group_t), now;

	rp->in_group = false;
	if (!write_run(rp, rp->want_run, error))
		return false;
	now = now_ns();
	if (now > due)
		rp->held_ns += now - due;
	return true;
}

static bool do_set(struct replay *rp, const struct trace_record *rec, GError **error)
{
	if (!ksmfs_has_knob(rec->knob)) {
		/*
		 * smart_scan (6.7), advisor_* (6.9): a kernel without the knob
		 * scans as smart_scan 0 and advisor_mode none would, so those
		 * writes ask nothing of it; any other cannot be honoured.
		 */
		if ((rec->knob == KNOB_SMART_SCAN || rec->knob == KNOB_ADVISOR_MODE) &&
		    rec->value == 0)
			return true;
		g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE,
			    "set %s %" PRIu64 ": this kernel has no /sys/kernel/mm/ksm/%s",
			    knob_table[rec->knob].name, rec->value, knob_table[rec->knob].name);
		return false;
	}
	if (rec->knob == KNOB_SLEEP_MILLISECS) {
		rp->sleep_ms = rec->value;
		/* ksmd.c: else ksmd may take the new sleep where a batch is due */
		if (rp->ksmd_may_wake) {
			if (!ksmd_wait_asleep(KSMD_ASLEEP_TIMEOUT_S, error))
				return false;
			rp->ksmd_may_wake = false;
		}
	}
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
	uint64_t least = rp->p->settle_sleep_ms ? rp->p->settle_sleep_ms : LIVE_SETTLE_SLEEP_MS;
	bool lift = rp->sleep_ms < least;

	if (rp->want_run != 1) {
		g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE,
			    "settle while run is %d: the scanner cannot progress", rp->want_run);
		return false;
	}
	deadline = t0 + (uint64_t)(rp->p->settle_timeout * 1e9);
	if (lift && !ksmfs_write_knob(KNOB_SLEEP_MILLISECS, least, error))
		return false;
	if (!ksmfs_read_column(MARKS_FULL_SCANS, &fs0, error) || !write_run(rp, 1, error))
		return false;
	for (;;) {
		if (!ksmfs_read_column(MARKS_FULL_SCANS, &fs, error))
			return false;
		if (fs >= fs0 + rec->value)
			break;
		if (now_ns() > deadline) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "settle %" G_GUINT64_FORMAT ": %s grew by only %"
				    G_GUINT64_FORMAT " in %.0f s (--settle-timeout)",
				    (guint64)rec->value, marks_columns[MARKS_FULL_SCANS].name,
				    (guint64)(fs - fs0), rp->p->settle_timeout);
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
	return true;
}

/*
 * A column the marks show: those `ksmsim run` shows for the trace's
 * version (marks_shown()), less the sysfs files this kernel lacks (Linux
 * 6.1 has no pages_scanned, pages_skipped, ksm_zero_pages, general_profit):
 * an absent counter is left out, never written as a 0 the kernel never
 * said. On a kernel with them all the file is what marks_write_header()
 * and marks_write_row() write.
 */
static bool col_shown(const struct replay *rp, size_t i)
{
	return marks_shown(&marks_columns[i], MARKS_SET_KERNEL, rp->version) && rp->here[i];
}

/* marks_put_cumulative() less the absent columns. */
static void put_cumulative(const struct replay *rp, FILE *f, int version)
{
	const char *sep = "";

	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];

		if (marks_kernel(col) && col->cumulative && col->version == version && rp->here[i]) {
			fprintf(f, "%s%s", sep, col->name);
			sep = ", ";
		}
	}
}

static void print_header(const struct replay *rp, FILE *f, const char *trace_name)
{
	struct utsname u;
	int version = rp->version;
	const char *sep = "";

	if (uname(&u) != 0)
		strcpy(u.release, "?"), strcpy(u.machine, "?");
	char *name = escape_line(trace_name);

	fprintf(f, "# recorded on a live Linux %s %s kernel by replaying %s\n",
		u.release, u.machine, name);
	g_free(name);
	fputs("# ", f);
	put_cumulative(rp, f, 0);
	fprintf(f, ": counted from the start of the trace (%s keeps counting across run=2);\n",
		marks_columns[MARKS_FULL_SCANS].name);
	fprintf(f, "# all other counters: the kernel's values at the mark; t_us: the "
		"mark's timestamp as written in the trace\n");
	fprintf(f, "# %s: ksmd's own CPU time since the start of the trace "
		"(/proc/<ksmd>/schedstat run time; empty where ksmd is not visible)\n",
		marks_columns[MARKS_KSMD_CPU_MS].name);
	if (version >= MARKS_THP_VERSION) {
		fputs("# ", f);
		put_cumulative(rp, f, MARKS_THP_VERSION);
		fputs(": /proc/vmstat, counted from the start of the trace (system-wide)\n", f);
	}
	for (size_t i = 0; i < MARKS_NR; i++) {
		if (!marks_shown(&marks_columns[i], MARKS_SET_KERNEL, version) || rp->here[i])
			continue;
		fprintf(f, "%s%s", *sep ? sep : "# not in this kernel's /sys/kernel/mm/ksm, "
			"so left out: ", marks_columns[i].name);
		sep = ", ";
	}
	if (*sep)
		fputc('\n', f);
	fputs("label,t_us", f);
	for (size_t i = 0; i < MARKS_NR; i++)
		if (col_shown(rp, i))
			fprintf(f, ",%s", marks_columns[i].name);
	fputc('\n', f);
}

static void write_row(const struct replay *rp, FILE *f, const char *label, uint64_t t_us,
		      const struct marks_values *v)
{
	char buf[64];

	marks_put_field(f, label, true);
	fprintf(f, ",%" PRIu64, t_us);
	for (size_t i = 0; i < MARKS_NR; i++) {
		if (!col_shown(rp, i))
			continue;
		fputc(',', f);
		if (marks_format(&marks_columns[i], v, buf, sizeof(buf)))
			fputs(buf, f);
	}
	fputc('\n', f);
}

/* The per-mm header: marks_mm_write_header()'s, less the fields ksm_stat lacks here. */
static void mm_header(const struct replay *rp, FILE *f)
{
	fputs("label,t_us,mm", f);
	for (size_t i = 0; i < MARKS_MM_NR; i++)
		if (rp->mm_fields & (1u << i))
			fprintf(f, ",%s", marks_mm_columns[i].name);
	fputc('\n', f);
}

static void mm_row(const struct replay *rp, FILE *f, const char *label, uint64_t t_us,
		   const struct ksm_mm_stat *st)
{
	marks_put_field(f, label, true);
	fprintf(f, ",%" PRIu64, t_us);
	marks_put_field(f, st->name, false);
	for (size_t i = 0; i < MARKS_MM_NR; i++) {
		const char *p = (const char *)st + marks_mm_columns[i].off;

		if (!(rp->mm_fields & (1u << i)))
			continue;
		if (marks_mm_columns[i].kind == MARKS_BOOL)
			fprintf(f, ",%d", *(const bool *)p ? 1 : 0);
		else if (marks_mm_columns[i].kind == MARKS_I64)
			fprintf(f, ",%" PRId64, *(const int64_t *)p);
		else
			fprintf(f, ",%" PRIu64, *(const uint64_t *)p);
	}
	fputc('\n', f);
}

static gint cmp_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* In name order, as the model writes them. */
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
		const struct live_child *c = g_hash_table_lookup(rp->mms, names->pdata[i]);
		struct ksm_mm_stat st;

		ok = ksmfs_read_ksm_stat(c->pid, rp->mm_fields, &st, error);
		if (ok) {
			st.name = c->name;
			mm_row(rp, rp->p->mm_stats, rec->label, rec->t_us, &st);
		}
	}
	g_ptr_array_unref(names);
	return ok;
}

static bool do_mark(struct replay *rp, const struct trace_record *rec, GError **error)
{
	struct ksm_counters c;

	if (rp->p->mm_stats && !write_mm_stats(rp, rec, error))
		return false;

	if (!ksmfs_read_counters(&c, error))
		return false;
	marks_since(&c, &rp->start);
	/* ksmd's own run time, as the model's ksmd_cpu_ms counts it: from the start */
	struct ksm_truth t = { 0 };
	uint64_t cpu_ns;
	bool seen;

	if (!live_ksmd_cpu_ns(&cpu_ns, &seen, error))
		return false;
	t.cpu_ns = (double)(cpu_ns - rp->start_cpu_ns);
	write_row(rp, rp->p->marks, rec->label, rec->t_us,
		  &(struct marks_values){ .c = &c, .t = rp->ksmd_seen ? &t : NULL });
	return !rp->p->profile || live_profile_mark(rp->p->profile, rec->label, error);
}

/*
 * What a trace's hugepage advice needs: THP mode madvise or always, 2 MiB
 * folios allowed (the per-size file came with mTHP in Linux 6.8: before
 * it, the mode alone decides).
 */
static bool thp_usable(GError **error)
{
	static const char *const files[] = {
		"/sys/kernel/mm/transparent_hugepage/enabled",
		"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		char *text = NULL;
		bool off;

		if (i > 0 && access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0 &&
		    access(files[i], F_OK) != 0)
			continue;
		if (!g_file_get_contents(files[i], &text, NULL, NULL)) {
			g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE,
				    "the trace advises hugepage but %s is unreadable: no THP here",
				    files[i]);
			return false;
		}
		off = strstr(text, "[never]") != NULL;
		g_free(text);
		if (off) {
			g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE,
				    "the trace advises hugepage but %s is [never]: no THP to "
				    "replay it with", files[i]);
			return false;
		}
	}
	return true;
}

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

/* prctl(PR_GET_MEMORY_MERGE) is EINVAL where the kernel has no merge-any. */
static bool merge_any_here(void)
{
	return prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) >= 0 || errno != EINVAL;
}

static bool apply(struct replay *rp, const struct trace_record *rec, GError **error)
{
	struct live_child *c;

	if (rec->verb == TRACE_ADVISE && rec->thp_advice == TRACE_ADVICE_HUGEPAGE &&
	    !rp->thp_checked) {
		if (!thp_usable(error))
			return false;
		rp->thp_checked = true;
	}

	if (rec->verb == TRACE_PRCTL && !merge_any_here()) {
		g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE,
			    "prctl memory-merge: this kernel has no PR_SET_MEMORY_MERGE "
			    "(Linux 6.4 or later)");
		return false;
	}

	switch (rec->verb) {
	case TRACE_SPAWN:
		if (rec->node != 0) {
			/* one node here: memory placement cannot be honoured */
			g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE,
				    "spawn %s node=%u: the live replay supports node 0 only",
				    rec->mm, rec->node);
			return false;
		}
		c = live_child_spawn(rec->mm, rp->p->base, rp->cpu, error);
		if (!c)
			return false;
		g_hash_table_replace(rp->mms, c->name, c);
		return true;
	case TRACE_FORK:
		c = g_hash_table_lookup(rp->mms, rec->mm);
		if (!c)
			break;
		c = live_child_fork(c, rec->child, error);
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
	g_set_error(error, LIVE_ERROR, LIVE_ERROR_TRACE, "no live mm named %s", rec->mm);
	return false;
}

bool live_trace_check(const char *path, GError **error)
{
	static struct trace_record rec;	/* a page of content: not on the stack */
	trace_reader *r = trace_reader_open(path, error);
	int n;

	if (!r)
		return false;
	while ((n = trace_reader_next(r, &rec, error)) > 0)
		;
	trace_reader_free(r);
	return n == 0;
}

static bool replay_records(struct replay *rp, trace_reader *r, GError **error)
{
	static struct trace_record rec;
	int n;

	rp->origin_ns = now_ns();
	while ((n = trace_reader_next(r, &rec, error)) > 0) {
		GError *err = NULL;

		if (!rp->in_group || rec.t_us != rp->group_t) {
			if (rp->in_group && !group_end(rp, error))
				return false;
			if (!sleep_until(due_ns(rp, rec.t_us), error) ||
			    !group_begin(rp, rec.t_us, error))
				return false;
		}
		if (!apply(rp, &rec, &err)) {
			if (g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_INTR))
				g_propagate_error(error, err);
			else
				g_propagate_prefixed_error(error, err, "%s:%" G_GUINT64_FORMAT ": ",
							   rp->p->trace_name, (guint64)rec.line);
			return false;
		}
		if (interrupted(error))
			return false;
	}
	if (n < 0)
		return false;
	return !rp->in_group || group_end(rp, error);
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

bool live_replay(const struct live_replay_params *p, trace_reader *r, GError **error)
{
	struct replay rp;
	bool ok;

	memset(&rp, 0, sizeof(rp));
	rp.p = p;
	rp.cpu = p->cpu == LIVE_CPU_LEAST_BUSY ? live_default_cpu() : p->cpu;
	live_leave_cpu(rp.cpu);
	rp.mms = g_hash_table_new(g_str_hash, g_str_equal);
	rp.sleep_ms = knob_table[KNOB_SLEEP_MILLISECS].def;	/* what the session set */
	rp.version = trace_reader_version(r, error);
	if (rp.version < 0) {
		g_hash_table_destroy(rp.mms);
		return false;
	}
	for (size_t i = 0; i < MARKS_NR; i++)
		rp.here[i] = marks_columns[i].source != MARKS_SYSFS || ksmfs_has_column(i);
	rp.mm_fields = p->mm_stats ? ksmfs_ksm_stat_fields() : 0;
	if (p->mm_stats && !rp.mm_fields) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "--mm-stats-csv: this kernel has no /proc/PID/ksm_stat (Linux 6.1 or later)");
		g_hash_table_destroy(rp.mms);
		return false;
	}
	print_header(&rp, p->marks, p->trace_name);
	if (p->mm_stats) {
		fprintf(p->mm_stats, "# /proc/PID/ksm_stat of every live process at each mark, "
			"recorded by replaying %s\n", p->trace_name);
		mm_header(&rp, p->mm_stats);
	}
	ok = ksmfs_read_counters(&rp.start, error) &&
	     live_ksmd_cpu_ns(&rp.start_cpu_ns, &rp.ksmd_seen, error) &&
	     replay_records(&rp, r, error);
	kill_all(rp.mms);
	g_hash_table_destroy(rp.mms);
	return ok;
}
