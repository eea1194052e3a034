/* SPDX-License-Identifier: MIT */
/*
 * test_plan.c - the compute-share planner (supervisor/compute/plan.c):
 * the plans for the shapes the coordinator meets (30/70, 50/50, 25/25/50,
 * both modes, idle tenants, oversubscription), and the invariants of
 * tests/lib/plan_invariants.h over every small combination.
 */
#include <string.h>

#include "check.h"
#include "../lib/plan_invariants.h"
#include "plan.h"

#define PPM_PCT (GS_PLAN_PPM / 100u)

static struct gs_plan_tenant tenant(uint32_t id, uint32_t pct, enum gs_sm_mode m, bool busy)
{
	return (struct gs_plan_tenant){ .id = id, .percent = pct, .mode = m, .busy = busy };
}

static void test_cap_pair(void)
{
	struct gs_plan_tenant t[2] = { tenant(1, 30, GS_SM_MODE_CAP, true),
	                               tenant(2, 70, GS_SM_MODE_CAP, true) };
	struct gs_plan p;

	CHECK(gs_plan_make(t, 2, &p) == 0);
	CHECK(plan_invariant_violation(t, 2, &p) == NULL);
	CHECK(p.slot[0].own.offset == 0 && p.slot[0].own.len == 30 * PPM_PCT);
	CHECK(p.slot[1].own.offset == 30 * PPM_PCT && p.slot[1].own.len == 70 * PPM_PCT);
	CHECK(p.slot[0].n_win == 1 && p.slot[0].on_ppm == 30 * PPM_PCT);
	CHECK(!p.oversubscribed && p.asked_percent == 100);
	CHECK(gs_plan_slot_on(&p.slot[0], 0) && !gs_plan_slot_on(&p.slot[0], 30 * PPM_PCT));
	CHECK(gs_plan_slot_on(&p.slot[1], 30 * PPM_PCT) && !gs_plan_slot_on(&p.slot[1], 30 * PPM_PCT - 1));
}

/* Cap mode: an idle neighbour lends nothing. */
static void test_cap_idle_lends_nothing(void)
{
	struct gs_plan_tenant t[3] = { tenant(1, 25, GS_SM_MODE_CAP, true),
	                               tenant(2, 25, GS_SM_MODE_CAP, false),
	                               tenant(3, 50, GS_SM_MODE_CAP, true) };
	struct gs_plan p;

	CHECK(gs_plan_make(t, 3, &p) == 0);
	CHECK(plan_invariant_violation(t, 3, &p) == NULL);
	CHECK(p.slot[0].on_ppm == 25 * PPM_PCT && p.slot[2].on_ppm == 50 * PPM_PCT);
}

/* Guarantee: the idle tenant's window and the unowned tail are lent to the
 * busy ones; the idle owner keeps running in its own window. */
static void test_guarantee_lends_idle(void)
{
	struct gs_plan_tenant t[3] = { tenant(1, 25, GS_SM_MODE_GUARANTEE, true),
	                               tenant(2, 25, GS_SM_MODE_GUARANTEE, false),
	                               tenant(3, 40, GS_SM_MODE_GUARANTEE, true) };
	struct gs_plan p;

	CHECK(gs_plan_make(t, 3, &p) == 0);
	CHECK(plan_invariant_violation(t, 3, &p) == NULL);
	/* 25 own + 25 lent + 10 tail; 40 own + 25 lent + 10 tail. */
	CHECK(p.slot[0].on_ppm == 60 * PPM_PCT);
	CHECK(p.slot[2].on_ppm == 75 * PPM_PCT);
	CHECK(p.slot[1].on_ppm == 25 * PPM_PCT && p.slot[1].n_win == 1);
	CHECK(gs_plan_slot_on(&p.slot[0], 30 * PPM_PCT) && gs_plan_slot_on(&p.slot[2], 30 * PPM_PCT));
	CHECK(gs_plan_slot_on(&p.slot[0], 95 * PPM_PCT) && !gs_plan_slot_on(&p.slot[1], 95 * PPM_PCT));
	/* Tenant 1's own window [0,25) adjoins the lent one [25,50): merged. */
	CHECK(p.slot[0].n_win == 2 && p.slot[0].win[0].len == 50 * PPM_PCT);
}

