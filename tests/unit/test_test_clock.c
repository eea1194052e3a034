/* SPDX-License-Identifier: MIT */
/*
 * test_test_clock - include/test_clock.h, the clock the compute-share
 * tests share between processes: it moves only while every participant
 * sleeps, to the earliest wake, and never while one holds it
 * (gs_test_clock_hold: a workload call that may let channels run and the
 * switch after it happen at one instant, tests/sm/multi.sh
 * fight-churn-chan). Two participants of this process stand for two
 * tenants' duty threads.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test_clock.h"

#define STEP_NS 5000000ull

int main(void)
{
	char path[] = "/tmp/gs-test-clock-XXXXXX";
	int fd = mkstemp(path);
	gs_test_clock *c = fd >= 0 ? gs_test_clock_map(path) : NULL;

	CHECK(c != NULL);
	if (!c)
		return check_summary();
	int a = gs_test_clock_join(c), b = gs_test_clock_join(c);
	CHECK(a >= 0 && b >= 0 && a != b);
	uint64_t t0 = gs_test_clock_now(c);

	/* One runs: no move. */
	gs_test_clock_sleep(c, a, t0 + STEP_NS);
	gs_test_clock_try_advance(c);
	CHECK(gs_test_clock_now(c) == t0);
	/* Both sleep: to the earliest wake. */
	gs_test_clock_sleep(c, b, t0 + 2 * STEP_NS);
	gs_test_clock_try_advance(c);
	CHECK(gs_test_clock_now(c) == t0 + STEP_NS);
	/* a's process holds it (a call in flight) while both sleep: no
	 * move, even when b, another tenant, waits for its wake. */
	gs_test_clock_reach(c, a);
	gs_test_clock_sleep(c, a, t0 + 3 * STEP_NS);
	gs_test_clock_hold(c, a);
	gs_test_clock_try_advance(c);
	CHECK(gs_test_clock_now(c) == t0 + STEP_NS);
	/* Two holds: it stands still until the last ends. */
	gs_test_clock_hold(c, a);
	gs_test_clock_release(c, a);
	gs_test_clock_try_advance(c);
	CHECK(gs_test_clock_now(c) == t0 + STEP_NS);
	gs_test_clock_release(c, a);
	gs_test_clock_try_advance(c);
	CHECK(gs_test_clock_now(c) == t0 + 2 * STEP_NS);
	/* A mover that died does not stop the clock for good. */
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	atomic_store(&c->mover, (int32_t)p);
	gs_test_clock_try_advance(c);   /* drops the dead mover */
	gs_test_clock_reach(c, b);      /* b's wake: now */
	gs_test_clock_sleep(c, b, t0 + 4 * STEP_NS);
	gs_test_clock_try_advance(c);
	CHECK(gs_test_clock_now(c) == t0 + 3 * STEP_NS);
	CHECK(atomic_load(&c->mover) == 0);
	gs_test_clock_leave(c, a);
	gs_test_clock_leave(c, b);
	unlink(path);
	return check_summary();
}
