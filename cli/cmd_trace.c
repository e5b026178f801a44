// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim trace convert|cat|stat|merge|retime: the trace tools. Every input goes through
 * the validating reader, so each of them also checks a trace; output files
 * appear whole or not at all (the writer renames a temporary into place).
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "traces/check.h"
#include "traces/reader.h"
#include "traces/retime.h"
#include "traces/writer.h"
#include "workloads/digest.h"
#include "util/options.h"
#include "util/file_id.h"
#include "util/parse.h"
#include "util/signals.h"
#include "util/size.h"

#define PROG "ksmsim trace"

/* The options, as parsed (rows[]). */
struct args {
	const char *sub;		/* the subcommand: what for_sub checks against */
	const char *fmt_name, *content, *factor;
	uint64_t max_memory, max_disk;	/* 0: not given */
	bool help;
};
#define AT(f) offsetof(struct args, f)
enum { OPT_MAX_DISK = 256 };
static const struct cli_opt rows[] = {
	{ "format", 'f', CLI_STR, "FMT", AT(fmt_name),
	  .help = "output format of convert: text, gz or binary" },
	{ "content", 'c', CLI_STR, "C", AT(content),
	  .help = "convert: bytes (as IN has it, the default) or digest" },
	{ "factor", 'F', CLI_STR, "F", AT(factor), .help = "retime: the factor, e.g. 0.25 or 1e3" },
	{ "max-memory", 'm', CLI_SIZE, "SIZE", AT(max_memory),
	  .help = "the memory for blobs (captured pages, held for the\n"
		  "whole read; a quarter of SIZE, K, M, G, T, the rest on\n"
		  "disk), and for convert --content digest the most its pages\n"
		  "followed (64 bytes each) may take; default the machine's\n"
		  "MemAvailable" },
	{ "max-disk", OPT_MAX_DISK, CLI_SIZE, "SIZE", AT(max_disk),
	  .help = "the blobs beyond --max-memory's quarter, kept in an\n"
		  "unlinked file in $TMPDIR, take at most SIZE (default:\n"
		  "while that file system keeps 1 GiB free); past it a\n"
		  "trace is refused" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help), .stops = true, .help = "show this help" },
};

static int trace_usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim trace convert [--format text|gz|binary] [--content bytes|digest] IN OUT\n"
		"       ksmsim trace cat IN\n"
		"       ksmsim trace stat IN\n"
		"       ksmsim trace merge IN1 IN2 [IN...] OUT\n"
		"       ksmsim trace retime --factor F IN OUT\n"
		"\n"
		"Read a trace (text, gzip-compressed text or binary, versions 1 to 4\n"
		"(traces/FORMAT.md; version 2 adds blobs of captured pages, version 3 fork,\n"
		"prctl memory-merge and advise hugepage|nohugepage, version 4 digest\n"
		"content), detected from its first\n"
		"bytes; IN '-' is standard input) and check it fully, as 'ksmsim run' would:\n"
		"syntax, time order, mms, mapped pages, knob values, settles.\n"
		"\n"
		"  convert  write IN to OUT. OUT's format comes from its name: .ksmb binary,\n"
		"           .gz gzip-compressed text, anything else text; --format overrides.\n"
		"           OUT '-' is standard output (text unless --format says otherwise).\n"
		"           OUT has IN's version. --content digest (default bytes: as IN\n"
		"           has it) stores each page a write, fill or fillseq leaves as\n"
		"           digest:<XXH3-128 of its bytes>, or zero when all zero, in a\n"
		"           version 4 OUT; partial stores are applied to the page first.\n"
		"           A regular OUT is written under a temporary name and renamed when\n"
		"           complete, so a bad input leaves no OUT behind; a device or FIFO\n"
		"           is written in place. OUT may not be IN.\n"
		"  cat      print IN as canonical text on standard output.\n"
		"  stat     print what IN holds: records per verb and content form, mms,\n"
		"           pages mapped and written, trace duration, settles and marks\n"
		"           (version 3: forks, prctls and hugepage advice too).\n"
		"  merge    interleave the records of several traces by time (ties: the\n"
		"           earlier input first) into OUT, e.g. one recorded guest per input.\n"
		"           Their mm names (fork's child names too) must differ. OUT has the\n"
		"           highest input version; blobs are stored once across all inputs.\n"
		"  retime   write IN to OUT with every record's time multiplied by F (a finite\n"
		"           number more than 0), rounded to the nearest microsecond; order is\n"
		"           kept. All else stays byte for byte: in text only each record's\n"
		"           leading time changes (comments, blank lines, spacing and blob lines\n"
		"           are copied; a time with leading zeros keeps its width if it fits),\n"
		"           a binary is decoded and encoded again with the new times, and gzip\n"
		"           input gives gzip output, whatever OUT's name. Retiming by 2 and then\n"
		"           by 0.5 gives back a trace ksmsim wrote. A time beyond 2^64-1 us after\n"
		"           scaling is an error at its record. IN is read twice, so it cannot be\n"
		"           '-'.\n"
		"\n"
		"Options:\n");
	cli_opts_help(out, rows, G_N_ELEMENTS(rows), NULL, 20);
	fprintf(out,
		"\n"
		"Exit status: 0 success, 2 bad usage or bad input (one line on stderr).\n");
	return out == stdout ? 0 : EXIT_USAGE;
}

