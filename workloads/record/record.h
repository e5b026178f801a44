/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The recorder behind `ksmsim record`: it follows a process tree and turns
 * the page writes of every process into trace records (version 2,
 * traces/FORMAT.md).
 *
 * Every interval, for each process of the tree: /proc/PID/maps gives the
 * anonymous private writable mappings, of which the scope (enum
 * record_scope) keeps those KSM would scan (new ones become map + advise
 * mergeable, vanished ones unmap, ones that leave or rejoin the scope
 * advise unmergeable or mergeable), /proc/PID/pagemap the pages that are
 * present and soft-dirty (written since the last clear), process_vm_readv
 * their bytes, and writing "4" to /proc/PID/clear_refs starts the next
 * interval. In pagemap-scan mode one PAGEMAP_SCAN ioctl per range both
 * finds the pages written since the last one and starts the next interval
 * (see enum record_find). In compare mode (neither) every present page is
 * read and kept when its bytes changed. The bytes go out as zero, byte:HH
 * or blob pages; the v2 writer stores each distinct page once.
 *
 * The tree: the recorder is its subreaper, so orphans stay in it; every
 * interval /proc is walked for the descendants of the root by ppid. A pid
 * with a new start time or a new comm (an exec) is a new mm.
 *
 * Attached (recorder_attach, recorder_attach_cgroup): processes that were
 * running before, which the recorder neither started nor signals nor
 * stops. With pids, those processes and their descendants, each followed
 * by pid and start time until it exits (an orphan stays followed); with a
 * cgroup v2 directory, every process in it or in a cgroup below it, each
 * interval anew: one that joins is new, one that leaves or exits ends
 * (an exit record). Their written pages are found by soft-dirty or
 * compare, never pagemap-scan: a userfaultfd can only be made by the
 * process whose memory it acts on, which a running process does not do for
 * us without ptrace (pidfd_getfd only copies an fd the process already
 * has). Detaching leaves the process as it was, but for its soft-dirty
 * bits: writing clear_refs is the kernel's interface for clearing them,
 * and nothing sets them back, so after the capture the pages written since
 * the last interval are soft-dirty and the others are not (a process or a
 * checkpointer, such as CRIU's pre-dump, that tracks soft-dirty itself
 * must not be recorded at the same time). The cost to the process is one
 * minor write fault per page (per THP) it writes in an interval.
 *
 * User addresses (up to 2^47) do not fit the trace's 2^32 pages, so
 * mappings are compacted: each newly seen range of user pages gets the next
 * free vpns of its address space, in order of appearance, and vpns are never
 * reused. Growing mappings (heap, stack) add new ranges.
 */
#ifndef KSMSIM_WORKLOADS_RECORD_RECORD_H
#define KSMSIM_WORKLOADS_RECORD_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include "traces/writer.h"

/*
 * How written pages are found. Pagemap-scan (Linux 6.7+) and soft-dirty see
 * every store, even of the same bytes; compare mode, for kernels with
 * neither, reads every present page each interval and records it when its
 * bytes changed (or it is new), which misses stores that leave the bytes as
 * they were.
 *
 * Pagemap-scan: the shim (shim.h), preloaded into every process of the
 * tree, leaves a userfaultfd of the process's own mm at a fixed fd; the
 * recorder copies it (pidfd_getfd), registers the anonymous ranges for
 * async write-protect through it and, each interval, PAGEMAP_SCAN returns
 * the pages written since the last scan and protects them again. Only
 * those are read. A process without the fd (static binary, no shim, a
 * fork that bypassed the shim's atfork handler) is recorded by compare:
 * a fallback, counted. Until the shim has run in a new process (its first
 * SHIM_WAIT_US) compare stands in, then hands over.
 *
 * Auto is for option parsing: the caller resolves it with
 * record_pagemap_scan_works() and record_soft_dirty_works() before
 * recorder_new().
 */
enum record_find {
	RECORD_FIND_AUTO, RECORD_FIND_PAGEMAP_SCAN, RECORD_FIND_SOFT_DIRTY, RECORD_FIND_COMPARE,
};

/*
 * Which pages are recorded. All: every anonymous private writable mapping,
 * as if the process ran under prctl(PR_SET_MEMORY_MERGE) (what if KSM were
 * on for a program that never advises). Advised: only what KSM would scan
 * in that process: the VMAs it advised MADV_MERGEABLE (VmFlags "mg"), or
 * all of them once it set PR_SET_MEMORY_MERGE; for QEMU with mem-merge=on,
 * guest RAM but not its heap or translation buffer. Pages out of the scope
 * are never read and never in the trace.
 */
enum record_scope {
	RECORD_SCOPE_ALL, RECORD_SCOPE_ADVISED,
};

/*
 * How a captured page that is neither zero nor one repeated byte goes into
 * the trace: its bytes (a blob, stored once; versions 2 and 3), or its
 * 128-bit digest (digest:<XXH3-128>, version 4: a host's worth of pages in
 * 16 bytes each, but no checksum false positives to study on it).
 */
enum record_content {
	RECORD_CONTENT_BYTES, RECORD_CONTENT_DIGEST,
};

/* "bytes" or "digest". */
const char *record_content_name(enum record_content content);

