// SPDX-License-Identifier: GPL-2.0-or-later
/* Known answers and cross-checks for the page checksum registry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <csv.h>
#include <xxhash.h>
#include <zlib.h>
#include "bench/bench_ref.h"
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#define PAGE HASH_PAGE_SIZE

static unsigned char *page_alloc(void)
{
	unsigned char *p = aligned_alloc(PAGE, PAGE);

	assert_non_null(p);
	return p;
}

/* xorshift64: reproducible pseudo-random pages. */
static void page_random(unsigned char *p, uint64_t *state)
{
	for (unsigned i = 0; i < PAGE; i += 8) {
		uint64_t x = *state;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		*state = x;
		memcpy(p + i, &x, 8);
	}
}

static uint64_t hash_of(const char *name, const void *page)
{
	const struct page_hash *h = hash_lookup(name);

	assert_non_null(h);
	assert_non_null(h->fn);
	return h->fn(page);
}

/* Four plain pages, each checksum's known answers pinned below. */
enum { P_ZERO, P_ONES, P_FIRST, P_FF, NPAT };

static void page_pattern(unsigned char *p, int pat)
{
	memset(p, pat == P_ONES ? 0x01 : pat == P_FF ? 0xff : 0x00, PAGE);
	if (pat == P_FIRST)
		p[0] = 0x01;
}

static void test_crc32c_check(void **state)
{
	static const char s[] = "123456789";

	assert_int_equal(crc32c(0, s, 9), 0xE3069283u);
	assert_int_equal(crc32c_sw(0, s, 9), 0xE3069283u);
	if (crc32c_hw_available())
		assert_int_equal(crc32c_hw(0, s, 9), 0xE3069283u);
	/* zlib-style seed: chaining equals one pass. */
	assert_int_equal(crc32c(crc32c(0, s, 4), s + 4, 5), 0xE3069283u);
	assert_int_equal(crc32c(0, s, 0), 0);
	/* 32 zero bytes: the iSCSI (RFC 3720 B.4) vector. */
	unsigned char z[32] = { 0 };
	assert_int_equal(crc32c(0, z, 32), 0x8A9136AAu);
	memset(z, 0xff, sizeof(z));
	assert_int_equal(crc32c(0, z, 32), 0x62A8AB43u);
}

/* Every length and alignment around the 3-stream chunk size. */
static void test_crc32c_lengths(void **state)
{
	size_t max = 3 * 4096 + 64;
	unsigned char *buf = malloc(max + 8);
	uint64_t rng = 42;

	if (!crc32c_hw_available())
		skip();
	assert_non_null(buf);
	for (size_t i = 0; i < max + 8; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = rng >> 56;
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= max; len += (len < 300 || (len > 4000 && len < 4200)) ? 1 : 37)
			assert_int_equal(crc32c_hw(0x1234, buf + off, len),
					 crc32c_sw(0x1234, buf + off, len));
	free(buf);
}

static void test_crc32c_pages(void **state)
{
	unsigned char *p = page_alloc();
	uint64_t rng = 0x9e3779b97f4a7c15ull;

	if (!crc32c_hw_available()) {
		free(p);
		skip();
	}
	for (int i = 0; i < 10000; i++) {
		page_random(p, &rng);
		assert_int_equal(crc32c_hw(0, p, PAGE), crc32c_sw(0, p, PAGE));
	}
	memset(p, 0, PAGE);
	assert_int_equal(crc32c_hw(0, p, PAGE), crc32c_sw(0, p, PAGE));
	for (unsigned bit = 0; bit < PAGE * 8; bit++) {
		p[bit / 8] = 1u << (bit % 8);
		assert_int_equal(crc32c_hw(0, p, PAGE), crc32c_sw(0, p, PAGE));
		p[bit / 8] = 0;
	}
	memset(p, 0xff, PAGE);
	assert_int_equal(crc32c_hw(0, p, PAGE), crc32c_sw(0, p, PAGE));
	assert_int_equal(hash_of("crc32c", p), crc32c_sw(0, p, PAGE));
	free(p);
}

