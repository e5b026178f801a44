// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CRC-32C two ways, identical results: a portable slicing-by-8 loop and
 * the SSE4.2 crc32 instruction. The instruction has a latency of 3 cycles
 * but a throughput of 1, so one dependency chain uses a third of it; three
 * independent streams over thirds of the buffer keep it busy, and their
 * partial CRCs are joined with one carry-less multiply each.
 */
#include <string.h>
#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

/* crc32c() itself is ISA-L's when built with it; see the end. */

#define CRC32C_POLY 0x82F63B78u	/* reflected Castagnoli */

/* Bytes per stream in a 3-stream chunk: 3 * 1360 = 4080 of a 4096 page. */
#define STREAM_BYTES 1360u

static uint32_t table[8][256];
/* x^(8n - 33) mod P for n = STREAM_BYTES and 2 * STREAM_BYTES; see join. */
static uint64_t shift1, shift2;
static bool have_hw;

/* a * b mod P, both reflected (bit 31 is x^0). */
static uint32_t gf_mulmod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (int i = 0; i < 32; i++) {
		if (a & (1u << (31 - i)))
			p ^= b;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;	/* b *= x */
	}
	return p;
}

/* x^n mod P, reflected, by square and multiply. */
static uint32_t gf_xpow(uint64_t n)
{
	uint32_t r = 1u << 31, sq = 1u << 30;	/* x^0, x^1 */

	for (; n; n >>= 1) {
		if (n & 1)
			r = gf_mulmod(r, sq);
		sq = gf_mulmod(sq, sq);
	}
	return r;
}

__attribute__((constructor)) static void crc32c_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
	shift1 = gf_xpow(8ull * STREAM_BYTES - 33);
	shift2 = gf_xpow(16ull * STREAM_BYTES - 33);
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2") &&
		  __builtin_cpu_supports("pclmul");
#endif
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));	/* unaligned-safe; little-endian host */
	return v;
}

/* Raw CRC state in, raw state out: no inversions. */
static uint32_t sw_update(uint32_t crc, const unsigned char *p, size_t len)
{
	for (; len && ((uintptr_t)p & 7); len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v = load64(p) ^ crc;

		crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^
		      table[5][(v >> 16) & 0xff] ^ table[4][(v >> 24) & 0xff] ^
		      table[3][(v >> 32) & 0xff] ^ table[2][(v >> 40) & 0xff] ^
		      table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

uint32_t crc32c_sw(uint32_t seed, const void *buf, size_t len)
{
	return ~sw_update(~seed, buf, len);
}

#if defined(__x86_64__)
#include <immintrin.h>

#define HW_TARGET __attribute__((target("sse4.2,pclmul")))

HW_TARGET static uint32_t hw_serial(uint32_t crc, const unsigned char *p,
				    size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; len -= 8, p += 8)
		c = _mm_crc32_u64(c, load64(p));
	crc = c;
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

/*
 * crc * x^n mod P with k = x^(n-33): the carry-less product of two
 * reflected 32-bit values is the reflected 64-bit product times x, and
 * crc32 of a 64-bit word with state 0 multiplies it by x^32 mod P.
 */
HW_TARGET static inline uint64_t clmul(uint32_t crc, uint64_t k)
{
	__m128i r = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc),
					 _mm_cvtsi64_si128((long long)k), 0);
	return (uint64_t)_mm_cvtsi128_si64(r);
}

HW_TARGET static uint32_t hw_update(uint32_t crc, const unsigned char *p,
				    size_t len)
{
	while (len >= 3 * STREAM_BYTES) {
		const unsigned char *q = p + STREAM_BYTES, *r = q + STREAM_BYTES;
		uint64_t c0 = crc, c1 = 0, c2 = 0;

		/* Unrolled by 2 so loop overhead stays off the crc32 port. */
		for (size_t i = 0; i < STREAM_BYTES; i += 16) {
			c0 = _mm_crc32_u64(c0, load64(p + i));
			c1 = _mm_crc32_u64(c1, load64(q + i));
			c2 = _mm_crc32_u64(c2, load64(r + i));
			c0 = _mm_crc32_u64(c0, load64(p + i + 8));
			c1 = _mm_crc32_u64(c1, load64(q + i + 8));
			c2 = _mm_crc32_u64(c2, load64(r + i + 8));
		}
		crc = (uint32_t)c2 ^ (uint32_t)_mm_crc32_u64(0,
			clmul((uint32_t)c0, shift2) ^ clmul((uint32_t)c1, shift1));
		p += 3 * STREAM_BYTES;
		len -= 3 * STREAM_BYTES;
	}
	return hw_serial(crc, p, len);
}

uint32_t crc32c_hw(uint32_t seed, const void *buf, size_t len)
{
	return ~hw_update(~seed, buf, len);
}
#else
uint32_t crc32c_hw(uint32_t seed, const void *buf, size_t len)
{
	return crc32c_sw(seed, buf, len);	/* never chosen: have_hw false */
}
#endif

bool crc32c_hw_available(void)
{
	return have_hw;
}

uint32_t crc32c_own(uint32_t seed, const void *buf, size_t len)
{
	return have_hw ? crc32c_hw(seed, buf, len) : crc32c_sw(seed, buf, len);
}

const char *crc32c_own_impl(void)
{
	return have_hw ? "sse4.2 crc32 x3 streams + pclmulqdq join" :
			 "portable slicing-by-8";
}

#ifdef HAVE_ISAL
#include <limits.h>
#include <isa-l/crc.h>

uint32_t crc32c(uint32_t seed, const void *buf, size_t len)
{
	/* ISA-L takes and returns the raw state: invert at both ends. */
	unsigned char *p = (unsigned char *)buf;
	uint32_t crc = ~seed;

	for (; len > INT_MAX; len -= INT_MAX, p += INT_MAX)
		crc = crc32_iscsi(p, INT_MAX, crc);
	return ~crc32_iscsi(p, (int)len, crc);
}

const char *crc32c_impl(void)
{
	return "ISA-L crc32_iscsi (its own dispatch)";
}
#else
uint32_t crc32c(uint32_t seed, const void *buf, size_t len)
{
	return crc32c_own(seed, buf, len);
}

const char *crc32c_impl(void)
{
	return crc32c_own_impl();
}
#endif
