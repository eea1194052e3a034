/* SPDX-License-Identifier: MIT */
/*
 * plan.h - the compute-share planner: given the tenants of one GPU, which
 * part of every period each of them may run in. Pure: no I/O, no clocks,
 * no globals, so that tests/unit and the fuzz target can check its
 * invariants over any input.
 *
 * Times are in parts per million of the period (ppm), so one plan serves
 * every period whatever its (jittered) length.
 *
 * The plan, for tenants in the order given:
 * - Shares. Each tenant asks for `percent` of the GPU's time. If the asks
 *   sum over 100 (oversubscription) every share is scaled by 100 / sum:
 *   nobody's share wins over another's, and gs_plan_make says so in
 *   plan->oversubscribed (the coordinator warns and audits it).
 * - Own windows. Every tenant, busy or idle, gets one window of its share,
 *   packed from the period's start in tenant order. Own windows never
 *   overlap: a tenant runs alone in its own window.
 * - Cap mode: a tenant's channels run only in its own window, so it never
 *   gets more than its share, whatever the others do.
 * - Guarantee mode: a busy tenant also runs in the time nobody owns (the
 *   period's tail when shares sum below 100) and in the windows of idle
 *   tenants. Lent time is shared, not taken: the idle owner still runs in
 *   its own window, so when it wakes up it runs at once (time-sliced with
 *   the borrowers until the next plan gives it its window back alone).
 *   A busy tenant therefore always has at least its own window alone: its
 *   guarantee holds whenever the shares sum to at most 100.
 */
#ifndef GPUSANDBOX_PLAN_H
#define GPUSANDBOX_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "quota.h"   /* enum gs_sm_mode */

#define GS_PLAN_PPM          1000000u
#define GS_PLAN_MAX_TENANTS  16u
/* A tenant's windows: its own, the unowned tail, and one per idle tenant
 * it may borrow from (merged when adjacent). */
#define GS_PLAN_MAX_WINDOWS  (GS_PLAN_MAX_TENANTS + 1u)

struct gs_plan_tenant {
	uint32_t        id;
	uint32_t        percent;  /* 1..100 */
	enum gs_sm_mode mode;
	bool            busy;     /* used the GPU in the last measurement window */
};

struct gs_plan_window {
	uint32_t offset, len;     /* ppm of the period */
};

struct gs_plan_slot {
	uint32_t              id;
	struct gs_plan_window own;                 /* alone */
	struct gs_plan_window win[GS_PLAN_MAX_WINDOWS]; /* all it may run in, own included */
	uint32_t              n_win;
	uint32_t              on_ppm;              /* sum of win[]: its cap this plan */
};

/* The places a period may start at (gs_plan_rotation_ppm): every own
 * window's start, and the unowned tail's. */
#define GS_PLAN_MAX_STARTS   (GS_PLAN_MAX_TENANTS + 1u)

struct gs_plan {
	uint32_t            n;
	struct gs_plan_slot slot[GS_PLAN_MAX_TENANTS];
	uint32_t            starts[GS_PLAN_MAX_STARTS];   /* ppm, increasing */
	uint32_t            n_starts;
	uint32_t            asked_percent;   /* sum of the asks */
	bool                oversubscribed;  /* asked_percent > 100: shares scaled */
};

/* Fills plan for n tenants (n <= GS_PLAN_MAX_TENANTS, percents 1..100);
 * -1 on invalid input, with plan->n = 0. */
int gs_plan_make(const struct gs_plan_tenant *t, uint32_t n, struct gs_plan *plan);

/* The share a tenant may count on (ppm): its own window. */
uint32_t gs_plan_share_ppm(const struct gs_plan_tenant *t, uint32_t n, uint32_t i);

/* Period k's length from the base period, drawn within +-jitter_ppm of it
 * from (seed, k) alone, so that every supervisor following one plan
 * computes the same period boundaries. The driver's utilization samples
 * come at a fixed rate: with a fixed period they would meet the same
 * tenant every time. */
uint64_t gs_plan_period_ns(uint64_t base_ns, uint32_t jitter_ppm, uint64_t seed, uint64_t k);

/* Period k's rotation (ppm), drawn from (seed, k) alone like its length:
 * one of the plan's starts (every own window's start, the tail's), so
 * that no window is cut. Period k's raw position x (ppm from its start)
 * is plan position (x + rotation) mod GS_PLAN_PPM, for every tenant
 * alike, so the windows stay disjoint. Why: the driver's utilization
 * samples come at a fixed rate, and with windows at a fixed place in
 * every period a sample's place in the plan only random-walks with the
 * jitter; at a period near the sample interval, several samples in a row
 * then miss a busy tenant's window far more often than the counted idle
 * rule's (1 - w)^n assumes (tests/unit/test_idle_rule simulates it).
 * Rotated, a 50/50 plan puts a sample in either window with probability
 * 1/2 in every period, whatever the last one did. A rotation inside a
 * window would spread the samples evenly for any shares, but cuts that
 * window in two: one more switch (~1.2 ms on an H100) per period, which
 * cost 30/70, 50/50 and 25/25/50 about 1.3 points of their sums on the
 * H100 (docs/compute-share.md). Where a period's last window and the
 * next period's first are one tenant's, its channels are not switched
 * at all. 0 when n is 0. */
uint32_t gs_plan_rotation_ppm(uint64_t seed, uint64_t k, const uint32_t *starts, uint32_t n);

/* The raw pieces (ppm of the period, at most 2) of plan window w in a
 * period rotated by rot; returns how many. */
unsigned gs_plan_window_raw(struct gs_plan_window w, uint32_t rot, struct gs_plan_window out[2]);

/* Is position pos (ppm of the period) inside one of slot's windows? */
bool gs_plan_slot_on(const struct gs_plan_slot *s, uint32_t pos_ppm);

#endif
