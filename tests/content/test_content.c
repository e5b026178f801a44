// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The page content model against traces/FORMAT.md: exact bytes of every form, the
 * SplitMix64 check values, memcmp order on random pairs, interning, and plain
 * contents as immediate handles (no object).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "content/content.h"

#define PAGE 4096

/* An independent, deliberately plain page builder for cross-checks. */
static void plain_rand(uint8_t *page, uint64_t seed)
{
	for (int i = 0; i < 512; i++) {
		seed += 0x9E3779B97F4A7C15ull;
		uint64_t z = seed;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		z ^= z >> 31;
		for (int b = 0; b < 8; b++)
			page[i * 8 + b] = (uint8_t)(z >> (8 * b));
	}
}

static struct trace_content tc_word(unsigned i, uint64_t v)
{
	struct trace_content t = { .form = CONTENT_WORD, .off = i, .value = v };
	return t;
}

static uint64_t sum_hash(const void *page)
{
	const uint64_t *w = page;
	uint64_t s = 0;
	for (int i = 0; i < 512; i++)
		s = s * 31 + w[i];
	return s;
}

static void test_splitmix_check_values(void **state)
{
	uint64_t s = 0;
	assert_true(splitmix64_next(&s) == UINT64_C(0xE220A8397B1DCDAF));
	assert_true(splitmix64_next(&s) == UINT64_C(0x6E789E6AA1B965F4));
	content *c = content_rand(0);
	uint8_t buf[PAGE];
	content_materialize(c, buf);
	/* little-endian words */
	assert_int_equal(buf[0], 0xAF);
	assert_int_equal(buf[7], 0xE2);
	assert_int_equal(buf[8], 0xF4);
	content_unref(c);
}

static void test_forms_exact(void **state)
{
	uint8_t want[PAGE], got[PAGE];
	struct trace_content t;

	content *z = content_zero();
	content_materialize(z, got);
	memset(want, 0, PAGE);
	assert_memory_equal(got, want, PAGE);
	assert_true(content_is_zero(z));

	t = (struct trace_content){ .form = CONTENT_BYTE, .value = 0xab };
	content *b = content_apply(NULL, &t);
	memset(want, 0xab, PAGE);
	content_materialize(b, got);
	assert_memory_equal(got, want, PAGE);
	assert_false(content_is_zero(b));

	/* word on byte:ab */
	t = tc_word(3, 0x0102030405060708ull);
	content *w = content_apply(b, &t);
	uint8_t le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	memcpy(want + 24, le, 8);
	content_materialize(w, got);
	assert_memory_equal(got, want, PAGE);

	/* patch: first len bytes of rand:seed at off */
	t = (struct trace_content){ .form = CONTENT_PATCH, .off = 100, .len = 50, .value = 9 };
	content *p = content_apply(w, &t);
	uint8_t r[PAGE];
	plain_rand(r, 9);
	memcpy(want + 100, r, 50);
	content_materialize(p, got);
	assert_memory_equal(got, want, PAGE);

	/* bytes at the very end of the page */
	t = (struct trace_content){ .form = CONTENT_BYTES, .off = 4093, .len = 3 };
	t.data[0] = 1;
	t.data[1] = 2;
	t.data[2] = 3;
	content *y = content_apply(p, &t);
	want[4093] = 1;
	want[4094] = 2;
	want[4095] = 3;
	content_materialize(y, got);
	assert_memory_equal(got, want, PAGE);

	/* a modification of a page not yet present starts from zero */
	t = tc_word(511, 1);
	content *n = content_apply(NULL, &t);
	memset(want, 0, PAGE);
	want[4088] = 1;
	content_materialize(n, got);
	assert_memory_equal(got, want, PAGE);

	content_unref(z);
	content_unref(b);
	content_unref(w);
	content_unref(p);
	content_unref(y);
	content_unref(n);
}

