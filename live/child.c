// SPDX-License-Identifier: GPL-2.0-or-later
/* Trace mms as real processes: see child.h. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "live/child.h"
#include "live/live.h"
#include "util/signals.h"
#include "util/splitmix64.h"

#define CHILD_CMD_FD 100
#define CHILD_ACK_FD 101

/*
 * Once pinned, a child's memory system calls go to the kernel directly: a
 * sanitizer's interceptors (ASan builds) would write their own bookkeeping
 * and shadow pages, new pages that join the trace CPU's lru_add batch.
 */
static void *sys_mmap(void *addr, size_t len, int prot, int flags)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, -1, 0);

	return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

static int sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static int sys_madvise(void *addr, size_t len, int advice)
{
	return (int)syscall(SYS_madvise, addr, len, advice);
}

static int sys_open(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, 0);
}

static ssize_t sys_read(int fd, void *buf, size_t len)
{
	return syscall(SYS_read, fd, buf, len);
}

static void __attribute__((noreturn)) sys_exit(int code)
{
	for (;;)
		syscall(SYS_exit_group, code);
}

static bool write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR && !signals_caught())
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= n;
	}
	return true;
}

/* 1 all read, 0 end of file, -1 error or interrupted. */
static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR && !signals_caught())
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return got ? -1 : 0;
		got += n;
	}
	return 1;
}

/*
 * The bytes of rand:seed (traces/FORMAT.md, "Page contents"): 512
 * SplitMix64 words, little endian.
 */
static void rand_page(uint8_t *buf, uint64_t seed)
{
	uint64_t state = seed;

	for (int i = 0; i < 512; i++) {
		uint64_t w = GUINT64_TO_LE(splitmix64_next(&state));

		memcpy(buf + i * 8, &w, 8);
	}
}

/*
 * Stores tc into the mapped page p. Modifying forms store only their bytes
 * (the rest of the page already holds what traces/FORMAT.md says it does);
 * replacing forms store the whole page. Either way the page sees a store, so a KSM page is
 * copied even when the bytes do not change.
 */
static void store_content(uint8_t *p, const struct trace_content *tc, const uint8_t *randbuf)
{
	uint64_t w;

	switch (tc->form) {
	case CONTENT_ZERO:
		memset(p, 0, TRACE_PAGE_SIZE);
		break;
	case CONTENT_BYTE:
		memset(p, (int)(tc->value & 0xff), TRACE_PAGE_SIZE);
		break;
	case CONTENT_RAND:
		memcpy(p, randbuf, TRACE_PAGE_SIZE);
		break;
	case CONTENT_WORD:
		w = GUINT64_TO_LE(tc->value);
		memcpy(p + (size_t)tc->off * 8, &w, 8);
		break;
	case CONTENT_PATCH:
		memcpy(p + tc->off, randbuf, tc->len);
		break;
	case CONTENT_BYTES:
		memcpy(p + tc->off, tc->data, tc->len);
		break;
	case CONTENT_BLOB:	/* a captured page (ksmtrace 2): all 4096 bytes */
		memcpy(p, tc->data, TRACE_PAGE_SIZE);
		break;
	case CONTENT_DIGEST:	/* ksmtrace 4: the model's stand-in bytes (trace_digest_seed) */
		memcpy(p, randbuf, TRACE_PAGE_SIZE);
		memcpy(p, tc->data, TRACE_DIGEST_LEN);
		break;
	default:
		abort();
	}
}

/* rand: and patch: bytes; file-wide so that child_main touches it before pinning */
static uint8_t child_randbuf[TRACE_PAGE_SIZE];
/* /proc/self/maps, read for prctl memory-merge 1 */
static char child_maps[256 * 1024];
static struct trace_record child_rec;
/* the replay's pid: a forked trace process opens its pipe ends in /proc/PID/fd */
static pid_t child_replay_pid;
static uint64_t child_base;

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

