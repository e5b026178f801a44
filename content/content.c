// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page contents as base + overlays, interned.
 *
 * Most pages of a trace are a base (zero, a repeated byte, SplitMix64 words)
 * with at most a few small changes, so a content keeps the base's parameters
 * and the changed byte ranges only; when changes grow past OVERLAY_MAX the
 * page is kept whole. Overlays are canonical (sorted, coalesced, and only
 * bytes that differ from the base), and equal descriptions are interned in
 * one hash table, so equal pages usually share one object and compare by
 * pointer. Comparison otherwise goes through the first 8 bytes and, only
 * when those tie, the materialised bytes.
 *
 * Plain contents (zero, a repeated byte, rand, none with overlays) are
 * immediates: the handle encodes them, with no object, table slot or
 * refcount. Pool objects are 8-byte aligned and lie above 2048 and below
 * 2^56 (user space on every 64-bit Linux; pool_alloc() checks each chunk),
 * so a handle h is
 *   8 * (b + 1), 8..2048         the byte b page; zero is byte 0, h = 8
 *   else 8-aligned below 2^56    a pool object
 *   anything else                rand:seed, h = seed ^ 2^63
 * Flipping the top bit keeps every seed below 2^63 an immediate; the seeds
 * whose h would look like an object (top byte 0x80, a multiple of 8: one
 * random seed in 2048) are interned objects, as is every content with
 * overlays or kept whole. A plain description is canonical, so equal plain
 * pages get equal handles, and no handle is NULL.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>
#include "content/content.h"
#include "util/signals.h"

/* Under ASan a free pool object is poisoned, so misuse is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define CONTENT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONTENT_ASAN 1
#endif
#endif
#ifdef CONTENT_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#define POOL_POISON(c) ASAN_POISON_MEMORY_REGION((c), sizeof(content))
#define POOL_UNPOISON(c) ASAN_UNPOISON_MEMORY_REGION((c), sizeof(content))
/*
 * ASan's shadow outlives munmap: a chunk unmapped with poisoned objects in
 * it leaves its addresses poisoned for the next mmap there (the intern
 * table's, a second run's chunk), a false use-after-poison. Unpoison first.
 */
#define POOL_UNPOISON_ALL(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
/* mmap'd chunks are no root of LeakSanitizer's: say so, or live pages' bytes look leaked */
#define POOL_ROOT(p, n) __lsan_register_root_region((p), (n))
#define POOL_UNROOT(p, n) __lsan_unregister_root_region((p), (n))
#else
#define POOL_POISON(c) ((void)(c))
#define POOL_UNPOISON(c) ((void)(c))
#define POOL_UNPOISON_ALL(p, n) ((void)(p), (void)(n))
#define POOL_ROOT(p, n) ((void)(p), (void)(n))
#define POOL_UNROOT(p, n) ((void)(p), (void)(n))
#endif

#define PAGE TRACE_PAGE_SIZE
#define OVERLAY_MAX 512		/* bytes kept as overlays before going whole */
#define OVERLAY_RUNS_MAX 32

enum base_kind { BASE_ZERO, BASE_BYTE, BASE_RAND, BASE_FULL };

#define BYTE_TOP UINT64_C(2048)		/* byte 255's handle */
#define OBJ_TOP (UINT64_C(1) << 56)
#define RAND_FLIP (UINT64_C(1) << 63)
#define IMM_ZERO ((content *)(uintptr_t)8)

struct overlay {
	uint16_t off;
	uint16_t len;
};

/*
 * 32 bytes: a run that rewrites pages keeps two objects a page at its
 * peak (the page's bytes, and the rmap_item's bytes at the last visit),
 * so what an object holds is what the hot paths need and nothing they
 * can recompute. A rewritten word (an overlay and its 8 bytes: 12) is
 * kept in the object instead of a heap block of its own (32 bytes with
 * malloc's header, and a pointer). Not kept: the first 8 bytes and the
 * description's hash, each a few instructions from the description
 * (compute_key8(), compute_shash()); the digest, which only the oracle
 * asks for, in the store's digest cache (content_digest()); the pool
 * index, which the object's address gives (obj_idx()); the checksum's
 * high half, which a 32-bit function (the default xxhash, crc32c) leaves
 * zero and a 64-bit one keeps in the store's side arrays (csum_hi). The
 * checksum's function is the store's (csum_fn), one a run, and the page
 * cache names an object by its handle, as it is unique while the object
 * lives (content_unref() drops its cached bytes and digest), so neither
 * takes a word here.
 */
#define INLINE_EXTRA 12

struct content {
	uint32_t refcount;
	uint8_t kind : 2;		/* enum base_kind */
	uint8_t inline_extra : 1;	/* the extra bytes are in[], else in[] holds a pointer to them */
	uint8_t csum_valid : 1;		/* csum is of the store's csum_fn */
	uint8_t n_over;
	uint16_t over_bytes;	/* at most OVERLAY_MAX */
	uint64_t base;		/* byte value or seed */
	uint32_t csum;		/* the low half; the high one in csum_hi, or 0 */
	/*
	 * BASE_FULL: PAGE bytes; else n_over overlays then over_bytes bytes:
	 * here, or on the heap at the pointer kept here (extra_of()).
	 */
	uint8_t in[INLINE_EXTRA];
};

