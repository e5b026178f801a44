// SPDX-License-Identifier: GPL-2.0-or-later
/* One run of a trace through the model (run.h). */
#include <string.h>
#include "content/content.h"
#include "sim/run.h"
#include "util/exit_status.h"
#include "util/progress.h"
#include "util/size.h"

G_DEFINE_QUARK(ksmsim-run-error-quark, run_error)

int run_error_status(const GError *error)
{
	return g_error_matches(error, RUN_ERROR, RUN_ERROR_INVARIANT) ? 1 : EXIT_USAGE;
}

/* Any error of a run into RUN_ERROR, its message kept. */
static void classify(GError **error)
{
	GError *e = error ? *error : NULL;

	if (!e || e->domain == RUN_ERROR)
		return;
	/* a broken invariant is the model's bug, not the input's */
	e->code = g_error_matches(e, LOOP_ERROR, LOOP_ERROR_INVARIANT) ? RUN_ERROR_INVARIANT :
		RUN_ERROR_INPUT;
	e->domain = RUN_ERROR;
}

bool run_config_resolve(struct run_config *cfg, GError **error)
{
	const struct ksm_policy *p = &cfg->model.policy;
	const struct page_hash *h = cfg->hash ? cfg->hash : hash_lookup(HASH_DEFAULT);

	cfg->hash_name = h->name;
	if (p->row && !p->row->uses_hash) {
		if (cfg->hash) {
			g_set_error(error, RUN_ERROR, RUN_ERROR_INPUT, "--hash %s: --policy %s decides"
				    " without the page checksum; leave --hash out", cfg->hash->name,
				    p->row->name);
			return false;
		}
		/* no checksum ("none" in every output); partial-hash hashes its samples as xxhash */
		h = hash_lookup(p->detector == KSM_DETECT_PARTIAL ? HASH_DEFAULT : "none");
		cfg->hash_name = "none";
	}
	cfg->model.hash = h;
	cost_table_default(&cfg->model.costs, h);
	if (cfg->costs_csv && !cost_table_load(&cfg->model.costs, cfg->costs_csv, h, error)) {
		classify(error);
		return false;
	}
	return true;
}

/* A blob's bytes: the reader's copy, the model's content for a page holding it. */
#define RUN_BLOB_BYTES 4096ull

uint64_t run_memory_need(const struct run_config *cfg, const trace_reader *r)
{
	const struct trace_check *ck = trace_reader_check((trace_reader *)r);
	uint64_t pages = trace_check_written_pages(ck);
	/* what the reader holds in memory, and the pages that may hold one each */
	uint64_t blobs = trace_reader_blobs_in_memory(r) + MIN(trace_reader_blobs(r), pages);
	uint64_t need = ksm_memory_estimate(pages, trace_check_live_mms(ck), cfg->ideal);

	/* the exposure figures: a sample or two per merge, in arrays that double */
	if (cfg->model.exposure && need < UINT64_MAX / 2)
		need = pages > (UINT64_MAX / 2 - need) / KSM_EXPOSURE_PAGE_BYTES ? UINT64_MAX :
		       need + pages * KSM_EXPOSURE_PAGE_BYTES;

	/*
	 * A reader keeps every blob (4 KiB) for the whole read, in memory up to
	 * its limit and on disk beyond it (limit_blobs), and the model a page's
	 * bytes as long as a page holds them.
	 */
	if (need > UINT64_MAX / 2 || blobs > (UINT64_MAX / 2) / RUN_BLOB_BYTES)
		return UINT64_MAX;
	return need + blobs * RUN_BLOB_BYTES;
}

/* The model's memory need at this record against the limit; false with the refusal. */
static bool fits(const struct run_config *cfg, const trace_reader *r,
		 const struct trace_record *rec, uint64_t *need_out, GError **error)
{
	const struct trace_check *ck = trace_reader_check((trace_reader *)r);
	uint64_t pages = trace_check_written_pages(ck), mms = trace_check_live_mms(ck);
	uint64_t blobs = trace_reader_blobs(r);
	uint64_t need = run_memory_need(cfg, r);
	char need_s[32], limit_s[32], blobs_s[48] = "";

	if (blobs)
		snprintf(blobs_s, sizeof(blobs_s), ", %" G_GUINT64_FORMAT " blobs", blobs);

	if (need_out)
		*need_out = MAX(*need_out, need);
	if (!cfg->max_memory || need <= cfg->max_memory)
		return true;
	format_size(need, need_s, sizeof(need_s));
	format_size(cfg->max_memory, limit_s, sizeof(limit_s));
	g_set_error(error, RUN_ERROR, RUN_ERROR_MEMORY,
		    "%s:%" G_GUINT64_FORMAT ": the model would need about %s here (%" G_GUINT64_FORMAT
		    " written pages, %" G_GUINT64_FORMAT " live mms%s), more than %s %s",
		    trace_reader_path(r), rec->line, need_s, pages, mms, blobs_s, limit_s,
		    cfg->max_memory_given ? "(--max-memory)" :
		    "(the machine's MemAvailable; --max-memory sets the limit)");
	return false;
}

/*
 * Blobs are untimed: a stream of blob lines reaches no record fits() could
 * refuse. So the reader keeps in memory the blobs a quarter of the limit
 * holds (the rest is the model's: a host-size trace of captured pages has
 * far more blobs than pages alive at once) and the others on disk, up to
 * --max-disk or while $TMPDIR keeps 1 GiB free; past that it stops.
 */
