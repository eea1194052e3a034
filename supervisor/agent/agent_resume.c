/* SPDX-License-Identifier: MIT */
/*
 * agent_resume.c - an agent started with --keeper takes back the
 * containers the keeper holds and resumes each one before it serves a
 * single new connection (docs/agent.md, "Restart survival"):
 *
 *   1. the previous agent must be gone (its pidfd, from the keeper): two
 *      agents must never answer one listener, and a call it was making in
 *      the driver must have ended before its effects are judged;
 *   2. the state's header: the trap set must be this agent's (else the
 *      container carries a filter this agent did not write: killed, as a
 *      stale profile is); the policy is loaded again by name (a changed
 *      text applies from now on);
 *   3. the ledger is rebuilt from the journal;
 *   4. each call in flight is resolved: an RM_ALLOC that was being
 *      performed is undone (its object freed through the task's file),
 *      and a notification still pending (SECCOMP_IOCTL_NOTIF_ID_VALID:
 *      RECV marked it sent, it will never be delivered again) is
 *      executed again from the start, judged against the rebuilt ledger;
 *   5. the ledger is reconciled with the files' releases, and a worker
 *      starts on each listener.
 *
 * Any container that cannot be resumed is killed (its init, by the
 * keeper's pidfd) and dropped from the keeper: fail closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent_int.h"
#include "agent_sandbox.h"
#include "agent_resume.h"
#include "executor.h"
#include "keeper_link.h"

#define OLD_AGENT_SAY_MS 5000   /* how often the wait for the old agent is said */
#define FDINFO_LINE 128

/* 1. Until the previous agent has exited (every thread: one still in the
 * driver keeps the process). */
static void wait_for_old_agent(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };
	int rc;

	if (pidfd < 0)
		return;
	while ((rc = poll(&p, 1, OLD_AGENT_SAY_MS)) == 0 || (rc < 0 && errno == EINTR))
		if (rc == 0)
			fprintf(stderr, "gpusandbox agent: waiting for the previous agent to exit before "
			        "resuming its containers\n");
	close(pidfd);
}

/* The pid a pidfd names (-1: the process is gone), from fdinfo. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[FDINFO_LINE];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid:\t%d", &pid) == 1)
			break;
	fclose(f);
	return (pid_t)pid;
}

static int check_header(const struct gs_agent *a, const struct gs_kept_container *kc,
                        const struct gs_agent_state *st, struct gs_error *err)
{
	const struct gs_state_ident *id = &st->hdr->ident;
	uint64_t want = id->uvm_mmap_traps ? a->trap_version_uvm_mmap : a->trap_version;

	if (strcmp(id->id, kc->id) != 0)
		return gs_fail(err, EPROTO, "its state names another container (%s)", id->id);
	if (id->trap_version != want)
		return gs_fail(err, EPROTO, "it runs under trap set %016" PRIx64 ", not this agent's "
		               "(%016" PRIx64 "): its filter may leave newer escapes untrapped",
		               id->trap_version, want);
	if (st->hdr->unresumable)
		return gs_fail(err, EOVERFLOW, "its ledger outgrew the state's journal");
	if (pidfd_pid(kc->pidfd) != id->init_pid)
		return gs_fail(err, ESRCH, "its init (pid %d) is gone", (int)id->init_pid);
	return 0;
}

static int listener_of(const struct gs_kept_container *kc, uint32_t index)
{
	for (unsigned i = 0; i < kc->n; i++)
		if (kc->index[i] == index)
			return kc->fds[i];
	return -1;
}

/* A pending call whose task must not have a call performed (not of the
 * container, or able to gain CAP_SYS_ADMIN): failed as if no agent
 * listened, and the container is killed. */
static bool refuse_pending(struct gs_agent_container *c, int listener, const struct gs_state_slot *s)
{
	struct seccomp_notif_resp resp = { .id = s->id, .error = -ENOSYS };

	if (gs_taskset_contains(&c->sb.tasks, (pid_t)s->pid) && !agent_may_hold_sys_admin((pid_t)s->pid))
		return false;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	gs_fail(&c->sb.thread_err, EPERM, "a call pending across the restart (task %d) is not the "
	        "container's to make", (int)s->pid);
	agent_kill_container(c);
	return true;
}

