// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cost table (cost_model.h): the built-in figures, and the two CSV
 * forms it is read from.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include "hashes/hash.h"
#include "sim/cost_model.h"
#include "util/parse.h"

#define TERM(f, n, w) { n, offsetof(struct cost_table, f), w }
const struct cost_term_info cost_terms[COST_NR] = {
	[COST_VISIT] = TERM(visit_ns, "visit", "an rmap_item visited (scan_get_next_rmap_item)"),
	[COST_CHECKSUM] = TERM(checksum_ns, "checksum", "a page checksum (calc_checksum)"),
	[COST_TREE_LEVEL] = TERM(node_ns, "tree_level",
				 "a tree level, or a compare decided in the first 8 bytes"),
	[COST_MEMCMP_LONG] = TERM(memcmp_ns, "memcmp_long",
				  "a compare whose first 8 bytes tie (memcmp_pages)"),
	[COST_MEMCMP_BYTE] = TERM(memcmp_byte_ns, "memcmp_byte", "a byte a compare read"),
	[COST_MERGE] = TERM(merge_ns, "merge", "a merge (write_protect_page, replace_page)"),
	[COST_STABLE_INSERT] = TERM(stable_insert_ns, "stable_insert",
				    "a stable node inserted (stable_tree_insert)"),
	[COST_RMAP_ITEM] = TERM(rmap_item_ns, "rmap_item_new",
				"an rmap_item allocated (get_next_rmap_item)"),
	[COST_THP_SPLIT] = TERM(thp_split_ns, "thp_split", "a THP split by ksmd (split_huge_page)"),
	[COST_SKIP] = TERM(skip_ns, "smart_scan_skip", "an rmap_item smart scan skipped"),
	[COST_FULL_PASS] = TERM(full_pass_ns, "full_pass",
				"a pass's end and start (lru_add_drain_all, tree reset)"),
	[COST_CHAIN_STEP] = TERM(chain_step_ns, "chain_step",
				 "a dup of a stable-node chain looked at (stable_node_dup)"),
	[COST_TREE_COLD] = TERM(cold_ns, "tree_level_cold",
				"a tree level deeper than tree_level_cold_depth (from memory)"),
	[COST_REVISIT] = TERM(revisit_ns, "revisit",
			      "a visit finding its page merged, in a KSM page the last visit did not meet"),
	[COST_TREE_SCAN] = TERM(tree_scan_ns, "tree_level_scan",
				"a tree level's own work in the scan loop (counted as tree_level)"),
};
#undef TERM

/*
 * The built-in table: what `ksmsim bench calibrate` fitted against the live
 * ksmd on the reference machine (AMD EPYC, bench/tables/costs-amd-epyc.csv,
 * its fit in costs-amd-epyc.txt); copy and the dirty-bit flush as `bench
 * costs` measured them.
 */
static const struct cost_table builtin = {
	.visit_ns = 270.667, .node_ns = 60.157, .memcmp_ns = 0, .memcmp_byte_ns = 0,
	.merge_ns = 0, .stable_insert_ns = 0, .rmap_item_ns = 0, .thp_split_ns = 0,
	.skip_ns = 875.732, .full_pass_ns = 8867.979, .chain_step_ns = 28.140,
	.cold_ns = 491.788, .cold_depth = 14, .revisit_ns = 308.559, .tree_scan_ns = 0,
	.copy_ns = 920, .dirty_clear_ns = 3100,	/* bench costs' wrprotect-flush, local flush */
};
void cost_table_default(struct cost_table *t, const struct page_hash *h)
{
	*t = builtin;
	/* the checksum's price is its registry row's (the same fit); none computes none */
	if (!h)
		h = hash_lookup(HASH_DEFAULT);
	t->checksum_ns = h->fn ? h->cold_ns : 0;
}

/* ---------------------------------------------------- the bench costs form */

static bool load_bench_costs(struct cost_table *t, const char *path, const struct page_hash *h,
			     GError **error)
{
	GArray *rows = hash_costs_read(path, error);
	if (!rows)
		return false;
	const struct hash_cost *c;
	if (h && !h->fn)
		t->checksum_ns = 0;
	else if (h && (c = hash_costs_find(rows, h->name)))
		t->checksum_ns = c->cold_ns;
	if ((c = hash_costs_find(rows, "memcmp")))
		t->memcmp_ns = c->cold_ns;
	if ((c = hash_costs_find(rows, "copy")))
		t->copy_ns = c->cold_ns;
	if ((c = hash_costs_find(rows, "wrprotect-flush")))
		t->dirty_clear_ns = c->cold_ns;
	g_array_free(rows, TRUE);
	return true;
}

