// SPDX-License-Identifier: GPL-2.0-or-later
/* The frontier of CPU against pages saved, and the picks on it (frontier.h). */
#include <stdio.h>
#include <glib.h>
#include "analysis/frontier.h"

double frontier_round(double v, int decimals)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return g_ascii_strtod(buf, NULL);
}

bool frontier_dominates(const struct frontier_point *a, const struct frontier_point *b)
{
	return a->cpu <= b->cpu && a->saved >= b->saved && (a->cpu < b->cpu || a->saved > b->saved);
}

void frontier_mark(const struct frontier_point *p, size_t n, bool *on)
{
	for (size_t i = 0; i < n; i++) {
		on[i] = true;
		for (size_t j = 0; j < n && on[i]; j++)
			if (j != i && frontier_dominates(&p[j], &p[i]))
				on[i] = false;
	}
}

long frontier_best(const struct frontier_point *p, size_t n, const bool *in)
{
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if ((!in || in[i]) &&
		    (best < 0 || p[i].saved > p[best].saved ||
		     (p[i].saved == p[best].saved && p[i].cpu < p[best].cpu)))
			best = (long)i;
	return best;
}

long frontier_cheapest(const struct frontier_point *p, size_t n, const bool *in)
{
	long cheapest = -1;

	for (size_t i = 0; i < n; i++)
		if ((!in || in[i]) && (cheapest < 0 || p[i].cpu < p[cheapest].cpu))
			cheapest = (long)i;
	return cheapest;
}

size_t frontier_by_cpu(const struct frontier_point *p, size_t n, const bool *in, size_t *order)
{
	size_t m = 0;

	/* an insertion sort: stable, and the rows are few */
	for (size_t i = 0; i < n; i++) {
		if (in && !in[i])
			continue;
		size_t at = m++;
		while (at && p[order[at - 1]].cpu > p[i].cpu) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = i;
	}
	return m;
}
