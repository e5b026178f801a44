// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every output of a run shares (output.h): a snapshot of the model,
 * the columns a row of it shows, the marks rows. Each output's own writer
 * lives with the observer that fills it: the time series in sampler.c, the
 * summary in summary.c, exposure in exposure.c, the false-positive log in
 * false_positives.c, the policy's figures in policy_stats.c.
 */
#include <string.h>
#include "sim/output.h"

/* The version whose columns a row of the model shows (ksm_thp_columns, --kernel). */
int output_rows_version(bool thp, bool linux_6_1)
{
	return (thp ? MARKS_THP_VERSION : 0) | (linux_6_1 ? MARKS_LINUX_6_1 : 0);
}

/* A snapshot as marks_put_values() takes it. */
struct marks_values output_values(const struct snapshot *s)
{
	return (struct marks_values){
		.c = &s->c, .t = &s->t, .ideal = s->has_ideal ? &s->ideal : NULL,
	};
}

void snapshot_take(struct ksm *k, bool with_ideal, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->thp = ksm_thp_columns(k);
	s->linux_6_1 = ksm_modelled_kernel(k) == KSM_KERNEL_6_1;
	ksm_counters(k, &s->c);
	ksm_truth(k, &s->t);
	if (with_ideal) {
		ksm_ideal(k, &s->ideal);
		s->has_ideal = true;
	}
}

void output_marks_header(FILE *f, bool thp, bool linux_6_1)
{
	marks_write_header(f, MARKS_SET_ALL, output_rows_version(thp, linux_6_1));
}

void output_marks_row(FILE *f, const char *label, uint64_t t_us, const struct snapshot *s)
{
	struct marks_values v = output_values(s);

	marks_write_row(f, MARKS_SET_ALL, output_rows_version(s->thp, s->linux_6_1), label, t_us,
			&v);
}
