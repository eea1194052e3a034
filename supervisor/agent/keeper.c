/* SPDX-License-Identifier: MIT */
/*
 * keeper.c - `gpusandbox keeper --socket PATH`: holds, for a node's agent,
 * every container's seccomp listeners, its init's pidfd, its state
 * memfd, its clients' release watches and the control files of the
 * sandbox's own RM clients, so that the agent can die or be upgraded
 * without the containers losing their supervision (the kernel fails a filter's trapped calls
 * with ENOSYS only once no process holds its listener).
 *
 * It is small on purpose: it parses nothing from containers, never reads
 * a notification, never calls the driver, and answers only peers of its
 * own uid (SO_PEERCRED; root in production). It is not dumpable and keeps
 * no capability. A container is dropped when the agent says it is gone,
 * or when every listener it held hangs up (POLLHUP: no task holds the
 * filter any more). A keeper that dies takes the listeners with it: the
 * containers then fail closed, as with no keeper.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd_usage.h"
#include "gpusandbox.h"
#include "startup_checks.h"
#include "agent_limits.h"
#include "keeper.h"
#include "keeper_proto.h"

#define MAX_PEERS 8            /* the agent, a restarted one, a few refused */
#define MAX_LISTENERS 65536    /* all containers together; bounded by RLIMIT_NOFILE too */
#define MAX_OWN_CLIENTS 256    /* per container: one per agent restart that mapped */
#define LISTEN_BACKLOG 16
#define SOCKET_UMASK 0077

static const char keeper_usage[] =
	"Usage: gpusandbox keeper --socket PATH\n"
	"Hold the seccomp listeners and state of gpusandbox agent's containers,\n"
	"so that the agent can be restarted without them losing supervision\n"
	"(gpusandbox agent --keeper PATH).\n"
	"\n"
	"  --socket PATH      the unix socket to listen on (made 0600)\n";

struct kept_listener {
	int fd;
	uint32_t index;
};

/* A client's release watch: index is the client, aux the fd number. */
struct kept {
	char id[GS_AGENT_ID_MAX];
	int pidfd, memfd;
	struct kept_listener *l;
	unsigned n, cap;
	struct kept_watch {
		int fd;
		uint32_t client, tfd;
	} *w;
	unsigned n_w, cap_w;
	/* The sandbox's own RM clients (keeper_proto.h, OWN_CLIENT), one
	 * per agent that made one: each control file and its handle. */
	struct kept_own {
		int fd;
		uint32_t client;
	} *own;
	unsigned n_own, cap_own;
};

struct keeper {
	struct kept *c;
	unsigned n, cap;
	unsigned n_listeners;
	int peers[MAX_PEERS];
	unsigned n_peers;
	int agent_pidfd;               /* the last agent that said HELLO */
};

static void say(const char *fmt, const char *id)
{
	fprintf(stderr, "gpusandbox keeper: ");
	fprintf(stderr, fmt, id);
	fputc('\n', stderr);
}

static struct kept *find(struct keeper *k, const char *id)
{
	for (unsigned i = 0; i < k->n; i++)
		if (strcmp(k->c[i].id, id) == 0)
			return &k->c[i];
	return NULL;
}

static void drop(struct keeper *k, struct kept *c)
{
	for (unsigned i = 0; i < c->n; i++)
		close(c->l[i].fd);
	k->n_listeners -= c->n;
	for (unsigned i = 0; i < c->n_w; i++)
		close(c->w[i].fd);
	close(c->pidfd);
	close(c->memfd);
	for (unsigned i = 0; i < c->n_own; i++)
		close(c->own[i].fd);
	free(c->own);
	free(c->l);
	free(c->w);
	*c = k->c[--k->n];
}

static void add_container(struct keeper *k, const struct gs_keeper_msg *m, const int *fds)
{
	struct kept *c = find(k, m->id);

	if (c)
		drop(k, c);  /* a new sandbox for a reused id */
	if (!GS_ROOM_FOR_ONE(k->c, k->n, k->cap, 16)) {
		close(fds[0]);
		close(fds[1]);
		say("out of memory: container %s not kept", m->id);
		return;
	}
	c = &k->c[k->n++];
	memset(c, 0, sizeof(*c));
	memcpy(c->id, m->id, sizeof(c->id));
	c->pidfd = fds[0];
	c->memfd = fds[1];
}

static void add_listener(struct keeper *k, const struct gs_keeper_msg *m, int fd)
{
	struct kept *c = find(k, m->id);

	if (!c || k->n_listeners >= MAX_LISTENERS) {
		close(fd);
		return;
	}
	if (!GS_ROOM_FOR_ONE(c->l, c->n, c->cap, 4)) {
		close(fd);
		return;
	}
	c->l[c->n].fd = fd;
	c->l[c->n].index = m->index;
	c->n++;
	k->n_listeners++;
}

static void unwatch(struct kept *c, uint32_t client)
{
	for (unsigned i = 0; i < c->n_w; i++)
		if (c->w[i].client == client) {
			close(c->w[i].fd);
			c->w[i] = c->w[--c->n_w];
			return;
		}
}

