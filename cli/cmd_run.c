// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim run: a trace through the KSM model, out as marks, time series and a summary. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "marks/marks.h"
#include "sim/ksm.h"
#include "sim/loop.h"
#include "sim/output.h"
#include "traces/reader.h"
#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/file_id.h"
#include "util/options.h"
#include "util/parse.h"
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
"                         no-gate, dirty-bit, partial-hash, classified.\n"
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
"  --interval-ms N        the samples' period (default 1000; needs --csv or\n"
"                         --summary-csv)\n"
"  --summary-csv FILE     the run as one CSV row, columns named in\n"
"                         traces/FORMAT.md ('Marks and what a run prints'):\n"
"                         trace, hash, policy; workload, seed, scale of a\n"
"                         'ksmsim gen' trace (text forms); the end-of-run\n"
"                         columns; over the samples after t = 0 that --csv\n"
"                         has (taken without it too): avg_ and peak_ of\n"
"                         pages_sharing, pages_unshared, pages_volatile, avg_\n"
"                         of missed_merges and dedup_fraction (over the\n"
"                         samples the oracle saw); pinned (the\n"
"                         knobs given here, knob=value;...); every knob's\n"
"                         value at the end of the run\n"
"  --trace-label TEXT     what outputs call the trace (default: FILE as\n"
"                         given), e.g. a name that does not depend on where\n"
"                         it was kept\n"
"  --quiet                no summary on standard output, no progress\n"
"  --progress             progress on standard error (records, percent of the\n"
"                         trace, rate, ETA) even when it is not a terminal\n"
"                         or with --quiet; by default shown on a terminal\n"
"Model:\n"
"  --check                verify the model's invariants after every batch\n"
"                         (slow); the first violation stops the run (exit 1)\n"
"  --costs-csv FILE       per-page costs from 'ksmsim bench costs --csv'\n"
"                         (default: figures built in, so runs reproduce)\n"
"  --batch-time           batches take their modelled CPU time (default: zero\n"
"                         time, as traces/FORMAT.md says)\n"
"  --no-ideal             skip the oracle's walk over every page at each mark,\n"
"                         sample and the end (its columns are left empty)\n"
"  --ideal-interval-ms N  the oracle's period among the samples (default\n"
"                         60000, rounded up to a multiple of --interval-ms):\n"
"                         each walk visits every page, so at every 1 s sample\n"
"                         it would take longer than the rest of the run\n"
"                         (kernel-build --scale 0.05: 8.0 s against 2.6 s)\n"
"  --max-memory SIZE      refuse a trace whose model would need more than\n"
"                         SIZE bytes (K, M, G, T: powers of 1024; default:\n"
"                         the machine's MemAvailable); the need is estimated\n"
"                         from the pages written and the mms alive at once\n"
"Knobs (sysfs names, '-' or '_'): fix a knob for the whole run; the trace's\n"
"'set' records for it are then ignored:\n"
CLI_KNOB_OPTIONS_HELP
"\n"
"Exit status: 0 done, 1 an invariant failed (--check), 2 bad usage or bad\n"
"input (one line 'FILE:LINE: problem'), a trace too big for --max-memory or\n"
"memory that ran out ('ksmsim: out of memory: WHAT'), 128 + signal\n"
"interrupted (SIGINT, SIGTERM, SIGHUP, SIGPIPE). Outputs are\n"
"whole or absent; an output may not be the trace or another output.\n");
}

/* How much memory a run may take: --max-memory, else what the machine has free. */
struct memory_limit {
	uint64_t bytes;		/* 0: no limit known */
	bool given;
};

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
	struct memory_limit limit;
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

