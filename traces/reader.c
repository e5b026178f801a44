// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace readers (reader.h). The file is read through zlib's gz layer, which
 * passes plain bytes through and gunzips gzip members, so text, .gz text and
 * binary (even gzipped binary) share one input path; the first byte of what
 * comes out picks the parser. Both parsers hand their records to the shared
 * checker (check.c), so they accept exactly the same traces.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "traces/binary.h"
#include "traces/check.h"
#include "traces/reader.h"

#define IN_CHUNK (256 * 1024)
#define OUT_CHUNK (256 * 1024)

enum reader_form { FORM_TEXT, FORM_BINARY };

struct trace_reader {
	char *path;
	int fd;
	gzFile gz;
	uint64_t size;
	enum reader_form form;
	struct trace_check *ck;
	bool failed;		/* an error was returned: stay failed */
	bool done;
	int version;		/* 0 until the header has been read */

	/* v2 blobs, BLOB_SLAB to a slab so that growing never copies them */
	GPtrArray *slabs;
	uint64_t nblobs;

	/* Bytes out of the gz layer: [in_pos, in_len) not consumed yet. */
	uint8_t *in;
	size_t in_cap, in_pos, in_len;
	bool in_eof;

	/* text */
	uint64_t line;
	bool header;
	bool in_records;	/* a record was read: the preamble is over */
	char **gen_facts;	/* "key=value" words of the gen line, NULL if none */

	/* binary: inflated records in [out_pos, out_len); out_base is out[0]'s offset */
	z_stream zs;
	bool zs_live, zs_end;
	uint8_t *out;
	size_t out_pos, out_len;
	uint64_t out_base;
	uint64_t nrec;
	uint64_t t_us, prev_vpn;
	struct check_mm **slots;	/* slot -> live mm, NULL when free */
	uint32_t nslots, slots_cap;
	uint32_t *free_slots;		/* freed slots, reused last-freed first */
	uint32_t nfree;
};

G_DEFINE_QUARK(trace-error-quark, trace_error)

#define BLOB_SLAB 256

static uint8_t *blob_bytes(const trace_reader *r, uint64_t id)
{
	return (uint8_t *)r->slabs->pdata[id / BLOB_SLAB] + (id % BLOB_SLAB) * TRACE_PAGE_SIZE;
}

/* Room for the next blob; its id is the number defined before it. */
static uint8_t *blob_new(trace_reader *r)
{
	if (r->nblobs % BLOB_SLAB == 0)
		g_ptr_array_add(r->slabs, g_malloc((size_t)BLOB_SLAB * TRACE_PAGE_SIZE));
	return blob_bytes(r, r->nblobs++);
}

uint64_t trace_reader_blobs(const trace_reader *r)
{
	return r->nblobs;
}

static int fail(trace_reader *r, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Sets "PATH<fmt>" and makes every later call fail too. */
static int fail(trace_reader *r, GError **error, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s%s", r->path, msg);
	g_free(msg);
	r->failed = true;
	return -1;
}

/*
 * A failure of the gzip layer, placed like every other error: the text line
 * being read, or the offset in the binary stream (header: in the file).
 */
static int in_fail(trace_reader *r, GError **error, const char *problem)
{
	if (r->form == FORM_BINARY)
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: offset %" G_GUINT64_FORMAT
			    ": cannot read: %s", r->path,
			    r->zs_live ? r->out_base + r->out_len : (uint64_t)r->in_len, problem);
	else
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s:%" G_GUINT64_FORMAT
			    ": cannot read: %s", r->path, r->line + 1, problem);
	r->failed = true;
	return -1;
}

/* Reads more of the input after [in_pos, in_len), growing the buffer if full. */
static int in_fill(trace_reader *r, GError **error)
{
	size_t rem = r->in_len - r->in_pos;
	int n;

	if (r->in_pos) {
		memmove(r->in, r->in + r->in_pos, rem);
		r->in_pos = 0;
		r->in_len = rem;
	}
	/* Grows only for a line longer than the buffer. */
	if (r->in_cap - r->in_len < IN_CHUNK / 4) {
		r->in_cap = MAX(2 * r->in_cap, r->in_len + IN_CHUNK);
		r->in = g_realloc(r->in, r->in_cap);
	}
	n = gzread(r->gz, r->in + r->in_len, MIN(r->in_cap - r->in_len, (size_t)INT_MAX / 2));
	if (n < 0) {
		int err;
		const char *msg = gzerror(r->gz, &err);

		return in_fail(r, error, err == Z_ERRNO ? g_strerror(errno) : msg);
	}
	if (n == 0) {
		int err;
		const char *msg = gzerror(r->gz, &err);

		/* zlib reports a cut gzip member only here, as Z_BUF_ERROR */
		if (err != Z_OK)
			return in_fail(r, error, err == Z_BUF_ERROR ? "truncated gzip data" : msg);
		r->in_eof = true;
	}
	r->in_len += n;
	return n;
}

