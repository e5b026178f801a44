// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The text writers (FORMAT.md, "Canonical text"), plain through stdio or
 * gzip through zlib's gz layer: one line a record, a blob definition or a
 * comment.
 *
 * Canonical text: "<t_us> <verb> <args>" with single spaces; t_us, npages,
 * node, offsets, lengths, word indices, knob values and settle counts in
 * decimal; vpns, seeds, word values and rand seeds in lowercase 0x hex;
 * byte:hh and bytes:off:hex in lowercase hex digits; node=0 is left out;
 * advise ends in mergeable, unmergeable or (v3) hugepage, nohugepage.
 */
#include <errno.h>
#include <string.h>
#include "traces/reader.h"
#include "traces/writer_internal.h"

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
	case CONTENT_DIGEST: {
		static const char hex[] = "0123456789abcdef";

		g_string_append(out, "digest:");
		for (uint32_t i = 0; i < TRACE_DIGEST_LEN; i++) {
			g_string_append_c(out, hex[c->data[i] >> 4]);
			g_string_append_c(out, hex[c->data[i] & 15]);
		}
		break;
	}
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

static bool gz_err(trace_writer *w, GError **error)
{
	int err;
	const char *msg = gzerror(w->gz, &err);

	if (err == Z_ERRNO)
		return writer_err(w, error, "cannot write", errno);
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot write: %s", w->path, msg);
	w->failed = true;
	return false;
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
		return writer_err(w, error, "cannot write", errno);
	return true;
}

bool writer_text_open(trace_writer *w, GError **error)
{
	char header[16];

	if (w->fmt == TRACE_FMT_TEXT_GZ) {
		w->gz = gzdopen(w->fd, "wb6");
		if (!w->gz)
			return writer_err(w, error, "cannot write", ENOMEM);
		gzbuffer(w->gz, 256 * 1024);
	} else {
		w->f = fdopen(w->fd, "w");
		if (!w->f)
			return writer_err(w, error, "cannot write", errno);
		setvbuf(w->f, NULL, _IOFBF, 256 * 1024);
	}
	snprintf(header, sizeof(header), "ksmtrace %d\n", w->version);
	return put_text(w, header, strlen(header), error);
}

bool writer_text_put(trace_writer *w, const struct trace_record *rec, GError **error)
{
	g_string_truncate(w->line, 0);
	trace_record_format(rec, w->line);
	g_string_append_c(w->line, '\n');
	return put_text(w, w->line->str, w->line->len, error);
}

/* "blob <id> <8192 lowercase hex digits>" (v2). */
bool writer_text_blob(trace_writer *w, uint64_t id, const uint8_t *page, GError **error)
{
	static const char hex[] = "0123456789abcdef";
	char *d;

	g_string_printf(w->line, "blob %" G_GUINT64_FORMAT " ", id);
	g_string_set_size(w->line, w->line->len + 2 * TRACE_PAGE_SIZE + 1);
	d = w->line->str + w->line->len - 2 * TRACE_PAGE_SIZE - 1;
	for (unsigned int i = 0; i < TRACE_PAGE_SIZE; i++) {
		*d++ = hex[page[i] >> 4];
		*d++ = hex[page[i] & 15];
	}
	*d = '\n';
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

bool writer_text_close(trace_writer *w, GError **error)
{
	int ret;

	w->fd = -1;
	if (w->gz) {
		ret = gzclose_w(w->gz);
		w->gz = NULL;
		if (ret != Z_OK)
			return writer_err(w, error, "cannot write", ret == Z_ERRNO ? errno : EIO);
		return true;
	}
	ret = fclose(w->f);
	w->f = NULL;
	if (ret != 0)
		return writer_err(w, error, "cannot write", errno);
	return true;
}
