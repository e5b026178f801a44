// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The live kernel's KSM files (ksmfs.h), and the session (live.h) that
 * saves, resets and restores every knob around a live command.
 *
 * The live KSM is shared by the whole machine, so every path out of a
 * command that touched it goes through restore_knobs() (restore_after_oom()
 * where the heap ran out); the replay lock records
 * the saved knobs so that a replay killed by SIGKILL is repaired by the next.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "live/ksmfs.h"
#include "live/live.h"
#include "util/signals.h"
#include "util/escape.h"

#define KSMFS_DIR "/sys/kernel/mm/ksm"
#define KSMFS_LOCK "/run/ksmsim-live.lock"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

/*
 * khugepaged's knobs, saved and restored like KSM's: a replay holds it
 * still (it would collapse small pages of a hugepage VMA into a THP at a
 * time of its own, which no trace can say). Written in this order: the
 * write of scan_sleep_millisecs wakes it for one scan of pages_to_scan.
 */
static const struct {
	const char *name;	/* in the lock file */
	const char *path;
	const char *hold;	/* while a replay runs */
} khugepaged_knobs[] = {
	{ "khugepaged/pages_to_scan", THP_DIR "/khugepaged/pages_to_scan", "8" },
	{ "khugepaged/alloc_sleep_millisecs", THP_DIR "/khugepaged/alloc_sleep_millisecs",
	  "4294967295" },
	{ "khugepaged/scan_sleep_millisecs", THP_DIR "/khugepaged/scan_sleep_millisecs",
	  "4294967295" },
};
#define N_KHUGEPAGED G_N_ELEMENTS(khugepaged_knobs)

static bool hold_khugepaged = true;

void live_hold_khugepaged(bool hold)
{
	hold_khugepaged = hold;
}

/* Knob values as the kernel printed them (advisor_mode: the bracketed word). */
struct ksm_saved {
	bool present[KNOB_NR];
	char val[KNOB_NR][32];
	bool khp_present[N_KHUGEPAGED];
	char khp_val[N_KHUGEPAGED][32];
};

struct live_session {
	int lock_fd;
	struct ksm_saved saved;
};

/* A KSM knob's name, or an absolute path for another one. */
static char *knob_path(const char *name)
{
	return name[0] == '/' ? g_strdup(name) : g_strdup_printf(KSMFS_DIR "/%s", name);
}

/* A number the kernel printed in decimal. */
static bool proc_u64(const char *text, uint64_t *v)
{
	guint64 u;

	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &u, NULL))
		return false;
	*v = u;
	return true;
}

static bool proc_s64(const char *text, int64_t *v)
{
	gint64 i;

	if (!g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &i, NULL))
		return false;
	*v = i;
	return true;
}

static bool ksmfs_read(const char *name, char *buf, size_t cap, GError **error)
{
	char *path = knob_path(name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		do
			n = read(fd, buf, cap - 1);
		while (n < 0 && errno == EINTR);
		close(fd);
	}
	if (n < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: cannot read: %s", path, g_strerror(errno));
		g_free(path);
		return false;
	}
	g_free(path);
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return true;
}

static bool read_u64(const char *name, uint64_t *v, GError **error)
{
	char buf[64];

	if (!ksmfs_read(name, buf, sizeof(buf), error))
		return false;
	if (!proc_u64(buf, v)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    KSMFS_DIR "/%s: not a number: '%s'", name, buf);
		return false;
	}
	return true;
}

static bool read_s64(const char *name, int64_t *v, GError **error)
{
	char buf[64];

	if (!ksmfs_read(name, buf, sizeof(buf), error))
		return false;
	if (!proc_s64(buf, v)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    KSMFS_DIR "/%s: not a number: '%s'", name, buf);
		return false;
	}
	return true;
}

bool ksmfs_write(const char *name, const char *value, GError **error)
{
	char *path = knob_path(name);
	size_t len = strlen(value);
	ssize_t n = -1;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = write(fd, value, len);
		if (n >= 0 && (size_t)n != len) {
			n = -1;
			errno = EIO;
		}
		int saved = errno;
		close(fd);
		errno = saved;
	}
	if (n < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "the kernel refused %s=%s: %s", name, value, g_strerror(errno));
		g_free(path);
		return false;
	}
	g_free(path);
	return true;
}

static void knob_text(enum ksm_knob knob, uint64_t value, char *buf, size_t cap)
{
	if (knob == KNOB_ADVISOR_MODE)
		g_strlcpy(buf, value == ADVISOR_SCAN_TIME ? "scan-time" : "none", cap);
	else
		g_snprintf(buf, cap, "%" G_GUINT64_FORMAT, (guint64)value);
}

