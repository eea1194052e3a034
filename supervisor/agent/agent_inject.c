/* SPDX-License-Identifier: MIT */
/*
 * agent_inject.c - the receiver of a worker's listener while the worker
 * injects a second client (agent_inject.h says why).
 *
 * Sound because:
 *  - the receiver continues only a notification whose tid, fd, request
 *    and pointer are an injection's marks (gs_inject_marks_match): the
 *    tid is stopped in our ptrace and can make no call but ours, and the
 *    page's address is the kernel's choice;
 *  - any other notification is kept unanswered: its task waits in the
 *    kernel (killable) until the worker serves it after its call, through
 *    the same path as a call it received itself (serve_received: the
 *    caller's bounding set, the verdict under the session lock). None of
 *    the caller's sharers can be among them: every task sharing its fd
 *    table or memory was stopped before the receiver started;
 *  - the injected ioctl comes only on this listener: the caller's own
 *    filter traps it, as it trapped the call that is being answered;
 *  - the state slots the kept ones are recorded in are claimed by the
 *    worker, with the session lock held, before the receiver starts, and
 *    given back under it: the receiver writes only into its own slots, as
 *    a worker does into its own (serve_one);
 *  - once its slots (or GS_AGENT_INJECT_KEPT) are used up the receiver
 *    leaves the rest in the kernel's queue: an injected ioctl behind them
 *    is then not received, and its caller is killed after the injection's
 *    bound (inject.c), as on the command line when every worker is busy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "agent_int.h"
#include "agent_inject.h"
#include "executor.h"
#include "test_switch.h"

/* The notifications' buffers, of the kernel's size, made once. */
static bool have_buffers(struct worker *w)
{
	struct agent_inject *in = &w->inj;

	for (unsigned i = 0; i < GS_AGENT_INJECT_KEPT; i++)
		if (!in->kept[i] && !(in->kept[i] = calloc(1, w->scratch.req_size)))
			return false;
	return true;
}

/* Those served leave the front, so that the next ones are kept after
 * those still to be served (an injection while a kept call is served). */
static void compact(struct agent_inject *in)
{
	for (unsigned i = in->head; i < in->n; i++) {
		struct seccomp_notif *b = in->kept[i - in->head];
		in->kept[i - in->head] = in->kept[i];
		in->kept[i] = b;
		in->slot[i - in->head] = in->slot[i];
	}
	in->n -= in->head;
	in->head = 0;
}

/* One state slot per call the receiver may keep, claimed under the
 * session lock (held by the caller); without a keeper, none is needed. */
static void claim_slots(struct worker *w)
{
	struct agent_inject *in = &w->inj;

	in->cap = in->n;
	for (unsigned i = in->n; i < GS_AGENT_INJECT_KEPT; i++) {
		in->slot[i] = GS_STATE_NO_SLOT;
		if (w->c->stateful && (in->slot[i] = gs_state_slot_claim(&w->c->state, w->index)) ==
		                              GS_STATE_NO_SLOT)
			break;
		in->cap = i + 1;
	}
}

/* Slots claimed for calls that did not come; under the session lock. */
static void release_unused(struct worker *w)
{
	struct agent_inject *in = &w->inj;

	for (unsigned i = in->n; i < in->cap; i++)
		if (w->c->stateful)
			gs_state_slot_release(&w->c->state, in->slot[i]);
	in->cap = in->n;
}

