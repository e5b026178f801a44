/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The registry of page checksums. Each row is data: adding a checksum is
 * adding a row. Every function reads exactly one 4096-byte page.
 */
#ifndef KSMSIM_HASH_H
#define KSMSIM_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_PAGE_SIZE 4096u

typedef uint64_t (*page_hash_fn)(const void *page);

struct page_hash {
	const char *name;
	unsigned bits;		/* 32 or 64: what the value can hold; 0 for none */
	page_hash_fn fn;	/* NULL for "none": no checksum gate */
	const char *summary;	/* one line for `ksmsim hashes` */
};

/* NULL when no checksum has that name. */
const struct page_hash *hash_lookup(const char *name);
/* All rows, in listing order; *n receives the count. */
const struct page_hash *hash_all(size_t *n);
/* The kernel's choice today: "xxhash". */
#define HASH_DEFAULT "xxhash"

#endif
