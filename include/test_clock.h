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
 * when the duty threads sleep: it jumps to the instant one would wake at,
 * so every switch the fake sees happens exactly at the edge the
 * controller chose, whatever the machine does meanwhile, and the share the
 * fake counts is the controller's own schedule (tests/sm/run.sh and
 * multi.sh, the cases on the "test" clock).
 *
 * The file holds the clock, a 64-bit count of nanoseconds, and a slot per
 * duty thread that moves it (a participant: one per session's duty
 * thread, so that several sandboxes on one GPU share the clock,
 * tests/sm/multi.sh, the agent's containers in one process among them,
 * tests/agent/sm.sh; a slot names its process, which may hold several),
 * all read and moved with atomics (the processes map it shared). A
 * participant says where its sleep ends (wake) or that it is running
 * (wake 0); the clock moves only while every participant sleeps, and only
 * to the earliest wake: no participant ever finds the clock past the edge
 * it chose, however late the machine let it run. A participant that died
 * (its pid gone) is dropped. Time only moves forward.
 * It starts (the first process to map an empty file sets it)
 * GS_TEST_CLOCK_LEAD_NS after CLOCK_MONOTONIC: the ledger dates channels
 * and groups on this clock once the compute share has started (struct
 * ledger clock_ns), and whatever it dated on CLOCK_MONOTONIC before (a
 * channel made before gs_sm_start) lies far in this clock's past, so
 * that channel is settled (switched), never judged by a mix of the two
 * clocks' rates (tests/sm/escape.sh tests the settling grace on this
 * clock).
 */
#ifndef GPUSANDBOX_TEST_CLOCK_H
#define GPUSANDBOX_TEST_CLOCK_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define GS_TEST_CLOCK_LEAD_NS (3600ull * 1000000000ull)

#define GS_TEST_CLOCK_SLOTS   16
#define GS_TEST_CLOCK_POLL_NS 100000L   /* a participant's wait for the others */
#define GS_TEST_CLOCK_RUNNING 0ull      /* wake of a participant that runs */

typedef struct {
	_Atomic uint64_t now;
	_Atomic int32_t  pid[GS_TEST_CLOCK_SLOTS];    /* 0: a free slot */
	_Atomic uint64_t wake[GS_TEST_CLOCK_SLOTS];
	_Atomic uint32_t hold[GS_TEST_CLOCK_SLOTS];   /* holds in flight */
	_Atomic int32_t  mover;                       /* pid moving it, or 0 */
} gs_test_clock;

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
	atomic_compare_exchange_strong(&((gs_test_clock *)p)->now, &unset,
	                               (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	                                       GS_TEST_CLOCK_LEAD_NS);
	return (gs_test_clock *)p;
}

static inline uint64_t gs_test_clock_now(gs_test_clock *c)
{
	return atomic_load(&c->now);
}

/* A slot for the calling process, running; -1 when all are taken. */
static inline int gs_test_clock_join(gs_test_clock *c)
{
	for (int i = 0; i < GS_TEST_CLOCK_SLOTS; i++) {
		int32_t free_slot = 0;
		if (atomic_compare_exchange_strong(&c->pid[i], &free_slot, (int32_t)getpid())) {
			atomic_store(&c->wake[i], GS_TEST_CLOCK_RUNNING);
			atomic_store(&c->hold[i], 0);
			return i;
		}
	}
	return -1;
}

static inline void gs_test_clock_leave(gs_test_clock *c, int slot)
{
	atomic_store(&c->wake[slot], GS_TEST_CLOCK_RUNNING);
	atomic_store(&c->pid[slot], 0);
}

/* The participant in slot sleeps until t. */
static inline void gs_test_clock_sleep(gs_test_clock *c, int slot, uint64_t t)
{
	atomic_store(&c->wake[slot], t);
}

static inline bool gs_test_clock_pid_gone(int32_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/* The earliest wake if every participant sleeps and none holds the
 * clock, else 0; drops participants that died. */
static inline uint64_t gs_test_clock_first_wake(gs_test_clock *c)
{
	uint64_t first = UINT64_MAX;

	for (int i = 0; i < GS_TEST_CLOCK_SLOTS; i++) {
		int32_t pid = atomic_load(&c->pid[i]);
		if (!pid)
			continue;
		if (gs_test_clock_pid_gone(pid)) {
			atomic_store(&c->wake[i], GS_TEST_CLOCK_RUNNING);
			atomic_store(&c->hold[i], 0);
			atomic_compare_exchange_strong(&c->pid[i], &pid, 0);
			continue;
		}
		uint64_t w = atomic_load(&c->wake[i]);
		if (w == GS_TEST_CLOCK_RUNNING || atomic_load(&c->hold[i]))
			return 0;
		if (w < first)
			first = w;
	}
	return first == UINT64_MAX ? 0 : first;
}

/* Moves the clock to the earliest wake if every participant sleeps and
 * none holds it. One process moves it at a time (a mover that died is
 * dropped): gs_test_clock_hold waits for the move under way. */
static inline void gs_test_clock_try_advance(gs_test_clock *c)
{
	int32_t mover = 0;

	if (!atomic_compare_exchange_strong(&c->mover, &mover, (int32_t)getpid())) {
		if (gs_test_clock_pid_gone(mover))
			atomic_compare_exchange_strong(&c->mover, &mover, 0);
		return;
	}
	uint64_t now = atomic_load(&c->now), first = gs_test_clock_first_wake(c);
	if (first > now)
		atomic_compare_exchange_strong(&c->now, &now, first);
	atomic_store(&c->mover, 0);
}

/* The participant in slot holds the clock still until its release: when
 * this returns, no move is under way and none starts (a mover sets
 * mover before it reads the holds, and we count our hold before we read
 * mover: one of us sees the other). */
static inline void gs_test_clock_hold(gs_test_clock *c, int slot)
{
	const struct timespec poll = { 0, GS_TEST_CLOCK_POLL_NS };

	atomic_fetch_add(&c->hold[slot], 1);
	for (int32_t mover; (mover = atomic_load(&c->mover)) != 0;) {
		if (gs_test_clock_pid_gone(mover))
			atomic_compare_exchange_strong(&c->mover, &mover, 0);
		else
			nanosleep(&poll, NULL);
	}
}

static inline void gs_test_clock_release(gs_test_clock *c, int slot)
{
	atomic_fetch_sub(&c->hold[slot], 1);
}

/* Waits until the clock reaches the wake of the participant in slot
 * (moving it there when every participant sleeps), then runs. */
static inline void gs_test_clock_reach(gs_test_clock *c, int slot)
{
	const struct timespec poll = { 0, GS_TEST_CLOCK_POLL_NS };

	while (atomic_load(&c->now) < atomic_load(&c->wake[slot])) {
		gs_test_clock_try_advance(c);
		if (atomic_load(&c->now) < atomic_load(&c->wake[slot]))
			nanosleep(&poll, NULL);
	}
	atomic_store(&c->wake[slot], GS_TEST_CLOCK_RUNNING);
}

#endif
