// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recorder: the processes of the tree, their address spaces and
 * regions, and one capture interval over them (record.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "traces/trace.h"
#include "util/signals.h"
#include "workloads/record/emit.h"
#include "workloads/record/pagemap.h"
#include "workloads/record/procfs.h"
#include "workloads/record/record.h"
#include "workloads/record/shim.h"
#include "workloads/record/uffd.h"

#define FIRST_VPN 0x100		/* clear of vpn 0, for readability */
#define HPAGE_PAGES 512u	/* pages of a PMD-sized THP (x86-64) */
/* how long a new process may take to run the shim's constructor */
#define SHIM_WAIT_US 500000

/* A trace address space: one per process, or one for all with --as-vm. */
struct vspace {
	char name[TRACE_NAME_MAX + 1];
	uint64_t next_vpn;
};

struct proc {
	pid_t pid;
	unsigned long long start;	/* starttime: tells a reused pid apart */
	char comm[64];			/* a new comm means an exec: a new mm */
	struct vspace *vs;
	GArray *regions;		/* struct region, sorted by u0 */
	GHashTable *hashes;		/* compare mode: user page -> hash of last bytes, | 1 */
	/* pagemap-scan */
	int uffd;			/* our copy of its userfaultfd, or -1 */
	bool fallback;			/* no fd: compare for good */
	uint64_t first_us;		/* first seen: how long to wait for the fd */
	bool seen;
	bool gone;			/* exited while we read it */
	bool own_vs;			/* vs is this process's own mm */
};

/* Whose processes are recorded (record.h). */
enum record_source {
	SOURCE_COMMAND, SOURCE_PIDS, SOURCE_CGROUP,
};

struct recorder {
	enum record_find mode;
	enum record_scope scope;
	struct emit out;
	GHashTable *procs;		/* pid -> struct proc */
	struct vspace *vm;		/* as_vm */
	enum record_source source;
	GHashTable *seeds;		/* SOURCE_PIDS: pid -> starttime + 1 of those attached to */
	char *cgroup;			/* SOURCE_CGROUP: its directory */
	bool cgroup_gone;		/* the cgroup was removed */
	/* --max-cpu: a budget of CPU seconds, earned at cap per second of wall time */
	double cap, credit, credit_max, cap_wall, cap_cpu;
	double deadline;		/* --max-seconds (monotonic s), or 0 */
	bool cut;			/* this capture was cut short at the deadline */
	pid_t root;
	bool root_reaped;
	int root_status;
	uint8_t *buf;			/* PAGEMAP_RUN_PAGES pages */
	/* CPU time of this process's capture that is not the detector's */
	double emit_cpu;		/* compare: writing the changed pages out */
	double found_cpu;		/* the others: reading and writing out the found pages */
	char full[TRACE_NAME_MAX + 1];	/* the vspace out of vpns: capture stopped */
	struct record_stats stats;
};

static double now_s(void)
{
	return g_get_monotonic_time() / 1e6;
}

/* This thread's CPU time, user and system: what the detector costs. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process's CPU time, every thread, user and system: what --max-cpu caps. */
static double process_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * --max-cpu: the CPU used since the last call is taken from the budget, the
 * wall time added to it at the cap's rate (at most one interval's worth is
 * saved up); when the budget is spent, sleep until it is back to zero.
 */
static void throttle(struct recorder *rc)
{
	double wall, cpu;

	if (rc->deadline > 0 && now_s() >= rc->deadline)
		rc->cut = true;
	if (rc->cap <= 0 || rc->cut)
		return;
	wall = now_s();
	cpu = process_cpu_s();
	rc->credit = MIN(rc->credit + rc->cap * (wall - rc->cap_wall), rc->credit_max);
	rc->credit -= cpu - rc->cap_cpu;
	rc->cap_wall = wall;
	rc->cap_cpu = cpu;
	/* after SIGINT/SIGTERM the capture ends at full speed: it is the last one */
	if (rc->credit < 0 && !signals_caught()) {
		double nap = -rc->credit / rc->cap, t0 = now_s();
		struct timespec ts;

		/* no nap past the deadline: the capture is cut there instead */
		if (rc->deadline > 0 && t0 + nap > rc->deadline) {
			nap = MAX(rc->deadline - t0, 0);
			rc->cut = true;
		}
		ts.tv_sec = (time_t)nap;
		ts.tv_nsec = (long)((nap - (time_t)nap) * 1e9);
		nanosleep(&ts, NULL);	/* a signal cuts it short */
		rc->stats.throttled_s += now_s() - t0;
	}
}

void recorder_set_deadline(struct recorder *rc, double seconds)
{
	rc->deadline = seconds > 0 ? now_s() + seconds : 0;
	rc->cut = false;
}

bool recorder_cut(const struct recorder *rc)
{
	return rc->cut;
}

void recorder_set_max_cpu(struct recorder *rc, double pct, double interval_s)
{
	rc->cap = pct / 100;
	rc->credit_max = rc->cap * MAX(interval_s, 0.1);
	rc->credit = rc->credit_max;
	rc->cap_wall = now_s();
	rc->cap_cpu = process_cpu_s();
}

