// SPDX-License-Identifier: GPL-2.0-or-later
/* Memory sizes: read from options, printed, and what the machine has (size.h). */
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "util/parse.h"
#include "util/size.h"

bool parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	size_t n = s ? strlen(s) : 0;
	unsigned shift = 0;
	uint64_t v;

	if (n > 1 && strchr(units, s[n - 1])) {
		shift = 10 * (unsigned)(strchr(units, s[n - 1]) - units + 1);
		n--;
	}
	char *digits = g_strndup(s ? s : "", n);
	bool ok = parse_u64(digits, UINT64_MAX >> shift, &v);

	g_free(digits);
	if (ok)
		*out = v << shift;
	return ok;
}

void format_size(uint64_t bytes, char *buf, size_t cap)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%" G_GUINT64_FORMAT " bytes", bytes);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
}

uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}
