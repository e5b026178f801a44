// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace writers (writer.h): canonical text, gzip text and the binary form
 * (FORMAT.md, "Binary form"). Every record goes through the same checks as on reading
 * (check.c), so whatever a writer commits, every reader accepts.
 *
 * Canonical text: "<t_us> <verb> <args>" with single spaces; t_us, npages,
 * node, offsets, lengths, word indices, knob values and settle counts in
 * decimal; vpns, seeds, word values and rand seeds in lowercase 0x hex;
 * byte:hh and bytes:off:hex in lowercase hex digits; node=0 is left out;
 * advise ends in mergeable, unmergeable or (v3) hugepage, nohugepage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include <zlib.h>
#include "traces/binary.h"
#include "traces/check.h"
#include "traces/reader.h"
#include "traces/writer.h"
#include "util/atomic_file.h"

#define BIN_CHUNK (256 * 1024)

struct trace_writer {
	enum trace_format fmt;
	char *path;		/* as given, for messages */
	struct atomic_target out;	/* fd, and the temporary renamed on close */
	int fd;			/* out.fd until the stream owns it, then -1 */
	FILE *f;		/* text */
	gzFile gz;		/* gz text */
	GString *line;
	struct trace_check *ck;
	uint64_t nrec;
	bool failed;
	int version;

	/* v2: 128-bit hash of a page's bytes -> blob id + 1 */
	GHashTable *blob_ids;
	uint64_t nblobs, nrefs;
	struct trace_record *renum;	/* a blob record with the writer's id */

	/* binary */
	z_stream zs;
	bool zs_live;
	z_stream probe;		/* trial compression of each chunk */
	bool probe_live;
	uint8_t *scratch;
	int level;		/* of zs now */
	uint8_t *buf;		/* records not yet deflated */
	size_t len;
	uint8_t *zout;
	uint64_t t_us, prev_vpn;
	uint32_t nslots;
	uint32_t *free_slots;	/* reused last-freed first, as the reader does */
	uint32_t nfree, free_cap;
};

enum trace_format trace_format_from_path(const char *path)
{
	if (g_str_has_suffix(path, ".ksmb"))
		return TRACE_FMT_BINARY;
	if (g_str_has_suffix(path, ".gz"))
		return TRACE_FMT_TEXT_GZ;
	return TRACE_FMT_TEXT;
}

static void put_content(GString *out, const struct trace_content *c)
{
	switch (c->form) {
	case CONTENT_ZERO:
		g_string_append(out, "zero");
		break;
	case CONTENT_BYTE:
		g_string_append_printf(out, "byte:%02x", (unsigned int)(c->value & 0xff));
		break;
	case CONTENT_RAND:
		g_string_append_printf(out, "rand:0x%" G_GINT64_MODIFIER "x", c->value);
		break;
	case CONTENT_WORD:
		g_string_append_printf(out, "word:%u:0x%" G_GINT64_MODIFIER "x", c->off, c->value);
		break;
	case CONTENT_PATCH:
		g_string_append_printf(out, "patch:%u:%u:0x%" G_GINT64_MODIFIER "x",
				       c->off, c->len, c->value);
		break;
	case CONTENT_BLOB:
		g_string_append_printf(out, "blob:%" G_GUINT64_FORMAT, c->value);
		break;
	case CONTENT_BYTES: {
		static const char hex[] = "0123456789abcdef";
		uint32_t len = MIN(c->len, TRACE_PAGE_SIZE);

		g_string_append_printf(out, "bytes:%u:", c->off);
		for (uint32_t i = 0; i < len; i++) {
			g_string_append_c(out, hex[c->data[i] >> 4]);
			g_string_append_c(out, hex[c->data[i] & 15]);
		}
		break;
	}
	default:
		g_string_append(out, "?");
	}
}

