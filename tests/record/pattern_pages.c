// SPDX-License-Identifier: GPL-2.0-or-later
/* The known pages of the recorder's test subjects (pattern_pages.h). */
#include <string.h>
#include <time.h>
#include "pattern_pages.h"

void page_bytes(uint8_t *p, unsigned int k, unsigned int i)
{
	unsigned int src = i % 4 == 1 ? i - 1 : i;

	if (i % 4 == 3) {
		memset(p, k % 2 ? 0x40 + k : 0, PAGE);
		return;
	}
	for (unsigned int j = 0; j < PAGE; j++)
		p[j] = (uint8_t)(j * (2 * k + 1) + src * 31 + k * 7);
	memcpy(p, "KSMPATT", 8);
	memcpy(p + 8, &k, 4);
	memcpy(p + 12, &src, 4);
}

void write_phase(uint8_t *m, unsigned int n, unsigned int k)
{
	for (unsigned int i = 0; i < n; i++)
		page_bytes(m + (size_t)i * PAGE, k, i);
}

void sleep_ms(long ms, const volatile sig_atomic_t *stop)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && !(stop && *stop))
		;
}
