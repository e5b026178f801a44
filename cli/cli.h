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
#include <stdio.h>
#include "sim/ksm.h"
#include "sim/run.h"
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
int cmd_tune(int argc, char **argv);
int cmd_policies(int argc, char **argv);

/*
 * The run options (run_options.c): what shapes a replay, from one table,
 * for the commands that replay a trace; each takes the rows marked for it.
 * run_options_init sets the defaults in o->cfg; run_options_add appends the
 * getopt entries (vals from CLI_OPT_RUN, the knobs' from CLI_OPT_KNOB +
 * enum ksm_knob, both spellings: --pages-to-scan, --pages_to_scan);
 * run_option_take applies option c: 1 done, 0 c is no run option, -1 a bad
 * value (one line on stderr, "PROG: --NAME wants WHAT, not 'ARG'");
 * run_options_help prints the rows' --help lines, options padded to width.
 */
#define CLI_OPT_RUN 512
#define CLI_OPT_KNOB 768
enum run_options_of {
	RUN_OPTIONS_RUN = 1,
	RUN_OPTIONS_ADVISE = 2,
	RUN_OPTIONS_COLLIDE_KSM = 4,
	RUN_OPTIONS_TUNE = 8,
};
struct run_options {
	const char *prog;		/* "ksmsim run": errors begin with it */
	enum run_options_of cmd;
	struct run_config cfg;		/* what the options set */
	bool quiet;			/* --quiet */
	bool interval_given;		/* --interval-ms */
	GPtrArray *names;		/* the knob options' names, until run_options_free */
	struct ksm_domains *domains;	/* --domain, until run_options_free; cfg.model points here */
};
void run_options_init(struct run_options *o, const char *prog, enum run_options_of cmd);
void run_options_add(struct run_options *o, GArray *longopts);
int run_option_take(struct run_options *o, int c, const char *arg);
void run_options_help(FILE *f, enum run_options_of cmd, int width);
void run_options_free(struct run_options *o);

/*
 * --hash NAME as every command takes it: the row, or NULL after one line
 * "PROG: OPTION: unknown checksum ..." (hashes/hash.h, hash_resolve).
 */
const struct page_hash *cli_hash_arg(const char *prog, const char *option, const char *name,
				     bool allow_none);
/*
 * A comma list of checksums (none refused, each at most once): appended to
 * out (of const struct page_hash *), or false after one line naming option.
 */
bool cli_hash_list(const char *prog, const char *option, const char *list, GPtrArray *out);

#endif
