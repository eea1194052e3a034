/* SPDX-License-Identifier: MIT */
/*
 * review_usage.c - `gpusandbox audit usage`: video memory per process and
 * GPU over time.
 *
 * What a process holds is followed through every record of its sandbox
 * (matching or not, so that --since does not start it from zero): an
 * allocation adds what the sandbox's usage grew by, a release (RM_FREE,
 * or FILE_CLOSE, credited to the process that held the memory since
 * schema 2) takes away what it shrank by. Time is cut into --interval
 * wide windows from the sandbox's start; each window with a matching
 * record gives one row: what the process held at its end and at most
 * within it, the sandbox's usage of that GPU, the quota, and how many
 * allocations, releases and refusals it saw.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "review.h"

#define US_PER_S 1e6
#define WINDOW_TEXT 32   /* "%.3f" of seconds up to --interval times 2^63 */

struct window {
	bool     active;
	int64_t  index;
	int64_t  held_end, held_peak;
	uint64_t sandbox_usage, quota, allocations, releases, refusals;
};

static const struct review_log *sort_log;   /* qsort has no context argument */

static int by_process(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct review_rec *rx = &sort_log->recs[x], *ry = &sort_log->recs[y];

	if (rx->sandbox != ry->sandbox)
		return rx->sandbox < ry->sandbox ? -1 : 1;
	if (rx->pid != ry->pid)
		return rx->pid < ry->pid ? -1 : 1;
	if (rx->gpu != ry->gpu)
		return rx->gpu < ry->gpu ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A record that moves or tries to move video memory on one GPU. */
bool review_usage_keeps(const struct review_rec *r)
{
	return r->gpu >= 0 && r->pid >= 0 && (!r->resource[0] || strcmp(r->resource, "vidmem") == 0) &&
	       ((r->usage_before != REVIEW_UNSET && r->usage_after != REVIEW_UNSET) ||
	        (r->event == REVIEW_EV_SUPPRESSED && r->refusal));
}

static const char *const usage_columns[] = {
	"sandbox", "pid", "comm", "gpu", "from_s", "to_s", "held", "held_peak", "sandbox_usage",
	"quota", "allocations", "releases", "refusals",
};
enum { U_SANDBOX, U_PID, U_COMM, U_GPU, U_FROM, U_TO, U_HELD, U_PEAK, U_USAGE, U_QUOTA,
       U_ALLOCS, U_RELEASES, U_REFUSALS, U_COLUMNS };
_Static_assert(sizeof(usage_columns) / sizeof(usage_columns[0]) == U_COLUMNS, "columns");

/* One window's row: r is the window's last matching record. */
static void window_cells(struct review_cell *c, const struct review_log *log, const struct review_rec *r,
                         const struct window *w, double interval)
{
	char from[WINDOW_TEXT], to[WINDOW_TEXT];

	snprintf(from, sizeof(from), "%.3f", (double)w->index * interval);
	snprintf(to, sizeof(to), "%.3f", (double)(w->index + 1) * interval);
	review_cell_ref(&c[U_SANDBOX], log->sandboxes[r->sandbox].id);
	review_cell_int(&c[U_PID], r->pid);
	review_cell_ref(&c[U_COMM], r->comm);
	review_cell_int(&c[U_GPU], r->gpu);
	review_cell_text(&c[U_FROM], from);
	review_cell_text(&c[U_TO], to);
	review_cell_bytes(&c[U_HELD], w->held_end < 0 ? 0 : (uint64_t)w->held_end);
	review_cell_bytes(&c[U_PEAK], w->held_peak < 0 ? 0 : (uint64_t)w->held_peak);
	review_cell_bytes(&c[U_USAGE], w->sandbox_usage);
	review_cell_bytes(&c[U_QUOTA], w->quota);
	review_cell_count(&c[U_ALLOCS], w->allocations);
	review_cell_count(&c[U_RELEASES], w->releases);
	review_cell_count(&c[U_REFUSALS], w->refusals);
}

/* What the process holds after the sandbox's usage went from before to
 * after. Checked: a crafted log's sizes near 2^63 overflowed the signed
 * total (undefined, then a held of 0 printed, issue #32); it saturates. */
static int64_t held_after(int64_t held, uint64_t before, uint64_t after)
{
	uint64_t change = after >= before ? after - before : before - after;
	int64_t out;

	if (change > INT64_MAX)
		return after >= before ? INT64_MAX : INT64_MIN;
	if (after >= before ? __builtin_add_overflow(held, (int64_t)change, &out)
	                    : __builtin_sub_overflow(held, (int64_t)change, &out))
		return after >= before ? INT64_MAX : INT64_MIN;
	return out;
}

static void step(struct window *w, const struct review_rec *r, int64_t *held)
{
	if (r->usage_before != REVIEW_UNSET && r->usage_after != REVIEW_UNSET && !r->refusal) {
		*held = held_after(*held, r->usage_before, r->usage_after);
		if (!r->matched)
			return;
		w->allocations += r->usage_after > r->usage_before;
		w->releases += r->usage_after < r->usage_before;
	}
	if (!r->matched)
		return;
	if (r->refusal)
		w->refusals = review_add_count(w->refusals, review_refusals_of(r));
	if (r->usage_after != REVIEW_UNSET)
		w->sandbox_usage = r->usage_after;
	if (r->quota != REVIEW_UNSET)
		w->quota = r->quota;
}

/* The windows to print, one after another: the records grouped by
 * process and GPU (idx), each group walked in time order. The rows are
 * made as the writer asks for them, so that no table of them is held
 * (issue #32); the writer asks again from row 0 for a second pass. */
struct usage_walk {
	const struct review_log *log;
	const size_t *idx;
	size_t n, i, group_end;   /* i == group_end: the group is done */
	double interval;
	struct window w;          /* the window being filled */
	int64_t held, start;
	const struct review_rec *last;   /* the window's last matching record */
};

static void walk_reset(struct usage_walk *u)
{
	u->i = u->group_end = 0;
	u->w.active = false;
}

static void next_group(struct usage_walk *u)
{
	const struct review_rec *a = &u->log->recs[u->idx[u->i]];
	size_t to = u->i + 1;

	while (to < u->n && u->log->recs[u->idx[to]].sandbox == a->sandbox &&
	       u->log->recs[u->idx[to]].pid == a->pid && u->log->recs[u->idx[to]].gpu == a->gpu)
		to++;
	u->group_end = to;
	u->w = (struct window){ .quota = REVIEW_UNSET, .sandbox_usage = REVIEW_UNSET };
	u->held = 0;
	u->start = u->log->sandboxes[a->sandbox].start_us;
	u->last = NULL;
}

/* One record into the walk; a window it closes goes to *done. */
static bool walk_record(struct usage_walk *u, struct window *done, const struct review_rec **done_r)
{
	const struct review_rec *r = &u->log->recs[u->idx[u->i++]];
	int64_t at = r->time_us != INT64_MIN && u->start != INT64_MIN && r->time_us > u->start
	                     ? r->time_us - u->start : 0;
	int64_t index = at / (int64_t)(u->interval * US_PER_S);   /* at >= 0: from the start */
	bool closed = false;

	if (r->matched && (!u->w.active || u->w.index != index)) {
		closed = u->w.active;
		*done = u->w;
		*done_r = u->last;
		/* A new window: its counts start at zero, the usage and quota
		 * last seen carry over. */
		u->w = (struct window){ .active = true, .index = index, .held_peak = u->held,
		                        .sandbox_usage = u->w.sandbox_usage, .quota = u->w.quota };
	}
	step(&u->w, r, &u->held);
	if (r->matched) {
		u->w.held_end = u->held;
		u->w.held_peak = u->held > u->w.held_peak ? u->held : u->w.held_peak;
		u->last = r;
	}
	return closed;
}

/* The next window to print; false after the last. */
static bool next_window(struct usage_walk *u, struct window *w, const struct review_rec **r)
{
	for (;;) {
		if (u->i == u->group_end) {
			if (u->w.active) {   /* the group's last window */
				*w = u->w;
				*r = u->last;
				u->w.active = false;
				return true;
			}
			if (u->i == u->n)
				return false;
			next_group(u);
		}
		if (walk_record(u, w, r))
			return true;
	}
}

static int usage_fill(void *ctx, size_t row, struct review_cell *cells)
{
	struct usage_walk *u = ctx;
	struct window w;
	const struct review_rec *r;

	if (row == 0)
		walk_reset(u);
	if (!next_window(u, &w, &r))
		return -1;   /* fewer windows than counted: cannot be */
	window_cells(cells, u->log, r, &w, u->interval);
	return 0;
}

long review_usage(const struct review_log *log, const struct review_opts *o)
{
	size_t *idx = malloc((log->n ? log->n : 1) * sizeof(*idx)), n = 0;
	struct usage_walk u = { .log = log, .interval = o->interval_s };
	struct review_rows rs = { .columns = usage_columns, .n_columns = U_COLUMNS,
	                          .fill = usage_fill, .ctx = &u };
	struct window w;
	const struct review_rec *r;
	int rc;

	if (!idx)
		return -1;
	for (size_t i = 0; i < log->n; i++)
		if (review_usage_keeps(&log->recs[i]))
			idx[n++] = i;
	sort_log = log;
	qsort(idx, n, sizeof(*idx), by_process);
	u.idx = idx;
	u.n = n;
	walk_reset(&u);
	while (next_window(&u, &w, &r))
		rs.n_rows++;
	rc = review_rows_write(&rs, o->format, o->out);
	free(idx);
	return rc < 0 ? -1 : (long)rs.n_rows;
}
