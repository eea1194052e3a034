/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the policy file parser (gpusandbox.policy(5)).
 *
 * Hand-written and line-based on purpose: the language is "key = value"
 * with comments, so a table of keys and one function per value type say
 * all there is, and every error can point at a line and column. The parser
 * never trusts the file: it is bounded in size, NUL bytes and control
 * characters are errors, numbers are range-checked, and nothing in the
 * result is set from a line that failed. It stops at the first error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "rm_tables.h"
#include "suggest.h"

#define KEY_MAX 32u
/* Distinct scalar keys a file can define: the fixed ones and gpu.N.mem. */
#define MAX_DEFS (32u + GS_MAX_GPUS)
#define GPU_KEY_PREFIX "gpu."
#define GPU_KEY_SUFFIX ".mem"
#define HEX_PREFIX "0x"
#define HEX_BASE 16
#define DEC_BASE 10

/* Where something is: 1-based line and byte column, and the line's start. */
struct loc {
	unsigned line, col;
	size_t   line_off;
};

struct def {
	char       key[KEY_MAX];
	struct loc at;
};

struct parser {
	const char       *name, *text;
	size_t            len;
	struct gs_policy *p;
	char             *diag;
	size_t            diag_len, diag_used;
	struct def        defs[MAX_DEFS];
	unsigned          n_defs;
	struct loc        class_at[GS_RULES_MAX_EXTRA];
	struct loc        control_at[GS_RULES_MAX_EXTRA];
	struct loc        group_at[GS_GROUP_N];
	bool              saw_none;   /* "allow = none" */
};

/* One statement, as found on its line. */
struct stmt {
	char        key[KEY_MAX];
	struct loc  key_at;
	const char *value;      /* points into the text; not terminated */
	size_t      value_len;
	struct loc  value_at;
};

/* ---- diagnostics ----------------------------------------------------------- */

