/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Pareto frontier of modelled ksmd CPU against pages saved, and the
 * picks made on it: what `ksmsim advise` and `ksmsim tune` judge their rows
 * by. A row is reduced to a point (its CPU, in whatever unit the command
 * prints, and its mean pages saved, both at their printed precision), so
 * that both commands apply one rule.
 */
#ifndef KSMSIM_ANALYSIS_FRONTIER_H
#define KSMSIM_ANALYSIS_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>

struct frontier_point {
	double cpu;		/* modelled ksmd CPU: ms (advise) or % of one CPU (tune) */
	double saved;		/* pages saved, mean over the run */
};

/*
 * v at the precision the outputs print it ("%.*f"), so that the frontier
 * is judged on what the table and CSV show.
 */
double frontier_round(double v, int decimals);

/* a has no more CPU and no smaller saving than b, one of the two strictly. */
bool frontier_dominates(const struct frontier_point *a, const struct frontier_point *b);

/* on[i]: no other point dominates point i. */
void frontier_mark(const struct frontier_point *p, size_t n, bool *on);

/*
 * Among the points with in[i] (in NULL: all), the one that saves the most
 * (ties: the least CPU, then the first); -1 when there is none. With in[i]
 * "within the CPU budget" this is the pick for a budget.
 */
long frontier_best(const struct frontier_point *p, size_t n, const bool *in);

/* Among the points with in[i] (in NULL: all), the cheapest (ties: the first); -1 when none. */
long frontier_cheapest(const struct frontier_point *p, size_t n, const bool *in);

/*
 * The indices i with in[i] (in NULL: all), from the cheapest to the
 * dearest, ties in index order, into order (room for n): how many.
 */
size_t frontier_by_cpu(const struct frontier_point *p, size_t n, const bool *in, size_t *order);

#endif