/* ---------------------------------------------------- the terms form */

#define TERMS_HEADER "term,ns"
#define CHECKSUM_PREFIX "checksum:"
#define MAX_LINE 256
#define COLD_DEPTH_ROW "tree_level_cold_depth"

static bool bad(GError **error, const char *path, unsigned line, unsigned col, const char *fmt,
		...) G_GNUC_PRINTF(5, 6);
static bool bad(GError **error, const char *path, unsigned line, unsigned col, const char *fmt,
		...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%u:%u: %s", path, line, col, msg);
	g_free(msg);
	return false;
}

/* The row a name is: a term (*term), a hash's checksum (*hash), copy or wrprotect-flush. */
enum row_kind { ROW_TERM, ROW_HASH, ROW_COPY, ROW_FLUSH, ROW_DEPTH, ROW_UNKNOWN };
static enum row_kind row_kind(const char *name, int *term, const struct page_hash **hash)
{
	for (int i = 0; i < COST_NR; i++)
		if (i != COST_CHECKSUM && !strcmp(name, cost_terms[i].name))
			return *term = i, ROW_TERM;
	if (g_str_has_prefix(name, CHECKSUM_PREFIX)) {
		const struct page_hash *h = hash_lookup(name + strlen(CHECKSUM_PREFIX));

		if (h && h->fn && !strcmp(h->name, name + strlen(CHECKSUM_PREFIX)))
			return *hash = h, ROW_HASH;
		return ROW_UNKNOWN;
	}
	if (!strcmp(name, "copy"))
		return ROW_COPY;
	if (!strcmp(name, "wrprotect-flush"))
		return ROW_FLUSH;
	if (!strcmp(name, COLD_DEPTH_ROW))
		return ROW_DEPTH;
	return ROW_UNKNOWN;
}

static bool load_terms(struct cost_table *t, const char *path, char **lines,
		       const struct page_hash *hash, GError **error)
{
	size_t nh;
	const struct page_hash *hs = hash_all(&nh);
	bool seen_term[COST_NR] = { false };
	bool *seen_hash = g_new0(bool, nh);
	unsigned seen_line_copy = 0, seen_line_flush = 0, seen_line_depth = 0, ln = 0, header = 0;
	bool ok = true;
	double hash_ns = -1;

	for (char **p = lines; ok && *p; p++) {
		char *l = *p, *comma;
		size_t n = strlen(l);
		double v;
		int term = -1;
		const struct page_hash *h = NULL;

		ln++;
		if (n && l[n - 1] == '\r')
			l[--n] = '\0';
		if (!n || l[0] == '#')
			continue;
		if (!header) {
			header = ln;	/* checked by the caller */
			continue;
		}
		comma = strchr(l, ',');
		if (!comma) {
			ok = bad(error, path, ln, (unsigned)n + 1, "expected 'name,ns'");
			break;
		}
		*comma = '\0';
		if (strchr(comma + 1, ',')) {
			ok = bad(error, path, ln, (unsigned)(strchr(comma + 1, ',') - l) + 1,
				 "a third field: rows are 'name,ns'");
			break;
		}
		enum row_kind k = row_kind(l, &term, &h);
		if (k == ROW_UNKNOWN) {
			ok = bad(error, path, ln, 1, "unknown row '%s' (terms: %s, ..., %s; "
				 "checksum:HASH for a hash 'ksmsim hashes' lists)", l,
				 cost_terms[0].name, cost_terms[COST_NR - 1].name);
			break;
		}
		const char *num = comma + 1;
		unsigned col = (unsigned)(num - l) + 1;
		if (!parse_double(num, &v)) {
			ok = bad(error, path, ln, col, "%s: '%s' is not a number of ns", l, num);
			break;
		}
		if (v < 0 || (v == 0 && *num == '-')) {
			ok = bad(error, path, ln, col, "%s: negative cost '%s'", l, num);
			break;
		}
		bool *seen = k == ROW_TERM ? &seen_term[term] : NULL;
		if (k == ROW_HASH)
			seen = &seen_hash[h - hs];
		if (k == ROW_DEPTH && (v != (double)(unsigned)v || v >= COST_DEPTHS)) {
			ok = bad(error, path, ln, col, "%s: '%s' is not a whole number of tree "
				 "levels from 0 to %d", l, num, COST_DEPTHS - 1);
			break;
		}
		unsigned *seen_line = k == ROW_COPY ? &seen_line_copy
				      : k == ROW_FLUSH ? &seen_line_flush : &seen_line_depth;
		if ((seen && *seen) || (!seen && *seen_line)) {
			ok = bad(error, path, ln, 1, "row '%s' given twice", l);
			break;
		}
		if (seen)
			*seen = true;
		else
			*seen_line = ln;
		switch (k) {
		case ROW_TERM:
			cost_set(t, term, v);
			break;
		case ROW_HASH:
			if (h == hash)
				hash_ns = v;
			break;
		case ROW_COPY:
			t->copy_ns = v;
			break;
		case ROW_FLUSH:
			t->dirty_clear_ns = v;
			break;
		case ROW_DEPTH:
			t->cold_depth = v;
			break;
		case ROW_UNKNOWN:
			break;
		}
	}
	/* every term and every hash's checksum: a table that lacks one is a mistake, */
	/* named at the line past the end (a trailing newline ends the last line) */
	ln = g_strv_length(lines);
	if (ln && !*lines[ln - 1])
		ln--;
	for (int i = 0; ok && i < COST_NR; i++)
		if (i != COST_CHECKSUM && !seen_term[i])
			ok = bad(error, path, ln + 1, 1, "no row '%s' (%s): every term needs one",
				 cost_terms[i].name, cost_terms[i].what);
	if (ok && !seen_line_depth)
		ok = bad(error, path, ln + 1, 1, "no row '" COLD_DEPTH_ROW "' (how many levels "
			 "of a tree search stay in the caches; `bench calibrate` fits it)");
	for (size_t i = 0; ok && i < nh; i++)
		if (hs[i].fn && !seen_hash[i])
			ok = bad(error, path, ln + 1, 1, "no row '" CHECKSUM_PREFIX "%s': every "
				 "checksum needs one", hs[i].name);
	if (ok)
		t->checksum_ns = hash && !hash->fn ? 0 : hash_ns >= 0 ? hash_ns : t->checksum_ns;
	g_free(seen_hash);
	return ok;
}

