/* SPDX-License-Identifier: MIT */
/*
 * keeper_link.c - the agent's side of the keeper (keeper_link.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "keeper_link.h"
#include "keeper_proto.h"

/* How long a message to or from the keeper may take. */
#define KEEPER_RECV_TIMEOUT_S 10

static int connect_to(const char *path, struct gs_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { KEEPER_RECV_TIMEOUT_S, 0 };
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return gs_fail(err, ENAMETOOLONG, "--keeper %s: too long for a unix socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gs_fail(err, errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		gs_fail(err, errno, "connecting to the keeper at %s", path);
		close(fd);
		return -1;
	}
	/* The keeper holds every container's listener: it must be root's
	 * (ours), not whatever else could have made a socket at path. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
		gs_fail(err, EPERM, "the keeper at %s is not of our uid (uid %d)", path, (int)cred.uid);
		close(fd);
		return -1;
	}
	/* A keeper that stops reading must not stall the agent (its sends
	 * are made under the agent's lock): a send that times out loses the
	 * keeper, said once. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static struct gs_kept_container *find(struct gs_kept_container *l, const char *id)
{
	for (; l; l = l->next)
		if (strcmp(l->id, id) == 0)
			return l;
	return NULL;
}

static int add_listener(struct gs_kept_container *c, int fd, uint32_t index)
{
	if (c->n == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 4;
		int *f = realloc(c->fds, sizeof(*f) * cap);
		if (!f)
			return -1;
		c->fds = f;
		uint32_t *ix = realloc(c->index, sizeof(*ix) * cap);
		if (!ix)
			return -1;
		c->index = ix;
		c->cap = cap;
	}
	c->fds[c->n] = fd;
	c->index[c->n++] = index;
	return 0;
}

static int add_watch(struct gs_kept_container *c, int fd, uint32_t client, uint32_t tfd)
{
	if (!GS_ROOM_FOR_ONE(c->w, c->n_w, c->cap_w, 8))
		return -1;
	c->w[c->n_w++] = (struct gs_kept_watch){ fd, client, tfd };
	return 0;
}

/* One message of the keeper's answer to HELLO. 1: more, 0: END, -1. */
static int take_one(int fd, struct gs_kept_container **held, int *old_agent, struct gs_error *err)
{
	struct gs_keeper_msg m;
	int fds[GS_KEEPER_MAX_FDS];
	struct gs_kept_container *c;

	if (gs_keeper_recv(fd, &m, fds) <= 0)
		return gs_fail(err, errno ? errno : EPROTO, "reading what the keeper holds");
	switch (m.op) {
	case GS_KEEPER_CONTAINER:
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fds[0]);
			close(fds[1]);
			return gs_fail(err, ENOMEM, "allocating");
		}
		memcpy(c->id, m.id, sizeof(c->id));
		c->pidfd = fds[0];
		c->memfd = fds[1];
		c->next = *held;
		*held = c;
		return 1;
	case GS_KEEPER_LISTENER:
		c = find(*held, m.id);
		if (!c || add_listener(c, fds[0], m.index) < 0) {
			close(fds[0]);
			return gs_fail(err, EPROTO, "the keeper sent a listener of no container");
		}
		return 1;
	case GS_KEEPER_WATCH:
		c = find(*held, m.id);
		if (!c || add_watch(c, fds[0], m.index, m.aux) < 0) {
			close(fds[0]);
			return gs_fail(err, EPROTO, "the keeper sent a watch of no container");
		}
		return 1;
	case GS_KEEPER_OWN_CLIENT:
		c = find(*held, m.id);
		if (!c || !GS_ROOM_FOR_ONE(c->own, c->n_own, c->cap_own, 2)) {
			close(fds[0]);
			return gs_fail(err, EPROTO, "the keeper sent an own client of no container");
		}
		c->own[c->n_own++] = (struct gs_kept_own){ fds[0], m.index };
		return 1;
	case GS_KEEPER_END:
		*old_agent = m.nfds ? fds[0] : -1;
		return 0;
	default:
		for (unsigned i = 0; i < m.nfds; i++)
			close(fds[i]);
		return gs_fail(err, EPROTO, "the keeper sent an unexpected message");
	}
}

