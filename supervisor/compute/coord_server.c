/* SPDX-License-Identifier: MIT */
/*
 * coord_server.c - the hosted compute-share coordinator of one GPU: a
 * thread of the supervisor that holds the GPU's lock. It accepts the
 * supervisors of the host (never a sandboxed process), keeps their asks
 * (percent, mode, busy), plans with plan.c and sends each its windows.
 *
 * Plans change for everyone at one instant: a new plan carries from_ns,
 * PLAN_LEAD_MS ahead, and every client switches at that time (on
 * CLOCK_MONOTONIC, or the test's clock: sm_clock.h), so the old and the
 * new plan never run side by side. The same plan is sent again every
 * HEARTBEAT_MS: a client that stops hearing it falls
 * back to its own hard cap (coord.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "coord.h"
#include "gpusandbox.h"
#include "sm_clock.h"

#define NS_PER_MS      1000000ull
#define PLAN_LEAD_MS   100u
#define HEARTBEAT_MS   250u
#define POLL_MS        50
#define BACKLOG        16
#define JITTER_PPM     250000u   /* +-25 %, as the independent loop's jitter */
#define PROC_NS_FMT    "/proc/%d/ns/pid"
#define PROC_PATH_MAX  64
#define PERCENT_MAX    100u
/* The shortest period of a shared plan. Every window edge costs the GPU
 * about 1.1-1.4 ms of disabling or enabling channels (H100, driver
 * 580.159, docs/gpu-results/2026-11-24-h100-coordinator and
 * -rotated-plan): at 20 ms, tenants of 30/70 got 0.265/0.668 of the GPU;
 * at 50 ms, 0.287/0.693 and 25/25/50 summed to 0.945-0.980; at 100 ms,
 * with the plan rotated at its starts (plan.h), 30/70, 50/50 and
 * 25/25/50 were each within 0.8 points in both modes, sums 0.984-0.992.
 * The price is the wait for a window: up to 2 (1 - share) x 125 ms
 * (180 ms seen for 25 %). A longer --sm-period is kept. */
#define SHARED_PERIOD_MIN_MS 100u

struct peer {
	int                   fd;
	bool                  hello;
	struct gs_plan_tenant t;
};

struct coord_server {
	int             lock_fd, lfd;
	char            sock_path[GS_COORD_PATH_MAX];
	pthread_t       thread;
	atomic_bool     stop;
	uint64_t        period_ns, seed;
	uint64_t        k, k_start, k_len;      /* period cursor */
	struct peer     peers[GS_PLAN_MAX_TENANTS];
	unsigned        n;
	uint32_t        next_id;
	uint64_t        plan_from_ns, last_send_ns;
	bool            dirty;
};

/* A peer is a supervisor of ours: our uid, and our PID namespace. A
 * sandboxed process lives in a PID namespace of its own (and cannot see
 * the socket: contain.c masks the directory). */
static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[PROC_PATH_MAX];
	struct stat mine, theirs;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid() ||
	    cr.pid <= 0)
		return false;
	snprintf(path, sizeof(path), PROC_NS_FMT, (int)cr.pid);
	if (stat("/proc/self/ns/pid", &mine) < 0 || stat(path, &theirs) < 0)
		return false;
	return mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

static void drop_peer(struct coord_server *s, unsigned i)
{
	close(s->peers[i].fd);
	s->peers[i] = s->peers[--s->n];
	s->dirty = true;
}

static void accept_peers(struct coord_server *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (s->n >= GS_PLAN_MAX_TENANTS || !peer_allowed(fd)) {
			close(fd);
			continue;
		}
		s->peers[s->n++] = (struct peer){ .fd = fd, .t = { .id = ++s->next_id } };
	}
}

/* Reads every report a peer sent; false when the peer is gone or spoke
 * nonsense. */
static bool read_reports(struct coord_server *s, struct peer *p)
{
	struct coord_report_msg m;

	for (;;) {
		ssize_t n = recv(p->fd, &m, sizeof(m), MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n != (ssize_t)sizeof(m) || m.magic != GS_COORD_MAGIC || m.percent < 1 ||
		    m.percent > PERCENT_MAX || m.mode > GS_SM_MODE_GUARANTEE)
			return false;
		struct gs_plan_tenant t = { .id = p->t.id, .percent = m.percent,
		                            .mode = (enum gs_sm_mode)m.mode, .busy = m.busy != 0 };
		if (!p->hello || memcmp(&t, &p->t, sizeof(t)) != 0)
			s->dirty = true;
		p->t = t;
		p->hello = true;
	}
}

