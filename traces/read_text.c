// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The text form's grammar (FORMAT.md, "Text form"): lines out of the shared
 * input (reader.c), split into tokens, each token parsed on its own into a
 * trace_record, which then passes the checks both forms share (check.c).
 *
 * The line is the unit: an error is "FILE:LINE: problem", the line counted
 * from 1, and names the first bad token from the left (cut to 80 bytes). A
 * line is never copied: tokens point into the input buffer, which holds at
 * least one whole line (TRACE_LINE_MAX bounds it).
 */
#include <string.h>
#include "traces/reader_internal.h"

enum { TOK_MAX = 8 };

struct tok {
	const char *s;
	size_t n;
};

/* A token for an error message, cut (on a UTF-8 boundary) if long. */
static char *tokstr(const struct tok *t)
{
	size_t n = t->n;

	if (n <= 80)
		return g_strndup(t->s, n);
	n = 80;
	while (n > 0 && ((uint8_t)t->s[n] & 0xc0) == 0x80)
		n--;
	return g_strdup_printf("%.*s...", (int)n, t->s);
}

#define TOKFAIL(r, error, fmt, t, ...) ({					\
	char *__ts = tokstr(t);							\
	int __rc = reader_fail(r, error, ":%" G_GUINT64_FORMAT ": " fmt, (r)->line, __ts,	\
			       ##__VA_ARGS__);						\
	g_free(__ts);								\
	__rc;									\
})

static int line_fail(trace_reader *r, GError **error, char *problem)
{
	int rc = reader_fail(r, error, ":%" G_GUINT64_FORMAT ": %s", r->line, problem);

	g_free(problem);
	return rc;
}

/* Hex digit values plus one; zero for everything else. */
static const uint8_t hex1[256] = {
	['0'] = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
	['A'] = 11, 12, 13, 14, 15, 16,
	['a'] = 11, 12, 13, 14, 15, 16,
};

static inline int hexval(unsigned char c)
{
	return hex1[c] - 1;
}

