// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The memory limit (run.h): what the model may hold at a record, held
 * against --max-memory (or MemAvailable) record by record, by the check of
 * the whole trace before a run and as the run grows; its own state (the
 * peak need), a limit sink of the loop (loop_sinks.limit), and where a
 * reader keeps its blobs under the limit.
 */
#include "sim/run.h"
#include "util/size.h"

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
	 * its limit and on disk beyond it (memory_limit_blobs), and the model a page's
	 * bytes as long as a page holds them.
	 */
	if (need > UINT64_MAX / 2 || blobs > (UINT64_MAX / 2) / RUN_BLOB_BYTES)
		return UINT64_MAX;
	return need + blobs * RUN_BLOB_BYTES;
}

bool memory_limit_fits(struct memory_limit *ml, const trace_reader *r,
		       const struct trace_record *rec, GError **error)
{
	const struct run_config *cfg = ml->cfg;
	const struct trace_check *ck = trace_reader_check((trace_reader *)r);
	uint64_t pages = trace_check_written_pages(ck), mms = trace_check_live_mms(ck);
	uint64_t blobs = trace_reader_blobs(r);
	uint64_t need = run_memory_need(cfg, r);
	char need_s[32], limit_s[32], blobs_s[48] = "";

	if (blobs)
		snprintf(blobs_s, sizeof(blobs_s), ", %" G_GUINT64_FORMAT " blobs", blobs);

	ml->peak = MAX(ml->peak, need);
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
 * Blobs are untimed: a stream of blob lines reaches no record memory_limit_fits() could
 * refuse. So the reader keeps in memory the blobs a quarter of the limit
 * holds (the rest is the model's: a host-size trace of captured pages has
 * far more blobs than pages alive at once) and the others on disk, up to
 * --max-disk or while $TMPDIR keeps 1 GiB free; past that it stops.
 */
void memory_limit_blobs(const struct run_config *cfg, trace_reader *r)
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


bool memory_limit_sink(void *ml, const trace_reader *r, const struct trace_record *rec,
		       GError **error)
{
	return memory_limit_fits(ml, r, rec, error);
}