const char *record_scope_name(enum record_scope scope)
{
	return scope == RECORD_SCOPE_ADVISED ? "advised" : "all";
}

const char *record_find_name(enum record_find mode)
{
	switch (mode) {
	case RECORD_FIND_PAGEMAP_SCAN:
		return "pagemap-scan";
	case RECORD_FIND_SOFT_DIRTY:
		return "soft-dirty";
	case RECORD_FIND_COMPARE:
		return "compare";
	default:
		return "auto";
	}
}

bool record_pagemap_scan_works(const char *shim, const char **why)
{
	void *h;

	if (!uffd_works(why))
		return false;
	if (!shim) {
		*why = "no shim " SHIM_NAME " (beside ksmsim, or at KSMSIM_RECORD_SHIM)";
		return false;
	}
	/* inert here: it acts only with SHIM_ENV set, which we do not have */
	h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		*why = "the shim does not load";
		return false;
	}
	dlclose(h);
	return true;
}

/* "COMM.PID" with only [A-Za-z0-9_.-], at most 64 characters. */
static void mm_name(char *out, const char *comm, pid_t pid)
{
	char tail[16];
	size_t n = 0, room;

	snprintf(tail, sizeof(tail), ".%d", (int)pid);
	room = TRACE_NAME_MAX - strlen(tail);
	for (const char *s = comm; *s && n < room; s++)
		out[n++] = g_ascii_isalnum(*s) || *s == '_' || *s == '.' || *s == '-' ? *s : '_';
	if (n == 0)
		out[n++] = 'p';
	strcpy(out + n, tail);
}

/* n trace pages; align_to != UINT64_MAX: the first has its user page's offset in 2 MiB */
static uint64_t vpn_alloc(struct recorder *rc, struct vspace *vs, uint64_t n, uint64_t align_to)
{
	uint64_t v = vs->next_vpn;

	if (align_to != UINT64_MAX) {
		uint64_t skip = (align_to - v) % HPAGE_PAGES;

		if (skip > TRACE_VPN_LIMIT - v)
			skip = TRACE_VPN_LIMIT - v;
		v += skip;
		vs->next_vpn = v;
	}

	if (n > TRACE_VPN_LIMIT - v) {
		if (!rc->full[0])
			g_strlcpy(rc->full, vs->name, sizeof(rc->full));
		return 0;
	}
	vs->next_vpn += n;
	return v;
}

static bool overlaps_any(GArray *ranges, uint64_t u0, uint64_t u1)
{
	for (guint i = 0; i < ranges->len; i++) {
		const struct region *r = &g_array_index(ranges, struct region, i);

		if (r->u0 < u1 && u0 < r->u1)
			return true;
	}
	return false;
}

/* Appends user pages [u0, u1) to out, merged with the last range if it ends there alike. */
static void append_piece(GArray *out, uint64_t u0, uint64_t u1, bool merge)
{
	struct region *last = out->len ? &g_array_index(out, struct region, out->len - 1) : NULL;

	if (last && last->u1 == u0 && last->merge == merge) {
		last->u1 = u1;
		return;
	}
	g_array_append_val(out, ((struct region){ u0, u1, 0, false, merge, false }));
}

/*
 * p's anonymous private writable ranges, split where the scope (record.h)
 * starts and ends and flagged merge inside it: everything for
 * RECORD_SCOPE_ALL or a process that set merge-any, else the VMAs it
 * advised MADV_MERGEABLE. NULL when p is gone.
 */
static GArray *scoped_ranges(struct recorder *rc, struct proc *p)
{
	GArray *anon = procfs_anon_ranges(p->pid, &rc->stats.huge_skipped), *mg, *out;

	if (!anon)
		return NULL;
	if (rc->scope == RECORD_SCOPE_ALL || procfs_merge_any(p->pid)) {
		for (guint i = 0; i < anon->len; i++)
			g_array_index(anon, struct region, i).merge = true;
		return anon;
	}
	/* maps has no VmFlags: only smaps tells which VMAs were advised */
	mg = procfs_vmflag_ranges(p->pid, "mg");
	if (!mg) {
		g_array_free(anon, TRUE);
		return NULL;
	}
	out = g_array_new(FALSE, FALSE, sizeof(struct region));
	for (guint i = 0; i < anon->len; i++) {
		const struct region *s = &g_array_index(anon, struct region, i);
		uint64_t cur = s->u0;

		for (guint j = 0; j < mg->len; j++) {
			const struct region *m = &g_array_index(mg, struct region, j);
			uint64_t a = MAX(cur, m->u0), b = MIN(s->u1, m->u1);

			if (a >= b)
				continue;
			if (a > cur)
				append_piece(out, cur, a, false);
			append_piece(out, a, b, true);
			cur = b;
		}
		if (cur < s->u1)
			append_piece(out, cur, s->u1, false);
	}
	g_array_free(mg, TRUE);
	g_array_free(anon, TRUE);
	return out;
}

