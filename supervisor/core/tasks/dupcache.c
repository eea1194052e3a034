/* SPDX-License-Identifier: MIT */
/*
 * dupcache.c - a worker's kept dups of workload files and the janitor
 * that closes them when idle. Why this is sound: dupcache.h and
 * SECURITY.md ("The dup cache").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dupcache.h"
#include "gpusandbox.h"
#include "test_switch.h"

#define NS_PER_MS 1000000ull
#define NS_PER_SEC 1000000000ull
#define IDLE_NS (GS_DUP_CACHE_IDLE_MS * NS_PER_MS)

/* The janitor: one thread for the process, started with the first cache
 * attached, sleeping while no dup is parked or in use. Everything here is
 * under jan.lock; the workers' hot path touches only their own slots and
 * jan.idle (atomically). */
static struct {
	pthread_mutex_t      lock;
	pthread_cond_t       wake;
	struct gs_dup_cache *caches;
	bool                 started;
	/* Set (under lock) before the janitor waits with nothing to watch:
	 * a worker that parks a dup then wakes it. */
	atomic_bool          idle;
	/* GPUSANDBOX_TEST_DUPCACHE_NO_EXPIRY: parked dups are never closed
	 * for being idle, so that tests/adv dupcache_close shows what the
	 * bound prevents. */
	bool                 no_expiry;
} jan = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static pid_t self_pid;

/* Closes a parked dup, unless its worker took it meanwhile. */
static void close_if_parked(struct gs_dup_slot *s, int fd)
{
	if (fd >= 0 && atomic_compare_exchange_strong(&s->fd, &fd, GS_DUP_EMPTY))
		close(fd);
}

/* One sweep: closes the dups unused for the bound. Returns the instant of
 * the next one due (UINT64_MAX: none parked nor in use). Lock held. */
static uint64_t sweep(uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (struct gs_dup_cache *dc = jan.caches; dc; dc = dc->next)
		for (unsigned i = 0; i < GS_DUP_CACHE_SLOTS; i++) {
			struct gs_dup_slot *s = &dc->slot[i];
			int fd = atomic_load(&s->fd);
			uint64_t due = atomic_load(&s->parked_ns) + IDLE_NS;
			if (fd == GS_DUP_EMPTY || (fd >= 0 && jan.no_expiry))
				continue;
			/* In use: parked again soon, then due a bound later. */
			if (fd == GS_DUP_IN_USE)
				due = now + IDLE_NS;
			else if (due <= now) {
				close_if_parked(s, fd);
				continue;
			}
			if (due < next)
				next = due;
		}
	return next;
}

static void wait_until(uint64_t mono_ns)
{
	/* The condition's clock is CLOCK_MONOTONIC (janitor_start). */
	struct timespec ts = { (time_t)(mono_ns / NS_PER_SEC), (long)(mono_ns % NS_PER_SEC) };

	pthread_cond_timedwait(&jan.wake, &jan.lock, &ts);
}

static void *janitor(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&jan.lock);
	for (;;) {
		uint64_t next = sweep(gs_monotonic_ns());
		if (next != UINT64_MAX) {
			wait_until(next);
			continue;
		}
		/* Nothing to watch. Said before looking once more, so that a
		 * worker parking meanwhile either is seen here or sees idle
		 * and wakes us (both sides are sequentially consistent). */
		atomic_store(&jan.idle, true);
		if (sweep(gs_monotonic_ns()) == UINT64_MAX)
			pthread_cond_wait(&jan.wake, &jan.lock);
		atomic_store(&jan.idle, false);
	}
	return NULL;
}

/* Lock held. The janitor blocks every signal: those meant for the
 * workload stay for the main thread (as the runner's workers). */
static int janitor_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int rc;

	if (jan.started)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&jan.wake);
	pthread_cond_init(&jan.wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	self_pid = getpid();
	jan.no_expiry = gs_test_switch("GPUSANDBOX_TEST_DUPCACHE_NO_EXPIRY") != NULL;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, janitor, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		errno = rc;
		return -1;
	}
	jan.started = true;
	return 0;
}

