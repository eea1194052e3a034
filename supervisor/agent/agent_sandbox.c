/* SPDX-License-Identifier: MIT */
/*
 * agent_sandbox.c - one sandbox per container, one worker per listener.
 *
 * The sandbox is the command line's (sandbox.c, the executor, the ledger):
 * the same decoding, verdicts and quota. What differs is who drives it.
 * A container has one seccomp filter, so one listener, per process the
 * runtime started: its init and each `exec`. Each listener gets a worker
 * thread with its own scratch; the workers of a container take the sandbox
 * lock for each call, so the container's ledger sees one call at a time and
 * an exec'd process shares the quota of the init's tree.
 *
 * Tasks of a container: the agent did not launch them, so it has no process
 * tree to ask. The taskset is the container's cgroup, read from its init's
 * /proc/PID/cgroup when the sandbox is made (gs_taskset_cgroup): a pid is
 * the container's if its cgroup memberships are the same. It is also what
 * joins a second listener to a sandbox: the same container id AND the same
 * init (state.pid), so that two runtimes that reuse an id never share a
 * quota.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent_int.h"
#include "agent_inject.h"
#include "agent_sandbox.h"
#include "agent_uvm_map.h"
#include "agent_limits.h"
#include "detached.h"
#include "keeper_link.h"
#include "audit_policy.h"
#include "exec_managed.h"
#include "executor.h"
#include "gpu_uuid.h"
#include "gpusandbox.h"
#include "metrics.h"
#include "runner.h"
#include "session.h"
#include "stack.h"
#include "test_switch.h"


#define POLICY_SUFFIX ".policy"
#define AUDIT_SUFFIX ".jsonl"
#define ERR_BUF (GS_ERROR_MSG_MAX + 128)
/* How long the tick waits for a container's session or audit lock, with
 * the agent lock held (gs_agent_tick). */
#define METRICS_LOCK_WAIT_MS 2u

void agent_log_line(const char *id, const struct gs_error *err, const char *what)
{
	char buf[ERR_BUF] = "";

	if (err)
		gs_error_text(err, buf, sizeof(buf));
	fprintf(stderr, "gpusandbox agent: container %s: %s%s%s\n", id, what, err ? ": " : "", buf);
}

int gs_agent_load_policy(const struct gs_agent *a, const char *path, struct gs_policy *p,
                         struct gs_error *err)
{
	char diag[GS_POLICY_DIAG_MAX];

	gs_policy_init(p);
	/* One container's clients and files must not fill the fd table
	 * every container shares: bounded unless its policy says. */
	gs_agent_policy_defaults(p);
	if (gs_policy_load(path, p, diag, sizeof(diag)) < 0)
		return gs_fail(err, EINVAL, "policy %s: %s", path, diag);
	/* What the agent does not enforce is refused, never ignored: who
	 * the container runs as is the runtime's business. managed = deny is
	 * checked against the profile when a container comes (it needs the
	 * profile's mmap traps). sm is enforced (start_compute_share). */
	if (p->user[0] || p->group[0] || p->groups[0] || p->has_audit_log)
		return gs_fail(err, ENOTSUP, "policy %s: run-as and audit-log do not apply to containers "
		               "(the runtime sets the user; the agent's --audit-dir the log)", path);
	if (gs_resolve_gpu_uuids(&p->quota, err) < 0 || gs_driver_check_gpus(&a->driver, &p->quota, err) < 0)
		return -1;
	/* As the command line: managed = deny cannot hold where GPUs reach
	 * pageable memory, and then no container runs under it. */
	if (p->quota.managed == GS_MANAGED_DENY && gs_managed_check_host(gs_driver_uvm_major(), err) < 0)
		return -1;
	return 0;
}

/* Fail closed: a container whose calls can no longer be judged (or
 * audited) is killed, init and all (its pid namespace goes with it). */
void agent_kill_container(struct gs_agent_container *c)
{
	if (!atomic_exchange(&c->sb.failed, true))
		agent_log_line(c->id, &c->sb.thread_err, "supervision failed; killing the container");
	if (c->init_pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, c->init_pidfd, SIGKILL, NULL, 0);
}

/* Waits for a notification or the listener's hang-up (no task holds the
 * filter any more). Returns 1 (one to receive), 0 (hung up), -1 (error). */
static int wait_listener(int listener)
{
	for (;;) {
		struct pollfd p = { listener, POLLIN, 0 };
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p.revents & POLLIN)
			return 1;
		return 0;
	}
}

/* Before each RECV: 1 (receive), 0 (hung up), -1 (error). Where the
 * kernel ends a blocked RECV once no task holds the filter
 * (gs_recv_ends_at_hangup), the worker waits in RECV itself, as the
 * command line's runner does, and polls only after a RECV that received
 * nothing (issue #31: a poll per trapped call fewer). Sound: the poll
 * decided nothing but "wait" or "hung up": RECV hands out the same
 * notifications with or without it, and a hang-up ends a blocked RECV
 * with ENOENT (recv_wait_event: the filter has no users), after which
 * this poll sees POLLHUP without POLLIN and the worker leaves, as before.
 * A kernel without that wake-up keeps the poll before every RECV: there a
 * RECV blocked at the hang-up would never return. */
