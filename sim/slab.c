// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>
#include <sys/mman.h>
#include <glib.h>
#include "sim/slab.h"
#include "util/signals.h"

#define ARENA_BYTES (32u << 20)

void slab_init(struct slab *s, size_t size, size_t align, const char *what)
{
	memset(s, 0, sizeof(*s));
	s->what = what;
	s->align = align;
	s->size = (size + align - 1) & ~(align - 1);
}

/* gcc says ASan is on with a macro, clang with __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_UNDER_ASAN 1
#endif
#endif

#ifdef SLAB_UNDER_ASAN
/* Under ASan every object is its own allocation, so misuse is still caught. */
void *slab_alloc0(struct slab *s)
{
	s->live++;
	return g_aligned_alloc0(1, s->size, s->align);
}

void slab_free(struct slab *s, void *obj)
{
	s->live--;
	g_aligned_free(obj);
}
#else
static void grow(struct slab *s)
{
	void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		signals_out_of_memory(s->what);
	madvise(a, ARENA_BYTES, MADV_HUGEPAGE);	/* best effort */
	s->arenas = g_renew(void *, s->arenas, s->n_arenas + 1);
	s->arenas[s->n_arenas++] = a;
	s->next = a;
	s->end = (char *)a + ARENA_BYTES;
}

void *slab_alloc0(struct slab *s)
{
	void *obj;
	if (s->free) {
		obj = s->free;
		s->free = *(void **)obj;
	} else {
		if (!s->next || (size_t)(s->end - s->next) < s->size)
			grow(s);
		obj = s->next;
		s->next += s->size;
	}
	memset(obj, 0, s->size);
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
		munmap(s->arenas[i], ARENA_BYTES);
	g_free(s->arenas);
	memset(s, 0, sizeof(*s));
}

size_t slab_bytes(const struct slab *s)
{
#ifdef SLAB_UNDER_ASAN
	return s->live * s->size;
#else
	/* what was handed out: the newest arena's untouched tail costs no RSS */
	return s->n_arenas * ARENA_BYTES - (size_t)(s->end - s->next);
#endif
}