/* 0: ok, -1: not a number, -2: more than 64 bits. */
static int parse_dec(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -1;
		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Decimal or 0x hex. */
static int parse_num(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return parse_dec(s, n, out);
	if (n == 2)
		return -1;
	for (size_t i = 2; i < n; i++) {
		int d = hexval(s[i]);

		if (d < 0)
			return -1;
		if (v >> 60)
			return -2;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static int num_fail(trace_reader *r, GError **error, int rc, const char *what,
		    const char *s, size_t n)
{
	struct tok t = { s, n };
	char *ts = tokstr(&t);

	if (rc == -2)
		reader_fail(r, error, ":%" G_GUINT64_FORMAT ": %s '%s' does not fit in 64 bits",
			    r->line, what, ts);
	else
		reader_fail(r, error, ":%" G_GUINT64_FORMAT ": bad %s '%s'", r->line, what, ts);
	g_free(ts);
	return -1;
}

static int get_num(trace_reader *r, GError **error, const struct tok *t, const char *what,
		   uint64_t *out)
{
	int rc = parse_num(t->s, t->n, out);

	return rc ? num_fail(r, error, rc, what, t->s, t->n) : 0;
}

static int get_name(trace_reader *r, GError **error, const struct tok *t, const char *what,
		    char *out)
{
	if (!trace_name_valid(t->s, t->n)) {
		char *ts = tokstr(t);

		reader_fail(r, error, ":%" G_GUINT64_FORMAT ": bad %s name '%s' (1-64 characters of "
			    "A-Z a-z 0-9 _ . -)", r->line, what, ts);
		g_free(ts);
		return -1;
	}
	memcpy(out, t->s, t->n);
	out[t->n] = 0;
	return 0;
}

static int get_range(trace_reader *r, GError **error, const struct tok *t,
		     struct trace_record *rec)
{
	if (get_num(r, error, &t[0], "vpn", &rec->vpn) || get_num(r, error, &t[1], "npages", &rec->npages))
		return -1;
	if (rec->npages == 0)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": npages must be at least 1",
				   r->line);
	if (rec->vpn >= TRACE_VPN_LIMIT || rec->npages > TRACE_VPN_LIMIT - rec->vpn) {
		char *a = tokstr(&t[0]), *b = tokstr(&t[1]);
		int rc = reader_fail(r, error, ":%" G_GUINT64_FORMAT ": vpn %s + npages %s is "
				     "beyond 2^32 pages", r->line, a, b);

		g_free(a);
		g_free(b);
		return rc;
	}
	return 0;
}

/* Splits s at ':' into at most max parts; returns the count (max + 1 if more). */
static int split_colon(const char *s, size_t n, struct tok *parts, int max)
{
	int k = 0;
	const char *end = s + n;

	for (;;) {
		const char *c = memchr(s, ':', end - s);

		if (k == max)
			return max + 1;
		parts[k].s = s;
		parts[k].n = (c ? c : end) - s;
		k++;
		if (!c)
			return k;
		s = c + 1;
	}
}


/*
 * patch:OFF:LEN:SEED and bytes:OFF:HEX (p: t's parts, p[0] the form's name):
 * at least one byte, all of them inside the page.
 */
static int get_patch(trace_reader *r, GError **error, const struct tok *t, const struct tok *p,
		     bool patch, struct trace_content *c)
{
	uint64_t a, b;

	if (get_num(r, error, &p[1], "offset", &a))
		return -1;
	if (patch) {
		if (get_num(r, error, &p[2], "length", &b) ||
		    get_num(r, error, &p[3], "seed", &c->value))
			return -1;
	} else {
		if (p[2].n == 0)
			return TOKFAIL(r, error, "no bytes in '%s'", t);
		if (p[2].n & 1)
			return TOKFAIL(r, error, "odd number of hex digits in '%s'", t);
		b = p[2].n / 2;
	}
	if (b == 0)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": patch length must be at least 1",
				   r->line);
	if (a >= TRACE_PAGE_SIZE || b > TRACE_PAGE_SIZE - a)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": offset %" G_GUINT64_FORMAT
				   " + length %" G_GUINT64_FORMAT " is outside the page (4096 bytes)",
				   r->line, a, b);
	c->off = a;
	c->len = b;
	if (patch) {
		c->form = CONTENT_PATCH;
		return 0;
	}
	c->form = CONTENT_BYTES;
	c->value = 0;
	for (uint64_t i = 0; i < b; i++) {
		int hi = hexval(p[2].s[2 * i]), lo = hexval(p[2].s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return TOKFAIL(r, error, "bad hex in '%s'", t);
		c->data[i] = hi << 4 | lo;
	}
	return 0;
}

/* blob:ID (v2): a blob defined earlier, whose bytes the record carries. */
static int get_blob_ref(trace_reader *r, GError **error, const struct tok *id,
			struct trace_content *c)
{
	char *why = NULL;
	uint64_t a;

	if (get_num(r, error, id, "blob id", &a))
		return -1;
	if (a >= r->blobs.n)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": blob %" G_GUINT64_FORMAT
				   " is not defined (%" G_GUINT64_FORMAT " defined so far)",
				   r->line, a, r->blobs.n);
	c->form = CONTENT_BLOB;
	c->value = a;
	c->off = 0;
	c->len = TRACE_PAGE_SIZE;
	if (!blob_store_get(&r->blobs, a, c->data, &why)) {
		int rc = reader_fail(r, error, ":%" G_GUINT64_FORMAT ": %s", r->line, why);

		g_free(why);
		return rc;
	}
	return 0;
}

/*
 * digest:HEX (v4): the page's 128-bit digest in 32 hex digits, its 16
 * bytes in order; the record carries them in data[0..15].
 */
