// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Version 3 (traces/FORMAT.md, "Version 3: fork, prctl and THP advice"): the
 * two verbs and advise hugepage|nohugepage in text and binary, their errors,
 * the round trips, what the checker makes of them (which pages a child has,
 * which ranges are mergeable), and that versions 1 and 2 write exactly as
 * before.
 */
#include <zlib.h>
#include "tests/traces/common.h"
#include "traces/binary.h"
#include "traces/check.h"

/* Canonical already, so every round trip must give it back byte for byte. */
static const char v3_text[] =
	"ksmtrace 3\n"				/* 1 */
	"0 spawn a node=1\n"			/* 2 */
	"0 map a 0x100 4\n"			/* 3 */
	"0 advise a 0x100 2 mergeable\n"	/* 4 */
	"0 fill a 0x100 4 byte:01\n"		/* 5 */
	"5 fork a b\n"				/* 6 */
	"5 prctl b memory-merge 1\n"		/* 7 */
	"6 map b 0x200 2\n"			/* 8 */
	"7 write b 0x200 zero\n"		/* 9 */
	"8 prctl b memory-merge 0\n"		/* 10 */
	"9 exit a\n"				/* 11 */
	"10 fork b a\n"				/* 12: a's name again, and its slot */
	"10 advise a 0x100 2 mergeable\n"	/* 13 */
	"11 set run 1\n"
	"11 settle 1\n"
	"12 mark m\n";

/* What v3_text's binary form inflates to (FORMAT.md's table, record by record). */
static const uint8_t v3_payload[] = {
	0x01, 0x01, 'a', 0x01,			/* spawn a node=1: slot 0 */
	0x02, 0x00, 0x80, 0x04, 0x04,		/* map */
	0x03, 0x00, 0x00, 0x02,			/* advise mergeable */
	0x16, 0x00, 0x00, 0x04, 0x01,		/* fill byte:01 */
	0x8e, 0x05, 0x00, 0x01, 'b',		/* t+5 fork: parent slot 0, child b: slot 1 */
	0x0f, 0x01, 0x01,			/* prctl slot 1 memory-merge 1 */
	0x82, 0x01, 0x01, 0x80, 0x04, 0x02,	/* t+1 map b 0x200 2 */
	0x85, 0x01, 0x01, 0x00,			/* t+1 write b 0x200 zero */
	0x8f, 0x01, 0x01, 0x00,			/* t+1 prctl slot 1 memory-merge 0 */
	0x89, 0x01, 0x00,			/* t+1 exit a: slot 0 free */
	0x8e, 0x01, 0x01, 0x01, 'a',		/* t+1 fork b a: a takes slot 0 */
	0x03, 0x00, 0xff, 0x03, 0x02,		/* advise a 0x100 (dvpn -0x100) */
	0x8a, 0x01, 0x00, 0x01,			/* t+1 set run 1 */
	0x0b, 0x01,				/* settle 1 */
	0x8c, 0x01, 0x01, 'm',			/* t+1 mark m */
	0x00, 0x0f,				/* end: 15 records */
};

/* The decompressed records of a binary file, after checking its version byte. */
static GByteArray *inflate_bin(const char *name, int version)
{
	size_t n;
	char *data = slurp(name, &n);
	GByteArray *out = g_byte_array_new();
	uLongf len = 1 << 16;

	assert_true(n > BIN_HEADER_LEN);
	assert_memory_equal(data, BIN_MAGIC, BIN_MAGIC_LEN);
	assert_int_equal((uint8_t)data[BIN_MAGIC_LEN], version);
	g_byte_array_set_size(out, len);
	assert_int_equal(uncompress(out->data, &len, (const uint8_t *)data + BIN_HEADER_LEN,
				    n - BIN_HEADER_LEN), Z_OK);
	g_byte_array_set_size(out, len);
	g_free(data);
	return out;
}

static void test_parse(void **state)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_reader *r;
	uint64_t n = 0;
	int rc;

	put_file("t.ksmt", v3_text, strlen(v3_text));
	r = trace_reader_open("t.ksmt", &error);
	assert_non_null(r);
	assert_int_equal(trace_reader_version(r, &error), 3);
	while ((rc = trace_reader_next(r, rec, &error)) > 0) {
		n++;
		switch (rec->line) {
		case 6:
			assert_int_equal(rec->verb, TRACE_FORK);
			assert_int_equal(rec->t_us, 5);
			assert_string_equal(rec->mm, "a");
			assert_string_equal(rec->child, "b");
			break;
		case 7:
		case 10:
			assert_int_equal(rec->verb, TRACE_PRCTL);
			assert_string_equal(rec->mm, "b");
			assert_int_equal(rec->value, rec->line == 7);
			break;
		case 12:
			assert_int_equal(rec->verb, TRACE_FORK);
			assert_string_equal(rec->mm, "b");
			assert_string_equal(rec->child, "a");
			break;
		default:
			assert_true(rec->verb != TRACE_FORK && rec->verb != TRACE_PRCTL);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 15);
	trace_reader_free(r);

	/* the binary form hands out the same records, numbered by index */
	assert_null(convert("t.ksmt", "t.ksmb"));
	r = trace_reader_open("t.ksmb", &error);
	assert_non_null(r);
	assert_int_equal(trace_reader_version(r, &error), 3);
	for (n = 1; (rc = trace_reader_next(r, rec, &error)) > 0; n++) {
		if (n == 5 || n == 11) {
			assert_int_equal(rec->verb, TRACE_FORK);
			assert_string_equal(rec->mm, n == 5 ? "a" : "b");
			assert_string_equal(rec->child, n == 5 ? "b" : "a");
		}
		if (n == 6 || n == 9) {
			assert_int_equal(rec->verb, TRACE_PRCTL);
			assert_string_equal(rec->mm, "b");
			assert_int_equal(rec->value, n == 6);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 16);
	trace_reader_free(r);
	g_free(rec);
}

/*
 * text (canonical) -> binary with the expected payload -> text, binary ->
 * text -> binary, binary -> binary, and gzip text both ways: all lossless.
 */
static void round_trip(const char *text, const uint8_t *payload, size_t len)
{
	GByteArray *p;

	put_file("in.ksmt", text, strlen(text));
	assert_null(convert("in.ksmt", "t.ksmb"));
	p = inflate_bin("t.ksmb", 3);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, payload, len);
	g_byte_array_free(p, TRUE);
	assert_null(convert("t.ksmb", "back.ksmt"));
	assert_file("back.ksmt", text);
	assert_null(convert("back.ksmt", "t2.ksmb"));
	assert_same_files("t.ksmb", "t2.ksmb");
	assert_null(convert("t.ksmb", "t3.ksmb"));
	assert_same_files("t.ksmb", "t3.ksmb");
	assert_null(convert("t.ksmb", "t.ksmt.gz"));
	assert_null(convert("t.ksmt.gz", "gz.ksmt"));
	assert_file("gz.ksmt", text);
	assert_null(convert("in.ksmt", "u.ksmt.gz"));
	assert_null(convert("u.ksmt.gz", "u.ksmt"));
	assert_file("u.ksmt", text);
	assert_null(convert("t.ksmt.gz", "t4.ksmb"));
	assert_same_files("t.ksmb", "t4.ksmb");
}

