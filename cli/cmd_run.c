// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim run: a trace through the KSM model, out as marks, time series and a summary. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "marks/marks.h"
#include "sim/ksm.h"
#include "sim/run.h"
#include "sim/output.h"
#include "sim/profile.h"
#include "traces/reader.h"
#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/file_id.h"
#include "util/options.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/size.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ksmsim run --trace FILE [OPTIONS]\n"
"Replays a ksmtrace (text, .gz or binary) through the model of Linux 6.18's\n"
"KSM scanner and prints a summary of the final state on standard output.\n"
"\n"
"Input and checksum:\n"
"  --trace FILE           the trace ('-' is standard input). A regular file is\n"
"                         read twice: checked whole (and its memory need\n"
"                         estimated) before anything runs; a pipe, FIFO or\n"
"                         device is read once, checked as it goes\n"
"  --hash NAME            page checksum for the gate (default xxhash, as the\n"
"                         kernel; 'ksmsim hashes' lists them; none = no gate)\n"
"  --policy NAME[:KEY=VALUE,...]\n"
"                         a design in place of the kernel's (default kernel;\n"
"                         'ksmsim policies' lists them and their keys):\n"
"                         no-gate, dirty-bit, partial-hash, classified,\n"
"                         selective (trees per --domain).\n"
"                         no-gate, dirty-bit and partial-hash decide without\n"
"                         the page checksum, so --hash is refused with them\n"
"Output (each written whole or not at all):\n"
"  --marks-csv FILE       one row per 'mark': the kernel's counters in the\n"
"                         order traces/FORMAT.md ('Marks') gives, then the\n"
"                         simulator's own (ground truth, cost, ideal dedup)\n"
"  --mm-stats-csv FILE    at each 'mark', one row per live mm: its\n"
"                         /proc/PID/ksm_stat (rmap items, zero pages, merging\n"
"                         pages, process profit, mergeable)\n"
"  --csv FILE             time series: a row at 0 and every --interval-ms of\n"
"                         simulated time (settles included), and one at the\n"
"                         end of the run; the oracle's columns (mergeable_pages\n"
"                         ... dedup_fraction) are filled on the samples due\n"
"                         every --ideal-interval-ms, empty on the others\n"
"  --summary-csv FILE     the run as one CSV row, columns named in\n"
"                         traces/FORMAT.md ('Marks and what a run prints'):\n"
"                         trace, hash, checksum_ns (what the run charged a\n"
"                         checksum: the cost table's checksum:HASH row),\n"
"                         policy; workload, seed, scale of a\n"
"                         'ksmsim gen' trace (text forms); the end-of-run\n"
"                         columns; over the samples after t = 0 that --csv\n"
"                         has (taken without it too): avg_ and peak_ of\n"
"                         pages_sharing, pages_unshared, pages_volatile, avg_\n"
"                         of missed_merges and dedup_fraction (over the\n"
"                         samples the oracle saw); pinned (the\n"
"                         knobs given here, knob=value;...); every knob's\n"
"                         value at the end of the run\n"
"  --exposure-csv FILE    merges across security domains (--domain) and\n"
"                         within one: count, p50, p90, p99, max of the time\n"
"                         from a page's last write to its merge, of the time\n"
"                         merged until its CoW or unshare, and of the domains\n"
"                         sharing a KSM page at its peak; the saving across\n"
"                         domains (sim/MODEL.md, 'Exposure')\n"
"  --false-positives-csv FILE  every false positive of the gate (a page\n"
"                         whose bytes changed since ksmd's last visit but\n"
"                         passed as unchanged): t_us, mm, vpn, the checksum\n"
"                         it kept, bytes_changed and the changed byte\n"
"                         offsets (ranges a-b joined by ';'), a row each\n"
"  --profile-csv FILE    at each 'mark', ksmd's modelled CPU by term in the\n"
"                         terms of 'ksmsim live --profile' (label,term,count,\n"
"                         share,ms; compare with 'ksmsim diff --profile')\n"
"  --trace-label TEXT     what outputs call the trace (default: FILE as\n"
"                         given), e.g. a name that does not depend on where\n"
"                         it was kept\n"
"  --json                 the summary on standard output as one JSON object:\n"
"                         the --summary-csv row, field for field, under its\n"
"                         column names (numbers as numbers, empty as null)\n"
"  --progress             progress on standard error (records, percent of the\n"
"                         trace, rate, ETA) even when it is not a terminal\n"
"                         or with --quiet; by default shown on a terminal\n"
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

