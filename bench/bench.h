/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The benchmarks behind `ksmsim bench` (cli/cmd_bench.c parses their
 * options): each prints its figures and returns an exit status
 * (util/exit_status.h).
 */
#ifndef KSMSIM_BENCH_BENCH_H
#define KSMSIM_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

/* records/s parsing text and binary traces */
#define BENCH_TRACE_MMS 8
#define BENCH_TRACE_PAGES (1u << 20)	/* per mm */
struct bench_trace_opts {
	uint64_t records;	/* to generate, about */
	uint64_t repeat;	/* timed reads of each form, the best reported */
};
int bench_trace(const struct bench_trace_opts *o);

/* per-page cost of each checksum, memcmp, copy */
struct bench_costs_opts {
	const char *csv;	/* also the table as CSV there; NULL: none */
	int reps;		/* repetitions per figure, the median reported */
	uint64_t cold_mib;	/* the cold buffer */
};
int bench_costs(const struct bench_costs_opts *o);

/* model visits/s, peak RSS, bytes per page */
#define BENCH_MODEL_MAX_MIB (UINT64_C(1) << 20)	/* either size: up to 1 TiB of pages */
struct bench_model_opts {
	double live_rate;	/* the live ksmd's pages/s, for the ratio */
	bool measure_live;	/* measure it first (ksmsim live, as root) */
	uint64_t mib;		/* job 1's distinct pages */
	uint64_t vm_mib;	/* job 2's guests */
	uint64_t host_gib;	/* job 3's host; 0: none */
	bool skip_big;		/* no jobs 2 and 3 */
};
int bench_model(const struct bench_model_opts *o);

/*
 * The cost table fitted to the live ksmd (root, live KSM): designed
 * scenarios replayed live repeat times each (median) and through the
 * model, fitted by weighted non-negative least squares; the table to out
 * (NULL: printed only). 77 where live KSM cannot be used.
 */
struct bench_calibrate_opts {
	const char *out;
	int repeat;		/* 1 .. 64 */
	double scale;		/* the scenarios' pages (1: as designed) */
	/*
	 * A costs CSV whose modelled CPU stands for the live ksmd's: no live
	 * kernel needed, and the fit must give that table back (the fit's test).
	 */
	const char *synthetic;
	double wait_s;		/* in all, while another process uses KSM (then 1) */
	const char *traces;	/* keep the scenario traces here (a new or empty directory) */
};
int bench_calibrate(const struct bench_calibrate_opts *o);
/* This CPU's model name (/proc/cpuinfo), "unknown CPU" when none. */
const char *bench_cpu_model(void);

#endif
