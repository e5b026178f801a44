// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim live --measure-scan-rate: how many pages per second the real ksmd
 * visits when nothing holds it back (sleep_millisecs 0, pages_to_scan 10000,
 * smart_scan 0 so that every page is visited on every pass), on three page
 * sets of the same size, each split over two processes:
 *   distinct   every page different (checksums + unstable tree every pass)
 *   identical  every page byte:5a (merged into chains after two passes)
 *   zero       every page zero-filled, use_zero_pages 0 (merged the same way)
 * The rate is taken over whole passes once the set has reached its steady
 * state (three warm-up passes done), so the merging pass itself is not
 * measured; its time is reported apart.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "live/child.h"
#include "live/ksmfs.h"
#include "util/atomic_file.h"
#include "util/exit_status.h"
#include "util/signals.h"

int live_measure_scan_rate(int argc, char **argv);

#define WARM_PASSES 3		/* pass 1 checksums, pass 2 merges, pass 3 settles chains */
#define MEASURED_PASSES 3
#define SET_TIMEOUT_S 600

struct rate {
	const char *set;
	uint64_t pages;
	uint64_t scanned;
	double seconds;
	double per_s;
	double warm_s;		/* the warm-up passes: checksums and merging */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool poll_sleep(GError **error)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
	if (signals_caught()) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted");
		return false;
	}
	return true;
}

/* Waits for full_scans to reach target; returns the time and pages_scanned then. */
static bool wait_full(uint64_t target, double deadline, double *t, uint64_t *scanned,
		      GError **error)
{
	uint64_t fs;

	for (;;) {
		if (!ksmfs_read_u64("full_scans", &fs, error))
			return false;
		if (fs >= target) {
			*t = now_s();
			return ksmfs_read_u64("pages_scanned", scanned, error);
		}
		if (now_s() > deadline) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "ksmd did not reach %" G_GUINT64_FORMAT " full scans in %d s",
				    (guint64)target, SET_TIMEOUT_S);
			return false;
		}
		if (!poll_sleep(error))
			return false;
	}
}

static bool setup_set(struct live_child **kids, int set, uint64_t pages, GError **error)
{
	static struct trace_record rec;
	uint64_t per = pages / 2;

	for (int k = 0; k < 2; k++) {
		memset(&rec, 0, sizeof(rec));
		rec.vpn = 0;
		rec.npages = per;
		rec.verb = TRACE_MAP;
		if (!live_child_do(kids[k], &rec, error))
			return false;
		rec.verb = TRACE_ADVISE;
		rec.mergeable = true;
		if (!live_child_do(kids[k], &rec, error))
			return false;
		if (set == 0) {
			rec.verb = TRACE_FILLSEQ;
			rec.seed = (uint64_t)(k + 1) << 40;
		} else {
			rec.verb = TRACE_FILL;
			rec.content.form = set == 1 ? CONTENT_BYTE : CONTENT_ZERO;
			rec.content.value = 0x5a;
		}
		if (!live_child_do(kids[k], &rec, error))
			return false;
	}
	return true;
}

static bool measure_set(int set, uint64_t pages, struct rate *out, GError **error)
{
	static const char *const names[] = { "distinct", "identical", "zero" };
	struct live_child *kids[2] = { NULL, NULL };
	double deadline = now_s() + SET_TIMEOUT_S, t0, t1, tw;
	uint64_t s0, s1, fs;
	bool ok = false;

	/* a clean slate: nothing merged, full_scans back to 0 */
	if (!ksmfs_write("run", "2", error) || !ksmfs_write("run", "0", error) ||
	    !ksmfs_write("max_page_sharing", "256", error) ||
	    !ksmfs_write("use_zero_pages", "0", error) ||
	    !ksmfs_write("smart_scan", "0", error) ||
	    !ksmfs_write("pages_to_scan", "10000", error) ||
	    !ksmfs_write("sleep_millisecs", "0", error))
		return false;
	for (int k = 0; k < 2; k++) {
		kids[k] = live_child_spawn(k ? "rate1" : "rate0", LIVE_DEFAULT_BASE, -1, error);
		if (!kids[k])
			goto out;
	}
	if (!setup_set(kids, set, pages, error))
		goto out;
	if (!ksmfs_read_u64("full_scans", &fs, error) || !ksmfs_write("run", "1", error))
		goto out;
	t1 = now_s();
	tw = t1;
	if (!wait_full(fs + WARM_PASSES, deadline, &t0, &s0, error) ||
	    !wait_full(fs + WARM_PASSES + MEASURED_PASSES, deadline, &t1, &s1, error))
		goto out;
	out->set = names[set];
	out->pages = pages / 2 * 2;
	out->scanned = s1 - s0;
	out->seconds = t1 - t0;
	out->per_s = out->seconds > 0 ? out->scanned / out->seconds : 0;
	out->warm_s = t0 - tw;
	ok = true;
out:
	live_child_kill(kids[0]);
	live_child_kill(kids[1]);
	return ok;
}

