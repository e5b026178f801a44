// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writers and the binary form: canonical text, round trips, gzip input,
 * truncated and corrupt binary files (each must be an error with an offset,
 * never a crash or a hang), and temporary files that never outlive a writer.
 */
#include <zlib.h>
#include "tests/traces/common.h"
#include "traces/binary.h"

/* Every verb and content form, written loosely. */
static const char loose[] =
	"ksmtrace 1   # a header\n"
	"0 set pages_to_scan 0X3E8\n"
	"0\tspawn\tvm-1.x node=0\n"
	"0 spawn b node=3\n"
	"5 map vm-1.x 4096 0x10\n"
	"5 map b 0X1000 16\n"
	"5 advise vm-1.x 0x1000 16 mergeable\n"
	"5 advise b 0x1000 8 mergeable\n"
	"5 advise b 0x1004 2 unmergeable\n"
	"6 write vm-1.x 0x1000 zero\n"
	"6 write vm-1.x 0x1001 byte:Ab\n"
	"6 write vm-1.x 0x1002 rand:42\n"
	"6 write vm-1.x 0x1003 word:0x1ff:0XFF\n"
	"6 write vm-1.x 0x1004 patch:0x10:16:0\n"
	"6 write vm-1.x 0x1005 bytes:4094:CAFE\n"
	"6 fill b 0x1000 16 rand:18446744073709551615\n"
	"6 fill b 0x1008 2 bytes:0:00\n"
	"6 fill b 0x1000 1 patch:0:4096:7\n"
	"6 fill b 0x1000 1 word:7:0\n"
	"6 fillseq b 0x1000 16 0\n"
	"0007 set run 1\n"
	"7 set advisor_mode scan-time\n"
	"7 set advisor_mode none\n"
	"9 settle 2\n"
	"9 mark m1\n"
	"1000000 unmap b 0 0x100000000\n"
	"1000000 exit b\n"
	"1000001 spawn c\n"
	"1000001 map c 0xffffffff 1\n"
	"1000001 spawn b\n"
	"1000001 exit vm-1.x\n"
	"1000001 spawn d\n"
	"1000001 map d 0xffffffff 1\n"
	"1000001 write d 0xffffffff zero\n"
	"18446744073709551615 mark end\n";

static const char canonical[] =
	"ksmtrace 1\n"
	"0 set pages_to_scan 1000\n"
	"0 spawn vm-1.x\n"
	"0 spawn b node=3\n"
	"5 map vm-1.x 0x1000 16\n"
	"5 map b 0x1000 16\n"
	"5 advise vm-1.x 0x1000 16 mergeable\n"
	"5 advise b 0x1000 8 mergeable\n"
	"5 advise b 0x1004 2 unmergeable\n"
	"6 write vm-1.x 0x1000 zero\n"
	"6 write vm-1.x 0x1001 byte:ab\n"
	"6 write vm-1.x 0x1002 rand:0x2a\n"
	"6 write vm-1.x 0x1003 word:511:0xff\n"
	"6 write vm-1.x 0x1004 patch:16:16:0x0\n"
	"6 write vm-1.x 0x1005 bytes:4094:cafe\n"
	"6 fill b 0x1000 16 rand:0xffffffffffffffff\n"
	"6 fill b 0x1008 2 bytes:0:00\n"
	"6 fill b 0x1000 1 patch:0:4096:0x7\n"
	"6 fill b 0x1000 1 word:7:0x0\n"
	"6 fillseq b 0x1000 16 0x0\n"
	"7 set run 1\n"
	"7 set advisor_mode scan-time\n"
	"7 set advisor_mode none\n"
	"9 settle 2\n"
	"9 mark m1\n"
	"1000000 unmap b 0x0 4294967296\n"
	"1000000 exit b\n"
	"1000001 spawn c\n"
	"1000001 map c 0xffffffff 1\n"
	"1000001 spawn b\n"
	"1000001 exit vm-1.x\n"
	"1000001 spawn d\n"
	"1000001 map d 0xffffffff 1\n"
	"1000001 write d 0xffffffff zero\n"
	"18446744073709551615 mark end\n";

static void test_canonical(void **state)
{
	put_file("loose.ksmt", loose, strlen(loose));
	assert_null(convert("loose.ksmt", "c.ksmt"));
	assert_file("c.ksmt", canonical);
	/* canonical text is a fixed point */
	assert_null(convert("c.ksmt", "c2.ksmt"));
	assert_file("c2.ksmt", canonical);
}

