// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The marks writers (marks.h): one for the model's rows and the live
 * kernel's, so that the two files can only differ in their numbers.
 */
#include <inttypes.h>
#include <string.h>
#include <csv.h>
#include "marks/internal.h"
#include "marks/marks.h"

/* The struct a column's source fills; NULL: none in this row. */
static const void *source_of(const struct marks_column *col, const struct marks_values *v)
{
	switch (col->source) {
	case MARKS_SYSFS:
	case MARKS_VMSTAT:
	case MARKS_MODEL:
		return v->c;
	case MARKS_TRUTH:
		return v->t;
	case MARKS_ORACLE:
		return v->ideal;
	}
	return NULL;
}

void marks_format_raw(enum marks_kind kind, const void *p, char *buf, size_t size)
{
	switch (kind) {
	case MARKS_U64:
		snprintf(buf, size, "%" PRIu64, *(const uint64_t *)p);
		break;
	case MARKS_I64:
		snprintf(buf, size, "%" PRId64, *(const int64_t *)p);
		break;
	case MARKS_MS:
		snprintf(buf, size, "%.3f", *(const double *)p / 1e6);
		break;
	case MARKS_BOOL:
		snprintf(buf, size, "%d", *(const bool *)p ? 1 : 0);
		break;
	case MARKS_FRACTION:
		g_assert_not_reached();	/* no field of its own: marks_format() */
	}
}

bool marks_format(const struct marks_column *col, const struct marks_values *v, char *buf,
		  size_t size)
{
	const char *base = source_of(col, v);

	if (!base)
		return false;
	if (col->kind == MARKS_FRACTION)
		snprintf(buf, size, "%.4f", marks_dedup_fraction(v->ideal));
	else
		marks_format_raw(col->kind, base + col->off, buf, size);
	return true;
}

double marks_dedup_fraction(const struct ksm_ideal *i)
{
	/* all of it reached when there is none to reach */
	return i->ideal_saved ? (double)i->actual_saved / (double)i->ideal_saved : 1.0;
}

void marks_put_field(FILE *f, const char *text, bool first)
{
	if (!first)
		fputc(',', f);
	/* Quote only where needed, so plain labels read the same as the kernel's files. */
	if (strpbrk(text, ",\"\r\n \t"))
		csv_fwrite(f, text, strlen(text));
	else
		fputs(text, f);
}

void marks_put_header(FILE *f, enum marks_set set, int version)
{
	for (size_t i = 0; i < MARKS_NR; i++) {
		if (!marks_shown(&marks_columns[i], set, version))
			continue;
		fputc(',', f);
		fputs(marks_columns[i].name, f);
	}
}

void marks_put_values(FILE *f, enum marks_set set, int version, const struct marks_values *v)
{
	char buf[64];

	for (size_t i = 0; i < MARKS_NR; i++) {
		if (!marks_shown(&marks_columns[i], set, version))
			continue;
		fputc(',', f);
		if (marks_format(&marks_columns[i], v, buf, sizeof(buf)))
			fputs(buf, f);
	}
}

void marks_put_cumulative(FILE *f, int version)
{
	const char *sep = "";

	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];

		if (marks_kernel(col) && col->cumulative && col->version == version) {
			fprintf(f, "%s%s", sep, col->name);
			sep = ", ";
		}
	}
}

void marks_write_header(FILE *f, enum marks_set set, int version)
{
	fputs("label,t_us", f);
	marks_put_header(f, set, version);
	fputc('\n', f);
}

void marks_write_row(FILE *f, enum marks_set set, int version, const char *label,
		     uint64_t t_us, const struct marks_values *v)
{
	marks_put_field(f, label, true);
	fprintf(f, ",%" PRIu64, t_us);
	marks_put_values(f, set, version, v);
	fputc('\n', f);
}

void marks_since(struct ksm_counters *now, const struct ksm_counters *start)
{
	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];

		if (marks_kernel(col) && col->cumulative) {
			g_assert(col->kind == MARKS_U64);
			*(uint64_t *)((char *)now + col->off) -=
				*(const uint64_t *)((const char *)start + col->off);
		}
	}
}
