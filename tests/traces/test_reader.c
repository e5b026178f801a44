// SPDX-License-Identifier: GPL-2.0-or-later
/* The text reader: what it accepts, and the exact error line for what it does not. */
#include "tests/traces/common.h"

struct bad_case {
	const char *text;
	const char *error;
};

#define H "ksmtrace 1\n"
#define A H "0 spawn a\n0 map a 0x1000 100\n"	/* lines 2-3 */
#define M A "0 advise a 0x1000 100 mergeable\n"	/* line 4 */

static const struct bad_case bad_cases[] = {
	/* header */
	{ "", "t.ksmt:1: expected header 'ksmtrace 1', found the end of the file" },
	{ "# just a comment\n\n", "t.ksmt:3: expected header 'ksmtrace 1', found the end of the file" },
	{ "0 spawn a\n", "t.ksmt:1: expected header 'ksmtrace 1'" },
	{ "ksmtrace\n", "t.ksmt:1: expected header 'ksmtrace 1'" },
	{ "ksmtrace 1 1\n", "t.ksmt:1: expected header 'ksmtrace 1'" },
	{ "KSMTRACE 1\n", "t.ksmt:1: expected header 'ksmtrace 1'" },
	{ "ksmtrace 5\n", "t.ksmt:1: unsupported trace version '5' (expected header 'ksmtrace 1' to 'ksmtrace 4')" },
	{ "ksmtrace 0\n", "t.ksmt:1: unsupported trace version '0' (expected header 'ksmtrace 1' to 'ksmtrace 4')" },
	/* v1 knows no blobs, exactly as before version 2 existed */
	{ H "blob 0 00\n", "t.ksmt:2: bad time 'blob' (unsigned decimal microseconds expected)" },
	{ A "0 write a 0x1000 blob:0\n", "t.ksmt:4: bad content 'blob:0' (zero, byte:HH, rand:SEED, "
	  "word:I:VALUE, patch:OFF:LEN:SEED or bytes:OFF:HEX)" },
	{ H "ksmtrace 1\n", "t.ksmt:2: bad time 'ksmtrace' (unsigned decimal microseconds expected)" },
	/* verbs and argument counts */
	{ H "0 wirte a 0x1000 zero\n", "t.ksmt:2: unknown verb 'wirte'" },
	{ H "0 SPAWN a\n", "t.ksmt:2: unknown verb 'SPAWN'" },
	{ H "0\n", "t.ksmt:2: missing verb after the time" },
	{ H "0 spawn\n", "t.ksmt:2: spawn takes 1 or 2 arguments (<mm> [node=<n>]), got 0" },
	{ H "0 spawn a node=1 x\n", "t.ksmt:2: spawn takes 1 or 2 arguments (<mm> [node=<n>]), got 3" },
	{ A "0 map a 0x2000\n", "t.ksmt:4: map takes 3 arguments (<mm> <vpn> <npages>), got 2" },
	{ A "0 advise a 0x1000 1\n",
	  "t.ksmt:4: advise takes 4 arguments (<mm> <vpn> <npages> mergeable|unmergeable), got 3" },
	{ A "0 write a 0x1000\n", "t.ksmt:4: write takes 3 arguments (<mm> <vpn> <content>), got 2" },
	{ A "0 write a 0x1000 zero zero\n",
	  "t.ksmt:4: write takes 3 arguments (<mm> <vpn> <content>), got 4" },
	{ A "0 fill a 0x1000 1\n", "t.ksmt:4: fill takes 4 arguments (<mm> <vpn> <npages> <content>), got 3" },
	{ A "0 fillseq a 0x1000 1\n",
	  "t.ksmt:4: fillseq takes 4 arguments (<mm> <vpn> <npages> <seed>), got 3" },
	{ A "0 unmap a 0x1000\n", "t.ksmt:4: unmap takes 3 arguments (<mm> <vpn> <npages>), got 2" },
	{ A "0 exit a a\n", "t.ksmt:4: exit takes 1 argument (<mm>), got 2" },
	{ H "0 set run\n", "t.ksmt:2: set takes 2 arguments (<knob> <value>), got 1" },
	{ H "0 settle\n", "t.ksmt:2: settle takes 1 argument (<n>), got 0" },
	{ H "0 mark a b c d e f g h i\n", "t.ksmt:2: mark takes 1 argument (<label>), got 9" },
	/* time */
	{ H "10 spawn a\n5 spawn b\n", "t.ksmt:3: time 5 is before the previous record's 10" },
	{ H "x spawn a\n", "t.ksmt:2: bad time 'x' (unsigned decimal microseconds expected)" },
	{ H "0x10 spawn a\n", "t.ksmt:2: bad time '0x10' (unsigned decimal microseconds expected)" },
	{ H "-1 spawn a\n", "t.ksmt:2: bad time '-1' (unsigned decimal microseconds expected)" },
	{ H "18446744073709551616 spawn a\n",
	  "t.ksmt:2: time '18446744073709551616' does not fit in 64 bits" },
	/* numbers */
	{ A "0 map a 0x 1\n", "t.ksmt:4: bad vpn '0x'" },
	{ A "0 map a 0x1g 1\n", "t.ksmt:4: bad vpn '0x1g'" },
	{ A "0 map a +5 1\n", "t.ksmt:4: bad vpn '+5'" },
	{ A "0 map a 0x2000 1e3\n", "t.ksmt:4: bad npages '1e3'" },
	{ A "0 write a 0x1000 rand:0x10000000000000000\n",
	  "t.ksmt:4: seed '0x10000000000000000' does not fit in 64 bits" },
	{ A "0 write a 0x1000 rand:18446744073709551616\n",
	  "t.ksmt:4: seed '18446744073709551616' does not fit in 64 bits" },
	{ A "0 fillseq a 0x1000 1 99999999999999999999\n",
	  "t.ksmt:4: seed '99999999999999999999' does not fit in 64 bits" },
	{ H "0 set sleep_millisecs 0x100000000000000000\n",
	  "t.ksmt:2: value '0x100000000000000000' does not fit in 64 bits" },
	/* ranges */
	{ A "0 map a 0xffffffff 2\n", "t.ksmt:4: vpn 0xffffffff + npages 2 is beyond 2^32 pages" },
	{ A "0 map a 0x100000000 1\n", "t.ksmt:4: vpn 0x100000000 + npages 1 is beyond 2^32 pages" },
	{ A "0 map a 0 4294967297\n", "t.ksmt:4: vpn 0 + npages 4294967297 is beyond 2^32 pages" },
	{ A "0 write a 0x100000000 zero\n", "t.ksmt:4: vpn 0x100000000 is beyond 2^32 pages" },
	{ A "0 map a 0x2000 0\n", "t.ksmt:4: npages must be at least 1" },
	{ A "0 unmap a 0x2000 0\n", "t.ksmt:4: npages must be at least 1" },
	/* content */
	{ A "0 write a 0x1000 patch:4000:100:1\n",
	  "t.ksmt:4: offset 4000 + length 100 is outside the page (4096 bytes)" },
	{ A "0 write a 0x1000 patch:4096:1:1\n",
	  "t.ksmt:4: offset 4096 + length 1 is outside the page (4096 bytes)" },
	{ A "0 write a 0x1000 patch:0:0:1\n", "t.ksmt:4: patch length must be at least 1" },
	{ A "0 write a 0x1000 bytes:4095:0011\n",
	  "t.ksmt:4: offset 4095 + length 2 is outside the page (4096 bytes)" },
	{ A "0 write a 0x1000 word:512:1\n", "t.ksmt:4: word index 512 is out of range (0..511)" },
	{ A "0 write a 0x1000 word:0x200:1\n", "t.ksmt:4: word index 512 is out of range (0..511)" },
	{ A "0 write a 0x1000 bytes:0:zz\n", "t.ksmt:4: bad hex in 'bytes:0:zz'" },
	{ A "0 write a 0x1000 bytes:0:abc\n", "t.ksmt:4: odd number of hex digits in 'bytes:0:abc'" },
	{ A "0 write a 0x1000 bytes:0:\n", "t.ksmt:4: no bytes in 'bytes:0:'" },
	{ A "0 write a 0x1000 byte:6\n", "t.ksmt:4: bad byte in 'byte:6' (two hex digits expected)" },
	{ A "0 write a 0x1000 byte:0x63\n",
	  "t.ksmt:4: bad byte in 'byte:0x63' (two hex digits expected)" },
	{ A "0 write a 0x1000 byte:g0\n", "t.ksmt:4: bad byte in 'byte:g0' (two hex digits expected)" },
	{ A "0 write a 0x1000 rand:\n", "t.ksmt:4: bad seed ''" },
	{ A "0 write a 0x1000 word:1\n",
	  "t.ksmt:4: bad content 'word:1' (zero, byte:HH, rand:SEED, word:I:VALUE, "
	  "patch:OFF:LEN:SEED or bytes:OFF:HEX)" },
	{ A "0 fill a 0x1000 1 zero:1\n",
	  "t.ksmt:4: bad content 'zero:1' (zero, byte:HH, rand:SEED, word:I:VALUE, "
	  "patch:OFF:LEN:SEED or bytes:OFF:HEX)" },
	{ A "0 write a 0x1000 Zero\n",
	  "t.ksmt:4: bad content 'Zero' (zero, byte:HH, rand:SEED, word:I:VALUE, "
	  "patch:OFF:LEN:SEED or bytes:OFF:HEX)" },
	/* names */
	{ H "0 spawn a/b\n", "t.ksmt:2: bad mm name 'a/b' (1-64 characters of A-Z a-z 0-9 _ . -)" },
	{ H "0 spawn "
	  "a123456789a123456789a123456789a123456789a123456789a123456789abcde\n",
	  "t.ksmt:2: bad mm name "
	  "'a123456789a123456789a123456789a123456789a123456789a123456789abcde' "
	  "(1-64 characters of A-Z a-z 0-9 _ . -)" },
	{ H "0 mark été\n", "t.ksmt:2: bad label name 'été' (1-64 characters of A-Z a-z 0-9 _ . -)" },
	{ H "0 spawn a node=x\n", "t.ksmt:2: bad node 'x'" },
	{ H "0 spawn a node=0x1\n", "t.ksmt:2: bad node '0x1'" },
	{ H "0 spawn a node=1024\n", "t.ksmt:2: node 1024 is out of range (0..1023)" },
	{ H "0 spawn a nodes=1\n", "t.ksmt:2: expected node=<n>, got 'nodes=1'" },
	/* mms and pages */
	{ A "0 write c 0x1000 zero\n", "t.ksmt:4: mm 'c' does not exist" },
	{ H "0 map a 0 1\n", "t.ksmt:2: mm 'a' does not exist" },
	{ A "0 exit a\n0 exit a\n", "t.ksmt:5: mm 'a' does not exist" },
	{ A "0 exit a\n0 write a 0x1000 zero\n", "t.ksmt:5: mm 'a' does not exist" },
	{ A "0 spawn a\n", "t.ksmt:4: mm 'a' already exists" },
	{ A "0 map a 0x1063 10\n", "t.ksmt:4: vpn 0x1063 + npages 10 overlaps mapped pages in mm 'a'" },
	{ A "0 map a 0 0x1001\n", "t.ksmt:4: vpn 0x0 + npages 4097 overlaps mapped pages in mm 'a'" },
	{ A "0 write a 0x2000 zero\n", "t.ksmt:4: vpn 0x2000 is not mapped in mm 'a'" },
	{ A "0 write a 0x1064 zero\n", "t.ksmt:4: vpn 0x1064 is not mapped in mm 'a'" },
	{ A "0 fill a 0x1000 101 zero\n", "t.ksmt:4: vpn 0x1000 + npages 101 is not mapped in mm 'a'" },
	{ A "0 fillseq a 0xfff 2 1\n", "t.ksmt:4: vpn 0xfff + npages 2 is not mapped in mm 'a'" },
	{ A "0 advise a 0x1000 200 mergeable\n",
	  "t.ksmt:4: vpn 0x1000 + npages 200 is not mapped in mm 'a'" },
	{ A "0 unmap a 0x1010 1\n0 write a 0x1010 zero\n", "t.ksmt:5: vpn 0x1010 is not mapped in mm 'a'" },
	{ A "0 unmap a 0x1010 1\n0 fill a 0x100f 3 zero\n",
	  "t.ksmt:5: vpn 0x100f + npages 3 is not mapped in mm 'a'" },
	{ A "0 advise a 0x1000 100 maybe\n", "t.ksmt:4: expected mergeable or unmergeable, got 'maybe'" },
	/* knobs */
	{ H "0 set pages_to_scna 1\n", "t.ksmt:2: unknown knob 'pages_to_scna'" },
	{ H "0 set run 3\n", "t.ksmt:2: value 3 is out of range for run (0..2)" },
	{ H "0 set run x\n", "t.ksmt:2: bad value 'x'" },
	{ H "0 set pages_to_scan 4294967296\n",
	  "t.ksmt:2: value 4294967296 is out of range for pages_to_scan (0..4294967295)" },
	{ H "0 set use_zero_pages 2\n", "t.ksmt:2: value 2 is out of range for use_zero_pages (0..1)" },
	{ H "0 set smart_scan 0x2\n", "t.ksmt:2: value 2 is out of range for smart_scan (0..1)" },
	{ H "0 set merge_across_nodes 7\n",
	  "t.ksmt:2: value 7 is out of range for merge_across_nodes (0..1)" },
	{ H "0 set max_page_sharing 1\n",
	  "t.ksmt:2: value 1 is out of range for max_page_sharing (2..2147483647)" },
	{ H "0 set advisor_max_cpu 0\n", "t.ksmt:2: value 0 is out of range for advisor_max_cpu (1..100)" },
	{ H "0 set advisor_max_cpu 101\n",
	  "t.ksmt:2: value 101 is out of range for advisor_max_cpu (1..100)" },
	{ H "0 set advisor_target_scan_time 0\n",
	  "t.ksmt:2: value 0 is out of range for advisor_target_scan_time (>= 1)" },
	{ H "0 set advisor_mode 1\n", "t.ksmt:2: bad value '1' for advisor_mode (none or scan-time)" },
	{ H "0 set advisor_mode scan-time\n0 set pages_to_scan 100\n",
	  "t.ksmt:3: pages_to_scan cannot be set while advisor_mode is scan-time" },
	{ H "0 set advisor_mode scan-time\n0 set advisor_mode scan-time\n0 set pages_to_scan 100\n",
	  "t.ksmt:4: pages_to_scan cannot be set while advisor_mode is scan-time" },
	/* settle */
	{ M "0 settle 1\n", "t.ksmt:5: settle needs run 1 (run is 0)" },
	{ M "0 set run 2\n0 settle 1\n", "t.ksmt:6: settle needs run 1 (run is 2)" },
	{ A "0 set run 1\n0 settle 1\n",
	  "t.ksmt:5: settle needs a live mm with a mergeable range (there is none)" },
	{ M "0 set run 1\n0 set pages_to_scan 0\n0 settle 1\n",
	  "t.ksmt:7: settle needs pages_to_scan > 0 (it is 0)" },
	{ M "0 set run 1\n0 settle 0\n", "t.ksmt:6: settle count must be at least 1" },
	{ M "0 set run 1\n0 advise a 0x1000 100 unmergeable\n0 settle 1\n",
	  "t.ksmt:7: settle needs a live mm with a mergeable range (there is none)" },
	{ M "0 set run 1\n0 unmap a 0 0x2000\n0 settle 1\n",
	  "t.ksmt:7: settle needs a live mm with a mergeable range (there is none)" },
	{ M "0 set run 1\n0 exit a\n0 settle 1\n",
	  "t.ksmt:7: settle needs a live mm with a mergeable range (there is none)" },
	{ M "0 set run 1\n0 set advisor_min_pages_to_scan 0\n0 set advisor_mode scan-time\n0 settle 1\n",
	  "t.ksmt:8: settle needs pages_to_scan > 0 (it is 0)" },
	{ M "0 set run 1\n0 set pages_to_scan 0\n0 set advisor_mode scan-time\n"
	  "0 set advisor_mode none\n0 settle 1\n0 set pages_to_scan 0\n0 settle 1\n",
	  "t.ksmt:11: settle needs pages_to_scan > 0 (it is 0)" },
	/* bytes of the line */
	{ "ksmtrace 1\r\n", "t.ksmt:1: carriage return in line" },
	{ H "0 spawn a # comment\r\n", "t.ksmt:2: carriage return in line" },
	{ H "0 spawn a\n# \xff\n", "t.ksmt:3: invalid UTF-8" },
	{ H "0 spawn \xc3\x28\n", "t.ksmt:2: invalid UTF-8" },
	{ H "0 spawn a # \xed\xa0\x80 (a surrogate)\n", "t.ksmt:2: invalid UTF-8" },
	{ H "0 spawn a\xe9\n", "t.ksmt:2: invalid UTF-8" },
};