/* The registered crc32c (ISA-L when built with it) against our table. */
static void test_crc32c_registered(void **state)
{
	unsigned char *p = page_alloc();
	uint64_t rng = 77;

	print_message("crc32c: %s; own: %s\n", crc32c_impl(), crc32c_own_impl());
	for (int i = 0; i < 2000; i++) {
		page_random(p, &rng);
		assert_int_equal(crc32c(0, p, PAGE), crc32c_sw(0, p, PAGE));
		assert_int_equal(crc32c_own(0, p, PAGE), crc32c_sw(0, p, PAGE));
		assert_true(hash_of("crc32c", p) == crc32c_sw(0, p, PAGE));
		size_t off = rng % 64, len = (rng >> 8) % (PAGE - 64);
		assert_int_equal(crc32c(0x5a5a, p + off, len),
				 crc32c_sw(0x5a5a, p + off, len));
	}
	free(p);
}

static void test_crc32_check(void **state)
{
	unsigned char *p = page_alloc();
	uint64_t rng = 7;

	assert_int_equal(crc32(0, (const Bytef *)"123456789", 9), 0xCBF43926u);
	page_random(p, &rng);
	assert_int_equal(hash_of("crc32", p), crc32(0, p, PAGE));
	free(p);
}

static void test_xxh_known(void **state)
{
	/* From xxHash's documentation and its sanity test table. */
	assert_int_equal(XXH32("", 0, 0), 0x02CC5D05u);
	assert_true(XXH64("", 0, 0) == 0xEF46DB3751D8E999ull);
	assert_true(XXH3_64bits("", 0) == 0x2D06800538D394C2ull);
}

static void test_xxhash_pages(void **state)
{
	static const uint32_t want[NPAT] = {
		[P_ZERO] = 0x32d8bbdb, [P_ONES] = 0x68da1f79,
		[P_FIRST] = 0xa2484610, [P_FF] = 0x4282321f,
	};
	unsigned char *p = page_alloc();

	for (int pat = 0; pat < NPAT; pat++) {
		page_pattern(p, pat);
		assert_true(hash_of("xxhash", p) == want[pat]);
		assert_true(hash_of("xxh64", p) == XXH64(p, PAGE, 0));
		assert_true(hash_of("xxh32", p) == XXH32(p, PAGE, 0));
		assert_true(hash_of("xxh3", p) == XXH3_64bits(p, PAGE));
	}
	free(p);
}

/*
 * jhash2 the slow obvious way: a switch on the remaining count at every
 * step, words assembled from bytes (little-endian host assumed below).
 */
static uint32_t rotl(uint32_t x, int k)
{
	return (x << k) | (x >> (32 - k));
}

static uint32_t simple_jhash2(const unsigned char *bytes, uint32_t n, uint32_t initval)
{
	uint32_t s[3], i = 0;

	s[0] = s[1] = s[2] = 0xdeadbeef + n * 4 + initval;
	for (;;) {
		uint32_t left = n - i;

		for (uint32_t j = 0; j < 3 && j < left; j++) {
			const unsigned char *w = bytes + 4 * (i + j);

			s[j] += w[0] | w[1] << 8 | w[2] << 16 | (uint32_t)w[3] << 24;
		}
		if (left == 0)
			return s[2];
		if (left <= 3)
			break;
		static const int rot[6] = { 4, 6, 8, 16, 19, 4 };
		for (int r = 0; r < 6; r++) {
			int x = r % 3, y = (r + 2) % 3, z = (r + 1) % 3;

			/* x -= y; x ^= rol(y); y += z, rotating (a,c,b) roles */
			s[x] -= s[y];
			s[x] ^= rotl(s[y], rot[r]);
			s[y] += s[z];
		}
		i += 3;
	}
	uint32_t a = s[0], b = s[1], c = s[2];
	c ^= b; c -= rotl(b, 14);
	a ^= c; a -= rotl(c, 11);
	b ^= a; b -= rotl(a, 25);
	c ^= b; c -= rotl(b, 16);
	a ^= c; a -= rotl(c, 4);
	b ^= a; b -= rotl(a, 14);
	c ^= b; c -= rotl(b, 24);
	return c;
}

