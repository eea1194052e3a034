/* SPDX-License-Identifier: MIT */
/*
 * runner.c - the command line's runner: a small pool of workers per
 * sandbox, one of them at a time blocked in SECCOMP_IOCTL_NOTIF_RECV,
 * handing each notification to the executor under the sandbox lock. It sits above the executor and the compute share; the
 * sandbox object below it knows neither.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "compute_share.h"
#include "executor.h"
#include "gpusandbox.h"
#include "runner.h"

/* Used only to interrupt a RECV blocked in a notify thread. */
#define GS_WAKE_SIGNAL (SIGRTMIN + 1)
#define GS_JOIN_POLL_US 1000

static void wake_handler(int sig)
{
	(void)sig;
}

/* True once no task holds the filter any more. */
static bool listener_hung_up(int listener)
{
	struct pollfd p = { listener, POLLIN, 0 };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) && !(p.revents & POLLIN);
}

/* Fail closed: the workload must not run on unsupervised or unaudited.
 * Its death ends the run. */
static void notify_thread_failed(struct gs_session *sb)
{
	atomic_store(&sb->failed, true);
	kill(sb->workload, SIGKILL);
}

/* The command line's runner: a small pool of workers serving one sandbox,
 * each with its own scratch (the notification, the answer, the executor's
 * copies). One worker at a time holds the listener (the receiver role) and
 * handles what it receives inline, so the common case is the one thread
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP pairs with the trapping task. A worker
 * about to wait in the driver without the session lock (a call the
 * executor knows to be slow, exec_escape) hands the role to an idle worker
 * first, so that one process's slow driver call does not hold up the
 * others of the sandbox (issue #16). Made by gs_session_start, freed by
 * gs_session_stop after the joins; the sandbox holds an opaque pointer. */
#define GS_RUNNER_WORKERS 4u

struct gs_worker {
	struct gs_runner  *r;
	struct gs_scratch  scratch;
	pthread_t          thread;
	bool               started;
	bool               has_role;   /* under r->role_lock */
};

struct gs_runner {
	struct gs_session *sb;
	struct gs_worker   w[GS_RUNNER_WORKERS];
	pthread_mutex_t    role_lock;
	pthread_cond_t     role_free;
	bool               role_taken; /* under role_lock */
	atomic_bool        stop;
};

/* Called by the executor with the session lock held, before it drops it
 * around a slow driver call: the worker gives up the listener, and an idle
 * one takes it. The call's dup and copies stay the worker's until its own
 * answer, so nothing of the call outlives it. */
static void release_receiver(void *ctx, struct gs_scratch *scratch)
{
	struct gs_runner *r = ctx;

	for (unsigned i = 0; i < GS_RUNNER_WORKERS; i++) {
		struct gs_worker *w = &r->w[i];
		if (&w->scratch != scratch)
			continue;
		pthread_mutex_lock(&r->role_lock);
		if (w->has_role) {
			w->has_role = false;
			r->role_taken = false;
			pthread_cond_signal(&r->role_free);
		}
		pthread_mutex_unlock(&r->role_lock);
		return;
	}
}

/* gs_session.task_held: has one of the workers received tid's call and
 * not yet answered it? Read without the role lock: each worker sets its
 * own trapped_tid after RECV and clears it under the session lock before
 * answering, which the asker holds. */
static bool runner_task_held(void *ctx, pid_t tid)
{
	struct gs_runner *r = ctx;

	for (unsigned i = 0; i < GS_RUNNER_WORKERS; i++)
		if (atomic_load(&r->w[i].scratch.trapped_tid) == tid)
			return true;
	return false;
}

/* Waits until the role is free (or the runner stops); true with it. */
static bool take_role(struct gs_worker *w)
{
	struct gs_runner *r = w->r;
	bool got;

	pthread_mutex_lock(&r->role_lock);
	while (r->role_taken && !atomic_load(&r->stop))
		pthread_cond_wait(&r->role_free, &r->role_lock);
	got = !atomic_load(&r->stop);
	if (got)
		r->role_taken = w->has_role = true;
	pthread_mutex_unlock(&r->role_lock);
	return got;
}

static bool holds_role(struct gs_worker *w)
{
	pthread_mutex_lock(&w->r->role_lock);
	bool has = w->has_role;
	pthread_mutex_unlock(&w->r->role_lock);
	return has;
}

/* Fail closed, once, whichever worker fails first. */
static void worker_failed(struct gs_session *sb, const struct gs_error *err)
{
	pthread_mutex_lock(&sb->lock);
	if (!atomic_load(&sb->failed))
		sb->thread_err = *err;
	atomic_store(&sb->failed, true);
	pthread_mutex_unlock(&sb->lock);
	notify_thread_failed(sb);
}

static void stop_all(struct gs_runner *r)
{
	atomic_store(&r->stop, true);
	pthread_mutex_lock(&r->role_lock);
	pthread_cond_broadcast(&r->role_free);
	pthread_mutex_unlock(&r->role_lock);
}

static void *notify_thread(void *arg)
{
	struct gs_worker *w = arg;
	struct gs_runner *r = w->r;
	struct gs_session *sb = r->sb;
	struct gs_error err = { 0 };

	while (take_role(w)) {
		while (!atomic_load(&r->stop) && holds_role(w)) {
			int rc = gs_session_handle_one(sb, &w->scratch, &err);
			if (rc < 0 || atomic_load(&sb->audit_failed)) {
				if (rc >= 0)
					gs_fail(&err, 0, "writing the audit log failed; stopping the workload");
				worker_failed(sb, &err);
				stop_all(r);
				return NULL;
			}
			if (rc == 0 && listener_hung_up(sb->listener)) {
				stop_all(r);
				return NULL;
			}
		}
		/* The role went to another worker during a slow call. */
	}
	return NULL;
}