void trace_record_format(const struct trace_record *rec, GString *out)
{
	const char *verb = (unsigned int)rec->verb < TRACE_NR_VERBS ? verb_names[rec->verb] : "?";

	g_string_append_printf(out, "%" G_GUINT64_FORMAT " %s", rec->t_us, verb);
	switch (rec->verb) {
	case TRACE_SPAWN:
		g_string_append_printf(out, " %s", rec->mm);
		if (rec->node)
			g_string_append_printf(out, " node=%u", rec->node);
		break;
	case TRACE_MAP:
	case TRACE_UNMAP:
	case TRACE_ADVISE:
	case TRACE_FILL:
	case TRACE_FILLSEQ:
		g_string_append_printf(out, " %s 0x%" G_GINT64_MODIFIER "x %" G_GUINT64_FORMAT,
				       rec->mm, rec->vpn, rec->npages);
		if (rec->verb == TRACE_ADVISE)
			g_string_append(out, rec->thp_advice == TRACE_ADVICE_HUGEPAGE ? " hugepage" :
					     rec->thp_advice == TRACE_ADVICE_NOHUGEPAGE ? " nohugepage" :
					     rec->thp_advice ? " ?" :
					     rec->mergeable ? " mergeable" : " unmergeable");
		if (rec->verb == TRACE_FILLSEQ)
			g_string_append_printf(out, " 0x%" G_GINT64_MODIFIER "x", rec->seed);
		if (rec->verb == TRACE_FILL) {
			g_string_append_c(out, ' ');
			put_content(out, &rec->content);
		}
		break;
	case TRACE_WRITE:
		g_string_append_printf(out, " %s 0x%" G_GINT64_MODIFIER "x ", rec->mm, rec->vpn);
		put_content(out, &rec->content);
		break;
	case TRACE_EXIT:
		g_string_append_printf(out, " %s", rec->mm);
		break;
	case TRACE_SET:
		if ((unsigned int)rec->knob >= KNOB_NR)
			g_string_append_printf(out, " ? %" G_GUINT64_FORMAT, rec->value);
		else if (rec->knob == KNOB_ADVISOR_MODE)
			g_string_append_printf(out, " %s %s", knob_table[rec->knob].name,
					       rec->value == ADVISOR_SCAN_TIME ? "scan-time" : "none");
		else
			g_string_append_printf(out, " %s %" G_GUINT64_FORMAT, knob_table[rec->knob].name,
					       rec->value);
		break;
	case TRACE_SETTLE:
		g_string_append_printf(out, " %" G_GUINT64_FORMAT, rec->value);
		break;
	case TRACE_MARK:
		g_string_append_printf(out, " %s", rec->label);
		break;
	case TRACE_FORK:
		g_string_append_printf(out, " %s %s", rec->mm, rec->child);
		break;
	case TRACE_PRCTL:
		g_string_append_printf(out, " %s memory-merge %" G_GUINT64_FORMAT, rec->mm, rec->value);
		break;
	default:
		break;
	}
}

static bool werr(trace_writer *w, GError **error, const char *what, int err)
{
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s: %s", w->path, what,
		    g_strerror(err));
	w->failed = true;
	return false;
}

static bool gz_err(trace_writer *w, GError **error)
{
	int err;
	const char *msg = gzerror(w->gz, &err);

	if (err == Z_ERRNO)
		return werr(w, error, "cannot write", errno);
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot write: %s", w->path, msg);
	w->failed = true;
	return false;
}

static bool write_all(trace_writer *w, const uint8_t *p, size_t n, GError **error)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return werr(w, error, "cannot write", errno);
		p += k;
		n -= k;
	}
	return true;
}

/* Text lines, through stdio or gz. */
static bool put_text(trace_writer *w, const char *s, size_t n, GError **error)
{
	if (w->gz) {
		if (gzwrite(w->gz, s, n) != (int)n)
			return gz_err(w, error);
		return true;
	}
	if (fwrite(s, 1, n, w->f) != n)
		return werr(w, error, "cannot write", errno);
	return true;
}

/* Writes out what deflate produced and gives it the whole buffer again. */
static bool bin_drain(trace_writer *w, GError **error)
{
	if (!write_all(w, w->zout, BIN_CHUNK - w->zs.avail_out, error))
		return false;
	w->zs.next_out = w->zout;
	w->zs.avail_out = BIN_CHUNK;
	return true;
}

/*
 * Random values (seeds, page numbers) hardly compress, and inflating such
 * data costs far more than the bytes it saves: a chunk that a quick trial
 * compression cannot shrink by BIN_MIN_SAVING goes into stored blocks
 * (deflate level 0), which inflate copies. The choice depends only on the
 * chunk's bytes, so the same records always give the same file.
 */
#define BIN_MIN_SAVING 8	/* 1/8 = 12.5 % */

static int chunk_level(trace_writer *w)
{
	uLong bound = deflateBound(&w->probe, w->len);

	deflateReset(&w->probe);
	w->probe.next_in = w->buf;
	w->probe.avail_in = w->len;
	w->probe.next_out = w->scratch;
	w->probe.avail_out = bound;
	if (deflate(&w->probe, Z_FINISH) != Z_STREAM_END)
		return Z_DEFAULT_COMPRESSION;
	return w->probe.total_out > w->len - w->len / BIN_MIN_SAVING ? 0 : Z_DEFAULT_COMPRESSION;
}

