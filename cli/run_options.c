// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run options: what shapes a replay (cli.h). One table gives every
 * command that replays (run, advise, collide ksm) its getopt entries, the
 * parsing and error wording of each value and its --help lines; a command
 * takes the rows marked for it. The knobs come from knob_table: every knob
 * but run and advisor_mode, in the sysfs spelling and with dashes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "sim/output.h"
#include "traces/check.h"
#include "util/parse.h"
#include "util/size.h"

enum what {
	W_CHECK, W_BATCH_TIME, W_NO_IDEAL, W_COSTS, W_INTERVAL, W_IDEAL_INTERVAL, W_MAX_MEMORY,
	W_MAX_DISK, W_QUIET, W_DOMAIN, W_KERNEL,
};

#define RUN RUN_OPTIONS_RUN
#define ADVISE RUN_OPTIONS_ADVISE
#define KSM RUN_OPTIONS_COLLIDE_KSM
#define TUNE RUN_OPTIONS_TUNE

/* Rows of one name differ in meaning between the commands they are marked for. */
static const struct row {
	const char *name;
	const char *arg;	/* in the help; NULL: the option takes no value */
	unsigned cmds;
	enum what what;
	const char *help;	/* lines split at '\n' */
} rows[] = {
	{ "check", NULL, RUN | ADVISE | KSM | TUNE, W_CHECK,
	  "verify the model's invariants after every batch\n"
	  "(slow); the first violation stops the run (exit 1)" },
	{ "batch-time", NULL, RUN | ADVISE | KSM, W_BATCH_TIME,
	  "batches take their modelled CPU time (default: zero\n"
	  "time, as traces/FORMAT.md says)" },
	{ "no-ideal", NULL, RUN | ADVISE | KSM | TUNE, W_NO_IDEAL,
	  "skip the oracle's walk over every page at each mark,\n"
	  "sample and the end (its columns are left empty)" },
	{ "costs-csv", "FILE", RUN | ADVISE | KSM | TUNE, W_COSTS,
	  "the cost table 'ksmsim bench calibrate -o' wrote\n"
	  "(or 'bench costs --csv'; default: the table built in,\n"
	  "fitted on AMD EPYC, so runs reproduce)" },
	{ "interval-ms", "N", RUN, W_INTERVAL,
	  "the samples' period (default 1000; needs --csv or\n"
	  "--summary-csv)" },
	{ "interval-ms", "N", ADVISE | KSM, W_INTERVAL,
	  "the samples' period (default 1000), behind the means\n"
	  "and peaks over the run" },
	{ "interval-ms", "N", TUNE, W_INTERVAL,
	  "the samples' period (default 100), behind the means\n"
	  "and the times to 50% and 90% of the ideal saving" },
	{ "ideal-interval-ms", "N", RUN, W_IDEAL_INTERVAL,
	  "the oracle's period among the samples (default\n"
	  "60000, rounded up to a multiple of --interval-ms):\n"
	  "each walk visits every page, so at every 1 s sample\n"
	  "it would take longer than the rest of the run\n"
	  "(kernel-build --scale 0.05: 8.0 s against 2.6 s)" },
	{ "max-memory", "SIZE", RUN, W_MAX_MEMORY,
	  "refuse a trace whose model would need more than\n"
	  "SIZE bytes (K, M, G, T: powers of 1024; default:\n"
	  "the machine's MemAvailable); the need is estimated\n"
	  "from the pages written and the mms alive at once" },
	{ "max-disk", "SIZE", RUN, W_MAX_DISK,
	  "a trace's blobs (captured pages) beyond what a\n"
	  "quarter of --max-memory holds are kept in an\n"
	  "unlinked file in $TMPDIR, at most SIZE bytes of them\n"
	  "(default: while its file system keeps 1 GiB free)" },
	{ "max-memory", "SIZE", ADVISE | TUNE, W_MAX_MEMORY,
	  "the memory all runs at once may take (K, M, G, T:\n"
	  "powers of 1024; default: the machine's MemAvailable);\n"
	  "a trace one run of which would need more is refused" },
	{ "domain", "NAME=MM[,MM...]", RUN, W_DOMAIN,
	  "a security domain (tenant, VM): these mms (given\n"
	  "again for more domains; an mm in none is a domain\n"
	  "of its own, a fork child its parent's). NAME and\n"
	  "each MM: 1-64 of A-Z a-z 0-9 _ . - (a trace's mm\n"
	  "names). The summary\n"
	  "then shows merges across domains (--exposure-csv);\n"
	  "--policy selective merges only within one" },
	{ "kernel", "6.1|6.18", RUN | ADVISE | KSM | TUNE, W_KERNEL,
	  "whose mm/ksm.c the model follows (default 6.18, the\n"
	  "live oracle's): 6.1 consults the stable tree before\n"
	  "the checksum, has no smart scan, advisor or merge-any\n"
	  "prctl, and keeps no KSM zero-page count; its knobs\n"
	  "smart_scan and advisor_* (options or trace 'set'\n"
	  "records) and prctl records are refused, and its marks\n"
	  "lack pages_scanned, pages_skipped, ksm_zero_pages\n"
	  "and general_profit (sim/MODEL.md, \"Linux 6.1\")" },
	{ "quiet", NULL, RUN, W_QUIET, "no summary on standard output, no progress" },
	{ "quiet", NULL, ADVISE | TUNE, W_QUIET, "no line per finished run on standard error" },
};

