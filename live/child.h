/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internal to live/. One trace mm as a real process. The parent forks a child per `spawn` and
 * drives it over a pair of pipes: one command, one acknowledgement, so every
 * record has happened in the kernel before the next one starts.
 *
 * Regions are anonymous private mappings at base + vpn * 4096, with THP off
 * (MADV_NOHUGEPAGE) until the trace advises hugepage (version 3).
 */
#ifndef KSMSIM_LIVE_CHILD_H
#define KSMSIM_LIVE_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include "traces/trace.h"

struct live_child {
	pid_t pid;
	int pidfd;		/* a forked one (not our child): watched here; else -1 */
	int order_fd;		/* parent writes the records to do */
	int ack_fd;		/* parent reads acknowledgements */
	char name[TRACE_NAME_MAX + 1];
};

/*
 * Forks a child; it keeps only its two pipe ends and stdin/out/err. cpu >= 0
 * pins it there before its first command: a new page waits in its CPU's
 * lru_add batch, and the model keeps one batch, so a replay whose processes
 * hop between CPUs splits bursts the model would see whole.
 */
struct live_child *live_child_spawn(const char *name, uint64_t base, int cpu, GError **error);

/*
 * fork: parent's process forks; the new process (a grandchild of ours,
 * reaped by the kernel) becomes mm name, on the parent's CPU.
 */
struct live_child *live_child_fork(struct live_child *parent, const char *name, GError **error);

/* LIVE_CPU_LEAST_BUSY (live.h) made concrete: the least busy CPU this process may use. */
int live_default_cpu(void);

/*
 * Moves this process off cpu when it may run elsewhere: its own writes
 * after a fork (copy-on-write of pages a child shares) are new pages too,
 * and belong in another CPU's batch than the trace's.
 */
void live_leave_cpu(int cpu);

/*
 * The verbs a child carries out: map, advise, write/fill, fillseq, unmap,
 * prctl.
 * For write, rec->npages is 1. Errors name the mm and the system error.
 */
bool live_child_do(struct live_child *c, const struct trace_record *rec, GError **error);

/* The process exits (its mm goes away) and is reaped; c is freed. */
bool live_child_exit(struct live_child *c, GError **error);

/* SIGKILL and reap: every error and signal path; c is freed. NULL is fine. */
void live_child_kill(struct live_child *c);

#endif
