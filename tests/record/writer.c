// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A deterministic writer for the detector tests (check_record.py writer,
 * agree, measure): known stores to known pages in steps, with pauses far
 * longer than the capture interval between them, so that every step lands
 * in captures of its own.
 *
 *   writer [-z] NPAGES STEPS PAUSE_MS [RESULT]
 *
 * A forked child (no exec) does the same on NPAGES / 4 pages of its own.
 * Step 0 writes every page (version 0; with -z zeros, which are quick to
 * write and cost the trace no blob: for big runs); step s > 0 writes version s to the
 * pages with (i * 7 + s * 13) % 16 == 0 (their bytes change) and stores to
 * the pages with (i * 5 + s * 3) % 16 == 1 the bytes they already hold (a
 * store that changes nothing: pagemap-scan sees it, compare cannot).
 * check_record.py knows the same formulas. At the end each process checks
 * that its pages hold what it wrote (recording must not disturb them) and
 * exits 1 if not; with RESULT, the parent also writes "ok" or "bad" there
 * (for a run whose recorder was killed, which cannot see the exit status).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Page i, version v, of role r (0 parent, 1 child): a header and no uniform bytes. */
static void page_bytes(uint8_t *p, uint32_t r, uint32_t i, uint32_t v)
{
	for (uint32_t j = 0; j < PAGE; j++)
		p[j] = (uint8_t)(j * (2 * v + 1) + i * 31 + v * 7 + r * 101);
	memcpy(p, "KSMWRT", 7);
	p[7] = (uint8_t)r;
	memcpy(p + 8, &i, 4);
	memcpy(p + 12, &v, 4);
}

/* Whether every page holds its last version. */
static bool zero0;	/* -z: version 0 is zeros */

static void version(uint8_t *p, uint32_t r, uint32_t i, uint32_t v)
{
	if (v == 0 && zero0)
		memset(p, 0, PAGE);
	else
		page_bytes(p, r, i, v);
}

static int check(const uint8_t *m, uint32_t role, uint32_t npages, uint32_t steps)
{
	uint8_t want[PAGE];

	for (uint32_t i = 0; i < npages; i++) {
		uint32_t v = 0;

		for (uint32_t s = 1; s < steps; s++)
			if ((i * 7 + s * 13) % 16 == 0)
				v = s;
		version(want, role, i, v);
		if (memcmp(m + (size_t)i * PAGE, want, PAGE))
			return 0;
	}
	return 1;
}

static int run(uint32_t role, uint32_t npages, uint32_t steps, long pause_ms)
{
	uint8_t *m = mmap(NULL, (size_t)npages * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 0;
	for (uint32_t s = 0; s < steps; s++) {
		for (uint32_t i = 0; i < npages; i++) {
			volatile uint8_t *p = m + (size_t)i * PAGE;

			if (s == 0 || (i * 7 + s * 13) % 16 == 0)
				version(m + (size_t)i * PAGE, role, i, s);
			else if ((i * 5 + s * 3) % 16 == 1)
				p[100] = p[100];	/* volatile: a real store of the same byte */
		}
		sleep_ms(pause_ms);
	}
	return check(m, role, npages, steps);
}

int main(int argc, char **argv)
{
	uint32_t npages, steps;
	long pause_ms;
	pid_t child;
	int status = 0, ok;

	if (argc > 1 && strcmp(argv[1], "-z") == 0) {
		zero0 = true;
		argc--;
		argv++;
	}
	if (argc != 4 && argc != 5)
		return 2;
	npages = (uint32_t)strtoul(argv[1], NULL, 10);
	steps = (uint32_t)strtoul(argv[2], NULL, 10);
	pause_ms = strtol(argv[3], NULL, 10);
	if (npages < 4 || steps < 1 || pause_ms < 1)
		return 2;
	child = fork();
	if (child == 0)
		_exit(run(1, npages / 4, steps, pause_ms) ? 0 : 1);
	ok = run(0, npages, steps, pause_ms);
	if (child > 0)
		waitpid(child, &status, 0);
	ok = ok && child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (argc == 5) {
		FILE *f = fopen(argv[4], "w");

		if (f) {
			fputs(ok ? "ok\n" : "bad\n", f);
			fclose(f);
		}
	}
	return ok ? 0 : 1;
}
