/* SPDX-License-Identifier: MIT */
/*
 * ledger_sm.c - what the compute-share controller (--sm) and the per-call
 * checks ask of the ledger's clients and hardware objects: a client's
 * route and control file, the channels to switch and count, the engines.
 * Out of ledger.c, which keeps the objects (ledger_obj.h); uses ledger.c,
 * never the other way round.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_obj.h"
#include "ledger_watch.h"

#define NONE LEDGER_NONE

void ledger_set_route(struct ledger *l, uint32_t h_client, pid_t tid, int wfd)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx != NONE && l->objs[idx].kind == RM_CLASS_CLIENT) {
		l->objs[idx].route_tid = tid;
		l->objs[idx].route_wfd = wfd;
	}
}

int ledger_client_route(const struct ledger *l, uint32_t h_client, struct ledger_route *r)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx == NONE || l->objs[idx].kind != RM_CLASS_CLIENT)
		return -1;
	r->tid = l->objs[idx].route_tid;
	r->wfd = l->objs[idx].route_wfd;
	return 0;
}

int ledger_fd_is_client_file(const struct ledger *l, uint32_t h_client, int fd)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx == NONE)
		return 0;
	return ledger_obj_watch_is_file(l, &l->objs[idx], fd);
}

int ledger_task_fd_is_client_file(const struct ledger *l, uint32_t h_client, pid_t tid, int wfd)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx == NONE || l->objs[idx].kind != RM_CLASS_CLIENT)
		return 0;
	const struct ledger_obj *o = &l->objs[idx];
	return ledger_watch_is_task_file_at(l->self, o->watch_epfd, o->watch_tfd, tid, wfd);
}

bool ledger_client_file_alive(const struct ledger *l, uint32_t h_client)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	return idx != NONE && (l->objs[idx].watch_epfd < 0 || ledger_obj_watch_alive(l, &l->objs[idx]));
}

/* A channel may be toggled once the context that owns it has settled: its
 * group was first scheduled at least settle_ns ago. Toggling earlier hung
 * CUDA's context set-up on the real driver (design.md 1.6). Whatever the
 * ledger believes about scheduling, a channel older than
 * LEDGER_SETTLE_MAX_FACTOR settling times is settled: no trick keeps a
 * channel out of the duty cycle for longer. */
#define LEDGER_SETTLE_MAX_FACTOR 10u
static bool channel_settled(const struct ledger *l, const struct ledger_obj *ch, uint64_t now_ns,
                            uint64_t settle_ns)
{
	uint32_t p = ch->has_parent ? ledger_obj_find_resolved(l, ch->client, ch->parent) : NONE;

	if (now_ns < ch->since_ns)
		return false;
	if (now_ns - ch->since_ns >= settle_ns * LEDGER_SETTLE_MAX_FACTOR)
		return true;
	if (p != NONE && l->objs[p].kind == RM_CLASS_CHANNEL_GROUP)
		return l->objs[p].since_ns && now_ns >= l->objs[p].since_ns &&
		       now_ns - l->objs[p].since_ns >= settle_ns;
	return now_ns - ch->since_ns >= settle_ns;
}

uint32_t ledger_list_channels(const struct ledger *l, int gpu, uint64_t now_ns, uint64_t settle_ns,
                              struct ledger_channel *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = l->hw_head; i != NONE && n < max; i = l->objs[i].hw_next) {
		const struct ledger_obj *o = &l->objs[i];
		if (!o->used || o->kind != RM_CLASS_CHANNEL || !o->counted || o->gpu != gpu)
			continue;
		out[n++] = (struct ledger_channel){
			.client = o->client, .handle = o->handle, .parent = o->parent,
			.sm_disabled = o->sm_disabled,
			.settled = channel_settled(l, o, now_ns, settle_ns),
		};
	}
	return n;
}

