// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The model's ksmd CPU by term, in the live profile's terms, and the
 * comparison of two profiles (profile.h). The model prices a few kinds of
 * work as one where the live profile names their parts (a visit: the
 * page-table walk, the mmap lock and the scan loop's own work; a tree
 * level: the compare, the stable node's folio, the unstable node's page
 * table walk), so both sides are
 * folded into the groups below before shares are compared.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "sim/output.h"
#include "sim/profile.h"
#include "util/escape.h"
#include "util/parse.h"

/* The groups both sides can name, and the live terms each folds. */
static const struct {
	const char *group;
	const char *parts[4];
} groups[] = {
	{ "visit", { "page_table_walk", "mmap_lock", "scan", "visit" } },
	{ "checksum", { "checksum" } },
	{ "tree_search", { "page_compare", "stable_folio", "tree_page", "tree_search" } },
	{ "merge", { "merge" } },
	{ "rmap_item", { "rmap_item" } },
	{ "chain_walk", { "chain_walk" } },
	{ "full_pass", { "full_pass" } },
	{ "other", { "other" } },
};
#define NGROUPS G_N_ELEMENTS(groups)

/* Which group each of the model's cost terms is charged to. */
static const int model_group[COST_NR] = {
	[COST_VISIT] = 0, [COST_REVISIT] = 0, [COST_SKIP] = 0, [COST_TREE_SCAN] = 0,
	[COST_CHECKSUM] = 1,
	[COST_TREE_LEVEL] = 2, [COST_TREE_COLD] = 2, [COST_MEMCMP_LONG] = 2, [COST_MEMCMP_BYTE] = 2,
	[COST_MERGE] = 3, [COST_STABLE_INSERT] = 3, [COST_THP_SPLIT] = 3,
	[COST_RMAP_ITEM] = 4,
	[COST_CHAIN_STEP] = 5,
	[COST_FULL_PASS] = 6,
};

/*
 * What a group's count is: one event of its main term (a visit, a
 * checksum, a tree level, a merge, an rmap_item made, a chain step, a
 * pass), so that live ms over this count is a price; -1: none.
 */
static const int group_event[G_N_ELEMENTS(groups)] = {
	COST_VISIT, COST_CHECKSUM, COST_TREE_LEVEL, COST_MERGE, COST_RMAP_ITEM, COST_CHAIN_STEP,
	COST_FULL_PASS, -1,
};

void profile_model_header(FILE *f, const char *trace_label)
{
	char *l = escape_line(trace_label);

	fprintf(f, "# ksmsim run --profile-csv: trace %s; the model's ksmd CPU by term at each "
		"mark (count: the model's events of the term's main kind: visits, checksums, "
		"tree levels, merges, rmap_items made, chain steps, passes; ms: the cost table's "
		"prices times the counts of every term in the group; cumulative; sim/MODEL.md \"ksmd measured by function\")\n", l);
	g_free(l);
	fputs("label,term,count,share,ms\n", f);
}

void profile_model_row(FILE *f, const char *label, const struct cost_counts *c,
		       const struct cost_table *t)
{
	double ns[NGROUPS] = { 0 }, total = 0;
	uint64_t n[NGROUPS] = { 0 };
	char *l = g_strdup(label);

	for (char *p = l; *p; p++)	/* a label is one CSV field */
		if (*p == ',' || *p == '\n' || *p == '\r')
			*p = ' ';
	for (int i = 0; i < COST_NR; i++) {
		double v = (double)c->n[i] * cost_get(t, i);

		ns[model_group[i]] += v;
		if (group_event[model_group[i]] == i)
			n[model_group[i]] += c->n[i];
		total += v;
	}
	for (size_t g = 0; g < NGROUPS; g++)
		fprintf(f, "%s,%s,%" G_GUINT64_FORMAT ",%.4f,%.3f\n", l, groups[g].group,
			(guint64)n[g], total > 0 ? ns[g] / total : 0, ns[g] / 1e6);
	g_free(l);
}

/* ------------------------------------------------------------ the diff */

size_t profile_ngroups(void)
{
	return NGROUPS;
}

const char *profile_group_name(size_t g)
{
	return g < NGROUPS ? groups[g].group : NULL;
}

int profile_term_group(enum cost_term t)
{
	return t < COST_NR ? model_group[t] : -1;
}

int profile_group_of(const char *term)
{
	for (size_t g = 0; g < NGROUPS; g++)
		for (size_t k = 0; k < G_N_ELEMENTS(groups[g].parts) && groups[g].parts[k]; k++)
			if (!strcmp(groups[g].parts[k], term))
				return (int)g;
	return -1;
}

