/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Driving the model by hand, for the unit tests of tests/sim/: records
 * built in place and applied at time 0 (no trace file, no event loop, no
 * batches), and ksmd's two steps per page taken one visit at a time, as
 * ksm_do_scan takes them.
 */
#ifndef KSMSIM_TESTS_SIM_HARNESS_H
#define KSMSIM_TESTS_SIM_HARNESS_H

#include "sim/ksm_internal.h"

extern struct trace_record rec;	/* the record being built: 4 KiB of content */

/* Apply rec (failing the test if the model refuses it), then clear it. */
void apply(struct ksm *k);
void set(struct ksm *k, enum ksm_knob knob, uint64_t value);
/* Start a record in rec: fill in the rest, then apply(). */
void on(enum trace_verb verb, const char *mm, uint64_t vpn, uint64_t npages);
/* An mm with one mergeable VMA [0, npages). */
void spawn_mergeable(struct ksm *k, const char *mm, uint64_t npages);
/* Every page of [vpn, vpn + npages) holds the byte value (0: a zero page). */
void fill(struct ksm *k, const char *mm, uint64_t vpn, uint64_t npages, uint8_t value);
/* One page written with content form form (value, off as the trace gives them). */
void write_form(struct ksm *k, const char *mm, uint64_t vpn, enum content_form form,
		uint64_t value, uint32_t off);
/* A model with opt's policy (NULL: the kernel's), smart_scan off: every visit counts. */
struct ksm *new_ksm_with(const char *policy);
struct mm *mm_of(struct ksm *k, const char *name);
/* One visit; NULL at the end of a pass. */
struct rmap_item *visit(struct ksm *k);
void expect_visit(struct ksm *k, const char *mm, uint64_t vpn);
void expect_end_of_pass(struct ksm *k, uint64_t full_scans);
/* visits visits, then the end of the pass. */
void pass(struct ksm *k, unsigned visits);
void check_invariants(struct ksm *k);

#endif