static int get_digest(trace_reader *r, GError **error, const struct tok *t,
		      const struct tok *hex, struct trace_content *c)
{
	if (hex->n != 2 * TRACE_DIGEST_LEN)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": digest has %zu hex digits "
				   "(%u expected: 128 bits)", r->line, hex->n, 2 * TRACE_DIGEST_LEN);
	for (unsigned int i = 0; i < TRACE_DIGEST_LEN; i++) {
		int hi = hexval(hex->s[2 * i]), lo = hexval(hex->s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return TOKFAIL(r, error, "bad hex in '%s'", t);
		c->data[i] = hi << 4 | lo;
	}
	c->form = CONTENT_DIGEST;
	c->value = 0;
	c->off = 0;
	c->len = TRACE_DIGEST_LEN;
	return 0;
}

/*
 * A <content> token (FORMAT.md, "Page contents"): the form's name, then its
 * colon-separated fields, their count fixed by the form. A name with the
 * wrong number of fields is a bad content like an unknown name.
 */
static int get_content(trace_reader *r, GError **error, const struct tok *t,
		       struct trace_content *c)
{
	struct tok p[4];
	int k = split_colon(t->s, t->n, p, 4);
	uint64_t a;

#define IS(str) (p[0].n == sizeof(str) - 1 && memcmp(p[0].s, str, p[0].n) == 0)
	if (IS("zero") && k == 1) {
		c->form = CONTENT_ZERO;
		c->value = 0;
		return 0;
	}
	if (IS("byte") && k == 2) {
		if (p[1].n != 2 || hexval(p[1].s[0]) < 0 || hexval(p[1].s[1]) < 0)
			return TOKFAIL(r, error, "bad byte in '%s' (two hex digits expected)", t);
		c->form = CONTENT_BYTE;
		c->value = hexval(p[1].s[0]) << 4 | hexval(p[1].s[1]);
		return 0;
	}
	if (IS("rand") && k == 2) {
		c->form = CONTENT_RAND;
		return get_num(r, error, &p[1], "seed", &c->value);
	}
	if (IS("word") && k == 3) {
		if (get_num(r, error, &p[1], "word index", &a) ||
		    get_num(r, error, &p[2], "word value", &c->value))
			return -1;
		if (a > 511)
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": word index %"
					   G_GUINT64_FORMAT " is out of range (0..511)", r->line, a);
		c->form = CONTENT_WORD;
		c->off = a;
		c->len = 8;
		return 0;
	}
	if ((IS("patch") && k == 4) || (IS("bytes") && k == 3))
		return get_patch(r, error, t, p, p[0].n == 5 && p[0].s[4] == 'h', c);
	if (IS("blob") && k == 2 && r->version >= 2)
		return get_blob_ref(r, error, &p[1], c);
	if (IS("digest") && k == 2) {
		if (r->version < 4)
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": digest content needs "
					   "header 'ksmtrace 4' (this file is version %d)",
					   r->line, r->version);
		return get_digest(r, error, t, &p[1], c);
	}
#undef IS
	if (r->version >= 4)
		return TOKFAIL(r, error, "bad content '%s' (zero, byte:HH, rand:SEED, word:I:VALUE, "
			       "patch:OFF:LEN:SEED, bytes:OFF:HEX, blob:ID or digest:HEX)", t);
	if (r->version >= 2)
		return TOKFAIL(r, error, "bad content '%s' (zero, byte:HH, rand:SEED, word:I:VALUE, "
			       "patch:OFF:LEN:SEED, bytes:OFF:HEX or blob:ID)", t);
	return TOKFAIL(r, error, "bad content '%s' (zero, byte:HH, rand:SEED, word:I:VALUE, "
		       "patch:OFF:LEN:SEED or bytes:OFF:HEX)", t);
}

