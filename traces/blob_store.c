// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The blob store (blob_store.h): memory slabs for the first mem_max blobs,
 * then an unlinked temporary file written BLOB_SLAB blobs at a time (the
 * blobs not written yet wait in `pending`, from where a record may name
 * them too). A blob's place follows from its id alone: below mem_max in a
 * slab, else at (id - mem_max) x 4096 in the file or, past what was
 * written, in pending.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "traces/blob_store.h"
#include "traces/trace.h"

/* What the spill file leaves free on its file system when no disk_max is set. */
#define SPILL_RESERVE (1ull << 30)

void blob_store_init(struct blob_store *b)
{
	*b = (struct blob_store){ .slabs = g_ptr_array_new_with_free_func(g_free),
				  .mem_max = UINT64_MAX, .fd = -1 };
}

void blob_store_clear(struct blob_store *b)
{
	if (b->slabs)
		g_ptr_array_free(b->slabs, TRUE);
	if (b->fd >= 0)
		close(b->fd);
	g_free(b->pending);
	g_free(b->disk_why);
	*b = (struct blob_store){ .fd = -1 };
}

void blob_store_spill(struct blob_store *b, uint64_t mem_max, uint64_t disk_max,
		      const char *disk_why)
{
	/* blobs already in memory stay there */
	b->mem_max = MAX(mem_max, blob_store_in_memory(b));
	b->disk_max = disk_max;
	g_free(b->disk_why);
	b->disk_why = g_strdup(disk_why);
}

uint64_t blob_store_in_memory(const struct blob_store *b)
{
	return MIN(b->n, b->mem_max);
}

uint64_t blob_store_on_disk(const struct blob_store *b)
{
	return b->n - blob_store_in_memory(b);
}

static char *io_why(const struct blob_store *b, const char *what, int err)
{
	return g_strdup_printf("blob %" G_GUINT64_FORMAT ": cannot %s the blobs beyond the "
			       "memory limit in %s: %s", b->n, what, g_get_tmp_dir(),
			       g_strerror(err));
}

static bool open_file(struct blob_store *b, char **why)
{
	char *name = g_build_filename(g_get_tmp_dir(), "ksmsim-blobs-XXXXXX", NULL);
	int fd = g_mkstemp_full(name, O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0) {
		*why = io_why(b, "keep", errno);
		g_free(name);
		return false;
	}
	/* unlinked at once: nothing is left behind, whatever ends the process */
	unlink(name);
	g_free(name);
	b->fd = fd;
	b->pending = g_malloc((size_t)BLOB_SLAB * TRACE_PAGE_SIZE);
	return true;
}

/* Writes the BLOB_SLAB pending blobs, within the file system's free space. */
static bool flush(struct blob_store *b, char **why)
{
	size_t len = (size_t)BLOB_SLAB * TRACE_PAGE_SIZE, done = 0;
	struct statvfs fs;

	if (!b->disk_max) {
		if (fstatvfs(b->fd, &fs) < 0) {
			*why = io_why(b, "measure the free space for", errno);
			return false;
		}
		if ((uint64_t)fs.f_bavail * fs.f_frsize < len + SPILL_RESERVE) {
			*why = g_strdup_printf("blob %" G_GUINT64_FORMAT ": the blobs beyond the "
					       "memory limit, kept in %s, would leave less than "
					       "1 GiB free there", b->n, g_get_tmp_dir());
			return false;
		}
	}
	while (done < len) {
		ssize_t w = pwrite(b->fd, b->pending + done, len - done,
				   (off_t)(b->written * TRACE_PAGE_SIZE + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*why = io_why(b, "write", w < 0 ? errno : ENOSPC);
			return false;
		}
		done += (size_t)w;
	}
	b->written += BLOB_SLAB;
	return true;
}

uint8_t *blob_store_new(struct blob_store *b, char **why)
{
	uint64_t k, pend;

	if (b->n < b->mem_max) {
		if ((uint64_t)b->slabs->len * BLOB_SLAB <= b->n)
			g_ptr_array_add(b->slabs, g_malloc((size_t)BLOB_SLAB * TRACE_PAGE_SIZE));
		k = b->n++;
		return (uint8_t *)b->slabs->pdata[k / BLOB_SLAB] + (k % BLOB_SLAB) * TRACE_PAGE_SIZE;
	}
	k = b->n - b->mem_max;		/* its place among the spilled */
	if (b->disk_max && (k + 1) > b->disk_max / TRACE_PAGE_SIZE) {
		*why = g_strdup_printf("blob %" G_GUINT64_FORMAT ": %s", b->n,
				       b->disk_why ? b->disk_why : "too many blobs");
		return NULL;
	}
	if (b->fd < 0 && !open_file(b, why))
		return NULL;
	pend = k - b->written;
	if (pend == BLOB_SLAB) {
		if (!flush(b, why))
			return NULL;
		pend = 0;
	}
	b->n++;
	return b->pending + pend * TRACE_PAGE_SIZE;
}

void blob_store_drop_last(struct blob_store *b)
{
	if (b->n)
		b->n--;
}

bool blob_store_get(struct blob_store *b, uint64_t id, uint8_t *dst, char **why)
{
	uint64_t k;
	size_t done = 0;

	if (id < b->mem_max) {
		memcpy(dst, (uint8_t *)b->slabs->pdata[id / BLOB_SLAB] +
		       (id % BLOB_SLAB) * TRACE_PAGE_SIZE, TRACE_PAGE_SIZE);
		return true;
	}
	k = id - b->mem_max;
	if (k >= b->written) {
		memcpy(dst, b->pending + (k - b->written) * TRACE_PAGE_SIZE, TRACE_PAGE_SIZE);
		return true;
	}
	while (done < TRACE_PAGE_SIZE) {
		ssize_t got = pread(b->fd, dst + done, TRACE_PAGE_SIZE - done,
				    (off_t)(k * TRACE_PAGE_SIZE + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			*why = g_strdup_printf("blob %" G_GUINT64_FORMAT ": cannot read it back "
					       "from %s: %s", id, g_get_tmp_dir(),
					       got < 0 ? g_strerror(errno) : "the file is short");
			return false;
		}
		done += (size_t)got;
	}
	return true;
}
