/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A trace's page contents turned into digests (trace version 4, FORMAT.md
 * "Version 4: digests"): what `ksmsim trace convert --content digest` does,
 * so that a trace with bytes and its digest form can be replayed side by
 * side. Every store stays one store at the same time and address; only
 * what it stores is written differently.
 */
#ifndef KSMSIM_WORKLOADS_DIGEST_H
#define KSMSIM_WORKLOADS_DIGEST_H

#include <stdbool.h>
#include <glib.h>
#include "traces/reader.h"
#include "traces/writer.h"

/*
 * Read r to its end, write out (format fmt, version max(r's, 4)): each page a
 * write, fill or fillseq leaves non-zero becomes digest:<XXH3-128 of its
 * bytes>, and one left all zero becomes zero. Partial stores (word, patch,
 * bytes) are applied to the page's bytes as the model holds them, so the
 * converter follows every mm's pages (fork copies them, unmap and exit drop
 * them). A store of one content to a range stays one fill; stores that
 * leave pages different become a run of records, equal neighbours merged
 * into one fill. r is the caller's, opened and limited as every trace
 * tool's reader is (its blobs under --max-memory: trace_reader_spill_blobs)
 * and freed by it. The pages it follows are held to max_memory too (0: no
 * limit), at 64 bytes a page; given says whether the user set it (for the
 * error line). False with the reader's, the writer's or the limit's error;
 * out is then not written.
 */
bool digest_convert(trace_reader *r, const char *out, enum trace_format fmt, uint64_t max_memory,
		    bool max_memory_given, GError **error);

/*
 * The most pages one mm may have followed: each mm's pages are a GLib hash
 * table, which crashes growing past about 2^28 entries (GLib 2.74), so a
 * conversion past 2^27 pages (512 GiB) of one mm is refused at the record
 * that would go past, before it takes any of them.
 */
#define DIGEST_MM_PAGES_MAX (UINT64_C(1) << 27)
/* digest_convert with the per-mm bound given (the tests' small one). */
bool digest_convert_capped(trace_reader *r, const char *out, enum trace_format fmt,
			   uint64_t max_memory, bool max_memory_given, uint64_t mm_pages_max,
			   GError **error);

#endif
