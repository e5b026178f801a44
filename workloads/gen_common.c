// SPDX-License-Identifier: GPL-2.0-or-later
/* Shared machinery of the generators: randomness, the clock, record emission. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "hashes/hash.h"
#include "util/nearest.h"
#include "util/progress.h"
#include "util/splitmix64.h"
#include "workloads/gen.h"

void gen_rng_init(struct gen_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64_next(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t gen_rng_next(struct gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t gen_rng_below(struct gen_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the tiny bias is irrelevant for page picking. */
	return n ? (uint64_t)(((unsigned __int128)gen_rng_next(r) * n) >> 64) : 0;
}

uint64_t gen_seed(const struct gen *g, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t st = g->seed ^ 0x6b736d73696d67ULL;	/* "ksmsimg" */
	uint64_t v = splitmix64_next(&st);

	st = v ^ a;
	v = splitmix64_next(&st);
	st = v ^ b;
	v = splitmix64_next(&st);
	st = v ^ c;
	return splitmix64_next(&st);
}

static bool put(struct gen *g)
{
	if (g->failed)
		return false;
	g->rec.t_us = g->now_us;
	if (!trace_writer_put(g->w, &g->rec, g->error)) {
		g->failed = true;
		return false;
	}
	if ((++g->records & 0xfff) == 0 && g->progress)
		progress_update(g->progress, g->records, g->now_us, g->duration_us);
	return true;
}

static void set_mm(struct gen *g, enum trace_verb verb, const char *mm)
{
	g->rec.verb = verb;
	g_strlcpy(g->rec.mm, mm, sizeof(g->rec.mm));
}

bool gen_mark(struct gen *g, const char *label)
{
	g->rec.verb = TRACE_MARK;
	g_strlcpy(g->rec.label, label, sizeof(g->rec.label));
	return put(g);
}

bool gen_at(struct gen *g, uint64_t t_us)
{
	if (t_us < g->now_us)
		t_us = g->now_us;
	/* Periodic marks come before the records stamped at their instant. */
	while (g->mark_period_us && g->next_mark_us <= t_us) {
		char label[32];

		g->now_us = g->next_mark_us;
		snprintf(label, sizeof(label), "s%04u", ++g->marks);
		if (!gen_mark(g, label))
			return false;
		g->next_mark_us += g->mark_period_us;
	}
	g->now_us = t_us;
	return !g->failed;
}

bool gen_spawn(struct gen *g, const char *mm)
{
	set_mm(g, TRACE_SPAWN, mm);
	g->rec.node = 0;
	return put(g);
}

bool gen_exit(struct gen *g, const char *mm)
{
	set_mm(g, TRACE_EXIT, mm);
	return put(g);
}

static bool range(struct gen *g, enum trace_verb verb, const char *mm, uint64_t vpn, uint64_t n)
{
	if (!n)
		return !g->failed;
	set_mm(g, verb, mm);
	g->rec.vpn = vpn;
	g->rec.npages = n;
	return put(g);
}

bool gen_map(struct gen *g, const char *mm, uint64_t vpn, uint64_t n)
{
	return range(g, TRACE_MAP, mm, vpn, n);
}

bool gen_advise(struct gen *g, const char *mm, uint64_t vpn, uint64_t n, bool mergeable)
{
	g->rec.mergeable = mergeable;
	return range(g, TRACE_ADVISE, mm, vpn, n);
}

bool gen_unmap(struct gen *g, const char *mm, uint64_t vpn, uint64_t n)
{
	return range(g, TRACE_UNMAP, mm, vpn, n);
}

bool gen_fill(struct gen *g, const char *mm, uint64_t vpn, uint64_t n,
	      enum content_form form, uint64_t value)
{
	g->rec.content.form = form;
	g->rec.content.value = value;
	g->rec.content.off = 0;
	g->rec.content.len = 0;
	if (n == 1) {
		set_mm(g, TRACE_WRITE, mm);
		g->rec.vpn = vpn;
		g->rec.npages = 1;
		return put(g);
	}
	return range(g, TRACE_FILL, mm, vpn, n);
}

