// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace convert --content digest: every page's contents as the model would
 * hold them (content/content.h), digested where a store leaves them.
 */
#include <inttypes.h>
#include <string.h>
#include "content/content.h"
#include "util/size.h"
#include "workloads/digest.h"

/*
 * What the converter holds a page at: its hash table slot (key, value and
 * hash, at glib's load) and its content's share, measured at about 33
 * bytes on a 4 Mi-page fillseq; rounded up, so that the limit holds.
 */
#define HELD_PAGE_BYTES 64

/* The pages followed, against the limit. */
struct held {
	uint64_t pages, max;	/* max 0: no limit */
	uint64_t limit_bytes;
	bool limit_given;
	const char *path;
	uint64_t mm_max;	/* the most pages of one mm (DIGEST_MM_PAGES_MAX) */
};

/* One mm would follow more pages than one GLib table holds. */
static bool mm_check(const struct held *h, const struct trace_record *rec, uint64_t mm_pages,
		     GError **error)
{
	if (mm_pages <= h->mm_max)
		return true;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
		    "%s:%" G_GUINT64_FORMAT ": converting to digests would follow more than "
		    "%" G_GUINT64_FORMAT " pages of one mm here (%" G_GUINT64_FORMAT " pages "
		    "of %s; the most the converter holds for one mm)", h->path, rec->line,
		    h->mm_max, mm_pages, rec->mm);
	return false;
}

static bool held_check(const struct held *h, const struct trace_record *rec, GError **error)
{
	char limit_s[32];

	if (!h->max || h->pages <= h->max)
		return true;
	format_size(h->limit_bytes, limit_s, sizeof(limit_s));
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
		    "%s:%" G_GUINT64_FORMAT ": converting to digests would hold more than %s here "
		    "(%" G_GUINT64_FORMAT " pages followed, %d bytes each) %s", h->path, rec->line,
		    limit_s, h->pages, HELD_PAGE_BYTES,
		    h->limit_given ? "(--max-memory)"
				   : "(the machine's MemAvailable; --max-memory sets the limit)");
	return false;
}

/* One mm's written pages: vpn -> content (a reference held). */
static GHashTable *pages_new(void)
{
	return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
				     (GDestroyNotify)content_unref);
}

static GHashTable *pages_of(GHashTable *mms, const char *mm)
{
	GHashTable *p = g_hash_table_lookup(mms, mm);

	if (!p) {
		p = pages_new();
		g_hash_table_insert(mms, g_strdup(mm), p);
	}
	return p;
}

/* The content a digest trace stores for c: zero, or the digest of its bytes. */
static void digest_of(content *c, struct trace_content *out)
{
	uint8_t page[TRACE_PAGE_SIZE];

	if (content_is_zero(c)) {
		memset(out, 0, offsetof(struct trace_content, data));
		out->form = CONTENT_ZERO;
		return;
	}
	trace_content_digest(out, content_materialize(c, page));
}

static bool same_content(const struct trace_content *a, const struct trace_content *b)
{
	return a->form == b->form &&
	       (a->form != CONTENT_DIGEST || !memcmp(a->data, b->data, TRACE_DIGEST_LEN));
}

/* A run of pages [vpn, vpn + n) that got c: write for one page, fill for more. */
static bool put_run(trace_writer *w, const struct trace_record *like, uint64_t vpn, uint64_t n,
		    const struct trace_content *c, GError **error)
{
	struct trace_record *rec = g_new(struct trace_record, 1);

	*rec = *like;
	rec->verb = n == 1 ? TRACE_WRITE : TRACE_FILL;
	rec->vpn = vpn;
	rec->npages = n;
	rec->content = *c;
	bool ok = trace_writer_put(w, rec, error);

	g_free(rec);
	return ok;
}

/* How many of [vpn, vpn + n) pages already holds: walked through the fewer. */
static uint64_t followed_in(GHashTable *pages, uint64_t vpn, uint64_t n)
{
	uint64_t in = 0;

	if (n > g_hash_table_size(pages)) {
		GHashTableIter it;
		gpointer key;

		g_hash_table_iter_init(&it, pages);
		while (g_hash_table_iter_next(&it, &key, NULL))
			in += GPOINTER_TO_SIZE(key) - vpn < n;
		return in;
	}
	for (uint64_t i = 0; i < n; i++)
		in += g_hash_table_contains(pages, GSIZE_TO_POINTER(vpn + i));
	return in;
}

/* A store to [vpn, vpn + npages): seq for fillseq, else rec's content. */
static bool store(trace_writer *w, GHashTable *pages, const struct trace_record *rec,
		  struct held *held, GError **error)
{
	bool whole = rec->verb != TRACE_FILLSEQ &&
		     (rec->content.form == CONTENT_ZERO || rec->content.form == CONTENT_BYTE ||
		      rec->content.form == CONTENT_RAND || rec->content.form == CONTENT_BLOB ||
		      rec->content.form == CONTENT_DIGEST);
	struct trace_content *run = g_new(struct trace_content, 1), *now = g_new(struct trace_content, 1);
	uint64_t run_start = rec->vpn, run_n = 0;
	bool ok = true;
	/*
	 * Checked before any page is taken: a fill of 2^28 pages is refused
	 * at once, before it holds gigabytes or outgrows GLib's table.
	 */
	uint64_t added = rec->npages - followed_in(pages, rec->vpn, rec->npages);
	struct held after = *held;