static void test_jhash2_pages(void **state)
{
	static const uint32_t want[NPAT] = {
		[P_ZERO] = 0x61574272, [P_ONES] = 0xa096a553,
		[P_FIRST] = 0x5d93fdb1, [P_FF] = 0x8602b83e,
	};
	unsigned char *p = page_alloc();
	uint64_t rng = 99;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	skip();	/* the vectors and the byte assembly are little-endian */
#endif
	for (int pat = 0; pat < NPAT; pat++) {
		page_pattern(p, pat);
		assert_int_equal(simple_jhash2(p, PAGE / 4, 17), want[pat]);
		assert_true(hash_of("jhash2", p) == want[pat]);
		assert_true(ref_jhash2_plain(p) == want[pat]);
	}
	for (int i = 0; i < 1000; i++) {
		page_random(p, &rng);
		uint32_t v = simple_jhash2(p, PAGE / 4, 17);
		assert_true(hash_of("jhash2", p) == v);
		assert_true(ref_jhash2_plain(p) == v);
	}
	free(p);
}

/*
 * The checksums as ksmd computes them (bench/ref_kernel.c) against the
 * library and the registry: XXH64 scalar is libxxhash's XXH64, the 3-way
 * CRC-32C the registry's crc32c, on patterns and random pages.
 */
static void test_kernel_shaped(void **state)
{
	unsigned char *p = page_alloc();
	uint64_t rng = 7;

	for (int i = 0; i < NPAT + 500; i++) {
		if (i < NPAT)
			page_pattern(p, i);
		else
			page_random(p, &rng);
		assert_true(ref_xxh64_kernel(p) == ref_xxh64_lib(p));
		assert_true((uint32_t)ref_xxh64_kernel(p) == (uint32_t)hash_of("xxhash", p));
		assert_true(ref_crc32c_kernel(p) == hash_of("crc32c", p));
	}
	assert_float_equal(kernel_hash_ratio("xxhash"), 1.0, 0);
	assert_float_equal(kernel_hash_ratio("sha1"), 0.0, 0);
	free(p);
}

/*
 * Every XXH3 page function the CPU can run, ours and xxHash's inlined
 * builds, against the shared library: random pages, then pages that
 * stress the lane bookkeeping (zero, ones, one set bit in each of the
 * 512 bit positions of a stripe, in each of the 64 stripes' first word,
 * and a ramp whose every u64 differs).
 */
static void test_xxh3_variants(void **state)
{
	unsigned char *p = page_alloc();
	uint64_t rng = 5;
	int ran = 0;

	__builtin_cpu_init();
	struct { bool ok; page_hash_fn fn; } v[] = {
		{ true, page_xxh3_inline_sse2 },
#if defined(__x86_64__)
		{ __builtin_cpu_supports("avx2"), page_xxh3_inline_avx2 },
		{ __builtin_cpu_supports("avx2"), page_xxh3_avx2 },
		{ __builtin_cpu_supports("avx512f") &&
		  __builtin_cpu_supports("avx512bw"), page_xxh3_inline_avx512 },
		{ __builtin_cpu_supports("avx512f") &&
		  __builtin_cpu_supports("avx512bw"), page_xxh3_avx512 },
#endif
	};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		if (!v[k].ok)
			continue;
		ran++;
		for (int i = 0; i < 2000; i++) {
			page_random(p, &rng);
			assert_true(v[k].fn(p) == XXH3_64bits(p, PAGE));
		}
		memset(p, 0, PAGE);
		assert_true(v[k].fn(p) == XXH3_64bits(p, PAGE));
		memset(p, 0xff, PAGE);
		assert_true(v[k].fn(p) == XXH3_64bits(p, PAGE));
		for (unsigned stripe = 0; stripe < PAGE / 64; stripe++)
			for (unsigned bit = 0; bit < 512; bit += stripe ? 64 : 1) {
				memset(p, 0, PAGE);
				p[stripe * 64 + bit / 8] = (unsigned char)(1u << (bit % 8));
				assert_true(v[k].fn(p) == XXH3_64bits(p, PAGE));
			}
		for (unsigned i = 0; i < PAGE / 8; i++) {
			uint64_t w = 0x0123456789abcdefULL * (uint64_t)(i + 1);

			memcpy(p + 8 * i, &w, 8);
		}
		assert_true(v[k].fn(p) == XXH3_64bits(p, PAGE));
	}
	page_random(p, &rng);
	assert_true(page_xxh3(p) == ref_xxh3_lib(p));
	assert_true(page_xxh3_inline(p) == ref_xxh3_lib(p));
	print_message("xxh3 functions run: %d, dispatch: %s\n", ran, page_xxh3_impl());
	free(p);
}

