/* SPDX-License-Identifier: MIT */
/*
 * ledger_sm.c - what the compute-share controller (--sm) and the per-call
 * checks ask of the ledger's clients and hardware objects: a client's
 * route and control file, the channels to switch and count, the engines.
 * Out of ledger.c, which keeps the objects (ledger_obj.h); uses ledger.c,
 * never the other way round.
 */
#define _GNU_SOURCE
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

uint32_t ledger_count_engines(const struct ledger *l, bool (*match)(uint32_t cls, const void *arg),
                              const void *arg)
{
	uint32_t n = 0;

	for (uint32_t i = l->hw_head; i != NONE; i = l->objs[i].hw_next)
		if (l->objs[i].used && l->objs[i].kind == RM_CLASS_ENGINE && match(l->objs[i].cls, arg))
			n++;
	return n;
}

