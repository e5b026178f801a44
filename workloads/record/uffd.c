// SPDX-License-Identifier: GPL-2.0-or-later
/* userfaultfd write-protect and PAGEMAP_SCAN for the pagemap-scan detector (uffd.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/kcmp.h>
#include "traces/trace.h"
#include "workloads/record/shim.h"
#include "workloads/record/uffd.h"

/* Linux 6.7's PAGEMAP_SCAN ABI (include/uapi/linux/fs.h); 6.1 headers lack it. */
#ifndef PAGEMAP_SCAN
struct page_region {
	__u64 start, end, categories;
};

struct pm_scan_arg {
	__u64 size, flags, start, end, walk_end, vec, vec_len, max_pages;
	__u64 category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

#define SCAN_VEC 512	/* page_region entries per ioctl */

static uint64_t addr(uint64_t u)
{
	return u * TRACE_PAGE_SIZE;
}

int uffd_register(int uffd, uint64_t u0, uint64_t u1)
{
	struct uffdio_register r = {
		.range = { addr(u0), addr(u1 - u0) },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &r) == 0 ? 0 : -errno;
}

bool uffd_unarmed(int pagemap_fd, uint64_t u0, uint64_t u1)
{
	struct page_region v;
	/* the pages not in an async-WP mapping: stops at the first one */
	struct pm_scan_arg a = {
		.size = sizeof(a), .start = addr(u0), .end = addr(u1),
		.vec = (uintptr_t)&v, .vec_len = 1, .max_pages = 1,
		.category_inverted = PAGE_IS_WPALLOWED, .category_mask = PAGE_IS_WPALLOWED,
		.return_mask = PAGE_IS_WPALLOWED,
	};

	return ioctl(pagemap_fd, PAGEMAP_SCAN, &a) != 0;
}

int uffd_scan(int pagemap_fd, uint64_t u0, uint64_t u1, GArray *runs)
{
	struct page_region v[SCAN_VEC];
	uint64_t at = addr(u0), end = addr(u1);

	while (at < end) {
		struct pm_scan_arg a = {
			.size = sizeof(a), .start = at, .end = end,
			.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.vec = (uintptr_t)v, .vec_len = SCAN_VEC,
			/* not holes: protecting those would fill in page tables */
			.category_mask = PAGE_IS_WRITTEN,
			.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
			.return_mask = PAGE_IS_WRITTEN,
		};
		long n;
		int err = 0;

		/*
		 * On -EPERM (a mapping not registered) the kernel has still
		 * written out, and protected again, what it found before it,
		 * without saying how much: the entries before the first
		 * empty one.
		 */
		memset(v, 0, sizeof(v));
		n = ioctl(pagemap_fd, PAGEMAP_SCAN, &a);
		if (n < 0) {
			err = -errno;
			for (n = 0; n < SCAN_VEC && v[n].end > v[n].start; n++)
				;
		}
		for (long i = 0; i < n; i++) {
			struct uffd_run r = { v[i].start / TRACE_PAGE_SIZE, v[i].end / TRACE_PAGE_SIZE };

			g_array_append_val(runs, r);
		}
		if (err)
			return err;
		/* a full vec ends the walk early, at walk_end */
		if (!a.walk_end || a.walk_end <= at)
			break;
		at = a.walk_end;
	}
	return 0;
}

/* /proc/PID/fd/N is a userfaultfd made the shim's way (its fdinfo shows the features). */
static bool shim_fd(pid_t pid)
{
	char path[64], link[64], *info = NULL, *api;
	unsigned long long features = 0;
	ssize_t n;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, SHIM_UFFD_FD);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	if (strcmp(link, "anon_inode:[userfaultfd]"))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, SHIM_UFFD_FD);
	if (!g_file_get_contents(path, &info, NULL, NULL))
		return false;
	/* "API:\taa:FEATURES:IOCTLS" */
	api = strstr(info, "\nAPI:");
	ok = api && sscanf(api + 5, " %*x:%llx", &features) == 1 &&
	     (features & SHIM_UFFD_FEATURES) == SHIM_UFFD_FEATURES;
	g_free(info);
	return ok;
}

int uffd_take(pid_t pid, const GArray *held)
{
	int pidfd, fd;

	if (!shim_fd(pid))
		return -1;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, SHIM_UFFD_FD, 0);
	close(pidfd);
	if (fd < 0)
		return -1;
	for (guint i = 0; held && i < held->len; i++) {
		if (syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, fd,
			    g_array_index(held, int, i)) == 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* The probe's scan of [u0, u0 + n): the written pages as a bit mask. */
static int probe_scan(int pm, uint64_t u0, unsigned int n, unsigned int *mask)
{
	GArray *runs = g_array_new(FALSE, FALSE, sizeof(struct uffd_run));
	int err = uffd_scan(pm, u0, u0 + n, runs);

	*mask = 0;
	for (guint i = 0; i < runs->len; i++) {
		struct uffd_run *r = &g_array_index(runs, struct uffd_run, i);

		for (uint64_t u = r->u0; u < r->u1; u++)
			*mask |= 1u << (u - u0);
	}
	g_array_free(runs, TRUE);
	return err;
}

bool uffd_works(const char **why)
{
	struct uffdio_api api = { .api = UFFD_API, .features = SHIM_UFFD_FEATURES };
	volatile uint8_t *m = MAP_FAILED;
	int uffd, pm = -1, pidfd, copy;
	unsigned int a = 0, b = 0, c = 0;
	uint64_t u0;
	bool ok = false;

	uffd = (int)syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		*why = "userfaultfd() is not available (CONFIG_USERFAULTFD, or a seccomp filter)";
		return false;
	}
	if (ioctl(uffd, UFFDIO_API, &api) != 0 ||
	    (api.features & SHIM_UFFD_FEATURES) != SHIM_UFFD_FEATURES) {
		*why = "userfaultfd lacks async write-protect of unpopulated pages (Linux 6.7+)";
		goto out;
	}
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	copy = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, uffd, 0);
	if (pidfd >= 0)
		close(pidfd);
	if (copy < 0) {
		*why = "pidfd_getfd() is not available (Linux 5.6+)";
		goto out;
	}
	close(copy);
	m = mmap(NULL, 4 * TRACE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED) {
		*why = "mmap failed";
		goto out;
	}
	u0 = (uintptr_t)m / TRACE_PAGE_SIZE;
	m[0] = 1;
	if (uffd_register(uffd, u0, u0 + 4) != 0) {
		*why = "UFFDIO_REGISTER_MODE_WP failed on anonymous memory";
		goto out;
	}
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || uffd_unarmed(pm, u0, u0 + 4)) {
		*why = "the PAGEMAP_SCAN ioctl of /proc/PID/pagemap is not available (Linux 6.7+)";
		goto out;
	}
	/* the page written before, then one stored after, then nothing */
	if (probe_scan(pm, u0, 4, &a) == 0) {
		m[2 * TRACE_PAGE_SIZE] = 2;
		if (probe_scan(pm, u0, 4, &b) == 0 && probe_scan(pm, u0, 4, &c) == 0)
			ok = a == 1 && b == 4 && c == 0;
	}
	if (!ok)
		*why = "PAGEMAP_SCAN did not report written pages as expected";
out:
	if (pm >= 0)
		close(pm);
	close(uffd);	/* the last reference: unregisters, drops the protection */
	if (m != MAP_FAILED)
		munmap((void *)m, 4 * TRACE_PAGE_SIZE);
	return ok;
}
