/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fixed-size object cache on huge-page-backed arenas, for rmap items,
 * pages and stable nodes. Tree walks touch one item per level at random;
 * with 4 KiB pages each of those is also a TLB miss, so the arenas ask for
 * transparent huge pages.
 *
 * Arenas are aligned to their size, so an object's arena is its address
 * masked: that gives every object a 32-bit index (slab_index, slab_at: a
 * link of half a pointer's size) and, for a slab made with side bytes, a
 * few bytes of its own kept apart at the end of its arena (slab_side: an
 * object's common fields stay in one cache line, and side bytes a run
 * never writes cost it no RSS).
 */
#ifndef KSMSIM_SIM_SLAB_H
#define KSMSIM_SIM_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define SLAB_ARENA_BYTES ((size_t)32 << 20)

struct slab {
	size_t size;		/* object size, rounded up to the alignment */
	size_t align;
	size_t side;		/* side bytes an object, 0 for none */
	size_t first;		/* offset of an arena's first object: its header before */
	size_t per_arena;	/* objects an arena */
	unsigned slot_bits;	/* an index: arena number << slot_bits | slot, plus 1 */
	void *free;		/* free list threaded through freed objects */
	char *next, *end;	/* bump region of the newest arena */
	char **arenas;
	size_t n_arenas;
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

/* An arena's header: its number in s->arenas. */
struct slab_arena {
	uint32_t no;
};

static inline char *slab_arena_of(const void *obj)
{
	return (char *)((uintptr_t)obj & ~(uintptr_t)(SLAB_ARENA_BYTES - 1));
}

static inline size_t slab_slot(const struct slab *s, const void *obj)
{
	return (size_t)((const char *)obj - slab_arena_of(obj) - s->first) / s->size;
}

/* An object's index, never 0 (slab_at(s, 0) is NULL); NULL's is 0. */
static inline uint32_t slab_index(const struct slab *s, const void *obj)
{
	if (!obj)
		return 0;
	const struct slab_arena *a = (const struct slab_arena *)slab_arena_of(obj);
	return (uint32_t)(((size_t)a->no << s->slot_bits | slab_slot(s, obj)) + 1);
}

static inline void *slab_at(const struct slab *s, uint32_t index)
{
	if (!index)
		return NULL;
	index--;
	size_t slot = index & ((UINT32_C(1) << s->slot_bits) - 1);
	return s->arenas[index >> s->slot_bits] + s->first + slot * s->size;
}

/* An object's side bytes (a slab made by slab_init_side). */
static inline void *slab_side(const struct slab *s, const void *obj)
{
	return slab_arena_of(obj) + s->first + s->per_arena * s->size + slab_slot(s, obj) * s->side;
}

#endif
