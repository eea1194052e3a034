/* SPDX-License-Identifier: MIT */
/*
 * sm_controller.h - the compute-share feedback law, kept free of the driver
 * and of time so that tests can drive it with a synthetic busy signal.
 *
 * The plant: with the workload's channels enabled for a fraction `duty` of
 * every period, the driver reports that it kept the GPU busy for a share
 * `s` of the time. For a compute-bound workload s is a little above duty
 * (work runs on until the preemption lands: 0.60 at duty 0.50 in
 * design.md 1.6); for a workload with idle gaps it is below. The law is an
 * integrator on the error, duty += gain * (target - s), clamped to
 * [SM_DUTY_MIN, 1]. For any plant s = a * duty + b with 0 < a < 2 the
 * error shrinks by a factor |1 - gain * a| per window; tests/unit checks
 * the convergence bound stated in sm_ctl_windows_bound().
 */
#ifndef GPUSANDBOX_SM_CONTROLLER_H
#define GPUSANDBOX_SM_CONTROLLER_H

#include <stdbool.h>

/* Integrator gain: below 1 so that one noisy window moves the duty by
 * less than its error. */
#define SM_CTL_GAIN 0.8
/* The duty never drops to zero: a context that never runs cannot finish
 * the work it was given, and the driver's own timeouts would fire. */
#define SM_DUTY_MIN 0.02
/* A window in which the workload kept the GPU busy less than this is idle:
 * it says nothing about the plant, so the duty moves only up. */
#define SM_IDLE_SHARE 0.005

struct sm_controller {
	double   target;   /* requested share, 0..1 */
	double   duty;     /* current fraction of each period with channels on */
	unsigned updates;  /* windows processed */
};

void   sm_ctl_init(struct sm_controller *c, double target);
/* Feeds the share measured over the last window; returns the new duty. */
double sm_ctl_update(struct sm_controller *c, double measured_share);
/* Is the current duty a real cap (below 1)? */
bool   sm_ctl_throttling(const struct sm_controller *c);

#endif
