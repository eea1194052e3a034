/* SPDX-License-Identifier: MIT */
/*
 * keeper_proto.c - sending and receiving keeper messages (keeper_proto.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "keeper_proto.h"

int gs_keeper_op_fds(uint32_t op, unsigned nfds)
{
	switch (op) {
	case GS_KEEPER_HELLO: return 1;
	case GS_KEEPER_CONTAINER: return 2;
	case GS_KEEPER_LISTENER: return 1;
	case GS_KEEPER_DROP: return 0;
	case GS_KEEPER_END: return nfds <= 1 ? (int)nfds : -1;
	case GS_KEEPER_WATCH: return 1;
	case GS_KEEPER_UNWATCH: return 0;
	case GS_KEEPER_OWN_CLIENT: return 1;
	default: return -1;
	}
}

int gs_keeper_send(int sock, struct gs_keeper_msg *m, const int *fds, unsigned nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * GS_KEEPER_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > GS_KEEPER_MAX_FDS)
		return errno = EINVAL, -1;
	m->magic = GS_KEEPER_MAGIC;
	m->nfds = nfds;
	if (nfds) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	return n == (ssize_t)sizeof(*m) ? 0 : (errno = EPROTO, -1);
}

/* Takes every fd of every SCM_RIGHTS in mh into fds (closing those past
 * max, and any that come in another kind of message). Returns how many. */
static unsigned take_fds(struct msghdr *mh, int *fds, unsigned max, bool *extra)
{
	unsigned n = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *in = (int *)CMSG_DATA(c);
		for (size_t i = 0; i < k; i++) {
			if (n < max)
				fds[n++] = in[i];
			else {
				close(in[i]);
				*extra = true;
			}
		}
	}
	return n;
}

int gs_keeper_recv(int sock, struct gs_keeper_msg *m, int *fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (GS_KEEPER_MAX_FDS + 1))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                     .msg_controllen = sizeof(u.buf) };
	bool extra = false;
	unsigned got;
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	got = take_fds(&mh, fds, GS_KEEPER_MAX_FDS, &extra);
	/* Anything not exactly one of ours is refused whole: its fds are
	 * closed, nothing of it is kept. */
	if (extra || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n != (ssize_t)sizeof(*m) ||
	    m->magic != GS_KEEPER_MAGIC || m->nfds != got || gs_keeper_op_fds(m->op, got) != (int)got ||
	    memchr(m->id, '\0', sizeof(m->id)) == NULL) {
		for (unsigned i = 0; i < got; i++)
			close(fds[i]);
		errno = EPROTO;
		return -1;
	}
	return 1;
}
