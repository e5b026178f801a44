// SPDX-License-Identifier: GPL-2.0-or-later
/* Names shared by every reader, writer and consumer of traces. */
#include <string.h>
#include <xxhash.h>
#include "traces/trace.h"

/*
 * The kernel's knobs (Linux 6.18): the default every trace starts from, and
 * the values the sysfs store function takes. pages_to_scan is an unsigned
 * int; the advisor's page bounds take any unsigned long in the kernel but
 * set pages_to_scan, so they keep to its range too. max_page_sharing is
 * read with kstrtoint.
 */
const struct knob_info knob_table[KNOB_NR] = {
	[KNOB_RUN] = { "run", 0, 0, 2 },
	[KNOB_PAGES_TO_SCAN] = { "pages_to_scan", 100, 0, UINT32_MAX },
	[KNOB_SLEEP_MILLISECS] = { "sleep_millisecs", 20, 0, UINT32_MAX },
	[KNOB_USE_ZERO_PAGES] = { "use_zero_pages", 0, 0, 1 },
	[KNOB_MAX_PAGE_SHARING] = { "max_page_sharing", 256, 2, INT32_MAX },
	[KNOB_MERGE_ACROSS_NODES] = { "merge_across_nodes", 1, 0, 1 },
	[KNOB_SMART_SCAN] = { "smart_scan", 1, 0, 1 },
	[KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS] = { "stable_node_chains_prune_millisecs", 2000,
						       0, UINT32_MAX },
	[KNOB_ADVISOR_MODE] = { "advisor_mode", ADVISOR_NONE, 0, 1 },
	[KNOB_ADVISOR_MAX_CPU] = { "advisor_max_cpu", 70, 1, 100 },
	[KNOB_ADVISOR_MIN_PAGES_TO_SCAN] = { "advisor_min_pages_to_scan", 500, 0, UINT32_MAX },
	[KNOB_ADVISOR_MAX_PAGES_TO_SCAN] = { "advisor_max_pages_to_scan", 30000, 0, UINT32_MAX },
	[KNOB_ADVISOR_TARGET_SCAN_TIME] = { "advisor_target_scan_time", 200, 1, UINT64_MAX },
};

const char *const verb_names[TRACE_NR_VERBS] = {
	[TRACE_SPAWN] = "spawn",
	[TRACE_MAP] = "map",
	[TRACE_ADVISE] = "advise",
	[TRACE_WRITE] = "write",
	[TRACE_FILL] = "fill",
	[TRACE_FILLSEQ] = "fillseq",
	[TRACE_UNMAP] = "unmap",
	[TRACE_EXIT] = "exit",
	[TRACE_SET] = "set",
	[TRACE_SETTLE] = "settle",
	[TRACE_MARK] = "mark",
	[TRACE_FORK] = "fork",
	[TRACE_PRCTL] = "prctl",
};

int knob_lookup(const char *name)
{
	for (int i = 0; i < KNOB_NR; i++)
		if (strcmp(knob_table[i].name, name) == 0)
			return i;
	return -1;
}

void trace_content_digest(struct trace_content *c, const uint8_t *page)
{
	XXH128_canonical_t canon;

	XXH128_canonicalFromHash(&canon, XXH3_128bits(page, TRACE_PAGE_SIZE));
	c->form = CONTENT_DIGEST;
	c->value = 0;
	c->off = 0;
	c->len = TRACE_DIGEST_LEN;
	G_STATIC_ASSERT(sizeof(canon.digest) == TRACE_DIGEST_LEN);
	memcpy(c->data, canon.digest, TRACE_DIGEST_LEN);
}

uint64_t trace_digest_seed(const struct trace_content *c)
{
	uint64_t hi, lo;

	memcpy(&hi, c->data, 8);
	memcpy(&lo, c->data + 8, 8);
	return GUINT64_FROM_LE(hi) ^ GUINT64_FROM_LE(lo) ^ UINT64_C(0x6469676573740000);
}

bool knob_pages_to_scan_refused(const uint64_t *knobs)
{
	return knobs[KNOB_ADVISOR_MODE] != ADVISOR_NONE;
}

uint64_t knob_advisor_pages_to_scan(const uint64_t *knobs)
{
	return knobs[KNOB_ADVISOR_MODE] != ADVISOR_NONE ? knobs[KNOB_ADVISOR_MIN_PAGES_TO_SCAN]
							: knob_table[KNOB_PAGES_TO_SCAN].def;
}

char *knob_settle_refusal(const uint64_t *knobs, bool mergeable_mm)
{
	if (knobs[KNOB_RUN] != 1)
		return g_strdup_printf("settle needs run 1 (run is %" G_GUINT64_FORMAT ")",
				       knobs[KNOB_RUN]);
	if (knobs[KNOB_PAGES_TO_SCAN] == 0)
		return g_strdup("settle needs pages_to_scan > 0 (it is 0)");
	if (!mergeable_mm)
		return g_strdup("settle needs a live mm with a mergeable range (there is none)");
	return NULL;
}
