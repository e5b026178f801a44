/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorder's writer side: trace records at the current capture time. */
#ifndef KSMSIM_WORKLOADS_RECORD_EMIT_H
#define KSMSIM_WORKLOADS_RECORD_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "traces/trace.h"
#include "traces/writer.h"
#include "workloads/record/record.h"

struct emit {
	trace_writer *w;
	struct trace_record *rec;
	uint64_t t_us;			/* the time every record gets */
	GError *error;			/* the first write error: nothing more goes out */
	struct record_stats *stats;	/* counts the page writes */
	bool digest;			/* pages go out as digests, not blobs (version 4) */
};

void emit_init(struct emit *e, trace_writer *w, struct record_stats *stats);
void emit_fini(struct emit *e);
void emit_set(struct emit *e, enum ksm_knob knob, uint64_t value);
/* map, unmap or advise of npages at vpn */
void emit_range(struct emit *e, enum trace_verb verb, const char *mm, uint64_t vpn,
		uint64_t npages, bool mergeable);
/* advise hugepage (version 3): the process had madvised the range MADV_HUGEPAGE */
void emit_advise_hugepage(struct emit *e, const char *mm, uint64_t vpn, uint64_t npages);
/* spawn or exit of mm, or a mark with that label */
void emit_named(struct emit *e, enum trace_verb verb, const char *name);
/* One captured page: zero and uniform pages need no blob, nor a digest. */
void emit_page(struct emit *e, const char *mm, uint64_t vpn, const uint8_t *page);

#endif
