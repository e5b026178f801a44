// SPDX-License-Identifier: GPL-2.0-or-later
/* Progress lines on standard error: see progress.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include "util/progress.h"
#include "util/signals.h"

#define TTY_EVERY_US (250 * 1000)	/* terminal: 4 redraws a second */
#define LOG_EVERY_US (2 * 1000 * 1000)	/* not a terminal: a line every 2 s */
#define INTERRUPT_EVERY_US (100 * 1000)	/* the interrupt message's line */

struct progress {
	char *prefix;
	char phase[64];
	char unit[32];
	bool shown, tty;
	bool line_open;		/* a terminal line without its newline */
	int64_t start_us, last_show_us, last_note_us;
	uint64_t done, pos, size;
	char line[200];
};

struct progress *progress_new(const char *prefix, enum progress_mode mode)
{
	struct progress *p = g_new0(struct progress, 1);
	p->prefix = g_strdup(prefix);
	p->tty = isatty(STDERR_FILENO);
	p->shown = mode == PROGRESS_ALWAYS || (mode == PROGRESS_AUTO && p->tty);
	progress_phase(p, "", "records");
	return p;
}

bool progress_shown(const struct progress *p)
{
	return p->shown;
}

void progress_phase(struct progress *p, const char *phase, const char *unit)
{
	g_strlcpy(p->phase, phase ? phase : "", sizeof(p->phase));
	g_strlcpy(p->unit, unit ? unit : "", sizeof(p->unit));
	p->start_us = g_get_monotonic_time();
	p->last_show_us = p->start_us;
	p->last_note_us = 0;
	p->done = p->pos = p->size = 0;
	progress_format(p->line, sizeof(p->line), p->phase, p->unit, 0, 0, 0, 0);
	signals_set_progress(p->line);
}

/* 1234567 -> "1.23M", keeping lines short whatever the figures. */
static void human(char *buf, size_t cap, double v)
{
	if (v >= 1e9)
		snprintf(buf, cap, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, cap, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, cap, "%.1fk", v / 1e3);
	else
		snprintf(buf, cap, "%.0f", v);
}

static void duration(char *buf, size_t cap, double s)
{
	if (s >= 3600)
		snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
	else if (s >= 60)
		snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else
		snprintf(buf, cap, "%.0fs", s < 1 ? 1 : s);
}

void progress_format(char *buf, size_t cap, const char *phase, const char *unit, uint64_t done,
		     uint64_t pos, uint64_t size, int64_t elapsed_us)
{
	double secs = elapsed_us / 1e6;
	char n[32], rate[32] = "", pct[32] = "", eta[48] = "";
	snprintf(n, sizeof(n), "%" PRIu64, done);
	if (secs >= 0.05 && done > 0) {
		char r[24];
		human(r, sizeof(r), done / secs);
		snprintf(rate, sizeof(rate), ", %s/s", r);
	}
	if (size) {
		double f = pos >= size ? 1.0 : (double)pos / size;
		snprintf(pct, sizeof(pct), ", %.1f%%", 100 * f);
		if (f > 0 && f < 1 && secs >= 1) {
			char d[24];
			duration(d, sizeof(d), secs * (1 - f) / f);
			snprintf(eta, sizeof(eta), ", ETA %s", d);
		}
	}
	if (done == 0 && size) {
		/* nothing counted yet (the caller reports the count seldom): the share only */
		snprintf(buf, cap, "%s%s%s%s", phase, *phase ? ": " : "", pct + 2, eta);
		return;
	}
	snprintf(buf, cap, "%s%s%s %s%s%s%s", phase, *phase ? ": " : "", n, unit, pct, rate, eta);
}

static void show(struct progress *p, bool final)
{
	if (p->tty) {
		/* \r, the line, then clear what a longer earlier line left */
		fprintf(stderr, "\r%s: %s\033[K", p->prefix, p->line);
		p->line_open = !final;
		if (final)
			fputc('\n', stderr);
	} else {
		fprintf(stderr, "%s: %s\n", p->prefix, p->line);
	}
	fflush(stderr);
	signals_set_line_open(p->line_open);
}

void progress_update(struct progress *p, uint64_t done, uint64_t pos, uint64_t size)
{
	p->done = done;
	p->pos = pos;
	p->size = size;
	int64_t now = g_get_monotonic_time();
	bool note = now - p->last_note_us >= INTERRUPT_EVERY_US;
	bool display = p->shown && now - p->last_show_us >= (p->tty ? TTY_EVERY_US : LOG_EVERY_US);
	if (!note && !display)
		return;
	progress_format(p->line, sizeof(p->line), p->phase, p->unit, done, pos, size,
			now - p->start_us);
	if (note) {
		signals_set_progress(p->line);
		p->last_note_us = now;
	}
	if (display) {
		show(p, false);
		p->last_show_us = now;
	}
}

const char *progress_line(const struct progress *p)
{
	return p->line;
}

void progress_finish(struct progress *p)
{
	int64_t now = g_get_monotonic_time();
	progress_format(p->line, sizeof(p->line), p->phase, p->unit, p->done, p->pos, p->size,
			now - p->start_us);
	signals_set_progress(p->line);
	if (p->shown)
		show(p, true);
}

void progress_free(struct progress *p)
{
	if (!p)
		return;
	if (p->line_open) {
		fputc('\n', stderr);
		signals_set_line_open(false);
	}
	g_free(p->prefix);
	g_free(p);
}
