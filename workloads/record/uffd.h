/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pagemap-scan detector's kernel side: another process's userfaultfd
 * (left by the shim, shim.h), async write-protect registration through it,
 * and PAGEMAP_SCAN (Linux 6.7+) on that process's pagemap, which returns the
 * pages written since they were last protected and protects them again in
 * the same call.
 */
#ifndef KSMSIM_WORKLOADS_RECORD_UFFD_H
#define KSMSIM_WORKLOADS_RECORD_UFFD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

/* A run of written pages [u0, u1) (user pages). */
struct uffd_run {
	uint64_t u0, u1;
};

/*
 * Whether the detector works here, tried on this process: userfaultfd with
 * async write-protect, registration, PAGEMAP_SCAN seeing a store and then
 * not seeing it again. On false, *why says what is missing (static text).
 */
bool uffd_works(const char **why);

/*
 * pid's userfaultfd at SHIM_UFFD_FD, copied into this process (close it),
 * or -1: no such fd (yet), not the shim's, or a copy of one in held (an fd
 * inherited over a fork is its parent's, so it would act on the parent's
 * mm). held: the fds already taken (int), compared with kcmp().
 */
int uffd_take(pid_t pid, const GArray *held);

/*
 * Registers user pages [u0, u1) for async write-protect through uffd.
 * 0, or -errno (-ESRCH: the fd's mm is gone, the process exec'd).
 */
int uffd_register(int uffd, uint64_t u0, uint64_t u1);

/* Whether some mapping of [u0, u1) is not registered (pagemap fd). */
bool uffd_unarmed(int pagemap_fd, uint64_t u0, uint64_t u1);

/*
 * Appends to runs (struct uffd_run) the pages of [u0, u1) written since the
 * last scan, and protects them again. Only pages that are there (present
 * or swapped) count: a range never touched is left as it is (no page
 * tables are filled in for it), and a page that is dropped (MADV_DONTNEED)
 * and comes back, even as the zero page on a read, is new, as it is for
 * compare. 0, or -errno: -EPERM when a mapping
 * is not registered (the runs found before it are still appended, and they
 * are protected again: they must be used).
 */
int uffd_scan(int pagemap_fd, uint64_t u0, uint64_t u1, GArray *runs);

#endif
