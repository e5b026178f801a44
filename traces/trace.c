// SPDX-License-Identifier: GPL-2.0-or-later
/* Names shared by every reader, writer and consumer of traces. */
#include <string.h>
#include "traces/trace.h"

const char *const knob_names[KNOB_NR] = {
	[KNOB_RUN] = "run",
	[KNOB_PAGES_TO_SCAN] = "pages_to_scan",
	[KNOB_SLEEP_MILLISECS] = "sleep_millisecs",
	[KNOB_USE_ZERO_PAGES] = "use_zero_pages",
	[KNOB_MAX_PAGE_SHARING] = "max_page_sharing",
	[KNOB_MERGE_ACROSS_NODES] = "merge_across_nodes",
	[KNOB_SMART_SCAN] = "smart_scan",
	[KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS] = "stable_node_chains_prune_millisecs",
	[KNOB_ADVISOR_MODE] = "advisor_mode",
	[KNOB_ADVISOR_MAX_CPU] = "advisor_max_cpu",
	[KNOB_ADVISOR_MIN_PAGES_TO_SCAN] = "advisor_min_pages_to_scan",
	[KNOB_ADVISOR_MAX_PAGES_TO_SCAN] = "advisor_max_pages_to_scan",
	[KNOB_ADVISOR_TARGET_SCAN_TIME] = "advisor_target_scan_time",
};

/* The kernel's defaults (Linux 6.18), which every trace starts from. */
const uint64_t knob_defaults[KNOB_NR] = {
	[KNOB_RUN] = 0,
	[KNOB_PAGES_TO_SCAN] = 100,
	[KNOB_SLEEP_MILLISECS] = 20,
	[KNOB_USE_ZERO_PAGES] = 0,
	[KNOB_MAX_PAGE_SHARING] = 256,
	[KNOB_MERGE_ACROSS_NODES] = 1,
	[KNOB_SMART_SCAN] = 1,
	[KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS] = 2000,
	[KNOB_ADVISOR_MODE] = ADVISOR_NONE,
	[KNOB_ADVISOR_MAX_CPU] = 70,
	[KNOB_ADVISOR_MIN_PAGES_TO_SCAN] = 500,
	[KNOB_ADVISOR_MAX_PAGES_TO_SCAN] = 30000,
	[KNOB_ADVISOR_TARGET_SCAN_TIME] = 200,
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
};

int knob_lookup(const char *name)
{
	for (int i = 0; i < KNOB_NR; i++)
		if (strcmp(knob_names[i], name) == 0)
			return i;
	return -1;
}
