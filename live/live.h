/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real kernel's KSM, driven from user space: a trace replayed on the
 * live ksmd (one process per trace mm), with its marks written as
 * marks/marks.h says, and ksmd's top scan rate.
 *
 * The live KSM is shared by the whole machine: everything that touches it
 * runs between live_session_begin() and live_session_end(), which save the
 * knobs, set the kernel's defaults and put the saved knobs back however the
 * command ends (SIGINT/SIGTERM/SIGHUP are deferred meanwhile,
 * util/signals.h SIGNALS_DEFER, and end the blocking waits below).
 */
#ifndef KSMSIM_LIVE_LIVE_H
#define KSMSIM_LIVE_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <glib.h>
#include "traces/reader.h"
#include "traces/trace.h"

/*
 * Where vpn 0 lands: 32 TiB, above AddressSanitizer's shadow on x86-64
 * (which ends near 0x10007fff8000), so ASan builds can replay too; vpn
 * below 2^32 keeps every page under 48 TiB, clear of the mmap area.
 */
#define LIVE_DEFAULT_BASE UINT64_C(0x200000000000)
/* The highest base: room for vpn < 2^32 below the 47-bit user address limit. */
#define LIVE_MAX_BASE ((UINT64_C(1) << 47) - TRACE_VPN_LIMIT * TRACE_PAGE_SIZE)

/*
 * Errors of this library that are the input's fault rather than the
 * machine's: a command reports them as bad input. Everything else is a
 * G_FILE_ERROR from the kernel's files and the trace processes, or the
 * trace reader's TRACE_ERROR.
 */
#define LIVE_ERROR (live_error_quark())
GQuark live_error_quark(void);
enum live_error {
	LIVE_ERROR_TRACE,	/* the trace asks what a live replay cannot do */
};

/* Whether a replay could run here now: root, KSM present and writable, no other user. */
bool live_check_usable(GError **error);

/*
 * Takes the replay lock, saves every knob (or takes over those of a replay
 * that was killed before it could restore them), installs SIGNALS_DEFER and
 * sets the kernel's defaults (run=2 first, run ends at 0). NULL: nothing
 * was changed. live_session_end() restores the knobs (run=2 first), unlocks
 * and frees; call it on every path once begin succeeded.
 */
struct live_session;
struct live_session *live_session_begin(GError **error);
/*
 * Before live_session_begin: false leaves khugepaged's knobs alone (the
 * default holds it still for the replay; `live --khugepaged run`).
 */
void live_hold_khugepaged(bool hold);
bool live_session_end(struct live_session *s, GError **error);

/*
 * ksmd's own CPU time so far (/proc/<ksmd>/schedstat's first field: the
 * nanoseconds it ran on a CPU, not the wall time it was awake; the marks'
 * ksmd_cpu_ms counts it from the trace's start). *seen false (and *ns 0)
 * where /proc shows no ksmd (another pid namespace).
 */
bool live_ksmd_cpu_ns(uint64_t *ns, bool *seen, GError **error);

/*
 * `ksmsim verify`: the host's own processes under a setting. Before
 * live_session_begin, the pids whose KSM use is expected (their merged and
 * mergeable pages are what is measured; any other process's still makes
 * the session refuse). Inside a session: one knob written (advisor_mode
 * takes ADVISOR_*), and the counters /sys/kernel/mm/ksm has now.
 */
void live_allow_pids(const pid_t *pids, size_t n);
bool live_write_knob(enum ksm_knob knob, uint64_t value, GError **error);
struct ksm_counters;
bool live_read_counters(struct ksm_counters *c, GError **error);

/* Whether this process may run on cpu (for checking --cpu). */
bool live_cpu_allowed(int cpu);

#define LIVE_CPU_ANY (-1)		/* the scheduler places every process */
#define LIVE_CPU_LEAST_BUSY (-2)	/* the least busy allowed CPU, over 0.1 s */

#define LIVE_SETTLE_SLEEP_MS 10

