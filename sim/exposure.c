// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exposure figures (sim/MODEL.md, "Exposure"), an observer of the
 * model's events (ksm_events.h): for every merge whether it joins pages of
 * different domains (domains.c), how long after the page's last write it
 * came (how soon a probe page becomes observable), how long the mapping
 * stayed merged before its CoW or unshare (the observation window), and
 * how many domains shared each KSM page at its peak. What it keeps per
 * page, rmap_item and stable node lives in side tables of its own, made
 * only when a run asks for exposure, so that struct page, rmap_item and
 * stable_node stay their size for every other run. The figures are truth,
 * without cost or effect on the model.
 */
#include <inttypes.h>
#include <string.h>
#include "sim/ksm_internal.h"
#include "sim/output.h"

#define MERGED_CROSS (UINT64_C(1) << 63)

/* What a merge adds to: cross or within, and per named domain (cross merges of its pages). */
struct exposure {
	uint32_t named;
	GArray *delay[KSM_EXPO_SCOPES][2];	/* of uint64_t: write-to-merge, merged */
	GArray *(*by_domain)[2];		/* [named][2], cross merges only */
	GArray *peak_hist;			/* of uint64_t: KSM pages by their peak domains */
	GArray *scratch;			/* of uint32_t: a node's domains */
	uint64_t zero_merges;
	/* the unmap channel: reveals' write-to-unmap µs, unmaps counted */
	GArray *reveal[KSM_EXPO_SCOPES];
	GArray **reveal_by_domain;		/* [named], cross only */
	uint64_t unmaps, *unmaps_by_domain, reveals_in_chain;
	/*
	 * The side tables, by address. A page's entry outlives the page
	 * (page_written overwrites it when the slot is allocated again), as a
	 * merge reports the page it freed. merged: while STABLE_FLAG after a
	 * merge recorded here, the merge's time + 1 with bit 63 set for a
	 * merge across domains (no entry: 0). peak: the most distinct domains
	 * a stable node listed at once (a new node's entry is dropped).
	 */
	GHashTable *written_us;			/* struct page * -> its last store or allocation */
	GHashTable *merged;			/* struct rmap_item * -> as above */
	GHashTable *peak;			/* struct stable_node * -> peak domains */
	GHashTable *merge_written;		/* struct rmap_item * -> its page's last write + 1 */
};

static uint64_t get(GHashTable *t, const void *key)
{
	return GPOINTER_TO_SIZE(g_hash_table_lookup(t, key));
}

static void put(GHashTable *t, const void *key, uint64_t v)
{
	if (v)
		g_hash_table_insert(t, (gpointer)key, GSIZE_TO_POINTER(v));
	else
		g_hash_table_remove(t, key);
}

/* ---- the figures ---- */

struct exposure *exposure_new(const struct ksm *k)
{
	struct exposure *e = g_new0(struct exposure, 1);
	e->named = k->opt.domains ? k->opt.domains->names->len : 0;
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		for (int f = 0; f < 2; f++)
			e->delay[s][f] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	e->by_domain = g_malloc0_n(MAX(e->named, 1), sizeof(*e->by_domain));
	for (uint32_t i = 0; i < e->named; i++)
		for (int f = 0; f < 2; f++)
			e->by_domain[i][f] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	e->peak_hist = g_array_new(FALSE, TRUE, sizeof(uint64_t));
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		e->reveal[s] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	e->reveal_by_domain = g_malloc0_n(MAX(e->named, 1), sizeof(GArray *));
	e->unmaps_by_domain = g_malloc0_n(MAX(e->named, 1), sizeof(uint64_t));
	for (uint32_t i = 0; i < e->named; i++)
		e->reveal_by_domain[i] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	e->merge_written = g_hash_table_new(NULL, NULL);
	e->scratch = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	e->written_us = g_hash_table_new(NULL, NULL);
	e->merged = g_hash_table_new(NULL, NULL);
	e->peak = g_hash_table_new(NULL, NULL);
	return e;
}

void exposure_free(struct exposure *e)
{
	if (!e)
		return;
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		for (int f = 0; f < 2; f++)
			g_array_free(e->delay[s][f], TRUE);
	for (uint32_t i = 0; i < e->named; i++)
		for (int f = 0; f < 2; f++)
			g_array_free(e->by_domain[i][f], TRUE);
	g_free(e->by_domain);
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		g_array_free(e->reveal[s], TRUE);
	for (uint32_t i = 0; i < e->named; i++)
		g_array_free(e->reveal_by_domain[i], TRUE);
	g_free(e->reveal_by_domain);
	g_free(e->unmaps_by_domain);
	g_hash_table_destroy(e->merge_written);
	g_array_free(e->peak_hist, TRUE);
	g_array_free(e->scratch, TRUE);
	g_hash_table_destroy(e->written_us);
	g_hash_table_destroy(e->merged);
	g_hash_table_destroy(e->peak);
	g_free(e);
}

