/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared checks of the trace-reader fuzz targets (fuzz_text.c, fuzz_binary.c,
 * fuzz_gz.c). Each target turns its input into the bytes of a trace file and
 * calls fuzz_check_trace(), which reads the whole trace and aborts (so that
 * libFuzzer, or the plain replay driver, reports it) when:
 *
 * - a rejected trace's GError is not exactly one line of the form
 *   "FILE:LINE: problem" or "FILE: offset N: problem" (FILE the path given to
 *   trace_reader_open), or a reader keeps going after an error;
 * - an accepted trace does not round-trip: every record, written through
 *   trace_writer in the binary form (and in the text form) and read back,
 *   must give the same canonical text (trace_record_format; blob pages are
 *   compared by their bytes, since writers renumber blobs);
 * - the writer refuses a record the reader accepted.
 *
 * Crashes, leaks and undefined behaviour are the sanitizers' business.
 */
#ifndef KSMSIM_FUZZ_COMMON_H
#define KSMSIM_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the trace whose file bytes are data[0..size) and checks it as above. */
void fuzz_check_trace(const uint8_t *data, size_t size);

/* zlib (gzip: true = gzip wrapper) compression of data into a new buffer. */
uint8_t *fuzz_deflate(const uint8_t *data, size_t size, int level, int gzip, size_t *out_len);

#endif
