// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ksmd measured by function (live.h, live_profile_*): while a replay runs,
 * the kernel samples ksmd's call chain every PROFILE_PERIOD_NS of its CPU
 * time (perf_event_open: the software cpu-clock, PERF_SAMPLE_CALLCHAIN, on
 * ksmd's pid), the addresses are named from /proc/kallsyms, and each sample
 * goes to one cost term by the table below. At each mark the terms' samples
 * so far are written with their share and their milliseconds: the share
 * times ksmd's CPU time from schedstat (the marks' ksmd_cpu_ms), so that
 * the terms add up to what the marks say.
 *
 * The table is the one place that says which kernel function is which
 * term (sim/MODEL.md, "ksmd measured by function"). Most of ksm.c is
 * inlined into ksm_scan_thread on 6.18 (scan_get_next_rmap_item,
 * cmp_and_merge_page, the tree searches, get_next_rmap_item), so those
 * have no frame of their own: what ksm_scan_thread spends itself is the
 * scan's bookkeeping, the tree descents' own loads included. Functions
 * that are not inlined name their term wherever they are met; a generic
 * one (rb_erase, kmem_cache_free, folio_try_get...) takes the term of the
 * first named function above it. A few enclose others and win over what
 * they call: stable_node_dup (its ksm_get_folio calls are the chain walk),
 * remove_rmap_item_from_tree, lru_add_drain_all.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "live/ksmd.h"
#include "live/live.h"

#define PROFILE_PERIOD_NS 250000	/* 4,000 samples a second of ksmd's CPU */
#define RING_PAGES 4096			/* 16 MiB: over 30 s of ksmd between marks */

const char *const live_profile_term_names[LIVE_PROFILE_NR] = {
	[LIVE_PROFILE_WALK] = "page_table_walk",
	[LIVE_PROFILE_CHECKSUM] = "checksum",
	[LIVE_PROFILE_COMPARE] = "page_compare",
	[LIVE_PROFILE_STABLE_FOLIO] = "stable_folio",
	[LIVE_PROFILE_TREE_PAGE] = "tree_page",
	[LIVE_PROFILE_MERGE] = "merge",
	[LIVE_PROFILE_RMAP_ITEM] = "rmap_item",
	[LIVE_PROFILE_MMAP_LOCK] = "mmap_lock",
	[LIVE_PROFILE_CHAIN] = "chain_walk",
	[LIVE_PROFILE_PASS] = "full_pass",
	[LIVE_PROFILE_SCAN] = "scan",
	[LIVE_PROFILE_OTHER] = "other",
};

/*
 * Which function is which term. encloses: the term wins over any named
 * below it in the chain (the innermost such frame decides). caller: the
 * entry holds only when the frame above is that function (an allocation
 * ksm_scan_thread makes itself is an rmap_item's: alloc_rmap_item is
 * inlined).
 */
