// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim record: run a command and turn the page writes of its whole process
 * tree into a ksmtrace (version 2, traces/FORMAT-v2.md).
 *
 * Every interval, for each process of the tree: /proc/PID/maps gives the
 * anonymous private writable mappings (new ones become map + advise
 * mergeable, vanished ones unmap), /proc/PID/pagemap the pages that are
 * present and soft-dirty (written since the last clear), process_vm_readv
 * their bytes, and writing "4" to /proc/PID/clear_refs starts the next
 * interval. Without soft-dirty support (compare mode) every present page is
 * read and kept when its bytes changed. The bytes go out as zero, byte:HH
 * or blob pages; the v2 writer stores each distinct page once.
 *
 * The tree: we are its subreaper, so orphans stay in it; every interval
 * /proc is walked for the descendants of COMMAND by ppid. A pid with a new
 * start time or a new comm (an exec) is a new mm.
 *
 * User addresses (up to 2^47) do not fit the trace's 2^32 pages, so
 * mappings are compacted: each newly seen range of user pages gets the next
 * free vpns of its address space, in order of appearance, and vpns are never
 * reused. Growing mappings (heap, stack) add new ranges.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "cli/cli.h"
#include "traces/check.h"
#include "traces/writer.h"
#include "util/progress.h"
#include "util/signals.h"

#define PAGE 4096u
#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_SOFT_DIRTY (UINT64_C(1) << 55)
#define RUN_PAGES 64		/* pages read from mem at once */
#define PM_BATCH 1024		/* pagemap entries read at once */
/*
 * Mappings larger than this (64 GiB) are reservations, such as sanitizer
 * shadow memory: walking their page tables every interval would take
 * minutes and they would use up the trace's 2^32 vpns, so they are left out.
 */
#define HUGE_REGION_PAGES (UINT64_C(1) << 24)

static uint64_t huge_skipped;	/* such mappings seen */

/* User pages [u0, u1) appear in the trace at vpn, vpn + 1, ... */
struct region {
	uint64_t u0, u1, vpn;
};

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
	int pagemap_fd, clear_fd;	/* opened anew every interval: exec swaps the mm */
	GArray *regions;		/* struct region, sorted by u0 */
	GHashTable *hashes;		/* compare mode: user page -> hash of last bytes, | 1 */
	bool seen;
	bool gone;			/* exited while we read it */
	bool own_vs;			/* vs is this process's own mm */
};

/*
 * How written pages are found. Soft-dirty is exact (every store, even of the
 * same bytes); kernels without CONFIG_MEM_SOFT_DIRTY get compare mode: every
 * present page is read each interval and recorded when its bytes changed
 * (or it is new), which misses stores that leave the bytes as they were.
 */
enum find_mode { FIND_AUTO, FIND_SOFT_DIRTY, FIND_COMPARE };

struct recorder {
	enum find_mode mode;
	trace_writer *w;
	struct trace_record *rec;
	uint64_t t_us;
	GHashTable *procs;		/* pid -> struct proc */
	struct vspace *vm;		/* --as-vm */
	pid_t root;
	bool root_reaped;
	int root_status;
	GError *error;			/* the first writer error: capture stops */
	uint8_t *buf;			/* RUN_PAGES pages */
	uint64_t *pm;			/* PM_BATCH pagemap entries */

