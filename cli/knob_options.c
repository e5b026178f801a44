// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The knob options of the commands that run the model (run, advise): every
 * knob but run and advisor_mode, in the sysfs spelling and with dashes,
 * fixed for the whole run.
 */
#include <inttypes.h>
#include <stdio.h>
#include "cli/cli.h"
#include "util/parse.h"

static bool knob_is_option(enum ksm_knob k)
{
	return k != KNOB_RUN && k != KNOB_ADVISOR_MODE;
}

void knob_options_add(GArray *longopts, GPtrArray *names)
{
	for (int i = 0; i < KNOB_NR; i++) {
		if (!knob_is_option(i))
			continue;
		char *under = g_strdup(knob_table[i].name);
		char *dash = g_strdelimit(g_strdup(under), "_", '-');
		struct option o1 = { dash, required_argument, NULL, CLI_OPT_KNOB + i };
		struct option o2 = { under, required_argument, NULL, CLI_OPT_KNOB + i };

		g_ptr_array_add(names, dash);
		g_ptr_array_add(names, under);
		g_array_append_val(longopts, o1);
		g_array_append_val(longopts, o2);
	}
}

int knob_option_take(const char *prog, int c, const char *arg, struct ksm_options *opt)
{
	if (c < CLI_OPT_KNOB || c >= CLI_OPT_KNOB + KNOB_NR)
		return 0;
	const struct knob_info *kn = &knob_table[c - CLI_OPT_KNOB];
	uint64_t v;

	if (!parse_u64(arg, kn->max, &v) || v < kn->min) {
		char *dash = g_strdelimit(g_strdup(kn->name), "_", '-');

		fprintf(stderr, "%s: --%s wants %" PRIu64 "..%" PRIu64 ", not '%s'\n", prog, dash,
			kn->min, kn->max, arg);
		g_free(dash);
		return -1;
	}
	opt->pinned[c - CLI_OPT_KNOB] = true;
	opt->pinned_value[c - CLI_OPT_KNOB] = v;
	return 1;
}
