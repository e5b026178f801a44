// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The options of a command that runs many configurations over a worker
 * pool (cli.h): `advise` and `tune`. What they share: -j/--jobs, -o/--csv,
 * --plot, -h/--help and the run options beside the command's own; the one
 * TRACE, a regular file (every worker opens it again); the files distinct;
 * the whole trace read once and as many runs at once as the memory holds;
 * the outputs written whole, once every run succeeded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "analysis/workers.h"
#include "cli/cli.h"
#include "util/atomic_file.h"
#include "util/file_id.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/size.h"

enum { OPT_PLOT = CLI_OPT_POOL };

#define POOL(f) offsetof(struct pool_options, f)
/*
 * The options every pool command takes: -j 2 --jobs 3 is one option given
 * twice (one val). -o and --plot are helped by each command (what its CSV
 * and plot hold), so they have no help here.
 */
static const struct cli_opt pool_rows[] = {
	{ "jobs", 'j', CLI_U64, "N", POOL(jobs), .min = 1, .max = WORKERS_MAX_JOBS,
	  .wants = "1 to " G_STRINGIFY(WORKERS_MAX_JOBS) " worker processes",
	  .help = "runs at once, each in a process of its own (default:\n"
		  "the CPUs online; fewer when N times the model's\n"
		  "memory estimate would pass the --max-memory limit).\n"
		  "The output does not depend on it" },
	{ "csv", 'o', CLI_STR, "FILE", POOL(csv_path), .help = NULL },
	{ "plot", OPT_PLOT, CLI_STR, "PNG", POOL(png), .help = NULL },
	{ "help", 'h', CLI_FLAG, NULL, POOL(help), .stops = true },
};

void pool_options_init(struct pool_options *p, const char *prog, enum run_options_of cmd)
{
	*p = (struct pool_options){ 0 };
	run_options_init(&p->ro, prog, cmd);
}

void pool_options_free(struct pool_options *p)
{
	run_options_free(&p->ro);
}

/* The command's own options, not yet in a table. */
struct own_options {
	struct pool_options *p;
	pool_take_fn *take;
	void *ctx;
};

/* A command's own option: one value each, but those it lets repeat; then its take. */
static int take_own(void *ctx, int c, const char *arg, const struct option *lo)
{
	struct own_options *own = ctx;
	struct pool_options *p = own->p;
	bool repeats = c >= CLI_OPT_RUN;	/* not its own: run_option_take checks those */

	for (const int *r = p->repeats; r && *r; r++)
		repeats |= *r == c;
	if (arg && !repeats && !cli_once(&p->once, p->ro.prog, option_name(lo, c), c))
		return -1;
	return own->take(own->ctx, c, arg, lo);
}

/* The one TRACE after the options: -1, or the exit status after one line on stderr. */
static int take_trace(struct pool_options *p, int argc, char **argv)
{
	const char *prog = p->ro.prog;

	if (optind == argc) {
		return cli_error(prog, "a TRACE is required (see --help)");
	}
	if (argc - optind > 1)
		return cli_extra_arg(prog, argv[optind + 1]);
	p->ro.cfg.trace = argv[optind];
	/*
	 * Every worker opens the trace again: a pipe or FIFO would be drained
	 * by the check and leave the workers blocked in open() for ever.
	 */
	struct stat st;
	if (!strcmp(p->ro.cfg.trace, "-") ||
	    (stat(p->ro.cfg.trace, &st) == 0 && !S_ISREG(st.st_mode)))
		return cli_error(prog, "%s: TRACE is read once per run: a regular file, not a pipe,"
				 " FIFO or device", p->ro.cfg.trace);
	return -1;
}

int pool_options_parse(struct pool_options *p, int argc, char **argv, const struct option *own,
		       size_t n_own, pool_take_fn *take, void *ctx, void (*usage)(FILE *))
{
	struct own_options o = { p, take, ctx };
	const struct cli_parser cp = {
		.prog = p->ro.prog, .rows = pool_rows, .n = G_N_ELEMENTS(pool_rows), .base = p,
		.once = &p->once, .ro = &p->ro, .more = own, .n_more = n_own, .take_more = take_own,
		.more_ctx = &o,
	};
	int status = cli_parse(&cp, argc, argv);

	if (p->help) {
		usage(stdout);
		return 0;
	}
	return status >= 0 ? status : take_trace(p, argc, argv);
}

bool pool_options_files(const struct pool_options *p, GError **error)
{
	const struct file_use uses[] = {
		{ "TRACE", p->ro.cfg.trace, false }, { "--costs-csv", p->ro.cfg.costs_csv, false },
		{ "--csv", p->csv_path, true }, { "--plot", p->png, true },
	};

	return file_uses_distinct(uses, G_N_ELEMENTS(uses), error);
}