/* A lone busy guarantee tenant gets the whole period. */
static void test_guarantee_alone(void)
{
	struct gs_plan_tenant t[1] = { tenant(7, 30, GS_SM_MODE_GUARANTEE, true) };
	struct gs_plan p;

	CHECK(gs_plan_make(t, 1, &p) == 0);
	CHECK(p.slot[0].on_ppm == GS_PLAN_PPM && p.slot[0].n_win == 1);
	t[0].mode = GS_SM_MODE_CAP;
	CHECK(gs_plan_make(t, 1, &p) == 0);
	CHECK(p.slot[0].on_ppm == 30 * PPM_PCT);
}

/* 60 + 60 + 30 = 150: each share scaled by 100/150. */
static void test_oversubscribed(void)
{
	struct gs_plan_tenant t[3] = { tenant(1, 60, GS_SM_MODE_GUARANTEE, true),
	                               tenant(2, 60, GS_SM_MODE_CAP, true),
	                               tenant(3, 30, GS_SM_MODE_GUARANTEE, true) };
	struct gs_plan p;

	CHECK(gs_plan_make(t, 3, &p) == 0);
	CHECK(plan_invariant_violation(t, 3, &p) == NULL);
	CHECK(p.oversubscribed && p.asked_percent == 150);
	CHECK(p.slot[0].own.len == 400000 && p.slot[1].own.len == 400000 && p.slot[2].own.len == 200000);
	CHECK(p.slot[2].own.offset + p.slot[2].own.len <= GS_PLAN_PPM);
}

static void test_invalid(void)
{
	struct gs_plan_tenant t[1] = { tenant(1, 0, GS_SM_MODE_CAP, true) };
	struct gs_plan p;

	CHECK(gs_plan_make(t, 1, &p) == -1 && p.n == 0);
	t[0].percent = 101;
	CHECK(gs_plan_make(t, 1, &p) == -1);
	t[0].percent = 50;
	t[0].mode = (enum gs_sm_mode)7;
	CHECK(gs_plan_make(t, 1, &p) == -1);
	CHECK(gs_plan_make(t, GS_PLAN_MAX_TENANTS + 1, &p) == -1);
	CHECK(gs_plan_make(NULL, 0, &p) == 0 && p.n == 0);
}

/* Every combination of up to three tenants over a grid of percents, modes
 * and busy flags satisfies the invariants. */
static void test_invariants_grid(void)
{
	static const uint32_t pcts[] = { 1, 10, 25, 30, 33, 50, 70, 99, 100 };
	const uint32_t np = sizeof(pcts) / sizeof(pcts[0]);
	unsigned bad = 0, plans = 0;

	for (uint32_t n = 1; n <= 3; n++) {
		uint32_t combos = 1;
		for (uint32_t i = 0; i < n; i++)
			combos *= np * 4;
		for (uint32_t c = 0; c < combos; c++) {
			struct gs_plan_tenant t[3];
			uint32_t x = c;
			for (uint32_t i = 0; i < n; i++) {
				t[i] = tenant(i + 1, pcts[x % np], (x / np) % 2 ? GS_SM_MODE_GUARANTEE : GS_SM_MODE_CAP,
				              (x / np / 2) % 2);
				x /= np * 4;
			}
			struct gs_plan p;
			if (gs_plan_make(t, n, &p) != 0 || plan_invariant_violation(t, n, &p))
				bad++;
			plans++;
		}
	}
	CHECK(plans > 10000 && bad == 0);
}

static void test_period_jitter(void)
{
	const uint64_t base = 20000000;  /* 20 ms */
	uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
	const unsigned k_max = 10000;

	for (unsigned k = 0; k < k_max; k++) {
		uint64_t len = gs_plan_period_ns(base, 250000, 42, k);
		CHECK(len == gs_plan_period_ns(base, 250000, 42, k));  /* the same everywhere */
		lo = len < lo ? len : lo;
		hi = len > hi ? len : hi;
		sum += len;
	}
	CHECK(lo >= base * 3 / 4 && hi <= base * 5 / 4);
	CHECK(lo < base * 4 / 5 && hi > base * 6 / 5);   /* it does vary */
	CHECK(sum / k_max > base * 99 / 100 && sum / k_max < base * 101 / 100);
	CHECK(gs_plan_period_ns(base, 0, 42, 3) == base);
	CHECK(gs_plan_period_ns(base, 250000, 42, 1) != gs_plan_period_ns(base, 250000, 43, 1) ||
	      gs_plan_period_ns(base, 250000, 42, 2) != gs_plan_period_ns(base, 250000, 43, 2));
}

/* The rotation: one of the plan's starts, the same everywhere, each as
 * often; no own window is cut by it; a window's raw pieces cover exactly
 * its length, never past the period, and map back onto the window. */
