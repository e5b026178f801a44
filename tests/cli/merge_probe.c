// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prints what prctl(PR_GET_MEMORY_MERGE) says of this process (0 or 1), so
 * that a test can see merge-exec's flag in the program it ran; exit 77
 * where the kernel has no such prctl.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

int main(void)
{
	int v = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0);

	if (v < 0) {
		fprintf(stderr, "merge_probe: prctl(PR_GET_MEMORY_MERGE): %s\n", strerror(errno));
		return 77;
	}
	printf("%d\n", v);
	return 0;
}
