// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What ksmd's work costs, in one place: the hooks (ksm_events.h) only
 * count, and a batch's CPU time is the sum over the priced rows of the
 * counts since the last charge times their price, taken at the batch's end
 * and when the scan-time advisor reads the time. One row per term: every
 * term of cost_model.h (a new term there is priced here by being counted),
 * then the policies' own work, which the cost table does not carry.
 */
#include "sim/ksm_internal.h"

/* Rows past the cost table's terms: what a policy's gate costs. */
enum {
	PRICE_DIRTY_FLUSH = COST_NR,	/* dirty-bit: a set bit cleared, its TLB entry flushed */
	PRICE_PARTIAL_LINE,		/* partial-hash: a cache line of sampled words hashed */
	PRICE_NR
};

void ksm_cost_counts(const struct ksm *k, struct cost_counts *out)
{
	*out = k->cost_n;
	out->n[COST_MEMCMP_BYTE] = k->truth.memcmp_bytes;
	out->n[COST_MERGE] = k->truth.merges_two + k->truth.merges_stable + k->truth.merges_zero;
	out->n[COST_TREE_COLD] = cost_cold_levels(out, (unsigned)k->opt.costs.cold_depth);
	/* the same levels, their scan-loop part priced apart (cost_model.h) */
	out->n[COST_TREE_SCAN] = out->n[COST_TREE_LEVEL];
}

static double price(const struct ksm *k, unsigned row)
{
	if (row < COST_NR)
		return cost_get(&k->opt.costs, row);
	if (row == PRICE_DIRTY_FLUSH)
		return k->opt.policy.dirty_flush_ns ? (double)k->opt.policy.dirty_flush_ns
						    : k->opt.costs.dirty_clear_ns;
	/* a strided word is a line of its own until the stride falls below one: 64 a page */
	return k->opt.costs.checksum_ns / 64.0;
}

static uint64_t count(const struct ksm *k, const struct cost_counts *c, unsigned row)
{
	if (row < COST_NR)
		return c->n[row];
	if (row == PRICE_DIRTY_FLUSH)
		return k->pstats.dirty_flushes;
	return k->partial_lines;
}

/*
 * Add what was counted since the last charge to the batch's time. A row
 * priced 0 (the built-in table before calibration) adds nothing, not even
 * rounding.
 */
static void charge(struct ksm *k)
{
	struct cost_counts now;

	G_STATIC_ASSERT(PRICE_NR <= G_N_ELEMENTS(k->charged));
	ksm_cost_counts(k, &now);
	for (unsigned row = 0; row < PRICE_NR; row++) {
		uint64_t n = count(k, &now, row), d = n - k->charged[row];
		double p = price(k, row);

		if (d && p != 0)
			k->batch_cpu_ns += (double)d * p;
		k->charged[row] = n;
	}
}

double ksm_cpu_ns(struct ksm *k)
{
	charge(k);
	return k->truth.cpu_ns + k->batch_cpu_ns;
}

double ksm_batch_end(struct ksm *k)
{
	double ns;

	charge(k);
	ns = k->batch_cpu_ns;
	k->truth.cpu_ns += ns;
	k->batch_cpu_ns = 0;
	return ns;
}
