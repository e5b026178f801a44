/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole reads and writes on a pipe or file descriptor: write(2) and read(2)
 * may do part of the work, or be interrupted by a signal, and a worker's
 * report or gnuplot's script must go across whole.
 */
#ifndef KSMSIM_UTIL_FD_IO_H
#define KSMSIM_UTIL_FD_IO_H

#include <stdbool.h>
#include <stddef.h>

/* All len bytes written (retrying after EINTR); false on an error. */
bool fd_write_all(int fd, const void *buf, size_t len);
/* Reads until len bytes, end of file or an error; the bytes read. */
size_t fd_read_all(int fd, void *buf, size_t len);

#endif
