/* SPDX-License-Identifier: MIT */
/*
 * own_rm.c - the sandbox's own RM client (own_rm.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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
	gs_own_rm_wait(o);
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

/* The janitor (gs_own_rm_drop_temp_later). pending: a dup and share
 * handed over and not yet dropped; while it is set only the janitor
 * touches temp_parent and shared_*, and the lock orders its drop before
 * anything the worker does once it has seen pending clear. */
struct gs_own_janitor {
	pthread_mutex_t lock;
	pthread_cond_t  cond;
	pthread_t       thread;
	bool            pending, stop;
};

static void drop_now(struct gs_own_rm *o)
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

static void *janitor_main(void *arg)
{
	struct gs_own_rm *o = arg;
	struct gs_own_janitor *j = o->jan;

	pthread_mutex_lock(&j->lock);
	for (;;) {
		while (!j->pending && !j->stop)
			pthread_cond_wait(&j->cond, &j->lock);
		if (!j->pending)
			break;
		const uint64_t gen = o->temp_gen;
		pthread_mutex_unlock(&j->lock);
		drop_now(o);
		pthread_mutex_lock(&j->lock);
		j->pending = false;
		pthread_cond_broadcast(&j->cond);
		pthread_mutex_unlock(&j->lock);
		if (o->after_drop)
			o->after_drop(o->after_drop_ctx, gen);
		pthread_mutex_lock(&j->lock);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* More than one CPU to run on: otherwise a janitor's work would wait on
 * the worker's CPU all the same, plus its switches. */
static bool may_run_elsewhere(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
}

/* The janitor, started with every signal blocked (signals stay with the
 * main thread's signalfd). False when it cannot run. */
static bool janitor_start(struct gs_own_rm *o)
{
	sigset_t all, old;
	struct gs_own_janitor *j;

	if (o->jan)
		return true;
	if (!may_run_elsewhere() || !(j = calloc(1, sizeof(*j))))
		return false;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->cond, NULL);
	o->jan = j;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&j->thread, NULL, janitor_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		return true;
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
	o->jan = NULL;
	return false;
}

void gs_own_rm_wait(struct gs_own_rm *o)
{
	struct gs_own_janitor *j = o->jan;

	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	while (j->pending)
		pthread_cond_wait(&j->cond, &j->lock);
	pthread_mutex_unlock(&j->lock);
}

void gs_own_rm_drop_temp(struct gs_own_rm *o)
{
	gs_own_rm_wait(o);
	drop_now(o);
}

bool gs_own_rm_drop_temp_later(struct gs_own_rm *o)
{
	gs_own_rm_wait(o);
	if (!o->temp_parent && o->shared_fd < 0)
		return false;
	if (!janitor_start(o)) {
		drop_now(o);
		return false;
	}
	pthread_mutex_lock(&o->jan->lock);
	o->jan->pending = true;
	pthread_cond_signal(&o->jan->cond);
	pthread_mutex_unlock(&o->jan->lock);
	return true;
}

/* Stops the janitor once its drop is done. */
static void janitor_stop(struct gs_own_rm *o)
{
	struct gs_own_janitor *j = o->jan;

	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stop = true;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	pthread_join(j->thread, NULL);
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
	o->jan = NULL;
}

nv_status_t gs_own_rm_dup_temp(struct gs_own_rm *o, int gpu, int ctl, nv_handle_t h_client,
                               nv_handle_t h_object)
{
	gs_own_rm_drop_temp(o);
	o->temp_gen++;
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
	struct nvos55 dup = { .h_client = o->client, .h_parent = GS_OWN_DEVICE(gpu),
	                      .h_object = GS_OWN_TEMP_DUP, .h_client_src = h_client,
	                      .h_object_src = h_object };
	st = rm_own_dup(o->ctl_fd, &dup);
	if (st == NV_OK)
		o->temp_parent = GS_OWN_DEVICE(gpu);
	return st;
}

void gs_own_rm_close(struct gs_own_rm *o)
{
	/* The share is revoked before our client goes: a handle freed with
	 * a share still naming it could be taken by anyone (above). */
	gs_own_rm_drop_temp(o);
	janitor_stop(o);
	if (o->ctl_fd >= 0) {
		if (o->client)
			(void)rm_own_free(o->ctl_fd, o->client, o->client, o->client);
		close(o->ctl_fd);
	}
	o->ctl_fd = -1;
	o->client = 0;
	o->devices = 0;
}

void gs_own_rm_retire(int ctl_fd, nv_handle_t client)
{
	for (unsigned g = 0; g < GS_OWN_MAX_GPUS; g++)
		(void)rm_own_free(ctl_fd, client, client, GS_OWN_DEVICE(g));
}