static const char *const verb_usage[TRACE_NR_VERBS] = {
	[TRACE_SPAWN] = "<mm> [node=<n>]",
	[TRACE_MAP] = "<mm> <vpn> <npages>",
	[TRACE_ADVISE] = "<mm> <vpn> <npages> mergeable|unmergeable",
	[TRACE_WRITE] = "<mm> <vpn> <content>",
	[TRACE_FILL] = "<mm> <vpn> <npages> <content>",
	[TRACE_FILLSEQ] = "<mm> <vpn> <npages> <seed>",
	[TRACE_UNMAP] = "<mm> <vpn> <npages>",
	[TRACE_EXIT] = "<mm>",
	[TRACE_SET] = "<knob> <value>",
	[TRACE_SETTLE] = "<n>",
	[TRACE_MARK] = "<label>",
	[TRACE_FORK] = "<parent> <child>",
	[TRACE_PRCTL] = "<mm> memory-merge 0|1",
};

#define ADVISE_USAGE_V3 "<mm> <vpn> <npages> mergeable|unmergeable|hugepage|nohugepage"

/*
 * advise's last token: mergeable and unmergeable in every version, hugepage
 * and nohugepage (MADV_HUGEPAGE / MADV_NOHUGEPAGE) from version 3.
 */
static int get_advice(trace_reader *r, GError **error, const struct tok *t,
		      struct trace_record *rec)
{
#define IS(str) (t->n == sizeof(str) - 1 && memcmp(t->s, str, t->n) == 0)
	rec->mergeable = false;
	rec->thp_advice = 0;
	if (IS("mergeable")) {
		rec->mergeable = true;
		return 0;
	}
	if (IS("unmergeable"))
		return 0;
	if (IS("hugepage") || IS("nohugepage")) {
		if (r->version < 3)
			return TOKFAIL(r, error, "advise %s needs header 'ksmtrace 3' (this file is "
				       "version %d)", t, r->version);
		rec->thp_advice = t->s[0] == 'h' ? TRACE_ADVICE_HUGEPAGE : TRACE_ADVICE_NOHUGEPAGE;
		return 0;
	}
#undef IS
	if (r->version >= 3)
		return TOKFAIL(r, error, "expected mergeable, unmergeable, hugepage or nohugepage, "
			       "got '%s'", t);
	return TOKFAIL(r, error, "expected mergeable or unmergeable, got '%s'", t);
}

static const uint8_t verb_nargs[TRACE_NR_VERBS] = {
	[TRACE_SPAWN] = 1, [TRACE_MAP] = 3, [TRACE_ADVISE] = 4, [TRACE_WRITE] = 3,
	[TRACE_FILL] = 4, [TRACE_FILLSEQ] = 4, [TRACE_UNMAP] = 3, [TRACE_EXIT] = 1,
	[TRACE_SET] = 2, [TRACE_SETTLE] = 1, [TRACE_MARK] = 1, [TRACE_FORK] = 2,
	[TRACE_PRCTL] = 3,
};

static int verb_lookup(const struct tok *t)
{
	/* the common verbs first */
	static const uint8_t order[TRACE_NR_VERBS] = {
		TRACE_WRITE, TRACE_FILL, TRACE_FILLSEQ, TRACE_MAP, TRACE_UNMAP, TRACE_ADVISE,
		TRACE_SPAWN, TRACE_EXIT, TRACE_SET, TRACE_SETTLE, TRACE_MARK, TRACE_FORK,
		TRACE_PRCTL,
	};

	for (int i = 0; i < TRACE_NR_VERBS; i++) {
		const char *name = verb_names[order[i]];

		if (name[0] == t->s[0] && strncmp(name, t->s, t->n) == 0 && name[t->n] == 0)
			return order[i];
	}
	return -1;
}

/* Byte classes for the line scan. */
enum { C_TOK, C_SEP, C_HASH, C_CR, C_NUL, C_HIGH };
static const uint8_t byte_class[256] = {
	[' '] = C_SEP, ['\t'] = C_SEP, ['#'] = C_HASH, ['\r'] = C_CR, [0] = C_NUL,
	[0x80 ... 0xff] = C_HIGH,
};