static const struct {
	const char *fn;
	enum live_profile_term term;
	bool encloses;
	const char *caller;
} fn_terms[] = {
#define FN(f, t) { .fn = f, .term = t }
#define ENCL(f, t) { .fn = f, .term = t, .encloses = true }
#define UNDER(f, t, c) { .fn = f, .term = t, .caller = c }
	/*
	 * An unstable tree level's page: get_mergeable_page (inlined) walks the
	 * node's page table with folio_walk_start straight from ksm_scan_thread;
	 * the walk to the next page to visit goes through walk_page_range.
	 */
	UNDER("folio_walk_start", LIVE_PROFILE_TREE_PAGE, "ksm_scan_thread"),
	UNDER("folio_walk_end", LIVE_PROFILE_TREE_PAGE, "ksm_scan_thread"),
	/* the page-table walk to the next page: ksm_next_page_pmd_entry's walk */
	FN("folio_walk_start", LIVE_PROFILE_WALK), FN("folio_walk_end", LIVE_PROFILE_WALK),
	FN("ksm_next_page_pmd_entry", LIVE_PROFILE_WALK), FN("walk_page_range", LIVE_PROFILE_WALK),
	FN("walk_page_range_mm", LIVE_PROFILE_WALK), FN("walk_page_range_mm_unsafe", LIVE_PROFILE_WALK),
	FN("__walk_page_range", LIVE_PROFILE_WALK), FN("walk_pgd_range", LIVE_PROFILE_WALK),
	FN("walk_p4d_range", LIVE_PROFILE_WALK), FN("walk_pud_range", LIVE_PROFILE_WALK),
	FN("walk_pmd_range", LIVE_PROFILE_WALK), FN("walk_pte_range", LIVE_PROFILE_WALK),
	FN("__pte_offset_map", LIVE_PROFILE_WALK), FN("__pte_offset_map_lock", LIVE_PROFILE_WALK),
	FN("vma_lookup", LIVE_PROFILE_WALK), FN("find_vma", LIVE_PROFILE_WALK),
	FN("mt_find", LIVE_PROFILE_WALK),
	/* calc_checksum (inlined) */
	FN("xxh64", LIVE_PROFILE_CHECKSUM), FN("jhash2", LIVE_PROFILE_CHECKSUM),
	FN("crc32c", LIVE_PROFILE_CHECKSUM), FN("crc32c_arch", LIVE_PROFILE_CHECKSUM),
	FN("crc32c_x86_3way", LIVE_PROFILE_CHECKSUM),
	/* every compare of two pages: the tree searches', the zero page's, a merge's */
	FN("memcmp", LIVE_PROFILE_COMPARE), FN("memcmp_pages", LIVE_PROFILE_COMPARE),
	FN("pages_identical", LIVE_PROFILE_COMPARE),
	/* a stable node's KSM page: the stable tree's levels, a revisit's lookup */
	FN("ksm_get_folio", LIVE_PROFILE_STABLE_FOLIO),
	/* a merge: write-protect, replace, and the stable node made or joined */
	FN("try_to_merge_one_page", LIVE_PROFILE_MERGE),
	FN("try_to_merge_with_ksm_page", LIVE_PROFILE_MERGE),
	FN("write_protect_page", LIVE_PROFILE_MERGE), FN("replace_page", LIVE_PROFILE_MERGE),
	FN("break_cow", LIVE_PROFILE_MERGE), FN("stable_tree_append", LIVE_PROFILE_MERGE),
	FN("alloc_stable_node_chain", LIVE_PROFILE_MERGE),
	FN("split_huge_page_to_list_to_order", LIVE_PROFILE_MERGE),
	/* rmap_items made and dropped */
	ENCL("remove_rmap_item_from_tree", LIVE_PROFILE_RMAP_ITEM),
	UNDER("kmem_cache_alloc_noprof", LIVE_PROFILE_RMAP_ITEM, "ksm_scan_thread"),
	UNDER("kmem_cache_free", LIVE_PROFILE_RMAP_ITEM, "ksm_scan_thread"),
	/* the mmap lock taken and dropped at each visit */
	FN("down_read", LIVE_PROFILE_MMAP_LOCK), FN("up_read", LIVE_PROFILE_MMAP_LOCK),
	FN("down_read_trylock", LIVE_PROFILE_MMAP_LOCK), FN("mmap_read_lock", LIVE_PROFILE_MMAP_LOCK),
	/* a chain's dups looked at (and pruned) */
	ENCL("stable_node_dup", LIVE_PROFILE_CHAIN),
	ENCL("stable_node_dup_remove_range", LIVE_PROFILE_CHAIN),
	FN("remove_stable_node", LIVE_PROFILE_CHAIN),
	/* a pass's start: every CPU's lru_add batch emptied */
	ENCL("lru_add_drain_all", LIVE_PROFILE_PASS),
	/* the scan loop itself: what is inlined into it */
	FN("ksm_scan_thread", LIVE_PROFILE_SCAN), FN("ksm_do_scan", LIVE_PROFILE_SCAN),
	FN("scan_get_next_rmap_item", LIVE_PROFILE_SCAN), FN("cmp_and_merge_page", LIVE_PROFILE_SCAN),
#undef FN
#undef ENCL
#undef UNDER
};

