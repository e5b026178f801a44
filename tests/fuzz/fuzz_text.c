// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz target: the text reader. The input is the trace file as it is (the
 * reader decides the form from the first bytes, so inputs that look like
 * gzip or binary are left to the other targets).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if ((size >= 1 && data[0] == 0x89) || (size >= 2 && data[0] == 0x1f && data[1] == 0x8b))
		return 0;
	fuzz_check_trace(data, size);
	return 0;
}