/* "blob <id> <hex>" (v2): a definition, not a record; ids count up from 0. */
static int text_blob(trace_reader *r, const struct tok *t, int nt, GError **error)
{
	char *why = NULL;
	uint64_t id;
	uint8_t *b;

	if (nt != 3)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": blob takes 2 arguments (<id> "
				   "<hex of 4096 bytes>), got %d", r->line, nt - 1);
	if (get_num(r, error, &t[1], "blob id", &id))
		return -1;
	if (id != r->blobs.n)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": blob id %" G_GUINT64_FORMAT
				   " out of order (the next blob is %" G_GUINT64_FORMAT ")",
				   r->line, id, r->blobs.n);
	if (t[2].n != 2 * TRACE_PAGE_SIZE)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": blob %" G_GUINT64_FORMAT
				   " has %zu hex digits (8192 expected: 4096 bytes)", r->line, id,
				   t[2].n);
	b = blob_store_new(&r->blobs, &why);
	if (!b) {
		int rc = reader_fail(r, error, ":%" G_GUINT64_FORMAT ": %s", r->line, why);

		g_free(why);
		return rc;
	}
	for (size_t i = 0; i < TRACE_PAGE_SIZE; i++) {
		int hi = hexval(t[2].s[2 * i]), lo = hexval(t[2].s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			blob_store_drop_last(&r->blobs);
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": bad hex in blob %"
					   G_GUINT64_FORMAT " at byte %zu", r->line, id, i);
		}
		b[i] = hi << 4 | lo;
	}
	return 0;
}

#define GEN_LINE "# ksmsim gen:"

/* The first gen line of the preamble (between the header and the first record). */
static void note_gen_line(trace_reader *r, const char *comment, size_t n)
{
	size_t len = strlen(GEN_LINE);

	if (!r->header || r->in_records || r->gen_facts || n < len ||
	    memcmp(comment, GEN_LINE, len) != 0)
		return;
	char *rest = g_strndup(comment + len, n - len);

	r->gen_facts = g_strsplit_set(rest, " \t", -1);
	g_free(rest);
}

const char *trace_reader_gen_fact(const trace_reader *r, const char *key)
{
	size_t len = strlen(key);

	for (char **w = r->gen_facts; w && *w; w++)
		if (strncmp(*w, key, len) == 0 && (*w)[len] == '=')
			return *w + len + 1;
	return NULL;
}

/*
 * The tokens of one line: the first TOK_MAX of those before a '#' (no valid
 * line has more; nt counts them all, so that an argument count can be named),
 * and where they stop.
 */
struct line_toks {
	struct tok t[TOK_MAX];
	int nt;
	size_t stop;	/* the '#', CR or NUL that ended them, or n */
};

/*
 * Splits s (n bytes, no newline) into tokens and checks every byte of the
 * line, comment included: no carriage return, no NUL, valid UTF-8. Bytes
 * of 0x80 and above only mark the line for the UTF-8 check, which ASCII
 * lines (nearly all) skip. Returns 0, or -1 with the error set.
 */
static inline int text_scan(trace_reader *r, const char *s, size_t n, struct line_toks *l,
			    GError **error)
{
	bool high = false;
	size_t i = 0;

	l->nt = 0;
	/* Tokens up to a '#'. */
	while (i < n) {
		uint8_t cl = byte_class[(uint8_t)s[i]];

		if (cl == C_TOK || cl == C_HIGH) {
			size_t st = i;

			for (; i < n; i++) {
				cl = byte_class[(uint8_t)s[i]];
				if (cl == C_HIGH)
					high = true;
				else if (cl != C_TOK)
					break;
			}
			if (l->nt < TOK_MAX)
				l->t[l->nt] = (struct tok){ s + st, i - st };
			l->nt++;
			continue;
		}
		if (cl == C_SEP) {
			i++;
			continue;
		}
		break;	/* '#', CR or NUL: the loop below looks at the rest */
	}
	l->stop = i;
	for (; i < n; i++) {
		uint8_t cl = byte_class[(uint8_t)s[i]];

		if (cl == C_CR)
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": carriage return in line",
					   r->line);
		if (cl == C_NUL)
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": NUL byte in line", r->line);
		if (cl == C_HIGH)
			high = true;
	}
	if (high && !g_utf8_validate_len(s, n, NULL))
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": invalid UTF-8", r->line);
	return 0;
}

