// SPDX-License-Identifier: GPL-2.0-or-later
/* ksmsim bench WHAT: one benchmark per file, dispatched here. */
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"
#include "cli/cli.h"

int cmd_bench(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
		const char *summary;
	} benches[] = {
		{ "trace", bench_trace, "records/s parsing large text and binary traces" },
		{ "costs", bench_costs, "per-page cost of each checksum, memcmp, copy" },
		{ "model", bench_model, "model visits per second, peak RSS, bytes per page" },
	};
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		FILE *out = argc < 2 ? stderr : stdout;
		fprintf(out, "usage: ksmsim bench WHAT [OPTIONS]\n\n");
		for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
			fprintf(out, "  %-6s %s\n", benches[i].name, benches[i].summary);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			return benches[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ksmsim bench: unknown benchmark '%s'\n", argv[1]);
	return EXIT_USAGE;
}
