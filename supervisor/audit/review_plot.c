/* SPDX-License-Identifier: MIT */
/*
 * review_plot.c - `gpusandbox audit plot`: an SVG of video memory against
 * the quota over time, one panel per sandbox and GPU, refusals marked.
 *
 * The SVG is self-contained (no script, no external reference, no font
 * file), so it can be opened anywhere a log is reviewed. Every text from
 * the log in it was cleaned when read and is escaped for XML here.
 *
 * In a panel, time runs from the sandbox's start; the blue step line is
 * the sandbox's usage of that GPU after each matching record, the red
 * line the quota (none when unlimited), and each refusal an orange dot at
 * the usage it asked to reach (clipped to the top edge when far above).
 * The colours are named below; tests/audit-review checks them in a PNG
 * rendered by Chromium.
 *
 * Every panel is drawn up to PLOT_MAX_PANELS (an SVG taller than that is
 * more than a browser renders); any past it are named, sandbox and GPU,
 * in the SVG and on stderr, so that nothing is left out without a word
 * (issue #32: 32 panels were drawn and the rest dropped silently). The
 * records are grouped by panel once (a sort), so that a log of many
 * sandboxes costs n log n, not a pass over the log per panel. The y axis
 * is computed in double and clamped before any conversion to an integer:
 * a usage near 2^64 in a crafted log made every label "-nan".
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpusandbox.h"
#include "quota.h"
#include "review.h"

#define PANEL_W 800
#define PANEL_H 300
#define MARGIN_L 100
#define MARGIN_R 30
#define MARGIN_T 50
#define MARGIN_B 45
#define PLOT_W (PANEL_W - MARGIN_L - MARGIN_R)
#define PLOT_H (PANEL_H - MARGIN_T - MARGIN_B)
#define PLOT_MAX_PANELS 256u
#define LEFT_OUT_LINE_H 16
#define LEFT_OUT_TOP 24
#define TICKS 4
#define HEADROOM 1.1
#define ASKED_RANGE 4   /* the y axis stretches to 4x the usage for a refusal */
#define US_PER_S 1e6
#define MARK_R 6
#define COLOUR_USAGE "#1f77b4"
#define COLOUR_QUOTA "#d62728"
#define COLOUR_REFUSAL "#ff7f0e"
#define COLOUR_AXIS "#333333"
#define COLOUR_GRID "#dddddd"

/* 2^64 as a double: the first value a uint64_t cannot hold. */
#define UINT64_LIMIT 0x1p64

struct panel {
	uint32_t sandbox;
	int      gpu;
	size_t   from, to;     /* its records: idx[from, to), in time order */
	double   t_max;        /* s since the sandbox's start */
	double   y_max;        /* bytes at the top edge (double: may pass 2^64) */
	uint64_t quota, peak;
	uint64_t refusals;
	uint64_t asked;        /* the most a refusal asked to reach */
};

bool review_plot_keeps(const struct review_rec *r)
{
	return r->gpu >= 0 && (!r->resource[0] || strcmp(r->resource, "vidmem") == 0) &&
	       (r->usage_after != REVIEW_UNSET || r->refusal);
}

static bool memory_record(const struct review_rec *r)
{
	return r->matched && review_plot_keeps(r);
}

static double seconds(const struct review_log *log, const struct review_rec *r)
{
	int64_t start = log->sandboxes[r->sandbox].start_us;

	if (r->time_us == INT64_MIN || start == INT64_MIN || r->time_us < start)
		return 0;
	return (double)(r->time_us - start) / US_PER_S;
}

/* What a refusal asked the usage to reach. */
static uint64_t asked(const struct review_rec *r)
{
	if (r->usage_before == REVIEW_UNSET)
		return 0;
	if (r->size == REVIEW_UNSET || r->usage_before > UINT64_MAX - r->size)
		return r->usage_before;
	return r->usage_before + r->size;
}

static const struct review_log *sort_log;   /* qsort has no context argument */
static const size_t *sort_index;