/* The header line, "ksmtrace <version>": the version it names, or -1. */
static int text_header(trace_reader *r, const struct tok *t, int nt, GError **error)
{
	bool known = nt >= 2 && t[1].n == 1 && t[1].s[0] >= '0' + TRACE_VERSION_MIN &&
		     t[1].s[0] <= '0' + TRACE_VERSION_MAX;

	if (nt == 2 && t[0].n == 8 && memcmp(t[0].s, "ksmtrace", 8) == 0 && !known)
		return TOKFAIL(r, error, "unsupported trace version '%s' (expected header "
			       "'ksmtrace 1' to 'ksmtrace 4')", &t[1]);
	if (nt != 2 || t[0].n != 8 || memcmp(t[0].s, "ksmtrace", 8) != 0 || !known)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": expected header 'ksmtrace 1'",
				   r->line);
	return t[1].s[0] - '0';
}

/*
 * A record's first two tokens, "<t_us> <verb>", into rec->t_us; then that
 * the file's version has the verb and that the argument count is the verb's
 * (spawn's node= is optional). Returns the verb, or -1 with the error set.
 */
static inline int text_verb(trace_reader *r, const struct tok *t, int nt,
			    struct trace_record *rec, GError **error)
{
	int rc = parse_dec(t[0].s, t[0].n, &rec->t_us), verb;

	if (rc == -2)
		return TOKFAIL(r, error, "time '%s' does not fit in 64 bits", &t[0]);
	if (rc)
		return TOKFAIL(r, error, "bad time '%s' (unsigned decimal microseconds expected)",
			       &t[0]);
	if (nt < 2)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": missing verb after the time",
				   r->line);
	verb = verb_lookup(&t[1]);
	if (verb < 0)
		return TOKFAIL(r, error, "unknown verb '%s'", &t[1]);
	if ((verb == TRACE_FORK || verb == TRACE_PRCTL) && r->version < 3)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": %s needs header 'ksmtrace 3' "
				   "(this file is version %d)", r->line, verb_names[verb], r->version);
	if (nt - 2 != verb_nargs[verb] && !(verb == TRACE_SPAWN && nt == 4)) {
		const char *usage = verb_usage[verb];

		if (verb == TRACE_SPAWN)
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": spawn takes 1 or 2 "
					   "arguments (%s), got %d", r->line, usage, nt - 2);
		if (verb == TRACE_ADVISE && r->version >= 3)
			usage = ADVISE_USAGE_V3;
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": %s takes %d argument%s (%s), "
				   "got %d", r->line, verb_names[verb], verb_nargs[verb],
				   verb_nargs[verb] == 1 ? "" : "s", usage, nt - 2);
	}
	return verb;
}

/* spawn's optional "node=<n>": decimal only, at most TRACE_NODE_MAX. */
static int get_node(trace_reader *r, GError **error, const struct tok *t,
		    struct trace_record *rec)
{
	uint64_t node;
	int rc;

	if (t->n < 5 || memcmp(t->s, "node=", 5) != 0)
		return TOKFAIL(r, error, "expected node=<n>, got '%s'", t);
	rc = parse_dec(t->s + 5, t->n - 5, &node);
	if (rc)
		return num_fail(r, error, rc, "node", t->s + 5, t->n - 5);
	if (node > TRACE_NODE_MAX)
		return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": node %" G_GUINT64_FORMAT
				   " is out of range (0..%d)", r->line, node, TRACE_NODE_MAX);
	rec->node = node;
	return 0;
}

/*
 * set's "<knob> <value>": a knob of knob_table; advisor_mode takes a word,
 * every other knob a number (whose range trace_record_validate checks).
 */