bool ksmfs_write_knob(enum ksm_knob knob, uint64_t value, GError **error)
{
	char buf[32];

	knob_text(knob, value, buf, sizeof(buf));
	return ksmfs_write(knob_table[knob].name, buf, error);
}

static bool read_vmstat(const char *key, uint64_t *v, GError **error)
{
	FILE *f = fopen("/proc/vmstat", "re");
	char name[64];
	unsigned long long val;
	bool found = false;

	if (!f) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "/proc/vmstat: %s", g_strerror(errno));
		return false;
	}
	while (fscanf(f, "%63s %llu", name, &val) == 2) {
		if (strcmp(name, key) == 0) {
			*v = val;
			found = true;
			break;
		}
	}
	fclose(f);
	if (!found)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "/proc/vmstat has no %s", key);
	return found;
}

bool ksmfs_read_column(enum marks_col col, uint64_t *v, GError **error)
{
	g_assert(marks_columns[col].source == MARKS_SYSFS && marks_columns[col].kind == MARKS_U64);
	return read_u64(marks_columns[col].name, v, error);
}

bool ksmfs_has_column(enum marks_col col)
{
	char *path = knob_path(marks_columns[col].name);
	bool has = access(path, F_OK) == 0;

	g_free(path);
	return has;
}

bool ksmfs_has_knob(enum ksm_knob knob)
{
	char *path = knob_path(knob_table[knob].name);
	bool has = access(path, F_OK) == 0;

	g_free(path);
	return has;
}

bool ksmfs_read_counters(struct ksm_counters *c, GError **error)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < MARKS_NR; i++) {
		const struct marks_column *col = &marks_columns[i];
		char *p = (char *)c + col->off;
		bool ok;

		if (col->source == MARKS_VMSTAT)
			ok = read_vmstat(col->name, (uint64_t *)p, error);
		else if (col->source != MARKS_SYSFS || !ksmfs_has_column(i))
			continue;	/* the writer leaves absent columns out */
		else if (col->kind == MARKS_I64)
			ok = read_s64(col->name, (int64_t *)p, error);
		else
			ok = read_u64(col->name, (uint64_t *)p, error);
		if (!ok)
			return false;
	}
	return true;
}

/* ksm_stat's "key value" line: the field's column, or NULL; bools are "key: yes". */
static const struct marks_mm_column *ksm_stat_column(const char *key)
{
	for (size_t i = 0; i < MARKS_MM_NR; i++) {
		const struct marks_mm_column *col = &marks_mm_columns[i];
		size_t n = strlen(col->name);

		if (!strncmp(key, col->name, n) &&
		    !strcmp(key + n, col->kind == MARKS_BOOL ? ":" : ""))
			return col;
	}
	return NULL;
}

/* Stores one "key value" of ksm_stat into st; false: not a number. */
static bool put_stat(const struct marks_mm_column *col, const char *val, struct ksm_mm_stat *st)
{
	char *p = (char *)st + col->off;

	if (col->kind == MARKS_BOOL) {
		*(bool *)p = !strcmp(val, "yes");
		return true;
	}
	if (col->kind == MARKS_I64)
		return proc_s64(val, (int64_t *)p);
	return proc_u64(val, (uint64_t *)p);
}

#define MM_BIT(col) (1u << ((col) - marks_mm_columns))

/* The column ksm_merging_pages: its own /proc file before ksm_stat had it. */
static const struct marks_mm_column *merging_pages_column(void)
{
	return ksm_stat_column("ksm_merging_pages");
}

unsigned ksmfs_ksm_stat_fields(void)
{
	char *text = NULL;
	unsigned fields = 0;

	if (!g_file_get_contents("/proc/self/ksm_stat", &text, NULL, NULL))
		return 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		const struct marks_mm_column *col;
		char key[64], val[32];

		if (sscanf(line, "%63s %31s", key, val) == 2 && (col = ksm_stat_column(key)))
			fields |= MM_BIT(col);
	}
	g_free(text);
	if (!(fields & MM_BIT(merging_pages_column())) &&
	    access("/proc/self/ksm_merging_pages", F_OK) == 0)
		fields |= MM_BIT(merging_pages_column());
	return fields;
}

