// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * analysis/frontier.h: the rule advise and tune judge their rows by, on
 * hand-made points (domination, the frontier, the most saved within a set
 * with its ties, the cheapest, the order by CPU), each worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "analysis/frontier.h"

/*
 * 0 (1, 10), 1 (2, 20), 2 (2, 15): dominated by 1, 3 (3, 20): dominated by
 * 1, 4 (0.5, 5), 5 (2, 20): the same point as 1 (neither dominates).
 */
static const struct frontier_point pts[] = {
	{ 1, 10 }, { 2, 20 }, { 2, 15 }, { 3, 20 }, { 0.5, 5 }, { 2, 20 },
};
#define N (sizeof(pts) / sizeof(pts[0]))

static void test_dominates(void **state)
{
	assert_true(frontier_dominates(&pts[1], &pts[2]));	/* same CPU, more saved */
	assert_true(frontier_dominates(&pts[1], &pts[3]));	/* less CPU, same saved */
	assert_false(frontier_dominates(&pts[1], &pts[5]));	/* equal: neither */
	assert_false(frontier_dominates(&pts[0], &pts[1]));	/* cheaper but saves less */
	assert_false(frontier_dominates(&pts[2], &pts[2]));
}

static void test_mark(void **state)
{
	bool on[N];
	const bool want[N] = { true, true, false, false, true, true };

	frontier_mark(pts, N, on);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(on[i], want[i]);
}

static void test_best(void **state)
{
	/* the most saved: 1, 3 and 5 save 20; 1 and 5 the least CPU of them; 1 first */
	assert_int_equal(frontier_best(pts, N, NULL), 1);
	const bool budget[N] = { true, false, true, true, true, false };	/* 3 saves as 1 */
	assert_int_equal(frontier_best(pts, N, budget), 3);
	const bool low[N] = { true, false, false, false, true, false };
	assert_int_equal(frontier_best(pts, N, low), 0);
	const bool none[N] = { false };
	assert_int_equal(frontier_best(pts, N, none), -1);
	assert_int_equal(frontier_best(pts, 0, NULL), -1);
}

static void test_cheapest(void **state)
{
	assert_int_equal(frontier_cheapest(pts, N, NULL), 4);
	const bool some[N] = { false, false, true, true, false, true };	/* 2 and 5 tie: the first */
	assert_int_equal(frontier_cheapest(pts, N, some), 2);
	const bool none[N] = { false };
	assert_int_equal(frontier_cheapest(pts, N, none), -1);
}

static void test_by_cpu(void **state)
{
	size_t order[N];
	const size_t all[N] = { 4, 0, 1, 2, 5, 3 };	/* ties in index order */

	assert_int_equal(frontier_by_cpu(pts, N, NULL, order), N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(order[i], all[i]);
	const bool some[N] = { false, true, false, true, true, true };
	assert_int_equal(frontier_by_cpu(pts, N, some, order), 4);
	assert_int_equal(order[0], 4);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 5);
	assert_int_equal(order[3], 3);
}

static void test_round(void **state)
{
	assert_true(frontier_round(1.23456, 3) == 1.235);
	assert_true(frontier_round(2595.0004, 3) == 2595.0);
	assert_true(frontier_round(-0.5004, 3) == -0.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dominates),
		cmocka_unit_test(test_mark),
		cmocka_unit_test(test_best),
		cmocka_unit_test(test_cheapest),
		cmocka_unit_test(test_by_cpu),
		cmocka_unit_test(test_round),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
