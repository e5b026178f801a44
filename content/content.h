/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page contents without 4 KiB per page.
 *
 * A content is an immutable description of the 4096 bytes of a page: a base
 * (zero, one repeated byte, or SplitMix64 words from a seed) plus a few
 * byte-range overlays, or, once overlays grow large, the materialised bytes.
 * A plain base without overlays is an immediate value encoded in the handle
 * itself (no object, no refcount: content_ref/unref do nothing); the others
 * are reference-counted objects, interned, so pages that hold structurally
 * equal contents share one handle. Handles are never NULL and are compared
 * with ==; contents built by different routes may still hold the same
 * bytes, which content_cmp() finds by comparing bytes.
 */
#ifndef KSMSIM_CONTENT_CONTENT_H
#define KSMSIM_CONTENT_CONTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hashes/hash.h"
#include "traces/trace.h"
#include "util/splitmix64.h"

typedef struct content content;

/*
 * A store of contents: every call below works in the current one. A run
 * owns its own (sim/run.c), so several models can live in one process one
 * after another or interleaved, each switching to its store; contents made
 * with no store in use live in the process's own. A handle is valid only
 * in the store that made it, until that store is freed.
 */
struct content_store;
struct content_store *content_store_new(void);
/* Makes s current (NULL: the process's store); returns the store that was. */
struct content_store *content_store_use(struct content_store *s);
/*
 * s is about to be freed whole: its owner drops its references one by one
 * first, and a table halved at each eighth would hold both tables at once
 * (the old one full) for nothing, the run's peak memory at its very end.
 */
void content_store_closing(struct content_store *s);
/* Frees s and every content in it; s must not be current. */
void content_store_free(struct content_store *s);

/* Constructors return a new reference. */
content *content_zero(void);
content *content_rand(uint64_t seed);
/* The content a write of tc gives a page whose bytes are now cur (NULL: zero). */
content *content_apply(const content *cur, const struct trace_content *tc);

content *content_ref(content *c);
void content_unref(content *c);

/* memcmp() order of the two pages' bytes: <0, 0, >0. */
int content_cmp(const content *a, const content *b);
static inline bool content_equal(const content *a, const content *b)
{
	return a == b || content_cmp(a, b) == 0;
}
/* First 8 bytes read big-endian: orders like memcmp on those bytes. */
uint64_t content_key8(const content *c);
bool content_is_zero(const content *c);

/*
 * The 4096 bytes, from a small cache of recently materialised pages: valid
 * until the next call into this module.
 */
const uint8_t *content_peek(const content *c);

/* Writes the 4096 bytes to buf and returns buf. */
uint8_t *content_materialize(const content *c, uint8_t *buf);

/*
 * The page checksum under fn, computed once per object and remembered, and
 * for immediates kept in a fixed-size cache (a run uses one checksum
 * function; a different fn recomputes). Counts the real computations in
 * *computed when not NULL.
 */
uint64_t content_checksum(content *c, page_hash_fn fn, uint64_t *computed);

/* A 64-bit hash of the bytes (not the structure): for grouping equal pages. */
uint64_t content_digest(content *c);

/* Live content objects (immediates are none) and their heap bytes: memory reporting. */
void content_stats(uint64_t *objects, uint64_t *bytes);
/*
 * What the store holds now: the object pool's chunks, the intern table, the
 * objects' bytes, the checksums' high halves (64-bit functions only) and
 * the immediates' checksum and digest caches.
 */
uint64_t content_footprint(void);

#endif
