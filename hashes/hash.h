/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page checksums: the registry the model gates on, the byte-level
 * CRC-32C under one of its rows, and the per-page cost table that
 * `ksmsim bench costs --csv` writes and the model reads back.
 */
#ifndef KSMSIM_HASHES_HASH_H
#define KSMSIM_HASHES_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#define HASH_PAGE_SIZE 4096u

/* What KSM stores of one 4096-byte page, widened to u64. */
typedef uint64_t (*page_hash_fn)(const void *page);

/*
 * One registry row. Each row is data: adding a checksum is adding a row.
 * The row's name is also its key in a measured cost table.
 */
struct page_hash {
	const char *name;
	unsigned bits;		/* 32 or 64: what the value can hold; 0 for none */
	page_hash_fn fn;	/* NULL for "none": no checksum gate */
	/*
	 * What the model charges a checksum of one page, ns, unless --costs
	 * gives a table: the built-in table's row (sim/cost_model.c), fitted
	 * by `bench calibrate` on the reference machine (AMD EPYC,
	 * bench/tables/costs-amd-epyc.csv, its "checksum:NAME" rows); 0 for
	 * none.
	 */
	double cold_ns;
	/* Which implementation this CPU and build run; NULL when only one. */
	const char *(*impl)(void);
	const char *summary;	/* one line for `ksmsim hashes` */
};

/* NULL when no checksum has that name (or name is NULL); case does not matter. */
const struct page_hash *hash_lookup(const char *name);
/* The name within two edits of name (a typo's likely meaning), or NULL. */
const char *hash_nearest(const char *name);
/* All rows, in listing order; *n receives the count. */
const struct page_hash *hash_all(size_t *n);
/*
 * The row a command-line name stands for, in every command's words: NULL
 * with *error "unknown checksum 'NAME'; did you mean 'NEAR'? ('ksmsim
 * hashes' lists them)" (the guess only for a likely typo), or, unless
 * allow_none, "'none' computes no checksum ..." for the row without one.
 * The caller puts "PROG: --OPTION: " in front.
 */
const struct page_hash *hash_resolve(const char *name, bool allow_none, GError **error);
/* The kernel's choice today: "xxhash". */
#define HASH_DEFAULT "xxhash"

/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of len bytes, the
 * function behind the "crc32c" row. Like zlib's crc32(), seed is a previous
 * result (0 to start) and the value is inverted on entry and on exit:
 * crc32c(0, "123456789", 9) == 0xE3069283, and crc32c(crc32c(0, a, n), b, m)
 * is the CRC of a followed by b. The kernel's crc32c(~0, buf, len) is the
 * value before the final inversion, ~crc32c(0, buf, len).
 */
uint32_t crc32c(uint32_t seed, const void *buf, size_t len);

/*
 * SipHash-2-4 of len bytes under the 128-bit key (k0, k1), the paper's
 * words read little-endian: the function behind the "siphash" row.
 */
uint64_t siphash24(uint64_t k0, uint64_t k1, const void *buf, size_t len);
/*
 * The key of the keyed rows ("siphash", "xxhash-seeded"): two words drawn
 * from k by SplitMix64. Unset, it is KSMSIM_HASH_KEY's value or 1, read at
 * the first checksum: a key no trace holds, as a key drawn at boot.
 */
void hash_set_key(uint64_t k);

/*
 * The cost table: one header line (HASH_COSTS_HEADER), then one record per
 * measured function, with these columns:
 *
 *   name              registry name, or a reference name such as "memcmp"
 *   kind              "hash" (a registry row) or "reference"
 *   bits              bits of the value; 0 for memcmp, copy, ...
 *   hot_ns_per_page   median ns for one page already in L1
 *   hot_gib_s         4096 B / hot_ns_per_page, in GiB/s
 *   cold_ns_per_page  median ns per page streaming through distinct pages
 *                     (a buffer past the last-level cache, 1 GiB by default)
 *   cold_gib_s        as hot_gib_s, cold
 *   ratio_to_jhash2   hot_ns_per_page / jhash2's hot_ns_per_page (<1 cheaper)
 *
 * Two-page records (memcmp, copy) give the cost of one
 * operation on two pages; their GiB/s counts 4096 B per operation.
 */
#define HASH_COSTS_HEADER "name,kind,bits,hot_ns_per_page,hot_gib_s," \
			  "cold_ns_per_page,cold_gib_s,ratio_to_jhash2"
#define HASH_COSTS_NCOLS 8

struct hash_cost {
	char name[32];
	char kind[16];
	unsigned bits;
	double hot_ns, hot_gib_s;
	double cold_ns, cold_gib_s;
	double ratio_to_jhash2;
};

/*
 * A GArray of struct hash_cost, or NULL with *error naming the file and
 * the record at fault.
 */
GArray *hash_costs_read(const char *path, GError **error);
/* NULL when the table has no record of that name. */
const struct hash_cost *hash_costs_find(const GArray *costs, const char *name);

#endif