static void test_bad(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
		char *msg = read_text(bad_cases[i].text, NULL);

		if (!msg || strcmp(msg, bad_cases[i].error) != 0)
			print_error("case %zu: %s\n", i, bad_cases[i].text);
		assert_non_null(msg);
		assert_string_equal(msg, bad_cases[i].error);
		g_free(msg);
	}
}

static void test_nul(void **state)
{
	static const char text[] = H "0 spawn a\n0 mark x\0y\n";
	char *msg;

	put_file("t.ksmt", text, sizeof(text) - 1);
	msg = read_file_all("t.ksmt", NULL);
	assert_non_null(msg);
	assert_string_equal(msg, "t.ksmt:3: NUL byte in line");
	g_free(msg);
	put_file("t.ksmt", "ksmtrace 1\n# \0\n", 15);
	msg = read_file_all("t.ksmt", NULL);
	assert_string_equal(msg, "t.ksmt:2: NUL byte in line");
	g_free(msg);
}

static void test_missing_file(void **state)
{
	char *msg = read_file_all("nothere.ksmt", NULL);

	assert_string_equal(msg, "nothere.ksmt: cannot open: No such file or directory");
	g_free(msg);
}

static void test_long_token_cut(void **state)
{
	GString *s = g_string_new(H "0 spawn a\n0 map a 0 1\n0 write a 0 bytes:0:");

	for (int i = 0; i < 4000; i++)
		g_string_append(s, "x");
	g_string_append(s, "\n");
	char *msg = read_text(s->str, NULL);

	assert_non_null(msg);
	assert_true(g_str_has_prefix(msg, "t.ksmt:4: bad hex in 'bytes:0:xxxx"));
	assert_true(g_str_has_suffix(msg, "...'"));
	assert_true(strlen(msg) < 200);
	g_free(msg);
	g_string_free(s, TRUE);
}

