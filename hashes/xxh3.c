// SPDX-License-Identifier: GPL-2.0-or-later
/* Run-time choice of the widest XXH3 build the CPU can run. */
#include "hashes_impl.h"

static uint64_t (*xxh3_fn)(const void *page) = page_xxh3_sse2;
static const char *xxh3_name = "sse2";

__attribute__((constructor)) static void xxh3_init(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw")) {
		xxh3_fn = page_xxh3_avx512;
		xxh3_name = "avx512";
	} else if (__builtin_cpu_supports("avx2")) {
		xxh3_fn = page_xxh3_avx2;
		xxh3_name = "avx2";
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