struct live_replay_params {
	const char *trace_name;	/* in messages and in the marks header */
	double settle_timeout;	/* seconds a settle may take */
	/*
	 * ksmd's least sleep_millisecs during a settle (LIVE_SETTLE_SLEEP_MS
	 * by default): the time the replay has to see a pass end and stop
	 * ksmd before its next batch. A slow machine (an emulated guest)
	 * needs more.
	 */
	uint64_t settle_sleep_ms;
	uint64_t base;		/* where vpn 0 lands: page aligned, <= LIVE_MAX_BASE */
	int cpu;		/* where every trace process runs, or LIVE_CPU_* */
	FILE *marks;		/* the marks CSV of `ksmsim run` */
	FILE *mm_stats;		/* every process's ksm_stat at each mark, or NULL */
	struct live_profile *profile;	/* ksmd's samples written at each mark, or NULL */
};

/*
 * Reads the whole trace through the reader: a bad line must be found
 * before a replay has half run on the live kernel.
 */
bool live_trace_check(const char *path, GError **error);

/*
 * Replays r inside a session: each mm a child process pinned to p->cpu,
 * records stamped with the same time applied with ksmd stopped (run 0) so
 * that no batch interleaves with them, each settle run on the real ksmd
 * until full_scans has moved far enough, each mark's counters written to
 * p->marks (and the processes' ksm_stat to p->mm_stats). Every process is
 * gone when it returns. Errors from a record name trace_name:line.
 */
bool live_replay(const struct live_replay_params *p, trace_reader *r, GError **error);

/*
 * ksmd's top scan rate: sleep_millisecs 0, pages_to_scan 10000 and
 * smart_scan 0 (every page visited on every pass), on one page set split
 * over two processes, taken over LIVE_SCAN_MEASURED_PASSES whole passes
 * once LIVE_SCAN_WARM_PASSES have brought the set to its steady state (the
 * merging passes are timed apart). Inside a session.
 */
enum live_page_set {
	LIVE_SET_DISTINCT,	/* every page different: checksums and the unstable tree */
	LIVE_SET_IDENTICAL,	/* every page byte:5a, merged into chains */
	LIVE_SET_ZERO,		/* zero-filled with use_zero_pages 0, merged the same way */
	LIVE_SET_NR,
};
#define LIVE_SCAN_WARM_PASSES 3		/* pass 1 checksums, pass 2 merges, pass 3 settles chains */
#define LIVE_SCAN_MEASURED_PASSES 3

struct live_scan_rate {
	const char *set;	/* "distinct", "identical", "zero" */
	uint64_t pages;
	uint64_t scanned;	/* pages_scanned over the measured passes */
	double seconds;
	double per_s;
	double warm_s;		/* the warm-up passes */
};
bool live_measure_scan_rate(enum live_page_set set, uint64_t pages, struct live_scan_rate *out,
			    GError **error);

/*
 * ksmd measured by function (live/profile.c): perf's cpu-clock samples
 * ksmd's kernel call chains, each sample goes to one of these terms by a
 * table of kernel functions, and at each mark every term's samples, share
 * and milliseconds so far are written to out ("label,term,samples,share,
 * ms"). Root only: open fails with one line where perf events or the
 * kernel's symbols are not available.
 */
enum live_profile_term {
	LIVE_PROFILE_WALK, LIVE_PROFILE_CHECKSUM, LIVE_PROFILE_COMPARE,
	LIVE_PROFILE_STABLE_FOLIO, LIVE_PROFILE_TREE_PAGE, LIVE_PROFILE_MERGE, LIVE_PROFILE_RMAP_ITEM,
	LIVE_PROFILE_MMAP_LOCK, LIVE_PROFILE_CHAIN, LIVE_PROFILE_PASS, LIVE_PROFILE_SCAN,
	LIVE_PROFILE_OTHER, LIVE_PROFILE_NR
};
extern const char *const live_profile_term_names[LIVE_PROFILE_NR];
struct live_profile;
struct live_profile *live_profile_open(FILE *out, GError **error);
bool live_profile_mark(struct live_profile *p, const char *label, GError **error);
uint64_t live_profile_lost(const struct live_profile *p);
void live_profile_close(struct live_profile *p);

#endif
