// SPDX-License-Identifier: GPL-2.0-or-later
#include <inttypes.h>
#include <string.h>
#include <csv.h>
#include "sim/output.h"

enum kind { U64, I64, DBL };

/* Every numeric column: its name and where its value lives in a snapshot. */
static const struct column {
	const char *name;
	enum kind kind;
	size_t off;
	bool ideal;		/* needs the oracle's walk */
	const char *help;
} columns[] = {
#define C(f, h) { #f, U64, offsetof(struct snapshot, c.f), false, h }
#define T(f, h) { #f, U64, offsetof(struct snapshot, t.f), false, h }
#define I(f, h) { #f, U64, offsetof(struct snapshot, ideal.f), true, h }
	C(full_scans, "completed passes since the trace start"),
	C(pages_scanned, "rmap items visited"),
	C(pages_shared, "KSM pages in use"),
	C(pages_sharing, "further mappings of KSM pages (memory saved)"),
	C(pages_unshared, "items in the unstable tree"),
	C(pages_volatile, "items changing too fast to be put in a tree"),
	C(pages_skipped, "smart-scan skips"),
	C(ksm_zero_pages, "PTEs KSM mapped to the zero page"),
	C(stable_node_chains, "stable-node chains"),
	C(stable_node_dups, "dups in chains"),
	{ "general_profit", I64, offsetof(struct snapshot, c.general_profit), false,
	  "bytes saved minus rmap item overhead" },
	C(cow_ksm, "copy-on-write and unshare faults on KSM pages"),
	/* the format's columns (FORMAT.md, "Marks") end here */
	C(rmap_items, "rmap items allocated"),
	C(pages_to_scan, "pages_to_scan now (the advisor moves it)"),
	T(checksums, "page checksums computed by ksmd"),
	T(gate_checks, "checksum gate decisions on pages seen before"),
	T(gate_changed, "... on pages whose bytes had changed"),
	T(false_positives, "... that the checksum judged unchanged"),
	T(unstable_inserts, "unstable tree insertions"),
	T(unstable_aborts, "unstable searches stopped by a vanished page"),
	T(unstable_corrupt_walks, "unstable searches through a changed page"),
	T(unstable_changed_after_insert, "inserted pages changed before their next visit"),
	T(merges_two, "KSM pages made from two pages"),
	T(merges_stable, "pages merged into an existing KSM page"),
	T(merges_zero, "pages merged with the zero page"),
	{ "merges_refused_lru", U64, offsetof(struct snapshot, t.merge_refused_lru), false,
	  "merges refused: the page was new and still in a per-CPU LRU batch" },
	T(memcmp_calls, "page comparisons"),
	T(memcmp_bytes, "bytes those comparisons read (estimate)"),
	T(page_copies, "KSM pages copied by CoW or unshare"),
	T(cow_fresh, "CoW writes before a full scan ended since the merge"),
	T(cow_later, "CoW writes later"),
	T(cow_unshare, "unshare faults (MADV_UNMERGEABLE, run=2)"),
	T(mmu_invalidations, "secondary-MMU range invalidations"),
	T(mmu_change_pte, "secondary-MMU change_pte-style updates"),
	{ "ksmd_cpu_ms", DBL, offsetof(struct snapshot, t.cpu_ns), false,
	  "modelled ksmd CPU time" },
	I(mergeable_pages, "present pages in mergeable areas"),
	I(ideal_saved, "pages an oracle merging everything would save"),
	I(actual_saved, "pages saved now (mappings of KSM pages beyond one, zero pages)"),
	I(missed_merges, "ideal_saved - actual_saved"),
#undef C
#undef T
#undef I
};

#define N_SPEC 12	/* columns[] entries that are the format's columns */

void snapshot_take(struct ksm *k, bool with_ideal, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	ksm_counters(k, &s->c);
	ksm_truth(k, &s->t);
	if (with_ideal) {
		ksm_ideal(k, &s->ideal);
		s->has_ideal = true;
	}
}