const char *trace_reader_path(const trace_reader *r)
{
	return r->path;
}

uint64_t trace_reader_offset(const trace_reader *r)
{
	long off = r->gz ? gzoffset(r->gz) : 0;

	return off > 0 ? (uint64_t)off : 0;
}

uint64_t trace_reader_size(const trace_reader *r)
{
	return r->size;
}

struct trace_check *trace_reader_check(trace_reader *r)
{
	return r->ck;
}

void trace_reader_free(trace_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose_r(r->gz);	/* closes fd */
	else if (r->fd >= 0)
		close(r->fd);
	if (r->zs_live)
		inflateEnd(&r->zs);
	trace_check_free(r->ck);
	if (r->slabs)
		g_ptr_array_free(r->slabs, TRUE);
	g_free(r->slots);
	g_free(r->free_slots);
	g_free(r->in);
	g_free(r->out);
	g_free(r->path);
	g_strfreev(r->gen_facts);
	g_free(r);
}

trace_reader *trace_reader_open(const char *path, GError **error)
{
	trace_reader *r = g_new0(trace_reader, 1);
	struct stat st;

	r->path = g_strdup(path);
	r->fd = -1;
	if (strcmp(path, "-") == 0) {
		r->fd = dup(STDIN_FILENO);
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (r->fd < 0) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path,
			    g_strerror(errno));
		trace_reader_free(r);
		return NULL;
	}
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode))
		r->size = st.st_size;
	if (fstat(r->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path,
			    g_strerror(EISDIR));
		trace_reader_free(r);
		return NULL;
	}
	r->gz = gzdopen(r->fd, "rb");
	if (!r->gz) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: out of memory", path);
		trace_reader_free(r);
		return NULL;
	}
	/* smaller than our reads, so that zlib reads plain files straight into ours */
	gzbuffer(r->gz, IN_CHUNK / 4);
	r->ck = trace_check_new();
	r->slabs = g_ptr_array_new_with_free_func(g_free);
	/* The first byte decides: text never starts with 0x89 (invalid UTF-8). */
	if (in_fill(r, error) < 0) {
		trace_reader_free(r);
		return NULL;
	}
	r->form = r->in_len > 0 && r->in[0] == (uint8_t)BIN_MAGIC[0] ? FORM_BINARY : FORM_TEXT;
	return r;
}

/* ---------------------------------------------------------------- text */

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
	int __rc = fail(r, error, ":%" G_GUINT64_FORMAT ": " fmt, (r)->line, __ts, ##__VA_ARGS__); \
	g_free(__ts);								\
	__rc;									\
})