/* The model's memory need at this record against the limit; false with the refusal. */
static bool fits(const trace_reader *r, const struct trace_record *rec,
		 const struct memory_limit *limit, bool ideal, GError **error)
{
	const struct trace_check *ck = trace_reader_check((trace_reader *)r);
	uint64_t pages = trace_check_written_pages(ck), mms = trace_check_live_mms(ck);
	uint64_t need = ksm_memory_estimate(pages, mms, ideal);
	char need_s[32], limit_s[32];

	if (!limit->bytes || need <= limit->bytes)
		return true;
	format_size(need, need_s, sizeof(need_s));
	format_size(limit->bytes, limit_s, sizeof(limit_s));
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
		    "%s:%" G_GUINT64_FORMAT ": the model would need about %s here (%" G_GUINT64_FORMAT
		    " written pages, %" G_GUINT64_FORMAT " live mms), more than %s %s",
		    trace_reader_path(r), rec->line, need_s, pages, mms, limit_s,
		    limit->given ? "(--max-memory)" : "(the machine's MemAvailable; --max-memory sets the limit)");
	return false;
}

static bool admit(void *p, trace_reader *r, const struct trace_record *rec, GError **error)
{
	struct run_ctx *ctx = p;

	return fits(r, rec, &ctx->limit, ctx->ideal, error);
}

/*
 * Validate the whole trace first, so that a bad record, or a trace too big
 * for the memory allowed, stops the run before anything ran.
 */
static bool validate(const char *path, struct progress *p, const struct memory_limit *limit,
		     bool ideal, uint64_t *end_us, GError **error)
{
	trace_reader *r = trace_reader_open(path, error);
	if (!r)
		return false;
	struct trace_record rec;
	uint64_t n = 0;
	int got;
	trace_check_count_written(trace_reader_check(r));
	progress_phase(p, "checking the trace", "records");
	while ((got = trace_reader_next(r, &rec, error)) == 1) {
		if (!fits(r, &rec, limit, ideal, error)) {
			got = -1;
			break;
		}
		*end_us = rec.t_us;
		if ((++n & 0xffff) == 0)
			progress_update(p, n, trace_reader_offset(r), trace_reader_size(r));
	}
	if (got == 0) {
		progress_update(p, n, trace_reader_offset(r), trace_reader_size(r));
		progress_finish(p);
	}
	trace_reader_free(r);
	return got == 0;
}

enum {
	OPT_TRACE = 256, OPT_HASH, OPT_MARKS, OPT_CSV, OPT_INTERVAL, OPT_SUMMARY, OPT_LABEL, OPT_QUIET,
	OPT_PROGRESS, OPT_CHECK, OPT_COSTS, OPT_BATCH_TIME, OPT_NO_IDEAL, OPT_HELP, OPT_MM_STATS,
	OPT_MAX_MEMORY, OPT_IDEAL_INTERVAL, OPT_POLICY,
};