static int get_knob(trace_reader *r, GError **error, const struct tok *t,
		    struct trace_record *rec)
{
	char name[64];
	int knob = -1;

	if (t[0].n < sizeof(name)) {
		memcpy(name, t[0].s, t[0].n);
		name[t[0].n] = 0;
		knob = knob_lookup(name);
	}
	if (knob < 0)
		return TOKFAIL(r, error, "unknown knob '%s'", &t[0]);
	rec->knob = knob;
	if (knob != KNOB_ADVISOR_MODE)
		return get_num(r, error, &t[1], "value", &rec->value);
	if (t[1].n == 4 && memcmp(t[1].s, "none", 4) == 0)
		rec->value = ADVISOR_NONE;
	else if (t[1].n == 9 && memcmp(t[1].s, "scan-time", 9) == 0)
		rec->value = ADVISOR_SCAN_TIME;
	else
		return TOKFAIL(r, error, "bad value '%s' for advisor_mode (none or scan-time)", &t[1]);
	return 0;
}

/* prctl's "<mm> memory-merge 0|1" (v3). */
static int get_prctl(trace_reader *r, GError **error, const struct tok *t,
		     struct trace_record *rec)
{
	if (get_name(r, error, &t[0], "mm", rec->mm))
		return -1;
	if (t[1].n != 12 || memcmp(t[1].s, "memory-merge", 12) != 0)
		return TOKFAIL(r, error, "unknown prctl option '%s' (the only option is "
			       "memory-merge)", &t[1]);
	if (t[2].n != 1 || (t[2].s[0] != '0' && t[2].s[0] != '1'))
		return TOKFAIL(r, error, "bad memory-merge value '%s' (0 or 1)", &t[2]);
	rec->value = t[2].s[0] - '0';
	return 0;
}

/*
 * A record's arguments (a = the tokens after the verb, as many as the verb
 * takes: text_verb counted them) into rec, each field parsed and range-checked
 * on its own, left to right, so that the first bad token is the one named.
 * What needs several fields or earlier records (mapped pages, live mms, knob
 * ranges) is the checker's, after this.
 */
static inline int text_args(trace_reader *r, const struct tok *a, int na, int verb,
			    struct trace_record *rec, GError **error)
{
	switch (verb) {
	case TRACE_SPAWN:
		if (get_name(r, error, &a[0], "mm", rec->mm))
			return -1;
		rec->node = 0;
		return na == 2 ? get_node(r, error, &a[1], rec) : 0;
	case TRACE_MAP:
	case TRACE_UNMAP:
		if (get_name(r, error, &a[0], "mm", rec->mm) || get_range(r, error, &a[1], rec))
			return -1;
		return 0;
	case TRACE_ADVISE:
		if (get_name(r, error, &a[0], "mm", rec->mm) || get_range(r, error, &a[1], rec))
			return -1;
		return get_advice(r, error, &a[3], rec);
	case TRACE_WRITE:
		if (get_name(r, error, &a[0], "mm", rec->mm) ||
		    get_num(r, error, &a[1], "vpn", &rec->vpn))
			return -1;
		if (rec->vpn >= TRACE_VPN_LIMIT)
			return TOKFAIL(r, error, "vpn %s is beyond 2^32 pages", &a[1]);
		return get_content(r, error, &a[2], &rec->content);
	case TRACE_FILL:
		if (get_name(r, error, &a[0], "mm", rec->mm) || get_range(r, error, &a[1], rec) ||
		    get_content(r, error, &a[3], &rec->content))
			return -1;
		return 0;
	case TRACE_FILLSEQ:
		if (get_name(r, error, &a[0], "mm", rec->mm) || get_range(r, error, &a[1], rec) ||
		    get_num(r, error, &a[3], "seed", &rec->seed))
			return -1;
		return 0;
	case TRACE_EXIT:
		return get_name(r, error, &a[0], "mm", rec->mm);
	case TRACE_SET:
		return get_knob(r, error, a, rec);
	case TRACE_SETTLE:
		return get_num(r, error, &a[0], "settle count", &rec->value);
	case TRACE_MARK:
		return get_name(r, error, &a[0], "label", rec->label);
	case TRACE_FORK:
		if (get_name(r, error, &a[0], "parent mm", rec->mm) ||
		    get_name(r, error, &a[1], "child mm", rec->child))
			return -1;
		return 0;
	case TRACE_PRCTL:
		return get_prctl(r, error, a, rec);
	}
	return 0;
}

