/* SPDX-License-Identifier: MIT */
/*
 * plan_invariants.h - what every compute-share plan must satisfy, checked
 * by tests/unit/test_plan.c over chosen inputs and by
 * tests/fuzz/fuzz_plan.c over any input. Returns NULL when the plan holds,
 * else what is wrong.
 */
#ifndef GPUSANDBOX_PLAN_INVARIANTS_H
#define GPUSANDBOX_PLAN_INVARIANTS_H

#include "plan.h"

static inline uint64_t plan_inv_end(struct gs_plan_window w)
{
	return (uint64_t)w.offset + w.len;
}

static inline const char *plan_invariant_violation(const struct gs_plan_tenant *t, uint32_t n,
                                                   const struct gs_plan *p)
{
	uint64_t asked = 0;

	if (p->n != n)
		return "plan has a slot count other than the tenants'";
	for (uint32_t i = 0; i < n; i++)
		asked += t[i].percent;
	if (p->oversubscribed != (asked > 100))
		return "oversubscription flag disagrees with the asks";
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_plan_slot *s = &p->slot[i];
		uint64_t on = 0;
		if (s->id != t[i].id)
			return "slot names another tenant";
		/* Inside the period. */
		if (plan_inv_end(s->own) > GS_PLAN_PPM)
			return "own window leaves the period";
		for (uint32_t w = 0; w < s->n_win; w++) {
			if (!s->win[w].len || plan_inv_end(s->win[w]) > GS_PLAN_PPM)
				return "a window is empty or leaves the period";
			if (w && s->win[w].offset < plan_inv_end(s->win[w - 1]))
				return "a tenant's windows overlap or are out of order";
			on += s->win[w].len;
		}
		if (on != s->on_ppm)
			return "on_ppm is not the sum of the windows";
		/* The own window is one of the windows it runs in. */
		if (s->own.len && (!gs_plan_slot_on(s, s->own.offset) ||
		                   !gs_plan_slot_on(s, (uint32_t)(plan_inv_end(s->own) - 1))))
			return "a tenant may not run in its own window";
		/* Own windows are disjoint. */
		for (uint32_t j = 0; j < i; j++) {
			const struct gs_plan_window a = s->own, b = p->slot[j].own;
			if (a.len && b.len && a.offset < plan_inv_end(b) && b.offset < plan_inv_end(a))
				return "two tenants' own windows overlap";
		}
		/* Cap mode: never more than the share asked. */
		if (t[i].mode == GS_SM_MODE_CAP && s->on_ppm > (uint64_t)t[i].percent * (GS_PLAN_PPM / 100))
			return "a capped tenant may run longer than its cap";
		/* Guarantees: a busy tenant's own window is its full ask when
		 * the asks fit, its ask scaled by 100 / sum (rounded down) when not. */
		uint64_t want = asked <= 100 ? (uint64_t)t[i].percent * (GS_PLAN_PPM / 100)
		                             : (uint64_t)t[i].percent * GS_PLAN_PPM / asked;
		if (s->own.len < want)
			return "a tenant's own window is shorter than its share";
		/* Nobody runs where a busy tenant runs alone, except the
		 * tenant itself: a busy owner's window is never lent. */
		for (uint32_t j = 0; j < n; j++) {
			if (j == i || !t[j].busy || !p->slot[j].own.len)
				continue;
			const struct gs_plan_window o = p->slot[j].own;
			for (uint32_t w = 0; w < s->n_win; w++)
				if (s->win[w].offset < plan_inv_end(o) && o.offset < plan_inv_end(s->win[w]))
					return "a tenant runs in a busy tenant's own window";
		}
	}
	/* The starts a period may be rotated to: increasing, within the
	 * period, and none inside an own window (no window is cut). */
	if (p->n_starts > GS_PLAN_MAX_STARTS)
		return "too many starts";
	for (uint32_t k = 0; k < p->n_starts; k++) {
		if (p->starts[k] >= GS_PLAN_PPM || (k && p->starts[k] <= p->starts[k - 1]))
			return "the starts are not increasing within the period";
		for (uint32_t i = 0; i < n; i++) {
			const struct gs_plan_window o = p->slot[i].own;
			if (p->starts[k] > o.offset && p->starts[k] < plan_inv_end(o))
				return "a start cuts an own window";
		}
	}
	return NULL;
}

#endif
