// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The checksums as ksmd computes them (bench_ref.h, kernel_hash_ratio):
 * XXH64 written scalar, one 32-byte stripe of four 64-bit lanes at a time,
 * as the kernel's C implementation does (the kernel builds without vector
 * registers, so no loop here may be vectorised either); jhash2 as the
 * kernel header reads (ref_jhash2.c); CRC-32C as the x86 kernel takes a
 * 4096-byte buffer: three crc32 instruction streams joined by carry-less
 * multiplies (hashes/, crc32c_own), which the kernel runs between
 * kernel_fpu_begin() and kernel_fpu_end(). Our own code of the same
 * algorithms, checked against the registry's rows by the tests.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <glib.h>
#include "bench/bench_ref.h"
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#define P1 UINT64_C(0x9E3779B185EBCA87)
#define P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define P3 UINT64_C(0x165667B19E3779F9)
#define P4 UINT64_C(0x85EBCA77C2B2AE63)

static inline uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;	/* x86 and the kernel's le64 reads agree */
}

static inline uint64_t lane(uint64_t acc, uint64_t in)
{
	return rotl64(acc + in * P2, 31) * P1;
}

static inline uint64_t fold(uint64_t h, uint64_t v)
{
	return (h ^ lane(0, v)) * P1 + P4;
}

/* XXH64(page, 4096, 0): the stripes, the four lanes folded, the avalanche (len % 32 == 0). */
__attribute__((optimize("no-tree-vectorize")))
uint64_t ref_xxh64_kernel(const void *page)
{
	const unsigned char *p = page, *end = p + HASH_PAGE_SIZE;
	uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = (uint64_t)0 - P1;

	do {
		v1 = lane(v1, get64(p));
		v2 = lane(v2, get64(p + 8));
		v3 = lane(v3, get64(p + 16));
		v4 = lane(v4, get64(p + 24));
		p += 32;
	} while (p < end);
	uint64_t h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);

	h = fold(fold(fold(fold(h, v1), v2), v3), v4);
	h += HASH_PAGE_SIZE;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

/* The kernel's crc32c of a page on x86-64 with PCLMULQDQ: 3-way crc32 + pclmul join. */
uint64_t ref_crc32c_kernel(const void *page)
{
	return crc32c_own(0, page, HASH_PAGE_SIZE);
}

#define RATIO_PAGES 8192	/* 32 MiB: past the caches, as ksmd's pages are */
#define RATIO_REPS 7

static volatile uint64_t sink;

/* This thread's CPU time in ns: a preempted loop must not count its waits. */
static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * ns per page streaming through buf, in this thread's CPU time, the least
 * of RATIO_REPS (on a shared machine a loop's wall time, or even its CPU
 * time's median, counts what others do to the caches and the scheduler).
 */
static double stream_ns(page_hash_fn fn, const unsigned char *buf)
{
	double best = 0;

	for (int r = 0; r < RATIO_REPS; r++) {
		double t0 = thread_cpu_ns();

		for (size_t i = 0; i < RATIO_PAGES; i++)
			sink += fn(buf + i * HASH_PAGE_SIZE);
		double ns = (thread_cpu_ns() - t0) / RATIO_PAGES;

		best = r == 0 || ns < best ? ns : best;
	}
	return best;
}

static page_hash_fn kernel_twin(const char *name)
{
	if (!strcmp(name, "xxhash") || !strcmp(name, "xxh64"))
		return ref_xxh64_kernel;
	if (!strcmp(name, "jhash2"))
		return ref_jhash2_plain;
	if (!strcmp(name, "crc32c"))
		return ref_crc32c_kernel;
	return NULL;
}

double kernel_hash_ratio(const char *name)
{
	page_hash_fn fn = kernel_twin(name);
	size_t bytes = (size_t)RATIO_PAGES * HASH_PAGE_SIZE;

	if (!fn)
		return 0;
	if (fn == ref_xxh64_kernel)
		return 1;
	unsigned char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i + 8 <= bytes; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
	/* interleaved, so drifting load hits both alike */
	double a = 0, b = 0;

	for (int r = 0; r < 3; r++) {
		a += stream_ns(fn, buf);
		b += stream_ns(ref_xxh64_kernel, buf);
	}
	munmap(buf, bytes);
	return b > 0 ? a / b : 0;
}
