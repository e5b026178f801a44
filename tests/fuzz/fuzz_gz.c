// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz target: gzip-compressed traces (text or binary inside). The first
 * input byte says how the rest becomes a file:
 *   0 the rest is the file as it is;
 *   1 gzip(rest);
 *   2 gzip(rest) cut short by byte 2 bytes;
 *   3 two gzip members, rest split at byte 2 (mod its length + 1);
 *   4 gzip(rest) followed by the byte 2 as garbage;
 *   5 gzip(rest) with the byte at position byte 2 (mod the length) flipped;
 *   other values: as 1.
 */
#include <glib.h>
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0] <= 5 ? data[0] : 1, arg = 0;
	const uint8_t *rest = data + 1;
	size_t n = size - 1;
	if (mode == 0) {
		fuzz_check_trace(rest, n);
		return 0;
	}
	if (mode >= 2) {
		if (n < 1)
			return 0;
		arg = rest[0];
		rest++;
		n--;
	}
	GByteArray *file = g_byte_array_new();
	size_t zlen;
	uint8_t *z;
	if (mode == 3) {
		size_t cut = arg % (n + 1);
		z = fuzz_deflate(rest, cut, 6, 1, &zlen);
		g_byte_array_append(file, z, (guint)zlen);
		g_free(z);
		z = fuzz_deflate(rest + cut, n - cut, 6, 1, &zlen);
	} else {
		z = fuzz_deflate(rest, n, 6, 1, &zlen);
	}
	if (mode == 2)
		zlen = arg < zlen ? zlen - arg : 0;
	if (mode == 5 && zlen)
		z[arg % zlen] ^= 0xff;
	g_byte_array_append(file, z, (guint)zlen);
	if (mode == 4) {
		guint8 g = (guint8)arg;
		g_byte_array_append(file, &g, 1);
	}
	fuzz_check_trace(file->data, file->len);
	g_byte_array_free(file, TRUE);
	g_free(z);
	return 0;
}
