// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run's observers (ksm_events.h): the measurements a run asked for,
 * each an ops table and its own state, called by the hooks behind one
 * branch. The model holds the list and nothing of what is in it.
 */
#include "sim/ksm_internal.h"

void ksm_observe(struct ksm *k, const struct ksm_observer_ops *ops, void *ctx)
{
	size_t n = k->obs ? k->obs->n : 0;

	k->obs = g_realloc(k->obs, sizeof(*k->obs) + (n + 1) * sizeof(k->obs->o[0]));
	k->obs->o[n] = (struct ksm_observer){ ops, ctx };
	k->obs->n = n + 1;
}

void ksm_observers_attach(struct ksm *k)
{
	if (k->opt.exposure) {
		k->expo = exposure_new(k);
		ksm_observe(k, &exposure_observer, k->expo);
	}
	if (k->opt.on_false_positive)
		ksm_observe(k, &false_positive_observer, NULL);
}

void ksm_observers_free(struct ksm *k)
{
	if (!k->obs)
		return;
	for (size_t i = 0; i < k->obs->n; i++)
		if (k->obs->o[i].ops->free)
			k->obs->o[i].ops->free(k->obs->o[i].ctx);
	g_free(k->obs);
	k->obs = NULL;
	k->expo = NULL;
}
