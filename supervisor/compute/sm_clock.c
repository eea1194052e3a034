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

/* On the test's clock, a sleep of d takes d / TEST_CLOCK_PACE of real
 * time at least, so that the test's clock never runs faster than real
 * time: what of the supervisor keeps real time (the coordinator's poll and
 * heartbeats, a wait for the lock) keeps at least its rate on it. A loaded
 * machine only slows the test's clock down. */
#define TEST_CLOCK_PACE 1u
#define NS_PER_MS 1000000ull

static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static bool clock_chosen;
/* Set once, before any thread reads it (gs_sm_start, before the duty
 * thread starts), and kept for the process's life: the coordinator's
 * thread may read the clock until it is stopped. */
static gs_test_clock *test_clock;
/* This process's participant (test_clock.h): one duty thread. */
static int test_slot = -1;
/* Holds of it in flight (gs_sm_clock_hold), and whether the duty thread
 * stopped meanwhile: the slot is given up when the last hold ends, never
 * under one (a slot another process took would lose our release). */
static unsigned test_holds;
static bool test_leave_pending;

int gs_sm_clock_start(const char *path)
{
	int rc = 0;

	pthread_mutex_lock(&clock_lock);
	if (!clock_chosen && path) {
		test_clock = gs_test_clock_map(path);
		test_slot = test_clock ? gs_test_clock_join(test_clock) : -1;
		if (test_slot < 0)
			test_clock = NULL;
		rc = test_clock ? 0 : -1;
	}
	clock_chosen = true;
	pthread_mutex_unlock(&clock_lock);
	return rc;
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

void gs_sm_sleep_until(uint64_t t)
{
	if (!test_clock) {
		sleep_real_until(t);
		return;
	}
	uint64_t now = gs_test_clock_now(test_clock);
	if (t > now)
		sleep_real_until(gs_monotonic_ns() + (t - now) / TEST_CLOCK_PACE);
	gs_test_clock_sleep(test_clock, test_slot, t);
}

bool gs_sm_catch_up(void)
{
	if (!test_clock)
		return false;
	gs_test_clock_reach(test_clock, test_slot);
	return true;
}

void gs_sm_clock_stop(void)
{
	pthread_mutex_lock(&clock_lock);
	if (test_clock && test_slot >= 0 && test_holds)
		test_leave_pending = true;
	else if (test_clock && test_slot >= 0) {
		gs_test_clock_leave(test_clock, test_slot);
		test_slot = -1;
	}
	pthread_mutex_unlock(&clock_lock);
}

bool gs_sm_clock_hold(void)
{
	bool held = false;

	pthread_mutex_lock(&clock_lock);
	if (test_clock && test_slot >= 0 && !test_leave_pending) {
		gs_test_clock_hold(test_clock, test_slot);
		test_holds++;
		held = true;
	}
	pthread_mutex_unlock(&clock_lock);
	return held;
}

void gs_sm_clock_release(bool held)
{
	if (!held)
		return;
	pthread_mutex_lock(&clock_lock);
	gs_test_clock_release(test_clock, test_slot);
	if (!--test_holds && test_leave_pending) {
		gs_test_clock_leave(test_clock, test_slot);
		test_slot = -1;
		test_leave_pending = false;
	}
	pthread_mutex_unlock(&clock_lock);
}

void gs_sm_wait_ms(unsigned ms)
{
	sleep_real_until(gs_monotonic_ns() + (uint64_t)ms * NS_PER_MS);
}