bool gen_fillseq(struct gen *g, const char *mm, uint64_t vpn, uint64_t n, uint64_t seed)
{
	g->rec.seed = seed;
	if (n == 1)	/* the shorter spelling of the same thing */
		return gen_fill(g, mm, vpn, 1, CONTENT_RAND, seed);
	return range(g, TRACE_FILLSEQ, mm, vpn, n);
}

bool gen_write_word(struct gen *g, const char *mm, uint64_t vpn, unsigned word, uint64_t value)
{
	set_mm(g, TRACE_WRITE, mm);
	g->rec.vpn = vpn;
	g->rec.npages = 1;
	g->rec.content.form = CONTENT_WORD;
	g->rec.content.off = word;
	g->rec.content.len = 8;
	g->rec.content.value = value;
	return put(g);
}

bool gen_write_bytes(struct gen *g, const char *mm, uint64_t vpn, unsigned off,
		     const uint8_t *bytes, unsigned len)
{
	set_mm(g, TRACE_WRITE, mm);
	g->rec.vpn = vpn;
	g->rec.npages = 1;
	g->rec.content.form = CONTENT_BYTES;
	g->rec.content.off = off;
	g->rec.content.len = len;
	g->rec.content.value = 0;
	memcpy(g->rec.content.data, bytes, len);
	return put(g);
}

bool gen_set(struct gen *g, enum ksm_knob knob, uint64_t value)
{
	g->rec.verb = TRACE_SET;
	g->rec.knob = knob;
	g->rec.value = value;
	return put(g);
}

bool gen_settle(struct gen *g, uint64_t n)
{
	g->rec.verb = TRACE_SETTLE;
	g->rec.value = n;
	return put(g);
}

static bool G_GNUC_PRINTF(2, 3) gen_comment(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	char *s;
	bool ok;

	if (g->failed)
		return false;
	va_start(ap, fmt);
	s = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	ok = trace_writer_comment(g->w, s, g->error);
	g_free(s);
	if (!ok)
		g->failed = true;
	return ok;
}

/* The t=0 knobs every workload starts with, ending with `set run 1`. */
static bool gen_preamble(struct gen *g, const struct gen_opts *o)
{
	gen_set(g, KNOB_PAGES_TO_SCAN, o->pages_to_scan);
	gen_set(g, KNOB_SLEEP_MILLISECS, o->sleep_ms);
	if (o->advisor)
		gen_set(g, KNOB_ADVISOR_MODE, 1);
	if (o->use_zero_pages >= 0)
		gen_set(g, KNOB_USE_ZERO_PAGES, (uint64_t)o->use_zero_pages);
	gen_set(g, KNOB_RUN, 1);
	return !g->failed;
}

