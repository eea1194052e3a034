/* SPDX-License-Identifier: MIT */
/*
 * review_views.c - `gpusandbox audit summary` and `timeline`.
 *
 * summary: one entry per sandbox with a matching record: its command,
 * labels and effective policy (from the start record), the peak of each
 * resource against its quota (from the matching records, and from the
 * summary record's peaks when no record filter is given: with the
 * default audit level, allowed allocations are not all recorded), the
 * compute share achieved against its target, how it ended, and whether
 * its chain verifies. timeline: the matching records in time order.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "quota.h"
#include "review.h"

#define SUMMARY_RESOURCES 32u
#define LINE_TEXT 512

struct resource_peak {
	char     resource[REVIEW_TEXT];
	int      gpu;
	uint64_t peak, quota;
};

struct sandbox_facts {
	struct resource_peak res[SUMMARY_RESOURCES];
	unsigned n_res;
	uint64_t matched, refusals;
	char     ended[REVIEW_TEXT], chain[2 * REVIEW_TEXT];
};

static struct resource_peak *peak_of(struct sandbox_facts *f, const char *resource, int gpu)
{
	for (unsigned i = 0; i < f->n_res; i++)
		if (f->res[i].gpu == gpu && strcmp(f->res[i].resource, resource) == 0)
			return &f->res[i];
	if (f->n_res == SUMMARY_RESOURCES)
		return NULL;
	f->res[f->n_res] = (struct resource_peak){ .gpu = gpu, .quota = REVIEW_UNSET };
	snprintf(f->res[f->n_res].resource, REVIEW_TEXT, "%s", resource);
	return &f->res[f->n_res++];
}

static void note_usage(struct sandbox_facts *f, const struct review_rec *r)
{
	const char *resource = r->resource[0] ? r->resource : "vidmem";
	struct resource_peak *p;
	/* A refusal's usage_after is the usage it left, not a peak reached. */
	uint64_t u = r->usage_after;

	if ((r->event != REVIEW_EV_DECISION && r->event != REVIEW_EV_USAGE) || u == REVIEW_UNSET)
		return;
	p = peak_of(f, resource, strcmp(resource, "vidmem") == 0 ? r->gpu : REVIEW_NO_GPU);
	if (!p)
		return;
	if (r->peak != REVIEW_UNSET && r->peak > u)
		u = r->peak;   /* a usage record: the most in use since the last one */
	if (r->usage_before != REVIEW_UNSET && r->usage_before > u && !r->refusal)
		u = r->usage_before;   /* a release: its peak was before it */
	p->peak = u > p->peak ? u : p->peak;
	if (r->quota != REVIEW_UNSET || p->quota == REVIEW_UNSET)
		p->quota = r->quota;
}

static void sandbox_status(const struct review_sandbox *sb, struct sandbox_facts *f)
{
	if (!sb->has_summary)
		snprintf(f->ended, sizeof(f->ended), "no summary record: cut short, or the supervisor was killed");
	else if (sb->signal >= 0)
		snprintf(f->ended, sizeof(f->ended), "killed by signal %" PRId64, sb->signal);
	else
		snprintf(f->ended, sizeof(f->ended), "exit %" PRId64, sb->exit_status);
	if (!sb->chained)
		snprintf(f->chain, sizeof(f->chain), "none (a log without a hash chain: schema 1)");
	else if (sb->chain_problems)
		snprintf(f->chain, sizeof(f->chain), "BROKEN: %" PRIu64 " record%s out of place or edited "
		         "(gpusandbox audit verify says which)", sb->chain_problems,
		         sb->chain_problems == 1 ? "" : "s");
	else if (!sb->sealed)
		snprintf(f->chain, sizeof(f->chain), "intact but not sealed: cut short, or the supervisor killed");
	else
		snprintf(f->chain, sizeof(f->chain), "intact, sealed");
}

