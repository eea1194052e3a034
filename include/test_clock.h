/* SPDX-License-Identifier: MIT */
/*
 * test_clock.h - a clock the compute-share tests keep, shared through a
 * file by the fake driver, the supervisor's --sm thread and the test's
 * workload (test build only: the supervisor maps it only under the test
 * switch GPUSANDBOX_TEST_SM_CLOCK, include/test_switch.h).
 *
 * Why: the --sm tests judge a share of GPU time from the fake's busy
 * account, and on a loaded CI machine the duty thread wakes late, so a
 * share measured on CLOCK_MONOTONIC strays by the machine's load, not by
 * the controller (0.572 for 0.50 seen). On this clock time moves only
 * when the duty thread sleeps: it jumps to the instant the thread would
 * wake at, so every switch the fake sees happens exactly at the edge the
 * controller chose, whatever the machine does meanwhile, and the share the
 * fake counts is the controller's own schedule (tests/sm/run.sh, the
 * "exact" cases).
 *
 * The file holds one 64-bit count of nanoseconds, read and moved with
 * atomics (the three processes map it shared). Time only moves forward.
 * It starts (the first process to map an empty file sets it)
 * GS_TEST_CLOCK_LEAD_NS after CLOCK_MONOTONIC: whatever the supervisor
 * stamped on CLOCK_MONOTONIC (a channel's birth, which its settling grace
 * is measured from) lies far in this clock's past, so that grace never
 * mixes the two clocks' rates (tests/sm/escape.sh tests the grace on
 * the real clock).
 */
#ifndef GPUSANDBOX_TEST_CLOCK_H
#define GPUSANDBOX_TEST_CLOCK_H

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define GS_TEST_CLOCK_LEAD_NS (3600ull * 1000000000ull)

typedef _Atomic uint64_t gs_test_clock;

/* The clock kept in the file at path (made 8 bytes long if it is
 * shorter), or NULL. */
static inline gs_test_clock *gs_test_clock_map(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return NULL;
	if (lseek(fd, 0, SEEK_END) < (off_t)sizeof(gs_test_clock) && ftruncate(fd, sizeof(gs_test_clock)) < 0) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, sizeof(gs_test_clock), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	struct timespec ts;
	uint64_t unset = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	atomic_compare_exchange_strong((gs_test_clock *)p, &unset,
	                               (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	                                       GS_TEST_CLOCK_LEAD_NS);
	return (gs_test_clock *)p;
}

static inline uint64_t gs_test_clock_now(gs_test_clock *c)
{
	return atomic_load(c);
}

/* Moves the clock to t, unless it is already there or past it. */
static inline void gs_test_clock_advance(gs_test_clock *c, uint64_t t)
{
	uint64_t cur = atomic_load(c);

	while (cur < t && !atomic_compare_exchange_weak(c, &cur, t))
		;
}

#endif
