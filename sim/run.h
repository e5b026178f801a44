/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One run: a trace replayed through the model as `ksmsim run` replays it,
 * the single place that picks the checksum a policy is charged as, loads
 * the cost table, checks the trace and its memory need, and turns what
 * went wrong into an exit status. Every command, study, benchmark and fuzz
 * target that replays a trace goes through here:
 *
 *	struct run_config cfg = { .trace = path, .ideal = true, ... };
 *	struct run run;
 *	if (!run_config_resolve(&cfg, &error) || !run_open(&run, &cfg, &error))
 *		...
 *	ok = run_replay(&run, &sinks, &res, &error);	// the sinks see run.k
 *	...						// run.k, run.reader: the end state
 *	run_close(&run);
 *	status = ok ? 0 : run_error_status(error);
 */
#ifndef KSMSIM_SIM_RUN_H
#define KSMSIM_SIM_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "hashes/hash.h"
#include "sim/ksm.h"
#include "sim/loop.h"
#include "traces/reader.h"

struct progress;

/* Why a run failed; run_error_status() maps the code to the exit status. */
#define RUN_ERROR (run_error_quark())
GQuark run_error_quark(void);
enum run_error_code {
	RUN_ERROR_INVARIANT = 1,	/* --check found the model inconsistent: its bug, exit 1 */
	RUN_ERROR_INPUT,		/* the trace, the cost table, a sink's own failure */
	RUN_ERROR_MEMORY,		/* the model would need more than the memory limit */
};
/* 1 for an invariant, EXIT_USAGE (2) for everything else (NULL included). */
int run_error_status(const GError *error);

struct run_config {
	const char *trace;		/* the path; "-" standard input */
	const struct page_hash *hash;	/* --hash; NULL: the policy's own (xxhash, the kernel's) */
	/*
	 * The policy, check, batch time and pinned knobs as given; resolving
	 * fills hash and costs, opening fills thp_columns.
	 */
	struct ksm_options model;
	const char *costs_csv;		/* NULL: the figures built in */
	bool ideal;			/* the oracle's walk (not --no-ideal) */
	uint64_t interval_ms;		/* the samples' period */
	uint64_t ideal_interval_ms;	/* the oracle's among the samples */
	uint64_t max_memory;		/* refuse a trace whose model needs more; 0: no limit */
	bool max_memory_given;		/* ... and it is --max-memory's, not MemAvailable */
	/* blobs past a quarter of max_memory go to $TMPDIR, this many bytes at most
	 * (0: while its file system keeps 1 GiB free) */
	uint64_t max_disk;
	/* run_config_resolve */
	const char *hash_name;		/* what outputs call the checksum: "none" without a gate */
};

/*
 * The checksum a run of policy p is charged as: the given one for a policy
 * that reads the checksum (given NULL: xxhash); for one that reads none,
 * xxhash for partial-hash (it hashes its sampled words as xxhash hashes a
 * page) and "none" for the others. False with the refusal when a hash is
 * given to a policy that reads none, or the cost table cannot be read.
 */
bool run_config_resolve(struct run_config *cfg, GError **error);

/* What a check of the whole trace found. */
struct run_estimate {
	uint64_t need;		/* the model's peak memory, bytes (ksm_memory_estimate) */
	uint64_t end_us;	/* the last record's time */
	uint64_t records;
	uint64_t digests;	/* records with digest content: no false positives to study */
};

/*
 * Read the whole trace once, before anything runs, so that a bad record
 * ("FILE:LINE: problem", RUN_ERROR_INPUT) or a model too big for
 * cfg->max_memory (RUN_ERROR_MEMORY, at the record where it grows past it)
 * stops everything first. p (or NULL) shows the progress.
 */
bool run_estimate(const struct run_config *cfg, struct progress *p, struct run_estimate *est,
		  GError **error);

/*
 * What the model may hold at the reader's position, in bytes: the estimate
 * for the pages written and the mms alive so far (a THP's 512 pages at its
 * first store), and 8 KiB a blob read. The limit is held against it.
 */
uint64_t run_memory_need(const struct run_config *cfg, const trace_reader *r);

/*
 * The memory limit (memory_limit.c), a limit sink of the loop with its own
 * state: the most the model needed at any record it saw.
 */
struct memory_limit {
	const struct run_config *cfg;	/* its max_memory: 0, no limit */
	uint64_t peak;			/* bytes, run_memory_need's largest */
};
/*
 * The need at rec (the reader just read it) into ml->peak, and against the
 * limit: false with the refusal (RUN_ERROR_MEMORY, "FILE:LINE: ...").
 */
bool memory_limit_fits(struct memory_limit *ml, const trace_reader *r,
		       const struct trace_record *rec, GError **error);
/* loop_sinks.limit whose limit_ctx is a struct memory_limit. */
bool memory_limit_sink(void *ml, const trace_reader *r, const struct trace_record *rec,
		       GError **error);
/* Blobs past a quarter of the limit go to disk (--max-disk): no limit, no change. */
void memory_limit_blobs(const struct run_config *cfg, trace_reader *r);

/* An open replay: the reader and the model, for the sinks and for after the end. */
struct run {
	const struct run_config *cfg;
	struct ksm_options opt;		/* cfg->model with the trace's THP columns */
	trace_reader *reader;
	struct ksm *k;
	/* the model's pages' contents, current from run_open to run_close */
	struct content_store *store, *store_was;
};

/* Open the trace and build the model; false with RUN_ERROR_INPUT. */
bool run_open(struct run *run, const struct run_config *cfg, GError **error);
/*
 * Replay the whole trace into the sinks (their check is cfg's), holding the
 * model to cfg->max_memory as it grows when there is a limit. False with
 * the error in RUN_ERROR, its message the loop's, the reader's or the
 * sink's ("FILE:LINE: problem").
 */
bool run_replay(struct run *run, const struct loop_sinks *sinks, struct loop_result *res,
		GError **error);
void run_close(struct run *run);

#endif
