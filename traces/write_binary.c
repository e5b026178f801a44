// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The binary writer (FORMAT.md, "Binary form"): records are encoded into buf
 * and each BIN_CHUNK of them deflated into the one zlib stream after the
 * header, at the level its trial compression picks. Numbers are varints,
 * a vpn is the zigzag delta from the last record's and an mm the slot that
 * stands for its name: the rules the reader (read_binary.c) undoes.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "traces/binary.h"
#include "traces/reader.h"
#include "traces/writer_internal.h"

#define BIN_CHUNK (256 * 1024)

static bool write_all(trace_writer *w, const uint8_t *p, size_t n, GError **error)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return writer_err(w, error, "cannot write", errno);
		p += k;
		n -= k;
	}
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

bool writer_bin_open(trace_writer *w, GError **error)
{
	uint8_t header[BIN_HEADER_LEN];

	if (deflateInit(&w->zs, Z_DEFAULT_COMPRESSION) != Z_OK)
		return writer_err(w, error, "cannot write", ENOMEM);
	w->zs_live = true;
	w->level = Z_DEFAULT_COMPRESSION;
	if (deflateInit2(&w->probe, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return writer_err(w, error, "cannot write", ENOMEM);
	w->probe_live = true;
	w->scratch = g_malloc(deflateBound(&w->probe, BIN_CHUNK + BIN_MAX_RECORD));
	w->buf = g_malloc(BIN_CHUNK + BIN_MAX_RECORD);
	w->zout = g_malloc(BIN_CHUNK);
	memcpy(header, BIN_MAGIC, BIN_MAGIC_LEN);
	header[BIN_MAGIC_LEN] = w->version;
	return write_all(w, header, BIN_HEADER_LEN, error);
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

/*
 * The opcode byte but its time flag: the kind, and the form bits of write
 * and fill (the content form) and of advise (the advice pair).
 */
static unsigned int bin_op(const struct trace_record *rec)
{
	static const uint8_t kinds[TRACE_NR_VERBS] = {
		[TRACE_SPAWN] = BIN_SPAWN, [TRACE_MAP] = BIN_MAP,
		[TRACE_ADVISE] = BIN_ADVISE_MERGEABLE, [TRACE_WRITE] = BIN_WRITE,
		[TRACE_FILL] = BIN_FILL, [TRACE_FILLSEQ] = BIN_FILLSEQ, [TRACE_UNMAP] = BIN_UNMAP,
		[TRACE_EXIT] = BIN_EXIT, [TRACE_SET] = BIN_SET, [TRACE_SETTLE] = BIN_SETTLE,
		[TRACE_MARK] = BIN_MARK, [TRACE_FORK] = BIN_FORK, [TRACE_PRCTL] = BIN_PRCTL,
	};
	unsigned int op = kinds[rec->verb];

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
	return op;
}

/* A name (spawn's mm, fork's child, mark's label): u8 length, the bytes. */
static uint8_t *put_name(uint8_t *p, const char *name)
{
	size_t len = strlen(name);

	*p++ = len;
	memcpy(p, name, len);
	return p + len;
}

/* The content of a write or fill, whose form the opcode names. */
static uint8_t *put_content(uint8_t *p, const struct trace_content *c)
{
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
	case CONTENT_DIGEST:
		memcpy(p, c->data, TRACE_DIGEST_LEN);
		p += TRACE_DIGEST_LEN;
		break;
	default:
		break;
	}
	return p;
}

/*
 * A record's fields after the opcode and time delta (FORMAT.md's table).
 * mm is the record's (fork: the child), slot exit's and fork's parent's:
 * the checker has dropped an exiting mm.
 */
static uint8_t *put_fields(trace_writer *w, uint8_t *p, const struct trace_record *rec,
			   const struct check_mm *mm, uint32_t slot)
{
	switch (rec->verb) {
	case TRACE_SPAWN:
		p = put_name(p, rec->mm);
		return bin_put_varint(p, rec->node);
	case TRACE_EXIT:
		return bin_put_varint(p, slot);
	case TRACE_FORK:
		p = bin_put_varint(p, slot);
		return put_name(p, rec->child);
	case TRACE_PRCTL:
		p = bin_put_varint(p, mm->tag);
		return bin_put_varint(p, rec->value);
	case TRACE_SET:
		*p++ = rec->knob;
		return bin_put_varint(p, rec->value);
	case TRACE_SETTLE:
		return bin_put_varint(p, rec->value);
	case TRACE_MARK:
		return put_name(p, rec->label);
	default:
		break;
	}
	/* map, advise, write, fill, fillseq, unmap: slot, dvpn, then their own */
	p = bin_put_varint(p, mm->tag);
	p = bin_put_varint(p, bin_zigzag(rec->vpn - w->prev_vpn));
	w->prev_vpn = rec->vpn;
	if (rec->verb != TRACE_WRITE)
		p = bin_put_varint(p, rec->npages);
	if (rec->verb == TRACE_FILLSEQ)
		p = bin_put_varint(p, rec->seed);
	if (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL)
		p = put_content(p, &rec->content);
	return p;
}

bool writer_bin_put(trace_writer *w, const struct trace_record *rec, struct check_mm *mm,
		    uint32_t slot, GError **error)
{
	uint8_t *start = w->buf + w->len, *p = start + 1;
	unsigned int op = bin_op(rec);
	uint64_t dt = rec->t_us - w->t_us;

	/* slots: the same rule as the reader's, so that both number mms alike */
	if (rec->verb == TRACE_SPAWN || rec->verb == TRACE_FORK)
		mm->tag = slot_take(w);
	if (rec->verb == TRACE_EXIT)
		slot_put(w, slot);
	if (dt) {
		op |= BIN_OP_TIME;
		p = bin_put_varint(p, dt);
	}
	*start = op;
	w->t_us = rec->t_us;
	p = put_fields(w, p, rec, mm, slot);
	w->len += p - start;
	if (w->len >= BIN_CHUNK)
		return bin_deflate(w, false, error);
	return true;
}

/* Opcode exactly BIN_BLOB, then the page: no time delta, the id implicit. */
bool writer_bin_blob(trace_writer *w, const uint8_t *page, GError **error)
{
	uint8_t *p = w->buf + w->len;

	*p++ = BIN_BLOB;
	memcpy(p, page, TRACE_PAGE_SIZE);
	w->len += 1 + TRACE_PAGE_SIZE;
	return w->len < BIN_CHUNK || bin_deflate(w, false, error);
}

/* The end record (the count of trace records), the stream's end, the file's close. */
bool writer_bin_close(trace_writer *w, GError **error)
{
	uint8_t *p = w->buf + w->len;
	bool ok;

	*p++ = BIN_END;
	p = bin_put_varint(p, w->nrec);
	w->len = p - w->buf;
	ok = bin_deflate(w, true, error);
	if (close(w->fd) != 0 && ok)
		ok = writer_err(w, error, "cannot write", errno);
	w->fd = -1;
	return ok;
}