/* Deflates buf; flush ends the stream. */
static bool bin_deflate(trace_writer *w, bool flush, GError **error)
{
	int ret, level = chunk_level(w);

	if (level != w->level) {
		w->zs.next_out = w->zout;
		w->zs.avail_out = BIN_CHUNK;
		while ((ret = deflateParams(&w->zs, level, Z_DEFAULT_STRATEGY)) == Z_BUF_ERROR)
			if (!bin_drain(w, error))
				return false;
		if (ret != Z_OK) {
			g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: zlib error", w->path);
			w->failed = true;
			return false;
		}
		if (!bin_drain(w, error))
			return false;
		w->level = level;
	}
	w->zs.next_in = w->buf;
	w->zs.avail_in = w->len;
	do {
		w->zs.next_out = w->zout;
		w->zs.avail_out = BIN_CHUNK;
		ret = deflate(&w->zs, flush ? Z_FINISH : Z_NO_FLUSH);
		if (ret == Z_STREAM_ERROR) {
			g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: zlib error", w->path);
			w->failed = true;
			return false;
		}
		if (!write_all(w, w->zout, BIN_CHUNK - w->zs.avail_out, error))
			return false;
	} while (w->zs.avail_out == 0 || (flush && ret != Z_STREAM_END));
	w->len = 0;
	return true;
}

static guint blob_key_hash(gconstpointer p)
{
	return *(const guint *)p;
}

static gboolean blob_key_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, sizeof(XXH128_hash_t)) == 0;
}

trace_writer *trace_writer_open(const char *path, enum trace_format fmt, GError **error)
{
	return trace_writer_open_version(path, fmt, 1, error);
}

uint64_t trace_writer_blobs(const trace_writer *w)
{
	return w->nblobs;
}

uint64_t trace_writer_blob_refs(const trace_writer *w)
{
	return w->nrefs;
}

trace_writer *trace_writer_open_version(const char *path, enum trace_format fmt, int version,
					GError **error)
{
	trace_writer *w;
	char header[16];

	if (version < TRACE_VERSION_MIN || version > TRACE_VERSION_MAX) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: unknown trace version %d",
			    path, version);
		return NULL;
	}
	w = g_new0(trace_writer, 1);
	w->version = version;
	w->fmt = fmt;
	w->path = g_strdup(path);
	w->fd = -1;
	{
		GError *err = NULL;

		if (!atomic_target_open(&w->out, path, &err)) {
			g_set_error_literal(error, TRACE_ERROR, TRACE_ERROR_IO, err->message);
			g_error_free(err);
			goto out_free;
		}
		w->fd = w->out.fd;
	}
	w->ck = trace_check_new();
	w->line = g_string_sized_new(128);
	switch (fmt) {
	case TRACE_FMT_TEXT:
		w->f = fdopen(w->fd, "w");
		if (!w->f) {
			werr(w, error, "cannot write", errno);
			goto out_abort;
		}
		setvbuf(w->f, NULL, _IOFBF, 256 * 1024);
		break;
	case TRACE_FMT_TEXT_GZ:
		w->gz = gzdopen(w->fd, "wb6");
		if (!w->gz) {
			werr(w, error, "cannot write", ENOMEM);
			goto out_abort;
		}
		gzbuffer(w->gz, 256 * 1024);
		break;
	case TRACE_FMT_BINARY:
		if (deflateInit(&w->zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
			werr(w, error, "cannot write", ENOMEM);
			goto out_abort;
		}
		w->zs_live = true;
		w->level = Z_DEFAULT_COMPRESSION;
		if (deflateInit2(&w->probe, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			werr(w, error, "cannot write", ENOMEM);
			goto out_abort;
		}
		w->probe_live = true;
		w->scratch = g_malloc(deflateBound(&w->probe, BIN_CHUNK + BIN_MAX_RECORD));
		w->buf = g_malloc(BIN_CHUNK + BIN_MAX_RECORD);
		w->zout = g_malloc(BIN_CHUNK);
		memcpy(header, BIN_MAGIC, BIN_MAGIC_LEN);
		header[BIN_MAGIC_LEN] = version;
		if (!write_all(w, (const uint8_t *)header, BIN_HEADER_LEN, error))
			goto out_abort;
		return w;
	default:
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: unknown trace format %d",
			    path, (int)fmt);
		goto out_abort;
	}
	snprintf(header, sizeof(header), "ksmtrace %d\n", version);
	if (!put_text(w, header, strlen(header), error))
		goto out_abort;
	return w;

out_abort:
	trace_writer_abort(w);
	return NULL;
out_free:
	g_free(w->path);
	g_free(w);
	return NULL;
}