static void limit_blobs(const struct run_config *cfg, trace_reader *r)
{
	uint64_t base = ksm_memory_estimate(0, 0, cfg->ideal);
	char limit_s[32], *why;

	if (!cfg->max_memory)
		return;
	format_size(cfg->max_disk, limit_s, sizeof(limit_s));
	why = g_strdup_printf("with it the blobs kept on disk would need more than %s "
			      "(--max-disk)", limit_s);
	trace_reader_spill_blobs(r, MAX(1, (cfg->max_memory - MIN(base, cfg->max_memory)) / 4 /
				     RUN_BLOB_BYTES), cfg->max_disk, why);
	g_free(why);
}

/* An mm --domain names that the trace never spawns or forks: refused. */
static bool domains_seen(const struct run_config *cfg, const char *unseen, GError **error)
{
	if (!unseen)
		return true;
	g_set_error(error, RUN_ERROR, RUN_ERROR_INPUT, "--domain %s=...: no mm '%s' in %s",
		    (const char *)cfg->model.domains->names->pdata[
			    GPOINTER_TO_UINT(g_hash_table_lookup(cfg->model.domains->of_mm, unseen)) - 1],
		    unseen, cfg->trace);
	return false;
}

/* The smallest name of cfg's domain table that seen lacks, or NULL. */
static const char *first_unseen(const struct run_config *cfg, GHashTable *seen)
{
	const char *first = NULL;
	GHashTableIter it;
	gpointer key, val;

	g_hash_table_iter_init(&it, cfg->model.domains->of_mm);
	while (g_hash_table_iter_next(&it, &key, &val))
		if (!g_hash_table_contains(seen, key) && (!first || strcmp(key, first) < 0))
			first = key;
	return first;
}

bool run_estimate(const struct run_config *cfg, struct progress *p, struct run_estimate *est,
		  GError **error)
{
	trace_reader *r = trace_reader_open(cfg->trace, error);
	struct trace_record rec;
	GHashTable *seen = cfg->model.domains ?
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) : NULL;
	int got;

	*est = (struct run_estimate){ 0 };
	if (!r) {
		classify(error);
		return false;
	}
	trace_check_count_written(trace_reader_check(r));
	limit_blobs(cfg, r);
	if (p)
		progress_phase(p, "checking the trace", "records");
	while ((got = trace_reader_next(r, &rec, error)) == 1) {
		if (!fits(cfg, r, &rec, &est->need, error)) {
			got = -1;
			break;
		}
		est->end_us = rec.t_us;
		est->digests = trace_reader_digests(r);
		if (seen && (rec.verb == TRACE_SPAWN || rec.verb == TRACE_FORK))
			g_hash_table_add(seen, g_strdup(rec.verb == TRACE_FORK ? rec.child : rec.mm));
		if ((++est->records & 0xffff) == 0 && p)
			progress_update(p, est->records, trace_reader_offset(r), trace_reader_size(r));
	}
	if (got == 0 && p) {
		progress_update(p, est->records, trace_reader_offset(r), trace_reader_size(r));
		progress_finish(p);
	}
	if (got == 0 && seen && !domains_seen(cfg, first_unseen(cfg, seen), error))
		got = -1;
	if (seen)
		g_hash_table_destroy(seen);
	trace_reader_free(r);
	classify(error);
	return got == 0;
}

bool run_open(struct run *run, const struct run_config *cfg, GError **error)
{
	*run = (struct run){ .cfg = cfg, .opt = cfg->model };
	run->reader = trace_reader_open(cfg->trace, error);
	int version = run->reader ? trace_reader_version(run->reader, error) : -1;

	if (version < 0) {
		run_close(run);
		classify(error);
		return false;
	}
	/* a version 3 trace can hold THPs: rows show /proc/vmstat's THP events */
	run->opt.thp_columns = version >= 3;
	/* the limit is held record by record: the pages written so far count */
	if (cfg->max_memory)
		trace_check_count_written(trace_reader_check(run->reader));
	limit_blobs(cfg, run->reader);
	run->store = content_store_new();
	run->store_was = content_store_use(run->store);
	run->k = ksm_new(&run->opt);
	return true;
}

/* The memory limit, record by record: loop_sinks.limit. */
static bool limit(void *cfg, const trace_reader *r, const struct trace_record *rec,
		  GError **error)
{
	return fits(cfg, r, rec, NULL, error);
}

bool run_replay(struct run *run, const struct loop_sinks *sinks, struct loop_result *res,
		GError **error)
{
	struct loop_sinks s = *sinks;

	s.check = run->cfg->model.check;
	if (run->cfg->max_memory) {
		s.limit = limit;
		s.limit_ctx = (void *)run->cfg;
	}
	bool ok = loop_run(run->k, run->reader, &s, res, error);

	/* a pipe is read once: an mm --domain names is found missing at its end */
	ok = ok && domains_seen(run->cfg, ksm_domains_unseen(run->k), error);
	if (!ok)
		classify(error);
	return ok;
}

void run_close(struct run *run)
{
	if (run->store)
		content_store_use(run->store);	/* the model's pages go back to their store */
	ksm_free(run->k);
	if (run->store) {
		content_store_use(run->store_was);
		content_store_free(run->store);
	}
	if (run->reader)
		trace_reader_free(run->reader);
	run->k = NULL;
	run->reader = NULL;
	run->store = run->store_was = NULL;
}