static const struct gen_workload workloads[] = {
	{ "kernel-build", "N identical guests boot from one image, then compile a kernel",
	  "Guests boot from one image (kernel text and page cache identical across\n"
	  "guests, zeroed free pages), then build a kernel: a source page cache read\n"
	  "progressively (identical across guests), object files written once (half\n"
	  "identical across guests), compiler heaps rewritten every few seconds, a\n"
	  "few hot pages rewritten every second, and zeroed free pages taken over\n"
	  "by the build (copy-on-write of merged zero pages).\n",
	  4, 4096, 1800, 1800, gen_kernel_build, false, true, false },
	{ "iozone", "N guests run iozone passes: a page cache churning through large buffers",
	  "Guests boot from one image, then run iozone: sequential write, rewrite,\n"
	  "read and random read/write passes over a file as large as a third of the\n"
	  "guest's memory. iozone's buffers hold one repeated pattern, so the file's\n"
	  "page cache is one content: it merges within and across guests and every\n"
	  "rewrite of a merged page is a copy-on-write.\n",
	  4, 4096, 1800, 1800, gen_iozone, false, true, false },
	{ "number-crunching", "N guests sweep large arrays of distinct values (big unstable tree)",
	  "Guests boot from one image, then a numerical kernel fills large arrays of\n"
	  "distinct values (60% of memory) and updates them in slow sweeps, beside\n"
	  "zero-initialised work arrays, a small hot set and a converged field, the\n"
	  "same in every guest, that merges while idle and then gets two-byte\n"
	  "floating-point corrections (copy-on-write): an unstable tree far above\n"
	  "262144 pages (1 GiB) at the default size.\n",
	  4, 4096, 1800, 1800, gen_number_crunching, false, true, false },
	{ "vm-clones", "N idle guests cloned from one image: the upper bound of sharing",
	  "Guests boot from one image and idle: image pages and zeroed free pages are\n"
	  "identical across guests; a few private pages and a small hot set (timers,\n"
	  "idle-loop state) are all that differ.\n",
	  4, 4096, 1800, 900, gen_vm_clones, false, false, false },
	{ "ksm-flood", "LTP ksm02-style merge flood, then a CoW flood",
	  "N processes (default 3, 128 MiB each, as LTP's ksm tests) map and advise\n"
	  "their memory, fill it with one byte (merge flood), then step through the\n"
	  "LTP pattern changes ('c' everywhere; 'a' in one process; 'b'; one page\n"
	  "'d'), each followed by a settle and a mark; then every page is rewritten\n"
	  "(CoW flood), re-merged, and everything is unmerged with run=2.\n",
	  3, 128, 60, 60, gen_ksm_flood, false, false, false },
	{ "zero-heavy", "mostly zero pages, for use_zero_pages",
	  "Guests whose memory is 85% zeroed free pages; the guest keeps taking zero\n"
	  "pages for data and zeroing them again when it frees them (init_on_free),\n"
	  "so zero pages are merged, written (CoW) and re-zeroed all the time. Run\n"
	  "with 'ksmsim run --use-zero-pages 1' (or gen --use-zero-pages 1).\n",
	  4, 1024, 600, 600, gen_zero_heavy, false, false, false },
	{ "crc-adversarial", "changes invisible to crc32c and crc32, mixed with ordinary ones",
	  "Guests share an image; in part of it, the first guest keeps toggling\n"
	  "16-byte deltas that leave both crc32c and crc32 of the page unchanged\n"
	  "(built from CRC linearity), while other pages get ordinary changes. A CRC\n"
	  "checksum gate takes the toggled pages for stable (they merge and are\n"
	  "copied again and again); xxhash and jhash2 see every change.\n",
	  2, 256, 120, 120, gen_crc_adversarial, false, false, false },
	{ "checksum-adversarial", "pages alternating between two contents with one checksum",
	  "Guests share an image; some pages (0.2% shared, changed by the first guest\n"
	  "only, and 0.2% of each guest's own) keep alternating one 64-bit word\n"
	  "between the two values of a colliding pair for the checksum --hash names\n"
	  "(default xxhash), found at generation by a birthday search of at most\n"
	  "2^20 tries per sweep; other pages get ordinary changes. That checksum's\n"
	  "gate takes the alternating pages for stable; any other sees every change.\n"
	  "Every fixed-seed 32-bit checksum can be attacked; a 64-bit one is refused\n"
	  "(no pair within the budget).\n",
	  2, 64, 120, 120, gen_checksum_adversarial, true, false, false },
	{ "probe", "the KSM side channel: an attacker probes for K pages a victim holds",
	  "Background guests (each its own domain) hold a shared image (35%), zeroed\n"
	  "free pages (15%) and private pages, written at t = 0; a victim mm holds K\n"
	  "distinct pages (--probe-pages, default 100); at --probe-at S (default a\n"
	  "tenth of the duration) an attacker mm writes copies of them, and again\n"
	  "every --probe-every S (default 0: once), as a timing probe does: a write\n"
	  "(page i of K at --probe-at + i x --probe-spread / K, default all at once)\n"
	  "that takes a CoW fault tells it the page merged. Run it with\n"
	  "'ksmsim run --domain victim=victim --domain attacker=attacker\n"
	  "--exposure-csv FILE': the domain:attacker rows give how soon after the\n"
	  "probe write its copies merged, and how long each stayed merged.\n",
	  4, 1024, 600, 600, gen_probe, false, false, true },
	  	{ "large-tree", "a very large unstable tree among pages with small changes (checksum gate at scale)",
	  "Guests hold mostly stable, distinct pages (86%: the unstable tree), an\n"
	  "image (5%) and zero pages (3%); 6% change in small ways: a counter\n"
	  "incremented, a timestamp rewritten, one to four words of an array set,\n"
	  "one bit of a bitmap flipped. Each changing page has a period of 16 to\n"
	  "512 time steps (67 s to 36 min at the default 720 steps in 3000 s); a\n"
	  "quarter of them are the same in every guest and change in lock step\n"
	  "(they merge while idle, so a change is a copy-on-write). At the default\n"
	  "knobs a full scan of the default 4 x 4 GiB takes ~530 s: 5 full scans.\n"
	  "Scale --pages-to-scan with the memory to keep the scans.\n",
	  4, 4096, 3000, 720, gen_large_tree, false, false, false },
	{ "large-tree-crc", "large-tree whose changes include ones a CRC cannot see",
	  "large-tree with six kinds of change instead of four, each a sixth of the\n"
	  "changing pages (1% of RAM): the four of large-tree, and two that leave a\n"
	  "page's crc32c as it was: a superblock (1020 bytes at offset 1024 followed\n"
	  "by their own crc32c, as ext4 stores it) whose time and byte count change,\n"
	  "and a 16-byte window rewritten with a delta both crc32c and crc32 miss.\n"
	  "A third of the changes pass a CRC gate; xxhash and jhash2 see them.\n",
	  4, 4096, 3000, 720, gen_large_tree_crc, false, false, false },
};

