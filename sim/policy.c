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

enum param_kind {
	PARAM_RANGE,		/* a whole number from min to max */
	PARAM_POWER_OF_TWO,	/* ... that is a power of 2 */
	PARAM_CHOICE,		/* one of choices[], stored as its index */
};

/*
 * One key=value of a policy: parsing, its error, its default and the
 * canonical spec are loops over these.
 */
struct ksm_policy_param {
	const char *key;
	enum param_kind kind;
	uint64_t min, max, def;
	const char *what;		/* PARAM_RANGE: what the number is, for its error */
	const char *const *choices;	/* PARAM_CHOICE: the values, NULL-ended */
	size_t off, size;		/* the field in struct ksm_policy: 4 or 8 bytes */
	bool always_shown;		/* in the canonical spec even at 0 */
	const char *not_below;		/* a key this one may not be less than */
};

#define FIELD(f) .off = offsetof(struct ksm_policy, f), .size = sizeof(((struct ksm_policy *)0)->f)

static const char *const class_by_names[] = { [KSM_CLASS_BY_KEY8] = "key8",
					      [KSM_CLASS_BY_MM] = "mm", NULL };

static const struct ksm_policy_param dirty_bit_keys[] = {
	{ "flush_ns", PARAM_RANGE, 0, 1000000000, 0, "nanoseconds", NULL, FIELD(dirty_flush_ns) },
	{ NULL },
};
static const struct ksm_policy_param partial_keys[] = {
	{ "k", PARAM_POWER_OF_TWO, 1, KSM_PARTIAL_WORDS_MAX, 16, NULL, NULL, FIELD(partial_k),
	  true },
	{ "max", PARAM_POWER_OF_TWO, 1, KSM_PARTIAL_WORDS_MAX, KSM_PARTIAL_WORDS_MAX, NULL, NULL,
	  FIELD(partial_k_max), true, "k" },
	{ NULL },
};
static const struct ksm_policy_param classified_keys[] = {
	{ "classes", PARAM_RANGE, 1, KSM_CLASSES_MAX, 16, "a count", NULL, FIELD(classes), true },
	{ "by", PARAM_CHOICE, 0, 0, KSM_CLASS_BY_KEY8, NULL, class_by_names, FIELD(class_by),
	  true },
	{ NULL },
};
static const struct ksm_policy_param no_keys[] = { { NULL } };