void ledger_count_channels(const struct ledger *l, uint32_t counts[GS_MAX_GPUS])
{
	memset(counts, 0, sizeof(uint32_t) * GS_MAX_GPUS);
	for (uint32_t i = l->hw_head; i != NONE; i = l->objs[i].hw_next) {
		const struct ledger_obj *o = &l->objs[i];
		if (o->used && o->kind == RM_CLASS_CHANNEL && o->counted && o->gpu >= 0 &&
		    (unsigned)o->gpu < GS_MAX_GPUS)
			counts[o->gpu]++;
	}
}

void ledger_set_sm_disabled(struct ledger *l, uint32_t h_client, uint32_t h_channel, bool disabled)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_channel);

	if (idx != NONE && l->objs[idx].kind == RM_CLASS_CHANNEL)
		l->objs[idx].sm_disabled = disabled;
}

uint32_t ledger_subdevice_of(const struct ledger *l, uint32_t h_client, int gpu)
{
	for (uint32_t i = l->hw_head; i != NONE; i = l->objs[i].hw_next) {
		const struct ledger_obj *o = &l->objs[i];
		if (o->used && o->client == h_client && o->kind == RM_CLASS_SUBDEVICE && o->gpu == gpu)
			return o->handle;
	}
	return 0;
}

bool ledger_is_engine(const struct ledger *l, uint32_t h_client, uint32_t handle)
{
	uint32_t idx = ledger_obj_find_resolved(l, h_client, handle);

	return idx != NONE && l->objs[idx].kind == RM_CLASS_ENGINE;
}

/* One live engine object's group (ledger_count_engine_sessions): its
 * client, or 0 when the query groups by GPU alone, and its GPU. */
struct engine_group {
	uint32_t client;
	int      gpu;
};

static int group_order(const void *a, const void *b)
{
	const struct engine_group *x = a, *y = b;

	if (x->client != y->client)
		return x->client < y->client ? -1 : 1;
	return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

static bool is_engine_of(const struct ledger_obj *o, const struct ledger_engine_query *q)
{
	return o->used && o->kind == RM_CLASS_ENGINE && q->match(o->cls, q->match_arg);
}

static bool in_callers_group(const struct ledger_obj *o, const struct ledger_engine_query *q)
{
	return o->gpu == q->gpu && (q->by_gpu || o->client == q->client);
}

/* ceil(n / per_session), a per_session of 0 read as 1. */
static uint32_t sessions_of(uint32_t n, uint32_t per_session)
{
	if (per_session == 0)
		per_session = 1;
	return n / per_session + (n % per_session != 0);
}

struct ledger_engine_count ledger_count_engine_sessions(const struct ledger *l,
                                                        const struct ledger_engine_query *q)
{
	struct ledger_engine_count c = { 0, 0, 0 };
	struct engine_group *groups;
	uint32_t n = 0;

	for (uint32_t i = l->hw_head; i != NONE; i = l->objs[i].hw_next)
		if (is_engine_of(&l->objs[i], q)) {
			c.objects++;
			c.held += in_callers_group(&l->objs[i], q);
		}
	if (c.objects == 0)
		return c;
	groups = malloc(sizeof(*groups) * c.objects);
	if (!groups) {
		c.sessions = c.objects;
		return c;
	}
	for (uint32_t i = l->hw_head; i != NONE && n < c.objects; i = l->objs[i].hw_next)
		if (is_engine_of(&l->objs[i], q))
			groups[n++] = (struct engine_group){ q->by_gpu ? 0 : l->objs[i].client, l->objs[i].gpu };
	/* Sorted, each group's objects are one run. */
	qsort(groups, n, sizeof(*groups), group_order);
	for (uint32_t i = 0; i < n;) {
		uint32_t run = 1;
		while (i + run < n && group_order(&groups[i], &groups[i + run]) == 0)
			run++;
		c.sessions += sessions_of(run, q->per_session(q->ctx, groups[i].gpu));
		i += run;
	}
	free(groups);
	return c;
}