static void diag_add(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diag_add(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->diag_used >= ps->diag_len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(ps->diag + ps->diag_used, ps->diag_len - ps->diag_used, fmt, ap);
	va_end(ap);
	if (n > 0)
		ps->diag_used += (size_t)n < ps->diag_len - ps->diag_used ? (size_t)n
		                                                          : ps->diag_len - ps->diag_used - 1;
}

static size_t line_end(const struct parser *ps, size_t off)
{
	while (off < ps->len && ps->text[off] != '\n')
		off++;
	return off;
}

/* "NAME:L:C: KIND: MESSAGE", then the line, then a caret under column C.
 * Tabs before the column are kept so the caret lines up in a terminal;
 * other control bytes are shown as '?'. */
static void quote(struct parser *ps, struct loc at, const char *kind, const char *msg)
{
	size_t end = line_end(ps, at.line_off);

	diag_add(ps, "%s:%u:%u: %s: %s\n ", ps->name, at.line, at.col, kind, msg);
	if (end > at.line_off && ps->text[end - 1] == '\r')
		end--;
	for (size_t i = at.line_off; i < end; i++) {
		unsigned char ch = (unsigned char)ps->text[i];
		diag_add(ps, "%c", ch == '\t' || (ch >= ' ' && ch != 0x7f) ? ch : '?');
	}
	diag_add(ps, "\n ");
	for (unsigned i = 1; i < at.col && at.line_off + i - 1 < end; i++)
		diag_add(ps, "%c", ps->text[at.line_off + i - 1] == '\t' ? '\t' : ' ');
	diag_add(ps, "^\n");
}

static int fail_at(struct parser *ps, struct loc at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(struct parser *ps, struct loc at, const char *fmt, ...)
{
	char msg[GS_POLICY_DIAG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	quote(ps, at, "error", msg);
	return -1;
}

/* A second definition: name both places. */
static int fail_twice(struct parser *ps, struct loc again, struct loc first, const char *what)
{
	char msg[GS_POLICY_DIAG_MAX / 4];

	snprintf(msg, sizeof(msg), "%s is defined twice", what);
	quote(ps, again, "error", msg);
	quote(ps, first, "note", "first defined here");
	return -1;
}

static struct loc loc_plus(struct loc at, size_t cols)
{
	at.col += (unsigned)cols;
	return at;
}

/* A value as a C string, for the parse helpers of quota.c; values are
 * short, and a longer one is an error rather than a truncation. */
static int value_str(struct parser *ps, const struct stmt *s, char *buf, size_t len)
{
	if (s->value_len >= len)
		return fail_at(ps, s->value_at, "value too long (at most %zu bytes)", len - 1);
	memcpy(buf, s->value, s->value_len);
	buf[s->value_len] = '\0';
	return 0;
}

/* ---- value types ------------------------------------------------------------ */

#define VALUE_BUF 256u

/* mem and gpu.N.mem: a size big enough for a CUDA context (quota.h). */
static int set_size(struct parser *ps, const struct stmt *s, uint64_t *out)
{
	char v[VALUE_BUF], why[VALUE_BUF + 160];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_mem_quota(v, out, why, sizeof(why)) < 0)
		return fail_at(ps, s->value_at, "%s", why);
	return 0;
}

static int set_count(struct parser *ps, const struct stmt *s, uint32_t *out, bool zero_ok)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if ((zero_ok ? gs_parse_count0(v, out) : gs_parse_count(v, out)) < 0)
		return fail_at(ps, s->value_at, "invalid count '%s' (a %s number)", v,
		               zero_ok ? "non-negative" : "positive");
	return 0;
}

/* Items of a list value: separated by commas and/or blanks. Calls fn for
 * each with its text and location. */
static int for_each_item(struct parser *ps, const struct stmt *s,
                         int (*fn)(struct parser *, const char *, size_t, struct loc))
{
	size_t i = 0;

	while (i < s->value_len) {
		size_t start;
		while (i < s->value_len && (s->value[i] == ',' || isblank((unsigned char)s->value[i])))
			i++;
		if (i >= s->value_len)
			break;
		start = i;
		while (i < s->value_len && s->value[i] != ',' && !isblank((unsigned char)s->value[i]))
			i++;
		if (fn(ps, s->value + start, i - start, loc_plus(s->value_at, start)) < 0)
			return -1;
	}
	return 0;
}

/* A number "0x..." (hex, fits 32 bits). Returns 0, or -1 if not one. */
static int parse_hex32(const char *v, size_t len, uint32_t *out)
{
	uint64_t n = 0;
	size_t pl = strlen(HEX_PREFIX);

	if (len <= pl || strncasecmp(v, HEX_PREFIX, pl) != 0 || len - pl > 2 * sizeof(uint32_t))
		return -1;
	for (size_t i = pl; i < len; i++) {
		if (!isxdigit((unsigned char)v[i]))
			return -1;
		n = n * HEX_BASE + (uint64_t)(isdigit((unsigned char)v[i]) ? v[i] - '0'
		                                                             : tolower((unsigned char)v[i]) - 'a' + 10);
	}
	*out = (uint32_t)n;
	return 0;
}

/* ---- keys --------------------------------------------------------------------- */

static int key_mem(struct parser *ps, const struct stmt *s)
{
	return set_size(ps, s, &ps->p->quota.mem_per_gpu);
}

static int key_sm(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_percent(v, &ps->p->quota.sm_percent) < 0)
		return fail_at(ps, s->value_at, "invalid share '%s' (a percentage 1..%u)", v, GS_SM_UNLIMITED);
	return 0;
}

static int key_sm_period(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_period_ms(v, &ps->p->quota.sm_period_ms) < 0)
		return fail_at(ps, s->value_at, "invalid period '%s' (%u..%u ms)", v, GS_SM_PERIOD_MIN_MS,
		               GS_SM_PERIOD_MAX_MS);
	return 0;
}

static int key_sm_mode(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_sm_mode(v, &ps->p->quota.sm_mode) < 0)
		return fail_at(ps, s->value_at, "invalid sm-mode '%s' (cap or guarantee)", v);
	return 0;
}

static int key_managed(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_managed(v, &ps->p->quota.managed) < 0)
		return fail_at(ps, s->value_at, "invalid managed-memory mode '%s' (deny or allow-unaccounted)", v);
	return 0;
}

static int key_p2p_register(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_p2p_register(v, &ps->p->quota.p2p_register) < 0)
		return fail_at(ps, s->value_at, "invalid p2p-register mode '%s' (perform or answer)", v);
	return 0;
}

/* files: a count or "unlimited" (quota.h, gs_quota.files). */
static int key_files(struct parser *ps, const struct stmt *s)
{
	return set_count(ps, s, &ps->p->quota.files, false);
}

/* objects: a count or "unlimited" (quota.h, gs_quota.objects). */
static int key_objects(struct parser *ps, const struct stmt *s)
{
	return set_count(ps, s, &ps->p->quota.objects, false);
}