static void test_same_bytes_two_routes(void **state)
{
	/* rand:0 == zero + patch:0:4096:0 (as in the conformance content_forms case) */
	content *a = content_rand(0);
	struct trace_content t = { .form = CONTENT_PATCH, .off = 0, .len = 4096, .value = 0 };
	content *b = content_apply(NULL, &t);
	assert_int_equal(content_cmp(a, b), 0);
	assert_true(content_equal(a, b));
	assert_true(content_digest(a) == content_digest(b));

	/* byte:11 then bytes that change nothing is byte:11, the same object */
	struct trace_content tb = { .form = CONTENT_BYTE, .value = 0x11 };
	content *c = content_apply(NULL, &tb);
	struct trace_content tx = { .form = CONTENT_BYTES, .off = 10, .len = 2 };
	tx.data[0] = tx.data[1] = 0x11;
	content *d = content_apply(c, &tx);
	assert_ptr_equal(c, d);

	/* overwriting every byte with zero words gives the canonical zero page */
	content *e = content_ref(c);
	for (unsigned i = 0; i < 512; i++) {
		struct trace_content tw = tc_word(i, 0);
		content *next = content_apply(e, &tw);
		content_unref(e);
		e = next;
	}
	assert_true(content_is_zero(e));
	content_unref(a);
	content_unref(b);
	content_unref(c);
	content_unref(d);
	content_unref(e);
}

static void test_interning(void **state)
{
	uint64_t objs0, bytes0, objs1, bytes1, objs2, bytes2;
	content_stats(&objs0, &bytes0);
	content *a = content_rand(77), *b = content_rand(77);
	assert_ptr_equal(a, b);
	struct trace_content t = tc_word(0, 5);
	content *c = content_apply(a, &t), *d = content_apply(b, &t);
	assert_ptr_equal(c, d);
	assert_ptr_not_equal(a, c);
	/* one object for the overlaid page, none for rand:77 */
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1 - objs0, 1);
	assert_true(bytes1 > bytes0);
	content_unref(a);
	content_unref(b);
	content_unref(c);
	content_stats(&objs2, &bytes2);
	assert_int_equal(objs2, objs1);		/* d still holds it */
	content_unref(d);
	content_stats(&objs2, &bytes2);
	assert_int_equal(objs2, objs0);
	assert_int_equal(bytes2, bytes0);
}

static void assert_bytes(const content *c, const uint8_t *want)
{
	uint8_t got[PAGE];
	content_materialize(c, got);
	assert_memory_equal(got, want, PAGE);
	assert_memory_equal(content_peek(c), want, PAGE);
	uint64_t k = 0;
	for (int i = 0; i < 8; i++)
		k = k << 8 | want[i];
	assert_true(content_key8(c) == k);
}

/* Plain contents allocate nothing, whatever route builds them. */
static void test_plain_no_object(void **state)
{
	uint64_t objs0, bytes0, objs1, bytes1;
	content_stats(&objs0, &bytes0);
	content *v[12];
	struct trace_content t = { .form = CONTENT_BYTE, .value = 0x42 };
	v[0] = content_zero();
	v[1] = content_rand(0);
	v[2] = content_rand(UINT64_C(0xb0221eeb1f27baab));	/* as 'ksmsim gen' seeds */
	v[3] = content_apply(NULL, &t);
	t = (struct trace_content){ .form = CONTENT_RAND, .value = 123 };
	v[4] = content_apply(v[3], &t);
	t = (struct trace_content){ .form = CONTENT_ZERO };
	v[5] = content_apply(v[4], &t);
	/* a uniform whole page goes back to a byte */
	t = (struct trace_content){ .form = CONTENT_BLOB };
	memset(t.data, 0x42, PAGE);
	v[6] = content_apply(NULL, &t);
	v[7] = content_ref(v[6]);
	/* seeds next to those that need an object (top byte 0x80, a multiple of 8) */
	v[8] = content_rand(UINT64_C(0x8000000000000001));
	v[9] = content_rand(UINT64_C(0x80fffffffffffff7));
	v[10] = content_rand(UINT64_C(0x8100000000000000));
	v[11] = content_rand(UINT64_MAX);
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1, objs0);
	assert_int_equal(bytes1, bytes0);
	assert_ptr_equal(v[6], v[3]);
	assert_ptr_equal(v[5], v[0]);
	for (int i = 0; i < 12; i++) {
		assert_non_null(v[i]);
		for (int j = 0; j < i; j++)
			if (v[i] == v[j])
				assert_int_equal(content_cmp(v[i], v[j]), 0);
		/* the checksum and digest caches must not allocate objects either */
		content_checksum(v[i], sum_hash, NULL);
		content_digest(v[i]);
	}
	uint8_t want[PAGE];
	plain_rand(want, UINT64_C(0xb0221eeb1f27baab));
	assert_bytes(v[2], want);
	plain_rand(want, UINT64_C(0x8000000000000001));
	assert_bytes(v[8], want);
	plain_rand(want, UINT64_MAX);
	assert_bytes(v[11], want);
	/* unref of an immediate, even many times, does nothing */
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 12; i++)
			content_unref(content_ref(v[i]));
	for (int i = 0; i < 12; i++)
		content_unref(v[i]);
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1, objs0);
	assert_true(content_is_zero(v[0]));
	assert_bytes(v[3], (memset(want, 0x42, PAGE), want));
}