G_STATIC_ASSERT(sizeof(struct content) == 32);
G_STATIC_ASSERT(INLINE_EXTRA >= sizeof(uint8_t *));
G_STATIC_ASSERT(OVERLAY_MAX < (1u << 15));
/* 64-bit handles; every object 8-byte aligned in its chunk */
G_STATIC_ASSERT(sizeof(uintptr_t) == 8 && _Alignof(content) >= 8 && sizeof(content) % 8 == 0);

/* 8-aligned below 2^56: an object, or a byte page at 2048 and under */
static inline bool aligned_low(uint64_t h)
{
	return !(h & 7) && h < OBJ_TOP;
}

static inline bool is_imm(const content *c)
{
	uint64_t h = (uintptr_t)c;
	return !aligned_low(h) || h <= BYTE_TOP;
}

static inline bool is_byte(uint64_t h)
{
	return h <= BYTE_TOP && !(h & 7);
}

static inline bool rand_fits(uint64_t seed)
{
	return !aligned_low(seed ^ RAND_FLIP);
}

static inline content *imm_rand(uint64_t seed)
{
	return (content *)(uintptr_t)(seed ^ RAND_FLIP);
}

static inline content *imm_byte(uint8_t b)
{
	return (content *)(uintptr_t)(8 * ((uint64_t)b + 1));
}

/* An immediate's base, as an object would hold it. */
static inline void imm_base(const content *c, uint8_t *kind, uint64_t *base)
{
	uint64_t h = (uintptr_t)c;
	if (is_byte(h)) {
		*base = h / 8 - 1;
		*kind = *base ? BASE_BYTE : BASE_ZERO;
	} else {
		*base = h ^ RAND_FLIP;
		*kind = BASE_RAND;
	}
}

/* As compute_key8() gives it: the first word's little-endian bytes read big-endian. */
static inline uint64_t imm_key8(const content *c)
{
	uint64_t h = (uintptr_t)c;
	if (is_byte(h))
		return (h / 8 - 1) * UINT64_C(0x0101010101010101);
	uint64_t state = h ^ RAND_FLIP;
	return GUINT64_TO_BE(GUINT64_TO_LE(splitmix64_next(&state)));
}

/*
 * The intern table: open addressing with linear probing over 8-byte slots
 * that keep the description hash beside the object's pool index, so a probe
 * touches one cache line and no object unless the hashes agree. Deletion
 * shifts later entries back instead of leaving tombstones, so a long run of
 * writes and last unrefs never needs a rehash to clear them out.
 */
struct slot {
	uint32_t hash;
	uint32_t idx;		/* 0: empty */
};

#define TABLE_MIN 1024u		/* slots; a power of 2 */
/*
 * Grow past 7/8 full (to 7/16), shrink below 1/8 (to 1/4). A slot is 8
 * bytes against the object's own, so a fuller table costs less memory
 * than its longer probes cost time: a probe of 8 slots is one cache line,
 * and the hashes in the slots keep a probe from touching any object.
 */
#define TABLE_GROW(cap) ((cap) / 8 * 7)
#define TABLE_SHRINK(cap) ((cap) / 8)


/*
 * The pool: objects in chunks of CHUNK_OBJS, named by a 32-bit index,
 * freed ones on a list threaded through their base field. A write usually
 * makes one object and frees another, so they are recycled. A chunk is
 * aligned to its size, and its first slot is no object but holds the
 * chunk's number, so an object's index is its address's business
 * (obj_idx()) and takes no bytes of its own; index 0, chunk 0's first
 * slot, is never handed out.
 */
#define CHUNK_SHIFT 16
#define CHUNK_OBJS (1u << CHUNK_SHIFT)
#define CHUNK_BYTES ((size_t)CHUNK_OBJS * sizeof(content))	/* 2 MiB: one huge page */

/* The heap block of an object whose extra bytes are not in it (NULL: none). */
static inline uint8_t *extra_ptr(const content *c)
{
	uint8_t *p;
	memcpy(&p, c->in, sizeof(p));
	return p;
}

static inline void set_extra_ptr(content *c, uint8_t *p)
{
	memcpy(c->in, &p, sizeof(p));
}

static inline const uint8_t *extra_of(const content *c)
{
	return c->inline_extra ? c->in : extra_ptr(c);
}

static inline const struct overlay *overlays(const content *c)
{
	return (const struct overlay *)extra_of(c);
}

static inline const uint8_t *overlay_data(const content *c)
{
	/* a base without overlays has no extra block: no offset from NULL */
	return c->n_over ? extra_of(c) + c->n_over * sizeof(struct overlay) : extra_of(c);
}