static void test_sha_pages(void **state)
{
	unsigned char *p = page_alloc();

	memset(p, 0, PAGE);
	/* sha1sum / sha256sum of 4096 zero bytes, first 8 bytes. */
	assert_true(hash_of("sha1", p) == 0x1ceaf73df40e531dull);
	assert_true(hash_of("sha256", p) == 0xad7facb2586fc6e9ull);
	free(p);
}

/*
 * SipHash-2-4 against the paper (Aumasson and Bernstein 2012, appendix A:
 * key 00..0f, message 00..0e) and the reference code's vectors for the
 * empty message and 00, 00 01, 00 01 02 (same key); then the keyed rows:
 * low 32 bits of siphash24 / XXH64 under the key hash_set_key draws, a
 * different key a different value, and the seeded row never the kernel's.
 */
static void test_siphash(void **state)
{
	uint8_t m[15];
	uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL, sp;
	static const uint64_t ref[4] = { 0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL,
					 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL };
	unsigned char *p = page_alloc();
	uint64_t rng = 21;

	(void)state;
	for (unsigned i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)i;
	assert_true(siphash24(k0, k1, m, 15) == 0xa129ca6149be45e5ULL);
	for (unsigned n = 0; n < 4; n++)
		assert_true(siphash24(k0, k1, m, n) == ref[n]);
	page_random(p, &rng);
	hash_set_key(7);
	sp = hash_of("siphash", p);
	assert_true(sp <= UINT32_MAX);
	assert_true(hash_of("xxhash-seeded", p) != hash_of("xxhash", p));
	hash_set_key(8);
	assert_true(hash_of("siphash", p) != sp);
	hash_set_key(7);
	assert_true(hash_of("siphash", p) == sp);
	free(p);
}

static void test_registry(void **state)
{
	size_t n;
	const struct page_hash *all = hash_all(&n);
	static const struct { const char *name; unsigned bits; } want[] = {
		{ "jhash2", 32 }, { "crc32c", 32 }, { "crc32", 32 },
		{ "xxhash", 32 }, { "xxh32", 32 }, { "xxh64", 64 },
		{ "xxh3", 64 }, { "xxhash-seeded", 32 }, { "siphash", 32 },
		{ "sha1", 64 }, { "sha256", 64 }, { "none", 0 },
	};
	unsigned char *p = page_alloc();
	uint64_t rng = 11;

	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct page_hash *h = hash_lookup(want[i].name);

		assert_non_null(h);
		assert_string_equal(h->name, want[i].name);
		assert_int_equal(h->bits, want[i].bits);
		assert_non_null(h->summary);
		assert_true((h->fn == NULL) == (h->bits == 0));
		/* Only "none" is free; every checksum has a default cost. */
		assert_true((h->fn == NULL) == (h->cold_ns == 0));
		assert_true(h->cold_ns >= 0);
	}
	/* The rows with several implementations say which one runs. */
	assert_string_equal(hash_lookup("crc32c")->impl(), crc32c_impl());
	assert_string_equal(hash_lookup("xxh3")->impl(), page_xxh3_impl());
	assert_null(hash_lookup("xxhash")->impl);
	/* The kernel's jhash2 cost more than xxhash did: why 4.20 switched. */
	assert_true(hash_lookup("jhash2")->cold_ns > hash_lookup("xxhash")->cold_ns);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			assert_string_not_equal(all[i].name, all[j].name);
	assert_null(hash_lookup("nosuch"));
	assert_null(hash_lookup(""));
	assert_null(hash_lookup(NULL));
	/* any case; a typo gets its likely meaning, anything else nothing */
	assert_ptr_equal(hash_lookup("XXHASH"), hash_lookup("xxhash"));
	assert_ptr_equal(hash_lookup("Crc32C"), hash_lookup("crc32c"));
	assert_string_equal(hash_nearest("xxhsah"), "xxhash");
	assert_string_equal(hash_nearest("crc32cc"), "crc32c");
	assert_string_equal(hash_nearest("jhash"), "jhash2");
	assert_string_equal(hash_nearest("SHA-1"), "sha1");
	assert_null(hash_nearest("blake3"));
	assert_null(hash_nearest(""));
	assert_null(hash_nearest(NULL));
	assert_non_null(hash_lookup(HASH_DEFAULT));
	/* Deterministic, and 32-bit rows fit in 32 bits. */
	page_random(p, &rng);
	for (size_t i = 0; i < n; i++) {
		if (!all[i].fn)
			continue;
		uint64_t v = all[i].fn(p);
		assert_true(all[i].fn(p) == v);
		if (all[i].bits == 32)
			assert_true(v <= UINT32_MAX);
	}
	free(p);
}

