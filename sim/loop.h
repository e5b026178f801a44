/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The discrete-event loop: trace records and ksmd batches in time order.
 * Records stamped at the instant of a batch are applied before it; ties
 * between records keep file order. A settle stops the trace clock while
 * ksmd runs, and shifts every later record by the time that took.
 */
#ifndef KSMSIM_SIM_LOOP_H
#define KSMSIM_SIM_LOOP_H

#include "sim/ksm.h"
#include "traces/reader.h"

/* Why loop_run failed: the code picks the command's exit status. */
#define LOOP_ERROR (loop_error_quark())
GQuark loop_error_quark(void);
enum loop_error_code {
	LOOP_ERROR_INVARIANT = 1,	/* --check found the model inconsistent: a bug */
	LOOP_ERROR_TRACE = 2,		/* a record the model refused, or a settle that cannot end */
};

struct loop_sinks {
	/* A mark record: t_us is its timestamp as written in the trace. */
	bool (*mark)(void *ctx, const char *label, uint64_t t_us, struct ksm *k, GError **error);
	/*
	 * A time-series sample at simulated time sim_us: at 0, sample_every_us,
	 * 2 * sample_every_us ... up to the end of the run, and at the end
	 * (loop_result.sim_end_us) when that is not one of them. A sample sees
	 * every record and batch stamped up to its time.
	 */
	bool (*sample)(void *ctx, uint64_t sim_us, uint64_t trace_us, struct ksm *k,
		       GError **error);
	uint64_t sample_every_us;	/* 0: no samples */
	/*
	 * At most LOOP_MAX_SAMPLES samples a run (2^20: 12 simulated days at
	 * 1 s); the next fails the run (LOOP_ERROR_TRACE) so that a knob that
	 * stretches simulated time without end cannot run for ever.
	 */
#define LOOP_MAX_SAMPLES (1 << 20)
	bool check;			/* ksm_check() after every batch */
	/* Now and then: records applied so far, the last one's trace time. */
	void (*progress)(void *ctx, const trace_reader *r, uint64_t records, uint64_t trace_us);
	/* Before each record is applied: false (with error) stops the run there. */
	bool (*admit)(void *ctx, trace_reader *r, const struct trace_record *rec, GError **error);
	void *ctx;
	/*
	 * The run's own limit (sim/run.c: the memory limit), asked before
	 * admit, with a context of its own so that the caller's sinks need no
	 * wrapping: NULL, none.
	 */
	bool (*limit)(void *limit_ctx, const trace_reader *r, const struct trace_record *rec,
		      GError **error);
	void *limit_ctx;
};

struct loop_result {
	uint64_t records;
	uint64_t batches;
	uint64_t sim_end_us;		/* simulated time at the end */
	uint64_t trace_end_us;		/* last record's timestamp */
};

/*
 * false with error "FILE:LINE: problem" (LOOP_ERROR_TRACE), the check's
 * message (LOOP_ERROR_INVARIANT), or the reader's or a sink's own error.
 */
bool loop_run(struct ksm *k, trace_reader *r, const struct loop_sinks *s,
	      struct loop_result *res, GError **error);

#endif