static void test_round_trip(void **state)
{
	round_trip(v3_text, v3_payload, sizeof(v3_payload));
}

/*
 * THP advice (advise hugepage|nohugepage), canonical, among KSM advice on the
 * same ranges: the records stay apart in every form.
 */
static const char thp_text[] =
	"ksmtrace 3\n"				/* 1 */
	"0 spawn a\n"				/* 2 */
	"0 map a 0x200 1024\n"			/* 3 */
	"0 advise a 0x200 1024 hugepage\n"	/* 4 */
	"0 advise a 0x200 1024 mergeable\n"	/* 5 */
	"0 fill a 0x200 2 byte:01\n"		/* 6 */
	"3 advise a 0x400 512 nohugepage\n"	/* 7 */
	"3 advise a 0x400 512 unmergeable\n"	/* 8 */
	"4 fork a b\n"				/* 9 */
	"4 advise b 0x200 512 nohugepage\n"	/* 10 */
	"5 set run 1\n"				/* 11 */
	"5 settle 1\n"				/* 12 */
	"6 mark m\n";				/* 13 */

static const uint8_t thp_payload[] = {
	0x01, 0x01, 'a', 0x00,			/* spawn a: slot 0 */
	0x02, 0x00, 0x80, 0x08, 0x80, 0x08,	/* map, dvpn +0x200, npages 1024 */
	0x13, 0x00, 0x00, 0x80, 0x08,		/* advise hugepage: kind 3, form 1 */
	0x03, 0x00, 0x00, 0x80, 0x08,		/* advise mergeable: kind 3, form 0 */
	0x16, 0x00, 0x00, 0x02, 0x01,		/* fill byte:01 */
	0x94, 0x03, 0x00, 0x80, 0x08, 0x80, 0x04, /* t+3 advise nohugepage: kind 4, form 1 */
	0x04, 0x00, 0x00, 0x80, 0x04,		/* advise unmergeable: kind 4, form 0 */
	0x8e, 0x01, 0x00, 0x01, 'b',		/* t+1 fork a b: slot 1 */
	0x14, 0x01, 0xff, 0x07, 0x80, 0x04,	/* advise b nohugepage, dvpn -0x200 */
	0x8a, 0x01, 0x00, 0x01,			/* t+1 set run 1 */
	0x0b, 0x01,				/* settle 1 */
	0x8c, 0x01, 0x01, 'm',			/* t+1 mark m */
	0x00, 0x0c,				/* end: 12 records */
};

/* The advice of each advise record of thp_text, by its line: thp_advice, mergeable. */
static void check_thp_record(const struct trace_record *rec, uint64_t line)
{
	if (rec->verb != TRACE_ADVISE) {
		assert_true(line != 4 && line != 5 && line != 7 && line != 8 && line != 10);
		return;
	}
	switch (line) {
	case 4:
		assert_int_equal(rec->thp_advice, TRACE_ADVICE_HUGEPAGE);
		assert_false(rec->mergeable);
		assert_int_equal(rec->vpn, 0x200);
		assert_int_equal(rec->npages, 1024);
		break;
	case 5:
		assert_int_equal(rec->thp_advice, 0);
		assert_true(rec->mergeable);
		break;
	case 7:
	case 10:
		assert_int_equal(rec->thp_advice, TRACE_ADVICE_NOHUGEPAGE);
		assert_false(rec->mergeable);
		assert_string_equal(rec->mm, line == 7 ? "a" : "b");
		assert_int_equal(rec->vpn, line == 7 ? 0x400 : 0x200);
		assert_int_equal(rec->npages, 512);
		break;
	case 8:
		assert_int_equal(rec->thp_advice, 0);
		assert_false(rec->mergeable);
		break;
	default:
		fail_msg("advise at line %" G_GUINT64_FORMAT, line);
	}
}

static void test_thp_parse(void **state)
{
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_reader *r;
	uint64_t n = 0;
	int rc;

	put_file("t.ksmt", thp_text, strlen(thp_text));
	r = trace_reader_open("t.ksmt", &error);
	assert_non_null(r);
	assert_int_equal(trace_reader_version(r, &error), 3);
	/* a record left over from a caller must not leak into the advice */
	memset(rec, 0xff, sizeof(*rec));
	while ((rc = trace_reader_next(r, rec, &error)) > 0) {
		n++;
		check_thp_record(rec, rec->line);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 12);
	trace_reader_free(r);

	assert_null(convert("t.ksmt", "t.ksmb"));
	r = trace_reader_open("t.ksmb", &error);
	assert_non_null(r);
	memset(rec, 0xff, sizeof(*rec));
	for (n = 0; (rc = trace_reader_next(r, rec, &error)) > 0;) {
		n++;
		assert_int_equal(rec->line, n);
		check_thp_record(rec, n + 1);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 12);
	trace_reader_free(r);
	g_free(rec);
}

static void test_thp_round_trip(void **state)
{
	round_trip(thp_text, thp_payload, sizeof(thp_payload));
	/* the whole syntax reads: hex or decimal, blanks, comments */
	static const char loose[] =
		"ksmtrace 3\n0 spawn a\n0 map a 512 1024\n"
		"0\tadvise  a 0x200 0x400 hugepage   # MADV_HUGEPAGE\n"
		"0 advise a 0x200 1024 mergeable\n0 fill a 0x200 2 byte:01\n"
		"3 advise a 1024 512 nohugepage\n3 advise a 0x400 512 unmergeable\n"
		"4 fork a b\n4 advise b 0x200 512\tnohugepage\n5 set run 1\n5 settle 1\n6 mark m\n";
	put_file("loose.ksmt", loose, strlen(loose));
	assert_null(convert("loose.ksmt", "loose-back.ksmt"));
	assert_file("loose-back.ksmt", thp_text);
}

struct bad_case {
	const char *text;
	const char *error;
};

#define H3 "ksmtrace 3\n0 spawn a\n0 map a 0x10 4\n"	/* lines 1-3 */

