// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Run-time choice of the fastest XXH3 page function the CPU can run: our
 * page kernels (xxh3_page.c) with AVX-512 or AVX2, else xxHash inlined.
 * The widest inlined build is kept as a bench reference (xxh3-inline).
 */
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

static page_hash_fn xxh3_fn = page_xxh3_inline_sse2;
static const char *xxh3_name = "sse2 (xxHash inlined)";
static page_hash_fn xxh3_inline_fn = page_xxh3_inline_sse2;
static const char *xxh3_inline_name = "sse2";

__attribute__((constructor)) static void xxh3_init(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw")) {
		xxh3_fn = page_xxh3_avx512;
		xxh3_name = "avx512 page kernel";
		xxh3_inline_fn = page_xxh3_inline_avx512;
		xxh3_inline_name = "avx512";
	} else if (__builtin_cpu_supports("avx2")) {
		xxh3_fn = page_xxh3_avx2;
		xxh3_name = "avx2 page kernel";
		xxh3_inline_fn = page_xxh3_inline_avx2;
		xxh3_inline_name = "avx2";
	}
#endif
}

uint64_t page_xxh3(const void *page)
{
	return xxh3_fn(page);
}

const char *page_xxh3_impl(void)
{
	return xxh3_name;
}

uint64_t page_xxh3_inline(const void *page)
{
	return xxh3_inline_fn(page);
}

const char *page_xxh3_inline_impl(void)
{
	return xxh3_inline_name;
}