static int next_call(struct worker *w)
{
	if (w->c->agent->recv_ends_at_hangup && !w->recv_empty)
		return 1;
	return wait_listener(w->listener);
}

/* A listener that joined by id alone whose caller is not of the
 * container's cgroup: another container reusing the id (two runtimes, two
 * state roots). Nothing is performed for it: the call fails as if no agent
 * listened, the caller is killed, and the worker leaves (its listener
 * closes, so every later trapped call fails the same way). */
static void refuse_stranger(struct worker *w)
{
	struct seccomp_notif_resp *resp = w->scratch.resp;
	pid_t pid = (pid_t)w->scratch.req->pid;
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	memset(resp, 0, w->scratch.resp_size);
	resp->id = w->scratch.req->id;
	resp->error = -ENOSYS;
	(void)ioctl(w->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	if (fd >= 0) {
		(void)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
		close(fd);
	}
	fprintf(stderr, "gpusandbox agent: container %s: an exec'd process (pid %d) is not of the "
	        "container's cgroup; refused and killed\n", w->c->id, (int)pid);
}

/* Does task tid have CAP_SYS_ADMIN in its bounding set (or is it not
 * readable)? The driver trusts a caller holding CAP_SYS_ADMIN beyond any
 * quota's reach, and the calls the executor continues run as the caller.
 * The bounding set, not the effective one: it never grows, and anything
 * in it can become effective through an exec (a set-uid file) unless
 * NO_NEW_PRIVS. A thread's capabilities are its own and a tid can be
 * reused: a caller's answer is remembered only by a pidfd of the task
 * read (caller_may_hold_sys_admin). */
#define CAP_LINE "CapBnd:"
#define CAP_VALUE_MAX 32
bool agent_may_hold_sys_admin(pid_t tid)
{
	char value[CAP_VALUE_MAX];
	unsigned long long bnd = ~0ull;
	bool found = gs_proc_status_field(tid, CAP_LINE, value, sizeof(value)) &&
	             sscanf(value, "%llx", &bnd) == 1;

	return !found || (bnd & (1ull << CAP_SYS_ADMIN));
}

/* agent_may_hold_sys_admin for the caller of notification id, remembered
 * per task (issue #31: it read /proc/TID/status at every call). A "no" is
 * kept as a mark on the task's slot in the worker's kept answer memory
 * (mm_keep.h), with a pidfd opened BEFORE the status was read and found
 * alive after it: then the read was of the pidfd's task. A later call of
 * tid takes the kept "no" only while the slot's task is still alive: a
 * live task's tid names no other, so a tid reused by a new task (the old
 * one exited: its pidfd is readable) is read again. That one look at the
 * slot's pidfd also spares the kept answer memory's own (issue #31: two
 * polls per call before). Safe to keep: a bounding set never gains a
 * capability (capset and PR_CAPBSET_DROP only drop, an exec keeps it); a
 * new user namespace gives its creator a full set there, but the driver
 * asks for CAP_SYS_ADMIN in the initial one (capable()), which no task of
 * a container can enter again. A "yes" fails the container anyway and is
 * never kept. Without thread pidfds (before Linux 6.9) a thread other
 * than a leader has none: read each time, as before. */
static bool caller_may_hold_sys_admin(struct worker *w, pid_t tid, uint64_t id)
{
	struct gs_mm_keep *k = &w->scratch.mms;
	const void *owner = &w->c->sb;

	if (gs_mm_keep_marks(k, owner, tid, id) & GS_MM_KEEP_NO_SYS_ADMIN)
		return false;
	int pidfd = pidfd_of_task(tid);
	bool may = agent_may_hold_sys_admin(tid);
	if (!may && pidfd >= 0 && !gs_pidfd_exited(pidfd))
		gs_mm_keep_mark(k, owner, tid, id, pidfd, GS_MM_KEEP_NO_SYS_ADMIN);
	else if (pidfd >= 0)
		close(pidfd);
	return may;
}

/* One call from one listener, under the sandbox lock. Returns -1 when the
 * container must not go on, 1 when this listener must be dropped. */
static int serve_received(struct worker *w);

static int serve_one(struct worker *w)
{
	struct gs_session *sb = &w->c->sb;
	struct gs_scratch *s = &w->scratch;

	memset(s->req, 0, s->req_size);
	s->listener = w->listener;
	w->recv_empty = false;
	if (ioctl(w->listener, SECCOMP_IOCTL_NOTIF_RECV, s->req) < 0) {
		/* ENOENT: the task went away between poll and receive, or no
		 * task holds the filter any more (next_call). */
		if (errno == EINTR || errno == ENOENT) {
			w->recv_empty = true;
			return 0;
		}
		return gs_fail(&sb->thread_err, errno, "receiving a seccomp notification");
	}
	/* Before anything else: RECV marked it sent, and after a restart
	 * only this record names it (agent_resume.c). */
	if (w->c->stateful)
		gs_state_received(&w->c->state, w->slot.slot, s->req);
	int rc = serve_received(w);
	if (w->c->stateful)
		gs_state_answered(&w->c->state, w->slot.slot);
	/* Then those the receiver of an injection kept meanwhile. */
	return rc == 0 ? agent_inject_serve_kept(w, serve_received) : rc;
}

/* serve_one's call, received. */
static int serve_received(struct worker *w)
{
	struct gs_session *sb = &w->c->sb;
	struct gs_scratch *s = &w->scratch;
	bool failed;

	if (caller_may_hold_sys_admin(w, (pid_t)s->req->pid, s->req->id)) {
		/* Gone meanwhile: nothing to answer. */
		if (ioctl(w->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &s->req->id) < 0)
			return 0;
		return gs_fail(&sb->thread_err, EPERM, "task %d may hold CAP_SYS_ADMIN (its bounding "
		               "set has it): the driver would trust it beyond any quota",
		               (int)s->req->pid);
	}
	if (w->unverified) {
		if (!gs_taskset_contains(&sb->tasks, (pid_t)s->req->pid)) {
			refuse_stranger(w);
			return 1;
		}
		w->unverified = false;
	}
	memset(s->resp, 0, s->resp_size);
	pthread_mutex_lock(&sb->lock);
	sb->notifications++;
	gs_execute_notification(sb, s);
	failed = sb->audit_failed;
	pthread_mutex_unlock(&sb->lock);
	if (failed)
		return gs_fail(&sb->thread_err, EIO, "writing the audit log failed");
	return 0;
}

/* Every listener hung up: no task holds the filters any more, but the
 * release of the files they had open can trail the hang-up (measured: the
 * summary sometimes still showed the container's charges with runc). The
 * ledger is brought up to date until nothing is charged, for a bounded
 * time; charges still held then (a file passed to a process outside the
 * container) stay in the summary, which is the safe side. */
#define RELEASE_WAIT_STEPS 50
#define RELEASE_WAIT_NS 20000000L  /* 20 ms: 1 s in all */
static void reconcile_released(struct gs_session *sb)
{
	struct timespec step = { 0, RELEASE_WAIT_NS };

	for (int i = 0; i < RELEASE_WAIT_STEPS; i++) {
		bool charged = false;
		gs_session_reconcile(sb);
		for (unsigned g = 0; g < GS_MAX_GPUS; g++)
			charged |= sb->ledger.used[g] != 0;
		if (!charged)
			return;
		nanosleep(&step, NULL);
	}
}

/* What its searches for fd-table sharers compared: tests/agent's thread
 * storm reads it (a container's searches compare none of another's
 * tasks), as an operator may. */
static void log_walks(const struct gs_agent_container *c)
{
	const struct gs_walk_stats *w = &c->sb.walk_stats;
	char what[GS_ERROR_MSG_MAX];

	snprintf(what, sizeof(what), "sharer searches=%" PRIu64 " unbounded=%" PRIu64
	         " tasks_compared=%" PRIu64 " most_in_one=%" PRIu64,
	         atomic_load(&w->walks), atomic_load(&w->unbounded), atomic_load(&w->tasks),
	         atomic_load(&w->most));
	agent_log_line(c->id, NULL, what);
}

static void teardown(struct gs_agent_container *c)
{
	/* First: channels the duty cycle holds off come back on, and the
	 * container leaves its GPUs' plans, so the others re-plan now rather
	 * than after the release wait. */
	gs_sm_stop(&c->sm);
	/* A compute share that could not keep its cap killed the container
	 * itself (gs_session_kill_workload): say why here too. */
	if (c->sm.err.msg[0])
		agent_log_line(c->id, &c->sm.err, "the compute share failed; the container was killed");
	reconcile_released(&c->sb);
	(void)gs_session_note_exports_left(&c->sb);
	/* The agent does not learn exit statuses: -1, no signal. */
	gs_session_summarize(&c->sb, -1, 0);
	if (c->sb.audit_failed)
		agent_log_line(c->id, NULL, "writing the audit summary failed");
	log_walks(c);
	agent_inject_log(c);
	agent_log_line(c->id, NULL, "torn down (every listener hung up)");
	gs_session_fini(&c->sb);
	if (c->audited)
		gs_audit_close(&c->audit);
	if (c->init_pidfd >= 0)
		close(c->init_pidfd);
	if (c->stateful)
		gs_state_close(&c->state);
	free(c);
}

/* The last worker out unlinks and frees its container, under the agent
 * lock, so that a listener arriving meanwhile makes a new sandbox. */
void agent_release(struct gs_agent_container *c)
{
	struct gs_agent *a = c->agent;
	bool last;

	pthread_mutex_lock(&a->lock);
	last = --c->listeners == 0;
	if (last) {
		for (struct gs_agent_container **p = &a->containers; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
		a->n_containers--;
		/* The keeper lets its fds go (a restart must not resume it). */
		if (a->keeper)
			gs_keeper_link_drop(a->keeper, c->id);
	}
	pthread_mutex_unlock(&a->lock);
	if (last)
		teardown(c);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int rc;

	while ((rc = next_call(w)) > 0) {
		int served = serve_one(w);
		if (served < 0 || atomic_load(&w->c->sb.failed)) {
			agent_kill_container(w->c);
			break;
		}
		if (served > 0)
			break;
	}
	if (rc < 0) {
		gs_fail(&w->c->sb.thread_err, errno, "waiting on the listener");
		agent_kill_container(w->c);
	}
	agent_inject_fini(w);
	close(w->listener);
	gs_scratch_fini(&w->scratch);
	if (w->c->stateful) {
		pthread_mutex_lock(&w->c->sb.lock);
		gs_state_slot_release(&w->c->state, w->slot.slot);
		pthread_mutex_unlock(&w->c->sb.lock);
	}
	agent_release(w->c);
	free(w);
	return NULL;
}

int agent_start_worker(struct gs_agent_container *c, int listener, uint32_t index, bool unverified,
                       struct gs_error *err)
{
	struct worker *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return gs_fail(err, ENOMEM, "allocating a worker");
	if (gs_scratch_init(&w->scratch, err) < 0) {
		free(w);
		return -1;
	}
	/* Its dups are kept for this container only (dupcache.h); without
	 * the janitor none is kept. */
	(void)gs_dup_cache_attach(&w->scratch.dups, &c->sb);
	w->c = c;
	w->listener = listener;
	w->unverified = unverified;
	w->index = index;
	agent_inject_init(w);
	w->slot.slot = GS_STATE_NO_SLOT;
	if (c->stateful) {
		/* Its call in flight goes into a slot of the state memfd; the
		 * executor says which handle an RM_ALLOC is making. */
		w->slot.st = &c->state;
		pthread_mutex_lock(&c->sb.lock);
		w->slot.slot = gs_state_slot_claim(&c->state, index);
		pthread_mutex_unlock(&c->sb.lock);
		if (w->slot.slot == GS_STATE_NO_SLOT)
			agent_log_line(c->id, NULL, "no state slot left for a listener: a call it has in "
			               "flight when the agent restarts stays unanswered");
		w->scratch.before_alloc = gs_state_before_alloc;
		w->scratch.before_answer = gs_state_before_answer;
		w->scratch.flight_ctx = &w->slot;
	}
	gs_listener_sync_wakeup(listener);
	rc = gs_spawn_detached(worker_main, w);
	if (rc) {
		gs_scratch_fini(&w->scratch);
		free(w);
		return gs_fail(err, rc, "starting a worker");
	}
	return 0;
}

/* The log's file name: POD_NAMESPACE_CONTAINER-ID.jsonl when Kubernetes
 * names it (the kubelet's /var/log/containers convention, so the two sort
 * alike; '_' is in no Kubernetes name, so the parts cannot run together),
 * else ID.jsonl. A name over NAME_MAX falls back to ID.jsonl. Every part is
 * a plain name (agent_conn.c), so the file stays in DIR. */
static int audit_path(const struct gs_agent_container *c, char *path, size_t len)
{
	const struct gs_agent_k8s *k = &c->k8s;
	char name[NAME_MAX + 1];
	int n = -1;

	if (k->pod[0] && k->pod_namespace[0] && k->container[0])
		n = snprintf(name, sizeof(name), "%s_%s_%s-%s" AUDIT_SUFFIX, k->pod, k->pod_namespace,
		             k->container, c->id);
	if (n < 0 || n >= (int)sizeof(name))
		snprintf(name, sizeof(name), "%s" AUDIT_SUFFIX, c->id);
	return snprintf(path, len, "%s/%s", c->agent->audit_dir, name) >= (int)len ? -1 : 0;
}

/* The start record's labels: the container id, and who the container is
 * to Kubernetes where the runtime said (labels, not new fields: the
 * record's schema is the command line's). */
static void audit_labels(const struct gs_agent_container *c, struct gs_audit_labels *l)
{
	const struct { const char *key, *value; } pairs[] = {
		{ "container.id", c->id },
		{ "kubernetes.pod.name", c->k8s.pod },
		{ "kubernetes.pod.namespace", c->k8s.pod_namespace },
		{ "kubernetes.pod.uid", c->k8s.pod_uid },
		{ "kubernetes.container.name", c->k8s.container },
	};
	char kv[GS_LABEL_KEY_MAX + GS_LABEL_VALUE_MAX];
	const char *why;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (!pairs[i].value[0])
			continue;
		snprintf(kv, sizeof(kv), "%s=%s", pairs[i].key, pairs[i].value);
		/* Plain names under 256 bytes (agent_conn.h): always valid. */
		if (gs_audit_label_add(l, kv, &why) < 0)
			agent_log_line(c->id, NULL, why);
	}
}

/* A resumed container's log goes on: its chain is taken up after the dead
 * agent's last record (no second start record), or, when that agent sealed
 * it, a new chain begins under a new sandbox id. True when it goes on. */
static bool audit_goes_on(struct gs_agent_container *c, const char *path)
{
	int rc = gs_audit_resume_chain(&c->audit, path);

	if (rc == GS_AUDIT_CHAIN_SEALED) {
		gs_session_make_id(c->sb.id, sizeof(c->sb.id));
		snprintf(c->audit.sandbox_id, sizeof(c->audit.sandbox_id), "%s", c->sb.id);
	}
	return rc == GS_AUDIT_CHAIN_GOES_ON;
}

/* The init's real uid as the host sees it (a user namespace's root is its
 * mapped uid here), or -1; and its working directory as /proc shows it to
 * the agent. Read once, for the start record: who the container ran as,
 * never a ground for a decision. */
static long init_uid(pid_t init)
{
	uid_t real, effective;

	return gs_proc_uids(init, &real, &effective) ? (long)real : -1;
}

static bool init_cwd(pid_t init, char *buf, size_t len)
{
	char link[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)init);
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

static int open_audit(struct gs_agent_container *c, bool resumed, const char *policy_path,
                      struct gs_error *err)
{
	const struct gs_agent *a = c->agent;
	struct gs_audit_labels labels = { 0 };
	char path[PATH_MAX];
	char *argv[] = { "container", c->id, NULL };

	if (!a->audit_dir)
		return 0;
	if (audit_path(c, path, sizeof(path)) < 0)
		return gs_fail(err, ENAMETOOLONG, "the audit log's path is too long");
	if (gs_audit_open(&c->audit, path, c->sb.id, err) < 0)
		return -1;
	/* Append-only where the file system allows (audit_guard.h). Nothing
	 * to mask: the runtime makes the container's mount namespace, and the
	 * log lives on the host, outside it unless the container mounts its
	 * directory (docs/security/audit-log.md). */
	gs_audit_guard_file(&c->audit.guard, c->audit.fd);
	gs_audit_guard_no_mask(&c->audit.guard, "the container's mount namespace is the runtime's; "
	                                        "the log's directory is on the host");
	if (a->audit_max_size && gs_audit_set_rotation(&c->audit, path, a->audit_max_size,
	                                               a->audit_max_files, err) < 0) {
		/* Nothing written yet: no seal for a log that never began. */
		close(c->audit.fd);
		c->audit.fd = -1;
		return -1;
	}
	if (c->policy.has_audit_level)
		c->audit.level = c->policy.audit_level;
	c->audited = true;
	c->sb.audit = &c->audit;
	/* Refusals carry their call stacks unless the policy turns them off. */
	c->sb.stacks = (!c->policy.has_audit_stacks || c->policy.audit_stacks) && gs_stack_available();
	if (resumed && audit_goes_on(c, path))
		return 0;
	audit_labels(c, &labels);
	char cwd[PATH_MAX];
	bool has_cwd = init_cwd(c->init, cwd, sizeof(cwd));
	/* The start record names the container's init and id, its uid and
	 * working directory, and the node policy's file (its SHA-256). */
	const struct gs_audit_start start = {
		.child = c->init, .argv = argv, .quota = &c->policy.quota, .rules = &c->policy.rules,
		.driver = &a->driver, .stacks = c->sb.stacks, .labels = &labels,
		.uid = init_uid(c->init), .cwd = has_cwd ? cwd : NULL, .policy_file = policy_path,
		.uvm_map_as_user = gs_own_rm_maps_as_user(&c->sb.own),
	};
	if (gs_audit_start(&c->audit, &start) < 0)
		return gs_fail(err, EIO, "writing the audit log's start record");
	return 0;
}

static int node_policy(struct gs_agent_container *c, const char *policy_name, char *path,
                       size_t len, struct gs_error *err)
{
	const struct gs_agent *a = c->agent;

	if (policy_name[0]) {
		if (!a->policy_dir)
			return gs_fail(err, ENOENT, "the profile names policy %s but the agent has no "
			               "--policy-dir", policy_name);
		if (snprintf(path, len, "%s/%s" POLICY_SUFFIX, a->policy_dir, policy_name) >= (int)len)
			return gs_fail(err, ENAMETOOLONG, "the policy's path is too long");
	} else if (!a->policy_path) {
		return gs_fail(err, ENOENT, "the profile names no policy and the agent has no --policy");
	} else if (snprintf(path, len, "%s", a->policy_path) >= (int)len) {
		return gs_fail(err, ENAMETOOLONG, "the policy's path is too long");
	}
	return gs_agent_load_policy(a, path, &c->policy, err);
}

/* The policy of a new container: NAME.policy in --policy-dir when the
 * metadata names one, else --policy; neither is an error (no container
 * runs without limits it was meant to have). Then the container's own
 * request (gpusandbox.io/mem, gpusandbox.io/sm) within it: it can only
 * lower the node's limits, and one that cannot be read or asks for more
 * refuses the container (agent_request.h). */
static int container_policy(struct gs_agent_container *c, const char *policy_name, char *path,
                            size_t len, struct gs_error *err)
{
	if (node_policy(c, policy_name, path, len, err) < 0)
		return -1;
	return gs_agent_apply_request(&c->policy.quota, &c->request, err);
}

/* managed = deny acts on trapped mmaps: a profile without the mmap traps
 * would let managed ranges be made unseen, and one with them under another
 * policy would send the executor mmaps it does not decide (it refuses
 * them, ENOSYS). Either way the container must not run. */
static int profile_fits_policy(const struct gs_agent_container *c, bool uvm_mmap_traps,
                               struct gs_error *err)
{
	bool deny = c->policy.quota.managed == GS_MANAGED_DENY;

	if (deny && !uvm_mmap_traps)
		return gs_fail(err, EPROTO, "the policy says managed = deny but the profile does not trap "
		               "mmap: make it with gpusandbox profile --policy FILE");
	if (!deny && uvm_mmap_traps)
		return gs_fail(err, EPROTO, "the profile traps mmap (made for managed = deny) but the "
		               "policy does not deny managed memory");
	return 0;
}

/* sm in the policy: the compute share starts as the command line's does,
 * after the start record (which holds the sm mode) and before any call of
 * the container is served (the first listener's worker starts after). Its
 * thread takes the sandbox lock only with a bound (compute_share.c,
 * lock_soon), so a worker the workload stalls never holds it up. A
 * container resumed after a restart starts it again: the coordinator
 * re-plans it as a newcomer. */
static int start_compute_share(struct gs_agent_container *c, struct gs_error *err)
{
	if (c->policy.quota.sm_percent >= GS_SM_UNLIMITED)
		return 0;
	return gs_sm_start(&c->sm, &c->sb, err);
}

/* With a keeper: the container's state memfd, made when its sandbox is
 * (new), or the one it was resumed from, checked against the policy now
 * on disk (a changed policy is applied from now on, and said). */
static int container_state(struct gs_agent_container *c, const struct container_origin *o,
                           const char *policy_path, struct gs_error *err)
{
	const struct gs_agent *a = c->agent;
	struct gs_state_ident ident = { 0 };
	uint64_t hash = gs_state_hash_file(policy_path);

	if (!a->keeper)
		return 0;
	if (o->resumed) {
		c->state = *o->resumed;
		c->stateful = true;
		if (c->state.hdr->ident.policy_hash != hash)
			agent_log_line(c->id, NULL, "its policy changed on disk while no agent ran: the new "
			               "text applies from now on");
		return 0;
	}
	snprintf(ident.id, sizeof(ident.id), "%s", c->id);
	snprintf(ident.sandbox_id, sizeof(ident.sandbox_id), "%s", c->sb.id);
	snprintf(ident.policy_name, sizeof(ident.policy_name), "%s", o->policy_name);
	ident.init_pid = c->init;
	ident.policy_hash = hash;
	ident.uvm_mmap_traps = o->uvm_mmap_traps;
	ident.trap_version = o->uvm_mmap_traps ? a->trap_version_uvm_mmap : a->trap_version;
	ident.k8s = c->k8s;
	ident.request = c->request;
	if (gs_state_create(&c->state, &ident, err) < 0)
		return -1;
	c->stateful = true;
	return 0;
}

/* A client's release watch goes to the keeper too (its epoll set holds no
 * reference on the file), so that after a restart the ledger still learns
 * of the files closed meanwhile. Under the sandbox lock. */
static void keep_client_watch(void *ctx, uint32_t client, bool gone)
{
	struct gs_agent_container *c = ctx;
	int tfd, epfd;

	if (gone) {
		gs_keeper_link_unwatch(c->agent->keeper, c->id, client);
		return;
	}
	epfd = ledger_client_watch(&c->sb.ledger, client, &tfd);
	if (epfd >= 0)
		gs_keeper_link_watch(c->agent->keeper, c->id, client, tfd, epfd);
}

/* The sandbox's own RM client goes to the keeper as soon as it is made,
 * before any share names it: a map shares the workload's memory with that
 * client's handle until the answer is sent (own_rm.h), and an agent killed
 * in between would leave the handle free for anyone to take. Held by the
 * keeper, the client lives until the container is dropped; a resumed
 * agent frees what it held (gs_own_rm_retire) and makes its own. Under
 * the sandbox lock. */
static void keep_own_client(void *ctx, int ctl_fd, nv_handle_t client)
{
	struct gs_agent_container *c = ctx;

	gs_keeper_link_own_client(c->agent->keeper, c->id, client, ctl_fd);
}

static void log_unbounded(const struct gs_agent_container *c, const char *why)
{
	char what[GS_ERROR_MSG_MAX];

	snprintf(what, sizeof(what), "its fd-table sharer searches walk every task of the host: %s", why);
	agent_log_line(c->id, NULL, what);
}

/* Earlier agents' own clients stay in the keeper (their handles taken);
 * what they held goes (gs_own_rm_retire). Ours is made when first needed,
 * and handed over then. */
static void own_client_of(struct gs_agent_container *c, const struct container_origin *o)
{
	for (unsigned i = 0; o->kept && i < o->kept->n_own; i++)
		gs_own_rm_retire(o->kept->own[i].fd, o->kept->own[i].client);
	/* GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT, in the agent's own environment:
	 * the client is not handed over, as before, so that tests/agent
	 * stalekill-runc's baseline shows what keeping it prevents. Never
	 * for use. */
	if (gs_test_switch("GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT"))
		return;
	c->sb.own.on_client = keep_own_client;
	c->sb.own.on_client_ctx = c;
	/* Held by the keeper until the container is dropped: its maps may
	 * share each workload client once (own_rm.h). */
	c->sb.own.share_clients = true;
}

/* --uvm-map as-user: this container's maps as its uid, where it can be
 * its own (agent_uvm_map.h); said on stderr either way. */
static void container_uvm_map(struct gs_agent_container *c, struct gs_session_config *cfg)
{
	const char *why = NULL;

	if (!c->agent->uvm_map_as_user)
		return;
	cfg->uvm_map_as_user = agent_container_map_uid(c->init, c->init_pidfd, &cfg->uvm_map_uid, &why);
	if (cfg->uvm_map_as_user)
		fprintf(stderr, "gpusandbox agent: container %s: UVM maps made as uid %u (--uvm-map as-user)\n",
		        c->id, (unsigned)cfg->uvm_map_uid);
	else
		fprintf(stderr, "gpusandbox agent: container %s: UVM maps by dup: %s\n", c->id, why);
}

struct gs_agent_container *agent_make_container(struct gs_agent *a, const struct container_origin *o,
                                                struct gs_error *err)
{
	const struct gs_agent_hello *h = o->h;
	struct gs_agent_container *c = calloc(1, sizeof(*c));
	struct gs_session_config cfg = { 0 };
	char policy_path[PATH_MAX];

	if (!c) {
		gs_fail(err, ENOMEM, "allocating a container");
		return NULL;
	}
	c->agent = a;
	c->init = h->init_pid;
	c->init_pidfd = o->init_pidfd >= 0 ? o->init_pidfd : (int)syscall(SYS_pidfd_open, c->init, 0);
	snprintf(c->id, sizeof(c->id), "%s", h->id);
	c->k8s = h->k8s;
	c->request = h->request;
	if (c->k8s.dropped[0])
		fprintf(stderr, "gpusandbox agent: container %s: annotation %s is not a plain name: "
		        "not recorded\n", c->id, c->k8s.dropped);
	if (c->init_pidfd < 0) {
		gs_fail(err, errno, "opening the container's init (pid %d)", (int)c->init);
		goto fail;
	}
	if (container_policy(c, o->policy_name, policy_path, sizeof(policy_path), err) < 0 ||
	    profile_fits_policy(c, o->uvm_mmap_traps, err) < 0)
		goto fail;
	cfg.quota = c->policy.quota;
	cfg.driver = &a->driver;
	cfg.rules = &c->policy.rules;
	container_uvm_map(c, &cfg);
	/* A resumed container keeps its sandbox id (its audit log goes on). */
	cfg.id = o->resumed ? o->resumed->hdr->ident.sandbox_id : NULL;
	/* No listener of its own: each worker answers on its own. */
	if (gs_session_init(&c->sb, &cfg, -1, err) < 0)
		goto fail;
	c->sb.workload = c->init;
	c->sb.workload_pidfd = c->init_pidfd;
	/* Our client dies with this agent unless the keeper holds it
	 * (own_client_of): until then, a share per map, revoked after it. */
	c->sb.own.share_clients = false;
	if (gs_taskset_cgroup(&c->sb.tasks, c->init) < 0) {
		gs_fail(err, errno, "reading the cgroup of the container's init (pid %d)", (int)c->init);
		goto fail_sandbox;
	}
	/* Its searches for fd-table sharers look at its own tasks only,
	 * where that is sound (agent_limits.h): then nothing another
	 * container runs is compared, nor waited for. */
	const char *unbounded_why = NULL;
	if (!gs_agent_bound_walk(&c->sb.tasks, c->init, agent_may_hold_sys_admin, &unbounded_why))
		log_unbounded(c, unbounded_why);
	if (container_state(c, o, policy_path, err) < 0)
		goto fail_sandbox;
	if (open_audit(c, o->resumed != NULL, policy_path, err) < 0)
		goto fail_state;
	if (c->stateful) {
		gs_state_attach(&c->state, &c->sb.ledger);
		c->state.on_client = keep_client_watch;
		c->state.on_client_ctx = c;
		own_client_of(c, o);
	}
	if (start_compute_share(c, err) < 0)
		goto fail_state;
	/* No worker yet: the lock is free, and the tick has figures to fall
	 * back on from the start. */
	gs_metrics_snapshot(&c->metrics, &c->sb, c->id);
	return c;
fail_state:
	if (c->stateful && !o->resumed)
		gs_state_close(&c->state);
fail_sandbox:
	gs_session_fini(&c->sb);
	if (c->audited)
		gs_audit_close(&c->audit);
fail:
	/* A pidfd the caller gave stays the caller's (to kill with). */
	if (c->init_pidfd >= 0 && o->init_pidfd < 0)
		close(c->init_pidfd);
	free(c);
	return NULL;
}

static struct gs_agent_container *find_container(struct gs_agent *a, const char *id)
{
	for (struct gs_agent_container *c = a->containers; c; c = c->next)
		if (strcmp(c->id, id) == 0)
			return c;
	return NULL;
}

/* Under the agent lock: the container this listener belongs to, with one
 * more listener counted, or NULL (err). */
static struct gs_agent_container *attach(struct gs_agent *a, const struct gs_agent_hello *h,
                                         const char *policy_name, bool uvm_mmap_traps, bool *made,
                                         bool *unverified, struct gs_error *err)
{
	struct gs_agent_container *c = find_container(a, h->id);

	*made = false;
	*unverified = c && h->init_pid <= 0;
	if (!c && h->init_pid <= 0) {
		gs_fail(err, EPROTO, "the state names no init pid and container %s is not served", h->id);
		return NULL;
	}
	if (c) {
		/* An exec'd process: same container only if the same init, or
		 * (no init named) if its first caller is of the cgroup. */
		if ((h->init_pid > 0 && c->init != h->init_pid) || atomic_load(&c->sb.failed)) {
			gs_fail(err, EEXIST, "container id %s is already served for another init (pid %d)",
			        h->id, (int)c->init);
			return NULL;
		}
		if (profile_fits_policy(c, uvm_mmap_traps, err) < 0)
			return NULL;
		c->listeners++;
		return c;
	}
	const struct container_origin o = { h, policy_name, uvm_mmap_traps, NULL, -1, NULL };
	c = agent_make_container(a, &o, err);
	if (!c)
		return NULL;
	c->listeners = 1;
	c->next = a->containers;
	a->containers = c;
	a->n_containers++;
	*made = true;
	if (a->keeper)
		gs_keeper_link_container(a->keeper, c->id, c->init_pidfd, c->state.memfd);
	return c;
}

int gs_agent_serve(struct gs_agent *a, struct gs_agent_hello *h, const char *policy_name,
                   bool uvm_mmap_traps, struct gs_error *err)
{
	struct gs_agent_container *c;
	bool made, unverified;

	uint32_t index = 0;

	pthread_mutex_lock(&a->lock);
	c = attach(a, h, policy_name, uvm_mmap_traps, &made, &unverified, err);
	if (c && c->stateful) {
		/* The keeper holds the listener from now on (in order after its
		 * container: both under the agent lock). */
		index = c->state.hdr->next_listener_index++;
		gs_keeper_link_listener(a->keeper, c->id, index, h->listener);
	}
	pthread_mutex_unlock(&a->lock);
	if (!c) {
		close(h->listener);
		return -1;
	}
	if (made)
		fprintf(stderr, "gpusandbox agent: container %s: sandbox %s, init pid %d%s%s%s%s\n", c->id,
		        c->sb.id, (int)c->init, c->request.mem[0] ? ", " GS_REQUEST_MEM_KEY "=" : "",
		        c->request.mem, c->request.sm[0] ? ", " GS_REQUEST_SM_KEY "=" : "", c->request.sm);
	else /* an exec: its process is asked for CAP_SYS_ADMIN too */
		gs_taskset_walk_joined(&c->sb.tasks);
	if (agent_start_worker(c, h->listener, index, unverified, err) < 0) {
		close(h->listener);
		agent_kill_container(c);
		agent_release(c);
		return -1;
	}
	h->listener = -1;
	return 0;
}

unsigned gs_agent_drain_calls(struct gs_agent *a, unsigned *late)
{
	const uint64_t until = gs_monotonic_ns() + (uint64_t)GS_AGENT_STOP_DRAIN_MS * 1000000ull;

	*late = 0;
	pthread_mutex_lock(&a->lock);
	for (struct gs_agent_container *c = a->containers; c; c = c->next) {
		const uint64_t now = gs_monotonic_ns();
		const unsigned left = now < until ? (unsigned)((until - now) / 1000000ull) : 0;
		if (!gs_mutex_lock_within(&c->sb.lock, left))
			(*late)++;
	}
	return a->n_containers;
}

/* The metrics' pod labels (gpusandbox_sandbox_info): the names the runtime
 * gave, recorded only, as in the audit log. */
static void metrics_name_pod(struct gs_metrics_snap *m, const struct gs_agent_k8s *k)
{
	snprintf(m->pod, sizeof(m->pod), "%s", k->pod);
	snprintf(m->pod_namespace, sizeof(m->pod_namespace), "%s", k->pod_namespace);
	snprintf(m->container_name, sizeof(m->container_name), "%s", k->container);
}

/* Every GS_METRICS_INTERVAL_MS: each container's usage records that are
 * due, and the metrics file of all of them (snapshots under the agent
 * lock, so no container is freed meanwhile; written after it). The agent
 * lock is held here, and every arrival and teardown waits for it, so no
 * session lock is waited on for long: a worker holds one while it reads
 * its workload's memory, which the workload can stall (a page of a FUSE
 * file it serves), and its audit lock while it reads a refused task's
 * stack, at an address the workload chose. A container whose locks do not
 * come within METRICS_LOCK_WAIT_MS keeps its last figures for this write,
 * and its usage records wait for the next tick. */
int gs_agent_tick(struct gs_agent *a, const char *metrics_path, struct gs_error *err)
{
	struct gs_metrics_snap *snaps = NULL;
	unsigned n = 0;
	int rc = 0;

	pthread_mutex_lock(&a->lock);
	if (metrics_path)
		snaps = calloc(a->n_containers ? a->n_containers : 1, sizeof(*snaps));
	for (struct gs_agent_container *c = a->containers; c; c = c->next) {
		if (c->audited && gs_audit_tick_within(&c->audit, METRICS_LOCK_WAIT_MS) < 0)
			c->sb.audit_failed = true;
		if (!snaps)
			continue;
		(void)gs_metrics_snapshot_within(&c->metrics, &c->sb, c->id, METRICS_LOCK_WAIT_MS);
		snaps[n] = c->metrics;
		metrics_name_pod(&snaps[n++], &c->k8s);
	}
	pthread_mutex_unlock(&a->lock);
	if (metrics_path)
		rc = snaps ? gs_metrics_write(metrics_path, snaps, n, err)
		           : gs_fail(err, ENOMEM, "--metrics-file %s", metrics_path);
	free(snaps);
	return rc;
}
