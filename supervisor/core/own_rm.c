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
	return NV_OK;
}

/* Our device on device instance gpu, with every GPU node open around it
 * (which minor is which instance does not matter: holding them all
 * covers it). */
static nv_status_t make_device(struct gs_own_rm *o, int gpu)
{
	int nodes[MAX_NODES];
	unsigned n = rm_own_open_gpu_nodes(nodes, MAX_NODES);
	struct nv0080_alloc_params dp = { .device_id = (uint32_t)gpu };
	nv_handle_t dev = GS_OWN_DEVICE(gpu);
	nv_status_t st = rm_own_alloc(o->ctl_fd, o->client, o->client, &dev, NV01_DEVICE_0, &dp, sizeof(dp));

	rm_own_close_fds(nodes, n);
	return st;
}

nv_status_t gs_own_rm_device(struct gs_own_rm *o, int gpu)
{
	nv_status_t st;

	if (gpu < 0 || (unsigned)gpu >= GS_OWN_MAX_GPUS)
		return NV_ERR_INVALID_ARGUMENT;
	if (o->ctl_fd < 0 && (st = make_client(o)) != NV_OK)
		return st;
	if (o->devices & (1ull << gpu))
		return NV_OK;
	st = make_device(o, gpu);
	if (st == NV_OK)
		o->devices |= 1ull << gpu;
	return st;
}

void gs_own_rm_drop_temp(struct gs_own_rm *o)
{
	if (!o->temp_parent)
		return;
	(void)rm_own_free(o->ctl_fd, o->client, o->temp_parent, GS_OWN_TEMP_DUP);
	o->temp_parent = 0;
}

nv_status_t gs_own_rm_dup_temp(struct gs_own_rm *o, int gpu, nv_handle_t h_client_src,
                               nv_handle_t h_object_src)
{
	nv_status_t st;

	gs_own_rm_drop_temp(o);
	struct nvos55 dup = { .h_client = o->client, .h_parent = GS_OWN_DEVICE(gpu),
	                      .h_object = GS_OWN_TEMP_DUP, .h_client_src = h_client_src,
	                      .h_object_src = h_object_src };
	st = rm_own_dup(o->ctl_fd, &dup);
	if (st == NV_OK)
		o->temp_parent = GS_OWN_DEVICE(gpu);
	return st;
}

void gs_own_rm_close(struct gs_own_rm *o)
{
	o->temp_parent = 0;   /* freed with the client */
	if (o->ctl_fd >= 0) {
		if (o->client)
			(void)rm_own_free(o->ctl_fd, o->client, o->client, o->client);
		close(o->ctl_fd);
	}
	o->ctl_fd = -1;
	o->client = 0;
	o->devices = 0;
}
