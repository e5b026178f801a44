/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Messages about command-line options that name the option: what
 * getopt_long() leaves a command to say when it returns '?' (an unknown
 * option) or ':' (a value missing: give getopt an optstring that starts
 * with ':', after any '+'), and the name to put in front of a bad value.
 */
#ifndef KSMSIM_UTIL_OPTIONS_H
#define KSMSIM_UTIL_OPTIONS_H

#include <getopt.h>

/* "--trials" for the option whose val is c ("-o" if it has no long name). */
const char *option_name(const struct option *longopts, int c);
/*
 * After getopt_long() returned c ('?' or ':'): one line on stderr,
 * "PROG: --hash needs a value" or "PROG: unknown option '--bogus'", then
 * "(see 'PROG --help')". Returns EXIT_USAGE.
 */
int option_error(const char *prog, char **argv, const struct option *longopts, int c);

#endif
