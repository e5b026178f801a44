/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace record: one line of a ksmtrace (traces/FORMAT.md),
 * parsed and validated. Readers hand records out one at a time so that a
 * trace of any size is read in constant memory.
 */
#ifndef KSMSIM_TRACES_TRACE_H
#define KSMSIM_TRACES_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#define TRACE_PAGE_SIZE 4096u
#define TRACE_NAME_MAX 64	/* mm names and mark labels */
#define TRACE_VPN_LIMIT (UINT64_C(1) << 32)
/* Longest text line, comments included: bounds the reader's memory. */
#define TRACE_LINE_MAX 65536u
/*
 * Versions of the text header and binary form (FORMAT.md): 2 adds blobs,
 * 3 adds fork and prctl, 4 adds digest content.
 */
#define TRACE_VERSION_MIN 1
#define TRACE_VERSION_MAX 4
/* A digest: content's bytes (XXH3_128bits in ksmsim's writers). */
#define TRACE_DIGEST_LEN 16u

enum trace_verb {
	TRACE_SPAWN,
	TRACE_MAP,
	TRACE_ADVISE,
	TRACE_WRITE,
	TRACE_FILL,
	TRACE_FILLSEQ,
	TRACE_UNMAP,
	TRACE_EXIT,
	TRACE_SET,
	TRACE_SETTLE,
	TRACE_MARK,
	TRACE_FORK,	/* v3 */
	TRACE_PRCTL,	/* v3: prctl(PR_SET_MEMORY_MERGE) */
	TRACE_NR_VERBS
};

/* How a write describes the page's new bytes (FORMAT.md, "Page contents"). */
enum content_form {
	CONTENT_ZERO,	/* all zero */
	CONTENT_BYTE,	/* every byte = value */
	CONTENT_RAND,	/* SplitMix64 from seed = value */
	CONTENT_WORD,	/* u64 word index = off, set to value */
	CONTENT_PATCH,	/* len bytes at off from rand:value */
	CONTENT_BYTES,	/* len bytes at off, taken from data */
	CONTENT_BLOB,	/* v2: the whole page is data (off 0, len 4096); value = blob id */
	CONTENT_DIGEST,	/* v4: a 128-bit digest of the page stands for it (data[0..15], len 16) */
	CONTENT_NR_FORMS
};

struct trace_content {
	enum content_form form;
	uint64_t value;
	uint32_t off;
	uint32_t len;
	uint8_t data[TRACE_PAGE_SIZE];	/* CONTENT_BYTES, CONTENT_BLOB, CONTENT_DIGEST; len bytes valid */
};

/* Knobs, in /sys/kernel/mm/ksm/ spelling (knob_table in trace.c). */
enum ksm_knob {
	KNOB_RUN,
	KNOB_PAGES_TO_SCAN,
	KNOB_SLEEP_MILLISECS,
	KNOB_USE_ZERO_PAGES,
	KNOB_MAX_PAGE_SHARING,
	KNOB_MERGE_ACROSS_NODES,
	KNOB_SMART_SCAN,
	KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS,
	KNOB_ADVISOR_MODE,	/* value 0 = none, 1 = scan-time */
	KNOB_ADVISOR_MAX_CPU,
	KNOB_ADVISOR_MIN_PAGES_TO_SCAN,
	KNOB_ADVISOR_MAX_PAGES_TO_SCAN,
	KNOB_ADVISOR_TARGET_SCAN_TIME,
	KNOB_NR
};

#define ADVISOR_NONE 0
#define ADVISOR_SCAN_TIME 1

struct trace_record {
	uint64_t t_us;
	enum trace_verb verb;
	uint64_t line;		/* text: line number; binary: record index + 1 */
	char mm[TRACE_NAME_MAX + 1];	/* spawn map advise write fill fillseq unmap exit prctl; fork: parent */
	char child[TRACE_NAME_MAX + 1];	/* fork: the new mm */
	uint32_t node;		/* spawn */
	uint64_t vpn;		/* map advise write fill fillseq unmap */
	uint64_t npages;	/* map advise fill fillseq unmap; 1 for write */
	bool mergeable;		/* advise mergeable|unmergeable (thp_advice 0) */
	uint8_t thp_advice;	/* advise (v3): 0, or TRACE_ADVICE_HUGEPAGE / _NOHUGEPAGE */
	uint64_t seed;		/* fillseq */
	struct trace_content content;	/* write fill */
	enum ksm_knob knob;	/* set */
	uint64_t value;		/* set: knob value; settle: n; prctl: memory-merge 0 or 1 */
	char label[TRACE_NAME_MAX + 1];	/* mark */
};

/* advise hugepage|nohugepage (v3): MADV_HUGEPAGE / MADV_NOHUGEPAGE */
#define TRACE_ADVICE_HUGEPAGE 1
#define TRACE_ADVICE_NOHUGEPAGE 2

/* A knob's sysfs name, the kernel's default and the values it accepts. */
struct knob_info {
	const char *name;
	uint64_t def;
	uint64_t min, max;
};

/* Indexed by enum ksm_knob. */
extern const struct knob_info knob_table[KNOB_NR];

/*
 * The advisor's rules over the other knobs, as the kernel's sysfs stores
 * apply them, for the trace checker (traces/check.c) and the model
 * (sim/ksm.c) alike; knobs is indexed by enum ksm_knob. While an advisor
 * drives pages_to_scan a write of it is refused (EINVAL); when
 * advisor_mode changes, set_advisor_defaults() puts pages_to_scan at its
 * default without an advisor, at advisor_min_pages_to_scan with one
 * (knobs holding the new mode).
 */
bool knob_pages_to_scan_refused(const uint64_t *knobs);
uint64_t knob_advisor_pages_to_scan(const uint64_t *knobs);
/*
 * The settle rule, for the checker and the model's loop (sim/loop.c)
 * alike: a settle can end only while ksmd runs (run 1), scans something
 * (pages_to_scan > 0) and has an mm to scan (a live mm with a mergeable
 * range: a registered mm, in the model). NULL when it can; else why not,
 * "settle needs ..." (g_free).
 */
char *knob_settle_refusal(const uint64_t *knobs, bool mergeable_mm);
extern const char *const verb_names[TRACE_NR_VERBS];

/*
 * Make c the digest of a page's 4096 bytes (CONTENT_DIGEST, version 4):
 * XXH3_128bits, its 16 bytes in XXH128_canonicalFromHash order (high half
 * first, big-endian), as the recorder and `trace convert --content digest`
 * write it.
 */
void trace_content_digest(struct trace_content *c, const uint8_t *page);
/*
 * A digest page's stand-in bytes, as the model and `ksmsim live` store them
 * (sim/MODEL.md, "Digest content"): the 16 digest bytes, then the bytes of
 * rand:<this seed> from byte 16 on. The seed: the digest's two 8-byte
 * halves read little-endian, XORed together and with 0x6469676573740000
 * ("digest" in ASCII), so that a digest page is seeded apart from rand:.
 */
uint64_t trace_digest_seed(const struct trace_content *c);

/* Returns -1 when the name is not a knob. */
int knob_lookup(const char *name);

#endif
