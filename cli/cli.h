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
int cmd_merge_exec(int argc, char **argv);
int cmd_verify(int argc, char **argv);

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
 * The options of a command that runs many configurations over a worker pool
 * (pool_options.c: advise, tune). pool_options_parse gives getopt the
 * command's own options (vals below CLI_OPT_POOL; each offered first to
 * take: 1 taken, 0 not its own, -1 refused after one line on stderr), then
 * -j/--jobs, -o/--csv, --plot, -h/--help (usage(stdout)) and the run options
 * of p->ro.cmd; then the one TRACE, which must be a regular file (every
 * worker opens it again). It returns -1 to go on, else the exit status.
 * pool_options_files: TRACE, --costs-csv, --csv and --plot name distinct
 * files. pool_report: the one error line, and the exit status (the code of
 * an error in domain, else run_error_status). The help lines of --jobs and
 * of the exit status are the same for every such command.
 */
#define CLI_OPT_POOL 448
struct pool_options {
	struct run_options ro;		/* the run options, and in ro.cfg the run; ro.prog */
	const char *csv_path, *png;	/* -o, --plot */
	uint64_t jobs;			/* --jobs; 0: the CPUs online */
};
typedef int pool_take_fn(void *ctx, int c, const char *arg, const struct option *longopts);
void pool_options_init(struct pool_options *p, const char *prog, enum run_options_of cmd);
int pool_options_parse(struct pool_options *p, int argc, char **argv, const struct option *own,
		       size_t n_own, pool_take_fn *take, void *ctx, void (*usage)(FILE *));
bool pool_options_files(const struct pool_options *p, GError **error);
int pool_report(const char *prog, GQuark domain, GError *error);
void pool_options_help_jobs(FILE *f);
void pool_options_help_exit(FILE *f);
void pool_options_free(struct pool_options *p);

/*
 * The runs of such a command and its outputs (pool_run): -o and --plot
 * opened (atomic: written whole or not at all); the whole trace read once
 * (a bad record stops everything before any run) and as many runs at once
 * as the memory holds (the limit, --max-memory or the memory available, on
 * all runs together; said on stderr when fewer than asked); run; then csv
 * and plot onto the outputs, put in place (the plot after the CSV) only
 * when both are written; then report on stdout, flushed (an error in
 * domain, code 2, when it fails), and the timing line on stderr. false
 * with the first error: nothing then written.
 */
struct pool_command {
	GQuark domain;			/* of the command's errors: their code the exit status */
	const char *plot_what;		/* the plot's title, after "PROG TRACE: " */
	/* every run, jobs at once, each held to no limit of its own; the rows kept in ctx */
	bool (*run)(void *ctx, const struct run_config *run, unsigned jobs, bool verbose,
		    GError **error);
	void (*csv)(void *ctx, FILE *f);
	bool (*plot)(void *ctx, FILE *png, const char *title, GError **error);
	/* digests: the trace's records with digest content (version 4) */
	void (*report)(void *ctx, FILE *f, uint64_t digests);
};
bool pool_run(struct pool_options *p, size_t n, const struct pool_command *c, void *ctx,
	      GError **error);

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
