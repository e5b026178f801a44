// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel-shaped checksum twins (bench/ref_kernel.c), timed for
 * bench/checksum_prices.sh: XXH64 as lib/xxhash.c computes it, jhash2 as
 * include/linux/jhash.h reads, CRC-32C as x86's crc32c_x86_3way, each
 * over 64 MiB of pages (past the caches, as the pages ksmd checksums
 * are), interleaved so that load drifting hits all three alike. The
 * clock is this thread's CPU time, not the wall's: the machine may be
 * shared, and a preempted loop would otherwise count its waits. Each
 * round keeps the least of TRIALS passes (what the loop costs when
 * nothing interrupts it). One CSV row a round:
 * round,xxh64_ns,jhash2_ns,crc32c_ns (ns a page).
 * usage: checksum-twins [ROUNDS]   (default 5)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "util/escape.h"
#include "bench/bench_ref.h"

#define PAGES 16384	/* 64 MiB */
#define TRIALS 3

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile uint64_t sink;

static double per_page(page_hash_fn fn, const unsigned char *buf)
{
	double best = 0;

	for (int t = 0; t < TRIALS; t++) {
		double t0 = cpu_ns();

		for (size_t i = 0; i < PAGES; i++)
			sink += fn(buf + i * 4096);
		double ns = (cpu_ns() - t0) / PAGES;

		best = t == 0 || ns < best ? ns : best;
	}
	return best;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	size_t bytes = (size_t)PAGES * 4096;
	unsigned char *buf;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	if (argc > 2 || rounds < 1 || rounds > 100) {
		reportf("checksum-twins", "usage: checksum-twins [ROUNDS (1-100)]");
		return 2;
	}
	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		reportf("checksum-twins", "mmap: %s", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i + 8 <= bytes; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
	printf("round,xxh64_ns,jhash2_ns,crc32c_ns\n");
	for (int r = 1; r <= rounds; r++) {
		double a = per_page(ref_xxh64_kernel, buf);
		double b = per_page(ref_jhash2_plain, buf);
		double c = per_page(ref_crc32c_kernel, buf);

		printf("%d,%.1f,%.1f,%.1f\n", r, a, b, c);
		fflush(stdout);
	}
	munmap(buf, bytes);
	return 0;
}