/* advise hugepage for the parts of user pages [u0, u1), mapped at vpn, that lie in hg */
static void emit_hugepage_parts(struct recorder *rc, struct proc *p, GArray *hg, uint64_t u0,
				uint64_t u1, uint64_t vpn)
{
	for (guint i = 0; i < hg->len; i++) {
		const struct region *r = &g_array_index(hg, struct region, i);
		uint64_t a = MAX(u0, r->u0), b = MIN(u1, r->u1);

		if (a < b)
			emit_advise_hugepage(&rc->out, p->vs->name, vpn + (a - u0), b - a);
	}
}

static gint region_cmp(gconstpointer a, gconstpointer b)
{
	const struct region *x = a, *y = b;

	return x->u0 < y->u0 ? -1 : x->u0 > y->u0;
}

/* The user pages [u0, u1) leave t (keyed by user page). */
static void forget_in(GHashTable *t, uint64_t u0, uint64_t u1)
{
	if (!t)
		return;
	if (u1 - u0 < g_hash_table_size(t)) {
		for (uint64_t u = u0; u < u1; u++)
			g_hash_table_remove(t, GSIZE_TO_POINTER(u));
	} else {
		GHashTableIter it;
		gpointer k;

		g_hash_table_iter_init(&it, t);
		while (g_hash_table_iter_next(&it, &k, NULL))
			if (GPOINTER_TO_SIZE(k) >= u0 && GPOINTER_TO_SIZE(k) < u1)
				g_hash_table_iter_remove(&it);
	}
}

/* Compare mode: the pages [u0, u1) are gone, so are their hashes. */
static void forget(struct proc *p, uint64_t u0, uint64_t u1)
{
	forget_in(p->hashes, u0, u1);
}

/* The user pages [u0, u1) of region r are unmapped. */
static void unmap_part(struct recorder *rc, struct proc *p, const struct region *r, uint64_t u0,
		       uint64_t u1)
{
	emit_range(&rc->out, TRACE_UNMAP, p->vs->name, r->vpn + (u0 - r->u0), u1 - u0, false);
	forget(p, u0, u1);
	rc->stats.unmaps++;
}

/*
 * Brings p's regions in line with its maps and advice (now: scoped_ranges):
 * unmap what went, map what came into the scope, advise unmergeable what
 * left it and mergeable what came back. What was never in the scope stays
 * out of the trace.
 */
static void sync_regions(struct recorder *rc, struct proc *p, GArray *now)
{
	GArray *keep = g_array_new(FALSE, FALSE, sizeof(struct region));
	GArray *fresh = g_array_new(FALSE, FALSE, sizeof(struct region));

	for (guint i = 0; i < p->regions->len; i++) {
		struct region *r = &g_array_index(p->regions, struct region, i);
		uint64_t cur = r->u0;

		for (guint j = 0; j < now->len; j++) {
			struct region *s = &g_array_index(now, struct region, j);
			uint64_t a = MAX(r->u0, s->u0), b = MIN(r->u1, s->u1);

			if (a >= b)
				continue;
			if (a > cur)
				unmap_part(rc, p, r, cur, a);
			g_array_append_val(keep, ((struct region){ a, b, r->vpn + (a - r->u0),
					   r->armed, s->merge, r->reread || (s->merge && !r->merge) }));
			if (s->merge != r->merge)
				emit_range(&rc->out, TRACE_ADVISE, p->vs->name, r->vpn + (a - r->u0),
					   b - a, s->merge);
			cur = b;
		}
		if (cur < r->u1)
			unmap_part(rc, p, r, cur, r->u1);
	}
	/* the parts of now that no kept region covers are new */
	GArray *hg = NULL;	/* MADV_HUGEPAGE ranges, read once if anything is new */
	for (guint j = 0; j < now->len; j++) {
		struct region *s = &g_array_index(now, struct region, j);
		uint64_t cur = s->u0;

		for (guint i = 0; i <= keep->len; i++) {
			uint64_t a = s->u1;

			if (i < keep->len) {
				struct region *k = &g_array_index(keep, struct region, i);

				if (k->u1 <= cur || k->u0 >= s->u1)
					continue;
				a = k->u0;
			}
			if (a > cur && s->merge) {
				if (!hg)
					hg = procfs_vmflag_ranges(p->pid, "hg");
				bool huge = hg && overlaps_any(hg, cur, a);
				/* a THP covers 512 aligned pages: keep the user address's alignment */
				uint64_t vpn = vpn_alloc(rc, p->vs, a - cur, huge ? cur : UINT64_MAX);

				if (rc->full[0])
					break;
				/* its pages may predate the last clear of soft-dirty: read them all */
				g_array_append_val(fresh, ((struct region){ cur, a, vpn, false, true,
									    true }));
				emit_range(&rc->out, TRACE_MAP, p->vs->name, vpn, a - cur, false);
				emit_range(&rc->out, TRACE_ADVISE, p->vs->name, vpn, a - cur, true);
				if (huge)
					emit_hugepage_parts(rc, p, hg, cur, a, vpn);
				rc->stats.maps++;
			}
			if (i < keep->len)
				cur = MAX(cur, g_array_index(keep, struct region, i).u1);
		}
	}
	if (hg)
		g_array_free(hg, TRUE);
	g_array_append_vals(keep, fresh->data, fresh->len);
	g_array_sort(keep, region_cmp);
	g_array_free(fresh, TRUE);
	g_array_free(p->regions, TRUE);
	p->regions = keep;
}