/*
 * Blobs are held for the whole read (a record may name any earlier one), and
 * a stream of blob lines is never-ending input like any other: the reader
 * keeps a quarter of the limit's worth in memory and the rest on disk, and
 * stops at --max-disk, as run's does.
 */
static uint64_t max_memory, max_disk;
static bool max_memory_given;

static trace_reader *open_in(const char *in, unsigned int ninputs, GError **error)
{
	trace_reader *r = trace_reader_open(in, error);
	char limit_s[32], *why;

	if (!r || !max_memory)
		return r;
	format_size(max_disk, limit_s, sizeof(limit_s));
	why = g_strdup_printf("with it the blobs kept on disk would need more than %s "
			      "(--max-disk)", limit_s);
	/* a quarter of the limit in memory, shared by the inputs, as run keeps them */
	trace_reader_spill_blobs(r, MAX(1, max_memory / 4 / 4096 / ninputs),
				 max_disk ? MAX(1, max_disk / ninputs) : 0, why);
	g_free(why);
	return r;
}

/* Copies every record of in to out; out is committed only if all went well. */
static int copy(const char *in, const char *out, enum trace_format fmt)
{
	GError *error = NULL;
	struct trace_record *rec = g_new(struct trace_record, 1);
	trace_reader *r;
	int rc, version;

	r = open_in(in, 1, &error);
	if (!r)
		goto fail;
	/* the output keeps the input's version: v1 stays byte-for-byte v1 */
	version = trace_reader_version(r, &error);
	if (version < 0) {
		trace_reader_free(r);
		goto fail;
	}
	trace_writer *w = trace_writer_open_version(out, fmt, version, &error);

	if (!w) {
		trace_reader_free(r);
		goto fail;
	}
	uint64_t n = 0;
	while ((rc = trace_reader_next(r, rec, &error)) > 0) {
		if (!trace_writer_put(w, rec, &error))
			break;
		if ((++n & 0xffff) == 0) {
			char line[64];
			snprintf(line, sizeof(line), "%" G_GUINT64_FORMAT " records converted", n);
			signals_set_progress(line);
		}
	}
	trace_reader_free(r);
	if (error) {
		trace_writer_abort(w);
		goto fail;
	}
	if (!trace_writer_close(w, &error))
		goto fail;
	g_free(rec);
	return 0;
fail:
	g_free(rec);
	return cli_gerror(PROG, error);
}

/*
 * A record each input accepts alone can still clash in the merged trace (an
 * mm name used by two inputs): name the input and line that brought it in,
 * not the output's record number.
 */
static void blame_input(GError **error, const char *in, uint64_t line)
{
	const char *msg = (*error)->message, *problem = strstr(msg, ": record ");

	problem = problem ? strstr(problem + 2, ": ") : NULL;
	char *text = g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s (in the merged trace)", in, line,
				     problem ? problem + 2 : msg);
	g_free((*error)->message);
	(*error)->message = text;
}

