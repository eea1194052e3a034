/* SPDX-License-Identifier: MIT */
/*
 * agent_conn.c - receiving a runtime's container process state.
 *
 * The state may come in several messages, with the fds on the first
 * (runtime-spec). We parse as the bytes come and stop at the end of the
 * JSON object: runc 1.1.5 never closes its end, so waiting for EOF would
 * hold the container's creation for ever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent_conn.h"

#define LISTEN_BACKLOG 128
#define SOCKET_UMASK 0077
#define MAX_FDS 8                       /* fds accepted in one state */
#define MAX_STATE_BYTES (1u << 20)      /* annotations can be long; not this long */
#define CHUNK 4096
#define SECCOMP_FD_NAME "seccompFd"
#define SECCOMP_ANON_INODE "anon_inode:seccomp notify"
#define FD_LINK_MAX 64
#define MS_PER_S 1000
#define NS_PER_MS 1000000

struct fds {
	int fd[MAX_FDS];
	unsigned n;
	bool overflow;
};

static void close_fds(struct fds *f, int keep)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->fd[i] != keep)
			close(f->fd[i]);
	f->n = 0;
}

static void take_fds(struct msghdr *m, struct fds *f)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		const int *fd = (const int *)CMSG_DATA(c);
		for (size_t i = 0; i < n; i++) {
			if (f->n < MAX_FDS)
				f->fd[f->n++] = fd[i];
			else {
				close(fd[i]);
				f->overflow = true;
			}
		}
	}
}

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * MS_PER_S + (deadline->tv_nsec - now.tv_nsec) / NS_PER_MS;
}

/* Reads until the tokener holds a whole JSON value. */
static json_object *read_state(int conn, struct fds *f, struct gs_error *err)
{
	char buf[CHUNK], cbuf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	json_tokener *tok = json_tokener_new();
	json_object *state = NULL;
	struct timespec deadline;
	size_t total = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += GS_AGENT_HELLO_TIMEOUT_MS / MS_PER_S;
	while (!state) {
		struct pollfd p = { conn, POLLIN, 0 };
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		                    .msg_controllen = sizeof(cbuf) };
		long left = ms_left(&deadline);
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			gs_fail(err, ETIMEDOUT, "the runtime sent no complete state");
			break;
		}
		n = recvmsg(conn, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			gs_fail(err, n < 0 ? errno : EPROTO, "the state ended before its JSON did");
			break;
		}
		take_fds(&m, f);
		total += (size_t)n;
		if (total > MAX_STATE_BYTES || (m.msg_flags & MSG_CTRUNC)) {
			gs_fail(err, EMSGSIZE, "the state is too long, or has too many fds");
			break;
		}
		state = json_tokener_parse_ex(tok, buf, (int)n);
		if (!state && json_tokener_get_error(tok) != json_tokener_continue) {
			gs_fail(err, EPROTO, "the state is not JSON: %s",
			        json_tokener_error_desc(json_tokener_get_error(tok)));
			break;
		}
	}
	json_tokener_free(tok);
	return state;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static pid_t get_pid(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return 0;
	int64_t p = json_object_get_int64(v);
	return p > 0 && p < INT32_MAX ? (pid_t)p : 0;
}

/* The container id goes into file names (the audit log): the characters
 * runc allows, and never "." or "..". */
/* A plain name: what an id or a Kubernetes name may hold, safe in a file
 * name. */
static bool plain_name(const char *s, size_t max)
{
	size_t len = strlen(s);

	return len > 0 && len < max && s[0] != '.' &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.") == len;
}

static bool id_ok(const char *id)
{
	return plain_name(id, GS_AGENT_ID_MAX);
}

/* The fd named seccompFd: its position in "fds" is its position in
 * SCM_RIGHTS. It must be a seccomp listener, or answering on it means
 * nothing. */
static int pick_listener(json_object *msg, struct fds *f, struct gs_error *err)
{
	json_object *names = NULL;
	char link[FD_LINK_MAX], path[FD_LINK_MAX];
	int idx = -1;
	ssize_t n;

	if (!json_object_object_get_ex(msg, "fds", &names) || !json_object_is_type(names, json_type_array))
		return gs_fail(err, EPROTO, "the state names no fds");
	if (f->overflow || json_object_array_length(names) != f->n)
		return gs_fail(err, EPROTO, "the state names %zu fds but %u came",
		               json_object_array_length(names), f->n);
	for (size_t i = 0; i < f->n; i++) {
		json_object *nm = json_object_array_get_idx(names, i);
		if (json_object_is_type(nm, json_type_string) &&
		    strcmp(json_object_get_string(nm), SECCOMP_FD_NAME) == 0)
			idx = (int)i;
	}
	if (idx < 0)
		return gs_fail(err, EPROTO, "no %s among the fds", SECCOMP_FD_NAME);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->fd[idx]);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (strcmp(link, SECCOMP_ANON_INODE) != 0)
		return gs_fail(err, EPROTO, "%s is not a seccomp listener (%s)", SECCOMP_FD_NAME, link);
	return f->fd[idx];
}

/* containerd's keys first (pkg/cri/annotations: it sets them itself, over
 * whatever the pod carries), then CRI-O's (the kubelet's labels). */