struct run_ctx {
	FILE *marks;
	FILE *mm_stats;
	struct sampler sampler;	/* the series rows and the summary's means */
	bool ideal;
	struct progress *progress;
	const trace_reader *reader;
	uint64_t records;	/* as last reported by the loop */
	uint64_t trace_us;	/* its last record's time */
	uint64_t trace_end_us;	/* the trace's last time, when a validation pass found it */
	FILE *profile;		/* --profile-csv */
	const struct cost_table *costs;	/* the run's prices, for the profile */
};

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
	if (ctx->mm_stats) {
		GArray *st = ksm_mm_stats(k);
		for (guint i = 0; i < st->len; i++)
			marks_mm_write_row(ctx->mm_stats, label, t_us,
					   &g_array_index(st, struct ksm_mm_stat, i));
		g_array_free(st, TRUE);
	}
	if (ctx->profile) {
		struct cost_counts c;

		ksm_cost_counts(k, &c);
		profile_model_row(ctx->profile, label, &c, ctx->costs);
	}
	if (!ctx->marks)
		return true;
	struct snapshot s;
	snapshot_take(k, ctx->ideal, &s);
	output_marks_row(ctx->marks, label, t_us, &s);
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

/* The command line, as parsed. */
struct args {
	struct run_options ro;		/* the run options, and in ro.cfg the run */
	const char *hash_name, *policy_spec, *trace_label;
	const char *marks_path, *csv_path, *summary_path, *mm_stats_path, *exposure_path;
	const char *fp_path;		/* --false-positives-csv */
	const char *profile_path;	/* --profile-csv */
	bool force_progress;
	bool json;			/* --json: the summary row as JSON in place of the text */
	char *hash_label;		/* what outputs call the checksum (and the policy) */
};

/* Its outputs, in the order they are committed. */
struct outputs {
	atomic_file *marks, *series, *summary, *mm_stats, *exposure, *fp, *profile;
};

/* A false positive of the gate, as the model meets it: a row of --false-positives-csv. */
static void on_false_positive(void *p, const struct ksm_false_positive *fp)
{
	output_false_positive_row(atomic_file_stream(((struct outputs *)p)->fp), fp);
}

enum {
	OPT_TRACE = 256, OPT_HASH, OPT_MARKS, OPT_CSV, OPT_SUMMARY, OPT_LABEL, OPT_PROGRESS,
	OPT_HELP, OPT_MM_STATS, OPT_POLICY, OPT_EXPOSURE, OPT_FP, OPT_JSON, OPT_PROFILE,
};