static const struct bad_case bad_cases[] = {
	/* only a version 3 file has the verbs */
	{ "ksmtrace 2\n0 spawn a\n0 fork a b\n",
	  "t.ksmt:3: fork needs header 'ksmtrace 3' (this file is version 2)" },
	{ "ksmtrace 1\n# c\n0 spawn a\n0 prctl a memory-merge 1\n",
	  "t.ksmt:4: prctl needs header 'ksmtrace 3' (this file is version 1)" },
	{ "ksmtrace 2\n0 fork\n", "t.ksmt:2: fork needs header 'ksmtrace 3' (this file is version 2)" },
	/* argument counts */
	{ H3 "0 fork a\n", "t.ksmt:4: fork takes 2 arguments (<parent> <child>), got 1" },
	{ H3 "0 fork a b c\n", "t.ksmt:4: fork takes 2 arguments (<parent> <child>), got 3" },
	{ H3 "0 prctl a memory-merge\n",
	  "t.ksmt:4: prctl takes 3 arguments (<mm> memory-merge 0|1), got 2" },
	{ H3 "0 prctl a memory-merge 1 1\n",
	  "t.ksmt:4: prctl takes 3 arguments (<mm> memory-merge 0|1), got 4" },
	/* tokens */
	{ H3 "0 prctl a merge 1\n",
	  "t.ksmt:4: unknown prctl option 'merge' (the only option is memory-merge)" },
	{ H3 "0 prctl a MEMORY-MERGE 1\n",
	  "t.ksmt:4: unknown prctl option 'MEMORY-MERGE' (the only option is memory-merge)" },
	{ H3 "0 prctl a memory-merge 2\n", "t.ksmt:4: bad memory-merge value '2' (0 or 1)" },
	{ H3 "0 prctl a memory-merge 01\n", "t.ksmt:4: bad memory-merge value '01' (0 or 1)" },
	{ H3 "0 prctl a memory-merge on\n", "t.ksmt:4: bad memory-merge value 'on' (0 or 1)" },
	{ H3 "0 fork a b/c\n",
	  "t.ksmt:4: bad child mm name 'b/c' (1-64 characters of A-Z a-z 0-9 _ . -)" },
	{ H3 "0 fork a/b c\n",
	  "t.ksmt:4: bad parent mm name 'a/b' (1-64 characters of A-Z a-z 0-9 _ . -)" },
	{ H3 "0 prctl a/b memory-merge 1\n",
	  "t.ksmt:4: bad mm name 'a/b' (1-64 characters of A-Z a-z 0-9 _ . -)" },
	/* which mms live */
	{ H3 "0 fork x b\n", "t.ksmt:4: parent mm 'x' does not exist" },
	{ H3 "0 exit a\n0 fork a b\n", "t.ksmt:5: parent mm 'a' does not exist" },
	{ H3 "0 fork a a\n", "t.ksmt:4: child mm 'a' already exists" },
	{ H3 "0 spawn b\n0 fork a b\n", "t.ksmt:5: child mm 'b' already exists" },
	{ H3 "0 fork a b\n0 fork a b\n", "t.ksmt:5: child mm 'b' already exists" },
	{ H3 "0 fork a b\n0 spawn b\n", "t.ksmt:5: mm 'b' already exists" },
	{ H3 "0 prctl x memory-merge 1\n", "t.ksmt:4: mm 'x' does not exist" },
	{ H3 "5 fork a b\n4 prctl b memory-merge 1\n", "t.ksmt:5: time 4 is before the previous record's 5" },
	/* the child has the parent's mappings and nothing else */
	{ H3 "0 fork a b\n0 write b 0x14 zero\n", "t.ksmt:5: vpn 0x14 is not mapped in mm 'b'" },
	{ H3 "0 fork a b\n0 unmap b 0x10 4\n0 write b 0x10 zero\n",
	  "t.ksmt:6: vpn 0x10 is not mapped in mm 'b'" },
	{ H3 "0 fork a b\n0 map b 0x12 1\n",
	  "t.ksmt:5: vpn 0x12 + npages 1 overlaps mapped pages in mm 'b'" },

	/* THP advice: only a version 3 file has hugepage and nohugepage */
	{ "ksmtrace 2\n0 spawn a\n0 map a 0x10 4\n0 advise a 0x10 4 hugepage\n",
	  "t.ksmt:4: advise hugepage needs header 'ksmtrace 3' (this file is version 2)" },
	{ "ksmtrace 1\n0 spawn a\n0 map a 0x10 4\n0 advise a 0x10 4 nohugepage\n",
	  "t.ksmt:4: advise nohugepage needs header 'ksmtrace 3' (this file is version 1)" },
	/* a bad advice word: the words the file's version has */
	{ "ksmtrace 2\n0 spawn a\n0 map a 0x10 4\n0 advise a 0x10 4 huge\n",
	  "t.ksmt:4: expected mergeable or unmergeable, got 'huge'" },
	{ "ksmtrace 1\n0 spawn a\n0 map a 0x10 4\n0 advise a 0x10 4 MERGEABLE\n",
	  "t.ksmt:4: expected mergeable or unmergeable, got 'MERGEABLE'" },
	{ H3 "0 advise a 0x10 4 huge\n",
	  "t.ksmt:4: expected mergeable, unmergeable, hugepage or nohugepage, got 'huge'" },
	{ H3 "0 advise a 0x10 4 HUGEPAGE\n",
	  "t.ksmt:4: expected mergeable, unmergeable, hugepage or nohugepage, got 'HUGEPAGE'" },
	{ H3 "0 advise a 0x10 4 hugepages\n",
	  "t.ksmt:4: expected mergeable, unmergeable, hugepage or nohugepage, got 'hugepages'" },
	{ H3 "0 advise a 0x10 4 no-hugepage\n",
	  "t.ksmt:4: expected mergeable, unmergeable, hugepage or nohugepage, got 'no-hugepage'" },
	/* the argument count: the usage of the file's version */
	{ H3 "0 advise a 0x10 4\n", "t.ksmt:4: advise takes 4 arguments (<mm> <vpn> <npages> "
	  "mergeable|unmergeable|hugepage|nohugepage), got 3" },
	{ H3 "0 advise a 0x10 4 hugepage 1\n", "t.ksmt:4: advise takes 4 arguments (<mm> <vpn> "
	  "<npages> mergeable|unmergeable|hugepage|nohugepage), got 5" },
	{ "ksmtrace 2\n0 spawn a\n0 advise a 0x10 4\n",
	  "t.ksmt:3: advise takes 4 arguments (<mm> <vpn> <npages> mergeable|unmergeable), got 3" },
	/* the range must be mapped, as for every advice */
	{ H3 "0 advise a 0x12 4 hugepage\n", "t.ksmt:4: vpn 0x12 + npages 4 is not mapped in mm 'a'" },
	{ H3 "0 advise a 0x0 1 nohugepage\n", "t.ksmt:4: vpn 0x0 + npages 1 is not mapped in mm 'a'" },
	{ H3 "0 unmap a 0x11 1\n0 advise a 0x10 4 hugepage\n",
	  "t.ksmt:5: vpn 0x10 + npages 4 is not mapped in mm 'a'" },
	{ H3 "0 advise x 0x10 4 hugepage\n", "t.ksmt:4: mm 'x' does not exist" },
	{ H3 "0 exit a\n0 advise a 0x10 4 nohugepage\n", "t.ksmt:5: mm 'a' does not exist" },
	{ H3 "0 advise a 0x10 0 hugepage\n", "t.ksmt:4: npages must be at least 1" },
	{ H3 "0 advise a 0xffffffff 2 nohugepage\n",
	  "t.ksmt:4: vpn 0xffffffff + npages 2 is beyond 2^32 pages" },
	{ H3 "0 fork a b\n0 advise b 0x10 5 hugepage\n",
	  "t.ksmt:5: vpn 0x10 + npages 5 is not mapped in mm 'b'" },
	{ H3 "2 advise a 0x10 4 hugepage\n1 advise a 0x10 4 nohugepage\n",
	  "t.ksmt:5: time 1 is before the previous record's 2" },
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
		char *msg = read_text(bad_cases[i].text, NULL);

		if (!msg || strcmp(msg, bad_cases[i].error))
			print_error("case %zu: %s\n", i, msg ? msg : "(accepted)");
		assert_non_null(msg);
		assert_string_equal(msg, bad_cases[i].error);
		g_free(msg);
	}
}

/*
 * What is mergeable after fork and prctl, seen through settle's need for a
 * live mm with a mergeable range. NULL: the trace is accepted.
 */
