/* SPDX-License-Identifier: MIT */
/*
 * review_digest.c - a parsed record into its compact digest.
 *
 * Every string goes through review_clean before it is kept: a workload
 * names its own process (comm) and command, so a log may carry terminal
 * escapes, bidi overrides or anything else; the views print only what is
 * left. Numbers are taken only when they are JSON integers in range.
 * Records of schema 1 had no outcome: it is derived from the verdict and
 * the status the way gs_decision_outcome (outcome.c) decides it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quota.h"
#include "review_json.h"

#define NV_ERR_NO_MEMORY_TEXT "0x51"
#define CUT_MARK "..."

const char *review_json_str(json_object *o, const char *key)
{
	json_object *f;

	return json_object_object_get_ex(o, key, &f) && json_object_is_type(f, json_type_string)
	               ? json_object_get_string(f)
	               : NULL;
}

bool review_json_i64(json_object *o, const char *key, int64_t *out)
{
	json_object *f;

	if (!json_object_object_get_ex(o, key, &f) || !json_object_is_type(f, json_type_int))
		return false;
	errno = 0;
	*out = json_object_get_int64(f);
	return errno == 0;
}

bool review_json_u64(json_object *o, const char *key, uint64_t *out)
{
	json_object *f;
	int64_t i;

	if (!json_object_object_get_ex(o, key, &f) || !json_object_is_type(f, json_type_int))
		return false;
	errno = 0;
	i = json_object_get_int64(f);
	*out = json_object_get_uint64(f);
	return errno == 0 && (i >= 0 || *out > INT64_MAX);
}

bool review_json_double(json_object *o, const char *key, double *out)
{
	json_object *f;

	if (!json_object_object_get_ex(o, key, &f) ||
	    !(json_object_is_type(f, json_type_double) || json_object_is_type(f, json_type_int)))
		return false;
	*out = json_object_get_double(f);
	return *out == *out;   /* not NaN */
}

/* The length of the UTF-8 character at s (1-4), or 0 if it is not one. */
static unsigned char_len(const unsigned char *s, uint32_t *cp)
{
	unsigned n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
	           : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };

	if (!n)
		return 0;
	*cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return *cp >= min[n] && *cp <= 0x10ffff && (*cp < 0xd800 || *cp > 0xdfff) ? n : 0;
}

/* Characters that move the cursor, change colours or reorder text: C0
 * and C1 controls, and every Bidi_Control character (Unicode's
 * PropList.txt: U+061C, U+200E-200F, U+202A-202E, U+2066-2069). */
static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200e && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0xfeff;
}

/* The blocks of right-to-left scripts (Bidi_Class R or AL, and the
 * Arabic digits among them), from Unicode's DerivedBidiClass.txt: a
 * strong right-to-left letter in a cell makes a terminal that applies
 * the bidi algorithm reorder its neighbours (issue #32: a usage row
 * written "1.000 2.000" read "2.000 1.000"), so each is written as
 * <U+XXXX>: readable, and inert. */
static const struct { uint32_t first, last; } rtl_blocks[] = {
	{ 0x0590, 0x08ff },     /* Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, ... */
	{ 0xfb1d, 0xfdff },     /* Hebrew and Arabic presentation forms A */
	{ 0xfe70, 0xfefe },     /* Arabic presentation forms B */
	{ 0x10800, 0x10fff },   /* Cypriot to Old Uyghur, Hanifi Rohingya, Yezidi, ... */
	{ 0x1e800, 0x1efff },   /* Mende Kikakui, Adlam, Siyaq numbers, Arabic mathematics */
};

static bool is_rtl(uint32_t cp)
{
	for (unsigned i = 0; i < sizeof(rtl_blocks) / sizeof(rtl_blocks[0]); i++)
		if (cp >= rtl_blocks[i].first && cp <= rtl_blocks[i].last)
			return true;
	return false;
}

#define ESCAPE_TEXT 16   /* "<U+10FFFF>" and its NUL */