	after.pages += added;
	if (!held_check(&after, rec, error) ||
	    !mm_check(held, rec, g_hash_table_size(pages) + added, error)) {
		g_free(run);
		g_free(now);
		return false;
	}
	for (uint64_t i = 0; i < rec->npages && ok; i++) {
		gpointer key = GSIZE_TO_POINTER(rec->vpn + i);
		content *cur = g_hash_table_lookup(pages, key), *c;

		if (rec->verb == TRACE_FILLSEQ)
			c = content_rand(rec->seed + i);
		else
			c = content_apply(cur, &rec->content);
		/*
		 * A digest is copied as it is: hashing the model's stand-in bytes
		 * would replace the real page's digest. A whole-page form gives
		 * every page the same: digest it once.
		 */
		if (rec->content.form == CONTENT_DIGEST)
			*now = rec->content;
		else if (!whole || i == 0)
			digest_of(c, now);
		if (g_hash_table_insert(pages, key, c))	/* a page not followed before */
			held->pages++;
		if (run_n && same_content(run, now)) {
			run_n++;
			continue;
		}
		if (run_n)
			ok = put_run(w, rec, run_start, run_n, run, error);
		*run = *now;
		run_start = rec->vpn + i;
		run_n = 1;
	}
	if (ok && run_n)
		ok = put_run(w, rec, run_start, run_n, run, error);
	g_free(run);
	g_free(now);
	return ok;
}

static gboolean in_range(gpointer key, gpointer value, gpointer range)
{
	uint64_t v = GPOINTER_TO_SIZE(key), *r = range;

	return v >= r[0] && v < r[1];
}

static void copy_page(gpointer key, gpointer value, gpointer to)
{
	g_hash_table_insert(to, key, content_ref(value));
}

bool digest_convert(trace_reader *r, const char *out, enum trace_format fmt, uint64_t max_memory,
		    bool max_memory_given, GError **error)
{
	return digest_convert_capped(r, out, fmt, max_memory, max_memory_given,
				     DIGEST_MM_PAGES_MAX, error);
}

bool digest_convert_capped(trace_reader *r, const char *out, enum trace_format fmt,
			   uint64_t max_memory, bool max_memory_given, uint64_t mm_pages_max,
			   GError **error)
{
	struct held held = { .max = max_memory / HELD_PAGE_BYTES, .limit_bytes = max_memory,
			     .limit_given = max_memory_given, .path = trace_reader_path(r),
			     .mm_max = mm_pages_max };
	struct trace_record *rec = g_new(struct trace_record, 1);
	trace_writer *w = NULL;
	GHashTable *mms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
						 (GDestroyNotify)g_hash_table_unref);
	int version = trace_reader_version(r, error), got = -1;
	bool ok = true;

	if (version > 0)
		w = trace_writer_open_version(out, fmt, MAX(version, 4), error);
	if (!w)
		goto out;
	while (ok && (got = trace_reader_next(r, rec, error)) == 1) {
		switch (rec->verb) {
		case TRACE_WRITE:
		case TRACE_FILL:
		case TRACE_FILLSEQ:
			ok = store(w, pages_of(mms, rec->mm), rec, &held, error);
			continue;
		case TRACE_UNMAP: {
			GHashTable *p = pages_of(mms, rec->mm);
			uint64_t range[2] = { rec->vpn, rec->vpn + rec->npages };
			guint before = g_hash_table_size(p);

			/* a range of 2^32 pages is walked through the pages there are */
			if (rec->npages > g_hash_table_size(p))
				g_hash_table_foreach_remove(p, in_range, range);
			else
				for (uint64_t v = range[0]; v < range[1]; v++)
					g_hash_table_remove(p, GSIZE_TO_POINTER(v));
			held.pages -= before - g_hash_table_size(p);
			break;
		}
		case TRACE_EXIT:
			held.pages -= g_hash_table_size(pages_of(mms, rec->mm));
			g_hash_table_remove(mms, rec->mm);
			break;
		case TRACE_FORK: {
			GHashTable *child = pages_new(), *was = g_hash_table_lookup(mms, rec->child);

			/* checked before the copy: a fork doubles what its parent holds */
			held.pages += g_hash_table_size(pages_of(mms, rec->mm));
			held.pages -= was ? g_hash_table_size(was) : 0;
			if (!(ok = held_check(&held, rec, error))) {
				g_hash_table_unref(child);
				continue;
			}
			g_hash_table_foreach(pages_of(mms, rec->mm), copy_page, child);
			g_hash_table_replace(mms, g_strdup(rec->child), child);
			break;
		}
		default:
			break;
		}
		ok = trace_writer_put(w, rec, error);
	}
	ok = ok && got == 0;
	if (ok)
		ok = trace_writer_close(w, error);
	else
		trace_writer_abort(w);
out:
	g_hash_table_unref(mms);
	g_free(rec);
	return ok && w;
}