static const struct ksm_policy_row rows[ROW_NR] = {
	[ROW_KERNEL] = { "kernel",
		"mm/ksm.c as it is: the --hash checksum gate, one stable and one unstable tree per node",
		"", true, .keys = no_keys },
	[ROW_NO_GATE] = { "no-gate",
		"no change detection: every visited page goes to the trees (the kernel with --hash none)",
		"", false, .detector = KSM_DETECT_NONE, .keys = no_keys },
	[ROW_DIRTY_BIT] = { "dirty-bit",
		"the page table's dirty bit: exact, no checksum; a visit that finds it set clears it "
		"and flushes the TLB",
		"flush_ns=0: ns a clear and flush costs (0: the cost table's wrprotect-flush, "
		"3100 built in)", false, .detector = KSM_DETECT_DIRTY_BIT, .keys = dirty_bit_keys },
	[ROW_PARTIAL] = { "partial-hash",
		"UKSM-style: a hash of k 32-bit words at a fixed stride; a VMA's k doubles when a page "
		"merged in it is written again within the pass",
		"k=16: words sampled at first (1..1024, a power of 2); "
		"max=1024: the most k grows to (k..1024, a power of 2)", false,
		.detector = KSM_DETECT_PARTIAL, .keys = partial_keys },
	[ROW_CLASSIFIED] = { "classified",
		"CMD-style: the stable and unstable trees split into classes by a cheap page feature; "
		"pages of different classes never merge",
		"classes=16: trees per node (1..4096); "
		"by=key8: the feature, key8 (a hash of the first 8 bytes) or mm (the process)", true,
		.keys = classified_keys },
	[ROW_SELECTIVE] = { "selective",
		"Selective KSM: a stable and an unstable tree per security domain (--domain), so pages "
		"of different domains never merge",
		/* a class per domain (domain + 1: class 0 stays empty) */
		"", true, true, .classes = KSM_CLASSES_MAX, .class_by = KSM_CLASS_BY_DOMAIN,
		.keys = no_keys },
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

static uint64_t param_get(const struct ksm_policy *p, const struct ksm_policy_param *k)
{
	const char *f = (const char *)p + k->off;
	return k->size == sizeof(uint64_t) ? *(const uint64_t *)f : *(const unsigned *)f;
}

static void param_set(struct ksm_policy *p, const struct ksm_policy_param *k, uint64_t v)
{
	char *f = (char *)p + k->off;
	if (k->size == sizeof(uint64_t))
		*(uint64_t *)f = v;
	else
		*(unsigned *)f = (unsigned)v;
}

static const struct ksm_policy_param *param_find(int row, const char *key)
{
	for (const struct ksm_policy_param *k = rows[row].keys; k->key; k++)
		if (!strcmp(k->key, key))
			return k;
	return NULL;
}

/* A value's meaning, from its row: "a power of 2 from 1 to 1024", "key8 or mm". */
static void param_accepts(const struct ksm_policy_param *k, char *buf, size_t size)
{
	if (k->kind == PARAM_CHOICE) {
		size_t n = 0;
		buf[0] = '\0';
		for (const char *const *c = k->choices; *c && n < size; c++)
			n += snprintf(buf + n, size - n, "%s%s", c == k->choices ? "" : " or ", *c);
		return;
	}
	snprintf(buf, size, "%s from %" PRIu64 " to %" PRIu64,
		 k->kind == PARAM_POWER_OF_TWO ? "a power of 2" : k->what, k->min, k->max);
}

/* One key=value of the row's parameters into p; false with the reason in why. */
static bool set_param(int row, struct ksm_policy *p, const char *key, const char *val, char *why,
		      size_t size)
{
	const struct ksm_policy_param *k = param_find(row, key);
	uint64_t v = 0;

	if (!k) {
		if (!rows[row].params[0])
			snprintf(why, size, "%s takes no parameters (got '%s')", rows[row].name, key);
		else
			snprintf(why, size, "%s has no parameter '%s' (it takes: %s)", rows[row].name,
				 key, rows[row].params);
		return false;
	}
	bool ok = false;
	if (k->kind == PARAM_CHOICE) {
		for (const char *const *c = k->choices; *c && !ok; c++)
			if (!strcmp(*c, val)) {
				v = (uint64_t)(c - k->choices);
				ok = true;
			}
	} else {
		ok = parse_u64(val, UINT64_MAX, &v) && v >= k->min && v <= k->max &&
		     (k->kind != PARAM_POWER_OF_TWO || power_of_two(v));
	}
	if (!ok) {
		char accepts[128];
		param_accepts(k, accepts, sizeof(accepts));
		snprintf(why, size, "%s=%s: %s", key, val, accepts);
		return false;
	}
	param_set(p, k, v);
	return true;
}

static void defaults(int row, struct ksm_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->row = &rows[row];
	p->detector = rows[row].detector;
	p->classes = rows[row].classes ? rows[row].classes : 1;
	p->class_by = rows[row].class_by;
	for (const struct ksm_policy_param *k = rows[row].keys; k->key; k++)
		param_set(p, k, k->def);
}

/* The keys that bound another ("max" not below "k"): false with the reason in why. */
static bool check_bounds(int row, const struct ksm_policy *p, char *why, size_t size)
{
	for (const struct ksm_policy_param *k = rows[row].keys; k->key; k++) {
		const struct ksm_policy_param *low = k->not_below ? param_find(row, k->not_below)
								   : NULL;
		if (low && param_get(p, k) < param_get(p, low)) {
			snprintf(why, size, "%s=%" PRIu64 " is below %s=%" PRIu64, k->key,
				 param_get(p, k), low->key, param_get(p, low));
			return false;
		}
	}
	return true;
}

/* NAME, then :key=value,... for each key always shown or set. */
static void canonical(int row, struct ksm_policy *p)
{
	size_t n = snprintf(p->spec, sizeof(p->spec), "%s", rows[row].name);
	char sep = ':';

	for (const struct ksm_policy_param *k = rows[row].keys; k->key; k++) {
		uint64_t v = param_get(p, k);
		if (!k->always_shown && !v)
			continue;
		if (k->kind == PARAM_CHOICE)
			n += snprintf(p->spec + n, sizeof(p->spec) - n, "%c%s=%s", sep, k->key,
				      k->choices[v]);
		else
			n += snprintf(p->spec + n, sizeof(p->spec) - n, "%c%s=%" PRIu64, sep, k->key,
				      v);
		sep = ',';
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
	if (!check_bounds(row, &p, why, sizeof(why)))
		return bad(error, spec, NULL, why);
	if (row == ROW_KERNEL) {
		memset(out, 0, sizeof(*out));	/* the default, exactly */
		return true;
	}
	canonical(row, &p);
	*out = p;
	return true;
}