static size_t extra_size(const content *c)
{
	if (c->kind == BASE_FULL)
		return PAGE;
	return c->n_over * sizeof(struct overlay) + c->over_bytes;
}

/* The bytes of its own the object holds on the heap. */
static size_t heap_extra(const content *c)
{
	return c->inline_extra ? 0 : extra_size(c);
}

static void fill_base(uint8_t *buf, uint8_t kind, uint64_t base)
{
	switch (kind) {
	case BASE_ZERO:
		memset(buf, 0, PAGE);
		break;
	case BASE_BYTE:
		memset(buf, (int)base, PAGE);
		break;
	case BASE_RAND: {
		uint64_t state = base;
		for (unsigned i = 0; i < PAGE / 8; i++) {
			uint64_t w = GUINT64_TO_LE(splitmix64_next(&state));
			memcpy(buf + 8 * i, &w, 8);
		}
		break;
	}
	}
}

static void put_overlays(const content *c, uint8_t *buf);

/* An object's bytes. */
static void materialize_raw(const content *c, uint8_t *buf)
{
	if (c->kind == BASE_FULL) {
		memcpy(buf, extra_of(c), PAGE);
		return;
	}
	fill_base(buf, c->kind, c->base);
	put_overlays(c, buf);
}

static void put_overlays(const content *c, uint8_t *buf)
{
	const struct overlay *o = overlays(c);
	const uint8_t *d = overlay_data(c);
	for (unsigned i = 0; i < c->n_over; i++) {
		memcpy(buf + o[i].off, d, o[i].len);
		d += o[i].len;
	}
}

/*
 * A few recently materialised pages. A tree walk compares one scanned page
 * with many others, so the scanned page's bytes are reused across the walk.
 */
#define CACHE_WAYS 4

/* A direct-mapped cache of an immediate's checksum or digest (content_checksum()). */
struct imm_slot {
	uint64_t handle;	/* 0: empty (no immediate is 0) */
	uint64_t value;
};

struct imm_cache {
	struct imm_slot *slot;
	page_hash_fn fn;
};

/*
 * Everything a store holds: its objects, their intern table, the
 * materialised pages and the immediates' caches. A run owns one
 * (content_store_new(), content_store_use()), so several models live in
 * one process, each with its own pages and footprint.
 */
struct content_store {
	struct slot *slots;		/* the intern table */
	size_t table_mask, table_count;
	content **chunks;		/* the pool */
	size_t n_chunks;
	uint32_t pool_next, pool_free;
	page_hash_fn csum_fn;		/* what the objects' valid csums are of */
	/*
	 * The checksums' high halves, a chunk's array beside each chunk, once
	 * a checksum had one (a 64-bit function); until then every high half
	 * met was 0, so an array starts zeroed. NULL: none yet.
	 */
	uint32_t **csum_hi;
	uint64_t live_objects, live_bytes;
	bool closing;			/* content_store_closing(): the table never shrinks */
	struct {
		uint64_t id;		/* the handle of the page whose bytes these are; 0: none */
		uint64_t stamp;
		uint8_t buf[PAGE] __attribute__((aligned(64)));
	} cache[CACHE_WAYS];
	uint64_t cache_clock;
	struct imm_cache csum_cache, digest_cache;
};

/* The process's store, for contents made outside any run's (the generators', tests'). */
static struct content_store process_store = { .pool_next = 1 };
/* The store every call works in. */
static struct content_store *store = &process_store;

static const uint8_t *page_bytes(const content *c)
{
	/* named by the handle: an object's is its own until content_unref() drops it */
	uint64_t key = (uintptr_t)c;
	if (!is_imm(c) && c->kind == BASE_FULL)
		return extra_of(c);
	unsigned victim = 0;
	for (unsigned i = 0; i < CACHE_WAYS; i++) {
		if (store->cache[i].id == key) {
			store->cache[i].stamp = ++store->cache_clock;
			return store->cache[i].buf;
		}
		if (store->cache[i].stamp < store->cache[victim].stamp)
			victim = i;
	}
	if (is_imm(c)) {
		uint8_t kind;
		uint64_t base;
		imm_base(c, &kind, &base);
		fill_base(store->cache[victim].buf, kind, base);
	} else {
		materialize_raw(c, store->cache[victim].buf);
	}
	store->cache[victim].id = key;
	store->cache[victim].stamp = ++store->cache_clock;
	return store->cache[victim].buf;
}

uint8_t *content_materialize(const content *c, uint8_t *buf)
{
	memcpy(buf, page_bytes(c), PAGE);
	return buf;
}

/*
 * Zeroed memory straight from mmap, asking for huge pages: every write and
 * every last unref touches a random slot and object, and with 4 KiB pages
 * each is a TLB miss as well as a cache miss. NULL when out of memory.
 */
static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, bytes, MADV_HUGEPAGE);	/* best effort */
	return p;
}