	/* figures for the report */
	uint64_t intervals, procs_seen, pages, zero_pages, uniform_pages, maps, unmaps;
	uint64_t mem_errors, blobs;
	double capture_s;
	bool vpn_full;			/* capture stopped: the trace is still good */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim record [--interval-ms N] [--as-vm NAME] [--max-seconds N]\n"
		"                     [--mark-every N] [--baseline] [--find MODE]\n"
		"                     [--progress | --quiet]\n"
		"                     -o FILE -- COMMAND [ARG...]\n"
		"\n"
		"Run COMMAND (as root) and record the page writes of its whole process tree as\n"
		"a trace (ksmtrace version 2): every interval, the pages of anonymous private\n"
		"writable mappings written since the last one (soft-dirty bits; where the\n"
		"kernel lacks them, pages whose bytes changed) are read and written to the\n"
		"trace with their exact bytes; each distinct page is stored once. New and vanished mappings become map/unmap, exited processes exit.\n"
		"Every captured range is advised mergeable, as if COMMAND ran under\n"
		"prctl(PR_SET_MEMORY_MERGE); the trace starts with 'set run 1'.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE     the trace; .ksmb binary, .gz gzip text, else text\n"
		"  -i, --interval-ms N   capture interval (default 100)\n"
		"      --as-vm NAME      fold every process into one address space NAME, as\n"
		"                        inside a guest (default: one mm per process,\n"
		"                        named COMM.PID)\n"
		"      --max-seconds N   stop after N seconds: capture once more, then end\n"
		"                        the trace and terminate COMMAND's process group\n"
		"      --mark-every N    a mark record every N intervals (default 10)\n"
		"      --baseline        run COMMAND once without recording first, to report\n"
		"                        the capture overhead on its wall time\n"
		"      --find MODE       how written pages are found: soft-dirty (every store),\n"
		"                        compare (read every present page each interval and\n"
		"                        keep those whose bytes changed: misses stores of the\n"
		"                        same bytes), auto (soft-dirty where the kernel has it)\n"
		"      --progress        progress on standard error (intervals, page writes,\n"
		"                        percent of --max-seconds) even when it is not a\n"
		"                        terminal; by default shown on a terminal\n"
		"      --quiet           no progress\n"
		"  -h, --help            show this help\n"
		"\n"
		"COMMAND runs in its own process group. SIGINT/SIGTERM end the capture after\n"
		"the current interval; the trace is closed properly and replays, and the\n"
		"signal is passed on to COMMAND's process group (exit 130/143).\n"
		"Exit status: 0 recorded (whatever COMMAND's status), 1 COMMAND ended before\n"
		"anything was captured, 2 bad usage, not root, COMMAND not found, no\n"
		"soft-dirty support, or an error writing the trace.\n");
	return out == stdout ? 0 : EXIT_USAGE;
}

/* ------------------------------------------------------------ records */

static bool put(struct recorder *rc)
{
	rc->rec->t_us = rc->t_us;
	if (rc->error)
		return false;
	return trace_writer_put(rc->w, rc->rec, &rc->error);
}

static void put_range(struct recorder *rc, enum trace_verb verb, const char *mm, uint64_t vpn,
		      uint64_t npages, bool mergeable)
{
	rc->rec->verb = verb;
	g_strlcpy(rc->rec->mm, mm, sizeof(rc->rec->mm));
	rc->rec->vpn = vpn;
	rc->rec->npages = npages;
	rc->rec->mergeable = mergeable;
	put(rc);
}

static void put_named(struct recorder *rc, enum trace_verb verb, const char *name)
{
	rc->rec->verb = verb;
	if (verb == TRACE_MARK)
		g_strlcpy(rc->rec->label, name, sizeof(rc->rec->label));
	else
		g_strlcpy(rc->rec->mm, name, sizeof(rc->rec->mm));
	rc->rec->node = 0;
	put(rc);
}

/* One captured page: zero and uniform pages need no blob. */
static void put_page(struct recorder *rc, const char *mm, uint64_t vpn, const uint8_t *page)
{
	struct trace_content *c = &rc->rec->content;
	bool uniform = true;

	for (unsigned int i = 1; i < PAGE && uniform; i++)
		uniform = page[i] == page[0];
	rc->rec->verb = TRACE_WRITE;
	g_strlcpy(rc->rec->mm, mm, sizeof(rc->rec->mm));
	rc->rec->vpn = vpn;
	rc->rec->npages = 1;
	c->off = 0;
	c->value = 0;
	if (uniform && page[0] == 0) {
		c->form = CONTENT_ZERO;
		rc->zero_pages++;
	} else if (uniform) {
		c->form = CONTENT_BYTE;
		c->value = page[0];
		rc->uniform_pages++;
	} else {
		c->form = CONTENT_BLOB;
		c->len = PAGE;
		memcpy(c->data, page, PAGE);
	}
	rc->pages++;
	put(rc);
}

/* ------------------------------------------------------------ procfs */

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

/* pid's comm, state, ppid and starttime from /proc/PID/stat; false if gone. */
static bool read_stat(pid_t pid, char *comm, size_t comm_len, char *state, pid_t *ppid,
		      unsigned long long *start)
{
	char path[64], buf[1024], *open_p, *close_p, *s;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return false;
	if (comm)
		g_strlcpy(comm, open_p + 1, MIN(comm_len, (size_t)(close_p - open_p)));
	s = close_p + 2;
	*state = *s;
	/* fields after the comm: 3 state, 4 ppid, ..., 22 starttime */
	for (field = 3; field < 22 && s; field++) {
		if (field == 4)
			*ppid = strtol(s, NULL, 10);
		s = strchr(s, ' ');
		if (s)
			s++;
	}
	if (!s)
		return false;
	*start = strtoull(s, NULL, 10);
	return true;
}