/* Until told to stop: the injected ioctl continued, the others kept. */
static void *receiver_main(void *arg)
{
	struct worker *w = arg;
	struct agent_inject *in = &w->inj;
	bool listening = true;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = { { in->stop, POLLIN, 0 }, { w->listener, POLLIN, 0 } };
		bool room = listening && in->n < in->cap;
		if (poll(p, room ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		if (!(p[1].revents & POLLIN)) {
			/* Hung up: nothing more will come. */
			listening = !(p[1].revents & (POLLHUP | POLLERR | POLLNVAL));
			continue;
		}
		struct seccomp_notif *req = in->kept[in->n];
		memset(req, 0, w->scratch.req_size);
		if (ioctl(w->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
			/* ENOENT: the task went away between poll and receive. */
			listening = errno == ENOENT || errno == EINTR;
			continue;
		}
		if (gs_execute_continue_injected(&w->c->sb, w->listener, req))
			continue;
		/* Before anything else, as serve_one records its own. */
		if (w->c->stateful && !in->test_unrecorded)
			gs_state_received(&w->c->state, in->slot[in->n], req);
		in->n++;
	}
	return NULL;
}

static bool receiver_start(struct worker *w)
{
	struct agent_inject *in = &w->inj;

	if (in->stop >= 0 || !have_buffers(w))
		return false;
	compact(in);
	claim_slots(w);
	in->stop = eventfd(0, EFD_CLOEXEC);
	if (in->stop < 0 || pthread_create(&in->thread, NULL, receiver_main, w) != 0) {
		if (in->stop >= 0)
			close(in->stop);
		in->stop = -1;
		release_unused(w);
		return false;
	}
	return true;
}

static void receiver_stop(struct worker *w)
{
	struct agent_inject *in = &w->inj;
	const uint64_t one = 1;

	if (in->stop < 0)
		return;
	/* An eventfd's counter takes a write of 1 unless it is full. */
	(void)!write(in->stop, &one, sizeof(one));
	pthread_join(in->thread, NULL);
	close(in->stop);
	in->stop = -1;
	release_unused(w);
	if (w->scratch.inject_wait_interruptible && !in->said_interruptible) {
		in->said_interruptible = true;
		fprintf(stderr, "gpusandbox agent: container %s: an injection's interrupt ended a caller's "
		        "wait (its profile lacks WAIT_KILLABLE_RECV): second clients on this listener are "
		        "refused\n", w->c->id);
	}
}

bool agent_inject_receiver(void *ctx, bool on)
{
	struct worker *w = ctx;

	if (on)
		return receiver_start(w);
	receiver_stop(w);
	return true;
}

void agent_inject_init(struct worker *w)
{
	w->inj.stop = -1;
	/* GPUSANDBOX_TEST_INJECT_KEPT_UNRECORDED: the kept calls are not
	 * recorded in their slots (tests/agent baseline-injectkept-crun: a
	 * restarted agent does not know them). Never for use. */
	w->inj.test_unrecorded = gs_test_switch("GPUSANDBOX_TEST_INJECT_KEPT_UNRECORDED") != NULL;
	/* GPUSANDBOX_TEST_AGENT_NO_INJECT, in the agent's environment: no
	 * receiver, so a second client is refused as before (tests/agent
	 * second-runc's baseline). Never for use. */
	if (gs_test_switch("GPUSANDBOX_TEST_AGENT_NO_INJECT"))
		return;
	w->scratch.inject_receiver = agent_inject_receiver;
	w->scratch.inject_ctx = w;
}

/* A kept notification served: its state slot is let go. */
static void kept_done(struct worker *w, int slot)
{
	if (!w->c->stateful)
		return;
	gs_state_answered(&w->c->state, slot);
	pthread_mutex_lock(&w->c->sb.lock);
	gs_state_slot_release(&w->c->state, slot);
	pthread_mutex_unlock(&w->c->sb.lock);
}

int agent_inject_serve_kept(struct worker *w, int (*serve)(struct worker *w))
{
	struct agent_inject *in = &w->inj;
	const int own = w->slot.slot;
	int rc = 0;

	/* An injection while one is served keeps more after the rest
	 * (compact): the loop takes them too. */
	while (rc == 0 && in->head < in->n) {
		const int slot = in->slot[in->head];
		memcpy(w->scratch.req, in->kept[in->head++], w->scratch.req_size);
		/* The executor records this call's steps in its own slot. */
		w->slot.slot = slot;
		rc = serve(w);
		w->slot.slot = own;
		kept_done(w, slot);
		atomic_fetch_add_explicit(&w->c->inject_kept, 1, memory_order_relaxed);
	}
	return rc;
}

void agent_inject_log(struct gs_agent_container *c)
{
	/* Not agent_log_line: agent_sandbox.c uses this file. */
	fprintf(stderr, "gpusandbox agent: container %s: calls kept during injections=%u\n", c->id,
	        atomic_load(&c->inject_kept));
}

void agent_inject_fini(struct worker *w)
{
	struct agent_inject *in = &w->inj;

	while (in->head < in->n)
		kept_done(w, in->slot[in->head++]);
	for (unsigned i = 0; i < GS_AGENT_INJECT_KEPT; i++) {
		free(in->kept[i]);
		in->kept[i] = NULL;
	}
}