static bool knob_is_option(enum ksm_knob k)
{
	return k != KNOB_RUN && k != KNOB_ADVISOR_MODE;
}

void run_options_init(struct run_options *o, const char *prog, enum run_options_of cmd)
{
	*o = (struct run_options){
		.prog = prog,
		.cmd = cmd,
		.cfg = {
			.ideal = true,
			.interval_ms = 1000,
			.ideal_interval_ms = SAMPLER_IDEAL_INTERVAL_MS,
		},
		.names = g_ptr_array_new_with_free_func(g_free),
	};
}

void run_options_free(struct run_options *o)
{
	ksm_domains_free(o->domains);
	o->domains = NULL;
	o->cfg.model.domains = NULL;
	g_ptr_array_free(o->names, TRUE);
	o->names = NULL;
}

void run_options_add(struct run_options *o, GArray *longopts)
{
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		struct option opt = { rows[i].name, rows[i].arg ? required_argument : no_argument,
				      NULL, CLI_OPT_RUN + (int)i };

		if (rows[i].cmds & o->cmd)
			g_array_append_val(longopts, opt);
	}
	for (int i = 0; i < KNOB_NR; i++) {
		if (!knob_is_option(i))
			continue;
		char *under = g_strdup(knob_table[i].name);
		char *dash = g_strdelimit(g_strdup(under), "_", '-');
		struct option o1 = { dash, required_argument, NULL, CLI_OPT_KNOB + i };
		struct option o2 = { under, required_argument, NULL, CLI_OPT_KNOB + i };

		g_ptr_array_add(o->names, dash);
		g_ptr_array_add(o->names, under);
		g_array_append_val(longopts, o1);
		g_array_append_val(longopts, o2);
	}
}

/* "--NAME wants WANTS, not 'ARG'" (cli_usage_error, the one wording); -1. */
static int refuse(const struct run_options *o, const char *name, const char *wants,
		  const char *arg)
{
	char *option = g_strdup_printf("--%s", name);

	cli_usage_error(o->prog, option, wants, arg);
	g_free(option);
	return -1;
}

/* A value option of the table given a second time: false after one line. */
static bool once(struct run_options *o, const char *name, int c)
{
	char *dash = g_strdelimit(g_strdup_printf("--%s", name), "_", '-');
	bool ok = cli_once(&o->once, o->prog, dash, c);

	g_free(dash);
	return ok;
}

/*
 * --domain NAME=MM[,MM...]: the names as a trace spells an mm (1-64 of
 * A-Z a-z 0-9 _ . -), since NAME goes into the exposure CSV and an MM
 * of other bytes could never match a trace's: false after one line.
 */