/* hash_resolve: every command's words for a name that is no checksum. */
static void test_resolve(void **state)
{
	GError *error = NULL;

	assert_ptr_equal(hash_resolve("CRC32C", false, &error), hash_lookup("crc32c"));
	assert_ptr_equal(hash_resolve("none", true, &error), hash_lookup("none"));
	assert_null(error);
	assert_null(hash_resolve("none", false, &error));
	assert_string_equal(error->message,
			    "'none' computes no checksum; name one ('ksmsim hashes' lists them)");
	g_clear_error(&error);
	assert_null(hash_resolve("xxhsah", true, &error));
	assert_string_equal(error->message, "unknown checksum 'xxhsah'; did you mean 'xxhash'?"
			    " ('ksmsim hashes' lists them)");
	g_clear_error(&error);
	assert_null(hash_resolve("blake3", true, &error));
	assert_string_equal(error->message, "unknown checksum 'blake3' ('ksmsim hashes' lists them)");
	g_clear_error(&error);
}

/* The reference row of that name; NULL when this CPU or build has none. */
static const struct cost_ref *ref_lookup(const char *name)
{
	size_t n;
	const struct cost_ref *r = cost_refs(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].name, name) == 0)
			return &r[i];
	return NULL;
}

static void test_refs(void **state)
{
	size_t n;
	const struct cost_ref *r = cost_refs(&n);
	unsigned char *a = page_alloc(), *b = page_alloc(), *t = page_alloc();
	uint64_t rng = 3;

	page_random(a, &rng);
	assert_true(n >= 8);
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(ref_lookup(r[i].name), &r[i]);
		assert_null(hash_lookup(r[i].name));	/* names do not clash */
		if (r[i].pages == 1) {
			assert_non_null(r[i].one);
			r[i].one(a);
			continue;
		}
		assert_int_equal(r[i].pages, 2);
		memcpy(b, a, PAGE);
		r[i].two(a, b, t);
		assert_memory_equal(a, b, PAGE);
	}
	assert_true(ref_lookup("jhash2-plain")->one(a) == hash_of("jhash2", a));
	assert_true(ref_lookup("xxh64-lib")->one(a) == XXH64(a, PAGE, 0));
	if (ref_lookup("crc32c-1stream"))
		assert_true(ref_lookup("crc32c-1stream")->one(a) == hash_of("crc32c", a));
	assert_true(ref_lookup("crc32c-own")->one(a) == hash_of("crc32c", a));
	if (ref_lookup("xxh3-lib-dispatch"))
		assert_true(ref_lookup("xxh3-lib-dispatch")->one(a) == hash_of("xxh3", a));
	assert_int_equal(ref_lookup("memcmp")->two(a, b, t), 0);
	assert_null(ref_lookup("nosuch"));
	free(a);
	free(b);
	free(t);
}