/*
 * Reads n pages at user page u and records them; a failed read skips pages.
 * process_vm_readv rather than /proc/PID/mem: it copies a run in one go.
 * In compare mode (hashes) only the pages whose bytes changed are recorded,
 * and counted as detected; so in the interval pagemap-scan takes over.
 */
static void capture_run(struct recorder *rc, struct proc *p, const struct region *r,
			uint64_t u, uint64_t n)
{
	struct iovec local = { rc->buf, n * TRACE_PAGE_SIZE };
	struct iovec remote = { (void *)(uintptr_t)(u * TRACE_PAGE_SIZE), n * TRACE_PAGE_SIZE };
	ssize_t got = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
	bool keep[PAGEMAP_RUN_PAGES];
	double t0;

	if (got < 0 && errno == ESRCH) {
		/* it exited meanwhile: the rest of it is gone too */
		p->gone = true;
		return;
	}

	if (got < (ssize_t)(n * TRACE_PAGE_SIZE) && n > 1) {
		/* a page went away meanwhile: take the others one by one */
		for (uint64_t i = 0; i < n && !p->gone; i++)
			capture_run(rc, p, r, u + i, 1);
		return;
	}
	if (got != (ssize_t)(n * TRACE_PAGE_SIZE)) {
		rc->stats.mem_errors++;
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *page = rc->buf + i * TRACE_PAGE_SIZE;
		uint64_t h;
		gpointer key;

		keep[i] = true;
		if (!p->hashes)
			continue;
		h = XXH3_64bits(page, TRACE_PAGE_SIZE) | 1;
		key = GSIZE_TO_POINTER(u + i);
		if (GPOINTER_TO_SIZE(g_hash_table_lookup(p->hashes, key)) == h) {
			keep[i] = false;
			continue;
		}
		g_hash_table_insert(p->hashes, key, GSIZE_TO_POINTER(h));
		/* (taking over from compare, pagemap-scan has counted them) */
		if (p->uffd < 0)
			rc->stats.detected++;
	}
	/* writing the trace is not the detector's cost */
	t0 = cpu_s();
	for (uint64_t i = 0; i < n; i++)
		if (keep[i])
			emit_page(&rc->out, p->vs->name, r->vpn + (u + i - r->u0),
				  rc->buf + i * TRACE_PAGE_SIZE);
	rc->emit_cpu += cpu_s() - t0;
	/* a nap is neither the detector's CPU nor capture's: it spends none */
	throttle(rc);
}

/* capture_run of pages the detector found: reading them is capture, not detection. */
static void capture_found(struct recorder *rc, struct proc *p, const struct region *r,
			  uint64_t u, uint64_t n)
{
	double t0 = cpu_s(), e0 = rc->emit_cpu;

	capture_run(rc, p, r, u, n);
	rc->emit_cpu = e0;
	rc->found_cpu += cpu_s() - t0;
}

static int open_proc_file(pid_t pid, const char *file, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return open(path, flags | O_CLOEXEC);
}

/*
 * One interval of one process: maps, the soft-dirty present pages, clear,
 * then the bytes. Reading the bytes after the clear keeps every store seen:
 * a page written after its bytes were read is soft-dirty again next time.
 * False when the process is gone.
 */
static bool capture_proc_pagemap(struct recorder *rc, struct proc *p)
{
	bool soft_dirty = rc->mode == RECORD_FIND_SOFT_DIRTY;
	GArray *now = scoped_ranges(rc, p);
	GArray *runs;
	int pagemap_fd, clear_fd;	/* opened anew every interval: exec swaps the mm */
	bool ok = false;

	if (!now)
		return false;
	pagemap_fd = open_proc_file(p->pid, "pagemap", O_RDONLY);
	clear_fd = soft_dirty ? open_proc_file(p->pid, "clear_refs", O_WRONLY) : -1;
	if (pagemap_fd < 0 || (soft_dirty && clear_fd < 0)) {
		g_array_free(now, TRUE);
		goto out;
	}
	sync_regions(rc, p, now);
	g_array_free(now, TRUE);
	runs = g_array_new(FALSE, FALSE, sizeof(struct dirty_run));
	if (!rc->out.error)
		pagemap_scan(pagemap_fd, p->regions, soft_dirty, p->hashes, runs);
	for (guint i = 0; i < p->regions->len; i++)
		g_array_index(p->regions, struct region, i).reread = false;
	if (soft_dirty && !pagemap_clear_soft_dirty(clear_fd)) {
		g_array_free(runs, TRUE);
		goto out;
	}
	for (guint i = 0; i < runs->len && !rc->out.error && !p->gone && !rc->cut; i++) {
		struct dirty_run *d = &g_array_index(runs, struct dirty_run, i);

		struct region *r = &g_array_index(p->regions, struct region, d->region);

		if (soft_dirty) {
			rc->stats.detected += d->n;
			capture_found(rc, p, r, d->u, d->n);
		} else {
			capture_run(rc, p, r, d->u, d->n);
		}
	}
	g_array_free(runs, TRUE);
	ok = !p->gone;
out:
	if (pagemap_fd >= 0)
		close(pagemap_fd);
	if (clear_fd >= 0)
		close(clear_fd);
	return ok;
}