/* Writes that undo every overlay give back the plain handle: zero, byte, rand. */
static void test_overlays_cancel(void **state)
{
	uint64_t objs0, bytes0, objs1, bytes1;
	content_stats(&objs0, &bytes0);
	uint8_t base[PAGE];
	struct trace_content tb = { .form = CONTENT_BYTE, .value = 0x77 };
	content *plain[3] = { content_zero(), content_apply(NULL, &tb), content_rand(31337) };
	for (int k = 0; k < 3; k++) {
		content_materialize(plain[k], base);
		/* two distant overlays, then each written back with its base bytes */
		struct trace_content w1 = tc_word(5, 0xdeadbeef), w2 = tc_word(400, 1);
		content *a = content_apply(plain[k], &w1);
		content *b = content_apply(a, &w2);
		assert_false(content_equal(b, plain[k]));
		assert_true(content_cmp(b, plain[k]) != 0);
		content_stats(&objs1, &bytes1);
		assert_true(objs1 > objs0);
		struct trace_content u = { .form = CONTENT_BYTES, .off = 40, .len = 8 };
		memcpy(u.data, base + 40, 8);
		content *c = content_apply(b, &u);
		u.off = 3200;
		memcpy(u.data, base + 3200, 8);
		content *d = content_apply(c, &u);
		assert_ptr_equal(d, plain[k]);
		assert_true(content_is_zero(d) == (k == 0));
		content_unref(a);
		content_unref(b);
		content_unref(c);
		content_unref(d);
		content_stats(&objs1, &bytes1);
		assert_int_equal(objs1, objs0);
	}
	/* byte:0 is zero; rand:0 built as a patch over zero is only byte-equal */
	struct trace_content b0 = { .form = CONTENT_BYTE, .value = 0 };
	content *z = content_apply(plain[2], &b0);
	assert_ptr_equal(z, plain[0]);
	/* a page of rand bytes, kept whole, then written back to rand: the immediate */
	struct trace_content p = { .form = CONTENT_PATCH, .off = 0, .len = 4096, .value = 31337 };
	content *full = content_apply(NULL, &p);
	assert_ptr_not_equal(full, plain[2]);
	assert_int_equal(content_cmp(full, plain[2]), 0);
	struct trace_content r = { .form = CONTENT_RAND, .value = 31337 };
	content *back = content_apply(full, &r);
	assert_ptr_equal(back, plain[2]);
	content_unref(full);
	for (int k = 0; k < 3; k++)
		content_unref(plain[k]);
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1, objs0);
}

