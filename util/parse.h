/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Numbers given on the command line, read by one rule everywhere, the same
 * rule a trace's numbers follow: plain decimal digits, no sign, no spaces,
 * no base prefix ("0100" is one hundred), and nothing after the number.
 */
#ifndef KSMSIM_UTIL_PARSE_H
#define KSMSIM_UTIL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* false when s is not a decimal number in [0, max]; *out is then untouched. */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
/*
 * A finite decimal number in the C locale ("0.5", "1e3"); no spaces, no hex,
 * no inf or nan. A subnormal ("1e-308") is taken; what rounds to 0 or past
 * the largest double ("1e-400", "1e400") is not.
 */
bool parse_double(const char *s, double *out);

#endif
