// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz target: the whole run path, as `ksmsim run --check` takes it. The
 * input is a trace file as it is (text, gzip or binary: the reader tells
 * them apart, so compressed streams are fuzzed whole, not only as a
 * compressed copy of the input). It is read once, as a pipe is, through the
 * model with the invariant checker after every batch, marks and time series
 * written, under a memory budget that the model's own estimate enforces
 * record by record, as run does for a streamed trace.
 *
 * It aborts when the model breaks an invariant, when a refused trace's
 * error is not one line "FILE:LINE: problem" / "FILE: offset N: problem",
 * when a run ends without an error but without reaching the end, or (under
 * AddressSanitizer, whose allocator counts every byte on the heap) when the
 * heap the run holds grows past the memory estimate the limit is held to
 * (run_memory_need) plus FUZZ_MEMORY_SLACK, at any record, mark or sample:
 * so that what grows with the input but is not in the estimate is found.
 * To keep each input quick, the budget is what 4096 written pages in 64 mms
 * would take, with at most 20000 records, 10 s of trace time, settles of
 * at most 8 scans and sleep_millisecs at least 10 (below it ksmd runs a
 * batch every few microseconds of simulated time, as the kernel's spins).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>
#include "fuzz_common.h"
#include "sim/ksm.h"
#include "sim/run.h"
#include "sim/output.h"

/* The checker walks every page after every batch: keep the model small. */
#define FUZZ_MAX_PAGES 4096
#define FUZZ_MAX_MMS 64
#define FUZZ_MAX_RECORDS 20000
#define FUZZ_MAX_SETTLE 8
#define FUZZ_MAX_T_US (UINT64_C(10) * 1000000)	/* ksmd batches grow with trace time */
/* Below 10 ms ksmd hardly sleeps: a second of trace time is 10^5 batches. */
#define FUZZ_MIN_SLEEP_MS 10
/*
 * What the heap may hold beyond the estimate: the reader's line and gzip
 * buffers and GLib's tables, which the estimate's base (16 MiB) covers
 * already; the slack is for allocator rounding.
 */
#define FUZZ_MEMORY_SLACK (UINT64_C(4) << 20)

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_HEAP_ORACLE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_HEAP_ORACLE 1
#endif
#endif
#ifdef FUZZ_HEAP_ORACLE
/* libasan's, under gcc and clang alike (gcc ships no allocator_interface.h) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

struct fuzz_run {
	FILE *out;		/* marks and series, written and dropped */
	uint64_t records;
	const struct run *run;
	size_t heap_before;	/* the heap before the run opened */
};

static G_NORETURN void die(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz_run: %s: %s\n", what, msg);
	abort();
}

static size_t heap_now(void)
{
#ifdef FUZZ_HEAP_ORACLE
	return __sanitizer_get_current_allocated_bytes();
#else
	return 0;
#endif
}

/*
 * The most the heap was seen past the estimate, over every input of this
 * process: with FUZZ_SLACK_REPORT set in the environment it is printed at
 * exit, which is how the slack was measured (README.md, "Fuzzing").
 */
#ifdef FUZZ_HEAP_ORACLE
static int64_t worst_over = INT64_MIN;

static void report_slack(void)
{
	if (worst_over == INT64_MIN)
		fprintf(stderr, "fuzz_run: slack: no record was checked\n");
	else
		fprintf(stderr, "fuzz_run: slack: the heap was at most %" G_GINT64_FORMAT
			" bytes past the estimate (allowed %" G_GUINT64_FORMAT ")\n", worst_over,
			(uint64_t)FUZZ_MEMORY_SLACK);
}
#endif

/* The memory oracle: the heap the run holds against what the estimate allows. */
static void memory_oracle(const struct fuzz_run *f)
{
#ifdef FUZZ_HEAP_ORACLE
	static bool registered;
	size_t now = heap_now();
	uint64_t held = now > f->heap_before ? now - f->heap_before : 0;
	uint64_t need = run_memory_need(f->run->cfg, f->run->reader);

	if (!registered) {
		registered = true;
		if (getenv("FUZZ_SLACK_REPORT"))
			atexit(report_slack);
	}
	if (need < INT64_MAX && held < INT64_MAX)
		worst_over = MAX(worst_over, (int64_t)held - (int64_t)need);

	if (need < UINT64_MAX - FUZZ_MEMORY_SLACK && held > need + FUZZ_MEMORY_SLACK) {
		char *msg = g_strdup_printf("the run holds %" G_GUINT64_FORMAT " bytes of heap, the"
					    " estimate allows %" G_GUINT64_FORMAT " (+%" G_GUINT64_FORMAT
					    " slack)", held, need, (uint64_t)FUZZ_MEMORY_SLACK);
		die("memory estimate", msg);
	}
#endif
}

