// SPDX-License-Identifier: GPL-2.0-or-later
/* The reference rows of `ksmsim bench costs`; see bench_ref.h. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <glib.h>
#include "bench/bench_ref.h"
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#define WORDS64 (HASH_PAGE_SIZE / 8)

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The cheapest way to read every byte: a sum the compiler may vectorise,
 * cloned for the widest unit so no checksum can look faster than reading.
 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static uint64_t read_floor(const void *page)
{
	const unsigned char *p = page;
	uint64_t s = 0;

	for (unsigned i = 0; i < WORDS64; i++)
		s += ld64(p + 8 * i);
	return s;
}

#if defined(__x86_64__)
#include <immintrin.h>

/* One crc32 dependency chain, 8 bytes per instruction: no interleaving. */
__attribute__((target("sse4.2")))
static uint64_t crc32c_serial(const void *page)
{
	const unsigned char *p = page;
	uint64_t c = 0xffffffffu;

	for (unsigned i = 0; i < WORDS64; i++)
		c = _mm_crc32_u64(c, ld64(p + 8 * i));
	return (uint32_t)~c;
}
#endif

/* Ours, for comparison when the registry row runs ISA-L. */
static uint64_t crc32c_own_page(const void *page)
{
	return crc32c_own(0, page, HASH_PAGE_SIZE);
}

/* Tree comparison of two equal pages: memcmp reads both to the end. */
static uint64_t cmp_pages(void *a, void *b, void *tmp)
{
	return (uint64_t)memcmp(a, b, HASH_PAGE_SIZE);
}

/* A CoW break: copy the shared page into a fresh one. */
static uint64_t copy_page(void *a, void *b, void *tmp)
{
	memcpy(b, a, HASH_PAGE_SIZE);
	return 0;
}

/*
 * What the dirty-bit policy pays for a page it finds written: the PTE made
 * clean (here read-only, as write_protect_page does) and the TLB entry
 * flushed, then the next store dirtying it again. mprotect() also splits
 * and re-merges the VMA, so the figure is an upper bound of the kernel's
 * in-place clear; and nothing else runs in this mm, so the flush is local,
 * where a guest's vCPU threads would make it an IPI shootdown.
 */
static uint64_t wrprotect_flush(const void *page)
{
	void *p = (void *)((uintptr_t)page & ~(uintptr_t)(HASH_PAGE_SIZE - 1));
	uint64_t r = (uint64_t)mprotect(p, HASH_PAGE_SIZE, PROT_READ);

	r |= (uint64_t)mprotect(p, HASH_PAGE_SIZE, PROT_READ | PROT_WRITE);
	*(volatile unsigned char *)p = *(volatile unsigned char *)p;
	return r;
}

static struct cost_ref refs[24];
static size_t nrefs;

static void add(const char *name, unsigned bits, page_hash_fn one,
		uint64_t (*two)(void *, void *, void *), const char *summary)
{
	g_assert(nrefs < G_N_ELEMENTS(refs));
	refs[nrefs++] = (struct cost_ref){ name, bits, one ? 1 : 2, one, two, summary };
}

static gpointer refs_init(gpointer unused)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2"))
		add("crc32c-1stream", 32, crc32c_serial, NULL,
		    "SSE4.2 crc32, one dependency chain, 8 bytes a step");
#endif
	add("crc32c-own", 32, crc32c_own_page, NULL,
	    "our CRC-32C: 3 crc32 streams + pclmul join, or slicing-by-8");
	add("jhash2-plain", 32, ref_jhash2_plain, NULL,
	    "jhash2 as the kernel header reads, plain -O2");
	add("xxh64-lib", 64, ref_xxh64_lib, NULL,
	    "XXH64 via libxxhash.so");
	add("xxh64-kernel", 64, ref_xxh64_kernel, NULL,
	    "XXH64 scalar as ksmd runs it (the kernel's C shape, no vectors)");
	add("jhash2-kernel", 32, ref_jhash2_plain, NULL,
	    "jhash2 as ksmd runs it (the kernel header's C, as jhash2-plain)");
	add("crc32c-kernel", 32, ref_crc32c_kernel, NULL,
	    "CRC-32C as x86 ksmd runs it: 3 crc32 streams + pclmul join "
	    "(without kernel_fpu_begin/end)");
	add("xxh3-inline", 64, page_xxh3_inline, NULL,
	    "XXH3_64bits with XXH_INLINE_ALL, widest vector build");
	add("xxh3-lib", 64, ref_xxh3_lib, NULL,
	    "XXH3_64bits via libxxhash.so");
	if (ref_xxh3_lib_dispatch())
		add("xxh3-lib-dispatch", 64, ref_xxh3_lib_dispatch(), NULL,
		    "XXH3_64bits_dispatch via libxxhash.so (its x86 dispatch)");
	add("read", 0, read_floor, NULL,
	    "read-only floor: sum of the page's u64 words");
	add("memcmp", 0, NULL, cmp_pages,
	    "memcmp of two equal pages: one tree comparison");
	add("copy", 0, NULL, copy_page,
	    "memcpy of a page: one CoW break");
	add("wrprotect-flush", 0, wrprotect_flush, NULL,
	    "make a PTE clean and flush its TLB entry (mprotect pair), then dirty it");
	return NULL;
}

const struct cost_ref *cost_refs(size_t *n)
{
	static GOnce once = G_ONCE_INIT;

	g_once(&once, refs_init, NULL);
	*n = nrefs;
	return refs;
}