static const struct gen_calibration_info calibrations[GEN_CALIBRATIONS] = {
	[GEN_CAL_2017] = { "2017", "the 2017 KVM experiment, 1800 time steps", false },
	[GEN_CAL_GUESTS_TCG] = { "guests-tcg", "real 4 x 512 MiB TCG guests, a step a second",
				 true },
};

const struct gen_calibration_info *gen_calibration_info(enum gen_calibration c)
{
	return &calibrations[c];
}

bool gen_calibration_find(const char *name, enum gen_calibration *c)
{
	for (int i = 0; name && i < GEN_CALIBRATIONS; i++)
		if (g_ascii_strcasecmp(calibrations[i].name, name) == 0) {
			*c = (enum gen_calibration)i;
			return true;
		}
	return false;
}

const char *gen_calibration_nearest(const char *name)
{
	ptrdiff_t i = name_nearest(name, calibrations, GEN_CALIBRATIONS, sizeof(calibrations[0]),
				   offsetof(struct gen_calibration_info, name));
	return i < 0 ? NULL : calibrations[i].name;
}

const struct gen_workload *gen_workloads(size_t *n)
{
	*n = G_N_ELEMENTS(workloads);
	return workloads;
}

const struct gen_workload *gen_workload_find(const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(workloads); i++)
		if (strcmp(workloads[i].name, name) == 0)
			return &workloads[i];
	return NULL;
}

