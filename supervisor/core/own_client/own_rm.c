/* SPDX-License-Identifier: MIT */
/*
 * own_rm.c - the sandbox's own RM client (own_rm.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "own_rm.h"
#include "rm_own.h"

#define CTL_PATH "/dev/nvidiactl"
#define MAX_NODES 64u

static nv_status_t make_client(struct gs_own_rm *o)
{
	nv_handle_t client = 0;

	o->ctl_fd = open(CTL_PATH, O_RDWR | O_CLOEXEC);
	if (o->ctl_fd < 0)
		return NV_ERR_OPERATING_SYSTEM;
	nv_status_t st = rm_own_alloc(o->ctl_fd, 0, 0, &client, NV01_ROOT_CLIENT, &client, 0);
	if (st != NV_OK) {
		close(o->ctl_fd);
		o->ctl_fd = -1;
		return st;
	}
	o->client = client;
	if (o->on_client)
		o->on_client(o->on_client_ctx, o->ctl_fd, client);
	return NV_OK;
}

/* Our device on the GPU of minor gpu, with every GPU node open around
 * it (holding them all covers whichever the driver checks). */
static nv_status_t make_device(struct gs_own_rm *o, int gpu, const struct gs_gpu_entry *map, unsigned n_map)
{
	struct nv0080_alloc_params dp = { 0 };

	if (gs_gpu_instance_of_minor(o->ctl_fd, o->client, map, n_map, (unsigned)gpu, &dp.device_id) < 0)
		return NV_ERR_INVALID_DEVICE;
	int nodes[MAX_NODES];
	unsigned n = rm_own_open_gpu_nodes(nodes, MAX_NODES);
	nv_handle_t dev = GS_OWN_DEVICE(gpu);
	nv_status_t st = rm_own_alloc(o->ctl_fd, o->client, o->client, &dev, NV01_DEVICE_0, &dp, sizeof(dp));

	rm_own_close_fds(nodes, n);
	return st;
}

nv_status_t gs_own_rm_device(struct gs_own_rm *o, int gpu, const struct gs_gpu_entry *map, unsigned n_map)
{
	nv_status_t st;

	if (gpu < 0 || (unsigned)gpu >= GS_OWN_MAX_GPUS)
		return NV_ERR_INVALID_ARGUMENT;
	if (o->ctl_fd < 0 && (st = make_client(o)) != NV_OK)
		return st;
	if (o->devices & (1ull << gpu))
		return NV_OK;
	st = make_device(o, gpu, map, n_map);
	if (st == NV_OK)
		o->devices |= 1ull << gpu;
	return st;
}

static struct nvos57 share_of(const struct gs_own_rm *o, nv_handle_t h_client, nv_handle_t h_object,
                              uint8_t action)
{
	return (struct nvos57){ .h_client = h_client, .h_object = h_object,
	                        .policy = { .target = o->client, .access_mask = RS_ACCESS_DUP_OBJECT_BIT,
	                                    .type = RS_SHARE_TYPE_CLIENT, .action = action } };
}

void gs_own_rm_drop_temp(struct gs_own_rm *o)
{
	if (o->temp_parent) {
		(void)rm_own_free(o->ctl_fd, o->client, o->temp_parent, GS_OWN_TEMP_DUP);
		o->temp_parent = 0;
	}
	if (o->shared_fd >= 0) {
		struct nvos57 revoke = share_of(o, o->shared_client, o->shared_object,
		                                RS_SHARE_ACTION_FLAG_COMPOSE | RS_SHARE_ACTION_FLAG_REVOKE);
		if (!o->test_keep_share)
			(void)rm_own_share(o->shared_fd, &revoke);
		close(o->shared_fd);
		o->shared_fd = -1;
	}
}

static struct nvos55 temp_dup_of(const struct gs_own_rm *o, int gpu, nv_handle_t h_client,
                                  nv_handle_t h_object)
{
	return (struct nvos55){ .h_client = o->client, .h_parent = GS_OWN_DEVICE(gpu),
	                        .h_object = GS_OWN_TEMP_DUP, .h_client_src = h_client,
	                        .h_object_src = h_object };
}

bool gs_own_rm_shares_clients(const struct gs_own_rm *o)
{
	return o->share_clients && !o->test_share_per_map;
}

static bool listed(const nv_handle_t *list, unsigned n, nv_handle_t h)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i] == h)
			return true;
	return false;
}

