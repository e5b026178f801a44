// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Version 2 (traces/FORMAT.md, "Version 2: blobs"): blob definitions and blob:ID content,
 * in text and binary, their errors, the round trips and the content model.
 */
#include <zlib.h>
#include "content/content.h"
#include "tests/traces/common.h"
#include "traces/binary.h"

/* A page that is neither uniform nor any rand: byte i = i * 7 + tag. */
static void pattern(uint8_t *page, unsigned int tag)
{
	for (unsigned int i = 0; i < TRACE_PAGE_SIZE; i++)
		page[i] = (uint8_t)(i * 7 + tag);
}

static char *hex_page(unsigned int tag)
{
	uint8_t page[TRACE_PAGE_SIZE];
	GString *s = g_string_new(NULL);

	pattern(page, tag);
	for (unsigned int i = 0; i < TRACE_PAGE_SIZE; i++)
		g_string_append_printf(s, "%02x", page[i]);
	return g_string_free(s, FALSE);
}

/* A v2 text: header, spawn, map, then extra. */
static char *v2_text(const char *extra)
{
	char *h0 = hex_page(0), *h1 = hex_page(1);
	char *t = g_strdup_printf("ksmtrace 2\n0 spawn a\n0 map a 0x10 8\n"
				  "0 advise a 0x10 8 mergeable\n"
				  "blob 0 %s\n# a comment between\nblob 1 %s\n%s", h0, h1, extra);

	g_free(h0);
	g_free(h1);
	return t;
}

static void test_parse(void **state)
{
	char *text = v2_text("5 write a 0x10 blob:1\n5 fill a 0x11 3 blob:0\n6 write a 0x17 zero\n");
	struct trace_record *rec = g_new0(struct trace_record, 1);
	uint8_t want[TRACE_PAGE_SIZE];
	GError *error = NULL;
	trace_reader *r;

	put_file("t.ksmt", text, strlen(text));
	r = trace_reader_open("t.ksmt", &error);
	assert_non_null(r);
	assert_int_equal(trace_reader_version(r, &error), 2);
	for (int i = 0; i < 3; i++)
		assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_WRITE);
	assert_int_equal(rec->line, 8);
	assert_int_equal(rec->content.form, CONTENT_BLOB);
	assert_int_equal(rec->content.value, 1);
	assert_int_equal(rec->content.len, TRACE_PAGE_SIZE);
	pattern(want, 1);
	assert_memory_equal(rec->content.data, want, TRACE_PAGE_SIZE);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_FILL);
	assert_int_equal(rec->npages, 3);
	pattern(want, 0);
	assert_memory_equal(rec->content.data, want, TRACE_PAGE_SIZE);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(trace_reader_next(r, rec, &error), 0);
	assert_int_equal(trace_reader_blobs(r), 2);
	trace_reader_free(r);
	g_free(rec);
	g_free(text);
}

struct bad_case {
	const char *extra;
	const char *error;
};

static void test_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ "0 write a 0x10 blob:2\n", "t.ksmt:8: blob 2 is not defined (2 defined so far)" },
		{ "0 write a 0x10 blob:x\n", "t.ksmt:8: bad blob id 'x'" },
		{ "0 write a 0x10 blob\n", "t.ksmt:8: bad content 'blob' (zero, byte:HH, rand:SEED, "
		  "word:I:VALUE, patch:OFF:LEN:SEED, bytes:OFF:HEX or blob:ID)" },
		{ "blob 3 00\n", "t.ksmt:8: blob id 3 out of order (the next blob is 2)" },
		{ "blob 1 00\n", "t.ksmt:8: blob id 1 out of order (the next blob is 2)" },
		{ "blob 2 0011\n", "t.ksmt:8: blob 2 has 4 hex digits (8192 expected: 4096 bytes)" },
		{ "blob 2\n", "t.ksmt:8: blob takes 2 arguments (<id> <hex of 4096 bytes>), got 1" },
		{ "blob\n", "t.ksmt:8: blob takes 2 arguments (<id> <hex of 4096 bytes>), got 0" },
		{ "0 blob 2 00\n", "t.ksmt:8: unknown verb 'blob'" },
	};
	uint64_t n;

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *text = v2_text(cases[i].extra), *msg;

		msg = read_text(text, &n);
		assert_non_null(msg);
		assert_string_equal(msg, cases[i].error);
		g_free(msg);
		g_free(text);
	}
	/* a bad hex digit in an otherwise well-formed blob */
	{
		char *h = hex_page(2), *extra, *text, *msg;

		h[101] = 'g';
		extra = g_strdup_printf("blob 2 %s\n", h);
		text = v2_text(extra);
		msg = read_text(text, &n);
		assert_string_equal(msg, "t.ksmt:8: bad hex in blob 2 at byte 50");
		g_free(msg);
		g_free(text);
		g_free(extra);
		g_free(h);
	}
}

