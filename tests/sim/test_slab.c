// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The slab's 32-bit indexes and side bytes (sim/slab.h): an rmap_item
 * names its successor by index, and a 64-bit checksum keeps its high half
 * in the item's side bytes, so both must find the right object across
 * arenas and after a free.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <glib.h>
#include "sim/slab.h"

#define N 1000000	/* 72-byte objects: three arenas */

static void test_index_and_side(void **state)
{
	(void)state;
	struct slab s;
	slab_init_side(&s, 72, 8, sizeof(uint32_t), "test objects");
	void **obj = g_new(void *, N);
	assert_null(slab_at(&s, 0));
	assert_int_equal(slab_index(&s, NULL), 0);
	for (uint32_t i = 0; i < N; i++) {
		obj[i] = slab_alloc0(&s);
		uint32_t idx = slab_index(&s, obj[i]);
		assert_int_not_equal(idx, 0);
		assert_ptr_equal(slab_at(&s, idx), obj[i]);
		assert_int_equal(*(uint32_t *)slab_side(&s, obj[i]), 0);
		*(uint32_t *)slab_side(&s, obj[i]) = i;
		*(uint64_t *)obj[i] = ~(uint64_t)i;
	}
	assert_true(s.n_arenas >= 3);
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(*(uint32_t *)slab_side(&s, obj[i]), i);
		assert_int_equal(*(uint64_t *)obj[i], ~(uint64_t)i);	/* no side byte over an object */
	}
	assert_int_equal(slab_bytes(&s), (size_t)N * (72 + sizeof(uint32_t)));
	/* a freed object comes back zeroed, side bytes too, with its index */
	uint32_t idx = slab_index(&s, obj[N / 2]);
	slab_free(&s, obj[N / 2]);
	void *again = slab_alloc0(&s);
	assert_ptr_equal(again, obj[N / 2]);
	assert_int_equal(slab_index(&s, again), idx);
	assert_int_equal(*(uint32_t *)slab_side(&s, again), 0);
	assert_int_equal(*(uint64_t *)again, 0);
	g_free(obj);
	slab_destroy(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_and_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
