// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The process tree from /proc/PID/stat, the anonymous mappings from
 * /proc/PID/maps, VMA flags from /proc/PID/smaps, merge-any from ksm_stat.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "traces/trace.h"
#include "workloads/record/procfs.h"

/*
 * Mappings larger than this (64 GiB) are reservations, such as sanitizer
 * shadow memory: walking their page tables every interval would take
 * minutes and they would use up the trace's 2^32 vpns, so they are left out.
 */
#define HUGE_REGION_PAGES (UINT64_C(1) << 24)

#define PF_KTHREAD_FLAG 0x00200000u	/* include/linux/sched.h: PF_KTHREAD */

/* pid's comm, state, ppid, flags and starttime from /proc/PID/stat; false if gone. */
static bool read_stat(pid_t pid, struct pinfo *pi)
{
	char path[64], buf[1024], *open_p, *close_p, *s, *end;
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
	if (!open_p || !close_p || close_p < open_p || !close_p[1])
		return false;
	g_strlcpy(pi->comm, open_p + 1, MIN(sizeof(pi->comm), (size_t)(close_p - open_p)));
	s = close_p + 2;
	pi->state = *s;
	pi->pid = pid;
	pi->kthread = false;
	/* fields after the comm: 3 state, 4 ppid, ..., 9 flags, ..., 22 starttime */
	for (field = 3; field < 22 && s; field++) {
		if (field == 4) {
			pi->ppid = strtol(s, &end, 10);
			if (end == s)
				return false;
		}
		if (field == 9)
			pi->kthread = (strtoul(s, NULL, 10) & PF_KTHREAD_FLAG) != 0;
		s = strchr(s, ' ');
		if (s)
			s++;
	}
	if (!s)
		return false;
	pi->start = strtoull(s, &end, 10);
	return end != s;
}

bool procfs_pinfo(pid_t pid, struct pinfo *pi)
{
	return read_stat(pid, pi);
}

/* Every process of /proc, struct pinfo. */
static GArray *all_procs(void)
{
	GArray *all = g_array_new(FALSE, FALSE, sizeof(struct pinfo));
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		struct pinfo pi;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (read_stat((pid_t)pid, &pi))
			g_array_append_val(all, pi);
	}
	if (d)
		closedir(d);
	return all;
}

static bool seeded(GHashTable *seeds, const struct pinfo *pi)
{
	gpointer v;

	if (!g_hash_table_lookup_extended(seeds, GINT_TO_POINTER(pi->pid), NULL, &v))
		return false;
	return GPOINTER_TO_SIZE(v) == 0 || GPOINTER_TO_SIZE(v) == pi->start + 1;
}

GArray *procfs_procs(GHashTable *seeds, bool follow)
{
	GArray *all = all_procs();
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct pinfo));
	GHashTable *in = g_hash_table_new(g_direct_hash, g_direct_equal);
	bool grew = true;

	/*
	 * Never the recorder itself: attached to an ancestor (a shell's $$)
	 * or a cgroup it is in, it would record its own buffers. Its threads
	 * share its pid here (/proc lists processes), and its children (none
	 * when attached; COMMAND's tree is seeded by its root) are only ever
	 * reached through it, which is never followed.
	 */
	pid_t self = getpid();

	for (guint i = 0; i < all->len; i++) {
		struct pinfo *pi = &g_array_index(all, struct pinfo, i);

		if (pi->pid != self && seeded(seeds, pi))
			g_hash_table_add(in, GINT_TO_POINTER(pi->pid));
	}
	/* parents usually come before children in /proc order, so this rarely loops */
	while (follow && grew) {
		grew = false;
		for (guint i = 0; i < all->len; i++) {
			struct pinfo *pi = &g_array_index(all, struct pinfo, i);

			if (pi->pid != self && !g_hash_table_contains(in, GINT_TO_POINTER(pi->pid)) &&
			    g_hash_table_contains(in, GINT_TO_POINTER(pi->ppid))) {
				g_hash_table_add(in, GINT_TO_POINTER(pi->pid));
				grew = true;
			}
		}
	}
	for (guint i = 0; i < all->len; i++) {
		struct pinfo *pi = &g_array_index(all, struct pinfo, i);

		if (g_hash_table_contains(in, GINT_TO_POINTER(pi->pid)) && pi->state != 'Z' &&
		    pi->state != 'X' && !pi->kthread)
			g_array_append_val(out, *pi);
	}
	g_hash_table_destroy(in);
	g_array_free(all, TRUE);
	return out;
}