static int key_fd_import(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_fd_import(v, &ps->p->quota.fd_import) < 0)
		return fail_at(ps, s->value_at, "invalid fd-import mode '%s' (own or foreign)", v);
	return 0;
}

static int key_gpus(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];
	const char *why = NULL;
	struct gs_quota q;

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	/* Parsed into a scratch quota so a bad list changes nothing; zeroed
	 * first so that no stack bytes reach the policy through uuids[]. */
	memset(&q, 0, sizeof(q));
	gs_quota_init(&q);
	if (gs_parse_gpus(v, &q, &why) < 0)
		return fail_at(ps, s->value_at, "invalid GPU list '%s': %s", v, why);
	ps->p->quota.visible_set = q.visible_set;
	ps->p->quota.visible = q.visible;
	ps->p->quota.n_uuids = q.n_uuids;
	memcpy(ps->p->quota.uuids, q.uuids, sizeof(q.uuids));
	return 0;
}

static int key_audit_log(struct parser *ps, const struct stmt *s)
{
	if (value_str(ps, s, ps->p->audit_log, sizeof(ps->p->audit_log)) < 0)
		return -1;
	ps->p->has_audit_log = true;
	return 0;
}

static const char *const audit_level_names[] = {
	[GS_AUDIT_LEVEL_REFUSALS] = "refusals",
	[GS_AUDIT_LEVEL_STANDARD] = "standard",
	[GS_AUDIT_LEVEL_ALL] = "all",
};
#define N_AUDIT_LEVELS (sizeof(audit_level_names) / sizeof(audit_level_names[0]))

int gs_audit_level_parse(const char *s, enum gs_audit_level *level)
{
	for (unsigned i = 0; i < N_AUDIT_LEVELS; i++)
		if (strcmp(s, audit_level_names[i]) == 0) {
			*level = (enum gs_audit_level)i;
			return 0;
		}
	return -1;
}

const char *gs_audit_level_name(enum gs_audit_level level)
{
	return (unsigned)level < N_AUDIT_LEVELS ? audit_level_names[level] : "unknown";
}

int gs_parse_on_off(const char *s, bool *on)
{
	if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0)
		return -1;
	*on = strcmp(s, "on") == 0;
	return 0;
}

static int key_audit_level(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_audit_level_parse(v, &ps->p->audit_level) < 0)
		return fail_at(ps, s->value_at, "invalid audit level '%s' (refusals, standard or all)", v);
	ps->p->has_audit_level = true;
	return 0;
}

static int key_audit_stacks(struct parser *ps, const struct stmt *s)
{
	char v[VALUE_BUF];

	if (value_str(ps, s, v, sizeof(v)) < 0)
		return -1;
	if (gs_parse_on_off(v, &ps->p->audit_stacks) < 0)
		return fail_at(ps, s->value_at, "invalid audit-stacks '%s' (on or off)", v);
	ps->p->has_audit_stacks = true;
	return 0;
}

static int key_user(struct parser *ps, const struct stmt *s)
{
	return value_str(ps, s, ps->p->user, sizeof(ps->p->user));
}

static int key_group(struct parser *ps, const struct stmt *s)
{
	return value_str(ps, s, ps->p->group, sizeof(ps->p->group));
}

static int key_supp_groups(struct parser *ps, const struct stmt *s)
{
	return value_str(ps, s, ps->p->groups, sizeof(ps->p->groups));
}

/* allow = GROUP, ...: replaces the default groups ("none" for no group). */
static int allow_item(struct parser *ps, const char *v, size_t len, struct loc at)
{
	enum gs_group g;

	if (len == strlen("none") && memcmp(v, "none", len) == 0) {
		if (ps->p->rules.groups)
			return fail_at(ps, at, "'none' cannot be combined with groups");
		ps->saw_none = true;
		return 0;
	}
	g = gs_group_find(v, len);
	if (g == GS_GROUP_NONE)
		return fail_at(ps, at, "unknown group '%.*s' (see gpusandbox --list-groups)", (int)len, v);
	if (ps->saw_none)
		return fail_at(ps, at, "'none' cannot be combined with groups");
	if (ps->p->rules.groups & GS_GROUP_BIT(g)) {
		char what[KEY_MAX * 2];
		snprintf(what, sizeof(what), "group '%s'", gs_group_name(g));
		return fail_twice(ps, at, ps->group_at[g], what);
	}
	ps->p->rules.groups |= GS_GROUP_BIT(g);
	ps->group_at[g] = at;
	return 0;
}

