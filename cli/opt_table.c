// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Option tables (cli.h, as redis's static_configs[]): a row carries an
 * option's name, type, bounds, target and help, so that getopt's entries,
 * the parsing, the one wording of a bad value and the --help lines are
 * loops over the rows.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "cli/cli.h"
#include "util/parse.h"
#include "util/size.h"

static const struct cli_opt *row_of(const struct cli_opt *t, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].val == c)
			return &t[i];
	return NULL;
}

void cli_opts_longopts(const struct cli_opt *t, size_t n, GArray *longopts)
{
	for (size_t i = 0; i < n; i++) {
		struct option o = { t[i].name, t[i].kind == CLI_FLAG ? no_argument : required_argument,
				    NULL, t[i].val };

		g_array_append_val(longopts, o);
	}
}

void cli_opts_optstring(const struct cli_opt *t, size_t n, GString *s)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].val > 0 && t[i].val < 128) {
			g_string_append_c(s, (char)t[i].val);
			if (t[i].kind != CLI_FLAG)
				g_string_append_c(s, ':');
		}
}

static void row_bounds(const struct cli_opt *r, uint64_t *min, uint64_t *max)
{
	*min = r->kind == CLI_KNOB ? knob_table[r->knob].min : r->min;
	*max = r->kind == CLI_KNOB ? knob_table[r->knob].max : r->max;
}

/* What a bad value of r is told it wants (g_free). */
static char *row_wants(const struct cli_opt *r)
{
	uint64_t min, max;

	if (r->wants)
		return g_strdup(r->wants);
	switch (r->kind) {
	case CLI_U64:
	case CLI_UINT:
	case CLI_INT:
	case CLI_KNOB:
		row_bounds(r, &min, &max);
		return g_strdup_printf("%" PRIu64 "..%" PRIu64, min, max);
	case CLI_SIZE:
		return g_strdup("a size in bytes (K, M, G, T suffixes)");
	case CLI_DOUBLE:
		return g_strdup_printf("a number %s %g and at most %g",
				       r->dmin_open ? "more than" : "from", r->dmin, r->dmax);
	default:
		return g_strdup("a value");
	}
}

int cli_opts_take(const char *prog, const struct cli_opt *t, size_t n, struct cli_once *once,
		  int c, const char *arg, void *base)
{
	const struct cli_opt *r = row_of(t, n, c);

	if (!r)
		return 0;
	if (arg && !r->repeats && once && !cli_once(once, prog, cli_opt_name(r), c))
		return -1;
	if (r->kind == CLI_OWN)
		return 0;
	char *at = (char *)base + r->offset;
	uint64_t v, min, max;
	double d;
	bool ok = true;

	switch (r->kind) {
	case CLI_FLAG:
		*(bool *)at = true;
		break;
	case CLI_STR:
		*(const char **)at = arg;
		break;
	case CLI_U64:
	case CLI_UINT:
	case CLI_INT:
	case CLI_KNOB:
		row_bounds(r, &min, &max);
		ok = parse_u64(arg, max, &v) && v >= min;
		if (ok && r->kind == CLI_UINT)
			*(unsigned *)at = (unsigned)v;
		else if (ok && r->kind == CLI_INT)
			*(int *)at = (int)v;
		else if (ok)
			*(uint64_t *)at = v;
		break;
	case CLI_SIZE:
		ok = parse_size(arg, &v) && v;
		if (ok)
			*(uint64_t *)at = v;
		break;
	case CLI_DOUBLE:
		ok = parse_double(arg, &d) && (r->dmin_open ? d > r->dmin : d >= r->dmin) &&
		     d <= r->dmax;
		if (ok)
			*(double *)at = d;
		break;
	case CLI_OWN:
		break;
	}
	if (ok && r->valid)
		ok = r->valid(at);
	if (!ok) {
		char *wants = row_wants(r);

		cli_usage_error(prog, cli_opt_name(r), wants, arg);
		g_free(wants);
		return -1;
	}
	return 1;
}

const char *cli_opt_name(const struct cli_opt *r)
{
	static char buf[80];

	snprintf(buf, sizeof(buf), "--%s", r->name);
	return buf;
}

/* The default of r as base holds it, for the help ("" when it has none to show; g_free). */
static char *row_default(const struct cli_opt *r, const void *base)
{
	const char *at = (const char *)base + r->offset;

	if (!r->show_default || !base)
		return g_strdup("");
	switch (r->kind) {
	case CLI_U64:
	case CLI_KNOB:
		return g_strdup_printf(" (default %" PRIu64 ")", *(const uint64_t *)at);
	case CLI_UINT:
		return g_strdup_printf(" (default %u)", *(const unsigned *)at);
	case CLI_INT:
		return g_strdup_printf(" (default %d)", *(const int *)at);
	case CLI_DOUBLE:
		return g_strdup_printf(" (default %g)", *(const double *)at);
	case CLI_STR:
		return *(const char *const *)at ? g_strdup_printf(" (default %s)",
								 *(const char *const *)at)
						: g_strdup("");
	default:
		return g_strdup("");
	}
}

