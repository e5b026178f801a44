// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recorder's scope test subject (check_record.py scope): anonymous
 * regions of uniform pages, so each region's pages are told apart in the
 * trace by their byte, some advised MADV_MERGEABLE and some not.
 *
 *   advise   A (byte a1) advised from the start, B (byte b2) never, C (byte
 *            c3) written unadvised and advised MADV_MERGEABLE 400 ms later,
 *            when A is advised MADV_UNMERGEABLE; 400 ms more, then exit
 *   prctl    prctl(PR_SET_MEMORY_MERGE, 1), then A and B as above, neither
 *            advised; exit 3 if the kernel refuses the prctl
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

#define PAGE 4096
#define NPAGES 32	/* pages of each region */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* A region of NPAGES pages filled with byte b, with a guard page before it. */
static uint8_t *region(int b)
{
	/* the guard keeps the kernel from merging it with its neighbour VMAs */
	uint8_t *m = mmap(NULL, (NPAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		_exit(2);
	}
	mprotect(m, PAGE, PROT_NONE);
	memset(m + PAGE, b, NPAGES * PAGE);
	return m + PAGE;
}

static void advise(uint8_t *m, int advice)
{
	if (madvise(m, NPAGES * PAGE, advice) != 0) {
		perror("madvise");
		_exit(2);
	}
}

int main(int argc, char **argv)
{
	uint8_t *a, *c;

	if (argc == 2 && strcmp(argv[1], "prctl") == 0) {
		if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0) {
			perror("prctl(PR_SET_MEMORY_MERGE)");
			return 3;
		}
		region(0xa1);
		region(0xb2);
		sleep_ms(400);
		return 0;
	}
	if (argc != 2 || strcmp(argv[1], "advise")) {
		fprintf(stderr, "usage: record-advise advise|prctl\n");
		return 2;
	}
	a = region(0xa1);
	advise(a, MADV_MERGEABLE);
	region(0xb2);
	c = region(0xc3);
	sleep_ms(400);
	advise(c, MADV_MERGEABLE);
	advise(a, MADV_UNMERGEABLE);
	sleep_ms(400);
	return 0;
}
