/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory sizes, for options such as --max-memory and the messages about them. */
#ifndef KSMSIM_UTIL_SIZE_H
#define KSMSIM_UTIL_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes: a decimal number, then K, M, G or T (powers of 1024) or nothing. */
bool parse_size(const char *s, uint64_t *out);
/* "1.5 GiB": the largest unit that keeps the number at least 1. */
void format_size(uint64_t bytes, char *buf, size_t cap);
/* MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. */
uint64_t mem_available(void);

#endif