static const struct k8s_key {
	const char *key;
	size_t field;
} k8s_keys[] = {
	{ "io.kubernetes.cri.sandbox-name", offsetof(struct gs_agent_k8s, pod) },
	{ "io.kubernetes.cri.sandbox-namespace", offsetof(struct gs_agent_k8s, pod_namespace) },
	{ "io.kubernetes.cri.sandbox-uid", offsetof(struct gs_agent_k8s, pod_uid) },
	{ "io.kubernetes.cri.container-name", offsetof(struct gs_agent_k8s, container) },
	{ "io.kubernetes.pod.name", offsetof(struct gs_agent_k8s, pod) },
	{ "io.kubernetes.pod.namespace", offsetof(struct gs_agent_k8s, pod_namespace) },
	{ "io.kubernetes.pod.uid", offsetof(struct gs_agent_k8s, pod_uid) },
	{ "io.kubernetes.container.name", offsetof(struct gs_agent_k8s, container) },
};

static void fill_k8s(json_object *state, struct gs_agent_k8s *k)
{
	json_object *ann = NULL;

	if (!json_object_object_get_ex(state, "annotations", &ann) || !json_object_is_type(ann, json_type_object))
		return;
	for (size_t i = 0; i < sizeof(k8s_keys) / sizeof(k8s_keys[0]); i++) {
		char *field = (char *)k + k8s_keys[i].field;
		const char *v = get_str(ann, k8s_keys[i].key);
		if (!v || field[0])
			continue;
		if (plain_name(v, GS_AGENT_K8S_MAX))
			snprintf(field, GS_AGENT_K8S_MAX, "%s", v);
		else if (!k->dropped[0])
			snprintf(k->dropped, sizeof(k->dropped), "%s", k8s_keys[i].key);
	}
}

/* The container's quota request (agent_request.h): only read here; what it
 * may ask is judged against the node's policy when the sandbox is made. A
 * value that is not a short string is named, so that the container is
 * refused rather than run under another quota than it asked for. */
static void fill_request(json_object *state, struct gs_agent_request *r)
{
	static const struct { const char *key; size_t field; } keys[] = {
		{ GS_REQUEST_MEM_KEY, offsetof(struct gs_agent_request, mem) },
		{ GS_REQUEST_SM_KEY, offsetof(struct gs_agent_request, sm) },
	};
	json_object *ann = NULL, *v = NULL;

	if (!json_object_object_get_ex(state, "annotations", &ann) || !json_object_is_type(ann, json_type_object))
		return;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!json_object_object_get_ex(ann, keys[i].key, &v))
			continue;
		const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
		if (s && s[0] && strlen(s) < GS_REQUEST_VALUE_MAX)
			snprintf((char *)r + keys[i].field, GS_REQUEST_VALUE_MAX, "%s", s);
		else if (!r->bad[0])
			snprintf(r->bad, sizeof(r->bad), "%s", keys[i].key);
	}
}

static int fill_hello(json_object *msg, struct gs_agent_hello *h, struct gs_error *err)
{
	json_object *state = NULL;
	const char *id, *status, *meta = get_str(msg, "metadata");

	if (!json_object_object_get_ex(msg, "state", &state) || !json_object_is_type(state, json_type_object))
		return gs_fail(err, EPROTO, "the message has no container state");
	id = get_str(state, "id");
	status = get_str(state, "status");
	if (!id || !id_ok(id))
		return gs_fail(err, EPROTO, "the container id is missing or not a plain name");
	if (meta && strlen(meta) >= sizeof(h->metadata))
		return gs_fail(err, EPROTO, "the listenerMetadata is too long");
	snprintf(h->id, sizeof(h->id), "%s", id);
	snprintf(h->status, sizeof(h->status), "%s", status ? status : "");
	snprintf(h->metadata, sizeof(h->metadata), "%s", meta ? meta : "");
	h->pid = get_pid(msg, "pid");
	h->init_pid = get_pid(state, "pid");
	fill_k8s(state, &h->k8s);
	fill_request(state, &h->request);
	return 0;
}

int gs_agent_receive_hello(int conn, struct gs_agent_hello *h, struct gs_error *err)
{
	struct fds f = { .n = 0 };
	json_object *msg;
	int listener = -1;

	memset(h, 0, sizeof(*h));
	h->listener = -1;
	msg = read_state(conn, &f, err);
	if (msg && json_object_is_type(msg, json_type_object)) {
		listener = pick_listener(msg, &f, err);
		if (listener >= 0 && fill_hello(msg, h, err) < 0)
			listener = -1;
	} else if (msg) {
		gs_fail(err, EPROTO, "the state is not a JSON object");
	}
	json_object_put(msg);
	close_fds(&f, listener);
	h->listener = listener;
	return listener >= 0 ? 0 : -1;
}

/* A stale socket of ours is replaced; anything else at PATH is not. */
int gs_agent_listen(const char *path, struct gs_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return gs_fail(err, ENAMETOOLONG, "%s: too long for a unix socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return gs_fail(err, EEXIST, "%s exists and is not a socket", path);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gs_fail(err, errno, "socket");
	/* 0600 from birth: no window in which another user could connect. */
	old = umask(SOCKET_UMASK);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		gs_fail(err, errno, "listening on %s", path);
		close(fd);
		return -1;
	}
	return fd;
}