int gs_keeper_link_open(struct gs_keeper_link *k, const char *path, struct gs_kept_container **held,
                        int *old_agent, struct gs_error *err)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_HELLO };
	int self, rc;

	*held = NULL;
	*old_agent = -1;
	pthread_mutex_init(&k->lock, NULL);
	k->lost = false;
	k->fd = connect_to(path, err);
	if (k->fd < 0)
		return -1;
	/* Our pidfd: the next agent waits for this one to be gone. */
	self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0 || gs_keeper_send(k->fd, &m, &self, 1) < 0) {
		gs_fail(err, errno, "saying hello to the keeper");
		goto fail;
	}
	close(self);
	self = -1;
	while ((rc = take_one(k->fd, held, old_agent, err)) > 0)
		;
	if (rc == 0)
		return 0;
fail:
	if (self >= 0)
		close(self);
	gs_kept_free(*held);
	*held = NULL;
	close(k->fd);
	k->fd = -1;
	return -1;
}

void gs_kept_free(struct gs_kept_container *held)
{
	while (held) {
		struct gs_kept_container *next = held->next;
		for (unsigned i = 0; i < held->n; i++)
			if (held->fds[i] >= 0)
				close(held->fds[i]);
		if (held->pidfd >= 0)
			close(held->pidfd);
		if (held->memfd >= 0)
			close(held->memfd);
		for (unsigned i = 0; i < held->n_own; i++)
			if (held->own[i].fd >= 0)
				close(held->own[i].fd);
		free(held->own);
		for (unsigned i = 0; i < held->n_w; i++)
			if (held->w[i].epfd >= 0)
				close(held->w[i].epfd);
		free(held->w);
		free(held->fds);
		free(held->index);
		free(held);
		held = next;
	}
}

static void send_or_lose(struct gs_keeper_link *k, struct gs_keeper_msg *m, const int *fds, unsigned n)
{
	pthread_mutex_lock(&k->lock);
	if (!k->lost && gs_keeper_send(k->fd, m, fds, n) < 0) {
		k->lost = true;
		fprintf(stderr, "gpusandbox agent: warning: the keeper is gone (%s): containers stay "
		        "supervised, but an agent restart would now fail them closed\n", strerror(errno));
	}
	pthread_mutex_unlock(&k->lock);
}

static void set_id(struct gs_keeper_msg *m, const char *id)
{
	snprintf(m->id, sizeof(m->id), "%s", id);
}

void gs_keeper_link_container(struct gs_keeper_link *k, const char *id, int init_pidfd, int memfd)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_CONTAINER };
	const int fds[2] = { init_pidfd, memfd };

	set_id(&m, id);
	send_or_lose(k, &m, fds, 2);
}

void gs_keeper_link_listener(struct gs_keeper_link *k, const char *id, uint32_t index, int listener)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_LISTENER, .index = index };

	set_id(&m, id);
	send_or_lose(k, &m, &listener, 1);
}

void gs_keeper_link_drop(struct gs_keeper_link *k, const char *id)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_DROP };

	set_id(&m, id);
	send_or_lose(k, &m, NULL, 0);
}

void gs_keeper_link_watch(struct gs_keeper_link *k, const char *id, uint32_t client, int tfd, int epfd)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_WATCH, .index = client, .aux = (uint32_t)tfd };

	set_id(&m, id);
	send_or_lose(k, &m, &epfd, 1);
}

void gs_keeper_link_unwatch(struct gs_keeper_link *k, const char *id, uint32_t client)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_UNWATCH, .index = client };

	set_id(&m, id);
	send_or_lose(k, &m, NULL, 0);
}

void gs_keeper_link_own_client(struct gs_keeper_link *k, const char *id, uint32_t client, int ctl_fd)
{
	struct gs_keeper_msg m = { .op = GS_KEEPER_OWN_CLIENT, .index = client };

	set_id(&m, id);
	send_or_lose(k, &m, &ctl_fd, 1);
}
