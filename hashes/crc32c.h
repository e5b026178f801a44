/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Transitional: crc32c() is declared in hashes/hash.h, the other CRC-32C
 * functions in hashes/hashes_impl.h. Include those; this file goes once
 * no include of it is left.
 */
#ifndef KSMSIM_HASHES_CRC32C_H
#define KSMSIM_HASHES_CRC32C_H

#include "hashes/hash.h"
#include "hashes/hashes_impl.h"

#endif
