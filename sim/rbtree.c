// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Red-black tree rebalancing. The case analysis follows the classic
 * presentation (Cormen et al.), which is also what lib/rbtree.c implements;
 * tests/sim/test_rbtree.c checks the invariants and the shapes.
 */
#include "sim/rbtree.h"

static void change_child(struct rb_node *old, struct rb_node *new,
			 struct rb_node *parent, struct rb_root *root)
{
	if (!parent)
		root->rb_node = new;
	else if (parent->rb_left == old)
		parent->rb_left = new;
	else
		parent->rb_right = new;
}

static void rotate_left(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_right;
	x->rb_right = y->rb_left;
	if (y->rb_left)
		rb_set_parent(y->rb_left, x);
	rb_set_parent(y, rb_parent(x));
	change_child(x, y, rb_parent(x), root);
	y->rb_left = x;
	rb_set_parent(x, y);
}

static void rotate_right(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_left;
	x->rb_left = y->rb_right;
	if (y->rb_right)
		rb_set_parent(y->rb_right, x);
	rb_set_parent(y, rb_parent(x));
	change_child(x, y, rb_parent(x), root);
	y->rb_right = x;
	rb_set_parent(x, y);
}

static inline bool is_red(const struct rb_node *n)
{
	return n && rb_is_red(n);
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *parent, *gparent, *uncle;

	while ((parent = rb_parent(node)) && rb_is_red(parent)) {
		gparent = rb_parent(parent);
		if (parent == gparent->rb_left) {
			uncle = gparent->rb_right;
			if (is_red(uncle)) {
				rb_set_red(uncle, false);
				rb_set_red(parent, false);
				rb_set_red(gparent, true);
				node = gparent;
				continue;
			}
			if (node == parent->rb_right) {
				rotate_left(parent, root);
				node = parent;
				parent = rb_parent(node);
			}
			rb_set_red(parent, false);
			rb_set_red(gparent, true);
			rotate_right(gparent, root);
		} else {
			uncle = gparent->rb_left;
			if (is_red(uncle)) {
				rb_set_red(uncle, false);
				rb_set_red(parent, false);
				rb_set_red(gparent, true);
				node = gparent;
				continue;
			}
			if (node == parent->rb_left) {
				rotate_right(parent, root);
				node = parent;
				parent = rb_parent(node);
			}
			rb_set_red(parent, false);
			rb_set_red(gparent, true);
			rotate_left(gparent, root);
		}
	}
	rb_set_red(root->rb_node, false);
}

/*
 * Restore the black height after a black node was removed from below parent:
 * node (possibly NULL) is the child that now stands where it was.
 */
static void erase_color(struct rb_node *node, struct rb_node *parent, struct rb_root *root)
{
	struct rb_node *sibling;

	while (parent && !is_red(node)) {
		if (node == parent->rb_left) {
			sibling = parent->rb_right;
			if (is_red(sibling)) {
				rb_set_red(sibling, false);
				rb_set_red(parent, true);
				rotate_left(parent, root);
				sibling = parent->rb_right;
			}
			if (!is_red(sibling->rb_left) && !is_red(sibling->rb_right)) {
				rb_set_red(sibling, true);
				node = parent;
				parent = rb_parent(node);
				continue;
			}
			if (!is_red(sibling->rb_right)) {
				rb_set_red(sibling->rb_left, false);
				rb_set_red(sibling, true);
				rotate_right(sibling, root);
				sibling = parent->rb_right;
			}
			rb_set_red(sibling, rb_is_red(parent));
			rb_set_red(parent, false);
			rb_set_red(sibling->rb_right, false);
			rotate_left(parent, root);
			node = root->rb_node;
			break;
		} else {
			sibling = parent->rb_left;
			if (is_red(sibling)) {
				rb_set_red(sibling, false);
				rb_set_red(parent, true);
				rotate_right(parent, root);
				sibling = parent->rb_left;
			}
			if (!is_red(sibling->rb_left) && !is_red(sibling->rb_right)) {
				rb_set_red(sibling, true);
				node = parent;
				parent = rb_parent(node);
				continue;
			}
			if (!is_red(sibling->rb_left)) {
				rb_set_red(sibling->rb_right, false);
				rb_set_red(sibling, true);
				rotate_left(sibling, root);
				sibling = parent->rb_left;
			}
			rb_set_red(sibling, rb_is_red(parent));
			rb_set_red(parent, false);
			rb_set_red(sibling->rb_left, false);
			rotate_right(parent, root);
			node = root->rb_node;
			break;
		}
	}
	if (node)
		rb_set_red(node, false);
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *child, *parent;
	bool removed_black;

	if (!node->rb_left || !node->rb_right) {
		child = node->rb_left ? node->rb_left : node->rb_right;
		parent = rb_parent(node);
		removed_black = !rb_is_red(node);
		if (child)
			rb_set_parent(child, parent);
		change_child(node, child, parent, root);
	} else {
		/* Splice the successor into node's place, taking its colour. */
		struct rb_node *succ = node->rb_right;
		while (succ->rb_left)
			succ = succ->rb_left;
		child = succ->rb_right;
		removed_black = !rb_is_red(succ);
		if (rb_parent(succ) == node) {
			parent = succ;
		} else {
			parent = rb_parent(succ);
			parent->rb_left = child;
			if (child)
				rb_set_parent(child, parent);
			succ->rb_right = node->rb_right;
			rb_set_parent(node->rb_right, succ);
		}
		succ->rb_left = node->rb_left;
		rb_set_parent(node->rb_left, succ);
		rb_set_parent(succ, rb_parent(node));
		rb_set_red(succ, rb_is_red(node));
		change_child(node, succ, rb_parent(node), root);
	}
	if (removed_black)
		erase_color(child, parent, root);
}

void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root)
{
	*new = *victim;
	if (victim->rb_left)
		rb_set_parent(victim->rb_left, new);
	if (victim->rb_right)
		rb_set_parent(victim->rb_right, new);
	change_child(victim, new, rb_parent(victim), root);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;
	if (!n)
		return NULL;
	while (n->rb_left)
		n = n->rb_left;
	return n;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	if (node->rb_right) {
		node = node->rb_right;
		while (node->rb_left)
			node = node->rb_left;
		return (struct rb_node *)node;
	}
	while (rb_parent(node) && node == rb_parent(node)->rb_right)
		node = rb_parent(node);
	return rb_parent(node);
}