int cmd_run(int argc, char **argv)
{
	const char *trace = NULL, *hash_name = HASH_DEFAULT, *marks_path = NULL, *csv_path = NULL;
	const char *policy_spec = NULL, *hash_label = NULL, *hash_out = NULL;
	char *policy_label = NULL;
	bool hash_given = false;
	const char *summary_path = NULL, *costs_path = NULL, *mm_stats_path = NULL;
	const char *trace_label = NULL;
	uint64_t interval_ms = 1000, max_memory = 0, ideal_interval_ms = SAMPLER_IDEAL_INTERVAL_MS;
	bool interval_given = false;
	bool quiet = false, force_progress = false, no_ideal = false;
	struct ksm_options opt = { 0 };

	GArray *longopts = g_array_new(TRUE, TRUE, sizeof(struct option));
	static const struct option fixed[] = {
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "hash", required_argument, NULL, OPT_HASH },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "marks-csv", required_argument, NULL, OPT_MARKS },
		{ "mm-stats-csv", required_argument, NULL, OPT_MM_STATS },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "interval-ms", required_argument, NULL, OPT_INTERVAL },
		{ "summary-csv", required_argument, NULL, OPT_SUMMARY },
		{ "trace-label", required_argument, NULL, OPT_LABEL },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "costs-csv", required_argument, NULL, OPT_COSTS },
		{ "batch-time", no_argument, NULL, OPT_BATCH_TIME },
		{ "no-ideal", no_argument, NULL, OPT_NO_IDEAL },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
		{ "ideal-interval-ms", required_argument, NULL, OPT_IDEAL_INTERVAL },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	g_array_append_vals(longopts, fixed, G_N_ELEMENTS(fixed));
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	knob_options_add(longopts, names);

	int status = EXIT_USAGE, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", (struct option *)longopts->data, NULL)) != -1) {
		switch (c) {
		case OPT_TRACE: trace = optarg; break;
		case OPT_HASH: hash_name = optarg; hash_given = true; break;
		case OPT_POLICY: policy_spec = optarg; break;
		case OPT_MARKS: marks_path = optarg; break;
		case OPT_MM_STATS: mm_stats_path = optarg; break;
		case OPT_CSV: csv_path = optarg; break;
		case OPT_SUMMARY: summary_path = optarg; break;
		case OPT_LABEL: trace_label = optarg; break;
		case OPT_QUIET: quiet = true; break;
		case OPT_PROGRESS: force_progress = true; break;
		case OPT_CHECK: opt.check = true; break;
		case OPT_COSTS: costs_path = optarg; break;
		case OPT_BATCH_TIME: opt.batch_time = true; break;
		case OPT_NO_IDEAL: no_ideal = true; break;
		case OPT_MAX_MEMORY:
			if (!parse_size(optarg, &max_memory) || !max_memory) {
				fprintf(stderr, "ksmsim run: --max-memory wants a size in bytes (K, M, G, T"
					" suffixes), not '%s'\n", optarg);
				goto out;
			}
			break;
		case OPT_INTERVAL:
			if (!parse_u64(optarg, UINT64_MAX, &interval_ms) || !interval_ms) {
				fprintf(stderr, "ksmsim run: --interval-ms wants a positive number, not '%s'\n",
					optarg);
				goto out;
			}
			interval_given = true;
			break;
		case OPT_IDEAL_INTERVAL:
			if (!parse_u64(optarg, UINT64_MAX / 1000, &ideal_interval_ms) ||
			    !ideal_interval_ms) {
				fprintf(stderr, "ksmsim run: --ideal-interval-ms wants a positive number,"
					" not '%s'\n", optarg);
				goto out;
			}
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			status = 0;
			goto out;
		default:
			int took = knob_option_take("ksmsim run", c, optarg, &opt);
			if (took < 0)
				goto out;
			if (took)
				break;
			option_error("ksmsim run", argv, (struct option *)longopts->data, c);
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ksmsim run: unexpected argument '%s' (see --help)\n", argv[optind]);
		goto out;
	}
	if (!trace) {
		fprintf(stderr, "ksmsim run: --trace FILE is required (see --help)\n");
		goto out;
	}
	if (!trace_label)
		trace_label = trace;
	if (interval_given && !csv_path && !summary_path) {
		fprintf(stderr, "ksmsim run: --interval-ms is the period of the samples behind --csv"
			" and --summary-csv; give --csv FILE too (or --summary-csv FILE)\n");
		goto out;
	}
	GError *error = NULL;
	const struct file_use uses[] = {
		{ "--trace", trace, false }, { "--costs-csv", costs_path, false },
		{ "--marks-csv", marks_path, true }, { "--csv", csv_path, true },
		{ "--summary-csv", summary_path, true }, { "--mm-stats-csv", mm_stats_path, true },
	};
	if (!file_uses_distinct(uses, G_N_ELEMENTS(uses), &error)) {
		fprintf(stderr, "ksmsim run: %s\n", error->message);
		g_error_free(error);
		goto out;
	}
	struct memory_limit limit = { max_memory, max_memory != 0 };

	if (!limit.given)
		limit.bytes = mem_available();
	const struct page_hash *hash = hash_lookup(hash_name);
	if (!hash) {
		const char *near = hash_nearest(hash_name);

		if (near)
			fprintf(stderr, "ksmsim run: --hash: unknown checksum '%s'; did you mean '%s'?"
				" ('ksmsim hashes' lists them)\n", hash_name, near);
		else
			fprintf(stderr, "ksmsim run: --hash: unknown checksum '%s' ('ksmsim hashes'"
				" lists them)\n", hash_name);
		goto out;
	}
	if (policy_spec && !ksm_policy_parse(policy_spec, &opt.policy, &error)) {
		fprintf(stderr, "ksmsim run: %s\n", error->message);
		g_error_free(error);
		goto out;
	}
	if (opt.policy.row && !opt.policy.row->uses_hash) {
		if (hash_given) {
			fprintf(stderr, "ksmsim run: --hash %s: --policy %s decides without the page"
				" checksum; leave --hash out\n", hash_name, opt.policy.row->name);
			goto out;
		}
		/*
		 * No --hash checksum ("none" in every output); partial-hash is
		 * charged as xxhash, which hashes its samples as it hashes a page.
		 */
		hash = hash_lookup(opt.policy.detector == KSM_DETECT_PARTIAL ? "xxhash" : "none");
		hash_out = "none";
	} else {
		hash_out = hash->name;
	}
	opt.hash = hash;
	if (opt.policy.row)
		hash_label = policy_label = g_strdup_printf("%s, policy %s", hash_out,
							    ksm_policy_name(&opt.policy));
	else
		hash_label = hash_out;
	cost_table_default(&opt.costs, hash->name);
	if (costs_path && !cost_table_load(&opt.costs, costs_path, hash->name, &error)) {
		fprintf(stderr, "ksmsim run: %s\n", error->message);
		g_error_free(error);
		goto out;
	}

	signals_install(SIGNALS_EXIT);
	struct progress *progress = progress_new("ksmsim run", force_progress ? PROGRESS_ALWAYS :
						 quiet ? PROGRESS_NEVER : PROGRESS_AUTO);
	/* A pipe or FIFO can be read once only: it is checked as it runs. */
	struct stat st;
	uint64_t trace_end_us = 0;
	bool twice = strcmp(trace, "-") != 0 && stat(trace, &st) == 0 && S_ISREG(st.st_mode);

	if (twice && !validate(trace, progress, &limit, !no_ideal, &trace_end_us, &error)) {
		progress_free(progress);
		fprintf(stderr, "ksmsim run: %s\n", error->message);
		g_error_free(error);
		goto out;
	}

	atomic_file *marks = NULL, *series = NULL, *summary = NULL, *mm_stats = NULL;
	trace_reader *reader = NULL;
	struct ksm *k = NULL;
	struct run_summary *sum = g_new0(struct run_summary, 1);	/* with two snapshots */
	struct run_ctx ctx = {
		.ideal = !no_ideal, .progress = progress, .limit = limit, .trace_end_us = trace_end_us,
	};
	progress_phase(progress, "running", "records");
	if ((marks_path && !(marks = atomic_file_open(marks_path, &error))) ||
	    (csv_path && !(series = atomic_file_open(csv_path, &error))) ||
	    (summary_path && !(summary = atomic_file_open(summary_path, &error))) ||
	    (mm_stats_path && !(mm_stats = atomic_file_open(mm_stats_path, &error))))
		goto fail;
	reader = trace_reader_open(trace, &error);
	if (!reader)
		goto fail;
	{
		int version = trace_reader_version(reader, &error);
		if (version < 0)
			goto fail;
		/* a version 3 trace can hold THPs: rows show /proc/vmstat's THP events */
		opt.thp_columns = version >= 3;
	}
	char *label_line = escape_line(trace_label);

	if (mm_stats) {
		ctx.mm_stats = atomic_file_stream(mm_stats);
		fprintf(ctx.mm_stats, "# ksmsim %s model of Linux 6.18 KSM; trace %s; checksum %s; "
			"/proc/PID/ksm_stat of every live mm at each mark\n",
			KSMSIM_VERSION, label_line, hash_label);
		marks_mm_write_header(ctx.mm_stats);
	}
	if (marks) {
		ctx.marks = atomic_file_stream(marks);
		fprintf(ctx.marks, "# ksmsim %s model of Linux 6.18 KSM; trace %s; checksum %s\n",
			KSMSIM_VERSION, label_line, hash_label);
		fprintf(ctx.marks, "# full_scans, pages_scanned, pages_skipped, cow_ksm count from the"
			" trace start; t_us is the mark's timestamp as written in the trace\n");
		output_marks_header(ctx.marks, opt.thp_columns);
	}
	g_free(label_line);
	sampler_init(&ctx.sampler, &sum->series, series ? atomic_file_stream(series) : NULL,
		     !no_ideal, interval_ms, ideal_interval_ms);
	if (series) {
		output_series_header(atomic_file_stream(series), opt.thp_columns);
	}
	ctx.reader = reader;
	trace_check_count_written(trace_reader_check(reader));
	k = ksm_new(&opt);
	/* the summary's means come from the samples too: no output wanting them, none taken */
	bool sampled = series || summary;
	struct loop_sinks sinks = {
		.mark = on_mark,
		.sample = sampled ? on_sample : NULL,
		.sample_every_us = sampled ? interval_ms * 1000 : 0,
		.check = opt.check,
		.progress = on_progress,
		.admit = admit,
		.ctx = &ctx,
	};
	struct loop_result res;
	bool ok = loop_run(k, reader, &sinks, &res, &error);
	if (!ok)
		goto fail;
	sampler_finish(&ctx.sampler, k);
	ctx.records = res.records;
	ctx.trace_us = res.trace_end_us;
	progress_poke(&ctx);
	progress_finish(progress);
	sum->trace = trace_label;
	sum->hash = hash_out;
	sum->interval_ms = interval_ms;
	run_summary_finish(sum, k, &opt, reader, &res, !no_ideal);
	if (summary) {
		output_run_summary_header(atomic_file_stream(summary));
		output_run_summary_row(atomic_file_stream(summary), sum);
	}
	/* commit frees each file, so it leaves its pointer at once */
	atomic_file **outs[] = { &marks, &series, &summary, &mm_stats };
	sigset_t held;
	bool committed = true;
	signals_hold(true, &held);
	for (size_t i = 0; i < G_N_ELEMENTS(outs); i++) {
		atomic_file *f = *outs[i];
		*outs[i] = NULL;
		if (f && committed)
			committed = atomic_file_commit(f, &error);
		else if (f)
			atomic_file_abort(f);
	}
	signals_hold(false, &held);
	if (!committed)
		goto fail;
	if (!quiet) {
		output_summary_text(stdout, trace_label, hash_label, res.sim_end_us, res.records,
				    res.batches, &sum->end);
		if (opt.policy.row) {
			struct ksm_policy_stats ps;
			ksm_policy_stats(k, &ps);
			output_policy_text(stdout, &opt.policy, &ps);
		}
	}
	status = 0;
	goto cleanup;
fail:
	progress_free(progress);
	progress = NULL;
	fprintf(stderr, "ksmsim run: %s\n", error ? error->message : "failed");
	/* A broken invariant is the model's bug, not the input's: status 1. */
	status = g_error_matches(error, LOOP_ERROR, LOOP_ERROR_INVARIANT) ? 1 : EXIT_USAGE;
	g_clear_error(&error);
	atomic_file_abort(marks);
	atomic_file_abort(series);
	atomic_file_abort(summary);
	atomic_file_abort(mm_stats);
cleanup:
	progress_free(progress);
	g_free(sum);
	if (reader)
		trace_reader_free(reader);
	ksm_free(k);
out:
	g_free(policy_label);
	g_array_free(longopts, TRUE);
	g_ptr_array_free(names, TRUE);
	return status;
}