/* By panel (sandbox, then GPU), in time order within one. */
static int by_panel(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct review_rec *rx = &sort_log->recs[x], *ry = &sort_log->recs[y];

	if (rx->sandbox != ry->sandbox)
		return rx->sandbox < ry->sandbox ? -1 : 1;
	if (rx->gpu != ry->gpu)
		return rx->gpu < ry->gpu ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Panels in the order their first record comes in time, as a reader
 * meets them. */
static int by_first_record(const void *a, const void *b)
{
	const struct panel *x = a, *y = b;
	size_t fx = sort_index[x->from], fy = sort_index[y->from];

	return fx < fy ? -1 : fx > fy;
}

static void panel_add(const struct review_log *log, struct panel *q, const struct review_rec *r)
{
	double t = seconds(log, r);

	q->t_max = t > q->t_max ? t : q->t_max;
	if (r->usage_after != REVIEW_UNSET && !r->refusal)
		q->peak = r->usage_after > q->peak ? r->usage_after : q->peak;
	if (r->peak != REVIEW_UNSET && r->peak > q->peak)
		q->peak = r->peak;   /* a usage record's peak between two records */
	if (r->quota != REVIEW_UNSET)
		q->quota = r->quota;
	if (r->refusal) {
		q->refusals = review_add_count(q->refusals, review_refusals_of(r));
		q->asked = asked(r) > q->asked ? asked(r) : q->asked;
	}
}

static void panel_scale(struct panel *p)
{
	uint64_t top = p->peak;

	if (p->quota != REVIEW_UNSET && p->quota > top)
		top = p->quota;
	/* Refusals inside the plot, unless one asked for far more. */
	if (p->asked > top && p->asked / ASKED_RANGE <= top)
		top = p->asked;
	p->y_max = (double)(top ? top : 1) * HEADROOM;
	p->t_max = p->t_max > 0 ? p->t_max * HEADROOM : 1;
}

/* The panels (malloc'd, *n of them) over idx, the matching memory
 * records grouped by panel; NULL with *n 0 when there are none. */
static struct panel *find_panels(const struct review_log *log, const size_t *idx, size_t n_idx,
                                 size_t *n, bool *failed)
{
	struct panel *p = NULL;
	size_t cap = 0;

	*n = 0;
	*failed = false;
	for (size_t i = 0; i < n_idx; i++) {
		const struct review_rec *r = &log->recs[idx[i]];
		if (!*n || p[*n - 1].sandbox != r->sandbox || p[*n - 1].gpu != r->gpu) {
			if (!GS_ROOM_FOR_ONE(p, *n, cap, PLOT_MAX_PANELS)) {
				*failed = true;
				free(p);
				return NULL;
			}
			p[(*n)++] = (struct panel){ .sandbox = r->sandbox, .gpu = r->gpu, .from = i,
			                            .quota = REVIEW_UNSET };
		}
		p[*n - 1].to = i + 1;
		panel_add(log, &p[*n - 1], r);
	}
	for (size_t i = 0; i < *n; i++)
		panel_scale(&p[i]);
	if (*n)
		qsort(p, *n, sizeof(*p), by_first_record);
	return p;
}

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

static double x_of(const struct panel *p, double t)
{
	return MARGIN_L + PLOT_W * (t / p->t_max);
}

static double y_of(const struct panel *p, double v, double top)
{
	double frac = v / p->y_max;
	return top + MARGIN_T + PLOT_H * (1.0 - (frac > 1.0 ? 1.0 : frac));
}

static void axes(FILE *out, const struct panel *p, double top)
{
	char size[REVIEW_TEXT];

	for (int i = 0; i <= TICKS; i++) {
		double v = p->y_max * i / TICKS, y = y_of(p, v, top), t = p->t_max * i / TICKS;
		/* Clamped before the conversion: a double past 2^64 has no
		 * uint64_t (the label then says the most a uint64_t holds). */
		uint64_t label = v >= UINT64_LIMIT ? UINT64_MAX : (uint64_t)v;
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
		        MARGIN_L, y, MARGIN_L + PLOT_W, y, COLOUR_GRID);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n",
		        MARGIN_L - 6, y + 4, gs_format_size(label, size, sizeof(size)));
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%.1f s</text>\n",
		        x_of(p, t), top + MARGIN_T + PLOT_H + 16, t);
	}
	fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\"/>\n",
	        MARGIN_L, top + MARGIN_T, PLOT_W, PLOT_H, COLOUR_AXIS);
}

static void title(FILE *out, const struct review_log *log, const struct panel *p, double top)
{
	const struct review_sandbox *sb = &log->sandboxes[p->sandbox];
	char q[REVIEW_TEXT];

	fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">sandbox ", MARGIN_L,
	        top + 18);
	xml_text(out, sb->id);
	fprintf(out, ", GPU %d: ", p->gpu);
	xml_text(out, sb->command);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"%.1f\" font-size=\"11\">", MARGIN_L, top + 36);
	fprintf(out, "<tspan fill=\"%s\">usage</tspan>  <tspan fill=\"%s\">quota %s</tspan>  "
	        "<tspan fill=\"%s\">%" PRIu64 " refusal%s</tspan></text>\n", COLOUR_USAGE, COLOUR_QUOTA,
	        p->quota == REVIEW_UNSET ? "none" : gs_format_size(p->quota, q, sizeof(q)),
	        COLOUR_REFUSAL, p->refusals, p->refusals == 1 ? "" : "s");
}