static void test_round_trip(void **state)
{
	put_file("loose.ksmt", loose, strlen(loose));
	/* text -> binary -> text gives the canonical text */
	assert_null(convert("loose.ksmt", "t.ksmb"));
	assert_null(convert("t.ksmb", "back.ksmt"));
	assert_file("back.ksmt", canonical);
	/* binary -> text -> binary gives the same bytes */
	assert_null(convert("back.ksmt", "t2.ksmb"));
	assert_same_files("t.ksmb", "t2.ksmb");
	assert_null(convert("t.ksmb", "t3.ksmb"));
	assert_same_files("t.ksmb", "t3.ksmb");
	/* gzip text both ways */
	assert_null(convert("t.ksmb", "t.ksmt.gz"));
	assert_null(convert("t.ksmt.gz", "gz.ksmt"));
	assert_file("gz.ksmt", canonical);
	/* and FORMAT.md's round trip through gz binary, too */
	assert_null(convert("t.ksmt.gz", "t4.ksmb"));
	assert_same_files("t.ksmb", "t4.ksmb");
}

static void test_binary_lines(void **state)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_reader *r;
	uint64_t n = 0;
	int rc;

	put_file("loose.ksmt", loose, strlen(loose));
	assert_null(convert("loose.ksmt", "t.ksmb"));
	r = trace_reader_open("t.ksmb", &error);
	assert_non_null(r);
	while ((rc = trace_reader_next(r, rec, &error)) > 0) {
		n++;
		assert_int_equal(rec->line, n);
		if (n == 3) {
			assert_string_equal(rec->mm, "b");
			assert_int_equal(rec->node, 3);
		}
		if (n == 14) {
			assert_int_equal(rec->content.form, CONTENT_BYTES);
			assert_int_equal(rec->content.off, 4094);
			assert_int_equal(rec->content.len, 2);
			assert_memory_equal(rec->content.data, "\xca\xfe", 2);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 34);
	assert_true(trace_reader_offset(r) > 0);
	assert_int_equal(trace_reader_size(r), trace_reader_offset(r));
	trace_reader_free(r);
	g_free(rec);
}

static void gzip_file(const char *in, const char *out)
{
	size_t len;
	char *data = slurp(in, &len);
	gzFile gz = gzopen(out, "wb");

	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, data, len), (int)len);
	assert_int_equal(gzclose(gz), Z_OK);
	g_free(data);
}

static void test_gz_input(void **state)
{
	uint64_t n;
	char *msg;

	put_file("loose.ksmt", loose, strlen(loose));
	gzip_file("loose.ksmt", "loose.gz");
	msg = read_file_all("loose.gz", &n);
	assert_null(msg);
	assert_int_equal(n, 34);
	/* errors in gzip text name the line of the uncompressed text */
	put_file("bad.ksmt", "ksmtrace 1\n0 spawn a\n0 spawn a\n", 31);
	gzip_file("bad.ksmt", "bad.ksmt.gz");
	msg = read_file_all("bad.ksmt.gz", NULL);
	assert_string_equal(msg, "bad.ksmt.gz:3: mm 'a' already exists");
	g_free(msg);
	/* gzipped binary reads too */
	assert_null(convert("loose.ksmt", "t.ksmb"));
	gzip_file("t.ksmb", "t.ksmb.gz");
	msg = read_file_all("t.ksmb.gz", &n);
	assert_null(msg);
	assert_int_equal(n, 34);
	/* a truncated gzip member is an error */
	{
		size_t len;
		char *data = slurp("loose.gz", &len);

		put_file("cut.gz", data, len - 5);
		msg = read_file_all("cut.gz", NULL);
		assert_non_null(msg);
		assert_true(g_str_has_prefix(msg, "cut.gz"));
		g_free(msg);
		g_free(data);
	}
}

