// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Validation shared by every reader and writer (check.h). The hot path is a
 * write to a page of the mm the previous record named, inside the interval
 * the previous check hit: both are cached so that it costs a few compares.
 */
#include <string.h>
#include "traces/check.h"

/*
 * struct iset: disjoint, coalesced intervals keyed by start, so a range is
 * inside the set iff it is inside one interval. cs/ce cache the last
 * interval a lookup hit; any change empties the cache.
 */

struct trace_check {
	GHashTable *mms;	/* name -> struct check_mm, live ones only */
	struct check_mm *last;	/* the mm the previous lookup found */
	uint64_t knobs[KNOB_NR];
	uint64_t t_us;
	uint64_t mapped_pages;
	uint64_t written_pages;	/* with count_written: pages holding bytes */
	unsigned int mergeable_mms;	/* live mms with a mergeable range */
	bool started;
	bool count_written;
};

static gint ival_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
	const struct ival *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

static void iset_init(struct iset *set)
{
	*set = (struct iset){ 0 };
}

static void iset_destroy(struct iset *set)
{
	if (set->t)
		g_tree_destroy(set->t);
}

/*
 * Most sets are one interval (an mm's one mapping), so a set keeps its
 * first interval inline and grows a tree only for a second: a tree costs
 * a hundred bytes or more, and there are three sets an mm.
 */
/* The interval with the greatest start <= x, or NULL. */
static struct ival *iset_floor(struct iset *set, uint64_t x)
{
	if (!set->t)
		return set->one_used && set->one.s <= x ? &set->one : NULL;

	struct ival key = { .s = x };
	GTreeNode *n = g_tree_upper_bound(set->t, &key);

	n = n ? g_tree_node_previous(n) : g_tree_node_last(set->t);
	return n ? g_tree_node_key(n) : NULL;
}

static void tree_insert(GTree *t, uint64_t s, uint64_t e)
{
	struct ival *iv = g_new(struct ival, 1);

	iv->s = s;
	iv->e = e;
	g_tree_insert(t, iv, iv);
}

static void iset_insert(struct iset *set, uint64_t s, uint64_t e)
{
	set->pages += e - s;
	if (!set->t && !set->one_used) {
		set->one = (struct ival){ s, e };
		set->one_used = true;
		return;
	}
	if (!set->t) {
		set->t = g_tree_new_full(ival_cmp, NULL, g_free, NULL);
		tree_insert(set->t, set->one.s, set->one.e);
		set->one_used = false;
	}
	tree_insert(set->t, s, e);
}

static void iset_drop(struct iset *set, struct ival *iv)
{
	set->pages -= iv->e - iv->s;
	if (iv == &set->one)
		set->one_used = false;
	else
		g_tree_remove(set->t, iv);	/* frees iv */
}

static bool iset_contains(struct iset *set, uint64_t s, uint64_t e)
{
	struct ival *f;

	if (set->cs <= s && e <= set->ce)
		return true;
	f = iset_floor(set, s);
	if (!f || f->e < e)
		return false;
	set->cs = f->s;
	set->ce = f->e;
	return true;
}

static bool iset_overlaps(struct iset *set, uint64_t s, uint64_t e)
{
	struct ival *f = iset_floor(set, e - 1);

	return f && f->e > s;
}

/* Union with [s, e): swallow every interval it overlaps or touches. */
static void iset_add(struct iset *set, uint64_t s, uint64_t e)
{
	struct ival *f;

	set->cs = set->ce = 0;
	while ((f = iset_floor(set, e)) && f->e >= s) {
		if (f->s < s)
			s = f->s;
		if (f->e > e)
			e = f->e;
		iset_drop(set, f);
	}
	iset_insert(set, s, e);
}

