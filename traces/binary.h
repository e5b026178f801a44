/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The binary trace form (FORMAT.md, "Binary form"): constants and the varint coding shared
 * by the reader and the writer.
 */
#ifndef KSMSIM_TRACES_BINARY_H
#define KSMSIM_TRACES_BINARY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define BIN_MAGIC "\x89KSMB\r\n\x1a"
#define BIN_MAGIC_LEN 8
#define BIN_VERSION 1		/* what trace_writer_open writes */
#define BIN_VERSION_MAX 4	/* 2 adds blobs, 3 fork, prctl and THP advice, 4 digests */
#define BIN_HEADER_LEN (BIN_MAGIC_LEN + 1)

/* Low four bits of the opcode byte. */
enum bin_kind {
	BIN_END,
	BIN_SPAWN,
	BIN_MAP,
	BIN_ADVISE_MERGEABLE,	/* form BIN_ADVICE_THP (v3): advise hugepage */
	BIN_ADVISE_UNMERGEABLE,	/* form BIN_ADVICE_THP (v3): advise nohugepage */
	BIN_WRITE,
	BIN_FILL,
	BIN_FILLSEQ,
	BIN_UNMAP,
	BIN_EXIT,
	BIN_SET,
	BIN_SETTLE,
	BIN_MARK,
	BIN_BLOB,	/* v2: opcode byte exactly 13, then 4096 bytes; id implicit */
	BIN_FORK,	/* v3: parent slot, child name (u8 length, bytes); the child takes a slot */
	BIN_PRCTL,	/* v3: slot, varint memory-merge value (0 or 1) */
	BIN_NR_KINDS
};

#define BIN_OP_KIND 0x0f
#define BIN_OP_FORM_SHIFT 4	/* bits 4-6: content form of write and fill, advice pair of advise */
#define BIN_OP_FORM 0x70
#define BIN_OP_TIME 0x80	/* a varint time delta >= 1 follows */

/*
 * The form of the two advise kinds names the madvise() pair: the first kind
 * is the pair's first advice, the second kind its second. Version 1 and 2
 * know only BIN_ADVICE_KSM.
 */
enum bin_advice {
	BIN_ADVICE_KSM,		/* MADV_MERGEABLE / MADV_UNMERGEABLE */
	BIN_ADVICE_THP,		/* v3: MADV_HUGEPAGE / MADV_NOHUGEPAGE */
};

/* No record is longer: opcode, five varints, a 64-byte name or 4096 data bytes. */
#define BIN_MAX_RECORD (4096 + 256)

#define BIN_VARINT_MAX 10

static inline uint8_t *bin_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t bin_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t bin_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/*
 * Decode one varint at *pp. The caller guarantees BIN_VARINT_MAX readable
 * bytes. Longer than ten bytes, beyond 64 bits or not minimal (a final zero
 * byte) sets *bad; the canonical bytes are the only accepted ones.
 */
static inline uint64_t bin_get_varint(const uint8_t **pp, bool *bad)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;

	if (__builtin_expect(v < 0x80, 1)) {
		*pp = p;
		return v;
	}
	v &= 0x7f;
	for (unsigned int shift = 7;; shift += 7) {
		uint64_t b = *p++;

		if (shift == 63) {
			if (b != 1)
				*bad = true;
			v |= b << 63;
			break;
		}
		v |= (b & 0x7f) << shift;
		if (b < 0x80) {
			if (b == 0)
				*bad = true;
			break;
		}
	}
	*pp = p;
	return v;
}

#endif