static int line_fail(trace_reader *r, GError **error, char *problem)
{
	int rc = fail(r, error, ":%" G_GUINT64_FORMAT ": %s", r->line, problem);

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
		fail(r, error, ":%" G_GUINT64_FORMAT ": %s '%s' does not fit in 64 bits", r->line, what, ts);
	else
		fail(r, error, ":%" G_GUINT64_FORMAT ": bad %s '%s'", r->line, what, ts);
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

		fail(r, error, ":%" G_GUINT64_FORMAT ": bad %s name '%s' (1-64 characters of "
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
		return fail(r, error, ":%" G_GUINT64_FORMAT ": npages must be at least 1", r->line);
	if (rec->vpn >= TRACE_VPN_LIMIT || rec->npages > TRACE_VPN_LIMIT - rec->vpn) {
		char *a = tokstr(&t[0]), *b = tokstr(&t[1]);
		int rc = fail(r, error, ":%" G_GUINT64_FORMAT ": vpn %s + npages %s is beyond 2^32 pages",
			      r->line, a, b);

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

static int get_content(trace_reader *r, GError **error, const struct tok *t,
		       struct trace_content *c)
{
	struct tok p[4];
	int k = split_colon(t->s, t->n, p, 4);
	uint64_t a, b;
	int rc;

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
			return fail(r, error, ":%" G_GUINT64_FORMAT ": word index %" G_GUINT64_FORMAT
				    " is out of range (0..511)", r->line, a);
		c->form = CONTENT_WORD;
		c->off = a;
		c->len = 8;
		return 0;
	}
	if ((IS("patch") && k == 4) || (IS("bytes") && k == 3)) {
		bool patch = p[0].n == 5 && p[0].s[4] == 'h';

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
			return fail(r, error, ":%" G_GUINT64_FORMAT ": patch length must be at least 1",
				    r->line);
		if (a >= TRACE_PAGE_SIZE || b > TRACE_PAGE_SIZE - a)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": offset %" G_GUINT64_FORMAT
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
	if (IS("blob") && k == 2 && r->version >= 2) {
		if (get_num(r, error, &p[1], "blob id", &a))
			return -1;
		if (a >= r->nblobs)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": blob %" G_GUINT64_FORMAT
				    " is not defined (%" G_GUINT64_FORMAT " defined so far)",
				    r->line, a, r->nblobs);
		c->form = CONTENT_BLOB;
		c->value = a;
		c->off = 0;
		c->len = TRACE_PAGE_SIZE;
		memcpy(c->data, blob_bytes(r, a), TRACE_PAGE_SIZE);
		return 0;
	}
#undef IS
	if (r->version >= 2)
		return TOKFAIL(r, error, "bad content '%s' (zero, byte:HH, rand:SEED, word:I:VALUE, "
			       "patch:OFF:LEN:SEED, bytes:OFF:HEX or blob:ID)", t);
	rc = TOKFAIL(r, error, "bad content '%s' (zero, byte:HH, rand:SEED, word:I:VALUE, "
		     "patch:OFF:LEN:SEED or bytes:OFF:HEX)", t);
	return rc;
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
	uint64_t id;
	uint8_t *b;

	if (nt != 3)
		return fail(r, error, ":%" G_GUINT64_FORMAT ": blob takes 2 arguments (<id> <hex of "
			    "4096 bytes>), got %d", r->line, nt - 1);
	if (get_num(r, error, &t[1], "blob id", &id))
		return -1;
	if (id != r->nblobs)
		return fail(r, error, ":%" G_GUINT64_FORMAT ": blob id %" G_GUINT64_FORMAT
			    " out of order (the next blob is %" G_GUINT64_FORMAT ")",
			    r->line, id, r->nblobs);
	if (t[2].n != 2 * TRACE_PAGE_SIZE)
		return fail(r, error, ":%" G_GUINT64_FORMAT ": blob %" G_GUINT64_FORMAT
			    " has %zu hex digits (8192 expected: 4096 bytes)", r->line, id, t[2].n);
	b = blob_new(r);
	for (size_t i = 0; i < TRACE_PAGE_SIZE; i++) {
		int hi = hexval(t[2].s[2 * i]), lo = hexval(t[2].s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			r->nblobs--;
			return fail(r, error, ":%" G_GUINT64_FORMAT ": bad hex in blob %"
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
 * Parses one line (without its newline) into rec. Returns 1 for a record, 0
 * for a blank, comment or header line, -1 on error.
 */
static int text_line(trace_reader *r, const char *s, size_t n, struct trace_record *rec,
		     GError **error)
{
	struct tok t[TOK_MAX];
	int nt = 0, verb;
	bool high = false;
	size_t i = 0, stop;
	char *problem;

	/* Tokens up to a '#'; every byte of the line is checked. */
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
			if (nt < TOK_MAX)
				t[nt] = (struct tok){ s + st, i - st };
			nt++;
			continue;
		}
		if (cl == C_SEP) {
			i++;
			continue;
		}
		break;	/* '#', CR or NUL: the loop below looks at the rest */
	}
	stop = i;
	for (; i < n; i++) {
		uint8_t cl = byte_class[(uint8_t)s[i]];

		if (cl == C_CR)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": carriage return in line",
				    r->line);
		if (cl == C_NUL)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": NUL byte in line", r->line);
		if (cl == C_HIGH)
			high = true;
	}
	if (high && !g_utf8_validate_len(s, n, NULL))
		return fail(r, error, ":%" G_GUINT64_FORMAT ": invalid UTF-8", r->line);
	if (nt == 0) {
		note_gen_line(r, s + stop, n - stop);
		return 0;
	}

	if (!r->header) {
		bool known = nt >= 2 && t[1].n == 1 && t[1].s[0] >= '0' + TRACE_VERSION_MIN &&
			     t[1].s[0] <= '0' + TRACE_VERSION_MAX;

		if (nt == 2 && t[0].n == 8 && memcmp(t[0].s, "ksmtrace", 8) == 0 && !known)
			return TOKFAIL(r, error, "unsupported trace version '%s' (expected header "
				       "'ksmtrace 1', 'ksmtrace 2' or 'ksmtrace 3')", &t[1]);
		if (nt != 2 || t[0].n != 8 || memcmp(t[0].s, "ksmtrace", 8) != 0 || !known)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": expected header 'ksmtrace 1'",
				    r->line);
		r->header = true;
		r->version = t[1].s[0] - '0';
		return 0;
	}
	if (r->version >= 2 && t[0].n == 4 && memcmp(t[0].s, "blob", 4) == 0)
		return text_blob(r, t, nt, error);

	{
		int rc = parse_dec(t[0].s, t[0].n, &rec->t_us);

		if (rc == -2)
			return TOKFAIL(r, error, "time '%s' does not fit in 64 bits", &t[0]);
		if (rc)
			return TOKFAIL(r, error, "bad time '%s' (unsigned decimal microseconds expected)",
				       &t[0]);
	}
	if (nt < 2)
		return fail(r, error, ":%" G_GUINT64_FORMAT ": missing verb after the time", r->line);
	verb = verb_lookup(&t[1]);
	if (verb < 0)
		return TOKFAIL(r, error, "unknown verb '%s'", &t[1]);
	if ((verb == TRACE_FORK || verb == TRACE_PRCTL) && r->version < 3)
		return fail(r, error, ":%" G_GUINT64_FORMAT ": %s needs header 'ksmtrace 3' (this "
			    "file is version %d)", r->line, verb_names[verb], r->version);
	if (nt - 2 != verb_nargs[verb] && !(verb == TRACE_SPAWN && nt == 4)) {
		const char *usage = verb_usage[verb];

		if (verb == TRACE_SPAWN)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": spawn takes 1 or 2 arguments (%s), got %d",
				    r->line, usage, nt - 2);
		if (verb == TRACE_ADVISE && r->version >= 3)
			usage = ADVISE_USAGE_V3;
		return fail(r, error, ":%" G_GUINT64_FORMAT ": %s takes %d argument%s (%s), got %d",
			    r->line, verb_names[verb], verb_nargs[verb],
			    verb_nargs[verb] == 1 ? "" : "s", usage, nt - 2);
	}
	rec->verb = verb;
	rec->line = r->line;
	rec->npages = 1;

	switch (verb) {
	case TRACE_SPAWN:
		if (get_name(r, error, &t[2], "mm", rec->mm))
			return -1;
		rec->node = 0;
		if (nt == 4) {
			uint64_t node;
			int rc;

			if (t[3].n < 5 || memcmp(t[3].s, "node=", 5) != 0)
				return TOKFAIL(r, error, "expected node=<n>, got '%s'", &t[3]);
			rc = parse_dec(t[3].s + 5, t[3].n - 5, &node);
			if (rc)
				return num_fail(r, error, rc, "node", t[3].s + 5, t[3].n - 5);
			if (node > TRACE_NODE_MAX)
				return fail(r, error, ":%" G_GUINT64_FORMAT ": node %" G_GUINT64_FORMAT
					    " is out of range (0..%d)", r->line, node, TRACE_NODE_MAX);
			rec->node = node;
		}
		break;
	case TRACE_MAP:
	case TRACE_UNMAP:
		if (get_name(r, error, &t[2], "mm", rec->mm) || get_range(r, error, &t[3], rec))
			return -1;
		break;
	case TRACE_ADVISE:
		if (get_name(r, error, &t[2], "mm", rec->mm) || get_range(r, error, &t[3], rec))
			return -1;
		if (get_advice(r, error, &t[5], rec))
			return -1;
		break;
	case TRACE_WRITE:
		if (get_name(r, error, &t[2], "mm", rec->mm) ||
		    get_num(r, error, &t[3], "vpn", &rec->vpn))
			return -1;
		if (rec->vpn >= TRACE_VPN_LIMIT)
			return TOKFAIL(r, error, "vpn %s is beyond 2^32 pages", &t[3]);
		if (get_content(r, error, &t[4], &rec->content))
			return -1;
		break;
	case TRACE_FILL:
		if (get_name(r, error, &t[2], "mm", rec->mm) || get_range(r, error, &t[3], rec) ||
		    get_content(r, error, &t[5], &rec->content))
			return -1;
		break;
	case TRACE_FILLSEQ:
		if (get_name(r, error, &t[2], "mm", rec->mm) || get_range(r, error, &t[3], rec) ||
		    get_num(r, error, &t[5], "seed", &rec->seed))
			return -1;
		break;
	case TRACE_EXIT:
		if (get_name(r, error, &t[2], "mm", rec->mm))
			return -1;
		break;
	case TRACE_SET: {
		char name[64];
		int knob = -1;

		if (t[2].n < sizeof(name)) {
			memcpy(name, t[2].s, t[2].n);
			name[t[2].n] = 0;
			knob = knob_lookup(name);
		}
		if (knob < 0)
			return TOKFAIL(r, error, "unknown knob '%s'", &t[2]);
		rec->knob = knob;
		if (knob == KNOB_ADVISOR_MODE) {
			if (t[3].n == 4 && memcmp(t[3].s, "none", 4) == 0)
				rec->value = ADVISOR_NONE;
			else if (t[3].n == 9 && memcmp(t[3].s, "scan-time", 9) == 0)
				rec->value = ADVISOR_SCAN_TIME;
			else
				return TOKFAIL(r, error, "bad value '%s' for advisor_mode (none or scan-time)",
					       &t[3]);
		} else if (get_num(r, error, &t[3], "value", &rec->value)) {
			return -1;
		}
		break;
	}
	case TRACE_SETTLE:
		if (get_num(r, error, &t[2], "settle count", &rec->value))
			return -1;
		break;
	case TRACE_MARK:
		if (get_name(r, error, &t[2], "label", rec->label))
			return -1;
		break;
	case TRACE_FORK:
		if (get_name(r, error, &t[2], "parent mm", rec->mm) ||
		    get_name(r, error, &t[3], "child mm", rec->child))
			return -1;
		break;
	case TRACE_PRCTL:
		if (get_name(r, error, &t[2], "mm", rec->mm))
			return -1;
		if (t[3].n != 12 || memcmp(t[3].s, "memory-merge", 12) != 0)
			return TOKFAIL(r, error, "unknown prctl option '%s' (the only option is "
				       "memory-merge)", &t[3]);
		if (t[4].n != 1 || (t[4].s[0] != '0' && t[4].s[0] != '1'))
			return TOKFAIL(r, error, "bad memory-merge value '%s' (0 or 1)", &t[4]);
		rec->value = t[4].s[0] - '0';
		break;
	}
	problem = trace_record_validate(rec);
	if (!problem)
		problem = trace_check_apply(r->ck, rec, NULL, NULL);
	if (problem)
		return line_fail(r, error, problem);
	return 1;
}

