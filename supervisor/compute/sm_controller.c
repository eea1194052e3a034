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
