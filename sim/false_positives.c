// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The false-positive log as an observer (ksm_events.h): every change the
 * gate let through unseen, handed to opt.on_false_positive with the bytes
 * that changed. The gate's verdict and the count are ksm_ev_gate's; this
 * only reports, so a run that asks for no log pays nothing for it.
 */
#include <inttypes.h>
#include "sim/ksm_internal.h"
#include "sim/output.h"

/*
 * A false positive, for opt.on_false_positive: which bytes changed unseen,
 * as ranges of offsets. Rare (2^-32 of the changes under a random 32-bit
 * hash), so the pages are made whole here, off the gate's path.
 */
static void report(void *ctx, const struct ksm *k, const struct rmap_item *rmap_item,
		   const struct page *page)
{
	(void)ctx;
	uint8_t before[TRACE_PAGE_SIZE], after[TRACE_PAGE_SIZE];
	const uint8_t *a = content_materialize(rmap_item->seen, before);
	const uint8_t *b = content_materialize(page->c, after);
	GString *ranges = g_string_new(NULL);
	uint32_t n = 0;

	for (uint32_t i = 0; i < TRACE_PAGE_SIZE; i++) {
		uint32_t j = i;

		if (a[i] == b[i])
			continue;
		while (j + 1 < TRACE_PAGE_SIZE && a[j + 1] != b[j + 1])
			j++;
		n += j - i + 1;
		if (ranges->len)
			g_string_append_c(ranges, ';');
		g_string_append_printf(ranges, "%u", i);
		if (j > i)
			g_string_append_printf(ranges, "-%u", j);
		i = j;
	}
	const struct ksm_false_positive fp = {
		.t_us = k->now, .mm = rmap_item_mm(k, rmap_item)->name, .vpn = rmap_item->vpn,
		.checksum = rmap_item_oldchecksum(k, rmap_item), .bytes_changed = n,
		.ranges = ranges->str,
	};
	k->opt.on_false_positive(k->opt.false_positive_ctx, &fp);
	g_string_free(ranges, TRUE);
}

const struct ksm_observer_ops false_positive_observer = {
	.false_positive = report,
};

/* ---- --false-positives-csv ---- */

void output_false_positives_header(FILE *f)
{
	fputs("t_us,mm,vpn,checksum,bytes_changed,changed_bytes\n", f);
}

void output_false_positive_row(FILE *f, const struct ksm_false_positive *fp)
{
	fprintf(f, "%" PRIu64 ",%s,0x%" PRIx32 ",0x%" PRIx64 ",%" PRIu32 ",%s\n", fp->t_us, fp->mm,
		fp->vpn, fp->checksum, fp->bytes_changed, fp->ranges);
}

/* A false positive of the gate, as the model meets it: a row of --false-positives-csv. */
static void on_false_positive(void *f, const struct ksm_false_positive *fp)
{
	output_false_positive_row(*(FILE *const *)f, fp);	/* the stream, opened after attach */
}

static void fp_attach(struct ksm_options *opt, FILE *const *f)
{
	opt->on_false_positive = on_false_positive;
	opt->false_positive_ctx = (void *)f;
}

static void fp_start(FILE *f, const struct output_run *r)
{
	output_provenance(f, r, "every false positive of the gate (t_us of the model's clock)");
	output_false_positives_header(f);
}

const struct run_output false_positives_output = {
	"false-positives-csv",
	"every false positive of the gate (a page\n"
	"whose bytes changed since ksmd's last visit but\n"
	"passed as unchanged): t_us, mm, vpn, the checksum\n"
	"it kept, bytes_changed and the changed byte\n"
	"offsets (ranges a-b joined by ';'), a row each",
	.attach = fp_attach, .start = fp_start,
};
