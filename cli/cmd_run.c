// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim run: a trace through the KSM model, out as marks, time series and a summary. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "sim/ksm.h"
#include "sim/run.h"
#include "sim/output.h"
#include "traces/reader.h"
#include "util/atomic_file.h"
#include "util/json.h"
#include "util/file_id.h"
#include "util/options.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/size.h"

/* The output files, one row each in the table below (outputs[]), in --help's order. */
enum out {
	OUT_MARKS, OUT_MM_STATS, OUT_SERIES, OUT_SUMMARY, OUT_EXPOSURE, OUT_FP, OUT_PROFILE,
	OUT_POLICY_STATS, OUT_NR,
};

/* The command line, as parsed. */
struct args {
	struct run_options ro;		/* the run options, and in ro.cfg the run */
	const char *hash_name, *policy_spec, *trace_label;
	const char *path[OUT_NR];	/* each output's FILE, or NULL */
	FILE *f[OUT_NR];		/* ... its stream once opened, for attach's observers */
	bool force_progress;
	bool json;			/* --json: the summary row as JSON in place of the text */
	bool help;
	char *hash_label;		/* what outputs call the checksum (and the policy) */
	struct cli_once once;		/* run's own options given so far */
};

struct run_ctx {
	const struct args *a;
	struct output_run out;		/* what the outputs see of the run */
	struct sampler sampler;	/* the series rows and the summary's means */
	struct progress *progress;
	const trace_reader *reader;
	uint64_t records;	/* as last reported by the loop */
	uint64_t trace_us;	/* its last record's time */
	uint64_t trace_end_us;	/* the trace's last time, when a validation pass found it */
};

/*
 * The outputs, one table (sim/MODEL.md, "Outputs as observers"): an
 * option, the file it names, and the observer that fills it, each row in
 * that observer's file (sim/output.h, struct run_output). Opening, the
 * checks of the files against each other, attaching, committing and
 * aborting are loops over it.
 */
static const struct run_output *const outputs[OUT_NR] = {
	[OUT_MARKS] = &marks_output,
	[OUT_MM_STATS] = &mm_stats_output,
	[OUT_SERIES] = &series_output,
	[OUT_SUMMARY] = &summary_output,
	[OUT_EXPOSURE] = &exposure_output,
	[OUT_FP] = &false_positives_output,
	[OUT_PROFILE] = &profile_output,
	[OUT_POLICY_STATS] = &policy_stats_output,
};

static void put_output_help(FILE *f, const struct run_output *o)
{
	char *head = g_strdup_printf("  --%s FILE", o->name);

	cli_help_put(f, head, o->help, 25);
	g_free(head);
}

/*
 * run's own options, below CLI_OPT_POOL: these rows, and a row made for
 * each output (OPT_OUT + its index, its FILE into args.path[]); the run
 * options' from CLI_OPT_RUN (run_options.c).
 */
