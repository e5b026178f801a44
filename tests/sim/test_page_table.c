// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An mm's table of PTE chunks against a sorted set of the vpns written:
 * pages written one at a time in random order over the whole 2^32-page
 * space (so the table grows up and down from its first chunk), then
 * unmapped a page or a range at a time, and a fork's copy. After each
 * step the chunks come out in index order (pt_chunk_next, the walk of
 * unmap, fork, exit and the oracle), every written vpn maps its page,
 * next_present() finds the next one, and an emptied table frees its nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sim/harness.h"

#define N 600

static int cmp_vpn(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* vpns (sorted, n of them) are exactly what mm maps, in the table's order. */
static void check_table(struct mm *mm, const uint64_t *vpns, int n)
{
	int i = 0;
	uint64_t chunks = 0;
	struct pt_chunk *c;
	for (uint64_t idx = 0; (c = pt_chunk_next(mm, &idx)); idx++) {
		chunks++;
		assert_true(i < n);
		/* the next chunk is the next written vpn's */
		assert_int_equal(idx, vpns[i] >> PT_SHIFT);
		for (unsigned j = 0; j < PT_SIZE; j++) {
			uint64_t vpn = (idx << PT_SHIFT) | j;
			bool written = i < n && vpns[i] == vpn;
			assert_int_equal(c->pte[j] != 0, written);
			i += written;
		}
	}
	assert_int_equal(i, n);
	assert_int_equal(mm->nr_chunks, chunks);
	for (int j = 0; j < n; j++) {
		assert_non_null(pte_get(mm, vpns[j]));
		uint64_t from = j ? vpns[j - 1] + 1 : 0;
		assert_int_equal(next_present(mm, from, TRACE_VPN_LIMIT), vpns[j]);
	}
	uint64_t after = n ? vpns[n - 1] + 1 : 0;
	assert_int_equal(next_present(mm, after, TRACE_VPN_LIMIT), UINT64_MAX);
	if (!n) {
		assert_null(mm->pt_root);
		assert_int_equal(mm->pt_dirs, 0);
	}
}

static uint64_t random_vpn(void)
{
	uint64_t r = (uint64_t)rand() << 31 ^ (uint64_t)rand();
	switch (rand() % 4) {
	case 0:
		return r % TRACE_VPN_LIMIT;			/* anywhere */
	case 1:
		return r % 4096;				/* a few chunks near 0 */
	case 2:
		return TRACE_VPN_LIMIT - 1 - r % 4096;		/* the top of the space */
	default:
		return (UINT64_C(1) << 20) + r % (1 << 16);	/* one dense region */
	}
}

/* Removes the vpns in [start, end) from the sorted set. */
static int drop(uint64_t *vpns, int n, uint64_t start, uint64_t end)
{
	int out = 0;
	for (int i = 0; i < n; i++)
		if (vpns[i] < start || vpns[i] >= end)
			vpns[out++] = vpns[i];
	return out;
}

static void test_table_order(void **state)
{
	struct sim *s = *state;
	struct ksm *k = s->k;
	static uint64_t vpns[N], kid[N];
	int n = 0;
	srand(42);
	on(s, TRACE_SPAWN, "a", 0, 0);
	apply(s);
	on(s, TRACE_MAP, "a", 0, TRACE_VPN_LIMIT);
	apply(s);
	struct mm *mm = mm_of(k, "a");
	check_table(mm, vpns, 0);
	while (n < N) {
		uint64_t vpn = random_vpn();
		if (pte_get(mm, vpn))
			continue;
		fill(s, "a", vpn, 1, 1 + n % 5);
		vpns[n++] = vpn;
		qsort(vpns, n, sizeof(vpns[0]), cmp_vpn);
		if (n % 50 == 0)
			check_table(mm, vpns, n);
	}
	check_table(mm, vpns, n);

	on(s, TRACE_FORK, "a", 0, 0);
	g_strlcpy(s->rec.child, "b", sizeof(s->rec.child));
	apply(s);
	memcpy(kid, vpns, sizeof(vpns));
	check_table(mm_of(k, "b"), kid, n);

	/* single pages, then ranges, until nothing is left */
	for (int step = 0; n; step++) {
		uint64_t start, len;
		if (step < 200) {
			start = vpns[rand() % n];
			len = 1;
		} else {
			start = random_vpn();
			len = (uint64_t)1 << (rand() % 32);
			len = MIN(len, TRACE_VPN_LIMIT - start);
		}
		unmap_pages(s, "a", start, len);
		n = drop(vpns, n, start, start + len);
		if (step % 20 == 0 || !n)
			check_table(mm, vpns, n);
	}
	check_invariants(k);
	on(s, TRACE_EXIT, "b", 0, 0);
	apply(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table_order, sim_setup, sim_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
