/* SPDX-License-Identifier: MIT */
/*
 * test_agent_conn.c - the agent's reading of a runtime's state: a real
 * seccomp listener (from a child that installs an allow-all filter with
 * NEW_LISTENER) is taken from a state split over two messages, with the
 * connection left open as runc 1.1.5 leaves it; states with a wrong fd
 * count, a seccompFd that is not a listener, a container id that is not a
 * plain name, or bytes that are not JSON are refused, and no fd is left
 * open after a refusal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent_conn.h"
#include "check.h"

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void send_fds(int sock, const char *data, const int *fds, unsigned n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)] = { 0 };
	struct iovec iov = { (void *)data, strlen(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n) {
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	CHECK(sendmsg(sock, &m, 0) == (ssize_t)strlen(data));
}

/* A seccomp listener of a child that then waits to be killed. */
static int make_listener(pid_t *child)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };
	int sv[2], fd = -1;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	*child = fork();
	if (*child == 0) {
		int l;
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (l >= 0)
			send_fds(sv[1], "x", &l, 1);
		pause();
		_exit(0);
	}
	char c;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	if (recvmsg(sv[0], &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	close(sv[0]);
	close(sv[1]);
	CHECK(fd >= 0);
	return fd;
}

#define STATE_HEAD "{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":4242,\"metadata\":\"m\","
#define STATE_TAIL "\"state\":{\"ociVersion\":\"1.0.2\",\"id\":\"%s\",\"status\":\"creating\",\"pid\":4241,\"bundle\":\"/b\"}}"

/* Sends head (with fds) and tail as two messages; returns the result of
 * gs_agent_receive_hello on the other end, the connection left open. */
static int try_raw(const char *head, const char *tail, const int *fds, unsigned n, struct gs_agent_hello *h)
{
	int sv[2], rc;
	struct gs_error err = { 0 };

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	send_fds(sv[1], head, fds, n);
	send_fds(sv[1], tail, NULL, 0);
	rc = gs_agent_receive_hello(sv[0], h, &err);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static int try_state(const char *head, const char *id, const int *fds, unsigned n, struct gs_agent_hello *h)
{
	char tail[512];

	snprintf(tail, sizeof(tail), STATE_TAIL, id);
	return try_raw(head, tail, fds, n, h);
}

/* containerd's keys win over CRI-O's; a value that is not a plain name
 * (it would steer the audit log's path) is left out and named. */
#define STATE_K8S "\"state\":{\"id\":\"c\",\"pid\":4241,\"annotations\":{" \
	"\"io.kubernetes.pod.name\":\"decoy\",\"io.kubernetes.cri.sandbox-name\":\"web-0\"," \
	"\"io.kubernetes.pod.namespace\":\"../etc\",\"io.kubernetes.pod.uid\":\"u-1\"," \
	"\"io.kubernetes.container.name\":7,\"io.kubernetes.cri.container-name\":\"main\"}}}"
static void check_k8s(int listener)
{
	struct gs_agent_hello h;

	CHECK(try_raw(STATE_HEAD, STATE_K8S, &listener, 1, &h) == 0);
	CHECK(strcmp(h.k8s.pod, "web-0") == 0);
	CHECK(strcmp(h.k8s.pod_namespace, "") == 0);
	CHECK(strcmp(h.k8s.dropped, "io.kubernetes.pod.namespace") == 0);
	CHECK(strcmp(h.k8s.pod_uid, "u-1") == 0);
	CHECK(strcmp(h.k8s.container, "main") == 0);
	close(h.listener);
	/* No annotations: nothing named, nothing dropped. */
	CHECK(try_state(STATE_HEAD, "ctr-2", &listener, 1, &h) == 0);
	CHECK(!h.k8s.pod[0] && !h.k8s.pod_namespace[0] && !h.k8s.container[0] && !h.k8s.dropped[0]);
	close(h.listener);
}

/* The quota request: read as strings; anything else, or too long, named
 * as bad (the container is then refused). */
#define STATE_REQ "\"state\":{\"id\":\"c\",\"pid\":4241,\"annotations\":{" \
	"\"gpusandbox.io/mem\":\"512m\",\"gpusandbox.io/sm\":\"30\"}}}"
#define STATE_REQ_BAD "\"state\":{\"id\":\"c\",\"pid\":4241,\"annotations\":{" \
	"\"gpusandbox.io/mem\":4096,\"gpusandbox.io/sm\":\"" \
	"0123456789012345678901234567890123456789\"}}}"
static void check_request_read(int listener)
{
	struct gs_agent_hello h;

	CHECK(try_raw(STATE_HEAD, STATE_REQ, &listener, 1, &h) == 0);
	CHECK(strcmp(h.request.mem, "512m") == 0 && strcmp(h.request.sm, "30") == 0 && !h.request.bad[0]);
	close(h.listener);
	CHECK(try_raw(STATE_HEAD, STATE_REQ_BAD, &listener, 1, &h) == 0);
	CHECK(!h.request.mem[0] && !h.request.sm[0] && strcmp(h.request.bad, "gpusandbox.io/mem") == 0);
	close(h.listener);
	CHECK(try_state(STATE_HEAD, "ctr-3", &listener, 1, &h) == 0);
	CHECK(!gs_agent_request_any(&h.request));
	close(h.listener);
}

/* Within the node's policy only: lower, never higher; malformed refused;
 * nothing asked leaves the node's quota as it is. */
static void check_request_apply(void)
{
	struct gs_quota q, before;
	struct gs_error err = { 0 };
	struct gs_agent_request r = { .mem = "512m" };

	gs_quota_init(&q);
	q.mem_per_gpu = 1ull << 30;
	q.mem_gpu[1] = 2ull << 30;
	before = q;
	CHECK(gs_agent_apply_request(&q, &r, &err) == 0);
	CHECK(q.mem_per_gpu == 512ull << 20 && gs_quota_mem(&q, 1) == 512ull << 20);
	q = before;
	snprintf(r.mem, sizeof(r.mem), "1536m");   /* above GPU 0's 1 GiB, under GPU 1's */
	CHECK(gs_agent_apply_request(&q, &r, &err) < 0 && err.errnum == EDQUOT);
	CHECK(memcmp(&q, &before, sizeof(q)) == 0);
	q.visible_set = true;
	q.visible = 1u << 1;                       /* GPU 1 only: 1.5 GiB fits there */
	CHECK(gs_agent_apply_request(&q, &r, &err) == 0 && gs_quota_mem(&q, 1) == 1536ull << 20);
	q = before;
	snprintf(r.mem, sizeof(r.mem), "4096");    /* bytes: under GS_MEM_MIN */
	CHECK(gs_agent_apply_request(&q, &r, &err) < 0 && err.errnum == EINVAL);
	snprintf(r.mem, sizeof(r.mem), "lots");
	CHECK(gs_agent_apply_request(&q, &r, &err) < 0 && err.errnum == EINVAL);
	/* No memory limit on the node: any valid size lowers it. */
	gs_quota_init(&q);
	snprintf(r.mem, sizeof(r.mem), "64g");
	CHECK(gs_agent_apply_request(&q, &r, &err) == 0 && q.mem_per_gpu == 64ull << 30);
	/* sm: at most the node's share. */
	struct gs_agent_request s = { .sm = "30" };
	gs_quota_init(&q);
	q.sm_percent = 50;
	CHECK(gs_agent_apply_request(&q, &s, &err) == 0 && q.sm_percent == 30);
	snprintf(s.sm, sizeof(s.sm), "70");
	CHECK(gs_agent_apply_request(&q, &s, &err) < 0 && err.errnum == EDQUOT && q.sm_percent == 30);
	snprintf(s.sm, sizeof(s.sm), "0");
	CHECK(gs_agent_apply_request(&q, &s, &err) < 0 && err.errnum == EINVAL);
	struct gs_agent_request bad = { .bad = "gpusandbox.io/mem" };
	CHECK(gs_agent_apply_request(&q, &bad, &err) < 0 && err.errnum == EINVAL);
	struct gs_agent_request none = { 0 };
	before = q;
	CHECK(gs_agent_apply_request(&q, &none, &err) == 0 && memcmp(&q, &before, sizeof(q)) == 0);
}

int main(void)
{
	struct gs_agent_hello h;
	pid_t child;
	int listener = make_listener(&child), before, fds[2];

	before = open_fds();
	CHECK(try_state(STATE_HEAD, "ctr-1", &listener, 1, &h) == 0);
	CHECK(h.listener >= 0 && h.listener != listener);
	CHECK(h.pid == 4242 && h.init_pid == 4241);
	CHECK(strcmp(h.id, "ctr-1") == 0 && strcmp(h.status, "creating") == 0 && strcmp(h.metadata, "m") == 0);
	close(h.listener);
	CHECK(open_fds() == before);
	check_k8s(listener);
	check_request_read(listener);
	check_request_apply();
	CHECK(open_fds() == before);

	/* Two fds for one name; a pipe named seccompFd; a bad id; no JSON. */
	fds[0] = listener;
	fds[1] = listener;
	CHECK(try_state(STATE_HEAD, "ctr-1", fds, 2, &h) < 0 && h.listener == -1);
	CHECK(pipe(fds) == 0);
	CHECK(try_state(STATE_HEAD, "ctr-1", fds, 1, &h) < 0);
	close(fds[0]);
	close(fds[1]);
	CHECK(try_state(STATE_HEAD, "../etc", &listener, 1, &h) < 0);
	CHECK(try_state(STATE_HEAD, ".", &listener, 1, &h) < 0);
	CHECK(try_state(STATE_HEAD, "a/b", &listener, 1, &h) < 0);
	CHECK(try_state("{\"fds\":[\"seccompFd\"],]", "x", &listener, 1, &h) < 0);
	CHECK(try_state("{\"fds\":[\"other\"],", "ctr-1", &listener, 1, &h) < 0);
	CHECK(open_fds() == before);

	close(listener);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return check_summary();
}
