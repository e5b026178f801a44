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
#include "util/options.h"

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
 * Messages: the one voice (report.c). Every line a command writes on
 * standard error goes through these; nothing in cli/ calls fprintf(stderr)
 * or fputs(..., stderr) itself (tests/hardening/one_voice.sh fails if it
 * does). Each writes exactly ONE line, "PROG: MESSAGE", in one write: the
 * formatted message is escaped as a whole (util/escape.h escape_term:
 * newlines, ESC, CR, BEL, every control byte, C1 controls and invalid
 * UTF-8 as \n or \xNN), so pass user text (option values, file names,
 * GError messages) as they are, unescaped, through "%s". Never put "\n"
 * in FMT, nor "PROG: " (prog is the prefix, e.g. "ksmsim run").
 *
 *   return cli_error(prog, "%s: not a trace", path);          exit 2
 *   return cli_usage_error(prog, "--jobs", "1 to 64", arg);   exit 2:
 *          "PROG: --jobs wants 1 to 64, not 'ARG'", the ONE wording of a
 *          bad option value
 *   cli_notice(prog, "%u runs at once", n);    a notice, not an error
 *   cli_warning(prog, "...");                  "PROG: warning: ..."
 *   return cli_gerror(prog, error);            error->message; frees error
 *   return cli_option_error(prog, argv, longopts, c);
 *          after getopt_long returned '?' or ':' (set opterr = 0 and start
 *          the optstring with ':', so getopt prints nothing of its own)
 *   return cli_extra_arg(prog, argv[optind]);
 *          "PROG: unexpected argument 'X' (see 'PROG --help')", no usage
 *   if (optarg && !cli_once(&once, prog, option_name(longopts, c), c))
 *           return EXIT_USAGE;
 *          a single-valued option given twice is refused (one line, "PROG:
 *          --NAME given twice ..."), not silently the last; c is the
 *          option's val (short and long forms must share it); leave out
 *          the options that may repeat. run_option_take does it for the
 *          run options (--domain repeats).
 *
 * cli_error, cli_usage_error, cli_gerror, cli_option_error and
 * cli_extra_arg return EXIT_USAGE, for "return cli_...": a caller wanting
 * another status ignores it. Libraries below cli/ use util/escape.h's
 * reportf(prefix, fmt, ...), the same funnel.
 */
int cli_error(const char *prog, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
int cli_usage_error(const char *prog, const char *option, const char *wants, const char *value);
void cli_notice(const char *prog, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void cli_warning(const char *prog, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
int cli_gerror(const char *prog, GError *error);
int cli_option_error(const char *prog, char **argv, const struct option *longopts, int c);
int cli_extra_arg(const char *prog, const char *arg);
#define CLI_ONCE_MAX 1024	/* option vals below it: letters, CLI_OPT_* */
struct cli_once {
	unsigned char seen[CLI_ONCE_MAX / 8];
};
bool cli_once(struct cli_once *once, const char *prog, const char *name, int c);

/*
 * Option tables (opt_table.c), as redis's static_configs[]: one row per
 * option with its type, bounds, target (offsetof into the command's own
 * struct) and help, so getopt's entries, parsing, the one wording of a bad
 * value ("PROG: --NAME wants WANTS, not 'V'") and the --help lines are
 * loops. A CLI_KNOB row takes its bounds from traces' knob_table. A row
 * whose val is a letter has that short form too. A CLI_OWN row is parsed
 * by the command (cli_opts_take returns 0 for it, after the once check).
 * show_default: --help appends " (default X)", X read from the struct as
 * the command initialised it, so the help cannot restate a stale default.
 *
 *   cli_opts_longopts(rows, n, longopts);   getopt's entries appended
 *   cli_opts_optstring(rows, n, s);         "o:v" of the letters appended
 *   took = cli_opts_take(prog, rows, n, &once, c, optarg, &args);
 *          1 taken, 0 not a row's (or CLI_OWN), -1 refused after one line
 *   cli_opts_help(stdout, rows, n, &defaults, 27);
 *   status = cli_opts_parse(prog, rows, n, argc, argv, &once, &args);
 *          the whole getopt loop for a table without CLI_OWN rows: -1 to go
 *          on (the operands from optind), else EXIT_USAGE after one line
 *          (cli_parse below: the same loop with CLI_OWN rows, run options
 *          and a stops row)
 */
enum cli_opt_kind {
	CLI_FLAG,	/* bool set to true; no value */
	CLI_STR,	/* const char *: the value as given */
	CLI_U64,	/* uint64_t in min..max */
	CLI_UINT,	/* unsigned in min..max */
	CLI_INT,	/* int in min..max (max at most INT_MAX) */
	CLI_DOUBLE,	/* double: dmin < x (dmin_open) or dmin <= x, and x <= dmax */
	CLI_KNOB,	/* uint64_t within knob_table[knob].min..max */
	CLI_SIZE,	/* uint64_t, a size in bytes (util/size.h: K, M, G, T), not 0 */
	CLI_OWN,	/* the command parses it itself */
};
struct cli_opt {
	const char *name;	/* the long name, without "--" */
	int val;		/* getopt's val: a letter gives the short form too */
	enum cli_opt_kind kind;
	const char *arg;	/* the value's name in --help; NULL for a flag */
	size_t offset;		/* of the target in the struct cli_opts_take is given */
	uint64_t min, max;	/* CLI_U64, CLI_UINT, CLI_INT */
	double dmin, dmax;	/* CLI_DOUBLE */
	bool dmin_open;		/* CLI_DOUBLE: more than dmin, not from it */
	int knob;		/* CLI_KNOB: enum ksm_knob */
	const char *wants;	/* a bad value's "wants ..."; NULL: from the bounds */
	bool repeats;		/* may be given again (else refused the second time) */
	bool show_default;
	bool stops;		/* CLI_FLAG: ends the parsing when given (--help) */
	/* what the bounds cannot say (e.g. page aligned): false refuses with wants */
	bool (*valid)(const void *target);
	const char *help;	/* lines split at '\n'; NULL: not shown */
};
void cli_opts_longopts(const struct cli_opt *t, size_t n, GArray *longopts);
void cli_opts_optstring(const struct cli_opt *t, size_t n, GString *s);
int cli_opts_take(const char *prog, const struct cli_opt *t, size_t n, struct cli_once *once,
		  int c, const char *arg, void *base);
void cli_opts_help(FILE *f, const struct cli_opt *t, size_t n, const void *base, int width);
/* One help row: HEAD ("  --name ARG") padded to WIDTH, then HELP (lines indented). */
void cli_help_put(FILE *f, const char *head, const char *help, int width);
int cli_opts_parse(const char *prog, const struct cli_opt *t, size_t n, int argc, char **argv,
		   struct cli_once *once, void *base);
const char *cli_opt_name(const struct cli_opt *r);	/* "--NAME", a static buffer */

/*
 * The one getopt loop, for a table and what may go beside it: CLI_OWN rows
 * handed to own; the run options of ro (run_option_take, after the rows);
 * other getopt entries (more) handed to take_more, for a caller with options
 * of its own not yet in a table. cli_parse returns -1 to go on (the
 * operands from optind), 0 when a stops row was given (e.g. --help: the
 * caller prints it), else EXIT_USAGE (or check's status) after one line.
 * in_order: the options end at the first operand (getopt's '+').
 */
struct run_options;
struct cli_parser {
	const char *prog;
	const struct cli_opt *rows;
	size_t n;
	void *base;			/* the rows' targets (offset) and own's */
	struct cli_once *once;		/* the rows given so far */
	/* a CLI_OWN row's value: 1 taken, -1 refused after one line */
	int (*own)(void *base, int c, const char *arg);
	struct run_options *ro;		/* NULL, or its run options too */
	const struct option *more;	/* n_more entries, vals apart from the rows' */
	size_t n_more;
	/* option c of more: 1 taken, 0 not its own, -1 refused after one line */
	int (*take_more)(void *ctx, int c, const char *arg, const struct option *longopts);
	void *more_ctx;
	/* after an option was taken (row or run option): -1 go on, else the
	 * exit status, one line printed (checks of one value against another) */
	int (*check)(void *base, int c, const char *arg);
	bool in_order;
};
int cli_parse(const struct cli_parser *p, int argc, char **argv);

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
	struct cli_once once;		/* the run options given so far */
};
void run_options_init(struct run_options *o, const char *prog, enum run_options_of cmd);
void run_options_add(struct run_options *o, GArray *longopts);
int run_option_take(struct run_options *o, int c, const char *arg);
void run_options_help(FILE *f, enum run_options_of cmd, int width);
void run_options_free(struct run_options *o);

/*
 * The options of a command that runs many configurations over a worker pool
 * (pool_options.c: advise, tune). pool_options_parse is cli_parse over
 * the pool's table (-j/--jobs, -o/--csv, --plot, -h/--help: usage(stdout),
 * which ends the parsing), the command's own getopt entries (vals below
 * CLI_OPT_POOL, each given once unless in repeats, then handed to take: 1
 * taken, 0 not its own, -1 refused after one line on stderr) and the run
 * options of p->ro.cmd; then the one TRACE, which must be a regular file
 * (every worker opens it again). It returns -1 to go on, else the exit
 * status.
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
	bool help;			/* -h, --help: usage(stdout) */
	const int *repeats;		/* the own options' vals that may repeat, 0-ended */
	struct cli_once once;		/* the options given (a second value refused) */
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