/* Interleaves n traces by time into out (format from its name). */
static int merge(char **in, int n, const char *out)
{
	GError *error = NULL;
	trace_reader **r = g_new0(trace_reader *, n);
	struct trace_record *rec = g_new(struct trace_record, n);
	bool *have = g_new0(bool, n);
	trace_writer *w = NULL;
	int version = 1, rc = 0;

	for (int i = 0; i < n; i++) {
		int v;

		r[i] = open_in(in[i], n, &error);
		if (!r[i])
			goto fail;
		v = trace_reader_version(r[i], &error);
		if (v < 0)
			goto fail;
		version = MAX(version, v);
	}
	w = trace_writer_open_version(out, trace_format_from_path(out), version, &error);
	if (!w)
		goto fail;
	for (int i = 0; i < n; i++) {
		rc = trace_reader_next(r[i], &rec[i], &error);
		if (rc < 0)
			goto fail;
		have[i] = rc > 0;
	}
	for (;;) {
		int best = -1;

		for (int i = 0; i < n; i++)
			if (have[i] && (best < 0 || rec[i].t_us < rec[best].t_us))
				best = i;
		if (best < 0)
			break;
		if (!trace_writer_put(w, &rec[best], &error)) {
			/* OUT's own failure (a full disk) is no input's fault */
			if (!g_error_matches(error, TRACE_ERROR, TRACE_ERROR_IO))
				blame_input(&error, in[best], rec[best].line);
			goto fail;
		}
		rc = trace_reader_next(r[best], &rec[best], &error);
		if (rc < 0)
			goto fail;
		have[best] = rc > 0;
	}
	if (!trace_writer_close(w, &error)) {
		w = NULL;
		goto fail;
	}
	w = NULL;
	rc = 0;
	goto out;
fail:
	if (w)
		trace_writer_abort(w);
	rc = cli_gerror(PROG, error);
out:
	for (int i = 0; i < n; i++)
		trace_reader_free(r[i]);
	g_free(r);
	g_free(rec);
	g_free(have);
	return rc;
}

static const char *const form_names[CONTENT_NR_FORMS] = {
	[CONTENT_ZERO] = "zero", [CONTENT_BYTE] = "byte", [CONTENT_RAND] = "rand",
	[CONTENT_WORD] = "word", [CONTENT_PATCH] = "patch", [CONTENT_BYTES] = "bytes",
	[CONTENT_BLOB] = "blob",
	[CONTENT_DIGEST] = "digest",
};

static int stat_trace(const char *in)
{
	GError *error = NULL;
	struct trace_record *rec = g_new(struct trace_record, 1);
	struct trace_check *ck = trace_check_new();
	uint64_t verbs[TRACE_NR_VERBS] = { 0 }, forms[CONTENT_NR_FORMS] = { 0 };
	uint64_t form_pages[CONTENT_NR_FORMS] = { 0 };
	uint64_t records = 0, written = 0, fillseq_pages = 0, max_mapped = 0, scans = 0, last_t = 0;
	uint64_t merge_on = 0;	/* prctl memory-merge 1 */
	uint64_t thp[3] = { 0 }, thp_pages[3] = { 0 };	/* advise, by thp_advice */
	unsigned int max_live = 0;
	trace_reader *r;
	int rc;

	r = open_in(in, 1, &error);
	if (!r)
		goto fail;
	while ((rc = trace_reader_next(r, rec, &error)) > 0) {
		/* the reader has checked it: this only tracks mapped pages and live mms */
		g_free(trace_check_apply(ck, rec, NULL, NULL));
		records++;
		verbs[rec->verb]++;
		last_t = rec->t_us;
		switch (rec->verb) {
		case TRACE_WRITE:
		case TRACE_FILL:
			forms[rec->content.form]++;
			form_pages[rec->content.form] += rec->npages;
			written += rec->npages;
			break;
		case TRACE_FILLSEQ:
			fillseq_pages += rec->npages;
			written += rec->npages;
			break;
		case TRACE_MAP:
			max_mapped = MAX(max_mapped, trace_check_mapped_pages(ck));
			break;
		case TRACE_FORK:
			/* the child maps a copy of the parent's pages */
			max_mapped = MAX(max_mapped, trace_check_mapped_pages(ck));
			/* fall through */
		case TRACE_SPAWN:
			max_live = MAX(max_live, trace_check_live_mms(ck));
			break;
		case TRACE_PRCTL:
			merge_on += rec->value;
			break;
		case TRACE_ADVISE:
			/* the reader allows only 0, hugepage and nohugepage */
			thp[rec->thp_advice]++;
			thp_pages[rec->thp_advice] += rec->npages;
			break;
		case TRACE_SETTLE:
			scans += rec->value;
			break;
		default:
			break;
		}
	}
	if (rc < 0) {
		trace_reader_free(r);
		goto fail;
	}
	printf("file            %s", in);
	/* the reader's own word: opening the path again would drain a pipe or FIFO */
	if (strcmp(in, "-") != 0)
		printf(" (%s, %" G_GUINT64_FORMAT " bytes)", trace_reader_form(r), trace_reader_size(r));
	printf("\nversion         %d\n", trace_reader_version(r, NULL));
	printf("records         %" G_GUINT64_FORMAT "\n", records);
	printf("duration        %" G_GUINT64_FORMAT " us (%.6f s of trace time, last t_us)\n",
	       last_t, last_t / 1e6);
	printf("mms             %" G_GUINT64_FORMAT " spawned, ", verbs[TRACE_SPAWN]);
	if (verbs[TRACE_FORK])
		printf("%" G_GUINT64_FORMAT " forked, ", verbs[TRACE_FORK]);
	printf("at most %u live, %u live at the end\n", max_live, trace_check_live_mms(ck));
	printf("pages mapped    at most %" G_GUINT64_FORMAT " at once (%.1f MiB), %" G_GUINT64_FORMAT
	       " at the end\n", max_mapped, max_mapped * 4096.0 / (1 << 20),
	       trace_check_mapped_pages(ck));
	printf("pages written   %" G_GUINT64_FORMAT "\n", written);
	printf("settles         %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " full scans asked)\n",
	       verbs[TRACE_SETTLE], scans);
	printf("marks           %" G_GUINT64_FORMAT "\n", verbs[TRACE_MARK]);
	if (trace_reader_version(r, NULL) >= 3) {
		printf("forks           %" G_GUINT64_FORMAT "\n", verbs[TRACE_FORK]);
		printf("prctls          %" G_GUINT64_FORMAT " (memory-merge 1: %" G_GUINT64_FORMAT
		       ", memory-merge 0: %" G_GUINT64_FORMAT ")\n", verbs[TRACE_PRCTL], merge_on,
		       verbs[TRACE_PRCTL] - merge_on);
		printf("hugepage advice %" G_GUINT64_FORMAT " ranges, %" G_GUINT64_FORMAT
		       " pages (nohugepage: %" G_GUINT64_FORMAT " ranges, %" G_GUINT64_FORMAT
		       " pages)\n", thp[TRACE_ADVICE_HUGEPAGE], thp_pages[TRACE_ADVICE_HUGEPAGE],
		       thp[TRACE_ADVICE_NOHUGEPAGE], thp_pages[TRACE_ADVICE_NOHUGEPAGE]);
	}
	if (trace_reader_blobs(r))
		printf("blobs           %" G_GUINT64_FORMAT " distinct pages (%.1f MiB), used by %"
		       G_GUINT64_FORMAT " blob pages\n", trace_reader_blobs(r),
		       trace_reader_blobs(r) * 4096.0 / (1 << 20), form_pages[CONTENT_BLOB]);
	printf("\n%-10s %14s\n", "verb", "records");
	for (int v = 0; v < TRACE_NR_VERBS; v++)
		if (verbs[v])
			printf("%-10s %14" G_GUINT64_FORMAT "\n", verb_names[v], verbs[v]);
	printf("\n%-10s %14s %14s\n", "content", "records", "pages");
	for (int f = 0; f < CONTENT_NR_FORMS; f++)
		if (forms[f])
			printf("%-10s %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT "\n", form_names[f],
			       forms[f], form_pages[f]);
	if (verbs[TRACE_FILLSEQ])
		printf("%-10s %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT "\n", "(fillseq)",
		       verbs[TRACE_FILLSEQ], fillseq_pages);
	trace_reader_free(r);
	trace_check_free(ck);
	g_free(rec);
	return 0;