/* Every proper prefix of a binary file is an error, never a crash. */
static void test_truncated(void **state)
{
	size_t len;
	char *data;

	put_file("loose.ksmt", loose, strlen(loose));
	assert_null(convert("loose.ksmt", "t.ksmb"));
	data = slurp("t.ksmb", &len);
	for (size_t cut = 0; cut < len; cut++) {
		char *msg;

		put_file("cut.ksmb", data, cut);
		msg = read_file_all("cut.ksmb", NULL);
		if (!msg)
			print_error("prefix of %zu bytes accepted\n", cut);
		assert_non_null(msg);
		assert_true(g_str_has_prefix(msg, cut ? "cut.ksmb: offset " : "cut.ksmb:1: "));
		/* a cut in the compressed stream is placed in the file, not past its end */
		if (strstr(msg, "truncated compressed data")) {
			uint64_t off = g_ascii_strtoull(msg + strlen("cut.ksmb: offset "), NULL, 10);

			assert_true(off <= cut);
		}
		g_free(msg);
	}
	g_free(data);
}

/* Flipping any bit anywhere: an error or (rarely) another valid trace, no crash. */
static void test_bit_flips(void **state)
{
	size_t len;
	char *data;

	put_file("loose.ksmt", loose, strlen(loose));
	assert_null(convert("loose.ksmt", "t.ksmb"));
	data = slurp("t.ksmb", &len);
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			char *msg;

			data[i] ^= 1 << bit;
			put_file("flip.ksmb", data, len);
			msg = read_file_all("flip.ksmb", NULL);
			if (msg)
				assert_true(g_str_has_prefix(msg, "flip.ksmb"));
			g_free(msg);
			data[i] ^= 1 << bit;
		}
	}
	g_free(data);
}

/* A binary file with header version ver and this decompressed payload. */
static void make_bin(const char *name, int ver, const void *payload, size_t n, const char *tail)
{
	uLongf zlen = compressBound(n);
	GByteArray *b = g_byte_array_new();
	uint8_t *z = g_malloc(zlen);
	uint8_t v = ver;

	assert_int_equal(compress2(z, &zlen, payload, n, 6), Z_OK);
	g_byte_array_append(b, (const uint8_t *)BIN_MAGIC, BIN_MAGIC_LEN);
	g_byte_array_append(b, &v, 1);
	g_byte_array_append(b, z, zlen);
	if (tail)
		g_byte_array_append(b, (const uint8_t *)tail, strlen(tail));
	put_file(name, b->data, b->len);
	g_byte_array_free(b, TRUE);
	g_free(z);
}

struct corrupt_case {
	const char *payload;
	size_t n;
	const char *error;
};

#define P(s) s, sizeof(s) - 1
/* spawn a; map a 0x10 4: 7 bytes, then records at offset 7 */
/* spawn a; map a 0x10 4: 8 bytes, so the next record is at offset 8 */
#define SPAWN_MAP "\x01\x01" "a" "\x00" "\x02\x00\x20\x04"

