/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fixed-size object cache on huge-page-backed arenas, for rmap items.
 * Tree walks touch one item per level at random; with 4 KiB pages each of
 * those is also a TLB miss, so the arenas ask for transparent huge pages.
 *
 * An object may have side bytes: a few more bytes of its own, kept apart at
 * the end of its arena (so an object's common fields stay in one cache line
 * and side bytes a run never writes cost it no RSS), found from the object's
 * address alone (the arenas are aligned to their size).
 */
#ifndef KSMSIM_SIM_SLAB_H
#define KSMSIM_SIM_SLAB_H

#include <stddef.h>
#include <stdint.h>

struct slab {
	size_t size;		/* object size, rounded up to the alignment */
	size_t align;
	size_t side;		/* side bytes an object, 0 for none */
	size_t per_arena;	/* objects an arena */
	void *free;		/* free list threaded through freed objects */
	char *next, *end;	/* bump region of the newest arena */
	void **arenas;
	size_t n_arenas;
	size_t live;		/* under ASan, where each object is its own allocation */
	const char *what;	/* for the out-of-memory message */
};

/* align: power of 2, >= 8; what: the objects, as an out-of-memory message names them */
void slab_init(struct slab *s, size_t size, size_t align, const char *what);
/* The same, each object with side bytes too (slab_side), zeroed with it. */
void slab_init_side(struct slab *s, size_t size, size_t align, size_t side, const char *what);
void *slab_alloc0(struct slab *s);
void slab_free(struct slab *s, void *obj);
void slab_destroy(struct slab *s);
/* Bytes of its arenas handed out so far: objects live and on the free list. */
size_t slab_bytes(const struct slab *s);

#define SLAB_ARENA_BYTES ((size_t)32 << 20)

/* gcc says ASan is on with a macro, clang with __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_UNDER_ASAN 1
#endif
#endif

/* An object's side bytes (a slab made by slab_init_side). */
static inline void *slab_side(const struct slab *s, const void *obj)
{
#ifdef SLAB_UNDER_ASAN
	return (char *)obj + s->size;	/* each object its own allocation, side bytes after it */
#else
	uintptr_t base = (uintptr_t)obj & ~(uintptr_t)(SLAB_ARENA_BYTES - 1);
	size_t slot = ((uintptr_t)obj - base) / s->size;
	return (char *)base + s->per_arena * s->size + slot * s->side;
#endif
}

#endif