struct pinfo {
	pid_t pid, ppid;
	unsigned long long start;
	char state;
	char comm[64];
};

/* The live (non-zombie) processes of root's tree: root and its descendants. */
static GArray *tree(pid_t root)
{
	GArray *all = g_array_new(FALSE, FALSE, sizeof(struct pinfo));
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct pinfo));
	GHashTable *in = g_hash_table_new(g_direct_hash, g_direct_equal);
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool grew = true;

	while (d && (de = readdir(d))) {
		struct pinfo pi;
		char *end;

		pi.pid = strtol(de->d_name, &end, 10);
		if (*end || pi.pid <= 0)
			continue;
		if (read_stat(pi.pid, pi.comm, sizeof(pi.comm), &pi.state, &pi.ppid, &pi.start))
			g_array_append_val(all, pi);
	}
	if (d)
		closedir(d);
	g_hash_table_add(in, GINT_TO_POINTER(root));
	/* parents usually come before children in /proc order, so this rarely loops */
	while (grew) {
		grew = false;
		for (guint i = 0; i < all->len; i++) {
			struct pinfo *pi = &g_array_index(all, struct pinfo, i);

			if (!g_hash_table_contains(in, GINT_TO_POINTER(pi->pid)) &&
			    g_hash_table_contains(in, GINT_TO_POINTER(pi->ppid))) {
				g_hash_table_add(in, GINT_TO_POINTER(pi->pid));
				grew = true;
			}
		}
	}
	for (guint i = 0; i < all->len; i++) {
		struct pinfo *pi = &g_array_index(all, struct pinfo, i);

		if (g_hash_table_contains(in, GINT_TO_POINTER(pi->pid)) && pi->state != 'Z' &&
		    pi->state != 'X')
			g_array_append_val(out, *pi);
	}
	g_hash_table_destroy(in);
	g_array_free(all, TRUE);
	return out;
}

/*
 * The anonymous private writable mappings of /proc/PID/maps, as sorted,
 * merged ranges of user pages. NULL when the process is gone.
 */
static GArray *anon_ranges(pid_t pid)
{
	char path[64], *text = NULL, *line, *next;
	GArray *out;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	out = g_array_new(FALSE, FALSE, sizeof(struct region));
	for (line = text; line && *line; line = next) {
		unsigned long long s, e, ino;
		char perms[8] = "", name[256] = "";
		int n = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %n", &s, &e, perms, &ino, &n) < 4)
			continue;
		sscanf(line + n, "%255s", name);
		if (perms[1] != 'w' || perms[3] != 'p' || ino != 0)
			continue;
		/* anonymous, heap, stacks, named anonymous; not vdso and the like */
		if (name[0] && strcmp(name, "[heap]") && strncmp(name, "[stack", 6) &&
		    strncmp(name, "[anon:", 6))
			continue;
		s /= PAGE;
		e /= PAGE;
		if (e - s > HUGE_REGION_PAGES) {
			huge_skipped++;
			continue;
		}
		if (out->len && g_array_index(out, struct region, out->len - 1).u1 == s) {
			g_array_index(out, struct region, out->len - 1).u1 = e;
		} else {
			struct region r = { s, e, 0 };

			g_array_append_val(out, r);
		}
	}
	g_free(text);
	return out;
}

/* --------------------------------------------------------- the capture */

static uint64_t vpn_alloc(struct recorder *rc, struct vspace *vs, uint64_t n)
{
	uint64_t v = vs->next_vpn;

	if (n > TRACE_VPN_LIMIT - v) {
		if (!rc->vpn_full)
			fprintf(stderr, "ksmsim record: %s: more than 2^32 pages of mappings seen "
				"(vpns are never reused); capture stopped\n", vs->name);
		rc->vpn_full = true;
		return 0;
	}
	vs->next_vpn += n;
	return v;
}

static gint region_cmp(gconstpointer a, gconstpointer b)
{
	const struct region *x = a, *y = b;

	return x->u0 < y->u0 ? -1 : x->u0 > y->u0;
}

/* Compare mode: the pages [u0, u1) are gone, so are their hashes. */
static void forget(struct proc *p, uint64_t u0, uint64_t u1)
{
	if (!p->hashes)
		return;
	if (u1 - u0 < g_hash_table_size(p->hashes)) {
		for (uint64_t u = u0; u < u1; u++)
			g_hash_table_remove(p->hashes, GSIZE_TO_POINTER(u));
	} else {
		GHashTableIter it;
		gpointer k;

		g_hash_table_iter_init(&it, p->hashes);
		while (g_hash_table_iter_next(&it, &k, NULL))
			if (GPOINTER_TO_SIZE(k) >= u0 && GPOINTER_TO_SIZE(k) < u1)
				g_hash_table_iter_remove(&it);
	}
}

