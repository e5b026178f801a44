/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SplitMix64 (Steele, Lea and Flood, 2014): the generator behind a trace's
 * rand:SEED page contents (traces/FORMAT.md) and the seed expander of every
 * other random stream in ksmsim. One definition, so that the page bytes a
 * generator means and the bytes the model and the live replayer build are
 * the same.
 */
#ifndef KSMSIM_UTIL_SPLITMIX64_H
#define KSMSIM_UTIL_SPLITMIX64_H

#include <stdint.h>

#define SPLITMIX64_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* Advance *state and return one output. */
static inline uint64_t splitmix64_next(uint64_t *state)
{
	uint64_t z = (*state += SPLITMIX64_GAMMA);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#endif