static inline content *pool_obj(uint32_t idx)
{
	return store->chunks[idx >> CHUNK_SHIFT] + (idx & (CHUNK_OBJS - 1));
}

/* The chunk's number is in its first slot; the offset in the chunk gives the rest. */
static inline uint32_t obj_idx(const content *c)
{
	uintptr_t at = (uintptr_t)c, chunk = at & ~(uintptr_t)(CHUNK_BYTES - 1);
	uint32_t n;
	memcpy(&n, (const void *)chunk, sizeof(n));
	return n << CHUNK_SHIFT | (uint32_t)((at - chunk) / sizeof(content));
}

/* CHUNK_BYTES zeroed, aligned to CHUNK_BYTES (NULL when out of memory). */
static content *map_chunk(void)
{
	uint8_t *p = mmap(NULL, 2 * CHUNK_BYTES, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	size_t head = (CHUNK_BYTES - (uintptr_t)p % CHUNK_BYTES) % CHUNK_BYTES;
	if (head)
		munmap(p, head);
	munmap(p + head + CHUNK_BYTES, CHUNK_BYTES - head);
	madvise(p + head, CHUNK_BYTES, MADV_HUGEPAGE);	/* best effort */
	return (content *)(p + head);
}

static inline uint32_t *csum_hi_of(const content *c)
{
	uint32_t idx = obj_idx(c);
	return &store->csum_hi[idx >> CHUNK_SHIFT][idx & (CHUNK_OBJS - 1)];
}

static void csum_hi_add_chunk(size_t n)
{
	store->csum_hi = g_renew(uint32_t *, store->csum_hi, n + 1);
	store->csum_hi[n] = g_new0(uint32_t, CHUNK_OBJS);
}

static content *pool_alloc(void)
{
	content *c;
	if (store->pool_free) {
		c = pool_obj(store->pool_free);
		POOL_UNPOISON(c);
		store->pool_free = (uint32_t)c->base;
		return c;
	}
	if (!store->pool_next)
		g_error("content: more than %u objects at once", UINT32_MAX);
	uint32_t idx = store->pool_next;
	if (!(idx & (CHUNK_OBJS - 1)) && idx)
		idx = ++store->pool_next;	/* a chunk's first slot is its header */
	if ((idx >> CHUNK_SHIFT) == store->n_chunks) {
		content **nc = g_try_renew(content *, store->chunks, store->n_chunks + 1);
		if (!nc)
			signals_out_of_memory("the page contents' chunk table");
		store->chunks = nc;
		content *chunk = map_chunk();
		if (!chunk) {
			char what[96];
			snprintf(what, sizeof(what), "page contents: a pool of %zu objects",
				 (store->n_chunks + 1) * CHUNK_OBJS);
			signals_out_of_memory(what);
		}
		/* where the handles' encoding needs objects (see the top of the file) */
		uintptr_t at = (uintptr_t)chunk;
		if (at <= BYTE_TOP || at + CHUNK_BYTES > OBJ_TOP)
			g_error("content: pool chunk at %p, outside (2 KiB, 2^56)", (void *)chunk);
		POOL_ROOT(chunk, CHUNK_BYTES);
		uint32_t n = (uint32_t)store->n_chunks;
		memcpy(chunk, &n, sizeof(n));
		if (store->csum_hi)
			csum_hi_add_chunk(store->n_chunks);
		store->chunks[store->n_chunks++] = chunk;
		for (unsigned i = 1; i < CHUNK_OBJS; i++)
			POOL_POISON(chunk + i);
	}
	store->pool_next++;
	c = pool_obj(idx);
	POOL_UNPOISON(c);
	return c;
}

static void pool_release(content *c)
{
	c->base = store->pool_free;
	store->pool_free = obj_idx(c);
	POOL_POISON(c);
}

static bool desc_equal(const content *a, const content *b)
{
	if (a->kind != b->kind || a->base != b->base || a->n_over != b->n_over ||
	    a->over_bytes != b->over_bytes)
		return false;
	/* memcmp must not see NULL, even for zero bytes */
	return !extra_size(a) || memcmp(extra_of(a), extra_of(b), extra_size(a)) == 0;
}

static struct slot *slots_alloc(size_t cap)
{
	if (cap > SIZE_MAX / sizeof(struct slot))
		return NULL;
	return map_zeroed(cap * sizeof(struct slot));
}

/*
 * Moves every entry into a table of cap slots. Growing past what memory
 * holds is fatal, with the size named; a failed shrink keeps the old table.
 */
static bool table_resize(size_t cap, bool must)
{
	struct slot *ns = slots_alloc(cap);
	if (!ns) {
		if (must) {
			char what[96];
			snprintf(what, sizeof(what), "page contents: an intern table of %zu store->slots "
				 "(%zu objects)", cap, store->table_count);
			signals_out_of_memory(what);
		}
		return false;
	}
	size_t mask = cap - 1;
	for (size_t i = 0; store->slots && i <= store->table_mask; i++) {
		if (!store->slots[i].idx)
			continue;
		size_t j = store->slots[i].hash & mask;
		while (ns[j].idx)
			j = (j + 1) & mask;
		ns[j] = store->slots[i];
	}
	if (store->slots)
		munmap(store->slots, (store->table_mask + 1) * sizeof(struct slot));
	store->slots = ns;
	store->table_mask = mask;
	return true;
}

static uint32_t compute_shash(const content *c);
static void digest_forget(const content *c);

static void table_remove(const content *c)
{
	size_t mask = store->table_mask, i = compute_shash(c) & mask;
	uint32_t idx = obj_idx(c);
	/* by identity: the object is in the table, so no description compare */
	while (store->slots[i].idx != idx) {
		g_assert(store->slots[i].idx);
		i = (i + 1) & mask;
	}
	/*
	 * Backward shift: pull each later entry of the cluster into the hole
	 * when the hole lies between its home slot and where it sits.
	 */
	for (size_t j = (i + 1) & mask; store->slots[j].idx; j = (j + 1) & mask) {
		size_t home = store->slots[j].hash & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			store->slots[i] = store->slots[j];
			i = j;
		}
	}
	store->slots[i].idx = 0;
	store->table_count--;
	if (store->table_mask + 1 > TABLE_MIN && store->table_count < TABLE_SHRINK(store->table_mask + 1) &&
	    !store->closing)
		table_resize((store->table_mask + 1) / 2, false);
}

