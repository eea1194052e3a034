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

#include "gpusandbox.h"
#include "quota.h"
#include "review.h"

#define SUMMARY_RESOURCES 32u
#define SUMMARY_RESOURCES_FIRST 4u
#define LINE_TEXT 512

struct resource_peak {
	const char *resource;   /* the log's pool, or "vidmem" */
	int      gpu;
	uint64_t peak, quota;
};

/* What summary prints of one sandbox beyond its start and summary
 * records: all it keeps of the sandbox's records. */
struct sandbox_facts {
	struct resource_peak *res;
	unsigned n_res, cap_res;
	uint64_t matched, refusals;
};

struct review_facts {
	const struct review_filter *filter;
	struct review_pool *pool;      /* streaming: where a resource's name is kept */
	struct sandbox_facts *of;      /* by sandbox index */
	size_t n, cap;
	bool   refused;                /* a matching record is a refusal */
	bool   failed;                 /* out of memory */
};

/* The sandbox's resource entry, made on first sight; NULL past
 * SUMMARY_RESOURCES (a hostile log's invented resources) or out of memory.
 * A streamed record's texts last until the next record: a new entry's
 * name is kept in pool then (NULL: the name is the log's already). */
static struct resource_peak *peak_of(struct sandbox_facts *f, const char *resource, int gpu,
                                     struct review_pool *pool)
{
	for (unsigned i = 0; i < f->n_res; i++)
		if (f->res[i].gpu == gpu && strcmp(f->res[i].resource, resource) == 0)
			return &f->res[i];
	if (f->n_res == SUMMARY_RESOURCES ||
	    !GS_ROOM_FOR_ONE(f->res, f->n_res, f->cap_res, SUMMARY_RESOURCES_FIRST) ||
	    (pool && !(resource = review_intern(pool, resource))))
		return NULL;
	f->res[f->n_res] = (struct resource_peak){ .resource = resource, .gpu = gpu, .quota = REVIEW_UNSET };
	return &f->res[f->n_res++];
}

static void note_usage(struct sandbox_facts *f, const struct review_rec *r, struct review_pool *pool)
{
	const char *resource = r->resource[0] ? r->resource : "vidmem";
	struct resource_peak *p;
	/* A refusal's usage_after is the usage it left, not a peak reached. */
	uint64_t u = r->usage_after;

	if ((r->event != REVIEW_EV_DECISION && r->event != REVIEW_EV_USAGE) || u == REVIEW_UNSET)
		return;
	p = peak_of(f, resource, strcmp(resource, "vidmem") == 0 ? r->gpu : REVIEW_NO_GPU, pool);
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

struct review_facts *review_facts_new(const struct review_filter *filter)
{
	struct review_facts *facts = calloc(1, sizeof(*facts));

	if (facts)
		facts->filter = filter;
	return facts;
}

void review_facts_free(struct review_facts *facts)
{
	if (!facts)
		return;
	for (size_t i = 0; i < facts->n; i++)
		free(facts->of[i].res);
	free(facts->of);
	free(facts);
}

bool review_facts_refused(const struct review_facts *facts)
{
	return facts && facts->refused;
}

/* One matching record into its sandbox's facts. */
static void facts_note(struct review_facts *facts, const struct review_rec *r)
{
	struct sandbox_facts *f;

	while (facts->n <= r->sandbox) {
		if (!GS_ROOM_FOR_ONE(facts->of, facts->n, facts->cap, SUMMARY_RESOURCES_FIRST)) {
			facts->failed = true;
			return;
		}
		facts->of[facts->n++] = (struct sandbox_facts){ 0 };
	}
	f = &facts->of[r->sandbox];
	f->matched++;
	if (r->refusal) {
		f->refusals = review_add_count(f->refusals, review_refusals_of(r));
		facts->refused = true;
	}
	note_usage(f, r, facts->pool);
}

bool review_summary_streams(const struct review_filter *f)
{
	/* A record filter needs the suppressed records linked to what they
	 * repeat, and +TIME the sandbox's earliest record: both need the
	 * whole log first. */
	return !f->record_filters && f->since.kind != REVIEW_TIME_FROM_START &&
	       f->until.kind != REVIEW_TIME_FROM_START;
}

void review_facts_sink(struct review_log *log, struct review_rec *r, void *ctx)
{
	struct review_facts *facts = ctx;

	facts->pool = &log->pool;
	r->matched = review_record_matches(facts->filter, log, r);
	if (r->matched)
		facts_note(facts, r);
}

/* The summary record's peaks, where no record filter narrowed the view
 * (with the default audit level, allowed allocations are not all
 * recorded). */
static void summary_peaks(const struct review_sandbox *sb, struct sandbox_facts *f,
                          const struct review_opts *o)
{
	if (o->filter->record_filters)
		return;
	for (unsigned g = 0; g < REVIEW_GPUS; g++) {
		struct resource_peak *p;
		if (sb->gpus->peak[g] == REVIEW_UNSET || !(p = peak_of(f, "vidmem", (int)g, NULL)))
			continue;
		p->peak = sb->gpus->peak[g] > p->peak ? sb->gpus->peak[g] : p->peak;
		if (p->quota == REVIEW_UNSET)
			p->quota = sb->gpus->mem_gpu[g] != REVIEW_UNSET ? sb->gpus->mem_gpu[g] : sb->mem_quota;
	}
}

struct status_text {
	char ended[REVIEW_TEXT], chain[2 * REVIEW_TEXT];
};

static void sandbox_status(const struct review_sandbox *sb, struct status_text *f)
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

static const char *const summary_columns[] = {
	"sandbox", "start", "command", "labels", "level", "policy", "driver", "ended", "chain", "records",
	"refusals", "resource", "gpu", "peak", "quota", "use", "share_target", "share_achieved",
};
enum { S_SANDBOX, S_START, S_COMMAND, S_LABELS, S_LEVEL, S_POLICY, S_DRIVER, S_ENDED, S_CHAIN, S_RECORDS,
       S_REFUSALS, S_RESOURCE, S_GPU, S_PEAK, S_QUOTA, S_USE, S_TARGET, S_ACHIEVED, S_COLUMNS };
_Static_assert(sizeof(summary_columns) / sizeof(summary_columns[0]) == S_COLUMNS, "columns");

static int summary_row(struct review_table *t, const struct review_sandbox *sb, const char *start,
                       const struct sandbox_facts *f, const struct status_text *st,
                       const struct resource_peak *p)
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
	review_cell_text(&c[S_ENDED], st->ended);
	review_cell_text(&c[S_CHAIN], st->chain);
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
                        const struct sandbox_facts *f, const struct status_text *st)
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
	        " call%s refused\n", st->ended, st->chain, f->matched, f->refusals,
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
	struct status_text st;

	sandbox_status(sb, &st);
	if (o->format == REVIEW_TEXT_FORMAT) {
		print_block(o->out, sb, start, f, &st);
		return 0;
	}
	if (!f->n_res)
		return summary_row(t, sb, start, f, &st, NULL);
	for (unsigned i = 0; i < f->n_res; i++)
		if (summary_row(t, sb, start, f, &st, &f->res[i]) < 0)
			return -1;
	return 0;
}

