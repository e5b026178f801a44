// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * XXH3_64bits of one page with xxHash inlined, so the length is a constant
 * and the stripe loops are fully known. hashes/meson.build compiles this
 * file once per instruction set (-mavx2 ... and XXH_VECTOR), naming the
 * function with XXH3_VARIANT_FN. xxh3.c runs the SSE2 one where the CPU
 * has neither AVX2 nor AVX-512; the others are bench costs' xxh3-inline row.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#ifndef XXH3_VARIANT_FN
#error "build with -DXXH3_VARIANT_FN=page_xxh3_inline_<isa>"
#endif

uint64_t XXH3_VARIANT_FN(const void *page)
{
	return XXH3_64bits(page, HASH_PAGE_SIZE);
}
