// SPDX-License-Identifier: GPL-2.0-or-later
/* The red-black tree: invariants under random churn, and textbook shapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sim/rbtree.h"

struct item {
	struct rb_node rb;
	int key;
};

static void insert(struct rb_root *root, struct item *it)
{
	struct rb_node **link = &root->rb_node, *parent = NULL;
	while (*link) {
		parent = *link;
		link = it->key < rb_entry(parent, struct item, rb)->key ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&it->rb, parent, link);
	rb_insert_color(&it->rb, root);
}

static int check(const struct rb_node *n, const struct rb_node *parent, int lo, int hi)
{
	if (!n)
		return 1;
	int key = rb_entry(n, struct item, rb)->key;
	assert_ptr_equal(rb_parent(n), parent);
	assert_true(key >= lo && key <= hi);
	if (rb_is_red(n)) {
		assert_false(n->rb_left && rb_is_red(n->rb_left));
		assert_false(n->rb_right && rb_is_red(n->rb_right));
	}
	int l = check(n->rb_left, n, lo, key), r = check(n->rb_right, n, key, hi);
	assert_int_equal(l, r);
	return l + !rb_is_red(n);
}

static void shape(const struct rb_node *n, char *out)
{
	if (!n) {
		strcat(out, ".");
		return;
	}
	char buf[16];
	snprintf(buf, sizeof(buf), "%d%c(", rb_entry(n, struct item, rb)->key, rb_is_red(n) ? 'r' : 'b');
	strcat(out, buf);
	shape(n->rb_left, out);
	strcat(out, ",");
	shape(n->rb_right, out);
	strcat(out, ")");
}

static void test_ascending_shape(void **state)
{
	struct rb_root root = { NULL };
	struct item it[7];
	for (int i = 0; i < 7; i++) {
		it[i].key = i + 1;
		insert(&root, &it[i]);
	}
	char s[512] = "";
	shape(root.rb_node, s);
	assert_string_equal(s, "2b(1b(.,.),4r(3b(.,.),6b(5r(.,.),7r(.,.))))");
	/* erase a node with two children: its successor takes its place and colour */
	rb_erase(&it[3].rb, &root);
	s[0] = 0;
	shape(root.rb_node, s);
	assert_string_equal(s, "2b(1b(.,.),5r(3b(.,.),6b(.,7r(.,.))))");
	/* erase a black leaf: rebalancing rotates around 2 */
	rb_erase(&it[0].rb, &root);
	s[0] = 0;
	shape(root.rb_node, s);
	assert_string_equal(s, "5b(2b(.,3r(.,.)),6b(.,7r(.,.)))");
}

static void test_random_churn(void **state)
{
	enum { N = 2000 };
	struct item *it = calloc(N, sizeof(*it));
	bool *in = calloc(N, sizeof(*in));
	struct rb_root root = { NULL };
	uint64_t x = 88172645463325252ull;
	for (int step = 0; step < 40000; step++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int i = (int)(x % N);
		if (in[i]) {
			rb_erase(&it[i].rb, &root);
			in[i] = false;
		} else {
			it[i].key = (int)((x >> 20) % 500);	/* duplicates allowed */
			insert(&root, &it[i]);
			in[i] = true;
		}
		if (step % 997 == 0) {
			check(root.rb_node, NULL, -1, 1000);
			int count = 0, prev = -1;
			for (struct rb_node *n = rb_first(&root); n; n = rb_next(n)) {
				int k = rb_entry(n, struct item, rb)->key;
				assert_true(k >= prev);
				prev = k;
				count++;
			}
			int want = 0;
			for (int j = 0; j < N; j++)
				want += in[j];
			assert_int_equal(count, want);
		}
	}
	free(it);
	free(in);
}

static void test_replace(void **state)
{
	struct rb_root root = { NULL };
	struct item it[5], repl = { .key = 2 };
	for (int i = 0; i < 5; i++) {
		it[i].key = i;
		insert(&root, &it[i]);
	}
	rb_replace_node(&it[2].rb, &repl.rb, &root);
	check(root.rb_node, NULL, -1, 10);
	int n = 0, prev = -1;
	for (struct rb_node *p = rb_first(&root); p; p = rb_next(p), n++) {
		assert_true(rb_entry(p, struct item, rb)->key > prev);
		prev = rb_entry(p, struct item, rb)->key;
	}
	assert_int_equal(n, 5);
	bool found = false;
	for (struct rb_node *p = rb_first(&root); p; p = rb_next(p))
		found |= p == &repl.rb;
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascending_shape),
		cmocka_unit_test(test_random_churn),
		cmocka_unit_test(test_replace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