static uint32_t slot_take(trace_writer *w)
{
	return w->nfree ? w->free_slots[--w->nfree] : w->nslots++;
}

static void slot_put(trace_writer *w, uint32_t slot)
{
	if (w->nfree == w->free_cap) {
		w->free_cap = w->free_cap ? 2 * w->free_cap : 16;
		w->free_slots = g_renew(uint32_t, w->free_slots, w->free_cap);
	}
	w->free_slots[w->nfree++] = slot;
}

/* slot: exit's mm's (the checker has dropped it), fork's parent's. */
static bool put_binary(trace_writer *w, const struct trace_record *rec, struct check_mm *mm,
		       uint32_t slot, GError **error)
{
	uint8_t *start = w->buf + w->len, *p = start + 1;
	unsigned int op;
	uint64_t dt = rec->t_us - w->t_us;

	static const uint8_t kinds[TRACE_NR_VERBS] = {
		[TRACE_SPAWN] = BIN_SPAWN, [TRACE_MAP] = BIN_MAP,
		[TRACE_ADVISE] = BIN_ADVISE_MERGEABLE, [TRACE_WRITE] = BIN_WRITE,
		[TRACE_FILL] = BIN_FILL, [TRACE_FILLSEQ] = BIN_FILLSEQ, [TRACE_UNMAP] = BIN_UNMAP,
		[TRACE_EXIT] = BIN_EXIT, [TRACE_SET] = BIN_SET, [TRACE_SETTLE] = BIN_SETTLE,
		[TRACE_MARK] = BIN_MARK, [TRACE_FORK] = BIN_FORK, [TRACE_PRCTL] = BIN_PRCTL,
	};

	op = kinds[rec->verb];
	if (rec->verb == TRACE_ADVISE) {
		/* the pair's second advice is the second kind; the form names the pair */
		if (rec->thp_advice)
			op = (rec->thp_advice == TRACE_ADVICE_HUGEPAGE ? BIN_ADVISE_MERGEABLE :
			      BIN_ADVISE_UNMERGEABLE) | BIN_ADVICE_THP << BIN_OP_FORM_SHIFT;
		else if (!rec->mergeable)
			op = BIN_ADVISE_UNMERGEABLE;
	}
	if (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL)
		op |= rec->content.form << BIN_OP_FORM_SHIFT;
	if (dt) {
		op |= BIN_OP_TIME;
		p = bin_put_varint(p, dt);
	}
	*start = op;
	w->t_us = rec->t_us;

	switch (rec->verb) {
	case TRACE_SPAWN: {
		size_t len = strlen(rec->mm);

		*p++ = len;
		memcpy(p, rec->mm, len);
		p += len;
		p = bin_put_varint(p, rec->node);
		break;
	}
	case TRACE_EXIT:
		p = bin_put_varint(p, slot);
		break;
	case TRACE_FORK: {
		size_t len = strlen(rec->child);

		p = bin_put_varint(p, slot);
		*p++ = len;
		memcpy(p, rec->child, len);
		p += len;
		break;
	}
	case TRACE_PRCTL:
		p = bin_put_varint(p, mm->tag);
		p = bin_put_varint(p, rec->value);
		break;
	case TRACE_SET:
		*p++ = rec->knob;
		p = bin_put_varint(p, rec->value);
		break;
	case TRACE_SETTLE:
		p = bin_put_varint(p, rec->value);
		break;
	case TRACE_MARK: {
		size_t len = strlen(rec->label);

		*p++ = len;
		memcpy(p, rec->label, len);
		p += len;
		break;
	}
	default:
		p = bin_put_varint(p, mm->tag);
		p = bin_put_varint(p, bin_zigzag(rec->vpn - w->prev_vpn));
		w->prev_vpn = rec->vpn;
		if (rec->verb != TRACE_WRITE)
			p = bin_put_varint(p, rec->npages);
		if (rec->verb == TRACE_FILLSEQ)
			p = bin_put_varint(p, rec->seed);
		if (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL) {
			const struct trace_content *c = &rec->content;

			switch (c->form) {
			case CONTENT_ZERO:
				break;
			case CONTENT_BYTE:
				*p++ = c->value;
				break;
			case CONTENT_RAND:
				p = bin_put_varint(p, c->value);
				break;
			case CONTENT_WORD:
				p = bin_put_varint(p, c->off);
				p = bin_put_varint(p, c->value);
				break;
			case CONTENT_PATCH:
				p = bin_put_varint(p, c->off);
				p = bin_put_varint(p, c->len);
				p = bin_put_varint(p, c->value);
				break;
			case CONTENT_BYTES:
				p = bin_put_varint(p, c->off);
				p = bin_put_varint(p, c->len);
				memcpy(p, c->data, c->len);
				p += c->len;
				break;
			case CONTENT_BLOB:
				p = bin_put_varint(p, c->value);
				break;
			default:
				break;
			}
		}
	}
	w->len += p - start;
	if (w->len >= BIN_CHUNK)
		return bin_deflate(w, false, error);
	return true;
}