/* The written pages [u0, u1) of region r, read PAGEMAP_RUN_PAGES at a time. */
static void capture_uffd_run(struct recorder *rc, struct proc *p, const struct region *r,
			     const struct uffd_run *w)
{
	uint64_t u0 = MAX(w->u0, r->u0), u1 = MIN(w->u1, r->u1);

	for (uint64_t u = u0; u < u1 && !rc->out.error && !p->gone && !rc->cut;) {
		uint64_t n = MIN((uint64_t)PAGEMAP_RUN_PAGES, u1 - u);

		rc->stats.detected += n;
		capture_found(rc, p, r, u, n);
		u += n;
	}
}

/*
 * One interval of a process with the shim's userfaultfd: maps, register the
 * new ranges for async write-protect, PAGEMAP_SCAN each range (the pages
 * written since the last scan, protected again in the same call), then the
 * bytes of those pages only. As with soft-dirty, reading after the scan
 * keeps every store seen. False when the process is gone; *fall when it
 * must be recorded by compare from now on (the pages the scans did find are
 * then read again by compare, so none is lost).
 */
static bool capture_proc_uffd(struct recorder *rc, struct proc *p, bool *fall)
{
	GArray *now = scoped_ranges(rc, p);
	GArray *runs;		/* struct uffd_run */
	guint *first;		/* per region: its first run */
	int pm;

	if (!now)
		return false;
	pm = open_proc_file(p->pid, "pagemap", O_RDONLY);
	if (pm < 0) {
		g_array_free(now, TRUE);
		return false;
	}
	sync_regions(rc, p, now);
	g_array_free(now, TRUE);
	runs = g_array_new(FALSE, FALSE, sizeof(struct uffd_run));
	first = g_new0(guint, p->regions->len + 1);
	for (guint i = 0; i < p->regions->len && !rc->out.error; i++) {
		struct region *r = &g_array_index(p->regions, struct region, i);
		int err = 0;

		first[i] = runs->len;
		/*
		 * out of the scope: not scanned, so what is written meanwhile is
		 * still found written when it comes back
		 */
		if (!r->merge)
			continue;
		/* a mapping replaced in place (mmap over it) is not registered */
		if (r->armed && uffd_unarmed(pm, r->u0, r->u1))
			r->armed = false;
		if (!r->armed) {
			err = uffd_register(p->uffd, r->u0, r->u1);
			r->armed = !err;
		}
		if (!err)
			err = uffd_scan(pm, r->u0, r->u1, runs);
		if (err == -EPERM) {
			/* mapped over between the two: once more */
			err = uffd_register(p->uffd, r->u0, r->u1);
			if (!err)
				err = uffd_scan(pm, r->u0, r->u1, runs);
		}
		if (err) {
			/* an exit is not a fallback: its maps are gone, or empty for a zombie */
			uint64_t huge = 0;
			GArray *left = procfs_anon_ranges(p->pid, &huge);

			if (left && left->len)
				*fall = true;
			else
				p->gone = true;
			if (left)
				g_array_free(left, TRUE);
			goto out;
		}
	}
	first[p->regions->len] = runs->len;
	for (guint i = 0; i < p->regions->len && !rc->out.error && !p->gone; i++) {
		const struct region *r = &g_array_index(p->regions, struct region, i);

		for (guint j = first[i]; j < first[i + 1] && !rc->out.error && !p->gone; j++)
			capture_uffd_run(rc, p, r, &g_array_index(runs, struct uffd_run, j));
	}
	/* the interval that took over from compare is done: hashes no more */
	if (p->hashes) {
		g_hash_table_destroy(p->hashes);
		p->hashes = NULL;
	}
out:
	close(pm);
	g_free(first);
	g_array_free(runs, TRUE);
	return !p->gone;
}

/* Pagemap-scan: the process's userfaultfd, if the shim has left one by now. */
static void take_uffd(struct recorder *rc, struct proc *p)
{
	GArray *held = g_array_new(FALSE, FALSE, sizeof(int));
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, rc->procs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		if (((struct proc *)val)->uffd >= 0)
			g_array_append_val(held, ((struct proc *)val)->uffd);
	p->uffd = uffd_take(p->pid, held);
	g_array_free(held, TRUE);
	if (p->uffd >= 0) {
		rc->stats.uffd_procs++;
	} else if (rc->out.t_us - p->first_us >= SHIM_WAIT_US) {
		p->fallback = true;
		rc->stats.fallbacks++;
	}
}

