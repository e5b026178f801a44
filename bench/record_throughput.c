// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The subject of the `ksmsim record --pid` cost measurement
 * (workloads/real/attach-cost.sh): a process that writes pages as fast as
 * it can and reports its own rate, so that the rate with a recorder
 * attached can be set against the rate without, in one run.
 *
 *   record-throughput SIZE_MIB SECONDS [REPORT_MS]
 *
 * Maps SIZE_MIB of anonymous memory, advises it MADV_MERGEABLE (as QEMU
 * does guest RAM, so `record --scope advised` takes it), writes every page
 * once, prints "ready PID", then for SECONDS rewrites the pages in order,
 * each whole, from one of 64 source pages that changes with every pass (so
 * every page's bytes change every pass, the most a recorder can be asked
 * to capture). Every REPORT_MS (default 1000) it prints one line:
 * "T_MS PAGES_PER_S PAGES_PER_CPU_S", the pages written in that report
 * period per second of wall time and per second of its own CPU time (on a
 * shared machine the first also moves with the CPU share it gets; the
 * second only with how fast it runs when it runs).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define SOURCES 64

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
	static uint8_t src[SOURCES][PAGE];
	size_t npages, i = 0, pass = 0;
	uint64_t done = 0;
	double t0, next, end, period, cpu0;
	uint8_t *m;

	if (argc < 3 || atol(argv[1]) <= 0 || atof(argv[2]) <= 0) {
		fprintf(stderr, "usage: record-throughput SIZE_MIB SECONDS [REPORT_MS]\n");
		return 2;
	}
	npages = (size_t)atol(argv[1]) * 256;
	period = (argc > 3 ? atof(argv[3]) : 1000) / 1e3;
	m = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || madvise(m, npages * PAGE, MADV_MERGEABLE)) {
		perror("record-throughput: mmap/madvise");
		return 1;
	}
	for (unsigned int s = 0; s < SOURCES; s++)
		for (unsigned int j = 0; j < PAGE; j++)
			src[s][j] = (uint8_t)(j * (2 * s + 1) + s * 131 + 1);
	for (size_t p = 0; p < npages; p++)
		memcpy(m + p * PAGE, src[p % SOURCES], PAGE);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	t0 = now_s();
	cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	next = t0 + period;
	end = t0 + atof(argv[2]);
	for (;;) {
		/* a batch between clock reads: 256 pages, 1 MiB */
		for (int b = 0; b < 256; b++) {
			memcpy(m + i * PAGE, src[(i + pass) % SOURCES], PAGE);
			if (++i == npages) {
				i = 0;
				pass++;
			}
		}
		done += 256;
		double t = now_s();

		if (t >= next) {
			double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);

			printf("%.0f %.0f %.0f\n", (t - t0) * 1e3, done / (t - next + period),
			       cpu > cpu0 ? done / (cpu - cpu0) : 0);
			fflush(stdout);
			cpu0 = cpu;
			done = 0;
			next = t + period;
			if (t >= end)
				break;
		}
	}
	return 0;
}
