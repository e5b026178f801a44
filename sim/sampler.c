// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The time-series sampler (output.h): a run's samples, held one behind so
 * that the last gets the oracle, and the means and peaks over them that
 * run's summary, advise and tune report. Its own file and its own state
 * (struct sampler), so that every command takes the same samples.
 */
#include <inttypes.h>
#include "sim/output.h"

static void series_stat_add(struct series_stat *x, uint64_t v)
{
	x->sum += v;
	x->peak = MAX(x->peak, v);
}

void series_stats_add(struct series_stats *st, uint64_t sim_us, const struct snapshot *s)
{
	if (!sim_us)
		return;
	st->samples++;
	series_stat_add(&st->pages_sharing, s->c.pages_sharing);
	series_stat_add(&st->pages_unshared, s->c.pages_unshared);
	series_stat_add(&st->pages_volatile, s->c.pages_volatile);
	series_stat_add(&st->saved, snapshot_saved(s));
	if (s->has_ideal) {
		st->ideal_samples++;
		st->missed_sum += s->ideal.missed_merges;
		st->fraction_sum += marks_dedup_fraction(&s->ideal);
	}
}

void sampler_init(struct sampler *sm, struct series_stats *stats, FILE *series, bool ideal,
		  uint64_t interval_ms, uint64_t ideal_interval_ms)
{
	*sm = (struct sampler){
		.stats = stats,
		.series = series,
		.ideal = ideal,
		/* no period, no samples: nothing to round to */
		.ideal_every_us = interval_ms ? (ideal_interval_ms + interval_ms - 1) / interval_ms *
						interval_ms * 1000 : 0,
	};
}

static void sampler_flush(struct sampler *sm)
{
	if (!sm->have_pending)
		return;
	series_stats_add(sm->stats, sm->pending_us, &sm->pending);
	if (sm->each && sm->pending_us)
		sm->each(sm->each_ctx, sm->pending_us, &sm->pending);
	if (sm->series)
		output_series_row(sm->series, sm->pending_us, sm->pending_trace_us, &sm->pending);
	sm->have_pending = false;
}

void sampler_take(struct sampler *sm, struct ksm *k, uint64_t sim_us, uint64_t trace_us)
{
	bool oracle = sm->ideal && sim_us >= sm->next_ideal_us;

	if (oracle)
		sm->next_ideal_us = sim_us + sm->ideal_every_us;
	sampler_flush(sm);
	snapshot_take(k, oracle, &sm->pending);
	sm->pending_us = sim_us;
	sm->pending_trace_us = trace_us;
	sm->have_pending = true;
}

void sampler_finish(struct sampler *sm, struct ksm *k)
{
	if (sm->have_pending && sm->ideal && !sm->pending.has_ideal)
		snapshot_take(k, true, &sm->pending);
	sampler_flush(sm);
}

bool sampler_sink(void *sampler, uint64_t sim_us, uint64_t trace_us, struct ksm *k,
		  GError **error)
{
	sampler_take(sampler, k, sim_us, trace_us);
	return true;
}

/* ---- the --csv rows ---- */

void output_series_header(FILE *f, bool thp, bool linux_6_1)
{
	fputs("t_us,trace_t_us", f);
	marks_put_header(f, MARKS_SET_ALL, output_rows_version(thp, linux_6_1));
	fputc('\n', f);
}

void output_series_row(FILE *f, uint64_t sim_us, uint64_t trace_us, const struct snapshot *s)
{
	struct marks_values v = output_values(s);

	fprintf(f, "%" PRIu64 ",%" PRIu64, sim_us, trace_us);
	marks_put_values(f, MARKS_SET_ALL, output_rows_version(s->thp, s->linux_6_1), &v);
	fputc('\n', f);
}

static void series_start(FILE *f, const struct output_run *r)
{
	output_series_header(f, r->thp, r->kernel == KSM_KERNEL_6_1);
}

/* Its rows are the sampler's (struct sampler .series). */
const struct run_output series_output = {
	"csv",
	"time series: a row at 0 and every --interval-ms of\n"
	"simulated time (settles included), and one at the\n"
	"end of the run; the oracle's columns (mergeable_pages\n"
	"... dedup_fraction) are filled on the samples due\n"
	"every --ideal-interval-ms, empty on the others",
	.start = series_start, .samples = true,
};