/* The example of FORMAT.md ("Version 1, text"), as cases/spec_example.ksmt holds it. */
static const char spec_example[] =
	"ksmtrace 1\n"
	"0       set pages_to_scan 1000\n"
	"0       set sleep_millisecs 10\n"
	"0       spawn a\n"
	"0       spawn b\n"
	"0       map a 0x1000 100\n"
	"0       map b 0x1000 100\n"
	"0       advise a 0x1000 100 mergeable\n"
	"0       advise b 0x1000 100 mergeable\n"
	"0       fill a 0x1000 100 byte:63\n"
	"0       fill b 0x1000 100 byte:63\n"
	"0       set run 1\n"
	"0       settle 2\n"
	"0       mark merged          # one KSM page: pages_shared 1, pages_sharing 199\n"
	"0       write a 0x1000 word:0:1\n"
	"0       mark after_cow       # cow_ksm 1; pages_sharing still 199 until the page is scanned\n"
	"0       settle 1\n"
	"0       mark rescanned       # pages_sharing 198; the page is volatile (new checksum)\n";

static void test_spec_example(void **state)
{
	uint64_t n;
	char *msg = read_text(spec_example, &n);

	assert_null(msg);
	assert_int_equal(n, 17);
}

static void test_records(void **state)
{
	static const char text[] =
		"# leading comment\n"
		"\n"
		"  ksmtrace\t1   # header with a comment\n"
		"#\n"
		"0 spawn a node=2\n"
		"007 spawn b\t# leading zeros in time\n"
		"7 map a 0X1000 0x10\n"
		"7 map b 4096 16\n"
		"8 advise a 0x1000 16 mergeable\n"
		"8 advise a 0x1004 2 unmergeable\n"
		"9 write a 0x1000 zero\n"
		"9 write a 0x1001 byte:aB\n"
		"9 write a 0x1002 rand:0xDEADbeef\n"
		"9 write a 0x1003 word:511:0xFFFFFFFFFFFFFFFF\n"
		"9 write a 0x1004 patch:4095:1:18446744073709551615\n"
		"9 write a 0x1005 bytes:0:00ff10Ab\n"
		"9 fill b 0x1000 16 byte:00\n"
		"9 fillseq b 0x1000 16 0xffffffffffffffff\n"
		"10 unmap a 0x0 0x100000000\n"
		"10 map a 0xffffffff 1\n"
		"10 exit a\n"
		"11 spawn a\n"
		"12 set advisor_mode scan-time\n"
		"12 set advisor_mode none\n"
		"12 set pages_to_scan 0x10\n"
		"12 set advisor_target_scan_time 18446744073709551615\n"
		"12 set max_page_sharing 2\n"
		"12 set run 1\n"
		"12 advise b 0x1000 16 mergeable\n"
		"12 settle 1\n"
		"12 mark A-z_0.9\n"
		"18446744073709551615 mark end";	/* no final newline */
	struct trace_record *rec = g_new0(struct trace_record, 1);
	GError *error = NULL;
	trace_reader *r;

	put_file("t.ksmt", text, strlen(text));
	r = trace_reader_open("t.ksmt", &error);
	assert_non_null(r);
	assert_string_equal(trace_reader_path(r), "t.ksmt");
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_SPAWN);
	assert_int_equal(rec->line, 5);
	assert_string_equal(rec->mm, "a");
	assert_int_equal(rec->node, 2);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->t_us, 7);
	assert_int_equal(rec->node, 0);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_MAP);
	assert_int_equal(rec->vpn, 0x1000);
	assert_int_equal(rec->npages, 16);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_ADVISE);
	assert_true(rec->mergeable);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_false(rec->mergeable);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->content.form, CONTENT_ZERO);
	assert_int_equal(rec->npages, 1);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->content.form, CONTENT_BYTE);
	assert_int_equal(rec->content.value, 0xab);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->content.form, CONTENT_RAND);
	assert_int_equal(rec->content.value, 0xdeadbeef);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->content.form, CONTENT_WORD);
	assert_int_equal(rec->content.off, 511);
	assert_true(rec->content.value == UINT64_MAX);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->content.form, CONTENT_PATCH);
	assert_int_equal(rec->content.off, 4095);
	assert_int_equal(rec->content.len, 1);
	assert_true(rec->content.value == UINT64_MAX);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->content.form, CONTENT_BYTES);
	assert_int_equal(rec->content.off, 0);
	assert_int_equal(rec->content.len, 4);
	assert_memory_equal(rec->content.data, "\x00\xff\x10\xab", 4);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_FILL);
	assert_int_equal(rec->npages, 16);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_FILLSEQ);
	assert_true(rec->seed == UINT64_MAX);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_UNMAP);
	assert_true(rec->npages == (UINT64_C(1) << 32));
	for (int i = 0; i < 5; i++)
		assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_SET);
	assert_int_equal(rec->knob, KNOB_ADVISOR_MODE);
	assert_int_equal(rec->value, ADVISOR_NONE);
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->knob, KNOB_PAGES_TO_SCAN);
	assert_int_equal(rec->value, 16);
	for (int i = 0; i < 6; i++)
		assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_int_equal(rec->verb, TRACE_MARK);
	assert_string_equal(rec->label, "A-z_0.9");
	assert_int_equal(trace_reader_next(r, rec, &error), 1);
	assert_string_equal(rec->label, "end");
	assert_true(rec->t_us == UINT64_MAX);
	assert_int_equal(rec->line, 32);
	assert_int_equal(trace_reader_next(r, rec, &error), 0);
	assert_int_equal(trace_reader_next(r, rec, &error), 0);
	assert_null(error);
	trace_reader_free(r);
	g_free(rec);
}

