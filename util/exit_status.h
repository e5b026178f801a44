/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exit statuses shared by every ksmsim command: 0 success, 1 a negative
 * answer (differences found, a check failed), EXIT_USAGE for bad usage or
 * bad input, 128 + the signal's number when interrupted.
 */
#ifndef KSMSIM_UTIL_EXIT_STATUS_H
#define KSMSIM_UTIL_EXIT_STATUS_H

#define EXIT_USAGE 2

#endif
