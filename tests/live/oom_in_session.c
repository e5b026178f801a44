// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A live session whose heap runs out: opens the session (KSM's knobs saved
 * and set to the trace defaults, khugepaged held), then asks GLib for more
 * memory than any machine has, as a replay's allocation failing would.
 * test_oom.sh checks what is left behind. Exits 77 where live KSM cannot
 * be used; any other return means the allocation did not end the process.
 */
#include <stdio.h>
#include <glib.h>
#include "live/live.h"
#include "util/signals.h"

int main(void)
{
	GError *error = NULL;
	struct live_session *s;

	signals_catch_glib_fatal();
	if (!live_check_usable(&error)) {
		printf("SKIP: %s\n", error->message);
		g_error_free(error);
		return 77;
	}
	s = live_session_begin(&error);
	if (!s) {
		fprintf(stderr, "oom_in_session: %s\n", error->message);
		g_error_free(error);
		return 1;
	}
	volatile gsize huge = G_MAXSIZE / 2;
	void *p = g_malloc(huge);
	fprintf(stderr, "oom_in_session: g_malloc(%zu) returned %p\n", (size_t)huge, p);
	g_free(p);
	live_session_end(s, NULL);
	return 1;
}
