/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The edit distance behind "did you mean": inserts, deletes, replacements
 * and swaps of two neighbours, ignoring case, between names of up to 32
 * characters (UINT_MAX for longer ones). Two edits or fewer is a typo.
 */
#ifndef KSMSIM_UTIL_NEAREST_H
#define KSMSIM_UTIL_NEAREST_H

#include <stddef.h>

#define NAME_TYPO_EDITS 2

unsigned name_distance(const char *a, const char *b);

/*
 * The row of a table whose name is a typo's likely meaning of given (the
 * fewest edits, at most NAME_TYPO_EDITS, the first row on a tie), or -1:
 * rows of row_size bytes, each with its name (a const char *) at
 * name_offset, as offsetof(struct ROW, name) gives it.
 */
ptrdiff_t name_nearest(const char *given, const void *rows, size_t nrows, size_t row_size,
		       size_t name_offset);

#endif