/* A client's watch; a newer one of the same client replaces it. */
static void add_watch(struct keeper *k, const struct gs_keeper_msg *m, int fd)
{
	struct kept *c = find(k, m->id);

	if (!c) {
		close(fd);
		return;
	}
	unwatch(c, m->index);
	if (!GS_ROOM_FOR_ONE(c->w, c->n_w, c->cap_w, 8)) {
		close(fd);
		return;
	}
	c->w[c->n_w++] = (struct kept_watch){ fd, m->index, m->aux };
}

/* A sandbox's own client. None replaces another: each agent that served
 * the container makes its own (RM lets a client's memory be dup'ed for a
 * UVM map only by the process that made the client), and the older ones
 * are held so that their handles stay taken. */
static void add_own_client(struct keeper *k, const struct gs_keeper_msg *m, int fd)
{
	struct kept *c = find(k, m->id);

	if (!c || c->n_own >= MAX_OWN_CLIENTS || !GS_ROOM_FOR_ONE(c->own, c->n_own, c->cap_own, 2)) {
		close(fd);
		say("container %s: an own client not kept", m->id);
		return;
	}
	c->own[c->n_own++] = (struct kept_own){ fd, m->index };
}

/* Everything held, to a (restarted) agent; then END with the previous
 * agent's pidfd, so that it waits for that one to be gone before it
 * answers any call (two agents must never serve one listener). */
static int send_all(struct keeper *k, int peer)
{
	struct gs_keeper_msg m;

	for (unsigned i = 0; i < k->n; i++) {
		struct kept *c = &k->c[i];
		int fds[2] = { c->pidfd, c->memfd };
		memset(&m, 0, sizeof(m));
		m.op = GS_KEEPER_CONTAINER;
		memcpy(m.id, c->id, sizeof(m.id));
		if (gs_keeper_send(peer, &m, fds, 2) < 0)
			return -1;
		for (unsigned j = 0; j < c->n; j++) {
			m.op = GS_KEEPER_LISTENER;
			m.index = c->l[j].index;
			if (gs_keeper_send(peer, &m, &c->l[j].fd, 1) < 0)
				return -1;
		}
		for (unsigned j = 0; j < c->n_w; j++) {
			m.op = GS_KEEPER_WATCH;
			m.index = c->w[j].client;
			m.aux = c->w[j].tfd;
			if (gs_keeper_send(peer, &m, &c->w[j].fd, 1) < 0)
				return -1;
		}
		m.aux = 0;
		for (unsigned j = 0; j < c->n_own; j++) {
			m.op = GS_KEEPER_OWN_CLIENT;
			m.index = c->own[j].client;
			if (gs_keeper_send(peer, &m, &c->own[j].fd, 1) < 0)
				return -1;
		}
	}
	memset(&m, 0, sizeof(m));
	m.op = GS_KEEPER_END;
	return gs_keeper_send(peer, &m, &k->agent_pidfd, k->agent_pidfd >= 0 ? 1 : 0);
}

/* One message from a peer. Returns -1 when the peer must be dropped. */
static int handle_peer(struct keeper *k, int peer)
{
	struct gs_keeper_msg m;
	int fds[GS_KEEPER_MAX_FDS];
	int rc = gs_keeper_recv(peer, &m, fds);

	if (rc <= 0) {
		if (rc < 0)
			say("%s", "a peer sent a malformed message: disconnected");
		return -1;
	}
	switch (m.op) {
	case GS_KEEPER_HELLO:
		if (send_all(k, peer) < 0) {
			close(fds[0]);
			return -1;
		}
		if (k->agent_pidfd >= 0)
			close(k->agent_pidfd);
		k->agent_pidfd = fds[0];
		fprintf(stderr, "gpusandbox keeper: an agent connected; %u container(s) handed over\n", k->n);
		return 0;
	case GS_KEEPER_CONTAINER: add_container(k, &m, fds); return 0;
	case GS_KEEPER_LISTENER: add_listener(k, &m, fds[0]); return 0;
	case GS_KEEPER_WATCH: add_watch(k, &m, fds[0]); return 0;
	case GS_KEEPER_OWN_CLIENT: add_own_client(k, &m, fds[0]); return 0;
	case GS_KEEPER_UNWATCH: {
		struct kept *c = find(k, m.id);
		if (c)
			unwatch(c, m.index);
		return 0;
	}
	case GS_KEEPER_DROP: {
		struct kept *c = find(k, m.id);
		if (c)
			drop(k, c);
		return 0;
	}
	default:
		for (unsigned i = 0; i < m.nfds; i++)
			close(fds[i]);
		return -1;
	}
}

/* Only peers of the keeper's own uid: anyone else could take the
 * listeners (and answer the containers' calls) or drop them. */
static void accept_peer(struct keeper *k, int lfd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cred);
	int peer = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (peer < 0)
		return;
	if (getsockopt(peer, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid() ||
	    k->n_peers >= MAX_PEERS) {
		fprintf(stderr, "gpusandbox keeper: refused a peer (pid %d uid %d)\n", (int)cred.pid,
		        (int)cred.uid);
		close(peer);
		return;
	}
	k->peers[k->n_peers++] = peer;
}