/* Writes records with blob pages through the writer API: ids are the writer's. */
static void write_blob_trace(const char *path, enum trace_format fmt)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_writer *w = trace_writer_open_version(path, fmt, 2, &error);

	assert_non_null(w);
	rec->verb = TRACE_SPAWN;
	strcpy(rec->mm, "a");
	assert_true(trace_writer_put(w, rec, &error));
	rec->verb = TRACE_MAP;
	rec->vpn = 0x10;
	rec->npages = 8;
	assert_true(trace_writer_put(w, rec, &error));
	for (unsigned int i = 0; i < 8; i++) {
		rec->verb = TRACE_WRITE;
		rec->t_us = i;
		rec->vpn = 0x10 + i;
		rec->npages = 1;
		rec->content.form = CONTENT_BLOB;
		rec->content.value = 1000 + i;	/* ignored: content-addressed */
		rec->content.off = 0;
		rec->content.len = TRACE_PAGE_SIZE;
		pattern(rec->content.data, i % 3);
		assert_true(trace_writer_put(w, rec, &error));
	}
	assert_int_equal(trace_writer_blobs(w), 3);
	assert_int_equal(trace_writer_blob_refs(w), 8);
	assert_true(trace_writer_close(w, &error));
	g_free(rec);
}

static void test_round_trip(void **state)
{
	char *text, *first;
	uint64_t n;

	write_blob_trace("w.ksmt", TRACE_FMT_TEXT);
	text = slurp("w.ksmt", NULL);
	assert_true(g_str_has_prefix(text, "ksmtrace 2\n0 spawn a\n0 map a 0x10 8\nblob 0 "));
	assert_non_null(strstr(text, "\n0 write a 0x10 blob:0\nblob 1 "));
	assert_non_null(strstr(text, "\n3 write a 0x13 blob:0\n"));
	assert_non_null(strstr(text, "\n7 write a 0x17 blob:1\n"));
	assert_null(strstr(text, "blob 3 "));
	assert_null(read_file_all("w.ksmt", &n));
	assert_int_equal(n, 10);

	/* text -> binary -> text, binary -> text -> binary */
	assert_null(convert("w.ksmt", "t.ksmb"));
	assert_null(convert("t.ksmb", "back.ksmt"));
	first = slurp("back.ksmt", NULL);
	assert_string_equal(first, text);
	assert_null(convert("back.ksmt", "t2.ksmb"));
	{
		size_t la, lb;
		char *a = slurp("t.ksmb", &la), *b = slurp("t2.ksmb", &lb);

		assert_int_equal(la, lb);
		assert_memory_equal(a, b, la);
		assert_int_equal((uint8_t)a[BIN_MAGIC_LEN], 2);
		g_free(a);
		g_free(b);
	}
	/* the binary writer straight, and gz */
	write_blob_trace("w.ksmb", TRACE_FMT_BINARY);
	assert_null(convert("w.ksmb", "w2.ksmt.gz"));
	assert_null(convert("w2.ksmt.gz", "w2.ksmt"));
	g_free(first);
	first = slurp("w2.ksmt", NULL);
	assert_string_equal(first, text);
	g_free(first);
	g_free(text);
}

/* Duplicate blobs in a hand-written trace are read, and stored once on writing. */
static void test_dedup_on_convert(void **state)
{
	char *h = hex_page(5);
	char *extra = g_strdup_printf("blob 2 %s\n0 write a 0x10 blob:2\n0 write a 0x11 blob:1\n", h);
	char *text = v2_text(extra), *out;

	g_free(extra);
	extra = hex_page(1);
	/* make blob 2 a copy of blob 1 */
	g_free(text);
	{
		char *e2 = g_strdup_printf("blob 2 %s\n0 write a 0x10 blob:2\n0 write a 0x11 blob:1\n",
					   extra);

		text = v2_text(e2);
		g_free(e2);
	}
	put_file("d.ksmt", text, strlen(text));
	assert_null(convert("d.ksmt", "c.ksmt"));
	out = slurp("c.ksmt", NULL);
	assert_non_null(strstr(out, "0 write a 0x10 blob:0\n0 write a 0x11 blob:0\n"));
	assert_null(strstr(out, "blob 1 "));
	g_free(out);
	g_free(text);
	g_free(extra);
	g_free(h);
}

