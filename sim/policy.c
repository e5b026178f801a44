// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The policy registry: one row per design a run can put in place of the
 * kernel's, and the parser of --policy NAME[:key=value,...]. The decisions
 * themselves are policy_gate.c's, called from where the kernel makes its
 * own (ksm.c: the gate in cmp_and_merge_page, the trees' index), switched
 * on the parsed policy, so the kernel's path pays one predictable branch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "sim/ksm.h"
#include "util/nearest.h"
#include "util/parse.h"

enum {
	ROW_KERNEL, ROW_NO_GATE, ROW_DIRTY_BIT, ROW_PARTIAL, ROW_CLASSIFIED, ROW_SELECTIVE, ROW_NR
};

static const struct ksm_policy_row rows[ROW_NR] = {
	[ROW_KERNEL] = { "kernel",
		"mm/ksm.c as it is: the --hash checksum gate, one stable and one unstable tree per node",
		"", true },
	[ROW_NO_GATE] = { "no-gate",
		"no change detection: every visited page goes to the trees (the kernel with --hash none)",
		"", false },
	[ROW_DIRTY_BIT] = { "dirty-bit",
		"the page table's dirty bit: exact, no checksum; a visit that finds it set clears it "
		"and flushes the TLB",
		"flush_ns=0: ns a clear and flush costs (0: the cost table's wrprotect-flush, "
		"3100 built in)", false },
	[ROW_PARTIAL] = { "partial-hash",
		"UKSM-style: a hash of k 32-bit words at a fixed stride; a VMA's k doubles when a page "
		"merged in it is written again within the pass",
		"k=16: words sampled at first (1..1024, a power of 2); "
		"max=1024: the most k grows to (k..1024, a power of 2)", false },
	[ROW_CLASSIFIED] = { "classified",
		"CMD-style: the stable and unstable trees split into classes by a cheap page feature; "
		"pages of different classes never merge",
		"classes=16: trees per node (1..4096); "
		"by=key8: the feature, key8 (a hash of the first 8 bytes) or mm (the process)", true },
	[ROW_SELECTIVE] = { "selective",
		"Selective KSM: a stable and an unstable tree per security domain (--domain), so pages "
		"of different domains never merge",
		"", true, true },
};

const struct ksm_policy_row *ksm_policy_all(size_t *n)
{
	*n = ROW_NR;
	return rows;
}

const char *ksm_policy_name(const struct ksm_policy *p)
{
	return p->row && p->spec[0] ? p->spec : "kernel";
}

static bool power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

static bool bad(GError **error, const char *spec, const char *fmt, const char *what)
{
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--policy '%s': %s", spec,
		    what ? what : fmt);
	return false;
}

/* One key=value of the row's parameters into p; false with the reason in why. */
static bool set_param(int row, struct ksm_policy *p, const char *key, const char *val, char *why,
		      size_t size)
{
	uint64_t v = 0;
	bool num = parse_u64(val, UINT64_MAX, &v);

	if (row == ROW_PARTIAL && (!strcmp(key, "k") || !strcmp(key, "max"))) {
		if (!num || !power_of_two(v) || v > KSM_PARTIAL_WORDS_MAX) {
			snprintf(why, size, "%s=%s: a power of 2 from 1 to %u", key, val,
				 KSM_PARTIAL_WORDS_MAX);
			return false;
		}
		if (key[0] == 'k')
			p->partial_k = (unsigned)v;
		else
			p->partial_k_max = (unsigned)v;
		return true;
	}
	if (row == ROW_DIRTY_BIT && !strcmp(key, "flush_ns")) {
		if (!num || v > 1000000000) {
			snprintf(why, size, "flush_ns=%s: nanoseconds from 0 to 1000000000", val);
			return false;
		}
		p->dirty_flush_ns = v;
		return true;
	}
	if (row == ROW_CLASSIFIED && !strcmp(key, "classes")) {
		if (!num || v < 1 || v > KSM_CLASSES_MAX) {
			snprintf(why, size, "classes=%s: a count from 1 to %u", val, KSM_CLASSES_MAX);
			return false;
		}
		p->classes = (unsigned)v;
		return true;
	}
	if (row == ROW_CLASSIFIED && !strcmp(key, "by")) {
		if (!strcmp(val, "key8"))
			p->class_by = KSM_CLASS_BY_KEY8;
		else if (!strcmp(val, "mm"))
			p->class_by = KSM_CLASS_BY_MM;
		else {
			snprintf(why, size, "by=%s: key8 or mm", val);
			return false;
		}
		return true;
	}
	if (!rows[row].params[0])
		snprintf(why, size, "%s takes no parameters (got '%s')", rows[row].name, key);
	else
		snprintf(why, size, "%s has no parameter '%s' (it takes: %s)", rows[row].name, key,
			 rows[row].params);
	return false;
}