fail:
	trace_check_free(ck);
	g_free(rec);
	return cli_gerror(PROG, error);
}

/* retime --factor F IN OUT, the operands in argv. */
static int retime(int argc, char **argv, const char *factor_arg)
{
	GError *error = NULL;
	double factor;

	if (!factor_arg)
		return cli_error(PROG, "retime needs --factor F");
	/* parse_double takes a subnormal (1e-308) and refuses what rounds to 0 or inf */
	if (!parse_double(factor_arg, &factor) || !(factor > 0))
		return cli_usage_error(PROG, "--factor", "a finite number more than 0 (at least"
				       " 4.9e-324)", factor_arg);
	if (argc != 2) {
		cli_error(PROG, "retime takes IN and OUT");
		return EXIT_USAGE;
	}
	if (strcmp(argv[0], "-") == 0) {
		cli_error(PROG, "retime reads IN twice: IN cannot be '-'");
		return EXIT_USAGE;
	}
	struct file_use uses[] = { { "IN", argv[0], false }, { "OUT", argv[1], true } };

	if (!file_uses_distinct(uses, 2, &error) || !trace_retime(argv[0], argv[1], factor, &error))
		return cli_gerror(PROG, error);
	return 0;
}

/* An option that only one subcommand takes, given to another: false after one line. */
static bool for_sub(const char *sub, int c)
{
	static const struct { int c; const char *sub, *name; } only[] = {
		{ 'f', "convert", "--format" }, { 'c', "convert", "--content" },
		{ 'F', "retime", "--factor" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(only); i++)
		if (only[i].c == c && strcmp(sub, only[i].sub)) {
			cli_error(PROG, "%s is for %s only", only[i].name, only[i].sub);
			return false;
		}
	return true;
}

/* An option just taken, against the subcommand: -1 to go on, else EXIT_USAGE after one line. */
static int check(void *base, int c, const char *arg)
{
	const struct args *a = base;

	if (!for_sub(a->sub, c))
		return EXIT_USAGE;
	if (c == 'c' && strcmp(arg, "digest") && strcmp(arg, "bytes"))
		return cli_usage_error(PROG, "--content", "bytes or digest", arg);
	return -1;
}

/* The options after the subcommand: -1 to go on (operands from optind), else the exit status. */
static int parse(const char *sub, int argc, char **argv, struct args *a)
{
	struct cli_once once = { 0 };
	const struct cli_parser p = { .prog = PROG, .rows = rows, .n = G_N_ELEMENTS(rows),
				      .base = a, .once = &once, .check = check, .in_order = true };
	int status;

	a->sub = sub;
	status = cli_parse(&p, argc, argv);
	return status == 0 ? trace_usage(stdout) : status;	/* 0: --help */
}

int cmd_trace(int argc, char **argv)
{
	const char *sub;
	struct args a = { 0 };
	bool digest = false;
	GError *error = NULL;

	if (argc < 2)
		return cli_error(PROG, "a subcommand is required: convert, cat, stat, merge or retime"
				 " (see 'ksmsim trace --help')");
	sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0)
		return trace_usage(stdout);
	if (strcmp(sub, "convert") && strcmp(sub, "cat") && strcmp(sub, "stat") &&
	    strcmp(sub, "merge") && strcmp(sub, "retime")) {
		cli_error(PROG, "unknown subcommand '%s' (convert, cat, stat, merge "
			"or retime)", sub);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	signals_install(SIGNALS_EXIT);
	int status = parse(sub, argc, argv, &a);

	if (status >= 0)
		return status;
	argc -= optind;
	argv += optind;
	const char *fmt_name = a.fmt_name, *factor = a.factor;

	digest = a.content && !strcmp(a.content, "digest");
	max_memory_given = a.max_memory != 0;
	max_memory = max_memory_given ? a.max_memory : mem_available();
	max_disk = a.max_disk;

	if (strcmp(sub, "convert") == 0) {
		enum trace_format fmt;

		if (argc != 2) {
			cli_error(PROG, "convert takes IN and OUT");
			return EXIT_USAGE;
		}
		if (!fmt_name)
			fmt = strcmp(argv[1], "-") == 0 ? TRACE_FMT_TEXT : trace_format_from_path(argv[1]);
		else if (strcmp(fmt_name, "text") == 0)
			fmt = TRACE_FMT_TEXT;
		else if (strcmp(fmt_name, "gz") == 0)
			fmt = TRACE_FMT_TEXT_GZ;
		else if (strcmp(fmt_name, "binary") == 0)
			fmt = TRACE_FMT_BINARY;
		else {
			cli_error(PROG, "unknown format '%s' (text, gz or binary)",
				fmt_name);
			return EXIT_USAGE;
		}
		struct file_use uses[] = { { "IN", argv[0], false }, { "OUT", argv[1], true } };

		if (!file_uses_distinct(uses, 2, &error))
			return cli_gerror(PROG, error);
		if (digest) {
			/* its blobs held to --max-memory, as every tool here holds them */
			trace_reader *r = open_in(argv[0], 1, &error);
			bool ok = r && digest_convert(r, argv[1], fmt, max_memory, max_memory_given,
						      &error);

			if (r)
				trace_reader_free(r);
			return ok ? 0 : cli_gerror(PROG, error);
		}
		return copy(argv[0], argv[1], fmt);
	}
	if (strcmp(sub, "retime") == 0)
		return retime(argc, argv, factor);
	if (strcmp(sub, "merge") == 0) {
		if (argc < 3) {
			cli_error(PROG, "merge takes two or more traces and OUT");
			return EXIT_USAGE;
		}
		struct file_use *uses = g_new(struct file_use, argc);

		for (int i = 0; i < argc; i++)
			uses[i] = (struct file_use){ i < argc - 1 ? "IN" : "OUT", argv[i], i == argc - 1 };
		bool distinct = file_uses_distinct(uses, argc, &error);

		g_free(uses);
		if (!distinct)
			return cli_gerror(PROG, error);
		return merge(argv, argc - 1, argv[argc - 1]);
	}
	if (argc != 1) {
		cli_error(PROG, "%s takes one trace", sub);
		return EXIT_USAGE;
	}
	if (strcmp(sub, "cat") == 0)
		return copy(argv[0], "-", TRACE_FMT_TEXT);
	return stat_trace(argv[0]);
}