/* One sample of figure f (0 write-to-merge, 1 merged) of mm's page. */
static void record(struct exposure *e, const struct mm *mm, bool cross, int f, uint64_t v)
{
	g_array_append_val(e->delay[cross ? KSM_EXPO_CROSS : KSM_EXPO_WITHIN][f], v);
	if (cross && mm->domain < e->named)
		g_array_append_val(e->by_domain[mm->domain][f], v);
}

static uint64_t since(const struct ksm *k, uint64_t t)
{
	return k->now > t ? k->now - t : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The distinct domains of the rmap_items listed under node (in e->scratch, sorted). */
static uint32_t node_domains(struct exposure *e, const struct ksm *k,
			     const struct stable_node *node)
{
	const struct rmap_item *it;
	uint32_t n = 0;

	g_array_set_size(e->scratch, 0);
	hlist_for_each_entry(it, &node->hlist, hlist)
		g_array_append_val(e->scratch, rmap_item_mm(k, it)->domain);
	qsort(e->scratch->data, e->scratch->len, sizeof(uint32_t), cmp_u32);
	for (guint i = 0; i < e->scratch->len; i++)
		if (!i || g_array_index(e->scratch, uint32_t, i) !=
			  g_array_index(e->scratch, uint32_t, i - 1))
			n++;
	return n;
}

static void merged(void *ctx, const struct ksm *k, struct rmap_item *rmap_item,
		   const struct page *page)
{
	struct exposure *e = ctx;
	const struct stable_node *node = rmap_item->head;
	uint32_t mine = rmap_item_mm(k, rmap_item)->domain, n = 0;
	uint64_t peak_was = get(e->peak, node);
	const struct rmap_item *it;
	bool cross = false, seen = false;

	/* across domains when another domain than its own maps the KSM page */
	hlist_for_each_entry(it, &node->hlist, hlist) {
		if (it == rmap_item)
			continue;
		if (rmap_item_mm(k, it)->domain != mine)
			cross = true;
		else
			seen = true;
		if (cross && seen)
			break;
	}
	/*
	 * Its domain was there already: the distinct domains are what they
	 * were, at most the peak (once there is one). Else count them (the first page of each
	 * domain only, so a KSM page of 256 mappings is not sorted 256 times).
	 */
	if (!seen || !peak_was)
		n = node_domains(e, k, node);
	if (n > peak_was) {
		uint32_t peak = MIN(n, UINT16_MAX);
		if (e->peak_hist->len <= peak)
			g_array_set_size(e->peak_hist, peak + 1);
		if (peak_was)
			g_array_index(e->peak_hist, uint64_t, peak_was)--;
		g_array_index(e->peak_hist, uint64_t, peak)++;
		put(e->peak, node, peak);
	}
	uint64_t written = get(e->written_us, page);
	record(e, rmap_item_mm(k, rmap_item), cross, 0, since(k, written));
	put(e->merged, rmap_item, (k->now + 1) | (cross ? MERGED_CROSS : 0));
	put(e->merge_written, rmap_item, MIN(written, k->now) + 1);
}

/*
 * The zero page is every process's (an untouched page maps it): that a page
 * merged with it tells another domain nothing of this one. Within.
 */
static void zero_merged(void *ctx, const struct ksm *k, const struct mm *mm,
			const struct page *page)
{
	struct exposure *e = ctx;

	e->zero_merges++;
	record(e, mm, false, 0, since(k, get(e->written_us, page)));
}

static void cow_ksm(void *ctx, const struct ksm *k, const struct mm *mm, uint64_t vpn,
		    const struct page *page)
{
	struct exposure *e = ctx;
	struct stable_node *node = page_stable_node(k, page);
	struct rmap_item *it;

	if (!node)
		return;
	hlist_for_each_entry(it, &node->hlist, hlist) {
		if (rmap_item_mm(k, it) != mm || it->vpn != vpn)
			continue;
		uint64_t m = get(e->merged, it);
		if (m) {
			uint64_t at = (m & ~MERGED_CROSS) - 1;
			record(e, mm, m & MERGED_CROSS, 1, since(k, at));
			put(e->merged, it, 0);
		}
		return;
	}
}

static void page_written(void *ctx, const struct ksm *k, const struct page *page)
{
	struct exposure *e = ctx;

	g_hash_table_insert(e->written_us, (gpointer)page, GSIZE_TO_POINTER(k->now));
}

/* Listed afresh or unlisted: no merge of its own recorded (yet). */
static void rmap_item_listed(void *ctx, const struct ksm *k, const struct rmap_item *rmap_item)
{
	(void)k;
	put(((struct exposure *)ctx)->merged, rmap_item, 0);
	put(((struct exposure *)ctx)->merge_written, rmap_item, 0);
}

/*
 * The unmap channel (sim/MODEL.md, "Exposure"): break_ksm faults and
 * copies a KSM page, and skips any other page, so an unmerge of a merged
 * mapping always shows; a zap of a page another mapping still holds only
 * drops its mapcount where a page mapped once is freed, so an unmap shows
 * while the mapcount is above one. Across when another domain's listed
 * item still maps the page (an unmapped mm's item stays listed until ksmd
 * meets it), else within.
 */
static void unmapped(void *ctx, const struct ksm *k, const struct mm *mm, uint64_t vpn,
		     const struct page *pte, bool unmerge)
{
	struct exposure *e = ctx;
	const struct stable_node *node;
	const struct rmap_item *it, *own = NULL;
	bool cross = false;

	e->unmaps++;
	if (mm->domain < e->named)
		e->unmaps_by_domain[mm->domain]++;
	if (!pte_is_page(pte) || !(node = page_stable_node(k, pte)) || (!unmerge && page_mapcount(k, pte) < 2))
		return;
	hlist_for_each_entry(it, &node->hlist, hlist) {
		if (rmap_item_mm(k, it) == mm && it->vpn == vpn)
			own = it;
		else if (!cross && rmap_item_mm(k, it)->domain != mm->domain)
			cross = pte_get((struct mm *)rmap_item_mm(k, it), it->vpn) == pte;
	}
	uint64_t w = own ? get(e->merge_written, own) : 0;
	if (!w)
		return;		/* a fork's mapping, not listed (merged) yet */
	uint64_t v = since(k, w - 1);
	g_array_append_val(e->reveal[cross ? KSM_EXPO_CROSS : KSM_EXPO_WITHIN], v);
	if (cross && mm->domain < e->named)
		g_array_append_val(e->reveal_by_domain[mm->domain], v);
	if (cross && node->is_dup)
		e->reveals_in_chain++;
}

static void stable_node_new(void *ctx, const struct ksm *k, const struct stable_node *node)
{
	(void)k;
	put(((struct exposure *)ctx)->peak, node, 0);
}

/* Its entry goes with it (a new node's would be dropped anyway): the table stays small. */
static void stable_node_gone(void *ctx, const struct ksm *k, const struct stable_node *node)
{
	(void)k;
	put(((struct exposure *)ctx)->peak, node, 0);
}

static void expo_free(void *ctx)
{
	exposure_free(ctx);
}

const struct ksm_observer_ops exposure_observer = {
	.page_written = page_written,
	.merged = merged,
	.zero_merged = zero_merged,
	.cow_ksm = cow_ksm,
	.unmapped = unmapped,
	.rmap_item_listed = rmap_item_listed,
	.stable_node_new = stable_node_new,
	.stable_node_gone = stable_node_gone,
	.free = expo_free,
};

/* ---- what a run reports ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p% of the samples at or below it. */
static uint64_t rank(const uint64_t *v, uint64_t n, unsigned p)
{
	uint64_t r = (n * p + 99) / 100;
	return v[r ? r - 1 : 0];
}

static struct ksm_expo_dist dist_of(const GArray *a)
{
	struct ksm_expo_dist d = { .count = a->len };
	if (!a->len)
		return d;
	uint64_t *v = g_memdup2(a->data, a->len * sizeof(uint64_t));
	qsort(v, a->len, sizeof(uint64_t), cmp_u64);
	d.p50 = rank(v, a->len, 50);
	d.p90 = rank(v, a->len, 90);
	d.p99 = rank(v, a->len, 99);
	d.max = v[a->len - 1];
	g_free(v);
	return d;
}

/* The peaks from lo up (1: within is peak 1 only; cross is 2 and up). */
static struct ksm_expo_dist hist_dist(const GArray *h, guint lo, guint hi)
{
	struct ksm_expo_dist d = { 0 };
	uint64_t seen = 0;
	const unsigned ps[3] = { 50, 90, 99 };
	uint64_t *out[3] = { &d.p50, &d.p90, &d.p99 };

	for (guint i = lo; i < MIN(h->len, hi); i++)
		d.count += g_array_index(h, uint64_t, i);
	for (guint i = lo; i < MIN(h->len, hi) && d.count; i++) {
		uint64_t c = g_array_index(h, uint64_t, i);
		if (!c)
			continue;
		for (int j = 0; j < 3; j++)
			if (seen < (d.count * ps[j] + 99) / 100 && seen + c >= (d.count * ps[j] + 99) / 100)
				*out[j] = i;
		seen += c;
		d.max = i;
	}
	return d;
}

static void saving_of(struct ksm *k, struct exposure *e, const struct stable_node *node,
		      struct ksm_exposure *out)
{
	if (!node->kpfn || !node->rmap_hlist_len)
		return;
	uint32_t n = node_domains(e, k, node);
	/* in a tree per domain each domain would keep a KSM page of its own */
	uint64_t lost = n - 1;
	out->saved += (uint64_t)node->rmap_hlist_len - 1;
	out->saved_cross += lost;
	if (content_is_zero(stable_node_page(k, node)->c))
		out->saved_cross_zero += lost;
}

static void saving_walk(struct ksm *k, struct exposure *e, const struct rb_node *n,
			struct ksm_exposure *out)
{
	if (!n)
		return;
	const struct stable_node *node = rb_entry(n, struct stable_node, node);
	if (is_stable_node_chain(node)) {
		const struct stable_node *dup;
		hlist_for_each_entry(dup, &node->hlist, hlist_dup)
			saving_of(k, e, dup, out);
	} else {
		saving_of(k, e, node, out);
	}
	saving_walk(k, e, n->rb_left, out);
	saving_walk(k, e, n->rb_right, out);
}

void ksm_exposure(const struct ksm *kc, struct ksm_exposure *out)
{
	struct ksm *k = (struct ksm *)kc;	/* the scratch array only */
	struct exposure *e = k->expo, *tmp = NULL;

	memset(out, 0, sizeof(*out));
	if (!e)
		e = tmp = exposure_new(k);
	for (int s = 0; s < KSM_EXPO_SCOPES; s++) {
		out->d[s][KSM_EXPO_WRITE_TO_MERGE] = dist_of(e->delay[s][0]);
		out->d[s][KSM_EXPO_MERGED] = dist_of(e->delay[s][1]);
	}
	out->zero_merges = e->zero_merges;
	out->d[KSM_EXPO_WITHIN][KSM_EXPO_DOMAINS] = hist_dist(e->peak_hist, 1, 2);
	out->d[KSM_EXPO_CROSS][KSM_EXPO_DOMAINS] = hist_dist(e->peak_hist, 2, G_MAXUINT);
	out->named = e->named;
	out->by_domain = g_malloc0_n(MAX(e->named, 1), sizeof(*out->by_domain));
	for (uint32_t i = 0; i < e->named; i++)
		for (int f = 0; f < 2; f++)
			out->by_domain[i][f] = dist_of(e->by_domain[i][f]);
	out->unmaps = e->unmaps;
	out->reveals_in_chain = e->reveals_in_chain;
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		out->unmap_reveal[s] = dist_of(e->reveal[s]);
	out->reveal_by_domain = g_malloc0_n(MAX(e->named, 1), sizeof(*out->reveal_by_domain));
	out->unmaps_by_domain = g_memdup2(e->unmaps_by_domain, MAX(e->named, 1) * sizeof(uint64_t));
	for (uint32_t i = 0; i < e->named; i++)
		out->reveal_by_domain[i] = dist_of(e->reveal_by_domain[i]);
	for (uint32_t i = 0; i < ksm_nr_trees(k); i++)
		saving_walk(k, e, k->root_stable_tree[i].rb_node, out);
	out->saved += k->zero_pages;
	exposure_free(tmp);
}

void ksm_exposure_free(struct ksm_exposure *e)
{
	g_free(e->by_domain);
	e->by_domain = NULL;
	g_free(e->reveal_by_domain);
	e->reveal_by_domain = NULL;
	g_free(e->unmaps_by_domain);
	e->unmaps_by_domain = NULL;
}

/* ---- --exposure-csv and the summary's lines ---- */

static const char *const expo_figures[KSM_EXPO_NR] = {
	[KSM_EXPO_WRITE_TO_MERGE] = "write_to_merge_us",
	[KSM_EXPO_MERGED] = "merged_us",
	[KSM_EXPO_DOMAINS] = "domains_at_peak",
};

static void expo_row(FILE *f, const char *scope, const char *figure, const struct ksm_expo_dist *d)
{
	marks_put_field(f, scope, true);
	fprintf(f, ",%s,%" PRIu64, figure, d->count);
	if (d->count)
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", d->p50, d->p90,
			d->p99, d->max);
	else
		fputs(",,,,\n", f);
}