static void advance_cursor(struct coord_server *s, uint64_t now)
{
	while (now >= s->k_start + s->k_len) {
		s->k_start += s->k_len;
		s->k++;
		s->k_len = gs_plan_period_ns(s->period_ns, JITTER_PPM, s->seed, s->k);
	}
}

/* Plans over the peers that said hello, in arrival order, and sends each
 * its slot. A peer that cannot take it is dropped (re-planned next). */
static void send_plans(struct coord_server *s, uint64_t now)
{
	struct gs_plan_tenant t[GS_PLAN_MAX_TENANTS];
	unsigned idx[GS_PLAN_MAX_TENANTS], n = 0;
	struct gs_plan plan;

	for (unsigned i = 0; i < s->n; i++)
		if (s->peers[i].hello) {
			idx[n] = i;
			t[n++] = s->peers[i].t;
		}
	if (gs_plan_make(t, n, &plan) < 0)
		return;
	advance_cursor(s, now);
	for (unsigned j = n; j-- > 0;) {
		struct coord_plan_msg m = {
			.magic = GS_COORD_MAGIC,
			.plan = { .from_ns = s->plan_from_ns, .anchor_ns = s->k_start, .anchor_k = s->k,
			          .seed = s->seed, .period_ns = s->period_ns, .jitter_ppm = JITTER_PPM,
			          .tenants = n, .asked_percent = plan.asked_percent, .slot = plan.slot[j],
			          .n_starts = plan.n_starts },
		};
		memcpy(m.plan.starts, plan.starts, sizeof(m.plan.starts));
		if (send(s->peers[idx[j]].fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			drop_peer(s, idx[j]);
	}
	s->last_send_ns = now;
}

static void serve_once(struct coord_server *s)
{
	struct pollfd pf[GS_PLAN_MAX_TENANTS + 1];
	unsigned n = s->n;

	pf[0] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	for (unsigned i = 0; i < n; i++)
		pf[i + 1] = (struct pollfd){ .fd = s->peers[i].fd, .events = POLLIN };
	if (poll(pf, n + 1, POLL_MS) < 0 && errno != EINTR)
		return;
	/* Backwards: dropping a peer moves the last one into its place. */
	for (unsigned i = n; i-- > 0;)
		if (pf[i + 1].revents && !read_reports(s, &s->peers[i]))
			drop_peer(s, i);
	if (pf[0].revents & POLLIN)
		accept_peers(s);
	uint64_t now = gs_sm_now();
	if (s->dirty) {
		s->plan_from_ns = now + PLAN_LEAD_MS * NS_PER_MS;
		s->dirty = false;
		send_plans(s, now);
	} else if (now - s->last_send_ns >= HEARTBEAT_MS * NS_PER_MS) {
		send_plans(s, now);
	}
}

static void *server_thread(void *arg)
{
	struct coord_server *s = arg;

	while (!atomic_load(&s->stop))
		serve_once(s);
	return NULL;
}

struct coord_server *coord_server_start(int lock_fd, const char *sock_path, uint32_t period_ms)
{
	struct coord_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	sigset_t all, old;

	if (!s || strlen(sock_path) >= sizeof(sa.sun_path)) {
		free(s);
		close(lock_fd);
		return NULL;
	}
	s->lock_fd = lock_fd;
	snprintf(s->sock_path, sizeof(s->sock_path), "%s", sock_path);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	s->period_ns = (uint64_t)(period_ms > SHARED_PERIOD_MIN_MS ? period_ms : SHARED_PERIOD_MIN_MS) *
	               NS_PER_MS;
	s->seed = gs_sm_now() ^ ((uint64_t)getpid() << 32);
	s->k_start = gs_sm_now();
	s->k_len = gs_plan_period_ns(s->period_ns, JITTER_PPM, s->seed, 0);
	/* We hold the lock: a socket file left here is a dead host's. */
	(void)unlink(sock_path);
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(sock_path, S_IRUSR | S_IWUSR) < 0 || listen(s->lfd, BACKLOG) < 0)
		goto fail;
	/* The thread must not take the workload's signals (signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&s->thread, NULL, server_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		return s;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	close(lock_fd);
	free(s);
	return NULL;
}

void coord_server_stop(struct coord_server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	for (unsigned i = 0; i < s->n; i++)
		close(s->peers[i].fd);
	/* The socket goes before the lock: whoever takes the lock next
	 * binds afresh. */
	(void)unlink(s->sock_path);
	close(s->lfd);
	close(s->lock_fd);
	free(s);
}