int pool_report(const char *prog, GQuark domain, GError *error)
{
	int status = error && error->domain == domain ? error->code : run_error_status(error);

	cli_gerror(prog, error);
	return status;
}

void pool_options_help_jobs(FILE *f)
{
	cli_opts_help(f, pool_rows, 1, NULL, 22);
}

void pool_options_help_exit(FILE *f)
{
	fputs("Exit status: 0 done, 1 an invariant failed (--check), 2 bad usage, bad\n"
	      "input (one line naming the option, or 'FILE:LINE: problem'), a trace too\n"
	      "big for the memory, or a failed plot; 128 + signal when interrupted (130\n"
	      "SIGINT, 143 SIGTERM, 129 SIGHUP, 141 SIGPIPE). Outputs are written whole\n"
	      "or not at all, only once every run succeeded.\n", f);
}

/* The outputs of one command line, and the runs at once. */
struct pool_outputs {
	atomic_file *csv, *plot;
	unsigned jobs;
	uint64_t digests;		/* records with digest content (trace version 4) */
};

/*
 * The whole trace read once, so that a bad record stops everything before
 * any run, and as many runs at once as the memory holds: false with the
 * refusal.
 */
static bool plan_jobs(struct pool_options *p, size_t n, struct pool_outputs *out, GError **error)
{
	struct run_config check = p->ro.cfg;
	struct run_estimate est;

	/* a limit on all runs at once: one run may take it whole */
	if (!check.max_memory_given)
		check.max_memory = mem_available();
	if (!run_estimate(&check, NULL, &est, error))
		return false;
	out->digests = est.digests;
	uint64_t limit = check.max_memory, want = p->jobs;
	if (!want) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		want = online < 1 ? 1 : MIN((uint64_t)online, WORKERS_MAX_JOBS);
	}
	want = MIN(want, (uint64_t)(n ? n : 1));
	if (limit && est.need && want > limit / est.need) {
		if (!p->ro.quiet)
			cli_notice(p->ro.prog, "%" PRIu64 " runs at once instead of %" PRIu64
				   ": each needs about %" PRIu64 " MiB", limit / est.need,
				want, est.need >> 20);
		want = MAX(limit / est.need, 1);
	}
	out->jobs = (unsigned)want;
	return true;
}

/* The plot's title: "PROG TRACE's base name: what" (g_free). */
static char *plot_title(const struct pool_options *p, const char *what)
{
	gchar *base = g_path_get_basename(p->ro.cfg.trace);
	char *title = g_strdup_printf("%s %s: %s", p->ro.prog, base, what);

	g_free(base);
	return title;
}

/* The CSV and the plot written and put in place (the plot after the CSV), then the report. */
static bool write_outputs(const struct pool_options *p, struct pool_outputs *out,
			  const struct pool_command *c, void *ctx, GError **error)
{
	if (out->csv)
		c->csv(ctx, atomic_file_stream(out->csv));
	if (out->plot) {
		char *title = plot_title(p, c->plot_what);
		bool drawn = c->plot(ctx, atomic_file_stream(out->plot), title, error);

		g_free(title);
		if (!drawn)
			return false;
	}
	atomic_file **const all[] = { &out->csv, &out->plot };
	if (!atomic_file_commit_all(all, G_N_ELEMENTS(all), error))
		return false;
	c->report(ctx, stdout, out->digests);
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		g_set_error(error, c->domain, WORKERS_INPUT, "standard output: %s",
			    g_strerror(errno ? errno : EIO));
		return false;
	}
	return true;
}

bool pool_run(struct pool_options *p, size_t n, const struct pool_command *c, void *ctx,
	      GError **error)
{
	struct pool_outputs out = { 0 };
	struct run_config run = p->ro.cfg;
	bool ok = false;

	if ((p->csv_path && !(out.csv = atomic_file_open(p->csv_path, error))) ||
	    (p->png && !(out.plot = atomic_file_open(p->png, error))) ||
	    !plan_jobs(p, n, &out, error))
		goto out;
	/* each run was held to the limit above, whole */
	run.max_memory = 0;
	int64_t t0 = g_get_monotonic_time();
	if (!c->run(ctx, &run, out.jobs, !p->ro.quiet, error) ||
	    !write_outputs(p, &out, c, ctx, error))
		goto out;
	if (!p->ro.quiet)
		cli_notice(p->ro.prog, "%zu runs, %u at once: %.1f s", n, out.jobs,
			(g_get_monotonic_time() - t0) / 1e6);
	ok = true;
out:
	atomic_file_abort(out.csv);
	atomic_file_abort(out.plot);
	return ok;
}