enum {
	OPT_TRACE = 256, OPT_HASH, OPT_POLICY, OPT_LABEL, OPT_PROGRESS, OPT_JSON,
	OPT_OUT = 320,
};
#define AT(f) offsetof(struct args, f)
#define ROWS_INPUT 3	/* the first rows: "Input and checksum" in --help */
static const struct cli_opt rows[] = {
	{ "trace", OPT_TRACE, CLI_STR, "FILE", AT(ro.cfg.trace),
	  .help = "the trace ('-' is standard input). A regular file is\n"
		  "read twice: checked whole (and its memory need\n"
		  "estimated) before anything runs; a pipe, FIFO or\n"
		  "device is read once, checked as it goes" },
	{ "hash", OPT_HASH, CLI_STR, "NAME", AT(hash_name),
	  .help = "page checksum for the gate (default xxhash, as the\n"
		  "kernel; 'ksmsim hashes' lists them; none = no gate)" },
	{ "policy", OPT_POLICY, CLI_STR, "NAME[:KEY=VALUE,...]", AT(policy_spec),
	  .help = "a design in place of the kernel's (default kernel;\n"
		  "'ksmsim policies' lists them and their keys):\n"
		  "no-gate, dirty-bit, partial-hash, classified,\n"
		  "selective (trees per --domain).\n"
		  "no-gate, dirty-bit and partial-hash decide without\n"
		  "the page checksum, so --hash is refused with them" },
	/* then the outputs' rows (from outputs[], in --help's order), then these */
	{ "trace-label", OPT_LABEL, CLI_STR, "TEXT", AT(trace_label),
	  .help = "what outputs call the trace (default: FILE as\n"
		  "given), e.g. a name that does not depend on where\n"
		  "it was kept" },
	{ "json", OPT_JSON, CLI_FLAG, NULL, AT(json),
	  .help = "the summary on standard output as one JSON object:\n"
		  "the --summary-csv row, field for field, under its\n"
		  "column names (numbers as numbers, empty as null)" },
	{ "progress", OPT_PROGRESS, CLI_FLAG, NULL, AT(force_progress),
	  .help = "progress on standard error (records, percent of the\n"
		  "trace, rate, ETA) even when it is not a terminal\n"
		  "or with --quiet; by default shown on a terminal" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help), .stops = true, .help = NULL },
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ksmsim run --trace FILE [OPTIONS]\n"
"Replays a ksmtrace (text, .gz or binary) through the model of Linux 6.18's\n"
"KSM scanner and prints a summary of the final state on standard output.\n"
"\n"
"Input and checksum:\n");
	cli_opts_help(f, rows, ROWS_INPUT, NULL, 25);
	fprintf(f, "Output (each written whole or not at all):\n");
	for (size_t i = 0; i < OUT_NR; i++)
		put_output_help(f, outputs[i]);
	cli_opts_help(f, rows + ROWS_INPUT, G_N_ELEMENTS(rows) - ROWS_INPUT, NULL, 25);
	fprintf(f,
"Run options (one table with advise and collide ksm, cli/run_options.c):\n");
	run_options_help(f, RUN_OPTIONS_RUN, 25);
	fprintf(f,
"\n"
"Exit status: 0 done, 1 an invariant failed (--check), 2 bad usage or bad\n"
"input (one line 'FILE:LINE: problem'), a trace too big for --max-memory or\n"
"memory that ran out ('ksmsim: out of memory: WHAT'), 128 + signal\n"
"interrupted (SIGINT, SIGTERM, SIGHUP, SIGPIPE). Outputs are\n"
"whole or absent; an output may not be the trace or another output.\n");
}


/* Marks and samples come often in a long settle: the file position moves on. */
/*
 * The share done is the share of the trace's time replayed when the
 * validation pass found its end: file offsets run far ahead of the model
 * on a compressed trace, whose buffers fill in a moment.
 */
static void progress_poke(struct run_ctx *ctx)
{
	if (ctx->trace_end_us)
		progress_update(ctx->progress, ctx->records, ctx->trace_us, ctx->trace_end_us);
	else
		progress_update(ctx->progress, ctx->records, trace_reader_offset(ctx->reader),
				trace_reader_size(ctx->reader));
}

static bool on_mark(void *p, const char *label, uint64_t t_us, struct ksm *k, GError **error)
{
	struct run_ctx *ctx = p;

	progress_poke(ctx);
	for (size_t i = 0; i < OUT_NR; i++)
		if (ctx->a->f[i] && outputs[i]->mark)
			outputs[i]->mark(ctx->a->f[i], &ctx->out, label, t_us, k);
	return true;
}

static bool on_sample(void *p, uint64_t sim_us, uint64_t trace_us, struct ksm *k, GError **error)
{
	struct run_ctx *ctx = p;
	progress_poke(ctx);
	sampler_take(&ctx->sampler, k, sim_us, trace_us);
	return true;
}

static void on_progress(void *p, const trace_reader *r, uint64_t records, uint64_t trace_us)
{
	struct run_ctx *ctx = p;

	ctx->records = records;
	ctx->trace_us = trace_us;
	progress_poke(ctx);
}

/* run's own rows, then one per output: the table getopt and cli_opts_take see (g_array_free). */
static GArray *all_rows(void)
{
	GArray *t = g_array_new(FALSE, FALSE, sizeof(struct cli_opt));

	g_array_append_vals(t, rows, G_N_ELEMENTS(rows));
	for (int i = 0; i < OUT_NR; i++) {
		struct cli_opt r = { outputs[i]->name, OPT_OUT + i, CLI_STR, "FILE",
				     AT(path) + (size_t)i * sizeof(const char *), .help = NULL };

		g_array_append_val(t, r);
	}
	return t;
}

/* -1: go on; else the exit status (help printed, or one line on stderr). */
static int parse(int argc, char **argv, struct args *a)
{
	GArray *t = all_rows();
	const struct cli_parser p = { .prog = "ksmsim run", .rows = (const struct cli_opt *)t->data,
				      .n = t->len, .base = a, .once = &a->once, .ro = &a->ro };
	int status = cli_parse(&p, argc, argv);

	if (status == 0)
		usage(stdout);	/* --help */
	g_array_free(t, TRUE);
	return status;
}