#define NO_MERGEABLE "settle needs a live mm with a mergeable range (there is none)"
#define RUN "0 set run 1\n"

static const struct bad_case merge_cases[] = {
	/* prctl 1 makes mapped pages mergeable without any advice */
	{ H3 "0 prctl a memory-merge 1\n" RUN "0 settle 1\n", NULL },
	/* ... and later mappings too */
	{ "ksmtrace 3\n0 spawn a\n0 prctl a memory-merge 1\n0 map a 0x10 4\n" RUN "0 settle 1\n", NULL },
	/* nothing mapped, nothing mergeable */
	{ "ksmtrace 3\n0 spawn a\n0 prctl a memory-merge 1\n" RUN "0 settle 1\n",
	  "t.ksmt:5: " NO_MERGEABLE },
	/* prctl 0 undoes it */
	{ H3 "0 prctl a memory-merge 1\n0 prctl a memory-merge 0\n" RUN "0 settle 1\n",
	  "t.ksmt:7: " NO_MERGEABLE },
	{ H3 "0 prctl a memory-merge 1\n0 prctl a memory-merge 0\n0 map a 0x20 1\n" RUN
	  "0 settle 1\n", "t.ksmt:8: " NO_MERGEABLE },
	/* and takes madvised ranges with it */
	{ H3 "0 advise a 0x10 1 mergeable\n0 prctl a memory-merge 1\n0 prctl a memory-merge 0\n"
	  RUN "0 settle 1\n", "t.ksmt:8: " NO_MERGEABLE },
	/* but prctl 0 on an mm without merge-any leaves its advice alone */
	{ H3 "0 advise a 0x10 1 mergeable\n0 prctl a memory-merge 0\n" RUN "0 settle 1\n", NULL },
	/* madvise(MADV_UNMERGEABLE) still works under merge-any */
	{ H3 "0 prctl a memory-merge 1\n0 advise a 0x10 4 unmergeable\n" RUN "0 settle 1\n",
	  "t.ksmt:7: " NO_MERGEABLE },
	/* a second prctl 1 does not redo the first */
	{ H3 "0 prctl a memory-merge 1\n0 advise a 0x10 4 unmergeable\n"
	  "0 prctl a memory-merge 1\n" RUN "0 settle 1\n", "t.ksmt:8: " NO_MERGEABLE },
	/* the child keeps the parent's advice ... */
	{ H3 "0 advise a 0x10 1 mergeable\n0 fork a b\n0 exit a\n" RUN "0 settle 1\n", NULL },
	/* ... and nothing the parent advises afterwards */
	{ H3 "0 fork a b\n0 advise a 0x10 1 mergeable\n0 exit a\n" RUN "0 settle 1\n",
	  "t.ksmt:8: " NO_MERGEABLE },
	/* merge-any is inherited: the child's new mappings are mergeable */
	{ "ksmtrace 3\n0 spawn a\n0 prctl a memory-merge 1\n0 fork a b\n0 exit a\n"
	  "0 map b 0x10 1\n" RUN "0 settle 1\n", NULL },
	/* the parent dropping it later leaves the child's */
	{ H3 "0 prctl a memory-merge 1\n0 fork a b\n0 prctl a memory-merge 0\n" RUN
	  "0 settle 1\n", NULL },
	{ H3 "0 prctl a memory-merge 1\n0 fork a b\n0 exit b\n0 prctl a memory-merge 0\n" RUN
	  "0 settle 1\n", "t.ksmt:9: " NO_MERGEABLE },
	/* a name is free again after exit, for fork as for spawn */
	{ H3 "0 spawn b\n0 exit b\n0 fork a b\n0 write b 0x13 zero\n0 exit a\n0 fork b a\n", NULL },

	/* THP advice leaves mergeability alone: hugepage makes nothing mergeable ... */
	{ H3 "0 advise a 0x10 4 hugepage\n" RUN "0 settle 1\n", "t.ksmt:6: " NO_MERGEABLE },
	{ H3 "0 advise a 0x10 4 nohugepage\n0 advise a 0x10 4 hugepage\n" RUN "0 settle 1\n",
	  "t.ksmt:7: " NO_MERGEABLE },
	/* ... and neither takes a mergeable range out, madvised or merge-any */
	{ H3 "0 advise a 0x10 4 mergeable\n0 advise a 0x10 4 nohugepage\n" RUN "0 settle 1\n", NULL },
	{ H3 "0 advise a 0x10 4 mergeable\n0 advise a 0x10 4 hugepage\n" RUN "0 settle 1\n", NULL },
	{ H3 "0 prctl a memory-merge 1\n0 advise a 0x10 4 nohugepage\n" RUN "0 settle 1\n", NULL },
	{ H3 "0 advise a 0x10 4 hugepage\n0 advise a 0x10 4 mergeable\n0 fork a b\n0 exit a\n"
	  "0 advise b 0x10 4 nohugepage\n" RUN "0 settle 1\n", NULL },
	/* unmergeable still works on a range advised hugepage */
	{ H3 "0 advise a 0x10 4 mergeable\n0 advise a 0x10 4 hugepage\n"
	  "0 advise a 0x10 4 unmergeable\n" RUN "0 settle 1\n", "t.ksmt:8: " NO_MERGEABLE },
};

static void test_merge_rules(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(merge_cases); i++) {
		char *msg = read_text(merge_cases[i].text, NULL);

		if (g_strcmp0(msg, merge_cases[i].error))
			print_error("case %zu: %s\n", i, msg ? msg : "(accepted)");
		if (merge_cases[i].error)
			assert_string_equal(msg, merge_cases[i].error);
		else
			assert_null(msg);
		g_free(msg);
	}
}