char *gen_resolve(const struct gen_workload *wl, const struct gen_opts *o, struct gen_size *sz)
{
	double mib = (double)(o->mem_mib ? o->mem_mib : wl->def_mem_mib);
	double pages = floor(mib * GEN_PAGES_PER_MIB * o->scale);
	/* Without --duration-s the run shrinks with --scale: scans per run stay the same. */
	double dur = o->duration_s > 0 ? o->duration_s : wl->def_duration_s * o->scale;

	const struct gen_calibration_info *cal = &calibrations[o->calibration];

	sz->vms = o->vms ? o->vms : wl->def_vms;
	if (o->calibration != GEN_CAL_2017 && !wl->calibrated)
		return g_strdup_printf("--calibration %s: %s has only the 2017 one (kernel-build, "
				       "iozone and number-crunching have %s)", cal->name, wl->name,
				       cal->name);
	if (pages < 16)
		return g_strdup_printf("%s needs at least 16 pages per VM (--mem-mib x --scale "
				       "gives %.0f)", wl->name, pages);
	if (sz->vms > 4096)
		return g_strdup_printf("--vms %u: at most 4096", sz->vms);
	if (pages + GEN_GUEST_BASE > (double)TRACE_VPN_LIMIT)
		return g_strdup("too much memory per VM: its pages would not fit the trace's "
				"32-bit page numbers");
	sz->pages = (uint64_t)pages;
	sz->duration_us = (uint64_t)llround(dur * 1e6);
	sz->ticks = wl->def_ticks;
	if (cal->tick_per_second) {
		/* A second at full size; --scale shortens it as it shrinks memory. */
		double steps = fmax(1, round(dur / o->scale));

		if (steps > 1e8)
			return g_strdup_printf("--calibration %s: %.6g s at --scale %g is %.0f time "
					       "steps (one a second / scale), more than 100000000",
					       cal->name, dur, o->scale, steps);
		sz->ticks = (unsigned)steps;
	}
	if (sz->duration_us < sz->ticks)
		return g_strdup_printf("duration %.6g s is too short for %u time steps", dur,
				       sz->ticks);
	/* the probe's first write must fall inside the trace, or it has none */
	if (wl->takes_probe && o->probe_at_s >= 0 && o->probe_at_s * 1e6 >= (double)sz->duration_us)
		return g_strdup_printf("--probe-at %.6g: at or past the trace's end (%.6g s; "
				       "--duration-s sets it), so no probe would be written",
				       o->probe_at_s, (double)sz->duration_us / 1e6);
	return NULL;
}

/* The registry's spelling of the checksum a takes_hash workload attacks. */
static const char *gen_hash_name(const struct gen_opts *o)
{
	const struct page_hash *h = hash_lookup(o->hash ? o->hash : HASH_DEFAULT);

	return h ? h->name : o->hash;
}

bool gen_write(trace_writer *w, const struct gen_workload *wl, const struct gen_opts *o,
	       const struct gen_size *sz, struct progress *progress, uint64_t *records,
	       GError **error)
{
	struct gen *g = g_new0(struct gen, 1);	/* a whole page of record content: not on the stack */
	bool ok;

	g->w = w;
	g->error = error;
	g->seed = o->seed;
	g->duration_us = sz->duration_us;
	g->mark_period_us = o->marks_every_ms * 1000;
	g->next_mark_us = g->mark_period_us;
	g->progress = progress;
	/* key=value words that `ksmsim run` reads back (trace_reader_gen_fact) */
	static const char *const channels[] = { "cow", "unmap", "unmerge" };
	char *probe = wl->takes_probe ?
		g_strdup_printf(" probe_pages=%" PRIu64 " probe_at_s=%.6g probe_every_s=%.6g"
				" probe_spread_s=%.6g%s%s",
				o->probe_pages ? o->probe_pages : GEN_PROBE_DEF_PAGES,
				o->probe_at_s >= 0 ? o->probe_at_s : sz->duration_us / 1e7,
				o->probe_every_s, o->probe_spread_s,
				/* the CoW channel's traces keep the line they had */
				o->probe_channel ? " probe_channel=" : "",
				o->probe_channel ? channels[o->probe_channel] : "") : g_strdup("");
	gen_comment(g, "ksmsim gen: workload=%s seed=%" PRIu64 " scale=%.15g vms=%u pages=%" PRIu64
		    " duration_s=%.6g steps=%u%s%s%s%s%s%s", wl->name, o->seed, o->scale, sz->vms,
		    sz->pages, sz->duration_us / 1e6, sz->ticks, wl->takes_hash ? " hash=" : "",
		    wl->takes_hash ? gen_hash_name(o) : "",
		    o->calibration != GEN_CAL_2017 ? " calibration=" : "",
		    o->calibration != GEN_CAL_2017 ? calibrations[o->calibration].name : "", probe,
		    o->advisor ? " advisor_mode=scan-time" : "");
	g_free(probe);
	gen_preamble(g, o);
	ok = !g->failed && wl->run(g, o, sz) && !g->failed;
	if (ok && progress)
		progress_update(progress, g->records, g->now_us, g->duration_us);
	*records = g->records;
	g_free(g);
	return ok;
}
