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
#include <stdint.h>

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

/*
 * The settling grace, kept free of the driver and of the clock like the
 * law (callers pass the time; tests/unit drives it).
 *
 * A channel group's channels are not switched in its first settling time
 * after it was first scheduled: toggling during CUDA's context set-up hung
 * it (design.md 1.6). Granted per group, that exemption let a workload
 * that makes a fresh group more often than the settling time run through
 * every off phase (1.0 of the GPU under --sm 25, tests/sm/escape.sh
 * group-churn). So the exemption is a budget of one GPU's off-phase time:
 * it starts full, every off phase in which unsettled channels were left
 * running spends the time they were left, and it refills at
 * 1/SM_GRACE_REFILL_DIV of the time that passes, up to SM_GRACE_BUDGET_NS.
 * While it is above zero, new groups settle as before; at or below zero,
 * every channel is switched from birth. Whether to spare is decided at an
 * off pass for the whole off phase, so a phase may spend more than was
 * left: the budget goes into debt, which the refill pays back before the
 * next spare (otherwise each sliver of refill bought a whole off phase,
 * and a churning workload kept 1.0 of the GPU). A context's set-up, whatever number of groups
 * it makes at once, spends at most a settling time of it (the groups
 * settle side by side); a churning workload gets at most the budget once
 * plus 1/SM_GRACE_REFILL_DIV of the GPU's time over its cap.
 */
#define SM_GRACE_BUDGET_NS  1000000000ll  /* two settling times (500 ms) */
#define SM_GRACE_REFILL_DIV 50u            /* 2 % of the time that passes */

struct sm_grace {
	int64_t  left_ns;      /* budget left; below zero: debt */
	uint64_t at_ns;        /* when left_ns was last brought up to date */
	uint64_t sparing_ns;   /* unsettled channels left running since; 0: none */
	uint64_t spent_ns;     /* all spent, for the figures */
};

void sm_grace_init(struct sm_grace *g, uint64_t now_ns);
/* An off pass at now_ns: may unsettled channels be left running? */
bool sm_grace_may_spare(struct sm_grace *g, uint64_t now_ns);
/* After a pass at now_ns: whether it left unsettled channels running. An
 * on pass leaves none (its channels run anyway). */
void sm_grace_note(struct sm_grace *g, bool spared, uint64_t now_ns);

#endif
