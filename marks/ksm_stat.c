// SPDX-License-Identifier: GPL-2.0-or-later
/* The per-mm rows of /proc/PID/ksm_stat (marks.h), the model's and the live kernel's. */
#include <inttypes.h>
#include "marks/internal.h"
#include "marks/marks.h"

#define MM(f, kind, optional) { #f, kind, offsetof(struct ksm_mm_stat, f), optional }

const struct marks_mm_column marks_mm_columns[MARKS_MM_NR] = {
	MM(ksm_rmap_items, MARKS_U64, false),
	MM(ksm_zero_pages, MARKS_U64, false),
	MM(ksm_merging_pages, MARKS_U64, false),
	MM(ksm_process_profit, MARKS_I64, false),
	MM(ksm_mergeable, MARKS_BOOL, false),
	MM(ksm_merge_any, MARKS_BOOL, true),	/* added with trace version 3 */
};

#undef MM

/* Linux 6.1's /proc/PID/ksm_stat has ksm_rmap_items; ksm_merging_pages is a file of its own. */
bool marks_mm_linux_6_1_lacks(size_t i)
{
	return i != 0 && i != 2;
}

static bool mm_shown(size_t i, int version)
{
	return !(version & MARKS_LINUX_6_1) || !marks_mm_linux_6_1_lacks(i);
}

void marks_mm_write_header_for(FILE *f, int version)
{
	fputs("label,t_us,mm", f);
	for (size_t i = 0; i < MARKS_MM_NR; i++)
		if (mm_shown(i, version))
			fprintf(f, ",%s", marks_mm_columns[i].name);
	fputc('\n', f);
}

void marks_mm_write_row_for(FILE *f, int version, const char *label, uint64_t t_us,
			    const struct ksm_mm_stat *st)
{
	marks_put_field(f, label, true);
	fprintf(f, ",%" PRIu64, t_us);
	marks_put_field(f, st->name, false);
	for (size_t i = 0; i < MARKS_MM_NR; i++) {
		char buf[32];

		if (!mm_shown(i, version))
			continue;
		marks_format_raw(marks_mm_columns[i].kind,
				 (const char *)st + marks_mm_columns[i].off, buf, sizeof(buf));
		fprintf(f, ",%s", buf);
	}
	fputc('\n', f);
}

void marks_mm_write_header(FILE *f)
{
	marks_mm_write_header_for(f, 0);
}

void marks_mm_write_row(FILE *f, const char *label, uint64_t t_us, const struct ksm_mm_stat *st)
{
	marks_mm_write_row_for(f, 0, label, t_us, st);
}