/* memcmp order between immediates and objects, both ways, key8 ties included. */
static void test_order_imm_object(void **state)
{
	uint8_t pa[PAGE], pb[PAGE];
	struct trace_content t;
	content *v[10];
	v[0] = content_zero();
	t = (struct trace_content){ .form = CONTENT_BYTE, .value = 1 };
	v[1] = content_apply(NULL, &t);
	v[2] = content_rand(5);
	/* zero with a change past the first 8 bytes: key8 ties with zero */
	t = tc_word(100, 1);
	v[3] = content_apply(v[0], &t);
	/* byte:1 with its last byte lowered: key8 ties with byte:1, sorts below it */
	t = (struct trace_content){ .form = CONTENT_BYTES, .off = 4095, .len = 1 };
	v[4] = content_apply(v[1], &t);
	/* rand:5 with a change at the end, and whole */
	t = (struct trace_content){ .form = CONTENT_BYTES, .off = 4000, .len = 1, .data = { 0 } };
	v[5] = content_apply(v[2], &t);
	t = (struct trace_content){ .form = CONTENT_PATCH, .off = 0, .len = 4096, .value = 5 };
	v[6] = content_apply(NULL, &t);
	v[7] = content_rand(UINT64_C(1) << 63);		/* kept as an object */
	v[8] = content_rand(6);
	t = (struct trace_content){ .form = CONTENT_BYTE, .value = 0xff };
	v[9] = content_apply(NULL, &t);
	for (int i = 0; i < 10; i++) {
		for (int j = 0; j < 10; j++) {
			content_materialize(v[i], pa);
			content_materialize(v[j], pb);
			int want = memcmp(pa, pb, PAGE);
			int got = content_cmp(v[i], v[j]);
			assert_int_equal(want < 0 ? -1 : want > 0, got < 0 ? -1 : got > 0);
			assert_true(content_equal(v[i], v[j]) == !want);
			if (i != j && v[i] == v[j])
				fail();
		}
	}
	assert_true(content_cmp(v[3], v[0]) > 0);
	assert_true(content_cmp(v[4], v[1]) < 0);
	assert_int_equal(content_cmp(v[6], v[2]), 0);
	assert_true(content_key8(v[3]) == content_key8(v[0]));
	for (int i = 0; i < 10; i++)
		content_unref(v[i]);
}

/*
 * A seed that does not fit a handle is an interned object with the same
 * bytes: top byte 0x80 and a multiple of 8 (2^63 would be NULL, 2^63 + 8
 * the zero page's handle).
 */
static void test_big_seed(void **state)
{
	const uint64_t seeds[] = { UINT64_C(1) << 63, UINT64_C(0x8000000000000008),
				   UINT64_C(0x8000000000000800), UINT64_C(0x80fffffffffffff8),
				   UINT64_C(0x8012345678abcde0) };
	uint64_t objs0, bytes0, objs1, bytes1;
	for (unsigned i = 0; i < G_N_ELEMENTS(seeds); i++) {
		content_stats(&objs0, &bytes0);
		content *a = content_rand(seeds[i]);
		struct trace_content t = { .form = CONTENT_RAND, .value = seeds[i] };
		content *b = content_apply(NULL, &t);
		assert_ptr_equal(a, b);
		content_stats(&objs1, &bytes1);
		assert_int_equal(objs1 - objs0, 1);
		/* nor any immediate's: the low 63 bits' seed, zero, byte 255 */
		content *low = content_rand(seeds[i] & (UINT64_MAX >> 1));
		assert_ptr_not_equal(a, low);
		assert_true(content_cmp(a, low) != 0);
		assert_ptr_not_equal(a, content_zero());
		struct trace_content tb = { .form = CONTENT_BYTE, .value = 0xff };
		assert_ptr_not_equal(a, content_apply(NULL, &tb));
		uint8_t want[PAGE];
		plain_rand(want, seeds[i]);
		assert_bytes(a, want);
		assert_false(content_is_zero(a));
		/* overlays that cancel come back to the same object */
		struct trace_content w = tc_word(7, 0);
		content *c = content_apply(a, &w);
		struct trace_content u = { .form = CONTENT_BYTES, .off = 56, .len = 8 };
		memcpy(u.data, want + 56, 8);
		content *d = content_apply(c, &u);
		assert_ptr_equal(d, a);
		content_unref(c);
		content_unref(d);
		content_unref(low);
		content_unref(a);
		content_unref(b);
		content_stats(&objs1, &bytes1);
		assert_int_equal(objs1, objs0);
	}
}

