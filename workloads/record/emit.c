// SPDX-License-Identifier: GPL-2.0-or-later
/* The recorder's records, each stamped with the current capture time. */
#include <string.h>
#include "workloads/record/emit.h"

void emit_init(struct emit *e, trace_writer *w, struct record_stats *stats)
{
	e->w = w;
	e->rec = g_new0(struct trace_record, 1);
	e->t_us = 0;
	e->error = NULL;
	e->stats = stats;
	e->digest = false;
}

void emit_fini(struct emit *e)
{
	g_clear_error(&e->error);
	g_free(e->rec);
	e->rec = NULL;
}

static void put(struct emit *e)
{
	e->rec->t_us = e->t_us;
	if (!e->error)
		trace_writer_put(e->w, e->rec, &e->error);
}

void emit_set(struct emit *e, enum ksm_knob knob, uint64_t value)
{
	e->rec->verb = TRACE_SET;
	e->rec->knob = knob;
	e->rec->value = value;
	put(e);
}

void emit_range(struct emit *e, enum trace_verb verb, const char *mm, uint64_t vpn,
		uint64_t npages, bool mergeable)
{
	e->rec->verb = verb;
	g_strlcpy(e->rec->mm, mm, sizeof(e->rec->mm));
	e->rec->vpn = vpn;
	e->rec->npages = npages;
	e->rec->mergeable = mergeable;
	e->rec->thp_advice = 0;
	put(e);
}

void emit_advise_hugepage(struct emit *e, const char *mm, uint64_t vpn, uint64_t npages)
{
	e->rec->verb = TRACE_ADVISE;
	g_strlcpy(e->rec->mm, mm, sizeof(e->rec->mm));
	e->rec->vpn = vpn;
	e->rec->npages = npages;
	e->rec->mergeable = false;
	e->rec->thp_advice = TRACE_ADVICE_HUGEPAGE;
	put(e);
}

void emit_named(struct emit *e, enum trace_verb verb, const char *name)
{
	e->rec->verb = verb;
	if (verb == TRACE_MARK)
		g_strlcpy(e->rec->label, name, sizeof(e->rec->label));
	else
		g_strlcpy(e->rec->mm, name, sizeof(e->rec->mm));
	e->rec->node = 0;
	put(e);
}

void emit_page(struct emit *e, const char *mm, uint64_t vpn, const uint8_t *page)
{
	struct trace_content *c = &e->rec->content;
	bool uniform = true;

	for (unsigned int i = 1; i < TRACE_PAGE_SIZE && uniform; i++)
		uniform = page[i] == page[0];
	e->rec->verb = TRACE_WRITE;
	g_strlcpy(e->rec->mm, mm, sizeof(e->rec->mm));
	e->rec->vpn = vpn;
	e->rec->npages = 1;
	c->off = 0;
	c->value = 0;
	if (uniform && page[0] == 0) {
		c->form = CONTENT_ZERO;
		e->stats->zero_pages++;
	} else if (uniform) {
		c->form = CONTENT_BYTE;
		c->value = page[0];
		e->stats->uniform_pages++;
	} else if (e->digest) {
		trace_content_digest(c, page);
		e->stats->digest_pages++;
	} else {
		c->form = CONTENT_BLOB;
		c->len = TRACE_PAGE_SIZE;
		memcpy(c->data, page, TRACE_PAGE_SIZE);
	}
	e->stats->pages++;
	put(e);
}
