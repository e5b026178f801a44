/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the recorder and its LD_PRELOAD shim (shim.c) agree on, for
 * `--find pagemap-scan`.
 *
 * A userfaultfd acts on the mm of the process that created it, so every
 * process of the recorded tree makes its own: the shim's constructor (and,
 * after a fork(), its atfork child handler) creates one with async
 * write-protect and puts it at SHIM_UFFD_FD, close-on-exec. The recorder
 * takes a copy with pidfd_getfd(), registers the process's anonymous ranges
 * with it and reads the written pages with PAGEMAP_SCAN. The shim does
 * nothing unless SHIM_ENV is "1", so that loading it anywhere else (the
 * recorder's own probe) has no effect.
 */
#ifndef KSMSIM_WORKLOADS_RECORD_SHIM_H
#define KSMSIM_WORKLOADS_RECORD_SHIM_H

#include <linux/userfaultfd.h>

#define SHIM_UFFD_FD 1000		/* high, below the usual 1024 soft limit */
#define SHIM_ENV "KSMSIM_RECORD_UFFD"
#define SHIM_NAME "ksmsim-record-shim.so"

/* Linux 6.1 headers lack these (6.4 and 6.7 added them). */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

/*
 * Async: a write to a write-protected page is resolved by the kernel (the
 * bit is dropped), no handler needed, so the process runs on unharmed if the
 * recorder dies. Unpopulated: pages never touched are protected too, which
 * PAGEMAP_SCAN needs to accept an anonymous range at all.
 */
#define SHIM_UFFD_FEATURES (UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED)

#endif
