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
		y->rb_left->rb_parent = x;
	y->rb_parent = x->rb_parent;
	change_child(x, y, x->rb_parent, root);
	y->rb_left = x;
	x->rb_parent = y;
}

static void rotate_right(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_left;
	x->rb_left = y->rb_right;
	if (y->rb_right)
		y->rb_right->rb_parent = x;
	y->rb_parent = x->rb_parent;
	change_child(x, y, x->rb_parent, root);
	y->rb_right = x;
	x->rb_parent = y;
}

static inline bool is_red(const struct rb_node *n)
{
	return n && n->rb_red;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *parent, *gparent, *uncle;

	while ((parent = node->rb_parent) && parent->rb_red) {
		gparent = parent->rb_parent;
		if (parent == gparent->rb_left) {
			uncle = gparent->rb_right;
			if (is_red(uncle)) {
				uncle->rb_red = false;
				parent->rb_red = false;
				gparent->rb_red = true;
				node = gparent;
				continue;
			}
			if (node == parent->rb_right) {
				rotate_left(parent, root);
				node = parent;
				parent = node->rb_parent;
			}
			parent->rb_red = false;
			gparent->rb_red = true;
			rotate_right(gparent, root);
		} else {
			uncle = gparent->rb_left;
			if (is_red(uncle)) {
				uncle->rb_red = false;
				parent->rb_red = false;
				gparent->rb_red = true;
				node = gparent;
				continue;
			}
			if (node == parent->rb_left) {
				rotate_right(parent, root);
				node = parent;
				parent = node->rb_parent;
			}
			parent->rb_red = false;
			gparent->rb_red = true;
			rotate_left(gparent, root);
		}
	}
	root->rb_node->rb_red = false;
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
				sibling->rb_red = false;
				parent->rb_red = true;
				rotate_left(parent, root);
				sibling = parent->rb_right;
			}
			if (!is_red(sibling->rb_left) && !is_red(sibling->rb_right)) {
				sibling->rb_red = true;
				node = parent;
				parent = node->rb_parent;
				continue;
			}
			if (!is_red(sibling->rb_right)) {
				sibling->rb_left->rb_red = false;
				sibling->rb_red = true;
				rotate_right(sibling, root);
				sibling = parent->rb_right;
			}
			sibling->rb_red = parent->rb_red;
			parent->rb_red = false;
			sibling->rb_right->rb_red = false;
			rotate_left(parent, root);
			node = root->rb_node;
			break;
		} else {
			sibling = parent->rb_left;
			if (is_red(sibling)) {
				sibling->rb_red = false;
				parent->rb_red = true;
				rotate_right(parent, root);
				sibling = parent->rb_left;
			}
			if (!is_red(sibling->rb_left) && !is_red(sibling->rb_right)) {
				sibling->rb_red = true;
				node = parent;
				parent = node->rb_parent;
				continue;
			}
			if (!is_red(sibling->rb_left)) {
				sibling->rb_right->rb_red = false;
				sibling->rb_red = true;
				rotate_left(sibling, root);
				sibling = parent->rb_left;
			}
			sibling->rb_red = parent->rb_red;
			parent->rb_red = false;
			sibling->rb_left->rb_red = false;
			rotate_right(parent, root);
			node = root->rb_node;
			break;
		}
	}
	if (node)
		node->rb_red = false;
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *child, *parent;
	bool removed_black;

	if (!node->rb_left || !node->rb_right) {
		child = node->rb_left ? node->rb_left : node->rb_right;
		parent = node->rb_parent;
		removed_black = !node->rb_red;
		if (child)
			child->rb_parent = parent;
		change_child(node, child, parent, root);
	} else {
		/* Splice the successor into node's place, taking its colour. */
		struct rb_node *succ = node->rb_right;
		while (succ->rb_left)
			succ = succ->rb_left;
		child = succ->rb_right;
		removed_black = !succ->rb_red;
		if (succ->rb_parent == node) {
			parent = succ;
		} else {
			parent = succ->rb_parent;
			parent->rb_left = child;
			if (child)
				child->rb_parent = parent;
			succ->rb_right = node->rb_right;
			node->rb_right->rb_parent = succ;
		}
		succ->rb_left = node->rb_left;
		node->rb_left->rb_parent = succ;
		succ->rb_parent = node->rb_parent;
		succ->rb_red = node->rb_red;
		change_child(node, succ, node->rb_parent, root);
	}
	if (removed_black)
		erase_color(child, parent, root);
}

void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root)
{
	*new = *victim;
	if (victim->rb_left)
		victim->rb_left->rb_parent = new;
	if (victim->rb_right)
		victim->rb_right->rb_parent = new;
	change_child(victim, new, victim->rb_parent, root);
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
	while (node->rb_parent && node == node->rb_parent->rb_right)
		node = node->rb_parent;
	return node->rb_parent;
}
