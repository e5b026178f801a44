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
		root->node = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

static void rotate_left(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->right;
	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	y->parent = x->parent;
	change_child(x, y, x->parent, root);
	y->left = x;
	x->parent = y;
}

static void rotate_right(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->left;
	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	y->parent = x->parent;
	change_child(x, y, x->parent, root);
	y->right = x;
	x->parent = y;
}

static inline bool is_red(const struct rb_node *n)
{
	return n && n->red;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *parent, *gparent, *uncle;

	while ((parent = node->parent) && parent->red) {
		gparent = parent->parent;
		if (parent == gparent->left) {
			uncle = gparent->right;
			if (is_red(uncle)) {
				uncle->red = false;
				parent->red = false;
				gparent->red = true;
				node = gparent;
				continue;
			}
			if (node == parent->right) {
				rotate_left(parent, root);
				node = parent;
				parent = node->parent;
			}
			parent->red = false;
			gparent->red = true;
			rotate_right(gparent, root);
		} else {
			uncle = gparent->left;
			if (is_red(uncle)) {
				uncle->red = false;
				parent->red = false;
				gparent->red = true;
				node = gparent;
				continue;
			}
			if (node == parent->left) {
				rotate_right(parent, root);
				node = parent;
				parent = node->parent;
			}
			parent->red = false;
			gparent->red = true;
			rotate_left(gparent, root);
		}
	}
	root->node->red = false;
}

/*
 * Restore the black height after a black node was removed from below parent:
 * node (possibly NULL) is the child that now stands where it was.
 */
static void erase_color(struct rb_node *node, struct rb_node *parent, struct rb_root *root)
{
	struct rb_node *sibling;

	while (parent && !is_red(node)) {
		if (node == parent->left) {
			sibling = parent->right;
			if (is_red(sibling)) {
				sibling->red = false;
				parent->red = true;
				rotate_left(parent, root);
				sibling = parent->right;
			}
			if (!is_red(sibling->left) && !is_red(sibling->right)) {
				sibling->red = true;
				node = parent;
				parent = node->parent;
				continue;
			}
			if (!is_red(sibling->right)) {
				sibling->left->red = false;
				sibling->red = true;
				rotate_right(sibling, root);
				sibling = parent->right;
			}
			sibling->red = parent->red;
			parent->red = false;
			sibling->right->red = false;
			rotate_left(parent, root);
			node = root->node;
			break;
		} else {
			sibling = parent->left;
			if (is_red(sibling)) {
				sibling->red = false;
				parent->red = true;
				rotate_right(parent, root);
				sibling = parent->left;
			}
			if (!is_red(sibling->left) && !is_red(sibling->right)) {
				sibling->red = true;
				node = parent;
				parent = node->parent;
				continue;
			}
			if (!is_red(sibling->left)) {
				sibling->right->red = false;
				sibling->red = true;
				rotate_left(sibling, root);
				sibling = parent->left;
			}
			sibling->red = parent->red;
			parent->red = false;
			sibling->left->red = false;
			rotate_right(parent, root);
			node = root->node;
			break;
		}
	}
	if (node)
		node->red = false;
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *child, *parent;
	bool removed_black;

	if (!node->left || !node->right) {
		child = node->left ? node->left : node->right;
		parent = node->parent;
		removed_black = !node->red;
		if (child)
			child->parent = parent;
		change_child(node, child, parent, root);
	} else {
		/* Splice the successor into node's place, taking its colour. */
		struct rb_node *succ = node->right;
		while (succ->left)
			succ = succ->left;
		child = succ->right;
		removed_black = !succ->red;
		if (succ->parent == node) {
			parent = succ;
		} else {
			parent = succ->parent;
			parent->left = child;
			if (child)
				child->parent = parent;
			succ->right = node->right;
			node->right->parent = succ;
		}
		succ->left = node->left;
		node->left->parent = succ;
		succ->parent = node->parent;
		succ->red = node->red;
		change_child(node, succ, node->parent, root);
	}
	if (removed_black)
		erase_color(child, parent, root);
}

void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root)
{
	*new = *victim;
	if (victim->left)
		victim->left->parent = new;
	if (victim->right)
		victim->right->parent = new;
	change_child(victim, new, victim->parent, root);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->node;
	if (!n)
		return NULL;
	while (n->left)
		n = n->left;
	return n;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	if (node->right) {
		node = node->right;
		while (node->left)
			node = node->left;
		return (struct rb_node *)node;
	}
	while (node->parent && node == node->parent->right)
		node = node->parent;
	return node->parent;
}