/* 4. One slot's call, under the sandbox lock. */
static void resolve_slot(struct gs_agent_container *c, const struct gs_kept_container *kc, int i,
                         struct gs_scratch *scr)
{
	struct gs_state_slot s = c->state.slots[i];
	int listener = listener_of(kc, s.listener_index);
	bool valid, made;

	if (s.phase == GS_SLOT_FREE || !gs_state_slot_valid(&s) || listener < 0)
		return;
	valid = ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &s.id) == 0;
	made = s.made && !s.preexisting && (s.phase == GS_SLOT_PERFORMING || s.phase == GS_SLOT_ANSWERING);
	/* ANSWERING and gone: the answer was (most likely) delivered; the
	 * object is the task's now. PERFORMING and gone: the task never had
	 * it (signalled, or dead). Still pending: it is made again below. */
	if (made && (valid || s.phase == GS_SLOT_PERFORMING)) {
		const struct gs_resumed_alloc r = { (pid_t)s.pid, (int)s.data.args[0], s.client, s.parent,
		                                    s.object };
		if (gs_execute_undo_resumed(&c->sb, scr, &r))
			agent_log_line(c->id, NULL, "undid the allocation the previous agent was making");
	}
	if (!valid || refuse_pending(c, listener, &s))
		return;
	memset(scr->req, 0, scr->req_size);
	memset(scr->resp, 0, scr->resp_size);
	scr->req->id = s.id;
	scr->req->pid = s.pid;
	scr->req->data = s.data;
	scr->listener = listener;
	struct gs_state_worker w = { &c->state, i };
	scr->before_alloc = gs_state_before_alloc;
	scr->before_answer = gs_state_before_answer;
	scr->flight_ctx = &w;
	c->state.taken[i] = true;
	gs_state_received(&c->state, i, scr->req);
	c->sb.notifications++;
	gs_execute_notification(&c->sb, scr);
	gs_state_answered(&c->state, i);
	c->state.taken[i] = false;
	agent_log_line(c->id, NULL, "answered the call the previous agent had in flight");
}

static int resolve_in_flight(struct gs_agent_container *c, const struct gs_kept_container *kc,
                             struct gs_error *err)
{
	struct gs_scratch scr;

	if (gs_scratch_init(&scr, err) < 0)
		return -1;
	pthread_mutex_lock(&c->sb.lock);
	for (int i = 0; i < (int)GS_STATE_SLOTS; i++)
		resolve_slot(c, kc, i, &scr);
	/* Slots are claimed afresh by this agent's workers. */
	for (unsigned i = 0; i < GS_STATE_SLOTS; i++)
		c->state.slots[i].phase = GS_SLOT_FREE;
	pthread_mutex_unlock(&c->sb.lock);
	gs_scratch_fini(&scr);
	return 0;
}

/* The clients' release watches the keeper held go back to their clients
 * (the keeper keeps its copies). */
static void adopt_watches(struct gs_agent_container *c, struct gs_kept_container *kc)
{
	unsigned adopted = 0;

	for (unsigned i = 0; i < kc->n_w; i++) {
		int fd = kc->w[i].epfd;
		kc->w[i].epfd = -1;
		adopted += ledger_adopt_watch(&c->sb.ledger, kc->w[i].client, fd, (int)kc->w[i].tfd) == 0;
	}
	if (kc->n_w)
		fprintf(stderr, "gpusandbox agent: container %s: %u of %u client release watch(es) taken "
		        "back\n", c->id, adopted, kc->n_w);
}

/* 2-3: the sandbox, its ledger rebuilt; listed in the agent with one
 * listener counted per worker to come. NULL (err) when it cannot be. */
static struct gs_agent_container *rebuild(struct gs_agent *a, struct gs_kept_container *kc,
                                          struct gs_agent_state *st, struct gs_error *err)
{
	const struct gs_state_ident *id = &st->hdr->ident;
	struct gs_agent_hello h = { .listener = -1, .init_pid = id->init_pid, .k8s = id->k8s,
	                             .request = id->request };
	const struct container_origin o = { &h, id->policy_name, id->uvm_mmap_traps != 0, st, kc->pidfd, kc };
	struct gs_agent_container *c;

