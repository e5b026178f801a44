// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cost table (sim/cost_model.h): the terms CSV read back as written,
 * every malformed row refused with FILE:LINE:COLUMN, and the model
 * charging each term exactly count x cost (ksm_cost_counts).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib.h>
#include "hashes/hash.h"
#include "sim/cost_model.h"
#include "sim/run.h"

static char *dir;

static char *path_of(const char *name)
{
	return g_build_filename(dir, name, NULL);
}

/* A complete terms table, each term i at 10 + i, each checksum at 500 + its index, cold depth 9. */
static char *good_table(const char *name, const char *extra_row, const char *drop)
{
	GString *s = g_string_new("# a comment\nterm,ns\n");
	size_t nh;
	const struct page_hash *hs = hash_all(&nh);
	char *p = path_of(name);

	for (int i = 0; i < COST_NR; i++)
		if (i != COST_CHECKSUM && (!drop || strcmp(drop, cost_terms[i].name)))
			g_string_append_printf(s, "%s,%d\n", cost_terms[i].name, 10 + i);
	if (!drop || strcmp(drop, "tree_level_cold_depth"))
		g_string_append(s, "tree_level_cold_depth,9\n");
	for (size_t i = 0; i < nh; i++)
		if (hs[i].fn)
			g_string_append_printf(s, "checksum:%s,%zu.5\n", hs[i].name, 500 + i);
	if (extra_row)
		g_string_append(s, extra_row);
	assert_true(g_file_set_contents(p, s->str, -1, NULL));
	g_string_free(s, TRUE);
	return p;
}

static void test_load(void **state)
{
	struct cost_table t;
	GError *err = NULL;
	char *p = good_table("good.csv", "copy,77\n", NULL);
	size_t nh, xi = 0;
	const struct page_hash *hs = hash_all(&nh);

	for (size_t i = 0; i < nh; i++)
		if (!strcmp(hs[i].name, "xxhash"))
			xi = i;
	cost_table_default(&t, hash_lookup("xxhash"));
	assert_true(cost_table_load(&t, p, hash_lookup("xxhash"), &err));
	for (int i = 0; i < COST_NR; i++)
		if (i != COST_CHECKSUM)
			assert_float_equal(cost_get(&t, i), 10 + i, 0);
	assert_float_equal(t.checksum_ns, 500 + xi + 0.5, 0);
	assert_float_equal(t.copy_ns, 77, 0);
	assert_float_equal(t.cold_depth, 9, 0);
	/* none computes no checksum */
	assert_true(cost_table_load(&t, p, hash_lookup("none"), &err));
	assert_float_equal(t.checksum_ns, 0, 0);

	/* what cost_table_write writes reads back */
	char *w = path_of("written.csv");
	FILE *f = fopen(w, "w");
	const char *names[] = { "xxhash" };
	double ns[] = { 123.25 };
	struct cost_table u;

	cost_table_default(&u, hash_lookup("xxhash"));
	u.merge_ns = 4321;
	cost_table_write(f, &u, names, ns, 1);
	fclose(f);
	/* one checksum only: the table lacks the others and is refused for that */
	assert_false(cost_table_load(&t, w, hash_lookup("xxhash"), &err));
	assert_non_null(strstr(err->message, "no row 'checksum:"));
	g_clear_error(&err);
	unlink(w);
	g_free(w);
	unlink(p);
	g_free(p);
}