static void test_accepts(void **state)
{
	static const char *const good[] = {
		H,
		"ksmtrace 1",
		H "# nothing else\n\n\t \n",
		/* unmap of holes, a name reused after exit, maps that touch */
		A "0 unmap a 0 0x100000000\n0 exit a\n0 spawn a\n0 map a 0 1\n0 map a 1 1\n"
		  "0 fill a 0 2 zero\n",
		/* a write inside the second of two mapped ranges, after a hole */
		A "0 map a 0x3000 1\n0 write a 0x3000 zero\n0 write a 0x1063 zero\n",
		/* settle after a mergeable range comes back */
		M "0 set run 1\n0 unmap a 0x1000 50\n0 settle 1\n0 advise a 0x1032 50 unmergeable\n"
		  "0 advise a 0x1040 1 mergeable\n0 settle 3\n",
		/* advisor: the switch sets pages_to_scan from advisor_min_pages_to_scan */
		M "0 set run 1\n0 set pages_to_scan 0\n0 set advisor_mode scan-time\n0 settle 1\n",
		/* 64 characters */
		H "0 spawn a123456789a123456789a123456789a123456789a123456789a123456789abcd\n",
		/* every knob */
		H "0 set run 2\n0 set pages_to_scan 4294967295\n0 set sleep_millisecs 0\n"
		  "0 set use_zero_pages 1\n0 set max_page_sharing 2147483647\n"
		  "0 set merge_across_nodes 0\n0 set smart_scan 0\n"
		  "0 set stable_node_chains_prune_millisecs 4294967295\n0 set advisor_max_cpu 100\n"
		  "0 set advisor_min_pages_to_scan 0\n0 set advisor_max_pages_to_scan 4294967295\n"
		  "0 set advisor_target_scan_time 1\n0 set advisor_mode scan-time\n",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		char *msg = read_text(good[i], NULL);

		if (msg)
			print_error("case %zu: %s\n", i, msg);
		assert_null(msg);
	}
}