/* Pagemap-scan failed on p: compare from now on. */
static void to_compare(struct recorder *rc, struct proc *p)
{
	close(p->uffd);
	p->uffd = -1;
	p->fallback = true;
	rc->stats.fallbacks++;
	if (!p->hashes)
		p->hashes = g_hash_table_new(g_direct_hash, g_direct_equal);
}

/* One interval of one process, by its detector; false when it is gone. */
static bool capture_proc(struct recorder *rc, struct proc *p)
{
	double t0 = cpu_s();
	bool ok, fall = false;

	rc->emit_cpu = rc->found_cpu = 0;
	if (rc->mode == RECORD_FIND_PAGEMAP_SCAN && p->uffd < 0 && !p->fallback)
		take_uffd(rc, p);
	if (p->uffd >= 0) {
		ok = capture_proc_uffd(rc, p, &fall);
		if (fall) {
			to_compare(rc, p);
			ok = capture_proc_pagemap(rc, p);
		}
	} else {
		ok = capture_proc_pagemap(rc, p);
	}
	rc->stats.detector_cpu_s += cpu_s() - t0 - rc->emit_cpu - rc->found_cpu;
	throttle(rc);
	return ok;
}

static void proc_free(gpointer data)
{
	struct proc *p = data;

	g_array_free(p->regions, TRUE);
	if (p->hashes)
		g_hash_table_destroy(p->hashes);
	if (p->uffd >= 0)
		close(p->uffd);
	if (p->own_vs)
		g_free(p->vs);
	g_free(p);
}

/* The process is gone: its address space ends (or, in a VM, its ranges). */
static void proc_end(struct recorder *rc, struct proc *p)
{
	/* ended before the shim's fd showed: recorded by compare throughout */
	if (rc->mode == RECORD_FIND_PAGEMAP_SCAN && p->uffd < 0 && !p->fallback) {
		p->fallback = true;
		rc->stats.fallbacks++;
	}
	rc->stats.exits++;
	if (rc->vm) {
		for (guint i = 0; i < p->regions->len; i++) {
			struct region *r = &g_array_index(p->regions, struct region, i);

			emit_range(&rc->out, TRACE_UNMAP, p->vs->name, r->vpn, r->u1 - r->u0, false);
		}
	} else {
		emit_named(&rc->out, TRACE_EXIT, p->vs->name);
		g_free(p->vs);
	}
	p->vs = NULL;
	p->own_vs = false;
}

static struct proc *proc_new(struct recorder *rc, const struct pinfo *pi)
{
	struct proc *p = g_new0(struct proc, 1);

	p->pid = pi->pid;
	p->start = pi->start;
	g_strlcpy(p->comm, pi->comm, sizeof(p->comm));
	p->regions = g_array_new(FALSE, FALSE, sizeof(struct region));
	p->uffd = -1;
	p->first_us = rc->out.t_us;
	/* pagemap-scan: compare stands in until the shim's fd is there */
	if (rc->mode == RECORD_FIND_COMPARE || rc->mode == RECORD_FIND_PAGEMAP_SCAN)
		p->hashes = g_hash_table_new(g_direct_hash, g_direct_equal);
	rc->stats.procs_seen++;
	if (rc->vm) {
		p->vs = rc->vm;
	} else {
		p->vs = g_new0(struct vspace, 1);
		p->own_vs = true;
		mm_name(p->vs->name, p->comm, p->pid);
		p->vs->next_vpn = FIRST_VPN;
		emit_named(&rc->out, TRACE_SPAWN, p->vs->name);
	}
	return p;
}

/* Reaps every child that has exited (we are the subreaper of the tree). */
static void reap(struct recorder *rc)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == rc->root) {
			rc->root_reaped = true;
			rc->root_status = status;
		}
	}
}

/*
 * The processes to record now: COMMAND's tree; the attached pids and their
 * descendants, and every process already followed (so an orphan, whose
 * ppid changed, stays); every process of the cgroup.
 */
static GArray *live_procs(struct recorder *rc)
{
	GHashTable *seeds;
	GHashTableIter it;
	gpointer val;
	GArray *live;

	if (rc->source == SOURCE_COMMAND)
		return procfs_tree(rc->root);
	seeds = g_hash_table_new(g_direct_hash, g_direct_equal);
	if (rc->source == SOURCE_PIDS) {
		GHashTableIter si;
		gpointer k, v;

		g_hash_table_iter_init(&si, rc->seeds);
		while (g_hash_table_iter_next(&si, &k, &v))
			g_hash_table_insert(seeds, k, v);
		g_hash_table_iter_init(&it, rc->procs);
		while (g_hash_table_iter_next(&it, NULL, &val)) {
			const struct proc *p = val;

			g_hash_table_insert(seeds, GINT_TO_POINTER(p->pid),
					    GSIZE_TO_POINTER(p->start + 1));
		}
	} else if (!procfs_cgroup_pids(rc->cgroup, seeds)) {
		rc->cgroup_gone = true;
	}
	live = procfs_procs(seeds, rc->source == SOURCE_PIDS);
	g_hash_table_destroy(seeds);
	return live;
}

