// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * XXH3_64bits of one page with xxHash inlined, so the length is a constant
 * and the stripe loops are fully known. hashes/meson.build compiles this
 * file once per instruction set (-mavx2 ... and XXH_VECTOR), naming the
 * function with XXH3_VARIANT_FN; xxh3.c picks one at run time.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "hash.h"
#include "hashes_impl.h"

#ifndef XXH3_VARIANT_FN
#error "build with -DXXH3_VARIANT_FN=page_xxh3_<isa>"
#endif

uint64_t XXH3_VARIANT_FN(const void *page)
{
	return XXH3_64bits(page, HASH_PAGE_SIZE);
}