/* Linux 6.1's ksm_merging_pages: a file of its own holding the number. */
static bool read_merging_pages(pid_t pid, struct ksm_mm_stat *st, GError **error)
{
	char path[64], *text = NULL;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%ld/ksm_merging_pages", (long)pid);
	if (!g_file_get_contents(path, &text, NULL, error))
		return false;
	g_strstrip(text);
	ok = put_stat(merging_pages_column(), text, st);
	if (!ok)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a number: '%s'",
			    path, text);
	g_free(text);
	return ok;
}

bool ksmfs_read_ksm_stat(pid_t pid, unsigned fields, struct ksm_mm_stat *st, GError **error)
{
	char path[64], *text = NULL;
	unsigned seen = 0;
	bool ok = true;

	snprintf(path, sizeof(path), "/proc/%ld/ksm_stat", (long)pid);
	if (!g_file_get_contents(path, &text, NULL, error))
		return false;
	memset(st, 0, sizeof(*st));
	for (char *line = strtok(text, "\n"); line && ok; line = strtok(NULL, "\n")) {
		const struct marks_mm_column *col;
		char key[64], val[32];

		if (sscanf(line, "%63s %31s", key, val) != 2 || !(col = ksm_stat_column(key)))
			continue;
		ok = put_stat(col, val, st);
		seen |= MM_BIT(col);
		if (!ok)
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				    "%s: %s is not a number: '%s'", path, key, val);
	}
	g_free(text);
	if (ok && (fields & MM_BIT(merging_pages_column())) &&
	    !(seen & MM_BIT(merging_pages_column()))) {
		ok = read_merging_pages(pid, st, error);
		seen |= MM_BIT(merging_pages_column());
	}
	if (ok && (seen & fields) != fields) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "%s: not the ksm_stat this tool knows (a field is missing)", path);
		ok = false;
	}
	return ok;
}

/* Root, the directory present and its knobs writable; else *why says what is missing. */
static bool usable(char **why)
{
	char run[32];

	if (geteuid() != 0) {
		*why = g_strdup("live KSM needs root (the knobs in " KSMFS_DIR
				" are root-only)");
		return false;
	}
	if (access(KSMFS_DIR "/run", F_OK) != 0) {
		*why = g_strdup(KSMFS_DIR " is absent: this kernel has no KSM");
		return false;
	}
	/* Rewriting run's own value is a no-op in the kernel: a safe probe. */
	if (!ksmfs_read("run", run, sizeof(run), NULL) ||
	    !ksmfs_write("run", run, NULL)) {
		*why = g_strdup(KSMFS_DIR "/run is not writable here");
		return false;
	}
	return true;
}

static bool save_knobs(struct ksm_saved *s, GError **error)
{
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < KNOB_NR; k++) {
		char buf[64];
		char *path = knob_path(knob_table[k].name);
		bool exists = access(path, F_OK) == 0;

		g_free(path);
		if (!exists)	/* e.g. merge_across_nodes without NUMA */
			continue;
		if (!ksmfs_read(knob_table[k].name, buf, sizeof(buf), error))
			return false;
		if (k == KNOB_ADVISOR_MODE) {
			/* "[none] scan-time": keep the selected word */
			char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;

			if (!open || !close) {
				g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
					    KSMFS_DIR "/advisor_mode: unexpected '%s'", buf);
				return false;
			}
			*close = '\0';
			memmove(buf, open + 1, strlen(open + 1) + 1);
		}
		g_strlcpy(s->val[k], buf, sizeof(s->val[k]));
		s->present[k] = true;
	}
	for (size_t i = 0; i < N_KHUGEPAGED; i++) {
		char buf[64];

		if (access(khugepaged_knobs[i].path, F_OK) != 0)
			continue;	/* no THP in this kernel */
		if (!ksmfs_read(khugepaged_knobs[i].path, buf, sizeof(buf), error))
			return false;
		g_strlcpy(s->khp_val[i], buf, sizeof(s->khp_val[i]));
		s->khp_present[i] = true;
	}
	return true;
}

/* run=2 may be cut short by our own pending signal: retry a few times. */
static bool unmerge_all(GError **error)
{
	GError *err = NULL;

	for (int tries = 0; tries < 20; tries++) {
		g_clear_error(&err);
		if (ksmfs_write("run", "2", &err))
			return true;
		if (!g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_INTR) &&
		    !g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_AGAIN))
			break;
	}
	g_propagate_error(error, err);
	return false;
}