static uint32_t compute_shash(const content *c)
{
	uint64_t seed = c->base * SPLITMIX64_GAMMA ^ c->kind;
	return (uint32_t)XXH64(extra_of(c), extra_of(c) ? extra_size(c) : 0, seed);
}

static uint64_t compute_key8(const content *c)
{
	uint8_t head[8];
	uint64_t w;
	switch (c->kind) {
	case BASE_FULL:
		memcpy(head, extra_of(c), 8);
		break;
	case BASE_ZERO:
		memset(head, 0, 8);
		break;
	case BASE_BYTE:
		memset(head, (int)c->base, 8);
		break;
	default: {
		uint64_t state = c->base;
		w = GUINT64_TO_LE(splitmix64_next(&state));
		memcpy(head, &w, 8);
		break;
	}
	}
	if (c->kind != BASE_FULL) {
		const struct overlay *o = overlays(c);
		const uint8_t *d = overlay_data(c);
		for (unsigned i = 0; i < c->n_over && o[i].off < 8; i++) {
			unsigned n = MIN(8u - o[i].off, o[i].len);
			memcpy(head + o[i].off, d, n);
			d += o[i].len;
		}
	}
	memcpy(&w, head, 8);
	return GUINT64_FROM_BE(w);
}

/* Takes ownership of extra; returns the interned object with a new reference. */
static content *intern(uint8_t kind, uint64_t base, uint8_t n_over, uint16_t over_bytes,
		       uint8_t *extra)
{
	if (!n_over) {
		/* plain: an immediate when the encoding holds it */
		if (kind == BASE_ZERO || kind == BASE_BYTE)
			return imm_byte(kind == BASE_ZERO ? 0 : (uint8_t)base);
		if (kind == BASE_RAND && rand_fits(base))
			return imm_rand(base);
	}
	if (!store->slots)
		table_resize(TABLE_MIN, true);
	content key = { .kind = kind, .base = base, .n_over = n_over, .over_bytes = over_bytes };
	set_extra_ptr(&key, extra);
	uint32_t shash = compute_shash(&key);
	size_t i = shash & store->table_mask;
	for (; store->slots[i].idx; i = (i + 1) & store->table_mask) {
		if (store->slots[i].hash != shash)
			continue;
		content *found = pool_obj(store->slots[i].idx);
		if (desc_equal(found, &key)) {
			g_free(extra);
			found->refcount++;
			return found;
		}
	}
	content *c = pool_alloc();
	*c = key;
	c->refcount = 1;
	if (extra && extra_size(c) <= INLINE_EXTRA) {
		memcpy(c->in, extra, extra_size(c));
		c->inline_extra = 1;
		g_free(extra);
	}
	store->slots[i].hash = shash;
	store->slots[i].idx = obj_idx(c);
	if (++store->table_count > TABLE_GROW(store->table_mask + 1))
		table_resize((store->table_mask + 1) * 2, true);
	store->live_objects++;
	store->live_bytes += sizeof(*c) + heap_extra(c);
	return c;
}

content *content_ref(content *c)
{
	if (!is_imm(c))
		c->refcount++;
	return c;
}

void content_unref(content *c)
{
	if (!c || is_imm(c) || --c->refcount)
		return;
	table_remove(c);
	for (unsigned i = 0; i < CACHE_WAYS; i++)
		if (store->cache[i].id == (uintptr_t)c)
			store->cache[i].id = 0;
	digest_forget(c);
	store->live_objects--;
	store->live_bytes -= sizeof(*c) + heap_extra(c);
	if (!c->inline_extra)
		g_free(extra_ptr(c));
	pool_release(c);
}

