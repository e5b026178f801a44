// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guest workloads: each VM is one mm holding its guest RAM in one mergeable
 * mapping, as qemu does. Memory is carved into regions (fractions of the
 * guest's pages) and the workloads write them on a clock of `ticks` steps.
 * Every size is a fraction and every time a fraction of the run, so --scale
 * (which shrinks pages and, by default, duration together) keeps the number
 * of full scans per run, and so the shape of the counters, unchanged.
 * The fractions are estimates; workloads/README.md says where they come from.
 * Each of kernel-build, iozone and number-crunching has one table of
 * parameters per calibration (gen.h): 2017, fitted to the 2017 KVM
 * experiment's averages, and guests-tcg, fitted to the traces of real
 * 4 x 512 MiB TCG guests (analysis/results/guests/; kernel-build to the
 * older recordings of analysis/results/README.md section 9), on a clock
 * of one tick per second at full size (gen_resolve).
 */
#include <stdio.h>
#include "util/splitmix64.h"
#include "workloads/gen.h"

/* Seed tags: one stream of page contents per region and role. */
enum {
	TAG_IMAGE = 1, TAG_PRIV, TAG_HOT, TAG_SRC, TAG_OBJ_SAME, TAG_OBJ_OWN, TAG_HEAP,
	TAG_TAKE, TAG_ARRAY, TAG_DATA, TAG_FIELD, TAG_TOUCH, TAG_FILE, TAG_CHURN,
};

struct region {
	uint64_t vpn, n;
};

struct guest {
	char mm[16];
	struct region image, zero, priv;
};

/* Regions laid end to end from the start of guest RAM. */
struct layout {
	uint64_t next, end, pages;
};

static struct region carve(struct layout *l, double frac)
{
	uint64_t n = (uint64_t)((double)l->pages * frac);
	struct region r;

	if (n > l->end - l->next)
		n = l->end - l->next;
	r.vpn = l->next;
	r.n = n;
	l->next += n;
	return r;
}

static uint64_t tick_us(const struct gen_size *sz, unsigned k)
{
	/* 128 bits: guests-tcg's clock can have 1e8 ticks of a long duration */
	return (uint64_t)((unsigned __int128)sz->duration_us * k / sz->ticks);
}

static unsigned at_frac(const struct gen_size *sz, double f)
{
	return (unsigned)(f * sz->ticks);
}

/*
 * A region written evenly over ticks [t0, t1): the part [*from, *from + *n)
 * that tick k writes.
 */
static void spread(uint64_t pages, unsigned t0, unsigned t1, unsigned k, uint64_t *from,
		   uint64_t *n)
{
	uint64_t span = t1 > t0 ? t1 - t0 : 1;
	uint64_t a, b;

	if (k < t0 || k >= t0 + span) {
		*from = *n = 0;
		return;
	}
	a = pages * (k - t0) / span;
	b = pages * (k - t0 + 1) / span;
	*from = a;
	*n = b - a;
}

/* Distinct pages: fillseq from a seed that names the region (and maybe the VM and epoch). */
static bool seq_part(struct gen *g, const char *mm, struct region r, uint64_t from, uint64_t n,
		     uint64_t seed)
{
	return gen_fillseq(g, mm, r.vpn + from, n, seed + from);
}

/*
 * A region rewritten in a rolling window, each page once every `period`
 * ticks, with contents that are new each round (epoch in the seed).
 */
static bool rolling(struct gen *g, const char *mm, struct region r, unsigned period, unsigned k,
		    uint64_t tag, unsigned v)
{
	unsigned phase = k % period, round = k / period;
	uint64_t a = r.n * phase / period, b = r.n * (phase + 1) / period;

	return seq_part(g, mm, r, a, b - a, gen_seed(g, tag, v, round));
}

/* Every guest: spawn, map all its RAM, advise it mergeable; the boot regions come first. */
static bool guests_start(struct gen *g, const struct gen_size *sz, struct guest *gs,
			 struct layout *lay, double image, double zero, double priv)
{
	for (unsigned v = 0; v < sz->vms; v++) {
		snprintf(gs[v].mm, sizeof(gs[v].mm), "vm%u", v + 1);
		gen_spawn(g, gs[v].mm);
		gen_map(g, gs[v].mm, GEN_GUEST_BASE, sz->pages);
		gen_advise(g, gs[v].mm, GEN_GUEST_BASE, sz->pages, true);
	}
	lay->next = GEN_GUEST_BASE;
	lay->end = GEN_GUEST_BASE + sz->pages;
	lay->pages = sz->pages;
	struct region ri = carve(lay, image), rz = carve(lay, zero), rp = carve(lay, priv);

	for (unsigned v = 0; v < sz->vms; v++) {
		gs[v].image = ri;
		gs[v].zero = rz;
		gs[v].priv = rp;
	}
	return !g->failed;
}

/*
 * The part of a boot region that tick k writes: the first `share` of its
 * pages evenly over [0, t_burst), the rest evenly over [t_burst, end).
 */
static void boot_part(uint64_t pages, double share, unsigned t_burst, unsigned end, unsigned k,
		      uint64_t *from, uint64_t *n)
{
	uint64_t first = (uint64_t)((double)pages * share);

	if (first > pages)
		first = pages;
	if (first && !t_burst)	/* a short run: the burst is the first tick */
		t_burst = 1;
	if (t_burst >= end)	/* too short for two phases: all evenly over [0, end) */
		first = 0, t_burst = 0;
	if (first && k < t_burst) {
		spread(first, 0, t_burst, k, from, n);
		return;
	}
	spread(pages - first, t_burst, end, k, from, n);
	*from += first;
}

/*
 * The boot: image (same in every guest), zeroed free memory, private state.
 * A burst (`share` of each region over [0, t_burst)) then the rest over
 * [t_burst, end): share 0 and t_burst 0 write everything evenly over [0, end).
 */
static bool guests_boot_burst(struct gen *g, struct guest *gs, unsigned vms, double share,
			      unsigned t_burst, unsigned end, unsigned k)
{
	for (unsigned v = 0; v < vms; v++) {
		struct guest *q = &gs[v];
		uint64_t from, n;

		boot_part(q->image.n, share, t_burst, end, k, &from, &n);
		seq_part(g, q->mm, q->image, from, n, gen_seed(g, TAG_IMAGE, 0, 0));
		boot_part(q->zero.n, share, t_burst, end, k, &from, &n);
		if (n)
			gen_fill(g, q->mm, q->zero.vpn + from, n, CONTENT_ZERO, 0);
		boot_part(q->priv.n, share, t_burst, end, k, &from, &n);
		seq_part(g, q->mm, q->priv, from, n, gen_seed(g, TAG_PRIV, v, 0));
	}
	return !g->failed;
}

/* The boot written evenly over [0, end). */
static bool guests_boot(struct gen *g, struct guest *gs, unsigned vms, unsigned end, unsigned k)
{
	return guests_boot_burst(g, gs, vms, 0, 0, end, k);
}

static bool finish(struct gen *g, const struct gen_size *sz)
{
	gen_at(g, sz->duration_us);
	return gen_mark(g, "end");
}

/* ---- kernel-build ---- */

/* Fractions of guest RAM, times as fractions of the run, periods in ticks. */
struct kb_params {
	double image, zero, priv, src, obj, heap, hot, take;
	double boot_end, src_end, obj_start, obj_end, take_start, take_end;
	double fill_end;	/* image, zero and private pages are written over [0, fill_end) */
	unsigned heap_period;
};

static const struct kb_params kb_cal[GEN_CALIBRATIONS] = {
	/* Estimates, README "kernel-build"; fitted to 2017's kernel build. */
	[GEN_CAL_2017] = {
		.image = 0.13, .zero = 0.08, .priv = 0.08,
		.src = 0.17, .obj = 0.08, .heap = 0.06, .hot = 0.01, .take = 0.011,
		.boot_end = 0.03, .src_end = 0.60, .obj_start = 0.05, .obj_end = 0.95,
		.take_start = 0.30, .take_end = 0.90, .fill_end = 0.03,
		.heap_period = 20,
	},
	/*
	 * Fitted with workloads/vm/fit-guests-tcg.sh (previous values in
	 * brackets) to the advised recording of 4 x 512 MiB guests each
	 * building zlib under TCG (analysis/results/guests/build.txt; the last
	 * vmI-end at 384 s); "of RAM" is of guest RAM, 4 x 131,072 pages. At
	 * the end the guests held 192,364 pages: zero 23.7%, contents another
	 * guest holds too 44.3%, unique 31.4%; ksmd's rmap_items level off at
	 * ~150,000 from 120 s, when the build's memory stops growing.
	 */
	[GEN_CAL_GUESTS_TCG] = {
		/* the image and the tree's sources, in every guest (0.13, 0.05) */
		.image = 0.082, .src = 0.035,
		/* zeroed free memory (0.08), private state (0.08) */
		.zero = 0.10, .priv = 0.02,
		/* objects, half alike in every guest (0.08), the heap (0.06) */
		.obj = 0.035, .heap = 0.04,
		/*
		 * the build rewrote 3.0% of guest RAM a second (3,919 pages a
		 * guest), most of it the same pages again: 2% of RAM every tick
		 * (0.001), the heap each 40 s (20)
		 */
		.hot = 0.02, .heap_period = 40,
		/*
		 * real CoW 27,821, 14,196 of them in the first 20 s and 25,156 by
		 * 60 s: zeroed pages ksmd merged and the boot and the build's
		 * start took back (0.019, from 0.30 to 0.90 of the run)
		 */
		.take = 0.053, .take_start = 0.02, .take_end = 0.14,
		/*
		 * the guests reached their vmI-start at 37.7 s (0.10) on average,
		 * writing 465,839 pages (37.7% zero) on the way (0.04, 0.04)
		 */
		.boot_end = 0.12, .fill_end = 0.06,
		/* memory grows until ~120 s (0.60, 0.05, 0.95) */
		.src_end = 0.33, .obj_start = 0.12, .obj_end = 0.32,
	},
};

bool gen_kernel_build(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	struct guest *gs = g_new0(struct guest, sz->vms);
	struct layout lay;
	struct region src, obj, heap, hot, take;
	const struct kb_params *kb = &kb_cal[o->calibration];
	unsigned boot_end = at_frac(sz, kb->boot_end);

	guests_start(g, sz, gs, &lay, kb->image, kb->zero, kb->priv);
	src = carve(&lay, kb->src);
	obj = carve(&lay, kb->obj);
	heap = carve(&lay, kb->heap);
	hot = carve(&lay, kb->hot);
	/* The build takes over part of the zeroed free memory. */
	take = gs[0].zero;
	take.n = (uint64_t)((double)sz->pages * kb->take);
	if (take.n > gs[0].zero.n)
		take.n = gs[0].zero.n;

	for (unsigned k = 0; k < sz->ticks && !g->failed; k++) {
		gen_at(g, tick_us(sz, k));
		guests_boot(g, gs, sz->vms, at_frac(sz, kb->fill_end), k);
		for (unsigned v = 0; v < sz->vms; v++) {
			const char *mm = gs[v].mm;
			uint64_t from, n;

			/* Sources are read into the page cache: the same files in every guest. */
			spread(src.n, boot_end, at_frac(sz, kb->src_end), k, &from, &n);
			seq_part(g, mm, src, from, n, gen_seed(g, TAG_SRC, 0, 0));
			/* Objects: alternate batches reproducible across guests or not. */
			spread(obj.n, at_frac(sz, kb->obj_start), at_frac(sz, kb->obj_end), k,
			       &from, &n);
			if (k & 1)
				seq_part(g, mm, obj, from, n, gen_seed(g, TAG_OBJ_OWN, v, 0));
			else
				seq_part(g, mm, obj, from, n, gen_seed(g, TAG_OBJ_SAME, 0, 0));
			spread(take.n, at_frac(sz, kb->take_start), at_frac(sz, kb->take_end), k,
			       &from, &n);
			seq_part(g, mm, take, from, n, gen_seed(g, TAG_TAKE, v, 0));
			if (k >= boot_end) {
				rolling(g, mm, heap, kb->heap_period, k - boot_end, TAG_HEAP, v);
				rolling(g, mm, hot, 1, k - boot_end, TAG_HOT, v);
			}
		}
	}
	g_free(gs);
	return finish(g, sz);
}

/* ---- iozone ---- */

struct io_params {
	double image, zero, priv, file, buf;
	double boot_end;
	double fill_end;	/* image, zero and private pages are written over [0, fill_end) */
	bool file_zero;		/* the file's pages are zeroed free memory in the boot */
	double churn;		/* distinct per guest, rewritten from churn_start ... */
	unsigned churn_ticks;	/* ... each page once every churn_ticks; */
	double churn_start;	/* before it, zeroed free memory written over [0, churn_start) */
	unsigned pass_ticks;	/* one iozone pass */
	double rand_frac;	/* random write pass: share of the file written per pass */
	unsigned chunk;		/* random write record, pages */
	/*
	 * 0-255: every stored page is this byte; -1: contents named by the pass
	 * (or tick) and the page, not the guest, and random writes at the same
	 * places in every guest: the same in every guest, distinct within one.
	 */
	int pattern;
};

static const struct io_params io_cal[GEN_CALIBRATIONS] = {
	/* Estimates, README "iozone"; fitted to 2017's iozone. */
	[GEN_CAL_2017] = {
		.image = 0.18, .zero = 0.14, .priv = 0.04, .file = 0.33, .buf = 0.004,
		.boot_end = 0.03, .fill_end = 0.03, .file_zero = false,
		.churn = 0, .churn_ticks = 0,
		.pass_ticks = 80, .rand_frac = 0.4, .chunk = 16, .pattern = 0xa5,
	},
	/*
	 * The real fio run recorded with --scope advised, 297.9 s to the last
	 * vmI-end (analysis/results/guests/; "of RAM": of guest RAM, 4 x 131,072
	 * pages). Fitted with workloads/vm/fit-guests-tcg.sh (previous values in
	 * brackets).
	 */
	[GEN_CAL_GUESTS_TCG] = {
		/* pages also in another guest 35.4% of held = 13.8% of RAM, 12.5 of it the file */
		.image = 0.03,
		/* zero 22.1% of held = 8.6% of RAM at the end (0.07) */
		.zero = 0.075,
		/* fitted: pages_unshared 17,127 at the end, 6,154 as a mean */
		.priv = 0.02,
		/* fio's 64 MiB file */
		.file = 0.125,
		/* no buffer stored to every second */
		.buf = 0,
		/* last vmI-start at 248.1 s of 297.9 (0.51) */
		.boot_end = 0.83,
		/* pages present grow to 113,000 by 240 s, slowly: 68 full scans (0.2) */
		.fill_end = 0.83,
		/* CoW 58,027 by 240 s, before the work (242-248 s), 15,551 after: the
		   file does not take merged zero pages (true) */
		.file_zero = false,
		/* zeroed memory taken in the boot: CoW 1,694 at 120 s, 46,313 at 170 s,
		   58,027 at 240 s; fitted to CoW 73,578 at the end (0.05) */
		.churn = 0.105,
		/* 210 rewrites a guest per s in the boot and the work (10) */
		.churn_ticks = 70,
		/* fitted to pages_sharing 40,154 as a mean (0: churn from t=0, not zeroed) */
		.churn_start = 0.6,
		/* fio's jobs ran 5 s each */
		.pass_ticks = 5,
		.rand_frac = 0.4,
		/* fio's random writes are 4 KiB */
		.chunk = 1,
		/* fio's buffers: a fixed seed; duplicates within one guest 3.7% of held */
		.pattern = -1,
	},
};

enum { IO_WRITE, IO_REWRITE, IO_READ, IO_REREAD, IO_RANDWRITE, IO_RANDREAD, IO_NPASS };

/* Pages [from, from + n) of r: the pattern byte, or contents from seed + page. */
static bool io_store(struct gen *g, const struct io_params *io, const char *mm, struct region r,
		     uint64_t from, uint64_t n, uint64_t seed)
{
	if (io->pattern >= 0)
		return gen_fill(g, mm, r.vpn + from, n, CONTENT_BYTE, (uint64_t)io->pattern);
	return seq_part(g, mm, r, from, n, seed);
}

bool gen_iozone(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	struct guest *gs = g_new0(struct guest, sz->vms);
	struct layout lay;
	struct region file, buf, churn;
	const struct io_params *io = &io_cal[o->calibration];
	unsigned boot_end = at_frac(sz, io->boot_end), churn_start = at_frac(sz, io->churn_start);
	struct gen_rng rng;

	gen_rng_init(&rng, gen_seed(g, TAG_DATA, 0, 0));
	guests_start(g, sz, gs, &lay, io->image, io->zero, io->priv);
	file = carve(&lay, io->file);
	buf = carve(&lay, io->buf);
	churn = carve(&lay, io->churn);
	unsigned chunk = io->chunk < file.n ? io->chunk : 1;
	uint64_t slots = file.n / chunk;
	uint64_t per_tick = (uint64_t)((double)slots * io->rand_frac / io->pass_ticks);

	if (!per_tick)
		per_tick = 1;
	for (unsigned k = 0; k < sz->ticks && !g->failed; k++) {
		gen_at(g, tick_us(sz, k));
		guests_boot(g, gs, sz->vms, at_frac(sz, io->fill_end), k);
		for (unsigned v = 0; v < sz->vms && io->file_zero; v++) {
			uint64_t from, n;

			spread(file.n, 0, boot_end, k, &from, &n);
			gen_fill(g, gs[v].mm, file.vpn + from, n, CONTENT_ZERO, 0);
		}
		for (unsigned v = 0; v < sz->vms && churn.n; v++) {
			uint64_t from, n;

			/* Free memory the guest takes over later: zero pages, then copied. */
			spread(churn.n, 0, churn_start, k, &from, &n);
			if (churn_start && n)
				gen_fill(g, gs[v].mm, churn.vpn + from, n, CONTENT_ZERO, 0);
			if (k >= churn_start)
				rolling(g, gs[v].mm, churn, io->churn_ticks, k - churn_start, TAG_CHURN,
					v);
		}
		if (k < boot_end)
			continue;
		unsigned r = k - boot_end, pass = (r / io->pass_ticks) % IO_NPASS;

		for (unsigned v = 0; v < sz->vms; v++) {
			const char *mm = gs[v].mm;
			uint64_t from, n;

			/* The user buffer takes every record written or read. */
			io_store(g, io, mm, buf, 0, buf.n, gen_seed(g, TAG_FILE, 2, k));
			/* Shared contents: every guest picks the same random places. */
			if (io->pattern < 0)
				gen_rng_init(&rng, gen_seed(g, TAG_DATA, 1, k));
			switch (pass) {
			case IO_WRITE:
			case IO_REWRITE:
				spread(file.n, 0, io->pass_ticks, r % io->pass_ticks, &from, &n);
				if (n)
					io_store(g, io, mm, file, from, n,
						 gen_seed(g, TAG_FILE, 0, r / io->pass_ticks));
				break;
			case IO_RANDWRITE:
				for (uint64_t i = 0; i < per_tick; i++) {
					uint64_t s = gen_rng_below(&rng, slots);

					io_store(g, io, mm, file, s * chunk, chunk,
						 gen_seed(g, TAG_FILE, 1, k));
				}
				break;
			default:	/* reads hit the page cache: no stores */
				break;
			}
		}
	}
	g_free(gs);
	return finish(g, sz);
}

/* ---- number-crunching ---- */

/* Fractions of guest RAM, times as fractions of the run, periods in ticks. */
struct nc_params {
	double image, zero, priv, array, swept, work, hot, field;
	double boot_end, init_end;
	double sweep_start;	/* the sweeps run from sweep_start on */
	double fill_end;	/* image, zero and private pages are written over [0, fill_end), */
	double burst;		/* ... but the first `burst` of each of them over [0, burst_end) */
	double burst_end;
	unsigned sweep_ticks, outer_ticks;
	double touch_share;	/* of the field's pages, corrected by one outer iteration */
	double taken;		/* the arrays' first pages: zeroed free memory in the boot */
	double late;		/* new memory each guest writes once, distinct, ... */
	double late_start;	/* ... over [late_start, 1) of the run */
};

static const struct nc_params nc_cal[GEN_CALIBRATIONS] = {
	/* Estimates, README "number-crunching" (2017 has no such case). */
	[GEN_CAL_2017] = {
		.image = 0.05, .zero = 0.02, .priv = 0.02, .array = 0.60, .swept = 0.20,
		.work = 0.10, .hot = 0.02, .field = 0.08,
		.boot_end = 0.03, .init_end = 0.08, .sweep_start = 0.08, .fill_end = 0.03,
		.sweep_ticks = 600, .outer_ticks = 300,
		.touch_share = 0.25, .taken = 0,
	},
	/*
	 * The real NumPy run recorded with --scope advised, 275.4 s to the last
	 * vmI-end (analysis/results/guests/; "of RAM": of guest RAM). Fitted with
	 * workloads/vm/fit-guests-tcg.sh (previous values in brackets); every
	 * column within 10%, the end-mark ones the most sensitive to a change.
	 */
	[GEN_CAL_GUESTS_TCG] = {
		/* fio's boot, the same image; fitted to pages_sharing 69,344 at the end,
		   54,332 as a mean (fill_end 0.24) */
		.image = 0.035, .zero = 0.07, .priv = 0.02, .fill_end = 0.35,
		/* rmap_items 28,629 (5.5% of RAM a guest) 6 s in, then slow growth;
		   fitted to 4 full scans by 10 s, 7 by 20 s, 29 in all (0, none) */
		.burst = 0.3, .burst_end = 0.02,
		/* last vmI-start at 98.0 s of 275.4 */
		.boot_end = 0.36,
		/* unique 23.7% of held = 10.3% of RAM; fitted to pages_unshared 12,951
		   as a mean (0.13) */
		.array = 0.10,
		/* the job's new pages arrive early in the work */
		.init_end = 0.42,
		/* zero 18.3% of held = 7.9% of RAM at the end; with touch_share fitted
		   to CoW 65,595 (0.07) */
		.taken = 0.055,
		/* STREAM's arrays, rewritten every ~5 s at the end: CoW 54,281 at 240 s,
		   65,052 at 260 s; swept fitted to unshared/sharing 0.238 as a mean
		   (0.12, all of the arrays) */
		.swept = 0.09, .sweep_ticks = 5, .sweep_start = 0.75,
		/* no calloc'ed work arrays: fitted to pages_sharing 69,344 at the end
		   (0.02) */
		.work = 0,
		/* 1,225 rewrites a guest per s in the work, 0.94% of RAM/s */
		.hot = 0.001,
		/* also in another guest 57.7% of held = 25% of RAM, mostly changing
		   (numpy_vm.py seeds default_rng(1)); fitted to pages_sharing (0.10) */
		.field = 0.08,
		/* corrections of merged pages are CoW: fitted to CoW 65,595
		   (outer_ticks 60, touch_share 0.25) */
		.outer_ticks = 30,
		.touch_share = 0.25,
		/* memory grows again at the end: rmap_items 150,547 at 240 s, 205,403
		   at 275.4 s (+10.5% of RAM a guest, most of it volatile there); new
		   pages written once, fitted to pages_unshared 9,312 at the end
		   (0, none) */
		.late = 0.04, .late_start = 0.87,
	},
};

/*
 * A correction to page p of the converged field: the low 16 bits of the
 * mantissa of one double (its first two bytes, little-endian), a relative
 * change below 2^-36. The page was filled with rand:<seed + p>; round r
 * touches word (w + r) mod 512 for a w fixed per page, so that word still
 * holds its rand: value, and XOR with a nonzero delta drawn from h makes
 * the new bytes differ from the old.
 */
static bool correct(struct gen *g, const char *mm, struct region r, uint64_t p, uint64_t seed,
		    unsigned round, uint64_t h)
{
	uint64_t st = gen_seed(g, TAG_TOUCH, p, 0);
	unsigned word = (unsigned)((splitmix64_next(&st) + round) % 512);
	uint64_t delta = 1 + h % 0xffff;
	uint64_t base = seed + p + (uint64_t)word * SPLITMIX64_GAMMA;
	uint64_t low = (splitmix64_next(&base) ^ delta) & 0xffff;
	uint8_t bytes[2] = { (uint8_t)low, (uint8_t)(low >> 8) };

	return gen_write_bytes(g, mm, r.vpn + p, word * 8, bytes, sizeof(bytes));
}

/*
 * Outer iterations of `period` ticks, each passing over the field in order
 * and correcting a random touch_share of its pages, so a page sits idle for
 * period / touch_share ticks on average (geometric, in whole periods). The
 * choices name the page and the round but not the guest: the guests run one
 * deterministic solver on one problem and compute the same bits here.
 */
static bool outer_step(struct gen *g, const char *mm, struct region r, uint64_t seed,
		       unsigned period, double touch_share, unsigned k)
{
	unsigned phase = k % period, round = k / period;
	uint64_t a = r.n * phase / period, b = r.n * (phase + 1) / period;

	for (uint64_t p = a; p < b && !g->failed; p++) {
		uint64_t h = gen_seed(g, TAG_TOUCH, p, round + 1);

		if ((double)(h >> 11) * 0x1p-53 < touch_share)
			correct(g, mm, r, p, seed, round, h);
	}
	return !g->failed;
}

bool gen_number_crunching(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	struct guest *gs = g_new0(struct guest, sz->vms);
	struct layout lay;
	struct region array, swept, work, hot, field, taken, late;
	const struct nc_params *nc = &nc_cal[o->calibration];
	unsigned boot_end = at_frac(sz, nc->boot_end), init_end = at_frac(sz, nc->init_end);
	unsigned sweep_start = at_frac(sz, nc->sweep_start);
	uint64_t field_seed = gen_seed(g, TAG_FIELD, 0, 0);

	guests_start(g, sz, gs, &lay, nc->image, nc->zero, nc->priv);
	array = carve(&lay, nc->array);
	/* The arrays' first part is the output the sweeps rewrite; the rest is input. */
	swept = array;
	swept.n = (uint64_t)((double)sz->pages * nc->swept);
	if (swept.n > array.n)
		swept.n = array.n;
	work = carve(&lay, nc->work);
	hot = carve(&lay, nc->hot);
	field = carve(&lay, nc->field);
	late = carve(&lay, nc->late);
	taken = array;
	taken.n = (uint64_t)((double)sz->pages * nc->taken);
	if (taken.n > array.n)
		taken.n = array.n;
	for (unsigned k = 0; k < sz->ticks && !g->failed; k++) {
		gen_at(g, tick_us(sz, k));
		guests_boot_burst(g, gs, sz->vms, nc->burst, at_frac(sz, nc->burst_end),
				  at_frac(sz, nc->fill_end), k);
		for (unsigned v = 0; v < sz->vms; v++) {
			const char *mm = gs[v].mm;
			uint64_t from, n;

			spread(taken.n, 0, boot_end, k, &from, &n);
			if (n)
				gen_fill(g, mm, taken.vpn + from, n, CONTENT_ZERO, 0);
			/*
			 * Arrays initialised with distinct values, work arrays calloc'ed,
			 * the converged field the same in every guest.
			 */
			spread(array.n, boot_end, init_end, k, &from, &n);
			seq_part(g, mm, array, from, n, gen_seed(g, TAG_ARRAY, v, 0));
			spread(work.n, boot_end, init_end, k, &from, &n);
			if (n)
				gen_fill(g, mm, work.vpn + from, n, CONTENT_ZERO, 0);
			spread(field.n, boot_end, init_end, k, &from, &n);
			seq_part(g, mm, field, from, n, field_seed);
			/* Sweeps: every output page gets new values once per sweep. */
			if (k >= sweep_start)
				rolling(g, mm, swept, nc->sweep_ticks,
					k - sweep_start + nc->sweep_ticks, TAG_ARRAY, v);
			/* New memory at the end of the job: written once. */
			spread(late.n, at_frac(sz, nc->late_start), sz->ticks, k, &from, &n);
			seq_part(g, mm, late, from, n, gen_seed(g, TAG_DATA, v, 1));
			if (k >= init_end) {
				rolling(g, mm, hot, 1, k, TAG_HOT, v);
				outer_step(g, mm, field, field_seed, nc->outer_ticks, nc->touch_share,
					   k - init_end);
			}
		}
	}
	g_free(gs);
	return finish(g, sz);
}

/* ---- vm-clones ---- */

static const struct {
	double image, zero, priv, hot, boot_end;
} vc = { .image = 0.35, .zero = 0.25, .priv = 0.02, .hot = 0.002, .boot_end = 0.05 };

bool gen_vm_clones(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	struct guest *gs = g_new0(struct guest, sz->vms);
	struct layout lay;
	struct region hot;
	unsigned boot_end = at_frac(sz, vc.boot_end);

	guests_start(g, sz, gs, &lay, vc.image, vc.zero, vc.priv);
	hot = carve(&lay, vc.hot);
	for (unsigned k = 0; k < sz->ticks && !g->failed; k++) {
		gen_at(g, tick_us(sz, k));
		guests_boot(g, gs, sz->vms, boot_end, k);
		for (unsigned v = 0; v < sz->vms && k >= boot_end; v++)
			rolling(g, gs[v].mm, hot, 1, k, TAG_HOT, v);
	}
	g_free(gs);
	return finish(g, sz);
}

/* ---- zero-heavy ---- */

static const struct {
	double image, zero, priv, window, boot_end;
	unsigned lag;	/* ticks a taken page holds data before it is freed and zeroed */
} zh = { .image = 0.03, .zero = 0.85, .priv = 0.05, .window = 0.002, .boot_end = 0.03,
	 .lag = 50 };

bool gen_zero_heavy(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	struct guest *gs = g_new0(struct guest, sz->vms);
	struct layout lay;
	unsigned boot_end = at_frac(sz, zh.boot_end);

	guests_start(g, sz, gs, &lay, zh.image, zh.zero, zh.priv);
	struct region zero = gs[0].zero;
	uint64_t win = (uint64_t)((double)sz->pages * zh.window);
	uint64_t nwin = win ? zero.n / win : 0;
	/* Never free the window being taken in the same tick. */
	unsigned lag = nwin / 2 < zh.lag ? (unsigned)(nwin / 2) : zh.lag;

	for (unsigned k = 0; k < sz->ticks && !g->failed; k++) {
		gen_at(g, tick_us(sz, k));
		guests_boot(g, gs, sz->vms, boot_end, k);
		if (k < boot_end || !nwin)
			continue;
		unsigned r = k - boot_end;

		for (unsigned v = 0; v < sz->vms; v++) {
			const char *mm = gs[v].mm;

			/* Allocate: data into the next window of free memory... */
			gen_fillseq(g, mm, zero.vpn + (r % nwin) * win, win,
				    gen_seed(g, TAG_DATA, v, r));
			/* ...and free (init_on_free zeroes) what was taken lag ticks ago. */
			if (lag && r >= lag)
				gen_fill(g, mm, zero.vpn + ((r - lag) % nwin) * win, win,
					 CONTENT_ZERO, 0);
		}
	}
	g_free(gs);
	return finish(g, sz);
}
