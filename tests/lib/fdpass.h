/* SPDX-License-Identifier: MIT */
/*
 * fdpass.h - one fd over a unix socket (SCM_RIGHTS), for the tests that
 * hand a seccomp listener from a trapped child to the process that plays
 * the supervisor (test_tid_reuse, test_private_table, privtablebench).
 */
#ifndef GPUSANDBOX_TEST_FDPASS_H
#define GPUSANDBOX_TEST_FDPASS_H

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

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

#endif