content *content_zero(void)
{
	return IMM_ZERO;
}

content *content_rand(uint64_t seed)
{
	return intern(BASE_RAND, seed, 0, 0, NULL);
}

static content *content_byte(uint8_t b)
{
	return imm_byte(b);
}

/* A whole page: a repeated byte becomes a base again, else it is kept whole. */
static content *from_full(uint8_t *page)
{
	bool uniform = true;
	for (unsigned i = 1; i < PAGE && uniform; i++)
		uniform = page[i] == page[0];
	if (uniform) {
		uint8_t b = page[0];
		g_free(page);
		return content_byte(b);
	}
	return intern(BASE_FULL, 0, 0, 0, page);
}

/* Bytes [s, e) of a base page. SplitMix64 word i is a function of seed + (i+1)·γ alone. */
static void base_range(uint8_t kind, uint64_t base, unsigned s, unsigned e, uint8_t *page)
{
	if (kind == BASE_ZERO || kind == BASE_BYTE) {
		memset(page + s, kind == BASE_ZERO ? 0 : (int)base, e - s);
		return;
	}
	for (unsigned w = s / 8; w * 8 < e; w++) {
		uint64_t state = base + (uint64_t)w * SPLITMIX64_GAMMA;
		uint64_t v = GUINT64_TO_LE(splitmix64_next(&state));
		uint8_t b[8];
		memcpy(b, &v, 8);
		for (unsigned j = 0; j < 8; j++) {
			unsigned pos = w * 8 + j;
			if (pos >= s && pos < e)
				page[pos] = b[j];
		}
	}
}

/*
 * A small change to a base + overlays page (cur: the object holding the
 * overlays, NULL for a plain base), without building the page: only
 * the old overlays and the changed range can differ from the base, so only
 * those bytes are computed. The runs come out exactly as
 * from_base_and_page() would find them by scanning the whole page (a run
 * swallows gaps of fewer than 8 unchanged bytes), so the description stays
 * canonical whichever way it was built.
 */
static content *apply_sparse(uint8_t kind, uint64_t base, const content *cur, unsigned off,
			     unsigned len, const uint8_t *bytes)
{
	uint8_t page[PAGE], basebuf[PAGE];
	uint64_t in_u[PAGE / 64] = { 0 };
	/* the set U of positions that may differ: old overlays, then the change */
	struct overlay u[OVERLAY_RUNS_MAX + 1];
	unsigned nu = 0;
	if (cur) {
		const struct overlay *o = overlays(cur);
		const uint8_t *d = overlay_data(cur);
		for (unsigned i = 0; i < cur->n_over; i++) {
			base_range(kind, base, o[i].off, o[i].off + o[i].len, basebuf);
			memcpy(page + o[i].off, d, o[i].len);
			d += o[i].len;
			u[nu++] = o[i];
		}
	}
	base_range(kind, base, off, off + len, basebuf);
	memcpy(page + off, bytes, len);
	u[nu].off = off;
	u[nu].len = len;
	nu++;
	for (unsigned i = 0; i < nu; i++)
		for (unsigned p = u[i].off; p < u[i].off + u[i].len; p++)
			in_u[p / 64] |= UINT64_C(1) << (p % 64);

	struct overlay runs[OVERLAY_RUNS_MAX];
	unsigned n = 0, total = 0;
	int run_start = -1, last_diff = -1;
	for (unsigned w = 0; w < PAGE / 64; w++) {
		for (uint64_t bits = in_u[w]; bits; bits &= bits - 1) {
			unsigned p = w * 64 + __builtin_ctzll(bits);
			if (page[p] == basebuf[p])
				continue;
			if (run_start >= 0 && p - (unsigned)last_diff - 1 >= 8) {
				if (n == OVERLAY_RUNS_MAX)
					goto whole;
				runs[n].off = run_start;
				runs[n].len = last_diff - run_start + 1;
				total += runs[n++].len;
				run_start = -1;
			}
			if (run_start < 0)
				run_start = p;
			last_diff = p;
		}
	}
	if (run_start >= 0) {
		if (n == OVERLAY_RUNS_MAX)
			goto whole;
		runs[n].off = run_start;
		runs[n].len = last_diff - run_start + 1;
		total += runs[n++].len;
	}
	if (total > OVERLAY_MAX)
		goto whole;
	uint8_t *extra = NULL;
	if (n) {
		extra = g_malloc(n * sizeof(struct overlay) + total);
		memcpy(extra, runs, n * sizeof(struct overlay));
		uint8_t *d = extra + n * sizeof(struct overlay);
		for (unsigned k = 0; k < n; k++) {
			unsigned s0 = runs[k].off, e0 = s0 + runs[k].len;
			/* gaps inside a run that lie outside U hold base bytes */
			base_range(kind, base, s0, e0, basebuf);
			for (unsigned p = s0; p < e0; p++)
				*d++ = (in_u[p / 64] >> (p % 64)) & 1 ? page[p] : basebuf[p];
		}
	}
	return intern(kind, base, n, total, extra);
whole:;
	uint8_t *full = g_malloc(PAGE);
	fill_base(full, kind, base);
	if (cur)
		put_overlays(cur, full);
	memcpy(full + off, bytes, len);
	return from_full(full);
}

