// SPDX-License-Identifier: GPL-2.0-or-later
#include <inttypes.h>
#include <string.h>
#include <csv.h>
#include "sim/ksm_stat_csv.h"

static void put_text(FILE *f, const char *text)
{
	/* quoted only where needed, as the marks files do */
	if (strpbrk(text, ",\"\r\n \t"))
		csv_fwrite(f, text, strlen(text));
	else
		fputs(text, f);
}

void ksm_stat_csv_header(FILE *f)
{
	fputs("label,t_us,mm,ksm_rmap_items,ksm_zero_pages,ksm_merging_pages,"
	      "ksm_process_profit,ksm_mergeable,ksm_merge_any\n", f);
}

void ksm_stat_csv_row(FILE *f, const char *label, uint64_t t_us, const struct ksm_stat_row *r)
{
	put_text(f, label);
	fprintf(f, ",%" PRIu64 ",", t_us);
	put_text(f, r->mm);
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%d,%d\n", r->ksm_rmap_items,
		r->ksm_zero_pages, r->ksm_merging_pages, r->ksm_process_profit,
		r->ksm_mergeable ? 1 : 0, r->ksm_merge_any ? 1 : 0);
}
