/* SPDX-License-Identifier: MIT */
/*
 * recv_probe.c - whether a blocked SECCOMP_IOCTL_NOTIF_RECV returns once
 * its filter has no user (recv_probe.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recv_probe.h"
#include "trap_one.h"

/* How long the probe's RECV may block before it is taken as "not ended"
 * (s): the kernel that ends it does so at once. */
#define PROBE_ALARM_S 2u
#define PROBE_OK 0
#define PROBE_NO 1

/* The filter's user: traps getppid (never called here) to the listener,
 * which it sends to its parent, then exits. */
static _Noreturn void filter_user(int sock)
{
	struct sock_filter prog[] = GS_TRAP_ONE_FILTER(SYS_getppid);
	struct sock_fprog fp = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                    .msg_controllen = sizeof(cbuf) };
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    (fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                       SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp)) < 0)
		_exit(PROBE_NO);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	_exit(sendmsg(sock, &m, 0) == 1 ? PROBE_OK : PROBE_NO);
}

static int receive_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &m, 0) != 1 || !(c = CMSG_FIRSTHDR(&m)) || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The probing process: the filter's user made and reaped (no task uses
 * the filter), then RECV under the alarm, whose default action ends us. */
static _Noreturn void probe(void)
{
	struct seccomp_notif req;
	int sv[2], listener, st;
	pid_t user;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		_exit(PROBE_NO);
	if ((user = fork()) < 0)
		_exit(PROBE_NO);
	if (user == 0)
		filter_user(sv[1]);
	listener = receive_fd(sv[0]);
	if (waitpid(user, &st, 0) != user || listener < 0)
		_exit(PROBE_NO);
	signal(SIGALRM, SIG_DFL);
	alarm(PROBE_ALARM_S);
	memset(&req, 0, sizeof(req));
	_exit(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0 && errno == ENOENT ? PROBE_OK
	                                                                              : PROBE_NO);
}

bool gs_recv_ends_at_hangup(void)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		return false;
	if (p == 0)
		probe();
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == PROBE_OK;
}