/* -1: go on; else the exit status (help printed, or one line on stderr). */
static int parse(int argc, char **argv, struct args *a)
{
	static const struct option fixed[] = {
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "hash", required_argument, NULL, OPT_HASH },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "marks-csv", required_argument, NULL, OPT_MARKS },
		{ "mm-stats-csv", required_argument, NULL, OPT_MM_STATS },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "summary-csv", required_argument, NULL, OPT_SUMMARY },
		{ "trace-label", required_argument, NULL, OPT_LABEL },
		{ "exposure-csv", required_argument, NULL, OPT_EXPOSURE },
		{ "false-positives-csv", required_argument, NULL, OPT_FP },
		{ "profile-csv", required_argument, NULL, OPT_PROFILE },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	GArray *longopts = g_array_new(TRUE, TRUE, sizeof(struct option));
	struct run_config *cfg = &a->ro.cfg;
	struct cli_once once = { 0 };
	int status = -1, c;

	g_array_append_vals(longopts, fixed, G_N_ELEMENTS(fixed));
	run_options_add(&a->ro, longopts);
	const struct option *lo = (const struct option *)longopts->data;
	optind = 1;
	opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		/* run's own value options take one value each (the run options check theirs) */
		if (optarg && c < CLI_OPT_POOL && !cli_once(&once, "ksmsim run", option_name(lo, c), c)) {
			status = EXIT_USAGE;
			break;
		}
		switch (c) {
		case OPT_TRACE: cfg->trace = optarg; break;
		case OPT_HASH: a->hash_name = optarg; break;
		case OPT_POLICY: a->policy_spec = optarg; break;
		case OPT_MARKS: a->marks_path = optarg; break;
		case OPT_MM_STATS: a->mm_stats_path = optarg; break;
		case OPT_CSV: a->csv_path = optarg; break;
		case OPT_SUMMARY: a->summary_path = optarg; break;
		case OPT_LABEL: a->trace_label = optarg; break;
		case OPT_EXPOSURE: a->exposure_path = optarg; break;
		case OPT_FP: a->fp_path = optarg; break;
		case OPT_PROFILE: a->profile_path = optarg; break;
		case OPT_PROGRESS: a->force_progress = true; break;
		case OPT_JSON: a->json = true; break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			status = 0;
			break;
		default:
			int took = run_option_take(&a->ro, c, optarg);
			if (took < 0)
				status = EXIT_USAGE;
			else if (!took)
				status = cli_option_error("ksmsim run", argv, lo, c);
		}
	}
	g_array_free(longopts, TRUE);
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
	if (a->ro.interval_given && !a->csv_path && !a->summary_path && !a->json) {
		cli_error("ksmsim run", "--interval-ms is the period of the samples behind --csv"
			" and --summary-csv; give --csv FILE too (or --summary-csv FILE)");
		return false;
	}
	const struct file_use uses[] = {
		/* the summary: an output too, or --csv /dev/stdout would be renamed over it */
		{ "the summary on standard output", a->ro.quiet ? NULL : "-", true },
		{ "--trace", cfg->trace, false }, { "--costs-csv", cfg->costs_csv, false },
		{ "--marks-csv", a->marks_path, true }, { "--csv", a->csv_path, true },
		{ "--summary-csv", a->summary_path, true }, { "--mm-stats-csv", a->mm_stats_path, true },
		{ "--exposure-csv", a->exposure_path, true },
		{ "--false-positives-csv", a->fp_path, true }, { "--profile-csv", a->profile_path, true },
	};
	if (!file_uses_distinct(uses, G_N_ELEMENTS(uses), &error))
		goto fail;
	if (!cfg->max_memory_given)
		cfg->max_memory = mem_available();
	if (a->hash_name && !(cfg->hash = cli_hash_arg("ksmsim run", "--hash", a->hash_name, true)))
		return false;
	if (a->policy_spec && !ksm_policy_parse(a->policy_spec, &cfg->model.policy, &error))
		goto fail;
	if (!run_config_resolve(cfg, &error))
		goto fail;
	/* the figures for the CSV, and for the summary's lines on domains */
	if (a->exposure_path || cfg->model.policy.class_by >= KSM_CLASS_BY_DOMAIN)
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

static bool open_outputs(const struct args *a, struct outputs *o, GError **error)
{
	return (!a->marks_path || (o->marks = atomic_file_open(a->marks_path, error))) &&
	       (!a->csv_path || (o->series = atomic_file_open(a->csv_path, error))) &&
	       (!a->summary_path || (o->summary = atomic_file_open(a->summary_path, error))) &&
	       (!a->mm_stats_path || (o->mm_stats = atomic_file_open(a->mm_stats_path, error))) &&
	       (!a->exposure_path || (o->exposure = atomic_file_open(a->exposure_path, error))) &&
	       (!a->fp_path || (o->fp = atomic_file_open(a->fp_path, error))) &&
	       (!a->profile_path || (o->profile = atomic_file_open(a->profile_path, error)));
}

/*
 * The provenance line every CSV of a run starts with: the one wording,
 * what names the file's contents (NULL: none).
 */
static void put_provenance(FILE *f, const struct args *a, const char *what)
{
	char *label_line = escape_line(a->trace_label);

	fprintf(f, "# ksmsim %s model of Linux 6.18 KSM; trace %s; checksum %s%s%s\n",
		KSMSIM_VERSION, label_line, a->hash_label, what ? "; " : "", what ? what : "");
	g_free(label_line);
}

/* The files' comment lines and headers; the streams into ctx. */
static void put_headers(const struct args *a, const struct outputs *o, bool thp,
			struct run_ctx *ctx)
{
	if (o->mm_stats) {
		ctx->mm_stats = atomic_file_stream(o->mm_stats);
		put_provenance(ctx->mm_stats, a, "/proc/PID/ksm_stat of every live mm at each mark");
		marks_mm_write_header(ctx->mm_stats);
	}
	if (o->marks) {
		ctx->marks = atomic_file_stream(o->marks);
		put_provenance(ctx->marks, a, NULL);
		fprintf(ctx->marks, "# full_scans, pages_scanned, pages_skipped, cow_ksm count from the"
			" trace start; t_us is the mark's timestamp as written in the trace\n");
		output_marks_header(ctx->marks, thp);
	}
	if (o->fp) {
		FILE *f = atomic_file_stream(o->fp);

		put_provenance(f, a, "every false positive of the gate (t_us of the model's clock)");
		output_false_positives_header(f);
	}
	if (o->profile) {
		ctx->profile = atomic_file_stream(o->profile);
		profile_model_header(ctx->profile, a->trace_label);
	}
	if (o->series)
		output_series_header(atomic_file_stream(o->series), thp);
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

/* The replay into the outputs and the summary; false with the run's error. */
static bool replay(const struct args *a, struct run_ctx *ctx, struct outputs *o,
		   struct run_summary *sum, GError **error)
{
	const struct run_config *cfg = &a->ro.cfg;
	struct ksm_exposure expo = { 0 };
	struct run run;

