/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The known pages the recorder's test subjects write (pattern.c, attach.c),
 * so that a recorded trace, or a process's own memory, can be checked byte
 * for byte: check_record.py's page_bytes knows the same formula.
 */
#ifndef KSMSIM_TESTS_RECORD_PATTERN_PAGES_H
#define KSMSIM_TESTS_RECORD_PATTERN_PAGES_H

#include <signal.h>
#include <stdint.h>

#define PAGE 4096

/*
 * Page i of phase k. i % 4: 0 and 2 a header plus a non-uniform pattern,
 * 1 a copy of page i - 1 (the trace must store it once), 3 zero in even
 * phases and byte 0x40 + k in odd ones.
 */
void page_bytes(uint8_t *p, unsigned int k, unsigned int i);
/* The n pages at m, phase k. */
void write_phase(uint8_t *m, unsigned int n, unsigned int k);
/* Sleep ms, through signals, until *stop is set (stop NULL: the whole time). */
void sleep_ms(long ms, const volatile sig_atomic_t *stop);

#endif
