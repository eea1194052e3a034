/* SPDX-License-Identifier: MIT */
/*
 * trap_child.h - a child trapped in a seccomp user notification, its
 * listener handed over a unix socket (SCM_RIGHTS) to the process that
 * plays the supervisor (test_tid_reuse, test_private_table,
 * privtablebench).
 */
#ifndef GPUSANDBOX_TEST_TRAP_CHILD_H
#define GPUSANDBOX_TEST_TRAP_CHILD_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "trap_one.h"

/* The trapped call: a syscall nothing else in these children makes. */
#define TRAPPED_NR SYS_kcmp

/* Sends fd with one byte; 0, or -1. */
static inline int fdpass_send(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

/* The fd sent with one byte, or -1. */
static inline int fdpass_recv(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                    .msg_controllen = sizeof(cbuf) };
	int fd;

	if (recvmsg(sock, &m, 0) != 1 || !CMSG_FIRSTHDR(&m))
		return -1;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	return fd;
}

/* In the child, once it holds what the test wants it to: a filter whose
 * listener traps TRAPPED_NR (no_new_privs first), the listener sent on
 * sock, then the trapped call, where it waits until killed. */
static inline _Noreturn void trap_child_and_wait(int sock)
{
	struct sock_filter code[] = GS_TRAP_ONE_FILTER(TRAPPED_NR);
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(1);
	int l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (l < 0 || fdpass_send(sock, l) < 0)
		_exit(1);
	syscall(TRAPPED_NR, 0, 0, 0, 0, 0);
	_exit(0);
}

#endif
