/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
 *
 * Convention (zlib's crc32() style): @seed is a previous result, 0 to start.
 * The functions invert on entry and on exit, so crc32c(0, buf, len) is the
 * standard CRC-32C (initial value ~0, final XOR ~0), crc32c(0, "123456789",
 * 9) == 0xE3069283, and crc32c(crc32c(0, a, n), b, m) is the CRC of a||b.
 * The kernel's crc32c(~0, buf, len) returns the value before the final
 * inversion, i.e. ~crc32c(0, buf, len).
 */
#ifndef KSMSIM_CRC32C_H
#define KSMSIM_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The registered implementation: ISA-L's crc32_iscsi when ksmsim is built
 * with libisal (optional; about 3x faster on a page with AVX-512), else
 * crc32c_own().
 */
uint32_t crc32c(uint32_t seed, const void *buf, size_t len);
/* Ours, chosen at load time: the SSE4.2 path when the CPU has it. */
uint32_t crc32c_own(uint32_t seed, const void *buf, size_t len);
/* Portable slicing-by-8 tables; any CPU. */
uint32_t crc32c_sw(uint32_t seed, const void *buf, size_t len);
/* SSE4.2 crc32 in 3 interleaved streams, combined with PCLMULQDQ. */
bool crc32c_hw_available(void);
uint32_t crc32c_hw(uint32_t seed, const void *buf, size_t len);	/* only if available */
/* What crc32c() and crc32c_own() run, for `ksmsim hashes`. */
const char *crc32c_impl(void);
const char *crc32c_own_impl(void);

#endif
