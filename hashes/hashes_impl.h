/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page functions behind the registry rows, and the reference loops
 * `ksmsim bench costs` measures them against. Internal to hashes/ and the
 * benchmark; users go through hash.h.
 */
#ifndef KSMSIM_HASHES_IMPL_H
#define KSMSIM_HASHES_IMPL_H

#include <stdint.h>

uint64_t page_jhash2(const void *page);		/* jhash2.c */
uint64_t page_crc32c(const void *page);		/* registry.c */
uint64_t page_xxh3(const void *page);		/* xxh3.c: dispatched */
const char *page_xxh3_impl(void);
uint64_t page_xxh3_inline(const void *page);	/* widest XXH_INLINE_ALL */
const char *page_xxh3_inline_impl(void);

/* xxh3_variant.c compiled once per ISA; call only if the CPU has it. */
uint64_t page_xxh3_inline_sse2(const void *page);
uint64_t page_xxh3_inline_avx2(const void *page);
uint64_t page_xxh3_inline_avx512(const void *page);
/* xxh3_page.c (x86-64 only); call only if the CPU has it. */
uint64_t page_xxh3_avx2(const void *page);
uint64_t page_xxh3_avx512(const void *page);

/* The kernel's jhash2(), page as 1024 u32, initval 17. */
#define PAGE_JHASH2_INITVAL 17u

#endif
