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
 * pagemap-scan detector has registered them for write-protect. merge: in
 * the recording's scope (KSM would scan them), so their pages are read;
 * a range that left the scope stays mapped in the trace, advised
 * unmergeable, and its pages are not read. reread: new to the trace or
 * back in scope, so every present page is read once (soft-dirty: its
 * stores may predate the last clear).
 */
struct region {
	uint64_t u0, u1, vpn;
	bool armed, merge, reread;
};

struct pinfo {
	pid_t pid, ppid;
	unsigned long long start;	/* starttime: tells a reused pid apart */
	char state;
	bool kthread;		/* PF_KTHREAD: a kernel thread, no user memory */
	char comm[64];
};

/* The live (non-zombie) processes of root's tree, struct pinfo: root and its descendants. */
GArray *procfs_tree(pid_t root);

/*
 * The live (non-zombie) processes, struct pinfo, that are in seeds (pid ->
 * starttime + 1, or 0 for any start: a pid reused by another process is not
 * taken for the one seeded) and, with follow, their descendants by ppid.
 */
GArray *procfs_procs(GHashTable *seeds, bool follow);

/* pid's /proc/PID/stat; false when there is no such process. */
bool procfs_pinfo(pid_t pid, struct pinfo *pi);

/* Whether path is a directory of a cgroup v2 hierarchy (statfs: cgroup2). */
bool procfs_is_cgroup2(const char *path);

/*
 * The processes (not threads) of the cgroup v2 directory dir and of every
 * cgroup below it (cgroup.procs), as pid keys added to seeds (value 0: any
 * start). False when dir is gone (the cgroup was removed).
 */
bool procfs_cgroup_pids(const char *dir, GHashTable *seeds);

/*
 * The anonymous private writable mappings of /proc/PID/maps, as sorted,
 * merged ranges of user pages (struct region, vpn 0). NULL when the process
 * is gone. Mappings over 64 GiB are left out and counted in *huge_skipped.
 */
GArray *procfs_anon_ranges(pid_t pid, uint64_t *huge_skipped);

/*
 * The user page ranges [u0, u1) (struct region) of pid's VMAs whose VmFlags
 * in /proc/PID/smaps hold flag ("hg": advised MADV_HUGEPAGE, "mg":
 * MADV_MERGEABLE), in address order; NULL when the process is gone. Only
 * smaps has the flags (maps has no VmFlags), but it walks page tables: read
 * it only when it is needed.
 */
GArray *procfs_vmflag_ranges(pid_t pid, const char *flag);

/*
 * Whether pid set prctl(PR_SET_MEMORY_MERGE): "ksm_merge_any: yes" in
 * /proc/PID/ksm_stat (Linux 6.8+). False when it did not, is gone, or the
 * kernel does not say: the VMAs' "mg" flags tell then.
 */
bool procfs_merge_any(pid_t pid);

#endif