/*
 * A line may hold up to TRACE_LINE_MAX bytes (comments too), so the
 * reader's memory stays bounded whatever the input: one byte more is an
 * error at that line, with or without a newline after it.
 */
static void test_long_line(void **state)
{
	GString *s = g_string_new(H "# ");
	uint64_t n;

	while (s->len < strlen(H) + TRACE_LINE_MAX)
		g_string_append_c(s, 'c');
	g_string_append(s, "\n0 spawn a\n");
	char *msg = read_text(s->str, &n);

	assert_null(msg);
	assert_int_equal(n, 1);
	g_string_insert_c(s, strlen(H) + 2, 'c');
	msg = read_text(s->str, NULL);
	assert_string_equal(msg, "t.ksmt:2: line longer than 65536 bytes");
	g_free(msg);
	/* no newline at all, as from /dev/zero, past the reader's first buffer */
	g_string_truncate(s, strlen(H));
	for (int i = 0; i < 600000; i++)
		g_string_append_c(s, 'z');
	msg = read_text(s->str, NULL);
	assert_string_equal(msg, "t.ksmt:2: line longer than 65536 bytes");
	g_free(msg);
	g_string_free(s, TRUE);
}

/* The writer's comments always read back: invalid UTF-8 mended, long lines cut. */
static void test_writer_comment(void **state)
{
	GError *error = NULL;
	trace_writer *w = trace_writer_open("c.ksmt", TRACE_FMT_TEXT, &error);
	GString *text = g_string_new("bad \xff byte\n");
	uint64_t n;

	assert_non_null(w);
	for (int i = 0; i < 100000; i++)
		g_string_append(text, "\xc3\xa9");	/* two-byte characters, cut between none */
	assert_true(trace_writer_comment(w, text->str, &error));
	assert_true(trace_writer_close(w, &error));
	assert_null(read_file_all("c.ksmt", &n));
	assert_int_equal(n, 0);
	g_string_free(text, TRUE);
}

/* Many separate ranges: interval sets, not pages, hold them. */
static void test_many_ranges(void **state)
{
	GString *s = g_string_new(H "0 spawn a\n0 map a 0 0x100000000\n");
	char *msg;

	for (int i = 0; i < 2000; i++)
		g_string_append_printf(s, "0 unmap a %d 1\n", i * 2);
	for (int i = 0; i < 2000; i++)
		g_string_append_printf(s, "0 write a %d zero\n", i * 2 + 1);
	g_string_append(s, "0 write a 4000 zero\n0 write a 2 zero\n");
	msg = read_text(s->str, NULL);
	assert_string_equal(msg, "t.ksmt:4005: vpn 0x2 is not mapped in mm 'a'");
	g_free(msg);
	g_string_free(s, TRUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_nul, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_long_token_cut, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_spec_example, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_records, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_accepts, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_long_line, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_writer_comment, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_many_ranges, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests_name("traces-reader", tests, NULL, NULL);
}