/* The checker's page counts through fork and exit. */
static void test_check_counts(void **state)
{
	struct trace_check *ck = trace_check_new();
	struct trace_record *rec = g_new0(struct trace_record, 1);
	struct check_mm *mm = NULL;
	char *problem;

#define APPLY(v, name) do {							\
		rec->verb = (v);						\
		g_strlcpy(rec->mm, (name), sizeof(rec->mm));			\
		problem = trace_check_apply(ck, rec, NULL, &mm);		\
		assert_null(problem);						\
	} while (0)

	trace_check_count_written(ck);
	APPLY(TRACE_SPAWN, "a");
	rec->vpn = 0x10;
	rec->npages = 8;
	APPLY(TRACE_MAP, "a");
	rec->npages = 3;
	APPLY(TRACE_FILLSEQ, "a");
	assert_int_equal(trace_check_mapped_pages(ck), 8);
	assert_int_equal(trace_check_written_pages(ck), 3);
	g_strlcpy(rec->child, "b", sizeof(rec->child));
	APPLY(TRACE_FORK, "a");
	assert_non_null(mm);
	assert_string_equal(mm->name, "b");	/* out_mm is the child */
	assert_ptr_equal(trace_check_find(ck, "b"), mm);
	assert_int_equal(trace_check_live_mms(ck), 2);
	assert_int_equal(trace_check_mapped_pages(ck), 16);
	assert_int_equal(trace_check_written_pages(ck), 6);
	rec->value = 1;
	APPLY(TRACE_PRCTL, "b");
	assert_true(trace_check_find(ck, "b")->merge_any);
	assert_false(trace_check_find(ck, "a")->merge_any);
	APPLY(TRACE_EXIT, "a");
	assert_int_equal(trace_check_mapped_pages(ck), 8);
	assert_int_equal(trace_check_written_pages(ck), 3);
	g_strlcpy(rec->child, "c", sizeof(rec->child));
	APPLY(TRACE_FORK, "b");
	assert_true(mm->merge_any);
	assert_int_equal(trace_check_live_mms(ck), 2);
	assert_int_equal(trace_check_written_pages(ck), 6);

	/* failures leave the state as it was */
	g_strlcpy(rec->child, "b", sizeof(rec->child));
	rec->verb = TRACE_FORK;
	problem = trace_check_apply(ck, rec, NULL, NULL);
	assert_string_equal(problem, "child mm 'b' already exists");
	g_free(problem);
	assert_int_equal(trace_check_live_mms(ck), 2);
	assert_int_equal(trace_check_mapped_pages(ck), 16);

	/* a record's own ranges */
	rec->verb = TRACE_PRCTL;
	rec->value = 2;
	problem = trace_record_validate(rec);
	assert_string_equal(problem, "memory-merge value 2 is not 0 or 1");
	g_free(problem);
	rec->verb = TRACE_FORK;
	rec->child[0] = 0;
	problem = trace_record_validate(rec);
	assert_string_equal(problem, "bad child mm name ''");
	g_free(problem);

	/* THP advice: one advice a record, needs the range mapped, no mergeable change */
	rec->vpn = 0x10;
	rec->npages = 8;
	rec->verb = TRACE_ADVISE;
	g_strlcpy(rec->mm, "b", sizeof(rec->mm));
	rec->thp_advice = 3;
	problem = trace_record_validate(rec);
	assert_string_equal(problem, "unknown advice 3 (0 mergeable/unmergeable, 1 hugepage, "
			    "2 nohugepage)");
	g_free(problem);
	rec->thp_advice = TRACE_ADVICE_HUGEPAGE;
	rec->mergeable = true;
	problem = trace_record_validate(rec);
	assert_string_equal(problem, "advise hugepage cannot be mergeable too");
	g_free(problem);
	rec->thp_advice = TRACE_ADVICE_NOHUGEPAGE;
	problem = trace_record_validate(rec);
	assert_string_equal(problem, "advise nohugepage cannot be mergeable too");
	g_free(problem);
	rec->mergeable = false;
	assert_null(trace_record_validate(rec));
	/* b has merge-any: every mapped page stays mergeable through either advice */
	APPLY(TRACE_ADVISE, "b");
	assert_int_equal(trace_check_find(ck, "b")->mergeable.pages, 8);
	rec->thp_advice = TRACE_ADVICE_HUGEPAGE;
	APPLY(TRACE_ADVISE, "b");
	assert_int_equal(trace_check_find(ck, "b")->mergeable.pages, 8);
	assert_int_equal(trace_check_mapped_pages(ck), 16);
	/* c (merge-any from b) drops merge-any: neither advice makes its pages mergeable */
	rec->value = 0;
	APPLY(TRACE_PRCTL, "c");
	assert_int_equal(trace_check_find(ck, "c")->mergeable.pages, 0);
	APPLY(TRACE_ADVISE, "c");
	rec->thp_advice = TRACE_ADVICE_NOHUGEPAGE;
	APPLY(TRACE_ADVISE, "c");
	assert_int_equal(trace_check_find(ck, "c")->mergeable.pages, 0);
	/* and the range must be mapped */
	rec->npages = 9;
	rec->verb = TRACE_ADVISE;
	problem = trace_check_apply(ck, rec, NULL, NULL);
	assert_string_equal(problem, "vpn 0x10 + npages 9 is not mapped in mm 'c'");
	g_free(problem);
#undef APPLY
	trace_check_free(ck);
	g_free(rec);
}

/* A binary file with header version ver and this decompressed payload. */
static void make_bin(const char *name, int ver, const void *payload, size_t n)
{
	uLongf zlen = compressBound(n);
	GByteArray *b = g_byte_array_new();
	uint8_t *z = g_malloc(zlen);
	uint8_t v = ver;

	assert_int_equal(compress2(z, &zlen, payload, n, 6), Z_OK);
	g_byte_array_append(b, (const uint8_t *)BIN_MAGIC, BIN_MAGIC_LEN);
	g_byte_array_append(b, &v, 1);
	g_byte_array_append(b, z, zlen);
	put_file(name, b->data, b->len);
	g_byte_array_free(b, TRUE);
	g_free(z);
}

struct bin_case {
	int version;
	const char *payload;
	size_t n;
	const char *error;
};

#define P(s) s, sizeof(s) - 1
/* spawn a; map a 0x10 4: 8 bytes, so the next record is at offset 8 */
#define SPAWN_MAP "\x01\x01" "a" "\x00" "\x02\x00\x20\x04"