/* One write of a restore: name as ksmfs_write() takes it. */
struct restore_step {
	const char *name, *value;
	bool stop;	/* a failure here ends the restore */
};
#define RESTORE_STEPS (KNOB_NR + 2 + N_KHUGEPAGED)

/*
 * The writes that follow run=2 (unmerge everything): every saved knob in an
 * order the kernel accepts (max_page_sharing and merge_across_nodes while
 * nothing is merged, advisor_mode before pages_to_scan), then run, then
 * khugepaged's. Builds the list only, allocating nothing, so that the
 * out-of-memory exit can replay it too.
 */
static size_t restore_plan(const struct ksm_saved *s, struct restore_step *steps)
{
	static const enum ksm_knob order[] = {
		/* only accepted while nothing is merged: right after run=2 */
		KNOB_MAX_PAGE_SHARING, KNOB_MERGE_ACROSS_NODES,
		KNOB_USE_ZERO_PAGES, KNOB_SMART_SCAN,
		KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS, KNOB_SLEEP_MILLISECS,
		KNOB_ADVISOR_MAX_CPU, KNOB_ADVISOR_MIN_PAGES_TO_SCAN,
		KNOB_ADVISOR_MAX_PAGES_TO_SCAN, KNOB_ADVISOR_TARGET_SCAN_TIME,
		KNOB_PAGES_TO_SCAN,
	};
	size_t n = 0;

	/* pages_to_scan is refused while the advisor runs: turn it off first */
	if (s->present[KNOB_ADVISOR_MODE])
		steps[n++] = (struct restore_step){ "advisor_mode", "none", true };
	for (size_t i = 0; i < G_N_ELEMENTS(order); i++)
		if (s->present[order[i]])
			steps[n++] = (struct restore_step){ knob_table[order[i]].name,
							    s->val[order[i]], false };
	/* switching to scan-time resets pages_to_scan: the advisor owns it then */
	if (s->present[KNOB_ADVISOR_MODE] && strcmp(s->val[KNOB_ADVISOR_MODE], "scan-time") == 0)
		steps[n++] = (struct restore_step){ "advisor_mode", "scan-time", false };
	if (s->present[KNOB_RUN])
		steps[n++] = (struct restore_step){ "run", s->val[KNOB_RUN], false };
	for (size_t i = 0; i < N_KHUGEPAGED; i++)
		if (s->khp_present[i])
			steps[n++] = (struct restore_step){ khugepaged_knobs[i].path,
							    s->khp_val[i], false };
	g_assert(n <= RESTORE_STEPS);
	return n;
}

/*
 * run=2, then restore_plan()'s writes. Tries every knob even after a
 * failure (but where a step says stop); the error names the first one that
 * failed.
 */
static bool restore_knobs(const struct ksm_saved *s, GError **error)
{
	struct restore_step steps[RESTORE_STEPS];
	size_t n = restore_plan(s, steps);
	GError *first = NULL;

	if (!unmerge_all(&first)) {
		g_propagate_prefixed_error(error, first, "cannot unmerge: ");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		GError *err = NULL;

		if (ksmfs_write(steps[i].name, steps[i].value, &err))
			continue;
		if (!first)
			first = err;
		else
			g_error_free(err);
		if (steps[i].stop)
			break;
	}
	if (first) {
		g_propagate_error(error, first);
		return false;
	}
	return true;
}

/* ksmfs_write() with open and write only: for where the heap ran out. */
static bool write_bare(const char *name, const char *value)
{
	static char path[256];
	size_t dir = name[0] == '/' ? 0 : sizeof(KSMFS_DIR);
	size_t len = strlen(name), vlen = strlen(value);

	if (dir + len >= sizeof(path))
		return false;
	memcpy(path, KSMFS_DIR "/", dir);
	memcpy(path + dir, name, len + 1);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = write(fd, value, vlen) == (ssize_t)vlen;
	close(fd);
	return ok;
}

static void lock_release(int fd);

/* The session to put back should the heap run out while it is open. */
static struct live_session *oom_session;

/*
 * restore_knobs() for signals_out_of_memory(): the same writes, allocating
 * nothing. The lock file's record is cleared only when every write took;
 * otherwise the next replay restores from it.
 */