/* Brings p's regions in line with its maps: unmap what went, map what came. */
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
			if (a > cur) {
				put_range(rc, TRACE_UNMAP, p->vs->name, r->vpn + (cur - r->u0), a - cur, false);
				forget(p, cur, a);
				rc->unmaps++;
			}
			g_array_append_val(keep, ((struct region){ a, b, r->vpn + (a - r->u0) }));
			cur = b;
		}
		if (cur < r->u1) {
			put_range(rc, TRACE_UNMAP, p->vs->name, r->vpn + (cur - r->u0), r->u1 - cur, false);
			forget(p, cur, r->u1);
			rc->unmaps++;
		}
	}
	/* the parts of now that no kept region covers are new */
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
			if (a > cur) {
				uint64_t vpn = vpn_alloc(rc, p->vs, a - cur);

				if (rc->vpn_full)
					break;
				g_array_append_val(fresh, ((struct region){ cur, a, vpn }));
				put_range(rc, TRACE_MAP, p->vs->name, vpn, a - cur, false);
				put_range(rc, TRACE_ADVISE, p->vs->name, vpn, a - cur, true);
				rc->maps++;
			}
			if (i < keep->len)
				cur = MAX(cur, g_array_index(keep, struct region, i).u1);
		}
	}
	g_array_append_vals(keep, fresh->data, fresh->len);
	g_array_sort(keep, region_cmp);
	g_array_free(fresh, TRUE);
	g_array_free(p->regions, TRUE);
	p->regions = keep;
}

/*
 * Reads n pages at user page u and records them; a failed read skips pages.
 * process_vm_readv rather than /proc/PID/mem: it copies a run in one go.
 */
static void capture_run(struct recorder *rc, struct proc *p, const struct region *r,
			uint64_t u, uint64_t n)
{
	struct iovec local = { rc->buf, n * PAGE };
	struct iovec remote = { (void *)(uintptr_t)(u * PAGE), n * PAGE };
	ssize_t got = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);

	if (got < 0 && errno == ESRCH) {
		/* it exited meanwhile: the rest of it is gone too */
		p->gone = true;
		return;
	}

	if (got < (ssize_t)(n * PAGE) && n > 1) {
		/* a page went away meanwhile: take the others one by one */
		for (uint64_t i = 0; i < n && !p->gone; i++)
			capture_run(rc, p, r, u + i, 1);
		return;
	}
	if (got != (ssize_t)(n * PAGE)) {
		rc->mem_errors++;
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *page = rc->buf + i * PAGE;

		if (p->hashes) {
			uint64_t h = XXH3_64bits(page, PAGE) | 1;
			gpointer key = GSIZE_TO_POINTER(u + i);

			if (GPOINTER_TO_SIZE(g_hash_table_lookup(p->hashes, key)) == h)
				continue;
			g_hash_table_insert(p->hashes, key, GSIZE_TO_POINTER(h));
		}
		put_page(rc, p->vs->name, r->vpn + (u + i - r->u0), page);
	}
}

struct dirty_run {
	uint64_t u, n;
	guint region;
};

/*
 * One interval of one process: maps, the soft-dirty present pages, clear,
 * then the bytes. Reading the bytes after the clear keeps every store seen:
 * a page written after its bytes were read is soft-dirty again next time.
 * False when the process is gone.
 */