/* Difference with [s, e): intervals it cuts keep their outer parts. */
static void iset_remove(struct iset *set, uint64_t s, uint64_t e)
{
	struct ival *f;

	set->cs = set->ce = 0;
	while ((f = iset_floor(set, e - 1)) && f->e > s) {
		uint64_t fs = f->s, fe = f->e;

		iset_drop(set, f);
		if (fs < s)
			iset_insert(set, fs, s);
		if (fe > e)
			iset_insert(set, e, fe);
	}
}

static bool iset_empty(const struct iset *set)
{
	return set->t ? g_tree_nnodes(set->t) == 0 : !set->one_used;
}

/* Calls fn on every interval of set, in address order. */
static void iset_foreach(struct iset *set, void (*fn)(uint64_t s, uint64_t e, void *data),
			 void *data)
{
	if (!set->t) {
		if (set->one_used)
			fn(set->one.s, set->one.e, data);
		return;
	}
	for (GTreeNode *n = g_tree_node_first(set->t); n; n = g_tree_node_next(n)) {
		const struct ival *iv = g_tree_node_key(n);

		fn(iv->s, iv->e, data);
	}
}

static void iset_add_cb(uint64_t s, uint64_t e, void *set)
{
	iset_add(set, s, e);
}

/* set |= other (set and other distinct). */
static void iset_union(struct iset *set, struct iset *other)
{
	iset_foreach(other, iset_add_cb, set);
}

static void iset_clear(struct iset *set)
{
	iset_destroy(set);
	iset_init(set);
}

static void mm_free(gpointer p)
{
	struct check_mm *mm = p;

	iset_destroy(&mm->mapped);
	iset_destroy(&mm->mergeable);
	iset_destroy(&mm->written);
	iset_destroy(&mm->hugepage);
	g_free(mm);
}

struct trace_check *trace_check_new(void)
{
	struct trace_check *ck = g_new0(struct trace_check, 1);

	ck->mms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, mm_free);
	for (int i = 0; i < KNOB_NR; i++)
		ck->knobs[i] = knob_table[i].def;
	return ck;
}

void trace_check_free(struct trace_check *ck)
{
	if (!ck)
		return;
	g_hash_table_destroy(ck->mms);
	g_free(ck);
}

uint64_t trace_check_mapped_pages(const struct trace_check *ck)
{
	return ck->mapped_pages;
}

void trace_check_count_written(struct trace_check *ck)
{
	ck->count_written = true;
}

uint64_t trace_check_written_pages(const struct trace_check *ck)
{
	return ck->written_pages;
}

/* Pages of a PMD-sized folio (HPAGE_PMD_NR on x86-64 with 4 KiB pages). */
#define CHECK_HPAGE_NR 512ull

/*
 * Could a store into the block holding vpn fault in a THP? Its aligned
 * 2 MiB lies wholly in ranges mapped and advised hugepage. The model also
 * wants one set of VMA flags and no page table there yet; the estimate
 * counts the folio without asking, so that it never counts short.
 */
static bool thp_block(struct check_mm *mm, uint64_t vpn)
{
	uint64_t h = vpn & ~(CHECK_HPAGE_NR - 1);

	return iset_contains(&mm->hugepage, h, h + CHECK_HPAGE_NR) &&
	       iset_contains(&mm->mapped, h, h + CHECK_HPAGE_NR);
}

/* Keeps written_pages the sum over live mms of their written sets. */
static void written_change(struct trace_check *ck, struct check_mm *mm, bool add, uint64_t s,
			   uint64_t e)
{
	uint64_t before = mm->written.pages;

	/* most writes land on pages written before: the lookup cache answers */
	if (add && iset_contains(&mm->written, s, e))
		return;
	/* the first and last block are the only ones [s, e) may hold in part */
	if (add && !iset_empty(&mm->hugepage)) {
		if (thp_block(mm, s))
			s &= ~(CHECK_HPAGE_NR - 1);
		if (thp_block(mm, e - 1))
			e = ((e - 1) | (CHECK_HPAGE_NR - 1)) + 1;
	}
	if (add)
		iset_add(&mm->written, s, e);
	else
		iset_remove(&mm->written, s, e);
	ck->written_pages += mm->written.pages - before;
}