content *content_apply(const content *cur, const struct trace_content *tc)
{
	switch (tc->form) {
	case CONTENT_ZERO:
		return content_zero();
	case CONTENT_BYTE:
		return content_byte((uint8_t)tc->value);
	case CONTENT_RAND:
		return content_rand(tc->value);
	case CONTENT_BLOB:
		/* captured bytes: kept whole, interned, so equal blobs share one object */
		return from_full(g_memdup2(tc->data, PAGE));
	case CONTENT_DIGEST: {
		/*
		 * A digest stands for a page whose bytes the trace does not hold:
		 * the model gives it stand-in bytes, the 16 digest bytes followed
		 * by SplitMix64 words seeded from the digest, so equal digests are
		 * equal pages, different digests differ in their first 16 bytes,
		 * and a checksum of the page is a function of the digest alone.
		 */
		return apply_sparse(BASE_RAND, trace_digest_seed(tc), NULL, 0, TRACE_DIGEST_LEN,
				    tc->data);
	}
	default:
		break;
	}
	uint8_t buf[PAGE];
	const uint8_t *bytes;
	unsigned off, len;
	switch (tc->form) {
	case CONTENT_WORD: {
		uint64_t w = GUINT64_TO_LE(tc->value);
		off = tc->off * 8;
		len = 8;
		memcpy(buf, &w, 8);
		bytes = buf;
		break;
	}
	case CONTENT_PATCH:
		off = tc->off;
		len = tc->len;
		base_range(BASE_RAND, tc->value, 0, len, buf);
		bytes = buf;
		break;
	case CONTENT_BYTES:
		off = tc->off;
		len = tc->len;
		bytes = tc->data;
		break;
	default:
		g_assert_not_reached();
	}
	if (!cur)
		return apply_sparse(BASE_ZERO, 0, NULL, off, len, bytes);
	if (is_imm(cur)) {
		uint8_t kind;
		uint64_t base;
		imm_base(cur, &kind, &base);
		return apply_sparse(kind, base, NULL, off, len, bytes);
	}
	if (cur->kind == BASE_FULL) {
		/* A whole page stays whole unless it became uniform. */
		uint8_t *page = g_memdup2(extra_of(cur), PAGE);
		memcpy(page + off, bytes, len);
		return from_full(page);
	}
	return apply_sparse(cur->kind, cur->base, cur, off, len, bytes);
}

int content_cmp(const content *a, const content *b)
{
	if (a == b)
		return 0;
	uint64_t ka = content_key8(a), kb = content_key8(b);
	if (ka != kb)
		return ka < kb ? -1 : 1;
	uint8_t abuf[PAGE];
	const uint8_t *pa = page_bytes(a);
	if (is_imm(a) || a->kind != BASE_FULL) {
		/* page_bytes(b) may evict a's cache slot; keep a private copy. */
		memcpy(abuf, pa, PAGE);
		pa = abuf;
	}
	const uint8_t *pb = page_bytes(b);
	return memcmp(pa, pb, PAGE);
}

uint64_t content_key8(const content *c)
{
	return is_imm(c) ? imm_key8(c) : compute_key8(c);
}

bool content_is_zero(const content *c)
{
	/* Canonical forms: a zero page is always the zero immediate. */
	return c == IMM_ZERO;
}

const uint8_t *content_peek(const content *c)
{
	return page_bytes(c);
}

/*
 * Immediates have nowhere to keep a checksum or digest, so these direct-mapped
 * caches do, keyed by handle (and the cache's fn: a run uses one, a change
 * empties it); the digest cache holds the objects' digests too, which only
 * the oracle asks for, so that no object carries one. Slots follow the
 * base's low bits, so a run of consecutive seeds, as fillseq writes, does
 * not collide within the cache's size, and an object's its pool index. 1
 * MiB each is allocated on first use and counted in content_footprint().
 */
#define IMM_CACHE_SHIFT 16
#define IMM_CACHE_SLOTS (1u << IMM_CACHE_SHIFT)

static inline size_t imm_index(const content *c)
{
	uint64_t h = (uintptr_t)c;
	if (!is_imm(c))
		return obj_idx(c) & (IMM_CACHE_SLOTS - 1);
	if (is_byte(h))		/* bytes apart from small seeds */
		return (h / 8) ^ (IMM_CACHE_SLOTS / 2);
	h ^= h >> 16 ^ h >> 32 ^ h >> 48;
	return h & (IMM_CACHE_SLOTS - 1);
}