/*
 * prctl(PR_SET_MEMORY_MERGE, 1) makes every VMA of the process mergeable,
 * not just the trace's: its stack, its copy of the replay's heap, libc's
 * data. Those go back to unmergeable at once (ksmd is stopped during a
 * record, see replay.c), so that KSM sees the trace's pages only, as the
 * model does; mappings the trace makes later are mergeable, as they should.
 */
static int unmerge_others(void)
{
	uint64_t lo = child_base, hi = child_base + TRACE_VPN_LIMIT * TRACE_PAGE_SIZE;
	size_t len = 0;
	int fd = sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	for (;;) {
		ssize_t n = sys_read(fd, child_maps + len, sizeof(child_maps) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(child_maps) - 1) {
			close(fd);
			return E2BIG;
		}
	}
	close(fd);
	child_maps[len] = 0;
	for (char *line = child_maps; *line;) {
		char *next = strchr(line, '\n');
		uint64_t start, end;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 &&
		    (end <= lo || start >= hi) && start < (UINT64_C(1) << 47)) {
			while (sys_madvise((void *)(uintptr_t)start, end - start, MADV_UNMERGEABLE)) {
				if (errno != EINTR && errno != EAGAIN)
					return errno;
			}
		}
		if (!next)
			break;
		line = next + 1;
	}
	return 0;
}

/*
 * Every page this process writes outside the trace: after a fork they are
 * shared with the other process, and the first store to each copies it, a
 * new page in this CPU's lru_add batch.
 */
static void __attribute__((noinline)) touch_own_pages(void)
{
	volatile uint8_t stack[64 * 1024];

	for (size_t i = 0; i < sizeof(stack); i += 512)
		stack[i] = 1;
	for (size_t i = 0; i < sizeof(child_randbuf); i += 512)
		((volatile uint8_t *)child_randbuf)[i] = 0;
	for (size_t i = 0; i < sizeof(child_maps); i += 512)
		((volatile char *)child_maps)[i] = 0;
	for (size_t i = 0; i < sizeof(child_rec); i += 512)
		((volatile uint8_t *)&child_rec)[i] = ((volatile uint8_t *)&child_rec)[i];
}

/* Carries out one record in the child; 0 or an errno. */
static int child_exec(const struct trace_record *rec, uint64_t base)
{
	uint8_t *randbuf = child_randbuf;
	uint8_t *addr = (uint8_t *)(uintptr_t)(base + rec->vpn * TRACE_PAGE_SIZE);
	size_t len = rec->npages * TRACE_PAGE_SIZE;
	void *m;

	switch (rec->verb) {
	case TRACE_MAP:
		m = sys_mmap(addr, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE);
		if (m == MAP_FAILED)
			return errno;
		if (m != addr) {	/* a kernel without MAP_FIXED_NOREPLACE */
			sys_munmap(m, len);
			return EEXIST;
		}
		/* one trace page = one 4 KiB page: no THP of any size */
		if (sys_madvise(addr, len, MADV_NOHUGEPAGE) != 0)
			return errno;
		return 0;
	case TRACE_ADVISE:
		while (sys_madvise(addr, len, rec->thp_advice == TRACE_ADVICE_HUGEPAGE ? MADV_HUGEPAGE :
				   rec->thp_advice == TRACE_ADVICE_NOHUGEPAGE ? MADV_NOHUGEPAGE :
				   rec->mergeable ? MADV_MERGEABLE : MADV_UNMERGEABLE)) {
			if (errno != EINTR && errno != EAGAIN)
				return errno;
		}
		return 0;
	case TRACE_WRITE:
	case TRACE_FILL:
		if (rec->content.form == CONTENT_RAND || rec->content.form == CONTENT_PATCH)
			rand_page(randbuf, rec->content.value);
		else if (rec->content.form == CONTENT_DIGEST)
			rand_page(randbuf, trace_digest_seed(&rec->content));
		for (uint64_t i = 0; i < rec->npages; i++)
			store_content(addr + i * TRACE_PAGE_SIZE, &rec->content, randbuf);
		return 0;
	case TRACE_FILLSEQ:
		for (uint64_t i = 0; i < rec->npages; i++) {
			rand_page(randbuf, rec->seed + i);
			memcpy(addr + i * TRACE_PAGE_SIZE, randbuf, TRACE_PAGE_SIZE);
		}
		return 0;
	case TRACE_UNMAP:
		return sys_munmap(addr, len) ? errno : 0;
	case TRACE_PRCTL:
		if (prctl(PR_SET_MEMORY_MERGE, rec->value ? 1 : 0, 0, 0, 0) != 0)
			return errno;
		return rec->value ? unmerge_others() : 0;
	default:
		return EINVAL;
	}
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) != 0 ? errno : 0;
}