	progress_phase(ctx->progress, "running", "records");
	if (!open_outputs(a, o, error) || !run_open(&run, cfg, error))
		return false;
	put_headers(a, o, run.opt.thp_columns, ctx);
	sampler_init(&ctx->sampler, &sum->series, o->series ? atomic_file_stream(o->series) : NULL,
		     cfg->ideal, cfg->interval_ms, cfg->ideal_interval_ms);
	ctx->reader = run.reader;
	ctx->costs = &run.opt.costs;
	/* the summary's means come from the samples too: no output wanting them, none taken */
	bool sampled = o->series || o->summary || a->json;
	struct loop_sinks sinks = {
		.mark = on_mark,
		.sample = sampled ? on_sample : NULL,
		.sample_every_us = sampled ? cfg->interval_ms * 1000 : 0,
		.progress = on_progress,
		.ctx = ctx,
	};
	struct loop_result res;
	bool ok = run_replay(&run, &sinks, &res, error);

	if (ok) {
		sampler_finish(&ctx->sampler, run.k);
		ctx->records = res.records;
		ctx->trace_us = res.trace_end_us;
		progress_poke(ctx);
		progress_finish(ctx->progress);
		sum->trace = a->trace_label;
		sum->hash = cfg->hash_name;
		sum->interval_ms = cfg->interval_ms;
		run_summary_finish(sum, run.k, &run.opt, run.reader, &res, cfg->ideal);
		if (o->summary) {
			output_run_summary_header(atomic_file_stream(o->summary));
			output_run_summary_row(atomic_file_stream(o->summary), sum);
		}
		if (cfg->model.exposure)
			ksm_exposure(run.k, &expo);
		if (o->exposure) {
			FILE *f = atomic_file_stream(o->exposure);

			put_provenance(f, a, "exposure by security domain (times in us of the model's"
				       " clock)");
			output_exposure_csv(f, &expo, cfg->model.domains);
		}
		atomic_file **const all[] = { &o->marks, &o->series, &o->summary, &o->mm_stats,
					      &o->exposure, &o->fp, &o->profile };
		ok = atomic_file_commit_all(all, G_N_ELEMENTS(all), error);
	}
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
		.ideal = cfg->ideal,
		.progress = progress_new("ksmsim run", a.force_progress ? PROGRESS_ALWAYS :
					 a.ro.quiet ? PROGRESS_NEVER : PROGRESS_AUTO),
	};
	/* A pipe or FIFO can be read once only: it is checked as it runs. */
	struct stat st;
	struct run_estimate est = { 0 };
	bool twice = strcmp(cfg->trace, "-") != 0 && stat(cfg->trace, &st) == 0 &&
		     S_ISREG(st.st_mode);
	struct outputs o = { 0 };
	struct run_summary *sum = g_new0(struct run_summary, 1);	/* with two snapshots */

	bool ok = !twice || run_estimate(cfg, ctx.progress, &est, &error);

	ctx.trace_end_us = est.end_us;
	if (a.fp_path) {
		a.ro.cfg.model.on_false_positive = on_false_positive;
		a.ro.cfg.model.false_positive_ctx = &o;
	}
	if (ok && replay(&a, &ctx, &o, sum, &error)) {
		status = 0;
	} else {
		progress_free(ctx.progress);
		ctx.progress = NULL;
		cli_error("ksmsim run", "%s", error ? error->message : "failed");
		status = run_error_status(error);
		g_clear_error(&error);
		atomic_file_abort(o.marks);
		atomic_file_abort(o.series);
		atomic_file_abort(o.summary);
		atomic_file_abort(o.mm_stats);
		atomic_file_abort(o.exposure);
		atomic_file_abort(o.fp);
		atomic_file_abort(o.profile);
	}
	progress_free(ctx.progress);
	g_free(sum);
out:
	g_free(a.hash_label);
	run_options_free(&a.ro);
	return status;
}
