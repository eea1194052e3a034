/* SPDX-License-Identifier: MIT */
/*
 * idle_rule.c - the idle rule and the sample clock's mapping (idle_rule.h).
 * Pure: every time comes from the caller.
 */
#include "idle_rule.h"

/* ---- the sample clock ------------------------------------------------------ */

void gs_ts_map_reset(struct gs_ts_map *m)
{
	*m = (struct gs_ts_map){ 0 };
}

void gs_ts_map_add(struct gs_ts_map *m, uint64_t mono_before, uint64_t gpu_ns, uint64_t mono_after)
{
	if (mono_after < mono_before || !gpu_ns)
		return;
	uint64_t half = (mono_after - mono_before + 1) / 2;
	if (m->valid && half >= m->err_ns)
		return;
	uint64_t mid = mono_before + (mono_after - mono_before) / 2;
	m->offset_ns = (int64_t)(gpu_ns - mid);
	m->err_ns = half;
	m->valid = true;
}

bool gs_ts_map_to_mono(const struct gs_ts_map *m, uint64_t gpu_ns, uint64_t *mono)
{
	if (!m->valid || !gpu_ns)
		return false;
	*mono = gpu_ns - (uint64_t)m->offset_ns;
	return true;
}

/* ---- spans ----------------------------------------------------------------- */

static unsigned newest(const struct gs_span_ring *r)
{
	return (r->head + GS_SPAN_RING - 1) % GS_SPAN_RING;
}

void gs_span_open(struct gs_span_ring *r, uint64_t from)
{
	gs_span_close(r, from);
	r->from[r->head] = from;
	r->to[r->head] = GS_SPAN_OPEN;
	r->head = (r->head + 1) % GS_SPAN_RING;
	if (r->n < GS_SPAN_RING)
		r->n++;
}

void gs_span_close(struct gs_span_ring *r, uint64_t to)
{
	unsigned i = newest(r);

	if (r->n && r->to[i] == GS_SPAN_OPEN)
		r->to[i] = to > r->from[i] ? to : r->from[i];
}

/* Is [from, to) one of the newest two spans? A period adds up to two
 * (a rotated own window cut in two, plan.h), again at every tick. */
static bool recent(const struct gs_span_ring *r, uint64_t from, uint64_t to)
{
	for (unsigned k = 0; k < r->n && k < 2; k++) {
		unsigned i = (r->head + GS_SPAN_RING - 1 - k) % GS_SPAN_RING;
		if (r->from[i] == from && r->to[i] == to)
			return true;
	}
	return false;
}

void gs_span_add(struct gs_span_ring *r, uint64_t from, uint64_t to)
{
	if (to <= from || recent(r, from, to))
		return;
	r->from[r->head] = from;
	r->to[r->head] = to;
	r->head = (r->head + 1) % GS_SPAN_RING;
	if (r->n < GS_SPAN_RING)
		r->n++;
}

static uint64_t span_end(const struct gs_span_ring *r, unsigned i, uint64_t now)
{
	return r->to[i] == GS_SPAN_OPEN ? now : r->to[i];
}

bool gs_span_inside(const struct gs_span_ring *r, uint64_t t, uint64_t guard, uint64_t now)
{
	for (unsigned k = 0; k < r->n; k++) {
		unsigned i = (r->head + GS_SPAN_RING - 1 - k) % GS_SPAN_RING;
		uint64_t end = span_end(r, i, now);
		if (t >= r->from[i] + guard && t + guard <= end)
			return true;
	}
	return false;
}

bool gs_span_outside(const struct gs_span_ring *r, uint64_t t, uint64_t guard, uint64_t now)
{
	unsigned oldest = (r->head + GS_SPAN_RING - r->n) % GS_SPAN_RING;

	/* Before the history we keep, we know nothing. */
	if (!r->n || t < r->from[oldest] || t > now)
		return false;
	for (unsigned k = 0; k < r->n; k++) {
		unsigned i = (oldest + k) % GS_SPAN_RING;
		uint64_t end = span_end(r, i, now);
		if (t + guard >= r->from[i] && t <= end + guard)
			return false;
	}
	return true;
}

/* ---- the rule -------------------------------------------------------------- */

uint32_t gs_idle_after_samples(double w)
{
	double miss = 1.0;
	uint32_t n = 0;

	while (n < GS_IDLE_SAMPLES_MAX && (n < GS_IDLE_SAMPLES_MIN || miss >= GS_IDLE_FALSE_RATE)) {
		miss *= 1.0 - w;
		n++;
	}
	return n;
}

void gs_idle_rule_note(struct gs_idle_rule *r, enum gs_sample_kind k)
{
	/* A sample naming us where we were off still names us: busy. */
	if (k == GS_SAMPLE_NAMES_US_OFF && r->contradictions < UINT32_MAX)
		r->contradictions++;
	switch (k) {
	case GS_SAMPLE_NAMES_US_OFF:
	case GS_SAMPLE_NAMES_US:
		r->quiet = 0;
		r->quiet_own = 0;
		return;
	case GS_SAMPLE_QUIET_OWN:
		r->own_evidence++;
		if (r->quiet_own < UINT32_MAX)
			r->quiet_own++;
		break;
	case GS_SAMPLE_QUIET:
		break;
	}
	if (r->quiet < UINT32_MAX)
		r->quiet++;
}

bool gs_idle_rule_timed_ok(const struct gs_idle_rule *r)
{
	return r->contradictions < GS_TS_CONTRADICTIONS_MAX;
}

bool gs_idle_rule_idle(const struct gs_idle_rule *r, double w, bool timed)
{
	if (timed && gs_idle_rule_timed_ok(r))
		return r->quiet_own >= GS_IDLE_OWN_SAMPLES;
	return r->quiet >= gs_idle_after_samples(w);
}

enum gs_sample_kind gs_sample_classify(bool names_us, const struct gs_sample_place *p,
                                       const struct gs_span_ring *own, const struct gs_span_ring *runs)
{
	if (!p->timed)
		return names_us ? GS_SAMPLE_NAMES_US : GS_SAMPLE_QUIET;
	if (names_us)
		return gs_span_outside(runs, p->t, p->guard, p->now) ? GS_SAMPLE_NAMES_US_OFF
		                                                      : GS_SAMPLE_NAMES_US;
	if (p->t >= p->alone_since + p->guard && gs_span_inside(own, p->t, p->guard, p->now) &&
	    gs_span_inside(runs, p->t, p->guard, p->now))
		return GS_SAMPLE_QUIET_OWN;
	return GS_SAMPLE_QUIET;
}
