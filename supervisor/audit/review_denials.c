/* SPDX-License-Identifier: MIT */
/*
 * review_denials.c - `gpusandbox audit denials`: the refusals, grouped by
 * reason, each with the fix to try.
 *
 * A refusal is a deny or refuse verdict, its folded repeats (a
 * "suppressed" record counts them), or a call the driver failed because
 * the GPU itself was full (outcome device_full), which no option lifts
 * but which a reviewer must tell apart from a quota. The fix names the
 * option or policy line that would have allowed the largest request of
 * the group, in the words --help and gpusandbox.policy(5) use, as the
 * line on stderr at exit does (refusals.c).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nvrm_abi.h"
#include "quota.h"
#include "review.h"

#define FIX_TEXT 256
#define MIB (1ull << 20)
#define GIB (1ull << 30)

struct denial_group {
	const struct review_rec *first;   /* the key's fields; the fix's sandbox */
	uint64_t count, needed;
	char     first_time[32], last_time[32];
	int64_t  first_us, last_us;
	uint64_t count_times;
	uint64_t sandboxes;
	uint32_t last_sandbox;
	const struct review_rec *stack;   /* the first of the group with a call stack */
};

bool review_denials_keeps(const struct review_rec *r)
{
	return (r->refusal || strcmp(r->outcome, "device_full") == 0) &&
	       (r->event == REVIEW_EV_DECISION || r->event == REVIEW_EV_SUPPRESSED);
}

static bool is_denial(const struct review_rec *r)
{
	return r->matched && review_denials_keeps(r);
}

/* The group's key, in an order: same_group is compare_key == 0. */
static int compare_key(const struct review_rec *a, const struct review_rec *b)
{
	int c;

	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	if (a->quota != b->quota)
		return a->quota < b->quota ? -1 : 1;
	if ((c = strcmp(a->outcome, b->outcome)) || (c = strcmp(a->reason, b->reason)) ||
	    (c = strcmp(a->resource, b->resource)) || (c = strcmp(a->call, b->call)))
		return c;
	return strcmp(a->object, b->object);
}

/* What would have let this request through: the usage it would reach. */
static uint64_t needed_by(const struct review_rec *r)
{
	bool bytes = !r->resource[0] || strcmp(r->resource, "vidmem") == 0;

	if (r->usage_before == REVIEW_UNSET)
		return 0;
	if (bytes)
		return r->size == REVIEW_UNSET || r->usage_before > UINT64_MAX - r->size
		               ? r->usage_before : r->usage_before + r->size;
	return r->usage_before + 1;
}

/* A --mem that holds `needed`: whole GiB above one GiB, else 64 MiB steps. */
static uint64_t round_mem(uint64_t needed)
{
	uint64_t step = needed >= GIB ? GIB : GS_MEM_MIN;

	if (needed > UINT64_MAX - step)
		return needed;
	needed = (needed + step - 1) / step * step;
	return needed < GS_MEM_MIN ? GS_MEM_MIN : needed;
}