static void expo_count(FILE *f, const char *figure, uint64_t v)
{
	fprintf(f, "all,%s,%" PRIu64 ",,,,\n", figure, v);
}

void output_exposure_csv(FILE *f, const struct ksm_exposure *e, const struct ksm_domains *d)
{
	static const char *const scopes[KSM_EXPO_SCOPES] = { "cross", "within" };

	fputs("scope,figure,count,p50,p90,p99,max\n", f);
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		for (int i = 0; i < KSM_EXPO_NR; i++)
			expo_row(f, scopes[s], expo_figures[i], &e->d[s][i]);
	for (size_t i = 0; i < e->named && d; i++) {
		char *scope = g_strdup_printf("domain:%s", (const char *)d->names->pdata[i]);
		for (int j = 0; j < 2; j++)
			expo_row(f, scope, expo_figures[j], &e->by_domain[i][j]);
		g_free(scope);
	}
	expo_count(f, "zero_merges", e->zero_merges);
	expo_count(f, "saved_pages", e->saved);
	expo_count(f, "saved_cross_pages", e->saved_cross);
	expo_count(f, "saved_cross_zero_pages", e->saved_cross_zero);
	if (!e->unmaps)
		return;		/* the unmap channel's rows: only when a PTE was unmapped or unmerged */
	for (int s = 0; s < KSM_EXPO_SCOPES; s++)
		expo_row(f, scopes[s], "unmap_reveal_us", &e->unmap_reveal[s]);
	for (size_t i = 0; i < e->named && d; i++) {
		char *scope = g_strdup_printf("domain:%s", (const char *)d->names->pdata[i]);
		expo_row(f, scope, "unmap_reveal_us", &e->reveal_by_domain[i]);
		marks_put_field(f, scope, true);
		fprintf(f, ",unmaps,%" PRIu64 ",,,,\n", e->unmaps_by_domain[i]);
		g_free(scope);
	}
	expo_count(f, "unmaps", e->unmaps);
	expo_count(f, "unmap_reveals_in_chain", e->reveals_in_chain);
}

