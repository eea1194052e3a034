/* SPDX-License-Identifier: MIT */
#include "sm_controller.h"

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void sm_ctl_init(struct sm_controller *c, double target)
{
	c->target = clamp(target, SM_DUTY_MIN, 1.0);
	/* Open-loop first guess: the share equals the duty. */
	c->duty = c->target;
	c->updates = 0;
}

double sm_ctl_update(struct sm_controller *c, double measured_share)
{
	double s = clamp(measured_share, 0.0, 1.0);
	double step = SM_CTL_GAIN * (c->target - s);

	/* An idle window (the workload had nothing to run) may only raise the
	 * duty: lowering it would punish the next burst for the idle time. */
	if (s < SM_IDLE_SHARE && step < 0)
		step = 0;
	c->duty = clamp(c->duty + step, SM_DUTY_MIN, 1.0);
	c->updates++;
	return c->duty;
}

bool sm_ctl_throttling(const struct sm_controller *c)
{
	return c->duty < 1.0;
}

/* Brings the budget to now: the time spared since the last pass is spent,
 * the time passed refills it. */
static void grace_advance(struct sm_grace *g, uint64_t now_ns)
{
	if (now_ns <= g->at_ns)
		return;
	/* Differences of CLOCK_MONOTONIC instants: far below INT64_MAX. */
	int64_t refill = (int64_t)((now_ns - g->at_ns) / SM_GRACE_REFILL_DIV);
	g->left_ns = g->left_ns + refill > SM_GRACE_BUDGET_NS ? SM_GRACE_BUDGET_NS : g->left_ns + refill;
	if (g->sparing_ns && now_ns > g->sparing_ns) {
		uint64_t spent = now_ns - g->sparing_ns;
		g->left_ns -= (int64_t)spent;
		g->spent_ns += spent;
		g->sparing_ns = now_ns;
	}
	g->at_ns = now_ns;
}

void sm_grace_init(struct sm_grace *g, uint64_t now_ns)
{
	*g = (struct sm_grace){ .left_ns = SM_GRACE_BUDGET_NS, .at_ns = now_ns };
}

bool sm_grace_may_spare(struct sm_grace *g, uint64_t now_ns)
{
	grace_advance(g, now_ns);
	return g->left_ns > 0;
}

void sm_grace_note(struct sm_grace *g, bool spared, uint64_t now_ns)
{
	grace_advance(g, now_ns);
	if (!spared)
		g->sparing_ns = 0;
	else if (!g->sparing_ns)
		g->sparing_ns = now_ns;
}