static void test_binary_errors(void **state)
{
	/* v1 binary: opcode 13 and content form 6 do not exist */
	static const uint8_t v1_blob[] = { 0x0d };
	GByteArray *payload = g_byte_array_new();
	uint8_t page[TRACE_PAGE_SIZE];
	uLongf zlen;
	uint8_t *z;
	char *msg;

	for (int v = 1; v <= 2; v++) {
		const uint8_t *pl = v1_blob;
		size_t n = sizeof(v1_blob);
		GByteArray *b = g_byte_array_new();
		uint8_t ver = v;

		zlen = compressBound(n);
		z = g_malloc(zlen);
		assert_int_equal(compress2(z, &zlen, pl, n, 6), Z_OK);
		g_byte_array_append(b, (const uint8_t *)BIN_MAGIC, BIN_MAGIC_LEN);
		g_byte_array_append(b, &ver, 1);
		g_byte_array_append(b, z, zlen);
		put_file("t.ksmb", b->data, b->len);
		msg = read_file_all("t.ksmb", NULL);
		assert_string_equal(msg, v == 1 ? "t.ksmb: offset 0: unknown opcode"
					       : "t.ksmb: offset 0: truncated record");
		g_free(msg);
		g_free(z);
		g_byte_array_free(b, TRUE);
	}
	/* v2: a reference to a blob not defined, and a good one */
	pattern(page, 9);
	{
		static const uint8_t head[] = { 0x01, 0x01, 'a', 0x00, 0x02, 0x00, 0x20, 0x04 };
		static const uint8_t bad_ref[] = { 0x65, 0x00, 0x00, 0x01 };	/* write blob:1 */
		static const uint8_t good_ref[] = { 0x65, 0x00, 0x00, 0x00, 0x00, 0x03 };

		for (int k = 0; k < 2; k++) {
			GByteArray *b = g_byte_array_new();
			uint8_t ver = 2, blob = BIN_BLOB;

			g_byte_array_set_size(payload, 0);
			g_byte_array_append(payload, head, sizeof(head));
			g_byte_array_append(payload, &blob, 1);
			g_byte_array_append(payload, page, sizeof(page));
			if (k == 0)
				g_byte_array_append(payload, bad_ref, sizeof(bad_ref));
			else
				g_byte_array_append(payload, good_ref, sizeof(good_ref));
			zlen = compressBound(payload->len);
			z = g_malloc(zlen);
			assert_int_equal(compress2(z, &zlen, payload->data, payload->len, 6), Z_OK);
			g_byte_array_append(b, (const uint8_t *)BIN_MAGIC, BIN_MAGIC_LEN);
			g_byte_array_append(b, &ver, 1);
			g_byte_array_append(b, z, zlen);
			put_file("t.ksmb", b->data, b->len);
			msg = read_file_all("t.ksmb", NULL);
			if (k == 0)
				assert_string_equal(msg, "t.ksmb: offset 4105: reference to a blob that is not defined");
			else
				assert_null(msg);
			g_free(msg);
			g_free(z);
			g_byte_array_free(b, TRUE);
		}
	}
	g_byte_array_free(payload, TRUE);
}

static void test_v1_writer_refuses(void **state)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_writer *w = trace_writer_open("v1.ksmt", TRACE_FMT_TEXT, &error);

	rec->verb = TRACE_SPAWN;
	strcpy(rec->mm, "a");
	assert_true(trace_writer_put(w, rec, &error));
	rec->verb = TRACE_MAP;
	rec->vpn = 1;
	rec->npages = 1;
	assert_true(trace_writer_put(w, rec, &error));
	rec->verb = TRACE_WRITE;
	rec->content.form = CONTENT_BLOB;
	rec->content.len = TRACE_PAGE_SIZE;
	assert_false(trace_writer_put(w, rec, &error));
	assert_string_equal(error->message,
			    "v1.ksmt: record 3: blob content needs trace version 2 (this is version 1)");
	g_error_free(error);
	trace_writer_abort(w);
	assert_false(g_file_test("v1.ksmt", G_FILE_TEST_EXISTS));
	g_free(rec);
}

static void test_content_apply(void **state)
{
	struct trace_content *tc = g_new0(struct trace_content, 1);
	uint8_t buf[TRACE_PAGE_SIZE];
	content *a, *b, *z, *u;

	tc->form = CONTENT_BLOB;
	tc->len = TRACE_PAGE_SIZE;
	pattern(tc->data, 3);
	z = content_zero();
	a = content_apply(z, tc);
	b = content_apply(NULL, tc);
	assert_ptr_equal(a, b);		/* interned */
	content_unref(b);
	assert_memory_equal(content_materialize(a, buf), tc->data, TRACE_PAGE_SIZE);
	assert_false(content_is_zero(a));
	/* a uniform blob is the same page as byte:hh */
	memset(tc->data, 0x5a, TRACE_PAGE_SIZE);
	u = content_apply(NULL, tc);
	tc->form = CONTENT_BYTE;
	tc->value = 0x5a;
	b = content_apply(NULL, tc);
	assert_true(content_equal(u, b));
	content_unref(b);
	content_unref(u);
	content_unref(a);
	content_unref(content_apply(NULL, &(struct trace_content){ .form = CONTENT_ZERO }));
	content_unref(z);
	g_free(tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_dedup_on_convert, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_binary_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_v1_writer_refuses, dir_setup, dir_teardown),
		cmocka_unit_test(test_content_apply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
