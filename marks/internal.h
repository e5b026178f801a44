/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internal to marks/: what the writers of both registries share. */
#ifndef KSMSIM_MARKS_INTERNAL_H
#define KSMSIM_MARKS_INTERNAL_H

#include <stddef.h>
#include "marks/marks.h"

/* The field at p, of a kind other than MARKS_FRACTION, as a row shows it. */
void marks_format_raw(enum marks_kind kind, const void *p, char *buf, size_t size);

#endif