/* memcmp order of the materialised bytes, on random pairs of related pages. */
static void test_cmp_matches_memcmp(void **state)
{
	uint64_t rng = 12345;
	uint8_t pa[PAGE], pb[PAGE];
	for (int iter = 0; iter < 3000; iter++) {
		content *x[2];
		for (int j = 0; j < 2; j++) {
			uint64_t r = splitmix64_next(&rng);
			struct trace_content t = { 0 };
			switch (r % 3) {
			case 0: t.form = CONTENT_ZERO; break;
			case 1: t.form = CONTENT_BYTE; t.value = (r >> 8) % 3; break;
			default: t.form = CONTENT_RAND; t.value = (r >> 8) % 4; break;
			}
			x[j] = content_apply(NULL, &t);
			int mods = (int)((r >> 16) % 4);
			for (int m = 0; m < mods; m++) {
				uint64_t q = splitmix64_next(&rng);
				struct trace_content u = { 0 };
				switch (q % 3) {
				case 0:
					u = tc_word((q >> 8) % 4 == 0 ? 0 : (unsigned)((q >> 12) % 512), (q >> 20) % 3);
					break;
				case 1:
					u.form = CONTENT_PATCH;
					u.off = (uint32_t)((q >> 8) % 4000);
					u.len = (uint32_t)((q >> 20) % 96) + 1;
					u.value = (q >> 30) % 3;
					break;
				default:
					u.form = CONTENT_BYTES;
					u.off = (uint32_t)((q >> 8) % 16);
					u.len = 1;
					u.data[0] = (uint8_t)((q >> 24) % 2);
					break;
				}
				content *next = content_apply(x[j], &u);
				content_unref(x[j]);
				x[j] = next;
			}
		}
		content_materialize(x[0], pa);
		content_materialize(x[1], pb);
		int want = memcmp(pa, pb, PAGE);
		int got = content_cmp(x[0], x[1]);
		assert_int_equal(want < 0 ? -1 : want > 0, got < 0 ? -1 : got > 0);
		assert_int_equal(content_cmp(x[1], x[0]) < 0 ? -1 : content_cmp(x[1], x[0]) > 0,
				 want < 0 ? 1 : want > 0 ? -1 : 0);
		assert_int_equal(content_is_zero(x[0]), !memcmp(pa, (uint8_t[PAGE]){ 0 }, PAGE));
		content_unref(x[0]);
		content_unref(x[1]);
	}
}

/* Random edit sequences: the content's bytes always equal a plain byte array's. */
static void test_edits_match_plain_page(void **state)
{
	uint64_t rng = 777;
	uint8_t plain[PAGE], got[PAGE];
	for (int iter = 0; iter < 400; iter++) {
		uint64_t r = splitmix64_next(&rng);
		content *c;
		if (r % 3 == 0) {
			c = content_zero();
			memset(plain, 0, PAGE);
		} else if (r % 3 == 1) {
			struct trace_content t = { .form = CONTENT_BYTE, .value = 0x5a };
			c = content_apply(NULL, &t);
			memset(plain, 0x5a, PAGE);
		} else {
			c = content_rand(r >> 8);
			plain_rand(plain, r >> 8);
		}
		int edits = (int)(splitmix64_next(&rng) % 60);
		for (int e = 0; e < edits; e++) {
			uint64_t q = splitmix64_next(&rng);
			struct trace_content u = { 0 };
			switch (q % 3) {
			case 0:
				u = tc_word((unsigned)((q >> 8) % 512), (q >> 20) % 4);
				{
					uint64_t v = u.value;
					for (int b = 0; b < 8; b++)
						plain[u.off * 8 + b] = (uint8_t)(v >> (8 * b));
				}
				break;
			case 1: {
				u.form = CONTENT_PATCH;
				u.len = (uint32_t)((q >> 8) % 200) + 1;
				u.off = (uint32_t)((q >> 20) % (PAGE - u.len + 1));
				u.value = q >> 40;
				uint8_t rp[PAGE];
				plain_rand(rp, u.value);
				memcpy(plain + u.off, rp, u.len);
				break;
			}
			default:
				u.form = CONTENT_BYTES;
				u.len = (uint32_t)((q >> 8) % 12) + 1;
				u.off = (uint32_t)((q >> 20) % (PAGE - u.len + 1));
				for (unsigned b = 0; b < u.len; b++) {
					/* often the byte already there, so runs and gaps get exercised */
					u.data[b] = (q >> (b % 8)) & 1 ? plain[u.off + b] : (uint8_t)(q >> 32);
					plain[u.off + b] = u.data[b];
				}
				break;
			}
			content *next = content_apply(c, &u);
			content_unref(c);
			c = next;
			content_materialize(c, got);
			assert_memory_equal(got, plain, PAGE);
		}
		content_unref(c);
	}
}

static uint64_t first_word(const void *page)
{
	uint64_t w;
	memcpy(&w, page, 8);
	return w;
}

