/* SPDX-License-Identifier: MIT */
/*
 * exec_inject.c - a second client on a control file, made by its caller
 * from a page of ours (inject.h; docs/security/client-allocation.md, "A
 * second client on a control file").
 *
 * The worker holds the session lock throughout, so no other call of the
 * sandbox is judged or answered while the caller's struct sits in our
 * page (a held sharer's answer could otherwise write there), and hands
 * the listener on, so that the injected ioctl, trapped by our own filter,
 * is received by another worker and continued without the lock
 * (gs_execute_continue_injected, from runner.c or the agent's receiver of
 * the injection, agent_inject.c). exec_alloc.c builds the page and gives
 * the driver's answer back; this file holds the caller and runs the steps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "exec_int.h"
#include "executor.h"
#include "filter.h"

#ifndef ERESTARTNOINTR
#define ERESTARTNOINTR 513 /* kernel-internal: the call is restarted, never -EINTR */
#endif

/* Does the filter of this kernel hold a received call in a killable wait
 * (the filter asks for WAIT_KILLABLE_RECV and falls back without it,
 * filter.c)? Without it the interrupt sent before the answer would end
 * the wait and the kernel would drop the call. Probed once. */
static bool killable_wait(void)
{
	static int known = -1;

	if (known < 0)
		known = gs_probe_wait_killable_recv() == 1;
	return known == 1;
}

bool inject_possible(const struct call *c)
{
	const struct seccomp_data *d = &c->scratch->req->data;

	if (c->sb->test_second_client_continue)
		return true;
	/* Someone must receive the injected ioctl while this worker holds
	 * the session lock: another worker of the runner's pool, or the
	 * agent's receiver of the injection. */
	bool receiver = c->sb->release_receiver ||
	                (c->scratch->inject_receiver && !c->scratch->inject_wait_interruptible);

	return gs_inject_supported() && receiver && !c->sb->quiesce_off &&
	       d->arch == AUDIT_ARCH_X86_64 && !(d->nr & __X32_SYSCALL_BIT) && killable_wait();
}

bool inject_hold(struct call *c, const char **why)
{
	c->inject = true;
	if (!hold_judged_file(c, 0, NULL, why))
		return false;
	/* Where the listener cannot be handed on (the agent), its receiver
	 * for the injection starts now: every task that shares the caller's
	 * fd table or memory is stopped, so what it receives besides the
	 * injected ioctl is other processes' calls, which it keeps for this
	 * worker (agent_inject.c). */
	if (!c->sb->release_receiver &&
	    (!c->scratch->inject_receiver || !c->scratch->inject_receiver(c->scratch->inject_ctx, true))) {
		gs_quiesce_end(c->quiesce, false);
		c->quiesce = NULL;
		*why = "cannot start the receiver of the injected call";
		return false;
	}
	return true;
}

/* The agent's receiver stops once the injected ioctl is over (or never
 * came): this worker receives again. */
static void receiver_off(struct call *c)
{
	if (!c->sb->release_receiver)
		(void)c->scratch->inject_receiver(c->scratch->inject_ctx, false);
}

/* The trapped call answered -ERESTARTNOINTR: the caller, interrupted
 * already, stops before the kernel restarts it. */
static bool answer_restart(struct call *c)
{
	struct seccomp_notif_resp *resp = c->scratch->resp;

	memset(resp, 0, c->scratch->resp_size);
	resp->id = c->scratch->req->id;
	resp->error = -ERESTARTNOINTR;
	return ioctl(c->scratch->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0;
}

bool inject_run(struct call *c, struct inject_flight *fl)
{
	gs_quiesce_inject_arm(c->quiesce);
	if (!answer_restart(c)) {
		/* The task is gone (or its wait ended): nothing was changed.
		 * In the agent an ended wait is an interruptible one (below). */
		c->scratch->inject_wait_interruptible = !c->sb->release_receiver;
		receiver_off(c);
		gs_quiesce_end(c->quiesce, false);
		c->quiesce = NULL;
		return false;
	}
	/* Another worker must receive the injected ioctl; this one keeps
	 * the session lock. */
	if (c->sb->release_receiver)
		c->sb->release_receiver(c->sb->receiver_ctx, c->scratch);
	fl->outcome = gs_quiesce_inject_run(c->quiesce, &fl->plan, &fl->out);
	/* The agent's filters are the runtime's: one made without
	 * WAIT_KILLABLE_RECV lost the call to our interrupt (restarted, it
	 * would be lost again at every try). */
	if (fl->outcome == GS_INJECT_UNTOUCHED && fl->out.wait_interrupted && !c->sb->release_receiver)
		c->scratch->inject_wait_interruptible = true;
	receiver_off(c);
	return true;
}

bool gs_execute_continue_injected(struct gs_session *sb, int listener, const struct seccomp_notif *req)
{
	const struct seccomp_data *d = &req->data;
	struct seccomp_notif_resp resp = { .id = req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	if (!gs_inject_marks_match(&sb->inject_marks, (pid_t)req->pid, d->nr, d->arch,
	                           (const uint64_t *)d->args))
		return false;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	return true;
}

int inject_write(const struct call *c, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(c->tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

struct answer inject_end(struct call *c, struct inject_flight *fl, long ret)
{
	gs_quiesce_inject_finish(c->quiesce, ret);
	c->quiesce = NULL;
	c->audit = true;
	switch (fl->outcome) {
	case GS_INJECT_DONE:
		c->d.verdict = GS_VERDICT_CONTINUE;
		c->d.reason = "a second client on the control file, made by the caller from a page of ours";
		break;
	case GS_INJECT_FAILED:
		c->d.verdict = GS_VERDICT_REFUSE;
		c->d.reason = fl->out.why;
		break;
	case GS_INJECT_UNTOUCHED:
		/* Nothing answered it: the kernel restarts the ioctl, and it
		 * is judged again. No record: the next one is the call's. */
		c->audit = false;
		return answer_none();
	case GS_INJECT_LOST:
		c->d.verdict = GS_VERDICT_REFUSE;
		c->d.reason = fl->out.why ? fl->out.why : "the task was lost during the injection";
		break;
	}
	return answer_done();
}
