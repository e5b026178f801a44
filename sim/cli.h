/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Subcommands of ksmsim. Each takes the arguments after its name (argv[0] is
 * the subcommand's own name) and returns the process exit status:
 * 0 success, 1 a negative answer (e.g. diff found differences),
 * 2 bad usage or bad input, 130/143 interrupted.
 */
#ifndef KSMSIM_CLI_H
#define KSMSIM_CLI_H

int cmd_run(int argc, char **argv);	/* sim/cmd_run.c */
int cmd_trace(int argc, char **argv);	/* sim/cmd_trace.c: convert, cat, stat */
int cmd_hashes(int argc, char **argv);	/* sim/cmd_hashes.c */
int cmd_bench(int argc, char **argv);	/* sim/cmd_bench.c: dispatches below */
int bench_trace(int argc, char **argv);	/* sim/bench_trace.c */
int bench_costs(int argc, char **argv);	/* sim/bench_costs.c */
int bench_model(int argc, char **argv);	/* sim/bench_model.c */
int cmd_live(int argc, char **argv);	/* live/cmd_live.c */
int cmd_diff(int argc, char **argv);	/* live/diff.c */
int cmd_gen(int argc, char **argv);	/* workloads/cmd_gen.c */
int cmd_record(int argc, char **argv);	/* workloads/record/cmd_record.c */
int cmd_collide(int argc, char **argv);	/* sim/cmd_collide.c */

#define EXIT_USAGE 2

#endif