static void runner_free(struct gs_runner *r)
{
	for (unsigned i = 0; i < GS_RUNNER_WORKERS; i++)
		gs_scratch_fini(&r->w[i].scratch);
	pthread_cond_destroy(&r->role_free);
	pthread_mutex_destroy(&r->role_lock);
	free(r);
}

static void runner_join(struct gs_runner *r)
{
	stop_all(r);
	for (unsigned i = 0; i < GS_RUNNER_WORKERS; i++) {
		struct gs_worker *w = &r->w[i];
		if (!w->started)
			continue;
		/* A worker may enter RECV just after a signal: signal until it
		 * is gone. */
		while (pthread_tryjoin_np(w->thread, NULL) == EBUSY) {
			pthread_kill(w->thread, GS_WAKE_SIGNAL);
			usleep(GS_JOIN_POLL_US);
		}
	}
}

static int runner_start_workers(struct gs_runner *r, struct gs_error *err)
{
	sigset_t all, old;
	int rc = 0;

	/* The workers block every signal but the wake-up one, so the signals
	 * meant for the workload stay pending for the main thread's signalfd. */
	sigfillset(&all);
	sigdelset(&all, GS_WAKE_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned i = 0; i < GS_RUNNER_WORKERS && !rc; i++) {
		rc = pthread_create(&r->w[i].thread, NULL, notify_thread, &r->w[i]);
		r->w[i].started = rc == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!rc)
		return 0;
	runner_join(r);
	return gs_fail(err, rc, "starting the notify threads");
}

int gs_session_start(struct gs_session *sb, pid_t workload, struct gs_error *err)
{
	struct sigaction sa = { .sa_handler = wake_handler };
	struct gs_runner *r = calloc(1, sizeof(*r));

	if (!r)
		return gs_fail(err, ENOMEM, "allocating the notify threads");
	r->sb = sb;
	pthread_mutex_init(&r->role_lock, NULL);
	pthread_cond_init(&r->role_free, NULL);
	for (unsigned i = 0; i < GS_RUNNER_WORKERS; i++) {
		r->w[i].r = r;
		if (gs_scratch_init(&r->w[i].scratch, err) < 0) {
			runner_free(r);
			return -1;
		}
		/* Without the janitor no dup is kept: each call takes a fresh
		 * one, as it would anyway. */
		(void)gs_dup_cache_attach(&r->w[i].scratch.dups, sb);
	}
	sb->workload = workload;
	/* No SA_RESTART: the signal must break a worker out of RECV. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(GS_WAKE_SIGNAL, &sa, NULL) < 0) {
		runner_free(r);
		return gs_fail(err, errno, "sigaction");
	}
	sb->release_receiver = release_receiver;
	sb->task_held = runner_task_held;
	sb->receiver_ctx = r;
	if (runner_start_workers(r, err) < 0) {
		sb->release_receiver = NULL;
		sb->task_held = NULL;
		runner_free(r);
		return -1;
	}
	sb->runner = r;
	return 0;
}

void gs_session_stop(struct gs_session *sb)
{
	struct gs_runner *r = sb->runner;

	if (!r)
		return;
	runner_join(r);
	sb->release_receiver = NULL;
	sb->task_held = NULL;
	runner_free(r);
	sb->runner = NULL;
}

int gs_session_handle_one(struct gs_session *sb, struct gs_scratch *scratch, struct gs_error *err)
{
	memset(scratch->req, 0, scratch->req_size);
	scratch->listener = sb->listener;
	if (ioctl(sb->listener, SECCOMP_IOCTL_NOTIF_RECV, scratch->req) < 0) {
		/* ENOENT: the task went away between poll and receive. */
		if (errno == EINTR || errno == ENOENT)
			return 0;
		return gs_fail(err, errno, "receiving a seccomp notification");
	}
	/* An ioctl we made a task perform (inject.h): continued at once,
	 * without the session lock, which the injecting worker holds. */
	if (gs_execute_continue_injected(sb, sb->listener, scratch->req))
		return 1;
	/* The task is in the kernel's killable seccomp wait until answered. */
	atomic_store(&scratch->trapped_tid, (int)scratch->req->pid);
	memset(scratch->resp, 0, scratch->resp_size);
	/* A worker that must wait for the lock gives up the listener first:
	 * the lock's holder may be injecting a call (inject.h) that only a
	 * receiving worker can let through. */
	scratch->lock_wait_ns = 0;
	if (pthread_mutex_trylock(&sb->lock) != 0) {
		uint64_t t0 = sb->profile ? gs_monotonic_ns() : 0;
		if (sb->release_receiver)
			sb->release_receiver(sb->receiver_ctx, scratch);
		pthread_mutex_lock(&sb->lock);
		if (sb->profile)
			scratch->lock_wait_ns = gs_monotonic_ns() - t0;
	}
	sb->notifications++;
	gs_execute_notification(sb, scratch);
	atomic_store(&scratch->trapped_tid, 0);
	pthread_mutex_unlock(&sb->lock);
	return 1;
}

void gs_session_summarize(struct gs_session *sb, int exit_status, int term_signal)
{
	int max = ledger_max_gpu(&sb->ledger);
	unsigned n = max < 0 ? 1 : (unsigned)max + 1;

	if (!sb->audit)
		return;
	struct gs_sm_summary sm;
	if (sb->sm)
		gs_sm_summary(sb->sm, &sm);
	if (gs_audit_summary(sb->audit, exit_status, term_signal, n, sb->ledger.peak, sb->ledger.used,
	                     sb->quota.mem_per_gpu, sb->counts, sb->sm ? &sm : NULL) < 0)
		sb->audit_failed = true;
}