static bool domain_names_valid(const struct run_options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	bool ok = true;

	if (!eq)
		return true;	/* ksm_domains_add says what is missing */
	if (eq > arg && !trace_name_valid(arg, (size_t)(eq - arg))) {
		cli_error(o->prog, "--domain '%s': a domain name is 1-%d characters of A-Z a-z 0-9"
			  " _ . -", arg, TRACE_NAME_MAX);
		return false;
	}
	gchar **mms = g_strsplit(eq + 1, ",", -1);
	for (gchar **m = mms; ok && *m; m++)
		if (**m && !trace_name_valid(*m, strlen(*m))) {
			cli_error(o->prog, "--domain '%s': mm '%s' is no trace's mm name (1-%d"
				  " characters of A-Z a-z 0-9 _ . -)", arg, *m, TRACE_NAME_MAX);
			ok = false;
		}
	g_strfreev(mms);
	return ok;
}

/* A knob option the --kernel chosen lacks: false after one line naming both. */
static bool knob_in_kernel(const struct run_options *o, enum ksm_knob knob)
{
	const char *since = ksm_kernel_lacks_knob(o->cfg.model.kernel, knob);

	if (!since)
		return true;
	char *dash = g_strdelimit(g_strdup(knob_table[knob].name), "_", '-');
	cli_error(o->prog, "--%s: Linux %s has no knob %s (added in %s); drop it or use"
		  " --kernel 6.18", dash, ksm_kernel_name(o->cfg.model.kernel),
		  knob_table[knob].name, since);
	g_free(dash);
	return false;
}

static int take_knob(struct run_options *o, enum ksm_knob knob, const char *arg)
{
	const struct knob_info *kn = &knob_table[knob];
	uint64_t v;

	if (!once(o, knob_table[knob].name, CLI_OPT_KNOB + (int)knob) || !knob_in_kernel(o, knob))
		return -1;
	if (!parse_u64(arg, kn->max, &v) || v < kn->min) {
		char *dash = g_strdelimit(g_strdup(kn->name), "_", '-');
		char *wants = g_strdup_printf("%" PRIu64 "..%" PRIu64, kn->min, kn->max);

		refuse(o, dash, wants, arg);
		g_free(wants);
		g_free(dash);
		return -1;
	}
	o->cfg.model.pinned[knob] = true;
	o->cfg.model.pinned_value[knob] = v;
	return 1;
}

int run_option_take(struct run_options *o, int c, const char *arg)
{
	if (c >= CLI_OPT_KNOB && c < CLI_OPT_KNOB + KNOB_NR)
		return take_knob(o, c - CLI_OPT_KNOB, arg);
	if (c < CLI_OPT_RUN || c >= CLI_OPT_RUN + (int)G_N_ELEMENTS(rows))
		return 0;
	const struct row *r = &rows[c - CLI_OPT_RUN];
	struct run_config *cfg = &o->cfg;

	if (r->arg && r->what != W_DOMAIN && !once(o, r->name, c))
		return -1;
	switch (r->what) {
	case W_CHECK: cfg->model.check = true; break;
	case W_BATCH_TIME: cfg->model.batch_time = true; break;
	case W_NO_IDEAL: cfg->ideal = false; break;
	case W_COSTS: cfg->costs_csv = arg; break;
	case W_QUIET: o->quiet = true; break;
	case W_DOMAIN: {
		GError *error = NULL;

		if (!domain_names_valid(o, arg))
			return -1;
		if (!o->domains)
			o->domains = ksm_domains_new();
		if (!ksm_domains_add(o->domains, arg, &error)) {
			cli_error(o->prog, "--domain '%s': %s", arg, error->message);
			g_error_free(error);
			return -1;
		}
		cfg->model.domains = o->domains;
		cfg->model.exposure = true;
		break;
	}
	case W_KERNEL:
		if (!ksm_kernel_parse(arg, &cfg->model.kernel))
			return refuse(o, r->name, "6.1 or 6.18", arg);
		/* a knob option given before --kernel */
		for (int i = 0; i < KNOB_NR; i++)
			if (cfg->model.pinned[i] && !knob_in_kernel(o, i))
				return -1;
		break;
	case W_INTERVAL:
		/* the loop counts microseconds */
		if (!parse_u64(arg, UINT64_MAX / 1000, &cfg->interval_ms) || !cfg->interval_ms)
			return refuse(o, r->name, "a number of milliseconds from 1 to 18446744073709551", arg);
		o->interval_given = true;
		break;
	case W_IDEAL_INTERVAL:
		if (!parse_u64(arg, UINT64_MAX / 1000, &cfg->ideal_interval_ms) ||
		    !cfg->ideal_interval_ms)
			return refuse(o, r->name, "a number of milliseconds from 1 to 18446744073709551", arg);
		break;
	case W_MAX_MEMORY:
		if (!parse_size(arg, &cfg->max_memory) || !cfg->max_memory)
			return refuse(o, r->name, "a size in bytes (K, M, G, T suffixes)", arg);
		cfg->max_memory_given = true;
		break;
	case W_MAX_DISK:
		if (!parse_size(arg, &cfg->max_disk) || !cfg->max_disk)
			return refuse(o, r->name, "a size in bytes (K, M, G, T suffixes)", arg);
		break;
	}
	return 1;
}

