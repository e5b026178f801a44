// SPDX-License-Identifier: GPL-2.0-or-later
/* Present and soft-dirty pages from /proc/PID/pagemap; clearing them through clear_refs. */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "traces/trace.h"
#include "workloads/record/pagemap.h"
#include "workloads/record/procfs.h"
#include "workloads/record/record.h"

#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_SOFT_DIRTY (UINT64_C(1) << 55)
#define PM_BATCH 1024		/* pagemap entries read at once */

void pagemap_scan(int fd, const GArray *regions, bool soft_dirty, GHashTable *hashes,
		  GArray *runs)
{
	uint64_t pm[PM_BATCH];

	for (guint i = 0; i < regions->len; i++) {
		const struct region *r = &g_array_index(regions, struct region, i);

		if (!r->merge)
			continue;
		for (uint64_t u = r->u0; u < r->u1;) {
			uint64_t n = MIN((uint64_t)PM_BATCH, r->u1 - u);
			ssize_t got = pread(fd, pm, n * 8, (off_t)(u * 8));

			if (got <= 0)
				break;
			n = got / 8;
			for (uint64_t k = 0; k < n; k++) {
				struct dirty_run *last;

				if (!(pm[k] & PM_PRESENT)) {
					/* dropped (MADV_DONTNEED...): record it when it is back */
					if (hashes)
						g_hash_table_remove(hashes, GSIZE_TO_POINTER(u + k));
					continue;
				}
				if (!(pm[k] & PM_SOFT_DIRTY) && soft_dirty && !r->reread)
					continue;
				last = runs->len ?
					&g_array_index(runs, struct dirty_run, runs->len - 1) : NULL;
				if (last && last->region == i && last->u + last->n == u + k &&
				    last->n < PAGEMAP_RUN_PAGES)
					last->n++;
				else
					g_array_append_val(runs, ((struct dirty_run){ u + k, 1, i }));
			}
			u += n;
		}
	}
}

bool pagemap_clear_soft_dirty(int fd)
{
	return pwrite(fd, "4", 1, 0) == 1;
}

bool record_soft_dirty_works(void)
{
	volatile uint8_t *page = mmap(NULL, TRACE_PAGE_SIZE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	off_t at = (off_t)((uintptr_t)page / TRACE_PAGE_SIZE * 8);
	uint64_t e1 = 0, e2 = 0;
	int cfd, pfd;
	bool ok = false;

	if (page == MAP_FAILED)
		return false;
	page[0] = 1;
	cfd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	pfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0 && pfd >= 0 && write(cfd, "4", 1) == 1 && pread(pfd, &e1, 8, at) == 8) {
		page[0] = 2;
		if (pread(pfd, &e2, 8, at) == 8)
			ok = !(e1 & PM_SOFT_DIRTY) && (e2 & PM_SOFT_DIRTY) && (e2 & PM_PRESENT);
	}
	if (cfd >= 0)
		close(cfd);
	if (pfd >= 0)
		close(pfd);
	munmap((void *)page, TRACE_PAGE_SIZE);
	return ok;
}