void review_clean(char *dst, size_t len, const char *src)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t out = 0;

	if (!len)
		return;
	while (*s) {
		uint32_t cp = 0;
		unsigned n = char_len(s, &cp);
		const char *put = (const char *)s;
		unsigned put_len = n;
		char escape[ESCAPE_TEXT];

		if (n && !is_control(cp) && is_rtl(cp)) {
			put_len = (unsigned)snprintf(escape, sizeof(escape), "<U+%04X>", (unsigned)cp);
			put = escape;
		} else if (!n || is_control(cp)) {
			/* A line break or tab (a command written over lines)
			 * reads as a blank; any other control as "?". */
			put = cp == '\n' || cp == '\t' || cp == '\r' ? " " : "?";
			put_len = 1;
			n = n ? n : 1;
		}
		if (out + put_len + 1 > len) {
			/* Cut: say so, at a character boundary (backing up over
			 * the continuation bytes of a character the mark cuts). */
			size_t mark = sizeof(CUT_MARK) - 1;
			if (len > mark + 1) {
				if (out + mark + 1 > len) {
					out = len - mark - 1;
					while (out && (((unsigned char)dst[out]) & 0xc0) == 0x80)
						out--;
				}
				memcpy(dst + out, CUT_MARK, mark);
				out += mark;
			}
			break;
		}
		memcpy(dst + out, put, put_len);
		out += put_len;
		s += n;
	}
	dst[out] = '\0';
}

static void take_text(char *dst, size_t len, json_object *o, const char *key)
{
	review_clean(dst, len, review_json_str(o, key));
}

static void take_u64(json_object *o, const char *key, uint64_t *out)
{
	if (!review_json_u64(o, key, out))
		*out = REVIEW_UNSET;
}

static void take_object(struct review_rec *r, struct review_rec_text *t, json_object *o)
{
	static const struct { const char *name, *number, *kind; } keys[] = {
		{ "class_name", "class", "class" },
		{ "control_name", "control", "control" },
		{ NULL, "escape", "escape" },
	};
	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = keys[i].name ? review_json_str(o, keys[i].name) : NULL;
		if (!v)
			v = review_json_str(o, keys[i].number);
		if (v) {
			review_clean(t->object, sizeof(t->object), v);
			r->kind = keys[i].kind;
			return;
		}
	}
}

/* Schema 1 wrote no outcome: the same decision as gs_decision_outcome. */
static void derive_outcome(const struct review_rec *r, struct review_rec_text *t, json_object *o)
{
	const char *status = review_json_str(o, "nv_status");
	bool failed = status && strcmp(status, "0x0") != 0;
	const char *v = t->verdict, *out = "";

	if (strcmp(v, "allow") == 0)
		out = !failed ? "ok"
		      : strcmp(status, NV_ERR_NO_MEMORY_TEXT) == 0 && t->resource[0] ? "device_full"
		                                                                       : "driver";
	else if (strcmp(v, "continue") == 0)
		out = "continued";
	else if (strcmp(v, "release") == 0)
		out = "released";
	else if (strcmp(v, "deny") == 0)
		out = r->usage_before != REVIEW_UNSET ? "quota" : "policy";
	else if (strcmp(v, "refuse") == 0)
		out = "policy";
	snprintf(t->outcome, sizeof(t->outcome), "%s", out);
}

static void join_strings(char *dst, size_t len, json_object *a, const char *sep);

/* Schema 3: a usage record's "used" and "peak", a refusal's "stack"
 * (frames innermost first, as the supervisor symbolized them) or the
 * reason there is none. */
