/* SPDX-License-Identifier: MIT */
/*
 * sm_clock.c - the compute share's clock (sm_clock.h).
 *
 * Security: the test's clock is a file shared with the test, and so
 * perhaps with the workload: whoever writes it decides when the duty
 * cycle's phases end. It is only ever used in the test build (its switch
 * reads as unset in the binary `make install` ships, test_switch.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "gpusandbox.h"
#include "sm_clock.h"
#include "test_clock.h"
#include "workload.h"

/* On the test's clock, a sleep of d takes d / TEST_CLOCK_PACE of real
 * time at least, so that the test's clock never runs faster than real
 * time: what of the supervisor keeps real time (the coordinator's poll and
 * heartbeats, a wait for the lock) keeps at least its rate on it. A loaded
 * machine only slows the test's clock down. */
#define TEST_CLOCK_PACE 1u
#define NS_PER_MS 1000000ull

/* Guards the choice and every participant's fields (struct
 * gs_sm_clock_part): a hold comes from a notify worker, a stop from the
 * session's end, a sleep from its duty thread. */
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static bool clock_chosen;
/* Set once, before any thread reads it (gs_sm_start, before the duty
 * thread starts), and kept for the process's life: the coordinator's
 * thread may read the clock until it is stopped. */
static gs_test_clock *test_clock;

int gs_sm_clock_start(const char *path)
{
	int rc = 0;

	pthread_mutex_lock(&clock_lock);
	if (!clock_chosen && path) {
		test_clock = gs_test_clock_map(path);
		rc = test_clock ? 0 : -1;
		if (test_clock)
			gs_workload_count_mem_accesses();
	}
	clock_chosen = true;
	pthread_mutex_unlock(&clock_lock);
	return rc;
}

int gs_sm_clock_join(struct gs_sm_clock_part *p)
{
	pthread_mutex_lock(&clock_lock);
	*p = (struct gs_sm_clock_part){ .slot = test_clock ? gs_test_clock_join(test_clock) : -1 };
	pthread_mutex_unlock(&clock_lock);
	return test_clock && p->slot < 0 ? -1 : 0;
}

bool gs_sm_on_test_clock(void)
{
	return test_clock != NULL;
}

uint64_t gs_sm_now(void)
{
	return test_clock ? gs_test_clock_now(test_clock) : gs_monotonic_ns();
}

static void sleep_real_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / GS_NS_PER_S), (long)(t % GS_NS_PER_S) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void gs_sm_sleep_until(struct gs_sm_clock_part *p, uint64_t t)
{
	if (!test_clock || p->slot < 0) {
		sleep_real_until(t);
		return;
	}
	uint64_t now = gs_test_clock_now(test_clock);
	if (t > now)
		sleep_real_until(gs_monotonic_ns() + (t - now) / TEST_CLOCK_PACE);
	gs_test_clock_sleep(test_clock, p->slot, t);
}

bool gs_sm_catch_up(struct gs_sm_clock_part *p)
{
	if (!test_clock || p->slot < 0)
		return false;
	gs_test_clock_reach(test_clock, p->slot);
	return true;
}

void gs_sm_clock_stop(struct gs_sm_clock_part *p)
{
	pthread_mutex_lock(&clock_lock);
	if (test_clock && p->slot >= 0 && p->holds)
		p->leave_pending = true;
	else if (test_clock && p->slot >= 0) {
		gs_test_clock_leave(test_clock, p->slot);
		p->slot = -1;
	}
	pthread_mutex_unlock(&clock_lock);
}

bool gs_sm_clock_hold(struct gs_sm_clock_part *p)
{
	bool held = false;

	pthread_mutex_lock(&clock_lock);
	if (test_clock && p->slot >= 0 && !p->leave_pending) {
		gs_test_clock_hold(test_clock, p->slot);
		p->holds++;
		held = true;
	}
	pthread_mutex_unlock(&clock_lock);
	return held;
}

void gs_sm_clock_release(struct gs_sm_clock_part *p, bool held)
{
	if (!held)
		return;
	pthread_mutex_lock(&clock_lock);
	gs_test_clock_release(test_clock, p->slot);
	if (!--p->holds && p->leave_pending) {
		gs_test_clock_leave(test_clock, p->slot);
		p->slot = -1;
		p->leave_pending = false;
	}
	pthread_mutex_unlock(&clock_lock);
}

void gs_sm_wait_ms(unsigned ms)
{
	sleep_real_until(gs_monotonic_ns() + (uint64_t)ms * NS_PER_MS);
}