bool cost_table_load(struct cost_table *t, const char *path, const struct page_hash *hash,
		     GError **error)
{
	char *text = NULL, **lines;
	GError *err = NULL;
	bool ok;

	if (!g_file_get_contents(path, &text, NULL, &err)) {
		g_set_error(error, G_FILE_ERROR, err->code, "%s: %s", path,
			    err->code == G_FILE_ERROR_NOENT ? "no such file" : g_strerror(errno));
		g_error_free(err);
		return false;
	}
	lines = g_strsplit(text, "\n", -1);
	g_free(text);
	/* the first line that is not a comment says which form */
	char **first = lines;
	unsigned ln = 1;

	while (*first && ((*first)[0] == '#' || !**first || !strcmp(*first, "\r")))
		first++, ln++;
	if (*first && (!strcmp(*first, TERMS_HEADER) || !strcmp(*first, TERMS_HEADER "\r")))
		ok = load_terms(t, path, lines, hash, error);
	else if (*first && g_str_has_prefix(*first, "name,"))
		ok = load_bench_costs(t, path, hash, error);
	else
		ok = bad(error, path, ln, 1, "not a cost table: the header is neither '"
			 TERMS_HEADER "' (bench calibrate) nor 'name,kind,...' (bench costs)");
	g_strfreev(lines);
	return ok;
}

void cost_table_write(FILE *f, const struct cost_table *t, const char *const *hash_names,
		      const double *checksum_ns, size_t nhashes)
{
	fputs(TERMS_HEADER "\n", f);
	for (int i = 0; i < COST_NR; i++)
		if (i != COST_CHECKSUM)
			fprintf(f, "%s,%.3f\n", cost_terms[i].name, cost_get(t, i));
	fprintf(f, COLD_DEPTH_ROW ",%.0f\n", t->cold_depth);
	for (size_t i = 0; i < nhashes; i++)
		fprintf(f, CHECKSUM_PREFIX "%s,%.3f\n", hash_names[i], checksum_ns[i]);
	fprintf(f, "copy,%.3f\nwrprotect-flush,%.3f\n", t->copy_ns, t->dirty_clear_ns);
}
