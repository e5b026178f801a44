// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Security domains (--domain NAME=MM,...): which domain each mm belongs
 * to. The selective policies decide by it (their classes are domains) and
 * the exposure observer measures by it.
 */
#include <string.h>
#include "sim/ksm_internal.h"

struct ksm_domains *ksm_domains_new(void)
{
	struct ksm_domains *d = g_new0(struct ksm_domains, 1);
	d->names = g_ptr_array_new_with_free_func(g_free);
	d->of_mm = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return d;
}

void ksm_domains_free(struct ksm_domains *d)
{
	if (!d)
		return;
	g_ptr_array_free(d->names, TRUE);
	g_hash_table_destroy(d->of_mm);
	g_free(d);
}

static bool refuse(GError **error, const char *fmt, const char *a, const char *b)
{
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, fmt, a, b);
	return false;
}

bool ksm_domains_add(struct ksm_domains *d, const char *spec, GError **error)
{
	const char *eq = strchr(spec, '=');
	bool ok = true;

	if (!eq)
		return refuse(error, "NAME=MM[,MM...] expected%s%s", "", "");
	if (eq == spec)
		return refuse(error, "an empty domain name%s%s", "", "");
	char *name = g_strndup(spec, (size_t)(eq - spec));
	for (guint i = 0; i < d->names->len; i++)
		if (!strcmp(d->names->pdata[i], name)) {
			refuse(error, "domain '%s' is given twice%s", name, "");
			g_free(name);
			return false;
		}
	if (strlen(name) > TRACE_NAME_MAX || d->names->len >= KSM_CLASSES_MAX) {
		refuse(error, strlen(name) > TRACE_NAME_MAX ? "domain name '%s' is too long%s" :
			      "more than 4096 domains ('%s')%s", name, "");
		g_free(name);
		return false;
	}
	gchar **mms = g_strsplit(eq + 1, ",", -1);
	uint32_t id = d->names->len;
	if (!mms[0])
		ok = refuse(error, "domain '%s' names no mm%s", name, "");
	for (gchar **m = mms; ok && *m; m++) {
		gpointer other = g_hash_table_lookup(d->of_mm, *m);
		if (!**m)
			ok = refuse(error, "an empty mm name in domain '%s'%s", name, "");
		else if (strlen(*m) > TRACE_NAME_MAX)
			ok = refuse(error, "mm name '%s' is too long (domain '%s')", *m, name);
		else if (other && GPOINTER_TO_UINT(other) - 1 == id)
			ok = refuse(error, "mm '%s' is listed twice in domain '%s'", *m, name);
		else if (other)
			ok = refuse(error, "mm '%s' is already in domain '%s'", *m,
				    d->names->pdata[GPOINTER_TO_UINT(other) - 1]);
		else
			g_hash_table_insert(d->of_mm, g_strdup(*m), GUINT_TO_POINTER(id + 1));
	}
	g_strfreev(mms);
	if (!ok) {
		/* no half-added domain: its mms leave the table */
		GHashTableIter it;
		gpointer key, val;
		g_hash_table_iter_init(&it, d->of_mm);
		while (g_hash_table_iter_next(&it, &key, &val))
			if (GPOINTER_TO_UINT(val) - 1 == id)
				g_hash_table_iter_remove(&it);
		g_free(name);
		return false;
	}
	g_ptr_array_add(d->names, name);
	return true;
}

uint32_t domain_of_new_mm(struct ksm *k, const char *name, const struct mm *parent)
{
	const struct ksm_domains *d = k->opt.domains;
	gpointer v = d ? g_hash_table_lookup(d->of_mm, name) : NULL;

	if (v) {
		g_hash_table_add(k->domain_seen, g_strdup(name));
		return GPOINTER_TO_UINT(v) - 1;
	}
	if (parent)
		return parent->domain;
	return k->domains_next++;
}

const char *ksm_domains_unseen(const struct ksm *k)
{
	const struct ksm_domains *d = k->opt.domains;
	const char *first = NULL;
	GHashTableIter it;
	gpointer key, val;

	if (!d)
		return NULL;
	/* the smallest name, so that the message does not depend on hashing */
	g_hash_table_iter_init(&it, d->of_mm);
	while (g_hash_table_iter_next(&it, &key, &val))
		if (!g_hash_table_contains(k->domain_seen, key) && (!first || strcmp(key, first) < 0))
			first = key;
	return first;
}