static void test_checksum_cached(void **state)
{
	/* an immediate and an overlaid object */
	struct trace_content t = tc_word(9, 3);
	content *imm = content_rand(5);
	content *obj = content_apply(imm, &t);
	content *v[2] = { imm, obj };
	for (int i = 0; i < 2; i++) {
		content *c = v[i];
		uint64_t computed = 0;
		uint64_t a = content_checksum(c, sum_hash, &computed);
		uint64_t b = content_checksum(c, sum_hash, &computed);
		assert_true(a == b);
		assert_int_equal(computed, 1);
		uint8_t buf[PAGE];
		content_materialize(c, buf);
		assert_true(a == sum_hash(buf));
		/* another function recomputes, and counts it */
		assert_true(content_checksum(c, first_word, &computed) == first_word(buf));
		assert_int_equal(computed, 2);
		assert_true(content_checksum(c, sum_hash, &computed) == a);
		assert_int_equal(computed, 3);
		assert_true(content_checksum(c, sum_hash, &computed) == a);
		assert_int_equal(computed, 3);
	}
	content_unref(imm);
	content_unref(obj);
}

/* A 32-bit function: the low half of the page's first word. */
static uint64_t low_word(const void *page)
{
	return (uint32_t)first_word(page);
}

/* 32 bits wide for even first words: the high halves appear only later. */
static uint64_t late_wide(const void *page)
{
	uint64_t w = first_word(page);
	return w & 1 ? w : (uint32_t)w;
}

/*
 * An object keeps its checksum's low half and the store the high halves,
 * once a function gives one: every value must come back whole, those
 * computed before the first high half, objects in later pool chunks (of
 * 65536) and the ones made after, and a 32-bit function must find no
 * high half left over from a 64-bit one.
 */
static void test_checksum_high_halves(void **state)
{
	(void)state;
	enum { N = 150000 };
	struct content_store *s = content_store_new();
	struct content_store *was = content_store_use(s);
	content **v = g_new(content *, N);
	uint64_t *want = g_new(uint64_t, N);
	uint8_t buf[PAGE];
	for (unsigned i = 0; i < N; i++) {
		/* word 0 is the first word: even for the first 1000, then alternating */
		uint64_t w = i < 1000 ? (uint64_t)i << 21 : (uint64_t)i << 33 | (i & 1);
		struct trace_content t = tc_word(0, w);
		v[i] = content_apply(NULL, &t);
		if (i == N / 2) {
			for (unsigned j = 0; j <= i; j++) {
				want[j] = late_wide(content_materialize(v[j], buf));
				assert_true(content_checksum(v[j], late_wide, NULL) == want[j]);
			}
		}
	}
	for (unsigned i = N / 2 + 1; i < N; i++)
		want[i] = late_wide(content_materialize(v[i], buf));
	for (unsigned i = 0; i < N; i++)
		assert_true(content_checksum(v[i], late_wide, NULL) == want[i]);
	for (unsigned i = 0; i < N; i += 997) {
		uint64_t computed = 0;
		uint64_t lo = content_checksum(v[i], low_word, &computed);
		assert_int_equal(computed, 1);
		assert_true(lo == low_word(content_materialize(v[i], buf)));
		assert_true(lo >> 32 == 0);
	}
	for (unsigned i = 0; i < N; i++)
		content_unref(v[i]);
	g_free(v);
	g_free(want);
	content_store_use(was);
	content_store_free(s);
}