static void expo_line(FILE *f, const char *what, const struct ksm_expo_dist *d, bool us)
{
	if (!d->count) {
		fprintf(f, "  %-34s none\n", what);
		return;
	}
	if (us)
		fprintf(f, "  %-34s p50 %.3f s, p99 %.3f s, max %.3f s\n", what, d->p50 / 1e6,
			d->p99 / 1e6, d->max / 1e6);
	else
		fprintf(f, "  %-34s p50 %" PRIu64 ", p99 %" PRIu64 ", max %" PRIu64 "\n", what, d->p50,
			d->p99, d->max);
}

void output_exposure_text(FILE *f, const struct ksm_exposure *e)
{
	const struct ksm_expo_dist *c = e->d[KSM_EXPO_CROSS], *w = e->d[KSM_EXPO_WITHIN];

	fprintf(f, "Exposure: %" PRIu64 " merges across security domains, %" PRIu64 " within one"
		" (%" PRIu64 " into the zero page)\n", c[KSM_EXPO_WRITE_TO_MERGE].count,
		w[KSM_EXPO_WRITE_TO_MERGE].count, e->zero_merges);
	expo_line(f, "across: last write to merge", &c[KSM_EXPO_WRITE_TO_MERGE], true);
	expo_line(f, "across: merged until CoW/unshare", &c[KSM_EXPO_MERGED], true);
	expo_line(f, "across: domains per KSM page", &c[KSM_EXPO_DOMAINS], false);
	fprintf(f, "  saving across domains at the end:  %" PRIu64 " of %" PRIu64 " pages saved"
		" (%" PRIu64 " of them zero pages)\n", e->saved_cross, e->saved, e->saved_cross_zero);
}

/* --exposure-csv asks for the observer: the figures are gathered only then. */
static void exposure_attach(struct ksm_options *opt, FILE *const *f)
{
	opt->exposure = true;
}

static void exposure_end(FILE *f, const struct output_run *r, struct ksm *k)
{
	output_provenance(f, r, "exposure by security domain (times in us of the model's clock)");
	output_exposure_csv(f, r->expo, r->domains);
}

const struct run_output exposure_output = {
	"exposure-csv",
	"merges across security domains (--domain) and\n"
	"within one: count, p50, p90, p99, max of the time\n"
	"from a page's last write to its merge, of the time\n"
	"merged until its CoW or unshare, and of the domains\n"
	"sharing a KSM page at its peak; the saving across\n"
	"domains (sim/MODEL.md, 'Exposure')",
	.attach = exposure_attach, .end = exposure_end,
};