static const struct bin_case bin_cases[] = {
	/* kinds 14 and 15 do not exist before version 3 */
	{ 1, P(SPAWN_MAP "\x0e\x00\x01" "b" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 2, P(SPAWN_MAP "\x0e\x00\x01" "b" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 2, P(SPAWN_MAP "\x0f\x00\x01" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 2, P("\x0e"), "t.ksmb: offset 0: unknown opcode" },
	/* controls: the same records are fine in version 3 */
	{ 3, P(SPAWN_MAP "\x0e\x00\x01" "b" "\x00\x03"), NULL },
	{ 3, P(SPAWN_MAP "\x0f\x00\x01" "\x00\x03"), NULL },
	{ 3, P(SPAWN_MAP "\x0e\x00\x01" "b" "\x09\x00" "\x0e\x01\x01" "a" "\x0f\x00\x00" "\x00\x06"),
	  NULL },
	/* fork */
	{ 3, P(SPAWN_MAP "\x0e\x01\x01" "b" "\x00\x03"),
	  "t.ksmb: offset 8: reference to an mm slot that is not live" },
	{ 3, P(SPAWN_MAP "\x0e\x00\x00" "\x00\x03"), "t.ksmb: offset 8: bad name length" },
	{ 3, P(SPAWN_MAP "\x0e\x00\x41" "b"), "t.ksmb: offset 8: bad name length" },
	{ 3, P(SPAWN_MAP "\x0e\x00\x03" "b/c" "\x00\x03"), "t.ksmb: offset 8: bad child mm name" },
	{ 3, P(SPAWN_MAP "\x0e\x00\x01" "a" "\x00\x03"), "t.ksmb: offset 8: child mm 'a' already exists" },
	{ 3, P(SPAWN_MAP "\x0e\x00"), "t.ksmb: offset 8: truncated record" },
	{ 3, P(SPAWN_MAP "\x0e\x00\x05" "bb"), "t.ksmb: offset 8: truncated record" },
	{ 3, P(SPAWN_MAP "\x1e\x00\x01" "b" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\x0e\x80\x00\x01" "b" "\x00\x03"), "t.ksmb: offset 8: bad varint" },
	/* the child's slot: a fork after an exit reuses the freed one */
	{ 3, P(SPAWN_MAP "\x01\x01" "c" "\x00" "\x09\x00" "\x0e\x01\x01" "b" "\x09\x00" "\x00\x06"),
	  NULL },
	{ 3, P(SPAWN_MAP "\x01\x01" "c" "\x00" "\x09\x00" "\x0e\x01\x01" "b" "\x09\x02" "\x00\x06"),
	  "t.ksmb: offset 18: reference to an mm slot that is not live" },
	/* prctl */
	{ 3, P(SPAWN_MAP "\x0f\x01\x01" "\x00\x03"),
	  "t.ksmb: offset 8: reference to an mm slot that is not live" },
	{ 3, P(SPAWN_MAP "\x0f\x00\x02" "\x00\x03"),
	  "t.ksmb: offset 8: memory-merge value 2 is not 0 or 1" },
	{ 3, P(SPAWN_MAP "\x0f\x00\x81\x00" "\x00\x03"), "t.ksmb: offset 8: bad varint" },
	{ 3, P(SPAWN_MAP "\x0f\x00"), "t.ksmb: offset 8: truncated record" },
	{ 3, P(SPAWN_MAP "\x1f\x00\x01" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\x8f\x00\x00\x01" "\x00\x03"), "t.ksmb: offset 8: zero time delta" },
	/* THP advice: form 1 (BIN_ADVICE_THP) of the advise kinds, version 3 only */
	{ 1, P(SPAWN_MAP "\x13\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 2, P(SPAWN_MAP "\x13\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 2, P(SPAWN_MAP "\x14\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 2, P(SPAWN_MAP "\x93\x01\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\x13\x00\x00\x04" "\x00\x03"), NULL },
	{ 3, P(SPAWN_MAP "\x14\x00\x00\x04" "\x00\x03"), NULL },
	{ 3, P(SPAWN_MAP "\x93\x01\x00\x00\x04" "\x94\x01\x00\x00\x04" "\x00\x04"), NULL },
	/* other forms stay unknown */
	{ 3, P(SPAWN_MAP "\x23\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\x24\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\x73\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\xf4\x01\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	/* ... and form 1 of the other kinds that have no form */
	{ 3, P(SPAWN_MAP "\x12\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	{ 3, P(SPAWN_MAP "\x18\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: unknown opcode" },
	/* the checks of any advise */
	{ 3, P(SPAWN_MAP "\x13\x00\x02\x04" "\x00\x03"),
	  "t.ksmb: offset 8: vpn 0x11 + npages 4 is not mapped in mm 'a'" },
	{ 3, P(SPAWN_MAP "\x14\x01\x00\x04" "\x00\x03"),
	  "t.ksmb: offset 8: reference to an mm slot that is not live" },
	{ 3, P(SPAWN_MAP "\x13\x00\x00\x00" "\x00\x03"), "t.ksmb: offset 8: npages must be at least 1" },
	{ 3, P(SPAWN_MAP "\x14\x00\x00\x84\x00" "\x00\x03"), "t.ksmb: offset 8: bad varint" },
	{ 3, P(SPAWN_MAP "\x13\x00\x00"), "t.ksmb: offset 8: truncated record" },
	{ 3, P(SPAWN_MAP "\x93\x00\x00\x00\x04" "\x00\x03"), "t.ksmb: offset 8: zero time delta" },
	/* hugepage makes nothing mergeable: settle (kind 11) has nothing to scan */
	{ 3, P(SPAWN_MAP "\x13\x00\x00\x04" "\x0a\x00\x01" "\x0b\x01" "\x00\x05"),
	  "t.ksmb: offset 15: settle needs a live mm with a mergeable range (there is none)" },
	{ 3, P(SPAWN_MAP "\x03\x00\x00\x04" "\x14\x00\x00\x04" "\x0a\x00\x01" "\x0b\x01"
	       "\x00\x06"), NULL },
};

static void test_binary_errors(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bin_cases); i++) {
		char *msg;

		make_bin("t.ksmb", bin_cases[i].version, bin_cases[i].payload, bin_cases[i].n);
		msg = read_file_all("t.ksmb", NULL);
		if (g_strcmp0(msg, bin_cases[i].error))
			print_error("case %zu: %s\n", i, msg ? msg : "(accepted)");
		if (bin_cases[i].error)
			assert_string_equal(msg, bin_cases[i].error);
		else
			assert_null(msg);
		g_free(msg);
	}
}

static void put_rec(trace_writer *w, struct trace_record *rec, enum trace_verb verb,
		    const char *mm, const char *child, uint64_t value)
{
	GError *error = NULL;

	rec->verb = verb;
	g_strlcpy(rec->mm, mm, sizeof(rec->mm));
	g_strlcpy(rec->child, child, sizeof(rec->child));
	rec->value = value;
	assert_true(trace_writer_put(w, rec, &error));
}

static void test_writer(void **state)
{
	static const struct {
		const char *path;
		enum trace_format fmt;
		int version;
		enum trace_verb verb;
		const char *error;
	} refuse[] = {
		{ "v2.ksmt", TRACE_FMT_TEXT, 2, TRACE_FORK,
		  "v2.ksmt: record 2: fork needs trace version 3 (this is version 2)" },
		{ "v1.ksmb", TRACE_FMT_BINARY, 1, TRACE_PRCTL,
		  "v1.ksmb: record 2: prctl needs trace version 3 (this is version 1)" },
		{ "v2.ksmt.gz", TRACE_FMT_TEXT_GZ, 2, TRACE_PRCTL,
		  "v2.ksmt.gz: record 2: prctl needs trace version 3 (this is version 2)" },
	};
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_writer *w;

	/* a writer of an older version refuses the verbs and commits nothing */
	for (size_t i = 0; i < G_N_ELEMENTS(refuse); i++) {
		w = trace_writer_open_version(refuse[i].path, refuse[i].fmt, refuse[i].version, &error);
		assert_non_null(w);
		memset(rec, 0, sizeof(*rec));
		put_rec(w, rec, TRACE_SPAWN, "a", "", 0);
		rec->verb = refuse[i].verb;
		g_strlcpy(rec->child, "b", sizeof(rec->child));
		rec->value = 1;
		assert_false(trace_writer_put(w, rec, &error));
		assert_string_equal(error->message, refuse[i].error);
		g_clear_error(&error);
		trace_writer_abort(w);
		assert_false(g_file_test(refuse[i].path, G_FILE_TEST_EXISTS));
	}

	/* the writer API straight: the records of v3_text's first lines */
	for (int f = 0; f < 3; f++) {
		static const char *const names[] = { "w.ksmt", "w.ksmt.gz", "w.ksmb" };
		static const char want[] = "ksmtrace 3\n0 spawn a\n0 map a 0x10 2\n0 fork a b\n"
					   "0 prctl b memory-merge 1\n0 prctl a memory-merge 0\n";

		w = trace_writer_open_version(names[f], trace_format_from_path(names[f]), 3, &error);
		assert_non_null(w);
		memset(rec, 0, sizeof(*rec));
		put_rec(w, rec, TRACE_SPAWN, "a", "", 0);
		rec->vpn = 0x10;
		rec->npages = 2;
		put_rec(w, rec, TRACE_MAP, "a", "", 0);
		put_rec(w, rec, TRACE_FORK, "a", "b", 0);
		put_rec(w, rec, TRACE_PRCTL, "b", "", 1);
		put_rec(w, rec, TRACE_PRCTL, "a", "", 0);
		assert_true(trace_writer_close(w, &error));
		assert_null(convert(names[f], "w-back.ksmt"));
		assert_file("w-back.ksmt", want);
		if (f == 0)
			assert_file("w.ksmt", want);
		if (f == 2) {
			static const uint8_t bytes[] = {
				0x01, 0x01, 'a', 0x00, 0x02, 0x00, 0x20, 0x02,
				0x0e, 0x00, 0x01, 'b', 0x0f, 0x01, 0x01, 0x0f, 0x00, 0x00,
				0x00, 0x05,
			};
			GByteArray *p = inflate_bin("w.ksmb", 3);

			assert_int_equal(p->len, sizeof(bytes));
			assert_memory_equal(p->data, bytes, sizeof(bytes));
			g_byte_array_free(p, TRUE);
		}
	}
	g_free(rec);
}

/* An advise record of thp_advice on mm a's 0x10 + 2, mergeable false. */
static void put_advice(trace_writer *w, struct trace_record *rec, uint8_t thp, bool mergeable)
{
	GError *error = NULL;

	rec->verb = TRACE_ADVISE;
	g_strlcpy(rec->mm, "a", sizeof(rec->mm));
	rec->vpn = 0x10;
	rec->npages = 2;
	rec->thp_advice = thp;
	rec->mergeable = mergeable;
	assert_true(trace_writer_put(w, rec, &error));
}

static void test_thp_writer(void **state)
{
	static const struct {
		const char *path;
		int version;
		uint8_t thp;
		bool mergeable;
		const char *error;
	} refuse[] = {
		/* below version 3, as for fork and prctl */
		{ "v2.ksmt", 2, TRACE_ADVICE_HUGEPAGE, false,
		  "v2.ksmt: record 3: advise hugepage needs trace version 3 (this is version 2)" },
		{ "v1.ksmt", 1, TRACE_ADVICE_NOHUGEPAGE, false,
		  "v1.ksmt: record 3: advise nohugepage needs trace version 3 (this is version 1)" },
		{ "v1.ksmb", 1, TRACE_ADVICE_HUGEPAGE, false,
		  "v1.ksmb: record 3: advise hugepage needs trace version 3 (this is version 1)" },
		{ "v2.ksmb", 2, TRACE_ADVICE_NOHUGEPAGE, false,
		  "v2.ksmb: record 3: advise nohugepage needs trace version 3 (this is version 2)" },
		{ "v2.ksmt.gz", 2, TRACE_ADVICE_NOHUGEPAGE, false,
		  "v2.ksmt.gz: record 3: advise nohugepage needs trace version 3 (this is version 2)" },
		/* a record that is not one advice, in any version */
		{ "v3.ksmt", 3, 3, false, "v3.ksmt: record 3: unknown advice 3 (0 mergeable/unmergeable, "
		  "1 hugepage, 2 nohugepage)" },
		{ "v3.ksmb", 3, TRACE_ADVICE_HUGEPAGE, true,
		  "v3.ksmb: record 3: advise hugepage cannot be mergeable too" },
		{ "v2m.ksmt", 2, TRACE_ADVICE_NOHUGEPAGE, true,
		  "v2m.ksmt: record 3: advise nohugepage cannot be mergeable too" },
	};
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_writer *w;

	for (size_t i = 0; i < G_N_ELEMENTS(refuse); i++) {
		w = trace_writer_open_version(refuse[i].path, trace_format_from_path(refuse[i].path),
					      refuse[i].version, &error);
		assert_non_null(w);
		memset(rec, 0, sizeof(*rec));
		put_rec(w, rec, TRACE_SPAWN, "a", "", 0);
		rec->vpn = 0x10;
		rec->npages = 2;
		put_rec(w, rec, TRACE_MAP, "a", "", 0);
		rec->verb = TRACE_ADVISE;
		rec->thp_advice = refuse[i].thp;
		rec->mergeable = refuse[i].mergeable;
		assert_false(trace_writer_put(w, rec, &error));
		assert_string_equal(error->message, refuse[i].error);
		g_clear_error(&error);
		trace_writer_abort(w);
		assert_false(g_file_test(refuse[i].path, G_FILE_TEST_EXISTS));
	}

	/* the writer API straight, in each form; KSM advice after THP advice reads as KSM */
	for (int f = 0; f < 3; f++) {
		static const char *const names[] = { "w.ksmt", "w.ksmt.gz", "w.ksmb" };
		static const char want[] = "ksmtrace 3\n0 spawn a\n0 map a 0x10 2\n"
					   "0 advise a 0x10 2 hugepage\n0 advise a 0x10 2 nohugepage\n"
					   "0 advise a 0x10 2 mergeable\n0 advise a 0x10 2 unmergeable\n";

		w = trace_writer_open_version(names[f], trace_format_from_path(names[f]), 3, &error);
		assert_non_null(w);
		memset(rec, 0, sizeof(*rec));
		put_rec(w, rec, TRACE_SPAWN, "a", "", 0);
		rec->vpn = 0x10;
		rec->npages = 2;
		put_rec(w, rec, TRACE_MAP, "a", "", 0);
		put_advice(w, rec, TRACE_ADVICE_HUGEPAGE, false);
		put_advice(w, rec, TRACE_ADVICE_NOHUGEPAGE, false);
		put_advice(w, rec, 0, true);
		put_advice(w, rec, 0, false);
		assert_true(trace_writer_close(w, &error));
		assert_null(convert(names[f], "w-back.ksmt"));
		assert_file("w-back.ksmt", want);
		if (f == 0)
			assert_file("w.ksmt", want);
		if (f == 2) {
			static const uint8_t bytes[] = {
				0x01, 0x01, 'a', 0x00, 0x02, 0x00, 0x20, 0x02,
				0x13, 0x00, 0x00, 0x02, 0x14, 0x00, 0x00, 0x02,
				0x03, 0x00, 0x00, 0x02, 0x04, 0x00, 0x00, 0x02,
				0x00, 0x06,
			};
			GByteArray *p = inflate_bin("w.ksmb", 3);

			assert_int_equal(p->len, sizeof(bytes));
			assert_memory_equal(p->data, bytes, sizeof(bytes));
			g_byte_array_free(p, TRUE);
		}
	}
	/* trace_record_format, for messages and ksmsim trace cat */
	{
		GString *line = g_string_new(NULL);

		memset(rec, 0, sizeof(*rec));
		rec->verb = TRACE_ADVISE;
		g_strlcpy(rec->mm, "vm0", sizeof(rec->mm));
		rec->vpn = 0x100000;
		rec->npages = 512;
		rec->t_us = 7;
		rec->thp_advice = TRACE_ADVICE_HUGEPAGE;
		trace_record_format(rec, line);
		assert_string_equal(line->str, "7 advise vm0 0x100000 512 hugepage");
		g_string_free(line, TRUE);
	}
	g_free(rec);
}

/* FORMAT.md's "Version 3, text" example and the bytes its table gives. */
static void test_spec_example(void **state)
{
	static const char text[] =
		"ksmtrace 3\n"
		"0 spawn a\n"
		"0 map a 0x100 2\n"
		"0 prctl a memory-merge 1          # merge-any: both pages mergeable, no madvise\n"
		"0 fill a 0x100 2 byte:01\n"
		"0 fork a b                        # b maps the same two pages, copy-on-write\n"
		"0 write b 0x101 zero              # b gets its own copy of page 0x101\n"
		"0 set run 1\n"
		"0 settle 2\n"
		"0 mark forked\n";
	static const uint8_t bytes[] = {
		0x01, 0x01, 0x61, 0x00, 0x02, 0x00, 0x80, 0x04, 0x02, 0x0f, 0x00, 0x01,
		0x16, 0x00, 0x00, 0x02, 0x01, 0x0e, 0x00, 0x01, 0x62, 0x05, 0x01, 0x02,
		0x0a, 0x00, 0x01, 0x0b, 0x02, 0x0c, 0x06, 0x66, 0x6f, 0x72, 0x6b, 0x65,
		0x64, 0x00, 0x09,
	};
	GByteArray *p;
	uint64_t n;

	put_file("ex.ksmt", text, strlen(text));
	assert_null(read_file_all("ex.ksmt", &n));
	assert_int_equal(n, 9);
	assert_null(convert("ex.ksmt", "ex.ksmb"));
	p = inflate_bin("ex.ksmb", 3);
	assert_int_equal(p->len, sizeof(bytes));
	assert_memory_equal(p->data, bytes, sizeof(bytes));
	g_byte_array_free(p, TRUE);
}

/* FORMAT.md's "Version 3, THP advice" example and the bytes its table gives. */
static void test_thp_spec_example(void **state)
{
	static const char text[] =
		"ksmtrace 3\n"
		"0 spawn vm0\n"
		"0 map vm0 0x100000 1024                 # 4 MiB at 4 GiB: two aligned 512-page blocks\n"
		"0 advise vm0 0x100000 1024 hugepage     # MADV_HUGEPAGE, as QEMU advises guest RAM\n"
		"0 advise vm0 0x100000 1024 mergeable    # MADV_MERGEABLE: a record of its own\n"
		"0 advise vm0 0x100200 512 nohugepage    # the second block: 4 KiB pages only\n"
		"0 fill vm0 0x100000 1024 byte:01\n"
		"0 set run 1\n"
		"0 settle 2\n"
		"0 mark done\n";
	static const uint8_t bytes[] = {
		0x01, 0x03, 0x76, 0x6d, 0x30, 0x00,
		0x02, 0x00, 0x80, 0x80, 0x80, 0x01, 0x80, 0x08,
		0x13, 0x00, 0x00, 0x80, 0x08,
		0x03, 0x00, 0x00, 0x80, 0x08,
		0x14, 0x00, 0x80, 0x08, 0x80, 0x04,
		0x16, 0x00, 0xff, 0x07, 0x80, 0x08, 0x01,
		0x0a, 0x00, 0x01,
		0x0b, 0x02,
		0x0c, 0x04, 0x64, 0x6f, 0x6e, 0x65,
		0x00, 0x09,
	};
	GByteArray *p;
	uint64_t n;
	char *msg, *cut;

	put_file("ex.ksmt", text, strlen(text));
	assert_null(read_file_all("ex.ksmt", &n));
	assert_int_equal(n, 9);
	assert_null(convert("ex.ksmt", "ex.ksmb"));
	p = inflate_bin("ex.ksmb", 3);
	assert_int_equal(p->len, sizeof(bytes));
	assert_memory_equal(p->data, bytes, sizeof(bytes));
	g_byte_array_free(p, TRUE);
	/* "without the mergeable line the settle would be an error" */
	cut = g_strdup(text);
	memset(strstr(cut, "0 advise vm0 0x100000 1024 mergeable"), ' ', 36);
	msg = read_text(cut, NULL);
	assert_string_equal(msg, "t.ksmt:9: settle needs a live mm with a mergeable range "
			    "(there is none)");
	g_free(msg);
	g_free(cut);
}

/* Versions 1 and 2 are written exactly as before version 3 existed. */
static void test_old_versions_unchanged(void **state)
{
	/* FORMAT.md's "Binary, byte by byte" */
	static const char v1[] = "ksmtrace 1\n0 spawn a\n0 map a 0x0 2\n0 advise a 0x0 2 mergeable\n"
				 "0 fill a 0x0 2 byte:01\n0 set run 1\n0 settle 2\n"
				 "0 set max_page_sharing 10\n";
	static const uint8_t v1_bytes[] = {
		0x01, 0x01, 0x61, 0x00, 0x02, 0x00, 0x00, 0x02, 0x03, 0x00, 0x00, 0x02,
		0x16, 0x00, 0x00, 0x02, 0x01, 0x0a, 0x00, 0x01, 0x0b, 0x02, 0x0a, 0x04,
		0x0a, 0x00, 0x07,
	};
	static const char v2[] = "ksmtrace 2\n0 spawn a\n0 map a 0x100 4\n0 fill a 0x100 4 zero\n";
	GByteArray *p;
	char *gz;
	size_t n;

	put_file("v1.ksmt", v1, strlen(v1));
	assert_null(convert("v1.ksmt", "v1.ksmb"));
	p = inflate_bin("v1.ksmb", 1);
	assert_int_equal(p->len, sizeof(v1_bytes));
	assert_memory_equal(p->data, v1_bytes, sizeof(v1_bytes));
	g_byte_array_free(p, TRUE);
	assert_null(convert("v1.ksmb", "v1.ksmt.gz"));
	assert_null(convert("v1.ksmt.gz", "v1-back.ksmt"));
	assert_file("v1-back.ksmt", v1);
	/* the gzip member holds the same text */
	gz = slurp("v1.ksmt.gz", &n);
	assert_true(n > 2 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	g_free(gz);

	put_file("v2.ksmt", v2, strlen(v2));
	assert_null(convert("v2.ksmt", "v2.ksmb"));
	p = inflate_bin("v2.ksmb", 2);
	g_byte_array_free(p, TRUE);
	assert_null(convert("v2.ksmb", "v2-back.ksmt"));
	assert_file("v2-back.ksmt", v2);

	/* KSM advice keeps its opcodes (form 0) in every version */
	for (int v = 1; v <= 3; v++) {
		char *text = g_strdup_printf("ksmtrace %d\n0 spawn a\n0 map a 0x100 4\n"
					     "0 advise a 0x100 4 mergeable\n"
					     "0 advise a 0x101 2 unmergeable\n", v);
		static const uint8_t bytes[] = {
			0x01, 0x01, 'a', 0x00, 0x02, 0x00, 0x80, 0x04, 0x04,
			0x03, 0x00, 0x00, 0x04, 0x04, 0x00, 0x02, 0x02, 0x00, 0x04,
		};

		put_file("adv.ksmt", text, strlen(text));
		assert_null(convert("adv.ksmt", "adv.ksmb"));
		p = inflate_bin("adv.ksmb", v);
		assert_int_equal(p->len, sizeof(bytes));
		assert_memory_equal(p->data, bytes, sizeof(bytes));
		g_byte_array_free(p, TRUE);
		assert_null(convert("adv.ksmb", "adv-back.ksmt"));
		assert_file("adv-back.ksmt", text);
		g_free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_thp_parse, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_thp_round_trip, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_thp_writer, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_merge_rules, dir_setup, dir_teardown),
		cmocka_unit_test(test_check_counts),
		cmocka_unit_test_setup_teardown(test_binary_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_writer, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_spec_example, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_thp_spec_example, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_old_versions_unchanged, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
