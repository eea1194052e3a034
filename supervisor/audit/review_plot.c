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
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
#define MAX_PANELS 32u
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

struct panel {
	uint32_t sandbox;
	int      gpu;
	double   t_max;        /* s since the sandbox's start */
	uint64_t y_max, quota, peak;
	uint64_t refusals;
	uint64_t asked;        /* the most a refusal asked to reach */
};

static bool memory_record(const struct review_rec *r)
{
	return r->matched && r->gpu >= 0 && (!r->resource[0] || strcmp(r->resource, "vidmem") == 0) &&
	       (r->usage_after != REVIEW_UNSET || r->refusal);
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

static struct panel *panel_of(struct panel *p, unsigned *n, const struct review_rec *r)
{
	for (unsigned i = 0; i < *n; i++)
		if (p[i].sandbox == r->sandbox && p[i].gpu == r->gpu)
			return &p[i];
	if (*n == MAX_PANELS)
		return NULL;
	p[*n] = (struct panel){ .sandbox = r->sandbox, .gpu = r->gpu, .quota = REVIEW_UNSET };
	return &p[(*n)++];
}

static unsigned find_panels(const struct review_log *log, struct panel *p)
{
	unsigned n = 0;

	for (size_t i = 0; i < log->n; i++) {
		const struct review_rec *r = &log->recs[i];
		struct panel *q;
		double t = seconds(log, r);
		if (!memory_record(r) || !(q = panel_of(p, &n, r)))
			continue;
		q->t_max = t > q->t_max ? t : q->t_max;
		if (r->usage_after != REVIEW_UNSET && !r->refusal)
			q->peak = r->usage_after > q->peak ? r->usage_after : q->peak;
		if (r->peak != REVIEW_UNSET && r->peak > q->peak)
			q->peak = r->peak;   /* a usage record's peak between two records */
		if (r->quota != REVIEW_UNSET)
			q->quota = r->quota;
		if (r->refusal) {
			q->refusals += r->event == REVIEW_EV_SUPPRESSED && r->count != REVIEW_UNSET ? r->count : 1;
			q->asked = asked(r) > q->asked ? asked(r) : q->asked;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t top = p[i].peak;
		if (p[i].quota != REVIEW_UNSET && p[i].quota > top)
			top = p[i].quota;
		/* Refusals inside the plot, unless one asked for far more. */
		if (p[i].asked > top && p[i].asked / ASKED_RANGE <= top)
			top = p[i].asked;
		p[i].y_max = (uint64_t)((double)(top ? top : 1) * HEADROOM);
		p[i].t_max = p[i].t_max > 0 ? p[i].t_max * HEADROOM : 1;
	}
	return n;
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

static double y_of(const struct panel *p, uint64_t v, double top)
{
	double frac = (double)v / (double)p->y_max;
	return top + MARGIN_T + PLOT_H * (1.0 - (frac > 1.0 ? 1.0 : frac));
}

static void axes(FILE *out, const struct panel *p, double top)
{
	char size[REVIEW_TEXT];

	for (int i = 0; i <= TICKS; i++) {
		uint64_t v = (uint64_t)((double)p->y_max * i / TICKS);
		double y = y_of(p, v, top), t = p->t_max * i / TICKS;
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
		        MARGIN_L, y, MARGIN_L + PLOT_W, y, COLOUR_GRID);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n",
		        MARGIN_L - 6, y + 4, gs_format_size(v, size, sizeof(size)));
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

static void series(FILE *out, const struct review_log *log, const struct panel *p, double top)
{
	double last_y = y_of(p, 0, top);
	bool open = false;

	fprintf(out, "<polyline class=\"usage\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%d,%.1f",
	        COLOUR_USAGE, MARGIN_L, last_y);
	for (size_t i = 0; i < log->n; i++) {
		const struct review_rec *r = &log->recs[i];
		double x, y;
		if (!memory_record(r) || r->sandbox != p->sandbox || r->gpu != p->gpu || r->refusal ||
		    r->usage_after == REVIEW_UNSET)
			continue;
		x = x_of(p, seconds(log, r));
		y = y_of(p, r->usage_after, top);
		fprintf(out, " %.1f,%.1f %.1f,%.1f", x, last_y, x, y);
		last_y = y;
		open = true;
	}
	fprintf(out, " %d,%.1f\"/>\n", MARGIN_L + PLOT_W, open ? last_y : y_of(p, 0, top));
	if (p->quota != REVIEW_UNSET)
		fprintf(out, "<line class=\"quota\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
		        "stroke-width=\"3\"/>\n", MARGIN_L, y_of(p, p->quota, top), MARGIN_L + PLOT_W,
		        y_of(p, p->quota, top), COLOUR_QUOTA);
	for (size_t i = 0; i < log->n; i++) {
		const struct review_rec *r = &log->recs[i];
		if (!memory_record(r) || r->sandbox != p->sandbox || r->gpu != p->gpu || !r->refusal)
			continue;
		fprintf(out, "<circle class=\"refusal\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"/>\n",
		        x_of(p, seconds(log, r)), y_of(p, asked(r), top), MARK_R, COLOUR_REFUSAL);
	}
}

long review_plot(const struct review_log *log, const struct review_opts *o)
{
	struct panel *p = calloc(MAX_PANELS, sizeof(*p));
	unsigned n;

	if (!p)
		return -1;
	n = find_panels(log, p);
	fprintf(o->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" "
	        "viewBox=\"0 0 %d %u\" font-family=\"sans-serif\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	        PANEL_W, (n ? n : 1) * PANEL_H, PANEL_W, (n ? n : 1) * PANEL_H);
	if (!n)
		fprintf(o->out, "<text x=\"20\" y=\"40\">no video memory records matched</text>\n");
	for (unsigned i = 0; i < n; i++) {
		double top = (double)i * PANEL_H;
		fprintf(o->out, "<g class=\"panel\">\n");
		title(o->out, log, &p[i], top);
		axes(o->out, &p[i], top);
		series(o->out, log, &p[i], top);
		fprintf(o->out, "</g>\n");
	}
	fprintf(o->out, "</svg>\n");
	free(p);
	return ferror(o->out) ? -1 : (long)n;
}
