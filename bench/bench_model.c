// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmsim bench model: how fast and how small the model is, on two jobs.
 *  - ksmd's own job: 1 GiB of distinct pages in 2 mms, smart_scan 0,
 *    8 full scans (every visit a checksum and an unstable-tree walk);
 *  - the 2017 experiment's size: 4 guests x 4 GiB of mixed pages, 10 scans.
 * Figures are printed, not asserted: machines are shared and noisy. The
 * live ksmd's rate (pages/s) is measured in the same run with --measure-live,
 * or given with --live-rate, for the ratio.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include <unistd.h>
#include "bench/bench.h"
#include "sim/ksm.h"
#include "util/escape.h"
#include "sim/run.h"
#include "traces/reader.h"
#include "util/exit_status.h"
#include "util/parse.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Peak resident set of this process, in bytes (VmHWM). */
static uint64_t peak_rss(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %" SCNu64, &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* Starts VmHWM again from the current RSS (Linux 4.0+): each job's peak is its own. */
static void reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

static uint64_t current_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	uint64_t pages = 0, rss = 0;
	if (f) {
		if (fscanf(f, "%" SCNu64 " %" SCNu64, &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

struct job {
	uint64_t pages;
	double scan_s;
	uint64_t visits, rss_before, rss_after;
	/* at the 'warm' and 'done' marks: steady state lies between them */
	double t_warm, t_done;
	uint64_t v_warm, v_done;
	struct ksm_memory mem;	/* at the end, before the model is freed */
};

/* Where the bytes went: each structure in MiB and per simulated page. */
static void print_memory(const struct job *j)
{
	const struct ksm_memory *m = &j->mem;
	const struct {
		const char *name;
		uint64_t bytes, count;
		const char *what;
	} rows[] = {
		{ "rmap items", m->rmap_items, m->rmap_item_count, "items (slab arenas)" },
		{ "pages", m->pages, 0, "struct page (slab arenas)" },
		{ "contents", m->contents, m->content_objects, "objects (pool, intern table, bytes)" },
		{ "page tables", m->page_tables, m->pt_chunks, "PTE chunks" },
		{ "stable nodes", m->stable_nodes, m->stable_node_count, "nodes, chains, dups" },
		{ "mms", m->mms, m->mm_count, "mms (VMAs, names)" },
		{ "model total", m->total, 0, "the rows above" },
	};
	printf("  memory by structure at the end (bytes per simulated page; %s):\n",
	       "RSS also holds the heap's slack and the libraries");
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		printf("    %-13s %9.1f MiB %7.1f B/page", rows[i].name, rows[i].bytes / 1048576.0,
		       (double)rows[i].bytes / (double)j->pages);
		if (rows[i].count)
			printf("  %" PRIu64 " %s\n", rows[i].count, rows[i].what);
		else
			printf("  %s\n", rows[i].what);
	}
}

static bool on_mark(void *ctx, const char *label, uint64_t t_us, struct ksm *k, GError **error)
{
	struct job *j = ctx;
	struct ksm_counters c;
	ksm_counters(k, &c);
	if (strcmp(label, "warm") == 0) {
		j->t_warm = now_s();
		j->v_warm = c.pages_scanned;
	} else {
		j->t_done = now_s();
		j->v_done = c.pages_scanned;
	}
	return true;
}

static bool run_trace(const char *path, struct job *j, GError **error)
{
	struct run_config cfg = { .trace = path };
	struct run run;

	if (!run_config_resolve(&cfg, error) || !run_open(&run, &cfg, error))
		return false;
	j->rss_before = current_rss();
	double t0 = now_s();
	struct loop_sinks sinks = { .mark = on_mark, .ctx = j };
	struct loop_result res;
	bool ok = run_replay(&run, &sinks, &res, error);
	double t1 = now_s();
	struct ksm_counters c;
	ksm_counters(run.k, &c);
	j->visits = c.pages_scanned;
	j->scan_s = t1 - t0;
	j->rss_after = current_rss();
	ksm_memory(run.k, &j->mem);
	run_close(&run);
	return ok;
}

/* The trace's path, or NULL with error set; takes body. */
static char *write_trace(const char *dir, const char *name, GString *body, GError **error)
{
	char *path = g_build_filename(dir, name, NULL);
	bool ok = g_file_set_contents(path, body->str, (gssize)body->len, error);

	g_string_free(body, TRUE);
	if (!ok) {
		unlink(path);
		g_free(path);
		return NULL;
	}
	return path;
}

/*
 * Distinct pages in mms equal parts (the last takes the remainder): every
 * visit is a checksum and an unstable-tree walk. Job 1 is 1 GiB in two mms.
 */
static GString *trace_distinct(uint64_t pages, unsigned mms, unsigned scans)
{
	GString *t = g_string_new("ksmtrace 1\n0 set smart_scan 0\n0 set pages_to_scan 100000\n");
	uint64_t part = pages / mms;
	for (unsigned m = 0; m < mms; m++) {
		uint64_t n = m + 1 < mms ? part : pages - part * (mms - 1);
		g_string_append_printf(t, "0 spawn m%u\n0 map m%u 0x100000 %" PRIu64 "\n", m, m, n);
		g_string_append_printf(t, "0 advise m%u 0x100000 %" PRIu64 " mergeable\n", m, n);
		g_string_append_printf(t, "0 fillseq m%u 0x100000 %" PRIu64 " %" PRIu64 "\n", m, n,
				       (uint64_t)m * part + 1);
	}
	g_string_append_printf(t, "0 set run 1\n0 settle 1\n0 mark warm\n0 settle %u\n0 mark done\n",
			       scans - 1);
	return t;
}

/*
 * 4 guests of 4 GiB: 40% one shared image, 20% zero, 30% private pages
 * rewritten every third scan, 10% rewritten before every scan.
 */
static GString *trace_experiment(uint64_t pages_per_vm, unsigned vms, unsigned scans)
{
	GString *t = g_string_new("ksmtrace 1\n0 set pages_to_scan 100000\n0 set sleep_millisecs 20\n");
	uint64_t img = pages_per_vm * 4 / 10, zero = pages_per_vm * 2 / 10;
	uint64_t slow = pages_per_vm * 3 / 10, fast = pages_per_vm - img - zero - slow;
	uint64_t base = 0x100000;
	for (unsigned v = 0; v < vms; v++) {
		g_string_append_printf(t, "0 spawn vm%u\n0 map vm%u 0x%" PRIx64 " %" PRIu64 "\n", v, v,
				       base, pages_per_vm);
		g_string_append_printf(t, "0 advise vm%u 0x%" PRIx64 " %" PRIu64 " mergeable\n", v, base,
				       pages_per_vm);
		g_string_append_printf(t, "0 fillseq vm%u 0x%" PRIx64 " %" PRIu64 " 1\n", v, base, img);
		g_string_append_printf(t, "0 fill vm%u 0x%" PRIx64 " %" PRIu64 " zero\n", v, base + img,
				       zero);
		g_string_append_printf(t, "0 fillseq vm%u 0x%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", v,
				       base + img + zero, slow + fast, (uint64_t)(v + 1) << 40);
	}
	g_string_append(t, "0 set run 1\n0 mark warm\n");
	for (unsigned s = 1; s <= scans; s++) {
		for (unsigned v = 0; v < vms; v++) {
			g_string_append_printf(t, "0 fill vm%u 0x%" PRIx64 " %" PRIu64 " word:0:%u\n", v,
					       base + img + zero + slow, fast, s);
			if (s % 3 == 0)
				g_string_append_printf(t, "0 fill vm%u 0x%" PRIx64 " %" PRIu64
						       " word:1:%u\n", v, base + img + zero, slow / 3, s);
		}
		g_string_append(t, "0 settle 1\n");
	}
	g_string_append(t, "0 mark done\n");
	return t;
}

/* Pages per guest of the host job: 16 GiB guests, as on a large KVM host. */
#define HOST_GUEST_PAGES (UINT64_C(16) << 18)

/*
 * Job 3: a host of `pages` simulated pages in 16 GiB guests, once with job
 * 2's mix and once all distinct (number-crunching's big unstable tree),
 * 3 full scans each: bytes per page by structure, peak RSS, visits/s.
 */
static bool run_host(const char *dir, uint64_t pages, double live_rate, GError **error)
{
	unsigned vms = (unsigned)((pages + HOST_GUEST_PAGES - 1) / HOST_GUEST_PAGES);
	for (int distinct = 0; distinct < 2; distinct++) {
		/*
		 * In this process: each run has a content store of its own,
		 * freed with it, so nothing the jobs before kept counts; the
		 * heap they freed goes back first (malloc_trim), and the peak
		 * starts again from what is left.
		 */
		struct job j = { .pages = pages };
		GString *body = distinct ? trace_distinct(pages, vms, 3)
					 : trace_experiment(pages / vms, vms, 3);
		if (!distinct)
			j.pages = pages / vms * vms;
		char *path = write_trace(dir, "host.ksmt", body, error);
		malloc_trim(0);
		reset_peak_rss();
		bool ok = path && run_trace(path, &j, error);

		if (path)
			unlink(path);
		g_free(path);
		if (!ok)
			return false;
		uint64_t peak = peak_rss();
		double rate = (j.v_done - j.v_warm) / (j.t_done - j.t_warm);
		printf("job 3%c: host of %" PRIu64 " pages (%" PRIu64 " GiB) in %u guests, %s, 3 scans\n",
		       distinct ? 'b' : 'a', j.pages, j.pages >> 18, vms,
		       distinct ? "distinct pages (the unstable-tree case)" : "job 2's mix");
		printf("  visits            %12" PRIu64 "\n", j.visits);
		printf("  wall time         %12.2f s (setup included)\n", j.scan_s);
		printf("  visits per second %12.0f (%s)\n", rate,
		       distinct ? "passes 2-3" : "passes 1-3");
		printf("  ratio             %12.1fx the live ksmd's %.0f pages/s\n", rate / live_rate,
		       live_rate);
		printf("  peak RSS          %12.1f MiB (target <= 80 B/page: %.1f MiB)  %s\n",
		       peak / 1048576.0, j.pages * 80 / 1048576.0, peak <= j.pages * 80 ? "ok" : "MISS");
		printf("  bytes per page    %12.1f (peak RSS / simulated pages)\n",
		       (double)peak / j.pages);
		print_memory(&j);
		fflush(stdout);
	}
	return true;
}

/* Runs `ksmsim live --measure-scan-rate` and reads its distinct-pages rate. */
static double measure_live(uint64_t mib)
{
	char *dir = g_dir_make_tmp("ksmsim-bench-XXXXXX", NULL);
	char *csv = g_build_filename(dir, "rate.csv", NULL);
	char mibs[32];
	snprintf(mibs, sizeof(mibs), "%" PRIu64, mib);
	char *argv[] = { "/proc/self/exe", "live", "--measure-scan-rate", "--mib", mibs, "--csv", csv,
			 NULL };
	double rate = 0;
	gint status = 0;
	GError *err = NULL;
	if (g_spawn_sync(NULL, argv, NULL, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL, NULL, NULL,
			 &status, &err) && g_spawn_check_wait_status(status, NULL)) {
		gchar *text = NULL;
		if (g_file_get_contents(csv, &text, NULL, NULL)) {
			gchar **lines = g_strsplit(text, "\n", -1);
			int col = -1;
			if (lines[0]) {
				gchar **h = g_strsplit(lines[0], ",", -1);
				for (int c = 0; h[c]; c++)
					if (strcmp(h[c], "pages_per_s") == 0)
						col = c;
				g_strfreev(h);
			}
			for (int i = 1; lines[i] && col >= 0; i++) {
				if (g_str_has_prefix(lines[i], "distinct,")) {
					gchar **f = g_strsplit(lines[i], ",", -1);
					if ((int)g_strv_length(f) > col &&
					    !parse_double(f[col], &rate))
						rate = 0;
					g_strfreev(f);
				}
			}
			g_strfreev(lines);
			g_free(text);
		}
	} else if (err) {
		reportf("bench model", "live measurement failed: %s", err->message);
		g_error_free(err);
	}
	unlink(csv);
	rmdir(dir);
	g_free(csv);
	g_free(dir);
	return rate;
}

int bench_model(const struct bench_model_opts *o)
{
	double live_rate = o->live_rate;
	bool measure = o->measure_live;
	uint64_t mib = o->mib, vm_mib = o->vm_mib, host_gib = o->host_gib;

	if (measure) {
		double r = measure_live(mib);
		if (r > 0)
			live_rate = r;
		else
			reportf("bench model", "no live figure; using %.0f pages/s", live_rate);
	}
	GError *error = NULL;
	char *dir = g_dir_make_tmp("ksmsim-bench-XXXXXX", &error), *p1 = NULL;
	int status = 0;

	if (!dir) {
		reportf("ksmsim bench model", "%s", error->message);
		g_error_free(error);
		return 1;
	}
	struct job j1 = { .pages = mib * 256 };
	p1 = write_trace(dir, "ksmd.ksmt", trace_distinct(j1.pages, 2, 8), &error);
	if (!p1 || !run_trace(p1, &j1, &error))
		goto fail;
	double rate = (j1.v_done - j1.v_warm) / (j1.t_done - j1.t_warm);
	printf("job 1: %" PRIu64 " distinct pages (%" PRIu64 " MiB) in 2 mms, smart_scan 0, 8 scans\n",
	       j1.pages, mib);
	printf("  visits            %12" PRIu64 "\n", j1.visits);
	printf("  wall time         %12.2f s (setup and first pass included)\n", j1.scan_s);
	printf("  visits per second %12.0f (passes 2-8, steady state)\n", rate);
	printf("  first pass        %12.2f s (contents built, every checksum computed)\n",
	       j1.t_warm - (j1.t_done - j1.scan_s));
	printf("  live ksmd         %12.0f pages/s%s\n", live_rate, measure ? " (measured now)" : "");
	printf("  ratio             %12.1fx   (target >= 10x)  %s\n", rate / live_rate,
	       rate / live_rate >= 10 ? "ok" : "MISS");
	printf("  RSS after         %12.1f MiB, %.0f bytes per simulated page\n",
	       j1.rss_after / 1048576.0, (double)(j1.rss_after - j1.rss_before) / j1.pages);
	print_memory(&j1);

	if (!o->skip_big) {
		/* before job 2, so that only job 1's few contents are inherited */
		if (host_gib && !run_host(dir, host_gib << 18, live_rate, &error))
			goto fail;
		struct job j2 = { .pages = 4 * vm_mib * 256 };
		reset_peak_rss();
		char *p2 = write_trace(dir, "exp.ksmt", trace_experiment(vm_mib * 256, 4, 10),
				       &error);
		bool ok = p2 && run_trace(p2, &j2, &error);

		if (p2)
			unlink(p2);
		g_free(p2);
		if (!ok)
			goto fail;
		uint64_t peak = peak_rss();
		printf("job 2: 4 guests x %" PRIu64 " MiB = %" PRIu64 " pages, mixed, 10 scans\n", vm_mib,
		       j2.pages);
		printf("  visits            %12" PRIu64 "\n", j2.visits);
		printf("  wall time         %12.2f s\n", j2.scan_s);
		printf("  visits per second %12.0f\n", j2.visits / j2.scan_s);
		printf("  peak RSS          %12.1f MiB (target <= 2048)  %s\n", peak / 1048576.0,
		       peak <= (UINT64_C(2) << 30) ? "ok" : "MISS");
		printf("  bytes per page    %12.0f (peak RSS / simulated pages)\n",
		       (double)peak / j2.pages);
		print_memory(&j2);
		fflush(stdout);
	}
	goto out;
fail:
	reportf("ksmsim bench model", "%s", error->message);
	g_error_free(error);
	status = 1;
out:
	if (p1)
		unlink(p1);
	g_free(p1);
	rmdir(dir);
	g_free(dir);
	return status;
}
