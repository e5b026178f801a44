/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Synthetic workload generators behind `ksmsim gen`. A generator walks its
 * own clock forward and hands records to a trace_writer as it goes, so a
 * trace of any length is produced in memory bounded by the workload's size,
 * never by its duration.
 */
#ifndef KSMSIM_WORKLOADS_GEN_H
#define KSMSIM_WORKLOADS_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "traces/trace.h"
#include "traces/writer.h"

#define GEN_PAGES_PER_MIB 256u
/* Guest RAM sits at this vpn in every VM's mm (addresses look like a qemu mapping). */
#define GEN_GUEST_BASE 0x100000u

/*
 * Which measurements the guest workloads' parameters are fitted to (one
 * parameter table per workload and calibration, in gen_guests.c).
 */
enum gen_calibration {
	GEN_CAL_2017,		/* the 2017 KVM experiment, 4 x 4 GiB, 1800 s: the default */
	GEN_CAL_GUESTS_TCG,	/* the real 4 x 512 MiB TCG guests (results section 8) */
	GEN_CALIBRATIONS
};

struct gen_calibration_info {
	const char *name;
	const char *summary;
	/*
	 * Time steps: false, the workload's def_ticks whatever the duration;
	 * true, one per second of trace time at full size (duration / --scale).
	 */
	bool tick_per_second;
};

const struct gen_calibration_info *gen_calibration_info(enum gen_calibration c);
/* By name (exact, case-insensitive); false if there is none. */
bool gen_calibration_find(const char *name, enum gen_calibration *c);
/* The calibration name within a typo of name (util/nearest.h), or NULL. */
const char *gen_calibration_nearest(const char *name);

/* Options common to every workload; 0 / negative means "the workload's default". */
struct gen_opts {
	uint64_t seed;
	unsigned vms;
	uint64_t mem_mib;
	double duration_s;
	double scale;
	uint64_t pages_to_scan;
	uint64_t sleep_ms;
	uint64_t marks_every_ms;
	int use_zero_pages;	/* -1: leave the kernel's default */
	const char *hash;	/* the checksum checksum-adversarial attacks; NULL: HASH_DEFAULT */
	enum gen_calibration calibration;	/* GEN_CAL_2017 unless a workload has others */
	bool advisor;		/* 'set advisor_mode scan-time' at t=0, after pages_to_scan */
	/* probe only: known pages, the first probe write (s; negative: duration / 10), its period (0: once) */
	uint64_t probe_pages;
	double probe_at_s, probe_every_s, probe_spread_s;
	/* probe only: how the attacker reads its copies (the CoW write, munmap, MADV_UNMERGEABLE) */
	enum gen_probe_channel { GEN_PROBE_COW, GEN_PROBE_UNMAP, GEN_PROBE_UNMERGE } probe_channel;
};
#define GEN_PROBE_DEF_PAGES 100

/* Sizes a workload resolved from its defaults and the options. */
struct gen_size {
	unsigned vms;
	uint64_t pages;		/* per VM (or process) */
	uint64_t duration_us;
	unsigned ticks;		/* the workload's time steps over the duration */
};

struct progress;

struct gen {
	trace_writer *w;
	struct progress *progress;	/* NULL: none; else poked every few records */
	uint64_t duration_us;
	struct trace_record rec;
	GError **error;
	bool failed;
	uint64_t now_us;
	uint64_t mark_period_us;
	uint64_t next_mark_us;
	unsigned marks;
	uint64_t seed;
	uint64_t records;
};

/* xoshiro256** seeded through SplitMix64: the generators' own randomness. */
struct gen_rng {
	uint64_t s[4];
};
void gen_rng_init(struct gen_rng *r, uint64_t seed);
uint64_t gen_rng_next(struct gen_rng *r);
uint64_t gen_rng_below(struct gen_rng *r, uint64_t n);	/* uniform in [0, n) */

/* A 64-bit seed derived from the trace seed and a few labels: same inputs, same seed. */
uint64_t gen_seed(const struct gen *g, uint64_t a, uint64_t b, uint64_t c);

/* Time: moves the clock (never backwards), emitting the periodic marks passed. */
bool gen_at(struct gen *g, uint64_t t_us);

bool gen_spawn(struct gen *g, const char *mm);
bool gen_exit(struct gen *g, const char *mm);
bool gen_map(struct gen *g, const char *mm, uint64_t vpn, uint64_t n);
bool gen_advise(struct gen *g, const char *mm, uint64_t vpn, uint64_t n, bool mergeable);
bool gen_unmap(struct gen *g, const char *mm, uint64_t vpn, uint64_t n);
/* fill with one content: form CONTENT_ZERO, CONTENT_BYTE (value) or CONTENT_RAND (value). */
bool gen_fill(struct gen *g, const char *mm, uint64_t vpn, uint64_t n,
	      enum content_form form, uint64_t value);
bool gen_fillseq(struct gen *g, const char *mm, uint64_t vpn, uint64_t n, uint64_t seed);
bool gen_write_word(struct gen *g, const char *mm, uint64_t vpn, unsigned word, uint64_t value);
bool gen_write_bytes(struct gen *g, const char *mm, uint64_t vpn, unsigned off,
		     const uint8_t *bytes, unsigned len);
bool gen_set(struct gen *g, enum ksm_knob knob, uint64_t value);
bool gen_settle(struct gen *g, uint64_t n);
bool gen_mark(struct gen *g, const char *label);

struct gen_workload {
	const char *name;
	const char *summary;
	const char *help;	/* what it models and its default sizes */
	unsigned def_vms;
	uint64_t def_mem_mib;
	double def_duration_s;
	unsigned def_ticks;	/* time steps at the default duration */
	bool (*run)(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
	bool takes_hash;	/* reads gen_opts.hash; its gen line records hash=NAME */
	bool calibrated;	/* has every calibration, not only GEN_CAL_2017 */
	bool takes_probe;	/* reads gen_opts.probe_*; its gen line records them */
};

const struct gen_workload *gen_workloads(size_t *n);
const struct gen_workload *gen_workload_find(const char *name);
/*
 * Sizes from the defaults, the options, --scale and the calibration's clock;
 * NULL or an error message (also for a calibration the workload lacks).
 */
char *gen_resolve(const struct gen_workload *wl, const struct gen_opts *o, struct gen_size *sz);

/*
 * Writes wl's trace to w, which stays the caller's to close or abort: a
 * comment naming the workload and its sizes, the t=0 knobs (pages_to_scan,
 * sleep_millisecs, use_zero_pages if given) ending with 'set run 1', then
 * the workload. progress (NULL: none) follows the records; *records gets
 * their count. False on a failed write (*error set) or generation.
 */
bool gen_write(trace_writer *w, const struct gen_workload *wl, const struct gen_opts *o,
	       const struct gen_size *sz, struct progress *progress, uint64_t *records,
	       GError **error);

/* Workloads (gen_guests.c, gen_flood.c, gen_crc.c, gen_collide.c, gen_probe.c,
 * gen_large_tree.c). */
bool gen_kernel_build(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_iozone(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_number_crunching(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_vm_clones(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_zero_heavy(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_ksm_flood(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_crc_adversarial(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_checksum_adversarial(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_probe(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_large_tree(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);
bool gen_large_tree_crc(struct gen *g, const struct gen_opts *o, const struct gen_size *sz);

#endif