int gs_dup_cache_attach(struct gs_dup_cache *dc, const void *owner)
{
	int rc;

	for (unsigned i = 0; i < GS_DUP_CACHE_SLOTS; i++) {
		atomic_init(&dc->slot[i].fd, GS_DUP_EMPTY);
		atomic_init(&dc->slot[i].parked_ns, 0);
		/* Nothing learned for another owner carries over (an empty
		 * slot's first take misses and clears it anyway). */
		dc->slot[i].fact_epoch = 0;
	}
	dc->owner = owner;
	dc->test_no_kcmp = gs_test_switch("GPUSANDBOX_TEST_DUPCACHE_NO_KCMP") != NULL;
	pthread_mutex_lock(&jan.lock);
	rc = janitor_start();
	if (rc == 0) {
		dc->next = jan.caches;
		jan.caches = dc;
		dc->attached = true;
	}
	pthread_mutex_unlock(&jan.lock);
	return rc;
}

void gs_dup_cache_detach(struct gs_dup_cache *dc)
{
	if (!dc->attached)
		return;
	pthread_mutex_lock(&jan.lock);
	for (struct gs_dup_cache **p = &jan.caches; *p; p = &(*p)->next)
		if (*p == dc) {
			*p = dc->next;
			break;
		}
	pthread_mutex_unlock(&jan.lock);
	/* Off the list: nobody else reaches the slots now. */
	for (unsigned i = 0; i < GS_DUP_CACHE_SLOTS; i++) {
		int fd = atomic_exchange(&dc->slot[i].fd, GS_DUP_EMPTY);
		if (fd >= 0)
			close(fd);
	}
	dc->attached = false;
}

static unsigned slot_of(pid_t tid, int wfd)
{
	uint32_t h = ((uint32_t)tid * 0x9e3779b1u) ^ ((uint32_t)wfd * 0x85ebca6bu);

	return (h >> 16) % GS_DUP_CACHE_SLOTS;
}

/* Does task tid's fd wfd name the open file our fd names, now? kcmp
 * compares the two struct file pointers: equal means the same open file,
 * which is all a fresh pidfd_getfd would have given us. */
static bool names_same_file(const struct gs_dup_cache *dc, pid_t tid, int wfd, int fd)
{
	if (dc->test_no_kcmp)
		return true;
	return syscall(SYS_kcmp, self_pid, tid, KCMP_FILE, fd, wfd) == 0;
}

int gs_dup_cache_take(struct gs_dup_cache *dc, pid_t tid, int wfd, int *slot)
{
	unsigned i = slot_of(tid, wfd);
	struct gs_dup_slot *s = &dc->slot[i];
	int fd;

	*slot = -1;
	if (!dc->attached)
		return -1;
	fd = atomic_exchange(&s->fd, GS_DUP_IN_USE);
	*slot = (int)i;
	if (fd >= 0 && s->tid == tid && s->wfd == wfd && names_same_file(dc, tid, wfd, fd))
		return fd;
	/* Another key's dup, or a file the number no longer names (closed,
	 * dup2'd over, or the tid is another task's now): let it go, and
	 * what was learned of it. */
	if (fd >= 0)
		close(fd);
	s->fact_epoch = 0;
	return -1;
}

void gs_dup_cache_park(struct gs_dup_cache *dc, int slot, int fd, pid_t tid, int wfd)
{
	struct gs_dup_slot *s = &dc->slot[slot];

	s->tid = tid;
	s->wfd = wfd;
	atomic_store(&s->parked_ns, gs_monotonic_ns());
	atomic_store(&s->fd, fd);
	if (atomic_load(&jan.idle)) {
		pthread_mutex_lock(&jan.lock);
		pthread_cond_signal(&jan.wake);
		pthread_mutex_unlock(&jan.lock);
	}
}

void gs_dup_cache_release(struct gs_dup_cache *dc, int slot)
{
	atomic_store(&dc->slot[slot].fd, GS_DUP_EMPTY);
}

void gs_dup_cache_drop_owner(const void *owner)
{
	/* Under the janitor's lock: a close of its own in progress ends
	 * before we return, so the caller's reconcile sees that release. */
	pthread_mutex_lock(&jan.lock);
	for (struct gs_dup_cache *dc = jan.caches; dc; dc = dc->next) {
		if (dc->owner != owner)
			continue;
		for (unsigned i = 0; i < GS_DUP_CACHE_SLOTS; i++)
			close_if_parked(&dc->slot[i], atomic_load(&dc->slot[i].fd));
	}
	pthread_mutex_unlock(&jan.lock);
}