/*
 * The writer's id for a blob page, defining the blob first when its bytes
 * are new. A 128-bit hash stands for the bytes: keeping every page to
 * compare would cost as much memory as the trace holds.
 */
static bool put_blob(trace_writer *w, const uint8_t *page, uint64_t *id, GError **error)
{
	XXH128_hash_t h = XXH3_128bits(page, TRACE_PAGE_SIZE);
	gpointer v;

	w->nrefs++;
	if (!w->blob_ids)
		w->blob_ids = g_hash_table_new_full(blob_key_hash, blob_key_equal, g_free, NULL);
	v = g_hash_table_lookup(w->blob_ids, &h);
	if (v) {
		*id = GPOINTER_TO_SIZE(v) - 1;
		return true;
	}
	*id = w->nblobs++;
	g_hash_table_insert(w->blob_ids, g_memdup2(&h, sizeof(h)), GSIZE_TO_POINTER(*id + 1));
	if (w->fmt == TRACE_FMT_BINARY) {
		uint8_t *p = w->buf + w->len;

		*p++ = BIN_BLOB;
		memcpy(p, page, TRACE_PAGE_SIZE);
		w->len += 1 + TRACE_PAGE_SIZE;
		return w->len < BIN_CHUNK || bin_deflate(w, false, error);
	} else {
		static const char hex[] = "0123456789abcdef";
		char *d;

		g_string_printf(w->line, "blob %" G_GUINT64_FORMAT " ", *id);
		g_string_set_size(w->line, w->line->len + 2 * TRACE_PAGE_SIZE + 1);
		d = w->line->str + w->line->len - 2 * TRACE_PAGE_SIZE - 1;
		for (unsigned int i = 0; i < TRACE_PAGE_SIZE; i++) {
			*d++ = hex[page[i] >> 4];
			*d++ = hex[page[i] & 15];
		}
		*d = '\n';
		return put_text(w, w->line->str, w->line->len, error);
	}
}

bool trace_writer_put(trace_writer *w, const struct trace_record *rec, GError **error)
{
	struct check_mm *mm = NULL;
	uint32_t slot = 0;	/* binary: exit's slot, fork's parent's */
	char *problem;
	bool blob = (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL) &&
		    rec->content.form == CONTENT_BLOB;

	if (w->failed) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: writing after an error", w->path);
		return false;
	}
	problem = trace_record_validate(rec);
	if (!problem && blob && w->version < 2)
		problem = g_strdup_printf("blob content needs trace version 2 (this is version %d)",
					  w->version);
	if (!problem && (rec->verb == TRACE_FORK || rec->verb == TRACE_PRCTL) && w->version < 3)
		problem = g_strdup_printf("%s needs trace version 3 (this is version %d)",
					  verb_names[rec->verb], w->version);
	if (!problem && rec->verb == TRACE_ADVISE && rec->thp_advice && w->version < 3)
		problem = g_strdup_printf("advise %s needs trace version 3 (this is version %d)",
					  rec->thp_advice == TRACE_ADVICE_HUGEPAGE ? "hugepage" :
					  "nohugepage", w->version);
	if (!problem && (rec->verb == TRACE_EXIT || rec->verb == TRACE_FORK) &&
	    w->fmt == TRACE_FMT_BINARY) {
		/* exit: the slot is needed after the checker has dropped the mm */
		struct check_mm *named = trace_check_find(w->ck, rec->mm);

		if (named)
			slot = named->tag;
	}
	if (!problem)
		problem = trace_check_apply(w->ck, rec, NULL, &mm);
	if (problem) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: record %" G_GUINT64_FORMAT
			    ": %s", w->path, w->nrec + 1, problem);
		g_free(problem);
		w->failed = true;
		return false;
	}
	w->nrec++;
	if (blob) {
		uint64_t id;

		if (!put_blob(w, rec->content.data, &id, error))
			return false;
		if (!w->renum)
			w->renum = g_new(struct trace_record, 1);
		*w->renum = *rec;
		w->renum->content.value = id;
		rec = w->renum;
	}
	if (w->fmt == TRACE_FMT_BINARY) {
		/* fork: mm is the child */
		if (rec->verb == TRACE_SPAWN || rec->verb == TRACE_FORK)
			mm->tag = slot_take(w);
		if (rec->verb == TRACE_EXIT)
			slot_put(w, slot);
		return put_binary(w, rec, mm, slot, error);
	}
	g_string_truncate(w->line, 0);
	trace_record_format(rec, w->line);
	g_string_append_c(w->line, '\n');
	return put_text(w, w->line->str, w->line->len, error);
}