static const struct corrupt_case corrupt_cases[] = {
	{ P(""), "t.ksmb: offset 0: truncated: the end record is missing" },
	{ P("\x0d"), "t.ksmb: offset 0: unknown opcode" },
	{ P("\x0f\x00"), "t.ksmb: offset 0: unknown opcode" },
	{ P("\x1b\x01\x00\x00"), "t.ksmb: offset 0: unknown opcode" },
	{ P("\x10\x00"), "t.ksmb: offset 0: unknown opcode" },
	{ P("\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x00"), "t.ksmb: offset 0: bad varint" },
	{ P("\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02\x00\x00"), "t.ksmb: offset 0: bad varint" },
	{ P("\x0b\x81\x00\x00\x00"), "t.ksmb: offset 0: bad varint" },
	{ P("\x0b"), "t.ksmb: offset 0: truncated record" },
	{ P("\x0b\x80"), "t.ksmb: offset 0: truncated record" },
	{ P("\x8b\x00\x01\x00\x01"), "t.ksmb: offset 0: zero time delta" },
	{ P("\x8c\x05\x01" "a" "\x8c\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01" "b"),
	  "t.ksmb: offset 4: time beyond 64 bits" },
	{ P("\x02\x00\x00\x01"), "t.ksmb: offset 0: reference to an mm slot that is not live" },
	{ P(SPAWN_MAP "\x09\x00" "\x09\x00"),
	  "t.ksmb: offset 10: reference to an mm slot that is not live" },
	{ P(SPAWN_MAP "\x05\x01\x00"), "t.ksmb: offset 8: reference to an mm slot that is not live" },
	{ P("\x00\x05"), "t.ksmb: offset 0: record count in the end record does not match" },
	{ P("\x00\x00\x00"), "t.ksmb: offset 2: trailing data after the end record" },
	{ P("\x0b\x01\x00\x01"), "t.ksmb: offset 0: settle needs run 1 (run is 0)" },
	{ P("\x0a\x0d\x00\x00\x01"), "t.ksmb: offset 0: unknown knob" },
	{ P("\x0a\x00\x03\x00\x01"), "t.ksmb: offset 0: value 3 is out of range for run (0..2)" },
	{ P("\x0a\x08\x02\x00\x01"),
	  "t.ksmb: offset 0: value 2 is out of range for advisor_mode (0 none, 1 scan-time)" },
	{ P(SPAWN_MAP "\x05\x00\x08"), "t.ksmb: offset 8: vpn 0x14 is not mapped in mm 'a'" },
	{ P(SPAWN_MAP "\x15\x00\x01\x07"), "t.ksmb: offset 8: vpn 0xf is not mapped in mm 'a'" },
	{ P(SPAWN_MAP "\x15\x00\x06\x07\x00\x03"), NULL },
	{ P(SPAWN_MAP "\x65\x00\x00\x00\x00"), "t.ksmb: offset 8: unknown content form" },
	{ P(SPAWN_MAP "\x75\x00\x00\x00\x00"), "t.ksmb: offset 8: unknown content form" },
	{ P(SPAWN_MAP "\x55\x00\x00\xff\x1f\x02\xaa\xbb"),
	  "t.ksmb: offset 8: offset or length outside the page" },
	{ P(SPAWN_MAP "\x55\x00\x00\x00\x00"), "t.ksmb: offset 8: offset or length outside the page" },
	{ P(SPAWN_MAP "\x45\x00\x00\x00\x00\x00"), "t.ksmb: offset 8: offset or length outside the page" },
	{ P(SPAWN_MAP "\x35\x00\x00\x80\x04\x00"), "t.ksmb: offset 8: word index out of range" },
	{ P(SPAWN_MAP "\x55\x00\x00\x00\x80\x20"), "t.ksmb: offset 8: truncated record" },
	{ P("\x02\x00\x80\x80\x80\x80\x10\x01"), "t.ksmb: offset 0: reference to an mm slot that is not live" },
	{ P("\x01\x01" "a" "\x00" "\x02\x00\x80\x80\x80\x80\x20\x01"),
	  "t.ksmb: offset 4: vpn 0x100000000 + npages 1 is beyond 2^32 pages" },
	{ P("\x01\x01" "a" "\x00" "\x02\x00\x00\x00"), "t.ksmb: offset 4: npages must be at least 1" },
	{ P("\x01\x01" "a" "\x00" "\x01\x01" "a" "\x00"), "t.ksmb: offset 4: mm 'a' already exists" },
	{ P("\x01\x00\x00\x00\x01"), "t.ksmb: offset 0: bad name length" },
	{ P("\x01\x41" "a"), "t.ksmb: offset 0: bad name length" },
	{ P("\x01\x03" "a/b" "\x00\x00\x01"), "t.ksmb: offset 0: bad mm name" },
	{ P("\x01\x01" "a" "\x80\x08\x00\x01"), "t.ksmb: offset 0: node out of range" },
	{ P("\x0c\x02" "m!" "\x00\x01"), "t.ksmb: offset 0: bad label" },
	{ P("\x0c\x00\x00\x01"), "t.ksmb: offset 0: bad label length" },
};