/* One --help row: HEAD padded to WIDTH (or alone on its line), then HELP's lines, the later ones indented. */
void cli_help_put(FILE *f, const char *head, const char *help, int width)
{
	gchar **lines = g_strsplit(help, "\n", -1);

	if ((int)strlen(head) >= width)
		fprintf(f, "%s\n%*s", head, width, "");
	else
		fprintf(f, "%-*s", width, head);
	for (gchar **l = lines; *l; l++)
		fprintf(f, "%*s%s\n", l == lines ? 0 : width, "", *l);
	g_strfreev(lines);
}

void cli_opts_help(FILE *f, const struct cli_opt *t, size_t n, const void *base, int width)
{
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *r = &t[i];

		if (!r->help)
			continue;
		bool letter = r->val > 0 && r->val < 128;
		char *head = letter ? g_strdup_printf("  -%c, --%s%s%s", r->val, r->name,
						      r->arg ? " " : "", r->arg ? r->arg : "")
				    : g_strdup_printf("  --%s%s%s", r->name, r->arg ? " " : "",
						      r->arg ? r->arg : "");
		char *def = row_default(r, base);
		char *help = g_strconcat(r->help, *r->help ? def : def + (*def == ' '), NULL);

		cli_help_put(f, head, help, width);
		g_free(help);
		g_free(def);
		g_free(head);
	}
}

int cli_opts_parse(const char *prog, const struct cli_opt *t, size_t n, int argc, char **argv,
		   struct cli_once *once, void *base)
{
	const struct cli_parser p = { .prog = prog, .rows = t, .n = n, .base = base, .once = once };

	return cli_parse(&p, argc, argv);
}

/* Option c, taken by whichever part of p owns it: 1, 0 no one's, -1 refused after one line. */
static int parse_one(const struct cli_parser *p, int c, const char *arg,
		     const struct option *lo)
{
	const struct cli_opt *r = row_of(p->rows, p->n, c);
	int took = r ? cli_opts_take(p->prog, p->rows, p->n, p->once, c, arg, p->base) : 0;

	if (took < 0)
		return -1;
	if (r && r->kind == CLI_OWN)
		return p->own ? p->own(p->base, c, arg) : 0;
	if (r)
		return took;
	if (p->take_more && (took = p->take_more(p->more_ctx, c, arg, lo)) != 0)
		return took;
	return p->ro ? run_option_take(p->ro, c, arg) : 0;
}

int cli_parse(const struct cli_parser *p, int argc, char **argv)
{
	GArray *longopts = g_array_new(TRUE, TRUE, sizeof(struct option));
	GString *optstring = g_string_new(p->in_order ? "+:" : ":");
	int status = -1, c;

	/* the rows first: getopt's abbreviations and messages see this order */
	cli_opts_longopts(p->rows, p->n, longopts);
	if (p->more)
		g_array_append_vals(longopts, p->more, p->n_more);
	if (p->ro)
		run_options_add(p->ro, longopts);
	cli_opts_optstring(p->rows, p->n, optstring);
	for (size_t i = 0; i < p->n_more; i++)
		if (p->more[i].val > 0 && p->more[i].val < 128 && !strchr(optstring->str, p->more[i].val)) {
			g_string_append_c(optstring, (char)p->more[i].val);
			if (p->more[i].has_arg != no_argument)
				g_string_append_c(optstring, ':');
		}
	const struct option *lo = (const struct option *)longopts->data;
	/* 0, not 1: glibc's getopt reads the '+' of in_order only when it
	 * starts afresh, and a command may have parsed before (trace's
	 * subcommand, collide's study) */
	optind = 0;
	opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, optstring->str, lo, NULL)) != -1) {
		const struct cli_opt *r = row_of(p->rows, p->n, c);
		int took = c == '?' || c == ':' ? 0 : parse_one(p, c, optarg, lo);

		if (took < 0)
			status = EXIT_USAGE;
		else if (!took)
			status = cli_option_error(p->prog, argv, lo, c);
		else if (r && r->stops)
			status = 0;
		else if (p->check)
			status = p->check(p->base, c, optarg);
	}
	g_string_free(optstring, TRUE);
	g_array_free(longopts, TRUE);
	return status;
}
