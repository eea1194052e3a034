/* SPDX-License-Identifier: MIT */
/*
 * gpu_nodes.h - the process-wide GPU-node lock.
 *
 * The driver grants an NV01_DEVICE_0 allocation to a caller whose process
 * holds an open node of that GPU anywhere in its fd table (deviceConstruct,
 * src/nvidia/src/kernel/gpu/device.c -> osIsGpuAccessible ->
 * nv_is_gpu_accessible, kernel-open/nvidia/nv.c, 580.142: iterate_fd over
 * current->files). One supervisor process serves several sandboxes (the
 * agent: one worker thread per container), so a GPU node any thread holds
 * would vouch for every device allocation any other thread performs. This
 * lock is held from the moment the process may get a GPU node fd until it
 * has closed it, and around every device allocation the process performs:
 * a device allocation then meets only the nodes of its own call.
 *
 * Lock order: a sandbox's session lock (or the sampler registry's lock),
 * then this one. Nothing else is taken while it is held except leaf locks
 * that never wait for it (the audit writer's, the dup cache's, the
 * quiesce's), and the session lock is never dropped and retaken under it
 * (exec_escape stays on lock while gs_gpu_nodes_held()).
 *
 * It is counted per thread: one thread may hold several GPU nodes at once
 * (a borrow, a call's own dup); the mutex is released when the last goes.
 */
#ifndef GS_GPU_NODES_H
#define GS_GPU_NODES_H

#include <stdbool.h>

/* Takes the lock (again, for a thread that holds it: counted). */
void gs_gpu_nodes_enter(void);
/* Undoes one gs_gpu_nodes_enter; the mutex goes with the last one. */
void gs_gpu_nodes_leave(void);
/* Does this thread hold the lock? */
bool gs_gpu_nodes_held(void);

/* A GPU node fd this thread took (keeps the lock until it is closed with
 * gs_gpu_node_close). False, with nothing kept, when this thread holds too
 * many already: the caller closes the fd and fails the call. */
bool gs_gpu_node_keep(int fd);
/* Is fd a GPU node this thread keeps (and so holds the lock for)? */
bool gs_gpu_node_kept(int fd);
/* Closes an fd taken from the workload: a kept GPU node lets go of its
 * hold on the lock; any other fd is merely closed. */
void gs_gpu_node_close(int fd);

#endif