	snprintf(h.id, sizeof(h.id), "%s", id->id);
	if (check_header(a, kc, st, err) < 0)
		return NULL;
	c = agent_make_container(a, &o, err);
	if (!c)
		return NULL;
	kc->pidfd = -1;   /* the container's now, with the state */
	pthread_mutex_lock(&a->lock);
	c->listeners = kc->n ? kc->n : 1;
	c->next = a->containers;
	a->containers = c;
	a->n_containers++;
	pthread_mutex_unlock(&a->lock);
	if (gs_state_replay(&c->state, &c->sb.ledger, err) < 0) {
		c->sb.thread_err = *err;
		agent_kill_container(c);
		c->listeners = 1;
		agent_release(c);
		return NULL;
	}
	/* UVM channel registrations made before the restart are in files
	 * the old agent held and we do not: what the ledger lists can never
	 * be proven unregistered, so it stays counted (uvm_maps.h). */
	c->sb.uvm.spaces_unknown = ledger_watches_channel_frees(&c->sb.ledger);
	adopt_watches(c, kc);
	return c;
}

/* 5. A worker per listener; each takes its listener. */
static void start_workers(struct gs_agent_container *c, struct gs_kept_container *kc)
{
	struct gs_error err = { 0 };

	if (kc->n == 0) {
		agent_release(c);   /* every listener hung up meanwhile */
		return;
	}
	for (unsigned i = 0; i < kc->n; i++) {
		int fd = kc->fds[i];
		kc->fds[i] = -1;
		/* Unverified: its first caller must be of the container's
		 * cgroup, as for a listener joined by id alone. */
		if (agent_start_worker(c, fd, kc->index[i], true, &err) < 0) {
			close(fd);
			c->sb.thread_err = err;
			agent_kill_container(c);
			agent_release(c);
		}
	}
}

/* The UVM mappings made before the restart cannot be taken back by this
 * agent (no record, no UVM file): their memory stays charged until the
 * container ends (ledger.h, above ledger_pin). Said once, as it explains
 * a quota that does not come back when the workload frees. */
static void say_resumed_pins(const struct gs_agent_container *c)
{
	if (c->sb.ledger.n_resumed_pins)
		fprintf(stderr, "gpusandbox agent: container %s: %u UVM mapping pin(s) from before the restart: "
		        "the memory they map stays charged until the container ends\n", c->id,
		        c->sb.ledger.n_resumed_pins);
}

static void resume_one(struct gs_agent *a, struct gs_kept_container *kc)
{
	struct gs_error err = { 0 };
	struct gs_agent_state st = { .memfd = -1 };
	struct gs_agent_container *c = NULL;
	char buf[GS_ERROR_MSG_MAX + 128];

	if (gs_state_open(&st, kc->memfd, &err) == 0) {
		kc->memfd = -1;
		c = rebuild(a, kc, &st, &err);
		/* Not made into a container: the state is still ours. */
		if (!c && kc->pidfd >= 0)
			gs_state_close(&st);
	} else {
		kc->memfd = -1;
	}
	if (c && resolve_in_flight(c, kc, &err) == 0) {
		/* The files closed while no agent ran release their charges. */
		gs_session_reconcile(&c->sb);
		fprintf(stderr, "gpusandbox agent: container %s: resumed sandbox %s (%u listener(s), %" PRIu64
		        " bytes charged on gpu0)\n", c->id, c->sb.id, kc->n, c->sb.ledger.used[0]);
		say_resumed_pins(c);
		start_workers(c, kc);
		return;
	}
	if (c) {
		/* The in-flight calls could not be resolved. */
		c->sb.thread_err = err;
		agent_kill_container(c);
		agent_release(c);
		for (unsigned i = 0; i < kc->n; i++)
			if (kc->fds[i] >= 0)
				close(kc->fds[i]), kc->fds[i] = -1;
		return;
	}
	gs_error_text(&err, buf, sizeof(buf));
	fprintf(stderr, "gpusandbox agent: container %s: cannot be resumed: %s; killing it\n", kc->id, buf);
	if (kc->pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, kc->pidfd, SIGKILL, NULL, 0);
	if (a->keeper)
		gs_keeper_link_drop(a->keeper, kc->id);
}

void gs_agent_resume(struct gs_agent *a, struct gs_kept_container *held, int old_agent)
{
	wait_for_old_agent(old_agent);
	for (struct gs_kept_container *kc = held; kc; kc = kc->next)
		resume_one(a, kc);
	gs_kept_free(held);
}