static void take_usage_and_stack(struct review_rec *r, struct review_rec_text *t, json_object *o)
{
	json_object *frames;
	char why[REVIEW_TEXT];

	if (r->event == REVIEW_EV_USAGE) {
		take_u64(o, "used", &r->usage_after);
		take_u64(o, "peak", &r->peak);
	}
	if (json_object_object_get_ex(o, "stack", &frames))
		join_strings(t->stack, sizeof(t->stack), frames, " \u2190 ");
	else if (review_json_str(o, "stack_error")) {
		take_text(why, sizeof(why), o, "stack_error");
		snprintf(t->stack, sizeof(t->stack), "(no stack: %s)", why);
	}
}

/* The digest's texts, each kept once in the pool; with no pool (a view
 * that streams), they point into t, valid until the next record. */
static int keep_texts(struct review_rec *r, const struct review_rec_text *t, struct review_pool *pool)
{
	struct { const char **field; const char *text; } k[] = {
		{ &r->comm, t->comm },       { &r->call, t->call },         { &r->object, t->object },
		{ &r->verdict, t->verdict }, { &r->outcome, t->outcome },   { &r->status, t->status },
		{ &r->resource, t->resource }, { &r->reason, t->reason },   { &r->group, t->group },
		{ &r->stack, t->stack },
	};
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!(*k[i].field = pool ? review_intern(pool, k[i].text) : k[i].text))
			return -1;
	return 0;
}

int review_digest_fields(struct review_rec *r, json_object *o, struct review_pool *pool,
                         struct review_rec_text *scratch)
{
	struct review_rec_text local, *const t = pool ? &local : scratch;
	int64_t v;
	const char *status;

	/* All but the event's name, which the reader wrote first. */
	memset(t->comm, 0, sizeof(*t) - offsetof(struct review_rec_text, comm));
	if (review_json_i64(o, "pid", &v) && v >= 0)
		r->pid = v;
	if (review_json_i64(o, "tid", &v) && v >= 0)
		r->tid = v;
	if ((review_json_i64(o, "device", &v) || review_json_i64(o, "gpu", &v)) && v >= 0 &&
	    v < (int64_t)REVIEW_GPUS)
		r->gpu = (int)v;
	take_text(t->comm, sizeof(t->comm), o, "comm");
	take_text(t->call, sizeof(t->call), o, "call");
	take_object(r, t, o);
	take_text(t->verdict, sizeof(t->verdict), o, "verdict");
	take_text(t->resource, sizeof(t->resource), o, "resource");
	take_text(t->reason, sizeof(t->reason), o, "reason");
	if (!t->reason[0])   /* an "error" record says what went wrong here */
		take_text(t->reason, sizeof(t->reason), o, "message");
	take_text(t->group, sizeof(t->group), o, "group");
	status = review_json_str(o, "nv_status_name");
	status = status ? status : review_json_str(o, "nv_status");
	review_clean(t->status, sizeof(t->status), status ? status : review_json_str(o, "errno"));
	take_u64(o, "size", &r->size);
	take_u64(o, "usage_before", &r->usage_before);
	take_u64(o, "usage_after", &r->usage_after);
	take_u64(o, "quota", &r->quota);
	take_u64(o, "count", &r->count);
	take_u64(o, "first_seq", &r->first_seq);
	if (!review_json_double(o, "measured_share", &r->share))
		r->share = -1;
	take_usage_and_stack(r, t, o);
	take_text(t->outcome, sizeof(t->outcome), o, "outcome");
	if (!t->outcome[0] && t->verdict[0])
		derive_outcome(r, t, o);
	r->refusal = strcmp(t->verdict, "deny") == 0 || strcmp(t->verdict, "refuse") == 0;
	return keep_texts(r, t, pool);
}

/* "a,b,c" from an array of strings (other members skipped). A member
 * that does not fit whole ends the text with "...": a cut in the middle
 * of a character would not be UTF-8. */
