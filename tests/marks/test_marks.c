// SPDX-License-Identifier: GPL-2.0-or-later
/* marks/: the column registry, the writers both sides share, the per-mm rows, the diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib.h>
#include "marks/marks.h"

/* What a writer printed. */
struct out {
	FILE *f;
	char *text;
	size_t len;
};

static void out_open(struct out *o)
{
	o->text = NULL;
	o->f = open_memstream(&o->text, &o->len);
	assert_non_null(o->f);
}

static char *out_close(struct out *o)
{
	fclose(o->f);
	return o->text;
}

static void test_registry(void **state)
{
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	size_t in_format = 0, thp = 0;

	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];

		assert_non_null(col->name);	/* every enum marks_col has its row */
		assert_non_null(col->help);
		assert_false(g_hash_table_contains(seen, col->name));
		g_hash_table_add(seen, (char *)col->name);
		/* the format's columns come first, the kernel's before the model's */
		if (marks_in_format(col))
			assert_int_equal(i, in_format++);
		if (i && marks_kernel(col))
			assert_true(marks_kernel(col - 1));
		/* only /proc/vmstat's THP events wait for a version 3 trace */
		if (col->version) {
			assert_int_equal(col->version, MARKS_THP_VERSION);
			assert_int_equal(col->source, MARKS_VMSTAT);
			assert_true(g_str_has_prefix(col->name, "thp_"));
			thp++;
		} else {
			assert_false(g_str_has_prefix(col->name, "thp_"));
		}
		if (col->cumulative)
			assert_true(col->kind == MARKS_U64 || col->kind == MARKS_MS);
	}
	assert_int_equal(in_format, 12);
	assert_int_equal(thp, 3);
	assert_string_equal(marks_columns[MARKS_FULL_SCANS].name, "full_scans");
	assert_string_equal(marks_columns[MARKS_DEDUP_FRACTION].name, "dedup_fraction");
	assert_int_equal(marks_columns[MARKS_KSMD_CPU_MS].kind, MARKS_MS);
	g_hash_table_destroy(seen);

	/* the per-mm columns */
	seen = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < MARKS_MM_NR; i++) {
		assert_non_null(marks_mm_columns[i].name);
		assert_false(g_hash_table_contains(seen, marks_mm_columns[i].name));
		g_hash_table_add(seen, (char *)marks_mm_columns[i].name);
	}
	g_hash_table_destroy(seen);
}

static const char *const format_header =
	"label,t_us,full_scans,pages_scanned,pages_shared,pages_sharing,pages_unshared,"
	"pages_volatile,pages_skipped,ksm_zero_pages,stable_node_chains,stable_node_dups,"
	"general_profit,cow_ksm";

static char *header(enum marks_set set, int version)
{
	struct out o;

	out_open(&o);
	marks_write_header(o.f, set, version);
	return out_close(&o);
}

/*
 * The live replay's header is the model's, cut after the kernel's columns,
 * and then ksmd_cpu_ms, the one column it measures that no sysfs file shows.
 */
static void test_headers(void **state)
{
	for (int version = 1; version <= MARKS_THP_VERSION; version++) {
		char *live = header(MARKS_SET_KERNEL, version), *model = header(MARKS_SET_ALL, version);
		size_t n = strlen(live) - strlen(",ksmd_cpu_ms\n");
		GString *want = g_string_new(format_header);

		if (version >= MARKS_THP_VERSION)
			g_string_append(want, ",thp_fault_alloc,thp_split_page,thp_split_pmd");
		g_string_append(want, ",ksmd_cpu_ms\n");
		assert_string_equal(live, want->str);
		assert_memory_equal(model, live, n);
		assert_int_equal(model[n], ',');
		assert_true(g_str_has_prefix(model + n, ",rmap_items,pages_to_scan,checksums,"));
		assert_true(g_str_has_suffix(model,
			",mergeable_pages,ideal_saved,actual_saved,missed_merges,dedup_fraction\n"));
		g_string_free(want, TRUE);
		free(live);
		free(model);
	}
}

static void fill(struct ksm_counters *c, struct ksm_truth *t, struct ksm_ideal *id)
{
	memset(c, 0, sizeof(*c));
	memset(t, 0, sizeof(*t));
	memset(id, 0, sizeof(*id));
	c->full_scans = 3;
	c->pages_scanned = 1200;
	c->pages_shared = 1;
	c->pages_sharing = 199;
	c->general_profit = -64;
	c->cow_ksm = 2;
	c->thp_split_pmd = 5;
	c->rmap_items = 400;
	c->pages_to_scan = 100;
	t->checksums = 7;
	t->merge_refused_lru = 9;
	t->cpu_ns = 1500000;
	id->mergeable_pages = 400;
	id->ideal_saved = 300;
	id->actual_saved = 200;
	id->missed_merges = 100;
}

