// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The outputs the loop's marks fill (output.h): --marks-csv, a row of the
 * kernel's counters and the model's own at each mark, and --mm-stats-csv,
 * a row per live mm at each mark (/proc/PID/ksm_stat). Both start with
 * their provenance line.
 */
#include "sim/output.h"

void output_marks_header(FILE *f, bool thp, bool linux_6_1)
{
	marks_write_header(f, MARKS_SET_ALL, output_rows_version(thp, linux_6_1));
}

void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s)
{
	struct marks_values v = output_values(s);

	marks_write_row(f, MARKS_SET_ALL, output_rows_version(s->thp, s->linux_6_1), label, t_us,
			&v);
}

static void marks_start(FILE *f, const struct output_run *r)
{
	bool linux_6_1 = r->kernel == KSM_KERNEL_6_1;

	output_provenance(f, r, NULL);
	fprintf(f, "# %s count from the trace start; t_us is the mark's timestamp"
		" as written in the trace\n", linux_6_1 ? "full_scans, cow_ksm" :
		"full_scans, pages_scanned, pages_skipped, cow_ksm");
	output_marks_header(f, r->thp, linux_6_1);
}

static void marks_mark(FILE *f, const struct output_run *r, const char *label, uint64_t t_us,
		       struct ksm *k)
{
	struct snapshot s;

	snapshot_take(k, r->ideal, &s);
	output_marks_row(f, label, t_us, &s);
}

const struct run_output marks_output = {
	"marks-csv",
	"one row per 'mark': the kernel's counters in the\n"
	"order traces/FORMAT.md ('Marks') gives, then the\n"
	"simulator's own (ground truth, cost, ideal dedup)",
	.start = marks_start, .mark = marks_mark,
};

/* The per-mm rows' columns: without those Linux 6.1 lacks under --kernel 6.1. */
static int mm_version(const struct output_run *r)
{
	return r->kernel == KSM_KERNEL_6_1 ? MARKS_LINUX_6_1 : 0;
}

static void mm_stats_start(FILE *f, const struct output_run *r)
{
	output_provenance(f, r, "/proc/PID/ksm_stat of every live mm at each mark");
	marks_mm_write_header_for(f, mm_version(r));
}

static void mm_stats_mark(FILE *f, const struct output_run *r, const char *label, uint64_t t_us,
			  struct ksm *k)
{
	GArray *st = ksm_mm_stats(k);

	for (guint i = 0; i < st->len; i++)
		marks_mm_write_row_for(f, mm_version(r), label, t_us,
				       &g_array_index(st, struct ksm_mm_stat, i));
	g_array_free(st, TRUE);
}

const struct run_output mm_stats_output = {
	"mm-stats-csv",
	"at each 'mark', one row per live mm: its\n"
	"/proc/PID/ksm_stat (rmap items, zero pages, merging\n"
	"pages, process profit, mergeable)",
	.start = mm_stats_start, .mark = mm_stats_mark,
};