static void defaults(int row, struct ksm_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->row = &rows[row];
	p->classes = 1;
	switch (row) {
	case ROW_NO_GATE:
		p->detector = KSM_DETECT_NONE;
		break;
	case ROW_DIRTY_BIT:
		p->detector = KSM_DETECT_DIRTY_BIT;
		break;
	case ROW_PARTIAL:
		p->detector = KSM_DETECT_PARTIAL;
		p->partial_k = 16;
		p->partial_k_max = KSM_PARTIAL_WORDS_MAX;
		break;
	case ROW_CLASSIFIED:
		p->classes = 16;
		p->class_by = KSM_CLASS_BY_KEY8;
		break;
	case ROW_SELECTIVE:
		/* a class per domain (domain + 1: class 0 stays empty) */
		p->classes = KSM_CLASSES_MAX;
		p->class_by = KSM_CLASS_BY_DOMAIN;
		break;
	}
}

static void canonical(int row, struct ksm_policy *p)
{
	switch (row) {
	case ROW_PARTIAL:
		snprintf(p->spec, sizeof(p->spec), "%s:k=%u,max=%u", rows[row].name, p->partial_k,
			 p->partial_k_max);
		break;
	case ROW_CLASSIFIED:
		snprintf(p->spec, sizeof(p->spec), "%s:classes=%u,by=%s", rows[row].name,
			 p->classes, p->class_by == KSM_CLASS_BY_MM ? "mm" : "key8");
		break;
	case ROW_DIRTY_BIT:
		if (p->dirty_flush_ns)
			snprintf(p->spec, sizeof(p->spec), "%s:flush_ns=%" PRIu64, rows[row].name,
				 p->dirty_flush_ns);
		else
			snprintf(p->spec, sizeof(p->spec), "%s", rows[row].name);
		break;
	default:
		snprintf(p->spec, sizeof(p->spec), "%s", rows[row].name);
		break;
	}
}

bool ksm_policy_parse(const char *spec, struct ksm_policy *out, GError **error)
{
	char why[256];
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	int row = -1;

	for (int i = 0; i < ROW_NR; i++)
		if (strlen(rows[i].name) == nlen && !g_ascii_strncasecmp(rows[i].name, spec, nlen))
			row = i;
	if (row < 0) {
		char *given = g_strndup(spec, nlen);
		ptrdiff_t near = name_nearest(given, rows, ROW_NR, sizeof(rows[0]),
					      offsetof(struct ksm_policy_row, name));
		g_free(given);
		if (near >= 0) {
			snprintf(why, sizeof(why), "no such policy; did you mean '%s'? "
				 "('ksmsim policies' describes them)", rows[near].name);
			return bad(error, spec, NULL, why);
		}
		GString *names = g_string_new(NULL);
		for (int i = 0; i < ROW_NR; i++)
			g_string_append_printf(names, "%s%s", i ? ", " : "", rows[i].name);
		snprintf(why, sizeof(why), "no such policy (%s; 'ksmsim policies' describes them)",
			 names->str);
		g_string_free(names, TRUE);
		return bad(error, spec, NULL, why);
	}
	struct ksm_policy p;
	defaults(row, &p);
	if (colon) {
		if (!colon[1])
			return bad(error, spec, NULL, "nothing after ':' (key=value,... expected)");
		gchar **kvs = g_strsplit(colon + 1, ",", -1);
		bool ok = true;
		for (gchar **kv = kvs; ok && *kv; kv++) {
			char *eq = strchr(*kv, '=');
			if (!eq || eq == *kv) {
				snprintf(why, sizeof(why), "'%s': key=value expected", *kv);
				ok = false;
				break;
			}
			*eq = '\0';
			/* a key given twice is a typo or a sweep gone wrong: never silently the last */
			for (gchar **before = kvs; ok && before < kv; before++)
				if (!strcmp(*before, *kv)) {
					snprintf(why, sizeof(why), "%s is given twice", *kv);
					ok = false;
				}
			ok = ok && set_param(row, &p, *kv, eq + 1, why, sizeof(why));
		}
		g_strfreev(kvs);
		if (!ok)
			return bad(error, spec, NULL, why);
	}
	if (row == ROW_PARTIAL && p.partial_k_max < p.partial_k) {
		snprintf(why, sizeof(why), "max=%u is below k=%u", p.partial_k_max, p.partial_k);
		return bad(error, spec, NULL, why);
	}
	if (row == ROW_KERNEL) {
		memset(out, 0, sizeof(*out));	/* the default, exactly */
		return true;
	}
	canonical(row, &p);
	*out = p;
	return true;
}
