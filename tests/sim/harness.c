// SPDX-License-Identifier: GPL-2.0-or-later
/* The unit tests' hands on the model: see harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

struct sim *sim_new(const char *policy)
{
	struct ksm_options opt = { 0 };
	GError *error = NULL;
	if (policy && !ksm_policy_parse(policy, &opt.policy, &error))
		fail_msg("%s", error->message);
	if (policy)
		cost_table_default(&opt.costs, hash_lookup(HASH_DEFAULT));
	struct sim *s = g_new0(struct sim, 1);
	s->k = ksm_new(&opt);
	set(s, KNOB_SMART_SCAN, 0);
	return s;
}

void sim_free(struct sim *s)
{
	ksm_free(s->k);
	g_free(s);
}

int sim_setup(void **state)
{
	*state = sim_new(*state);
	return 0;
}

int sim_teardown(void **state)
{
	sim_free(*state);
	return 0;
}

void at(struct sim *s, uint64_t us)
{
	s->now = us;
	s->k->now = us;
}

void apply(struct sim *s)
{
	GError *error = NULL;
	bool ok = ksm_apply(s->k, &s->rec, s->now, &error);
	if (!ok)
		fail_msg("ksm_apply: %s", error->message);
	memset(&s->rec, 0, sizeof(s->rec));
}

void apply_refused(struct sim *s, enum ksm_error_code code)
{
	GError *error = NULL;
	bool ok = ksm_apply(s->k, &s->rec, s->now, &error);
	memset(&s->rec, 0, sizeof(s->rec));
	if (ok)
		fail_msg("ksm_apply accepted a record the kernel refuses");
	assert_true(g_error_matches(error, KSM_ERROR, (gint)code));
	g_error_free(error);
}

void set(struct sim *s, enum ksm_knob knob, uint64_t value)
{
	s->rec.verb = TRACE_SET;
	s->rec.knob = knob;
	s->rec.value = value;
	apply(s);
}

void on(struct sim *s, enum trace_verb verb, const char *mm, uint64_t vpn, uint64_t npages)
{
	s->rec.verb = verb;
	g_strlcpy(s->rec.mm, mm, sizeof(s->rec.mm));
	s->rec.vpn = vpn;
	s->rec.npages = npages;
}

void spawn_mergeable(struct sim *s, const char *mm, uint64_t npages)
{
	on(s, TRACE_SPAWN, mm, 0, 0);
	apply(s);
	on(s, TRACE_MAP, mm, 0, npages);
	apply(s);
	on(s, TRACE_ADVISE, mm, 0, npages);
	s->rec.mergeable = true;
	apply(s);
}

void fill(struct sim *s, const char *mm, uint64_t vpn, uint64_t npages, uint8_t value)
{
	on(s, TRACE_FILL, mm, vpn, npages);
	s->rec.content.form = value ? CONTENT_BYTE : CONTENT_ZERO;
	s->rec.content.value = value;
	apply(s);
}

void write_form(struct sim *s, const char *mm, uint64_t vpn, enum content_form form,
		uint64_t value, uint32_t off)
{
	on(s, TRACE_WRITE, mm, vpn, 1);
	s->rec.content.form = form;
	s->rec.content.value = value;
	s->rec.content.off = off;
	apply(s);
}

void unmap_pages(struct sim *s, const char *mm, uint64_t vpn, uint64_t npages)
{
	on(s, TRACE_UNMAP, mm, vpn, npages);
	apply(s);
}

void two_equal_pages(struct sim *s)
{
	spawn_mergeable(s, "a", 1);
	spawn_mergeable(s, "b", 1);
	fill(s, "a", 0, 1, 7);
	fill(s, "b", 0, 1, 7);
}

int setup_two_equal_pages(void **state)
{
	sim_setup(state);
	two_equal_pages(*state);
	return 0;
}

struct mm *mm_of(struct ksm *k, const char *name)
{
	struct mm *mm = g_hash_table_lookup(k->mm_by_name, name);
	assert_non_null(mm);
	return mm;
}

struct rmap_item *visit(struct ksm *k)
{
	struct page *page = NULL;
	struct rmap_item *rmap_item = scan_get_next_rmap_item(k, &page);
	if (rmap_item) {
		assert_ptr_equal(page, pte_get(rmap_item_mm(k, rmap_item), rmap_item->vpn));
		cmp_and_merge_page(k, page, rmap_item);
	}
	return rmap_item;
}

void expect_visit(struct ksm *k, const char *mm, uint64_t vpn)
{
	struct rmap_item *rmap_item = visit(k);
	assert_non_null(rmap_item);
	assert_string_equal(rmap_item_mm(k, rmap_item)->name, mm);
	assert_int_equal(rmap_item->vpn, vpn);
}

void expect_end_of_pass(struct ksm *k, uint64_t full_scans)
{
	assert_null(visit(k));
	assert_int_equal(k->full_scans_total, full_scans);
	assert_ptr_equal(k->scan.mm_slot, &k->mm_head);
}

void pass(struct ksm *k, unsigned visits)
{
	uint64_t full = k->full_scans_total;
	for (unsigned i = 0; i < visits; i++)
		assert_non_null(visit(k));
	expect_end_of_pass(k, full + 1);
}

void check_invariants(struct ksm *k)
{
	char *msg = ksm_check(k);
	if (msg) {
		char copy[256];
		g_strlcpy(copy, msg, sizeof(copy));
		g_free(msg);	/* fail_msg does not return */
		fail_msg("invariant: %s", copy);
	}
}