/* Many immediates, then the first again: a cache miss recomputes the right value. */
static void test_checksum_imm_evicted(void **state)
{
	enum { N = 200000 };
	uint8_t buf[PAGE];
	uint64_t computed = 0;
	/* seeds from 997 * 0x10001 up: none of them below N */
	for (uint64_t s = 997; s < N; s += 997) {
		content *c = content_rand(s * 0x10001);
		content_materialize(c, buf);
		assert_true(content_checksum(c, sum_hash, &computed) == sum_hash(buf));
		content_digest(c);
	}
	/* a change of function empties the cache; the seeds are distinct: all computed */
	uint64_t before = computed;
	for (uint64_t i = 0; i < N; i++)
		content_checksum(content_rand(i), first_word, &computed);
	assert_int_equal(computed - before, N);
	before = computed;
	for (uint64_t i = 0; i < N; i++)
		content_checksum(content_rand(i), sum_hash, &computed);
	assert_int_equal(computed - before, N);
	for (uint64_t i = 0; i < N; i++)
		content_digest(content_rand(i));
	for (uint64_t s = 997; s < N; s += 997) {
		content *c = content_rand(s * 0x10001);
		struct trace_content blob = { .form = CONTENT_BLOB };
		content_materialize(c, blob.data);
		content *whole = content_apply(NULL, &blob);
		assert_true(content_checksum(c, sum_hash, &computed) == sum_hash(blob.data));
		assert_true(content_digest(c) == content_digest(whole));
		content_unref(whole);
	}
	/* byte handles and small seeds share no slot's answer */
	for (unsigned b = 0; b < 256; b++) {
		struct trace_content t = { .form = CONTENT_BYTE, .value = b };
		content *c = content_apply(NULL, &t);
		memset(buf, (int)b, PAGE);
		assert_true(content_checksum(c, sum_hash, NULL) == sum_hash(buf));
		assert_true(content_checksum(content_rand(b), sum_hash, NULL) ==
			    sum_hash(content_peek(content_rand(b))));
	}
}

/* The same bytes as an immediate and as an object: one checksum, one digest. */
static void test_hash_imm_equals_object(void **state)
{
	for (uint64_t seed = 0; seed < 4; seed++) {
		content *imm = content_rand(seed * 0x123456789ull);
		/* the rand page kept whole (BASE_FULL), built from a patch of every byte */
		struct trace_content t = { .form = CONTENT_PATCH, .off = 0, .len = 4096,
					   .value = seed * 0x123456789ull };
		content *full = content_apply(NULL, &t);
		/* and as a blob of its materialised bytes */
		struct trace_content blob = { .form = CONTENT_BLOB };
		content_materialize(imm, blob.data);
		content *fb = content_apply(NULL, &blob);
		assert_ptr_not_equal(imm, full);
		assert_ptr_equal(full, fb);
		assert_int_equal(content_cmp(imm, full), 0);
		assert_int_equal(content_cmp(full, imm), 0);
		assert_true(content_equal(imm, full));
		assert_true(content_key8(imm) == content_key8(full));
		assert_true(content_digest(imm) == content_digest(full));
		assert_true(content_checksum(imm, sum_hash, NULL) ==
			    content_checksum(full, sum_hash, NULL));
		assert_true(content_checksum(imm, first_word, NULL) ==
			    content_checksum(full, first_word, NULL));
		content_unref(imm);
		content_unref(full);
		content_unref(fb);
	}
	/* zero: the hashes of 4096 zero bytes */
	content *z = content_zero();
	uint8_t buf[PAGE] = { 0 };
	assert_true(content_digest(z) == content_digest(z));
	assert_true(content_checksum(z, sum_hash, NULL) == sum_hash(buf));
	assert_true(content_checksum(z, first_word, NULL) == 0);
	content_unref(z);
}

/*
 * Memory: many distinct rand pages cost nothing (immediates), and the same
 * pages each with a small change far less than 4 KiB each.
 */
static void test_compact(void **state)
{
	enum { N = 100000 };
	content **v = malloc(N * sizeof(*v));
	uint64_t objs0, bytes0, objs1, bytes1;
	content_stats(&objs0, &bytes0);
	uint64_t foot0 = content_footprint();
	for (int i = 0; i < N; i++)
		v[i] = content_rand(1000000 + (uint64_t)i);
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1 - objs0, 0);
	assert_int_equal(bytes1 - bytes0, 0);
	assert_true(content_footprint() == foot0);
	for (int i = 0; i < N; i++) {
		struct trace_content t = tc_word(1, (uint64_t)i);
		content *next = content_apply(v[i], &t);
		content_unref(v[i]);
		v[i] = next;
	}
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1 - objs0, N);
	assert_true((bytes1 - bytes0) / N < 256);
	assert_true(content_footprint() - foot0 >= bytes1 - bytes0);
	for (int i = 0; i < N; i++)
		content_unref(v[i]);
	content_stats(&objs1, &bytes1);
	assert_int_equal(objs1, objs0);
	free(v);
}