static int key_allow(struct parser *ps, const struct stmt *s)
{
	ps->saw_none = false;
	ps->p->rules.groups = 0;
	return for_each_item(ps, s, allow_item);
}

/* allow.class / allow.control: numbers or names from gpusandbox's tables,
 * one or more per line, accumulated over lines. */
static int explicit_item(struct parser *ps, const char *v, size_t len, struct loc at, bool is_class)
{
	uint32_t key = 0, *n = is_class ? &ps->p->rules.n_classes : &ps->p->rules.n_controls;
	uint32_t *list = is_class ? ps->p->rules.classes : ps->p->rules.controls;
	struct loc *where = is_class ? ps->class_at : ps->control_at;
	const char *what = is_class ? "class" : "control";
	const struct gs_rm_abi *abi = ps->p->abi;
	bool found = false, twice = false;

	if (parse_hex32(v, len, &key) == 0) {
		/* A bit-15 control needs no row: its bytes are opaque to the
		 * CPU-side driver, so any number may be named (issue #11: each
		 * branch's CUDA sends its own). */
		found = is_class ? rm_class_lookup(abi, key) != NULL
		                 : rm_ctrl_lookup(abi, key) != NULL || nv_ctrl_is_gsp_opaque(key);
		if (!found)
			return fail_at(ps, at, "%s 0x%x is unknown to gpusandbox (it cannot copy its "
			               "parameters safely)", what, key);
	} else {
		size_t total = is_class ? rm_class_table_size(abi) : rm_ctrl_table_size(abi);
		for (size_t i = 0; i < total; i++) {
			const struct rm_class_info *cl = rm_class_table_at(abi, i);
			const struct rm_ctrl_info *ct = rm_ctrl_table_at(abi, i);
			const char *nm = is_class ? cl->name : ct->name;
			uint32_t k = is_class ? cl->cls : ct->cmd;
			if (!(is_class ? cl->known : ct->known))
				continue;
			if (!nm || strlen(nm) != len || memcmp(nm, v, len) != 0)
				continue;
			twice = found;
			found = true;
			key = k;
		}
		if (!found)
			return fail_at(ps, at, "unknown %s '%.*s' (a number like 0x%s or a name)", what,
			               (int)len, v, is_class ? "c86f" : "20801303");
		if (twice)
			return fail_at(ps, at, "%s name '%.*s' names several; use the number", what,
			               (int)len, v);
	}
	for (uint32_t i = 0; i < *n; i++) {
		if (list[i] == key) {
			char w[KEY_MAX * 2];
			snprintf(w, sizeof(w), "%s 0x%x", what, key);
			return fail_twice(ps, at, where[i], w);
		}
	}
	if (*n >= GS_RULES_MAX_EXTRA)
		return fail_at(ps, at, "too many explicit %ss (at most %u)", what, GS_RULES_MAX_EXTRA);
	where[*n] = at;
	list[(*n)++] = key;
	return 0;
}

static int class_item(struct parser *ps, const char *v, size_t len, struct loc at)
{
	return explicit_item(ps, v, len, at, true);
}

static int control_item(struct parser *ps, const char *v, size_t len, struct loc at)
{
	return explicit_item(ps, v, len, at, false);
}

static int key_allow_class(struct parser *ps, const struct stmt *s)
{
	return for_each_item(ps, s, class_item);
}

static int key_allow_control(struct parser *ps, const struct stmt *s)
{
	return for_each_item(ps, s, control_item);
}

struct key_def {
	const char *key;
	int (*set)(struct parser *ps, const struct stmt *s);
	bool        repeatable;  /* accumulates over lines */
};

static const struct key_def keys[] = {
	{ "mem", key_mem, false },
	{ "sm", key_sm, false },
	{ "sm-period", key_sm_period, false },
	{ "sm-mode", key_sm_mode, false },
	{ "managed", key_managed, false },
	{ "p2p-register", key_p2p_register, false },
	{ "files", key_files, false },
	{ "objects", key_objects, false },
	{ "fd-import", key_fd_import, false },
	{ "gpus", key_gpus, false },
	{ "audit-log", key_audit_log, false },
	{ "audit-level", key_audit_level, false },
	{ "audit-stacks", key_audit_stacks, false },
	{ "run-as.user", key_user, false },
	{ "run-as.group", key_group, false },
	{ "run-as.groups", key_supp_groups, false },
	{ "allow", key_allow, false },
	{ "allow.class", key_allow_class, true },
	{ "allow.control", key_allow_control, true },
};

