// SPDX-License-Identifier: GPL-2.0-or-later
#include "sim/loop.h"

G_DEFINE_QUARK(loop-error-quark, loop_error)

struct clock {
	uint64_t now;		/* simulated µs */
	uint64_t offset;	/* settles so far: simulated = trace + offset */
	uint64_t next_sample;
	bool sampled;		/* a sample was taken ... */
	uint64_t last_sample;	/* ... at this time */
	uint64_t samples;	/* taken so far, up to LOOP_MAX_SAMPLES */
};

static bool sample_at(struct ksm *k, const struct loop_sinks *s, struct clock *c, uint64_t at,
		      GError **error)
{
	uint64_t trace_us = at >= c->offset ? at - c->offset : 0;

	/*
	 * A knob can make simulated time all but endless (sleep_millisecs
	 * 4294967295 through a settle: 49 days a batch), and samples follow
	 * it: bounded, so such a run ends with this line instead.
	 */
	if (++c->samples > LOOP_MAX_SAMPLES) {
		g_set_error(error, LOOP_ERROR, LOOP_ERROR_TRACE,
			    "simulated time reached %.0f s: more than %d samples at one each "
			    "%" G_GUINT64_FORMAT " ms (the most a run takes; a larger --interval-ms "
			    "takes fewer, or a knob such as sleep_millisecs makes ksmd too slow for "
			    "this trace)", at / 1e6, LOOP_MAX_SAMPLES, s->sample_every_us / 1000);
		return false;
	}
	c->sampled = true;
	c->last_sample = at;
	return s->sample(s->ctx, at, trace_us, k, error);
}

/* The samples due before until: at each, everything stamped up to it has happened. */
static bool emit_samples(struct ksm *k, const struct loop_sinks *s, struct clock *c,
			 uint64_t until, GError **error)
{
	if (!s->sample_every_us || !s->sample)
		return true;
	while (c->next_sample < until) {
		if (!sample_at(k, s, c, c->next_sample, error))
			return false;
		c->next_sample += s->sample_every_us;
	}
	return true;
}

/* The samples due up to the end, then one at the end itself unless it just had one. */
static bool emit_end_samples(struct ksm *k, const struct loop_sinks *s, struct clock *c,
			     GError **error)
{
	if (!s->sample_every_us || !s->sample)
		return true;
	if (!emit_samples(k, s, c, c->now + 1, error))
		return false;
	if (c->sampled && c->last_sample == c->now)
		return true;
	return sample_at(k, s, c, c->now, error);
}

static bool batch(struct ksm *k, const struct loop_sinks *s, struct clock *c,
		  struct loop_result *res, uint64_t at, GError **error)
{
	if (!emit_samples(k, s, c, at, error))
		return false;
	c->now = ksm_run_batch(k, at);
	res->batches++;
	if (s->check) {
		char *msg = ksm_check(k);
		if (msg) {
			g_set_error(error, LOOP_ERROR, LOOP_ERROR_INVARIANT,
				    "invariant violated after batch %" G_GUINT64_FORMAT
				    " (simulated time %" G_GUINT64_FORMAT " us): %s",
				    res->batches, at, msg);
			g_free(msg);
			return false;
		}
	}
	return true;
}

static bool record_error(GError **error, const trace_reader *r, const struct trace_record *rec,
			 GError *inner)
{
	g_set_error(error, LOOP_ERROR, LOOP_ERROR_TRACE, "%s:%" G_GUINT64_FORMAT ": %s",
		    trace_reader_path(r), rec->line, inner->message);
	g_error_free(inner);
	return false;
}

/*
 * The settle rule (traces/trace.h, the checker's too) against the model:
 * false with "FILE:LINE: settle needs ..." when the settle cannot end.
 */
static bool settle_can_end(const struct ksm *k, const trace_reader *r,
			   const struct trace_record *rec, GError **error)
{
	uint64_t knobs[KNOB_NR];

	for (int i = 0; i < KNOB_NR; i++)
		knobs[i] = ksm_knob(k, i);
	char *why = knob_settle_refusal(knobs, ksm_mm_registered(k));

	if (!why)
		return true;
	g_set_error(error, LOOP_ERROR, LOOP_ERROR_TRACE, "%s:%" G_GUINT64_FORMAT ": %s",
		    trace_reader_path(r), rec->line, why);
	g_free(why);
	return false;
}

bool loop_run(struct ksm *k, trace_reader *r, const struct loop_sinks *s,
	      struct loop_result *res, GError **error)
{
	struct clock c = { 0 };
	struct trace_record rec;
	int got;
	*res = (struct loop_result){ 0 };

	while ((got = trace_reader_next(r, &rec, error)) == 1) {
		if (s->limit && !s->limit(s->limit_ctx, r, &rec, error))
			return false;
		if (s->admit && !s->admit(s->ctx, r, &rec, error))
			return false;
		res->records++;
		res->trace_end_us = rec.t_us;
		if (s->progress && (res->records & 0x3ff) == 0)
			s->progress(s->ctx, r, res->records, res->trace_end_us);
		uint64_t t = rec.t_us + c.offset;
		/*
		 * Batches due before this record run first; one due at t runs
		 * after it. A long gap in the trace is a long run of batches:
		 * progress follows the trace clock through it, so a record far
		 * ahead (at 2^64 - 1 us, say) shows its percent and ETA instead
		 * of standing still.
		 */
		for (uint64_t nb; (nb = ksm_next_batch(k)) < t;) {
			if (!batch(k, s, &c, res, MAX(nb, c.now), error))
				return false;
			if (s->progress && (res->batches & 0x3fff) == 0)
				s->progress(s->ctx, r, res->records, MAX(nb, c.offset) - c.offset);
		}
		if (!emit_samples(k, s, &c, t, error))
			return false;
		c.now = MAX(c.now, t);

		if (rec.verb == TRACE_SETTLE) {
			struct ksm_counters cnt;
			ksm_counters(k, &cnt);
			uint64_t target = cnt.full_scans + rec.value;
			uint64_t start = c.now;
			/* the checker's rule, held against the model's state before and as it goes */
			while (cnt.full_scans < target) {
				if (!settle_can_end(k, r, &rec, error))
					return false;
				uint64_t nb = ksm_next_batch(k);
				if (nb == UINT64_MAX) {
					g_set_error(error, LOOP_ERROR, LOOP_ERROR_TRACE,
						    "%s:%" G_GUINT64_FORMAT ": settle cannot progress:"
						    " ksmd is not due", trace_reader_path(r), rec.line);
					return false;
				}
				if (!batch(k, s, &c, res, MAX(nb, c.now), error))
					return false;
				/* a long settle: the reporter throttles itself */
				if (s->progress && (res->batches & 0x3f) == 0)
					s->progress(s->ctx, r, res->records, res->trace_end_us);
				ksm_counters(k, &cnt);
			}
			c.offset += c.now - start;
		} else if (rec.verb == TRACE_MARK) {
			if (s->mark && !s->mark(s->ctx, rec.label, rec.t_us, k, error))
				return false;
		} else {
			GError *inner = NULL;
			if (!ksm_apply(k, &rec, c.now, &inner))
				return record_error(error, r, &rec, inner);
		}
	}
	if (got < 0 || !emit_end_samples(k, s, &c, error))
		return false;
	res->sim_end_us = c.now;
	return true;
}