static char *row(enum marks_set set, int version, const char *label, const struct marks_values *v)
{
	struct out o;

	out_open(&o);
	marks_write_row(o.f, set, version, label, 42, v);
	return out_close(&o);
}

static void test_rows(void **state)
{
	struct ksm_counters c;
	struct ksm_truth t;
	struct ksm_ideal id;
	char *live, *model, *bare;

	fill(&c, &t, &id);
	/* live: ksmd's CPU last, empty where ksmd cannot be seen */
	live = row(MARKS_SET_KERNEL, 3, "m1", &(struct marks_values){ .c = &c });
	assert_string_equal(live, "m1,42,3,1200,1,199,0,0,0,0,0,0,-64,2,0,0,5,\n");
	free(live);
	live = row(MARKS_SET_KERNEL, 3, "m1", &(struct marks_values){ .c = &c, .t = &t });
	assert_string_equal(live, "m1,42,3,1200,1,199,0,0,0,0,0,0,-64,2,0,0,5,1.500\n");
	model = row(MARKS_SET_ALL, 3, "m1", &(struct marks_values){ .c = &c, .t = &t, .ideal = &id });
	/* the same cells first, then the model's */
	size_t kn = strlen(live) - strlen(",1.500\n");

	assert_memory_equal(model, live, kn);
	assert_string_equal(model + kn,
			    ",400,100,7,0,0,0,0,0,0,0,0,0,0,9,0,0,0,0,0,0,0,0,1.500,"
			    "400,300,200,100,0.6667\n");
	free(live);
	free(model);

	/* without the oracle's walk its cells are empty; no THP columns before version 3 */
	bare = row(MARKS_SET_ALL, 2, "a b", &(struct marks_values){ .c = &c, .t = &t });
	assert_true(g_str_has_prefix(bare, "\"a b\",42,3,1200,1,199,0,0,0,0,0,0,-64,2,400,"));
	assert_true(g_str_has_suffix(bare, ",1.500,,,,,\n"));
	free(bare);

	/* nothing to save: all of it saved */
	id.ideal_saved = id.actual_saved = 0;
	assert_true(marks_dedup_fraction(&id) == 1.0);
}

static void test_cumulative(void **state)
{
	struct ksm_counters now, start;
	struct ksm_truth t;
	struct ksm_ideal id;
	struct out o;

	fill(&now, &t, &id);
	fill(&start, &t, &id);
	start.full_scans = 1;
	start.pages_scanned = 200;
	start.pages_sharing = 99;	/* not cumulative: stays */
	start.cow_ksm = 2;
	start.thp_split_pmd = 4;
	marks_since(&now, &start);
	assert_int_equal(now.full_scans, 2);
	assert_int_equal(now.pages_scanned, 1000);
	assert_int_equal(now.pages_sharing, 199);
	assert_int_equal(now.cow_ksm, 0);
	assert_int_equal(now.thp_split_pmd, 1);
	assert_int_equal(now.rmap_items, 400);	/* the model's own: not the kernel's */

	out_open(&o);
	marks_put_cumulative(o.f, 0);
	fputc('|', o.f);
	marks_put_cumulative(o.f, MARKS_THP_VERSION);
	out_close(&o);
	assert_string_equal(o.text, "full_scans, pages_scanned, pages_skipped, cow_ksm|"
			    "thp_fault_alloc, thp_split_page, thp_split_pmd");
	free(o.text);
}

static void test_ksm_stat(void **state)
{
	struct ksm_mm_stat st = {
		.name = "vm1", .ksm_rmap_items = 10, .ksm_zero_pages = 2, .ksm_merging_pages = 5,
		.ksm_process_profit = -128, .ksm_mergeable = true, .ksm_merge_any = false,
	};
	struct out o;

	out_open(&o);
	marks_mm_write_header(o.f);
	marks_mm_write_row(o.f, "start", 7, &st);
	out_close(&o);
	assert_string_equal(o.text,
			    "label,t_us,mm,ksm_rmap_items,ksm_zero_pages,ksm_merging_pages,"
			    "ksm_process_profit,ksm_mergeable,ksm_merge_any\n"
			    "start,7,vm1,10,2,5,-128,1,0\n");
	free(o.text);
}

/* ---------------------------------------------------------------- diff */

static char *dir;