bool trace_writer_comment(trace_writer *w, const char *text, GError **error)
{
	char **lines;
	bool ok = true;

	if (w->fmt == TRACE_FMT_BINARY)
		return true;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; ok && *l; l++) {
		/* Whatever the text, the reader must take the line back. */
		char *valid = g_utf8_make_valid(*l, -1);

		g_string_assign(w->line, "# ");
		g_string_append(w->line, valid);
		g_free(valid);
		for (size_t i = 0; i < w->line->len; i++)
			if (w->line->str[i] == '\r')
				w->line->str[i] = ' ';
		if (w->line->len > TRACE_LINE_MAX)
			g_string_truncate(w->line, g_utf8_find_prev_char(w->line->str,
				w->line->str + TRACE_LINE_MAX + 1) - w->line->str);
		g_string_append_c(w->line, '\n');
		ok = put_text(w, w->line->str, w->line->len, error);
	}
	g_strfreev(lines);
	return ok;
}

static void writer_free(trace_writer *w)
{
	if (w->zs_live)
		deflateEnd(&w->zs);
	if (w->probe_live)
		deflateEnd(&w->probe);
	g_free(w->scratch);
	trace_check_free(w->ck);
	if (w->line)
		g_string_free(w->line, TRUE);
	g_free(w->buf);
	g_free(w->zout);
	g_free(w->free_slots);
	if (w->blob_ids)
		g_hash_table_destroy(w->blob_ids);
	g_free(w->renum);
	g_free(w->path);
	g_free(w);
}

bool trace_writer_close(trace_writer *w, GError **error)
{
	bool ok = !w->failed;
	int fd = w->fd;

	if (!ok) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: not committed after an error",
			    w->path);
		trace_writer_abort(w);
		return false;
	}
	if (w->fmt == TRACE_FMT_BINARY) {
		uint8_t *p = w->buf + w->len;

		*p++ = BIN_END;
		p = bin_put_varint(p, w->nrec);
		w->len = p - w->buf;
		ok = bin_deflate(w, true, error);
		if (close(fd) != 0 && ok)
			ok = werr(w, error, "cannot write", errno);
		w->fd = -1;
	} else if (w->gz) {
		int ret = gzclose_w(w->gz);

		w->gz = NULL;
		w->fd = -1;
		if (ret != Z_OK)
			ok = werr(w, error, "cannot write", ret == Z_ERRNO ? errno : EIO);
	} else {
		int ret = fclose(w->f);

		w->f = NULL;
		w->fd = -1;
		if (ret != 0)
			ok = werr(w, error, "cannot write", errno);
	}
	if (ok) {
		GError *err = NULL;

		if (!atomic_target_commit(&w->out, &err)) {
			g_set_error_literal(error, TRACE_ERROR, TRACE_ERROR_IO, err->message);
			g_error_free(err);
			writer_free(w);
			return false;
		}
		writer_free(w);
		return true;
	}
	trace_writer_abort(w);
	return false;
}

void trace_writer_abort(trace_writer *w)
{
	if (!w)
		return;
	if (w->gz)
		gzclose_w(w->gz);
	else if (w->f)
		fclose(w->f);
	else if (w->fd >= 0)
		close(w->fd);
	atomic_target_abort(&w->out);
	writer_free(w);
}