void recorder_capture(struct recorder *rc, uint64_t t_us)
{
	double t0 = now_s();
	GArray *live;
	GHashTableIter it;
	gpointer key, val;

	rc->out.t_us = t_us;
	reap(rc);
	live = live_procs(rc);
	g_hash_table_iter_init(&it, rc->procs);
	while (g_hash_table_iter_next(&it, &key, &val))
		((struct proc *)val)->seen = false;
	for (guint i = 0; i < live->len && !rc->out.error; i++) {
		struct pinfo *pi = &g_array_index(live, struct pinfo, i);
		struct proc *p = g_hash_table_lookup(rc->procs, GINT_TO_POINTER(pi->pid));

		if (p && (p->start != pi->start || strcmp(p->comm, pi->comm))) {
			/* the pid was reused, or it exec'd: the old mm is gone */
			proc_end(rc, p);
			g_hash_table_remove(rc->procs, GINT_TO_POINTER(pi->pid));
			p = NULL;
		}
		if (!p) {
			p = proc_new(rc, pi);
			g_hash_table_insert(rc->procs, GINT_TO_POINTER(p->pid), p);
		}
		/* cut at the deadline: the rest are not read, but they are still there */
		p->seen = rc->cut || capture_proc(rc, p);
	}
	g_array_free(live, TRUE);
	g_hash_table_iter_init(&it, rc->procs);
	while (g_hash_table_iter_next(&it, &key, &val)) {
		struct proc *p = val;

		if (!p->seen) {
			proc_end(rc, p);
			g_hash_table_iter_remove(&it);
		}
	}
	rc->stats.intervals++;
	rc->stats.capture_s += now_s() - t0;
}

struct recorder *recorder_new(trace_writer *w, enum record_find mode, enum record_scope scope,
			      const char *as_vm)
{
	struct recorder *rc = g_new0(struct recorder, 1);

	rc->mode = mode;
	rc->scope = scope;
	emit_init(&rc->out, w, &rc->stats);
	rc->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, proc_free);
	rc->buf = g_malloc((size_t)PAGEMAP_RUN_PAGES * TRACE_PAGE_SIZE);
	/* orphans of the tree come to us, so the tree stays whole via ppid */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	emit_set(&rc->out, KNOB_RUN, 1);
	if (as_vm) {
		rc->vm = g_new0(struct vspace, 1);
		g_strlcpy(rc->vm->name, as_vm, sizeof(rc->vm->name));
		rc->vm->next_vpn = FIRST_VPN;
		emit_named(&rc->out, TRACE_SPAWN, rc->vm->name);
	}
	return rc;
}

void recorder_set_content(struct recorder *rc, enum record_content content)
{
	rc->out.digest = content == RECORD_CONTENT_DIGEST;
}

const char *record_content_name(enum record_content content)
{
	return content == RECORD_CONTENT_DIGEST ? "digest" : "bytes";
}

void recorder_free(struct recorder *rc)
{
	if (!rc)
		return;
	g_hash_table_destroy(rc->procs);
	if (rc->seeds)
		g_hash_table_destroy(rc->seeds);
	g_free(rc->cgroup);
	g_free(rc->vm);
	g_free(rc->buf);
	emit_fini(&rc->out);
	g_free(rc);
}

/* How long a stopped tree gets between SIGTERM and SIGKILL, and the polls. */
#define STOP_WAIT_S 3
#define STOP_NAP_MS 20

/* The recorded tree, for the out-of-memory exit, which cannot reach rc. */
static pid_t oom_root;

/*
 * recorder_stop_tree() for signals_out_of_memory(): the same signals with
 * no reaping of our own books (kill, waitpid and sleeps only), so that the
 * recorded program does not run on unwatched after we exit.
 */
static const char *stop_tree_after_oom(void)
{
	const pid_t root = oom_root;
	const struct timespec nap = { 0, STOP_NAP_MS * 1000 * 1000 };
	bool reaped = false;

	if (root <= 0 || kill(-root, SIGTERM) < 0)
		return NULL;
	for (int i = 0; i < STOP_WAIT_S * 1000 / STOP_NAP_MS; i++) {
		reaped |= waitpid(root, NULL, WNOHANG) == root;
		if (reaped && kill(-root, 0) < 0)
			return "the recorded program was stopped (SIGTERM)";
		nanosleep(&nap, NULL);
	}
	kill(-root, SIGKILL);
	if (!reaped)
		waitpid(root, NULL, 0);
	return "the recorded program was killed (SIGKILL)";
}