static void series(FILE *out, const struct review_log *log, const size_t *idx, const struct panel *p,
                   double top)
{
	double last_y = y_of(p, 0, top);
	bool open = false;

	fprintf(out, "<polyline class=\"usage\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%d,%.1f",
	        COLOUR_USAGE, MARGIN_L, last_y);
	for (size_t i = p->from; i < p->to; i++) {
		const struct review_rec *r = &log->recs[idx[i]];
		double x, y;
		if (r->refusal || r->usage_after == REVIEW_UNSET)
			continue;
		x = x_of(p, seconds(log, r));
		y = y_of(p, (double)r->usage_after, top);
		fprintf(out, " %.1f,%.1f %.1f,%.1f", x, last_y, x, y);
		last_y = y;
		open = true;
	}
	fprintf(out, " %d,%.1f\"/>\n", MARGIN_L + PLOT_W, open ? last_y : y_of(p, 0, top));
	if (p->quota != REVIEW_UNSET)
		fprintf(out, "<line class=\"quota\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
		        "stroke-width=\"3\"/>\n", MARGIN_L, y_of(p, (double)p->quota, top), MARGIN_L + PLOT_W,
		        y_of(p, (double)p->quota, top), COLOUR_QUOTA);
	for (size_t i = p->from; i < p->to; i++) {
		const struct review_rec *r = &log->recs[idx[i]];
		if (!r->refusal)
			continue;
		fprintf(out, "<circle class=\"refusal\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"/>\n",
		        x_of(p, seconds(log, r)), y_of(p, (double)asked(r), top), MARK_R, COLOUR_REFUSAL);
	}
}

/* The panels past PLOT_MAX_PANELS, named in the SVG below the last one
 * drawn and on stderr. */
static void left_out(FILE *out, const struct review_log *log, const struct panel *p, size_t n,
                     double top)
{
	size_t more = n - PLOT_MAX_PANELS;

	fprintf(stderr, "gpusandbox audit: plot: %zu panel%s not drawn (at most %u are; choose with "
	        "--sandbox or --gpu):", more, more == 1 ? "" : "s", PLOT_MAX_PANELS);
	fprintf(out, "<g class=\"left-out\">\n<text x=\"20\" y=\"%.1f\" font-size=\"13\">%zu panel%s "
	        "not drawn (at most %u are; choose with --sandbox or --gpu):</text>\n", top + LEFT_OUT_TOP,
	        more, more == 1 ? "" : "s", PLOT_MAX_PANELS);
	for (size_t i = PLOT_MAX_PANELS; i < n; i++) {
		const char *id = log->sandboxes[p[i].sandbox].id;   /* a plain word: is_id */
		fprintf(stderr, " %s GPU %d%s", id, p[i].gpu, i + 1 < n ? "," : "\n");
		fprintf(out, "<text x=\"20\" y=\"%.1f\" font-size=\"11\">sandbox ",
		        top + LEFT_OUT_TOP + (double)(i - PLOT_MAX_PANELS + 1) * LEFT_OUT_LINE_H);
		xml_text(out, id);
		fprintf(out, ", GPU %d</text>\n", p[i].gpu);
	}
	fprintf(out, "</g>\n");
}

long review_plot(const struct review_log *log, const struct review_opts *o)
{
	size_t *idx = malloc((log->n ? log->n : 1) * sizeof(*idx)), n_idx = 0, n, drawn;
	struct panel *p;
	bool failed;
	double height;

	if (!idx)
		return -1;
	for (size_t i = 0; i < log->n; i++)
		if (memory_record(&log->recs[i]))
			idx[n_idx++] = i;
	sort_log = log;
	sort_index = idx;
	qsort(idx, n_idx, sizeof(*idx), by_panel);
	p = find_panels(log, idx, n_idx, &n, &failed);
	if (failed) {
		free(idx);
		return -1;
	}
	drawn = n < PLOT_MAX_PANELS ? n : PLOT_MAX_PANELS;
	height = (double)(drawn ? drawn : 1) * PANEL_H;
	if (n > drawn)
		height += LEFT_OUT_TOP + (double)(n - drawn + 1) * LEFT_OUT_LINE_H;
	fprintf(o->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
	        "viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	        PANEL_W, height, PANEL_W, height);
	if (!n)
		fprintf(o->out, "<text x=\"20\" y=\"40\">no video memory records matched</text>\n");
	for (size_t i = 0; i < drawn; i++) {
		double top = (double)i * PANEL_H;
		fprintf(o->out, "<g class=\"panel\">\n");
		title(o->out, log, &p[i], top);
		axes(o->out, &p[i], top);
		series(o->out, log, idx, &p[i], top);
		fprintf(o->out, "</g>\n");
	}
	if (n > drawn)
		left_out(o->out, log, p, n, (double)drawn * PANEL_H);
	fprintf(o->out, "</svg>\n");
	free(p);
	free(idx);
	return ferror(o->out) ? -1 : (long)n;
}