/* idx[from, to): the sandbox's records, in time order. */
static void gather(const struct review_log *log, const size_t *idx, size_t from, size_t to,
                   const struct review_opts *o, struct sandbox_facts *f)
{
	const struct review_sandbox *sb = &log->sandboxes[log->recs[idx[from]].sandbox];

	memset(f, 0, sizeof(*f));
	for (size_t i = from; i < to; i++) {
		const struct review_rec *r = &log->recs[idx[i]];
		if (!r->matched)
			continue;
		f->matched++;
		if (r->refusal)
			f->refusals = review_add_count(f->refusals, review_refusals_of(r));
		note_usage(f, r);
	}
	if (!o->filter->record_filters)
		for (unsigned g = 0; g < REVIEW_GPUS; g++) {
			struct resource_peak *p;
			if (sb->gpus->peak[g] == REVIEW_UNSET || !(p = peak_of(f, "vidmem", (int)g)))
				continue;
			p->peak = sb->gpus->peak[g] > p->peak ? sb->gpus->peak[g] : p->peak;
			if (p->quota == REVIEW_UNSET)
				p->quota = sb->gpus->mem_gpu[g] != REVIEW_UNSET ? sb->gpus->mem_gpu[g] : sb->mem_quota;
		}
	sandbox_status(sb, f);
}

static const struct review_log *sort_log;   /* qsort has no context argument */

