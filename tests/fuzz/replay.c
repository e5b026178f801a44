// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A plain driver for a fuzz target, built with the normal compiler: runs
 * LLVMFuzzerTestOneInput on every file named (directories: every file in
 * them, sorted), so the suite replays the seed corpus and the regression
 * inputs on every run. A failed check aborts, naming the input first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "fuzz_common.h"

static int replay_file(const char *path)
{
	gchar *data;
	gsize len;
	GError *error = NULL;
	if (!g_file_get_contents(path, &data, &len, &error)) {
		fprintf(stderr, "replay: %s\n", error->message);
		g_error_free(error);
		return 1;
	}
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, (size_t)len);
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	g_free(data);
	return 0;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int bad = 0, done = 0;
	for (int i = 1; i < argc; i++) {
		if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
			bad |= replay_file(argv[i]);
			done++;
			continue;
		}
		GError *error = NULL;
		GDir *d = g_dir_open(argv[i], 0, &error);
		if (!d) {
			fprintf(stderr, "replay: %s\n", error->message);
			g_error_free(error);
			return 1;
		}
		GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
		const char *n;
		while ((n = g_dir_read_name(d)))
			if (n[0] != '.' && !g_str_has_suffix(n, ".md"))
				g_ptr_array_add(names, g_build_filename(argv[i], n, NULL));
		g_dir_close(d);
		g_ptr_array_sort(names, by_name);
		for (guint j = 0; j < names->len; j++) {
			bad |= replay_file(names->pdata[j]);
			done++;
		}
		g_ptr_array_free(names, TRUE);
	}
	printf("replayed %d inputs\n", done);
	return bad;
}
