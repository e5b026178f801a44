// SPDX-License-Identifier: GPL-2.0-or-later
/* Strict number parsing for options (parse.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <glib.h>
#include "util/parse.h"

bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

bool parse_double(const char *s, double *out)
{
	char *end;

	/* strtod would skip leading spaces and take "inf", "nan" and hex. */
	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	for (const char *c = s; *c; c++)
		if (*c == 'x' || *c == 'X')
			return false;
	errno = 0;
	double v = g_ascii_strtod(s, &end);
	/* ERANGE on a subnormal result ("1e-308") is no error: the value is representable */
	if (errno == ERANGE && v != 0 && isfinite(v))
		errno = 0;
	if (errno || *end || end == s || !isfinite(v))
		return false;
	*out = v;
	return true;
}