/* Anywhere but cpu, when the machine has another CPU; best effort. */
static void move_off(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (i != cpu)
			CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int child_cpu = -1;

/*
 * fork: the trace process forks a new one. Its pipe ends were made by the
 * replay and are opened here through /proc/REPLAY/fd (rec->vpn: the
 * command pipe's read end, rec->npages: the acknowledgement pipe's write
 * end). The fork and both processes' first stores after it (copies of
 * pages they now share) happen off the trace CPU, so its lru_add batch
 * sees no page the trace did not write. Returns the new pid or -errno.
 */
static pid_t child_fork(const struct trace_record *rec)
{
	char path[64];
	int cmd, ack;
	pid_t pid;

	snprintf(path, sizeof(path), "/proc/%ld/fd/%" PRIu64, (long)child_replay_pid, rec->vpn);
	cmd = sys_open(path, O_RDONLY);
	snprintf(path, sizeof(path), "/proc/%ld/fd/%" PRIu64, (long)child_replay_pid, rec->npages);
	ack = sys_open(path, O_WRONLY);
	if (cmd < 0 || ack < 0) {
		int e = errno;

		if (cmd >= 0)
			close(cmd);
		if (ack >= 0)
			close(ack);
		return -e;
	}
	move_off(child_cpu);
	pid = fork();
	if (pid == 0) {
		int32_t err = 0;

		if (dup2(cmd, CHILD_CMD_FD) < 0 || dup2(ack, CHILD_ACK_FD) < 0)
			_exit(1);
		close_range(3, CHILD_CMD_FD - 1, 0);
		close_range(CHILD_ACK_FD + 1, ~0u, 0);
		touch_own_pages();
		err = pin_to(child_cpu);
		if (!write_full(CHILD_ACK_FD, &err, sizeof(err)) || err)
			_exit(1);
		return 0;
	}
	int e = errno;

	close(cmd);
	close(ack);
	touch_own_pages();
	pin_to(child_cpu);
	return pid < 0 ? -e : pid;
}

static void __attribute__((noreturn)) child_main(pid_t parent, uint64_t base, int cpu)
{
	int32_t err = 0;

	/* never outlive the replay, even if it is killed outright */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	/* ^C is for the parent, which cleans up and kills us */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	/* a forked trace process is reaped by the kernel; the replay watches a pidfd */
	signal(SIGCHLD, SIG_IGN);
	child_replay_pid = parent;
	child_base = base;
	child_cpu = cpu;
	memset(&child_rec, 0, sizeof(child_rec));
	/* first stores before moving to the trace CPU: its batch holds trace pages only */
	touch_own_pages();
	err = pin_to(cpu);
	/* ready (0) or why not: the parent waits for this before any command */
	if (!write_full(CHILD_ACK_FD, &err, sizeof(err)) || err)
		_exit(1);
	for (;;) {
		int r = read_full(CHILD_CMD_FD, &child_rec, sizeof(child_rec));

		if (r <= 0 || child_rec.verb == TRACE_EXIT)
			sys_exit(0);
		if (child_rec.verb == TRACE_FORK) {
			pid_t pid = child_fork(&child_rec);
			int32_t reply[2] = { pid < 0 ? -pid : 0, pid < 0 ? 0 : pid };

			if (pid == 0)
				continue;	/* the new process: its own loop from here */
			if (!write_full(CHILD_ACK_FD, reply, sizeof(reply)))
				_exit(1);
			continue;
		}
		err = child_exec(&child_rec, base);
		if (!write_full(CHILD_ACK_FD, &err, sizeof(err)))
			_exit(1);
	}
}

/* Idle jiffies (idle + iowait) of every CPU from /proc/stat; false if unreadable. */
static bool read_idle(uint64_t idle[CPU_SETSIZE])
{
	char *text = NULL;
	gchar **lines;

	if (!g_file_get_contents("/proc/stat", &text, NULL, NULL))
		return false;
	memset(idle, 0, sizeof(uint64_t) * CPU_SETSIZE);
	lines = g_strsplit(text, "\n", -1);
	for (gchar **l = lines; *l; l++) {
		unsigned cpu;
		guint64 v[5];

		if (sscanf(*l, "cpu%u %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %"
			   G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4]) == 6 && cpu < CPU_SETSIZE)
			idle[cpu] = v[3] + v[4];
	}
	g_strfreev(lines);
	g_free(text);
	return true;
}

