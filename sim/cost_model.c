// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>
#include "hashes/costs.h"
#include "sim/cost_model.h"

/*
 * Cold per-page figures (ns) from `ksmsim bench costs` on the reference
 * machine; cold because ksmd streams through pages that are not cached.
 */
static const struct {
	const char *name;
	double ns;
} default_checksum_ns[] = {
	{ "jhash2", 1925 }, { "crc32c", 420 }, { "crc32", 1400 }, { "xxhash", 716 },
	{ "xxh32", 890 },   { "xxh64", 716 },  { "xxh3", 490 },   { "sha1", 10000 },
	{ "sha256", 20000 }, { "none", 0 },
};

void cost_table_default(struct cost_table *t, const char *hash_name)
{
	t->checksum_ns = 716;
	for (size_t i = 0; i < G_N_ELEMENTS(default_checksum_ns); i++)
		if (hash_name && strcmp(hash_name, default_checksum_ns[i].name) == 0)
			t->checksum_ns = default_checksum_ns[i].ns;
	t->memcmp_ns = 730;
	t->copy_ns = 920;
	t->visit_ns = 150;
	t->node_ns = 60;
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
	g_array_free(rows, TRUE);
	return true;
}
