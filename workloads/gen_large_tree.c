// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * large-tree: a very large set of stable, distinct pages (the unstable
 * tree) among pages that change in small, realistic ways: a counter
 * incremented, a timestamp rewritten, a few words of an array set, one bit
 * of a bitmap flipped. It exists to give KSM's checksum gate work at scale
 * (README "large-tree"): every change is a few bytes of a page that
 * otherwise stays as it was, and the changes come at periods from a sixth
 * of a full scan to several scans at the default knobs, so pages change
 * between two visits, and after they were inserted in the unstable tree.
 *
 * Changing pages sit in blocks, one per (kind, shared or own, period
 * class). In a block of period P ticks, page i changes at the ticks k with
 * (k - 1) % P == i % P, so every block writes n / P pages a tick and a
 * page's m-th change is m = (k - 1) / P. Everything a change writes is a
 * function of the page's seed and m (counters and timestamps need no
 * state); only a bitmap keeps its current word, since its bits flip back
 * and forth. Shared blocks are the same in every guest and change in lock
 * step (kernel data every guest holds alike), so they merge while idle and
 * a change is a copy-on-write; own blocks are distinct per guest.
 */
#include <stdio.h>
#include <string.h>
#include "hashes/hash.h"
#include "util/splitmix64.h"
#include "workloads/crcdelta.h"
#include "workloads/gen.h"

/*
 * The first four kinds are large-tree's; large-tree-crc adds the two a CRC
 * cannot see (README "large-tree-crc"): a superblock, 1020 bytes followed by
 * their own crc32c as ext4 stores it, whose fields change (the page's crc32c
 * stays: a CRC over data followed by its own CRC is a constant, whatever
 * came before), and a 16-byte window XORed with a delta both CRCs miss
 * (crcdelta.h).
 */
enum lt_kind { LT_COUNTER, LT_TIMESTAMP, LT_ARRAY, LT_BITMAP, LT_SUPERBLOCK, LT_GFDELTA,
	       LT_KINDS };
#define LT_PLAIN_KINDS 4

/* Where the superblock sits: offset 1024 of block 0, as ext4's; checksum at 1020 of it. */
#define LT_SB_OFF 1024u
#define LT_SB_LEN 1020u

#define LT_CLASSES 6
/* Period of class c: 16 << c ticks (67 s to 2133 s at the default 720 ticks in 3000 s). */
#define LT_BASE_PERIOD 16u

enum { TAG_LT_IMAGE = 0x300, TAG_LT_STABLE, TAG_LT_BLOCK, TAG_LT_BOOT };

/* Fractions of each VM's pages (estimates; README "large-tree"). */
static const struct {
	double image, zero, active, shared;	/* shared: of the active pages */
} lt = { .image = 0.05, .zero = 0.03, .active = 0.06, .shared = 0.25 };

struct lt_block {
	enum lt_kind kind;
	bool shared;
	unsigned period;
	uint64_t vpn, n;
	uint64_t *seed;		/* per guest (one for a shared block): page i is rand:(seed + i) */
	uint64_t *bitmap;	/* LT_BITMAP: the current word, per guest copy (n x copies) */
};

/* Word w of the page rand:seed (traces/FORMAT.md: SplitMix64 from state seed). */
static uint64_t rand_word(uint64_t seed, unsigned w)
{
	uint64_t st = seed + (uint64_t)w * SPLITMIX64_GAMMA;

	return splitmix64_next(&st);
}

/* A value derived from a page's seed and two labels: its per-change choices. */
static uint64_t mix(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t st = seed ^ (a * 0xd1342543de82ef95ULL);

	st = splitmix64_next(&st) ^ b;
	return splitmix64_next(&st);
}

/*
 * The superblock of page rand:s at its m-th change (m = UINT64_MAX: as
 * written at t = 0), with its checksum: two fields set, a write time and a
 * count of bytes written, then ext4's crc32c (the kernel's crc32c(~0, ...),
 * stored little-endian) over the 1020 bytes before it. Writes the fields
 * and the checksum; the rest of the page keeps rand:s's bytes.
 */
