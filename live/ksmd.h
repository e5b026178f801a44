/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internal to live/: the ksmd kernel thread's scheduler state, read from
 * /proc, for the one race that the knobs alone cannot close (ksmd.c).
 */
#ifndef KSMSIM_LIVE_KSMD_H
#define KSMSIM_LIVE_KSMD_H

#include <stdbool.h>
#include <glib.h>

/*
 * Returns once ksmd is asleep (state S): after run was written 0, it then
 * cannot read sleep_millisecs again before run is written 1. Where /proc
 * shows no ksmd (another pid namespace) it waits a fixed 100 ms instead.
 * False, with an error, when ksmd stays awake for timeout_s.
 */
bool ksmd_wait_asleep(double timeout_s, GError **error);

/* ksmd's pid (a thread named ksmd whose parent is kthreadd), 0 where /proc shows none. */
long ksmd_find_pid(void);

#endif
