/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gnuplot as `ksmsim advise` and `ksmsim tune` draw with it: a script on
 * its standard input, the PNG on a file, and the checks around it.
 */
#ifndef KSMSIM_ANALYSIS_GNUPLOT_H
#define KSMSIM_ANALYSIS_GNUPLOT_H

#include <stdbool.h>
#include <stdio.h>
#include <glib.h>

/*
 * Whether gnuplot with the pngcairo terminal can be started: checked
 * before any work. Errors in domain with code 2, "--plot: ...".
 */
bool gnuplot_available(GQuark domain, GError **error);
/* Run script with its output on png; false with "--plot: gnuplot ..." (code 2). */
bool gnuplot_draw(FILE *png, const char *script, GQuark domain, GError **error);
/* v inside gnuplot's single quotes, where '' is a quote; line breaks dropped. */
void gnuplot_quoted(GString *s, const char *v);
/* xtics at 1, 2, 5 x 10^d across [lo, hi]: a log axis gets few by itself. */
void gnuplot_log_tics(GString *s, double lo, double hi);

#endif