/* An object is freed: its handle may name other bytes next, so its digest goes. */
static void digest_forget(const content *c)
{
	struct imm_slot *s;
	if (store->digest_cache.slot) {
		s = &store->digest_cache.slot[imm_index(c)];
		if (s->handle == (uintptr_t)c)
			s->handle = 0;
	}
}

static uint64_t imm_hash(struct imm_cache *ic, const content *c, page_hash_fn fn,
			 uint64_t *computed)
{
	if (!ic->slot) {
		ic->slot = g_new0(struct imm_slot, IMM_CACHE_SLOTS);
		ic->fn = fn;
	} else if (ic->fn != fn) {
		memset(ic->slot, 0, IMM_CACHE_SLOTS * sizeof(*ic->slot));
		ic->fn = fn;
	}
	struct imm_slot *s = &ic->slot[imm_index(c)];
	if (s->handle != (uintptr_t)c) {
		s->handle = (uintptr_t)c;
		s->value = fn(page_bytes(c));
		if (computed)
			(*computed)++;
	}
	return s->value;
}

/* The store's checksum function changed: every object's csum is of the old one. */
static void csum_forget_all(void)
{
	for (size_t i = 0; store->slots && i <= store->table_mask; i++)
		if (store->slots[i].idx)
			pool_obj(store->slots[i].idx)->csum_valid = 0;
}

static uint64_t digest_fn(const void *page)
{
	return XXH3_64bits(page, PAGE);
}

uint64_t content_checksum(content *c, page_hash_fn fn, uint64_t *computed)
{
	/* no function (no gate): 0, as an object that never computed one holds */
	if (is_imm(c))
		return fn ? imm_hash(&store->csum_cache, c, fn, computed) : 0;
	if (!fn)
		return 0;
	if (fn != store->csum_fn) {
		csum_forget_all();
		store->csum_fn = fn;
	}
	if (!c->csum_valid) {
		uint64_t v = fn(page_bytes(c));
		c->csum = (uint32_t)v;
		c->csum_valid = 1;
		if (computed)
			(*computed)++;
		if (v >> 32 && !store->csum_hi)
			for (size_t n = 0; n < store->n_chunks; n++)
				csum_hi_add_chunk(n);
		if (store->csum_hi)
			*csum_hi_of(c) = (uint32_t)(v >> 32);
	}
	return store->csum_hi ? (uint64_t)*csum_hi_of(c) << 32 | c->csum : c->csum;
}

uint64_t content_digest(content *c)
{
	return imm_hash(&store->digest_cache, c, digest_fn, NULL);
}

void content_stats(uint64_t *objects, uint64_t *bytes)
{
	*objects = store->live_objects;
	*bytes = store->live_bytes;
}

uint64_t content_footprint(void)
{
	uint64_t pool = (uint64_t)store->pool_next * sizeof(content);	/* handed out so far */
	uint64_t table = store->slots ? (uint64_t)(store->table_mask + 1) * sizeof(struct slot) : 0;
	uint64_t caches = (uint64_t)(!!store->csum_cache.slot + !!store->digest_cache.slot) *
			  IMM_CACHE_SLOTS * sizeof(struct imm_slot);
	uint64_t hi = store->csum_hi ? (uint64_t)store->n_chunks * CHUNK_OBJS * sizeof(uint32_t) : 0;
	return pool + table + caches + hi + (store->live_bytes - store->live_objects * sizeof(content));
}

struct content_store *content_store_new(void)
{
	struct content_store *s = g_new0(struct content_store, 1);
	s->pool_next = 1;
	return s;
}

struct content_store *content_store_use(struct content_store *s)
{
	struct content_store *was = store;
	store = s ? s : &process_store;
	return was;
}

void content_store_closing(struct content_store *s)
{
	s->closing = true;
}

void content_store_free(struct content_store *s)
{
	if (!s)
		return;
	g_assert(s != store && s != &process_store);
	/* the live objects are the intern table's: their bytes go with them */
	for (size_t i = 0; s->slots && i <= s->table_mask; i++)
		if (s->slots[i].idx) {
			uint32_t idx = s->slots[i].idx;
			content *c = s->chunks[idx >> CHUNK_SHIFT] + (idx & (CHUNK_OBJS - 1));
			if (!c->inline_extra)
				g_free(extra_ptr(c));
		}
	if (s->slots)
		munmap(s->slots, (s->table_mask + 1) * sizeof(struct slot));
	for (size_t i = 0; i < s->n_chunks; i++) {
		POOL_UNROOT(s->chunks[i], CHUNK_BYTES);
		POOL_UNPOISON_ALL(s->chunks[i], CHUNK_BYTES);
		munmap(s->chunks[i], CHUNK_BYTES);
		if (s->csum_hi)
			g_free(s->csum_hi[i]);
	}
	g_free(s->chunks);
	g_free(s->csum_hi);
	g_free(s->csum_cache.slot);
	g_free(s->digest_cache.slot);
	g_free(s);
}
