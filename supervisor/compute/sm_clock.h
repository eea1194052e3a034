/* SPDX-License-Identifier: MIT */
/*
 * sm_clock.h - the clock the compute share (--sm) times its duty cycle,
 * its windows and its samples with: CLOCK_MONOTONIC, or in the test build
 * the test's clock (include/test_clock.h) under GPUSANDBOX_TEST_SM_CLOCK,
 * which moves only when the duty thread sleeps, so that the tests can
 * judge a share of GPU time without the machine's load in it. The
 * session's ledger dates channels and groups on it too (gs_sm_start sets
 * struct ledger clock_ns), so their settling time is of the same clock.
 * The clock is process-wide (the GPUs' samplers, sampler.c, are shared
 * by the process's sessions); each session's duty thread is a
 * participant of its own (struct gs_sm_clock_part).
 */
#ifndef GPUSANDBOX_SM_CLOCK_H
#define GPUSANDBOX_SM_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* A duty thread's part in the test's clock (test_clock.h: a participant,
 * whose sleep the clock waits for): one per session, since a process may
 * run several (the agent runs one per container). Zeroed with its
 * session; gs_sm_clock_join sets it up. Its fields are sm_clock.c's. */
struct gs_sm_clock_part {
	int      slot;            /* the clock's slot, or -1: none */
	unsigned holds;           /* gs_sm_clock_hold in flight */
	bool     leave_pending;   /* stopped under a hold: leave at its end */
};

/* Uses the test's clock in the file at path from now on (the first call
 * decides; path NULL: CLOCK_MONOTONIC). -1 when the file cannot be used. */
int      gs_sm_clock_start(const char *path);
/* The calling session's duty thread becomes a participant of the test's
 * clock (nothing on CLOCK_MONOTONIC). -1 when the clock has no slot left. */
int      gs_sm_clock_join(struct gs_sm_clock_part *p);
/* Is it the test's clock? */
bool     gs_sm_on_test_clock(void);
/* Now, in nanoseconds. */
uint64_t gs_sm_now(void);
/* Sleeps until t. On the test's clock: as long in real time (it never
 * runs faster than real time), then says it sleeps until t; the clock gets
 * there at the next gs_sm_catch_up. */
void     gs_sm_sleep_until(struct gs_sm_clock_part *p, uint64_t t);
/* On the test's clock: waits until it reaches where the last sleep
 * ended (moving it there once every participant sleeps, test_clock.h),
 * and says so (true). Called with the sandbox lock held, so that this
 * session never finds the clock moved while a workload call was in its
 * hands, but while the call waits on the workload's own memory (its
 * stall, compute_share.c lockless_wait). On CLOCK_MONOTONIC: false,
 * nothing done. */
bool     gs_sm_catch_up(struct gs_sm_clock_part *p);
/* The duty thread stopped: it no longer holds the test's clock back (the
 * clock is still read); its slot is given up (after the last hold). */
void     gs_sm_clock_stop(struct gs_sm_clock_part *p);
/* On the test's clock: holds it still (test_clock.h) until the matching
 * gs_sm_clock_release, even while the session's duty thread sleeps; says
 * whether it did (false on CLOCK_MONOTONIC or once the duty thread
 * stopped). Around a workload call that may let channels run and the
 * switch that follows it (compute_share.c), so that they happen at one
 * instant of the clock every sandbox on the GPU shares. */
bool     gs_sm_clock_hold(struct gs_sm_clock_part *p);
void     gs_sm_clock_release(struct gs_sm_clock_part *p, bool held);
/* Waits ms of real time, the test's clock standing still: a wait for the
 * sandbox lock is the supervisor's time, not the GPU's, so that a
 * workload call holding the lock moves no phase edge on the test's clock. */
void     gs_sm_wait_ms(unsigned ms);

#endif
