// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The subject of `ksmsim record --pid/--cgroup` (check_record.py attach,
 * cgroup): a program that is already running when the recorder attaches,
 * writes known pages (pattern_pages.h, as pattern.c does) and checks its
 * own memory, so that a detach that left anything changed is seen.
 *
 *   attach        the parent advises NPAGES pages MADV_MERGEABLE and writes
 *                 phases 0, 1, 2, 0, ... every ROUND_MS; a long-lived child
 *                 does the same with its own CHILD_PAGES (phases 100-102);
 *                 every SHORT_EVERY rounds the parent forks a short child
 *                 that writes SHORT_PAGES pages of phase 200 and exits
 *   attach solo   the parent only: no children
 *
 * Before each phase every process checks that its pages still hold the
 * last phase it wrote. It prints "ready PID CHILD_PID" once running; on end
 * of file on standard input it checks once more, ends its children (SIGTERM
 * to the long-lived one, which checks once more too) and prints
 * "ok rounds=N shorts=M" and exits 0, or "BAD ..." and exits 1.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pattern_pages.h"

#define NPAGES 64
#define CHILD_PAGES 16
#define SHORT_PAGES 8
#define ROUND_MS 150
#define SHORT_EVERY 5
#define SHORT_MS 400

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Whether the n pages at m hold phase k. */
static int holds(const uint8_t *m, unsigned int n, unsigned int k)
{
	static uint8_t want[PAGE];

	for (unsigned int i = 0; i < n; i++) {
		page_bytes(want, k, i);
		if (memcmp(m + (size_t)i * PAGE, want, PAGE))
			return 0;
	}
	return 1;
}

static uint8_t *map_advised(unsigned int n)
{
	uint8_t *m = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || madvise(m, (size_t)n * PAGE, MADV_MERGEABLE))
		return NULL;
	return m;
}

/* The long-lived child: phases 100-102 until SIGTERM; exit 0 when its pages held. */
static void child_loop(void)
{
	uint8_t *m = map_advised(CHILD_PAGES);
	unsigned int k = 100;

	if (!m)
		_exit(2);
	write_phase(m, CHILD_PAGES, k);
	while (!stop) {
		sleep_ms(ROUND_MS, &stop);
		if (!holds(m, CHILD_PAGES, k))
			_exit(3);
		k = k == 102 ? 100 : k + 1;
		write_phase(m, CHILD_PAGES, k);
	}
	_exit(holds(m, CHILD_PAGES, k) ? 0 : 3);
}

static void short_child(void)
{
	uint8_t *m = map_advised(SHORT_PAGES);

	if (!m)
		_exit(2);
	write_phase(m, SHORT_PAGES, 200);
	sleep_ms(SHORT_MS, &stop);
	_exit(holds(m, SHORT_PAGES, 200) ? 0 : 3);
}

/* Reaps the short children that have exited; counts those that failed. */
static void reap(int block, unsigned int *bad)
{
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, block ? 0 : WNOHANG)) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			(*bad)++;
}

int main(int argc, char **argv)
{
	int solo = argc > 1 && strcmp(argv[1], "solo") == 0;
	uint8_t *m = map_advised(NPAGES);
	unsigned int k = 0, rounds = 0, shorts = 0, bad = 0;
	struct sigaction sa;
	pid_t child = 0;
	int status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	if (!m) {
		printf("BAD mmap/madvise: %s\n", strerror(errno));
		return 1;
	}
	write_phase(m, NPAGES, k);
	if (!solo) {
		child = fork();
		if (child == 0)
			child_loop();
	}
	printf("ready %d %d\n", (int)getpid(), (int)child);
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { 0, POLLIN, 0 };
		char buf[64];

		/* the round's pause, cut short by input or its end */
		if (poll(&pfd, 1, ROUND_MS) > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
		if (!holds(m, NPAGES, k)) {
			printf("BAD parent: pages changed under phase %u at round %u\n", k, rounds);
			return 1;
		}
		k = (k + 1) % 3;
		write_phase(m, NPAGES, k);
		rounds++;
		if (!solo && rounds % SHORT_EVERY == 0) {
			pid_t s = fork();

			if (s == 0)
				short_child();
			if (s > 0)
				shorts++;
		}
		reap(0, &bad);
	}
	if (!holds(m, NPAGES, k)) {
		printf("BAD parent: pages changed under phase %u at the end\n", k);
		return 1;
	}
	if (child > 0) {
		kill(child, SIGTERM);
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("BAD child: status %d\n", status);
			return 1;
		}
	}
	reap(1, &bad);
	if (bad) {
		printf("BAD %u short children saw their pages changed\n", bad);
		return 1;
	}
	printf("ok rounds=%u shorts=%u\n", rounds, shorts);
	return 0;
}