/* "  --name ARG", padded to width, then the help's lines, the later ones indented. */
static void put_row(FILE *f, const char *name, const char *arg, const char *help, int width)
{
	char *head = g_strdup_printf("  --%s%s%s", name, arg ? " " : "", arg ? arg : "");

	cli_help_put(f, head, help, width);
	g_free(head);
}

void run_options_help(FILE *f, enum run_options_of cmd, int width)
{
	int col = 0;

	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
		if (rows[i].cmds & cmd)
			put_row(f, rows[i].name, rows[i].arg, rows[i].help, width);
	fprintf(f, "Knobs (sysfs names, '-' or '_'): fix a knob for the whole run; the trace's\n"
		"'set' records for it are then ignored:\n");
	for (int i = 0; i < KNOB_NR; i++) {
		if (!knob_is_option(i))
			continue;
		const struct knob_info *kn = &knob_table[i];
		char *dash = g_strdelimit(g_strdup(kn->name), "_", '-');
		char *item = g_strdup_printf("--%s %s", dash,
					     kn->min == 0 && kn->max == 1 ? "0|1" : "N");
		int len = (int)strlen(item);

		if (col && col + 2 + len > 78) {
			fputc('\n', f);
			col = 0;
		}
		col += fprintf(f, "  %s", item);
		g_free(item);
		g_free(dash);
	}
	fputc('\n', f);
}

const struct page_hash *cli_hash_arg(const char *prog, const char *option, const char *name,
				     bool allow_none)
{
	GError *error = NULL;
	const struct page_hash *h = hash_resolve(name, allow_none, &error);

	if (!h) {
		cli_error(prog, "%s: %s", option, error->message);
		g_error_free(error);
	}
	return h;
}

bool cli_hash_list(const char *prog, const char *option, const char *list, GPtrArray *out)
{
	gchar **names = g_strsplit(list, ",", -1);
	bool ok = true;

	/* g_strsplit gives no piece at all for "": an empty list would run nothing */
	if (!*list) {
		cli_error(prog, "%s: an empty list (name one checksum or more)", option);
		ok = false;
	}
	for (gchar **n = names; *n && ok; n++) {
		const struct page_hash *h = cli_hash_arg(prog, option, *n, false);

		for (guint j = 0; h && j < out->len && ok; j++)
			if (out->pdata[j] == h) {
				cli_error(prog, "%s: %s is listed twice", option, h->name);
				ok = false;
			}
		ok = ok && h;
		if (ok)
			g_ptr_array_add(out, (gpointer)h);
	}
	g_strfreev(names);
	return ok;
}
