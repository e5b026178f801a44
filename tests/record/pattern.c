// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recorder's test subject: writes known patterns at known times, so a
 * recorded trace can be checked byte for byte (check_pattern.py knows the
 * same formulas).
 *
 *   pattern          the scripted run: a child writes phase 100 and exits;
 *                    the parent writes phases 0, 1, 2 400 ms apart, then
 *                    unmaps the second half of its pages and exits
 *   pattern loop     rewrite the pages every 10 ms until killed
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define NPAGES 64
#define CHILD_PAGES 16

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/*
 * Page i of phase k. i % 4: 0 and 2 a header plus a non-uniform pattern,
 * 1 a copy of page i - 1 (the trace must store it once), 3 zero in even
 * phases and byte 0x40 + k in odd ones.
 */
static void page_bytes(uint8_t *p, unsigned int k, unsigned int i)
{
	unsigned int src = i % 4 == 1 ? i - 1 : i;

	if (i % 4 == 3) {
		memset(p, k % 2 ? 0x40 + k : 0, PAGE);
		return;
	}
	for (unsigned int j = 0; j < PAGE; j++)
		p[j] = (uint8_t)(j * (2 * k + 1) + src * 31 + k * 7);
	memcpy(p, "KSMPATT", 8);
	memcpy(p + 8, &k, 4);
	memcpy(p + 12, &src, 4);
}

static void write_phase(uint8_t *m, unsigned int n, unsigned int k)
{
	for (unsigned int i = 0; i < n; i++)
		page_bytes(m + (size_t)i * PAGE, k, i);
}

int main(int argc, char **argv)
{
	uint8_t *m = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t child;

	if (m == MAP_FAILED)
		return 1;
	if (argc > 1 && strcmp(argv[1], "loop") == 0) {
		for (unsigned int k = 0;; k = (k + 1) % 3) {
			write_phase(m, NPAGES, k);
			sleep_ms(10);
		}
	}
	child = fork();
	if (child == 0) {
		uint8_t *c = mmap(NULL, CHILD_PAGES * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			_exit(1);
		write_phase(c, CHILD_PAGES, 100);
		sleep_ms(400);
		_exit(0);
	}
	for (unsigned int k = 0; k < 3; k++) {
		write_phase(m, NPAGES, k);
		sleep_ms(400);
	}
	munmap(m + NPAGES / 2 * PAGE, NPAGES / 2 * PAGE);
	sleep_ms(300);
	waitpid(child, NULL, 0);
	return 0;
}
