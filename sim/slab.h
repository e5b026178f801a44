/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fixed-size object cache on huge-page-backed arenas, for rmap items.
 * Tree walks touch one item per level at random; with 4 KiB pages each of
 * those is also a TLB miss, so the arenas ask for transparent huge pages.
 */
#ifndef KSMSIM_SIM_SLAB_H
#define KSMSIM_SIM_SLAB_H

#include <stddef.h>

struct slab {
	size_t size;		/* object size, rounded up to the alignment */
	size_t align;
	void *free;		/* free list threaded through freed objects */
	char *next, *end;	/* bump region of the newest arena */
	void **arenas;
	size_t n_arenas;
	size_t live;		/* under ASan, where each object is its own allocation */
	const char *what;	/* for the out-of-memory message */
};

/* align: power of 2, >= 8; what: the objects, as an out-of-memory message names them */
void slab_init(struct slab *s, size_t size, size_t align, const char *what);
void *slab_alloc0(struct slab *s);
void slab_free(struct slab *s, void *obj);
void slab_destroy(struct slab *s);
/* Bytes of its arenas handed out so far: objects live and on the free list. */
size_t slab_bytes(const struct slab *s);

#endif