struct ksym {
	uint64_t addr;
	int term;		/* index into fn_terms, or -1 */
	const char *name;
};

#define MAX_MARKS 4096

struct live_profile {
	int fd;
	void *ring;
	size_t ring_len;
	struct ksym *syms;
	size_t nsyms;
	GStringChunk *names;
	uint64_t samples[LIVE_PROFILE_NR];
	uint64_t lost;
	uint64_t start_cpu_ns;
	FILE *out;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's text symbols, sorted; false where the addresses are hidden (all 0). */
static bool load_kallsyms(struct live_profile *p, GError **error)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t cap = 0;
	bool nonzero = false;

	if (!f) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "/proc/kallsyms: %s", g_strerror(errno));
		return false;
	}
	p->names = g_string_chunk_new(1 << 16);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'W' && type != 'w')
			continue;
		nonzero |= addr != 0;
		if (p->nsyms == cap) {
			cap = cap ? cap * 2 : 65536;
			p->syms = g_renew(struct ksym, p->syms, cap);
		}
		int term = -1;

		for (size_t i = 0; i < G_N_ELEMENTS(fn_terms); i++)
			if (!strcmp(fn_terms[i].fn, name)) {
				term = (int)i;	/* the first of its entries */
				break;
			}
		p->syms[p->nsyms++] = (struct ksym){
			.addr = addr, .term = term,
			.name = term >= 0 ? fn_terms[term].fn : g_string_chunk_insert(p->names, name),
		};
	}
	fclose(f);
	if (!nonzero) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
			    "/proc/kallsyms shows no addresses (kptr_restrict, or not root): "
			    "ksmd's samples cannot be named");
		return false;
	}
	qsort(p->syms, p->nsyms, sizeof(*p->syms), cmp_ksym);
	return true;
}

static const struct ksym *ksym_at(const struct live_profile *p, uint64_t ip)
{
	size_t lo = 0, hi = p->nsyms;

	if (!p->nsyms || ip < p->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (p->syms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return &p->syms[lo];
}

/*
 * One sample's term: the first named function from the leaf up, unless a
 * function that encloses is above it. ips[0] is the leaf; return addresses
 * above it are taken one byte back so a call at a function's end names it.
 */
static enum live_profile_term attribute(const struct live_profile *p, const uint64_t *ips,
					size_t n)
{
	const struct ksym *frames[128];
	size_t nf = 0;
	int first = -1;

	for (size_t i = 0; i < n && nf < G_N_ELEMENTS(frames); i++) {
		if (ips[i] >= PERF_CONTEXT_MAX)	/* PERF_CONTEXT_KERNEL and the like */
			continue;
		const struct ksym *s = ksym_at(p, nf ? ips[i] - 1 : ips[i]);

		if (s)
			frames[nf++] = s;
	}
	for (size_t i = 0; i < nf; i++) {
		int t = frames[i]->term;

		if (t < 0)
			continue;
		/* one function's entries are adjacent, those that need a caller first */
		while (t < (int)G_N_ELEMENTS(fn_terms) && !strcmp(fn_terms[t].fn, frames[i]->name) &&
		       fn_terms[t].caller &&
		       (i + 1 >= nf || strcmp(frames[i + 1]->name, fn_terms[t].caller)))
			t++;
		if (t >= (int)G_N_ELEMENTS(fn_terms) || strcmp(fn_terms[t].fn, frames[i]->name))
			continue;
		if (fn_terms[t].encloses)
			return fn_terms[t].term;
		if (first < 0)
			first = t;
		/* an enclosing function further up still wins */
		for (size_t j = i + 1; j < nf; j++)
			if (frames[j]->term >= 0 && fn_terms[frames[j]->term].encloses)
				return fn_terms[frames[j]->term].term;
		break;
	}
	return first >= 0 ? fn_terms[first].term : LIVE_PROFILE_OTHER;
}

/* Reads every record the ring holds. */
static void drain(struct live_profile *p)
{
	struct perf_event_mmap_page *meta = p->ring;
	uint8_t *data = (uint8_t *)p->ring + meta->data_offset;
	uint64_t size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	static uint8_t rec[65536];

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size;

		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h))	/* h.size is 16 bits: rec holds any record */
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(off + i) % size];
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
			/* PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN: ip, nr, ips[nr] */
			const uint64_t *u = (const uint64_t *)(rec + sizeof(h));
			uint64_t nr = u[1];

			if (sizeof(h) + 16 + nr * 8 <= h.size)
				p->samples[attribute(p, u + 2, nr)]++;
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
			p->lost += ((const uint64_t *)(rec + sizeof(h)))[1];
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

