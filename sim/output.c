// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every output of a run shares (output.h): a snapshot of the model,
 * the columns a row of it shows, the provenance line. Each output's row
 * (struct run_output) and writer live with the observer that fills it:
 * the marks and per-mm rows in marks_output.c, the time series in
 * sampler.c, the summary in summary.c, exposure in exposure.c, the
 * false-positive log in false_positives.c, the profile in profile.c, the
 * policy's figures in policy_stats.c.
 */
#include <string.h>
#include "sim/output.h"
#include "util/escape.h"

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

void output_provenance(FILE *f, const struct output_run *r, const char *what)
{
	char *label_line = escape_line(r->trace_label);

	fprintf(f, "# ksmsim %s model of Linux %s KSM; trace %s; checksum %s%s%s\n",
		KSMSIM_VERSION, ksm_kernel_name(r->kernel), label_line, r->hash_label,
		what ? "; " : "", what ? what : "");
	g_free(label_line);
}
