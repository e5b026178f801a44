/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Retiming a trace: every record's time scaled by one factor, everything
 * else kept byte for byte (ksmsim trace retime), e.g. to replay a recording
 * made under a slowed-down emulator at the speed of the real machine.
 */
#ifndef KSMSIM_TRACES_RETIME_H
#define KSMSIM_TRACES_RETIME_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

/*
 * Writes the trace at in (a file: it is read twice) to out with every t_us
 * multiplied by factor (finite, more than 0) and rounded to the nearest
 * microsecond; a monotone map, so times stay in order. Out has in's form:
 *  - text: a line transform that replaces only the leading time token of
 *    each record's line (a token with leading zeros keeps its width where
 *    the new time fits); the header, comments, blank lines, blob lines and
 *    all spacing are kept. The validating reader reads in alongside, so in
 *    is checked as fully as by every other trace tool;
 *  - binary: read and written again by the reader and writer with the new
 *    times, so a binary ksmsim wrote comes back byte for byte but for them;
 *  - gzip-compressed either: the transformed stream gzip-compressed again
 *    (level 6, as the writer's).
 * A time whose product is beyond 2^64-1 µs is an error at its record
 * ("IN:LINE: ..." for text, "IN: record N: ..." for binary). On any error
 * nothing is written (out is committed whole or not at all).
 */
bool trace_retime(const char *in, const char *out, double factor, GError **error);

#endif
