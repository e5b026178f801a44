// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xxHash through the shared library (no XXH_INLINE_ALL here): what a
 * program gets by linking libxxhash. The yardstick for xxh3.c and for the
 * registry's xxhash row.
 */
#include <stddef.h>
#include <xxhash.h>
#include "bench/bench_ref.h"
#include "hashes/hash.h"

/* Debian builds libxxhash with xxh_x86dispatch; others may not. */
extern XXH64_hash_t XXH3_64bits_dispatch(const void *input, size_t len)
	__attribute__((weak));

uint64_t ref_xxh3_lib(const void *page)
{
	return XXH3_64bits(page, HASH_PAGE_SIZE);
}

uint64_t ref_xxh64_lib(const void *page)
{
	return XXH64(page, HASH_PAGE_SIZE, 0);
}

static uint64_t xxh3_lib_dispatch(const void *page)
{
	return XXH3_64bits_dispatch(page, HASH_PAGE_SIZE);
}

page_hash_fn ref_xxh3_lib_dispatch(void)
{
	return XXH3_64bits_dispatch ? xxh3_lib_dispatch : NULL;
}