static void join_strings(char *dst, size_t len, json_object *a, const char *sep)
{
	char part[REVIEW_TEXT];
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	size_t used = 0, sep_len = strlen(sep), mark = sizeof(CUT_MARK) - 1;

	dst[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		size_t need;
		if (!json_object_is_type(e, json_type_string))
			continue;
		review_clean(part, sizeof(part), json_object_get_string(e));
		need = (used ? sep_len : 0) + strlen(part);
		if (used + need + 1 > len) {
			if (used + mark + 1 <= len)
				memcpy(dst + used, CUT_MARK, mark + 1);
			return;
		}
		snprintf(dst + used, len - used, "%s%s", used ? sep : "", part);
		used += need;
	}
}

#define POLICY_PART (2 * REVIEW_TEXT + 8)
#define PERCENT 100.0

static void append(char *dst, size_t len, const char *part)
{
	size_t used = strlen(dst);

	if (part[0] && used + 1 < len)
		snprintf(dst + used, len - used, "%s%s", used ? " " : "", part);
}

/* One member of the start record's policy as its policy-file line. */
static void policy_member(char *part, size_t len, const char *key, json_object *v)
{
	char text[POLICY_PART], size[REVIEW_TEXT];
	static const struct { const char *json, *policy; } names[] = {
		{ "groups", "allow" }, { "allow_classes", "allow.class" }, { "allow_controls", "allow.control" },
		{ "gpu_uuids", "gpus" },
	};
	const char *name = key;

	part[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(key, names[i].json) == 0)
			name = names[i].policy;
	/* A quota kind's limit: the start record names it by its row. */
	for (int k = 0; k < GS_QK_N; k++)
		if (strcmp(key, gs_quota_kind_row((enum gs_quota_kind)k)->record_key) == 0)
			name = gs_quota_kind_row((enum gs_quota_kind)k)->key;
	if (json_object_is_type(v, json_type_int) && strcmp(key, "mem") == 0) {
		uint64_t b = json_object_get_uint64(v);
		snprintf(part, len, "mem=%s", gs_option_size(b, size, sizeof(size)));
	} else if (json_object_is_type(v, json_type_int)) {
		snprintf(part, len, "%s=%" PRId64, name, json_object_get_int64(v));
	} else if (json_object_is_type(v, json_type_string)) {
		review_clean(text, sizeof(text), json_object_get_string(v));
		snprintf(part, len, "%s=%s", name, text);
	} else if (json_object_is_type(v, json_type_array) && json_object_array_length(v)) {
		join_strings(text, sizeof(text), v, ",");
		if (!text[0] && strcmp(key, "gpus") == 0) {
			for (size_t i = 0; i < json_object_array_length(v) && i < REVIEW_GPUS; i++) {
				size_t u = strlen(text);
				snprintf(text + u, sizeof(text) - u, "%s%d", i ? "," : "",
				         json_object_get_int(json_object_array_get_idx(v, i)));
			}
		}
		if (text[0])
			snprintf(part, len, "%s=%s", name, text);
	}
}

/* The texts of a start record while they are built, before they are
 * kept in the pool. */
struct start_text {
	char command[REVIEW_LONG_TEXT], labels[REVIEW_LONG_TEXT], policy[REVIEW_LONG_TEXT];
	char groups[REVIEW_LONG_TEXT], driver[REVIEW_TEXT], level[REVIEW_NAME];
};

/* gpu.N.mem: the sandbox's own per-GPU facts (false: out of memory). */
static bool set_mem_gpu(struct review_sandbox *sb, unsigned long g, uint64_t n)
{
	struct review_gpus *gpus;

	if (g >= REVIEW_GPUS)
		return true;
	if (!(gpus = review_sandbox_gpus(sb)))
		return false;
	gpus->mem_gpu[g] = n;
	return true;
}