int live_measure_scan_rate(int argc, char **argv)
{
	uint64_t mib = 1024;
	const char *csv_path = NULL;
	struct ksmfs_session sess;
	struct rate rates[3];
	atomic_file *csv = NULL;
	GError *err = NULL, *rerr = NULL;
	bool ok = true;
	int nsets = 0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--measure-scan-rate"))
			continue;
		if (i + 1 >= argc) {
			fprintf(stderr, "ksmsim live: %s needs a value or is unknown\n", argv[i]);
			return EXIT_USAGE;
		}
		if (!strcmp(argv[i], "--mib")) {
			errno = 0;
			mib = g_ascii_strtoull(argv[i + 1], &end, 10);
			if (errno || *end || mib < 1 || mib > 65536) {
				fprintf(stderr, "ksmsim live: bad --mib '%s'\n", argv[i + 1]);
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
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		return EXIT_USAGE;
	}
	if (!ksmfs_session_begin(&sess, &err)) {
		fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_error_free(err);
		atomic_file_abort(csv);
		return EXIT_USAGE;
	}
	printf("ksmd top scan rate: %" G_GUINT64_FORMAT " MiB per set over 2 processes, "
	       "pages_to_scan 10000, sleep_millisecs 0, smart_scan 0\n", (guint64)mib);
	printf("%-10s %10s %12s %9s %12s %13s\n", "set", "pages", "scanned", "seconds", "pages/s",
	       "warm-up s");
	for (int set = 0; set < 3 && ok; set++) {
		ok = measure_set(set, mib * 256, &rates[set], &err);
		if (ok) {
			struct rate *r = &rates[set];

			printf("%-10s %10" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %9.3f %12.0f %13.3f\n",
			       r->set, (guint64)r->pages, (guint64)r->scanned, r->seconds, r->per_s,
			       r->warm_s);
			fflush(stdout);
			nsets++;
		}
	}
	if (!ksmfs_session_end(&sess, &rerr)) {
		fprintf(stderr, "ksmsim live: restoring KSM failed: %s\n", rerr->message);
		g_error_free(rerr);
		ok = false;
	}
	if (!ok) {
		if (err)
			fprintf(stderr, "ksmsim live: %s\n", err->message);
		g_clear_error(&err);
		atomic_file_abort(csv);
		return signals_exit_status(1);
	}
	if (csv) {
		FILE *f = atomic_file_stream(csv);

		fprintf(f, "# ksmd top scan rate: pages_to_scan 10000, sleep_millisecs 0, "
			"smart_scan 0, %d passes after %d warm-up passes\n",
			MEASURED_PASSES, WARM_PASSES);
		fprintf(f, "set,pages,pages_scanned,seconds,pages_per_s,warmup_seconds\n");
		for (int i = 0; i < nsets; i++)
			fprintf(f, "%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f,%.0f,%.6f\n",
				rates[i].set, (guint64)rates[i].pages, (guint64)rates[i].scanned,
				rates[i].seconds, rates[i].per_s, rates[i].warm_s);
		if (!atomic_file_commit(csv, &err)) {
			fprintf(stderr, "ksmsim live: %s\n", err->message);
			g_error_free(err);
			return 1;
		}
	}
	return signals_exit_status(0);
}
