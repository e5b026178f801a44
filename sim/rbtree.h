/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An intrusive red-black tree whose insertion and erase rebalancing make the
 * same rotations as the kernel's lib/rbtree.c (textbook insertion fix-up;
 * erase that splices in the in-order successor). KSM's unstable tree is
 * searched while its pages change under it, so a search can take a path
 * that the ordering no longer justifies; reproducing the kernel's counters
 * then needs the kernel's tree shapes, which a different balanced tree
 * (GLib's GTree is AVL) does not give. The caller walks the tree itself,
 * as the kernel's users do, and links the new node where the walk fell off.
 */
#ifndef KSMSIM_SIM_RBTREE_H
#define KSMSIM_SIM_RBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * As in lib/rbtree.c, the colour sits in the low bit of the parent pointer
 * (nodes are pointer-aligned): a node is 24 bytes, and an rmap_item's
 * tree link fits beside the fields a walk reads in one cache line.
 */
#define RB_BLACK ((uintptr_t)1)

struct rb_node {
	uintptr_t rb_parent_color;
	struct rb_node *rb_left;
	struct rb_node *rb_right;
} __attribute__((aligned(sizeof(uintptr_t))));

struct rb_root {
	struct rb_node *rb_node;
};

#define rb_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline struct rb_node *rb_parent(const struct rb_node *n)
{
	return (struct rb_node *)(n->rb_parent_color & ~RB_BLACK);
}

static inline bool rb_is_red(const struct rb_node *n)
{
	return !(n->rb_parent_color & RB_BLACK);
}

static inline void rb_set_parent(struct rb_node *n, struct rb_node *parent)
{
	n->rb_parent_color = (uintptr_t)parent | (n->rb_parent_color & RB_BLACK);
}

static inline void rb_set_red(struct rb_node *n, bool red)
{
	n->rb_parent_color = (n->rb_parent_color & ~RB_BLACK) | (red ? 0 : RB_BLACK);
}

static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **link)
{
	node->rb_parent_color = (uintptr_t)parent;	/* red */
	node->rb_left = node->rb_right = NULL;
	*link = node;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root);
void rb_erase(struct rb_node *node, struct rb_root *root);
/* Puts new in victim's place, colour and children included. */
void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root);
struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);

#endif