static void put_field(FILE *f, const char *s, int last)
{
	csv_fwrite(f, s, strlen(s));
	fputc(last ? '\n' : ',', f);
}

static void test_costs_csv(void **state)
{
	char *path = NULL;
	int fd = g_file_open_tmp("ksmsim-costs-XXXXXX.csv", &path, NULL);
	GError *err = NULL;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(HASH_COSTS_HEADER "\n", f);
	const char *rows[2][8] = {
		{ "jhash2", "hash", "32", "900.5", "4.2", "1100", "3.4", "1" },
		{ "memcmp", "reference", "0", "60", "63.5", "400", "9.5", "0.0666" },
	};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 8; j++)
			put_field(f, rows[i][j], j == 7);
	fclose(f);

	GArray *c = hash_costs_read(path, &err);
	assert_null(err);
	assert_non_null(c);
	assert_int_equal(c->len, 2);
	const struct hash_cost *m = hash_costs_find(c, "memcmp");
	assert_non_null(m);
	assert_string_equal(m->kind, "reference");
	assert_int_equal(m->bits, 0);
	assert_true(m->hot_ns == 60 && m->cold_ns == 400 && m->ratio_to_jhash2 == 0.0666);
	assert_true(hash_costs_find(c, "jhash2")->hot_ns == 900.5);
	assert_null(hash_costs_find(c, "xxh3"));
	g_array_free(c, TRUE);

	/* Malformed: a short record and a non-number are errors. */
	assert_true(g_file_set_contents(path, HASH_COSTS_HEADER "\nx,hash,32,1,2\n", -1, NULL));
	assert_null(hash_costs_read(path, &err));
	assert_non_null(err);
	g_clear_error(&err);
	assert_true(g_file_set_contents(path, HASH_COSTS_HEADER "\nx,hash,32,fast,2,3,4,5\n", -1, NULL));
	assert_null(hash_costs_read(path, &err));
	assert_non_null(err);
	g_clear_error(&err);
	assert_true(g_file_set_contents(path, "name,kind\nx,hash,32,1,2,3,4,5\n", -1, NULL));
	assert_null(hash_costs_read(path, &err));
	assert_non_null(err);
	g_clear_error(&err);
	/* Numbers follow the options' rule: bits whole, no nan, no hex. */
	static const char *bad[] = {
		"x,hash,32.5,1,2,3,4,5", "x,hash,65,1,2,3,4,5", "x,hash,-1,1,2,3,4,5",
		"x,hash,32,nan,2,3,4,5", "x,hash,32,1,2,0x10,4,5", "x,hash,32,1,2,3,4,inf",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		char *text = g_strdup_printf(HASH_COSTS_HEADER "\nok,hash,32,1,2,3,4,5\n%s\n", bad[i]);

		assert_true(g_file_set_contents(path, text, -1, NULL));
		g_free(text);
		assert_null(hash_costs_read(path, &err));
		assert_non_null(err);
		assert_non_null(strstr(err->message, "record 3"));
		assert_non_null(strstr(err->message, path));
		g_clear_error(&err);
	}
	g_unlink(path);
	assert_null(hash_costs_read(path, &err));
	assert_non_null(err);
	g_clear_error(&err);
	g_free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_check),
		cmocka_unit_test(test_crc32c_lengths),
		cmocka_unit_test(test_crc32c_pages),
		cmocka_unit_test(test_crc32c_registered),
		cmocka_unit_test(test_crc32_check),
		cmocka_unit_test(test_xxh_known),
		cmocka_unit_test(test_xxhash_pages),
		cmocka_unit_test(test_jhash2_pages),
		cmocka_unit_test(test_xxh3_variants),
		cmocka_unit_test(test_sha_pages),
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_refs),
		cmocka_unit_test(test_kernel_shaped),
		cmocka_unit_test(test_costs_csv),
	};

	return cmocka_run_group_tests_name("hashes", tests, NULL, NULL);
}