static bool group_allowed(const char *groups, const char *group)
{
	size_t n = strlen(group);

	for (const char *p = groups; (p = strstr(p, group)); p += n)
		if ((p == groups || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* A class or control the policy's groups leave out. */
static void allow_fix(const struct review_sandbox *sb, const struct review_rec *r, char *buf, size_t len)
{
	const char *kind = strcmp(r->kind, "control") == 0 ? "control" : "class";

	if (r->group[0] && sb->groups[0] && !group_allowed(sb->groups, r->group))
		snprintf(buf, len, "allow = %s,%s (policy file; or allow.%s = %s for this one)", sb->groups,
		         r->group, kind, r->object);
	else if (r->group[0] && !sb->groups[0])
		/* Schema 1 did not record the groups: name the one to add. */
		snprintf(buf, len, "allow.%s = %s (policy file; or add %s to allow)", kind, r->object, r->group);
	else
		snprintf(buf, len, "allow.%s = %s (policy file)", kind, r->object);
}

/* A bit-15 (GSS-legacy) control without the administrator bit: gpusandbox
 * has no row for it, yet a policy may name it (policy.c explicit_item: its
 * bytes go to GSP opaque, no pointer followed), so its refusal has a line. */
static bool nameable_opaque_control(const struct review_rec *r)
{
	char *end;
	unsigned long cmd;

	if (strcmp(r->kind, "control") != 0 || strncmp(r->object, "0x", 2) != 0)
		return false;
	cmd = strtoul(r->object, &end, 16);
	return *end == '\0' && cmd <= UINT32_MAX && nv_ctrl_is_gsp_opaque((uint32_t)cmd);
}

/* The refusals by the policy or the sandbox's fixed rules, by reason:
 * only some have a line that lifts them. */
static void policy_fix(const struct review_sandbox *sb, const struct review_rec *r, char *buf,
                       size_t len)
{
	if (strcmp(r->kind, "escape") == 0)
		snprintf(buf, len, "none: gpusandbox refuses escape %s itself (SECURITY.md says why)", r->object);
	else if (strstr(r->reason, "not allowed by the policy") && r->object[0])
		allow_fix(sb, r, buf, len);
	else if (strstr(r->reason, "unknown to gpusandbox") && nameable_opaque_control(r))
		snprintf(buf, len, "allow.control = %s (policy file; opaque to gpusandbox, run by GSP's "
		         "closed firmware: a trust decision, docs/security/monitoring.md)", r->object);
	else if (strstr(r->reason, "unknown to gpusandbox"))
		snprintf(buf, len, "none: gpusandbox does not know %s %s, so no policy can allow it",
		         r->kind[0] ? r->kind : "object", r->object);
	else if (strstr(r->reason, "not visible"))
		snprintf(buf, len, "option --gpus with that GPU (policy: gpus = LIST)");
	else if (strcmp(r->resource, "managed") == 0 || strstr(r->reason, "managed = deny"))
		snprintf(buf, len, "option --managed allow-unaccounted (managed memory then runs outside --mem)");
	else
		snprintf(buf, len, "none: a rule gpusandbox always enforces (SECURITY.md)");
}

static void quota_fix(const struct review_sandbox *sb, const struct review_rec *r, uint64_t needed,
                      char *buf, size_t len)
{
	char size[REVIEW_TEXT];
	int kind;

	if (!r->resource[0] || strcmp(r->resource, "vidmem") == 0) {
		gs_option_size(round_mem(needed), size, sizeof(size));
		if (r->gpu >= 0 && sb->gpus->mem_gpu[r->gpu] != REVIEW_UNSET)
			snprintf(buf, len, "gpu.%d.mem = %s (policy file)", r->gpu, size);
		else
			snprintf(buf, len, "option --mem %s (policy: mem = %s)", size, size);
		return;
	}
	if (strcmp(r->resource, "managed") == 0) {
		snprintf(buf, len, "option --managed allow-unaccounted (managed memory then runs outside --mem)");
		return;
	}
	/* A quota kind: its option where it has one, else its policy key
	 * (the video engine caps: "video.decoders"). */
	kind = gs_quota_kind_by_resource(r->resource);
	const struct gs_quota_kind_row *row = kind < 0 ? NULL : gs_quota_kind_row((enum gs_quota_kind)kind);
	if (row && row->option)
		snprintf(buf, len, "option --%s %" PRIu64 " (policy: %s = %" PRIu64 ")", row->option, needed,
		         row->key, needed);
	else
		snprintf(buf, len, "%s = %" PRIu64 " (policy file)", row ? row->key : r->resource, needed);
}

void review_fix_text(const struct review_sandbox *sb, const struct review_rec *r, uint64_t needed,
                     char *buf, size_t len)
{
	if (strcmp(r->outcome, "device_full") == 0)
		snprintf(buf, len, "none in gpusandbox: GPU %d itself was full (free memory on it, or "
		         "choose another with --gpus)", r->gpu);
	else if (strcmp(r->outcome, "driver") == 0)
		snprintf(buf, len, "none in gpusandbox: the driver failed the call (%s)", r->status);
	else if (strcmp(r->outcome, "quota") == 0)
		quota_fix(sb, r, needed, buf, len);
	else
		policy_fix(sb, r, buf, len);
}

static void add_to_group(struct denial_group *g, const struct review_rec *r)
{
	uint64_t needed = needed_by(r);

	if (!g->stack && r->stack[0])
		g->stack = r;
	g->count = review_add_count(g->count, review_refusals_of(r));
	g->needed = needed > g->needed ? needed : g->needed;
	if (r->sandbox != g->last_sandbox) {
		g->sandboxes++;
		g->last_sandbox = r->sandbox;
	}
	if (!g->count_times || r->time_us < g->first_us) {
		snprintf(g->first_time, sizeof(g->first_time), "%s", r->time_text);
		g->first_us = r->time_us;
	}
	if (!g->count_times || r->time_us >= g->last_us) {
		snprintf(g->last_time, sizeof(g->last_time), "%s", r->time_text);
		g->last_us = r->time_us;
	}
	g->count_times++;
}

static const struct review_log *sort_log;   /* qsort has no context argument */

/* Denials sorted by key, sandbox and time: a group is a run, and
 * a log of many kinds stays n log n. */
static int by_key(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = compare_key(&sort_log->recs[x], &sort_log->recs[y]);

	if (c)
		return c;
	if (sort_log->recs[x].sandbox != sort_log->recs[y].sandbox)
		return sort_log->recs[x].sandbox < sort_log->recs[y].sandbox ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_count(const void *a, const void *b)
{
	const struct denial_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->first->order < y->first->order ? -1 : x->first->order > y->first->order;
}

static const char *const denial_columns[] = {
	"count", "outcome", "reason", "call", "object", "gpu", "resource", "limit", "needed",
	"sandboxes", "first", "last", "fix", "stack",
};
enum { D_COUNT, D_OUTCOME, D_REASON, D_CALL, D_OBJECT, D_GPU, D_RESOURCE, D_LIMIT, D_NEEDED,
       D_SANDBOXES, D_FIRST, D_LAST, D_FIX, D_STACK, D_COLUMNS };
_Static_assert(sizeof(denial_columns) / sizeof(denial_columns[0]) == D_COLUMNS, "columns");

static int denial_row(struct review_table *t, const struct review_log *log, const struct denial_group *g)
{
	struct review_cell *c = review_table_row(t);
	const struct review_rec *r = g->first;
	bool bytes = !r->resource[0] || strcmp(r->resource, "vidmem") == 0;
	char fix[FIX_TEXT];

	if (!c)
		return -1;
	review_cell_count(&c[D_COUNT], g->count);
	review_cell_text(&c[D_OUTCOME], r->outcome);
	review_cell_text(&c[D_REASON], r->reason[0] ? r->reason : r->status);
	review_cell_text(&c[D_CALL], r->call);
	review_cell_text(&c[D_OBJECT], r->object);
	if (r->gpu >= 0)
		review_cell_int(&c[D_GPU], r->gpu);
	review_cell_text(&c[D_RESOURCE], r->resource);
	if (bytes) {
		review_cell_bytes(&c[D_LIMIT], r->quota);
		if (g->needed)
			review_cell_bytes(&c[D_NEEDED], g->needed);
	} else {
		if (r->quota != REVIEW_UNSET)
			review_cell_count(&c[D_LIMIT], r->quota);
		if (g->needed)
			review_cell_count(&c[D_NEEDED], g->needed);
	}
	review_cell_count(&c[D_SANDBOXES], g->sandboxes);
	review_cell_text(&c[D_FIRST], g->first_time);
	review_cell_text(&c[D_LAST], g->last_time);
	review_fix_text(&log->sandboxes[r->sandbox], r, g->needed, fix, sizeof(fix));
	review_cell_text(&c[D_FIX], fix);
	review_cell_text(&c[D_STACK], g->stack ? g->stack->stack : "");
	return 0;
}

/* The denials' groups, largest first; NULL when out of memory. */
static struct denial_group *group_denials(const struct review_log *log, size_t *n_groups)
{
	size_t *idx = malloc((log->n ? log->n : 1) * sizeof(*idx)), n = 0, n_g = 0;
	struct denial_group *groups = malloc((log->n ? log->n : 1) * sizeof(*groups));

	if (!idx || !groups) {
		free(idx);
		free(groups);
		return NULL;
	}
	for (size_t i = 0; i < log->n; i++)
		if (is_denial(&log->recs[i]))
			idx[n++] = i;
	sort_log = log;
	qsort(idx, n, sizeof(*idx), by_key);
	for (size_t i = 0; i < n; i++) {
		const struct review_rec *r = &log->recs[idx[i]];
		struct denial_group *g = &groups[n_g];
		if (!n_g || compare_key(groups[n_g - 1].first, r) != 0) {
			memset(g, 0, sizeof(*g));
			g->first = r;
			g->last_sandbox = UINT32_MAX;
			n_g++;
		}
		add_to_group(&groups[n_g - 1], r);
	}
	free(idx);
	qsort(groups, n_g, sizeof(*groups), by_count);
	*n_groups = n_g;
	return groups;
}

long review_denials(const struct review_log *log, const struct review_opts *o)
{
	size_t n = 0;
	struct denial_group *groups = group_denials(log, &n);
	struct review_table t;
	int rc = 0;

	if (!groups)
		return -1;
	review_table_init(&t, denial_columns, D_COLUMNS);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = denial_row(&t, log, &groups[i]);
	if (rc == 0)
		rc = review_table_write(&t, o->format, o->out);
	review_table_free(&t);
	free(groups);
	return rc < 0 ? -1 : (long)n;
}
