// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz target: the binary reader. The first input byte says how the rest
 * becomes a file, so that mutations reach the record decoder instead of
 * dying in zlib's checksum:
 *   bits 0-1: 0 the rest is the file as it is;
 *             1 header + zlib(rest), the rest being the decompressed records;
 *             2 as 1, then cut the compressed data short by byte 2 bytes;
 *             3 as 1, then append byte 2 as garbage.
 *   bit 2:    header version 2 instead of 1 (modes 1-3).
 *   bit 3:    zlib level 0 (stored blocks) instead of 6.
 * Byte 2 exists (is consumed) in modes 2 and 3 only.
 */
#include <string.h>
#include <glib.h>
#include "fuzz_common.h"
#include "traces/binary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0] & 3, arg = 0;
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
	size_t zlen;
	uint8_t *z = fuzz_deflate(rest, n, data[0] & 8 ? 0 : 6, 0, &zlen);
	if (mode == 2)
		zlen = arg < zlen ? zlen - arg : 0;
	GByteArray *file = g_byte_array_new();
	g_byte_array_append(file, (const guint8 *)BIN_MAGIC, 8);
	guint8 version = data[0] & 4 ? 2 : 1;
	g_byte_array_append(file, &version, 1);
	g_byte_array_append(file, z, (guint)zlen);
	if (mode == 3) {
		guint8 g = (guint8)arg;
		g_byte_array_append(file, &g, 1);
	}
	fuzz_check_trace(file->data, file->len);
	g_byte_array_free(file, TRUE);
	g_free(z);
	return 0;
}