struct live_profile *live_profile_open(FILE *out, GError **error)
{
	long pid = ksmd_find_pid();
	struct live_profile *p;
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = PROFILE_PERIOD_NS,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
		.exclude_user = 1, .exclude_callchain_user = 1, .exclude_hv = 1,
	};

	if (!pid) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "--profile: no ksmd in /proc (another pid namespace?)");
		return NULL;
	}
	p = g_new0(struct live_profile, 1);
	p->fd = -1;
	p->out = out;
	if (!load_kallsyms(p, error))
		goto fail;
	p->fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (p->fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "--profile: perf_event_open (cpu-clock on ksmd, pid %ld): %s "
			    "(root, and a kernel with perf events, are needed)", pid,
			    g_strerror(errno));
		goto fail;
	}
	p->ring_len = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	p->ring = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->ring == MAP_FAILED) {
		p->ring = NULL;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "--profile: the sample buffer (%zu bytes): %s", p->ring_len,
			    g_strerror(errno));
		goto fail;
	}
	bool seen;

	if (!live_ksmd_cpu_ns(&p->start_cpu_ns, &seen, error))
		goto fail;
	fprintf(out, "# ksmsim live --profile: ksmd (pid %ld) sampled every %d us of its CPU "
		"(perf cpu-clock, kernel call chains, named from /proc/kallsyms); each sample "
		"to one term (live/profile.c, sim/MODEL.md \"ksmd measured by function\"); "
		"ms: the share times ksmd's CPU from schedstat since the start; "
		"cumulative at each mark\n", pid, PROFILE_PERIOD_NS / 1000);
	fputs("label,term,samples,share,ms\n", out);
	return p;
fail:
	live_profile_close(p);
	return NULL;
}

bool live_profile_mark(struct live_profile *p, const char *label, GError **error)
{
	uint64_t cpu_ns, total = 0;
	bool seen;

	drain(p);
	if (!live_ksmd_cpu_ns(&cpu_ns, &seen, error))
		return false;
	for (int t = 0; t < LIVE_PROFILE_NR; t++)
		total += p->samples[t];
	for (int t = 0; t < LIVE_PROFILE_NR; t++) {
		double share = total ? (double)p->samples[t] / (double)total : 0;

		fprintf(p->out, "%s,%s,%" G_GUINT64_FORMAT ",%.4f,%.3f\n", label,
			live_profile_term_names[t], (guint64)p->samples[t], share,
			share * (double)(cpu_ns - p->start_cpu_ns) / 1e6);
	}
	return true;
}

uint64_t live_profile_lost(const struct live_profile *p)
{
	return p->lost;
}

void live_profile_close(struct live_profile *p)
{
	if (!p)
		return;
	if (p->ring)
		munmap(p->ring, p->ring_len);
	if (p->fd >= 0)
		close(p->fd);
	if (p->names)
		g_string_chunk_free(p->names);
	g_free(p->syms);
	g_free(p);
}
