/* SPDX-License-Identifier: MIT */
/*
 * agent_int.h - the agent's containers and workers, shared by
 * agent_sandbox.c (serving) and agent_resume.c (resuming after a restart).
 */
#ifndef GPUSANDBOX_AGENT_INT_H
#define GPUSANDBOX_AGENT_INT_H

#include "agent_conn.h"
#include "agent_state.h"
#include "audit.h"
#include "compute_share.h"
#include "keeper_link.h"
#include "metrics.h"
#include "policy.h"
#include "scratch.h"
#include "session.h"

/* The agent (agent_sandbox.h): its containers point back to it. Not
 * included, so that agent_sandbox.c, which includes this, is not
 * included back (scripts/check-layers.sh: no module circle). */
struct gs_agent;

struct gs_agent_container {
	struct gs_agent_container *next;
	struct gs_agent *agent;
	char id[GS_AGENT_ID_MAX];
	pid_t init;                  /* state.pid: the container's init */
	int init_pidfd;              /* killed when supervision fails */
	unsigned listeners;          /* workers alive; 0: torn down */
	struct gs_policy policy;     /* its rules outlive every call */
	struct gs_agent_k8s k8s;     /* who it is to Kubernetes, for the audit */
	struct gs_agent_request request; /* its own quota request, within the policy */
	struct gs_audit audit;
	bool audited;
	/* With a keeper: the state memfd a restarted agent resumes from. */
	bool stateful;
	struct gs_agent_state state;
	struct gs_session sb;
	/* sm: the command line's compute share (one duty-cycle thread per
	 * container), a client of the GPU's coordinator like any supervisor. */
	struct gs_compute_share sm;
	/* The last figures for --metrics-file (gs_agent_tick); under the
	 * agent lock. */
	struct gs_metrics_snap metrics;
	/* Calls the receivers of its injections kept and its workers served
	 * after (agent_inject.c): said at teardown, a figure. */
	atomic_uint inject_kept;
};

/* Calls of other processes the receiver of an injection may keep for its
 * worker (agent_inject.c): past them it leaves the rest in the kernel's
 * queue, and an injected ioctl behind them is not received in time, so
 * its caller is killed (fail closed, the bound the command line's pool of
 * four workers has: inject.c). */
#define GS_AGENT_INJECT_KEPT 8u

/* The receiver of one worker's injections (agent_inject.c). */
struct agent_inject {
	pthread_t thread;
	int       stop;      /* eventfd that ends the receiver; -1 when none runs */
	/* Notifications received meanwhile, served by the worker after its
	 * call, in order: [head, n) are left; each with the state slot that
	 * records it (GS_STATE_NO_SLOT without one). cap: how many the
	 * running receiver may keep. Buffers of the kernel's size, made at
	 * the first injection. */
	unsigned  head, n, cap;
	bool      said_interruptible; /* its listener's waits, said once */
	bool      test_unrecorded;    /* a test switch (agent_inject_init) */
	struct seccomp_notif *kept[GS_AGENT_INJECT_KEPT];
	int       slot[GS_AGENT_INJECT_KEPT];
};

struct worker {
	struct gs_agent_container *c;
	int listener;
	uint32_t index;              /* the keeper's name for the listener */
	struct agent_inject inj;
	/* Joined by container id alone (crun 1.8.1 names no pid for an
	 * exec'd process), or resumed: its first caller must be of the
	 * container's cgroup before anything is performed for it. */
	bool unverified;
	struct gs_state_worker slot; /* its call in flight, in the state memfd */
	/* Its last RECV received nothing (EINTR, ENOENT): the next wait is a
	 * poll, which tells a hang-up (agent_sandbox.c, next_call). */
	bool recv_empty;
	struct gs_scratch scratch;
};

/* What a container is made from: the runtime's hello, or a state memfd. */
struct container_origin {
	const struct gs_agent_hello *h;
	const char *policy_name;
	bool uvm_mmap_traps;
	struct gs_agent_state *resumed;   /* NULL: a new container */
	int init_pidfd;                   /* resumed: the keeper's; -1: opened from the pid */
	/* Resumed: the sandbox's own RM clients the keeper holds (made by
	 * earlier agents), to retire. NULL: none. */
	const struct gs_kept_container *kept;
};

struct gs_agent_container *agent_make_container(struct gs_agent *a, const struct container_origin *o,
                                                struct gs_error *err);
int  agent_start_worker(struct gs_agent_container *c, int listener, uint32_t index, bool unverified,
                        struct gs_error *err);
void agent_kill_container(struct gs_agent_container *c);
void agent_release(struct gs_agent_container *c);
/* Does task tid have CAP_SYS_ADMIN in its bounding set (or is it not
 * readable)? Then no call of it may be performed. */
bool agent_may_hold_sys_admin(pid_t tid);
void agent_log_line(const char *id, const struct gs_error *err, const char *what);

#endif