static void superblock(struct gen *g, const char *mm, uint64_t vpn, uint64_t s, uint64_t m,
		       uint64_t now_ns)
{
	uint8_t sb[LT_SB_LEN + 4];
	/* s_wtime and s_kbytes_written's places, as u64 words of the page */
	unsigned w_time = LT_SB_OFF / 8 + 6, w_kb = LT_SB_OFF / 8 + 47;
	uint64_t t = now_ns, kb = rand_word(s, w_kb) + (m + 1) * (1 + mix(s, m, 5) % 4096);
	uint32_t crc;

	crcdelta_rand_bytes(s, LT_SB_OFF, LT_SB_LEN, sb);
	if (m != UINT64_MAX) {
		memcpy(sb + (w_time * 8 - LT_SB_OFF), &t, 8);
		memcpy(sb + (w_kb * 8 - LT_SB_OFF), &kb, 8);
		gen_write_word(g, mm, vpn, w_time, t);
		gen_write_word(g, mm, vpn, w_kb, kb);
	}
	crc = ~crc32c(0, sb, LT_SB_LEN);
	for (unsigned j = 0; j < 4; j++)
		sb[LT_SB_LEN + j] = (uint8_t)(crc >> (8 * j));
	gen_write_bytes(g, mm, vpn, LT_SB_OFF + LT_SB_LEN, sb + LT_SB_LEN, 4);
}

/* Both CRCs' blind deltas (one basis for the run: it depends on nothing). */
static struct crc_kernel lt_kernel;

/*
 * The m-th change of page i of block b in one guest copy (c: its index in
 * seed[]). boot_ns: the guest's clock at t = 0 (0 for a shared page).
 */
static void change(struct gen *g, const char *mm, struct lt_block *b, unsigned c, uint64_t i,
		   uint64_t m, uint64_t boot_ns)
{
	uint64_t s = b->seed[c] + i, vpn = b->vpn + i;
	uint64_t h = mix(s, 0, 0);	/* the page's fixed choices */
	unsigned w = (unsigned)(h % 512);

	switch (b->kind) {
	case LT_SUPERBLOCK:
		superblock(g, mm, vpn, s, m, boot_ns + g->now_us * 1000 + (mix(s, m, 1) % 1000));
		break;
	case LT_GFDELTA: {
		/*
		 * A 16-byte window (its place fixed per page) holds the page's
		 * bytes XORed with a fresh blind delta: two contents differ by
		 * the XOR of two deltas, itself blind, so every change is one
		 * the CRCs miss.
		 */
		unsigned off = (unsigned)((h >> 16) % (CRCDELTA_PAGE - CRCDELTA_LEN));
		uint8_t cur[CRCDELTA_LEN], d[CRCDELTA_LEN];
		uint64_t st = mix(s, m, 6);

		crcdelta_rand_bytes(s, off, CRCDELTA_LEN, cur);
		crcdelta_pick(&lt_kernel, &st, d);
		for (unsigned j = 0; j < CRCDELTA_LEN; j++)
			cur[j] ^= d[j];
		gen_write_bytes(g, mm, vpn, off, cur, CRCDELTA_LEN);
		break;
	}
	case LT_COUNTER: {
		/* an event counter: its word grows by the page's step at each change */
		uint64_t step = 1 + (h >> 32) % 16;

		gen_write_word(g, mm, vpn, w, rand_word(s, w) + (m + 1) * step);
		break;
	}
	case LT_TIMESTAMP:
		/* a nanosecond clock read when the page was last touched */
		gen_write_word(g, mm, vpn, w, boot_ns + g->now_us * 1000 + (mix(s, m, 1) % 1000));
		break;
	case LT_ARRAY: {
		/* one to four elements of an array of u64 set to new values */
		uint64_t r = mix(s, m, 2);
		unsigned k = 1 + (unsigned)(r & 3);

		for (unsigned j = 0; j < k; j++)
			gen_write_word(g, mm, vpn, (unsigned)(mix(s, m, 3 + j) % 512),
				       mix(s, m, 8 + j));
		break;
	}
	case LT_BITMAP: {
		/* one bit of a 64-bit bitmap word set or cleared (an allocation bitmap) */
		uint64_t *cur = &b->bitmap[c * b->n + i];

		*cur ^= UINT64_C(1) << (mix(s, m, 2) % 64);
		gen_write_word(g, mm, vpn, w % 8, *cur);
		break;
	}
	default:
		break;
	}
}

