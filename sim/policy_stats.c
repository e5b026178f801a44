// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The policy statistics (struct ksm_policy_stats): what a non-kernel
 * policy did that the marks' columns do not show, counted by the policy's
 * decisions (policy_gate.c) and written here: after the text summary, and
 * as --policy-stats-csv (its provenance line, "stat,count,what", a row per
 * figure of the run's policy at the end; none under the kernel's).
 */
#include <inttypes.h>
#include <stddef.h>
#include "sim/output.h"

/* Which policies a statistic belongs to. */
enum policy_stat_of { OF_DIRTY_BIT, OF_PARTIAL, OF_CLASSES };

static bool policy_stat_mine(const struct ksm_policy *p, enum policy_stat_of of)
{
	switch (of) {
	case OF_DIRTY_BIT:
		return p->detector == KSM_DETECT_DIRTY_BIT;
	case OF_PARTIAL:
		return p->detector == KSM_DETECT_PARTIAL;
	case OF_CLASSES:	/* classes by a page feature; selective's by domain say nothing */
		return p->classes > 1 && p->class_by < KSM_CLASS_BY_DOMAIN;
	}
	return false;
}

/* The figures, each with the policies it belongs to: the text and the CSV are loops over it. */
static const struct {
	const char *name;
	size_t off;
	enum policy_stat_of of;
	const char *what;
} rows[] = {
#define PS(field, of, what) { #field, offsetof(struct ksm_policy_stats, field), of, what }
	PS(dirty_checks, OF_DIRTY_BIT, "visits that tested the dirty bit"),
	PS(dirty_flushes, OF_DIRTY_BIT, "... found it set: cleared, TLB flushed"),
	PS(dirty_same_bytes, OF_DIRTY_BIT, "... set although the bytes had not changed"),
	PS(partial_words, OF_PARTIAL, "32-bit words sampled"),
	PS(partial_grows, OF_PARTIAL, "times a VMA's sample doubled after a miss"),
	PS(class_searches, OF_CLASSES, "unstable-tree inserts checked against other classes"),
	PS(class_lost, OF_CLASSES, "... that another class could have merged"),
#undef PS
};

static uint64_t stat_value(const struct ksm_policy_stats *ps, size_t i)
{
	return *(const uint64_t *)((const char *)ps + rows[i].off);
}

void output_policy_text(FILE *f, const struct ksm_policy *p, const struct ksm_policy_stats *ps)
{
	fprintf(f, "\npolicy %s\n", ksm_policy_name(p));
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
		if (policy_stat_mine(p, rows[i].of))
			fprintf(f, "  %-30s %12" PRIu64 "  %s\n", rows[i].name, stat_value(ps, i),
				rows[i].what);
}

static void stats_start(FILE *f, const struct output_run *r)
{
	output_provenance(f, r, "what the policy did that the marks do not show, at the end");
	fputs("stat,count,what\n", f);
}

static void stats_end(FILE *f, const struct output_run *r, struct ksm *k)
{
	struct ksm_policy_stats ps;

	ksm_policy_stats(k, &ps);
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
		if (policy_stat_mine(r->policy, rows[i].of)) {
			fprintf(f, "%s,%" PRIu64 ",", rows[i].name, stat_value(&ps, i));
			marks_put_field(f, rows[i].what, true);
			fputc('\n', f);
		}
}

const struct run_output policy_stats_output = {
	"policy-stats-csv",
	"a --policy's own figures at the end of the run\n"
	"(stat,count,what: dirty-bit's checks and flushes,\n"
	"partial-hash's words sampled and grows, classified's\n"
	"searches across classes and merges lost), the rows\n"
	"the summary prints after 'policy NAME'; none under\n"
	"the kernel's",
	.start = stats_start, .end = stats_end,
};
