/* SPDX-License-Identifier: MIT */
/*
 * plan.c - the compute-share planner (see plan.h for the rules). Pure.
 */
#include <string.h>

#include "plan.h"

#define PERCENT_MAX 100u
#define PPM_PER_PERCENT (GS_PLAN_PPM / PERCENT_MAX)

static bool tenant_valid(const struct gs_plan_tenant *t)
{
	return t->percent >= 1 && t->percent <= PERCENT_MAX &&
	       (t->mode == GS_SM_MODE_CAP || t->mode == GS_SM_MODE_GUARANTEE);
}

static uint32_t asked_sum(const struct gs_plan_tenant *t, uint32_t n)
{
	uint32_t sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += t[i].percent;
	return sum;
}

uint32_t gs_plan_share_ppm(const struct gs_plan_tenant *t, uint32_t n, uint32_t i)
{
	uint32_t sum = asked_sum(t, n);

	if (sum <= PERCENT_MAX)
		return t[i].percent * PPM_PER_PERCENT;
	/* Oversubscribed: scaled down, rounded down so the windows fit. */
	return (uint32_t)((uint64_t)t[i].percent * GS_PLAN_PPM / sum);
}

/* Appends w to s's windows, merged with the last one when they touch
 * (windows are added in increasing offset). */
static void add_window(struct gs_plan_slot *s, struct gs_plan_window w)
{
	if (!w.len)
		return;
	if (s->n_win) {
		struct gs_plan_window *last = &s->win[s->n_win - 1];
		if (last->offset + last->len == w.offset) {
			last->len += w.len;
			s->on_ppm += w.len;
			return;
		}
	}
	s->win[s->n_win++] = w;
	s->on_ppm += w.len;
}

/* A busy guarantee tenant may also run in idle tenants' windows and in
 * the unowned tail; everyone else only in its own window. */
static bool may_borrow(const struct gs_plan_tenant *t)
{
	return t->mode == GS_SM_MODE_GUARANTEE && t->busy;
}

int gs_plan_make(const struct gs_plan_tenant *t, uint32_t n, struct gs_plan *plan)
{
	uint32_t pos = 0;

	memset(plan, 0, sizeof(*plan));
	if (n > GS_PLAN_MAX_TENANTS || (n && !t))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (!tenant_valid(&t[i]))
			return -1;
	plan->asked_percent = asked_sum(t, n);
	plan->oversubscribed = plan->asked_percent > PERCENT_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len = gs_plan_share_ppm(t, n, i);
		plan->slot[i].id = t[i].id;
		plan->slot[i].own = (struct gs_plan_window){ pos, len };
		pos += len;
	}
	const struct gs_plan_window tail = { pos, GS_PLAN_PPM - pos };
	for (uint32_t i = 0; i < n; i++)
		if (plan->slot[i].own.len)
			plan->starts[plan->n_starts++] = plan->slot[i].own.offset;
	if (tail.len)
		plan->starts[plan->n_starts++] = tail.offset;
	for (uint32_t i = 0; i < n; i++) {
		struct gs_plan_slot *s = &plan->slot[i];
		for (uint32_t j = 0; j < n; j++)
			if (j == i || (may_borrow(&t[i]) && !t[j].busy))
				add_window(s, plan->slot[j].own);
		if (may_borrow(&t[i]))
			add_window(s, tail);
	}
	plan->n = n;
	return 0;
}

bool gs_plan_slot_on(const struct gs_plan_slot *s, uint32_t pos_ppm)
{
	for (uint32_t i = 0; i < s->n_win; i++)
		if (pos_ppm >= s->win[i].offset && pos_ppm - s->win[i].offset < s->win[i].len)
			return true;
	return false;
}

/* splitmix64: a fixed mix of (seed, k), the same in every process. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A constant of its own so the rotation does not follow the jitter. */
#define ROTATION_SALT 0x726f746174696f6eull   /* "rotation" */

uint32_t gs_plan_rotation_ppm(uint64_t seed, uint64_t k, const uint32_t *starts, uint32_t n)
{
	if (!n || !starts)
		return 0;
	uint32_t r = starts[mix64(seed ^ mix64(k ^ ROTATION_SALT)) % n];
	return r < GS_PLAN_PPM ? r : 0;
}

unsigned gs_plan_window_raw(struct gs_plan_window w, uint32_t rot, struct gs_plan_window out[2])
{
	if (!w.len)
		return 0;
	rot %= GS_PLAN_PPM;
	/* Plan position p is raw position p - rot, modulo the period. */
	uint32_t start = w.offset >= rot ? w.offset - rot : w.offset + (GS_PLAN_PPM - rot);
	if ((uint64_t)start + w.len <= GS_PLAN_PPM) {
		out[0] = (struct gs_plan_window){ start, w.len };
		return 1;
	}
	out[0] = (struct gs_plan_window){ start, GS_PLAN_PPM - start };
	out[1] = (struct gs_plan_window){ 0, w.len - (GS_PLAN_PPM - start) };
	return 2;
}

uint64_t gs_plan_period_ns(uint64_t base_ns, uint32_t jitter_ppm, uint64_t seed, uint64_t k)
{
	if (jitter_ppm >= GS_PLAN_PPM)
		jitter_ppm = GS_PLAN_PPM - 1;
	uint64_t span = 2ull * jitter_ppm + 1;           /* ppm values in +-jitter */
	uint64_t r = mix64(seed ^ mix64(k)) % span;      /* 0..2*jitter */
	uint64_t scale = GS_PLAN_PPM - jitter_ppm + r;   /* ppm of base */
	return (uint64_t)((unsigned __int128)base_ns * scale / GS_PLAN_PPM);
}
