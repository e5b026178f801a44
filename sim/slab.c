// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>
#include <sys/mman.h>
#include <glib.h>
#include "sim/slab.h"
#include "util/signals.h"

void slab_init_side(struct slab *s, size_t size, size_t align, size_t side, const char *what)
{
	memset(s, 0, sizeof(*s));
	s->what = what;
	s->align = align;
	s->size = (size + align - 1) & ~(align - 1);
	s->side = side;
	s->per_arena = SLAB_ARENA_BYTES / (s->size + side);
}

void slab_init(struct slab *s, size_t size, size_t align, const char *what)
{
	slab_init_side(s, size, align, 0, what);
}

#ifdef SLAB_UNDER_ASAN
/* Under ASan every object is its own allocation, so misuse is still caught. */
void *slab_alloc0(struct slab *s)
{
	s->live++;
	return g_aligned_alloc0(1, s->size + s->side, s->align);
}

void slab_free(struct slab *s, void *obj)
{
	s->live--;
	g_aligned_free(obj);
}
#else
/* An arena aligned to its size, so that slab_side() finds it from an object. */
static void *map_aligned_arena(struct slab *s)
{
	size_t len = 2 * SLAB_ARENA_BYTES;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		signals_out_of_memory(s->what);
	uintptr_t a = ((uintptr_t)m + SLAB_ARENA_BYTES - 1) & ~(uintptr_t)(SLAB_ARENA_BYTES - 1);
	if ((char *)a > m)
		munmap(m, (size_t)((char *)a - m));
	munmap((char *)a + SLAB_ARENA_BYTES, (size_t)(m + len - ((char *)a + SLAB_ARENA_BYTES)));
	return (void *)a;
}

static void grow(struct slab *s)
{
	void *a = map_aligned_arena(s);
	madvise(a, SLAB_ARENA_BYTES, MADV_HUGEPAGE);	/* best effort */
	s->arenas = g_renew(void *, s->arenas, s->n_arenas + 1);
	s->arenas[s->n_arenas++] = a;
	s->next = a;
	s->end = (char *)a + s->per_arena * s->size;
}

void *slab_alloc0(struct slab *s)
{
	void *obj;
	if (s->free) {
		obj = s->free;
		s->free = *(void **)obj;
	} else {
		if (s->next == s->end)
			grow(s);
		obj = s->next;
		s->next += s->size;
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
}
#endif

void slab_destroy(struct slab *s)
{
	for (size_t i = 0; i < s->n_arenas; i++)
		munmap(s->arenas[i], SLAB_ARENA_BYTES);
	g_free(s->arenas);
	memset(s, 0, sizeof(*s));
}

size_t slab_bytes(const struct slab *s)
{
#ifdef SLAB_UNDER_ASAN
	return s->live * (s->size + s->side);
#else
	/* what was handed out: the newest arena's untouched tail costs no RSS */
	if (!s->n_arenas)
		return 0;
	size_t objects = (s->n_arenas - 1) * s->per_arena +
			 (size_t)(s->next - (char *)s->arenas[s->n_arenas - 1]) / s->size;
	return objects * (s->size + s->side);
#endif
}
