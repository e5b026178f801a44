/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Subcommands of ksmsim. Each takes the arguments after its name (argv[0] is
 * the subcommand's own name) and returns the process exit status
 * (util/exit_status.h): 0 success, 1 a negative answer (e.g. diff found
 * differences), 2 bad usage or bad input, 130/143 interrupted.
 */
#ifndef KSMSIM_CLI_CLI_H
#define KSMSIM_CLI_CLI_H

#include <getopt.h>
#include <glib.h>
#include "sim/ksm.h"
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
int cmd_advise(int argc, char **argv);
int cmd_policies(int argc, char **argv);

/*
 * The knob options of run and advise (knob_options.c): getopt vals from
 * CLI_OPT_KNOB + enum ksm_knob. knob_options_add appends both spellings
 * (--pages-to-scan, --pages_to_scan) to longopts, the names it allocates
 * to names (free them after parsing). knob_option_take pins the knob that
 * option c names in opt: 1 done, 0 c is no knob option, -1 a bad value
 * (one line on stderr, "PROG: --NAME wants MIN..MAX, not 'ARG'").
 */
#define CLI_OPT_KNOB 512
/* Their lines in a --help text. */
#define CLI_KNOB_OPTIONS_HELP \
	"  --pages-to-scan N  --sleep-millisecs N  --max-page-sharing N\n" \
	"  --use-zero-pages 0|1  --merge-across-nodes 0|1  --smart-scan 0|1\n" \
	"  --stable-node-chains-prune-millisecs N  --advisor-max-cpu N\n" \
	"  --advisor-min-pages-to-scan N  --advisor-max-pages-to-scan N\n" \
	"  --advisor-target-scan-time N\n"
void knob_options_add(GArray *longopts, GPtrArray *names);
int knob_option_take(const char *prog, int c, const char *arg, struct ksm_options *opt);

#endif