static void test_corrupt(void **state)
{
	static const char good[] = "\x0c\x01" "m" "\x00\x01";
	char *msg;

	for (size_t i = 0; i < G_N_ELEMENTS(corrupt_cases); i++) {
		make_bin("t.ksmb", 1, corrupt_cases[i].payload, corrupt_cases[i].n, NULL);
		msg = read_file_all("t.ksmb", NULL);
		if (!corrupt_cases[i].error) {	/* a control: the same bytes, valid */
			assert_null(msg);
			continue;
		}
		if (!msg || strcmp(msg, corrupt_cases[i].error))
			print_error("case %zu\n", i);
		assert_non_null(msg);
		assert_string_equal(msg, corrupt_cases[i].error);
		g_free(msg);
	}

	/* the good one, then the header's and the container's faults */
	make_bin("t.ksmb", 1, good, sizeof(good) - 1, NULL);
	assert_null(read_file_all("t.ksmb", NULL));
	make_bin("t.ksmb", 5, good, sizeof(good) - 1, NULL);
	msg = read_file_all("t.ksmb", NULL);
	assert_string_equal(msg, "t.ksmb: offset 8: unsupported binary version 5 (this reader knows 1 to 4)");
	g_free(msg);
	make_bin("t.ksmb", 0, good, sizeof(good) - 1, NULL);
	msg = read_file_all("t.ksmb", NULL);
	assert_string_equal(msg, "t.ksmb: offset 8: unsupported binary version 0 (this reader knows 1 to 4)");
	g_free(msg);
	make_bin("t.ksmb", 1, good, sizeof(good) - 1, "junk");
	msg = read_file_all("t.ksmb", NULL);
	assert_true(g_str_has_prefix(msg, "t.ksmb: offset "));
	assert_true(g_str_has_suffix(msg, ": trailing garbage after the compressed data"));
	g_free(msg);
	put_file("t.ksmb", "\x89KSMX\r\n\x1a\x01", 9);
	msg = read_file_all("t.ksmb", NULL);
	assert_string_equal(msg, "t.ksmb: offset 4: bad magic (not a ksmtrace binary file)");
	g_free(msg);
	put_file("t.ksmb", "\x89KSMB", 5);
	msg = read_file_all("t.ksmb", NULL);
	assert_string_equal(msg, "t.ksmb: offset 5: truncated header");
	g_free(msg);
	put_file("t.ksmb", BIN_MAGIC "\x01\x78\x9c\xff\xff\xff\xff", 15);
	msg = read_file_all("t.ksmb", NULL);
	assert_true(g_str_has_prefix(msg, "t.ksmb: offset 1"));	/* in the file, past the header */
	assert_non_null(strstr(msg, ": compressed data error: "));
	g_free(msg);
	put_file("t.ksmb", BIN_MAGIC "\x01", 9);
	msg = read_file_all("t.ksmb", NULL);
	assert_string_equal(msg, "t.ksmb: offset 9: truncated compressed data");
	g_free(msg);
}

static int dir_entries(void)
{
	GDir *d = g_dir_open(".", 0, NULL);
	int n = 0;

	while (g_dir_read_name(d))
		n++;
	g_dir_close(d);
	return n;
}

static void fill_rec(struct trace_record *rec, enum trace_verb verb, const char *mm)
{
	memset(rec, 0, sizeof(*rec));
	rec->verb = verb;
	g_strlcpy(rec->mm, mm, sizeof(rec->mm));
	rec->npages = 1;
}

static void test_writer_abort(void **state)
{
	static const char *const names[] = { "o.ksmt", "o.ksmt.gz", "o.ksmb" };
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		trace_writer *w = trace_writer_open(names[i], trace_format_from_path(names[i]), &error);

		assert_non_null(w);
		fill_rec(rec, TRACE_SPAWN, "a");
		assert_true(trace_writer_put(w, rec, &error));
		assert_int_equal(dir_entries(), 1);	/* the temporary */
		assert_false(g_file_test(names[i], G_FILE_TEST_EXISTS));
		trace_writer_abort(w);
		assert_int_equal(dir_entries(), 0);

		/* a bad record fails the put and then the close: nothing is left */
		w = trace_writer_open(names[i], trace_format_from_path(names[i]), &error);
		fill_rec(rec, TRACE_WRITE, "x");
		assert_false(trace_writer_put(w, rec, &error));
		assert_non_null(error);
		{
			char *want = g_strdup_printf("%s: record 1: mm 'x' does not exist", names[i]);

			assert_string_equal(error->message, want);
			g_free(want);
		}
		g_clear_error(&error);
		assert_false(trace_writer_close(w, &error));
		g_clear_error(&error);
		assert_int_equal(dir_entries(), 0);
	}
	/* a writer into a missing directory fails at open */
	assert_null(trace_writer_open("no/such/dir.ksmt", TRACE_FMT_TEXT, &error));
	assert_string_equal(error->message, "no/such/dir.ksmt: cannot create: No such file or directory");
	g_clear_error(&error);
	g_free(rec);
}

