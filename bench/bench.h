/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The benchmarks behind `ksmsim bench`: each takes the arguments after its
 * name (argv[0] is the benchmark's name), prints its figures and returns
 * an exit status (util/exit_status.h).
 */
#ifndef KSMSIM_BENCH_BENCH_H
#define KSMSIM_BENCH_BENCH_H

int bench_trace(int argc, char **argv);	/* records/s parsing text and binary traces */
int bench_costs(int argc, char **argv);	/* per-page cost of each checksum, memcmp, copy */
int bench_model(int argc, char **argv);	/* model visits/s, peak RSS, bytes per page */

#endif