int live_default_cpu(void)
{
	static uint64_t before[CPU_SETSIZE], after[CPU_SETSIZE];
	cpu_set_t set;
	int best = -1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	/*
	 * The least busy allowed CPU over a tenth of a second: another task
	 * running there was seen to let batched trace pages merge early.
	 */
	bool sampled = CPU_COUNT(&set) > 1 && read_idle(before);
	if (sampled) {
		g_usleep(100000);
		sampled = read_idle(after);
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (best < 0 || (sampled && after[cpu] - before[cpu] > after[best] - before[best]))
			best = cpu;
	}
	return best;
}

bool live_cpu_allowed(int cpu)
{
	cpu_set_t set;

	return cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof(set), &set) == 0 &&
	       CPU_ISSET(cpu, &set);
}

void live_leave_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	CPU_CLR(cpu, &set);
	if (CPU_COUNT(&set) > 0)
		sched_setaffinity(0, sizeof(set), &set);	/* best effort */
}

/* The new process says it is ready (0), or why not; c is killed and freed on failure. */
static bool await_ready(struct live_child *c, GError **error)
{
	int32_t ready = 0;
	int r = read_full(c->ack_fd, &ready, sizeof(ready));

	if (r > 0 && !ready)
		return true;
	if (r > 0)
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(ready),
			    "cannot pin the process of mm %s to its CPU: %s", c->name,
			    g_strerror(ready));
	else
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "the process of mm %s died before it was ready", c->name);
	live_child_kill(c);
	return false;
}

struct live_child *live_child_spawn(const char *name, uint64_t base, int cpu, GError **error)
{
	int cmd[2], ack[2];
	pid_t parent = getpid(), pid;
	struct live_child *c;

	if (pipe2(cmd, O_CLOEXEC) != 0)
		goto fail;
	if (pipe2(ack, O_CLOEXEC) != 0) {
		close(cmd[0]);
		close(cmd[1]);
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(cmd[0]);
		close(cmd[1]);
		close(ack[0]);
		close(ack[1]);
		errno = e;
		goto fail;
	}
	if (pid == 0) {
		/* keep our own pipe ends only: siblings' ends would hide EOFs */
		if (dup2(cmd[0], CHILD_CMD_FD) < 0 || dup2(ack[1], CHILD_ACK_FD) < 0)
			_exit(1);
		close_range(3, CHILD_CMD_FD - 1, 0);
		close_range(CHILD_ACK_FD + 1, ~0u, 0);
		child_main(parent, base, cpu);
	}
	close(cmd[0]);
	close(ack[1]);
	c = g_new0(struct live_child, 1);
	c->pid = pid;
	c->pidfd = -1;
	c->order_fd = cmd[1];
	c->ack_fd = ack[0];
	g_strlcpy(c->name, name, sizeof(c->name));
	return await_ready(c, error) ? c : NULL;
fail:
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "cannot start a process for mm %s: %s", name, g_strerror(errno));
	return NULL;
}

