// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>
#include <sys/mman.h>
#include <glib.h>
#include "sim/slab.h"
#include "util/signals.h"

/* gcc says ASan is on with a macro, clang with __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_UNDER_ASAN 1
#endif
#endif

/*
 * Under ASan an object is poisoned from its free (or its arena's birth) to
 * its allocation, so a use of a freed one is still caught until its slot
 * is reused.
 */
#ifdef SLAB_UNDER_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

void slab_init_side(struct slab *s, size_t size, size_t align, size_t side, const char *what)
{
	memset(s, 0, sizeof(*s));
	s->what = what;
	s->align = align;
	s->size = (size + align - 1) & ~(align - 1);
	s->side = side;
	s->first = (sizeof(struct slab_arena) + align - 1) & ~(align - 1);
	s->per_arena = (SLAB_ARENA_BYTES - s->first) / (s->size + side);
	while (((size_t)1 << s->slot_bits) < s->per_arena)
		s->slot_bits++;
}

void slab_init(struct slab *s, size_t size, size_t align, const char *what)
{
	slab_init_side(s, size, align, 0, what);
}

/* An arena aligned to its size, so that an object's address finds it. */
static char *map_aligned_arena(struct slab *s)
{
	size_t len = 2 * SLAB_ARENA_BYTES;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		signals_out_of_memory(s->what);
	char *a = slab_arena_of(m + SLAB_ARENA_BYTES - 1);
	if (a > m)
		munmap(m, (size_t)(a - m));
	munmap(a + SLAB_ARENA_BYTES, (size_t)(m + len - (a + SLAB_ARENA_BYTES)));
	return a;
}

static void grow(struct slab *s)
{
	/* indexes are 32 bits: 2^32 - 1 objects at most (a 4 Ti-page host of rmap_items) */
	if ((s->n_arenas + 1) << s->slot_bits > UINT32_MAX)
		signals_out_of_memory(s->what);
	char *a = map_aligned_arena(s);
	madvise(a, SLAB_ARENA_BYTES, MADV_HUGEPAGE);	/* best effort */
	((struct slab_arena *)a)->no = (uint32_t)s->n_arenas;
	s->arenas = g_renew(char *, s->arenas, s->n_arenas + 1);
	s->arenas[s->n_arenas++] = a;
	s->next = a + s->first;
	s->end = s->next + s->per_arena * s->size;
	POISON(s->next, s->per_arena * s->size);
}

void *slab_alloc0(struct slab *s)
{
	void *obj;
	if (s->free) {
		obj = s->free;
		UNPOISON(obj, s->size);
		s->free = *(void **)obj;
	} else {
		if (s->next == s->end)
			grow(s);
		obj = s->next;
		s->next += s->size;
		UNPOISON(obj, s->size);
	}
	memset(obj, 0, s->size);
	if (s->side)
		memset(slab_side(s, obj), 0, s->side);
	return obj;
}

void slab_free(struct slab *s, void *obj)
{
	*(void **)obj = s->free;
	s->free = obj;
	POISON(obj, s->size);
}

void slab_destroy(struct slab *s)
{
	for (size_t i = 0; i < s->n_arenas; i++) {
		UNPOISON(s->arenas[i], SLAB_ARENA_BYTES);
		munmap(s->arenas[i], SLAB_ARENA_BYTES);
	}
	g_free(s->arenas);
	memset(s, 0, sizeof(*s));
}

size_t slab_bytes(const struct slab *s)
{
	/* what was handed out: the newest arena's untouched tail costs no RSS */
	if (!s->n_arenas)
		return 0;
	size_t objects = (s->n_arenas - 1) * s->per_arena +
			 (size_t)(s->next - (s->arenas[s->n_arenas - 1] + s->first)) / s->size;
	return objects * (s->size + s->side);
}
