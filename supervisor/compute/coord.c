/* SPDX-License-Identifier: MIT */
/*
 * coord.c - the client side of the per-GPU compute-share coordinator (see
 * coord.h): finding or hosting the coordinator, reporting, and following
 * the plan it sends. Called from the duty-cycle thread: nothing here
 * blocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "coord.h"
#include "driver.h"

#define NS_PER_MS        1000000ull
/* How often a client without a coordinator tries to reach or host one. */
#define RETRY_MS         200u
#define DIR_MODE         0700
#define LOCK_MODE        0600
#define OTHERS_BITS      077
#define PERIOD_MIN_NS    (5ull * NS_PER_MS)
#define PERIOD_MAX_NS    (1000ull * NS_PER_MS)

const char *gs_coord_dir(void)
{
	const char *env = getenv(GS_COORD_DIR_ENV);

	if (env && env[0] == '/')
		return env;
	if (gs_driver_nodes_fake())
		return NULL;
	return GS_COORD_DIR_DEFAULT;
}

/* mkdir -p, each new component DIR_MODE. */
static void make_dirs(const char *dir)
{
	char path[GS_COORD_PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return;
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			(void)mkdir(path, DIR_MODE);
			*p = '/';
		}
	(void)mkdir(path, DIR_MODE);
}

int gs_coord_dir_ready(const char *dir)
{
	struct stat st;

	if (!dir || dir[0] != '/')
		return -1;
	make_dirs(dir);
	/* Ours and closed to everyone else: anyone who could create the
	 * lock or the socket here could pose as the coordinator. */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & OTHERS_BITS))
		return -1;
	return 0;
}

void gs_coord_init(struct gs_coord *c, const char *dir, uint32_t gpu_id, uint32_t percent,
                   enum gs_sm_mode mode, uint32_t period_ms)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->percent = percent;
	c->mode = mode;
	c->period_ms = period_ms;
	c->busy = true;
	if (!dir)
		return;
	int a = snprintf(c->lock_path, sizeof(c->lock_path), "%s/gpu-%08x.lock", dir, gpu_id);
	int b = snprintf(c->sock_path, sizeof(c->sock_path), "%s/gpu-%08x.sock", dir, gpu_id);
	c->enabled = a > 0 && a < (int)sizeof(c->lock_path) && b > 0 && b < (int)sizeof(c->sock_path);
}

static void drop_connection(struct gs_coord *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->have_cur = c->have_next = false;
}

