/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Driving the model by hand, for the unit tests of tests/sim/: records
 * built in place and applied at the harness's clock (no trace file, no
 * event loop, no batches), and ksmd's two steps per page taken one visit at
 * a time, as ksm_do_scan takes them.
 *
 * A test gets its struct sim from the fixture (sim_setup, sim_teardown) in
 * *state: the teardown frees the model even when a failed assert ends the
 * test early. Records go through the sim; ksmd's steps and the white-box
 * looks at the state take the model, s->k.
 */
#ifndef KSMSIM_TESTS_SIM_HARNESS_H
#define KSMSIM_TESTS_SIM_HARNESS_H

#include "sim/ksm_internal.h"

struct sim {
	struct ksm *k;
	uint64_t now;			/* simulated µs: records are applied then */
	struct trace_record rec;	/* the record being built: 4 KiB of content */
};

/*
 * A model with a policy (NULL: the kernel's), smart_scan off so that every
 * visit counts. sim_setup does it as a cmocka setup, the policy spec taken
 * from *state (a prestate; NULL: the kernel's); sim_teardown frees it.
 */
struct sim *sim_new(const char *policy);
void sim_free(struct sim *s);
int sim_setup(void **state);
int sim_teardown(void **state);

/* Records from now on, and ksmd's steps, happen at us (simulated µs). */
void at(struct sim *s, uint64_t us);
/* Apply s->rec (failing the test if the model refuses it), then clear it. */
void apply(struct sim *s);
/* Apply s->rec, which the model must refuse with code; then clear it. */
void apply_refused(struct sim *s, enum ksm_error_code code);
void set(struct sim *s, enum ksm_knob knob, uint64_t value);
/* Start a record in s->rec: fill in the rest, then apply(). */
void on(struct sim *s, enum trace_verb verb, const char *mm, uint64_t vpn, uint64_t npages);
/* An mm with one mergeable VMA [0, npages). */
void spawn_mergeable(struct sim *s, const char *mm, uint64_t npages);
/* Every page of [vpn, vpn + npages) holds the byte value (0: a zero page). */
void fill(struct sim *s, const char *mm, uint64_t vpn, uint64_t npages, uint8_t value);
/* One page written with content form form (value, off as the trace gives them). */
void write_form(struct sim *s, const char *mm, uint64_t vpn, enum content_form form,
		uint64_t value, uint32_t off);
/* munmap of [vpn, vpn + npages). */
void unmap_pages(struct sim *s, const char *mm, uint64_t vpn, uint64_t npages);
/* mms a and b, one mergeable page each, both holding byte 7. */
void two_equal_pages(struct sim *s);
/* A fixture: sim_setup, then two_equal_pages. */
int setup_two_equal_pages(void **state);

struct mm *mm_of(struct ksm *k, const char *name);
/* One visit; NULL at the end of a pass. */
struct rmap_item *visit(struct ksm *k);
void expect_visit(struct ksm *k, const char *mm, uint64_t vpn);
void expect_end_of_pass(struct ksm *k, uint64_t full_scans);
/* visits visits, then the end of the pass. */
void pass(struct ksm *k, unsigned visits);
void check_invariants(struct ksm *k);

#endif