static void put_field(FILE *f, const char *text, bool first)
{
	if (!first)
		fputc(',', f);
	/* Quote only where needed, so plain labels read the same as the kernel's files. */
	if (strpbrk(text, ",\"\r\n \t"))
		csv_fwrite(f, text, strlen(text));
	else
		fputs(text, f);
}

static void put_value(FILE *f, const struct column *col, const struct snapshot *s)
{
	const char *base = (const char *)s + col->off;
	char buf[64];
	if (col->ideal && !s->has_ideal) {
		fputc(',', f);
		return;
	}
	switch (col->kind) {
	case U64:
		snprintf(buf, sizeof(buf), "%" PRIu64, *(const uint64_t *)base);
		break;
	case I64:
		snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)base);
		break;
	case DBL:
		snprintf(buf, sizeof(buf), "%.3f", *(const double *)base / 1e6);
		break;
	}
	fputc(',', f);
	fputs(buf, f);
}

static void header_tail(FILE *f)
{
	for (size_t i = 0; i < G_N_ELEMENTS(columns); i++) {
		fputc(',', f);
		fputs(columns[i].name, f);
	}
	fputs(",dedup_fraction\n", f);
}

static void row_tail(FILE *f, const struct snapshot *s)
{
	for (size_t i = 0; i < G_N_ELEMENTS(columns); i++)
		put_value(f, &columns[i], s);
	if (s->has_ideal && s->ideal.ideal_saved)
		fprintf(f, ",%.4f\n", (double)s->ideal.actual_saved / (double)s->ideal.ideal_saved);
	else if (s->has_ideal)
		fputs(",1.0000\n", f);
	else
		fputs(",\n", f);
}

void output_marks_header(FILE *f)
{
	fputs("label,t_us", f);
	header_tail(f);
}

void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s)
{
	put_field(f, label, true);
	fprintf(f, ",%" PRIu64, t_us);
	row_tail(f, s);
}

void output_series_header(FILE *f)
{
	fputs("t_us,trace_t_us", f);
	header_tail(f);
}

void output_series_row(FILE *f, uint64_t sim_us, uint64_t trace_us, const struct snapshot *s)
{
	fprintf(f, "%" PRIu64 ",%" PRIu64, sim_us, trace_us);
	row_tail(f, s);
}

void output_summary_text(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			 uint64_t records, uint64_t batches, const struct snapshot *s)
{
	fprintf(f, "ksmsim run: %s, checksum %s\n", trace, hash);
	fprintf(f, "  %" PRIu64 " records, %" PRIu64 " ksmd batches, %.3f s simulated\n\n",
		records, batches, sim_us / 1e6);
	for (size_t i = 0; i < G_N_ELEMENTS(columns); i++) {
		if (i == 0)
			fprintf(f, "kernel counters (/sys/kernel/mm/ksm, /proc/vmstat)\n");
		if (i == N_SPEC)
			fprintf(f, "\nwhat the kernel cannot see\n");
		if (columns[i].ideal && !s->has_ideal)
			continue;
		const char *base = (const char *)s + columns[i].off;
		char buf[64];
		if (columns[i].kind == U64)
			snprintf(buf, sizeof(buf), "%" PRIu64, *(const uint64_t *)base);
		else if (columns[i].kind == I64)
			snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)base);
		else
			snprintf(buf, sizeof(buf), "%.3f", *(const double *)base / 1e6);
		fprintf(f, "  %-30s %14s  %s\n", columns[i].name, buf, columns[i].help);
	}
	if (s->has_ideal && s->ideal.ideal_saved)
		fprintf(f, "  %-30s %13.1f%%  %s\n", "dedup_fraction",
			100.0 * s->ideal.actual_saved / s->ideal.ideal_saved,
			"share of the ideal saving reached");
}

void output_summary_header(FILE *f)
{
	fputs("trace,hash,sim_us,records,batches", f);
	header_tail(f);
}

void output_summary_row(FILE *f, const char *trace, const char *hash, uint64_t sim_us,
			uint64_t records, uint64_t batches, const struct snapshot *s)
{
	put_field(f, trace, true);
	put_field(f, hash, false);
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, sim_us, records, batches);
	row_tail(f, s);
}
