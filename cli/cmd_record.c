// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim record: the command line around the recorder (workloads/record/
 * record.h). Here: the options, COMMAND's start, the interval clock, the
 * signals and the report; there: following the tree and writing the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "traces/check.h"
#include "traces/writer.h"
#include "util/options.h"
#include "util/parse.h"
#include "util/progress.h"
#include "util/signals.h"
#include "workloads/record/record.h"
#include "workloads/record/shim.h"

#define PROG "ksmsim record"
/* The default interval of an attached capture, by how written pages are found. */
#define RECORD_ATTACHED_COMPARE_MS 10000
#define RECORD_ATTACHED_MS 1000

struct record_opts {
	const char *out, *vm_name;
	uint64_t interval_ms, mark_every;
	bool interval_given;	/* else 100 ms for COMMAND, attached: by detector (below) */
	double max_seconds;
	bool baseline, quiet, force_progress;
	enum record_find find;
	enum record_scope scope;
	bool scope_given;	/* else advised with --as-vm or attached, all otherwise */
	enum record_content content;
	bool content_given;	/* else digest when attached, bytes otherwise */
	char *shim;		/* pagemap-scan: the shim's absolute path, preloaded into COMMAND */
	/* attached: the running processes (--pid) or a cgroup (--cgroup), not COMMAND */
	GArray *pids;		/* pid_t, no repeats; NULL without --pid */
	const char *pid_arg;	/* --pid as given, for the trace's comment */
	const char *cgroup;
	double max_cpu;		/* percent of one CPU; 0: no cap */
	char *find_note;	/* auto's fallback, said once the recording starts (g_free) */
	struct cli_once once;	/* the options given */
	bool help;
};

