/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The edit distance behind "did you mean": inserts, deletes, replacements
 * and swaps of two neighbours, ignoring case, between names of up to 32
 * characters (UINT_MAX for longer ones). Two edits or fewer is a typo.
 */
#ifndef KSMSIM_UTIL_NEAREST_H
#define KSMSIM_UTIL_NEAREST_H

#define NAME_TYPO_EDITS 2

unsigned name_distance(const char *a, const char *b);

#endif
