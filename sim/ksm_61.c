// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel a run models (--kernel, sim/MODEL.md "Linux 6.1"): what Linux
 * 6.1's KSM lacks of 6.18's, so that a trace or an option asking for it is
 * refused with the release that added it, rather than replayed as a kernel
 * that never existed. The behaviours that differ are branches where they
 * happen (ksm.c, mm.c), each naming its kernel change.
 */
#include <string.h>
#include "sim/ksm_internal.h"

const char *ksm_kernel_name(enum ksm_kernel kernel)
{
	return kernel == KSM_KERNEL_6_1 ? "6.1" : "6.18";
}

bool ksm_kernel_parse(const char *s, enum ksm_kernel *out)
{
	if (!strcmp(s, "6.18"))
		*out = KSM_KERNEL_6_18;
	else if (!strcmp(s, "6.1"))
		*out = KSM_KERNEL_6_1;
	else
		return false;
	return true;
}

enum ksm_kernel ksm_modelled_kernel(const struct ksm *k)
{
	return k->opt.kernel;
}

const char *ksm_kernel_lacks_knob(enum ksm_kernel kernel, enum ksm_knob knob)
{
	if (kernel != KSM_KERNEL_6_1)
		return NULL;
	switch (knob) {
	case KNOB_SMART_SCAN:
		return "6.7";	/* "mm/ksm: add smart page scanning mode" */
	case KNOB_ADVISOR_MODE:
	case KNOB_ADVISOR_MAX_CPU:
	case KNOB_ADVISOR_MIN_PAGES_TO_SCAN:
	case KNOB_ADVISOR_MAX_PAGES_TO_SCAN:
	case KNOB_ADVISOR_TARGET_SCAN_TIME:
		return "6.8";	/* "mm/ksm: add ksm advisor" */
	default:
		return NULL;
	}
}

bool ksm_kernel_refuse_knob(const struct ksm *k, enum ksm_knob knob, GError **error)
{
	const char *since = ksm_kernel_lacks_knob(k->opt.kernel, knob);

	if (!since)
		return true;
	g_set_error(error, KSM_ERROR, KSM_ERROR_ABSENT,
		    "Linux %s has no knob %s (added in %s); drop the record or use --kernel 6.18",
		    ksm_kernel_name(k->opt.kernel), knob_table[knob].name, since);
	return false;
}

bool ksm_kernel_refuse_prctl(const struct ksm *k, GError **error)
{
	if (k->opt.kernel != KSM_KERNEL_6_1)
		return true;
	g_set_error(error, KSM_ERROR, KSM_ERROR_ABSENT,
		    "Linux 6.1 has no prctl(PR_SET_MEMORY_MERGE) (added in 6.4);"
		    " drop the record or use --kernel 6.18");
	return false;
}
