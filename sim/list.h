/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The two intrusive lists mm/ksm.c links its structures with, under the
 * kernel's names so that the model reads beside it: list_head (circular,
 * doubly linked: the mm slot list) and hlist (a one-pointer head, nodes
 * that know the link pointing at them: a stable node's rmap_items and a
 * chain's dups). Deleting clears the node's links instead of poisoning.
 */
#ifndef KSMSIM_SIM_LIST_H
#define KSMSIM_SIM_LIST_H

#include <stdbool.h>
#include <stddef.h>

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *head)
{
	head->next = head->prev = head;
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

static inline void __list_add(struct list_head *new, struct list_head *prev,
			      struct list_head *next)
{
	new->prev = prev;
	new->next = next;
	prev->next = new;
	next->prev = new;
}

/* Right after head. */
static inline void list_add(struct list_head *new, struct list_head *head)
{
	__list_add(new, head, head->next);
}

/* Right before head: at the tail when head is the list's sentinel. */
static inline void list_add_tail(struct list_head *new, struct list_head *head)
{
	__list_add(new, head->prev, head);
}

static inline void list_del(struct list_head *entry)
{
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
	entry->next = entry->prev = NULL;
}

static inline void list_move(struct list_head *entry, struct list_head *head)
{
	list_del(entry);
	list_add(entry, head);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

static inline bool hlist_empty(const struct hlist_head *h)
{
	return !h->first;
}

static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	n->next = h->first;
	if (h->first)
		h->first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}

static inline void hlist_del(struct hlist_node *n)
{
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
}

#define hlist_entry(ptr, type, member) container_of(ptr, type, member)
#define hlist_entry_safe(ptr, type, member) \
	((ptr) ? hlist_entry(ptr, type, member) : NULL)

#define hlist_for_each_entry(pos, head, member)                                     \
	for (pos = hlist_entry_safe((head)->first, __typeof__(*(pos)), member); pos; \
	     pos = hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))

/* pos may be freed inside the body. */
#define hlist_for_each_entry_safe(pos, tmp, head, member)                            \
	for (pos = hlist_entry_safe((head)->first, __typeof__(*(pos)), member);       \
	     pos && ((tmp) = (pos)->member.next, 1);                                  \
	     pos = hlist_entry_safe(tmp, __typeof__(*(pos)), member))

#endif