bool live_child_do(struct live_child *c, const struct trace_record *rec, GError **error)
{
	int32_t err = 0;
	int r;

	if (!write_full(c->order_fd, rec, sizeof(*rec)) ||
	    (r = read_full(c->ack_fd, &err, sizeof(err))) <= 0) {
		if (signals_caught())
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INTR, "interrupted");
		else
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "the process of mm %s (pid %d) died", c->name, (int)c->pid);
		return false;
	}
	if (err) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "%s of mm %s failed in the kernel: %s", verb_names[rec->verb],
			    c->name, g_strerror(err));
		return false;
	}
	return true;
}

static void reap(struct live_child *c)
{
	close(c->order_fd);
	close(c->ack_fd);
	if (c->pidfd >= 0) {
		/* not our child: the pidfd turns readable once it has exited, its mm gone */
		struct pollfd pfd = { .fd = c->pidfd, .events = POLLIN };

		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
		close(c->pidfd);
	} else {
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	g_free(c);
}

struct live_child *live_child_fork(struct live_child *parent, const char *name, GError **error)
{
	struct trace_record rec;
	int cmd[2], ack[2];
	int32_t reply[2];
	struct live_child *c;
	int r;

	if (pipe2(cmd, O_CLOEXEC) != 0)
		goto fail;
	if (pipe2(ack, O_CLOEXEC) != 0) {
		close(cmd[0]);
		close(cmd[1]);
		goto fail;
	}
	memset(&rec, 0, sizeof(rec));
	rec.verb = TRACE_FORK;
	rec.vpn = (uint64_t)cmd[0];
	rec.npages = (uint64_t)ack[1];
	g_strlcpy(rec.child, name, sizeof(rec.child));
	if (!write_full(parent->order_fd, &rec, sizeof(rec)) ||
	    (r = read_full(parent->ack_fd, reply, sizeof(reply))) <= 0) {
		close(cmd[0]);
		close(cmd[1]);
		close(ack[0]);
		close(ack[1]);
		g_set_error(error, G_FILE_ERROR, signals_caught() ? G_FILE_ERROR_INTR : G_FILE_ERROR_FAILED,
			    signals_caught() ? "interrupted" : "the process of mm %s (pid %d) died",
			    parent->name, (int)parent->pid);
		return NULL;
	}
	/* the new process has its own ends now, or never will */
	close(cmd[0]);
	close(ack[1]);
	if (reply[0]) {
		close(cmd[1]);
		close(ack[0]);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(reply[0]),
			    "fork of mm %s into %s failed in the kernel: %s", parent->name, name,
			    g_strerror(reply[0]));
		return NULL;
	}
	c = g_new0(struct live_child, 1);
	c->pid = reply[1];
	c->order_fd = cmd[1];
	c->ack_fd = ack[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	g_strlcpy(c->name, name, sizeof(c->name));
	if (c->pidfd < 0) {
		int e = errno;

		kill(c->pid, SIGKILL);
		close(c->order_fd);
		close(c->ack_fd);
		g_free(c);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "cannot watch the process of mm %s: pidfd_open: %s", name, g_strerror(e));
		return NULL;
	}
	return await_ready(c, error) ? c : NULL;
fail:
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "cannot fork mm %s into %s: %s", parent->name, name, g_strerror(errno));
	return NULL;
}

bool live_child_exit(struct live_child *c, GError **error)
{
	struct trace_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.verb = TRACE_EXIT;
	/* the child _exit()s on reading it; waitpid returns once its mm is gone */
	if (!write_full(c->order_fd, &rec, sizeof(rec))) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "the process of mm %s (pid %d) died", c->name, (int)c->pid);
		live_child_kill(c);
		return false;
	}
	reap(c);
	return true;
}

void live_child_kill(struct live_child *c)
{
	if (!c)
		return;
	kill(c->pid, SIGKILL);
	reap(c);
}