void recorder_follow(struct recorder *rc, pid_t root)
{
	rc->root = root;
	oom_root = root;
	signals_on_out_of_memory(stop_tree_after_oom);
}

void recorder_mark(struct recorder *rc, const char *label)
{
	emit_named(&rc->out, TRACE_MARK, label);
}

bool recorder_stopped(const struct recorder *rc)
{
	return rc->out.error || rc->full[0];
}

const GError *recorder_error(const struct recorder *rc)
{
	return rc->out.error;
}

const char *recorder_full(const struct recorder *rc)
{
	return rc->full[0] ? rc->full : NULL;
}

bool recorder_tree_done(const struct recorder *rc)
{
	if (g_hash_table_size(rc->procs) || !rc->stats.intervals)
		return false;
	switch (rc->source) {
	case SOURCE_PIDS:
		return true;
	case SOURCE_CGROUP:
		return rc->cgroup_gone;
	default:
		return rc->root_reaped;
	}
}

void recorder_attach(struct recorder *rc, const pid_t *pids, guint n)
{
	rc->source = SOURCE_PIDS;
	rc->seeds = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (guint i = 0; i < n; i++) {
		struct pinfo pi;

		/* the start time now: a pid reused after it exits is someone else */
		if (procfs_pinfo(pids[i], &pi))
			g_hash_table_insert(rc->seeds, GINT_TO_POINTER(pids[i]),
					    GSIZE_TO_POINTER(pi.start + 1));
	}
}

bool record_cgroup_check(const char *dir)
{
	return procfs_is_cgroup2(dir);
}

void recorder_attach_cgroup(struct recorder *rc, const char *dir)
{
	rc->source = SOURCE_CGROUP;
	rc->cgroup = g_strdup(dir);
}

void recorder_detach(struct recorder *rc)
{
	GHashTableIter it;
	gpointer val;

	/*
	 * Attached processes never get a userfaultfd registration (record.h);
	 * an fd we hold is closed, which is all a detach needs. Soft-dirty
	 * bits stay as the kernel keeps them.
	 */
	g_hash_table_iter_init(&it, rc->procs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct proc *p = val;

		if (p->uffd >= 0) {
			close(p->uffd);
			p->uffd = -1;
		}
	}
}

/* The checks of record_attach_check() on an open of /proc/PID/file. */
static bool can_open(pid_t pid, const char *file, int flags, char *why, size_t n)
{
	int fd = open_proc_file(pid, file, flags);

	if (fd < 0) {
		snprintf(why, n, "cannot open /proc/%d/%s: %s", (int)pid, file, g_strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

bool record_attach_check(pid_t pid, enum record_find mode, char *why, size_t n)
{
	struct pinfo pi;
	char path[64], *status = NULL, *tgid;
	long leader = pid;

	if (pid == getpid()) {
		snprintf(why, n, "is this ksmsim record itself");
		return false;
	}
	if (!procfs_pinfo(pid, &pi)) {
		snprintf(why, n, "no such process");
		return false;
	}
	if (pi.state == 'Z' || pi.state == 'X') {
		snprintf(why, n, "has exited (a zombie)");
		return false;
	}
	if (pi.kthread) {
		snprintf(why, n, "is a kernel thread (%s): it has no user memory", pi.comm);
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (g_file_get_contents(path, &status, NULL, NULL) && (tgid = strstr(status, "\nTgid:")))
		leader = strtol(tgid + 6, NULL, 10);
	g_free(status);
	if (leader != pid) {
		snprintf(why, n, "is a thread of process %ld: give that pid", leader);
		return false;
	}
	if (!can_open(pid, "pagemap", O_RDONLY, why, n) || !can_open(pid, "mem", O_RDONLY, why, n))
		return false;
	if (mode == RECORD_FIND_SOFT_DIRTY && !can_open(pid, "clear_refs", O_WRONLY, why, n))
		return false;
	return true;
}

/* Once the tree is gone its pid may be reused: nothing left to stop. */
static void forget_tree_for_oom(void)
{
	oom_root = 0;
	signals_on_out_of_memory(NULL);
}

void recorder_stop_tree(struct recorder *rc, int sig)
{
	double t0 = now_s();

	if (recorder_tree_done(rc)) {
		forget_tree_for_oom();
		return;
	}
	kill(-rc->root, sig);
	while (now_s() - t0 < STOP_WAIT_S) {
		reap(rc);
		if (rc->root_reaped && kill(-rc->root, 0) < 0) {
			forget_tree_for_oom();
			return;
		}
		g_usleep(STOP_NAP_MS * 1000);
	}
	kill(-rc->root, SIGKILL);
	while (!rc->root_reaped && waitpid(rc->root, &rc->root_status, 0) == rc->root)
		rc->root_reaped = true;
	reap(rc);
	forget_tree_for_oom();
}

bool recorder_root_status(const struct recorder *rc, int *status)
{
	*status = rc->root_status;
	return rc->root_reaped;
}

const struct record_stats *recorder_stats(const struct recorder *rc)
{
	return &rc->stats;
}
