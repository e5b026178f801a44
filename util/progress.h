/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Progress of a long command on standard error: units done (records, pages),
 * the rate, and, when the size of the work is known, the percentage and an
 * estimate of the time left. Shown on a terminal as one line rewritten in
 * place; when forced onto something else (--progress with stderr redirected),
 * as a plain line every few seconds. Never on standard output, so no output
 * of a command changes.
 *
 * Whether shown or not, the reporter keeps atomic_file's "done so far" line
 * current, so that an interrupted command (SIGINT/SIGTERM, see
 * atomic_file_install_signals) says how far it got.
 *
 * Use, in a command with --quiet and --progress options:
 *
 *	struct progress *p = progress_new("ksmsim gen",
 *		quiet ? PROGRESS_NEVER : force ? PROGRESS_ALWAYS : PROGRESS_AUTO);
 *	progress_phase(p, "writing", "pages");
 *	for (...) {
 *		...
 *		progress_update(p, pages_done, pages_done, pages_total);	// cheap
 *	}
 *	progress_finish(p);	// a last line if shown; ends the terminal line
 *	progress_free(p);
 *
 * progress_update's (pos, size) pair gives the fraction done (e.g. bytes of
 * the input read and its size); size 0 means unknown: no percentage, no ETA.
 * Calls are throttled inside (one clock read each), so calling it every few
 * thousand units is fine. Not thread-safe: one thread reports.
 */
#ifndef KSMSIM_UTIL_PROGRESS_H
#define KSMSIM_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

enum progress_mode {
	PROGRESS_AUTO,		/* shown when standard error is a terminal */
	PROGRESS_ALWAYS,	/* --progress */
	PROGRESS_NEVER,		/* --quiet */
};

struct progress;

/* prefix starts every line, e.g. "ksmsim run". Copied. */
struct progress *progress_new(const char *prefix, enum progress_mode mode);
bool progress_shown(const struct progress *p);
/* A new stage ("checking the trace", "records"): counters and clock restart. */
void progress_phase(struct progress *p, const char *phase, const char *unit);
void progress_update(struct progress *p, uint64_t done, uint64_t pos, uint64_t size);
/* "what was done": the last line formatted (for messages), never NULL. */
const char *progress_line(const struct progress *p);
void progress_finish(struct progress *p);
void progress_free(struct progress *p);

/* Exposed for tests: the line for these figures (elapsed in microseconds). */
void progress_format(char *buf, size_t cap, const char *phase, const char *unit, uint64_t done,
		     uint64_t pos, uint64_t size, int64_t elapsed_us);

#endif
