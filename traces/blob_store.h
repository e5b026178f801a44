/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The v2 blob store behind the trace reader (internal to traces/): every
 * blob a trace defines, by id, for the whole read, since a record may name
 * any earlier one. The first mem_max blobs are kept in memory; the rest go
 * to an unlinked temporary file in $TMPDIR and are read back with pread
 * when a record names them, so a trace of captured pages (a host's worth of
 * distinct pages, most of them written once) replays on a machine with
 * less memory than its blobs. The file is bounded: by disk_max bytes, or,
 * without one, by the free space of its file system less 1 GiB, so that a
 * stream of blob lines cannot fill the disk.
 */
#ifndef KSMSIM_TRACES_BLOB_STORE_H
#define KSMSIM_TRACES_BLOB_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#define BLOB_SLAB 256	/* blobs a memory slab and a write to the file hold */

struct blob_store {
	GPtrArray *slabs;	/* memory: BLOB_SLAB a slab, so growing never copies */
	uint64_t n;		/* blobs defined */
	uint64_t mem_max;	/* blobs kept in memory at most; UINT64_MAX: all */
	uint64_t disk_max;	/* bytes on disk at most; 0: free space less 1 GiB */
	char *disk_why;		/* the refusal past disk_max, e.g. "... (--max-disk)" */
	int fd;			/* the temporary file, -1 until the first spill */
	uint8_t *pending;	/* spilled blobs not written yet (BLOB_SLAB at most) */
	uint64_t written;	/* spilled blobs in the file */
};

void blob_store_init(struct blob_store *b);
void blob_store_clear(struct blob_store *b);
/* Beyond mem_max blobs in memory, spill (blob_store.h's header comment). */
void blob_store_spill(struct blob_store *b, uint64_t mem_max, uint64_t disk_max,
		      const char *disk_why);
/*
 * Room for blob n (its id: the number defined before it), to be filled
 * with its 4096 bytes before the next call; NULL with *why ("blob N: ...",
 * to free) when it cannot be kept.
 */
uint8_t *blob_store_new(struct blob_store *b, char **why);
/* A failed fill gives the last blob back. */
void blob_store_drop_last(struct blob_store *b);
/* Copies blob id (< n) to dst; false with *why (to free) on an I/O error. */
bool blob_store_get(struct blob_store *b, uint64_t id, uint8_t *dst, char **why);
uint64_t blob_store_in_memory(const struct blob_store *b);
uint64_t blob_store_on_disk(const struct blob_store *b);

#endif