/* gpu.N.mem: N is a GPU index (the nvidia-smi index, as for gpus). The
 * key is normalised to "gpu.N.mem" so that "gpu.01.mem" is a duplicate of
 * "gpu.1.mem". */
static int gpu_key(struct parser *ps, struct stmt *s, bool *matched)
{
	size_t pl = strlen(GPU_KEY_PREFIX), sl = strlen(GPU_KEY_SUFFIX), kl = strlen(s->key);
	unsigned long n = 0;

	*matched = kl > pl + sl && strncmp(s->key, GPU_KEY_PREFIX, pl) == 0 &&
	           strcmp(s->key + kl - sl, GPU_KEY_SUFFIX) == 0;
	if (!*matched)
		return 0;
	for (size_t i = pl; i < kl - sl; i++) {
		if (!isdigit((unsigned char)s->key[i]) || n >= GS_MAX_GPUS)
			return fail_at(ps, loc_plus(s->key_at, pl), "invalid GPU index in '%s' (0..%u)",
			               s->key, GS_MAX_GPUS - 1);
		n = n * DEC_BASE + (unsigned long)(s->key[i] - '0');
	}
	if (n >= GS_MAX_GPUS)
		return fail_at(ps, loc_plus(s->key_at, pl), "invalid GPU index in '%s' (0..%u)", s->key,
		               GS_MAX_GPUS - 1);
	snprintf(s->key, sizeof(s->key), GPU_KEY_PREFIX "%lu" GPU_KEY_SUFFIX, n);
	return set_size(ps, s, &ps->p->quota.mem_gpu[n]);
}

static int remember_def(struct parser *ps, const struct stmt *s)
{
	for (unsigned i = 0; i < ps->n_defs; i++) {
		if (strcmp(ps->defs[i].key, s->key) == 0) {
			char what[KEY_MAX + 2];
			snprintf(what, sizeof(what), "'%s'", s->key);
			return fail_twice(ps, s->key_at, ps->defs[i].at, what);
		}
	}
	if (ps->n_defs >= MAX_DEFS)
		return fail_at(ps, s->key_at, "too many definitions");
	snprintf(ps->defs[ps->n_defs].key, KEY_MAX, "%s", s->key);
	ps->defs[ps->n_defs++].at = s->key_at;
	return 0;
}

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

/* The keys of keys[], then those of the quota kinds. */
static const char *key_name(size_t i, const void *ctx)
{
	(void)ctx;
	return i < N_KEYS ? keys[i].key : gs_quota_kind_row((enum gs_quota_kind)(i - N_KEYS))->key;
}

/* An unknown key, with the known one it is closest to. */
static int unknown_key(struct parser *ps, const struct stmt *s)
{
	const char *near = gs_suggest(s->key, N_KEYS + GS_QK_N, key_name, NULL);

	if (!near && strncmp(s->key, GPU_KEY_PREFIX, strlen(GPU_KEY_PREFIX)) == 0)
		near = "gpu.N.mem";
	if (near)
		return fail_at(ps, s->key_at, "unknown key '%s' (did you mean '%s'?)", s->key, near);
	return fail_at(ps, s->key_at, "unknown key '%s'", s->key);
}

static int apply(struct parser *ps, struct stmt *s)
{
	bool matched;

	if (strncmp(s->key, GPU_KEY_PREFIX, strlen(GPU_KEY_PREFIX)) == 0) {
		char raw[KEY_MAX];
		memcpy(raw, s->key, sizeof(raw));
		if (gpu_key(ps, s, &matched) < 0)
			return -1;
		if (matched) {
			/* After a successful set: check the normalised key. */
			return remember_def(ps, s);
		}
		memcpy(s->key, raw, sizeof(raw));
	}
	/* A quota kind's limit: a count, 0 where its row allows none. */
	int kind = gs_quota_kind_by_key(s->key);
	if (kind >= 0) {
		if (remember_def(ps, s) < 0)
			return -1;
		return set_count(ps, s, &ps->p->quota.count[kind],
		                 gs_quota_kind_row((enum gs_quota_kind)kind)->flags & GS_QK_ZERO_OK);
	}
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(keys[i].key, s->key) != 0)
			continue;
		if (!keys[i].repeatable && remember_def(ps, s) < 0)
			return -1;
		return keys[i].set(ps, s);
	}
	return unknown_key(ps, s);
}

/* ---- lines ----------------------------------------------------------------------- */