/* The budget beside the memory, which the run holds itself (run_config.max_memory). */
static bool admit(void *p, trace_reader *r, const struct trace_record *rec, GError **error)
{
	struct fuzz_run *f = p;

	memory_oracle(f);
	if (++f->records > FUZZ_MAX_RECORDS ||
	    (rec->verb == TRACE_SETTLE && rec->value > FUZZ_MAX_SETTLE) || rec->t_us > FUZZ_MAX_T_US ||
	    (rec->verb == TRACE_SET && rec->knob == KNOB_SLEEP_MILLISECS &&
	     rec->value < FUZZ_MIN_SLEEP_MS)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "%s:%" G_GUINT64_FORMAT
			    ": over the fuzz budget", trace_reader_path(r), rec->line);
		return false;
	}
	return true;
}

static bool on_mark(void *p, const char *label, uint64_t t_us, struct ksm *k, GError **error)
{
	struct fuzz_run *f = p;
	struct snapshot s;

	memory_oracle(f);
	snapshot_take(k, true, &s);
	output_marks_row(f->out, label, t_us, &s);
	g_array_free(ksm_mm_stats(k), TRUE);
	return true;
}

static bool on_sample(void *p, uint64_t sim_us, uint64_t trace_us, struct ksm *k, GError **error)
{
	struct fuzz_run *f = p;
	struct snapshot s;

	memory_oracle(f);
	snapshot_take(k, false, &s);
	output_series_row(f->out, sim_us, trace_us, &s);
	return true;
}

/* "PATH:LINE: problem" or "PATH: offset N: problem" on one line. */
static void check_shape(const GError *error, const char *path)
{
	const char *msg = error->message, *rest;

	if (strchr(msg, '\n') || !g_str_has_prefix(msg, path))
		die("error message shape", msg);
	rest = msg + strlen(path);
	if (rest[0] == ':' && g_ascii_isdigit(rest[1]))
		rest += strspn(rest + 1, "0123456789") + 1;
	else if (g_str_has_prefix(rest, ": offset ") && g_ascii_isdigit(rest[9]))
		rest += 9 + strspn(rest + 9, "0123456789");
	else
		die("error message shape", msg);
	if (rest[0] != ':' || rest[1] != ' ' || !rest[2])
		die("error message shape", msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("ksmsim-fuzz-run", MFD_CLOEXEC);
		if (fd < 0)
			die("memfd_create", strerror(errno));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		die("memfd", strerror(errno));

	GError *error = NULL;
	/* Each input also picks a policy (by its size), so every rule meets every input shape. */
	static const char *const policies[] = {
		"kernel", "no-gate", "dirty-bit", "partial-hash:k=4,max=64", "classified:classes=3",
		"classified:classes=2,by=mm",
	};
	struct run_config cfg = {
		.trace = path,
		.model.check = true,
		.ideal = true,
		.max_memory = ksm_memory_estimate(FUZZ_MAX_PAGES, FUZZ_MAX_MMS, true),
		.max_memory_given = true,
	};
	if (!ksm_policy_parse(policies[size % G_N_ELEMENTS(policies)], &cfg.model.policy, &error) ||
	    !run_config_resolve(&cfg, &error))
		die("policy", error->message);

	struct run run;
	size_t heap_before = heap_now();
	if (!run_open(&run, &cfg, &error)) {
		check_shape(error, path);
		g_error_free(error);
		return 0;
	}
	struct fuzz_run f = { .out = fopen("/dev/null", "w"), .run = &run, .heap_before = heap_before };
	struct loop_sinks sinks = {
		.mark = on_mark,
		.sample = on_sample,
		.sample_every_us = 1000000,
		.admit = admit,
		.ctx = &f,
	};
	struct loop_result res;

	if (!run_replay(&run, &sinks, &res, &error)) {
		if (g_error_matches(error, RUN_ERROR, RUN_ERROR_INVARIANT))
			die("model invariant", error->message);
		check_shape(error, path);
		g_error_free(error);
	} else {
		struct run_summary *rs = g_new0(struct run_summary, 1);

		rs->trace = "fuzz";
		rs->hash = cfg.hash_name;
		rs->interval_ms = 1000;
		run_summary_finish(rs, run.k, &run.opt, run.reader, &res, true);
		output_run_summary_row(f.out, rs);
		g_free(rs);
		if (res.records != f.records)
			die("run", "ended early without an error");
		memory_oracle(&f);
	}
	run_close(&run);
	fclose(f.out);
	return 0;
}
