// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace writers (writer.h): opening, the checks, blob numbering and
 * committing, common to every form; the forms' own parts are write_text.c
 * (canonical text, plain or gzip) and write_binary.c (FORMAT.md, "Binary
 * form"). Every record goes through the same checks as on reading
 * (check.c), so whatever a writer commits, every reader accepts.
 */
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include "traces/reader.h"
#include "traces/writer_internal.h"

enum trace_format trace_format_from_path(const char *path)
{
	if (g_str_has_suffix(path, ".ksmb"))
		return TRACE_FMT_BINARY;
	if (g_str_has_suffix(path, ".gz"))
		return TRACE_FMT_TEXT_GZ;
	return TRACE_FMT_TEXT;
}

bool writer_err(trace_writer *w, GError **error, const char *what, int err)
{
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s: %s", w->path, what,
		    g_strerror(err));
	w->failed = true;
	return false;
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
	GError *err = NULL;
	bool ok;

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
	if (!atomic_target_open(&w->out, path, &err)) {
		g_set_error_literal(error, TRACE_ERROR, TRACE_ERROR_IO, err->message);
		g_error_free(err);
		g_free(w->path);
		g_free(w);
		return NULL;
	}
	w->fd = w->out.fd;
	w->ck = trace_check_new();
	w->line = g_string_sized_new(128);
	switch (fmt) {
	case TRACE_FMT_TEXT:
	case TRACE_FMT_TEXT_GZ:
		ok = writer_text_open(w, error);
		break;
	case TRACE_FMT_BINARY:
		ok = writer_bin_open(w, error);
		break;
	default:
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: unknown trace format %d",
			    path, (int)fmt);
		ok = false;
	}
	if (ok)
		return w;
	trace_writer_abort(w);
	return NULL;
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
	if (w->fmt == TRACE_FMT_BINARY)
		return writer_bin_blob(w, page, error);
	return writer_text_blob(w, *id, page, error);
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
	if (!problem && (rec->verb == TRACE_WRITE || rec->verb == TRACE_FILL) &&
	    rec->content.form == CONTENT_DIGEST && w->version < 4)
		problem = g_strdup_printf("digest content needs trace version 4 (this is version %d)",
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
	if (w->fmt == TRACE_FMT_BINARY)
		return writer_bin_put(w, rec, mm, slot, error);
	return writer_text_put(w, rec, error);
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
	GError *err = NULL;

	if (w->failed) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: not committed after an error",
			    w->path);
		trace_writer_abort(w);
		return false;
	}
	if (!(w->fmt == TRACE_FMT_BINARY ? writer_bin_close(w, error) :
	      writer_text_close(w, error))) {
		trace_writer_abort(w);
		return false;
	}
	if (!atomic_target_commit(&w->out, &err)) {
		g_set_error_literal(error, TRACE_ERROR, TRACE_ERROR_IO, err->message);
		g_error_free(err);
		writer_free(w);
		return false;
	}
	writer_free(w);
	return true;
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