GArray *procfs_tree(pid_t root)
{
	GHashTable *seeds = g_hash_table_new(g_direct_hash, g_direct_equal);
	GArray *out;

	g_hash_table_insert(seeds, GINT_TO_POINTER(root), GSIZE_TO_POINTER(0));
	out = procfs_procs(seeds, true);
	g_hash_table_destroy(seeds);
	return out;
}

bool procfs_is_cgroup2(const char *path)
{
	struct statfs sf;
	struct stat st;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC &&
	       stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Depth of nested cgroups followed: far more than any real hierarchy. */
#define CGROUP_DEPTH_MAX 64

static void cgroup_walk(const char *dir, GHashTable *seeds, int depth)
{
	char *procs = g_build_filename(dir, "cgroup.procs", NULL), *text = NULL;
	DIR *d;
	struct dirent *de;

	if (g_file_get_contents(procs, &text, NULL, NULL)) {
		for (char *s = text, *end; *s; s = end) {
			long pid = strtol(s, &end, 10);

			if (end == s)
				break;
			if (pid > 0)
				g_hash_table_insert(seeds, GINT_TO_POINTER((pid_t)pid),
						    GSIZE_TO_POINTER(0));
		}
	}
	g_free(text);
	g_free(procs);
	if (depth >= CGROUP_DEPTH_MAX || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char *sub;

		/* child cgroups are directories; d_type is reliable on cgroupfs */
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = g_build_filename(dir, de->d_name, NULL);
		cgroup_walk(sub, seeds, depth + 1);
		g_free(sub);
	}
	closedir(d);
}

bool procfs_cgroup_pids(const char *dir, GHashTable *seeds)
{
	struct stat st;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	cgroup_walk(dir, seeds, 0);
	return true;
}

GArray *procfs_vmflag_ranges(pid_t pid, const char *flag)
{
	char path[64], *text = NULL, *line, *next;
	unsigned long long s = 0, e = 0;
	GArray *out;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	out = g_array_new(FALSE, FALSE, sizeof(struct region));
	for (line = text; line && *line; line = next) {
		unsigned long long a, b;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		/* a VMA's first line: "start-end perms ..."; its last: "VmFlags: ..." */
		if (sscanf(line, "%llx-%llx ", &a, &b) == 2 && b > a) {
			s = a;
			e = b;
		} else if (strncmp(line, "VmFlags:", 8) == 0 && e > s) {
			char *f = line + 8;
			bool has = false;

			for (char *tok = strtok(f, " "); tok; tok = strtok(NULL, " "))
				has |= strcmp(tok, flag) == 0;
			if (has) {
				struct region r = { s / TRACE_PAGE_SIZE, e / TRACE_PAGE_SIZE, 0, false,
						    false, false };

				g_array_append_val(out, r);
			}
			s = e = 0;
		}
	}
	g_free(text);
	return out;
}

GArray *procfs_anon_ranges(pid_t pid, uint64_t *huge_skipped)
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
		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %n", &s, &e, perms, &ino, &n) < 4 || e < s)
			continue;
		/* no name: an anonymous mapping */
		if (sscanf(line + n, "%255s", name) != 1)
			name[0] = 0;
		if (perms[1] != 'w' || perms[3] != 'p' || ino != 0)
			continue;
		/* anonymous, heap, stacks, named anonymous; not vdso and the like */
		if (name[0] && strcmp(name, "[heap]") && strncmp(name, "[stack", 6) &&
		    strncmp(name, "[anon:", 6))
			continue;
		s /= TRACE_PAGE_SIZE;
		e /= TRACE_PAGE_SIZE;
		if (e - s > HUGE_REGION_PAGES) {
			(*huge_skipped)++;
			continue;
		}
		if (out->len && g_array_index(out, struct region, out->len - 1).u1 == s) {
			g_array_index(out, struct region, out->len - 1).u1 = e;
		} else {
			struct region r = { s, e, 0, false, false, false };

			g_array_append_val(out, r);
		}
	}
	g_free(text);
	return out;
}

bool procfs_merge_any(pid_t pid)
{
	char path[64], *text = NULL;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%d/ksm_stat", (int)pid);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return false;
	yes = strstr(text, "ksm_merge_any: yes") != NULL;
	g_free(text);
	return yes;
}
