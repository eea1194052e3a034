/* SPDX-License-Identifier: MIT */
/*
 * agent_sandbox.h - the agent's containers: one sandbox per container id,
 * one worker thread per listener (the container's init and each exec'd
 * process has a filter, so a listener, of its own), torn down when the
 * last listener hangs up.
 */
#ifndef GPUSANDBOX_AGENT_SANDBOX_H
#define GPUSANDBOX_AGENT_SANDBOX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent_conn.h"
#include "driver.h"
#include "gs_error.h"
#include "policy.h"

struct gs_agent_container;
struct gs_keeper_link;

/* What every container of one agent shares. */
struct gs_agent {
	const char *policy_path;          /* --policy: containers whose metadata names none */
	const char *policy_dir;           /* --policy-dir: NAME.policy files */
	const char *audit_dir;            /* --audit-dir: one log per container; NULL: none */
	uint64_t audit_max_size;          /* --audit-max-size: rotate each log; 0: never */
	unsigned audit_max_files;         /* --audit-max-files */
	struct gs_driver driver;
	uint64_t trap_version;            /* the profile this agent would write */
	uint64_t trap_version_uvm_mmap;   /* the same with managed = deny's mmap traps */
	pthread_mutex_t lock;             /* the container list */
	struct gs_agent_container *containers;
	unsigned n_containers;
	atomic_uint handshakes;           /* connections being read (agent.c) */
	struct gs_keeper_link *keeper;    /* --keeper; NULL: no restart survival */
	bool recv_ends_at_hangup;         /* the workers wait in RECV itself (recv_probe.h) */
	/* --uvm-map as-user: a container whose init runs in a user namespace
	 * of its own, with an effective uid other than 0 as the host sees
	 * it, has its UVM maps made as that uid (own_rm.h map_uid): the
	 * operator says each such container's uids are its pod's alone, as
	 * Kubernetes user namespaces (hostUsers: false) give them. Others
	 * are mapped by dup. */
	bool uvm_map_as_user;
};

/* Loads and checks a policy for a container: only what the agent
 * enforces today may be in it (see agent.c). Returns 0 or -1 (err). */
int gs_agent_load_policy(const struct gs_agent *a, const char *path, struct gs_policy *p,
                         struct gs_error *err);

/* Serves the listener of hello: joins the sandbox of its container (same
 * id and same init) or makes one, and starts a worker on the listener.
 * policy_name is from the metadata ("" for the default), uvm_mmap_traps
 * whether the profile traps mmap for managed = deny: it must be so exactly
 * when the container's policy says managed = deny. Takes the listener in
 * every case (closed on failure). Returns 0 or -1 (err). */
int gs_agent_serve(struct gs_agent *a, struct gs_agent_hello *h, const char *policy_name,
                   bool uvm_mmap_traps, struct gs_error *err);

/* What is due every GS_METRICS_INTERVAL_MS: the containers' usage records
 * and, with metrics_path, the metrics file of all of them. */
int gs_agent_tick(struct gs_agent *a, const char *metrics_path, struct gs_error *err);

/* A stop waits this long in all for the calls in flight. */
#define GS_AGENT_STOP_DRAIN_MS 5000u
/* Before the agent exits on a stop: lets the calls in flight finish. Each
 * is performed and answered under its sandbox's lock, and a UVM map's
 * share of the workload's memory with our RM client is revoked after the
 * answer, under that lock still (executor.c, own_rm.h). An agent that
 * exited mid-call would leave the share naming our client, whose handle
 * dies with us and is anyone's to ask for: another process could then dup
 * the memory (tests/agent stalestop-runc). So the agent lock and every
 * sandbox's lock are taken and kept, never given back: the caller exits.
 * A call received meanwhile waits in its state slot for the next agent,
 * as after a SIGKILL; no container is made or torn down (its lock
 * destroyed) meanwhile. The wait is bounded in all, since a worker may
 * hold its lock in a read the workload stalls (gs_mutex_lock_within);
 * *late counts the sandboxes whose call was still in flight then.
 * Returns the containers served. */
unsigned gs_agent_drain_calls(struct gs_agent *a, unsigned *late);

#endif