static int policy_text(struct review_sandbox *sb, struct start_text *t, json_object *p)
{
	char part[POLICY_PART], size[REVIEW_TEXT];
	json_object *v;
	double target;

	json_object_object_foreach(p, key, val) {
		if (!val)
			continue;
		if (strcmp(key, "sm") == 0 && review_json_double(val, "target", &target)) {
			sb->share_target = target;
			snprintf(part, sizeof(part), "sm=%.0f%%", target * PERCENT);
		} else if (strcmp(key, "mem_gpu") == 0 || strcmp(key, "engines") == 0) {
			bool gpu = strcmp(key, "mem_gpu") == 0;
			if (!json_object_is_type(val, json_type_object))
				continue;
			json_object_object_foreach(val, k2, v2) {
				char name[REVIEW_TEXT];
				uint64_t n;
				if (!v2 || !json_object_is_type(v2, json_type_int))
					continue;
				n = json_object_get_uint64(v2);
				review_clean(name, sizeof(name), k2);
				if (gpu) {
					if (!set_mem_gpu(sb, strtoul(k2, NULL, 10), n))
						return -1;
					snprintf(part, sizeof(part), "gpu.%s.mem=%s", name,
					         gs_option_size(n, size, sizeof(size)));
				} else {
					snprintf(part, sizeof(part), "%s=%" PRIu64, name, n);
				}
				append(t->policy, sizeof(t->policy), part);
			}
			continue;
		} else {
			policy_member(part, sizeof(part), key, val);
		}
		append(t->policy, sizeof(t->policy), part);
	}
	if (review_json_u64(p, "mem", &sb->mem_quota) == false)
		sb->mem_quota = REVIEW_UNSET;
	if (json_object_object_get_ex(p, "groups", &v))
		join_strings(t->groups, sizeof(t->groups), v, ",");
	return 0;
}

static void start_labels_and_driver(struct start_text *t, json_object *o)
{
	json_object *v;
	char version[REVIEW_TEXT / 2], abi[REVIEW_TEXT / 4];

	if (json_object_object_get_ex(o, "labels", &v) && json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, k, val) {
			char part[POLICY_PART], key[REVIEW_TEXT], value[REVIEW_TEXT];
			if (!json_object_is_type(val, json_type_string))
				continue;
			review_clean(key, sizeof(key), k);
			review_clean(value, sizeof(value), json_object_get_string(val));
			snprintf(part, sizeof(part), "%s=%s", key, value);
			append(t->labels, sizeof(t->labels), part);
		}
	}
	if (json_object_object_get_ex(o, "driver", &v) && json_object_is_type(v, json_type_object)) {
		review_clean(version, sizeof(version), review_json_str(v, "version"));
		review_clean(abi, sizeof(abi), review_json_str(v, "abi"));
		snprintf(t->driver, sizeof(t->driver), "%s%s%s%s", version, abi[0] ? " (abi " : "", abi,
		         abi[0] ? ")" : "");
	}
}

static int keep_start(struct review_sandbox *sb, const struct start_text *t, struct review_pool *pool)
{
	struct { const char **field; const char *text; } k[] = {
		{ &sb->command, t->command }, { &sb->labels, t->labels }, { &sb->policy, t->policy },
		{ &sb->groups, t->groups },   { &sb->driver, t->driver }, { &sb->level, t->level },
	};
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!(*k[i].field = review_intern(pool, k[i].text)))
			return -1;
	return 0;
}

static int take_start(struct review_sandbox *sb, const struct review_rec *r, json_object *o,
                      struct review_pool *pool)
{
	struct start_text t = { 0 };
	json_object *v;

	sb->has_start = true;
	sb->start_us = r->time_us;
	snprintf(sb->start_text, sizeof(sb->start_text), "%s", r->time_text);
	if (!review_json_i64(o, "schema", &sb->schema))
		sb->schema = 0;
	take_text(t.level, sizeof(t.level), o, "level");
	if (t.level[0] && json_object_object_get_ex(o, "stacks", &v) && json_object_get_boolean(v))
		snprintf(t.level + strlen(t.level), sizeof(t.level) - strlen(t.level), ", stacks");
	if (json_object_object_get_ex(o, "command", &v))
		join_strings(t.command, sizeof(t.command), v, " ");
	start_labels_and_driver(&t, o);
	if (json_object_object_get_ex(o, "policy", &v) && json_object_is_type(v, json_type_object)) {
		if (policy_text(sb, &t, v) < 0)
			return -1;
	} else if (review_json_u64(o, "quota", &sb->mem_quota)) {
		/* Schema 1: one memory quota. */
		char size[REVIEW_TEXT];
		snprintf(t.policy, sizeof(t.policy), "mem=%s",
		         gs_option_size(sb->mem_quota, size, sizeof(size)));
	}
	return keep_start(sb, &t, pool);
}

