/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the recorder reads of /proc as text: the process tree and the maps. */
#ifndef KSMSIM_WORKLOADS_RECORD_PROCFS_H
#define KSMSIM_WORKLOADS_RECORD_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

/*
 * User pages [u0, u1) appear in the trace at vpn, vpn + 1, ...; armed: the
 * pagemap-scan detector has registered them for write-protect.
 */
struct region {
	uint64_t u0, u1, vpn;
	bool armed;
};

struct pinfo {
	pid_t pid, ppid;
	unsigned long long start;	/* starttime: tells a reused pid apart */
	char state;
	char comm[64];
};

/* The live (non-zombie) processes of root's tree, struct pinfo: root and its descendants. */
GArray *procfs_tree(pid_t root);

/*
 * The anonymous private writable mappings of /proc/PID/maps, as sorted,
 * merged ranges of user pages (struct region, vpn 0). NULL when the process
 * is gone. Mappings over 64 GiB are left out and counted in *huge_skipped.
 */
GArray *procfs_anon_ranges(pid_t pid, uint64_t *huge_skipped);

/*
 * The user page ranges [u0, u1) (struct region) of pid's VMAs advised
 * MADV_HUGEPAGE (VmFlags "hg" in /proc/PID/smaps), in address order; NULL
 * when the process is gone. smaps walks page tables: read it only when
 * new ranges appear.
 */
GArray *procfs_hugepage_ranges(pid_t pid);

#endif