/* header_only: stop (returning 0) once the header has been read. */
static int text_next(trace_reader *r, struct trace_record *rec, GError **error, bool header_only)
{
	for (;;) {
		uint8_t *s = r->in + r->in_pos, *nl;
		size_t avail = r->in_len - r->in_pos;
		int rc;

		nl = memchr(s, '\n', avail);
		/* The longest valid line (a blob's 8192 hex digits) is far shorter. */
		if ((nl ? (size_t)(nl - s) : avail) > TRACE_LINE_MAX)
			return fail(r, error, ":%" G_GUINT64_FORMAT ": line longer than %u bytes",
				    r->line + 1, TRACE_LINE_MAX);
		if (!nl && !r->in_eof) {
			if (in_fill(r, error) < 0)
				return -1;
			continue;
		}
		if (!nl && avail == 0) {
			if (!r->header)
				return fail(r, error, ":%" G_GUINT64_FORMAT ": expected header 'ksmtrace 1', "
					    "found the end of the file", r->line + 1);
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

/* -------------------------------------------------------------- binary */

static int bin_fail_at(trace_reader *r, GError **error, uint64_t off, const char *what)
{
	return fail(r, error, ": offset %" G_GUINT64_FORMAT ": %s", off, what);
}

/* Starts inflating after the header; header offsets are file offsets. */
static int bin_start(trace_reader *r, GError **error)
{
	while (r->in_len < BIN_HEADER_LEN && !r->in_eof)
		if (in_fill(r, error) < 0)
			return -1;
	for (size_t i = 0; i < BIN_MAGIC_LEN; i++) {
		if (i >= r->in_len)
			return bin_fail_at(r, error, i, "truncated header");
		if (r->in[i] != (uint8_t)BIN_MAGIC[i])
			return bin_fail_at(r, error, i, "bad magic (not a ksmtrace binary file)");
	}
	if (r->in_len < BIN_HEADER_LEN)
		return bin_fail_at(r, error, BIN_MAGIC_LEN, "truncated header");
	if (r->in[BIN_MAGIC_LEN] < 1 || r->in[BIN_MAGIC_LEN] > BIN_VERSION_MAX) {
		char *m = g_strdup_printf("unsupported binary version %u (this reader knows 1 to %d)",
					  r->in[BIN_MAGIC_LEN], BIN_VERSION_MAX);
		int rc = bin_fail_at(r, error, BIN_MAGIC_LEN, m);

		g_free(m);
		return rc;
	}
	r->version = r->in[BIN_MAGIC_LEN];
	r->in_pos = BIN_HEADER_LEN;
	if (inflateInit(&r->zs) != Z_OK)
		return fail(r, error, ": cannot start zlib");
	r->zs_live = true;
	r->out = g_malloc(OUT_CHUNK + BIN_MAX_RECORD);
	return 0;
}

/*
 * Inflates until out holds a full chunk or the stream ends. The unread tail
 * moves to the front first; zero padding after the data lets the decoder read
 * a whole record's worth without bounds checks.
 */
static int bin_fill(trace_reader *r, GError **error)
{
	size_t rem = r->out_len - r->out_pos;

	memmove(r->out, r->out + r->out_pos, rem);
	r->out_base += r->out_pos;
	r->out_pos = 0;
	r->out_len = rem;
	while (!r->zs_end && r->out_len < OUT_CHUNK) {
		int ret;

		if (r->in_pos == r->in_len && !r->in_eof) {
			r->in_pos = r->in_len = 0;
			if (in_fill(r, error) < 0)
				return -1;
		}
		r->zs.next_in = r->in + r->in_pos;
		r->zs.avail_in = r->in_len - r->in_pos;
		r->zs.next_out = r->out + r->out_len;
		r->zs.avail_out = OUT_CHUNK - r->out_len;
		ret = inflate(&r->zs, Z_NO_FLUSH);
		r->in_pos = r->in_len - r->zs.avail_in;
		r->out_len = OUT_CHUNK - r->zs.avail_out;
		if (ret == Z_STREAM_END) {
			r->zs_end = true;
			if (r->in_pos == r->in_len && !r->in_eof) {
				r->in_pos = r->in_len = 0;
				if (in_fill(r, error) < 0)
					return -1;
			}
			if (r->in_pos < r->in_len)
				return bin_fail_at(r, error, BIN_HEADER_LEN + r->zs.total_in,
						   "trailing garbage after the compressed data");
			break;
		}
		/* Stream-level problems are placed in the file, where a user can look. */
		if (ret == Z_BUF_ERROR && r->in_eof && r->in_pos == r->in_len) {
			return bin_fail_at(r, error, BIN_HEADER_LEN + r->zs.total_in,
					   "truncated compressed data");
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			char *m = g_strdup_printf("compressed data error: %s",
						  r->zs.msg ? r->zs.msg : zError(ret));
			int rc = bin_fail_at(r, error, BIN_HEADER_LEN + r->zs.total_in, m);

			g_free(m);
			return rc;
		}
		if (ret == Z_OK && r->zs.avail_in == 0 && r->in_eof && r->zs.avail_out > 0)
			return bin_fail_at(r, error, BIN_HEADER_LEN + r->zs.total_in,
					   "truncated compressed data");
	}
	memset(r->out + r->out_len, 0, BIN_MAX_RECORD);
	return 0;
}

static uint32_t slot_take(trace_reader *r)
{
	if (r->nfree)
		return r->free_slots[--r->nfree];
	if (r->nslots == r->slots_cap) {
		/* slot numbers are uint32: the table stops doubling before it would wrap */
		if (r->slots_cap >= UINT32_MAX / 2)
			r->slots_cap = UINT32_MAX;
		else
			r->slots_cap = r->slots_cap ? r->slots_cap * 2 : 16;
		r->slots = g_renew(struct check_mm *, r->slots, r->slots_cap);
		r->free_slots = g_renew(uint32_t, r->free_slots, r->slots_cap);
	}
	r->slots[r->nslots] = NULL;
	return r->nslots++;
}

/* 1: a record; 0: the end; -1: error; 2: a blob definition was stored. */
static int bin_next(trace_reader *r, struct trace_record *rec, GError **error)
{
	const uint8_t *p, *end, *blob = NULL;
	struct check_mm *mm = NULL;
	uint64_t off, slot = 0;
	unsigned int op, kind, form;
	bool bad = false;
	const char *why = NULL;
	char *problem;

	if (r->out_len - r->out_pos < BIN_MAX_RECORD && !r->zs_end && bin_fill(r, error) < 0)
		return -1;
	p = r->out + r->out_pos;
	end = r->out + r->out_len;
	off = r->out_base + r->out_pos;
	if (p == end)
		return bin_fail_at(r, error, off, "truncated: the end record is missing");

	op = *p++;
	kind = op & BIN_OP_KIND;
	form = (op & BIN_OP_FORM) >> BIN_OP_FORM_SHIFT;
	if (op & BIN_OP_TIME) {
		uint64_t dt = bin_get_varint(&p, &bad);

		if (dt == 0)
			why = "zero time delta";
		if (dt > UINT64_MAX - r->t_us)
			why = "time beyond 64 bits";
		r->t_us += dt;
	}
	rec->t_us = r->t_us;
	rec->line = r->nrec + 1;
	if (form && kind != BIN_WRITE && kind != BIN_FILL &&
	    !((kind == BIN_ADVISE_MERGEABLE || kind == BIN_ADVISE_UNMERGEABLE) &&
	      form == BIN_ADVICE_THP && r->version >= 3))
		why = "unknown opcode";

	/* records that name a live mm by its slot (fork: the parent) */
	if ((kind >= BIN_MAP && kind <= BIN_EXIT) ||
	    ((kind == BIN_FORK || kind == BIN_PRCTL) && r->version >= 3)) {
		slot = bin_get_varint(&p, &bad);
		if (slot >= r->nslots || !(mm = r->slots[slot])) {
			if (!why && !bad && p <= end)
				why = "reference to an mm slot that is not live";
		} else if (mm->name_len < 16) {
			/* a fixed size the compiler inlines; the name is zero-padded */
			memcpy(rec->mm, mm->name, 16);
		} else {
			memcpy(rec->mm, mm->name, sizeof(rec->mm));
		}
		if (kind < BIN_EXIT) {
			r->prev_vpn += bin_unzigzag(bin_get_varint(&p, &bad));
			rec->vpn = r->prev_vpn;
		}
	}
	rec->npages = 1;

	switch (kind) {
	case BIN_END: {
		uint64_t n = bin_get_varint(&p, &bad);

		if (op != BIN_END)
			why = "unknown opcode";
		else if (!bad && p <= end && n != r->nrec)
			why = "record count in the end record does not match";
		if (why || bad || p > end)
			break;
		r->out_pos = p - r->out;
		if (r->out_pos == r->out_len && !r->zs_end && bin_fill(r, error) < 0)
			return -1;
		if (r->out_pos != r->out_len)
			return bin_fail_at(r, error, r->out_base + r->out_pos,
					   "trailing data after the end record");
		r->done = true;
		return 0;
	}
	case BIN_SPAWN: {
		unsigned int len = *p++;
		uint64_t node;

		rec->verb = TRACE_SPAWN;
		if (len < 1 || len > TRACE_NAME_MAX) {
			why = "bad name length";
			break;
		}
		memcpy(rec->mm, p, len);
		rec->mm[len] = 0;
		p += len;
		node = bin_get_varint(&p, &bad);
		rec->node = node;
		if (node > TRACE_NODE_MAX)
			why = "node out of range";
		if (!trace_name_valid(rec->mm, len))
			why = "bad mm name";
		break;
	}
	case BIN_MAP:
		rec->verb = TRACE_MAP;
		rec->npages = bin_get_varint(&p, &bad);
		break;
	case BIN_ADVISE_MERGEABLE:
	case BIN_ADVISE_UNMERGEABLE:
		rec->verb = TRACE_ADVISE;
		/* form 0 or, checked above, BIN_ADVICE_THP */
		if (form == BIN_ADVICE_THP) {
			rec->mergeable = false;
			rec->thp_advice = kind == BIN_ADVISE_MERGEABLE ? TRACE_ADVICE_HUGEPAGE :
					  TRACE_ADVICE_NOHUGEPAGE;
		} else {
			rec->mergeable = kind == BIN_ADVISE_MERGEABLE;
			rec->thp_advice = 0;
		}
		rec->npages = bin_get_varint(&p, &bad);
		break;
	case BIN_FILL:
		rec->npages = bin_get_varint(&p, &bad);
		/* fall through */
	case BIN_WRITE: {
		struct trace_content *c = &rec->content;

		rec->verb = kind == BIN_WRITE ? TRACE_WRITE : TRACE_FILL;
		c->form = form;
		switch (form) {
		case CONTENT_ZERO:
			c->value = 0;
			break;
		case CONTENT_BYTE:
			c->value = *p++;
			break;
		case CONTENT_RAND:
			c->value = bin_get_varint(&p, &bad);
			break;
		case CONTENT_WORD: {
			uint64_t i = bin_get_varint(&p, &bad);

			c->value = bin_get_varint(&p, &bad);
			if (i > 511)
				why = "word index out of range";
			c->off = i;
			c->len = 8;
			break;
		}
		case CONTENT_PATCH:
		case CONTENT_BYTES: {
			uint64_t o = bin_get_varint(&p, &bad), l = bin_get_varint(&p, &bad);

			if (l < 1 || o >= TRACE_PAGE_SIZE || l > TRACE_PAGE_SIZE - o) {
				why = "offset or length outside the page";
				break;
			}
			c->off = o;
			c->len = l;
			if (form == CONTENT_PATCH) {
				c->value = bin_get_varint(&p, &bad);
			} else {
				c->value = 0;
				memcpy(c->data, p, l);
				p += l;
			}
			break;
		}
		case CONTENT_BLOB: {
			uint64_t id = bin_get_varint(&p, &bad);

			if (r->version < 2) {
				why = "unknown content form";
				break;
			}
			if (id >= r->nblobs) {
				why = "reference to a blob that is not defined";
				break;
			}
			c->value = id;
			c->off = 0;
			c->len = TRACE_PAGE_SIZE;
			memcpy(c->data, blob_bytes(r, id), TRACE_PAGE_SIZE);
			break;
		}
		default:
			why = "unknown content form";
		}
		break;
	}
	case BIN_BLOB:
		if (op != BIN_BLOB || r->version < 2) {
			why = "unknown opcode";
			break;
		}
		blob = p;
		p += TRACE_PAGE_SIZE;
		break;
	case BIN_FILLSEQ:
		rec->verb = TRACE_FILLSEQ;
		rec->npages = bin_get_varint(&p, &bad);
		rec->seed = bin_get_varint(&p, &bad);
		break;
	case BIN_UNMAP:
		rec->verb = TRACE_UNMAP;
		rec->npages = bin_get_varint(&p, &bad);
		break;
	case BIN_EXIT:
		rec->verb = TRACE_EXIT;
		break;
	case BIN_SET:
		rec->verb = TRACE_SET;
		if (*p >= KNOB_NR)
			why = "unknown knob";
		rec->knob = *p++;
		rec->value = bin_get_varint(&p, &bad);
		break;
	case BIN_SETTLE:
		rec->verb = TRACE_SETTLE;
		rec->value = bin_get_varint(&p, &bad);
		break;
	case BIN_MARK: {
		unsigned int len = *p++;

		rec->verb = TRACE_MARK;
		if (len < 1 || len > TRACE_NAME_MAX) {
			why = "bad label length";
			break;
		}
		memcpy(rec->label, p, len);
		rec->label[len] = 0;
		p += len;
		if (!trace_name_valid(rec->label, len))
			why = "bad label";
		break;
	}
	case BIN_FORK: {
		unsigned int len;

		if (r->version < 3) {
			why = "unknown opcode";
			break;
		}
		rec->verb = TRACE_FORK;
		len = *p++;
		if (len < 1 || len > TRACE_NAME_MAX) {
			why = "bad name length";
			break;
		}
		memcpy(rec->child, p, len);
		rec->child[len] = 0;
		p += len;
		if (!trace_name_valid(rec->child, len))
			why = "bad child mm name";
		break;
	}
	case BIN_PRCTL:
		if (r->version < 3) {
			why = "unknown opcode";
			break;
		}
		/* a value other than 0 or 1 is trace_record_validate's to name */
		rec->verb = TRACE_PRCTL;
		rec->value = bin_get_varint(&p, &bad);
		break;
	default:
		why = "unknown opcode";
	}

	/* Reading past the data means the stream stopped inside this record. */
	if (p > end)
		return bin_fail_at(r, error, off, "truncated record");
	if (bad)
		return bin_fail_at(r, error, off, "bad varint");
	if (why)
		return bin_fail_at(r, error, off, why);
	if (blob) {
		memcpy(blob_new(r), blob, TRACE_PAGE_SIZE);
		r->out_pos = p - r->out;
		return 2;
	}

	/* write and fill had their content checked above: only the range is left */
	if (kind == BIN_WRITE || kind == BIN_FILL) {
		if (rec->vpn >= TRACE_VPN_LIMIT || rec->npages - 1 >= TRACE_VPN_LIMIT - rec->vpn)
			problem = trace_record_validate(rec);
		else
			problem = NULL;
	} else {
		problem = trace_record_validate(rec);
	}
	if (!problem)
		problem = trace_check_apply(r->ck, rec, mm, &mm);
	if (problem) {
		int rc = bin_fail_at(r, error, off, problem);

		g_free(problem);
		return rc;
	}
	if (kind == BIN_SPAWN || kind == BIN_FORK) {
		uint32_t s = slot_take(r);

		r->slots[s] = mm;
	} else if (kind == BIN_EXIT) {
		r->slots[slot] = NULL;
		r->free_slots[r->nfree++] = slot;
	}
	r->out_pos = p - r->out;
	r->nrec++;
	return 1;
}

int trace_reader_next(trace_reader *r, struct trace_record *rec, GError **error)
{
	if (r->failed) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: reading after an error", r->path);
		return -1;
	}
	if (r->done)
		return 0;
	if (r->form == FORM_TEXT)
		return text_next(r, rec, error, false);
	if (!r->zs_live && bin_start(r, error) < 0)
		return -1;
	for (;;) {
		int rc = bin_next(r, rec, error);

		if (rc != 2)
			return rc;
	}
}

int trace_reader_version(trace_reader *r, GError **error)
{
	if (r->version)
		return r->version;
	if (r->failed) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: reading after an error", r->path);
		return -1;
	}
	if (r->form == FORM_TEXT) {
		if (text_next(r, NULL, error, true) < 0)
			return -1;
	} else if (!r->zs_live && bin_start(r, error) < 0) {
		return -1;
	}
	return r->version;
}
