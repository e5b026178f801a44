/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reference loops that `ksmsim bench costs` measures next to the registry's
 * checksums, so each checksum's cost reads against fixed points: the
 * read-only floor, a tree comparison (memcmp), a CoW (memcpy), a PTE
 * write-protect and flush, and the library or plain builds each of our
 * implementations must match or beat. Rows the CPU or build cannot run
 * are left out of cost_refs().
 */
#ifndef KSMSIM_BENCH_BENCH_REF_H
#define KSMSIM_BENCH_BENCH_REF_H

#include <stddef.h>
#include <stdint.h>
#include "hashes/hash.h"

struct cost_ref {
	const char *name;
	unsigned bits;		/* of the value returned; 0 when not a hash */
	unsigned pages;		/* 1: one(a); 2: two(a, b, tmp) */
	page_hash_fn one;
	/* a and b hold equal contents and still do after the call. */
	uint64_t (*two)(void *a, void *b, void *tmp);
	const char *summary;
};

const struct cost_ref *cost_refs(size_t *n);

/* The rows' building blocks in their own files; the tests call them too. */
uint64_t ref_jhash2_plain(const void *page);	/* ref_jhash2.c */
uint64_t ref_xxh3_lib(const void *page);	/* ref_xxh_lib.c */
uint64_t ref_xxh64_lib(const void *page);
/*
 * The checksums as ksmd computes them (ref_kernel.c): XXH64 scalar as the
 * kernel's C code, CRC-32C as x86's 3-way crc32 + pclmul join (the
 * kernel's jhash2 is ref_jhash2_plain).
 */
uint64_t ref_xxh64_kernel(const void *page);
uint64_t ref_crc32c_kernel(const void *page);
/*
 * A checksum's cost over xxhash's, both as ksmd computes them, streaming
 * 32 MiB (thread CPU time, least of 7, three rounds interleaved): 1 for xxhash and xxh64,
 * 0 for a checksum without a kernel-shaped twin here.
 */
double kernel_hash_ratio(const char *name);
/* libxxhash's own x86 dispatch; NULL when the installed library has none. */
page_hash_fn ref_xxh3_lib_dispatch(void);

/*
 * Timing helpers the bench files share (bench_costs.c): a monotonic clock
 * in ns, and the median of n values, which sorts v in place (even n: the
 * mean of the middle two).
 */
double bench_now_ns(void);
double bench_median(double *v, size_t n);

#endif