static void send_report(struct gs_coord *c)
{
	struct coord_report_msg m = { GS_COORD_MAGIC, c->percent, (uint32_t)c->mode, c->busy };

	if (c->fd >= 0 && send(c->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
	    errno != EAGAIN)
		drop_connection(c);
}

static void try_connect(struct gs_coord *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	memcpy(sa.sun_path, c->sock_path, strlen(c->sock_path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return;
	}
	c->fd = fd;
	send_report(c);
}

/* Nobody answers: the first to take the lock hosts. The lock is released
 * by the kernel when the host dies, whatever the way. */
static void try_host(struct gs_coord *c)
{
	int fd = open(c->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, LOCK_MODE);

	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return;
	}
	c->server = coord_server_start(fd, c->sock_path, c->period_ms);
	if (c->server)
		c->hosted_times++;
}

/* A plan from the wire is used only if it makes sense. */
static bool plan_valid(const struct gs_coord_plan *p)
{
	if (p->period_ns < PERIOD_MIN_NS || p->period_ns > PERIOD_MAX_NS ||
	    p->jitter_ppm >= GS_PLAN_PPM || p->slot.n_win > GS_PLAN_MAX_WINDOWS ||
	    p->n_starts > GS_PLAN_MAX_STARTS)
		return false;
	for (uint32_t i = 0; i < p->n_starts; i++)
		if (p->starts[i] >= GS_PLAN_PPM)
			return false;
	for (uint32_t i = 0; i < p->slot.n_win; i++)
		if ((uint64_t)p->slot.win[i].offset + p->slot.win[i].len > GS_PLAN_PPM)
			return false;
	return true;
}

/* Moves the period cursor to the period holding now. */
static void advance_cursor(struct gs_coord *c, uint64_t now)
{
	const struct gs_coord_plan *p = &c->cur;

	while (now >= c->k_start + c->k_len) {
		c->k_start += c->k_len;
		c->k++;
		c->k_len = gs_plan_period_ns(p->period_ns, p->jitter_ppm, p->seed, c->k);
	}
}

static void adopt(struct gs_coord *c, const struct gs_coord_plan *p)
{
	bool same_clock = c->have_cur && c->cur.seed == p->seed && c->cur.period_ns == p->period_ns &&
	                  c->cur.jitter_ppm == p->jitter_ppm && c->k >= p->anchor_k;

	c->cur = *p;
	c->have_cur = true;
	if (!same_clock) {
		c->k = p->anchor_k;
		c->k_start = p->anchor_ns;
		c->k_len = gs_plan_period_ns(p->period_ns, p->jitter_ppm, p->seed, p->anchor_k);
	}
}

static void drain(struct gs_coord *c, uint64_t now)
{
	struct coord_plan_msg m;

	for (;;) {
		ssize_t n = recv(c->fd, &m, sizeof(m), MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n != (ssize_t)sizeof(m) || m.magic != GS_COORD_MAGIC || !plan_valid(&m.plan)) {
			drop_connection(c);
			return;
		}
		c->heard_ns = now;
		c->plans_received++;
		if (m.plan.from_ns <= now) {
			adopt(c, &m.plan);
			c->have_next = false;
		} else {
			c->next = m.plan;
			c->have_next = true;
		}
	}
}

void gs_coord_tick(struct gs_coord *c, uint64_t now)
{
	if (!c->enabled)
		return;
	if (c->fd < 0 && now >= c->next_try_ns) {
		c->next_try_ns = now + RETRY_MS * NS_PER_MS;
		try_connect(c);
		if (c->fd < 0 && !c->server) {
			try_host(c);
			if (c->server)
				try_connect(c);
		}
	}
	if (c->fd >= 0)
		drain(c, now);
	if (c->have_next && now >= c->next.from_ns) {
		adopt(c, &c->next);
		c->have_next = false;
	}
}

void gs_coord_report(struct gs_coord *c, bool busy)
{
	c->busy = busy;
	send_report(c);
}

/* The first window boundary after pos (ppm), or the period's end. */
static uint32_t next_boundary(const struct gs_plan_slot *s, uint32_t pos)
{
	uint32_t best = GS_PLAN_PPM;

	for (uint32_t i = 0; i < s->n_win; i++) {
		uint32_t a = s->win[i].offset, b = s->win[i].offset + s->win[i].len;
		if (a > pos && a < best)
			best = a;
		if (b > pos && b < best)
			best = b;
	}
	return best;
}

/* The first edge after raw position pos of a period rotated by rot (plan
 * position = raw + rot, modulo the period): a window boundary, the raw
 * place where the plan wraps to its start, or the period's end. */
static uint32_t next_edge_raw(const struct gs_plan_slot *s, uint32_t pos, uint32_t rot)
{
	uint32_t wrap = GS_PLAN_PPM - rot;   /* raw place of plan position 0 */

	if (pos < wrap)
		return next_boundary(s, pos + rot) - rot;
	uint32_t b = next_boundary(s, pos - wrap) + wrap;
	return b < GS_PLAN_PPM ? b : GS_PLAN_PPM;
}

bool gs_coord_schedule(struct gs_coord *c, uint64_t now, bool *on, uint64_t *edge)
{
	if (!c->enabled || c->fd < 0 || !c->have_cur ||
	    now - c->heard_ns > GS_COORD_PLAN_TTL_MS * NS_PER_MS)
		return false;
	/* Alone and capped: the independent loop is exact (closed on the
	 * driver's samples); windows would add nothing. */
	if ((c->cur.tenants < 2 && c->mode == GS_SM_MODE_CAP) || now < c->k_start)
		return false;
	advance_cursor(c, now);
	uint32_t pos = (uint32_t)((unsigned __int128)(now - c->k_start) * GS_PLAN_PPM / c->k_len);
	uint32_t rot = gs_plan_rotation_ppm(c->cur.seed, c->k, c->cur.starts, c->cur.n_starts);
	uint32_t b = next_edge_raw(&c->cur.slot, pos, rot);
	uint64_t t = c->k_start + (uint64_t)(((unsigned __int128)b * c->k_len + GS_PLAN_PPM - 1) / GS_PLAN_PPM);
	uint64_t stale = c->heard_ns + GS_COORD_PLAN_TTL_MS * NS_PER_MS + 1;

	*on = gs_plan_slot_on(&c->cur.slot, (uint32_t)(((uint64_t)pos + rot) % GS_PLAN_PPM));
	if (c->have_next && c->next.from_ns < t)
		t = c->next.from_ns;
	*edge = t < stale ? t : stale;
	return true;
}

uint32_t gs_coord_own_ppm(const struct gs_coord *c)
{
	return c->have_cur ? c->cur.slot.own.len : 0;
}

void gs_coord_close(struct gs_coord *c)
{
	drop_connection(c);
	if (c->server)
		coord_server_stop(c->server);
	c->server = NULL;
	c->enabled = false;
}
