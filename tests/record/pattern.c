// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recorder's test subject: writes known patterns at known times, so a
 * recorded trace can be checked byte for byte (pattern_pages.h, whose
 * formula check_record.py knows too).
 *
 *   pattern          the scripted run: a child writes phase 100 and exits;
 *                    the parent writes phases 0, 1, 2 400 ms apart, then
 *                    unmaps the second half of its pages and exits
 *   pattern loop     rewrite the pages every 10 ms until killed
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pattern_pages.h"

#define NPAGES 64
#define CHILD_PAGES 16

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
			sleep_ms(10, NULL);
		}
	}
	child = fork();
	if (child == 0) {
		uint8_t *c = mmap(NULL, CHILD_PAGES * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			_exit(1);
		write_phase(c, CHILD_PAGES, 100);
		sleep_ms(400, NULL);
		_exit(0);
	}
	for (unsigned int k = 0; k < 3; k++) {
		write_phase(m, NPAGES, k);
		sleep_ms(400, NULL);
	}
	munmap(m + NPAGES / 2 * PAGE, NPAGES / 2 * PAGE);
	sleep_ms(300, NULL);
	waitpid(child, NULL, 0);
	return 0;
}
