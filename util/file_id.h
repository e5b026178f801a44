/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Outputs that would destroy an input, or two outputs that would land on one
 * file, are refused before any work: files are compared by device and inode
 * (so a symlink or another spelling of the path cannot hide a clash), names
 * that do not exist yet by their resolved directory and base name.
 * Devices and FIFOs may be named more than once (two outputs to /dev/null
 * are fine); standard output ("-") may take one output only. "-" stands for
 * the file standard input or output is redirected from or to, when that is
 * a regular file: a command that prints on standard output lists it as an
 * output ("-"), so that --csv /dev/stdout or the same file by its name is
 * refused.
 */
#ifndef KSMSIM_UTIL_FILE_ID_H
#define KSMSIM_UTIL_FILE_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>

struct file_use {
	const char *option;	/* for the message: "--marks-csv", "-o", "input" */
	const char *path;	/* NULL: not given, skipped */
	bool output;
};

/* false with "OPTION PATH: same file as OPTION PATH" when two uses clash. */
bool file_uses_distinct(const struct file_use *uses, size_t n, GError **error);

#endif