static int by_sandbox(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint32_t sx = sort_log->recs[x].sandbox, sy = sort_log->recs[y].sandbox;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The records' indices grouped by sandbox (in time order within one):
 * one pass per view instead of one per sandbox, which a log of many
 * sandboxes would make quadratic. */
size_t *review_by_sandbox(const struct review_log *log)
{
	size_t *idx = malloc((log->n ? log->n : 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < log->n; i++)
		idx[i] = i;
	sort_log = log;
	qsort(idx, log->n, sizeof(*idx), by_sandbox);
	return idx;
}

static const char *const summary_columns[] = {
	"sandbox", "start", "command", "labels", "level", "policy", "driver", "ended", "chain", "records",
	"refusals", "resource", "gpu", "peak", "quota", "use", "share_target", "share_achieved",
};
enum { S_SANDBOX, S_START, S_COMMAND, S_LABELS, S_LEVEL, S_POLICY, S_DRIVER, S_ENDED, S_CHAIN, S_RECORDS,
       S_REFUSALS, S_RESOURCE, S_GPU, S_PEAK, S_QUOTA, S_USE, S_TARGET, S_ACHIEVED, S_COLUMNS };
_Static_assert(sizeof(summary_columns) / sizeof(summary_columns[0]) == S_COLUMNS, "columns");

static int summary_row(struct review_table *t, const struct review_sandbox *sb, const char *start,
                       const struct sandbox_facts *f, const struct resource_peak *p)
{
	struct review_cell *c = review_table_row(t);
	bool bytes = p && strcmp(p->resource, "vidmem") == 0;

	if (!c)
		return -1;
	review_cell_text(&c[S_SANDBOX], sb->id);
	review_cell_text(&c[S_START], start);
	review_cell_text(&c[S_COMMAND], sb->command);
	review_cell_text(&c[S_LABELS], sb->labels);
	review_cell_text(&c[S_LEVEL], sb->level);
	review_cell_text(&c[S_POLICY], sb->policy);
	review_cell_text(&c[S_DRIVER], sb->driver);
	review_cell_text(&c[S_ENDED], f->ended);
	review_cell_text(&c[S_CHAIN], f->chain);
	review_cell_count(&c[S_RECORDS], f->matched);
	review_cell_count(&c[S_REFUSALS], f->refusals);
	review_cell_ratio(&c[S_TARGET], sb->share_target);
	if (!p)
		return 0;
	review_cell_text(&c[S_RESOURCE], p->resource);
	if (p->gpu >= 0) {
		review_cell_int(&c[S_GPU], p->gpu);
		review_cell_ratio(&c[S_ACHIEVED], sb->gpus->share_achieved[p->gpu]);
	}
	if (bytes) {
		review_cell_bytes(&c[S_PEAK], p->peak);
		review_cell_bytes(&c[S_QUOTA], p->quota);
	} else {
		review_cell_count(&c[S_PEAK], p->peak);
		if (p->quota != REVIEW_UNSET)
			review_cell_count(&c[S_QUOTA], p->quota);
	}
	if (p->quota != REVIEW_UNSET && p->quota)
		review_cell_ratio(&c[S_USE], (double)p->peak / (double)p->quota);
	return 0;
}

static void print_block(FILE *out, const struct review_sandbox *sb, const char *start,
                        const struct sandbox_facts *f)
{
	char a[REVIEW_TEXT], b[REVIEW_TEXT];

	fprintf(out, "sandbox %s\n  started   %s\n  command   %s\n", sb->id, start[0] ? start : "-",
	        sb->command[0] ? sb->command : "-");
	if (sb->labels[0])
		fprintf(out, "  labels    %s\n", sb->labels);
	if (sb->level[0])
		fprintf(out, "  recorded  %s\n", sb->level);
	fprintf(out, "  policy    %s\n", sb->policy[0] ? sb->policy
	                         : sb->has_start ? "- (not recorded: schema 1, or no limit set)"
	                                         : "- (no start record)");
	if (sb->driver[0])
		fprintf(out, "  driver    %s\n", sb->driver);
	fprintf(out, "  ended     %s\n  chain     %s\n  records   %" PRIu64 " matched, %" PRIu64
	        " call%s refused\n", f->ended, f->chain, f->matched, f->refusals,
	        f->refusals == 1 ? "" : "s");
	for (unsigned i = 0; i < f->n_res; i++) {
		const struct resource_peak *p = &f->res[i];
		bool bytes = strcmp(p->resource, "vidmem") == 0;
		if (bytes) {
			gs_format_size(p->peak, a, sizeof(a));
			if (p->quota != REVIEW_UNSET)
				gs_format_size(p->quota, b, sizeof(b));
		} else {
			snprintf(a, sizeof(a), "%" PRIu64, p->peak);
			snprintf(b, sizeof(b), "%" PRIu64, p->quota);
		}
		fprintf(out, "  peak      %s", p->resource);
		if (p->gpu >= 0)
			fprintf(out, " on GPU %d", p->gpu);
		if (p->quota == REVIEW_UNSET)
			fprintf(out, ": %s (no quota)\n", a);
		else
			fprintf(out, ": %s of %s (%.1f%%)\n", a, b,
			        p->quota ? 100.0 * (double)p->peak / (double)p->quota : 0.0);
	}
	for (unsigned g = 0; g < REVIEW_GPUS && sb->share_target >= 0; g++)
		if (sb->gpus->share_achieved[g] >= 0)
			fprintf(out, "  share     GPU %u: %.1f%% achieved, target %.0f%%\n", g,
			        100.0 * sb->gpus->share_achieved[g], 100.0 * sb->share_target);
	fputc('\n', out);
}

static int summary_table(const struct review_opts *o, struct review_table *t,
                         const struct review_sandbox *sb, const struct sandbox_facts *f)
{
	const char *start = sb->start_text;
	if (o->format == REVIEW_TEXT_FORMAT) {
		print_block(o->out, sb, start, f);
		return 0;
	}
	if (!f->n_res)
		return summary_row(t, sb, start, f, NULL);
	for (unsigned i = 0; i < f->n_res; i++)
		if (summary_row(t, sb, start, f, &f->res[i]) < 0)
			return -1;
	return 0;
}

long review_summary(const struct review_log *log, const struct review_opts *o)
{
	struct review_table t;
	struct sandbox_facts *f = malloc(sizeof(*f));
	size_t *idx = review_by_sandbox(log);
	int rc = 0;

	if (!f || !idx) {
		free(f);
		free(idx);
		return -1;
	}
	size_t shown = 0;

	review_table_init(&t, summary_columns, S_COLUMNS);
	for (size_t from = 0, to; from < log->n && rc == 0; from = to) {
		uint32_t s = log->recs[idx[from]].sandbox;
		for (to = from; to < log->n && log->recs[idx[to]].sandbox == s; to++)
			;
		gather(log, idx, from, to, o, f);
		if (f->matched) {
			rc = summary_table(o, &t, &log->sandboxes[s], f);
			shown++;
		}
	}
	free(idx);
	if (rc == 0 && o->format != REVIEW_TEXT_FORMAT)
		rc = review_table_write(&t, o->format, o->out);
	review_table_free(&t);
	free(f);
	return rc < 0 ? -1 : (long)shown;
}

static const char *const timeline_columns[] = {
	"time", "sandbox", "seq", "event", "pid", "comm", "gpu", "call", "object", "size",
	"verdict", "outcome", "status", "usage", "quota", "detail", "stack",
};
enum { T_TIME, T_SANDBOX, T_SEQ, T_EVENT, T_PID, T_COMM, T_GPU, T_CALL, T_OBJECT, T_SIZE,
       T_VERDICT, T_OUTCOME, T_STATUS, T_USAGE, T_QUOTA, T_DETAIL, T_STACK, T_COLUMNS };
_Static_assert(sizeof(timeline_columns) / sizeof(timeline_columns[0]) == T_COLUMNS, "columns");

/* What the record says beyond its columns, in a few words. */
static void detail_of(const struct review_log *log, const struct review_rec *r, char *buf, size_t len)
{
	const struct review_sandbox *sb = &log->sandboxes[r->sandbox];

	if (r->event == REVIEW_EV_START)
		snprintf(buf, len, "%s", sb->command);
	else if (r->event == REVIEW_EV_SUPPRESSED && r->count != REVIEW_UNSET)
		snprintf(buf, len, "%" PRIu64 " more like record %" PRIu64 ": %s", r->count, r->first_seq,
		         r->reason);
	else if (r->event == REVIEW_EV_SUMMARY)
		snprintf(buf, len, "%s", !sb->has_summary ? "" : sb->signal >= 0 ? "killed by a signal" : "exited");
	else if (r->event == REVIEW_EV_SM_ADJUST && r->share >= 0)
		snprintf(buf, len, "measured share %.4f", r->share);
	else if (r->event == REVIEW_EV_USAGE && r->peak != REVIEW_UNSET)
		snprintf(buf, len, "peak since the last usage record %" PRIu64, r->peak);
	else
		snprintf(buf, len, "%s", r->reason);
}

static int timeline_row(struct review_table *t, const struct review_log *log, const struct review_rec *r)
{
	struct review_cell *c = review_table_row(t);
	char detail[LINE_TEXT];
	bool bytes = !r->resource[0] || strcmp(r->resource, "vidmem") == 0;

	if (!c)
		return -1;
	review_cell_text(&c[T_TIME], r->time_text);
	review_cell_text(&c[T_SANDBOX], log->sandboxes[r->sandbox].id);
	if (r->seq != REVIEW_UNSET)
		review_cell_count(&c[T_SEQ], r->seq);
	review_cell_text(&c[T_EVENT], r->event_name);
	if (r->pid >= 0)
		review_cell_int(&c[T_PID], r->pid);
	review_cell_text(&c[T_COMM], r->comm);
	if (r->gpu >= 0)
		review_cell_int(&c[T_GPU], r->gpu);
	review_cell_text(&c[T_CALL], r->call);
	review_cell_text(&c[T_OBJECT], r->object);
	review_cell_bytes(&c[T_SIZE], r->size);
	review_cell_text(&c[T_VERDICT], r->verdict);
	review_cell_text(&c[T_OUTCOME], r->outcome);
	review_cell_text(&c[T_STATUS], r->status);
	if (bytes) {
		review_cell_bytes(&c[T_USAGE], r->usage_after);
		review_cell_bytes(&c[T_QUOTA], r->quota);
	} else {
		if (r->usage_after != REVIEW_UNSET)
			review_cell_count(&c[T_USAGE], r->usage_after);
		if (r->quota != REVIEW_UNSET)
			review_cell_count(&c[T_QUOTA], r->quota);
	}
	detail_of(log, r, detail, sizeof(detail));
	review_cell_text(&c[T_DETAIL], detail);
	review_cell_text(&c[T_STACK], r->stack);
	return 0;
}

long review_timeline(const struct review_log *log, const struct review_opts *o)
{
	struct review_table t;
	long rc = 0, shown;

	review_table_init(&t, timeline_columns, T_COLUMNS);
	for (size_t i = 0; i < log->n && rc == 0; i++)
		if (log->recs[i].matched)
			rc = timeline_row(&t, log, &log->recs[i]);
	if (rc == 0)
		rc = review_table_write(&t, o->format, o->out);
	shown = (long)t.rows;
	review_table_free(&t);
	return rc < 0 ? -1 : shown;
}