static bool capture_proc(struct recorder *rc, struct proc *p)
{
	GArray *now = anon_ranges(p->pid);
	GArray *runs;
	char path[64];
	bool ok = true;

	if (!now)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)p->pid);
	p->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)p->pid);
	p->clear_fd = rc->mode == FIND_SOFT_DIRTY ? open(path, O_WRONLY | O_CLOEXEC) : -1;
	if (p->pagemap_fd < 0 || (rc->mode == FIND_SOFT_DIRTY && p->clear_fd < 0)) {
		g_array_free(now, TRUE);
		ok = false;
		goto out;
	}
	sync_regions(rc, p, now);
	g_array_free(now, TRUE);
	runs = g_array_new(FALSE, FALSE, sizeof(struct dirty_run));
	for (guint i = 0; i < p->regions->len && !rc->error; i++) {
		struct region *r = &g_array_index(p->regions, struct region, i);

		for (uint64_t u = r->u0; u < r->u1;) {
			uint64_t n = MIN((uint64_t)PM_BATCH, r->u1 - u);
			ssize_t got = pread(p->pagemap_fd, rc->pm, n * 8, (off_t)(u * 8));

			if (got <= 0)
				break;
			n = got / 8;
			for (uint64_t k = 0; k < n; k++) {
				struct dirty_run *last;

				if (!(rc->pm[k] & PM_PRESENT)) {
					/* dropped (MADV_DONTNEED...): record it when it is back */
					if (p->hashes)
						g_hash_table_remove(p->hashes, GSIZE_TO_POINTER(u + k));
					continue;
				}
				if (!(rc->pm[k] & PM_SOFT_DIRTY) && rc->mode == FIND_SOFT_DIRTY)
					continue;
				last = runs->len ? &g_array_index(runs, struct dirty_run, runs->len - 1) : NULL;
				if (last && last->region == i && last->u + last->n == u + k &&
				    last->n < RUN_PAGES)
					last->n++;
				else
					g_array_append_val(runs, ((struct dirty_run){ u + k, 1, i }));
			}
			u += n;
		}
	}
	if (rc->mode == FIND_SOFT_DIRTY && pwrite(p->clear_fd, "4", 1, 0) != 1) {
		g_array_free(runs, TRUE);
		ok = false;
		goto out;
	}
	for (guint i = 0; i < runs->len && !rc->error && !p->gone; i++) {
		struct dirty_run *d = &g_array_index(runs, struct dirty_run, i);

		capture_run(rc, p, &g_array_index(p->regions, struct region, d->region), d->u, d->n);
	}
	g_array_free(runs, TRUE);
	if (p->gone)
		ok = false;
out:
	if (p->pagemap_fd >= 0)
		close(p->pagemap_fd);
	if (p->clear_fd >= 0)
		close(p->clear_fd);
	p->pagemap_fd = p->clear_fd = -1;
	return ok;
}

static void proc_free(gpointer data)
{
	struct proc *p = data;

	g_array_free(p->regions, TRUE);
	if (p->hashes)
		g_hash_table_destroy(p->hashes);
	if (p->own_vs)
		g_free(p->vs);
	g_free(p);
}