static bool attached(const struct record_opts *o)
{
	return o->pids || o->cgroup;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The options (cli/opt_table.c): -o, -i and -h have short forms; the
 * others' vals are above the letters. CLI_OWN rows: their words, below.
 */
enum {
	OPT_AS_VM = 256, OPT_MAX_SECONDS, OPT_MARK_EVERY, OPT_BASELINE, OPT_FIND, OPT_SCOPE,
	OPT_PID, OPT_CGROUP, OPT_CONTENT, OPT_MAX_CPU, OPT_PROGRESS, OPT_QUIET,
};
#define AT(f) offsetof(struct record_opts, f)
static const struct cli_opt rows[] = {
	{ "output", 'o', CLI_STR, "FILE", AT(out),
	  .help = "the trace; .ksmb binary, .gz gzip text, else text" },
	{ "pid", OPT_PID, CLI_OWN, "PID[,PID...]",
	  .help = "attach to these running processes and follow\n"
		  "their children (one mm each, COMM.PID); one that\n"
		  "exits during the capture gets an exit record" },
	{ "cgroup", OPT_CGROUP, CLI_STR, "DIR", AT(cgroup),
	  .help = "attach to every process of the cgroup v2 directory\n"
		  "DIR and of the cgroups below it, as they join,\n"
		  "fork, leave and exit (one that leaves or exits gets\n"
		  "an exit record); ends when DIR is removed" },
	{ "max-cpu", OPT_MAX_CPU, CLI_DOUBLE, "PCT", AT(max_cpu), .dmin = 0, .dmax = 100,
	  .dmin_open = true, .wants = "a percentage of one CPU, more than 0 and at most 100",
	  .help = "cap the recorder's own CPU time at PCT percent of one\n"
		  "CPU (0-100, more than 0): it sleeps whenever it has\n"
		  "used more, so a capture can take longer than an\n"
		  "interval; each interval it could not cover in full\n"
		  "is a line on standard error (covered = interval /\n"
		  "time the capture took), the report sums them up;\n"
		  "with it or attached, at --max-seconds a capture\n"
		  "still going is cut short (the pages it has not read\n"
		  "are left out) and the last one gets one interval,\n"
		  "so the recording ends on time" },
	{ "interval-ms", 'i', CLI_U64, "N", AT(interval_ms), .min = 1, .max = 3600000,
	  .help = "capture interval (default 100; attached: 10000 when\n"
		  "comparing, 1000 with soft-dirty). What it costs the\n"
		  "recorder, comparing (it reads every page in scope\n"
		  "every interval), on three 330 MiB services (AMD\n"
		  "EPYC, workloads/real/record_cost.sh): 4.1% of one\n"
		  "CPU over 60 s at the default (0.33 s an interval,\n"
		  "and 0.5 s once for the first snapshot), 7.1% at\n"
		  "5000, 37% at 1000; soft-dirty reads only the\n"
		  "pagemap and the pages written (not measured: the\n"
		  "reference kernel has no soft-dirty)" },
	{ "as-vm", OPT_AS_VM, CLI_STR, "NAME", AT(vm_name),
	  .help = "fold every process into one address space NAME, as\n"
		  "inside a guest (default: one mm per process,\n"
		  "named COMM.PID)" },
	{ "max-seconds", OPT_MAX_SECONDS, CLI_DOUBLE, "N", AT(max_seconds), .dmin = 0,
	  .dmax = HUGE_VAL, .dmin_open = true, .wants = "seconds, more than 0",
	  .help = "stop after N seconds: capture once more, then end\n"
		  "the trace and terminate COMMAND's process group\n"
		  "(attached processes are let go, running)" },
	{ "mark-every", OPT_MARK_EVERY, CLI_U64, "N", AT(mark_every), .min = 1, .max = UINT64_MAX,
	  .wants = "intervals, at least 1",
	  .help = "a mark record every N intervals (default 10)" },
	{ "baseline", OPT_BASELINE, CLI_FLAG, NULL, AT(baseline),
	  .help = "run COMMAND once without recording first, to report\n"
		  "the capture overhead on its wall time" },
	{ "scope", OPT_SCOPE, CLI_OWN, "SCOPE",
	  .help = "which mappings are recorded (pages outside it are\n"
		  "never read nor written to the trace):\n"
		  "advised  what KSM would scan: the ranges each process\n"
		  "  advised MADV_MERGEABLE, followed as the advice\n"
		  "  changes, or all of a process that set\n"
		  "  prctl(PR_SET_MEMORY_MERGE); for QEMU with\n"
		  "  mem-merge=on guest RAM, not its heap or TCG\n"
		  "  buffer. Default with --as-vm, --pid, --cgroup\n"
		  "all      every anonymous private writable mapping,\n"
		  "  as if COMMAND ran under prctl(PR_SET_MEMORY_MERGE):\n"
		  "  what KSM would see if turned on for a program that\n"
		  "  never advises. Default for COMMAND without --as-vm" },
	{ "content", OPT_CONTENT, CLI_OWN, "FORM",
	  .help = "how a page that is not zero or one repeated byte is\n"
		  "stored: bytes (default for COMMAND) its 4096 bytes,\n"
		  "each distinct page once; digest (default with --pid,\n"
		  "--cgroup) its 128-bit XXH3 digest (digest:<hex>,\n"
		  "trace version 4): 16 bytes a page however many\n"
		  "distinct pages, so a host-size capture stays small;\n"
		  "equal digests replay as equal pages, but checksum\n"
		  "false positives cannot be studied on the trace\n"
		  "(collide ksm refuses it)" },
	{ "find", OPT_FIND, CLI_OWN, "MODE",
	  .help = "how written pages are found (every store is seen but by\n"
		  "compare):\n"
		  "pagemap-scan  Linux 6.7+: the shim " SHIM_NAME "\n"
		  "  (installed in LIBEXECDIR/ksmsim, or\n"
		  "  KSMSIM_RECORD_SHIM) is preloaded\n"
		  "  into COMMAND's processes and leaves each one's\n"
		  "  userfaultfd at fd " G_STRINGIFY(SHIM_UFFD_FD) "; ranges are registered for\n"
		  "  async write-protect and PAGEMAP_SCAN returns the\n"
		  "  pages written since the last interval; a process\n"
		  "  without that fd (static, or the shim did not run)\n"
		  "  is recorded by compare: a fallback\n"
		  "soft-dirty    clear_refs and pagemap bit 55\n"
		  "  (CONFIG_MEM_SOFT_DIRTY)\n"
		  "compare       read every present page each interval\n"
		  "  and keep those whose bytes changed: costs the most\n"
		  "  CPU and misses stores of the same bytes\n"
		  "auto          (default) the first of these that works\n"
		  "  (attached: soft-dirty, else compare)" },
	{ "progress", OPT_PROGRESS, CLI_FLAG, NULL, AT(force_progress),
	  .help = "progress on standard error (intervals, page writes,\n"
		  "percent of --max-seconds) even when it is not a\n"
		  "terminal; by default shown on a terminal" },
	{ "quiet", OPT_QUIET, CLI_FLAG, NULL, AT(quiet), .help = "no progress" },
	{ "help", 'h', CLI_FLAG, NULL, AT(help), .stops = true, .help = "show this help" },
};

static int usage(FILE *out)
{
	fprintf(out,
		"usage: ksmsim record [--interval-ms N] [--as-vm NAME] [--max-seconds N]\n"
		"                     [--mark-every N] [--baseline] [--find MODE]\n"
		"                     [--scope advised|all] [--content bytes|digest] [--max-cpu PCT]\n"
		"                     [--progress | --quiet]\n"
		"                     -o FILE -- COMMAND [ARG...]\n"
		"       ksmsim record --pid PID[,PID...] | --cgroup DIR [options] -o FILE\n"
		"\n"
		"Run COMMAND (as root) and record the page writes of its whole process tree as\n"
		"a trace (ksmtrace version 3; 4 with --content digest), or attach to processes\n"
		"already running (--pid,\n"
		"--cgroup) and record them the same way: every interval, the pages of\n"
		"anonymous private writable mappings written since the last one (see\n"
		"--find) are read and\n"
		"written to the trace with their exact bytes; each distinct page is stored\n"
		"once. New and vanished mappings become map/unmap, exited processes exit.\n"
		"Which ranges are captured is the scope (--scope); every captured range is\n"
		"advised mergeable, one that leaves the scope unmergeable. A range the\n"
		"process advised MADV_HUGEPAGE (QEMU's guest RAM) is also advised hugepage,\n"
		"at trace pages that keep its alignment in 2 MiB, so a replay faults THPs\n"
		"where the kernel did. The trace starts with 'set run 1'; its opening\n"
		"comment names the scope.\n"
		"\n"
		"Attached processes (--pid, --cgroup) are not started, stopped, signalled or\n"
		"traced: the capture runs until --max-seconds, SIGINT/SIGTERM or until\n"
		"none is left, then lets go of them, running as they were. Their written\n"
		"pages are found by soft-dirty bits (else by comparing: pagemap-scan needs a\n"
		"userfaultfd the process itself made); the soft-dirty bits are not set back\n"
		"(the kernel has no way to), so do not record a process whose soft-dirty\n"
		"bits someone else uses (CRIU pre-dump). Soft-dirty costs the process one\n"
		"minor fault per page (per THP) it writes in an interval; comparing costs it\n"
		"no fault, but the recorder reads every page in the scope every interval\n"
		"(--max-cpu caps what that takes).\n"
		"\n"
		"Options:\n");
	cli_opts_help(out, rows, G_N_ELEMENTS(rows), NULL, 24);
	fprintf(out,
		"\n"
		"The report has a detector line: its name, the pages it reported\n"
		"(written; for compare, changed), for pagemap-scan the processes it tracked\n"
		"and those that fell back to compare, its CPU time (finding the pages, not\n"
		"reading them or writing the trace) and the whole recorder's CPU time.\n"
		"\n"
		"COMMAND runs in its own process group. SIGINT/SIGTERM end the capture after\n"
		"the current interval; the trace is closed properly and replays, and the\n"
		"signal is passed on to COMMAND's process group (exit 130/143).\n"
		"Attached, they only end the capture (exit 130/143); the processes run on.\n"
		"Exit status: 0 recorded (whatever COMMAND's status), 1 COMMAND ended before\n"
		"anything was captured (attached: no page was captured), 2 bad usage, not\n"
		"root, COMMAND not found, a --pid that does not exist or cannot be read, a\n"
		"--cgroup that is not a cgroup v2 directory, the --find MODE asked for not\n"
		"available, an error writing the trace, or out of memory (COMMAND's process\n"
		"group gets SIGTERM, SIGKILL after 3 s; attached processes are left alone;\n"
		"the unfinished trace is removed).\n");
	return out == stdout ? 0 : EXIT_USAGE;
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
static pid_t start_command(char **argv, const char *shim, int *err)
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
		if (shim) {
			/* ours first; the environment carries it to the whole tree */
			const char *old = getenv("LD_PRELOAD");
			char *pre = old && *old ? g_strdup_printf("%s:%s", shim, old) : g_strdup(shim);

			setenv("LD_PRELOAD", pre, 1);
			setenv(SHIM_ENV, "1", 1);
		}
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
	pid_t pid = start_command(argv, NULL, &err);

	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return now_s() - t0;
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


/* --pid PID[,PID...]: decimal ids from 1, repeats dropped; false when malformed. */
static bool parse_pids(const char *arg, struct record_opts *o)
{
	char **parts = g_strsplit(arg, ",", -1);
	bool ok = parts[0] != NULL;

	if (o->pids)
		g_array_free(o->pids, TRUE);
	o->pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
	o->pid_arg = arg;
	for (int i = 0; ok && parts[i]; i++) {
		uint64_t v;
		bool dup = false;

		ok = parse_u64(parts[i], INT32_MAX, &v) && v >= 1;
		for (guint j = 0; ok && j < o->pids->len; j++)
			dup |= g_array_index(o->pids, pid_t, j) == (pid_t)v;
		if (ok && !dup)
			g_array_append_val(o->pids, ((pid_t){ (pid_t)v }));
	}
	g_strfreev(parts);
	return ok;
}

/* A CLI_OWN row's value (--find, --scope, --content, --pid): -1 to go on, else EXIT_USAGE. */
static int take_own(int c, const char *arg, struct record_opts *o)
{
	static const char *const finds[] = {
		[RECORD_FIND_AUTO] = "auto", [RECORD_FIND_PAGEMAP_SCAN] = "pagemap-scan",
		[RECORD_FIND_SOFT_DIRTY] = "soft-dirty", [RECORD_FIND_COMPARE] = "compare",
	};
	size_t i;

	switch (c) {
	case OPT_FIND:
		for (i = 0; i < G_N_ELEMENTS(finds) && strcmp(arg, finds[i]); i++)
			;
		if (i == G_N_ELEMENTS(finds))
			return cli_usage_error(PROG, "--find", "auto, pagemap-scan, soft-dirty or compare",
					       arg);
		o->find = (enum record_find)i;
		break;
	case OPT_SCOPE:
		if (strcmp(arg, "advised") && strcmp(arg, "all"))
			return cli_usage_error(PROG, "--scope", "advised or all", arg);
		o->scope = strcmp(arg, "all") ? RECORD_SCOPE_ADVISED : RECORD_SCOPE_ALL;
		o->scope_given = true;
		break;
	case OPT_CONTENT:
		if (strcmp(arg, "bytes") && strcmp(arg, "digest"))
			return cli_usage_error(PROG, "--content", "bytes or digest", arg);
		o->content = strcmp(arg, "digest") ? RECORD_CONTENT_BYTES : RECORD_CONTENT_DIGEST;
		o->content_given = true;
		break;
	case OPT_PID:
		if (!parse_pids(arg, o))
			return cli_usage_error(PROG, "--pid", "process ids, comma-separated", arg);
		break;
	}
	return -1;
}

/* cli_parse's view of take_own: 1 taken, -1 refused after one line. */
static int own(void *base, int c, const char *arg)
{
	return take_own(c, arg, base) < 0 ? 1 : -1;
}

/* An option just taken: -1 to go on, else EXIT_USAGE after one line. */
static int check(void *base, int c, const char *arg)
{
	struct record_opts *o = base;

	if (c == 'i')
		o->interval_given = true;
	else if (c == OPT_AS_VM && !trace_name_valid(o->vm_name, strlen(o->vm_name)))
		return cli_usage_error(PROG, "--as-vm",
				       "a name of 1-64 characters of A-Z a-z 0-9 _ . -", arg);
	return -1;
}

/* The options up to COMMAND; -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	const struct cli_parser p = { .prog = PROG, .rows = rows, .n = G_N_ELEMENTS(rows),
				      .base = o, .once = &o->once, .own = own, .check = check,
				      .in_order = true };
	int status = cli_parse(&p, argc, argv);

	return status == 0 ? usage(stdout) : status;	/* 0: --help */
}

/*
 * The shim: KSMSIM_RECORD_SHIM, else where meson install puts it (LIBEXECDIR/
 * ksmsim, first relative to this executable, then absolute), else beside
 * it, else in the build tree (cli/ksmsim next to workloads/record/). An
 * absolute path, or NULL.
 */
#ifndef KSMSIM_LIBEXEC_REL
#define KSMSIM_LIBEXEC_REL "../libexec/ksmsim"
#endif
#ifndef KSMSIM_LIBEXEC_ABS
#define KSMSIM_LIBEXEC_ABS "/usr/local/libexec/ksmsim"
#endif
static char *find_shim(void)
{
	const char *env = getenv("KSMSIM_RECORD_SHIM");
	char *exe = g_file_read_link("/proc/self/exe", NULL), *dir, *found = NULL;
	char *cand[5] = { NULL, NULL, NULL, NULL, NULL };

	if (env && *env) {
		cand[0] = g_strdup(env);
	} else if (exe) {
		dir = g_path_get_dirname(exe);
		cand[0] = g_build_filename(dir, KSMSIM_LIBEXEC_REL, SHIM_NAME, NULL);
		cand[1] = g_build_filename(KSMSIM_LIBEXEC_ABS, SHIM_NAME, NULL);
		cand[2] = g_build_filename(dir, SHIM_NAME, NULL);
		cand[3] = g_build_filename(dir, "..", "workloads", "record", SHIM_NAME, NULL);
		g_free(dir);
	}
	for (int i = 0; i < 5 && cand[i] && !found; i++) {
		char *real = realpath(cand[i], NULL);

		/* LD_PRELOAD splits on blanks and colons */
		if (real && access(real, R_OK) == 0 && !strpbrk(real, " \t:"))
			found = g_strdup(real);
		free(real);
	}
	for (int i = 0; i < 5; i++)
		g_free(cand[i]);
	g_free(exe);
	return found;
}

/* Resolves --find: the mode asked for, or auto's pick; -1 to go on, else the exit status. */
static int choose_find(struct record_opts *o)
{
	const char *why = NULL;

	if (attached(o) && o->find == RECORD_FIND_PAGEMAP_SCAN) {
		cli_error(PROG, "--find pagemap-scan is not available for %s: it "
			"needs a userfaultfd made by each recorded process itself (the shim does that "
			"in COMMAND); use soft-dirty or compare", o->pids ? "--pid" : "--cgroup");
		return EXIT_USAGE;
	}
	if (!attached(o) && (o->find == RECORD_FIND_AUTO || o->find == RECORD_FIND_PAGEMAP_SCAN)) {
		o->shim = find_shim();
		if (record_pagemap_scan_works(o->shim, &why)) {
			o->find = RECORD_FIND_PAGEMAP_SCAN;
			return -1;
		}
		g_clear_pointer(&o->shim, g_free);
		if (o->find == RECORD_FIND_PAGEMAP_SCAN) {
			cli_error(PROG, "--find pagemap-scan is not available here: %s",
				why);
			return EXIT_USAGE;
		}
	}
	if (o->find == RECORD_FIND_COMPARE)
		return -1;
	if (record_soft_dirty_works()) {
		o->find = RECORD_FIND_SOFT_DIRTY;
		return -1;
	}
	if (o->find == RECORD_FIND_SOFT_DIRTY) {
		cli_error(PROG, "soft-dirty page tracking is not available here "
			"(needs CONFIG_MEM_SOFT_DIRTY: /proc/PID/clear_refs '4', pagemap bit 55)");
		return EXIT_USAGE;
	}
	/* said once the recording starts: a refusal after this is the one line */
	if (attached(o))
		o->find_note = g_strdup("no soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY) here "
			"and PAGEMAP_SCAN cannot serve attached processes; finding written pages by "
			"comparing their bytes (--find compare)");
	else
		o->find_note = g_strdup_printf("no PAGEMAP_SCAN write tracking (%s) and no "
			"soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY) here; finding written pages by "
			"comparing their bytes (--find compare)", why);
	o->find = RECORD_FIND_COMPARE;
	return -1;
}

/* What must hold before anything runs; -1 to go on, else the exit status. */
static int check_setup(char **cmd, int ncmd, struct record_opts *o)
{
	int ret;

	if (!o->out) {
		cli_error(PROG, "-o FILE is required");
		return EXIT_USAGE;
	}
	if (o->pids && o->cgroup) {
		cli_error(PROG, "--pid and --cgroup exclude each other");
		return EXIT_USAGE;
	}
	if (attached(o) && ncmd > 0) {
		cli_error(PROG, "%s and a COMMAND exclude each other",
			o->pids ? "--pid" : "--cgroup");
		return EXIT_USAGE;
	}
	if (attached(o) && o->baseline) {
		cli_error(PROG, "--baseline needs a COMMAND to run, not %s",
			o->pids ? "--pid" : "--cgroup");
		return EXIT_USAGE;
	}
	if (!attached(o) && ncmd < 1) {
		cli_error(PROG, "no COMMAND (usage: ksmsim record -o FILE -- COMMAND..., "
			"or --pid PID, or --cgroup DIR)");
		return EXIT_USAGE;
	}
	if (strcmp(o->out, "-") == 0) {
		cli_error(PROG, "-o must name a file (COMMAND may use standard output)");
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		cli_error(PROG, "must run as root: it reads /proc/PID/pagemap, "
			"/proc/PID/mem and writes /proc/PID/clear_refs of every process %s",
			attached(o) ? "it attaches to" : "of COMMAND");
		return EXIT_USAGE;
	}
	if (!attached(o) && !command_exists(cmd[0])) {
		cli_error(PROG, "%s: command not found", cmd[0]);
		return EXIT_USAGE;
	}
	struct stat st;
	if (o->cgroup && stat(o->cgroup, &st) != 0)
		return cli_error(PROG, "--cgroup %s: %s", o->cgroup, g_strerror(errno));
	if (o->cgroup && !record_cgroup_check(o->cgroup))
		return cli_error(PROG, "--cgroup %s: not a cgroup v2 directory (a directory under"
				 " a cgroup2 mount, such as /sys/fs/cgroup/...)", o->cgroup);
	ret = choose_find(o);
	/*
	 * Attached, comparing reads every page in scope every interval: 0.33 s
	 * of CPU an interval for three 330 MiB services (workloads/README.md,
	 * "What recording costs"), so 10 s keeps the recorder under 5% of one
	 * CPU; soft-dirty reads only the pagemap and the pages written.
	 */
	if (ret < 0 && attached(o) && !o->interval_given)
		o->interval_ms = o->find == RECORD_FIND_COMPARE ? RECORD_ATTACHED_COMPARE_MS :
			RECORD_ATTACHED_MS;
	for (guint i = 0; ret < 0 && o->pids && i < o->pids->len; i++) {
		pid_t pid = g_array_index(o->pids, pid_t, i);
		char why[160];

		if (!record_attach_check(pid, o->find, why, sizeof(why))) {
			cli_error(PROG, "--pid %d: %s", (int)pid, why);
			ret = EXIT_USAGE;
		}
	}
	return ret;
}

static const char *find_text(enum record_find mode)
{
	switch (mode) {
	case RECORD_FIND_PAGEMAP_SCAN:
		return "PAGEMAP_SCAN over userfaultfd async write-protect (a process without "
		       "the shim's fd: comparing bytes)";
	case RECORD_FIND_SOFT_DIRTY:
		return "soft-dirty bits";
	default:
		return "comparing bytes";
	}
}

/* The trace's opening comment: how it was recorded. */
static void comment_setup(trace_writer *w, char **cmd, int ncmd, const struct record_opts *o)
{
	GString *cmdline = g_string_new("recorded by ksmsim record:");

	if (o->pids)
		g_string_append_printf(cmdline, " attached to --pid %s (and their children)",
				       o->pid_arg);
	else if (o->cgroup)
		g_string_append_printf(cmdline, " attached to the processes of --cgroup %s",
				       o->cgroup);
	for (int i = 0; i < ncmd; i++)
		g_string_append_printf(cmdline, " %s", cmd[i]);
	g_string_append_printf(cmdline, "\ninterval %" G_GUINT64_FORMAT " ms; written pages "
			       "found by %s; %s", o->interval_ms, find_text(o->find), o->vm_name ?
			       "all processes in one mm (--as-vm)" : "one mm per process (COMM.PID)");
	/* for tools: blank-separated key=value words, like gen's line */
	g_string_append_printf(cmdline, "\nscope %s: %s", record_scope_name(o->scope),
			       o->scope == RECORD_SCOPE_ADVISED ?
			       "the ranges KSM would scan (advised MADV_MERGEABLE, or merge-any)" :
			       "every anonymous private writable mapping, advised mergeable here");
	g_string_append_printf(cmdline, "\nksmsim record: detector=%s interval_ms=%" G_GUINT64_FORMAT
			       " scope=%s content=%s", record_find_name(o->find), o->interval_ms,
			       record_scope_name(o->scope), record_content_name(o->content));
	trace_writer_comment(w, cmdline->str, NULL);
	g_string_free(cmdline, TRUE);
}

/* How far the captures kept up with the interval (--max-cpu). */
struct coverage {
	uint64_t intervals, full;
	double sum, low;	/* of the fractions covered */
};

/*
 * One capture of took seconds: it covered the interval in full when it took
 * no longer, else the fraction interval / took (the next capture is that
 * much late, so the trace's resolution is that much coarser). With
 * --max-cpu each short one is a line.
 */
static void cover_interval(struct coverage *cov, const struct record_opts *o, uint64_t n,
			   double at, double took, double slept)
{
	double iv = o->interval_ms / 1e3, f = took > iv ? iv / took : 1;

	if (cov->intervals++ == 0 || f < cov->low)
		cov->low = f;
	cov->sum += f;
	if (f >= 1) {
		cov->full++;
		return;
	}
	if (o->max_cpu > 0)
		cli_error(PROG, "interval %" G_GUINT64_FORMAT " at %.2f s: covered "
			"%.0f%% (its capture took %.2f s for a %.2f s interval, %.2f s of it asleep "
			"under --max-cpu %g)", n, at, 100 * f, took, iv, slept, o->max_cpu);
}

/* Captures every interval until the tree is done, a signal, the time limit or a stop. */
static void record_loop(struct recorder *rc, const struct record_opts *o, double t_start,
			struct coverage *cov)
{
	const struct record_stats *st = recorder_stats(rc);
	struct progress *progress;
	double next = t_start;

	progress = progress_new(PROG, o->quiet ? PROGRESS_NEVER :
				o->force_progress ? PROGRESS_ALWAYS : PROGRESS_AUTO);
	progress_phase(progress, "recording", "page writes");
	for (;;) {
		bool last = signals_caught() || recorder_stopped(rc);
		double c0 = now_s(), slept0 = st->throttled_s;

		if (o->max_seconds > 0 && now_s() - t_start >= o->max_seconds)
			last = true;
		/*
		 * Attached or capped, --max-seconds is kept: a capture still going
		 * then is cut, and the last one gets one interval
		 */
		if ((attached(o) || o->max_cpu > 0) && o->max_seconds > 0)
			recorder_set_deadline(rc, last ? o->interval_ms / 1e3 :
					      t_start + o->max_seconds - now_s());
		recorder_capture(rc, (uint64_t)((now_s() - t_start) * 1e6));
		cover_interval(cov, o, st->intervals, c0 - t_start, now_s() - c0,
			       st->throttled_s - slept0);
		if (recorder_full(rc))
			cli_error(PROG, "%s: more than 2^32 pages of mappings seen "
				"(vpns are never reused); capture stopped", recorder_full(rc));
		if (st->intervals % o->mark_every == 0) {
			char label[32];

			snprintf(label, sizeof(label), "i%" G_GUINT64_FORMAT, st->intervals);
			recorder_mark(rc, label);
		}
		/* the fraction done is known only with a time limit */
		progress_update(progress, st->pages, (uint64_t)((now_s() - t_start) * 1000),
				o->max_seconds > 0 ? (uint64_t)(o->max_seconds * 1000) : 0);
		if (recorder_cut(rc))
			cli_error(PROG, "interval %" G_GUINT64_FORMAT " was cut short "
				"at --max-seconds: the pages it had not read yet are not in it",
				st->intervals);
		if (last || recorder_stopped(rc) || recorder_tree_done(rc))
			break;
		next += o->interval_ms / 1e3;
		if (next < now_s())
			next = now_s();	/* capture took longer than an interval: no catching up */
		sleep_until(next);
	}
	progress_finish(progress);
	progress_free(progress);
}

/* The detector's line: what found the pages, how many, at what CPU cost. */
static void report_detector(const struct record_stats *rs, const struct record_opts *o)
{
	struct rusage ru;
	double cpu = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		      ru.ru_stime.tv_usec / 1e6;
	GString *line = g_string_new(NULL);

	g_string_printf(line, "detector %s: %" G_GUINT64_FORMAT " pages reported %s",
			record_find_name(o->find), rs->detected,
			o->find == RECORD_FIND_COMPARE ? "changed" : "written");
	if (o->find == RECORD_FIND_PAGEMAP_SCAN)
		g_string_append_printf(line, ", %" G_GUINT64_FORMAT " process%s tracked, %"
				       G_GUINT64_FORMAT " fallbacks to compare", rs->uffd_procs,
				       rs->uffd_procs == 1 ? "" : "es", rs->fallbacks);
	g_string_append_printf(line, ", detector CPU %.3f s, recorder CPU %.3f s",
			       rs->detector_cpu_s, cpu);
	cli_notice(PROG, "%s", line->str);
	g_string_free(line, TRUE);
}

/* --max-cpu: the recorder's CPU against the cap, and how far it kept up. */
static void report_cap(const struct record_opts *o, const struct coverage *cov,
		       const struct record_stats *rs, double wall)
{
	struct rusage ru;
	double cpu = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		      ru.ru_stime.tv_usec / 1e6;
	cli_notice(PROG, "--max-cpu %g%%: the recorder used %.1f%% of one CPU "
		"(%.2f s in %.2f s), slept %.2f s under the cap; %" G_GUINT64_FORMAT " of %"
		G_GUINT64_FORMAT " intervals covered in full, mean coverage %.0f%%, lowest %.0f%%",
		o->max_cpu, wall > 0 ? 100 * cpu / wall : 0, cpu, wall, rs->throttled_s, cov->full,
		cov->intervals, cov->intervals ? 100 * cov->sum / cov->intervals : 100,
		cov->intervals ? 100 * cov->low : 100);
}

static void report(const struct recorder *rc, const char *cmd, const struct record_opts *o,
		   uint64_t blobs, double wall, double baseline)
{
	const struct record_stats *rs = recorder_stats(rc);
	char *written = human_bytes(rs->pages * 4096.0), *size;
	struct stat st;
	int status;

	if (stat(o->out, &st) != 0)
		st.st_size = 0;
	size = human_bytes(st.st_size);
	if (recorder_root_status(rc, &status) && WIFEXITED(status))
		cli_notice(PROG, "%s exited with status %d after %.2f s", cmd,
			WEXITSTATUS(status), wall);
	else if (recorder_root_status(rc, &status) && WIFSIGNALED(status))
		cli_notice(PROG, "%s was killed by signal %d after %.2f s",
			cmd, WTERMSIG(status), wall);
	if (attached(o))
		cli_notice(PROG, "attached for %.2f s to %" G_GUINT64_FORMAT
			" process%s, %" G_GUINT64_FORMAT " of them ended (exited%s) meanwhile; the "
			"others were left running as found", wall, rs->procs_seen,
			rs->procs_seen == 1 ? "" : "es", rs->exits,
			o->cgroup ? " or left the cgroup" : "");
	cli_notice(PROG, "%" G_GUINT64_FORMAT " intervals of %" G_GUINT64_FORMAT
		" ms, %" G_GUINT64_FORMAT " process%s, %" G_GUINT64_FORMAT " maps, %"
		G_GUINT64_FORMAT " unmaps", rs->intervals, o->interval_ms, rs->procs_seen,
		rs->procs_seen == 1 ? "" : "es", rs->maps, rs->unmaps);
	cli_notice(PROG, "%" G_GUINT64_FORMAT " page writes (%s): %"
		G_GUINT64_FORMAT " zero, %" G_GUINT64_FORMAT " uniform, %" G_GUINT64_FORMAT
		" %s (%" G_GUINT64_FORMAT " unreadable skipped)",
		rs->pages, written, rs->zero_pages, rs->uniform_pages,
		o->content == RECORD_CONTENT_DIGEST ? rs->digest_pages : blobs,
		o->content == RECORD_CONTENT_DIGEST ? "other pages stored as digests" :
		"distinct other pages stored once", rs->mem_errors);
	if (rs->huge_skipped)
		cli_notice(PROG, "left out mappings over 64 GiB (reservations, "
			"sanitizer shadows) %" G_GUINT64_FORMAT " times", rs->huge_skipped);
	report_detector(rs, o);
	char *with = baseline > 0 ? g_strdup_printf("; %s took %.2f s without recording, %.2f s"
						    " with (%+.1f%%)", cmd, baseline, wall,
						    100 * (wall - baseline) / baseline)
				  : g_strdup("");

	cli_notice(PROG, "capture took %.2f s of %.2f s wall (%.1f%%)%s", rs->capture_s, wall,
		   wall > 0 ? 100 * rs->capture_s / wall : 0, with);
	g_free(with);
	cli_notice(PROG, "trace %s: %s", o->out, size);
	g_free(written);
	g_free(size);
}

/* The recording, once the options are in o; the exit status. */
static int record_run(int argc, char **argv, struct record_opts o)
{
	double baseline = -1, t_start, wall;
	struct coverage cov = { 0 };
	struct recorder *rc;
	trace_writer *w;
	GError *error = NULL;
	uint64_t blobs;
	int err = 0, ret;
	pid_t root;
	const char *what = o.pids ? "the processes" : o.cgroup ? "the cgroup" : argv[0];

	if (o.baseline) {
		cli_notice(PROG, "baseline run of %s without recording...", argv[0]);
		baseline = run_baseline(argv);
	}

	/* digests are version 4; bytes stay version 3, as before digests existed */
	w = trace_writer_open_version(o.out, trace_format_from_path(o.out),
				      o.content == RECORD_CONTENT_DIGEST ? 4 : 3, &error);
	if (!w) {
		cli_error(PROG, "%s", error->message);
		g_error_free(error);
		return EXIT_USAGE;
	}
	if (o.find_note)
		cli_notice(PROG, "%s", o.find_note);
	comment_setup(w, argv, argc, &o);
	signals_install(SIGNALS_DEFER);
	t_start = now_s();
	rc = recorder_new(w, o.find, o.scope, o.vm_name);
	recorder_set_content(rc, o.content);
	if (o.max_cpu > 0)
		recorder_set_max_cpu(rc, o.max_cpu, o.interval_ms / 1e3);

	if (o.pids) {
		recorder_attach(rc, (const pid_t *)(void *)o.pids->data, o.pids->len);
	} else if (o.cgroup) {
		recorder_attach_cgroup(rc, o.cgroup);
	} else {
		root = start_command(argv, o.shim, &err);
		if (root < 0) {
			cli_error(PROG, "%s: cannot execute: %s", argv[0],
				g_strerror(err));
			trace_writer_abort(w);
			recorder_free(rc);
			return EXIT_USAGE;
		}
		recorder_follow(rc, root);
	}

	record_loop(rc, &o, t_start, &cov);
	wall = now_s() - t_start;
	recorder_mark(rc, "end");
	if (attached(&o))
		recorder_detach(rc);
	else
		/* SIGPIPE was the recorder's pipe, not the program's: it gets SIGTERM */
		recorder_stop_tree(rc, signals_caught() && signals_caught() != SIGPIPE ?
				   signals_caught() : SIGTERM);

	blobs = trace_writer_blobs(w);
	if (recorder_error(rc)) {
		/* a write error: nothing trustworthy to commit */
		cli_error(PROG, "%s", recorder_error(rc)->message);
		trace_writer_abort(w);
		recorder_free(rc);
		return signals_exit_status(EXIT_USAGE);
	}
	if (!trace_writer_close(w, &error)) {
		cli_error(PROG, "%s", error->message);
		g_clear_error(&error);
		recorder_free(rc);
		return signals_exit_status(EXIT_USAGE);
	}
	ret = recorder_full(rc) ? EXIT_USAGE : 0;
	report(rc, what, &o, blobs, wall, baseline);
	if (o.max_cpu > 0)
		report_cap(&o, &cov, recorder_stats(rc), wall);
	if (attached(&o) && recorder_stats(rc)->pages == 0 && !signals_caught()) {
		cli_error(PROG, "no page of %s was captured (scope %s%s)", what,
			record_scope_name(o.scope), o.scope == RECORD_SCOPE_ADVISED ?
			": nothing advised MADV_MERGEABLE; --scope all takes every anonymous mapping" :
			"");
		ret = 1;
	} else if (!attached(&o) && recorder_stats(rc)->intervals <= 1 &&
		   recorder_stats(rc)->pages == 0 && !signals_caught()) {
		cli_error(PROG, "%s ended before anything was captured "
			"(the trace holds no pages)", argv[0]);
		ret = 1;
	}
	recorder_free(rc);
	return signals_exit_status(ret);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .interval_ms = 100, .mark_every = 10, .find = RECORD_FIND_AUTO };
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	if (!o.scope_given)
		o.scope = o.vm_name || attached(&o) ? RECORD_SCOPE_ADVISED : RECORD_SCOPE_ALL;
	/* a host-size capture: 16 bytes a page, not 4 KiB (issue 33) */
	if (!o.content_given)
		o.content = attached(&o) ? RECORD_CONTENT_DIGEST : RECORD_CONTENT_BYTES;
	ret = check_setup(argv, argc, &o);
	if (ret < 0)
		ret = record_run(argc, argv, o);
	g_free(o.shim);
	g_free(o.find_note);
	if (o.pids)
		g_array_free(o.pids, TRUE);
	return ret;
}