static void take_peaks(struct review_gpus *gpus, json_object *o)
{
	json_object *v, *sm, *g_obj;

	if (json_object_object_get_ex(o, "peak", &v) && json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, k, val) {
			unsigned long g = strtoul(k, NULL, 10);
			if (g < REVIEW_GPUS && json_object_is_type(val, json_type_int))
				gpus->peak[g] = json_object_get_uint64(val);
		}
	}
	if (json_object_object_get_ex(o, "sm", &sm) && json_object_is_type(sm, json_type_object) &&
	    json_object_object_get_ex(sm, "gpus", &g_obj) && json_object_is_type(g_obj, json_type_object)) {
		json_object_object_foreach(g_obj, k, val) {
			unsigned long g = strtoul(k, NULL, 10);
			if (g < REVIEW_GPUS && json_object_is_type(val, json_type_object) &&
			    !review_json_double(val, "achieved_share", &gpus->share_achieved[g]))
				gpus->share_achieved[g] = -1;
		}
	}
}

static int take_summary(struct review_sandbox *sb, const struct review_rec *r, json_object *o)
{
	json_object *v, *sm = NULL;
	struct review_gpus *gpus;

	sb->has_summary = true;
	sb->end_us = r->time_us;
	if (!review_json_i64(o, "exit_status", &sb->exit_status))
		sb->exit_status = -1;
	if (!review_json_i64(o, "signal", &sb->signal))
		sb->signal = -1;
	if (json_object_object_get_ex(o, "sm", &sm) && json_object_is_type(sm, json_type_object))
		review_json_double(sm, "target", &sb->share_target);
	/* Its own per-GPU facts only when the record has some to give. */
	if (!json_object_object_get_ex(o, "peak", &v) &&
	    !(sm && json_object_is_type(sm, json_type_object) && json_object_object_get_ex(sm, "gpus", &v)))
		return 0;
	if (!(gpus = review_sandbox_gpus(sb)))
		return -1;
	take_peaks(gpus, o);
	return 0;
}

const struct review_gpus review_gpus_unset = {
	.mem_gpu = { [0 ... REVIEW_GPUS - 1] = REVIEW_UNSET },
	.peak = { [0 ... REVIEW_GPUS - 1] = REVIEW_UNSET },
	.share_achieved = { [0 ... REVIEW_GPUS - 1] = -1 },
};

struct review_gpus *review_sandbox_gpus(struct review_sandbox *sb)
{
	struct review_gpus *own;

	if (sb->gpus != &review_gpus_unset)
		return (struct review_gpus *)sb->gpus;   /* its own: malloc'd below */
	own = malloc(sizeof(*own));
	if (!own)
		return NULL;
	*own = review_gpus_unset;
	sb->gpus = own;
	return own;
}

int review_digest_sandbox(struct review_sandbox *sb, const struct review_rec *r, json_object *o,
                          struct review_pool *pool)
{
	int rc = 0;

	if (r->event == REVIEW_EV_START && !sb->has_start)
		rc = take_start(sb, r, o, pool);
	else if (r->event == REVIEW_EV_SUMMARY)
		rc = take_summary(sb, r, o);
	if (r->time_us != INT64_MIN && (sb->end_us == INT64_MIN || r->time_us > sb->end_us))
		sb->end_us = r->time_us;
	if (r->time_us != INT64_MIN && (sb->start_us == INT64_MIN || r->time_us < sb->start_us))
		sb->start_us = r->time_us;
	return rc;
}