static void unlist(nv_handle_t *list, unsigned *n, nv_handle_t h)
{
	for (unsigned i = 0; i < *n; i++)
		if (list[i] == h) {
			list[i] = list[--*n];
			return;
		}
}

/* Adds h to a bounded list, emptied when full (each handle forgotten is
 * only asked again: own_rm.h). */
static void enlist(nv_handle_t *list, unsigned *n, nv_handle_t h)
{
	if (listed(list, *n, h))
		return;
	if (*n == GS_OWN_SHARED_CLIENTS)
		*n = 0;
	list[(*n)++] = h;
}

bool gs_own_rm_client_shared(const struct gs_own_rm *o, nv_handle_t h_client)
{
	return listed(o->shared_clients, o->n_shared_clients, h_client);
}

bool gs_own_rm_no_inherit(const struct gs_own_rm *o, nv_handle_t h_client)
{
	return listed(o->per_memory_clients, o->n_per_memory_clients, h_client);
}

void gs_own_rm_note_no_inherit(struct gs_own_rm *o, nv_handle_t h_client)
{
	enlist(o->per_memory_clients, &o->n_per_memory_clients, h_client);
}

void gs_own_rm_forget_client(struct gs_own_rm *o, nv_handle_t h_client)
{
	unlist(o->shared_clients, &o->n_shared_clients, h_client);
	unlist(o->per_memory_clients, &o->n_per_memory_clients, h_client);
}

nv_status_t gs_own_rm_share_client(struct gs_own_rm *o, int ctl, nv_handle_t h_client)
{
	/* COMPOSE, as for a memory: the client's first edited list starts
	 * from the default (clients of the workload's own process may dup
	 * its objects), not empty (tests/adv uvm_share). */
	struct nvos57 share = share_of(o, h_client, h_client, RS_SHARE_ACTION_FLAG_COMPOSE);
	nv_status_t st = rm_own_share(ctl, &share);

	if (st == NV_OK)
		enlist(o->shared_clients, &o->n_shared_clients, h_client);
	return st;
}

nv_status_t gs_own_rm_dup_shared(struct gs_own_rm *o, int gpu, nv_handle_t h_client, nv_handle_t h_object)
{
	gs_own_rm_drop_temp(o);
	struct nvos55 dup = temp_dup_of(o, gpu, h_client, h_object);
	nv_status_t st = rm_own_dup(o->ctl_fd, &dup);

	if (st == NV_OK)
		o->temp_parent = GS_OWN_DEVICE(gpu);
	return st;
}

nv_status_t gs_own_rm_dup_temp(struct gs_own_rm *o, int gpu, int ctl, nv_handle_t h_client,
                               nv_handle_t h_object)
{
	gs_own_rm_drop_temp(o);
	/* COMPOSE: the memory's first edited list starts from the policies
	 * in force, not empty, so the driver's default (clients of the
	 * workload's own process may dup it) stays; without it our share
	 * would take that away (tests/adv/uvm_share.c). */
	struct nvos57 share = share_of(o, h_client, h_object, RS_SHARE_ACTION_FLAG_COMPOSE);
	nv_status_t st = rm_own_share(ctl, &share);

	if (st != NV_OK) {
		close(ctl);
		return st;
	}
	o->shared_fd = ctl;
	o->shared_client = h_client;
	o->shared_object = h_object;
	struct nvos55 dup = temp_dup_of(o, gpu, h_client, h_object);
	st = rm_own_dup(o->ctl_fd, &dup);
	if (st == NV_OK)
		o->temp_parent = GS_OWN_DEVICE(gpu);
	return st;
}

void gs_own_rm_close(struct gs_own_rm *o)
{
	gs_own_rm_drop_temp(o);
	if (o->ctl_fd >= 0) {
		if (o->client)
			(void)rm_own_free(o->ctl_fd, o->client, o->client, o->client);
		close(o->ctl_fd);
	}
	o->ctl_fd = -1;
	o->client = 0;
	o->devices = 0;
	o->n_shared_clients = 0;
	o->n_per_memory_clients = 0;
}

void gs_own_rm_retire(int ctl_fd, nv_handle_t client)
{
	for (unsigned g = 0; g < GS_OWN_MAX_GPUS; g++)
		(void)rm_own_free(ctl_fd, client, client, GS_OWN_DEVICE(g));
}
