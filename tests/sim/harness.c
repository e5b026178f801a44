// SPDX-License-Identifier: GPL-2.0-or-later
/* The unit tests' hands on the model: see harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

struct trace_record rec;

void apply(struct ksm *k)
{
	GError *error = NULL;
	bool ok = ksm_apply(k, &rec, 0, &error);
	if (!ok)
		fail_msg("ksm_apply: %s", error->message);
	memset(&rec, 0, sizeof(rec));
}

void set(struct ksm *k, enum ksm_knob knob, uint64_t value)
{
	rec.verb = TRACE_SET;
	rec.knob = knob;
	rec.value = value;
	apply(k);
}

void on(enum trace_verb verb, const char *mm, uint64_t vpn, uint64_t npages)
{
	rec.verb = verb;
	g_strlcpy(rec.mm, mm, sizeof(rec.mm));
	rec.vpn = vpn;
	rec.npages = npages;
}

void spawn_mergeable(struct ksm *k, const char *mm, uint64_t npages)
{
	on(TRACE_SPAWN, mm, 0, 0);
	apply(k);
	on(TRACE_MAP, mm, 0, npages);
	apply(k);
	on(TRACE_ADVISE, mm, 0, npages);
	rec.mergeable = true;
	apply(k);
}

void fill(struct ksm *k, const char *mm, uint64_t vpn, uint64_t npages, uint8_t value)
{
	on(TRACE_FILL, mm, vpn, npages);
	rec.content.form = value ? CONTENT_BYTE : CONTENT_ZERO;
	rec.content.value = value;
	apply(k);
}

void write_form(struct ksm *k, const char *mm, uint64_t vpn, enum content_form form,
		uint64_t value, uint32_t off)
{
	on(TRACE_WRITE, mm, vpn, 1);
	rec.content.form = form;
	rec.content.value = value;
	rec.content.off = off;
	apply(k);
}

struct ksm *new_ksm_with(const char *policy)
{
	struct ksm_options opt = { 0 };
	GError *error = NULL;
	if (policy && !ksm_policy_parse(policy, &opt.policy, &error))
		fail_msg("%s", error->message);
	if (policy)
		cost_table_default(&opt.costs, HASH_DEFAULT);
	struct ksm *k = ksm_new(&opt);
	set(k, KNOB_SMART_SCAN, 0);
	return k;
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
		assert_ptr_equal(page, pte_get(rmap_item->mm, rmap_item->vpn));
		cmp_and_merge_page(k, page, rmap_item);
	}
	return rmap_item;
}

void expect_visit(struct ksm *k, const char *mm, uint64_t vpn)
{
	struct rmap_item *rmap_item = visit(k);
	assert_non_null(rmap_item);
	assert_string_equal(rmap_item->mm->name, mm);
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
	if (msg)
		fail_msg("invariant: %s", msg);
}