/*
 * Digest content (trace version 4): equal digests are one page, different
 * ones differ from byte 0, the stand-in bytes are the digest then
 * rand:trace_digest_seed from byte 16, and the checksum follows the digest.
 */
static void test_digest_stand_in(void **state)
{
	struct trace_content a = { .form = CONTENT_DIGEST, .len = 16 }, b = a, c = a;
	uint8_t want[PAGE], got[PAGE];

	for (int i = 0; i < 16; i++) {
		a.data[i] = b.data[i] = (uint8_t)(0x11 * i);
		c.data[i] = (uint8_t)(0x11 * i) ^ (i == 15);
	}
	content *pa = content_apply(NULL, &a), *pb = content_apply(NULL, &b);
	content *pc = content_apply(pa, &c);

	assert_ptr_equal(pa, pb);
	assert_true(content_equal(pa, pb));
	assert_false(content_equal(pa, pc));
	plain_rand(want, trace_digest_seed(&a));
	memcpy(want, a.data, 16);
	assert_memory_equal(content_materialize(pa, got), want, PAGE);
	assert_int_equal(content_checksum(pa, sum_hash, NULL), sum_hash(want));
	assert_int_not_equal(content_checksum(pc, sum_hash, NULL), content_checksum(pa, sum_hash, NULL));
	/* a digest page is not a rand: page of the same seed */
	content *r = content_rand(trace_digest_seed(&a));
	assert_false(content_equal(pa, r));
	content_unref(r);
	content_unref(pa);
	content_unref(pb);
	content_unref(pc);
}

/*
 * Two stores in one process: each holds its own objects, interns within
 * itself only, reports its own footprint, and freeing one (with contents
 * still live in it) leaves the other and the process's store as they were.
 */
static void test_stores(void **state)
{
	(void)state;
	uint64_t objs0, bytes0, objs, bytes;
	content_stats(&objs0, &bytes0);
	uint64_t foot0 = content_footprint();

	struct content_store *a = content_store_new(), *b = content_store_new();
	struct content_store *was = content_store_use(a);
	struct trace_content w = tc_word(3, 0x1234);
	content *ca = content_apply(NULL, &w);
	content *ca2 = content_apply(NULL, &w);
	assert_ptr_equal(ca, ca2);	/* interned within a */
	content_stats(&objs, &bytes);
	assert_int_equal(objs, 1);
	assert_true(content_footprint() > 0);

	content_store_use(b);
	content_stats(&objs, &bytes);
	assert_int_equal(objs, 0);	/* b sees none of a's */
	content *cb = content_apply(NULL, &w);
	assert_ptr_not_equal(cb, ca);
	content_stats(&objs, &bytes);
	assert_int_equal(objs, 1);
	uint8_t pa[4096], pb[4096];
	content_materialize(cb, pb);

	content_store_use(a);
	content_materialize(ca, pa);
	assert_memory_equal(pa, pb, sizeof(pa));
	content_unref(ca2);
	content_store_use(was);
	content_store_free(a);		/* ca still live in it: freed with it */

	content_store_use(b);
	content_materialize(cb, pb);
	assert_memory_equal(pa, pb, sizeof(pa));
	content_unref(cb);
	content_stats(&objs, &bytes);
	assert_int_equal(objs, 0);
	content_store_use(was);
	content_store_free(b);

	content_stats(&objs, &bytes);
	assert_int_equal(objs, objs0);
	assert_int_equal(bytes, bytes0);
	assert_int_equal(content_footprint(), foot0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splitmix_check_values),
		cmocka_unit_test(test_stores),
		cmocka_unit_test(test_forms_exact),
		cmocka_unit_test(test_same_bytes_two_routes),
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_plain_no_object),
		cmocka_unit_test(test_overlays_cancel),
		cmocka_unit_test(test_order_imm_object),
		cmocka_unit_test(test_big_seed),
		cmocka_unit_test(test_cmp_matches_memcmp),
		cmocka_unit_test(test_edits_match_plain_page),
		cmocka_unit_test(test_checksum_cached),
		cmocka_unit_test(test_checksum_imm_evicted),
		cmocka_unit_test(test_checksum_high_halves),
		cmocka_unit_test(test_hash_imm_equals_object),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_digest_stand_in),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