/* What the options name, checked together before any work; false after one line. */
static bool resolve(struct args *a, int argc, char **argv)
{
	struct run_config *cfg = &a->ro.cfg;
	GError *error = NULL;

	if (optind < argc) {
		cli_extra_arg("ksmsim run", argv[optind]);
		return false;
	}
	if (!cfg->trace) {
		cli_error("ksmsim run", "--trace FILE is required (see --help)");
		return false;
	}
	if (!a->trace_label)
		a->trace_label = cfg->trace;
	if (a->ro.interval_given && !a->path[OUT_SERIES] && !a->path[OUT_SUMMARY] && !a->json) {
		cli_error("ksmsim run", "--interval-ms is the period of the samples behind --csv"
			" and --summary-csv; give --csv FILE too (or --summary-csv FILE)");
		return false;
	}
	struct file_use uses[3 + OUT_NR] = {
		/* the summary: an output too, or --csv /dev/stdout would be renamed over it */
		{ "the summary on standard output", a->ro.quiet ? NULL : "-", true },
		{ "--trace", cfg->trace, false }, { "--costs-csv", cfg->costs_csv, false },
	};
	char *names[OUT_NR];

	for (int i = 0; i < OUT_NR; i++) {
		names[i] = g_strdup_printf("--%s", outputs[i]->name);
		uses[3 + i] = (struct file_use){ names[i], a->path[i], true };
	}
	bool distinct = file_uses_distinct(uses, G_N_ELEMENTS(uses), &error);

	for (int i = 0; i < OUT_NR; i++)
		g_free(names[i]);
	if (!distinct)
		goto fail;
	if (!cfg->max_memory_given)
		cfg->max_memory = mem_available();
	if (a->hash_name && !(cfg->hash = cli_hash_arg("ksmsim run", "--hash", a->hash_name, true)))
		return false;
	if (a->policy_spec && !ksm_policy_parse(a->policy_spec, &cfg->model.policy, &error))
		goto fail;
	if (!run_config_resolve(cfg, &error))
		goto fail;
	/* the observers the outputs need; the exposure figures also for the summary's lines on domains */
	for (int i = 0; i < OUT_NR; i++)
		if (a->path[i] && outputs[i]->attach)
			outputs[i]->attach(&cfg->model, &a->f[i]);
	if (cfg->model.policy.class_by >= KSM_CLASS_BY_DOMAIN)
		cfg->model.exposure = true;
	if (cfg->model.policy.row)
		a->hash_label = g_strdup_printf("%s, policy %s", cfg->hash_name,
						ksm_policy_name(&cfg->model.policy));
	else
		a->hash_label = g_strdup(cfg->hash_name);
	return true;
fail:
	cli_error("ksmsim run", "%s", error->message);
	g_error_free(error);
	return false;
}

/* Open every output asked for; its stream into a->f. False with the first failure. */
static bool open_outputs(struct args *a, atomic_file **o, GError **error)
{
	for (int i = 0; i < OUT_NR; i++) {
		if (!a->path[i])
			continue;
		if (!(o[i] = atomic_file_open(a->path[i], error)))
			return false;
		a->f[i] = atomic_file_stream(o[i]);
	}
	return true;
}

static void summary_csv(void *ctx, FILE *f)
{
	output_run_summary_header(f);
	output_run_summary_row(f, ctx);
}

/* --json: the summary CSV's one row as an object, so the two carry the same fields. */
static void put_json(struct run_summary *sum)
{
	char *csv = json_capture(summary_csv, sum);
	GString *g = g_string_new(NULL);

	json_csv_first(g, csv);
	g_string_append_c(g, '\n');
	fputs(g->str, stdout);
	g_string_free(g, TRUE);
	g_free(csv);
}

/* The end of a replay: the last sample, the summary, the outputs' ends, all committed. */
static bool finish(const struct args *a, struct run_ctx *ctx, atomic_file **o, struct run *run,
		   const struct loop_result *res, struct run_summary *sum,
		   struct ksm_exposure *expo, GError **error)
{
	const struct run_config *cfg = &a->ro.cfg;
	atomic_file **all[OUT_NR];

	sampler_finish(&ctx->sampler, run->k);
	ctx->records = res->records;
	ctx->trace_us = res->trace_end_us;
	progress_poke(ctx);
	progress_finish(ctx->progress);
	sum->trace = a->trace_label;
	sum->hash = cfg->hash_name;
	sum->interval_ms = cfg->interval_ms;
	run_summary_finish(sum, run->k, &run->opt, run->reader, res, cfg->ideal);
	if (cfg->model.exposure)
		ksm_exposure(run->k, expo);
	ctx->out.sum = sum;
	ctx->out.expo = expo;
	for (int i = 0; i < OUT_NR; i++) {
		if (a->f[i] && outputs[i]->end)
			outputs[i]->end(a->f[i], &ctx->out, run->k);
		all[i] = &o[i];
	}
	return atomic_file_commit_all(all, OUT_NR, error);
}