static void test_rotation(void)
{
	const struct gs_plan_tenant t[3] = {
		{ .id = 1, .percent = 25, .mode = GS_SM_MODE_CAP, .busy = true },
		{ .id = 2, .percent = 25, .mode = GS_SM_MODE_GUARANTEE, .busy = false },
		{ .id = 3, .percent = 40, .mode = GS_SM_MODE_GUARANTEE, .busy = true },
	};
	const unsigned k_max = 20000;
	unsigned hist[GS_PLAN_MAX_STARTS] = { 0 };
	struct gs_plan plan;

	CHECK(gs_plan_make(t, 3, &plan) == 0);
	/* Three own windows and the 10 % tail. */
	CHECK(plan.n_starts == 4 && plan.starts[0] == 0 && plan.starts[1] == 250000 &&
	      plan.starts[2] == 500000 && plan.starts[3] == 900000);
	for (unsigned k = 0; k < k_max; k++) {
		uint32_t r = gs_plan_rotation_ppm(42, k, plan.starts, plan.n_starts);
		unsigned which = 0;
		while (which < plan.n_starts && plan.starts[which] != r)
			which++;
		CHECK(which < plan.n_starts && r == gs_plan_rotation_ppm(42, k, plan.starts, plan.n_starts));
		hist[which < plan.n_starts ? which : 0]++;
		struct gs_plan_window out[2];
		for (unsigned i = 0; i < plan.n; i++)
			CHECK(gs_plan_window_raw(plan.slot[i].own, r, out) == 1);
	}
	for (unsigned b = 0; b < plan.n_starts; b++)   /* 5000 expected each */
		CHECK(hist[b] > 4500 && hist[b] < 5500);
	/* The invariant catches a start that would cut a window. */
	CHECK(plan_invariant_violation(t, 3, &plan) == NULL);
	struct gs_plan bad = plan;
	bad.starts[1] = 100000;
	CHECK(plan_invariant_violation(t, 3, &bad) != NULL);
	CHECK(gs_plan_rotation_ppm(42, 1, plan.starts, plan.n_starts) !=
	              gs_plan_rotation_ppm(43, 1, plan.starts, plan.n_starts) ||
	      gs_plan_rotation_ppm(42, 2, plan.starts, plan.n_starts) !=
	              gs_plan_rotation_ppm(43, 2, plan.starts, plan.n_starts) ||
	      gs_plan_rotation_ppm(42, 3, plan.starts, plan.n_starts) !=
	              gs_plan_rotation_ppm(43, 3, plan.starts, plan.n_starts));
	CHECK(gs_plan_rotation_ppm(42, 1, NULL, 0) == 0);
	CHECK(gs_plan_make(NULL, 0, &plan) == 0 && plan.n_starts == 1 && plan.starts[0] == 0);

	struct gs_plan_window w = { 300000, 400000 }, out[2];
	CHECK(gs_plan_window_raw(w, 0, out) == 1 && out[0].offset == 300000 && out[0].len == 400000);
	CHECK(gs_plan_window_raw(w, 100000, out) == 1 && out[0].offset == 200000 && out[0].len == 400000);
	/* Rotated by 500000: plan 300000..700000 is raw 800000..1000000 and 0..200000. */
	CHECK(gs_plan_window_raw(w, 500000, out) == 2 && out[0].offset == 800000 &&
	      out[0].len == 200000 && out[1].offset == 0 && out[1].len == 200000);
	CHECK(gs_plan_window_raw((struct gs_plan_window){ 0, 0 }, 5, out) == 0);
	for (uint32_t rot = 0; rot < GS_PLAN_PPM; rot += 7919) {
		uint32_t len = 0;
		unsigned n = gs_plan_window_raw(w, rot, out);
		for (unsigned i = 0; i < n; i++) {
			len += out[i].len;
			CHECK((uint64_t)out[i].offset + out[i].len <= GS_PLAN_PPM);
			uint32_t back = (uint32_t)(((uint64_t)out[i].offset + rot) % GS_PLAN_PPM);
			CHECK(back >= w.offset && back < w.offset + w.len);
		}
		CHECK(len == w.len);
	}
}

int main(void)
{
	test_cap_pair();
	test_cap_idle_lends_nothing();
	test_guarantee_lends_idle();
	test_guarantee_alone();
	test_oversubscribed();
	test_invalid();
	test_invariants_grid();
	test_period_jitter();
	test_rotation();
	return check_summary();
}