/* The facts of the log's kept records (when they were not streamed). */
static struct review_facts *facts_of_records(const struct review_log *log, const struct review_opts *o)
{
	struct review_facts *facts = review_facts_new(o->filter);

	for (size_t i = 0; facts && i < log->n; i++)
		if (log->recs[i].matched)
			facts_note(facts, &log->recs[i]);
	return facts;
}

long review_summary(const struct review_log *log, const struct review_opts *o)
{
	struct review_facts *own = o->facts ? NULL : facts_of_records(log, o);
	struct review_facts *facts = o->facts ? o->facts : own;
	struct review_table t;
	size_t shown = 0;
	int rc = 0;

	if (!facts || facts->failed) {
		review_facts_free(own);
		return -1;
	}
	/* Text is written sandbox by sandbox: nothing but the facts is held. */
	review_table_init(&t, summary_columns, S_COLUMNS);
	for (size_t s = 0; s < facts->n && rc == 0; s++) {
		struct sandbox_facts *f = &facts->of[s];
		if (!f->matched)
			continue;
		summary_peaks(&log->sandboxes[s], f, o);
		rc = summary_table(o, &t, &log->sandboxes[s], f);
		shown++;
	}
	if (rc == 0 && o->format != REVIEW_TEXT_FORMAT)
		rc = review_table_write(&t, o->format, o->out);
	review_table_free(&t);
	review_facts_free(own);
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

/* Fills the cells of one record; the texts of the log are borrowed, only
 * the composed detail is copied. */
static void timeline_cells(struct review_cell *c, const struct review_log *log, const struct review_rec *r)
{
	char detail[LINE_TEXT];
	bool bytes = !r->resource[0] || strcmp(r->resource, "vidmem") == 0;

	review_cell_ref(&c[T_TIME], r->time_text);
	review_cell_ref(&c[T_SANDBOX], log->sandboxes[r->sandbox].id);
	if (r->seq != REVIEW_UNSET)
		review_cell_count(&c[T_SEQ], r->seq);
	review_cell_ref(&c[T_EVENT], r->event_name);
	if (r->pid >= 0)
		review_cell_int(&c[T_PID], r->pid);
	review_cell_ref(&c[T_COMM], r->comm);
	if (r->gpu >= 0)
		review_cell_int(&c[T_GPU], r->gpu);
	review_cell_ref(&c[T_CALL], r->call);
	review_cell_ref(&c[T_OBJECT], r->object);
	review_cell_bytes(&c[T_SIZE], r->size);
	review_cell_ref(&c[T_VERDICT], r->verdict);
	review_cell_ref(&c[T_OUTCOME], r->outcome);
	review_cell_ref(&c[T_STATUS], r->status);
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
	review_cell_ref(&c[T_STACK], r->stack);
}

/* The matching records as rows, found in order (the writer asks for row
 * 0 again when it starts its second pass). */
struct timeline_cursor {
	const struct review_log *log;
	size_t next;   /* the record after the last row filled */
};

static int timeline_fill(void *ctx, size_t row, struct review_cell *cells)
{
	struct timeline_cursor *cur = ctx;

	if (row == 0)
		cur->next = 0;
	while (cur->next < cur->log->n && !cur->log->recs[cur->next].matched)
		cur->next++;
	if (cur->next == cur->log->n)
		return -1;   /* fewer matching records than counted: cannot be */
	timeline_cells(cells, cur->log, &cur->log->recs[cur->next++]);
	return 0;
}

long review_timeline(const struct review_log *log, const struct review_opts *o)
{
	struct timeline_cursor cur = { .log = log };
	struct review_rows rs = { .columns = timeline_columns, .n_columns = T_COLUMNS,
	                          .fill = timeline_fill, .ctx = &cur };

	for (size_t i = 0; i < log->n; i++)
		rs.n_rows += log->recs[i].matched;
	/* Written as it is made: no table of the whole log is held. */
	if (review_rows_write(&rs, o->format, o->out) < 0)
		return -1;
	return (long)rs.n_rows;
}
