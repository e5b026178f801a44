// SPDX-License-Identifier: GPL-2.0-or-later
/* One run of a trace through the model (run.h). */
#include <string.h>
#include "content/content.h"
#include "sim/run.h"
#include "util/exit_status.h"
#include "util/progress.h"

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
	struct memory_limit ml = { .cfg = cfg };
	int got;

	*est = (struct run_estimate){ 0 };
	if (!r) {
		classify(error);
		return false;
	}
	trace_check_count_written(trace_reader_check(r));
	memory_limit_blobs(cfg, r);
	if (p)
		progress_phase(p, "checking the trace", "records");
	while ((got = trace_reader_next(r, &rec, error)) == 1) {
		if (!memory_limit_fits(&ml, r, &rec, error)) {
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
	est->need = ml.peak;
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
	memory_limit_blobs(cfg, run->reader);
	run->store = content_store_new();
	run->store_was = content_store_use(run->store);
	run->k = ksm_new(&run->opt);
	return true;
}

bool run_replay(struct run *run, const struct loop_sinks *sinks, struct loop_result *res,
		GError **error)
{
	struct loop_sinks s = *sinks;
	struct memory_limit ml = { .cfg = run->cfg };

	s.check = run->cfg->model.check;
	if (run->cfg->max_memory) {
		s.limit = memory_limit_sink;
		s.limit_ctx = &ml;
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
	if (run->store) {
		content_store_use(run->store);	/* the model's pages go back to their store */
		content_store_closing(run->store);
	}
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
