/* SPDX-License-Identifier: MIT */
/*
 * runner.c - the command line's runner: one thread per sandbox, blocked in
 * SECCOMP_IOCTL_NOTIF_RECV, handing each notification to the executor under
 * the sandbox lock. It sits above the executor and the compute share; the
 * sandbox object below it knows neither.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "compute_share.h"
#include "executor.h"
#include "runner.h"

/* Used only to interrupt a RECV blocked in the notify thread. */
#define GS_WAKE_SIGNAL (SIGRTMIN + 1)

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

/* The command line's runner: one thread serving one sandbox, the one
 * worker, with its own scratch (the notification, the answer, the
 * executor's copies). Made by gs_session_start, so that a failure to
 * allocate is reported there; freed by gs_session_stop after the join.
 * The sandbox holds only an opaque pointer to it. */
struct gs_runner {
	struct gs_session *sb;
	struct gs_scratch  scratch;
	pthread_t          thread;
	atomic_bool        stop;
};

static void *notify_thread(void *arg)
{
	struct gs_runner *w = arg;
	struct gs_session *sb = w->sb;

	while (!atomic_load(&w->stop)) {
		int rc = gs_session_handle_one(sb, &w->scratch, &sb->thread_err);
		if (rc < 0 || sb->audit_failed) {
			if (rc >= 0)
				gs_fail(&sb->thread_err, 0, "writing the audit log failed; stopping the workload");
			notify_thread_failed(sb);
			break;
		}
		if (rc == 0 && listener_hung_up(sb->listener))
			break;
	}
	return NULL;
}

int gs_session_start(struct gs_session *sb, pid_t workload, struct gs_error *err)
{
	struct sigaction sa = { .sa_handler = wake_handler };
	sigset_t all, old;
	int rc;

	struct gs_runner *w = calloc(1, sizeof(*w));

	if (!w)
		return gs_fail(err, ENOMEM, "allocating the notify thread");
	w->sb = sb;
	if (gs_scratch_init(&w->scratch, err) < 0) {
		free(w);
		return -1;
	}
	sb->workload = workload;
	/* No SA_RESTART: the signal must break the thread out of RECV. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(GS_WAKE_SIGNAL, &sa, NULL) < 0) {
		gs_scratch_fini(&w->scratch);
		free(w);
		return gs_fail(err, errno, "sigaction");
	}
	/* The thread blocks every signal but the wake-up one, so the signals
	 * meant for the workload stay pending for the main thread's signalfd. */
	sigfillset(&all);
	sigdelset(&all, GS_WAKE_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, notify_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		gs_scratch_fini(&w->scratch);
		free(w);
		return gs_fail(err, rc, "starting the notify thread");
	}
	sb->runner = w;
	return 0;
}

void gs_session_stop(struct gs_session *sb)
{
	struct gs_runner *w = sb->runner;

	if (!w)
		return;
	atomic_store(&w->stop, true);
	pthread_kill(w->thread, GS_WAKE_SIGNAL);
	pthread_join(w->thread, NULL);
	gs_scratch_fini(&w->scratch);
	free(w);
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
	sb->notifications++;
	memset(scratch->resp, 0, scratch->resp_size);
	pthread_mutex_lock(&sb->lock);
	gs_execute_notification(sb, scratch);
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
