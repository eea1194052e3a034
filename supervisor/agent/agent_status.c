/* SPDX-License-Identifier: MIT */
/*
 * agent_status.c - the agent's status socket (agent_status.h).
 *
 * Security (also docs/security/quota-request.md):
 * - Who may ask: the socket is 0600 (root's, agent_conn.c gs_agent_listen),
 *   and a peer whose uid is not 0 in the agent's user namespace is closed
 *   unanswered (SO_PEERCRED): a container's root in a user namespace of its
 *   own is another uid here. The socket is not the runtime's (--socket):
 *   nothing a container does reaches it, and it is never mounted into
 *   containers (deploy/daemonset.yaml mounts it in the agent's pod only).
 * - What it reads: nothing. The connection is written to and closed, so no
 *   request, however made, can steer the agent; the document holds names
 *   and figures the operator may see anyway (the audit logs, the metrics).
 * - What it cannot do: hold the agent up. The figures are copied under the
 *   agent lock (every arrival and teardown waits for it), each container's
 *   session lock only within STATUS_LOCK_WAIT_MS (a worker may hold it in a
 *   read the workload stalls; then its last tick's figures are shown), and
 *   the document is built and written after the lock is given back, on the
 *   status thread, with a send timeout: a peer that does not read costs
 *   that thread STATUS_SEND_TIMEOUT_S, never a container's call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent_int.h"
#include "agent_sandbox.h"
#include "agent_status.h"
#include "detached.h"
#include "gpusandbox.h"

#define STATUS_LOCK_WAIT_MS 2u
#define STATUS_SEND_TIMEOUT_S 1
#define STATUS_RETRY_MS 100

struct status_row {
	char id[GS_AGENT_ID_MAX];
	pid_t init;
	struct gs_agent_k8s k8s;
	struct gs_agent_request request;
	uint32_t sm_percent;
	struct gs_metrics_snap m;
};

struct status_listener {
	struct gs_agent *a;
	int fd;
};

/* Under the agent lock: each container's figures, fresh when its lock
 * comes soon, else those of the last tick. */
static struct status_row *snapshot(struct gs_agent *a, unsigned *n)
{
	struct status_row *rows;

	pthread_mutex_lock(&a->lock);
	rows = calloc(a->n_containers ? a->n_containers : 1, sizeof(*rows));
	*n = 0;
	for (struct gs_agent_container *c = a->containers; rows && c; c = c->next) {
		struct status_row *r = &rows[(*n)++];
		(void)gs_metrics_snapshot_within(&c->metrics, &c->sb, c->id, STATUS_LOCK_WAIT_MS);
		memcpy(r->id, c->id, sizeof(r->id));
		r->init = c->init;
		r->k8s = c->k8s;
		r->request = c->request;
		r->sm_percent = c->policy.quota.sm_percent;
		r->m = c->metrics;
	}
	pthread_mutex_unlock(&a->lock);
	return rows;
}

static json_object *str_or_null(const char *s)
{
	return s[0] ? json_object_new_string(s) : NULL;
}