static const char *restore_after_oom(void)
{
	struct live_session *s = oom_session;
	struct restore_step steps[RESTORE_STEPS];
	bool ok = false;

	if (!s)
		return NULL;
	for (int tries = 0; tries < 20 && !ok; tries++) {
		ok = write_bare("run", "2");
		if (!ok && errno != EINTR && errno != EAGAIN)
			break;
	}
	size_t n = ok ? restore_plan(&s->saved, steps) : 0;
	for (size_t i = 0; i < n; i++) {
		if (write_bare(steps[i].name, steps[i].value))
			continue;
		ok = false;
		if (steps[i].stop)
			break;
	}
	if (!ok)
		return "KSM's knobs not all restored (the next `ksmsim live` restores them)";
	lock_release(s->lock_fd);
	return "KSM's knobs restored";
}

/* The trace defaults (knob_table) by way of restore_knobs(): run ends at 0. */
static bool set_defaults(GError **error)
{
	struct ksm_saved d;

	memset(&d, 0, sizeof(d));
	for (int k = 0; k < KNOB_NR; k++) {
		char *path = knob_path(knob_table[k].name);

		d.present[k] = access(path, F_OK) == 0;
		g_free(path);
		knob_text(k, knob_table[k].def, d.val[k], sizeof(d.val[k]));
	}
	for (size_t i = 0; i < N_KHUGEPAGED; i++) {
		d.khp_present[i] = hold_khugepaged && access(khugepaged_knobs[i].path, F_OK) == 0;
		g_strlcpy(d.khp_val[i], khugepaged_knobs[i].hold, sizeof(d.khp_val[i]));
	}
	return restore_knobs(&d, error);
}

/* The first KSM use ksm_stat shows for pid, or NULL. */
static char *ksm_use(const char *pid)
{
	char *path = g_strdup_printf("/proc/%s/ksm_stat", pid), *text = NULL;
	char *use = NULL;

	if (g_file_get_contents(path, &text, NULL, NULL)) {
		char **lines = g_strsplit(text, "\n", -1);

		for (char **l = lines; *l && !use; l++) {
			const struct marks_mm_column *col;
			char key[64], val[64];

			if (sscanf(*l, "%63s %63s", key, val) != 2 || !(col = ksm_stat_column(key)))
				continue;
			/* a count above 0 or a yes; a profit, 0 or not, says nothing */
			if ((col->kind == MARKS_U64 && strcmp(val, "0") != 0) ||
			    (col->kind == MARKS_BOOL && !strcmp(val, "yes")))
				use = g_strdup_printf("%s %s", key, val);
		}
		g_strfreev(lines);
		g_free(text);
	}
	g_free(path);
	return use;
}

/*
 * Processes other than ours that KSM knows about (their ksm_stat shows rmap
 * items, merged pages or mergeable memory) would mix their pages into the
 * counters: the error names the first one.
 */
/* The processes `ksmsim verify` measures: their KSM use is the point, not another user's. */
static GArray *allowed_pids;

void live_allow_pids(const pid_t *pids, size_t n)
{
	if (!allowed_pids)
		allowed_pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
	g_array_set_size(allowed_pids, 0);
	g_array_append_vals(allowed_pids, pids, n);
}

static bool allowed(long pid)
{
	for (guint i = 0; allowed_pids && i < allowed_pids->len; i++)
		if (g_array_index(allowed_pids, pid_t, i) == pid)
			return true;
	return false;
}

bool live_write_knob(enum ksm_knob knob, uint64_t value, GError **error)
{
	return ksmfs_write_knob(knob, value, error);
}

bool live_read_counters(struct ksm_counters *c, GError **error)
{
	return ksmfs_read_counters(c, error);
}

static bool check_idle(GError **error)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool ok = true;

	if (!d) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "/proc: %s", g_strerror(errno));
		return false;
	}
	while (ok && (e = readdir(d))) {
		char *end, *use;
		long pid = strtol(e->d_name, &end, 10);
		bool ours = pid == getpid() || allowed(pid);

		if (*end || end == e->d_name)
			continue;
		if (ours || !(use = ksm_use(e->d_name)))
			continue;
		char *comm_path = g_strdup_printf("/proc/%ld/comm", pid), *comm = NULL;

		if (g_file_get_contents(comm_path, &comm, NULL, NULL))
			g_strchomp(comm);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "KSM is in use by another process: pid %ld (%s) has %s; "
			    "a replay would mix its pages into the counters", pid,
			    comm ? comm : "?", use);
		g_free(comm);
		g_free(comm_path);
		g_free(use);
		ok = false;
	}
	closedir(d);
	return ok;
}

/*
 * The replay lock (flock on KSMFS_LOCK). The file also holds the saved
 * knobs while a replay runs (lock_record), so that a replay killed by
 * SIGKILL is repaired by the next one: *stale returns them (stale->present
 * all false when the last replay ended cleanly).
 */
