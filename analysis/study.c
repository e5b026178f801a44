// SPDX-License-Identifier: GPL-2.0-or-later
/* Shared pieces of the collision studies (study.h). */
#include <glib.h>
#include "analysis/collide.h"
#include "analysis/study.h"

uint64_t study_stream(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t s = seed ^ (a * UINT64_C(0xD1B54A32D192ED03)) ^ (b * UINT64_C(0x8CB92BA72F3D8DD7));

	splitmix64_next(&s);
	return splitmix64_next(&s);
}

struct par {
	void (*fn)(uint64_t i, unsigned worker, void *data);
	void *data;
	uint64_t n;
	uint64_t next;		/* the next i to hand out */
};

struct par_arg {
	struct par *par;
	unsigned worker;
};

static gpointer par_worker(gpointer p)
{
	struct par_arg *a = p;

	for (;;) {
		uint64_t i = __atomic_fetch_add(&a->par->next, 1, __ATOMIC_RELAXED);

		if (i >= a->par->n)
			break;
		a->par->fn(i, a->worker, a->par->data);
	}
	return NULL;
}

void study_par_for(unsigned threads, uint64_t n,
		   void (*fn)(uint64_t, unsigned, void *), void *data)
{
	struct par par = { fn, data, n, 0 };
	struct par_arg arg[COLLIDE_MAX_THREADS];
	GThread *t[COLLIDE_MAX_THREADS];

	for (unsigned i = 0; i < threads; i++)
		arg[i] = (struct par_arg){ &par, i };
	/* the calling thread is worker 0 */
	for (unsigned i = 1; i < threads; i++)
		t[i] = g_thread_new("collide", par_worker, &arg[i]);
	par_worker(&arg[0]);
	for (unsigned i = 1; i < threads; i++)
		g_thread_join(t[i]);
}

double study_seconds(int64_t t0)
{
	return (double)(g_get_monotonic_time() - t0) / 1e6;
}