/* The replay into the outputs and the summary; false with the run's error. */
static bool replay(struct args *a, struct run_ctx *ctx, atomic_file **o,
		   struct run_summary *sum, GError **error)
{
	const struct run_config *cfg = &a->ro.cfg;
	struct ksm_exposure expo = { 0 };
	bool sampled = false;
	struct run run;

	progress_phase(ctx->progress, "running", "records");
	if (!open_outputs(a, o, error) || !run_open(&run, cfg, error))
		return false;
	ctx->out.thp = run.opt.thp_columns;
	ctx->out.costs = &run.opt.costs;
	for (int i = 0; i < OUT_NR; i++) {
		if (a->f[i] && outputs[i]->start)
			outputs[i]->start(a->f[i], &ctx->out);
		sampled |= a->f[i] && outputs[i]->samples;
	}
	sampler_init(&ctx->sampler, &sum->series, a->f[OUT_SERIES], cfg->ideal, cfg->interval_ms,
		     cfg->ideal_interval_ms);
	ctx->reader = run.reader;
	/* the summary's means come from the samples too: no output wanting them, none taken */
	sampled |= a->json;
	struct loop_sinks sinks = {
		.mark = on_mark,
		.sample = sampled ? on_sample : NULL,
		.sample_every_us = sampled ? cfg->interval_ms * 1000 : 0,
		.progress = on_progress,
		.ctx = ctx,
	};
	struct loop_result res;
	bool ok = run_replay(&run, &sinks, &res, error) &&
		  finish(a, ctx, o, &run, &res, sum, &expo, error);

	if (ok && !a->ro.quiet && a->json) {
		put_json(sum);
	} else if (ok && !a->ro.quiet) {
		output_summary_text(stdout, a->trace_label, a->hash_label, res.sim_end_us, res.records,
				    res.batches, &sum->end);
		output_digest_note(stdout, trace_reader_digests(run.reader));
		if (cfg->model.policy.row) {
			struct ksm_policy_stats ps;
			ksm_policy_stats(run.k, &ps);
			output_policy_text(stdout, &cfg->model.policy, &ps);
		}
		if (cfg->model.exposure)
			output_exposure_text(stdout, &expo);
	}
	ksm_exposure_free(&expo);
	run_close(&run);
	return ok;
}

int cmd_run(int argc, char **argv)
{
	struct args a = { 0 };
	int status;

	run_options_init(&a.ro, "ksmsim run", RUN_OPTIONS_RUN);
	status = parse(argc, argv, &a);
	if (status >= 0)
		goto out;
	status = EXIT_USAGE;
	if (!resolve(&a, argc, argv))
		goto out;

	const struct run_config *cfg = &a.ro.cfg;
	GError *error = NULL;
	signals_install(SIGNALS_EXIT);
	struct run_ctx ctx = {
		.a = &a,
		.out = {
			.trace_label = a.trace_label,
			.hash_label = a.hash_label,
			.kernel = cfg->model.kernel,
			.ideal = cfg->ideal,
			.policy = &cfg->model.policy,
			.domains = cfg->model.domains,
		},
		.progress = progress_new("ksmsim run", a.force_progress ? PROGRESS_ALWAYS :
					 a.ro.quiet ? PROGRESS_NEVER : PROGRESS_AUTO),
	};
	/* A pipe or FIFO can be read once only: it is checked as it runs. */
	struct stat st;
	struct run_estimate est = { 0 };
	bool twice = strcmp(cfg->trace, "-") != 0 && stat(cfg->trace, &st) == 0 &&
		     S_ISREG(st.st_mode);
	atomic_file *o[OUT_NR] = { 0 };
	struct run_summary *sum = g_new0(struct run_summary, 1);	/* with two snapshots */

	bool ok = !twice || run_estimate(cfg, ctx.progress, &est, &error);

	ctx.trace_end_us = est.end_us;
	if (ok && replay(&a, &ctx, o, sum, &error)) {
		status = 0;
	} else {
		progress_free(ctx.progress);
		ctx.progress = NULL;
		cli_error("ksmsim run", "%s", error ? error->message : "failed");
		status = run_error_status(error);
		g_clear_error(&error);
		for (int i = 0; i < OUT_NR; i++)
			atomic_file_abort(o[i]);
	}
	progress_free(ctx.progress);
	g_free(sum);
out:
	g_free(a.hash_label);
	run_options_free(&a.ro);
	return status;
}
