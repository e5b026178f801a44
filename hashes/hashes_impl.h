/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The implementations behind the registry rows, each by its own name, for
 * hashes/ itself, its tests and `ksmsim bench costs`, which measures them
 * one by one. Everyone else goes through hashes/hash.h.
 */
#ifndef KSMSIM_HASHES_HASHES_IMPL_H
#define KSMSIM_HASHES_HASHES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* KSM hashed a page as jhash2(page as 1024 u32, 1024, 17) until 4.20. */
#define PAGE_JHASH2_INITVAL 17u
uint64_t page_jhash2(const void *page);			/* jhash2.c */
uint64_t page_siphash(const void *page);		/* siphash.c */
uint64_t page_xxhash_seeded(const void *page);		/* siphash.c */

/*
 * crc32c.c. crc32c() (hash.h) is ISA-L's crc32_iscsi when ksmsim is built
 * with libisal, else ours: the SSE4.2 path where the CPU has it, else the
 * portable tables. All give the same values, with crc32c()'s convention.
 */
uint32_t crc32c_own(uint32_t seed, const void *buf, size_t len);
uint32_t crc32c_sw(uint32_t seed, const void *buf, size_t len);	/* slicing-by-8 */
bool crc32c_hw_available(void);	/* SSE4.2 crc32 and PCLMULQDQ */
uint32_t crc32c_hw(uint32_t seed, const void *buf, size_t len);	/* only if available */
const char *crc32c_impl(void);		/* what crc32c() runs */
const char *crc32c_own_impl(void);	/* what crc32c_own() runs */

/* xxh3.c: the fastest XXH3 page function this CPU can run. */
uint64_t page_xxh3(const void *page);
const char *page_xxh3_impl(void);
uint64_t page_xxh3_inline(const void *page);	/* widest XXH_INLINE_ALL build */
const char *page_xxh3_inline_impl(void);

/* xxh3_variant.c compiled once per ISA; call only if the CPU has it. */
uint64_t page_xxh3_inline_sse2(const void *page);
uint64_t page_xxh3_inline_avx2(const void *page);
uint64_t page_xxh3_inline_avx512(const void *page);
/* xxh3_page.c (x86-64 only); call only if the CPU has it. */
uint64_t page_xxh3_avx2(const void *page);
uint64_t page_xxh3_avx512(const void *page);

#endif
