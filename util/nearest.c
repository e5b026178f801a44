// SPDX-License-Identifier: GPL-2.0-or-later
/* How far apart two names are, for "did you mean": see nearest.h. */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <glib.h>
#include "util/nearest.h"

unsigned name_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned d[3][33];

	if (n > 32 || m > 32)
		return UINT_MAX;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		unsigned *row = d[i % 3], *up = d[(i - 1) % 3], *up2 = d[(i + 1) % 3];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			bool same = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]);
			unsigned v = MIN(up[j] + 1, row[j - 1] + 1);

			v = MIN(v, up[j - 1] + !same);
			if (i > 1 && j > 1 && g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 2]) &&
			    g_ascii_tolower(a[i - 2]) == g_ascii_tolower(b[j - 1]))
				v = MIN(v, up2[j - 2] + 1);
			row[j] = v;
		}
	}
	return d[n % 3][m];
}

ptrdiff_t name_nearest(const char *given, const void *rows, size_t nrows, size_t row_size,
		       size_t name_offset)
{
	ptrdiff_t best = -1;
	unsigned best_d = NAME_TYPO_EDITS + 1;	/* a typo, or nothing */

	for (size_t i = 0; given && i < nrows; i++) {
		const char *row = (const char *)rows + i * row_size;
		unsigned d = name_distance(given, *(const char *const *)(row + name_offset));

		if (d < best_d) {
			best_d = d;
			best = (ptrdiff_t)i;
		}
	}
	return best;
}