static char *file(const char *name, const char *text)
{
	char *path = g_build_filename(dir, name, NULL);

	assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

#define HDR "label,t_us,full_scans,pages_scanned,pages_shared,pages_sharing,pages_unshared," \
	"pages_volatile,pages_skipped,ksm_zero_pages,stable_node_chains,stable_node_dups," \
	"general_profit,cow_ksm"

static const struct marks_cell_diff *cell(const struct marks_diff *d, guint i)
{
	return &g_array_index(d->cells, struct marks_cell_diff, i);
}

static void test_diff(void **state)
{
	char *a = file("a.csv", "# a comment\n" HDR ",extra\n"
			"merged,0,2,400,1,199,0,0,0,0,0,0,802304,0,x\n"
			"after_cow,5,2,400,1,199,0,0,0,0,0,0,802304,1,y\n");
	char *b = file("b.csv", HDR ",thp_fault_alloc\r\n"
			"merged,0,2,400,1,199,0,0,0,0,0,0,802304,0,9\r\n"
			"after_cow,5,2,400,1,198,0,0,0,0,0,0,802304,1,9\r\n");
	char *skip = file("skip.csv", "# cells that differ between runs: after_cow.pages_sharing=1/2\n"
			  HDR "\nmerged,0,2,400,1,199,0,0,0,0,0,0,802304,0\n"
			  "after_cow,5,2,400,1,199,0,0,0,0,0,0,802304,1\n");
	char *bad = file("bad.csv", HDR "\nmerged,0,2,400,1,1x9,0,0,0,0,0,0,802304,0\n");
	char *only[] = { "pages_shared", "cow_ksm", NULL }, *ignore[] = { "pages_sharing", NULL };
	char *extra[] = { "extra", NULL };
	struct marks_diff d;
	GError *err = NULL;

	/* thp_fault_alloc only one file has: left out; the extra column is not compared */
	assert_true(marks_diff(a, b, NULL, &d, &err));
	assert_int_equal(d.cells->len, 1);
	assert_string_equal(cell(&d, 0)->row, "after_cow");
	assert_string_equal(cell(&d, 0)->column, "pages_sharing");
	assert_true(cell(&d, 0)->has_delta);
	assert_int_equal(cell(&d, 0)->delta, -1);
	assert_int_equal(d.compared, 2 * 13);
	marks_diff_clear(&d);

	assert_true(marks_diff(a, b, &(struct marks_diff_opts){ .ignore = ignore, .cpu_tolerance = 0.15 }, &d, &err));
	assert_int_equal(d.cells->len, 0);
	assert_int_equal(d.compared, 2 * 12);
	marks_diff_clear(&d);
	assert_true(marks_diff(a, b, &(struct marks_diff_opts){ .only = only, .cpu_tolerance = 0.15 }, &d, &err));
	assert_int_equal(d.cells->len, 0);
	assert_int_equal(d.compared, 2 * 2);
	marks_diff_clear(&d);

	/* a varying cell either file names is skipped */
	assert_true(marks_diff(b, skip, NULL, &d, &err));
	assert_int_equal(d.cells->len, 0);
	assert_int_equal(d.skipped, 1);
	marks_diff_clear(&d);

	assert_false(marks_diff(a, b, &(struct marks_diff_opts){ .only = extra, .cpu_tolerance = 0.15 }, &d, &err));
	assert_true(g_error_matches(err, MARKS_ERROR, MARKS_ERROR_BAD));
	assert_non_null(strstr(err->message, "the header has no column 'extra'"));
	g_clear_error(&err);
	assert_false(marks_diff(a, bad, NULL, &d, &err));
	assert_non_null(strstr(err->message, "bad.csv:2: pages_sharing '1x9' is not an integer"));
	g_clear_error(&err);
	for (char *p[] = { a, b, skip, bad, NULL }, **q = p; *q; q++) {
		unlink(*q);
		g_free(*q);
	}
}

/*
 * ksmd_cpu_ms is compared by ratio, apart from the exact counters: a live
 * file with it against a model file, an expected file without it.
 */
static void test_diff_cpu(void **state)
{
	char *live = file("live_cpu.csv", HDR ",ksmd_cpu_ms\n"
			  "early,0,0,0,0,0,0,0,0,0,0,0,0,0,2.000\n"
			  "merged,1,2,400,1,199,0,0,0,0,0,0,802304,0,100.000\n"
			  "late,2,4,800,1,199,0,0,0,0,0,0,802304,0,200.000\n");
	char *model = file("model_cpu.csv", HDR ",rmap_items,ksmd_cpu_ms\n"
			   "early,0,0,0,0,0,0,0,0,0,0,0,0,0,9,5.000\n"
			   "merged,1,2,400,1,199,0,0,0,0,0,0,802304,0,9,110.000\n"
			   "late,2,4,800,1,198,0,0,0,0,0,0,802304,0,9,260.000\n");
	char *old = file("old_cpu.csv", HDR "\n"
			 "early,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
			 "merged,1,2,400,1,199,0,0,0,0,0,0,802304,0\n"
			 "late,2,4,800,1,199,0,0,0,0,0,0,802304,0\n");
	char *empty = file("empty_cpu.csv", HDR ",ksmd_cpu_ms\n"
			   "early,0,0,0,0,0,0,0,0,0,0,0,0,0,\n"
			   "merged,1,2,400,1,199,0,0,0,0,0,0,802304,0,\n"
			   "late,2,4,800,1,199,0,0,0,0,0,0,802304,0,\n");
	char *bad = file("bad_cpu.csv", HDR ",ksmd_cpu_ms\n"
			 "early,0,0,0,0,0,0,0,0,0,0,0,0,0,-1\n");
	char *ignore[] = { "ksmd_cpu_ms", NULL };
	struct marks_diff d;
	GError *err = NULL;

	/* early: both under the floor; merged 1.10 inside; late 1.30 outside; one exact cell */
	assert_true(marks_diff(live, model, NULL, &d, &err));
	assert_string_equal(d.cpu_column, "ksmd_cpu_ms");
	assert_int_equal(d.cells->len, 1);
	assert_string_equal(cell(&d, 0)->column, "pages_sharing");
	assert_int_equal(d.cpu->len, 3);
	assert_true(g_array_index(d.cpu, struct marks_cpu_cell, 0).below_floor);
	assert_true(g_array_index(d.cpu, struct marks_cpu_cell, 1).within);
	assert_false(g_array_index(d.cpu, struct marks_cpu_cell, 2).within);
	assert_float_equal(g_array_index(d.cpu, struct marks_cpu_cell, 2).ratio, 1.3, 1e-9);
	assert_int_equal(d.cpu_outside, 1);
	assert_int_equal(d.compared, 3 * 13);	/* the exact counters only */
	marks_diff_clear(&d);
	/* a wider tolerance takes late in */
	assert_true(marks_diff(live, model, &(struct marks_diff_opts){ .cpu_tolerance = 0.35,
				.cpu_floor_ms = 10 }, &d, &err));
	assert_int_equal(d.cpu_outside, 0);
	assert_int_equal(d.cells->len, 1);
	marks_diff_clear(&d);
	/* ignored, or one file without it (the expected files): not compared, counters as before */
	assert_true(marks_diff(live, model, &(struct marks_diff_opts){ .ignore = ignore }, &d, &err));
	assert_null(d.cpu_column);
	assert_int_equal(d.cpu->len, 0);
	marks_diff_clear(&d);
	assert_true(marks_diff(old, model, NULL, &d, &err));
	assert_null(d.cpu_column);
	assert_int_equal(d.cells->len, 1);
	assert_int_equal(d.compared, 3 * 13);
	marks_diff_clear(&d);
	/* an empty cell (ksmd not visible) is skipped, not a difference */
	assert_true(marks_diff(empty, model, NULL, &d, &err));
	assert_int_equal(d.cpu->len, 0);
	assert_int_equal(d.skipped, 3);
	marks_diff_clear(&d);
	/* a cell that is not a number of milliseconds: bad input naming file and line */
	assert_false(marks_diff(bad, bad, NULL, &d, &err));
	assert_non_null(strstr(err->message, "bad_cpu.csv:2: ksmd_cpu_ms '-1' is not a number"));
	g_clear_error(&err);
	for (char *p[] = { live, model, old, empty, bad, NULL }, **q = p; *q; q++) {
		unlink(*q);
		g_free(*q);
	}
}

static void test_diff_mm(void **state)
{
	char *a = file("a_mm.csv", "label,t_us,mm,ksm_rmap_items,ksm_zero_pages,ksm_merging_pages,"
			"ksm_process_profit,ksm_mergeable\n"
			"m,1,vm1,10,0,5,100,1\nm,1,vm2,10,0,5,100,1\n");
	char *b = file("b_mm.csv", "label,t_us,mm,ksm_rmap_items,ksm_zero_pages,ksm_merging_pages,"
			"ksm_process_profit,ksm_mergeable,ksm_merge_any\n"
			"m,1,vm1,10,0,5,100,1,0\nm,1,vm3,10,0,5,100,1,0\n");
	struct marks_diff d;
	GError *err = NULL;

	/* ksm_merge_any, which older files lack, is left out; rows pair on label and mm */
	assert_true(marks_diff(a, b, NULL, &d, &err));
	assert_int_equal(d.cells->len, 1);
	assert_string_equal(cell(&d, 0)->row, "row 2");
	assert_string_equal(cell(&d, 0)->column, "label");
	assert_string_equal(cell(&d, 0)->a, "m@vm2");
	assert_string_equal(cell(&d, 0)->b, "m@vm3");
	assert_int_equal(d.compared, 6);
	marks_diff_clear(&d);
	unlink(a);
	unlink(b);
	g_free(a);
	g_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_cumulative),
		cmocka_unit_test(test_ksm_stat),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_cpu),
		cmocka_unit_test(test_diff_mm),
	};
	int rc;

	dir = g_dir_make_tmp("test-marks-XXXXXX", NULL);
	assert_non_null(dir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	g_free(dir);
	return rc;
}