static bool key_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
	       ch == '_';
}

/* Splits one line (text[off..end)) into a statement. Returns 1 for a
 * statement, 0 for a blank or comment line, -1 on error. */
static int split_line(struct parser *ps, size_t off, size_t end, unsigned line, struct stmt *s)
{
	const char *t = ps->text;
	size_t i = off, k, stop = end;
	struct loc at = { line, 1, off };

	/* A comment runs to the end of the line; values cannot hold '#'. */
	for (size_t j = off; j < end; j++) {
		unsigned char ch = (unsigned char)t[j];
		if (ch == '#') {
			stop = j;
			break;
		}
		if ((ch < ' ' && ch != '\t' && !(ch == '\r' && j + 1 == end)) || ch == 0x7f)
			return fail_at(ps, loc_plus(at, j - off), "control character 0x%02x", ch);
	}
	while (stop > off && isspace((unsigned char)t[stop - 1]))
		stop--;
	while (i < stop && isblank((unsigned char)t[i]))
		i++;
	if (i == stop)
		return 0;
	k = i;
	while (i < stop && key_char(t[i]))
		i++;
	if (i == k)
		return fail_at(ps, loc_plus(at, k - off), "expected a key (lower-case letters, digits, '.', '-')");
	if (i - k >= KEY_MAX)
		return fail_at(ps, loc_plus(at, k - off), "key too long");
	memcpy(s->key, t + k, i - k);
	s->key[i - k] = '\0';
	s->key_at = loc_plus(at, k - off);
	while (i < stop && isblank((unsigned char)t[i]))
		i++;
	if (i >= stop || t[i] != '=')
		return fail_at(ps, loc_plus(at, i - off), "expected '=' after '%s'", s->key);
	i++;
	while (i < stop && isblank((unsigned char)t[i]))
		i++;
	if (i >= stop)
		return fail_at(ps, loc_plus(at, i - off), "missing value for '%s'", s->key);
	s->value = t + i;
	s->value_len = stop - i;
	s->value_at = loc_plus(at, i - off);
	return 1;
}

void gs_policy_init(struct gs_policy *p)
{
	memset(p, 0, sizeof(*p));
	gs_quota_init(&p->quota);
	gs_rules_default(&p->rules);
	p->abi = gs_rm_abi_default();
}

int gs_policy_parse(const char *name, const char *text, size_t len, struct gs_policy *p,
                    char *diag, size_t diag_len)
{
	struct parser *ps = calloc(1, sizeof(*ps));
	struct gs_policy *work = malloc(sizeof(*work));
	size_t off = 0;
	unsigned line = 1;
	int rc = 0;

	if (diag_len)
		diag[0] = '\0';
	if (!ps || !work) {
		free(ps);
		free(work);
		snprintf(diag, diag_len, "%s: out of memory\n", name);
		return -1;
	}
	/* Work on a copy: p changes only when the whole file is good. */
	*work = *p;
	ps->name = name;
	ps->text = text;
	ps->len = len;
	ps->p = work;
	ps->diag = diag;
	ps->diag_len = diag_len;
	while (off < len && rc == 0) {
		size_t end = line_end(ps, off);
		struct stmt s;
		int r = split_line(ps, off, end, line, &s);
		if (r < 0)
			rc = -1;
		else if (r > 0 && apply(ps, &s) < 0)
			rc = -1;
		off = end + 1;
		line++;
	}
	if (rc == 0)
		*p = *work;
	free(ps);
	free(work);
	return rc;
}

int gs_policy_load(const char *path, struct gs_policy *p, char *diag, size_t diag_len)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), rc;

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(diag, diag_len, "%s: cannot read the policy: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)GS_POLICY_MAX_BYTES) {
		snprintf(diag, diag_len, "%s: not a regular file of at most %u bytes\n", path,
		         GS_POLICY_MAX_BYTES);
		close(fd);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && n < st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)(st.st_size - n));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	if (!buf || n != st.st_size) {
		snprintf(diag, diag_len, "%s: cannot read the policy: %s\n", path,
		         buf ? "short read" : strerror(ENOMEM));
		free(buf);
		return -1;
	}
	if (memchr(buf, '\0', (size_t)n)) {
		snprintf(diag, diag_len, "%s: the policy holds a NUL byte (not a text file)\n", path);
		free(buf);
		return -1;
	}
	rc = gs_policy_parse(path, buf, (size_t)n, p, diag, diag_len);
	free(buf);
	return rc;
}