/* Each bad table is refused with one line: FILE:LINE:COLUMN: what. */
static void test_refused(void **state)
{
	static const struct {
		const char *extra, *drop, *want;
	} cases[] = {
		{ NULL, "merge", "1: no row 'merge'" },
		{ "flurb,3\n", NULL, "1: unknown row 'flurb'" },
		{ "checksum:md5,3\n", NULL, "1: unknown row 'checksum:md5'" },
		{ "merge,-3\n", "merge", "7: merge: negative cost '-3'" },
		{ "merge,fast\n", "merge", "7: merge: 'fast' is not a number of ns" },
		{ "merge,\n", "merge", "7: merge: '' is not a number of ns" },
		{ "merge,nan\n", "merge", "7: merge: 'nan' is not a number of ns" },
		{ "visit,3\n", NULL, "1: row 'visit' given twice" },
		{ "merge,3,4\n", "merge", "8: a third field" },
		{ NULL, "tree_level_cold_depth", "1: no row 'tree_level_cold_depth'" },
		{ "tree_level_cold_depth,2.5\n", "tree_level_cold_depth",
		  "23: tree_level_cold_depth: '2.5' is not a whole number of tree levels" },
		{ "tree_level_cold_depth,96\n", "tree_level_cold_depth",
		  "23: tree_level_cold_depth: '96' is not a whole number of tree levels" },
		{ "tree_level_cold_depth,4\n", NULL, "1: row 'tree_level_cold_depth' given twice" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char name[32], *text = NULL;
		struct cost_table t;
		GError *err = NULL;
		unsigned lines = 0;

		snprintf(name, sizeof(name), "bad%zu.csv", i);
		char *p = good_table(name, cases[i].extra, cases[i].drop);

		assert_true(g_file_get_contents(p, &text, NULL, NULL));
		for (char *c = text; *c; c++)
			lines += *c == '\n';
		g_free(text);
		cost_table_default(&t, hash_lookup("xxhash"));
		if (cost_table_load(&t, p, hash_lookup("xxhash"), &err))
			fail_msg("case %zu: accepted", i);
		/* one line: the file, the line (the bad row, last; a missing row: past the end), the column */
		char *want = g_strdup_printf("%s:%u:%s", p, cases[i].extra ? lines : lines + 1,
					     cases[i].want);
		assert_null(strchr(err->message, '\n'));
		if (!g_str_has_prefix(err->message, want))
			fail_msg("case %zu: got '%s', wanted '%s...'", i, err->message, want);
		g_free(want);
		g_error_free(err);
		unlink(p);
		g_free(p);
	}
	/* neither form's header */
	char *p = path_of("nohdr.csv");
	struct cost_table t;
	GError *err = NULL;

	assert_true(g_file_set_contents(p, "# x\nfoo,bar\n", -1, NULL));
	assert_false(cost_table_load(&t, p, hash_lookup("xxhash"), &err));
	assert_non_null(strstr(err->message, "nohdr.csv:2:1: not a cost table"));
	g_clear_error(&err);
	unlink(p);
	g_free(p);
}

/* The model charges count x cost for every term, and nothing else. */
static void test_charges(void **state)
{
	static const char trace[] =
		"ksmtrace 1\n"
		"0 set pages_to_scan 500\n0 set sleep_millisecs 10\n0 set max_page_sharing 16\n"
		"0 spawn a\n0 map a 0x100 300\n0 advise a 0x100 300 mergeable\n"
		"0 fillseq a 0x100 200 7\n0 fill a 0x1c8 100 byte:5a\n"
		"0 spawn b\n0 map b 0x100 300\n0 advise b 0x100 300 mergeable\n"
		"0 fillseq b 0x100 200 7\n0 fill b 0x1c8 100 zero\n"
		"0 set run 1\n0 settle 4\n0 write a 0x100 rand:1\n0 settle 3\n0 mark end\n";
	char *tp = path_of("t.ksmt");

	assert_true(g_file_set_contents(tp, trace, -1, NULL));
	for (int term = 0; term < COST_NR; term++) {
		/* every term at 0 but this one */
		GString *s = g_string_new("term,ns\n");
		size_t nh;
		const struct page_hash *hs = hash_all(&nh);

		for (int i = 0; i < COST_NR; i++)
			if (i != COST_CHECKSUM)
				g_string_append_printf(s, "%s,%s\n", cost_terms[i].name,
						       i == term ? "7.5" : "0");
		g_string_append(s, "tree_level_cold_depth,2\n");	/* so that some levels are */
		for (size_t i = 0; i < nh; i++)
			if (hs[i].fn)
				g_string_append_printf(s, "checksum:%s,%s\n", hs[i].name,
						       term == COST_CHECKSUM ? "7.5" : "0");
		char *cp = path_of("one.csv");

		assert_true(g_file_set_contents(cp, s->str, -1, NULL));
		g_string_free(s, TRUE);

		struct run_config cfg = { .trace = tp, .costs_csv = cp };
		struct run run;
		struct loop_sinks sinks = { 0 };
		struct loop_result res;
		struct ksm_truth t;
		struct cost_counts n;
		GError *err = NULL;

		assert_true(run_config_resolve(&cfg, &err));
		assert_true(run_open(&run, &cfg, &err));
		assert_true(run_replay(&run, &sinks, &res, &err));
		ksm_truth(run.k, &t);
		ksm_cost_counts(run.k, &n);
		run_close(&run);
		assert_float_equal(t.cpu_ns, 7.5 * (double)n.n[term], 1e-6);
		/* the trace exercises every term but the THP split */
		if (term != COST_THP_SPLIT && term != COST_SKIP)
			assert_true(n.n[term] > 0);
		unlink(cp);
		g_free(cp);
	}
	unlink(tp);
	g_free(tp);
}

/*
 * One price a checksum: the built-in table, whose checksum row is the
 * registry's cold_ns, is the fitted table it says it is (every term and
 * every hash's row of bench/tables/costs-amd-epyc.csv).
 */
static void test_builtin_is_fitted_table(void **state)
{
	(void)state;
	const char *csv = SOURCE_ROOT "/bench/tables/costs-amd-epyc.csv";
	size_t nh;
	const struct page_hash *hs = hash_all(&nh);

	for (size_t i = 0; i < nh; i++) {
		struct cost_table def, fit;
		GError *err = NULL;

		cost_table_default(&def, &hs[i]);
		cost_table_default(&fit, NULL);
		assert_true(cost_table_load(&fit, csv, &hs[i], &err));
		double price = hs[i].fn ? hs[i].cold_ns : 0;
		assert_float_equal(def.checksum_ns, price, 0);
		assert_float_equal(def.checksum_ns, fit.checksum_ns, 1e-9);
		for (int t = 0; t < COST_NR; t++)
			assert_float_equal(cost_get(&def, t), cost_get(&fit, t), 1e-9);
		assert_float_equal(def.cold_depth, fit.cold_depth, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_is_fitted_table),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_charges),
	};
	dir = g_dir_make_tmp("ksmsim-costs-XXXXXX", NULL);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	rmdir(dir);
	g_free(dir);
	return rc;
}