/* Listeners whose filter no task holds any more; a container with none
 * left is dropped. */
static void drop_hung_up(struct keeper *k, const struct pollfd *p)
{
	/* First close the hung-up ones in poll order (p follows k's order),
	 * then compact: removing while walking would shift that order. */
	for (unsigned i = 0; i < k->n; i++)
		for (unsigned j = 0; j < k->c[i].n; j++, p++)
			if (p->revents & (POLLHUP | POLLERR | POLLNVAL)) {
				close(k->c[i].l[j].fd);
				k->c[i].l[j].fd = -1;
			}
	for (unsigned i = 0; i < k->n;) {
		struct kept *c = &k->c[i];
		unsigned had = c->n, kept = 0;
		for (unsigned j = 0; j < c->n; j++)
			if (c->l[j].fd >= 0)
				c->l[kept++] = c->l[j];
		k->n_listeners -= had - kept;
		c->n = kept;
		if (had && !kept) {
			say("container %s: every listener hung up; dropped", c->id);
			drop(k, c);
			continue;
		}
		i++;
	}
}

static int serve(struct keeper *k, int lfd, int sfd)
{
	for (;;) {
		unsigned n = 2 + k->n_peers + k->n_listeners, at = 0;
		struct pollfd *p = calloc(n, sizeof(*p));
		if (!p)
			return -1;
		p[at++] = (struct pollfd){ sfd, POLLIN, 0 };
		p[at++] = (struct pollfd){ lfd, POLLIN, 0 };
		for (unsigned i = 0; i < k->n_peers; i++)
			p[at++] = (struct pollfd){ k->peers[i], POLLIN, 0 };
		/* No events asked: POLLHUP comes anyway, and a pending
		 * notification (POLLIN) is the agent's business. */
		for (unsigned i = 0; i < k->n; i++)
			for (unsigned j = 0; j < k->c[i].n; j++)
				p[at++] = (struct pollfd){ k->c[i].l[j].fd, 0, 0 };
		if (poll(p, n, -1) < 0) {
			free(p);
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[0].revents & POLLIN) {
			free(p);
			return 0;
		}
		drop_hung_up(k, p + 2 + k->n_peers);
		for (unsigned i = k->n_peers; i-- > 0;)
			if ((p[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) && handle_peer(k, k->peers[i]) < 0) {
				close(k->peers[i]);
				k->peers[i] = k->peers[--k->n_peers];
			}
		if (p[1].revents & POLLIN)
			accept_peer(k, lfd);
		free(p);
	}
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			errno = EEXIST;
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	old = umask(SOCKET_UMASK);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Holding fds needs no capability: every one is dropped (the bounding
 * set too, so nothing gains one back through an exec). */
static void drop_capabilities(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		(void)prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	if (syscall(SYS_capset, &h, d) < 0)
		fprintf(stderr, "gpusandbox keeper: warning: dropping capabilities: %s\n", strerror(errno));
}

static const char *parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int c;

	cmd_usage_set("keeper");
	opterr = 0;
	optind = 2; /* after "keeper" */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'h': fputs(keeper_usage, stdout); exit(0);
		default: cmd_option_error(c, argv);
		}
	}
	if (optind < argc)
		cmd_usage_error("keeper takes no arguments (got '%s')", argv[optind]);
	if (!path)
		cmd_usage_error("%s", "keeper needs --socket PATH");
	return path;
}

_Noreturn void gs_keeper_main(int argc, char **argv)
{
	static struct keeper k = { .agent_pidfd = -1 };
	const char *path = parse_options(argc, argv);
	struct gs_error err = { 0 };
	sigset_t sigs;
	int lfd, sfd, rc;

	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Before listening (startup_checks.h): the socket's folder, and at
	 * least the services' minimum of descriptors. */
	if (gs_check_parent_folder("--socket", path, &err) < 0 || gs_check_nofile(&err) < 0) {
		char buf[GS_ERROR_MSG_MAX + 64];
		gs_error_text(&err, buf, sizeof(buf));
		fprintf(stderr, "gpusandbox keeper: %s\n", buf);
		exit(GS_EXIT_ERROR);
	}
	/* Every listener and every release watch it holds is an fd: as
	 * many as the hard limit allows (agent_limits.h). */
	(void)gs_raise_nofile("keeper", GS_KEEPER_FDS_PER_CONTAINER);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(path);
	if (lfd < 0 || sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		fprintf(stderr, "gpusandbox keeper: listening on %s: %s\n", path, strerror(errno));
		exit(GS_EXIT_ERROR);
	}
	drop_capabilities();
	fprintf(stderr, "gpusandbox keeper: listening on %s\n", path);
	rc = serve(&k, lfd, sfd);
	close(lfd);
	unlink(path);
	fprintf(stderr, "gpusandbox keeper: stopping with %u container(s) held\n", k.n);
	exit(rc < 0 ? GS_EXIT_ERROR : 0);
}
