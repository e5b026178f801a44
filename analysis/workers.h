/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs in fork()ed worker processes, a few at a time, each reporting a
 * fixed-size row through a pipe: what `ksmsim advise` and `ksmsim tune`
 * run their replays in. A run's content store is current process-wide
 * (content/content.h), so threads could not share it, and a fresh process
 * per run keeps every row
 * independent of the others and of the number of workers. Rows land at
 * their job's index, so no output depends on which worker finished first.
 */
#ifndef KSMSIM_ANALYSIS_WORKERS_H
#define KSMSIM_ANALYSIS_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

#define WORKERS_MAX_JOBS 256
/* A row and the worker's status fit one pipe write (PIPE_BUF, 4096 on Linux). */
#define WORKERS_ROW_MAX 2048

/* Why a job failed; the code is the command's exit status. */
enum workers_status {
	WORKERS_OK = 0,
	WORKERS_INVARIANT = 1,	/* --check found the model inconsistent */
	WORKERS_INPUT = 2,	/* the trace, or a worker that could not run */
};

struct workers_spec {
	size_t n;		/* jobs 0 .. n-1 */
	size_t row_size;	/* bytes each job reports, at most WORKERS_ROW_MAX */
	unsigned jobs;		/* workers at once, 1 .. WORKERS_MAX_JOBS */
	/*
	 * Job i, in the worker: fills row (row_size bytes, zeroed) and returns
	 * WORKERS_OK, or a failure status with one line in why.
	 */
	int (*run)(const void *ctx, size_t i, void *row, char *why, size_t why_size);
	/* What messages call job i (g_free). */
	char *(*name)(const void *ctx, size_t i);
	const void *ctx;
	const char *prog;	/* "ksmsim advise": the verbose lines begin with it */
	bool verbose;		/* a line per finished job on stderr, with its wall time */
	GQuark domain;		/* of the error: its code a workers_status */
};

/*
 * Run every job, s->jobs at a time; rows is n rows of row_size, row i job
 * i's. False with the first failing job's error ("NAME: why"; the lowest
 * index among those that failed before the others were stopped), the
 * workers still running then stopped (SIGTERM).
 */
bool workers_run(const struct workers_spec *s, void *rows, GError **error);

#endif