static json_object *gpus_json(const struct gs_metrics_snap *m)
{
	json_object *arr = json_object_new_array();

	for (unsigned g = 0; g < m->n_gpus; g++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "gpu", json_object_new_int((int)g));
		json_object_object_add(o, "used", json_object_new_uint64(m->used[g]));
		json_object_object_add(o, "peak", json_object_new_uint64(m->peak[g]));
		json_object_object_add(o, "quota", m->quota[g] == GS_QUOTA_UNLIMITED ? NULL
		                                   : json_object_new_uint64(m->quota[g]));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* The compute share: the target and, per GPU, the share measured. */
static json_object *sm_json(const struct status_row *r)
{
	json_object *o, *arr;

	if (!r->m.has_sm)
		return NULL;
	o = json_object_new_object();
	arr = json_object_new_array();
	json_object_object_add(o, "target", json_object_new_int((int)r->sm_percent));
	for (unsigned i = 0; i < r->m.sm.n; i++) {
		json_object *g = json_object_new_object();
		json_object_object_add(g, "gpu", json_object_new_int((int)r->m.sm.gpu[i].gpu));
		json_object_object_add(g, "share", json_object_new_double(r->m.sm.gpu[i].achieved_share));
		json_object_array_add(arr, g);
	}
	json_object_object_add(o, "gpus", arr);
	return o;
}

static json_object *refusals_json(const struct gs_refusals *rf)
{
	json_object *o = json_object_new_object(), *kinds = json_object_new_array();

	json_object_object_add(o, "total", json_object_new_uint64(rf->total));
	for (unsigned i = 0; i < rf->n_kinds; i++) {
		json_object *k = json_object_new_object();
		json_object_object_add(k, "outcome", json_object_new_string(gs_outcome_name(rf->kind[i].outcome)));
		json_object_object_add(k, "reason", json_object_new_string(rf->kind[i].reason));
		json_object_object_add(k, "count", json_object_new_uint64(rf->kind[i].n));
		json_object_array_add(kinds, k);
	}
	json_object_object_add(o, "kinds", kinds);
	return o;
}

static json_object *row_json(const struct status_row *r)
{
	json_object *o = json_object_new_object(), *req = json_object_new_object();

	json_object_object_add(o, "container", json_object_new_string(r->id));
	json_object_object_add(o, "sandbox", json_object_new_string(r->m.sandbox));
	json_object_object_add(o, "init_pid", json_object_new_int(r->init));
	json_object_object_add(o, "pod", str_or_null(r->k8s.pod));
	json_object_object_add(o, "namespace", str_or_null(r->k8s.pod_namespace));
	json_object_object_add(o, "pod_uid", str_or_null(r->k8s.pod_uid));
	json_object_object_add(o, "container_name", str_or_null(r->k8s.container));
	json_object_object_add(req, "mem", str_or_null(r->request.mem));
	json_object_object_add(req, "sm", str_or_null(r->request.sm));
	json_object_object_add(o, "request", req);
	json_object_object_add(o, "gpus", gpus_json(&r->m));
	json_object_object_add(o, "sm", sm_json(r));
	json_object_object_add(o, "refusals", refusals_json(&r->m.refusals));
	return o;
}

json_object *gs_agent_status_json(struct gs_agent *a)
{
	unsigned n;
	struct status_row *rows = snapshot(a, &n);
	json_object *doc = json_object_new_object(), *arr = json_object_new_array();

	json_object_object_add(doc, "format", json_object_new_int(GS_STATUS_FORMAT));
	json_object_object_add(doc, "version", json_object_new_string(GPUSANDBOX_VERSION));
	json_object_object_add(doc, "pid", json_object_new_int(getpid()));
	json_object_object_add(doc, "ok", json_object_new_boolean(rows != NULL));
	for (unsigned i = 0; rows && i < n; i++)
		json_object_array_add(arr, row_json(&rows[i]));
	json_object_object_add(doc, "containers", json_object_new_int((int)n));
	json_object_object_add(doc, "sandboxes", arr);
	free(rows);
	return doc;
}

static bool peer_is_root(int conn)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == 0;
}

static void answer(struct gs_agent *a, int conn)
{
	const struct timeval tv = { STATUS_SEND_TIMEOUT_S, 0 };
	json_object *doc;
	const char *text;
	size_t len, off = 0;

	if (!peer_is_root(conn))
		return;
	(void)setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	doc = gs_agent_status_json(a);
	text = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	                                         &len);
	while (text && off < len) {
		ssize_t w = send(conn, text + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (text && off == len)
		(void)send(conn, "\n", 1, MSG_NOSIGNAL);
	json_object_put(doc);
}

static void *status_main(void *arg)
{
	struct status_listener *l = arg;

	for (;;) {
		int conn = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			/* Out of fds, or a peer gone before accept: the next
			 * one may do, after a pause so as not to spin. */
			if (errno != EINTR)
				(void)poll(NULL, 0, STATUS_RETRY_MS);
			continue;
		}
		answer(l->a, conn);
		close(conn);
	}
	return NULL;
}

int gs_agent_status_start(struct gs_agent *a, const char *path, struct gs_error *err)
{
	static struct status_listener l;
	int rc;

	l.a = a;
	l.fd = gs_agent_listen(path, err);
	if (l.fd < 0)
		return -1;
	rc = gs_spawn_detached(status_main, &l);
	if (rc) {
		close(l.fd);
		return gs_fail(err, rc, "starting the status thread");
	}
	return 0;
}
