// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Version 3 (traces/FORMAT.md, "Version 3: fork and prctl"): the two verbs in
 * text and binary, their errors, the round trips, what the checker makes of
 * them (which pages a child has, which ranges are mergeable), and that
 * versions 1 and 2 write exactly as before.
 */
#include <zlib.h>
#include "common.h"
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

static void assert_file(const char *name, const char *text)
{
	char *data = slurp(name, NULL);

	assert_string_equal(data, text);
	g_free(data);
}

static void assert_same_files(const char *a, const char *b)
{
	size_t la, lb;
	char *da = slurp(a, &la), *db = slurp(b, &lb);

	assert_int_equal(la, lb);
	assert_memory_equal(da, db, la);
	g_free(da);
	g_free(db);
}

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

static void test_round_trip(void **state)
{
	GByteArray *p;

	put_file("v3.ksmt", v3_text, strlen(v3_text));
	/* text -> binary -> text */
	assert_null(convert("v3.ksmt", "t.ksmb"));
	p = inflate_bin("t.ksmb", 3);
	assert_int_equal(p->len, sizeof(v3_payload));
	assert_memory_equal(p->data, v3_payload, sizeof(v3_payload));
	g_byte_array_free(p, TRUE);
	assert_null(convert("t.ksmb", "back.ksmt"));
	assert_file("back.ksmt", v3_text);
	/* binary -> text -> binary */
	assert_null(convert("back.ksmt", "t2.ksmb"));
	assert_same_files("t.ksmb", "t2.ksmb");
	assert_null(convert("t.ksmb", "t3.ksmb"));
	assert_same_files("t.ksmb", "t3.ksmb");
	/* gzip text, both ways, and from it binary again */
	assert_null(convert("t.ksmb", "t.ksmt.gz"));
	assert_null(convert("t.ksmt.gz", "gz.ksmt"));
	assert_file("gz.ksmt", v3_text);
	assert_null(convert("v3.ksmt", "u.ksmt.gz"));
	assert_null(convert("u.ksmt.gz", "u.ksmt"));
	assert_file("u.ksmt", v3_text);
	assert_null(convert("t.ksmt.gz", "t4.ksmb"));
	assert_same_files("t.ksmb", "t4.ksmb");
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_merge_rules, dir_setup, dir_teardown),
		cmocka_unit_test(test_check_counts),
		cmocka_unit_test_setup_teardown(test_binary_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_writer, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_spec_example, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_old_versions_unchanged, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