/* The last mark's share of each group in path; *label that mark's. */
static bool read_profile(const char *path, double share[NGROUPS], char **label, GError **error)
{
	char *text = NULL;
	GError *err = NULL;

	if (!g_file_get_contents(path, &text, NULL, &err)) {
		g_set_error(error, G_FILE_ERROR, err->code, "%s: %s", path,
			    err->code == G_FILE_ERROR_NOENT ? "no such file" : err->message);
		g_error_free(err);
		return false;
	}
	char **lines = g_strsplit(text, "\n", -1);
	int col_label = -1, col_term = -1, col_share = -1, ncols = 0;
	unsigned ln = 0, rows = 0;
	bool ok = true;

	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	g_free(text);
	*label = NULL;
	for (char **p = lines; ok && *p; p++) {
		char *l = *p;
		size_t len = strlen(l);

		ln++;
		if (len && l[len - 1] == '\r')
			l[--len] = '\0';
		if (!len || l[0] == '#')
			continue;
		char **f = g_strsplit(l, ",", -1);
		int nf = (int)g_strv_length(f);

		if (col_label < 0) {
			for (int i = 0; i < nf; i++) {
				if (!strcmp(f[i], "label"))
					col_label = i;
				else if (!strcmp(f[i], "term"))
					col_term = i;
				else if (!strcmp(f[i], "share"))
					col_share = i;
			}
			ncols = nf;
			if (col_label < 0 || col_term < 0 || col_share < 0) {
				g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
					    "%s:%u: not a profile: the header needs label, term and "
					    "share (ksmsim live --profile, ksmsim run --profile-csv)",
					    path, ln);
				ok = false;
			}
			g_strfreev(f);
			continue;
		}
		double v;
		if (nf != ncols) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				    "%s:%u: %d fields, the header has %d", path, ln, nf, ncols);
			ok = false;
		} else if (!parse_double(f[col_share], &v) || v < 0 || v > 1) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				    "%s:%u: share '%s' is not a number from 0 to 1", path, ln,
				    f[col_share]);
			ok = false;
		} else if (profile_group_of(f[col_term]) < 0) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				    "%s:%u: unknown term '%s'", path, ln, f[col_term]);
			ok = false;
		} else {
			/* a new mark starts when the label changes or a term comes again */
			if (!*label || strcmp(*label, f[col_label]) ||
			    g_hash_table_contains(seen, f[col_term])) {
				g_hash_table_remove_all(seen);
				g_free(*label);
				*label = g_strdup(f[col_label]);
				memset(share, 0, sizeof(double) * NGROUPS);
			}
			g_hash_table_add(seen, g_strdup(f[col_term]));
			share[profile_group_of(f[col_term])] += v;
			rows++;
		}
		g_strfreev(f);
	}
	g_strfreev(lines);
	g_hash_table_destroy(seen);
	if (ok && !rows) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: no profile rows", path);
		ok = false;
	}
	if (!ok) {
		g_free(*label);
		*label = NULL;
	}
	return ok;
}

int profile_diff(const char *a, const char *b, double tol_pp, FILE *out, GError **error)
{
	double sa[NGROUPS] = { 0 }, sb[NGROUPS] = { 0 };
	char *la = NULL, *lb = NULL;
	unsigned outside = 0;
	const char *worst = NULL;
	double worst_pp = 0;

	if (!read_profile(a, sa, &la, error))
		return -1;
	if (!read_profile(b, sb, &lb, error)) {
		g_free(la);
		return -1;
	}
	fprintf(out, "shares at the last mark (A: %s, B: %s), in percent; tolerance +-%.1f pp\n",
		la, lb, tol_pp);
	fprintf(out, "%-14s %8s %8s %8s\n", "term", "A %", "B %", "B-A pp");
	for (size_t g = 0; g < NGROUPS; g++) {
		double d = 100 * (sb[g] - sa[g]);
		bool bad = fabs(d) > tol_pp;

		fprintf(out, "%-14s %8.1f %8.1f %+8.1f%s\n", groups[g].group, 100 * sa[g],
			100 * sb[g], d, bad ? "  outside" : "");
		if (bad)
			outside++;
		if (fabs(d) > fabs(worst_pp))
			worst_pp = d, worst = groups[g].group;
	}
	if (outside)
		fprintf(out, "%u term%s outside +-%.1f pp (the most: %s, %+.1f pp)\n", outside,
			outside == 1 ? "" : "s", tol_pp, worst, worst_pp);
	else
		fprintf(out, "every term's share within +-%.1f pp\n", tol_pp);
	g_free(la);
	g_free(lb);
	return outside ? 1 : 0;
}

/* ---- --profile-csv: an output of `ksmsim run` (output.h) ---- */

static void profile_start(FILE *f, const struct output_run *r)
{
	profile_model_header(f, r->trace_label);
}

static void profile_mark(FILE *f, const struct output_run *r, const char *label, uint64_t t_us,
			 struct ksm *k)
{
	struct cost_counts c;

	ksm_cost_counts(k, &c);
	profile_model_row(f, label, &c, r->costs);
}

const struct run_output profile_output = {
	"profile-csv",
	"at each 'mark', ksmd's modelled CPU by term in the\n"
	"terms of 'ksmsim live --profile' (label,term,count,\n"
	"share,ms; compare with 'ksmsim diff --profile')",
	.start = profile_start, .mark = profile_mark,
};