static void test_writer_checks(void **state)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_writer *w = trace_writer_open("o.ksmb", TRACE_FMT_BINARY, &error);

	fill_rec(rec, TRACE_SPAWN, "a");
	rec->t_us = 10;
	assert_true(trace_writer_put(w, rec, &error));
	rec->t_us = 9;
	assert_false(trace_writer_put(w, rec, &error));
	assert_string_equal(error->message, "o.ksmb: record 2: time 9 is before the previous record's 10");
	g_clear_error(&error);
	trace_writer_abort(w);

	w = trace_writer_open("o.ksmt", TRACE_FMT_TEXT, &error);
	fill_rec(rec, TRACE_SPAWN, "a");
	assert_true(trace_writer_put(w, rec, &error));
	fill_rec(rec, TRACE_MAP, "a");
	rec->npages = 10;
	assert_true(trace_writer_put(w, rec, &error));
	fill_rec(rec, TRACE_WRITE, "a");
	rec->content.form = CONTENT_PATCH;
	rec->content.off = 4000;
	rec->content.len = 97;
	assert_false(trace_writer_put(w, rec, &error));
	assert_string_equal(error->message,
			    "o.ksmt: record 3: offset 4000 + length 97 is outside the page (4096 bytes)");
	g_clear_error(&error);
	trace_writer_abort(w);

	/* comments go to text only */
	w = trace_writer_open("o.ksmt", TRACE_FMT_TEXT, &error);
	assert_true(trace_writer_comment(w, "two\nlines", &error));
	assert_true(trace_writer_close(w, &error));
	assert_file("o.ksmt", "ksmtrace 1\n# two\n# lines\n");
	w = trace_writer_open("o.ksmb", TRACE_FMT_BINARY, &error);
	assert_true(trace_writer_comment(w, "dropped", &error));
	assert_true(trace_writer_close(w, &error));
	assert_null(read_file_all("o.ksmb", NULL));
	g_free(rec);
}

/* Enough records to cross many 256 KiB buffers, with 4 KiB records among them. */
static void test_large(void **state)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_writer *w = trace_writer_open("big.ksmb", TRACE_FMT_BINARY, &error);
	trace_reader *r;
	uint64_t n = 0, want = 0;
	int rc;

	fill_rec(rec, TRACE_SPAWN, "a");
	assert_true(trace_writer_put(w, rec, &error));
	fill_rec(rec, TRACE_MAP, "a");
	rec->npages = 1 << 20;
	assert_true(trace_writer_put(w, rec, &error));
	want = 2;
	for (uint64_t i = 0; i < 200000; i++) {
		fill_rec(rec, TRACE_WRITE, "a");
		rec->t_us = i / 3;
		rec->vpn = (i * 7919) % (1 << 20);
		rec->content.form = i % 6;
		rec->content.value = i % 6 == CONTENT_BYTE ? i & 0xff : i * 0x9E3779B97F4A7C15ull;
		rec->content.off = i % 6 == CONTENT_WORD ? i % 512 : i % 100;
		rec->content.len = i % 6 == CONTENT_WORD ? 8 : i % 300 == 5 ? 3996 : 1 + i % 50;
		for (uint32_t k = 0; k < rec->content.len; k++)
			rec->content.data[k] = (uint8_t)(i + k);
		assert_true(trace_writer_put(w, rec, &error));
		want++;
	}
	assert_true(trace_writer_close(w, &error));
	r = trace_reader_open("big.ksmb", &error);
	while ((rc = trace_reader_next(r, rec, &error)) > 0) {
		n++;
		if (n > 2) {
			uint64_t i = n - 3;

			assert_int_equal(rec->vpn, (i * 7919) % (1 << 20));
			assert_int_equal(rec->content.form, i % 6);
			if (rec->content.form == CONTENT_BYTES)
				assert_int_equal(rec->content.data[rec->content.len - 1],
						 (uint8_t)(i + rec->content.len - 1));
		}
	}
	if (error)
		print_error("%s\n", error->message);
	assert_int_equal(rc, 0);
	assert_int_equal(n, want);
	trace_reader_free(r);
	/* and the text of it converts back to the same bytes */
	assert_null(convert("big.ksmb", "big.ksmt"));
	assert_null(convert("big.ksmt", "big2.ksmb"));
	assert_same_files("big.ksmb", "big2.ksmb");
	g_free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_canonical, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_binary_lines, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_gz_input, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_truncated, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_bit_flips, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_writer_abort, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_writer_checks, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_large, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests_name("traces-binary", tests, NULL, NULL);
}
