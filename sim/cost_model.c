// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>
#include "hashes/hash.h"
#include "sim/cost_model.h"

void cost_table_default(struct cost_table *t, const char *hash_name)
{
	const struct page_hash *h = hash_name ? hash_lookup(hash_name) : NULL;

	/* The registry row carries its cold cost; an unknown name costs what the default does. */
	t->checksum_ns = (h ? h : hash_lookup(HASH_DEFAULT))->cold_ns;
	t->memcmp_ns = 730;
	t->copy_ns = 920;
	t->visit_ns = 150;
	t->node_ns = 60;
	t->dirty_clear_ns = 3100;	/* bench costs' wrprotect-flush, local flush */
}

bool cost_table_load(struct cost_table *t, const char *path, const char *hash_name,
		     GError **error)
{
	GArray *rows = hash_costs_read(path, error);
	if (!rows)
		return false;
	const struct hash_cost *c;
	if (hash_name && strcmp(hash_name, "none") == 0)
		t->checksum_ns = 0;
	else if ((c = hash_costs_find(rows, hash_name)))
		t->checksum_ns = c->cold_ns;
	if ((c = hash_costs_find(rows, "memcmp")))
		t->memcmp_ns = c->cold_ns;
	if ((c = hash_costs_find(rows, "copy")))
		t->copy_ns = c->cold_ns;
	if ((c = hash_costs_find(rows, "wrprotect-flush")))
		t->dirty_clear_ns = c->cold_ns;
	g_array_free(rows, TRUE);
	return true;
}