static int lock_take(struct ksm_saved *stale, GError **error)
{
	int fd = open(KSMFS_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	char buf[4096];
	ssize_t n;

	memset(stale, 0, sizeof(*stale));
	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    KSMFS_LOCK ": %s", g_strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(fd);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    e == EWOULDBLOCK ? "another `ksmsim live` is running (it holds "
			    KSMFS_LOCK ")" : KSMFS_LOCK ": %s", g_strerror(e));
		return -1;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		char **lines = g_strsplit(buf, "\n", -1);

		for (char **l = lines; *l; l++) {
			char *eq = strchr(*l, '=');
			int k;

			if (!eq)
				continue;
			*eq = '\0';
			k = knob_lookup(*l);
			if (k >= 0) {
				g_strlcpy(stale->val[k], eq + 1, sizeof(stale->val[k]));
				stale->present[k] = true;
			}
			for (size_t i = 0; i < N_KHUGEPAGED; i++) {
				if (strcmp(*l, khugepaged_knobs[i].name))
					continue;
				g_strlcpy(stale->khp_val[i], eq + 1, sizeof(stale->khp_val[i]));
				stale->khp_present[i] = true;
			}
		}
		g_strfreev(lines);
	}
	return fd;
}

static void lock_record(int fd, const struct ksm_saved *s)
{
	GString *text = g_string_new(NULL);

	for (int k = 0; k < KNOB_NR; k++)
		if (s->present[k])
			g_string_append_printf(text, "%s=%s\n", knob_table[k].name, s->val[k]);
	for (size_t i = 0; i < N_KHUGEPAGED; i++)
		if (s->khp_present[i])
			g_string_append_printf(text, "%s=%s\n", khugepaged_knobs[i].name,
					       s->khp_val[i]);
	if (ftruncate(fd, 0) == 0 && pwrite(fd, text->str, text->len, 0) == (ssize_t)text->len)
		fdatasync(fd);
	g_string_free(text, TRUE);
}

/* Clears the record: the replay ended cleanly. */
static void lock_release(int fd)
{
	if (fd < 0)
		return;
	if (ftruncate(fd, 0) == 0)
		fdatasync(fd);
	close(fd);
}

bool live_check_usable(GError **error)
{
	char *why = NULL;

	if (!usable(&why)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM, "%s", why);
		g_free(why);
		return false;
	}
	return check_idle(error);
}

bool live_session_end(struct live_session *s, GError **error)
{
	bool ok = restore_knobs(&s->saved, error);

	signals_on_out_of_memory(NULL);
	oom_session = NULL;

	/* keep the record when restoring failed: the next replay retries */
	if (ok)
		lock_release(s->lock_fd);
	else
		close(s->lock_fd);
	g_free(s);
	return ok;
}

struct live_session *live_session_begin(GError **error)
{
	struct live_session *s;
	struct ksm_saved stale;
	char *why = NULL;
	bool have_stale = false;

	if (!usable(&why)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM, "%s", why);
		g_free(why);
		return NULL;
	}
	s = g_new0(struct live_session, 1);
	s->lock_fd = lock_take(&stale, error);
	if (s->lock_fd < 0)
		goto fail;
	for (int k = 0; k < KNOB_NR; k++)
		have_stale |= stale.present[k];
	for (size_t i = 0; i < N_KHUGEPAGED; i++)
		have_stale |= stale.khp_present[i];
	if (!check_idle(error))
		goto fail;
	if (have_stale) {
		/* the knobs now are that replay's, the owner's are in the lock file */
		reportf("ksmsim live", "a previous replay was killed before it could "
			"restore KSM; its saved knobs will be restored at the end");
		s->saved = stale;
	} else if (!save_knobs(&s->saved, error)) {
		goto fail;
	} else {
		lock_record(s->lock_fd, &s->saved);
	}
	oom_session = s;
	signals_on_out_of_memory(restore_after_oom);
	signals_install(SIGNALS_DEFER);
	/* A dead child shows up as EPIPE on its pipe, not as a fatal signal. */
	signal(SIGPIPE, SIG_IGN);
	if (!set_defaults(error)) {
		GError *err = NULL;

		live_session_end(s, &err);
		g_clear_error(&err);
		return NULL;
	}
	return s;
fail:
	/* a killed replay's record stays for the next attempt to restore */
	if (have_stale)
		close(s->lock_fd);
	else
		lock_release(s->lock_fd);
	g_free(s);
	return NULL;
}