/* kinds: LT_PLAIN_KINDS (large-tree) or LT_KINDS (large-tree-crc). */
static bool large_tree(struct gen *g, const struct gen_size *sz, unsigned kinds)
{
	uint64_t M = sz->pages, vpn = GEN_GUEST_BASE;
	uint64_t n_image = (uint64_t)((double)M * lt.image), n_zero = (uint64_t)((double)M * lt.zero);
	uint64_t n_active = (uint64_t)((double)M * lt.active);
	uint64_t n_stable = M - n_image - n_zero - n_active;
	unsigned vms = sz->vms, nb = 0;
	struct lt_block blocks[LT_KINDS * 2 * LT_CLASSES];
	char (*mm)[16] = g_malloc0(sizeof(*mm) * vms);
	uint64_t *boot_ns = g_new(uint64_t, vms);
	uint64_t v_stable = vpn + n_image + n_zero, v = v_stable + n_stable;
	uint64_t per_kind = n_active / kinds;
	bool ok;

	if (kinds > LT_PLAIN_KINDS)
		crcdelta_kernel(&lt_kernel);
	/* Active pages: per kind, a shared and an own part, each split over the period classes. */
	for (unsigned k = 0; k < kinds; k++)
		for (unsigned sh = 0; sh < 2; sh++) {
			uint64_t part = sh ? (uint64_t)((double)per_kind * lt.shared)
					   : per_kind - (uint64_t)((double)per_kind * lt.shared);

			for (unsigned c = 0; c < LT_CLASSES; c++) {
				struct lt_block *b = &blocks[nb++];
				unsigned copies = sh ? 1 : vms;

				*b = (struct lt_block){ (enum lt_kind)k, sh, LT_BASE_PERIOD << c, v,
							part / LT_CLASSES + (c < part % LT_CLASSES),
							g_new(uint64_t, copies), NULL };
				v += b->n;
				for (unsigned x = 0; x < copies; x++)
					b->seed[x] = gen_seed(g, TAG_LT_BLOCK, nb * 4096u + x, sh);
				if (b->kind == LT_BITMAP) {
					b->bitmap = g_new(uint64_t, b->n * copies + 1);
					for (unsigned x = 0; x < copies; x++)
						for (uint64_t i = 0; i < b->n; i++) {
							uint64_t s = b->seed[x] + i;

							b->bitmap[x * b->n + i] =
								rand_word(s, (unsigned)(mix(s, 0, 0) % 512) % 8);
						}
				}
			}
		}
	for (unsigned x = 0; x < vms; x++) {
		snprintf(mm[x], sizeof(mm[x]), "vm%u", x + 1);
		/* guests booted at different times: their clocks differ */
		boot_ns[x] = gen_seed(g, TAG_LT_BOOT, x, 0) % (UINT64_C(86400) * 1000000000);
		gen_spawn(g, mm[x]);
		gen_map(g, mm[x], vpn, M);
		gen_advise(g, mm[x], vpn, M, true);
		gen_fillseq(g, mm[x], vpn, n_image, gen_seed(g, TAG_LT_IMAGE, 0, 0));
		if (n_zero)
			gen_fill(g, mm[x], vpn + n_image, n_zero, CONTENT_ZERO, 0);
		gen_fillseq(g, mm[x], v_stable, n_stable, gen_seed(g, TAG_LT_STABLE, x, 0));
		for (unsigned j = 0; j < nb; j++) {
			struct lt_block *b = &blocks[j];
			uint64_t bs = b->seed[b->shared ? 0 : x];

			gen_fillseq(g, mm[x], b->vpn, b->n, bs);
			/* a superblock is written whole, its checksum right, before any change */
			for (uint64_t i = 0; b->kind == LT_SUPERBLOCK && i < b->n && !g->failed; i++)
				superblock(g, mm[x], b->vpn + i, bs + i, UINT64_MAX, 0);
		}
	}
	for (unsigned k = 1; k < sz->ticks && !g->failed; k++) {
		gen_at(g, sz->duration_us * k / sz->ticks);
		for (unsigned j = 0; j < nb; j++) {
			struct lt_block *b = &blocks[j];
			uint64_t m = (k - 1) / b->period;

			for (uint64_t i = (k - 1) % b->period; i < b->n && !g->failed; i += b->period)
				for (unsigned x = 0; x < vms; x++) {
					/* a shared page: the same change in every guest's copy */
					unsigned c = b->shared ? 0 : x;

					if (b->shared && b->kind == LT_BITMAP && x) {
						gen_write_word(g, mm[x], b->vpn + i,
							       (unsigned)(mix(b->seed[0] + i, 0, 0) % 512) % 8,
							       b->bitmap[i]);
						continue;
					}
					change(g, mm[x], b, c, i, m, b->shared ? 0 : boot_ns[x]);
				}
		}
	}
	for (unsigned j = 0; j < nb; j++) {
		g_free(blocks[j].seed);
		g_free(blocks[j].bitmap);
	}
	g_free(boot_ns);
	g_free(mm);
	gen_at(g, sz->duration_us);
	ok = gen_mark(g, "end");
	return ok;
}

bool gen_large_tree(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	(void)o;
	return large_tree(g, sz, LT_PLAIN_KINDS);
}

bool gen_large_tree_crc(struct gen *g, const struct gen_opts *o, const struct gen_size *sz)
{
	(void)o;
	return large_tree(g, sz, LT_KINDS);
}
