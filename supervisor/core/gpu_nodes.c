/* SPDX-License-Identifier: MIT */
/*
 * gpu_nodes.c - the process-wide GPU-node lock (gpu_nodes.h says why).
 *
 * Where the process gets GPU node fds, and so takes this lock:
 *   - dup_workload_fd (workload.c): every pidfd_getfd is taken under it,
 *     before its kind is known; a dup that is a GPU node keeps it until
 *     gs_gpu_node_close, anything else lets go at once. The dup cache's
 *     kept control files come back without pidfd_getfd and never take it
 *     (a control file is no GPU's node): the hot path stays lock-free.
 *   - borrow_gpu_nodes .. return_gpu_nodes (workload.c), which covers the
 *     device allocation the supervisor performs with them, also when no
 *     node was borrowed (another thread's node would vouch for it).
 *   - the sampler's own opens and its device allocation (sampler.c).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpu_nodes.h"
#include "workload.h"

/* A borrow's nodes plus the call's own dup and a second fd of the call. */
#define GS_GPU_NODES_PER_THREAD (MAX_BORROWED_GPU_FDS + 4)

static pthread_mutex_t gpu_nodes_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t lock_off_once = PTHREAD_ONCE_INIT;
static bool lock_off;

static __thread unsigned depth;
static __thread int kept[GS_GPU_NODES_PER_THREAD];
static __thread unsigned n_kept;

/* GPUSANDBOX_TEST_NO_GPU_NODE_LOCK in the supervisor's own environment,
 * read once: the lock is off, for the agent test's baseline only
 * (tests/agent/run.sh, gpu-node-race). */
static void read_lock_off(void)
{
	lock_off = getenv("GPUSANDBOX_TEST_NO_GPU_NODE_LOCK") != NULL;
}

void gs_gpu_nodes_enter(void)
{
	pthread_once(&lock_off_once, read_lock_off);
	if (depth++ == 0 && !lock_off)
		pthread_mutex_lock(&gpu_nodes_lock);
}

void gs_gpu_nodes_leave(void)
{
	if (depth == 0)
		abort(); /* unbalanced: a bug that would leave the lock wrong */
	if (--depth == 0 && !lock_off)
		pthread_mutex_unlock(&gpu_nodes_lock);
}

bool gs_gpu_nodes_held(void)
{
	return depth > 0;
}

bool gs_gpu_node_keep(int fd)
{
	if (n_kept == GS_GPU_NODES_PER_THREAD)
		return false;
	gs_gpu_nodes_enter();
	kept[n_kept++] = fd;
	return true;
}

bool gs_gpu_node_kept(int fd)
{
	for (unsigned i = 0; i < n_kept; i++)
		if (kept[i] == fd)
			return true;
	return false;
}

void gs_gpu_node_close(int fd)
{
	for (unsigned i = 0; i < n_kept; i++) {
		if (kept[i] != fd)
			continue;
		kept[i] = kept[--n_kept];
		/* Closed first: the lock goes only once the node is gone from
		 * our fd table. */
		close(fd);
		gs_gpu_nodes_leave();
		return;
	}
	close(fd);
}
