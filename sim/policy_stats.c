// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The policy statistics (struct ksm_policy_stats): what a non-kernel
 * policy did that the marks' columns do not show, counted by the policy's
 * decisions (policy_gate.c) and written here, after the summary.
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

void output_policy_text(FILE *f, const struct ksm_policy *p, const struct ksm_policy_stats *ps)
{
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
	fprintf(f, "\npolicy %s\n", ksm_policy_name(p));
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		uint64_t v = *(const uint64_t *)((const char *)ps + rows[i].off);
		if (policy_stat_mine(p, rows[i].of))
			fprintf(f, "  %-30s %12" PRIu64 "  %s\n", rows[i].name, v, rows[i].what);
	}
}