/* "all" or "advised". */
const char *record_scope_name(enum record_scope scope);

/* "pagemap-scan", "soft-dirty", "compare" or "auto". */
const char *record_find_name(enum record_find mode);

/* Whether soft-dirty tracking works here: clear, store, look. */
bool record_soft_dirty_works(void);

/*
 * Whether pagemap-scan works here: userfaultfd with async write-protect,
 * pidfd_getfd and PAGEMAP_SCAN, tried on this process, and the shim at path
 * shim loads. On false, *why says what is missing.
 */
bool record_pagemap_scan_works(const char *shim, const char **why);

struct record_stats {
	uint64_t intervals, procs_seen, exits, maps, unmaps;
	uint64_t pages, zero_pages, uniform_pages;	/* page writes recorded */
	uint64_t digest_pages;	/* ... of them stored as digests (RECORD_CONTENT_DIGEST) */
	uint64_t mem_errors;	/* pages that could not be read: skipped */
	uint64_t huge_skipped;	/* mappings over 64 GiB seen and left out */
	double capture_s;	/* time spent capturing */
	/*
	 * The detector: pages it reported (written, or for compare changed),
	 * the CPU time it took (pagemap-scan: registering and scanning;
	 * soft-dirty and compare: the pagemap walk, the reads and hashes, not
	 * writing the trace), and for pagemap-scan the processes that had the
	 * shim's fd and those recorded by compare instead (fallbacks).
	 */
	uint64_t detected, uffd_procs, fallbacks;
	double detector_cpu_s;
	double throttled_s;	/* --max-cpu: time slept to stay under the cap */
};

struct recorder;

/*
 * Starts recording into w, which stays the caller's to close or abort:
 * 'set run 1' at t=0 and, with as_vm, the spawn of that one address space
 * for every process (as inside a guest; else one mm per process, named
 * COMM.PID). mode is not RECORD_FIND_AUTO; scope says which ranges are
 * recorded. Makes this process a child subreaper, so call it before starting
 * the root.
 */
struct recorder *recorder_new(trace_writer *w, enum record_find mode, enum record_scope scope,
			      const char *as_vm);
void recorder_free(struct recorder *rc);
/*
 * The content form of the pages from now on (RECORD_CONTENT_BYTES unless
 * set); DIGEST needs a writer of version 4.
 */
void recorder_set_content(struct recorder *rc, enum record_content content);

/* The tree to record is root (a child of ours) and its descendants. */
void recorder_follow(struct recorder *rc, pid_t root);

/*
 * Whether pid can be attached to (record.h: attached): it exists, is a
 * process (not a thread, a zombie, a kernel thread or this process) and its
 * pagemap, memory and, for soft-dirty, clear_refs open. On false, why
 * (of n bytes) says what is wrong, to follow the pid in an error line.
 */
bool record_attach_check(pid_t pid, enum record_find mode, char *why, size_t n);

/* Whether dir is a cgroup v2 directory, for recorder_attach_cgroup. */
bool record_cgroup_check(const char *dir);

/* Records the n running processes pids (checked) and their descendants instead of a tree. */
void recorder_attach(struct recorder *rc, const pid_t *pids, guint n);

/* Records every process of the cgroup v2 directory dir and the cgroups below it. */
void recorder_attach_cgroup(struct recorder *rc, const char *dir);

/* The end of an attached capture: lets go of the processes, as they were. */
void recorder_detach(struct recorder *rc);

/*
 * Caps this process's CPU time at pct percent of one CPU: capture sleeps
 * whenever it has used more (up to one interval's worth of saved-up
 * budget). Counted in record_stats.throttled_s.
 */
void recorder_set_max_cpu(struct recorder *rc, double pct, double interval_s);

/*
 * The captures from now on end by seconds from now (0: no limit): past it,
 * or at a nap that would end past it, a capture stops reading
 * (recorder_cut: the pages not read yet are left out of it), so that a
 * starved or capped recorder still ends on time.
 */
void recorder_set_deadline(struct recorder *rc, double seconds);
bool recorder_cut(const struct recorder *rc);

/* One interval over the whole tree, stamped t_us. */
void recorder_capture(struct recorder *rc, uint64_t t_us);
/* A mark, stamped with the last capture's time. */
void recorder_mark(struct recorder *rc, const char *label);

/*
 * Capture must stop: a write error (recorder_error) or an address space
 * out of vpns (recorder_full). The trace is still good in the second case.
 */
bool recorder_stopped(const struct recorder *rc);
const GError *recorder_error(const struct recorder *rc);
/* The address space that saw more than 2^32 pages of mappings, or NULL. */
const char *recorder_full(const struct recorder *rc);

/*
 * No process is left to record: the root has been reaped and its tree is
 * gone; every attached pid and descendant has exited; the cgroup was removed.
 */
bool recorder_tree_done(const struct recorder *rc);
/* Ends the root's process group: sig, then SIGKILL after 3 s; reaps it. */
void recorder_stop_tree(struct recorder *rc, int sig);
/* Whether the root was reaped; *status is then its wait status. */
bool recorder_root_status(const struct recorder *rc, int *status);

const struct record_stats *recorder_stats(const struct recorder *rc);

#endif
