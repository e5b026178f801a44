// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd's top scan rate (live.h): how many pages per second the real ksmd
 * visits when nothing holds it back, on a page set split over two
 * processes. The rate is taken over whole passes once the set has reached
 * its steady state, so the merging passes are not measured; their time is
 * reported apart.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "live/child.h"
#include "live/ksmfs.h"
#include "live/live.h"
#include "util/signals.h"

#define SET_TIMEOUT_S 600

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
		if (!ksmfs_read_column(MARKS_FULL_SCANS, &fs, error))
			return false;
		if (fs >= target) {
			*t = now_s();
			return ksmfs_read_column(MARKS_PAGES_SCANNED, scanned, error);
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

static bool setup_set(struct live_child **kids, enum live_page_set set, uint64_t pages,
		      GError **error)
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
		if (set == LIVE_SET_DISTINCT) {
			rec.verb = TRACE_FILLSEQ;
			rec.seed = (uint64_t)(k + 1) << 40;
		} else {
			rec.verb = TRACE_FILL;
			rec.content.form = set == LIVE_SET_IDENTICAL ? CONTENT_BYTE : CONTENT_ZERO;
			rec.content.value = 0x5a;
		}
		if (!live_child_do(kids[k], &rec, error))
			return false;
	}
	return true;
}

bool live_measure_scan_rate(enum live_page_set set, uint64_t pages, struct live_scan_rate *out,
			    GError **error)
{
	static const char *const names[LIVE_SET_NR] = { "distinct", "identical", "zero" };
	struct live_child *kids[2] = { NULL, NULL };
	double deadline = now_s() + SET_TIMEOUT_S, t0, t1, tw;
	uint64_t s0, s1, fs;
	bool ok = false;

	/* a clean slate: nothing merged, full_scans back to 0 */
	if (!ksmfs_write("run", "2", error) || !ksmfs_write("run", "0", error) ||
	    !ksmfs_write("max_page_sharing", "256", error) ||
	    !ksmfs_write("use_zero_pages", "0", error) ||
	    (ksmfs_has_knob(KNOB_SMART_SCAN) && !ksmfs_write("smart_scan", "0", error)) ||
	    !ksmfs_write("pages_to_scan", "10000", error) ||
	    !ksmfs_write("sleep_millisecs", "0", error))
		return false;
	for (int k = 0; k < 2; k++) {
		kids[k] = live_child_spawn(k ? "rate1" : "rate0", LIVE_DEFAULT_BASE, LIVE_CPU_ANY,
					   error);
		if (!kids[k])
			goto out;
	}
	if (!setup_set(kids, set, pages, error))
		goto out;
	if (!ksmfs_read_column(MARKS_FULL_SCANS, &fs, error) || !ksmfs_write("run", "1", error))
		goto out;
	tw = now_s();
	if (!wait_full(fs + LIVE_SCAN_WARM_PASSES, deadline, &t0, &s0, error) ||
	    !wait_full(fs + LIVE_SCAN_WARM_PASSES + LIVE_SCAN_MEASURED_PASSES, deadline, &t1, &s1,
		       error))
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