unsigned int trace_check_live_mms(const struct trace_check *ck)
{
	return g_hash_table_size(ck->mms);
}

bool trace_name_valid(const char *name, size_t len)
{
	if (len < 1 || len > TRACE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!g_ascii_isalnum(c) && c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}

static char *validate_range(const struct trace_record *rec)
{
	if (rec->npages < 1)
		return g_strdup("npages must be at least 1");
	if (rec->vpn >= TRACE_VPN_LIMIT || rec->npages > TRACE_VPN_LIMIT - rec->vpn)
		return g_strdup_printf("vpn 0x%" G_GINT64_MODIFIER "x + npages %"
				       G_GUINT64_FORMAT " is beyond 2^32 pages",
				       rec->vpn, rec->npages);
	return NULL;
}

static char *validate_content(const struct trace_content *c)
{
	switch (c->form) {
	case CONTENT_ZERO:
	case CONTENT_RAND:
		return NULL;
	case CONTENT_BYTE:
		if (c->value > 0xff)
			return g_strdup_printf("byte value 0x%" G_GINT64_MODIFIER
					       "x is more than 0xff", c->value);
		return NULL;
	case CONTENT_WORD:
		if (c->off > TRACE_PAGE_SIZE / 8 - 1)
			return g_strdup_printf("word index %u is out of range (0..511)", c->off);
		return NULL;
	case CONTENT_PATCH:
	case CONTENT_BYTES:
		if (c->len < 1)
			return g_strdup_printf("%s length must be at least 1",
					       c->form == CONTENT_PATCH ? "patch" : "bytes");
		if (c->off >= TRACE_PAGE_SIZE || c->len > TRACE_PAGE_SIZE - c->off)
			return g_strdup_printf("offset %u + length %u is outside the page (4096 bytes)",
					       c->off, c->len);
		return NULL;
	case CONTENT_BLOB:
		if (c->off != 0 || c->len != TRACE_PAGE_SIZE)
			return g_strdup("blob content covers the whole page (offset 0, length 4096)");
		return NULL;
	case CONTENT_DIGEST:
		if (c->off != 0 || c->len != TRACE_DIGEST_LEN)
			return g_strdup("digest content is 16 bytes (offset 0, length 16)");
		return NULL;
	default:
		return g_strdup_printf("unknown content form %d", (int)c->form);
	}
}

/* Values the kernel's store functions accept (knob_table). */
static char *validate_knob(enum ksm_knob knob, uint64_t v)
{
	if ((unsigned int)knob >= KNOB_NR)
		return g_strdup_printf("unknown knob %d", (int)knob);

	const struct knob_info *k = &knob_table[knob];

	if (v >= k->min && v <= k->max)
		return NULL;
	if (knob == KNOB_ADVISOR_MODE)
		return g_strdup_printf("value %" G_GUINT64_FORMAT
				       " is out of range for advisor_mode (0 none, 1 scan-time)", v);
	if (k->max == UINT64_MAX)
		return g_strdup_printf("value %" G_GUINT64_FORMAT " is out of range for %s (>= %"
				       G_GUINT64_FORMAT ")", v, k->name, k->min);
	return g_strdup_printf("value %" G_GUINT64_FORMAT " is out of range for %s (%"
			       G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT ")", v, k->name, k->min, k->max);
}

char *trace_record_validate(const struct trace_record *rec)
{
	switch (rec->verb) {
	case TRACE_SPAWN:
		if (rec->node > TRACE_NODE_MAX)
			return g_strdup_printf("node %u is out of range (0..%d)", rec->node,
					       TRACE_NODE_MAX);
		break;
	case TRACE_ADVISE:
		/* one advice a record: KSM's (mergeable says which) or THP's */
		if (rec->thp_advice > TRACE_ADVICE_NOHUGEPAGE)
			return g_strdup_printf("unknown advice %u (0 mergeable/unmergeable, 1 hugepage, "
					       "2 nohugepage)", rec->thp_advice);
		if (rec->thp_advice && rec->mergeable)
			return g_strdup_printf("advise %s cannot be mergeable too",
					       rec->thp_advice == TRACE_ADVICE_HUGEPAGE ? "hugepage" :
					       "nohugepage");
		/* fall through */
	case TRACE_MAP:
	case TRACE_FILLSEQ:
	case TRACE_UNMAP:
		return validate_range(rec);
	case TRACE_WRITE:
		if (rec->npages != 1)
			return g_strdup("write covers exactly one page");
		/* fall through */
	case TRACE_FILL: {
		char *p = validate_range(rec);

		return p ? p : validate_content(&rec->content);
	}
	case TRACE_EXIT:
		break;
	case TRACE_FORK:
		if (!trace_name_valid(rec->child, strnlen(rec->child, TRACE_NAME_MAX + 1)))
			return g_strdup_printf("bad child mm name '%.*s'", TRACE_NAME_MAX + 1,
					       rec->child);
		break;
	case TRACE_PRCTL:
		if (rec->value > 1)
			return g_strdup_printf("memory-merge value %" G_GUINT64_FORMAT
					       " is not 0 or 1", rec->value);
		break;
	case TRACE_SET:
		return validate_knob(rec->knob, rec->value);
	case TRACE_SETTLE:
		if (rec->value < 1)
			return g_strdup("settle count must be at least 1");
		return NULL;
	case TRACE_MARK:
		if (!trace_name_valid(rec->label, strnlen(rec->label, TRACE_NAME_MAX + 1)))
			return g_strdup_printf("bad label '%.*s'", TRACE_NAME_MAX + 1, rec->label);
		return NULL;
	default:
		return g_strdup_printf("unknown verb %d", (int)rec->verb);
	}
	if (!trace_name_valid(rec->mm, strnlen(rec->mm, TRACE_NAME_MAX + 1)))
		return g_strdup_printf("bad mm name '%.*s'", TRACE_NAME_MAX + 1, rec->mm);
	return NULL;
}

/* A new live mm of that name (not live now), with nothing mapped. */
static struct check_mm *mm_add(struct trace_check *ck, const char *name)
{
	struct check_mm *mm = g_new0(struct check_mm, 1);

	mm->name_len = strlen(name);
	memcpy(mm->name, name, mm->name_len + 1);
	iset_init(&mm->mapped);
	iset_init(&mm->mergeable);
	iset_init(&mm->written);
	iset_init(&mm->hugepage);
	g_hash_table_insert(ck->mms, mm->name, mm);
	ck->last = mm;
	return mm;
}

static struct check_mm *find_mm(struct trace_check *ck, const char *name)
{
	struct check_mm *mm = ck->last;

	if (mm && strcmp(mm->name, name) == 0)
		return mm;
	mm = g_hash_table_lookup(ck->mms, name);
	if (mm)
		ck->last = mm;
	return mm;
}

struct check_mm *trace_check_find(struct trace_check *ck, const char *name)
{
	return find_mm(ck, name);
}

static char *not_mapped(const struct trace_record *rec)
{
	if (rec->verb == TRACE_WRITE)
		return g_strdup_printf("vpn 0x%" G_GINT64_MODIFIER "x is not mapped in mm '%s'",
				       rec->vpn, rec->mm);
	return g_strdup_printf("vpn 0x%" G_GINT64_MODIFIER "x + npages %" G_GUINT64_FORMAT
			       " is not mapped in mm '%s'", rec->vpn, rec->npages, rec->mm);
}

static void track_mergeable(struct trace_check *ck, bool was, struct check_mm *mm)
{
	bool now = !iset_empty(&mm->mergeable);

	if (was != now)
		ck->mergeable_mms += now ? 1 : -1;
}

static char *apply_set(struct trace_check *ck, const struct trace_record *rec)
{
	uint64_t *k = ck->knobs;

	bool mode_changes = rec->knob == KNOB_ADVISOR_MODE && rec->value != k[KNOB_ADVISOR_MODE];

	if (rec->knob == KNOB_PAGES_TO_SCAN && knob_pages_to_scan_refused(k))
		return g_strdup("pages_to_scan cannot be set while advisor_mode is scan-time");
	k[rec->knob] = rec->value;
	if (mode_changes)	/* set_advisor_defaults() / the switch back to none */
		k[KNOB_PAGES_TO_SCAN] = knob_advisor_pages_to_scan(k);
	return NULL;
}

/*
 * fork: the parent (mm, or found by name) must be live and the child's name
 * free; the child gets a copy of the parent's state. Returns the problem, or
 * NULL with *mm the child.
 */
static char *apply_fork(struct trace_check *ck, const struct trace_record *rec,
			struct check_mm **mm)
{
	struct check_mm *parent = *mm, *child;

	if (!parent && !(parent = find_mm(ck, rec->mm)))
		return g_strdup_printf("parent mm '%s' does not exist", rec->mm);
	/* a name is free once its mm has exited, as for spawn */
	if (find_mm(ck, rec->child))
		return g_strdup_printf("child mm '%s' already exists", rec->child);
	/* every VMA with its advice, every present page, and merge-any */
	child = mm_add(ck, rec->child);
	iset_union(&child->mapped, &parent->mapped);
	iset_union(&child->mergeable, &parent->mergeable);
	iset_union(&child->written, &parent->written);
	iset_union(&child->hugepage, &parent->hugepage);
	child->merge_any = parent->merge_any;
	ck->mapped_pages += child->mapped.pages;
	ck->written_pages += child->written.pages;
	if (!iset_empty(&child->mergeable))
		ck->mergeable_mms++;
	*mm = child;
	return NULL;
}

/* settle can finish only if ksmd runs and has something to scan: the one rule. */
static char *apply_settle(const struct trace_check *ck)
{
	return knob_settle_refusal(ck->knobs, ck->mergeable_mms != 0);
}

/*
 * A record of a live mm (mm, already found) and its range [s, e): map,
 * advise, write, fill, fillseq, unmap, prctl and exit. The mm's interval sets
 * change with it and so do the totals (mapped_pages, written_pages,
 * mergeable_mms), which always equal the sums over the live mms. Returns the
 * problem or NULL; *mm is NULL after an exit (the mm is freed).
 */
static char *apply_to_mm(struct trace_check *ck, const struct trace_record *rec,
			 struct check_mm **mmp, uint64_t s, uint64_t e)
{
	struct check_mm *mm = *mmp;
	bool was;

	switch (rec->verb) {
	case TRACE_MAP:
		if (iset_overlaps(&mm->mapped, s, e))
			return g_strdup_printf("vpn 0x%" G_GINT64_MODIFIER "x + npages %"
					       G_GUINT64_FORMAT " overlaps mapped pages in mm '%s'",
					       rec->vpn, rec->npages, rec->mm);
		iset_add(&mm->mapped, s, e);
		ck->mapped_pages += rec->npages;
		if (mm->merge_any) {
			/* a new VMA of a merge-any mm is mergeable from the start */
			was = !iset_empty(&mm->mergeable);
			iset_add(&mm->mergeable, s, e);
			track_mergeable(ck, was, mm);
		}
		break;
	case TRACE_ADVISE:
		if (!iset_contains(&mm->mapped, s, e))
			return not_mapped(rec);
		/* hugepage, nohugepage: VM_HUGEPAGE says nothing of mergeability */
		if (rec->thp_advice == TRACE_ADVICE_HUGEPAGE && ck->count_written)
			iset_add(&mm->hugepage, s, e);
		else if (rec->thp_advice == TRACE_ADVICE_NOHUGEPAGE)
			iset_remove(&mm->hugepage, s, e);
		if (rec->thp_advice)
			break;
		was = !iset_empty(&mm->mergeable);
		if (rec->mergeable)
			iset_add(&mm->mergeable, s, e);
		else
			iset_remove(&mm->mergeable, s, e);
		track_mergeable(ck, was, mm);
		break;
	case TRACE_WRITE:
	case TRACE_FILL:
	case TRACE_FILLSEQ:
		if (!iset_contains(&mm->mapped, s, e))
			return not_mapped(rec);
		if (ck->count_written)
			written_change(ck, mm, true, s, e);
		break;
	case TRACE_UNMAP: {
		uint64_t before = mm->mapped.pages;

		iset_remove(&mm->mapped, s, e);
		ck->mapped_pages -= before - mm->mapped.pages;
		was = !iset_empty(&mm->mergeable);
		iset_remove(&mm->mergeable, s, e);
		track_mergeable(ck, was, mm);
		iset_remove(&mm->hugepage, s, e);
		if (ck->count_written)
			written_change(ck, mm, false, s, e);
		break;
	}
	case TRACE_PRCTL:
		was = !iset_empty(&mm->mergeable);
		if (rec->value && !mm->merge_any) {
			mm->merge_any = true;
			iset_union(&mm->mergeable, &mm->mapped);
		} else if (!rec->value && mm->merge_any) {
			/* every VMA loses its advice, madvised ones too */
			mm->merge_any = false;
			iset_clear(&mm->mergeable);
		}
		track_mergeable(ck, was, mm);
		break;
	case TRACE_EXIT:
		ck->mapped_pages -= mm->mapped.pages;
		ck->written_pages -= mm->written.pages;
		if (!iset_empty(&mm->mergeable))
			ck->mergeable_mms--;
		if (ck->last == mm)
			ck->last = NULL;
		g_hash_table_remove(ck->mms, mm->name);	/* frees mm */
		*mmp = NULL;
		break;
	default:
		return g_strdup_printf("unknown verb %d", (int)rec->verb);
	}
	return NULL;
}

/*
 * Time order first (every verb), then the verb's own rules: spawn and fork
 * add an mm, set and settle look at the knobs, mark has none, and every
 * other verb needs its mm live (apply_to_mm). Each verb checks before it
 * changes anything: a refused record leaves the state as it was.
 */
char *trace_check_apply(struct trace_check *ck, const struct trace_record *rec,
			struct check_mm *mm, struct check_mm **out_mm)
{
	char *problem = NULL;

	if (ck->started && rec->t_us < ck->t_us)
		return g_strdup_printf("time %" G_GUINT64_FORMAT " is before the previous record's %"
				       G_GUINT64_FORMAT, rec->t_us, ck->t_us);

	switch (rec->verb) {
	case TRACE_SPAWN:
		if (mm || find_mm(ck, rec->mm))
			return g_strdup_printf("mm '%s' already exists", rec->mm);
		mm = mm_add(ck, rec->mm);
		break;
	case TRACE_FORK:
		problem = apply_fork(ck, rec, &mm);
		break;
	case TRACE_SET:
		problem = apply_set(ck, rec);
		break;
	case TRACE_SETTLE:
		problem = apply_settle(ck);
		break;
	case TRACE_MARK:
		break;
	default:
		if (!mm && !(mm = find_mm(ck, rec->mm)))
			return g_strdup_printf("mm '%s' does not exist", rec->mm);
		problem = apply_to_mm(ck, rec, &mm, rec->vpn, rec->vpn + rec->npages);
	}
	if (problem)
		return problem;
	ck->started = true;
	ck->t_us = rec->t_us;
	if (out_mm)
		*out_mm = mm;
	return NULL;
}
