// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The binary form's decoder (FORMAT.md, "Binary form"): after the 9-byte
 * header, one zlib stream, inflated here a chunk at a time into out, whose
 * records are decoded in place into trace_records that then pass the checks
 * both forms share (check.c).
 *
 * Errors are "FILE: offset N: problem": N is the offset of the record's
 * opcode byte in the inflated stream, or, for the header and the stream's
 * own problems (cut, corrupt, trailing garbage), the offset in the file.
 * A record's line (in later run-time errors) is its index among the trace
 * records, from 1.
 */
#include <string.h>
#include "traces/binary.h"
#include "traces/reader_internal.h"

#define OUT_CHUNK (256 * 1024)

static int bin_fail_at(trace_reader *r, GError **error, uint64_t off, const char *what)
{
	return reader_fail(r, error, ": offset %" G_GUINT64_FORMAT ": %s", off, what);
}

/* Starts inflating after the header; header offsets are file offsets. */
int reader_bin_start(trace_reader *r, GError **error)
{
	while (r->in_len < BIN_HEADER_LEN && !r->in_eof)
		if (reader_fill(r, error) < 0)
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
		return reader_fail(r, error, ": cannot start zlib");
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
			if (reader_fill(r, error) < 0)
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
				if (reader_fill(r, error) < 0)
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

/* The slot a spawned or forked mm takes: the last freed, else a new one. */
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

/*
 * One record being decoded. A step that finds a problem notes it in why and
 * goes on (it stops only where the fields after it cannot be found, as after
 * a bad length), and bin_next reports once the record is read, in this
 * order: a read past the inflated data (the stream stopped inside the
 * record), a bad varint, then why. A later step's why replaces an earlier
 * one's. Reading past end is safe: bin_fill leaves BIN_MAX_RECORD zero
 * bytes after the data, as much as any record holds.
 */
struct bin_cursor {
	const uint8_t *p;	/* the record's next byte */
	const uint8_t *end;	/* the end of the inflated data */
	bool bad;		/* a varint was not canonical */
	const char *why;	/* the record's problem, NULL while none */
};

/* The opcode's time delta, if it has one (>= 1), makes the record's time. */
static inline void bin_time(trace_reader *r, struct bin_cursor *d, unsigned int op,
			    struct trace_record *rec)
{
	if (op & BIN_OP_TIME) {
		uint64_t dt = bin_get_varint(&d->p, &d->bad);

		if (dt == 0)
			d->why = "zero time delta";
		if (dt > UINT64_MAX - r->t_us)
			d->why = "time beyond 64 bits";
		r->t_us += dt;
	}
	rec->t_us = r->t_us;
	rec->line = r->nrec + 1;
}

/*
 * Whether the opcode's form bits mean something for its kind: the content
 * form of write and fill, and (v3) the THP pair of the two advise kinds.
 */
static inline bool bin_form_known(const trace_reader *r, unsigned int kind, unsigned int form)
{
	return !form || kind == BIN_WRITE || kind == BIN_FILL ||
	       ((kind == BIN_ADVISE_MERGEABLE || kind == BIN_ADVISE_UNMERGEABLE) &&
		form == BIN_ADVICE_THP && r->version >= 3);
}

/* The kinds whose fields start with the slot of a live mm (fork: the parent's). */
static inline bool bin_names_slot(const trace_reader *r, unsigned int kind)
{
	return (kind >= BIN_MAP && kind <= BIN_EXIT) ||
	       ((kind == BIN_FORK || kind == BIN_PRCTL) && r->version >= 3);
}

/*
 * The slot (into *slot) and, for the kinds with a range (map to unmap), the
 * vpn delta after it. Copies the mm's name into the record and returns the
 * mm; NULL when the slot is not live, which is the record's problem unless
 * it has one already.
 */
static inline struct check_mm *bin_mm(trace_reader *r, struct bin_cursor *d, unsigned int kind,
				      struct trace_record *rec, uint64_t *slot)
{
	struct check_mm *mm = NULL;

	*slot = bin_get_varint(&d->p, &d->bad);
	if (*slot >= r->nslots || !(mm = r->slots[*slot])) {
		if (!d->why && !d->bad && d->p <= d->end)
			d->why = "reference to an mm slot that is not live";
	} else if (mm->name_len < 16) {
		/* a fixed size the compiler inlines; the name is zero-padded */
		memcpy(rec->mm, mm->name, 16);
	} else {
		memcpy(rec->mm, mm->name, sizeof(rec->mm));
	}
	if (kind < BIN_EXIT) {
		r->prev_vpn += bin_unzigzag(bin_get_varint(&d->p, &d->bad));
		rec->vpn = r->prev_vpn;
	}
	return mm;
}

/*
 * A name (spawn's mm, fork's child, mark's label): u8 length, then the bytes,
 * into out with a NUL. -1: the length is not 1 to TRACE_NAME_MAX (the bytes
 * are left unread); 0: not a valid name; 1: a valid one.
 */
static int bin_name(struct bin_cursor *d, char *out)
{
	unsigned int len = *d->p++;

	if (len < 1 || len > TRACE_NAME_MAX)
		return -1;
	memcpy(out, d->p, len);
	out[len] = 0;
	d->p += len;
	return trace_name_valid(out, len);
}

/* spawn: the name, then the node; a bad name is named before a bad node. */
static void bin_spawn(struct bin_cursor *d, struct trace_record *rec)
{
	int name;
	uint64_t node;

	rec->verb = TRACE_SPAWN;
	name = bin_name(d, rec->mm);
	if (name < 0) {
		d->why = "bad name length";
		return;
	}
	node = bin_get_varint(&d->p, &d->bad);
	rec->node = node;
	if (node > TRACE_NODE_MAX)
		d->why = "node out of range";
	if (!name)
		d->why = "bad mm name";
}

/*
 * advise: the pair by the form (0 or, checked already, BIN_ADVICE_THP),
 * the advice by the kind.
 */
static inline void bin_advise(struct bin_cursor *d, unsigned int kind, unsigned int form,
			      struct trace_record *rec)
{
	rec->verb = TRACE_ADVISE;
	if (form == BIN_ADVICE_THP) {
		rec->mergeable = false;
		rec->thp_advice = kind == BIN_ADVISE_MERGEABLE ? TRACE_ADVICE_HUGEPAGE :
				  TRACE_ADVICE_NOHUGEPAGE;
	} else {
		rec->mergeable = kind == BIN_ADVISE_MERGEABLE;
		rec->thp_advice = 0;
	}
	rec->npages = bin_get_varint(&d->p, &d->bad);
}

/*
 * The v3 kinds, unknown opcodes in an older file: fork (after its parent's
 * slot, the child's name) and prctl (after its slot, the memory-merge value).
 */
static void bin_v3_kind(trace_reader *r, struct bin_cursor *d, unsigned int kind,
			struct trace_record *rec)
{
	if (r->version < 3) {
		d->why = "unknown opcode";
		return;
	}
	if (kind == BIN_FORK) {
		int name;

		rec->verb = TRACE_FORK;
		name = bin_name(d, rec->child);
		if (name <= 0)
			d->why = name < 0 ? "bad name length" : "bad child mm name";
		return;
	}
	/* a value other than 0 or 1 is trace_record_validate's to name */
	rec->verb = TRACE_PRCTL;
	rec->value = bin_get_varint(&d->p, &d->bad);
}

/*
 * The content of a write or fill, by the form in its opcode: zero: nothing;
 * byte: one raw byte; rand: seed; word: index, value; patch: offset, length,
 * seed; bytes: offset, length, the raw bytes; blob (v2): the id of a blob
 * read already, whose bytes bin_next puts into the record.
 */
static inline void bin_content(trace_reader *r, struct bin_cursor *d, unsigned int form,
			       struct trace_content *c)
{
	c->form = form;
	switch (form) {
	case CONTENT_ZERO:
		c->value = 0;
		break;
	case CONTENT_BYTE:
		c->value = *d->p++;
		break;
	case CONTENT_RAND:
		c->value = bin_get_varint(&d->p, &d->bad);
		break;
	case CONTENT_WORD: {
		uint64_t i = bin_get_varint(&d->p, &d->bad);

		c->value = bin_get_varint(&d->p, &d->bad);
		if (i > 511)
			d->why = "word index out of range";
		c->off = i;
		c->len = 8;
		break;
	}
	case CONTENT_PATCH:
	case CONTENT_BYTES: {
		uint64_t o = bin_get_varint(&d->p, &d->bad), l = bin_get_varint(&d->p, &d->bad);

		if (l < 1 || o >= TRACE_PAGE_SIZE || l > TRACE_PAGE_SIZE - o) {
			d->why = "offset or length outside the page";
			break;
		}
		c->off = o;
		c->len = l;
		if (form == CONTENT_PATCH) {
			c->value = bin_get_varint(&d->p, &d->bad);
		} else {
			c->value = 0;
			memcpy(c->data, d->p, l);
			d->p += l;
		}
		break;
	}
	case CONTENT_BLOB: {
		uint64_t id = bin_get_varint(&d->p, &d->bad);

		if (r->version < 2) {
			d->why = "unknown content form";
			break;
		}
		if (id >= r->blobs.n) {
			d->why = "reference to a blob that is not defined";
			break;
		}
		/* its bytes are copied once the record is known good (bin_next) */
		c->value = id;
		c->off = 0;
		c->len = TRACE_PAGE_SIZE;
		break;
	}
	case CONTENT_DIGEST:
		if (r->version < 4) {
			d->why = "unknown content form";
			break;
		}
		c->value = 0;
		c->off = 0;
		c->len = TRACE_DIGEST_LEN;
		memcpy(c->data, d->p, TRACE_DIGEST_LEN);
		d->p += TRACE_DIGEST_LEN;
		break;
	default:
		d->why = "unknown content form";
	}
}

/*
 * The end record: the opcode exactly BIN_END, the count of the trace
 * records before it, and nothing after it, neither in the inflated data nor
 * in the rest of the stream. 0: the trace ended well; -1: an error was set;
 * 1: the record has a problem (in d) for bin_next to report.
 */
static int bin_end(trace_reader *r, struct bin_cursor *d, unsigned int op, GError **error)
{
	uint64_t n = bin_get_varint(&d->p, &d->bad);

	if (op != BIN_END)
		d->why = "unknown opcode";
	else if (!d->bad && d->p <= d->end && n != r->nrec)
		d->why = "record count in the end record does not match";
	if (d->why || d->bad || d->p > d->end)
		return 1;
	r->out_pos = d->p - r->out;
	if (r->out_pos == r->out_len && !r->zs_end && bin_fill(r, error) < 0)
		return -1;
	if (r->out_pos != r->out_len)
		return bin_fail_at(r, error, r->out_base + r->out_pos,
				   "trailing data after the end record");
	r->done = true;
	return 0;
}

/*
 * A decoded record (at offset off, its last byte before p) through the checks
 * both forms share. Then a spawn or fork gives its new mm a slot, an exit
 * frees its mm's, and the record is consumed. 1, or -1 with the checks'
 * problem placed at the record.
 */
static inline int bin_accept(trace_reader *r, struct trace_record *rec, unsigned int kind,
			     struct check_mm *mm, uint64_t slot, uint64_t off, const uint8_t *p,
			     GError **error)
{
	char *problem;

	/* write and fill had their content checked while decoded: only the range is left */
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

/*
 * Decodes the record at out_pos (refilling out first when less than the
 * longest record is left). Returns 1 for a record, 0 at the end, -1 on
 * error, 2 when the record was a blob definition, now stored.
 *
 * A record is an opcode byte (kind, form bits, time flag), the time delta
 * if flagged, the slot and vpn delta of the kinds that name a live mm,
 * then the kind's own fields (FORMAT.md's table). The decoding steps note
 * problems in the cursor (struct bin_cursor) and this reports the first by
 * precedence once the record is read, so that one wrong byte gives one
 * predictable message; after it the reader stays failed.
 */
static inline int bin_next(trace_reader *r, struct trace_record *rec, GError **error)
{
	struct bin_cursor d = { .bad = false, .why = NULL };
	const uint8_t *blob = NULL;
	struct check_mm *mm = NULL;
	uint64_t off, slot = 0;
	unsigned int op, kind, form;
	int name, rc;

	if (r->out_len - r->out_pos < BIN_MAX_RECORD && !r->zs_end && bin_fill(r, error) < 0)
		return -1;
	d.p = r->out + r->out_pos;
	d.end = r->out + r->out_len;
	off = r->out_base + r->out_pos;
	if (d.p == d.end)
		return bin_fail_at(r, error, off, "truncated: the end record is missing");

	op = *d.p++;
	kind = op & BIN_OP_KIND;
	form = (op & BIN_OP_FORM) >> BIN_OP_FORM_SHIFT;
	bin_time(r, &d, op, rec);
	if (!bin_form_known(r, kind, form))
		d.why = "unknown opcode";
	if (bin_names_slot(r, kind))
		mm = bin_mm(r, &d, kind, rec, &slot);
	rec->npages = 1;

	switch (kind) {
	case BIN_END:
		rc = bin_end(r, &d, op, error);
		if (rc <= 0)
			return rc;
		break;
	case BIN_SPAWN:
		bin_spawn(&d, rec);
		break;
	case BIN_MAP:
		rec->verb = TRACE_MAP;
		rec->npages = bin_get_varint(&d.p, &d.bad);
		break;
	case BIN_ADVISE_MERGEABLE:
	case BIN_ADVISE_UNMERGEABLE:
		bin_advise(&d, kind, form, rec);
		break;
	case BIN_FILL:
		rec->npages = bin_get_varint(&d.p, &d.bad);
		/* fall through */
	case BIN_WRITE:
		rec->verb = kind == BIN_WRITE ? TRACE_WRITE : TRACE_FILL;
		bin_content(r, &d, form, &rec->content);
		break;
	case BIN_BLOB:
		if (op != BIN_BLOB || r->version < 2) {
			d.why = "unknown opcode";
			break;
		}
		blob = d.p;
		d.p += TRACE_PAGE_SIZE;
		break;
	case BIN_FILLSEQ:
		rec->verb = TRACE_FILLSEQ;
		rec->npages = bin_get_varint(&d.p, &d.bad);
		rec->seed = bin_get_varint(&d.p, &d.bad);
		break;
	case BIN_UNMAP:
		rec->verb = TRACE_UNMAP;
		rec->npages = bin_get_varint(&d.p, &d.bad);
		break;
	case BIN_EXIT:
		rec->verb = TRACE_EXIT;
		break;
	case BIN_SET:
		rec->verb = TRACE_SET;
		if (*d.p >= KNOB_NR)
			d.why = "unknown knob";
		rec->knob = *d.p++;
		rec->value = bin_get_varint(&d.p, &d.bad);
		break;
	case BIN_SETTLE:
		rec->verb = TRACE_SETTLE;
		rec->value = bin_get_varint(&d.p, &d.bad);
		break;
	case BIN_MARK:
		rec->verb = TRACE_MARK;
		name = bin_name(&d, rec->label);
		if (name <= 0)
			d.why = name < 0 ? "bad label length" : "bad label";
		break;
	case BIN_FORK:
	case BIN_PRCTL:
		bin_v3_kind(r, &d, kind, rec);
		break;
	}

	/* Reading past the data means the stream stopped inside this record. */
	if (d.p > d.end)
		return bin_fail_at(r, error, off, "truncated record");
	if (d.bad)
		return bin_fail_at(r, error, off, "bad varint");
	if (d.why)
		return bin_fail_at(r, error, off, d.why);
	if (blob) {
		char *why = NULL;
		uint8_t *to = blob_store_new(&r->blobs, &why);

		if (!to) {
			rc = bin_fail_at(r, error, off, why);
			g_free(why);
			return rc;
		}
		memcpy(to, blob, TRACE_PAGE_SIZE);
		r->out_pos = d.p - r->out;
		return 2;
	}
	if ((kind == BIN_WRITE || kind == BIN_FILL) && rec->content.form == CONTENT_BLOB) {
		char *why = NULL;

		if (!blob_store_get(&r->blobs, rec->content.value, rec->content.data, &why)) {
			rc = bin_fail_at(r, error, off, why);
			g_free(why);
			return rc;
		}
	}
	return bin_accept(r, rec, kind, mm, slot, off, d.p, error);
}

int reader_bin_next(trace_reader *r, struct trace_record *rec, GError **error)
{
	if (!r->zs_live && reader_bin_start(r, error) < 0)
		return -1;
	for (;;) {
		int rc = bin_next(r, rec, error);

		if (rc != 2)
			return rc;
	}
}
