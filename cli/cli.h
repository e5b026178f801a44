/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Subcommands of ksmsim. Each takes the arguments after its name (argv[0] is
 * the subcommand's own name) and returns the process exit status
 * (util/exit_status.h): 0 success, 1 a negative answer (e.g. diff found
 * differences), 2 bad usage or bad input, 130/143 interrupted.
 */
#ifndef KSMSIM_CLI_CLI_H
#define KSMSIM_CLI_CLI_H

#include "util/exit_status.h"

int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);	/* convert, cat, stat, merge */
int cmd_hashes(int argc, char **argv);
int cmd_bench(int argc, char **argv);	/* dispatches to bench/ */
int cmd_live(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_collide(int argc, char **argv);

#endif