/*
 * Parses one line (without its newline) into rec. Returns 1 for a record, 0
 * for a blank, comment, header or (v2) blob line, -1 on error.
 *
 * The grammar (FORMAT.md, "Text form"), in the order of the checks: every
 * byte of the line is valid (text_scan); a line of no tokens is a comment
 * (the preamble's first "# ksmsim gen:" is kept); the first other line is the
 * header; from version 2 a line whose first token is "blob" defines a blob;
 * any other is "<t_us> <verb> <args>" (text_verb, text_args). The record then
 * goes through the checks both forms share, trace_record_validate and
 * trace_check_apply, whose problems are placed at this line.
 *
 * Errors name the first problem from the left, so that a user fixes a line
 * in one go; the order of the steps is part of the format's error table
 * (tests/traces).
 */
static int text_line(trace_reader *r, const char *s, size_t n, struct trace_record *rec,
		     GError **error)
{
	struct line_toks l;
	char *problem;
	int verb;

	if (text_scan(r, s, n, &l, error))
		return -1;
	if (l.nt == 0) {
		note_gen_line(r, s + l.stop, n - l.stop);
		return 0;
	}
	if (!r->header) {
		int version = text_header(r, l.t, l.nt, error);

		if (version < 0)
			return -1;
		r->header = true;
		r->version = version;
		return 0;
	}
	if (r->version >= 2 && l.t[0].n == 4 && memcmp(l.t[0].s, "blob", 4) == 0)
		return text_blob(r, l.t, l.nt, error);

	verb = text_verb(r, l.t, l.nt, rec, error);
	if (verb < 0)
		return -1;
	rec->verb = verb;
	rec->line = r->line;
	rec->npages = 1;
	if (text_args(r, l.t + 2, l.nt - 2, verb, rec, error))
		return -1;
	problem = trace_record_validate(rec);
	if (!problem)
		problem = trace_check_apply(r->ck, rec, NULL, NULL);
	if (problem)
		return line_fail(r, error, problem);
	return 1;
}

/*
 * Hands text_line one line at a time, refilling the input when no newline is
 * left in it, and counts lines.
 */
int reader_text_next(trace_reader *r, struct trace_record *rec, GError **error, bool header_only)
{
	for (;;) {
		uint8_t *s = r->in + r->in_pos, *nl;
		size_t avail = r->in_len - r->in_pos;
		int rc;

		nl = memchr(s, '\n', avail);
		/* The longest valid line (a blob's 8192 hex digits) is far shorter. */
		if ((nl ? (size_t)(nl - s) : avail) > TRACE_LINE_MAX)
			return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": line longer than %u "
					   "bytes", r->line + 1, TRACE_LINE_MAX);
		if (!nl && !r->in_eof) {
			if (reader_fill(r, error) < 0)
				return -1;
			continue;
		}
		if (!nl && avail == 0) {
			if (!r->header)
				return reader_fail(r, error, ":%" G_GUINT64_FORMAT ": expected header "
						   "'ksmtrace 1', found the end of the file", r->line + 1);
			r->done = true;
			return 0;
		}
		r->line++;
		if (!nl)
			nl = s + avail;	/* last line without a newline */
		r->in_pos += nl - s + (nl < s + avail);
		rc = text_line(r, (const char *)s, nl - s, rec, error);
		if (rc == 1)
			r->in_records = true;
		if (rc)
			return rc;
		if (header_only && r->header)
			return 0;
	}
}