/* The process is gone: its address space ends (or, in a VM, its ranges). */
static void proc_end(struct recorder *rc, struct proc *p)
{
	if (rc->vm) {
		for (guint i = 0; i < p->regions->len; i++) {
			struct region *r = &g_array_index(p->regions, struct region, i);

			put_range(rc, TRACE_UNMAP, p->vs->name, r->vpn, r->u1 - r->u0, false);
		}
	} else {
		put_named(rc, TRACE_EXIT, p->vs->name);
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
	p->pagemap_fd = p->clear_fd = -1;
	p->regions = g_array_new(FALSE, FALSE, sizeof(struct region));
	if (rc->mode == FIND_COMPARE)
		p->hashes = g_hash_table_new(g_direct_hash, g_direct_equal);
	rc->procs_seen++;
	if (rc->vm) {
		p->vs = rc->vm;
	} else {
		p->vs = g_new0(struct vspace, 1);
		p->own_vs = true;
		mm_name(p->vs->name, p->comm, p->pid);
		p->vs->next_vpn = 0x100;	/* clear of vpn 0, for readability */
		put_named(rc, TRACE_SPAWN, p->vs->name);
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

/* One interval over the whole tree. */
static void capture(struct recorder *rc)
{
	double t0 = now_s();
	GArray *live;
	GHashTableIter it;
	gpointer key, val;

	reap(rc);
	live = tree(rc->root);
	g_hash_table_iter_init(&it, rc->procs);
	while (g_hash_table_iter_next(&it, &key, &val))
		((struct proc *)val)->seen = false;
	for (guint i = 0; i < live->len && !rc->error; i++) {
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
			if (!p)
				continue;
			g_hash_table_insert(rc->procs, GINT_TO_POINTER(p->pid), p);
		}
		p->seen = capture_proc(rc, p);
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
	rc->intervals++;
	rc->capture_s += now_s() - t0;
}

/* ------------------------------------------------------------ checks */

/* Whether soft-dirty tracking works here: clear, store, look. */
static bool soft_dirty_works(void)
{
	volatile uint8_t *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e1 = 0, e2 = 0;
	int cfd, pfd;
	bool ok = false;

	if (page == MAP_FAILED)
		return false;
	page[0] = 1;
	cfd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	pfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0 && pfd >= 0 && write(cfd, "4", 1) == 1 &&
	    pread(pfd, &e1, 8, (off_t)((uintptr_t)page / PAGE * 8)) == 8) {
		page[0] = 2;
		if (pread(pfd, &e2, 8, (off_t)((uintptr_t)page / PAGE * 8)) == 8)
			ok = !(e1 & PM_SOFT_DIRTY) && (e2 & PM_SOFT_DIRTY) && (e2 & PM_PRESENT);
	}
	if (cfd >= 0)
		close(cfd);
	if (pfd >= 0)
		close(pfd);
	munmap((void *)page, PAGE);
	return ok;
}

static bool command_exists(const char *cmd)
{
	char *found;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	found = g_find_program_in_path(cmd);
	g_free(found);
	return found != NULL;
}

/*
 * Forks COMMAND in its own process group; returns its pid once it has
 * exec'd, or -1 with errno from a failed exec (reported through a
 * close-on-exec pipe: end of file means the exec happened).
 */
static pid_t start_command(char **argv, int *err)
{
	int pfd[2], e = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		*err = errno;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		*err = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		setpgid(0, 0);
		close(pfd[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides, so that it holds before either goes on */
	close(pfd[1]);
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(e)) {
		waitpid(pid, NULL, 0);
		*err = e;
		return -1;
	}
	return pid;
}

static double run_baseline(char **argv)
{
	int err = 0, status;
	double t0 = now_s();
	pid_t pid = start_command(argv, &err);

	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return now_s() - t0;
}

/* Ends COMMAND's process group: TERM (or the signal we got), then KILL. */
static void stop_command(struct recorder *rc, int sig)
{
	double t0 = now_s();

	if (rc->root_reaped && !g_hash_table_size(rc->procs))
		return;
	kill(-rc->root, sig);
	while (now_s() - t0 < 3) {
		reap(rc);
		if (rc->root_reaped && kill(-rc->root, 0) < 0)
			return;
		g_usleep(20000);
	}
	kill(-rc->root, SIGKILL);
	while (!rc->root_reaped && waitpid(rc->root, &rc->root_status, 0) == rc->root)
		rc->root_reaped = true;
	reap(rc);
}

static void sleep_until(double t)
{
	double d = t - now_s();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);	/* a signal cuts it short: the loop looks at it */
}

static char *human_bytes(double b)
{
	if (b >= 1 << 30)
		return g_strdup_printf("%.2f GiB", b / (1 << 30));
	if (b >= 1 << 20)
		return g_strdup_printf("%.1f MiB", b / (1 << 20));
	return g_strdup_printf("%.1f KiB", b / 1024);
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "as-vm", required_argument, NULL, 'V' },
		{ "max-seconds", required_argument, NULL, 'm' },
		{ "mark-every", required_argument, NULL, 'k' },
		{ "baseline", no_argument, NULL, 'b' },
		{ "find", required_argument, NULL, 'F' },
		{ "progress", no_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *vm_name = NULL;
	uint64_t interval_ms = 100, mark_every = 10;
	double max_seconds = 0, baseline = -1, t_start, t_end, next;
	struct recorder rc = { 0 };
	struct progress *progress = NULL;
	bool quiet = false, force_progress = false;
	GError *error = NULL;
	struct stat st;
	int c, err = 0, ret = 0;
	char *end;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+o:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'i':
			interval_ms = strtoull(optarg, &end, 10);
			if (*end || !*optarg || interval_ms < 1 || interval_ms > 3600000) {
				fprintf(stderr, "ksmsim record: bad --interval-ms '%s' (1..3600000)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'V':
			vm_name = optarg;
			if (!trace_name_valid(vm_name, strlen(vm_name))) {
				fprintf(stderr, "ksmsim record: bad --as-vm name '%s' (1-64 characters of "
					"A-Z a-z 0-9 _ . -)\n", vm_name);
				return EXIT_USAGE;
			}
			break;
		case 'm':
			max_seconds = g_ascii_strtod(optarg, &end);
			if (*end || !*optarg || !(max_seconds > 0)) {
				fprintf(stderr, "ksmsim record: bad --max-seconds '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'k':
			mark_every = strtoull(optarg, &end, 10);
			if (*end || !*optarg || mark_every < 1) {
				fprintf(stderr, "ksmsim record: bad --mark-every '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'b':
			baseline = 0;
			break;
		case 'P':
			force_progress = true;
			break;
		case 'Q':
			quiet = true;
			break;
		case 'F':
			if (strcmp(optarg, "auto") == 0)
				rc.mode = FIND_AUTO;
			else if (strcmp(optarg, "soft-dirty") == 0)
				rc.mode = FIND_SOFT_DIRTY;
			else if (strcmp(optarg, "compare") == 0)
				rc.mode = FIND_COMPARE;
			else {
				fprintf(stderr, "ksmsim record: bad --find '%s' (auto, soft-dirty or "
					"compare)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			return usage(stdout);
		default:
			fprintf(stderr, "ksmsim record: see 'ksmsim record --help'\n");
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (!out) {
		fprintf(stderr, "ksmsim record: -o FILE is required\n");
		return EXIT_USAGE;
	}
	if (argc < 1) {
		fprintf(stderr, "ksmsim record: no COMMAND (usage: ksmsim record -o FILE -- COMMAND...)\n");
		return EXIT_USAGE;
	}
	if (strcmp(out, "-") == 0) {
		fprintf(stderr, "ksmsim record: -o must name a file (COMMAND may use standard output)\n");
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "ksmsim record: must run as root: it reads /proc/PID/pagemap, "
			"/proc/PID/mem and writes /proc/PID/clear_refs of every process of COMMAND\n");
		return EXIT_USAGE;
	}
	if (!command_exists(argv[0])) {
		fprintf(stderr, "ksmsim record: %s: command not found\n", argv[0]);
		return EXIT_USAGE;
	}
	if (rc.mode != FIND_COMPARE && !soft_dirty_works()) {
		if (rc.mode == FIND_SOFT_DIRTY) {
			fprintf(stderr, "ksmsim record: soft-dirty page tracking is not available here "
				"(needs CONFIG_MEM_SOFT_DIRTY: /proc/PID/clear_refs '4', pagemap bit 55)\n");
			return EXIT_USAGE;
		}
		fprintf(stderr, "ksmsim record: no soft-dirty tracking here (CONFIG_MEM_SOFT_DIRTY); "
			"finding written pages by comparing their bytes (--find compare)\n");
		rc.mode = FIND_COMPARE;
	} else if (rc.mode == FIND_AUTO) {
		rc.mode = FIND_SOFT_DIRTY;
	}
	if (baseline == 0) {
		fprintf(stderr, "ksmsim record: baseline run of %s without recording...\n", argv[0]);
		baseline = run_baseline(argv);
	}

	rc.w = trace_writer_open_version(out, trace_format_from_path(out), 2, &error);
	if (!rc.w) {
		fprintf(stderr, "ksmsim record: %s\n", error->message);
		g_error_free(error);
		return EXIT_USAGE;
	}
	{
		GString *cmdline = g_string_new("recorded by ksmsim record:");

		for (int i = 0; i < argc; i++)
			g_string_append_printf(cmdline, " %s", argv[i]);
		g_string_append_printf(cmdline, "\ninterval %" G_GUINT64_FORMAT " ms; written pages "
				       "found by %s; %s", interval_ms, rc.mode == FIND_SOFT_DIRTY ?
				       "soft-dirty bits" : "comparing bytes", vm_name ? "all processes in one mm (--as-vm)" :
				       "one mm per process (COMM.PID)");
		trace_writer_comment(rc.w, cmdline->str, NULL);
		g_string_free(cmdline, TRUE);
	}
	rc.rec = g_new0(struct trace_record, 1);
	rc.procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, proc_free);
	rc.buf = g_malloc((size_t)RUN_PAGES * PAGE);
	rc.pm = g_new(uint64_t, PM_BATCH);

	/* orphans of the tree come to us, so the tree stays whole via ppid */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signals_install(SIGNALS_DEFER);

	t_start = now_s();
	rc.t_us = 0;
	rc.rec->verb = TRACE_SET;
	rc.rec->knob = KNOB_RUN;
	rc.rec->value = 1;
	put(&rc);
	if (vm_name) {
		rc.vm = g_new0(struct vspace, 1);
		g_strlcpy(rc.vm->name, vm_name, sizeof(rc.vm->name));
		rc.vm->next_vpn = 0x100;
		put_named(&rc, TRACE_SPAWN, rc.vm->name);
	}
	rc.root = start_command(argv, &err);
	if (rc.root < 0) {
		fprintf(stderr, "ksmsim record: %s: cannot execute: %s\n", argv[0], g_strerror(err));
		trace_writer_abort(rc.w);
		ret = EXIT_USAGE;
		goto out;
	}

	progress = progress_new("ksmsim record", quiet ? PROGRESS_NEVER :
				force_progress ? PROGRESS_ALWAYS : PROGRESS_AUTO);
	progress_phase(progress, "recording", "page writes");
	next = t_start;
	for (;;) {
		bool last = signals_caught() || rc.error || rc.vpn_full;

		if (max_seconds > 0 && now_s() - t_start >= max_seconds)
			last = true;
		rc.t_us = (uint64_t)((now_s() - t_start) * 1e6);
		capture(&rc);
		if (rc.intervals % mark_every == 0) {
			char label[32];

			snprintf(label, sizeof(label), "i%" G_GUINT64_FORMAT, rc.intervals);
			put_named(&rc, TRACE_MARK, label);
		}
		/* the fraction done is known only with a time limit */
		progress_update(progress, rc.pages, (uint64_t)((now_s() - t_start) * 1000),
				max_seconds > 0 ? (uint64_t)(max_seconds * 1000) : 0);
		if (last || rc.error || rc.vpn_full || (rc.root_reaped && !g_hash_table_size(rc.procs)))
			break;
		next += interval_ms / 1e3;
		if (next < now_s())
			next = now_s();	/* capture took longer than an interval: no catching up */
		sleep_until(next);
	}
	t_end = now_s();
	progress_finish(progress);
	put_named(&rc, TRACE_MARK, "end");
	if (!rc.root_reaped || g_hash_table_size(rc.procs))
		stop_command(&rc, signals_caught() ? signals_caught() : SIGTERM);

	rc.blobs = trace_writer_blobs(rc.w);
	if (rc.error) {
		/* a write error: nothing trustworthy to commit */
		fprintf(stderr, "ksmsim record: %s\n", rc.error->message);
		g_clear_error(&rc.error);
		trace_writer_abort(rc.w);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!trace_writer_close(rc.w, &error)) {
		fprintf(stderr, "ksmsim record: %s\n", error->message);
		g_clear_error(&error);
		ret = EXIT_USAGE;
		goto out;
	}
	if (rc.vpn_full)
		ret = EXIT_USAGE;

	/* the report */
	{
		double wall = t_end - t_start;
		char *written = human_bytes(rc.pages * 4096.0), *size;

		if (stat(out, &st) != 0)
			st.st_size = 0;
		size = human_bytes(st.st_size);
		if (rc.root_reaped && WIFEXITED(rc.root_status))
			fprintf(stderr, "ksmsim record: %s exited with status %d after %.2f s\n", argv[0],
				WEXITSTATUS(rc.root_status), wall);
		else if (rc.root_reaped && WIFSIGNALED(rc.root_status))
			fprintf(stderr, "ksmsim record: %s was killed by signal %d after %.2f s\n",
				argv[0], WTERMSIG(rc.root_status), wall);
		fprintf(stderr, "ksmsim record: %" G_GUINT64_FORMAT " intervals of %" G_GUINT64_FORMAT
			" ms, %" G_GUINT64_FORMAT " processes, %" G_GUINT64_FORMAT " maps, %"
			G_GUINT64_FORMAT " unmaps\n", rc.intervals, interval_ms, rc.procs_seen, rc.maps,
			rc.unmaps);
		fprintf(stderr, "ksmsim record: %" G_GUINT64_FORMAT " page writes (%s): %"
			G_GUINT64_FORMAT " zero, %" G_GUINT64_FORMAT " uniform, %" G_GUINT64_FORMAT
			" distinct other pages stored once (%" G_GUINT64_FORMAT " unreadable skipped)\n",
			rc.pages, written, rc.zero_pages, rc.uniform_pages, rc.blobs, rc.mem_errors);
		if (huge_skipped)
			fprintf(stderr, "ksmsim record: left out mappings over 64 GiB (reservations, "
				"sanitizer shadows) %" G_GUINT64_FORMAT " times\n", huge_skipped);
		fprintf(stderr, "ksmsim record: capture took %.2f s of %.2f s wall (%.1f%%)", rc.capture_s,
			wall, wall > 0 ? 100 * rc.capture_s / wall : 0);
		if (baseline > 0)
			fprintf(stderr, "; %s took %.2f s without recording, %.2f s with (%+.1f%%)",
				argv[0], baseline, wall, 100 * (wall - baseline) / baseline);
		fprintf(stderr, "\nksmsim record: trace %s: %s\n", out, size);
		g_free(written);
		g_free(size);
	}
	if (rc.intervals <= 1 && rc.pages == 0 && !signals_caught()) {
		fprintf(stderr, "ksmsim record: %s ended before anything was captured "
			"(the trace holds no pages)\n", argv[0]);
		ret = 1;
	}
	ret = signals_exit_status(ret);
out:
	progress_free(progress);
	if (rc.procs)
		g_hash_table_destroy(rc.procs);
	g_free(rc.vm);
	g_free(rc.rec);
	g_free(rc.buf);
	g_free(rc.pm);
	return ret;
}
